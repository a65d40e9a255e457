/**
 * A cron schedule really fires and carries Upstash-Schedule-Id; one whose time passed while the
 * server was down fires once when it is back. Cron has minute granularity, so these wait for the
 * next minute boundary (up to 60 s each): they run only with QSTASH_SLOW=1.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startQ, endpoint, client, keysOf, until, sleep, type QServer } from './helpers.js';

it('a "* * * * *" schedule fires at the next minute and records its state', { skip: process.env.QSTASH_SLOW !== '1' && 'set QSTASH_SLOW=1 (waits up to a minute)' }, async () => {
  const srv = await startQ();
  const ep = await endpoint(await keysOf(srv.base));
  try {
    const c = await client(srv.base);
    const { scheduleId } = await c.schedules.create({ destination: `${ep.url}/tick`, cron: '* * * * *', body: '{"tick":true}', headers: { 'x-s': '1' } });
    const next = (await c.schedules.get(scheduleId)).nextScheduleTime;
    const [d] = await ep.waitFor(1, 70_000);
    assert.ok(d.at >= next, 'not before its time');
    assert.equal(d.body, '{"tick":true}');
    assert.equal(d.headers['x-s'], '1');
    assert.equal(d.headers['upstash-schedule-id'], scheduleId);
    assert.equal(d.verified, true);
    const s = await until(async () => {
      const x = await c.schedules.get(scheduleId);
      return Object.values(x.lastScheduleStates ?? {}).includes('SUCCESS') ? x : null;
    }, 5000, 'SUCCESS state');
    assert.equal(s.lastScheduleTime, next);
    assert.equal(s.nextScheduleTime, next + 60_000);
    const evs = (await c.logs({ filter: { scheduleId } })).events;
    assert.ok(evs.some((e: any) => e.state === 'DELIVERED'));
  } finally {
    await ep.close();
    await srv.stop();
  }
});

it('a schedule whose time passed while the server was down fires once on start', { skip: process.env.QSTASH_SLOW !== '1' && 'set QSTASH_SLOW=1 (waits up to a minute)' }, async () => {
  let srv: QServer = await startQ();
  const dir = srv.dir;
  const ep = await endpoint(await keysOf(srv.base));
  try {
    let c = await client(srv.base);
    const { scheduleId } = await c.schedules.create({ destination: `${ep.url}/missed`, cron: '* * * * *', body: 'm' });
    const next = (await c.schedules.get(scheduleId)).nextScheduleTime;
    await srv.stop();
    while (Date.now() < next + 1000) await sleep(200);
    assert.equal(ep.deliveries.length, 0);
    srv = await startQ({ dir, httpPort: srv.httpPort });
    c = await client(srv.base);
    const [d] = await ep.waitFor(1, 5000);
    assert.equal(d.headers['upstash-schedule-id'], scheduleId);
    const s = await c.schedules.get(scheduleId);
    assert.equal(s.lastScheduleTime, next);
    assert.ok(s.nextScheduleTime > Date.now());
    await sleep(300);
    assert.equal(ep.deliveries.length, 1, 'fired once, not once per missed minute');
  } finally {
    await ep.close();
    await srv.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
