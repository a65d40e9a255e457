/**
 * An order-statistics skiplist of (score, member), ordered by score then by member bytes
 * (memcmp), as Redis's zskiplist: every forward link stores its span, so rank lookups and
 * range-by-rank are O(log n). Members are latin1 strings (one char per byte) so comparing them
 * with < is the same as memcmp on the bytes.
 *
 * Algorithm after William Pugh's paper and Redis's t_zset.c description (written anew here).
 */

const MAX_LEVEL = 32;
const P = 0.25;

export class SkipNode {
  readonly next: (SkipNode | null)[];
  readonly span: number[];
  prev: SkipNode | null = null;
  constructor(public score: number, public member: string, level: number) {
    // Packed arrays (no holes: every node's links have the same element kind), built from
    // literals; three nodes in four have a single level.
    const next: (SkipNode | null)[] = [null];
    const span: number[] = [0];
    for (let i = 1; i < level; i++) {
      next.push(null);
      span.push(0);
    }
    this.next = next;
    this.span = span;
  }
}

/** Scratch of loadSorted: the last node of each level and its rank. */
let LOAD_LAST: SkipNode[];
const LOAD_RANK: number[] = new Array(MAX_LEVEL).fill(0);

function randomLevel(): number {
  let l = 1;
  while (l < MAX_LEVEL && Math.random() < P) l++;
  return l;
}

/** (score, member) strictly before (s2, m2) in zset order. */
function before(s1: number, m1: string, s2: number, m2: string): boolean {
  return s1 < s2 || (s1 === s2 && m1 < m2);
}

LOAD_LAST = new Array(MAX_LEVEL).fill(new SkipNode(0, '', 1));
/**
 * Scratch of insert / delete (the nodes before the position at each level, and their ranks):
 * one shared pair instead of two arrays per call. Stale entries above the current level are
 * never read.
 */
const UPDATE: SkipNode[] = new Array(MAX_LEVEL).fill(LOAD_LAST[0]);
const RANK: number[] = new Array(MAX_LEVEL).fill(0);

export class SkipList {
  /** Its links grow with the list's level (a small set does not pay for 32 levels). */
  readonly head = new SkipNode(0, '', 1);
  tail: SkipNode | null = null;
  length = 0;
  level = 1;

  insert(score: number, member: string): SkipNode {
    const update = UPDATE;
    const rank = RANK;
    let x = this.head;
    for (let i = this.level - 1; i >= 0; i--) {
      rank[i] = i === this.level - 1 ? 0 : rank[i + 1];
      let n = x.next[i];
      while (n !== null && before(n.score, n.member, score, member)) {
        rank[i] += x.span[i];
        x = n;
        n = x.next[i];
      }
      update[i] = x;
    }
    const lvl = randomLevel();
    if (lvl > this.level) {
      this.growHead(lvl);
      for (let i = this.level; i < lvl; i++) {
        rank[i] = 0;
        update[i] = this.head;
        update[i].span[i] = this.length;
      }
      this.level = lvl;
    }
    const node = new SkipNode(score, member, lvl);
    for (let i = 0; i < lvl; i++) {
      node.next[i] = update[i].next[i];
      update[i].next[i] = node;
      node.span[i] = update[i].span[i] - (rank[0] - rank[i]);
      update[i].span[i] = rank[0] - rank[i] + 1;
    }
    for (let i = lvl; i < this.level; i++) update[i].span[i]++;
    node.prev = update[0] === this.head ? null : update[0];
    if (node.next[0] !== null) node.next[0].prev = node;
    else this.tail = node;
    this.length++;
    return node;
  }

  private growHead(lvl: number): void {
    const h = this.head;
    while (h.next.length < lvl) {
      h.next.push(null);
      h.span.push(0);
    }
  }

  /** Remove (score, member); false if absent. */
  delete(score: number, member: string): boolean {
    const update = UPDATE;
    let x = this.head;
    for (let i = this.level - 1; i >= 0; i--) {
      let n = x.next[i];
      while (n !== null && before(n.score, n.member, score, member)) {
        x = n;
        n = x.next[i];
      }
      update[i] = x;
    }
    const node = x.next[0];
    if (node === null || node.score !== score || node.member !== member) return false;
    this.unlink(node, update);
    return true;
  }

  private unlink(node: SkipNode, update: SkipNode[]): void {
    for (let i = 0; i < this.level; i++) {
      if (update[i].next[i] === node) {
        update[i].span[i] += node.span[i] - 1;
        update[i].next[i] = node.next[i];
      } else {
        update[i].span[i]--;
      }
    }
    if (node.next[0] !== null) node.next[0].prev = node.prev;
    else this.tail = node.prev;
    while (this.level > 1 && this.head.next[this.level - 1] === null) this.level--;
    this.length--;
  }

  /** 1-based rank of (score, member), 0 if absent. */
  rank(score: number, member: string): number {
    let r = 0;
    let x = this.head;
    for (let i = this.level - 1; i >= 0; i--) {
      let n = x.next[i];
      while (n !== null && (before(n.score, n.member, score, member) || (n.score === score && n.member === member))) {
        r += x.span[i];
        x = n;
        n = x.next[i];
      }
      if (x !== this.head && x.member === member) return r;
    }
    return 0;
  }

