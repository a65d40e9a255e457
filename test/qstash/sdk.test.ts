/**
 * The unmodified @upstash/qstash SDK against our server, with deliveries to local HTTP endpoints
 * whose every request is signature-verified with the SDK's Receiver. Retry delays are small.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startQ, endpoint, client, keysOf, until, statesOf, sleep, QTOKEN, type QServer, type Endpoint } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let c: any;
let ep: Endpoint;
let keys: { current: string; next: string };

before(async () => {
  srv = await startQ();
  c = await client(srv.base);
  keys = await keysOf(srv.base);
  ep = await endpoint(keys);
});
after(async () => {
  await ep.close();
  await srv.stop();
});

function fresh(): Promise<Endpoint> {
  return endpoint(keys);
}

describe('publish and delivery', () => {
  it('publishJSON: body, method, forwarded headers, raw // and query, signature, ids', async () => {
    const e = await fresh();
    try {
      const url = `${e.url}/a//b?x=1&y=%2F`;
      const r = await c.publishJSON({ url, body: { hello: 'world' }, headers: { 'x-custom': 'v1' }, method: 'PUT' });
      assert.match(r.messageId, /^msg_/);
      assert.equal(r.url, url);
      const [d] = await e.waitFor(1);
      assert.equal(d.method, 'PUT');
      assert.equal(d.path, '/a//b?x=1&y=%2F');
      assert.equal(d.body, '{"hello":"world"}');
      assert.equal(d.headers['x-custom'], 'v1');
      assert.equal(d.headers['content-type'], 'application/json');
      assert.equal(d.headers['upstash-message-id'], r.messageId);
      assert.equal(d.headers['upstash-retried'], '0');
      assert.equal(d.verified, true);
      await until(async () => (await statesOf(c, r.messageId)).join() === 'CREATED,ACTIVE,DELIVERED', 5000, 'DELIVERED');
    } finally { await e.close(); }
  });

  it('publish raw bytes and a wrong-key receiver rejects the signature', async () => {
    const e = await fresh();
    try {
      await c.publish({ url: `${e.url}/raw`, body: 'plain text', headers: { 'content-type': 'text/plain' } });
      const [d] = await e.waitFor(1);
      assert.equal(d.body, 'plain text');
      assert.equal(d.headers['content-type'], 'text/plain');
      assert.equal(d.verified, true);
      const { Receiver } = await (await import('./sdk.js')).loadSdk();
      const bad = new Receiver({ currentSigningKey: 'sig_wrong1', nextSigningKey: 'sig_wrong2' });
      await assert.rejects(bad.verify({ signature: String(d.headers['upstash-signature']), body: d.body }));
      const good = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
      await assert.rejects(good.verify({ signature: String(d.headers['upstash-signature']), body: 'tampered' }));
    } finally { await e.close(); }
  });

  it('batchJSON publishes every item', async () => {
    const e = await fresh();
    try {
      const r = await c.batchJSON([{ url: `${e.url}/1`, body: { n: 1 } }, { url: `${e.url}/2`, body: { n: 2 }, headers: { 'x-h': 'two' } }]);
      assert.equal(r.length, 2);
      assert.notEqual(r[0].messageId, r[1].messageId);
      const ds = await e.waitFor(2);
      const byPath = Object.fromEntries(ds.map((d) => [d.path, d]));
      assert.equal(byPath['/1'].body, '{"n":1}');
      assert.equal(byPath['/2'].headers['x-h'], 'two');
      assert.ok(ds.every((d) => d.verified === true));
    } finally { await e.close(); }
  });

  it('delay, messages.get and cancel', async () => {
    const e = await fresh();
    try {
      const r = await c.publishJSON({ url: `${e.url}/later`, body: { x: 1 }, delay: 60, label: 'lbl' });
      const m = await c.messages.get(r.messageId);
      assert.equal(m.messageId, r.messageId);
      assert.equal(m.url, `${e.url}/later`);
      assert.equal(m.body, '{"x":1}');
      assert.ok(m.notBefore >= m.createdAt + 59_000);
      assert.deepEqual(m.labels, ['lbl']);
      assert.deepEqual(await c.messages.cancel(r.messageId), { cancelled: 1 });
      await assert.rejects(c.messages.get(r.messageId), (err: any) => err.status === 404);
      await assert.rejects(c.messages.cancel(r.messageId), (err: any) => err.status === 404);
      assert.deepEqual(await statesOf(c, r.messageId), ['CREATED', 'CANCEL_REQUESTED', 'CANCELLED']);
      // Bulk cancel by label.
      const a = await c.publishJSON({ url: `${e.url}/l1`, body: 1, delay: 60, label: 'bulk' });
      await c.publishJSON({ url: `${e.url}/l2`, body: 2, delay: 60, label: 'bulk' });
      const keep = await c.publishJSON({ url: `${e.url}/l3`, body: 3, delay: 60, label: 'other' });
      assert.deepEqual(await c.messages.cancel({ filter: { label: 'bulk' } }), { cancelled: 2 });
      await assert.rejects(c.messages.get(a.messageId));
      assert.equal((await c.messages.get(keep.messageId)).messageId, keep.messageId);
      assert.deepEqual(await c.messages.cancel([keep.messageId]), { cancelled: 1 });
      assert.equal(e.deliveries.length, 0);
    } finally { await e.close(); }
  });

  it('Upstash-Not-Before in the past and a short delay are delivered', async () => {
    const e = await fresh();
    try {
      const t0 = Date.now();
      await c.publishJSON({ url: `${e.url}/d`, body: 1, delay: '1s' });
      await c.publishJSON({ url: `${e.url}/nb`, body: 2, notBefore: Math.floor(Date.now() / 1000) - 10 });
      const ds = await e.waitFor(2, 5000);
      const d = ds.find((x) => x.path === '/d')!;
      assert.ok(d.at - t0 >= 950, `delayed by ${d.at - t0}ms`);
    } finally { await e.close(); }
  });

  it('redact: logs and message views hide the body and named headers, the delivery has them', async () => {
    const e = await fresh();
    try {
      const r = await c.publishJSON({ url: `${e.url}/secret`, body: { pw: 'hunter2' }, headers: { 'x-secret': 's', 'x-open': 'o' }, delay: 1, redact: { body: true, header: ['x-secret'] } });
      const m = await c.messages.get(r.messageId);
      assert.match(m.body, /^REDACTED:[0-9a-f]{64}$/);
      assert.match(m.header['X-Secret'][0], /^REDACTED:/);
      assert.deepEqual(m.header['X-Open'], ['o']);
      const [d] = await e.waitFor(1, 5000);
      assert.equal(d.body, '{"pw":"hunter2"}');
      assert.equal(d.headers['x-secret'], 's');
      const ev = (await c.logs({ filter: { messageId: r.messageId } })).events[0];
      assert.match(Buffer.from(ev.body, 'base64').toString(), /^REDACTED:/);
    } finally { await e.close(); }
  });

  it('deduplication id and content-based deduplication', async () => {
    const e = await fresh();
    try {
      const a = await c.publishJSON({ url: `${e.url}/dd`, body: 1, deduplicationId: 'd-1' });
      const b = await c.publishJSON({ url: `${e.url}/dd`, body: 1, deduplicationId: 'd-1' });
      assert.equal(b.messageId, a.messageId);
      assert.equal(b.deduplicated, true);
      const x = await c.publishJSON({ url: `${e.url}/cb`, body: { k: 1 }, contentBasedDeduplication: true });
      const y = await c.publishJSON({ url: `${e.url}/cb`, body: { k: 1 }, contentBasedDeduplication: true });
      const z = await c.publishJSON({ url: `${e.url}/cb`, body: { k: 2 }, contentBasedDeduplication: true });
      assert.equal(y.messageId, x.messageId);
      assert.notEqual(z.messageId, x.messageId);
      await e.waitFor(3);
      await sleep(200);
      assert.equal(e.deliveries.length, 3);
    } finally { await e.close(); }
  });
});

describe('retries, DLQ and callbacks', () => {
  it('retries a failing endpoint, then DLQ and failure callback; event sequence', async () => {
    const e = await fresh();
    const cb = await fresh();
    try {
      e.handler = (_d, res) => { res.writeHead(500); res.end('boom'); };
      const r = await c.publishJSON({ url: `${e.url}/fail`, body: { f: 1 }, retries: 1, retryDelay: '100 * (retried + 1)', failureCallback: `${cb.url}/failed` });
      const ds = await e.waitFor(2);
      assert.deepEqual(ds.map((d) => d.headers['upstash-retried']), ['0', '1']);
      assert.ok(ds[1].at - ds[0].at >= 90);
      const [f] = await cb.waitFor(1);
      assert.equal(f.verified, true);
      const fb = JSON.parse(f.body);
      assert.equal(fb.status, 500);
      assert.equal(Buffer.from(fb.body, 'base64').toString(), 'boom');
      assert.equal(fb.sourceMessageId, r.messageId);
      assert.equal(Buffer.from(fb.sourceBody, 'base64').toString(), '{"f":1}');
      assert.equal(fb.maxRetries, 1);
      assert.ok(typeof fb.dlqId === 'string');
      await until(async () => (await statesOf(c, r.messageId)).includes('FAILED'), 5000, 'FAILED');
      assert.deepEqual(await statesOf(c, r.messageId), ['CREATED', 'ACTIVE', 'ERROR', 'RETRY', 'ACTIVE', 'ERROR', 'FAILED']);
      const errEv = (await c.logs({ filter: { messageId: r.messageId, state: 'ERROR' } })).events[0];
      assert.equal(errEv.responseStatus, 500);
      assert.equal(Buffer.from(errEv.responseBody, 'base64').toString(), 'boom');
      assert.deepEqual(errEv.responseHeaders['Transfer-Encoding'], ['chunked']);
      assert.equal(errEv.retryDelayExpression, '100 * (retried + 1)');
      assert.equal(errEv.failureCallback, `${cb.url}/failed`);

      const list = await c.dlq.listMessages({ filter: { url: `${e.url}/fail` } });
      assert.equal(list.messages.length, 1);
      const dm = list.messages[0];
      assert.equal(dm.messageId, r.messageId);
      assert.equal(dm.dlqId, fb.dlqId);
      assert.equal(dm.responseStatus, 500);
      assert.equal(dm.responseBody, 'boom');
      assert.equal(dm.body, '{"f":1}');
      // Retry from the DLQ once the endpoint works.
      e.handler = (_d, res) => { res.writeHead(200); res.end('fine'); };
      const rr = await c.dlq.retry(dm.dlqId);
      assert.equal(rr.responses.length, 1);
      assert.match(rr.responses[0].messageId, /^msg_/);
      const ds2 = await e.waitFor(3);
      assert.equal(ds2[2].body, '{"f":1}');
      assert.equal((await c.dlq.listMessages({ filter: { url: `${e.url}/fail` } })).messages.length, 0);
    } finally { await e.close(); await cb.close(); }
  });

  it('callback once the retries are exhausted; both callbacks get their own forwarded headers', async () => {
    const e = await fresh();
    const cb = await fresh();
    try {
      e.handler = (_d, res) => { res.writeHead(502); res.end('down'); };
      const r = await c.publishJSON({
        url: `${e.url}/cbfail`, body: { c: 1 }, retries: 1, retryDelay: '20', callback: `${cb.url}/c`, failureCallback: `${cb.url}/f`,
        headers: { 'Upstash-Callback-Forward-X-C': 'cc', 'Upstash-Failure-Callback-Forward-X-F': 'ff', 'x-own': 'own' },
      });
      const ds = await cb.waitFor(2);
      await sleep(200);
      assert.equal(cb.deliveries.length, 2, 'one callback (after the last attempt) and one failure callback');
      const byPath = Object.fromEntries(ds.map((d) => [d.path, d]));
      const cbody = JSON.parse(byPath['/c'].body);
      assert.equal(cbody.status, 502);
      assert.equal(cbody.retried, 1);
      assert.equal(cbody.maxRetries, 1);
      assert.equal(cbody.sourceMessageId, r.messageId);
      assert.equal(Buffer.from(cbody.body, 'base64').toString(), 'down');
      assert.equal(byPath['/c'].headers['x-c'], 'cc');
      assert.equal(byPath['/c'].headers['x-f'], undefined);
      assert.equal(byPath['/c'].headers['x-own'], undefined);
      assert.equal(byPath['/f'].headers['x-f'], 'ff');
      assert.equal(byPath['/f'].headers['x-c'], undefined);
      assert.deepEqual(JSON.parse(byPath['/f'].body).sourceHeader['X-Own'], ['own']);
      assert.ok(ds.every((d) => d.verified === true));
    } finally { await e.close(); await cb.close(); }
  });

  it('DLQ get and retry with configuration headers over the failed message', async () => {
    const e = await fresh();
    try {
      e.handler = (_d, res) => { res.writeHead(500); res.end(); };
      const r = await c.publishJSON({ url: `${e.url}/dlqover`, body: 'o', retries: 0 });
      const entry = await until(async () => (await c.dlq.listMessages({ filter: { url: `${e.url}/dlqover` } })).messages[0], 5000, 'DLQ entry');
      const h = { authorization: `Bearer ${QTOKEN}` };
      const got = await fetch(`${srv.base}/v2/dlq/${entry.dlqId}`, { headers: h });
      assert.equal(got.status, 200);
      assert.equal((await got.json() as any).messageId, r.messageId);
      assert.equal((await fetch(`${srv.base}/v2/dlq/nosuch`, { headers: h })).status, 404);
      assert.equal((await fetch(`${srv.base}/v2/dlq/retry/nosuch`, { method: 'POST', headers: h })).status, 404);
      assert.equal((await fetch(`${srv.base}/v2/dlq/retry/${entry.dlqId}`, { method: 'POST', headers: { ...h, 'upstash-retries': 'many' } })).status, 400);
      const rr = await fetch(`${srv.base}/v2/dlq/retry/${entry.dlqId}`, { method: 'POST', headers: { ...h, 'upstash-retries': '2', 'upstash-retry-delay': '30' } });
      assert.equal(rr.status, 201);
      const { messageId } = await rr.json() as { messageId: string };
      await e.waitFor(4);
      const next = await until(async () => (await c.dlq.listMessages({ filter: { url: `${e.url}/dlqover` } })).messages[0], 5000, 'DLQ entry again');
      assert.equal(next.messageId, messageId);
      assert.equal(next.maxRetries, 2);
      assert.deepEqual(e.deliveries.map((d) => d.headers['upstash-retried']), ['0', '0', '1', '2']);
    } finally { await e.close(); }
  });

  it('DLQ delete (single, bulk) and cursors', async () => {
    const e = await fresh();
    try {
      e.handler = (_d, res) => { res.writeHead(400); res.end('no'); };
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await c.publishJSON({ url: `${e.url}/dq`, body: i, retries: 0 })).messageId);
      const all = await until(async () => {
        const l = await c.dlq.listMessages({ filter: { url: `${e.url}/dq` } });
        return l.messages.length === 3 ? l : null;
      }, 5000, 'three DLQ entries');
      const p1 = await c.dlq.listMessages({ filter: { url: `${e.url}/dq` }, count: 2 });
      assert.equal(p1.messages.length, 2);
      assert.ok(p1.cursor);
      const p2 = await c.dlq.listMessages({ filter: { url: `${e.url}/dq` }, count: 2, cursor: p1.cursor });
      assert.equal(p2.messages.length, 1);
      assert.ok(!p2.cursor);
      assert.deepEqual(new Set([...p1.messages, ...p2.messages].map((m: any) => m.messageId)), new Set(ids));
      assert.deepEqual(await c.dlq.delete(all.messages[0].dlqId), { deleted: 1 });
      const r = await c.dlq.delete({ filter: { url: `${e.url}/dq` } });
      assert.equal(r.deleted, 2);
      assert.equal((await c.dlq.listMessages({ filter: { url: `${e.url}/dq` } })).messages.length, 0);
    } finally { await e.close(); }
  });

  it('callback on success carries status, body and source', async () => {
    const e = await fresh();
    const cb = await fresh();
    try {
      e.handler = (_d, res) => { res.writeHead(201, { 'x-reply': 'r' }); res.end('created!'); };
      const r = await c.publishJSON({ url: `${e.url}/ok`, body: { a: 1 }, callback: `${cb.url}/cb` });
      const [d] = await cb.waitFor(1);
      const b = JSON.parse(d.body);
      assert.equal(b.status, 201);
      assert.equal(Buffer.from(b.body, 'base64').toString(), 'created!');
      assert.deepEqual(b.header['X-Reply'], ['r']);
      assert.equal(b.sourceMessageId, r.messageId);
      assert.equal(b.retried, 0);
      assert.equal(d.verified, true);
      // Callback options and forwarded headers: the callback gets its own headers and retries.
      cb.handler = (_d, res) => { res.writeHead(500); res.end(); };
      await c.publishJSON({
        url: `${e.url}/ok2`, body: 2, callback: `${cb.url}/cb2`,
        headers: { 'Upstash-Callback-Forward-X-Cb': 'yes', 'Upstash-Callback-Retries': '1', 'Upstash-Callback-Retry-Delay': '20', 'Upstash-Callback-Method': 'PUT' },
      });
      const ds = await cb.waitFor(3);
      await sleep(300);
      assert.equal(cb.deliveries.length, 3, 'one attempt plus one retry');
      assert.equal(ds[1].headers['x-cb'], 'yes');
      assert.equal(ds[1].method, 'PUT');
      assert.deepEqual(ds.slice(1).map((x) => x.headers['upstash-retried']), ['0', '1']);
    } finally { await e.close(); await cb.close(); }
  });

  it('429 with Retry-After waits that long', async () => {
    const e = await fresh();
    try {
      let n = 0;
      e.handler = (_d, res) => { if (n++ === 0) { res.writeHead(429, { 'retry-after': '1' }); res.end(); } else { res.writeHead(200); res.end(); } };
      await c.publishJSON({ url: `${e.url}/ra`, body: 1, retries: 2, retryDelay: '10' });
      const ds = await e.waitFor(2, 5000);
      assert.ok(ds[1].at - ds[0].at >= 950, `gap ${ds[1].at - ds[0].at}`);
    } finally { await e.close(); }
  });

  it('timeout, unreachable destination: errors, retried, logged', async () => {
    const e = await fresh();
    try {
      e.handler = () => { /* never answers */ };
      const r = await c.publishJSON({ url: `${e.url}/hang`, body: 1, retries: 0, timeout: 1 });
      const u = await c.publishJSON({ url: 'http://127.0.0.1:1/nothing', body: 1, retries: 1, retryDelay: '50' });
      await until(async () => (await statesOf(c, r.messageId)).includes('FAILED'), 5000, 'timeout FAILED');
      await until(async () => (await statesOf(c, u.messageId)).includes('FAILED'), 5000, 'unreachable FAILED');
      const errs = (await c.logs({ filter: { messageId: u.messageId, state: 'ERROR' } })).events;
      assert.equal(errs.length, 2);
      assert.ok(errs[0].error.length > 0);
      const te = (await c.logs({ filter: { messageId: r.messageId, state: 'ERROR' } })).events[0];
      assert.match(te.error, /timed out/);
      assert.equal(te.timeout, 1000);
      // A name that does not resolve is a delivery error too.
      const dns = await c.publishJSON({ url: 'http://no-such-host.invalid/x', body: 1, retries: 0, timeout: 5 });
      await until(async () => (await statesOf(c, dns.messageId)).includes('FAILED'), 8000, 'DNS failure FAILED');
      const de = (await c.logs({ filter: { messageId: dns.messageId, state: 'ERROR' } })).events[0];
      assert.match(de.error, /ENOTFOUND|EAI_AGAIN|getaddrinfo|timed out/);
    } finally { await e.close(); }
  });

  it('non-retryable 489 fails at once', async () => {
    const e = await fresh();
    try {
      e.handler = (_d, res) => { res.writeHead(489, { 'upstash-nonretryable-error': 'true' }); res.end('stop'); };
      const r = await c.publishJSON({ url: `${e.url}/nr`, body: 1, retries: 3, retryDelay: '10' });
      await until(async () => (await statesOf(c, r.messageId)).includes('FAILED'), 5000, 'FAILED');
      assert.equal(e.deliveries.length, 1);
    } finally { await e.close(); }
  });
});

