/**
 * SEARCH.QUERY / COUNT / AGGREGATE against one index, as the search worker runs them: parse
 * the arguments, evaluate, rank. The results go back to the engine thread, which adds the
 * documents' content from the keyspace (the worker holds only the indexed values).
 */
import type { Argv } from '../../resp/argv.js';
import { countMatches, evaluate, matchedTerms, parseQuery, QueryError, type Scores } from './query.js';
import { applyScoreFunc, parseScoreFunc, type ScoreFunc } from './scorefunc.js';
import { parseHighlight, type Highlight } from './highlight.js';
import type { DocRec, SearchIndex } from './index.js';
import { aggregate, parseAggregations, type RV } from './aggregate.js';
import { SchemaError } from './schema.js';

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 10;
/** OFFSET beyond this is refused: every skipped result is still ranked. */
const MAX_OFFSET = 100_000;

export type Kind = 'query' | 'count' | 'aggregate' | 'wait';

/** What a request returns to the engine thread. */
export type Result =
  | { err: string }
  | { n: number }
  | { rv: RV[] }
  | {
    keys: string[];
    scores: number[];
    noContent: boolean;
    select: string[] | null;
    highlight: Highlight | null;
    /** Per highlighted TEXT field, the terms the query matched. */
    terms: Map<number, Set<string>> | null;
  };

/** Run one request on an index (argv as the client sent it: name, filter, options...). */
export function run(kind: Kind, idx: SearchIndex, argv: Argv): Result {
  try {
    if (kind === 'wait') return { n: 1 };
    if (kind === 'count') return { n: countMatches(parseQuery(argv.str(2), idx), idx) };
    if (kind === 'aggregate') {
      const q = parseQuery(argv.str(2), idx);
      const aggs = parseAggregations(argv.str(3), idx);
      const docs: DocRec[] = [];
      for (const s of evaluate(q, idx).keys()) docs.push(idx.recAt[s]!);
      return { rv: aggregate(aggs, docs) };
    }
    const q = parseQuery(argv.str(2), idx);
    const o = parseOptions(argv, 3, idx);
    const hits = rank(evaluate(q, idx), idx, o);
    const keys: string[] = new Array(hits.length);
    const scores: number[] = new Array(hits.length);
    for (let i = 0; i < hits.length; i++) { keys[i] = hits[i][0]; scores[i] = hits[i][1]; }
    const hl = o.highlight;
    return { keys, scores, noContent: o.noContent, select: o.select, highlight: hl, terms: hl === null ? null : matchedTerms(q, idx) };
  } catch (err) {
    if (err instanceof SchemaError || err instanceof QueryError) return { err: err.message };
    throw err;
  }
}

export interface QueryOptions {
  limit: number;
  offset: number;
  noContent: boolean;
  select: string[] | null;
  orderBy: { field: number; desc: boolean } | null;
  scoreFunc: ScoreFunc | null;
  highlight: Highlight | null;
}

