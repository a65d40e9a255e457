/**
 * ListValue: the list type as a growable ring buffer (deque): O(1) push and pop at both ends
 * and O(1) access by index; inserting or removing in the middle shifts the shorter side.
 *
 * Encoding (OBJECT ENCODING, Redis 7.2+): "listpack" while the elements would fit in one
 * listpack node under list-max-listpack-size, "quicklist" after that. We keep the exact byte
 * size a single listpack would take (`lpBytes`) and apply Redis's two rules:
 *   growing:   convert to quicklist when lpBytes + the raw length of what is being added
 *              exceeds the node limit (listTypeTryConvertListpack);
 *   shrinking: convert back when the list would fit in half a node (listTypeTryConvertQuicklist).
 * Redis additionally requires the quicklist to have a single node to convert back; we do not
 * model quicklist nodes, so a list trimmed in the middle may report "listpack" where Redis,
 * holding two small nodes, still reports "quicklist".
 *
 * Elements are immutable Buffers. Every mutation is a method here.
 *
 * Persistence (src/store/list-codec.ts): a big list is stored one record per element, keyed by
 * its position. Index i lives at position `pos + i`; `pos` moves down on LPUSH and up on LPOP,
 * so pushes and pops at either end change one position. While `sid !== 0` (the store owns
 * records for this list) every mutation logs the positions it changed in `changed`; a
 * mutation in the middle logs the positions of the side it shifted (the same elements the
 * ring buffer moves), so its cost on disk is that of its cost in memory.
 */
import { T, type TypedValue } from '../db.js';
import { LP_HDR, exceedsLimit, lpEntrySize, nodeCountLimit, nodeSizeLimit } from './listpack.js';

const MIN_CAP = 8;

/** Disjoint ranges of changed positions: at most MAX_RANGES, nearest ones merged beyond. */
const MAX_RANGES = 32;

export class PosRanges {
  /** lo0, hi0, lo1, hi1...: disjoint, non-adjacent [lo, hi) ranges in ascending order. */
  readonly r: number[] = [];

  add(lo: number, hi: number): void {
    const r = this.r;
    const n = r.length;
    // The usual cases first: growing the last range (RPUSH/RPOP) or the first (LPUSH/LPOP).
    if (n > 0 && lo <= r[n - 1] && lo >= r[n - 2]) {
      if (hi > r[n - 1]) r[n - 1] = hi;
      return;
    }
    if (n > 0 && hi >= r[0] && hi <= r[1]) {
      if (lo < r[0]) r[0] = lo;
      return;
    }
    let i = 0;
    while (i < n && r[i + 1] < lo) i += 2;
    let j = i;
    while (j < n && r[j] <= hi) {
      if (r[j] < lo) lo = r[j];
      if (r[j + 1] > hi) hi = r[j + 1];
      j += 2;
    }
    r.splice(i, j - i, lo, hi);
    if (r.length > 2 * MAX_RANGES) {
      // Too many: merge the two closest ranges (rewriting the gap between them is correct).
      let best = 1;
      for (let k = 3; k + 1 < r.length; k += 2) if (r[k + 1] - r[k] < r[best + 1] - r[best]) best = k;
      r.splice(best, 2);
    }
  }
}

export class ListValue implements TypedValue {
  readonly type = T.LIST;
  /** Object id of the element records on disk (src/store); 0 = none. Owned by the store. */
  sid = 0;
  /** Position of index 0 (see the header comment). */
  pos = 0;
  /** Positions changed since the store last wrote the records (only while sid !== 0). */
  changed: PosRanges | null = null;
  /** Positions held on disk after the last write: [diskLo, diskHi). Owned by the codec. */
  diskLo = 0;
  diskHi = 0;
  private buf: (Buffer | undefined)[];
  private mask: number;
  private head = 0;
  length = 0;
  /** Bytes of these elements as one listpack (lpBytes). */
  lpBytes = LP_HDR;
  /** listpack (true) or quicklist (false) encoding. */
  private packed = true;

  constructor(capacity = MIN_CAP) {
    let cap = MIN_CAP;
    while (cap < capacity) cap *= 2;
    this.buf = new Array(cap);
    this.mask = cap - 1;
  }

