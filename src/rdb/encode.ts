/**
 * Values into Redis 7.0's RDB value encoding (rdbSaveObjectType + rdbSaveObject, RDB version
 * 10), and DUMP payloads (createDumpPayload: value, 2-byte RDB version, CRC-64 footer).
 *
 * Encodings follow Redis 7.0's choices, not our in-memory ones where they differ:
 *  - strings: integer encoding for short canonical integers, LZF past 20 bytes when it saves
 *    at least 4 bytes (rdbSaveRawString);
 *  - lists: quicklist 2 with listpack nodes cut where 7.0's quicklist cuts them when the
 *    elements are pushed at the tail (_quicklistNodeAllowInsert with list-max-listpack-size);
 *  - sets: intset while our set is an intset, else a plain set (7.0 has no listpack sets);
 *  - sorted sets: listpack while small (member, score as d2string), else zset2 (members from
 *    the highest score down, binary doubles);
 *  - hashes: listpack while small, else plain field/value pairs;
 *  - streams: listpacks v2 (RDB_TYPE_STREAM_LISTPACKS_2) with groups, PELs and consumers.
 * Known differences in bytes (the data is the same): see README "Moving data in and out".
 */
import { T, type Entry, type TypedValue } from '../engine/db.js';
import type { ListValue } from '../engine/ds/list.js';
import { allowInsert } from '../engine/ds/listpack.js';
import type { SetValue } from '../engine/ds/set.js';
import { int64Of } from '../engine/ds/set.js';
import type { HashValue } from '../engine/ds/hash.js';
import type { ZSet } from '../engine/ds/zset.js';
import { type Stream, type StreamId, type StreamNode, emptyEntryBytes } from '../engine/ds/stream.js';
import { formatDouble17g } from '../resp/ascii.js';
import { Crc64 } from './crc64.js';
import { FIXED_SMALL, LZF_BUNDLED, copyBytes, fixed } from './lzf.js';
import { LpWriter, backlenSize } from './listpack.js';
import { RDB_MODULE_OP, RDB_TYPE, RDB_VERSION, RDB_VERSION_HFE, REJSON_ENCVER, REJSON_NAME, RdbWriter, lenSize, moduleTypeId, putLen } from './writer.js';
import { type JsonDoc, serialize } from '../engine/ds/json.js';

/** A value we cannot express in Redis 7.0's format (the command answers this text). */
export class DumpUnsupported extends Error {}

/** Encoding parameters taken from the server's configuration. */
export interface EncodeOptions {
  /** list-max-listpack-size */
  listFill: number;
}

const lp = new LpWriter();

/**
 * rdbSaveObjectType + rdbSaveObject of one value; with `key`, the key is written between the
 * type and the value (rdbSaveKeyValuePair's layout in RDB files).
 */
export function writeValue(w: RdbWriter, v: Entry['v'], opt: EncodeOptions, key?: string): void {
  if (typeof v === 'number') {
    w.u8(RDB_TYPE.STRING);
    if (key !== undefined) w.string(key);
    w.intString(v);
    return;
  }
  if (typeof v === 'string' || v instanceof Uint8Array) {
    w.u8(RDB_TYPE.STRING);
    if (key !== undefined) w.string(key);
    w.string(v);
    return;
  }
  const tv = v as TypedValue;
  switch (tv.type) {
    case T.LIST: return writeList(w, tv as unknown as ListValue, opt, key);
    case T.SET: return writeSet(w, tv as unknown as SetValue, key);
    case T.ZSET: return writeZset(w, tv as unknown as ZSet, key);
    case T.HASH: return writeHash(w, tv as unknown as HashValue, key);
    case T.STREAM: return writeStream(w, tv as unknown as Stream, key);
    case T.JSON: return writeJson(w, tv as unknown as JsonDoc, key);
    default: throw new DumpUnsupported('ERR DUMP of this value type is not supported');
  }
}

/** The type byte, then the key when given. */
function typeAndKey(w: RdbWriter, type: number, key: string | undefined): void {
  w.u8(type);
  if (key !== undefined) w.string(key);
}

// ---------------------------------------------------------------- lists

/** writeList's walk state (perf: one module-level callback instead of a closure per list). */
let listNodes: Buffer[] | null = null;
let listCount = 0;
let listFill = 0;

function packListElem(e: string | Buffer): void {
  if (listCount > 0 && !allowInsert(lp.bytes, listCount, listFill, e.length)) {
    (listNodes ??= []).push(Buffer.from(lp.finish()));
    lp.start();
    listCount = 0;
  }
  lp.str(e);
  listCount++;
}

