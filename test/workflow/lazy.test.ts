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

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
let c: any;
let sdk: any;

before(async () => {
  srv = await startWf({ args: ['--qstash-workflow-lazy-fetch', 'yes'] });
  a = await app(srv.base, await keysOf(srv.base));
  c = await wfClient(srv.base);
  sdk = await wfSdk();
});
after(async () => {
  await a.close();
  await srv.stop();
});

describe('lazy fetch', () => {
  it('17: sequential, parallel and call workflows with empty delivery bodies', async () => {
    a.route('/l1', sdk.serve(async (ctx: any) => {
      const x = await ctx.run('a', () => ctx.requestPayload.n + 1);
      const y = await ctx.run('b', () => x * 2);
      return { x, y };
    }));
    let par: unknown;
    a.route('/l3', sdk.serve(async (ctx: any) => {
      await ctx.run('before', () => 'b');
      par = await Promise.all([ctx.run('p1', () => 1), ctx.run('p2', () => 2), ctx.sleep('p3', 1)]);
      await ctx.run('after', () => 'a');
    }));
    a.raw('/echo', (hit, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`echo:${hit.body}`); });
    let called: any;
    a.route('/l4', sdk.serve(async (ctx: any) => {
      called = await ctx.call('c', { url: `${a.url}/echo`, method: 'POST', body: 'ping' });
      await ctx.run('after call', () => called.body);
    }));
    const r1 = (await c.trigger({ url: `${a.url}/l1`, body: { n: 1 } })).workflowRunId;
    const r3 = (await c.trigger({ url: `${a.url}/l3` })).workflowRunId;
    const r4 = (await c.trigger({ url: `${a.url}/l4` })).workflowRunId;
    const run1 = await runState(c, r1, ['RUN_SUCCESS']);
    await runState(c, r3, ['RUN_SUCCESS'], 20000);
    const run4 = await runState(c, r4, ['RUN_SUCCESS']);
    assert.equal(await settle(a, '/l1', 3), 3);
    assert.equal(await settle(a, '/l3', 9), 9);
    assert.equal(await settle(a, '/l4', 4), 4);
    assert.equal(run1.workflowRunResponse, '{"x":2,"y":4}');
    assert.deepEqual(par, [1, 2, undefined]);
    assert.equal(called.body, 'echo:ping');
    assert.equal(stepsOf(run4).at(-1).out, '"echo:ping"');
    for (const p of ['/l1', '/l3', '/l4']) {
      const hits = a.hits.filter((h) => h.path === p);
      const steps = hits.filter((h) => h.headers['upstash-workflow-callback'] === undefined);
      assert.ok(steps.length >= 3 && steps.every((h) => h.body === '' && h.verified === true), `${p}: empty, signed bodies`);
    }
  });
});
