/**
 * RESTORE's effects, for diff.test.ts (replies byte for byte) and events.test.ts (the event
 * stream: `new` then `restore` for a key created, `del` for a key REPLACE removed when the TTL
 * given has already passed, nothing else), over string and listpack-hash payloads built byte
 * by byte (test/rdb/fixtures.ts; canonical listpacks: Redis DUMPs a non-canonical one as it came,
 * we re-encode it), with relative, absolute, past and out-of-range TTLs.
 */
import type { Script } from '../harness.js';
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

const scripts: Script[] = [
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
