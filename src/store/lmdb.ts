/**
 * LmdbStore: the LMDB environment in the data directory and the write batches applied to it.
 *
 * Four named databases (see codec.ts for their layout): `meta` (one record per key), `items`
 * (one record per element of big collections), `gc` (ids waiting for background deletion) and
 * `sys` (format version, namespace table, id counter, and records of other subsystems such as
 * REST tokens and ACL users).
 *
 * Writes are lmdb-js asynchronous puts: the main thread encodes and queues them, the write
 * thread applies them. `write(fn)` wraps one batch in an lmdb-js block, which always lands in
 * a single transaction; the caller (persistence.ts) keeps at most one batch in flight, so
 * batches are applied in order and a failed one can be retried whole.
 *
 * Durability: LMDB flushes every commit (lmdb-js overlapping sync, which keeps the file
 * consistent even if the machine crashes mid-flush); `syncNow()` resolves once everything
 * committed so far is on disk. appendfsync always waits for it before acknowledging, everysec
 * does not (a process crash loses nothing committed, a machine crash at most the last moments).
 */
import { open, type RootDatabase, type Database } from 'lmdb';
import { pack, unpack } from 'msgpackr';
import {
  Slab, LONG, MAX_KEY, NS_BYTES, MetaView, stringMetaLen, writeStringMeta, decodeLongItem, decodeMeta, latin1Keys, sidPrefix, subKeys, type ItemRecord,
} from './codec.js';
import {
  FrameBuilder, forEachOp, OP_GC_DEL, OP_GC_PUT, OP_ITEM_DEL, OP_ITEM_PUT, OP_META_DEL, OP_META_PUT, OP_SYS_DEL, OP_SYS_PUT,
} from './journal.js';
import { openChecked } from './datadir.js';

export interface StoreStats {
  commits: number;
  puts: number;
  dels: number;
  bytes: number;
}

export class LmdbStore {
  readonly root: RootDatabase<any, any>;
  readonly meta: Database<Buffer, Buffer>;
  readonly items: Database<Buffer, Buffer>;
  readonly gc: Database<Buffer, Buffer>;
  readonly sys: Database<any, string>;
  /** `items` again, read for loading: keys come back as their sub-key alone (subKeys). */
  private readonly itemsLoad: Database<Buffer, Buffer>;
  /** `meta` again, read for loading: latin1 keys, values decoded in place (codec.ts). */
  private readonly metaLoad: Database<MetaView, string>;
  private readonly loadView = new MetaView();
  private readonly pointView = new MetaView();
  readonly slab = new Slab();
  /** Reusable key buffer: lmdb-js copies keys when a put is queued. */
  private readonly kbuf = Buffer.allocUnsafe(MAX_KEY + 16);
  readonly stats: StoreStats = { commits: 0, puts: 0, dels: 0, bytes: 0 };
  /**
   * When set (appendfsync always), put/del/putSys encode their record into this journal frame
   * instead of queueing it to LMDB; `applyFrame` gives LMDB the frame later.
   */
  rec: FrameBuilder | null = null;

  constructor(readonly path: string) {
    this.root = openChecked(path, () => openEnv(path));
    ({ meta: this.meta, items: this.items, gc: this.gc, sys: this.sys } = openDbs(this.root));
    this.itemsLoad = this.root.openDB('items', { encoding: 'binary', keyEncoder: subKeys } as any) as any;
    const view = this.loadView;
    this.metaLoad = this.root.openDB('meta', {
      keyEncoder: latin1Keys,
      encoder: {
        encode: (v: Buffer) => v,
        decode: (bytes: Buffer, size: number) => decodeMeta(bytes, size, view),
      },
    } as any) as any;
  }

  /**
   * Every metadata record of namespace `[start, end)` (prefix Buffers), in key order: `fn`
   * gets the LMDB key minus its namespace prefix, as latin1, and a decoded view valid until it
   * returns; `fn` returns false to stop there.
   */
  scanMeta(start: Buffer, end: Buffer, fn: (key: string, m: MetaView) => boolean): void {
    for (const { key, value } of this.metaLoad.getRange({ start: start as any, end: end as any })) if (!fn(key, value)) break;
  }

  /**
   * When every metadata record belongs to one namespace (the usual case: one database in use),
   * that namespace and the record count, without walking the records; else null.
   */
  soleNamespace(): { ns: number; count: number } | null {
    let first = -1;
    let last = -1;
    for (const k of this.meta.getKeys({ limit: 1 })) first = (k as Buffer).readUIntBE(0, NS_BYTES);
    for (const k of this.meta.getKeys({ reverse: true, limit: 1 })) last = (k as Buffer).readUIntBE(0, NS_BYTES);
    if (first !== last) return null;
    return { ns: first, count: first === -1 ? 0 : (this.meta.getStats() as { entryCount: number }).entryCount };
  }

