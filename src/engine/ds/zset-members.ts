/**
 * ZMembers: the member -> score half of a sorted set, with members as bytes instead of a JS
 * string each (memory: a 14-byte member as a string is 32 bytes plus a Map entry of ~29; here
 * it is 15 bytes of arena, 4 of offset, 8 of score and 8-16 of index).
 *
 *   arena    entries [length][member bytes]; the length is one byte below 255, else 255 and
 *            4 bytes (LE). Off the JS heap once it outgrows 64 bytes.
 *   offs     Uint32Array: arena offset of each slot's entry
 *   scores   Float64Array: each slot's score (NaN: a free slot; no zset score is NaN)
 *   index    Int32Array open addressing (linear probing, load <= 1/2): slot + 1 in the low 27
 *            bits, the top 5 bits of the member's hash above (most non-matching probes are
 *            rejected without reading the arena); -1 = tombstone, 0 = empty.
 *
 * A member keeps its slot for as long as it is in the set (the ordered tree, zset-tree.ts,
 * holds slots); freed slots are reused (a free list threaded through `offs`). Removed members
 * leave garbage in the arena, compacted once it is over half of it (amortised O(1)).
 * Members go in and out as latin1 strings (one char per byte: exact), or as the arena's bytes
 * (`bytesOf`, for replies without a string). Limits: 2^27 - 2 members, a 4 GB arena.
 */
import { hashBytes, hashKey } from '../keytable.js';
import type { ReplySink } from '../../resp/reply-sink.js';

const POS_MASK = (1 << 27) - 1;
const TAG_MASK = ~POS_MASK;
const TOMB = -1;
const MIN_INDEX = 16;
const MIN_SLOTS = 8;
/**
 * Up to this many members a set has no index: it keeps its members' strings too (by slot, in
 * `strs`), and a lookup compares them in turn with ===, which costs less than hashing; the
 * members come out without a string made. Past SMALL members it gets an index, drops the
 * strings, and keeps that form.
 */
const SMALL = 8;
/** A new or emptied set's arrays: shared and empty (a set made and emptied again allocates nothing). */
const NO_ARENA = Buffer.alloc(0);
const NO_OFFS = new Uint32Array(0);
const NO_SCORES = new Float64Array(0);
const NO_INDEX = new Int32Array(0);
/** Typed arrays up to this size live on the JS heap (V8's typed_array_max_size_in_heap). */
const ON_HEAP = 64;
/** Garbage below this is never worth a compaction. */
const MIN_GARBAGE = 4096;

/** Where the member `locate` found lives: arena bytes [ms, me). */
export let ms = 0;
export let me = 0;

function newArena(cap: number): Buffer {
  return cap <= ON_HEAP ? Buffer.alloc(cap) : Buffer.allocUnsafeSlow(cap);
}

export class ZMembers {
  arena: Buffer = NO_ARENA;
  private end = 0;
  private garbage = 0;
  private offs = NO_OFFS;
  scores = NO_SCORES;
  /** Slots ever handed out (free ones included); slots >= top were never used. */
  private top = 0;
  /** First free slot below top, -1 when none (each free slot's offs holds the next one). */
  private free = -1;
  private n = 0;
  private index = NO_INDEX;
  private mask = 0;
  /** While there is no index: each slot's member string ('' when free; see `scores` for that). */
  private strs: string[] | null = [];
  /** Index entries taken (members + tombstones). */
  private used = 0;
  /** The hash of the member the last find() missed (add() of it saves a second hash). */
  private missHash = 0;
  private missMember = '';
  /** The member the last find() found, and its slot (until the next add or remove: `slotOf`). */
  private hitMember: string | null = null;
  private hitSlot = -1;
  /** Where in the index the last find() found it (-1: found without the index). */
  private hitPos = -1;

  get size(): number {
    return this.n;
  }

  // ------------------------------------------------------------------ reading

  /** Set ms/me to the bytes of `slot`'s member; returns ms. */
  locate(slot: number): number {
    const a = this.arena;
    let o = this.offs[slot];
    let len = a[o++];
    if (len === 255) {
      len = a[o] | (a[o + 1] << 8) | (a[o + 2] << 16) | (a[o + 3] << 24);
      len >>>= 0;
      o += 4;
    }
    ms = o;
    me = o + len;
    return o;
  }

  /** The member in `slot` as a (fresh) latin1 string. */
  memberAt(slot: number): string {
    const strs = this.strs;
    if (strs !== null) return strs[slot];
    this.locate(slot);
    // (Built by hand from char codes, a short member ends up a cons string: slower to use.)
    return this.arena.latin1Slice(ms, me);
  }

