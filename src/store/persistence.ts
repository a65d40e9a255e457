/**
 * Persistence: keeps LMDB in step with the keyspace (the engine-side half of src/store).
 *
 * It listens to every change (Db.modified, flush, swap) and remembers WHICH keys changed, per
 * database, not how. When a batch is written it encodes the current state of each changed
 * key: a key changed many times in one turn is written once, and a deleted key becomes a
 * delete. Batches are strictly sequential: at most one is in flight; changes made meanwhile
 * accumulate and go out together when it completes (group commit).
 *
 *   appendfsync always    each event-loop turn's batch is one journal frame, written durably
 *                         on the main thread at the end of the turn; replies that depend on it
 *                         are held by the transport (CommitGate) until then, and go out in
 *                         that turn.
 *   appendfsync everysec  each 100 ms batch is one journal frame, written without waiting
 *                         for the disk (a killed process loses at most those 100 ms); the
 *                         journal is synced every second (a machine crash loses about a
 *                         second). Replies never wait.
 *   Both: the journal applier gives LMDB the frames every 5 seconds (or 8 MB), in
 *   transactions of up to 2 MB, so a B-tree page rewritten by many batches is written once.
 *   appendfsync no        nothing is opened or written (MemoryOnly below).
 *
 * Failures (disk full, read-only file system...): the batch's keys go back to the dirty sets,
 * `engine.writeDenied` makes write commands answer MISCONF, reads keep working, and the batch
 * is retried every second until a commit succeeds. LMDB never applies half a transaction.
 *
 * FLUSHDB / FLUSHALL / SWAPDB rewrite only the namespace table (codec.ts); dropped collections
 * and dead namespaces are deleted in the background by small GC steps of the journal applier.
 */
import fs from 'node:fs';
import path from 'node:path';
import { storedFrom, type Db, type Entry, type TypedValue } from '../engine/db.js';
import { REMOVED } from '../engine/keytable.js';
import type { CommitGate, Engine, HeldOutput, KeyspaceListener, PersistenceApi } from '../engine/engine.js';
import {
  MF, MetaView, codecFor, decodeMeta, encodeLongItem, encodeRecordsMeta, encodeString,
  encodeWholeMeta, idKey, isStored, itemKey, loadRecords, metaKey, nsPrefix, sidPrefix,
  type ItemWriter, type StoredValue, SID_BYTES, LONG,
} from './codec.js';
import { LmdbStore } from './lmdb.js';
import { Loader, type LoadTarget } from './loader.js';
import { DirLock } from './lock.js';
import { FrameBuilder, Journal, frameSeq, scanJournal, truncateJournal } from './journal.js';
import { DataDirError, journalProblem, repairHint } from './datadir.js';
import { APPLY_WORKER, ApplyThread } from './apply-thread.js';

/** Changed keys of one database, with their live entry when known (Persistence.dirty). */
type DirtyKeys = Map<string, Entry | undefined>;

function traceStall(what: string, t0: number, bytes: number): void {
  const ms = performance.now() - t0;
  if (ms >= TRACE_STALLS) console.error(`store: ${what} of ${bytes} bytes took ${ms.toFixed(1)} ms`);
}

/** On-disk format version (sys 'format'). */
const FORMAT = 1;
/** Records deleted per GC step (bounds the main-thread time a step takes). */
const GC_STEP = 1000;
/** Retry delay after a failed commit, as Redis retries a failed AOF write once a second. */
const RETRY_MS = 1000;
/** everysec: changes accumulate this long before one LMDB commit (a SIGKILL loses at most that). */
const EVERYSEC_BATCH_MS = 100;
/**
 * everysec: a database with this many changed keys has its batch written at the end of the
 * turn instead of after the rest of the 100 ms: encoding a batch is one synchronous turn, and
 * a bulk load (redis-cli --pipe) changes ~100,000 keys in 100 ms, a 100-300 ms stall for every
 * other client. A batch is still whole turns (at least one turn's changes, however many), so
 * a transaction (MULTI, a script) stays in one frame.
 */
const EVERYSEC_BATCH_KEYS = Number(process.env.REDSTASH_BATCH_KEYS ?? 1024); // REDSTASH_BATCH_KEYS: A/B runs
/** REDSTASH_TRACE_STALLS=<ms>: log every store turn (batch encoding, apply queueing) at least that long. */
const TRACE_STALLS = Number(process.env.REDSTASH_TRACE_STALLS ?? 0) || 0;
/**
 * Journal frames are applied to LMDB this often, or once this many bytes wait. Rarely: a
 * commit rewrites every B-tree page its records touch and flushes them, and under random
 * writes that is most pages whatever the batch's length, so fewer commits write far less
 * (SET of 100,000 random keys with always: 1 s -> 5 s took our CPU from 27-28 to 24-26 us per
 * command and throughput from 0.62-0.66x to 0.81-0.94x of Redis, whose fsyncs then compete
 * less with LMDB's flush). The bytes bound what a restart after a crash replays before it
 * answers: 8 MB of 50-byte SETs of random keys, about 0.6 s here (16 MB took 1.3 s).
 */
const APPLY_MS = 5000;
const APPLY_BYTES = 8 * 1024 * 1024;
/**
 * Frames per LMDB transaction at most, in bytes: the main thread queues a transaction's
 * records in one turn, 25-70 ms per MB measured, during which no command is served (4 MB
 * chunks gave worst latencies of 100-290 ms under saturating writes). Smaller transactions
 * each rewrite the pages they touch again: 2 MB is the compromise.
 */
const APPLY_CHUNK = 2 * 1024 * 1024;
/**
 * ...and within APPLY_TURN_MS: the chunk follows the cost per byte the last queueing turns
 * measured (25-70 ms per MB on a quiet machine, several times that on a loaded one), down to
 * APPLY_CHUNK_MIN (0: one frame, the atomic unit, never split), so that the applier never holds
 * the event loop much longer than a GC step (issue 21: another client's PING max <= 50 ms during
 * a bulk load). 5 ms turns paid a little in the fairness bench (bench/RESULTS-persist.md) but
 * made test/store/fault.test.ts's appendfsync always disk-full case fail (a REST write
 * acknowledged beside a held one; not analysed yet), so 20 ms stays.
 */
const APPLY_TURN_MS = Number(process.env.REDSTASH_APPLY_TURN_MS ?? 20); // 0: a fixed APPLY_CHUNK (A/B runs)
const APPLY_CHUNK_MIN = Number(process.env.REDSTASH_APPLY_CHUNK_MIN ?? 0);
/**
 * The first transaction's size, before any turn was measured: a 2 MB start took 0.9 s of one
 * turn during a bulk load on a loaded machine (bench/RESULTS-persist.md, perf-fair2).
 */
const APPLY_CHUNK_START = Number(process.env.REDSTASH_APPLY_CHUNK_START ?? 256 * 1024);
/** REDSTASH_APPLY_SHRINK=0: the old halfway step down as well as up (A/B runs). */
const APPLY_SHRINK_AT_ONCE = process.env.REDSTASH_APPLY_SHRINK !== '0';
/** Growth per turn at most (REDSTASH_APPLY_GROW; 0: unbounded, halfway to the fit). */
const APPLY_GROW = Number(process.env.REDSTASH_APPLY_GROW ?? 1.25);
/**
 * Frames per transaction of the applier's thread (apply-worker.ts) at most: no turn of the main
 * thread depends on it, and fewer, bigger transactions rewrite fewer B-tree pages.
 */
