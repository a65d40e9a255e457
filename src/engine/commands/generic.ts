/**
 * Keyspace commands (Redis's "generic" group): DEL UNLINK EXISTS TYPE RENAME RENAMENX COPY MOVE
 * SWAPDB TOUCH KEYS SCAN RANDOMKEY, the TTL family (EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL
 * EXPIRETIME PEXPIRETIME PERSIST) and OBJECT.
 *
 * Lookups follow Redis's flavours: "write" lookups (DEL, RENAME, PERSIST...) use db.get() and
 * leave the hit/miss statistics alone; "read" lookups (EXISTS, TYPE, TTL, OBJECT...) use
 * db.read(), which counts them, and touch the LRU clock only where Redis does (TOUCH).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { parseInt64 } from '../../resp/ascii.js';
import { E, CommandError } from '../../resp/errors.js';
import type { Client } from '../client.js';
import { type Entry, type Stored, type TypedValue, TYPE_NAMES } from '../db.js';
import { F } from '../flags.js';
import { container, family, row } from '../command.js';
import { N, dbEvent, keyEvent } from '../notify.js';
import { lfuCounter } from '../evict.js';
import { globMatch } from '../glob.js';
import { cstr } from '../../bytes.js';

const I64_MAX = 9223372036854775807n;
const I64_MIN = -9223372036854775808n;
const INT_MAX = 2147483647;
/** Redis's OBJ_SHARED_INTEGERS: 0..9999 are shared objects (OBJECT REFCOUNT says INT_MAX). */
const SHARED_INTEGERS = 10000;

/**
 * Redis's getIntFromObjectOrReply: a strict integer within a C int. `msg` replaces both
 * errors when given (SWAPDB), as in Redis.
 */
function intArg(argv: Argv, i: number, msg?: string): number {
  const n = argv.int(i);
  if (Number.isNaN(n) && argv.int64(i) === null) throw new CommandError(msg ?? E.NOT_INTEGER);
  if (Number.isNaN(n) || n > INT_MAX || n < -INT_MAX - 1) {
    throw new CommandError(msg ?? 'ERR value is out of range, value must between -2147483648 and 2147483647');
  }
  return n;
}

/** Keys are latin1 strings; the glob matcher wants bytes: reuse one scratch buffer. */
let scratch = Buffer.allocUnsafe(256);
function keyBytes(key: string): Buffer {
  if (key.length > scratch.length) scratch = Buffer.allocUnsafe(Math.max(key.length, scratch.length * 2));
  const n = scratch.latin1Write(key, 0);
  return scratch.subarray(0, n);
}

// DEL key [key ...]   (UNLINK key [key ...] is the same here: freeing is the GC's job)
function delCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  let n = 0;
  // perf: each key found from its bytes (no key string; BullMQ deletes each job's lock key).
  for (let i = 1; i < argv.count; i++) {
    const e = db.getArg(argv, i);
    if (e !== undefined) {
      db.deleteEntry(e);
      keyEvent(c, N.GENERIC, 'del', e.key);
      n++;
    }
  }
  out.int(n);
}

// EXISTS key [key ...]   (a key named twice counts twice)
function existsCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  let n = 0;
  // perf: each key found from its bytes (no key string; BullMQ runs one EXISTS per job)
  for (let i = 1; i < argv.count; i++) if (db.readArg(argv, i, false) !== undefined) n++;
  out.int(n);
}

// TOUCH key [key ...]   (updates the LRU clock even for CLIENT NO-TOUCH clients, as Redis)
function touchCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  let n = 0;
  for (let i = 1; i < argv.count; i++) if (db.read(argv.key(i), true) !== undefined) n++;
  out.int(n);
}

// TYPE key
function typeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = c.db.read(argv.key(1), false);
  out.simple(e === undefined ? 'none' : TYPE_NAMES[e.type]);
}

