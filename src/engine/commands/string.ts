/**
 * String commands (Redis t_string.c): GET/SET and their variants, MGET/MSET/MSETNX, the
 * counters (INCR.../INCRBYFLOAT), APPEND/STRLEN/GETRANGE/SETRANGE/SUBSTR and LCS.
 *
 * Values are immutable Buffers, so the writer may send a stored value (or a subarray of one)
 * by reference. Changes build new Buffers; the one exception is APPEND, which may write into
 * spare capacity past the end of a value that no live Buffer covers (see appendBytes).
 * perf/memory: the hot paths read and write the compact forms of db.ts `Stored` directly (short
 * values as latin1 strings, canonical integers as numbers: INCR adds without parsing or
 * formatting); `Entry.value` would copy a compact value out into a Buffer.
 * Integers are stored as the exact decimal bytes Redis would store; INCRBYFLOAT computes in
 * emulated x87 long double (ds/long-double.ts) so its results are byte-exact.
 * `Entry.raw` is set where Redis's value becomes raw-encoded (APPEND, SETRANGE).
 *
 * Option tokens are compared as Redis compares them: as C strings, so an argument is read up
 * to its first NUL byte ("NX\0junk" is NX).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, wrongArity } from '../../resp/errors.js';
import { parseInt64, parseSafeInt } from '../../resp/ascii.js';
import type { Client } from '../client.js';
import { type Entry, SMALL_STRING, storedFrom } from '../db.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { N, keyEvent } from '../notify.js';
import { grow, mutable } from '../ds/strbuf.js';
import { LD_ZERO, formatHuman, ldAdd, ldIsFinite, parseLongDouble } from '../ds/long-double.js';
import { KF, type KeyRef } from '../keys.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const I64_MAX = 9223372036854775807n;
const I64_MIN = -9223372036854775808n;
const EMPTY = Buffer.alloc(0);

const ERR_TOO_BIG = 'ERR string exceeds maximum allowed size (proto-max-bulk-len)';
const ERR_OFFSET = 'ERR offset is out of range';
const ERR_DECR_OVERFLOW = 'ERR decrement would overflow';
const ERR_LCS_TYPE = 'ERR The specified keys must contain string values';
const ERR_LCS_IDX_LEN = 'ERR If you want both the length and indexes, please just use IDX.';
const ERR_LCS_TOO_LONG = 'ERR String too long for LCS';
const ERR_LCS_MEM_LIMIT = 'ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len';
const ERR_LCS_MEM_FAIL = 'ERR Insufficient memory, failed allocating transient memory for LCS';

// ------------------------------------------------------------------ shared helpers

/** strcasecmp(arg, token) == 0 with C-string semantics (the argument ends at its first NUL). */
function opt(argv: Argv, i: number, upper: string): boolean {
  const s = argv.start[i];
  const len = argv.end[i] - s;
  const n = upper.length;
  if (len < n) return false;
  const b = argv.buf;
  if (len > n && b[s + n] !== 0) return false;
  for (let j = 0; j < n; j++) {
    let c = b[s + j];
    if (c >= 97 && c <= 122) c -= 32;
    if (c !== upper.charCodeAt(j)) return false;
  }
  return true;
}

/** A 64-bit integer argument: a number when safe, a bigint beyond; null when invalid. */
function int64Arg(argv: Argv, i: number): number | bigint | null {
  const v = argv.int(i);
  if (v === v) return v;
  return argv.int64(i);
}

/** Argument i as a value to store, in its compact form (db.ts `Stored`). */
function arg(argv: Argv, i: number): Buffer | string | number {
  return storedFrom(argv.buf, argv.start[i], argv.end[i]) as Buffer | string | number;
}

/** Reply with a string value in any of its stored forms. */
function replyString(out: ReplySink, v: unknown): void {
  if (typeof v === 'string') out.bulkLatin1(v);
  else if (typeof v === 'number') out.bulkLatin1(String(v));
  else out.bulk(v as Buffer);
}

/** Byte length of a string value in any of its stored forms. */
function stringLength(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (typeof v === 'number') return String(v).length;
  return (v as Buffer).length;
}

