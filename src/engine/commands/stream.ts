/**
 * Stream commands (Redis 7.0's t_stream.c): XADD XLEN XRANGE XREVRANGE XDEL XTRIM XREAD
 * XREADGROUP XGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO XSETID, plus Redis 8.2's XDELEX and
 * XACKDEL. The value and all its mutations are ds/stream.ts; this file parses arguments,
 * checks them in Redis's order and writes replies.
 *
 * XREAD/XREADGROUP BLOCK wait through the engine's blocking.ts. A blocked reader is only
 * re-evaluated when Redis would signal the key (XADD, XGROUP DESTROY, a new value at the key,
 * the key's deletion): other changes (XDEL, XGROUP SETID...) leave it waiting, as in Redis.
 * BLOCK is refused over REST.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, CommandError, wrongArity } from '../../resp/errors.js';
import type { Client } from '../client.js';
import type { Entry } from '../db.js';
import type { Engine } from '../engine.js';
import { F } from '../flags.js';
import { container, family, row } from '../command.js';
import {
  Stream, type StreamNode, type ConsumerGroup, type Consumer, type Nack, type StreamId, type StreamLimits, type TrimSpec,
  ID_MIN, ID_MAX, ENTRIES_READ_INVALID, LISTPACK_MAX_SIZE, TRIM_MAXLEN, TRIM_MINID,
  formatId, idIncr, idDecr, makeId, makeIdNum, sameMs, seqIsMax, U64_MAX,
} from '../ds/stream.js';
import { lookupRead, lookupWrite, lookupWriteArg } from './typed-helpers.js';
import type { KeyRef } from '../keys.js';
import { N, keyEvent } from '../notify.js';
import { cstr } from '../../bytes.js';

// ---------------------------------------------------------------- errors

const INVALID_ID = 'ERR Invalid stream ID specified as stream command argument';
const ID_TOO_SMALL = 'ERR The ID specified in XADD is equal or smaller than the target stream top item';
const ID_ZERO = 'ERR The ID specified in XADD must be greater than 0-0';
const EXHAUSTED = 'ERR The stream has exhausted the last possible ID, unable to add more items';
const TOO_LARGE = 'ERR Elements are too large to be stored';
const BAD_START = 'ERR invalid start ID for the interval';
const BAD_END = 'ERR invalid end ID for the interval';
const REST_BLOCK = 'ERR blocking commands are not allowed over REST';

const WRONGTYPE = new CommandError(E.WRONGTYPE);

function subcommandSyntax(argv: Argv, cmd: string): CommandError {
  return new CommandError(
    `ERR unknown subcommand or wrong number of arguments for '${cstr(argv.key(1)).slice(0, 128)}'. Try ${cmd} HELP.`);
}

// ---------------------------------------------------------------- lookups and limits

/** The stream at key for reading (statistics, LRU); undefined when missing; throws WRONGTYPE. */
function readStream(c: Client, key: string): Stream | undefined {
  const e = lookupRead(c, key);
  if (e === undefined) return undefined;
  if (!(e.value instanceof Stream)) throw WRONGTYPE;
  return e.value;
}

function writeStream(c: Client, key: string): Stream | undefined {
  const e = lookupWrite(c, key);
  if (e === undefined) return undefined;
  if (!(e.value instanceof Stream)) throw WRONGTYPE;
  return e.value;
}

let limRaw: [string | undefined, string | undefined] = [undefined, undefined];
let lim: StreamLimits = { maxBytes: 4096, maxEntries: 100 };

/** stream-node-max-bytes / stream-node-max-entries, cached. */
function streamLimits(eng: Engine): StreamLimits {
  const a = eng.config.get('stream-node-max-bytes');
  const b = eng.config.get('stream-node-max-entries');
  if (a !== limRaw[0] || b !== limRaw[1]) {
    limRaw = [a, b];
    lim = { maxBytes: Number(a ?? 4096), maxEntries: Number(b ?? 100) };
  }
  return lim;
}

// ---------------------------------------------------------------- argument parsing

/** getLongLongFromObjectOrReply: a strict signed 64-bit integer. */
function llArg(argv: Argv, i: number, msg: string = E.NOT_INTEGER): bigint {
  const v = argv.int64(i);
  if (v === null) throw new CommandError(msg);
  return v;
}

/**
 * llArg() as a number (exact within ±2^53; past that the bigint's Number, as the trim
 * arguments used it). perf: no BigInt for XADD's usual MAXLEN ~ 10000.
 */
function llNum(argv: Argv, i: number): number {
  const v = argv.int(i);
  return v === v ? v : Number(llArg(argv, i));
}

const MAX_U64_TEXT_DIGITS = 20;

/**
 * Redis's string2ull: the canonical signed form first (a negative value is refused), then
 * strtoull's rules (leading blanks, a sign, digits to the end; "-n" wraps modulo 2^64).
 */
function strToU64(s: string): bigint | null {
  const n = s.length;
  if (n === 0) return null;
  // Fast path: plain digits that fit a double exactly.
  if (n <= 15) {
    let v = 0;
    let i = 0;
    for (; i < n; i++) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
    }
    if (i === n) return BigInt(v);
  }
  // Canonical negative numbers within int64 are refused (string2ll succeeded, ll < 0).
  if (/^-[1-9][0-9]*$/.test(s) && n < 21 && BigInt(s) >= -9223372036854775808n) return null;
  const m = /^[ \t\n\v\f\r]*([+-]?)([0-9]+)$/.exec(s);
  if (m === null) return null;
  const digits = m[2].replace(/^0+(?=.)/, '');
  if (digits.length > MAX_U64_TEXT_DIGITS) return null;
  let v = BigInt(digits);
  if (v > U64_MAX) return null;
  if (m[1] === '-') v = BigInt.asUintN(64, -v);
  return v;
}

/** Set by parseId(): false when the id was "<ms>-*" (XADD only). */
let seqGiven = true;

/**
 * streamGenericParseIDOrReply: "<ms>-<seq>", "<ms>" (seq = missingSeq), "-" and "+" unless
 * strict, and "<ms>-*" when allowed. Throws INVALID_ID.
 */
function parseId(argv: Argv, i: number, missingSeq: bigint, strict: boolean, allowSeqStar = false): StreamId {
  seqGiven = true;
  if (argv.len(i) > 127) throw new CommandError(INVALID_ID);
  const s = cstr(argv.key(i));
  if (s === '-' || s === '+') {
    if (strict) throw new CommandError(INVALID_ID);
    return s === '-' ? ID_MIN : ID_MAX;
  }
  const dash = s.indexOf('-');
  // Fast path: "<digits>-<digits>" with small numbers.
  const fast = /^(\d{1,15})-(\d{1,15})$/.exec(s);
  if (fast !== null) return makeIdNum(Number(fast[1]), Number(fast[2]));
  const ms = strToU64(dash < 0 ? s : s.slice(0, dash));
  if (ms === null) throw new CommandError(INVALID_ID);
  let seq: bigint | null;
  if (dash < 0) {
    seq = missingSeq;
  } else {
    const rest = s.slice(dash + 1);
    if (allowSeqStar && rest === '*') {
      seq = 0n;
      seqGiven = false;
    } else {
      seq = strToU64(rest);
      if (seq === null) throw new CommandError(INVALID_ID);
    }
  }
  return makeId(ms, seq);
}

/** An interval bound: "(" makes it exclusive (strict id after it). */
function parseBound(argv: Argv, i: number, missingSeq: bigint, isStart: boolean): StreamId {
  const len = argv.len(i);
  if (len > 1 && argv.buf[argv.start[i]] === 0x28) {
    const sub = argv.tail(i);
    sub.start[0]++;
    const id = parseId(sub, 0, missingSeq, true);
    const next = isStart ? idIncr(id) : idDecr(id);
    if (next === null) throw new CommandError(isStart ? BAD_START : BAD_END);
    return next;
  }
  return parseId(argv, i, missingSeq, false);
}

