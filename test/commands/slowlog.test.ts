/**
 * SLOWLOG and LATENCY against redis-server 7.0.15. Durations and timestamps differ between
 * the servers, so entries are compared field by field with those masked; help texts, errors
 * and argument truncation/redaction are compared byte for byte.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { type Proc } from '../helpers/server.js';
import { startPair, type Pair } from '../helpers/pair.js';
import { RawClient } from '../helpers/resp-client.js';

let pair: Pair;
let ours: Proc;
let redis: Proc;
let oc: RawClient;
let rc: RawClient;

before(async () => {
  pair = await startPair(['--appendfsync', 'no'], []);
  ({ ours, redis, oc, rc } = pair);
});
after(async () => {
  await pair?.stop();
});

const both = (...args: string[]) => pair.both(...args);

/** SLOWLOG GET entries with the time, the duration and the client port masked. */
function masked(reply: string): string {
  return reply
    .replace(/\*6\r\n:\d+\r\n:\d+\r\n:\d+\r\n/g, '*6\r\n:ID\r\n:T\r\n:D\r\n')
    .replace(/\$\d+\r\n127\.0\.0\.1:\d+\r\n/g, '$ADDR\r\n127.0.0.1:P\r\n');
}

describe('SLOWLOG', () => {
  it('help, errors and arity are Redis\'s', async () => {
    for (const cmd of [['SLOWLOG', 'HELP'], ['SLOWLOG', 'GET', 'abc'], ['SLOWLOG', 'GET', '-2'], ['SLOWLOG', 'GET', '1', '2'],
      ['SLOWLOG', 'LEN', 'x'], ['SLOWLOG', 'foo'], ['SLOWLOG'], ['SLOWLOG', 'RESET', 'x'], ['SLOWLOG', 'help', 'x']]) {
      const [a, b] = await both(...cmd);
      assert.equal(a, b, cmd.join(' '));
    }
  });

  it('logs what Redis logs: arguments as sent, truncated and redacted, scripts\' commands as the Lua client, not EXEC', async () => {
    await both('CONFIG', 'SET', 'slowlog-log-slower-than', '0');
    await both('SLOWLOG', 'RESET');
    const many = Array.from({ length: 40 }, (_, i) => `m${i}`);
    for (const cmd of [
      ['CLIENT', 'SETNAME', 'watcher'], ['SET', 'k', 'x'.repeat(200)], ['RPUSH', 'l', ...many],
      ['EVAL', "redis.call('set','a','b') return 1", '0'], ['MULTI'], ['SET', 'x', '1'], ['EXEC'],
      ['AUTH', 'nobody', 'wrong'], ['CONFIG', 'SET', 'masterauth', 'secret', 'timeout', '0'], ['CONFIG', 'SET', 'masterauth', ''],
    ]) await both(...cmd);
    const [a, b] = await both('SLOWLOG', 'GET', '-1');
    assert.equal(masked(a), masked(b));
    const [la, lb] = await both('SLOWLOG', 'LEN');
    assert.equal(la, lb);
    assert.equal((await oc.call('SLOWLOG', 'RESET')).toString(), '+OK\r\n');
    // SLOWLOG RESET itself is the only entry afterwards.
    assert.equal((await oc.call('SLOWLOG', 'LEN')).toString(), ':1\r\n');
  });

  it('slowlog-max-len bounds the log; a negative threshold turns it off', async () => {
    await both('SLOWLOG', 'RESET');
    await both('CONFIG', 'SET', 'slowlog-max-len', '3');
    for (let i = 0; i < 6; i++) await both('PING');
    const [a, b] = await both('SLOWLOG', 'GET', '-1');
    assert.equal(masked(a), masked(b));
    await both('CONFIG', 'SET', 'slowlog-log-slower-than', '-1');
    await both('SLOWLOG', 'RESET');
    await both('PING');
    assert.deepEqual(await both('SLOWLOG', 'LEN'), [':0\r\n', ':0\r\n']);
    await both('CONFIG', 'SET', 'slowlog-log-slower-than', '10000');
    await both('CONFIG', 'SET', 'slowlog-max-len', '128');
  });

  it('ioredis and node-redis read the entries', async () => {
    const io = new Redis({ port: ours.port, lazyConnect: true });
    // RESP2: HELLO 3 is another change's.
    const nr = createClient({ socket: { port: ours.port }, RESP: 2 });
    try {
      await io.connect();
      await io.config('SET', 'slowlog-log-slower-than', '0');
      await io.set('via-ioredis', '1');
      const got = (await io.call('SLOWLOG', 'GET', '2')) as unknown[][];
      assert.equal(got.length, 2);
      assert.deepEqual(got[0][3], ['set', 'via-ioredis', '1']);
      await nr.connect();
      await nr.set('via-node-redis', '1');
      const entries = (await nr.sendCommand(['SLOWLOG', 'GET', '1'])) as unknown[][];
      assert.equal(entries.length, 1);
      assert.deepEqual(entries[0][3], ['SET', 'via-node-redis', '1']);
      await io.config('SET', 'slowlog-log-slower-than', '10000');
    } finally {
      io.disconnect();
      if (nr.isOpen) await nr.quit();
    }
  });
});

