/**
 * BullMQ 6.7 (all Lua scripts: EVALSHA with many redis.calls, cmsgpack, cjson) against our
 * server and a real redis-server: the same queue scenario on both, and what BullMQ reports
 * must be the same (job counts, states, return values, a failure and its retry, priorities,
 * delayed jobs promoted, a flow's parent getting its children's values).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Queue, Worker, FlowProducer, type Job } from 'bullmq';
import { type Proc, withBothServers } from '../helpers/server.js';

let ours: Proc;
let redis: Proc;

withBothServers((o, r) => { ours = o; redis = r; });

/** Wait until `done()` holds (polling), at most 20 s. */
async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const t0 = Date.now();
  while (!(await done())) {
    if (Date.now() - t0 > 20000) throw new Error(`timeout: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The scenario; returns what BullMQ reported, without ids or times. */
async function scenario(port: number): Promise<unknown> {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const q = new Queue('smoke', { connection });
  const fp = new FlowProducer({ connection });
  const log: unknown[] = [];
  const order: string[] = [];
  let failedOnce = false;
  const w = new Worker('smoke', async (job: Job) => {
    order.push(job.name);
    if (job.name === 'flaky' && !failedOnce) {
      failedOnce = true;
      throw new Error('boom');
    }
    if (job.name === 'parent') return { kids: Object.values(await job.getChildrenValues()).sort() };
    return `${job.name}:${JSON.stringify(job.data)}`;
  }, { connection, concurrency: 1, autorun: false });
  const failed: string[] = [];
  w.on('failed', (job, err) => failed.push(`${job?.name}:${err.message}:${job?.attemptsMade}`));
  try {
    await q.add('a', { n: 1 });
    await q.addBulk([
      { name: 'b', data: { n: 2 } },
      { name: 'p9', data: {}, opts: { priority: 9 } },
      { name: 'p1', data: {}, opts: { priority: 1 } },
      { name: 'flaky', data: { x: 'é' }, opts: { attempts: 2, backoff: { type: 'fixed', delay: 10 } } },
      { name: 'late', data: {}, opts: { delay: 300 } },
    ]);
    log.push(await q.getJobCounts());
    const flow = await fp.add({
      name: 'parent', queueName: 'smoke',
      children: [1, 2, 3].map((i) => ({ name: `kid${i}`, queueName: 'smoke', data: { i } })),
    });
    log.push(await flow.job.getState());
    w.run();
    await until(async () => (await q.getJobCounts('completed')).completed === 10, 'all jobs completed');
    log.push(await q.getJobCounts());
    log.push(await flow.job.getState());
    const done = await q.getJobs(['completed'], 0, -1);
    log.push(done.map((j) => [j.name, j.returnvalue, j.attemptsMade]).sort((x, y) => String(x[0]).localeCompare(String(y[0]))));
    // Strict priority order among the jobs waiting when the worker started: p1 before p9.
    log.push(order.indexOf('p1') < order.indexOf('p9'));
    log.push(failed);
    await q.pause();
    log.push(await q.isPaused());
    await q.resume();
    await q.obliterate({ force: true });
    log.push(await q.getJobCounts());
  } finally {
    await w.close();
    await fp.close();
    await q.close();
  }
  return log;
}

describe('BullMQ', () => {
  it('reports the same on our server as on redis-server', async () => {
    const [a, b] = await Promise.all([scenario(ours.port), scenario(redis.port)]);
    if (process.env.BULLMQ_SMOKE_PRINT) console.log(JSON.stringify(a));
    assert.deepEqual(a, b);
    // And the scenario did run: 10 jobs completed, one failure retried.
    const counts = (a as Record<string, number>[])[2];
    assert.equal(counts.completed, 10);
    assert.deepEqual((a as unknown[])[6], ['flaky:boom:1']);
  });
});
