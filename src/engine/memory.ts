/**
 * Memory accounting: what `used_memory`, MEMORY USAGE and maxmemory see.
 *
 * The V8 heap cannot say what one key costs (and moves on its own), so every key is charged
 * what Redis 7.0 would allocate for it, by Redis's own layout (objectComputeSize): the
 * dictEntry (24 bytes), the key's sds, the robj (16) and the value's encoding, each rounded
 * to jemalloc's size classes. Strings are charged exactly so; collections are estimated from
 * their size and a sample of their elements (MEMORY USAGE's SAMPLES, 5 by default), as Redis
 * does. The Db keeps the sum up to date as keys change (db.ts: charge on insert, overwrite,
 * in-place change and removal), so used_memory follows the dataset without scanning it.
 *
 * used_memory = STARTUP (Redis's used_memory_startup on this build, a modelled constant)
 *             + the keys' charges + the main dicts' bucket arrays
 *             + the clients (a fixed struct each, plus their query and output buffers).
 */
import { T, type Stored, type TypedValue } from './db.js';
import type { ListValue } from './ds/list.js';
import type { SetValue } from './ds/set.js';
import type { HashValue } from './ds/hash.js';
import type { ZSet } from './ds/zset.js';
import type { Stream } from './ds/stream.js';
import type { JsonDoc, JValue } from './ds/json.js';

/** used_memory_startup of redis-server 7.0 (x86_64, jemalloc): the empty server's overhead. */
export const STARTUP = 875976;
/** Per connected client: Redis's client struct and its small reply buffer. */
export const CLIENT_BASE = 1872;
const ROBJ = 16;
const DICT_ENTRY = 24;
/** sizeof(dict) in 7.0. */
const DICT = 56;

/** jemalloc's usable size for a request of n bytes (its size classes, 4 per doubling). */
export function mallocSize(n: number): number {
  if (n <= 8) return 8;
  if (n <= 16) return 16;
  if (n <= 128) return (n + 15) & ~15;
  const k = 31 - Math.clz32(n - 1); // 2^k < n <= 2^(k+1)
  // perf: shifts (2 ** x and Math.ceil of a division went through float pow: 8% of HSET+HDEL).
  const s = k - 2;
  return (((n - 1) >>> s) + 1) * (1 << s);
}

/** sdsReqType's header size for a string of `len` bytes (type 5 only for keys, as sdsnewlen). */
function sdsHeader(len: number, key: boolean): number {
  if (key && len < 32) return 1;
  if (len < 256) return 3;
  if (len < 65536) return 5;
  return 9;
}

/** zmalloc_size of an sds of `len` bytes. */
export function sdsSize(len: number, key = false): number {
  return mallocSize(sdsHeader(len, key) + len + 1);
}

/** What a key costs besides its value: the dictEntry and the key's sds. */
export function keyCharge(key: string): number {
  return DICT_ENTRY + sdsSize(key.length, true);
}

/** keyCharge() of a key of `len` bytes (keys held as bytes: the compact tier). */
export function keyChargeLen(len: number): number {
  return DICT_ENTRY + sdsSize(len, true);
}

/** Length of a stored string value without copying it out. */
function storedLength(v: Stored): number {
  if (typeof v === 'string') return v.length;
  if (typeof v === 'number') return String(v).length;
  return (v as Buffer).length;
}

/** A string value as Redis encodes it: int (robj only), embstr (one block) or raw. */
export function stringCharge(v: Stored): number {
  return typeof v === 'number' ? ROBJ : stringChargeLen(storedLength(v), false);
}

/** stringCharge() of a value of `len` bytes, int-encoded if `int` (the compact tier's records). */
export function stringChargeLen(len: number, int: boolean): number {
  if (int) return ROBJ;
  if (len <= 44) return mallocSize(ROBJ + 3 + len + 1);
  return ROBJ + sdsSize(len);
}

/** Bytes of one listpack entry holding a string of `len` bytes (encoding, data, back-length). */
function lpEntry(s: string): number {
  const len = s.length;
  const int = len <= 20 && /^-?[0-9]+$/.test(s) && Number.isSafeInteger(Number(s));
  return lpEntrySize(int ? Math.abs(Number(s)) : -1, len);
}

