/**
 * RdbReader: rdb.c's primitive loaders over a byte range, every read bounds-checked. Nothing
 * is allocated from a length the input claims before the bytes are known to exist (LZF output
 * is bounded by what its input can expand to).
 */
import { RdbError } from './errors.js';
import { LZF_MAX_RATIO, lzfCheck, lzfDecompress, lzfDecompressAt, lzfMem, lzfOut } from './lzf.js';
import { SMALL_STRING, type Stored, storedFrom } from '../engine/db.js';

/** Longest string accepted (proto-max-bulk-len's default). */
export const MAX_STRING = 512 * 1024 * 1024;

export class RdbReader {
  constructor(readonly b: Buffer, public p = 0, public end = b.length) {}

  /** The span of the last span(): bytes [s0, s1) of the Buffer it returned. */
  s0 = 0;
  s1 = 0;

  fail(what: string): never {
    const e = new RdbError(what);
    e.offset = this.p;
    throw e;
  }

  need(n: number): void {
    if (n < 0 || this.p + n > this.end) this.fail('unexpected end of data');
  }

  get left(): number {
    return this.end - this.p;
  }

  u8(): number {
    this.need(1);
    return this.b[this.p++];
  }

  bytes(n: number): Buffer {
    this.need(n);
    const v = this.b.subarray(this.p, this.p + n);
    this.p += n;
    return v;
  }

  u32le(): number {
    this.need(4);
    const v = this.b.readUInt32LE(this.p);
    this.p += 4;
    return v;
  }

  /**
   * rdbLoadMillisecondTime, rounded to a double as Number(int64) would round it: hi * 2^32 is
   * exact and the sum is rounded once. perf: no BigInt per expiry time.
   */
  ms(): number {
    this.need(8);
    const lo = this.b.readUInt32LE(this.p);
    const hi = this.b.readInt32LE(this.p + 4);
    this.p += 8;
    return hi * 4294967296 + lo;
  }

  /** rdbLoadLen as a bigint (full 64-bit range); encoded (special) lengths are refused. */
  lenBig(): bigint {
    const c = this.u8();
    const t = c >> 6;
    if (t === 0) return BigInt(c & 0x3f);
    if (t === 1) return BigInt(((c & 0x3f) << 8) | this.u8());
    if (c === 0x80) {
      this.need(4);
      const v = this.b.readUInt32BE(this.p);
      this.p += 4;
      return BigInt(v);
    }
    if (c === 0x81) {
      this.need(8);
      const v = this.b.readBigUInt64BE(this.p);
      this.p += 8;
      return v;
    }
    return this.fail('bad length encoding');
  }

  /**
   * rdbLoadLen as a safe number (a count or a size); larger values are refused. perf: no BigInt
   * (an import read two lengths per string value, each a BigInt of garbage).
   */
  len(): number {
    const c = this.u8();
    const t = c >> 6;
    if (t === 0) return c & 0x3f;
    if (t === 1) return ((c & 0x3f) << 8) | this.u8();
    if (c === 0x80) {
      this.need(4);
      const v = this.b.readUInt32BE(this.p);
      this.p += 4;
      return v;
    }
    if (c === 0x81) {
      this.need(8);
      const hi = this.b.readUInt32BE(this.p);
      const lo = this.b.readUInt32BE(this.p + 4);
      this.p += 8;
      // Above 2^53 - 1 when the high word has more than 21 bits.
      if (hi > 0x1fffff) this.fail('length out of range');
      return hi * 4294967296 + lo;
    }
    return this.fail('bad length encoding');
  }

  /** The compressed length of the last checkedLzf(). */
  lzfClen = 0;

  /**
   * At an LZF string's two lengths (after its encoding byte): the output length when the
   * string is sound (lengths, bytes present, lzfCheck) and its output at most maxLen, with r.p
   * at the compressed bytes (lzfClen of them); else -1, r.p anywhere. Nothing is thrown: the
   * RDB parse's fast paths (file.ts stageString, decode.ts checkValue) leave any verdict on a
   * damaged string to the full read.
   */
  checkedLzf(maxLen: number): number {
    let clen: number, len: number;
    try {
      clen = this.len();
      len = this.len();
    } catch {
      return -1;
    }
    this.lzfClen = clen;
    const p = this.p;
    return len === 0 || len > maxLen || p + clen > this.end || !lzfCheck(this.b, p, p + clen, len) ? -1 : len;
  }

