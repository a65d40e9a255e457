/**
 * The JSON filter language of SEARCH.QUERY / SEARCH.COUNT: parsed and checked against the
 * schema into a tree (parseQuery), then evaluated over an index into key -> score (evaluate).
 *
 * Objects combine their entries with AND; $must/$and (required), $should (optional boosts next
 * to required clauses, else OR), $or, $mustNot, $boost. Field conditions: a bare value (smart
 * matching), $eq, $ne, $in, $gt/$gte/$lt/$lte, $phrase, $fuzzy, $regex, $boost.
 * Several words smartly matched need any one of them (ranked by how many, in order, adjacent).
 * Scores: BM25 per TEXT term (exact smart matches boosted), 1 for non-text matches, summed
 * over the clauses a document matches.
 */
import { analyze, editDistance, fuzzyPrefix, MAX_TERM } from './analyze.js';
import { dateValue, positionsOf, type DocRec, type NumColumn, type Posting, type SearchIndex, type TextField } from './index.js';
import type { FieldDef } from './schema.js';
import { Bm25 } from './bm25.js';

export class QueryError extends Error {}

type Scalar = string | number | boolean;
type Op =
  | { o: 'smart' | 'eq' | 'ne'; v: Scalar }
  | { o: 'in'; vs: Scalar[] }
  | { o: 'range'; gt?: Scalar; gte?: Scalar; lt?: Scalar; lte?: Scalar }
  | { o: 'phrase'; value: string; slop: number; prefix: boolean }
  | { o: 'fuzzy'; value: string; distance: number; trans: boolean; prefix: boolean }
  | { o: 'regex'; re: RegExp };

export type Node =
  | { k: 'all'; boost: number }
  | { k: 'bool'; must: Node[]; should: Node[]; not: Node[]; boost: number }
  | { k: 'or'; cs: Node[]; boost: number }
  | { k: 'leaf'; f: number; op: Op; boost: number };

/** Bounds on one query (untrusted input). */
export const MAX_DEPTH = 32;
export const MAX_NODES = 1024;
const MAX_REGEX = 256;
const EXACT_BOOST = 2;
/** Smart matching of several words: the exact phrase, then the words in order within SMART_SLOP positions. */
const PHRASE_BOOST = 2;
const SLOP_BOOST = 1;
const SMART_SLOP = 3;

const TEXT_OPS = new Set(['$phrase', '$fuzzy', '$regex']);
const RANGE_OPS = new Set(['$gt', '$gte', '$lt', '$lte']);
const FIELD_OPS = new Set(['$eq', '$ne', '$in', '$smart', '$boost', ...TEXT_OPS, ...RANGE_OPS]);

interface Ctx { nodes: number }

