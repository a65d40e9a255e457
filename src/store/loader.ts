/**
 * Loader: brings the keyspace in from LMDB after the server has started listening.
 *
 * Loading a million keys takes seconds, most of it V8 building (and garbage-collecting) the
 * objects; the server answers meanwhile. The metadata records of each database are read in key
 * order, in steps of about STEP_MS (yielding to the event loop between steps), and restored
 * into the key table. Meanwhile the engine's lookup hook (`Db.peek`, through the `KeyLoader`
 * interface of db.ts) asks for any key a command names that is not in the table yet: `fetch`
 * reads that one record (a point lookup) and restores it. Every key decided that way, present
 * or not, goes into `touched` and the background pass skips it, so a key written, deleted or
 * expired by a client is never overwritten by its older copy on disk. Commands that need the
 * whole keyspace call `finish` (see db.ts), which loads the rest at once. Big collections are
 * loaded after the other keys of their database, each in one piece (that step blocks for as
 * long as it takes: about a second per million elements).
 *
 * Records on disk change during the load only for keys in `touched` (the engine looked them up
 * before writing) or for keys found expired here (deleted by the next batch): each step can
 * therefore start a fresh range read after the last key seen, whatever was committed meanwhile.
 *
 * Pace: REDSTASH_LOAD_STEP (records per step; default: as many as fit in STEP_MS) and
 * REDSTASH_LOAD_PAUSE_MS (pause between steps; default 0, i.e. setImmediate) and
 * REDSTASH_LOAD_DEFER (DEFER_SIZE) exist for the tests, which make the loading window wide on
 * purpose.
 */
import type { Db, KeyLoader } from '../engine/db.js';
import { MAX_KEY, MF, NS_BYTES, metaKey, nsPrefix, type MetaView } from './codec.js';
import type { LmdbStore } from './lmdb.js';

/** Wall-clock budget of one background step (ms). */
const STEP_MS = 10;
/**
 * Collections of this many elements or more are loaded after the rest of their database: each
 * loads in one piece (a million elements take a second or more), so the small keys come first.
 */
const DEFER_SIZE = Number(process.env.REDSTASH_LOAD_DEFER ?? 0) || 10000;

/** What the loader needs from Persistence (it owns the dirty sets and the value decoders). */
export interface LoadTarget {
  /** Restore the record `m` of `key` into `db`, or queue it for deletion if its TTL ran out. */
  restore(db: Db, key: string, m: MetaView, now: number): void;
  /** Called once when everything is loaded. */
  loaded(): void;
}

interface DbState {
  readonly db: Db;
  readonly ns: number;
  /** Where the next step starts (inclusive LMDB key); null once this database is done. */
  next: Buffer | null;
  readonly end: Buffer;
  /** Keys already decided by a lookup: the background pass skips them. */
  readonly touched: Set<string>;
  /** Big collections met by the scan, loaded after the rest of the database. */
  readonly deferred: string[];
}

export class Loader implements KeyLoader {
  private readonly states: DbState[] = [];
  private cur = 0;
  private timer: NodeJS.Immediate | NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly kbuf = Buffer.allocUnsafe(MAX_KEY + 16);
  private readonly stepRecords: number;
  private readonly pauseMs: number;

  constructor(
    private readonly store: LmdbStore,
    private readonly target: LoadTarget,
    dbs: readonly Db[],
    ns: readonly number[],
  ) {
    for (let i = 0; i < dbs.length; i++) {
      this.states.push({ db: dbs[i], ns: ns[i], next: nsPrefix(ns[i]), end: nsPrefix(ns[i] + 1), touched: new Set(), deferred: [] });
      dbs[i].loader = this;
    }
    this.stepRecords = Number(process.env.REDSTASH_LOAD_STEP ?? 0) || 0;
    this.pauseMs = Number(process.env.REDSTASH_LOAD_PAUSE_MS ?? 0) || 0;
  }

  /** Start the background pass. */
  start(): void {
    this.schedule();
  }

  /** Stop loading (the server is closing); the databases stay as they are. */
  stop(): void {
    this.stopped = true;
    this.cancel();
    for (const s of this.states) s.db.loader = null;
  }

  get done(): boolean {
    return this.cur >= this.states.length;
  }

  fetch(db: Db, key: string): void {
    const s = this.states[db.index];
    if (s.touched.has(key)) return;
    s.touched.add(key);
    const st = this.store;
    const m = st.getMeta(this.kbuf.subarray(0, metaKey(this.kbuf, s.ns, key)));
    if (m === undefined) return;
    // A long key's record holds the full key: a different key with the same short form is not it.
    if (m.flags & MF.LONG_KEY && m.key !== key) return;
    this.target.restore(db, key, m, Date.now());
  }

  finish(): void {
    if (this.stopped) return;
    this.cancel();
    while (!this.done) this.step(Infinity, 0);
    this.complete();
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.pauseMs > 0) this.timer = setTimeout(this.tick, this.pauseMs);
    else this.timer = setImmediate(this.tick);
  }

  private cancel(): void {
    const t = this.timer;
    if (t === null) return;
    this.timer = null;
    if (this.pauseMs > 0) clearTimeout(t as NodeJS.Timeout);
    else clearImmediate(t as NodeJS.Immediate);
  }

  private readonly tick = (): void => {
    this.timer = null;
    if (this.stopped) return;
    this.step(performance.now() + STEP_MS, this.stepRecords);
    if (this.done) this.complete();
    else this.schedule();
  };

  /**
   * Load records until `deadline` (performance.now()) or `max` records (0: no limit), moving
   * on to the next database when one is exhausted.
   */
  private step(deadline: number, max: number): void {
    let n = 0;
    while (this.cur < this.states.length) {
      const s = this.states[this.cur];
      const from = s.next;
      if (from !== null) {
        const db = s.db;
        const touched = s.touched;
        const deferred = s.deferred;
        const target = this.target;
        const now = Date.now();
        let last = '';
        let more = false;
        this.store.scanMeta(from, s.end, (k, m) => {
          const key = m.flags & MF.LONG_KEY ? m.key : k;
          last = k;
          if (touched.size === 0 || !touched.has(key)) {
            if (m.flags & MF.RECORDS && m.size >= DEFER_SIZE) deferred.push(key);
            else target.restore(db, key, m, now);
          }
          n++;
          if ((max !== 0 && n >= max) || ((n & 63) === 0 && performance.now() >= deadline)) {
            more = true;
            return false;
          }
          return true;
        });
        if (more) {
          s.next = successor(s.ns, last);
          return;
        }
        s.next = null;
      } else if (s.deferred.length > 0) {
        // Big collections, one at a time (each is loaded in one piece).
        this.fetch(s.db, s.deferred.pop()!);
        n++;
      } else {
        // This database is complete: lookups no longer come here.
        s.touched.clear();
        s.db.loader = null;
        this.cur++;
      }
      if ((max !== 0 && n >= max) || performance.now() >= deadline) return;
    }
  }

  private complete(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const s of this.states) {
      s.next = null;
      s.db.loader = null;
    }
    this.target.loaded();
  }
}

/** The smallest LMDB key after `[ns][k]` (k: the stored key minus its namespace, as latin1). */
function successor(ns: number, k: string): Buffer {
  const b = Buffer.allocUnsafe(NS_BYTES + k.length + 1);
  b.writeUIntBE(ns, 0, NS_BYTES);
  b.latin1Write(k, NS_BYTES);
  b[NS_BYTES + k.length] = 0;
  return b;
}
