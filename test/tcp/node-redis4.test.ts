/**
 * node-redis 4 (installed as `redis4`, an alias of redis@4), which stays on RESP2: it keeps
 * working unchanged next to the RESP3 clients. Connect, every data type, pipelines, MULTI and
 * pub/sub on a dedicated connection.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis4';
import { startOurs, type Proc } from '../helpers/server.js';

let server: Proc;
const open: { quit(): Promise<unknown> }[] = [];

async function connect() {
  const c = createClient({ url: `redis://127.0.0.1:${server.port}` });
  c.on('error', () => {});
  await c.connect();
  open.push(c);
  return c;
}

before(async () => {
  server = await startOurs(['--appendfsync', 'no']);
});
after(async () => {
  for (const c of open) await c.quit().catch(() => {});
  await server?.stop();
});

describe('node-redis 4 (RESP2)', () => {
  it('connects without HELLO 3 and stays on RESP2', async () => {
    const c = await connect();
    assert.equal(await c.ping(), 'PONG');
    assert.match(String(await c.sendCommand(['CLIENT', 'INFO'])), / resp=2\n/);
  });

  it('every data type, pipelines and MULTI', async () => {
    const c = await connect();
    assert.equal(await c.set('s', 'v'), 'OK');
    assert.equal(await c.get('s'), 'v');
    await c.hSet('h', { a: '1', b: '2' });
    assert.deepEqual({ ...(await c.hGetAll('h')) }, { a: '1', b: '2' });
    await c.sAdd('set', ['x', 'y']);
    assert.deepEqual((await c.sMembers('set')).sort(), ['x', 'y']);
    await c.zAdd('z', [{ score: 1.5, value: 'm' }, { score: 2, value: 'n' }]);
    assert.equal(await c.zScore('z', 'm'), 1.5);
    assert.deepEqual(await c.zRangeWithScores('z', 0, -1), [{ value: 'm', score: 1.5 }, { value: 'n', score: 2 }]);
    await c.rPush('l', ['1', '2', '3']);
    assert.deepEqual(await c.lRange('l', 0, -1), ['1', '2', '3']);
    const id = await c.xAdd('st', '*', { f: 'v' });
    assert.equal(JSON.stringify(await c.xRange('st', '-', '+')).includes(id), true);
    assert.deepEqual(await c.multi().set('a', '1').incr('a').get('a').exec(), ['OK', 2, '2']);
    const [, n] = await Promise.all([c.set('p', '1'), c.incr('p')]);
    assert.equal(n, 2);
  });

  it('pub/sub on a subscribed connection', async () => {
    const sub = await connect();
    const pub = await connect();
    const got: string[] = [];
    await sub.subscribe('news', (m) => { got.push(m); });
    assert.equal(await pub.publish('news', 'hello'), 1);
    for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(got, ['hello']);
    await sub.unsubscribe('news');
  });
});
