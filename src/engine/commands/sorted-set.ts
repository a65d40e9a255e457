/**
 * Sorted-set commands, including the blocking pops (BZPOPMIN BZPOPMAX BZMPOP).
 * The value is ds/zset.ts (member map + order-statistics B+tree): ranks and range-by-rank
 * are O(log n). Scores print as Redis 7.0 prints doubles ("%.17g", inf, -inf).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, CommandError } from '../../resp/errors.js';
import { formatDouble17g, parseDoubleStr } from '../../resp/ascii.js';
import type { Client } from '../client.js';
import type { Db, Entry, Value } from '../db.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { ZSet } from '../ds/zset.js';
import { SetValue } from '../ds/set.js';
import { type LexBound, type ZCursor, lexGteMin, lexLteMax } from '../ds/zset-tree.js';
import { globMatch } from '../glob.js';
import { INVALID_CURSOR, parseCursor, parseScanOptions } from '../ds/scan.js';
import { blockOrTimeout, parseTimeout } from './blocking-timeout.js';
import { numkeysKeys } from '../keys.js';
import { N } from '../notify.js';
import { LONG_MAX, longArg, lookupWriteArg, outputExhausted, rangeError } from './typed-helpers.js';

// ---------------------------------------------------------------- helpers

const WRONGTYPE = new CommandError(E.WRONGTYPE);

/** The zset at key: ZSet, null when missing; throws WRONGTYPE. */
export function lookupZset(db: Db, key: string, read = true): ZSet | null {
  const e = read ? db.read(key) : db.get(key);
  if (e === undefined) return null;
  if (!(e.value instanceof ZSet)) throw WRONGTYPE;
  return e.value;
}

/**
 * lookupZset() of the key argv[i], found from its bytes (perf: no key string; Db.readArg/getArg):
 * its entry, undefined when missing; throws WRONGTYPE.
 */
function zsetEntryArg(db: Db, argv: Argv, i: number, read = true): Entry | undefined {
  const e = read ? db.readArg(argv, i) : db.getArg(argv, i);
  if (e !== undefined && !(e.value instanceof ZSet)) throw WRONGTYPE;
  return e;
}

/** Get or create the zset at key for writing. */
function writableZset(db: Db, key: string): ZSet {
  const z = lookupZset(db, key, false);
  if (z !== null) return z;
  const n = new ZSet();
  db.add(key, n);
  return n;
}

/** Delete the key when a write emptied it, else signal the change. */
function afterWrite(db: Db, key: string, z: ZSet): void {
  if (z.size === 0) db.delete(key);
  else db.modified(key);
  if (z.size === 0) db.event(N.GENERIC, 'del', key);
}

/** A score as Redis sends it: a double (RESP3), or its "%.17g" text as a bulk string (RESP2). */
function replyScore(out: ReplySink, v: number): void {
  out.double(v);
}

function parseScore(argv: Argv, i: number): number {
  // perf: most scores are integers; string2ll's syntax is a subset of strtod's, and an integer
  // within 2^53 is the same double either way (it refuses "-0", "01": those take strtod's path).
  let v = argv.int(i);
  if (v === v) return v;
  v = argv.float(i);
  if (v !== v) throw new CommandError(E.NOT_FLOAT);
  return v;
}

function parseInt(argv: Argv, i: number): number {
  const v = longArg(argv, i);
  if (v !== v) throw new CommandError(E.NOT_INTEGER);
  return v;
}

interface ScoreRange { min: number; minEx: boolean; max: number; maxEx: boolean }

/** parseScoreBound's result (perf: no tuple per bound). */
let boundEx = false;

/** Redis zslParseRange: "(1.5", "-inf", "+inf", "3"; exclusiveness in boundEx. */
function parseScoreBound(argv: Argv, i: number): number {
  const v = plainIntBound(argv, i);
  if (v === v) return v;
  const s = argv.key(i);
  boundEx = s.startsWith('(');
  const w = strtodWhole(boundEx ? s.slice(1) : s);
  if (w !== w) throw new CommandError('ERR min or max is not a float');
  return w;
}

/**
 * perf: a bound of the form [(][-]digits that is a safe integer (BullMQ's "0" and
 * "(<ms * 4096>") read from its bytes, with no string: strtod gives the same number for it.
 * NaN for any other form (parseScoreBound then takes strtod's path); sets boundEx.
 */
function plainIntBound(argv: Argv, i: number): number {
  const b = argv.buf;
  let p = argv.start[i];
  const e = argv.end[i];
  const ex = p < e && b[p] === 40; // '('
  if (ex) p++;
  const neg = p < e && b[p] === 45; // '-'
  if (neg) p++;
  if (p === e || e - p > 16) return NaN;
  let x = 0;
  for (; p < e; p++) {
    const d = b[p] - 48;
    if (d < 0 || d > 9) return NaN;
    x = x * 10 + d;
  }
  if (x > Number.MAX_SAFE_INTEGER) return NaN;
  boundEx = ex;
  return neg ? -x : x;
}

/**
 * zslParseRange uses plain strtod: leading whitespace is skipped, "" is 0, overflow gives
 * ±inf; the whole text must be consumed and NaN is refused.
 */
function strtodWhole(s: string): number {
  if (s === '') return 0;
  const t = s.replace(/^[ \t\n\v\f\r]+/, '');
  if (t === '') return NaN;
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(t)) return Number(t);
  return parseDoubleStr(t);
}

/** The range a command parses (perf: one object reused; a command holds one range at a time). */
const RANGE: ScoreRange = { min: 0, minEx: false, max: 0, maxEx: false };

function parseScoreRange(argv: Argv, minI: number, maxI: number): ScoreRange {
  const min = parseScoreBound(argv, minI);
  const minEx = boundEx;
  const max = parseScoreBound(argv, maxI);
  RANGE.min = min;
  RANGE.minEx = minEx;
  RANGE.max = max;
  RANGE.maxEx = boundEx;
  return RANGE;
}

function inScoreRange(s: number, r: ScoreRange): boolean {
  return (r.minEx ? s > r.min : s >= r.min) && (r.maxEx ? s < r.max : s <= r.max);
}

function parseLexBound(argv: Argv, i: number): LexBound {
  const s = argv.key(i);
  if (s === '+') return { inf: 1, value: '', exclusive: false };
  if (s === '-') return { inf: -1, value: '', exclusive: false };
  if (s[0] === '(' || s[0] === '[') return { inf: 0, value: s.slice(1), exclusive: s[0] === '(' };
  throw new CommandError('ERR min or max not valid string range item');
}

