/**
 * Real listpacks (listpack.c's byte layout), written for DUMP/RDB output and read, with full
 * validation, from untrusted payloads:
 *
 *   [total bytes u32 LE][element count u16 LE, 65535 = unknown] entries... [0xFF]
 *   entry = encoding + data, then the back-length (1..5 bytes) of encoding + data.
 *
 * Strings that lpStringToInt64 accepts (canonical decimal int64) are stored as integers, as
 * lpAppend does.
 */
import { RdbError } from './errors.js';

const I64_MAX = 9223372036854775807n;
const I64_MIN = -9223372036854775808n;

/**
 * The int64 a string element would be stored as (string2ll rules: optional '-', no leading
 * zero, no '+', at most 20 characters), else null. Returns a number when it is safe, else a
 * bigint.
 */
export function lpIntOf(b: Uint8Array | string, s = 0, e = b.length): number | bigint | null {
  const n = e - s;
  if (n <= 0 || n > 20) return null;
  // perf: two monomorphic loops instead of a per-call accessor closure.
  const str = typeof b === 'string';
  let p = s;
  let neg = false;
  if ((str ? (b as string).charCodeAt(p) : (b as Uint8Array)[p]) === 45) {
    if (n === 1) return null;
    neg = true;
    p++;
  }
  const c0 = str ? (b as string).charCodeAt(p) : (b as Uint8Array)[p];
  if (c0 === 48) return n === 1 ? 0 : null;
  if (c0 < 49 || c0 > 57) return null;
  let v = 0;
  if (str) {
    const t = b as string;
    for (let i = p; i < e; i++) {
      const c = t.charCodeAt(i);
      if (c < 48 || c > 57) return null;
      v = v * 10 + (c - 48);
    }
  } else {
    const t = b as Uint8Array;
    for (let i = p; i < e; i++) {
      const c = t[i];
      if (c < 48 || c > 57) return null;
      v = v * 10 + (c - 48);
    }
  }
  if (e - p <= 15) return neg ? -v : v;
  const t = typeof b === 'string' ? b.slice(s, e) : Buffer.from(b.buffer, b.byteOffset + s, n).latin1Slice(0, n);
  const big = BigInt(t);
  if (big > I64_MAX || big < I64_MIN) return null;
  return big;
}

