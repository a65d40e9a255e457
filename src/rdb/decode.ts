/**
 * RDB value decoding (rdbLoadObject) into our values, for RESTORE and RDB file import. Every
 * encoding Redis 2.6 to 7.2 writes is accepted: strings (raw, integer, LZF); lists (linked
 * list, ziplist, quicklist, quicklist 2); sets (plain, intset, listpack); sorted sets (plain,
 * zset2, ziplist, listpack); hashes (plain, zipmap, ziplist, listpack); streams (listpacks v1,
 * v2, v3 with groups, PELs and consumers). Also Redis 7.4's hashes with field TTLs (hash
 * metadata, listpackex) and RedisJSON's module values (ReJSON-RL), our types that 7.0 lacks.
 *
 * The input is untrusted: everything is validated deeply (as Redis with sanitize-dump-payload
 * yes: listpack/ziplist/intset structure, duplicates, counts, stream ids and PEL references)
 * and refused with an RdbError; loops are bounded by the bytes present, never by counts the
 * input claims. Values are built with our own encoding rules (the configured limits), as
 * Redis converts what it loads.
 */
import type { Stored } from '../engine/db.js';
import { ListValue, elemOf, elemFromStr } from '../engine/ds/list.js';
import { SetValue, type SetLimits } from '../engine/ds/set.js';
import { HashValue, type HashLimits } from '../engine/ds/hash.js';
import { ZSET_MAX_LISTPACK_ENTRIES, ZSET_MAX_LISTPACK_VALUE, ZSet } from '../engine/ds/zset.js';
import {
  Consumer, ConsumerGroup, ENTRIES_READ_INVALID, ID_MIN, Stream, StreamNode, idMs, idSeq, makeId,
  nodeHeaderBytes, type Nack, type StreamId,
} from '../engine/ds/stream.js';
import { RdbError } from './errors.js';
import { type LpElem, elemText, lpDecode, lpDecodeInto, lpSmallZsetValid, lpValidate } from './listpack.js';
import { MAX_STRING, RdbReader, strtod } from './reader.js';
import { RDB_MODULE_OP, RDB_TYPE, REJSON_NAME, moduleTypeName } from './writer.js';
import { JsonDoc, JsonParseError, parseJson } from '../engine/ds/json.js';

/** Encoding limits of this server (how loaded values are encoded here). */
export interface DecodeLimits {
  hash: HashLimits;
  set: SetLimits;
  listFill: number;
}

function bad(what: string): never {
  throw new RdbError(what);
}

// ---------------------------------------------------------------- ziplist, zipmap, intset

/** Every element of a ziplist, validated deeply (ziplistValidateIntegrity, deep). */
export function zlDecode(b: Buffer): LpElem[] {
  const n = b.length;
  if (n < 11) bad('ziplist too short');
  if (b.readUInt32LE(0) !== n) bad('ziplist length mismatch');
  if (b[n - 1] !== 0xff) bad('ziplist not terminated');
  const tail = b.readUInt32LE(4);
  const declared = b.readUInt16LE(8);
  const out: LpElem[] = [];
  let p = 10;
  let prevSize = 0;
  let last = 10;
  const end = n - 1;
  while (p < end) {
    const start = p;
    let prevlen = b[p++];
    if (prevlen === 254) {
      if (p + 4 > end) bad('ziplist prevlen out of range');
      prevlen = b.readUInt32LE(p);
      p += 4;
    }
    if (prevlen !== prevSize) bad('ziplist bad prevlen');
    if (p >= end) bad('ziplist entry out of range');
    const c = b[p++];
    const t = c >> 6;
    if (t === 0 || t === 1 || c === 0x80) {
      let len: number;
      if (t === 0) len = c & 0x3f;
      else if (t === 1) {
        if (p >= end) bad('ziplist entry out of range');
        len = ((c & 0x3f) << 8) | b[p++];
      } else {
        if (p + 4 > end) bad('ziplist entry out of range');
        len = b.readUInt32BE(p);
        p += 4;
      }
      if (p + len > end) bad('ziplist string out of range');
      out.push(b.latin1Slice(p, p + len));
      p += len;
    } else if (c === 0xc0) {
      if (p + 2 > end) bad('ziplist int out of range');
      out.push(b.readInt16LE(p));
      p += 2;
    } else if (c === 0xd0) {
      if (p + 4 > end) bad('ziplist int out of range');
      out.push(b.readInt32LE(p));
      p += 4;
    } else if (c === 0xe0) {
      if (p + 8 > end) bad('ziplist int out of range');
      const v = b.readBigInt64LE(p);
      out.push(v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v);
      p += 8;
    } else if (c === 0xf0) {
      if (p + 3 > end) bad('ziplist int out of range');
      out.push(b.readIntLE(p, 3));
      p += 3;
    } else if (c === 0xfe) {
      if (p + 1 > end) bad('ziplist int out of range');
      out.push(b.readInt8(p));
      p += 1;
    } else if (c >= 0xf1 && c <= 0xfd) {
      out.push((c & 0x0f) - 1);
    } else {
      bad('ziplist bad encoding');
    }
    prevSize = p - start;
    last = start;
  }
  if (p !== end) bad('ziplist overrun');
  if (tail !== last) bad('ziplist bad tail offset');
  if (declared !== 65535 && declared !== out.length) bad('ziplist count mismatch');
  return out;
}

