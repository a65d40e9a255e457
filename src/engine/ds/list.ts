/**
 * ListValue: the list type as a sequence of chunks, like Redis's quicklist: O(1) push and pop
 * at both ends; access by index walks the chunks from the nearer end (O(N/128), Redis's LINDEX
 * is O(N)); inserting or removing in the middle touches one chunk.
 *
 * Memory (why chunks): an element held as its own JS object costs 30 to 100 bytes of header
 * and pointer. Here a chunk of up to CHUNK_MAX elements (and about CHUNK_BYTES bytes) is
 * either
 *   packed   one Buffer (off the JS heap) of [length prefix][bytes] entries, 1 or 2 prefix
 *            bytes: about one byte of overhead per element, as a listpack;
 *   open     an array of elements, for the chunks being worked on.
 * The first and last chunks are always open (pushes and pops are array operations); a chunk
 * is packed once it is two chunks away from an end, and an end chunk that was packed is
 * unpacked when it becomes the end again, so each element is packed and unpacked at most once
 * per trip through an end (amortised O(1)), and a push/pop alternating at a chunk boundary
 * does not repack anything.
 *
 * Elements are latin1 strings (one char per byte: exact) up to BIG_ELEMENT bytes, Buffers
 * above (no copy of big values into strings; a chunk holding one stays open). `Elem` below.
 *
 * Flat form (list-flat.ts): while the list fits the one quicklist node Redis 7.0 would hold
 * it in, it is that node's listpack (its entries in one latin1 string; the header and end
 * byte follow from them), and no chunk exists. Redis's
 * rules, with list-max-listpack-size as last given to growCheck/shrinkCheck:
 *   a push (or an insert) goes into the node when _quicklistNodeAllowInsert allows it (the
 *     node's bytes + the element's raw length + 8 within the node limit); otherwise Redis
 *     starts a second node, and the list here becomes chunked;
 *   LSET, pops, LREM and LTRIM change the node in place (7.0 never splits for them);
 *   a chunked list goes back to flat once it fits in half a node (memory; Redis keeps its
 *     nodes, which a DUMP of the chunked form cuts as tail pushes would, as before).
 * OBJECT ENCODING says "quicklist" for every list, as Redis 7.0 does.
 *
 * Persistence (src/store/list-codec.ts): a big list is stored one record per element, keyed by
 * its position. Index i lives at position `pos + i`; `pos` moves down on LPUSH and up on LPOP,
 * so pushes and pops at either end change one position. While `sid !== 0` (the store owns
 * records for this list) every mutation logs the positions it changed in `changed`; a
 * mutation in the middle logs the positions of the shorter side (as if that side shifted), so
 * its cost on disk is bounded by half the list.
 */
import { T, type TypedValue } from '../db.js';
import { LP_HDR, allowInsert, lpEntrySize, nodeCountLimit, nodeSizeLimit } from './listpack.js';
import {
  BIG_ELEMENT, NEXT, builder, builtEntries, elemAt, elemNext, entryEquals, entryOf, listpackOf, nextEntry, prevEntry,
  type Elem,
} from './list-flat.js';

export { BIG_ELEMENT, type Elem };
/** Elements per chunk, and the byte size past which a chunk takes no more. */
const CHUNK_MAX = 128;
const CHUNK_BYTES = 8192;

/** Result of locate(): chunk index and offset in it (read at once; perf: not two fields per list). */
let locC = 0;
let locJ = 0;

/** The chunks of every flat list (none; perf: no array per small list). Never written. */
const NO_CHUNKS: never[] = [];

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

/** The element for the bytes of `b` (a copy: `b` may be a view of a reused buffer). */
export function elemOf(b: Buffer): Elem {
  return b.length <= BIG_ELEMENT ? b.latin1Slice(0, b.length) : Buffer.from(b);
}

/** The element for a latin1 string. */
export function elemFromStr(s: string): Elem {
  return s.length <= BIG_ELEMENT ? s : Buffer.from(s, 'latin1');
}

/** The bytes of an element as a Buffer (a fresh one for strings). */
export function elemBytes(e: Elem): Buffer {
  return typeof e === 'string' ? Buffer.from(e, 'latin1') : e;
}

