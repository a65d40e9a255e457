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
  timer: NodeJS.Timeout | null;
}

export class Blocking implements KeyspaceListener {
  /** "db\0key" -> waiters in blocking order. */
  private readonly byKey = new Map<string, Waiter[]>();
  private readonly byClient = new Map<Client, Waiter>();
  private readonly ready = new Set<string>();
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

  /** Block `c` until a key is served, the deadline passes, or it is unblocked. */
  block(c: Client, spec: WaitSpec): void {
    const w: Waiter = { client: c, db: c.dbIndex, spec, timer: null };
    this.byClient.set(c, w);
    c.blocked = true;
    for (const key of spec.keys) {
      const id = `${w.db}\0${key}`;
      const list = this.byKey.get(id);
      if (list) {
        if (!list.includes(w)) list.push(w);
      } else this.byKey.set(id, [w]);
    }
    if (spec.deadline > 0) {
      w.timer = setTimeout(() => this.expire(w), Math.max(0, spec.deadline - Date.now()));
    }
  }

  // KeyspaceListener: a change to a key someone waits on makes it ready.
  keyChanged(db: Db, key: string): void {
    if (this.byKey.size === 0) return;
    const id = `${db.index}\0${key}`;
    if (this.byKey.has(id)) this.ready.add(id);
  }

  /**
   * FLUSHDB/FLUSHALL: every key waited on in that database is gone; let its waiters look
   * (Redis's scanDatabaseForDeletedKeys: blocked XREADGROUP readers get their error).
   */
  flushed(db: Db): void {
    if (this.byKey.size === 0) return;
    const prefix = `${db.index}\0`;
    for (const id of this.byKey.keys()) if (id.startsWith(prefix)) this.ready.add(id);
  }

  /** True when some ready keys wait to be served (checked by the dispatcher after a command). */
  get pending(): boolean {
    return this.ready.size !== 0;
  }

  /** Serve the clients blocked on ready keys (Redis's handleClientsBlockedOnKeys). */
  serveReady(): void {
    if (this.serving) return;
    this.serving = true;
    try {
      // Serving may make other keys ready (BLMOVE pushes to its destination): loop until quiet.
      while (this.ready.size > 0) {
        const ids = [...this.ready];
        this.ready.clear();
        for (const id of ids) this.serveKey(id);
      }
    } finally {
      this.serving = false;
    }
  }

  private serveKey(id: string): void {
    const list = this.byKey.get(id);
    if (list === undefined) return;
    const key = id.slice(id.indexOf('\0') + 1);
    for (const w of [...list]) {
      if (!this.byClient.has(w.client)) continue;
      const c = w.client;
      // The served command runs in the waiter's database, with the time of now.
      const saved = c.dbIndex;
      c.dbIndex = w.db;
      this.eng.now = Date.now();
      const served = w.spec.serve(key, c.out);
      c.dbIndex = saved;
      if (!served) continue;
      this.remove(w);
      c.transport.requestFlush();
      c.transport.resume();
    }
  }

  private expire(w: Waiter): void {
    if (this.byClient.get(w.client) !== w) return;
    this.remove(w);
    w.spec.timeout(w.client.out);
    w.client.transport.requestFlush();
    w.client.transport.resume();
  }

  /** CLIENT UNBLOCK: false when the client is not blocked. */
  unblock(c: Client, withError: boolean): boolean {
    const w = this.byClient.get(c);
    if (w === undefined) return false;
    this.remove(w);
    if (withError) c.out.error('UNBLOCKED client unblocked via CLIENT UNBLOCK');
    else w.spec.timeout(c.out);
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
    for (const key of w.spec.keys) {
      const id = `${w.db}\0${key}`;
      const list = this.byKey.get(id);
      if (list === undefined) continue;
      const i = list.indexOf(w);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) this.byKey.delete(id);
    }
  }
}
