/**
 * The sorted-set value: a member -> score map (ZMembers, zset-members.ts: the members as bytes
 * in one arena, a slot each) plus an order-statistics B+tree of (score, slot) (zset-tree.ts;
 * Redis uses a skiplist). A member of 14 bytes costs ~60 bytes in all (Redis: ~117). OBJECT ENCODING reports "listpack" while the set is small, as
 * Redis would store it (zset-max-listpack-entries 128, zset-max-listpack-value 64), and
 * "skiplist" once it has outgrown that, which, as in Redis, does not revert.
 *
 * Members go in and out as latin1 strings (exact bytes). All mutations go through this class.
 *
 * Persistence (the contract of src/store/codec.ts): `zsetCodec` at the bottom. Listpack-sized
 * sets are stored whole; bigger ones as one record per member (member -> score), and while
 * they are (`sid !== 0`) every mutation logs the member it touched, so a write costs one
 * record whatever the size of the set.
 */
import { T } from '../db.js';
import type { CollectionCodec, ItemWriter, RecordBuilder, StoredValue } from '../../store/codec.js';
import { Unpacker, scratch, subScratch, wholeBytes, wholeItems } from '../../store/packing.js';
import { ZTree, type ZCursor } from './zset-tree.js';
import { ZMembers } from './zset-members.js';
import { lpsAfter, lpsInt, lpsNext, lpsRead, lpsStrHeader, lpsText } from './listpack.js';
import { strtod } from '../../rdb/reader.js';

export const ZSET_MAX_LISTPACK_ENTRIES = 128;
export const ZSET_MAX_LISTPACK_VALUE = 64;

export class ZSet implements StoredValue {
  readonly type = T.ZSET;
  /** Memory accounting (memory.ts): the charge, and the size and average (x16) it was sampled at. */
  mem = 0;
  memN = -1;
  memAvg = 0;
  /** The members and their scores (`members`); null while the set is `packed`. */
  private m: ZMembers | null;
  /** The ordered pairs (member slots); null until first use after loading (see `pending`). */
  private list: ZTree | null;
  /** Loaded members' slots in zset order, turned into the tree on first use. */
  private pending: Int32Array | null = null;
  private big = false;
  /** A Map-like view of member -> score (set algebra, SORT, DEBUG DIGEST, MEMORY USAGE). */
  private view: ZDict | null = null;
  /** Object id of its item records in the store; 0 = none (stored whole, or not stored). */
  sid = 0;
  /**
   * Members added, removed or rescored since the store last wrote the records (only while
   * sid !== 0), with their score then (NaN: removed; no zset score is NaN). The store writes
   * these without looking the members up again (in a big set each lookup misses the cache).
   */
  private changed: Map<string, number> | null = null;
  /**
   * A listpack-sized set imported from an RDB file and not used since: the listpack's bytes as
   * the import checked them (latin1, one char per byte), and nothing else built. The first use
   * of `members` (every read, write, DUMP, digest and MEMORY USAGE of the set goes through it,
   * or through `tree`, which uses it) builds the members from them (unpack), and the set is
   * then as fromLoaded makes it. Only `size`, `encoding()` and the store's whole form
   * (storeWhole: the same bytes, from these) answer without building it. perf: a 3-member set
   * is ~10 objects and ~1.5 KB built, each copied twice by the young generation's collector
   * during an import; packed it is this object and one string.
   */
  private packed: string | null;

  /** An empty set; with `packed`, a set held as those listpack bytes (see `packed`). */
  constructor(packed: string | null = null) {
    this.packed = packed;
    if (packed === null) {
      this.m = new ZMembers();
      this.list = new ZTree(this.m);
    } else {
      this.m = null;
      this.list = null;
    }
  }

  /** The members and their scores (bytes in an arena, a slot each; zset-members.ts). */
  get members(): ZMembers {
    return this.m ?? this.unpack();
  }