/**
 * An element compared with a target given both ways (`s` its latin1 string when it is short
 * enough to be held as one, else null; `b` its bytes): elements and targets of one length are
 * always of the same kind.
 */
export function elemEquals(e: Elem, s: string | null, b: Uint8Array): boolean {
  if (typeof e === 'string') return s !== null && e === s;
  return e.length === b.length && e.equals(b);
}

class Chunk {
  /**
   * Packed entries; null while open. Off the JS heap (memory: bytes kept in JS strings are
   * copied through the young generation first, which then grows to its maximum for good).
   */
  p: Buffer | null = null;
  /**
   * Open elements, in a[lo .. lo + n); null while packed. A head chunk fills from the end of
   * its array down (pushHead is a store, not an unshift), a tail chunk from the start up.
   */
  a: Elem[] | null;
  lo = 0;
  /** Element count and the sum of their lengths. */
  n = 0;
  bytes = 0;

  constructor(a: Elem[] | null, lo = 0) {
    this.a = a;
    this.lo = lo;
  }
}

/** Make a chunk open with its elements at a[0 .. n) exactly (for splices in the middle). */
function flat(c: Chunk): Elem[] {
  if (c.a === null) {
    unpack(c);
  } else if (c.lo !== 0 || c.a.length !== c.n) {
    c.a = c.a.slice(c.lo, c.lo + c.n);
    c.lo = 0;
  }
  return c.a!;
}

/** Scratch for packing and unpacking (grows as needed). */
let scratch = Buffer.allocUnsafe(CHUNK_BYTES * 4);

function room(n: number): Buffer {
  if (scratch.length < n) scratch = Buffer.allocUnsafe(Math.max(n, scratch.length * 2));
  return scratch;
}

/** Pack an open chunk whose elements are all strings (else leave it open). */
function pack(c: Chunk): void {
  const a = c.a!;
  const buf = room(c.bytes + 2 * c.n);
  let o = 0;
  for (let i = c.lo; i < c.lo + c.n; i++) {
    const e = a[i];
    if (typeof e !== 'string') return;
    const n = e.length;
    if (n < 128) {
      buf[o++] = n;
    } else {
      buf[o++] = 0x80 | (n >> 8);
      buf[o++] = n & 0xff;
    }
    // Short elements: a char loop beats latin1Write's call and argument checks.
    if (n <= 32) for (let k = 0; k < n; k++) buf[o++] = e.charCodeAt(k);
    else o += buf.latin1Write(e, o, n);
  }
  const b = Buffer.allocUnsafeSlow(o);
  buf.copy(b, 0, 0, o);
  c.p = b;
  c.a = null;
  c.lo = 0;
}

/** The packed entries of a chunk as one latin1 string (decoded by the functions below). */
function text(c: Chunk): string {
  const p = c.p!;
  return p.latin1Slice(0, p.length);
}

function unpack(c: Chunk): void {
  const a = decodeAll(text(c), c.n) as Elem[];
  c.a = a;
  c.lo = 0;
  c.p = null;
}

/** Element j of a packed chunk (walks the length prefixes). */
function packedAt(p: string, j: number): string {
  let o = 0;
  for (;;) {
    let n = p.charCodeAt(o++);
    if (n >= 128) n = ((n & 0x7f) << 8) | p.charCodeAt(o++);
    if (j-- === 0) return p.slice(o, o + n);
    o += n;
  }
}

/** Every element of a packed chunk, without changing it. */
function decodeAll(p: string, count: number): string[] {
  const a = new Array<string>(count);
  let o = 0;
  for (let i = 0; i < count; i++) {
    let n = p.charCodeAt(o++);
    if (n >= 128) n = ((n & 0x7f) << 8) | p.charCodeAt(o++);
    a[i] = p.slice(o, o + n);
    o += n;
  }
  return a;
}

/** Does a packed chunk hold string `s`? (no string built per element) */
function packedHas(p: string, s: string): boolean {
  const len = s.length;
  let o = 0;
  while (o < p.length) {
    let n = p.charCodeAt(o++);
    if (n >= 128) n = ((n & 0x7f) << 8) | p.charCodeAt(o++);
    if (n === len && p.startsWith(s, o)) return true;
    o += n;
  }
  return false;
}