export function parseQuery(src: string, idx: SearchIndex): Node {
  let q: unknown;
  try {
    q = JSON.parse(src);
  } catch {
    throw new QueryError('ERR invalid query: not valid JSON');
  }
  if (!isObj(q)) throw new QueryError('ERR invalid query: expected a JSON object');
  return parseObject(q, idx, 0, { nodes: 0 });
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function count(ctx: Ctx, depth: number): void {
  if (++ctx.nodes > MAX_NODES) throw new QueryError(`ERR invalid query: more than ${MAX_NODES} conditions`);
  if (depth > MAX_DEPTH) throw new QueryError(`ERR invalid query: nested deeper than ${MAX_DEPTH}`);
}

/** The conditions of a $must/$should/... value: an object (one condition per entry) or an array of objects. */
function conditions(op: string, v: unknown, idx: SearchIndex, depth: number, ctx: Ctx): Node[] {
  if (Array.isArray(v)) {
    return v.map((x) => {
      if (!isObj(x)) throw new QueryError(`ERR invalid query: ${op} expects objects`);
      return parseObject(x, idx, depth + 1, ctx);
    });
  }
  if (!isObj(v)) throw new QueryError(`ERR invalid query: ${op} expects an object or an array`);
  return Object.keys(v).map((k) => parseObject({ [k]: v[k] }, idx, depth + 1, ctx));
}

function parseObject(o: Record<string, unknown>, idx: SearchIndex, depth: number, ctx: Ctx): Node {
  count(ctx, depth);
  const must: Node[] = [];
  const should: Node[] = [];
  const not: Node[] = [];
  let boost = 1;
  for (const key of Object.keys(o)) {
    const v = o[key];
    switch (key) {
      case '$must':
      case '$and':
        must.push(...conditions(key, v, idx, depth, ctx));
        break;
      case '$should':
        should.push(...conditions(key, v, idx, depth, ctx));
        break;
      case '$or':
        must.push({ k: 'or', cs: conditions(key, v, idx, depth, ctx), boost: 1 });
        break;
      case '$mustNot':
        not.push(...conditions(key, v, idx, depth, ctx));
        break;
      case '$boost':
        boost = boostValue(v);
        break;
      default:
        if (key.startsWith('$')) throw new QueryError(`ERR Unknown operator: ${key}`);
        must.push(parseField(key, v, idx, depth + 1, ctx));
    }
  }
  if (must.length === 0 && should.length === 0 && not.length === 0) return { k: 'all', boost };
  if (must.length === 1 && should.length === 0 && not.length === 0) {
    const only = must[0];
    return boost === 1 ? only : { k: 'bool', must, should, not, boost };
  }
  return { k: 'bool', must, should, not, boost };
}

function boostValue(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new QueryError('ERR invalid query: $boost expects a number');
  return v;
}

function scalar(f: FieldDef, op: string, v: unknown): Scalar {
  const bad = () => new QueryError(`ERR invalid value for ${op} on ${f.type} field '${f.name}'`);
  switch (f.type) {
    case 'TEXT':
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      throw bad();
    case 'U64':
    case 'I64':
    case 'F64':
      if (typeof v === 'number') return v;
      if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
      throw bad();
    case 'DATE': {
      const x = dateValue(v);
      if (!Number.isFinite(x)) throw bad();
      return x;
    }
    case 'BOOL':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      throw bad();
    case 'KEYWORD':
    case 'FACET':
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      throw bad();
  }
}

function parseField(name: string, v: unknown, idx: SearchIndex, depth: number, ctx: Ctx): Node {
  count(ctx, depth);
  const fi = idx.byName.get(name);
  if (fi === undefined) throw new QueryError(`ERR Unknown field: ${name}`);
  const f = idx.def.fields[fi];
  if (!isObj(v)) {
    if (Array.isArray(v) || v === null) throw new QueryError(`ERR invalid value for field '${name}'`);
    return { k: 'leaf', f: fi, op: { o: 'smart', v: scalar(f, 'match', v) }, boost: 1 };
  }
  const leaves: Node[] = [];
  let boost = 1;
  let range: { o: 'range'; gt?: Scalar; gte?: Scalar; lt?: Scalar; lte?: Scalar } | null = null;
  for (const op of Object.keys(v)) {
    const x = v[op];
    if (!FIELD_OPS.has(op)) throw new QueryError(`ERR Unknown field operator: ${op}`);
    if (op === '$boost') { boost = boostValue(x); continue; }
    if (TEXT_OPS.has(op) && f.type !== 'TEXT') throw new QueryError(`ERR ${op} is not supported for ${f.type} field '${name}'`);
    if (RANGE_OPS.has(op) && (f.type === 'TEXT' || f.type === 'BOOL' || f.type === 'FACET')) {
      throw new QueryError(`ERR ${op} is not supported for ${f.type} field '${name}'`);
    }
    count(ctx, depth);
    switch (op) {
      case '$smart':
      case '$eq':
      case '$ne':
        leaves.push({ k: 'leaf', f: fi, op: { o: op.slice(1) as 'smart' | 'eq' | 'ne', v: scalar(f, op, x) }, boost: 1 });
        break;
      case '$in':
        if (!Array.isArray(x) || x.length > MAX_NODES) throw new QueryError(`ERR invalid query: $in expects an array (at most ${MAX_NODES} values)`);
        leaves.push({ k: 'leaf', f: fi, op: { o: 'in', vs: x.map((y) => scalar(f, op, y)) }, boost: 1 });
        break;
      case '$gt': case '$gte': case '$lt': case '$lte':
        range ??= { o: 'range' };
        range[op.slice(1) as 'gt'] = f.type === 'KEYWORD' ? scalar(f, op, x) : rangeValue(f, op, x);
        break;
      case '$phrase': {
        if (typeof x === 'string') { leaves.push(leaf(fi, { o: 'phrase', value: x, slop: 0, prefix: false })); break; }
        if (!isObj(x) || typeof x.value !== 'string') throw new QueryError('ERR invalid query: $phrase expects a string or {value, slop?, prefix?}');
        const slop = x.slop === undefined ? 0 : x.slop;
        if (typeof slop !== 'number' || !Number.isInteger(slop) || slop < 0 || slop > 1000) throw new QueryError('ERR invalid query: $phrase slop must be an integer between 0 and 1000');
        if (x.prefix !== undefined && typeof x.prefix !== 'boolean') throw new QueryError('ERR invalid query: $phrase prefix must be a boolean');
        if (slop > 0 && x.prefix === true) throw new QueryError('ERR invalid query: $phrase accepts slop or prefix, not both');
        leaves.push(leaf(fi, { o: 'phrase', value: x.value, slop, prefix: x.prefix === true }));
        break;
      }
      case '$fuzzy': {
        if (typeof x === 'string') { leaves.push(leaf(fi, { o: 'fuzzy', value: x, distance: 1, trans: true, prefix: false })); break; }
        if (!isObj(x) || typeof x.value !== 'string') throw new QueryError('ERR invalid query: $fuzzy expects a string or {value, distance?, transpositionCostOne?, prefix?}');
        const d = x.distance === undefined ? 1 : x.distance;
        if (typeof d !== 'number' || !Number.isInteger(d) || d < 0 || d > 2) throw new QueryError('ERR invalid query: $fuzzy distance must be 0, 1 or 2');
        leaves.push(leaf(fi, { o: 'fuzzy', value: x.value, distance: d, trans: x.transpositionCostOne !== false, prefix: x.prefix === true }));
        break;
      }
      case '$regex': {
        if (typeof x !== 'string') throw new QueryError('ERR invalid query: $regex expects a string');
        leaves.push(leaf(fi, { o: 'regex', re: safeRegex(x) }));
        break;
      }
    }
  }
  if (range !== null) leaves.push(leaf(fi, range));
  if (leaves.length === 0) throw new QueryError(`ERR invalid query: no condition for field '${name}'`);
  if (leaves.length === 1 && boost === 1) return leaves[0];
  return { k: 'bool', must: leaves, should: [], not: [], boost };
}

function leaf(f: number, op: Op): Node {
  return { k: 'leaf', f, op, boost: 1 };
}

function rangeValue(f: FieldDef, op: string, x: unknown): number {
  return scalar(f, op, x) as number;
}

/**
 * A regular expression over single terms (at most MAX_TERM chars). Constructs that make a
 * backtracking engine super-linear (nested or alternated quantified groups, backreferences,
 * lookaround) are refused: patterns are untrusted.
 */
export function safeRegex(p: string): RegExp {
  if (p.length > MAX_REGEX) throw new QueryError(`ERR invalid query: $regex longer than ${MAX_REGEX} characters`);
  if (/\\[1-9k]|\(\?<?[=!]/.test(p) || /\([^()]*[*+?{|][^()]*\)\s*[*+{]/.test(p)) {
    throw new QueryError('ERR invalid query: $regex pattern not supported (backreference, lookaround or nested quantifier)');
  }
  try {
    return new RegExp(`^(?:${p})$`, 'u');
  } catch {
    throw new QueryError(`ERR invalid query: bad $regex pattern`);
  }
}

// ---------------------------------------------------------------- evaluation

/** Matching documents by slot (SearchIndex.keyAt/recAt) -> score. */
export type Scores = Map<number, number>;

export function evaluate(n: Node, idx: SearchIndex): Scores {
  const out = evalNode(n, idx);
  if (n.boost !== 1) for (const [k, s] of out) out.set(k, s * n.boost);
  return out;
}

function evalNode(n: Node, idx: SearchIndex): Scores {
  switch (n.k) {
    case 'all':
      return scan(idx, [], n.boost);
    case 'or': {
      const m: Scores = new Map();
      for (const c of n.cs) for (const [k, s] of evaluate(c, idx)) m.set(k, (m.get(k) ?? 0) + s);
      return m;
    }
    case 'bool': {
      // Conditions on non-text fields become predicates checked in one pass (over every
      // document, or over the candidates the other conditions produced): no set per condition.
      const preds: Pred[] = [];
      const rest: Node[] = [];
      for (const c of n.must) {
        const p = c.k === 'leaf' && c.boost === 1 ? leafPred(c.f, c.op, idx) : null;
        if (p !== null) preds.push(p);
        else rest.push(c);
      }
      let m: Scores;
      if (rest.length > 0) {
        m = intersectAll(rest.map((c) => evaluate(c, idx)));
        if (preds.length > 0) {
          for (const [k, s] of m) {
            const rec = idx.recAt[k]!;
            if (preds.every((p) => p(rec))) m.set(k, s + preds.length);
            else m.delete(k);
          }
        }
      } else if (preds.length > 0) {
        const cand = candidates(n.must, idx);
        m = cand === null ? scan(idx, preds, preds.length) : filter(cand, idx, preds, preds.length);
      } else if (n.should.length > 0) {
        m = new Map();
        for (const c of n.should) for (const [k, s] of evaluate(c, idx)) m.set(k, (m.get(k) ?? 0) + s);
      } else {
        m = scan(idx, [], 1);
      }
      if (n.must.length > 0) {
        for (const c of n.should) for (const [k, s] of evaluate(c, idx)) { const t = m.get(k); if (t !== undefined) m.set(k, t + s); }
      }
      for (const c of n.not) for (const k of evaluate(c, idx).keys()) m.delete(k);
      return m;
    }
    case 'leaf': {
      const p = leafPred(n.f, n.op, idx);
      if (p === null) return evalText(idx.def.fields[n.f], idx.text[n.f]!, n.op, idx);
      const cand = candidates([n], idx);
      return cand === null ? scan(idx, [p], 1) : filter(cand, idx, [p], 1);
    }
  }
}

/** Candidate slots of one condition: a value index entry, a union of them, or a run of a sorted column plus its delta. */
type Cands =
  | { n: number; set: Set<number> }
  | { n: number; sets: Set<number>[] }
  | { n: number; col: NumColumn; lo: number; hi: number };

/**
 * The slots that can satisfy the most selective KEYWORD equality / $in or numeric range among
 * `must` (sizes are known before any is listed); null when there is none (a full scan is
 * needed). Candidates are a superset: the caller tests every predicate on each.
 */
function candidates(must: Node[], idx: SearchIndex): Cands | null {
  let best: Cands | null = null;
  for (const c of must) {
    if (c.k !== 'leaf') continue;
    const op = c.op;
    let cand: Cands | null = null;
    const vm = idx.values[c.f];
    const col = idx.columns[c.f];
    if (vm !== null) {
      if (op.o === 'eq' || op.o === 'smart') { const set = vm.get(op.v) ?? EMPTY; cand = { n: set.size, set }; }
      else if (op.o === 'in') { const sets = op.vs.map((v) => vm.get(v) ?? EMPTY); cand = { n: sets.reduce((a, x) => a + x.size, 0), sets }; }
    } else if (col !== null && (op.o === 'range' || op.o === 'eq' || op.o === 'smart')) {
      const r = rangeOf(op, idx.def.fields[c.f]);
      if (r === null) continue;
      col.ready(idx, c.f);
      const lo = col.bound(r[0], r[1]);
      const hi = col.bound(r[2], r[3]); // inclusive: the first above; exclusive: the first at or above
      cand = { n: Math.max(0, hi - lo) + col.delta.size, col, lo, hi };
    }
    if (cand !== null && (best === null || cand.n < best.n)) best = cand;
  }
  return best;
}

const EMPTY: Set<number> = new Set();

/** [low, low exclusive, high, high inclusive] of a numeric condition; null if not numeric. */
function rangeOf(op: Op, f: FieldDef): [number, boolean, number, boolean] | null {
  const num = (v: Scalar | undefined) => (v === undefined ? undefined : typeof v === 'number' ? v : f.type === 'DATE' ? dateValue(v) : NaN);
  if (op.o === 'eq' || op.o === 'smart') {
    const x = num(op.v)!;
    return Number.isNaN(x) ? null : [x, false, x, true];
  }
  if (op.o !== 'range') return null;
  let lo = -Infinity;
  let loEx = false;
  let hi = Infinity;
  let hiIn = true;
  const gt = num(op.gt);
  const gte = num(op.gte);
  const lt = num(op.lt);
  const lte = num(op.lte);
  if ([gt, gte, lt, lte].some((x) => x !== undefined && Number.isNaN(x))) return null;
  if (gt !== undefined && gt >= lo) { lo = gt; loEx = true; }
  if (gte !== undefined && gte > lo) { lo = gte; loEx = false; }
  if (lt !== undefined && lt <= hi) { hi = lt; hiIn = false; }
  if (lte !== undefined && lte < hi) { hi = lte; hiIn = true; }
  return [lo, loEx, hi, hiIn];
}

/**
 * SEARCH.COUNT: the number of documents `n` matches. Non-text conditions alone are counted over
 * their candidates without building a score map; anything else is evaluated.
 */
export function countMatches(n: Node, idx: SearchIndex): number {
  const must = n.k === 'leaf' ? [n] : n.k === 'bool' && n.should.length === 0 && n.not.length === 0 ? n.must : null;
  const preds: Pred[] = [];
  for (const c of must ?? []) {
    const p = c.k === 'leaf' ? leafPred(c.f, c.op, idx) : null;
    if (p === null) return evaluate(n, idx).size;
    preds.push(p);
  }
  if (must === null || preds.length === 0) return evaluate(n, idx).size;
  const c = candidates(must, idx);
  if (c === null) {
    let k = 0;
    const recs = idx.recAt;
    outer: for (let s = 0; s < recs.length; s++) {
      const rec = recs[s];
      if (rec === undefined) continue;
      for (let i = 0; i < preds.length; i++) if (!preds[i](rec)) continue outer;
      k++;
    }
    return k;
  }
  if ('set' in c) {
    let k = 0;
    outer: for (const s of c.set) {
      const rec = idx.recAt[s]!;
      for (let i = 0; i < preds.length; i++) if (!preds[i](rec)) continue outer;
      k++;
    }
    return k;
  }
  // One range and nothing written since the column was sorted: the run is the answer.
  if ('col' in c && preds.length === 1 && c.col.delta.size === 0 && c.col.single) return Math.max(0, c.hi - c.lo);
  return filter(c, idx, preds, 1).size; // a slot may come up more than once here
}

/** The candidates satisfying all `preds`, each scored `score`. */
function filter(c: Cands, idx: SearchIndex, preds: Pred[], score: number): Scores {
  const out: Scores = new Map();
  const recs = idx.recAt;
  const np = preds.length;
  const test = (slot: number) => {
    const rec = recs[slot];
    if (rec === undefined) return;
    for (let i = 0; i < np; i++) if (!preds[i](rec)) return;
    out.set(slot, score);
  };
  if ('set' in c) for (const s of c.set) test(s);
  else if ('sets' in c) for (const set of c.sets) for (const s of set) test(s);
  else {
    const slots = c.col.slots;
    for (let i = c.lo; i < c.hi; i++) test(slots[i]);
    for (const s of c.col.delta) test(s);
  }
  return out;
}

type Pred = (rec: DocRec) => boolean;

/** Every document satisfying all `preds`, each scored `score`. */
function scan(idx: SearchIndex, preds: Pred[], score: number): Scores {
  const out: Scores = new Map();
  const recs = idx.recAt;
  const np = preds.length;
  outer: for (let s = 0; s < recs.length; s++) {
    const rec = recs[s];
    if (rec === undefined) continue;
    for (let i = 0; i < np; i++) if (!preds[i](rec)) continue outer;
    out.set(s, score);
  }
  return out;
}

/** A non-text condition as a per-document test; null for TEXT fields (they use postings). */
function leafPred(fi: number, op: Op, idx: SearchIndex): Pred | null {
  const f = idx.def.fields[fi];
  if (idx.text[fi] !== null) return null;
  let test: (x: string | number | boolean) => boolean;
  switch (op.o) {
    case 'smart':
    case 'eq':
    case 'ne': {
      const v = op.v;
      test = f.type === 'FACET' ? (x) => facetMatch(x as string, v as string) : (x) => x === v;
      if (op.o === 'ne') {
        const eq = test;
        return (rec) => { const xs = rec.vals[fi]; return xs === undefined || !xs.some(eq); };
      }
      break;
    }
    case 'in': {
      const set = new Set(op.vs);
      test = f.type === 'FACET' ? (x) => op.vs.some((v) => facetMatch(x as string, v as string)) : (x) => set.has(x);
      break;
    }
    case 'range': {
      const { gt, gte, lt, lte } = op;
      test = (x) => (gt === undefined || x > gt) && (gte === undefined || x >= gte) && (lt === undefined || x < lt) && (lte === undefined || x <= lte);
      break;
    }
    default:
      return () => false; // text operators were refused at parse time
  }
  return (rec) => {
    const xs = rec.vals[fi];
    if (xs === undefined) return false;
    if (xs.length === 1) return test(xs[0]);
    return xs.some(test);
  };
}

/** A facet path matches itself and its descendants ("/a" matches "/a/b"). */
function facetMatch(x: string, v: string): boolean {
  return x === v || x.startsWith(v.endsWith('/') ? v : v + '/');
}

// ---------------------------------------------------------------- text

/** Words of one text condition at most (each may scan the field's vocabulary). */
export const MAX_QUERY_TERMS = 64;

function bounded(terms: string[]): string[] {
  if (terms.length > MAX_QUERY_TERMS) throw new QueryError(`ERR invalid query: more than ${MAX_QUERY_TERMS} words in one condition`);
  return terms;
}

function evalText(f: FieldDef, tf: TextField, op: Op, idx: SearchIndex): Scores {
  switch (op.o) {
    case 'smart': {
      const quoted = quotedPhrase(String(op.v));
      if (quoted !== null) return phrase(bounded(analyze(quoted, f.noTokenize, f.noStem)), 0, false, tf, idx);
      const terms = bounded(analyze(String(op.v), f.noTokenize, f.noStem));
      if (terms.length === 0) return new Map();
      if (terms.length === 1) return smartTerm(terms[0], tf, idx);
      // Documents with any of the words (each smartly matched) match, their scores summed, so
      // more words rank higher; the words in order within SMART_SLOP positions add a medium
      // boost, adjacent (the exact phrase) the highest.
      const m: Scores = new Map();
      for (const t of terms) for (const [k, s] of smartTerm(t, tf, idx)) m.set(k, (m.get(k) ?? 0) + s);
      for (const [k, s] of phrase(terms, SMART_SLOP, false, tf, idx)) m.set(k, (m.get(k) ?? 0) + SLOP_BOOST * s);
      for (const [k, s] of phrase(terms, 0, false, tf, idx)) m.set(k, (m.get(k) ?? 0) + PHRASE_BOOST * s);
      return m;
    }
    case 'eq':
      return exact(String(op.v), f, tf, idx);
    case 'ne': {
      const eq = exact(String(op.v), f, tf, idx);
      const out: Scores = new Map();
      const recs = idx.recAt;
      for (let s = 0; s < recs.length; s++) if (recs[s] !== undefined && !eq.has(s)) out.set(s, 1);
      return out;
    }
    case 'in': {
      const out: Scores = new Map();
      for (const v of op.vs) for (const [k, s] of exact(String(v), f, tf, idx)) out.set(k, Math.max(out.get(k) ?? 0, s));
      return out;
    }
    case 'phrase': {
      if (op.prefix) {
        const toks = bounded(analyze(op.value, f.noTokenize, true));
        if (toks.length === 0) return new Map();
        const head = toks.slice(0, -1).map((t) => (f.noStem ? t : analyze(t, false, false)[0] ?? t));
        return phrase([...head, toks[toks.length - 1]], 0, true, tf, idx);
      }
      return phrase(analyze(op.value, f.noTokenize, f.noStem), op.slop, false, tf, idx);
    }
    case 'fuzzy': {
      const terms = bounded(analyze(op.value, f.noTokenize, true).map((t) => t.slice(0, MAX_TERM)));
      if (terms.length === 0) return new Map();
      return intersectAll(terms.map((t) => fuzzyTerm(t, op.distance, op.trans, op.prefix, tf, idx)));
    }
    case 'regex': {
      const out: Scores = new Map();
      for (const term of tf.postings.keys()) if (op.re.test(term)) addTerm(term, 1, tf, idx, out);
      return out;
    }
    case 'range':
      return new Map();
  }
}

/** A smart-matching value wrapped in double quotes forces an exact phrase: its inner text; else null. */
function quotedPhrase(v: string): string | null {
  const t = v.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1) : null;
}

/** $eq on TEXT: one word is a term query, several a phrase. */
function exact(v: string, f: FieldDef, tf: TextField, idx: SearchIndex): Scores {
  const terms = bounded(analyze(v, f.noTokenize, f.noStem));
  if (terms.length === 0) return new Map();
  if (terms.length === 1) { const out: Scores = new Map(); addTerm(terms[0], 1, tf, idx, out); return out; }
  return phrase(terms, 0, false, tf, idx);
}

function intersectAll(parts: Scores[]): Scores {
  parts.sort((a, b) => a.size - b.size);
  const m = parts[0];
  for (let i = 1; i < parts.length; i++) {
    for (const [k, s] of m) { const t = parts[i].get(k); if (t === undefined) m.delete(k); else m.set(k, s + t); }
  }
  return m;
}

/** BM25 of `term` in each document containing it, times `weight`; keeps the best per document. */
function addTerm(term: string, weight: number, tf: TextField, idx: SearchIndex, out: Scores): void {
  const p = tf.postings.get(term);
  if (p === undefined) return;
  const bm = new Bm25(p.live, idx.docs.size, tf.totalLen);
  const norms = tf.normIds;
  const vers = idx.verAt;
  const e = p.e;
  for (let i = 0; i < p.n; i += 3) {
    const slot = e[i];
    if (vers[slot] !== e[i + 1]) continue; // stale: that document changed or left
    const s = weight * bm.score(norms[slot], e[i + 2]);
    const old = out.get(slot);
    if (old === undefined || s > old) out.set(slot, s);
  }
}

/** The live slots of a posting. */
function slotsOf(p: Posting, idx: SearchIndex): number[] {
  const out: number[] = [];
  const vers = idx.verAt;
  const e = p.e;
  for (let i = 0; i < p.n; i += 3) if (vers[e[i]] === e[i + 1]) out.push(e[i]);
  return out;
}

/** Smart matching of one word: exact (boosted), one typo away, or a fuzzy prefix of a term. */
function smartTerm(t: string, tf: TextField, idx: SearchIndex): Scores {
  const out: Scores = new Map();
  addTerm(t, EXACT_BOOST, tf, idx, out);
  for (const term of smartExpansion(t, tf)) addTerm(term, 1, tf, idx, out);
  return out;
}

/** MAX_EXPANSIONS query words' expansions are kept per field, until the vocabulary changes. */
const MAX_EXPANSIONS = 4096;

/** The other vocabulary terms smart matching accepts for `t`: one typo away, or a term that `t` (within one typo) begins. */
function smartExpansion(t: string, tf: TextField): string[] {
  if (tf.expansionsVersion !== tf.vocabVersion) { tf.expansions.clear(); tf.expansionsVersion = tf.vocabVersion; }
  let terms = tf.expansions.get(t);
  if (terms !== undefined) return terms;
  terms = [];
  for (const term of tf.postings.keys()) {
    if (term === t) continue;
    if (editDistance(t, term, 1, true) <= 1 || (term.length > t.length && fuzzyPrefix(t, term, 1, true))) terms.push(term);
  }
  if (tf.expansions.size >= MAX_EXPANSIONS) tf.expansions.clear();
  tf.expansions.set(t, terms);
  return terms;
}

function fuzzyTerm(t: string, d: number, trans: boolean, prefix: boolean, tf: TextField, idx: SearchIndex): Scores {
  const out: Scores = new Map();
  for (const term of tf.postings.keys()) {
    if (editDistance(t, term, d, trans) <= d || (prefix && fuzzyPrefix(t, term, d, trans))) addTerm(term, 1, tf, idx, out);
  }
  return out;
}

/**
 * Documents where the terms occur in order with at most `slop` extra positions in total
 * between them; with `prefix`, the last term matches any term it begins.
 */
function phrase(terms: string[], slop: number, prefix: boolean, tf: TextField, idx: SearchIndex): Scores {
  const out: Scores = new Map();
  if (terms.length === 0) return out;
  const fi = idx.text.indexOf(tf);
  const last = terms.length - 1;
  // Candidates: the documents of the rarest exact term (or, for a lone prefix, of every term it begins).
  let cands: number[];
  let rarest: Posting | null = null;
  for (let i = 0; i < terms.length; i++) {
    if (prefix && i === last) continue;
    const p = tf.postings.get(terms[i]);
    if (p === undefined) return out;
    if (rarest === null || p.live < rarest.live) rarest = p;
  }
  if (rarest !== null) {
    cands = slotsOf(rarest, idx);
  } else {
    const u = new Set<number>();
    for (const [term, p] of tf.postings) if (term.startsWith(terms[last])) for (const s of slotsOf(p, idx)) u.add(s);
    cands = [...u];
  }
  const tests = terms.map((t, i) => (prefix && i === last ? (x: string) => x.startsWith(t) : (x: string) => x === t));
  const termScore = new Map<string, Scores>();
  for (const slot of cands) {
    const seq = idx.recAt[slot]!.vals[fi] as string[];
    const ps = tests.map((test) => positionsOf(seq, test));
    if (ps.some((x) => x.length === 0)) continue;
    if (!inOrder(ps, slop)) continue;
    let s = 0;
    for (let i = 0; i < terms.length; i++) {
      if (prefix && i === last) { s += 1 / Math.max(1, tf.lens[slot]); continue; }
      let one = termScore.get(terms[i]);
      if (one === undefined) { one = new Map(); addTerm(terms[i], 1, tf, idx, one); termScore.set(terms[i], one); }
      s += one.get(slot) ?? 0;
    }
    out.set(slot, s);
  }
  return out;
}

/** Some start position from which each next term follows, with total gaps <= slop. */
function inOrder(ps: number[][], slop: number): boolean {
  for (const start of ps[0]) {
    let prev = start;
    let gaps = 0;
    let ok = true;
    for (let i = 1; i < ps.length && ok; i++) {
      const next = firstAfter(ps[i], prev);
      if (next < 0) { ok = false; break; }
      gaps += next - prev - 1;
      if (gaps > slop) ok = false;
      prev = next;
    }
    if (ok) return true;
  }
  return false;
}

function firstAfter(sorted: number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (sorted[m] <= x) lo = m + 1; else hi = m; }
  return lo < sorted.length ? sorted[lo] : -1;
}

// ---------------------------------------------------------------- highlighting support

/** The index terms each TEXT field's conditions match (HIGHLIGHT), from the positive clauses. */
export function matchedTerms(n: Node, idx: SearchIndex, out = new Map<number, Set<string>>()): Map<number, Set<string>> {
  switch (n.k) {
    case 'all':
      break;
    case 'or':
      for (const c of n.cs) matchedTerms(c, idx, out);
      break;
    case 'bool':
      for (const c of n.must) matchedTerms(c, idx, out);
      for (const c of n.should) matchedTerms(c, idx, out);
      break;
    case 'leaf': {
      const tf = idx.text[n.f];
      if (tf === null) break;
      const f = idx.def.fields[n.f];
      let set = out.get(n.f);
      if (set === undefined) { set = new Set(); out.set(n.f, set); }
      const s = set;
      const vocab = (test: (term: string) => boolean) => { for (const term of tf.postings.keys()) if (test(term)) s.add(term); };
      const op = n.op;
      switch (op.o) {
        case 'smart':
          if (quotedPhrase(String(op.v)) !== null) {
            for (const t of analyze(quotedPhrase(String(op.v))!, f.noTokenize, f.noStem)) s.add(t);
            break;
          }
          for (const t of analyze(String(op.v), f.noTokenize, f.noStem)) {
            if (tf.postings.has(t)) s.add(t);
            for (const term of smartExpansion(t, tf)) s.add(term);
          }
          break;
        case 'eq':
          for (const t of analyze(String(op.v), f.noTokenize, f.noStem)) s.add(t);
          break;
        case 'in':
          for (const v of op.vs) for (const t of analyze(String(v), f.noTokenize, f.noStem)) s.add(t);
          break;
        case 'phrase': {
          const toks = analyze(op.value, f.noTokenize, op.prefix ? true : f.noStem);
          if (op.prefix && toks.length > 0) {
            const last = toks.pop()!;
            vocab((term) => term.startsWith(last));
            for (const t of toks) s.add(f.noStem ? t : analyze(t, false, false)[0] ?? t);
          } else {
            for (const t of toks) s.add(t);
          }
          break;
        }
        case 'fuzzy':
          for (const t of analyze(op.value, f.noTokenize, true)) {
            vocab((term) => editDistance(t, term, op.distance, op.trans) <= op.distance || (op.prefix && fuzzyPrefix(t, term, op.distance, op.trans)));
          }
          break;
        case 'regex':
          vocab((term) => op.re.test(term));
          break;
        default:
          break;
      }
    }
  }
  return out;
}
