/**
 * Connection commands: PING ECHO AUTH HELLO SELECT QUIT RESET (CLIENT lives in client.ts),
 * as Redis 7.0 answers them. HELLO 3 switches the connection to RESP3.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import { ReplyMode, type Client } from '../client.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { discardTransaction } from './transactions.js';
import { NULL_SINK } from '../dispatch.js';
import { cstr } from '../../bytes.js';

// PING [message]
function pingCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 2) {
    out.error(`ERR wrong number of arguments for 'ping' command`);
    return;
  }
  if (c.subscriptions > 0 && c.resp === 2) {
    // RESP2 subscribe context: PING answers as a pub/sub message.
    out.array(2);
    out.bulkText('pong');
    if (argv.count === 2) out.bulk(argv.copy(1));
    else out.bulkText('');
    return;
  }
  if (argv.count === 2) out.bulk(argv.copy(1));
  else out.simple('PONG');
}

// ECHO message
function echoCommand(_c: Client, argv: Argv, out: ReplySink): void {
  out.bulk(argv.copy(1));
}

/** Authenticate the connection as `user`; false (and nothing changed) when refused. */
export function checkPassword(c: Client, user: string, pass: string): boolean {
  return passwordMatches(c, user, Buffer.from(pass, 'latin1'));
}

/**
 * Check credentials against the ACL users (Redis's ACLCheckUserCredentials) and, when they are
 * right, make the connection run as that user. Passwords are compared as bytes.
 */
function passwordMatches(c: Client, user: string, pass: Buffer): boolean {
  const u = c.engine.acl.authenticate(user, pass);
  if (u === null) return false;
  c.aclUser = u;
  return true;
}

// AUTH [username] password
function authCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 3) {
    out.error(E.SYNTAX);
    return;
  }
  if (argv.count === 2 && c.engine.acl.defaultUser.nopass) {
    out.error('ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?');
    return;
  }
  const user = argv.count === 3 ? argv.key(1) : 'default';
  if (passwordMatches(c, user, argv.view(argv.count - 1))) {
    c.authenticated = true;
    c.user = user;
    out.ok();
  } else {
    // A failed AUTH leaves the current authentication as it was.
    out.error(E.WRONGPASS);
  }
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
function helloCommand(c: Client, argv: Argv, out: ReplySink): void {
  let i = 1;
  let ver = 0n;
  if (argv.count >= 2) {
    const v = argv.int64(1);
    if (v === null) {
      out.error('ERR Protocol version is not an integer or out of range');
      return;
    }
    ver = v;
    if (ver !== 2n && ver !== 3n) {
      out.error('NOPROTO unsupported protocol version');
      return;
    }
    i = 2;
  }
  let name: string | null = null;
  for (; i < argv.count; i++) {
    const more = argv.count - 1 - i;
    if (argv.is(i, 'AUTH') && more >= 2) {
      // Redis 7.0 authenticates while parsing: a later syntax error keeps the login.
      const user = argv.key(i + 1);
      if (!passwordMatches(c, user, argv.view(i + 2))) {
        out.error(E.WRONGPASS);
        return;
      }
      c.authenticated = true;
      c.user = user;
      i += 2;
    } else if (argv.is(i, 'SETNAME') && more >= 1) {
      name = argv.key(i + 1);
      i += 1;
    } else {
      out.error(`ERR Syntax error in HELLO option '${cstr(argv.key(i))}'`);
      return;
    }
  }
  if (!c.authenticated) {
    out.error('NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time');
    return;
  }
  if (name !== null) {
    if (!validClientName(name)) {
      out.error(E.CLIENT_NAME);
      return;
    }
    c.name = name === '' ? null : name;
  }
  // The switch comes before the reply: HELLO 3 answers in RESP3, HELLO 2 in RESP2.
  if (ver !== 0n) c.setProtocol(ver === 3n ? 3 : 2);
  out.map(7);
  out.bulkText('server'); out.bulkText('redis');
  out.bulkText('version'); out.bulkText(REDIS_VERSION);
  out.bulkText('proto'); out.int(c.resp);
  out.bulkText('id'); out.int(c.id);
  out.bulkText('mode'); out.bulkText('standalone');
  out.bulkText('role'); out.bulkText('master');
  out.bulkText('modules'); out.array(0);
}

/** The Redis version we emulate (INFO redis_version, HELLO). */
export const REDIS_VERSION = '7.0.15';

export function validClientName(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const ch = name.charCodeAt(i);
    if (ch < 33 || ch > 126) return false;
  }
  return true;
}

// SELECT index
function selectCommand(c: Client, argv: Argv, out: ReplySink): void {
  // getIntFromObjectOrReply: a 64-bit integer first, then the C int range.
  const v = argv.int64(1);
  if (v === null) {
    out.error(E.NOT_INTEGER);
    return;
  }
  if (v < -2147483648n || v > 2147483647n) {
    out.error('ERR value is out of range, value must between -2147483648 and 2147483647');
    return;
  }
  const idx = Number(v);
  if (idx < 0 || idx >= c.engine.dbs.length) {
    out.error(E.DB_INDEX);
    return;
  }
  c.dbIndex = idx;
  out.ok();
}

// QUIT
function quitCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.ok();
  c.transport.close(true);
}

// RESET
function resetCommand(c: Client, _argv: Argv, out: ReplySink): void {
  discardTransaction(c);
  c.engine.monitors.delete(c);
  c.monitor = false;
  c.engine.blocking.cancel(c);
  for (const l of resetHooks) l(c);
  c.dbIndex = 0;
  c.name = null;
  c.setProtocol(2);
  if (c.track !== 0) c.engine.tracking.disable(c);
  c.replyMode = ReplyMode.ON;
  c.noEvict = false;
  c.noTouch = false;
  c.authenticated = !c.engine.authRequired();
  c.user = 'default';
  c.aclUser = c.engine.acl.defaultUser;
  // Replies are switched back on first, so RESET answers even after CLIENT REPLY OFF.
  (out === NULL_SINK ? c.out : out).simple('RESET');
}

/** Extra state reset by RESET (pub/sub subscriptions, blocking...). */
export const resetHooks: ((c: Client) => void)[] = [];

export default family('connection', ['connection'], [
  //   name       arity  flags                                                          keys       handler
  row('ping',      -1,   F.FAST | F.SUBSCRIBE_CTX,                                      [0, 0, 0], pingCommand),
  row('echo',       2,   F.LOADING | F.STALE | F.FAST,                                  [0, 0, 0], echoCommand),
  row('auth',      -2,   F.NOSCRIPT | F.LOADING | F.STALE | F.FAST | F.NO_AUTH | F.ALLOW_BUSY | F.NO_REST, [0, 0, 0], authCommand),
  row('hello',     -1,   F.NOSCRIPT | F.LOADING | F.STALE | F.FAST | F.NO_AUTH | F.ALLOW_BUSY | F.NO_REST, [0, 0, 0], helloCommand),
  row('select',     2,   F.LOADING | F.STALE | F.FAST | F.NO_REST,                      [0, 0, 0], selectCommand),
  row('quit',      -1,   F.NOSCRIPT | F.LOADING | F.STALE | F.FAST | F.NO_AUTH | F.ALLOW_BUSY | F.SUBSCRIBE_CTX | F.NO_REST, [0, 0, 0], quitCommand),
  row('reset',      1,   F.NOSCRIPT | F.LOADING | F.STALE | F.FAST | F.NO_AUTH | F.ALLOW_BUSY | F.SUBSCRIBE_CTX | F.NO_REST, [0, 0, 0], resetCommand),
]);
