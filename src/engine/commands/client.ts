/**
 * CLIENT and its subcommands: ID SETNAME GETNAME LIST INFO KILL SETINFO NO-EVICT NO-TOUCH
 * REPLY PAUSE UNPAUSE UNBLOCK TRACKING CACHING GETREDIR TRACKINGINFO HELP.
 *
 * Replies, errors and CLIENT LIST's fields are Redis 7.0's; SETINFO and NO-TOUCH are Redis 7.2's
 * (SETINFO's values are kept, but CLIENT LIST shows 7.0's fields only). Client-side caching itself lives in engine/tracking.ts.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import { ReplyMode, type Client } from '../client.js';
import type { Engine } from '../engine.js';
import { NULL_SINK } from '../dispatch.js';
import { pauseActive, armTimer, endPause } from '../pause.js';
import { subscriptionCounts } from '../pubsub.js';
import { F } from '../flags.js';
import { container, family, row } from '../command.js';
import { validClientName } from './connection.js';
import { TR } from '../tracking.js';
import { cstr } from '../../bytes.js';
import { clientMemory } from '../client-evict.js';

// ---------------------------------------------------------------- CLIENT LIST lines

/** Client types of CLIENT LIST/KILL TYPE. Monitors are normal clients, as in Redis. */
const Type = { NORMAL: 0, SLAVE: 1, PUBSUB: 2, MASTER: 3 } as const;

/** Redis's getClientTypeByName; -1 when unknown. */
function clientTypeByName(name: string): number {
  switch (name.toLowerCase()) {
    case 'normal': return Type.NORMAL;
    case 'slave': case 'replica': return Type.SLAVE;
    case 'pubsub': return Type.PUBSUB;
    case 'master': return Type.MASTER;
    default: return -1;
  }
}

/** There are no replication links: a client is a subscriber in RESP2 subscribe mode, else normal. */
function clientType(c: Client): number {
  return c.subscriptions > 0 ? Type.PUBSUB : Type.NORMAL;
}

/** Redis's flag letters; N when none applies. */
function flagLetters(c: Client): string {
  let f = '';
  if (c.monitor) f += 'O';
  if (c.subscriptions > 0) f += 'P';
  if (c.multi !== null) f += 'x';
  if (c.track & TR.ON) f += 't';
  if (c.track & TR.BROKEN_REDIR) f += 'R';
  if (c.track & TR.BCAST) f += 'B';
  if (c.dirtyCas) f += 'd';
  if (c.noEvict) f += 'e';
  if (c.noTouch) f += 'T';
  return f === '' ? 'N' : f;
}

/** Bytes held by a MULTI queue (multi-mem). */
function multiBytes(c: Client): number {
  if (c.multi === null) return 0;
  let n = 0;
  for (const q of c.multi) n += q.argv.size();
  return n;
}

/** The transport's file descriptor when it has one (TCP sockets do on Unix), else -1 as Redis's fake clients. */
function fdOf(c: Client): number {
  const fd = (c.transport as { fd?: number }).fd;
  return typeof fd === 'number' ? fd : -1;
}

/**
 * One CLIENT LIST line (Redis 7.0 format, newline included). `argv` is the command being run
 * when the line describes the calling client (argv-mem), else null.
 */
function clientLine(c: Client, now: number, argv: Argv | null): string {
  return clientInfo(c, now, argv) + '\n';
}

