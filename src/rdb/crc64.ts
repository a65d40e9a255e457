/**
 * CRC-64/Jones as Redis computes it (crc64.c: reflected polynomial 0xad93d23594c935a9, initial
 * value 0, no final xor): the checksum of DUMP payloads and RDB files. check("123456789") =
 * 0xe9c6d914c4b8d9ca. Computed by native/lzf.wasm (lzf.c, slicing by 16); bytes not already in
 * its memory are copied there in chunks.
 */
import { copyBytes, fixed } from './lzf.js';

const mem = fixed.mem;
/** The CRC state in the module's memory: low, high 32 bits. */
const ST = new Uint32Array(mem.buffer, fixed.crcAt, 2);
const STAGE = fixed.a;
/** Bytes staged per call (the fixed instance's input region is at least this big). */
const CHUNK = 64 * 1024;

/** Running CRC state: update() any number of times, then digest. */
export class Crc64 {
  hi = 0;
  lo = 0;

  update(b: Uint8Array, s = 0, e = b.length): this {
    const x = fixed.x;
    ST[0] = this.lo;
    ST[1] = this.hi;
    if (b === mem) {
      // Already in the module's memory (a payload built there): no copy.
      x.crc64_update(s, e - s);
    } else {
      for (let p = s; p < e; p += CHUNK) {
        const n = Math.min(CHUNK, e - p);
        copyBytes(b, p, n, mem, STAGE);
        x.crc64_update(STAGE, n);
      }
    }
    this.lo = ST[0];
    this.hi = ST[1];
    return this;
  }

  /** Write the CRC little-endian (as Redis stores it) at b[o, o + 8). */
  writeLE(b: Buffer, o: number): void {
    b.writeUInt32LE(this.lo, o);
    b.writeUInt32LE(this.hi, o + 4);
  }

  /** True when b[o, o + 8) holds this CRC little-endian. */
  matchesLE(b: Uint8Array, o: number): boolean {
    const lo = (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
    const hi = (b[o + 4] | (b[o + 5] << 8) | (b[o + 6] << 16) | (b[o + 7] << 24)) >>> 0;
    return lo === this.lo && hi === this.hi;
  }

  get value(): bigint {
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }
}

export function crc64(b: Uint8Array, s = 0, e = b.length): Crc64 {
  return new Crc64().update(b, s, e);
}