function maxBulk(c: Client): number {
  return c.engine.cfgInt('proto-max-bulk-len');
}

/** getGenericCommand: reply with the value (or nil); false after a WRONGTYPE reply. */
function replyValue(c: Client, key: string, out: ReplySink): boolean {
  const e = c.db.read(key, !c.noTouch);
  if (e === undefined) out.nil();
  else if (e.isString) replyString(out, e.v);
  else {
    out.error(E.WRONGTYPE);
    return false;
  }
  return true;
}

// ------------------------------------------------------------------ SET option parsing

const NX = 1;
const XX = 2;
const EX = 4;
const PX = 8;
const KEEPTTL = 16;
const GET = 32;
const EXAT = 64;
const PXAT = 128;
const PERSIST = 256;
const ANY_EXPIRE = EX | PX | EXAT | PXAT;

/** Index of the expire argument found by the last parseExtended() (no allocation). */
let expireArg = 0;

/**
 * Redis parseExtendedStringArgumentsOrReply for SET (isSet) and GETEX: the flags, or -1 after
 * replying a syntax error. A repeated option is accepted (the last expire wins); conflicting
 * ones, an expire option without a value and options of the other command are syntax errors.
 */
function parseExtended(argv: Argv, from: number, isSet: boolean, out: ReplySink): number {
  let f = 0;
  expireArg = 0;
  const n = argv.count;
  for (let j = from; j < n; j++) {
    const hasNext = j < n - 1;
    if (isSet && !(f & XX) && opt(argv, j, 'NX')) f |= NX;
    else if (isSet && !(f & NX) && opt(argv, j, 'XX')) f |= XX;
    else if (isSet && opt(argv, j, 'GET')) f |= GET;
    else if (isSet && !(f & (PERSIST | ANY_EXPIRE)) && opt(argv, j, 'KEEPTTL')) f |= KEEPTTL;
    else if (!isSet && !(f & (ANY_EXPIRE | KEEPTTL)) && opt(argv, j, 'PERSIST')) f |= PERSIST;
    else if (hasNext && !(f & (KEEPTTL | PERSIST | EXAT | PX | PXAT)) && opt(argv, j, 'EX')) {
      f |= EX;
      expireArg = ++j;
    } else if (hasNext && !(f & (KEEPTTL | PERSIST | EX | EXAT | PXAT)) && opt(argv, j, 'PX')) {
      f |= PX;
      expireArg = ++j;
    } else if (hasNext && !(f & (KEEPTTL | PERSIST | EX | PX | PXAT)) && opt(argv, j, 'EXAT')) {
      f |= EXAT;
      expireArg = ++j;
    } else if (hasNext && !(f & (KEEPTTL | PERSIST | EX | EXAT | PX)) && opt(argv, j, 'PXAT')) {
      f |= PXAT;
      expireArg = ++j;
    } else {
      out.error(E.SYNTAX);
      return -1;
    }
  }
  return f;
}

/**
 * getExpireMillisecondsOrReply: the absolute expiry (ms) of argument i, or -1 after an error.
 * Non-positive values, seconds that overflow when scaled, and relative times that overflow
 * 64 bits once the current time is added are "invalid expire time".
 */
function expireAt(c: Client, argv: Argv, i: number, flags: number, cmd: string, out: ReplySink): number {
  const secs = (flags & (EX | EXAT)) !== 0;
  const relative = (flags & (EX | PX)) !== 0;
  const v = argv.int(i);
  if (v > 0 && v < 0x80000000000) { // < 2^43: every step below stays an exact double
    const ms = secs ? v * 1000 : v;
    return relative ? ms + c.engine.now : ms;
  }
  const big = argv.int64(i);
  if (big === null) {
    out.error(E.NOT_INTEGER);
    return -1;
  }
  if (big <= 0n || (secs && big > I64_MAX / 1000n)) {
    out.error(E.INVALID_EXPIRE(cmd));
    return -1;
  }
  let ms = secs ? big * 1000n : big;
  if (relative) ms += BigInt(c.engine.now);
  if (ms > I64_MAX) {
    out.error(E.INVALID_EXPIRE(cmd));
    return -1;
  }
  return Number(ms);
}