const APPLY_CHUNK_THREAD = 16 * 1024 * 1024;
/** always: a journal file this big is closed and a new one started (the old one goes once LMDB has it). */
const ROTATE_BYTES = 8 * 1024 * 1024;

/**
 * Bulk keys (an RDB import: keysAdded) written per batch at most, in main-thread time: the
 * import's million keys go out in many small frames between commands instead of one frame
 * that held the event loop (and a million-key Set) for tens of seconds.
 */
const BULK_BATCH_MS = 10;

/** always: most extra non-blocking polls before a journal write (runScheduled). */
const EXTRA_POLLS = 1;

const GC_NS = 0x6e; // 'n': a dead namespace (every meta record under it)
const GC_OBJ = 0x6f; // 'o': a dead object (every item record under it)

interface Hold {
  t: HeldOutput;
  /** Batch sequence number the output depends on. */
  need: number;
  /** The output's own commands changed the keyspace. */
  wrote: boolean;
}

interface GcEntry {
  id: number;
  kind: number;
  /**
   * Journal frame that queued it: with the journal, the entry is deleted only once LMDB has
   * applied that frame (records of the dead id may still wait in frames before it).
   */
  ready: number;
}

/** What a GC step (part of a journal apply block) did. */
interface GcLog {
  gcAdded: GcEntry[];
  gcDone: number[];
}

/** What one in-flight batch carried, to resume or redo it. */
class Batch {
  /** Keys written, per db index (kept in step with SWAPDB while in flight). */
  keys: (DirtyKeys | undefined)[] = [];
  /** Collections whose records were written, with the sid used and whether it was new. */
  values: StoredValue[] = [];
  sids: number[] = [];
  fresh: boolean[] = [];
  /** Sids found garbage in this batch. */
  garbage: number[] = [];
  gcAdded: GcEntry[] = [];
  sys = new Map<string, unknown>();
  nsTable = false;
  dirtySnap = 0;
  userData = false;
  /** Keys of the bulk queue written by this batch (db index, key). */
  bulkDb: number[] = [];
  bulkKeys: string[] = [];
  constructor(readonly seq: number) {}
}

export interface OpenOptions {
  dir: string;
  mode: 'always' | 'everysec';
}

export interface LoadReport {
  keys: number;
  expired: number;
  ms: number;
}

export class Persistence implements KeyspaceListener, PersistenceApi, CommitGate, LoadTarget {
  readonly mode: 'always' | 'everysec';
  readonly store: LmdbStore;
  /** appendfsync always: batches go to the journal; LMDB gets them later (the applier below). */
  private journal!: Journal;
  private readonly frame = new FrameBuilder();
  /** Last journal frame written (or, at start-up, applied). */
  private jseq = 0;
  /** Frames durable in the journal, waiting for LMDB. */
  private applyQueue: Buffer[] = [];
  private applyBytes = 0;
  private applying = false;
  /** Last frame that waited when an apply was due: applied in chunks without waiting (APPLY_CHUNK). */
  private drainTo = 0;
  private applyTimer: NodeJS.Timeout | null = null;
  /** Last frame committed to LMDB. */
  private appliedJseq = 0;
  /** Applies the frames in its own thread (null: queued to lmdb-js on this one; REDSTASH_APPLY_WORKER=0). */
  private applier: ApplyThread | null = null;
  /** The last apply was the thread's: background deletion (main thread) gets the next turn. */
  private gcTurn = false;
  /** The last LMDB apply failed (the journal still holds everything: writes go on). */
  private applyError: string | null = null;
  /** The journal file LMDB records as the one being written (sys journal). */
  private recordedFile = 0;
  /** Journal files were found at start-up (replayed, to be deleted). */
  private adopted = false;
  private readonly lock: DirLock;
  private eng!: Engine;
  /** Namespace id of each database index. */
  private ns: number[] = [];
  private nextId = 1;
  private nsDirty = false;
  private idDirty = false;
  /**
   * Keys changed since the last batch, per db index, each with its live entry when the change
   * signal had it (the batch then encodes it without looking the key up again: at a million
   * keys and more that lookup is a few cache misses per key), else undefined.
   */
  private dirty: DirtyKeys[] = [];
  /** Bulk-added keys still to write (keysAdded), oldest first; `bulkPos` indexes the first. */
  private bulk: { db: number; keys: string[] }[] = [];
  private bulkPos = 0;
  /** SAVE / shutdown wait (idle()): the rest of the bulk keys goes out in one batch. */
  private bulkUnbounded = false;
  /** True when something waits to be written (dirty keys, tables, records). */
  private pending = false;
  /** Sids of collections that left the keyspace since the last batch. */
  private released = new Set<number>();
  private readonly sysPending = new Map<string, unknown>();
  /** Records of other subsystems (sys 'app:<name>'), as loaded or last put. */
  private readonly records = new Map<string, unknown>();
  private gcQueue: GcEntry[] = [];
  private gcNew: GcEntry[] = [];
  private inflight: Batch | null = null;
  private scheduled = false;
  /** everysec: the timer of the batch being collected (hurried by a big batch: keyChanged). */
  private batchTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private syncTimer: NodeJS.Timeout | null = null;
  private seq = 0;
  private durableSeq = 0;
  private lastDataSeq = 0;
  private holds: Hold[] = [];
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  private readonly meta = new MetaView();
  private warned = new Set<number>();
  // INFO
  error: string | null = null;
  private lastCommitTime = 0;
  private lastSyncTime = 0;
  private commits = 0;
  private failures = 0;
  load: LoadReport = { keys: 0, expired: 0, ms: 0 };
  /** DEBUG RELOAD is emptying the databases in memory (not a FLUSHALL: nothing to write). */
  private reloading = false;
  /** The background load of the keyspace, until it completes (loader.ts). */
  private loader: Loader | null = null;
  private loadStart = 0;

  private constructor(private readonly opts: OpenOptions) {
    this.mode = opts.mode;
    // Both modes write batches to the journal and apply them to LMDB in bigger transactions
    // (everysec: a 100 ms batch rewrote the B-tree pages of its records, thousands of distinct
    // pages per commit in a collection of 1,000,000 elements; see the journal applier).
    fs.mkdirSync(opts.dir, { recursive: true });
    this.lock = DirLock.acquire(opts.dir);
    try {
      this.store = new LmdbStore(path.join(opts.dir, 'lmdb'));
    } catch (err) {
      this.lock.release();
      throw err;
    }
  }