  /** The metadata record under LMDB key `key`, decoded (valid until the next call), or undefined. */
  getMeta(key: Buffer): MetaView | undefined {
    const b = this.meta.get(key);
    return b === undefined ? undefined : decodeMeta(b, b.length, this.pointView);
  }

  /** The item records of object `sid`, in sub-key order, as owned copies. */
  scanItems(sid: number): Iterable<ItemRecord> {
    return this.itemsLoad.getRange({ start: sidPrefix(sid) as any, end: sidPrefix(sid + 1) as any })
      .map(({ key, value }) => (key.length === LONG ? decodeLongItem(value) : { sub: key, value }));
  }

  /**
   * The item records of object `sid` from LMDB key `from` (inclusive; null: the first), in
   * sub-key order: `fn` gets the stored sub-key (the short form of a long one, for resuming
   * after it) and the record's owned sub-key and value; it returns false to stop there.
   */
  scanItemsFrom(sid: number, from: Buffer | null, fn: (stored: Buffer, sub: Buffer, value: Buffer) => boolean): void {
    for (const { key, value } of this.itemsLoad.getRange({ start: (from ?? sidPrefix(sid)) as any, end: sidPrefix(sid + 1) as any })) {
      if (key.length === LONG) {
        const r = decodeLongItem(value);
        if (!fn(key, r.sub, r.value)) break;
      } else if (!fn(key, key, value)) break;
    }
  }

  /** Key scratch: fill `kbuf` with the returned writer, then pass its length to put/del. */
  get keyBuf(): Buffer {
    return this.kbuf;
  }

  // The writes below MUST be called inside `write(fn)`: they join its atomic block.

  put(db: Database<Buffer, Buffer>, klen: number, value: Buffer): void {
    const r = this.rec;
    if (r === null) {
      this.putKey(db, this.kbuf.subarray(0, klen), value);
      return;
    }
    // perf: into the frame from the scratch (a view of it per record: ~100 B of young garbage).
    this.stats.puts++;
    this.stats.bytes += klen + value.length;
    r.putFirst(this.putOp(db), this.kbuf, klen, value);
  }

  del(db: Database<Buffer, Buffer>, klen: number): void {
    const r = this.rec;
    if (r === null) {
      this.delKey(db, this.kbuf.subarray(0, klen));
      return;
    }
    this.stats.dels++;
    this.stats.bytes += klen;
    r.delFirst(this.delOp(db), this.kbuf, klen);
  }

  putKey(db: Database<Buffer, Buffer>, key: Buffer, value: Buffer): void {
    this.stats.puts++;
    this.stats.bytes += key.length + value.length;
    const r = this.rec;
    if (r === null) db.put(key, value);
    else r.put(this.putOp(db), key, value);
  }

  delKey(db: Database<Buffer, Buffer>, key: Buffer): void {
    this.stats.dels++;
    this.stats.bytes += key.length;
    const r = this.rec;
    if (r === null) db.remove(key);
    else r.del(this.delOp(db), key);
  }

  /** The journal op of a put into / a delete from `db`. */
  private putOp(db: Database<Buffer, Buffer>): number {
    return db === this.meta ? OP_META_PUT : db === this.items ? OP_ITEM_PUT : OP_GC_PUT;
  }

  private delOp(db: Database<Buffer, Buffer>): number {
    return db === this.meta ? OP_META_DEL : db === this.items ? OP_ITEM_DEL : OP_GC_DEL;
  }

  /**
   * Journal mode (`rec` set): a string key's metadata record written straight into the frame,
   * without the record and key Buffers of put(). False when not applicable (no frame, long key):
   * the caller uses encodeString + put.
   */
  putStringMeta(ns: number, key: string, exp: number, v: Uint8Array | string | number): boolean {
    const r = this.rec;
    if (r === null || key.length >= LONG) return false;
    const s = typeof v === 'number' ? String(v) : v;
    const kl = NS_BYTES + key.length;
    const vl = stringMetaLen(key, exp, s);
    const at = r.reserve(OP_META_PUT, kl, vl); // may grow the buffer: take it after
    writeStringMeta(r.buffer, at, ns, key, exp, s);
    this.stats.puts++;
    this.stats.bytes += kl + vl;
    return true;
  }

  putSys(name: string, value: unknown): void {
    this.stats.puts++;
    const r = this.rec;
    if (r !== null) {
      const k = Buffer.from(name, 'utf8');
      if (value === undefined) r.del(OP_SYS_DEL, k);
      else r.put(OP_SYS_PUT, k, pack(value));
    } else if (value === undefined) this.sys.remove(name);
    else this.sys.put(name, value);
  }