  get size(): number {
    const m = this.m;
    return m !== null ? m.size : packedCount(this.packed!) >> 1;
  }

  /** member -> score, read-only, iterated in no particular order. */
  get dict(): ZDict {
    return (this.view ??= new ZDict(this.members));
  }

  /** The order-statistics tree (built here on first use of a loaded set). */
  get tree(): ZTree {
    return this.list ?? this.buildList();
  }

  private buildList(): ZTree {
    if (this.m === null) {
      this.unpack();
      if (this.list !== null) return this.list; // unpack built it (pairs not in order)
    }
    const slots = this.pending!;
    const l = new ZTree(this.members);
    if (!l.loadSorted(slots, slots.length)) {
      const mem = this.members;
      for (let i = 0; i < slots.length; i++) l.insert(mem.scores[slots[i]], mem.memberAt(slots[i]), slots[i]);
    }
    this.pending = null;
    this.list = l;
    return l;
  }

  encoding(): string {
    return this.big ? 'skiplist' : 'listpack';
  }

  /** Redis's SORT converts the sorted set it sorts to a skiplist (sort.c, zsetConvert). */
  toSkiplist(): void {
    if (this.big) return;
    void this.members; // a packed set is built first: its bytes are the listpack form
    this.big = true;
  }

  /**
   * Build a set from pairs and give it the encoding Redis gives a store result (by size).
   * `byCount`: by the member count alone, as Redis 7.0 loads a ziplist or listpack value (a
   * member longer than zset-max-listpack-value stays in the listpack it came in).
   */
  static from(pairs: ReadonlyArray<readonly [string, number]>, byCount = false): ZSet {
    const z = new ZSet();
    let big = pairs.length > ZSET_MAX_LISTPACK_ENTRIES;
    if (!big && !byCount) for (const [m] of pairs) if (m.length > ZSET_MAX_LISTPACK_VALUE) { big = true; break; }
    z.big = big; // decided first: a skiplist result keeps -0 scores, a listpack one does not
    for (const [m, s] of pairs) z.set(m, s);
    if (byCount) z.big = big; // insert() turned it into a skiplist at a long member
    return z;
  }

  /**
   * A set of the first `n` pairs members[i] / scores[i] as loaded (an RDB value): the tree is
   * built on first use, which also checks the order (a listpack holds the pairs sorted).
   * Null when a member is given twice.
   */
  static fromLoaded(members: string[], scores: Float64Array, n: number, byCount = false): ZSet | null {
    let big = n > ZSET_MAX_LISTPACK_ENTRIES;
    if (!big && !byCount) for (let i = 0; i < n; i++) if (members[i].length > ZSET_MAX_LISTPACK_VALUE) { big = true; break; }
    const z = new ZSet();
    z.big = big;
    z.list = null;
    return z.fill(members, scores, n) ? z : null;
  }

  /**
   * A set held as the listpack `lp` (latin1) that the RDB import checked as readValue checks a
   * listpack sorted set (well formed, scores that parse and are not NaN, no member twice) and
   * that is listpack-sized here (at most ZSET_MAX_LISTPACK_ENTRIES members of at most
   * ZSET_MAX_LISTPACK_VALUE bytes, its element count in the header): see `packed`.
   */
  static fromCheckedListpack(lp: string): ZSet {
    return new ZSet(lp);
  }

