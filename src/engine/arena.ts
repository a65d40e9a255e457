/**
 * Arena: a compact tier of the keyspace for plain string keys (short key, short string value,
 * no TTL), held off the V8 heap: no JS object per key.
 *
 * Why: every key of the KeyTable is an Entry, a key string and usually a value string (three
 * V8 objects, ~100 B/key beside the bytes). At 10M keys the collector's work on them dominates
 * loads (full GCs of 4-13 s, young GCs of ~46 ms) and reloads (48% GC), and 1M strings take
 * 1.9x Redis's RSS. Here a key costs one record in a large Buffer and two index words.
 *
 * Layout:
 *  - Records in 16 MB chunks (Buffer.allocUnsafeSlow: outside the V8 heap), 8-byte aligned:
 *      int32 bits (the Entry's `bits`: LRU clock or LFU data * 4 + encoding hint)
 *      u8 key length, u8 value length, u8 flags (DEAD, INT), u8 spare
 *      key bytes, value bytes, padding to 8.
 *    A record is named by its `ref`: chunk number * 2^21 + its offset in 8-byte units. Unit 0
 *    of chunk 0 is never a record, so 0 means "none". Numbers of freed chunks are reused.
 *  - An open-addressing index (linear probing): one Int32Array of [hash, ref] pairs, slot i at
 *    [2i, 2i + 1] (keytable.ts's hash, so both tiers hash a key alike; the ref as an int32, 0
 *    empty, TOMB deleted). Interleaved, so that a probe reads one cache line: two parallel
 *    arrays cost two misses per probe at 10M keys. A lookup compares the hash before it
 *    touches a record.
 *  - Deleting or resizing a value marks the record DEAD and counts its bytes as garbage in its
 *    chunk; compactStep() (cron, time-bounded, resumable) moves the live records of a chunk
 *    more than half garbage to the tail and frees the chunk.
 *
 * SCAN (scanStep) is Redis's dictScan over the index's home buckets (reverse-binary cursor
 * over hash bits, keytable.ts alike): records that move in memory keep their hash, so moves
 * and index resizes do not disturb a walk. A key present for a whole walk is met at least
 * once; a shrink of the index may repeat some, as in Redis.
 *
 * Refs are 32-bit: the arena holds at most 2^32 units (32 GB) of chunks; when it is full,
 * add() and a value that must move answer 0 and the caller keeps the key elsewhere.
 */
import { hashBytes, hashKey } from './keytable.js';
import { parseSafeInt } from '../resp/ascii.js';
import type { ReplySink } from '../resp/reply-sink.js';
import { lzfInto } from '../rdb/lzf.js';

const CHUNK_SHIFT = 24; // 16 MB
const CHUNK_BYTES = 1 << CHUNK_SHIFT;
const UNIT_SHIFT = 3; // 8-byte units
const CHUNK_UNITS = CHUNK_BYTES >>> UNIT_SHIFT;
const MAX_CHUNKS = 2 ** 32 / CHUNK_UNITS; // refs are uint32
const HEADER = 8;
/** Longest key and value held here (one length byte each). */
export const ARENA_MAX_KEY = 255;
export const ARENA_MAX_VALUE = 255;

const F_DEAD = 1;
/** The value bytes are the canonical decimal form of a safe integer (Stored `number`). */
const F_INT = 2;

/** Index ref words (int32): an empty slot, a deleted one. */
const EMPTY = 0;
const TOMB = -1;
const MIN_SLOTS = 16;

/** Room for one key copied out of a record that moves. */
const SCRATCH = Buffer.alloc(ARENA_MAX_KEY);

/** Bit reversal of a 32-bit cursor (dictScan's rev()). */
export function rev(v: number): number {
  v = ((v >>> 1) & 0x55555555) | ((v & 0x55555555) << 1);
  v = ((v >>> 2) & 0x33333333) | ((v & 0x33333333) << 2);
  v = ((v >>> 4) & 0x0f0f0f0f) | ((v & 0x0f0f0f0f) << 4);
  v = ((v >>> 8) & 0x00ff00ff) | ((v & 0x00ff00ff) << 8);
  v = (v >>> 16) | (v << 16);
  return v >>> 0;
}

