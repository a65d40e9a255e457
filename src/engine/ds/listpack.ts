/**
 * Listpacks on the engine's side: reading one held as a latin1 string (small hashes keep their
 * listpack bytes so; below), and size arithmetic. Redis's encoding decisions for lists
 * (listpack vs quicklist) depend on the byte size a listpack would have, so this module
 * computes that size exactly as Redis's listpack.c would lay the entries out:
 *
 *   entry = encoding+data bytes, then a "backlen" of 1..5 bytes
 *   strings that are canonical 64-bit integers (string2ll rules) are stored as integers
 *   the whole listpack adds a 6-byte header and a 1-byte terminator
 */
import { lpIntOf } from '../../rdb/listpack.js';

/** Header (total bytes + element count) plus the end-of-listpack byte. */
export const LP_HDR = 7;

/** Bytes of the backlen that follows an entry whose encoding+data take `l` bytes. */
function backlen(l: number): number {
  if (l <= 127) return 1;
  if (l < 16383) return 2;
  if (l < 2097151) return 3;
  if (l < 268435455) return 4;
  return 5;
}

/** Encoding+data bytes of an integer entry. */
export function lpIntBytes(v: number): number {
  if (v >= 0 && v <= 127) return 1;
  if (v >= -4096 && v <= 4095) return 2;
  if (v >= -32768 && v <= 32767) return 3;
  if (v >= -8388608 && v <= 8388607) return 4;
  if (v >= -2147483648 && v <= 2147483647) return 5;
  return 9;
}

/**
 * The value of `b` when listpack would store it as an integer (string2ll: optional '-', no
 * leading zeros, at most 20 characters, within int64), else NaN. Values outside ±2^53 come
 * back as a number of the right magnitude, which is all the size computation needs.
 */
function asInteger(b: Uint8Array): number {
  const n = b.length;
  if (n === 0 || n > 20) return NaN;
  let p = 0;
  let neg = false;
  if (b[0] === 45) {
    if (n === 1) return NaN;
    neg = true;
    p = 1;
  }
  const c0 = b[p];
  if (c0 === 48) return n === 1 ? 0 : NaN;
  if (c0 < 49 || c0 > 57) return NaN;
  let v = 0;
  for (; p < n; p++) {
    const c = b[p];
    if (c < 48 || c > 57) return NaN;
    v = v * 10 + (c - 48);
  }
  // int64 range check: 19 digits is always within range, 20 (or 19 starting high) may not be.
  if (v >= 9223372036854775807) {
    const digits = neg ? n - 1 : n;
    if (digits > 19) return NaN;
    const s = Buffer.from(b.buffer, b.byteOffset + (neg ? 1 : 0), digits).toString('latin1');
    if (s > (neg ? '9223372036854775808' : '9223372036854775807')) return NaN;
  }
  return neg ? -v : v;
}

/** asInteger over a latin1 string (list elements are held as strings). */
function asIntegerStr(s: string): number {
  const n = s.length;
  if (n === 0 || n > 20) return NaN;
  let p = 0;
  let neg = false;
  if (s.charCodeAt(0) === 45) {
    if (n === 1) return NaN;
    neg = true;
    p = 1;
  }
  const c0 = s.charCodeAt(p);
  if (c0 === 48) return n === 1 ? 0 : NaN;
  if (c0 < 49 || c0 > 57) return NaN;
  let v = 0;
  for (; p < n; p++) {
    const c = s.charCodeAt(p);
    if (c < 48 || c > 57) return NaN;
    v = v * 10 + (c - 48);
  }
  if (v >= 9223372036854775807) {
    const digits = neg ? n - 1 : n;
    if (digits > 19) return NaN;
    if (s.slice(neg ? 1 : 0) > (neg ? '9223372036854775808' : '9223372036854775807')) return NaN;
  }
  return neg ? -v : v;
}

/** Bytes one element occupies inside a listpack (entry plus backlen). */
export function lpEntrySize(b: Uint8Array | string): number {
  return entrySize(typeof b === 'string' ? asIntegerStr(b) : asInteger(b), b.length);
}

