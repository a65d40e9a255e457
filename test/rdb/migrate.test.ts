/**
 * MIGRATE both ways with a real redis-server: every type, TTLs, COPY, REPLACE, KEYS, AUTH and
 * AUTH2, cached connections (INFO migrate_cached_sockets), and Redis's replies (NOKEY, IOERR,
 * target errors), compared with what redis-server answers to the same MIGRATE.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { freePort, startOurs, startRedis, type Proc } from '../helpers/server.js';

let ours: Proc;
let redis: Proc;
let o: Redis;
let r: Redis;

before(async () => {
  [ours, redis] = await Promise.all([
    startOurs(['--appendfsync', 'no']),
    startRedis(['--enable-debug-command', 'yes', '--requirepass', 'pw']),
  ]);
  o = new Redis(ours.port, { maxRetriesPerRequest: 0 });
  r = new Redis(redis.port, { maxRetriesPerRequest: 0, password: 'pw' });
});
after(async () => {
  o?.disconnect();
  r?.disconnect();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

async function fill(c: Redis): Promise<void> {
  await c.set('str', 'x'.repeat(100));
  await c.set('int', '12345');
  await c.rpush('list', 'a', 'b', 'c');
  await c.sadd('set', 'a', 'b');
  await c.sadd('iset', 1, 2, 3);
  await c.zadd('zset', 1, 'a', 2, 'b');
  await c.hset('hash', 'f', 'v', 'g', 'w');
  await c.xadd('stream', '1-1', 'f', 'v');
  await c.set('ttl', 'v', 'PX', 100000);
}
const KEYS = ['str', 'int', 'list', 'set', 'iset', 'zset', 'hash', 'stream', 'ttl'];

async function valueOf(c: Redis, k: string): Promise<string> {
  const t = await c.type(k);
  const v = t === 'string' ? await c.get(k) : t === 'list' ? await c.lrange(k, 0, -1) : t === 'set' ? (await c.smembers(k)).sort()
    : t === 'zset' ? await c.zrange(k, '0', '-1', 'WITHSCORES') : t === 'hash' ? await c.hgetall(k) : await c.xrange(k, '-', '+');
  return JSON.stringify([t, v]);
}

describe('MIGRATE', () => {
  it('from us to redis-server: every type, TTLs, AUTH, KEYS, local keys deleted', async () => {
    await Promise.all([o.flushall(), r.flushall()]);
    await fill(o);
    const before = await Promise.all(KEYS.map((k) => valueOf(o, k)));
    assert.equal(await o.call('MIGRATE', '127.0.0.1', String(redis.port), '', '3', '5000', 'AUTH', 'pw', 'KEYS', ...KEYS), 'OK');
    assert.equal(await o.dbsize(), 0);
    await r.select(3);
    assert.deepEqual(await Promise.all(KEYS.map((k) => valueOf(r, k))), before);
    const pttl = await r.pttl('ttl');
    assert.ok(pttl > 90000 && pttl <= 100000, `ttl carried over: ${pttl}`);
    await r.select(0);
    assert.match(await o.info('stats'), /migrate_cached_sockets:1/);
  });

  it('from redis-server to us, and back with COPY and REPLACE', async () => {
    await Promise.all([o.flushall(), r.flushall()]);
    await fill(r);
    const before = await Promise.all(KEYS.map((k) => valueOf(r, k)));
    assert.equal(await r.call('MIGRATE', '127.0.0.1', String(ours.port), '', '0', '5000', 'KEYS', ...KEYS), 'OK');
    assert.deepEqual(await Promise.all(KEYS.map((k) => valueOf(o, k))), before);
    assert.equal(await r.dbsize(), 0);
    // Back with COPY (kept here) then REPLACE over an existing key.
    assert.equal(await o.call('MIGRATE', '127.0.0.1', String(redis.port), 'hash', '0', '5000', 'COPY', 'AUTH2', 'default', 'pw'), 'OK');
    assert.equal(await o.exists('hash'), 1);
    assert.deepEqual(await valueOf(r, 'hash'), before[KEYS.indexOf('hash')]);
    await o.hset('hash', 'new', '1');
    assert.match(String(await o.call('MIGRATE', '127.0.0.1', String(redis.port), 'hash', '0', '5000', 'COPY', 'AUTH', 'pw').catch((e) => e.message)),
      /^ERR Target instance replied with error: BUSYKEY Target key name already exists\.$/);
    assert.equal(await o.call('MIGRATE', '127.0.0.1', String(redis.port), 'hash', '0', '5000', 'REPLACE', 'AUTH', 'pw'), 'OK');
    assert.equal(await r.hget('hash', 'new'), '1');
    assert.equal(await o.exists('hash'), 0);
  });

  it('replies as redis-server does: NOKEY, IOERR, target errors, argument errors', async () => {
    await Promise.all([o.flushall(), r.flushall()]);
    await o.set('k', 'v');
    await r.set('k', 'v');
    const dead = await freePort();
    const both = async (args: string[], targetOfOurs: number, targetOfRedis: number) => {
      const a = await o.call('MIGRATE', '127.0.0.1', String(targetOfOurs), ...args).catch((e: Error) => `-${e.message}`);
      const b = await r.call('MIGRATE', '127.0.0.1', String(targetOfRedis), ...args).catch((e: Error) => `-${e.message}`);
      assert.equal(a, b, `MIGRATE ${args.join(' ')}`);
    };
    await both(['nokey', '0', '1000'], redis.port, ours.port);
    await both(['k', '0', '1000'], dead, dead);
    await both(['k', '0', '1000', 'KEYS', 'k'], redis.port, ours.port);
    await both(['', '0', '1000', 'BOGUS'], redis.port, ours.port);
    await both(['k', 'x', '1000'], redis.port, ours.port);
    await both(['k', '0', 'x'], redis.port, ours.port);
    await both(['k', '0', '1000', 'AUTH'], redis.port, ours.port);
    // Wrong password on the target: its error comes back, the key stays.
    const a = await o.call('MIGRATE', '127.0.0.1', String(redis.port), 'k', '0', '1000', 'AUTH', 'wrong').catch((e: Error) => e.message);
    assert.match(String(a), /^ERR Target instance replied with error: (WRONGPASS|ERR invalid password)/);
    assert.equal(await o.exists('k'), 1);
  });

  it('the server keeps serving while a MIGRATE waits for a slow target', async () => {
    // A target that accepts the connection and never answers: MIGRATE times out after 300 ms.
    const net = await import('node:net');
    const silent = net.createServer(() => undefined);
    await new Promise<void>((res) => silent.listen(0, '127.0.0.1', () => res()));
    const port = (silent.address() as { port: number }).port;
    try {
      await o.set('slow', 'v');
      const c2 = new Redis(ours.port);
      const pending = o.call('MIGRATE', '127.0.0.1', String(port), 'slow', '0', '300').catch((e: Error) => e.message);
      assert.equal(await c2.ping(), 'PONG');
      assert.equal(await pending, 'IOERR error or timeout reading to target instance');
      assert.equal(await o.exists('slow'), 1);
      c2.disconnect();
    } finally {
      silent.close();
    }
  });

  it('inside MULTI/EXEC, scripts and over REST it completes in its turn, as redis-server (COMMAND INFO: write, movablekeys)', async () => {
    await Promise.all([o.flushall(), r.flushall()]);
    const rp = String(redis.port);
    // Ours -> Redis inside MULTI/EXEC: the transaction's replies, the key moved.
    await o.set('mk', 'v1');
    const tx = await o.multi().set('mk2', 'v2').call('MIGRATE', '127.0.0.1', rp, '', '0', '5000', 'AUTH', 'pw', 'KEYS', 'mk', 'mk2').get('mk').exec();
    assert.deepEqual(tx, [[null, 'OK'], [null, 'OK'], [null, null]]);
    assert.deepEqual(await r.mget('mk', 'mk2'), ['v1', 'v2']);
    // Redis -> ours inside MULTI/EXEC, the same shape.
    const tr = await r.multi().call('MIGRATE', '127.0.0.1', String(ours.port), 'mk', '0', '5000').exists('mk').exec();
    assert.deepEqual(tr, [[null, 'OK'], [null, 0]]);
    assert.equal(await o.get('mk'), 'v1');
    // In a script (not noscript in 7.0.15), both ways; and its error raised as redis-server raises it.
    const script = "return redis.call('MIGRATE', ARGV[1], ARGV[2], KEYS[1], '0', '5000', 'AUTH', 'pw')";
    assert.equal(await o.eval(script, 1, 'mk', '127.0.0.1', rp), 'OK');
    assert.equal(await o.exists('mk'), 0);
    assert.equal(await r.get('mk'), 'v1');
    const dead = String(await freePort());
    await o.set('dk', 'v');
    await r.set('dk', 'v');
    const eo = await o.eval(script, 1, 'dk', '127.0.0.1', dead).catch((e: Error) => e.message);
    const er = await r.eval(script, 1, 'dk', '127.0.0.1', dead).catch((e: Error) => e.message);
    assert.equal(eo, er);
    // Name, arity, flags, key positions, categories and key specs as redis-server's (command tips are not served here).
    const info = async (c: Redis) => ((await c.call('COMMAND', 'INFO', 'migrate')) as unknown[][])[0].filter((_, i) => i !== 7);
    assert.deepEqual(await info(o), await info(r));
    // Over REST: the reply in the same request.
    const { TOKEN, TOKEN_ARGS } = await import('../http/rest-helpers.js');
    const web = await startOurs(['--appendfsync', 'no', ...TOKEN_ARGS]);
    try {
      const w = new Redis(web.port, { maxRetriesPerRequest: 0 });
      await w.set('rk', 'rest');
      const res = await fetch(`http://127.0.0.1:${web.httpPort}/`, {
        method: 'POST', headers: { authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(['MIGRATE', '127.0.0.1', rp, 'rk', '0', '5000', 'AUTH', 'pw']),
      });
      assert.deepEqual(await res.json(), { result: 'OK' });
      assert.equal(await w.exists('rk'), 0);
      assert.equal(await r.get('rk'), 'rest');
      assert.match(await w.info('stats'), /migrate_cached_sockets:1/);
      w.disconnect();
    } finally {
      await web.stop();
    }
  });
});