/** Members and their scores, in reply order (parallel arrays: no object per pair). */
interface Pairs {
  members: string[];
  scores: number[];
}

function writePairs(out: ReplySink, p: Pairs, withScores: boolean): void {
  const { members, scores } = p;
  if (!withScores) {
    out.array(members.length);
    for (let i = 0; i < members.length; i++) out.bulkLatin1(members[i]);
    return;
  }
  out.pairs(members.length);
  for (let i = 0; i < members.length; i++) {
    out.pair();
    out.bulkLatin1(members[i]);
    replyScore(out, scores[i]);
  }
}

/**
 * A range of a set, in reply order: its members' slots (ZMembers) and scores. Valid until the
 * set changes.
 */
interface SlotPairs {
  slots: number[];
  scores: number[];
}

/** writePairs of a collected range: members written from the set's bytes (no string each). */
function writeSlotPairs(out: ReplySink, z: ZSet, p: SlotPairs, withScores: boolean): void {
  const { slots, scores } = p;
  const mem = z.members;
  if (!withScores) {
    out.array(slots.length);
    for (let i = 0; i < slots.length; i++) mem.reply(out, slots[i]);
    return;
  }
  out.pairs(slots.length);
  for (let i = 0; i < slots.length; i++) {
    out.pair();
    mem.reply(out, slots[i]);
    replyScore(out, scores[i]);
  }
}

/** The members of a collected range as strings. */
function membersOf(z: ZSet, p: SlotPairs): string[] {
  const mem = z.members;
  return p.slots.map((slot) => mem.memberAt(slot));
}

function writeTuples(out: ReplySink, pairs: ReadonlyArray<readonly [string, number]>, withScores: boolean): void {
  if (withScores) out.pairs(pairs.length);
  else out.array(pairs.length);
  for (const [m, s] of pairs) {
    if (withScores) out.pair();
    out.bulkLatin1(m);
    if (withScores) replyScore(out, s);
  }
}

// ---------------------------------------------------------------- ZADD / ZINCRBY

export const ZADD_NX = 1, ZADD_XX = 2, ZADD_GT = 4, ZADD_LT = 8, ZADD_CH = 16, ZADD_INCR = 32;

/** zaddOne's outcomes. */
export const ZADD_SKIPPED = 0, ZADD_ADDED = 1, ZADD_UPDATED = 2, ZADD_SAME = 3;
/** The member's score after the last zaddOne (NaN when it skipped the member). */
export let zaddScore = NaN;

/** Apply one ZADD element; returns a ZADD_* outcome, and leaves the new score in zaddScore. */
export function zaddOne(z: ZSet, member: string, s: number, flags: number): number {
  const cur = z.score(member);
  zaddScore = NaN;
  if (cur !== undefined) {
    if (flags & ZADD_NX) return ZADD_SKIPPED;
    let next = s;
    if (flags & ZADD_INCR) {
      next = cur + s;
      if (next !== next) throw new CommandError('ERR resulting score is not a number (NaN)');
    }
    if ((flags & ZADD_GT && next <= cur) || (flags & ZADD_LT && next >= cur)) return ZADD_SKIPPED;
    zaddScore = next;
    if (next !== cur) {
      z.rescore(member, cur, next);
      return ZADD_UPDATED;
    }
    return ZADD_SAME;
  }
  if (flags & ZADD_XX) return ZADD_SKIPPED;
  z.insert(member, s);
  zaddScore = s;
  return ZADD_ADDED;
}

/** Scratch of ZADD's scores (parsed before anything changes). */
let zaddScores = new Float64Array(64);

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
function zaddCommand(c: Client, argv: Argv, out: ReplySink): void {
  let flags = 0;
  let i = 2;
  for (; i < argv.count; i++) {
    if (argv.is(i, 'NX')) flags |= ZADD_NX;
    else if (argv.is(i, 'XX')) flags |= ZADD_XX;
    else if (argv.is(i, 'GT')) flags |= ZADD_GT;
    else if (argv.is(i, 'LT')) flags |= ZADD_LT;
    else if (argv.is(i, 'CH')) flags |= ZADD_CH;
    else if (argv.is(i, 'INCR')) flags |= ZADD_INCR;
    else break;
  }
  const pairs = argv.count - i;
  if (pairs === 0 || pairs % 2 !== 0) {
    out.error(E.SYNTAX);
    return;
  }
  if (flags & ZADD_NX && flags & ZADD_XX) {
    out.error('ERR XX and NX options at the same time are not compatible');
    return;
  }
  if ((flags & ZADD_GT && flags & ZADD_NX) || (flags & ZADD_LT && flags & ZADD_NX) || (flags & ZADD_GT && flags & ZADD_LT)) {
    out.error('ERR GT, LT, and/or NX options at the same time are not compatible');
    return;
  }
  if (flags & ZADD_INCR && pairs > 2) {
    out.error('ERR INCR option supports a single increment-element pair');
    return;
  }
  // Parse every score first: a bad one changes nothing.
  if (pairs / 2 > zaddScores.length) zaddScores = new Float64Array(pairs);
  const scores = zaddScores;
  for (let j = i, k = 0; j < argv.count; j += 2, k++) scores[k] = parseScore(argv, j);
  const db = c.db;
  // perf: the key looked up from its bytes (no key string while it exists).
  const e = lookupWriteArg(c, argv, 1);
  if (e !== undefined && !(e.value instanceof ZSet)) throw WRONGTYPE;
  const key = e !== undefined ? e.key : argv.key(1);
  let z: ZSet;
  if (e === undefined) {
    if (flags & ZADD_XX) {
      if (flags & ZADD_INCR) out.nil();
      else out.int(0);
      return;
    }
    z = new ZSet();
    db.add(key, z);
  } else {
    z = e.value as ZSet;
  }
  let added = 0;
  let updated = 0;
  let last = NaN;
  for (let j = i, k = 0; j < argv.count; j += 2, k++) {
    const r = zaddOne(z, argv.key(j + 1), scores[k], flags);
    if (r === ZADD_ADDED) added++;
    else if (r === ZADD_UPDATED) updated++;
    last = zaddScore;
  }
  if (added + updated > 0) db.modified(key, e);
  else if (z.size === 0) db.delete(key);
  if (added + updated > 0) db.event(N.ZSET, flags & ZADD_INCR ? 'zincr' : 'zadd', key);
  if (flags & ZADD_INCR) {
    if (last !== last) out.nil();
    else replyScore(out, last);
  } else {
    out.int(flags & ZADD_CH ? added + updated : added);
  }
}