/** One CLIENT LIST line without its newline (CLIENT INFO, ACL LOG's client-info). */
export function clientInfo(c: Client, now: number, argv: Argv | null): string {
  const qbuf = c.transport.inputBytes();
  const omem = c.transport.outputBytes();
  let argvMem = 0;
  if (argv !== null) for (let i = 0; i < argv.count; i++) argvMem += argv.len(i);
  const multiMem = multiBytes(c);
  // Replies are built in a slab shared by all clients: obl counts this client's bytes in the
  // slab, oll its queued chunks; rbs / rbp are the reply buffer Redis would have sized for
  // this client's traffic (client.ts), so tot-mem leaves rbs out (we do not hold it).
  const b = c.transport.bufferStats?.() ?? { qbufFree: 0, obl: 0, oll: 0 };
  const [sub, psub, ssub] = c.subscriptions === 0 || subscriptionCounts.of === null ? [0, 0, 0] : subscriptionCounts.of(c);
  return `id=${c.id} addr=${c.addr} laddr=${c.laddr} fd=${fdOf(c)} name=${c.name ?? ''}`
    + ` age=${Math.max(0, Math.floor((now - c.createdAt) / 1000))} idle=${Math.max(0, Math.floor((now - c.lastInteraction) / 1000))}`
    + ` flags=${flagLetters(c)} db=${c.dbIndex} sub=${sub} psub=${psub} ssub=${ssub}`
    + ` multi=${c.multi === null ? -1 : c.multi.length} qbuf=${qbuf} qbuf-free=${b.qbufFree} argv-mem=${argvMem}`
    + ` multi-mem=${multiMem} rbs=${c.rbs} rbp=${c.rbp} obl=${b.obl} oll=${b.oll} omem=${omem} tot-mem=${clientMemory(c) + argvMem}`
    + ` events=${omem > 0 ? 'rw' : 'r'} cmd=${c.lastCommand} user=${c.user} redir=${c.track & TR.ON ? c.trackRedirect : -1} resp=${c.resp}`;
}

/** Live clients in connection order (a killed client leaves the list at once, as in Redis). */
function* liveClients(eng: Engine): Generator<Client> {
  for (const c of eng.clients.values()) if (!c.closed) yield c;
}

// ---------------------------------------------------------------- handlers

// CLIENT ID
function idCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.int(c.id);
}

// CLIENT SETNAME connection-name
function setnameCommand(c: Client, argv: Argv, out: ReplySink): void {
  const name = argv.key(2);
  if (!validClientName(name)) {
    out.error(E.CLIENT_NAME);
    return;
  }
  c.name = name === '' ? null : name;
  out.ok();
}

// CLIENT GETNAME
function getnameCommand(c: Client, _argv: Argv, out: ReplySink): void {
  if (c.name === null) out.nil();
  else out.bulkLatin1(c.name);
}

// CLIENT INFO
function infoCommand(c: Client, argv: Argv, out: ReplySink): void {
  out.verbatim(Buffer.from(clientLine(c, c.engine.now, argv), 'latin1'));
}

// CLIENT LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]
function listCommand(c: Client, argv: Argv, out: ReplySink): void {
  const eng = c.engine;
  const now = eng.now;
  let text = '';
  // As Redis 7.0: one filter at most, TYPE with exactly one value.
  if (argv.count === 4 && argv.is(2, 'TYPE')) {
    const type = clientTypeByName(argv.key(3));
    if (type === -1) {
      out.error(`ERR Unknown client type '${cstr(argv.key(3))}'`);
      return;
    }
    for (const x of liveClients(eng)) {
      if (clientType(x) === type) text += clientLine(x, now, x === c ? argv : null);
    }
  } else if (argv.count > 3 && argv.is(2, 'ID')) {
    for (let i = 3; i < argv.count; i++) {
      const id = argv.int64(i);
      if (id === null) {
        out.error('ERR Invalid client ID');
        return;
      }
      const x = id > 0n && id <= BigInt(Number.MAX_SAFE_INTEGER) ? eng.clients.get(Number(id)) : undefined;
      if (x !== undefined && !x.closed) text += clientLine(x, now, x === c ? argv : null);
    }
  } else if (argv.count !== 2) {
    out.error(E.SYNTAX);
    return;
  } else {
    for (const x of liveClients(eng)) text += clientLine(x, now, x === c ? argv : null);
  }
  out.verbatim(Buffer.from(text, 'latin1'));
}

