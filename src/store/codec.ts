/**
 * On-disk record layout and value encoding (Kvrocks-style mapping of Redis types onto a sorted
 * key-value store). See src/store/README.md for the whole picture; the summary:
 *
 *   meta   [ns u48 BE][user key]            -> [flags u8][exp f64 LE]?[long key]?[body]
 *   items  [sid u48 BE][sub-key]            -> [item value]
 *   gc     [id u48 BE]                      -> 'n' (dead namespace) | 'o' (dead object)
 *   sys    'format' | 'dbs' | 'nextId' | 'app:<name>'  -> msgpack
 *
 * `ns` is the namespace of one logical database (the `dbs` table maps db index -> ns), so
 * FLUSHDB / FLUSHALL / SWAPDB only rewrite that table and queue the dead namespace for
 * background deletion. `sid` is the object id of a collection stored as one record per
 * field/member/element: it is global and never reused, so RENAME, MOVE and SWAPDB of a big
 * collection rewrite one metadata record, and DEL / overwrite just queue the sid for deletion.
 *
 * =====================================================================================
 * WHERE A NEW TYPE PLUGS IN (the contract a collection type implements)
 * =====================================================================================
 *
 * 1. The value class implements `StoredValue` (a TypedValue with a `sid` field, initialised
 *    to 0). The store owns `sid`; the type only reads it.
 * 2. While `sid !== 0` the value's elements live on disk as item records, and the value MUST
 *    log every element it changes since the last `writeRecords` call (a Set of sub-keys, a
 *    dirty index range for lists...). While `sid === 0` it MUST NOT log anything (the next
 *    write is a full one, and with appendfsync no nothing ever drains the log).
 * 3. The type provides a `CollectionCodec` and it is registered with `registerCodec` (the
 *    explicit list `BUILTIN_CODECS` below, next to the string codec). The codec:
 *    - `encodeWhole(v)`: the whole value as bytes when it is small enough to live inside its
 *      metadata record (listpack-sized values), else null. Called first on every write; a
 *      non-null answer MUST also clear the change log.
 *    - `writeRecords(v, w, all)`: when `all`, emit every element with `w.put`; otherwise emit
 *      only the logged changes (`w.put` for elements that exist now, `w.del` for those that
 *      are gone), then clear the log. Each call writes O(changes) records, never O(size).
 *    - `size(v)` and optional `header(v)`: stored in the metadata record (a list keeps its
 *      head/tail indexes there, for instance).
 *    - `decodeWhole(bytes)` and `loadBegin(header, size)`: rebuild the value at start-up.
 *      `loadBegin` returns a `RecordBuilder` that is fed the item records in sub-key order
 *      (owned copies), possibly across many event-loop turns (a big collection loads in
 *      steps of ~10 ms), then finishes any remaining build work in bounded pieces (`work`)
 *      and hands the value over (`end`). `loadRecords` below does it all at once.
 * 4. A value object lives under at most one key at a time (COPY must deep-copy). Moving it
 *    (RENAME, MOVE) keeps its sid: both keys change in the same event turn, so the store sees
 *    the sid released and referenced in one batch and keeps the records.
 * 5. Sub-keys are raw bytes chosen by the type (field, member, or an ordered index for lists:
 *    big-endian so records sort by position). Item values passed to `w.put` MUST stay
 *    unchanged until the commit (pass stored immutable Buffers or fresh ones).
 */
import { createHash } from 'node:crypto';
import { T, type Db, type TypeTag, type TypedValue, type Value } from '../engine/db.js';
// Collection codecs: hash, set and sorted set live beside their value classes (src/engine/ds);
// list, stream and JSON in this directory (one file each).
import { hashCodec } from '../engine/ds/hash.js';
import { setCodec } from '../engine/ds/set.js';
import { zsetCodec } from '../engine/ds/zset.js';
import { listCodec } from './list-codec.js';
import { streamCodec } from './stream-codec.js';
import { jsonCodec } from './json-codec.js';

