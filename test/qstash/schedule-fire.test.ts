/**
 * A cron schedule really fires (to a URL and to a URL group) and carries Upstash-Schedule-Id.
 * Cron has minute granularity, so this waits for the next minute boundary (up to 60 s): it runs
 * only with QSTASH_SLOW=1.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { startQ, endpoint, client, keysOf, until } from './helpers.js';

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