  /**
   * Queue the records of a journal frame (inside `write(fn)`), or write them synchronously
   * (`sync`, inside a `transactionSync`: start-up replay).
   */
  applyFrame(frame: Buffer, sync: boolean): void {
    applyFrameTo(this, frame, sync);
  }

  /** Run `fn` in one synchronous write transaction (start-up only). */
  transactionSync(fn: () => void): void {
    this.root.transactionSync(fn);
  }

  getSys<V = unknown>(name: string): V | undefined {
    return this.sys.get(name) as V | undefined;
  }

  /**
   * Run `fn` (which calls put/del/putSys) as one atomic block of writes: lmdb-js never splits a
   * block across transactions, whereas plain event-turn batching may split a turn with big
   * values. Resolves when the block is committed (visible; durable only after `syncNow`);
   * rejects with the LMDB / OS error (errno in `code`) if the transaction failed.
   */
  write(fn: () => void): Promise<void> {
    this.stats.commits++;
    const p = this.root.batch(fn) as Promise<unknown>;
    return p.then(noop, commitFailure);
  }

  /**
   * Resolves when everything committed so far is on disk (LMDB flushes after each commit on
   * its own; this waits for that flush).
   */
  syncNow(): Promise<void> {
    return Promise.resolve(this.root.flushed).then(noop);
  }

  /** Make the next reads see the latest committed transaction. */
  refreshReads(): void {
    this.root.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

function noop(): void {}

/**
 * The data directory's LMDB environment (also opened by the journal applier's thread,
 * apply-worker.ts: lmdb-js shares one environment per path within the process, so the options
 * must be the same).
 */
export function openEnv(path: string): RootDatabase<any, any> {
  return open({
    path,
    maxDbs: 8,
    // Overlapping sync keeps the file consistent even across a power loss. everysec simply
    // does not wait for the flush (noSync was measured no faster, and can corrupt the file
    // on a machine crash).
    overlappingSync: true,
    // Batches are explicit blocks (write()); lmdb-js's own event-turn batching would wrap
    // them in a transaction promise nobody handles when a commit fails.
    eventTurnBatching: false,
    // Our own encodings: keys and values are bytes.
    encoding: 'binary',
    keyEncoding: 'binary',
  } as any);
}

/** The four named databases a journal frame writes to. */
export interface FrameDbs {
  meta: Database<Buffer, Buffer>;
  items: Database<Buffer, Buffer>;
  gc: Database<Buffer, Buffer>;
  sys: Database<any, string>;
}

export function openDbs(root: RootDatabase<any, any>): FrameDbs {
  const bin = { encoding: 'binary', keyEncoding: 'binary' } as const;
  return {
    meta: root.openDB('meta', bin) as any,
    items: root.openDB('items', bin) as any,
    gc: root.openDB('gc', bin) as any,
    sys: root.openDB('sys', { encoding: 'msgpack' }) as any,
  };
}

/**
 * Queue the records of a journal frame (inside an lmdb-js block), or write them synchronously
 * (`sync`, inside a `transactionSync`: start-up replay, the applier thread).
 */
export function applyFrameTo(dbs: FrameDbs, frame: Buffer, sync: boolean): void {
  forEachOp(frame, (op, key, value) => {
    if (op === OP_SYS_PUT || op === OP_SYS_DEL) {
      const name = key.toString('utf8');
      if (value === null) {
        if (sync) dbs.sys.removeSync(name);
        else dbs.sys.remove(name);
      } else if (sync) dbs.sys.putSync(name, unpack(value));
      else dbs.sys.put(name, unpack(value));
      return;
    }
    const db = op <= OP_META_DEL ? dbs.meta : op <= OP_ITEM_DEL ? dbs.items : dbs.gc;
    if (value === null) {
      if (sync) db.removeSync(key);
      else db.remove(key);
    } else if (sync) db.putSync(key, value);
    else db.put(key, value);
  });
}

/**
 * lmdb-js rejects every write of a failed transaction with a generic error whose
 * `commitError` promise rejects with the real one (errno in `code`): surface that one (and
 * handle it, or it becomes an unhandled rejection).
 */
function commitFailure(err: unknown): Promise<never> {
  const ce = (err as { commitError?: Promise<unknown> } | null)?.commitError;
  if (ce === undefined || typeof ce.then !== 'function') return Promise.reject(err);
  return Promise.resolve(ce).then(() => Promise.reject(err), (real) => Promise.reject(real));
}
