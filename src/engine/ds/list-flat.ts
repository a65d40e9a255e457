/**
 * A small list held flat: the entries of the one listpack node Redis 7.0 would hold it in
 * (quicklist with list-max-listpack-size), byte for byte, as a latin1 string (one char per
 * byte). A listpack is
 *
 *   [total bytes u32 LE][count u16 LE] entries... [0xFF]
 *   entry = encoding + data, then the back-length (1..5 bytes) of encoding + data
 *
 * and the header and end byte follow from the entries and the count, so only the entries are
 * held: a push is a concatenation (V8 joins the strings lazily), a pop a slice (no copy).
 * One V8 object per list (no array, no string per element, no off-heap backing store), made
 * from a file span with one latin1Slice. The functions here read and build such strings;
 * ListValue (list.ts) decides when a list is flat.
 */
import { LpWriter, backlenSize, lpIntOf } from '../../rdb/listpack.js';
import { lpsEntryLen as entryLen, lpsInt, lpsNext as nextEntry } from './listpack.js';
import type { ReplySink } from '../../resp/reply-sink.js';

/** Encoding + data bytes of the entry at o; the offset of the entry after it (ds/listpack.ts). */
export { entryLen, nextEntry };

/** A list element: latin1 string (<= BIG_ELEMENT bytes) or Buffer (bigger). */
export type Elem = string | Buffer;

/** Elements longer than this are kept as Buffers. */
export const BIG_ELEMENT = 8192;

/** The decimal text of 0..127 (7-bit integers), made once. */
const SMALL = Array.from({ length: 128 }, (_, i) => String(i));

function u32(f: string, o: number): number {
  return (f.charCodeAt(o) | (f.charCodeAt(o + 1) << 8) | (f.charCodeAt(o + 2) << 16)) + f.charCodeAt(o + 3) * 0x1000000;
}


/** Offset of the entry before offset p (p: an entry, or the end byte). */
export function prevEntry(f: string, p: number): number {
  // The back-length is read from its last byte backwards: 7 bits each, high bit = more before.
  let q = p - 1;
  let l = 0;
  let shift = 1;
  for (;;) {
    const x = f.charCodeAt(q);
    l += (x & 127) * shift;
    if ((x & 128) === 0) break;
    shift *= 128;
    q--;
  }
  return q - l;
}

/** The string data of a string entry at o: sets DATA to its offset and returns its length; -1 for integers. */
let DATA = 0;
function strData(f: string, o: number): number {
  const c = f.charCodeAt(o);
  if (c < 0x80) return -1;
  if (c < 0xc0) {
    DATA = o + 1;
    return c & 0x3f;
  }
  if (c < 0xe0) return -1;
  if (c < 0xf0) {
    DATA = o + 2;
    return ((c & 0x0f) << 8) | f.charCodeAt(o + 1);
  }
  if (c === 0xf0) {
    DATA = o + 5;
    return u32(f, o + 1);
  }
  return -1;
}

/** The integer entry at o as a number; NaN when beyond ±2^53 (then intText's BigInt path). */
function intValue(f: string, o: number): number {
  const c = f.charCodeAt(o);
  if (c < 0x80) return c;
  let v: number;
  if (c < 0xe0) {
    v = ((c & 0x1f) << 8) | f.charCodeAt(o + 1);
    if (v >= 4096) v -= 8192;
  } else if (c === 0xf1) {
    v = f.charCodeAt(o + 1) | (f.charCodeAt(o + 2) << 8);
    if (v >= 0x8000) v -= 0x10000;
  } else if (c === 0xf2) {
    v = f.charCodeAt(o + 1) | (f.charCodeAt(o + 2) << 8) | (f.charCodeAt(o + 3) << 16);
    if (v >= 0x800000) v -= 0x1000000;
  } else if (c === 0xf3) {
    v = u32(f, o + 1) | 0;
  } else {
    v = (u32(f, o + 5) | 0) * 0x100000000 + u32(f, o + 1);
    if (!Number.isSafeInteger(v)) return NaN;
  }
  return v;
}

/** The integer entry at o as decimal text. */
function intText(f: string, o: number): string {
  const c = f.charCodeAt(o);
  if (c < 0x80) return SMALL[c];
  const v = intValue(f, o);
  if (v === v) return String(v);
  const lo = u32(f, o + 1);
  const hi = u32(f, o + 5) | 0;
  return String((BigInt(hi) << 32n) + BigInt(lo));
}

/** The element at entry o. */
export function elemAt(f: string, o: number): Elem {
  const n = strData(f, o);
  if (n < 0) return intText(f, o);
  const s = f.slice(DATA, DATA + n);
  return n <= BIG_ELEMENT ? s : Buffer.from(s, 'latin1');
}

/**
 * Reply the element at entry o straight from the bytes (no string for a string entry; an
 * integer's digits written by the sink), as bulkElem(elemAt(f, o)) would; returns the offset
 * of the next entry.
 */
