/**
 * Step kinds beyond run/sleep with the unmodified SDK (spec section 6, scenarios 4, 5, 6, 11,
 * 12, 15): context.call to local endpoints (callbacks once, after the last attempt),
 * waitForEvent with notify / timeout / lookback and getWaiters, webhooks, invoke between
 * serveMany workflows (success and failure), deduplication by run id, flow control.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWf, keysOf, wfSdk, wfClient, app, runState, settle, stepsOf, sleep, until, WTOKEN, type App, type QServer } from './helpers.js';
import { scenario4 } from './scenarios.js';

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
    const { workflowRunId, seen: got } = await scenario4(sdk, c, a, '/s4');
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/s4', 5), 5);
    assert.equal(a.count('/s4-echo'), 1);
    assert.equal(a.count('/s4-broken'), 2);
    const echo = a.hits.find((h) => h.path === '/s4-echo')!;
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
    assert.equal(run.workflowState, 'RUN_SUCCESS');
    assert.equal(run.workflowRunResponse, '"after calls"');
    const calls = stepsOf(run).filter((s) => s.stepType === 'Call');
    assert.equal(calls.length, 2);
    assert.deepEqual(calls.map((s) => [s.stepName, s.state]), [['echo', 'STEP_SUCCESS'], ['broken', 'STEP_SUCCESS']]);
    assert.equal(calls[0].callUrl, `${a.url}/s4-echo`);
    assert.equal(calls[0].callMethod, 'POST');
    assert.equal(calls[0].callHeaders['x-call'], 'c1');
    assert.equal(calls[0].callResponseStatus, 201);
    assert.deepEqual(calls[0].callResponseHeaders['X-Echo'], ['yes']);
    assert.equal(calls[1].callUrl, `${a.url}/s4-broken`);
    assert.equal(calls[1].callMethod, 'PUT');
    assert.equal(calls[1].callResponseStatus, 500);
    assert.equal(JSON.parse(calls[1].out).status, 500);
    // Request and response bodies: left out by default (trimBody -1), shown with trimBody.
    assert.equal(calls[0].callBody, undefined);
    assert.equal(calls[1].callResponseBody, undefined);
    const full = (await (await fetch(`${srv.base}/v2/workflows/logs?groupBy=workflowRunId&workflowRunId=${workflowRunId}&trimBody=1000`, { headers: auth })).json() as any).runs[0];
    const fullCalls = stepsOf(full).filter((s) => s.stepType === 'Call');
    assert.equal(fullCalls[0].callBody, 'a=1&b=2');
    assert.equal(JSON.parse(fullCalls[0].callResponseBody).custom, 'c1');
    assert.equal(fullCalls[1].callResponseBody, 'down');
    // The flat log: the callback deliveries show the call and its response.
    const ev = (await (await fetch(`${srv.base}/v2/workflows/messageLogs?workflowRunId=${workflowRunId}&trimBody=100`, { headers: auth })).json() as any).events;
    const cbEvents = ev.filter((e: any) => e.stepInfo?.callType === 'fromCallback' && e.state === 'DELIVERED');
    assert.deepEqual(cbEvents.map((e: any) => [e.stepInfo.callUrl, e.stepInfo.callResponseStatus]).reverse(), [[`${a.url}/s4-echo`, 201], [`${a.url}/s4-broken`, 500]]);
    assert.equal(cbEvents[0].stepInfo.callResponseBody, 'down');
  });

  it('5: waitForEvent with notify, timeout and lookback; getWaiters', async () => {
    const id = Math.random().toString(36).slice(2);
    const got: any = {};
    a.route('/s5', sdk.serve(async (ctx: any) => {
      await ctx.run('start', () => 'started');
      got.first = await ctx.waitForEvent('wait-notify', `e1-${id}`, { timeout: 30 });
      got.second = await ctx.waitForEvent('wait-timeout', `e2-${id}`, { timeout: 1 });
      // Lookback: the event of the next wait is sent to this run before the run waits for it.
      got.early = await ctx.run('notify early', async () => c.notify({ eventId: `e3-${id}`, eventData: 'early bird', workflowRunId: ctx.workflowRunId }));
      got.third = await ctx.waitForEvent('wait-lookback', `e3-${id}`, { timeout: 30 });
      return 'waited';
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/s5` });
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
    // start, wait-notify, wait-timeout, notify early, wait-lookback (resolved at once), the end.
    assert.equal(await settle(a, '/s5', 6), 6);
    assert.deepEqual(got.first, { eventData: { hello: ['world', 1] }, timeout: false });
    assert.deepEqual(got.second, { eventData: undefined, timeout: true });
    assert.deepEqual(got.early, []);
    assert.deepEqual(got.third, { eventData: 'early bird', timeout: false });
    assert.equal(run.workflowRunResponse, '"waited"');
    assert.deepEqual(await c.getWaiters({ eventId: `e1-${id}` }), []);
    assert.deepEqual(await c.notify({ eventId: `e1-${id}`, eventData: 'late' }), []);
    const waits = stepsOf(run).filter((s) => s.stepType === 'Wait');
    assert.deepEqual(waits.map((s) => [s.stepName, s.waitEventId, s.waitTimeout]), [
      ['wait-notify', `e1-${id}`, false], ['wait-timeout', `e2-${id}`, true], ['wait-lookback', `e3-${id}`, false],
    ]);
    assert.deepEqual(waits.map((s) => s.waitTimeoutDuration), ['30s', '1s', '30s']);
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
      got.child = { payload: ctx.requestPayload, header: ctx.headers.get('x-inv'), id: ctx.workflowRunId, label: ctx.label };
      return await ctx.run('child step', () => ({ doubled: ctx.requestPayload.n * 2 }));
    });
    const failing = createWorkflow(async (ctx: any) => {
      await ctx.run('fail', () => { throw new Error('child failed'); });
    }, { retries: 0 });
    const parent = createWorkflow(async (ctx: any) => {
      const ok = await ctx.invoke('invoke child', { workflow: child, body: { n: 21 }, headers: { 'x-inv': 'iv' }, workflowRunId: `child-${ctx.workflowRunId}`, label: 'kid' });
      const bad = await ctx.invoke('invoke failing', { workflow: failing, body: 'x', retries: 0 });
      got.ok = ok;
      got.bad = bad;
      return await ctx.run('combine', () => ({ okBody: ok.body, badFailed: bad.isFailed }));
    });
    a.route('/many/*', serveMany({ parent, child, failing }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/many/parent` });
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    // parent 4 (init -> invoke, child result -> invoke, failing result -> combine, end), child 2,
    // failing child 2 (the attempt and the failure callback): 8.
    assert.equal(await settle(a, '/many/parent', 4), 4);
    assert.equal(a.count('/many/child'), 2);
    assert.equal(a.count('/many/failing'), 2);
    assert.ok(a.hits.filter((h) => h.path.startsWith('/many/')).every((h) => h.verified === true));
    assert.deepEqual(got.child.payload, { n: 21 });
    assert.equal(got.child.header, 'iv');
    assert.equal(got.child.id, `wfr_child-${workflowRunId}`);
    assert.equal(got.child.label, 'kid');
    // The invoke count reaches every delivery of the child (context.headers leaves Upstash-Workflow-* out).
    assert.ok(a.hits.filter((h) => h.path === '/many/child').every((h) => h.headers['upstash-workflow-invoke-count'] === '1'));
    assert.deepEqual(got.ok.body, { doubled: 42 });
    assert.equal(got.ok.isFailed, false);
    assert.equal(got.bad.isFailed, true);
    assert.equal(got.bad.body, undefined);
    assert.equal(run.workflowRunResponse, JSON.stringify({ okBody: { doubled: 42 }, badFailed: true }));
    const invokes = stepsOf(run).filter((s) => s.stepType === 'Invoke');
    assert.equal(invokes.length, 2);
    assert.equal(invokes[0].invokedWorkflowRunId, `wfr_child-${workflowRunId}`);
    assert.equal(invokes[0].invokedWorkflowUrl, `${a.url}/many/child`);
    assert.equal(typeof invokes[0].invokedWorkflowCreatedAt, 'number');
    assert.equal(invokes[0].invokedWorkflowRunHeaders['X-Inv'][0], 'iv');
    assert.equal(invokes[1].invokedWorkflowUrl, `${a.url}/many/failing`);
    assert.ok(invokes.every((s) => s.state === 'STEP_SUCCESS'));
    assert.deepEqual(JSON.parse(invokes[1].out), { isFailed: true, isCanceled: false });
    const invoked = (await (await fetch(`${srv.base}/v2/workflows/messageLogs?workflowRunId=${workflowRunId}&state=INVOKED&trimBody=100`, { headers: auth })).json() as any).events;
    assert.deepEqual(invoked.map((e: any) => e.stepInfo.invokedWorkflowUrl).reverse(), [`${a.url}/many/child`, `${a.url}/many/failing`]);
    assert.equal(invoked.at(-1).stepInfo.invokedWorkflowRunBody, '{"n":21}');
    assert.deepEqual(invoked.at(-1).stepInfo.invokedWorkflowRunHeaders['X-Inv'], ['iv']);
    const childRun = (await c.logs({ workflowRunId: `wfr_child-${workflowRunId}` })).runs[0];
    assert.deepEqual(childRun.invoker, { workflowRunId, workflowUrl: `${a.url}/many/parent`, workflowRunCreatedAt: run.workflowRunCreatedAt });
    assert.equal(childRun.workflowState, 'RUN_SUCCESS');
    assert.deepEqual(childRun.labels, ['kid']);
    const failedRun = (await c.logs({ workflowRunId: invokes[1].invokedWorkflowRunId })).runs[0];
    assert.equal(failedRun.workflowState, 'RUN_FAILED');
    assert.equal(failedRun.invoker.workflowRunId, workflowRunId);
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

  it('step messages are deduplicated by content (a retried delivery re-publishing its step) and by Upstash-Deduplication-Id', async () => {
    // The app runs the step (the SDK publishes its result), then answers 500 once: the server
    // delivers again, the SDK runs the step again and publishes the same result, which the
    // server recognises; the run continues once.
    let ran = 0;
    const h = sdk.serve(async (ctx: any) => {
      await ctx.run('a', () => { ran++; return 'same'; });
      return 'end';
    });
    let failedOnce = false;
    let retrySeen: () => void = () => {};
    const retried = new Promise<void>((r) => { retrySeen = r; });
    a.raw('/dd', async (hit, res) => {
      // The continuation (a's result) waits for the retried first delivery, so that the
      // re-published step arrives while the run is still going.
      if (hit.headers['upstash-retried'] === '1') retrySeen();
      else if (failedOnce) await retried;
      const headers = new Headers();
      for (const [k, v] of Object.entries(hit.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      const r = await h.fetch(new Request(`${a.url}${hit.path}`, { method: hit.method, headers, body: hit.body }), a.env);
      const out = Buffer.from(await r.arrayBuffer());
      const rh: Record<string, string> = {};
      r.headers.forEach((v: string, k: string) => { rh[k] = v; });
      if (!failedOnce) { failedOnce = true; res.writeHead(500); res.end('lost answer'); return; }
      res.writeHead(r.status, rh);
      res.end(out);
    });
    const { workflowRunId } = await c.trigger({ url: `${a.url}/dd`, retryDelay: '100' });
    const run = await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/dd', 3), 3); // init (500), init again, a's result (once)
    assert.equal(ran, 2);
    assert.deepEqual(stepsOf(run).map((x) => x.stepName), ['init', 'a']);
    assert.equal(run.workflowRunResponse, '"end"');

    // Published by hand to an active run: the same content twice, the same id twice.
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => { open = r; });
    a.route('/dd2', sdk.serve(async (ctx: any) => { await ctx.run('hold', async () => { await gate; return 1; }); }));
    a.raw('/dd-sink', (_hit, res) => { res.writeHead(200, { 'upstash-workflow-sdk-version': '1' }); res.end('{}'); });
    const held = (await c.trigger({ url: `${a.url}/dd2` })).workflowRunId;
    await until(() => a.count('/dd2') >= 1, 5000, 'held run started');
    const publish = async (body: string, extra: Record<string, string> = {}) => (await (await fetch(`${srv.base}/v2/batch`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify([{ destination: `${a.url}/dd-sink`, body, headers: { 'upstash-workflow-runid': held, 'upstash-workflow-init': 'false', 'content-type': 'application/json', ...extra } }]),
    })).json() as any[])[0];
    const step = (n: number) => JSON.stringify({ stepId: 100 + n, stepName: `manual${n}`, stepType: 'Run', out: '"x"', concurrent: 1 });
    const p1 = await publish(step(1));
    const p2 = await publish(step(1));
    assert.equal(p1.deduplicated, undefined);
    assert.deepEqual(p2, { messageId: p1.messageId, url: `${a.url}/dd-sink`, deduplicated: true });
    const i1 = await publish(step(2), { 'upstash-deduplication-id': 'dd-one' });
    const i2 = await publish(step(3), { 'upstash-deduplication-id': 'dd-one' });
    assert.equal(i2.deduplicated, true);
    assert.equal(i2.messageId, i1.messageId);
    const cb = await publish(step(4), { 'upstash-content-based-deduplication': 'true' });
    assert.equal(cb.deduplicated, undefined);
    assert.equal(await settle(a, '/dd-sink', 3), 3);
    const entries = await (await fetch(`${srv.base}/v2/workflows/runs/${held}`, { headers: auth })).json() as any[];
    const names = entries.slice(1).map((e) => JSON.parse(Buffer.from(e.body, 'base64').toString()).stepName);
    assert.deepEqual(names, ['manual1', 'manual2', 'manual4']);
    assert.deepEqual(await c.cancel({ ids: held }), { cancelled: 1 });
    open();
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
