/**
 * Db: one logical database (redis db.c analogue). Owns its keys, their values and their TTLs.
 *
 * Keys are latin1 strings (one char per byte: exact and reversible), indexed by a KeyTable
 * (keytable.ts: Redis's dict, with incremental rehashing and dictScan's reverse-binary SCAN
 * cursors, so every key present for a whole scan is returned even while the table resizes).
 * Memory matters here (one Entry per key): see Entry and `Stored`.
 *
 * Every lookup MUST go through `peek()` (or get/read/set/delete, which use it): while the keyspace
 * is still being loaded from disk it brings a key not loaded yet in first (KeyLoader below).
 *
 * Every change to a key MUST go through `modified()` (directly or through set/delete): it is
 * the single hook behind WATCH, the dirty counter, persistence, blocked-client wake-ups and
 * client-side caching invalidations.
 */
import type { Engine } from './engine.js';
import { KeyTable, REMOVED, VIEW } from './keytable.js';
import { parseSafeInt } from '../resp/ascii.js';
import { latin1, type Argv } from '../resp/argv.js';
import type { ReplySink } from '../resp/reply-sink.js';
import { N, dbEvent } from './notify.js';
import { chargedValue, keyCharge, keyChargeLen, rechargeValue, stringCharge, stringChargeLen } from './memory.js';
import { lfuNewBits, lfuTouch } from './evict.js';

/** Value types (OBJECT ENCODING and TYPE derive from them). */
export const T = { STRING: 0, LIST: 1, SET: 2, ZSET: 3, HASH: 4, STREAM: 5, JSON: 6 } as const;
export type TypeTag = (typeof T)[keyof typeof T];
export const TYPE_NAMES = ['string', 'list', 'set', 'zset', 'hash', 'stream', 'ReJSON-RL'] as const;

/** A non-string value: every collection type implements this. */
export interface TypedValue {
  readonly type: TypeTag;
  /** OBJECT ENCODING (listpack, hashtable, skiplist, intset, quicklist, stream...). */
  encoding(): string;
  /**
   * A deep, independent copy with the same encoding (COPY, and anything else that duplicates
   * a value). Stored Buffers are immutable, so a copy may share them. Optional only until
   * every type implements it (hash, list and set do); then it becomes required.
   */
  clone?(): TypedValue;
  /** Memory accounting fields (memory.ts); every collection class declares them. */
  mem?: number;
  memN?: number;
  memAvg?: number;
}

/** Strings are plain immutable Buffers; everything else is a TypedValue. */
export type Value = Buffer | TypedValue;

export function typeOf(v: Value): TypeTag {
  return v instanceof Uint8Array ? T.STRING : v.type;
}

/** Exact expiry times beyond 2^53 ms (PEXPIREAT near 2^63): `Entry.exp` holds them rounded. */
const EXACT_EXP = new WeakMap<Entry, bigint>();
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * A stored value as the Entry holds it (`Entry.v`). Besides the `Value` forms, a string value
 * may be held compactly (memory: a Buffer costs ~100 bytes of object overhead, a short JS
 * string 16, an integer nothing):
 *  - `number`: a string value whose bytes are exactly the canonical decimal form of this safe
 *    integer (what string2ll accepts: no '+', no leading zero, no "-0"), as Redis's
 *    OBJ_ENCODING_INT. INCR works on it without parsing or formatting.
 *  - `string`: the value's bytes as a latin1 string (one char per byte: exact), for values of
 *    at most SMALL_STRING bytes.
 * `Entry.value` always answers a Buffer for strings (a fresh copy for the compact forms), so
 * code written against Buffers keeps working; hot paths read `Entry.v` directly.
 */
export type Stored = Value | string | number;

/**
 * Longest string value held as a JS string instead of a Buffer. A string costs 16 bytes plus
 * its bytes; a Buffer ~100 plus its bytes (and, for a pooled one, its share of the pool): 1M
 * keys of 100-byte values took 314 B/item as Buffers, 238 as strings (bench/RESULTS.md).
 */
export const SMALL_STRING = 255;

/** The compact form of the bytes b[s, e) (a fresh copy: the result never aliases `b`). */
export function storedFrom(b: Uint8Array, s: number, e: number): Stored {
  const x = intValue(b, s, e);
  if (x === x) return x;
  const n = e - s;
  const buf = b as Buffer;
  if (n <= SMALL_STRING) return latin1(buf, s, e);
  const out = Buffer.allocUnsafe(n);
  buf.copy(out, 0, s, e);
  return out;
}

/** The safe integer whose canonical decimal form is b[s, e) (held as a number), else NaN. */
function intValue(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n <= 16 && n > 0) {
    const c = b[s];
    if (c <= 57 && (c >= 49 || c === 45 || (c === 48 && n === 1))) return parseSafeInt(b, s, e);
  }
  return NaN;
}

/** A Buffer with the bytes of a compact string value. */
export function storedBytes(v: string | number): Buffer {
  return Buffer.from(typeof v === 'number' ? String(v) : v, 'latin1');
}

/**
 * The charge of a stored value as accounted (memory.ts): strings by their stored form,
 * collections by what they were charged when last accounted (taken back when they change
 * again or leave the keyspace).
 */
function chargeOf(v: Stored): number {
  if (typeof v === 'object' && !(v instanceof Uint8Array)) return chargedValue(v);
  return stringCharge(v);
}

/**
 * perf: true when overwriting `a` with `b` cannot change the charge: two integers, or two
 * compact strings of one length (SET over a value of the same size, the common overwrite).
 */
