/**
 * Set commands against redis-server 7.0. Integer sets (intset) reply in ascending order on
 * both sides and are compared byte for byte. Sets of strings are a hashtable in Redis 7.0, as
 * here (7.2+ makes small ones a listpack), so their member order is compared as a multiset.
 */
import type { Script, Step } from '../harness.js';

const sorted = (cmd: Array<string | Buffer>): Step => ({ cmd, compare: 'sorted' });
const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => String(i + from));

const wrongType: Step[] = [
  ['SET', 's', 'x'], ['SADD', 'set', '1'],
  ['SADD', 's', 'a'], ['SREM', 's', 'a'], ['SMEMBERS', 's'], ['SISMEMBER', 's', 'a'], ['SMISMEMBER', 's', 'a'],
  ['SCARD', 's'], ['SPOP', 's'], ['SPOP', 's', '2'], ['SRANDMEMBER', 's'], ['SRANDMEMBER', 's', '-2'],
  ['SMOVE', 's', 'set', 'a'], ['SMOVE', 'set', 's', '1'], ['SMOVE', 'nokey', 's', '1'], ['SINTER', 's'],
  ['SINTER', 'set', 's'], ['SINTER', 'nokey', 's'], ['SINTERCARD', '2', 'set', 's'], ['SINTERSTORE', 'd', 'set', 's'],
  ['SUNION', 'set', 's'], ['SUNIONSTORE', 'd', 's'], ['SDIFF', 'set', 's'], ['SDIFF', 'nokey', 's'],
  ['SDIFFSTORE', 'd', 'set', 's'], ['SSCAN', 's', '0'], ['SMEMBERS', 'set'], ['GET', 's'],
  // Argument errors come before the type check where Redis parses first.
  ['SPOP', 's', '-1'], ['SPOP', 's', 'x'], ['SRANDMEMBER', 's', 'x'], ['SINTERCARD', '0', 's'],
  ['SINTERCARD', '1', 's', 'LIMIT', '-1'], ['SSCAN', 's', 'x'], ['SSCAN', 's', '0', 'COUNT', '0'], ['SPOP', 's', '1', '2'],
];

