/**
 * Stream: the stream type (Redis 7.0's t_stream.c data model). This class owns every mutation
 * of a stream — entries, the counters XINFO reports, consumer groups, consumers and pending
 * entries lists (persistence hooks a per-entry change log here).
 *
 * Entries are kept the way Redis keeps them, so that everything Redis derives from its layout
 * comes out the same:
 *
 *  - They live in nodes (Redis's listpack "macro nodes" in a radix tree), each keyed by the id
 *    of the entry that opened it (its master entry). XADD appends to the last node until the
 *    node's listpack would reach stream-node-max-bytes or it holds stream-node-max-entries
 *    entries (live and deleted). The listpack size is modelled byte for byte (listpack element
 *    encodings), so node boundaries — and with them approximate (`~`) trimming, LIMIT and
 *    XINFO's radix-tree-keys — match Redis.
 *  - XDEL and exact trimming mark entries deleted in place (tombstones: the node keeps their
 *    id, fields and values, as Redis's listpack does); a node goes when its last live entry is deleted, or whole when trimmed.
 *  - radix-tree-nodes is the node count of the radix tree over the 16-byte big-endian node
 *    keys, computed in its compressed form (see raxNodes()).
 *
 * Lookups are O(log n): binary search over node keys, then within the node. Appends are
 * amortised O(1).
 *
 * Ids (64-bit ms, 64-bit seq) are 8-character strings, 16 bits per character, big-endian:
 * plain string comparison orders them and they key Maps directly (pending entries lists).
 * Counters that Redis keeps as 64-bit integers and that users can set (entries-added,
 * entries-read, delivery counts) are bigints where they can exceed 2^53.
 *
 * Persistence (src/store/stream-codec.ts): a big stream is stored one record per entry plus
 * records for groups, consumers and pending entries. While `sid !== 0` every mutation logs
 * what it changed in `Stream.log` (entry ids, groups, consumer names, pending ids); the store
 * writes those records and clears the log. A tombstone keeps its record (see "entry
 * records"), so that node sizes, node boundaries and DUMP bytes survive.
 */
import { T, type TypedValue } from '../db.js';

// ---------------------------------------------------------------- ids

export type StreamId = string;

const P16 = 0x10000;
const P32 = 0x100000000;
const P48 = 0x1000000000000;
export const U64_MAX = 0xffffffffffffffffn;
const MAX_SAFE_BIG = BigInt(Number.MAX_SAFE_INTEGER);

export const ID_MIN: StreamId = '\0\0\0\0\0\0\0\0';
export const ID_MAX: StreamId = '\uffff\uffff\uffff\uffff\uffff\uffff\uffff\uffff';

function units(n: bigint): [number, number, number, number] {
  return [Number((n >> 48n) & 0xffffn), Number((n >> 32n) & 0xffffn), Number((n >> 16n) & 0xffffn), Number(n & 0xffffn)];
}

/** The id ms-seq (both unsigned 64-bit). */
export function makeId(ms: bigint, seq: bigint): StreamId {
  const a = units(ms);
  const b = units(seq);
  return String.fromCharCode(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]);
}

/** makeId() for two safe non-negative integers (the common case: no bigint work). */
export function makeIdNum(ms: number, seq: number): StreamId {
  const mh = Math.floor(ms / P32);
  const ml = ms - mh * P32;
  const sh = Math.floor(seq / P32);
  const sl = seq - sh * P32;
  return String.fromCharCode(mh >>> 16, mh & 0xffff, ml >>> 16, ml & 0xffff, sh >>> 16, sh & 0xffff, sl >>> 16, sl & 0xffff);
}

/** The 64-bit half at `o` (0 = ms, 4 = seq) as a number when exact, else -1. */
function halfNum(id: StreamId, o: number): number {
  const a = id.charCodeAt(o);
  if (a >= 32) return -1;
  return a * P48 + id.charCodeAt(o + 1) * P32 + id.charCodeAt(o + 2) * P16 + id.charCodeAt(o + 3);
}

function halfBig(id: StreamId, o: number): bigint {
  return (BigInt(id.charCodeAt(o)) << 48n) | (BigInt(id.charCodeAt(o + 1)) << 32n)
    | (BigInt(id.charCodeAt(o + 2)) << 16n) | BigInt(id.charCodeAt(o + 3));
}

export function idMs(id: StreamId): bigint {
  return halfBig(id, 0);
}

export function idSeq(id: StreamId): bigint {
  return halfBig(id, 4);
}

function halfText(id: StreamId, o: number): string {
  const n = halfNum(id, o);
  return n >= 0 ? String(n) : halfBig(id, o).toString();
}

/** "<ms>-<seq>", as Redis prints ids. */
export function formatId(id: StreamId): string {
  return halfText(id, 0) + '-' + halfText(id, 4);
}

/** The next id (streamIncrID); null when `id` is the last possible one. */
export function idIncr(id: StreamId): StreamId | null {
  const c7 = id.charCodeAt(7);
  if (c7 !== 0xffff) {
    // perf: one flat string (XADD's "*" within a millisecond), not slices and a cons string.
    return String.fromCharCode(id.charCodeAt(0), id.charCodeAt(1), id.charCodeAt(2), id.charCodeAt(3),
      id.charCodeAt(4), id.charCodeAt(5), id.charCodeAt(6), c7 + 1);
  }
  for (let i = 6; i >= 0; i--) {
    const c = id.charCodeAt(i);
    if (c !== 0xffff) return id.slice(0, i) + String.fromCharCode(c + 1) + ID_MIN.slice(i + 1);
  }
  return null;
}

/** The previous id (streamDecrID); null when `id` is 0-0. */
export function idDecr(id: StreamId): StreamId | null {
  for (let i = 7; i >= 0; i--) {
    const c = id.charCodeAt(i);
    if (c !== 0) return id.slice(0, i) + String.fromCharCode(c - 1) + ID_MAX.slice(i + 1);
  }
  return null;
}

/** Same ms part. */
export function sameMs(a: StreamId, b: StreamId): boolean {
  return a.charCodeAt(0) === b.charCodeAt(0) && a.charCodeAt(1) === b.charCodeAt(1)
    && a.charCodeAt(2) === b.charCodeAt(2) && a.charCodeAt(3) === b.charCodeAt(3);
}

/** Whether the seq part is UINT64_MAX. */
export function seqIsMax(id: StreamId): boolean {
  return id.endsWith('\uffff\uffff\uffff\uffff');
}

// ---------------------------------------------------------------- listpack size model