function sameCharge(a: Stored, b: Stored): boolean {
  return typeof a === 'string' ? typeof b === 'string' && a.length === b.length : typeof a === 'number' && typeof b === 'number';
}

/** Charge a value anew (collections: estimated now and remembered). */
function newCharge(v: Stored): number {
  if (typeof v === 'object' && !(v instanceof Uint8Array)) return rechargeValue(v);
  return stringCharge(v);
}

/** The LRU clock is kept relative to this (seconds) so that it packs into a small integer. */
const LRU_BASE = Math.floor(Date.now() / 1000) - 86400;

/** 2^30: a TimedEntry splits its expiry at this power of two so that both halves are small integers. */
const EXP_SPLIT = 1073741824;

/**
 * A key and its value. A key without a TTL is an Entry (five fields: 64 bytes); a key that gets
 * a TTL has its Entry replaced, in place in the KeyTable, by a TimedEntry, which adds the expiry
 * (Db.setExpire returns the live entry). memory: every key has one, and an expiry field on every
 * Entry cost 8 bytes per key, TTL or not.
 */
export class Entry {
  /**
   * (LRU clock - LRU_BASE) * 4 + string encoding hint (0 none, 1 raw, 2 embstr), one small
   * integer instead of two fields. Read through `lru`, `raw` and `notInt`.
   */
  bits: number;
  /** The next entry of the same KeyTable bucket (keytable.ts owns this field). */
  next: Entry | undefined = undefined;
  /**
   * The key's hash as an int32 (keytable.ts sets it on insert). perf: a lookup rejects the other
   * keys of its chain without reading their strings (a cache miss each), and rehashing and
   * removal never hash a key again. 8 bytes per key.
   */
  hash = 0;
  constructor(readonly key: string, public v: Stored, bits: number) {
    this.bits = bits;
  }

  /** Absolute expiry in ms since the epoch; 0 = no TTL. Only a TimedEntry takes another value. */
  get exp(): number {
    return 0;
  }

  set exp(ms: number) {
    if (ms !== 0) throw new Error('Entry.exp: a TTL needs a TimedEntry (Db.setExpire)');
  }

  /** The value; strings as Buffers (compact forms are copied out: do not rely on identity). */
  get value(): Value {
    const v = this.v;
    if (typeof v === 'string' || typeof v === 'number') return storedBytes(v);
    return v;
  }

  set value(x: Value) {
    this.v = x;
  }

  /** LRU clock (seconds) of the last access, for OBJECT IDLETIME. */
  get lru(): number {
    return (this.bits >> 2) + LRU_BASE;
  }

  set lru(s: number) {
    this.bits = (s - LRU_BASE) * 4 + (this.bits & 3);
  }

  /** True while the string is known to be "raw" (APPEND/SETRANGE results, as Redis). */
  get raw(): boolean {
    return (this.bits & 3) === 1;
  }

  set raw(r: boolean) {
    this.bits = (this.bits & ~3) | (r ? 1 : 0);
  }

  /**
   * True while the string is known not to be int-encoded: raw, or an embstr that Redis built
   * without trying the integer encoding (INCRBYFLOAT's result, even "3").
   */
  get notInt(): boolean {
    return (this.bits & 3) !== 0;
  }

  /** Mark the string as an embstr Redis did not try to encode as an integer. */
  markEmbstr(): void {
    this.bits = (this.bits & ~3) | 2;
  }

  /** The encoding hint bits, copied as they are by RENAME/MOVE/COPY. */
  get hint(): number {
    return this.bits & 3;
  }

  set hint(h: number) {
    this.bits = (this.bits & ~3) | h;
  }

  /** The value's type, without copying a compact string out. */
  get type(): TypeTag {
    const v = this.v;
    if (typeof v === 'string' || typeof v === 'number' || v instanceof Uint8Array) return T.STRING;
    return v.type;
  }

  /** True when the value is a string (any form). */
  get isString(): boolean {
    const v = this.v;
    return typeof v === 'string' || typeof v === 'number' || v instanceof Uint8Array;
  }
}

/**
 * An Entry with a TTL. The expiry is kept as two small integers (memory: a double field would
 * be a 16-byte box per object): 72 bytes in all. `hi` starts as null so that V8 keeps it a
 * tagged field, which also holds the rare high halves beyond the small-integer range (expiry
 * times past 2^61 ms) correctly. Once timed an entry stays so (PERSIST sets its expiry to 0).
 */
class TimedEntry extends Entry {
  private hi: number | null = null;
  private lo = 0;

  override get exp(): number {
    return (this.hi as number) * EXP_SPLIT + this.lo; // exact: hi * 2^30 <= exp, lo < 2^30
  }

  override set exp(ms: number) {
    const hi = Math.floor(ms / EXP_SPLIT);
    // `| 0`: arithmetic on a double (any ms timestamp) yields a heap number even when the result
    // is a small integer, and one such store makes V8 box the field in EVERY TimedEntry.
    this.hi = hi < EXP_SPLIT ? hi | 0 : hi;
    this.lo = (ms - hi * EXP_SPLIT) | 0;
  }
}

/**
 * Loads the keyspace from disk in the background after start-up (src/store/loader.ts). While a
 * Db has one, a key missing from the table may still be on disk: every lookup that misses asks
 * the loader to bring that key in first (`fetch`), and anything that needs the whole keyspace
 * (DBSIZE, KEYS, SCAN, RANDOMKEY, FLUSHDB, SWAPDB...) makes it load everything left (`finish`).
 */