function writeList(w: RdbWriter, l: ListValue, opt: EncodeOptions, key?: string): void {
  typeAndKey(w, RDB_TYPE.LIST_QUICKLIST_2, key);
  const flat = l.listpack;
  if (flat !== null) {
    // A flat list is its one node's listpack: written as it is (rdbSaveRawString: LZF when it pays).
    w.len(1);
    w.len(2); // QUICKLIST_NODE_CONTAINER_PACKED
    w.string(flat);
    return;
  }
  // Node boundaries first (a listpack per node), then the node count, then the nodes.
  listNodes = null;
  listCount = 0;
  listFill = opt.listFill;
  lp.start();
  l.scan(0, l.length - 1, packListElem);
  let nodes = listNodes as Buffer[] | null;
  listNodes = null;
  if (nodes === null && listCount > 0) {
    // perf: one node (the usual small list), written from the packer as it is.
    w.len(1);
    w.len(2); // QUICKLIST_NODE_CONTAINER_PACKED
    w.string(lp.buf, lp.finishLength());
    return;
  }
  nodes ??= [];
  if (listCount > 0) nodes.push(Buffer.from(lp.finish()));
  w.len(nodes.length);
  for (const n of nodes) {
    w.len(2); // QUICKLIST_NODE_CONTAINER_PACKED
    w.string(n);
  }
}

// ---------------------------------------------------------------- sets

function writeSet(w: RdbWriter, s: SetValue, key?: string): void {
  if (s.isIntset) {
    const vals: bigint[] = [];
    let min = 0n;
    let max = 0n;
    s.forEach((m) => {
      const x = int64Of(m)!;
      vals.push(x);
      if (x < min) min = x;
      if (x > max) max = x;
    });
    const width = min >= -32768n && max <= 32767n ? 2 : min >= -2147483648n && max <= 2147483647n ? 4 : 8;
    const b = Buffer.allocUnsafe(8 + width * vals.length);
    b.writeUInt32LE(width, 0);
    b.writeUInt32LE(vals.length, 4);
    let o = 8;
    for (const x of vals) {
      if (width === 2) b.writeInt16LE(Number(x), o);
      else if (width === 4) b.writeInt32LE(Number(x), o);
      else b.writeBigInt64LE(x, o);
      o += width;
    }
    typeAndKey(w, RDB_TYPE.SET_INTSET, key);
    w.string(b);
    return;
  }
  typeAndKey(w, RDB_TYPE.SET, key);
  w.len(s.size);
  s.forEach((m) => w.string(m));
}

// ---------------------------------------------------------------- sorted sets

/** LLONG_MAX / 2 as a double: double2ll's range. */
const HALF_LLONG = 4611686018427387903;

/**
 * d2string (Redis 7.0.15 util.c): how a score is written into a listpack. Integral values
 * within +-LLONG_MAX/2 (double2ll) print as integers, others with %.17g.
 */
export function d2string(v: number): string {
  if (v !== v) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  if (Number.isSafeInteger(v)) return String(v); // perf: the same digits, without a BigInt
  if (v >= -HALF_LLONG && v <= HALF_LLONG && Number.isInteger(v)) return BigInt(v).toString();
  return formatDouble17g(v);
}

function writeZset(w: RdbWriter, z: ZSet, key?: string): void {
  if (z.encoding() === 'listpack') {
    lp.start();
    const loaded = z.loadedPairs;
    if (loaded !== null) {
      // perf: a set loaded and not used since is written without building its tree.
      const mem = z.members;
      for (let i = 0; i < loaded.length; i++) {
        lp.text(mem.memberAt(loaded[i]));
        lp.text(d2string(mem.scores[loaded[i]]));
      }
    } else {
      for (let c = z.tree.first(); c !== null; c = c.next()) {
        lp.text(c.member);
        lp.text(d2string(c.score));
      }
    }
    const n = lp.finishLength();
    typeAndKey(w, RDB_TYPE.ZSET_LISTPACK, key);
    w.string(lp.buf, n);
    return;
  }
  const t = z.tree;
  typeAndKey(w, RDB_TYPE.ZSET_2, key);
  w.len(z.size);
  // rdbSaveObject walks the skiplist from the tail (highest) to the head.
  for (let c = t.last(); c !== null; c = c.prev()) {
    w.string(c.member);
    w.double(c.score);
  }
}

// ---------------------------------------------------------------- hashes

