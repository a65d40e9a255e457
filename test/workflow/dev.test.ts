/**
 * QSTASH_DEV=true (spec section 6, scenario 20): an app in the SDK's dev mode against our server
 * started with --qstash-dev-credentials yes. The SDK probes GET /v2/keys with the dev token,
 * finds the dev keys, and uses the server instead of downloading its own binary. The port comes
 * from QSTASH_DEV_PORT (8080 by default) so that the test does not need port 8080.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from '../helpers/server.js';
import { startQ, until, type QServer } from '../qstash/helpers.js';
import { app, runState, settle, type App } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let srv: QServer;
let a: App;
const logs: string[] = [];

before(async () => {
  const port = await freePort();
  process.env.QSTASH_DEV = 'true';
  process.env.QSTASH_DEV_PORT = String(port);
  srv = await startQ({ httpPort: port, args: ['--qstash-dev-credentials', 'yes'] });
  const orig = console.log;
  console.log = (...args: unknown[]) => { logs.push(args.join(' ')); orig(...args); };
});
after(async () => {
  await a?.close();
  await srv.stop();
});

describe('dev mode', () => {
  it('20: QSTASH_DEV=true uses our server with the dev credentials, no download', async () => {
    const { Client } = await import('@upstash/workflow' as string);
    const sdk = await import('@upstash/workflow/cloudflare' as string);
    // No URL, token or keys anywhere: dev mode supplies them.
    a = await app(srv.base, { current: 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r', next: 'sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs' });
    a.env = { QSTASH_DEV: 'true', QSTASH_DEV_PORT: process.env.QSTASH_DEV_PORT! };
    let seen: any;
    a.route('/dev', sdk.serve(async (ctx: any) => { seen = await ctx.run('x', () => ctx.requestPayload); }));
    const c = new Client();
    const { workflowRunId } = await c.trigger({ url: `${a.url}/dev`, body: { dev: 1 } });
    await runState(c, workflowRunId, ['RUN_SUCCESS']);
    assert.deepEqual(seen, { dev: 1 });
    assert.equal(await settle(a, '/dev', 2), 2);
    assert.ok(a.hits.every((h) => h.verified === true));
    await until(() => logs.some((l) => l.includes('Server already running')), 2000, 'dev server detected');
    assert.ok(!logs.some((l) => /Downloading/.test(l)));
  });
});
