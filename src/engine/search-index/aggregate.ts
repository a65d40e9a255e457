/**
 * SEARCH.AGGREGATE: metric ($avg, $sum, $min, $max, $count, $stats, $extendedStats,
 * $percentiles, $cardinality) and bucket ($terms, $range, $histogram, $dateHistogram with nested
 * $aggs; $facet without) aggregations over the documents a filter selects. Replies are flat [name, value...] arrays as the SDK's deserializeAggregateResponse
 * reads them: a metric is ["value", x] (stats: ["count", n, "min", ...]), a bucket aggregation
 * ["buckets", [[ "key", k, "docCount", n, sub-aggregations... ]...], extra fields...]; a keyed
 * histogram ["buckets", [key text, bucket, ...]].
 */
import type { ReplySink } from '../../resp/reply-sink.js';
import type { DocRec, SearchIndex } from './index.js';
import { QueryError, safeRegex } from './query.js';

/** A reply value: text, an integer, a double, null or an array. */
export type RV = string | { int: number } | { dbl: number } | null | RV[];

const MAX_AGGS = 64;
const MAX_BUCKETS = 10_000;
/** $range: each range is a pass over the selected documents. */
const MAX_RANGES = 100;
const METRICS = new Set(['$avg', '$sum', '$min', '$max', '$count', '$stats', '$extendedStats', '$percentiles', '$cardinality']);
const BUCKETS = new Set(['$terms', '$range', '$histogram', '$dateHistogram', '$facet']);
/** $percentiles without `percents` (the reference's default). */
const DEFAULT_PERCENTS = [1, 5, 25, 50, 75, 95, 99];
const MAX_PERCENTS = 100;
/** $facet: levels below the root path, and children listed per level. */
const MAX_FACET_DEPTH = 16;
/** Fixed-interval units of $dateHistogram, in ms. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

interface Agg {
  name: string;
  op: string;
  field: number;
  args: Record<string, unknown>;
  sub: Agg[];
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseAggregations(src: string, idx: SearchIndex): Agg[] {
  let a: unknown;
  try {
    a = JSON.parse(src);
  } catch {
    throw new QueryError('ERR invalid aggregations: not valid JSON');
  }
  const count = { n: 0 };
  return parseLevel(a, idx, 0, count);
}

function parseLevel(a: unknown, idx: SearchIndex, depth: number, count: { n: number }): Agg[] {
  if (!isObj(a)) throw new QueryError('ERR invalid aggregations: expected a JSON object');
  if (depth > 4) throw new QueryError('ERR invalid aggregations: $aggs nested too deep');
  const out: Agg[] = [];
  for (const name of Object.keys(a)) {
    if (++count.n > MAX_AGGS) throw new QueryError(`ERR invalid aggregations: more than ${MAX_AGGS}`);
    const spec = a[name];
    if (!isObj(spec)) throw new QueryError(`ERR invalid aggregation '${name}'`);
    const ops = Object.keys(spec).filter((k) => k !== '$aggs');
    if (ops.length !== 1) throw new QueryError(`ERR aggregation '${name}' needs exactly one operator`);
    const op = ops[0];
    if (!METRICS.has(op) && !BUCKETS.has(op)) throw new QueryError(`ERR Unknown aggregation operator: ${op}`);
    const args = spec[op];
    if (!isObj(args) || typeof args.field !== 'string') throw new QueryError(`ERR aggregation '${name}': ${op} needs a field`);
    const fi = idx.byName.get(args.field);
    if (fi === undefined) throw new QueryError(`ERR Unknown field: ${args.field}`);
    const f = idx.def.fields[fi];
    const numeric = f.type === 'U64' || f.type === 'I64' || f.type === 'F64' || f.type === 'DATE';
    if (op === '$facet') {
      if (f.type !== 'FACET') throw new QueryError(`ERR ${op} is not supported for ${f.type} field '${f.name}'`);
      if (depth > 0) throw new QueryError(`ERR aggregation '${name}': $facet cannot be a sub-aggregation`);
      if (spec.$aggs !== undefined) throw new QueryError(`ERR aggregation '${name}': $facet does not take $aggs`);
      parseFacet(name, args);
      out.push({ name, op, field: fi, args, sub: [] });
      continue;
    }
    if (!f.fast) throw new QueryError(`ERR field '${f.name}' is not FAST`);
    if ((op === '$terms' && !numeric && f.type !== 'KEYWORD' && f.type !== 'BOOL') || (op === '$dateHistogram' && f.type !== 'DATE') ||
        (op !== '$terms' && op !== '$cardinality' && op !== '$count' && !numeric)) {
      throw new QueryError(`ERR ${op} is not supported for ${f.type} field '${f.name}'`);
    }
    if (op === '$histogram') {
      if (!(typeof args.interval === 'number' && args.interval > 0)) throw new QueryError(`ERR aggregation '${name}': interval must be a positive number`);
      args.$grid = grid(name, args, args.interval, typeof args.offset === 'number' ? args.offset : 0);
    }
    if (op === '$dateHistogram') {
      const interval = duration(args.fixedInterval, false);
      if (interval === null || interval <= 0) throw new QueryError(`ERR aggregation '${name}': fixedInterval must be a duration such as "30s", "1h" or "1d"`);
      const offset = args.offset === undefined ? 0 : duration(args.offset, true);
      if (offset === null) throw new QueryError(`ERR aggregation '${name}': offset must be a duration such as "-2h"`);
      args.$grid = grid(name, args, interval, offset);
    }
    if (op === '$percentiles') {
      const ps = args.percents ?? DEFAULT_PERCENTS;
      if (!Array.isArray(ps) || ps.length === 0 || ps.length > MAX_PERCENTS || !ps.every((p) => typeof p === 'number' && p >= 0 && p <= 100)) {
        throw new QueryError(`ERR aggregation '${name}': percents must be 1 to ${MAX_PERCENTS} numbers between 0 and 100`);
      }
    }
    if (op !== '$terms' && args.missing !== undefined && typeof args.missing !== 'number') throw new QueryError(`ERR aggregation '${name}': missing must be a number`);
    if (op === '$extendedStats' && args.sigma !== undefined && !(typeof args.sigma === 'number' && args.sigma >= 0)) throw new QueryError(`ERR aggregation '${name}': sigma must be a non-negative number`);
    if (op === '$range' && !(Array.isArray(args.ranges) && args.ranges.length <= MAX_RANGES)) throw new QueryError(`ERR aggregation '${name}': ranges must be an array of at most ${MAX_RANGES}`);
    if (spec.$aggs !== undefined && !BUCKETS.has(op)) throw new QueryError(`ERR aggregation '${name}': only bucket aggregations take $aggs`);
    const sub = spec.$aggs === undefined ? [] : parseLevel(spec.$aggs, idx, depth + 1, count);
    if (op === '$terms') parseTerms(name, args, sub);
    out.push({ name, op, field: fi, args, sub });
  }
  return out;
}

/** The aggregations over `docs`, as the flat [name, value, ...] reply. */
export function aggregate(aggs: Agg[], docs: DocRec[]): RV[] {
  const out: RV[] = [];
  for (const a of aggs) {
    out.push(a.name, BUCKETS.has(a.op) ? buckets(a, docs) : metric(a, docs));
  }
  return out;
}