/** perf: one function for every listpack hash (a closure per DUMP/RDB key was garbage). */
const packPair = (v: string, f: string): void => {
  lp.text(f);
  lp.text(v);
};

function writeHash(w: RdbWriter, h: HashValue, key?: string): void {
  if (h.volatile) return writeHashWithTtls(w, h, key);
  const bytes = h.listpackBytes;
  if (bytes !== null) {
    // Redis's own bytes: written as they are held (LZF-compressed as rdbSaveRawString would).
    typeAndKey(w, RDB_TYPE.HASH_LISTPACK, key);
    w.string(bytes);
    return;
  }
  if (h.isListpack) {
    lp.start();
    h.forEach(packPair);
    const n = lp.finishLength();
    typeAndKey(w, RDB_TYPE.HASH_LISTPACK, key);
    w.string(lp.buf, n);
    return;
  }
  typeAndKey(w, RDB_TYPE.HASH, key);
  w.len(h.size);
  h.forEach((v, f) => {
    w.string(f);
    w.string(v);
  });
}

/**
 * A hash with field TTLs in Redis 7.4's form (rdbSaveObject, RDB 12): a listpack hash as
 * RDB_TYPE_HASH_LISTPACK_EX (the soonest expiry, then a listpack of field, value, expiry
 * triplets with 0 for none, in our listpackex order: soonest first), a hashtable as
 * RDB_TYPE_HASH_METADATA (the soonest expiry, the count, then per field its expiry relative
 * to the soonest plus one, 0 for none, the field and the value).
 */
function writeHashWithTtls(w: RdbWriter, h: HashValue, key?: string): void {
  let min = Infinity;
  h.forEach((_v, f) => {
    const at = h.fieldExpire(f);
    if (at !== 0 && at < min) min = at;
  });
  if (min === Infinity) min = 0;
  if (h.isListpack) {
    lp.start();
    h.forEach((v, f) => {
      lp.str(f);
      lp.str(v);
      lp.int(h.fieldExpire(f));
    });
    const body = lp.finish();
    typeAndKey(w, RDB_TYPE.HASH_LISTPACK_EX, key);
    w.ms(min);
    w.string(body);
    return;
  }
  typeAndKey(w, RDB_TYPE.HASH_METADATA, key);
  w.ms(min);
  w.len(h.size);
  h.forEach((v, f) => {
    const at = h.fieldExpire(f);
    w.len(at === 0 ? 0 : at - min + 1);
    w.string(f);
    w.string(v);
  });
}

/** True when a value's payload needs Redis 7.4's RDB version (a hash with field TTLs). */
export function needsHfeVersion(v: Entry['v']): boolean {
  return typeof v === 'object' && !(v instanceof Uint8Array) && (v as TypedValue).type === T.HASH && (v as unknown as HashValue).volatile;
}

// ---------------------------------------------------------------- JSON documents

const REJSON_ID = moduleTypeId(REJSON_NAME, REJSON_ENCVER);

/**
 * A JSON document as RedisJSON saves it (type_methods::rdb_save, encoding version 3): a
 * module value (RDB_TYPE_MODULE_2) of type ReJSON-RL holding one string, the document
 * serialized compactly, then the module EOF opcode.
 */
function writeJson(w: RdbWriter, doc: JsonDoc, key?: string): void {
  typeAndKey(w, RDB_TYPE.MODULE_2, key);
  w.lenBig(REJSON_ID);
  w.len(RDB_MODULE_OP.STRING);
  w.string(Buffer.from(serialize(doc.root), 'utf8'));
  w.len(RDB_MODULE_OP.EOF);
}

// ---------------------------------------------------------------- streams

/** The 16-byte big-endian form of an id (radix tree keys, PEL entries). */
export function idBytes(id: StreamId, out = Buffer.allocUnsafe(16), o = 0): Buffer {
  for (let i = 0; i < 8; i++) out.writeUInt16BE(id.charCodeAt(i), o + 2 * i);
  return out;
}

function half(id: StreamId, o: number): bigint {
  return (BigInt(id.charCodeAt(o)) << 48n) | (BigInt(id.charCodeAt(o + 1)) << 32n)
    | (BigInt(id.charCodeAt(o + 2)) << 16n) | BigInt(id.charCodeAt(o + 3));
}

function halfDelta(a: StreamId, b: StreamId, o: number): number | bigint {
  const d = BigInt.asIntN(64, half(a, o) - half(b, o));
  return d >= -9007199254740991n && d <= 9007199254740991n ? Number(d) : d;
}

