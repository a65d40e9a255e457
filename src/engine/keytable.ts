/**
 * KeyTable: the hash table of one database's keys (Redis dict.c, for the keyspace).
 *
 * Why not a JS Map: a Map holds at most 2^24 (16,777,216) entries ("Map maximum size
 * exceeded"), costs ~29 bytes per key, and SCAN needs stable positions that a Map does not
 * have (the Db used to keep a separate slot array for that: 16 more bytes per key). Here:
 *
 *  - Chained buckets; the chain link is a field of the Entry itself (`Entry.next`), so a key
 *    costs one bucket pointer (8 bytes at load factor 1) on top of its Entry.
 *  - Incremental rehashing as Redis: growing (at load factor 1) or shrinking (under 10%
 *    full, checked on delete and by cron) allocates the new bucket array and moves one bucket
 *    per operation (plus a time-bounded step from cron), so no single command pays for moving
 *    millions of keys.
 *  - SCAN is Redis's dictScan (reverse-binary cursor): a key present for a whole scan is
 *    returned at least once whatever resizes happen in between; a shrink may return a key
 *    twice, as in Redis.
 *
 * The hash is seeded per process (FNV-1a over the latin1 chars, then a murmur3 finaliser);
 * like V8's own string hash it is not a keyed PRF (Redis uses SipHash).
 *
 * Entries leave the table with `next` set to REMOVED, so that iterators holding an entry
 * skip it once it is gone (Map iterators skip deleted entries too).
 */
import { Entry } from './db.js';
import { Arena, ARENA_MAX_KEY, ARENA_MAX_VALUE, nextCursor, rev } from './arena.js';
import type { ReplySink } from '../resp/reply-sink.js';

/** `Entry.next` of an entry that is no longer in the table. */
export const REMOVED = Object.freeze({ removed: true }) as unknown as Entry;

/**
 * `Entry.next` of a view: a transient Entry made for a key of the compact tier (arena.ts) by a
 * walk (scanStep, values, random, someEntries, find). A view can be read and deleted (remove);
 * it is not the key's entry: changes go through get(), which moves the key into the table.
 */
export const VIEW = Object.freeze({ view: true }) as unknown as Entry;

/**
 * The two tiers' bucket counts stay within this factor of each other: SCAN visits every bucket
 * of the larger that expands one of the smaller (dictScan across tables), so a tiny tier beside
 * a huge one would make each step visit a huge slice.
 */
const TIER_RATIO = 8;

const SEED = (Math.random() * 0x100000000) >>> 0;
const MIN_BUCKETS = 4;
/** Largest bucket array: V8 arrays top out near 2^27 elements. Beyond, chains just grow. */
const MAX_BUCKETS = 1 << 26;
/** Buckets moved by one rehash step (and empty buckets it may skip, times 10), as Redis. */
const STEP_EMPTY_VISITS = 10;

/** Hash of a latin1 key (32 bits, as an int32: a small integer, never a boxed double in a field). */
export function hashKey(s: string): number {
  let h = SEED ^ s.length;
  const n = s.length;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return finalMix(h);
}

