/**
 * Listpack size arithmetic. We never build real listpacks, but Redis's encoding decisions for
 * lists (listpack vs quicklist) depend on the byte size a listpack would have, so this module
 * computes that size exactly as Redis's listpack.c would lay the entries out:
 *
 *   entry = encoding+data bytes, then a "backlen" of 1..5 bytes
 *   strings that are canonical 64-bit integers (string2ll rules) are stored as integers
 *   the whole listpack adds a 6-byte header and a 1-byte terminator
 */

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
function intBytes(v: number): number {
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
    l = intBytes(v);
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
