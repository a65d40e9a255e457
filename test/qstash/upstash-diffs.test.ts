/**
 * QStash differences from the real service found with the official SDK (issue 20): header
 * names as the service shows them (Go's canonical form, `Test-Header`) in messages, schedules,
 * logs, the DLQ and callbacks; a schedule without a body has no body field; /v2/events with
 * repeated url filters (OR-ed), host and path.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startQ, endpoint, client, keysOf, until, QTOKEN, type QServer, type Endpoint } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let c: any;
let ep: Endpoint;
const auth = { authorization: `Bearer ${QTOKEN}` };

before(async () => {
  srv = await startQ();
  c = await client(srv.base);
  ep = await endpoint(await keysOf(srv.base));
});
after(async () => {
  await ep.close();
  await srv.stop();
});

async function get(path: string): Promise<any> {
  return (await fetch(`${srv.base}${path}`, { headers: auth })).json();
}

describe('header names as the service shows them', () => {
  it('messages, logs, the DLQ and the failure callback show Test-Header, not test-header', async () => {
    const e = await endpoint(await keysOf(srv.base));
    const cb = await endpoint(await keysOf(srv.base));
    try {
      e.handler = (d, res) => {
        if (d.path.startsWith('/later')) { res.writeHead(200); res.end(); return; }
        res.writeHead(500, { 'x-reason': 'down' }); res.end('no');
      };
      const later = await c.publishJSON({ url: `${e.url}/later`, body: 1, delay: 3600, headers: { 'test-header': 'v1' } });
      const m = await get(`/v2/messages/${later.messageId}`);
      assert.deepEqual(m.header['Test-Header'], ['v1']);
      assert.equal(m.header['test-header'], undefined);
      await c.messages.cancel(later.messageId);

      const r = await c.publishJSON({ url: `${e.url}/fail`, body: 2, retries: 0, headers: { 'x-my-thing': 'v2' }, failureCallback: `${cb.url}/fcb` });
      const [f] = await cb.waitFor(1);
      const fb = JSON.parse(f.body);
      assert.deepEqual(fb.sourceHeader['X-My-Thing'], ['v2']);
      assert.deepEqual(fb.header['X-Reason'], ['down']);
      const dm = await until(async () => (await c.dlq.listMessages({ filter: { url: `${e.url}/fail` } })).messages[0], 5000, 'DLQ entry');
      assert.deepEqual(dm.header['X-My-Thing'], ['v2']);
      assert.deepEqual(dm.responseHeader['X-Reason'], ['down']);
      const created = (await c.logs({ filter: { messageIds: [r.messageId] } })).events ?? (await get(`/v2/events?messageId=${r.messageId}`)).events;
      const withHeader = created.filter((x: any) => x.header !== undefined);
      assert.ok(withHeader.length > 0 && withHeader.every((x: any) => x.header['X-My-Thing']?.[0] === 'v2'), JSON.stringify(withHeader[0]?.header));
      const err = created.find((x: any) => x.state === 'ERROR');
      assert.deepEqual(err.responseHeaders['X-Reason'], ['down']);
    } finally {
      await e.close();
      await cb.close();
    }
  });

  it('schedules: headers canonical, and no body field when created without a body', async () => {
    const withBody = await c.schedules.create({ destination: `${ep.url}/s`, cron: '0 0 1 1 *', body: 'hi', headers: { 'test-header': 'x' } });
    const noBody = await c.schedules.create({ destination: `${ep.url}/s`, cron: '0 0 1 1 *' });
    const a = await get(`/v2/schedules/${withBody.scheduleId}`);
    const b = await get(`/v2/schedules/${noBody.scheduleId}`);
    assert.equal(a.body, 'hi');
    assert.deepEqual(a.header['Test-Header'], ['x']);
    assert.equal('body' in b, false, JSON.stringify(b));
    assert.equal('bodyBase64' in b, false);
    const listed = (await c.schedules.list()).find((s: any) => s.scheduleId === noBody.scheduleId);
    assert.equal('body' in listed, false);
    await c.schedules.delete(withBody.scheduleId);
    await c.schedules.delete(noBody.scheduleId);
  });
});

describe('GET /v2/events filters', () => {
  it('repeated url filters are OR-ed; host and path match the destination', async () => {
    const urls = [`${ep.url}/ev/a`, `${ep.url}/ev/b`, `${ep.url}/ev/c`];
    const ids: string[] = [];
    for (const url of urls) ids.push((await c.publishJSON({ url, body: 'x' })).messageId);
    await ep.waitFor(3);
    const delivered = async (q: string) => {
      const r = await get(`/v2/events?state=DELIVERED&${q}`);
      return new Set(r.events.map((x: any) => x.messageId));
    };
    await until(async () => (await delivered(`url=${encodeURIComponent(urls[2])}`)).size === 1, 5000, 'delivered');
    assert.deepEqual(await delivered(`url=${encodeURIComponent(urls[0])}&url=${encodeURIComponent(urls[1])}`), new Set([ids[0], ids[1]]));
    const host = new URL(ep.url).host;
    assert.ok((await delivered(`host=${host}`)).size >= 3);
    assert.deepEqual(await delivered('host=nosuch.example'), new Set());
    assert.deepEqual(await delivered('path=/ev/b'), new Set([ids[1]]));
    assert.deepEqual(await delivered(`path=/ev/b&path=/ev/c&host=${host}`), new Set([ids[1], ids[2]]));
    // The SDK's logs() sends the same filters.
    const viaSdk = await c.logs({ filter: { url: [urls[0], urls[2]], state: 'DELIVERED' } });
    assert.deepEqual(new Set(viaSdk.logs.map((x: any) => x.messageId)), new Set([ids[0], ids[2]]));
  });
});