  /**
   * Put the first `n` pairs members[i] / scores[i] (as loaded) into this set's empty members,
   * their slots into `pending` (the tree waits for its first use); false when a member is
   * given twice.
   */
  private fill(members: string[], scores: Float64Array, n: number): boolean {
    const big = this.big;
    const mem = this.m!;
    const slots = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if (!big && scores[i] === 0) scores[i] = 0; // -0 as a listpack stores it
      if (mem.find(members[i]) >= 0) return false;
      slots[i] = mem.add(members[i], scores[i]);
    }
    this.pending = slots;
    for (let k = 1; k < n; k++) {
      const a = scores[k - 1], b = scores[k];
      if (!(a < b || (a === b && members[k - 1] < members[k]))) {
        this.buildList(); // not in order: `pending` is only ever sorted (loadedPairs)
        break;
      }
    }
    return true;
  }

  /** Build the members of a `packed` set from its bytes (the set's first use); returns them. */
  private unpack(): ZMembers {
    const s = this.packed!;
    const n = packedCount(s) >> 1;
    if (n > loadScores.length) loadScores = new Float64Array(Math.max(n, 2 * loadScores.length));
    const scores = loadScores;
    const members = loadMembers;
    for (let i = 0, p = 6; i < n; i++, p = pairEnd) {
      members[i] = readPair(s, p);
      scores[i] = pairScore;
    }
    const m = (this.m = new ZMembers());
    this.packed = null;
    this.fill(members, scores, n);
    members.length = 0;
    return m;
  }

  /** The members' slots in order while the tree is not built yet (a loaded set nobody used): DUMP, RDB. */
  get loadedPairs(): Int32Array | null {
    if (this.m === null) this.unpack();
    return this.pending;
  }

  score(member: string): number | undefined {
    const slot = this.members.find(member);
    return slot < 0 ? undefined : this.members.scores[slot];
  }

  /**
   * Insert or update; returns the previous score (undefined when new). While the set is
   * listpack-sized a -0 score is stored as 0, as Redis's listpack (integer-encoded) stores it;
   * a skiplist keeps -0.
   */
  set(member: string, score: number): number | undefined {
    const old = this.score(member);
    if (old === undefined) this.insert(member, score);
    else this.rescore(member, old, score);
    return old;
  }

  /** Add a member that is not in the set (the caller looked it up: `score(member)` was undefined). */
  insert(member: string, score: number): void {
    if (score === 0 && !this.big) score = 0;
    const tree = this.tree;
    const slot = this.members.add(member, score);
    tree.insert(score, member, slot);
    if (this.sid !== 0) this.logChange(member, score);
    if (!this.big && (this.members.size > ZSET_MAX_LISTPACK_ENTRIES || member.length > ZSET_MAX_LISTPACK_VALUE)) this.big = true;
  }

  /**
   * Give a member of the set, whose score is `old` (the caller looked it up), a new score:
   * saves set()'s second lookup of the member, a cache miss in a big set.
   */
  rescore(member: string, old: number, score: number): void {
    if (score === 0 && !this.big) score = 0;
    if (old === score) return;
    const slot = this.tree.update(old, member, score, this.members.slotOf(member));
    this.members.scores[slot] = score;
    if (this.sid !== 0) this.logChange(member, score);
  }

  remove(member: string): boolean {
    const mem = this.members;
    const slot = mem.find(member);
    if (slot < 0) return false;
    if (this.sid !== 0) this.logChange(member, NaN);
    this.tree.delete(mem.scores[slot], member, slot);
    mem.remove(slot);
    return true;
  }

  /** 0-based rank in ascending order, or -1. */
  rank(member: string): number {
    const slot = this.members.find(member);
    if (slot < 0) return -1;
    return this.tree.rank(this.members.scores[slot], member, slot);
  }

  /** Cursor at 0-based ascending rank, or null. */
  at(rank: number): ZCursor | null {
    return this.tree.at(rank);
  }

  clone(): ZSet {
    const z = new ZSet();
    const n = this.size;
    const slots = new Int32Array(n);
    z.members.reserve(n, 0);
    let k = 0;
    for (let c = this.tree.first(); c !== null; c = c.next(), k++) slots[k] = z.members.add(c.member, c.score);
    z.tree.loadSorted(slots, n);
    z.big = this.big;
    return z;
  }

  private logChange(member: string, score: number): void {
    (this.changed ??= new Map()).set(member, score);
  }

  // ------------------------------------------------------------------ persistence (zsetCodec)

  /**
   * Whole form: [skiplist u8][count varint] then per member, in zset order, [score f64 LE]
   * [member: varint length + bytes]. Null when the set is a skiplist too big for it (then it
   * is stored as records).
   */
  storeWhole(): Buffer | null {
    if (this.packed !== null) {
      // perf: a packed set written from its bytes stays packed (an import's sets stored next).
      const b = packedWhole(this.packed);
      if (b !== null) {
        this.changed = null;
        return b;
      }
    }
    const size = this.members.size;
    if (this.big) {
      if (size > wholeItems(this.sid)) return null;
      const limit = wholeBytes(this.sid);
      let bytes = 0;
      for (let c = this.tree.first(); c !== null; c = c.next()) {
        bytes += 8 + c.member.length;
        if (bytes > limit) return null;
      }
    }
    this.changed = null;
    const pk = scratch.reset(256);
    pk.u8(this.big ? 1 : 0);
    pk.varint(size);
    for (let c = this.tree.first(); c !== null; c = c.next()) {
      pk.f64(c.score);
      pk.str(c.member);
    }
    return pk.view();
  }

  static loadWhole(b: Buffer): ZSet {
    const u = new Unpacker(b);
    const big = u.u8() === 1;
    const n = u.varint();
    if (n > loadScores.length) loadScores = new Float64Array(Math.max(n, 2 * loadScores.length));
    const scores = loadScores;
    const members = loadMembers;
    for (let i = 0; i < n; i++) {
      scores[i] = u.f64();
      members[i] = u.str();
    }
    // The tree waits for the first command that needs it: a start-up with many small
    // sorted sets builds only their member maps.
    const z = new ZSet();
    z.big = big;
    z.list = null;
    const slots = new Int32Array(n);
    const mem = z.members;
    for (let i = 0; i < n; i++) {
      if (mem.find(members[i]) >= 0) throw new Error('sorted set value: duplicate members');
      slots[i] = mem.add(members[i], scores[i]);
    }
    z.pending = slots;
    members.length = 0;
    return z;
  }

  /**
   * Records: sub-key = member, value = score (f64 big-endian, -0 kept). A changed score
   * rewrites the record in place. All members, or the logged changes; clears the log.
   */
  storeRecords(w: ItemWriter, all: boolean): void {
    if (all) {
      for (let c = this.tree.first(); c !== null; c = c.next()) w.put(sub(c.member), scoreValue(c.score));
    } else if (this.changed !== null) {
      // (forEach: no [member, score] Array per entry, as for-of makes.)
      this.changed.forEach((s, m) => {
        if (s !== s) w.del(sub(m));
        else w.put(sub(m), scoreValue(s));
      });
    }
    this.changed = null;
  }

  /** A skiplist-encoded set from its records, built in bounded pieces (ZSetBuilder). */
  static loadBegin(size: number): RecordBuilder<ZSet> {
    const z = new ZSet();
    z.big = true;
    return new ZSetBuilder(z, size);
  }
}

