/**
 * RdbWriter: rdb.c's primitive writers (rdbSaveLen, rdbSaveRawString with its integer and LZF
 * encodings, binary doubles, millisecond times) into a growing buffer.
 */
import { copyBytes, lzfCompress, lzfCompressLatin1, lzfMem, lzfOut } from './lzf.js';
import { lpIntOf } from './listpack.js';

export const RDB_VERSION = 10;

/** Type bytes (rdb.h). */
export const RDB_TYPE = {
  STRING: 0, LIST: 1, SET: 2, ZSET: 3, HASH: 4, ZSET_2: 5, MODULE_PRE_GA: 6, MODULE_2: 7,
  HASH_ZIPMAP: 9, LIST_ZIPLIST: 10, SET_INTSET: 11, ZSET_ZIPLIST: 12, HASH_ZIPLIST: 13,
  LIST_QUICKLIST: 14, STREAM_LISTPACKS: 15, HASH_LISTPACK: 16, ZSET_LISTPACK: 17,
  LIST_QUICKLIST_2: 18, STREAM_LISTPACKS_2: 19, SET_LISTPACK: 20, STREAM_LISTPACKS_3: 21,
  // Redis 7.4 (RDB 12): hashes with field TTLs, in the 7.4 RC form and the final one.
  HASH_METADATA_PRE_GA: 22, HASH_LISTPACK_EX_PRE_GA: 23, HASH_METADATA: 24, HASH_LISTPACK_EX: 25,
} as const;

/** Redis 7.4's RDB version: what a payload holding a hash with field TTLs carries. */
export const RDB_VERSION_HFE = 12;

/** Module value opcodes (RDB_MODULE_OPCODE_*). */
export const RDB_MODULE_OP = { EOF: 0, SINT: 1, UINT: 2, FLOAT: 3, DOUBLE: 4, STRING: 5 } as const;

/** moduleTypeEncodeId: 9 name characters of 6 bits each, then a 10-bit encoding version. */
const MODULE_CHARSET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
export function moduleTypeId(name: string, encver: number): bigint {
  let id = 0n;
  for (let j = 0; j < 9; j++) id = (id << 6n) | BigInt(MODULE_CHARSET.indexOf(name[j]));
  return (id << 10n) | BigInt(encver);
}

/** moduleTypeNameByID: the name and encoding version in a module id. */
export function moduleTypeName(id: bigint): { name: string; encver: number } {
  let name = '';
  for (let j = 0; j < 9; j++) name = MODULE_CHARSET[Number((id >> BigInt(10 + 6 * j)) & 63n)] + name;
  return { name, encver: Number(id & 1023n) };
}

/** RedisJSON's module type ("ReJSON-RL") and the encoding version its rdb_save writes. */
export const REJSON_NAME = 'ReJSON-RL';
export const REJSON_ENCVER = 3;

/** Opcodes of RDB files. */
export const RDB_OP = {
  FUNCTION2: 245, FUNCTION_PRE_GA: 246, MODULE_AUX: 247, IDLE: 248, FREQ: 249, AUX: 250,
  RESIZEDB: 251, EXPIRETIME_MS: 252, EXPIRETIME: 253, SELECTDB: 254, EOF: 255,
} as const;

/** Bytes of rdbSaveLen(n) for n < 2^32. */
export function lenSize(n: number): number {
  return n < 64 ? 1 : n < 16384 ? 2 : 5;
}

/** rdbSaveLen(n) (n < 2^32) written at b[p]: the position after it. */
export function putLen(b: Buffer, p: number, n: number): number {
  if (n < 64) {
    b[p] = n;
    return p + 1;
  }
  if (n < 16384) {
    b[p] = 0x40 | (n >>> 8);
    b[p + 1] = n & 0xff;
    return p + 2;
  }
  b[p] = 0x80;
  b.writeUInt32BE(n, p + 1);
  return p + 5;
}

export class RdbWriter {
  buf: Buffer;
  pos = 0;
  /** rdbcompression: LZF for strings longer than 20 bytes. */
  compress = true;