// CLIENT KILL ip:port
// CLIENT KILL [ID client-id] [TYPE type] [USER username] [ADDR ip:port] [LADDR ip:port] [SKIPME yes|no]
function killCommand(c: Client, argv: Argv, out: ReplySink): void {
  let addr: string | null = null;
  let laddr: string | null = null;
  let user: string | null = null;
  let type = -1;
  let id = 0;
  let skipme = true;
  const oldForm = argv.count === 3;
  if (oldForm) {
    addr = argv.key(2);
    skipme = false; // the old form may kill the calling connection
  } else {
    for (let i = 2; i < argv.count; i += 2) {
      const more = i + 1 < argv.count;
      if (argv.is(i, 'ID') && more) {
        const v = argv.int64(i + 1);
        if (v === null || v < 1n) {
          out.error('ERR client-id should be greater than 0');
          return;
        }
        id = v > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(v);
      } else if (argv.is(i, 'TYPE') && more) {
        type = clientTypeByName(argv.key(i + 1));
        if (type === -1) {
          out.error(`ERR Unknown client type '${cstr(argv.key(i + 1))}'`);
          return;
        }
      } else if (argv.is(i, 'ADDR') && more) {
        addr = argv.key(i + 1);
      } else if (argv.is(i, 'LADDR') && more) {
        laddr = argv.key(i + 1);
      } else if (argv.is(i, 'USER') && more) {
        user = argv.key(i + 1);
        // Only the default user exists until ACLs land.
        if (user !== 'default') {
          out.error(`ERR No such user '${cstr(user)}'`);
          return;
        }
      } else if (argv.is(i, 'SKIPME') && more) {
        if (argv.is(i + 1, 'YES')) skipme = true;
        else if (argv.is(i + 1, 'NO')) skipme = false;
        else {
          out.error(E.SYNTAX);
          return;
        }
      } else {
        out.error(E.SYNTAX);
        return;
      }
    }
  }
  let killed = 0;
  let killSelf = false;
  for (const x of [...liveClients(c.engine)]) {
    if (addr !== null && x.addr !== addr) continue;
    if (laddr !== null && x.laddr !== laddr) continue;
    if (type !== -1 && clientType(x) !== type) continue;
    if (id !== 0 && x.id !== id) continue;
    if (user !== null && x.user !== user) continue;
    if (x === c && skipme) continue;
    if (x === c) {
      killSelf = true;
    } else {
      x.transport.close(false);
      x.closed = true;
    }
    killed++;
  }
  if (oldForm) {
    if (killed === 0) out.error('ERR No such client');
    else out.ok();
  } else {
    out.int(killed);
  }
  // The caller is closed after its reply, as Redis's CLIENT_CLOSE_AFTER_REPLY.
  if (killSelf) c.transport.close(true);
}

// CLIENT SETINFO LIB-NAME libname | LIB-VER libver   (Redis 7.2)
function setinfoCommand(c: Client, argv: Argv, out: ReplySink): void {
  const isName = argv.is(2, 'LIB-NAME');
  if (!isName && !argv.is(2, 'LIB-VER')) {
    out.error(`ERR Unrecognized option '${cstr(argv.key(2))}'`);
    return;
  }
  const value = argv.key(3);
  if (!validClientName(value)) {
    out.error(`ERR ${cstr(argv.key(2))} cannot contain spaces, newlines or special characters.`);
    return;
  }
  if (isName) c.libName = value;
  else c.libVer = value;
  out.ok();
}

/** ON/OFF argument of NO-EVICT and NO-TOUCH; null (syntax error) otherwise. */
function onOff(argv: Argv, i: number): boolean | null {
  if (argv.is(i, 'ON')) return true;
  if (argv.is(i, 'OFF')) return false;
  return null;
}

// CLIENT NO-EVICT ON|OFF
function noEvictCommand(c: Client, argv: Argv, out: ReplySink): void {
  const v = onOff(argv, 2);
  if (v === null) {
    out.error(E.SYNTAX);
    return;
  }
  c.noEvict = v;
  out.ok();
}

// CLIENT NO-TOUCH ON|OFF   (Redis 7.2: reads by this client leave the keys' LRU alone)
function noTouchCommand(c: Client, argv: Argv, out: ReplySink): void {
  const v = onOff(argv, 2);
  if (v === null) {
    out.error(E.SYNTAX);
    return;
  }
  c.noTouch = v;
  out.ok();
}

// CLIENT REPLY ON|OFF|SKIP
function replyCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.is(2, 'ON')) {
    c.replyMode = ReplyMode.ON;
    // Redis clears the flags before replying: the OK goes out even when replies were off.
    (out === NULL_SINK ? c.out : out).ok();
  } else if (argv.is(2, 'OFF')) {
    c.replyMode = ReplyMode.OFF;
  } else if (argv.is(2, 'SKIP')) {
    // The dispatcher drops the reply of the next command when the mode is SKIP.
    if (c.replyMode !== ReplyMode.OFF) c.replyMode = ReplyMode.SKIP;
  } else {
    out.error(E.SYNTAX);
  }
}

