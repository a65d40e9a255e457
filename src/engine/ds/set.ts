/**
 * SetValue: the set type with Redis 7.2+'s three encodings (and a small form of the third).
 *
 *  intset     every member is a canonical 64-bit integer (string2ll rules) and there are at
 *             most set-max-intset-entries of them: a sorted BigInt64Array, so members come
 *             out in ascending numeric order exactly as Redis's intset.
 *  listpack   small sets (set-max-listpack-entries members of at most set-max-listpack-value
 *             bytes): an insertion-ordered Set, Redis's listpack order.
 *  hashtable  everything else (DenseTable: members as bytes in an arena, O(1) random member,
 *             scan-stable). Order unspecified. Up to 16 members of up to 64 bytes: a packed
 *             string instead (ENC_SMALL below), still a hashtable to every observer.
 *
 * Conversions follow t_set.c: setTypeCreate picks the first encoding from the first member and
 * the number of members being added; intset -> listpack|hashtable when a non-integer arrives;
 * intset -> hashtable past the intset limit; listpack -> hashtable past its limits. Sets never
 * convert back except through SPOP's "keep the remaining members in a new set" strategy.
 *
 * Members are latin1 strings (one char per byte). Every mutation is a method of this class.
 *
 * Persistence (the contract of src/store/codec.ts): `setCodec` at the bottom. Intset and
 * listpack sets and small hashtables are stored whole; bigger ones as one record per member,
 * and while they are (`sid !== 0`) every mutation logs the member it added or removed, so a
 * write costs one record whatever the size of the set.
 */
import { T } from '../db.js';
import type { CollectionCodec, ItemWriter, RecordBuilder, StoredValue } from '../../store/codec.js';
import { EMPTY, Unpacker, scratch, subScratch, wholeBytes, wholeItems } from '../../store/packing.js';
import { DenseTable, EXPECT_AFTER } from './dense.js';
import { parseInt64 } from '../../resp/ascii.js';
import { latin1 } from '../../resp/argv.js';

export interface SetLimits {
  /** set-max-intset-entries */
  readonly maxIntset: number;
  /** set-max-listpack-entries */
  readonly maxEntries: number;
  /** set-max-listpack-value */
  readonly maxValue: number;
}

const I64_MAX = 9223372036854775807n;
const I64_MIN = -9223372036854775808n;

