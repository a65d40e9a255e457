/**
 * RESTORE's effects, for diff.test.ts (replies byte for byte) and events.test.ts (the event
 * stream: `new` then `restore` for a key created, `del` for a key REPLACE removed when the TTL
 * given has already passed, nothing else), over string and listpack-hash payloads built byte
 * by byte (test/rdb/fixtures.ts; canonical listpacks: Redis DUMPs a non-canonical one as it came,
 * we re-encode it), with relative, absolute, past and out-of-range TTLs.
 */
import type { Script, Step } from '../harness.js';
import { listpackStrings, payload, str, xorshiftBytes } from '../../rdb/fixtures.js';

const s = payload(0, str('hello'), 10);
const fields: string[] = [];
for (let i = 0; i < 100; i++) fields.push(`field:${i}`, `value:${i}`);
const h = payload(16, str(listpackStrings(fields)), 10);
const h2 = payload(16, str(listpackStrings(['a', 'x', 'b', 'yy'])), 10);

/** Strings around the sizes where DUMP and RESTORE change paths (LZF saving or not, the codec's 128 KB). */
const sizes: Array<[string, Buffer]> = [
  ['noisy30', xorshiftBytes(30, 256, 7)], ['noisy100k', xorshiftBytes(100_000, 256, 8)],
  ['noisy300k', xorshiftBytes(300_000, 256, 9)], ['text300k', xorshiftBytes(300_000, 4, 10, 97)],
  ['text131000', xorshiftBytes(131_000, 3, 11, 97)],
];

/**
 * A listpack hash of 512 bytes or more (ds/hash.ts RAW_MIN) that RESTORE loads is held as its
 * loaded bytes until its first read or change: each kind of first access, on a fresh copy, then
 * its state read back. `src`: 60 integer counters and 20 strings (~1 KB), restored from its DUMP
 * inside a script; `h`: 100 string fields (payload built byte by byte).
 */
const firstAccess: string[][] = [
  ['DUMP'], ['OBJECT', 'ENCODING'], ['HLEN'], ['TYPE'], ['HGET', 'counter:7'], ['HGET', 'nope'],
  ['HMGET', 'counter:1', 'nope', 'name:3'], ['HGETALL'], ['HKEYS'], ['HVALS'], ['HEXISTS', 'name:4'],
  ['HSTRLEN', 'name:5'], ['HSET', 'counter:2', 'x'], ['HSET', 'new', 'v'], ['HSET', 'name:6', 'text-6'],
  ['HMSET', 'a', '1', 'b', '2'], ['HSETNX', 'name:1', 'z'], ['HSETNX', 'fresh', 'z'], ['HINCRBY', 'counter:3', '5'],
  ['HINCRBY', 'counter:3', '100000000'], ['HINCRBY', 'nc', '7'], ['HINCRBYFLOAT', 'counter:4', '1.5'],
  ['HDEL', 'counter:0', 'name:19'], ['HDEL', 'nope'], ['HSET', 'long', 'v'.repeat(100)],
  ['HRANDFIELD', '200'], ['HRANDFIELD', '200', 'WITHVALUES'], ['HSCAN', '0'], ['HSCAN', '0', 'MATCH', 'name:*'],
  ['COPY', 'copy'], ['RENAME', 'renamed'], ['DEL'], ['EXPIRE', '100'], ['SORT', 'BY', 'nosort'],
];
const restoreFrom = "redis.call('restore', KEYS[2], 0, redis.call('dump', KEYS[1]), 'REPLACE') return 1";
const srcPairs: string[] = [];
for (let i = 0; i < 60; i++) srcPairs.push(`counter:${i}`, String(i * 1000 - 7000));
for (let i = 0; i < 20; i++) srcPairs.push(`name:${i}`, `text-${i}`);
const readBack = (k: string, table = false): Step[] => table
  ? [['OBJECT', 'ENCODING', k], { cmd: ['HGETALL', k], compare: 'sorted' }, ['HLEN', k]] // a hashtable: order unspecified
  : [['DUMP', k], ['OBJECT', 'ENCODING', k], ['HGETALL', k], ['HLEN', k]];