// RENAME key newkey
function renameCommand(c: Client, argv: Argv, out: ReplySink): void {
  renameGeneric(c, argv, out, false);
}

// RENAMENX key newkey
function renamenxCommand(c: Client, argv: Argv, out: ReplySink): void {
  renameGeneric(c, argv, out, true);
}

function renameGeneric(c: Client, argv: Argv, out: ReplySink, nx: boolean): void {
  const db = c.db;
  const src = argv.key(1);
  const dst = argv.key(2);
  const e = db.get(src);
  if (e === undefined) {
    out.error(E.NO_KEY);
    return;
  }
  // Same name: nothing to do, but a missing key is still an error (checked above).
  if (src === dst) {
    if (nx) out.int(0);
    else out.ok();
    return;
  }
  const dstExists = db.get(dst) !== undefined;
  if (dstExists && nx) {
    out.int(0);
    return;
  }
  // Client-side caching: Redis invalidates the source first, then the destination.
  const t = c.engine.tracking;
  if (t.live !== 0) t.invalidate(src);
  if (dstExists) db.delete(dst);
  // The value object moves as is: TTL, encoding and LRU clock go with it.
  db.addLike(dst, e.v, e, true); // e.v: a compact string moves as it is, not copied out
  db.delete(src);
  keyEvent(c, N.GENERIC, 'rename_from', src);
  keyEvent(c, N.GENERIC, 'rename_to', dst);
  if (nx) out.int(1);
  else out.ok();
}

// COPY source destination [DB destination-db] [REPLACE]
function copyCommand(c: Client, argv: Argv, out: ReplySink): void {
  const src = c.db;
  let dst = src;
  let replace = false;
  for (let i = 3; i < argv.count; i++) {
    if (argv.is(i, 'REPLACE')) {
      replace = true;
    } else if (argv.is(i, 'DB') && i + 1 < argv.count) {
      const id = intArg(argv, ++i);
      if (id < 0 || id >= c.engine.dbs.length) {
        out.error(E.DB_INDEX);
        return;
      }
      dst = c.engine.dbs[id];
    } else {
      out.error(E.SYNTAX);
      return;
    }
  }
  const key = argv.key(1);
  const newkey = argv.key(2);
  if (src === dst && key === newkey) {
    out.error(E.SAME_OBJECT);
    return;
  }
  const e = src.read(key, !c.noTouch);
  if (e === undefined) {
    out.int(0);
    return;
  }
  if (dst.get(newkey) !== undefined) {
    if (!replace) {
      out.int(0);
      return;
    }
    dst.delete(newkey);
  }
  // A new object: same TTL and encoding, fresh LRU clock (Redis's dupStringObject & co).
  dst.addLike(newkey, cloneValue(e), e, false);
  dbEvent(c.engine, N.GENERIC, 'copy_to', newkey, dst.index);
  out.int(1);
}

/**
 * String values COPY made from a small int: Redis's dupStringObject gives them a fresh,
 * unshared object (OBJECT REFCOUNT 1). Keyed by the Buffer, so the mark follows the value
 * through RENAME/MOVE and is gone once the key is overwritten.
 */
const UNSHARED = new WeakSet<Buffer>();

/** A deep copy for COPY. Strings are immutable (Buffers and compact forms) and can be shared. */
function cloneValue(e: Entry): Stored {
  const v = e.value;
  if (v instanceof Uint8Array) {
    if (stringInt(e, v) === null) {
      // A latin1 string or a number is immutable and shared; a Buffer (past SMALL_STRING) is
      // changed in place by SETRANGE/SETBIT/BITFIELD (ds/strbuf.ts), so each key owns its own.
      const s = e.v;
      return s instanceof Uint8Array ? Buffer.from(s) : s;
    }
    const b = Buffer.from(v);
    UNSHARED.add(b);
    return b;
  }
  const tv = v as TypedValue & { clone?: () => TypedValue };
  if (typeof tv.clone === 'function') return tv.clone();
  return deepClone(tv, new Map()) as TypedValue;
}

