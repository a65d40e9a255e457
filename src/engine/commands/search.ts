/**
 * Upstash Redis Search: the SEARCH.* commands (not RediSearch's FT.*). Indexes are views of
 * the keys under their prefixes, kept in sync through the keyspace change hook; the index
 * machinery lives in ../search-index/. Queries, counts, aggregations and WAITINDEXING run in
 * the search worker thread: the client waits (as in a blocking command) while others are
 * served; inside MULTI/EXEC, scripts and REST the engine thread waits for the answer.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { family, type Prefetch, row } from '../command.js';
import { parseCreate, sameDefinition, SchemaError } from '../search-index/schema.js';
import { registryOf } from '../search-index/registry.js';
import { mark, type Highlight } from '../search-index/highlight.js';
import type { Feed } from '../search-index/feed.js';
import type { Kind, Result } from '../search-index/exec.js';
import { type RV, writeRV } from '../search-index/aggregate.js';
import { globMatch } from '../glob.js';

/** Indexes per server: every write under a prefix is checked against each of them. */
const MAX_INDEXES = 1000;

function fail(out: ReplySink, err: unknown): void {
  if (err instanceof SchemaError) out.error(err.message);
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

/**
 * Send a request about the index argv[1] names (or aliases) to the search worker and reply with
 * `write` once answered; `none` replies when there is no such index.
 */
function ask(c: Client, argv: Argv, kind: Kind, none: () => void, write: (feed: Feed, r: Result) => void, rebuild = false): void {
  const reg = registryOf(c.engine);
  const feed = reg.resolve(argv.key(1));
  if (feed === undefined) {
    none();
    return;
  }
  if (rebuild) reg.rebuild(feed);
  const args = kind === 'wait' ? null : argv;
  if (c.transport.kind !== 'tcp' || c.engine.inExec) {
    // The command completes in its turn (EXEC, a script, a REST request): with the answer
    // fetched ahead for this REST request, or waiting for the worker.
    const pre = prefetched;
    prefetched = null;
    write(feed, pre !== null && pre.feed === feed && pre.kind === kind && !c.engine.inExec ? pre.r : reg.requestSync(feed, kind, args));
    return;
  }
  c.blocked = true;
  reg.request(feed, kind, args, (r) => {
    c.blocked = false;
    if (c.closed) return;
    write(feed, r);
    c.transport.requestFlush();
    c.transport.resume();
  });
}

/** The worker's answer for the REST request being executed (see prefetchFor). */
let prefetched: { feed: Feed; kind: Kind; r: Result } | null = null;

const ARITY_OK: Record<Kind, (n: number) => boolean> = { wait: (n) => n === 2, query: (n) => n >= 3, count: (n) => n === 3, aggregate: (n) => n === 4 };

/** REST: send the request to the worker first, execute the command once it answered. */
function prefetchFor(kind: Kind): Prefetch {
  return (c, argv, ready) => {
    if (!ARITY_OK[kind](argv.count)) return false; // the handler gives the arity error
    const reg = registryOf(c.engine);
    const feed = reg.resolve(argv.key(1));
    if (feed === undefined) return false;
    reg.request(feed, kind, kind === 'wait' ? null : argv, (r) => {
      prefetched = { feed, kind, r };
      try {
        ready();
      } finally {
        prefetched = null;
      }
    });
    return true;
  };
}

/** A worker reply that is an error: written; true. */
function isError(out: ReplySink, r: Result): boolean {
  if (!('err' in r)) return false;
  out.error(r.err);
  return true;
}

// SEARCH.WAITINDEXING name|alias: every write acknowledged before it becomes visible.
function waitIndexingCommand(c: Client, argv: Argv, out: ReplySink): void {
  ask(c, argv, 'wait', () => out.int(0), (_f, r) => { if (!isError(out, r)) out.int(1); });
}

// SEARCH.REINDEX name|alias: rebuild the contents from the keyspace.
function reindexCommand(c: Client, argv: Argv, out: ReplySink): void {
  ask(c, argv, 'wait', () => out.int(0), (_f, r) => { if (!isError(out, r)) out.int(1); }, true);
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

// SEARCH.QUERY name|alias filter [LIMIT n] [OFFSET n] [NOCONTENT] [SELECT n f...] [ORDERBY f [ASC|DESC]]
function queryCommand(c: Client, argv: Argv, out: ReplySink): void {
  ask(c, argv, 'query', () => out.nil(), (feed, res) => {
    if (isError(out, res)) return;
    const r = res as Extract<Result, { keys: string[] }>;
    const db = c.engine.dbs[feed.def.db];
    const hl = r.highlight;
    out.array(r.keys.length);
    for (let i = 0; i < r.keys.length; i++) {
      const key = r.keys[i];
      out.array(r.noContent ? 2 : 3);
      out.bulkLatin1(feed.replyKey(key));
      out.bulkText(String(r.scores[i]));
      if (r.noContent) continue;
      const pairs = feed.content(db, key, r.select);
      if (hl !== null) highlightPairs(pairs, feed, hl, r.terms!);
      out.array(pairs.length);
      for (const [f, v] of pairs) {
        out.array(2);
        out.bulkText(f);
        out.bulkText(v);
      }
    }
  });
}

/** Mark the matched words of the highlighted fields in reply pairs (JSON values are re-serialized). */
function highlightPairs(pairs: [string, string][], idx: Feed, h: Highlight, terms: Map<number, Set<string>>): void {
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

// SEARCH.COUNT name|alias filter
function countCommand(c: Client, argv: Argv, out: ReplySink): void {
  ask(c, argv, 'count', () => out.nil(), (_f, r) => { if (!isError(out, r)) out.int((r as { n: number }).n); });
}

// SEARCH.AGGREGATE name|alias filter aggregations
function aggregateCommand(c: Client, argv: Argv, out: ReplySink): void {
  ask(c, argv, 'aggregate', () => out.nil(), (_f, r) => { if (!isError(out, r)) writeRV(out, (r as { rv: RV[] }).rv); });
}

export default family('search', [], [
  //   name                   arity  flags                   keys        handler
  row('search.create',          -4,  F.WRITE,                [0, 0, 0],  createCommand),
  row('search.drop',             2,  F.WRITE,                [0, 0, 0],  dropCommand),
  row('search.describe',         2,  F.READONLY,             [0, 0, 0],  describeCommand),
  row('search.waitindexing',     2,  F.READONLY,             [0, 0, 0],  waitIndexingCommand, { prefetch: prefetchFor('wait') }),
  row('search.reindex',          2,  F.WRITE,                [0, 0, 0],  reindexCommand),
  row('search.listindexes',     -1,  F.READONLY,             [0, 0, 0],  listIndexesCommand),
  row('search.query',           -3,  F.READONLY,             [0, 0, 0],  queryCommand, { prefetch: prefetchFor('query') }),
  row('search.count',            3,  F.READONLY,             [0, 0, 0],  countCommand, { prefetch: prefetchFor('count') }),
  row('search.aggregate',        4,  F.READONLY,             [0, 0, 0],  aggregateCommand, { prefetch: prefetchFor('aggregate') }),
  row('search.aliasadd',         3,  F.WRITE,                [0, 0, 0],  aliasAddCommand),
  row('search.aliasdel',         2,  F.WRITE,                [0, 0, 0],  aliasDelCommand),
  row('search.listaliases',      1,  F.READONLY,             [0, 0, 0],  listAliasesCommand),
]);