/** hashKey over bytes b[s, e): the hash of their latin1 string, without building it. */
export function hashBytes(b: Uint8Array, s: number, e: number): number {
  let h = SEED ^ (e - s);
  for (let i = s; i < e; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return finalMix(h);
}

/** murmur3's fmix32: spreads the FNV-style accumulator over all 32 bits (int32). */
function finalMix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** True when the latin1 string `key` is exactly the bytes b[s, e). */
function sameBytes(key: string, b: Uint8Array, s: number, e: number): boolean {
  const n = key.length;
  if (n !== e - s) return false;
  for (let i = 0; i < n; i++) if (key.charCodeAt(i) !== b[s + i]) return false;
  return true;
}

function buckets(n: number): (Entry | undefined)[] {
  return new Array<Entry | undefined>(n).fill(undefined);
}

export class KeyTable {
  private t0: (Entry | undefined)[] = buckets(MIN_BUCKETS);
  private m0 = MIN_BUCKETS - 1;
  /** The table being rehashed into (null when not rehashing). */
  private t1: (Entry | undefined)[] | null = null;
  private m1 = 0;
  /** Next bucket of t0 to move; -1 when not rehashing. */
  private rehashIdx = -1;
  private count = 0;
  /** perf: set() looks a key up, then inserts it: the hash of the last lookup is reused. */
  private lastKey = '';
  private lastHash = hashKey('');
  /**
   * The compact tier: plain string keys without TTL, off the V8 heap (arena.ts). A key is in
   * exactly one tier. get()/getBytes() move a compact key into the table (an Entry), so that
   * every caller holding an Entry may change it; walks show compact keys as views.
   */
  private arena = new Arena();

  get size(): number {
    return this.count + this.arena.size;
  }

  /** Keys held in the compact tier (tests and diagnostics). */
  get compactSize(): number {
    return this.arena.size;
  }

  /** hashKey(key), remembered for the next call with the same key (a lookup, then an insert). */
  hash(key: string): number {
    if (key === this.lastKey) return this.lastHash;
    const h = hashKey(key);
    this.lastKey = key;
    this.lastHash = h;
    return h;
  }

  get(key: string): Entry | undefined {
    if (this.arena.size !== 0) {
      const e = this.getTable(key);
      if (e !== undefined) return e;
      const h = this.hash(key);
      const r = this.arena.find(key, h);
      return r === 0 ? undefined : this.promote(r, h, key);
    }
    return this.getTable(key);
  }

  /** get() in the table only. */
  private getTable(key: string): Entry | undefined {
    if (this.count === 0) return undefined;
    if (this.rehashIdx >= 0) this.rehashStep();
    const h = this.hash(key);
    let e = this.t0[h & this.m0];
    while (e !== undefined) {
      if (e.hash === h && e.key === key) return e;
      e = e.next;
    }
    if (this.t1 !== null) {
      e = this.t1[h & this.m1];
      while (e !== undefined) {
        if (e.hash === h && e.key === key) return e;
        e = e.next;
      }
    }
    return undefined;
  }

  /** Arena.touch: read the compact index where hash h goes (an import reads ahead). */
  touchCompact(h: number): number {
    return this.arena.touch(h);
  }

  /**
   * get() of the key whose latin1 string is the bytes b[s, e), without building that string
   * (perf: a read or an overwrite of an existing key allocates nothing for its name).
   */
  getBytes(b: Uint8Array, s: number, e: number, h = hashBytes(b, s, e)): Entry | undefined {
    const x = this.getTableBytes(b, s, e, h);
    if (x !== undefined || this.arena.size === 0) return x;
    const r = this.arena.findBytes(b, s, e, h);
    return r === 0 ? undefined : this.promote(r, h, undefined);
  }

  private getTableBytes(b: Uint8Array, s: number, e: number, h: number): Entry | undefined {
    if (this.count === 0) return undefined;
    if (this.rehashIdx >= 0) this.rehashStep();
    let x = this.t0[h & this.m0];
    while (x !== undefined) {
      if (x.hash === h && sameBytes(x.key, b, s, e)) return x;
      x = x.next;
    }
    if (this.t1 !== null) {
      x = this.t1[h & this.m1];
      while (x !== undefined) {
        if (x.hash === h && sameBytes(x.key, b, s, e)) return x;
        x = x.next;
      }
    }
    return undefined;
  }

  has(key: string): boolean {
    return this.find(key) !== undefined;
  }

  /**
   * The key's entry, or a view of it if it is compact (not moved into the table): for readers
   * that only read, or delete (persistence writing a changed key out).
   */
  find(key: string): Entry | undefined {
    const e = this.getTable(key);
    if (e !== undefined || this.arena.size === 0) return e;
    const h = this.hash(key);
    const r = this.arena.find(key, h);
    return r === 0 ? undefined : this.view(r, h, key);
  }

  /**
   * Add a key known not to be here, with a string value in the Stored form (a latin1 string or
   * a safe integer) and no TTL, to the compact tier if it fits there. False when it does not
   * (then nothing changed; the caller inserts an Entry instead). `key` as a string, or as the
   * bytes kb[ks, ke) when `key` is undefined.
   */
  addCompact(key: string | undefined, kb: Uint8Array | null, ks: number, ke: number, v: string | number, bits: number): boolean {
    const klen = key !== undefined ? key.length : ke - ks;
    if (klen > ARENA_MAX_KEY || (typeof v === 'string' && v.length > ARENA_MAX_VALUE)) return false;
    const h = key !== undefined ? this.hash(key) : hashBytes(kb!, ks, ke);
    if (this.shrinkPaused > 0) this.walkFloor();
    if (this.arena.add(h, key !== undefined ? key : kb!, key !== undefined ? 0 : ks, key !== undefined ? klen : ke, v, bits) === 0) return false;
    this.balance();
    return true;
  }

  /**
   * addCompact() of a key and value given as bytes (kb[ks, ke) of hash `h`, vb[vs, ve); `int`:
   * the value bytes are a canonical integer's digits); the caller checked both lengths.
   */
  addCompactBytes(h: number, kb: Uint8Array, ks: number, ke: number, vb: Uint8Array, vs: number, ve: number, int: boolean, bits: number): boolean {
    if (this.shrinkPaused > 0) this.walkFloor();
    if (this.arena.addBytes(h, kb, ks, ke, vb, vs, ve, int, bits) === 0) return false;
    this.balance();
    return true;
  }

  /** addCompactBytes() of a value given LZF-compressed (Arena.addLzf: an RDB import's). */
  addCompactLzf(h: number, kb: Uint8Array, ks: number, ke: number, inp: Uint8Array, cs: number, ce: number, vlen: number, bits: number): boolean {
    if (this.shrinkPaused > 0) this.walkFloor();
    if (this.arena.addLzf(h, kb, ks, ke, inp, cs, ce, vlen, bits) === 0) return false;
    this.balance();
    return true;
  }

  /**
   * GET of the compact key whose bytes are b[s, e), left where it is: its value written to
   * `out` as a bulk straight from the arena's bytes (an integer's are its decimal digits), its
   * LRU clock set to `lru` (Entry.bits without the hint) unless `lru` < 0. False when the key
   * is not compact (nothing written).
   */
  replyCompactBytes(b: Uint8Array, s: number, e: number, lru: number, out: ReplySink): boolean {
    if (this.arena.size === 0) return false;
    const a = this.arena;
    const r = a.findBytes(b, s, e, hashBytes(b, s, e));
    if (r === 0) return false;
    if (lru >= 0) a.setBits(r, lru | (a.bits(r) & 3));
    a.replyValue(r, out);
    return true;
  }

  /** Move compact record `r` (hash `h`) into the table as an Entry; returns it. */
  private promote(r: number, h: number, key: string | undefined): Entry {
    const a = this.arena;
    const e = new Entry(key ?? a.key(r), a.value(r), a.bits(r));
    a.remove(r, h, this.shrinkPaused === 0);
    this.insertHashed(e, h);
    return e;
  }

  /** A view of compact record `r`. */
  private view(r: number, h: number, key: string | undefined): Entry {
    const a = this.arena;
    const e = new Entry(key ?? a.key(r), a.value(r), a.bits(r));
    e.hash = h;
    e.next = VIEW;
    return e;
  }

  private viewOf(r: number): Entry {
    const key = this.arena.key(r);
    return this.view(r, this.hash(key), key);
  }

  /**
   * While a walk that must not meet a key twice is in progress (shrinkPaused: an RDB snapshot),
   * the compact tier's index is kept no smaller than the table: a smaller one would make the
   * walk coarser (as a shrink does), and with the table finer than the compact tier, a key
   * moved into the table after its compact bucket was visited could be met again. Cron lowers
   * the floor again afterwards.
   */
  private walkFloor(): void {
    const n = this.t1 === null ? this.t0.length : Math.min(this.t0.length, this.t1.length);
    if (this.arena.scanMask + 1 < n) this.arena.minSlots(n);
  }

  /**
   * Keep the tiers' bucket counts within TIER_RATIO of each other (see TIER_RATIO): the table
   * grows (incrementally) when the compact tier's index outgrows it.
   */
  private balance(): void {
    const want = this.arena.scanMask + 1;
    if (this.t1 === null && this.t0.length * TIER_RATIO < want && this.t0.length < MAX_BUCKETS) {
      this.startRehash(Math.min(MAX_BUCKETS, want / TIER_RATIO));
    }
  }

  /**
   * Size an empty table for `n` keys at once, `compact` of which go to the compact tier
   * (start-up loads a known number of keys: no rehash while they go in). Without `compact`,
   * most keys loaded in bulk are taken to be plain strings: the compact tier's index is sized
   * for all of them.
   */
  reserve(n: number, compact = n): void {
    if (this.count !== 0 || this.t1 !== null) return;
    this.arena.reserve(compact);
    // The table: for its own keys, and no less than 1/TIER_RATIO of the compact ones (it
    // grows as keys come if more are not compact).
    n = Math.max(n - compact, Math.ceil(compact / TIER_RATIO));
    let want = MIN_BUCKETS;
    while (want < n && want < MAX_BUCKETS) want *= 2;
    if (want <= this.t0.length) return;
    this.t0 = buckets(want);
    this.m0 = want - 1;
    this.reserved = want;
  }

  /**
   * The keys a reserve() was for are in (or will not come): the table may shrink again. Until
   * then it does not, or cron would shrink the empty reserved table to 4 buckets as soon as it
   * runs, and the keys would go into ever-longer chains while it grew back one rehash step at a
   * time (a restart of 1,000,000 keys spent 27% of its time in rehashStep).
   */
  endReserve(): void {
    this.reserved = 0;
  }

  /** Buckets of the main table (tests and diagnostics). */
  get bucketCount(): number {
    return this.t0.length;
  }

  /** Add an entry whose key is known not to be in the table. */
  insert(e: Entry): void {
    this.insertHashed(e, this.hash(e.key));
  }

  private insertHashed(e: Entry, h: number): void {
    if (this.rehashIdx >= 0) this.rehashStep();
    else if (this.count >= this.t0.length && this.t0.length < MAX_BUCKETS) this.startRehash(this.t0.length * 2);
    e.hash = h;
    if (this.t1 !== null) {
      const i = h & this.m1;
      e.next = this.t1[i];
      this.t1[i] = e;
    } else {
      const i = h & this.m0;
      e.next = this.t0[i];
      this.t0[i] = e;
    }
    this.count++;
  }

  /** Unlink `e` (an entry of this table). */
  remove(e: Entry): void {
    if (e.next === VIEW) {
      const r = this.arena.find(e.key, e.hash);
      e.next = REMOVED;
      if (r !== 0) {
        this.arena.remove(r, e.hash, this.shrinkPaused === 0);
        return;
      }
      // Moved into the table since the view was made (a hook that ran before the removal,
      // such as an RDB snapshot saving the key first, looked it up): remove its entry.
      const x = this.getTable(e.key);
      if (x === undefined) throw new Error(`KeyTable: entry ${JSON.stringify(e.key)} is not in the table`);
      this.remove(x);
      return;
    }
    const h = e.hash;
    if (!this.unlink(this.t0, h & this.m0, e) && (this.t1 === null || !this.unlink(this.t1, h & this.m1, e))) {
      throw new Error(`KeyTable: entry ${JSON.stringify(e.key)} is not in the table`);
    }
    e.next = REMOVED;
    this.count--;
    if (this.rehashIdx >= 0) this.rehashStep();
    else this.shrinkIfSparse();
  }

  /**
   * Start shrinking a table under 10% full (Redis's HASHTABLE_MIN_FILL) to the smallest power
   * of two that holds its keys: memory comes back, and SCAN and RANDOMKEY stay quick.
   */
  /**
   * While > 0, the table does not shrink (an RDB snapshot walks it: a walk can meet a key
   * twice only across a shrink, as with Redis's dictScan).
   */
  shrinkPaused = 0;

  /** A shrink is in progress (a walk started now may meet keys twice). */
  get shrinking(): boolean {
    return this.t1 !== null && this.t1.length < this.t0.length;
  }

  /** Bucket count set by reserve(), kept until endReserve(): no shrink below it meanwhile. */
  private reserved = 0;

  private shrinkIfSparse(): void {
    if (this.shrinkPaused > 0 || this.reserved !== 0) return;
    const n = this.t0.length;
    const floor = this.arena.size === 0 ? MIN_BUCKETS : Math.max(MIN_BUCKETS, (this.arena.scanMask + 1) / TIER_RATIO);
    if (n > floor && this.count * 10 < n) {
      let want = floor;
      while (want < this.count) want *= 2;
      if (want < n) this.startRehash(want);
    }
  }

  private unlink(t: (Entry | undefined)[], i: number, e: Entry): boolean {
    let p = t[i];
    if (p === e) {
      t[i] = e.next;
      return true;
    }
    while (p !== undefined) {
      if (p.next === e) {
        p.next = e.next;
        return true;
      }
      p = p.next;
    }
    return false;
  }

  /**
   * Put `nw` (same key) in the place of `old`, an entry of this table, in its chain: SCAN
   * cursors and RANDOMKEY are unaffected. `old` is marked removed.
   */
  replace(old: Entry, nw: Entry): void {
    const h = old.hash;
    nw.hash = h;
    if (!this.relink(this.t0, h & this.m0, old, nw) && (this.t1 === null || !this.relink(this.t1, h & this.m1, old, nw))) {
      throw new Error(`KeyTable: entry ${JSON.stringify(old.key)} is not in the table`);
    }
    old.next = REMOVED;
  }

  private relink(t: (Entry | undefined)[], i: number, old: Entry, nw: Entry): boolean {
    nw.next = old.next;
    let p = t[i];
    if (p === old) {
      t[i] = nw;
      return true;
    }
    while (p !== undefined) {
      if (p.next === old) {
        p.next = nw;
        return true;
      }
      p = p.next;
    }
    return false;
  }

  /** Drop everything (FLUSHDB). Entries are not marked: the whole table is gone. */
  clear(): void {
    this.t0 = buckets(MIN_BUCKETS);
    this.m0 = MIN_BUCKETS - 1;
    this.t1 = null;
    this.rehashIdx = -1;
    this.count = 0;
    this.reserved = 0;
    this.lastKey = '';
    this.lastHash = hashKey('');
    this.arena.clear();
    this.arena.minSlots(0);
  }

  // ---------------------------------------------------------------- rehashing

  private startRehash(n: number): void {
    this.arena.minSlots(n / TIER_RATIO);
    this.t1 = buckets(n);
    this.m1 = n - 1;
    this.rehashIdx = 0;
  }

  /** Move one bucket from t0 to t1 (skipping at most STEP_EMPTY_VISITS empty ones). */
  private rehashStep(): void {
    const t0 = this.t0;
    const t1 = this.t1!;
    const m1 = this.m1;
    let empty = STEP_EMPTY_VISITS;
    let i = this.rehashIdx;
    while (t0[i] === undefined) {
      if (++i === t0.length) {
        this.finishRehash();
        return;
      }
      if (--empty === 0) {
        this.rehashIdx = i;
        return;
      }
    }
    let e = t0[i];
    t0[i] = undefined;
    while (e !== undefined) {
      const next = e.next;
      const j = e.hash & m1;
      e.next = t1[j];
      t1[j] = e;
      e = next;
    }
    this.rehashIdx = i + 1;
    if (this.rehashIdx === t0.length) this.finishRehash();
  }

  private finishRehash(): void {
    this.t0 = this.t1!;
    this.m0 = this.m1;
    this.t1 = null;
    this.rehashIdx = -1;
  }

  /**
   * Background upkeep (cron): start a shrink when the table is sparse, and rehash until
   * `deadline` (Date.now() ms), as Redis's activerehashing.
   */
  cron(deadline: number): void {
    this.arena.migrateUntil(deadline);
    this.arena.compactStep(deadline);
    if (this.shrinkPaused === 0) {
      // The floor a walk raised (walkFloor) comes down; the index shrinks if sparse.
      this.arena.minSlots(Math.min(this.t0.length, this.t1 === null ? this.t0.length : this.t1.length) / TIER_RATIO);
      this.arena.shrinkIfSparse();
    }
    if (this.rehashIdx < 0) {
      this.shrinkIfSparse();
      if (this.rehashIdx < 0) return;
    }
    while (this.rehashIdx >= 0) {
      for (let k = 0; k < 100 && this.rehashIdx >= 0; k++) this.rehashStep();
      if (Date.now() >= deadline) break;
    }
  }

  // ---------------------------------------------------------------- scanning

  /**
   * dictScan: call fn for every entry of the bucket(s) at `cursor`; returns the next cursor
   * (0 when the walk is complete). Cursors are 32-bit.
   */
  scanStep(cursor: number, fn: (e: Entry) => void): number {
    let v = cursor >>> 0;
    if (this.count === 0 && this.arena.size === 0) return 0;
    if (this.arena.size !== 0) return this.scanTiers(v, fn);
    if (this.t1 === null) {
      const m0 = this.m0;
      for (let e = this.t0[v & m0]; e !== undefined; e = e.next) fn(e);
      v = (v | ~m0) >>> 0;
      v = rev(v);
      v = (v + 1) >>> 0;
      return rev(v);
    }
    // Rehashing: visit the cursor's bucket in the smaller table, then every bucket of the
    // larger table that expands it.
    let ts = this.t0;
    let ms = this.m0;
    let tl = this.t1;
    let ml = this.m1;
    if (ms > ml) {
      ts = this.t1;
      ms = this.m1;
      tl = this.t0;
      ml = this.m0;
    }
    for (let e = ts[v & ms]; e !== undefined; e = e.next) fn(e);
    do {
      for (let e = tl[v & ml]; e !== undefined; e = e.next) fn(e);
      v = (v | ~ml) >>> 0;
      v = rev(v);
      v = (v + 1) >>> 0;
      v = rev(v);
    } while ((v & (ms ^ ml)) !== 0);
    return v;
  }

  /**
   * dictScan over every table at once (the table, the one it rehashes into, the compact tier's
   * index): at the granularity m of the smallest, the buckets of each that expand bucket v & m.
   * A key keeps its hash when it moves between them (rehashing, a compact key moving into the
   * table), so a key present for a whole walk is met at least once.
   */
  private scanTiers(v: number, fn: (e: Entry) => void): number {
    if (this.shrinkPaused > 0) this.walkFloor();
    const a = this.arena;
    let m = a.scanMask;
    if (this.m0 < m) m = this.m0;
    if (this.t1 !== null && this.m1 < m) m = this.m1;
    this.scanBuckets(this.t0, this.m0, v, m, fn);
    if (this.t1 !== null) this.scanBuckets(this.t1, this.m1, v, m, fn);
    a.scanBuckets(v, m, (r) => fn(this.viewOf(r)));
    return nextCursor(v, m);
  }

  private scanBuckets(t: (Entry | undefined)[], mask: number, v: number, m: number, fn: (e: Entry) => void): void {
    for (let b = v & m; b <= mask; b += m + 1) {
      for (let e = t[b]; e !== undefined; e = e.next) fn(e);
    }
  }

  /**
   * Whether a dictScan walk whose next cursor is `cursor` (not 0) has visited `key`'s bucket.
   * The walk visits buckets in increasing bit-reversed order at the granularity of the smaller
   * table, so this is a comparison there. Exact only while the table does not shrink
   * (shrinkPaused), as for the walk itself.
   */
  scanVisited(key: string, cursor: number): boolean {
    if (this.shrinkPaused > 0) this.walkFloor();
    let m = this.t1 === null ? this.m0 : Math.min(this.m0, this.m1);
    if (this.arena.size !== 0) m = Math.min(m, this.arena.scanMask);
    return rev(this.hash(key) & m) < rev(cursor >>> 0);
  }

  /** A random entry (dictGetRandomKey: a random non-empty bucket, a random chain element). */
  random(): Entry | undefined {
    const n = this.arena.size;
    if (n !== 0 && (this.count === 0 || Math.random() * (n + this.count) < n)) return this.viewOf(this.arena.random());
    if (this.count === 0) return undefined;
    if (this.rehashIdx >= 0) this.rehashStep();
    const t0 = this.t0;
    const t1 = this.t1;
    const n0 = t0.length;
    const lo = this.rehashIdx >= 0 ? this.rehashIdx : 0;
    const span = n0 - lo + (t1 === null ? 0 : t1.length);
    let head: Entry | undefined;
    // A sparse table (before cron shrinks it) could need many probes: walk from the last one.
    for (let tries = 0; head === undefined; tries++) {
      let i = lo + Math.floor(Math.random() * span);
      if (tries < 1000) {
        head = i < n0 ? t0[i] : t1![i - n0];
        continue;
      }
      for (let k = 0; k < span && head === undefined; k++, i = i + 1 === lo + span ? lo : i + 1) {
        head = i < n0 ? t0[i] : t1![i - n0];
      }
    }
    let len = 0;
    for (let e: Entry | undefined = head; e !== undefined; e = e.next) len++;
    let k = Math.floor(Math.random() * len);
    let e = head;
    while (k-- > 0) e = e.next!;
    return e;
  }

  /**
   * dictGetSomeKeys: up to `n` entries from consecutive buckets starting at a random one
   * (eviction sampling: one random draw and a short walk instead of n random lookups). Visits
   * at most 10n buckets; pushes into `out`, returns how many were added.
   */
  someEntries(n: number, out: Entry[]): number {
    const na = this.arena.size;
    if (na !== 0 && n > 0 && (this.count === 0 || Math.random() * (na + this.count) < na)) {
      const refs: number[] = [];
      this.arena.some(n, refs);
      for (const r of refs) out.push(this.viewOf(r));
      return refs.length;
    }
    if (this.count === 0 || n <= 0) return 0;
    if (this.rehashIdx >= 0) this.rehashStep();
    // perf: the two tables by name, no array of them per call (one call per eviction).
    const t0 = this.t0;
    const t1 = this.t1;
    const big = t1 === null ? t0 : t1;
    let i = Math.floor(Math.random() * big.length);
    let added = 0;
    for (let steps = 0; steps < n * 10 && added < n; steps++, i++) {
      // Buckets of t0 under rehashIdx have already moved to t1.
      const b = i & (t0.length - 1);
      if (this.rehashIdx < 0 || b >= this.rehashIdx) {
        for (let e = t0[b]; e !== undefined && added < n; e = e.next) {
          out.push(e);
          added++;
        }
      }
      if (t1 !== null) {
        for (let e = t1[i & (t1.length - 1)]; e !== undefined && added < n; e = e.next) {
          out.push(e);
          added++;
        }
      }
    }
    return added;
  }

  // ---------------------------------------------------------------- iteration (Map-like)

  /**
   * Every entry, in bucket order. Safe against changes made while iterating: a removed entry
   * not yet visited is skipped, an added one may or may not be visited; a shrink started by
   * cron between two steps of a long-lived iterator may repeat entries (as SCAN).
   */
  *values(): IterableIterator<Entry> {
    if (this.size === 0) return;
    const batch: Entry[] = [];
    let cursor = 0;
    do {
      batch.length = 0;
      cursor = this.scanStep(cursor, (e) => batch.push(e));
      for (let i = 0; i < batch.length; i++) {
        const e = batch[i];
        if (e.next !== REMOVED) yield e;
      }
    } while (cursor !== 0);
  }

  *keys(): IterableIterator<string> {
    for (const e of this.values()) yield e.key;
  }

  *entries(): IterableIterator<[string, Entry]> {
    for (const e of this.values()) yield [e.key, e];
  }

  [Symbol.iterator](): IterableIterator<[string, Entry]> {
    return this.entries();
  }

  forEach(fn: (e: Entry, key: string) => void): void {
    for (const e of this.values()) fn(e, e.key);
  }
}
