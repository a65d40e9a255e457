/**
 * Hash commands against redis-server 7.0. Small hashes are listpack-encoded on both sides, so
 * HGETALL/HKEYS/HVALS order is compared byte for byte; hashtable-encoded ones as multisets.
 * (The 7.4+ field-expiry commands are tested in test/types/hash-field-expiry.test.ts.)
 */
import type { Script, Step } from '../harness.js';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

const wrongType: Step[] = [
  ['SET', 's', 'x'],
  ['HSET', 's', 'f', 'v'], ['HMSET', 's', 'f', 'v'], ['HSETNX', 's', 'f', 'v'], ['HGET', 's', 'f'],
  ['HMGET', 's', 'f', 'g'], ['HDEL', 's', 'f'], ['HLEN', 's'], ['HSTRLEN', 's', 'f'], ['HEXISTS', 's', 'f'],
  ['HKEYS', 's'], ['HVALS', 's'], ['HGETALL', 's'], ['HINCRBY', 's', 'f', '1'], ['HINCRBYFLOAT', 's', 'f', '1'],
  ['HRANDFIELD', 's'], ['HRANDFIELD', 's', '2'], ['HRANDFIELD', 's', '-2', 'WITHVALUES'], ['HSCAN', 's', '0'],
  ['GET', 's'],
  // Argument errors come before the type check where Redis parses first.
  ['HINCRBY', 's', 'f', 'x'], ['HINCRBYFLOAT', 's', 'f', 'x'], ['HINCRBYFLOAT', 's', 'f', 'inf'], ['HRANDFIELD', 's', 'x'],
  ['HRANDFIELD', 's', '1', 'bad'], ['HSCAN', 's', 'x'], ['HSCAN', 's', '0', 'COUNT', '0'], ['HSET', 's', 'a', '1', 'b'],
];

