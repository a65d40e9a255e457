/**
 * SEARCH.AGGREGATE: metric ($avg, $sum, $min, $max, $count, $stats, $cardinality) and bucket
 * ($terms, $range, $histogram, with nested $aggs) aggregations over the documents a filter
 * selects. Replies are flat [name, value...] arrays as the SDK's deserializeAggregateResponse
 * reads them: a metric is ["value", x] (stats: ["count", n, "min", ...]), a bucket aggregation
 * ["buckets", [[ "key", k, "docCount", n, sub-aggregations... ]...], extra fields...].
 */
import type { ReplySink } from '../../resp/reply-sink.js';
import type { DocRec, SearchIndex } from './index.js';
import { QueryError } from './query.js';

/** A reply value: text, an integer, a double, null or an array. */
export type RV = string | { int: number } | { dbl: number } | null | RV[];

const MAX_AGGS = 64;
const MAX_BUCKETS = 10_000;
/** $range: each range is a pass over the selected documents. */
const MAX_RANGES = 100;
const METRICS = new Set(['$avg', '$sum', '$min', '$max', '$count', '$stats', '$cardinality']);
const BUCKETS = new Set(['$terms', '$range', '$histogram']);

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
    if (!f.fast) throw new QueryError(`ERR field '${f.name}' is not FAST`);
    if ((op === '$terms' && !numeric && f.type !== 'KEYWORD' && f.type !== 'BOOL') || (op !== '$terms' && op !== '$cardinality' && op !== '$count' && !numeric)) {
      throw new QueryError(`ERR ${op} is not supported for ${f.type} field '${f.name}'`);
    }
    if (op === '$histogram' && !(typeof args.interval === 'number' && args.interval > 0)) throw new QueryError(`ERR aggregation '${name}': interval must be a positive number`);
    if (op === '$range' && !(Array.isArray(args.ranges) && args.ranges.length <= MAX_RANGES)) throw new QueryError(`ERR aggregation '${name}': ranges must be an array of at most ${MAX_RANGES}`);
    if (spec.$aggs !== undefined && !BUCKETS.has(op)) throw new QueryError(`ERR aggregation '${name}': only bucket aggregations take $aggs`);
    const sub = spec.$aggs === undefined ? [] : parseLevel(spec.$aggs, idx, depth + 1, count);
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

function nums(a: Agg, docs: DocRec[]): number[] {
  const xs: number[] = [];
  for (const d of docs) {
    const v = d.vals[a.field];
    if (v !== undefined) for (const x of v) if (typeof x === 'number') xs.push(x);
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
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const x of xs) { sum += x; if (x < min) min = x; if (x > max) max = x; }
  const avg = xs.length > 0 ? sum / xs.length : NaN;
  switch (a.op) {
    case '$avg': return ['value', dbl(avg)];
    case '$sum': return ['value', { dbl: sum }];
    case '$min': return ['value', dbl(min)];
    case '$max': return ['value', dbl(max)];
    default: return ['count', { int: xs.length }, 'min', dbl(min), 'max', dbl(max), 'avg', dbl(avg), 'sum', { dbl: sum }];
  }
}

function bucketReply(key: RV, docs: DocRec[], sub: Agg[], extra: RV[] = []): RV {
  return ['key', key, ...extra, 'docCount', { int: docs.length }, ...aggregate(sub, docs)];
}

function keyOf(x: string | number | boolean): RV {
  return typeof x === 'number' ? { dbl: x } : typeof x === 'boolean' ? (x ? 'true' : 'false') : x;
}

function buckets(a: Agg, docs: DocRec[]): RV {
  if (a.op === '$terms') {
    const size = typeof a.args.size === 'number' && a.args.size > 0 ? Math.min(Math.floor(a.args.size), MAX_BUCKETS) : 10;
    const groups = new Map<string | number | boolean, DocRec[]>();
    for (const d of docs) {
      const v = d.vals[a.field];
      if (v === undefined) continue;
      for (const x of new Set(v)) { let g = groups.get(x); if (g === undefined) { g = []; groups.set(x, g); } g.push(d); }
    }
    const sorted = [...groups].sort((p, q) => q[1].length - p[1].length || (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : 0));
    let other = 0;
    for (let i = size; i < sorted.length; i++) other += sorted[i][1].length;
    return ['buckets', sorted.slice(0, size).map(([k, ds]) => bucketReply(keyOf(k), ds, a.sub)), 'sumOtherDocCount', { int: other }];
  }
  if (a.op === '$range') {
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
  // $histogram
  const interval = a.args.interval as number;
  const offset = typeof a.args.offset === 'number' ? a.args.offset : 0;
  const minDocCount = typeof a.args.minDocCount === 'number' ? a.args.minDocCount : 0;
  const groups = new Map<number, DocRec[]>();
  for (const d of docs) {
    const v = d.vals[a.field];
    if (v === undefined) continue;
    for (const x of new Set(v.map((y) => Math.floor(((y as number) - offset) / interval) * interval + offset))) {
      let g = groups.get(x);
      if (g === undefined) {
        if (groups.size >= MAX_BUCKETS) throw new QueryError(`ERR $histogram would create more than ${MAX_BUCKETS} buckets`);
        g = [];
        groups.set(x, g);
      }
      g.push(d);
    }
  }
  const keys = [...groups.keys()].sort((p, q) => p - q);
  const out: RV[] = [];
  // Empty buckets between the first and the last are listed (minDocCount 0), within the bucket bound.
  if (keys.length > 0 && minDocCount <= 0 && (keys[keys.length - 1] - keys[0]) / interval < MAX_BUCKETS) {
    for (let k = keys[0]; k <= keys[keys.length - 1]; k += interval) out.push(bucketReply({ dbl: k }, groups.get(k) ?? [], a.sub));
  } else {
    for (const k of keys) if (groups.get(k)!.length >= minDocCount) out.push(bucketReply({ dbl: k }, groups.get(k)!, a.sub));
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