export class ListValue implements TypedValue {
  readonly type = T.LIST;
  /** Memory accounting (memory.ts): the charge, and the size and average (x16) it was sampled at. */
  mem = 0;
  memN = -1;
  memAvg = 0;
  /** Object id of the element records on disk (src/store); 0 = none. Owned by the store. */
  sid = 0;
  /** Position of index 0 (see the header comment). */
  pos = 0;
  /** Positions changed since the store last wrote the records (only while sid !== 0). */
  changed: PosRanges | null = null;
  /** Positions held on disk after the last write: [diskLo, diskHi). Owned by the codec. */
  diskLo = 0;
  diskHi = 0;
  /**
   * The chunks are chunks[h .. chunks.length): room is kept below h so that a new head chunk
   * is a store, not an unshift (which moves every chunk: O(N/128) per LPUSH on a long list).
   * Operations in the middle (LSET, LINSERT, LREM...) first compact() to h = 0.
   */
  private chunks: Chunk[] = NO_CHUNKS;
  private h = 0;
  length = 0;
  /** Bytes of these elements as one listpack (exact while flat: the entries + 7). */
  lpBytes = LP_HDR;
  /**
   * The flat form while the list fits one node, else null (chunked): the listpack's entries;
   * its header (total bytes, count) and end byte follow from lpBytes and length (`listpack`).
   */
  private f: string | null = '';
  /** list-max-listpack-size as last given (growCheck / shrinkCheck). */
  private fill = -2;

  /** `capacity` is a hint only (kept for callers that know the final size). */
  constructor(capacity = 0) {
    void capacity;
  }

  /**
   * A list held flat from the entries of a validated listpack (RESTORE, import, store) of
   * `count` elements. The header is made from the count: an unknown count (65535) becomes
   * known, as quicklist's lpLength sets it on load.
   */
  static fromEntries(entries: string, count: number): ListValue {
    const l = new ListValue();
    l.f = entries;
    l.length = count;
    l.lpBytes = entries.length + LP_HDR;
    return l;
  }

  /**
   * An empty list that takes pushes chunked (a bulk load: pushing into a flat list copies the
   * listpack each time); `loadDone` makes it flat after when it fits one node.
   */
  static forLoad(): ListValue {
    const l = new ListValue();
    l.f = null;
    l.chunks = [];
    return l;
  }

  /** After a bulk load: flat when the elements, pushed at the tail, make one node (as in Redis). */
  loadDone(fill: number): void {
    this.fill = fill;
    if (this.f === null) this.tryFlat();
  }

  /** The listpack bytes (a latin1 string) while the list is flat (one node), else null. */
  get listpack(): string | null {
    return this.f === null ? null : listpackOf(this.f, this.length);
  }

  /** The listpack's entries while the list is flat, else null. */
  get entries(): string | null {
    return this.f;
  }

  /** Redis 7.0 reports every list as a quicklist (7.2 shows small ones as listpack). */
  encoding(): string {
    return 'quicklist';
  }

  clone(): ListValue {
    const l = new ListValue();
    l.fill = this.fill;
    if (this.f !== null) {
      l.f = this.f;
      l.length = this.length;
      l.lpBytes = this.lpBytes;
      return l;
    }
    l.f = null;
    l.chunks = [];
    const cs = this.chunks;
    for (let k = this.h; k < cs.length; k++) {
      const c = cs[k];
      const d = new Chunk(c.a === null ? null : c.a.slice(c.lo, c.lo + c.n));
      d.p = c.p;
      d.n = c.n;
      d.bytes = c.bytes;
      l.chunks.push(d);
    }
    l.length = this.length;
    l.lpBytes = this.lpBytes;
    return l;
  }

  /** After loading (src/store): the position of index 0. */
  loaded(pos: number): void {
    this.pos = pos;
    this.diskLo = pos;
    this.diskHi = pos + this.length;
  }

  /** Log positions [lo, lo + n) as changed (only while the store holds records). */
  private mark(lo: number, n: number): void {
    (this.changed ??= new PosRanges()).add(lo, lo + n);
  }

  // ------------------------------------------------------------------ access