describe('queues, URL groups, flow control, schedules, keys', () => {
  it('queue with parallelism 1: in order, never overlapping', async () => {
    const e = await fresh();
    try {
      e.handler = async (_d, res) => { await sleep(40); res.writeHead(200); res.end(); };
      const q = c.queue({ queueName: 'q1' });
      await q.upsert({ parallelism: 1 });
      for (let i = 0; i < 5; i++) await q.enqueueJSON({ url: `${e.url}/q`, body: { i } });
      const ds = await e.waitFor(5);
      assert.deepEqual(ds.map((d) => JSON.parse(d.body).i), [0, 1, 2, 3, 4]);
      assert.equal(e.maxConcurrent, 1);
      const info = await q.get();
      assert.equal(info.name, 'q1');
      assert.equal(info.parallelism, 1);
      assert.equal(info.paused, false);
      await q.pause();
      assert.equal((await q.get()).paused, true);
      await q.enqueueJSON({ url: `${e.url}/q`, body: { i: 5 } });
      await sleep(200);
      assert.equal(e.deliveries.length, 5);
      assert.equal((await q.get()).lag, 1);
      await q.resume();
      await e.waitFor(6);
      assert.ok((await c.queue().list()).some((x: any) => x.name === 'q1'));
      // Batch items can target a queue too.
      await c.batchJSON([{ url: `${e.url}/q`, body: { i: 6 }, queueName: 'q1' }]);
      await e.waitFor(7);
      // Every message of the queue logged CREATED, ACTIVE and DELIVERED.
      await until(async () => (await c.logs({ filter: { queueName: 'q1' } })).events.length === 7 * 3, 5000, '21 queue events');
      await q.delete();
      await assert.rejects(q.get(), (err: any) => err.status === 404);
    } finally { await e.close(); }
  });

  it('URL group fan-out', async () => {
    const a = await fresh();
    const b = await fresh();
    try {
      await c.urlGroups.addEndpoints({ name: 'grp', endpoints: [{ name: 'a', url: `${a.url}/x` }, { url: `${b.url}/y` }] });
      const g = await c.urlGroups.get('grp');
      assert.equal(g.name, 'grp');
      assert.equal(g.endpoints.length, 2);
      const r = await c.publishJSON({ urlGroup: 'grp', body: { g: 1 } });
      assert.equal(r.length, 2);
      assert.deepEqual(new Set(r.map((x: any) => x.url)), new Set([`${a.url}/x`, `${b.url}/y`]));
      const [da] = await a.waitFor(1);
      const [db] = await b.waitFor(1);
      assert.equal(da.headers['upstash-topic-name'], 'grp');
      assert.equal(da.verified, true);
      assert.equal(db.body, '{"g":1}');
      const evs = (await c.logs({ filter: { urlGroup: 'grp', state: 'DELIVERED' } })).events;
      assert.equal(evs.length, 2);
      await c.urlGroups.removeEndpoints({ name: 'grp', endpoints: [{ url: `${b.url}/y` }] });
      assert.equal((await c.urlGroups.get('grp')).endpoints.length, 1);
      assert.ok((await c.urlGroups.list()).some((x: any) => x.name === 'grp'));
      await c.urlGroups.delete('grp');
      await assert.rejects(c.urlGroups.get('grp'), (err: any) => err.status === 404);
      await assert.rejects(c.publishJSON({ urlGroup: 'grp', body: 1 }), (err: any) => err.status === 404);
    } finally { await a.close(); await b.close(); }
  });

  it('flow control parallelism 1, info, pause/resume', async () => {
    const e = await fresh();
    try {
      e.handler = async (_d, res) => { await sleep(30); res.writeHead(200); res.end(); };
      for (let i = 0; i < 4; i++) await c.publishJSON({ url: `${e.url}/fc`, body: i, flowControl: { key: 'fk1', parallelism: 1 } });
      await e.waitFor(4);
      assert.equal(e.maxConcurrent, 1);
      const info = await c.flowControl.get('fk1');
      assert.equal(info.flowControlKey, 'fk1');
      assert.equal(info.parallelismMax, 1);
      assert.equal(info.waitListSize, 0);
      await c.flowControl.pause('fk1');
      await c.publishJSON({ url: `${e.url}/fc`, body: 9, flowControl: { key: 'fk1', parallelism: 1 } });
      await sleep(150);
      assert.equal(e.deliveries.length, 4);
      const paused = await c.flowControl.get('fk1');
      assert.equal(paused.isPaused, true);
      assert.equal(paused.waitListSize, 1);
      await c.flowControl.resume('fk1');
      await e.waitFor(5);
      await until(async () => (await c.logs({ filter: { flowControlKey: 'fk1', state: 'DELIVERED' } })).events.length === 5, 5000, 'five DELIVERED for fk1');
      await c.flowControl.pin('fk1', { parallelism: 2 });
      const pinned = await c.flowControl.get('fk1');
      assert.equal(pinned.isPinnedParallelism, true);
      assert.equal(pinned.parallelismMax, 2);
      await c.flowControl.unpin('fk1', { parallelism: true });
      assert.equal((await c.flowControl.get('fk1')).isPinnedParallelism, false);
      await c.flowControl.resetRate('fk1');
      const gp = await c.flowControl.getGlobalParallelism();
      assert.equal(typeof gp.parallelismCount, 'number');
      assert.ok(gp.parallelismMax >= 1);
      const h = { authorization: `Bearer ${QTOKEN}` };
      const all = await (await fetch(`${srv.base}/v2/flowControl`, { headers: h })).json() as any[];
      assert.ok(all.some((x) => x.flowControlKey === 'fk1'));
      assert.equal((await fetch(`${srv.base}/v2/flowControl/nosuchkey`, { headers: h })).status, 404);
      assert.equal((await fetch(`${srv.base}/v2/flowControl/fk1/pin?parallelism=x`, { method: 'POST', headers: h })).status, 400);
    } finally { await e.close(); }
  });

  it('flow control rate 2 per second', async () => {
    const e = await fresh();
    try {
      for (let i = 0; i < 4; i++) await c.publishJSON({ url: `${e.url}/rate`, body: i, flowControl: { key: 'fk-rate', rate: 2, period: '1s' } });
      const ds = await e.waitFor(4, 5000);
      const t = ds.map((d) => d.at).sort((x, y) => x - y);
      assert.ok(t[2] - t[0] >= 900, `third start only ${t[2] - t[0]}ms after the first`);
    } finally { await e.close(); }
  });

  it('schedules: create, get, list, pause, resume, delete', async () => {
    const id = (await c.schedules.create({ destination: 'http://127.0.0.1:9/sched', cron: '*/5 * * * *', body: '{"s":1}', retries: 2, scheduleId: 'my-sched' })).scheduleId;
    assert.equal(id, 'my-sched');
    const s = await c.schedules.get(id);
    assert.equal(s.cron, '*/5 * * * *');
    assert.equal(s.destination, 'http://127.0.0.1:9/sched');
    assert.equal(s.retries, 2);
    assert.equal(s.isPaused, false);
    assert.equal(s.nextScheduleTime % 300_000, 0);
    assert.ok(s.nextScheduleTime > Date.now());
    assert.ok((await c.schedules.list()).some((x: any) => x.scheduleId === id));
    await c.schedules.pause({ schedule: id });
    assert.equal((await c.schedules.get(id)).isPaused, true);
    await c.schedules.resume({ schedule: id });
    assert.equal((await c.schedules.get(id)).isPaused, false);
    await c.schedules.delete(id);
    await assert.rejects(c.schedules.get(id), (err: any) => err.status === 404);
    await assert.rejects(c.schedules.create({ destination: 'http://127.0.0.1:9/x', cron: 'not a cron' }), (err: any) => err.status === 400);
  });

  it('keys and rotation; auth and bad input', async () => {
    const k = await keysOf(srv.base);
    const r = await fetch(`${srv.base}/v2/keys/rotate`, { method: 'POST', headers: { authorization: `Bearer ${QTOKEN}` } });
    const k2 = await r.json() as { current: string; next: string };
    assert.equal(k2.current, k.next);
    assert.notEqual(k2.next, k.next);
    keys = k2;
    const e = await endpoint(k2);
    try {
      await c.publishJSON({ url: `${e.url}/rot`, body: 1 });
      assert.equal((await e.waitFor(1))[0].verified, true);
    } finally { await e.close(); }
    assert.equal((await fetch(`${srv.base}/v2/keys`)).status, 401);
    assert.equal((await fetch(`${srv.base}/v2/keys`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await fetch(`${srv.base}/v2/keys?qstash_token=${QTOKEN}`)).status, 200);
    const h = { authorization: `Bearer ${QTOKEN}` };
    assert.equal((await fetch(`${srv.base}/v2/nosuch`, { headers: h })).status, 404);
    const bad = async (path: string, init: RequestInit) => {
      const res = await fetch(`${srv.base}${path}`, { ...init, headers: { ...h, ...(init.headers as Record<string, string> ?? {}) } });
      const body = await res.json() as { error?: string };
      return [res.status, typeof body.error];
    };
    assert.deepEqual(await bad('/v2/publish/http://127.0.0.1:9/x', { method: 'POST', headers: { 'upstash-retry-delay': 'pow(' } }), [400, 'string']);
    assert.deepEqual(await bad('/v2/publish/http://127.0.0.1:9/x', { method: 'POST', headers: { 'upstash-delay': 'soon' } }), [400, 'string']);
    assert.deepEqual(await bad('/v2/publish/http://127.0.0.1:9/x', { method: 'POST', headers: { 'upstash-retries': '-1' } }), [400, 'string']);
    assert.deepEqual(await bad('/v2/publish/http://127.0.0.1:9/x', { method: 'POST', headers: { 'upstash-flow-control-key': 'k', 'upstash-flow-control-value': 'speed=1' } }), [400, 'string']);
    assert.deepEqual(await bad('/v2/batch', { method: 'POST', body: '{not json' }), [400, 'string']);
    assert.deepEqual(await bad('/v2/batch', { method: 'POST', body: '[{"headers":{}}]' }), [400, 'string']);
    assert.deepEqual(await bad('/v2/publish/ftp://x', { method: 'POST' }), [400, 'string']);
    assert.deepEqual(await bad('/v2/events?cursor=zzz', { method: 'GET' }), [400, 'string']);
    assert.deepEqual(await bad('/v2/queues', { method: 'POST', body: '{"queueName":"q","parallelism":0}' }), [400, 'string']);
  });
});

describe('event listing', () => {
  it('filters, order, count and cursors (no cursor on the last page)', async () => {
    const e = await fresh();
    try {
      const t0 = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await c.publishJSON({ url: `${e.url}/ev`, body: i, label: 'evl' })).messageId);
      await e.waitFor(3);
      await until(async () => (await c.logs({ filter: { label: 'evl', state: 'DELIVERED' } })).events.length === 3, 5000, 'three DELIVERED');
      const all = (await c.logs({ filter: { url: `${e.url}/ev` } })).events;
      assert.equal(all.length, 9);
      for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].time >= all[i].time, 'latestFirst by default');
      assert.ok(all.every((x: any) => x.label === 'evl' && Array.isArray(x.header['Content-Type'])));
      // count=1 pages visit every event once; the last page has no cursor.
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const p = await c.logs({ filter: { url: `${e.url}/ev` }, count: 2, cursor });
        for (const x of p.events) seen.push(`${x.messageId}:${x.state}`);
        cursor = p.cursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 5);
      assert.equal(new Set(seen).size, 9);
      const inProgress = (await c.logs({ filter: { url: `${e.url}/ev`, state: 'IN_PROGRESS' } })).events;
      assert.equal(inProgress.length, 3);
      assert.ok(inProgress.every((x: any) => x.state === 'ACTIVE'));
      const r = await fetch(`${srv.base}/v2/logs?url=${encodeURIComponent(`${e.url}/ev`)}&order=earliestFirst&state=CREATED`, { headers: { authorization: `Bearer ${QTOKEN}` } });
      const body = await r.json() as { events: any[]; logs: any[]; cursor?: string };
      assert.equal(body.events.length, 3);
      assert.deepEqual(body.logs, body.events);
      assert.equal(body.cursor, undefined);
      assert.deepEqual(body.events.map((x) => x.messageId), ids);
      const none = (await c.logs({ filter: { url: `${e.url}/ev`, fromDate: t0 - 100000, toDate: t0 - 1 } })).events;
      assert.equal(none.length, 0);
      const some = (await c.logs({ filter: { url: `${e.url}/ev`, fromDate: t0, toDate: Date.now() } })).events;
      assert.equal(some.length, 9);
      const two = (await c.logs({ messageIds: ids.slice(0, 2) })).events;
      assert.equal(two.length, 6);
    } finally { await e.close(); }
  });
});
