/**
 * Hash commands (Redis's t_hash.c): HSET HSETNX HGET HMGET HMSET HDEL HEXISTS HLEN HSTRLEN
 * HKEYS HVALS HGETALL HINCRBY HINCRBYFLOAT HRANDFIELD HSCAN, and the field-expiry commands of
 * Redis 7.4/8.0 that Upstash offers: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL
 * HEXPIRETIME HPEXPIRETIME HPERSIST HGETDEL HGETEX HSETEX.
 *
 * Field expiry is lazy and active, as in Redis: every lookup first deletes the fields whose
 * time has passed (and the key when that empties it), and a background sweep does the same
 * for hashes nobody touches (trackVolatile / sweepFields in ds/hash.ts).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, wrongArity } from '../../resp/errors.js';
import { parseInt64, parseSafeInt } from '../../resp/ascii.js';

/** Bytes of a short stored value, for the byte parsers (no Buffer per HINCRBY). */
const intScratch = new Uint8Array(21);

/** string2ll over a latin1 string (a stored hash value). */
/** string2ll of a field value within ±2^53; NaN when invalid or outside. */
function parseSafeIntStr(s: string): number {
  const n = s.length;
  if (n > 20) return NaN;
  for (let i = 0; i < n; i++) intScratch[i] = s.charCodeAt(i);
  return parseSafeInt(intScratch, 0, n);
}

function parseInt64Str(s: string): bigint | null {
  const n = s.length;
  if (n > 20) return null;
  for (let i = 0; i < n; i++) intScratch[i] = s.charCodeAt(i);
  return parseInt64(intScratch, 0, n);
}
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { N, keyEvent } from '../notify.js';
import { globMatch } from '../glob.js';
import { HashValue, trackVolatile, type HashLimits } from '../ds/hash.js';
import { pickIndexes } from '../ds/set.js';
import { INVALID_CURSOR, parseCursor, parseScanOptions } from '../ds/scan.js';
import { LD_ZERO, formatHuman, ldAdd, ldIsFinite, parseLongDouble } from '../ds/long-double.js';
import {
  LONG_MAX, hashLimits, isLongMin, longArg, lookupWrite, lookupWriteArg, outputExhausted, rangeError,
} from './typed-helpers.js';
import { cstr } from '../../bytes.js';
import { lpsNext } from '../ds/listpack.js';
import { replyElem } from '../ds/list-flat.js';

const NOT_INTEGER_VALUE = 'ERR hash value is not an integer';
const NOT_FLOAT_VALUE = 'ERR hash value is not a float';
const NAN_OR_INF = 'ERR value is NaN or Infinity';
const WOULD_BE_NAN_OR_INF = 'ERR increment would produce NaN or Infinity';
const OUT_OF_RANGE = 'ERR value is out of range';
const FIELDS_MISSING = 'ERR Mandatory argument FIELDS is missing or not at the right position';
const NUMFIELDS_POSITIVE = 'ERR Number of fields must be a positive integer';
const NUMFIELDS_HEXPIRE = 'ERR Parameter `numFields` should be greater than 0';
const NUMFIELDS_MISMATCH = 'ERR The `numfields` parameter must match the number of arguments';
const EXPIRE_NEGATIVE = 'ERR invalid expire time, must be >= 0';
const INVALID_NUMFIELDS = 'ERR invalid number of fields';
const MISSING_EXPIRE = 'ERR missing expire time';
const ONE_OF_FXX_FNX = 'ERR Only one of FXX or FNX arguments can be specified';
const ONE_OF_EXPIRY = 'ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified';

/** HFE_MAX_ABS_TIME_MSEC: field expiry times are limited to 2^46 - 1 ms. */
const HFE_MAX_MS = 70368744177663;

// ---------------------------------------------------------------- lookups

/**
 * The hash at `key` after lazy field expiry: undefined when missing (or emptied by expiry),
 * null when the key holds another type.
 */
function expireFields(c: Client, key: string, h: HashValue): HashValue | undefined {
  if (!h.volatile) return h;
  if (h.mayExpire(c.engine.now)) {
    // A read command changes the hash here: an RDB snapshot being produced saves it first.
    const e = c.db.map.get(key);
    if (e !== undefined) c.db.aboutToChange(e);
  }
  if (h.purgeExpired(c.engine.now) > 0) {
    keyEvent(c, N.HASH, 'hexpired', key);
    if (h.size === 0) {
      c.db.delete(key);
      keyEvent(c, N.GENERIC, 'del', key);
      return undefined;
    }
    c.db.modified(key);
  }
  trackVolatile(c.db, key, h);
  return h;
}

