/**
 * DenseTable: the "hashtable" encoding of hashes and sets (Redis's dict, for one value).
 *
 * Memory first: a member held as a JS string costs a 16-byte header plus its pointer in an
 * array, a Map entry ~29 bytes more. Here members (and hash values) are bytes in one arena
 * Buffer, off the JS heap:
 *
 *   arena     entries [key length varint][key bytes] and, with values, [value length][value]
 *   offs      arena offset of the entry at each position 0..size-1 (dense): a Uint32Array
 *             in a table with an index; a plain array of exactly `size` numbers in a table
 *             without (perf: a typed array costs ~200 bytes of heap before its data, and a
 *             BullMQ job hash made one at 8 fields and another at 9: garbage that the
 *             young-generation GC promoted with every job).
 *   slots     Int32Array open-addressing index (linear probing, load <= 1/2): position + 1 in
 *             the low 27 bits, the top 5 bits of the key's hash above (most probes that do not
 *             match are rejected without reading the arena); -1 = tombstone, 0 = empty.
 *             A table of up to SMALL members has none (lookups compare the members in turn),
 *             and its arena, up to 64 bytes, is on the JS heap: a small set costs no
 *             off-heap allocation and no index.
 *
 * so a member costs its bytes plus one or two length bytes, 4 bytes of offset and 8 to 16 of
 * index. Dense positions give what Redis's dict gives:
 *
 *  - a random member is one array read (SPOP, SRANDMEMBER, HRANDFIELD);
 *  - deletion moves the LAST member into the hole (O(1), positions stay dense);
 *  - SCAN walks positions from the top down. Members only ever move from a higher position to
 *    a lower one, so a member present for the whole scan is never skipped (it may be returned
 *    twice when it moves from the visited top into the unvisited bottom); Redis's SCAN
 *    guarantee. New members are appended at the top, which a running scan has already passed.
 *
 * Deleted entries and replaced values leave garbage in the arena; it is compacted (entries
 * rewritten in position order) once garbage is over half of it: amortised O(1) per change.
 * Growing the index rebuilds it from the arena (the hash is recomputed from the bytes).
 *
 * Keys and values go in and out as latin1 strings (one char per byte: exact); what comes out
 * is a fresh string, never a view of the arena, so entries can be rewritten in place.
 * Limits: 2^27 - 2 members and a 4 GB arena per table (Buffer's own limit).
 *
 * The hash is the keyspace's (seeded FNV-1a + murmur finaliser, keytable.ts), computed the same
 * way over a string's chars and over the arena's bytes.
 *
 * Cursor encoding: 0 starts (and ends) a scan; otherwise it is (next position to visit) + 1.
 */
import { hashBytes, hashKey } from '../keytable.js';

const POS_MASK = (1 << 27) - 1;
const TAG_MASK = ~POS_MASK;
const TOMB = -1;
const MIN_SLOTS = 8;
const MIN_ARENA = 64;
/**
 * A table's first arena, allocated with its first entry (perf: a hash becomes a table with a
 * value over 64 bytes, a set with its 129th member: starting at 64 bytes only meant a second
 * off-heap allocation and a copy at once; BullMQ makes such a hash per job).
 */
const FIRST_ARENA = 256;
/** A set's first arena: small sets are many, and an arena of up to 64 bytes lives on the JS heap. */
const FIRST_SET_ARENA = 32;
/** Typed arrays up to this size are allocated on the JS heap (V8's typed_array_max_size_in_heap). */
const ON_HEAP = 64;
const NO_ARENA = Buffer.alloc(0);
/**
 * Up to this many members a table has no index (slots is NO_SLOTS): a lookup compares the
 * members in turn, which costs less than hashing the key (a few length bytes compared, most
 * of them differ), and a small set or hash holds no index arrays. It gets one at SMALL + 1
 * members and drops it when shrinking under a quarter of an index's minimum load.
 */
const SMALL = 8;
/**
 * The same for tables with values (hashes): a BullMQ job hash has 10-12 fields, and an index
 * made at its 9th (an off-heap Int32Array of 32 slots, every key hashed again) cost more than
 * the scans it saves.
 */
const SMALL_VALUES = 16;
const NO_SLOTS = new Int32Array(0);
/** Loading: after this many entries a table knows its average entry size (`expect`). */
export const EXPECT_AFTER = 1024;
/** Garbage below this is never worth a compaction. */
const MIN_GARBAGE = 4096;