const scripts: Script[] = [
  { name: 'HSET creates, counts new fields, updates in place', steps: [
    ['HSET', 'h', 'a', '1'], ['HSET', 'h', 'b', '2', 'c', '3'], ['HSET', 'h', 'a', '10', 'd', '4', 'b', '20'],
    ['HGETALL', 'h'], ['HKEYS', 'h'], ['HVALS', 'h'], ['HLEN', 'h'], ['HGET', 'h', 'a'], ['HGET', 'h', 'zz'],
    ['HGET', 'nokey', 'a'],
  ] },
  { name: 'HSET with the same field twice in one call', steps: [
    ['HSET', 'h', 'a', '1', 'a', '2', 'b', '3'], ['HGETALL', 'h'],
  ] },
  { name: 'a new hash built by one HSET or HMSET: repeated fields, lengths, integers, limits', steps: [
    // Repeated fields of the same length, not adjacent; the last value wins, HSET counts once.
    ['HSET', 'n1', 'ab', '1', 'ac', '2', 'ab', '3'], ['HGETALL', 'n1'], ['DUMP', 'n1'],
    ['HMSET', 'n2', 'x', '', '', 'y', 'x', 'z'], ['HGETALL', 'n2'], ['HLEN', 'n2'],
    // Integer-encoded values (past int32: ms timestamps), empty and binary ones, then more HSETs.
    ['HMSET', 'n3', 'name', 'job', 'timestamp', '1795871820887', 'delay', '0', 'neg', '-1795871820887', 'big', '9223372036854775807',
      'b', Buffer.from([0, 255, 13, 10]), '', 'empty'],
    ['HGETALL', 'n3'], ['DUMP', 'n3'], ['OBJECT', 'ENCODING', 'n3'],
    ['HSET', 'n3', 'processedOn', '1795871820902', 'name', 'job2'], ['HINCRBY', 'n3', 'ats', '1'], ['HGETALL', 'n3'], ['DUMP', 'n3'],
    // Pairs added to an existing listpack hash: all new; one repeated in the call; the last one present.
    ['HSET', 'n3', 'returnvalue', '{"ok":0}', 'finishedOn', '1795871820907'], ['HGETALL', 'n3'], ['DUMP', 'n3'],
    ['HSET', 'n3', 'r1', 'a', 'r2', 'b', 'r1', 'c'], ['HSET', 'n3', 'r3', 'x', 'ats', '7'], ['HGETALL', 'n3'], ['HLEN', 'n3'], ['DUMP', 'n3'],
    // HINCRBY of new fields: small, negative, zero, past int32, past 2^53 (the exact path), a
    // field past hash-max-listpack-value, a value past a small hash-max-listpack-value.
    ['HINCRBY', 'n3', 'i1', '1'], ['HINCRBY', 'n3', 'i2', '-4097'], ['HINCRBY', 'n3', 'i3', '-0'], ['HINCRBY', 'n3', 'i4', '1795871820907'],
    ['HINCRBY', 'n3', 'i5', '9007199254740993'], ['HINCRBY', 'n3', 'i1', '1'], ['HGETALL', 'n3'], ['DUMP', 'n3'],
    ['HSET', 'n4', 'a', '1'], ['HINCRBY', 'n4', 'f'.repeat(65), '3'], ['OBJECT', 'ENCODING', 'n4'],
    ['HSET', 'n5', 'a', '1'], ['CONFIG', 'SET', 'hash-max-listpack-value', '3'], ['HINCRBY', 'n5', 'b', '123'], ['OBJECT', 'ENCODING', 'n5'],
    ['HINCRBY', 'n5', 'c', '1234'], ['OBJECT', 'ENCODING', 'n5'], ['CONFIG', 'SET', 'hash-max-listpack-value', '64'],
    { cmd: ['HGETALL', 'n5'], compare: 'sorted' },
    // Values at and past hash-max-listpack-value; 16 and 17 pairs; past hash-max-listpack-entries.
    ['HSET', 'v64', 'f', 'x'.repeat(64), 'g', '1'], ['OBJECT', 'ENCODING', 'v64'], ['DUMP', 'v64'],
    ['HSET', 'v65', 'f', 'x'.repeat(65), 'g', '1'], ['OBJECT', 'ENCODING', 'v65'], { cmd: ['HGETALL', 'v65'], compare: 'sorted' },
    ['HSET', 'p16', 'f0', '0', 'f1', '1000003', 'f2', '2000006', 'f3', '3000009', 'f4', '4000012', 'f5', '5000015', 'f6', '6000018', 'f7', '7000021', 'f8', '8000024', 'f9', '9000027', 'f10', '10000030', 'f11', '11000033', 'f12', '12000036', 'f13', '13000039', 'f14', '14000042', 'f15', '15000045'], ['DUMP', 'p16'],
    ['HSET', 'p17', 'f0', '0', 'f1', '1000003', 'f2', '2000006', 'f3', '3000009', 'f4', '4000012', 'f5', '5000015', 'f6', '6000018', 'f7', '7000021', 'f8', '8000024', 'f9', '9000027', 'f10', '10000030', 'f11', '11000033', 'f12', '12000036', 'f13', '13000039', 'f14', '14000042', 'f15', '15000045', 'f16', '16000048'], ['DUMP', 'p17'],
    ['CONFIG', 'SET', 'hash-max-listpack-entries', '4'],
    ['HSET', 'e4', 'k0', '0', 'k1', '1000003', 'k2', '2000006', 'k3', '3000009'], ['OBJECT', 'ENCODING', 'e4'], ['HSET', 'e5', 'k0', '0', 'k1', '1000003', 'k2', '2000006', 'k3', '3000009', 'k4', '4000012'], ['OBJECT', 'ENCODING', 'e5'],
    { cmd: ['HGETALL', 'e5'], compare: 'sorted' }, ['CONFIG', 'SET', 'hash-max-listpack-entries', '512'],
  ] },
  { name: 'HSET / HMSET argument count errors', steps: [
    ['HSET', 'h', 'a'], ['HSET', 'h', 'a', '1', 'b'], ['HMSET', 'h', 'a', '1', 'b'], ['HMSET', 'h', 'a'],
    ['HMSET', 'h', 'a', '1', 'b', '2'], ['HGETALL', 'h'], ['HSET', 's'],
  ] },
  { name: 'listpack order after deletes and re-adds', steps: [
    ['HSET', 'h', 'a', '1', 'b', '2', 'c', '3', 'd', '4'], ['HDEL', 'h', 'b'], ['HSET', 'h', 'b', 'x', 'e', '5'],
    ['HDEL', 'h', 'a', 'zz', 'e'], ['HGETALL', 'h'], ['HSET', 'h', 'c', 'new'], ['HGETALL', 'h'],
  ] },
  { name: 'WRONGTYPE for every hash command', steps: wrongType },
  { name: 'commands on a missing key', steps: [
    ['HLEN', 'no'], ['HSTRLEN', 'no', 'f'], ['HEXISTS', 'no', 'f'], ['HKEYS', 'no'], ['HVALS', 'no'],
    ['HGETALL', 'no'], ['HMGET', 'no', 'a', 'b'], ['HDEL', 'no', 'a'], ['HRANDFIELD', 'no'],
    ['HRANDFIELD', 'no', '3'], ['HRANDFIELD', 'no', '-3', 'WITHVALUES'], ['HSCAN', 'no', '0'],
    ['HSCAN', 'no', '0', 'COUNT', '0'], ['HSCAN', 'no', '0', 'BOGUS'],
  ] },
  { name: 'HSETNX', steps: [
    ['HSETNX', 'h', 'a', '1'], ['HSETNX', 'h', 'a', '2'], ['HSETNX', 'h', 'b', '3'], ['HGETALL', 'h'],
  ] },
  { name: 'HMGET mixes present and missing fields', steps: [
    ['HSET', 'h', 'a', '1', 'b', ''], ['HMGET', 'h', 'a', 'x', 'b', 'a'], ['HGET', 'h', 'b'],
  ] },
  { name: 'HDEL deletes the key with its last field', steps: [
    ['HSET', 'h', 'a', '1', 'b', '2'], ['HDEL', 'h', 'a', 'a', 'b', 'c'], ['HLEN', 'h'], ['HGETALL', 'h'],
    ['DEL', 'h'], ['HSET', 'h', 'x', 'y'], ['HDEL', 'h', 'nope'], ['HGETALL', 'h'],
  ] },
  { name: 'HSTRLEN and HEXISTS', steps: [
    ['HSET', 'h', 'n', '12345', 'neg', '-17', 's', 'hello', 'e', '', 'big', '123456789012345678901234'],
    ['HSTRLEN', 'h', 'n'], ['HSTRLEN', 'h', 'neg'], ['HSTRLEN', 'h', 's'], ['HSTRLEN', 'h', 'e'],
    ['HSTRLEN', 'h', 'big'], ['HSTRLEN', 'h', 'missing'], ['HEXISTS', 'h', 'e'], ['HEXISTS', 'h', 'x'],
  ] },
  { name: 'binary-safe fields and values', steps: [
    ['HSET', 'h', Buffer.from([0, 255, 13, 10]), Buffer.from([1, 2, 0, 200]), 'é', 'ü'],
    ['HGETALL', 'h'], ['HGET', 'h', Buffer.from([0, 255, 13, 10])], ['HSTRLEN', 'h', 'é'], ['HKEYS', 'h'],
  ] },
  { name: 'HINCRBY', steps: [
    ['HINCRBY', 'h', 'a', '5'], ['HINCRBY', 'h', 'a', '-12'], ['HINCRBY', 'h', 'b', '0'], ['HGETALL', 'h'],
    ['HSET', 'h', 's', 'abc', 'f', '1.5', 'sp', ' 1', 'z', '007', 'e', ''],
    ['HINCRBY', 'h', 's', '1'], ['HINCRBY', 'h', 'f', '1'], ['HINCRBY', 'h', 'sp', '1'], ['HINCRBY', 'h', 'z', '1'],
    ['HINCRBY', 'h', 'e', '1'],
    ['HINCRBY', 'h', 'a', '1.0'], ['HINCRBY', 'h', 'a', 'x'], ['HINCRBY', 'h', 'a', ''],
    ['HINCRBY', 'h', 'a', '9223372036854775808'], ['HINCRBY', 'h', 'a', '-9223372036854775809'],
    ['HSET', 'h', 'max', '9223372036854775807', 'min', '-9223372036854775808'],
    ['HINCRBY', 'h', 'max', '1'], ['HINCRBY', 'h', 'max', '0'], ['HINCRBY', 'h', 'max', '-9223372036854775808'],
    ['HINCRBY', 'h', 'min', '-1'], ['HINCRBY', 'h', 'min', '9223372036854775807'],
    ['HINCRBY', 'h', 'big', '9007199254740993'], ['HINCRBY', 'h', 'big', '9007199254740993'], ['HGET', 'h', 'big'],
    ['HINCRBY', 'new', 'f', 'bad'], ['HGETALL', 'new'],
  ] },
  { name: 'HINCRBYFLOAT formatting (long double, %.17Lf)', steps: [
    ['HINCRBYFLOAT', 'h', 'a', '10.5'], ['HINCRBYFLOAT', 'h', 'a', '0.1'], ['HINCRBYFLOAT', 'h', 'a', '-5.0e3'],
    ['HINCRBYFLOAT', 'h', 'b', '3.0'], ['HINCRBYFLOAT', 'h', 'c', '1.23e-10'], ['HINCRBYFLOAT', 'h', 'd', '1e300'],
    ['HINCRBYFLOAT', 'h', 'e', '-0.0'], ['HINCRBYFLOAT', 'h', 'f', '0x10'], ['HINCRBYFLOAT', 'h', 'g', '.5'],
    ['HINCRBYFLOAT', 'h', 'g', '5.'], ['HINCRBYFLOAT', 'h', 'i', '1e-20'], ['HINCRBYFLOAT', 'h', 'j', '123456789.123456789'],
    ['HINCRBYFLOAT', 'h', 'k', '0.1'], ['HINCRBYFLOAT', 'h', 'k', '0.2'], ['HINCRBYFLOAT', 'h', 'l', '-1e-18'],
    ['HINCRBYFLOAT', 'h', 'm', '1e4000'], ['HINCRBYFLOAT', 'h', 'm', '1e4000'],
    ['HINCRBYFLOAT', 'h', 'n', '1.7976931348623157e308'], ['HINCRBYFLOAT', 'h', 'n', '1e308'],
    ['HINCRBYFLOAT', 'h', 'o', '+7'], ['HINCRBYFLOAT', 'h', 'p', '1E2'], ['HINCRBYFLOAT', 'h', 'q', '3.0000000000000000001'],
    // Values longer than 64 bytes made it a hashtable: order unspecified.
    { cmd: ['HGETALL', 'h'], compare: 'sorted' },
    ['HINCRBYFLOAT', 'small', 'x', '2.5'], ['HINCRBYFLOAT', 'small', 'y', '-0.25'], ['HINCRBYFLOAT', 'small', 'x', '1e-3'],
    ['HGETALL', 'small'],
  ] },
  { name: 'HINCRBYFLOAT errors', steps: [
    ['HINCRBYFLOAT', 'h', 'a', 'inf'], ['HINCRBYFLOAT', 'h', 'a', '-inf'], ['HINCRBYFLOAT', 'h', 'a', 'nan'],
    ['HINCRBYFLOAT', 'h', 'a', 'abc'], ['HINCRBYFLOAT', 'h', 'a', ''], ['HINCRBYFLOAT', 'h', 'a', ' 1'],
    ['HINCRBYFLOAT', 'h', 'a', '1 '], ['HINCRBYFLOAT', 'h', 'a', '1e'], ['HINCRBYFLOAT', 'h', 'a', '1e99999'],
    ['HINCRBYFLOAT', 'h', 'a', '1e-99999'], ['HINCRBYFLOAT', 'h', 'a', '0x'],
    ['HSET', 'h', 'bad', 'x1', 'inf', 'inf', 'big', '1e4932'],
    ['HINCRBYFLOAT', 'h', 'bad', '1'], ['HINCRBYFLOAT', 'h', 'inf', '1'], ['HINCRBYFLOAT', 'h', 'big', '1e4932'],
    ['HGETALL', 'h'], ['HINCRBYFLOAT', 'new', 'f', 'inf'], ['HGETALL', 'new'],
  ] },
  { name: 'HINCRBYFLOAT on integers and back', steps: [
    ['HSET', 'h', 'i', '5', 'neg', '-3'], ['HINCRBYFLOAT', 'h', 'i', '1.5'], ['HINCRBYFLOAT', 'h', 'neg', '3'],
    ['HINCRBY', 'h', 'neg', '1'], ['HINCRBYFLOAT', 'h', 'i', '-6.5'], ['HINCRBY', 'h', 'i', '2'], ['HGETALL', 'h'],
  ] },
  { name: 'HRANDFIELD deterministic forms', steps: [
    ['HSET', 'h', 'a', '1', 'b', '2', 'c', '3'],
    ['HRANDFIELD', 'h', '0'], ['HRANDFIELD', 'h', '3'], ['HRANDFIELD', 'h', '10'], ['HRANDFIELD', 'h', '3', 'WITHVALUES'],
    ['HRANDFIELD', 'h', '100', 'withvalues'], ['HRANDFIELD', 'h', '0', 'WITHVALUES'],
    { cmd: ['HRANDFIELD', 'h'], compare: 'type' }, { cmd: ['HRANDFIELD', 'h', '-5'], compare: 'type' },
    { cmd: ['HRANDFIELD', 'h', '2'], compare: 'type' },
    ['HSET', 'one', 'f', 'v'], ['HRANDFIELD', 'one'], ['HRANDFIELD', 'one', '-3'], ['HRANDFIELD', 'one', '-2', 'WITHVALUES'],
    ['HRANDFIELD', 'one', '1'], ['HRANDFIELD', 'one', '1', 'WITHVALUES'],
  ] },
  { name: 'HRANDFIELD errors', steps: [
    ['HSET', 'h', 'a', '1'],
    ['HRANDFIELD', 'h', 'x'], ['HRANDFIELD', 'h', '1.5'], ['HRANDFIELD', 'h', '-9223372036854775808'],
    ['HRANDFIELD', 'h', '9223372036854775808'], ['HRANDFIELD', 'h', '1', 'WITHVALUE'], ['HRANDFIELD', 'h', '1', 'WITHVALUES', 'x'],
    ['HRANDFIELD', 'h', '4611686018427387904', 'WITHVALUES'], ['HRANDFIELD', 'h', '-4611686018427387904', 'WITHVALUES'],
    ['HRANDFIELD', 'h', '4611686018427387903', 'WITHVALUES'], ['HRANDFIELD', 'no', 'x'], ['HRANDFIELD', 'no', '1', 'bad'],
    ['HRANDFIELD', 'no', '9223372036854775807', 'WITHVALUES'],
  ] },
  { name: 'HSCAN of a listpack hash', steps: [
    ['HSET', 'h', 'one', '1', 'two', '2', 'three', '3', 'four', '4', 'five', '5'],
    ['HSCAN', 'h', '0'], ['HSCAN', 'h', '0', 'COUNT', '1'], ['HSCAN', 'h', '7'], ['HSCAN', 'h', '0', 'MATCH', 't*'],
    ['HSCAN', 'h', '0', 'MATCH', '*'], ['HSCAN', 'h', '0', 'MATCH', 'f?ve', 'COUNT', '100'], ['HSCAN', 'h', '0', 'match', '[a-o]*'],
    ['HSCAN', 'h', '0', 'MATCH', 'x', 'MATCH', 'one'], ['HSCAN', 'h', ''], ['HSCAN', 'h', '-1'], ['HSCAN', 'h', '+0'],
  ] },
  { name: 'HSCAN errors', steps: [
    ['HSET', 'h', 'a', '1'],
    ['HSCAN', 'h', 'x'], ['HSCAN', 'h', ' 1'], ['HSCAN', 'h', '1 '], ['HSCAN', 'h', '18446744073709551616'],
    ['HSCAN', 'h', '18446744073709551615'], ['HSCAN', 'h', '-'], ['HSCAN', 'h', '+'],
    ['HSCAN', 'h', '0', 'COUNT', '0'], ['HSCAN', 'h', '0', 'COUNT', '-1'], ['HSCAN', 'h', '0', 'COUNT', 'x'],
    ['HSCAN', 'h', '0', 'COUNT'], ['HSCAN', 'h', '0', 'MATCH'], ['HSCAN', 'h', '0', 'TYPE', 'string'],
    ['HSCAN', 'h', '0', 'COUNT', '9223372036854775808'], ['HSCAN', 'h', '0', 'COUNT', '-9223372036854775809'],
    ['HSCAN', 's', 'bad'], ['SET', 's', 'x'], ['HSCAN', 's', 'bad'], ['HSCAN', 's', '0'],
  ] },
  { name: 'hash grows past hash-max-listpack-entries (hashtable)', steps: [
    ['HSET', 'h', ...range(600).flatMap((i) => [`f${i}`, `v${i}`])], ['HLEN', 'h'],
    { cmd: ['HGETALL', 'h'], compare: 'sorted' }, { cmd: ['HKEYS', 'h'], compare: 'sorted' },
    { cmd: ['HVALS', 'h'], compare: 'sorted' }, ['HGET', 'h', 'f599'], ['HDEL', 'h', 'f0', 'f1', 'nope'], ['HLEN', 'h'],
    ['HRANDFIELD', 'h', '0'], { cmd: ['HRANDFIELD', 'h', '1000'], compare: 'sorted' },
    { cmd: ['HRANDFIELD', 'h', '-3'], compare: 'type' }, { cmd: ['HRANDFIELD', 'h', '5', 'WITHVALUES'], compare: 'type' },
    { cmd: ['HSCAN', 'h', '0'], compare: 'type' },
  ] },
  { name: 'a long value makes a hashtable', steps: [
    ['HSET', 'h', 'a', '1', 'b', 'x'.repeat(65)], ['HSET', 'h2', 'a', 'x'.repeat(64), 'b', '2'], ['HGETALL', 'h2'],
    { cmd: ['HGETALL', 'h'], compare: 'sorted' }, ['HSET', 'h3', 'y'.repeat(70), '1'], ['HGETALL', 'h3'],
    ['HINCRBYFLOAT', 'h4', 'a', '1e100'], ['HINCRBYFLOAT', 'h4', 'b', '1'], { cmd: ['HGETALL', 'h4'], compare: 'sorted' },
  ] },
  { name: 'MULTI with hash commands', steps: [
    ['MULTI'], ['HSET', 'h', 'a', '1'], ['HINCRBY', 'h', 'a', 'x'], ['HINCRBY', 'h', 'a', '2'], ['HGETALL', 'h'], ['EXEC'],
  ] },
  { name: 'WATCH sees HSET but not a no-op HDEL', steps: [
    ['HSET', 'h', 'a', '1'], ['WATCH', 'h'], ['HDEL', 'h', 'zz'], ['MULTI'], ['HGET', 'h', 'a'], ['EXEC'],
    ['WATCH', 'h'], ['HSET', 'h', 'a', '1'], ['MULTI'], ['HGET', 'h', 'a'], ['EXEC'],
    ['WATCH', 'h'], ['HSETNX', 'h', 'a', '2'], ['MULTI'], ['HGET', 'h', 'a'], ['EXEC'],
  ] },
  { name: 'big hashtable with churn: values of changing length, deletions, binary fields', steps: bigHash() },
  // HSET/HMSET of a hashtable hash write the entry from the request's bytes (TCP and redis.call):
  // binary and NUL bytes, lengths around the 32-byte JS copy, same-length rewrites in place.
  { name: 'HSET of a hashtable hash from the request bytes (TCP and scripts)', steps: [
    ['HSET', 'j', 'data', 'x'.repeat(100), 'a\u0000b', '\u0000', 'k'.repeat(32), 'v'.repeat(33)],
    ['HSET', 'j', 'a\u0000b', '\u0001', 'k'.repeat(32), 'w'.repeat(33), 'k'.repeat(33), 'z'.repeat(32)],
    ['HGET', 'j', 'a\u0000b'], ['HGET', 'j', 'k'.repeat(32)], ['HGET', 'j', 'k'.repeat(33)], ['HGET', 'j', 'a'],
    ['HMGET', 'j', 'a\u0000b', 'a', 'k'.repeat(33), 'a\u0000', '', 'data'], ['HGET', 'nokey', 'a'], ['HMGET', 'nokey', 'a', 'b'],
    ['EVAL', "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]) " +
      "return {redis.call('HMSET', KEYS[1], ARGV[1], ARGV[4]), redis.call('HGET', KEYS[1], ARGV[1]), redis.call('HGET', KEYS[1], ARGV[3]), redis.call('HLEN', KEYS[1])}",
      '1', 'j', 'f\u0000\u00ff', 'a'.repeat(32), 'b'.repeat(33) + '\u0000', 'v\u0000\u0080'],
    ['EVAL', "for i = 1, 40 do redis.call('HSET', KEYS[1], 'f' .. i, string.rep('y', i)) end " +
      "redis.call('HSET', KEYS[1], 'f7', 'same..', 'f40', string.rep('z', 100)) return redis.call('HLEN', KEYS[1])", '1', 'j'],
    ['HGET', 'j', 'f7'], ['HGET', 'j', 'f40'], ['HGET', 'j', 'f39'], ['HSTRLEN', 'j', 'f33'],
    { cmd: ['HGETALL', 'j'], compare: 'sorted' }, ['HLEN', 'j'],
  ] },
  // HGETALL/HKEYS/HVALS of a hashtable hash reply from the entries' bytes (TCP and redis.call):
  // pairs checked through a script that sorts "field=value" (the order itself is unspecified).
  { name: 'HGETALL, HKEYS, HVALS of a hashtable hash from the entry bytes (TCP and scripts)', steps: [
    ['HSET', 'g', 'data', 'x'.repeat(100), 'a\u0000b', '\u0000', 'k'.repeat(32), 'v'.repeat(33), '', 'empty-field', 'e', ''],
    ['HSET', 'g', 'f\u00ff\u0080', 'w'.repeat(32), 'n', '12345', 'm', '-7'], ['HINCRBY', 'g', 'n', '5'], ['HINCRBY', 'g', 'new', '3'],
    { cmd: ['HGETALL', 'g'], compare: 'sorted' }, { cmd: ['HKEYS', 'g'], compare: 'sorted' }, { cmd: ['HVALS', 'g'], compare: 'sorted' },
    ['EVAL', "local r = redis.call('HGETALL', KEYS[1]) local o = {} for i = 1, #r, 2 do o[#o + 1] = r[i] .. '=' .. r[i + 1] end " +
      "table.sort(o) local k = redis.call('HKEYS', KEYS[1]) table.sort(k) local v = redis.call('HVALS', KEYS[1]) table.sort(v) " +
      "return {o, k, v, #r}", '1', 'g'],
    // After deletions and rewrites (positions move), and emptied down to nothing.
    ['HDEL', 'g', 'a\u0000b', 'n', ''], ['HSET', 'g', 'k'.repeat(32), 'short', 'data', 'y'.repeat(70)],
    ['EVAL', "local r = redis.call('HGETALL', KEYS[1]) local o = {} for i = 1, #r, 2 do o[#o + 1] = r[i] .. '=' .. r[i + 1] end " +
      "table.sort(o) return o", '1', 'g'],
    { cmd: ['HGETALL', 'g'], compare: 'sorted' }, ['OBJECT', 'ENCODING', 'g'],
    ['HDEL', 'g', 'data', 'e', 'k'.repeat(32), 'f\u00ff\u0080', 'm', 'new'], ['HGETALL', 'g'], ['HKEYS', 'g'], ['HVALS', 'g'],
    ['EVAL', "return redis.call('HGETALL', KEYS[1])", '1', 'g'], ['EXISTS', 'g'],
  ] },
  // A hashtable hash (one long value) of up to 16 fields has no index (lookups scan); at 17 it
  // gets one, and drops it again when shrunk: lookups, misses and rewrites on both sides of it.
  { name: 'hashtable hash across the 16-field index threshold, up and down', steps: [
    ['HSET', 't', 'data', 'd'.repeat(80)],
    ...Array.from({ length: 19 }, (_, i): Step[] => [
      ['HSET', 't', `f${i}`, String(i * 3), 'f', `v${i}`],
      ['HMGET', 't', 'data', `f${i}`, `f${i + 1}`, 'f', 'f0', 'g0', ''], ['HEXISTS', 't', `f${i}`], ['HLEN', 't'],
    ]).flat(),
    ['HINCRBY', 't', 'f5', '10'], ['HSTRLEN', 't', 'data'], { cmd: ['HKEYS', 't'], compare: 'sorted' },
    ['HDEL', 't', ...Array.from({ length: 17 }, (_, i) => `f${i}`)], ['HLEN', 't'],
    ['HMGET', 't', 'f17', 'f18', 'f0', 'f', 'data'], ['HSET', 't', 'f0', 'again', 'f17', 'x'], ['HGET', 't', 'f17'],
    { cmd: ['HGETALL', 't'], compare: 'sorted' },
  ] },
  // HGET/HMGET of a small listpack hash search the field from the request's bytes.
  { name: 'HGET and HMGET of a listpack hash from the field bytes: integer-like, empty and binary fields', steps: [
    ['HSET', 'm', '1', 'one', '01', 'zero-one', '-0', 'mz', '9007199254740993', 'big', '12345678901234567890', 'huge', '', 'empty',
      '-1', 'neg', 'opts.maxLenEvents', '10000', Buffer.from([0, 0xff]), 'bin', '1795840337019', 'ts'],
    ...['1', '01', '-0', '0', '9007199254740993', '9007199254740992', '12345678901234567890', '', '-1', '+1', 'opts.maxLenEvents',
      'opts.maxLenEvent', Buffer.from([0, 0xff]), Buffer.from([0]), '1795840337019', '1795840337018', 'one'].flatMap((f): Step[] => [
      ['HGET', 'm', f], ['HMGET', 'm', f, '1', f],
    ]),
    ['HMGET', 'nokey', '1', ''], ['HGET', 'nokey', ''], ['OBJECT', 'ENCODING', 'm'],
  ] },
  // A hashtable hash made by one HSET gets its first arena sized for its fields (and half
  // again); its offsets are a plain array without index and a typed one with: every transition.
  { name: 'hashtable hash created by one HSET, grown past its first arena, index made and dropped', steps: [
    ['HMSET', 'job', 'name', 'job', 'data', `{"i":99,"payload":"${'x'.repeat(100)}"}`, 'opts', '{"attempts":0}',
      'timestamp', '1795840335899', 'delay', '0', 'priority', '0'],
    ['HMSET', 'job', 'processedOn', '1795840337005'], ['HINCRBY', 'job', 'ats', '1'], { cmd: ['HGETALL', 'job'], compare: 'sorted' },
    ['HMGET', 'job', 'parentKey', 'parent', 'deid'], ['HINCRBY', 'job', 'atm', '1'],
    ['HSET', 'job', 'returnvalue', 'r'.repeat(300), 'finishedOn', '1795840337019'], ['HLEN', 'job'],
    ['HGET', 'job', 'returnvalue'], ['HSTRLEN', 'job', 'data'], { cmd: ['HGETALL', 'job'], compare: 'sorted' },
    ['HDEL', 'job', 'name', 'data', 'opts', 'timestamp', 'delay', 'priority', 'processedOn', 'ats', 'atm', 'returnvalue'],
    ['HGETALL', 'job'], ['HDEL', 'job', 'finishedOn'], ['EXISTS', 'job'],
    ['HSET', 'big', ...Array.from({ length: 40 }, (_, i) => [`field:${i}`, `${i}`.repeat(i === 7 ? 70 : i % 5)]).flat()],
    ['HLEN', 'big'], ['HMGET', 'big', 'field:0', 'field:7', 'field:39', 'field:40', ''],
    ['HDEL', 'big', ...Array.from({ length: 37 }, (_, i) => `field:${i + 2}`)], ['HLEN', 'big'],
    ['HMGET', 'big', 'field:0', 'field:1', 'field:39', 'field:2'], ['HSET', 'big', 'new', 'n', 'field:1', 'one'],
    { cmd: ['HGETALL', 'big'], compare: 'sorted' }, ['COPY', 'big', 'big2'], ['HDEL', 'big2', 'field:0', 'new'],
    { cmd: ['HGETALL', 'big2'], compare: 'sorted' }, { cmd: ['HGETALL', 'big'], compare: 'sorted' },
    { cmd: ['HRANDFIELD', 'big', '-6'], compare: 'type' }, ['HDEL', 'big', 'field:0', 'field:1', 'field:39', 'new'], ['EXISTS', 'big'],
  ] },
  // Listpack bytes after each kind of change: DUMP must equal redis-server's byte for byte.
  { name: 'DUMP after value updates between integer and string encodings', steps: intStringUpdates() },
  { name: 'DUMP after HDEL in the middle, HINCRBY, HINCRBYFLOAT, HSETNX', steps: [
    ['HSET', 'h', 'a', '1', 'b', 'two', 'c', '3', 'd', 'four', 'e', '5'], ['DUMP', 'h'],
    ['HDEL', 'h', 'c'], ['DUMP', 'h'], ['HDEL', 'h', 'a'], ['DUMP', 'h'], ['HDEL', 'h', 'e'], ['DUMP', 'h'],
    ['HSET', 'h', 'c', '33'], ['DUMP', 'h'], ['HGETALL', 'h'],
    // HINCRBY across every integer width (7-bit, 13-bit, 16, 24, 32 and 64 bits).
    ['HINCRBY', 'h', 'n', '127'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '1'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '3968'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '1'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '-8193'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '40000'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '9000000'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '3000000000'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '-9223372036854775807'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '-6009008'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '-2'], ['HGET', 'h', 'n'], ['HINCRBY', 'h', 'b', '1'], ['DUMP', 'h'],
    ['HINCRBYFLOAT', 'h', 'f', '1.5'], ['DUMP', 'h'], ['HINCRBYFLOAT', 'h', 'f', '1.5'], ['DUMP', 'h'],
    ['HINCRBYFLOAT', 'h', 'f', '-3'], ['DUMP', 'h'], ['HINCRBYFLOAT', 'h', 'c', '0.25'], ['DUMP', 'h'],
    ['HINCRBYFLOAT', 'h', 'f', '1e20'], ['DUMP', 'h'], ['HGET', 'h', 'f'],
    ['HSETNX', 'h', 'b', 'x'], ['HSETNX', 'h', 'z', '-1'], ['HSETNX', 'h', 'y', 'why'], ['DUMP', 'h'],
    ['HGETALL', 'h'], ['HSTRLEN', 'h', 'n'], ['HEXISTS', 'h', 'z'],
  ] },
  { name: 'HINCRBY edits in place (same width) and across widths, HGETALL of every integer width', steps: [
    ['HSET', 'h', 'pre', 'x', 'n', '100', 'post', '-1'],
    ['HINCRBY', 'h', 'n', '1'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '26'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '1'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '-1'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '-128'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '-4095'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '-1'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '4096'], ['HINCRBY', 'h', 'n', '4095'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '1'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '28672'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '-65536'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '8421375'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '1'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '2139095039'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '1'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 'n', '-4294967296'], ['DUMP', 'h'], ['HINCRBY', 'h', 'n', '-1'], ['DUMP', 'h'],
    ['HSET', 'h', 's', '9007199254740990'], ['HINCRBY', 'h', 's', '1'], ['DUMP', 'h'], ['HINCRBY', 'h', 's', '1'], ['DUMP', 'h'],
    ['HINCRBY', 'h', 's', '1'], ['HGET', 'h', 's'], ['HSET', 'h', 't', '-9007199254740990'], ['HINCRBY', 'h', 't', '-1'],
    ['HINCRBY', 'h', 't', '-2'], ['HINCRBY', 'h', 't', '9223372036854775807'], ['DUMP', 'h'], ['HGET', 'h', 't'],
    ['HINCRBY', 'h', 'pre', '1'], ['HINCRBY', 'h', 'post', '1'], ['HINCRBY', 'h', 'post', '9223372036854775807'],
    ['HINCRBY', 'h', 'post', '-9223372036854775807'], ['DUMP', 'h'], ['HGETALL', 'h'], ['HVALS', 'h'], ['HKEYS', 'h'],
    ['HSET', 'w', 'a', '0', 'b', '-1', 'c', '127', 'd', '-4096', 'e', '4095', 'f', '-32768', 'g', '32767', 'h', '-8388608',
      'i', '8388607', 'j', '-2147483648', 'k', '2147483647', 'l', '-999999999', 'm', '1000000000', 'n', '9007199254740991',
      'o', '-9007199254740991', 'p', '9007199254740992', 'q', '-9223372036854775808', 'r', '9223372036854775807'],
    ['HGETALL', 'w'], ['HVALS', 'w'], ['HGET', 'w', 'l'], ['HGET', 'w', 'p'], ['HMGET', 'w', 'q', 'r', 'zz'],
  ] },
  // HSET finds a listpack field from the request's bytes and skips a value it already holds.
  { name: 'HSET of integer-like fields, near-miss fields and repeated values (DUMP after each)', steps: [
    ['HSET', 'h', '1', 'a', '-1', 'b', '01', 'c', '9007199254740993', 'd', '-0', 'e', '', 'empty'], ['DUMP', 'h'],
    ['HSET', 'h', '1', 'a', '01', 'c', '9007199254740993', 'd', '', 'empty', '-1', 'b'], ['DUMP', 'h'],
    ['HSET', 'h', '1', '1', '-1', 'bb', '9007199254740993', '18446744073709551616', '-0', '-0', '', 'x'], ['DUMP', 'h'],
    ['HSET', 'h', '1', '1', '-0', '-0', '9007199254740993', '18446744073709551616'], ['DUMP', 'h'], ['HGETALL', 'h'],
    ['HSET', 'h', 'abcx', '1', 'abdx', '2', 'abcx', '3', 'abdx', 'two', 'xbcx', 'z'], ['DUMP', 'h'],
    ['HSET', 'h', 'f'.repeat(64), '1', 'g'.repeat(63), 'x'.repeat(64)], ['DUMP', 'h'],
    ['HSET', 'h', 'f'.repeat(64), '1', 'g'.repeat(63), 'x'.repeat(64), 'f'.repeat(63) + 'g', '2'], ['DUMP', 'h'],
    ['HSET', 'h', 'g'.repeat(63), 'y'.repeat(64)], ['DUMP', 'h'], ['HSET', 'h', 'g'.repeat(63), '7'], ['DUMP', 'h'],
    ['HSET', 'h', '7', 'g'.repeat(63)], ['HGET', 'h', '7'], ['HGET', 'h', '007'], ['HLEN', 'h'], ['DUMP', 'h'],
    ['HSET', 'h', 'k', 'v'.repeat(65)], ['OBJECT', 'ENCODING', 'h'], { cmd: ['HGETALL', 'h'], compare: 'sorted' },
    ['HSET', 'h2', 'k', 'v'], ['HSET', 'h2', 'k'.repeat(65), 'v'], ['OBJECT', 'ENCODING', 'h2'], ['HSET', 'h2', 'k', 'v'],
    { cmd: ['HGETALL', 'h2'], compare: 'sorted' },
  ] },
  { name: 'reads of hashes of 32-129 fields (the field index) between edits of every kind', steps: indexedReads() },
  // HINCRBY of a hashtable hash: numbers within ±2^53, the exact 64-bit path beyond and on errors.
  { name: 'HINCRBY of a hashtable hash across 2^53, invalid values and overflow', steps: [
    ['HSET', 'h', 'big', 'x'.repeat(70), 'n', '9007199254740990', 'm', '-9007199254740990', 'z', '01', 'mz', '-0',
      'sp', ' 1', 'pl', '+1', 'e', '', 'w', '9223372036854775806'],
    ['HINCRBY', 'h', 'n', '1'], ['HINCRBY', 'h', 'n', '1'], ['HINCRBY', 'h', 'n', '1'], ['HGET', 'h', 'n'],
    ['HINCRBY', 'h', 'm', '-1'], ['HINCRBY', 'h', 'm', '-1'], ['HINCRBY', 'h', 'm', '9007199254740993'], ['HGET', 'h', 'm'],
    ['HINCRBY', 'h', 'z', '1'], ['HINCRBY', 'h', 'mz', '1'], ['HINCRBY', 'h', 'sp', '1'], ['HINCRBY', 'h', 'pl', '1'],
    ['HINCRBY', 'h', 'e', '1'], ['HINCRBY', 'h', 'w', '1'], ['HINCRBY', 'h', 'w', '1'], ['HINCRBY', 'h', 'new', '-7'],
    ['HINCRBY', 'h', 'new', '7'], ['HINCRBY', 'h', 'new', '-9223372036854775808'], ['HINCRBY', 'h', 'new', '-1'],
    ['HINCRBY', 'h', 'atm', '1'], ['HINCRBY', 'h', 'atm', '1'], ['HGET', 'h', 'atm'], ['HINCRBY', 'h', 'big', '1'],
    { cmd: ['HGETALL', 'h'], compare: 'sorted' },
    ['EVAL', "redis.call('HINCRBY', KEYS[1], 'atm', 1) return redis.call('HINCRBY', KEYS[1], 'atm', 40)", '1', 'h'],
  ] },
  { name: 'HINCRBY past hash-max-listpack-value makes a hashtable', steps: [
    ['CONFIG', 'SET', 'hash-max-listpack-value', '3'], ['HSET', 'h', 'n', '998'], ['HINCRBY', 'h', 'n', '1'],
    ['OBJECT', 'ENCODING', 'h'], ['HINCRBY', 'h', 'n', '1'], ['OBJECT', 'ENCODING', 'h'], ['HGET', 'h', 'n'],
    ['HSET', 'g', 'n', '-98'], ['HINCRBY', 'g', 'n', '-1'], ['OBJECT', 'ENCODING', 'g'], ['HINCRBY', 'g', 'n', '-1'],
    ['OBJECT', 'ENCODING', 'g'], ['CONFIG', 'SET', 'hash-max-listpack-value', '64'],
  ] },
  { name: 'DUMP of integer fields, binary bytes, empty strings', steps: [
    ['HSET', 'h', '1', 'one', '-1', '', '0', '0', '12345678901234567890', 'x', '-9223372036854775808', 'min'], ['DUMP', 'h'],
    ['HSET', 'h', Buffer.from([0xff, 0, 0xf0]), Buffer.from([0xfe, 0xff]), '', 'empty'], ['DUMP', 'h'],
    ['HGET', 'h', '1'], ['HGET', 'h', '01'], ['HGET', 'h', '-1'], ['HGET', 'h', '-0'], ['HGET', 'h', '12345678901234567890'],
    ['HGET', 'h', '-9223372036854775808'], ['HGET', 'h', Buffer.from([0xff, 0, 0xf0])], ['HGET', 'h', ''],
    ['HDEL', 'h', '0', '-1'], ['DUMP', 'h'], ['HSET', 'h', '1', '2', '2', '1'], ['DUMP', 'h'], ['HGETALL', 'h'],
    ['HDEL', 'h', '12345678901234567890', ''], ['DUMP', 'h'], ['HKEYS', 'h'], ['HVALS', 'h'],
  ] },
  { name: 'DUMP while growing to the listpack limits and past them', steps: growth() },
];
export default scripts;

