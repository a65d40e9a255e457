/**
 * The JavaScript listpack checks that native/lzf.wasm (listpack.c) replaced, kept as the oracle
 * of test/types/listpack-native.test.ts (unchanged but for the imports).
 */
import { lpIntOf } from '../../dist/rdb/listpack.js';
import { lpsEntryLen, lpsInt, lpsNext } from '../../dist/engine/ds/listpack.js';

function lpsU32(s: string, p: number): number {
  return (s.charCodeAt(p) | (s.charCodeAt(p + 1) << 8) | (s.charCodeAt(p + 2) << 16) | (s.charCodeAt(p + 3) << 24)) >>> 0;
}

function intTextLen(v: number | bigint): number {
  if (typeof v === 'number' && v >= 0 && v < 10) return 1;
  return String(v).length;
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
    // The back-length must read as l as Redis's lpDecodeBacklen reads it: backwards from its
    // last byte while bit 7 is set (on into the entry's bytes if need be), at most 5 bytes.
    const bl = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
    if (p + bl > end) return -1;
    let v = 0;
    for (let q = p + bl - 1, shift = 0; ; q--, shift += 7) {
      if (shift > 28) return -1;
      const x = s.charCodeAt(q);
      v += (x & 127) * 2 ** shift;
      if (x < 128) break;
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

