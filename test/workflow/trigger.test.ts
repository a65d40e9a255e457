/**
 * The REST side (spec section 6, scenarios 14 and 16; seed 4.3): POST /v2/trigger/{url} and
 * POST /v2/batch/trigger through plain fetch (the unknown-SDK handshake: one extra delivery),
 * a non-workflow destination (RUN_FAILED with the detection error), /v2/notify and
 * /v2/waiters through plain fetch, and signatures (wrong keys make the SDK refuse every
 * delivery; Receiver.verify with the exact URL).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWf, keysOf, wfSdk, wfClient, app, runState, settle, stepsOf, until, WTOKEN, type App, type QServer } from './helpers.js';
import { loadSdk } from '../qstash/sdk.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
let c: any;
let sdk: any;
let keys: { current: string; next: string };

const post = async (path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> => {
  const r = await fetch(`${srv.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${WTOKEN}`, ...headers }, body });
  const text = await r.text();
  return { status: r.status, body: text === '' ? undefined : JSON.parse(text) };
};

before(async () => {
  srv = await startWf();
  keys = await keysOf(srv.base);
  a = await app(srv.base, keys);
  c = await wfClient(srv.base);
  sdk = await wfSdk();
});
after(async () => {
  await a.close();
  await srv.stop();
});

describe('REST trigger', () => {
  it('16: POST /v2/trigger/{url} to a serve endpoint: one extra delivery, config and headers kept', async () => {
    const seen: any = {};
    a.route('/t16', sdk.serve(async (ctx: any) => {
      await ctx.run('one', () => { seen.payload = ctx.requestPayload; seen.header = ctx.headers.get('x-rest'); seen.label = ctx.label; return 1; });
      return 'rest done';
    }));
    const r = await post(`/v2/trigger/${a.url}/t16`, JSON.stringify({ via: 'rest' }), {
      'content-type': 'application/json', 'Upstash-Workflow-RunId': 'wfr_rest-one', 'Upstash-Forward-X-Rest': 'fwd', 'Upstash-Retries': '1', 'Upstash-Label': 'restlabel',
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.workflowRunId, 'wfr_rest-one');
    assert.equal(typeof r.body.workflowCreatedAt, 'number');
    const run = await runState(c, 'wfr_rest-one', ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/t16', 3), 3); // the unknown-SDK delivery + the normal two
    const hits = a.hits.filter((h) => h.path === '/t16');
    assert.equal(hits[0].headers['upstash-workflow-unknown-sdk'], 'true');
    assert.equal(hits[1].headers['upstash-workflow-unknown-sdk'], undefined);
    assert.ok(hits.every((h) => h.verified === true));
    assert.deepEqual(seen.payload, { via: 'rest' });
    assert.equal(seen.header, 'fwd');
    assert.equal(seen.label, 'restlabel');
    assert.equal(run.workflowRunResponse, '"rest done"');
    assert.equal(stepsOf(run)[1].retries, 1);
    // The same run id while active is deduplicated; this one ended, so it starts again.
    const again = await post(`/v2/trigger/${a.url}/t16`, '{}', { 'Upstash-Workflow-RunId': 'wfr_rest-one' });
    assert.notEqual(again.body.workflowCreatedAt, r.body.workflowCreatedAt);
    await until(async () => (await c.logs({ workflowRunId: 'wfr_rest-one' })).runs.length === 2, 5000, 'second run');
  });

  it('16: POST /v2/batch/trigger: several runs, generated ids, deduplication', async () => {
    a.route('/tb', sdk.serve(async (ctx: any) => {
      await ctx.run('hold', async () => { await new Promise((r) => setTimeout(r, 300)); return ctx.requestPayload; });
    }));
    const body = JSON.stringify([
      { destination: `${a.url}/tb`, body: '"first"', headers: { 'Upstash-Workflow-RunId': 'wfr_batch-a', 'content-type': 'application/json' } },
      { destination: `${a.url}/tb`, body: '"second"' },
    ]);
    const r = await post('/v2/batch/trigger', body, { 'content-type': 'application/json' });
    assert.equal(r.status, 201);
    assert.equal(r.body.length, 2);
    assert.equal(r.body[0].workflowRunId, 'wfr_batch-a');
    assert.match(r.body[1].workflowRunId, /^wfr_/);
    assert.deepEqual(r.body.map((x: any) => x.deduplicated), [false, false]);
    assert.ok(r.body.every((x: any) => typeof x.workflowCreatedAt === 'number'));
    const dup = await post('/v2/batch/trigger', JSON.stringify([{ destination: `${a.url}/tb`, headers: { 'Upstash-Workflow-RunId': 'wfr_batch-a' } }]));
    assert.deepEqual(dup.body, [{ workflowRunId: 'wfr_batch-a', workflowCreatedAt: r.body[0].workflowCreatedAt, deduplicated: true }]);
    const r0 = await runState(c, 'wfr_batch-a', ['RUN_SUCCESS']);
    const r1 = await runState(c, r.body[1].workflowRunId, ['RUN_SUCCESS']);
    assert.equal(stepsOf(r0)[1].out, '"first"');
    assert.equal(stepsOf(r1)[1].out, '"second"');
    assert.equal(await settle(a, '/tb', 6), 6);
    assert.equal((await post('/v2/batch/trigger', '{"not":"an array"}')).status, 400);
    assert.equal((await post('/v2/batch/trigger', JSON.stringify([{ body: 'x' }]))).status, 400);
  });

  it('16: a non-workflow destination fails with the detection error (retries 0)', async () => {
    a.raw('/plain', (_h, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('I am not a workflow'); });
    const r = await post(`/v2/trigger/${a.url}/plain`, 'x', { 'Upstash-Retries': '0' });
    const run = await runState(c, r.body.workflowRunId, ['RUN_FAILED']);
    assert.deepEqual(run.steps.map((g: any) => g.type), ['sequential', 'next']);
    const next = run.steps[1].steps[0];
    assert.equal(next.state, 'STEP_FAILED');
    assert.equal(next.errors[0].error, 'detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint');
    assert.equal(next.errors[0].body, 'I am not a workflow');
    // The attempt, then the failure callback (a run without one calls the endpoint's failure function).
    assert.equal(await settle(a, '/plain', 2), 2);
  });
});

describe('unknown-SDK detection', () => {
  it('an endpoint answering the protocol header without an SDK version >= 1 fails the REST-triggered run', async () => {
    a.raw('/oldsdk', (_h, res) => { res.writeHead(200, { 'upstash-workflow-sdk-version': '1', 'upstash-workflow-sdk': 'v0.2.0' }); res.end('{}'); });
    const r = await post(`/v2/trigger/${a.url}/oldsdk`, 'x', { 'Upstash-Retries': '0' });
    const run = await runState(c, r.body.workflowRunId, ['RUN_FAILED']);
    assert.equal(run.steps[1].steps[0].errors[0].error, 'trigger rest api is only usable with sdk versions after v1.0.0 major version');
  });
});

describe('notify and waiters over plain HTTP', () => {
  it('POST /v2/notify/{eventId}, /v2/notify/{runId}/{eventId}, GET /v2/waiters/{eventId}', async () => {
    const got: any[] = [];
    a.route('/nw', sdk.serve(async (ctx: any) => {
      // Every delivery replays the memoized results: keep the latest.
      got[0] = await ctx.waitForEvent('w', 'plain-evt', { timeout: '1h' });
      got[1] = await ctx.waitForEvent('w2', 'plain-evt2', { timeout: '1h' });
    }));
    const { workflowRunId } = await c.trigger({ url: `${a.url}/nw` });
    const w = await until(async () => {
      const r = await fetch(`${srv.base}/v2/waiters/plain-evt`, { headers: { authorization: `Bearer ${WTOKEN}` } });
      const v = await r.json() as any[];
      return v.length === 1 ? v : undefined;
    }, 5000, 'waiter');
    assert.equal(w![0].url, `${a.url}/nw`);
    assert.equal(typeof w![0].deadline, 'number');
    assert.ok(w![0].timeoutUrl.startsWith(a.url));
    assert.equal(typeof w![0].timeoutHeaders, 'object');
    const n = await post('/v2/notify/plain-evt', '{"x":1}', { 'content-type': 'application/json' });
    assert.equal(n.status, 200);
    assert.equal(n.body.length, 1);
    assert.equal(n.body[0].workflowRunId, workflowRunId);
    assert.equal(typeof n.body[0].workflowCreatedAt, 'number');
    assert.equal(n.body[0].deduplicated, false);
    assert.equal(n.body[0].waiter.url, `${a.url}/nw`);
    await until(async () => {
      const r = await fetch(`${srv.base}/v2/waiters/plain-evt2`, { headers: { authorization: `Bearer ${WTOKEN}` } });
      return (await r.json() as any[]).length === 1;
    }, 5000, 'second waiter');
    // A run-scoped notify for another run id finds nothing there.
    assert.equal((await post('/v2/notify/wfr_nobody/plain-evt2', 'zz')).status, 404);
    // Seed 4.3: a JSON object to /v2/notify/{workflowRunId}/{eventId}; the reply of seed 2.8.
    const n2 = await post(`/v2/notify/${workflowRunId}/plain-evt2`, '{"y":[2,"two"]}', { 'content-type': 'application/json' });
    assert.equal(n2.status, 200);
    assert.equal(n2.body.length, 1);
    const res = n2.body[0];
    assert.match(res.messageId, /^msg_/);
    assert.equal(res.deduplicated, false);
    assert.equal(res.error, undefined);
    assert.equal(res.workflowRunId, workflowRunId);
    assert.equal(res.workflowCreatedAt, n.body[0].workflowCreatedAt);
    assert.equal(res.waiter.url, `${a.url}/nw`);
    assert.equal(res.waiter.timeoutUrl, `${a.url}/nw`);
    assert.equal(typeof res.waiter.deadline, 'number');
    assert.ok(res.waiter.deadline > Date.now() / 1000 + 3000); // '1h'
    assert.deepEqual(res.waiter.headers['Upstash-Workflow-Sdk-Version'], ['1']);
    assert.equal(typeof res.waiter.timeoutHeaders, 'object');
    await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.deepEqual(got, [{ eventData: { x: 1 }, timeout: false }, { eventData: { y: [2, 'two'] }, timeout: false }]);
    // The run's log: both Wait steps, with the event data as their output.
    const run = (await c.logs({ workflowRunId })).runs[0];
    assert.deepEqual(stepsOf(run).filter((s) => s.stepType === 'Wait').map((s) => [s.waitEventId, s.waitTimeout, s.state]), [
      ['plain-evt', false, 'STEP_SUCCESS'], ['plain-evt2', false, 'STEP_SUCCESS'],
    ]);
    assert.deepEqual((await post('/v2/notify/plain-evt', 'again')).body, []);
    const unauth = await fetch(`${srv.base}/v2/notify/plain-evt`, { method: 'POST', body: 'x' });
    assert.equal(unauth.status, 401);
  });
});

describe('signatures', () => {
  it('14: an app with wrong signing keys refuses deliveries (500), the run fails; Receiver.verify with the URL', async () => {
    const wrong = await app(srv.base, { current: 'sig_wrongcurrent', next: 'sig_wrongnext' });
    try {
      let ran = false;
      wrong.route('/sig', sdk.serve(async (ctx: any) => { await ctx.run('x', () => { ran = true; }); }));
      const { workflowRunId } = await c.trigger({ url: `${wrong.url}/sig`, retries: 0 });
      await runState(c, workflowRunId, ['RUN_FAILED']);
      assert.equal(ran, false);
      const h = wrong.hits.filter((x) => x.path === '/sig');
      assert.equal(h[0].status, 500);
      assert.notEqual(h[0].verified, true);
    } finally { await wrong.close(); }
    // A delivery of the good app verifies with its exact URL as `sub`, not with another.
    const { Receiver } = await loadSdk();
    const rec = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
    const d = a.hits.find((x) => x.path === '/nw')!;
    assert.equal(await rec.verify({ signature: String(d.headers['upstash-signature']), body: d.body, url: `${a.url}/nw` }), true);
    await assert.rejects(rec.verify({ signature: String(d.headers['upstash-signature']), body: d.body, url: `${a.url}/other` }));
  });
});
