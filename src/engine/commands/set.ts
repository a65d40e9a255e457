/**
 * Set commands (Redis's t_set.c): SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP
 * SRANDMEMBER SMOVE SINTER SINTERCARD SINTERSTORE SUNION SUNIONSTORE SDIFF SDIFFSTORE SSCAN.
 *
 * Algebra results are built like Redis builds them (an intset that converts as members
 * arrive), so their order and encoding match: sorted for integer results, first-set order
 * for listpacks.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { globMatch } from '../glob.js';
import { SetValue } from '../ds/set.js';
import { INVALID_CURSOR, parseCursor, parseScanOptions } from '../ds/scan.js';
import { numkeysKeys } from '../keys.js';
import { N, keyEvent } from '../notify.js';
import {
  OUT_OF_RANGE_POSITIVE, isLongMin, longArg, lookupRead, lookupWrite, lookupWriteArg, outputExhausted, rangeError, setLimits,
} from './typed-helpers.js';

const NUMKEYS_POSITIVE = 'ERR numkeys should be greater than 0';
const TOO_MANY_KEYS = "ERR Number of keys can't be greater than number of args";
const LIMIT_NEGATIVE = "ERR LIMIT can't be negative";

/** The set at `key`: undefined when missing, null when the key holds another type. */
function readSet(c: Client, key: string): SetValue | undefined | null {
  const e = lookupRead(c, key);
  if (e === undefined) return undefined;
  return e.value instanceof SetValue ? e.value : null;
}

/** readSet() of the key argv[1], looked up from its bytes. */
function readSetArg(c: Client, argv: Argv): SetValue | undefined | null {
  const e = c.db.readArg(argv, 1, !c.noTouch);
  if (e === undefined) return undefined;
  return e.value instanceof SetValue ? e.value : null;
}

function writeSet(c: Client, key: string): SetValue | undefined | null {
  const e = lookupWrite(c, key);
  if (e === undefined) return undefined;
  return e.value instanceof SetValue ? e.value : null;
}

function replyMembers(out: ReplySink, s: SetValue, asSet = true): void {
  if (asSet) out.set(s.size);
  else out.array(s.size);
  s.forEach((m) => out.bulkLatin1(m));
}

// SADD key member [member ...]
function saddCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = lookupWriteArg(c, argv, 1);
  let s = e === undefined ? undefined : e.value instanceof SetValue ? e.value : null;
  if (s === null) return out.error(E.WRONGTYPE);
  const key = e !== undefined ? e.key : argv.key(1);
  const lim = setLimits(c.engine);
  const isNew = s === undefined;
  const b = argv.buf;
  const st = argv.start;
  const en = argv.end;
  if (s === undefined) s = SetValue.createBytes(b, st[2], en[2], argv.count - 2, lim);
  else s.maybeConvert(argv.count - 2, lim);
  let added = 0;
  for (let i = 2; i < argv.count; i++) if (s.addBytes(b, st[i], en[i], lim)) added++;
  if (isNew) c.db.add(key, s);
  else if (added > 0) c.db.modified(key, e);
  if (added > 0) keyEvent(c, N.SET, 'sadd', key);
  out.int(added);
}

// SREM key member [member ...]
function sremCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = lookupWriteArg(c, argv, 1);
  if (e === undefined) return out.int(0);
  const s = e.value;
  if (!(s instanceof SetValue)) return out.error(E.WRONGTYPE);
  let removed = 0;
  for (let i = 2; i < argv.count; i++) {
    if (s.removeBytes(argv.buf, argv.start[i], argv.end[i])) {
      removed++;
      if (s.size === 0) break;
    }
  }
  if (removed > 0) {
    const key = e.key;
    keyEvent(c, N.SET, 'srem', key);
    if (s.size === 0) c.db.delete(key);
    else c.db.modified(key, e);
    if (s.size === 0) keyEvent(c, N.GENERIC, 'del', key);
  }
  out.int(removed);
}

// SMEMBERS key
function smembersCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = readSet(c, argv.key(1));
  if (s === null) return out.error(E.WRONGTYPE);
  if (s === undefined) return out.set(0);
  replyMembers(out, s);
}

// SISMEMBER key member
function sismemberCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = readSetArg(c, argv);
  if (s === null) return out.error(E.WRONGTYPE);
  out.int(s !== undefined && s.hasBytes(argv.buf, argv.start[2], argv.end[2]) ? 1 : 0);
}