  /** Find index i (0 <= i < length): sets locC / locJ. Walks from the nearer end. */
  private locate(i: number): void {
    const cs = this.chunks;
    const h = this.h;
    if (i < this.length - i) {
      let c = h;
      while (i >= cs[c].n) i -= cs[c++].n;
      locC = c - h;
      locJ = i;
    } else {
      let c = cs.length - 1;
      let k = this.length - 1 - i;
      while (k >= cs[c].n) k -= cs[c--].n;
      locC = c - h;
      locJ = cs[c].n - 1 - k;
    }
  }

  /** Move the chunks down to index 0 (before the operations that index chunks directly). */
  private compact(): Chunk[] {
    const cs = this.chunks;
    const h = this.h;
    if (h > 0) {
      cs.copyWithin(0, h);
      cs.length -= h;
      this.h = 0;
    }
    return cs;
  }

  /** Offset in the flat string (`entries`) of the entry at index i (walks from the nearer end). */
  offsetOf(i: number): number {
    const f = this.f!;
    if (i < this.length - i) {
      let o = 0;
      for (let k = 0; k < i; k++) o = nextEntry(f, o);
      return o;
    }
    let o = f.length;
    for (let k = this.length; k > i; k--) o = prevEntry(f, o);
    return o;
  }

  /** Element at index 0..length-1. */
  get(i: number): Elem {
    if (this.f !== null) return elemAt(this.f, this.offsetOf(i));
    const cs = this.chunks;
    const first = cs[this.h];
    if (i < first.n) return first.a![first.lo + i];
    const last = cs[cs.length - 1];
    const fromEnd = this.length - 1 - i;
    if (fromEnd < last.n) return last.a![last.lo + last.n - 1 - fromEnd];
    this.locate(i);
    const c = cs[this.h + locC];
    return c.a !== null ? c.a[c.lo + locJ] : packedAt(text(c), locJ);
  }

  /**
   * Visit indexes from..to (inclusive; from > to walks backwards) until `fn` returns true.
   * Returns the index where it stopped, or -1. Mutating the list inside `fn` is not allowed.
   */
  scan(from: number, to: number, fn: (e: Elem, i: number) => boolean | void): number {
    if (from < 0 || from >= this.length) return -1;
    const f = this.f;
    if (f !== null) {
      let o = this.offsetOf(from);
      if (from <= to) {
        const last = Math.min(to, this.length - 1);
        for (let i = from; i <= last; i++) {
          const e = elemNext(f, o);
          o = NEXT;
          if (fn(e, i) === true) return i;
        }
      } else {
        const last = Math.max(to, 0);
        for (let i = from; i >= last; i--) {
          if (fn(elemAt(f, o), i) === true) return i;
          if (i > 0) o = prevEntry(f, o);
        }
      }
      return -1;
    }
    this.locate(from);
    const cs = this.chunks;
    const h = this.h;
    let c = h + locC;
    let j = locJ;
    let i = from;
    if (from <= to) {
      for (; c < cs.length; c++, j = 0) {
        const ch = cs[c];
        if (ch.a !== null) {
          const a = ch.a;
          const lo = ch.lo;
          for (; j < ch.n; j++, i++) {
            if (i > to) return -1;
            if (fn(a[lo + j], i) === true) return i;
          }
        } else {
          // Decode in place: prefix walk, one slice per visited element.
          const p = text(ch);
          let o = 0;
          for (let k = 0; k < ch.n; k++) {
            let n = p.charCodeAt(o++);
            if (n >= 128) n = ((n & 0x7f) << 8) | p.charCodeAt(o++);
            if (k >= j) {
              if (i > to) return -1;
              if (fn(p.slice(o, o + n), i) === true) return i;
              i++;
            }
            o += n;
          }
        }
      }
      return -1;
    }
    for (; c >= h; c--) {
      const ch = cs[c];
      // Backwards through a packed chunk: decode it into a temporary array (not kept).
      const a = ch.a !== null ? ch.a : decodeAll(text(ch), ch.n);
      const lo = ch.a !== null ? ch.lo : 0;
      if (j < 0) j = ch.n - 1;
      for (; j >= 0; j--, i--) {
        if (i < to) return -1;
        if (fn(a[lo + j], i) === true) return i;
      }
    }
    return -1;
  }