/** Listpack bytes of a string element of n bytes (no integer form). */
function strSize(n: number): number {
  const h = n < 64 ? 1 : n < 4096 ? 2 : 5;
  return h + n + backlenSize(h + n);
}

const FLAG_DELETED = 1;
const FLAG_SAMEFIELDS = 2;

/**
 * A tombstone read from a data dir written before tombstones kept their contents: only its
 * size is known. Re-created as a SAMEFIELDS entry whose first value is padded to that size
 * (when possible), so the node's size and boundaries stay Redis's.
 */
function tombstoneOfSize(n: StreamNode, id: StreamId, size: number | undefined): void {
  const mf = n.masterFields;
  const base = emptyEntryBytes(n, id);
  const target = size ?? base;
  let pad = 0;
  for (let len = Math.max(0, target - base - 2 - 5); len <= target - base + 2; len++) {
    if (strSize(len) - 2 === target - base) {
      pad = len;
      break;
    }
  }
  lp.int(FLAG_DELETED | FLAG_SAMEFIELDS);
  lp.int(halfDelta(id, n.master, 0));
  lp.int(halfDelta(id, n.master, 4));
  for (let k = 0; k < mf.length; k++) lp.str(k === 0 && pad > 0 ? 'x'.repeat(pad) : EMPTY);
  lp.int(mf.length + 3);
}

/** The node's listpack, as streamAppendItem built it, tombstones included. */
function nodeListpack(n: StreamNode): Buffer {
  lp.start();
  lp.int(n.live);
  lp.int(n.dead);
  const mf = n.masterFields;
  lp.int(mf.length);
  for (const f of mf) lp.str(f);
  lp.int(0);
  for (let i = 0; i < n.count; i++) {
    const id = n.id(i);
    const fv = n.contents(i);
    if (fv === null) {
      tombstoneOfSize(n, id, n.tombSize(i));
      continue;
    }
    const flags = n.isLive(i) ? 0 : FLAG_DELETED;
    const nf = fv.length >> 1;
    let same = nf === mf.length;
    for (let k = 0; same && k < nf; k++) if (!mf[k].equals(fv[2 * k])) same = false;
    lp.int(flags | (same ? FLAG_SAMEFIELDS : 0));
    lp.int(halfDelta(id, n.master, 0));
    lp.int(halfDelta(id, n.master, 4));
    if (!same) lp.int(nf);
    for (let k = 0; k < nf; k++) {
      if (!same) lp.str(fv[2 * k]);
      lp.str(fv[2 * k + 1]);
    }
    lp.int(same ? nf + 3 : 2 * nf + 4);
  }
  return lp.finish();
}

const EMPTY = Buffer.alloc(0);

function writeId(w: RdbWriter, id: StreamId): void {
  w.lenBig(half(id, 0));
  w.lenBig(half(id, 4));
}

function writeStream(w: RdbWriter, s: Stream, key?: string): void {
  typeAndKey(w, RDB_TYPE.STREAM_LISTPACKS_2, key);
  w.len(s.nodes.length);
  const idb = Buffer.allocUnsafe(16);
  for (const n of s.nodes) {
    w.string(idBytes(n.master, idb));
    w.string(nodeListpack(n));
  }
  w.len(s.length);
  writeId(w, s.lastId);
  writeId(w, s.firstId);
  writeId(w, s.maxDeletedId);
  w.lenBig(BigInt.asUintN(64, s.entriesAdded));
  const groups = s.sortedGroups();
  w.len(groups.length);
  for (const g of groups) {
    w.string(g.name);
    writeId(w, g.lastId);
    w.lenBig(BigInt.asUintN(64, g.entriesRead));
    w.len(g.pel.size);
    for (const id of g.pel.keys()) {
      const nack = g.pel.get(id)!;
      w.raw(idBytes(id, idb));
      w.ms(nack.deliveryTime);
      w.lenBig(BigInt(nack.deliveryCount));
    }
    const consumers = g.sortedConsumers();
    w.len(consumers.length);
    for (const c of consumers) {
      w.string(c.name);
      w.ms(c.seenTime);
      w.len(c.pel.size);
      for (const id of c.pel.keys()) w.raw(idBytes(id, idb));
    }
  }
}

// ---------------------------------------------------------------- DUMP payloads

const dumpWriter = new RdbWriter(4096);
/** A writer grown past this by a big value is replaced by a small one at the next payload. */
const DUMP_KEEP = 1024 * 1024;

/** A payload of dumpPayloadShared: buf[start, end), valid until the next payload or LZF job. */
export interface PayloadView {
  buf: Buffer;
  start: number;
  end: number;
}

