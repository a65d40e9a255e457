/**
 * Field lookup of a listpack hash held as a string (ds/hash.ts), with an index for the bigger
 * ones. A scan costs ~5 ns per field (an HGET in 100 fields: 1.2 µs against 0.6 with a Map);
 * a hash of IDX_MIN fields or more that is read by field again and again gets an
 * open-addressing table of its field entries' positions, keyed by a hash of the entry bytes
 * (entries are canonical: equal fields have equal bytes). The table lives beside the hash in
 * a WeakMap (no slot in every HashValue: small hashes pay nothing), belongs to the one
 * listpack string it was built from, and is rebuilt only when SCANS lookups meet the same
 * changed string (a hash written as often as it is read keeps scanning, as before).
 * Listpacks of more than 64 KB are not indexed (positions are 16 bits).
 */
import { LpWriter } from '../../rdb/listpack.js';
import { lpsEntryLen, lpsFind, lpsInt, lpsIntOf, lpsNext, lpsStrHeader } from './listpack.js';

/** Fewest fields of an indexed hash. */
export const IDX_MIN = 32;
/** Lookups that scan one changed listpack before its index is rebuilt. */
const SCANS = 2;

class FieldIndex {
  /** The listpack the table was built from ('' = none). */
  lp = '';
  t: Uint16Array = EMPTY;
  /** The listpack the last scans met, and how many. */
  seen = '';
  scans = 0;
}

const EMPTY = new Uint16Array(0);
const INDEX = new WeakMap<object, FieldIndex>();
/** Scratch: the entry bytes of an integer field. */
const IW = new LpWriter();

function mix(h: number, c: number): number {
  return Math.imul(h ^ c, 0x01000193);
}

/** Position of the field entry `f` in the listpack `lp` of `n` fields owned by `owner`, or -1. */
export function fieldFind(owner: object, lp: string, n: number, f: string): number {
  if (n < IDX_MIN || lp.length > 65535) return lpsFind(lp, f);
  let ix = INDEX.get(owner);
  if (ix === undefined) {
    ix = new FieldIndex();
    INDEX.set(owner, ix);
  }
  if (ix.lp !== lp) {
    if (ix.seen !== lp) {
      ix.seen = lp;
      ix.scans = 0;
    }
    if (++ix.scans <= SCANS) return lpsFind(lp, f);
    build(ix, lp, n);
  }
  return probe(ix.t, lp, f);
}

/**
 * The listpack of `owner` changed from `before` to `after`; `moved`: entries changed position
 * (else the table stays valid for `after`). Releases a stale table's string.
 */
export function fieldIndexEdited(owner: object, before: string, after: string | null, moved: boolean): void {
  const ix = INDEX.get(owner);
  if (ix === undefined) return;
  if (after === null) {
    INDEX.delete(owner);
  } else if (ix.lp === before && !moved) {
    ix.lp = after;
  } else {
    ix.lp = '';
    ix.t = EMPTY;
  }
}

function build(ix: FieldIndex, lp: string, n: number): void {
  let size = 64;
  while (size < 2 * n) size *= 2;
  const t = ix.t.length === size ? ix.t.fill(0) : new Uint16Array(size);
  const mask = size - 1;
  const end = lp.length - 1;
  for (let p = 6; p < end;) {
    const e = p + lpsEntryLen(lp, p);
    let h = 0x811c9dc5;
    for (let i = p; i < e; i++) h = mix(h, lp.charCodeAt(i));
    let slot = (h ^ (h >>> 16)) & mask;
    while (t[slot] !== 0) slot = (slot + 1) & mask;
    t[slot] = p;
    p = lpsNext(lp, lpsNext(lp, p));
  }
  ix.t = t;
  ix.lp = lp;
  ix.seen = '';
  ix.scans = 0;
}

function probe(t: Uint16Array, lp: string, f: string): number {
  const mask = t.length - 1;
  const iv = lpsIntOf(f);
  let h = 0x811c9dc5;
  if (iv !== null) {
    IW.start();
    IW.int(iv);
    const b = IW.buf;
    const e = IW.pos - 1; // the entry without its back-length (one byte: at most 9 bytes before it)
    for (let i = 6; i < e; i++) h = mix(h, b[i]);
    for (let slot = (h ^ (h >>> 16)) & mask; ; slot = (slot + 1) & mask) {
      const q = t[slot];
      if (q === 0) return -1;
      if (lpsStrHeader(lp, q) === 0 && lpsInt(lp, q) === iv) return q;
    }
  }
  const n = f.length;
  let hl: number;
  if (n < 64) {
    h = mix(h, 0x80 | n);
    hl = 1;
  } else if (n < 4096) {
    h = mix(mix(h, 0xe0 | (n >>> 8)), n & 255);
    hl = 2;
  } else {
    h = mix(mix(mix(mix(mix(h, 0xf0), n & 255), (n >>> 8) & 255), (n >>> 16) & 255), n >>> 24);
    hl = 5;
  }
  for (let i = 0; i < n; i++) h = mix(h, f.charCodeAt(i));
  for (let slot = (h ^ (h >>> 16)) & mask; ; slot = (slot + 1) & mask) {
    const q = t[slot];
    if (q === 0) return -1;
    if (lpsEntryLen(lp, q) === hl + n && lpsStrHeader(lp, q) === hl && lp.startsWith(f, q + hl)) return q;
  }
}