/** Field/value pairs of a zipmap (the Redis 2.4 small hash), validated. */
export function zipmapDecode(b: Buffer): string[] {
  const n = b.length;
  if (n < 2) bad('zipmap too short');
  const declared = b[0];
  const out: string[] = [];
  let p = 1;
  const readLen = (): number => {
    if (p >= n) bad('zipmap out of range');
    const c = b[p++];
    if (c < 254) return c;
    if (c === 254) {
      if (p + 4 > n) bad('zipmap out of range');
      const v = b.readUInt32LE(p);
      p += 4;
      return v;
    }
    return -1; // end
  };
  for (;;) {
    const klen = readLen();
    if (klen < 0) break;
    if (p + klen > n) bad('zipmap key out of range');
    out.push(b.latin1Slice(p, p + klen));
    p += klen;
    const vlen = readLen();
    if (vlen < 0) bad('zipmap value missing');
    if (p >= n) bad('zipmap out of range');
    const free = b[p++];
    if (p + vlen + free > n) bad('zipmap value out of range');
    out.push(b.latin1Slice(p, p + vlen));
    p += vlen + free;
  }
  if (p !== n) bad('zipmap trailing bytes');
  if (declared < 254 && declared !== out.length / 2) bad('zipmap count mismatch');
  return out;
}

/** Members of an intset, validated (encoding, length, strictly ascending). */
export function intsetDecode(b: Buffer): string[] {
  if (b.length < 8) bad('intset too short');
  const enc = b.readUInt32LE(0);
  const count = b.readUInt32LE(4);
  if (enc !== 2 && enc !== 4 && enc !== 8) bad('intset bad encoding');
  if (8 + count * enc !== b.length) bad('intset length mismatch');
  if (count === 0) bad('empty intset');
  const out: string[] = [];
  let prev: bigint | null = null;
  for (let i = 0, o = 8; i < count; i++, o += enc) {
    const v = enc === 2 ? BigInt(b.readInt16LE(o)) : enc === 4 ? BigInt(b.readInt32LE(o)) : b.readBigInt64LE(o);
    if (prev !== null && v <= prev) bad('intset not sorted');
    prev = v;
    out.push(v.toString());
  }
  return out;
}

// ---------------------------------------------------------------- builders

/**
 * Reused scratch for the elements of one listpack/ziplist value (perf: an import of a million
 * keys made an array per collection; values are built from it before the next decode).
 */
const SCRATCH: LpElem[] = [];

/** Largest one-node list kept flat as loaded (a bigger node's pops would copy too much). */
const FLAT_MAX = 65536;

function buildList(elems: ReadonlyArray<string | Buffer>, lim: DecodeLimits, n = elems.length): ListValue {
  const l = ListValue.forLoad();
  for (let i = 0; i < n; i++) {
    const e = elems[i];
    l.pushTail(typeof e === 'string' ? elemFromStr(e) : elemOf(e));
  }
  if (l.length === 0) bad('empty list');
  l.loadDone(lim.listFill);
  return l;
}

function buildSet(members: readonly string[], lim: DecodeLimits, n = members.length): SetValue {
  if (n === 0) bad('empty set');
  const s = SetValue.create(members[0], n, lim.set);
  for (let i = 0; i < n; i++) if (!s.add(members[i], lim.set)) bad('duplicate set member');
  return s;
}

/** `lim` with no value-length limit for hashes: a listpack or ziplist is kept by its count alone. */
function byCount(lim: DecodeLimits): DecodeLimits {
  return { ...lim, hash: { maxEntries: lim.hash.maxEntries, maxValue: Infinity } };
}

function buildHash(pairs: readonly string[], lim: DecodeLimits, n = pairs.length): HashValue {
  if (n === 0) bad('empty hash');
  if (n % 2 !== 0) bad('odd hash element count');
  const fast = HashValue.fromPairs(pairs, n, lim.hash);
  if (fast === null) bad('duplicate hash field');
  if (fast !== undefined) return fast;
  const h = new HashValue();
  h.convertForCount(n / 2, lim.hash);
  for (let i = 0; i < n; i += 2) if (!h.set(pairs[i], pairs[i + 1], lim.hash)) bad('duplicate hash field');
  return h;
}