// ------------------------------------------------------------------------ the contract

/** A collection value that can be stored one record per element. */
export interface StoredValue extends TypedValue {
  /** Object id of the item records on disk; 0 = none. Owned by the store. */
  sid: number;
}

/**
 * Where a codec writes item records of one object (the store adds the sid prefix). Both the
 * sub-key and the value are copied before put/del returns (into the journal frame, or a
 * whole-value body), so a codec may pass scratch buffers it reuses for the next record.
 */
export interface ItemWriter {
  put(sub: Buffer, value: Buffer): void;
  del(sub: Buffer): void;
}

/** One item record as loaded at start-up (owned copies). */
export interface ItemRecord {
  readonly sub: Buffer;
  readonly value: Buffer;
}

export interface CollectionCodec<V extends StoredValue = StoredValue> {
  readonly type: TypeTag;
  /** Whole-value bytes when small, else null. Non-null MUST clear the change log. */
  encodeWhole(v: V): Buffer | null;
  /** Element count (stored in the metadata record). */
  size(v: V): number;
  /** Type-specific metadata bytes (may be empty). */
  header?(v: V): Buffer;
  /** Emit all elements (`all`) or the logged changes; then clear the log. */
  writeRecords(v: V, w: ItemWriter, all: boolean): void;
  decodeWhole(bytes: Buffer): V;
  /** Start rebuilding a value of `size` elements from its item records (see RecordBuilder). */
  loadBegin(header: Buffer, size: number): RecordBuilder<V>;
  /**
   * Optional: called at start-up once the loaded value is in the keyspace (hashes register
   * their field TTLs for active expiry here).
   */
  restored?(v: V, db: Db, key: string): void;
}

/**
 * Rebuilds one value from its item records, in pieces: the loader feeds records a chunk per
 * step and calls `work` until it returns true, so that no step blocks the event loop for long
 * whatever the size of the value. The value is not in the keyspace until `end`.
 */
export interface RecordBuilder<V extends StoredValue = StoredValue> {
  /** The next item record, in sub-key order (owned copies). */
  add(sub: Buffer, value: Buffer): void;
  /**
   * Optional: build work left once every record is in (a sorted set sorts its pairs and builds
   * its tree): do about `budget` units of it (elements; cheap ones) and return true once none
   * is left. Without it, `end` is O(1).
   */
  work?(budget: number): boolean;
  /** The finished value (every record added, `work` done). */
  end(): V;
}

/** A value from all its item records at once (point lookups, whole values packed by pack.ts). */
export function loadRecords<V extends StoredValue>(codec: CollectionCodec<V>, header: Buffer, size: number, items: Iterable<ItemRecord>): V {
  const b = codec.loadBegin(header, size);
  for (const { sub, value } of items) b.add(sub, value);
  return endBuild(b);
}

/** Finish a builder's remaining work at once and return its value. */
export function endBuild<V extends StoredValue>(b: RecordBuilder<V>): V {
  if (b.work !== undefined) while (!b.work(Infinity));
  return b.end();
}

const codecs: (CollectionCodec | undefined)[] = [];

/** Register the codec of a collection type (the builtin list below, or a test). */
export function registerCodec(c: CollectionCodec<any>): void {
  codecs[c.type] = c;
}

export function codecFor(type: TypeTag): CollectionCodec | undefined {
  return codecs[type];
}

/** Collection codecs shipped with the server, in type order. Add new types here. */
const BUILTIN_CODECS: readonly CollectionCodec<any>[] = [
  listCodec,
  setCodec,
  zsetCodec,
  hashCodec,
  streamCodec,
  jsonCodec,
];
for (const c of BUILTIN_CODECS) registerCodec(c);

// ------------------------------------------------------------------------ keys

/**
 * LMDB keys are limited (lmdb-js: 1978 bytes). User keys and sub-keys of LONG bytes or more are
 * stored as their first LONG-32 bytes plus their SHA-256, and the full bytes go in the value.
 * Short forms are always shorter than LONG, so the key length tells which form a record uses.
 */