/** Listpack bytes of an element: the integer of absolute value `abs`, or (abs -1) a string of len bytes. */
function lpEntrySize(abs: number, len: number): number {
  const n = abs >= 0
    ? abs < 128 ? 1 : abs < 4096 ? 2 : abs < 32768 ? 3 : abs < 8388608 ? 4 : abs < 2147483648 ? 5 : 9
    : (len < 64 ? 1 : len < 4096 ? 2 : 5) + len;
  return n + (n < 128 ? 1 : n < 16384 ? 2 : 3);
}

/**
 * What each collection in the keyspace was charged is kept on the value itself (`mem`), with
 * the size and average element cost (x16, a small integer) it was sampled at (`memN`,
 * `memAvg`), so that re-charging after a change costs O(1) until the size moves by 1/8.
 */
type Acct = TypedValue & { mem: number; memN: number; memAvg: number };

/** The account avgOf reads and updates (rechargeValue sets it; null for MEMORY USAGE). */
let current: Acct | null = null;

/** The charge a collection was last accounted with (0 if never). */
export function chargedValue(v: TypedValue): number {
  return (v as Acct).mem ?? 0;
}

/** Charge a collection anew and remember it; returns the new charge. */
export function rechargeValue(v: TypedValue): number {
  const a = v as Acct;
  current = a.memN === undefined ? null : a;
  const c = valueCharge(v);
  current = null;
  if (a.memN !== undefined) a.mem = c;
  return c;
}

/** MEMORY USAGE: sampled now with `n` samples, not remembered. */
export function usageCharge(v: Stored, n: number): number {
  current = null;
  return valueCharge(v, n, true);
}

/** Average element cost, re-sampled when the size moved by more than 1/8 since last time. */
function avgOf(_v: TypedValue, count: number, n: number, fresh: boolean, sample: (n: number) => number): number {
  const a = cachedAvg(count, fresh);
  return a >= 0 ? a : keepAvg(count, count === 0 ? 0 : sample(Math.min(n, count)));
}

/**
 * avgOf in two halves, for the hot recharges (hash, set) that then build no sampling closure
 * per write: the remembered average while still valid, else -1.
 */
function cachedAvg(count: number, fresh: boolean): number {
  const s = current;
  if (!fresh && s !== null && s.memN >= 0 && Math.abs(count - s.memN) * 8 <= s.memN) return s.memAvg / 16;
  return -1;
}

/** Remember a freshly sampled average (see cachedAvg); returns it. */
function keepAvg(count: number, avg: number): number {
  const s = current;
  if (s !== null) {
    s.memN = count;
    s.memAvg = Math.round(avg * 16);
  }
  return avg;
}

function dictCharge(count: number, perElement: number): number {
  // perf: a shift (2 ** x is a float pow: 3% of HSET into a 100k-field hash).
  const bits = 32 - Math.clz32(count - 1);
  const slots = count <= 4 ? 4 : bits <= 30 ? 1 << bits : 2 ** bits;
  return DICT + slots * 8 + count * (DICT_ENTRY + perElement);
}

/** sizeof(quicklist) and sizeof(quicklistNode) in 7.0. */
const QUICKLIST = 48;
const QL_NODE = 32;

function listCharge(l: ListValue): number {
  // A flat list is one node: objectComputeSize's sum, exact.
  if (l.entries !== null) return ROBJ + QUICKLIST + QL_NODE + mallocSize(l.lpBytes);
  // quicklist: the struct, one node per 8 KB of listpack (fill -2), the listpacks themselves.
  const nodes = Math.max(1, Math.ceil(l.lpBytes / 8192));
  return ROBJ + 40 + nodes * 32 + l.lpBytes + nodes * 8;
}