export interface KeyLoader {
  /** Bring `key` into `db` if it is on disk and not loaded or decided yet (idempotent). */
  fetch(db: Db, key: string): void;
  /** Load everything left, in every database; detaches itself from them. */
  finish(): void;
}

export class Db {
  /** Set while the keyspace is still being loaded (see KeyLoader); null once it is complete. */
  loader: KeyLoader | null = null;
  /** During an import into an empty db: the bitset of the keys' hashes (beginImport), else null. */
  private importSeen: Int32Array | null = null;
  private importMask = 0;
  /**
   * The keys (Map-like: get, has, size, values(); mutate only through Db's methods). Not
   * readonly only so that SWAPDB can exchange tables in O(1); never cache the reference.
   */
  map = new KeyTable();
  expires = 0;
  /** Bytes charged for this database's keys (memory.ts); Engine.usedMemory sums them. */
  mem = 0;
  /** Clients WATCHing each key. */
  readonly watchers = new Map<string, Set<import('./client.js').Client>>();
  // Min-heap of (exp, key) for the active expiry cycle; stale pairs are skipped when popped.
  private heapExp: number[] = [];
  private heapKey: string[] = [];
  /** Counters for INFO keyspace hits/misses are kept on the engine. */
  constructor(readonly index: number, private readonly eng: Engine) {}

  get size(): number {
    if (this.loader !== null) this.loader.finish();
    return this.map.size;
  }

  /**
   * The keys in memory now, without waiting for a background load: INFO keyspace (Redis too
   * shows the keys loaded so far while it loads; clients such as ioredis send INFO on connect).
   */
  get loadedSize(): number {
    return this.map.size;
  }

  /**
   * THE key lookup (no expiry check): every lookup goes through here, so a key not loaded from
   * disk yet is brought in first. Outside the loading window this is one table lookup.
   */
  peek(key: string): Entry | undefined {
    const e = this.map.get(key);
    if (e !== undefined || this.loader === null) return e;
    this.loader.fetch(this, key);
    return this.map.get(key);
  }

  /**
   * peek() that leaves a compact key where it is (a view of it: keytable.ts VIEW), for lookups
   * that only read it or delete it.
   */
  peekView(key: string): Entry | undefined {
    const e = this.map.find(key);
    if (e !== undefined || this.loader === null) return e;
    this.loader.fetch(this, key);
    return this.map.find(key);
  }

  /** Every entry, expired ones included (KEYS and the like): loads the whole keyspace first. */
  entries(): IterableIterator<Entry> {
    if (this.loader !== null) this.loader.finish();
    return this.map.values();
  }

  /**
   * peek() of the key argv[i], without building its string (perf: the hot read and overwrite
   * paths); while a background load runs, through peek() (the loader works by key string).
   */
  peekArg(argv: Argv, i: number): Entry | undefined {
    if (this.loader !== null) return this.peek(argv.key(i));
    return this.map.getBytes(argv.buf, argv.start[i], argv.end[i]);
  }

  /** Look a key up, deleting it first if its TTL ran out (lazy expiry). */
  get(key: string): Entry | undefined {
    return this.alive(this.peek(key));
  }

  /** get() of the key argv[i] (see peekArg). */
  getArg(argv: Argv, i: number): Entry | undefined {
    return this.alive(this.peekArg(argv, i));
  }

  /** `e` unless its TTL ran out (then deleted: lazy expiry). */
  private alive(e: Entry | undefined): Entry | undefined {
    if (e === undefined) return undefined;
    // Redis's keyIsExpired: a key is expired once now > when (still alive at exactly `when`).
    if (e.exp !== 0 && e.exp < this.eng.now) {
      // CLIENT PAUSE: expired keys read as missing but are not deleted meanwhile (Redis 7).
      if (this.eng.pauseUntil === 0) this.expireEntry(e);
      return undefined;
    }
    return e;
  }

  /**
   * Lookup for reading: updates the LRU clock (or LFU counter) and hit/miss statistics, and
   * publishes `keymiss` on a miss unless `notify` is false (Redis's LOOKUP_NONOTIFY).
   */
  read(key: string, touch = true, notify = true): Entry | undefined {
    const e = this.get(key);
    if (e === undefined) {
      this.eng.stats.keyspaceMisses++;
      if (notify && this.eng.notifyFlags & N.KEY_MISS) dbEvent(this.eng, N.KEY_MISS, 'keymiss', key, this.index);
      return undefined;
    }
    this.eng.stats.keyspaceHits++;
    if (touch) this.touch(e);
    return e;
  }

  /** read() of the key argv[i] (see peekArg); its string is built only for a `keymiss` event. */
  readArg(argv: Argv, i: number, touch = true): Entry | undefined {
    const e = this.getArg(argv, i);
    if (e === undefined) {
      this.eng.stats.keyspaceMisses++;
      if (this.eng.notifyFlags & N.KEY_MISS) dbEvent(this.eng, N.KEY_MISS, 'keymiss', argv.key(i), this.index);
      return undefined;
    }
    this.eng.stats.keyspaceHits++;
    if (touch) this.touch(e);
    return e;
  }

