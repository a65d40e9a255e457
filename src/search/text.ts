/**
 * Full-text search over a namespace's documents: tokenisation, the in-memory inverted index a
 * worker builds from LMDB, BM25 ranking with prefix and typo-tolerant term expansion, and the
 * service's SQL-like metadata filter language. Pure code: used by the query workers and by
 * tests; nothing here touches LMDB.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface Doc {
  readonly id: string;
  readonly content: Json;
  readonly metadata: Json | undefined;
  /** Unit-length embedding of the content (when an embedding endpoint is configured). */
  readonly vec?: Float32Array;
}

/** A query's embedding and the share of the score it decides (the SDK's semanticWeight). */
export interface Semantic { vec: Float32Array; weight: number }

/** Scale to unit length (cosine similarity becomes a dot product). */
export function unit(v: ArrayLike<number>): Float32Array {
  let sq = 0;
  for (let i = 0; i < v.length; i++) sq += v[i] * v[i];
  const out = new Float32Array(v.length);
  const k = sq > 0 ? 1 / Math.sqrt(sq) : 0;
  for (let i = 0; i < v.length; i++) out[i] = v[i] * k;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

// ---------------------------------------------------------------- tokens

const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased words (letters and digits), accents folded so "café" finds "cafe". */
export function tokenize(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
  return folded.match(WORD) ?? [];
}

/** Every string (and number) inside a content value, recursively, in order. */
export function contentText(v: Json | undefined, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number') out.push(String(v));
  else if (Array.isArray(v)) for (const x of v) contentText(x, out);
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) contentText(v[k], out);
  return out;
}

// ---------------------------------------------------------------- filters

export class FilterError extends Error {}

type Value = string | number | boolean;
export type Filter = (d: Doc) => boolean;

interface Tok { t: 'id' | 'str' | 'num' | 'op' | 'p'; v: string }

function lex(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === '(' || c === ')' || c === ',') { out.push({ t: 'p', v: c }); i++; continue; }
    if (c === "'" || c === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= s.length) throw new FilterError(`unterminated string in filter: ${s}`);
        if (s[i] === c) {
          if (s[i + 1] === c) { v += c; i += 2; continue; } // '' is an escaped quote
          i++;
          break;
        }
        if (s[i] === '\\' && i + 1 < s.length) { v += s[i + 1]; i += 2; continue; }
        v += s[i++];
      }
      out.push({ t: 'str', v });
      continue;
    }
    const op = /^(<=|>=|!=|=|<|>)/.exec(s.slice(i));
    if (op) { out.push({ t: 'op', v: op[1] }); i += op[1].length; continue; }
    const num = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(?![\p{L}_$.[])/u.exec(s.slice(i));
    if (num) { out.push({ t: 'num', v: num[0] }); i += num[0].length; continue; }
    const id = /^[@\p{L}\p{N}_$][\p{L}\p{N}_$.[\]\-]*/u.exec(s.slice(i));
    if (id) { out.push({ t: 'id', v: id[0] }); i += id[0].length; continue; }
    throw new FilterError(`unexpected character '${c}' in filter at ${i}: ${s}`);
  }
  return out;
}

/** A field path: "@metadata.a.b" reads metadata, anything else reads content ("a.b", "tags[0]"). */
function accessor(path: string): (d: Doc) => Json | undefined {
  let root: 'c' | 'm' | 'id' = 'c';
  let p = path;
  if (p === '@id') return (d) => d.id;
  if (p.startsWith('@metadata.')) { root = 'm'; p = p.slice(10); } else if (p.startsWith('@content.')) p = p.slice(9);
  const parts: (string | number)[] = [];
  for (const seg of p.split('.')) {
    const m = /^([^[\]]*)((\[\d+\])*)$/.exec(seg);
    if (!m) throw new FilterError(`invalid field name: ${path}`);
    if (m[1] !== '') parts.push(m[1]);
    for (const ix of m[2].matchAll(/\[(\d+)\]/g)) parts.push(Number(ix[1]));
  }
  return (d) => {
    let v: Json | undefined = root === 'm' ? d.metadata : d.content;
    for (const k of parts) {
      if (v === null || typeof v !== 'object') return undefined;
      v = typeof k === 'number' ? (Array.isArray(v) ? v[k] : undefined) : Array.isArray(v) ? undefined : (v as Record<string, Json>)[k];
    }
    return v;
  };
}