interface Grid {
  /** Buckets as an object keyed by the bucket key's text (["k", bucket, ...]) instead of a list. */
  keyed: boolean;
  interval: number;
  offset: number;
  minDocCount: number;
  hard: [number, number] | null;
  ext: [number, number] | null;
}

function bounds(name: string, what: string, v: unknown): [number, number] | null {
  if (v === undefined) return null;
  if (!isObj(v) || typeof v.min !== 'number' || typeof v.max !== 'number' || !(v.min <= v.max)) {
    throw new QueryError(`ERR aggregation '${name}': ${what} needs numbers min <= max`);
  }
  return [v.min, v.max];
}

/** The bucket grid of $histogram / $dateHistogram, validated up front. */
function grid(name: string, args: Record<string, unknown>, interval: number, offset: number): Grid {
  if (args.keyed !== undefined && typeof args.keyed !== 'boolean') throw new QueryError(`ERR aggregation '${name}': keyed must be a boolean`);
  const g: Grid = {
    keyed: args.keyed === true,
    interval,
    offset,
    minDocCount: typeof args.minDocCount === 'number' ? args.minDocCount : 0,
    hard: bounds(name, 'hardBounds', args.hardBounds),
    ext: bounds(name, 'extendedBounds', args.extendedBounds),
  };
  // Extended bounds emit every bucket of their range: bound it before any document is read.
  if (g.ext !== null && (g.ext[1] - g.ext[0]) / interval >= MAX_BUCKETS) throw new QueryError(`ERR aggregation '${name}' would create more than ${MAX_BUCKETS} buckets`);
  return g;
}

