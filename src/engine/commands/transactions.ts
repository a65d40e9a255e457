/**
 * Transactions: MULTI EXEC DISCARD WATCH UNWATCH.
 *
 * Queueing happens in the dispatcher (commands are cloned: their argv views die with the read).
 * EXEC replays the queue through callNext() with the time frozen, as Redis does.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import type { Client } from '../client.js';
import { callNext, startClock } from '../dispatch.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { clientInfo } from './client.js';

/** Forget the transaction state (EXEC, DISCARD, RESET). */
export function discardTransaction(c: Client): void {
  c.multi = null;
  c.multiError = false;
  unwatchAll(c);
}

/** Drop every WATCH of the client. */
export function unwatchAll(c: Client): void {
  for (const w of c.watched) {
    const db = c.engine.dbs[w.db];
    const set = db.watchers.get(w.key);
    if (set !== undefined) {
      set.delete(c);
      if (set.size === 0) db.watchers.delete(w.key);
    }
  }
  c.watched = [];
  c.dirtyCas = false;
}

/** A watched key that existed at WATCH time and has expired since also aborts EXEC (Redis 7). */
function watchedKeyExpired(c: Client): boolean {
  const now = c.engine.now;
  for (const w of c.watched) {
    if (w.expired) continue;
    const e = c.engine.dbs[w.db].peek(w.key);
    if (e !== undefined && e.exp !== 0 && e.exp < now) return true;
  }
  return false;
}

// MULTI
function multiCommand(c: Client, _argv: Argv, out: ReplySink): void {
  if (c.multi !== null) {
    out.error(E.NESTED_MULTI);
    return;
  }
  c.multi = [];
  c.multiError = false;
  out.ok();
}

// EXEC
function execCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const queue = c.multi;
  if (queue === null) {
    out.error(E.EXEC_NO_MULTI);
    return;
  }
  if (c.multiError) {
    discardTransaction(c);
    out.error(E.EXECABORT);
    return;
  }
  if (c.dirtyCas || watchedKeyExpired(c)) {
    discardTransaction(c);
    out.nilArray();
    return;
  }
  c.multi = null;
  unwatchAll(c);
  const eng = c.engine;
  eng.inExec = true;
  try {
    out.array(queue.length);
    startClock(c);
    for (const q of queue) {
      // Redis re-checks ACLs at EXEC: the rules may have changed since the command was queued.
      const r = c.aclUser.unrestricted ? null : eng.acl.check(c.aclUser, q.def, q.argv);
      if (r !== null) {
        eng.acl.logDenial(r, q.def, q.argv, 'multi', c.user, clientInfo(c, eng.now, null));
        out.error('NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: '
          + (r.reason === 'command' ? 'no permission to execute the command or subcommand'
            : r.reason === 'key' ? 'no permission to touch the specified keys' : 'no permission to access one of the channels used as arguments'));
        continue;
      }
      callNext(c, q.def, q.argv, out);
    }
  } finally {
    eng.inExec = false;
  }
}

// DISCARD
function discardCommand(c: Client, _argv: Argv, out: ReplySink): void {
  if (c.multi === null) {
    out.error(E.DISCARD_NO_MULTI);
    return;
  }
  discardTransaction(c);
  out.ok();
}

// WATCH key [key ...]
function watchCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (c.multi !== null) {
    out.error(E.WATCH_IN_MULTI);
    return;
  }
  // A client that already has a failed CAS keeps it; watching more keys changes nothing.
  const db = c.db;
  for (let i = 1; i < argv.count; i++) {
    const key = argv.key(i);
    if (c.watched.some((w) => w.db === db.index && w.key === key)) continue;
    const e = db.peek(key);
    c.watched.push({ db: db.index, key, expired: e !== undefined && e.exp !== 0 && e.exp < c.engine.now });
    let set = db.watchers.get(key);
    if (set === undefined) db.watchers.set(key, (set = new Set()));
    set.add(c);
  }
  out.ok();
}

// UNWATCH
function unwatchCommand(c: Client, _argv: Argv, out: ReplySink): void {
  unwatchAll(c);
  out.ok();
}

export default family('transactions', ['transaction'], [
  //   name       arity  flags                                                    keys        handler
  row('multi',      1,   F.NOSCRIPT | F.LOADING | F.STALE | F.FAST | F.ALLOW_BUSY | F.NO_REST, [0, 0, 0], multiCommand),
  row('exec',       1,   F.NOSCRIPT | F.LOADING | F.STALE | F.SKIP_SLOWLOG | F.NO_REST, [0, 0, 0], execCommand),
  row('discard',    1,   F.NOSCRIPT | F.LOADING | F.STALE | F.FAST | F.ALLOW_BUSY | F.NO_REST, [0, 0, 0], discardCommand),
  row('watch',     -2,   F.NOSCRIPT | F.LOADING | F.STALE | F.FAST | F.ALLOW_BUSY | F.NO_REST, [1, -1, 1], watchCommand),
  row('unwatch',    1,   F.NOSCRIPT | F.LOADING | F.STALE | F.FAST | F.ALLOW_BUSY | F.NO_REST, [0, 0, 0], unwatchCommand),
]);