  /**
   * Take the data directory, open LMDB, prepare loading every database into `eng` (in the
   * background once `startLoading` is called; on demand until then) and start listening to
   * its changes. Throws DirLockedError when another process owns the directory.
   */
  static open(eng: Engine, opts: OpenOptions): Persistence {
    fs.mkdirSync(path.join(opts.dir, 'lmdb'), { recursive: true });
    const p = new Persistence(opts);
    try {
      p.eng = eng;
      p.replayJournal();
      p.loadAll();
    } catch (err) {
      void p.store.close();
      p.lock.release();
      throw err;
    }
    eng.addListener(p);
    eng.persistence = p;
    if (p.mode === 'always') eng.commitGate = p;
    else {
      p.syncTimer = setInterval(() => p.periodicSync(), 1000);
      p.syncTimer.unref();
    }
    if (APPLY_WORKER) p.applier = new ApplyThread(p.store.path);
    if (p.pending) p.schedule(true);
    p.scheduleApply();
    // Journal files replayed above go once LMDB has their records on disk.
    if (p.adopted) {
      const applied = p.appliedJseq;
      const file = p.recordedFile;
      p.store.syncNow().then(() => p.journal.checkpoint(applied, file), () => {});
    }
    return p;
  }

  /**
   * Apply the journal frames LMDB does not have yet (written by a server that stopped before
   * applying them), in one transaction recording the last one in `sys journalSeq` and this
   * run's journal file in `sys journal`. A journal that is damaged before its last frame, or
   * missing where LMDB expects one, stops the start (DataDirError, datadir.ts).
   */
  private replayJournal(): void {
    const st = this.store;
    const dir = this.opts.dir;
    const applied = st.getSys<number>('journalSeq') ?? 0;
    const scan = scanJournal(dir, applied);
    const problem = journalProblem(dir, scan, applied, st.getSys<{ file: number }>('journal')?.file ?? 0);
    if (problem !== null) throw new DataDirError(`${problem}\n${repairHint(dir)}`);
    for (const k of scan.skipped) {
      console.warn(`persistence: ${k.file}: ${k.reason} at offset ${k.offset}: frames ${k.first}..${k.last ?? 'the end of the file'} ` +
        `skipped, as LMDB holds them already (nothing is lost; the file is deleted once LMDB holds the frames after it)`);
    }
    const t = scan.tail;
    if (t !== null) {
      // Redis's aof-load-truncated: most often the write a killed process did not finish
      // (never acknowledged); a damaged last frame cannot be told from it.
      console.warn(`persistence: ${t.file}: the last frame, at offset ${t.offset}, is incomplete or damaged ` +
        `(${t.bytes} bytes, ${t.records} records readable): cut off, as the write a killed process did not finish`);
      truncateJournal(t.file, t.offset);
    }
    const frames = scan.frames;
    const last = frames.length > 0 ? frameSeq(frames[frames.length - 1]) : applied;
    const files = scan.files;
    this.jseq = last;
    this.appliedJseq = last;
    const j = new Journal(dir, files.length > 0 ? files[files.length - 1].num + 1 : 1, this.mode === 'always');
    this.journal = j;
    j.onSyncError = (err, file) => this.setError(describeError(err, dir), file);
    j.adopt(files.map((f) => f.file), last);
    this.adopted = files.length > 0;
    j.prepareSync();
    // This run's first file exists (with its header) before LMDB names it as the one written.
    try {
      j.start(last + 1);
    } catch (err) {
      // A full or read-only disk: serve reads anyway; the first write retries the file and,
      // failing, refuses writes (MISCONF) as a failed append does.
      console.error(`persistence: ${(err as Error).message}; the journal file is created at the first write`);
    }
    st.transactionSync(() => {
      for (const f of frames) st.applyFrame(f, true);
      if (last !== applied) st.sys.putSync('journalSeq', last);
      st.sys.putSync('journal', { file: j.opened });
    });
    st.refreshReads();
    this.recordedFile = j.opened;
  }

  // ------------------------------------------------------------------ loading

  private loadAll(): void {
    const t0 = performance.now();
    const st = this.store;
    const eng = this.eng;
    const format = st.getSys<number>('format');
    const empty = st.meta.getKeysCount({ limit: 1 }) === 0 && st.getSys('dbs') === undefined;
    if (format === undefined && !empty) throw new Error(`${st.path}: unknown data format (no format record)`);
    if (format !== undefined && format !== FORMAT) throw new Error(`${st.path}: data format ${format} is not supported (this server reads ${FORMAT})`);
    if (format === undefined) this.sysPending.set('format', FORMAT);
    this.nextId = st.getSys<number>('nextId') ?? 1;
    this.ns = (st.getSys<number[]>('dbs') ?? []).slice();
    for (const e of st.gc.getRange({})) {
      this.gcQueue.push({ id: e.key.readUIntBE(0, SID_BYTES), kind: e.value[0], ready: 0 });
    }
    // Ids must never be reused, whatever the counter says (a crash cannot lose it, as it is
    // written in the same transaction as its first use, but be defensive).
    let maxId = Math.max(0, ...this.ns, ...this.gcQueue.map((g) => g.id));
    for (const k of st.items.getKeys({ reverse: true, limit: 1 })) maxId = Math.max(maxId, (k as Buffer).readUIntBE(0, SID_BYTES));
    if (this.nextId <= maxId) {
      this.nextId = maxId + 1;
      this.idDirty = true;
    }
    for (let i = 0; i < eng.dbs.length; i++) {
      this.dirty.push(new Map());
      if (this.ns[i] === undefined) {
        this.ns[i] = this.newId();
        this.nsDirty = true;
      }
    }
    if (this.nsDirty || this.idDirty || this.sysPending.size > 0) this.pending = true;
    for (const { key, value } of st.sys.getRange({ start: 'app:', end: 'app;' })) this.records.set((key as string).slice(4), value);

    // The keys themselves load in the background once the server listens (loader.ts); each key
    // table gets its final size first: no rehashing while a million keys go in.
    // Counting is a walk over every key (~70 ms per million): when the first and the last record
    // belong to the same namespace, LMDB's entry count (O(1)) is that namespace's count.
    const only = st.soleNamespace();
    for (let i = 0; i < eng.dbs.length; i++) {
      const ns = this.ns[i];
      const n = only === null ? st.meta.getKeysCount({ start: nsPrefix(ns), end: nsPrefix(ns + 1) }) : only.ns === ns ? only.count : 0;
      eng.dbs[i].map.reserve(n);
    }
    this.loadStart = t0;
    this.loader = new Loader(st, this, eng.dbs, this.ns);
  }

  /** LoadTarget: one metadata record read from disk (background pass or on-demand lookup). */
  restore(db: Db, key: string, m: MetaView, now: number): void {
    if (m.exp !== 0 && m.exp <= now) {
      this.expiredOnDisk(db, key, m.flags & MF.RECORDS ? m.sid : 0);
      return;
    }
    if (m.type === 0) {
      db.restoreStored(key, storedFrom(m.raw, m.start, m.end), m.exp);
      this.load.keys++;
      return;
    }
    const value = this.decodeValue(m);
    if (value !== undefined) this.install(db, key, value as StoredValue, m.exp);
  }

  /** LoadTarget: a collection the loader built from its records over several steps. */
  restoreBuilt(db: Db, key: string, v: StoredValue, exp: number, now: number): void {
    if (exp !== 0 && exp <= now) this.expiredOnDisk(db, key, v.sid);
    else this.install(db, key, v, exp);
  }

