/**
 * Upstash Redis Search: the SEARCH.* commands (not RediSearch's FT.*). Indexes are views of
 * the keys under their prefixes, kept in sync through the keyspace change hook; the index
 * machinery lives in ../search-index/.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { parseCreate, sameDefinition, SchemaError } from '../search-index/schema.js';
import { registryOf } from '../search-index/registry.js';
import { countMatches, evaluate, matchedTerms, parseQuery, QueryError, type Node, type Scores } from '../search-index/query.js';
import { applyScoreFunc, parseScoreFunc, type ScoreFunc } from '../search-index/scorefunc.js';
import { mark, parseHighlight, type Highlight } from '../search-index/highlight.js';
import type { DocRec, SearchIndex } from '../search-index/index.js';
import { aggregate, parseAggregations, writeRV } from '../search-index/aggregate.js';
import { globMatch } from '../glob.js';

const MAX_LIMIT = 1000;
/** Indexes per server: every write under a prefix is checked against each of them. */
const MAX_INDEXES = 1000;
const DEFAULT_LIMIT = 10;
/** OFFSET beyond this is refused: every skipped result is still ranked. */
const MAX_OFFSET = 100_000;

function fail(out: ReplySink, err: unknown): void {
  if (err instanceof SchemaError || err instanceof QueryError) out.error(err.message);
  else throw err;
}

// SEARCH.CREATE name ON JSON|HASH|STRING PREFIX n p... [LANGUAGE l] [SKIPINITIALSCAN] [EXISTSOK] SCHEMA ...
function createCommand(c: Client, argv: Argv, out: ReplySink): void {
  let opts;
  try {
    opts = parseCreate(argv, c.dbIndex);
  } catch (err) {
    fail(out, err);
    return;
  }
  const reg = registryOf(c.engine);
  const old = reg.indexes.get(opts.def.name);
  if (old !== undefined) {
    if (!opts.existsOk) out.error(`ERR Index ${opts.def.name} already exists`);
    else if (!sameDefinition(old.def, opts.def)) out.error(`ERR Index ${opts.def.name} already exists with a different configuration`);
    else out.int(0);
    return;
  }
  // The name of an index is a key of its database: a key already there keeps it.
  if (c.engine.dbs[opts.def.db].get(opts.def.name) !== undefined) {
    out.error(`ERR ${opts.def.name} is already used by a non-index key`);
    return;
  }
  // One index per stream (the reference: drop it before binding another).
  if (opts.def.on === 'STREAM') {
    for (const x of reg.indexes.values()) {
      if (x.def.on === 'STREAM' && x.def.db === opts.def.db && x.def.prefixes[0] === opts.def.prefixes[0]) {
        out.error(`ERR stream ${opts.def.prefixes[0]} is already indexed by ${x.def.name}`);
        return;
      }
    }
  }
  if (reg.indexes.size >= MAX_INDEXES) {
    out.error(`ERR too many indexes (at most ${MAX_INDEXES})`);
    return;
  }
  reg.add(opts.def, !opts.skipInitialScan);
  out.int(1);
}

// SEARCH.DROP name (a literal index name, never an alias)
function dropCommand(c: Client, argv: Argv, out: ReplySink): void {
  out.int(registryOf(c.engine).drop(argv.key(1)) ? 1 : 0);
}

// SEARCH.DESCRIBE name|alias
function describeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const idx = registryOf(c.engine).resolve(argv.key(1));
  if (idx === undefined) {
    out.nil();
    return;
  }
  const d = idx.def;
  out.array(10);
  out.bulkText('name');
  out.bulkLatin1(d.name);
  out.bulkText('type');
  out.bulkText(d.on);
  if (d.on === 'STREAM') {
    out.bulkText('stream');
    out.bulkLatin1(d.prefixes[0]);
  } else {
    out.bulkText('prefixes');
    out.array(d.prefixes.length);
    for (const p of d.prefixes) out.bulkLatin1(p);
  }
  out.bulkText('language');
  out.bulkText(d.language);
  out.bulkText('schema');
  out.array(d.fields.length);
  for (const f of d.fields) {
    const opts: string[] = [];
    if (f.fast) opts.push('FAST');
    if (f.noStem) opts.push('NOSTEM');
    if (f.noTokenize) opts.push('NOTOKENIZE');
    if (f.from !== null) opts.push('FROM', f.from);
    out.array(2 + opts.length);
    out.bulkText(f.name);
    out.bulkText(f.type);
    for (const o of opts) out.bulkText(o);
  }
}