  /**
   * GET of the key argv[i] when it is a compact key (keytable.ts), without moving it into the
   * table: its value written to `out` from the arena's bytes, its LRU clock touched if `touch`,
   * a keyspace hit counted. False when the key is not compact (then nothing was done: use
   * readArg).
   */
  replyCompactArg(argv: Argv, i: number, touch: boolean, out: ReplySink): boolean {
    if (this.loader !== null || this.eng.lfu) return false;
    if (!this.map.replyCompactBytes(argv.buf, argv.start[i], argv.end[i], touch ? (this.eng.lruClock - LRU_BASE) * 4 : -1, out)) return false;
    this.eng.stats.keyspaceHits++;
    return true;
  }

  /** An access to `e`: its LRU clock, or under an LFU policy its counter (updateLFU). */
  touch(e: Entry): void {
    if (this.eng.lfu) lfuTouch(this.eng, e);
    else e.lru = this.eng.lruClock;
  }

  /** True if the key exists and is not expired, without touching LRU or statistics. */
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /**
   * Create or overwrite a key. `keepTtl` keeps the TTL of an existing key; otherwise it is
   * cleared (SET semantics). `timed`: the caller gives the key a TTL next (setExpire), so a new
   * key is created as a TimedEntry (no Entry allocated only to be replaced). Returns the entry.
   */
  set(key: string, value: Stored, keepTtl = false, timed = false): Entry {
    const e = this.peek(key);
    if (e !== undefined) {
      this.overwrite(e, value, keepTtl);
      this.signal(e.key, e);
      return e;
    }
    return this.create(key, value, timed);
  }

  /**
   * set() of the key argv[i] with no option (plain SET). A short string value of a new key goes
   * to the table's compact tier: no Entry. A compact key that is written again moves into the
   * table (getBytes): a key written often is cheaper as an Entry, whose key string the change
   * signal reuses (in the compact tier each SET built one: -P 16 SET of one key cost 1.27x).
   */
  setArg(argv: Argv, i: number, value: Stored): void {
    const e = this.peekArg(argv, i);
    if (e !== undefined) {
      this.overwrite(e, value, false);
      this.signal(e.key, e);
      return;
    }
    if (typeof value !== 'object' && this.loader === null && !this.eng.lfu) {
      const s = argv.start[i];
      const end = argv.end[i];
      if (this.map.addCompact(undefined, argv.buf, s, end, value, (this.eng.lruClock - LRU_BASE) * 4)) {
        this.mem += keyChargeLen(end - s) + stringCharge(value);
        const key = argv.key(i);
        if (this.eng.notifyFlags & N.NEW) dbEvent(this.eng, N.NEW, 'new', key, this.index);
        this.signal(key);
        return;
      }
    }
    this.create(argv.key(i), value, false);
  }


  /** set() of an existing entry: the value replaced, the TTL dropped unless `keepTtl`. */
  private overwrite(e: Entry, value: Stored, keepTtl: boolean): void {
    // perf: the Entry is reused on overwrite (no new object, no Map insertion).
    this.setStored(e, value);
    e.bits = this.stamp(e); // LRU refreshed (or LFU counter bumped), encoding hint cleared
    if (!keepTtl && e.exp !== 0) {
      e.exp = 0;
      this.expires--;
    } else if (e.exp !== 0 && e.exp < this.eng.now) {
      // An expired key that was overwritten with KEEPTTL: it is gone.
      e.exp = 0;
      this.expires--;
    }
  }

  /** set() of a key known to be absent. */
  private create(key: string, value: Stored, timed: boolean): Entry {
    const e = this.insert(key, value, 0, timed);
    if (this.eng.notifyFlags & N.NEW) dbEvent(this.eng, N.NEW, 'new', key, this.index);
    // perf: the stored key string, not the caller's copy: listeners that put keys in a Map or
    // Set (persistence's dirty set, WATCH) find its hash already computed.
    this.signal(e.key, e);
    return e;
  }

  /**
   * set() of a key known to be absent (peek() said so) with a TTL `when` in the future: what
   * create() then setExpire() do, with one change signal (SET ... PX of a new key).
   */
  createTimed(key: string, value: Stored, when: number): Entry {
    const e = this.insert(key, value, when);
    this.expires++;
    this.heapPush(when, e.key);
    if (this.eng.notifyFlags & N.NEW) dbEvent(this.eng, N.NEW, 'new', key, this.index);
    this.signal(e.key, e);
    return e;
  }

  /**
   * Replace the value of the live entry `e` (from get()/read() in this command): the TTL is
   * kept, the LRU clock refreshed, the raw flag cleared (INCR and the like). One change signal.
   */
  update(e: Entry, value: Stored): void {
    this.setStored(e, value);
    e.bits = this.stamp(e);
    this.signal(e.key, e);
  }

  /**
   * Replace the value of the live entry `e` in place, keeping its LRU clock and hint bits
   * (SETBIT, SETRANGE, PFADD...): accounts the change; the caller signals it (modified()).
   */
  setStored(e: Entry, value: Stored): void {
    const old = e.v;
    if (old !== value && typeof old === 'object' && !(old instanceof Uint8Array)) this.eng.onValueDropped(old);
    if (!sameCharge(old, value)) {
      this.mem -= chargeOf(old);
      this.mem += newCharge(value);
    }
    e.v = value;
  }

  /** Add a new key that is known not to exist (after get() returned undefined). */
  add(key: string, value: Stored): Entry {
    return this.create(key, value, false);
  }