  /** A loaded value goes into the keyspace (its codec registers what it needs, e.g. field TTLs). */
  private install(db: Db, key: string, v: StoredValue, exp: number): void {
    db.restore(key, v, exp);
    codecFor(v.type)!.restored?.(v, db, key);
    this.load.keys++;
  }

  /** Expired while we were down: gone, and deleted on disk by the next batch (with its records, `sid` != 0). */
  private expiredOnDisk(db: Db, key: string, sid: number): void {
    this.load.expired++;
    if (sid !== 0) this.released.add(sid);
    this.keyChanged(db, key);
  }

  /**
   * Start loading the keyspace in the background (once the server listens). Until then, and
   * until it completes, lookups read the keys they need from disk (Db.peek).
   */
  startLoading(): void {
    this.loader?.start();
  }

  /** Load whatever the background pass has not loaded yet, now (in-process tests, tools). */
  finishLoading(): void {
    this.loader?.finish();
  }

  /** LoadTarget: the whole keyspace is in memory. */
  loaded(): void {
    this.load.ms = Math.round(performance.now() - this.loadStart);
    this.loader = null;
    for (const db of this.eng.dbs) db.map.endReserve();
  }

  private decodeValue(m: MetaView): Buffer | TypedValue | undefined {
    if (m.type === 0) return Buffer.from(m.raw.subarray(m.start, m.end));
    const codec = codecFor(m.type);
    if (codec === undefined) {
      this.warnType(m.type, 'cannot load');
      return undefined;
    }
    if (!(m.flags & MF.RECORDS)) return codec.decodeWhole(m.body);
    const v = loadRecords(codec, m.body, m.size, this.store.scanItems(m.sid));
    v.sid = m.sid;
    return v;
  }

  // ------------------------------------------------------------------ change tracking

  keyChanged(db: Db, key: string, e?: Entry): void {
    const set = this.dirty[db.index];
    set.set(key, e);
    if (!this.pending) {
      this.pending = true;
      if (!this.scheduled) this.schedule(false);
    } else if (set.size >= EVERYSEC_BATCH_KEYS && this.batchTimer !== null) {
      clearTimeout(this.batchTimer);
      this.batchTimer = null;
      setImmediate(this.runScheduled);
    }
  }

  keysAdded(db: Db, keys: string[]): void {
    this.bulk.push({ db: db.index, keys });
    this.touch();
  }

  /** Bulk keys still waiting for a batch (INFO). */
  private bulkLeft(): number {
    let n = -this.bulkPos;
    for (const b of this.bulk) n += b.keys.length;
    return Math.max(0, n);
  }

  /**
   * DEBUG RELOAD (after saveNow): drop every database in memory and load it back from LMDB
   * with the start-up loader, at once. The data on disk is untouched: the flush below is not
   * written (reloading), and the dirty counter stays what the save left.
   */
  reload(): boolean {
    const eng = this.eng;
    this.loader?.finish();
    const dirty = eng.dirty;
    this.reloading = true;
    try {
      for (const db of eng.dbs) db.flush();
    } finally {
      this.reloading = false;
    }
    eng.dirty = dirty;
    this.load = { keys: 0, expired: 0, ms: 0 };
    this.loadStart = performance.now();
    this.loader = new Loader(this.store, this, eng.dbs, this.ns);
    this.loader.finish();
    eng.onReload();
    return true;
  }

  flushed(db: Db): void {
    if (this.reloading) return;
    // The db's namespace dies (deleted in the background); new keys go to a fresh one.
    const i = db.index;
    if (this.bulk.length > 0) this.dropBulk(i);
    this.gcNew.push({ id: this.ns[i], kind: GC_NS, ready: 0 });
    this.ns[i] = this.newId();
    this.nsDirty = true;
    this.dirty[i].clear();
    this.touch();
  }

  swapped(a: Db, b: Db): void {
    const i = a.index;
    const j = b.index;
    [this.ns[i], this.ns[j]] = [this.ns[j], this.ns[i]];
    [this.dirty[i], this.dirty[j]] = [this.dirty[j], this.dirty[i]];
    for (const q of this.bulk) q.db = q.db === i ? j : q.db === j ? i : q.db;
    const f = this.inflight;
    if (f !== null) {
      [f.keys[i], f.keys[j]] = [f.keys[j], f.keys[i]];
      for (let k = 0; k < f.bulkDb.length; k++) f.bulkDb[k] = f.bulkDb[k] === i ? j : f.bulkDb[k] === j ? i : f.bulkDb[k];
    }
    this.nsDirty = true;
    this.touch();
  }

  /** FLUSHDB of db `i`: its bulk keys are gone (the fresh namespace has none of them). */
  private dropBulk(i: number): void {
    const first = this.bulk[0];
    if (first.db === i) {
      this.bulk.shift();
      this.bulkPos = 0;
    }
    this.bulk = this.bulk.filter((q) => q.db !== i);
  }

  valueDropped(v: TypedValue): void {
    if (isStored(v) && v.sid !== 0) this.released.add(v.sid);
  }

  private touch(): void {
    this.pending = true;
    if (!this.scheduled) this.schedule(false);
  }

  private newId(): number {
    this.idDirty = true;
    return this.nextId++;
  }

  // ------------------------------------------------------------------ PersistenceApi

  putRecord(name: string, value: unknown): void {
    this.records.set(name, value);
    this.sysPending.set('app:' + name, value);
    this.touch();
  }

  getRecord<V = unknown>(name: string): V | undefined {
    return this.records.get(name) as V | undefined;
  }

  async saveNow(): Promise<void> {
    await this.idle();
    if (this.error !== null) throw new Error(this.error);
    if (this.applyError !== null) throw new Error(this.applyError);
    await this.store.syncNow();
    this.lastSyncTime = Date.now();
  }