/**
 * A hash read by field again and again (so that its field index is built) between edits that
 * keep entry positions (same-width values) and edits that move them, up to 128 fields and past.
 */
function indexedReads(): Step[] {
  const fields: string[] = [];
  for (let i = 0; i < 30; i++) fields.push(`f:${i}`);
  fields.push('0', '-1', '127', '4096', '-70000', '3000000000', '9223372036854775807', '', 'L'.repeat(64), 'M'.repeat(63));
  const init: string[] = [];
  fields.forEach((f, i) => init.push(f, i % 3 === 0 ? String(i * 1000) : `v${i}`));
  const probe = ['f:0', 'f:29', '127', '-70000', '9223372036854775807', '', 'L'.repeat(64), 'M'.repeat(63), 'nope', '128', 'f:3'];
  const reads = (): Step[] => [...probe.map((f): Step => ['HGET', 'h', f]), ['HMGET', 'h', ...probe], ['HEXISTS', 'h', 'f:7']];
  const steps: Step[] = [['HSET', 'h', ...init], ...reads(), ...reads()];
  steps.push(['HINCRBY', 'h', 'f:0', '1'], ...reads(), ...reads()); // same width: positions kept
  steps.push(['HSET', 'h', 'f:1', 'v1'], ...reads(), ['HSET', 'h', 'f:1', 'longer value'], ...reads(), ...reads());
  steps.push(['HINCRBY', 'h', '127', '1'], ['HINCRBY', 'h', '127', '100000'], ...reads(), ...reads());
  steps.push(['HDEL', 'h', 'f:5', '-1'], ...reads(), ...reads(), ['HSET', 'h', '-1', 'back', 'new', '1'], ...reads(), ...reads());
  steps.push(['DUMP', 'h'], ['HGETALL', 'h']);
  for (let i = 0; i < 90; i++) steps.push(['HSET', 'h', `g:${i}`, String(i)]);
  steps.push(['HLEN', 'h'], ...reads(), ...reads(), ['HGET', 'h', 'g:89'], ['HGET', 'h', 'g:88'], ['DUMP', 'h']);
  steps.push(['HSET', 'h', 'g:90', 'x'], ['HLEN', 'h'], ...reads(), ['HGET', 'h', 'g:90'], ['DUMP', 'h']);
  return steps;
}

