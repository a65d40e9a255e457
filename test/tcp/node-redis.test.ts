/**
 * node-redis 6 (the `redis` package, RESP3 by default) against our server with default
 * options: connect (HELLO 3), every data type, pipelines, MULTI, pub/sub while the same
 * connection keeps issuing commands, and its client-side cache seeing invalidations caused by
 * another client's writes.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, BasicClientSideCache } from 'redis';
import { startOurs, type Proc } from '../helpers/server.js';

let server: Proc;
const open: { close(): Promise<unknown> | unknown }[] = [];

async function connect(opts: Parameters<typeof createClient>[0] = {}) {
  const c = createClient({ url: `redis://127.0.0.1:${server.port}`, ...opts });
  c.on('error', () => {});
  await c.connect();
  open.push({ close: () => c.close() });
  return c;
}

before(async () => {
  server = await startOurs(['--appendfsync', 'no']);
});
after(async () => {
  for (const c of open) await c.close();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('node-redis 6 (RESP3 by default)', () => {
  it('connects with default options and speaks RESP3', async () => {
    const c = await connect();
    assert.equal(await c.ping(), 'PONG');
    assert.match(await c.clientInfo().then((i) => String(i.resp)), /^3$/);
    assert.equal(await c.get('nokey'), null);
  });

  it('every data type', async () => {
    const c = await connect();
    assert.equal(await c.set('s', 'v'), 'OK');
    assert.equal(await c.get('s'), 'v');
    assert.equal(await c.incrByFloat('f', 1.5), '1.5');
    await c.hSet('h', { a: '1', b: '2' });
    assert.deepEqual({ ...(await c.hGetAll('h')) }, { a: '1', b: '2' });
    assert.deepEqual({ ...(await c.hGetAll('nokey')) }, {});
    await c.sAdd('set', ['x', 'y']);
    assert.deepEqual((await c.sMembers('set')).sort(), ['x', 'y']);
    await c.zAdd('z', [{ score: 1.5, value: 'm' }, { score: 2, value: 'n' }]);
    assert.equal(await c.zScore('z', 'm'), 1.5);
    assert.deepEqual(await c.zRangeWithScores('z', 0, -1), [{ value: 'm', score: 1.5 }, { value: 'n', score: 2 }]);
    assert.deepEqual(await c.zPopMin('z'), { value: 'm', score: 1.5 });
    await c.rPush('l', ['1', '2', '3']);
    assert.deepEqual(await c.lRange('l', 0, -1), ['1', '2', '3']);
    const id = await c.xAdd('st', '*', { f: 'v' });
    const read = await c.xRead({ key: 'st', id: '0' });
    assert.ok(read !== null);
    assert.equal(JSON.stringify(read).includes(id), true);
    await c.geoAdd('g', { longitude: 13.361389, latitude: 38.115556, member: 'Palermo' });
    const pos = await c.geoPos('g', 'Palermo');
    assert.ok(Math.abs(Number(pos[0]!.longitude) - 13.361389) < 1e-5);
    assert.equal(await c.pfAdd('hll', ['a', 'b']), 1);
    assert.deepEqual(await c.configGet('maxmemory'), { maxmemory: '0' });
    assert.match(await c.info('server'), /redis_version:7\.0\.15/);
  });

  it('pipelines and MULTI', async () => {
    const c = await connect();
    const replies = await c.multi().set('m1', '1').incr('m1').get('m1').hGetAll('h').exec();
    assert.deepEqual(replies.slice(0, 3), ['OK', 2, '2']);
    const p = [];
    for (let i = 0; i < 200; i++) p.push(c.set(`p${i}`, String(i)));
    for (let i = 0; i < 200; i++) p.push(c.get(`p${i}`));
    const r = await Promise.all(p);
    assert.equal(r[200], '0');
    assert.equal(r[399], '199');
    const batch = await c.multi().get('p1').get('p2').execAsPipeline();
    assert.deepEqual(batch, ['1', '2']);
  });

  it('pub/sub messages arrive while the same connection runs commands', async () => {
    const sub = await connect();
    const pub = await connect();
    const got: string[] = [];
    await sub.subscribe('news', (m) => got.push(m));
    await sub.pSubscribe('n*', (m, ch) => got.push(`p:${ch}:${m}`));
    assert.equal(await sub.set('while-subscribed', 'yes'), 'OK'); // RESP3: any command
    assert.equal(await pub.publish('news', 'hello'), 2);
    assert.equal(await sub.get('while-subscribed'), 'yes');
    await sleep(50);
    assert.deepEqual(got.sort(), ['hello', 'p:news:hello']);
    await sub.unsubscribe('news');
    await sub.pUnsubscribe('n*');
    assert.equal(await sub.ping(), 'PONG');
  });

  it('its client-side cache is invalidated by another client\'s writes', async () => {
    const cache = new BasicClientSideCache({ ttl: 0, maxEntries: 0 });
    const c = await connect({ RESP: 3, clientSideCache: cache });
    const other = await connect();
    await other.set('cached', 'one');
    assert.equal(await c.get('cached'), 'one'); // miss: fetched, cached
    assert.equal(await c.get('cached'), 'one'); // hit
    assert.equal(cache.stats().hitCount, 1);
    assert.equal(cache.size(), 1);
    await other.set('cached', 'two'); // the server pushes an invalidation to c
    for (let i = 0; i < 50 && cache.size() !== 0; i++) await sleep(10);
    assert.equal(cache.size(), 0);
    assert.equal(await c.get('cached'), 'two');
    await other.flushAll();
    for (let i = 0; i < 50 && cache.size() !== 0; i++) await sleep(10);
    assert.equal(cache.size(), 0);
  });
});