/**
 * setGenericCommand. `counting`: SETNX replies 1/0 instead of OK/nil. Order as Redis: expire
 * validation, then GET's reply (WRONGTYPE stops everything), then the NX/XX condition.
 */
function setGeneric(
  c: Client, argv: Argv, out: ReplySink, flags: number, valIdx: number, expIdx: number,
  cmd: string, counting: boolean,
): void {
  let when = 0;
  if (expIdx !== 0) {
    when = expireAt(c, argv, expIdx, flags, cmd, out);
    if (when < 0) return;
  }
  const db = c.db;
  // perf: SET key value PX/EX n of a new key (BullMQ's lock keys): the key created with its
  // TTL, one lookup from the bytes and one change signal (was: created, then given a TTL).
  if (expIdx !== 0 && (flags & (NX | XX | GET | KEEPTTL)) === 0 && when > c.engine.now && db.peekArg(argv, 1) === undefined) {
    const key = db.createTimed(argv.key(1), arg(argv, valIdx), when).key;
    keyEvent(c, N.STRING, 'set', key);
    keyEvent(c, N.GENERIC, 'expire', key);
    if (counting) out.int(1);
    else out.ok();
    return;
  }
  const key = argv.key(1);
  if (flags & GET && !replyValue(c, key, out)) return;
  if (flags & (NX | XX)) {
    const found = db.get(key) !== undefined;
    if ((flags & NX && found) || (flags & XX && !found)) {
      if (!(flags & GET)) {
        if (counting) out.int(0);
        else out.nil();
      }
      return;
    }
  }
  const e = db.set(key, arg(argv, valIdx), (flags & KEEPTTL) !== 0, expIdx !== 0);
  keyEvent(c, N.STRING, 'set', key);
  // A past EXAT/PXAT deletes the key at once (Redis 7.0 leaves it to lazy expiry: `expired`).
  if (expIdx !== 0) {
    keyEvent(c, N.GENERIC, 'expire', key);
    if (db.setExpire(e, when) === undefined) keyEvent(c, N.EXPIRED, 'expired', key);
  }
  if (!(flags & GET)) {
    if (counting) out.int(1);
    else out.ok();
  }
}

// ------------------------------------------------------------------ GET / SET family

// GET key
function getCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (c.db.replyCompactArg(argv, 1, !c.noTouch, out)) return;
  const e = c.db.readArg(argv, 1, !c.noTouch);
  if (e === undefined) {
    out.nil();
    return;
  }
  const v = e.v;
  if (typeof v === 'string') out.bulkLatin1(v);
  else if (typeof v === 'number') out.bulkLatin1(String(v));
  else if (v instanceof Uint8Array) out.bulk(v);
  else out.error(E.WRONGTYPE);
}

// SET key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds |
//     PXAT unix-time-milliseconds | KEEPTTL]
function setCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count === 3) { // the hot path: no options
    c.db.setArg(argv, 1, arg(argv, 2));
    if (c.engine.notifyFlags !== 0) keyEvent(c, N.STRING, 'set', argv.key(1));
    out.ok();
    return;
  }
  const flags = parseExtended(argv, 3, true, out);
  if (flags < 0) return;
  setGeneric(c, argv, out, flags, 2, flags & ANY_EXPIRE ? expireArg : 0, 'set', false);
}

// SETNX key value
function setnxCommand(c: Client, argv: Argv, out: ReplySink): void {
  setGeneric(c, argv, out, NX, 2, 0, 'setnx', true);
}

// SETEX key seconds value
function setexCommand(c: Client, argv: Argv, out: ReplySink): void {
  setGeneric(c, argv, out, EX, 3, 2, 'setex', false);
}

// PSETEX key milliseconds value
function psetexCommand(c: Client, argv: Argv, out: ReplySink): void {
  setGeneric(c, argv, out, PX, 3, 2, 'psetex', false);
}

// GETSET key value
function getsetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  if (!replyValue(c, key, out)) return;
  c.db.set(key, arg(argv, 2)); // drops the TTL, as SET does
  keyEvent(c, N.STRING, 'set', key);
}

