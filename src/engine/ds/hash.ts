/**
 * HashValue: the hash type, with Redis's encodings and per-field expiry (7.4+ HFE).
 *
 *  listpack    small hashes: a Map in listpack order (new fields appended, updates in place,
 *              deletions close the gap), so HGETALL/HKEYS order is byte-identical to Redis.
 *  listpackex  a listpack hash once a field-expiry command touched it. Redis then keeps the
 *              fields ordered by expiry time (soonest first, fields without TTL last); we
 *              rebuild the Map in that order whenever a TTL changes.
 *  hashtable   past hash-max-listpack-entries fields or a field/value longer than
 *              hash-max-listpack-value bytes; never converted back. Order unspecified.
 *
 * Fields and values are latin1 strings (one char per byte, exact: a short JS string costs a
 * fraction of a Buffer's ~100 bytes of object overhead). Every
 * mutation is a method of this class; the command layer calls db.modified() after each
 * successful change.
 *
 * Persistence (the contract of src/store/codec.ts): `hashCodec` at the bottom. Listpack hashes
 * and small hashtables are stored whole; bigger ones as one record per field (value with its
 * TTL), and while they are (`sid !== 0`) every mutation logs the field it changed, so a write
 * costs one record whatever the size of the hash.
 *
 * Active field expiry also lives here (trackVolatile / sweepFields): the store registers the
 * hashes it loads with field TTLs, the commands those they give one.
 */
import { T, type Db } from '../db.js';
import type { CollectionCodec, ItemWriter, RecordBuilder, StoredValue } from '../../store/codec.js';
import { Unpacker, scratch, subScratch, wholeBytes, wholeItems } from '../../store/packing.js';
import { DenseTable, EXPECT_AFTER } from './dense.js';
import { N } from '../notify.js';

export interface HashLimits {
  /** hash-max-listpack-entries */
  readonly maxEntries: number;
  /** hash-max-listpack-value */
  readonly maxValue: number;
}

export class HashValue implements StoredValue {
  readonly type = T.HASH;
  /** Memory accounting (memory.ts): the charge, and the size and average (x16) it was sampled at. */
  mem = 0;
  memN = -1;
  memAvg = 0;
  /** Object id of its item records in the store; 0 = none (stored whole, or not stored). */
  sid = 0;
  /** Fields changed since the store last wrote the records (logged only while sid !== 0). */
  private changed: Set<string> | null = null;
  /** listpack / listpackex encoding (null once converted). */
  private lp: Map<string, string> | null = new Map();
  /** hashtable encoding. */
  private ht: DenseTable | null = null;
  /** A field-expiry command converted this listpack to listpackex. */
  private lpex = false;
  /** Field -> absolute expiry (ms); null while no field has a TTL. */
  private ttl: Map<string, number> | null = null;
  /** Lower bound of the soonest expiry in `ttl` (Infinity when none). */
  private minExp = Infinity;

  /**
   * A new listpack hash of the first `n` strings of `pairs` (field, value, ...), when they fit
   * the listpack limits; undefined when they do not (build it with set()), null when a field
   * repeats. perf: RESTORE of a 100-field hash spent most of its time in set()'s checks.
   */
  static fromPairs(pairs: readonly string[], n: number, lim: HashLimits): HashValue | null | undefined {
    if (n / 2 > lim.maxEntries) return undefined;
    for (let i = 0; i < n; i++) if (pairs[i].length > lim.maxValue) return undefined;
    const h = new HashValue();
    const lp = h.lp!;
    for (let i = 0; i < n; i += 2) lp.set(pairs[i], pairs[i + 1]);
    return lp.size === n / 2 ? h : null;
  }

  get size(): number {
    return this.lp !== null ? this.lp.size : this.ht!.size;
  }

  encoding(): string {
    return this.lp === null ? 'hashtable' : this.lpex ? 'listpackex' : 'listpack';
  }

  get isListpack(): boolean {
    return this.lp !== null;
  }

  /** True when some field has a TTL. */
  get volatile(): boolean {
    return this.ttl !== null;
  }

  clone(): HashValue {
    const h = new HashValue();
    if (this.lp !== null) {
      h.lp = new Map(this.lp);
    } else {
      h.lp = null;
      h.ht = this.ht!.clone();
    }
    h.lpex = this.lpex;
    if (this.ttl !== null) h.ttl = new Map(this.ttl);
    h.minExp = this.minExp;
    return h;
  }

  get(f: string): string | undefined {
    return this.lp !== null ? this.lp.get(f) : this.ht!.get(f);
  }

  has(f: string): boolean {
    return this.lp !== null ? this.lp.has(f) : this.ht!.has(f);
  }