/** Redis's getTimeoutFromObjectOrReply in milliseconds (CLIENT PAUSE, WAIT); null after an error reply. */
export function timeoutMsArg(argv: Argv, i: number, out: ReplySink): number | null {
  const ms = argv.int64(i);
  if (ms === null) {
    out.error('ERR timeout is not an integer or out of range');
    return null;
  }
  if (ms < 0n) {
    out.error('ERR timeout is negative');
    return null;
  }
  return Number(ms);
}

// CLIENT PAUSE timeout [WRITE|ALL]
function pauseCommand(c: Client, argv: Argv, out: ReplySink): void {
  let writeOnly = false;
  if (argv.count === 4) {
    if (argv.is(3, 'WRITE')) writeOnly = true;
    else if (!argv.is(3, 'ALL')) {
      out.error('ERR CLIENT PAUSE mode must be WRITE or ALL');
      return;
    }
  } else if (argv.count !== 3) {
    out.error(`ERR unknown subcommand or wrong number of arguments for '${cstr(argv.key(1))}'. Try CLIENT HELP.`);
    return;
  }
  const ms = timeoutMsArg(argv, 2, out);
  if (ms === null) return;
  const eng = c.engine;
  const until = Date.now() + ms;
  if (pauseActive(eng)) {
    // As pauseClients: the longer pause and the stricter mode (ALL) win.
    if (until > eng.pauseUntil) eng.pauseUntil = until;
    eng.pauseWriteOnly = eng.pauseWriteOnly && writeOnly;
  } else {
    eng.pauseUntil = until;
    eng.pauseWriteOnly = writeOnly;
  }
  armTimer(eng);
  out.ok();
}

// CLIENT UNPAUSE
function unpauseCommand(c: Client, _argv: Argv, out: ReplySink): void {
  // Replies first: the postponed commands run after this one.
  out.ok();
  const eng = c.engine;
  queueMicrotask(() => endPause(eng));
}

// CLIENT UNBLOCK client-id [TIMEOUT | ERROR]
function unblockCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 4) {
    out.error(`ERR unknown subcommand or wrong number of arguments for '${argv.key(1)}'. Try CLIENT HELP.`);
    return;
  }
  const id = argv.int(2);
  if (id !== id) {
    out.error(E.NOT_INTEGER);
    return;
  }
  let withError = false;
  if (argv.count === 4) {
    if (argv.is(3, 'ERROR')) withError = true;
    else if (!argv.is(3, 'TIMEOUT')) {
      out.error('ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR');
      return;
    }
  }
  const target = c.engine.clients.get(id);
  out.int(target !== undefined && c.engine.blocking.unblock(target, withError) ? 1 : 0);
}

// CLIENT TRACKING ON|OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
function trackingCommand(c: Client, argv: Argv, out: ReplySink): void {
  let redir = 0n;
  let options = 0;
  const prefixes: string[] = [];
  // Options first, in Redis's order of checks.
  for (let j = 3; j < argv.count; j++) {
    const more = j < argv.count - 1;
    if (argv.is(j, 'REDIRECT') && more) {
      j++;
      if (redir !== 0n) {
        out.error('ERR A client can only redirect to a single other client');
        return;
      }
      const id = argv.int64(j);
      if (id === null) {
        out.error(E.NOT_INTEGER);
        return;
      }
      redir = id;
      const target = id > 0n && id <= BigInt(Number.MAX_SAFE_INTEGER) ? c.engine.clients.get(Number(id)) : undefined;
      if (target === undefined || target.closed) {
        out.error('ERR The client ID you want redirect to does not exist');
        return;
      }
    } else if (argv.is(j, 'BCAST')) options |= TR.BCAST;
    else if (argv.is(j, 'OPTIN')) options |= TR.OPTIN;
    else if (argv.is(j, 'OPTOUT')) options |= TR.OPTOUT;
    else if (argv.is(j, 'NOLOOP')) options |= TR.NOLOOP;
    else if (argv.is(j, 'PREFIX') && more) prefixes.push(argv.key(++j));
    else {
      out.error(E.SYNTAX);
      return;
    }
  }
  if (argv.is(2, 'OFF')) {
    c.engine.tracking.disable(c);
    out.ok();
    return;
  }
  if (!argv.is(2, 'ON')) {
    out.error(E.SYNTAX);
    return;
  }
  const f = c.track;
  let err: string | null = null;
  if (!(options & TR.BCAST) && prefixes.length > 0) err = 'ERR PREFIX option requires BCAST mode to be enabled';
  else if (f & TR.ON && !(f & TR.BCAST) !== !(options & TR.BCAST)) {
    err = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.";
  } else if (options & TR.BCAST && options & (TR.OPTIN | TR.OPTOUT)) err = 'ERR OPTIN and OPTOUT are not compatible with BCAST';
  else if (options & TR.OPTIN && options & TR.OPTOUT) err = "ERR You can't specify both OPTIN mode and OPTOUT mode";
  else if ((options & TR.OPTIN && f & TR.OPTOUT) || (options & TR.OPTOUT && f & TR.OPTIN)) {
    err = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.";
  }
  if (err !== null) {
    out.error(err);
    return;
  }
  if (options & TR.BCAST && !prefixesOk(c, prefixes, out)) return;
  c.engine.tracking.enable(c, Number(redir), options, prefixes);
  out.ok();
}

