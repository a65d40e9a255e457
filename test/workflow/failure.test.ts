/**
 * Run endings other than success (spec section 6, scenarios 7-10): retries then the failure
 * function, a non-retryable error (489), retry-after (429), a failure URL, cancellation from
 * outside (single, repeated, bulk by label / URL prefix / exact URL) and from inside; the
 * workflow DLQ (list, get, restart, resume, failure-callback retry, delete).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWf, keysOf, wfSdk, wfClient, app, runState, settle, stepsOf, sleep, until, type App, type QServer } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
let c: any;
let sdk: any;
let WorkflowNonRetryableError: any;
let WorkflowRetryAfterError: any;

before(async () => {
  srv = await startWf();
  a = await app(srv.base, await keysOf(srv.base));
  c = await wfClient(srv.base);
  sdk = await wfSdk();
  ({ WorkflowNonRetryableError, WorkflowRetryAfterError } = await import('@upstash/workflow' as string));
});
after(async () => {
  await a.close();
  await srv.stop();
});

describe('workflow failures', () => {
  it('7: retries, then the failure function; RUN_FAILED, DLQ entry, next STEP_FAILED with every error', async () => {
    const fail: any = {};
    a.route('/s7', sdk.serve(async (ctx: any) => {
      await ctx.run('boom', () => { throw new Error('step exploded'); });
    }, {
      failureFunction: async ({ context, failStatus, failResponse }: any) => {
        Object.assign(fail, { failStatus, failResponse, payload: context.requestPayload, header: context.headers.get('x-user'), label: context.label, runId: context.workflowRunId });
        return 'handled';
      },
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s7`, body: { p: 7 }, headers: { 'x-user': 'u7' }, label: 'seven', retries: 2, retryDelay: '100' });
    const run = await runState(c, workflowRunId, ['RUN_FAILED']);
    assert.equal(await settle(a, '/s7', 4), 4);
    await until(async () => (await c.logs({ workflowRunId })).runs[0].failureFunction?.state === 'CALLBACK_SUCCESS', 5000, 'CALLBACK_SUCCESS');
    const hits = a.hits.filter((h) => h.path === '/s7');
    assert.deepEqual(hits.map((h) => h.headers['upstash-retried']), ['0', '1', '2', '0']);
    assert.equal(hits[3].headers['upstash-workflow-runid'], workflowRunId);
    assert.ok(hits.every((h) => h.verified === true));
    assert.equal(fail.failStatus, 500);
    assert.equal(fail.failResponse, 'step exploded');
    assert.deepEqual(fail.payload, { p: 7 });
    assert.equal(fail.header, 'u7');
    assert.equal(fail.label, 'seven');
    assert.equal(fail.runId, workflowRunId);
    const final = (await c.logs({ workflowRunId })).runs[0];
    assert.match(final.dlqId, /\S/);
    assert.equal(final.failureFunction.dlqId, final.dlqId);
    assert.equal(final.failureFunction.failStatus, 500);
    const groups = final.steps.map((g: any) => g.type);
    assert.deepEqual(groups, ['sequential', 'next']);
    const next = final.steps[1].steps[0];
    assert.equal(next.state, 'STEP_FAILED');
    assert.equal(next.errors.length, 3);
    assert.ok(next.errors.every((e: any) => e.status === 500));
    assert.equal(run.workflowState, 'RUN_FAILED');
    const dlq = await c.dlq.list({ filter: { workflowRunId } });
    assert.equal(dlq.messages.length, 1);
    assert.equal(dlq.messages[0].workflowRunId, workflowRunId);
    assert.equal(dlq.messages[0].dlqId, final.dlqId);
    assert.equal(dlq.messages[0].responseStatus, 500);
    assert.equal(dlq.cursor, undefined);
  });

  it('8: a non-retryable error fails at once with 489', async () => {
    const fail: any = {};
    a.route('/s8', sdk.serve(async (ctx: any) => {
      await ctx.run('give up', () => { throw new WorkflowNonRetryableError('give up'); });
    }, { failureFunction: async ({ failStatus, failResponse }: any) => { Object.assign(fail, { failStatus, failResponse }); } }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s8`, retries: 3, retryDelay: '100' });
    await runState(c, workflowRunId, ['RUN_FAILED']);
    assert.equal(await settle(a, '/s8', 2), 2); // the failing delivery (once, despite retries 3), the failure call
    const hits = a.hits.filter((h) => h.path === '/s8');
    assert.equal(hits[0].status, 489);
    assert.equal(hits[1].headers['upstash-workflow-is-failure'], 'true');
    await until(() => fail.failStatus !== undefined, 5000, 'failure function');
    assert.equal(fail.failStatus, 489);
    assert.equal(fail.failResponse, 'give up');
    const run = (await c.logs({ workflowRunId })).runs[0];
    assert.equal(run.workflowState, 'RUN_FAILED');
    assert.match(run.dlqId, /\S/);
    assert.deepEqual(run.steps.map((g: any) => g.type), ['sequential', 'next']);
    const next = run.steps.at(-1);
    assert.equal(next.steps[0].state, 'STEP_FAILED');
    assert.equal(next.steps[0].errors.length, 1);
    assert.equal(next.steps[0].errors[0].status, 489);
  });

  it('a failing parallel branch: STEP_FAILED inside the parallel group, no next group', async () => {
    a.route('/pf', sdk.serve(async (ctx: any) => {
      await Promise.all([ctx.run('fine', () => 'ok'), ctx.run('broken', () => { throw new Error('branch broke'); })]);
      await ctx.run('never', () => 1);
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/pf`, retries: 0 });
    await runState(c, workflowRunId, ['RUN_FAILED']);
    const run = await until(async () => {
      const r = (await c.logs({ workflowRunId })).runs[0];
      return r.steps.find((g: any) => g.type === 'parallel')?.steps.some((s: any) => s.state === 'STEP_FAILED') ? r : undefined;
    }, 5000, 'failed branch in the log');
    assert.deepEqual(run.steps.map((g: any) => g.type), ['sequential', 'parallel']);
    const par = run.steps[1].steps;
    assert.deepEqual(par.map((s: any) => [s.stepName, s.concurrent]), [['fine', 2], ['broken', 2]]);
    const broken = par.find((s: any) => s.stepName === 'broken');
    assert.equal(broken.state, 'STEP_FAILED');
    assert.equal(broken.errors[0].status, 500);
    assert.ok(['STEP_SUCCESS', 'STEP_CANCELED'].includes(par.find((s: any) => s.stepName === 'fine').state));
    assert.match(run.dlqId, /\S/);
  });

  it('9: retry-after waits, then the run succeeds', async () => {
    let thrown = false;
    a.route('/s9', sdk.serve(async (ctx: any) => {
      await ctx.run('maybe', () => {
        if (!thrown) { thrown = true; throw new WorkflowRetryAfterError('later', 1); }
        return 'fine';
      });
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s9`, retryDelay: '60000' });
    await runState(c, workflowRunId, ['RUN_SUCCESS']);
    const hits = a.hits.filter((h) => h.path === '/s9');
    assert.equal(await settle(a, '/s9', 3), 3);
    // The step's delivery: 2 attempts (429 with Retry-After 1, then the step runs); then the end.
    assert.equal(hits[0].status, 429);
    assert.equal(hits[1].headers['upstash-retried'], '1');
    assert.ok(hits[1].at - hits[0].at >= 1000, `retried after ${hits[1].at - hits[0].at}ms`);
    // The run's retry delay (60 s) was not used: Retry-After wins.
    assert.ok(hits[1].at - hits[0].at < 60000);
    const run = (await c.logs({ workflowRunId })).runs[0];
    assert.equal(run.workflowState, 'RUN_SUCCESS');
    assert.equal(stepsOf(run).find((s) => s.stepName === 'maybe').out, '"fine"');
  });

  it('a failure URL gets the failure callback body with the run id header', async () => {
    a.route('/fu', sdk.serve(async (ctx: any) => { await ctx.run('x', () => { throw new Error('nope'); }); }));
    let cb: any;
    a.raw('/fu-callback', (hit, res) => { cb = hit; res.writeHead(200); res.end('{}'); });
    const { workflowRunId } = await c.trigger({ url: `${a.url}/fu`, body: 'payload-text', retries: 0, failureUrl: `${a.url}/fu-callback` });
    await runState(c, workflowRunId, ['RUN_FAILED']);
    await until(() => cb !== undefined, 5000, 'failure callback');
    assert.equal(a.count('/fu-callback'), 1);
    assert.equal(cb.verified, true);
    assert.equal(cb.headers['upstash-workflow-runid'], workflowRunId);
    assert.equal(cb.headers['upstash-workflow-is-failure'], 'true');
    const body = JSON.parse(cb.body);
    assert.equal(body.status, 500);
    assert.equal(body.url, `${a.url}/fu`);
    assert.equal(body.workflowRunId, workflowRunId);
    assert.equal(Buffer.from(body.sourceBody, 'base64').toString(), 'payload-text');
    assert.match(JSON.parse(Buffer.from(body.body, 'base64').toString()).message, /nope/);
    assert.match(body.dlqId, /\S/);
    await until(async () => (await c.logs({ workflowRunId })).runs[0].failureFunction?.state === 'CALLBACK_SUCCESS', 5000, 'CALLBACK_SUCCESS');
  });

  it('10a: cancel during a sleep stops the run; a second cancel counts 0', async () => {
    a.route('/s10a', sdk.serve(async (ctx: any) => {
      await ctx.run('one', () => 1);
      await ctx.sleep('long', 60);
      await ctx.run('never', () => 2);
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s10a` });
    await settle(a, '/s10a', 2);
    assert.deepEqual(await c.cancel({ ids: workflowRunId }), { cancelled: 1 });
    assert.deepEqual(await c.cancel({ ids: workflowRunId }), { cancelled: 0 });
    const run = await runState(c, workflowRunId, ['RUN_CANCELED']);
    await sleep(300);
    assert.equal(a.count('/s10a'), 2);
    const next = run.steps.at(-1);
    assert.equal(next.type, 'next');
    assert.equal(next.steps[0].state, 'STEP_CANCELED');
    assert.equal((await c.dlq.list({ filter: { workflowRunId } })).messages.length, 0);
  });

  it('10b: context.cancel() ends the run without a failure call', async () => {
    let failed = false;
    a.route('/s10b', sdk.serve(async (ctx: any) => {
      await ctx.run('one', () => 1);
      await ctx.cancel();
      await ctx.run('never', () => 2);
    }, { failureFunction: async () => { failed = true; } }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s10b` });
    const run = await runState(c, workflowRunId, ['RUN_CANCELED']);
    assert.equal(await settle(a, '/s10b', 2), 2);
    assert.equal(failed, false);
    assert.equal(stepsOf(run).filter((s) => s.stepName === 'never').length, 0);
    const next = run.steps.at(-1);
    assert.equal(next.type, 'next');
    assert.equal(next.steps[0].state, 'STEP_CANCELED');
    assert.equal(run.failureFunction, undefined);
    assert.equal((await c.dlq.list({ filter: { workflowRunId } })).messages.length, 0);
  });

  it('10c: bulk cancel by label, by URL prefix and by exact URL', async () => {
    const sleepy = sdk.serve(async (ctx: any) => { await ctx.sleep('zz', 60); });
    a.route('/bulk/a', sleepy);
    a.route('/bulk/ab', sleepy);
    a.route('/other', sleepy);
    const t = async (url: string, label?: string) => (await c.trigger({ url: `${a.url}${url}`, label })).workflowRunId;
    const l1 = await t('/bulk/a', 'cancelme');
    const l2 = await t('/other', 'cancelme');
    const keep = await t('/other', 'keep');
    const p1 = await t('/bulk/a');
    const p2 = await t('/bulk/ab');
    const e1 = await t('/bulk/a');
    await until(() => a.count('/bulk/a') + a.count('/bulk/ab') + a.count('/other') >= 6, 5000, 'first deliveries');
    assert.deepEqual(await c.cancel({ filter: { label: 'cancelme' } }), { cancelled: 2 });
    await runState(c, l1, ['RUN_CANCELED']);
    await runState(c, l2, ['RUN_CANCELED']);
    assert.deepEqual(await c.cancel({ filter: { workflowUrl: `${a.url}/bulk/ab` } }), { cancelled: 1 });
    await runState(c, p2, ['RUN_CANCELED']);
    assert.deepEqual(await c.cancel({ filter: { workflowUrlStartingWith: `${a.url}/bulk` } }), { cancelled: 2 });
    await runState(c, p1, ['RUN_CANCELED']);
    await runState(c, e1, ['RUN_CANCELED']);
    for (const id of [l1, l2, p1, p2, e1]) {
      const r = (await c.logs({ workflowRunId: id })).runs[0];
      assert.equal(r.steps.at(-1).type, 'next');
      assert.equal(r.steps.at(-1).steps[0].state, 'STEP_CANCELED');
      assert.equal((await c.dlq.list({ filter: { workflowRunId: id } })).messages.length, 0);
    }
    assert.equal((await c.logs({ workflowRunId: keep })).runs[0].workflowState, 'RUN_STARTED');
    assert.deepEqual(await c.cancel([keep]), { cancelled: 1 });
  });
});

describe('workflow DLQ', () => {
  it('restart, resume, failure-callback retry, get and delete', async () => {
    let broken = true;
    let firstRuns = 0;
    let failureBroken = true;
    let failureCalls = 0;
    a.route('/dlq', sdk.serve(async (ctx: any) => {
      await ctx.run('first', () => { firstRuns++; return 'f'; });
      await ctx.run('second', () => { if (broken) throw new Error('broken'); return 's'; });
      return 'ok';
    }, {
      failureFunction: async () => {
        failureCalls++;
        if (failureBroken) throw new Error('failure function broken');
      },
    }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await c.trigger({ url: `${a.url}/dlq`, body: { i }, retries: 0 })).workflowRunId);
    for (const id of ids) await runState(c, id, ['RUN_FAILED']);
    // The failure function fails too (retries 0): CALLBACK_FAIL.
    for (const id of ids) await until(async () => (await c.logs({ workflowRunId: id })).runs[0].failureFunction?.state === 'CALLBACK_FAIL', 5000, 'CALLBACK_FAIL');
    const list = await c.dlq.list({ filter: { workflowUrl: `${a.url}/dlq` } });
    assert.equal(list.messages.length, 3);
    const byRun = new Map(list.messages.map((m: any) => [m.workflowRunId, m]));
    const d0: any = byRun.get(ids[0]);
    const d1: any = byRun.get(ids[1]);
    const d2: any = byRun.get(ids[2]);
    assert.equal(d0.failureCallbackInfo.state, 'CALLBACK_FAIL');
    const byState = async (st: string) => (await (await fetch(`${srv.base}/v2/workflows/dlq?workflowUrl=${encodeURIComponent(`${a.url}/dlq`)}&failureCallbackState=${st}`, {
      headers: { authorization: `Bearer ${a.env.QSTASH_TOKEN}` },
    })).json() as any).messages.length;
    assert.equal(await byState('CALLBACK_FAIL'), 3);
    assert.equal(await byState('CALLBACK_SUCCESS'), 0);
    // Paging: count 1 visits all three.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const p = await c.dlq.list({ cursor, count: 1, filter: { workflowUrl: `${a.url}/dlq` } });
      seen.push(...p.messages.map((m: any) => m.dlqId));
      cursor = p.cursor;
    } while (cursor !== undefined);
    assert.deepEqual(seen.sort(), list.messages.map((m: any) => m.dlqId).sort());
    // Failure-callback retry.
    failureBroken = false;
    const before = failureCalls;
    const cb = await c.dlq.retryFailureFunction({ dlqId: d0.dlqId });
    assert.equal(cb.workflowRunId, ids[0]);
    await until(async () => (await c.logs({ workflowRunId: ids[0] })).runs[0].failureFunction?.state === 'CALLBACK_SUCCESS', 5000, 'CALLBACK_SUCCESS after retry');
    assert.equal(failureCalls, before + 1);
    assert.equal(await byState('CALLBACK_SUCCESS'), 1);
    await assert.rejects(c.dlq.retryFailureFunction({ dlqId: d0.dlqId }), (e: any) => e.status === 400);
    // Resume: the first step is not run again.
    broken = false;
    const firstBefore = firstRuns;
    const resumed = await c.dlq.resume({ dlqId: d1.dlqId });
    assert.match(resumed.workflowRunId, /^wfr_/);
    assert.notEqual(resumed.workflowRunId, ids[1]);
    const rr = await runState(c, resumed.workflowRunId, ['RUN_SUCCESS']);
    assert.equal(firstRuns, firstBefore);
    assert.equal(rr.workflowRunResponse, '"ok"');
    assert.equal(stepsOf(rr).find((s) => s.stepName === 'init').out, '{"i":1}');
    // Restart: from the beginning.
    const restarted = await c.dlq.restart({ dlqId: d2.dlqId });
    await runState(c, restarted.workflowRunId, ['RUN_SUCCESS']);
    assert.equal(firstRuns, firstBefore + 1);
    // Resumed and restarted entries left the DLQ; delete the last one.
    const left = await c.dlq.list({ filter: { workflowUrl: `${a.url}/dlq` } });
    assert.deepEqual(left.messages.map((m: any) => m.dlqId), [d0.dlqId]);
    const one = await fetch(`${srv.base}/v2/workflows/dlq/${d0.dlqId}`, { headers: { authorization: `Bearer ${a.env.QSTASH_TOKEN}` } });
    assert.equal((await one.json() as any).workflowRunId, ids[0]);
    assert.equal((await c.dlq.delete(d0.dlqId)).deleted, 1);
    assert.equal((await c.dlq.list({ filter: { workflowUrl: `${a.url}/dlq` } })).messages.length, 0);
    await assert.rejects(c.dlq.resume({ dlqId: d0.dlqId }), (e: any) => e.status === 404);
  });

  it('bulk: restart by dlqIds, resume by filter, delete by filter (REST)', async () => {
    let broken = true;
    a.route('/dlqb', sdk.serve(async (ctx: any) => {
      await ctx.run('x', () => { if (broken) throw new Error('bulk broken'); return ctx.requestPayload; });
      return ctx.requestPayload;
    }));
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await c.trigger({ url: `${a.url}/dlqb`, body: `"b${i}"`, retries: 0 })).workflowRunId);
    for (const id of ids) await runState(c, id, ['RUN_FAILED']);
    const auth = { authorization: `Bearer ${a.env.QSTASH_TOKEN}` };
    const rest = async (method: string, q: string) => {
      const r = await fetch(`${srv.base}/v2/workflows/dlq${q}`, { method, headers: auth });
      return { status: r.status, body: await r.json() as any };
    };
    const url = encodeURIComponent(`${a.url}/dlqb`);
    const listed = (await rest('GET', `?workflowUrl=${url}`)).body.messages;
    assert.equal(listed.length, 4);
    const byRun = new Map<string, string>(listed.map((m: any) => [m.workflowRunId, m.dlqId]));
    broken = false;
    const restarted = await rest('POST', `/restart?dlqIds=${byRun.get(ids[0])}&dlqIds=${byRun.get(ids[1])}`);
    assert.equal(restarted.status, 200);
    assert.equal(restarted.body.workflowRuns.length, 2);
    const resumed = await rest('POST', `/resume?workflowRunId=${ids[2]}`);
    assert.equal(resumed.body.workflowRuns.length, 1);
    for (const r of [...restarted.body.workflowRuns, ...resumed.body.workflowRuns]) {
      assert.equal((await runState(c, r.workflowRunId, ['RUN_SUCCESS'])).workflowState, 'RUN_SUCCESS');
    }
    assert.deepEqual((await rest('DELETE', `?workflowUrl=${url}`)).body, { deleted: 1 });
    assert.deepEqual((await rest('GET', `?workflowUrl=${url}`)).body.messages, []);
    assert.equal((await rest('POST', '/restart?dlqIds=nope')).status, 404);
  });
});
