/**
 * An order-statistics B+tree of (score, member) pairs: the ordered half of a sorted set.
 * Ordered by score, then by member bytes (memcmp), as Redis orders a zset. A leaf holds each
 * member's slot in the set's ZMembers (zset-members.ts: the bytes, compared in place); a
 * separator in an inner node is a latin1 string of its own (one char per byte, so `<` is
 * memcmp), since the slot it was taken from may be freed and reused while it bounds.
 *
 * Why a B+tree rather than Redis's skiplist: a skiplist node is several JS objects (~190 bytes
 * per member) and a descent misses the cache at every level. Here a leaf holds up to 64 pairs
 * in two parallel arrays (scores unboxed in a double array, member slots as small integers), and an inner node holds its
 * children's subtree sizes (rank and range-by-rank in O(log n)) and a lower-bound key per
 * child (the descent binary-searches contiguous doubles, touching members only on equal
 * scores). A million members cost ~17 bytes each here, and a descent is 3-4 nodes.
 *
 * Invariants: every leaf but an empty root holds >= 1 pair; every inner node but the root has
 * >= 2 children, the root inner node too; inner.sepScores/sepMembers[i] (i >= 1) is <= every key of
 * children[i] and > every key of children[i - 1]. Leaves are doubly linked in order.
 * Positions are handed out as cursors (ZCursor): leaf + index + rank, moved in place.
 */

import { ZMembers } from './zset-members.js';

const LEAF_CAP = 64;
const LEAF_MIN = 16;
const INNER_CAP = 64;
const INNER_MIN = 16;
/** First capacity of a root leaf: small sets grow their arrays by doubling up to LEAF_CAP. */
const SMALL_CAP = 4;

/** A hole-free double array (V8 keeps it unboxed: 8 bytes per score). */
function doubles(cap: number): number[] {
  return new Array<number>(cap).fill(0.5);
}

function strings(cap: number): string[] {
  return new Array<string>(cap).fill('');
}

/** A hole-free small-integer array (member slots of ZMembers). */
function ints(cap: number): number[] {
  return new Array<number>(cap).fill(0);
}

export class Leaf {
  n = 0;
  next: Leaf | null = null;
  prev: Leaf | null = null;
  scores: number[];
  /** Member slots in the set's ZMembers (the bytes live there). */
  slots: number[];
  constructor(cap: number) {
    this.scores = doubles(cap);
    this.slots = ints(cap);
  }
}

class Inner {
  n = 0;
  /** Number of pairs under each child. */
  readonly counts: number[] = new Array<number>(INNER_CAP).fill(0);
  /** Lower-bound key of each child (entry 0 unused: it is the parent's separator). */
  readonly sepScores: number[] = doubles(INNER_CAP);
  readonly sepMembers: string[] = strings(INNER_CAP);
  readonly children: (Inner | Leaf)[] = new Array<Inner | Leaf>(INNER_CAP);
}

/** A position in the tree; next()/prev() move it in place and return it, or null past an end. */
export class ZCursor {
  constructor(private readonly mem: ZMembers, public leaf: Leaf, public i: number, public rank: number) {}
  /** The member (a fresh string: prefer `slot` and the set's ZMembers to reply with its bytes). */
  get member(): string {
    return this.mem.memberAt(this.leaf.slots[this.i]);
  }
  get slot(): number {
    return this.leaf.slots[this.i];
  }
  get score(): number {
    return this.leaf.scores[this.i];
  }
  next(): ZCursor | null {
    this.rank++;
    if (++this.i < this.leaf.n) return this;
    const l = this.leaf.next;
    if (l === null) return null;
    this.leaf = l;
    this.i = 0;
    return this;
  }
  prev(): ZCursor | null {
    this.rank--;
    if (--this.i >= 0) return this;
    const l = this.leaf.prev;
    if (l === null) return null;
    this.leaf = l;
    this.i = l.n - 1;
    return this;
  }
}

