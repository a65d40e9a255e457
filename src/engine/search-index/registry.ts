/**
 * The SEARCH.* indexes and aliases of one engine. The contents of the indexes live in a worker
 * thread (worker.ts); this side keeps each index's definition and its feed (feed.ts), notes the
 * keys written under an index's prefixes through the engine's change listeners (registered when
 * the first index appears: no cost before), and once per turn of the event loop encodes their
 * current values into one batch posted to the worker. Requests (queries, counts, aggregations,
 * WAITINDEXING) are posted after the pending batch, so they see every write acknowledged before
 * them; their replies come back asynchronously, or, where a command must complete in its turn
 * (MULTI/EXEC, scripts, REST), the engine thread sleeps in Atomics.wait for them.
 *
 * Definitions are kept in <dir>/search-indexes.json when persistence is on. Contents are not
 * stored: after a restart each index is rebuilt from the keyspace on first use.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads';
import type { Db, Entry } from '../db.js';
import type { Engine, KeyspaceListener } from '../engine.js';
import type { Argv } from '../../resp/argv.js';
import { Batch, Feed } from './feed.js';
import type { Kind, Result } from './exec.js';
import type { FromWorker, ToWorker } from './worker.js';
import { defFromJson, type IndexDef } from './schema.js';

/**
 * Pending keys beyond which an index is rescanned whole instead: this many, or the number of
 * keys in the database if larger (the set holds keys that exist or were just written; a rescan
 * of a large keyspace costs more than applying a burst of its size).
 */
const MAX_DIRTY = 65_536;
const FILE = 'search-indexes.json';
/** Batches smaller than this are copied into a buffer of their size; larger ones are handed over whole. */
const SMALL_BATCH = 1 << 16;
/** A synchronous request waits at most this long for the worker (it may be indexing a rescan). */
const SYNC_TIMEOUT_MS = 120_000;

export class SearchRegistry implements KeyspaceListener {
  readonly indexes = new Map<string, Feed>();
  readonly aliases = new Map<string, string>();
  private listening = false;
  private readonly file: string | null;
  private nextId = 1;
  private nextRid = 1;
  private worker: Worker | null = null;
  private syncPort: MessagePort | null = null;
  /** [0]: the worker answered a synchronous request; [1]: the worker thread has exited. */
  private readonly cell = new Int32Array(new SharedArrayBuffer(8));
  private readonly pending = new Map<number, (r: Result) => void>();
  private readonly batch = new Batch();
  private scheduled = false;
  private readonly flushNow = (): void => { this.scheduled = false; this.flush(); };
  private readonly spill = (): void => this.flush();

  constructor(private readonly eng: Engine) {
    const mode = eng.config.get('appendfsync');
    const dir = eng.config.get('dir');
    this.file = (mode === 'always' || mode === 'everysec') && dir ? path.join(dir, FILE) : null;
    this.load();
  }

  /** An index by name or alias. */
  resolve(name: string): Feed | undefined {
    return this.indexes.get(name) ?? this.indexes.get(this.aliases.get(name) ?? '');
  }

  add(def: IndexDef, scan: boolean): Feed {
    const feed = new Feed(def, this.nextId++);
    this.indexes.set(def.name, feed);
    if (!this.listening) {
      this.listening = true;
      this.eng.addListener(this);
    }
    this.post({ t: 'create', id: feed.id, def });
    const db = this.eng.dbs[def.db];
    if (scan) {
      feed.scan(db, this.eng.now, this.batch, this.spill);
      this.schedule();
    } else {
      feed.skipExisting(db);
    }
    this.save();
    return feed;
  }

  drop(name: string): boolean {
    // Aliases stay (the reference lists dangling aliases): one may be re-pointed or recreated.
    const feed = this.indexes.get(name);
    if (feed === undefined) return false;
    this.indexes.delete(name);
    this.post({ t: 'drop', id: feed.id });
    this.save();
    return true;
  }