const loadedSteps: Step[] = [['HSET', 'src', ...srcPairs], ['DUMP', 'src']];
for (const [i, a] of firstAccess.entries()) {
  const k = `k${i}`;
  const cmd = [a[0], ...(a[0] === 'OBJECT' ? [a[1], k] : [k, ...a.slice(1)])];
  const table = a[1] === 'long';
  loadedSteps.push(['EVAL', restoreFrom, '2', 'src', k], cmd, ...readBack(k, table));
  if (a[0] === 'COPY') loadedSteps.push(['HSET', 'copy', 'counter:9', 'changed'], ...readBack('copy'), ...readBack(k));
  if (a[0] === 'RENAME') loadedSteps.push(...readBack('renamed'));
  const kh = `h${i}`;
  const cmdh = [a[0], ...(a[0] === 'OBJECT' ? [a[1], kh] : [kh, ...a.slice(1)])].map((w) => w.replace('counter:', 'field:').replace('name:', 'field:'));
  loadedSteps.push(['RESTORE', kh, '0', h], cmdh, ...readBack(kh, table));
}
loadedSteps.push(['EVAL', restoreFrom, '2', 'src', 'r'], ['EVAL', restoreFrom, '2', 'src', 'r'], ['HGET', 'r', 'counter:5'], ['DUMP', 'r']);

const scripts: Script[] = [
  { name: 'RESTORE of a listpack hash held as its loaded bytes: every kind of first access, then its state', steps: loadedSteps },
  { name: 'RESTORE and DUMP of strings from 30 bytes to 300 KB, compressible or not', steps: sizes.flatMap(([k, b]) => [
    ['RESTORE', k, '0', payload(0, str(b), 10)], ['STRLEN', k], ['GETRANGE', k, '-20', '-1'], ['DUMP', k],
    ['SET', `${k}:set`, b], ['DUMP', `${k}:set`], ['RESTORE', k, '0', payload(0, str(b), 10), 'REPLACE'],
  ]) },
  { name: 'RESTORE: new keys, BUSYKEY, REPLACE over each type', steps: [
    ['RESTORE', 'k', '0', s], ['GET', 'k'], ['RESTORE', 'k', '0', s], ['RESTORE', 'k', '0', h],
    ['RESTORE', 'k', '0', h, 'REPLACE'], ['HLEN', 'k'], ['HGET', 'k', 'field:57'], ['OBJECT', 'ENCODING', 'k'],
    ['RESTORE', 'k', '0', h2, 'REPLACE'], ['HGETALL', 'k'], ['RESTORE', 'k', '0', s, 'replace'], ['TYPE', 'k'],
    ['RPUSH', 'l', 'x'], ['RESTORE', 'l', '0', h2, 'REPLACE'], ['HGETALL', 'l'],
    ['RESTORE', 'bad', '0', Buffer.from(s.subarray(0, 5))], ['RESTORE', 'k', '0', Buffer.from(s.subarray(0, 5)), 'REPLACE'],
    ['GET', 'k'], ['EXISTS', 'bad'],
  ] },
  { name: 'RESTORE: TTLs relative, absolute, past, beyond 2^53 and at the edge of 64 bits', steps: [
    ['SET', 'k', 'old'], ['RESTORE', 'k', '100000', s, 'REPLACE'], ['TTL', 'k'],
    ['RESTORE', 'k', '1', s, 'REPLACE', 'ABSTTL'], ['EXISTS', 'k'], // already expired: the old value is deleted
    ['RESTORE', 'k', '1', s, 'ABSTTL'], ['EXISTS', 'k'], // already expired, nothing to delete
    ['RESTORE', 'k', '4102444800000', h2, 'ABSTTL'], ['PEXPIRETIME', 'k'],
    ['RESTORE', 'k', '9007199254740993', s, 'REPLACE', 'ABSTTL'], ['PEXPIRETIME', 'k'],
    ['RESTORE', 'k', '9223372036854775807', s, 'REPLACE', 'ABSTTL'], ['PEXPIRETIME', 'k'],
    ['RESTORE', 'k', '9007199254740993', s, 'REPLACE'], ['TTL', 'k'],
    ['RESTORE', 'k', '9223372036854775807', s, 'REPLACE'], ['EXISTS', 'k'], // ttl + now wraps past 2^63: already expired
    ['RESTORE', 'k', '4503599627370496', s], ['RESTORE', 'k', '4503599627370497', s, 'REPLACE'], ['TTL', 'k'], // 2^52, 2^52 + 1
    ['RESTORE', 'k', '-1', s, 'REPLACE'], ['RESTORE', 'k', '9223372036854775808', s, 'REPLACE'], ['RESTORE', 'k', '1x', s, 'REPLACE'],
    ['RESTORE', 'k', '0', s, 'REPLACE', 'IDLETIME', '10'], ['TTL', 'k'],
  ] },
  { name: 'RESTORE in MULTI and in a script', steps: [
    ['SET', 'k', 'v'], ['MULTI'], ['RESTORE', 'k', '0', h2, 'REPLACE'], ['RESTORE', 'k2', '0', s], ['EXEC'],
    ['HGETALL', 'k'], ['GET', 'k2'],
    ['EVAL', "redis.call('restore', KEYS[1], 0, ARGV[1], 'REPLACE'); return redis.call('get', KEYS[1])", '1', 'k', s],
  ] },
];

export default scripts;