/** Bring the named index up to date (`rebuild`: from the whole keyspace): 1, or 0 if none. */
function catchUp(c: Client, argv: Argv, out: ReplySink, rebuild: boolean): void {
  const reg = registryOf(c.engine);
  const idx = reg.resolve(argv.key(1));
  if (idx === undefined) {
    out.int(0);
    return;
  }
  if (rebuild) idx.stale = true;
  reg.ready(idx);
  out.int(1);
}

// SEARCH.WAITINDEXING name|alias: every write acknowledged before it becomes visible.
function waitIndexingCommand(c: Client, argv: Argv, out: ReplySink): void {
  catchUp(c, argv, out, false);
}

// SEARCH.REINDEX name|alias: rebuild the contents from the keyspace.
function reindexCommand(c: Client, argv: Argv, out: ReplySink): void {
  catchUp(c, argv, out, true);
}

// SEARCH.LISTINDEXES [MATCH pattern] [LIMIT n] [OFFSET n]: [[name, n, type, t]...] sorted by name.
function listIndexesCommand(c: Client, argv: Argv, out: ReplySink): void {
  let pat: Buffer | null = null;
  let limit = 0;
  let offset = 0;
  for (let i = 1; i < argv.count; i += 2) {
    if (i + 1 >= argv.count) { out.error('ERR syntax error'); return; }
    if (argv.is(i, 'MATCH')) pat = Buffer.from(argv.key(i + 1), 'latin1');
    else if (argv.is(i, 'LIMIT') || argv.is(i, 'OFFSET')) {
      const n = argv.int(i + 1);
      if (!(n >= 0)) { out.error('ERR value is not an integer or out of range'); return; }
      if (argv.is(i, 'LIMIT')) limit = n;
      else offset = n;
    } else { out.error('ERR syntax error'); return; }
  }
  const all = [...registryOf(c.engine).indexes.values()]
    .filter((x) => pat === null || globMatch(pat, Buffer.from(x.def.name, 'latin1')))
    .sort((a, b) => (a.def.name < b.def.name ? -1 : a.def.name > b.def.name ? 1 : 0));
  const page = all.slice(offset, limit === 0 ? undefined : offset + limit);
  out.array(page.length);
  for (const x of page) {
    out.map(2);
    out.bulkText('name');
    out.bulkLatin1(x.def.name);
    out.bulkText('type');
    out.bulkText(x.def.on);
  }
}

// SEARCH.ALIASADD alias index: 1 created, 2 updated (the target may not exist yet).
function aliasAddCommand(c: Client, argv: Argv, out: ReplySink): void {
  out.int(registryOf(c.engine).setAlias(argv.key(1), argv.key(2)));
}

// SEARCH.ALIASDEL alias
function aliasDelCommand(c: Client, argv: Argv, out: ReplySink): void {
  out.int(registryOf(c.engine).delAlias(argv.key(1)) ? 1 : 0);
}

// SEARCH.LISTALIASES: [[alias, index]...]
function listAliasesCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const a = registryOf(c.engine).aliases;
  out.array(a.size);
  for (const [alias, name] of a) {
    out.array(2);
    out.bulkLatin1(alias);
    out.bulkLatin1(name);
  }
}

interface QueryOptions {
  limit: number;
  offset: number;
  noContent: boolean;
  select: string[] | null;
  orderBy: { field: number; desc: boolean } | null;
  scoreFunc: ScoreFunc | null;
  highlight: Highlight | null;
}