/** Bytes of a back-length for an entry whose encoding + data take l bytes. */
export function backlenSize(l: number): number {
  return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

/** Builds one listpack. Reuse: start(), add..., finish(). */
export class LpWriter {
  buf = Buffer.allocUnsafe(1024);
  pos = 6;
  count = 0;

  start(): this {
    this.pos = 6;
    this.count = 0;
    return this;
  }

  private room(n: number): void {
    if (this.pos + n > this.buf.length) {
      const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n + 64));
      this.buf.copy(b, 0, 0, this.pos);
      this.buf = b;
    }
  }

  private backlen(l: number): void {
    const b = this.buf;
    let p = this.pos;
    if (l <= 127) {
      b[p++] = l;
    } else if (l < 16383) {
      b[p++] = l >>> 7;
      b[p++] = (l & 127) | 128;
    } else if (l < 2097151) {
      b[p++] = l >>> 14;
      b[p++] = ((l >>> 7) & 127) | 128;
      b[p++] = (l & 127) | 128;
    } else if (l < 268435455) {
      b[p++] = l >>> 21;
      b[p++] = ((l >>> 14) & 127) | 128;
      b[p++] = ((l >>> 7) & 127) | 128;
      b[p++] = (l & 127) | 128;
    } else {
      b[p++] = Math.floor(l / 268435456);
      b[p++] = ((l >>> 21) & 127) | 128;
      b[p++] = ((l >>> 14) & 127) | 128;
      b[p++] = ((l >>> 7) & 127) | 128;
      b[p++] = (l & 127) | 128;
    }
    this.pos = p;
  }

  /** An integer element (lpAppendInteger). */
  int(v: number | bigint): void {
    this.room(10);
    const b = this.buf;
    let p = this.pos;
    let l: number;
    if (typeof v === 'bigint') {
      if (v >= -2147483648n && v <= 2147483647n) return this.int(Number(v));
      b[p] = 0xf4;
      b.writeBigInt64LE(v, p + 1);
      l = 9;
    } else if (v >= 0 && v <= 127) {
      b[p] = v;
      l = 1;
    } else if (v >= -4096 && v <= 4095) {
      const u = v < 0 ? v + 8192 : v;
      b[p] = (u >>> 8) | 0xc0;
      b[p + 1] = u & 0xff;
      l = 2;
    } else if (v >= -32768 && v <= 32767) {
      b[p] = 0xf1;
      b.writeInt16LE(v, p + 1);
      l = 3;
    } else if (v >= -8388608 && v <= 8388607) {
      b[p] = 0xf2;
      b.writeIntLE(v, p + 1, 3);
      l = 4;
    } else if (v >= -2147483648 && v <= 2147483647) {
      b[p] = 0xf3;
      b.writeInt32LE(v, p + 1);
      l = 5;
    } else {
      // perf: the two 32-bit halves of the integral double, no BigInt (a job hash's ms
      // timestamps). Both are exact for any integer of int64's range.
      b[p] = 0xf4;
      const hi = Math.floor(v / 4294967296);
      b.writeUInt32LE(v - hi * 4294967296, p + 1);
      b.writeInt32LE(hi, p + 5);
      l = 9;
    }
    p += l;
    b[p++] = l; // backlen of 1..9
    this.pos = p;
    this.count++;
  }

  /** A string element (lpAppend): integer-encoded when it is a canonical int64. */
  str(v: Uint8Array | string): void {
    const iv = lpIntOf(v);
    if (iv !== null) {
      this.int(iv);
      return;
    }
    if (typeof v === 'string') {
      this.rawText(v);
      return;
    }
    const n = v.length;
    const h = this.strHeader(n);
    this.buf.set(v, this.pos);
    this.pos += n;
    this.backlen(h + n);
    this.count++;
  }

  /**
   * str() of the bytes b[s, e) (perf: a request's argument appended as it is, no Buffer view
   * and no string).
   */
  strRange(b: Buffer, s: number, e: number): void {
    const iv = lpIntOf(b, s, e);
    if (iv !== null) {
      this.int(iv);
      return;
    }
    const n = e - s;
    const h = this.strHeader(n);
    const d = this.buf;
    let p = this.pos;
    // (Buffer#copy of part of a Buffer allocates a view: a JS loop up to a listpack value's
    // default limit, 64 bytes.)
    if (n <= 64) for (let k = s; k < e; k++) d[p++] = b[k];
    else p += b.copy(d, p, s, e);
    this.pos = p;
    this.backlen(h + n);
    this.count++;
  }

  /** Room for a string element of n bytes, and its header written: returns the header's size. */
  private strHeader(n: number): number {
    this.room(n + 10);
    const b = this.buf;
    const p = this.pos;
    let h: number;
    if (n < 64) {
      b[p] = 0x80 | n;
      h = 1;
    } else if (n < 4096) {
      b[p] = 0xe0 | (n >>> 8);
      b[p + 1] = n & 0xff;
      h = 2;
    } else {
      b[p] = 0xf0;
      b.writeUInt32LE(n, p + 1);
      h = 5;
    }
    this.pos = p + h;
    return h;
  }

  /** A string element from a latin1 string, as a string (the caller did the integer test). */
  private rawText(v: string): void {
    const n = v.length;
    const h = this.strHeader(n);
    const b = this.buf;
    let p = this.pos;
    // perf: a char loop beats latin1Write's native call for short strings.
    if (n <= 32) for (let k = 0; k < n; k++) b[p++] = v.charCodeAt(k);
    else p += b.latin1Write(v, p);
    this.pos = p;
    this.backlen(h + n);
    this.count++;
  }

  /**
   * str() of a latin1 string (hash fields and values, set and zset members): perf, a
   * monomorphic path (str() sees strings and Buffers) with the integer test inlined.
   */
  text(v: string): void {
    const n = v.length;
    // Canonical decimal integers of up to 15 digits are safe numbers: the integer encoding.
    if (n > 0 && n <= 16) {
      let p = v.charCodeAt(0) === 45 ? 1 : 0;
      const c0 = p < n ? v.charCodeAt(p) : 0;
      if (c0 >= 49 && c0 <= 57 && n - p <= 15) {
        let x = c0 - 48;
        for (p++; p < n; p++) {
          const c = v.charCodeAt(p);
          if (c < 48 || c > 57) break;
          x = x * 10 + (c - 48);
        }
        if (p === n) {
          this.int(v.charCodeAt(0) === 45 ? -x : x);
          return;
        }
      } else if (c0 === 48 && n === 1) {
        this.int(0);
        return;
      }
      if (n - (v.charCodeAt(0) === 45 ? 1 : 0) > 15) {
        this.str(v); // 16 digits: maybe beyond 2^53, the general path decides
        return;
      }
    } else if (n > 16 && n <= 20) {
      this.str(v);
      return;
    }
    this.rawText(v);
  }

  /** Listpack bytes so far as they would be once finished (for node size rules). */
  get bytes(): number {
    return this.pos + 1;
  }

  /** The finished listpack: a view of the internal buffer, valid until the next start(). */
  finish(): Buffer {
    return this.buf.subarray(0, this.finishLength());
  }

  /** finish() without the view: the listpack is buf[0, returned length) (perf: no Buffer per value). */
  finishLength(): number {
    this.room(1);
    const b = this.buf;
    b[this.pos++] = 0xff;
    b.writeUInt32LE(this.pos, 0);
    b.writeUInt16LE(this.count < 65535 ? this.count : 65535, 4);
    return this.pos;
  }
}