  /** Visit every field in encoding order. */
  forEach(fn: (value: string, field: string) => void): void {
    if (this.lp !== null) {
      this.lp.forEach(fn);
      return;
    }
    const ht = this.ht!;
    for (let i = 0; i < ht.size; i++) fn(ht.valAt(i), ht.keyAt(i));
  }

  /** All fields, in encoding order (random sampling of small hashes). */
  fields(): string[] {
    return this.lp !== null ? Array.from(this.lp.keys()) : this.ht!.keys();
  }

  /** A uniformly random field (size must be > 0). */
  randomField(): string {
    if (this.ht !== null) return this.ht.keyAt(this.ht.randomIndex());
    let k = Math.floor(Math.random() * this.lp!.size);
    for (const f of this.lp!.keys()) if (k-- === 0) return f;
    throw new Error('randomField on an empty hash');
  }

  /** Hashtable field at a position (with randomIndex-style sampling of big hashes). */
  get table(): DenseTable | null {
    return this.ht;
  }

  // ------------------------------------------------------------------ mutations

  /** hashTypeTryConversion: a field or value of `len` bytes is about to be stored. */
  convertForLength(len: number, lim: HashLimits): void {
    if (this.lp !== null && len > lim.maxValue) this.toHashtable();
  }

  /** HSET with more new pairs than a listpack may hold goes straight to hashtable (Redis 7.4+). */
  convertForCount(pairs: number, lim: HashLimits): void {
    if (this.lp !== null && pairs > lim.maxEntries) this.toHashtable();
  }

  /**
   * Set a field. Unless `keepTtl`, a TTL on the field is dropped (HSET semantics; HINCRBY keeps
   * it). Returns true when the field is new.
   */
  set(f: string, v: string, lim: HashLimits, keepTtl = false): boolean {
    if (this.lp !== null && (f.length > lim.maxValue || v.length > lim.maxValue)) this.toHashtable();
    const hadTtl = !keepTtl && this.ttl !== null && this.ttl.has(f);
    if (hadTtl) this.dropTtl(f);
    if (this.sid !== 0) this.logChange(f);
    const lp = this.lp;
    if (lp !== null) {
      // Redis re-inserts a field that lost its TTL after the volatile ones: at the end.
      if (hadTtl && this.lpex && lp.delete(f)) {
        lp.set(f, v);
        return false;
      }
      const before = lp.size;
      lp.set(f, v);
      const isNew = lp.size !== before;
      if (isNew && lp.size > lim.maxEntries) this.toHashtable();
      return isNew;
    }
    return this.ht!.set(f, v);
  }

  /** Delete a field. True if it existed. */
  delete(f: string): boolean {
    const ok = this.lp !== null ? this.lp.delete(f) : this.ht!.delete(f);
    if (ok && this.ttl !== null) this.dropTtl(f);
    if (ok && this.sid !== 0) this.logChange(f);
    return ok;
  }

  /** The listpack becomes listpackex (hashTypeSetExInit / attachHfeMeta). */
  markFieldExpiry(): void {
    if (this.lp !== null) this.lpex = true;
  }

  /** Absolute expiry of a field in ms, or 0 when it has none. */
  fieldExpire(f: string): number {
    if (this.ttl === null) return 0;
    return this.ttl.get(f) ?? 0;
  }

  /** Give an existing field an absolute expiry (ms). */
  setFieldExpire(f: string, at: number): void {
    if (this.ttl === null) this.ttl = new Map();
    this.ttl.set(f, at);
    if (at < this.minExp) this.minExp = at;
    if (this.sid !== 0) this.logChange(f);
    if (this.lp !== null) {
      this.lpex = true;
      this.reorder(f, at);
    }
  }

  /** Remove a field's TTL. True if it had one. */
  persistField(f: string): boolean {
    if (this.ttl === null || !this.ttl.has(f)) return false;
    this.dropTtl(f);
    if (this.sid !== 0) this.logChange(f);
    if (this.lp !== null && this.lpex) this.reorder(f, 0);
    return true;
  }

  /** Some field may have expired by `now` (purgeExpired would delete something). */
  mayExpire(now: number): boolean {
    return this.ttl !== null && this.minExp < now;
  }