  info(): string[] {
    const eng = this.eng;
    const ok = this.error === null ? 'ok' : 'err';
    return [
      'loading:0',
      `async_loading:${this.loader !== null ? 1 : 0}`,
      'current_cow_peak:0',
      'current_cow_size:0',
      'current_cow_size_age:0',
      'current_fork_perc:0.00',
      'current_save_keys_processed:0',
      'current_save_keys_total:0',
      `rdb_changes_since_last_save:${eng.dirty}`,
      'rdb_bgsave_in_progress:0',
      `rdb_last_save_time:${eng.lastSave}`,
      `rdb_last_bgsave_status:${ok}`,
      'rdb_last_bgsave_time_sec:-1',
      'rdb_current_bgsave_time_sec:-1',
      'rdb_saves:0',
      'rdb_last_cow_size:0',
      `rdb_last_load_keys_expired:${this.load.expired}`,
      `rdb_last_load_keys_loaded:${this.load.keys}`,
      'aof_enabled:1',
      'aof_rewrite_in_progress:0',
      'aof_rewrite_scheduled:0',
      'aof_last_rewrite_time_sec:-1',
      'aof_current_rewrite_time_sec:-1',
      'aof_last_bgrewrite_status:ok',
      'aof_rewrites:0',
      'aof_rewrites_consecutive_failures:0',
      `aof_last_write_status:${ok}`,
      'aof_last_cow_size:0',
      'module_fork_in_progress:0',
      'module_fork_last_cow_size:0',
      `appendfsync:${this.mode}`,
      `lmdb_last_commit_time:${Math.floor(this.lastCommitTime / 1000)}`,
      `lmdb_last_commit_time_ms:${this.lastCommitTime}`,
      `lmdb_last_sync_time_ms:${this.lastSyncTime}`,
      `lmdb_commits:${this.commits}`,
      `lmdb_failed_commits:${this.failures}`,
      `lmdb_last_error:${this.error ?? this.applyError ?? ''}`,
      `journal_frames_pending:${this.applyQueue.length}`,
      `lmdb_gc_pending:${this.gcQueue.length + this.gcNew.length}`,
      // Keys of an RDB import not written to the data directory yet.
      `lmdb_import_pending:${this.bulkLeft()}`,
      // Records and bytes written since start-up (what a write costs: tests and benchmarks).
      `lmdb_records_written:${this.store.stats.puts + this.store.stats.dels}`,
      `lmdb_bytes_written:${this.store.stats.bytes}`,
      `lmdb_load_time_ms:${this.load.ms}`,
      `lmdb_load_big_records:${this.loader?.bigRecords ?? 0}`,
      // What the batches wrote so far (records put / deleted, key + value bytes): a write's cost.
      `lmdb_records_put:${this.store.stats.puts}`,
      `lmdb_records_deleted:${this.store.stats.dels}`,
      `lmdb_bytes_written:${this.store.stats.bytes}`,
    ];
  }

  // ------------------------------------------------------------------ CommitGate

  hold(t: HeldOutput, wrote: boolean): boolean {
    // During a disk error only the writers wait (for a retry to succeed); reads go out.
    if (this.error !== null && !wrote) return false;
    let need: number;
    if (this.pending && this.hasUserWork()) need = this.seq + 1;
    else if (this.lastDataSeq > this.durableSeq) need = this.lastDataSeq;
    else return false;
    this.holds.push({ t, need, wrote });
    return true;
  }

  private hasUserWork(): boolean {
    for (const s of this.dirty) if (s.size > 0) return true;
    return this.nsDirty || this.sysPending.size > 0;
  }

  /** Let out the output whose commit is durable (and, during a disk error, all reads). */
  private releaseHolds(): void {
    const hs = this.holds;
    if (hs.length === 0) return;
    const keep: Hold[] = [];
    const ready: HeldOutput[] = [];
    const readsToo = this.error !== null;
    for (const h of hs) {
      if (h.need <= this.durableSeq || (readsToo && !h.wrote)) ready.push(h.t);
      else keep.push(h);
    }
    this.holds = keep;
    for (const t of ready) t.commitReleased();
  }

  // ------------------------------------------------------------------ batches

  /**
   * Run a batch soon: at the end of this event-loop turn (appendfsync always, background
   * deletion, `now`), or after EVERYSEC_BATCH_MS with everysec so that one LMDB commit carries
   * many turns.
   */
  private schedule(now: boolean): void {
    this.scheduled = true;
    if (now || this.mode === 'always') setImmediate(this.runScheduled);
    else this.batchTimer = setTimeout(this.runScheduled, EVERYSEC_BATCH_MS);
  }

  /** always: extra polls made before this turn's journal write (see runScheduled). */
  private extraPolls = 0;
  /** engine.dirty when the last extra poll started. */
  private pollMark = 0;
  private readonly runScheduled = (): void => {
    if (this.batchTimer !== null) {
      clearTimeout(this.batchTimer);
      this.batchTimer = null;
    }
    // always: before the durable write, let the event loop poll the sockets once more
    // (without blocking: an immediate is pending), again while that brings new writes, up to
    // EXTRA_POLLS times. Commands that arrived while this turn ran join its write instead of
    // waiting for the next one (50 clients: ~26.5 -> ~29.5 commands per write measured), and
    // each write costs every command less. A lone client pays one non-blocking poll.
    if (this.mode === 'always' && this.extraPolls < EXTRA_POLLS && (this.extraPolls === 0 || this.eng.dirty !== this.pollMark)) {
      this.extraPolls++;
      this.pollMark = this.eng.dirty;
      setImmediate(this.runScheduled);
      return;
    }
    this.extraPolls = 0;
    this.scheduled = false;
    if (this.inflight === null && this.retryTimer === null && !this.closed) this.submit();
  };

  private hasWork(): boolean {
    // Background deletion belongs to the journal applier.
    return this.pending || this.released.size > 0 || this.gcNew.length > 0;
  }

  /** Write everything pending as one transaction. */
  private submit(): void {
    // Not while a script is busy (scripting/host.ts): its writes so far must not reach the
    // disk before it ends, as a script is atomic (a crash or SHUTDOWN NOSAVE meanwhile loses
    // them, never a part of them). Tried again shortly.
    if (this.eng.busyReply !== null) {
      if (!this.scheduled) {
        this.scheduled = true;
        setTimeout(this.runScheduled, 10);
      }
      return;
    }
    if (!this.hasWork()) {
      this.notifyIdle();
      return;
    }
    const st = this.store;
    const eng = this.eng;
    const t0 = TRACE_STALLS > 0 ? performance.now() : 0;
    const b = new Batch(++this.seq);
    b.dirtySnap = eng.dirty;
    b.userData = this.hasUserWork();
    const referenced = new Set<number>();
    const iw = new SidWriter(st);
    // One frame for the batch, one write; LMDB gets the frame later (the journal applier).
    st.rec = this.frame;
    try {
      this.fill(b, iw, referenced);
    } finally {
      st.rec = null;
    }
    // Bulk keys left: the next batch takes more of them (see done()).
    this.pending = this.bulk.length > 0;
    this.inflight = b;
    if (b.userData) this.lastDataSeq = b.seq;
    const j = this.journal;
    if (j.size >= ROTATE_BYTES && this.applyError === null) {
      const tr = TRACE_STALLS > 0 ? performance.now() : 0;
      j.rotate();
      if (TRACE_STALLS > 0) traceStall('rotate', tr, j.size);
    }
    const frame = this.frame.finish(this.jseq + 1);
    const ta = TRACE_STALLS > 0 ? performance.now() : 0;
    const err = j.append(frame);
    if (TRACE_STALLS > 0) {
      traceStall('batch', t0, frame.length);
      traceStall('append (of that batch)', ta, frame.length);
    }
    if (err === null) this.journaled(b, frame);
    else this.failed(b, err);
  }

  /** Batch `b` is in the journal as `frame` (durable with always; synced within a second with everysec). */
  private journaled(b: Batch, frame: Buffer): void {
    this.jseq = frameSeq(frame);
    for (const g of b.gcAdded) g.ready = this.jseq;
    this.applyQueue.push(frame);
    this.applyBytes += frame.length;
    this.done(b);
    this.scheduleApply();
  }

