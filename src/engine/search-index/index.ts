/**
 * One SEARCH.* index: the documents of the keys under its prefixes, reduced to the values of
 * its schema fields. Each document has a slot (a small integer, reused after removal) and the
 * structures below are keyed by slot, not by key: an inverted index (term -> documents with
 * their term frequency) and per-slot lengths per TEXT field for BM25, fuzzy and regex matching
 * (phrases read positions from the document's own term sequence); a value index
 * (value -> slots) per KEYWORD field; a sorted column per numeric/DATE field for ranges. Other
 * conditions test the per-document values.
 *
 * The index lives in the search worker thread (worker.ts), which receives the schema values of
 * changed documents in batches from the engine thread (feed.ts) and answers queries; this class
 * knows nothing of the keyspace. A document may carry an expiry time: queries first drop the
 * documents whose time has passed without a write (`purge`).
 *
 * ON STREAM: each entry of the stream is a document keyed by its entry id (the engine side
 * works out which entries arrived or left).
 */
import { JFloat } from '../ds/json.js';
import { analyze } from './analyze.js';
import { fieldnormId } from './bm25.js';
import type { FieldDef, FieldType, IndexDef } from './schema.js';

const NUMERIC_TYPES = new Set<FieldType>(['U64', 'I64', 'F64', 'DATE']);

/** One document: per schema field, its values (TEXT: the term sequence). */
export interface DocRec {
  readonly vals: (readonly (string | number | boolean)[] | undefined)[];
  /** Its position in keyAt/recAt (scans walk these arrays: no iterator allocation). */
  slot: number;
}

/**
 * The documents containing one term of one TEXT field: an append-only run of (slot, version,
 * term frequency) triples. A document leaving the index is not searched for here: its entries
 * go stale (the slot's current version differs) and are skipped by readers, counted in `dead`,
 * and compacted away once they outnumber the live ones. Appending and invalidating are O(1)
 * without a hash table per term, which is what made indexing costly.
 */
export class Posting {
  /** [slot, version, tf] per entry; versions are doubles so they never wrap. */
  e: Float64Array = new Float64Array(6);
  /** Used length of `e` (3 per entry). */
  n = 0;
  /** Documents containing the term now (BM25's document frequency). */
  live = 0;
  dead = 0;

  push(slot: number, ver: number): void {
    if (this.n + 3 > this.e.length) {
      const g = new Float64Array(this.e.length * 2);
      g.set(this.e);
      this.e = g;
    }
    const e = this.e;
    const n = this.n;
    e[n] = slot;
    e[n + 1] = ver;
    e[n + 2] = 1;
    this.n = n + 3;
    this.live++;
  }

  /** Drop the stale entries (those whose slot now holds another version). */
  compact(vers: number[]): void {
    const e = this.e;
    let w = 0;
    for (let r = 0; r < this.n; r += 3) {
      if (vers[e[r]] !== e[r + 1]) continue;
      e[w] = e[r]; e[w + 1] = e[r + 1]; e[w + 2] = e[r + 2];
      w += 3;
    }
    this.n = w;
    this.dead = 0;
    if (this.e.length > 64 && w * 4 < this.e.length) this.e = this.e.slice(0, Math.max(6, w * 2));
  }
}

/** Per TEXT field: postings and lengths for BM25. */
export class TextField {
  /** term -> the documents containing it; a term leaves when its last document does. */
  readonly postings = new Map<string, Posting>();
  /** Terms of the field per slot (BM25's document length). */
  readonly lens: number[] = [];
  /** The same as one-byte fieldnorm codes (BM25 as Tantivy scores). */
  readonly normIds: number[] = [];
  totalLen = 0;
  docs = 0;
  /** Bumped when a term enters or leaves the vocabulary (postings' keys). */
  vocabVersion = 0;
  /** Smart matching's vocabulary expansions of query words, valid for one vocabulary version. */
  readonly expansions = new Map<string, string[]>();
  expansionsVersion = 0;
}

/** The positions in a document's term sequence where `test` holds (phrases read positions here). */
export function positionsOf(terms: readonly string[], test: (t: string) => boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < terms.length; i++) if (test(terms[i])) out.push(i);
  return out;
}

/**
 * A numeric (or DATE) field's values sorted, for range conditions: built on first use, then kept
 * usable under writes by recording the slots changed since (`delta`), which a range query checks
 * on top of the binary-searched run. Rebuilt when the delta grows past a fraction of the index.
 * Entries may be stale (the slot changed or was reused): candidates are always re-tested.
 */
export class NumColumn {
  vals: Float64Array = new Float64Array(0);
  slots: Int32Array = new Int32Array(0);
  built = false;
  /** Every document with the field has one value in it (a run of entries counts documents). */
  single = true;
  readonly delta = new Set<number>();

  touch(slot: number): void {
    if (this.built) this.delta.add(slot);
  }