/**
 * Memory accounting of a value loaded from a listpack/intset of `bytes` bytes that kept that
 * encoding here: the exact size per element (memory.ts's sampled average, x16), so that the
 * keyspace's first charge reads it instead of sampling (perf: sampling made ~600 bytes of
 * garbage per small hash; the bytes Redis holds are known exactly here).
 */
function precharge(v: { memN: number; memAvg: number }, count: number, perElement: number): void {
  v.memN = count;
  v.memAvg = Math.round(perElement * 16);
}

/** A listpack hash / set / zset kept as listpack here: its element cost from the listpack's bytes. */
function lpPrecharge(v: { memN: number; memAvg: number }, count: number, bytes: number): void {
  precharge(v, count, (bytes - 7) / count);
}

/** An intset value of `count` members, each `width` bytes, straight into a SetValue (no text). */
function intsetValue(b: Buffer, s: number, e: number, lim: DecodeLimits): SetValue | null {
  if (e - s < 8) bad('intset too short');
  const width = b.readUInt32LE(s);
  const count = b.readUInt32LE(s + 4);
  if (width !== 2 && width !== 4 && width !== 8) bad('intset bad encoding');
  if (8 + count * width !== e - s) bad('intset length mismatch');
  if (count === 0) bad('empty intset');
  if (count > lim.set.maxIntset || width === 8) return null; // the general path
  const ints = new BigInt64Array(count);
  const half = new Int32Array(ints.buffer, ints.byteOffset, 2 * count);
  let prev = -Infinity;
  for (let i = 0, o = s + 8; i < count; i++, o += width) {
    const v = width === 2 ? b.readInt16LE(o) : b.readInt32LE(o);
    if (v <= prev) bad('intset not sorted');
    prev = v;
    half[2 * i] = v; // little-endian int64: low word, then the sign
    half[2 * i + 1] = v < 0 ? -1 : 0;
  }
  const set = SetValue.fromSortedInts(ints, count);
  precharge(set, count, width);
  return set;
}

/** EB_EXPIRE_TIME_MAX: the largest field expiry (ms) Redis 7.4 accepts. */
const EB_EXPIRE_TIME_MAX = 2 ** 48 - 1;

/** A hash whose fields may have expiry times (0 = none), in the order given. */
function buildHashWithTtls(pairs: string[], exps: number[], lim: DecodeLimits): HashValue {
  const h = buildHash(pairs, lim);
  h.markFieldExpiry();
  for (let i = 0; i < exps.length; i++) if (exps[i] !== 0) h.setFieldExpire(pairs[2 * i], exps[i]);
  return h;
}

/**
 * A module value (RDB_TYPE_MODULE_2): only RedisJSON's documents (ReJSON-RL, encoding
 * versions 2 and 3, as its rdb_load reads them: the serialized document, and in version 2 a
 * legacy count of RediSearch strings) are known here.
 */
function readModuleValue(r: RdbReader): JsonDoc {
  const { name, encver } = moduleTypeName(r.lenBig());
  if (name !== REJSON_NAME || (encver !== 2 && encver !== 3)) bad(`module values of type ${name} (encoding version ${encver}) are not supported`);
  const text = moduleString(r);
  if (encver === 2) {
    if (r.len() !== RDB_MODULE_OP.UINT) bad('ReJSON-RL: unsigned expected');
    if (r.lenBig() > 0n) {
      moduleString(r);
      moduleString(r);
    }
  }
  if (r.len() !== RDB_MODULE_OP.EOF) bad('module value: EOF opcode expected');
  try {
    return new JsonDoc(parseJson(text));
  } catch (e) {
    if (e instanceof JsonParseError || e instanceof RangeError) bad('ReJSON-RL: invalid JSON document');
    throw e;
  }
}

function moduleString(r: RdbReader): Buffer {
  if (r.len() !== RDB_MODULE_OP.STRING) bad('module value: string expected');
  return r.string();
}

function buildZset(members: string[], scores: number[], byCount = false): ZSet {
  if (members.length === 0) bad('empty sorted set');
  const seen = new Set<string>();
  const pairs: [string, number][] = [];
  for (let i = 0; i < members.length; i++) {
    const s = scores[i];
    if (s !== s) bad('sorted set NaN score');
    if (seen.has(members[i])) bad('duplicate sorted set member');
    seen.add(members[i]);
    pairs.push([members[i], s]);
  }
  return ZSet.from(pairs, byCount);
}