// SMISMEMBER key member [member ...]
function smismemberCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = readSetArg(c, argv);
  if (s === null) return out.error(E.WRONGTYPE);
  out.array(argv.count - 2);
  for (let i = 2; i < argv.count; i++) out.int(s !== undefined && s.hasBytes(argv.buf, argv.start[i], argv.end[i]) ? 1 : 0);
}

// SCARD key
function scardCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = readSetArg(c, argv);
  if (s === null) return out.error(E.WRONGTYPE);
  out.int(s === undefined ? 0 : s.size);
}

// SPOP key [count]
function spopCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 3) return out.error(E.SYNTAX);
  const key = argv.key(1);
  if (argv.count === 2) {
    const s = writeSet(c, key);
    if (s === null) return out.error(E.WRONGTYPE);
    if (s === undefined) return out.nil();
    out.bulkLatin1(s.pop());
    keyEvent(c, N.SET, 'spop', key);
    if (s.size === 0) c.db.delete(key);
    else c.db.modified(key);
    if (s.size === 0) keyEvent(c, N.GENERIC, 'del', key);
    return;
  }
  const count = longArg(argv, 2);
  if (count !== count || count < 0) return out.error(OUT_OF_RANGE_POSITIVE);
  const s = writeSet(c, key);
  if (s === null) return out.error(E.WRONGTYPE);
  if (s === undefined || count === 0) return out.set(0);
  if (count >= s.size) {
    replyMembers(out, s);
    keyEvent(c, N.SET, 'spop', key);
    c.db.delete(key);
    keyEvent(c, N.GENERIC, 'del', key);
    return;
  }
  const popped = s.popMany(count, setLimits(c.engine));
  out.set(popped.length);
  for (const m of popped) out.bulkLatin1(m);
  c.db.modified(key);
  keyEvent(c, N.SET, 'spop', key);
}

// SRANDMEMBER key [count]
function srandmemberCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 3) return out.error(E.SYNTAX);
  if (argv.count === 2) {
    const s = readSet(c, argv.key(1));
    if (s === null) return out.error(E.WRONGTYPE);
    if (s === undefined) return out.nil();
    out.bulkLatin1(s.random());
    return;
  }
  const l = longArg(argv, 2);
  if (l !== l) return out.error(E.NOT_INTEGER);
  if (isLongMin(argv, 2)) return out.error(rangeError('-9223372036854775807', '9223372036854775807'));
  const s = readSet(c, argv.key(1));
  if (s === null) return out.error(E.WRONGTYPE);
  if (s === undefined || l === 0) return out.array(0);
  // Negative count (or 1): independent draws, repetitions allowed.
  if (l < 0 || l === 1) {
    const count = l < 0 ? -l : 1;
    out.array(count);
    for (let i = 0; i < count; i++) {
      out.bulkLatin1(s.random());
      if ((i & 4095) === 4095 && outputExhausted(c, i)) return;
    }
    return;
  }
  if (l >= s.size) return replyMembers(out, s, false);
  const picked = s.randomDistinct(l);
  out.array(picked.length);
  for (const m of picked) out.bulkLatin1(m);
}

// SMOVE source destination member
function smoveCommand(c: Client, argv: Argv, out: ReplySink): void {
  const skey = argv.key(1);
  const dkey = argv.key(2);
  const src = writeSet(c, skey);
  let dst = writeSet(c, dkey);
  if (src === undefined) return out.int(0);
  if (src === null || dst === null) return out.error(E.WRONGTYPE);
  const m = argv.key(3);
  if (src === dst) return out.int(src.has(m) ? 1 : 0);
  if (!src.remove(m)) return out.int(0);
  keyEvent(c, N.SET, 'srem', skey);
  if (src.size === 0) c.db.delete(skey);
  else c.db.modified(skey);
  if (src.size === 0) keyEvent(c, N.GENERIC, 'del', skey);
  const lim = setLimits(c.engine);
  if (dst === undefined) {
    dst = SetValue.create(m, 1, lim);
    dst.add(m, lim);
    c.db.add(dkey, dst);
    keyEvent(c, N.SET, 'sadd', dkey);
  } else if (dst.add(m, lim)) {
    c.db.modified(dkey);
    keyEvent(c, N.SET, 'sadd', dkey);
  }
  out.int(1);
}

/**
 * The sets named by arguments [from, to): a set, undefined for a missing key. Null (after
 * replying WRONGTYPE) when any of them holds another type.
 */