describe('LATENCY', () => {
  it('help, doctor when disabled and with nothing seen, errors: Redis\'s texts', async () => {
    for (const cmd of [['LATENCY', 'HELP'], ['LATENCY', 'DOCTOR'], ['LATENCY', 'LATEST'], ['LATENCY', 'HISTORY', 'command'],
      ['LATENCY', 'GRAPH', 'nosuch'], ['LATENCY', 'RESET'], ['LATENCY', 'RESET', 'a', 'b'], ['LATENCY', 'foo'], ['LATENCY', 'HISTORY'],
      ['LATENCY', 'HISTOGRAM', 'nosuchcommand']]) {
      const [a, b] = await both(...cmd);
      assert.equal(a, b, cmd.join(' '));
    }
    await both('CONFIG', 'SET', 'latency-monitor-threshold', '1');
    const [a, b] = await both('LATENCY', 'DOCTOR');
    assert.equal(a, b);
  });

  it('a slow command becomes a "command" event: LATEST, HISTORY, GRAPH, RESET', async () => {
    await both('LATENCY', 'RESET');
    // A script that spins for a while: a slow (non-fast) command on both servers.
    const spin = 'local i = 0 while i < 3000000 do i = i + 1 end return i';
    await both('EVAL', spin, '0');
    const latest = (await oc.call('LATENCY', 'LATEST')).toString();
    const m = /^\*1\r\n\*4\r\n\$7\r\ncommand\r\n:(\d+)\r\n:(\d+)\r\n:(\d+)\r\n$/.exec(latest);
    assert.ok(m, latest);
    assert.ok(Number(m[2]) >= 1 && m[2] === m[3]);
    const hist = (await oc.call('LATENCY', 'HISTORY', 'command')).toString();
    assert.match(hist, /^\*1\r\n\*2\r\n:\d+\r\n:\d+\r\n$/);
    // The graph of one sample has Redis's shape (the values differ).
    const [ga, gb] = await both('LATENCY', 'GRAPH', 'command');
    // Values and the "seconds ago" label differ: only the shape is Redis's.
    const shape = (s: string) => s.replace(/\d+ ms/g, 'N ms').replace(/^\$\d+/, '$L').replace(/^\d$/m, 'N');
    assert.equal(shape(ga), shape(gb));
    assert.deepEqual(await both('LATENCY', 'RESET', 'command', 'nosuch'), [':1\r\n', ':1\r\n']);
    await both('CONFIG', 'SET', 'latency-monitor-threshold', '0');
  });

  it('DOCTOR with events: Redis\'s report word for word (figures masked), for each slowlog setting', async () => {
    // Figures depend on each server's speed: the text around them must be Redis's.
    const mask = (s: string) => s.replace(/^\$\d+/, '$L').replace(/\d+ms/g, 'Nms');
    const spin = 'local i = 0 while i < 3000000 do i = i + 1 end return i';
    for (const slower of ['10000', '-1', '100000000']) {
      await both('LATENCY', 'RESET');
      await both('CONFIG', 'SET', 'latency-monitor-threshold', '1');
      await both('CONFIG', 'SET', 'slowlog-log-slower-than', slower);
      await both('EVAL', spin, '0');
      const [a, b] = await both('LATENCY', 'DOCTOR');
      assert.match(a, /1\. command: 1 latency spikes \(average \d+ms, mean deviation 0ms, period 1\.00 sec\)/);
      assert.equal(mask(a), mask(b), `slowlog-log-slower-than ${slower}`);
    }
    await both('CONFIG', 'SET', 'slowlog-log-slower-than', '10000');
    await both('CONFIG', 'SET', 'latency-monitor-threshold', '0');
    await both('LATENCY', 'RESET');
  });

  it('HISTOGRAM reports calls and cumulative power-of-two buckets from the per-command histograms', async () => {
    await oc.call('CONFIG', 'RESETSTAT');
    for (let i = 0; i < 5; i++) await oc.call('SET', 'h', String(i));
    await oc.call('GET', 'h');
    const r = (await oc.call('LATENCY', 'HISTOGRAM', 'set', 'GET', 'nosuch')).toString();
    const m = /^\*4\r\n\$3\r\nset\r\n\*4\r\n\$5\r\ncalls\r\n:5\r\n\$14\r\nhistogram_usec\r\n\*(\d+)\r\n((?::\d+\r\n)+)\$3\r\nget\r\n\*4\r\n\$5\r\ncalls\r\n:1\r\n/.exec(r);
    assert.ok(m, r);
    const nums = m[2].split('\r\n').filter(Boolean).map((x) => Number(x.slice(1)));
    assert.equal(nums.length, Number(m[1]));
    // Labels grow, counts grow and end at the number of calls.
    for (let i = 2; i < nums.length; i += 2) assert.ok(nums[i] > nums[i - 2] && nums[i + 1] > nums[i - 1]);
    assert.equal(nums[nums.length - 1], 5);
  });
});