  /**
   * RESTORE's write: `old` (the key's live entry, if any) removed and `key` created with `value`
   * and expiry `exp` (absolute ms within 2^53, in the future; 0 = none), a `new` event and one
   * change signal. perf: delete(), add() and setExpire() looked the key up three times and
   * replaced the fresh Entry by a TimedEntry.
   */
  recreate(old: Entry | undefined, key: string, value: Stored, exp: number): Entry {
    let e: Entry;
    if (old !== undefined && exp === 0 && !(old instanceof TimedEntry)) {
      // perf (RESTORE … REPLACE over a key without a TTL): the Entry is reused in its table
      // slot, as remove() then insert() would leave it (new value, fresh LRU/LFU bits, no hint).
      this.aboutToChange(old);
      const ov = old.v;
      if (typeof ov === 'object' && !(ov instanceof Uint8Array)) this.eng.onValueDropped(ov);
      this.mem += newCharge(value) - chargeOf(ov);
      old.v = value;
      old.bits = this.newBits();
      e = old;
    } else {
      if (old !== undefined) this.remove(old);
      e = this.insert(key, value, exp);
    }
    if (exp !== 0) {
      this.expires++;
      this.heapPush(exp, key);
    }
    if (this.eng.notifyFlags & N.NEW) dbEvent(this.eng, N.NEW, 'new', key, this.index);
    this.signal(e.key, e);
    return e;
  }

  /**
   * Add a key known not to exist with the TTL, the encoding hint and (if `keepLru`) the LRU
   * clock of `like`, a live entry of this or another db (RENAME, MOVE, COPY). One change signal.
   */
  addLike(key: string, value: Stored, like: Entry, keepLru: boolean): Entry {
    const e = this.insert(key, value, like.exp);
    if (this.eng.notifyFlags & N.NEW) dbEvent(this.eng, N.NEW, 'new', key, this.index);
    e.hint = like.hint;
    if (keepLru) e.lru = like.lru;
    if (like.exp !== 0) {
      // No past-time check: `like` was live, and Redis's setExpire() does not check either.
      this.expires++;
      if (like.exp > MAX_SAFE) {
        const x = EXACT_EXP.get(like);
        if (x !== undefined) EXACT_EXP.set(e, x);
      }
      this.heapPush(e.exp, key);
    }
    this.signal(e.key, e);
    return e;
  }

  /**
   * The bits of an entry written again (hint cleared): the LRU clock now, or under an LFU
   * policy its counter touched (Redis keeps the object's LFU data on overwrite).
   */
  private stamp(e: Entry): number {
    if (!this.eng.lfu) return (this.eng.lruClock - LRU_BASE) * 4;
    lfuTouch(this.eng, e);
    return e.bits & ~3;
  }

  /** A random key with a TTL (volatile-* eviction), from the expiry heap; undefined if none. */
  randomVolatile(): Entry | undefined {
    const hk = this.heapKey;
    for (let tries = 0; tries < 32 && hk.length > 0 && this.expires > 0; tries++) {
      const i = Math.floor(Math.random() * hk.length);
      const e = this.map.find(hk[i]);
      if (e !== undefined && e.exp === this.heapExp[i]) return e;
    }
    return undefined;
  }

  /** A new key's bits: the LRU clock now, or under an LFU policy a new counter. */
  private newBits(): number {
    return this.eng.lfu ? lfuNewBits(this.eng) : (this.eng.lruClock - LRU_BASE) * 4;
  }

  /** A new entry in the table: a TimedEntry with expiry `exp` if `timed` (0 = none yet). */
  private insert(key: string, value: Stored, exp = 0, timed = exp !== 0): Entry {
    const bits = this.newBits();
    let e: Entry;
    if (!timed) {
      e = new Entry(key, value, bits);
    } else {
      e = new TimedEntry(key, value, bits);
      e.exp = exp;
    }
    this.map.insert(e);
    this.mem += keyCharge(key) + newCharge(value);
    return e;
  }

  /** Delete a key (whether or not it is logically expired). True if it existed. */
  delete(key: string): boolean {
    const e = this.peekView(key);
    if (e === undefined) return false;
    this.remove(e);
    this.signal(e.key);
    return true;
  }

  /** delete() of an entry already at hand (eviction, DEL): it must be live, of this db. */
  deleteEntry(e: Entry): void {
    this.remove(e);
    this.signal(e.key);
  }

  /**
   * `e` (a live entry of this db) is about to change or go away outside a command's own
   * beforeWrite (expiry, eviction, a deferred deletion, a field-expiry sweep): an RDB snapshot
   * being produced saves it first.
   */
  aboutToChange(e: Entry): void {
    if (this.eng.beforeKeyChange !== null) this.eng.beforeKeyChange(this, e.key);
  }

  /**
   * `key` (absent) is about to be created outside a write command (DEBUG POPULATE): an RDB
   * snapshot being produced marks it, so that the key does not reach the file.
   */
  aboutToCreate(key: string): void {
    if (this.eng.beforeKeyChange !== null) this.eng.beforeKeyChange(this, key);
  }

  private remove(e: Entry): void {
    this.aboutToChange(e);
    const v = e.v;
    if (typeof v === 'object' && !(v instanceof Uint8Array)) this.eng.onValueDropped(v);
    this.mem -= keyCharge(e.key) + chargeOf(v);
    this.map.remove(e);
    if (e.exp !== 0) this.expires--;
  }

  private expireEntry(e: Entry): void {
    this.remove(e);
    this.eng.stats.expiredKeys++;
    this.signal(e.key);
    this.eng.onExpired(this, e.key);
  }