  /** Ready for a range query over the index's current documents. */
  ready(idx: SearchIndex, fi: number): this {
    if (this.built && this.delta.size * 8 <= idx.docs.size + 64) return this;
    const recs = idx.recAt;
    let n = 0;
    let docs = 0;
    for (let s = 0; s < recs.length; s++) {
      const k = recs[s]?.vals[fi]?.length ?? 0;
      n += k;
      if (k > 0) docs++;
    }
    this.single = n === docs;
    const order = new Int32Array(n);
    const raw = new Float64Array(n);
    const rawSlot = new Int32Array(n);
    let j = 0;
    for (let s = 0; s < recs.length; s++) {
      const xs = recs[s]?.vals[fi];
      if (xs === undefined) continue;
      for (const x of xs) { raw[j] = x as number; rawSlot[j] = s; order[j] = j; j++; }
    }
    order.sort((a, b) => raw[a] - raw[b]);
    this.vals = new Float64Array(n);
    this.slots = new Int32Array(n);
    for (let i = 0; i < n; i++) { this.vals[i] = raw[order[i]]; this.slots[i] = rawSlot[order[i]]; }
    this.delta.clear();
    this.built = true;
    return this;
  }

  /** First position whose value is >= x (or > x with `strict`). */
  bound(x: number, strict: boolean): number {
    const v = this.vals;
    let lo = 0;
    let hi = v.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (v[m] < x || (strict && v[m] === x)) lo = m + 1;
      else hi = m;
    }
    return lo;
  }

  clear(): void {
    this.vals = new Float64Array(0);
    this.slots = new Int32Array(0);
    this.built = false;
    this.delta.clear();
  }
}

export class SearchIndex {
  readonly docs = new Map<string, DocRec>();
  /** Documents by slot (holes are undefined; freed slots are reused). */
  readonly keyAt: (string | undefined)[] = [];
  readonly recAt: (DocRec | undefined)[] = [];
  /** The version of the document in each slot (-1: empty); postings entries carry it. */
  readonly verAt: number[] = [];
  private version = 0;
  private readonly free: number[] = [];
  /** Expiry time (ms) of the documents that have one, and the earliest of them. */
  private readonly expOf = new Map<string, number>();
  private minExp = Infinity;
  readonly text: (TextField | null)[];
  /** KEYWORD fields: value -> slots (equality and $in find their candidates here). */
  readonly values: (Map<string | number | boolean, Set<number>> | null)[];
  /** Numeric and DATE fields: sorted values for ranges. */
  readonly columns: (NumColumn | null)[];
  /** Field name -> position in def.fields. */
  readonly byName = new Map<string, number>();
  constructor(readonly def: IndexDef) {
    this.text = def.fields.map((f) => (f.type === 'TEXT' ? new TextField() : null));
    this.values = def.fields.map((f) => (f.type === 'KEYWORD' ? new Map() : null));
    this.columns = def.fields.map((f) => (NUMERIC_TYPES.has(f.type) ? new NumColumn() : null));
    def.fields.forEach((f, i) => this.byName.set(f.name, i));
  }

  clear(): void {
    this.docs.clear();
    this.expOf.clear();
    this.minExp = Infinity;
    this.keyAt.length = 0;
    this.recAt.length = 0;
    this.verAt.length = 0;
    this.free.length = 0;
    for (const t of this.text) if (t !== null) { t.postings.clear(); t.lens.length = 0; t.normIds.length = 0; t.totalLen = 0; t.docs = 0; t.vocabVersion++; }
    for (const v of this.values) v?.clear();
    for (const c of this.columns) c?.clear();
  }

  /**
   * Enter or replace (same slot) the document of `key` from the raw values of its schema fields
   * (per field, the leaves found; null: not a document of this index), or remove it (null).
   * `exp`: its expiry time in ms, 0 for none.
   */
  putLeaves(key: string, leaves: (unknown[] | undefined)[] | null, exp: number): void {
    if (leaves === null) {
      this.put(key, null);
      if (this.expOf.size !== 0) this.expOf.delete(key);
      return;
    }
    const fields = this.def.fields;
    const vals: DocRec['vals'] = new Array(fields.length);
    for (let f = 0; f < fields.length; f++) {
      const ls = leaves[f];
      if (ls !== undefined && ls.length > 0) vals[f] = convert(fields[f], ls);
    }
    this.put(key, { vals, slot: -1 });
    if (exp !== 0) {
      this.expOf.set(key, exp);
      if (exp < this.minExp) this.minExp = exp;
    } else if (this.expOf.size !== 0) {
      this.expOf.delete(key);
    }
  }

  /** Drop the documents whose expiry time passed (a key that expired without a write yet). */
  purge(now: number): void {
    if (now <= this.minExp) return;
    let min = Infinity;
    for (const [key, exp] of this.expOf) {
      if (exp < now) { this.expOf.delete(key); this.put(key, null); }
      else if (exp < min) min = exp;
    }
    this.minExp = min;
  }

