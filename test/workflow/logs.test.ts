/**
 * Workflow log listings (spec section 4, seed 4.3; scenario 13): the run-grouped listing through
 * the SDK's client.logs() (filters state, label as an array (OR), workflowUrl, fromDate/toDate,
 * workflowCreatedAt, workflowRuns pairs, count 1 pagination until no cursor, the count limit),
 * GET /v2/workflows/logs (grouped and flat), trimBody, and the flat per-message view
 * GET /v2/workflows/messageLogs.
 */
import crypto from 'node:crypto';
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWf, keysOf, wfSdk, wfClient, app, runState, stepsOf, until, WTOKEN, type App, type QServer } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
let c: any;
const ids: Record<string, string> = {};
let tMid = 0;

const get = async (path: string): Promise<any> => {
  const r = await fetch(`${srv.base}${path}`, { headers: { authorization: `Bearer ${WTOKEN}` } });
  return { status: r.status, body: await r.json() };
};

before(async () => {
  srv = await startWf();
  a = await app(srv.base, await keysOf(srv.base));
  c = await wfClient(srv.base);
  const sdk = await wfSdk();
  a.route('/lg/ok', sdk.serve(async (ctx: any) => { await ctx.run('s', () => 'x'.repeat(50)); return { done: true }; }));
  a.route('/lg/fail', sdk.serve(async (ctx: any) => { await ctx.run('f', () => { throw new Error('bad'); }); }));
  a.route('/lg/sleep', sdk.serve(async (ctx: any) => { await ctx.sleep('zz', 120); }));
  ids.ok1 = (await c.trigger({ url: `${a.url}/lg/ok`, body: { k: 1 }, label: 'red' })).workflowRunId;
  await runState(c, ids.ok1, ['RUN_SUCCESS']);
  ids.ok2 = (await c.trigger({ url: `${a.url}/lg/ok`, body: { k: 2 }, label: ['blue', 'green'] })).workflowRunId;
  await runState(c, ids.ok2, ['RUN_SUCCESS']);
  tMid = Date.now();
  await new Promise((r) => setTimeout(r, 5));
  ids.fail = (await c.trigger({ url: `${a.url}/lg/fail`, retries: 0, label: 'red' })).workflowRunId;
  await runState(c, ids.fail, ['RUN_FAILED']);
  ids.sleep = (await c.trigger({ url: `${a.url}/lg/sleep`, label: 'blue' })).workflowRunId;
  await runState(c, ids.sleep, ['RUN_STARTED']);
  // The sleep step is published (its delivery pending): wait for it.
  for (let i = 0; i < 100; i++) {
    const r = (await c.logs({ workflowRunId: ids.sleep })).runs[0];
    if (stepsOf(r).some((s) => s.stepName === 'zz')) break;
    await new Promise((res) => setTimeout(res, 20));
  }
});
after(async () => {
  await a.close();
  await srv.stop();
});

