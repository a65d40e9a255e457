/**
 * Blocked clients (BLPOP, BZPOPMIN, BLMOVE, XREAD BLOCK ...), as Redis's blocked.c does it:
 *
 *  - A command that cannot be served registers a Waiter on its keys and returns without a
 *    reply; the connection stops executing that client's further input until it is unblocked.
 *  - Any change to a key with waiters marks it ready (through the engine's keyspace listener).
 *    After the command that caused it completes (after the whole EXEC or script), ready keys are
 *    served: waiters in the order they blocked (first blocked, first served), each getting a
 *    chance to consume, until the key runs dry.
 *  - Timeouts reply with the command's timeout reply; CLIENT UNBLOCK can force a timeout or an
 *    error; a client that disconnects or sends RESET stops waiting.
 *  - A key that exists with another type, is deleted or renamed away leaves its waiters waiting
 *    (Redis 7.0): `serve` declines, and only a later change that gives the key the waited type
 *    serves them. SWAPDB makes every waited key of both databases ready (scanDatabaseForReadyKeys).
 *  - The reply goes to the sink the blocking command had: under CLIENT REPLY OFF/SKIP the
 *    late reply is suppressed too, as in Redis.
 */
import type { Client } from './client.js';
import type { Db } from './db.js';
import type { Engine, KeyspaceListener } from './engine.js';
import type { ReplySink } from '../resp/reply-sink.js';

export interface WaitSpec {
  /** Keys (latin1) waited on, in the current database of the client. */
  readonly keys: readonly string[];
  /** Absolute deadline in ms, 0 = wait forever. */
  readonly deadline: number;
  /**
   * Try to serve the client from `key` (which changed). Write the reply to `out` and return
   * true when served; return false to keep waiting (e.g. the key is empty or of another type).
   */
  serve(key: string, out: ReplySink): boolean;
  /** Write the reply given on timeout (a null array for BLPOP, ...). */
  timeout(out: ReplySink): void;
}

interface Waiter {
  readonly client: Client;
  readonly db: number;
  readonly spec: WaitSpec;
  /** Where the eventual reply goes (the client's sink, or a null sink under CLIENT REPLY OFF). */
  readonly out: ReplySink;
  timer: NodeJS.Timeout | null;
}

/** setTimeout's longest delay (2^31-1 ms, ~24.8 days); longer waits re-arm. */
const MAX_TIMER = 0x7fffffff;

/** A key made ready, in the order keys became ready (Redis's server.ready_keys). */
interface ReadyKey {
  readonly db: number;
  readonly key: string;
}

export class Blocking implements KeyspaceListener {
  /** Per database index: key -> waiters in blocking order (db->blocking_keys). */
  private readonly waiting: (Map<string, Waiter[]> | undefined)[] = [];
  private readonly byClient = new Map<Client, Waiter>();
  /** Keys made ready and not yet served, in order... */
  private ready: ReadyKey[] = [];
  /** ...and the same per database for de-duplication (db->ready_keys). */
  private readonly readySet: (Set<string> | undefined)[] = [];
  private serving = false;

  constructor(private readonly eng: Engine) {
    eng.addListener(this);
    eng.clientListeners.push((c) => this.cancel(c));
  }

  /** Number of blocked clients (INFO blocked_clients). */
  get count(): number {
    return this.byClient.size;
  }

  isBlocked(c: Client): boolean {
    return this.byClient.has(c);
  }

  /**
   * Block `c` until a key is served, the deadline passes, or it is unblocked. `out` is the
   * sink the blocking command was given (its later reply goes there).
   */
  block(c: Client, spec: WaitSpec, out: ReplySink = c.out): void {
    // A script cannot wait: a blocking command called from one answers as on timeout (Redis).
    if (c.transport.kind === 'internal') {
      spec.timeout(out);
      return;
    }
    const w: Waiter = { client: c, db: c.dbIndex, spec, out, timer: null };
    this.byClient.set(c, w);
    c.blocked = true;
    let keys = this.waiting[w.db];
    if (keys === undefined) keys = this.waiting[w.db] = new Map();
    for (const key of spec.keys) {
      const list = keys.get(key);
      if (list === undefined) keys.set(key, [w]);
      else if (!list.includes(w)) list.push(w); // a key given twice counts once
    }
    if (spec.deadline > 0) this.arm(w);
  }

  private arm(w: Waiter): void {
    const delay = Math.min(MAX_TIMER, Math.max(0, w.spec.deadline - Date.now()));
    w.timer = setTimeout(() => this.expire(w), delay);
  }