  /** The member in `slot` as a bulk reply, from its bytes. */
  reply(out: ReplySink, slot: number): void {
    this.locate(slot);
    out.bulkBytes(this.arena, ms, me);
  }

  /** Byte length of `slot`'s member. */
  lengthOf(slot: number): number {
    this.locate(slot);
    return me - ms;
  }

  /** The member in `slot` compared with m (memcmp order): <0, 0, >0. */
  cmp(slot: number, m: string): number {
    this.locate(slot);
    const a = this.arena;
    const la = me - ms, lb = m.length;
    const l = la < lb ? la : lb;
    for (let i = 0; i < l; i++) {
      const d = a[ms + i] - m.charCodeAt(i);
      if (d !== 0) return d;
    }
    return la - lb;
  }

  /** Members of two slots compared (memcmp order). */
  cmpSlots(x: number, y: number): number {
    const a = this.arena;
    this.locate(y);
    const ys = ms, ye = me;
    this.locate(x);
    const la = me - ms, lb = ye - ys;
    const l = la < lb ? la : lb;
    for (let i = 0; i < l; i++) {
      const d = a[ms + i] - a[ys + i];
      if (d !== 0) return d;
    }
    return la - lb;
  }

  private is(slot: number, m: string): boolean {
    this.locate(slot);
    const n = m.length;
    if (me - ms !== n) return false;
    const a = this.arena;
    const d = ms;
    for (let i = 0; i < n; i++) if (a[d + i] !== m.charCodeAt(i)) return false;
    return true;
  }

