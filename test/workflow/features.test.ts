/**
 * Step kinds beyond run/sleep with the unmodified SDK (spec section 6, scenarios 4, 5, 6, 11,
 * 12, 15): context.call to local endpoints (callbacks once, after the last attempt),
 * waitForEvent with notify / timeout / lookback and getWaiters, webhooks, invoke between
 * serveMany workflows (success and failure), deduplication by run id, flow control.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWf, keysOf, wfSdk, wfClient, app, runState, settle, stepsOf, sleep, until, WTOKEN, type App, type QServer } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
let c: any;
let sdk: any;

before(async () => {
  srv = await startWf();
  a = await app(srv.base, await keysOf(srv.base));
  c = await wfClient(srv.base);
  sdk = await wfSdk();
});
after(async () => {
  await a.close();
  await srv.stop();
});

const auth = { authorization: `Bearer ${WTOKEN}` };

describe('workflow steps', () => {
  it('4: context.call to an echo endpoint and to a failing one (retries 1)', async () => {
    a.raw('/echo', (hit, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-echo': 'yes' });
      res.end(JSON.stringify({ method: hit.method, body: hit.body, ct: hit.headers['content-type'], custom: hit.headers['x-call'] }));
    });
    a.raw('/broken', (_hit, res) => { res.writeHead(500, { 'content-type': 'text/plain' }); res.end('down'); });
    const got: any = {};
    a.route('/s4', sdk.serve(async (ctx: any) => {
      got.first = await ctx.call('echo', { url: `${a.url}/echo`, method: 'POST', body: 'a=1&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-call': 'c1' } });
      got.second = await ctx.call('broken', { url: `${a.url}/broken`, method: 'PUT', retries: 1, retryDelay: '100' });
      return 'after calls';
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s4`, headers: { 'x-trigger': 't4' } });
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/s4', 5), 5);
    assert.equal(a.count('/echo'), 1);
    assert.equal(a.count('/broken'), 2);
    const echo = a.hits.find((h) => h.path === '/echo')!;
    assert.equal(echo.method, 'POST');
    assert.equal(echo.body, 'a=1&b=2');
    assert.equal(echo.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(echo.headers['x-call'], 'c1');
    assert.equal(echo.headers['x-trigger'], undefined); // the request goes out unchanged
    assert.equal(echo.verified, true);
    assert.equal(got.first.status, 201);
    assert.deepEqual(got.first.body, { method: 'POST', body: 'a=1&b=2', ct: 'application/x-www-form-urlencoded', custom: 'c1' });
    assert.equal(new Headers(got.first.header).get('x-echo'), 'yes');
    assert.equal(got.second.status, 500);
    assert.equal(got.second.body, 'down');
    // The callbacks carry the run's forwarded header and no protocol header.
    const callbacks = a.hits.filter((h) => h.path === '/s4' && h.headers['upstash-workflow-callback'] === 'true');
    assert.equal(callbacks.length, 2);
    assert.ok(callbacks.every((h) => h.headers['x-trigger'] === 't4' && h.headers['upstash-workflow-sdk-version'] === undefined));
    assert.ok(a.hits.filter((h) => h.path === '/s4').every((h) => h.verified === true));
    const calls = stepsOf(run).filter((s) => s.stepType === 'Call');
    assert.equal(calls.length, 2);
    assert.equal(calls[0].callUrl, `${a.url}/echo`);
    assert.equal(calls[0].callMethod, 'POST');
    assert.equal(calls[0].callBody, 'a=1&b=2');
    assert.equal(calls[0].callResponseStatus, 201);
    assert.equal(calls[1].callResponseStatus, 500);
    assert.equal(calls[1].callResponseBody, 'down');
    assert.equal(calls[1].state, 'STEP_SUCCESS');
    assert.equal(JSON.parse(calls[1].out).status, 500);
  });

  it('5: waitForEvent with notify, timeout and lookback; getWaiters', async () => {
    const id = Math.random().toString(36).slice(2);
    const got: any = {};
    a.route('/s5', sdk.serve(async (ctx: any) => {
      got.first = await ctx.waitForEvent('wait-notify', `e1-${id}`, { timeout: 30 });
      got.second = await ctx.waitForEvent('wait-timeout', `e2-${id}`, { timeout: 1 });
      got.third = await ctx.waitForEvent('wait-lookback', `e3-${id}`, { timeout: 30 });
      return 'waited';
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s5` });
    // Lookback: this event arrives before the run waits for it.
    const early = await c.notify({ eventId: `e3-${id}`, eventData: 'early bird', workflowRunId });
    assert.deepEqual(early, []);
    const waiters = await until(async () => { const w = await c.getWaiters({ eventId: `e1-${id}` }); return w.length > 0 ? w : undefined; }, 5000, 'waiter');
    assert.equal(waiters.length, 1);
    assert.equal(waiters[0].url, `${a.url}/s5`);
    assert.ok(waiters[0].deadline > Date.now() / 1000 + 20);
    const r = await c.notify({ eventId: `e1-${id}`, eventData: { hello: ['world', 1] } });
    assert.equal(r.length, 1);
    assert.equal(r[0].workflowRunId, workflowRunId);
    assert.match(r[0].messageId, /^msg_/);
    assert.equal(r[0].waiter.url, `${a.url}/s5`);
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.deepEqual(got.first, { eventData: { hello: ['world', 1] }, timeout: false });
    assert.deepEqual(got.second, { eventData: undefined, timeout: true });
    assert.deepEqual(got.third, { eventData: 'early bird', timeout: false });
    assert.equal(await settle(a, '/s5', 4), 4);
    assert.deepEqual(await c.getWaiters({ eventId: `e1-${id}` }), []);
    assert.deepEqual(await c.notify({ eventId: `e1-${id}`, eventData: 'late' }), []);
    const waits = stepsOf(run).filter((s) => s.stepType === 'Wait');
    assert.deepEqual(waits.map((s) => [s.waitEventId, s.waitTimeout]), [[`e1-${id}`, false], [`e2-${id}`, true], [`e3-${id}`, false]]);
    assert.equal(waits[0].waitTimeoutDuration, '30s');
    assert.ok(waits.every((s) => s.state === 'STEP_SUCCESS'));
  });

  it('15: createWebhook, a helper hits the URL before the wait, waitForWebhook', async () => {
    let helperCall: any;
    a.raw('/hook-helper', async (hit, res) => {
      const { webhookUrl } = JSON.parse(hit.body);
      helperCall = webhookUrl;
      const r = await fetch(`${webhookUrl}?q=1`, { method: 'PUT', headers: { 'x-hook': 'h1', 'content-type': 'text/plain' }, body: 'hook body' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: r.status }));
    });
    const got: any = {};
    a.route('/s15', sdk.serve(async (ctx: any) => {
      const hook = await ctx.createWebhook('make hook');
      got.url = hook.webhookUrl;
      await ctx.call('call helper', { url: `${a.url}/hook-helper`, method: 'POST', body: { webhookUrl: hook.webhookUrl } });
      const r = await ctx.waitForWebhook('wait hook', hook, 30);
      got.timeout = r.timeout;
      got.method = r.request.method;
      got.reqUrl = r.request.url;
      got.header = r.request.headers.get('x-hook');
      got.body = await r.request.text();
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s15` });
    await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/s15', 5), 5);
    assert.match(got.url, new RegExp(`^${srv.base}/v2/workflows/hooks/testUser/${workflowRunId}/evt_`));
    assert.equal(helperCall, got.url);
    assert.equal(got.timeout, false);
    assert.equal(got.method, 'PUT');
    assert.equal(got.reqUrl, `${got.url}?q=1`);
    assert.equal(got.header, 'h1');
    assert.equal(got.body, 'hook body');
    const run = (await c.logs({ workflowRunId })).runs[0];
    assert.ok(stepsOf(run).some((s) => s.stepType === 'WaitForWebhook' && s.state === 'STEP_SUCCESS'));
  });

  it('6: invoke between serveMany workflows: a child that returns, a child that fails', async () => {
    const got: any = {};
    const { createWorkflow, serveMany } = sdk;
    const child = createWorkflow(async (ctx: any) => {
      got.child = { payload: ctx.requestPayload, header: ctx.headers.get('x-inv'), id: ctx.workflowRunId, label: ctx.label, count: ctx.headers.get('upstash-workflow-invoke-count') };
      const v = await ctx.run('child step', () => ({ doubled: ctx.requestPayload.n * 2 }));
      return v;
    });
    const failing = createWorkflow(async (ctx: any) => {
      await ctx.run('fail', () => { throw new Error('child failed'); });
    }, { retries: 0 });
    const parent = createWorkflow(async (ctx: any) => {
      got.ok = await ctx.invoke('invoke child', { workflow: child, body: { n: 21 }, headers: { 'x-inv': 'iv' }, workflowRunId: `child-${ctx.workflowRunId}`, label: 'kid' });
      got.bad = await ctx.invoke('invoke failing', { workflow: failing, body: 'x', retries: 0 });
      return 'parent done';
    });
    a.route('/many/*', serveMany({ parent, child, failing }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/many/parent` });
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    await settle(a, '/many/parent', 3);
    assert.equal(a.count('/many/parent'), 3);
    assert.equal(a.count('/many/child'), 2);
    assert.equal(a.count('/many/failing'), 2); // the attempt and the failure callback
    assert.deepEqual(got.child.payload, { n: 21 });
    assert.equal(got.child.header, 'iv');
    assert.equal(got.child.id, `wfr_child-${workflowRunId}`);
    assert.equal(got.child.label, 'kid');
    assert.deepEqual(got.ok.body, { doubled: 42 });
    assert.equal(got.ok.isFailed, false);
    assert.equal(got.bad.isFailed, true);
    assert.equal(got.bad.body, undefined);
    const invokes = stepsOf(run).filter((s) => s.stepType === 'Invoke');
    assert.equal(invokes.length, 2);
    assert.equal(invokes[0].invokedWorkflowRunId, `wfr_child-${workflowRunId}`);
    assert.equal(invokes[0].invokedWorkflowUrl, `${a.url}/many/child`);
    assert.equal(typeof invokes[0].invokedWorkflowCreatedAt, 'number');
    assert.equal(invokes[0].state, 'STEP_SUCCESS');
    const childRun = (await c.logs({ workflowRunId: `wfr_child-${workflowRunId}` })).runs[0];
    assert.deepEqual(childRun.invoker, { workflowRunId, workflowUrl: `${a.url}/many/parent`, workflowRunCreatedAt: run.workflowRunCreatedAt });
    assert.equal(childRun.workflowState, 'RUN_SUCCESS');
  });
});

describe('parallel special steps and invoke endings', () => {
  it('a parallel block of a wait, a call, an invoke and a run', async () => {
    a.raw('/pecho', (hit, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`got ${hit.body}`); });
    const id = Math.random().toString(36).slice(2);
    let out: any;
    const { createWorkflow, serveMany } = sdk;
    const kid = createWorkflow(async (ctx: any) => ctx.run('k', () => `kid:${ctx.requestPayload}`));
    const main = createWorkflow(async (ctx: any) => {
      out = await Promise.all([
        ctx.waitForEvent('pw', `pw-${id}`, { timeout: 30 }),
        ctx.call('pc', { url: `${a.url}/pecho`, method: 'POST', body: 'b' }),
        ctx.invoke('pi', { workflow: kid, body: 'x' }),
        ctx.run('pr', () => 'r'),
      ]);
      await ctx.run('after', () => 'done');
    });
    a.route('/pm/*', serveMany({ main, kid }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/pm/main` });
    await until(async () => (await c.getWaiters({ eventId: `pw-${id}` })).length === 1, 5000, 'parallel waiter');
    // While the wait runs, the log shows the block with the wait in progress.
    const mid = (await c.logs({ workflowRunId })).runs[0];
    const block = mid.steps.find((g: any) => g.type === 'parallel');
    assert.equal(block.steps.length, 4);
    assert.equal(block.steps.find((s: any) => s.stepName === 'pw').state, 'STEP_PROGRESS');
    await c.notify({ eventId: `pw-${id}`, eventData: 'ev' });
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.deepEqual(out[0], { eventData: 'ev', timeout: false });
    assert.equal(out[1].body, 'got b');
    assert.equal(out[2].body, 'kid:x');
    assert.equal(out[3], 'r');
    const par = run.steps.find((g: any) => g.type === 'parallel').steps;
    assert.deepEqual(par.map((s: any) => [s.stepName, s.stepType, s.state, s.concurrent]), [
      ['pw', 'Wait', 'STEP_SUCCESS', 4], ['pc', 'Call', 'STEP_SUCCESS', 4], ['pi', 'Invoke', 'STEP_SUCCESS', 4], ['pr', 'Run', 'STEP_SUCCESS', 4],
    ]);
    assert.equal(run.steps.at(-1).steps[0].stepName, 'after');
  });

  it('a child that ends after its parent was cancelled does not deliver to the parent', async () => {
    const { createWorkflow, serveMany } = sdk;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => { release = r; });
    const slow = createWorkflow(async (ctx: any) => { await ctx.run('hold', async () => { await held; return 1; }); return 'late'; });
    const boss = createWorkflow(async (ctx: any) => { await ctx.invoke('inv', { workflow: slow, body: 'x' }); await ctx.run('never', () => 1); });
    a.route('/pc/*', serveMany({ boss, slow }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/pc/boss` });
    await until(() => a.count('/pc/slow') >= 1, 5000, 'child started');
    assert.deepEqual(await c.cancel({ ids: workflowRunId }), { cancelled: 1 });
    release();
    const childRuns = await until(async () => {
      const r = (await c.logs({ filter: { workflowUrl: `${a.url}/pc/slow` } })).runs;
      return r.length === 1 && r[0].workflowState === 'RUN_SUCCESS' ? r : undefined;
    }, 10000, 'child done');
    assert.equal(childRuns![0].invoker.workflowRunId, workflowRunId);
    await sleep(300);
    assert.equal(a.count('/pc/boss'), 1);
    const parent = (await c.logs({ workflowRunId })).runs[0];
    assert.equal(parent.workflowState, 'RUN_CANCELED');
    assert.equal(stepsOf(parent).find((s) => s.stepType === 'Invoke').state, 'STEP_CANCELED');
  });
});

describe('deduplication, labels, flow control', () => {
  it('11: a second trigger of an active run id is deduplicated; after completion it starts a new run', async () => {
    // A gate made before the run reaches its step (the step may start after the request arrives).
    const gate = () => { let open: () => void = () => {}; const p = new Promise<void>((r) => { open = r; }); return { p, open }; };
    let g = gate();
    a.route('/s11', sdk.serve(async (ctx: any) => {
      await ctx.run('hold', async () => { await g.p; return 1; });
    }));
    const runId = `wfr_dedup-${Math.random().toString(36).slice(2)}`;
    const item = (body: string) => ({
      destination: `${a.url}/s11`, body,
      headers: {
        'upstash-workflow-init': 'true', 'upstash-workflow-runid': runId, 'upstash-workflow-url': `${a.url}/s11`,
        'upstash-forward-upstash-workflow-sdk-version': '1', 'upstash-feature-set': 'LazyFetch,InitialBody,WF_DetectTrigger,WF_TriggerOnConfig',
        'content-type': 'application/json', 'upstash-method': 'POST',
      },
    });
    const post = async (body: string) => (await fetch(`${srv.base}/v2/batch`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify([item(body)]) })).json() as Promise<any[]>;
    const first = await post('"one"');
    assert.equal(first[0].deduplicated, undefined);
    const second = await post('"two"');
    assert.equal(second[0].deduplicated, true);
    assert.equal(second[0].messageId, first[0].messageId);
    await until(() => a.count('/s11') >= 1, 5000, 'first delivery');
    g.open();
    await runState(c, runId, ['RUN_SUCCESS']);
    g = gate();
    assert.equal((await c.logs({ workflowRunId: runId })).runs.length, 1);
    const third = await post('"three"');
    assert.equal(third[0].deduplicated, undefined);
    await until(async () => (await c.logs({ workflowRunId: runId })).runs.length === 2, 5000, 'a second run');
    await until(() => a.count('/s11') >= 3, 5000, 'second run delivery');
    g.open();
    const runs = (await c.logs({ workflowRunId: runId })).runs;
    assert.notEqual(runs[0].workflowRunCreatedAt, runs[1].workflowRunCreatedAt);
    assert.equal(stepsOf(runs[0])[0].out, '"three"');
    assert.equal(stepsOf(runs[1])[0].out, '"one"');
  });

  it('12: flow control parallelism 1 across runs, and a rate', async () => {
    const key = `fc-${Math.random().toString(36).slice(2)}`;
    a.route('/fc/p', sdk.serve(async (ctx: any) => {
      await ctx.run('slow', async () => { await sleep(150); return 1; });
      await ctx.run('slow2', async () => { await sleep(150); return 2; });
    }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await c.trigger({ url: `${a.url}/fc/p`, flowControl: { key, parallelism: 1 } })).workflowRunId);
    const info = await (await fetch(`${srv.base}/v2/flowControl/${key}`, { headers: auth })).json() as any;
    assert.equal(info.flowControlKey, key);
    assert.equal(info.parallelismMax, 1);
    for (const id of ids) await runState(c, id, ['RUN_SUCCESS'], 20000);
    assert.equal(a.maxConcurrent.get('/fc'), 1);
    assert.equal(a.count('/fc/p'), 9);
    const run = (await c.logs({ workflowRunId: ids[0] })).runs[0];
    assert.equal(run.flowControlKey, key);
    // rate 2 per second: 6 deliveries of 2 runs take at least 2 seconds.
    const rkey = `${key}-rate`;
    a.route('/fcr', sdk.serve(async (ctx: any) => { await ctx.run('r', () => 1); }));
    const t0 = Date.now();
    const rids: string[] = [];
    for (let i = 0; i < 3; i++) rids.push((await c.trigger({ url: `${a.url}/fcr`, flowControl: { key: rkey, rate: 2, period: 1 } })).workflowRunId);
    for (const id of rids) await runState(c, id, ['RUN_SUCCESS'], 20000);
    const hits = a.hits.filter((h) => h.path === '/fcr').map((h) => h.at);
    assert.equal(hits.length, 6);
    assert.ok(hits[5] - t0 >= 2000, `6 deliveries at rate 2/s took ${hits[5] - t0}ms`);
  });
});