  /** Node at 1-based rank, or null. */
  byRank(rank: number): SkipNode | null {
    if (rank < 1 || rank > this.length) return null;
    let traversed = 0;
    let x = this.head;
    for (let i = this.level - 1; i >= 0; i--) {
      let n = x.next[i];
      while (n !== null && traversed + x.span[i] <= rank) {
        traversed += x.span[i];
        x = n;
        n = x.next[i];
      }
      if (traversed === rank) return x;
    }
    return null;
  }

  /** First node whose score is in range (> or >= min), or null. */
  firstInScore(min: number, minEx: boolean, max: number, maxEx: boolean): SkipNode | null {
    let x = this.head;
    for (let i = this.level - 1; i >= 0; i--) {
      let n = x.next[i];
      while (n !== null && (minEx ? n.score <= min : n.score < min)) {
        x = n;
        n = x.next[i];
      }
    }
    const n = x.next[0];
    if (n === null) return null;
    if (maxEx ? n.score >= max : n.score > max) return null;
    return n;
  }

  /** Last node whose score is in range, or null. */
  lastInScore(min: number, minEx: boolean, max: number, maxEx: boolean): SkipNode | null {
    let x = this.head;
    for (let i = this.level - 1; i >= 0; i--) {
      let n = x.next[i];
      while (n !== null && (maxEx ? n.score < max : n.score <= max)) {
        x = n;
        n = x.next[i];
      }
    }
    if (x === this.head) return null;
    if (minEx ? x.score <= min : x.score < min) return null;
    return x;
  }

  /**
   * Redis's zslIsInLexRange: false when the range is empty by itself or lies wholly outside
   * [first member, last member]. Members are compared as if sorted, as Redis does; lex ranges
   * are only meaningful when every score is equal.
   */
  private lexRangeOverlaps(min: LexBound, max: LexBound): boolean {
    if (min.inf === 0 && max.inf === 0) {
      if (min.value > max.value || (min.value === max.value && (min.exclusive || max.exclusive))) return false;
    } else if (min.inf === 1 || max.inf === -1) {
      return false;
    }
    const last = this.tail;
    if (last === null || !lexGteMin(last.member, min)) return false;
    const first = this.head.next[0];
    return first !== null && lexLteMax(first.member, max);
  }

  /**
   * First node of a lex range, as Redis finds it: `linear` walks from the head as Redis does
   * for a listpack-encoded set; otherwise the skiplist descent of zslFirstInLexRange. (With
   * unequal scores the two can differ, and Redis's answer depends on the encoding.)
   */
  firstInLex(min: LexBound, max: LexBound, linear = false): SkipNode | null {
    if (!this.lexRangeOverlaps(min, max)) return null;
    let n: SkipNode | null;
    if (linear) {
      n = this.head.next[0];
      while (n !== null && !lexGteMin(n.member, min)) n = n.next[0];
    } else {
      let x = this.head;
      for (let i = this.level - 1; i >= 0; i--) {
        let f = x.next[i];
        while (f !== null && !lexGteMin(f.member, min)) {
          x = f;
          f = x.next[i];
        }
      }
      n = x.next[0];
    }
    if (n === null || !lexLteMax(n.member, max)) return null;
    return n;
  }

  /** Last node of a lex range (zslLastInLexRange, or a walk from the tail when `linear`). */
  lastInLex(min: LexBound, max: LexBound, linear = false): SkipNode | null {
    if (!this.lexRangeOverlaps(min, max)) return null;
    let n: SkipNode | null;
    if (linear) {
      n = this.tail;
      while (n !== null && !lexLteMax(n.member, max)) n = n.prev;
    } else {
      let x = this.head;
      for (let i = this.level - 1; i >= 0; i--) {
        let f = x.next[i];
        while (f !== null && lexLteMax(f.member, max)) {
          x = f;
          f = x.next[i];
        }
      }
      n = x === this.head ? null : x;
    }
    if (n === null || !lexGteMin(n.member, min)) return null;
    return n;
  }

  first(): SkipNode | null {
    return this.head.next[0];
  }

  /**
   * Fill an EMPTY list from pairs already in list order (loading from disk): each node is
   * linked after the last one of each of its levels, O(1) per node instead of a descent.
   * Returns false, leaving the list empty, when the pairs are not strictly in order.
   */
  loadSorted(scores: ArrayLike<number>, members: readonly string[], n = members.length): boolean {
    for (let k = 1; k < n; k++) {
      if (!before(scores[k - 1], members[k - 1], scores[k], members[k])) return false;
    }
    const last = LOAD_LAST;
    const lastRank = LOAD_RANK;
    last[0] = this.head;
    lastRank[0] = 0;
    let level = 1;
    let prev: SkipNode | null = null;
    for (let k = 0; k < n; k++) {
      const rank = k + 1;
      const lvl = randomLevel();
      if (lvl > level) {
        this.growHead(lvl);
        for (let i = level; i < lvl; i++) {
          last[i] = this.head;
          lastRank[i] = 0;
        }
        level = lvl;
      }
      const node = new SkipNode(scores[k], members[k], lvl);
      for (let i = 0; i < lvl; i++) {
        const l = last[i];
        l.next[i] = node;
        l.span[i] = rank - lastRank[i];
        last[i] = node;
        lastRank[i] = rank;
      }
      node.prev = prev;
      prev = node;
    }
    // Links to the end span the rest of the list (as insert() leaves them: length - rank).
    for (let i = 0; i < level; i++) last[i].span[i] = n - lastRank[i];
    this.level = level;
    this.length = n;
    this.tail = prev;
    last.fill(this.head, 0, level); // keep no node of this list alive from the scratch
    return true;
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
