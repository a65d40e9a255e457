/**
 * Client-side caching (Redis's tracking.c): which clients read which keys, and the
 * invalidation messages sent when those keys change.
 *
 * Default mode: a read-only command run by a tracking client records its keys in `table`
 * (key -> client ids); the first change to such a key sends one invalidation to each of them
 * and forgets the key. BCAST mode: nothing is recorded per read; every change to a key under
 * one of the registered prefixes is collected and sent, per prefix, once the current batch of
 * input has been processed (Redis's beforeSleep).
 *
 * Messages go to the client itself as a RESP3 push (`>2 invalidate [keys]`), or to its REDIRECT
 * client: as a push when that one speaks RESP3, as a `__redis__:invalidate` Pub/Sub message when
 * it is a subscribed RESP2 client. A RESP2 client without redirection gets nothing (RESP2 has
 * no out-of-band replies). FLUSHDB/FLUSHALL send a null invalidation ("everything") to every
 * tracking client.
 *
 * Cost when unused: Db.modified() and the dispatcher test `live` / `clients` (one load and
 * compare each) and do nothing more while they are 0.
 */
import type { Argv } from '../resp/argv.js';
import { RespWriter } from '../resp/writer.js';
import type { Client } from './client.js';
import type { CommandDef } from './command.js';
import type { Engine } from './engine.js';

/** Client.track bits (0: tracking off). */
export const TR = {
  ON: 1,
  BCAST: 2,
  OPTIN: 4,
  OPTOUT: 8,
  NOLOOP: 16,
  /** CLIENT CACHING YES (OPTIN) / NO (OPTOUT) given for the next command. */
  CACHING: 32,
  /** The REDIRECT client is gone. */
  BROKEN_REDIR: 64,
} as const;

/** One BCAST prefix: its clients and the keys changed under it since the last broadcast. */
interface Bcast {
  readonly clients: Set<Client>;
  /** Changed key -> the client that changed it last (NOLOOP clients skip their own). */
  keys: Map<string, Client | null>;
}

/** Scripts run read-only: their commands' keys are tracked, not the script's own (Redis). */
const NOT_TRACKED = new Set(['eval_ro', 'evalsha_ro', 'fcall_ro']);

const CHANNEL = '__redis__:invalidate';
const NULL2 = Buffer.from('$-1\r\n');
const NULL3 = Buffer.from('_\r\n');

export class Tracking {
  /** Clients with tracking on (INFO tracking_clients). */
  clients = 0;
  /** Entries in `table` + prefixes: Db.modified() has nothing to do while 0. */
  live = 0;
  /** Default mode: key -> ids of the clients that may have cached it. */
  private readonly table = new Map<string, Set<number>>();
  /** Sum of the table's id sets (INFO tracking_total_items). */
  items = 0;
  /** BCAST prefixes (kept sorted when read: Redis walks them in byte order). */
  private readonly prefixes = new Map<string, Bcast>();
  /** Keys to invalidate for the client being served, sent after its reply (null: a flush). */
  private pending: (string | null)[] = [];
  private broadcastQueued = false;
  /** Command sequence number of the last flush notified (FLUSHALL flushes every db once). */
  private flushSeq = -1;

  constructor(private readonly eng: Engine) {}

  get keys(): number {
    return this.table.size;
  }

  get prefixCount(): number {
    return this.prefixes.size;
  }

  // ---------------------------------------------------------------- client state

  /** CLIENT TRACKING ON (options checked by the caller). */
  enable(c: Client, redirect: number, options: number, prefixes: readonly string[]): void {
    if (!(c.track & TR.ON)) this.clients++;
    c.track = TR.ON | (c.track & TR.CACHING); // the other options are set anew
    c.trackRedirect = redirect;
    if (options & TR.BCAST) {
      c.track |= TR.BCAST;
      if (prefixes.length === 0) this.addPrefix(c, '');
      for (const p of prefixes) this.addPrefix(c, p);
    }
    c.track |= options & (TR.OPTIN | TR.OPTOUT | TR.NOLOOP);
  }

