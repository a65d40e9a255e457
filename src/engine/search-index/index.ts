/**
 * One SEARCH.* index: the documents of the keys under its prefixes, reduced to the values of
 * its schema fields. Each document has a slot (a small integer, reused after removal) and the
 * structures below are keyed by slot, not by key: an inverted index (term -> documents with
 * their term frequency) and per-slot lengths per TEXT field for BM25, fuzzy and regex matching
 * (phrases read positions from the document's own term sequence); a value index
 * (value -> slots) per KEYWORD field; a sorted column per numeric/DATE field for ranges. Other
 * conditions test the per-document values.
 *
 * Keeping it in sync is lazy and batched: a write only records its key in `dirty` (one Set
 * insertion on the write path); queries, COUNT and WAITINDEXING first apply the pending keys by
 * reading their current values. A key that vanished, expired or changed type leaves the index.
 *
 * ON STREAM: the index is bound to one stream key and each entry is a document, keyed by its
 * entry id. Entries never change, and XADD only appends ids above the last one: a write to the
 * stream indexes the entries after the last one taken, and removes entries only when the count
 * of documents exceeds the stream's length (XDEL, XTRIM). Another stream object under the key
 * (DEL and XADD, RENAME, RESTORE) is indexed afresh.
 */
import type { Db, Entry } from '../db.js';
import { T } from '../db.js';
import { JFloat, type JValue, serialize } from '../ds/json.js';
import type { HashValue } from '../ds/hash.js';
import type { JsonDoc } from '../ds/json.js';
import { formatId, ID_MAX, ID_MIN, type Stream, type StreamId } from '../ds/stream.js';
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
  /** Keys written since the index last caught up. */
  readonly dirty = new Set<string>();
  /** The whole keyspace must be rescanned before the next use (start-up, SWAPDB). */
  stale = false;
  readonly text: (TextField | null)[];
  /** KEYWORD fields: value -> slots (equality and $in find their candidates here). */
  readonly values: (Map<string | number | boolean, Set<number>> | null)[];
  /** Numeric and DATE fields: sorted values for ranges. */
  readonly columns: (NumColumn | null)[];
  /** Field name -> position in def.fields. */
  readonly byName = new Map<string, number>();
  /** Hash field names as keyspace strings (latin1 bytes of the UTF-8 name). */
  private readonly hashNames: string[];
  private readonly paths: string[][];
  /** ON STREAM: field names as bytes, the stream object indexed and the last entry id taken from it. */
  private readonly fieldBufs: Buffer[];
  private stream: Stream | null = null;
  private streamLast: StreamId = ID_MIN;

  constructor(readonly def: IndexDef) {
    this.text = def.fields.map((f) => (f.type === 'TEXT' ? new TextField() : null));
    this.values = def.fields.map((f) => (f.type === 'KEYWORD' ? new Map() : null));
    this.columns = def.fields.map((f) => (NUMERIC_TYPES.has(f.type) ? new NumColumn() : null));
    def.fields.forEach((f, i) => this.byName.set(f.name, i));
    this.hashNames = def.fields.map((f) => Buffer.from(f.from ?? f.name, 'utf8').toString('latin1'));
    this.paths = def.fields.map((f) => (f.from ?? f.name).split('.'));
    this.fieldBufs = def.fields.map((f) => Buffer.from(f.from ?? f.name, 'utf8'));
  }

  /** A document's name in replies: the key, or for a stream its entry id as text. */
  replyKey(key: string): string {
    return this.def.on === 'STREAM' ? formatId(key) : key;
  }

  /** True if `key` lies under one of the prefixes. */
  covers(key: string): boolean {
    const ps = this.def.prefixes;
    if (this.def.on === 'STREAM') return key === ps[0];
    for (let i = 0; i < ps.length; i++) if (key.startsWith(ps[i])) return true;
    return false;
  }

  /** Apply pending changes (and a full rescan if stale) so that queries see every write. */
  catchUp(db: Db, now: number): void {
    if (this.def.on === 'STREAM') {
      // Always: a cheap check (one lookup, a walk from the last entry taken) that also sees a
      // TTL that ran out without a write.
      if (this.stale) { this.stale = false; this.clear(); } // REINDEX, SWAPDB, start-up
      this.dirty.clear();
      this.syncStream(db, now);
      return;
    }
    if (this.stale) {
      this.stale = false;
      this.dirty.clear();
      this.clear();
      for (const e of db.entries()) if (this.covers(e.key)) this.apply(e.key, e, now);
      return;
    }
    if (this.dirty.size === 0) return;
    for (const key of this.dirty) this.apply(key, db.peek(key), now);
    this.dirty.clear();
  }

  /**
   * Apply pending keys until `deadline` (performance.now() ms): the background drain, so that
   * indexing work is spread over idle time instead of landing on the next query. True when done.
   */
  catchUpSome(db: Db, now: number, deadline: number): boolean {
    if (this.def.on === 'STREAM') { this.catchUp(db, now); return true; }
    let n = 0;
    for (const key of this.dirty) {
      this.apply(key, db.peek(key), now);
      this.dirty.delete(key);
      if ((++n & 63) === 0 && performance.now() > deadline) return this.dirty.size === 0;
    }
    return true;
  }

  clear(): void {
    this.stream = null;
    this.streamLast = ID_MIN;
    this.docs.clear();
    this.keyAt.length = 0;
    this.recAt.length = 0;
    this.verAt.length = 0;
    this.free.length = 0;
    for (const t of this.text) if (t !== null) { t.postings.clear(); t.lens.length = 0; t.normIds.length = 0; t.totalLen = 0; t.docs = 0; t.vocabVersion++; }
    for (const v of this.values) v?.clear();
    for (const c of this.columns) c?.clear();
  }

  /** Re-read one key (undefined: gone). A changed document keeps its slot. */
  apply(key: string, e: Entry | undefined, now: number): void {
    this.put(key, e === undefined || (e.exp !== 0 && e.exp < now) ? null : this.extract(e));
  }

  /** Bring a stream index in line with the stream now under its key. */
  private syncStream(db: Db, now: number): void {
    const e = db.peek(this.def.prefixes[0]);
    const s = e === undefined || e.type !== T.STREAM || (e.exp !== 0 && e.exp < now) ? null : (e.v as Stream);
    if (s !== this.stream) { this.clear(); this.stream = s; }
    if (s === null) return;
    const last = this.streamLast;
    s.forRange(last, ID_MAX, false, (id, fv) => {
      if (id !== last) { this.put(id, this.extractEntry(fv)); this.streamLast = id; }
      return true;
    });
    // Every entry is a document: more documents than entries means some were deleted or
    // trimmed. Documents were entered in id order, so a trim (the oldest entries) is found in
    // as many steps as it removed.
    let gone = this.docs.size - s.length;
    if (gone > 0) {
      for (const id of this.docs.keys()) {
        if (s.get(id) !== null) continue;
        this.put(id, null);
        if (--gone === 0) break;
      }
    }
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

  /** The schema values of a stream entry's field-value pairs (a field given twice: both values). */
  private extractEntry(fv: readonly Buffer[]): DocRec {
    const fields = this.def.fields;
    const vals: DocRec['vals'] = new Array(fields.length);
    for (let f = 0; f < fields.length; f++) {
      let leaves: string[] | null = null;
      for (let i = 0; i + 1 < fv.length; i += 2) {
        if (fv[i].equals(this.fieldBufs[f])) (leaves ??= []).push(fv[i + 1].toString('utf8'));
      }
      if (leaves !== null) vals[f] = convert(fields[f], leaves);
    }
    return { vals, slot: -1 };
  }

  /** The schema values of an entry, or null when it is not a document of this index. */
  private extract(e: Entry): DocRec | null {
    const fields = this.def.fields;
    const vals: DocRec['vals'] = new Array(fields.length);
    const on = this.def.on;
    if (on === 'HASH') {
      if (e.type !== T.HASH) return null;
      const h = e.v as HashValue;
      for (let f = 0; f < fields.length; f++) {
        const raw = h.get(this.hashNames[f]);
        if (raw !== undefined) vals[f] = convert(fields[f], [Buffer.from(raw, 'latin1').toString('utf8')]);
      }
      return { vals, slot: -1 };
    }
    let root: unknown;
    if (on === 'JSON') {
      if (e.type !== T.JSON) return null;
      root = (e.v as JsonDoc).root;
    } else {
      if (!e.isString) return null;
      try {
        root = JSON.parse((e.value as Buffer).toString('utf8'));
      } catch {
        return null;
      }
    }
    for (let f = 0; f < fields.length; f++) {
      const leaves: unknown[] = [];
      collect(root, this.paths[f], 0, leaves);
      if (leaves.length > 0) vals[f] = convert(fields[f], leaves);
    }
    return { vals, slot: -1 };
  }

  /** A document's content for replies: [[field, value]...] (JSON: one "$" pair). */
  content(db: Db, key: string, select: readonly string[] | null): [string, string][] {
    if (this.def.on === 'STREAM') {
      const e = db.peek(this.def.prefixes[0]);
      const fv = e !== undefined && e.type === T.STREAM ? (e.v as Stream).get(key) : null;
      if (fv === null) return [];
      const out: [string, string][] = [];
      for (let i = 0; i + 1 < fv.length; i += 2) {
        const name = fv[i].toString('utf8');
        if (select === null || select.includes(name)) out.push([name, fv[i + 1].toString('utf8')]);
      }
      return out;
    }
    const e = db.peek(key);
    if (e === undefined) return [];
    if (this.def.on === 'HASH') {
      if (e.type !== T.HASH) return [];
      const h = e.v as HashValue;
      const out: [string, string][] = [];
      if (select === null) {
        h.forEach((v, f) => out.push([Buffer.from(f, 'latin1').toString('utf8'), Buffer.from(v, 'latin1').toString('utf8')]));
      } else {
        for (const name of select) {
          const v = h.get(Buffer.from(name, 'utf8').toString('latin1'));
          if (v !== undefined) out.push([name, Buffer.from(v, 'latin1').toString('utf8')]);
        }
      }
      return out;
    }
    let root: unknown;
    if (this.def.on === 'JSON') {
      if (e.type !== T.JSON) return [];
      root = (e.v as JsonDoc).root;
      if (select === null) return [['$', serialize(root as JValue)]];
    } else {
      if (!e.isString) return [];
      const text = (e.value as Buffer).toString('utf8');
      if (select === null) return [['$', text]];
      try { root = JSON.parse(text); } catch { return []; }
    }
    const out: [string, string][] = [];
    for (const name of select) {
      const v = walk(root, name.split('.'));
      if (v !== undefined) out.push([name, this.def.on === 'JSON' ? serialize(v as JValue) : JSON.stringify(v)]);
    }
    return out;
  }
}