/** "90s", "1h", "-2h", "+1d" as ms; a number is taken as ms; null if malformed. */
function duration(v: unknown, signed: boolean): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && (signed || v > 0) ? v : null; // keys are integer ms
  if (typeof v !== 'string') return null;
  const m = /^([+-]?)(\d{1,15})(ms|s|m|h|d)$/.exec(v);
  if (m === null || (!signed && m[1] !== '')) return null;
  return (m[1] === '-' ? -1 : 1) * Number(m[2]) * UNIT_MS[m[3]];
}

interface Terms {
  size: number;
  minDocCount: number;
  /** 'count', 'key' or the name of a single-value metric sub-aggregation. */
  by: string;
  desc: boolean;
  missing: string | number | null;
  include: Set<string> | RegExp | null;
  exclude: Set<string> | RegExp | null;
  showError: boolean;
}

const SINGLE_VALUE = new Set(['$avg', '$sum', '$min', '$max', '$count', '$cardinality']);

function parseTerms(name: string, args: Record<string, unknown>, sub: Agg[]): void {
  const bad = (what: string) => new QueryError(`ERR aggregation '${name}': ${what}`);
  const count = (v: unknown, dflt: number, what: string) => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw bad(`${what} must be a non-negative integer`);
    return v;
  };
  const t: Terms = {
    size: Math.min(count(args.size, 10, 'size') || 10, MAX_BUCKETS),
    minDocCount: count(args.minDocCount, 1, 'minDocCount'),
    by: 'count',
    desc: true,
    missing: null,
    include: null,
    exclude: null,
    showError: args.showTermDocCountError === true,
  };
  count(args.segmentSize, 0, 'segmentSize'); // counts here are exact: accepted, nothing to tune
  if (args.order !== undefined) {
    const o = args.order;
    const ks = isObj(o) ? Object.keys(o) : [];
    const dir = ks.length === 1 ? (o as Record<string, unknown>)[ks[0]] : undefined;
    if (ks.length !== 1 || (dir !== 'asc' && dir !== 'desc')) throw bad('order must be one {"count"|"key"|"<sub-aggregation>": "asc"|"desc"}');
    if (ks[0] !== 'count' && ks[0] !== 'key' && !sub.some((x) => x.name === ks[0] && SINGLE_VALUE.has(x.op))) {
      throw bad(`order by '${ks[0]}': not count, key or a single-value metric sub-aggregation`);
    }
    t.by = ks[0];
    t.desc = dir === 'desc';
  }
  if (args.missing !== undefined) {
    if (typeof args.missing !== 'string' && typeof args.missing !== 'number') throw bad('missing must be a string or a number');
    t.missing = args.missing;
  }
  const list = (v: unknown, what: string): Set<string> | RegExp | null => {
    if (v === undefined) return null;
    if (typeof v === 'string') return safeRegex(v);
    if (Array.isArray(v) && v.length <= MAX_BUCKETS && v.every((x) => typeof x === 'string' || typeof x === 'number')) return new Set(v.map(String));
    throw bad(`${what} must be a regular expression or a list of values`);
  };
  t.include = list(args.include, 'include');
  t.exclude = list(args.exclude, 'exclude');
  args.$terms = t;
}