  /** The writes of batch `b`, inside its atomic block. */
  private fill(b: Batch, iw: SidWriter, referenced: Set<number>): void {
    const st = this.store;
    const eng = this.eng;
    try {
      for (let i = 0; i < this.dirty.length; i++) {
        const set = this.dirty[i];
        if (set.size === 0) continue;
        b.keys[i] = set;
        this.dirty[i] = new Map();
        const db = eng.dbs[i];
        const ns = this.ns[i];
        // forEach: no [key, entry] pair allocated per key, as for-of over a Map would.
        set.forEach((e, key) => this.writeKey(b, ns, key, e !== undefined && e.next !== REMOVED ? e : db.map.find(key), iw, referenced));
      }
      if (this.bulk.length > 0) this.fillBulk(b, iw, referenced);
      for (const sid of this.released) {
        if (referenced.has(sid)) continue;
        b.garbage.push(sid);
        this.gcNew.push({ id: sid, kind: GC_OBJ, ready: 0 });
      }
      this.released.clear();
      for (const g of this.gcNew) {
        st.putKey(st.gc, idKey(g.id), Buffer.from([g.kind]));
        b.gcAdded.push(g);
      }
      this.gcNew = [];
      for (const [k, v] of this.sysPending) {
        st.putSys(k, v);
        b.sys.set(k, v);
      }
      this.sysPending.clear();
      if (this.nsDirty) {
        st.putSys('dbs', this.ns.slice());
        b.nsTable = true;
        this.nsDirty = false;
      }
      if (this.idDirty) {
        st.putSys('nextId', this.nextId);
        this.idDirty = false;
      }
    } catch (err) {
      // An encoding or queueing error (a bug, not an I/O error): retrying would repeat it.
      console.error('persistence: cannot queue a batch:', err);
    }
  }

  /** Bulk keys for about BULK_BATCH_MS (at least one); the rest waits for the next batches. */
  private fillBulk(b: Batch, iw: SidWriter, referenced: Set<number>): void {
    const deadline = this.bulkUnbounded ? Infinity : performance.now() + BULK_BATCH_MS;
    const eng = this.eng;
    while (this.bulk.length > 0) {
      const q = this.bulk[0];
      const db = eng.dbs[q.db];
      const ns = this.ns[q.db];
      const done = b.keys[q.db];
      let p = this.bulkPos;
      const end = q.keys.length;
      while (p < end) {
        const key = q.keys[p++];
        // Already written by this batch as a changed key: its current state is in.
        if (done === undefined || !done.has(key)) {
          this.writeKey(b, ns, key, db.map.find(key), iw, referenced);
          b.bulkDb.push(q.db);
          b.bulkKeys.push(key);
        }
        if ((p & 63) === 0 && performance.now() >= deadline) break;
      }
      if (p < end) {
        this.bulkPos = p;
        return;
      }
      this.bulk.shift();
      this.bulkPos = 0;
      if (performance.now() >= deadline) return;
    }
    this.bulkUnbounded = false;
  }

  /** Encode `key` as it is now: `e` is its entry in `db`, undefined if it is gone. */
  private writeKey(b: Batch, ns: number, key: string, e: Entry | undefined, iw: SidWriter, referenced: Set<number>): void {
    const st = this.store;
    if (e === undefined) {
      st.del(st.meta, metaKey(st.keyBuf, ns, key));
      return;
    }
    const sv = e.v;
    if (typeof sv === 'string' || typeof sv === 'number' || sv instanceof Uint8Array) {
      if (st.putStringMeta(ns, key, e.exp, sv)) return;
      const rec = encodeString(st.slab, key, e.exp, sv);
      st.put(st.meta, metaKey(st.keyBuf, ns, key), rec);
      return;
    }
    const v = sv;
    const codec = codecFor(v.type);
    if (codec === undefined || !isStored(v)) {
      this.warnType(v.type, 'cannot store');
      st.del(st.meta, metaKey(st.keyBuf, ns, key));
      return;
    }
    const whole = codec.encodeWhole(v);
    let rec: Buffer;
    if (whole !== null) {
      if (v.sid !== 0) {
        this.released.add(v.sid);
        v.sid = 0;
      }
      rec = encodeWholeMeta(st.slab, key, e.exp, v.type, whole);
    } else {
      const fresh = v.sid === 0;
      if (fresh) v.sid = this.newId();
      referenced.add(v.sid);
      b.values.push(v);
      b.sids.push(v.sid);
      b.fresh.push(fresh);
      iw.sid = v.sid;
      codec.writeRecords(v, iw, fresh);
      rec = encodeRecordsMeta(st.slab, key, e.exp, v.type, v.sid, codec.size(v), codec.header?.(v));
    }
    // The key buffer is shared with the item writes above: encode the meta key last.
    st.put(st.meta, metaKey(st.keyBuf, ns, key), rec);
  }

  /** Delete up to GC_STEP records of the oldest dead namespace or object. */
  private gcStep(b: GcLog, budget: number): void {
    const st = this.store;
    st.refreshReads();
    for (const g of this.gcQueue) {
      if (budget <= 0) break;
      if (g.ready > this.appliedJseq) continue;
      let n = 0;
      if (g.kind === GC_NS) {
        for (const { key, value } of st.meta.getRange({ start: nsPrefix(g.id), end: nsPrefix(g.id + 1), limit: budget })) {
          if (value[0] & MF.RECORDS) {
            decodeMeta(value, value.length, this.meta);
            const child = { id: this.meta.sid, kind: GC_OBJ, ready: 0 };
            st.putKey(st.gc, idKey(child.id), Buffer.from([GC_OBJ]));
            b.gcAdded.push(child);
          }
          st.delKey(st.meta, key);
          n++;
        }
      } else {
        for (const key of st.items.getKeys({ start: sidPrefix(g.id), end: sidPrefix(g.id + 1), limit: budget })) {
          st.delKey(st.items, key as Buffer);
          n++;
        }
      }
      budget -= n;
      if (budget > 0) {
        // Range exhausted: the entry itself goes.
        st.delKey(st.gc, idKey(g.id));
        b.gcDone.push(g.id);
        budget--;
      }
    }
  }

  private done(b: Batch): void {
    this.inflight = null;
    const now = Date.now();
    this.commits++;
    this.lastCommitTime = now;
    const eng = this.eng;
    eng.dirty = Math.max(0, eng.dirty - b.dirtySnap);
    eng.lastSave = Math.floor(now / 1000);
    this.durable(b.seq);
    for (const g of b.gcAdded) this.gcQueue.push(g);
    this.clearError();
    this.releaseHolds();
    if (this.closed) {
      this.notifyIdle();
      return;
    }
    if (this.hasWork()) {
      // More changes arrived while this batch was in flight: they go out now, together (with
      // everysec, after the usual delay unless someone waits).
      if (this.pending || this.released.size > 0 || this.gcNew.length > 0) {
        const bulkOnly = this.bulk.length > 0 && !this.hasUserWork();
        if (!bulkOnly && (this.mode === 'always' || this.idleWaiters.length > 0)) this.submit();
        // Bulk keys alone: the next slice on the next turn, after the commands waiting.
        else if (!this.scheduled) this.schedule(bulkOnly);
      } else {
        this.scheduleGc();
      }
    } else {
      this.notifyIdle();
    }
  }