export const LONG = 1000;
const LONG_PREFIX = LONG - 32;

export const NS_BYTES = 6;
export const SID_BYTES = 6;

/**
 * `v` (an id: a non-negative integer below 2^48) as 6 bytes big-endian at out[0]. perf: by
 * bytes (writeUIntBE's checks cost more than the write; a record key per changed key and item).
 */
function putId48(out: Buffer, v: number): void {
  if (!(v >= 0 && v < 0x1000000000000 && v === Math.floor(v))) {
    out.writeUIntBE(v, 0, 6); // throws as it did
    return;
  }
  const hi = Math.floor(v / 0x100000000);
  const lo = v - hi * 0x100000000;
  out[0] = hi >>> 8;
  out[1] = hi & 0xff;
  out[2] = lo >>> 24;
  out[3] = (lo >>> 16) & 0xff;
  out[4] = (lo >>> 8) & 0xff;
  out[5] = lo & 0xff;
}

/** Write `[ns][key]` (or its long form) into `out` from 0; returns the length. */
export function metaKey(out: Buffer, ns: number, key: string): number {
  putId48(out, ns);
  if (key.length < LONG) return NS_BYTES + out.latin1Write(key, NS_BYTES);
  out.latin1Write(key.slice(0, LONG_PREFIX), NS_BYTES);
  createHash('sha256').update(key, 'latin1').digest().copy(out, NS_BYTES + LONG_PREFIX);
  return NS_BYTES + LONG;
}

/** Write `[sid][sub]` (or its long form) into `out` from 0; returns the length. */
export function itemKey(out: Buffer, sid: number, sub: Buffer): number {
  putId48(out, sid);
  if (sub.length < LONG) return SID_BYTES + sub.copy(out, SID_BYTES);
  sub.copy(out, SID_BYTES, 0, LONG_PREFIX);
  createHash('sha256').update(sub).digest().copy(out, SID_BYTES + LONG_PREFIX);
  return SID_BYTES + LONG;
}

/** Largest key any of the functions above writes. */
export const MAX_KEY = Math.max(NS_BYTES, SID_BYTES) + LONG;

export function nsPrefix(ns: number): Buffer {
  const b = Buffer.allocUnsafe(NS_BYTES);
  b.writeUIntBE(ns, 0, NS_BYTES);
  return b;
}

export function sidPrefix(sid: number): Buffer {
  const b = Buffer.allocUnsafe(SID_BYTES);
  b.writeUIntBE(sid, 0, SID_BYTES);
  return b;
}

export function idKey(id: number): Buffer {
  return sidPrefix(id);
}

// ------------------------------------------------------------------------ metadata records

/** Flag bits of the first byte of a metadata record (low 4 bits: the type tag). */
export const MF = {
  TYPE_MASK: 0x0f,
  EXP: 0x10,
  /** Collection stored as item records under a sid (else its body is the whole value). */
  RECORDS: 0x20,
  /** The user key did not fit in the LMDB key: its full bytes follow. */
  LONG_KEY: 0x40,
} as const;

/** Bytes of the fixed part of a RECORDS body: sid u48 + size u48. */
const RECORDS_FIXED = 12;

/**
 * A bump allocator for encoded records. lmdb-js reads a value Buffer only when its batch
 * commits (it pins it by address), so bytes are handed out once and never rewritten: the
 * position only moves forward, and a full chunk is dropped (freed once lmdb-js lets go of it).
 */
export class Slab {
  private buf = Buffer.allocUnsafeSlow(64 * 1024);
  private pos = 0;

