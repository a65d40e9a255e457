/**
 * The sorted-set value: a member -> score map plus an order-statistics skiplist (Redis's
 * "skiplist" encoding layout). OBJECT ENCODING reports "listpack" while the set is small, as
 * Redis would store it (zset-max-listpack-entries 128, zset-max-listpack-value 64), and
 * "skiplist" once it has outgrown that, which, as in Redis, does not revert.
 *
 * Members are latin1 strings (exact bytes). All mutations go through this class.
 *
 * Persistence (the contract of src/store/codec.ts): `zsetCodec` at the bottom. Listpack-sized
 * sets are stored whole; bigger ones as one record per member whose sub-key is the score (in
 * an order-preserving 8-byte form) followed by the member, so the records come back in zset
 * order and the skiplist is rebuilt without a search per member. While stored so
 * (`sid !== 0`) every mutation logs the member with the score it had on disk.
 */
import { T } from '../db.js';
import type { CollectionCodec, ItemRecord, ItemWriter, StoredValue } from '../../store/codec.js';
import { EMPTY, Unpacker, scratch, subScratch, wholeBytes, wholeItems } from '../../store/packing.js';
import { SkipList, type SkipNode } from './skiplist.js';

export const ZSET_MAX_LISTPACK_ENTRIES = 128;
export const ZSET_MAX_LISTPACK_VALUE = 64;

export class ZSet implements StoredValue {
  readonly type = T.ZSET;
  readonly dict = new Map<string, number>();
  readonly zsl = new SkipList();
  private big = false;
  /** Object id of its item records in the store; 0 = none (stored whole, or not stored). */
  sid = 0;
  /**
   * Members changed since the store last wrote the records, each with the score its record
   * has on disk (undefined: no record). Logged only while sid !== 0.
   */
  private changed: Map<string, number | undefined> | null = null;

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
    if (this.sid !== 0 && old !== score) this.logChange(member, old);
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
    if (this.sid !== 0) this.logChange(member, old);
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

  private logChange(member: string, onDisk: number | undefined): void {
    const c = (this.changed ??= new Map());
    if (!c.has(member)) c.set(member, onDisk);
  }

  // ------------------------------------------------------------------ persistence (zsetCodec)

  /**
   * Whole form: [skiplist u8][count varint] then per member, in zset order, [score f64 LE]
   * [member: varint length + bytes]. Null when the set is a skiplist too big for it (then it
   * is stored as records).
   */
  storeWhole(): Buffer | null {
    const size = this.dict.size;
    if (this.big) {
      if (size > wholeItems(this.sid)) return null;
      const limit = wholeBytes(this.sid);
      let bytes = 0;
      for (let n = this.zsl.first(); n !== null; n = n.next[0]) {
        bytes += 8 + n.member.length;
        if (bytes > limit) return null;
      }
    }
    this.changed = null;
    const pk = scratch.reset(256);
    pk.u8(this.big ? 1 : 0);
    pk.varint(size);
    for (let n = this.zsl.first(); n !== null; n = n.next[0]) {
      pk.f64(n.score);
      pk.str(n.member);
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
    const z = ZSet.load(scores, members, n);
    z.big = big;
    members.length = 0;
    return z;
  }

  /**
   * Records: sub-key = [score, 8 bytes ordered as the numbers][member], value = empty, or [1]
   * for a score of -0 (stored in the key as 0, its place in the order). All members, or the
   * logged changes (a changed score deletes the old record); clears the log.
   */
  storeRecords(w: ItemWriter, all: boolean): void {
    if (all) {
      for (let n = this.zsl.first(); n !== null; n = n.next[0]) w.put(sub(n.score, n.member), itemValue(n.score));
    } else if (this.changed !== null) {
      const dict = this.dict;
      for (const [m, disk] of this.changed) {
        const cur = dict.get(m);
        if (disk !== undefined && cur !== disk) w.del(sub(disk, m));
        if (cur !== undefined && !Object.is(cur, disk)) w.put(sub(cur, m), itemValue(cur));
      }
    }
    this.changed = null;
  }

  /** A skiplist-encoded set from its records (they come in zset order). */
  static loadRecords(size: number, items: Iterable<ItemRecord>): ZSet {
    const scores: number[] = [];
    const members: string[] = [];
    for (const { sub, value } of items) {
      const s = value.length > 0 && value[0] === 1 ? -0 : readOrderedScore(sub);
      scores.push(s);
      members.push(sub.latin1Slice(8, sub.length));
    }
    if (members.length !== size) console.warn(`persistence: a sorted set has ${members.length} member records, its metadata says ${size}`);
    const z = ZSet.load(scores, members);
    z.big = true;
    return z;
  }

  /** A set from pairs, in zset order when they come from disk (else inserted one by one). */
  private static load(scores: ArrayLike<number>, members: string[], n = members.length): ZSet {
    const z = new ZSet();
    const dict = z.dict;
    // Long members are keyed by a prefix and a hash on disk: their order may be off.
    if (!z.zsl.loadSorted(scores, members, n)) {
      for (let i = 0; i < n; i++) z.zsl.insert(scores[i], members[i]);
    }
    for (let i = 0; i < n; i++) dict.set(members[i], scores[i]);
    return z;
  }
}

/** Scratch of loadWhole (values are decoded one at a time). */
let loadScores = new Float64Array(256);
const loadMembers: string[] = [];

const NEG_ZERO = Buffer.from([1]);

function itemValue(score: number): Buffer {
  return Object.is(score, -0) ? NEG_ZERO : EMPTY;
}

/** Sub-key [ordered score][member] in the shared scratch (the store copies it at once). */
function sub(score: number, member: string): Buffer {
  const pk = subScratch.reset(8 + member.length);
  const b = pk.buf;
  // IEEE 754 bits, big-endian, made to sort as the numbers: negative ones have every bit
  // flipped, the others only the sign bit. -0 is written as 0 (equal scores sort by member).
  b.writeDoubleBE(score === 0 ? 0 : score, 0);
  if (b[0] & 0x80) {
    for (let i = 0; i < 8; i++) b[i] ^= 0xff;
  } else {
    b[0] ^= 0x80;
  }
  pk.pos = 8;
  pk.raw(member);
  return pk.view();
}

const scoreBuf = Buffer.allocUnsafe(8);

function readOrderedScore(k: Buffer): number {
  const b = scoreBuf;
  k.copy(b, 0, 0, 8);
  if (b[0] & 0x80) {
    b[0] ^= 0x80;
  } else {
    for (let i = 0; i < 8; i++) b[i] ^= 0xff;
  }
  return b.readDoubleBE(0);
}

/** How sorted sets are persisted (registered in BUILTIN_CODECS, src/store/codec.ts). */
export const zsetCodec: CollectionCodec<ZSet> = {
  type: T.ZSET,
  encodeWhole: (z) => z.storeWhole(),
  size: (z) => z.size,
  writeRecords: (z, w, all) => z.storeRecords(w, all),
  decodeWhole: (b) => ZSet.loadWhole(b),
  loadRecords: (_header, size, items) => ZSet.loadRecords(size, items),
};