// ZINCRBY key increment member
function zincrbyCommand(c: Client, argv: Argv, out: ReplySink): void {
  const inc = parseScore(argv, 2);
  const db = c.db;
  const key = argv.key(1);
  const z = writableZset(db, key);
  zaddOne(z, argv.key(3), inc, ZADD_INCR);
  db.modified(key);
  db.event(N.ZSET, 'zincr', key);
  replyScore(out, zaddScore);
}

// ---------------------------------------------------------------- simple reads and removals

// ZREM key member [member ...]
function zremCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const key = argv.key(1);
  const z = lookupZset(db, key, false);
  if (z === null) {
    out.int(0);
    return;
  }
  let n = 0;
  for (let i = 2; i < argv.count; i++) if (z.remove(argv.key(i))) n++;
  if (n > 0) db.event(N.ZSET, 'zrem', key);
  if (n > 0) afterWrite(db, key, z);
  out.int(n);
}

// ZCARD key
function zcardCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = zsetEntryArg(c.db, argv, 1);
  out.int(e === undefined ? 0 : (e.value as ZSet).size);
}

// ZSCORE key member
function zscoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  const z = lookupZset(c.db, argv.key(1));
  const s = z?.score(argv.key(2));
  if (s === undefined) out.nil();
  else replyScore(out, s);
}

// ZMSCORE key member [member ...]
function zmscoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  const z = lookupZset(c.db, argv.key(1));
  out.array(argv.count - 2);
  for (let i = 2; i < argv.count; i++) {
    const s = z?.score(argv.key(i));
    if (s === undefined) out.nil();
    else replyScore(out, s);
  }
}

// ZRANK key member [WITHSCORE] / ZREVRANK key member [WITHSCORE]
function rankGeneric(c: Client, argv: Argv, out: ReplySink, rev: boolean): void {
  let withScore = false;
  if (argv.count > 4) throw new CommandError(E.SYNTAX);
  if (argv.count === 4) {
    if (!argv.is(3, 'WITHSCORE')) throw new CommandError(E.SYNTAX);
    withScore = true;
  }
  const z = lookupZset(c.db, argv.key(1));
  const m = argv.key(2);
  const r = z === null ? -1 : z.rank(m);
  if (r < 0) {
    if (withScore) out.nilArray();
    else out.nil();
    return;
  }
  const rank = rev ? z!.size - 1 - r : r;
  if (withScore) {
    out.array(2);
    out.int(rank);
    replyScore(out, z!.score(m)!);
  } else {
    out.int(rank);
  }
}

function zrankCommand(c: Client, argv: Argv, out: ReplySink): void {
  rankGeneric(c, argv, out, false);
}

function zrevrankCommand(c: Client, argv: Argv, out: ReplySink): void {
  rankGeneric(c, argv, out, true);
}

// ZCOUNT key min max
function zcountCommand(c: Client, argv: Argv, out: ReplySink): void {
  const r = parseScoreRange(argv, 2, 3);
  const z = lookupZset(c.db, argv.key(1));
  if (z === null) {
    out.int(0);
    return;
  }
  // Pairs below max minus pairs below min (two descents, no walk).
  const t = z.tree;
  const n = t.countBelow(r.max, !r.maxEx) - t.countBelow(r.min, r.minEx);
  out.int(n > 0 ? n : 0);
}

// ZLEXCOUNT key min max
function zlexcountCommand(c: Client, argv: Argv, out: ReplySink): void {
  const min = parseLexBound(argv, 2);
  const max = parseLexBound(argv, 3);
  const z = lookupZset(c.db, argv.key(1));
  if (z === null) {
    out.int(0);
    return;
  }
  if (z.encoding() === 'listpack') {
    // zzlLexCount: walk from the first member in range while members stay <= max.
    let n = z.tree.firstInLex(min, max, true);
    let count = 0;
    for (; n !== null && lexLteMax(n.member, max); n = n.next()) count++;
    out.int(count);
    return;
  }
  const first = z.tree.firstInLex(min, max);
  if (first === null) {
    out.int(0);
    return;
  }
  const last = z.tree.lastInLex(min, max);
  if (last === null) {
    out.int(z.size - first.rank);
    return;
  }
  out.int(last.rank - first.rank + 1);
}

// ---------------------------------------------------------------- ranges

type RangeKind = 'rank' | 'score' | 'lex';

interface RangeSpec {
  kind: RangeKind;
  rev: boolean;
  offset: number;
  limit: number; // -1 = no limit
  withScores: boolean;
}

/**
 * A rank range's first rank and count once clamped to the set's length as Redis clamps it
 * (count 0: empty); sets rankStart.
 */
let rankStart = 0;
function rankCount(argv: Argv, minI: number, maxI: number, len: number): number {
  let start = parseInt(argv, minI);
  let end = parseInt(argv, maxI);
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return 0;
  if (end >= len) end = len - 1;
  rankStart = start;
  return end - start + 1;
}

/** Collect the pairs of a range request, in reply order. */
function collectRange(z: ZSet, argv: Argv, minI: number, maxI: number, spec: RangeSpec): SlotPairs {
  const out: SlotPairs = { slots: [], scores: [] };
  const { slots, scores } = out;
  const t = z.tree;
  const rev = spec.rev;
  if (spec.kind === 'rank') {
    const len = z.size;
    const count = rankCount(argv, minI, maxI, len);
    let n = count === 0 ? null : t.at(rev ? len - 1 - rankStart : rankStart);
    for (let k = 0; n !== null && k < count; k++, n = rev ? n.prev() : n.next()) {
      slots.push(n.slot);
      scores.push(n.score);
    }
    return out;
  }
  let { offset, limit } = spec;
  let n: ZCursor | null;
  if (spec.kind === 'score') {
    // In REV form the first argument is max.
    const r = rev ? parseScoreRange(argv, maxI, minI) : parseScoreRange(argv, minI, maxI);
    n = rev ? t.lastInScore(r.min, r.minEx, r.max, r.maxEx) : t.firstInScore(r.min, r.minEx, r.max, r.maxEx);
    while (n !== null && offset > 0) {
      n = rev ? n.prev() : n.next();
      offset--;
    }
    while (n !== null && limit !== 0 && inScoreRange(n.score, r)) {
      slots.push(n.slot);
      scores.push(n.score);
      n = rev ? n.prev() : n.next();
      if (limit > 0) limit--;
    }
    return out;
  }
  const min = rev ? parseLexBound(argv, maxI) : parseLexBound(argv, minI);
  const max = rev ? parseLexBound(argv, minI) : parseLexBound(argv, maxI);
  const linear = z.encoding() === 'listpack';
  n = rev ? t.lastInLex(min, max, linear) : t.firstInLex(min, max, linear);
  while (n !== null && offset > 0) {
    n = rev ? n.prev() : n.next();
    offset--;
  }
  // As Redis: only the far end of the range is checked while walking.
  while (n !== null && limit !== 0 && (rev ? lexGteMin(n.member, min) : lexLteMax(n.member, max))) {
    slots.push(n.slot);
    scores.push(n.score);
    n = rev ? n.prev() : n.next();
    if (limit > 0) limit--;
  }
  return out;
}

