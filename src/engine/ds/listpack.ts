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
import { Codec, FIXED_SMALL, FIXED_TABLE, copyBytes, fixed, residentAt } from '../../rdb/lzf.js';

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
 * canonical (lpCheck refuses others): a value has exactly one encoding, so equal elements
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

/**
 * Where the listpack checks run: the fixed instance of native/lzf.wasm when the bytes fit its
 * regions (no copy when they are already there: a payload LZF decompressed), else an instance
 * of their own, grown to the bytes and the table (no view of its memory is handed out, so
 * growing it detaches nothing), not kept past 8 MB.
 */
let on: Codec = fixed;
let own: Codec | null = null;
/** Offset of the placed bytes in on.mem. */
let at = 0;

function place(b: Uint8Array, s: number, e: number, tableBytes: number): void {
  const n = e - s;
  if (tableBytes <= FIXED_TABLE) {
    if (b === fixed.mem) {
      on = fixed;
      at = s;
      return;
    }
    const r = residentAt(b, s);
    if (r >= 0) {
      on = fixed;
      at = r;
      return;
    }
    if (n <= FIXED_SMALL) {
      on = fixed;
      at = fixed.a;
      copyBytes(b, s, n, fixed.mem, at);
      return;
    }
  }
  on = ownFor(n, tableBytes);
  at = on.a;
  copyBytes(b, s, n, on.mem, at);
}

function ownFor(n: number, tableBytes: number): Codec {
  if (own === null) own = new Codec(n, 0, tableBytes);
  else own.fit(n, 0, tableBytes);
  return own;
}

/** After a check: a big own instance goes (`on` keeps it for lpMaxText). */
function release(): void {
  if (own !== null && own.mem.length > 8 * 1024 * 1024) own = null;
}

/** The table lp_dup_fields needs for `fields` fields: slots (a power of two). */
function dupSlots(fields: number): number {
  let size = 16;
  while (size < 2 * fields) size *= 2;
  return size;
}

/** lpCheck's result besides the count: the longest element, as text. */
export function lpMaxText(): number {
  return on.x.lp_max_text();
}

/**
 * Validate an untrusted listpack b[s, e) (lpValidateIntegrity, deep): header length, every
 * entry within bounds, back-lengths exact, end byte, declared count. Returns the element count;
 * -1 when it is corrupt; -2 when valid but not as lpAppend would encode it (a string that is an
 * integer, an integer or a length in a wider encoding than needed), which lpsFind could miss.
 * (native/lzf/listpack.c)
 */
export function lpCheck(b: Uint8Array, s: number, e: number): number {
  place(b, s, e, 0);
  const k = on.x.lp_check(at, e - s, 0, 0);
  release();
  return k;
}

/** Fields the table of lpCheckFields takes at most (FIXED_TABLE's slots, half filled). */
const CHECK_FIELDS_MAX = FIXED_TABLE / 8;

/**
 * lpCheck of a hash's listpack that also looks for two equal fields in the same pass, for
 * lpDupState() to tell (perf: RESTORE reads the listpack once). The table is sized from the
 * declared count (a false one fails the check), at most CHECK_FIELDS_MAX fields.
 */
export function lpCheckFields(b: Uint8Array, s: number, e: number): number {
  const declared = e - s >= 6 ? b[s + 4] | (b[s + 5] << 8) : 0;
  const fields = declared === 65535 ? CHECK_FIELDS_MAX : Math.min(declared >> 1, CHECK_FIELDS_MAX);
  const size = dupSlots(fields);
  place(b, s, e, size * 4);
  const k = on.x.lp_check(at, e - s, on.t, size);
  release();
  return k;
}

/**
 * After lpCheckFields of a canonical listpack: 0 when no two fields are equal, 1 when two are,
 * 2 when not known (more fields than its table takes: ask lpDupFields).
 */
export function lpDupState(): number {
  return on.x.lp_dup_state();
}

/**
 * True when two of every second entry (the fields of a hash) of b[s, e), which lpCheck found
 * canonical, are equal (equal entries then have equal bytes).
 */
export function lpDupFields(b: Uint8Array, s: number, e: number, fields: number): boolean {
  if (fields < 2) return false;
  const size = dupSlots(fields);
  place(b, s, e, size * 4);
  const dup = on.x.lp_dup_fields(at, e - s, on.t, size) !== 0;
  release();
  return dup;
}

/** lpDupFields of a listpack held as a string. */
export function lpsDupFields(lp: string, fields: number): boolean {
  if (fields < 2) return false;
  const size = dupSlots(fields);
  const n = lp.length;
  if (size * 4 <= FIXED_TABLE && n <= FIXED_SMALL) {
    on = fixed;
    at = fixed.a;
  } else {
    on = ownFor(n, size * 4);
    at = on.a;
  }
  const m = on.mem;
  // perf: a short listpack (a new hash of a few fields) by a loop, not the latin1Write binding.
  if (n <= 64) for (let i = 0; i < n; i++) m[at + i] = lp.charCodeAt(i);
  else m.latin1Write(lp, at, n);
  const dup = on.x.lp_dup_fields(at, n, on.t, size) !== 0;
  release();
  return dup;
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