  /** Slot of member m, or -1. */
  find(m: string): number {
    const strs = this.strs;
    if (strs !== null) {
      const scores = this.scores;
      for (let slot = 0; slot < this.top; slot++) {
        if (strs[slot] === m && scores[slot] === scores[slot]) {
          this.hitMember = m;
          this.hitSlot = slot;
          this.hitPos = -1;
          return slot;
        }
      }
      return -1;
    }
    const h = hashKey(m);
    const index = this.index;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const e = index[i];
      if (e === 0) break;
      if (e !== TOMB && ((e ^ h) & TAG_MASK) === 0) {
        const slot = (e & POS_MASK) - 1;
        if (this.is(slot, m)) {
          this.hitMember = m;
          this.hitSlot = slot;
          this.hitPos = i;
          return slot;
        }
      }
    }
    this.missHash = h;
    this.missMember = m;
    return -1;
  }

  /**
   * find(m), answered without a lookup when m is the member the last find() found (a command
   * looks a member up, then changes it: ZINCRBY, ZADD's update, ZRANK).
   */
  slotOf(m: string): number {
    return m === this.hitMember ? this.hitSlot : this.find(m);
  }

  /** Is `slot` in use? (Tests and iteration.) */
  live(slot: number): boolean {
    return slot < this.top && this.scores[slot] === this.scores[slot];
  }

  /** One past the highest slot that may be in use: iterate 0..limit and skip !live(). */
  get limit(): number {
    return this.top;
  }

  // ------------------------------------------------------------------ writing

  /** Add member m (not in the set: the caller's find() said so) with its score; returns its slot. */
  add(m: string, score: number): number {
    this.hitMember = null;
    let slot = this.free;
    if (slot >= 0) this.free = this.offs[slot] - 1;
    else {
      slot = this.top;
      if (slot === this.offs.length) this.growSlots(2 * slot);
      this.top = slot + 1;
    }
    this.offs[slot] = this.append(m);
    this.scores[slot] = score;
    const n = ++this.n;
    const strs = this.strs;
    if (strs !== null) {
      strs[slot] = m;
      if (n > SMALL) this.rebuild(2 * n);
      return slot;
    }
    const h = m === this.missMember ? this.missHash : hashKey(m);
    this.missMember = '';
    if (2 * (this.used + 1) > this.index.length) this.rebuild(2 * n);
    else this.push(slot, h);
    return slot;
  }

  /** Remove the member in `slot`. */
  remove(slot: number): void {
    // The index entry of a member just found is known (ZREM, ZPOPMIN: no second hash).
    const known = this.hitMember !== null && this.hitSlot === slot ? this.hitPos : -1;
    this.hitMember = null;
    this.locate(slot);
    this.garbage += me - this.offs[slot];
    const index = this.index;
    const mask = this.mask;
    const want = slot + 1;
    const start = known >= 0 ? known : index.length === 0 ? 0 : hashBytes(this.arena, ms, me) & mask;
    for (let i = start; index.length !== 0; i = (i + 1) & mask) {
      const e = index[i];
      if (e === 0) throw new Error('zset member index: slot not found');
      if (e !== TOMB && (e & POS_MASK) === want) {
        // A tombstone is needed only when a probe chain runs through this entry.
        if (index[(i + 1) & mask] === 0) {
          index[i] = 0;
          this.used--;
        } else index[i] = TOMB;
        break;
      }
    }
    this.scores[slot] = NaN;
    if (this.strs !== null) this.strs[slot] = '';
    this.offs[slot] = this.free + 1;
    this.free = slot;
    this.n--;
    if (this.n === 0) this.reset();
    else if (this.garbage > MIN_GARBAGE && 2 * this.garbage > this.end) this.compact();
  }

  private reset(): void {
    this.arena = NO_ARENA;
    this.end = this.garbage = 0;
    this.offs = NO_OFFS;
    this.scores = NO_SCORES;
    this.top = 0;
    this.free = -1;
    this.index = NO_INDEX;
    this.mask = 0;
    this.used = 0;
    this.strs = [];
  }

  /** Room for `n` members in all without growing (a set loaded whole). */
  reserve(n: number, bytes: number): void {
    if (n > this.offs.length) this.growSlots(n);
    if (n > SMALL && 2 * n > this.index.length) this.rebuild(n);
    if (this.end + bytes > this.arena.length) this.growArena(bytes);
  }

  private push(slot: number, h: number): void {
    const index = this.index;
    const mask = this.mask;
    let i = h & mask;
    while (index[i] !== 0) i = (i + 1) & mask;
    index[i] = (h & TAG_MASK) | (slot + 1);
    this.used++;
  }

  private growSlots(cap: number): void {
    cap = Math.max(cap, MIN_SLOTS);
    const offs = new Uint32Array(cap);
    const scores = new Float64Array(cap);
    if (this.top > 0) {
      offs.set(this.offs.subarray(0, this.top));
      scores.set(this.scores.subarray(0, this.top));
    }
    this.offs = offs;
    this.scores = scores;
  }

  /** A new index for at least `n` members at load <= 1/2, from the arena (tombstones dropped). */
  private rebuild(n: number): void {
    let cap = MIN_INDEX;
    while (cap < 2 * n) cap *= 2;
    if (cap > 2 * (POS_MASK - 1)) throw new Error('ERR sorted set too big');
    this.index = new Int32Array(cap);
    this.mask = cap - 1;
    this.used = 0;
    this.strs = null;
    this.hitMember = null;
    const scores = this.scores;
    for (let slot = 0; slot < this.top; slot++) {
      if (scores[slot] !== scores[slot]) continue;
      this.locate(slot);
      this.push(slot, hashBytes(this.arena, ms, me));
    }
  }

  /** Append m's entry to the arena; returns its offset. */
  private append(m: string): number {
    const n = m.length;
    const need = (n < 255 ? 1 : 5) + n;
    if (this.end + need > this.arena.length) this.growArena(need);
    const a = this.arena;
    const o = this.end;
    let p = o;
    if (n < 255) a[p++] = n;
    else {
      a[p] = 255;
      a.writeUInt32LE(n, p + 1);
      p += 5;
    }
    if (n > 32) a.latin1Write(m, p, n);
    else for (let i = 0; i < n; i++) a[p + i] = m.charCodeAt(i);
    this.end = p + n;
    return o;
  }

  private growArena(need: number): void {
    const live = this.end - this.garbage;
    if (this.garbage > MIN_GARBAGE && this.garbage >= live) {
      this.compact();
      if (this.end + need <= this.arena.length) return;
    }
    // The first arena is the largest kept on the JS heap: most sets are small.
    let cap = Math.max(ON_HEAP, this.arena.length);
    while (cap < this.end + need) cap *= 2;
    const a = newArena(cap);
    const old = this.arena;
    const end = this.end;
    if (end <= ON_HEAP) for (let i = 0; i < end; i++) a[i] = old[i];
    else old.copy(a, 0, 0, end);
    this.arena = a;
  }

  /** Rewrite the live entries in slot order into a fresh arena of about twice their size. */
  private compact(): void {
    const live = this.end - this.garbage;
    const old = this.arena;
    const a = newArena(Math.max(16, 2 * live));
    const offs = this.offs;
    const scores = this.scores;
    let p = 0;
    for (let slot = 0; slot < this.top; slot++) {
      if (scores[slot] !== scores[slot]) continue;
      this.locate(slot);
      const o = offs[slot];
      offs[slot] = p;
      p += old.copy(a, p, o, me);
    }
    this.arena = a;
    this.end = p;
    this.garbage = 0;
  }
}