function parseOptions(argv: Argv, from: number, idx: SearchIndex): QueryOptions {
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

// SEARCH.QUERY name|alias filter [LIMIT n] [OFFSET n] [NOCONTENT] [SELECT n f...] [ORDERBY f [ASC|DESC]]
function queryCommand(c: Client, argv: Argv, out: ReplySink): void {
  const idx = readyIndex(c, argv, out);
  if (idx === undefined) return;
  let hits: Hit[];
  let o: QueryOptions;
  let q: Node;
  try {
    q = parseQuery(argv.str(2), idx);
    o = parseOptions(argv, 3, idx);
    hits = rank(evaluate(q, idx), idx, o);
  } catch (err) {
    fail(out, err);
    return;
  }
  const db = c.engine.dbs[idx.def.db];
  const hl = o.highlight;
  const terms = hl === null ? null : matchedTerms(q, idx);
  out.array(hits.length);
  for (const [key, score] of hits) {
    out.array(o.noContent ? 2 : 3);
    out.bulkLatin1(idx.replyKey(key));
    out.bulkText(String(score));
    if (o.noContent) continue;
    const pairs = idx.content(db, key, o.select);
    if (hl !== null) highlightPairs(pairs, idx, hl, terms!);
    out.array(pairs.length);
    for (const [f, v] of pairs) {
      out.array(2);
      out.bulkText(f);
      out.bulkText(v);
    }
  }
}

/** Mark the matched words of the highlighted fields in reply pairs (JSON values are re-serialized). */
function highlightPairs(pairs: [string, string][], idx: SearchIndex, h: Highlight, terms: Map<number, Set<string>>): void {
  const json = idx.def.on !== 'HASH' && idx.def.on !== 'STREAM';
  for (const p of pairs) {
    for (const fi of h.fields) {
      const f = idx.def.fields[fi];
      const set = terms.get(fi);
      if (set === undefined) continue;
      const src = f.from ?? f.name;
      const edit = (v: unknown): unknown => typeof v === 'string' ? mark(v, set, f.noTokenize, f.noStem, h.pre, h.post) : Array.isArray(v) ? v.map(edit) : v;
      if (!json) {
        if (p[0] === src) p[1] = edit(p[1]) as string;
        continue;
      }
      const path = p[0] === '$' ? src.split('.') : p[0] === src ? [] : null;
      if (path === null) continue;
      let root: unknown;
      try { root = JSON.parse(p[1]); } catch { continue; }
      p[1] = JSON.stringify(editAt(root, path, edit));
    }
  }
}

/** `root` with the value at `path` (fanning out over arrays) replaced by edit(value). */
function editAt(root: unknown, path: string[], edit: (v: unknown) => unknown): unknown {
  if (path.length === 0) return edit(root);
  if (Array.isArray(root)) return root.map((x) => editAt(x, path, edit));
  if (typeof root !== 'object' || root === null) return root;
  const o = root as Record<string, unknown>;
  if (path[0] in o) o[path[0]] = editAt(o[path[0]], path.slice(1), edit);
  return o;
}

/** The index argv[1] names (or aliases), caught up with every write; replies null when none. */
function readyIndex(c: Client, argv: Argv, out: ReplySink): SearchIndex | undefined {
  const reg = registryOf(c.engine);
  const found = reg.resolve(argv.key(1));
  if (found === undefined) {
    out.nil();
    return undefined;
  }
  return reg.ready(found);
}

// SEARCH.COUNT name|alias filter
function countCommand(c: Client, argv: Argv, out: ReplySink): void {
  const idx = readyIndex(c, argv, out);
  if (idx === undefined) return;
  try {
    out.int(countMatches(parseQuery(argv.str(2), idx), idx));
  } catch (err) {
    fail(out, err);
  }
}

// SEARCH.AGGREGATE name|alias filter aggregations
function aggregateCommand(c: Client, argv: Argv, out: ReplySink): void {
  const idx = readyIndex(c, argv, out);
  if (idx === undefined) return;
  try {
    const q = parseQuery(argv.str(2), idx);
    const aggs = parseAggregations(argv.str(3), idx);
    const docs: DocRec[] = [];
    for (const s of evaluate(q, idx).keys()) docs.push(idx.recAt[s]!);
    writeRV(out, aggregate(aggs, docs));
  } catch (err) {
    fail(out, err);
  }
}

export default family('search', [], [
  //   name                   arity  flags                   keys        handler
  row('search.create',          -4,  F.WRITE,                [0, 0, 0],  createCommand),
  row('search.drop',             2,  F.WRITE,                [0, 0, 0],  dropCommand),
  row('search.describe',         2,  F.READONLY,             [0, 0, 0],  describeCommand),
  row('search.waitindexing',     2,  F.READONLY,             [0, 0, 0],  waitIndexingCommand),
  row('search.reindex',          2,  F.WRITE,                [0, 0, 0],  reindexCommand),
  row('search.listindexes',     -1,  F.READONLY,             [0, 0, 0],  listIndexesCommand),
  row('search.query',           -3,  F.READONLY,             [0, 0, 0],  queryCommand),
  row('search.count',            3,  F.READONLY,             [0, 0, 0],  countCommand),
  row('search.aggregate',        4,  F.READONLY,             [0, 0, 0],  aggregateCommand),
  row('search.aliasadd',         3,  F.WRITE,                [0, 0, 0],  aliasAddCommand),
  row('search.aliasdel',         2,  F.WRITE,                [0, 0, 0],  aliasDelCommand),
  row('search.listaliases',      1,  F.READONLY,             [0, 0, 0],  listAliasesCommand),
]);