  // ------------------------------------------------------------------ encoding rules

  /**
   * Before adding elements (their raw lengths sum to `addBytes`, `addCount` of them): the
   * node limit to apply. Each push then checks its own element, as quicklist does (the sums
   * are not needed for that; the signature is the callers').
   */
  growCheck(addBytes: number, addCount: number, fill: number): void {
    void addBytes;
    void addCount;
    this.fill = fill;
  }

  /** After removing elements: back to flat when the list fits in half a node. */
  shrinkCheck(fill: number): void {
    this.fill = fill;
    if (this.f !== null) return;
    const size = fill < 0 ? nodeSizeLimit(fill) : NODE_SAFETY_LIMIT;
    if (this.lpBytes <= Math.floor(size / 2) && this.length <= Math.floor(nodeCountLimit(fill) / 2)) this.tryFlat();
  }

  /** May element v go into the flat node (a new list's first element always does)? */
  private fits(v: Elem): boolean {
    return this.length === 0 || allowInsert(this.lpBytes, this.length, this.fill, v.length);
  }

  /** Chunked -> flat when the elements pushed at the tail fit one node (else unchanged). */
  private tryFlat(): void {
    if (this.lpBytes > MAX_NODE || this.length === 0) return;
    builder.start();
    buildFill = this.fill;
    if (this.scan(0, this.length - 1, addToBuilder) >= 0) return;
    this.f = builtEntries();
    this.chunks = NO_CHUNKS;
    this.h = 0;
    this.lpBytes = this.f.length + LP_HDR;
  }

  /**
   * Flat -> chunked (the list outgrew its node). While the store holds element records
   * (sid !== 0, only between a shrink to flat and the store's next write), every position
   * the records or the list cover is logged: the flat form logs nothing.
   */
  private unflat(): void {
    const f = this.f!;
    const n = this.length;
    const sid = this.sid;
    const pos = this.pos;
    this.f = null;
    this.chunks = [];
    this.length = 0;
    this.lpBytes = LP_HDR;
    this.sid = 0;
    for (let k = 0, o = 0; k < n; k++, o = nextEntry(f, o)) this.pushTail(elemAt(f, o));
    this.sid = sid;
    this.pos = pos;
    if (sid !== 0) {
      const lo = Math.min(this.diskLo, pos);
      const hi = Math.max(this.diskHi, pos + n);
      if (hi > lo) this.mark(lo, hi - lo);
    }
  }

  /** Flat: the list with entry bytes [a, b) replaced by `mid`, `n` elements in all. */
  private splice(a: number, b: number, mid: string, n: number): void {
    const f = this.f!;
    this.setFlat(a === 0 ? mid + f.slice(b) : b === f.length ? f.slice(0, a) + mid : f.slice(0, a) + mid + f.slice(b), n);
  }

  private setFlat(f: string, n: number): void {
    this.f = f;
    this.length = n;
    this.lpBytes = f.length + LP_HDR;
  }

  // ------------------------------------------------------------------ chunk housekeeping

  /** Pack chunk c if it is open, interior and at least two chunks from either end. */
  private settle(c: number): void {
    const cs = this.chunks;
    const k = this.h + c;
    if (c >= 2 && k <= cs.length - 3 && cs[k].a !== null) pack(cs[k]);
  }

  /** After the end chunks changed: make sure both ends are open. */
  private openEnds(): void {
    const cs = this.chunks;
    if (cs.length === this.h) return;
    if (cs[this.h].a === null) unpack(cs[this.h]);
    const last = cs[cs.length - 1];
    if (last.a === null) unpack(last);
  }

  /** Chunk c was changed in the middle of the list: split it if too big, repack if interior. */
  private reshape(c: number): void {
    const cs = this.compact();
    const ch = cs[c];
    if (ch.n === 0) {
      cs.splice(c, 1);
      this.openEnds();
      return;
    }
    if (ch.n > 2 * CHUNK_MAX || (ch.bytes > 2 * CHUNK_BYTES && ch.n > 1)) {
      const a = flat(ch);
      const half = a.length >>> 1;
      const right = new Chunk(a.slice(half));
      a.length = half;
      ch.n = half;
      right.n = right.a!.length;
      let rb = 0;
      for (const e of right.a!) rb += e.length;
      right.bytes = rb;
      ch.bytes -= rb;
      cs.splice(c + 1, 0, right);
      this.settle(c + 1);
    }
    this.settle(c);
  }