/** Bytes of a length as a varint (7 bits per byte, low first). */
function varintSize(n: number): number {
  let k = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    k++;
  }
  return k;
}

/** Offset just past the last varint read by readVarint. */
let rp = 0;

function readVarint(b: Uint8Array, o: number): number {
  let c = b[o++];
  if (c < 128) {
    rp = o;
    return c;
  }
  let n = c & 0x7f;
  let mul = 128;
  for (;;) {
    c = b[o++];
    n += (c & 0x7f) * mul;
    if (c < 128) break;
    mul *= 128;
  }
  rp = o;
  return n;
}

function writeVarint(b: Uint8Array, o: number, n: number): number {
  while (n >= 128) {
    b[o++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  b[o++] = n;
  return o;
}

/** An arena of `cap` bytes: on the JS heap when small (no off-heap allocation per small table). */
function newArena(cap: number): Buffer {
  return cap <= ON_HEAP ? Buffer.alloc(cap) : Buffer.allocUnsafeSlow(cap);
}

/**
 * src[s, e) into dst at d. Short runs by hand: Buffer#copy reaches the ArrayBuffer of an
 * on-heap array, which moves it off the heap.
 */
function copyBytes(src: Uint8Array, s: number, e: number, dst: Buffer, d: number): void {
  if (e - s <= ON_HEAP) for (let i = s; i < e; i++) dst[d++] = src[i];
  else dst.set(src.subarray(s, e), d);
}

/** The latin1 string k into b at o; returns the offset after it (short ones by hand, as copyBytes). */
function writeLatin1(b: Buffer, o: number, k: string): number {
  const n = k.length;
  if (n > ON_HEAP) return o + b.latin1Write(k, o, n);
  for (let i = 0; i < n; i++) b[o + i] = k.charCodeAt(i);
  return o + n;
}

export class DenseTable {
  readonly withValues: boolean;
  private slots = NO_SLOTS;
  private mask = 0;
  /** Slots that are taken (members + tombstones). */
  private used = 0;
  /** A number[] (length n) exactly when slots is NO_SLOTS; else a Uint32Array (length >= n). */
  private offs: Uint32Array | number[] = [];
  private n = 0;
  private arena: Buffer = NO_ARENA;
  private end = 0;
  private garbage = 0;

  constructor(withValues: boolean) {
    this.withValues = withValues;
  }

  get size(): number {
    return this.n;
  }

  // ------------------------------------------------------------------ reading

  /** Is the key of the entry at arena offset `o` equal to `k`? */
  private keyIs(o: number, k: string): boolean {
    const a = this.arena;
    const len = readVarint(a, o);
    if (len !== k.length) return false;
    const s = rp;
    for (let i = 0; i < len; i++) if (a[s + i] !== k.charCodeAt(i)) return false;
    return true;
  }

  /** Position of `k`, or -1. */
  indexOf(k: string): number {
    return this.slots.length === 0 ? this.scanFor(k) : this.find(k, hashKey(k));
  }

  /** A table without index: position of `k` by comparing each member, or -1. */
  private scanFor(k: string): number {
    const offs = this.offs;
    for (let p = 0; p < this.n; p++) if (this.keyIs(offs[p], k)) return p;
    return -1;
  }

  private find(k: string, h: number): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === 0) return -1;
      if (s !== TOMB && ((s ^ h) & TAG_MASK) === 0) {
        const p = (s & POS_MASK) - 1;
        if (this.keyIs(this.offs[p], k)) return p;
      }
    }
  }

  has(k: string): boolean {
    return this.indexOf(k) >= 0;
  }

  /** Is the key of the entry at arena offset `o` equal to the bytes b[s, e)? */
  private keyIsBytes(o: number, b: Uint8Array, s: number, e: number): boolean {
    const a = this.arena;
    const len = readVarint(a, o);
    if (len !== e - s) return false;
    const d = rp - s;
    for (let i = s; i < e; i++) if (a[d + i] !== b[i]) return false;
    return true;
  }

  /** Slot index of the key b[s, e) with hash h, or -1 (perf: a request's bytes, no string). */
  private slotOfBytes(b: Uint8Array, s: number, e: number, h: number): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const x = slots[i];
      if (x === 0) return -1;
      if (x !== TOMB && ((x ^ h) & TAG_MASK) === 0 && this.keyIsBytes(this.offs[(x & POS_MASK) - 1], b, s, e)) return i;
    }
  }

  /** Position of the key b[s, e), or -1. */
  indexOfBytes(b: Uint8Array, s: number, e: number): number {
    if (this.slots.length === 0) return this.scanForBytes(b, s, e);
    const i = this.slotOfBytes(b, s, e, hashBytes(b, s, e));
    return i < 0 ? -1 : (this.slots[i] & POS_MASK) - 1;
  }

  /** scanFor() of the bytes b[s, e). */
  private scanForBytes(b: Uint8Array, s: number, e: number): number {
    const offs = this.offs;
    for (let p = 0; p < this.n; p++) if (this.keyIsBytes(offs[p], b, s, e)) return p;
    return -1;
  }

  get(k: string): string | undefined {
    const p = this.indexOf(k);
    return p < 0 ? undefined : this.valAt(p);
  }

  /** Key at position p (0 <= p < size). */
  keyAt(p: number): string {
    const a = this.arena;
    const len = readVarint(a, this.offs[p]);
    return a.latin1Slice(rp, rp + len);
  }

  /** Value at position p (tables with values). */
  valAt(p: number): string {
    const a = this.arena;
    const klen = readVarint(a, this.offs[p]);
    const vlen = readVarint(a, rp + klen);
    return a.latin1Slice(rp, rp + vlen);
  }

  /**
   * Arena offset of the value at position p (tables with values); its length is then in
   * valueLen. perf: a reply written from the bytes (HGET), no string made. Valid until the
   * table changes.
   */
  valueOffset(p: number): number {
    const a = this.arena;
    const klen = readVarint(a, this.offs[p]);
    this.valueLen = readVarint(a, rp + klen);
    return rp;
  }

  valueLen = 0;

  /** Arena offset of the key at position p; its length is then in keyLen (as valueOffset). */
  keyOffset(p: number): number {
    this.keyLen = readVarint(this.arena, this.offs[p]);
    return rp;
  }

  keyLen = 0;

  /** The arena valueOffset() is an offset in (replaced as the table grows). */
  get arenaBytes(): Buffer {
    return this.arena;
  }

  /** Byte length of the key at position p (memory sampling: no string made). */
  keyLength(p: number): number {
    return readVarint(this.arena, this.offs[p]);
  }

  /** Byte length of the value at position p (tables with values). */
  valueLength(p: number): number {
    const a = this.arena;
    const klen = readVarint(a, this.offs[p]);
    return readVarint(a, rp + klen);
  }

  /** Key length plus value length of the entry at position p. */
  dataBytes(p: number): number {
    const a = this.arena;
    const klen = readVarint(a, this.offs[p]);
    return this.withValues ? klen + readVarint(a, rp + klen) : klen;
  }

  /** Bytes of the entry at arena offset o. */
  private entrySize(o: number): number {
    const a = this.arena;
    const klen = readVarint(a, o);
    let e = rp + klen;
    if (this.withValues) {
      const vlen = readVarint(a, e);
      e = rp + vlen;
    }
    return e - o;
  }

  // ------------------------------------------------------------------ writing

  /** Insert or overwrite. True if `k` is new. */
  set(k: string, v: string): boolean {
    const small = this.slots.length === 0;
    const h = small ? 0 : hashKey(k);
    const p = small ? this.scanFor(k) : this.find(k, h);
    if (p < 0) {
      this.roomForOne();
      this.push(this.append(k, v), h);
      return true;
    }
    // Same length: the value's bytes are rewritten in place (no string points into the arena).
    const o = this.offs[p];
    const a = this.arena;
    const klen = readVarint(a, o);
    const vo = rp + klen;
    const vlen = readVarint(a, vo);
    if (vlen === v.length) {
      writeLatin1(a, rp, v);
      return false;
    }
    const oldSize = rp + vlen - o;
    // (append may compact: the old entry is then copied too, and is garbage all the same)
    this.offs[p] = this.append(k, v);
    this.garbage += oldSize;
    this.maybeCompact();
    return false;
  }

  /**
   * set() of the key b[ks, ke) and value b[vs, ve) (latin1 bytes: the same entry as set() of
   * their strings). perf: HSET/HMSET of a hashtable hash from the request's bytes, with no
   * field or value string.
   */
  setBytes(b: Uint8Array, ks: number, ke: number, vs: number, ve: number): boolean {
    let h = 0;
    let p: number;
    if (this.slots.length === 0) p = this.scanForBytes(b, ks, ke);
    else {
      h = hashBytes(b, ks, ke);
      const i = this.slotOfBytes(b, ks, ke, h);
      p = i < 0 ? -1 : (this.slots[i] & POS_MASK) - 1;
    }
    const vlen = ve - vs;
    if (p < 0) {
      this.roomForOne();
      this.push(this.appendBytes(b, ks, ke, vs, ve), h);
      return true;
    }
    const o = this.offs[p];
    const a = this.arena;
    const klen = readVarint(a, o);
    const vo = rp + klen;
    const oldVlen = readVarint(a, vo);
    if (oldVlen === vlen) {
      copyBytes(b, vs, ve, a, rp);
      return false;
    }
    const oldSize = rp + oldVlen - o;
    this.offs[p] = this.appendBytes(b, ks, ke, vs, ve);
    this.garbage += oldSize;
    this.maybeCompact();
    return false;
  }

  /** Add a member of a set. True if new. */
  add(k: string): boolean {
    let h = 0;
    if (this.slots.length === 0) {
      if (this.scanFor(k) >= 0) return false;
    } else {
      h = hashKey(k);
      if (this.find(k, h) >= 0) return false;
    }
    this.roomForOne();
    this.push(this.append(k, null), h);
    return true;
  }

  /** add() of the bytes b[s, e) (a set member straight from a request). True if new. */
  addBytes(b: Uint8Array, s: number, e: number): boolean {
    let h = 0;
    if (this.slots.length === 0) {
      if (this.scanForBytes(b, s, e) >= 0) return false;
    } else {
      h = hashBytes(b, s, e);
      if (this.slotOfBytes(b, s, e, h) >= 0) return false;
    }
    this.addNewBytes(b, s, e, h);
    return true;
  }

  /**
   * addBytes() of a member known to be absent, h its hash if the table has an index (perf: a
   * small set converting to a table, whose members are distinct, looks none of them up).
   */
  addNewBytes(b: Uint8Array, s: number, e: number, h = this.slots.length === 0 ? 0 : hashBytes(b, s, e)): void {
    this.roomForOne();
    const len = e - s;
    const need = varintSize(len) + len;
    if (this.end + need > this.arena.length) this.growArena(need);
    const a = this.arena;
    const o = this.end;
    const w = writeVarint(a, o, len);
    copyBytes(b, s, e, a, w);
    this.end = w + len;
    this.push(o, h);
  }

  private roomForOne(): void {
    if (this.n >= POS_MASK - 1) throw new RangeError('DenseTable: too many members');
  }

  /**
   * Take the entry just written at arena offset o as position n; h is its hash (unused while
   * the table has no index: one made here covers every entry).
   */
  private push(o: number, h: number): void {
    const p = this.n;
    const offs = this.offs;
    if (this.slots.length === 0) (offs as number[]).push(o);
    else {
      if (p === offs.length) {
        const next = new Uint32Array(p * 2);
        next.set(offs);
        this.offs = next;
      }
      this.offs[p] = o;
    }
    this.n = p + 1;
    if (this.slots.length === 0 ? p + 1 > this.small : (this.used + 1) * 2 > this.slots.length) {
      this.rebuild(p + 1);
      return;
    }
    if (this.slots.length === 0) return;
    const slots = this.slots;
    const mask = this.mask;
    let i = h & mask;
    while (slots[i] !== 0 && slots[i] !== TOMB) i = (i + 1) & mask;
    if (slots[i] === 0) this.used++;
    slots[i] = (h & TAG_MASK) | (p + 1);
  }

  /** append() of key b[ks, ke) and value b[vs, ve) (tables with values). */
  private appendBytes(b: Uint8Array, ks: number, ke: number, vs: number, ve: number): number {
    const klen = ke - ks;
    const vlen = ve - vs;
    const need = varintSize(klen) + klen + varintSize(vlen) + vlen;
    if (this.end + need > this.arena.length) this.growArena(need);
    const a = this.arena;
    const o = this.end;
    let w = writeVarint(a, o, klen);
    copyBytes(b, ks, ke, a, w);
    w = writeVarint(a, w + klen, vlen);
    copyBytes(b, vs, ve, a, w);
    this.end = w + vlen;
    return o;
  }

  /** Write an entry at the arena's end; returns its offset. */
  private append(k: string, v: string | null): number {
    const need = varintSize(k.length) + k.length + (v === null ? 0 : varintSize(v.length) + v.length);
    if (this.end + need > this.arena.length) this.growArena(need);
    const a = this.arena;
    const o = this.end;
    let w = writeLatin1(a, writeVarint(a, o, k.length), k);
    if (v !== null) w = writeLatin1(a, writeVarint(a, w, v.length), v);
    this.end = w;
    return o;
  }

  private growArena(need: number): void {
    const live = this.end - this.garbage;
    // Mostly garbage: compacting makes the room (whatever the amount: the entries are copied
    // either way, and a small set that churns does not double its arena each time it fills).
    if (this.garbage * 2 > this.end && live + need <= this.arena.length) {
      this.compact(this.arena.length);
      return;
    }
    let cap = Math.max(this.arena.length * 2, this.withValues ? FIRST_ARENA : FIRST_SET_ARENA);
    while (cap < live + need) cap *= 2;
    this.compact(cap);
  }

  /** Rewrite the live entries, in position order, into an arena of `cap` bytes. */
  private compact(cap: number): void {
    const old = this.arena;
    const a = newArena(cap);
    let w = 0;
    if (this.garbage === 0) {
      copyBytes(old, 0, this.end, a, 0);
      w = this.end;
    } else {
      const offs = this.offs;
      for (let p = 0; p < this.n; p++) {
        const o = offs[p];
        const len = this.entrySize(o);
        copyBytes(old, o, o + len, a, w);
        offs[p] = w;
        w += len;
      }
    }
    this.arena = a;
    this.end = w;
    this.garbage = 0;
  }

  private maybeCompact(): void {
    if (this.garbage > MIN_GARBAGE && this.garbage * 2 > this.end) {
      const live = this.end - this.garbage;
      let cap = MIN_ARENA;
      while (cap < live * 1.5) cap *= 2;
      this.compact(cap);
    }
  }

  delete(k: string): boolean {
    if (this.slots.length === 0) {
      const p = this.scanFor(k);
      if (p < 0) return false;
      this.removeAt(p);
      return true;
    }
    const h = hashKey(k);
    const slots = this.slots;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === 0) return false;
      if (s !== TOMB && ((s ^ h) & TAG_MASK) === 0 && this.keyIs(this.offs[(s & POS_MASK) - 1], k)) {
        this.removeSlot(i);
        return true;
      }
    }
  }

  /** delete() of the bytes b[s, e). */
  deleteBytes(b: Uint8Array, s: number, e: number): boolean {
    if (this.slots.length === 0) {
      const p = this.scanForBytes(b, s, e);
      if (p < 0) return false;
      this.removeAt(p);
      return true;
    }
    const i = this.slotOfBytes(b, s, e, hashBytes(b, s, e));
    if (i < 0) return false;
    this.removeSlot(i);
    return true;
  }

  /** Remove the entry of slot i. */
  private removeSlot(i: number): void {
    const p = (this.slots[i] & POS_MASK) - 1;
    this.slots[i] = TOMB;
    this.removeAt(p);
  }

  /** Remove the entry at position p (its slot, if indexed, already a tombstone). */
  private removeAt(p: number): void {
    const slots = this.slots;
    const mask = this.mask;
    const offs = this.offs;
    this.garbage += this.entrySize(offs[p]);
    const last = this.n - 1;
    if (p !== last) {
      // The last member moves into the hole: repoint its slot.
      if (slots.length !== 0) {
        const mh = this.hashAt(last);
        for (let j = mh & mask; ; j = (j + 1) & mask) {
          if (slots[j] !== TOMB && (slots[j] & POS_MASK) === last + 1) {
            slots[j] = (mh & TAG_MASK) | (p + 1);
            break;
          }
        }
      }
      offs[p] = offs[last];
    }
    if (slots.length === 0) (offs as number[]).pop();
    this.n = last;
    if (last === 0) {
      this.slots = NO_SLOTS;
      this.mask = 0;
      this.used = 0;
      this.offs = [];
      this.arena = NO_ARENA;
      this.end = 0;
      this.garbage = 0;
      return;
    }
    if (last * 8 < this.slots.length && this.slots.length > MIN_SLOTS) {
      this.rebuild(last);
      if (this.slots.length !== 0 && last * 4 < offs.length && offs.length > 8) this.offs = offs.slice(0, Math.max(8, last * 2));
    }
    this.maybeCompact();
  }

  /** Hash of the key at position p, from the arena. */
  private hashAt(p: number): number {
    const a = this.arena;
    const len = readVarint(a, this.offs[p]);
    return hashBytes(a, rp, rp + len);
  }

  /**
   * Size an EMPTY table for `n` members (loading a big value: no index rebuild of half a
   * million members in the middle, which would block for tens of milliseconds).
   */
  reserve(n: number): void {
    if (this.n !== 0 || n <= this.small) return;
    this.rebuild(n);
    this.offs = new Uint32Array(n);
  }

  /**
   * An EMPTY table about to take entries of about `bytes` bytes (HSET creating a hash): its
   * first arena holds them and half as much again (perf: a BullMQ job hash is created with 6
   * fields of ~200 bytes and gets 5 more when the job runs; sized for the first ones only, it
   * took a second arena and a copy per job).
   */
  reserveBytes(bytes: number): void {
    if (this.n !== 0 || this.arena.length !== 0) return;
    let cap = this.withValues ? FIRST_ARENA : FIRST_SET_ARENA;
    while (cap < bytes * 1.5) cap *= 2;
    this.arena = newArena(cap);
  }

  /**
   * Loading: grow the arena, once, to hold `n` entries of the average size so far, so that
   * it does not double later by copying tens of megabytes in one go.
   */
  expect(n: number): void {
    if (this.n === 0 || this.garbage !== 0) return;
    const want = Math.ceil((this.end / this.n) * n * 1.125);
    if (want > this.arena.length) this.compact(want);
  }

  /** Members up to which the table has no index. */
  private get small(): number {
    return this.withValues ? SMALL_VALUES : SMALL;
  }

  /**
   * Re-index every member in a table sized for `n` members (drops tombstones). Dropping or
   * making the index turns `offs` into a plain array or a typed one.
   */
  private rebuild(n: number): void {
    if (n <= this.small) {
      if (this.slots.length !== 0) this.offs = Array.from((this.offs as Uint32Array).subarray(0, this.n));
      this.slots = NO_SLOTS;
      this.mask = 0;
      this.used = 0;
      return;
    }
    if (this.slots.length === 0) {
      let size = 8;
      while (size < n) size *= 2;
      const offs = new Uint32Array(size);
      offs.set(this.offs as number[]);
      this.offs = offs;
    }
    let cap = MIN_SLOTS;
    while (cap < n * 2 + 2) cap *= 2;
    const slots = new Int32Array(cap);
    const mask = cap - 1;
    for (let p = 0; p < this.n; p++) {
      const h = this.hashAt(p);
      let i = h & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = (h & TAG_MASK) | (p + 1);
    }
    this.slots = slots;
    this.mask = mask;
    this.used = this.n;
  }

  // ------------------------------------------------------------------ positions

  /** Position of a uniformly random member (size must be > 0). */
  randomIndex(): number {
    return Math.floor(Math.random() * this.n);
  }

  /**
   * Visit up to `count` positions from `cursor` downwards, calling fn(index) for each.
   * Returns the next cursor (0 when the walk is complete).
   */
  scan(cursor: number, count: number, fn: (i: number) => void): number {
    let i = cursor === 0 ? this.n - 1 : Math.min(cursor - 1, this.n - 1);
    for (let n = 0; i >= 0 && n < count; n++, i--) fn(i);
    return i < 0 ? 0 : i + 1;
  }

  /** Every key, in position order. */
  keys(): string[] {
    const out = new Array<string>(this.n);
    for (let p = 0; p < this.n; p++) out[p] = this.keyAt(p);
    return out;
  }

  /** A deep copy. */
  clone(): DenseTable {
    const t = new DenseTable(this.withValues);
    t.slots = this.slots.length === 0 ? NO_SLOTS : this.slots.slice();
    t.mask = this.mask;
    t.used = this.used;
    t.offs = this.offs.slice();
    t.n = this.n;
    t.arena = this.arena.length === 0 ? NO_ARENA : newArena(this.arena.length);
    copyBytes(this.arena, 0, this.end, t.arena, 0);
    t.end = this.end;
    t.garbage = this.garbage;
    return t;
  }
}
