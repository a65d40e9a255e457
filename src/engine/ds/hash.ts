/**
 * HashValue: the hash type, with Redis's encodings and per-field expiry (7.4+ HFE).
 *
 *  listpack    small hashes: Redis's own listpack bytes, held as one latin1 string (see
 *              ds/listpack.ts), field, value, field, value... as lpAppend/lpReplace/lpDelete
 *              leave them, so DUMP, RDB export and HGETALL order are Redis's byte for byte.
 *              Reads scan it (as Redis does); a change builds the new string in a scratch.
 *              Up to FLAT_MAX fields: past that (hash-max-listpack-entries is 512) a listpack
 *              hash is a Map in listpack order, as before (a scan in JS costs ~6 ns per entry:
 *              an HGET in a 500-field listpack took 3 µs against 0.3 with the Map).
 *  listpackex  a listpack hash once a field-expiry command touched it: a Map in listpack
 *              order. Redis then keeps the fields ordered by expiry time (soonest first,
 *              fields without TTL last); we rebuild the Map in that order when a TTL changes.
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
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import type { CollectionCodec, ItemWriter, RecordBuilder, StoredValue } from '../../store/codec.js';
import { Unpacker, scratch, subScratch, wholeBytes, wholeItems } from '../../store/packing.js';
import { DenseTable, EXPECT_AFTER } from './dense.js';
import { LPS_EMPTY, lpIntBytes, lpCheckFields, lpDupFields, lpDupState, lpsDupFields, lpsEntryLen, lpsFindBytes, lpsIsText, lpsInt, lpsNext, lpsRead, lpsAfter, lpsStrHeader, lpsText } from './listpack.js';
import { LpWriter } from '../../rdb/listpack.js';
import { IDX_MIN, fieldFind, fieldIndexEdited } from './lp-index.js';
import { N } from '../notify.js';

export interface HashLimits {
  /** hash-max-listpack-entries */
  readonly maxEntries: number;
  /** hash-max-listpack-value */
  readonly maxValue: number;
}

/**
 * Most fields a listpack hash holds as listpack bytes; beyond, a Map in listpack order (same
 * encoding, replies and DUMP bytes). 128 is the hash-max-listpack-entries of Redis's shipped
 * redis.conf: what most listpack hashes in the field hold.
 */
export const FLAT_MAX = 128;
/** The most pairs appendArgs() adds in one build (its field compares are pairwise). */
const NEW_MAX = 16;

/** Scratch of listpack edits: the new listpack is built here, then cut out as a string. */
const W = new LpWriter();
/** Scratch of one new entry (a value replaced in the middle). */
const V = new LpWriter();

/**
 * The listpack string whose bytes W.buf holds at its start (perf: consecutive changes of one
 * hash, as an HSET of several fields, skip copying it in).
 */
let held: string | null = null;

/** W's buffer, with room for n bytes, holding lp's bytes at its start. */
function load(lp: string, n: number): Buffer {
  if (W.buf.length < n) {
    W.buf = Buffer.allocUnsafe(Math.max(n + 64, 2 * W.buf.length));
    held = null;
  }
  if (held !== lp) {
    W.buf.latin1Write(lp, 0);
    held = lp;
  }
  return W.buf;
}

/** The listpack header's total bytes (perf: plain stores; writeUInt32LE validates, slowly). */
function setTotal(b: Buffer, n: number): void {
  b[0] = n & 255;
  b[1] = (n >>> 8) & 255;
  b[2] = (n >>> 16) & 255;
  b[3] = n >>> 24;
}

/** The string of W's finished listpack (n bytes). */
function cut(n: number): string {
  held = W.buf.latin1Slice(0, n);
  return held;
}

/**
 * A hash's field TTLs: field -> absolute expiry (ms), and a lower bound of the soonest one. The
 * bound lives here, not on HashValue (perf: a double field there was a boxed number on every
 * hash, TTLs or not: 100,000 of them after importing 100,000 hashes).
 */
class FieldTtls extends Map<string, number> {
  minExp = Infinity;

  clone(): FieldTtls {
    const c = new FieldTtls(this);
    c.minExp = this.minExp;
    return c;
  }
}