  // ------------------------------------------------------------------ mutations

  pushTail(v: Elem): void {
    if (this.f !== null) {
      if (this.fits(v)) return this.setFlat(this.f + entryOf(v), this.length + 1);
      this.unflat();
    }
    const cs = this.chunks;
    let t = cs.length === this.h ? undefined : cs[cs.length - 1];
    if (t === undefined || t.n >= CHUNK_MAX || (t.bytes + v.length > CHUNK_BYTES && t.n > 0)) {
      t = new Chunk([]);
      cs.push(t);
      this.settle(cs.length - this.h - 3);
    }
    t.a![t.lo + t.n] = v;
    t.n++;
    t.bytes += v.length;
    this.length++;
    this.lpBytes += lpEntrySize(v);
    if (this.sid !== 0) this.mark(this.pos + this.length - 1, 1);
  }

  pushHead(v: Elem): void {
    if (this.f !== null) {
      if (this.fits(v)) return this.setFlat(entryOf(v) + this.f, this.length + 1);
      this.unflat();
    }
    const cs = this.chunks;
    let h = cs.length === this.h ? undefined : cs[this.h];
    if (h === undefined || h.lo === 0 || h.n >= CHUNK_MAX || (h.bytes + v.length > CHUNK_BYTES && h.n > 0)) {
      h = new Chunk(new Array<Elem>(CHUNK_MAX), CHUNK_MAX);
      if (this.h === 0) this.frontRoom();
      this.chunks[--this.h] = h;
      this.settle(2);
    }
    h.a![--h.lo] = v;
    h.n++;
    h.bytes += v.length;
    this.length++;
    this.lpBytes += lpEntrySize(v);
    this.pos--;
    if (this.sid !== 0) this.mark(this.pos, 1);
  }

  /** Room below the first chunk: as many free slots as there are chunks (at least 8). */
  private frontRoom(): void {
    const cs = this.chunks;
    const n = cs.length;
    const room = Math.max(8, n);
    const next = new Array<Chunk>(room + n);
    for (let k = 0; k < n; k++) next[room + k] = cs[k];
    this.chunks = next;
    this.h = room;
  }

  popHead(): Elem {
    const f = this.f;
    if (f !== null) {
      const v = elemAt(f, 0);
      this.setFlat(f.slice(nextEntry(f, 0)), this.length - 1);
      return v;
    }
    if (this.sid !== 0) this.mark(this.pos, 1);
    this.pos++;
    const cs = this.chunks;
    const h = cs[this.h];
    const v = h.a![h.lo]!;
    h.a![h.lo++] = undefined!;
    h.n--;
    h.bytes -= v.length;
    if (h.n === 0) {
      cs[this.h++] = undefined!;
      if (this.h === cs.length) {
        cs.length = 0;
        this.h = 0;
      } else {
        // A queue (RPUSH + LPOP) leaves free slots below h: give them back once they are most.
        if (this.h > 64 && this.h * 2 > cs.length) this.compact();
        const first = this.chunks[this.h];
        if (first.a === null) unpack(first);
      }
    }
    this.length--;
    this.lpBytes -= lpEntrySize(v);
    return v;
  }

  popTail(): Elem {
    const f = this.f;
    if (f !== null) {
      const o = prevEntry(f, f.length);
      const v = elemAt(f, o);
      this.setFlat(f.slice(0, o), this.length - 1);
      return v;
    }
    if (this.sid !== 0) this.mark(this.pos + this.length - 1, 1);
    const cs = this.chunks;
    const t = cs[cs.length - 1];
    const a = t.a!;
    const v = a[t.lo + t.n - 1];
    // A tail chunk's array shrinks with it; a head chunk's keeps its room below lo.
    if (t.lo === 0) a.length = t.n - 1;
    else a[t.lo + t.n - 1] = undefined!;
    t.n--;
    t.bytes -= v.length;
    if (t.n === 0) {
      cs.pop();
      if (cs.length === this.h) {
        cs.length = 0;
        this.h = 0;
      } else if (cs[cs.length - 1].a === null) {
        unpack(cs[cs.length - 1]);
      }
    }
    this.length--;
    this.lpBytes -= lpEntrySize(v);
    return v;
  }