function isByte(argv: Argv, i: number, ch: number): boolean {
  return argv.len(i) === 1 && argv.buf[argv.start[i]] === ch;
}

// ---------------------------------------------------------------- replies

/** Scratch for an id's text: every ReplySink copies bulkBytes' bytes before it returns. */
const ID_TEXT = Buffer.allocUnsafeSlow(41);

/**
 * The decimal digits of the id half at `o` (0 = ms, 4 = seq) into ID_TEXT, ending before
 * `end`; returns their start, or -1 when the half is not a safe integer. perf: read from the
 * id's char codes here (a halfNum() call returned a boxed double for every ms timestamp).
 */
function putHalf(id: StreamId, o: number, end: number): number {
  const a = id.charCodeAt(o);
  if (a >= 32) return -1;
  return putDigits(a * 281474976710656 + id.charCodeAt(o + 1) * 4294967296 + id.charCodeAt(o + 2) * 65536 + id.charCodeAt(o + 3), end);
}

/** The decimal digits of n (a safe non-negative integer) into ID_TEXT, ending before `end`; returns their start. */
function putDigits(n: number, end: number): number {
  do {
    const q = Math.floor(n / 10);
    // (The digit first: 48 + n is not exact for n within 48 of 2^53.)
    ID_TEXT[--end] = 48 + (n - q * 10);
    n = q;
  } while (n > 0);
  return end;
}

/** "<ms>-<seq>" (perf: written as bytes, no number-to-string conversions or concatenation). */
function replyId(out: ReplySink, id: StreamId): void {
  let p = putHalf(id, 4, 41);
  if (p >= 0) {
    ID_TEXT[--p] = 0x2d;
    p = putHalf(id, 0, p);
  }
  if (p < 0) {
    out.bulkLatin1(formatId(id));
    return;
  }
  out.bulkBytes(ID_TEXT, p, 41);
}

/** replyId() of the id ms-seq (two safe non-negative integers). */
function replyMsSeq(out: ReplySink, ms: number, seq: number): void {
  let p = putDigits(seq, 41);
  ID_TEXT[--p] = 0x2d;
  p = putDigits(ms, p);
  out.bulkBytes(ID_TEXT, p, 41);
}

/** replyId() of entry i of node n, from the node's id words (no id string while both halves are safe). */
function replyNodeId(out: ReplySink, n: StreamNode, i: number): void {
  const ms = n.idHalf(i, 0);
  const seq = n.idHalf(i, 1);
  if (ms < 0 || seq < 0) {
    replyId(out, n.id(i));
    return;
  }
  replyMsSeq(out, ms, seq);
}

function replyEntry(out: ReplySink, id: StreamId, fv: Buffer[] | null): void {
  out.array(2);
  replyId(out, id);
  if (fv === null) {
    out.nilArray();
    return;
  }
  out.array(fv.length);
  for (const b of fv) out.bulk(b);
}

/**
 * Entries to reply with: entry idx[k] of nodes[k] (null: a deleted pending entry, nil), with
 * their ids in `ids`, or `ids` empty when they are read from the nodes (plain range reads).
 */
interface Collected {
  ids: StreamId[];
  nodes: (StreamNode | null)[];
  idx: number[];
}

/** Entries of [start, end], `count` at most (0 = all); their id strings only when `ids`. */
function collectRange(s: Stream, start: StreamId, end: StreamId, rev: boolean, count: number, ids = false): Collected {
  const r: Collected = { ids: [], nodes: [], idx: [] };
  s.forRangeIdx(start, end, rev, (n, i) => {
    if (ids) r.ids.push(n.id(i));
    r.nodes.push(n);
    r.idx.push(i);
    return count === 0 || r.nodes.length < count;
  });
  return r;
}

function replyCollected(out: ReplySink, r: Collected): void {
  const fromNodes = r.ids.length === 0;
  out.array(r.nodes.length);
  for (let k = 0; k < r.nodes.length; k++) {
    const n = r.nodes[k];
    out.array(2);
    if (fromNodes) replyNodeId(out, n!, r.idx[k]);
    else replyId(out, r.ids[k]);
    if (n === null) out.nilArray();
    else n.reply(r.idx[k], out);
  }
}

/** addReplyLongLong of an unsigned 64-bit counter (Redis casts it). */
function replyU64(out: ReplySink, v: bigint | number): void {
  if (typeof v === 'number') out.int(v);
  else out.int(BigInt.asIntN(64, v));
}

// ---------------------------------------------------------------- XADD / XTRIM

interface AddTrimArgs {
  idPos: number;
  id: StreamId;
  idGiven: boolean;
  seqGiven: boolean;
  noMkStream: boolean;
  trim: TrimSpec | null;
}

const NO_TRIM: TrimSpec = { strategy: 0, maxlen: 0, minid: ID_MIN, approx: false, limit: 0 };
/**
 * parseAddTrim's result, reused from call to call (perf: XADD runs for every BullMQ event): its
 * callers use it before they return, and nothing they call parses another XADD or XTRIM.
 */
const ADD_TRIM: AddTrimArgs = { idPos: 0, id: ID_MIN, idGiven: false, seqGiven: true, noMkStream: false, trim: null };
const TRIM_SPEC: { -readonly [K in keyof TrimSpec]: TrimSpec[K] } = { strategy: 0, maxlen: 0, minid: ID_MIN, approx: false, limit: 0 };