  encoding(): string {
    return this.packed ? 'listpack' : 'quicklist';
  }

  clone(): ListValue {
    const l = new ListValue(this.length);
    for (let i = 0; i < this.length; i++) l.buf[i] = this.buf[(this.head + i) & this.mask];
    l.length = this.length;
    l.lpBytes = this.lpBytes;
    l.packed = this.packed;
    return l;
  }

  /** After loading (src/store): the stored encoding and position of index 0. */
  loaded(packed: boolean, pos: number): void {
    this.packed = packed;
    this.pos = pos;
    this.diskLo = pos;
    this.diskHi = pos + this.length;
  }

  /** Log positions [lo, lo + n) as changed (only while the store holds records). */
  private mark(lo: number, n: number): void {
    (this.changed ??= new PosRanges()).add(lo, lo + n);
  }

  /** Element at index 0..length-1. */
  get(i: number): Buffer {
    return this.buf[(this.head + i) & this.mask]!;
  }

  // ------------------------------------------------------------------ encoding rules

  /**
   * Before adding elements whose raw lengths sum to `addBytes` (`addCount` of them): convert to
   * quicklist if one listpack would then exceed the node limit (Redis's growing check).
   */
  growCheck(addBytes: number, addCount: number, fill: number): void {
    if (this.packed && exceedsLimit(fill, this.lpBytes + addBytes, this.length + addCount)) {
      this.packed = false;
    }
  }

  /** After removing elements: back to listpack when it fits in half a node. */
  shrinkCheck(fill: number): void {
    if (this.packed) return;
    if (this.lpBytes <= Math.floor(nodeSizeLimit(fill) / 2) && this.length <= Math.floor(nodeCountLimit(fill) / 2)) {
      this.packed = true;
    }
  }

  // ------------------------------------------------------------------ mutations

  pushTail(v: Buffer): void {
    if (this.length === this.buf.length) this.grow();
    this.buf[(this.head + this.length) & this.mask] = v;
    this.length++;
    this.lpBytes += lpEntrySize(v);
    if (this.sid !== 0) this.mark(this.pos + this.length - 1, 1);
  }

  pushHead(v: Buffer): void {
    if (this.length === this.buf.length) this.grow();
    this.head = (this.head - 1) & this.mask;
    this.buf[this.head] = v;
    this.length++;
    this.lpBytes += lpEntrySize(v);
    this.pos--;
    if (this.sid !== 0) this.mark(this.pos, 1);
  }

  popHead(): Buffer {
    if (this.sid !== 0) this.mark(this.pos, 1);
    this.pos++;
    const v = this.buf[this.head]!;
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.length--;
    this.lpBytes -= lpEntrySize(v);
    this.maybeShrink();
    return v;
  }

  popTail(): Buffer {
    if (this.sid !== 0) this.mark(this.pos + this.length - 1, 1);
    const i = (this.head + this.length - 1) & this.mask;
    const v = this.buf[i]!;
    this.buf[i] = undefined;
    this.length--;
    this.lpBytes -= lpEntrySize(v);
    this.maybeShrink();
    return v;
  }

  /** Replace the element at index i. */
  set(i: number, v: Buffer): void {
    const p = (this.head + i) & this.mask;
    this.lpBytes += lpEntrySize(v) - lpEntrySize(this.buf[p]!);
    this.buf[p] = v;
    if (this.sid !== 0) this.mark(this.pos + i, 1);
  }

  /** Insert `v` so that it ends up at index i (0..length). */
  insert(i: number, v: Buffer): void {
    if (i === 0) return this.pushHead(v);
    if (i === this.length) return this.pushTail(v);
    if (this.length === this.buf.length) this.grow();
    const m = this.mask;
    if (i < this.length - i) {
      // Shift the first i elements one step towards the head.
      this.head = (this.head - 1) & m;
      for (let k = 0; k < i; k++) this.buf[(this.head + k) & m] = this.buf[(this.head + k + 1) & m];
      this.pos--;
      if (this.sid !== 0) this.mark(this.pos, i + 1);
    } else {
      for (let k = this.length; k > i; k--) this.buf[(this.head + k) & m] = this.buf[(this.head + k - 1) & m];
      if (this.sid !== 0) this.mark(this.pos + i, this.length + 1 - i);
    }
    this.buf[(this.head + i) & m] = v;
    this.length++;
    this.lpBytes += lpEntrySize(v);
  }

