/**
 * Lazy fetch (spec section 6, scenario 17): with --qstash-workflow-lazy-fetch yes every step
 * delivery has an empty body (call callbacks keep theirs: the SDK parses a callback's body
 * before anything else), so the SDK fetches the run's entries
 * (GET /v2/workflows/runs/{id}) and slices them at its message id. Scenarios 1, 3 and 4 again:
 * same delivery counts, same results.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWf, keysOf, wfSdk, wfClient, app, runState, settle, stepsOf, type App, type QServer } from './helpers.js';
import { scenario1, scenario3, scenario4 } from './scenarios.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
let c: any;
let sdk: any;

/** URLs the SDK (in this process) fetched with GET. */
const fetched: string[] = [];
const realFetch = globalThis.fetch;

before(async () => {
  globalThis.fetch = (input: any, init?: any) => {
    const req = input instanceof Request ? input : undefined;
    if ((init?.method ?? req?.method ?? 'GET').toUpperCase() === 'GET') fetched.push(String(req?.url ?? input));
    return realFetch(input, init);
  };
  srv = await startWf({ args: ['--qstash-workflow-lazy-fetch', 'yes'] });
  a = await app(srv.base, await keysOf(srv.base));
  c = await wfClient(srv.base);
  sdk = await wfSdk();
});
after(async () => {
  globalThis.fetch = realFetch;
  await a.close();
  await srv.stop();
});

describe('lazy fetch', () => {
  it('17: scenarios 1, 3 and 4 again with empty delivery bodies: same counts, same results', async () => {
    const s1 = await scenario1(sdk, c, a, '/l1');
    const s3 = await scenario3(sdk, c, a, '/l3');
    const s4 = await scenario4(sdk, c, a, '/l4');
    const run1 = await runState(c, s1.workflowRunId, ['RUN_SUCCESS']);
    const run3 = await runState(c, s3.workflowRunId, ['RUN_SUCCESS'], 20000);
    const run4 = await runState(c, s4.workflowRunId, ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/l1', 3), 3);
    assert.equal(await settle(a, '/l3', 9), 9);
    assert.equal(await settle(a, '/l4', 5), 5);
    assert.equal(a.count('/l4-echo'), 1);
    assert.equal(a.count('/l4-broken'), 2);
    assert.equal(run1.workflowRunResponse, JSON.stringify({ x: { n: 2 }, y: 20 }));
    assert.equal(s1.seen.header, 'hello');
    assert.equal(s1.seen.label, 'demo');
    assert.deepEqual(s3.seen.results, ['one', 'two', undefined]);
    assert.deepEqual(run3.steps.map((g: any) => g.type), ['sequential', 'sequential', 'parallel', 'sequential']);
    assert.equal(s4.seen.first.status, 201);
    assert.equal(s4.seen.second.status, 500);
    assert.equal(s4.seen.second.body, 'down');
    assert.equal(run4.workflowRunResponse, '"after calls"');
    assert.equal(stepsOf(run4).filter((s) => s.stepType === 'Call').length, 2);
    for (const p of ['/l1', '/l3', '/l4']) {
      const hits = a.hits.filter((h) => h.path === p);
      const steps = hits.filter((h) => h.headers['upstash-workflow-callback'] === undefined);
      assert.ok(steps.length >= 3 && steps.every((h) => h.body === '' && h.verified === true), `${p}: empty, signed bodies`);
    }
    // The SDK fetched each run's entries itself (GET /v2/workflows/runs/{id}).
    for (const id of [s1.workflowRunId, s3.workflowRunId, s4.workflowRunId]) {
      assert.ok(fetched.some((u) => u === `${srv.base}/v2/workflows/runs/${id}`), `fetched ${id}`);
    }
  });
});