/**
 * Builds a big sorted set from its records. They come in member order: each goes into the
 * member map at once (a fresh set: the k-th record gets slot k). When the scores do not
 * decrease along the member order (all equal, as in lexicographic sets) that is the zset order
 * already; otherwise the slots are merge-sorted by score (ties by member) in bounded pieces
 * (PairSort). The order-statistics tree is then built by appending the pairs in order, a piece
 * at a time too, so no step of a background load takes long whatever the size of the set.
 */
class ZSetBuilder implements RecordBuilder<ZSet> {
  private n = 0;
  /** The pairs seen so far are in zset order. */
  private inOrder = true;
  private sort: PairSort | null = null;
  /** Pairs appended to the tree so far (once sorted). */
  private built = 0;

  constructor(private readonly z: ZSet, private readonly size: number) {
    // Sized at once: growing a million-slot array copies it in one go.
    z.members.reserve(size, 0);
  }

  add(sub: Buffer, value: Buffer): void {
    const n = this.n;
    const mem = this.z.members;
    const score = value.readDoubleBE(0);
    const member = sub.latin1Slice(0, sub.length);
    if (mem.find(member) >= 0) throw new Error('sorted set records: duplicate members');
    const slot = mem.add(member, score);
    if (this.inOrder && n > 0) {
      const prev = mem.scores[slot - 1];
      if (!(prev < score || (prev === score && mem.cmpSlots(slot - 1, slot) < 0))) this.inOrder = false;
    }
    this.n = n + 1;
  }