interface Facet {
  path: string;
  depth: number;
  size: number;
  minDocCount: number;
  byPath: boolean;
  desc: boolean;
}

function parseFacet(name: string, args: Record<string, unknown>): void {
  const bad = (what: string) => new QueryError(`ERR aggregation '${name}': ${what}`);
  if (typeof args.path !== 'string' || !args.path.startsWith('/')) throw bad('$facet path must start with /');
  const int = (v: unknown, dflt: number, min: number, max: number, what: string) => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(`${what} must be an integer from ${min} to ${max}`);
    return v;
  };
  let byPath = false;
  let desc = true;
  if (args.order !== undefined) {
    const o = args.order;
    const ks = isObj(o) ? Object.keys(o) : [];
    if (ks.length !== 1 || (ks[0] !== 'count' && ks[0] !== 'path') || ((o as Record<string, unknown>)[ks[0]] !== 'asc' && (o as Record<string, unknown>)[ks[0]] !== 'desc')) {
      throw bad('order must be {"count": "asc"|"desc"} or {"path": "asc"|"desc"}');
    }
    byPath = ks[0] === 'path';
    desc = (o as Record<string, unknown>)[ks[0]] === 'desc';
  }
  const f: Facet = {
    path: args.path.length > 1 && args.path.endsWith('/') ? args.path.slice(0, -1) : args.path,
    depth: int(args.depth, 1, 1, MAX_FACET_DEPTH, 'depth'),
    size: int(args.size, 10, 1, MAX_BUCKETS, 'size'),
    minDocCount: int(args.minDocCount, 1, 0, Number.MAX_SAFE_INTEGER, 'minDocCount'),
    byPath,
    desc,
  };
  args.$facet = f;
}

/** The numeric values of the field over `docs`; a document without one counts as `missing` if given. */
function nums(a: Agg, docs: DocRec[]): number[] {
  const xs: number[] = [];
  const missing = typeof a.args.missing === 'number' ? a.args.missing : null;
  for (const d of docs) {
    const v = d.vals[a.field];
    const n = xs.length;
    if (v !== undefined) for (const x of v) if (typeof x === 'number') xs.push(x);
    if (xs.length === n && missing !== null) xs.push(missing);
  }
  return xs;
}

function dbl(x: number): RV {
  return Number.isFinite(x) ? { dbl: x } : null;
}

function metric(a: Agg, docs: DocRec[]): RV {
  if (a.op === '$cardinality' || a.op === '$count') {
    const seen = new Set<unknown>();
    let n = 0;
    for (const d of docs) { const v = d.vals[a.field]; if (v !== undefined) for (const x of v) { seen.add(x); n++; } }
    return ['value', { int: a.op === '$count' ? n : seen.size }];
  }
  const xs = nums(a, docs);
  if (a.op === '$percentiles') return percentiles(a, xs);
  let sum = 0;
  let sq = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const x of xs) { sum += x; sq += x * x; if (x < min) min = x; if (x > max) max = x; }
  const n = xs.length;
  const avg = n > 0 ? sum / n : NaN;
  switch (a.op) {
    case '$avg': return ['value', dbl(avg)];
    case '$sum': return ['value', { dbl: sum }];
    case '$min': return ['value', dbl(min)];
    case '$max': return ['value', dbl(max)];
  }
  const stats: RV[] = ['count', { int: n }, 'min', dbl(min), 'max', dbl(max), 'avg', dbl(avg), 'sum', { dbl: sum }];
  if (a.op === '$stats') return stats;
  // $extendedStats: variance from the mean of squares; the plain names are the population figures.
  let m2 = 0;
  for (const x of xs) m2 += (x - avg) * (x - avg);
  const varPop = n > 0 ? m2 / n : NaN;
  const varSam = n > 1 ? m2 / (n - 1) : NaN;
  const sdPop = Math.sqrt(varPop);
  const sdSam = Math.sqrt(varSam);
  const sigma = typeof a.args.sigma === 'number' ? a.args.sigma : 2;
  return [...stats, 'sumOfSquares', { dbl: sq },
    'variance', dbl(varPop), 'variancePopulation', dbl(varPop), 'varianceSampling', dbl(varSam),
    'stdDeviation', dbl(sdPop), 'stdDeviationPopulation', dbl(sdPop), 'stdDeviationSampling', dbl(sdSam),
    'stdDeviationBounds', [
      'upper', dbl(avg + sigma * sdPop), 'lower', dbl(avg - sigma * sdPop),
      'upperSampling', dbl(avg + sigma * sdSam), 'lowerSampling', dbl(avg - sigma * sdSam),
      'upperPopulation', dbl(avg + sigma * sdPop), 'lowerPopulation', dbl(avg - sigma * sdPop),
    ]];
}