  /** Remove the element at index i. */
  removeAt(i: number): void {
    const m = this.mask;
    const v = this.buf[(this.head + i) & m]!;
    if (i < this.length - 1 - i) {
      for (let k = i; k > 0; k--) this.buf[(this.head + k) & m] = this.buf[(this.head + k - 1) & m];
      this.buf[this.head] = undefined;
      this.head = (this.head + 1) & m;
      if (this.sid !== 0) this.mark(this.pos, i + 1);
      this.pos++;
    } else {
      if (this.sid !== 0) this.mark(this.pos + i, this.length - i);
      for (let k = i; k < this.length - 1; k++) this.buf[(this.head + k) & m] = this.buf[(this.head + k + 1) & m];
      this.buf[(this.head + this.length - 1) & m] = undefined;
    }
    this.length--;
    this.lpBytes -= lpEntrySize(v);
    this.maybeShrink();
  }

  /** LTRIM: drop `left` elements from the head and `right` from the tail. */
  trim(left: number, right: number): void {
    for (let k = 0; k < left; k++) this.popHead();
    for (let k = 0; k < right; k++) this.popTail();
  }

  /**
   * LREM: remove up to `count` elements equal to `v` (all when count is 0), scanning from the
   * head (count >= 0) or from the tail (count < 0). Returns the number removed.
   */
  removeEqual(v: Uint8Array, count: number): number {
    const n = this.length;
    const m = this.mask;
    const limit = count === 0 ? Infinity : Math.abs(count);
    let removed = 0;
    let bytes = 0;
    // Elements move from the first removed one to the end (head first) or from the head to
    // the last removed one (tail first): those positions change.
    let edge = -1;
    if (count >= 0) {
      let w = 0;
      for (let r = 0; r < n; r++) {
        const e = this.buf[(this.head + r) & m]!;
        if (removed < limit && e.equals(v)) {
          if (removed === 0) edge = r;
          removed++;
          bytes += lpEntrySize(e);
          continue;
        }
        if (w !== r) this.buf[(this.head + w) & m] = e;
        w++;
      }
      for (let k = w; k < n; k++) this.buf[(this.head + k) & m] = undefined;
      if (removed > 0 && this.sid !== 0) this.mark(this.pos + edge, n - edge);
    } else {
      let w = n - 1;
      for (let r = n - 1; r >= 0; r--) {
        const e = this.buf[(this.head + r) & m]!;
        if (removed < limit && e.equals(v)) {
          if (removed === 0) edge = r;
          removed++;
          bytes += lpEntrySize(e);
          continue;
        }
        if (w !== r) this.buf[(this.head + w) & m] = e;
        w--;
      }
      for (let k = 0; k <= w; k++) this.buf[(this.head + k) & m] = undefined;
      this.head = (this.head + w + 1) & m;
      if (removed > 0 && this.sid !== 0) this.mark(this.pos, edge + 1);
      this.pos += w + 1;
    }
    this.length = n - removed;
    this.lpBytes -= bytes;
    if (removed > 0) this.maybeShrink();
    return removed;
  }

  private grow(): void {
    const old = this.buf;
    const cap = old.length * 2;
    const next: (Buffer | undefined)[] = new Array(cap);
    for (let i = 0; i < this.length; i++) next[i] = old[(this.head + i) & this.mask];
    this.buf = next;
    this.mask = cap - 1;
    this.head = 0;
  }

  /** Give memory back when the ring is mostly empty. */
  private maybeShrink(): void {
    const cap = this.buf.length;
    if (cap <= 64 || this.length > cap >>> 3) return;
    const ncap = cap >>> 1;
    const next: (Buffer | undefined)[] = new Array(ncap);
    for (let i = 0; i < this.length; i++) next[i] = this.buf[(this.head + i) & this.mask];
    this.buf = next;
    this.mask = ncap - 1;
    this.head = 0;
  }
}
