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
 * Fields are latin1 strings (one char per byte, exact), values immutable Buffers. Every
 * mutation is a method of this class (persistence hooks a per-field change log here); the
 * command layer calls db.modified() after each successful change.
 */
import { T, type TypedValue } from '../db.js';
import { DenseTable } from './dense.js';

export interface HashLimits {
  /** hash-max-listpack-entries */
  readonly maxEntries: number;
  /** hash-max-listpack-value */
  readonly maxValue: number;
}

export class HashValue implements TypedValue {
  readonly type = T.HASH;
  /** listpack / listpackex encoding (null once converted). */
  private lp: Map<string, Buffer> | null = new Map();
  /** hashtable encoding. */
  private ht: DenseTable<Buffer> | null = null;
  /** A field-expiry command converted this listpack to listpackex. */
  private lpex = false;
  /** Field -> absolute expiry (ms); null while no field has a TTL. */
  private ttl: Map<string, number> | null = null;
  /** Lower bound of the soonest expiry in `ttl` (Infinity when none). */
  private minExp = Infinity;

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
      h.ht = new DenseTable<Buffer>(true);
      const keys = this.ht!.keys;
      const vals = this.ht!.vals!;
      for (let i = 0; i < keys.length; i++) h.ht.set(keys[i], vals[i]);
    }
    h.lpex = this.lpex;
    if (this.ttl !== null) h.ttl = new Map(this.ttl);
    h.minExp = this.minExp;
    return h;
  }

  get(f: string): Buffer | undefined {
    return this.lp !== null ? this.lp.get(f) : this.ht!.get(f);
  }

  has(f: string): boolean {
    return this.lp !== null ? this.lp.has(f) : this.ht!.has(f);
  }

  /** Visit every field in encoding order. */
  forEach(fn: (value: Buffer, field: string) => void): void {
    if (this.lp !== null) {
      this.lp.forEach(fn);
      return;
    }
    const keys = this.ht!.keys;
    const vals = this.ht!.vals!;
    for (let i = 0; i < keys.length; i++) fn(vals[i], keys[i]);
  }

  /** All fields, in encoding order (random sampling of small hashes). */
  fields(): string[] {
    return this.lp !== null ? Array.from(this.lp.keys()) : this.ht!.keys.slice();
  }

  /** A uniformly random field (size must be > 0). */
  randomField(): string {
    if (this.ht !== null) return this.ht.keys[this.ht.randomIndex()];
    let k = Math.floor(Math.random() * this.lp!.size);
    for (const f of this.lp!.keys()) if (k-- === 0) return f;
    throw new Error('randomField on an empty hash');
  }

  /** Hashtable field at a position (with randomIndex-style sampling of big hashes). */
  get table(): DenseTable<Buffer> | null {
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
  set(f: string, v: Buffer, lim: HashLimits, keepTtl = false): boolean {
    if (this.lp !== null && (f.length > lim.maxValue || v.length > lim.maxValue)) this.toHashtable();
    const hadTtl = !keepTtl && this.ttl !== null && this.ttl.has(f);
    if (hadTtl) this.dropTtl(f);
    const lp = this.lp;
    if (lp !== null) {
      const isNew = !lp.has(f);
      if (hadTtl && this.lpex) {
        // Redis re-inserts a field that lost its TTL after the volatile ones: at the end.
        lp.delete(f);
      }
      lp.set(f, v);
      if (lp.size > lim.maxEntries) this.toHashtable();
      return isNew;
    }
    return this.ht!.set(f, v);
  }

  /** Delete a field. True if it existed. */
  delete(f: string): boolean {
    const ok = this.lp !== null ? this.lp.delete(f) : this.ht!.delete(f);
    if (ok && this.ttl !== null) this.dropTtl(f);
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
    if (this.lp !== null) {
      this.lpex = true;
      this.reorder(f, at);
    }
  }

  /** Remove a field's TTL. True if it had one. */
  persistField(f: string): boolean {
    if (this.ttl === null || !this.ttl.has(f)) return false;
    this.dropTtl(f);
    if (this.lp !== null && this.lpex) this.reorder(f, 0);
    return true;
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
        n++;
      } else if (at < min) {
        min = at;
      }
    }
    this.minExp = min;
    if (ttl.size === 0) this.ttl = null;
    return n;
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
    const next = new Map<string, Buffer>();
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
    const ht = new DenseTable<Buffer>(true);
    for (const [k, v] of lp) ht.set(k, v);
    this.ht = ht;
    this.lp = null;
    this.lpex = false;
  }
}