/**
 * The hash at the key argv[i] for reading (lookupRead), found from the key's bytes (perf: the
 * key's string is made only when the hash has field TTLs to expire).
 */
function readHash(c: Client, argv: Argv, i: number): HashValue | undefined | null {
  const e = c.db.readArg(argv, i, !c.noTouch);
  if (e === undefined) return undefined;
  const h = e.value;
  if (!(h instanceof HashValue)) return null;
  return h.volatile ? expireFields(c, argv.key(i), h) : h;
}

function writeHash(c: Client, key: string): HashValue | undefined | null {
  const e = lookupWrite(c, key);
  if (e === undefined) return undefined;
  if (!(e.value instanceof HashValue)) return null;
  return expireFields(c, key, e.value);
}

/** After a change: delete the key if the hash is now empty, else signal the modification. */
function touched(c: Client, key: string, h: HashValue): void {
  if (h.size === 0) c.db.delete(key);
  else c.db.modified(key);
  if (h.size === 0) keyEvent(c, N.GENERIC, 'del', key);
}

// ---------------------------------------------------------------- basic commands

// HSET key field value [field value ...]   /   HMSET key field value [field value ...]
function hsetGeneric(c: Client, argv: Argv, out: ReplySink, name: string): void {
  if ((argv.count & 1) === 1) {
    out.error(wrongArity(name));
    return;
  }
  const e = lookupWriteArg(c, argv, 1);
  const key = e !== undefined ? e.key : argv.key(1);
  let h = e === undefined ? undefined : e.value instanceof HashValue ? expireFields(c, key, e.value) : null;
  if (h === null) {
    out.error(E.WRONGTYPE);
    return;
  }
  const lim = hashLimits(c.engine);
  const isNew = h === undefined;
  if (h === undefined) h = new HashValue();
  h.convertForCount((argv.count - 2) / 2, lim);
  let bytes = 0;
  for (let i = 2; i < argv.count; i++) {
    h.convertForLength(argv.len(i), lim);
    bytes += argv.len(i) + 1;
  }
  // A new hashtable hash: one arena for these fields and a few more (a BullMQ job's).
  if (isNew && h.table !== null) h.table.reserveBytes(bytes);
  let created = 0;
  if (argv.count > 4 && h.appendArgs(argv, 2, lim)) {
    created = (argv.count - 2) / 2;
  } else {
    for (let i = 2; i < argv.count; i += 2) {
      if (h.setArg(argv, i, lim)) created++;
    }
  }
  if (isNew) c.db.add(key, h);
  else c.db.modified(key, e);
  keyEvent(c, N.HASH, 'hset', key);
  if (name === 'hset') out.int(created);
  else out.ok();
}

function hsetCommand(c: Client, argv: Argv, out: ReplySink): void {
  hsetGeneric(c, argv, out, 'hset');
}

function hmsetCommand(c: Client, argv: Argv, out: ReplySink): void {
  hsetGeneric(c, argv, out, 'hmset');
}

// HSETNX key field value
function hsetnxCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  let h = writeHash(c, key);
  if (h === null) {
    out.error(E.WRONGTYPE);
    return;
  }
  const f = argv.key(2);
  if (h !== undefined && h.has(f)) {
    out.int(0);
    return;
  }
  const lim = hashLimits(c.engine);
  const isNew = h === undefined;
  if (h === undefined) h = new HashValue();
  h.convertForLength(argv.len(2), lim);
  h.convertForLength(argv.len(3), lim);
  h.set(f, argv.key(3), lim);
  if (isNew) c.db.add(key, h);
  else c.db.modified(key);
  keyEvent(c, N.HASH, 'hset', key);
  out.int(1);
}

// HGET key field
function hgetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  const lp = h === undefined ? null : h.listpackBytes;
  if (lp !== null) {
    // perf: the value written from the listpack's bytes (no string for it).
    const p = h!.findFlatArg(argv, 2);
    if (p < 0) out.nil();
    else replyElem(out, lp, lpsNext(lp, p));
    return;
  }
  if (h !== undefined && h.replyArg(argv, 2, out)) return;
  const v = h === undefined ? undefined : h.get(argv.key(2));
  if (v === undefined) out.nil();
  else out.bulkLatin1(v);
}

