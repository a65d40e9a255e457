/**
 * Workflow core with the unmodified @upstash/workflow SDK (spec section 6, scenarios 1-3, 18):
 * sequential steps, sleeps, a parallel block, a direct call to the endpoint; delivery counts,
 * signatures on every delivery, and the run logs.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWf, keysOf, wfSdk, wfClient, app, runState, settle, stepsOf, until, type App, type QServer } from './helpers.js';
import { scenario1, scenario3 } from './scenarios.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
let c: any;
let sdk: any;

before(async () => {
  srv = await startWf();
  const keys = await keysOf(srv.base);
  a = await app(srv.base, keys);
  c = await wfClient(srv.base);
  sdk = await wfSdk();
});
after(async () => {
  await a.close();
  await srv.stop();
});

describe('workflow core', () => {
  it('1: two runs, returned object, body, header and label', async () => {
    const { workflowRunId, seen } = await scenario1(sdk, c, a, '/s1');
    assert.match(workflowRunId, /^wfr_/);
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/s1', 3), 3);
    assert.ok(a.hits.filter((h) => h.path === '/s1').every((h) => h.verified === true));
    assert.equal(seen.header, 'hello');
    assert.equal(seen.label, 'demo');
    assert.deepEqual(seen.payload, { n: 1 });
    assert.equal(run.workflowState, 'RUN_SUCCESS');
    assert.equal(run.workflowRunResponse, JSON.stringify({ x: { n: 2 }, y: 20 }));
    assert.deepEqual(run.labels, ['demo']);
    assert.equal(run.label, 'demo');
    assert.equal(run.workflowUrl, `${a.url}/s1`);
    assert.ok(run.workflowRunCompletedAt >= run.workflowRunCreatedAt);
    // Groups init, a, b, all sequential; no `next` group.
    assert.deepEqual(run.steps.map((g: any) => g.type), ['sequential', 'sequential', 'sequential']);
    const [init, sa, sb] = stepsOf(run);
    assert.equal(init.stepName, 'init');
    assert.equal(init.stepType, 'Initial');
    assert.equal(init.out, '{"n":1}');
    assert.equal(init.state, 'STEP_SUCCESS');
    assert.equal(init.stepId, undefined);
    assert.deepEqual([sa.stepId, sa.stepName, sa.stepType, sa.out, sa.state], [1, 'a', 'Run', '{"n":2}', 'STEP_SUCCESS']);
    assert.deepEqual([sb.stepId, sb.stepName, sb.stepType, sb.out, sb.state], [2, 'b', 'Run', '20', 'STEP_SUCCESS']);
    assert.equal(sa.concurrent, 1);
    assert.equal(sa.retries, 3);
  });

  it('2: sleep and sleepUntil wait on the clock', async () => {
    a.route('/s2', sdk.serve(async (ctx: any) => {
      await ctx.run('first', () => 1);
      await ctx.sleep('nap', 2);
      // Whole seconds: rounded up so that the wait is at least 2 s from now.
      await ctx.sleepUntil('until', Math.ceil(Date.now() / 1000) + 2);
      await ctx.run('last', () => 2);
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s2` });
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS'], 20000);
    assert.equal(await settle(a, '/s2', 5), 5);
    const hits = a.hits.filter((h) => h.path === '/s2');
    // hits[1] publishes the sleep, hits[2] the sleepUntil (lower bounds only: never flaky).
    assert.ok(hits[2].at - hits[1].at >= 2000, `sleepFor gap ${hits[2].at - hits[1].at}`);
    assert.ok(hits[3].at - hits[2].at >= 2000, `sleepUntil gap ${hits[3].at - hits[2].at}`);
    assert.equal(run.workflowState, 'RUN_SUCCESS');
    const steps = stepsOf(run);
    assert.deepEqual(steps.map((s) => s.stepType), ['Initial', 'Run', 'SleepFor', 'SleepUntil', 'Run']);
    const nap = steps.find((s) => s.stepName === 'nap');
    assert.equal(nap.sleepFor, 2);
    assert.equal(nap.state, 'STEP_SUCCESS');
    const until2 = steps.find((s) => s.stepName === 'until');
    assert.equal(typeof until2.sleepUntil, 'number');
    assert.ok(until2.sleepUntil * 1000 >= hits[2].at + 2000);
    assert.equal(run.workflowRunResponse, undefined);
  });

  it('3: a parallel block of run, run and sleep', async () => {
    const { workflowRunId, seen } = await scenario3(sdk, c, a, '/s3');
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS'], 20000);
    assert.equal(await settle(a, '/s3', 9), 9);
    assert.deepEqual(seen.results, ['one', 'two', undefined]);
    assert.deepEqual(run.steps.map((g: any) => g.type), ['sequential', 'sequential', 'parallel', 'sequential']);
    const par = run.steps[2].steps;
    assert.equal(par.length, 3);
    assert.deepEqual(par.map((s: any) => s.stepId), [2, 3, 4]);
    assert.ok(par.every((s: any) => s.concurrent === 3 && s.state === 'STEP_SUCCESS'));
    assert.deepEqual(par.map((s: any) => [s.stepName, s.stepType]), [['p1', 'Run'], ['p2', 'Run'], ['p3', 'SleepFor']]);
    assert.equal(run.steps[3].steps[0].stepId, 5);
    assert.equal(run.steps[3].steps[0].stepName, 'after');
  });

  it('18: a direct POST to the endpoint starts a run (the SDK triggers itself)', async () => {
    // The SDK verifies every request when it has keys, the direct call too: this endpoint has
    // none (the app still checks the signature of every delivery from the server).
    a.route('/s18', sdk.serve(async (ctx: any) => {
      await ctx.run('only', () => ctx.requestPayload);
      return 'done';
    }, { receiver: undefined }));
    const r = await fetch(`${a.url}/s18`, { method: 'POST', body: JSON.stringify({ direct: true }), headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 200);
    const { workflowRunId } = await r.json() as { workflowRunId: string };
    assert.match(workflowRunId, /^wfr_/);
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/s18', 3), 3); // direct call + init delivery + step delivery
    const hits = a.hits.filter((h) => h.path === '/s18');
    assert.equal(hits[0].verified, 'unsigned');
    assert.ok(hits.slice(1).every((h) => h.verified === true));
    assert.equal(run.workflowRunResponse, '"done"');
    assert.equal(stepsOf(run)[1].out, '{"direct":true}');
  });

  it('lazy fetch endpoint: GET /v2/workflows/runs/{id} of an active run, 404 after', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => { release = r; });
    a.route('/lazy', sdk.serve(async (ctx: any) => {
      await ctx.run('one', () => 1);
      await ctx.run('wait', async () => { await gate; return 2; });
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/lazy`, body: 'x' });
    const auth = { authorization: `Bearer ${a.env.QSTASH_TOKEN}` };
    const entries: any[] = (await until(async () => {
      const r = await fetch(`${srv.base}/v2/workflows/runs/${workflowRunId}`, { headers: auth });
      const v = r.status === 200 ? await r.json() as any[] : [];
      return v.length === 2 ? v : undefined;
    }))!;
    assert.equal(Buffer.from(entries[0].body, 'base64').toString(), 'x');
    assert.equal(entries[1].callType, 'step');
    assert.equal(JSON.parse(Buffer.from(entries[1].body, 'base64').toString()).stepName, 'one');
    release();
    await runState(c, workflowRunId, ['RUN_SUCCESS']);
    const r = await fetch(`${srv.base}/v2/workflows/runs/${workflowRunId}`, { headers: auth });
    assert.equal(r.status, 404);
    // A step for an ended run is refused with 400.
    const bad = await fetch(`${srv.base}/v2/batch`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify([{ destination: `${a.url}/lazy`, headers: { 'upstash-workflow-runid': workflowRunId, 'upstash-workflow-init': 'false' }, body: '{}' }]),
    });
    assert.equal(bad.status, 400);
  });
});