  /** CLIENT TRACKING OFF, RESET, disconnect. */
  disable(c: Client): void {
    if (c.track & TR.BCAST && c.trackPrefixes !== null) {
      for (const p of c.trackPrefixes) {
        const bs = this.prefixes.get(p);
        if (bs === undefined) continue;
        bs.clients.delete(c);
        if (bs.clients.size === 0) {
          this.prefixes.delete(p);
          this.live--;
        }
      }
      c.trackPrefixes = null;
    }
    if (c.track & TR.ON) {
      this.clients--;
      c.track = 0;
    }
  }

  private addPrefix(c: Client, p: string): void {
    let bs = this.prefixes.get(p);
    if (bs === undefined) {
      bs = { clients: new Set(), keys: new Map() };
      this.prefixes.set(p, bs);
      this.live++;
    }
    if (c.trackPrefixes === null) c.trackPrefixes = new Set();
    if (!c.trackPrefixes.has(p)) {
      c.trackPrefixes.add(p);
      bs.clients.add(c);
    }
  }

  // ---------------------------------------------------------------- reads

  /**
   * After a read-only command run for `c` (the client that sent it, also for the commands of
   * its scripts and transactions): remember its keys, unless OPTIN/OPTOUT say otherwise.
   */
  remember(c: Client, def: CommandDef, argv: Argv): void {
    const f = c.track;
    if (!(f & TR.ON) || f & TR.BCAST || NOT_TRACKED.has(def.name)) return;
    if ((f & TR.OPTIN && !(f & TR.CACHING)) || (f & TR.OPTOUT && f & TR.CACHING)) return;
    const idx = this.eng.registry.keyIndexes(def, argv);
    for (const i of idx) {
      const key = argv.key(i);
      let ids = this.table.get(key);
      if (ids === undefined) {
        ids = new Set();
        this.table.set(key, ids);
        this.live++;
      }
      if (!ids.has(c.id)) {
        ids.add(c.id);
        this.items++;
      }
    }
  }

  // ---------------------------------------------------------------- writes

  /**
   * A key changed (Db.modified): invalidate it for the clients that read it, and collect it for
   * the BCAST prefixes it falls under (`bcast` false: the table's own eviction).
   */
  invalidate(key: string, bcast = true): void {
    const current = this.eng.current;
    if (bcast && this.prefixes.size !== 0) this.collect(key, current);
    const ids = this.table.get(key);
    if (ids === undefined) return;
    const clients = this.eng.clients;
    for (const id of ids) {
      const target = clients.get(id);
      // A client that switched to BCAST since gets nothing for what it read before.
      if (target === undefined || !(target.track & TR.ON) || target.track & TR.BCAST) continue;
      if (target === current) {
        // NOLOOP: not about its own changes; else after the reply of the command running.
        if (!(target.track & TR.NOLOOP)) this.pending.push(key);
        continue;
      }
      this.send(target, key);
    }
    this.items -= ids.size;
    this.table.delete(key);
    this.live--;
  }

  private collect(key: string, by: Client | null): void {
    for (const [p, bs] of this.prefixes) {
      if (key.length < p.length || !key.startsWith(p)) continue;
      bs.keys.delete(key); // the last writer counts (NOLOOP)
      bs.keys.set(key, by);
    }
    if (!this.broadcastQueued) {
      this.broadcastQueued = true;
      queueMicrotask(this.broadcast);
    }
  }

