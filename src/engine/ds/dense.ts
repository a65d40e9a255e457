/**
 * DenseTable: the "hashtable" encoding of hashes and sets. A Map from member (latin1 string) to
 * its position in dense parallel arrays, so that
 *
 *  - a random member is one array read (SPOP, SRANDMEMBER, HRANDFIELD);
 *  - deletion moves the LAST member into the hole (O(1), arrays stay dense);
 *  - SCAN walks positions from the top down. Members only ever move from a higher position to
 *    a lower one, so a member present for the whole scan is never skipped (it may be returned
 *    twice when it moves from the visited top into the unvisited bottom); Redis's SCAN
 *    guarantee. New members are appended at the top, which a running scan has already passed
 *    (Redis makes no promise about members added during a scan).
 *
 * Cursor encoding: 0 starts (and ends) a scan; otherwise it is (next position to visit) + 1.
 */
export class DenseTable<V> {
  private readonly pos = new Map<string, number>();
  readonly keys: string[] = [];
  /** Values by position; null for sets (no values). */
  readonly vals: V[] | null;

  constructor(withValues: boolean) {
    this.vals = withValues ? [] : null;
  }

  get size(): number {
    return this.keys.length;
  }

  has(k: string): boolean {
    return this.pos.has(k);
  }

  get(k: string): V | undefined {
    const i = this.pos.get(k);
    return i === undefined ? undefined : this.vals![i];
  }

  /** Insert or overwrite. True if `k` is new. */
  set(k: string, v: V): boolean {
    const i = this.pos.get(k);
    if (i !== undefined) {
      if (this.vals !== null) this.vals[i] = v;
      return false;
    }
    this.pos.set(k, this.keys.length);
    this.keys.push(k);
    if (this.vals !== null) this.vals.push(v);
    return true;
  }

  /** Add a member of a set. True if new. */
  add(k: string): boolean {
    if (this.pos.has(k)) return false;
    this.pos.set(k, this.keys.length);
    this.keys.push(k);
    return true;
  }

  delete(k: string): boolean {
    const i = this.pos.get(k);
    if (i === undefined) return false;
    this.pos.delete(k);
    const last = this.keys.length - 1;
    if (i !== last) {
      const mk = this.keys[last];
      this.keys[i] = mk;
      this.pos.set(mk, i);
      if (this.vals !== null) this.vals[i] = this.vals[last];
    }
    this.keys.pop();
    if (this.vals !== null) this.vals.pop();
    return true;
  }

  /** Position of a uniformly random member (size must be > 0). */
  randomIndex(): number {
    return Math.floor(Math.random() * this.keys.length);
  }

  /**
   * Visit up to `count` positions from `cursor` downwards, calling fn(index) for each.
   * Returns the next cursor (0 when the walk is complete).
   */
  scan(cursor: number, count: number, fn: (i: number) => void): number {
    let i = cursor === 0 ? this.keys.length - 1 : Math.min(cursor - 1, this.keys.length - 1);
    for (let n = 0; i >= 0 && n < count; n++, i--) fn(i);
    return i < 0 ? 0 : i + 1;
  }
}