/**
 * Structural deep copy that keeps prototypes (class instances), Maps, Sets, arrays, typed
 * arrays and cycles; used for value types that do not provide clone(). Buffers are immutable
 * by contract and shared.
 */
function deepClone(x: unknown, memo: Map<object, unknown>): unknown {
  if (x === null || typeof x !== 'object') return x;
  const o = x as object;
  const done = memo.get(o);
  if (done !== undefined) return done;
  if (Buffer.isBuffer(o)) return o;
  if (ArrayBuffer.isView(o)) {
    const t = (o as unknown as { slice(): unknown }).slice();
    memo.set(o, t);
    return t;
  }
  if (o instanceof Map) {
    const m = new Map();
    memo.set(o, m);
    for (const [k, v] of o) m.set(deepClone(k, memo), deepClone(v, memo));
    return m;
  }
  if (o instanceof Set) {
    const s = new Set();
    memo.set(o, s);
    for (const v of o) s.add(deepClone(v, memo));
    return s;
  }
  if (Array.isArray(o)) {
    const a: unknown[] = new Array(o.length);
    memo.set(o, a);
    for (let i = 0; i < o.length; i++) a[i] = deepClone(o[i], memo);
    return a;
  }
  const copy = Object.create(Object.getPrototypeOf(o));
  memo.set(o, copy);
  for (const k of Reflect.ownKeys(o)) {
    const d = Object.getOwnPropertyDescriptor(o, k)!;
    if ('value' in d) d.value = deepClone(d.value, memo);
    Object.defineProperty(copy, k, d);
  }
  return copy;
}

// MOVE key db
function moveCommand(c: Client, argv: Argv, out: ReplySink): void {
  const id = intArg(argv, 2);
  if (id < 0 || id >= c.engine.dbs.length) {
    out.error(E.DB_INDEX);
    return;
  }
  const src = c.db;
  const dst = c.engine.dbs[id];
  if (src === dst) {
    out.error(E.SAME_OBJECT);
    return;
  }
  const key = argv.key(1);
  const e = src.get(key);
  if (e === undefined || dst.get(key) !== undefined) {
    out.int(0);
    return;
  }
  dst.addLike(key, e.v, e, true);
  src.delete(key);
  keyEvent(c, N.GENERIC, 'move_from', key);
  dbEvent(c.engine, N.GENERIC, 'move_to', key, dst.index);
  out.int(1);
}

// SWAPDB index1 index2
function swapdbCommand(c: Client, argv: Argv, out: ReplySink): void {
  const a = intArg(argv, 1, 'ERR invalid first DB index');
  const b = intArg(argv, 2, 'ERR invalid second DB index');
  const dbs = c.engine.dbs;
  if (a < 0 || a >= dbs.length || b < 0 || b >= dbs.length) {
    out.error(E.DB_INDEX);
    return;
  }
  dbs[a].swapWith(dbs[b]);
  // Clients blocked on keys that now hold values in either database are served after this.
  c.engine.blocking.dbSwapped(a, b);
  c.engine.dirty++;
  out.ok();
}

// KEYS pattern
function keysCommand(c: Client, argv: Argv, out: ReplySink): void {
  const pat = argv.view(1);
  const all = pat.length === 1 && pat[0] === 42; // "*": no matching at all, as Redis
  const now = c.engine.now;
  const keys: string[] = [];
  // Logically expired keys are skipped, not deleted (Redis's keyIsExpired check).
  for (const e of c.db.entries()) {
    if (e.exp !== 0 && e.exp < now) continue;
    if (all || globMatch(pat, keyBytes(e.key))) keys.push(e.key);
  }
  out.array(keys.length);
  for (let i = 0; i < keys.length; i++) out.bulkLatin1(keys[i]);
}