/** Two prefixes overlap when one starts with the other (Redis's stringCheckPrefix). */
function overlap(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  return a.slice(0, n) === b.slice(0, n);
}

/**
 * Redis's checkPrefixCollisionsOrReply, including its quirk: an overlap among the new
 * prefixes found after the first one is reported, yet tracking is still enabled (so the error
 * is followed by +OK).
 */
function prefixesOk(c: Client, prefixes: readonly string[], out: ReplySink): boolean {
  const existing = c.engine.tracking.prefixesOf(c);
  for (let i = 0; i < prefixes.length; i++) {
    for (const p of existing) {
      if (overlap(p, prefixes[i])) {
        out.error(`ERR Prefix '${cstr(prefixes[i])}' overlaps with an existing prefix '${cstr(p)}'. Prefixes for a single client must not overlap.`);
        return false;
      }
    }
    for (let j = i + 1; j < prefixes.length; j++) {
      if (overlap(prefixes[i], prefixes[j])) {
        out.error(`ERR Prefix '${cstr(prefixes[i])}' overlaps with another provided prefix '${cstr(prefixes[j])}'. Prefixes for a single client must not overlap.`);
        return i !== 0;
      }
    }
  }
  return true;
}

// CLIENT CACHING YES|NO
function cachingCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (!(c.track & TR.ON)) {
    out.error('ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled');
    return;
  }
  if (argv.is(2, 'YES')) {
    if (!(c.track & TR.OPTIN)) {
      out.error('ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.');
      return;
    }
  } else if (argv.is(2, 'NO')) {
    if (!(c.track & TR.OPTOUT)) {
      out.error('ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.');
      return;
    }
  } else {
    out.error(E.SYNTAX);
    return;
  }
  c.track |= TR.CACHING;
  out.ok();
}

// CLIENT GETREDIR
function getredirCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.int(c.track & TR.ON ? c.trackRedirect : -1);
}

// CLIENT TRACKINGINFO
function trackinginfoCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const f = c.track;
  const flags = [f & TR.ON ? 'on' : 'off'];
  if (f & TR.BCAST) flags.push('bcast');
  if (f & TR.OPTIN) {
    flags.push('optin');
    if (f & TR.CACHING) flags.push('caching-yes');
  }
  if (f & TR.OPTOUT) {
    flags.push('optout');
    if (f & TR.CACHING) flags.push('caching-no');
  }
  if (f & TR.NOLOOP) flags.push('noloop');
  if (f & TR.BROKEN_REDIR) flags.push('broken_redirect');
  out.map(3);
  out.bulkText('flags');
  out.set(flags.length);
  for (const x of flags) out.bulkText(x);
  out.bulkText('redirect');
  out.int(f & TR.ON ? c.trackRedirect : -1);
  out.bulkText('prefixes');
  const prefixes = c.engine.tracking.prefixesOf(c);
  out.array(prefixes.length);
  for (const p of prefixes) out.bulkLatin1(p);
}