function entrySize(v: number, n: number): number {
  let l: number;
  if (v === v) {
    l = lpIntBytes(v);
  } else {
    l = n < 64 ? 1 + n : n < 4096 ? 2 + n : 5 + n;
  }
  return l + backlen(l);
}

/** quicklist node limits for a list-max-listpack-size value (quicklistNodeLimit). */
const OPTIMIZATION_LEVEL = [4096, 8192, 16384, 32768, 65536];
/** Size cap of a node when the limit is a count (SIZE_SAFETY_LIMIT). */
const SIZE_SAFETY_LIMIT = 8192;

/** Byte limit of one listpack node under `fill` (quicklistNodeLimit); Infinity when count-limited. */
export function nodeSizeLimit(fill: number): number {
  if (fill >= 0) return Infinity;
  const off = -fill - 1;
  return OPTIMIZATION_LEVEL[off < OPTIMIZATION_LEVEL.length ? off : OPTIMIZATION_LEVEL.length - 1];
}

/** Entry-count limit of one listpack node under `fill`; Infinity when size-limited. */
export function nodeCountLimit(fill: number): number {
  return fill < 0 ? Infinity : fill === 0 ? 1 : fill;
}

/** quicklistNodeExceedsLimit: would a listpack of `bytes` and `count` entries be too big? */
export function exceedsLimit(fill: number, bytes: number, count: number): boolean {
  if (fill < 0) return bytes > nodeSizeLimit(fill);
  if (bytes > SIZE_SAFETY_LIMIT) return true;
  return count > nodeCountLimit(fill);
}

// ---------------------------------------------------------------- listpacks held as strings

/*
 * A listpack kept as one latin1 JS string (one char per byte): small hashes hold Redis's own
 * listpack bytes this way (one V8 object, no ArrayBuffer, cut from a file or payload with one
 * latin1Slice). These read it; src/rdb/listpack.ts's LpWriter writes it. Entries are
 * canonical (lpsCheck refuses others): a value has exactly one encoding, so equal elements
 * have equal bytes.
 */

/** The empty listpack: header (7 bytes, 0 elements) and the end byte. */
export const LPS_EMPTY = '\x07\x00\x00\x00\x00\x00\xff';

/** The decimal text of 0..127 (7-bit integers), made once. */
const SMALL_TEXT = Array.from({ length: 128 }, (_, i) => String(i));

/** Encoding + data bytes of the entry at p. */
export function lpsEntryLen(s: string, p: number): number {
  const c = s.charCodeAt(p);
  if (c < 0x80) return 1;
  if (c < 0xc0) return 1 + (c & 0x3f);
  if (c < 0xe0) return 2;
  if (c < 0xf0) return 2 + (((c & 0x0f) << 8) | s.charCodeAt(p + 1));
  if (c === 0xf0) return 5 + lpsU32(s, p + 1);
  return c === 0xf1 ? 3 : c === 0xf2 ? 4 : c === 0xf3 ? 5 : 9;
}

/** Start of the entry after the one at p. */
export function lpsNext(s: string, p: number): number {
  const l = lpsEntryLen(s, p);
  return p + l + (l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5);
}

function lpsU32(s: string, p: number): number {
  return (s.charCodeAt(p) | (s.charCodeAt(p + 1) << 8) | (s.charCodeAt(p + 2) << 16) | (s.charCodeAt(p + 3) << 24)) >>> 0;
}

/** Header size of a string entry at p (1, 2 or 5), or 0 when it is an integer. */
export function lpsStrHeader(s: string, p: number): number {
  const c = s.charCodeAt(p);
  if (c < 0x80) return 0;
  if (c < 0xc0) return 1;
  if (c < 0xe0) return 0;
  if (c < 0xf0) return 2;
  return c === 0xf0 ? 5 : 0;
}