/**
 * Redis's parseScanCursorOrReply: strtoul() rules (optional sign, a negative value wraps
 * modulo 2^64, the empty string is 0), no leading space, nothing after the digits, at most
 * 2^64-1. Our cursors are slot indexes: any value past the table simply ends the walk.
 */
function parseCursor(argv: Argv, i: number): number {
  const b = argv.buf;
  let p = argv.start[i];
  // Redis parses the C string: a NUL byte ends it ("\0" is cursor 0).
  let end = p;
  while (end < argv.end[i] && b[end] !== 0) end++;
  let neg = false;
  if (p < end && (b[p] === 43 || b[p] === 45)) {
    neg = b[p] === 45;
    p++;
  }
  const digits = p;
  while (p < end && b[p] >= 48 && b[p] <= 57) p++;
  // No digits after a sign: strtoul consumed nothing, so the rest (the sign) is left over.
  if (p !== end || (p === digits && digits !== argv.start[i])) return -1;
  if (p === digits) return 0;
  if (p - digits <= 15) {
    const v = Number(b.latin1Slice(digits, end));
    return neg && v !== 0 ? 2 ** 64 - v : v;
  }
  let v = BigInt(b.latin1Slice(digits, end));
  if (v > 0xffffffffffffffffn) return -1;
  if (neg && v !== 0n) v = (1n << 64n) - v;
  return Number(v);
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] [WITHTYPE]
// WITHTYPE is Upstash's: each key is followed by its type name (@upstash/redis scan withType).
function scanCommand(c: Client, argv: Argv, out: ReplySink): void {
  const cursor = parseCursor(argv, 1);
  if (cursor < 0) {
    out.error('ERR invalid cursor');
    return;
  }
  let count = 10;
  let pat: Buffer | null = null;
  let type: string | null = null;
  let withType = false;
  for (let i = 2; i < argv.count; i++) {
    const more = i + 1 < argv.count;
    if (argv.is(i, 'WITHTYPE')) {
      withType = true;
    } else if (argv.is(i, 'COUNT') && more) {
      count = argv.int(++i);
      if (Number.isNaN(count)) {
        // Beyond 2^53 but within a C long is still a (huge) valid count.
        const big = argv.int64(i);
        if (big === null) {
          out.error(E.NOT_INTEGER);
          return;
        }
        count = Number(big);
      }
      if (count < 1) {
        out.error(E.SYNTAX);
        return;
      }
    } else if (argv.is(i, 'MATCH') && more) {
      pat = argv.view(++i);
      if (pat.length === 1 && pat[0] === 42) pat = null; // "*" matches everything
    } else if (argv.is(i, 'TYPE') && more) {
      type = argv.key(++i).toLowerCase();
    } else {
      out.error(E.SYNTAX);
      return;
    }
  }
  const keys: string[] = [];
  const next = c.db.scan(cursor, count, (e: Entry) => {
    if (pat !== null && !globMatch(pat, keyBytes(e.key))) return;
    // Redis compares type names case-insensitively; an unknown name matches nothing.
    if (type !== null && TYPE_NAMES[e.type].toLowerCase() !== type) return;
    keys.push(e.key);
    if (withType) keys.push(TYPE_NAMES[e.type]);
  });
  out.array(2);
  out.bulkLatin1(String(next));
  out.array(keys.length);
  for (let i = 0; i < keys.length; i++) out.bulkLatin1(keys[i]);
}

// RANDOMKEY
function randomkeyCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const key = c.db.randomKey();
  if (key === undefined) out.nil();
  else out.bulkLatin1(key);
}

// ---------------------------------------------------------------- TTL family

const NX = 1;
const XX = 2;
const GT = 4;
const LT = 8;

// EXPIRE key seconds [NX|XX|GT|LT]
function expireCommand(c: Client, argv: Argv, out: ReplySink): void {
  expireGeneric(c, argv, out, c.engine.now, true, 'expire');
}