function loadSets(c: Client, argv: Argv, from: number, to: number, out: ReplySink): (SetValue | undefined)[] | null {
  const sets: (SetValue | undefined)[] = [];
  for (let i = from; i < to; i++) {
    const s = readSet(c, argv.key(i));
    if (s === null) {
      out.error(E.WRONGTYPE);
      return null;
    }
    sets.push(s);
  }
  return sets;
}

/** Store `result` at `dstkey` (or delete it when empty); reply with the cardinality. */
function storeResult(c: Client, dstkey: string, result: SetValue, out: ReplySink, event: string): void {
  if (result.size > 0) {
    c.db.set(dstkey, result);
    keyEvent(c, N.SET, event, dstkey);
    out.int(result.size);
  } else {
    if (c.db.delete(dstkey)) keyEvent(c, N.GENERIC, 'del', dstkey);
    out.int(0);
  }
}

/**
 * SINTER / SINTERSTORE / SINTERCARD: iterate the smallest set, keep members found in all the
 * others. `mode` 0 = reply members, 1 = store at dstkey, 2 = cardinality (with `limit`).
 */
function interGeneric(c: Client, argv: Argv, out: ReplySink, from: number, to: number, mode: number, dstkey: string, limit: number): void {
  const loaded = loadSets(c, argv, from, to, out);
  if (loaded === null) return;
  if (loaded.some((s) => s === undefined)) {
    if (mode === 1) {
      if (c.db.delete(dstkey)) keyEvent(c, N.GENERIC, 'del', dstkey);
      out.int(0);
    } else if (mode === 2) {
      out.int(0);
    } else {
      out.set(0);
    }
    return;
  }
  const sets = (loaded as SetValue[]).slice().sort((a, b) => a.size - b.size);
  const first = sets[0];
  const lim = setLimits(c.engine);
  const result = mode === 1 ? SetValue.intset() : null;
  const members: string[] = [];
  let card = 0;
  first.forEach((m) => {
    if (mode === 2 && limit !== 0 && card >= limit) return;
    for (let j = 1; j < sets.length; j++) {
      if (sets[j] !== first && !sets[j].has(m)) return;
    }
    card++;
    if (mode === 0) members.push(m);
    else if (mode === 1) result!.add(m, lim);
  });
  if (mode === 2) {
    out.int(card);
  } else if (mode === 1) {
    storeResult(c, dstkey, result!, out, 'sinterstore');
  } else {
    out.set(members.length);
    for (const m of members) out.bulkLatin1(m);
  }
}

// SINTER key [key ...]
function sinterCommand(c: Client, argv: Argv, out: ReplySink): void {
  interGeneric(c, argv, out, 1, argv.count, 0, '', 0);
}

// SINTERSTORE destination key [key ...]
function sinterstoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  interGeneric(c, argv, out, 2, argv.count, 1, argv.key(1), 0);
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
function sintercardCommand(c: Client, argv: Argv, out: ReplySink): void {
  const numkeys = longArg(argv, 1);
  if (numkeys !== numkeys || numkeys < 1) return out.error(NUMKEYS_POSITIVE);
  if (numkeys > argv.count - 2) return out.error(TOO_MANY_KEYS);
  let limit = 0;
  for (let j = 2 + numkeys; j < argv.count; j++) {
    const more = argv.count - 1 - j;
    if (argv.is(j, 'LIMIT') && more > 0) {
      j++;
      limit = longArg(argv, j);
      if (limit !== limit || limit < 0) return out.error(LIMIT_NEGATIVE);
    } else {
      return out.error(E.SYNTAX);
    }
  }
  interGeneric(c, argv, out, 2, 2 + numkeys, 2, '', limit);
}

const UNION = 0;
const DIFF = 1;

/** SUNION / SDIFF and their STORE forms (sunionDiffGenericCommand). */
function unionDiffGeneric(c: Client, argv: Argv, out: ReplySink, from: number, op: number, dstkey: string | null): void {
  const sets = loadSets(c, argv, from, argv.count, out);
  if (sets === null) return;
  const lim = setLimits(c.engine);
  const result = SetValue.intset();
  const first = sets[0];
  let sameSet = false;
  for (let j = 1; j < sets.length; j++) if (first !== undefined && sets[j] === first) sameSet = true;
  if (op === UNION) {
    for (const s of sets) if (s !== undefined) s.forEach((m) => result.add(m, lim));
  } else if (first !== undefined && !sameSet) {
    // Redis picks between two algorithms by estimated work; both keep the first set's order,
    // but they build the result differently, which can change its encoding.
    let work1 = 0;
    let work2 = 0;
    for (const s of sets) {
      if (s === undefined) continue;
      work1 += first.size;
      work2 += s.size;
    }
    work1 = Math.floor(work1 / 2);
    const others = sets.slice(1).filter((s): s is SetValue => s !== undefined);
    if (work1 <= work2) {
      others.sort((a, b) => b.size - a.size);
      first.forEach((m) => {
        for (const s of others) if (s.has(m)) return;
        result.add(m, lim);
      });
    } else {
      first.forEach((m) => result.add(m, lim));
      for (const s of others) {
        if (result.size === 0) break;
        s.forEach((m) => {
          result.remove(m);
        });
      }
    }
  }
  if (dstkey !== null) {
    storeResult(c, dstkey, result, out, op === UNION ? 'sunionstore' : 'sdiffstore');
    return;
  }
  replyMembers(out, result);
}