/** string2ll on a latin1 string: the int64 value, or null when not a canonical integer. */
export function int64Of(s: string): bigint | null {
  const n = s.length;
  if (n === 0 || n > 20) return null;
  let p = 0;
  if (s.charCodeAt(0) === 45) {
    if (n === 1) return null;
    p = 1;
  }
  const c0 = s.charCodeAt(p);
  if (c0 === 48) return n === 1 ? 0n : null;
  if (c0 < 49 || c0 > 57) return null;
  for (let i = p + 1; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const v = BigInt(s);
  return v > I64_MAX || v < I64_MIN ? null : v;
}

/** Number of characters of an int64 in decimal, sign included (sdigits10). */
function digits(v: bigint): number {
  return (v < 0n ? -v : v).toString().length + (v < 0n ? 1 : 0);
}

const ENC_INTSET = 0;
const ENC_LISTPACK = 1;
const ENC_HT = 2;
/**
 * A small "hashtable" set (what Redis 7.0 makes of a set of strings): up to SMALL_ENTRIES
 * members of at most SMALL_VALUE bytes packed in one latin1 string, each as [length char]
 * [bytes], in position order. Sets of strings are mostly small and many; a DenseTable costs
 * ~700 B of objects and arrays before its first member, this ~100 B. It reports itself as a
 * hashtable (OBJECT ENCODING, DUMP, MEMORY USAGE see no difference) and becomes a DenseTable
 * past those limits, never back. 16, not 8 (perf): a BullMQ flow parent's dependencies set
 * of 9 children converted at its 9th SADD, ~4 us (a table, its index and arena, off-heap).
 */
const ENC_SMALL = 3;
const SMALL_ENTRIES = 16;
const SMALL_VALUE = 64;

/** Limits under which insert() takes a small set's members as they come. */
const NO_LISTPACK: SetLimits = { maxIntset: 0, maxEntries: 0, maxValue: 0 };

export class SetValue implements StoredValue {
  readonly type = T.SET;
  /** Memory accounting (memory.ts): the charge, and the size and average (x16) it was sampled at. */
  mem = 0;
  memN = -1;
  memAvg = 0;
  /** Object id of its item records in the store; 0 = none (stored whole, or not stored). */
  sid = 0;
  /** Members added or removed since the store last wrote the records (only while sid !== 0). */
  private changed: Set<string> | null = null;
  private enc: number;
  /** intset: sorted values in ints[0..n). */
  private ints: BigInt64Array | null = null;
  /** Members of an intset or a small set. */
  private n = 0;
  /** Small set: the packed members. */
  private pk = '';
  private lp: Set<string> | null = null;
  private ht: DenseTable | null = null;

  private constructor(enc: number, ints: BigInt64Array | null = null) {
    this.enc = enc;
    if (enc === ENC_INTSET) this.ints = ints ?? new BigInt64Array(8);
    else if (enc === ENC_LISTPACK) this.lp = new Set();
    else if (enc === ENC_HT) this.ht = new DenseTable(false);
  }

  /** setTypeCreate: the encoding for a new set whose first member is `first`. */
  static create(first: string, sizeHint: number, lim: SetLimits): SetValue {
    // Without listpack sets (Redis 7.0: maxEntries 0) the first member alone decides, as
    // 7.0's setTypeCreate; 7.2 also sizes the set from the number of members added.
    if (int64Of(first) !== null && (sizeHint <= lim.maxIntset || lim.maxEntries === 0)) return new SetValue(ENC_INTSET);
    return SetValue.strings(sizeHint, lim);
  }

  /** A new set of strings for `sizeHint` members: listpack (7.2 limits), small or hashtable. */
  private static strings(sizeHint: number, lim: SetLimits): SetValue {
    if (sizeHint <= lim.maxEntries) return new SetValue(ENC_LISTPACK);
    return new SetValue(sizeHint <= SMALL_ENTRIES ? ENC_SMALL : ENC_HT);
  }

  /** create() for a first member given as the bytes b[s, e). */
  static createBytes(b: Buffer, s: number, e: number, sizeHint: number, lim: SetLimits): SetValue {
    if (parseInt64(b, s, e) !== null && (sizeHint <= lim.maxIntset || lim.maxEntries === 0)) return new SetValue(ENC_INTSET);
    return SetValue.strings(sizeHint, lim);
  }

  /** An intset of the first `n` values of `ints`, sorted and distinct (the caller checked). */
  static fromSortedInts(ints: BigInt64Array, n: number): SetValue {
    const s = new SetValue(ENC_INTSET, ints);
    s.n = n;
    return s;
  }

  /** An empty intset (SINTERSTORE & co build their result from one, as Redis does). */
  static intset(): SetValue {
    return new SetValue(ENC_INTSET);
  }

  get size(): number {
    const enc = this.enc;
    return enc === ENC_INTSET || enc === ENC_SMALL ? this.n : enc === ENC_LISTPACK ? this.lp!.size : this.ht!.size;
  }

  encoding(): string {
    return this.enc === ENC_INTSET ? 'intset' : this.enc === ENC_LISTPACK ? 'listpack' : 'hashtable';
  }

  get isIntset(): boolean {
    return this.enc === ENC_INTSET;
  }

  get isListpack(): boolean {
    return this.enc === ENC_LISTPACK;
  }

  clone(): SetValue {
    const s = new SetValue(this.enc);
    if (this.enc === ENC_INTSET) {
      s.ints = this.ints!.slice();
      s.n = this.n;
    } else if (this.enc === ENC_LISTPACK) {
      s.lp = new Set(this.lp);
    } else if (this.enc === ENC_SMALL) {
      s.pk = this.pk;
      s.n = this.n;
    } else {
      s.ht = this.ht!.clone();
    }
    return s;
  }

  has(m: string): boolean {
    if (this.enc === ENC_SMALL) return this.smallFind(m) >= 0;
    if (this.enc === ENC_INTSET) {
      const v = int64Of(m);
      return v !== null && this.find(v) >= 0;
    }
    return this.enc === ENC_LISTPACK ? this.lp!.has(m) : this.ht!.has(m);
  }

  /** has() of the bytes b[s, e) (perf: a request's argument, no string for a hashtable or intset). */
  hasBytes(b: Buffer, s: number, e: number): boolean {
    if (this.enc === ENC_SMALL) return this.smallFindBytes(b, s, e) >= 0;
    if (this.enc === ENC_HT) return this.ht!.indexOfBytes(b, s, e) >= 0;
    if (this.enc === ENC_INTSET) {
      const v = parseInt64(b, s, e);
      return v !== null && this.find(v) >= 0;
    }
    return this.lp!.has(latin1(b, s, e));
  }

  /** Visit every member in encoding order. */
  forEach(fn: (m: string) => void): void {
    if (this.enc === ENC_INTSET) {
      const a = this.ints!;
      for (let i = 0; i < this.n; i++) fn(String(a[i]));
    } else if (this.enc === ENC_LISTPACK) {
      this.lp!.forEach(fn);
    } else if (this.enc === ENC_SMALL) {
      const pk = this.pk;
      for (let o = 0; o < pk.length; o += pk.charCodeAt(o) + 1) fn(pk.substr(o + 1, pk.charCodeAt(o)));
    } else {
      const ht = this.ht!;
      for (let i = 0; i < ht.size; i++) fn(ht.keyAt(i));
    }
  }

  /** All members in encoding order. */
  members(): string[] {
    if (this.enc === ENC_INTSET) {
      const out = new Array<string>(this.n);
      for (let i = 0; i < this.n; i++) out[i] = String(this.ints![i]);
      return out;
    }
    if (this.enc === ENC_SMALL) {
      const out: string[] = [];
      this.forEach((m) => out.push(m));
      return out;
    }
    return this.enc === ENC_LISTPACK ? Array.from(this.lp!) : this.ht!.keys();
  }

  /** A uniformly random member (size must be > 0). */
  random(): string {
    if (this.enc === ENC_INTSET) return String(this.ints![Math.floor(Math.random() * this.n)]);
    if (this.enc === ENC_HT) return this.ht!.keyAt(this.ht!.randomIndex());
    if (this.enc === ENC_SMALL) {
      const pk = this.pk;
      let o = 0;
      for (let k = Math.floor(Math.random() * this.n); k > 0; k--) o += pk.charCodeAt(o) + 1;
      return pk.substr(o + 1, pk.charCodeAt(o));
    }
    let k = Math.floor(Math.random() * this.lp!.size);
    for (const m of this.lp!) if (k-- === 0) return m;
    throw new Error('random on an empty set');
  }

  /**
   * Memory sampling (memory.ts): the sum of size(length) over k members (0 < k <= size), no
   * member string made: every member when k covers the set (as Redis's objectComputeSize then
   * sums), else k evenly spaced positions. Intset and listpack sets are not sampled this way.
   */
  sampleLengths(k: number, size: (len: number) => number): number {
    const count = this.size;
    let t = 0;
    if (this.enc === ENC_HT) {
      const ht = this.ht!;
      for (let i = 0; i < k; i++) t += size(ht.keyLength(Math.floor(((i + 0.5) * count) / k)));
      return t;
    }
    // A small set: one pass over its packed entries, taking the positions wanted in order.
    const pk = this.pk;
    for (let o = 0, p = 0, i = 0; i < k; o += pk.charCodeAt(o) + 1, p++) {
      if (p === Math.floor(((i + 0.5) * count) / k)) {
        t += size(pk.charCodeAt(o));
        i++;
      }
    }
    return t;
  }

  /** An intset's bytes per member: the width its smallest and largest members need (_intsetValueEncoding). */
  intWidth(): number {
    const n = this.n;
    if (n === 0) return 2;
    const lo = this.ints![0];
    const hi = this.ints![n - 1];
    if (lo < -2147483648n || hi > 2147483647n) return 8;
    if (lo < -32768n || hi > 32767n) return 4;
    return 2;
  }

  /**
   * SRANDMEMBER with a positive count below the size: `count` distinct random members. Listpack
   * sets return them in listpack order (Redis samples listpacks in one ordered pass).
   */
  randomDistinct(count: number): string[] {
    const size = this.size;
    if (this.enc === ENC_HT) {
      const ht = this.ht!;
      const picked = pickIndexes(size, count);
      const out = new Array<string>(count);
      for (let i = 0; i < count; i++) out[i] = ht.keyAt(picked[i]);
      return out;
    }
    const all = this.members();
    const picked = pickIndexes(size, count);
    if (this.enc === ENC_LISTPACK) picked.sort((a, b) => a - b);
    const out = new Array<string>(count);
    for (let i = 0; i < count; i++) out[i] = all[picked[i]];
    return out;
  }

  /**
   * SMEMBERS-style scan: intset and listpack sets return everything at once (cursor 0, as
   * Redis); hashtables walk `count` positions. Returns the next cursor.
   */
  scan(cursor: number, count: number, fn: (m: string) => void): number {
    if (this.enc === ENC_SMALL) {
      // A hashtable's walk (DenseTable.scan): positions from the top down. A removal shifts the
      // members above it down one, so one present throughout is never skipped.
      const all = this.members();
      let i = cursor === 0 ? all.length - 1 : Math.min(cursor - 1, all.length - 1);
      for (let k = 0; i >= 0 && k < count; k++, i--) fn(all[i]);
      return i < 0 ? 0 : i + 1;
    }
    if (this.enc !== ENC_HT) {
      this.forEach(fn);
      return 0;
    }
    const ht = this.ht!;
    return ht.scan(cursor, count, (i) => fn(ht.keyAt(i)));
  }

  // ------------------------------------------------------------------ mutations

  /** setTypeMaybeConvert: about to add `sizeHint` members. */
  maybeConvert(sizeHint: number, lim: SetLimits): void {
    if ((this.enc === ENC_LISTPACK && sizeHint > lim.maxEntries) ||
        (this.enc === ENC_INTSET && sizeHint > lim.maxIntset)) {
      this.toHashtable();
    }
  }

  /** Add a member. True if it was not there. */
  add(m: string, lim: SetLimits): boolean {
    const added = this.insert(m, lim);
    if (added && this.sid !== 0) this.logChange(m);
    return added;
  }

  /**
   * add() of the bytes b[s, e): a hashtable or intset takes them without a string (one is made
   * for the change log of a set stored as records, and for conversions).
   */
  addBytes(b: Buffer, s: number, e: number, lim: SetLimits): boolean {
    if (this.enc === ENC_SMALL) {
      if (this.smallFindBytes(b, s, e) >= 0) return false;
      if (this.n < SMALL_ENTRIES && e - s <= SMALL_VALUE) {
        const m = latin1(b, s, e);
        this.pk += String.fromCharCode(e - s) + m;
        this.n++;
        if (this.sid !== 0) this.logChange(m);
        return true;
      }
      this.toHashtable();
    }
    if (this.enc === ENC_HT) {
      if (!this.ht!.addBytes(b, s, e)) return false;
      if (this.sid !== 0) this.logChange(latin1(b, s, e));
      return true;
    }
    if (this.enc === ENC_INTSET) {
      const v = parseInt64(b, s, e);
      if (v !== null) {
        const added = this.insertInt64(v, lim);
        if (added && this.sid !== 0) this.logChange(String(v));
        return added;
      }
    }
    return this.add(latin1(b, s, e), lim);
  }

  /** remove() of the bytes b[s, e). */
  removeBytes(b: Buffer, s: number, e: number): boolean {
    if (this.enc === ENC_SMALL) {
      const o = this.smallFindBytes(b, s, e);
      if (o < 0) return false;
      if (this.sid !== 0) this.logChange(latin1(b, s, e));
      this.smallRemoveAt(o);
      return true;
    }
    if (this.enc !== ENC_HT) return this.remove(latin1(b, s, e));
    if (!this.ht!.deleteBytes(b, s, e)) return false;
    if (this.sid !== 0) this.logChange(latin1(b, s, e));
    return true;
  }

  /** The integer v into an intset (which may then become a hashtable). True if new. */
  private insertInt64(v: bigint, lim: SetLimits): boolean {
    const i = this.find(v);
    if (i >= 0) return false;
    this.insertInt(-i - 1, v);
    if (this.n > Math.min(lim.maxIntset, 1 << 30)) this.toHashtable();
    return true;
  }

  private insert(m: string, lim: SetLimits): boolean {
    if (this.enc === ENC_INTSET) {
      const v = int64Of(m);
      if (v !== null) return this.insertInt64(v, lim);
      // A non-integer: listpack if everything (the widest integer included) still fits.
      const n = this.n;
      const widest = n === 0 ? 0 : Math.max(digits(this.ints![0]), digits(this.ints![n - 1]));
      if (n < lim.maxEntries && m.length <= lim.maxValue && widest <= lim.maxValue) this.toListpack();
      else if (n < SMALL_ENTRIES && m.length <= SMALL_VALUE) this.toSmall();
      else this.toHashtable();
    }
    if (this.enc === ENC_SMALL) {
      if (this.smallFind(m) >= 0) return false;
      if (this.n < SMALL_ENTRIES && m.length <= SMALL_VALUE) {
        this.pk += String.fromCharCode(m.length) + m;
        this.n++;
        return true;
      }
      this.toHashtable();
    }
    if (this.enc === ENC_LISTPACK) {
      const lp = this.lp!;
      if (lp.has(m)) return false;
      if (lp.size < lim.maxEntries && m.length <= lim.maxValue) {
        lp.add(m);
        return true;
      }
      this.toHashtable();
    }
    return this.ht!.add(m);
  }

  /** Remove a member. True if it was there. */
  remove(m: string): boolean {
    const removed = this.delete(m);
    if (removed && this.sid !== 0) this.logChange(m);
    return removed;
  }

  private delete(m: string): boolean {
    if (this.enc === ENC_SMALL) {
      const o = this.smallFind(m);
      if (o < 0) return false;
      this.smallRemoveAt(o);
      return true;
    }
    if (this.enc === ENC_INTSET) {
      const v = int64Of(m);
      if (v === null) return false;
      const i = this.find(v);
      if (i < 0) return false;
      this.ints!.copyWithin(i, i + 1, this.n);
      this.n--;
      return true;
    }
    return this.enc === ENC_LISTPACK ? this.lp!.delete(m) : this.ht!.delete(m);
  }

  /** SPOP: remove and return one random member (size must be > 0). */
  pop(): string {
    const m = this.random();
    this.remove(m);
    return m;
  }

  /**
   * SPOP with 0 < count < size, following spopWithCountCommand's strategies: pop members one
   * by one while many remain; otherwise move the few remaining members into a fresh set
   * (which may get a smaller encoding) and return the rest. Returns the popped members.
   */
  popMany(count: number, lim: SetLimits): string[] {
    const size = this.size;
    const remaining = size - count;
    if (remaining * 5 > count) {
      if (this.enc === ENC_LISTPACK) {
        const out = this.randomDistinct(count);
        for (const m of out) this.remove(m);
        return out;
      }
      const out = new Array<string>(count);
      for (let i = 0; i < count; i++) out[i] = this.pop();
      return out;
    }
    // Keep `remaining` random members in a new set; everything else is popped.
    const keep = this.randomDistinct(remaining);
    const keepSet = new Set(keep);
    const popped: string[] = [];
    this.forEach((m) => {
      if (!keepSet.has(m)) popped.push(m);
    });
    const fresh = this.enc === ENC_INTSET ? new SetValue(ENC_INTSET) : SetValue.strings(remaining, lim);
    for (const m of keep) fresh.add(m, lim);
    if (this.sid !== 0) for (const m of popped) this.logChange(m);
    this.enc = fresh.enc;
    this.ints = fresh.ints;
    this.n = fresh.n;
    this.pk = fresh.pk;
    this.lp = fresh.lp;
    this.ht = fresh.ht;
    return popped;
  }

  /** Binary search: index of v, or -(insertion point) - 1. */
  private find(v: bigint): number {
    const a = this.ints!;
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const x = a[mid];
      if (x < v) lo = mid + 1;
      else if (x > v) hi = mid - 1;
      else return mid;
    }
    return -lo - 1;
  }

  private insertInt(i: number, v: bigint): void {
    let a = this.ints!;
    if (this.n === a.length) {
      const b = new BigInt64Array(a.length * 2);
      b.set(a);
      a = this.ints = b;
    }
    a.copyWithin(i + 1, i, this.n);
    a[i] = v;
    this.n++;
  }

  /** Small set: char offset of the entry of `m`, or -1. */
  private smallFind(m: string): number {
    const pk = this.pk;
    const len = m.length;
    for (let o = 0; o < pk.length; o += pk.charCodeAt(o) + 1) {
      if (pk.charCodeAt(o) === len && (len === 0 || pk.charCodeAt(o + len) === m.charCodeAt(len - 1)) && pk.startsWith(m, o + 1)) return o;
    }
    return -1;
  }

  /** smallFind() of the bytes b[s, e). */
  private smallFindBytes(b: Uint8Array, s: number, e: number): number {
    const pk = this.pk;
    const len = e - s;
    for (let o = 0; o < pk.length; o += pk.charCodeAt(o) + 1) {
      // The last byte first: members of one shape (BullMQ's job keys) differ at their ends.
      if (pk.charCodeAt(o) !== len || (len !== 0 && pk.charCodeAt(o + len) !== b[e - 1])) continue;
      let i = 0;
      while (i < len && pk.charCodeAt(o + 1 + i) === b[s + i]) i++;
      if (i === len) return o;
    }
    return -1;
  }

  /** Small set: drop the entry at char offset o (the members above move down one position). */
  private smallRemoveAt(o: number): void {
    const pk = this.pk;
    this.pk = pk.slice(0, o) + pk.slice(o + 1 + pk.charCodeAt(o));
    this.n--;
  }

  /** intset -> small set (7.0's intset -> hashtable, for a few members). */
  private toSmall(): void {
    let pk = '';
    for (let i = 0; i < this.n; i++) {
      const m = String(this.ints![i]);
      pk += String.fromCharCode(m.length) + m;
    }
    this.pk = pk;
    this.ints = null;
    this.enc = ENC_SMALL;
  }

  private toListpack(): void {
    const lp = new Set<string>();
    for (let i = 0; i < this.n; i++) lp.add(String(this.ints![i]));
    this.lp = lp;
    this.ints = null;
    this.n = 0;
    this.enc = ENC_LISTPACK;
  }

  private toHashtable(): void {
    const ht = new DenseTable(false);
    if (this.enc === ENC_SMALL) {
      // perf: the packed members' bytes straight in, into one arena sized for them and more
      // (no member strings, no lookups: they are distinct; ~4.5 us -> see RESULTS-lua.md).
      const pk = this.pk;
      const b = Buffer.from(pk, 'latin1');
      ht.reserveBytes(pk.length + SMALL_VALUE);
      for (let o = 0; o < b.length; o += b[o] + 1) ht.addNewBytes(b, o + 1, o + 1 + b[o]);
    } else this.forEach((m) => ht.add(m));
    this.ht = ht;
    this.ints = null;
    this.n = 0;
    this.pk = '';
    this.lp = null;
    this.enc = ENC_HT;
  }

  private logChange(m: string): void {
    (this.changed ??= new Set()).add(m);
  }

  // ------------------------------------------------------------------ persistence (setCodec)

  /**
   * Whole form: [encoding u8: 0 intset, 1 listpack, 2 hashtable][count varint] then the members
   * in encoding order: int64 LE each for an intset, varint length + bytes otherwise. Null when
   * the set is a hashtable too big for it (then it is stored as records).
   */
  storeWhole(): Buffer | null {
    const size = this.size;
    if (this.enc === ENC_HT) {
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
    const pk = scratch.reset(256);
    pk.u8(this.enc === ENC_SMALL ? ENC_HT : this.enc);
    pk.varint(size);
    if (this.enc === ENC_INTSET) {
      const a = this.ints!;
      for (let i = 0; i < this.n; i++) pk.i64(a[i]);
    } else {
      this.forEach((m) => pk.str(m));
    }
    return pk.view();
  }

  static loadWhole(b: Buffer): SetValue {
    const u = new Unpacker(b);
    const enc = u.u8();
    const n = u.varint();
    const s = new SetValue(enc === ENC_HT && n <= SMALL_ENTRIES ? ENC_SMALL : enc);
    if (enc === ENC_INTSET) {
      const a = s.ints = new BigInt64Array(Math.max(8, n));
      for (let i = 0; i < n; i++) a[i] = u.i64();
      s.n = n;
    } else if (enc === ENC_LISTPACK) {
      const lp = s.lp!;
      for (let i = 0; i < n; i++) lp.add(u.str());
    } else if (s.enc === ENC_SMALL) {
      for (let i = 0; i < n; i++) s.insert(u.str(), NO_LISTPACK);
    } else {
      const ht = s.ht!;
      for (let i = 0; i < n; i++) ht.add(u.str());
    }
    return s;
  }

  /** Records: sub-key = member, empty value. All members, or those logged; clears the log. */
  storeRecords(w: ItemWriter, all: boolean): void {
    if (all) {
      this.forEach((m) => w.put(sub(m), EMPTY));
    } else if (this.changed !== null) {
      for (const m of this.changed) {
        if (this.has(m)) w.put(sub(m), EMPTY);
        else w.del(sub(m));
      }
    }
    this.changed = null;
  }

  /** A hashtable set from its records, fed a chunk at a time (the table sized first). */
  static loadBegin(size: number): RecordBuilder<SetValue> {
    const s = new SetValue(ENC_HT);
    const ht = s.ht!;
    ht.reserve(size);
    return {
      add(sub) {
        // Its bytes sized from the first records' (the arena does not double by copying later).
        if (ht.size === EXPECT_AFTER && size > 2 * EXPECT_AFTER) ht.expect(size);
        ht.add(sub.latin1Slice(0, sub.length));
      },
      end() {
        if (ht.size !== size) console.warn(`persistence: a set has ${ht.size} member records, its metadata says ${size}`);
        return s;
      },
    };
  }
}

/** Sub-key bytes of a member, in the shared scratch (the store copies it at once). */
function sub(m: string): Buffer {
  const pk = subScratch.reset(m.length);
  pk.raw(m);
  return pk.view();
}

/** How sets are persisted (registered in BUILTIN_CODECS, src/store/codec.ts). */
export const setCodec: CollectionCodec<SetValue> = {
  type: T.SET,
  encodeWhole: (s) => s.storeWhole(),
  size: (s) => s.size,
  writeRecords: (s, w, all) => s.storeRecords(w, all),
  decodeWhole: (b) => SetValue.loadWhole(b),
  loadBegin: (_header, size) => SetValue.loadBegin(size),
};

/** `count` distinct indexes in [0, size), in random order (partial Fisher-Yates). */
export function pickIndexes(size: number, count: number): number[] {
  if (count * 4 < size) {
    const seen = new Set<number>();
    while (seen.size < count) seen.add(Math.floor(Math.random() * size));
    return Array.from(seen);
  }
  const idx = new Array<number>(size);
  for (let i = 0; i < size; i++) idx[i] = i;
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(Math.random() * (size - i));
    const t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  idx.length = count;
  return idx;
}