/** A sorted set from the first `n` elements of a listpack: member, score, member, score... */
function zsetFromListpack(el: readonly LpElem[], n: number): ZSet {
  const count = zsetListpackCount(n);
  const members: string[] = new Array(count);
  const scores = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    members[i] = elemText(el[2 * i]);
    scores[i] = zsetListpackScore(el[2 * i + 1]);
  }
  // As Redis 7.0 loads a listpack: by its count alone (a long member stays in it).
  return ZSet.fromLoaded(members, scores, count, true) ?? bad('duplicate sorted set member');
}

/** Members in a listpack sorted set of n elements. */
function zsetListpackCount(n: number): number {
  if (n === 0) bad('empty sorted set');
  if (n % 2 !== 0) bad('odd sorted set element count');
  return n / 2;
}

/** A listpack sorted set's score element as a number. */
function zsetListpackScore(s: LpElem): number {
  const v = typeof s === 'string' ? strtod(s) : Number(s);
  if (v === null) bad('bad sorted set score');
  if (v !== v) bad('sorted set NaN score');
  return v;
}

/**
 * readValue() for the RDB file parse, which drops the value (the insert reads it again:
 * file.ts RdbKeys): the commonest encodings are only checked, with every check readValue makes
 * in its order and words (listpack sorted sets and hashes, one-node lists), or only accepted
 * when they are plainly good (strings with a TTL, `volatile`; intsets; small plain sets);
 * null then, else the value read. perf: values built only to be
 * dropped (a ZSet's typed arrays above all) were a third of the parse.
 */
export function checkValue(r: RdbReader, type: number, lim: DecodeLimits, volatile = false): Stored | null {
  const at = r.p;
  checkedCount = 0;
  switch (type) {
    case RDB_TYPE.STRING:
      // A string with a TTL is never compact (the caller counts those from the value).
      if (volatile && skipStoredString(r)) return null;
      break;
    case RDB_TYPE.SET_INTSET: {
      const b = r.span();
      if (intsetValid(b, r.s0, r.s1)) return null;
      break;
    }
    case RDB_TYPE.SET:
      if (skipSmallSet(r)) return null;
      break;
    case RDB_TYPE.ZSET_LISTPACK:
      checkedCount = checkZsetListpack(r);
      return null;
    case RDB_TYPE.HASH_LISTPACK: {
      const b = r.span();
      const n = HashValue.checkListpack(b, r.s0, r.s1, lim.hash);
      if (n === null) bad('bad hash listpack');
      if (n !== undefined) {
        checkedCount = n;
        return null;
      }
      break;
    }
    case RDB_TYPE.LIST_QUICKLIST_2:
      if (r.len() === 1 && r.p < r.end && r.b[r.p] === 2) {
        r.p++;
        const b = r.span();
        if (r.s1 - r.s0 <= FLAT_MAX) {
          const n = lpValidate(b, r.s0, r.s1);
          if (n === 0) bad('empty list');
          checkedCount = n;
          return null;
        }
      }
      break;
    default:
      break;
  }
  r.p = at;
  return readValue(r, type, lim);
}

/**
 * After checkValue: the element count of a listpack hash (fields), a one-node list (elements)
 * or a listpack-sized listpack sorted set (members) it checked whole, else 0; readChecked then
 * builds the value without checking it again.
 */
export let checkedCount = 0;

/**
 * readValue of a value checkValue checked with these limits and counted (`count`: its
 * checkedCount, > 0): a listpack hash or a one-node list built from its bytes without the checks
 * again, a sorted set held as its bytes until first used (ZSet `packed`) (perf: the import's
 * insert reads every such value a second time: cli.ts).
 */
export function readChecked(r: RdbReader, type: number, count: number): Stored {
  if (type === RDB_TYPE.HASH_LISTPACK) {
    const b = r.span();
    return HashValue.fromCheckedListpack(b, r.s0, r.s1, count);
  }
  if (type === RDB_TYPE.ZSET_LISTPACK) {
    const b = r.span();
    const z = ZSet.fromCheckedListpack(b.latin1Slice(r.s0, r.s1));
    lpPrecharge(z, count, r.s1 - r.s0); // as readValue charges it
    return z;
  }
  r.len(); // one node
  r.p++; // container 2 (a listpack)
  const b = r.span();
  return ListValue.fromEntries(b.latin1Slice(r.s0 + 6, r.s1 - 1), count);
}

/**
 * checkValue's fast paths below answer true only for a value readValue accepts (then r.p is
 * past it); false leaves the verdict (and the words and offset of any error) to readValue.
 */