  /** appendfsync always: batch `seq` and all before it are on disk. */
  private durable(seq: number): void {
    if (seq <= this.durableSeq) return;
    this.durableSeq = seq;
    this.lastSyncTime = Date.now();
    this.releaseHolds();
  }

  /** Background deletion runs when nothing else is pending, a little later. */
  private scheduleGc(): void {
    this.notifyIdle();
    if (!this.scheduled) this.schedule(true);
  }

  // ------------------------------------------------------------------ applier (journal)

  private gcReady(): boolean {
    for (const g of this.gcQueue) if (g.ready <= this.appliedJseq) return true;
    return false;
  }

  /**
   * Give LMDB the journal frames waiting (and background deletion): every APPLY_MS, sooner
   * when much waits, when only deletion is left, or when someone waits for idle.
   */
  private scheduleApply(): void {
    if (this.applying || this.applyTimer !== null || this.closed) return;
    const frames = this.applyQueue.length > 0;
    if (!frames && !this.gcReady()) return;
    const soon = !frames || this.drainTo > this.appliedJseq || this.applyBytes >= APPLY_BYTES || this.idleWaiters.length > 0;
    this.applyTimer = setTimeout(this.runApply, soon ? 0 : APPLY_MS);
  }

  /** Bytes per apply transaction now (APPLY_TURN_MS). */
  private applyChunk = APPLY_TURN_MS > 0 ? Math.min(APPLY_CHUNK, APPLY_CHUNK_START) : APPLY_CHUNK;

  /**
   * Queueing `bytes` of frames took `ms`: size the next transaction to fit APPLY_TURN_MS. A turn
   * over the budget shrinks the next one to the fit at once (halving took several more long
   * turns to get there); one under it grows halfway, by APPLY_GROW at most, so a turn that was
   * short by chance (the cost per byte swings 10x with GC and the machine's load) does not make
   * the next one long.
   */
  private sizeApplyChunk(bytes: number, ms: number): void {
    const fit = ms > 0 ? (APPLY_TURN_MS * bytes) / ms : APPLY_CHUNK;
    let next = fit < this.applyChunk && APPLY_SHRINK_AT_ONCE ? fit : (this.applyChunk + fit) / 2;
    // From what was just queued, not only the chunk: a chunk below one frame (a transaction is
    // at least one) would otherwise take dozens of turns to grow back.
    if (APPLY_GROW > 0) next = Math.min(next, Math.max(this.applyChunk, bytes) * APPLY_GROW);
    this.applyChunk = Math.round(Math.min(APPLY_CHUNK, Math.max(APPLY_CHUNK_MIN, next)));
  }

  /** Apply now if an apply is only waiting for its timer. */
  private hurryApply(): void {
    if (this.applyTimer === null || this.applying || this.applyError !== null) return;
    clearTimeout(this.applyTimer);
    this.applyTimer = setTimeout(this.runApply, 0);
  }

  private readonly runApply = (): void => {
    this.applyTimer = null;
    if (this.applying || this.closed) return;
    const st = this.store;
    // At most applyChunk bytes per transaction (the rest follows at once, applied()), so the
    // turn that queues them stays short: commands are served between the chunks.
    const q = this.applyQueue;
    const th = this.applier !== null && !this.applier.dead ? this.applier : null;
    // With the thread, background deletion (which reads LMDB here) gets every other transaction.
    const gcOnly = th !== null && this.gcTurn && this.gcReady();
    const limit = th !== null ? APPLY_CHUNK_THREAD : this.applyChunk;
    let n = 0;
    let bytes = 0;
    if (!gcOnly) while (n < q.length && (n === 0 || bytes + q[n].length <= limit)) bytes += q[n++].length;
    const frames = n === q.length ? q : q.slice(0, n);
    this.applyQueue = n === q.length ? [] : q.slice(n);
    this.applyBytes -= bytes;
    if (this.drainTo <= this.appliedJseq && q.length > 0) this.drainTo = frameSeq(q[q.length - 1]);
    const last = frames.length > 0 ? frameSeq(frames[frames.length - 1]) : this.appliedJseq;
    const log: GcLog = { gcAdded: [], gcDone: [] };
    // The file being written now (frames after `last` are in it or later ones): what start-up
    // expects to find (a missing or emptied file is then an error, not an empty start).
    const file = this.journal.named;
    this.applying = true;
    if (th !== null && frames.length > 0) {
      this.gcTurn = true;
      th.apply(frames, last !== this.appliedJseq ? last : null, file !== this.recordedFile ? file : null).then(
        (durable) => this.applied(last, file, log, durable),
        (err) => this.applyFailed(frames, err),
      );
      return;
    }
    this.gcTurn = false;
    const t0 = performance.now();
    const commit = st.write(() => {
      try {
        for (const f of frames) st.applyFrame(f, false);
        if (this.gcQueue.length > 0) this.gcStep(log, frames.length > 0 ? GC_STEP / 10 : GC_STEP);
        if (last !== this.appliedJseq) st.sys.put('journalSeq', last);
        if (file !== this.recordedFile) st.sys.put('journal', { file });
      } catch (err) {
        console.error('persistence: cannot queue journal frames:', err);
      }
    });
    if (bytes >= 16 * 1024 && APPLY_TURN_MS > 0) this.sizeApplyChunk(bytes, performance.now() - t0);
    if (TRACE_STALLS > 0) traceStall('apply', t0, bytes);
    commit.then(() => this.applied(last, file, log), (err) => this.applyFailed(frames, err));
  };

  /** `flushed`: the thread's transaction is durable (true) or its flush failed (false); undefined: ask LMDB. */
  private applied(last: number, file: number, log: GcLog, flushed?: boolean): void {
    this.applying = false;
    this.appliedJseq = last;
    this.recordedFile = file;
    this.commits++;
    this.lastCommitTime = Date.now();
    if (log.gcDone.length > 0) {
      const gone = new Set(log.gcDone);
      this.gcQueue = this.gcQueue.filter((g) => !gone.has(g.id));
    }
    for (const g of log.gcAdded) this.gcQueue.push(g);
    if (this.applyError !== null) {
      console.log('persistence: LMDB accepts writes again; the journal is being applied');
      this.applyError = null;
    }
    // Journal files whose frames LMDB now holds go once they are on disk.
    if (flushed === true) {
      this.lastSyncTime = Date.now();
      this.journal.checkpoint(last, file);
    } else if (flushed === undefined) {
      this.store.syncNow().then(() => {
        this.lastSyncTime = Date.now();
        this.journal.checkpoint(last, file);
      }, () => {});
    }
    this.scheduleApply();
    this.notifyIdle();
  }

  private applyFailed(frames: Buffer[], err: unknown): void {
    this.applying = false;
    this.failures++;
    this.applyQueue = frames.concat(this.applyQueue);
    this.applyBytes = 0;
    for (const f of this.applyQueue) this.applyBytes += f.length;
    const reason = describeError(err, this.store.path);
    // The journal holds these frames durably: writes go on; a full disk stops the journal
    // too, and that is what refuses writes (MISCONF).
    if (this.applyError === null) console.error(`persistence: cannot apply the journal to ${this.store.path}: ${reason}; retrying every second`);
    this.applyError = reason;
    if (!this.closed) {
      this.applyTimer = setTimeout(this.runApply, RETRY_MS);
      this.applyTimer.unref();
    }
    this.notifyIdle();
  }

