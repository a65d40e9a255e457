/**
 * DEBUG as Redis 7.0.15 has it, against redis-server: refused unless enable-debug-command
 * allows it (no, local, yes); DIGEST and DIGEST-VALUE give the same digests for the same data
 * (Redis's SHA1 mix/xor algorithm); PROTOCOL's replies; RELOAD's options.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { startPair, type Pair } from '../helpers/pair.js';
import { RawClient } from '../helpers/resp-client.js';

let pair: Pair;
let ours: Proc;
let redis: Proc;
let oc: RawClient;
let rc: RawClient;

before(async () => {
  pair = await startPair(['--enable-debug-command', 'yes'], ['--enable-debug-command', 'yes']);
  ({ ours, redis, oc, rc } = pair);
});
after(async () => {
  await pair?.stop();
});

const both = (...args: string[]) => pair.both(...args);

async function same(...args: string[]): Promise<string> {
  const [a, b] = await both(...args);
  assert.equal(a, b, args.join(' '));
  return a;
}

describe('DEBUG DIGEST', () => {
  it('an empty dataset digests to zeros', async () => {
    await same('FLUSHALL');
    assert.equal(await same('DEBUG', 'DIGEST'), '+0000000000000000000000000000000000000000\r\n');
    await same('DEBUG', 'DIGEST-VALUE', 'nosuch', 'other');
    await same('DEBUG', 'DIGEST-VALUE');
  });

  it('every type gives the digest redis-server gives', async () => {
    await same('FLUSHALL');
    const setup: string[][] = [
      ['SET', 's', 'hello'], ['SET', 'n', '12345'], ['SET', 'big', 'x'.repeat(300)], ['SET', 'neg', '-7'],
      ['RPUSH', 'l', 'a', '1', 'b', '-2', '3.5', ''], ['RPUSH', 'biglist', ...Array.from({ length: 200 }, (_, i) => `e${i}`)],
      ['SADD', 'si', '1', '2', '3', '-40'], ['SADD', 'ss', 'a', 'b', 'c', '1'],
      ['SADD', 'sbig', ...Array.from({ length: 300 }, (_, i) => `m${i}`)],
      ['ZADD', 'z', '1.5', 'a', '0.1', 'b', '-inf', 'c', '1e20', 'd', '3', 'e', '-0.000001', 'f', '123456789012', 'g'],
      ['ZADD', 'zbig', ...Array.from({ length: 200 }, (_, i) => [String(i / 7), `z${i}`]).flat()],
      ['HSET', 'h', 'f1', 'v1', 'f2', '2', 'num', '100'],
      ['HSET', 'hbig', ...Array.from({ length: 600 }, (_, i) => [`f${i}`, `v${i}`]).flat()],
      ['XADD', 'x', '1-1', 'a', '1', 'b', '2'], ['XADD', 'x', '2-0', 'c', '3'], ['XADD', 'x', '5-7', 'd', ''],
      ['SET', 'ttl', 'v', 'EX', '1000'], ['HSET', 'httl', 'a', 'b'], ['EXPIRE', 'httl', '1000'],
      ['SELECT', '3'], ['SET', 'other-db', 'v'], ['RPUSH', 'l', 'x'], ['SELECT', '0'],
    ];
    for (const cmd of setup) await same(...cmd);
    await same('DEBUG', 'DIGEST');
    await same('DEBUG', 'DIGEST-VALUE', 's', 'n', 'big', 'neg', 'l', 'biglist', 'si', 'ss', 'sbig', 'z', 'zbig', 'h', 'hbig', 'x', 'ttl', 'httl', 'nosuch');
    // Changes change it the same way; order-independent types do not depend on insertion order.
    for (const cmd of [['SREM', 'ss', 'a'], ['SADD', 'ss', 'a'], ['LPUSH', 'l', 'first'], ['ZINCRBY', 'z', '2', 'a'], ['PERSIST', 'ttl'],
      ['HDEL', 'h', 'f1'], ['XDEL', 'x', '2-0'], ['DEL', 'neg']]) {
      await same(...cmd);
      await same('DEBUG', 'DIGEST');
    }
    await same('DEBUG', 'DIGEST-VALUE', 'ss', 'l', 'z', 'ttl', 'h', 'x');
  });

  it('errors as Redis', async () => {
    for (const cmd of [['DEBUG', 'DIGEST', 'x'], ['DEBUG', 'RELOAD', 'foo'], ['DEBUG', 'PROTOCOL'], ['DEBUG', 'JMAP'],
      ['DEBUG', 'protocol', 'string', 'x']]) await same(...cmd);
  });
});

describe('DEBUG PROTOCOL and RELOAD', () => {
  it('PROTOCOL answers each type as redis-server does over RESP2', async () => {
    for (const t of ['string', 'integer', 'double', 'bignum', 'null', 'array', 'set', 'map', 'attrib', 'push', 'verbatim', 'true', 'false', 'nosuch', 'STRING']) {
      await same('DEBUG', 'PROTOCOL', t);
    }
  });

  it('RELOAD reads every type back from disk: digest, TTLs and the loaded-keys count as redis-server', async () => {
    await same('FLUSHALL');
    await same('SET', 'a', '1');
    await same('SET', 'big', 'x'.repeat(5000));
    await same('SET', 't', 'v', 'PX', '100000');
    await same('RPUSH', 'l', 'x', 'y', '3');
    await same('HSET', 'h', 'f', '1', 'g', 'two');
    await same('ZADD', 'z', '1', 'a', '2.5', 'b');
    await same('SADD', 's', 'x', 'y', '1');
    await same('XADD', 'x', '1-1', 'a', '1');
    await same('PFADD', 'hll', 'a', 'b');
    await same('SELECT', '3');
    await same('SET', 'in3', 'v', 'EX', '1000');
    // A collection stored one record per element (the loader's deferred path).
    for (let i = 0; i < 12; i++) await same('SADD', 'bigset', ...Array.from({ length: 1000 }, (_, j) => `m${i * 1000 + j}`));
    await same('SELECT', '0');
    const before = await same('DEBUG', 'DIGEST');
    assert.notEqual(before, '+0000000000000000000000000000000000000000\r\n');
    await same('DEBUG', 'RELOAD');
    assert.equal(await same('DEBUG', 'DIGEST'), before);
    const [ta, tb] = await both('PTTL', 't');
    for (const t of [ta, tb]) assert.ok(Number(t.slice(1)) > 90000 && Number(t.slice(1)) <= 100000, t);
    await same('SELECT', '3');
    await same('TTL', 'in3');
    await same('SCARD', 'bigset');
    await same('SELECT', '0');
    // The keys really came back from disk: the load counts them, as Redis's does.
    const [ia, ib] = await both('INFO', 'persistence');
    const loaded = (i: string) => /rdb_last_load_keys_loaded:(\d+)/.exec(i)![1];
    assert.equal(loaded(ia), '11');
    assert.equal(loaded(ia), loaded(ib));
    for (const opts of [['NOSAVE'], ['NOFLUSH', 'MERGE'], ['MERGE', 'NOSAVE']]) {
      await same('DEBUG', 'RELOAD', ...opts);
      assert.equal(await same('DEBUG', 'DIGEST'), before);
    }
    // Writes after a reload go on as before (and survive the next one).
    await same('SET', 'after', '1');
    await same('DEL', 'a');
    const d2 = await same('DEBUG', 'DIGEST');
    await same('DEBUG', 'RELOAD');
    assert.equal(await same('DEBUG', 'DIGEST'), d2);
    await same('GET', 'a');
  });
});

describe('PFSELFTEST', () => {
  it('passes (Redis answers OK too; it takes too long on redis-server for the diff cases)', async () => {
    assert.equal((await oc.call('PFSELFTEST')).toString(), '+OK\r\n');
  });
});

describe('enable-debug-command', () => {
  it('no (the default) refuses DEBUG with Redis\'s text; local allows loopback clients', async () => {
    const [o, r] = await Promise.all([startOurs(), startRedis()]);
    try {
      const [a, b] = await Promise.all([RawClient.connect(o.port), RawClient.connect(r.port)]);
      for (const cmd of [['DEBUG', 'DIGEST'], ['DEBUG', 'SLEEP', '0'], ['DEBUG', 'HELP'], ['DEBUG'], ['CONFIG', 'SET', 'enable-debug-command', 'yes'],
        ['CONFIG', 'GET', 'enable-debug-command']]) {
        const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]);
        assert.equal(x.toString(), y.toString(), cmd.join(' '));
      }
      a.close();
      b.close();
    } finally {
      await Promise.all([o.stop(), r.stop()]);
    }
    const [lo, lr] = await Promise.all([startOurs(['--enable-debug-command', 'local']), startRedis(['--enable-debug-command', 'local'])]);
    try {
      const [a, b] = await Promise.all([RawClient.connect(lo.port), RawClient.connect(lr.port)]);
      const [x, y] = await Promise.all([a.call('DEBUG', 'DIGEST'), b.call('DEBUG', 'DIGEST')]);
      assert.equal(x.toString(), y.toString());
      a.close();
      b.close();
    } finally {
      await Promise.all([lo.stop(), lr.stop()]);
    }
  });
});
