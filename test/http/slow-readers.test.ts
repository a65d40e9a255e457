/**
 * Memory held for readers that never read, in total: 100 SSE /subscribe streams, 20 TCP
 * subscribers and an SSE /monitor stream that never read, while 350 messages of 64 KB are
 * published. Each stays under its own pub/sub output-buffer limit (32 MB), so only the total
 * budget (pubsub-output-total-limit) bounds the process: its RSS stays within a few hundred MB
 * (it reached 1.92 GB without it), the biggest readers are cut first, INFO reports it, and
 * the server keeps serving.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { Redis as IORedis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';
import { TOKEN, TOKEN_ARGS } from './rest-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? 0 : Number(m[1]) / 1024;
}

/** A raw socket that sends one request and then never reads (its kernel buffer fills). */
function stuckReader(port: number, request: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => {
      s.write(request, () => {
        s.pause();
        resolve(s);
      });
    });
    s.setNoDelay(true);
    s.on('error', () => { /* cut off by the server: expected */ });
    s.once('error', reject);
  });
}

function info(r: IORedis, field: string, text: string): number {
  const m = new RegExp(`^${field}:(\\d+)`, 'm').exec(text);
  assert.ok(m, `INFO has ${field}`);
  return Number(m[1]);
}

describe('slow pub/sub readers share one output budget', () => {
  let srv: Proc;
  let r: IORedis;
  const readers: net.Socket[] = [];

  before(async () => {
    srv = await startOurs(TOKEN_ARGS);
    r = new IORedis({ port: srv.port, lazyConnect: true });
    await r.connect();
  });
  after(async () => {
    for (const s of readers) s.destroy();
    r.disconnect();
    await srv.stop();
  });

  it('100 SSE + 20 TCP subscribers + SSE monitor that never read: RSS stays bounded, the largest are cut', async (t) => {
    const sse = (path: string) => `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 0\r\n\r\n`;
    for (let i = 0; i < 100; i++) readers.push(await stuckReader(srv.httpPort, sse('/subscribe/feed')));
    for (let i = 0; i < 20; i++) readers.push(await stuckReader(srv.port, '*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nfeed\r\n'));
    readers.push(await stuckReader(srv.httpPort, sse('/monitor')));
    await sleep(200);
    const pid = srv.proc.pid!;
    const before = rssMb(pid);
    assert.ok((await r.pubsub('NUMSUB', 'feed'))[1] as number >= 120, 'every subscriber is registered');

    const payload = Buffer.alloc(64 * 1024, 'x');
    let peak = before;
    for (let i = 0; i < 350; i++) {
      await r.publish('feed', payload);
      if (i % 10 === 0) { peak = Math.max(peak, rssMb(pid)); await sleep(20); }
    }
    await sleep(300);
    peak = Math.max(peak, rssMb(pid));

    t.diagnostic(`RSS ${Math.round(before)} MB before, peak ${Math.round(peak)} MB`);
    // Without the budget this reached 1.92 GB (each reader holds up to 22 MB here).
    assert.ok(peak - before < 400, `RSS grew by ${Math.round(peak - before)} MB (from ${Math.round(before)} MB)`);
    const text = await r.info();
    const limit = info(r, 'pubsub_output_total_limit', text);
    assert.equal(limit, 128 * 1024 * 1024, 'the default budget');
    assert.ok(info(r, 'pubsub_output_queued', text) <= limit, 'what stays queued is within the budget');
    assert.ok(info(r, 'evicted_clients', text) > 0, 'readers were cut');
    assert.ok(info(r, 'mem_clients_normal', text) > 0);
    assert.match(srv.output(), /closed for overcoming of the total pub\/sub output limit/);

    // Still serving, over TCP and HTTP.
    assert.equal(await r.ping(), 'PONG');
    const res = await fetch(`http://127.0.0.1:${srv.httpPort}/ping`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.deepEqual(await res.json(), { result: 'PONG' });
  });

  it('CONFIG SET pubsub-output-total-limit: 0 turns it off; a small one cuts at once', async () => {
    assert.deepEqual(await r.config('GET', 'pubsub-output-total-limit'), ['pubsub-output-total-limit', String(128 * 1024 * 1024)]);
    for (const s of readers.splice(0)) s.destroy();
    await sleep(300);
    await r.config('SET', 'pubsub-output-total-limit', '1mb');
    const before = info(r, 'evicted_clients', await r.info());
    const sub = await stuckReader(srv.httpPort, `POST /subscribe/small HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 0\r\n\r\n`);
    readers.push(sub);
    await sleep(100);
    // The kernel buffers a few MB first; then uWS queues and the budget cuts.
    const big = Buffer.alloc(512 * 1024, 'y');
    for (let i = 0; i < 60 && info(r, 'evicted_clients', await r.info()) === before; i++) await r.publish('small', big);
    assert.ok(info(r, 'evicted_clients', await r.info()) > before);
    assert.equal(await r.publish('small', 'x'), 0, 'the stream is gone');
    await r.config('SET', 'pubsub-output-total-limit', '0');
  });
});