/** dictScan's cursor after bucket `v` at granularity `m`: the high bits incremented, reversed. */
export function nextCursor(v: number, m: number): number {
  v = (v | ~m) >>> 0;
  v = rev(v);
  v = (v + 1) >>> 0;
  return rev(v);
}

/** Index slots migrated per write while the index is resized (see Arena.migrate). */
const MIGRATE_STEP = 256;

/** An index of `slots` slots ([hash, ref] pairs, all empty). */
function newIndex(slots: number): Int32Array {
  return new Int32Array(2 * slots);
}

/**
 * Call fn for the records of every home bucket of an index (ix, mask) that expands bucket
 * v & m (m <= mask). With linear probing a key whose home slot is b lies in the run of
 * non-empty slots starting at b.
 */
function visitBuckets(ix: Int32Array, mask: number, v: number, m: number, fn: (r: number) => void): void {
  const step = m + 1;
  for (let b = v & m; b <= mask; b += step) {
    for (let i = b; ix[2 * i + 1] !== EMPTY; i = (i + 1) & mask) {
      const r = ix[2 * i + 1];
      if (r !== TOMB && (ix[2 * i] & mask) === b) fn(r >>> 0);
    }
  }
}

/** The slot of ref `r` (hash `h`) in an index, -1 if absent. */
function slotIn(ix: Int32Array, mask: number, h: number, r: number): number {
  const w = r | 0;
  for (let i = h & mask; ; i = (i + 1) & mask) {
    const x = ix[2 * i + 1];
    if (x === w) return i;
    if (x === EMPTY) return -1;
  }
}

/** Write the latin1 string `s` at c[o]: a JS loop for short ones (perf: a native call costs more). */
function putLatin1(c: Buffer, o: number, s: string): void {
  const n = s.length;
  if (n > 32) c.latin1Write(s, o, n);
  else for (let i = 0; i < n; i++) c[o + i] = s.charCodeAt(i);
}

/**
 * b[s, s + n) into chunk c (w: a DataView of it) at d. perf: four bytes per store from 8 bytes
 * on (an import's 700k values copied byte by byte took ~120 ms, ~45 so; a DataView of each
 * source, or Buffer#copy, would be an object per call).
 */
function copyInto(w: DataView, c: Buffer, d: number, b: Uint8Array, s: number, n: number): void {
  let i = 0;
  if (n >= 8) for (; i + 4 <= n; i += 4) w.setInt32(d + i, b[s + i] | (b[s + i + 1] << 8) | (b[s + i + 2] << 16) | (b[s + i + 3] << 24), true);
  for (; i < n; i++) c[d + i] = b[s + i];
}

function recordBytes(klen: number, vlen: number): number {
  return (HEADER + klen + vlen + 7) & ~7;
}

export class Arena {
  private chunks: (Buffer | null)[] = [];
  /** The tail chunk's bytes as a DataView (addBytes' copies). */
  private tailWords: DataView | null = null;
  /** Bytes written in each chunk (its records end there). */
  private used: number[] = [];
  /** Bytes of live records in each chunk. */
  private live: number[] = [];
  /** Chunk being appended to, and the offset of its free space. */
  private tail = -1;
  private pos = 0;

  /** The index: [hash, ref] per slot (see the header). */
  private ix = newIndex(MIN_SLOTS);
  private mask = MIN_SLOTS - 1;
  private count = 0;
  /** Occupied slots of the current index, tombstones included (probe chains end only at an EMPTY slot). */
  private filled = 0;
  /**
   * The index being moved from while the index is resized (null otherwise): its records move
   * into the current one a few slots per write and in cron (migrate), so that no write pays
   * for rehashing millions of keys (a 3M-key index took 0.3-1.4 s in one go). Lookups and
   * walks see both; records are only removed from it (TOMB), never added.
   */
  private oldIx: Int32Array | null = null;
  private oldMask = 0;
  private migrateAt = 0;