  /**
   * Set an absolute expiry (ms). A time in the past deletes the key, as Redis does. Returns the
   * live entry, which is no longer `e` when `e` had no room for a TTL (undefined if deleted):
   * do not use `e` afterwards.
   */
  setExpire(e: Entry, when: number): Entry | undefined {
    if (when <= this.eng.now) {
      this.delete(e.key);
      return undefined;
    }
    if (e.exp === 0) this.expires++;
    else if (e.exp > MAX_SAFE) EXACT_EXP.delete(e);
    if (!(e instanceof TimedEntry)) {
      const t = new TimedEntry(e.key, e.v, e.bits);
      this.map.replace(e, t);
      e = t;
    }
    e.exp = when;
    this.heapPush(when, e.key);
    this.signal(e.key, e);
    return e;
  }

  /**
   * setExpire() for a time given exactly as a signed 64-bit integer: beyond 2^53 ms the exact
   * value is kept aside (Entry.exp holds it rounded), so PEXPIRETIME replies it unchanged.
   */
  setExpireExact(e: Entry, when: bigint): void {
    const n = Number(when);
    if (n <= MAX_SAFE) {
      this.setExpire(e, n);
      return;
    }
    const live = this.setExpire(e, n);
    if (live !== undefined) EXACT_EXP.set(live, when);
  }

  /** The expiry of `e` (ms), exact even beyond 2^53; 0 when it has none. */
  expireOf(e: Entry): number | bigint {
    if (e.exp <= MAX_SAFE) return e.exp;
    return EXACT_EXP.get(e) ?? BigInt(e.exp);
  }

  /** Remove the TTL. True if there was one. */
  persist(e: Entry): boolean {
    if (e.exp === 0) return false;
    e.exp = 0;
    this.expires--;
    this.signal(e.key, e);
    return true;
  }

  /** A keyspace notification about `key` of this database (notify.ts; one bit test when off). */
  event(type: number, name: string, key: string): void {
    if (this.eng.notifyFlags & type) dbEvent(this.eng, type, name, key, this.index);
  }

  /**
   * THE change hook for commands that changed a value in place (WATCH, dirty counter,
   * persistence, wake-ups, memory accounting): a collection is charged anew.
   */
  modified(key: string, live?: Entry): void {
    // `live`: the key's entry when the caller holds it (perf: no second table lookup); checked
    // still to be in the table, else looked up as without it.
    // (find: a compact key is not moved into the table for this; a view is not passed on.)
    const e = live !== undefined && live.next !== REMOVED ? live : this.map.find(key);
    if (e !== undefined) {
      const v = e.v;
      if (typeof v === 'object' && !(v instanceof Uint8Array)) {
        this.mem -= chargedValue(v);
        this.mem += rechargeValue(v);
      }
    }
    this.signal(key, e === undefined || e.next === VIEW ? undefined : e);
  }

  /**
   * The change signal itself; Db's own methods, which account as they go, call it directly.
   * `e`: the key's live entry when the caller has it (listeners may keep it instead of looking
   * the key up again: persistence's batch encoding), undefined when deleted or not at hand.
   */
  private signal(key: string, e?: Entry): void {
    this.eng.changed();
    if (this.watchers.size !== 0) {
      const w = this.watchers.get(key);
      if (w !== undefined) for (const c of w) c.dirtyCas = true;
    }
    this.eng.onKeyChanged(this, key, e);
    if (this.eng.tracking.live !== 0) this.eng.tracking.invalidate(key);
  }

  /** Remove every key (FLUSHDB). Clients watching keys that existed are invalidated. */
  flush(): number {
    const n = this.size;
    for (const [key, set] of this.watchers) {
      if (this.map.has(key)) for (const c of set) c.dirtyCas = true;
    }
    // While an RDB snapshot is produced it keeps walking the old table (its keys as they were):
    // a fresh one replaces it, in O(1) (rdb/file.ts).
    if (this.eng.beforeKeyChange !== null) this.map = new KeyTable();
    else this.map.clear();
    this.expires = 0;
    this.mem = 0;
    this.heapExp = [];
    this.heapKey = [];
    this.eng.dirty += n;
    this.eng.onFlush(this);
    this.eng.tracking.flushed();
    return n;
  }

  /**
   * Exchange contents with another database (SWAPDB) in O(1); watchers stay with their db
   * index (as Redis's watched_keys), and those whose key exists on either side are invalidated.
   */
  swapWith(other: Db): void {
    if (other === this) return;
    if (this.loader !== null) this.loader.finish();
    if (other.loader !== null) other.loader.finish();
    for (const db of [this, other]) {
      for (const [key, set] of db.watchers) {
        if (this.map.has(key) || other.map.has(key)) for (const c of set) c.dirtyCas = true;
      }
    }
    const m = this.map;
    this.map = other.map;
    other.map = m;
    const x = this.expires;
    this.expires = other.expires;
    other.expires = x;
    const mem = this.mem;
    this.mem = other.mem;
    other.mem = mem;
    const he = this.heapExp;
    this.heapExp = other.heapExp;
    other.heapExp = he;
    const hk = this.heapKey;
    this.heapKey = other.heapKey;
    other.heapKey = hk;
    this.eng.onSwap(this, other);
  }

  /**
   * Insert a key loaded from disk at start-up: no change notification, no dirty count. `exp`
   * is an absolute time in ms (0 = none) that the caller has checked is in the future.
   */
  restore(key: string, value: Value, exp: number): void {
    // Short strings are kept in their compact form (they may arrive as views of a pool).
    const v = value instanceof Uint8Array && value.length <= SMALL_STRING ? storedFrom(value, 0, value.length) : value;
    this.restoreStored(key, v, exp);
  }

