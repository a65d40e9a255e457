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
 * whole keyspace call `finish` (see db.ts), which loads the rest at once. A key the scan has
 * passed is decided too (restored, or found expired): a lookup that misses it later (a client
 * deleted it) must not read its older copy on disk again, so `fetch` compares the key with
 * the scan position first.
 *
 * Big collections (DEFER_SIZE elements or more, stored one record per element) are loaded
 * after the other keys of their database, one at a time and in steps like the rest: each step
 * reads a bounded chunk of the item records (a range read after the last sub-key seen) and
 * feeds it to the codec's RecordBuilder (codec.ts); what is left to build once every record is
 * in (a sorted set's sort and tree) is done in bounded pieces too (`work`). Only the finished
 * value goes into the Db: commands never see a half-built one. A lookup of the collection
 * meanwhile finishes it at once (as it loads any key it names), and `finish` does the same.
 *
 * Records on disk change during the load only for keys in `touched` (the engine looked them up
 * before writing) or for keys found expired here (deleted by the next batch): each step can
 * therefore start a fresh range read after the last key seen, whatever was committed meanwhile.
 * The same holds for the item records of the collection being built: its key is not touched
 * (a lookup would have finished it first), so nothing writes or deletes its records.
 *
 * Pace: REDSTASH_LOAD_STEP (records per step; default: as many as fit in STEP_MS) and
 * REDSTASH_LOAD_PAUSE_MS (pause between steps; default 0, i.e. setImmediate) and
 * REDSTASH_LOAD_DEFER (DEFER_SIZE) exist for the tests, which make the loading window wide on
 * purpose.
 */
import type { Db, KeyLoader } from '../engine/db.js';
import {
  MAX_KEY, MF, NS_BYTES, SID_BYTES, codecFor, endBuild, metaKey, nsPrefix, type MetaView, type RecordBuilder, type StoredValue,
} from './codec.js';
import type { LmdbStore } from './lmdb.js';

/** Wall-clock budget of one background step (ms). */
const STEP_MS = 10;
/**
 * Collections of this many elements or more are loaded after the rest of their database (each
 * takes many steps: a million elements take a second or more), so the small keys come first.
 */
const DEFER_SIZE = Number(process.env.REDSTASH_LOAD_DEFER ?? 0) || 10000;

/** What the loader needs from Persistence (it owns the dirty sets and the value decoders). */
export interface LoadTarget {
  /** Restore the record `m` of `key` into `db`, or queue it for deletion if its TTL ran out. */
  restore(db: Db, key: string, m: MetaView, now: number): void;
  /** The same for a collection the loader built from its records (`v.sid` set). */
  restoreBuilt(db: Db, key: string, v: StoredValue, exp: number, now: number): void;
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
  /** Big collections met by the scan, loaded after the rest of the database, in this order. */
  readonly deferred: Set<string>;
  /** The big collection being built, if any. */
  big: BigLoad | null;
}

/** A big collection being built from its item records, across steps. */
interface BigLoad {
  readonly key: string;
  readonly sid: number;
  readonly exp: number;
  readonly builder: RecordBuilder;
  /** The next item record to read (inclusive LMDB key); null once all were added. */
  next: Buffer | null;
  /** Item records added so far. */
  read: number;
}

/** Build work (`RecordBuilder.work`) done between two clock reads. */
const WORK_UNITS = 2048;

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
      this.states.push({ db: dbs[i], ns: ns[i], next: nsPrefix(ns[i]), end: nsPrefix(ns[i] + 1), touched: new Set(), deferred: new Set(), big: null });
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

  /**
   * Item records read so far of the big collection being built (0: none is), for INFO
   * persistence (`lmdb_load_big_records`): the tests use it to act in the middle of one.
   */
  get bigRecords(): number {
    const s = this.states[this.cur];
    return s === undefined || s.big === null ? 0 : s.big.read;
  }

  get done(): boolean {
    return this.cur >= this.states.length;
  }

  fetch(db: Db, key: string): void {
    const s = this.states[db.index];
    if (s.touched.has(key)) return;
    const mk = this.kbuf.subarray(0, metaKey(this.kbuf, s.ns, key));
    const big = s.big !== null && s.big.key === key;
    const deferred = !big && s.deferred.delete(key);
    // Passed by the scan and not waiting to be loaded: decided (a miss now means it is gone).
    if (!big && !deferred && (s.next === null || mk.compare(s.next) < 0)) return;
    s.touched.add(key);
    if (big) {
      // Being built in the background: its records have not changed (nobody touched the key), so
      // finish from where the background pass stopped.
      this.advance(s, Infinity, 0);
      return;
    }
    const m = this.store.getMeta(mk);
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
            if (m.flags & MF.RECORDS && m.size >= DEFER_SIZE) deferred.add(key);
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
      } else if (s.big !== null) {
        n += this.advance(s, deadline, max === 0 ? 0 : max - n);
      } else if (s.deferred.size > 0) {
        // Big collections, one at a time, each over as many steps as it takes.
        const key: string = s.deferred.values().next().value!;
        s.deferred.delete(key);
        this.begin(s, key);
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

  /** Start building the big collection `key` (its metadata record read again: point lookup). */
  private begin(s: DbState, key: string): void {
    const m = this.store.getMeta(this.kbuf.subarray(0, metaKey(this.kbuf, s.ns, key)));
    if (m === undefined || (m.flags & MF.LONG_KEY && m.key !== key)) return;
    const now = Date.now();
    const codec = codecFor(m.type);
    if (!(m.flags & MF.RECORDS) || (m.exp !== 0 && m.exp <= now) || codec === undefined) {
      this.target.restore(s.db, key, m, now);
      return;
    }
    const next = Buffer.allocUnsafe(SID_BYTES);
    next.writeUIntBE(m.sid, 0, SID_BYTES);
    s.big = { key, sid: m.sid, exp: m.exp, builder: codec.loadBegin(m.body, m.size), next, read: 0 };
  }

  /**
   * Build `s.big` until `deadline` or `max` records / work units (0: no limit; Infinity and 0:
   * to the end, at once); installs it once complete. Returns the records and units done.
   */
  private advance(s: DbState, deadline: number, max: number): number {
    const b = s.big!;
    const builder = b.builder;
    let n = 0;
    if (b.next !== null) {
      let last: Buffer | null = null;
      let more = false;
      this.store.scanItemsFrom(b.sid, b.next, (stored, sub, value) => {
        builder.add(sub, value);
        last = stored;
        n++;
        b.read++;
        if ((max !== 0 && n >= max) || ((n & 255) === 0 && performance.now() >= deadline)) {
          more = true;
          return false;
        }
        return true;
      });
      if (more) {
        b.next = itemSuccessor(b.sid, last!);
        return n;
      }
      b.next = null;
      if ((max !== 0 && n >= max) || performance.now() >= deadline) return n;
    }
    if (builder.work !== undefined) {
      // Paced (tests): one piece of `max` x 16 units per step (a unit is cheaper than a record).
      const units = deadline === Infinity ? Infinity : max === 0 ? WORK_UNITS : max * 16;
      while (!builder.work(units)) {
        if (max !== 0) return n + max;
        if (performance.now() >= deadline) return n + 1;
      }
    }
    s.big = null;
    const v = endBuild(builder);
    v.sid = b.sid;
    // Decided: a later miss (a client deleted it) must not read it from disk again.
    s.touched.add(b.key);
    this.target.restoreBuilt(s.db, b.key, v, b.exp, Date.now());
    return n + 1;
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

/** The smallest LMDB key after item record `[sid][stored]` (stored: its sub-key as stored). */
function itemSuccessor(sid: number, stored: Buffer): Buffer {
  const b = Buffer.allocUnsafe(SID_BYTES + stored.length + 1);
  b.writeUIntBE(sid, 0, SID_BYTES);
  stored.copy(b, SID_BYTES);
  b[SID_BYTES + stored.length] = 0;
  return b;
}
