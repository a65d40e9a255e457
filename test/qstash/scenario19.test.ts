/**
 * Scenario 19 of the QStash/Workflow spec (section 6), plain QStash through the unmodified SDK:
 * publish to a working endpoint, to a failing one (retries 1), a delayed message cancelled, DLQ
 * list/retry/delete, schedules create/list/pause/delete, a queue, a URL group fan-out; then the
 * event sequences of /v2/events for every message, oldest first:
 *   CREATED ACTIVE DELIVERED / CREATED ACTIVE ERROR RETRY ACTIVE ERROR FAILED /
 *   CREATED CANCEL_REQUESTED CANCELLED.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startQ, endpoint, client, keysOf, until, QTOKEN, type QServer, type Endpoint } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let c: any;
let ok: Endpoint;
let bad: Endpoint;

before(async () => {
  srv = await startQ();
  c = await client(srv.base);
  const keys = await keysOf(srv.base);
  ok = await endpoint(keys);
  bad = await endpoint(keys);
  bad.handler = (_d, res) => { res.writeHead(500); res.end('broken'); };
});
after(async () => {
  await ok.close();
  await bad.close();
  await srv.stop();
});

/** Every event of one message from /v2/events, oldest first (the raw API, order=earliestFirst). */
async function sequence(messageId: string): Promise<string[]> {
  const r = await fetch(`${srv.base}/v2/events?messageId=${messageId}&order=earliestFirst`, { headers: { authorization: `Bearer ${QTOKEN}` } });
  assert.equal(r.status, 200);
  const b = await r.json() as { events: { state: string; messageId: string; time: number }[]; cursor?: string };
  assert.equal(b.cursor, undefined);
  for (let i = 1; i < b.events.length; i++) assert.ok(b.events[i - 1].time <= b.events[i].time);
  return b.events.map((e) => e.state);
}

const DELIVERED = ['CREATED', 'ACTIVE', 'DELIVERED'];
const FAILED_ONE_RETRY = ['CREATED', 'ACTIVE', 'ERROR', 'RETRY', 'ACTIVE', 'ERROR', 'FAILED'];
const CANCELLED = ['CREATED', 'CANCEL_REQUESTED', 'CANCELLED'];

it('scenario 19: plain QStash end to end with its event sequences', async () => {
  const settled = async (id: string, last: string) =>
    until(async () => { const s = await sequence(id); return s.at(-1) === last ? s : null; }, 8000, `${id} ${last}`);

  // Publish to an OK endpoint.
  const p = await c.publishJSON({ url: `${ok.url}/ok`, body: { s: 19 } });
  assert.deepEqual(await settled(p.messageId, 'DELIVERED'), DELIVERED);

  // Publish to a failing endpoint with one retry: to the DLQ.
  const f = await c.publishJSON({ url: `${bad.url}/fail`, body: { s: 'fail' }, retries: 1, retryDelay: '50' });
  assert.deepEqual(await settled(f.messageId, 'FAILED'), FAILED_ONE_RETRY);
  assert.equal(bad.deliveries.length, 2);

  // A delayed message cancelled before it is due.
  const d = await c.publishJSON({ url: `${ok.url}/delayed`, body: 1, delay: 30 });
  assert.deepEqual(await c.messages.cancel(d.messageId), { cancelled: 1 });
  assert.deepEqual(await sequence(d.messageId), CANCELLED);

  // DLQ: list, retry (the new message fails again: a second entry), delete.
  const list = await c.dlq.listMessages({ filter: { url: `${bad.url}/fail` } });
  assert.equal(list.messages.length, 1);
  assert.equal(list.messages[0].messageId, f.messageId);
  assert.equal(list.messages[0].responseStatus, 500);
  const retried = await c.dlq.retry(list.messages[0].dlqId);
  const again = retried.responses[0].messageId;
  assert.notEqual(again, f.messageId);
  assert.deepEqual(await settled(again, 'FAILED'), FAILED_ONE_RETRY);
  const list2 = await c.dlq.listMessages({ filter: { url: `${bad.url}/fail` } });
  assert.deepEqual(list2.messages.map((m: any) => m.messageId), [again]);
  assert.deepEqual(await c.dlq.delete(list2.messages[0].dlqId), { deleted: 1 });
  assert.equal((await c.dlq.listMessages({ filter: { url: `${bad.url}/fail` } })).messages.length, 0);

  // Schedules: create, list, pause, delete.
  const { scheduleId } = await c.schedules.create({ destination: `${ok.url}/cron`, cron: '0 12 * * *', body: 'tick' });
  assert.ok((await c.schedules.list()).some((s: any) => s.scheduleId === scheduleId));
  await c.schedules.pause({ schedule: scheduleId });
  assert.equal((await c.schedules.get(scheduleId)).isPaused, true);
  await c.schedules.delete(scheduleId);
  assert.ok(!(await c.schedules.list()).some((s: any) => s.scheduleId === scheduleId));

  // A queue: enqueued messages delivered in order.
  const q = c.queue({ queueName: 'sc19' });
  const qids: string[] = [];
  for (let i = 0; i < 3; i++) qids.push((await q.enqueueJSON({ url: `${ok.url}/queue`, body: { i } })).messageId);
  for (const id of qids) assert.deepEqual(await settled(id, 'DELIVERED'), DELIVERED);
  assert.deepEqual(ok.deliveries.filter((x) => x.path === '/queue').map((x) => JSON.parse(x.body).i), [0, 1, 2]);
  const qev = (await c.logs({ filter: { queueName: 'sc19', state: 'DELIVERED' } })).events;
  assert.equal(qev.length, 3);

  // A URL group fans out: one message per endpoint.
  await c.urlGroups.addEndpoints({ name: 'sc19group', endpoints: [{ url: `${ok.url}/g1` }, { url: `${ok.url}/g2` }] });
  const fan = await c.publishJSON({ urlGroup: 'sc19group', body: { fan: true } });
  assert.equal(fan.length, 2);
  for (const m of fan) assert.deepEqual(await settled(m.messageId, 'DELIVERED'), DELIVERED);
  const gev = (await c.logs({ filter: { urlGroup: 'sc19group', state: 'CREATED' } })).events;
  assert.deepEqual(new Set(gev.map((e: any) => e.url)), new Set([`${ok.url}/g1`, `${ok.url}/g2`]));
  assert.ok(gev.every((e: any) => e.urlGroup === 'sc19group' && e.topicName === 'sc19group'));

  // Every delivery carried a valid signature.
  assert.ok([...ok.deliveries, ...bad.deliveries].every((x) => x.verified === true));
});