/** The spec a range command parses (perf: one object reused; a command holds one at a time). */
const SPEC: RangeSpec = { kind: 'rank', rev: false, offset: 0, limit: -1, withScores: false };

/**
 * Parse the options of ZRANGE/ZRANGESTORE from index `from`: BYSCORE BYLEX REV LIMIT WITHSCORES.
 * `kind`/`rev` give the defaults of the legacy commands (ZRANGEBYSCORE...).
 */
function parseRangeOptions(argv: Argv, from: number, kind: RangeKind, rev: boolean, store: boolean, legacy: boolean): RangeSpec {
  const spec = SPEC;
  spec.kind = kind;
  spec.rev = rev;
  spec.offset = 0;
  spec.limit = -1;
  spec.withScores = false;
  let hasLimit = false;
  for (let i = from; i < argv.count; i++) {
    const left = argv.count - i - 1;
    if (!store && argv.is(i, 'WITHSCORES')) spec.withScores = true;
    else if (argv.is(i, 'LIMIT') && left >= 2) {
      spec.offset = parseInt(argv, i + 1);
      spec.limit = parseInt(argv, i + 2);
      hasLimit = true;
      i += 2;
    } else if (!legacy && argv.is(i, 'BYSCORE') && spec.kind === 'rank') spec.kind = 'score';
    else if (!legacy && argv.is(i, 'BYLEX') && spec.kind === 'rank') spec.kind = 'lex';
    else if (!legacy && !spec.rev && argv.is(i, 'REV')) spec.rev = true; // a second REV is a syntax error, as in Redis
    else throw new CommandError(E.SYNTAX);
  }
  // Redis only objects to a LIMIT that limits (a count of -1 means no limit).
  if (hasLimit && spec.limit !== -1 && spec.kind === 'rank') {
    throw new CommandError('ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX');
  }
  if (spec.withScores && spec.kind === 'lex') {
    throw new CommandError('ERR syntax error, WITHSCORES not supported in combination with BYLEX');
  }
  if (spec.offset < 0) spec.limit = 0; // Redis: a negative offset returns nothing
  return spec;
}

/** Parse a range's bounds (errors first, as Redis parses them before looking the key up). */
function checkBounds(argv: Argv, minI: number, maxI: number, spec: RangeSpec): void {
  // perf: the bounds parsed as collectRange parses them, with nothing collected. Both bounds of
  // a kind fail with the same message, so the order (swapped for REV) does not show.
  if (spec.kind === 'score') parseScoreRange(argv, minI, maxI);
  else if (spec.kind === 'lex') {
    parseLexBound(argv, minI);
    parseLexBound(argv, maxI);
  } else {
    parseInt(argv, minI);
    parseInt(argv, maxI);
  }
}

function rangeReply(c: Client, argv: Argv, out: ReplySink, spec: RangeSpec): void {
  checkBounds(argv, 2, 3, spec);
  const e = zsetEntryArg(c.db, argv, 1);
  if (e === undefined) {
    out.array(0);
    return;
  }
  const z = e.value as ZSet;
  if (spec.kind === 'rank') {
    // Straight from the tree to the reply.
    const len = z.size;
    const count = rankCount(argv, 2, 3, len);
    const ws = spec.withScores;
    if (ws) out.pairs(count);
    else out.array(count);
    if (count === 0) return;
    const rev = spec.rev;
    let n = z.at(rev ? len - 1 - rankStart : rankStart);
    for (let k = 0; n !== null && k < count; k++, n = rev ? n.prev() : n.next()) {
      if (ws) out.pair();
      z.members.reply(out, n.slot);
      if (ws) replyScore(out, n.score);
    }
    return;
  }
  writeSlotPairs(out, z, collectRange(z, argv, 2, 3, spec), spec.withScores);
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
function zrangeCommand(c: Client, argv: Argv, out: ReplySink): void {
  rangeReply(c, argv, out, parseRangeOptions(argv, 4, 'rank', false, false, false));
}

// ZREVRANGE key start stop [WITHSCORES]
function zrevrangeCommand(c: Client, argv: Argv, out: ReplySink): void {
  rangeReply(c, argv, out, parseRangeOptions(argv, 4, 'rank', true, false, true));
}

// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
function zrangebyscoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  rangeReply(c, argv, out, parseRangeOptions(argv, 4, 'score', false, false, true));
}

// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
function zrevrangebyscoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  rangeReply(c, argv, out, parseRangeOptions(argv, 4, 'score', true, false, true));
}

// ZRANGEBYLEX key min max [LIMIT offset count]
function zrangebylexCommand(c: Client, argv: Argv, out: ReplySink): void {
  rangeReply(c, argv, out, parseRangeOptions(argv, 4, 'lex', false, false, true));
}

// ZREVRANGEBYLEX key max min [LIMIT offset count]
function zrevrangebylexCommand(c: Client, argv: Argv, out: ReplySink): void {
  rangeReply(c, argv, out, parseRangeOptions(argv, 4, 'lex', true, false, true));
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
function zrangestoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  const spec = parseRangeOptions(argv, 5, 'rank', false, true, false);
  checkBounds(argv, 3, 4, spec);
  const db = c.db;
  const src = lookupZset(db, argv.key(2));
  const p = src === null ? null : collectRange(src, argv, 3, 4, spec);
  const n = p === null ? 0 : p.slots.length;
  const members = p === null ? [] : membersOf(src!, p);
  const pairs: [string, number][] = new Array(n);
  for (let i = 0; i < n; i++) pairs[i] = [members[i], p!.scores[i]];
  storeResult(db, argv.key(1), pairs, 'zrangestore');
  out.int(n);
}