/** A raw or LZF string value (r.stored()) that reads, skipped; false for any other form. */
function skipStoredString(r: RdbReader): boolean {
  const b = r.b;
  let p = r.p;
  if (p + 1 >= r.end) return false;
  const c = b[p];
  if (c < 0x40) p += 1 + c;
  else if (c >> 6 === 1) p += 2 + (((c & 0x3f) << 8) | b[p + 1]);
  else if (c === 0xc3) {
    r.p = p + 1;
    if (r.checkedLzf(MAX_STRING) < 0) return false;
    p = r.p + r.lzfClen;
  } else return false;
  if (p > r.end) return false;
  r.p = p;
  return true;
}

/** An intset of 16- or 32-bit members that intsetValue (or the general path) accepts. */
function intsetValid(b: Buffer, s: number, e: number): boolean {
  if (e - s < 8) return false;
  const width = b.readUInt32LE(s);
  const count = b.readUInt32LE(s + 4);
  if ((width !== 2 && width !== 4) || count === 0 || 8 + count * width !== e - s) return false;
  let prev = -Infinity;
  for (let o = s + 8; o < e; o += width) {
    const v = width === 2 ? b.readInt16LE(o) : b.readInt32LE(o);
    if (v <= prev) return false;
    prev = v;
  }
  return true;
}

/** Offsets of the members skipSmallSet compares. */
const SET_AT = new Int32Array(8);

/** A plain set (RDB_TYPE_SET) of 1 to 8 distinct short raw members, skipped. */
function skipSmallSet(r: RdbReader): boolean {
  const b = r.b;
  const end = r.end;
  let p = r.p;
  if (p >= end) return false;
  const n = b[p++];
  if (n === 0 || n > SET_AT.length) return false;
  for (let i = 0; i < n; i++) {
    if (p >= end) return false;
    const c = b[p];
    if (c >= 0x40 || p + 1 + c > end) return false;
    // Distinct: the length byte and the bytes differ from every earlier member's.
    for (let j = 0; j < i; j++) {
      const q = SET_AT[j];
      let k = 0;
      while (k <= c && b[q + k] === b[p + k]) k++;
      if (k > c) return false;
    }
    SET_AT[i] = p;
    p += 1 + c;
  }
  r.p = p;
  return true;
}

/**
 * readValue's ZSET_LISTPACK checks without building the set (checkValue). Returns its member
 * count when ZSet.fromCheckedListpack may hold it (listpack-sized here, its element count in
 * the header), else 0.
 */
function checkZsetListpack(r: RdbReader): number {
  const b = r.span();
  // (The header is read once a check has found it there.)
  if (lpSmallZsetValid(b, r.s0, r.s1)) return packedCount(b, r.s0); // <= 8 members of < 64 bytes
  const count = zsetListpackCount(lpDecodeInto(b, r.s0, r.s1, false, SCRATCH));
  const declared = b.readUInt16LE(r.s0 + 4);
  for (let i = 0; i < count; i++) zsetListpackScore(SCRATCH[2 * i + 1]);
  let small = count <= ZSET_MAX_LISTPACK_ENTRIES && declared !== 65535;
  if (count <= 8) {
    for (let i = 0; i < count; i++) {
      const m = elemText(SCRATCH[2 * i]);
      if (m.length > ZSET_MAX_LISTPACK_VALUE) small = false;
      for (let j = 0; j < i; j++) if (elemText(SCRATCH[2 * j]) === m) bad('duplicate sorted set member');
    }
    return small ? count : 0;
  }
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const m = elemText(SCRATCH[2 * i]);
    if (m.length > ZSET_MAX_LISTPACK_VALUE) small = false;
    if (seen.has(m)) bad('duplicate sorted set member');
    seen.add(m);
  }
  return small ? count : 0;
}

/** Members of a checked listpack sorted set at b[s, ...) by its header's count (0 when not given there). */
function packedCount(b: Buffer, s: number): number {
  const declared = b.readUInt16LE(s + 4);
  return declared === 65535 ? 0 : declared / 2;
}

/** Pairs from a ziplist/listpack of member, score, member, score... */
function zsetFromPacked(el: LpElem[]): ZSet {
  if (el.length % 2 !== 0) bad('odd sorted set element count');
  const members: string[] = [];
  const scores: number[] = [];
  for (let i = 0; i < el.length; i += 2) {
    members.push(elemText(el[i]));
    const s = el[i + 1];
    const v = typeof s === 'string' ? strtod(s) : Number(s);
    if (v === null) bad('bad sorted set score');
    scores.push(v);
  }
  return buildZset(members, scores, true); // as Redis 7.0 loads a ziplist: by its count alone
}