// GETDEL key
function getdelCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const key = argv.key(1);
  const e = db.read(key, !c.noTouch);
  if (e === undefined) {
    out.nil();
  } else if (!e.isString) {
    out.error(E.WRONGTYPE);
  } else {
    replyString(out, e.v);
    db.delete(key);
    keyEvent(c, N.GENERIC, 'del', key);
  }
}

// GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
//     PXAT unix-time-milliseconds | PERSIST]
function getexCommand(c: Client, argv: Argv, out: ReplySink): void {
  const flags = argv.count > 2 ? parseExtended(argv, 2, false, out) : 0;
  if (flags < 0) return;
  const expIdx = expireArg;
  const db = c.db;
  const e = db.read(argv.key(1), !c.noTouch);
  if (e === undefined) {
    out.nil();
    return;
  }
  if (!e.isString) {
    out.error(E.WRONGTYPE);
    return;
  }
  // Redis validates the expire only once the key is known to exist and be a string.
  let when = 0;
  if (flags & ANY_EXPIRE) {
    when = expireAt(c, argv, expIdx, flags, 'getex', out);
    if (when < 0) return;
  }
  replyString(out, e.v);
  const key = e.key;
  if (flags & ANY_EXPIRE) keyEvent(c, N.GENERIC, db.setExpire(e, when) === undefined ? 'del' : 'expire', key); // a past EXAT/PXAT deletes the key
  else if (flags & PERSIST && db.persist(e)) keyEvent(c, N.GENERIC, 'persist', key);
}

// MGET key [key ...]
function mgetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const touch = !c.noTouch;
  const n = argv.count;
  out.array(n - 1);
  for (let i = 1; i < n; i++) {
    const e = db.read(argv.key(i), touch);
    if (e !== undefined && e.isString) replyString(out, e.v);
    else out.nil(); // missing keys and other types alike
  }
}

function msetGeneric(c: Client, argv: Argv, out: ReplySink, nx: boolean): void {
  const n = argv.count;
  if ((n & 1) === 0) {
    out.error(wrongArity(nx ? 'msetnx' : 'mset'));
    return;
  }
  const db = c.db;
  if (nx) {
    for (let i = 1; i < n; i += 2) {
      if (db.get(argv.key(i)) !== undefined) {
        out.int(0);
        return;
      }
    }
  }
  for (let i = 1; i < n; i += 2) {
    db.setArg(argv, i, arg(argv, i + 1));
    if (c.engine.notifyFlags !== 0) keyEvent(c, N.STRING, 'set', argv.key(i));
  }
  if (nx) out.int(1);
  else out.ok();
}

// MSET key value [key value ...]
function msetCommand(c: Client, argv: Argv, out: ReplySink): void {
  msetGeneric(c, argv, out, false);
}

// MSETNX key value [key value ...]
function msetnxCommand(c: Client, argv: Argv, out: ReplySink): void {
  msetGeneric(c, argv, out, true);
}

// ------------------------------------------------------------------ APPEND / ranges

/** `old` followed by argument i, grown in place when possible (ds/strbuf.ts). */
function appendBytes(old: Buffer, argv: Argv, i: number): Buffer {
  const v = grow(old, old.length + argv.len(i), false);
  argv.buf.copy(v, old.length, argv.start[i], argv.end[i]);
  return v;
}

// APPEND key value
function appendCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const key = argv.key(1);
  const e = db.get(key);
  if (e === undefined) {
    db.add(key, arg(argv, 2));
    keyEvent(c, N.STRING, 'append', key);
    out.int(argv.len(2));
    return;
  }
  if (!e.isString) {
    out.error(E.WRONGTYPE);
    return;
  }
  const sv = e.v;
  const total = stringLength(sv) + argv.len(2);
  if (total > maxBulk(c)) {
    out.error(ERR_TOO_BIG);
    return;
  }
  let nv: Buffer | string | number;
  if (total <= SMALL_STRING) {
    // Small results stay compact: old bytes and the argument, copied once more into a string.
    const tmp = Buffer.allocUnsafe(total);
    const n = typeof sv === 'object' ? (sv as Buffer).copy(tmp, 0) : tmp.latin1Write(typeof sv === 'number' ? String(sv) : sv, 0);
    argv.buf.copy(tmp, n, argv.start[2], argv.end[2]);
    nv = storedFrom(tmp, 0, total) as string | number;
  } else {
    nv = appendBytes(e.value as Buffer, argv, 2);
  }
  db.set(key, nv, true).raw = true;
  keyEvent(c, N.STRING, 'append', key);
  out.int(total);
}