  alloc(n: number): Buffer {
    if (n > 16 * 1024) return Buffer.allocUnsafeSlow(n);
    if (this.pos + n > this.buf.length) {
      this.buf = Buffer.allocUnsafeSlow(64 * 1024);
      this.pos = 0;
    }
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

function headerLen(key: string, exp: number): number {
  return 1 + (exp !== 0 ? 8 : 0) + (key.length >= LONG ? 4 + key.length : 0);
}

function writeHeader(b: Buffer, flags: number, key: string, exp: number): number {
  let p = 1;
  if (exp !== 0) {
    flags |= MF.EXP;
    b.writeDoubleLE(exp, p);
    p += 8;
  }
  if (key.length >= LONG) {
    flags |= MF.LONG_KEY;
    b.writeUInt32LE(key.length, p);
    p += 4;
    p += b.latin1Write(key, p);
  }
  b[0] = flags;
  return p;
}

/**
 * Metadata record of a string key: header + the value bytes. `v` is the Entry's stored form
 * (db.ts `Stored`): a compact string or integer is written straight from it, without the
 * Buffer copy `Entry.value` would make.
 */
export function encodeString(slab: Slab, key: string, exp: number, v: Uint8Array | string | number): Buffer {
  const s = typeof v === 'number' ? String(v) : v;
  const h = headerLen(key, exp);
  const b = slab.alloc(h + s.length);
  writeHeader(b, T.STRING, key, exp);
  if (typeof s === 'string') b.latin1Write(s, h);
  else b.set(s, h);
  return b;
}

/**
 * A string key's metadata record written straight into a journal frame (FrameBuilder.reserve):
 * metaKey's bytes at `p` (`key` shorter than LONG), then encodeString's record, the same bytes
 * as those two write, without a Buffer per record. Returns the value's length.
 */
export function stringMetaLen(key: string, exp: number, s: Uint8Array | string): number {
  return headerLen(key, exp) + s.length;
}

export function writeStringMeta(out: Buffer, p: number, ns: number, key: string, exp: number, s: Uint8Array | string): void {
  out.writeUIntBE(ns, p, NS_BYTES);
  p += NS_BYTES;
  p += out.latin1Write(key, p);
  // writeHeader for a short key: [flags][exp f64 LE, when set].
  if (exp !== 0) {
    out[p] = T.STRING | MF.EXP;
    out.writeDoubleLE(exp, p + 1);
    p += 9;
  } else out[p++] = T.STRING;
  if (typeof s === 'string') out.latin1Write(s, p);
  else out.set(s, p);
}

/** Metadata record of a collection stored whole. */
export function encodeWholeMeta(slab: Slab, key: string, exp: number, type: TypeTag, body: Buffer): Buffer {
  const h = headerLen(key, exp);
  const b = slab.alloc(h + body.length);
  writeHeader(b, type, key, exp);
  body.copy(b, h);
  return b;
}

/** Metadata record of a collection stored as item records. */
export function encodeRecordsMeta(slab: Slab, key: string, exp: number, type: TypeTag, sid: number, size: number, header: Buffer | undefined): Buffer {
  const h = headerLen(key, exp);
  const hl = header === undefined ? 0 : header.length;
  const b = slab.alloc(h + RECORDS_FIXED + hl);
  writeHeader(b, type | MF.RECORDS, key, exp);
  b.writeUIntLE(sid, h, 6);
  b.writeUIntLE(size, h + 6, 6);
  if (hl > 0) header!.copy(b, h + RECORDS_FIXED);
  return b;
}

const EMPTY = Buffer.alloc(0);

/** A decoded metadata record (fields valid until the next decodeMeta call). */
export class MetaView {
  type: TypeTag = T.STRING;
  flags = 0;
  exp = 0;
  /** The user key as latin1 when MF.LONG_KEY (else '': it is the LMDB key minus NS_BYTES). */
  key = '';
  /** Whole body (small collections) or the type header (RECORDS); empty for strings. */
  body: Buffer = EMPTY;
  /** A string's value: bytes [start, end) of `raw` (lmdb-js's read buffer: copy it now). */
  raw: Buffer = EMPTY;
  start = 0;
  end = 0;
  sid = 0;
  size = 0;
}

/**
 * Decode a metadata record. `bytes[0, size)` is the value, possibly lmdb-js's reused read
 * buffer: everything kept is copied (the body into a pooled Buffer: at start-up a million
 * string values then share a few thousand ArrayBuffers instead of owning one each). The user
 * key is set only for long keys (MF.LONG_KEY); otherwise it is the LMDB key minus NS_BYTES.
 */
export function decodeMeta(bytes: Buffer, size: number, out: MetaView): MetaView {
  const flags = bytes[0];
  out.flags = flags;
  out.type = (flags & MF.TYPE_MASK) as TypeTag;
  let p = 1;
  if (flags & MF.EXP) {
    out.exp = bytes.readDoubleLE(1);
    p = 9;
  } else {
    out.exp = 0;
  }
  if (flags & MF.LONG_KEY) {
    const n = bytes.readUInt32LE(p);
    out.key = bytes.latin1Slice(p + 4, p + 4 + n);
    p += 4 + n;
  } else {
    out.key = ''; // the caller takes it from the LMDB key
  }
  if (flags & MF.RECORDS) {
    out.sid = bytes.readUIntLE(p, 6);
    out.size = bytes.readUIntLE(p + 6, 6);
    p += RECORDS_FIXED;
  } else {
    out.sid = 0;
    out.size = 0;
    if (out.type === T.STRING) {
      // Strings: no Buffer of their own here (the loader stores them in compact form).
      out.raw = bytes;
      out.start = p;
      out.end = size;
      out.body = EMPTY;
      return out;
    }
  }
  const body = Buffer.allocUnsafe(size - p);
  bytes.copy(body, 0, p, size);
  out.body = body;
  return out;
}

/**
 * lmdb-js key and value handling of the `meta` database for loading: keys come back as latin1
 * strings WITHOUT their namespace prefix (the user key, or the short form of a long one), and
 * values go straight to decodeMeta from the reused read buffer, so iterating a million records
 * allocates one string per key and no Buffer besides the kept body.
 */
export const latin1Keys = {
  writeKey(key: Buffer | string, target: Buffer, start: number): number {
    if (typeof key === 'string') return start + target.latin1Write(key, start);
    target.set(key, start);
    return start + key.length;
  },
  readKey(target: Buffer, start: number, end: number): string {
    return target.latin1Slice(start + NS_BYTES, end);
  },
};

/**
 * Long-form item records carry their full sub-key in the value: [u32 LE length][sub][value].
 * Returns the buffer to store for `value` under sub-key `sub`.
 */
export function encodeLongItem(slab: Slab, sub: Buffer, value: Buffer): Buffer {
  const b = slab.alloc(4 + sub.length + value.length);
  b.writeUInt32LE(sub.length, 0);
  sub.copy(b, 4);
  value.copy(b, 4 + sub.length);
  return b;
}

/** A long-form item record (its LMDB key minus the sid is LONG bytes) back into (sub, value). */
export function decodeLongItem(v: Buffer): ItemRecord {
  const n = v.readUInt32LE(0);
  return { sub: v.subarray(4, 4 + n), value: v.subarray(4 + n) };
}

const u8slice = Uint8Array.prototype.slice;

/**
 * lmdb-js key handling of the `items` database for loading: a key comes back as a copy of its
 * sub-key alone (the sid stripped), one Buffer per record instead of the key plus a view of it.
 * A sub-key of exactly LONG bytes is the short form of a long one (decodeLongItem).
 */
export const subKeys = {
  writeKey: latin1Keys.writeKey,
  readKey(target: Buffer, start: number, end: number): Buffer {
    return u8slice.call(target, start + SID_BYTES, end) as Buffer;
  },
};

/** The value stored in a metadata record, for types the store knows how to rebuild. */
export function isStored(v: Value): v is StoredValue {
  return typeof (v as StoredValue).sid === 'number';
}