/** The integer entry at p: a number when within ±2^53, else a bigint. */
export function lpsInt(s: string, p: number): number | bigint {
  const c = s.charCodeAt(p);
  if (c < 0x80) return c;
  if (c < 0xe0) {
    const v = ((c & 0x1f) << 8) | s.charCodeAt(p + 1);
    return v >= 4096 ? v - 8192 : v;
  }
  if (c === 0xf1) {
    const v = s.charCodeAt(p + 1) | (s.charCodeAt(p + 2) << 8);
    return v >= 32768 ? v - 65536 : v;
  }
  if (c === 0xf2) {
    const v = s.charCodeAt(p + 1) | (s.charCodeAt(p + 2) << 8) | (s.charCodeAt(p + 3) << 16);
    return v >= 8388608 ? v - 16777216 : v;
  }
  if (c === 0xf3) return lpsU32(s, p + 1) | 0;
  const lo = lpsU32(s, p + 1);
  const hi = lpsU32(s, p + 5) | 0;
  if (hi >= -2097152 && hi < 2097152) {
    const v = hi * 4294967296 + lo; // exact: within ±2^53
    if (v >= -9007199254740991) return v;
  }
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** The entry at p as text (integers in decimal). Short-lived: a long string is a slice of s. */
export function lpsText(s: string, p: number): string {
  const c = s.charCodeAt(p);
  if (c < 0x80) return SMALL_TEXT[c];
  const h = lpsStrHeader(s, p);
  if (h === 0) return String(lpsInt(s, p));
  return s.substring(p + h, p + lpsEntryLen(s, p));
}

/** Where the entry read by the last lpsRead ends (the next entry's start). */
export let lpsAfter = 0;

/** lpsText of the entry at p, setting lpsAfter (perf: one parse of the usual short entries). */
export function lpsRead(s: string, p: number): string {
  const c = s.charCodeAt(p);
  if (c < 0x80) {
    lpsAfter = p + 2;
    return SMALL_TEXT[c];
  }
  if (c < 0xc0) {
    const e = p + 1 + (c & 0x3f);
    lpsAfter = e + 1;
    return s.substring(p + 1, e);
  }
  lpsAfter = lpsNext(s, p);
  return lpsText(s, p);
}

/** Chars of the decimal text of the integer entry at p. */
function intTextLen(v: number | bigint): number {
  if (typeof v === 'number' && v >= 0 && v < 10) return 1;
  return String(v).length;
}

/** The int64 a field is stored as (lpIntOf), as lpsInt gives it: a number when within ±2^53. */
export function lpsIntOf(f: string): number | bigint | null {
  const v = lpIntOf(f);
  return typeof v === 'bigint' && v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
}

/**
 * Position of the first of every second entry (from the first) equal to `f`, or -1: the
 * field lookup of a listpack hash (lpFind with skip 1).
 */
export function lpsFind(s: string, f: string): number {
  const end = s.length - 1;
  let p = 6;
  const iv = lpsIntOf(f);
  if (iv === null) {
    const n = f.length;
    // perf: the usual entries (6-bit strings, 7-bit integers) skipped inline; the last char
    // compared first (fields often share a prefix).
    const last = n > 0 ? f.charCodeAt(n - 1) : 0;
    while (p < end) {
      let c = s.charCodeAt(p);
      if (c >= 0x80 && c < 0xc0) {
        const len = c & 0x3f;
        if (len === n && (n === 0 || s.charCodeAt(p + n) === last) && sameText(s, p + 1, f, n - 1)) return p;
        p += len + 2;
      } else {
        if (n >= 64 && lpsStrHeader(s, p) !== 0) {
          const h = lpsStrHeader(s, p);
          if (lpsEntryLen(s, p) - h === n && sameText(s, p + h, f, n)) return p;
        }
        p = lpsNext(s, p);
      }
      c = s.charCodeAt(p);
      if (c < 0x80) p += 2;
      else if (c < 0xc0) p += (c & 0x3f) + 2;
      else p = lpsNext(s, p);
    }
    return -1;
  }
  return lpsFindInt(s, iv);
}

/** lpsFind of a field that is an integer (`iv`, as lpsIntOf gives it). */
function lpsFindInt(s: string, iv: number | bigint): number {
  const end = s.length - 1;
  let p = 6;
  while (p < end) {
    if (lpsStrHeader(s, p) === 0 && lpsInt(s, p) === iv) return p;
    p = lpsNext(s, lpsNext(s, p));
  }
  return -1;
}

/**
 * lpsFind of the field given as the bytes b[fs, fe) (perf: HSET looks the request's bytes up,
 * with no field string, ~40-80 ns to build for a 20-byte field; a byte read also costs less
 * than a charCodeAt). The same walk as lpsFind's, kept apart so that each loop stays
 * monomorphic.
 */
export function lpsFindBytes(s: string, b: Uint8Array, fs: number, fe: number): number {
  const v = lpIntOf(b, fs, fe);
  if (v !== null) return lpsFindInt(s, typeof v === 'bigint' && v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v);
  const end = s.length - 1;
  const n = fe - fs;
  const last = n > 0 ? b[fe - 1] : 0;
  let p = 6;
  while (p < end) {
    let c = s.charCodeAt(p);
    if (c >= 0x80 && c < 0xc0) {
      const len = c & 0x3f;
      if (len === n && (n === 0 || s.charCodeAt(p + n) === last) && sameBytes(s, p + 1, b, fs, n - 1)) return p;
      p += len + 2;
    } else {
      if (n >= 64 && lpsStrHeader(s, p) !== 0) {
        const h = lpsStrHeader(s, p);
        if (lpsEntryLen(s, p) - h === n && sameBytes(s, p + h, b, fs, n)) return p;
      }
      p = lpsNext(s, p);
    }
    c = s.charCodeAt(p);
    if (c < 0x80) p += 2;
    else if (c < 0xc0) p += (c & 0x3f) + 2;
    else p = lpsNext(s, p);
  }
  return -1;
}

/**
 * True when the entry at p is a short string entry holding exactly the bytes b[bs, be). Such an
 * entry is never a canonical integer (those are integer-encoded), so equal bytes mean an equal
 * element and an equal encoding.
 */
export function lpsIsText(s: string, p: number, b: Uint8Array, bs: number, be: number): boolean {
  const c = s.charCodeAt(p);
  return c >= 0x80 && c < 0xc0 && (c & 0x3f) === be - bs && sameBytes(s, p + 1, b, bs, be - bs);
}

/** s[q, q + n) equals b[o, o + n). */
function sameBytes(s: string, q: number, b: Uint8Array, o: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (s.charCodeAt(q + k) !== b[o + k]) return false;
  return true;
}

/** s[q, q + n) equals f[0, n). */
function sameText(s: string, q: number, f: string, n: number): boolean {
  for (let k = 0; k < n; k++) if (s.charCodeAt(q + k) !== f.charCodeAt(k)) return false;
  return true;
}

/** lpsCheck's result besides the count: the longest element, as text. */
export let lpsMaxText = 0;

/**
 * Validate an untrusted listpack held as a string (lpValidateIntegrity, deep): header length,
 * every entry within bounds, back-lengths exact, end byte, declared count. Returns the
 * element count; -1 when it is corrupt; -2 when valid but not as lpAppend would encode it
 * (a string that is an integer, an integer or a length in a wider encoding than needed),
 * which lpsFind could miss. Allocates nothing.
 */
export function lpsCheck(s: string): number {
  const n = s.length;
  if (n < 7 || lpsU32(s, 0) !== n || s.charCodeAt(n - 1) !== 0xff) return -1;
  const declared = s.charCodeAt(4) | (s.charCodeAt(5) << 8);
  const end = n - 1;
  let canonical = true;
  let max = 0;
  let k = 0;
  let p = 6;
  while (p < end) {
    const c = s.charCodeAt(p);
    let l: number;
    let text: number;
    if (c < 0x80) {
      l = 1;
      text = c < 10 ? 1 : c < 100 ? 2 : 3;
    } else if (c < 0xc0) {
      l = 1 + (c & 0x3f);
      text = l - 1;
      if (p + l > end) return -1;
      // A string entry of a canonical integer: lpAppend would have stored the integer.
      if (text <= 20 && canonical && lpIntOf(s, p + 1, p + l) !== null) canonical = false;
    } else if (c < 0xe0) {
      l = 2;
      if (p + l > end) return -1;
      const v = lpsInt(s, p) as number;
      if (v >= 0 && v <= 127) canonical = false;
      text = intTextLen(v);
    } else if (c < 0xf0) {
      if (p + 2 > end) return -1;
      l = 2 + (((c & 0x0f) << 8) | s.charCodeAt(p + 1));
      text = l - 2;
      if (text < 64) canonical = false;
    } else if (c === 0xf0) {
      if (p + 5 > end) return -1;
      text = lpsU32(s, p + 1);
      l = 5 + text;
      if (text < 4096) canonical = false;
    } else if (c <= 0xf4) {
      l = c === 0xf1 ? 3 : c === 0xf2 ? 4 : c === 0xf3 ? 5 : 9;
      if (p + l > end) return -1;
      const v = lpsInt(s, p);
      const lo = c === 0xf1 ? -4096 : c === 0xf2 ? -32768 : c === 0xf3 ? -8388608 : -2147483648;
      if (v >= lo && v < -lo) canonical = false;
      text = intTextLen(v);
    } else {
      return -1;
    }
    if (p + l > end) return -1;
    p += l;
    // The back-length must encode l exactly (its first byte without, the others with bit 7).
    const bl = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
    if (p + bl > end) return -1;
    let v = 0;
    for (let i = 0; i < bl; i++) {
      const x = s.charCodeAt(p + i);
      if (bl > 1 && (i === 0) !== (x < 128)) return -1;
      v = v * 128 + (x & 127);
    }
    if (v !== l) return -1;
    p += bl;
    if (text > max) max = text;
    k++;
  }
  if (p !== end) return -1;
  if (declared !== 65535 && declared !== k) return -1;
  lpsMaxText = max;
  return canonical ? k : -2;
}

/** Reused open-addressing table of entry positions for lpsDupFields. */
let dupTable = new Int32Array(512);

/**
 * True when two of every second entry (the fields of a hash) are equal. Entries are canonical,
 * so equal means equal bytes: hashed bytes into a reused table, no string per field.
 */
export function lpsDupFields(s: string, fields: number): boolean {
  let size = 16;
  while (size < 2 * fields) size *= 2;
  if (dupTable.length < size) dupTable = new Int32Array(size);
  const t = dupTable;
  t.fill(0, 0, size);
  const mask = size - 1;
  const end = s.length - 1;
  let p = 6;
  while (p < end) {
    const l = lpsEntryLen(s, p);
    // perf: the length and the last three bytes (fields often differ only at their end).
    let h = Math.imul(l, 0x9e3779b1) ^ s.charCodeAt(p + l - 1);
    if (l > 1) h = Math.imul(h, 31) ^ s.charCodeAt(p + l - 2);
    if (l > 2) h = Math.imul(h, 31) ^ s.charCodeAt(p + l - 3);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    let slot = (h ^ (h >>> 13)) & mask;
    for (;;) {
      const q = t[slot];
      if (q === 0) {
        t[slot] = p;
        break;
      }
      if (lpsEntryLen(s, q) === l) {
        let i = 0;
        while (i < l && s.charCodeAt(p + i) === s.charCodeAt(q + i)) i++;
        if (i === l) return true;
      }
      slot = (slot + 1) & mask;
    }
    p = lpsNext(s, p + l + (l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5));
  }
  return false;
}

const SIZE_ESTIMATE_OVERHEAD = 8;

/**
 * quicklist.c _quicklistNodeAllowInsert (7.0): may an element of `elemSz` raw bytes go into a
 * node whose listpack has `nodeSz` bytes and `count` elements?
 */
export function allowInsert(nodeSz: number, count: number, fill: number, elemSz: number): boolean {
  const newSz = nodeSz + elemSz + SIZE_ESTIMATE_OVERHEAD;
  if (fill < 0) {
    const off = -fill - 1;
    if (off < OPTIMIZATION_LEVEL.length && newSz <= OPTIMIZATION_LEVEL[off]) return true;
  }
  if (newSz > SIZE_SAFETY_LIMIT) return false;
  return count < fill;
}