/** Replace dst with the given pairs (deleting it when empty), as the *STORE commands do. */
export function storeResult(db: Db, dst: string, pairs: ReadonlyArray<readonly [string, number]>, event: string): void {
  if (pairs.length === 0) {
    if (db.delete(dst)) db.event(N.GENERIC, 'del', dst);
    return;
  }
  db.set(dst, ZSet.from(pairs));
  db.event(N.ZSET, event, dst);
}

// ---------------------------------------------------------------- removals by range

// ZREMRANGEBYRANK key start stop
function zremrangebyrankCommand(c: Client, argv: Argv, out: ReplySink): void {
  remRange(c, argv, out, 'rank');
}

// ZREMRANGEBYSCORE key min max
function zremrangebyscoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  remRange(c, argv, out, 'score');
}

// ZREMRANGEBYLEX key min max
function zremrangebylexCommand(c: Client, argv: Argv, out: ReplySink): void {
  remRange(c, argv, out, 'lex');
}

function remRange(c: Client, argv: Argv, out: ReplySink, kind: RangeKind): void {
  const spec: RangeSpec = { kind, rev: false, offset: 0, limit: -1, withScores: false };
  checkBounds(argv, 2, 3, spec);
  const db = c.db;
  const key = argv.key(1);
  const z = lookupZset(db, key, false);
  if (z === null) {
    out.int(0);
    return;
  }
  const members = membersOf(z, collectRange(z, argv, 2, 3, spec));
  for (const m of members) z.remove(m);
  if (members.length > 0) db.event(N.ZSET, `zremrangeby${kind}`, key);
  if (members.length > 0) afterWrite(db, key, z);
  out.int(members.length);
}

// ---------------------------------------------------------------- pops

/** Pop up to `count` from one end; returns [member, score] pairs. */
function popFrom(db: Db, key: string, z: ZSet, max: boolean, count: number): [string, number][] {
  const res: [string, number][] = [];
  while (res.length < count && z.size > 0) {
    const n = max ? z.tree.last()! : z.tree.first()!;
    const m = n.member;
    res.push([m, n.score]);
    z.remove(m);
  }
  if (res.length > 0) db.event(N.ZSET, max ? 'zpopmax' : 'zpopmin', key);
  if (res.length > 0) afterWrite(db, key, z);
  return res;
}

// ZPOPMIN key [count] / ZPOPMAX key [count]
function popGeneric(c: Client, argv: Argv, out: ReplySink, max: boolean): void {
  let count = 1;
  if (argv.count > 3) throw new CommandError(E.SYNTAX);
  if (argv.count === 3) {
    // getPositiveLongFromObjectOrReply with its message: also for a count that is no integer.
    count = longArg(argv, 2);
    if (count !== count || count < 0) throw new CommandError('ERR value is out of range, must be positive');
  }
  const db = c.db;
  const e = zsetEntryArg(db, argv, 1, false);
  if (e === undefined || count === 0) {
    out.array(0);
    return;
  }
  const res = popFrom(db, e.key, e.value as ZSet, max, count);
  // Without a count, one flat [member, score] in RESP3 too; with one, (member, score) tuples.
  const nested = argv.count === 3;
  if (nested) out.pairs(res.length);
  else out.array(res.length * 2);
  for (const [m, s] of res) {
    if (nested) out.pair();
    out.bulkLatin1(m);
    replyScore(out, s);
  }
}

function zpopminCommand(c: Client, argv: Argv, out: ReplySink): void {
  popGeneric(c, argv, out, false);
}

function zpopmaxCommand(c: Client, argv: Argv, out: ReplySink): void {
  popGeneric(c, argv, out, true);
}

/** Parse "numkeys key... MIN|MAX [COUNT n]" from index `at`. */
function parseMpop(argv: Argv, at: number): { keys: string[]; max: boolean; count: number } {
  const numkeys = longArg(argv, at);
  if (numkeys !== numkeys || numkeys <= 0) throw new CommandError('ERR numkeys should be greater than 0');
  if (numkeys > argv.count - at - 2) throw new CommandError(E.SYNTAX);
  const keys: string[] = [];
  for (let i = 0; i < numkeys; i++) keys.push(argv.key(at + 1 + i));
  let i = at + 1 + numkeys;
  let max: boolean;
  if (argv.is(i, 'MIN')) max = false;
  else if (argv.is(i, 'MAX')) max = true;
  else throw new CommandError(E.SYNTAX);
  i++;
  let count = -1;
  while (i < argv.count) {
    if (argv.is(i, 'COUNT') && i + 1 < argv.count && count === -1) {
      count = longArg(argv, i + 1);
      if (count !== count || count <= 0) throw new CommandError('ERR count should be greater than 0');
      i += 2;
    } else throw new CommandError(E.SYNTAX);
  }
  return { keys, max, count: count === -1 ? 1 : count };
}

function writeMpop(out: ReplySink, key: string, res: [string, number][]): void {
  out.array(2);
  out.bulkLatin1(key);
  out.array(res.length);
  for (const [m, s] of res) {
    out.array(2);
    out.bulkLatin1(m);
    replyScore(out, s);
  }
}

/** Serve ZMPOP-style from the first non-empty key; false when all are empty. */
function tryMpop(c: Client, keys: readonly string[], max: boolean, count: number, out: ReplySink): boolean {
  const db = c.db;
  for (const key of keys) {
    const z = lookupZset(db, key, false);
    if (z === null) continue;
    writeMpop(out, key, popFrom(db, key, z, max, count));
    return true;
  }
  return false;
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
function zmpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  const { keys, max, count } = parseMpop(argv, 1);
  if (!tryMpop(c, keys, max, count, out)) out.nilArray();
}