/** Exact percentiles, linear between the closest ranks (the reference's worked example). */
function percentiles(a: Agg, xs: number[]): RV {
  const ps = (a.args.percents as number[] | undefined) ?? DEFAULT_PERCENTS;
  xs.sort((p, q) => p - q);
  const at = (p: number): RV => {
    if (xs.length === 0) return null;
    const r = (p / 100) * (xs.length - 1);
    const lo = Math.floor(r);
    const hi = Math.min(lo + 1, xs.length - 1);
    return { dbl: xs[lo] + (xs[hi] - xs[lo]) * (r - lo) };
  };
  if (a.args.keyed === false) return ['values', ps.map((p) => ['key', { dbl: p }, 'value', at(p)])];
  const out: RV[] = [];
  for (const p of ps) out.push(Number.isInteger(p) ? `${p}.0` : String(p), at(p));
  return ['values', out];
}

function bucketReply(key: RV, docs: DocRec[], sub: Agg[], extra: RV[] = [], after: RV[] = []): RV {
  return ['key', key, ...extra, 'docCount', { int: docs.length }, ...after, ...aggregate(sub, docs)];
}

function keyOf(x: string | number | boolean): RV {
  return typeof x === 'number' ? { dbl: x } : typeof x === 'boolean' ? (x ? 'true' : 'false') : x;
}

/** RFC 3339 in UTC, without a fraction when it is zero ("2024-01-01T00:00:00Z"). */
function rfc3339(ms: number): string {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return String(ms);
  return d.toISOString().replace('.000Z', 'Z');
}

function histogram(a: Agg, docs: DocRec[]): RV {
  const out = histogramBuckets(a, docs);
  if (!(a.args.$grid as Grid).keyed) return ['buckets', out];
  // keyed: each bucket under its key's text (Tantivy: the f64 key as Rust prints it; a date's ms).
  const obj: RV[] = [];
  for (const b of out) { const k = (b as RV[])[1] as { int: number } | { dbl: number }; obj.push(keyText('int' in k ? k.int : k.dbl), b); }
  return ['buckets', obj];
}

/** An f64 as Rust's Display prints it: integers without exponent or fraction. */
function keyText(x: number): string {
  return Number.isInteger(x) ? BigInt(x).toString() : String(x);
}