  constructor(size = 4096) {
    this.buf = Buffer.allocUnsafe(size);
  }

  reset(): this {
    this.pos = 0;
    return this;
  }

  room(n: number): void {
    if (this.pos + n > this.buf.length) {
      const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n + 256));
      this.buf.copy(b, 0, 0, this.pos);
      this.buf = b;
    }
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.pos++] = v;
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  rawLatin1(s: string): void {
    this.room(s.length);
    this.pos += this.buf.latin1Write(s, this.pos);
  }

  /** rdbSaveLen */
  len(n: number): void {
    this.room(9);
    if (n <= 0xffffffff) {
      this.pos = putLen(this.buf, this.pos, n);
    } else {
      this.buf[this.pos++] = 0x81;
      this.buf.writeBigUInt64BE(BigInt(n), this.pos);
      this.pos += 8;
    }
  }

  /** rdbSaveLen of a 64-bit unsigned value given as a bigint. */
  lenBig(n: bigint): void {
    if (n <= 0xffffffffn) return this.len(Number(n));
    this.room(9);
    this.buf[this.pos++] = 0x81;
    this.buf.writeBigUInt64BE(BigInt.asUintN(64, n), this.pos);
    this.pos += 8;
  }

  /** rdbSaveMillisecondTime: int64 little-endian. */
  ms(t: number | bigint): void {
    this.room(8);
    if (typeof t === 'number' && Number.isSafeInteger(t)) {
      // perf: two 32-bit halves instead of a BigInt per key with a TTL.
      const hi = Math.floor(t / 4294967296);
      this.buf.writeUInt32LE(t - hi * 4294967296, this.pos);
      this.buf.writeInt32LE(hi, this.pos + 4);
    } else {
      this.buf.writeBigInt64LE(BigInt.asIntN(64, BigInt(t)), this.pos);
    }
    this.pos += 8;
  }

  /** rdbSaveBinaryDoubleValue */
  double(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** rdbEncodeInteger: true when v fits an INT8/16/32 encoding (written). */
  private encInt(v: number): boolean {
    this.room(5);
    const b = this.buf;
    if (v >= -128 && v <= 127) {
      b[this.pos++] = 0xc0;
      b.writeInt8(v, this.pos++);
    } else if (v >= -32768 && v <= 32767) {
      b[this.pos++] = 0xc1;
      b.writeInt16LE(v, this.pos);
      this.pos += 2;
    } else if (v >= -2147483648 && v <= 2147483647) {
      b[this.pos++] = 0xc2;
      b.writeInt32LE(v, this.pos);
      this.pos += 4;
    } else {
      return false;
    }
    return true;
  }

  /** rdbSaveLongLongAsStringObject */
  intString(v: number | bigint): void {
    if (typeof v === 'number' && this.encInt(v)) return;
    if (typeof v === 'bigint' && v >= -2147483648n && v <= 2147483647n && this.encInt(Number(v))) return;
    const s = String(v);
    this.len(s.length);
    this.rawLatin1(s);
  }

  /** rdbSaveRawString: integer encoding for short canonical integers, LZF past 20 bytes. */
  string(v: Uint8Array | string, n = v.length): void {
    if (n <= 11 && n === v.length) {
      const iv = lpIntOf(v);
      if (iv !== null && typeof iv === 'number' && this.encInt(iv)) return;
    }
    if (this.compress && n > 20) {
      // perf: a string's chars go straight into the compressor's memory.
      const c = typeof v === 'string' ? lzfCompressLatin1(v, n, n - 4) : lzfCompress(v, n, n - 4);
      if (c >= 0) {
        this.u8(0xc3);
        this.len(c);
        this.len(n);
        this.copyIn(lzfMem(), lzfOut, c);
        return;
      }
    }
    this.len(n);
    if (typeof v === 'string') this.rawLatin1(v);
    else this.copyIn(v, 0, n);
  }

  /** Bytes src[s, s + n). */
  private copyIn(src: Uint8Array, s: number, n: number): void {
    this.room(n);
    copyBytes(src, s, n, this.buf, this.pos);
    this.pos += n;
  }

  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}