/** A lex range bound: '-' / '+' infinities, or a member with inclusive/exclusive flag. */
export interface LexBound {
  readonly inf: -1 | 0 | 1;
  readonly value: string;
  readonly exclusive: boolean;
}

export function lexGteMin(m: string, min: LexBound): boolean {
  if (min.inf === -1) return true;
  if (min.inf === 1) return false;
  return min.exclusive ? m > min.value : m >= min.value;
}

export function lexLteMax(m: string, max: LexBound): boolean {
  if (max.inf === 1) return true;
  if (max.inf === -1) return false;
  return max.exclusive ? m < max.value : m <= max.value;
}

// Monotone predicates of the generic descent (lowerBound): "first pair for which P holds".
const P_SCORE_GE = 0;
const P_SCORE_GT = 1;
const P_LEX_GE_MIN = 2;
const P_LEX_GT_MAX = 3;
let qScore = 0;
let qLex: LexBound = { inf: -1, value: '', exclusive: false };

function holds(p: number, score: number, member: string): boolean {
  switch (p) {
    case P_SCORE_GE: return score >= qScore;
    case P_SCORE_GT: return score > qScore;
    case P_LEX_GE_MIN: return lexGteMin(member, qLex);
    default: return !lexLteMax(member, qLex);
  }
}

/** holds() of a leaf's pair, its member compared in place. */
function holdsSlot(mem: ZMembers, p: number, score: number, slot: number): boolean {
  switch (p) {
    case P_SCORE_GE: return score >= qScore;
    case P_SCORE_GT: return score > qScore;
    case P_LEX_GE_MIN: {
      const q = qLex;
      if (q.inf !== 0) return q.inf === -1;
      const c = mem.cmp(slot, q.value);
      return q.exclusive ? c > 0 : c >= 0;
    }
    default: {
      const q = qLex;
      if (q.inf !== 0) return q.inf === -1;
      const c = mem.cmp(slot, q.value);
      return q.exclusive ? c >= 0 : c > 0;
    }
  }
}

/**
 * Scratch of insert/delete: the inner nodes on the path from the root and the child taken in
 * each (one shared pair instead of arrays per call; a tree of 2^53 pairs is < 16 levels).
 */
const PATH: Inner[] = [];
const PATH_IDX: number[] = new Array<number>(32).fill(0);
/** Where the last lowerBound() ended: the leaf and the index in it (may equal leaf.n). */
let hitLeaf: Leaf = new Leaf(0);
let hitIdx = 0;