// ---------------------------------------------------------------- streams

function readId(r: RdbReader): StreamId {
  return makeId(r.lenBig(), r.lenBig());
}

function rawId(b: Buffer, o: number): StreamId {
  return makeId(b.readBigUInt64BE(o), b.readBigUInt64BE(o + 8));
}

/** An integer element of a stream listpack (refused otherwise). */
function lpInt(e: LpElem | undefined): bigint {
  if (typeof e === 'number') return BigInt(e);
  if (typeof e === 'bigint') return e;
  if (typeof e === 'string') {
    // Integer-looking strings are always stored as integers; a string here is corrupt.
    return bad('stream listpack: integer expected');
  }
  return bad('stream listpack truncated');
}

function lpSmall(e: LpElem | undefined, max: number): number {
  const v = lpInt(e);
  if (v < 0n || v > BigInt(max)) bad('stream listpack: count out of range');
  return Number(v);
}

function lpBytes(e: LpElem | undefined): Buffer {
  if (e === undefined) bad('stream listpack truncated');
  return Buffer.from(elemText(e), 'latin1');
}

/** One node: the listpack of entries keyed by master id `master` (streamValidateListpackIntegrity). */
function streamNode(master: StreamId, lp: Buffer, s: Stream, prev: StreamId | null): { node: StreamNode; last: StreamId } {
  const el = lpDecode(lp);
  if (el.length === 0) bad('empty stream listpack');
  let i = 0;
  const live = lpSmall(el[i++], el.length);
  const dead = lpSmall(el[i++], el.length);
  const nf = lpSmall(el[i++], el.length);
  const fields: Buffer[] = [];
  for (let k = 0; k < nf; k++) fields.push(lpBytes(el[i++]));
  if (lpInt(el[i++]) !== 0n) bad('stream master entry not terminated');
  const node = new StreamNode(master, fields);
  node.fixed = nodeHeaderBytes(fields);
  const mMs = idMs(master);
  const mSeq = idSeq(master);
  let last = prev;
  let seenLive = 0;
  let seenDead = 0;
  while (i < el.length) {
    const flags = lpSmall(el[i++], 3);
    const id = makeId(BigInt.asUintN(64, mMs + lpInt(el[i++])), BigInt.asUintN(64, mSeq + lpInt(el[i++])));
    if (id < master || (last !== null && id <= last)) bad('stream entry ids out of order');
    last = id;
    const fv: Buffer[] = [];
    let n: number;
    if (flags & 2) {
      n = nf;
      for (let k = 0; k < nf; k++) fv.push(fields[k], lpBytes(el[i++]));
    } else {
      n = lpSmall(el[i++], el.length);
      for (let k = 0; k < n; k++) fv.push(lpBytes(el[i++]), lpBytes(el[i++]));
    }
    const lpCount = lpSmall(el[i++], 2 * el.length + 4);
    if (lpCount !== (flags & 2 ? n + 3 : 2 * n + 4)) bad('stream entry lp-count mismatch');
    if (n === 0) bad('stream entry without fields');
    node.push(id, fv, (flags & 1) !== 0);
    if (flags & 1) seenDead++;
    else seenLive++;
  }
  node.seal();
  if (seenLive !== live || seenDead !== dead) bad('stream node counts mismatch');
  if (seenLive === 0) bad('stream node without live entries');
  s.length += seenLive;
  return { node, last: last! };
}