  work(budget: number): boolean {
    const n = this.n;
    const mem = this.z.members;
    if (!this.inOrder) {
      let sort = this.sort;
      if (sort === null) sort = this.sort = new PairSort(mem, n);
      if (!sort.run(budget)) return false;
    }
    const tree = this.z.tree;
    const order = this.sort === null ? null : this.sort.order;
    const scores = mem.scores;
    const stop = Math.min(n, this.built + budget);
    for (let k = this.built; k < stop; k++) {
      const slot = order === null ? k : order[k];
      tree.append(scores[slot], slot);
    }
    this.built = stop;
    return stop === n;
  }

  end(): ZSet {
    if (this.n !== this.size) console.warn(`persistence: a sorted set has ${this.n} member records, its metadata says ${this.size}`);
    this.sort = null;
    return this.z;
  }
}

/**
 * Bottom-up merge sort of (score, slot) pairs by score, then by member, that can stop and
 * resume anywhere: `run(budget)` moves about `budget` pairs. Scores travel with their
 * slots, so comparisons read memory in sequence (members only on equal scores).
 */
class PairSort {
  /** Once sorted: the scores in zset order, and each pair's slot. */
  keys: Float64Array;
  order: Uint32Array;
  private tmpKeys: Float64Array;
  private tmpOrder: Uint32Array;
  private width = 1;
  /** The merge in progress: runs [i, mid) and [j, hi) into position k. */
  private lo = 0;
  private i = 0;
  private mid = 0;
  private j = 0;
  private hi = 0;
  private k = 0;
  private merging = false;

  constructor(private readonly mem: ZMembers, private readonly n: number) {
    this.keys = mem.scores.slice(0, n);
    this.order = new Uint32Array(n);
    for (let x = 0; x < n; x++) this.order[x] = x;
    this.tmpKeys = new Float64Array(n);
    this.tmpOrder = new Uint32Array(n);
  }

  run(budget: number): boolean {
    const n = this.n;
    const mem = this.mem;
    while (this.width < n) {
      if (!this.merging) {
        if (this.lo >= n) {
          // Pass complete: its output becomes the next pass's input.
          [this.keys, this.tmpKeys] = [this.tmpKeys, this.keys];
          [this.order, this.tmpOrder] = [this.tmpOrder, this.order];
          this.width *= 2;
          this.lo = 0;
          continue;
        }
        const lo = this.lo;
        this.mid = Math.min(lo + this.width, n);
        this.hi = Math.min(lo + 2 * this.width, n);
        this.i = lo;
        this.j = this.mid;
        this.k = lo;
        this.merging = true;
      }
      if (budget <= 0) return false;
      const ks = this.keys, os = this.order, kd = this.tmpKeys, od = this.tmpOrder;
      const mid = this.mid, hi = this.hi;
      let i = this.i, j = this.j, k = this.k;
      const stop = Math.min(hi, k + budget);
      while (k < stop) {
        // Take the right run's pair only when strictly smaller: stable, and ties by member.
        let right = false;
        if (i >= mid) right = true;
        else if (j < hi) {
          const a = ks[i], b = ks[j];
          right = b < a || (b === a && mem.cmpSlots(os[j], os[i]) < 0);
        }
        if (right) {
          kd[k] = ks[j];
          od[k++] = os[j++];
        } else {
          kd[k] = ks[i];
          od[k++] = os[i++];
        }
      }
      budget -= k - this.k;
      this.i = i;
      this.j = j;
      this.k = k;
      if (k === hi) {
        this.merging = false;
        this.lo = hi;
      }
    }
    return true;
  }
}