/** Index of the child of `node` whose range holds (s, m). */
function childFor(node: Inner, s: number, m: string): number {
  const ss = node.sepScores;
  const sm = node.sepMembers;
  let lo = 1;
  let hi = node.n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = ss[mid];
    if (t < s || (t === s && sm[mid] <= m)) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** First index of a leaf whose pair is >= (s, m). */
function leafLower(mem: ZMembers, leaf: Leaf, s: number, m: string): number {
  const ss = leaf.scores;
  const sm = leaf.slots;
  let lo = 0;
  let hi = leaf.n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = ss[mid];
    if (t < s || (t === s && mem.cmp(sm[mid], m) < 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function leafInsertAt(leaf: Leaf, pos: number, s: number, m: number): void {
  const ss = leaf.scores;
  const sm = leaf.slots;
  for (let j = leaf.n; j > pos; j--) {
    ss[j] = ss[j - 1];
    sm[j] = sm[j - 1];
  }
  ss[pos] = s;
  sm[pos] = m;
  leaf.n++;
}

function leafRemoveAt(leaf: Leaf, pos: number): void {
  const ss = leaf.scores;
  const sm = leaf.slots;
  const n = --leaf.n;
  for (let j = pos; j < n; j++) {
    ss[j] = ss[j + 1];
    sm[j] = sm[j + 1];
  }
}

/** Move `count` pairs from `from` (starting at `at`) to the end of `to`. */
function leafMoveTail(from: Leaf, at: number, count: number, to: Leaf): void {
  const fs = from.scores, fm = from.slots, ts = to.scores, tm = to.slots;
  let k = to.n;
  for (let j = at; j < at + count; j++, k++) {
    ts[k] = fs[j];
    tm[k] = fm[j];
  }
  to.n = k;
  // Close the gap in `from` (only when pairs follow the moved ones) and clear its freed slots.
  const n = from.n;
  for (let j = at + count; j < n; j++) {
    fs[j - count] = fs[j];
    fm[j - count] = fm[j];
  }
  from.n = n - count;
}

/** Move the last `count` pairs of `from` to the front of `to`. */
function leafMoveToFront(from: Leaf, count: number, to: Leaf): void {
  const ts = to.scores, tm = to.slots, fs = from.scores, fm = from.slots;
  for (let j = to.n - 1; j >= 0; j--) {
    ts[j + count] = ts[j];
    tm[j + count] = tm[j];
  }
  const start = from.n - count;
  for (let j = 0; j < count; j++) {
    ts[j] = fs[start + j];
    tm[j] = fm[start + j];
  }
  to.n += count;
  from.n = start;
}

function innerInsertAt(node: Inner, pos: number, child: Inner | Leaf, count: number, s: number, m: string): void {
  const { counts, sepScores, sepMembers, children } = node;
  for (let j = node.n; j > pos; j--) {
    counts[j] = counts[j - 1];
    sepScores[j] = sepScores[j - 1];
    sepMembers[j] = sepMembers[j - 1];
    children[j] = children[j - 1];
  }
  counts[pos] = count;
  sepScores[pos] = s;
  sepMembers[pos] = m;
  children[pos] = child;
  node.n++;
}

function innerRemoveAt(node: Inner, pos: number): void {
  const { counts, sepScores, sepMembers, children } = node;
  const n = --node.n;
  for (let j = pos; j < n; j++) {
    counts[j] = counts[j + 1];
    sepScores[j] = sepScores[j + 1];
    sepMembers[j] = sepMembers[j + 1];
    children[j] = children[j + 1];
  }
  sepMembers[n] = '';
  children[n] = undefined as unknown as Leaf;
}

/** Move children [at, at + count) of `from` to the end of `to` (the first one keeps `sepS/M` as its bound). */
function innerMove(from: Inner, at: number, count: number, to: Inner, toAt: number): void {
  for (let j = 0; j < count; j++) {
    to.counts[toAt + j] = from.counts[at + j];
    to.sepScores[toAt + j] = from.sepScores[at + j];
    to.sepMembers[toAt + j] = from.sepMembers[at + j];
    to.children[toAt + j] = from.children[at + j];
  }
}

function sum(node: Inner): number {
  let t = 0;
  for (let j = 0; j < node.n; j++) t += node.counts[j];
  return t;
}

export class ZTree {
  constructor(readonly mem: ZMembers) {}
  private root: Inner | Leaf = new Leaf(SMALL_CAP);
  /** Inner levels above the leaves (0: the root is a leaf). */
  private height = 0;
  length = 0;

  // ---------------------------------------------------------------- updates

  /** Insert (s, m), m's bytes in `slot` of the set's ZMembers; the member must not be in the tree. */
  insert(s: number, m: string, slot: number): void {
    let node = this.root;
    let d = 0;
    for (let h = this.height; h > 0; h--, d++) {
      const inner = node as Inner;
      const i = childFor(inner, s, m);
      inner.counts[i]++;
      PATH[d] = inner;
      PATH_IDX[d] = i;
      node = inner.children[i];
    }
    const leaf = node as Leaf;
    this.insertInLeaf(leaf, leafLower(this.mem, leaf, s, m), d, s, slot);
  }

  /** Insert a pair greater than every pair in the tree (loading in order): no comparisons. */
  append(s: number, slot: number): void {
    let node = this.root;
    let d = 0;
    for (let h = this.height; h > 0; h--, d++) {
      const inner = node as Inner;
      const i = inner.n - 1;
      inner.counts[i]++;
      PATH[d] = inner;
      PATH_IDX[d] = i;
      node = inner.children[i];
    }
    const leaf = node as Leaf;
    this.insertInLeaf(leaf, leaf.n, d, s, slot);
  }

  /** Insert at `pos` of `leaf`, reached through PATH[0 .. d - 1] (counts already raised). */
  private insertInLeaf(leaf: Leaf, pos: number, d: number, s: number, slot: number): void {
    this.length++;
    if (leaf.n < leaf.slots.length) {
      leafInsertAt(leaf, pos, s, slot);
      return;
    }
    if (leaf.n < LEAF_CAP) {
      // A small root leaf: double its arrays.
      const cap = Math.min(LEAF_CAP, 2 * leaf.n);
      const ss = doubles(cap), sm = ints(cap);
      for (let j = 0; j < leaf.n; j++) {
        ss[j] = leaf.scores[j];
        sm[j] = leaf.slots[j];
      }
      leaf.scores = ss;
      leaf.slots = sm;
      leafInsertAt(leaf, pos, s, slot);
      return;
    }
    // Split. Appending at the very end (or prepending at the very start) leaves the full leaf
    // as it is, so that sets filled in order have full leaves.
    const n = leaf.n;
    const append = pos === n && leaf.next === null;
    const k = append ? n : pos === 0 && leaf.prev === null ? 0 : n >>> 1;
    const right = new Leaf(LEAF_CAP);
    leafMoveTail(leaf, k, n - k, right);
    right.next = leaf.next;
    if (right.next !== null) right.next.prev = right;
    right.prev = leaf;
    leaf.next = right;
    if (pos < k || (pos === k && leaf.n < LEAF_CAP)) leafInsertAt(leaf, pos, s, slot);
    else leafInsertAt(right, pos - k, s, slot);
    // The separator is a string of its own: the slot may be freed and reused while it bounds.
    this.addSibling(d, leaf, leaf.n, right, right.n, right.scores[0], this.mem.memberAt(right.slots[0]), append);
  }

  /**
   * `right` was split off `left` (at depth d, below PATH[d - 1]): record it in the parent,
   * splitting the parents that are full, up to a new root.
   */
  private addSibling(d: number, left: Inner | Leaf, leftCount: number, right: Inner | Leaf, rightCount: number, sepS: number, sepM: string, append: boolean): void {
    for (;;) {
      if (d === 0) {
        const root = new Inner();
        root.n = 2;
        root.children[0] = left;
        root.children[1] = right;
        root.counts[0] = leftCount;
        root.counts[1] = rightCount;
        root.sepScores[1] = sepS;
        root.sepMembers[1] = sepM;
        this.root = root;
        this.height++;
        return;
      }
      const parent = PATH[d - 1];
      const i = PATH_IDX[d - 1];
      parent.counts[i] = leftCount;
      if (parent.n < INNER_CAP) {
        innerInsertAt(parent, i + 1, right, rightCount, sepS, sepM);
        return;
      }
      // Split the parent: both halves keep >= 2 children.
      const n = parent.n;
      const pos = i + 1;
      const k = append && pos === n ? n - 1 : n >>> 1;
      const pr = new Inner();
      innerMove(parent, k, n - k, pr, 0);
      for (let j = k; j < n; j++) {
        parent.sepMembers[j] = '';
        parent.children[j] = undefined as unknown as Leaf;
      }
      parent.n = k;
      pr.n = n - k;
      if (pos <= k) innerInsertAt(parent, pos, right, rightCount, sepS, sepM);
      else innerInsertAt(pr, pos - k, right, rightCount, sepS, sepM);
      left = parent;
      right = pr;
      leftCount = sum(parent);
      rightCount = sum(pr);
      sepS = pr.sepScores[0];
      sepM = pr.sepMembers[0];
      d--;
    }
  }

  /**
   * Remove (s, m); returns the member's slot, or -1 when absent. `slot`: the member's slot when
   * the caller knows it (then checked instead of the member's bytes), else -1.
   */
  delete(s: number, m: string, slot = -1): number {
    let node = this.root;
    let d = 0;
    for (let h = this.height; h > 0; h--, d++) {
      const inner = node as Inner;
      const i = childFor(inner, s, m);
      PATH[d] = inner;
      PATH_IDX[d] = i;
      node = inner.children[i];
    }
    const leaf = node as Leaf;
    const pos = leafLower(this.mem, leaf, s, m);
    if (pos >= leaf.n) return -1;
    const held = leaf.slots[pos];
    if (leaf.scores[pos] !== s || (slot >= 0 ? held !== slot : this.mem.cmp(held, m) !== 0)) return -1;
    this.removeAt(leaf, pos, d);
    return held;
  }

  /** Remove the pair at `pos` of `leaf`, reached through PATH[0 .. d - 1]. */
  private removeAt(leaf: Leaf, pos: number, d: number): void {
    for (let j = 0; j < d; j++) PATH[j].counts[PATH_IDX[j]]--;
    leafRemoveAt(leaf, pos);
    this.length--;
    if (d > 0 && leaf.n < LEAF_MIN) this.rebalanceLeaf(d);
  }

  /**
   * Change the score of member m from `old` to `s` (they differ); returns the member's slot,
   * or -1 when (old, m) is absent. When the new position is in the same leaf
   * (small increments: ZINCRBY, GT/LT counters), the pairs in between shift in place;
   * otherwise a delete and an insert.
   */
  update(old: number, m: string, s: number, slot = -1): number {
    let node = this.root;
    let d = 0;
    for (let h = this.height; h > 0; h--, d++) {
      const inner = node as Inner;
      const i = childFor(inner, old, m);
      PATH[d] = inner;
      PATH_IDX[d] = i;
      node = inner.children[i];
    }
    const mem = this.mem;
    const leaf = node as Leaf;
    const pos = leafLower(mem, leaf, old, m);
    if (pos >= leaf.n) return -1;
    const held = leaf.slots[pos];
    if (leaf.scores[pos] !== old || (slot >= 0 ? held !== slot : mem.cmp(held, m) !== 0)) return -1;
    // t: the new index among the leaf's other pairs. It stays in this leaf's key range when it
    // falls between two of them, or beyond one end in the direction of the old key's side.
    const up = s > old;
    const t = up ? leafLower(mem, leaf, s, m) - 1 : leafLower(mem, leaf, s, m);
    const others = leaf.n - 1;
    if ((t > 0 || up || leaf.prev === null) && (t < others || !up || leaf.next === null)) {
      const ss = leaf.scores, sm = leaf.slots;
      if (t > pos) {
        for (let j = pos; j < t; j++) {
          ss[j] = ss[j + 1];
          sm[j] = sm[j + 1];
        }
      } else {
        for (let j = pos; j > t; j--) {
          ss[j] = ss[j - 1];
          sm[j] = sm[j - 1];
        }
      }
      ss[t] = s;
      sm[t] = held;
      return held;
    }
    this.removeAt(leaf, pos, d);
    this.insert(s, m, held);
    return held;
  }

  /** The leaf below PATH[d - 1] is under-full: merge it with a sibling, or even them out. */
  private rebalanceLeaf(d: number): void {
    const parent = PATH[d - 1];
    const i = PATH_IDX[d - 1];
    const li = i + 1 < parent.n ? i : i - 1;
    const ri = li + 1;
    const l = parent.children[li] as Leaf;
    const r = parent.children[ri] as Leaf;
    if (l.n + r.n <= LEAF_CAP) {
      leafMoveTail(r, 0, r.n, l);
      l.next = r.next;
      if (r.next !== null) r.next.prev = l;
      parent.counts[li] += parent.counts[ri];
      innerRemoveAt(parent, ri);
      this.rebalanceInner(d - 1);
      return;
    }
    const want = (l.n + r.n) >>> 1;
    if (l.n < want) leafMoveTail(r, 0, want - l.n, l);
    else leafMoveToFront(l, l.n - want, r);
    parent.counts[li] = l.n;
    parent.counts[ri] = r.n;
    parent.sepScores[ri] = r.scores[0];
    parent.sepMembers[ri] = this.mem.memberAt(r.slots[0]);
  }

  /** PATH[d] lost a child: collapse a one-child root, or rebalance an under-full node. */
  private rebalanceInner(d: number): void {
    const node = PATH[d];
    if (d === 0) {
      if (node.n === 1) {
        this.root = node.children[0];
        this.height--;
      }
      return;
    }
    if (node.n >= INNER_MIN) return;
    const parent = PATH[d - 1];
    const i = PATH_IDX[d - 1];
    const li = i + 1 < parent.n ? i : i - 1;
    const ri = li + 1;
    const l = parent.children[li] as Inner;
    const r = parent.children[ri] as Inner;
    // r's first child is bounded by the parent's separator of r (r.sep*[0] is not kept).
    r.sepScores[0] = parent.sepScores[ri];
    r.sepMembers[0] = parent.sepMembers[ri];
    if (l.n + r.n <= INNER_CAP) {
      innerMove(r, 0, r.n, l, l.n);
      l.n += r.n;
      parent.counts[li] += parent.counts[ri];
      innerRemoveAt(parent, ri);
      this.rebalanceInner(d - 1);
      return;
    }
    const want = (l.n + r.n) >>> 1;
    if (l.n < want) {
      const c = want - l.n;
      innerMove(r, 0, c, l, l.n);
      l.n += c;
      innerMove(r, c, r.n - c, r, 0);
      for (let j = r.n - c; j < r.n; j++) {
        r.sepMembers[j] = '';
        r.children[j] = undefined as unknown as Leaf;
      }
      r.n -= c;
    } else {
      const c = l.n - want;
      for (let j = r.n - 1; j >= 0; j--) innerMove(r, j, 1, r, j + c);
      innerMove(l, want, c, r, 0);
      for (let j = want; j < l.n; j++) {
        l.sepMembers[j] = '';
        l.children[j] = undefined as unknown as Leaf;
      }
      l.n = want;
      r.n += c;
    }
    parent.counts[li] = sum(l);
    parent.counts[ri] = sum(r);
    parent.sepScores[ri] = r.sepScores[0];
    parent.sepMembers[ri] = r.sepMembers[0];
  }

  // ---------------------------------------------------------------- lookups

  /** 0-based rank of (s, m), or -1 when absent (`slot` as delete's). */
  rank(s: number, m: string, slot = -1): number {
    let node = this.root;
    let r = 0;
    for (let h = this.height; h > 0; h--) {
      const inner = node as Inner;
      const i = childFor(inner, s, m);
      const counts = inner.counts;
      for (let j = 0; j < i; j++) r += counts[j];
      node = inner.children[i];
    }
    const leaf = node as Leaf;
    const pos = leafLower(this.mem, leaf, s, m);
    if (pos >= leaf.n || leaf.scores[pos] !== s) return -1;
    return (slot >= 0 ? leaf.slots[pos] === slot : this.mem.cmp(leaf.slots[pos], m) === 0) ? r + pos : -1;
  }

  /** Cursor at a 0-based rank, or null when out of range. */
  at(rank: number): ZCursor | null {
    if (rank < 0 || rank >= this.length) return null;
    let node = this.root;
    let left = rank;
    for (let h = this.height; h > 0; h--) {
      const inner = node as Inner;
      const counts = inner.counts;
      let j = 0;
      while (left >= counts[j]) left -= counts[j++];
      node = inner.children[j];
    }
    return new ZCursor(this.mem, node as Leaf, left, rank);
  }

  first(): ZCursor | null {
    return this.length === 0 ? null : this.at(0);
  }

  last(): ZCursor | null {
    return this.length === 0 ? null : this.at(this.length - 1);
  }

  /** Rank of the first pair for which predicate p holds (length if none); sets hitLeaf/hitIdx. */
  private lowerBound(p: number): number {
    let node = this.root;
    let r = 0;
    for (let h = this.height; h > 0; h--) {
      const inner = node as Inner;
      const ss = inner.sepScores, sm = inner.sepMembers;
      let lo = 1;
      let hi = inner.n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (holds(p, ss[mid], sm[mid])) hi = mid;
        else lo = mid + 1;
      }
      const i = lo - 1;
      const counts = inner.counts;
      for (let j = 0; j < i; j++) r += counts[j];
      node = inner.children[i];
    }
    const leaf = node as Leaf;
    const ss = leaf.scores, sm = leaf.slots, mem = this.mem;
    let lo = 0;
    let hi = leaf.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (holdsSlot(mem, p, ss[mid], sm[mid])) hi = mid;
      else lo = mid + 1;
    }
    hitLeaf = leaf;
    hitIdx = lo;
    return r + lo;
  }

  /** Cursor at the lowerBound() just done (rank r), or null past the end. */
  private hitCursor(r: number): ZCursor | null {
    if (hitIdx < hitLeaf.n) return new ZCursor(this.mem, hitLeaf, hitIdx, r);
    const next = hitLeaf.next;
    return next === null ? null : new ZCursor(this.mem, next, 0, r);
  }

  /** Cursor just before the lowerBound() just done (rank r), or null before the start. */
  private hitCursorBefore(r: number): ZCursor | null {
    if (hitIdx > 0) return new ZCursor(this.mem, hitLeaf, hitIdx - 1, r - 1);
    const prev = hitLeaf.prev;
    return prev === null ? null : new ZCursor(this.mem, prev, prev.n - 1, r - 1);
  }

  /** Number of pairs whose score is below the bound (< x, or <= x when `inclusive`). */
  countBelow(x: number, inclusive: boolean): number {
    qScore = x;
    return this.lowerBound(inclusive ? P_SCORE_GT : P_SCORE_GE);
  }

  /** First pair whose score is in range (> or >= min), or null. */
  firstInScore(min: number, minEx: boolean, max: number, maxEx: boolean): ZCursor | null {
    qScore = min;
    const c = this.hitCursor(this.lowerBound(minEx ? P_SCORE_GT : P_SCORE_GE));
    if (c === null) return null;
    const s = c.score;
    return (maxEx ? s >= max : s > max) ? null : c;
  }

  /** Last pair whose score is in range, or null. */
  lastInScore(min: number, minEx: boolean, max: number, maxEx: boolean): ZCursor | null {
    qScore = max;
    const c = this.hitCursorBefore(this.lowerBound(maxEx ? P_SCORE_GE : P_SCORE_GT));
    if (c === null) return null;
    const s = c.score;
    return (minEx ? s <= min : s < min) ? null : c;
  }

  /**
   * Redis's zslIsInLexRange: false when the range is empty by itself or lies wholly outside
   * [first member, last member]. Lex ranges are only meaningful when every score is equal.
   */
  private lexRangeOverlaps(min: LexBound, max: LexBound): boolean {
    if (min.inf === 0 && max.inf === 0) {
      if (min.value > max.value || (min.value === max.value && (min.exclusive || max.exclusive))) return false;
    } else if (min.inf === 1 || max.inf === -1) {
      return false;
    }
    const last = this.last();
    if (last === null || !lexGteMin(last.member, min)) return false;
    return lexLteMax(this.first()!.member, max);
  }

  /**
   * First pair of a lex range, as Redis finds it: `linear` walks from the start as Redis does
   * for a listpack-encoded set; otherwise a descent, as zslFirstInLexRange's. (With unequal
   * scores the two can differ, and Redis's answer depends on the encoding.)
   */
  firstInLex(min: LexBound, max: LexBound, linear = false): ZCursor | null {
    if (!this.lexRangeOverlaps(min, max)) return null;
    let c: ZCursor | null;
    if (linear) {
      c = this.first();
      while (c !== null && !lexGteMin(c.member, min)) c = c.next();
    } else {
      qLex = min;
      c = this.hitCursor(this.lowerBound(P_LEX_GE_MIN));
    }
    if (c === null || !lexLteMax(c.member, max)) return null;
    return c;
  }

  /** Last pair of a lex range (zslLastInLexRange, or a walk from the end when `linear`). */
  lastInLex(min: LexBound, max: LexBound, linear = false): ZCursor | null {
    if (!this.lexRangeOverlaps(min, max)) return null;
    let c: ZCursor | null;
    if (linear) {
      c = this.last();
      while (c !== null && !lexLteMax(c.member, max)) c = c.prev();
    } else {
      qLex = max;
      c = this.hitCursorBefore(this.lowerBound(P_LEX_GT_MAX));
    }
    if (c === null || !lexGteMin(c.member, min)) return null;
    return c;
  }

  /**
   * Fill an EMPTY tree from the set's members in order (their slots; scores from ZMembers):
   * appends, each at the end, which leaves the leaves full. Returns false, leaving the tree
   * empty, when the pairs are not strictly in order.
   */
  loadSorted(slots: ArrayLike<number>, n: number): boolean {
    const mem = this.mem, sc = mem.scores;
    for (let k = 1; k < n; k++) {
      const a = sc[slots[k - 1]], b = sc[slots[k]];
      if (!(a < b || (a === b && mem.cmpSlots(slots[k - 1], slots[k]) < 0))) return false;
    }
    for (let k = 0; k < n; k++) this.append(sc[slots[k]], slots[k]);
    return true;
  }

  /** Check every invariant (tests): throws on the first broken one. */
  check(): void {
    let count = 0;
    let prevLeaf: Leaf | null = null;
    let prevS = -Infinity, prevM: string | null = null;
    const walk = (node: Inner | Leaf, h: number, loS: number, loM: string | null, isRoot: boolean): number => {
      if (h === 0) {
        const leaf = node as Leaf;
        if (!isRoot && leaf.n === 0) throw new Error('empty leaf');
        if (leaf.prev !== prevLeaf) throw new Error('broken leaf links');
        if (prevLeaf !== null && prevLeaf.next !== leaf) throw new Error('broken leaf links');
        prevLeaf = leaf;
        for (let j = 0; j < leaf.n; j++) {
          const s = leaf.scores[j], m = this.mem.memberAt(leaf.slots[j]);
          if (this.mem.scores[leaf.slots[j]] !== s) throw new Error('score differs from the member map');
          if (prevM !== null && !(prevS < s || (prevS === s && prevM < m))) throw new Error('out of order');
          if (loM !== null && (s < loS || (s === loS && m < loM))) throw new Error('below separator');
          prevS = s;
          prevM = m;
          count++;
        }
        return leaf.n;
      }
      const inner = node as Inner;
      if (inner.n < 2) throw new Error('inner node with < 2 children');
      let total = 0;
      for (let j = 0; j < inner.n; j++) {
        const lo = j === 0 ? loM : inner.sepMembers[j];
        const c = walk(inner.children[j], h - 1, j === 0 ? loS : inner.sepScores[j], lo, false);
        if (c !== inner.counts[j]) throw new Error(`count ${inner.counts[j]} != ${c}`);
        total += c;
      }
      return total;
    };
    walk(this.root, this.height, -Infinity, null, true);
    if (count !== this.length) throw new Error(`length ${this.length} != ${count}`);
    if (prevLeaf !== null && (prevLeaf as Leaf).next !== null) throw new Error('last leaf has a next');
  }
}