  /** REINDEX: rebuild the contents from the keyspace before the next request. */
  rebuild(feed: Feed): void {
    feed.stale = true;
  }

  /** 1: a new alias, 2: an existing one (re)pointed. */
  setAlias(alias: string, name: string): number {
    const existed = this.aliases.has(alias);
    this.aliases.set(alias, name);
    this.save();
    return existed ? 2 : 1;
  }

  delAlias(alias: string): boolean {
    if (!this.aliases.delete(alias)) return false;
    this.save();
    return true;
  }

  // ---------------------------------------------------------------- requests to the worker

  /**
   * Ask the worker (after every pending write): `done` gets the result in a later turn. argv
   * is copied (the request outlives the handler); null for none.
   */
  request(feed: Feed, kind: Kind, argv: Argv | null, done: (r: Result) => void): void {
    const rid = this.nextRid++;
    this.pending.set(rid, done);
    this.send(feed, kind, argv, rid, false);
  }

  /** The same, blocking the engine thread until the worker answers. */
  requestSync(feed: Feed, kind: Kind, argv: Argv | null): Result {
    const rid = this.nextRid++;
    Atomics.store(this.cell, 0, 0);
    this.send(feed, kind, argv, rid, true);
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    for (;;) {
      const m = receiveMessageOnPort(this.syncPort!);
      if (m !== undefined) {
        const reply = m.message as FromWorker;
        if (reply.rid === rid) return reply.r;
        continue; // an answer to a request abandoned after a timeout
      }
      if (Atomics.load(this.cell, 1) === 1) return { err: 'ERR search worker stopped' };
      const left = deadline - Date.now();
      if (left <= 0) return { err: 'ERR search worker did not answer in time' };
      Atomics.wait(this.cell, 0, 0, left);
      Atomics.store(this.cell, 0, 0);
    }
  }

  private send(feed: Feed, kind: Kind, argv: Argv | null, rid: number, sync: boolean): void {
    const db = this.eng.dbs[feed.def.db];
    if (feed.stale) {
      this.flush();
      this.post({ t: 'clear', id: feed.id });
      feed.stale = false;
      feed.scan(db, this.eng.now, this.batch, this.spill);
    } else if (feed.def.on === 'STREAM') {
      // Always: a cheap check that also sees a TTL that ran out without a write.
      feed.flush(db, this.eng.now, this.batch);
    }
    let args = null;
    if (argv !== null) {
      const a = argv.clone();
      args = { buf: a.buf, start: a.start.slice(0, a.count), end: a.end.slice(0, a.count), count: a.count };
    }
    this.post({ t: 'req', rid, id: feed.id, kind, args, now: this.eng.now, sync });
  }

  /** Post a message after the pending batch (the worker applies them in order). */
  private post(m: ToWorker): void {
    this.flush();
    this.ensureWorker().postMessage(m);
  }

  private ensureWorker(): Worker {
    if (this.worker !== null) return this.worker;
    const ch = new MessageChannel();
    Atomics.store(this.cell, 1, 0);
    const w = new Worker(new URL('./worker.js', import.meta.url), { workerData: { syncPort: ch.port2, cell: this.cell }, transferList: [ch.port2] });
    w.unref();
    w.on('message', (m: FromWorker) => {
      const done = this.pending.get(m.rid);
      if (done === undefined) return;
      this.pending.delete(m.rid);
      done(m.r);
    });
    w.on('error', (e) => console.error('search worker error:', e));
    w.on('exit', () => {
      if (this.worker !== w) return;
      // Start again on next use, every index rebuilt from the keyspace; waiting clients get an error.
      this.worker = null;
      this.syncPort = null;
      const waiting = [...this.pending.values()];
      this.pending.clear();
      for (const done of waiting) done({ err: 'ERR search worker stopped' });
      for (const f of this.indexes.values()) f.stale = true;
      this.recreate = true;
    });
    this.worker = w;
    this.syncPort = ch.port1;
    if (this.recreate) {
      this.recreate = false;
      for (const f of this.indexes.values()) w.postMessage({ t: 'create', id: f.id, def: f.def } satisfies ToWorker);
    }
    return w;
  }