/** streamParseAddOrTrimArgsOrReply. */
function parseAddTrim(c: Client, argv: Argv, xadd: boolean): AddTrimArgs {
  let strategy = 0;
  let approx = false;
  let maxlen = 0;
  let minid = ID_MIN;
  let limit = 0;
  let limitGiven = false;
  const a = ADD_TRIM;
  a.idPos = 0;
  a.id = ID_MIN;
  a.idGiven = false;
  a.seqGiven = true;
  a.noMkStream = false;
  a.trim = null;
  let i = 2;
  for (; i < argv.count; i++) {
    const more = argv.count - 1 - i;
    if (xadd && isByte(argv, i, 0x2a)) break; // "*": the common case
    if (argv.is(i, 'MAXLEN') && more > 0) {
      if (strategy !== 0) throw new CommandError('ERR syntax error, MAXLEN and MINID options at the same time are not compatible');
      approx = false;
      if (more >= 2 && isByte(argv, i + 1, 0x7e)) { approx = true; i++; } else if (more >= 2 && isByte(argv, i + 1, 0x3d)) i++;
      const v = llNum(argv, i + 1);
      if (v < 0) throw new CommandError('ERR The MAXLEN argument must be >= 0.');
      maxlen = v;
      i++;
      strategy = TRIM_MAXLEN;
    } else if (argv.is(i, 'MINID') && more > 0) {
      if (strategy !== 0) throw new CommandError('ERR syntax error, MAXLEN and MINID options at the same time are not compatible');
      approx = false;
      if (more >= 2 && isByte(argv, i + 1, 0x7e)) { approx = true; i++; } else if (more >= 2 && isByte(argv, i + 1, 0x3d)) i++;
      minid = parseId(argv, i + 1, 0n, true);
      i++;
      strategy = TRIM_MINID;
    } else if (argv.is(i, 'LIMIT') && more > 0) {
      const v = llNum(argv, i + 1);
      if (v < 0) throw new CommandError('ERR The LIMIT argument must be >= 0.');
      limit = v;
      limitGiven = true;
      i++;
    } else if (xadd && argv.is(i, 'NOMKSTREAM')) {
      a.noMkStream = true;
    } else if (xadd) {
      a.id = parseId(argv, i, 0n, true, true);
      a.seqGiven = seqGiven;
      a.idGiven = true;
      break;
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }
  if (limit !== 0 && strategy === 0) {
    throw new CommandError('ERR syntax error, LIMIT cannot be used without specifying a trimming strategy');
  }
  if (!xadd && strategy === 0) throw new CommandError('ERR syntax error, XTRIM must be called with a trimming strategy');
  if (limitGiven) {
    if (!approx) throw new CommandError('ERR syntax error, LIMIT cannot be used without the special ~ option');
  } else if (approx) {
    // At most 100 nodes' worth of work per call, bounded both ways.
    limit = 100 * streamLimits(c.engine).maxEntries;
    if (limit <= 0) limit = 10000;
    if (limit > 1000000) limit = 1000000;
  } else {
    limit = 0;
  }
  a.idPos = i;
  if (strategy !== 0) {
    const t = TRIM_SPEC;
    t.strategy = strategy;
    t.maxlen = maxlen;
    t.minid = minid;
    t.approx = approx;
    t.limit = limit;
    a.trim = t;
  }
  return a;
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]
/** touchConsumer, with streamCreateConsumer's xgroup-createconsumer event when it creates one. */
function consumerFor(c: Client, key: string, g: ConsumerGroup, name: string, now: number): Consumer {
  if (c.engine.notifyFlags !== 0 && !g.consumers.has(name)) keyEvent(c, N.STREAM, 'xgroup-createconsumer', key);
  return g.touchConsumer(name, now);
}

function xaddCommand(c: Client, argv: Argv, out: ReplySink): void {
  const a = parseAddTrim(c, argv, true);
  const fieldPos = a.idPos + 1;
  const n = argv.count - fieldPos;
  if (n < 2 || n % 2 === 1) throw new CommandError(wrongArity('xadd'));
  if (a.idGiven && a.seqGiven && a.id === ID_MIN) throw new CommandError(ID_ZERO);
  // perf: the key found from its bytes; its string is the entry's (one is made for a new key).
  const e = lookupWriteArg(c, argv, 1);
  if (e !== undefined && !(e.value instanceof Stream)) throw WRONGTYPE;
  const key = e !== undefined ? e.key : argv.key(1);
  let s = e !== undefined ? (e.value as Stream) : undefined;
  let created = false;
  if (s === undefined) {
    if (a.noMkStream) {
      out.nil();
      return;
    }
    s = new Stream();
    created = true;
  }
  let total = 0;
  for (let i = fieldPos; i < argv.count; i++) total += argv.len(i);
  // perf: `*` after an id held as numbers is made, appended and replied from numbers.
  if (!a.idGiven && s.lastSeqNum() >= 0 && total <= LISTPACK_MAX_SIZE &&
    s.appendAuto(c.engine.now, argv.buf, argv.start, argv.end, fieldPos, argv.count, streamLimits(c.engine))) {
    replyMsSeq(out, s.lastMsNum(), s.lastSeqNum());
    xaddDone(c, a, s, key, e, created);
    return;
  }
  if (s.lastId === ID_MAX) throw new CommandError(EXHAUSTED);
  let id: StreamId;
  if (!a.idGiven) {
    id = s.nextAutoId(c.engine.now)!;
  } else if (!a.seqGiven && sameMs(s.lastId, a.id)) {
    // "<ms>-*" in the last id's millisecond: the next sequence. Redis 7.0 reports an
    // exhausted sequence with this message.
    if (seqIsMax(s.lastId)) throw new CommandError(TOO_LARGE);
    id = idIncr(s.lastId)!;
  } else {
    id = a.id;
  }
  if (id <= s.lastId) throw new CommandError(ID_TOO_SMALL);
  if (total > LISTPACK_MAX_SIZE) throw new CommandError(TOO_LARGE);
  // The entry's fields and values are copied from the arguments into the last node's arena.
  s.appendArgs(id, argv.buf, argv.start, argv.end, fieldPos, argv.count, streamLimits(c.engine));
  replyId(out, id);
  xaddDone(c, a, s, key, e, created);
}

/** XADD after its entry was appended and replied: trimming, the key, the events. */
function xaddDone(c: Client, a: AddTrimArgs, s: Stream, key: string, e: Entry | undefined, created: boolean): void {
  const db = c.db;
  const trimmed = a.trim !== null ? s.trim(a.trim) : 0;
  if (created) db.add(key, s);
  else db.modified(key, e);
  keyEvent(c, N.STREAM, 'xadd', key);
  if (trimmed > 0) keyEvent(c, N.STREAM, 'xtrim', key);
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
function xtrimCommand(c: Client, argv: Argv, out: ReplySink): void {
  const a = parseAddTrim(c, argv, false);
  // perf: the key found from its bytes (BullMQ trims its events stream once per job).
  const e = lookupWriteArg(c, argv, 1);
  if (e === undefined) {
    out.int(0);
    return;
  }
  if (!(e.value instanceof Stream)) throw WRONGTYPE;
  const deleted = (e.value as Stream).trim(a.trim ?? NO_TRIM);
  if (deleted > 0) c.db.modified(e.key, e);
  if (deleted > 0) keyEvent(c, N.STREAM, 'xtrim', e.key);
  out.int(deleted);
}

// ---------------------------------------------------------------- XLEN / XRANGE / XDEL / XSETID

// XLEN key
function xlenCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = readStream(c, argv.key(1));
  out.int(s === undefined ? 0 : s.length);
}

// XRANGE key start end [COUNT count] / XREVRANGE key end start [COUNT count]
function rangeGeneric(c: Client, argv: Argv, out: ReplySink, rev: boolean): void {
  const start = parseBound(argv, rev ? 3 : 2, 0n, true);
  const end = parseBound(argv, rev ? 2 : 3, U64_MAX, false);
  let count = -1;
  for (let j = 4; j < argv.count; j++) {
    if (argv.is(j, 'COUNT') && j + 1 < argv.count) {
      const v = llArg(argv, j + 1);
      count = v < 0n ? 0 : Number(v);
      j++;
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }
  const s = readStream(c, argv.key(1));
  if (s === undefined) {
    out.array(0);
    return;
  }
  if (count === 0) {
    out.nilArray();
    return;
  }
  replyCollected(out, collectRange(s, start, end, rev, count === -1 ? 0 : count));
}

function xrangeCommand(c: Client, argv: Argv, out: ReplySink): void {
  rangeGeneric(c, argv, out, false);
}

function xrevrangeCommand(c: Client, argv: Argv, out: ReplySink): void {
  rangeGeneric(c, argv, out, true);
}

function parseIds(argv: Argv, from: number, to: number): StreamId[] {
  const ids: StreamId[] = [];
  for (let j = from; j < to; j++) ids.push(parseId(argv, j, 0n, true));
  return ids;
}

// XDEL key id [id ...]
function xdelCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const s = writeStream(c, key);
  if (s === undefined) {
    out.int(0);
    return;
  }
  const deleted = s.deleteIds(parseIds(argv, 2, argv.count));
  if (deleted > 0) c.db.modified(key);
  if (deleted > 0) keyEvent(c, N.STREAM, 'xdel', key);
  out.int(deleted);
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
function xsetidCommand(c: Client, argv: Argv, out: ReplySink): void {
  const id = parseId(argv, 2, 0n, true);
  let entriesAdded: bigint | null = null;
  let maxDeleted: StreamId | null = null;
  for (let i = 3; i < argv.count; i += 2) {
    const more = argv.count - 1 - i;
    if (argv.is(i, 'ENTRIESADDED') && more > 0) {
      const v = llArg(argv, i + 1);
      if (v < 0n) throw new CommandError('ERR entries_added must be positive');
      entriesAdded = v;
    } else if (argv.is(i, 'MAXDELETEDID') && more > 0) {
      maxDeleted = parseId(argv, i + 1, 0n, true);
      if (id < maxDeleted) throw new CommandError('ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id');
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }
  const key = argv.key(1);
  const s = writeStream(c, key);
  if (s === undefined) throw new CommandError(E.NO_KEY);
  if (s.length > 0) {
    if (id < s.lastValidId()) throw new CommandError('ERR The ID specified in XSETID is smaller than the target stream top item');
    if (entriesAdded !== null && BigInt(s.length) > entriesAdded) {
      throw new CommandError('ERR The entries_added specified in XSETID is smaller than the target stream length');
    }
  }
  s.setId(id, entriesAdded, maxDeleted);
  c.db.modified(key);
  keyEvent(c, N.STREAM, 'xsetid', key);
  out.ok();
}

// ---------------------------------------------------------------- XREAD / XREADGROUP

/** The ">" id of XREADGROUP (Redis uses the maximum id for it too). */
const NEW_ENTRIES = ID_MAX;

/** Entries served to one key (for the deferred reply). */
interface Served {
  key: string;
  r: Collected;
}

/** Parsed XREAD/XREADGROUP options. */
interface ReadArgs {
  timeout: number; // -1: no BLOCK
  count: number;
  noack: boolean;
  group: string | null;
  consumer: string | null;
  keys: string[];
  ids: StreamId[];
}

/**
 * Deliver entries > gt to a consumer group reader (streamReplyWithRange with a group), or
 * from its own pending list when serving history.
 */
function serveGroup(c: Client, s: Stream, g: ConsumerGroup, consumer: Consumer, start: StreamId, count: number,
  noack: boolean, history: boolean): Collected {
  const now = c.engine.now;
  if (history) {
    // streamReplyWithRangeFromConsumerPEL: the consumer's own pending entries from start.
    const r: Collected = { ids: [], nodes: [], idx: [] };
    for (let k = consumer.pel.ceil(start); k !== undefined && (count === 0 || r.ids.length < count); k = consumer.pel.higher(k)) {
      const at = s.locate(k);
      const live = at !== null && at.node.isLive(at.index);
      r.ids.push(k);
      r.nodes.push(live ? at.node : null);
      r.idx.push(live ? at.index : 0);
      if (live) g.redeliver(k, consumer.pel.get(k)!, now);
    }
    return r;
  }
  const r = collectRange(s, start, ID_MAX, false, count, true);
  for (const id of r.ids) s.deliver(g, id, consumer, noack, now);
  return r;
}

function writeServed(out: ReplySink, served: Served[]): void {
  out.assoc(served.length);
  for (const x of served) {
    out.assocItem();
    out.bulkLatin1(x.key);
    replyCollected(out, x.r);
  }
}

// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]
function readGeneric(c: Client, argv: Argv, out: ReplySink, xreadgroup: boolean): void {
  const a: ReadArgs = { timeout: -1, count: 0, noack: false, group: null, consumer: null, keys: [], ids: [] };
  let streamsArg = 0;
  let streamsCount = 0;
  for (let i = 1; i < argv.count; i++) {
    const more = argv.count - i - 1;
    if (argv.is(i, 'BLOCK') && more > 0) {
      // Redis refuses BLOCK inside scripts outright (its name as the script spelt it).
      if (c.transport.kind === 'internal') {
        throw new CommandError(`ERR ${argv.str(0)} command is not allowed with BLOCK option from scripts`);
      }
      i++;
      const t = llArg(argv, i, 'ERR timeout is not an integer or out of range');
      if (t < 0n) throw new CommandError('ERR timeout is negative');
      a.timeout = Number(t);
    } else if (argv.is(i, 'COUNT') && more > 0) {
      i++;
      const v = llArg(argv, i);
      a.count = v < 0n ? 0 : Number(v);
    } else if (argv.is(i, 'STREAMS') && more > 0) {
      streamsArg = i + 1;
      streamsCount = argv.count - streamsArg;
      if (streamsCount % 2 !== 0) {
        throw new CommandError("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.");
      }
      streamsCount /= 2;
      break;
    } else if (argv.is(i, 'GROUP') && more >= 2) {
      if (!xreadgroup) throw new CommandError('ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.');
      a.group = argv.key(i + 1);
      a.consumer = argv.key(i + 2);
      i += 2;
    } else if (argv.is(i, 'NOACK')) {
      if (!xreadgroup) throw new CommandError('ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.');
      a.noack = true;
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }
  if (streamsArg === 0) throw new CommandError(E.SYNTAX);
  if (xreadgroup && a.group === null) throw new CommandError('ERR Missing GROUP option for XREADGROUP');
  if (a.timeout !== -1 && c.transport.kind === 'http') throw new CommandError(REST_BLOCK);

  const groups: ConsumerGroup[] = [];
  for (let k = 0; k < streamsCount; k++) {
    const key = argv.key(streamsArg + k);
    const idArg = streamsArg + streamsCount + k;
    const s = readStream(c, key);
    a.keys.push(key);
    if (a.group !== null) {
      const g = s?.groups.get(a.group);
      if (g === undefined) {
        throw new CommandError(
          `NOGROUP No such key '${cstr(key)}' or consumer group '${cstr(a.group)}' in XREADGROUP with GROUP option`);
      }
      groups.push(g);
    }
    if (isByte(argv, idArg, 0x24)) { // "$"
      if (xreadgroup) {
        throw new CommandError('ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.');
      }
      a.ids.push(s !== undefined ? s.lastId : ID_MIN);
    } else if (isByte(argv, idArg, 0x3e)) { // ">"
      if (!xreadgroup) {
        throw new CommandError('ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.');
      }
      a.ids.push(NEW_ENTRIES);
    } else {
      a.ids.push(parseId(argv, idArg, 0n, true));
    }
  }

  // Serve synchronously what can be served.
  const served: Served[] = [];
  const now = c.engine.now;
  for (let k = 0; k < streamsCount; k++) {
    const key = a.keys[k];
    const s = readStream(c, key);
    if (s === undefined) continue;
    let gt = a.ids[k];
    let sync = false;
    let history = false;
    if (a.group !== null) {
      const g = groups[k];
      if (gt !== NEW_ENTRIES) {
        sync = true;
        history = true;
      } else if (s.length > 0 && s.lastValidId() > g.lastId) {
        sync = true;
        gt = g.lastId;
      }
      // Redis 7.0 looks the consumer up (creating it) only when it serves this key now.
      if (sync) {
        const consumer = consumerFor(c, key, g, a.consumer!, now);
        served.push({ key, r: serveGroup(c, s, g, consumer, idIncr(gt) ?? ID_MIN, a.count, a.noack, history) });
        c.db.modified(key);
      }
    } else if (s.length > 0 && s.lastValidId() > gt) {
      served.push({ key, r: collectRange(s, idIncr(gt)!, ID_MAX, false, a.count) });
    }
  }
  if (served.length > 0) {
    writeServed(out, served);
    return;
  }
  if (a.timeout === -1 || c.engine.inExec) {
    // No BLOCK, or a context that cannot block (MULTI): answer as on timeout.
    out.nilArray();
    return;
  }
  blockRead(c, a);
}

/** Most entries served to a client woken without COUNT (XREAD_BLOCKED_DEFAULT_COUNT). */
const BLOCKED_DEFAULT_COUNT = 1000;
/** setTimeout's limit; longer BLOCK times wait without a timer (more than 24 days). */
const MAX_TIMER_MS = 2147483647;

/** Block an XREAD/XREADGROUP client until one of its keys can serve it. */
function blockRead(c: Client, a: ReadArgs): void {
  const count = a.count !== 0 ? a.count : BLOCKED_DEFAULT_COUNT;
  // Per key: the id to read after (the first occurrence of a repeated key wins, as in
  // Redis), and the value/signal count last evaluated, so that only signalled changes wake.
  const waitIds = new Map<string, StreamId>();
  const seen = new Map<string, { value: Stream | null; signals: number }>();
  for (let k = 0; k < a.keys.length; k++) {
    const key = a.keys[k];
    if (waitIds.has(key)) continue;
    waitIds.set(key, a.ids[k]);
    const v = c.db.get(key)?.value;
    seen.set(key, v instanceof Stream ? { value: v, signals: v.signals } : { value: null, signals: 0 });
  }
  const serve = (key: string, o: ReplySink): boolean => {
    const db = c.db;
    const v = db.get(key)?.value;
    const st = seen.get(key)!;
    if (!(v instanceof Stream)) {
      st.value = null;
      if (a.group !== null) {
        o.error('UNBLOCKED the stream key no longer exists');
        return true;
      }
      return false;
    }
    if (v === st.value && v.signals === st.signals) return false;
    st.value = v;
    st.signals = v.signals;
    let gt = waitIds.get(key)!;
    let g: ConsumerGroup | undefined;
    if (a.group !== null) {
      g = v.groups.get(a.group);
      if (g === undefined) {
        o.error('NOGROUP the consumer group this client was blocked on no longer exists');
        return true;
      }
      gt = g.lastId;
    }
    if (!(v.lastId > gt)) return false;
    const start = idIncr(gt)!;
    let r: Collected;
    if (g !== undefined) {
      const consumer = consumerFor(c, key, g, a.consumer!, c.engine.now);
      r = serveGroup(c, v, g, consumer, start, count, a.noack, false);
      db.modified(key);
    } else {
      r = collectRange(v, start, ID_MAX, false, count);
    }
    writeServed(o, [{ key, r }]);
    return true;
  };
  const ms = a.timeout;
  const deadline = ms === 0 || ms > MAX_TIMER_MS ? 0 : Date.now() + ms;
  c.engine.blocking.block(c, { keys: [...waitIds.keys()], deadline, serve, timeout: (o) => o.nilArray() });
}

function xreadCommand(c: Client, argv: Argv, out: ReplySink): void {
  readGeneric(c, argv, out, false);
}

function xreadgroupCommand(c: Client, argv: Argv, out: ReplySink): void {
  readGeneric(c, argv, out, true);
}

/**
 * Redis's xreadGetKeys (used when the STREAMS key spec does not fit the arguments): options
 * are skipped up to STREAMS, then half of the remaining arguments are keys (none if odd).
 */
function xreadKeys(argv: Argv): KeyRef[] {
  let at = -1;
  for (let i = 1; i < argv.count; i++) {
    if (argv.is(i, 'BLOCK') || argv.is(i, 'COUNT')) i++;
    else if (argv.is(i, 'GROUP')) i += 2;
    else if (argv.is(i, 'NOACK')) continue;
    else {
      if (argv.is(i, 'STREAMS')) at = i;
      break;
    }
  }
  const n = argv.count - at - 1;
  if (at < 0 || n === 0 || n % 2 !== 0) return [];
  const keys: KeyRef[] = [];
  for (let i = at + 1; i < argv.count - n / 2; i++) keys.push({ pos: i, flags: 0 });
  return keys;
}

// ---------------------------------------------------------------- XGROUP

function noGroup(group: string, key: string): CommandError {
  return new CommandError(`NOGROUP No such consumer group '${cstr(group)}' for key name '${cstr(key)}'`);
}

// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD entries-read]
// XGROUP SETID key group id|$ [ENTRIESREAD entries-read]
// XGROUP DESTROY key group
// XGROUP CREATECONSUMER key group consumer
// XGROUP DELCONSUMER key group consumer
function xgroupCommand(c: Client, argv: Argv, out: ReplySink): void {
  const create = argv.is(1, 'CREATE');
  const setid = argv.is(1, 'SETID');
  let mkstream = false;
  let entriesRead = ENTRIES_READ_INVALID;
  let s: Stream | undefined;
  let g: ConsumerGroup | undefined;
  const key = argv.key(2);
  const name = argv.key(3);
  for (let i = 5; i < argv.count;) {
    if (create && argv.is(i, 'MKSTREAM')) {
      mkstream = true;
      i++;
    } else if ((create || setid) && argv.is(i, 'ENTRIESREAD') && i + 1 < argv.count) {
      const v = llArg(argv, i + 1);
      if (v < 0n && v !== ENTRIES_READ_INVALID) throw new CommandError('ERR value for ENTRIESREAD must be positive or -1');
      entriesRead = v;
      i += 2;
    } else {
      throw subcommandSyntax(argv, 'XGROUP');
    }
  }
  s = writeStream(c, key);
  if (!mkstream) {
    if (s === undefined) {
      throw new CommandError('ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.');
    }
    g = s.groups.get(name);
    if (g === undefined && (setid || argv.is(1, 'CREATECONSUMER') || argv.is(1, 'DELCONSUMER'))) throw noGroup(name, key);
  }
  const db = c.db;
  if (create && argv.count <= 8) {
    let id: StreamId;
    if (isByte(argv, 4, 0x24)) id = s !== undefined ? s.lastId : ID_MIN;
    else id = parseId(argv, 4, 0n, true);
    let created = false;
    if (s === undefined) {
      s = new Stream();
      created = true;
    }
    const ok = s.createGroup(name, id, entriesRead) !== null;
    if (created) db.add(key, s);
    else if (ok) db.modified(key);
    if (ok) keyEvent(c, N.STREAM, 'xgroup-create', key);
    if (ok) out.ok();
    else out.error('BUSYGROUP Consumer Group name already exists');
  } else if (setid && (argv.count === 5 || argv.count === 7)) {
    const id = isByte(argv, 4, 0x24) ? s!.lastId : parseId(argv, 4, 0n, false);
    g!.setLastId(id, entriesRead);
    db.modified(key);
    keyEvent(c, N.STREAM, 'xgroup-setid', key);
    out.ok();
  } else if (argv.is(1, 'DESTROY') && argv.count === 4) {
    if (g !== undefined) {
      s!.destroyGroup(name);
      db.modified(key);
      keyEvent(c, N.STREAM, 'xgroup-destroy', key);
      out.int(1);
    } else {
      out.int(0);
    }
  } else if (argv.is(1, 'CREATECONSUMER') && argv.count === 5) {
    const created = g!.createConsumer(argv.key(4), c.engine.now) !== null;
    if (created) db.modified(key);
    if (created) keyEvent(c, N.STREAM, 'xgroup-createconsumer', key);
    out.int(created ? 1 : 0);
  } else if (argv.is(1, 'DELCONSUMER') && argv.count === 5) {
    const consumer = g!.consumers.get(argv.key(4));
    let pending = 0;
    if (consumer !== undefined) {
      pending = g!.deleteConsumer(consumer);
      db.modified(key);
      keyEvent(c, N.STREAM, 'xgroup-delconsumer', key);
    }
    out.int(pending);
  } else {
    throw subcommandSyntax(argv, 'XGROUP');
  }
}

const XGROUP_HELP = [
  'XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'CREATE <key> <groupname> <id|$> [option]',
  '    Create a new consumer group. Options are:',
  '    * MKSTREAM',
  '      Create the empty stream if it does not exist.',
  '    * ENTRIESREAD entries_read',
  "      Set the group's entries_read counter (internal use).",
  'CREATECONSUMER <key> <groupname> <consumer>',
  '    Create a new consumer in the specified group.',
  'DELCONSUMER <key> <groupname> <consumer>',
  '    Remove the specified consumer.',
  'DESTROY <key> <groupname>',
  '    Remove the specified group.',
  'SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]',
  '    Set the current group ID and entries_read counter.',
  'HELP',
  '    Prints this help.',
];

// XGROUP HELP
function xgroupHelpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(XGROUP_HELP.length);
  for (const l of XGROUP_HELP) out.simple(l);
}

/** Never reached: the dispatcher resolves a subcommand row first. */
function xgroupFallback(_c: Client, argv: Argv, out: ReplySink): void {
  out.error(`ERR unknown subcommand '${cstr(argv.key(1))}'. Try XGROUP HELP.`);
}

// ---------------------------------------------------------------- XACK / XPENDING

// XACK key group id [id ...]
function xackCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const s = readStream(c, key);
  const g = s?.groups.get(argv.key(2));
  if (g === undefined) {
    out.int(0);
    return;
  }
  const ids = parseIds(argv, 3, argv.count);
  let acked = 0;
  for (const id of ids) if (g.ack(id)) acked++;
  if (acked > 0) c.db.modified(key);
  out.int(acked);
}

function noKeyOrGroup(key: string, group: string): CommandError {
  return new CommandError(`NOGROUP No such key '${cstr(key)}' or consumer group '${cstr(group)}'`);
}

/** The pending entry reply fields shared by XPENDING's extended form. */
function idleOf(now: number, n: Nack): number {
  const e = now - n.deliveryTime;
  return e < 0 ? 0 : e;
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
function xpendingCommand(c: Client, argv: Argv, out: ReplySink): void {
  const justInfo = argv.count === 3;
  if (argv.count !== 3 && (argv.count < 6 || argv.count > 9)) throw new CommandError(E.SYNTAX);
  let start = ID_MIN;
  let end = ID_MAX;
  let count = 0;
  let minIdle = 0n;
  let consumerName: string | null = null;
  if (argv.count >= 6) {
    let at = 3;
    if (argv.is(3, 'IDLE')) {
      minIdle = llArg(argv, 4);
      if (argv.count < 8) throw new CommandError(E.SYNTAX);
      at += 2;
    }
    const v = llArg(argv, at + 2);
    count = v < 0n ? 0 : Number(v);
    start = parseBound(argv, at, 0n, true);
    end = parseBound(argv, at + 1, U64_MAX, false);
    if (at + 3 < argv.count) consumerName = argv.key(at + 3);
  }
  const key = argv.key(1);
  const s = readStream(c, key);
  const g = s?.groups.get(argv.key(2));
  if (g === undefined) throw noKeyOrGroup(key, argv.key(2));
  if (justInfo) {
    out.array(4);
    out.int(g.pel.size);
    if (g.pel.size === 0) {
      out.nil();
      out.nil();
      out.nilArray();
      return;
    }
    replyId(out, g.pel.first()!);
    replyId(out, g.pel.last()!);
    const withPending = g.sortedConsumers().filter((x) => x.pel.size > 0);
    out.array(withPending.length);
    for (const x of withPending) {
      out.array(2);
      out.bulkLatin1(x.name);
      out.bulkLatin1(String(x.pel.size));
    }
    return;
  }
  let pel = g.pel;
  if (consumerName !== null) {
    const consumer = g.consumers.get(consumerName);
    if (consumer === undefined) {
      out.array(0);
      return;
    }
    pel = consumer.pel;
  }
  const now = c.engine.now;
  const rows: [StreamId, Nack][] = [];
  for (let k = pel.ceil(start); count > 0 && k !== undefined && k <= end; k = pel.higher(k)) {
    const n = pel.get(k)!;
    if (minIdle !== 0n && BigInt(now - n.deliveryTime) < minIdle) continue;
    rows.push([k, n]);
    count--;
  }
  out.array(rows.length);
  for (const [id, n] of rows) {
    out.array(4);
    replyId(out, id);
    out.bulkLatin1(n.consumer.name);
    out.int(idleOf(now, n));
    replyU64(out, n.deliveryCount);
  }
}

// ---------------------------------------------------------------- XCLAIM / XAUTOCLAIM

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds]
//        [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]
function xclaimCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const groupName = argv.key(2);
  const s = readStream(c, key);
  const g = s?.groups.get(groupName);
  if (g === undefined) throw noKeyOrGroup(key, groupName);
  let minIdle = llArg(argv, 4, 'ERR Invalid min-idle-time argument for XCLAIM');
  if (minIdle < 0n) minIdle = 0n;
  // Ids come first; the first argument that is not an id starts the options.
  const ids: StreamId[] = [];
  let j = 5;
  for (; j < argv.count; j++) {
    try {
      ids.push(parseId(argv, j, 0n, true));
    } catch {
      break;
    }
  }
  const now = c.engine.now;
  let force = false;
  let justId = false;
  let deliveryTime = -1n;
  let retry: bigint = -1n;
  let lastId = ID_MIN;
  for (; j < argv.count; j++) {
    const more = argv.count - 1 - j;
    if (argv.is(j, 'FORCE')) {
      force = true;
    } else if (argv.is(j, 'JUSTID')) {
      justId = true;
    } else if (argv.is(j, 'IDLE') && more > 0) {
      j++;
      deliveryTime = BigInt(now) - llArg(argv, j, 'ERR Invalid IDLE option argument for XCLAIM');
    } else if (argv.is(j, 'TIME') && more > 0) {
      j++;
      deliveryTime = llArg(argv, j, 'ERR Invalid TIME option argument for XCLAIM');
    } else if (argv.is(j, 'RETRYCOUNT') && more > 0) {
      j++;
      retry = llArg(argv, j, 'ERR Invalid RETRYCOUNT option argument for XCLAIM');
    } else if (argv.is(j, 'LASTID') && more > 0) {
      j++;
      lastId = parseId(argv, j, 0n, true);
    } else {
      throw new CommandError(`ERR Unrecognized XCLAIM option '${cstr(argv.key(j))}'`);
    }
  }
  let changed = false;
  if (lastId > g.lastId) {
    g.setLastId(lastId, null);
    changed = true;
  }
  // A delivery time in the future or before the epoch is taken as now.
  const time = deliveryTime === -1n || deliveryTime < 0n || deliveryTime > BigInt(now) ? now : Number(deliveryTime);
  const retryCount = retry < 0n ? -1 : retry <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(retry) : retry;
  let consumer: Consumer | null = null;
  const claimed: StreamId[] = [];
  const fvs: Buffer[][] = [];
  for (const id of ids) {
    let nack = g.pel.get(id);
    const fv = s!.get(id);
    if (fv === null) {
      // The entry is gone: drop its pending entry.
      if (nack !== undefined) {
        g.dropPending(id);
        changed = true;
      }
      continue;
    }
    let forced = false;
    if (force && nack === undefined) {
      consumer ??= consumerFor(c, key, g, argv.key(3), now);
      nack = g.forceClaim(id, consumer, now);
      forced = true;
    }
    if (nack === undefined) continue;
    // A pending entry made by FORCE has no previous owner: min-idle-time does not apply.
    if (!forced && minIdle !== 0n && BigInt(now - nack.deliveryTime) < minIdle) continue;
    consumer ??= consumerFor(c, key, g, argv.key(3), now);
    g.claim(id, nack, consumer, time, retryCount, justId);
    claimed.push(id);
    fvs.push(fv);
    changed = true;
  }
  if (changed || consumer !== null) c.db.modified(key);
  out.array(claimed.length);
  for (let i = 0; i < claimed.length; i++) {
    if (justId) replyId(out, claimed[i]);
    else replyEntry(out, claimed[i], fvs[i]);
  }
}

/** COUNT bound of XAUTOCLAIM: LONG_MAX / max(sizeof(streamID), attempts factor). */
const AUTOCLAIM_MAX_COUNT = 576460752303423487n;
/**
 * Redis allocates COUNT ids up front and answers this error when the allocation fails; we
 * refuse counts whose allocation (16 bytes each) would exceed 128 TiB.
 */
const AUTOCLAIM_ALLOC_LIMIT = 2n ** 43n;

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
function xautoclaimCommand(c: Client, argv: Argv, out: ReplySink): void {
  const found = lookupRead(c, argv.key(1)); // Redis looks the key up first, checks its type later
  let minIdle = llArg(argv, 4, 'ERR Invalid min-idle-time argument for XAUTOCLAIM');
  if (minIdle < 0n) minIdle = 0n;
  const start = parseBound(argv, 5, 0n, true);
  let count = 100n;
  let justId = false;
  for (let j = 6; j < argv.count; j++) {
    const more = argv.count - 1 - j;
    if (argv.is(j, 'COUNT') && more > 0) {
      const v = argv.int64(j + 1);
      if (v === null || v < 1n || v > AUTOCLAIM_MAX_COUNT) throw new CommandError('ERR COUNT must be > 0');
      count = v;
      j++;
    } else if (argv.is(j, 'JUSTID')) {
      justId = true;
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }
  const key = argv.key(1);
  const groupName = argv.key(2);
  if (found !== undefined && !(found.value instanceof Stream)) throw WRONGTYPE;
  const s = found?.value as Stream | undefined;
  const g = s?.groups.get(groupName);
  if (g === undefined) throw noKeyOrGroup(key, groupName);
  if (count >= AUTOCLAIM_ALLOC_LIMIT) {
    throw new CommandError('ERR Insufficient memory, failed allocating transient memory, COUNT too high.');
  }
  let left = Number(count);
  let attempts = left * 10;
  const now = c.engine.now;
  let consumer: Consumer | null = null;
  const claimed: StreamId[] = [];
  const fvs: Buffer[][] = [];
  const deleted: StreamId[] = [];
  let last: StreamId | null = null;
  let eof = false;
  while (attempts-- > 0 && left > 0) {
    const k: StreamId | undefined = last === null ? g.pel.ceil(start) : g.pel.higher(last);
    if (k === undefined) {
      eof = true;
      break;
    }
    last = k;
    const nack = g.pel.get(k)!;
    const fv = s!.get(k);
    if (fv === null) {
      g.dropPending(k);
      deleted.push(k);
      left--;
      continue;
    }
    if (minIdle !== 0n && BigInt(now - nack.deliveryTime) < minIdle) continue;
    consumer ??= consumerFor(c, key, g, argv.key(3), now);
    g.claim(k, nack, consumer, now, -1, justId);
    claimed.push(k);
    fvs.push(fv);
    left--;
  }
  let cursor = ID_MIN;
  if (!eof) cursor = (last === null ? g.pel.ceil(start) : g.pel.higher(last)) ?? ID_MIN;
  if (claimed.length > 0 || deleted.length > 0 || consumer !== null) c.db.modified(key);
  out.array(3);
  replyId(out, cursor);
  out.array(claimed.length);
  for (let i = 0; i < claimed.length; i++) {
    if (justId) replyId(out, claimed[i]);
    else replyEntry(out, claimed[i], fvs[i]);
  }
  out.array(deleted.length);
  for (const id of deleted) replyId(out, id);
}

// ---------------------------------------------------------------- XINFO

/** XINFO's key lookup: "no such key" when missing. */
function infoStream(c: Client, argv: Argv): Stream {
  const s = readStream(c, argv.key(2));
  if (s === undefined) throw new CommandError(E.NO_KEY);
  return s;
}

function replyLag(out: ReplySink, s: Stream, g: ConsumerGroup): void {
  const lag = s.lag(g);
  if (lag === null) out.nil();
  else out.int(lag);
}

function replyEntriesRead(out: ReplySink, g: ConsumerGroup): void {
  if (g.entriesRead === ENTRIES_READ_INVALID) out.nil();
  else out.int(g.entriesRead);
}

// XINFO CONSUMERS key group
function xinfoConsumersCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = infoStream(c, argv);
  const g = s.groups.get(argv.key(3));
  if (g === undefined) throw noGroup(argv.key(3), argv.key(2));
  const now = c.engine.now;
  const consumers = g.sortedConsumers();
  out.array(consumers.length);
  for (const x of consumers) {
    out.map(3);
    out.bulkLatin1('name');
    out.bulkLatin1(x.name);
    out.bulkLatin1('pending');
    out.int(x.pel.size);
    out.bulkLatin1('idle');
    out.int(Math.max(0, now - x.seenTime));
  }
}

// XINFO GROUPS key
function xinfoGroupsCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = infoStream(c, argv);
  const groups = s.sortedGroups();
  out.array(groups.length);
  for (const g of groups) {
    out.map(6);
    out.bulkLatin1('name');
    out.bulkLatin1(g.name);
    out.bulkLatin1('consumers');
    out.int(g.consumers.size);
    out.bulkLatin1('pending');
    out.int(g.pel.size);
    out.bulkLatin1('last-delivered-id');
    replyId(out, g.lastId);
    out.bulkLatin1('entries-read');
    replyEntriesRead(out, g);
    out.bulkLatin1('lag');
    replyLag(out, s, g);
  }
}