// BZPOPMIN key [key ...] timeout / BZPOPMAX key [key ...] timeout
function bzpopGeneric(c: Client, argv: Argv, out: ReplySink, max: boolean): void {
  const deadline = parseTimeout(argv, argv.count - 1);
  const keys: string[] = [];
  for (let i = 1; i < argv.count - 1; i++) keys.push(argv.key(i));
  const serve = (key: string, o: ReplySink): boolean => {
    const db = c.db;
    const z = lookupZset(db, key, false);
    if (z === null) return false;
    const [[m, s]] = popFrom(db, key, z, max, 1);
    o.array(3);
    o.bulkLatin1(key);
    o.bulkLatin1(m);
    replyScore(o, s);
    return true;
  };
  for (const key of keys) if (serve(key, out)) return;
  blockOrTimeout(c, out, { keys, deadline, serve: serveSafely(serve), timeout: nilArray });
}

function nilArray(out: ReplySink): void {
  out.nilArray();
}

/** A waiter must not throw (WRONGTYPE after the key changed type): keep waiting instead. */
function serveSafely(serve: (key: string, out: ReplySink) => boolean): (key: string, out: ReplySink) => boolean {
  return (key, out) => {
    try {
      return serve(key, out);
    } catch (err) {
      if (err === WRONGTYPE) return false;
      throw err;
    }
  };
}

function bzpopminCommand(c: Client, argv: Argv, out: ReplySink): void {
  bzpopGeneric(c, argv, out, false);
}

function bzpopmaxCommand(c: Client, argv: Argv, out: ReplySink): void {
  bzpopGeneric(c, argv, out, true);
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
function bzmpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  // Redis parses the timeout after numkeys, the keys, MIN|MAX and COUNT.
  const { keys, max, count } = parseMpop(argv, 2);
  const deadline = parseTimeout(argv, 1);
  if (tryMpop(c, keys, max, count, out)) return;
  const serve = serveSafely((key, o) => tryMpop(c, [key], max, count, o));
  blockOrTimeout(c, out, { keys, deadline, serve, timeout: nilArray });
}

// ---------------------------------------------------------------- random members

// ZRANDMEMBER key [count [WITHSCORES]]
function zrandmemberCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count === 2) {
    const z = lookupZset(c.db, argv.key(1));
    if (z === null) out.nil();
    else out.bulkLatin1(z.at(Math.floor(Math.random() * z.size))!.member);
    return;
  }
  // Redis's order: the count (in -LONG_MAX..LONG_MAX), the syntax, the WITHSCORES range, the key.
  const big = argv.int64(2);
  if (big === null) throw new CommandError(E.NOT_INTEGER);
  if (big < -LONG_MAX) throw new CommandError(rangeError('-9223372036854775807', '9223372036854775807'));
  if (argv.count > 4 || (argv.count === 4 && !argv.is(3, 'WITHSCORES'))) throw new CommandError(E.SYNTAX);
  const withScores = argv.count === 4;
  // Redis refuses counts whose reply size would overflow (count * 2 with scores).
  if (withScores && (big < -(LONG_MAX / 2n) || big > LONG_MAX / 2n)) throw new CommandError('ERR value is out of range');
  const z = lookupZset(c.db, argv.key(1));
  const count = Number(big);
  if (z === null || count === 0) {
    out.array(0);
    return;
  }
  if (count < 0) {
    // Independent draws, as many as asked: streamed (never collected), cut off by the
    // output guard like HRANDFIELD's and SRANDMEMBER's.
    const n = -count;
    if (withScores) out.pairs(n);
    else out.array(n);
    for (let i = 0; i < n; i++) {
      const e = z.at(Math.floor(Math.random() * z.size))!;
      if (withScores) out.pair();
      out.bulkLatin1(e.member);
      if (withScores) replyScore(out, e.score);
      if ((i & 4095) === 4095 && outputExhausted(c, i)) return;
    }
    return;
  }
  const picks: Pairs = { members: [], scores: [] };
  const pick = (n: ZCursor): void => {
    picks.members.push(n.member);
    picks.scores.push(n.score);
  };
  if (count >= z.size) {
    for (let n = z.tree.first(); n !== null; n = n.next()) pick(n);
  } else {
    const chosen = new Set<number>();
    while (chosen.size < count) chosen.add(Math.floor(Math.random() * z.size));
    for (const r of chosen) pick(z.at(r)!);
  }
  writePairs(out, picks, withScores);
}

// ---------------------------------------------------------------- set algebra

type Aggregate = 'sum' | 'min' | 'max';

/** What set algebra reads of a source: a Map, or a zset's ZDict. */
type PairSource = Pick<Map<string, number>, 'size' | 'get' | 'has' | 'keys' | typeof Symbol.iterator>;

/** Members and scores of a zset or a plain set (scores 1) source; null when the key is missing. */
function sourcePairs(v: Value | undefined): PairSource | null {
  if (v === undefined) return null;
  if (v instanceof ZSet) return v.dict;
  if (v instanceof SetValue) {
    // Plain sets take part with every score 1, as in Redis.
    const m = new Map<string, number>();
    v.forEach((member) => m.set(member, 1));
    return m;
  }
  throw WRONGTYPE;
}

interface AlgebraSpec {
  keys: string[];
  /** Each source's members and scores (null = missing key), looked up before the options. */
  sources: (PairSource | null)[];
  weights: number[];
  aggregate: Aggregate;
  withScores: boolean;
}