/** A decoded element: a latin1 string, or an integer (number when safe, else bigint). */
export type LpElem = string | number | bigint;

/** The decimal text of 0..127 (listpack's 7-bit integers), made once. */
const SMALL = Array.from({ length: 128 }, (_, i) => String(i));

export function elemText(e: LpElem): string {
  return typeof e === 'string' ? e : String(e);
}

/**
 * Every element of a listpack, validated deeply (lpValidateIntegrity with deep = 1): header
 * length, each encoding within bounds, back-lengths consistent, terminator, and the count in
 * the header when it is known. Throws RdbError on any inconsistency. Allocation follows the
 * bytes present: at most one element per 2 bytes.
 */
export function lpDecode(b: Buffer): LpElem[] {
  const out: LpElem[] = [];
  lpDecodeInto(b, 0, b.length, false, out);
  return out;
}

/** lpDecode with every element as text (integers in decimal): what hashes, sets and lists keep. */
export function lpDecodeText(b: Buffer): string[] {
  const out: string[] = [];
  lpDecodeInto(b, 0, b.length, true, out);
  return out;
}

/**
 * lpDecode of the listpack at b[s, e) into `out` from index 0 (elements as text if `text`);
 * returns the element count. `out` is the caller's reused scratch: slots past the count are
 * stale (perf: no array per value in an import of a million keys).
 */
