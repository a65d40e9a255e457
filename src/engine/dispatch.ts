/**
 * The single entry for every command, whatever the transport. Gate order follows Redis's
 * processCommand so that rejections (and their effect on MULTI) behave the same:
 *
 *   1. lookup            unknown command / unknown subcommand
 *   2. arity             wrong number of arguments
 *   3. auth              NOAUTH unless the row is NO_AUTH
 *   4. NO_MULTI          refused inside MULTI
 *   5. transport rules   (REST: NO_REST, read-only tokens) via `c.deny`
 *   6. disk error        MISCONF for writes (and PING) while persistence cannot write
 *   7. subscribe context RESP2 connection with subscriptions: only SUBSCRIBE_CTX rows
 *                        (a RESP3 connection runs anything: messages are push frames)
 *   8. MULTI             queue it (+QUEUED) unless EXEC/DISCARD/MULTI/WATCH/QUIT/RESET
 *   9. call              handler, statistics, MONITOR feed
 *
 * A rejection at steps 1-7 while in MULTI flags the transaction: EXEC answers EXECABORT.
 */
import { performance } from 'node:perf_hooks'; // a module binding: the global is an accessor (slow load)
import type { Argv } from '../resp/argv.js';
import { type ReplySink, replyStats, countError } from '../resp/reply-sink.js';
import { E, CommandError, unknownCommand, unknownSubcommand, wrongArity } from '../resp/errors.js';
import { ReplyMode, type Client } from './client.js';
import type { CommandDef } from './command.js';
import { F } from './flags.js';
import { feedMonitors } from './monitor.js';
import { discardTransaction } from './commands/transactions.js';
import { clientInfo } from './commands/client.js';
import { CS_CALLS, CS_FAILED, CS_REJECTED, CS_ROW, CS_USEC, recordLatency } from './engine.js';
import { EVICT_FAIL, OOM, performEvictions, rejectOnOom } from './evict.js';
import { pausedFor, postpone, runner } from './pause.js';
import { cstr } from '../bytes.js';

const DEBUG_REFUSED = 'ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.';

/** Redis's allowProtectedAction for enable-debug-command: `yes`, or `local` for a loopback (or Unix socket) client. */
export function debugAllowed(c: Client): boolean {
  const mode = c.engine.cfg('enable-debug-command');
  if (mode === 'yes') return true;
  if (mode !== 'local') return false;
  return c.transport.kind === 'internal' || c.addr.startsWith('127.0.0.1:') || c.addr.startsWith('::1:') || c.addr.startsWith('/');
}

/** A sink that drops everything (CLIENT REPLY OFF/SKIP); exported so CLIENT REPLY ON and RESET can answer past it. */
export const NULL_SINK: ReplySink = {
  ok() {}, simple() {}, error(msg: string) { countError(msg); }, int() {}, bulk() {}, bulkLatin1() {}, bulkLatin1Range() {}, bulkInt() {}, bulkBytes() {},
  bulkText() {}, nil() {}, array() {}, nilArray() {},
  map() {}, set() {}, push() {}, double() {}, bool() {}, verbatim() {}, bigNumber() {}, pairs() {}, pair() {}, assoc() {}, assocItem() {}, attribute: () => false,
};

/**
 * Extra per-transport admission rule (REST read-only token, ACL); returns an error or null.
 * `inScript`: the command is called by a script the client runs (redis.call): the token's
 * permissions hold there too, the transport's own limits (NO_REST) do not.
 */
export type DenyHook = (c: Client, def: CommandDef, argv: Argv, inScript?: boolean) => string | null;

export function execute(c: Client, argv: Argv, out: ReplySink): void {
  // perf: nothing of client-side caching while no client tracks.
  if (c.engine.tracking.clients === 0) executeCommand(c, argv, out);
  else executeTracked(c, argv, out);
}

/**
 * A command while some client tracks keys: `engine.current` says on whose behalf commands run
 * (NOLOOP, invalidations of a client's own reads, scripts and EXEC included); saved because a
 * busy script serves other clients from inside its command.
 */
function executeTracked(c: Client, argv: Argv, out: ReplySink): void {
  const eng = c.engine;
  const prev = eng.current;
  eng.current = c;
  eng.tracking.beforeCommand();
  executeCommand(c, argv, out);
  eng.tracking.afterCommand(c);
  eng.current = prev;
}

function executeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const eng = c.engine;
  // perf: one clock read per command (clock reads cost ~50 ns each on VMs). In a pipelined
  // batch the transport hands over the end time of the previous command (clockNext); the wall
  // time is derived from the same monotonic reading (Engine.wallBase).
  // The unary plus keeps t0 an unboxed double: without it the optimiser merged the field's
  // double with the call's tagged result into a tagged value, a heap number per command.
  let t0 = eng.clockNext;
  if (t0 < 0) t0 = +performance.now();
  else eng.clockNext = -1;
  eng.lastClock = t0;
  if (!eng.inExec) eng.now = Math.floor(eng.wallBase + t0);
  c.lastInteraction = eng.now;
  if (c.replyMode !== ReplyMode.ON) {
    if (c.replyMode === ReplyMode.SKIP_NEXT) {
      c.replyMode = ReplyMode.SKIP;
    } else if (c.replyMode === ReplyMode.SKIP) {
      c.replyMode = ReplyMode.ON;
      out = NULL_SINK;
    } else {
      out = NULL_SINK;
    }
  }

  const def = eng.registry.lookup(argv);
  // Redis sets lastcmd at lookup, before any gate: CLIENT LIST shows cmd=<this command>.
  const last = def === undefined ? 'NULL' : def.name;
  if (c.lastCommand !== last) c.lastCommand = last; // perf: no store (and write barrier) when unchanged
  if (def === undefined) {
    const top = eng.registry.lookupName(argv.buf, argv.start[0], argv.end[0]);
    if (top !== undefined && top.subcommands !== undefined) {
      reject(c, out, unknownSubcommand(argv.key(0), cstr(argv.key(1))));
    } else {
      const args: string[] = [];
      for (let i = 1; i < argv.count && i < 64; i++) args.push(cstr(argv.key(i)));
      reject(c, out, unknownCommand(cstr(argv.key(0)), args));
    }
    return;
  }
  const arity = def.arity;
  if ((arity > 0 && argv.count !== arity) || argv.count < -arity) {
    rejectCmd(c, def, out, wrongArity(def.name));
    return;
  }
  // Protected commands (DEBUG behind enable-debug-command) are refused before authentication, as in Redis.
  if (def === eng.debugDef && !debugAllowed(c)) {
    rejectCmd(c, def, out, DEBUG_REFUSED);
    return;
  }
  if (!c.authenticated && !(def.flags & F.NO_AUTH)) {
    rejectCmd(c, def, out, E.NOAUTH);
    return;
  }
  if (c.multi !== null && def.flags & F.NO_MULTI) {
    rejectCmd(c, def, out, E.NOT_IN_MULTI);
    return;
  }
  if (!c.aclUser.unrestricted) {
    const r = eng.acl.check(c.aclUser, def, argv);
    if (r !== null) {
      eng.acl.logDenial(r, def, argv, c.multi !== null ? 'multi' : 'toplevel', c.user, clientInfo(c, eng.now, argv));
      rejectCmd(c, def, out, r.reason === 'command'
        ? `NOPERM this user has no permissions to run the '${def.name}' command`
        : `NOPERM this user has no permissions to access one of the ${r.reason === 'key' ? 'keys' : 'channels'} used as arguments`);
      return;
    }
  }
  if (c.deny !== null) {
    const err = c.deny(c, def, argv);
    if (err !== null) {
      rejectCmd(c, def, out, err);
      return;
    }
  }
  if (eng.maxmemory !== 0 && eng.busyReply === null) {
    // Redis's processCommand: evict first; out of memory, DENYOOM commands are refused.
    const oom = performEvictions(eng) === EVICT_FAIL;
    eng.oomState = oom;
    if (oom && rejectOnOom(c, def, argv)) {
      rejectCmd(c, def, out, OOM);
      return;
    }
  }
  if (eng.writeDenied !== null && deniedByDiskError(c, def)) {
    rejectCmd(c, def, out, eng.writeDenied);
    return;
  }
  if (c.subscriptions > 0 && c.resp === 2 && !(def.flags & F.SUBSCRIBE_CTX)) {
    rejectCmd(c, def, out,
      `ERR Can't execute '${def.name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context`);
    return;
  }
  if (eng.busyReply !== null && !(def.flags & F.ALLOW_BUSY)) {
    rejectCmd(c, def, out, eng.busyReply);
    return;
  }
  // CLIENT PAUSE: Redis checks it here, before queueing in MULTI.
  if (eng.pauseUntil !== 0 && pausedFor(eng, c, def)) {
    postpone(eng, c, argv, out);
    return;
  }
  if (c.multi !== null && eng.registry.runsInMulti[def.id] === 0) {
    c.multi.push({ def, argv: argv.clone() });
    out.simple('QUEUED');
    return;
  }
  callTimed(c, def, argv, out);
  // Clients blocked on keys this command (or whole EXEC) made ready are served now; not while
  // a busy script runs (its writes made them ready: they are served as it ends).
  if (eng.blocking.pending && eng.busyReply === null) eng.blocking.serveReady();
}

