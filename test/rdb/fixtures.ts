/**
 * RDB value fixtures written byte by byte from the RDB format (rdb.h / rdb.c, ziplist.c,
 * zipmap.c, intset.c, listpack.c), independently of src/rdb, for the encodings Redis no longer
 * writes (linked lists, ziplists, zipmaps, quicklist 1, ASCII doubles, stream v1...).
 */
import { crc64 } from '../../dist/rdb/crc64.js';

export function len(n: number): Buffer {
  if (n < 64) return Buffer.from([n]);
  if (n < 16384) return Buffer.from([0x40 | (n >> 8), n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = 0x80;
  b.writeUInt32BE(n, 1);
  return b;
}

/** A raw RDB string (no integer or LZF encoding). */
export function str(s: string | Buffer): Buffer {
  const b = typeof s === 'string' ? Buffer.from(s, 'latin1') : s;
  return Buffer.concat([len(b.length), b]);
}

/** RDB_ENC_INT8/16/32 strings. */
export function intStr(v: number): Buffer {
  if (v >= -128 && v <= 127) return Buffer.from([0xc0, v & 0xff]);
  if (v >= -32768 && v <= 32767) {
    const b = Buffer.alloc(3);
    b[0] = 0xc1;
    b.writeInt16LE(v, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = 0xc2;
  b.writeInt32LE(v, 1);
  return b;
}

/** A ziplist of strings and integers (integers take the smallest encoding). */
export function ziplist(items: Array<string | number>): Buffer {
  const entries: Buffer[] = [];
  let prev = 0;
  let tail = 10;
  let off = 10;
  for (const it of items) {
    const prevlen = prev < 254 ? Buffer.from([prev]) : Buffer.concat([Buffer.from([254]), u32le(prev)]);
    let enc: Buffer;
    if (typeof it === 'number') {
      if (it >= 0 && it <= 12) enc = Buffer.from([0xf1 + it]);
      else if (it >= -128 && it <= 127) enc = Buffer.from([0xfe, it & 0xff]);
      else if (it >= -32768 && it <= 32767) { enc = Buffer.alloc(3); enc[0] = 0xc0; enc.writeInt16LE(it, 1); }
      else if (it >= -8388608 && it <= 8388607) { enc = Buffer.alloc(4); enc[0] = 0xf0; enc.writeIntLE(it, 1, 3); }
      else if (it >= -2147483648 && it <= 2147483647) { enc = Buffer.alloc(5); enc[0] = 0xd0; enc.writeInt32LE(it, 1); }
      else { enc = Buffer.alloc(9); enc[0] = 0xe0; enc.writeBigInt64LE(BigInt(it), 1); }
    } else {
      const b = Buffer.from(it, 'latin1');
      let h: Buffer;
      if (b.length < 64) h = Buffer.from([b.length]);
      else if (b.length < 16384) h = Buffer.from([0x40 | (b.length >> 8), b.length & 0xff]);
      else { h = Buffer.alloc(5); h[0] = 0x80; h.writeUInt32BE(b.length, 1); }
      enc = Buffer.concat([h, b]);
    }
    const e = Buffer.concat([prevlen, enc]);
    tail = off;
    off += e.length;
    prev = e.length;
    entries.push(e);
  }
  const body = Buffer.concat(entries);
  const hdr = Buffer.alloc(10);
  hdr.writeUInt32LE(10 + body.length + 1, 0);
  hdr.writeUInt32LE(items.length ? tail : 10, 4);
  hdr.writeUInt16LE(items.length, 8);
  return Buffer.concat([hdr, body, Buffer.from([0xff])]);
}

/** A zipmap (Redis 2.4 small hash); `free` adds unused bytes after each value. */
export function zipmap(pairs: Array<[string, string]>, free = 0): Buffer {
  const parts: Buffer[] = [Buffer.from([pairs.length])];
  for (const [k, v] of pairs) {
    parts.push(Buffer.from([k.length]), Buffer.from(k, 'latin1'), Buffer.from([v.length, free]), Buffer.from(v, 'latin1'), Buffer.alloc(free));
  }
  parts.push(Buffer.from([0xff]));
  return Buffer.concat(parts);
}

export function intset(width: 2 | 4 | 8, values: number[]): Buffer {
  const b = Buffer.alloc(8 + width * values.length);
  b.writeUInt32LE(width, 0);
  b.writeUInt32LE(values.length, 4);
  values.forEach((v, i) => {
    if (width === 2) b.writeInt16LE(v, 8 + 2 * i);
    else if (width === 4) b.writeInt32LE(v, 8 + 4 * i);
    else b.writeBigInt64LE(BigInt(v), 8 + 8 * i);
  });
  return b;
}

/** A listpack of strings only (no integer encodings), for the 7.2 set listpack. */
export function listpackStrings(items: string[]): Buffer {
  const parts: Buffer[] = [];
  for (const s of items) {
    if (s.length >= 64) throw new Error('short strings only');
    parts.push(Buffer.from([0x80 | s.length]), Buffer.from(s, 'latin1'), Buffer.from([1 + s.length]));
  }
  const body = Buffer.concat(parts);
  const hdr = Buffer.alloc(6);
  hdr.writeUInt32LE(6 + body.length + 1, 0);
  hdr.writeUInt16LE(items.length, 4);
  return Buffer.concat([hdr, body, Buffer.from([0xff])]);
}

function u32le(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n, 0);
  return b;
}

/** The ASCII double of RDB_TYPE_ZSET (version 1 sorted sets). */
export function asciiDouble(v: number): Buffer {
  if (v !== v) return Buffer.from([253]);
  if (v === Infinity) return Buffer.from([254]);
  if (v === -Infinity) return Buffer.from([255]);
  const s = String(v);
  return Buffer.concat([Buffer.from([s.length]), Buffer.from(s)]);
}

/** A DUMP payload: type byte, value, RDB version, CRC-64. */
export function payload(type: number, body: Buffer, version = 9): Buffer {
  const head = Buffer.concat([Buffer.from([type]), body, Buffer.from([version & 0xff, version >> 8])]);
  const crc = Buffer.alloc(8);
  crc64(head).writeLE(crc, 0);
  return Buffer.concat([head, crc]);
}

/** Recompute the CRC of a (mutated) payload so that it reaches the decoder. */
export function reseal(p: Buffer): Buffer {
  if (p.length < 10) return p;
  const out = Buffer.from(p);
  crc64(out, 0, out.length - 8).writeLE(out, out.length - 8);
  return out;
}

/** Deterministic bytes (xorshift32): base + one of `alpha` symbols each. */
export function xorshiftBytes(n: number, alpha: number, seed: number, base = 0): Buffer {
  let x = seed | 1;
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = base + ((x >>> 0) % alpha);
  }
  return b;
}