// HMGET key field [field ...]
function hmgetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  out.array(argv.count - 2);
  const lp = h === undefined ? null : h.listpackBytes;
  if (lp !== null) {
    // perf: values written from the listpack's bytes, as HGET.
    for (let i = 2; i < argv.count; i++) {
      const p = h!.findFlatArg(argv, i);
      if (p < 0) out.nil();
      else replyElem(out, lp, lpsNext(lp, p));
    }
    return;
  }
  for (let i = 2; i < argv.count; i++) {
    if (h !== undefined && h.replyArg(argv, i, out)) continue;
    const v = h === undefined ? undefined : h.get(argv.key(i));
    if (v === undefined) out.nil();
    else out.bulkLatin1(v);
  }
}

// HDEL key field [field ...]
function hdelCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const h = writeHash(c, key);
  if (h === null) return out.error(E.WRONGTYPE);
  if (h === undefined) return out.int(0);
  let deleted = 0;
  for (let i = 2; i < argv.count; i++) {
    if (h.delete(argv.key(i))) {
      deleted++;
      if (h.size === 0) break;
    }
  }
  if (deleted > 0) {
    keyEvent(c, N.HASH, 'hdel', key);
    touched(c, key, h);
  }
  out.int(deleted);
}

// HLEN key
function hlenCommand(c: Client, argv: Argv, out: ReplySink): void {
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  out.int(h === undefined ? 0 : h.size);
}

// HSTRLEN key field
function hstrlenCommand(c: Client, argv: Argv, out: ReplySink): void {
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  const v = h === undefined ? undefined : h.get(argv.key(2));
  out.int(v === undefined ? 0 : v.length);
}

// HEXISTS key field
function hexistsCommand(c: Client, argv: Argv, out: ReplySink): void {
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  out.int(h !== undefined && h.has(argv.key(2)) ? 1 : 0);
}

const KEYS = 1;
const VALUES = 2;

function hgetallGeneric(c: Client, argv: Argv, out: ReplySink, what: number): void {
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  if (what === (KEYS | VALUES)) {
    // HGETALL: a map (RESP3), field/value pairs flat (RESP2).
    if (h === undefined) return out.map(0);
    out.map(h.size);
  } else {
    if (h === undefined) return out.array(0);
    out.array(h.size);
  }
  const lp = h.listpackBytes;
  if (lp !== null) {
    // perf: entries written from the listpack's bytes (no string per field and value).
    const end = lp.length - 1;
    for (let p = 6; p < end;) {
      if (what & KEYS) p = replyElem(out, lp, p);
      else p = lpsNext(lp, p);
      if (what & VALUES) p = replyElem(out, lp, p);
      else p = lpsNext(lp, p);
    }
    return;
  }
  if (h.replyAll(out, (what & KEYS) !== 0, (what & VALUES) !== 0)) return;
  h.forEach((v, f) => {
    if (what & KEYS) out.bulkLatin1(f);
    if (what & VALUES) out.bulkLatin1(v);
  });
}

// HKEYS key
function hkeysCommand(c: Client, argv: Argv, out: ReplySink): void {
  hgetallGeneric(c, argv, out, KEYS);
}

// HVALS key
function hvalsCommand(c: Client, argv: Argv, out: ReplySink): void {
  hgetallGeneric(c, argv, out, VALUES);
}

// HGETALL key
function hgetallCommand(c: Client, argv: Argv, out: ReplySink): void {
  hgetallGeneric(c, argv, out, KEYS | VALUES);
}

// HINCRBY key field increment
function hincrbyCommand(c: Client, argv: Argv, out: ReplySink): void {
  const by = argv.int(3);
  const big = by === by ? null : argv.int64(3);
  if (by !== by && big === null) return out.error(E.NOT_INTEGER);
  // perf: the key found from its bytes (writeHash() of the entry's own key string).
  const e = lookupWriteArg(c, argv, 1);
  const key = e !== undefined ? e.key : argv.key(1);
  const h = e === undefined ? undefined : e.value instanceof HashValue ? expireFields(c, key, e.value) : null;
  if (h === null) return out.error(E.WRONGTYPE);
  const f = argv.key(2);
  if (big === null && h !== undefined && h.listpackBytes !== null) {
    // perf: an integer value of a listpack hash edited in place (no string, no BigInt).
    const sum = h.incrFlat(f, by, hashLimits(c.engine));
    if (sum !== null) {
      c.db.modified(key, e);
      keyEvent(c, N.HASH, 'hincrby', key);
      return out.int(sum);
    }
  }
  const old = h === undefined ? undefined : h.get(f);
  if (big === null) {
    // perf: a value and a sum within ±2^53 (BullMQ's attempt counters) as numbers, no BigInt;
    // an invalid or larger value takes the exact path below.
    const sum = (old === undefined ? 0 : parseSafeIntStr(old)) + by;
    if (Number.isSafeInteger(sum)) {
      storeIncr(c, key, h, f, String(sum));
      return out.int(sum);
    }
  }
  const incr = big ?? BigInt(by);
  let cur = 0n;
  if (old !== undefined) {
    const v = parseInt64Str(old);
    if (v === null) return out.error(NOT_INTEGER_VALUE);
    cur = v;
  }
  const sum = cur + incr;
  if (sum > LONG_MAX || sum < -LONG_MAX - 1n) return out.error(E.OVERFLOW);
  storeIncr(c, key, h, f, sum.toString());
  out.int(sum >= -9007199254740991n && sum <= 9007199254740991n ? Number(sum) : sum);
}