  /** Replace the element at index i. */
  set(i: number, v: Elem): void {
    if (this.f !== null) {
      const o = this.offsetOf(i);
      return this.splice(o, nextEntry(this.f, o), entryOf(v), this.length);
    }
    this.compact();
    this.locate(i);
    const c = locC;
    const ch = this.chunks[c];
    const a = flat(ch);
    const old = a[locJ];
    a[locJ] = v;
    ch.bytes += v.length - old.length;
    this.lpBytes += lpEntrySize(v) - lpEntrySize(old);
    this.reshape(c);
    if (this.sid !== 0) this.mark(this.pos + i, 1);
  }

  /** Insert `v` so that it ends up at index i (0..length). */
  insert(i: number, v: Elem): void {
    if (i === 0) return this.pushHead(v);
    if (i === this.length) return this.pushTail(v);
    if (this.f !== null) {
      if (this.fits(v)) {
        const o = this.offsetOf(i);
        return this.splice(o, o, entryOf(v), this.length + 1);
      }
      this.unflat();
    }
    // Positions: the shorter side counts as shifted (see the header comment).
    if (i < this.length - i) {
      this.pos--;
      if (this.sid !== 0) this.mark(this.pos, i + 1);
    } else if (this.sid !== 0) {
      this.mark(this.pos + i, this.length + 1 - i);
    }
    // Insert before the element now at i, in its chunk.
    this.compact();
    this.locate(i);
    const c = locC;
    const ch = this.chunks[c];
    flat(ch).splice(locJ, 0, v);
    ch.n++;
    ch.bytes += v.length;
    this.length++;
    this.lpBytes += lpEntrySize(v);
    this.reshape(c);
  }

  /** Remove the element at index i. */
  removeAt(i: number): void {
    if (this.f !== null) {
      const o = this.offsetOf(i);
      return this.splice(o, nextEntry(this.f, o), '', this.length - 1);
    }
    if (i < this.length - 1 - i) {
      if (this.sid !== 0) this.mark(this.pos, i + 1);
      this.pos++;
    } else if (this.sid !== 0) {
      this.mark(this.pos + i, this.length - i);
    }
    this.compact();
    this.locate(i);
    const c = locC;
    const ch = this.chunks[c];
    const v = flat(ch).splice(locJ, 1)[0];
    ch.n--;
    ch.bytes -= v.length;
    this.length--;
    this.lpBytes -= lpEntrySize(v);
    this.reshape(c);
  }

  /** LTRIM: drop `left` elements from the head and `right` from the tail. */
  trim(left: number, right: number): void {
    const f = this.f;
    if (f !== null) {
      const n = this.length - left - right;
      const a = this.offsetOf(left);
      const b = n === 0 ? a : this.offsetOf(left + n);
      this.setFlat(f.slice(a, b), n);
      return;
    }
    for (let k = 0; k < left; k++) this.popHead();
    for (let k = 0; k < right; k++) this.popTail();
  }