// STRLEN key
function strlenCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = c.db.read(argv.key(1), !c.noTouch);
  if (e === undefined) out.int(0);
  else if (e.isString) out.int(stringLength(e.v));
  else out.error(E.WRONGTYPE);
}

// GETRANGE key start end   (SUBSTR key start end is the same command)
function getrangeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s0 = int64Arg(argv, 2);
  if (s0 === null) {
    out.error(E.NOT_INTEGER);
    return;
  }
  const e0 = int64Arg(argv, 3);
  if (e0 === null) {
    out.error(E.NOT_INTEGER);
    return;
  }
  const e = c.db.read(argv.key(1), !c.noTouch);
  if (e === undefined) {
    out.bulk(EMPTY);
    return;
  }
  if (!e.isString) {
    out.error(E.WRONGTYPE);
    return;
  }
  const sv = e.v;
  // Both negative with start after end: empty (compared exactly, before any clamping).
  if (s0 < 0 && e0 < 0 && s0 > e0) {
    out.bulk(EMPTY);
    return;
  }
  // Beyond 2^53 only the sign matters against a real length.
  let start = typeof s0 === 'bigint' ? (s0 < 0n ? -Infinity : Infinity) : s0;
  let end = typeof e0 === 'bigint' ? (e0 < 0n ? -Infinity : Infinity) : e0;
  const len = stringLength(sv);
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len === 0) out.bulk(EMPTY);
  else if (typeof sv === 'object') out.bulk((sv as Buffer).subarray(start, end + 1)); // a view of an immutable value
  else out.bulkLatin1((typeof sv === 'number' ? String(sv) : sv).slice(start, end + 1));
}

// SETRANGE key offset value
function setrangeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const o = int64Arg(argv, 2);
  if (o === null) {
    out.error(E.NOT_INTEGER);
    return;
  }
  if (o < 0) {
    out.error(ERR_OFFSET);
    return;
  }
  // Offsets beyond 2^53 exceed any size limit: Infinity keeps the checks below right.
  const off = typeof o === 'bigint' ? Infinity : o;
  const vlen = argv.len(3);
  const db = c.db;
  const key = argv.key(1);
  const e = db.get(key);
  if (e === undefined) {
    if (vlen === 0) { // setting nothing on a missing key creates nothing
      out.int(0);
      return;
    }
    if (off + vlen > maxBulk(c)) {
      out.error(ERR_TOO_BIG);
      return;
    }
    const nv = Buffer.alloc(off + vlen);
    argv.buf.copy(nv, off, argv.start[3], argv.end[3]);
    db.add(key, nv).raw = true;
    keyEvent(c, N.STRING, 'setrange', key);
    out.int(nv.length);
    return;
  }
  if (!e.isString) {
    out.error(E.WRONGTYPE);
    return;
  }
  const olen = stringLength(e.v);
  if (vlen === 0) {
    out.int(olen);
    return;
  }
  if (off + vlen > maxBulk(c)) {
    out.error(ERR_TOO_BIG);
    return;
  }
  const nlen = Math.max(olen, off + vlen);
  // Overwrites bytes in place unless they were handed out by reference (ds/strbuf.ts); a
  // compact value comes out of `e.value` as a fresh copy.
  const old = e.value as Buffer;
  const nv = grow(off < olen ? mutable(old) : old, nlen);
  argv.buf.copy(nv, off, argv.start[3], argv.end[3]);
  db.setStored(e, nlen <= SMALL_STRING ? storedFrom(nv, 0, nlen) : nv);
  e.raw = true;
  db.modified(key);
  keyEvent(c, N.STRING, 'setrange', key);
  out.int(nlen);
}

// ------------------------------------------------------------------ counters