  /** Live record bytes (headers and padding included), for accounting and tests. */
  liveBytes = 0;

  /** Compaction in progress: the chunk and the offset reached in it (-1: none). */
  private compacting = -1;
  private compactAt = 0;

  get size(): number {
    return this.count;
  }

  /** Bytes of the index. */
  get indexBytes(): number {
    return this.ix.byteLength + (this.oldIx === null ? 0 : this.oldIx.byteLength);
  }

  /** Bytes held: chunks allocated plus the index. */
  get heldBytes(): number {
    let n = 0;
    for (const c of this.chunks) if (c !== null) n += c.length;
    return n + this.indexBytes;
  }

  // ---------------------------------------------------------------- lookup

  /** The record of the key whose bytes are b[s, e) (hash `h` = hashBytes(b, s, e)), or 0. */
  findBytes(b: Uint8Array, s: number, e: number, h: number): number {
    if (this.count === 0 || e - s > ARENA_MAX_KEY) return 0;
    const r = this.probeBytes(this.ix, this.mask, b, s, e, h);
    return r !== 0 || this.oldIx === null ? r : this.probeBytes(this.oldIx, this.oldMask, b, s, e, h);
  }

  private probeBytes(ix: Int32Array, mask: number, b: Uint8Array, s: number, e: number, h: number): number {
    const n = e - s;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const r = ix[2 * i + 1];
      if (r === EMPTY) return 0;
      if (ix[2 * i] === h && r !== TOMB) {
        const c = this.chunks[r >>> (CHUNK_SHIFT - UNIT_SHIFT)]!;
        const o = (r & (CHUNK_UNITS - 1)) << UNIT_SHIFT;
        if (c[o + 4] === n) {
          let k = 0;
          const base = o + HEADER - s;
          while (k < n && c[base + s + k] === b[s + k]) k++;
          if (k === n) return r >>> 0;
        }
      }
    }
  }

  /** findBytes() of a latin1 key string. */
  find(key: string, h = hashKey(key)): number {
    if (this.count === 0 || key.length > ARENA_MAX_KEY) return 0;
    const r = this.probe(this.ix, this.mask, key, h);
    return r !== 0 || this.oldIx === null ? r : this.probe(this.oldIx, this.oldMask, key, h);
  }

  private probe(ix: Int32Array, mask: number, key: string, h: number): number {
    const n = key.length;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const r = ix[2 * i + 1];
      if (r === EMPTY) return 0;
      if (ix[2 * i] === h && r !== TOMB) {
        const c = this.chunks[r >>> (CHUNK_SHIFT - UNIT_SHIFT)]!;
        const o = ((r & (CHUNK_UNITS - 1)) << UNIT_SHIFT) + HEADER;
        if (c[o - 4] === n) {
          let k = 0;
          while (k < n && c[o + k] === key.charCodeAt(k)) k++;
          if (k === n) return r >>> 0;
        }
      }
    }
  }

  // ---------------------------------------------------------------- records

  private chunkOf(r: number): Buffer {
    return this.chunks[r >>> (CHUNK_SHIFT - UNIT_SHIFT)]!;
  }

  private offOf(r: number): number {
    return (r & (CHUNK_UNITS - 1)) << UNIT_SHIFT;
  }

  /** The key of record `r` as a latin1 string. */
  key(r: number): string {
    const c = this.chunkOf(r);
    const o = this.offOf(r) + HEADER;
    return c.latin1Slice(o, o + c[o - 4]);
  }

  keyLength(r: number): number {
    return this.chunkOf(r)[this.offOf(r) + 4];
  }

  /** The value of record `r` in its Entry form (db.ts Stored): a safe integer or a latin1 string. */
  value(r: number): string | number {
    const c = this.chunkOf(r);
    const o = this.offOf(r);
    const s = o + HEADER + c[o + 4];
    const e = s + c[o + 5];
    return c[o + 6] & F_INT ? parseSafeInt(c, s, e) : c.latin1Slice(s, e);
  }

  valueLength(r: number): number {
    return this.chunkOf(r)[this.offOf(r) + 5];
  }

  /**
   * Record `r`'s value as a bulk reply, from its bytes in the chunk (no string built; an
   * integer's bytes are its canonical decimal digits, what String(v) would write).
   */
  replyValue(r: number, out: ReplySink): void {
    const c = this.chunkOf(r);
    const o = this.offOf(r);
    const s = o + HEADER + c[o + 4];
    out.bulkBytes(c, s, s + c[o + 5]);
  }

  /** True when the value is held as an integer (OBJECT ENCODING int). */
  isInt(r: number): boolean {
    const c = this.chunkOf(r);
    return (c[this.offOf(r) + 6] & F_INT) !== 0;
  }

  bits(r: number): number {
    return this.chunkOf(r).readInt32LE(this.offOf(r));
  }

  setBits(r: number, bits: number): void {
    this.chunkOf(r).writeInt32LE(bits, this.offOf(r));
  }

  // ---------------------------------------------------------------- writing

  /** Numbers of freed chunks (reused before new ones). */
  private freeChunks: number[] = [];

  /** True when a record of `size` bytes can be allocated. */
  private room(size: number): boolean {
    return (this.tail >= 0 && this.pos + size <= CHUNK_BYTES) || this.freeChunks.length > 0 || this.chunks.length < MAX_CHUNKS;
  }

  /** Room for a record of `size` bytes at the tail (room() must hold); returns its ref. */
  private alloc(size: number): number {
    if (this.tail < 0 || this.pos + size > CHUNK_BYTES) {
      const k = this.freeChunks.length > 0 ? this.freeChunks.pop()! : this.chunks.length;
      if (k === this.chunks.length) {
        this.chunks.push(null);
        this.used.push(0);
        this.live.push(0);
      }
      const c = (this.chunks[k] = Buffer.allocUnsafeSlow(CHUNK_BYTES));
      this.tailWords = new DataView(c.buffer, c.byteOffset, CHUNK_BYTES);
      this.tail = k;
      this.pos = k === 0 ? 8 : 0; // unit 0 is never a ref
    }
    const r = (this.tail << (CHUNK_SHIFT - UNIT_SHIFT)) + (this.pos >>> UNIT_SHIFT);
    this.pos += size;
    this.used[this.tail] = this.pos;
    this.live[this.tail] += size;
    this.liveBytes += size;
    return r >>> 0;
  }

  /**
   * Add a key known not to be here: key bytes kb[ks, ke) (or its latin1 string; hash `h`), value
   * its Stored form `v`. Lengths must be within ARENA_MAX_KEY / ARENA_MAX_VALUE. Returns the
   * record, 0 when the arena is full.
   */
  add(h: number, kb: Uint8Array | string, ks: number, ke: number, v: string | number, bits: number): number {
    const klen = ke - ks;
    const vs = typeof v === 'number' ? String(v) : v;
    const size = recordBytes(klen, vs.length);
    if (!this.room(size)) return 0;
    const r = this.alloc(size);
    this.write(r, kb, ks, klen, vs, typeof v === 'number', bits);
    this.indexInsert(h, r);
    this.count++;
    return r;
  }

  /**
   * add() of a value given as bytes vb[vs, ve), held as an integer (F_INT) if `int`: then the
   * bytes must be its canonical decimal form (an RDB import's values, without a string each).
   */
  addBytes(h: number, kb: Uint8Array, ks: number, ke: number, vb: Uint8Array, vs: number, ve: number, int: boolean, bits: number): number {
    const vlen = ve - vs;
    const r = this.openRecord(kb, ks, ke, vlen, int, bits);
    if (r === 0) return 0;
    copyInto(this.tailWords!, this.chunkOf(r), this.valueAt, vb, vs, vlen);
    return this.closeRecord(h, r);
  }

  /**
   * addBytes() of a value of `vlen` bytes (not an integer) given LZF-compressed as inp[cs, ce),
   * which the caller checked (lzfCheck) expands to exactly that: decompressed straight into the
   * record (an RDB import's values). Throws when it does not.
   */
  addLzf(h: number, kb: Uint8Array, ks: number, ke: number, inp: Uint8Array, cs: number, ce: number, vlen: number, bits: number): number {
    const r = this.openRecord(kb, ks, ke, vlen, false, bits);
    if (r === 0) return 0;
    if (!lzfInto(inp, cs, ce, this.chunkOf(r), this.valueAt, vlen)) throw new Error('a checked LZF value failed to decompress');
    return this.closeRecord(h, r);
  }

  /** Where openRecord's value goes in its chunk. */
  private valueAt = 0;

  /**
   * A new record of key kb[ks, ke) and a value of `vlen` bytes (addBytes, addLzf): header and
   * key written, the value to go at `valueAt` in its chunk. Returns its ref, 0 when there is no room.
   */
  private openRecord(kb: Uint8Array, ks: number, ke: number, vlen: number, int: boolean, bits: number): number {
    const klen = ke - ks;
    const size = recordBytes(klen, vlen);
    if (!this.room(size)) return 0;
    const r = this.alloc(size);
    const c = this.chunkOf(r);
    const o = this.header(r, klen, vlen, int, bits);
    copyInto(this.tailWords!, c, o + HEADER, kb, ks, klen);
    this.valueAt = o + HEADER + klen;
    return r;
  }

  /** openRecord's record `r` (key hash h), its value written, into the index; returns r. */
  private closeRecord(h: number, r: number): number {
    this.indexInsert(h, r);
    this.count++;
    return r;
  }

  /** Write record r's header (bits, key and value lengths, flags); returns its offset in its chunk. */
  private header(r: number, klen: number, vlen: number, int: boolean, bits: number): number {
    const c = this.chunkOf(r);
    const o = this.offOf(r);
    c.writeInt32LE(bits, o);
    c[o + 4] = klen;
    c[o + 5] = vlen;
    c[o + 6] = int ? F_INT : 0;
    c[o + 7] = 0;
    return o;
  }

  private write(r: number, kb: Uint8Array | string, ks: number, klen: number, v: string, int: boolean, bits: number): void {
    const c = this.chunkOf(r);
    const o = this.header(r, klen, v.length, int, bits);
    if (typeof kb === 'string') putLatin1(c, o + HEADER, kb);
    else for (let i = 0, d = o + HEADER; i < klen; i++) c[d + i] = kb[ks + i]; // perf: no subarray per key
    putLatin1(c, o + HEADER + klen, v);
  }

  /**
   * Replace the value of record `r` (key hash `h`); keeps its bits unless given. In place when
   * the record has room, else the record moves to the tail. Returns the (possibly new) ref,
   * 0 when it would have to move and the arena is full (then nothing changed).
   */
  setValue(r: number, h: number, v: string | number, bits: number): number {
    const vs = typeof v === 'number' ? String(v) : v;
    const c = this.chunkOf(r);
    const o = this.offOf(r);
    const klen = c[o + 4];
    if (recordBytes(klen, vs.length) === recordBytes(klen, c[o + 5])) {
      c.writeInt32LE(bits, o);
      c[o + 5] = vs.length;
      c[o + 6] = typeof v === 'number' ? F_INT : 0;
      putLatin1(c, o + HEADER + klen, vs);
      return r;
    }
    if (!this.room(recordBytes(klen, vs.length))) return 0;
    // Moves: the key is copied out first.
    c.copy(SCRATCH, 0, o + HEADER, o + HEADER + klen);
    this.remove(r, h);
    return this.add(h, SCRATCH, 0, klen, v, bits);
  }

  /**
   * Remove record `r` (key hash `h`). The index shrinks when sparse unless `mayShrink` is false
   * (a walk that must not meet keys twice is in progress).
   */
  remove(r: number, h: number, mayShrink = true): void {
    const i = this.slotOf(h, r);
    if (i >= 0) this.ix[2 * i + 1] = TOMB;
    else this.oldIx![2 * (-1 - i) + 1] = TOMB;
    this.kill(r);
    this.count--;
    if (this.oldIx !== null) this.migrate(MIGRATE_STEP);
    if (mayShrink) this.shrinkIfSparse();
  }

  /** Shrink the index when under 1/8 full (not below the floor); free everything when empty. */
  shrinkIfSparse(): void {
    if (this.count === 0) {
      if (this.liveBytes === 0 && (this.chunks.length > 0 || this.mask + 1 > this.floor)) this.clear(); // the chunks go at once
    } else if (this.count * 8 < this.mask + 1 && this.mask + 1 > this.floor) {
      const want = Math.max(this.floor, this.slotsFor(this.count));
      if (want < this.mask + 1) this.startResize(want);
    }
  }

  /** Smallest index size (slots) kept when shrinking (see KeyTable's TIER_RATIO). */
  private floor = MIN_SLOTS;

  /** Keep at least `n` slots (a power of two) from now on, growing the index now if smaller. */
  minSlots(n: number): void {
    this.floor = Math.max(MIN_SLOTS, n);
    if (this.mask + 1 < this.floor) this.startResize(this.floor);
  }

  /** Mark a record dead and count its bytes as garbage. */
  private kill(r: number): void {
    const c = this.chunkOf(r);
    const o = this.offOf(r);
    c[o + 6] |= F_DEAD;
    const size = recordBytes(c[o + 4], c[o + 5]);
    const k = r >>> (CHUNK_SHIFT - UNIT_SHIFT);
    this.live[k] -= size;
    this.liveBytes -= size;
  }

  /** Drop everything. */
  clear(): void {
    this.chunks = [];
    this.tailWords = null;
    this.used = [];
    this.live = [];
    this.tail = -1;
    this.pos = 0;
    this.ix = newIndex(this.floor);
    this.mask = this.floor - 1;
    this.count = 0;
    this.filled = 0;
    this.oldIx = null;
    this.liveBytes = 0;
    this.compacting = -1;
    this.freeChunks = [];
  }

  /** Size the index for `n` keys at once (a load of a known number of keys). */
  reserve(n: number): void {
    const want = this.slotsFor(this.count + n);
    if (want > this.mask + 1) this.startResize(want);
  }

  // ---------------------------------------------------------------- index

  /** Slots for `n` keys: a power of two at most 5/8 full. */
  private slotsFor(n: number): number {
    let s = this.floor;
    while (s * 5 < n * 8) s *= 2;
    return s;
  }

  /**
   * The index word at hash h's home slot, nothing changed: an import reads those of the next
   * records ahead (Db.importTouch), so that their cache misses overlap.
   */
  touch(h: number): number {
    return this.ix[2 * (h & this.mask) + 1];
  }

  private indexInsert(h: number, r: number): void {
    if (this.oldIx !== null) this.migrate(MIGRATE_STEP);
    if ((this.filled + 1) * 4 > (this.mask + 1) * 3) this.startResize(this.slotsFor(this.count + 1));
    const mask = this.mask;
    const ix = this.ix;
    let i = h & mask;
    let x = ix[2 * i + 1];
    while (x !== EMPTY && x !== TOMB) {
      i = (i + 1) & mask;
      x = ix[2 * i + 1];
    }
    if (x === EMPTY) this.filled++;
    ix[2 * i] = h;
    ix[2 * i + 1] = r;
  }

  /** The slot of record `r` (hash `h`): i in the current index, -1 - i in the old one. */
  private slotOf(h: number, r: number): number {
    const i = slotIn(this.ix, this.mask, h, r);
    if (i >= 0) return i;
    const j = this.oldIx === null ? -1 : slotIn(this.oldIx, this.oldMask, h, r);
    if (j < 0) throw new Error('Arena: record not in the index');
    return -1 - j;
  }

  private repoint(h: number, r: number, nr: number): void {
    const i = this.slotOf(h, r);
    if (i >= 0) this.ix[2 * i + 1] = nr;
    else this.oldIx![2 * (-1 - i) + 1] = nr;
  }

  /**
   * Move to an index of `slots` slots (drops tombstones): the current one becomes the old one,
   * whose records migrate() moves over. One resize at a time: a pending one is finished first.
   */
  private startResize(slots: number): void {
    if (this.oldIx !== null) this.migrate(Infinity);
    if (this.count === 0) {
      // Nothing to move (and no old index to keep).
      this.ix = newIndex(slots);
      this.mask = slots - 1;
      this.filled = 0;
      return;
    }
    this.oldIx = this.ix;
    this.oldMask = this.mask;
    this.migrateAt = 0;
    this.ix = newIndex(slots);
    this.mask = slots - 1;
    this.filled = 0;
  }

  /**
   * Move the records of up to `n` slots of the old index into the current one (their old
   * slots become tombstones: the old probe chains stay whole). Returns true when done.
   */
  migrate(n: number): boolean {
    const old = this.oldIx;
    if (old === null) return true;
    const ix = this.ix;
    const mask = this.mask;
    const slots = this.oldMask + 1;
    let j = this.migrateAt;
    const end = Math.min(slots, j + n);
    let filled = 0;
    for (; j < end; j++) {
      const r = old[2 * j + 1];
      if (r === EMPTY || r === TOMB) continue;
      const h = old[2 * j];
      let i = h & mask;
      while (ix[2 * i + 1] !== EMPTY) i = (i + 1) & mask;
      ix[2 * i] = h;
      ix[2 * i + 1] = r;
      filled++;
      old[2 * j + 1] = TOMB;
    }
    this.filled += filled;
    this.migrateAt = j;
    if (j < slots) return false;
    this.oldIx = null;
    return true;
  }

  /** migrate() until `deadline` (Date.now() ms): cron's share. */
  migrateUntil(deadline: number): void {
    while (!this.migrate(65536) && Date.now() < deadline);
  }

  // ---------------------------------------------------------------- walking

  /** Index mask (slots - 1): the granularity of this tier's SCAN buckets. */
  get scanMask(): number {
    return this.oldIx === null || this.mask < this.oldMask ? this.mask : this.oldMask;
  }

  /**
   * Call fn for every record whose key hash h has (h & m) === (v & m), for a mask m no larger
   * than scanMask: the records of every index bucket that expands bucket v & m. With linear
   * probing a key whose home slot is b lies in the run of non-empty slots starting at b.
   */
  scanBuckets(v: number, m: number, fn: (r: number) => void): void {
    visitBuckets(this.ix, this.mask, v, m, fn);
    if (this.oldIx !== null) visitBuckets(this.oldIx, this.oldMask, v, m, fn);
  }

  /**
   * One step of dictScan over this tier alone (reverse-binary cursor over the index's home
   * buckets): every key present for a whole walk is met at least once whatever resizes happen
   * in between (a shrink may repeat some); returns the next cursor, 0 when complete.
   */
  scanStep(cursor: number, fn: (r: number) => void): number {
    if (this.count === 0) return 0;
    const m = this.scanMask;
    this.scanBuckets(cursor >>> 0, m, fn);
    return nextCursor(cursor, m);
  }

  /** Every live record (in ref order). Do not change the arena while iterating. */
  *records(): IterableIterator<number> {
    const batch: number[] = [];
    let cursor = 0;
    do {
      batch.length = 0;
      cursor = this.walkStep(cursor, 1024, (r) => batch.push(r));
      for (const r of batch) yield r;
    } while (cursor !== 0);
  }

  /**
   * Call fn for the live records in ref order from `cursor` (0: the start) until `count` were
   * met; returns the ref to continue from, 0 at the end (records(), which walks memory in order).
   */
  private walkStep(cursor: number, count: number, fn: (r: number) => void): number {
    let k = cursor === 0 ? 0 : cursor >>> (CHUNK_SHIFT - UNIT_SHIFT);
    let o = cursor === 0 ? 0 : this.offOf(cursor);
    let met = 0;
    for (; k < this.chunks.length; k++, o = 0) {
      const c = this.chunks[k];
      if (c === null) continue;
      const end = this.used[k];
      if (k === 0 && o === 0) o = 8;
      while (o < end) {
        const size = recordBytes(c[o + 4], c[o + 5]);
        if ((c[o + 6] & F_DEAD) === 0) {
          if (met >= count) return ((k << (CHUNK_SHIFT - UNIT_SHIFT)) + (o >>> UNIT_SHIFT)) >>> 0;
          fn(((k << (CHUNK_SHIFT - UNIT_SHIFT)) + (o >>> UNIT_SHIFT)) >>> 0);
          met++;
        }
        o += size;
      }
    }
    return 0;
  }

  /** A random live record, or 0 when empty (a random occupied slot of either index). */
  random(): number {
    if (this.count === 0) return 0;
    for (;;) {
      const ix = this.oldIx !== null && Math.random() < 0.5 ? this.oldIx : this.ix;
      const n = ix.length >>> 1;
      let i = Math.floor(Math.random() * n);
      for (let tries = 0; tries < n; tries++, i = (i + 1) & (n - 1)) {
        const r = ix[2 * i + 1];
        if (r !== EMPTY && r !== TOMB) return r >>> 0;
      }
    }
  }

  /**
   * Up to `n` records from consecutive index slots starting at a random one (eviction sampling,
   * as KeyTable.someEntries); pushes refs into `out`, returns how many.
   */
  some(n: number, out: number[]): number {
    if (this.count === 0 || n <= 0) return 0;
    let added = 0;
    for (const ix of this.oldIx === null ? [this.ix] : [this.ix, this.oldIx]) {
      const mask = (ix.length >>> 1) - 1;
      let i = Math.floor(Math.random() * (mask + 1));
      for (let steps = 0; steps < n * 10 && added < n; steps++, i = (i + 1) & mask) {
        const r = ix[2 * i + 1];
        if (r !== EMPTY && r !== TOMB) {
          out.push(r >>> 0);
          added++;
        }
      }
    }
    return added;
  }

  // ---------------------------------------------------------------- compaction

  /** Garbage bytes (dead records) in the chunks. */
  get garbageBytes(): number {
    let g = 0;
    for (let k = 0; k < this.chunks.length; k++) if (this.chunks[k] !== null) g += this.used[k] - this.live[k];
    return g;
  }

  /**
   * Move the live records of chunks more than half garbage to the tail and free those chunks,
   * until `deadline` (Date.now() ms). Resumable; returns true when nothing is left to do.
   */
  compactStep(deadline: number): boolean {
    for (;;) {
      if (this.compacting < 0) {
        this.compacting = this.pickChunk();
        this.compactAt = this.compacting === 0 ? 8 : 0;
        if (this.compacting < 0) return true;
      }
      const k = this.compacting;
      const c = this.chunks[k]!;
      const end = this.used[k];
      let o = this.compactAt;
      let moved = 0;
      while (o < end) {
        const klen = c[o + 4];
        const size = recordBytes(klen, c[o + 5]);
        if ((c[o + 6] & F_DEAD) === 0) {
          if (!this.room(size)) return true; // full: nothing can move now
          const r = ((k << (CHUNK_SHIFT - UNIT_SHIFT)) + (o >>> UNIT_SHIFT)) >>> 0;
          const h = hashBytes(c, o + HEADER, o + HEADER + klen);
          const nr = this.alloc(size);
          c.copy(this.chunkOf(nr), this.offOf(nr), o, o + size);
          this.repoint(h, r, nr);
          c[o + 6] |= F_DEAD; // the old copy (a paused compaction leaves the chunk walkable)
          this.live[k] -= size;
          this.liveBytes -= size;
        }
        o += size;
        if ((++moved & 1023) === 0 && Date.now() >= deadline) {
          this.compactAt = o;
          return false;
        }
      }
      this.chunks[k] = null;
      this.used[k] = 0;
      this.live[k] = 0;
      this.freeChunks.push(k);
      this.compacting = -1;
      if (Date.now() >= deadline) return false;
    }
  }

  /** A full chunk (not the tail) more than half garbage, or -1. */
  private pickChunk(): number {
    for (let k = 0; k < this.chunks.length; k++) {
      if (k !== this.tail && this.chunks[k] !== null && this.live[k] * 2 < this.used[k]) return k;
    }
    return -1;
  }
}
