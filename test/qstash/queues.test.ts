/**
 * Queues, global parallelism and delivery cut-off with the unmodified @upstash/qstash SDK:
 * ordered delivery that holds through retries and callbacks (QStash's queue documentation: the
 * next message becomes ACTIVE only once the previous one is DELIVERED or FAILED and its
 * callbacks are done), parallelism > 1 never exceeded, unknown queues (404; enqueue creates
 * one), the server-wide cap of --qstash-parallelism, and Upstash-Timeout as a bound on the
 * whole attempt.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startQ, endpoint, client, keysOf, until, statesOf, sleep, QTOKEN, type QServer, type Endpoint, type Delivery } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let c: any;
let keys: { current: string; next: string };

before(async () => {
  srv = await startQ({ args: ['--qstash-token', QTOKEN, '--qstash-parallelism', '3'] });
  c = await client(srv.base);
  keys = await keysOf(srv.base);
});
after(async () => {
  await srv.stop();
});

const fresh = (): Promise<Endpoint> => endpoint(keys);
const num = (d: Delivery): number => JSON.parse(d.body).i;
const api = (path: string, init: RequestInit = {}) =>
  fetch(`${srv.base}${path}`, { ...init, headers: { authorization: `Bearer ${QTOKEN}`, ...(init.headers as Record<string, string> ?? {}) } });

describe('queue order through retries and callbacks', () => {
  it('parallelism 1: the next message waits until the failing one succeeds on a retry', async () => {
    const e = await fresh();
    try {
      e.handler = (d, res) => {
        // Message 0 fails its first two attempts.
        const fail = num(d) === 0 && Number(d.headers['upstash-retried']) < 2;
        res.writeHead(fail ? 500 : 200);
        res.end(fail ? 'not yet' : 'ok');
      };
      const q = c.queue({ queueName: 'ord-retry' });
      await q.upsert({ parallelism: 1 });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await q.enqueueJSON({ url: `${e.url}/o`, body: { i }, retries: 3, retryDelay: '150' })).messageId);
      const ds = await e.waitFor(5, 10_000);
      await sleep(100);
      assert.deepEqual(ds.map(num), [0, 0, 0, 1, 2]);
      assert.deepEqual(ds.slice(0, 3).map((d) => d.headers['upstash-retried']), ['0', '1', '2']);
      assert.ok(ds[1].at - ds[0].at >= 140, 'the retry delay was honoured');
      assert.equal(e.maxConcurrent, 1);
      assert.deepEqual(await statesOf(c, ids[0]), ['CREATED', 'ACTIVE', 'ERROR', 'RETRY', 'ACTIVE', 'ERROR', 'RETRY', 'ACTIVE', 'DELIVERED']);
      // Message 1 became ACTIVE only after message 0 was DELIVERED.
      const ev = (await c.logs({ filter: { queueName: 'ord-retry' } })).events;
      const at = (id: string, state: string) => ev.find((x: any) => x.messageId === id && x.state === state).time;
      assert.ok(at(ids[1], 'ACTIVE') >= at(ids[0], 'DELIVERED'));
      assert.ok(at(ids[2], 'ACTIVE') >= at(ids[1], 'DELIVERED'));
    } finally { await e.close(); }
  });

  it('parallelism 1: the next message waits until the failing one is in the DLQ', async () => {
    const e = await fresh();
    try {
      e.handler = (d, res) => { res.writeHead(num(d) === 0 ? 503 : 200); res.end(); };
      const q = c.queue({ queueName: 'ord-dlq' });
      const a = await q.enqueueJSON({ url: `${e.url}/o`, body: { i: 0 }, retries: 2, retryDelay: '100' });
      const b = await q.enqueueJSON({ url: `${e.url}/o`, body: { i: 1 }, retries: 2, retryDelay: '100' });
      const ds = await e.waitFor(4, 10_000);
      assert.deepEqual(ds.map(num), [0, 0, 0, 1]);
      await until(async () => (await statesOf(c, b.messageId)).at(-1) === 'DELIVERED', 5000, 'b DELIVERED');
      const failed = (await c.logs({ filter: { messageId: a.messageId, state: 'FAILED' } })).events[0];
      const active = (await c.logs({ filter: { messageId: b.messageId, state: 'ACTIVE' } })).events[0];
      assert.ok(active.time >= failed.time, 'b started after a FAILED');
      assert.equal((await c.dlq.listMessages({ filter: { queueName: 'ord-dlq' } })).messages.length, 1);
    } finally { await e.close(); }
  });

  it('parallelism 1: the next message waits for the callback and the failure callback', async () => {
    const e = await fresh();
    const cb = await fresh();
    try {
      let cbDone = 0;
      cb.handler = async (_d, res) => { await sleep(300); cbDone = Date.now(); res.writeHead(200); res.end(); };
      e.handler = (d, res) => { res.writeHead(num(d) === 0 ? 500 : 200); res.end(); };
      const q = c.queue({ queueName: 'ord-cb' });
      await q.enqueueJSON({ url: `${e.url}/o`, body: { i: 0 }, retries: 0, failureCallback: `${cb.url}/fail` });
      await q.enqueueJSON({ url: `${e.url}/o`, body: { i: 1 }, callback: `${cb.url}/ok` });
      await q.enqueueJSON({ url: `${e.url}/o`, body: { i: 2 } });
      const ds = await e.waitFor(3, 10_000);
      const cbs = await cb.waitFor(2, 10_000);
      assert.deepEqual(ds.map(num), [0, 1, 2]);
      assert.deepEqual(cbs.map((d) => d.path), ['/fail', '/ok']);
      // Each message starts only after the previous one's callback has been answered.
      assert.ok(ds[1].at >= cbs[0].at + 290, `message 1 at +${ds[1].at - cbs[0].at}ms after the failure callback began`);
      assert.ok(ds[2].at >= cbs[1].at + 290, `message 2 at +${ds[2].at - cbs[1].at}ms after the callback began`);
      assert.ok(cbDone > 0);
      assert.equal(JSON.parse(cbs[0].body).sourceBody, Buffer.from('{"i":0}').toString('base64'));
    } finally { await e.close(); await cb.close(); }
  });

  it('parallelism 2: never more than two in flight, retries keep their slot', async () => {
    const e = await fresh();
    try {
      e.handler = async (d, res) => {
        await sleep(60);
        const fail = num(d) < 2 && d.headers['upstash-retried'] === '0';
        res.writeHead(fail ? 500 : 200);
        res.end();
      };
      const q = c.queue({ queueName: 'par2' });
      await q.upsert({ parallelism: 2 });
      assert.equal((await q.get()).parallelism, 2);
      for (let i = 0; i < 6; i++) await q.enqueueJSON({ url: `${e.url}/p`, body: { i }, retries: 1, retryDelay: '250' });
      const ds = await e.waitFor(8, 10_000);
      await sleep(100);
      assert.equal(e.deliveries.length, 8);
      assert.equal(e.maxConcurrent, 2);
      // Messages 0 and 1 fail once: while they wait for their retry, nothing else starts.
      assert.deepEqual(ds.slice(0, 4).map(num).sort(), [0, 0, 1, 1]);
      assert.deepEqual(ds.slice(4).map(num).sort(), [2, 3, 4, 5]);
      assert.equal((await q.get()).lag, 0);
    } finally { await e.close(); }
  });

  it('a paused queue holds new messages; resume delivers them in order', async () => {
    const e = await fresh();
    try {
      const q = c.queue({ queueName: 'pz' });
      await q.upsert({ parallelism: 1, paused: true });
      assert.equal((await q.get()).paused, true);
      for (let i = 0; i < 3; i++) await q.enqueueJSON({ url: `${e.url}/z`, body: { i } });
      await sleep(200);
      assert.equal(e.deliveries.length, 0);
      assert.equal((await q.get()).lag, 3);
      await q.upsert({ paused: false });
      const ds = await e.waitFor(3);
      assert.deepEqual(ds.map(num), [0, 1, 2]);
    } finally { await e.close(); }
  });
});

describe('unknown queues', () => {
  it('get, delete, pause and resume answer 404 and create nothing', async () => {
    for (const [method, path] of [['GET', '/v2/queues/nosuchq'], ['DELETE', '/v2/queues/nosuchq'], ['POST', '/v2/queues/nosuchq/pause'], ['POST', '/v2/queues/nosuchq/resume']]) {
      const r = await api(path, { method });
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.equal(typeof (await r.json() as { error?: string }).error, 'string');
    }
    const q = c.queue({ queueName: 'nosuchq' });
    await assert.rejects(q.get(), (err: any) => err.status === 404);
    await assert.rejects(q.delete(), (err: any) => err.status === 404);
    await assert.rejects(q.pause(), (err: any) => err.status === 404);
    await assert.rejects(q.resume(), (err: any) => err.status === 404);
    assert.ok(!(await c.queue().list()).some((x: any) => x.name === 'nosuchq'));
    // Bad names and bodies.
    assert.equal((await api('/v2/queues', { method: 'POST', body: '{"queueName":"bad name","parallelism":1}' })).status, 400);
    assert.equal((await api('/v2/queues', { method: 'POST', body: '{"parallelism":1}' })).status, 400);
    assert.equal((await api('/v2/queues', { method: 'POST', body: '{"queueName":"q","parallelism":"2"}' })).status, 400);
    assert.equal((await api('/v2/enqueue/bad%20name/http://127.0.0.1:9/x', { method: 'POST' })).status, 400);
  });

  it('enqueue to an unknown queue creates it with parallelism 1', async () => {
    const e = await fresh();
    try {
      const r = await c.queue({ queueName: 'autoq' }).enqueueJSON({ url: `${e.url}/auto`, body: { i: 0 } });
      assert.match(r.messageId, /^msg_/);
      await e.waitFor(1);
      const info = await c.queue({ queueName: 'autoq' }).get();
      assert.equal(info.name, 'autoq');
      assert.equal(info.parallelism, 1);
      assert.equal(info.paused, false);
      assert.ok(info.createdAt > 0 && info.updatedAt >= info.createdAt);
      await c.queue({ queueName: 'autoq' }).delete();
      await assert.rejects(c.queue({ queueName: 'autoq' }).get(), (err: any) => err.status === 404);
    } finally { await e.close(); }
  });
});

describe('global parallelism', () => {
  it('--qstash-parallelism caps deliveries in flight server-wide; GET /v2/globalParallelism reports it', async () => {
    const a = await fresh();
    const b = await fresh();
    try {
      let inFlight = 0;
      let max = 0;
      const slow = async (_d: Delivery, res: import('node:http').ServerResponse) => {
        max = Math.max(max, ++inFlight);
        await sleep(200);
        inFlight--;
        res.writeHead(200);
        res.end();
      };
      a.handler = slow;
      b.handler = slow;
      assert.deepEqual(await c.flowControl.getGlobalParallelism(), { parallelismMax: 3, parallelismCount: 0 });
      // Two destinations, a queue with parallelism 5 and a flow-control key: the cap holds across all.
      await c.queue({ queueName: 'gq' }).upsert({ parallelism: 5 });
      for (let i = 0; i < 4; i++) await c.publishJSON({ url: `${a.url}/g`, body: { i } });
      for (let i = 4; i < 8; i++) await c.queue({ queueName: 'gq' }).enqueueJSON({ url: `${b.url}/g`, body: { i } });
      for (let i = 8; i < 10; i++) await c.publishJSON({ url: `${b.url}/f`, body: { i }, flowControl: { key: 'gfk', parallelism: 5 } });
      const busy = await until(async () => {
        const g = await c.flowControl.getGlobalParallelism();
        return g.parallelismCount === 3 ? g : null;
      }, 5000, 'three in flight');
      assert.equal(busy.parallelismMax, 3);
      await until(() => a.deliveries.length + b.deliveries.length === 10, 10_000, 'ten deliveries');
      assert.equal(max, 3, 'the cap was reached and never exceeded');
      await until(async () => (await c.flowControl.getGlobalParallelism()).parallelismCount === 0, 5000, 'idle');
      assert.equal((await api('/v2/globalParallelism', { method: 'POST' })).status, 405);
    } finally { await a.close(); await b.close(); }
  });

  it('a cancelled message waiting for a global slot is not delivered and frees its flow-control slot', async () => {
    const e = await fresh();
    try {
      const release: (() => void)[] = [];
      e.handler = (_d, res) => { release.push(() => { res.writeHead(200); res.end(); }); };
      for (let i = 0; i < 3; i++) await c.publishJSON({ url: `${e.url}/hold`, body: { i } });
      await e.waitFor(3);
      const w = await c.publishJSON({ url: `${e.url}/wait`, body: { i: 3 }, flowControl: { key: 'gwait', parallelism: 1 } });
      await sleep(100);
      assert.equal((await c.flowControl.get('gwait')).parallelismCount, 1, 'past its flow-control gate, waiting for a global slot');
      assert.deepEqual(await c.messages.cancel(w.messageId), { cancelled: 1 });
      assert.equal((await c.flowControl.get('gwait')).parallelismCount, 0);
      for (const r of release.splice(0)) r();
      e.handler = (_d, res) => { res.writeHead(200); res.end(); };
      await sleep(200);
      assert.equal(e.deliveries.length, 3);
      assert.deepEqual(await statesOf(c, w.messageId), ['CREATED', 'CANCEL_REQUESTED', 'CANCELLED']);
    } finally { await e.close(); }
  });
});

describe('Upstash-Timeout', () => {
  it('cuts off a destination that keeps trickling its response', async () => {
    const e = await fresh();
    try {
      const timers: NodeJS.Timeout[] = [];
      e.handler = (_d, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        timers.push(setInterval(() => res.write('.'), 100));
      };
      const r = await c.publishJSON({ url: `${e.url}/trickle`, body: 1, retries: 0, timeout: 1 });
      await until(async () => (await statesOf(c, r.messageId)).includes('FAILED'), 5000, 'FAILED');
      for (const t of timers) clearInterval(t);
      const ev = (await c.logs({ filter: { messageId: r.messageId } })).events;
      const active = ev.find((x: any) => x.state === 'ACTIVE').time;
      const error = ev.find((x: any) => x.state === 'ERROR');
      assert.match(error.error, /timed out after 1000ms/);
      assert.ok(error.time - active >= 950 && error.time - active < 1800, `cut off after ${error.time - active}ms`);
    } finally { await e.close(); }
  });
});
