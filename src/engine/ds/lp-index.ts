/**
 * Field lookup of a listpack hash held as a string (ds/hash.ts), with an index for the bigger
 * ones. A scan costs ~5 ns per field (an HGET in 100 fields: 1.2 µs against 0.6 with a Map).
 * A hash of IDX_MIN fields or more that is read by field again and again gets a small index:
 * a fingerprint byte per field (a hash of its entry bytes; entries are canonical, so equal
 * fields have equal bytes), searched with the native indexOf, and the position of every 8th
 * field, from which a candidate is reached in at most 7 steps and then compared. ~1.25 bytes
 * per field in one string. It lives beside the hash in a WeakMap (no slot in every
 * HashValue: small hashes, and big ones that are only written, pay nothing), belongs to the
 * listpack string it was built from, and is rebuilt when more than SCANS reads met the hash
 * unchanged since its last edit (a hash written as often as it is read keeps scanning, as
 * before). Listpacks of more than 64 KB are not indexed (positions are 16 bits).
 */
import { LpWriter } from '../../rdb/listpack.js';
import { lpsEntryLen, lpsFind, lpsInt, lpsIntOf, lpsNext, lpsStrHeader } from './listpack.js';

/** Fewest fields of an indexed hash. */
export const IDX_MIN = 32;
/** Lookups that scan one changed listpack before its index is rebuilt. */
const SCANS = 2;

class FieldIndex {
  /**
   * For the listpack `lp`: one fingerprint byte per field (a hash of its entry's bytes), in
   * order, then the position of every 8th field entry (16 bits LE): ~1.25 bytes per field,
   * one string ('' = none).
   */
  t = '';
  /** The listpack `t` was built from ('' = none), and its field count. */
  lp = '';
  n = 0;
  /** Reads that scanned since the last edit. */
  scans = 0;
}

const INDEX = new WeakMap<object, FieldIndex>();
/** Scratch: the entry bytes of an integer field; the index being built. */
const IW = new LpWriter();
let TB = Buffer.allocUnsafe(256);
/** One-char strings for bytes 0..255 (the fingerprint searched with indexOf). */
const CH = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i));

function mix(h: number, c: number): number {
  return Math.imul(h ^ c, 0x01000193);
}

/**
 * Position of the field entry `f` in the listpack `lp` of `n` fields owned by `owner`, or -1.
 * `read`: a read command's lookup (counts towards building the index; a write's lookup only
 * uses a valid one).
 */
export function fieldFind(owner: object, lp: string, n: number, f: string, read: boolean): number {
  if (n < IDX_MIN || lp.length > 65535) return lpsFind(lp, f);
  let ix = INDEX.get(owner);
  if (ix === undefined) {
    if (!read) return lpsFind(lp, f);
    ix = new FieldIndex();
    INDEX.set(owner, ix);
  }
  if (ix.lp !== lp) {
    if (!read || ++ix.scans <= SCANS) return lpsFind(lp, f);
    build(ix, lp, n);
  }
  return probe(ix, lp, f);
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
    ix.t = '';
    ix.scans = 0;
  }
}

/** The fingerprint byte of a hash of entry bytes. */
function fingerprint(h: number): number {
  return (h ^ (h >>> 8) ^ (h >>> 16) ^ (h >>> 24)) & 255;
}

function build(ix: FieldIndex, lp: string, n: number): void {
  const size = n + 2 * ((n + 7) >> 3);
  if (TB.length < size) TB = Buffer.allocUnsafe(2 * size);
  const b = TB;
  const end = lp.length - 1;
  let k = 0;
  for (let p = 6; p < end && k < n; k++) {
    if ((k & 7) === 0) {
      b[n + (k >> 2)] = p & 255;
      b[n + (k >> 2) + 1] = p >>> 8;
    }
    const e = p + lpsEntryLen(lp, p);
    let h = 0x811c9dc5;
    for (let i = p; i < e; i++) h = mix(h, lp.charCodeAt(i));
    b[k] = fingerprint(h);
    p = lpsNext(lp, lpsNext(lp, p));
  }
  ix.t = b.latin1Slice(0, size);
  ix.lp = lp;
  ix.n = n;
  ix.scans = 0;
}

/** Field k's entry position: from the checkpoint before it, a walk of k % 8 pairs. */
function fieldAt(ix: FieldIndex, lp: string, k: number): number {
  const t = ix.t;
  const c = ix.n + ((k >> 3) << 1);
  let p = t.charCodeAt(c) | (t.charCodeAt(c + 1) << 8);
  for (let j = k & 7; j > 0; j--) p = lpsNext(lp, lpsNext(lp, p));
  return p;
}

function probe(ix: FieldIndex, lp: string, f: string): number {
  const t = ix.t;
  const n = ix.n;
  const iv = lpsIntOf(f);
  let h = 0x811c9dc5;
  if (iv !== null) {
    IW.start();
    IW.int(iv);
    const b = IW.buf;
    const e = IW.pos - 1; // the entry without its back-length (one byte: at most 9 bytes before it)
    for (let i = 6; i < e; i++) h = mix(h, b[i]);
    const ch = CH[fingerprint(h)];
    for (let k = t.indexOf(ch); k >= 0 && k < n; k = t.indexOf(ch, k + 1)) {
      const q = fieldAt(ix, lp, k);
      if (lpsStrHeader(lp, q) === 0 && lpsInt(lp, q) === iv) return q;
    }
    return -1;
  }
  const fl = f.length;
  let hl: number;
  if (fl < 64) {
    h = mix(h, 0x80 | fl);
    hl = 1;
  } else if (fl < 4096) {
    h = mix(mix(h, 0xe0 | (fl >>> 8)), fl & 255);
    hl = 2;
  } else {
    h = mix(mix(mix(mix(mix(h, 0xf0), fl & 255), (fl >>> 8) & 255), (fl >>> 16) & 255), fl >>> 24);
    hl = 5;
  }
  for (let i = 0; i < fl; i++) h = mix(h, f.charCodeAt(i));
  const ch = CH[fingerprint(h)];
  for (let k = t.indexOf(ch); k >= 0 && k < n; k = t.indexOf(ch, k + 1)) {
    const q = fieldAt(ix, lp, k);
    if (lpsEntryLen(lp, q) === hl + fl && lpsStrHeader(lp, q) === hl && lp.startsWith(f, q + hl)) return q;
  }
  return -1;
}