  /**
   * LREM: remove up to `count` elements equal to the target (all when count is 0), scanning
   * from the head (count >= 0) or from the tail (count < 0). The target is given as its
   * latin1 string (null when longer than BIG_ELEMENT) and its bytes. Returns the number removed.
   */
  removeEqual(s: string | null, b: Uint8Array, count: number): number {
    if (this.f !== null) return this.removeEqualFlat(s, b, count);
    const n = this.length;
    const limit = count === 0 ? Infinity : Math.abs(count);
    const cs = this.compact();
    let removed = 0;
    let bytes = 0;
    // Index of the first removed element in scan order (head side or tail side).
    let edge = -1;
    const forward = count >= 0;
    let base = forward ? 0 : n;
    for (let k = 0; k < cs.length && removed < limit; k++) {
      const c = forward ? k : cs.length - 1 - k;
      const ch = cs[c];
      if (!forward) base -= ch.n;
      if (ch.a === null) {
        if (s === null || !packedHas(text(ch), s)) {
          if (forward) base += ch.n;
          continue;
        }
      }
      const a = flat(ch);
      const keep: Elem[] = [];
      const m = a.length;
      for (let i = 0; i < m; i++) {
        const j = forward ? i : m - 1 - i;
        const e = a[j];
        if (removed < limit && elemEquals(e, s, b)) {
          if (removed === 0) edge = base + j;
          removed++;
          bytes += lpEntrySize(e);
          ch.bytes -= e.length;
        } else {
          keep.push(e);
        }
      }
      if (forward) base += ch.n;
      else keep.reverse();
      ch.a = keep;
      ch.n = keep.length;
    }
    if (removed === 0) {
      // Chunks unpacked for nothing: only interior ones, packed again.
      for (let c = 0; c < cs.length; c++) this.settle(c);
      return 0;
    }
    // Drop empty chunks, repack the interior, reopen the ends.
    let w = 0;
    for (let c = 0; c < cs.length; c++) if (cs[c].n > 0) cs[w++] = cs[c];
    cs.length = w;
    for (let c = 0; c < cs.length; c++) this.settle(c);
    this.openEnds();
    if (forward) {
      if (this.sid !== 0) this.mark(this.pos + edge, n - edge);
    } else {
      if (this.sid !== 0) this.mark(this.pos, edge + 1);
      this.pos += removed;
    }
    this.length = n - removed;
    this.lpBytes -= bytes;
    return removed;
  }

  /** removeEqual on the flat form: the matching entries' bytes cut out, one new string. */
  private removeEqualFlat(s: string | null, b: Uint8Array, count: number): number {
    const f = this.f!;
    const n = this.length;
    const limit = count === 0 ? n : Math.min(Math.abs(count), n);
    // Cut entries as [start, end) offset pairs, in scan order (perf: in a reused scratch, no
    // array per LREM; BullMQ removes one job id from its active list per job).
    if (CUTS.length < 2 * limit) CUTS = new Int32Array(Math.max(2 * limit, 2 * CUTS.length));
    const cuts = CUTS;
    let k2 = 0;
    if (count >= 0) {
      for (let k = 0, o = 0; k < n && k2 < 2 * limit; k++) {
        const next = nextEntry(f, o);
        if (entryEquals(f, o, s, b)) {
          cuts[k2++] = o;
          cuts[k2++] = next;
        }
        o = next;
      }
    } else {
      for (let k = 0, o = f.length; k < n && k2 < 2 * limit; k++) {
        const prev = prevEntry(f, o);
        if (entryEquals(f, prev, s, b)) {
          cuts[k2++] = prev;
          cuts[k2++] = o;
        }
        o = prev;
      }
    }
    const removed = k2 >> 1;
    if (removed === 0) return 0;
    let body: string;
    // perf: one match (BullMQ's LREM of a job id) as one concatenation: the loop below costs
    // 6-12% more per LREM (bullmq-cmds-ab, both orders).
    if (removed === 1) {
      body = f.slice(0, cuts[0]) + f.slice(cuts[1]);
    } else {
      body = '';
      let last = 0;
      const fwd = count >= 0;
      for (let k = 0; k < removed; k++) {
        const j = fwd ? 2 * k : 2 * (removed - 1 - k);
        body += f.slice(last, cuts[j]);
        last = cuts[j + 1];
      }
      body += f.slice(last);
    }
    this.setFlat(body, n - removed);
    return removed;
  }
}

/** removeEqualFlat's offsets scratch (grown as needed; never held past a call). */
let CUTS = new Int32Array(16);

/** Size cap of a node when the limit is a count (quicklist's SIZE_SAFETY_LIMIT). */
const NODE_SAFETY_LIMIT = 8192;

/** No node grows past this by pushes (the largest list-max-listpack-size level). */
const MAX_NODE = 65536;

let buildFill = -2;

/** tryFlat's scan: add the element, or stop (true) where quicklist would start a second node. */
function addToBuilder(e: Elem): boolean {
  if (builder.count > 0 && !allowInsert(builder.bytes, builder.count, buildFill, e.length)) return true;
  builder.str(e);
  return false;
}
