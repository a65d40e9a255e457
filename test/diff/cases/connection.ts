/**
 * Connection commands and CLIENT against redis-server 7.0: PING ECHO AUTH HELLO SELECT QUIT
 * RESET, CLIENT subcommands. Replies carrying connection-specific values (client ids,
 * addresses) are compared by type here and checked in detail in test/commands/server.test.ts,
 * as are the Redis 7.2 additions (CLIENT SETINFO, CLIENT NO-TOUCH) that 7.0 does not have.
 */
import type { Script } from '../harness.js';

const raw = (...cmds: string[][]): string =>
  cmds.map((a) => `*${a.length}\r\n` + a.map((x) => `$${Buffer.byteLength(x)}\r\n${x}\r\n`).join('')).join('');

const scripts: Script[] = [
  // ---------------------------------------------------------------- PING / ECHO
  { name: 'PING and ECHO', steps: [
    ['PING'], ['PING', 'hello'], ['PING', ''], ['PING', 'a', 'b'], ['ping', Buffer.from([0, 0xff, 0x0d, 0x0a])],
    ['ECHO', 'x'], ['ECHO', ''], ['ECHO'], ['ECHO', 'a', 'b'], ['ECHO', Buffer.from([0xc3, 0x28, 0])],
  ] },
  { name: 'inline PING', steps: [{ raw: 'PING\r\nPING hi\r\n', replies: 2 }] },

  // ---------------------------------------------------------------- SELECT
  { name: 'SELECT valid and invalid indexes', steps: [
    ['SELECT', '0'], ['SELECT', '15'], ['SELECT', '16'], ['SELECT', '-1'], ['SELECT', '1.5'], ['SELECT', 'x'],
    ['SELECT', ''], ['SELECT', '2147483647'], ['SELECT', '2147483648'], ['SELECT', '-2147483649'],
    ['SELECT', '99999999999'], ['SELECT', '99999999999999999999'], ['SELECT', '01'], ['SELECT', '+1'],
    ['SELECT'], ['SELECT', '1', '2'],
  ] },
  { name: 'SELECT switches the keyspace', steps: [
    ['SET', 'k', 'db0'], ['SELECT', '1'], ['GET', 'k'], ['SET', 'k', 'db1'], ['SELECT', '0'], ['GET', 'k'],
    ['SELECT', '1'], ['GET', 'k'],
  ] },

  // ---------------------------------------------------------------- AUTH (no password configured)
  { name: 'AUTH without requirepass', steps: [
    ['AUTH', 'x'], ['AUTH', 'a', 'b'], ['AUTH', 'a', 'b', 'c'], ['AUTH', 'default', 'anything'],
    ['AUTH', 'DEFAULT', 'x'], ['AUTH'], ['PING'],
  ] },

  // ---------------------------------------------------------------- HELLO
  { name: 'HELLO errors', steps: [
    ['HELLO', '1'], ['HELLO', '4'], ['HELLO', '-1'], ['HELLO', 'x'], ['HELLO', '2.0'],
    ['HELLO', '99999999999999999999'], ['HELLO', '9223372036854775807'], ['HELLO', '2', 'foo'],
    ['HELLO', '2', 'AUTH'], ['HELLO', '2', 'AUTH', 'default'], ['HELLO', '2', 'SETNAME'],
    ['HELLO', '2', 'SETNAME', 'a b'], ['HELLO', '2', 'AUTH', 'nosuch', 'x'], ['HELLO', '2', 'AUTH', 'u', 'p', 'SETNAME', 'n', 'extra'],
    ['HELLO', '2', 'setname', 'ok', 'bad'],
  ] },
  { name: 'HELLO replies (the id masked)', steps: [
    { cmd: ['HELLO'], compare: 'hello' }, { cmd: ['HELLO', '2'], compare: 'hello' },
    { cmd: ['HELLO', '2', 'AUTH', 'default', 'pw'], compare: 'hello' },
    { cmd: ['HELLO', '3'], compare: 'hello' }, { cmd: ['HELLO'], compare: 'hello' },
    { cmd: ['hello', '3', 'auth', 'default', 'pw', 'setname', 'n3'], compare: 'hello' }, ['CLIENT', 'GETNAME'],
    { cmd: ['HELLO', '2'], compare: 'hello' },
  ] },
  { name: 'HELLO 3 switches to RESP3, HELLO 2 and RESET back to RESP2', steps: [
    ['GET', 'nokey'], ['LPOP', 'nokey', '2'], { cmd: ['HELLO', '3'], compare: 'hello' }, ['GET', 'nokey'],
    ['LPOP', 'nokey', '2'], ['HSET', 'h', 'a', '1'], ['HGETALL', 'h'], ['SADD', 's', 'x'], ['SMEMBERS', 's'],
    ['ZADD', 'z', '1.5', 'm'], ['ZSCORE', 'z', 'm'], ['ZRANGE', 'z', '0', '-1', 'WITHSCORES'],
    { cmd: ['HELLO', '2'], compare: 'hello' }, ['GET', 'nokey'], ['HGETALL', 'h'], ['ZSCORE', 'z', 'm'],
    { cmd: ['HELLO', '3'], compare: 'hello' }, ['RESET'], ['GET', 'nokey'], ['HGETALL', 'h'],
  ] },
  { name: 'a failed HELLO keeps the protocol', steps: [
    { cmd: ['HELLO', '3'], compare: 'hello' }, ['HELLO', '4'], ['GET', 'nokey'], ['HELLO', '2', 'AUTH', 'nosuch', 'x'],
    ['GET', 'nokey'], ['HELLO', '2', 'SETNAME', 'a b'], ['GET', 'nokey'], ['HELLO', '2', 'bogus'], ['GET', 'nokey'],
    ['HELLO', 'x'], ['GET', 'nokey'],
  ] },
  { name: 'HELLO SETNAME sets, replaces and clears the name', steps: [
    { cmd: ['HELLO', '2', 'SETNAME', 'foo'], compare: 'type' }, ['CLIENT', 'GETNAME'],
    { cmd: ['HELLO', '2', 'setname', 'bar', 'SETNAME', 'baz'], compare: 'type' }, ['CLIENT', 'GETNAME'],
    ['HELLO', '2', 'SETNAME', 'bad name'], ['CLIENT', 'GETNAME'],
    { cmd: ['HELLO', '2', 'SETNAME', ''], compare: 'type' }, ['CLIENT', 'GETNAME'],
  ] },

  // ---------------------------------------------------------------- RESET / QUIT
  { name: 'RESET restores the connection defaults', steps: [
    ['SELECT', '3'], ['SET', 'k', 'v'], ['CLIENT', 'SETNAME', 'me'], ['MULTI'], ['SET', 'a', '1'],
    ['RESET'], ['CLIENT', 'GETNAME'], ['GET', 'k'], ['DBSIZE'], ['EXEC'], ['RESET', 'x'],
  ] },
  { name: 'RESET answers even with replies off', steps: [
    { raw: raw(['CLIENT', 'REPLY', 'OFF'], ['PING'], ['RESET'], ['PING']), replies: 2 },
  ] },
  { name: 'RESET ends MONITOR', steps: [['MONITOR'], ['RESET'], ['PING']] },
  { name: 'RESET clears WATCH', steps: [
    ['WATCH', 'w'], ['SET', 'w', '1'], ['RESET'], ['MULTI'], ['GET', 'w'], ['EXEC'],
  ] },
  { name: 'QUIT answers OK and closes', steps: [['PING'], ['QUIT']] },
  { name: 'QUIT with arguments', steps: [['QUIT', 'x', 'y']] },
  { name: 'QUIT inside MULTI', steps: [['MULTI'], ['QUIT']] },

  // ---------------------------------------------------------------- CLIENT ID / SETNAME / GETNAME / INFO / LIST
  { name: 'CLIENT ID, GETNAME, SETNAME', steps: [
    { cmd: ['CLIENT', 'ID'], compare: 'type' }, ['CLIENT', 'ID', 'x'], ['CLIENT', 'GETNAME'],
    ['CLIENT', 'SETNAME', 'foo'], ['CLIENT', 'GETNAME'], ['CLIENT', 'SETNAME', 'a b'],
    ['CLIENT', 'SETNAME', 'a\nb'], ['CLIENT', 'SETNAME', Buffer.from([0x61, 0xe9])], ['CLIENT', 'GETNAME'],
    ['CLIENT', 'SETNAME', '!~'], ['CLIENT', 'GETNAME'], ['CLIENT', 'SETNAME', ''], ['CLIENT', 'GETNAME'],
    ['CLIENT', 'SETNAME'], ['CLIENT', 'SETNAME', 'a', 'b'], ['CLIENT', 'GETNAME', 'x'],
  ] },
  { name: 'CLIENT INFO and LIST', steps: [
    { cmd: ['CLIENT', 'INFO'], compare: 'type' }, ['CLIENT', 'INFO', 'x'],
    { cmd: ['CLIENT', 'LIST'], compare: 'type' }, { cmd: ['CLIENT', 'LIST', 'TYPE', 'normal'], compare: 'type' },
    ['CLIENT', 'LIST', 'TYPE', 'pubsub'], ['CLIENT', 'LIST', 'TYPE', 'master'], ['CLIENT', 'LIST', 'TYPE', 'replica'],
    ['CLIENT', 'LIST', 'TYPE', 'SLAVE'], ['CLIENT', 'LIST', 'TYPE', 'foo'], ['CLIENT', 'LIST', 'ID', 'x'],
    ['CLIENT', 'LIST', 'ID', '0'], ['CLIENT', 'LIST', 'ID', '-1'], ['CLIENT', 'LIST', 'ID', '999999', '999998'],
    ['CLIENT', 'LIST', 'ID', '999999', 'x'], ['CLIENT', 'LIST', 'foo'], ['CLIENT', 'LIST', 'TYPE'],
    ['CLIENT', 'LIST', 'ID'], ['CLIENT', 'LIST', 'TYPE', 'normal', 'ID', '1'], ['CLIENT', 'LIST', 'TYPE', 'normal', 'x'],
  ] },

  // ---------------------------------------------------------------- CLIENT KILL (errors and no-match)
  { name: 'CLIENT KILL errors and filters matching nobody', steps: [
    ['CLIENT', 'KILL', '1.2.3.4:5'], ['CLIENT', 'KILL', 'foo'], ['CLIENT', 'KILL', 'ADDR'],
    ['CLIENT', 'KILL', 'ID', '99999'], ['CLIENT', 'KILL', 'ID', 'x'], ['CLIENT', 'KILL', 'ID', '0'],
    ['CLIENT', 'KILL', 'ID', '-5'], ['CLIENT', 'KILL', 'ADDR', '1.2.3.4:5'], ['CLIENT', 'KILL', 'LADDR', '1.2.3.4:5'],
    ['CLIENT', 'KILL', 'USER', 'nosuch'], ['CLIENT', 'KILL', 'TYPE', 'foo'], ['CLIENT', 'KILL', 'TYPE', 'pubsub'],
    ['CLIENT', 'KILL', 'TYPE', 'master'], ['CLIENT', 'KILL', 'SKIPME', 'x'], ['CLIENT', 'KILL', 'foo', 'bar'],
    ['CLIENT', 'KILL', 'ID', '1', 'ID'], ['CLIENT', 'KILL', 'ID', '99999', 'ADDR', '1.2.3.4:5', 'SKIPME', 'yes'],
    ['CLIENT', 'KILL', 'MAXAGE', '1'], ['CLIENT', 'KILL'],
  ] },

  // ---------------------------------------------------------------- CLIENT REPLY / NO-EVICT / PAUSE / tracking
  { name: 'CLIENT REPLY SKIP drops the next reply only', steps: [
    { raw: raw(['CLIENT', 'REPLY', 'SKIP'], ['SET', 'a', '1'], ['GET', 'a']), replies: 1 }, ['GET', 'a'],
  ] },
  { name: 'CLIENT REPLY OFF and ON', steps: [
    { raw: raw(['CLIENT', 'REPLY', 'OFF'], ['SET', 'a', '2'], ['GET', 'a'], ['CLIENT', 'REPLY', 'ON'], ['GET', 'a']), replies: 2 },
    ['CLIENT', 'REPLY', 'x'], ['CLIENT', 'REPLY', 'ON'], ['CLIENT', 'REPLY'], ['CLIENT', 'REPLY', 'ON', 'x'],
  ] },
  { name: 'CLIENT REPLY OFF then SKIP stays off', steps: [
    { raw: raw(['CLIENT', 'REPLY', 'OFF'], ['CLIENT', 'REPLY', 'SKIP'], ['PING'], ['PING', 'x'], ['CLIENT', 'REPLY', 'ON'], ['ECHO', 'y']), replies: 2 },
  ] },
  { name: 'errors still flag a transaction with replies off', steps: [
    // CLIENT REPLY ON is queued inside MULTI, so nothing at all is answered until it runs again.
    { raw: raw(['CLIENT', 'REPLY', 'OFF'], ['MULTI'], ['NOSUCH'], ['CLIENT', 'REPLY', 'ON'], ['EXEC'], ['CLIENT', 'REPLY', 'ON'], ['PING']), replies: 2 },
  ] },
  { name: 'CLIENT NO-EVICT', steps: [
    ['CLIENT', 'NO-EVICT', 'on'], ['CLIENT', 'NO-EVICT', 'OFF'], ['CLIENT', 'NO-EVICT', 'x'], ['CLIENT', 'NO-EVICT'],
  ] },
  { name: 'CLIENT PAUSE argument errors, UNPAUSE', steps: [
    ['CLIENT', 'PAUSE', 'x'], ['CLIENT', 'PAUSE', '-1'], ['CLIENT', 'PAUSE', '0', 'foo'], ['CLIENT', 'PAUSE', 'x', 'foo'],
    ['CLIENT', 'PAUSE', '1', 'ALL', 'x'], ['CLIENT', 'PAUSE'], ['CLIENT', 'PAUSE', '1.5'],
    ['CLIENT', 'PAUSE', '0'], ['CLIENT', 'PAUSE', '0', 'write'],
    ['CLIENT', 'UNPAUSE'], ['CLIENT', 'UNPAUSE', 'x'],
  ] },
  { name: 'CLIENT GETREDIR and TRACKINGINFO without tracking', steps: [
    ['CLIENT', 'GETREDIR'], ['CLIENT', 'TRACKINGINFO'], ['CLIENT', 'GETREDIR', 'x'], ['CLIENT', 'TRACKINGINFO', 'x'],
  ] },
  { name: 'CLIENT without or with an unknown subcommand', steps: [
    ['CLIENT'], ['CLIENT', 'nosuch'], ['CLIENT', 'nosuch', 'x'], { cmd: ['CLIENT', 'id'], compare: 'type' },
    ['CLIENT', 'HELP', 'x'],
  ] },
  { name: 'CLIENT UNBLOCK argument errors and an idle target', steps: [
    ['CLIENT', 'UNBLOCK', 'x'], ['CLIENT', 'UNBLOCK', '99999'], ['CLIENT', 'UNBLOCK', '99999', 'foo'], ['CLIENT', 'UNBLOCK', '99999', 'error'],
    ['CLIENT', 'UNBLOCK'], ['CLIENT', 'UNBLOCK', '1', '2', '3'],
  ] },
];
export default scripts;