export function lpDecodeInto(b: Buffer, s: number, e: number, text: boolean, out: LpElem[]): number {
  const declared = lpHeader(b, s, e);
  // perf: one native latin1 conversion of the whole listpack, then substrings (a native call
  // per element cost more than the rest of the decoding).
  const all = b.latin1Slice(s, e);
  let k = 0;
  let p = s + 6;
  const end = e - 1;
  while (p < end) {
    const c = b[p];
    let l: number; // encoding + data bytes
    if (c < 0x80) {
      out[k++] = text ? SMALL[c] : c;
      l = 1;
    } else if (c < 0xc0) {
      const len = c & 0x3f;
      l = 1 + len;
      if (p + l > end) throw new RdbError('listpack string out of range');
      out[k++] = all.substring(p + 1 - s, p + l - s);
    } else if (c < 0xe0) {
      if (p + 2 > end) throw new RdbError('listpack int out of range');
      let v = ((c & 0x1f) << 8) | b[p + 1];
      if (v >= 4096) v -= 8192;
      out[k++] = text ? String(v) : v;
      l = 2;
    } else if (c < 0xf0) {
      if (p + 2 > end) throw new RdbError('listpack string out of range');
      const len = ((c & 0x0f) << 8) | b[p + 1];
      l = 2 + len;
      if (p + l > end) throw new RdbError('listpack string out of range');
      out[k++] = all.substring(p + 2 - s, p + l - s);
    } else if (c === 0xf0) {
      if (p + 5 > end) throw new RdbError('listpack string out of range');
      const len = b.readUInt32LE(p + 1);
      l = 5 + len;
      if (p + l > end) throw new RdbError('listpack string out of range');
      out[k++] = all.substring(p + 5 - s, p + l - s);
    } else if (c === 0xf1) {
      if (p + 3 > end) throw new RdbError('listpack int out of range');
      out[k++] = text ? String(b.readInt16LE(p + 1)) : b.readInt16LE(p + 1);
      l = 3;
    } else if (c === 0xf2) {
      if (p + 4 > end) throw new RdbError('listpack int out of range');
      out[k++] = text ? String(b.readIntLE(p + 1, 3)) : b.readIntLE(p + 1, 3);
      l = 4;
    } else if (c === 0xf3) {
      if (p + 5 > end) throw new RdbError('listpack int out of range');
      out[k++] = text ? String(b.readInt32LE(p + 1)) : b.readInt32LE(p + 1);
      l = 5;
    } else if (c === 0xf4) {
      if (p + 9 > end) throw new RdbError('listpack int out of range');
      const v = b.readBigInt64LE(p + 1);
      out[k++] = text ? String(v) : v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
      l = 9;
    } else {
      throw new RdbError('listpack bad encoding');
    }
    p = lpBacklen(b, p + l, l, end);
  }
  if (p !== end) throw new RdbError('listpack overrun');
  if (declared !== 65535 && declared !== k) throw new RdbError('listpack count mismatch');
  return k;
}

/** Checks the header and end byte of the listpack at b[s, e); returns the declared count. */
function lpHeader(b: Buffer, s: number, e: number): number {
  const n = e - s;
  if (n < 7) throw new RdbError('listpack too short');
  if (b.readUInt32LE(s) !== n) throw new RdbError('listpack length mismatch');
  if (b[e - 1] !== 0xff) throw new RdbError('listpack not terminated');
  return b.readUInt16LE(s + 4);
}

/**
 * Checks the back-length at p of an entry whose encoding + data take l bytes: it must read as l
 * the way Redis's lpDecodeBacklen reads it (lpValidateNext), backwards from its last byte while
 * a byte has the continuation bit, on into the entry's own bytes if need be (so a 1-byte
 * back-length with that bit passes when the byte before it is 0). Returns the offset after it.
 */
function lpBacklen(b: Buffer, p: number, l: number, end: number): number {
  const bl = backlenSize(l);
  if (p + bl > end) throw new RdbError('listpack back-length out of range');
  // perf: the usual 1-byte back-length, without its bit 7, is l itself.
  if ((l > 127 || b[p] !== l) && backlenAt(b, p + bl - 1) !== l) throw new RdbError('listpack bad back-length');
  return p + bl;
}

/** lpDecodeBacklen of the back-length whose last byte is at q (-1: longer than 5 bytes). */
function backlenAt(b: Uint8Array, q: number): number {
  let v = 0;
  for (let shift = 0; ; shift += 7) {
    if (shift > 28) return -1;
    const x = b[q--];
    v += (x & 127) * 2 ** shift;
    if ((x & 128) === 0) return v;
  }
}

/** Entry starts and kinds (small zset members) for lpSmallZsetValid. */
const ZS_AT = new Int32Array(16);
const ZS_LEN = new Int32Array(16);
const ZS_INT = new Float64Array(16);

/**
 * True when the listpack at b[s, e) is a small sorted set that the RDB checks surely accept:
 * well formed as lpDecodeInto requires, 2 to 16 elements, an even count, every score an integer
 * entry, the members all strings or all integers of at most 32 bits, and distinct. False means
 * nothing (the caller runs the full checks, which word any error). perf: no string per element
 * (the import's parse checks ~50k of these per million keys, and drops them).
 */
