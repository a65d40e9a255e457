/**
 * Bulk delete, cancel and retry endpoints never widen a misspelt filter to "everything": an
 * unknown query parameter is a 400 naming it, and nothing is removed. `count` bounds a call.
 * Driven with plain fetch (the typo cases: no SDK sends them) and the unmodified SDK.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startQ, endpoint, client, keysOf, until, QTOKEN, type QServer, type Endpoint } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let c: any;
let ep: Endpoint;
const h = { authorization: `Bearer ${QTOKEN}` };

before(async () => {
  srv = await startQ();
  c = await client(srv.base);
  ep = await endpoint(await keysOf(srv.base));
  ep.handler = (_d, res) => { res.writeHead(400); res.end('no'); };
});
after(async () => {
  await ep.close();
  await srv.stop();
});

async function call(method: string, path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${srv.base}${path}`, { method, headers: h });
  const text = await r.text();
  return { status: r.status, body: text === '' ? null : JSON.parse(text) };
}

async function dlqCount(url: string): Promise<number> {
  return (await c.dlq.listMessages({ filter: { url }, count: 1000 })).messages.length;
}

describe('DLQ', () => {
  it('an unknown filter name is a 400 that names it, and deletes or retries nothing', async () => {
    const url = `${ep.url}/dlq-typo`;
    for (let i = 0; i < 3; i++) await c.publishJSON({ url, body: i, retries: 0 });
    await until(async () => (await dlqCount(url)) === 3, 10000, 'three DLQ entries');
    for (const [method, path] of [
      ['DELETE', '/v2/dlq?labeel=x&count=100'], ['DELETE', '/v2/dlq?labeel=x'], ['POST', '/v2/dlq/retry?urll=x'],
      ['GET', '/v2/dlq?qeueName=x'], ['DELETE', '/v2/dlq?host=example.com'], ['DELETE', '/v2/dlq?path=/x'],
    ]) {
      const r = await call(method, path);
      assert.equal(r.status, 400, `${method} ${path}`);
      const name = path.slice(path.indexOf('?') + 1).split('=')[0];
      assert.match(r.body.error, new RegExp(`unknown query parameter .*: ${name} `), `${method} ${path}`);
    }
    assert.equal(await dlqCount(url), 3);
  });

  it('all: count bounds each call and the cursor walks the rest (SDK)', async () => {
    const url = `${ep.url}/dlq-count`;
    for (let i = 0; i < 3; i++) await c.publishJSON({ url, body: i, retries: 0 });
    await until(async () => (await dlqCount(url)) === 3, 10000, 'three DLQ entries');
    const r = await c.dlq.delete({ filter: { url }, count: 2 });
    assert.equal(r.deleted, 2);
    assert.equal(await dlqCount(url), 1);
    assert.equal((await c.dlq.delete({ filter: { url } })).deleted, 1);
    assert.equal(await dlqCount(url), 0);
  });
});

describe('messages', () => {
  async function publishDelayed(url: string, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await c.publishJSON({ url, body: i, delay: 3600 })).messageId);
    return ids;
  }
  const alive = async (ids: string[]) => {
    let n = 0;
    for (const id of ids) if ((await call('GET', `/v2/messages/${id}`)).status === 200) n++;
    return n;
  };

  it('an unknown filter name is a 400 and cancels nothing', async () => {
    const ids = await publishDelayed(`${ep.url}/m-typo`, 3);
    for (const path of ['/v2/messages?labeel=x', '/v2/messages?urll=x&count=1', '/v2/messages?dlqIds=x', '/v2/messages?responseStatus=500']) {
      const r = await call('DELETE', path);
      assert.equal(r.status, 400, path);
      assert.match(r.body.error, /unknown query parameter/);
    }
    assert.equal(await alive(ids), 3);
    assert.equal((await call('DELETE', `/v2/messages?count=zero`)).status, 400);
    assert.equal(await alive(ids), 3);
    await c.messages.cancel(ids);
  });

  it('a filter with count cancels at most count; the SDK filter form cancels the matching ones only', async () => {
    const url = `${ep.url}/m-count`;
    const ids = await publishDelayed(url, 3);
    const other = await publishDelayed(`${ep.url}/m-other`, 1);
    const r = await call('DELETE', `/v2/messages?url=${encodeURIComponent(url)}&count=2`);
    assert.deepEqual([r.status, r.body], [200, { cancelled: 2 }]);
    assert.equal(await alive(ids), 1);
    assert.deepEqual(await c.messages.cancel({ filter: { url } }), { cancelled: 1 });
    assert.equal(await alive(ids), 0);
    assert.equal(await alive(other), 1);
    const host = new URL(ep.url).host;
    assert.deepEqual((await call('DELETE', `/v2/messages?host=nosuch.example&path=/m-other`)).body, { cancelled: 0 });
    assert.deepEqual((await call('DELETE', `/v2/messages?host=${host}&path=/m-other`)).body, { cancelled: 1 });
    assert.equal(await alive(other), 0);
  });

  it('fromDate/toDate bound a filtered cancel', async () => {
    const url = `${ep.url}/m-dates`;
    const ids = await publishDelayed(url, 2);
    const future = Date.now() + 3_600_000;
    assert.deepEqual((await call('DELETE', `/v2/messages?url=${encodeURIComponent(url)}&fromDate=${future}`)).body, { cancelled: 0 });
    assert.equal((await call('DELETE', `/v2/messages?url=${encodeURIComponent(url)}&toDate=soon`)).status, 400);
    assert.equal(await alive(ids), 2);
    assert.deepEqual((await call('DELETE', `/v2/messages?url=${encodeURIComponent(url)}&toDate=${future}`)).body, { cancelled: 2 });
  });
});

describe('workflow runs, workflow DLQ and schedules', () => {
  it('unknown filter names are a 400', async () => {
    for (const [method, path] of [
      ['DELETE', '/v2/workflows/runs?workflowUrll=x'], ['DELETE', '/v2/workflows/runs?labeel=x&count=5'],
      ['DELETE', '/v2/workflows/dlq?labeel=x'], ['POST', '/v2/workflows/dlq/restart?labeel=x'],
      ['POST', '/v2/workflows/dlq/resume?workflowRunid=x'], ['GET', '/v2/dlq?source=workflow&labeel=x'],
      ['DELETE', '/v2/dlq?source=workflow&labeel=x'],
    ]) {
      const r = await call(method, path);
      assert.equal(r.status, 400, `${method} ${path}`);
      assert.match(r.body.error, /unknown query parameter/, `${method} ${path}`);
    }
    assert.equal((await call('DELETE', '/v2/workflows/runs?count=0')).status, 400);
    const ok = await call('DELETE', '/v2/workflows/runs?workflowUrl=http://nosuch.example/&label=x&host=nosuch.example');
    assert.deepEqual([ok.status, ok.body], [200, { cancelled: 0 }]);
  });

  it('schedules have no bulk delete: DELETE /v2/schedules is refused and removes nothing', async () => {
    const id = await c.schedules.create({ destination: `${ep.url}/sched`, cron: '0 0 1 1 *' });
    assert.equal((await call('DELETE', '/v2/schedules')).status, 405);
    assert.equal((await call('DELETE', '/v2/schedules?labeel=x')).status, 405);
    assert.equal((await call('GET', `/v2/schedules/${id.scheduleId}`)).status, 200);
    await c.schedules.delete(id.scheduleId);
  });
});