function readStream(r: RdbReader, type: number): Stream {
  const s = new Stream();
  const nodes = r.len();
  let prev: StreamId | null = null;
  for (let k = 0; k < nodes; k++) {
    const key = r.string();
    if (key.length !== 16) bad('stream node key is not an id');
    const master = rawId(key, 0);
    const lp = Buffer.from(r.string());
    const { node, last } = streamNode(master, lp, s, prev);
    prev = last;
    s.nodes.push(node);
  }
  const length = r.len();
  if (length !== s.length) bad('stream length mismatch');
  s.lastId = readId(r);
  if (prev !== null && s.lastId < prev) bad('stream last id below its entries');
  if (type >= RDB_TYPE.STREAM_LISTPACKS_2) {
    s.firstId = readId(r);
    s.maxDeletedId = readId(r);
    s.entriesAdded = r.lenBig();
  } else {
    // Redis derives what version 1 did not store.
    s.firstId = s.length > 0 ? firstLive(s) : ID_MIN;
    s.maxDeletedId = ID_MIN;
    s.entriesAdded = BigInt(s.length);
  }
  const groups = r.len();
  for (let g = 0; g < groups; g++) {
    const name = r.latin1();
    const lastId = readId(r);
    let entriesRead = type >= RDB_TYPE.STREAM_LISTPACKS_2 ? BigInt.asIntN(64, r.lenBig()) : s.estimateDistance(lastId);
    if (entriesRead < ENTRIES_READ_INVALID) entriesRead = ENTRIES_READ_INVALID;
    if (s.groups.has(name)) bad('duplicate consumer group');
    const cg: ConsumerGroup = s.restoreGroup(++s.gidSeq, name, lastId, entriesRead);
    const pel = r.len();
    const nacks: Nack[] = [];
    for (let k = 0; k < pel; k++) {
      const id = rawId(r.bytes(16), 0);
      const deliveryTime = r.ms();
      const c = r.lenBig();
      const nack: Nack = { consumer: null as unknown as Consumer, deliveryTime, deliveryCount: c <= 9007199254740991n ? Number(c) : c };
      if (cg.pel.has(id)) bad('duplicate PEL entry');
      cg.pel.set(id, nack);
      nacks.push(nack);
    }
    const consumers = r.len();
    for (let k = 0; k < consumers; k++) {
      const cname = r.latin1();
      const seen = r.ms();
      if (type >= RDB_TYPE.STREAM_LISTPACKS_3) r.ms(); // active-time (7.2)
      if (cg.consumers.has(cname)) bad('duplicate consumer');
      const c = new Consumer(cname, seen);
      cg.consumers.set(cname, c);
      const n = r.len();
      for (let j = 0; j < n; j++) {
        const id = rawId(r.bytes(16), 0);
        const nack = cg.pel.get(id);
        if (nack === undefined) bad('consumer PEL entry not in the group PEL');
        if (nack.consumer !== null) bad('PEL entry owned twice');
        nack.consumer = c;
        c.pel.set(id, nack);
      }
    }
    for (const n of nacks) if (n.consumer === null) bad('group PEL entry without consumer');
  }
  return s;
}

function firstLive(s: Stream): StreamId {
  for (const n of s.nodes) for (let i = 0; i < n.count; i++) if (n.isLive(i)) return n.id(i);
  return ID_MIN;
}

// ---------------------------------------------------------------- rdbLoadObject