// SUNION key [key ...]
function sunionCommand(c: Client, argv: Argv, out: ReplySink): void {
  unionDiffGeneric(c, argv, out, 1, UNION, null);
}

// SUNIONSTORE destination key [key ...]
function sunionstoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  unionDiffGeneric(c, argv, out, 2, UNION, argv.key(1));
}

// SDIFF key [key ...]
function sdiffCommand(c: Client, argv: Argv, out: ReplySink): void {
  unionDiffGeneric(c, argv, out, 1, DIFF, null);
}

// SDIFFSTORE destination key [key ...]
function sdiffstoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  unionDiffGeneric(c, argv, out, 2, DIFF, argv.key(1));
}

// SSCAN key cursor [MATCH pattern] [COUNT count]
function sscanCommand(c: Client, argv: Argv, out: ReplySink): void {
  const cursor = parseCursor(argv, 2);
  if (cursor < 0) return out.error(INVALID_CURSOR);
  const s = readSet(c, argv.key(1));
  if (s === null) return out.error(E.WRONGTYPE);
  if (s === undefined) {
    out.array(2);
    out.bulkLatin1('0');
    out.array(0);
    return;
  }
  const opts = parseScanOptions(argv, 3, false);
  if (typeof opts === 'string') return out.error(opts);
  const found: string[] = [];
  const pat = opts.pattern;
  const next = s.scan(cursor, opts.count, (m) => {
    if (pat === null || globMatch(pat, Buffer.from(m, 'latin1'))) found.push(m);
  });
  out.array(2);
  out.bulkLatin1(String(next));
  out.array(found.length);
  for (const m of found) out.bulkLatin1(m);
}

export default family('set', ['set'], [
  //   name            arity  flags                              keys         handler
  row('sadd',            -3,  F.WRITE | F.DENYOOM | F.FAST,      [1, 1, 1],   saddCommand),
  row('srem',            -3,  F.WRITE | F.FAST,                  [1, 1, 1],   sremCommand),
  row('smembers',         2,  F.READONLY,                        [1, 1, 1],   smembersCommand),
  row('sismember',        3,  F.READONLY | F.FAST,               [1, 1, 1],   sismemberCommand),
  row('smismember',      -3,  F.READONLY | F.FAST,               [1, 1, 1],   smismemberCommand),
  row('scard',            2,  F.READONLY | F.FAST,               [1, 1, 1],   scardCommand),
  row('spop',            -2,  F.WRITE | F.FAST,                  [1, 1, 1],   spopCommand),
  row('srandmember',     -2,  F.READONLY,                        [1, 1, 1],   srandmemberCommand),
  row('smove',            4,  F.WRITE | F.FAST,                  [1, 2, 1],   smoveCommand),
  row('sinter',          -2,  F.READONLY,                        [1, -1, 1],  sinterCommand),
  row('sintercard',      -3,  F.READONLY | F.MOVABLE_KEYS,       [0, 0, 0],   sintercardCommand, { getKeys: numkeysKeys(0, 1, 2) }),
  row('sinterstore',     -3,  F.WRITE | F.DENYOOM,               [1, -1, 1],  sinterstoreCommand),
  row('sunion',          -2,  F.READONLY,                        [1, -1, 1],  sunionCommand),
  row('sunionstore',     -3,  F.WRITE | F.DENYOOM,               [1, -1, 1],  sunionstoreCommand),
  row('sdiff',           -2,  F.READONLY,                        [1, -1, 1],  sdiffCommand),
  row('sdiffstore',      -3,  F.WRITE | F.DENYOOM,               [1, -1, 1],  sdiffstoreCommand),
  row('sscan',           -3,  F.READONLY,                        [1, 1, 1],   sscanCommand),
]);
