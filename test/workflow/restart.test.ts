/**
 * Durability: runs, their entries, waiters and logs survive a restart of the server; a run
 * that was sleeping continues after it, a waiting run can be notified after it (and a wait
 * whose deadline passes while the server is down times out once it is back).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startWf, keysOf, wfSdk, wfClient, app, runState, settle, stepsOf, sleep, until } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
describe('workflow restart', () => {
  it('a sleeping run and waiting runs continue after a restart; logs are kept', async () => {
    let srv = await startWf();
    const dir = srv.dir;
    const keys = await keysOf(srv.base);
    const a = await app(srv.base, keys);
    const sdk = await wfSdk();
    try {
      let c = await wfClient(srv.base);
      a.route('/done', sdk.serve(async (ctx: any) => { await ctx.run('x', () => 'kept'); return 'before restart'; }));
      a.route('/sleepy', sdk.serve(async (ctx: any) => {
        await ctx.run('one', () => 1);
        await ctx.sleep('nap', 3);
        return await ctx.run('two', () => 'woke up');
      }));
      const got: any = {};
      a.route('/waity', sdk.serve(async (ctx: any) => {
        got.event = await ctx.waitForEvent('w', 'restart-evt', { timeout: 60 });
        return 'notified';
      }));
      a.route('/timey', sdk.serve(async (ctx: any) => {
        got.timeout = await ctx.waitForEvent('t', 'never-evt', { timeout: 2 });
      }));
      const done = (await c.trigger({ url: `${a.url}/done`, label: 'pre' })).workflowRunId;
      await runState(c, done, ['RUN_SUCCESS']);
      const sleepy = (await c.trigger({ url: `${a.url}/sleepy` })).workflowRunId;
      const waity = (await c.trigger({ url: `${a.url}/waity` })).workflowRunId;
      const timey = (await c.trigger({ url: `${a.url}/timey` })).workflowRunId;
      await settle(a, '/sleepy', 2, 5000, 100);
      await until(async () => (await c.getWaiters({ eventId: 'restart-evt' })).length === 1, 5000, 'waiter');
      await until(async () => (await c.getWaiters({ eventId: 'never-evt' })).length === 1, 5000, 'timeout waiter');
      const napAt = a.hits.filter((h) => h.path === '/sleepy')[1].at;
      await srv.stop();
      await sleep(2500); // the timeout's deadline passes while the server is down
      srv = await startWf({ dir, httpPort: srv.httpPort });
      c = await wfClient(srv.base);
      const before = (await c.logs({ workflowRunId: done })).runs[0];
      assert.equal(before.workflowRunResponse, '"before restart"');
      assert.deepEqual(before.labels, ['pre']);
      assert.equal(stepsOf(before)[1].out, '"kept"');
      const waiters = await c.getWaiters({ eventId: 'restart-evt' });
      assert.equal(waiters.length, 1);
      assert.equal(waiters[0].workflowRunId, waity);
      const r = await c.notify({ eventId: 'restart-evt', eventData: { after: 'restart' } });
      assert.equal(r.length, 1);
      const w = await runState(c, waity, ['RUN_SUCCESS']);
      assert.equal(w.workflowRunResponse, '"notified"');
      assert.deepEqual(got.event, { eventData: { after: 'restart' }, timeout: false });
      await runState(c, timey, ['RUN_SUCCESS']);
      assert.deepEqual(got.timeout, { eventData: undefined, timeout: true });
      const s = await runState(c, sleepy, ['RUN_SUCCESS'], 10000);
      assert.equal(s.workflowRunResponse, '"woke up"');
      assert.equal(await settle(a, '/sleepy', 4), 4);
      const hits = a.hits.filter((h) => h.path === '/sleepy');
      assert.ok(hits[2].at - napAt >= 2900, `slept ${hits[2].at - napAt}ms`);
      assert.ok(hits.every((h) => h.verified === true));
      // The message log of the old run is still there.
      const ml = await (await fetch(`${srv.base}/v2/workflows/messageLogs?workflowRunId=${done}`, { headers: { authorization: `Bearer ${a.env.QSTASH_TOKEN}` } })).json() as any;
      assert.ok(ml.events.some((e: any) => e.state === 'RUN_SUCCESS'));
    } finally {
      await a.close();
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('retention: flat-log events and runs that finished before --qstash-log-retention are pruned, active runs stay', async () => {
    let srv = await startWf({ args: ['--qstash-log-retention', '1'] });
    const dir = srv.dir;
    const a = await app(srv.base, await keysOf(srv.base));
    try {
      const sdk = await wfSdk();
      let c = await wfClient(srv.base);
      a.route('/old', sdk.serve(async (ctx: any) => { await ctx.run('x', () => 1); }));
      a.route('/oldfail', sdk.serve(async (ctx: any) => { await ctx.run('x', () => { throw new Error('no'); }); }));
      a.route('/asleep', sdk.serve(async (ctx: any) => { await ctx.sleep('zz', 600); }));
      const { workflowRunId } = await c.trigger({ url: `${a.url}/old`, label: 'gone' });
      const failed = (await c.trigger({ url: `${a.url}/oldfail`, retries: 0 })).workflowRunId;
      const asleep = (await c.trigger({ url: `${a.url}/asleep`, label: 'gone' })).workflowRunId;
      await runState(c, workflowRunId, ['RUN_SUCCESS']);
      await runState(c, failed, ['RUN_FAILED']);
      await until(async () => stepsOf((await c.logs({ workflowRunId: asleep })).runs[0]).some((s) => s.stepName === 'zz'), 5000, 'sleep step');
      const ml = async (id: string) => (await (await fetch(`${srv.base}/v2/workflows/messageLogs?workflowRunId=${id}`, { headers: { authorization: `Bearer ${a.env.QSTASH_TOKEN}` } })).json() as any).events;
      assert.ok((await ml(workflowRunId)).length > 0);
      assert.equal((await c.dlq.list({ filter: { workflowRunId: failed } })).messages.length, 1);
      await srv.stop();
      await sleep(1100);
      srv = await startWf({ dir, httpPort: srv.httpPort, args: ['--qstash-log-retention', '1'] }); // prunes on start
      c = await wfClient(srv.base);
      assert.deepEqual(await ml(workflowRunId), []);
      assert.deepEqual((await c.logs({ workflowRunId })).runs, []);
      assert.deepEqual((await c.logs({ workflowRunId: failed })).runs, []);
      assert.equal((await c.dlq.list({ filter: { workflowRunId: failed } })).messages.length, 0);
      // Nothing of them is left in the indexes either: a label listing finds the active run only.
      assert.deepEqual((await c.logs({ filter: { label: 'gone' } })).runs.map((r: any) => r.workflowRunId), [asleep]);
      assert.deepEqual((await c.logs({})).runs.map((r: any) => r.workflowRunId), [asleep]);
      assert.equal((await c.logs({ workflowRunId: asleep })).runs[0].workflowState, 'RUN_STARTED');
      assert.deepEqual(await c.cancel({ ids: asleep }), { cancelled: 1 });
    } finally {
      await a.close();
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