/** The stored integer of a string value (string2ll rules), or null. */
function storedInt(e: Entry): number | bigint | null {
  const v = e.v;
  if (typeof v === 'number') return v; // the canonical form of a safe integer
  const b = e.value as Buffer;
  const n = parseSafeInt(b, 0, b.length);
  if (n === n) return n;
  return parseInt64(b, 0, b.length);
}

/** incrDecrCommand: the value plus `by`, within signed 64 bits, kept with its TTL. */
function incrDecr(c: Client, argv: Argv, out: ReplySink, by: number | bigint): void {
  const db = c.db;
  const e: Entry | undefined = db.getArg(argv, 1);
  let cur: number | bigint = 0;
  if (e !== undefined) {
    const v = e.v;
    if (typeof v === 'number' && typeof by === 'number') {
      // perf: the common case, an integer-encoded value and a safe result: no bytes at all
      // (not even the key's string).
      const r = v + by;
      if (r <= MAX_SAFE && r >= -MAX_SAFE) {
        db.update(e, r);
        if (c.engine.notifyFlags !== 0) keyEvent(c, N.STRING, 'incrby', e.key);
        out.int(r);
        return;
      }
    }
    if (!e.isString) {
      out.error(E.WRONGTYPE);
      return;
    }
    const n = storedInt(e);
    if (n === null) {
      out.error(E.NOT_INTEGER);
      return;
    }
    cur = n;
  }
  let res: number | bigint;
  if (typeof cur === 'number' && typeof by === 'number' && (res = cur + by) <= MAX_SAFE && res >= -MAX_SAFE) {
    // exact: both operands and the sum are safe integers
  } else {
    const r = BigInt(cur) + BigInt(by);
    if (r > I64_MAX || r < I64_MIN) {
      out.error(E.OVERFLOW);
      return;
    }
    res = r;
  }
  // Safe results are stored as numbers, the others as their (at most 20) digits.
  const nv = typeof res === 'number' ? res : res.toString();
  const key = e !== undefined ? e.key : argv.key(1);
  if (e !== undefined) db.update(e, nv);
  else db.add(key, nv);
  keyEvent(c, N.STRING, 'incrby', key);
  out.int(res);
}

// INCR key
function incrCommand(c: Client, argv: Argv, out: ReplySink): void {
  incrDecr(c, argv, out, 1);
}

// DECR key
function decrCommand(c: Client, argv: Argv, out: ReplySink): void {
  incrDecr(c, argv, out, -1);
}

// INCRBY key increment
function incrbyCommand(c: Client, argv: Argv, out: ReplySink): void {
  const by = int64Arg(argv, 2);
  if (by === null) out.error(E.NOT_INTEGER);
  else incrDecr(c, argv, out, by);
}

// DECRBY key decrement
function decrbyCommand(c: Client, argv: Argv, out: ReplySink): void {
  const by = int64Arg(argv, 2);
  if (by === null) out.error(E.NOT_INTEGER);
  else if (by === I64_MIN) out.error(ERR_DECR_OVERFLOW); // -LLONG_MIN does not exist
  else incrDecr(c, argv, out, typeof by === 'number' ? 0 - by : -by);
}

// INCRBYFLOAT key increment
function incrbyfloatCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const key = argv.key(1);
  const e = db.get(key);
  let cur = LD_ZERO;
  if (e !== undefined) {
    if (!e.isString) {
      out.error(E.WRONGTYPE);
      return;
    }
    const x = parseLongDouble(e.value as Buffer);
    if (x === null) {
      out.error(E.NOT_FLOAT);
      return;
    }
    cur = x;
  }
  const inc = parseLongDouble(argv.buf, argv.start[2], argv.end[2]);
  if (inc === null) {
    out.error(E.NOT_FLOAT);
    return;
  }
  const sum = ldAdd(cur, inc);
  if (!ldIsFinite(sum)) {
    out.error(E.INCR_NAN);
    return;
  }
  const text = formatHuman(sum);
  const nv = text.length <= SMALL_STRING ? text : Buffer.from(text, 'latin1');
  // Redis stores the result as an embstr without trying the integer encoding (even for "3").
  (e !== undefined ? db.set(key, nv, true) : db.add(key, nv)).markEmbstr();
  keyEvent(c, N.STRING, 'incrbyfloat', key);
  out.bulkLatin1(text);
}

