/**
 * CLIENT PAUSE as Redis 7.0 does it: while a pause is in force, the commands it covers (all
 * of them, or with WRITE those that may write or replicate: write commands, EVAL/FCALL,
 * PUBLISH, EXEC of a transaction holding one, and writes queued in MULTI) are postponed,
 * each client waiting in order, and run when the pause ends (its timeout or CLIENT UNPAUSE).
 * Keys do not expire meanwhile: the expiry cycle stops and an expired key reads as missing
 * without being deleted. REST requests wait too, whole (http/server.ts asks pauseCovers for
 * each command of a request and waits with afterPause): a request holding a command the pause
 * covers is answered once the pause ends.
 */
import type { Argv } from '../resp/argv.js';
import type { ReplySink } from '../resp/reply-sink.js';
import type { Client } from './client.js';
import type { CommandDef } from './command.js';
import type { Engine } from './engine.js';
import { F } from './flags.js';

interface Postponed {
  client: Client;
  argv: Argv;
  out: ReplySink;
}

const postponed = new WeakMap<Engine, Postponed[]>();
const waiters = new WeakMap<Engine, (() => void)[]>();
const timers = new WeakMap<Engine, NodeJS.Timeout>();

/** Whether a pause is in force now (ending it first when its time is up). */
export function pauseActive(eng: Engine): boolean {
  if (eng.pauseUntil === 0) return false;
  if (Date.now() < eng.pauseUntil) return true;
  // Over: the postponed commands run after the current one (never inside it).
  eng.pauseUntil = 0;
  queueMicrotask(() => endPause(eng));
  return false;
}

/**
 * Redis 7.0's CMD_MAY_REPLICATE commands that COMMAND does not show as such (and so our
 * table's flags do not carry): they wait under a WRITE pause.
 */
const MAY_REPLICATE = new Set(['publish', 'spublish', 'pfcount', 'eval', 'evalsha', 'fcall']);

function mayWrite(def: CommandDef): boolean {
  return (def.flags & (F.WRITE | F.MAY_REPLICATE)) !== 0 || MAY_REPLICATE.has(def.name);
}

/** True when the command must wait for the end of the pause. */
export function pausedFor(eng: Engine, c: Client, def: CommandDef): boolean {
  if (c.transport.kind !== 'tcp' || !pauseActive(eng)) return false;
  if (!eng.pauseWriteOnly) return true;
  if (mayWrite(def)) return true;
  return def.name === 'exec' && c.multi !== null && c.multi.some((q) => mayWrite(q.def));
}

/** Whether a pause in force covers `def` for a client that is not a connection (REST). */
export function pauseCovers(eng: Engine, def: CommandDef): boolean {
  if (!pauseActive(eng)) return false;
  return !eng.pauseWriteOnly || mayWrite(def);
}

/** Run `fn` when the pause ends, after the postponed commands of the connections. */
export function afterPause(eng: Engine, fn: () => void): void {
  let list = waiters.get(eng);
  if (list === undefined) waiters.set(eng, (list = []));
  list.push(fn);
  armTimer(eng);
}

/** Hold the command until the pause ends; the connection reads no further command meanwhile. */
export function postpone(eng: Engine, c: Client, argv: Argv, out: ReplySink): void {
  let list = postponed.get(eng);
  if (list === undefined) postponed.set(eng, (list = []));
  list.push({ client: c, argv: argv.clone(), out });
  c.blocked = true;
  armTimer(eng);
}

/** (Re)arm the timer that ends the pause at its deadline. */
export function armTimer(eng: Engine): void {
  const old = timers.get(eng);
  if (old !== undefined) clearTimeout(old);
  if (eng.pauseUntil === 0) return;
  const t = setTimeout(() => {
    timers.delete(eng);
    if (eng.pauseUntil !== 0 && Date.now() >= eng.pauseUntil) endPause(eng);
    else armTimer(eng);
  }, Math.max(0, eng.pauseUntil - Date.now()) + 1);
  t.unref();
  timers.set(eng, t);
}

/** The runner of postponed commands (dispatch.ts's execute), set by the dispatcher. */
export const runner: { execute: ((c: Client, argv: Argv, out: ReplySink) => void) | null } = { execute: null };

/** End the pause: run the postponed commands in the order they arrived. */
export function endPause(eng: Engine): void {
  eng.pauseUntil = 0;
  eng.pauseWriteOnly = false;
  const t = timers.get(eng);
  if (t !== undefined) clearTimeout(t);
  timers.delete(eng);
  const list = postponed.get(eng);
  if (list !== undefined && list.length !== 0) {
    postponed.set(eng, []);
    for (const p of list) {
      const c = p.client;
      if (c.closed) continue;
      c.blocked = false;
      runner.execute!(c, p.argv, p.out);
      c.transport.requestFlush();
      if (!c.blocked) c.transport.resume();
    }
  }
  const w = waiters.get(eng);
  if (w !== undefined && w.length !== 0) {
    waiters.set(eng, []);
    // A waiter finding a new pause (a postponed CLIENT PAUSE ran) waits again.
    for (const fn of w) fn();
  }
}