function globRegex(g: string): RegExp {
  let r = '^';
  for (let i = 0; i < g.length; i++) {
    const c = g[i];
    if (c === '*') r += '[\\s\\S]*';
    else if (c === '?') r += '[\\s\\S]';
    else if (c === '[') {
      const end = g.indexOf(']', i + 2);
      if (end < 0) { r += '\\['; continue; }
      let cls = g.slice(i + 1, end);
      if (cls.startsWith('^') || cls.startsWith('!')) cls = '^' + cls.slice(1);
      r += '[' + cls.replace(/\\/g, '\\\\') + ']';
      i = end;
    } else r += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(r + '$', 'u');
}

function cmp(a: Json | undefined, b: Value): number | null {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return null;
}

/** Compile a filter string ("genre = 'sf' AND @metadata.year >= 2000") into a predicate. */
export function parseFilter(src: string): Filter {
  const toks = lex(src);
  let i = 0;
  const peekWord = (w: string) => toks[i]?.t === 'id' && toks[i].v.toUpperCase() === w;
  const value = (): Value => {
    const t = toks[i++];
    if (!t) throw new FilterError(`filter ends early: ${src}`);
    if (t.t === 'str') return t.v;
    if (t.t === 'num') return Number(t.v);
    if (t.t === 'id' && (t.v.toLowerCase() === 'true' || t.v.toLowerCase() === 'false')) return t.v.toLowerCase() === 'true';
    throw new FilterError(`expected a value, got '${t.v}' in filter: ${src}`);
  };
  const list = (): Value[] => {
    if (toks[i]?.v !== '(') throw new FilterError(`expected '(' after IN in filter: ${src}`);
    i++;
    const vs: Value[] = [];
    for (;;) {
      vs.push(value());
      const t = toks[i++];
      if (t?.v === ')') return vs;
      if (t?.v !== ',') throw new FilterError(`expected ',' or ')' in IN list of filter: ${src}`);
    }
  };
  const primary = (): Filter => {
    const t = toks[i];
    if (!t) throw new FilterError(`filter ends early: ${src}`);
    if (t.v === '(' && t.t === 'p') {
      i++;
      const e = orExpr();
      if (toks[i]?.v !== ')') throw new FilterError(`missing ')' in filter: ${src}`);
      i++;
      return e;
    }
    if (t.t !== 'id') throw new FilterError(`expected a field name, got '${t.v}' in filter: ${src}`);
    i++;
    const get = accessor(t.v);
    let not = false;
    if (peekWord('HAS')) {
      i++;
      if (peekWord('NOT')) { i++; not = true; }
      if (!peekWord('FIELD')) throw new FilterError(`expected FIELD after HAS in filter: ${src}`);
      i++;
      return not ? (d) => get(d) === undefined : (d) => get(d) !== undefined;
    }
    if (peekWord('NOT')) { i++; not = true; }
    const o = toks[i++];
    if (!o) throw new FilterError(`missing operator after ${t.v} in filter: ${src}`);
    const op = o.t === 'op' ? o.v : o.t === 'id' ? o.v.toUpperCase() : '';
    if (not && !['GLOB', 'IN', 'CONTAINS'].includes(op)) throw new FilterError(`NOT must precede GLOB, IN or CONTAINS in filter: ${src}`);
    let f: Filter;
    switch (op) {
      case '=': { const v = value(); f = (d) => cmp(get(d), v) === 0; break; }
      case '!=': { const v = value(); f = (d) => { const c = cmp(get(d), v); return c !== null && c !== 0; }; break; }
      case '<': { const v = value(); f = (d) => (cmp(get(d), v) ?? 0) < 0; break; }
      case '<=': { const v = value(); f = (d) => { const c = cmp(get(d), v); return c !== null && c <= 0; }; break; }
      case '>': { const v = value(); f = (d) => (cmp(get(d), v) ?? 0) > 0; break; }
      case '>=': { const v = value(); f = (d) => { const c = cmp(get(d), v); return c !== null && c >= 0; }; break; }
      case 'GLOB': {
        const v = value();
        if (typeof v !== 'string') throw new FilterError(`GLOB needs a string pattern in filter: ${src}`);
        const re = globRegex(v);
        f = (d) => { const x = get(d); return typeof x === 'string' && re.test(x); };
        break;
      }
      case 'IN': { const vs = list(); f = (d) => { const x = get(d); return vs.some((v) => cmp(x, v) === 0); }; break; }
      case 'CONTAINS': {
        const v = value();
        f = (d) => {
          const x = get(d);
          if (Array.isArray(x)) return x.some((e) => cmp(e, v) === 0);
          return typeof x === 'string' && typeof v === 'string' && x.includes(v);
        };
        break;
      }
      default: throw new FilterError(`unknown operator '${o.v}' in filter: ${src}`);
    }
    if (!not) return f;
    return (d) => get(d) !== undefined && !f(d);
  };
  const andExpr = (): Filter => {
    const parts = [primary()];
    while (peekWord('AND')) { i++; parts.push(primary()); }
    return parts.length === 1 ? parts[0] : (d) => parts.every((p) => p(d));
  };
  const orExpr = (): Filter => {
    const parts = [andExpr()];
    while (peekWord('OR')) { i++; parts.push(andExpr()); }
    return parts.length === 1 ? parts[0] : (d) => parts.some((p) => p(d));
  };
  if (toks.length === 0) return () => true;
  const f = orExpr();
  if (i !== toks.length) throw new FilterError(`unexpected '${toks[i].v}' in filter: ${src}`);
  return f;
}

// ---------------------------------------------------------------- index and BM25

const K1 = 1.2;
const B = 0.75;
const PREFIX_WEIGHT = 0.8;
const TYPO_WEIGHT = 0.6;

/** Levenshtein distance if it is at most max, else max + 1 (early exit). */
export function boundedDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

export interface Hit { doc: Doc; score: number }

export class TextIndex {
  readonly docs: Doc[] = [];
  /** Documents replaced or deleted since the build: skipped by search, dropped at the next rebuild. */
  private readonly dead: boolean[] = [];
  private readonly byId = new Map<string, number>();
  deadCount = 0;
  private readonly lens: number[] = [];
  private readonly postings = new Map<string, number[]>(); // term -> [docIndex, tf, docIndex, tf...]
  private vocab: string[] | null = null; // sorted, built lazily for prefix/typo expansion
  private readonly expansions = new Map<string, Map<string, number>>(); // query word -> expand()
  // Scratch arrays of search() (one query at a time per worker): per-document totals and the
  // current word's best score, grown with the index and reset through the touched lists.
  private total = new Float64Array(0);
  private word = new Float64Array(0);
  private totalLen = 0;

  add(doc: Doc): void {
    this.remove(doc.id);
    const ix = this.docs.length;
    this.docs.push(doc);
    this.dead.push(false);
    this.byId.set(doc.id, ix);
    const tf = new Map<string, number>();
    let len = 0;
    for (const s of contentText(doc.content)) {
      for (const w of tokenize(s)) { tf.set(w, (tf.get(w) ?? 0) + 1); len++; }
    }
    this.lens.push(len);
    this.totalLen += len;
    for (const [w, n] of tf) {
      let p = this.postings.get(w);
      if (p === undefined) { p = []; this.postings.set(w, p); }
      p.push(ix, n);
    }
    this.vocab = null;
    this.expansions.clear();
  }

  /** Forget a document (a tombstone: its postings stay until the index is rebuilt). */
  remove(id: string): void {
    const ix = this.byId.get(id);
    if (ix === undefined) return;
    this.byId.delete(id);
    this.dead[ix] = true;
    this.deadCount++;
    this.totalLen -= this.lens[ix];
  }

  get size(): number {
    return this.docs.length - this.deadCount;
  }

  /** The live documents, in insertion order. */
  *live(): Generator<Doc> {
    for (let i = 0; i < this.docs.length; i++) if (!this.dead[i]) yield this.docs[i];
  }

  private sortedVocab(): string[] {
    this.vocab ??= [...this.postings.keys()].sort();
    return this.vocab;
  }

  /** Terms a query word stands for, with weights: itself, words it begins, words one or two typos away. */
  expand(q: string): Map<string, number> {
    const cached = this.expansions.get(q);
    if (cached !== undefined) return cached;
    const out = new Map<string, number>();
    if (this.postings.has(q)) out.set(q, 1);
    const vocab = this.sortedVocab();
    if (q.length >= 2) {
      let lo = 0;
      let hi = vocab.length;
      while (lo < hi) { const m = (lo + hi) >> 1; if (vocab[m] < q) lo = m + 1; else hi = m; }
      for (let k = lo; k < vocab.length && vocab[k].startsWith(q); k++) if (!out.has(vocab[k])) out.set(vocab[k], PREFIX_WEIGHT);
    }
    const typos = q.length >= 8 ? 2 : q.length >= 4 ? 1 : 0;
    if (typos > 0) {
      for (const t of vocab) {
        if (out.has(t) || Math.abs(t.length - q.length) > typos) continue;
        if (boundedDistance(q, t, typos) <= typos) out.set(t, TYPO_WEIGHT);
      }
    }
    if (this.expansions.size >= 10_000) this.expansions.clear();
    this.expansions.set(q, out);
    return out;
  }

  /**
   * BM25 over the query's words; each word counts once per document (its best expansion).
   * Scores are divided by BM25's upper bound for the query (every word matched exactly, with
   * unbounded frequency), so they lie in 0..1 without ties at the top; the square root spreads
   * the typical range (one exact match in an average document: 0.45 -> 0.67) and keeps the order.
   */
  search(query: string, topK: number, filter: Filter | null, semantic: Semantic | null = null): Hit[] {
    const words = [...new Set(tokenize(query))];
    const n = this.size;
    const all = this.docs.length;
    const dead = this.dead;
    if (n === 0 || topK <= 0) return [];
    if (words.length === 0 && semantic === null) {
      // No words: the filter alone selects, in index order, with score 0.
      const out: Hit[] = [];
      for (const d of this.live()) { if (filter === null || filter(d)) out.push({ doc: d, score: 0 }); if (out.length >= topK) break; }
      return out;
    }
    const avg = this.totalLen / n || 1;
    if (this.total.length < all) { this.total = new Float64Array(all * 2); this.word = new Float64Array(all * 2); }
    const total = this.total;
    const best = this.word;
    const touched: number[] = [];
    let ideal = 0;
    for (const w of words) {
      const wordTouched: number[] = [];
      let wordIdeal = 0;
      for (const [term, weight] of this.expand(w)) {
        const p = this.postings.get(term)!;
        const df = Math.min(n, p.length / 2); // tombstones still count until the next rebuild
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        wordIdeal = Math.max(wordIdeal, idf * (K1 + 1)); // BM25's bound for an exact match
        const lenNorm = K1 * (1 - B);
        const lenScale = K1 * B / avg;
        for (let k = 0; k < p.length; k += 2) {
          const d = p[k];
          if (dead[d]) continue;
          const tf = p[k + 1];
          const sc = weight * idf * (tf * (K1 + 1)) / (tf + lenNorm + lenScale * this.lens[d]);
          if (best[d] === 0) wordTouched.push(d);
          if (sc > best[d]) best[d] = sc;
        }
      }
      if (wordIdeal === 0) wordIdeal = Math.log(1 + (n + 0.5) / 0.5) * (K1 + 1); // a word nothing matches still counts
      ideal += wordIdeal;
      for (const d of wordTouched) {
        if (total[d] === 0) touched.push(d);
        total[d] += best[d];
        best[d] = 0;
      }
    }
    // Hybrid: every live document is a candidate; its score mixes the lexical score with the
    // cosine similarity of its embedding to the query's (negative similarity counts as 0).
    let candidates: Iterable<number> = touched;
    if (semantic !== null) {
      const every: number[] = [];
      for (let d = 0; d < all; d++) if (!dead[d]) every.push(d);
      candidates = every;
    }
    const w = semantic?.weight ?? 0;
    // Keep the topK best (a min-heap on score; ties broken by id), then sort them.
    const heap: Hit[] = [];
    const worse = (a: Hit, b: Hit) => a.score < b.score || (a.score === b.score && a.doc.id > b.doc.id);
    for (const d of candidates) {
      const raw = total[d];
      total[d] = 0;
      const doc = this.docs[d];
      let score = ideal > 0 ? Math.sqrt(raw / ideal) : 0;
      if (semantic !== null) {
        const sim = doc.vec === undefined ? 0 : Math.max(0, dot(doc.vec, semantic.vec));
        score = (1 - w) * score + w * Math.min(1, sim);
        if (score <= 0) continue;
      }
      const h: Hit = { doc, score };
      // The filter runs only on documents that would enter the top K (the cheap test first).
      if (heap.length >= topK && !worse(heap[0], h)) continue;
      if (filter !== null && !filter(doc)) continue;
      if (heap.length < topK) {
        heap.push(h);
        for (let i = heap.length - 1; i > 0;) {
          const parent = (i - 1) >> 1;
          if (!worse(heap[i], heap[parent])) break;
          [heap[i], heap[parent]] = [heap[parent], heap[i]];
          i = parent;
        }
      } else if (worse(heap[0], h)) {
        heap[0] = h;
        for (let i = 0; ;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && worse(heap[l], heap[m])) m = l;
          if (r < heap.length && worse(heap[r], heap[m])) m = r;
          if (m === i) break;
          [heap[i], heap[m]] = [heap[m], heap[i]];
          i = m;
        }
      }
    }
    return heap.sort((a, b) => b.score - a.score || (a.doc.id < b.doc.id ? -1 : 1));
  }
}