function histogramBuckets(a: Agg, docs: DocRec[]): RV[] {
  const g = a.args.$grid as Grid;
  const { interval, offset, hard } = g;
  const date = a.op === '$dateHistogram';
  const keyOfBucket = (x: number) => Math.floor((x - offset) / interval) * interval + offset;
  const groups = new Map<number, DocRec[]>();
  const seen = new Set<number>();
  for (const d of docs) {
    const v = d.vals[a.field];
    if (v === undefined) continue;
    seen.clear();
    for (const y of v) {
      const x = y as number;
      if (hard !== null && (x < hard[0] || x > hard[1])) continue;
      const k = keyOfBucket(x);
      if (seen.has(k)) continue;
      seen.add(k);
      let grp = groups.get(k);
      if (grp === undefined) {
        if (groups.size >= MAX_BUCKETS) throw new QueryError(`ERR ${a.op} would create more than ${MAX_BUCKETS} buckets`);
        grp = [];
        groups.set(k, grp);
      }
      grp.push(d);
    }
  }
  const reply = (k: number, ds: DocRec[]) => date
    ? bucketReply({ int: k }, ds, a.sub, ['keyAsString', rfc3339(k)])
    : bucketReply({ dbl: k }, ds, a.sub);
  const keys = [...groups.keys()].sort((p, q) => p - q);
  const out: RV[] = [];
  if (g.minDocCount > 0) {
    for (const k of keys) if (groups.get(k)!.length >= g.minDocCount) out.push(reply(k, groups.get(k)!));
    return out;
  }
  // minDocCount 0: every bucket from the first to the last, widened by extendedBounds, within hardBounds.
  let lo = keys.length > 0 ? keys[0] : Infinity;
  let hi = keys.length > 0 ? keys[keys.length - 1] : -Infinity;
  if (g.ext !== null) { lo = Math.min(lo, keyOfBucket(g.ext[0])); hi = Math.max(hi, keyOfBucket(g.ext[1])); }
  if (hard !== null) { lo = Math.max(lo, keyOfBucket(hard[0])); hi = Math.min(hi, keyOfBucket(hard[1])); }
  if (!(lo <= hi)) return out;
  if ((hi - lo) / interval >= MAX_BUCKETS) {
    for (const k of keys) out.push(reply(k, groups.get(k)!)); // too sparse to fill: the non-empty ones
    return out;
  }
  for (let i = 0; ; i++) {
    const k = lo + i * interval;
    if (k > hi) break;
    out.push(reply(k, groups.get(k) ?? []));
  }
  return out;
}

interface FacetNode { n: number; last: DocRec | null; kids: Map<string, FacetNode> }

/** $facet: the tree of FACET paths below the root, counted in documents. */
function facet(a: Agg, docs: DocRec[]): RV {
  const f = a.args.$facet as Facet;
  const root: FacetNode = { n: 0, last: null, kids: new Map() };
  const base = f.path === '/' ? '' : f.path;
  for (const d of docs) {
    const v = d.vals[a.field];
    if (v === undefined) continue;
    for (const x of v) {
      const s = x as string;
      if (!s.startsWith(base + '/') || s.length === base.length + 1) continue;
      const segs = s.slice(base.length + 1).split('/');
      let node = root;
      for (let i = 0; i < segs.length && i < f.depth; i++) {
        if (segs[i] === '') break;
        let k = node.kids.get(segs[i]);
        if (k === undefined) { k = { n: 0, last: null, kids: new Map() }; node.kids.set(segs[i], k); }
        if (k.last !== d) { k.last = d; k.n++; } // a document counts once per node
        node = k;
      }
    }
  }
  const level = (node: FacetNode, path: string, depth: number): [RV[], number] => {
    const kids = [...node.kids].filter(([, k]) => k.n >= f.minDocCount);
    const dir = f.desc ? -1 : 1;
    kids.sort(f.byPath
      ? (p, q) => (p[0] < q[0] ? -dir : p[0] > q[0] ? dir : 0)
      : (p, q) => (p[1].n - q[1].n) * dir || (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : 0));
    let other = 0;
    for (let i = f.size; i < kids.length; i++) other += kids[i][1].n;
    const out: RV[] = [];
    for (const [seg, k] of kids.slice(0, f.size)) {
      const p = `${path}/${seg}`;
      const [children, o] = depth < f.depth ? level(k, p, depth + 1) : [[], 0];
      const item: RV[] = ['path', p, 'docCount', { int: k.n }, 'sumOtherDocCount', { int: o }];
      if (children.length > 0) item.push('children', children);
      out.push(item);
    }
    return [out, other];
  };
  const [children, other] = level(root, base, 1);
  return ['path', f.path, 'sumOtherDocCount', { int: other }, 'children', children];
}