  /** rdbGenericLoadStringObject: raw, integer-encoded or LZF; a view when raw. */
  string(): Buffer {
    const c = this.b[this.p];
    if (this.p < this.end && c >> 6 === 3) {
      this.p++;
      const enc = c & 0x3f;
      if (enc === 0) {
        this.need(1);
        return Buffer.from(String(this.b.readInt8(this.p++)), 'latin1');
      }
      if (enc === 1) {
        this.need(2);
        const v = this.b.readInt16LE(this.p);
        this.p += 2;
        return Buffer.from(String(v), 'latin1');
      }
      if (enc === 2) {
        this.need(4);
        const v = this.b.readInt32LE(this.p);
        this.p += 4;
        return Buffer.from(String(v), 'latin1');
      }
      if (enc === 3) {
        const clen = this.len();
        const len = this.len();
        this.need(clen);
        if (len === 0 || len > MAX_STRING || len > clen * LZF_MAX_RATIO + 64) this.fail('bad LZF lengths');
        const out = lzfDecompress(this.b, this.p, this.p + clen, len);
        if (out === null) this.fail('invalid LZF data');
        this.p += clen;
        return out;
      }
      return this.fail('unknown string encoding');
    }
    const n = this.len();
    if (n > MAX_STRING) this.fail('string too long');
    return this.bytes(n);
  }

  /**
   * string() without a Buffer view: returns the Buffer holding the bytes, at [s0, s1) (the
   * input itself when raw, the decompressor's memory when LZF-compressed: valid until the next
   * LZF job, lzf.ts).
   * perf: a view costs ~100 bytes of garbage per value; a million-key import made 300k of them.
   */
  span(): Buffer {
    const c = this.b[this.p];
    if (this.p < this.end && c >> 6 === 3 && (c & 0x3f) === 3) {
      this.p++;
      const clen = this.len();
      const len = this.len();
      this.need(clen);
      if (len === 0 || len > MAX_STRING || len > clen * LZF_MAX_RATIO + 64) this.fail('bad LZF lengths');
      // The bytes stay in the decompressor's memory until the next LZF job.
      if (!lzfDecompressAt(this.b, this.p, this.p + clen, len)) this.fail('invalid LZF data');
      this.p += clen;
      this.s0 = lzfOut;
      this.s1 = lzfOut + len;
      return lzfMem();
    }
    if (this.p < this.end && c >> 6 === 3) {
      const v = this.string();
      this.s0 = 0;
      this.s1 = v.length;
      return v;
    }
    const n = this.len();
    if (n > MAX_STRING) this.fail('string too long');
    this.need(n);
    this.s0 = this.p;
    this.s1 = this.p + n;
    this.p += n;
    return this.b;
  }

  /**
   * A string value in its stored form (storedFrom): integer encodings straight to numbers,
   * short values to compact strings without an intermediate Buffer, and a long LZF string as
   * the fresh Buffer it decompresses into (perf: the import of a million keys made two
   * allocations per string).
   */
  stored(): Stored {
    const c = this.b[this.p];
    if (this.p < this.end && c >> 6 === 3) {
      const enc = c & 0x3f;
      if (enc === 3) {
        this.p++;
        const clen = this.len();
        const len = this.len();
        this.need(clen);
        if (len === 0 || len > MAX_STRING || len > clen * LZF_MAX_RATIO + 64) this.fail('bad LZF lengths');
        if (len <= SMALL_STRING) {
          if (!lzfDecompressAt(this.b, this.p, this.p + clen, len)) this.fail('invalid LZF data');
          this.p += clen;
          return storedFrom(lzfMem(), lzfOut, lzfOut + len);
        }
        const out = lzfDecompress(this.b, this.p, this.p + clen, len);
        if (out === null) this.fail('invalid LZF data');
        this.p += clen;
        return out;
      }
      if (enc <= 2) {
        // Integer encodings hold canonical integers of at most 32 bits: the number itself.
        const b = this.string();
        return storedFrom(b, 0, b.length);
      }
    }
    const n = this.len();
    if (n > MAX_STRING) this.fail('string too long');
    this.need(n);
    const v = storedFrom(this.b, this.p, this.p + n);
    this.p += n;
    return v;
  }

  /** string() as a latin1 JS string. */
  latin1(): string {
    const c = this.b[this.p];
    if (this.p < this.end && c < 0x40) {
      // perf: a short raw string (keys, fields) straight to a JS string, no Buffer view.
      const n = c;
      if (this.p + 1 + n > this.end) this.fail('unexpected end of data');
      const s = this.b.latin1Slice(this.p + 1, this.p + 1 + n);
      this.p += 1 + n;
      return s;
    }
    const b = this.string();
    return b.latin1Slice(0, b.length);
  }

  /** rdbLoadDoubleValue (the old ASCII form of RDB_TYPE_ZSET). */
  asciiDouble(): number {
    const n = this.u8();
    if (n === 253) return NaN;
    if (n === 254) return Infinity;
    if (n === 255) return -Infinity;
    const s = this.bytes(n).latin1Slice(0, n);
    const v = strtod(s);
    if (v === null) this.fail('bad double');
    return v;
  }

  /** rdbLoadBinaryDoubleValue */
  binaryDouble(): number {
    this.need(8);
    const v = this.b.readDoubleLE(this.p);
    this.p += 8;
    return v;
  }
}

/** strtod over the whole text (Redis's forms: decimal, exponent, inf, nan); null if invalid. */
export function strtod(s: string): number | null {
  const t = s.toLowerCase();
  if (t === 'inf' || t === '+inf' || t === 'infinity' || t === '+infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  if (t === 'nan' || t === '-nan') return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return null;
  return Number(t);
}