  /**
   * An RDB import (before any client is served): beginImport(), then importKey() or
   * importStringBytes() for each key in file order (each replaces any key of that name), then
   * endImport(): one bulk change notice instead of one per key (perf: persistence's per-key
   * bookkeeping of a million keys cost more than the import).
   */
  beginImport(n = 0): void {
    if (this.loader !== null) this.loader.finish();
    // An import of n keys into an empty db: a bitset of their hashes (32 bits per key, so about
    // 1.5% of fresh keys meet a set bit) says which keys cannot be here yet, and those skip the
    // lookup in both tiers (perf: that lookup, a cache miss or two per key, was a quarter of
    // the import's insert).
    let bits = 1 << 16;
    while (bits < 32 * n && bits < 1 << 28) bits *= 2;
    this.importSeen = this.map.size === 0 && n > 0 ? new Int32Array(bits >>> 5) : null;
    this.importMask = bits - 1;
  }

  /** During an import: a key of hash h is not new (the bitset had it: may be a false positive); marks it. */
  private importMaybeHere(h: number): boolean {
    const s = this.importSeen;
    if (s === null) return true;
    const i = h & this.importMask;
    const w = s[i >>> 5];
    const bit = 1 << (i & 31);
    if ((w & bit) !== 0) return true;
    s[i >>> 5] = w | bit;
    return false;
  }

  /**
   * During an import: whether a key of this name is in the db now (importKey would replace it).
   * Nothing changes; a key the import bitset has not seen is not looked up.
   */
  importPresent(key: string): boolean {
    const s = this.importSeen;
    if (s !== null) {
      const i = this.map.hash(key) & this.importMask;
      if ((s[i >>> 5] & (1 << (i & 31))) === 0) return false;
    }
    return this.map.has(key);
  }

  /**
   * During an import: read (nothing changed) the words a key of hash h will take in the import
   * bitset and the compact index. perf: the caller reads those of the next records in a batch,
   * so that their cache misses overlap instead of stalling each insert in turn.
   */
  importTouch(h: number): number {
    const s = this.importSeen;
    return (s === null ? 0 : s[(h & this.importMask) >>> 5]) ^ this.map.touchCompact(h);
  }

  /**
   * One key of an import (`exp`: absolute ms, 0 = none): an Entry if `entry`, else a short
   * string without TTL goes to the compact tier (then undefined: no Entry).
   */
  importKey(key: string, v: Stored, exp: number, entry: boolean): Entry | undefined {
    if (this.importMaybeHere(this.map.hash(key))) {
      const old = this.map.find(key);
      if (old !== undefined) this.remove(old);
    }
    const sv = v instanceof Uint8Array && v.length <= SMALL_STRING ? storedFrom(v, 0, v.length) : v;
    return entry ? this.insertRestored(key, sv, exp) : this.restoreStored(key, sv, exp);
  }

  /**
   * importKey() of a plain string without TTL given as bytes (perf: no string for the key or
   * the value): key kb[ks, ke), at most ARENA_MAX_KEY bytes, of hash h (hashBytes); value
   * vb[vs, ve), at most ARENA_MAX_VALUE bytes, or when `vb` is null the safe integer `n`.
   */
  importStringBytes(kb: Uint8Array, ks: number, ke: number, h: number, vb: Uint8Array | null, vs: number, ve: number, n: number): void {
    if (this.importMaybeHere(h)) {
      const old = this.map.getBytes(kb, ks, ke, h);
      if (old !== undefined) this.remove(old);
    }
    if (!this.eng.lfu) {
      const bits = (this.eng.lruClock - LRU_BASE) * 4;
      if (vb === null) {
        if (this.map.addCompact(undefined, kb, ks, ke, n, bits)) {
          this.mem += keyChargeLen(ke - ks) + stringChargeLen(0, true);
          return;
        }
      } else {
        const x = intValue(vb, vs, ve);
        const int = x === x; // not NaN
        if (this.map.addCompactBytes(h, kb, ks, ke, vb, vs, ve, int, bits)) {
          this.mem += keyChargeLen(ke - ks) + stringChargeLen(ve - vs, int);
          return;
        }
      }
    }
    // The compact tier is full, or LFU keys need Entries.
    this.insertRestored(latin1(kb as Buffer, ks, ke), vb === null ? n : storedFrom(vb, vs, ve), 0);
  }

  /**
   * importStringBytes() of a value of `n` bytes, 16 < n <= ARENA_MAX_VALUE (never an integer
   * here), given LZF-compressed as inp[cs, ce) and checked (lzfCheck): decompressed straight
   * into the compact tier. False, with nothing of it inserted, when it does not go there (LFU
   * keys, the tier full): the caller gives the decompressed bytes to importStringBytes.
   */
  importStringLzf(kb: Uint8Array, ks: number, ke: number, h: number, inp: Uint8Array, cs: number, ce: number, n: number): boolean {
    if (this.eng.lfu) return false;
    if (this.importMaybeHere(h)) {
      const old = this.map.getBytes(kb, ks, ke, h);
      if (old !== undefined) this.remove(old);
    }
    if (!this.map.addCompactLzf(h, kb, ks, ke, inp, cs, ce, n, (this.eng.lruClock - LRU_BASE) * 4)) return false;
    this.mem += keyChargeLen(ke - ks) + stringChargeLen(n, false);
    return true;
  }