/** HINCRBY's write of the new value (the hash created if `h` is undefined). */
function storeIncr(c: Client, key: string, h: HashValue | undefined, f: string, v: string): void {
  const isNew = h === undefined;
  if (h === undefined) h = new HashValue();
  h.set(f, v, hashLimits(c.engine), true);
  if (isNew) c.db.add(key, h);
  else c.db.modified(key);
  keyEvent(c, N.HASH, 'hincrby', key);
}

// HINCRBYFLOAT key field increment
function hincrbyfloatCommand(c: Client, argv: Argv, out: ReplySink): void {
  const incr = parseLongDouble(argv.view(3));
  if (incr === null) return out.error(E.NOT_FLOAT);
  if (!ldIsFinite(incr)) return out.error(NAN_OR_INF);
  const key = argv.key(1);
  let h = writeHash(c, key);
  if (h === null) return out.error(E.WRONGTYPE);
  const f = argv.key(2);
  let cur = LD_ZERO;
  const old = h === undefined ? undefined : h.get(f);
  if (old !== undefined) {
    const v = parseLongDouble(Buffer.from(old, 'latin1'));
    if (v === null) return out.error(NOT_FLOAT_VALUE);
    cur = v;
  }
  const sum = ldAdd(cur, incr);
  if (!ldIsFinite(sum)) return out.error(WOULD_BE_NAN_OR_INF);
  const text = formatHuman(sum);
  const lim = hashLimits(c.engine);
  const isNew = h === undefined;
  if (h === undefined) h = new HashValue();
  h.set(f, text, lim, true);
  if (isNew) c.db.add(key, h);
  else c.db.modified(key);
  keyEvent(c, N.HASH, 'hincrbyfloat', key);
  out.bulkLatin1(text);
}

// HRANDFIELD key [count [WITHVALUES]]
function hrandfieldCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count >= 3) {
    const l = longArg(argv, 2);
    if (l !== l) return out.error(E.NOT_INTEGER);
    if (isLongMin(argv, 2)) return out.error(rangeError('-9223372036854775807', '9223372036854775807'));
    let withValues = false;
    if (argv.count > 4 || (argv.count === 4 && !argv.is(3, 'WITHVALUES'))) return out.error(E.SYNTAX);
    if (argv.count === 4) {
      withValues = true;
      const big = argv.int64(2)!;
      if (big < -(LONG_MAX / 2n) || big > LONG_MAX / 2n) return out.error(OUT_OF_RANGE);
    }
    hrandfieldWithCount(c, argv, out, l, withValues);
    return;
  }
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  if (h === undefined) return out.nil();
  out.bulkLatin1(h.randomField());
}

/** HRANDFIELD's reply header: n fields, or n (field, value) tuples. */
function header(out: ReplySink, n: number, withValues: boolean): void {
  if (withValues) out.pairs(n);
  else out.array(n);
}

function hrandfieldWithCount(c: Client, argv: Argv, out: ReplySink, l: number, withValues: boolean): void {
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  if (h === undefined || l === 0) return out.array(0);
  const size = h.size;
  // Negative count (or 1): independent draws, repetitions allowed.
  if (l < 0 || l === 1) {
    const count = l < 0 ? -l : 1;
    header(out, count, withValues);
    const table = h.table;
    const pairs = table === null ? h.pairs() : null;
    for (let i = 0; i < count; i++) {
      let f: string;
      if (table !== null) {
        const k = table.randomIndex();
        f = table.keyAt(k);
        if (withValues) out.pair();
        out.bulkLatin1(f);
        if (withValues) out.bulkLatin1(table.valAt(k));
      } else {
        const k = 2 * Math.floor(Math.random() * size);
        if (withValues) out.pair();
        out.bulkLatin1(pairs![k]);
        if (withValues) out.bulkLatin1(pairs![k + 1]);
      }
      if ((i & 4095) === 4095 && outputExhausted(c, i)) return;
    }
    return;
  }
  // Whole hash, in its order.
  if (l >= size) {
    header(out, size, withValues);
    h.forEach((v, f) => {
      if (withValues) out.pair();
      out.bulkLatin1(f);
      if (withValues) out.bulkLatin1(v);
    });
    return;
  }
  // Distinct fields: hashtables in random order, listpacks in listpack order (Redis samples
  // them in one ordered pass).
  const picked = pickIndexes(size, l);
  header(out, l, withValues);
  const table = h.table;
  if (table !== null) {
    for (let i = 0; i < l; i++) {
      if (withValues) out.pair();
      out.bulkLatin1(table.keyAt(picked[i]));
      if (withValues) out.bulkLatin1(table.valAt(picked[i]));
    }
    return;
  }
  const pairs = h.pairs();
  picked.sort((a, b) => a - b);
  for (let i = 0; i < l; i++) {
    if (withValues) out.pair();
    out.bulkLatin1(pairs[2 * picked[i]]);
    if (withValues) out.bulkLatin1(pairs[2 * picked[i] + 1]);
  }
}

// HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]
function hscanCommand(c: Client, argv: Argv, out: ReplySink): void {
  const cursor = parseCursor(argv, 2);
  if (cursor < 0) return out.error(INVALID_CURSOR);
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  if (h === undefined) {
    out.array(2);
    out.bulkLatin1('0');
    out.array(0);
    return;
  }
  const opts = parseScanOptions(argv, 3, true);
  if (typeof opts === 'string') return out.error(opts);
  const fields: string[] = [];
  const values: string[] = [];
  const pat = opts.pattern;
  const keep = (f: string, v: string) => {
    if (pat !== null && !globMatch(pat, Buffer.from(f, 'latin1'))) return;
    fields.push(f);
    values.push(v);
  };
  let next = 0;
  const table = h.table;
  if (table === null) {
    h.forEach((v, f) => keep(f, v));
  } else {
    next = table.scan(cursor, opts.count, (i) => keep(table.keyAt(i), table.valAt(i)));
  }
  out.array(2);
  out.bulkLatin1(String(next));
  out.array(opts.novalues ? fields.length : fields.length * 2);
  for (let i = 0; i < fields.length; i++) {
    out.bulkLatin1(fields[i]);
    if (!opts.novalues) out.bulkLatin1(values[i]);
  }
}

// ---------------------------------------------------------------- field expiry (7.4 / 8.0)

/**
 * parseExpireTime: an expiry argument in `unit` ms (1000 for seconds) relative to `base` (0 for
 * the *AT forms). Returns the absolute time in ms or an error text.
 */
function expireArg(argv: Argv, i: number, unit: number, base: number, cmd: string): number | string {
  const v = argv.int64(i);
  if (v === null) return E.NOT_INTEGER;
  if (v < 0n) return EXPIRE_NEGATIVE;
  let ms = Number(v);
  if (unit === 1000) {
    if (v > BigInt(Math.floor(HFE_MAX_MS / 1000))) return E.INVALID_EXPIRE(cmd);
    ms *= 1000;
  }
  if (ms > HFE_MAX_MS - base) return E.INVALID_EXPIRE(cmd);
  return ms + base;
}

/**
 * "FIELDS numfields field..." at argument `at`: the number of fields, or an error text.
 * `positive` is the message for a count below 1.
 */
function fieldsBlock(argv: Argv, at: number, positive: string): number | string {
  if (at >= argv.count || !argv.is(at - 1, 'FIELDS')) return FIELDS_MISSING;
  const n = argv.int64(at);
  if (n === null || n < 1n) return positive;
  if (n !== BigInt(argv.count - at - 1)) return NUMFIELDS_MISMATCH;
  return Number(n);
}

const COND_NX = 1;
const COND_XX = 2;
const COND_GT = 4;
const COND_LT = 8;

/** HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT: key time [NX|XX|GT|LT] FIELDS numfields field... */
function hexpireGeneric(c: Client, argv: Argv, out: ReplySink, unit: number, relative: boolean, cmd: string): void {
  const key = argv.key(1);
  const h = writeHash(c, key);
  if (h === null) return out.error(E.WRONGTYPE);
  const now = c.engine.now;
  const at = expireArg(argv, 2, unit, relative ? now : 0, cmd);
  if (typeof at === 'string') return out.error(at);
  let cond = 0;
  let numAt = 4;
  if (argv.is(3, 'NX')) cond = COND_NX;
  else if (argv.is(3, 'XX')) cond = COND_XX;
  else if (argv.is(3, 'GT')) cond = COND_GT;
  else if (argv.is(3, 'LT')) cond = COND_LT;
  if (cond !== 0) numAt++;
  const n = fieldsBlock(argv, numAt, NUMFIELDS_HEXPIRE);
  if (typeof n === 'string') return out.error(n);
  out.array(n);
  if (h === undefined) {
    for (let i = 0; i < n; i++) out.int(-2);
    return;
  }
  h.markFieldExpiry();
  let changed = 0;
  let deleted = 0;
  for (let i = numAt + 1; i < argv.count; i++) {
    const f = argv.key(i);
    if (!h.has(f)) {
      out.int(-2);
      continue;
    }
    const prev = h.fieldExpire(f);
    if (prev === 0) {
      // A field without TTL counts as "infinite": GT and XX fail, LT and NX pass.
      if (cond & (COND_XX | COND_GT)) {
        out.int(0);
        continue;
      }
    } else if ((cond === COND_GT && prev >= at) || (cond === COND_LT && prev <= at) || cond === COND_NX) {
      out.int(0);
      continue;
    }
    changed++;
    if (at <= now) {
      h.delete(f);
      deleted++;
      out.int(2);
    } else {
      h.setFieldExpire(f, at);
      out.int(1);
    }
  }
  if (changed > 0) {
    keyEvent(c, N.HASH, deleted > 0 ? 'hdel' : 'hexpire', key);
    touched(c, key, h);
    trackVolatile(c.db, key, h);
  }
}

function hexpireCommand(c: Client, argv: Argv, out: ReplySink): void {
  hexpireGeneric(c, argv, out, 1000, true, 'hexpire');
}
function hpexpireCommand(c: Client, argv: Argv, out: ReplySink): void {
  hexpireGeneric(c, argv, out, 1, true, 'hpexpire');
}
function hexpireatCommand(c: Client, argv: Argv, out: ReplySink): void {
  hexpireGeneric(c, argv, out, 1000, false, 'hexpireat');
}
function hpexpireatCommand(c: Client, argv: Argv, out: ReplySink): void {
  hexpireGeneric(c, argv, out, 1, false, 'hpexpireat');
}

const TTL_SECONDS = 0;
const TTL_MS = 1;
const TIME_SECONDS = 2;
const TIME_MS = 3;

/** HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME: key FIELDS numfields field... */
function httlGeneric(c: Client, argv: Argv, out: ReplySink, mode: number): void {
  const h = readHash(c, argv, 1);
  if (h === null) return out.error(E.WRONGTYPE);
  const n = fieldsBlock(argv, 3, NUMFIELDS_POSITIVE);
  if (typeof n === 'string') return out.error(n);
  out.array(n);
  const now = c.engine.now;
  for (let i = 4; i < argv.count; i++) {
    const f = argv.key(i);
    if (h === undefined || !h.has(f)) {
      out.int(-2);
      continue;
    }
    const at = h.fieldExpire(f);
    if (at === 0) {
      out.int(-1);
      continue;
    }
    // Listpacks treat a field expiring this very millisecond as gone; hashtables do not.
    if (at < now || (at === now && h.isListpack)) {
      out.int(-2);
      continue;
    }
    if (mode === TTL_SECONDS) out.int(Math.floor((at + 999 - now) / 1000));
    else if (mode === TTL_MS) out.int(at - now);
    else if (mode === TIME_SECONDS) out.int(Math.floor((at + 999) / 1000));
    else out.int(at);
  }
}

function httlCommand(c: Client, argv: Argv, out: ReplySink): void {
  httlGeneric(c, argv, out, TTL_SECONDS);
}
function hpttlCommand(c: Client, argv: Argv, out: ReplySink): void {
  httlGeneric(c, argv, out, TTL_MS);
}
function hexpiretimeCommand(c: Client, argv: Argv, out: ReplySink): void {
  httlGeneric(c, argv, out, TIME_SECONDS);
}
function hpexpiretimeCommand(c: Client, argv: Argv, out: ReplySink): void {
  httlGeneric(c, argv, out, TIME_MS);
}

// HPERSIST key FIELDS numfields field [field ...]
function hpersistCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const h = writeHash(c, key);
  if (h === null) return out.error(E.WRONGTYPE);
  const n = fieldsBlock(argv, 3, NUMFIELDS_POSITIVE);
  if (typeof n === 'string') return out.error(n);
  out.array(n);
  let changed = 0;
  for (let i = 4; i < argv.count; i++) {
    const f = argv.key(i);
    if (h === undefined || !h.has(f)) out.int(-2);
    else if (h.persistField(f)) {
      changed++;
      out.int(1);
    } else {
      out.int(-1);
    }
  }
  if (changed > 0) {
    c.db.modified(key);
    keyEvent(c, N.HASH, 'hpersist', key);
  }
}