const payloadView: PayloadView = { buf: dumpWriter.buf, start: 0, end: 0 };

/**
 * createDumpPayload into shared memory (perf: DUMP writes the reply from there, without a
 * Buffer of its own).
 */
export function dumpPayloadShared(v: Entry['v'], opt: EncodeOptions): PayloadView {
  if (composeOne(v)) return payloadView;
  if (dumpWriter.buf.length > DUMP_KEEP) dumpWriter.buf = Buffer.allocUnsafe(4096);
  const w = dumpWriter.reset();
  writeValue(w, v, opt);
  w.room(10);
  const version = needsHfeVersion(v) ? RDB_VERSION_HFE : RDB_VERSION;
  w.buf[w.pos++] = version & 0xff;
  w.buf[w.pos++] = version >> 8;
  const crc = new Crc64().update(w.buf, 0, w.pos);
  crc.writeLE(w.buf, w.pos);
  w.pos += 8;
  payloadView.buf = w.buf;
  payloadView.start = 0;
  payloadView.end = w.pos;
  return payloadView;
}

/** createDumpPayload: a fresh Buffer with the value, RDB version 10 and the CRC-64. */
export function dumpPayload(v: Entry['v'], opt: EncodeOptions): Buffer {
  const p = dumpPayloadShared(v, opt);
  return Buffer.from(p.buf.subarray(p.start, p.end));
}

/** Room kept before a composed string's bytes for the type, prefix and length bytes. */
const HEAD_ROOM = 16;
/** Longest string composeOne takes (its bytes, the head and the footer in the output region). */
const COMPOSE_MAX = FIXED_SMALL - 2 * HEAD_ROOM;

/**
 * The payload of a value that is one string after its type byte (a listpack hash, a string
 * past 20 bytes, a flat list after its two length bytes), composed in the LZF codec's memory:
 * the string compressed straight into the output region (or moved there raw when LZF does not
 * save 4 bytes, as rdbSaveRawString), the head written before it, the footer after it and the
 * CRC-64 computed in place. perf: the general path copied the compressed bytes into the
 * writer, then into the CRC's staging area (a 100-field hash: two copies of 830 bytes).
 * False when `v` is not such a value (or too long): the caller writes it the general way.
 */
function composeOne(v: Entry['v']): boolean {
  let type: number;
  let s: string | Uint8Array;
  let list = false;
  if (typeof v === 'string' || v instanceof Uint8Array) {
    type = RDB_TYPE.STRING;
    s = v;
  } else if (typeof v !== 'object') {
    return false;
  } else if ((v as TypedValue).type === T.HASH) {
    const h = v as unknown as HashValue;
    const lp = h.listpackBytes;
    if (lp === null || h.volatile) return false;
    type = RDB_TYPE.HASH_LISTPACK;
    s = lp;
  } else if ((v as TypedValue).type === T.LIST) {
    const flat = (v as unknown as ListValue).listpack;
    if (flat === null) return false;
    type = RDB_TYPE.LIST_QUICKLIST_2;
    s = flat;
    list = true;
  } else {
    return false;
  }
  const n = s.length;
  if (n <= 20 || n > COMPOSE_MAX) return false;
  const mem = fixed.mem;
  const inAt = fixed.a;
  const at = fixed.b + HEAD_ROOM;
  if (typeof s === 'string') mem.latin1Write(s, inAt, n);
  else copyBytes(s, 0, n, mem, inAt);
  const c = fixed.x.lzf_compress(inAt, n, at, n - 4, LZF_BUNDLED ? 1 : 0);
  let start: number;
  let end: number;
  if (c > 0) {
    start = at - lenSize(c) - lenSize(n) - 1;
    mem[start] = 0xc3; // RDB_ENC_LZF
    putLen(mem, putLen(mem, start + 1, c), n);
    end = at + c;
  } else {
    mem.copyWithin(at, inAt, inAt + n);
    start = at - lenSize(n);
    putLen(mem, start, n);
    end = at + n;
  }
  if (list) {
    start -= 2;
    mem[start] = 1; // one node
    mem[start + 1] = 2; // QUICKLIST_NODE_CONTAINER_PACKED
  }
  mem[--start] = type;
  mem[end++] = RDB_VERSION & 0xff;
  mem[end++] = RDB_VERSION >> 8;
  new Crc64().update(mem, start, end).writeLE(mem, end);
  payloadView.buf = mem;
  payloadView.start = start;
  payloadView.end = end + 8;
  return true;
}
