/**
 * The search service's LMDB environment (<dir>/search), shared by the main thread (writes) and
 * the query workers (reads): document keys, namespace version counters, and the opening options
 * both sides must agree on.
 *
 * Layout:
 *   docs    key = utf8(indexId) 0x00 utf8(namespace) 0x00 utf8(docId)   value = {c: content, m?: metadata, e?: embedding}
 *   meta    'ver' + indexId + 0x00 + ns -> version (bumped on every write of a namespace: workers
 *           update their in-memory text index when it changes); 'log' + ... + version -> the
 *           ids that version changed (null after a reset); 'ns' ... -> 1 (namespace exists);
 *           'account' -> {email, apiKey} (generated management credentials)
 *   indexes indexId -> IndexRecord
 *   stats   indexId -> StatsRecord
 */
import { open, type RootDatabase, type Database } from 'lmdb';
import { openChecked } from '../store/datadir.js';
import path from 'node:path';
import type { Json } from './text.js';

/** c: content, m: metadata, e: embedding of the content (hybrid search only). */
export interface StoredDoc { c: Json; m?: Json; e?: number[] }

export interface SearchDb {
  env: RootDatabase;
  docs: Database<StoredDoc, Buffer>;
  meta: Database<unknown, string>;
  indexes: Database<unknown, string>;
  stats: Database<unknown, string>;
}

export function openSearchDb(dir: string, readOnly = false): SearchDb {
  const envDir = path.join(dir, 'search');
  // The main thread checks the file before mapping it (workers open it after, read-only).
  const env = readOnly
    ? open({ path: envDir, compression: false, maxDbs: 8, readOnly })
    : openChecked(envDir, () => open({ path: envDir, compression: false, maxDbs: 8, readOnly }));
  return {
    env,
    docs: env.openDB<StoredDoc, Buffer>({ name: 'docs', keyEncoding: 'binary' }),
    meta: env.openDB<unknown, string>({ name: 'meta' }),
    indexes: env.openDB<unknown, string>({ name: 'indexes' }),
    stats: env.openDB<unknown, string>({ name: 'stats' }),
  };
}

const SEP = Buffer.from([0]);

/** Key prefix of one namespace's documents (or of the whole index when ns is null). */
export function nsPrefix(id: string, ns: string | null): Buffer {
  const idB = Buffer.from(id);
  return ns === null ? Buffer.concat([idB, SEP]) : Buffer.concat([idB, SEP, Buffer.from(ns), SEP]);
}

export function docKey(id: string, ns: string, docId: string): Buffer {
  return Buffer.concat([nsPrefix(id, ns), Buffer.from(docId)]);
}

/** The first key after every key starting with prefix (for range ends). */
export function prefixEnd(prefix: Buffer): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i] < 0xff) { b[i]++; return b.subarray(0, i + 1); }
  }
  return Buffer.concat([b, Buffer.from([0xff, 0xff])]);
}

/** Split a document key into namespace and id (given the index id's prefix length). */
export function splitKey(key: Buffer, idLen: number): { ns: string; docId: string } {
  const rest = key.subarray(idLen + 1);
  const z = rest.indexOf(0);
  return { ns: rest.subarray(0, z).toString(), docId: rest.subarray(z + 1).toString() };
}

export const verKey = (id: string, ns: string) => `ver:${id}\u0000${ns}`;
/** Change log: the document ids a version of a namespace wrote or deleted (null: everything, a reset). */
export const logKey = (id: string, ns: string, version: number) => `log:${id}\u0000${ns}\u0000${String(version).padStart(12, '0')}`;
/** How many versions of change log a namespace keeps (older workers' caches rebuild). */
export const LOG_KEEP = 256;

export const nsKey = (id: string, ns: string) => `ns:${id}\u0000${ns}`;