  /** Enter, replace (same slot) or remove (null) the document of `key`. */
  private put(key: string, rec: DocRec | null): void {
    const old = this.docs.get(key);
    if (old !== undefined) this.unindex(old);
    if (rec === null) {
      if (old === undefined) return;
      this.docs.delete(key);
      this.keyAt[old.slot] = undefined;
      this.recAt[old.slot] = undefined;
      this.free.push(old.slot);
      return;
    }
    let slot: number;
    if (old !== undefined) {
      slot = old.slot;
    } else {
      slot = this.free.pop() ?? this.keyAt.length;
      this.keyAt[slot] = key;
    }
    rec.slot = slot;
    this.recAt[slot] = rec;
    this.docs.set(key, rec);
    this.index(rec);
  }

  /** Take a document's values out of the postings, value indexes and columns (its slot stays). */
  private unindex(old: DocRec): void {
    const slot = old.slot;
    this.verAt[slot] = -1;
    for (let f = 0; f < old.vals.length; f++) {
      const xs = old.vals[f];
      if (xs === undefined) continue;
      const vm = this.values[f];
      if (vm !== null) {
        for (const x of xs) {
          const set = vm.get(x);
          if (set !== undefined && set.delete(slot) && set.size === 0) vm.delete(x);
        }
      }
      this.columns[f]?.touch(slot);
      const t = this.text[f];
      if (t === null) continue;
      const terms = xs as string[];
      t.totalLen -= terms.length;
      t.docs--;
      t.lens[slot] = 0;
      // One entry per document and term: visit each distinct term once (a scan for short texts).
      const seen = terms.length > 32 ? new Set<string>() : null;
      for (let i = 0; i < terms.length; i++) {
        if (seen === null ? seenBefore(terms, i) : seen.has(terms[i]) || (seen.add(terms[i]), false)) continue;
        const p = t.postings.get(terms[i]);
        if (p === undefined) continue;
        if (--p.live === 0) { t.postings.delete(terms[i]); t.vocabVersion++; }
        else if (++p.dead > p.live && p.dead > 8) p.compact(this.verAt);
      }
    }
  }

  /** Enter a document's values, under a new version of its slot. */
  private index(rec: DocRec): void {
    const slot = rec.slot;
    const ver = ++this.version;
    this.verAt[slot] = ver;
    for (let f = 0; f < rec.vals.length; f++) {
      const xs = rec.vals[f];
      if (xs === undefined) continue;
      const vm = this.values[f];
      if (vm !== null) {
        for (const x of xs) {
          let set = vm.get(x);
          if (set === undefined) { set = new Set(); vm.set(x, set); }
          set.add(slot);
        }
      }
      this.columns[f]?.touch(slot);
      const t = this.text[f];
      if (t === null) continue;
      const terms = xs as string[];
      t.totalLen += terms.length;
      t.docs++;
      t.lens[slot] = terms.length;
      t.normIds[slot] = fieldnormId(terms.length);
      for (let pos = 0; pos < terms.length; pos++) {
        let p = t.postings.get(terms[pos]);
        if (p === undefined) { p = new Posting(); t.postings.set(terms[pos], p); t.vocabVersion++; }
        // A repeat of a term in this document: its entry is the posting's last one.
        if (p.n > 0 && p.e[p.n - 3] === slot && p.e[p.n - 2] === ver) p.e[p.n - 1]++;
        else p.push(slot, ver);
      }
    }
  }

}

/** True if terms[i] already occurred before position i (documents are short: a scan). */
function seenBefore(terms: readonly string[], i: number): boolean {
  const t = terms[i];
  for (let j = 0; j < i; j++) if (terms[j] === t) return true;
  return false;
}

function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof JFloat) return v.v;
  if (typeof v === 'string' && v.trim() !== '') return Number(v);
  return NaN;
}

/** A DATE value as ms since the epoch (RFC 3339 text, or a number of ms); NaN if invalid. */
export function dateValue(v: unknown): number {
  if (typeof v === 'string') return /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
  return num(v);
}

/** Leaves converted to the field's type; values that do not fit the type are left out. */
function convert(f: FieldDef, leaves: unknown[]): (string | number | boolean)[] | undefined {
  const out: (string | number | boolean)[] = [];
  switch (f.type) {
    case 'TEXT':
      for (const l of leaves) {
        const s = typeof l === 'string' ? l : l instanceof JFloat ? String(l.v) : String(l);
        for (const t of analyze(s, f.noTokenize, f.noStem)) out.push(t);
      }
      return out;
    case 'U64':
    case 'I64':
    case 'F64':
      for (const l of leaves) {
        if (typeof l === 'boolean') continue;
        const x = num(l);
        if (!Number.isFinite(x)) continue;
        if (f.type !== 'F64' && !Number.isInteger(x)) continue;
        if (f.type === 'U64' && x < 0) continue;
        out.push(x);
      }
      break;
    case 'DATE':
      for (const l of leaves) { const x = dateValue(l); if (Number.isFinite(x)) out.push(x); }
      break;
    case 'BOOL':
      for (const l of leaves) {
        if (typeof l === 'boolean') out.push(l);
        else if (l === 'true' || l === 'false') out.push(l === 'true');
      }
      break;
    case 'KEYWORD':
    case 'FACET':
      for (const l of leaves) out.push(typeof l === 'string' ? l : l instanceof JFloat ? String(l.v) : String(l));
      break;
  }
  return out.length > 0 ? out : undefined;
}