function parseAlgebra(db: Db, argv: Argv, numkeysAt: number, cmd: string, allowWeights: boolean, allowWithScores: boolean): AlgebraSpec {
  const n = longArg(argv, numkeysAt);
  if (n !== n) throw new CommandError(E.NOT_INTEGER);
  if (n < 1) throw new CommandError(`ERR at least 1 input key is needed for '${cmd}' command`);
  if (n > argv.count - numkeysAt - 1) throw new CommandError(E.SYNTAX);
  const spec: AlgebraSpec = { keys: [], sources: [], weights: [], aggregate: 'sum', withScores: false };
  for (let i = 0; i < n; i++) {
    spec.keys.push(argv.key(numkeysAt + 1 + i));
    spec.weights.push(1);
  }
  // Redis checks the sources' types before it reads the options.
  spec.sources = spec.keys.map((k) => sourcePairs(db.read(k)?.value));
  for (let i = numkeysAt + 1 + n; i < argv.count; i++) {
    const left = argv.count - i - 1;
    if (allowWeights && argv.is(i, 'WEIGHTS') && left >= n) {
      for (let j = 0; j < n; j++) {
        const w = argv.float(i + 1 + j);
        if (w !== w) throw new CommandError('ERR weight value is not a float');
        spec.weights[j] = w;
      }
      i += n;
    } else if (allowWeights && argv.is(i, 'AGGREGATE') && left >= 1) {
      if (argv.is(i + 1, 'SUM')) spec.aggregate = 'sum';
      else if (argv.is(i + 1, 'MIN')) spec.aggregate = 'min';
      else if (argv.is(i + 1, 'MAX')) spec.aggregate = 'max';
      else throw new CommandError(E.SYNTAX);
      i++;
    } else if (allowWithScores && argv.is(i, 'WITHSCORES')) {
      spec.withScores = true;
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }
  return spec;
}

/** A source score times its weight; the NaN of 0 * inf counts as 0 (as Redis does). */
function weighted(s: number, w: number): number {
  const v = s * w;
  return v !== v ? 0 : v;
}

/**
 * Redis's zunionInterAggregate: SUM turns the NaN of inf + -inf into 0; MIN and MAX keep the
 * current value when compared with a NaN.
 */
function aggregate(target: number, val: number, how: Aggregate): number {
  if (how === 'sum') {
    const v = target + val;
    return v !== v ? 0 : v;
  }
  if (how === 'min') return val < target ? val : target;
  return val > target ? val : target;
}

/** Compute ZUNION/ZINTER/ZDIFF; result sorted as a zset would be. */
function algebra(op: 'union' | 'inter' | 'diff', spec: AlgebraSpec): [string, number][] {
  const acc = new Map<string, number>();
  // As Redis, union and intersection take the sources from the smallest to the largest (a
  // stable order: glibc's qsort is a merge sort); the order changes which NaNs arise.
  const srcs = spec.sources.map((m, i) => ({ m, w: spec.weights[i], size: m === null ? 0 : m.size }));
  if (op !== 'diff') srcs.sort((x, y) => x.size - y.size);
  if (op === 'union') {
    for (const { m, w } of srcs) {
      if (m === null) continue;
      for (const [member, s] of m) {
        const v = weighted(s, w);
        const cur = acc.get(member);
        acc.set(member, cur === undefined ? v : aggregate(cur, v, spec.aggregate));
      }
    }
  } else if (op === 'inter') {
    if (srcs.every((x) => x.m !== null)) {
      const [first, ...rest] = srcs;
      outer: for (const [member, s] of first.m!) {
        let v = weighted(s, first.w);
        for (const { m, w } of rest) {
          const o = m!.get(member);
          if (o === undefined) continue outer;
          v = aggregate(v, o * w, spec.aggregate); // no NaN fix here, as Redis
        }
        acc.set(member, v);
      }
    }
  } else {
    const first = srcs[0].m;
    if (first !== null) {
      for (const [member, s] of first) {
        if (srcs.some((x, i) => i > 0 && x.m !== null && x.m.has(member))) continue;
        acc.set(member, s);
      }
    }
  }
  return [...acc].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

function algebraReply(c: Client, argv: Argv, out: ReplySink, op: 'union' | 'inter' | 'diff'): void {
  const spec = parseAlgebra(c.db, argv, 1, argv.lower(0), op !== 'diff', true);
  const res = algebra(op, spec);
  writeTuples(out, res, spec.withScores);
}

function algebraStore(c: Client, argv: Argv, out: ReplySink, op: 'union' | 'inter' | 'diff'): void {
  const spec = parseAlgebra(c.db, argv, 2, argv.lower(0), op !== 'diff', false);
  const res = algebra(op, spec);
  storeResult(c.db, argv.key(1), res, `z${op}store`);
  out.int(res.length);
}

// ZUNION numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
function zunionCommand(c: Client, argv: Argv, out: ReplySink): void { algebraReply(c, argv, out, 'union'); }
// ZINTER numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
function zinterCommand(c: Client, argv: Argv, out: ReplySink): void { algebraReply(c, argv, out, 'inter'); }
// ZDIFF numkeys key [key ...] [WITHSCORES]
function zdiffCommand(c: Client, argv: Argv, out: ReplySink): void { algebraReply(c, argv, out, 'diff'); }
// ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
function zunionstoreCommand(c: Client, argv: Argv, out: ReplySink): void { algebraStore(c, argv, out, 'union'); }
// ZINTERSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
function zinterstoreCommand(c: Client, argv: Argv, out: ReplySink): void { algebraStore(c, argv, out, 'inter'); }
// ZDIFFSTORE destination numkeys key [key ...]
function zdiffstoreCommand(c: Client, argv: Argv, out: ReplySink): void { algebraStore(c, argv, out, 'diff'); }

// ZINTERCARD numkeys key [key ...] [LIMIT limit]
function zintercardCommand(c: Client, argv: Argv, out: ReplySink): void {
  const n = longArg(argv, 1);
  if (n !== n) throw new CommandError(E.NOT_INTEGER);
  if (n < 1) throw new CommandError('ERR at least 1 input key is needed for \'zintercard\' command');
  if (n > argv.count - 2) throw new CommandError(E.SYNTAX);
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push(argv.key(2 + i));
  const sources = keys.map((k) => sourcePairs(c.db.read(k)?.value)); // type errors come first
  let limit = 0;
  for (let i = 2 + n; i < argv.count; i++) {
    if (argv.is(i, 'LIMIT') && i + 1 < argv.count) {
      // getPositiveLongFromObjectOrReply with its message: also for a LIMIT that is no integer.
      limit = longArg(argv, i + 1);
      if (limit !== limit || limit < 0) throw new CommandError('ERR LIMIT can\'t be negative');
      i++;
    } else throw new CommandError(E.SYNTAX);
  }
  if (sources.some((s) => s === null)) {
    out.int(0);
    return;
  }
  const order = (sources as PairSource[]).sort((a, b) => a.size - b.size);
  let count = 0;
  for (const m of order[0].keys()) {
    if (order.every((s) => s.has(m))) {
      count++;
      if (limit > 0 && count >= limit) break;
    }
  }
  out.int(count);
}

// ---------------------------------------------------------------- scan

// ZSCAN key cursor [MATCH pattern] [COUNT count]
function zscanCommand(c: Client, argv: Argv, out: ReplySink): void {
  // Cursor and options follow the same rules as SSCAN/HSCAN (ds/scan.ts); as in Redis, the
  // key's type is checked between the two.
  const cursor = parseCursor(argv, 2);
  if (cursor < 0) throw new CommandError(INVALID_CURSOR);
  const zset = lookupZset(c.db, argv.key(1));
  if (zset === null) {
    // Redis answers a missing key before it reads the options.
    out.array(2);
    out.bulkText('0');
    out.array(0);
    return;
  }
  const opts = parseScanOptions(argv, 3, false);
  if (typeof opts === 'string') throw new CommandError(opts);
  const { count, pattern } = opts;
  const z = zset;
  const kept: Pairs = { members: [], scores: [] };
  let next = 0;
  if (z !== null) {
    // Small sets are returned whole (Redis's listpack encoding); large ones walk by rank.
    const start = Number(cursor);
    const whole = z.encoding() === 'listpack';
    const end = whole ? z.size : Math.min(z.size, start + count);
    let k = 0;
    for (let n = whole ? z.tree.first() : z.at(start); n !== null && (whole || k < end - start); n = n.next(), k++) {
      const m = n.member;
      if (pattern !== null && !globMatch(pattern, Buffer.from(m, 'latin1'))) continue;
      kept.members.push(m);
      kept.scores.push(n.score);
    }
    next = whole || end >= z.size ? 0 : end;
  }
  out.array(2);
  out.bulkText(String(next));
  // ZSCAN stays flat with scores as bulk strings, in RESP3 too (Redis's scanGenericCommand).
  const { members, scores } = kept;
  out.array(members.length * 2);
  for (let i = 0; i < members.length; i++) {
    out.bulkLatin1(members[i]);
    out.bulkLatin1(formatDouble17g(scores[i]));
  }
}

const W = F.WRITE | F.DENYOOM;
export default family('sorted-set', ['sortedset'], [
  //   name                 arity  flags                         keys         handler
  row('zadd',                -4,   W | F.FAST,                   [1, 1, 1],   zaddCommand),
  row('zincrby',              4,   W | F.FAST,                   [1, 1, 1],   zincrbyCommand),
  row('zrem',                -3,   F.WRITE | F.FAST,             [1, 1, 1],   zremCommand),
  row('zcard',                2,   F.READONLY | F.FAST,          [1, 1, 1],   zcardCommand),
  row('zscore',               3,   F.READONLY | F.FAST,          [1, 1, 1],   zscoreCommand),
  row('zmscore',             -3,   F.READONLY | F.FAST,          [1, 1, 1],   zmscoreCommand),
  row('zrank',               -3,   F.READONLY | F.FAST,          [1, 1, 1],   zrankCommand),
  row('zrevrank',            -3,   F.READONLY | F.FAST,          [1, 1, 1],   zrevrankCommand),
  row('zcount',               4,   F.READONLY | F.FAST,          [1, 1, 1],   zcountCommand),
  row('zlexcount',            4,   F.READONLY | F.FAST,          [1, 1, 1],   zlexcountCommand),
  row('zrange',              -4,   F.READONLY,                   [1, 1, 1],   zrangeCommand),
  row('zrevrange',           -4,   F.READONLY,                   [1, 1, 1],   zrevrangeCommand),
  row('zrangebyscore',       -4,   F.READONLY,                   [1, 1, 1],   zrangebyscoreCommand),
  row('zrevrangebyscore',    -4,   F.READONLY,                   [1, 1, 1],   zrevrangebyscoreCommand),
  row('zrangebylex',         -4,   F.READONLY,                   [1, 1, 1],   zrangebylexCommand),
  row('zrevrangebylex',      -4,   F.READONLY,                   [1, 1, 1],   zrevrangebylexCommand),
  row('zrangestore',         -5,   W,                            [1, 2, 1],   zrangestoreCommand),
  row('zremrangebyrank',      4,   F.WRITE,                      [1, 1, 1],   zremrangebyrankCommand),
  row('zremrangebyscore',     4,   F.WRITE,                      [1, 1, 1],   zremrangebyscoreCommand),
  row('zremrangebylex',       4,   F.WRITE,                      [1, 1, 1],   zremrangebylexCommand),
  row('zpopmin',             -2,   F.WRITE | F.FAST,             [1, 1, 1],   zpopminCommand),
  row('zpopmax',             -2,   F.WRITE | F.FAST,             [1, 1, 1],   zpopmaxCommand),
  row('zmpop',               -4,   F.WRITE | F.MOVABLE_KEYS,     [0, 0, 0],   zmpopCommand, { getKeys: numkeysKeys(0, 1, 2) }),
  row('bzpopmin',            -3,   F.WRITE | F.NOSCRIPT | F.BLOCKING | F.FAST | F.NO_REST, [1, -2, 1], bzpopminCommand),
  row('bzpopmax',            -3,   F.WRITE | F.NOSCRIPT | F.BLOCKING | F.FAST | F.NO_REST, [1, -2, 1], bzpopmaxCommand),
  row('bzmpop',              -5,   F.WRITE | F.BLOCKING | F.MOVABLE_KEYS | F.NO_REST, [0, 0, 0], bzmpopCommand, { getKeys: numkeysKeys(0, 2, 3) }),
  row('zrandmember',         -2,   F.READONLY,                   [1, 1, 1],   zrandmemberCommand),
  row('zunion',              -3,   F.READONLY | F.MOVABLE_KEYS,  [0, 0, 0],   zunionCommand, { getKeys: numkeysKeys(0, 1, 2) }),
  row('zinter',              -3,   F.READONLY | F.MOVABLE_KEYS,  [0, 0, 0],   zinterCommand, { getKeys: numkeysKeys(0, 1, 2) }),
  row('zdiff',               -3,   F.READONLY | F.MOVABLE_KEYS,  [0, 0, 0],   zdiffCommand, { getKeys: numkeysKeys(0, 1, 2) }),
  row('zunionstore',         -4,   W | F.MOVABLE_KEYS,           [1, 1, 1],   zunionstoreCommand, { getKeys: numkeysKeys(1, 2, 3) }),
  row('zinterstore',         -4,   W | F.MOVABLE_KEYS,           [1, 1, 1],   zinterstoreCommand, { getKeys: numkeysKeys(1, 2, 3) }),
  row('zdiffstore',          -4,   W | F.MOVABLE_KEYS,           [1, 1, 1],   zdiffstoreCommand, { getKeys: numkeysKeys(1, 2, 3) }),
  row('zintercard',          -3,   F.READONLY | F.MOVABLE_KEYS,  [0, 0, 0],   zintercardCommand, { getKeys: numkeysKeys(0, 1, 2) }),
  row('zscan',               -3,   F.READONLY,                   [1, 1, 1],   zscanCommand),
]);