/** One field whose value goes through every listpack encoding, DUMPed after each change. */
function intStringUpdates(): Step[] {
  const values = [
    '1', 'abc', '100000', '-5', '99999999999', '9223372036854775807', '9223372036854775808', '-9223372036854775808',
    '-9223372036854775809', '-0', '007', ' 1', '+1', '1.0', '', 'x'.repeat(63), 'y'.repeat(64), '127', '128',
    '-4096', '-4097', '4095', '32767', '32768', '-8388608', '8388608', '2147483647', '2147483648', '-2147483649',
  ];
  const steps: Step[] = [['HSET', 'h', 'pre', 'p', 'f', '0', 'post', '42']];
  for (const v of values) steps.push(['HSET', 'h', 'f', v], ['DUMP', 'h'], ['HGET', 'h', 'f']);
  steps.push(['HGETALL', 'h'], ['HSET', 'h', 'pre', 'z'.repeat(64), 'post', '-1'], ['DUMP', 'h'], ['HGETALL', 'h']);
  return steps;
}

/** Up to 512 fields (hash-max-listpack-entries) and one more; values up to 64 bytes and longer. */
function growth(): Step[] {
  const steps: Step[] = [];
  const value = (i: number) => (i % 3 === 0 ? String(i * 1000) : `value:${'v'.repeat(i % 40)}`);
  for (let i = 0; i < 496; i += 16) {
    steps.push(['HSET', 'g', ...range(16).flatMap((k) => [`field:${i + k}`, value(i + k)])]);
    if (i % 64 === 48) steps.push(['DUMP', 'g']);
  }
  for (let i = 496; i < 512; i++) steps.push(['HSET', 'g', `field:${i}`, value(i)]);
  steps.push(['DUMP', 'g'], ['HGET', 'g', 'field:511'], ['HGET', 'g', 'field:0'], ['HGET', 'g', 'field:300']);
  steps.push(
    ['HGETALL', 'g'], ['OBJECT', 'ENCODING', 'g'], ['HSET', 'g', 'field:5', 'w'.repeat(64)], ['DUMP', 'g'],
    ['OBJECT', 'ENCODING', 'g'], ['HSET', 'g', 'field:512', '1'], ['OBJECT', 'ENCODING', 'g'], ['HLEN', 'g'],
    ['HGET', 'g', 'field:512'], ['HGET', 'g', 'field:5'],
    ['HSET', 'l', 'a', '1'], ['HSET', 'l', 'b', 'w'.repeat(65)], ['OBJECT', 'ENCODING', 'l'],
    ['HMSET', 'm', ...range(64).flatMap((i) => [`k${i}`, `${i}`])], ['DUMP', 'm'], ['HDEL', 'm', 'k10', 'k20', 'k63'],
    ['DUMP', 'm'], ['HRANDFIELD', 'm', '100', 'WITHVALUES'], ['HSCAN', 'm', '0', 'MATCH', 'k1*'],
  );
  // Past 128 fields a listpack hash is held as a Map (hash.ts FLAT_MAX): edits there, and back under.
  steps.push(
    ['HSET', 'c', ...range(200).flatMap((i) => [`c${i}`, i % 2 ? `${i}` : `v${i}`])], ['OBJECT', 'ENCODING', 'c'], ['DUMP', 'c'],
    ['HDEL', 'c', 'c100', 'c0'], ['HSET', 'c', 'c3', 'three', 'new', '-5'], ['HINCRBY', 'c', 'c5', '1000'], ['DUMP', 'c'],
    ['HDEL', 'c', ...range(150).map((i) => `c${i + 1}`)], ['HLEN', 'c'], ['OBJECT', 'ENCODING', 'c'], ['DUMP', 'c'], ['HGETALL', 'c'],
  );
  return steps;
}