export function replyElem(out: ReplySink, f: string, o: number): number {
  const c = f.charCodeAt(o);
  if (c < 0x80) {
    out.bulkInt(c);
    return o + 2;
  }
  if (c < 0xc0) {
    const e = o + 1 + (c & 0x3f);
    out.bulkLatin1Range(f, o + 1, e);
    return e + 1;
  }
  if (c < 0xe0) {
    const v = ((c & 0x1f) << 8) | f.charCodeAt(o + 1);
    out.bulkInt(v >= 4096 ? v - 8192 : v);
    return o + 3;
  }
  const n = strData(f, o);
  if (n < 0) {
    const v = lpsInt(f, o);
    if (typeof v === 'number') out.bulkInt(v);
    else out.bulkLatin1(String(v));
    return nextEntry(f, o);
  }
  const l = DATA + n - o;
  if (n <= BIG_ELEMENT) out.bulkLatin1Range(f, DATA, DATA + n);
  else out.bulk(Buffer.from(f.slice(DATA, DATA + n), 'latin1'));
  return DATA + n + (l <= 127 ? 1 : backlenSize(l));
}

/** Offset of the entry after the one elemNext last read. */
export let NEXT = 0;

/** elemAt, and NEXT set to the next entry's offset (perf: walks decode each entry once). */
export function elemNext(f: string, o: number): Elem {
  const n = strData(f, o);
  if (n < 0) {
    NEXT = nextEntry(f, o);
    return intText(f, o);
  }
  const l = DATA + n - o;
  NEXT = DATA + n + (l <= 127 ? 1 : backlenSize(l));
  const s = f.slice(DATA, DATA + n);
  return n <= BIG_ELEMENT ? s : Buffer.from(s, 'latin1');
}

/**
 * Does the entry at o equal the target given as its latin1 string (null when longer than
 * BIG_ELEMENT) and its bytes? No string is made for string entries.
 */
export function entryEquals(f: string, o: number, s: string | null, b: Uint8Array): boolean {
  const n = strData(f, o);
  if (n < 0) {
    if (s === null) return false;
    // perf: an integer entry compared as a number with the target's value (LREM of a job id
    // scans the list: no decimal text per entry). The target is an integer entry's text only
    // if lpIntOf takes it (canonical, 64-bit); 16 digits and more compare as text.
    if (s !== targetText) {
      targetText = s;
      targetInt = lpIntOf(s);
    }
    const t = targetInt;
    if (t === null) return false;
    return typeof t === 'number' ? intValue(f, o) === t : intText(f, o) === s;
  }
  if (n !== b.length) return false;
  if (s !== null) return f.startsWith(s, DATA);
  for (let k = 0; k < n; k++) if (f.charCodeAt(DATA + k) !== b[k]) return false;
  return true;
}

/** entryEquals' last target and its lpIntOf value. */
let targetText: string | null = null;
let targetInt: number | bigint | null = null;

const ew = new LpWriter();

/** One-char strings for bytes 0..255. */
const CH = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i));

/** The listpack entry (encoding, data, back-length) of an element, as lpAppend writes it. */
export function entryOf(e: Elem): string {
  if (typeof e === 'string') {
    const n = e.length;
    const c = n === 0 ? 0 : e.charCodeAt(0);
    // perf: the usual short elements without the writer (a native call per entry).
    if (n < 64 && (c < 45 || c > 57 || c === 47)) return CH[0x80 | n] + e + CH[1 + n];
    const v = lpIntOf(e);
    if (typeof v === 'number' && v >= -8388608 && v <= 8388607) {
      if (v >= 0 && v <= 127) return String.fromCharCode(v, 1);
      if (v >= -4096 && v <= 4095) {
        const u = v < 0 ? v + 8192 : v;
        return String.fromCharCode((u >>> 8) | 0xc0, u & 0xff, 2);
      }
      if (v >= -32768 && v <= 32767) return String.fromCharCode(0xf1, v & 0xff, (v >>> 8) & 0xff, 3);
      return String.fromCharCode(0xf2, v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, 4);
    }
    if (v === null && n < 64) return CH[0x80 | n] + e + CH[1 + n];
  }
  ew.start();
  ew.str(e);
  return ew.buf.latin1Slice(6, ew.pos);
}

/** The listpack of `n` elements whose entries are `entries`: header, entries, end byte. */
export function listpackOf(entries: string, n: number): string {
  const total = entries.length + 7;
  const c = n < 65535 ? n : 65535;
  return String.fromCharCode(total & 255, (total >>> 8) & 255, (total >>> 16) & 255, total >>> 24, c & 255, c >>> 8) + entries + '\xff';
}

/** Builds whole listpacks (a list becoming flat): start(), str()..., then done(). */
export const builder = new LpWriter();

/** The entries `builder` holds, as a string. */
export function builtEntries(): string {
  return builder.buf.latin1Slice(6, builder.pos);
}