// PEXPIRE key milliseconds [NX|XX|GT|LT]
function pexpireCommand(c: Client, argv: Argv, out: ReplySink): void {
  expireGeneric(c, argv, out, c.engine.now, false, 'pexpire');
}

// EXPIREAT key unix-time-seconds [NX|XX|GT|LT]
function expireatCommand(c: Client, argv: Argv, out: ReplySink): void {
  expireGeneric(c, argv, out, 0, true, 'expireat');
}

// PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT]
function pexpireatCommand(c: Client, argv: Argv, out: ReplySink): void {
  expireGeneric(c, argv, out, 0, false, 'pexpireat');
}

/** Redis's expireGenericCommand: options, then the number, then the key. */
function expireGeneric(c: Client, argv: Argv, out: ReplySink, base: number, seconds: boolean, name: string): void {
  let flags = 0;
  for (let i = 3; i < argv.count; i++) {
    if (argv.is(i, 'NX')) flags |= NX;
    else if (argv.is(i, 'XX')) flags |= XX;
    else if (argv.is(i, 'GT')) flags |= GT;
    else if (argv.is(i, 'LT')) flags |= LT;
    else {
      out.error(`ERR Unsupported option ${cstr(argv.key(i))}`);
      return;
    }
  }
  if (flags & NX && flags & (XX | GT | LT)) {
    out.error('ERR NX and XX, GT or LT options at the same time are not compatible');
    return;
  }
  if (flags & GT && flags & LT) {
    out.error('ERR GT and LT options at the same time are not compatible');
    return;
  }

  // The absolute time in ms: a JS number while exact, else the signed 64-bit path, with
  // Redis's overflow checks (unit conversion, then adding the base time).
  let when: number | bigint = argv.int(2);
  if (!Number.isNaN(when)) when = (seconds ? when * 1000 : when) + base;
  if (!Number.isSafeInteger(when)) {
    let w = parseInt64(argv.buf, argv.start[2], argv.end[2]);
    if (w === null) {
      out.error(E.NOT_INTEGER);
      return;
    }
    if (seconds) {
      if (w > I64_MAX / 1000n || w < I64_MIN / 1000n) {
        out.error(E.INVALID_EXPIRE(name));
        return;
      }
      w *= 1000n;
    }
    if (w > I64_MAX - BigInt(base)) {
      out.error(E.INVALID_EXPIRE(name));
      return;
    }
    w += BigInt(base);
    when = Number.isSafeInteger(Number(w)) ? Number(w) : w;
  }

  const db = c.db;
  const e = db.get(argv.key(1));
  if (e === undefined) {
    out.int(0);
    return;
  }
  if (flags !== 0) {
    const cur = db.expireOf(e); // 0 = no TTL (Redis's -1)
    if (flags & NX && cur !== 0) return out.int(0);
    if (flags & XX && cur === 0) return out.int(0);
    // No TTL counts as an infinite one: GT never passes, LT always does.
    if (flags & GT && (cur === 0 || when <= cur)) return out.int(0);
    if (flags & LT && cur !== 0 && when >= cur) return out.int(0);
  }
  // A time at or before now deletes the key (and still answers 1).
  const key = e.key;
  if (typeof when === 'number') keyEvent(c, N.GENERIC, db.setExpire(e, when) === undefined ? 'del' : 'expire', key);
  else {
    db.setExpireExact(e, when);
    keyEvent(c, N.GENERIC, db.peek(key) === undefined ? 'del' : 'expire', key);
  }
  out.int(1);
}

// TTL key
function ttlCommand(c: Client, argv: Argv, out: ReplySink): void {
  ttlGeneric(c, argv, out, false, false);
}

// PTTL key
function pttlCommand(c: Client, argv: Argv, out: ReplySink): void {
  ttlGeneric(c, argv, out, true, false);
}

// EXPIRETIME key
function expiretimeCommand(c: Client, argv: Argv, out: ReplySink): void {
  ttlGeneric(c, argv, out, false, true);
}