// XINFO STREAM key [FULL [COUNT count]]
function xinfoStreamCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = infoStream(c, argv);
  const optc = argv.count - 3;
  let full = true;
  let count = 10;
  if (optc === 0) {
    full = false;
  } else {
    if (optc !== 1 && optc !== 3) throw subcommandSyntax(argv, 'XINFO');
    if (!argv.is(3, 'FULL')) throw subcommandSyntax(argv, 'XINFO');
    if (optc === 3) {
      if (!argv.is(4, 'COUNT')) throw subcommandSyntax(argv, 'XINFO');
      const v = llArg(argv, 5);
      count = v < 0n ? 10 : Number(v);
    }
  }
  out.map(full ? 9 : 10);
  out.bulkLatin1('length');
  out.int(s.length);
  out.bulkLatin1('radix-tree-keys');
  out.int(s.raxKeys);
  out.bulkLatin1('radix-tree-nodes');
  out.int(s.raxNodes());
  out.bulkLatin1('last-generated-id');
  replyId(out, s.lastId);
  out.bulkLatin1('max-deleted-entry-id');
  replyId(out, s.maxDeletedId);
  out.bulkLatin1('entries-added');
  replyU64(out, s.entriesAdded);
  out.bulkLatin1('recorded-first-entry-id');
  replyId(out, s.firstId);
  if (!full) {
    out.bulkLatin1('groups');
    out.int(s.groups.size);
    out.bulkLatin1('first-entry');
    const first = s.edge(true);
    if (first === null) out.nil();
    else replyEntry(out, first, s.get(first));
    out.bulkLatin1('last-entry');
    const last = s.edge(false);
    if (last === null) out.nil();
    else replyEntry(out, last, s.get(last));
    return;
  }
  out.bulkLatin1('entries');
  replyCollected(out, collectRange(s, ID_MIN, ID_MAX, false, count));
  out.bulkLatin1('groups');
  const groups = s.sortedGroups();
  out.array(groups.length);
  const limited = (n: number) => (count === 0 ? n : Math.min(n, count));
  for (const g of groups) {
    out.map(7);
    out.bulkLatin1('name');
    out.bulkLatin1(g.name);
    out.bulkLatin1('last-delivered-id');
    replyId(out, g.lastId);
    out.bulkLatin1('entries-read');
    replyEntriesRead(out, g);
    out.bulkLatin1('lag');
    replyLag(out, s, g);
    out.bulkLatin1('pel-count');
    out.int(g.pel.size);
    out.bulkLatin1('pending');
    const n = limited(g.pel.size);
    out.array(n);
    let k = g.pel.first();
    for (let i = 0; i < n; i++, k = g.pel.higher(k!)) {
      const nack = g.pel.get(k!)!;
      out.array(4);
      replyId(out, k!);
      out.bulkLatin1(nack.consumer.name);
      out.int(nack.deliveryTime);
      replyU64(out, nack.deliveryCount);
    }
    out.bulkLatin1('consumers');
    const consumers = g.sortedConsumers();
    out.array(consumers.length);
    for (const x of consumers) {
      out.map(4);
      out.bulkLatin1('name');
      out.bulkLatin1(x.name);
      out.bulkLatin1('seen-time');
      out.int(x.seenTime);
      out.bulkLatin1('pel-count');
      out.int(x.pel.size);
      out.bulkLatin1('pending');
      const m = limited(x.pel.size);
      out.array(m);
      let q = x.pel.first();
      for (let i = 0; i < m; i++, q = x.pel.higher(q!)) {
        const nack = x.pel.get(q!)!;
        out.array(3);
        replyId(out, q!);
        out.int(nack.deliveryTime);
        replyU64(out, nack.deliveryCount);
      }
    }
  }
}