/**
 * The Map-like read view of a set's member -> score (ZSet.dict): what set algebra, SORT and
 * the digest read. Iterates in slot order, making each member's string as it goes.
 */
export class ZDict {
  constructor(private readonly m: ZMembers) {}
  get size(): number {
    return this.m.size;
  }
  get(member: string): number | undefined {
    const slot = this.m.find(member);
    return slot < 0 ? undefined : this.m.scores[slot];
  }
  has(member: string): boolean {
    return this.m.find(member) >= 0;
  }
  *keys(): IterableIterator<string> {
    const m = this.m;
    for (let slot = 0; slot < m.limit; slot++) if (m.live(slot)) yield m.memberAt(slot);
  }
  *[Symbol.iterator](): IterableIterator<[string, number]> {
    const m = this.m;
    for (let slot = 0; slot < m.limit; slot++) if (m.live(slot)) yield [m.memberAt(slot), m.scores[slot]];
  }
}

/** readPair's score of the pair it read, and where the next pair starts. */
let pairScore = 0;
let pairEnd = 0;

/**
 * The member of the pair at p of a packed set's listpack (see ZSet `packed`); its score, as the
 * import's check read it (decode.ts zsetListpackScore), in pairScore.
 */
function readPair(s: string, p: number): string {
  const m = lpsRead(s, p);
  const q = lpsAfter;
  pairScore = lpsStrHeader(s, q) === 0 ? Number(lpsInt(s, q)) : strtod(lpsText(s, q))!;
  pairEnd = lpsNext(s, q);
  return m;
}

/**
 * storeWhole() of a packed set, from its bytes: what it writes once the set is built (a
 * listpack-sized set, the pairs in zset order, -0 as 0); null when the pairs are not in zset
 * order (then the set is built: fill() sorts them).
 */
function packedWhole(s: string): Buffer | null {
  const n = packedCount(s) >> 1;
  const pk = scratch.reset(256);
  pk.u8(0);
  pk.varint(n);
  let prevScore = 0;
  let prev = '';
  for (let i = 0, p = 6; i < n; i++, p = pairEnd) {
    const m = readPair(s, p);
    const score = pairScore === 0 ? 0 : pairScore;
    if (i > 0 && !(prevScore < score || (prevScore === score && prev < m))) return null;
    pk.f64(score);
    pk.str(m);
    prevScore = score;
    prev = m;
  }
  return pk.view();
}

/** Element count in the header of a listpack held as a latin1 string. */
function packedCount(s: string): number {
  return s.charCodeAt(4) | (s.charCodeAt(5) << 8);
}

/** Scratch of loadWhole and unpack (values are decoded one at a time). */
let loadScores = new Float64Array(256);
const loadMembers: string[] = [];

/** A record's value: `score` in a shared scratch (writers copy values at once: ItemWriter). */
function scoreValue(score: number): Buffer {
  scoreScratch.writeDoubleBE(score, 0);
  return scoreScratch;
}
const scoreScratch = Buffer.allocUnsafe(8);

/** Sub-key bytes of a member, in the shared scratch (the store copies it at once). */
function sub(m: string): Buffer {
  const pk = subScratch.reset(m.length);
  pk.raw(m);
  return pk.view();
}

/** How sorted sets are persisted (registered in BUILTIN_CODECS, src/store/codec.ts). */
export const zsetCodec: CollectionCodec<ZSet> = {
  type: T.ZSET,
  encodeWhole: (z) => z.storeWhole(),
  size: (z) => z.size,
  writeRecords: (z, w, all) => z.storeRecords(w, all),
  decodeWhole: (b) => ZSet.loadWhole(b),
  loadBegin: (_header, size) => ZSet.loadBegin(size),
};