/** Read a value of RDB type `type`; returns the value as it is stored in the keyspace. */
export function readValue(r: RdbReader, type: number, lim: DecodeLimits): Stored {
  switch (type) {
    case RDB_TYPE.STRING:
      return r.stored();
    case RDB_TYPE.LIST: {
      const n = r.len();
      const out: Buffer[] = [];
      for (let i = 0; i < n; i++) out.push(r.string());
      return buildList(out, lim);
    }
    case RDB_TYPE.SET: {
      const n = r.len();
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(r.latin1());
      return buildSet(out, lim);
    }
    case RDB_TYPE.ZSET:
    case RDB_TYPE.ZSET_2: {
      const n = r.len();
      const members: string[] = [];
      const scores: number[] = [];
      for (let i = 0; i < n; i++) {
        members.push(r.latin1());
        scores.push(type === RDB_TYPE.ZSET ? r.asciiDouble() : r.binaryDouble());
      }
      return buildZset(members, scores);
    }
    case RDB_TYPE.HASH: {
      const n = r.len();
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(r.latin1(), r.latin1());
      return buildHash(out, lim);
    }
    case RDB_TYPE.HASH_METADATA:
    case RDB_TYPE.HASH_METADATA_PRE_GA: {
      // Redis 7.4: the soonest expiry (not in the RC form), then [ttl] field value triplets,
      // ttl relative to it plus one (absolute in the RC form), 0 for none.
      const min = type === RDB_TYPE.HASH_METADATA ? r.ms() : 0;
      if (min < 0 || min > EB_EXPIRE_TIME_MAX + 1) bad('hash: invalid soonest field expiry');
      const n = r.len();
      const pairs: string[] = [];
      const exps: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = r.len();
        const at = type === RDB_TYPE.HASH_METADATA && t !== 0 ? t + min - 1 : t;
        if (at > EB_EXPIRE_TIME_MAX) bad('hash: invalid field expiry');
        pairs.push(r.latin1(), r.latin1());
        exps.push(at);
      }
      return buildHashWithTtls(pairs, exps, lim);
    }
    case RDB_TYPE.HASH_LISTPACK_EX:
    case RDB_TYPE.HASH_LISTPACK_EX_PRE_GA: {
      if (type === RDB_TYPE.HASH_LISTPACK_EX) r.ms(); // the soonest expiry: derived from the fields
      const el = lpDecode(r.string());
      if (el.length % 3 !== 0) bad('hash listpackex: element count not a multiple of 3');
      const pairs: string[] = [];
      const exps: number[] = [];
      for (let i = 0; i < el.length; i += 3) {
        const t = el[i + 2];
        if (typeof t !== 'number' || t < 0 || t > EB_EXPIRE_TIME_MAX) bad('hash listpackex: invalid field expiry');
        pairs.push(elemText(el[i]), elemText(el[i + 1]));
        exps.push(t);
      }
      return buildHashWithTtls(pairs, exps, lim);
    }
    case RDB_TYPE.HASH_ZIPMAP:
      return buildHash(zipmapDecode(r.string()), lim);
    case RDB_TYPE.LIST_ZIPLIST:
      return buildList(zlDecode(r.string()).map(elemText), lim);
    case RDB_TYPE.SET_INTSET: {
      const b = r.span();
      return intsetValue(b, r.s0, r.s1, lim) ?? buildSet(intsetDecode(b.subarray(r.s0, r.s1)), lim);
    }
    case RDB_TYPE.SET_LISTPACK: {
      const b = r.span();
      const n = lpDecodeInto(b, r.s0, r.s1, true, SCRATCH);
      const set = buildSet(SCRATCH as string[], lim, n);
      if (set.isListpack) lpPrecharge(set, n, r.s1 - r.s0);
      return set;
    }
    case RDB_TYPE.ZSET_ZIPLIST:
      return zsetFromPacked(zlDecode(r.string()));
    case RDB_TYPE.ZSET_LISTPACK: {
      const b = r.span();
      const n = lpDecodeInto(b, r.s0, r.s1, false, SCRATCH);
      const z = zsetFromListpack(SCRATCH, n);
      if (z.encoding() === 'listpack') lpPrecharge(z, n / 2, r.s1 - r.s0);
      return z;
    }
    case RDB_TYPE.HASH_ZIPLIST:
      // As Redis 7.0 loads a ziplist: by its field count alone (a long value stays in it).
      return buildHash(zlDecode(r.string()).map(elemText), byCount(lim));
    case RDB_TYPE.HASH_LISTPACK: {
      const b = r.span();
      // perf: kept as its bytes when it may be (no string per field).
      const h = HashValue.fromListpack(b, r.s0, r.s1, lim.hash);
      if (h === null) bad('bad hash listpack');
      if (h !== undefined) return h;
      const n = lpDecodeInto(b, r.s0, r.s1, true, SCRATCH);
      return buildHash(SCRATCH as string[], byCount(lim), n);
    }
    case RDB_TYPE.LIST_QUICKLIST:
    case RDB_TYPE.LIST_QUICKLIST_2: {
      const nodes = r.len();
      if (nodes === 1 && type === RDB_TYPE.LIST_QUICKLIST_2 && r.p < r.end && r.b[r.p] === 2) {
        // The usual small list: one listpack node, kept as its bytes (Redis keeps the node as
        // loaded, whatever its size); past FLAT_MAX it is cut into chunks.
        r.p++;
        const b = r.span();
        const n = lpValidate(b, r.s0, r.s1);
        if (n === 0) bad('empty list');
        if (r.s1 - r.s0 <= FLAT_MAX) return ListValue.fromEntries(b.latin1Slice(r.s0 + 6, r.s1 - 1), n);
        lpDecodeInto(b, r.s0, r.s1, true, SCRATCH);
        return buildList(SCRATCH as string[], lim, n);
      }
      const out: string[] = [];
      for (let i = 0; i < nodes; i++) {
        let container = 2;
        if (type === RDB_TYPE.LIST_QUICKLIST_2) {
          container = r.len();
          if (container !== 1 && container !== 2) bad('bad quicklist container');
        }
        if (container === 1) {
          out.push(r.latin1());
          continue;
        }
        if (type === RDB_TYPE.LIST_QUICKLIST) {
          const el = zlDecode(r.string());
          if (el.length === 0) bad('empty ziplist in quicklist');
          for (const e of el) out.push(elemText(e));
        } else {
          const b = r.span();
          const n = lpDecodeInto(b, r.s0, r.s1, true, SCRATCH);
          for (let k = 0; k < n; k++) out.push(SCRATCH[k] as string);
        }
      }
      return buildList(out, lim);
    }
    case RDB_TYPE.STREAM_LISTPACKS:
    case RDB_TYPE.STREAM_LISTPACKS_2:
    case RDB_TYPE.STREAM_LISTPACKS_3:
      return readStream(r, type);
    case RDB_TYPE.MODULE_2:
      return readModuleValue(r);
    case RDB_TYPE.MODULE_PRE_GA:
      return bad('module values are not supported');
    default:
      return bad(`unknown value type ${type}`);
  }
}
