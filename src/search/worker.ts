/**
 * Piscina worker of the search service: runs full-text queries and filter scans off the main
 * thread (which also serves Redis commands), reading documents straight from LMDB. Each worker
 * keeps one in-memory text index per namespace and rebuilds it when the namespace's version
 * counter in LMDB has moved (the main thread bumps it on every write): by replaying the change
 * log of the versions in between when it can, by reading the namespace again otherwise.
 */
import { workerData } from 'node:worker_threads';
import { openSearchDb, nsPrefix, prefixEnd, verKey, logKey, docKey } from './store.js';
import { TextIndex, parseFilter, unit, type Doc, type Filter, type Json, type Semantic } from './text.js';
import type { StoredDoc } from './store.js';

const toDoc = (id: string, v: StoredDoc): Doc => ({ id, content: v.c, metadata: v.m, vec: v.e === undefined ? undefined : unit(v.e) });

const db = openSearchDb((workerData as { dir: string }).dir, true);

interface Cached { version: number; index: TextIndex }
const cache = new Map<string, Cached>();

let tasks = 0;

/** Drop cached text indexes of search indexes deleted since (each worker has its own cache). */
function evictDeleted(): void {
  for (const k of cache.keys()) {
    if (!db.indexes.doesExist(k.slice(0, k.indexOf('\u0000')))) cache.delete(k);
  }
}

function load(id: string, ns: string): TextIndex {
  const key = `${id}\u0000${ns}`;
  const version = (db.meta.get(verKey(id, ns)) as number | undefined) ?? 0;
  const hit = cache.get(key);
  if (hit !== undefined && hit.version === version) return hit.index;
  if (hit !== undefined && hit.version < version && catchUp(hit, id, ns, version)) return hit.index;
  const index = new TextIndex();
  const prefix = nsPrefix(id, ns);
  for (const { key: k, value } of db.docs.getRange({ start: prefix, end: prefixEnd(prefix) })) {
    index.add(toDoc(k.subarray(prefix.length).toString(), value));
  }
  cache.set(key, { version, index });
  return index;
}

/**
 * Apply the namespace's change log (ids written or deleted per version) to a cached index
 * instead of rebuilding it. False when a rebuild is due: a reset, a log entry already pruned,
 * or too many tombstones.
 */
function catchUp(c: Cached, id: string, ns: string, version: number): boolean {
  const changed = new Set<string>();
  for (let v = c.version + 1; v <= version; v++) {
    const ids = db.meta.get(logKey(id, ns, v)) as string[] | null | undefined;
    if (ids === undefined || ids === null) return false;
    for (const d of ids) changed.add(d);
  }
  if (c.index.deadCount + changed.size > 1000 + c.index.size / 4) return false;
  for (const docId of changed) {
    const v = db.docs.get(docKey(id, ns, docId));
    if (v === undefined) c.index.remove(docId);
    else c.index.add(toDoc(docId, v));
  }
  c.version = version;
  return true;
}

export interface SearchTask {
  op: 'search'; id: string; ns: string; query: string; topK: number; filter: string | null; data: boolean; metadata: boolean;
  /** The query's embedding and semanticWeight (hybrid search), or null (full-text only). */
  semantic: { vec: number[]; weight: number } | null;
}
export interface FilterTask { op: 'filter'; id: string; ns: string; filter: string }

export interface SearchResult { id: string; content?: Json; metadata?: Json; score: number }

/** Errors travel as values: a thrown error would lose its kind across the thread boundary. */
export default function run(task: SearchTask | FilterTask): { error: string } | { hits: SearchResult[] } | { ids: string[] } {
  try {
    // lmdb-js keeps a read snapshot until a timer renews it: take a fresh one so a query sees
    // every write the main thread committed before sending it.
    db.env.resetReadTxn();
    if (++tasks % 256 === 0) evictDeleted();
    const filter: Filter | null = task.filter ? parseFilter(task.filter) : null;
    const index = load(task.id, task.ns);
    if (task.op === 'filter') return { ids: [...index.live()].filter((d: Doc) => filter!(d)).map((d) => d.id) };
    const semantic: Semantic | null = task.semantic === null ? null : { vec: unit(task.semantic.vec), weight: task.semantic.weight };
    const hits = index.search(task.query, task.topK, filter, semantic).map((h) => {
      const r: SearchResult = { id: h.doc.id, score: h.score };
      if (task.data) r.content = h.doc.content;
      if (task.metadata && h.doc.metadata !== undefined) r.metadata = h.doc.metadata;
      return r;
    });
    return { hits };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