/** Nesting of call(): EXEC and scripts call commands inside their own call. */
let callDepth = 0;

/** Run a resolved command: handler, statistics, MONITOR. Used by scripts (redis.call). */
export function call(c: Client, def: CommandDef, argv: Argv, out: ReplySink): void {
  c.engine.lastClock = performance.now();
  callTimed(c, def, argv, out);
}

/**
 * EXEC's queued commands: startClock() once, then callNext() for each; a command starts when
 * the one before it ended (as a pipelined command does, clockNext): one clock read per command
 * instead of two (~40 ns each here).
 */
export function startClock(c: Client): void {
  c.engine.lastClock = performance.now();
}

export function callNext(c: Client, def: CommandDef, argv: Argv, out: ReplySink): void {
  callTimed(c, def, argv, out);
}

/**
 * call() of a command whose start time is `engine.lastClock` (executeCommand's clock reading).
 * perf: the time goes through the engine's field, not an argument: a double argument to a call
 * that is not inlined is boxed, a heap number per command.
 */
function callTimed(c: Client, def: CommandDef, argv: Argv, out: ReplySink): void {
  const eng = c.engine;
  const t0 = eng.lastClock;
  // Errors a top-level command did not cause (another client's, a rejection) are not its own.
  if (callDepth++ === 0) replyStats.mark = replyStats.errors;
  if (eng.beforeWrite !== null && def.flags & F.WRITE) eng.beforeWrite(c, def, argv);
  try {
    def.handler(c, argv, out);
  } catch (err) {
    if (err instanceof CommandError) {
      out.error(err.message);
    } else {
      console.error(`internal error in '${def.name}':`, err);
      out.error(E.INTERNAL);
    }
  }
  callDepth--;
  const t1 = performance.now();
  eng.lastCallEnd = t1;
  eng.lastClock = t1;
  const usec = (t1 - t0) * 1000;
  const stats = eng.stats;
  const cmd = stats.cmd;
  const row = def.id * CS_ROW;
  cmd[row + CS_USEC] += usec;
  cmd[row + CS_CALLS]++;
  recordLatency(stats.hist, def.id, usec);
  if (usec >= eng.slowlog.minUsec) eng.slowlog.record(c, def, argv, usec);
  if (replyStats.errors > replyStats.mark) cmd[row + CS_FAILED]++;
  replyStats.mark = replyStats.errors;
  // Client-side caching: the keys read for a tracking client (also by its scripts and EXEC).
  if (eng.tracking.clients !== 0 && def.flags & F.READONLY && eng.current !== null) {
    eng.tracking.remember(eng.current, def, argv);
  }
  stats.totalCommands++;
  if (eng.monitors.size !== 0 && !(def.flags & (F.SKIP_MONITOR | F.ADMIN))) feedMonitors(c, argv);
}

/**
 * While the disk refuses writes (MISCONF), Redis refuses write commands, EXEC of a transaction
 * holding one, and PING (so that health checks notice).
 */
function deniedByDiskError(c: Client, def: CommandDef): boolean {
  if (def.flags & F.WRITE) return true;
  if (def.name === 'ping') return true;
  if (def.name === 'exec' && c.multi !== null) return c.multi.some((q) => (q.def.flags & F.WRITE) !== 0);
  return false;
}

function reject(c: Client, out: ReplySink, msg: string): void {
  if (c.multi !== null) c.multiError = true;
  out.error(msg);
}

function rejectCmd(c: Client, def: CommandDef, out: ReplySink, msg: string): void {
  c.engine.stats.cmd[def.id * CS_ROW + CS_REJECTED]++;
  if (def.name === 'exec') {
    // Redis's execCommandAbort: a rejected EXEC also discards the transaction.
    discardTransaction(c);
    out.error('EXECABORT Transaction discarded because of: ' + (msg.startsWith('ERR ') ? msg.slice(4) : msg));
    return;
  }
  reject(c, out, msg);
}

runner.execute = execute;