/** Bytes of a listpack element's back-length field for an encoding of `l` bytes. */
function backlenSize(l: number): number {
  return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

/** Bytes of a listpack integer element (encoding + back-length). */
function intElemSize(v: number): number {
  if (v >= 0 && v <= 127) return 2;
  if (v >= -4096 && v <= 4095) return 3;
  if (v >= -32768 && v <= 32767) return 4;
  if (v >= -8388608 && v <= 8388607) return 5;
  if (v >= -2147483648 && v <= 2147483647) return 6;
  return 10;
}

function intElemSizeBig(v: bigint): number {
  return v >= -2147483648n && v <= 2147483647n ? intElemSize(Number(v)) : 10;
}

const INT64_MAX_TEXT = '9223372036854775807';
const INT64_MIN_TEXT = '9223372036854775808';

/**
 * Bytes of a listpack element holding b[s, s + n): integer-encoded when lpStringToInt64
 * accepts it (canonical decimal within int64), else a string element.
 */
export function strElemSizeAt(b: Buffer, s: number, n: number): number {
  if (n > 0 && n < 21) {
    const e = s + n;
    let p = s;
    const neg = b[s] === 0x2d;
    if (neg) p++;
    const digits = e - p;
    let ok = digits > 0;
    if (ok) {
      if (b[p] === 0x30) ok = n === 1; // "0" only: no leading zeros, no "-0"
      else if (b[p] < 0x31 || b[p] > 0x39) ok = false;
      for (let i = p + 1; ok && i < e; i++) if (b[i] < 0x30 || b[i] > 0x39) ok = false;
    }
    if (ok) {
      if (digits <= 15) {
        let v = 0;
        for (let i = p; i < e; i++) v = v * 10 + (b[i] - 0x30);
        return intElemSize(neg ? -v : v);
      }
      if (digits < 19) return 10;
      if (digits === 19) {
        const t = b.latin1Slice(p, e);
        if (t <= (neg ? INT64_MIN_TEXT : INT64_MAX_TEXT)) return 10;
      }
    }
  }
  const enc = n <= 63 ? 1 + n : n <= 4095 ? 2 + n : 5 + n;
  return enc + backlenSize(enc);
}

/** Size of the signed 64-bit difference a - b of two id halves (ms at 0, seq at 4). */
function deltaSize(a: StreamId, b: StreamId, o: number): number {
  // perf: ids of one node mostly share the top 32 bits of each half; the difference of the
  // rest is a small integer, where halfNum() would box two ms timestamps.
  if (a.charCodeAt(o) === b.charCodeAt(o) && a.charCodeAt(o + 1) === b.charCodeAt(o + 1)) {
    return intElemSize((a.charCodeAt(o + 2) - b.charCodeAt(o + 2)) * P16 + a.charCodeAt(o + 3) - b.charCodeAt(o + 3));
  }
  const x = halfNum(a, o);
  const y = halfNum(b, o);
  if (x >= 0 && y >= 0) return intElemSize(x - y);
  return intElemSizeBig(BigInt.asIntN(64, halfBig(a, o) - halfBig(b, o)));
}

/** Listpacks never grow past 1 GiB (STREAM_LISTPACK_MAX_SIZE). */
export const LISTPACK_MAX_SIZE = 1 << 30;

/** Modelled bytes of a new node before its first entry: header, master fields, terminator. */
export function nodeHeaderBytes(fields: readonly Buffer[]): number {
  let fixed = 7 + intElemSize(fields.length) + 2;
  for (const f of fields) fixed += strElemSizeAt(f, 0, f.length);
  return fixed;
}

/**
 * Modelled listpack bytes of a SAMEFIELDS entry `id` of `node` whose values are all empty
 * (an empty string element is 2 bytes).
 */
export function emptyEntryBytes(node: StreamNode, id: StreamId): number {
  const nf = node.masterFields.length;
  return 2 + deltaSize(id, node.master, 0) + deltaSize(id, node.master, 4) + 2 * nf + intElemSize(nf + 3);
}

export interface StreamLimits {
  /** stream-node-max-bytes (0 = no limit below LISTPACK_MAX_SIZE) */
  readonly maxBytes: number;
  /** stream-node-max-entries (0 = no limit) */
  readonly maxEntries: number;
}

// ---------------------------------------------------------------- entry records

/*
 * An entry's fields and values are packed into its node's arena (`StreamNode.data`) as one
 * record: a varint header h, then elements as [varint length][bytes]. With h & 1 the entry
 * has its node's master fields (Redis's SAMEFIELDS flag) and h >> 1 values follow; without,
 * h >> 1 fields follow, each with its value. perf: an entry used to be an Array of Buffers
 * (~100 bytes of heap per element), which the young generation's GC copied and then promoted
 * (BullMQ: ~1 KB per job, kept until MAXLEN ~ trims the node); now it is bytes in an arena
 * the node owns, and one number.
 */

/** Read cursor of rdv() (module state: no reader here calls out while it is in use). */
let rp = 0;

/** The elements of the record StreamNode.rawRecord() read last: data[from, to). */
export const recordSpan = { from: 0, to: 0 };

/** The varint at rp (LEB128, lengths < 2^31); advances rp. */
function rdv(d: Buffer): number {
  let b = d[rp++];
  if (b < 128) return b;
  let v = b & 127;
  let m = 128;
  do {
    b = d[rp++];
    v += (b & 127) * m;
    m *= 128;
  } while (b >= 128);
  return v;
}

/** Whether src[s, s + n) holds the bytes of b (perf: fields are a few bytes; no native call). */
function bytesEqual(src: Buffer, s: number, n: number, b: Buffer): boolean {
  if (n !== b.length) return false;
  if (n > 32) return src.compare(b, 0, n, s, s + n) === 0;
  for (let k = 0; k < n; k++) if (src[s + k] !== b[k]) return false;
  return true;
}

const NO_DATA = Buffer.alloc(0);
const NO_IDS = new Uint32Array(0);
const NO_AT = new Int32Array(0);

/** Where a reply of an entry's elements goes (a ReplySink). */
export interface ElemSink {
  array(n: number): void;
  bulk(b: Buffer): void;
  bulkBytes(b: Buffer, s: number, e: number): void;
}

// ---------------------------------------------------------------- nodes

/** One macro node: the entries of one Redis listpack. */
/**
 * The id of the entry a node is given next, as four 32-bit words (ms high/low, seq high/low):
 * set from an id string, or by XADD `*` from numbers (perf: no id string per XADD).
 */
const NEXT_ID = new Uint32Array(4);

function setNextId(id: StreamId): void {
  NEXT_ID[0] = id.charCodeAt(0) * P16 + id.charCodeAt(1);
  NEXT_ID[1] = id.charCodeAt(2) * P16 + id.charCodeAt(3);
  NEXT_ID[2] = id.charCodeAt(4) * P16 + id.charCodeAt(5);
  NEXT_ID[3] = id.charCodeAt(6) * P16 + id.charCodeAt(7);
}

/** deltaSize() of one half given as words (hi, lo) against the master's (mhi, mlo). */
function deltaSizeW(hi: number, lo: number, mhi: number, mlo: number): number {
  if (hi === mhi) return intElemSize(lo - mlo);
  if (hi < 0x200000 && mhi < 0x200000) return intElemSize((hi - mhi) * P32 + lo - mlo);
  return intElemSizeBig(BigInt.asIntN(64, ((BigInt(hi) << 32n) | BigInt(lo)) - ((BigInt(mhi) << 32n) | BigInt(mlo))));
}

export class StreamNode {
  /**
   * Entry ids in order, tombstones included: four 32-bit words each (the ms half's high and low
   * words, then the seq half's), read through id(i), cmpId() and count. perf: an id was an
   * 8-char string per entry (~36 bytes with its array slot, promoted with the node: BullMQ's
   * events stream kept 4 per job until MAXLEN ~ trimmed them); now 16 bytes off the heap.
   */
  private iw: Uint32Array = NO_IDS;
  /** Entries in the node, tombstones included. */
  count = 0;
  /** The most entries this node takes (stream-node-max-entries when it opened; 0 = unknown). */
  idCap = 0;
  /**
   * Per entry, where its record starts in `data`; -1 - start for a tombstone. (Shares one
   * ArrayBuffer with the id words: perf, an Array here was regrown and promoted with the node.)
   */
  at: Int32Array = NO_AT;
  /** The records (see "entry records"); bytes from `used` on are free room for appends. */
  data: Buffer = NO_DATA;
  used = 0;
  live = 0;
  dead = 0;
  /** Modelled listpack size without the live/deleted counter elements. */
  fixed = 0;
  /**
   * Ids ascend physically. Live entries always do; a tombstone can exceed later entries once
   * XSETID moved the last id below it (7.0 does not check max-deleted-entry-id), and then
   * searches scan the node in physical order as Redis's iterator does.
   */
  sorted = true;
  /**
   * Tombstones read from a data dir written before tombstones kept their contents: their
   * listpack bytes by index (their records are empty). Every other tombstone keeps its
   * record, as Redis keeps it in the listpack until the node goes (DUMP and RDB write it).
   */
  tombSizes: Map<number, number> | null = null;
  /** The master id's four words (frameBytes() takes deltas from them). */
  private readonly m0: number;
  private readonly m1: number;
  private readonly m2: number;
  private readonly m3: number;

  constructor(
    /** Id of the master entry: the radix tree key. */
    readonly master: StreamId,
    /** The master entry's fields (the first entry's fields). */
    readonly masterFields: Buffer[],
  ) {
    this.m0 = master.charCodeAt(0) * P16 + master.charCodeAt(1);
    this.m1 = master.charCodeAt(2) * P16 + master.charCodeAt(3);
    this.m2 = master.charCodeAt(4) * P16 + master.charCodeAt(5);
    this.m3 = master.charCodeAt(6) * P16 + master.charCodeAt(7);
  }

  /** Word k (0-3: ms high, ms low, seq high, seq low) of entry i's id. */
  idWord(i: number, k: number): number {
    return this.iw[4 * i + k];
  }

  /** Entry i's id compared with NEXT_ID: negative, 0 or positive. */
  private cmpNext(i: number): number {
    const w = this.iw;
    const o = 4 * i;
    for (let k = 0; k < 4; k++) {
      const a = w[o + k];
      const b = NEXT_ID[k];
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  }

  /** Whether NEXT_ID is below the last entry's id (an append that makes the node unsorted). */
  nextBelowLast(): boolean {
    return this.count > 0 && this.cmpNext(this.count - 1) > 0;
  }

  /** Id of entry i (a string made on each call). */
  id(i: number): StreamId {
    const w = this.iw;
    const o = 4 * i;
    const a = w[o];
    const b = w[o + 1];
    const c = w[o + 2];
    const d = w[o + 3];
    return String.fromCharCode(a >>> 16, a & 0xffff, b >>> 16, b & 0xffff, c >>> 16, c & 0xffff, d >>> 16, d & 0xffff);
  }

  /** Half h (0 = ms, 1 = seq) of entry i's id as a number when below 2^53, else -1. */
  idHalf(i: number, h: number): number {
    const o = 4 * i + 2 * h;
    const hi = this.iw[o];
    return hi < 0x200000 ? hi * P32 + this.iw[o + 1] : -1;
  }

  /** Entry i's id compared with `id`: negative, 0 or positive (the order of the id strings). */
  cmpId(i: number, id: StreamId): number {
    const w = this.iw;
    const o = 4 * i;
    for (let k = 0; k < 4; k++) {
      const a = w[o + k];
      const b = id.charCodeAt(2 * k) * P16 + id.charCodeAt(2 * k + 1);
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  }

  /** Append entry NEXT_ID whose record starts at `a` (-1 - start for a tombstone). */
  private pushEntry(a: number): void {
    const i = this.count;
    if (i === this.at.length) this.grow();
    const w = this.iw;
    const o = 4 * i;
    w[o] = NEXT_ID[0];
    w[o + 1] = NEXT_ID[1];
    w[o + 2] = NEXT_ID[2];
    w[o + 3] = NEXT_ID[3];
    this.at[i] = a;
    this.count = i + 1;
  }

  /**
   * Room for more entries: 4, then x4 up to the node's entry limit (BullMQ's nodes of 100:
   * three allocations, none left to trim); seal() trims what is left over.
   */
  private grow(): void {
    let cap = Math.max(4, 4 * this.count);
    if (this.idCap > 0 && cap > this.idCap && this.idCap > this.count) cap = this.idCap;
    this.resize(cap);
  }

  /** Id words and record starts in one new ArrayBuffer of `cap` entries (>= count). */
  private resize(cap: number): void {
    const b = new ArrayBuffer(20 * cap);
    const w = new Uint32Array(b, 0, 4 * cap);
    const at = new Int32Array(b, 16 * cap, cap);
    w.set(this.iw.subarray(0, 4 * this.count));
    at.set(this.at.subarray(0, this.count));
    this.iw = w;
    this.at = at;
  }

  /** lpBytes() of the listpack this node models. */
  get bytes(): number {
    return this.fixed + intElemSize(this.live) + intElemSize(this.dead);
  }

  /** Whether entry i is live (not a tombstone). */
  isLive(i: number): boolean {
    return this.at[i] >= 0;
  }

  /** Mark live entry i deleted in place (a tombstone keeping its record). */
  kill(i: number): void {
    this.at[i] = -1 - this.at[i];
  }

  private recordStart(i: number): number {
    const a = this.at[i];
    return a >= 0 ? a : -1 - a;
  }

  /**
   * Room for n more bytes. The tail node's arena grows 4x from 256 bytes to 1 KB, then 2x (a
   * node of BullMQ events is ~2.5 KB: three allocations; Redis preallocates 4 KB per new
   * node), and seal() trims it when the next node opens.
   */
  private reserve(n: number): void {
    const need = this.used + n;
    if (need <= this.data.length) return;
    const len = this.data.length;
    const d = Buffer.allocUnsafeSlow(Math.max(need, len < 1024 ? 4 * len : 2 * len, 256));
    this.data.copy(d, 0, 0, this.used);
    this.data = d;
  }

  private putVarint(v: number): void {
    const d = this.data;
    let p = this.used;
    while (v >= 128) {
      d[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    d[p++] = v;
    this.used = p;
  }

  /** Append src[s, s + n) as an element; returns its modelled listpack bytes. */
  private putElem(src: Buffer, s: number, n: number): number {
    this.putVarint(n);
    const d = this.data;
    let p = this.used;
    // (Buffer#copy of part of a Buffer allocates a view: a JS loop up to 64 bytes.)
    if (n > 64) src.copy(d, p, s, s + n);
    else for (let k = 0; k < n; k++) d[p + k] = src[s + k];
    this.used = p + n;
    return strElemSizeAt(src, s, n);
  }

  /**
   * The record just written at `start` becomes entry NEXT_ID (a tombstone when `dead`): nf
   * fields, `same` as the master's, `elems` the modelled bytes of its written elements.
   */
  private added(start: number, dead: boolean, nf: number, same: boolean, elems: number): void {
    this.pushEntry(dead ? -1 - start : start);
    if (dead) this.dead++;
    else this.live++;
    this.fixed += this.frameBytes(this.count - 1, nf, same) + elems;
  }

  /** Modelled bytes of entry i's listpack elements other than its fields and values. */
  private frameBytes(i: number, nf: number, same: boolean): number {
    // flags, ms and seq deltas, [num-fields], lp-count.
    const w = this.iw;
    const o = 4 * i;
    const bytes = 2 + deltaSizeW(w[o], w[o + 1], this.m0, this.m1) + deltaSizeW(w[o + 2], w[o + 3], this.m2, this.m3)
      + intElemSize(same ? nf + 3 : 2 * nf + 4);
    return same ? bytes : bytes + intElemSize(nf);
  }

  /** Append entry `id` with fields and values `fv` (a tombstone when `dead`). */
  push(id: StreamId, fv: readonly Buffer[], dead: boolean): void {
    setNextId(id);
    const nf = fv.length >> 1;
    const mf = this.masterFields;
    let same = mf.length === nf;
    for (let k = 0; same && k < nf; k++) if (mf[k] !== fv[2 * k] && !mf[k].equals(fv[2 * k])) same = false;
    let room = 5;
    for (const b of fv) room += 5 + b.length;
    this.reserve(room);
    const start = this.used;
    this.putVarint(2 * nf + (same ? 1 : 0));
    let elems = 0;
    for (let k = same ? 1 : 0; k < fv.length; k += same ? 2 : 1) elems += this.putElem(fv[k], 0, fv[k].length);
    this.added(start, dead, nf, same, elems);
  }

  /** Append live entry NEXT_ID whose fields and values are src[start[k], end[k]) for k in [from, to). */
  pushArgs(src: Buffer, start: ArrayLike<number>, end: ArrayLike<number>, from: number, to: number): void {
    const nf = (to - from) >> 1;
    const mf = this.masterFields;
    let same = mf.length === nf;
    for (let k = 0; same && k < nf; k++) {
      const s = start[from + 2 * k];
      if (!bytesEqual(src, s, end[from + 2 * k] - s, mf[k])) same = false;
    }
    let room = 5;
    for (let k = from; k < to; k++) room += 5 + end[k] - start[k];
    this.reserve(room);
    const at = this.used;
    this.putVarint(2 * nf + (same ? 1 : 0));
    let elems = 0;
    for (let k = same ? from + 1 : from; k < to; k += same ? 2 : 1) elems += this.putElem(src, start[k], end[k] - start[k]);
    this.added(at, false, nf, same, elems);
  }

  /** Append a tombstone of unknown contents that took `bytes` of its listpack. */
  pushSized(id: StreamId, bytes: number): void {
    (this.tombSizes ??= new Map()).set(this.count, bytes);
    this.reserve(1);
    const start = this.used;
    this.putVarint(0);
    setNextId(id);
    this.pushEntry(-1 - start);
    this.dead++;
    this.fixed += bytes;
  }

  /** The listpack bytes of tombstone i when its contents are unknown (pushSized), else undefined. */
  tombSize(i: number): number | undefined {
    return this.tombSizes?.get(i);
  }

  /** Modelled listpack bytes of entry i (its record read back; not for a pushSized tombstone). */
  entryBytes(i: number): number {
    const d = this.data;
    rp = this.recordStart(i);
    const h = rdv(d);
    const nf = h >>> 1;
    const same = (h & 1) === 1;
    let bytes = this.frameBytes(i, nf, same);
    for (let k = same ? nf : 2 * nf; k > 0; k--) {
      const n = rdv(d);
      bytes += strElemSizeAt(d, rp, n);
      rp += n;
    }
    return bytes;
  }

  /**
   * Fields and values of entry i, live or tombstone (null for a pushSized tombstone): views of
   * the arena (never written again) and the master's field Buffers.
   */
  contents(i: number): Buffer[] | null {
    if (this.tombSizes !== null && this.tombSizes.has(i)) return null;
    const d = this.data;
    rp = this.recordStart(i);
    const h = rdv(d);
    const nf = h >>> 1;
    const fv = new Array<Buffer>(2 * nf);
    const same = (h & 1) === 1;
    for (let k = 0; k < 2 * nf; k++) {
      if (same && (k & 1) === 0) {
        fv[k] = this.masterFields[k >> 1];
        continue;
      }
      const n = rdv(d);
      fv[k] = d.subarray(rp, rp + n);
      rp += n;
    }
    return fv;
  }

  /**
   * Entry i's record as it is, for the store (which writes its elements unchanged): returns the
   * record's header (2 * fields, + 1 when they are the master's and only values are kept) and
   * sets `recordSpan` to its elements' bytes in `data`; -1 for a pushSized tombstone. perf: no
   * Array and view per element, as contents() makes.
   */
  rawRecord(i: number): number {
    if (this.tombSizes !== null && this.tombSizes.has(i)) return -1;
    const d = this.data;
    rp = this.recordStart(i);
    const h = rdv(d);
    const from = rp;
    for (let k = (h & 1) === 1 ? h >>> 1 : h; k > 0; k--) {
      const n = rdv(d);
      rp += n;
    }
    recordSpan.from = from;
    recordSpan.to = rp;
    return h;
  }

  /** Fields and values of live entry i; null for a tombstone. */
  entry(i: number): Buffer[] | null {
    return this.at[i] >= 0 ? this.contents(i) : null;
  }

  /** Reply with entry i's fields and values (an array), written from the arena. */
  reply(i: number, out: ElemSink): void {
    const d = this.data;
    // perf: the cursor in a local (rdv() only for a length of two bytes or more).
    let p = this.recordStart(i);
    let h = d[p++];
    if (h >= 128) {
      rp = p - 1;
      h = rdv(d);
      p = rp;
    }
    const nf = h >>> 1;
    const same = (h & 1) === 1;
    const mf = this.masterFields;
    out.array(2 * nf);
    for (let k = 0; k < 2 * nf; k++) {
      if (same && (k & 1) === 0) {
        out.bulk(mf[k >> 1]);
        continue;
      }
      let n = d[p++];
      if (n >= 128) {
        rp = p - 1;
        n = rdv(d);
        p = rp;
      }
      out.bulkBytes(d, p, p + n);
      p += n;
    }
  }

  /** Trim the arena to its records (a node that takes no more appends). */
  seal(): void {
    if (this.at.length > this.count) this.resize(this.count);
    if (this.data.length === this.used) return;
    const d = Buffer.allocUnsafeSlow(this.used);
    this.data.copy(d, 0, 0, this.used);
    this.data = d;
  }

  /** Index where a forward scan for ids >= `id` may start. */
  scanFrom(id: StreamId): number {
    return this.sorted ? this.lowerBound(id) : 0;
  }

  /** Index where a backward scan for ids <= `id` may start. */
  scanBackFrom(id: StreamId): number {
    if (!this.sorted) return this.count - 1;
    const i = this.lowerBound(id);
    return i < this.count && this.cmpId(i, id) === 0 ? i : i - 1;
  }

  /** Index of the live entry `id`, or -1. */
  indexOf(id: StreamId): number {
    if (this.sorted) {
      const i = this.lowerBound(id);
      return i < this.count && this.at[i] >= 0 && this.cmpId(i, id) === 0 ? i : -1;
    }
    // Redis's seek: the first live entry >= id in physical order must be id itself.
    for (let i = 0; i < this.count; i++) {
      if (this.at[i] < 0) continue;
      const c = this.cmpId(i, id);
      if (c >= 0) return c === 0 ? i : -1;
    }
    return -1;
  }

  /** Index of the first entry with id >= `id` (count when none); sorted nodes only. */
  lowerBound(id: StreamId): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cmpId(mid, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  clone(): StreamNode {
    const n = new StreamNode(this.master, this.masterFields);
    n.count = this.count;
    n.resize(this.count);
    n.iw.set(this.iw.subarray(0, 4 * this.count));
    n.at.set(this.at.subarray(0, this.count));
    // A copy of the records: the clone's appends must not write into this arena's free room.
    n.data = Buffer.allocUnsafeSlow(this.used);
    this.data.copy(n.data, 0, 0, this.used);
    n.used = this.used;
    n.live = this.live;
    n.dead = this.dead;
    n.fixed = this.fixed;
    n.sorted = this.sorted;
    if (this.tombSizes !== null) n.tombSizes = new Map(this.tombSizes);
    return n;
  }
}

// ---------------------------------------------------------------- ordered id maps (PELs)

const CHUNK = 256;

/** A Map keyed by stream id that also iterates in id order (chunked sorted key array). */
export class IdMap<V> {
  private readonly map = new Map<StreamId, V>();
  private chunks: StreamId[][] = [];

  get size(): number {
    return this.map.size;
  }

  get(id: StreamId): V | undefined {
    return this.map.get(id);
  }

  has(id: StreamId): boolean {
    return this.map.has(id);
  }

  /** Index of the first chunk whose last key is >= id (chunks.length when none). */
  private chunkFor(id: StreamId): number {
    const ch = this.chunks;
    let lo = 0;
    let hi = ch.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = ch[mid];
      if (c[c.length - 1] < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  set(id: StreamId, v: V): void {
    if (this.map.has(id)) {
      this.map.set(id, v);
      return;
    }
    this.map.set(id, v);
    const ch = this.chunks;
    if (ch.length === 0) {
      ch.push([id]);
      return;
    }
    let ci = this.chunkFor(id);
    if (ci === ch.length) ci--;
    const c = ch[ci];
    if (c[c.length - 1] < id) c.push(id);
    else c.splice(lowerBound(c, id), 0, id);
    if (c.length > 2 * CHUNK) ch.splice(ci + 1, 0, c.splice(CHUNK));
  }

  delete(id: StreamId): boolean {
    if (!this.map.delete(id)) return false;
    const ci = this.chunkFor(id);
    const c = this.chunks[ci];
    c.splice(lowerBound(c, id), 1);
    if (c.length === 0) this.chunks.splice(ci, 1);
    return true;
  }

  first(): StreamId | undefined {
    return this.chunks.length === 0 ? undefined : this.chunks[0][0];
  }

  last(): StreamId | undefined {
    const ch = this.chunks;
    if (ch.length === 0) return undefined;
    const c = ch[ch.length - 1];
    return c[c.length - 1];
  }

  /** The smallest key >= id. */
  ceil(id: StreamId): StreamId | undefined {
    const ci = this.chunkFor(id);
    if (ci === this.chunks.length) return undefined;
    const c = this.chunks[ci];
    return c[lowerBound(c, id)];
  }

  /** The smallest key > id. */
  higher(id: StreamId): StreamId | undefined {
    const ci = this.chunkFor(id);
    if (ci === this.chunks.length) return undefined;
    const c = this.chunks[ci];
    let i = lowerBound(c, id);
    if (i < c.length && c[i] === id) i++;
    if (i < c.length) return c[i];
    return ci + 1 < this.chunks.length ? this.chunks[ci + 1][0] : undefined;
  }

  /** Every key in order (a snapshot). */
  keys(): StreamId[] {
    const out: StreamId[] = [];
    for (const c of this.chunks) for (const k of c) out.push(k);
    return out;
  }
}

function lowerBound(a: readonly string[], k: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// ---------------------------------------------------------------- consumer groups

/** A pending entry (Redis's streamNACK), shared by the group PEL and its consumer's PEL. */
export interface Nack {
  consumer: Consumer;
  /** Last delivery time (ms). */
  deliveryTime: number;
  /** Deliveries so far; a bigint only when RETRYCOUNT set it beyond 2^53. */
  deliveryCount: number | bigint;
}

export class Consumer {
  readonly pel = new IdMap<Nack>();
  /** Last time the consumer was seen by a read or claim (ms). */
  seenTime: number;
  constructor(readonly name: string, now: number) {
    this.seenTime = now;
  }
}

/** entries-read when unknown (SCG_INVALID_ENTRIES_READ). */
export const ENTRIES_READ_INVALID = -1n;

/** What changed in a stream since the store last wrote its records (see the header comment). */
export class StreamLog {
  /** Entries deleted or turned into tombstones (and appended ones when their node went). */
  readonly entries = new Set<StreamId>();
  /**
   * Entries appended: entry `tailFrom` of `tail` onward, and every entry of the nodes after
   * `tail` (appends go to the last node or a new last one). perf: an id string and a Set entry
   * per XADD before. When `tail` goes, what followed it is moved into `entries` (logNodeGone).
   */
  tail: StreamNode | null = null;
  tailFrom = 0;
  /** Groups created, destroyed, or whose last-delivered-id / entries-read changed. */
  readonly groups = new Set<ConsumerGroup>();
  /** Consumers created, deleted or seen, by name, per group. */
  readonly consumers = new Map<ConsumerGroup, Set<string>>();
  /** Pending entries added, removed or changed (owner, delivery time or count), per group. */
  readonly pel = new Map<ConsumerGroup, Set<StreamId>>();
}

export class ConsumerGroup {
  readonly pel = new IdMap<Nack>();
  /** Consumers by name (latin1); iterate with sortedConsumers() for Redis's order. */
  readonly consumers = new Map<string, Consumer>();
  /** Number of the group within its stream, keying its records on disk (Stream.gidSeq). */
  gid = 0;
  constructor(
    /** The stream the group belongs to (its change log). */
    readonly stream: Stream,
    readonly name: string,
    /** last-delivered-id */
    public lastId: StreamId,
    /** entries-read, or ENTRIES_READ_INVALID. */
    public entriesRead: bigint,
  ) {}

  // Change log (only while the stream's records are on disk).
  logGroup(): void {
    this.stream.changes()?.groups.add(this);
  }

  logConsumer(name: string): void {
    const l = this.stream.changes();
    if (l === null) return;
    let s = l.consumers.get(this);
    if (s === undefined) l.consumers.set(this, (s = new Set()));
    s.add(name);
  }

  logPending(id: StreamId): void {
    const l = this.stream.changes();
    if (l === null) return;
    let s = l.pel.get(this);
    if (s === undefined) l.pel.set(this, (s = new Set()));
    s.add(id);
  }

  /** Consumers in name order (the radix tree order Redis replies in). */
  sortedConsumers(): Consumer[] {
    return [...this.consumers.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** streamCreateConsumer: null when it exists already. */
  createConsumer(name: string, now: number): Consumer | null {
    if (this.consumers.has(name)) return null;
    const c = new Consumer(name, now);
    this.consumers.set(name, c);
    this.logConsumer(name);
    return c;
  }

  /** Look a consumer up, creating it when missing; refreshes its seen time. */
  touchConsumer(name: string, now: number): Consumer {
    let c = this.consumers.get(name);
    if (c === undefined) {
      c = new Consumer(name, now);
      this.consumers.set(name, c);
    }
    c.seenTime = now;
    this.logConsumer(name);
    return c;
  }

  /** streamDelConsumer: drop the consumer and its pending entries. Returns the count dropped. */
  deleteConsumer(c: Consumer): number {
    const n = c.pel.size;
    for (const id of c.pel.keys()) {
      this.pel.delete(id);
      this.logPending(id);
    }
    this.consumers.delete(c.name);
    this.logConsumer(c.name);
    return n;
  }

  /** XACK one id: true when it was pending. */
  ack(id: StreamId): boolean {
    const nack = this.pel.get(id);
    if (nack === undefined) return false;
    this.pel.delete(id);
    nack.consumer.pel.delete(id);
    this.logPending(id);
    return true;
  }

  /** Move a pending entry to `to` (no-op when it is already there). */
  private reassign(id: StreamId, nack: Nack, to: Consumer): void {
    if (nack.consumer === to) return;
    nack.consumer.pel.delete(id);
    nack.consumer = to;
    to.pel.set(id, nack);
  }

  /** XCLAIM FORCE of an id with no pending entry: create one owned by `to`. */
  forceClaim(id: StreamId, to: Consumer, now: number): Nack {
    // streamCreateNACK: delivered once, now (claim() then applies XCLAIM's own rules).
    const nack: Nack = { consumer: to, deliveryTime: now, deliveryCount: 1 };
    this.pel.set(id, nack);
    to.pel.set(id, nack);
    this.logPending(id);
    return nack;
  }

  /**
   * XCLAIM/XAUTOCLAIM of a pending entry: new owner, delivery time, and the delivery count
   * set to `retry` (>= 0) or incremented unless `justId`.
   */
  claim(id: StreamId, nack: Nack, to: Consumer, time: number, retry: number | bigint, justId: boolean): void {
    this.reassign(id, nack, to);
    this.logPending(id);
    nack.deliveryTime = time;
    if (retry >= 0) nack.deliveryCount = retry;
    else if (!justId) nack.deliveryCount = incr(nack.deliveryCount);
  }

  /** Drop the pending entry of an id that no longer exists in the stream (XCLAIM/XAUTOCLAIM). */
  dropPending(id: StreamId): void {
    const nack = this.pel.get(id);
    if (nack === undefined) return;
    this.pel.delete(id);
    nack.consumer.pel.delete(id);
    this.logPending(id);
  }

  /** XREADGROUP history: the entry was delivered again. */
  redeliver(id: StreamId, nack: Nack, now: number): void {
    this.logPending(id);
    nack.deliveryTime = now;
    nack.deliveryCount = incr(nack.deliveryCount);
  }

  /** XGROUP SETID / XCLAIM LASTID. */
  setLastId(id: StreamId, entriesRead: bigint | null): void {
    this.lastId = id;
    if (entriesRead !== null) this.entriesRead = entriesRead;
    this.logGroup();
  }

  /** A copy of the group for `stream` (a copy of this group's stream). */
  clone(stream: Stream): ConsumerGroup {
    const g = new ConsumerGroup(stream, this.name, this.lastId, this.entriesRead);
    g.gid = this.gid;
    for (const c of this.consumers.values()) {
      const nc = new Consumer(c.name, c.seenTime);
      g.consumers.set(c.name, nc);
      for (const id of c.pel.keys()) {
        const n = c.pel.get(id)!;
        const nn: Nack = { consumer: nc, deliveryTime: n.deliveryTime, deliveryCount: n.deliveryCount };
        nc.pel.set(id, nn);
        g.pel.set(id, nn);
      }
    }
    return g;
  }
}

function incr(n: number | bigint): number | bigint {
  if (typeof n === 'bigint') return BigInt.asUintN(64, n + 1n);
  return n + 1 <= Number.MAX_SAFE_INTEGER ? n + 1 : BigInt(n) + 1n;
}

// ---------------------------------------------------------------- the stream

export const TRIM_MAXLEN = 1;
export const TRIM_MINID = 2;

export interface TrimSpec {
  readonly strategy: number; // TRIM_MAXLEN | TRIM_MINID
  readonly maxlen: number;
  readonly minid: StreamId;
  readonly approx: boolean;
  /** 0 = no limit. */
  readonly limit: number;
}

export class Stream implements TypedValue {
  readonly type = T.STREAM;
  /** Memory accounting (memory.ts): the charge, and the size and average (x16) it was sampled at. */
  mem = 0;
  memN = -1;
  memAvg = 0;
  /** Object id of the records on disk (src/store); 0 = none. Owned by the store. */
  sid = 0;
  /** Changes since the store last wrote the records (only while sid !== 0). */
  log: StreamLog | null = null;
  /** Last group number given (ConsumerGroup.gid). */
  gidSeq = 0;
  /** Nodes ordered by master id. */
  nodes: StreamNode[] = [];
  /** Live entries. */
  length = 0;
  /**
   * last-generated-id: the string, or null while only lastMs/lastSeq hold it (XADD `*` keeps
   * it as numbers: perf, no id string per XADD; the getter makes it when asked).
   */
  private lastStr: StreamId | null = ID_MIN;
  /** last-generated-id's halves while both are safe integers, else -1. */
  private lastMs = 0;
  private lastSeq = 0;

  get lastId(): StreamId {
    return this.lastStr ??= makeIdNum(this.lastMs, this.lastSeq);
  }

  set lastId(id: StreamId) {
    this.lastStr = id;
    const ms = halfNum(id, 0);
    const seq = halfNum(id, 4);
    this.lastMs = ms >= 0 && seq >= 0 ? ms : -1;
    this.lastSeq = ms >= 0 && seq >= 0 ? seq : -1;
  }

  /** recorded-first-entry-id */
  firstId: StreamId = ID_MIN;
  /** max-deleted-entry-id */
  maxDeletedId: StreamId = ID_MIN;
  /**
   * entries-added (uint64): a number while it is a safe integer (perf: XADD counts without
   * allocating a BigInt), else `addedBig`.
   */
  private added = 0;
  private addedBig: bigint | null = null;
  /** Consumer groups by name (latin1). */
  readonly groups = new Map<string, ConsumerGroup>();
  /**
   * Counts the changes that wake blocked readers (Redis's signalKeyAsReady: XADD, XGROUP
   * DESTROY); other changes (XDEL, SETID...) leave blocked clients waiting, as in Redis.
   */
  signals = 0;

  encoding(): string {
    return 'stream';
  }

  /** entries-added (uint64). */
  get entriesAdded(): bigint {
    return this.addedBig ?? BigInt(this.added);
  }

  set entriesAdded(v: bigint) {
    if (v >= 0n && v <= MAX_SAFE_BIG) {
      this.added = Number(v);
      this.addedBig = null;
    } else {
      this.addedBig = v;
    }
  }

  /** entries-added is 0. */
  private noneAdded(): boolean {
    return this.addedBig === null && this.added === 0;
  }

  clone(): Stream {
    const s = new Stream();
    s.nodes = this.nodes.map((n) => n.clone());
    s.length = this.length;
    s.lastId = this.lastId;
    s.firstId = this.firstId;
    s.maxDeletedId = this.maxDeletedId;
    s.entriesAdded = this.entriesAdded;
    s.gidSeq = this.gidSeq;
    for (const [k, g] of this.groups) s.groups.set(k, g.clone(s));
    return s;
  }

  /** The change log, or null while the store holds no records for this stream. */
  changes(): StreamLog | null {
    return this.sid === 0 ? null : (this.log ??= new StreamLog());
  }

  /** Log node n (still in `nodes`) as gone; the appended entries logged by it move into `entries`. */
  private logNodeGone(n: StreamNode): void {
    const l = this.changes();
    if (l === null) return;
    for (let i = 0; i < n.count; i++) l.entries.add(n.id(i));
    if (l.tail !== n) return;
    const nodes = this.nodes;
    for (let ni = nodes.indexOf(n) + 1; ni < nodes.length; ni++) {
      const m = nodes[ni];
      for (let i = 0; i < m.count; i++) l.entries.add(m.id(i));
    }
    l.tail = null;
  }

  /**
   * The node (and its index `ni`) and index of entry `id`, live or tombstone (a live one
   * first); null if absent. `hint`: a node index to try first (the store walks its change log
   * in id order: the previous answer's node).
   */
  locate(id: StreamId, hint = -1): { node: StreamNode; ni: number; index: number } | null {
    const ni = this.nodeFor(id, hint);
    if (ni < 0) return null;
    const n = this.nodes[ni];
    let found = -1;
    for (let i = n.scanFrom(id); i < n.count; i++) {
      if (n.cmpId(i, id) !== 0) {
        if (n.sorted) break;
        continue;
      }
      found = i;
      if (n.at[i] >= 0) break;
    }
    return found < 0 ? null : { node: n, ni, index: found };
  }

  /**
   * locate(id) where `prev`, an earlier answer the caller owns, is likely the entry just before
   * `id` (the store walks its log of appended ids in order): when the next entry of prev's node
   * is `id`, live, and that node is the one locate() would search, `prev` moved to it (no
   * search, no object); else locate(id) hinted with prev's node. (Live ids are unique, so
   * locate() would answer that entry.)
   */
  locateAfter(id: StreamId, prev: { node: StreamNode; ni: number; index: number } | null): { node: StreamNode; ni: number; index: number } | null {
    if (prev === null) return this.locate(id);
    const n = prev.node;
    const i = prev.index + 1;
    const ni = prev.ni;
    const nodes = this.nodes;
    if (i < n.count && nodes[ni] === n && n.at[i] >= 0 && n.cmpId(i, id) === 0 && n.master <= id &&
      (ni === nodes.length - 1 || id < nodes[ni + 1].master)) {
      prev.index = i;
      return prev;
    }
    return this.locate(id, ni);
  }

  // ------------------------------------------------ lookups

  /** Index of the node that would hold `id`: the last node whose master is <= id (-1 if none). */
  private nodeFor(id: StreamId, hint = -1): number {
    const nodes = this.nodes;
    let hi = nodes.length;
    // The ends and the hinted node first (masters ascend: appends open nodes above every
    // master, RDB loads check it). perf: the store's change log asks for the newest entries,
    // in order, and for those of trimmed head nodes; each string compare of the search costs
    // as much as one of these.
    if (hi === 0 || id < nodes[0].master) return -1;
    if (nodes[hi - 1].master <= id) return hi - 1;
    if (hint >= 0 && hint < hi - 1 && nodes[hint].master <= id && id < nodes[hint + 1].master) return hint;
    let lo = 0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (nodes[mid].master <= id) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /** The fields and values of a live entry, or null. */
  get(id: StreamId): Buffer[] | null {
    const ni = this.nodeFor(id);
    if (ni < 0) return null;
    const n = this.nodes[ni];
    const i = n.indexOf(id);
    return i < 0 ? null : n.contents(i);
  }

  /** forRangeAt() with each entry's fields and values (views of its node's arena). */
  forRange(start: StreamId, end: StreamId, rev: boolean, fn: (id: StreamId, fv: Buffer[]) => boolean): void {
    this.forRangeAt(start, end, rev, (id, n, i) => fn(id, n.contents(i)!));
  }

  /**
   * Visit live entries (entry i of node n) with start <= id <= end, ascending (or descending
   * when `rev`), until `fn` returns false. Like Redis's iterator: tombstones are skipped
   * before the range check, and the first live entry past the range ends the walk.
   */
  forRangeAt(start: StreamId, end: StreamId, rev: boolean, fn: (id: StreamId, n: StreamNode, i: number) => boolean): void {
    this.forRangeIdx(start, end, rev, (n, i) => fn(n.id(i), n, i));
  }

  /** forRangeAt() without the id strings (perf: replies write ids from the node's words). */
  forRangeIdx(start: StreamId, end: StreamId, rev: boolean, fn: (n: StreamNode, i: number) => boolean): void {
    const nodes = this.nodes;
    if (!rev) {
      let ni = Math.max(0, this.nodeFor(start));
      for (; ni < nodes.length; ni++) {
        const n = nodes[ni];
        for (let i = n.scanFrom(start); i < n.count; i++) {
          if (n.at[i] < 0 || n.cmpId(i, start) < 0) continue;
          if (n.cmpId(i, end) > 0 || !fn(n, i)) return;
        }
      }
    } else {
      let ni = end === ID_MIN ? nodes.length - 1 : this.nodeFor(end);
      if (ni < 0) ni = nodes.length - 1; // raxSeek("<=") found nothing: Redis starts from the last node
      for (; ni >= 0; ni--) {
        const n = nodes[ni];
        for (let i = n.scanBackFrom(end); i >= 0; i--) {
          if (n.at[i] < 0 || n.cmpId(i, end) > 0) continue;
          if (n.cmpId(i, start) < 0 || !fn(n, i)) return;
        }
      }
    }
  }

  /** First or last live entry id (streamGetEdgeID with tombstones skipped); null when empty. */
  edge(first: boolean): StreamId | null {
    let found: StreamId | null = null;
    this.forRangeAt(ID_MIN, ID_MAX, !first, (id) => {
      found = id;
      return false;
    });
    return found;
  }

  /** Id of the last live entry (streamLastValidID); 0-0 when empty. */
  lastValidId(): StreamId {
    return this.edge(false) ?? ID_MIN;
  }

  /** streamGetEdgeID(first, skip_tombstones=1): max id when nothing is found, as Redis. */
  private firstEdgeOrMax(): StreamId {
    return this.edge(true) ?? ID_MAX;
  }

  // ------------------------------------------------ ids

  /** streamNextID: the `*` id for the current time. */
  nextAutoId(nowMs: number): StreamId | null {
    // perf: the last ms read here, not by halfNum() (whose result was a boxed double per XADD).
    const last = this.lastId;
    const a = last.charCodeAt(0);
    if (a < 32 && nowMs > a * P48 + last.charCodeAt(1) * P32 + last.charCodeAt(2) * P16 + last.charCodeAt(3)) return makeIdNum(nowMs, 0);
    return idIncr(last);
  }

  // ------------------------------------------------ XADD

  /**
   * streamAppendItem for an id already validated (> lastId): fields and values `fv` (field,
   * value, field, value...), copied into the node.
   */
  append(id: StreamId, fv: readonly Buffer[], limits: StreamLimits): void {
    let totElemLen = 0;
    for (const b of fv) totElemLen += b.length;
    let node = this.tailFor(totElemLen, limits);
    if (node === null) {
      const fields: Buffer[] = [];
      for (let i = 0; i < fv.length; i += 2) fields.push(Buffer.from(fv[i]));
      node = this.openNode(id, fields, limits);
    }
    node.push(id, fv, false);
    if (node.count > 1 && node.cmpId(node.count - 2, id) > 0) node.sorted = false;
    this.appended(id);
  }

  /** append() of the fields and values src[start[k], end[k]) for k in [from, to) (XADD's arguments). */
  appendArgs(id: StreamId, src: Buffer, start: ArrayLike<number>, end: ArrayLike<number>, from: number, to: number,
    limits: StreamLimits): void {
    const node = this.argsTail(start, end, from, to, limits) ?? this.openArgsNode(id, src, start, end, from, to, limits);
    setNextId(id);
    if (node.nextBelowLast()) node.sorted = false;
    node.pushArgs(src, start, end, from, to);
    this.appended(id);
  }

  /**
   * XADD `*`: appendArgs() of streamNextID's id for the current time, made from numbers (perf:
   * no id string); false, with nothing done, when the last id is not held as safe numbers or
   * its seq is at 2^53 - 1 (then nextAutoId() and appendArgs()). lastMs/lastSeq() are the id.
   */
  appendAuto(nowMs: number, src: Buffer, start: ArrayLike<number>, end: ArrayLike<number>, from: number, to: number,
    limits: StreamLimits): boolean {
    let ms = this.lastMs;
    let seq = this.lastSeq;
    if (ms < 0 || seq >= Number.MAX_SAFE_INTEGER) return false;
    if (nowMs > ms) {
      ms = nowMs;
      seq = 0;
    } else {
      seq++;
    }
    const node = this.argsTail(start, end, from, to, limits)
      ?? this.openArgsNode(makeIdNum(ms, seq), src, start, end, from, to, limits);
    const mh = Math.floor(ms / P32);
    const sh = Math.floor(seq / P32);
    NEXT_ID[0] = mh;
    NEXT_ID[1] = ms - mh * P32;
    NEXT_ID[2] = sh;
    NEXT_ID[3] = seq - sh * P32;
    if (node.nextBelowLast()) node.sorted = false;
    node.pushArgs(src, start, end, from, to);
    this.lastStr = null;
    this.lastMs = ms;
    this.lastSeq = seq;
    this.counted(node);
    return true;
  }

  /** The last id's ms half while lastSeqNum() >= 0. */
  lastMsNum(): number {
    return this.lastMs;
  }

  /** The last id's seq half when both halves are safe integers, else -1. */
  lastSeqNum(): number {
    return this.lastSeq;
  }

  /** tailFor() of the entry whose fields and values are [start[k], end[k]) for k in [from, to). */
  private argsTail(start: ArrayLike<number>, end: ArrayLike<number>, from: number, to: number,
    limits: StreamLimits): StreamNode | null {
    let totElemLen = 0;
    for (let k = from; k < to; k++) totElemLen += end[k] - start[k];
    return this.tailFor(totElemLen, limits);
  }

  /** openNode() for entry `id` whose fields and values are src[start[k], end[k]) for k in [from, to). */
  private openArgsNode(id: StreamId, src: Buffer, start: ArrayLike<number>, end: ArrayLike<number>, from: number, to: number,
    limits: StreamLimits): StreamNode {
    const fields: Buffer[] = [];
    for (let k = from; k < to; k += 2) fields.push(Buffer.from(src.subarray(start[k], end[k])));
    return this.openNode(id, fields, limits);
  }

  /** The last node when an entry of `totElemLen` bytes fits in it, else null. */
  private tailFor(totElemLen: number, limits: StreamLimits): StreamNode | null {
    if (this.nodes.length === 0) return null;
    const node = this.nodes[this.nodes.length - 1];
    let maxBytes = limits.maxBytes;
    if (maxBytes === 0 || maxBytes > LISTPACK_MAX_SIZE) maxBytes = LISTPACK_MAX_SIZE;
    if (node.bytes + totElemLen >= maxBytes) return null;
    if (limits.maxEntries !== 0 && node.live + node.dead >= limits.maxEntries) return null;
    return node;
  }

  /** A new last node whose master entry is `id` (the old last node takes no more entries). */
  private openNode(id: StreamId, fields: Buffer[], limits: StreamLimits): StreamNode {
    if (this.nodes.length > 0) this.nodes[this.nodes.length - 1].seal();
    const node = new StreamNode(id, fields);
    node.idCap = limits.maxEntries;
    // Header and end byte, master num-fields, fields and the zero terminator.
    node.fixed = nodeHeaderBytes(fields);
    this.nodes.push(node);
    return node;
  }

  private appended(id: StreamId): void {
    this.lastId = id;
    this.counted(this.nodes[this.nodes.length - 1]);
  }

  /** The counters and the change log after an entry was appended to `node` (the last node) as lastId. */
  private counted(node: StreamNode): void {
    this.length++;
    if (this.addedBig === null && this.added < Number.MAX_SAFE_INTEGER) this.added++;
    else this.entriesAdded = BigInt.asUintN(64, this.entriesAdded + 1n);
    if (this.length === 1) this.firstId = this.lastId;
    this.signals++;
    if (this.sid !== 0) {
      const l = this.changes()!;
      if (l.tail === null) {
        l.tail = node;
        l.tailFrom = node.count - 1;
      }
    }
  }

  // ------------------------------------------------ XDEL

  /** streamDeleteItem: mark a live entry deleted; drop its node with its last live entry. */
  private deleteOne(id: StreamId): boolean {
    const ni = this.nodeFor(id);
    if (ni < 0) return false;
    const n = this.nodes[ni];
    const i = n.indexOf(id);
    if (i < 0) return false;
    if (n.live === 1) {
      this.logNodeGone(n);
      this.nodes.splice(ni, 1);
    } else {
      n.kill(i);
      n.live--;
      n.dead++;
      this.changes()?.entries.add(id);
    }
    this.length--;
    return true;
  }

  /** XDEL: delete the given ids, keeping first/max-deleted ids as Redis does. */
  deleteIds(ids: readonly StreamId[]): number {
    let deleted = 0;
    let firstEntry = false;
    for (const id of ids) {
      if (!this.deleteOne(id)) continue;
      if (id === this.firstId) firstEntry = true;
      if (id > this.maxDeletedId) this.maxDeletedId = id;
      deleted++;
    }
    if (deleted > 0) {
      if (this.length === 0) this.firstId = ID_MIN;
      else if (firstEntry) this.firstId = this.firstEdgeOrMax();
    }
    return deleted;
  }

  // ------------------------------------------------ trimming

  /** streamTrim: returns the number of entries removed. */
  trim(spec: TrimSpec): number {
    let deleted = 0;
    const nodes = this.nodes;
    let removeUpTo = 0; // nodes[0, removeUpTo) are removed whole
    for (let ni = 0; ni < nodes.length; ni++) {
      if (spec.strategy === TRIM_MAXLEN && this.length <= spec.maxlen) break;
      const n = nodes[ni];
      const entries = n.live;
      if (spec.limit !== 0 && deleted + entries > spec.limit) break;
      const removeNode = spec.strategy === TRIM_MAXLEN
        ? this.length - entries >= spec.maxlen
        : n.cmpId(n.count - 1, spec.minid) < 0; // the last id, tombstone or not
      if (removeNode) {
        removeUpTo = ni + 1;
        this.logNodeGone(n);
        this.length -= entries;
        deleted += entries;
        continue;
      }
      if (spec.approx) break;
      // Mark entries deleted from the head of this node.
      let fromNode = 0;
      for (let i = 0; i < n.count; i++) {
        const stop = spec.strategy === TRIM_MAXLEN ? this.length <= spec.maxlen : n.cmpId(i, spec.minid) >= 0;
        if (stop) break;
        if (n.at[i] >= 0) {
          n.kill(i);
          this.changes()?.entries.add(n.id(i));
          fromNode++;
          this.length--;
        }
      }
      n.live -= fromNode;
      n.dead += fromNode;
      deleted += fromNode;
      break;
    }
    if (removeUpTo > 0) nodes.splice(0, removeUpTo);
    // As Redis's streamTrim: the first id is looked up again only when entries went (perf: an
    // XADD with MAXLEN ~ that trims nothing walked to the first entry).
    if (deleted === 0) return 0;
    if (this.length === 0) this.firstId = ID_MIN;
    else this.firstId = this.firstEdgeOrMax();
    return deleted;
  }

  // ------------------------------------------------ XSETID

  setId(lastId: StreamId, entriesAdded: bigint | null, maxDeletedId: StreamId | null): void {
    this.lastId = lastId;
    if (entriesAdded !== null) this.entriesAdded = entriesAdded;
    if (maxDeletedId !== null && maxDeletedId !== ID_MIN) this.maxDeletedId = maxDeletedId;
  }

  // ------------------------------------------------ lag and entries-read (Redis 7.0's rules)

  /**
   * streamRangeHasTombstones(start, end = +inf) as Redis 7.0 has it: a tombstone before the
   * first entry never counts (later versions dropped that shortcut).
   */
  private tombstoneAfter(start: StreamId): boolean {
    if (this.length === 0 || this.maxDeletedId === ID_MIN) return false;
    if (this.firstId > this.maxDeletedId) return false;
    return start <= this.maxDeletedId;
  }

  /** streamEstimateDistanceFromFirstEverEntry; ENTRIES_READ_INVALID when unknowable. */
  estimateDistance(id: StreamId): bigint {
    if (this.noneAdded()) return 0n;
    // entries_added is unsigned; the estimate is a long long.
    const added = BigInt.asIntN(64, this.entriesAdded);
    if (this.length === 0 && id <= this.lastId) return added;
    if (id === this.lastId) return added;
    if (id > this.lastId) return ENTRIES_READ_INVALID;
    if (this.maxDeletedId === ID_MIN || this.maxDeletedId < this.firstId) {
      const len = BigInt(this.length);
      if (id < this.firstId) return BigInt.asIntN(64, this.entriesAdded - len);
      if (id === this.firstId) return BigInt.asIntN(64, this.entriesAdded - len + 1n);
    }
    return ENTRIES_READ_INVALID;
  }

  /** The lag XINFO reports for a group, or null when it cannot be computed. */
  lag(g: ConsumerGroup): bigint | null {
    if (this.noneAdded()) return 0n;
    if (g.entriesRead !== ENTRIES_READ_INVALID && !this.tombstoneAfter(g.lastId)) {
      return BigInt.asIntN(64, this.entriesAdded - g.entriesRead);
    }
    const read = this.estimateDistance(g.lastId);
    return read === ENTRIES_READ_INVALID ? null : BigInt.asIntN(64, this.entriesAdded - read);
  }

  // ------------------------------------------------ consumer groups

  /** streamCreateCG: null when the name exists. */
  createGroup(name: string, lastId: StreamId, entriesRead: bigint): ConsumerGroup | null {
    if (this.groups.has(name)) return null;
    const g = new ConsumerGroup(this, name, lastId, entriesRead);
    g.gid = ++this.gidSeq;
    this.groups.set(name, g);
    g.logGroup();
    return g;
  }

  /** A group as loaded from disk (src/store). */
  restoreGroup(gid: number, name: string, lastId: StreamId, entriesRead: bigint): ConsumerGroup {
    const g = new ConsumerGroup(this, name, lastId, entriesRead);
    g.gid = gid;
    this.groups.set(name, g);
    return g;
  }

  destroyGroup(name: string): boolean {
    const g = this.groups.get(name);
    if (g === undefined) return false;
    this.groups.delete(name);
    if (this.sid !== 0) {
      // Its records go: the group, every consumer and every pending entry.
      g.logGroup();
      for (const c of g.consumers.keys()) g.logConsumer(c);
      for (const id of g.pel.keys()) g.logPending(id);
    }
    this.signals++; // blocked XREADGROUP clients of this group get their error
    return true;
  }

  /** Groups in name order. */
  sortedGroups(): ConsumerGroup[] {
    return [...this.groups.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * An entry is delivered to `consumer` of `g` (streamReplyWithRange with a group): advance
   * last-delivered-id and entries-read, and unless `noack` record it as pending (taking it
   * over from another consumer if it was pending there).
   */
  deliver(g: ConsumerGroup, id: StreamId, consumer: Consumer, noack: boolean, now: number): void {
    if (id > g.lastId) {
      if (g.entriesRead !== ENTRIES_READ_INVALID && !this.tombstoneAfter(id)) {
        g.entriesRead = BigInt.asIntN(64, g.entriesRead + 1n);
      } else if (!this.noneAdded()) {
        g.entriesRead = this.estimateDistance(id);
      }
      g.lastId = id;
      g.logGroup();
    }
    if (noack) return;
    const nack = g.pel.get(id);
    if (nack === undefined) {
      const n: Nack = { consumer, deliveryTime: now, deliveryCount: 1 };
      g.pel.set(id, n);
      consumer.pel.set(id, n);
    } else {
      nack.consumer.pel.delete(id);
      nack.consumer = consumer;
      nack.deliveryTime = now;
      nack.deliveryCount = 1;
      consumer.pel.set(id, nack);
    }
    g.logPending(id);
  }

  // ------------------------------------------------ XDELEX / XACKDEL reference policies

  /**
   * ACKED policy: an entry is still referenced while some group has not delivered it yet or
   * holds it pending. With no consumer group at all it counts as referenced (redis.io: the
   * entry is not deleted "also, if there are no consumer groups").
   */
  isReferenced(id: StreamId): boolean {
    if (this.groups.size === 0) return true;
    for (const g of this.groups.values()) if (id > g.lastId || g.pel.has(id)) return true;
    return false;
  }

  /** DELREF policy: drop the id from every group's pending entries. True if any held it. */
  dropReferences(id: StreamId): boolean {
    let any = false;
    for (const g of this.groups.values()) {
      if (g.pel.has(id)) {
        g.dropPending(id);
        any = true;
      }
    }
    return any;
  }

  // ------------------------------------------------ XINFO

  /** Number of radix tree keys (nodes). */
  get raxKeys(): number {
    return this.nodes.length;
  }

  /**
   * Nodes of the radix tree holding the node keys (rax->numnodes): the root, every branching
   * position, every child of a branching position and every key, over 16-byte keys in the
   * tree's compressed form.
   */
  raxNodes(): number {
    const n = this.nodes.length;
    if (n === 0) return 1;
    const seen = new Set<string>();
    let count = 1 + n; // root and leaves
    const byteAt = (k: string, i: number) => (i & 1) === 0 ? k.charCodeAt(i >> 1) >> 8 : k.charCodeAt(i >> 1) & 0xff;
    const prefix = (k: string, len: number) => {
      let s = String.fromCharCode(len);
      for (let i = 0; i < len; i++) s += String.fromCharCode(byteAt(k, i));
      return s;
    };
    const add = (k: string, len: number) => {
      if (len === 0 || len === 16) return; // the root and the leaves are counted already
      const p = prefix(k, len);
      if (!seen.has(p)) {
        seen.add(p);
        count++;
      }
    };
    for (let j = 0; j + 1 < n; j++) {
      const a = this.nodes[j].master;
      const b = this.nodes[j + 1].master;
      let l = 0;
      while (l < 16 && byteAt(a, l) === byteAt(b, l)) l++;
      add(a, l); // the branching position
      add(a, l + 1); // its children on both sides
      add(b, l + 1);
    }
    return count;
  }
}