/** Thousands of fields; updates that change value lengths; deletions; every read compared. */
function bigHash(): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < 3000; i += 100) {
    const a: string[] = ['HSET', 'bh'];
    for (let j = i; j < i + 100; j++) a.push(`f${j}`, j % 9 === 0 ? 'v'.repeat(j % 200) : String(j));
    steps.push(a);
  }
  for (let r = 0; r < 3; r++) {
    const up: string[] = ['HSET', 'bh'];
    for (let j = r; j < 3000; j += 7) up.push(`f${j}`, `w${r}-${'z'.repeat((j * r) % 50)}`);
    const del: string[] = ['HDEL', 'bh'];
    for (let j = r * 2; j < 3000; j += 5) del.push(`f${j}`);
    steps.push(up, del, ['HLEN', 'bh'], { cmd: ['HGETALL', 'bh'], compare: 'sorted' });
  }
  steps.push(
    ['HSET', 'bh', Buffer.from([0, 255, 13, 10]), Buffer.from([1, 2, 0])], ['HGET', 'bh', Buffer.from([0, 255, 13, 10])],
    ['HSTRLEN', 'bh', 'f1'], ['HINCRBY', 'bh', 'f3', '5'], ['HINCRBY', 'bh', 'f3', '5'], ['HGET', 'bh', 'f3'],
    ['HINCRBYFLOAT', 'bh', 'f4', '0.5'], ['HMGET', 'bh', 'f1', 'f2', 'f3', 'f4', 'nope'],
    ['HEXISTS', 'bh', 'f2999'], ['HSETNX', 'bh', 'f2999', 'x'], ['HLEN', 'bh'],
    { cmd: ['HKEYS', 'bh'], compare: 'sorted' }, { cmd: ['HVALS', 'bh'], compare: 'sorted' },
    ['COPY', 'bh', 'bh2'], ['HDEL', 'bh2', 'f1'], ['HLEN', 'bh'], ['HLEN', 'bh2'],
    { cmd: ['HRANDFIELD', 'bh', '100000', 'WITHVALUES'], compare: 'sorted' },
  );
  return steps;
}