  /** The end of an import of `n` keys; `keys`: their names, for the change listeners. */
  endImport(keys: string[], n: number): void {
    this.importSeen = null;
    this.eng.dirty += n;
    this.eng.changed();
    // Each name as given; a key given twice is listed twice.
    if (keys.length > 0) this.eng.onKeysAdded(this, keys);
  }

  /** A loaded key as an Entry (restoreStored without the compact tier). */
  private insertRestored(key: string, v: Stored, exp: number): Entry {
    const e = this.insert(key, v, exp);
    if (exp !== 0) {
      this.expires++;
      this.heapPush(exp, key);
    }
    return e;
  }

  /**
   * restore() of a value already in its stored form (storedFrom for strings). A short string
   * without TTL goes to the compact tier (returns undefined then: no Entry).
   */
  restoreStored(key: string, v: Stored, exp: number): Entry | undefined {
    if (exp === 0 && typeof v !== 'object' && !this.eng.lfu) {
      if (this.map.addCompact(key, null, 0, 0, v, (this.eng.lruClock - LRU_BASE) * 4)) {
        this.mem += keyCharge(key) + stringCharge(v);
        return undefined;
      }
    }
    return this.insertRestored(key, v, exp);
  }

  /** A random live key (RANDOMKEY), or undefined when empty. Expired keys met are deleted. */
  randomKey(): string | undefined {
    while (this.size > 0) {
      const e = this.map.random()!;
      if (e.exp !== 0 && e.exp < this.eng.now) {
        this.expireEntry(e);
        continue;
      }
      return e.key;
    }
    return undefined;
  }

  /**
   * SCAN step (scanGenericCommand over dictScan): visit buckets from `cursor` until at least
   * `count` keys were seen (or count*10 buckets, or the end), then call `fn` for each live key
   * (expired ones met are deleted). Returns the next cursor (0 when the walk is complete).
   */
  scan(cursor: number, count: number, fn: (e: Entry) => void): number {
    if (this.loader !== null) this.loader.finish();
    const batch: Entry[] = [];
    const add = (e: Entry): void => {
      batch.push(e);
    };
    let budget = count * 10;
    do {
      cursor = this.map.scanStep(cursor, add);
    } while (cursor !== 0 && budget-- > 0 && batch.length < count);
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i];
      if (e.next === REMOVED) continue; // deleted by an expiry earlier in this batch
      if (e.exp !== 0 && e.exp < this.eng.now) {
        this.expireEntry(e);
        continue;
      }
      fn(e);
    }
    return cursor;
  }

  /** Background upkeep of the key table (shrinking, incremental rehashing) until `deadline`. */
  cron(deadline: number): void {
    this.map.cron(deadline);
  }

  // ---------------------------------------------------------------- active expiry

  private heapPush(exp: number, key: string): void {
    const he = this.heapExp;
    const hk = this.heapKey;
    let i = he.length;
    he.push(exp);
    hk.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (he[p] <= exp) break;
      he[i] = he[p];
      hk[i] = hk[p];
      i = p;
    }
    he[i] = exp;
    hk[i] = key;
    // Stale pairs accumulate when TTLs are changed often or keys with TTLs are deleted: drop
    // them when they dominate. perf: soon (64 past 4x the live ones), so that the key strings of
    // deleted keys (BullMQ's lock keys, set with PX and deleted within the job) die young
    // instead of being promoted; each pair is still checked once (amortised O(1) per push).
    if (he.length > 64 + 4 * this.expires) this.rebuildHeap();
  }

  private heapPop(): void {
    const he = this.heapExp;
    const hk = this.heapKey;
    const lastE = he.pop()!;
    const lastK = hk.pop()!;
    const n = he.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && he[c + 1] < he[c]) c++;
      if (he[c] >= lastE) break;
      he[i] = he[c];
      hk[i] = hk[c];
      i = c;
    }
    he[i] = lastE;
    hk[i] = lastK;
  }

  /** Keep only the live pairs, in O(heap) (not O(keyspace)): amortised O(1) per push. */
  private rebuildHeap(): void {
    const he = this.heapExp;
    const hk = this.heapKey;
    const pairs: [number, string][] = [];
    const seen = new Set<string>();
    for (let i = 0; i < he.length; i++) {
      const e = this.map.find(hk[i]);
      if (e !== undefined && e.exp === he[i] && !seen.has(hk[i])) {
        seen.add(hk[i]);
        pairs.push([he[i], hk[i]]);
      }
    }
    pairs.sort((a, b) => a[0] - b[0]); // a sorted array is a valid min-heap
    this.heapExp = pairs.map((p) => p[0]);
    this.heapKey = pairs.map((p) => p[1]);
  }

  /**
   * Active expiry: delete keys whose TTL has passed, oldest first, until none is due or the
   * time budget (ms) is spent. Returns the number of keys deleted.
   */
  activeExpire(now: number, deadline: number): number {
    let n = 0;
    // Re-read the arrays each turn: a change listener may set a TTL and rebuild the heap.
    while (this.heapExp.length > 0 && this.heapExp[0] < now) {
      const key = this.heapKey[0];
      const exp = this.heapExp[0];
      this.heapPop();
      const e = this.map.find(key);
      if (e !== undefined && e.exp === exp) {
        this.expireEntry(e);
        n++;
        if ((n & 63) === 0 && Date.now() > deadline) break;
      }
    }
    return n;
  }
}