function setCharge(s: SetValue, n: number, fresh: boolean): number {
  const count = s.size;
  // An intset's width follows from its two ends (sorted): exact, and O(1) per change.
  if (s.isIntset) return ROBJ + mallocSize(8 + count * s.intWidth());
  if (s.isListpack) {
    const avg = avgOf(s, count, n, fresh, (k) => {
      let t = 0;
      for (let i = 0; i < k; i++) t += lpEntry(s.random());
      return t / k;
    });
    return ROBJ + mallocSize(7 + Math.round(count * avg));
  }
  // A hashtable (or small) set: its members' lengths at fixed positions, as hashCharge (perf:
  // no member strings and no Math.random per change; a random draw with replacement also
  // moved MEMORY USAGE between calls).
  let avg = cachedAvg(count, fresh);
  if (avg < 0) {
    const k = Math.min(n, count);
    avg = keepAvg(count, k === 0 ? 0 : s.sampleLengths(k, sdsSize) / k);
  }
  return ROBJ + dictCharge(count, avg);
}

function hashCharge(h: HashValue, n: number, fresh: boolean): number {
  const bytes = h.listpackBytes;
  if (bytes !== null) return ROBJ + mallocSize(bytes.length);
  const count = h.size;
  const lp = h.isListpack;
  let avg = cachedAvg(count, fresh);
  if (avg < 0) {
    let t = 0;
    const k = Math.min(n, count);
    // A hashtable's samples are evenly spaced positions, read by their lengths: the whole
    // table when it has no more entries than samples, as Redis's objectComputeSize then sums
    // (perf: no field or value strings, no Math.random, whose boxed result was garbage at
    // every change of a BullMQ job hash).
    const ht = h.table;
    for (let i = 0; i < k; i++) {
      if (ht !== null) {
        const p = Math.floor(((i + 0.5) * count) / k);
        t += sdsSize(ht.keyLength(p)) + sdsSize(ht.valueLength(p));
        continue;
      }
      const f = h.randomField();
      const v = h.get(f) ?? '';
      t += lp ? lpEntry(f) + lpEntry(v) : sdsSize(f.length) + sdsSize(v.length);
    }
    avg = keepAvg(count, count === 0 ? 0 : t / k);
  }
  if (lp) return ROBJ + mallocSize(7 + Math.round(count * avg));
  return ROBJ + dictCharge(count, avg);
}

function zsetCharge(z: ZSet, n: number, fresh: boolean): number {
  const count = z.size;
  const lp = z.encoding() === 'listpack';
  // (cachedAvg first, as hashCharge: no sampling closure per ZADD)
  let avg = cachedAvg(count, fresh);
  if (avg < 0) {
    const k = Math.min(n, count);
    let t = 0;
    const mem = z.members;
    for (let slot = 0, i = 0; slot < mem.limit && i < k; slot++) {
      if (!mem.live(slot)) continue;
      const at = mem.locate(slot);
      t += lp ? lpEntryBytes(mem.arena, at, at + mem.lengthOf(slot)) + lpEntry(String(mem.scores[slot])) : sdsSize(mem.lengthOf(slot));
      i++;
    }
    avg = keepAvg(count, count === 0 ? 0 : t / k);
  }
  if (lp) return ROBJ + mallocSize(7 + Math.round(count * avg));
  // zset struct, the dict, the skiplist header and a node per member (1.33 levels on average).
  return ROBJ + 16 + dictCharge(count, 0) + 544 + Math.round(count * (48 + avg));
}

/** lpEntry() of the latin1 string of bytes b[s, e) (a zset's member, without its string). */
function lpEntryBytes(b: Uint8Array, s: number, e: number): number {
  const len = e - s;
  // The same test as lpEntry's /^-?[0-9]+$/ and Number.isSafeInteger(Number(s)).
  let p = b[s] === 45 ? s + 1 : s;
  if (len === 0 || len > 20 || p === e) return lpEntrySize(-1, len);
  let x = 0;
  for (; p < e; p++) {
    const c = b[p] - 48;
    if (c < 0 || c > 9) return lpEntrySize(-1, len);
    x = x * 10 + c;
  }
  return lpEntrySize(x <= Number.MAX_SAFE_INTEGER ? x : -1, len);
}