function terms(a: Agg, docs: DocRec[]): RV {
  const t = a.args.$terms as Terms;
  const groups = new Map<string | number | boolean, DocRec[]>();
  const put = (x: string | number | boolean, d: DocRec) => { let g = groups.get(x); if (g === undefined) { g = []; groups.set(x, g); } g.push(d); };
  for (const d of docs) {
    const v = d.vals[a.field];
    if (v === undefined) { if (t.missing !== null) put(t.missing, d); continue; }
    if (v.length === 1) put(v[0], d);
    else for (const x of new Set(v)) put(x, d);
  }
  const keep = (k: string | number | boolean) => {
    const s = String(k);
    const hit = (m: Set<string> | RegExp) => (m instanceof RegExp ? m.test(s) : m.has(s));
    return (t.include === null || hit(t.include)) && (t.exclude === null || !hit(t.exclude));
  };
  const rows = [...groups].filter(([k, ds]) => ds.length >= t.minDocCount && keep(k));
  const byKey = (p: [string | number | boolean, DocRec[]], q: [string | number | boolean, DocRec[]]) => (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : 0);
  const dir = t.desc ? -1 : 1;
  if (t.by === 'count') rows.sort((p, q) => (p[1].length - q[1].length) * dir || byKey(p, q));
  else if (t.by === 'key') rows.sort((p, q) => byKey(p, q) * dir);
  else {
    const m = a.sub.find((x) => x.name === t.by)!;
    const val = new Map(rows.map(([k, ds]) => { const r = metric(m, ds) as RV[]; const v = r[1]; return [k, v !== null && typeof v === 'object' && !Array.isArray(v) ? ('int' in v ? v.int : v.dbl) : NaN]; }));
    // Buckets whose metric has no value (no numbers) go last either way.
    rows.sort((p, q) => { const x = val.get(p[0])!; const y = val.get(q[0])!; return Number.isNaN(x) || Number.isNaN(y) ? Number(Number.isNaN(x)) - Number(Number.isNaN(y)) : (x - y) * dir || byKey(p, q); });
  }
  let other = 0;
  for (let i = t.size; i < rows.length; i++) other += rows[i][1].length;
  const extra: RV[] = t.showError ? ['docCountErrorUpperBound', { int: 0 }] : [];
  const out: RV[] = ['buckets', rows.slice(0, t.size).map(([k, ds]) => bucketReply(keyOf(k), ds, a.sub, [], extra)), 'sumOtherDocCount', { int: other }];
  if (t.showError) out.push('docCountErrorUpperBound', { int: 0 });
  return out;
}

function buckets(a: Agg, docs: DocRec[]): RV {
  if (a.op === '$histogram' || a.op === '$dateHistogram') return histogram(a, docs);
  if (a.op === '$facet') return facet(a, docs);
  if (a.op === '$terms') return terms(a, docs);
  // $range
  const out: RV[] = [];
  for (const r of a.args.ranges as unknown[]) {
    if (!isObj(r)) throw new QueryError('ERR invalid aggregations: each range is an object {from?, to?}');
    const from = typeof r.from === 'number' ? r.from : -Infinity;
    const to = typeof r.to === 'number' ? r.to : Infinity;
    const ds = docs.filter((d) => d.vals[a.field]?.some((x) => typeof x === 'number' && x >= from && x < to));
    const key = typeof r.key === 'string' ? r.key : `${Number.isFinite(from) ? from : '*'}-${Number.isFinite(to) ? to : '*'}`;
    const extra: RV[] = [];
    if (Number.isFinite(from)) extra.push('from', { dbl: from });
    if (Number.isFinite(to)) extra.push('to', { dbl: to });
    out.push(bucketReply(key, ds, a.sub, extra));
  }
  return ['buckets', out];
}

export function writeRV(out: ReplySink, v: RV): void {
  if (v === null) out.nil();
  else if (typeof v === 'string') out.bulkText(v);
  else if (Array.isArray(v)) { out.array(v.length); for (const x of v) writeRV(out, x); }
  else if ('int' in v) out.int(v.int);
  else out.bulkText(String(v.dbl));
}