  private recreate = false;

  /** Encode the pending keys of every index into one batch and post it. */
  flush(): void {
    const b = this.batch;
    for (const feed of this.indexes.values()) {
      if (feed.dirty.size !== 0 && !feed.stale) feed.flush(this.eng.dbs[feed.def.db], this.eng.now, b);
    }
    if (b.n === 0) return;
    let ab: ArrayBuffer;
    const len = b.n;
    if (len < SMALL_BATCH) {
      ab = b.buf.buffer.slice(b.buf.byteOffset, b.buf.byteOffset + len) as ArrayBuffer;
      b.n = 0;
    } else {
      ab = b.take().ab;
    }
    this.ensureWorker().postMessage({ t: 'batch', ab, len } satisfies ToWorker, [ab]);
  }

  // ---------------------------------------------------------------- keyspace listener

  keyChanged(db: Db, key: string, e?: Entry): void {
    for (const feed of this.indexes.values()) {
      if (feed.def.db !== db.index || feed.stale || !feed.covers(key)) continue;
      feed.dirty.set(key, e);
      if (feed.dirty.size > MAX_DIRTY && feed.dirty.size > db.loadedSize) { feed.stale = true; feed.dirty.clear(); }
      this.schedule();
    }
  }

  /** Post the batch at the end of this turn of the event loop. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flushNow).unref();
  }

  /** DEBUG RELOAD: the keyspace came back without change signals; rebuild on next use. */
  reloaded(): void {
    for (const feed of this.indexes.values()) feed.stale = true;
  }

  flushed(db: Db): void {
    for (const feed of this.indexes.values()) {
      if (feed.def.db !== db.index) continue;
      feed.dirty.clear();
      feed.reset();
      feed.stale = false;
      this.post({ t: 'clear', id: feed.id });
    }
  }

  swapped(a: Db, b: Db): void {
    for (const feed of this.indexes.values()) if (feed.def.db === a.index || feed.def.db === b.index) feed.stale = true;
  }

  // ---------------------------------------------------------------- definitions on disk

  private load(): void {
    if (this.file === null) return;
    let data: unknown;
    try {
      data = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') console.error(`search: cannot read ${this.file}: ${(err as Error).message}`);
      return;
    }
    const o = data as { indexes?: unknown[]; aliases?: unknown[] };
    for (const x of Array.isArray(o.indexes) ? o.indexes : []) {
      const def = defFromJson(x);
      if (def === null || def.db < 0 || def.db >= this.eng.dbs.length) continue;
      const feed = new Feed(def, this.nextId++);
      feed.stale = true; // contents are rebuilt from the keyspace on first use
      this.indexes.set(def.name, feed);
      this.recreate = true;
    }
    for (const a of Array.isArray(o.aliases) ? o.aliases : []) {
      if (Array.isArray(a) && typeof a[0] === 'string' && typeof a[1] === 'string') this.aliases.set(a[0], a[1]);
    }
    if (this.indexes.size > 0) {
      this.listening = true;
      this.eng.addListener(this);
    }
  }

  private save(): void {
    if (this.file === null) return;
    const data = JSON.stringify({
      version: 1,
      indexes: [...this.indexes.values()].map((i) => i.def),
      aliases: [...this.aliases],
    });
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, this.file);
  }
}

const REGISTRIES = new WeakMap<Engine, SearchRegistry>();

export function registryOf(eng: Engine): SearchRegistry {
  let r = REGISTRIES.get(eng);
  if (r === undefined) {
    r = new SearchRegistry(eng);
    REGISTRIES.set(eng, r);
  }
  return r;
}
