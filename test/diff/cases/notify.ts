/**
 * Keyspace notifications and maxmemory against redis-server: CONFIG SET/GET of
 * notify-keyspace-events (Redis's normalised text), the eviction options, the OOM gate of
 * DENYOOM commands (maxmemory 1 is exceeded by any server), OBJECT FREQ / IDLETIME under each
 * kind of policy, MEMORY's fixed replies. Every script restores what it changed.
 *
 * The same scripts are event-stream cases: events.test.ts replays them with a subscriber on
 * __key*__:* and compares the events (expiry, key-space and key-event channels, databases).
 */
import type { Script, Step } from '../harness.js';

const NKE = 'notify-keyspace-events';
const restoreNke = ['CONFIG', 'SET', NKE, ''];
const restoreMem = ['CONFIG', 'SET', 'maxmemory', '0'];
const restorePolicy = ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction'];

const flagValues = ['KEA', 'AKE', 'Ex', 'Kx', 'E', 'K', 'A', 'n', 'An', 'KEAnm', 'gn', 'Kn', 'gKEm', 'AE', 'g$lshzxetd',
  '$lshzxetdn', 'ld', 'm', 'hzs', 'KEg$lshzxeEK', 'xexexe', 'tKd'];

const scripts: Script[] = [
  { name: 'notify-keyspace-events: every class, normalised as Redis prints it', steps: [
    ...flagValues.flatMap((v) => [['CONFIG', 'SET', NKE, v], ['CONFIG', 'GET', NKE]]),
    ['CONFIG', 'SET', NKE, 'Q'], ['CONFIG', 'SET', NKE, 'KEAQ'], ['CONFIG', 'SET', NKE, 'kea'], ['CONFIG', 'GET', NKE],
    ['CONFIG', 'SET', NKE, ''], ['CONFIG', 'GET', NKE], ['CONFIG', 'GET', 'notify-*'],
  ] },
  { name: 'eviction options: ranges and values', steps: [
    ['CONFIG', 'SET', 'maxmemory-samples', '0'], ['CONFIG', 'SET', 'maxmemory-samples', '10'], ['CONFIG', 'GET', 'maxmemory-samples'],
    ['CONFIG', 'SET', 'maxmemory-samples', '5'],
    ['CONFIG', 'SET', 'lfu-log-factor', '-1'], ['CONFIG', 'SET', 'lfu-log-factor', '20'], ['CONFIG', 'GET', 'lfu-log-factor'],
    ['CONFIG', 'SET', 'lfu-log-factor', '10'],
    ['CONFIG', 'SET', 'lfu-decay-time', '-1'], ['CONFIG', 'SET', 'lfu-decay-time', '0'], ['CONFIG', 'GET', 'lfu-decay-time'],
    ['CONFIG', 'SET', 'lfu-decay-time', '1'],
    ['CONFIG', 'SET', 'maxmemory-eviction-tenacity', '101'], ['CONFIG', 'SET', 'maxmemory-eviction-tenacity', '50'],
    ['CONFIG', 'GET', 'maxmemory-eviction-tenacity'], ['CONFIG', 'SET', 'maxmemory-eviction-tenacity', '10'],
    ['CONFIG', 'SET', 'maxmemory-clients', '200%'], ['CONFIG', 'SET', 'maxmemory-clients', 'abc'],
    ['CONFIG', 'SET', 'maxmemory-clients', '10%'], ['CONFIG', 'GET', 'maxmemory-clients'],
    ['CONFIG', 'SET', 'maxmemory-clients', '0'], ['CONFIG', 'GET', 'maxmemory-clients'],
    ['CONFIG', 'SET', 'maxmemory-policy', 'ALLKEYS-LRU'], ['CONFIG', 'GET', 'maxmemory-policy'], restorePolicy,
  ] },
  { name: 'noeviction over maxmemory: DENYOOM refused, reads and DEL served', steps: [
    ['SET', 'a', '1'], ['RPUSH', 'l', 'x'], ['CONFIG', 'SET', 'maxmemory', '1'],
    ['SET', 'b', '2'], ['SET', 'a', '2'], ['GET', 'a'], ['APPEND', 'a', 'x'], ['INCR', 'a'], ['RPUSH', 'l', 'y'],
    ['LPOP', 'l'], ['SADD', 's', 'm'], ['HSET', 'h', 'f', 'v'], ['ZADD', 'z', '1', 'm'], ['XADD', 'x', '*', 'f', 'v'],
    ['PFADD', 'hll', 'a'], ['SETBIT', 'bits', '1', '1'], ['COPY', 'a', 'a2'], ['EXPIRE', 'a', '100'], ['TTL', 'a'],
    ['PERSIST', 'a'], ['RENAME', 'a', 'a3'], ['GET', 'a3'], ['DEL', 'a3'], ['EXISTS', 'a3'], ['DBSIZE'], ['PING'],
    restoreMem, ['SET', 'b', '2'],
  ] },
  { name: 'noeviction over maxmemory: MULTI queueing and EXEC', steps: [
    ['SET', 'a', '1'], ['CONFIG', 'SET', 'maxmemory', '1'],
    ['MULTI'], ['GET', 'a'], ['SET', 'a', '2'], ['EXEC'],
    ['MULTI'], ['DEL', 'a'], ['EXEC'],
    restoreMem,
    ['MULTI'], ['SET', 'a', '1'], ['CONFIG', 'SET', 'maxmemory', '1'], ['EXEC'], ['GET', 'a'],
    ['MULTI'], ['SET', 'a', '3'], { cmd: ['EXEC'] }, restoreMem, ['GET', 'a'],
  ] },
  { name: 'noeviction over maxmemory: scripts', steps: [
    ['SET', 'a', '1'], ['CONFIG', 'SET', 'maxmemory', '1'],
    ['EVAL', "return redis.call('get', 'a')", '0'],
    ['EVAL', "return redis.pcall('set', 'a', 'x')", '0'],
    ['EVAL', "redis.call('del', 'a'); return redis.pcall('set', 'a', 'x')", '0'],
    ['SET', 'a', '1'], restoreMem, ['SET', 'a', '1'], ['CONFIG', 'SET', 'maxmemory', '1'],
    ['EVAL', "#!lua\nreturn redis.call('get', 'a')", '0'],
    ['EVAL', "#!lua flags=no-writes\nreturn redis.call('get', 'a')", '0'],
    ['EVAL', "#!lua flags=allow-oom\nreturn redis.call('set', 'a', 'y')", '0'],
    ['EVAL_RO', "return redis.call('get', 'a')", '0'],
    restoreMem,
  ] },
  { name: 'OBJECT FREQ and IDLETIME by policy kind', steps: [
    // IDLETIME within 1 s: either server's LRU clock may tick between two commands.
    ['SET', 'a', '1'], ['OBJECT', 'FREQ', 'a'], { cmd: ['OBJECT', 'IDLETIME', 'a'], compare: 'idle' },
    ['CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lfu'], ['OBJECT', 'IDLETIME', 'a'], ['SET', 'b', 'x'],
    ['OBJECT', 'FREQ', 'b'], ['OBJECT', 'FREQ', 'nosuch'],
    ['CONFIG', 'SET', 'maxmemory-policy', 'volatile-lfu'], ['OBJECT', 'IDLETIME', 'b'],
    // Switching kinds leaves the other kind's data in the bits (garbage for a while, in Redis
    // too): only keys written since are compared.
    ['CONFIG', 'SET', 'maxmemory-policy', 'volatile-ttl'], ['OBJECT', 'FREQ', 'b'], ['SET', 'c', 'x'], { cmd: ['OBJECT', 'IDLETIME', 'c'], compare: 'idle' },
    restorePolicy,
  ] },
  { name: 'MEMORY: help, errors, fixed replies', steps: [
    ['MEMORY', 'HELP'], ['MEMORY'], ['MEMORY', 'nosuch'], ['MEMORY', 'USAGE'], ['MEMORY', 'usage', 'nokey'],
    ['SET', 'foo', 'bar'], ['MEMORY', 'USAGE', 'foo', 'SAMPLES', '-1'], ['MEMORY', 'USAGE', 'foo', 'SAMPLES', 'x'],
    ['MEMORY', 'USAGE', 'foo', 'bar'], ['MEMORY', 'USAGE', 'foo', 'SAMPLES'], ['MEMORY', 'PURGE'],
    // The report depends on used memory (5 MB threshold), which our model and jemalloc count differently.
    { cmd: ['MEMORY', 'DOCTOR'], compare: 'type' },
    ['MEMORY', 'HELP', 'x'], ['MEMORY', 'STATS', 'x'],
  ] },
  { name: 'MEMORY USAGE of strings (the same layout as Redis)', steps: [
    ['SET', 'foo', 'bar'], ['SET', 'k', '12345'], ['SET', 's44', 'x'.repeat(44)], ['SET', 's45', 'x'.repeat(45)],
    ['SET', 's100', 'x'.repeat(100)], ['SET', 's1000', 'y'.repeat(1000)], ['SET', 'k'.repeat(40), 'v'],
    ['SET', 'neg', '-42'], ['SET', 'big', '9007199254740993'],
    ...['foo', 'k', 's44', 's45', 's100', 's1000', 'k'.repeat(40), 'neg'].map((k) => ['MEMORY', 'USAGE', k]),
  ] },
  { name: 'keyspace events: expiry, lazy and active', steps: [
    ['SET', 'a', '1', 'PX', '30'], ['SET', 'b', '1', 'PX', '30'], ['EXPIRE', 'c', '10'], ['SET', 'c', '1'],
    ['PEXPIRE', 'c', '40'], { cmd: ['GET', 'a'], sleep: 200 }, { cmd: ['EXISTS', 'c'], sleep: 200 },
    ['SET', 'd', '1'], ['EXPIRE', 'd', '-1'], ['SET', 'd', '1'], ['PEXPIREAT', 'd', '1'], ['SET', 'e', '1', 'EX', '100'],
    ['PERSIST', 'e'], ['PERSIST', 'e'], ['GETEX', 'e', 'EX', '100'], ['GETEX', 'e', 'PERSIST'], ['GETDEL', 'e'],
  ] },
  { name: 'keyspace events: other databases, MOVE, COPY, SWAPDB, FLUSHDB', steps: [
    ['SELECT', '3'], ['SET', 'a', '1'], ['MOVE', 'a', '4'], ['SELECT', '4'], ['COPY', 'a', 'b', 'DB', '5'],
    ['COPY', 'a', 'b', 'DB', '5'], ['COPY', 'a', 'b', 'DB', '5', 'REPLACE'], ['SWAPDB', '4', '5'], ['DEL', 'b'],
    ['FLUSHDB'], ['SELECT', '0'],
  ] },
  { name: 'keyspace events: transactions and scripts', steps: [
    ['MULTI'], ['SET', 'a', '1'], ['INCR', 'a'], ['LPUSH', 'l', 'x'], ['RPOP', 'l'], ['EXEC'],
    ['EVAL', "redis.call('set', KEYS[1], 'v'); redis.call('hset', 'h', 'f', 'v'); redis.call('del', KEYS[1]); return 1", '1', 'k'],
    ['EVAL', "redis.call('sadd', 's', 'a', 'b'); redis.call('spop', 's'); redis.call('spop', 's'); return 1", '0'],
  ] },
  // Hash reads and EXISTS find their keys from the request's bytes: hits, misses (keymiss),
  // lazy expiry, wrong types and binary names must stay Redis's.
  { name: 'keyspace events: hash reads and EXISTS of keys found from their bytes', steps: [
    ['CONFIG', 'SET', NKE, 'KEAm'], ['HSET', 'h', 'f', 'v', 'g', 'w'.repeat(70)], ['HSET', Buffer.from([0, 0xff, 0x0a]), 'f', 'b'],
    ['HSET', 'hx', 'f', 'v'], ['PEXPIRE', 'hx', '30'], ['SET', 's', 'x'],
    ...['h', 'nope', 's', Buffer.from([0, 0xff, 0x0a]), Buffer.from([0, 0xff])].flatMap((k): Step[] => [
      ['HGET', k, 'f'], ['HMGET', k, 'f', 'g', 'z'], ['HLEN', k], ['HEXISTS', k, 'g'], ['HSTRLEN', k, 'g'],
      { cmd: ['HGETALL', k], compare: 'sorted' }, { cmd: ['HKEYS', k], compare: 'sorted' }, ['HRANDFIELD', k, '0'], ['EXISTS', k, k, 'nope'],
    ]),
    { cmd: ['HGET', 'hx', 'f'], sleep: 200 }, ['EXISTS', 'hx', 'h'], ['HLEN', 'hx'], ['HSET', 'hy', 'f', 'v'], ['PEXPIRE', 'hy', '30'],
    { cmd: ['EXISTS', 'hy', 'h', 'hy'], sleep: 200 }, ['HMGET', 'hy', 'f'], ['EXISTS'], ['DEL', 'h', 's', Buffer.from([0, 0xff, 0x0a])],
    restoreNke,
  ] },
  // LLEN, LREM, RPOPLPUSH/LMOVE, ZCARD, ZRANGE*, ZPOPMIN and DEL find their keys from the
  // request's bytes too (the key string is the entry's): the same checks.
  { name: 'keyspace events: list, sorted-set and DEL commands with keys found from their bytes', steps: [
    ['CONFIG', 'SET', NKE, 'KEAm'], ['RPUSH', 'l', 'a', 'b', 'c', 'b'], ['RPUSH', Buffer.from([0, 0xff, 0x0a]), 'x', 'y'],
    ['ZADD', 'z', '1', 'a', '2', 'b', '3', 'c'], ['ZADD', Buffer.from([0, 0xfe]), '1', 'm'], ['SET', 's', 'x'],
    ['RPUSH', 'lx', 'a'], ['PEXPIRE', 'lx', '30'], ['ZADD', 'zx', '1', 'a'], ['PEXPIRE', 'zx', '30'],
    ...['l', 'z', 'nope', 's', Buffer.from([0, 0xff, 0x0a]), Buffer.from([0, 0xfe])].flatMap((k): Step[] => [
      ['LLEN', k], ['ZCARD', k], ['ZRANGEBYSCORE', k, '0', '(3', 'LIMIT', '0', '10'], ['ZRANGE', k, '0', '0', 'WITHSCORES'],
      ['ZREVRANGEBYSCORE', k, '+inf', 'x'], ['ZRANGEBYLEX', k, '-', 'x'], ['ZREVRANGEBYSCORE', k, '3', '(1'],
    ]),
    ['LREM', 'l', '-1', 'b'], ['LREM', 'l', '0', 'zz'], ['LREM', 's', '1', 'x'], ['LREM', 'nope', '1', 'x'],
    ['LREM', Buffer.from([0, 0xff, 0x0a]), '0', 'x'], ['RPOPLPUSH', 'l', 'l'], ['RPOPLPUSH', 'l', 'l2'], ['RPOPLPUSH', 'l', 's'],
    ['RPOPLPUSH', 's', 'l'], ['RPOPLPUSH', 'nope', 'l'], ['LMOVE', 'l2', Buffer.from([0, 0xff, 0x0a]), 'LEFT', 'RIGHT'],
    ['RPOPLPUSH', Buffer.from([0, 0xff, 0x0a]), 'l3'], ['RPOPLPUSH', Buffer.from([0, 0xff, 0x0a]), 'l3'],
    ['RPOPLPUSH', Buffer.from([0, 0xff, 0x0a]), 'l3'], ['LRANGE', 'l3', '0', '-1'], ['LRANGE', 'l', '0', '-1'],
    ['ZPOPMIN', 'z'], ['ZPOPMAX', 'z', '1'], ['ZPOPMIN', 's'], ['ZPOPMIN', 'nope'], ['ZPOPMIN', Buffer.from([0, 0xfe])],
    ['ZPOPMIN', 'z', '0'], ['ZPOPMIN', 'z', '5'],
    { cmd: ['LLEN', 'lx'], sleep: 200 }, ['ZCARD', 'zx'], ['RPUSH', 'ly', 'a'], ['PEXPIRE', 'ly', '30'],
    ['ZADD', 'zy', '1', 'a'], ['PEXPIRE', 'zy', '30'], { cmd: ['RPOPLPUSH', 'l', 'ly'], sleep: 200 }, ['ZPOPMIN', 'zy'],
    ['LREM', 'ly', '0', 'a'], ['SET', 'k1', 'v', 'PX', '30'], ['SET', 'k2', 'v'],
    { cmd: ['DEL', 'k1', 'k2', 'k2', 'nope', 'l', Buffer.from([0, 0xff, 0x0a])], sleep: 200 }, ['DEL', 'l3', 'ly'],
    restoreNke,
  ] },
  { name: 'keyspace events: binary keys and odd names', steps: [
    ['SET', Buffer.from([0, 1, 0xff, 0x0a]), 'v'], ['DEL', Buffer.from([0, 1, 0xff, 0x0a])],
    ['SET', '__keyspace@0__:x', '1'], ['RENAME', '__keyspace@0__:x', '*'], ['EXPIRE', '*', '0'],
  ] },
];

export default scripts;