// PEXPIRETIME key
function pexpiretimeCommand(c: Client, argv: Argv, out: ReplySink): void {
  ttlGeneric(c, argv, out, true, true);
}

/** -2 no key, -1 no TTL; seconds are rounded to the nearest ((ms + 500) / 1000, as Redis). */
function ttlGeneric(c: Client, argv: Argv, out: ReplySink, ms: boolean, abs: boolean): void {
  const db = c.db;
  const e = db.read(argv.key(1), false);
  if (e === undefined) return out.int(-2);
  if (e.exp === 0) return out.int(-1);
  const exp = db.expireOf(e);
  if (typeof exp === 'number') {
    let t = abs ? exp : exp - c.engine.now;
    if (t < 0) t = 0;
    out.int(ms ? t : Math.floor((t + 500) / 1000));
  } else {
    const t = abs ? exp : exp - BigInt(c.engine.now);
    out.int(ms ? t : (t + 500n) / 1000n);
  }
}

// PERSIST key
function persistCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const e = db.get(argv.key(1));
  const done = e !== undefined && db.persist(e);
  if (done) keyEvent(c, N.GENERIC, 'persist', e.key);
  out.int(done ? 1 : 0);
}

// ---------------------------------------------------------------- OBJECT

/** The entry for OBJECT's subcommands (no LRU touch, statistics counted); nil if missing. */
function objectLookup(c: Client, argv: Argv, out: ReplySink): Entry | undefined {
  const e = c.db.read(argv.key(2), false, false);
  if (e === undefined) out.nil();
  return e;
}

/** A string Redis would store as an int object (tryObjectEncoding: len <= 20, string2l). */
function stringInt(e: Entry, v: Buffer): bigint | null {
  if (e.notInt || v.length > 20) return null;
  return parseInt64(v, 0, v.length);
}

function isLfu(c: Client): boolean {
  return c.engine.lfu;
}

// OBJECT ENCODING key
function objectEncodingCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = objectLookup(c, argv, out);
  if (e === undefined) return;
  const v = e.value;
  let enc: string;
  if (v instanceof Uint8Array) {
    if (e.raw) enc = 'raw';
    else if (stringInt(e, v) !== null) enc = 'int'; // null for INCRBYFLOAT's embstr hint
    else enc = v.length <= 44 ? 'embstr' : 'raw';
  } else {
    enc = v.encoding();
  }
  out.bulkLatin1(enc);
}

// OBJECT REFCOUNT key
function objectRefcountCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = objectLookup(c, argv, out);
  if (e === undefined) return;
  // Small integers are shared objects in Redis (refcount INT_MAX), unless maxmemory with an
  // LRU/LFU policy is on (MAXMEMORY_FLAG_NO_SHARED_INTEGERS).
  if (e.value instanceof Uint8Array) {
    const n = stringInt(e, e.value);
    const policy = c.engine.cfg('maxmemory-policy');
    const noShared = c.engine.cfgInt('maxmemory') !== 0 && (policy.endsWith('-lru') || policy.endsWith('-lfu'));
    if (n !== null && n >= 0n && n < SHARED_INTEGERS && !noShared && !UNSHARED.has(e.value)) return out.int(INT_MAX);
  }
  out.int(1);
}

// OBJECT IDLETIME key
function objectIdletimeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = objectLookup(c, argv, out);
  if (e === undefined) return;
  if (isLfu(c)) {
    out.error('ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.');
    return;
  }
  out.int(Math.max(0, c.engine.lruClock - e.lru));
}

// OBJECT FREQ key
function objectFreqCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = objectLookup(c, argv, out);
  if (e === undefined) return;
  if (!isLfu(c)) {
    out.error('ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.');
    return;
  }
  // The entry's LRU bits hold its LFU counter under an LFU policy (evict.ts).
  out.int(lfuCounter(c.engine, e));
}