// ------------------------------------------------------------------ LCS

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]
function lcsCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const touch = !c.noTouch;
  const ea = db.read(argv.key(1), touch);
  const eb = db.read(argv.key(2), touch);
  if ((ea !== undefined && !ea.isString) || (eb !== undefined && !eb.isString)) {
    out.error(ERR_LCS_TYPE);
    return;
  }
  const a = ea !== undefined ? (ea.value as Buffer) : EMPTY;
  const b = eb !== undefined ? (eb.value as Buffer) : EMPTY;
  let getIdx = false;
  let getLen = false;
  let withLen = false;
  let minLen = 0;
  const n = argv.count;
  for (let j = 3; j < n; j++) {
    if (opt(argv, j, 'IDX')) getIdx = true;
    else if (opt(argv, j, 'LEN')) getLen = true;
    else if (opt(argv, j, 'WITHMATCHLEN')) withLen = true;
    else if (j < n - 1 && opt(argv, j, 'MINMATCHLEN')) {
      const m = int64Arg(argv, ++j);
      if (m === null) {
        out.error(E.NOT_INTEGER);
        return;
      }
      minLen = typeof m === 'bigint' ? (m < 0n ? 0 : Infinity) : m < 0 ? 0 : m;
    } else {
      out.error(E.SYNTAX);
      return;
    }
  }
  if (getIdx && getLen) {
    out.error(ERR_LCS_IDX_LEN);
    return;
  }
  const alen = a.length;
  const blen = b.length;
  if (alen >= 0xfffffffe || blen >= 0xfffffffe) {
    out.error(ERR_LCS_TOO_LONG);
    return;
  }
  // Redis's limit on its (alen+1)*(blen+1) table of uint32.
  const cells = (alen + 1) * (blen + 1);
  if (cells * 4 > maxBulk(c)) {
    out.error(ERR_LCS_MEM_LIMIT);
    return;
  }
  const w = blen + 1;
  if (getLen && !getIdx) { // the length alone needs two rows of the table
    let prev = new Uint32Array(w);
    let cur = new Uint32Array(w);
    for (let i = 1; i <= alen; i++) {
      const ca = a[i - 1];
      for (let j = 1; j <= blen; j++) {
        if (ca === b[j - 1]) cur[j] = prev[j - 1] + 1;
        else cur[j] = prev[j] > cur[j - 1] ? prev[j] : cur[j - 1];
      }
      const t = prev;
      prev = cur;
      cur = t;
    }
    out.int(prev[blen]);
    return;
  }
  let t: Uint32Array;
  try {
    t = new Uint32Array(cells);
  } catch {
    out.error(ERR_LCS_MEM_FAIL);
    return;
  }
  for (let i = 1; i <= alen; i++) {
    const ca = a[i - 1];
    const row = i * w;
    const up = row - w;
    for (let j = 1; j <= blen; j++) {
      if (ca === b[j - 1]) t[row + j] = t[up + j - 1] + 1;
      else {
        const l1 = t[up + j];
        const l2 = t[row + j - 1];
        t[row + j] = l1 > l2 ? l1 : l2;
      }
    }
  }
  const total = t[alen * w + blen];
  let idx = total;
  const result = getIdx ? null : Buffer.allocUnsafe(total);
  // Walk back from the end as Redis does, emitting each run of matches (ranges in a and b).
  const ranges: number[] = [];
  let aStart = alen; // alen: no range in progress
  let aEnd = 0;
  let bStart = 0;
  let bEnd = 0;
  let i = alen;
  let j = blen;
  while (i > 0 && j > 0) {
    let emit = false;
    if (a[i - 1] === b[j - 1]) {
      if (result !== null) result[idx - 1] = a[i - 1];
      if (aStart === alen) {
        aStart = aEnd = i - 1;
        bStart = bEnd = j - 1;
      } else if (aStart === i && bStart === j) {
        aStart--;
        bStart--;
      } else {
        emit = true;
      }
      if (aStart === 0 || bStart === 0) emit = true;
      idx--;
      i--;
      j--;
    } else {
      if (t[(i - 1) * w + j] > t[i * w + j - 1]) i--;
      else j--;
      if (aStart !== alen) emit = true;
    }
    if (emit) {
      const matchLen = aEnd - aStart + 1;
      if (getIdx && (minLen === 0 || matchLen >= minLen)) ranges.push(aStart, aEnd, bStart, bEnd, matchLen);
      aStart = alen;
    }
  }
  if (result !== null) {
    out.bulk(result);
    return;
  }
  out.map(2);
  out.bulkText('matches');
  const k = ranges.length / 5;
  out.array(k);
  for (let r = 0; r < ranges.length; r += 5) {
    out.array(withLen ? 3 : 2);
    out.array(2);
    out.int(ranges[r]);
    out.int(ranges[r + 1]);
    out.array(2);
    out.int(ranges[r + 2]);
    out.int(ranges[r + 3]);
    if (withLen) out.int(ranges[r + 4]);
  }
  out.bulkText('len');
  out.int(total);
}