const XINFO_HELP = [
  'XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'CONSUMERS <key> <groupname>',
  '    Show consumers of <groupname>.',
  'GROUPS <key>',
  '    Show the stream consumer groups.',
  'STREAM <key> [FULL [COUNT <count>]',
  '    Show information about the stream.',
  'HELP',
  '    Prints this help.',
];

// XINFO HELP
function xinfoHelpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(XINFO_HELP.length);
  for (const l of XINFO_HELP) out.simple(l);
}

function xinfoFallback(_c: Client, argv: Argv, out: ReplySink): void {
  out.error(`ERR unknown subcommand '${cstr(argv.key(1))}'. Try XINFO HELP.`);
}

// ---------------------------------------------------------------- XDELEX / XACKDEL (Redis 8.2)

const KEEPREF = 0;
const DELREF = 1;
const ACKED = 2;

interface DeleteArgs {
  policy: number;
  ids: StreamId[];
}

/** "[KEEPREF|DELREF|ACKED] IDS numids id [id ...]" from argument `from`, in any order. */
function parseDeleteArgs(argv: Argv, from: number): DeleteArgs {
  let policy = -1;
  let ids: StreamId[] | null = null;
  for (let i = from; i < argv.count; i++) {
    const more = argv.count - 1 - i;
    if (argv.is(i, 'KEEPREF') || argv.is(i, 'DELREF') || argv.is(i, 'ACKED')) {
      if (policy !== -1) throw new CommandError(E.SYNTAX);
      policy = argv.is(i, 'KEEPREF') ? KEEPREF : argv.is(i, 'DELREF') ? DELREF : ACKED;
    } else if (argv.is(i, 'IDS') && more > 0 && ids === null) {
      const n = argv.int(i + 1);
      if (!(n >= 1)) throw new CommandError('ERR Number of IDs must be a positive integer');
      if (n > more - 1) throw new CommandError('ERR The `numids` parameter must match the number of arguments');
      ids = parseIds(argv, i + 2, i + 2 + n);
      i += 1 + n;
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }
  if (ids === null) throw new CommandError(E.SYNTAX);
  return { policy: policy === -1 ? KEEPREF : policy, ids };
}

/** Delete `ids` under a reference policy; replies one code per id (XDELEX and XACKDEL). */
function deleteWithPolicy(c: Client, key: string, s: Stream, d: DeleteArgs, out: ReplySink, changed: boolean): void {
  const codes: number[] = [];
  let modified = changed;
  for (const id of d.ids) {
    let canDelete = true;
    if (d.policy === ACKED) {
      if (s.isReferenced(id)) canDelete = false;
    } else if (d.policy === DELREF) {
      if (s.dropReferences(id)) modified = true;
    }
    if (!canDelete) {
      codes.push(2);
    } else if (s.deleteIds([id]) > 0) {
      codes.push(1);
      modified = true;
    } else {
      codes.push(-1);
    }
  }
  if (modified) c.db.modified(key);
  out.array(codes.length);
  for (const x of codes) out.int(x);
}

// XDELEX key [KEEPREF|DELREF|ACKED] IDS numids id [id ...]
function xdelexCommand(c: Client, argv: Argv, out: ReplySink): void {
  const d = parseDeleteArgs(argv, 2);
  const key = argv.key(1);
  const s = writeStream(c, key);
  if (s === undefined) {
    out.array(d.ids.length);
    for (let i = 0; i < d.ids.length; i++) out.int(-1);
    return;
  }
  deleteWithPolicy(c, key, s, d, out, false);
}

// XACKDEL key group [KEEPREF|DELREF|ACKED] IDS numids id [id ...]
function xackdelCommand(c: Client, argv: Argv, out: ReplySink): void {
  const d = parseDeleteArgs(argv, 3);
  const key = argv.key(1);
  const s = writeStream(c, key);
  if (s === undefined) {
    out.array(d.ids.length);
    for (let i = 0; i < d.ids.length; i++) out.int(-1);
    return;
  }
  const g = s.groups.get(argv.key(2));
  if (g === undefined) throw noKeyOrGroup(key, argv.key(2));
  let acked = false;
  for (const id of d.ids) if (g.ack(id)) acked = true;
  deleteWithPolicy(c, key, s, d, out, acked);
}

// ---------------------------------------------------------------- table

const W = F.WRITE;
const RO = F.READONLY;
export default family('stream', ['stream'], [
  //   name              arity  flags                                       keys        handler
  row('xadd',              -5,  W | F.DENYOOM | F.FAST,                     [1, 1, 1],  xaddCommand),
  row('xlen',               2,  RO | F.FAST,                                [1, 1, 1],  xlenCommand),
  row('xrange',            -4,  RO,                                         [1, 1, 1],  xrangeCommand),
  row('xrevrange',         -4,  RO,                                         [1, 1, 1],  xrevrangeCommand),
  row('xdel',              -3,  W | F.FAST,                                 [1, 1, 1],  xdelCommand),
  row('xtrim',             -4,  W,                                          [1, 1, 1],  xtrimCommand),
  row('xread',             -4,  RO | F.BLOCKING | F.MOVABLE_KEYS,           [0, 0, 0],  xreadCommand, { getKeys: xreadKeys }),
  row('xreadgroup',        -7,  W | F.BLOCKING | F.MOVABLE_KEYS,            [0, 0, 0],  xreadgroupCommand, { getKeys: xreadKeys }),
  row('xack',              -4,  W | F.FAST,                                 [1, 1, 1],  xackCommand),
  row('xpending',          -3,  RO,                                         [1, 1, 1],  xpendingCommand),
  row('xclaim',            -6,  W | F.FAST,                                 [1, 1, 1],  xclaimCommand),
  row('xautoclaim',        -6,  W | F.FAST,                                 [1, 1, 1],  xautoclaimCommand),
  row('xsetid',            -3,  W | F.DENYOOM | F.FAST,                     [1, 1, 1],  xsetidCommand),
  row('xdelex',            -5,  W | F.FAST,                                 [1, 1, 1],  xdelexCommand),
  row('xackdel',           -6,  W | F.FAST,                                 [1, 1, 1],  xackdelCommand),
  container('xgroup',      -2,  0, [
    row('create',          -5,  W | F.DENYOOM,                              [2, 2, 1],  xgroupCommand),
    row('setid',           -5,  W,                                          [2, 2, 1],  xgroupCommand),
    row('destroy',          4,  W,                                          [2, 2, 1],  xgroupCommand),
    row('createconsumer',   5,  W | F.DENYOOM,                              [2, 2, 1],  xgroupCommand),
    row('delconsumer',      5,  W,                                          [2, 2, 1],  xgroupCommand),
    row('help',             2,  F.LOADING | F.STALE,                        [0, 0, 0],  xgroupHelpCommand),
  ], xgroupFallback),
  container('xinfo',       -2,  0, [
    row('consumers',        4,  RO,                                         [2, 2, 1],  xinfoConsumersCommand),
    row('groups',           3,  RO,                                         [2, 2, 1],  xinfoGroupsCommand),
    row('stream',          -3,  RO,                                         [2, 2, 1],  xinfoStreamCommand),
    row('help',             2,  F.LOADING | F.STALE,                        [0, 0, 0],  xinfoHelpCommand),
  ], xinfoFallback),
]);