const OBJECT_HELP = [
  'OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'ENCODING <key>',
  '    Return the kind of internal representation used in order to store the value',
  '    associated with a <key>.',
  'FREQ <key>',
  '    Return the access frequency index of the <key>. The returned integer is',
  '    proportional to the logarithm of the recent access frequency of the key.',
  'IDLETIME <key>',
  '    Return the idle time of the <key>, that is the approximated number of',
  '    seconds elapsed since the last access to the key.',
  'REFCOUNT <key>',
  '    Return the number of references of the value associated with the specified',
  '    <key>.',
  'HELP',
  '    Prints this help.',
];

// OBJECT HELP
function objectHelpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(OBJECT_HELP.length);
  for (const l of OBJECT_HELP) out.simple(l);
}

/** Never reached: OBJECT's arity (-2) makes the dispatcher resolve a subcommand first. */
function objectCommand(_c: Client, argv: Argv, out: ReplySink): void {
  out.error(`ERR unknown subcommand '${cstr(argv.key(1))}'. Try OBJECT HELP.`);
}

const RO = F.READONLY;
const RW = F.WRITE;
export default family('generic', ['keyspace'], [
  //   name          arity  flags                          keys        handler
  row('del',           -2,   RW,                            [1, -1, 1], delCommand),
  row('unlink',        -2,   RW | F.FAST,                   [1, -1, 1], delCommand),
  row('exists',        -2,   RO | F.FAST,                   [1, -1, 1], existsCommand),
  row('type',           2,   RO | F.FAST,                   [1, 1, 1],  typeCommand),
  row('rename',         3,   RW,                            [1, 2, 1],  renameCommand),
  row('renamenx',       3,   RW | F.FAST,                   [1, 2, 1],  renamenxCommand),
  row('copy',          -3,   RW | F.DENYOOM,                [1, 2, 1],  copyCommand),
  row('move',           3,   RW | F.FAST,                   [1, 1, 1],  moveCommand),
  row('swapdb',         3,   RW | F.FAST,                   [0, 0, 0],  swapdbCommand, { categories: ['dangerous'] }),
  row('touch',         -2,   RO | F.FAST,                   [1, -1, 1], touchCommand),
  row('keys',           2,   RO,                            [0, 0, 0],  keysCommand, { categories: ['dangerous'] }),
  row('scan',          -2,   RO,                            [0, 0, 0],  scanCommand),
  row('randomkey',      1,   RO,                            [0, 0, 0],  randomkeyCommand),
  row('expire',        -3,   RW | F.FAST,                   [1, 1, 1],  expireCommand),
  row('pexpire',       -3,   RW | F.FAST,                   [1, 1, 1],  pexpireCommand),
  row('expireat',      -3,   RW | F.FAST,                   [1, 1, 1],  expireatCommand),
  row('pexpireat',     -3,   RW | F.FAST,                   [1, 1, 1],  pexpireatCommand),
  row('ttl',            2,   RO | F.FAST,                   [1, 1, 1],  ttlCommand),
  row('pttl',           2,   RO | F.FAST,                   [1, 1, 1],  pttlCommand),
  row('expiretime',     2,   RO | F.FAST,                   [1, 1, 1],  expiretimeCommand),
  row('pexpiretime',    2,   RO | F.FAST,                   [1, 1, 1],  pexpiretimeCommand),
  row('persist',        2,   RW | F.FAST,                   [1, 1, 1],  persistCommand),
  container('object',  -2,   0, [
    row('encoding',     3,   RO,                            [2, 2, 1],  objectEncodingCommand),
    row('refcount',     3,   RO,                            [2, 2, 1],  objectRefcountCommand),
    row('idletime',     3,   RO,                            [2, 2, 1],  objectIdletimeCommand),
    row('freq',         3,   RO,                            [2, 2, 1],  objectFreqCommand),
    row('help',         2,   F.LOADING | F.STALE,           [0, 0, 0],  objectHelpCommand),
  ], objectCommand),
]);
