/**
 * Keyspace ("generic") commands against redis-server: every command, option and error text.
 * Replies that depend on time or on hash order use compare 'type' or 'sorted' (or stay out of
 * here: test/commands/generic.test.ts asserts those properties with a real client).
 */
import type { Script } from '../harness.js';

const bin = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x0a]);
const bin2 = Buffer.from([0xc3, 0x28, 0x2a]);

const scripts: Script[] = [
  // ------------------------------------------------------------ DEL UNLINK EXISTS TOUCH TYPE
  { name: 'DEL counts only existing keys', steps: [
    ['SET', 'a', '1'], ['SET', 'b', '2'], ['DEL', 'a', 'b', 'c', 'a'], ['EXISTS', 'a', 'b'], ['DEL', 'a'],
  ] },
  { name: 'DEL and UNLINK arity', steps: [['DEL'], ['UNLINK'], ['EXISTS'], ['TOUCH'], ['TYPE'], ['TYPE', 'a', 'b']] },
  { name: 'UNLINK behaves like DEL', steps: [
    ['SET', 'a', '1'], ['SET', 'b', '2'], ['UNLINK', 'a', 'x', 'b', 'b'], ['EXISTS', 'a', 'b'],
  ] },
  { name: 'EXISTS counts repeated keys', steps: [
    ['SET', 'a', '1'], ['EXISTS', 'a', 'a', 'a', 'nokey'], ['EXISTS', 'nokey'], ['exists', 'A'],
  ] },
  { name: 'TOUCH counts existing keys', steps: [
    ['SET', 'a', '1'], ['SET', 'b', '1'], ['TOUCH', 'a', 'b', 'c', 'a'], ['TOUCH', 'c'],
  ] },
  { name: 'TYPE of a string and of a missing key', steps: [
    ['SET', 'a', '1'], ['TYPE', 'a'], ['TYPE', 'nokey'], ['type', 'a'],
  ] },
  { name: 'binary keys', steps: [
    ['SET', bin, 'v'], ['EXISTS', bin], ['TYPE', bin], ['KEYS', '*'], ['RENAME', bin, bin2], ['KEYS', '*'],
    ['GET', bin2], ['DEL', bin2], ['EXISTS', bin2],
  ] },

  // ------------------------------------------------------------ RENAME RENAMENX
  { name: 'RENAME moves the value', steps: [
    ['SET', 'a', 'v'], ['RENAME', 'a', 'b'], ['GET', 'a'], ['GET', 'b'], ['EXISTS', 'a'],
  ] },
  { name: 'RENAME overwrites the destination', steps: [
    ['SET', 'a', 'va'], ['SET', 'b', 'vb'], ['EXPIRE', 'b', '100'], ['RENAME', 'a', 'b'], ['GET', 'b'], ['TTL', 'b'],
  ] },
  { name: 'RENAME of a missing key', steps: [['RENAME', 'nokey', 'b'], ['RENAME', 'nokey', 'nokey'], ['EXISTS', 'b']] },
  { name: 'RENAME to the same name', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '100'], ['RENAME', 'a', 'a'], ['GET', 'a'], ['TTL', 'a'],
  ] },
  { name: 'RENAME carries the TTL over', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '100'], ['RENAME', 'a', 'b'], ['TTL', 'b'], ['TTL', 'a'],
    ['EXPIREAT', 'b', '4000000000'], ['RENAME', 'b', 'c'], ['EXPIRETIME', 'c'], ['PEXPIRETIME', 'c'],
  ] },
  { name: 'RENAME of a key without TTL clears none on the new name', steps: [
    ['SET', 'a', 'v'], ['RENAME', 'a', 'b'], ['TTL', 'b'],
  ] },
  { name: 'RENAME arity', steps: [['RENAME', 'a'], ['RENAME', 'a', 'b', 'c'], ['RENAMENX', 'a'], ['RENAMENX', 'a', 'b', 'c']] },
  { name: 'RENAMENX', steps: [
    ['SET', 'a', 'va'], ['SET', 'b', 'vb'], ['RENAMENX', 'a', 'b'], ['GET', 'a'], ['GET', 'b'],
    ['RENAMENX', 'a', 'c'], ['GET', 'c'], ['EXISTS', 'a'], ['RENAMENX', 'c', 'c'], ['RENAMENX', 'nokey', 'x'],
    ['RENAMENX', 'nokey', 'nokey'],
  ] },
  { name: 'RENAMENX carries the TTL over', steps: [
    ['SET', 'a', 'v'], ['PEXPIREAT', 'a', '4000000000123'], ['RENAMENX', 'a', 'b'], ['PEXPIRETIME', 'b'],
  ] },
  { name: 'RENAME keeps the raw/embstr/int encoding', steps: [
    ['SET', 'a', '12345'], ['RENAME', 'a', 'b'], ['OBJECT', 'ENCODING', 'b'],
    ['SET', 'c', 'x'.repeat(50)], ['RENAME', 'c', 'd'], ['OBJECT', 'ENCODING', 'd'],
  ] },
  { name: 'RENAME of an expired key', steps: [
    ['SET', 'a', 'v'], ['PEXPIRE', 'a', '5'], { cmd: ['RENAME', 'a', 'b'], sleep: 30 }, ['EXISTS', 'b'],
  ] },

  // ------------------------------------------------------------ COPY
  { name: 'COPY within the db', steps: [
    ['SET', 'a', 'v'], ['COPY', 'a', 'b'], ['GET', 'b'], ['GET', 'a'], ['COPY', 'a', 'b'], ['COPY', 'nokey', 'b'],
  ] },
  { name: 'COPY REPLACE', steps: [
    ['SET', 'a', 'va'], ['SET', 'b', 'vb'], ['COPY', 'a', 'b', 'REPLACE'], ['GET', 'b'],
    ['COPY', 'a', 'b', 'replace', 'replace'], ['COPY', 'nokey', 'b', 'REPLACE'], ['GET', 'b'],
  ] },
  { name: 'COPY carries the TTL over', steps: [
    ['SET', 'a', 'v'], ['EXPIREAT', 'a', '4000000000'], ['COPY', 'a', 'b'], ['EXPIRETIME', 'b'],
    ['SET', 'c', 'v'], ['COPY', 'c', 'b', 'REPLACE'], ['TTL', 'b'],
  ] },
  { name: 'COPY to another db', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '100'], ['COPY', 'a', 'a', 'DB', '1'], ['COPY', 'a', 'a', 'DB', '1'],
    ['SELECT', '1'], ['GET', 'a'], ['TTL', 'a'], ['SELECT', '0'], ['COPY', 'a', 'a', 'db', '1', 'replace'],
    ['SET', 'a', 'v2'], ['COPY', 'a', 'a', 'REPLACE', 'DB', '1'], ['SELECT', '1'], ['GET', 'a'], ['TTL', 'a'],
  ] },
  { name: 'COPY errors', steps: [
    ['SET', 'a', 'v'], ['COPY', 'a', 'a'], ['COPY', 'a', 'a', 'DB', '0'], ['COPY', 'nokey', 'nokey'],
    ['COPY', 'a', 'b', 'DB', '16'], ['COPY', 'a', 'b', 'DB', '-1'], ['COPY', 'a', 'b', 'DB', 'x'],
    ['COPY', 'a', 'b', 'DB', '2147483647'], ['COPY', 'a', 'b', 'DB', '2147483648'], ['COPY', 'a', 'b', 'DB', '1.0'],
    ['COPY', 'a', 'b', 'DB'], ['COPY', 'a', 'b', 'foo'], ['COPY', 'a', 'b', 'REPLACE', 'foo'],
    ['COPY', 'a', 'b', 'DB', '16', 'foo'], ['COPY', 'a', 'b', 'foo', 'DB', '16'], ['COPY', 'a'], ['EXISTS', 'b'],
  ] },
  { name: 'COPY keeps the encoding', steps: [
    ['SET', 'a', '12'], ['COPY', 'a', 'b'], ['OBJECT', 'ENCODING', 'b'], ['OBJECT', 'REFCOUNT', 'b'],
    ['SET', 'c', 'y'.repeat(45)], ['COPY', 'c', 'd'], ['OBJECT', 'ENCODING', 'd'],
  ] },
  { name: 'COPY is independent of the source', steps: [
    ['SET', 'a', 'v1'], ['COPY', 'a', 'b'], ['SET', 'a', 'v2'], ['GET', 'b'], ['DEL', 'a'], ['GET', 'b'],
  ] },
  // Strings past 255 bytes are stored as Buffers, which SETRANGE/SETBIT/BITFIELD change in place.
  { name: 'COPY of a long string, then either side changed in place', steps: [
    ['SET', 'a', 'v'.repeat(286)], ['COPY', 'a', 'b'], ['SETRANGE', 'b', '2', 'zz'], ['GET', 'a'], ['GET', 'b'],
    ['COPY', 'a', 'c'], ['SETBIT', 'a', '7', '1'], ['GET', 'a'], ['GET', 'c'],
    ['COPY', 'c', 'd'], ['BITFIELD', 'd', 'SET', 'u8', '0', '65'], ['GET', 'c'], ['GET', 'd'],
    ['COPY', 'd', 'e'], ['APPEND', 'e', 'x'], ['SETRANGE', 'd', '0', 'q'], ['GET', 'd'], ['GET', 'e'],
    ['COPY', 'e', 'a', 'DB', '1'], ['SELECT', '1'], ['SETRANGE', 'a', '1', 'y'], ['SELECT', '0'], ['GET', 'e'],
  ] },

  // ------------------------------------------------------------ MOVE
  { name: 'MOVE to another db', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '100'], ['MOVE', 'a', '1'], ['EXISTS', 'a'], ['SELECT', '1'], ['GET', 'a'],
    ['TTL', 'a'], ['MOVE', 'a', '0'], ['EXISTS', 'a'], ['SELECT', '0'], ['GET', 'a'],
  ] },
  { name: 'MOVE when the target exists', steps: [
    ['SET', 'a', 'v0'], ['SELECT', '1'], ['SET', 'a', 'v1'], ['SELECT', '0'], ['MOVE', 'a', '1'], ['GET', 'a'],
    ['SELECT', '1'], ['GET', 'a'],
  ] },
  { name: 'MOVE errors', steps: [
    ['SET', 'a', 'v'], ['MOVE', 'a', '0'], ['MOVE', 'nokey', '0'], ['MOVE', 'nokey', '1'], ['MOVE', 'a', '16'],
    ['MOVE', 'a', '-1'], ['MOVE', 'a', 'x'], ['MOVE', 'a', '2147483648'], ['MOVE', 'a', ''], ['MOVE', 'a'],
    ['MOVE', 'a', '1', '2'], ['EXISTS', 'a'],
  ] },
  { name: 'MOVE keeps the encoding', steps: [
    ['SET', 'a', '7'], ['MOVE', 'a', '3'], ['SELECT', '3'], ['OBJECT', 'ENCODING', 'a'], ['OBJECT', 'REFCOUNT', 'a'],
  ] },

  // ------------------------------------------------------------ SWAPDB
  { name: 'SWAPDB exchanges two dbs', steps: [
    ['SET', 'a', 'db0'], ['EXPIRE', 'a', '100'], ['SELECT', '1'], ['SET', 'b', 'db1'], ['SWAPDB', '0', '1'],
    ['GET', 'a'], ['TTL', 'a'], ['GET', 'b'], ['DBSIZE'], ['SELECT', '0'], ['GET', 'b'], ['GET', 'a'], ['DBSIZE'],
    ['SWAPDB', '1', '0'], ['GET', 'a'], ['SWAPDB', '0', '0'], ['GET', 'a'], ['SWAPDB', '0', '15'], ['DBSIZE'],
  ] },
  { name: 'SWAPDB errors', steps: [
    ['SWAPDB', 'x', '1'], ['SWAPDB', '1', 'x'], ['SWAPDB', 'x', 'y'], ['SWAPDB', '0', '16'], ['SWAPDB', '16', '0'],
    ['SWAPDB', '-1', '0'], ['SWAPDB', '99999999999', '0'], ['SWAPDB', '0', '99999999999'], ['SWAPDB', '0'],
    ['SWAPDB', '0', '1', '2'], ['SWAPDB', '1.5', '0'],
  ] },
  { name: 'SWAPDB invalidates WATCH on keys of either db', steps: [
    ['SELECT', '1'], ['SET', 'w', 'x'], ['SELECT', '0'], ['WATCH', 'w'], ['SWAPDB', '0', '1'], ['MULTI'], ['PING'], ['EXEC'],
  ] },
  { name: 'SWAPDB leaves WATCH of keys absent from both dbs alone', steps: [
    ['WATCH', 'w'], ['SWAPDB', '0', '1'], ['MULTI'], ['PING'], ['EXEC'],
  ] },

  // ------------------------------------------------------------ KEYS
  { name: 'KEYS patterns', steps: [
    ['SET', 'hello', '1'], ['SET', 'hallo', '1'], ['SET', 'hxllo', '1'], ['SET', 'hllo', '1'], ['SET', 'heeeello', '1'],
    ['SET', 'h[llo', '1'], ['SET', 'H*', '1'],
    { cmd: ['KEYS', '*'], compare: 'sorted' }, { cmd: ['KEYS', 'h?llo'], compare: 'sorted' },
    { cmd: ['KEYS', 'h*llo'], compare: 'sorted' }, { cmd: ['KEYS', 'h[ae]llo'], compare: 'sorted' },
    { cmd: ['KEYS', 'h[^e]llo'], compare: 'sorted' }, { cmd: ['KEYS', 'h[a-b]llo'], compare: 'sorted' },
    { cmd: ['KEYS', 'h\\[llo'], compare: 'sorted' }, { cmd: ['KEYS', 'H\\*'], compare: 'sorted' },
    ['KEYS', 'nomatch*'], ['KEYS', 'hello'], ['KEYS', ''], { cmd: ['KEYS', '**'], compare: 'sorted' },
    { cmd: ['KEYS', 'h[a-'], compare: 'sorted' }, { cmd: ['keys', '[H]*'], compare: 'sorted' },
  ] },
  { name: 'KEYS on an empty db and arity', steps: [['KEYS', '*'], ['KEYS'], ['KEYS', '*', '*']] },
  { name: 'KEYS skips expired keys', steps: [
    ['SET', 'a', '1'], ['SET', 'b', '1'], ['PEXPIRE', 'b', '5'], { cmd: ['KEYS', '*'], sleep: 30 }, ['EXISTS', 'b'],
  ] },
  { name: 'KEYS with binary patterns', steps: [
    ['SET', bin, '1'], ['SET', bin2, '1'], ['SET', 'plain', '1'], ['KEYS', Buffer.from([0xff, 0x2a])],
    ['KEYS', Buffer.from([0x3f, 0x28, 0x2a])], { cmd: ['KEYS', '*'], compare: 'sorted' },
  ] },

  // ------------------------------------------------------------ SCAN
  { name: 'SCAN of a small db returns everything at once', steps: [
    ['SET', 'a', '1'], ['SCAN', '0'], ['SCAN', '0', 'COUNT', '100'], ['SCAN', '0', 'MATCH', 'a'], ['SCAN', '0', 'MATCH', 'b*'],
  ] },
  { name: 'SCAN of an empty db', steps: [['SCAN', '0'], ['SCAN', '0', 'MATCH', '*', 'COUNT', '5', 'TYPE', 'string']] },
  { name: 'SCAN several keys (order-independent check)', steps: [
    ['SET', 'k1', '1'], ['SET', 'k2', '1'], ['SET', 'k3', '1'], ['SET', 'other', '1'],
    { cmd: ['SCAN', '0', 'COUNT', '1000'], compare: 'type' }, ['SCAN', '0', 'MATCH', 'oth*', 'COUNT', '1000'],
    ['SCAN', '0', 'MATCH', 'k2', 'COUNT', '1000'],
  ] },
  { name: 'SCAN TYPE', steps: [
    ['SET', 'a', '1'], ['SCAN', '0', 'TYPE', 'string'], ['SCAN', '0', 'TYPE', 'STRING'], ['SCAN', '0', 'TYPE', 'list'],
    ['SCAN', '0', 'TYPE', 'nosuchtype'], ['SCAN', '0', 'type', 'hash', 'match', '*'],
  ] },
  { name: 'SCAN cursor parsing', steps: [
    ['SET', 'a', '1'], ['SCAN', ''], ['SCAN', '+0'], ['SCAN', '-0'], ['SCAN', '00'], ['SCAN', ' 0'], ['SCAN', '0 '],
    ['SCAN', '0x1'], ['SCAN', '1.0'], ['SCAN', 'abc'], ['SCAN', '-'], ['SCAN', '+'], 
    // Valid cursors that Redis maps onto its hash buckets: which keys come back differs.
    { cmd: ['SCAN', '-1'], compare: 'type' }, { cmd: ['SCAN', '18446744073709551615'], compare: 'type' },
    { cmd: ['SCAN', '-18446744073709551615'], compare: 'type' }, ['SCAN', '18446744073709551616'], ['SCAN', '99999999999999999999999'],
    ['SCAN', '-18446744073709551616'],
  ] },
  { name: 'SCAN option errors', steps: [
    ['SET', 'a', '1'], ['SCAN', '0', 'COUNT', '0'], ['SCAN', '0', 'COUNT', '-1'], ['SCAN', '0', 'COUNT', 'x'],
    ['SCAN', '0', 'COUNT'], ['SCAN', '0', 'MATCH'], ['SCAN', '0', 'TYPE'], ['SCAN', '0', 'foo', 'bar'],
    ['SCAN', '0', 'COUNT', '9999999999999999999'], ['SCAN', '0', 'COUNT', '9223372036854775807'],
    ['SCAN', 'x', 'COUNT', '0'], ['SCAN', '0', 'COUNT', '1', 'foo'], ['SCAN'],
  ] },
  { name: 'SCAN skips expired keys', steps: [
    ['SET', 'a', '1'], ['SET', 'b', '1'], ['PEXPIRE', 'a', '5'], { cmd: ['SCAN', '0'], sleep: 30 }, ['DBSIZE'],
  ] },
  { name: 'SCAN with a binary key', steps: [['SET', bin, '1'], ['SCAN', '0'], ['SCAN', '0', 'MATCH', Buffer.from([0xff, 0x2a])]] },

  // ------------------------------------------------------------ RANDOMKEY
  { name: 'RANDOMKEY', steps: [
    ['RANDOMKEY'], ['SET', 'a', '1'], ['RANDOMKEY'], ['SET', 'b', '1'], { cmd: ['RANDOMKEY'], compare: 'type' },
    ['DEL', 'a', 'b'], ['RANDOMKEY'], ['RANDOMKEY', 'x'],
  ] },
  { name: 'RANDOMKEY skips expired keys', steps: [
    ['SET', 'a', '1'], ['SET', 'b', '1'], ['PEXPIRE', 'a', '5'], { cmd: ['RANDOMKEY'], sleep: 30 }, ['RANDOMKEY'],
    // Whoever expires `a` (RANDOMKEY's pick, active expiry or this lookup), it expires exactly
    // once before this reply: the keyspace-event stream of the case is deterministic.
    ['EXISTS', 'a'],
  ] },

  // ------------------------------------------------------------ EXPIRE family
  { name: 'EXPIRE and TTL', steps: [
    ['SET', 'a', 'v'], ['TTL', 'a'], ['PTTL', 'a'], ['EXPIRE', 'a', '100'], ['TTL', 'a'], { cmd: ['PTTL', 'a'], compare: 'type' },
    ['TTL', 'nokey'], ['PTTL', 'nokey'], ['EXPIRE', 'nokey', '100'], ['EXPIRETIME', 'nokey'], ['PEXPIRETIME', 'nokey'],
    { cmd: ['EXPIRETIME', 'a'], compare: 'type' },
  ] },
  { name: 'PEXPIRE and TTL rounding', steps: [
    ['SET', 'a', 'v'], ['PEXPIRE', 'a', '100000'], ['TTL', 'a'], ['PEXPIRE', 'a', '2400'], ['TTL', 'a'],
    ['PEXPIRE', 'a', '2700'], ['TTL', 'a'],
  ] },
  { name: 'EXPIREAT and PEXPIREAT with EXPIRETIME', steps: [
    ['SET', 'a', 'v'], ['EXPIREAT', 'a', '4000000000'], ['EXPIRETIME', 'a'], ['PEXPIRETIME', 'a'],
    ['PEXPIREAT', 'a', '4000000000499'], ['EXPIRETIME', 'a'], ['PEXPIRETIME', 'a'],
    ['PEXPIREAT', 'a', '4000000000500'], ['EXPIRETIME', 'a'], ['EXPIREAT', 'nokey', '4000000000'],
  ] },
  { name: 'a time in the past deletes the key and answers 1', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '-1'], ['EXISTS', 'a'], ['SET', 'a', 'v'], ['EXPIRE', 'a', '0'], ['EXISTS', 'a'],
    ['SET', 'a', 'v'], ['PEXPIRE', 'a', '0'], ['EXISTS', 'a'], ['SET', 'a', 'v'], ['EXPIREAT', 'a', '1'], ['EXISTS', 'a'],
    ['SET', 'a', 'v'], ['PEXPIREAT', 'a', '1000'], ['EXISTS', 'a'], ['SET', 'a', 'v'], ['EXPIREAT', 'a', '-5'],
    ['GET', 'a'], ['EXPIRE', 'nokey', '-1'],
  ] },
  { name: 'expire overflow checks', steps: [
    ['SET', 'a', 'v'],
    ['EXPIRE', 'a', '9223372036854775807'], ['EXPIRE', 'a', '9223372036854775'], ['EXPIRE', 'a', '9223372036854776'],
    ['EXPIRE', 'a', '-9223372036854775808'], ['EXPIRE', 'a', '-9223372036854776'],
    ['PEXPIRE', 'a', '9223372036854775807'], ['EXPIREAT', 'a', '9223372036854775807'],
    ['EXPIREAT', 'a', '9223372036854775808'], ['PEXPIRE', 'a', '9223372036854775808'], ['TTL', 'a'],
    ['EXPIRE', 'nokey', '9223372036854775807'], ['EXPIREAT', 'nokey', '9223372036854776'],
    ['EXPIREAT', 'a', '9223372036854775'], ['EXPIRETIME', 'a'], ['PEXPIRETIME', 'a'],
    ['EXPIRE', 'a', '-9223372036854775'], ['EXISTS', 'a'], ['SET', 'a', 'v'], ['PEXPIRE', 'a', '-9223372036854775808'],
    ['EXISTS', 'a'], ['SET', 'a', 'v'], ['PEXPIREAT', 'a', '-9223372036854775808'], ['EXISTS', 'a'],
  ] },
  { name: 'huge expire times stay exact', steps: [
    ['SET', 'a', 'v'], ['PEXPIREAT', 'a', '9223372036854775807'], ['PEXPIRETIME', 'a'], ['EXPIRETIME', 'a'],
    { cmd: ['TTL', 'a'], compare: 'type' }, ['PEXPIREAT', 'a', '9007199254740993'], ['PEXPIRETIME', 'a'],
    ['PEXPIREAT', 'a', '9223372036854775806', 'GT'], ['PEXPIREAT', 'a', '9223372036854775807', 'GT'],
    ['PEXPIRETIME', 'a'], ['PEXPIREAT', 'a', '9223372036854775807', 'LT'], ['RENAME', 'a', 'b'], ['PEXPIRETIME', 'b'],
    ['COPY', 'b', 'c'], ['PEXPIRETIME', 'c'], ['MOVE', 'c', '1'], ['SELECT', '1'], ['PEXPIRETIME', 'c'],
    ['EXPIREAT', 'c', '9223372036854775'], ['PEXPIRETIME', 'c'], ['PERSIST', 'c'], ['PEXPIRETIME', 'c'],
  ] },
  { name: 'expire argument errors', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', 'abc'], ['EXPIRE', 'a', '1.5'], ['EXPIRE', 'a', ''], ['EXPIRE', 'a', ' 1'],
    ['PEXPIRE', 'a', '+1'], ['EXPIREAT', 'a', '01'], ['EXPIRE', 'a'], ['PEXPIRE'], ['EXPIREAT', 'a'], ['PEXPIREAT', 'a'],
    ['EXPIRE', 'nokey', 'abc'], ['TTL', 'a'],
  ] },
  { name: 'expire option conflicts', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '10', 'NX', 'XX'], ['EXPIRE', 'a', '10', 'NX', 'GT'], ['EXPIRE', 'a', '10', 'NX', 'LT'],
    ['EXPIRE', 'a', '10', 'GT', 'LT'], ['EXPIRE', 'a', '10', 'XX', 'GT', 'LT'], ['EXPIRE', 'a', '10', 'foo'],
    ['PEXPIRE', 'a', '10', 'nx', 'bar'], ['EXPIRE', 'a', 'abc', 'NX', 'XX'], ['EXPIRE', 'a', 'abc', 'foo'],
    ['EXPIRE', 'nokey', '10', 'NX', 'XX'], ['EXPIRE', 'a', '10', Buffer.from('fo\0o')], ['EXPIREAT', 'a', '10', 'GT', 'lt'],
    ['PEXPIREAT', 'a', '10', 'XX', 'NX'], ['TTL', 'a'],
  ] },
  { name: 'EXPIRE NX and XX', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '100', 'XX'], ['TTL', 'a'], ['EXPIRE', 'a', '100', 'NX'], ['TTL', 'a'],
    ['EXPIRE', 'a', '200', 'NX'], ['TTL', 'a'], ['EXPIRE', 'a', '200', 'XX'], ['TTL', 'a'], ['EXPIRE', 'a', '300', 'nx', 'nx'],
    ['EXPIRE', 'nokey', '100', 'NX'],
  ] },
  { name: 'EXPIRE GT and LT', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '100', 'GT'], ['TTL', 'a'], ['EXPIRE', 'a', '100', 'LT'], ['TTL', 'a'],
    ['EXPIRE', 'a', '200', 'LT'], ['TTL', 'a'], ['EXPIRE', 'a', '50', 'LT'], ['TTL', 'a'], ['EXPIRE', 'a', '20', 'GT'],
    ['TTL', 'a'], ['EXPIRE', 'a', '300', 'GT'], ['TTL', 'a'], ['EXPIRE', 'a', '299', 'GT'], ['EXPIRE', 'a', '301', 'LT'],
    ['EXPIRE', 'a', '400', 'XX', 'GT'], ['TTL', 'a'], ['EXPIRE', 'a', '100', 'XX', 'LT'], ['TTL', 'a'],
    ['PERSIST', 'a'], ['EXPIRE', 'a', '100', 'XX', 'LT'], ['TTL', 'a'], ['EXPIRE', 'a', '-1', 'GT'], ['EXISTS', 'a'],
    ['EXPIRE', 'a', '-1', 'LT'], ['EXISTS', 'a'],
  ] },
  { name: 'PEXPIREAT GT/LT against an exact time', steps: [
    ['SET', 'a', 'v'], ['PEXPIREAT', 'a', '4000000000000'], ['PEXPIREAT', 'a', '4000000000000', 'GT'],
    ['PEXPIREAT', 'a', '4000000000000', 'LT'], ['PEXPIREAT', 'a', '4000000000001', 'GT'], ['PEXPIRETIME', 'a'],
    ['EXPIREAT', 'a', '4000000000', 'LT'], ['PEXPIRETIME', 'a'],
  ] },
  { name: 'a key expires and TTL says -2', steps: [
    ['SET', 'a', 'v'], ['PEXPIRE', 'a', '10'], { cmd: ['TTL', 'a'], sleep: 50 }, ['PTTL', 'a'], ['GET', 'a'],
    ['EXISTS', 'a'], ['EXPIRETIME', 'a'],
  ] },
  { name: 'SET clears the TTL', steps: [
    ['SET', 'a', 'v'], ['EXPIRE', 'a', '100'], ['SET', 'a', 'w'], ['TTL', 'a'],
  ] },
  { name: 'TTL family arity', steps: [
    ['TTL'], ['TTL', 'a', 'b'], ['PTTL'], ['EXPIRETIME'], ['PEXPIRETIME', 'a', 'b'], ['PERSIST'], ['PERSIST', 'a', 'b'],
  ] },
  { name: 'PERSIST', steps: [
    ['SET', 'a', 'v'], ['PERSIST', 'a'], ['EXPIRE', 'a', '100'], ['PERSIST', 'a'], ['TTL', 'a'], ['PERSIST', 'a'],
    ['PERSIST', 'nokey'], ['GET', 'a'],
  ] },
  { name: 'EXPIRE inside MULTI', steps: [
    ['SET', 'a', 'v'], ['MULTI'], ['EXPIRE', 'a', '100'], ['TTL', 'a'], ['PERSIST', 'a'], ['TTL', 'a'], ['EXEC'],
  ] },

  // ------------------------------------------------------------ OBJECT
  { name: 'OBJECT ENCODING of strings', steps: [
    ...['0', '1', '-1', '9999', '10000', '-0', '01', '+1', ' 1', '1 ', '9223372036854775807', '9223372036854775808',
      '-9223372036854775808', '-9223372036854775809', '12345678901234567890', 'a'.repeat(44), 'a'.repeat(45), '',
      '1'.repeat(21), '3.14', 'hello'].flatMap((v) => [
      ['SET', 'k', v], ['OBJECT', 'ENCODING', 'k'], ['OBJECT', 'REFCOUNT', 'k'],
    ]),
    ['OBJECT', 'encoding', 'nokey'], ['object', 'Encoding', 'k'],
  ] },
  { name: 'OBJECT ENCODING after INCRBYFLOAT (embstr, even for an integer) and after INCR', steps: [
    ['INCRBYFLOAT', 'f', '3'], ['OBJECT', 'ENCODING', 'f'], ['OBJECT', 'REFCOUNT', 'f'],
    ['SET', 'g', '1.5'], ['INCRBYFLOAT', 'g', '1.5'], ['GET', 'g'], ['OBJECT', 'ENCODING', 'g'],
    ['RENAME', 'g', 'h'], ['OBJECT', 'ENCODING', 'h'], ['COPY', 'h', 'i'], ['OBJECT', 'ENCODING', 'i'],
    ['INCR', 'h'], ['OBJECT', 'ENCODING', 'h'], ['OBJECT', 'REFCOUNT', 'h'],
    ['INCRBYFLOAT', 'i', '0.5'], ['APPEND', 'i', '1'], ['OBJECT', 'ENCODING', 'i'],
  ] },
  { name: 'OBJECT REFCOUNT, IDLETIME, FREQ', steps: [
    ['SET', 'k', 'v'], ['OBJECT', 'REFCOUNT', 'k'], ['OBJECT', 'REFCOUNT', 'nokey'], { cmd: ['OBJECT', 'IDLETIME', 'k'], compare: 'idle' },
    ['OBJECT', 'IDLETIME', 'nokey'], ['OBJECT', 'FREQ', 'k'], ['OBJECT', 'FREQ', 'nokey'],
  ] },
  { name: 'OBJECT HELP and errors', steps: [
    ['OBJECT', 'HELP'], ['object', 'help'], ['OBJECT', 'HELP', 'x'], ['OBJECT'], ['OBJECT', 'foo'], ['OBJECT', 'foo', 'k'],
    ['OBJECT', 'ENCODING'], ['OBJECT', 'ENCODING', 'k', 'x'], ['OBJECT', 'REFCOUNT'], ['OBJECT', 'IDLETIME'],
    ['OBJECT', 'FREQ', 'a', 'b'],
  ] },
  { name: 'OBJECT on an expired key', steps: [
    ['SET', 'k', 'v'], ['PEXPIRE', 'k', '5'], { cmd: ['OBJECT', 'ENCODING', 'k'], sleep: 30 }, ['OBJECT', 'REFCOUNT', 'k'],
  ] },
];
export default scripts;