export function lpSmallZsetValid(b: Buffer, s: number, e: number): boolean {
  const n = e - s;
  if (n < 7 || b.readUInt32LE(s) !== n || b[e - 1] !== 0xff) return false;
  const declared = b.readUInt16LE(s + 4);
  const end = e - 1;
  let p = s + 6;
  let k = 0;
  let ints = 0;
  while (p < end) {
    if (k === 16) return false;
    const c = b[p];
    let l: number;
    let str = -1;
    let v = 0;
    if (c < 0x80) {
      l = 1;
      v = c;
    } else if (c < 0xc0) {
      l = 1 + (c & 0x3f);
      str = p + 1;
    } else if (c < 0xe0) {
      l = 2;
      if (p + 2 > end) return false;
      v = ((c & 0x1f) << 8) | b[p + 1];
      if (v >= 4096) v -= 8192;
    } else if (c === 0xf1) {
      l = 3;
      if (p + 3 > end) return false;
      v = b.readInt16LE(p + 1);
    } else if (c === 0xf2) {
      l = 4;
      if (p + 4 > end) return false;
      v = b.readIntLE(p + 1, 3);
    } else if (c === 0xf3) {
      l = 5;
      if (p + 5 > end) return false;
      v = b.readInt32LE(p + 1);
    } else return false; // longer strings, 64-bit integers, bad encodings: the full checks
    if (p + l > end) return false;
    if ((k & 1) === 0) {
      ZS_AT[k >> 1] = str;
      ZS_LEN[k >> 1] = l - 1;
      ZS_INT[k >> 1] = v;
      if (str < 0) ints++;
    } else if (str >= 0) return false; // a score as text: strtod, in the full checks
    // The back-length as lpBacklen reads it.
    const q = p + l;
    const bl = backlenSize(l);
    if (q + bl > end || ((l > 127 || b[q] !== l) && backlenAt(b, q + bl - 1) !== l)) return false;
    p = q + bl;
    k++;
  }
  if (p !== end || (declared !== 65535 && declared !== k) || k === 0 || (k & 1) !== 0) return false;
  const m = k >> 1;
  if (ints !== 0 && ints !== m) return false;
  for (let i = 1; i < m; i++) {
    for (let j = 0; j < i; j++) {
      if (ints !== 0) {
        if (ZS_INT[i] === ZS_INT[j]) return false;
        continue;
      }
      const len = ZS_LEN[i];
      if (len !== ZS_LEN[j]) continue;
      const a = ZS_AT[i];
      const c = ZS_AT[j];
      let x = 0;
      while (x < len && b[a + x] === b[c + x]) x++;
      if (x === len) return false;
    }
  }
  return true;
}

/**
 * Deep validation of the listpack at b[s, e) without decoding it (lpValidateIntegrity, deep):
 * the same checks as lpDecodeInto, every entry's encoding and back-length within bounds, the
 * terminator, the count when the header knows it. Returns the element count.
 */
export function lpValidate(b: Buffer, s: number, e: number): number {
  const declared = lpHeader(b, s, e);
  let k = 0;
  let p = s + 6;
  const end = e - 1;
  while (p < end) {
    const c = b[p];
    let l: number; // encoding + data bytes
    if (c < 0x80) l = 1;
    else if (c < 0xc0) l = 1 + (c & 0x3f);
    else if (c < 0xe0) l = 2;
    else if (c < 0xf0) l = p + 2 > end ? -1 : 2 + (((c & 0x0f) << 8) | b[p + 1]);
    else if (c === 0xf0) l = p + 5 > end ? -1 : 5 + b.readUInt32LE(p + 1);
    else if (c === 0xf1) l = 3;
    else if (c === 0xf2) l = 4;
    else if (c === 0xf3) l = 5;
    else if (c === 0xf4) l = 9;
    else throw new RdbError('listpack bad encoding');
    if (l < 0 || p + l > end) throw new RdbError('listpack entry out of range');
    p = lpBacklen(b, p + l, l, end);
    k++;
  }
  if (p !== end) throw new RdbError('listpack overrun');
  if (declared !== 65535 && declared !== k) throw new RdbError('listpack count mismatch');
  return k;
}
