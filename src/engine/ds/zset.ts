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

  /** Force the encoding a copy or a store result would get (Redis converts by size). */
  fitEncoding(): void {
    this.big = this.dict.size > ZSET_MAX_LISTPACK_ENTRIES;
    if (!this.big) for (const m of this.dict.keys()) if (m.length > ZSET_MAX_LISTPACK_VALUE) { this.big = true; break; }
  }

  score(member: string): number | undefined {
    return this.dict.get(member);
  }

  /** Insert or update; returns the previous score (undefined when new). */
  set(member: string, score: number): number | undefined {
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