/** Redis's setGetKeys: with GET the key is read too (RW access update), else overwritten. */
function setKeys(argv: Argv): KeyRef[] {
  for (let i = 3; i < argv.count; i++) {
    if (argv.is(i, 'GET')) return [{ pos: 1, flags: KF.RW | KF.ACCESS | KF.UPDATE }];
  }
  return [{ pos: 1, flags: KF.OW | KF.UPDATE }];
}

export default family('string', ['string'], [
  //   name          arity  flags                             keys        handler
  row('get',            2,  F.READONLY | F.FAST,              [1, 1, 1],  getCommand),
  row('set',           -3,  F.WRITE | F.DENYOOM,              [1, 1, 1],  setCommand, { getKeys: setKeys }),
  row('setnx',          3,  F.WRITE | F.DENYOOM | F.FAST,     [1, 1, 1],  setnxCommand),
  row('setex',          4,  F.WRITE | F.DENYOOM,              [1, 1, 1],  setexCommand),
  row('psetex',         4,  F.WRITE | F.DENYOOM,              [1, 1, 1],  psetexCommand),
  row('getset',         3,  F.WRITE | F.DENYOOM | F.FAST,     [1, 1, 1],  getsetCommand),
  row('getdel',         2,  F.WRITE | F.FAST,                 [1, 1, 1],  getdelCommand),
  row('getex',         -2,  F.WRITE | F.FAST,                 [1, 1, 1],  getexCommand),
  row('mget',          -2,  F.READONLY | F.FAST,              [1, -1, 1], mgetCommand),
  row('mset',          -3,  F.WRITE | F.DENYOOM,              [1, -1, 2], msetCommand),
  row('msetnx',        -3,  F.WRITE | F.DENYOOM,              [1, -1, 2], msetnxCommand),
  row('append',         3,  F.WRITE | F.DENYOOM | F.FAST,     [1, 1, 1],  appendCommand),
  row('strlen',         2,  F.READONLY | F.FAST,              [1, 1, 1],  strlenCommand),
  row('getrange',       4,  F.READONLY,                       [1, 1, 1],  getrangeCommand),
  row('substr',         4,  F.READONLY,                       [1, 1, 1],  getrangeCommand),
  row('setrange',       4,  F.WRITE | F.DENYOOM,              [1, 1, 1],  setrangeCommand),
  row('incr',           2,  F.WRITE | F.DENYOOM | F.FAST,     [1, 1, 1],  incrCommand),
  row('decr',           2,  F.WRITE | F.DENYOOM | F.FAST,     [1, 1, 1],  decrCommand),
  row('incrby',         3,  F.WRITE | F.DENYOOM | F.FAST,     [1, 1, 1],  incrbyCommand),
  row('decrby',         3,  F.WRITE | F.DENYOOM | F.FAST,     [1, 1, 1],  decrbyCommand),
  row('incrbyfloat',    3,  F.WRITE | F.DENYOOM | F.FAST,     [1, 1, 1],  incrbyfloatCommand),
  row('lcs',           -3,  F.READONLY,                       [1, 2, 1],  lcsCommand),
]);