  /** Once the current input is processed: one message per prefix with the keys changed under it. */
  private readonly broadcast = (): void => {
    this.broadcastQueued = false;
    const prefixes = [...this.prefixes.keys()].sort();
    for (const p of prefixes) {
      const bs = this.prefixes.get(p)!;
      if (bs.keys.size === 0) continue;
      const keys = [...bs.keys.keys()].sort();
      for (const c of bs.clients) {
        if (c.closed) continue;
        const list = c.track & TR.NOLOOP ? keys.filter((k) => bs.keys.get(k) !== c) : keys;
        if (list.length > 0) this.send(c, list);
      }
      bs.keys = new Map();
    }
  };

  /** FLUSHDB / FLUSHALL (Db.flush): a null invalidation to every tracking client, once per command. */
  flushed(): void {
    const seq = this.eng.stats.totalCommands;
    if (seq === this.flushSeq) return;
    this.flushSeq = seq;
    if (this.clients !== 0) {
      const current = this.eng.current;
      for (const c of this.eng.clients.values()) {
        if (!(c.track & TR.ON) || c.closed) continue;
        if (c === current) this.pending.push(null);
        else this.send(c, null);
      }
    }
    this.live -= this.table.size;
    this.table.clear();
    this.items = 0;
  }

  // ---------------------------------------------------------------- command boundaries

  /** Before a command: keep the table within tracking-table-max-keys. */
  beforeCommand(): void {
    const max = this.eng.cfgInt('tracking-table-max-keys');
    if (max === 0 || this.table.size <= max) return;
    // Redis removes random keys (a random walk, bounded effort); the oldest go first here.
    for (const key of this.table.keys()) {
      this.invalidate(key, false);
      if (this.table.size <= max) return;
    }
  }

  /** After a command of `c`: its own invalidations, and the end of a CLIENT CACHING scope. */
  afterCommand(c: Client): void {
    if (this.pending.length !== 0) {
      const q = this.pending;
      this.pending = [];
      if (!c.closed) for (const k of q) this.send(c, k);
    }
    // CACHING lasts for the next command (a whole MULTI ... EXEC; any CLIENT subcommand keeps it).
    if (c.track & TR.CACHING && c.multi === null && !c.lastCommand.startsWith('client|')) c.track &= ~TR.CACHING;
  }

  // ---------------------------------------------------------------- messages

  /**
   * Redis's sendTrackingMessage: `keys` a key, a list of keys (BCAST), or null (a flush: the
   * null of the tracking client's own protocol).
   */
  private send(c: Client, keys: string | string[] | null): void {
    let to = c;
    if (c.trackRedirect !== 0) {
      const r = this.eng.clients.get(c.trackRedirect);
      if (r === undefined || r.closed) {
        c.track |= TR.BROKEN_REDIR;
        if (c.resp === 3 && !c.closed) {
          c.flushPushed?.();
          const out = c.out;
          out.push(2);
          out.bulkLatin1('tracking-redir-broken');
          out.int(c.trackRedirect);
          c.transport.requestFlush();
        }
        return;
      }
      to = r;
    }
    to.flushPushed?.(); // pub/sub messages queued before this invalidation go first
    const out = to.out;
    if (to.resp === 3) {
      out.push(2);
      out.bulkLatin1('invalidate');
    } else if (to !== c && to.subscriptions > 0) {
      out.array(3);
      out.bulkLatin1('message');
      out.bulkLatin1(CHANNEL);
    } else {
      return; // RESP2 without redirection: nowhere to send it
    }
    if (keys === null) {
      const nul = c.resp === 3 ? NULL3 : NULL2;
      if (out instanceof RespWriter) out.raw(nul);
      else out.nil();
    } else if (typeof keys === 'string') {
      out.array(1);
      out.bulkLatin1(keys);
    } else {
      out.array(keys.length);
      for (const k of keys) out.bulkLatin1(k);
    }
    to.transport.requestFlush();
  }

  // ---------------------------------------------------------------- CLIENT TRACKINGINFO

  /** The client's prefixes in byte order. */
  prefixesOf(c: Client): string[] {
    return c.trackPrefixes === null ? [] : [...c.trackPrefixes].sort();
  }
}