/**
 * The elements of a listpack string as owned strings (not slices that would keep the whole
 * listpack alive): for conversion to another encoding.
 */
function ownedTexts(lp: string): string[] {
  const b = load(lp, lp.length);
  const out: string[] = [];
  const end = lp.length - 1;
  for (let p = 6; p < end; p = lpsNext(lp, p)) {
    const h = lpsStrHeader(lp, p);
    out.push(h === 0 ? lpsText(lp, p) : b.latin1Slice(p + h, p + lpsEntryLen(lp, p)));
  }
  return out;
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
  /** listpack encoding: the listpack's bytes (null otherwise). */
  private lp: string | null = LPS_EMPTY;
  /** Field count of `lp`. */
  private n = 0;
  /** listpackex encoding, or (lxPlain) a listpack hash of more than FLAT_MAX fields. */
  private lx: Map<string, string> | null = null;
  /** `lx` holds a listpack (not listpackex) hash. */
  private lxPlain = false;
  /** hashtable encoding. */
  private ht: DenseTable | null = null;
  /** Field -> absolute expiry (ms); null while no field has a TTL (always null with `lp`). */
  private ttl: FieldTtls | null = null;

  /**
   * A new listpack hash of the first `n` strings of `pairs` (field, value, ...), when they fit
   * the listpack limits; undefined when they do not (build it with set()), null when a field
   * repeats.
   */
  static fromPairs(pairs: readonly string[], n: number, lim: HashLimits): HashValue | null | undefined {
    if (n / 2 > lim.maxEntries) return undefined;
    for (let i = 0; i < n; i++) if (pairs[i].length > lim.maxValue) return undefined;
    W.start();
    for (let i = 0; i < n; i++) W.text(pairs[i]);
    const lp = cut(W.finishLength());
    if (lpsDupFields(lp, n / 2)) return null;
    const h = new HashValue();
    h.lp = lp;
    h.n = n / 2;
    h.capFlat();
    return h;
  }

  /**
   * RESTORE / RDB import of a listpack hash (untrusted bytes b[s, e)), kept as those bytes:
   * validated deeply (structure, back-lengths, count, end byte, duplicate fields) without a
   * string per field. Returns undefined when the listpack is valid but will not be kept as it
   * is (past the limits, or not encoded as Redis would: build it from its elements), null
   * when it is corrupt.
   */
  static fromListpack(b: Buffer, s: number, e: number, lim: HashLimits): HashValue | null | undefined {
    const n = HashValue.checkListpack(b, s, e, lim);
    if (n === null || n === undefined) return n;
    return HashValue.fromCheckedListpack(b, s, e, n);
  }

  /**
   * fromListpack of bytes that checkListpack answered `n` for with the same limits (an RDB
   * import's insert, after its parse checked them: rdb/cli.ts): the same value, unchecked.
   */
  static fromCheckedListpack(b: Buffer, s: number, e: number, n: number): HashValue {
    const h = new HashValue();
    h.lp = b.latin1Slice(s, e);
    h.n = n;
    h.capFlat();
    return h;
  }

  /**
   * fromListpack's checks alone: the field count of the hash it would keep as those bytes,
   * else null or undefined as it (the RDB import's parse, which drops the value: rdb/file.ts).
   */
  static checkListpack(b: Buffer, s: number, e: number, lim: HashLimits): number | null | undefined {
    const k = lpCheckFields(b, s, e);
    if (k === -1) return null;
    if (k === -2) return undefined;
    if (k === 0 || (k & 1) !== 0) return null;
    // By the count alone, as Redis 7.0 loads a listpack: a value longer than
    // hash-max-listpack-value stays in the listpack it came in.
    if (k / 2 > lim.maxEntries) return undefined;
    const dup = lpDupState();
    if (dup === 1 || (dup === 2 && lpDupFields(b, s, e, k / 2))) return null;
    return k / 2;
  }

  get size(): number {
    return this.lp !== null ? this.n : this.lx !== null ? this.lx.size : this.ht!.size;
  }

  encoding(): string {
    return this.lp !== null ? 'listpack' : this.lx !== null ? (this.lxPlain ? 'listpack' : 'listpackex') : 'hashtable';
  }

  get isListpack(): boolean {
    return this.lp !== null || this.lx !== null;
  }

  /** The listpack bytes of a listpack-encoded hash (one char per byte), else null. */
  get listpackBytes(): string | null {
    return this.lp;
  }

  /** True when some field has a TTL. */
  get volatile(): boolean {
    return this.ttl !== null;
  }

  clone(): HashValue {
    const h = new HashValue();
    h.lp = this.lp;
    h.n = this.n;
    if (this.lx !== null) h.lx = new Map(this.lx);
    h.lxPlain = this.lxPlain;
    if (this.ht !== null) h.ht = this.ht.clone();
    if (this.ttl !== null) h.ttl = this.ttl.clone();
    return h;
  }

  /** Position of field f's entry in `listpackBytes`, or -1 (a listpack-encoded hash only). */
  findFlat(f: string): number {
    return fieldFind(this, this.lp!, this.n, f, true);
  }

  /**
   * findFlat() of the field argv[i]: searched from the request's bytes where no field index
   * is used (perf: HGET/HMGET of a small listpack hash, BullMQ's meta key, make no field string).
   */
  findFlatArg(argv: Argv, i: number): number {
    const lp = this.lp!;
    if (this.n < IDX_MIN || lp.length > 65535) return lpsFindBytes(lp, argv.buf, argv.start[i], argv.end[i]);
    return fieldFind(this, lp, this.n, argv.key(i), true);
  }

  get(f: string): string | undefined {
    const lp = this.lp;
    if (lp !== null) {
      const p = fieldFind(this, lp, this.n, f, true);
      return p < 0 ? undefined : lpsText(lp, lpsNext(lp, p));
    }
    return this.lx !== null ? this.lx.get(f) : this.ht!.get(f);
  }

  /** The hashtable of a hash without field TTLs (its entries' bytes are the reply), else null. */
  private plainTable(): DenseTable | null {
    return this.lp === null && this.lx === null && this.ttl === null ? this.ht : null;
  }

  /**
   * HGET / HMGET of field argv[i] of a hashtable hash without field TTLs, replied from the
   * entry's bytes (perf: no field or value string); false when the hash is not of that kind
   * (the caller uses get()).
   */
  replyArg(argv: Argv, i: number, out: ReplySink): boolean {
    const ht = this.plainTable();
    if (ht === null) return false;
    const p = ht.indexOfBytes(argv.buf, argv.start[i], argv.end[i]);
    if (p < 0) out.nil();
    else {
      const o = ht.valueOffset(p);
      out.bulkBytes(ht.arenaBytes, o, o + ht.valueLen);
    }
    return true;
  }

  /**
   * HGETALL / HKEYS / HVALS of a hashtable hash without field TTLs, replied from the entries'
   * bytes in position order (forEach's order; perf: no field or value string); false when the
   * hash is not of that kind (the caller uses forEach()).
   */
  replyAll(out: ReplySink, keys: boolean, values: boolean): boolean {
    const ht = this.plainTable();
    if (ht === null) return false;
    const a = ht.arenaBytes;
    for (let i = 0; i < ht.size; i++) {
      if (keys) {
        const o = ht.keyOffset(i);
        out.bulkBytes(a, o, o + ht.keyLen);
      }
      if (values) {
        const o = ht.valueOffset(i);
        out.bulkBytes(a, o, o + ht.valueLen);
      }
    }
    return true;
  }

  has(f: string): boolean {
    if (this.lp !== null) return fieldFind(this, this.lp, this.n, f, true) >= 0;
    return this.lx !== null ? this.lx.has(f) : this.ht!.has(f);
  }

  /** Visit every field in encoding order. */
  forEach(fn: (value: string, field: string) => void): void {
    const lp = this.lp;
    if (lp !== null) {
      const end = lp.length - 1;
      for (let p = 6; p < end;) {
        const f = lpsRead(lp, p);
        const v = lpsRead(lp, lpsAfter);
        p = lpsAfter;
        fn(v, f);
      }
      return;
    }
    if (this.lx !== null) {
      this.lx.forEach(fn);
      return;
    }
    const ht = this.ht!;
    for (let i = 0; i < ht.size; i++) fn(ht.valAt(i), ht.keyAt(i));
  }

  /** Fields and values of a listpack hash, in order: [f0, v0, f1, v1, ...] (random sampling). */
  pairs(): string[] {
    const out: string[] = [];
    this.forEach((v, f) => {
      out.push(f, v);
    });
    return out;
  }

  /** A uniformly random field (size must be > 0). */
  randomField(): string {
    if (this.ht !== null) return this.ht.keyAt(this.ht.randomIndex());
    let k = Math.floor(Math.random() * this.size);
    const lp = this.lp;
    if (lp !== null) {
      let p = 6;
      while (k-- > 0) p = lpsNext(lp, lpsNext(lp, p));
      return lpsText(lp, p);
    }
    for (const f of this.lx!.keys()) if (k-- === 0) return f;
    throw new Error('randomField on an empty hash');
  }

  /** Hashtable field at a position (with randomIndex-style sampling of big hashes). */
  get table(): DenseTable | null {
    return this.ht;
  }

  // ------------------------------------------------------------------ mutations

  /** hashTypeTryConversion: a field or value of `len` bytes is about to be stored. */
  convertForLength(len: number, lim: HashLimits): void {
    if (this.ht === null && len > lim.maxValue) this.toHashtable();
  }

  /** HSET with more new pairs than a listpack may hold goes straight to hashtable (Redis 7.4+). */
  convertForCount(pairs: number, lim: HashLimits): void {
    if (this.ht === null && pairs > lim.maxEntries) this.toHashtable();
  }

  /**
   * Set a field. Unless `keepTtl`, a TTL on the field is dropped (HSET semantics; HINCRBY keeps
   * it). Returns true when the field is new.
   */
  set(f: string, v: string, lim: HashLimits, keepTtl = false): boolean {
    if (this.ht === null && (f.length > lim.maxValue || v.length > lim.maxValue)) this.toHashtable();
    if (this.sid !== 0) this.logChange(f);
    if (this.lp !== null) {
      if (!this.lpSet(f, v)) return false;
      if (this.n > lim.maxEntries) this.toHashtable();
      else this.capFlat();
      return true;
    }
    const hadTtl = !keepTtl && this.ttl !== null && this.ttl.has(f);
    if (hadTtl) this.dropTtl(f);
    const lx = this.lx;
    if (lx !== null) {
      // Redis re-inserts a field that lost its TTL after the volatile ones: at the end.
      if (hadTtl && lx.delete(f)) {
        lx.set(f, v);
        return false;
      }
      const before = lx.size;
      lx.set(f, v);
      const isNew = lx.size !== before;
      if (isNew && lx.size > lim.maxEntries) this.toHashtable();
      return isNew;
    }
    return this.ht!.set(f, v);
  }

  /**
   * set() of the field and value argv[i], argv[i + 1] (HSET). perf: a listpack hash of a few
   * fields is searched and edited from the request's bytes, with no field or value string.
   */
  setArg(argv: Argv, i: number, lim: HashLimits): boolean {
    const lp = this.lp;
    if (lp === null && this.ht !== null && this.sid === 0 && this.ttl === null) {
      // perf: a hashtable hash (a BullMQ job) written from the request's bytes, as set() would.
      return this.ht.setBytes(argv.buf, argv.start[i], argv.end[i], argv.start[i + 1], argv.end[i + 1]);
    }
    if (lp === null || this.n >= IDX_MIN || this.sid !== 0) return this.set(argv.key(i), argv.key(i + 1), lim);
    const b = argv.buf;
    const fs = argv.start[i];
    const fe = argv.end[i];
    const vs = argv.start[i + 1];
    const ve = argv.end[i + 1];
    if (fe - fs > lim.maxValue || ve - vs > lim.maxValue) return this.set(argv.key(i), argv.key(i + 1), lim);
    const len = lp.length;
    const p = lpsFindBytes(lp, b, fs, fe);
    if (p < 0) {
      load(lp, len);
      W.pos = len - 1;
      W.count = 2 * this.n;
      W.strRange(b, fs, fe);
      W.strRange(b, vs, ve);
      this.lp = cut(W.finishLength());
      this.n++;
      if (this.n > lim.maxEntries) this.toHashtable();
      else this.capFlat();
      return true;
    }
    const vp = lpsNext(lp, p);
    // The same text (an HSET repeating the value): nothing to rebuild.
    if (lpsIsText(lp, vp, b, vs, ve)) return false;
    const vq = lpsNext(lp, vp);
    V.start();
    V.strRange(b, vs, ve);
    if (!this.sameEntry(vp, vq)) this.lpReplaceV(vp, vq);
    return false;
  }

  /**
   * HSET/HMSET of the pairs argv[from..], all new fields, appended to this listpack hash in
   * one build, when the fields are distinct, absent and the hash stays a small listpack;
   * false when that does not apply and nothing changed (the caller sets the pairs one by
   * one). perf: one listpack string, where setArg() cuts one per field (a BullMQ job hash: 6
   * fields at its creation, then 2 when it completes).
   */
  appendArgs(argv: Argv, from: number, lim: HashLimits): boolean {
    const lp = this.lp;
    const pairs = (argv.count - from) >> 1;
    if (lp === null || this.sid !== 0 || pairs > NEW_MAX || this.n + pairs >= IDX_MIN || this.n + pairs > lim.maxEntries) return false;
    const b = argv.buf;
    const st = argv.start;
    const en = argv.end;
    for (let i = from; i < argv.count; i++) if (en[i] - st[i] > lim.maxValue) return false;
    // Distinct fields (byte compares of a few short fields), none in the hash yet.
    for (let i = from; i < argv.count; i += 2) {
      const n = en[i] - st[i];
      for (let j = from; j < i; j += 2) {
        if (en[j] - st[j] !== n) continue;
        let k = 0;
        while (k < n && b[st[i] + k] === b[st[j] + k]) k++;
        if (k === n) return false;
      }
      if (this.n > 0 && lpsFindBytes(lp, b, st[i], en[i]) >= 0) return false;
    }
    const len = lp.length;
    load(lp, len);
    W.pos = len - 1;
    W.count = 2 * this.n;
    for (let i = from; i < argv.count; i++) W.strRange(b, st[i], en[i]);
    this.lp = cut(W.finishLength());
    this.n += pairs;
    return true;
  }

  /** The entry at [vp, ve) of lp has the bytes of the one entry V holds. */
  private sameEntry(vp: number, ve: number): boolean {
    const ins = V.pos - 6;
    if (ins !== ve - vp) return false;
    const lp = this.lp!;
    const vb = V.buf;
    let k = 0;
    while (k < ins && vb[6 + k] === lp.charCodeAt(vp + k)) k++;
    return k === ins;
  }

  /** lpReplace of the value of `f`, or lpAppend of f and v. True when f is new. */
  private lpSet(f: string, v: string): boolean {
    const lp = this.lp!;
    const p = fieldFind(this, lp, this.n, f, false);
    if (p < 0) {
      this.appendField(lp, f);
      W.text(v);
      this.lp = cut(W.finishLength());
      if (this.n >= IDX_MIN) fieldIndexEdited(this, lp, this.lp, true);
      this.n++;
      return true;
    }
    const vp = lpsNext(lp, p);
    const ve = lpsNext(lp, vp);
    V.start();
    V.text(v);
    // The same bytes (an HSET repeating the value): nothing to rebuild.
    if (!this.sameEntry(vp, ve)) this.lpReplaceV(vp, ve);
    return false;
  }

  /** lpAppend's start: W holds listpack `lp` of this hash with field `f` appended; its value comes next. */
  private appendField(lp: string, f: string): void {
    const len = lp.length;
    load(lp, len);
    W.pos = len - 1;
    W.count = 2 * this.n;
    W.text(f);
  }

  /** lpReplace: the entry at [vp, ve) of lp becomes the one entry V holds (one splice, or in place). */
  private lpReplaceV(vp: number, ve: number): void {
    const lp = this.lp!;
    const len = lp.length;
    const vb = V.buf;
    const ins = V.pos - 6;
    const nl = len - (ve - vp) + ins;
    const b = load(lp, Math.max(len, nl));
    if (ve - vp !== ins) {
      b.copyWithin(vp + ins, ve, len);
      setTotal(b, nl);
    }
    if (ins <= 32) for (let k = 0; k < ins; k++) b[vp + k] = vb[6 + k];
    else vb.copy(b, vp, 6, V.pos);
    this.lp = cut(nl);
    if (this.n >= IDX_MIN) fieldIndexEdited(this, lp, this.lp, nl !== len);
  }

  /**
   * HINCRBY on a listpack hash (perf): when `f` exists, its value is an integer entry and the
   * sum stays within ±2^53 (and its text within hash-max-listpack-value), the new integer is
   * written over the old entry (a splice only when its width changes; no string, no BigInt)
   * and the sum returned; a new field is appended with `by`. Otherwise null and nothing
   * changed: the caller takes the general path (a value that is not an integer, overflow,
   * conversion).
   */
  incrFlat(f: string, by: number, lim: HashLimits): number | null {
    const lp = this.lp;
    if (lp === null) return null;
    const maxValue = lim.maxValue;
    const p = fieldFind(this, lp, this.n, f, false);
    if (p < 0) {
      // A new field (BullMQ's "ats"): appended with `by` as its value, in one build, when the
      // hash stays a small listpack (else the general path converts it).
      if (this.sid !== 0 || this.n + 1 >= IDX_MIN || this.n + 1 > lim.maxEntries || f.length > maxValue) return null;
      if (maxValue < 17 && decimalLength(by) > maxValue) return null;
      this.appendField(lp, f);
      W.int(by);
      this.lp = cut(W.finishLength());
      this.n++;
      return by;
    }
    const vp = lpsNext(lp, p);
    if (lpsStrHeader(lp, vp) !== 0) return null;
    const cur = lpsInt(lp, vp);
    if (typeof cur !== 'number') return null;
    const sum = cur + by;
    if (sum > 9007199254740991 || sum < -9007199254740991) return null;
    if (maxValue < 17 && decimalLength(sum) > maxValue) return null;
    if (this.sid !== 0) this.logChange(f);
    const ve = lpsNext(lp, vp);
    if (ve - vp === lpIntBytes(sum) + 1 && ve - vp < 10) {
      // The same width: the bytes overwritten in place (no writer, no splice).
      const len = lp.length;
      putInt(load(lp, len), vp, sum);
      this.lp = cut(len);
      if (this.n >= IDX_MIN) fieldIndexEdited(this, lp, this.lp, false);
      return sum;
    }
    V.start();
    V.int(sum);
    this.lpReplaceV(vp, ve);
    return sum;
  }

  /** Delete a field. True if it existed. */
  delete(f: string): boolean {
    let ok: boolean;
    const lp = this.lp;
    if (lp !== null) {
      const p = fieldFind(this, lp, this.n, f, false);
      ok = p >= 0;
      if (ok) {
        const len = lp.length;
        const ve = lpsNext(lp, lpsNext(lp, p));
        const b = load(lp, len);
        b.copyWithin(p, ve, len);
        const nl = len - (ve - p);
        this.n--;
        setTotal(b, nl);
        const c = Math.min(2 * this.n, 65535);
        b[4] = c & 255;
        b[5] = c >>> 8;
        this.lp = cut(nl);
        if (this.n + 1 >= IDX_MIN) fieldIndexEdited(this, lp, this.lp, true);
      }
    } else {
      ok = this.lx !== null ? this.lx.delete(f) : this.ht!.delete(f);
    }
    if (ok && this.ttl !== null) this.dropTtl(f);
    if (ok && this.sid !== 0) this.logChange(f);
    return ok;
  }

  /** The listpack becomes listpackex (hashTypeSetExInit / attachHfeMeta). */
  markFieldExpiry(): void {
    this.lxPlain = false;
    if (this.lp !== null) this.toMap();
  }

  /** A flat listpack of more than FLAT_MAX fields becomes a Map in listpack order. */
  private capFlat(): void {
    if (this.n <= FLAT_MAX || this.lp === null) return;
    this.toMap();
    this.lxPlain = true;
  }

  private toMap(): void {
    const t = ownedTexts(this.lp!);
    const lx = new Map<string, string>();
    for (let i = 0; i < t.length; i += 2) lx.set(t[i], t[i + 1]);
    if (this.n >= IDX_MIN) fieldIndexEdited(this, this.lp!, null, true);
    this.lx = lx;
    this.lp = null;
    this.n = 0;
  }

  /** Absolute expiry of a field in ms, or 0 when it has none. */
  fieldExpire(f: string): number {
    if (this.ttl === null) return 0;
    return this.ttl.get(f) ?? 0;
  }

  /** Give an existing field an absolute expiry (ms). */
  setFieldExpire(f: string, at: number): void {
    this.markFieldExpiry();
    (this.ttl ??= new FieldTtls()).set(f, at);
    if (at < this.ttl.minExp) this.ttl.minExp = at;
    if (this.sid !== 0) this.logChange(f);
    if (this.lx !== null) this.reorder(f, at);
  }

  /** Remove a field's TTL. True if it had one. */
  persistField(f: string): boolean {
    if (this.ttl === null || !this.ttl.has(f)) return false;
    this.dropTtl(f);
    if (this.sid !== 0) this.logChange(f);
    if (this.lx !== null) this.reorder(f, 0);
    return true;
  }

  /** Some field may have expired by `now` (purgeExpired would delete something). */
  mayExpire(now: number): boolean {
    return this.ttl !== null && this.ttl.minExp < now;
  }

  /**
   * Delete every field whose expiry has passed (a field expires when its time is strictly
   * before `now`, as Redis's hashTypeIsExpired). Returns the number of fields deleted.
   */
  purgeExpired(now: number): number {
    const ttl = this.ttl;
    if (ttl === null || ttl.minExp >= now) return 0;
    let n = 0;
    let min = Infinity;
    for (const [f, at] of ttl) {
      if (at < now) {
        ttl.delete(f);
        if (this.lx !== null) this.lx.delete(f);
        else this.ht!.delete(f);
        if (this.sid !== 0) this.logChange(f);
        n++;
      } else if (at < min) {
        min = at;
      }
    }
    ttl.minExp = min;
    if (ttl.size === 0) this.ttl = null;
    return n;
  }

  private logChange(f: string): void {
    (this.changed ??= new Set()).add(f);
  }

  private dropTtl(f: string): void {
    const ttl = this.ttl!;
    ttl.delete(f);
    if (ttl.size === 0) this.ttl = null;
  }

  /**
   * listpackex order: fields sorted by expiry, soonest first, those without TTL last. Move `f`
   * before the first field whose expiry is unset or >= `at`; `at` = 0 moves it to the end.
   */
  private reorder(f: string, at: number): void {
    const old = this.lx!;
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
    this.lx = next;
  }

  private toHashtable(): void {
    const ht = new DenseTable(true);
    if (this.lp !== null) {
      const t = ownedTexts(this.lp);
      for (let i = 0; i < t.length; i += 2) ht.set(t[i], t[i + 1]);
      if (this.n >= IDX_MIN) fieldIndexEdited(this, this.lp, null, true);
    } else {
      for (const [k, v] of this.lx!) ht.set(k, v);
    }
    this.ht = ht;
    this.lp = null;
    this.n = 0;
    this.lx = null;
    this.lxPlain = false;
  }

  // ------------------------------------------------------------------ persistence (hashCodec)

  /**
   * Whole form: [flags u8] then either, with flags 3 (a listpack hash), its listpack bytes; or
   * [count varint] then per field [field][value] (varint length + bytes) and, with 0x80,
   * [expiry u48 LE ms, 0 = none], in encoding order (HGETALL order survives), with flags =
   * encoding (0 listpack: written before listpack bytes were kept, and for a listpack of more
   * than FLAT_MAX fields; 1 listpackex, 2 hashtable)
   * | 0x80 when some field has a TTL. Null when the hash is a hashtable too big for it (then
   * it is stored as records).
   */
  storeWhole(): Buffer | null {
    const size = this.size;
    const lp = this.lp;
    if (lp !== null) {
      this.changed = null;
      const pk = scratch.reset(lp.length + 1);
      pk.u8(3);
      pk.raw(lp);
      return pk.view();
    }
    if (this.ht !== null) {
      if (size > wholeItems(this.sid)) return null;
      const limit = wholeBytes(this.sid);
      const ht = this.ht;
      let bytes = 0;
      for (let i = 0; i < ht.size; i++) {
        bytes += ht.dataBytes(i);
        if (bytes > limit) return null;
      }
    }
    this.changed = null;
    const ttl = this.ttl;
    const pk = scratch.reset(256);
    pk.u8((this.ht !== null ? 2 : this.lxPlain ? 0 : 1) | (ttl !== null ? 0x80 : 0));
    pk.varint(size);
    this.forEach((v, f) => {
      pk.str(f);
      pk.str(v);
      if (ttl !== null) pk.u48(ttl.get(f) ?? 0);
    });
    return pk.view();
  }

  static loadWhole(b: Buffer): HashValue {
    const flags = b[0];
    const h = new HashValue();
    if (flags === 3) {
      // Our own bytes: canonical, checked only for the count.
      const lp = b.latin1Slice(1, b.length);
      h.lp = lp;
      let n = lp.charCodeAt(4) | (lp.charCodeAt(5) << 8);
      if (n === 65535) {
        n = 0;
        for (let p = 6; p < lp.length - 1; p = lpsNext(lp, p)) n++;
      }
      h.n = n / 2;
      h.capFlat();
      return h;
    }
    const u = new Unpacker(b);
    u.u8();
    const enc = flags & 3;
    const withTtl = (flags & 0x80) !== 0;
    const n = u.varint();
    if (enc === 0 && !withTtl) {
      // The form written before listpack bytes were kept: the pairs, made a listpack here.
      const pairs: string[] = [];
      for (let i = 0; i < n; i++) pairs.push(u.str(), u.str());
      W.start();
      for (let i = 0; i < pairs.length; i++) W.text(pairs[i]);
      h.lp = cut(W.finishLength());
      h.n = n;
      h.capFlat();
      return h;
    }
    h.lp = null;
    let lx: Map<string, string> | null = null;
    let ht: DenseTable | null = null;
    if (enc === 2) ht = h.ht = new DenseTable(true);
    else lx = h.lx = new Map();
    for (let i = 0; i < n; i++) {
      const f = u.str();
      const v = u.str();
      if (lx !== null) lx.set(f, v);
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
    (this.ttl ??= new FieldTtls()).set(f, at);
    if (at < this.ttl.minExp) this.ttl.minExp = at;
  }
}

/**
 * The listpack entry of v at b[p] (as LpWriter.int lays it out), v within 32 bits; a 64-bit
 * one (size 10) goes through the writer.
 */
function putInt(b: Buffer, p: number, v: number): void {
  if (v >= 0 && v <= 127) {
    b[p] = v;
    b[p + 1] = 1;
  } else if (v >= -4096 && v <= 4095) {
    const u = v < 0 ? v + 8192 : v;
    b[p] = (u >>> 8) | 0xc0;
    b[p + 1] = u & 255;
    b[p + 2] = 2;
  } else if (v >= -32768 && v <= 32767) {
    b[p] = 0xf1;
    b[p + 1] = v & 255;
    b[p + 2] = (v >> 8) & 255;
    b[p + 3] = 3;
  } else if (v >= -8388608 && v <= 8388607) {
    b[p] = 0xf2;
    b[p + 1] = v & 255;
    b[p + 2] = (v >> 8) & 255;
    b[p + 3] = (v >> 16) & 255;
    b[p + 4] = 4;
  } else {
    b[p] = 0xf3;
    b[p + 1] = v & 255;
    b[p + 2] = (v >> 8) & 255;
    b[p + 3] = (v >> 16) & 255;
    b[p + 4] = (v >> 24) & 255;
    b[p + 5] = 5;
  }
}

/** Chars of the decimal text of a safe integer. */
function decimalLength(v: number): number {
  let n = v < 0 ? 2 : 1;
  for (let a = Math.abs(v); a >= 10; a = Math.floor(a / 10)) n++;
  return n;
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
