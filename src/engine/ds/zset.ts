/**
 * The sorted-set value: a member -> score map plus an order-statistics skiplist (Redis's
 * "skiplist" encoding layout). OBJECT ENCODING reports "listpack" while the set is small, as
 * Redis would store it (zset-max-listpack-entries 128, zset-max-listpack-value 64), and
 * "skiplist" once it has outgrown that, which, as in Redis, does not revert.
 *
 * Members are latin1 strings (exact bytes). All mutations go through this class.
 */
import { T, type TypedValue } from '../db.js';
import { SkipList, type SkipNode } from './skiplist.js';

export const ZSET_MAX_LISTPACK_ENTRIES = 128;
export const ZSET_MAX_LISTPACK_VALUE = 64;

export class ZSet implements TypedValue {
  readonly type = T.ZSET;
  readonly dict = new Map<string, number>();
  readonly zsl = new SkipList();
  private big = false;

  get size(): number {
    return this.dict.size;
  }

  encoding(): string {
    return this.big ? 'skiplist' : 'listpack';
  }

  /** Build a set from pairs and give it the encoding Redis gives a store result (by size). */
  static from(pairs: ReadonlyArray<readonly [string, number]>): ZSet {
    const z = new ZSet();
    let big = pairs.length > ZSET_MAX_LISTPACK_ENTRIES;
    if (!big) for (const [m] of pairs) if (m.length > ZSET_MAX_LISTPACK_VALUE) { big = true; break; }
    z.big = big; // decided first: a skiplist result keeps -0 scores, a listpack one does not
    for (const [m, s] of pairs) z.set(m, s);
    return z;
  }

  score(member: string): number | undefined {
    return this.dict.get(member);
  }

  /**
   * Insert or update; returns the previous score (undefined when new). While the set is
   * listpack-sized a -0 score is stored as 0, as Redis's listpack (integer-encoded) stores it;
   * a skiplist keeps -0.
   */
  set(member: string, score: number): number | undefined {
    if (score === 0 && !this.big) score = 0;
    const old = this.dict.get(member);
    if (old === undefined) {
      this.zsl.insert(score, member);
      this.dict.set(member, score);
      if (!this.big && (this.dict.size > ZSET_MAX_LISTPACK_ENTRIES || member.length > ZSET_MAX_LISTPACK_VALUE)) this.big = true;
    } else if (old !== score) {
      this.zsl.delete(old, member);
      this.zsl.insert(score, member);
      this.dict.set(member, score);
    }
    return old;
  }

  remove(member: string): boolean {
    const old = this.dict.get(member);
    if (old === undefined) return false;
    this.dict.delete(member);
    this.zsl.delete(old, member);
    return true;
  }

  /** 0-based rank in ascending order, or -1. */
  rank(member: string): number {
    const s = this.dict.get(member);
    if (s === undefined) return -1;
    return this.zsl.rank(s, member) - 1;
  }

  /** Node at 0-based ascending rank. */
  at(rank: number): SkipNode | null {
    return this.zsl.byRank(rank + 1);
  }

  clone(): ZSet {
    const z = new ZSet();
    for (let n = this.zsl.first(); n !== null; n = n.next[0]) z.set(n.member, n.score);
    z.big = this.big;
    return z;
  }
}
