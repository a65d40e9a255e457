/**
 * DenseTable: the "hashtable" encoding of hashes and sets. Members (latin1 strings) live in
 * dense parallel arrays (`keys`, `vals`), indexed by an open-addressing table of positions, so
 * that
 *
 *  - a random member is one array read (SPOP, SRANDMEMBER, HRANDFIELD);
 *  - deletion moves the LAST member into the hole (O(1), arrays stay dense);
 *  - SCAN walks positions from the top down. Members only ever move from a higher position to
 *    a lower one, so a member present for the whole scan is never skipped (it may be returned
 *    twice when it moves from the visited top into the unvisited bottom); Redis's SCAN
 *    guarantee. New members are appended at the top, which a running scan has already passed
 *    (Redis makes no promise about members added during a scan).
 *
 * Why not a JS Map from member to position (as before): memory. A Map entry costs ~29 bytes
 * on top of the positions arrays; here the index is one Int32 slot per member at load factor
 * <= 1/2 (8 to 16 bytes), and a Map caps at 2^24 entries. Each slot holds the position + 1 in
 * its low 27 bits and the top 5 bits of the member's hash above, so most probes that do not
 * match are rejected without comparing strings. Deleted slots are tombstones (-1), reused by
 * inserts and dropped when the table is rebuilt (growth, or too many tombstones).
 *
 * The hash is the keyspace's (seeded FNV-1a + murmur finaliser, keytable.ts).
 *
 * Cursor encoding: 0 starts (and ends) a scan; otherwise it is (next position to visit) + 1.
 */
import { hashKey } from '../keytable.js';

const POS_MASK = (1 << 27) - 1;
const TAG_MASK = ~POS_MASK;
const TOMB = -1;
const MIN_SLOTS = 8;

export class DenseTable<V> {
  readonly keys: string[] = [];
  /** Values by position; null for sets (no values). */
  readonly vals: V[] | null;
  private slots = new Int32Array(MIN_SLOTS);
  private mask = MIN_SLOTS - 1;
  /** Slots that are taken (members + tombstones). */
  private used = 0;

  constructor(withValues: boolean) {
    this.vals = withValues ? [] : null;
  }

  get size(): number {
    return this.keys.length;
  }

  /** Position of `k`, or -1. */
  indexOf(k: string): number {
    const h = hashKey(k);
    const slots = this.slots;
    const mask = this.mask;
    const keys = this.keys;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === 0) return -1;
      if (s !== TOMB && ((s ^ h) & TAG_MASK) === 0) {
        const p = (s & POS_MASK) - 1;
        if (keys[p] === k) return p;
      }
    }
  }

  has(k: string): boolean {
    return this.indexOf(k) >= 0;
  }

  get(k: string): V | undefined {
    const i = this.indexOf(k);
    return i < 0 ? undefined : this.vals![i];
  }

  /** Insert or overwrite. True if `k` is new. */
  set(k: string, v: V): boolean {
    const p = this.insert(k);
    if (p >= 0) {
      if (this.vals !== null) this.vals[p] = v;
      return false;
    }
    if (this.vals !== null) this.vals.push(v);
    return true;
  }

  /** Add a member of a set. True if new. */
  add(k: string): boolean {
    return this.insert(k) < 0;
  }

  /**
   * Find `k`; when absent, append it to `keys` and index it (the caller appends its value).
   * Returns its position when present, -1 when added.
   */
  private insert(k: string): number {
    if ((this.used + 1) * 2 > this.slots.length) this.rebuild(this.keys.length + 1);
    const h = hashKey(k);
    const slots = this.slots;
    const mask = this.mask;
    const keys = this.keys;
    let free = -1;
    let i = h & mask;
    for (; ; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === 0) break;
      if (s === TOMB) {
        if (free < 0) free = i;
      } else if (((s ^ h) & TAG_MASK) === 0) {
        const p = (s & POS_MASK) - 1;
        if (keys[p] === k) return p;
      }
    }
    if (keys.length >= POS_MASK - 1) throw new RangeError('DenseTable: too many members');
    if (free >= 0) i = free;
    else this.used++;
    slots[i] = (h & TAG_MASK) | (keys.length + 1);
    keys.push(k);
    return -1;
  }

  delete(k: string): boolean {
    const h = hashKey(k);
    const slots = this.slots;
    const mask = this.mask;
    const keys = this.keys;
    let i = h & mask;
    let p = -1;
    for (; ; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === 0) return false;
      if (s !== TOMB && ((s ^ h) & TAG_MASK) === 0) {
        p = (s & POS_MASK) - 1;
        if (keys[p] === k) break;
      }
    }
    slots[i] = TOMB;
    const last = keys.length - 1;
    if (p !== last) {
      // The last member moves into the hole: repoint its slot.
      const mk = keys[last];
      const mh = hashKey(mk);
      for (let j = mh & mask; ; j = (j + 1) & mask) {
        if ((slots[j] & POS_MASK) === last + 1 && slots[j] !== TOMB) {
          slots[j] = (mh & TAG_MASK) | (p + 1);
          break;
        }
      }
      keys[p] = mk;
      if (this.vals !== null) this.vals[p] = this.vals[last];
    }
    keys.pop();
    if (this.vals !== null) this.vals.pop();
    const n = keys.length;
    if (n === 0) {
      this.slots = new Int32Array(MIN_SLOTS);
      this.mask = MIN_SLOTS - 1;
      this.used = 0;
    } else if (n * 8 < this.slots.length && this.slots.length > MIN_SLOTS) {
      this.rebuild(n);
    }
    return true;
  }

  /** Re-index every member in a table sized for `n` members (drops tombstones). */
  private rebuild(n: number): void {
    let cap = MIN_SLOTS;
    while (cap < n * 2 + 2) cap *= 2;
    // Only tombstones made the table full: rebuild at the same size.
    const slots = new Int32Array(cap);
    const mask = cap - 1;
    const keys = this.keys;
    for (let p = 0; p < keys.length; p++) {
      const h = hashKey(keys[p]);
      let i = h & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = (h & TAG_MASK) | (p + 1);
    }
    this.slots = slots;
    this.mask = mask;
    this.used = keys.length;
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
