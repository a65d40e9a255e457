/**
 * Workflows of spec section 6 that more than one test file runs (scenarios 1, 3 and 4 run
 * again under lazy fetch, scenario 17): each registers its routes on the app, triggers one run
 * the way the spec's table describes it, and returns what the workflow saw, so that every file
 * asserts the same delivery counts and results.
 */
import type { App } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Scenario 1: run x2 returning an object; trigger with body, header, label. 3 deliveries. */
export async function scenario1(sdk: any, c: any, a: App, path: string): Promise<{ workflowRunId: string; seen: any }> {
  const seen: any = {};
  a.route(path, sdk.serve(async (ctx: any) => {
    const x = await ctx.run('a', () => ({ n: ctx.requestPayload.n + 1 }));
    const y = await ctx.run('b', async () => x.n * 10);
    seen.header = ctx.headers.get('x-custom');
    seen.label = ctx.label;
    seen.payload = ctx.requestPayload;
    return { x, y };
  }));
  const { workflowRunId } = await c.trigger({ url: `${a.url}${path}`, body: { n: 1 }, headers: { 'x-custom': 'hello' }, label: 'demo' });
  return { workflowRunId, seen };
}

/** Scenario 3: run, Promise.all([run, run, sleep 1]), run. 9 deliveries (1 + 1 + 3 + 3 + 1). */
export async function scenario3(sdk: any, c: any, a: App, path: string): Promise<{ workflowRunId: string; seen: any }> {
  const seen: any = {};
  a.route(path, sdk.serve(async (ctx: any) => {
    await ctx.run('before', () => 'b');
    seen.results = await Promise.all([ctx.run('p1', () => 'one'), ctx.run('p2', () => 'two'), ctx.sleep('p3', 1)]);
    await ctx.run('after', () => 'a');
  }));
  const { workflowRunId } = await c.trigger({ url: `${a.url}${path}` });
  return { workflowRunId, seen };
}

/**
 * Scenario 4: context.call POST to a local echo endpoint (201, a custom response header, a
 * form content-type), then a call to an endpoint answering 500 with retries 1 and retryDelay
 * "100". 5 deliveries (callbacks once, after the last attempt); the run continues.
 */
export async function scenario4(sdk: any, c: any, a: App, path: string): Promise<{ workflowRunId: string; seen: any }> {
  a.raw(`${path}-echo`, (hit, res) => {
    res.writeHead(201, { 'content-type': 'application/json', 'x-echo': 'yes' });
    res.end(JSON.stringify({ method: hit.method, body: hit.body, ct: hit.headers['content-type'], custom: hit.headers['x-call'] }));
  });
  a.raw(`${path}-broken`, (_hit, res) => { res.writeHead(500, { 'content-type': 'text/plain' }); res.end('down'); });
  const seen: any = {};
  a.route(path, sdk.serve(async (ctx: any) => {
    seen.first = await ctx.call('echo', {
      url: `${a.url}${path}-echo`, method: 'POST', body: 'a=1&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-call': 'c1' },
    });
    seen.second = await ctx.call('broken', { url: `${a.url}${path}-broken`, method: 'PUT', retries: 1, retryDelay: '100' });
    return 'after calls';
  }));
  const { workflowRunId } = await c.trigger({ url: `${a.url}${path}`, headers: { 'x-trigger': 't4' } });
  return { workflowRunId, seen };
}