  private failed(b: Batch, err: unknown): void {
    this.inflight = null;
    this.failures++;
    this.setError(describeError(err, this.store.path), this.journal.file);
    // Everything the batch carried is pending again; values whose change log it drained are
    // rewritten whole under a new object id (the old one is released).
    for (let i = 0; i < b.keys.length; i++) {
      const ks = b.keys[i];
      if (ks !== undefined) for (const k of ks.keys()) this.dirty[i].set(k, undefined);
    }
    for (let i = 0; i < b.bulkKeys.length; i++) this.dirty[b.bulkDb[i]].set(b.bulkKeys[i], undefined);
    for (let i = 0; i < b.values.length; i++) {
      const v = b.values[i];
      if (v.sid !== b.sids[i]) continue;
      if (!b.fresh[i]) this.released.add(v.sid);
      v.sid = 0;
    }
    for (const sid of b.garbage) this.released.add(sid);
    this.gcNew = b.gcAdded.concat(this.gcNew).filter((g) => !this.gcQueue.some((q) => q.id === g.id));
    for (const [k, v] of b.sys) if (!this.sysPending.has(k)) this.sysPending.set(k, v);
    if (b.nsTable) this.nsDirty = true;
    this.idDirty = true;
    this.pending = true;
    if (this.closed) {
      this.notifyIdle();
      return;
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.inflight === null && !this.closed) this.submit();
    }, RETRY_MS);
    this.retryTimer.unref();
    this.notifyIdle();
  }

  /** everysec: once a second, the journal frames written so far go to disk. */
  private periodicSync(): void {
    if (this.error !== null || this.closed) return;
    this.journal.sync((err) => {
      if (err === null) this.lastSyncTime = Date.now();
      else this.setError(describeError(err, this.opts.dir), this.journal.file);
    });
  }

  /** Enter the MISCONF state: write commands are refused, reads go on. */
  private setError(reason: string, file: string): void {
    if (this.error === null) {
      console.error(`persistence: cannot write to ${file}: ${reason}; write commands are refused until it works again`);
    }
    this.error = reason;
    this.eng.writeDenied = `MISCONF Errors writing to the AOF file: ${reason}`;
    this.releaseHolds();
  }

  private clearError(): void {
    if (this.error === null) return;
    console.log('persistence: writing to disk works again; write commands are accepted');
    this.error = null;
    this.eng.writeDenied = null;
  }

  /** Resolves when nothing is pending or in flight (or the last attempt failed). */
  idle(): Promise<void> {
    if (this.inflight === null && !this.pending && this.released.size === 0 && this.gcNew.length === 0 && !this.applyWaits()) return Promise.resolve();
    // SAVE and shutdown must not wait for an import's slices (the exit deadline): the rest at once.
    if (this.bulk.length > 0) this.bulkUnbounded = true;
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      if (this.inflight === null && this.retryTimer === null) this.submit();
      this.hurryApply();
    });
  }

  /** Journal frames not yet in LMDB (and LMDB accepting them). */
  private applyWaits(): boolean {
    return this.applying || (this.applyQueue.length > 0 && this.applyError === null);
  }

  private notifyIdle(): void {
    if (this.inflight !== null || this.applyWaits()) return;
    if (this.error === null && (this.pending || this.released.size > 0 || this.gcNew.length > 0)) return;
    const ws = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of ws) w();
  }

  /** Final commit and sync, then release LMDB and the directory. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Keys not loaded yet are on disk unchanged: nothing to write for them.
    this.loader?.stop();
    if (this.retryTimer !== null) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    let synced = false;
    try {
      await this.idle();
      if (this.error === null) {
        await this.store.syncNow();
        if (this.applyError === null && this.applyQueue.length === 0 && this.inflight === null && !this.applying) {
          // No journal file is expected any more: the next start finds none and is right to.
          await this.store.write(() => this.store.sys.put('journal', { file: 0 }));
          await this.store.syncNow();
          synced = true;
        }
      }
    } catch (err) {
      console.error('persistence: final sync failed:', describeError(err));
    }
    this.closed = true;
    if (this.syncTimer !== null) clearInterval(this.syncTimer);
    if (this.applyTimer !== null) clearTimeout(this.applyTimer);
    // LMDB holds every frame on disk: the journal is no longer needed.
    await this.journal.settled();
    this.journal.close(synced);
    this.releaseHolds();
    await this.applier?.close();
    await this.store.close();
    this.lock.release();
  }

  private warnType(type: number, what: string): void {
    if (this.warned.has(type)) return;
    this.warned.add(type);
    console.warn(`persistence: ${what} values of type ${type} (no codec registered): such keys are not persisted`);
  }
}

/** Item writes of one object: prefixes the sid, handles long sub-keys. */
class SidWriter implements ItemWriter {
  sid = 0;
  constructor(private readonly st: LmdbStore) {}

  put(sub: Buffer, value: Buffer): void {
    const st = this.st;
    const kl = itemKey(st.keyBuf, this.sid, sub);
    // Codecs pass scratch values (ItemWriter): a frame copies them; lmdb-js would keep the
    // Buffer until its commit, so a direct write gets its own copy (batches always have a frame).
    if (sub.length >= LONG) value = encodeLongItem(st.slab, sub, value);
    else if (st.rec === null) value = Buffer.from(value);
    st.put(st.items, kl, value);
  }

  del(sub: Buffer): void {
    const st = this.st;
    st.del(st.items, itemKey(st.keyBuf, this.sid, sub));
  }
}

const ERRNO_TEXT: Record<string, string> = {
  ENOSPC: 'No space left on device',
  EFBIG: 'File too large',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  EROFS: 'Read-only file system',
  EIO: 'Input/output error',
  EDQUOT: 'Disk quota exceeded',
};
/** Linux errno numbers as LMDB reports them (lmdb-js puts the number in `code`). */
const ERRNO_NAME: Record<number, string> = { 1: 'EPERM', 5: 'EIO', 13: 'EACCES', 27: 'EFBIG', 28: 'ENOSPC', 30: 'EROFS', 122: 'EDQUOT' };

/**
 * The strerror text of an I/O error (what Redis prints in MISCONF). LMDB turns a short write
 * (the disk filled up in the middle of a page) into EIO: when the file system is in fact
 * (nearly) full, say so.
 */
export function describeError(err: unknown, dir?: string): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  let name = typeof e?.code === 'number' ? ERRNO_NAME[e.code] : typeof e?.code === 'string' ? e.code : undefined;
  if (name === 'EIO' && dir !== undefined) {
    try {
      const s = fs.statfsSync(dir);
      if (s.bavail * s.bsize < 1024 * 1024) name = 'ENOSPC';
    } catch {
      // keep EIO
    }
  }
  if (name !== undefined && ERRNO_TEXT[name]) return ERRNO_TEXT[name];
  const msg = typeof e?.message === 'string' ? e.message : String(err);
  return msg.replace(/[\r\n]+/g, ' ');
}

export { MemoryOnly } from './memory-only.js';