// HGETDEL key FIELDS numfields field [field ...]
function hgetdelCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const h = writeHash(c, key);
  if (h === null) return out.error(E.WRONGTYPE);
  const n = fieldsBlock(argv, 3, NUMFIELDS_POSITIVE);
  if (typeof n === 'string') return out.error(n);
  out.array(n);
  let deleted = 0;
  for (let i = 4; i < argv.count; i++) {
    const f = argv.key(i);
    const v = h === undefined ? undefined : h.get(f);
    if (v === undefined) {
      out.nil();
      continue;
    }
    out.bulkLatin1(v);
    h!.delete(f);
    deleted++;
  }
  if (deleted > 0) {
    keyEvent(c, N.HASH, 'hgetdel', key);
    touched(c, key, h!);
  }
}

// HGETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST] FIELDS numfields field [field ...]
function hgetexCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const h = writeHash(c, key);
  if (h === null) return out.error(E.WRONGTYPE);
  const now = c.engine.now;
  let numAt = 3;
  let at = 0;
  let persist = false;
  let expire = false;
  const unit = argv.is(2, 'EX') || argv.is(2, 'EXAT') ? 1000 : argv.is(2, 'PX') || argv.is(2, 'PXAT') ? 1 : 0;
  if (unit !== 0) {
    const relative = argv.is(2, 'EX') || argv.is(2, 'PX');
    const t = expireArg(argv, 3, unit, relative ? now : 0, 'hgetex');
    if (typeof t === 'string') return out.error(t);
    at = t;
    expire = true;
    numAt += 2;
  } else if (argv.is(2, 'PERSIST')) {
    persist = true;
    numAt += 1;
  }
  if (numAt >= argv.count) return out.error(wrongArity('hgetex'));
  const n = fieldsBlock(argv, numAt, NUMFIELDS_POSITIVE);
  if (typeof n === 'string') return out.error(n);
  out.array(n);
  if (h === undefined) {
    for (let i = 0; i < n; i++) out.nil();
    return;
  }
  if (expire || persist) h.markFieldExpiry();
  let changed = 0;
  for (let i = numAt + 1; i < argv.count; i++) {
    const f = argv.key(i);
    const v = h.get(f);
    if (v === undefined) {
      out.nil();
      continue;
    }
    out.bulkLatin1(v);
    if (persist) {
      if (h.persistField(f)) changed++;
    } else if (expire) {
      changed++;
      if (at <= now) h.delete(f);
      else h.setFieldExpire(f, at);
    }
  }
  if (changed > 0) {
    keyEvent(c, N.HASH, persist ? 'hpersist' : at <= now ? 'hdel' : 'hexpire', key);
    touched(c, key, h);
    trackVolatile(c.db, key, h);
  }
}

const SETEX_FNX = 1;
const SETEX_FXX = 2;

