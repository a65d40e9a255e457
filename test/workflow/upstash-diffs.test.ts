/**
 * Differences from the real service found with the official SDKs (issue 20), each checked here:
 * the CI route sleepWithoutAwait of @upstash/workflow's own suite (13 calls on the service,
 * started as its CI starts it, by a plain QStash message), a second DELETE of an ended run,
 * retryDelay in the log steps.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWf, keysOf, wfSdk, wfClient, app, settle, runState, stepsOf, WTOKEN, type App, type QServer } from './helpers.js';
import { client } from '../qstash/helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
let sdk: any;
let c: any;

before(async () => {
  srv = await startWf();
  a = await app(srv.base, await keysOf(srv.base));
  sdk = await wfSdk();
  c = await wfClient(srv.base);
});
after(async () => {
  await a.close();
  await srv.stop();
});

describe('workflow', () => {
  it('sleepWithoutAwait (the SDK CI route): 13 calls, as the service', async () => {
    let counter = 0;
    const attemptCharge = () => { counter += 1; if (counter === 3) { counter = 0; return true; } return false; };
    const payload = { date: 123, email: 'my@mail.com', amount: 10 };
    let done = false;
    a.route('/swa', sdk.serve(async (ctx: any) => {
      const invoice = ctx.requestPayload;
      for (let index = 0; index < 3; index++) {
        const charge = await ctx.run('attemptCharge', () => ({ invoice, success: attemptCharge() }));
        if (charge.success) {
          const [updateDb, receipt, sleepResult] = await Promise.all([
            ctx.run('updateDb', () => charge.invoice.amount),
            ctx.run('sendReceipt', () => charge.invoice.email),
            ctx.sleep('sleep', 1),
          ]);
          assert.deepEqual([updateDb, receipt, sleepResult], [10, 'my@mail.com', undefined]);
          done = true;
          return;
        }
        await ctx.sleep('retrySleep', 1);
      }
      await ctx.run('paymentFailed', () => true);
    }, { retries: 1 }));
    // As the SDK's CI starts it: a plain QStash message to the route.
    await (await client(srv.base, WTOKEN)).publishJSON({ url: `${a.url}/swa`, body: payload });
    const n = await settle(a, '/swa', 13, 30000, 3000);
    assert.equal(done, true);
    assert.equal(n, 13);
  });

  it('a second DELETE of an ended run answers 2xx; a run never seen is still an error', async () => {
    a.route('/long', sdk.serve(async (ctx: any) => {
      await ctx.run('a', () => 'A');
      await ctx.sleep('long', 60);
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/long` });
    await settle(a, '/long', 2, 15000, 300);
    const del = (id: string) => fetch(`${srv.base}/v2/workflows/runs/${id}?cancel=true`, { method: 'DELETE', headers: { authorization: `Bearer ${WTOKEN}` } });
    const first = await del(workflowRunId);
    assert.deepEqual([first.status, await first.json()], [200, { cancelled: 1 }]);
    const again = await del(workflowRunId);
    assert.deepEqual([again.status, await again.json()], [200, { cancelled: 0 }]);
    assert.equal((await del('wfr_never-there')).status, 400);
  });

  it('log steps carry retryDelay when the run has one, and none when it has not', async () => {
    a.route('/rd', sdk.serve(async (ctx: any) => { await ctx.run('a', () => 'A'); }));
    const withDelay = (await c.trigger({ url: `${a.url}/rd`, retries: 2, retryDelay: '100' })).workflowRunId;
    const without = (await c.trigger({ url: `${a.url}/rd`, retries: 2 })).workflowRunId;
    for (const [id, delay] of [[withDelay, '100'], [without, undefined]]) {
      const run = await runState(c, id!, ['RUN_SUCCESS']);
      const steps = stepsOf(run);
      assert.ok(steps.length >= 2);
      for (const s of steps) assert.equal(s.retryDelay, delay, `${s.stepName}: ${JSON.stringify(s)}`);
    }
  });
});