  // KeyspaceListener: a change to a key someone waits on makes it ready (signalKeyAsReady).
  // Called on every write: no allocation unless the key has waiters.
  wantsAddedKeys(): boolean {
    return this.byClient.size > 0;
  }

  keyChanged(db: Db, key: string): void {
    if (this.byClient.size === 0) return;
    const keys = this.waiting[db.index];
    if (keys !== undefined && keys.has(key)) this.signal(db.index, key);
  }

  private signal(db: number, key: string): void {
    let set = this.readySet[db];
    if (set === undefined) set = this.readySet[db] = new Set();
    if (set.has(key)) return;
    set.add(key);
    this.ready.push({ db, key });
  }

  /**
   * FLUSHDB/FLUSHALL: every key waited on in that database is gone; let its waiters look
   * (Redis's scanDatabaseForDeletedKeys: blocked XREADGROUP readers get their error).
   */
  flushed(db: Db): void {
    const keys = this.waiting[db.index];
    if (keys !== undefined) for (const key of keys.keys()) this.signal(db.index, key);
  }

  /** SWAPDB: keys waited on in either database may now hold values (scanDatabaseForReadyKeys). */
  dbSwapped(a: number, b: number): void {
    for (const db of a === b ? [a] : [a, b]) {
      const keys = this.waiting[db];
      if (keys !== undefined) for (const key of keys.keys()) this.signal(db, key);
    }
  }

  /** True when some ready keys wait to be served (checked by the dispatcher after a command). */
  get pending(): boolean {
    return this.ready.length !== 0;
  }

  /** Serve the clients blocked on ready keys (Redis's handleClientsBlockedOnKeys). */
  serveReady(): void {
    if (this.serving) return;
    this.serving = true;
    try {
      // Serving may make keys ready again (BLMOVE pushes to its destination): each round
      // takes the current list; keys signalled meanwhile go to the next round, unless they
      // are still waiting for their turn in this one.
      while (this.ready.length > 0) {
        const round = this.ready;
        this.ready = [];
        for (const r of round) {
          this.readySet[r.db]!.delete(r.key);
          this.serveKey(r.db, r.key);
        }
      }
    } finally {
      this.serving = false;
    }
  }

  private serveKey(db: number, key: string): void {
    const list = this.waiting[db]?.get(key);
    if (list === undefined) return;
    // First blocked, first served; a waiter that declines (empty, missing or other type)
    // keeps its place. A missing key is still offered: a stream group reader answers with an
    // error when its stream was deleted, as Redis 7 does; list and zset waiters decline.
    for (const w of list.slice()) {
      if (this.byClient.get(w.client) !== w) continue;
      const c = w.client;
      // The served command runs in the waiter's database, with the time of now.
      const saved = c.dbIndex;
      c.dbIndex = w.db;
      this.eng.now = Date.now();
      let served: boolean;
      try {
        served = w.spec.serve(key, w.out);
      } finally {
        c.dbIndex = saved;
      }
      if (!served) continue;
      this.remove(w);
      c.transport.requestFlush();
      c.transport.resume();
    }
  }

  private expire(w: Waiter): void {
    if (this.byClient.get(w.client) !== w) return;
    if (Date.now() < w.spec.deadline) return this.arm(w); // a wait longer than one timer
    this.remove(w);
    w.spec.timeout(w.out);
    w.client.transport.requestFlush();
    w.client.transport.resume();
  }

  /** CLIENT UNBLOCK: false when the client is not blocked. */
  unblock(c: Client, withError: boolean): boolean {
    const w = this.byClient.get(c);
    if (w === undefined) return false;
    this.remove(w);
    if (withError) w.out.error('UNBLOCKED client unblocked via CLIENT UNBLOCK');
    else w.spec.timeout(w.out);
    c.transport.requestFlush();
    c.transport.resume();
    return true;
  }

  /** Stop waiting without a reply (disconnect, RESET). */
  cancel(c: Client): void {
    const w = this.byClient.get(c);
    if (w !== undefined) this.remove(w);
  }

  private remove(w: Waiter): void {
    this.byClient.delete(w.client);
    w.client.blocked = false;
    if (w.timer) clearTimeout(w.timer);
    const keys = this.waiting[w.db];
    if (keys === undefined) return;
    for (const key of w.spec.keys) {
      const list = keys.get(key);
      if (list === undefined) continue;
      const i = list.indexOf(w);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) keys.delete(key);
    }
  }
}
