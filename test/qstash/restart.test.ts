/**
 * Durability: a delayed message due while the server was down is delivered after it comes
 * back, a schedule, queue and URL group survive a restart, a message in flight at a SIGKILL is
 * delivered again, and the signing keys and generated token are kept. Also the dev-credentials
 * switch.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startQ, endpoint, client, keysOf, until, statesOf, sleep, type QServer } from './helpers.js';

describe('qstash restart', () => {
  it('delayed message, schedule, queue, URL group and keys survive a restart', async () => {
    let srv: QServer = await startQ();
    const dir = srv.dir;
    const keys = await keysOf(srv.base);
    const ep = await endpoint(keys);
    try {
      let c = await client(srv.base);
      const r = await c.publishJSON({ url: `${ep.url}/delayed`, body: { d: 1 }, delay: 2 });
      const sid = (await c.schedules.create({ destination: `${ep.url}/cron`, cron: '0 0 1 1 *' })).scheduleId;
      const next = (await c.schedules.get(sid)).nextScheduleTime;
      await c.queue({ queueName: 'kept' }).upsert({ parallelism: 3 });
      await c.urlGroups.addEndpoints({ name: 'keptgroup', endpoints: [{ url: `${ep.url}/g` }] });
      await srv.stop();
      await sleep(2500); // the message falls due while the server is down
      assert.equal(ep.deliveries.length, 0);
      srv = await startQ({ dir, httpPort: srv.httpPort });
      c = await client(srv.base);
      assert.deepEqual(await keysOf(srv.base), keys);
      const [d] = await ep.waitFor(1, 5000);
      assert.equal(d.path, '/delayed');
      assert.equal(d.verified, true);
      assert.equal(d.headers['upstash-message-id'], r.messageId);
      await until(async () => (await statesOf(c, r.messageId)).join() === 'CREATED,ACTIVE,DELIVERED', 5000, 'DELIVERED after restart');
      const s = await c.schedules.get(sid);
      assert.equal(s.nextScheduleTime, next);
      assert.equal(s.cron, '0 0 1 1 *');
      assert.equal((await c.queue({ queueName: 'kept' }).get()).parallelism, 3);
      assert.equal((await c.urlGroups.get('keptgroup')).endpoints[0].url, `${ep.url}/g`);
    } finally {
      await ep.close();
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a message in flight at SIGKILL is delivered again', async () => {
    let srv: QServer = await startQ();
    const dir = srv.dir;
    const ep = await endpoint(await keysOf(srv.base));
    try {
      let c = await client(srv.base);
      ep.handler = () => { /* hold the first attempt open */ };
      const r = await c.publishJSON({ url: `${ep.url}/inflight`, body: 'x' });
      await ep.waitFor(1);
      await sleep(100);
      await srv.stop('SIGKILL');
      ep.handler = (_d, res) => { res.writeHead(200); res.end('ok'); };
      srv = await startQ({ dir, httpPort: srv.httpPort });
      c = await client(srv.base);
      const ds = await ep.waitFor(2, 5000);
      assert.equal(ds[1].headers['upstash-message-id'], r.messageId);
      assert.equal(ds[1].verified, true);
      await until(async () => (await statesOf(c, r.messageId)).at(-1) === 'DELIVERED', 5000, 'DELIVERED after SIGKILL');
    } finally {
      await ep.close();
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a queue message waiting for its retry keeps the queue blocked across a restart', async () => {
    let srv: QServer = await startQ();
    const dir = srv.dir;
    const ep = await endpoint(await keysOf(srv.base));
    try {
      let c = await client(srv.base);
      ep.handler = (d, res) => {
        const first = JSON.parse(d.body).i === 0 && d.headers['upstash-retried'] === '0';
        res.writeHead(first ? 500 : 200);
        res.end();
      };
      const q = c.queue({ queueName: 'rq' });
      await q.upsert({ parallelism: 1 });
      const a = await q.enqueueJSON({ url: `${ep.url}/r`, body: { i: 0 }, retries: 2, retryDelay: '1500' });
      await until(async () => (await statesOf(c, a.messageId)).includes('RETRY'), 5000, 'RETRY');
      for (let i = 1; i < 3; i++) await q.enqueueJSON({ url: `${ep.url}/r`, body: { i } });
      await srv.stop();
      srv = await startQ({ dir, httpPort: srv.httpPort });
      c = await client(srv.base);
      const ds = await ep.waitFor(4, 8000);
      assert.deepEqual(ds.map((d) => JSON.parse(d.body).i), [0, 0, 1, 2]);
      assert.ok(ds[1].at - ds[0].at >= 1400, 'the retry kept its delay');
      assert.equal(ep.maxConcurrent, 1);
    } finally {
      await ep.close();
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--qstash-dev-credentials serves the dev server token and keys; a generated token is kept', async () => {
    const dev = await startQ({ args: ['--qstash-dev-credentials', 'yes'] });
    try {
      const DEV = 'eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=';
      assert.deepEqual(await keysOf(dev.base, DEV), { current: 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r', next: 'sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs' });
      for (let i = 0; i < 100 && !/QSTASH_TOKEN=eyJVc2VySUQi/.test(dev.output()); i++) await new Promise((r) => setTimeout(r, 30));
      assert.match(dev.output(), /QSTASH_TOKEN=eyJVc2VySUQi/);
    } finally {
      await dev.stop();
      fs.rmSync(dev.dir, { recursive: true, force: true });
    }
    let gen = await startQ({ args: [] });
    const dir = gen.dir;
    // The start-up lines are printed just after the ports open: wait for them.
    const printed = async (g: QServer) => {
      for (let i = 0; i < 100 && !/QSTASH_TOKEN=\S+\s/.test(g.output()); i++) await new Promise((r) => setTimeout(r, 30));
      return /QSTASH_TOKEN=(\S+)/.exec(g.output());
    };
    try {
      const m = await printed(gen);
      assert.ok(m);
      const keys = await keysOf(gen.base, m[1]);
      assert.match(keys.current, /^sig_/);
      await gen.stop();
      gen = await startQ({ dir, args: [] });
      assert.equal((await printed(gen))?.[1], m[1]);
      assert.deepEqual(await keysOf(gen.base, m[1]), keys);
    } finally {
      await gen.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('qstash log retention', () => {
  it('events older than --qstash-log-retention are pruned', async () => {
    let srv: QServer = await startQ();
    const dir = srv.dir;
    const ep = await endpoint(await keysOf(srv.base));
    try {
      let c = await client(srv.base);
      const old = await c.publishJSON({ url: `${ep.url}/old`, body: 1 });
      await until(async () => (await statesOf(c, old.messageId)).includes('DELIVERED'), 5000, 'DELIVERED');
      await srv.stop();
      await sleep(1200);
      srv = await startQ({ dir, httpPort: srv.httpPort, args: ['--qstash-token', 'test-qstash-token', '--qstash-log-retention', '1'] });
      c = await client(srv.base);
      const fresh = await c.publishJSON({ url: `${ep.url}/new`, body: 2 });
      await until(async () => (await statesOf(c, fresh.messageId)).includes('DELIVERED'), 5000, 'new DELIVERED');
      assert.deepEqual(await statesOf(c, old.messageId), []);
      assert.equal((await c.logs({ filter: { url: `${ep.url}/old` } })).events.length, 0);
    } finally {
      await ep.close();
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