describe('workflow logs', () => {
  it('13: filters: state, labels (OR), workflowUrl, dates, createdAt, pairs', async () => {
    const runIds = (r: any) => r.runs.map((x: any) => x.workflowRunId).sort();
    const all = [ids.ok1, ids.ok2, ids.fail, ids.sleep].sort();
    assert.deepEqual(runIds(await c.logs({})), all);
    assert.deepEqual(runIds(await c.logs({ filter: { state: 'RUN_SUCCESS' } })), [ids.ok1, ids.ok2].sort());
    assert.deepEqual(runIds(await c.logs({ filter: { state: 'RUN_FAILED' } })), [ids.fail]);
    assert.deepEqual(runIds(await c.logs({ filter: { state: 'RUN_STARTED' } })), [ids.sleep]);
    assert.deepEqual(runIds(await c.logs({ filter: { state: 'STEP_FAILED' } })), [ids.fail]);
    assert.deepEqual(runIds(await c.logs({ filter: { state: 'STEP_PROGRESS' } })), [ids.sleep]);
    assert.deepEqual(runIds(await c.logs({ filter: { label: 'red' } })), [ids.ok1, ids.fail].sort());
    assert.deepEqual(runIds(await c.logs({ filter: { label: ['green', 'red'] } })), [ids.ok1, ids.ok2, ids.fail].sort());
    assert.deepEqual(runIds(await c.logs({ filter: { workflowUrl: `${a.url}/lg/ok` } })), [ids.ok1, ids.ok2].sort());
    assert.deepEqual(runIds(await c.logs({ filter: { fromDate: tMid } })), [ids.fail, ids.sleep].sort());
    assert.deepEqual(runIds(await c.logs({ filter: { toDate: tMid } })), [ids.ok1, ids.ok2].sort());
    const ok1 = (await c.logs({ workflowRunId: ids.ok1 })).runs[0];
    assert.deepEqual(runIds(await c.logs({ filter: { workflowCreatedAt: ok1.workflowRunCreatedAt } })), [ids.ok1]);
    const sleepRun = (await c.logs({ workflowRunId: ids.sleep })).runs[0];
    const pairs = `${ids.ok1}@${ok1.workflowRunCreatedAt},${ids.sleep}@${sleepRun.workflowRunCreatedAt}`;
    const byPairs = await get(`/v2/workflows/logs?groupBy=workflowRunId&workflowRuns=${pairs}&state=RUN_FAILED`);
    assert.deepEqual(runIds(byPairs.body), [ids.ok1, ids.sleep].sort());
    assert.equal((await get('/v2/workflows/logs?groupBy=workflowRunId&workflowUrl=nope')).status, 400);
    assert.equal((await get('/v2/workflows/logs?groupBy=workflowRunId&state=BOGUS')).status, 400);
    assert.equal((await get('/v2/workflows/logs?groupBy=workflowRunId&cursor=%%%')).status, 400);
  });

  it('13: count 1 pages visit every run once, newest first, the last page has no cursor', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await c.logs({ cursor, count: 1 });
      pages++;
      assert.ok(r.runs.length <= 1);
      seen.push(...r.runs.map((x: any) => x.workflowRunId));
      cursor = r.cursor;
    } while (cursor !== undefined && pages < 20);
    assert.deepEqual(seen, [ids.sleep, ids.fail, ids.ok2, ids.ok1]);
    // Run mode caps count at 10.
    const big = await get('/v2/workflows/events?groupBy=workflowRunId&count=500');
    assert.equal(big.status, 200);
    assert.equal(big.body.runs.length, 4);
    assert.equal(big.body.cursor, undefined);
  });

  it('run objects: fields of seed 2.4/2.5, next groups, trimBody', async () => {
    const ok2 = (await c.logs({ workflowRunId: ids.ok2 })).runs[0];
    assert.deepEqual(ok2.labels, ['blue', 'green']);
    assert.equal(ok2.label, 'blue');
    assert.equal(ok2.workflowRunResponse, '{"done":true}');
    assert.match(ok2.workflowRunCallerIp, /127\.0\.0\.1/);
    const [init, s] = stepsOf(ok2);
    assert.equal(init.out, '{"k":2}');
    assert.match(init.messageId, /^msg_/);
    assert.equal(init.callType, 'step');
    assert.equal(init.headers['Upstash-Workflow-Sdk-Version'][0], '1');
    assert.equal(typeof s.createdAt, 'number');
    assert.equal(s.out, JSON.stringify('x'.repeat(50)));
    const sleepRun = (await c.logs({ workflowRunId: ids.sleep })).runs[0];
    const next = sleepRun.steps.at(-1);
    assert.equal(next.type, 'next');
    assert.equal(next.steps[0].state, 'STEP_PROGRESS');
    assert.ok(next.steps[0].nextDeliveryTime > Date.now() + 60_000);
    const failRun = (await c.logs({ workflowRunId: ids.fail })).runs[0];
    assert.deepEqual(failRun.steps.map((g: any) => g.type), ['sequential', 'next']);
    assert.equal(failRun.steps[1].steps[0].state, 'STEP_FAILED');
    assert.equal(failRun.steps[1].steps[0].errors[0].status, 500);
    assert.match(failRun.dlqId, /\S/);
    // trimBody: the attempts' errors keep the failing response's body whatever trimBody says
    // (as the real service shows them to client.logs()); request/response bodies are below.
    assert.equal(JSON.parse(failRun.steps[1].steps[0].errors[0].body).message, 'bad');
    const failLog = async (q: string) => (await get(`/v2/workflows/logs?groupBy=workflowRunId&workflowRunId=${ids.fail}${q}`)).body.runs[0];
    assert.equal((await failLog('&trimBody=-1')).steps[1].steps[0].errors[0].body, failRun.steps[1].steps[0].errors[0].body);
    assert.equal((await failLog('&trimBody=5')).steps[1].steps[0].errors[0].body, failRun.steps[1].steps[0].errors[0].body);
    // The flat log's ERROR events: the response body left out by default, cut, or whole.
    const errEvent = async (q: string) => (await get(`/v2/workflows/messageLogs?workflowRunId=${ids.fail}&state=ERROR${q}`)).body.events[0];
    assert.equal((await errEvent('')).responseBody, undefined);
    assert.equal((await errEvent('&trimBody=-1')).responseBody, undefined);
    assert.equal((await errEvent('&trimBody=5')).responseBody, '{"err');
    assert.equal(JSON.parse((await errEvent('&trimBody=100000')).responseBody).message, 'bad');
    const t0 = (await get(`/v2/workflows/logs?groupBy=workflowRunId&workflowRunId=${ids.ok2}&trimBody=0`)).body.runs[0];
    assert.equal(stepsOf(t0)[1].out, JSON.stringify('x'.repeat(50)));
    assert.equal(t0.workflowRunResponse, '{"done":true}');
    assert.equal((await get('/v2/workflows/logs?groupBy=workflowRunId&trimBody=-2')).status, 400);
  });

  it('flat listings: /v2/workflows/messageLogs and /v2/workflows/logs without groupBy', async () => {
    const m = await get(`/v2/workflows/messageLogs?workflowRunId=${ids.ok1}`);
    assert.equal(m.status, 200);
    const states = m.body.events.map((e: any) => e.state).reverse();
    assert.equal(states[0], 'RUN_STARTED');
    // The run ends (DELETE) while its last delivery is still in flight: DELIVERED comes last
    // (an earlier delivery's DELIVERED may also come after RUN_SUCCESS).
    assert.ok(states.includes('RUN_SUCCESS'));
    assert.equal(states.at(-1), 'DELIVERED');
    assert.ok(states.includes('CREATED') && states.includes('ACTIVE') && states.includes('DELIVERED'));
    const delivered = m.body.events.filter((e: any) => e.state === 'DELIVERED');
    assert.equal(delivered.length, 2);
    for (const e of m.body.events) {
      assert.equal(e.workflowRunId, ids.ok1);
      assert.equal(e.workflowUrl, `${a.url}/lg/ok`);
      assert.equal(typeof e.workflowCreatedAt, 'number');
      assert.equal(typeof e.time, 'number');
    }
    const withStep = m.body.events.filter((e: any) => e.stepInfo !== undefined);
    assert.ok(withStep.every((e: any) => typeof e.stepInfo.concurrent === 'number' && e.stepInfo.messageId === e.messageId));
    assert.ok(withStep.some((e: any) => e.stepInfo.stepName === 'init' && e.stepInfo.stepType === 'Initial'));
    assert.ok(withStep.some((e: any) => e.stepInfo.stepName === 's' && e.stepInfo.stepType === 'Run'));
    const success = m.body.events.find((e: any) => e.state === 'RUN_SUCCESS');
    assert.equal(success.workflowRunResponse, '{"done":true}');
    assert.equal(success.stepInfo, undefined);
    const failed = (await get(`/v2/workflows/messageLogs?workflowRunId=${ids.fail}&state=RUN_FAILED`)).body.events;
    assert.equal(failed.length, 1);
    assert.match(failed[0].dlqId, /\S/);
    const errs = (await get(`/v2/workflows/messageLogs?workflowRunId=${ids.fail}&state=ERROR`)).body.events;
    assert.equal(errs[0].responseStatus, 500);
    assert.match(errs[0].error, /500/);
    // Paging with count=2 visits everything.
    const all = (await get('/v2/workflows/messageLogs')).body.events;
    const paged: any[] = [];
    let cursor = '';
    for (let i = 0; i < 100; i++) {
      const r = (await get(`/v2/workflows/messageLogs?count=2${cursor ? `&cursor=${cursor}` : ''}`)).body;
      paged.push(...r.events);
      if (r.cursor === undefined) break;
      cursor = r.cursor;
    }
    assert.deepEqual(paged.map((e) => e.time + e.state), all.map((e: any) => e.time + e.state));
    // /v2/workflows/logs without groupBy: the same events with step states.
    const flat = (await get(`/v2/workflows/logs?workflowRunId=${ids.ok1}`)).body.events;
    assert.equal(flat.length, m.body.events.length);
    assert.ok(flat.some((e: any) => e.state === 'STEP_SUCCESS'));
    assert.ok(!flat.some((e: any) => e.state === 'DELIVERED'));
    const labelled = (await get('/v2/workflows/messageLogs?label=green&state=RUN_STARTED')).body.events;
    assert.deepEqual(labelled.map((e: any) => e.workflowRunId), [ids.ok2]);
  });

  it('indexed filters (URL, label, flow-control key, caller IP, states) page with cursors like a scan', async () => {
    const fc = `lgfc-${Math.random().toString(36).slice(2)}`;
    const fcIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      fcIds.push((await c.trigger({ url: `${a.url}/lg/ok`, body: { f: i }, flowControl: { key: fc, parallelism: 2 }, label: i === 1 ? 'fcl' : undefined })).workflowRunId);
    }
    for (const id of fcIds) await runState(c, id, ['RUN_SUCCESS']);
    const pages = async (q: string, key: 'runs' | 'events', count: number) => {
      const seen: any[] = [];
      let cursor = '';
      for (let i = 0; i < 200; i++) {
        const r = (await get(`${q}&count=${count}${cursor ? `&cursor=${cursor}` : ''}`)).body;
        seen.push(...r[key]);
        if (r.cursor === undefined) return seen;
        cursor = r.cursor;
      }
      throw new Error('no last page');
    };
    const g = '/v2/workflows/logs?groupBy=workflowRunId';
    assert.deepEqual((await pages(`${g}&flowControlKey=${fc}`, 'runs', 1)).map((r) => r.workflowRunId), [...fcIds].reverse());
    assert.deepEqual((await pages(`${g}&flowControlKey=${fc}&label=fcl`, 'runs', 1)).map((r) => r.workflowRunId), [fcIds[1]]);
    const okRuns = (await pages(`${g}&workflowUrl=${encodeURIComponent(`${a.url}/lg/ok`)}&state=RUN_SUCCESS`, 'runs', 2)).map((r) => r.workflowRunId);
    assert.deepEqual(okRuns, [...fcIds].reverse().concat([ids.ok2, ids.ok1]));
    const ip = encodeURIComponent((await c.logs({ workflowRunId: ids.fail })).runs[0].workflowRunCallerIp);
    assert.deepEqual((await pages(`${g}&callerIp=${ip}&state=RUN_FAILED&state=RUN_STARTED`, 'runs', 1)).map((r) => r.workflowRunId), [ids.sleep, ids.fail]);
    assert.deepEqual((await pages(`${g}&callerIp=10.9.9.9`, 'runs', 1)), []);
    const fromFirst = (await c.logs({ workflowRunId: fcIds[0] })).runs[0].workflowRunCreatedAt;
    assert.deepEqual((await pages(`${g}&workflowUrl=${encodeURIComponent(`${a.url}/lg/ok`)}&fromDate=${fromFirst}`, 'runs', 1)).map((r) => r.workflowRunId), [...fcIds].reverse());
    assert.deepEqual((await pages(`${g}&state=STEP_PROGRESS`, 'runs', 1)).map((r) => r.workflowRunId), [ids.sleep]);
    // Flat listings through the event indexes, checked against a full listing.
    const everything = (await get('/v2/workflows/messageLogs')).body.events;
    const expectFlat = (f: (e: any) => boolean) => everything.filter(f).map((e: any) => `${e.time}:${e.state}:${e.messageId ?? ''}`);
    const flatKeys = (es: any[]) => es.map((e) => `${e.time}:${e.state}:${e.messageId ?? ''}`);
    assert.deepEqual(flatKeys(await pages(`/v2/workflows/messageLogs?flowControlKey=${fc}`, 'events', 3)), expectFlat((e) => e.flowControlKey === fc));
    assert.deepEqual(flatKeys(await pages(`/v2/workflows/messageLogs?workflowUrl=${encodeURIComponent(`${a.url}/lg/fail`)}`, 'events', 2)), expectFlat((e) => e.workflowUrl === `${a.url}/lg/fail`));
    assert.deepEqual(flatKeys(await pages('/v2/workflows/messageLogs?state=RUN_SUCCESS&state=RUN_FAILED', 'events', 2)), expectFlat((e) => e.state === 'RUN_SUCCESS' || e.state === 'RUN_FAILED'));
    assert.deepEqual(flatKeys(await pages('/v2/workflows/messageLogs?label=fcl&label=red', 'events', 4)), expectFlat((e) => e.labels?.includes('fcl') || e.labels?.includes('red')));
    const stepOk = await pages(`/v2/workflows/logs?state=STEP_SUCCESS&workflowUrl=${encodeURIComponent(`${a.url}/lg/ok`)}`, 'events', 5);
    assert.ok(stepOk.length > 0 && stepOk.every((e) => e.state === 'STEP_SUCCESS' && e.workflowUrl === `${a.url}/lg/ok`));
    assert.equal(stepOk.length, everything.filter((e: any) => e.state === 'DELIVERED' && e.workflowUrl === `${a.url}/lg/ok`).length);
  });

  it('Upstash-Redact-Fields: run logs, flat logs and the DLQ show REDACTED:<sha256>, deliveries the real values', async () => {
    const sdk = await wfSdk();
    const seen: any = { payloads: new Set<string>() };
    a.route('/lg/red', sdk.serve(async (ctx: any) => {
      // Both runs' deliveries interleave: keep every payload delivered, not the last one.
      seen.payloads.add(JSON.stringify(ctx.requestPayload));
      seen.secret = ctx.headers.get('x-secret');
      await ctx.run('r', () => 'secret-out');
      if (ctx.requestPayload.fail) await ctx.run('f', () => { throw new Error('redacted failure'); });
    }));
    const redact = { body: true, header: ['X-Secret'] };
    const headers = { 'x-secret': 'hunter2', 'x-open': 'visible' };
    const ok = (await c.trigger({ url: `${a.url}/lg/red`, body: { pw: 'pass-one-secret' }, headers, redact })).workflowRunId;
    const bad = (await c.trigger({ url: `${a.url}/lg/red`, body: { pw: 'pass-two-secret', fail: true }, headers, redact, retries: 0 })).workflowRunId;
    const run = await runState(c, ok, ['RUN_SUCCESS']);
    await runState(c, bad, ['RUN_FAILED']);
    assert.deepEqual([...seen.payloads].sort(), ['{"pw":"pass-one-secret"}', '{"pw":"pass-two-secret","fail":true}']);
    assert.equal(seen.secret, 'hunter2');
    const sha = (v: string) => `REDACTED:${crypto.createHash('sha256').update(v).digest('hex')}`;
    const [init, r] = stepsOf(run);
    assert.equal(init.out, sha('{"pw":"pass-one-secret"}'));
    assert.equal(r.out, sha('"secret-out"'));
    for (const s of [init, r]) {
      assert.deepEqual(s.headers['X-Secret'], [sha('hunter2')]);
      assert.deepEqual(s.headers['X-Open'], ['visible']);
    }
    const events = (await get(`/v2/workflows/messageLogs?workflowRunId=${ok}`)).body.events;
    const withHeaders = events.filter((e: any) => e.headers?.['X-Secret'] !== undefined);
    assert.ok(withHeaders.length > 0 && withHeaders.every((e: any) => e.headers['X-Secret'][0] === sha('hunter2')));
    assert.ok(!JSON.stringify(events).includes('hunter2') && !JSON.stringify(events).includes('secret-out') && !JSON.stringify(events).includes('pass-one-secret'));
    const dlq = (await c.dlq.list({ filter: { workflowRunId: bad } })).messages[0];
    assert.match(dlq.body, /^REDACTED:[0-9a-f]{64}$/);
    assert.deepEqual(dlq.header['X-Secret'], [sha('hunter2')]);
    assert.deepEqual(dlq.header['X-Open'], ['visible']);
    await until(async () => (await c.logs({ workflowRunId: bad })).runs[0].failureFunction?.state === 'CALLBACK_SUCCESS', 5000, 'failure call done');
    const badEvents = (await get(`/v2/workflows/messageLogs?workflowRunId=${bad}`)).body.events;
    assert.ok(badEvents.some((e: any) => e.stepInfo?.callType === 'failureCall'));
    assert.ok(!JSON.stringify(badEvents).includes('hunter2'));
    const badRun = (await c.logs({ workflowRunId: bad })).runs[0];
    assert.ok(!JSON.stringify(badRun).includes('hunter2') && !JSON.stringify(badRun).includes('pass-two-secret'));
  });
});