const scripts: Script[] = [
  { name: 'SADD / SREM / SCARD / SISMEMBER on an intset', steps: [
    ['SADD', 's', '3', '1', '2', '1'], ['SADD', 's', '-5', '100', '9223372036854775807', '-9223372036854775808'],
    ['SMEMBERS', 's'], ['SCARD', 's'], ['SISMEMBER', 's', '2'], ['SISMEMBER', 's', '02'], ['SISMEMBER', 's', 'x'],
    ['SMISMEMBER', 's', '1', '4', '-5', 'a'], ['SREM', 's', '1', '1', '7', 'x'], ['SMEMBERS', 's'],
    ['SREM', 's', '3', '2', '-5', '100', '9223372036854775807', '-9223372036854775808'], ['SCARD', 's'], ['SMEMBERS', 's'],
  ] },
  { name: 'non-canonical integers are strings', steps: [
    ['SADD', 's', '1', '01', '+1', '-0', '1.0', ' 1', '9223372036854775808'], sorted(['SMEMBERS', 's']), ['SCARD', 's'],
    ['SISMEMBER', 's', '01'], ['SREM', 's', '1'], sorted(['SMEMBERS', 's']),
  ] },
  { name: 'sets of strings', steps: [
    ['SADD', 's', 'a', 'b', 'c'], ['SADD', 's', 'b', 'd'], sorted(['SMEMBERS', 's']), ['SREM', 's', 'a', 'zz'],
    ['SCARD', 's'], ['SISMEMBER', 's', 'b'], ['SMISMEMBER', 's', 'a', 'b', 'c', 'zz'],
    ['SADD', 'mix', '1', '2', 'x', '3'], sorted(['SMEMBERS', 'mix']), ['SADD', 'bin', Buffer.from([0, 255]), ''],
    sorted(['SMEMBERS', 'bin']), ['SISMEMBER', 'bin', ''],
  ] },
  { name: 'commands on a missing key', steps: [
    ['SMEMBERS', 'no'], ['SCARD', 'no'], ['SISMEMBER', 'no', 'a'], ['SMISMEMBER', 'no', 'a', 'b'], ['SREM', 'no', 'a'],
    ['SPOP', 'no'], ['SPOP', 'no', '3'], ['SPOP', 'no', '0'], ['SRANDMEMBER', 'no'], ['SRANDMEMBER', 'no', '5'],
    ['SRANDMEMBER', 'no', '-5'], ['SMOVE', 'no', 'd', 'a'], ['SINTER', 'no'], ['SUNION', 'no', 'no2'], ['SDIFF', 'no'],
    ['SINTERCARD', '1', 'no'], ['SSCAN', 'no', '0'], ['SSCAN', 'no', '0', 'COUNT', '0'],
  ] },
  { name: 'WRONGTYPE for every set command', steps: wrongType },
  { name: 'intset to hashtable past set-max-intset-entries', steps: [
    ['SADD', 's', ...range(512)], ['SCARD', 's'], ['SMEMBERS', 's'], ['SADD', 's', '512'], ['SCARD', 's'],
    sorted(['SMEMBERS', 's']), ['SISMEMBER', 's', '511'], ['SREM', 's', '0'], ['SCARD', 's'],
    ['SADD', 'big', ...range(1000, 5000)], ['SCARD', 'big'], sorted(['SMEMBERS', 'big']),
  ] },
  { name: 'SPOP', steps: [
    ['SADD', 's', '5', '3', '1'], ['SPOP', 's', '0'], ['SPOP', 's', '3'], ['SCARD', 's'], ['SADD', 's', '7'],
    ['SPOP', 's'], ['SPOP', 's'], ['SADD', 's', '1', '2', '3', '4'], ['SPOP', 's', '100'], ['SPOP', 's', '-1'],
    ['SPOP', 's', 'x'], ['SPOP', 's', '1', '2'], ['SPOP', 'no', '-1'], ['SPOP', 'no', 'x'],
    ['SADD', 'r', ...range(20)], { cmd: ['SPOP', 'r', '5'], compare: 'type' }, ['SCARD', 'r'],
    { cmd: ['SPOP', 'r', '14'], compare: 'type' }, ['SCARD', 'r'], { cmd: ['SPOP', 'r'], compare: 'type' }, ['SCARD', 'r'],
    ['SADD', 'w', 'a', 'b', 'c'], sorted(['SPOP', 'w', '3']), ['SCARD', 'w'],
    ['SADD', 'h', ...range(300)], { cmd: ['SPOP', 'h', '290'], compare: 'type' }, ['SCARD', 'h'],
  ] },
  { name: 'SRANDMEMBER', steps: [
    ['SADD', 's', '5', '3', '1'], ['SRANDMEMBER', 's', '0'], ['SRANDMEMBER', 's', '3'], ['SRANDMEMBER', 's', '10'],
    { cmd: ['SRANDMEMBER', 's', '2'], compare: 'type' }, { cmd: ['SRANDMEMBER', 's', '-7'], compare: 'type' },
    { cmd: ['SRANDMEMBER', 's'], compare: 'type' }, ['SADD', 'one', 'z'], ['SRANDMEMBER', 'one'],
    ['SRANDMEMBER', 'one', '-3'], ['SRANDMEMBER', 'one', '1'], ['SRANDMEMBER', 's', 'x'], ['SRANDMEMBER', 's', '1', '2'],
    ['SRANDMEMBER', 's', '-9223372036854775808'], ['SRANDMEMBER', 's', '9223372036854775808'], ['SRANDMEMBER', 'no', 'x'],
    ['SADD', 'w', 'a', 'b'], sorted(['SRANDMEMBER', 'w', '5']), ['SCARD', 's'],
  ] },
  { name: 'SMOVE', steps: [
    ['SADD', 'a', '1', '2', 'x'], ['SMOVE', 'a', 'b', '1'], ['SMOVE', 'a', 'b', '1'], ['SMOVE', 'a', 'b', 'zz'],
    sorted(['SMEMBERS', 'a']), ['SMEMBERS', 'b'], ['SMOVE', 'a', 'a', 'x'], ['SMOVE', 'a', 'a', 'zz'],
    ['SADD', 'b', '2'], ['SMOVE', 'a', 'b', '2'], ['SMEMBERS', 'b'], ['SMOVE', 'a', 'b', 'x'], ['SCARD', 'a'],
    sorted(['SMEMBERS', 'b']), ['SMOVE', 'nokey', 'b', 'x'],
  ] },
  { name: 'SINTER / SINTERSTORE / SINTERCARD with integers', steps: [
    ['SADD', 'a', '1', '2', '3', '4', '5'], ['SADD', 'b', '5', '3', '1', '7'], ['SADD', 'c', '3', '5', '9', '1', '11'],
    ['SINTER', 'a', 'b'], ['SINTER', 'b', 'a', 'c'], ['SINTER', 'a'], ['SINTER', 'a', 'a'], ['SINTER', 'a', 'nokey'],
    ['SINTERSTORE', 'd', 'a', 'b', 'c'], ['SMEMBERS', 'd'], ['SINTERSTORE', 'd', 'a', 'nokey'], ['SMEMBERS', 'd'],
    ['SET', 'str', 'x'], ['SINTERSTORE', 'str', 'a', 'c'], ['SMEMBERS', 'str'], ['SINTERSTORE', 'd2', 'a', 'nokey'],
    ['SINTERCARD', '2', 'a', 'b'], ['SINTERCARD', '3', 'a', 'b', 'c', 'LIMIT', '2'], ['SINTERCARD', '1', 'a', 'LIMIT', '0'],
    ['SINTERCARD', '2', 'a', 'nokey'], ['SINTERCARD', '1', 'a', 'limit', '100'],
  ] },
  { name: 'SINTERCARD errors', steps: [
    ['SADD', 'a', '1'], ['SINTERCARD', '0', 'a'], ['SINTERCARD', '-1', 'a'], ['SINTERCARD', 'x', 'a'],
    ['SINTERCARD', '2', 'a'], ['SINTERCARD', '1', 'a', 'LIMIT', '-1'], ['SINTERCARD', '1', 'a', 'LIMIT', 'x'],
    ['SINTERCARD', '1', 'a', 'LIMIT'], ['SINTERCARD', '1', 'a', 'BOGUS', '1'], ['SINTERCARD', '1', 'a', 'b'],
    ['SINTERCARD', '9223372036854775807', 'a'],
  ] },
  { name: 'SINTER with strings', steps: [
    ['SADD', 'a', 'x', 'y', 'z', '1'], ['SADD', 'b', 'y', 'z', 'w', '1'], sorted(['SINTER', 'a', 'b']),
    ['SINTERSTORE', 'd', 'a', 'b'], sorted(['SMEMBERS', 'd']), ['SADD', 'n', '1', '2'], ['SINTER', 'a', 'n'],
    ['SINTER', 'n', 'a', 'b'], ['SINTERCARD', '2', 'a', 'b'],
  ] },
  { name: 'SUNION / SDIFF with integers', steps: [
    ['SADD', 'a', '1', '2', '3', '4'], ['SADD', 'b', '3', '4', '5'], ['SADD', 'c', '10', '-1'],
    ['SUNION', 'a', 'b', 'c'], ['SUNION', 'a', 'nokey'], ['SDIFF', 'a', 'b'], ['SDIFF', 'a', 'b', 'c'], ['SDIFF', 'a', 'a'],
    ['SDIFF', 'a', 'nokey', 'b'], ['SDIFF', 'nokey', 'a'], ['SDIFF', 'b', 'a'],
    ['SUNIONSTORE', 'u', 'a', 'b'], ['SMEMBERS', 'u'], ['SDIFFSTORE', 'df', 'a', 'b'], ['SMEMBERS', 'df'],
    ['SDIFFSTORE', 'df', 'a', 'a'], ['SMEMBERS', 'df'], ['SUNIONSTORE', 'u', 'nokey'], ['SMEMBERS', 'u'],
    ['SUNIONSTORE', 'u', 'a', 'u'], ['SMEMBERS', 'u'], ['SDIFFSTORE', 'a', 'a', 'c'], ['SMEMBERS', 'a'],
    ['SADD', 'big', ...range(600)], ['SDIFF', 'a', 'big'], sorted(['SDIFF', 'big', 'a', 'b']),
    ['SDIFFSTORE', 'r', 'big', 'a'], ['SCARD', 'r'], ['SUNIONSTORE', 'r', 'big', 'c'], ['SCARD', 'r'],
  ] },
  { name: 'SUNION / SDIFF with strings', steps: [
    ['SADD', 'a', 'x', 'y', '1'], ['SADD', 'b', 'y', 'z', '2'], sorted(['SUNION', 'a', 'b']), sorted(['SDIFF', 'a', 'b']),
    ['SUNIONSTORE', 'u', 'a', 'b'], sorted(['SMEMBERS', 'u']), ['SDIFFSTORE', 'd', 'b', 'a'], sorted(['SMEMBERS', 'd']),
    ['SDIFFSTORE', 'd', 'a', 'a', 'b'], ['SMEMBERS', 'd'],
  ] },
  { name: 'SSCAN', steps: [
    ['SADD', 's', '5', '1', '3', '20', '-4'], ['SSCAN', 's', '0'], ['SSCAN', 's', '0', 'COUNT', '1'], ['SSCAN', 's', '9'],
    ['SSCAN', 's', '0', 'MATCH', '*0'], ['SSCAN', 's', '0', 'MATCH', '-*', 'COUNT', '2'], ['SSCAN', 's', '0', 'MATCH', '*'],
    ['SSCAN', 's', 'x'], ['SSCAN', 's', '0', 'COUNT', '0'], ['SSCAN', 's', '0', 'COUNT', 'x'], ['SSCAN', 's', '0', 'BOGUS'],
    ['SSCAN', 's', '0', 'MATCH'], ['SSCAN', 's', '-1'], ['SSCAN', 's', ''],
    ['SADD', 'str', 'apple', 'banana', 'cherry'], ['SSCAN', 'str', '0', 'MATCH', 'b*'], ['SSCAN', 'str', '0', 'MATCH', 'zz*'],
  ] },
  { name: 'MULTI and WATCH with sets', steps: [
    ['SADD', 's', '1'], ['WATCH', 's'], ['SADD', 's', '1'], ['SREM', 's', '2'], ['SMOVE', 's', 's', '1'], ['MULTI'],
    ['SCARD', 's'], ['EXEC'], ['WATCH', 's'], ['SADD', 's', '2'], ['MULTI'], ['SCARD', 's'], ['EXEC'],
    ['MULTI'], ['SADD', 's', '3'], ['SPOP', 's', 'x'], ['SMEMBERS', 's'], ['EXEC'],
  ] },
  { name: 'small sets of strings (packed here, a hashtable to Redis 7.0) across their limits', steps: [
    ['SADD', 's', 'a', 'b', 'c'], ['OBJECT', 'ENCODING', 's'], ['SADD', 's', 'd', 'e', 'f', 'g', 'h', 'a'], ['SCARD', 's'],
    ['OBJECT', 'ENCODING', 's'], ['SISMEMBER', 's', 'h'], ['SISMEMBER', 's', 'i'], ['SMISMEMBER', 's', 'a', 'h', 'i', ''],
    ['SADD', 's', 'i'], ['OBJECT', 'ENCODING', 's'], sorted(['SMEMBERS', 's']), ['SREM', 's', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'],
    ['SMEMBERS', 's'], ['DUMP', 's'],
    ['SADD', 'l', 'x'.repeat(64)], ['OBJECT', 'ENCODING', 'l'], ['SADD', 'l', 'y'.repeat(65)], sorted(['SMEMBERS', 'l']),
    ['SREM', 'l', 'x'.repeat(64)], ['DUMP', 'l'],
    ['SADD', 'one', 'element:__rand_int__'], ['SADD', 'one', 'element:__rand_int__'], ['DUMP', 'one'], ['MEMORY', 'USAGE', 'one'],
    ['SREM', 'one', 'element:__rand_int__', 'x'], ['EXISTS', 'one'],
    ['SADD', 'i', '3', '1', '2'], ['SADD', 'i', 'x'], ['OBJECT', 'ENCODING', 'i'], sorted(['SMEMBERS', 'i']),
    ['SISMEMBER', 'i', '2'], ['SISMEMBER', 'i', '02'], ['SREM', 'i', '1', '2', '3'], ['DUMP', 'i'],
    ['SADD', 'bin', '', Buffer.from([0]), Buffer.from([255, 0])], ['SISMEMBER', 'bin', ''], ['SISMEMBER', 'bin', Buffer.from([255])],
    ['SREM', 'bin', ''], sorted(['SMEMBERS', 'bin']), ['SCARD', 'bin'],
    ['SADD', 'm1', 'a', 'b'], ['SMOVE', 'm1', 'm2', 'a'], ['SMEMBERS', 'm2'], ['SMOVE', 'm1', 'm2', 'b'], ['EXISTS', 'm1'],
    sorted(['SMEMBERS', 'm2']), sorted(['SPOP', 'm2', '5']), ['EXISTS', 'm2'],
    ['SADD', 'p', 'a', 'b', 'c', 'd', 'e', 'f'], { cmd: ['SPOP', 'p', '5'], compare: 'type' }, ['SCARD', 'p'],
    { cmd: ['SRANDMEMBER', 'p'], compare: 'type' }, ['SADD', 'u1', 'a', 'b', 'c'], ['SADD', 'u2', 'b', 'c', 'd'],
    ['SINTERSTORE', 'd', 'u1', 'u2'], sorted(['SMEMBERS', 'd']), ['SINTERCARD', '2', 'u1', 'u2'], ['SDIFFSTORE', 'd2', 'u1', 'u2'],
    ['DUMP', 'd2'], sorted(['SUNION', 'u1', 'u2']), ['SUNIONSTORE', 'd3', 'u1', 'u2', 'i'], ['SCARD', 'd3'],
    ['SSCAN', 'u1', '0', 'MATCH', 'a*'], ['COPY', 'u1', 'u3'], ['SREM', 'u3', 'a'], ['SCARD', 'u1'], ['SCARD', 'u3'],
  ] },
  { name: 'big hashtable set with churn, set operations on it', steps: bigSet() },
  // A hashtable set's offsets: a plain array up to 8 members, a typed array with its index.
  { name: 'hashtable set of long members across its 8-member index threshold, up and down', steps: [
    ['SADD', 'L', 'z'.repeat(65)], ...Array.from({ length: 12 }, (_, i): Step[] => [
      ['SADD', 'L', `m${i}`, 'z'.repeat(65)], ['SISMEMBER', 'L', `m${i}`], ['SMISMEMBER', 'L', 'm0', `m${i + 1}`, ''], ['SCARD', 'L'],
    ]).flat(),
    sortedStep(['SMEMBERS', 'L']), ['SREM', 'L', ...Array.from({ length: 10 }, (_, i) => `m${i}`)], ['SCARD', 'L'],
    ['SMISMEMBER', 'L', 'm0', 'm10', 'm11', 'z'.repeat(65)], ['SADD', 'L', 'back'], sortedStep(['SMEMBERS', 'L']),
    ['COPY', 'L', 'L2'], ['SMOVE', 'L', 'L2', 'm10'], ['SADD', 'L', 'after'], sortedStep(['SMEMBERS', 'L2']), sortedStep(['SMEMBERS', 'L']),
    { cmd: ['SRANDMEMBER', 'L', '-4'], compare: 'type' }, sortedStep(['SPOP', 'L', '10']), ['EXISTS', 'L'],
  ] },
];
export default scripts;

/** Thousands of members with deletions and re-additions; every read compared as a multiset. */
function bigSet(): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < 4000; i += 200) {
    const a: string[] = ['SADD', 'bs'];
    for (let j = i; j < i + 200; j++) a.push(j % 3 === 0 ? `m${j}` : `member-${'q'.repeat(j % 40)}-${j}`);
    steps.push(a);
  }
  const rem: string[] = ['SREM', 'bs'];
  for (let j = 0; j < 4000; j += 3) rem.push(`m${j}`);
  const back: string[] = ['SADD', 'bs'];
  for (let j = 0; j < 4000; j += 9) back.push(`m${j}`);
  steps.push(
    rem, ['SCARD', 'bs'], back, ['SCARD', 'bs'], ['SISMEMBER', 'bs', 'm9'], ['SISMEMBER', 'bs', 'm3'],
    ['SMISMEMBER', 'bs', 'm0', 'm3', 'm18', 'nope'], sortedStep(['SMEMBERS', 'bs']),
    ['SADD', 'bs2', 'm0', 'm9', 'x', Buffer.from([0, 255])], sortedStep(['SINTER', 'bs', 'bs2']),
    ['SINTERCARD', '2', 'bs', 'bs2'], ['SDIFFSTORE', 'bd', 'bs', 'bs2'], ['SCARD', 'bd'],
    ['SUNIONSTORE', 'bu', 'bs', 'bs2'], ['SCARD', 'bu'], ['SMOVE', 'bs', 'bs2', 'm9'], ['SISMEMBER', 'bs', 'm9'],
    ['COPY', 'bs', 'bs3'], ['SREM', 'bs3', 'm18'], ['SCARD', 'bs'], ['SCARD', 'bs3'],
    { cmd: ['SRANDMEMBER', 'bs', '100000'], compare: 'sorted' },
  );
  return steps;
}

function sortedStep(cmd: Array<string | Buffer>): Step {
  return { cmd, compare: 'sorted' };
}