/** Redis 7.2's CLIENT HELP text, without the subcommands not provided here. */
const HELP = [
  'CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'CACHING (YES|NO)',
  '    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.',
  'GETREDIR',
  '    Return the client ID we are redirecting to when tracking is enabled.',
  'GETNAME',
  '    Return the name of the current connection.',
  'ID',
  '    Return the ID of the current connection.',
  'INFO',
  '    Return information about the current client connection.',
  'KILL <ip:port>',
  '    Kill connection made from <ip:port>.',
  'KILL <option> <value> [<option> <value> [...]]',
  '    Kill connections. Options are:',
  '    * ADDR (<ip:port>|<unixsocket>:0)',
  '      Kill connections made from the specified address',
  '    * LADDR (<ip:port>|<unixsocket>:0)',
  '      Kill connections made to specified local address',
  '    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)',
  '      Kill connections by type.',
  '    * USER <username>',
  '      Kill connections authenticated by <username>.',
  '    * SKIPME (YES|NO)',
  '      Skip killing current connection (default: yes).',
  'LIST [options ...]',
  '    Return information about client connections. Options:',
  '    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)',
  '      Return clients of specified type.',
  'UNPAUSE',
  '    Stop the current client pause, resuming traffic.',
  'PAUSE <timeout> [WRITE|ALL]',
  '    Suspend all, or just write, clients for <timeout> milliseconds.',
  'REPLY (ON|OFF|SKIP)',
  '    Control the replies sent to the current connection.',
  'SETNAME <name>',
  '    Assign the name <name> to the current connection.',
  'SETINFO <option> <value>',
  '    Set client meta attr. Options are:',
  '    * LIB-NAME: the client lib name.',
  '    * LIB-VER: the client lib version.',
  'TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]',
  '         [OPTIN] [OPTOUT] [NOLOOP]',
  '    Control server assisted client side caching.',
  'TRACKINGINFO',
  '    Report tracking status for the current connection.',
  'NO-EVICT (ON|OFF)',
  '    Protect current client connection from eviction.',
  'NO-TOUCH (ON|OFF)',
  '    Will not touch LRU/LFU stats when this mode is on.',
  'HELP',
  '    Prints this help.',
];
// CLIENT HELP
function helpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(HELP.length);
  for (const l of HELP) out.simple(l);
}

/** Unreachable: CLIENT without a subcommand fails the container's arity first. */
function noSubcommand(_c: Client, _argv: Argv, _out: ReplySink): void {}

const S = F.NOSCRIPT | F.LOADING | F.STALE;
const A = F.ADMIN | S;
const C = { categories: ['connection'] } as const;

export default family('client', [], [
  container('client', -2, 0, [
    //   name            arity  flags          keys       handler
    row('id',              2,   S,             [0, 0, 0], idCommand, C),
    row('setname',         3,   S,             [0, 0, 0], setnameCommand, C),
    row('getname',         2,   S,             [0, 0, 0], getnameCommand, C),
    row('info',            2,   S,             [0, 0, 0], infoCommand, C),
    row('list',           -2,   A,             [0, 0, 0], listCommand, C),
    row('kill',           -3,   A,             [0, 0, 0], killCommand, C),
    row('setinfo',         4,   S,             [0, 0, 0], setinfoCommand, C),
    row('no-evict',        3,   A,             [0, 0, 0], noEvictCommand, C),
    row('no-touch',        3,   S,             [0, 0, 0], noTouchCommand, C),
    row('reply',           3,   S | F.NO_REST, [0, 0, 0], replyCommand, C),
    row('pause',          -3,   A,             [0, 0, 0], pauseCommand, C),
    row('unpause',         2,   A,             [0, 0, 0], unpauseCommand, C),
    row('unblock',        -3,   A,             [0, 0, 0], unblockCommand, C),
    row('tracking',       -3,   S | F.NO_REST, [0, 0, 0], trackingCommand, C),
    row('caching',         3,   S | F.NO_REST, [0, 0, 0], cachingCommand, C),
    row('getredir',        2,   S,             [0, 0, 0], getredirCommand, C),
    row('trackinginfo',    2,   S,             [0, 0, 0], trackinginfoCommand, C),
    row('help',            2,   F.LOADING | F.STALE, [0, 0, 0], helpCommand, C),
  ], noSubcommand),
]);