  /**
   * Delete every field whose expiry has passed (a field expires when its time is strictly
   * before `now`, as Redis's hashTypeIsExpired). Returns the number of fields deleted.
   */
  purgeExpired(now: number): number {
    const ttl = this.ttl;
    if (ttl === null || this.minExp >= now) return 0;
    let n = 0;
    let min = Infinity;
    for (const [f, at] of ttl) {
      if (at < now) {
        ttl.delete(f);
        if (this.lp !== null) this.lp.delete(f);
        else this.ht!.delete(f);
        if (this.sid !== 0) this.logChange(f);
        n++;
      } else if (at < min) {
        min = at;
      }
    }
    this.minExp = min;
    if (ttl.size === 0) this.ttl = null;
    return n;
  }

  private logChange(f: string): void {
    (this.changed ??= new Set()).add(f);
  }

  private dropTtl(f: string): void {
    const ttl = this.ttl!;
    ttl.delete(f);
    if (ttl.size === 0) {
      this.ttl = null;
      this.minExp = Infinity;
    }
  }

  /**
   * listpackex order: fields sorted by expiry, soonest first, those without TTL last. Move `f`
   * before the first field whose expiry is unset or >= `at`; `at` = 0 moves it to the end.
   */
  private reorder(f: string, at: number): void {
    const old = this.lp!;
    const v = old.get(f)!;
    old.delete(f);
    const next = new Map<string, string>();
    let placed = false;
    const ttl = this.ttl;
    for (const [k, kv] of old) {
      if (!placed && at !== 0) {
        const e = ttl === null ? undefined : ttl.get(k);
        if (e === undefined || e >= at) {
          next.set(f, v);
          placed = true;
        }
      }
      next.set(k, kv);
    }
    if (!placed) next.set(f, v);
    this.lp = next;
  }

  private toHashtable(): void {
    const lp = this.lp!;
    const ht = new DenseTable(true);
    for (const [k, v] of lp) ht.set(k, v);
    this.ht = ht;
    this.lp = null;
    this.lpex = false;
  }

  // ------------------------------------------------------------------ persistence (hashCodec)

  /**
   * Whole form: [flags u8: encoding (0 listpack, 1 listpackex, 2 hashtable) | 0x80 when some
   * field has a TTL][count varint] then per field [field][value] (varint length + bytes) and,
   * with 0x80, [expiry u48 LE ms, 0 = none]; in encoding order (HGETALL order survives).
   * Null when the hash is a hashtable too big for it (then it is stored as records).
   */
  storeWhole(): Buffer | null {
    const size = this.size;
    if (this.lp === null) {
      if (size > wholeItems(this.sid)) return null;
      const limit = wholeBytes(this.sid);
      const ht = this.ht!;
      let bytes = 0;
      for (let i = 0; i < ht.size; i++) {
        bytes += ht.dataBytes(i);
        if (bytes > limit) return null;
      }
    }
    this.changed = null;
    const ttl = this.ttl;
    const pk = scratch.reset(256);
    pk.u8((this.lp === null ? 2 : this.lpex ? 1 : 0) | (ttl !== null ? 0x80 : 0));
    pk.varint(size);
    this.forEach((v, f) => {
      pk.str(f);
      pk.str(v);
      if (ttl !== null) pk.u48(ttl.get(f) ?? 0);
    });
    return pk.view();
  }

  static loadWhole(b: Buffer): HashValue {
    const u = new Unpacker(b);
    const flags = u.u8();
    const enc = flags & 3;
    const withTtl = (flags & 0x80) !== 0;
    const n = u.varint();
    const h = new HashValue();
    let lp: Map<string, string> | null = h.lp;
    let ht: DenseTable | null = null;
    if (enc === 2) {
      lp = h.lp = null;
      ht = h.ht = new DenseTable(true);
    }
    h.lpex = enc === 1;
    for (let i = 0; i < n; i++) {
      const f = u.str();
      const v = u.str();
      if (lp !== null) lp.set(f, v);
      else ht!.set(f, v);
      if (withTtl) {
        const at = u.u48();
        if (at !== 0) h.loadTtl(f, at);
      }
    }
    return h;
  }

  /**
   * Records: sub-key = field, value = [0][bytes] or [1][expiry u48 LE ms][bytes]. Emits every
   * field (`all`) or those logged since the last call; clears the log.
   */
  storeRecords(w: ItemWriter, all: boolean): void {
    if (all) {
      this.forEach((v, f) => w.put(sub(f), this.record(f, v)));
    } else if (this.changed !== null) {
      for (const f of this.changed) {
        const v = this.get(f);
        if (v === undefined) w.del(sub(f));
        else w.put(sub(f), this.record(f, v));
      }
    }
    this.changed = null;
  }