export function parseOptions(argv: Argv, from: number, idx: SearchIndex): QueryOptions {
  const o: QueryOptions = { limit: DEFAULT_LIMIT, offset: 0, noContent: false, select: null, orderBy: null, scoreFunc: null, highlight: null };
  const need = (i: number, what: string) => {
    if (i >= argv.count) throw new QueryError(`ERR syntax error: ${what} needs a value`);
  };
  for (let i = from; i < argv.count; i++) {
    if (argv.is(i, 'LIMIT')) {
      need(i + 1, 'LIMIT');
      const n = argv.int(++i);
      if (!(n >= 1 && n <= MAX_LIMIT)) throw new QueryError('ERR limit should be a positive number less than 1000');
      o.limit = n;
    } else if (argv.is(i, 'OFFSET')) {
      need(i + 1, 'OFFSET');
      const n = argv.int(++i);
      if (!(n >= 0 && n <= MAX_OFFSET)) throw new QueryError(`ERR offset should be a non-negative number at most ${MAX_OFFSET}`);
      o.offset = n;
    } else if (argv.is(i, 'NOCONTENT')) {
      o.noContent = true;
    } else if (argv.is(i, 'SELECT')) {
      need(i + 1, 'SELECT');
      const n = argv.int(++i);
      if (!(n >= 0) || i + n >= argv.count) throw new QueryError('ERR syntax error: SELECT count does not match the fields given');
      o.select = [];
      for (let k = 0; k < n; k++) o.select.push(argv.str(++i));
    } else if (argv.is(i, 'ORDERBY')) {
      need(i + 1, 'ORDERBY');
      const name = argv.str(++i);
      const fi = idx.byName.get(name);
      if (fi === undefined) throw new QueryError(`ERR Unknown field: ${name}`);
      if (!idx.def.fields[fi].fast) throw new QueryError(`ERR ORDERBY field '${name}' is not FAST`);
      let desc = false;
      if (i + 1 < argv.count && (argv.is(i + 1, 'ASC') || argv.is(i + 1, 'DESC'))) desc = argv.is(++i, 'DESC');
      o.orderBy = { field: fi, desc };
    } else if (argv.is(i, 'SCOREFUNC')) {
      const [sf, next] = parseScoreFunc(argv, i + 1, idx);
      o.scoreFunc = sf;
      i = next - 1;
    } else if (argv.is(i, 'HIGHLIGHT')) {
      const [h, next] = parseHighlight(argv, i + 1, idx);
      o.highlight = h;
      i = next - 1;
    } else {
      throw new QueryError(`ERR syntax error near '${argv.str(i)}'`);
    }
  }
  if (o.noContent && (o.select !== null || o.highlight !== null)) throw new QueryError('ERR NOCONTENT cannot be combined with SELECT or HIGHLIGHT');
  if (o.scoreFunc !== null && o.orderBy !== null) throw new QueryError('ERR SCOREFUNC cannot be combined with ORDERBY');
  return o;
}

/** A match: key, score, slot. */
type Hit = [string, number, number];

/** The matching keys in reply order, offset and limit applied. */
function rank(scores: Scores, idx: SearchIndex, o: QueryOptions): Hit[] {
  const sf = o.scoreFunc;
  const ob = o.orderBy;
  let cmp: (a: Hit, b: Hit) => number;
  const byScore = (a: Hit, b: Hit) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  if (ob === null) {
    cmp = byScore;
  } else {
    const fi = ob.field;
    const recs = idx.recAt;
    const dir = ob.desc ? -1 : 1;
    cmp = (a, b) => {
      const x = recs[a[2]]!.vals[fi]?.[0];
      const y = recs[b[2]]!.vals[fi]?.[0];
      if (x === undefined || y === undefined) {
        if (x !== y) return x === undefined ? 1 : -1; // documents without the field last
      } else if (x !== y) {
        return (x < y ? -1 : 1) * dir;
      }
      return byScore(a, b);
    };
  }
  // The best offset+limit only: a bounded heap whose root is the worst kept (O(n log k)).
  const k = o.offset + o.limit;
  const heap: Hit[] = [];
  for (let [slot, score] of scores) {
    if (sf !== null) score = applyScoreFunc(sf, idx.recAt[slot]!, score);
    const h: Hit = [idx.keyAt[slot]!, score, slot];
    if (heap.length < k) {
      heap.push(h);
      for (let i = heap.length - 1; i > 0;) {
        const p = (i - 1) >> 1;
        if (cmp(heap[i], heap[p]) <= 0) break;
        [heap[i], heap[p]] = [heap[p], heap[i]];
        i = p;
      }
    } else if (cmp(h, heap[0]) < 0) {
      heap[0] = h;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && cmp(heap[l], heap[m]) > 0) m = l;
        if (r < heap.length && cmp(heap[r], heap[m]) > 0) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
  }
  return heap.sort(cmp).slice(o.offset);
}