/**
 * perf: what the nodes before the tail cost, as last summed: only the tail node grows (XADD),
 * so a stream that only grew at its end is re-charged by adding the nodes that stopped being
 * the tail, not by walking all of them (BullMQ's event stream: 100 nodes, 2 XADDs per job).
 * Valid while nodes[0] and nodes[n - 2] are the same objects (a trim or a node removed by XDEL
 * moves one of them).
 */
interface NodeSum { n: number; first: unknown; prev: unknown; sum: number }
const nodeSums = new WeakMap<Stream, NodeSum>();

function nodeCharge(fixed: number, first: boolean): number {
  return mallocSize(Math.max(fixed, 16)) + (first ? 0 : 48);
}

function streamCharge(s: Stream): number {
  let t = ROBJ + 592; // stream struct, its rax and the first rax node
  const nodes = s.nodes;
  const last = nodes.length - 1;
  if (last >= 0) {
    // Nodes [0, last): their sum, cached; then the tail, whose listpack XADD preallocates
    // (STREAM_LISTPACK_MAX_PRE_ALLOCATE, 4096).
    let c = nodeSums.get(s);
    let from = 0;
    let sum = 0;
    if (c !== undefined && c.first === nodes[0] && c.n <= nodes.length && (c.n < 2 || nodes[c.n - 2] === c.prev)) {
      from = c.n - 1;
      sum = c.sum;
    }
    for (let i = from; i < last; i++) sum += nodeCharge(nodes[i].fixed, i === 0);
    if (c === undefined) {
      c = { n: 0, first: null, prev: null, sum: 0 };
      nodeSums.set(s, c);
    }
    c.n = nodes.length;
    c.first = nodes[0];
    c.prev = last >= 1 ? nodes[last - 1] : null;
    c.sum = sum;
    t += sum + mallocSize(Math.max(nodes[last].fixed, 16, 4096)) + (last === 0 ? 0 : 48);
  }
  for (const g of s.groups.values()) {
    t += 104 + g.pel.size * 72 + g.consumers.size * 96;
  }
  return t;
}

/** RedisJSON's tree (ijson): a node per value, strings and containers sized by content. */
function jsonCharge(doc: JsonDoc): number {
  let budget = 100000;
  const walk = (v: JValue): number => {
    if (--budget < 0) return 16;
    if (v === null || typeof v === 'boolean') return 8;
    if (typeof v === 'number' || typeof v === 'bigint') return 16;
    if (typeof v === 'string') return mallocSize(16 + v.length);
    if (Array.isArray(v)) {
      let t = mallocSize(16 + v.length * 8);
      for (const x of v) t += walk(x);
      return t;
    }
    if (v instanceof Map) {
      let t = mallocSize(16 + v.size * 24);
      for (const [k, x] of v) t += mallocSize(16 + k.length) + walk(x);
      return t;
    }
    return 16; // JFloat
  };
  return ROBJ + 8 + walk(doc.root);
}

/**
 * What a value costs (objectComputeSize). `n`: elements sampled for collections; `fresh`:
 * sample now even if a recent estimate exists (MEMORY USAGE).
 */
export function valueCharge(v: Stored, n = 5, fresh = false): number {
  if (typeof v !== 'object' || v instanceof Uint8Array) return stringCharge(v);
  return Math.round(collectionCharge(v as TypedValue, n, fresh)); // whole bytes: sampled averages are fractional
}

function collectionCharge(tv: TypedValue, n: number, fresh: boolean): number {
  switch (tv.type) {
    case T.LIST: return listCharge(tv as unknown as ListValue);
    case T.SET: return setCharge(tv as unknown as SetValue, n, fresh);
    case T.HASH: return hashCharge(tv as unknown as HashValue, n, fresh);
    case T.ZSET: return zsetCharge(tv as unknown as ZSet, n, fresh);
    case T.STREAM: return streamCharge(tv as unknown as Stream);
    case T.JSON: return jsonCharge(tv as unknown as JsonDoc);
    default: return ROBJ;
  }
}