/** The value at a dotted path (no array fan-out), for SELECT. */
function walk(v: unknown, path: string[]): unknown {
  for (const seg of path) {
    if (v instanceof Map) v = v.get(seg);
    else if (typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JFloat)) v = (v as Record<string, unknown>)[seg];
    else return undefined;
    if (v === undefined) return undefined;
  }
  return v;
}

/** True if terms[i] already occurred before position i (documents are short: a scan). */
function seenBefore(terms: readonly string[], i: number): boolean {
  const t = terms[i];
  for (let j = 0; j < i; j++) if (terms[j] === t) return true;
  return false;
}

/** Leaves at a dotted path; arrays on the way and at the end fan out (multi-valued fields). */
function collect(v: unknown, path: string[], i: number, out: unknown[]): void {
  if (out.length >= 10_000) return;
  if (Array.isArray(v)) {
    for (const x of v) collect(x, path, i, out);
    return;
  }
  if (i === path.length) {
    if (v !== null && v !== undefined && !(v instanceof Map) && (typeof v !== 'object' || v instanceof JFloat)) out.push(v);
    return;
  }
  let next: unknown;
  if (v instanceof Map) next = v.get(path[i]);
  else if (typeof v === 'object' && v !== null && !(v instanceof JFloat)) next = (v as Record<string, unknown>)[path[i]];
  if (next !== undefined) collect(next, path, i + 1, out);
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