// HSETEX key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]
function hsetexCommand(c: Client, argv: Argv, out: ReplySink): void {
  const now = c.engine.now;
  let cond = 0;
  let expiry = false;
  let keepTtl = false;
  let at = 0;
  let first = -1;
  let n = 0;
  for (let i = 2; i < argv.count && first < 0; i++) {
    if (argv.is(i, 'FIELDS')) {
      if (i >= argv.count - 3) return out.error(wrongArity('hsetex'));
      const v = argv.int64(i + 1);
      if (v === null || v < 1n || v > 2147483647n) return out.error(INVALID_NUMFIELDS);
      const remaining = argv.count - i - 2;
      if (remaining % 2 !== 0 || Number(v) !== remaining / 2) return out.error(wrongArity('hsetex'));
      first = i + 2;
      n = Number(v);
    } else if (argv.is(i, 'EX') || argv.is(i, 'PX') || argv.is(i, 'EXAT') || argv.is(i, 'PXAT')) {
      if (expiry || keepTtl) return out.error(ONE_OF_EXPIRY);
      if (i >= argv.count - 1) return out.error(MISSING_EXPIRE);
      const unit = argv.is(i, 'EX') || argv.is(i, 'EXAT') ? 1000 : 1;
      const relative = argv.is(i, 'EX') || argv.is(i, 'PX');
      const t = expireArg(argv, i + 1, unit, relative ? now : 0, 'hsetex');
      if (typeof t === 'string') return out.error(t);
      at = t;
      expiry = true;
      i++;
    } else if (argv.is(i, 'KEEPTTL')) {
      if (expiry || keepTtl) return out.error(ONE_OF_EXPIRY);
      keepTtl = true;
    } else if (argv.is(i, 'FXX') || argv.is(i, 'FNX')) {
      if (cond !== 0) return out.error(ONE_OF_FXX_FNX);
      cond = argv.is(i, 'FXX') ? SETEX_FXX : SETEX_FNX;
    } else {
      return out.error(`ERR unknown argument: ${cstr(argv.key(i))}`);
    }
  }
  const key = argv.key(1);
  let h = writeHash(c, key);
  if (h === null) return out.error(E.WRONGTYPE);
  if (h === undefined && cond === SETEX_FXX) return out.int(0);
  if (h !== undefined && cond !== 0) {
    for (let k = 0; k < n; k++) {
      const exists = h.has(argv.key(first + 2 * k));
      if ((cond === SETEX_FXX && !exists) || (cond === SETEX_FNX && exists)) return out.int(0);
    }
  }
  const lim: HashLimits = hashLimits(c.engine);
  const isNew = h === undefined;
  if (h === undefined) h = new HashValue();
  h.convertForCount(n, lim);
  for (let i = first; i < argv.count; i++) h.convertForLength(argv.len(i), lim);
  if (expiry) h.markFieldExpiry();
  for (let i = first; i < argv.count; i += 2) {
    const f = argv.key(i);
    h.set(f, argv.key(i + 1), lim, expiry || keepTtl);
    if (expiry) {
      if (at <= now) h.delete(f);
      else h.setFieldExpire(f, at);
    }
  }
  if (isNew) {
    if (h.size > 0) c.db.add(key, h);
  } else {
    touched(c, key, h);
  }
  keyEvent(c, N.HASH, 'hset', key);
  if (expiry) keyEvent(c, N.HASH, at <= now ? 'hdel' : 'hexpire', key);
  trackVolatile(c.db, key, h);
  out.int(1);
}

export default family('hash', ['hash'], [
  //   name            arity  flags                            keys        handler
  row('hset',            -4,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hsetCommand),
  row('hsetnx',           4,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hsetnxCommand),
  row('hget',             3,  F.READONLY | F.FAST,             [1, 1, 1],  hgetCommand),
  row('hmset',           -4,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hmsetCommand),
  row('hmget',           -3,  F.READONLY | F.FAST,             [1, 1, 1],  hmgetCommand),
  row('hdel',            -3,  F.WRITE | F.FAST,                [1, 1, 1],  hdelCommand),
  row('hlen',             2,  F.READONLY | F.FAST,             [1, 1, 1],  hlenCommand),
  row('hstrlen',          3,  F.READONLY | F.FAST,             [1, 1, 1],  hstrlenCommand),
  row('hexists',          3,  F.READONLY | F.FAST,             [1, 1, 1],  hexistsCommand),
  row('hkeys',            2,  F.READONLY,                      [1, 1, 1],  hkeysCommand),
  row('hvals',            2,  F.READONLY,                      [1, 1, 1],  hvalsCommand),
  row('hgetall',          2,  F.READONLY,                      [1, 1, 1],  hgetallCommand),
  row('hincrby',          4,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hincrbyCommand),
  row('hincrbyfloat',     4,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hincrbyfloatCommand),
  row('hrandfield',      -2,  F.READONLY,                      [1, 1, 1],  hrandfieldCommand),
  row('hscan',           -3,  F.READONLY,                      [1, 1, 1],  hscanCommand),
  row('hexpire',         -6,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hexpireCommand),
  row('hpexpire',        -6,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hpexpireCommand),
  row('hexpireat',       -6,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hexpireatCommand),
  row('hpexpireat',      -6,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hpexpireatCommand),
  row('httl',            -5,  F.READONLY | F.FAST,             [1, 1, 1],  httlCommand),
  row('hpttl',           -5,  F.READONLY | F.FAST,             [1, 1, 1],  hpttlCommand),
  row('hexpiretime',     -5,  F.READONLY | F.FAST,             [1, 1, 1],  hexpiretimeCommand),
  row('hpexpiretime',    -5,  F.READONLY | F.FAST,             [1, 1, 1],  hpexpiretimeCommand),
  row('hpersist',        -5,  F.WRITE | F.FAST,                [1, 1, 1],  hpersistCommand),
  row('hgetdel',         -5,  F.WRITE | F.FAST,                [1, 1, 1],  hgetdelCommand),
  row('hgetex',          -5,  F.WRITE | F.FAST,                [1, 1, 1],  hgetexCommand),
  row('hsetex',          -6,  F.WRITE | F.DENYOOM | F.FAST,    [1, 1, 1],  hsetexCommand),
]);