  private record(f: string, v: string): Buffer {
    const at = this.ttl === null ? undefined : this.ttl.get(f);
    if (at === undefined) {
      const b = Buffer.allocUnsafe(1 + v.length);
      b[0] = 0;
      b.latin1Write(v, 1, v.length);
      return b;
    }
    const b = Buffer.allocUnsafe(7 + v.length);
    b[0] = 1;
    b.writeUIntLE(at, 1, 6);
    b.latin1Write(v, 7, v.length);
    return b;
  }

  /** A hashtable hash from its records, fed a chunk at a time (the table sized first). */
  static loadBegin(size: number): RecordBuilder<HashValue> {
    const h = new HashValue();
    h.lp = null;
    const ht = h.ht = new DenseTable(true);
    ht.reserve(size);
    return {
      add(sub, value) {
        // Its bytes sized from the first records' (the arena does not double by copying later).
        if (ht.size === EXPECT_AFTER && size > 2 * EXPECT_AFTER) ht.expect(size);
        const f = sub.latin1Slice(0, sub.length);
        if (value[0] === 1) {
          ht.set(f, value.latin1Slice(7, value.length));
          h.loadTtl(f, value.readUIntLE(1, 6));
        } else {
          ht.set(f, value.latin1Slice(1, value.length));
        }
      },
      end() {
        if (ht.size !== size) console.warn(`persistence: a hash has ${ht.size} field records, its metadata says ${size}`);
        return h;
      },
    };
  }

  private loadTtl(f: string, at: number): void {
    (this.ttl ??= new Map()).set(f, at);
    if (at < this.minExp) this.minExp = at;
  }
}

/** Sub-key bytes of a field, in the shared scratch (the store copies it at once). */
function sub(f: string): Buffer {
  const pk = subScratch.reset(f.length);
  pk.raw(f);
  return pk.view();
}

/** How hashes are persisted (registered in BUILTIN_CODECS, src/store/codec.ts). */
export const hashCodec: CollectionCodec<HashValue> = {
  type: T.HASH,
  encodeWhole: (h) => h.storeWhole(),
  size: (h) => h.size,
  writeRecords: (h, w, all) => h.storeRecords(w, all),
  decodeWhole: (b) => HashValue.loadWhole(b),
  loadBegin: (_header, size) => HashValue.loadBegin(size),
  // Fields whose TTL ran out while the server was down go at the first sweep (or access).
  restored: (h, db, key) => trackVolatile(db, key, h),
};

// ---------------------------------------------------------------- active field expiry

/**
 * Hashes with field TTLs and where they were last seen. A background sweep (every 100 ms while
 * any exist, like Redis's active expiry of fields) deletes due fields, and the key when that
 * empties it, even if no client touches the hash. An entry whose key no longer holds that hash
 * (deleted, renamed, flushed) is dropped; the next access under the new name re-registers it.
 */
const volatileHashes = new Map<HashValue, { db: Db; key: string }>();
let sweepTimer: NodeJS.Timeout | null = null;
const SWEEP_MS = 100;
const SWEEP_BUDGET_MS = 10;

/** Register a hash that has field TTLs (no-op otherwise) for the background sweep. */
export function trackVolatile(db: Db, key: string, h: HashValue): void {
  if (!h.volatile) return;
  const seen = volatileHashes.get(h);
  if (seen === undefined || seen.db !== db || seen.key !== key) volatileHashes.set(h, { db, key });
  if (sweepTimer === null) {
    sweepTimer = setTimeout(sweepFields, SWEEP_MS);
    sweepTimer.unref();
  }
}

/** One active-expiry pass over the tracked hashes, within a time budget. */
export function sweepFields(): void {
  sweepTimer = null;
  const now = Date.now();
  const deadline = now + SWEEP_BUDGET_MS;
  let n = 0;
  // Entries re-queued below go after the ones present now: visit only those.
  let todo = volatileHashes.size;
  for (const [h, at] of volatileHashes) {
    if (todo-- === 0) break;
    volatileHashes.delete(h);
    const e = at.db.map.get(at.key);
    if (e === undefined || e.value !== h) continue;
    if (h.mayExpire(now)) at.db.aboutToChange(e);
    if (h.purgeExpired(now) > 0) {
      at.db.event(N.HASH, 'hexpired', at.key);
      if (h.size === 0) at.db.delete(at.key);
      else at.db.modified(at.key);
      if (h.size === 0) at.db.event(N.GENERIC, 'del', at.key);
    }
    // Still volatile: back at the end of the queue.
    if (h.volatile && h.size > 0) volatileHashes.set(h, at);
    if ((++n & 63) === 0 && Date.now() > deadline) break;
  }
  if (volatileHashes.size > 0 && sweepTimer === null) {
    sweepTimer = setTimeout(sweepFields, SWEEP_MS);
    sweepTimer.unref();
  }
}
