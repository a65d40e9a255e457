/**
 * Server-sent-event streams: /subscribe, /psubscribe and /monitor, through plain fetch and the
 * unmodified @upstash/redis SDK, mixed with TCP clients (ioredis) on the same channels.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Redis as IORedis } from 'ioredis';
import { Redis } from '@upstash/redis';
import { startOurs, type Proc } from '../helpers/server.js';
import { Rest, TOKEN, RO_TOKEN, TOKEN_ARGS } from './rest-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Open an SSE stream with fetch; collects `data:` payloads. */
async function stream(base: string, path: string, token = TOKEN) {
  const ctl = new AbortController();
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    body: '[]',
    signal: ctl.signal,
  });
  const events: string[] = [];
  let buf = '';
  const done = (async () => {
    if (!r.body) return;
    const dec = new TextDecoder();
    try {
      for await (const chunk of r.body as any) {
        buf += dec.decode(chunk, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const ev = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = ev.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
          if (data.length) events.push(data.join('\n'));
        }
      }
    } catch { /* aborted */ }
  })();
  const waitFor = async (n: number) => {
    for (let i = 0; i < 200 && events.length < n; i++) await sleep(10);
    assert.ok(events.length >= n, `expected ${n} events, got ${JSON.stringify(events)}`);
  };
  return { r, events, waitFor, close: () => { ctl.abort(); return done; } };
}

describe('SSE streams', () => {
  let srv: Proc;
  let io: IORedis;
  let base: string;
  before(async () => {
    srv = await startOurs(TOKEN_ARGS);
    io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    base = `http://127.0.0.1:${srv.httpPort}`;
  });
  after(async () => {
    io?.disconnect();
    await srv?.stop();
  });

  it('/subscribe gets messages published over TCP and REST; PUBLISH counts the stream', async () => {
    const s = await stream(base, '/subscribe/news');
    assert.equal(s.r.status, 200);
    assert.equal(s.r.headers.get('content-type'), 'text/event-stream');
    await s.waitFor(1);
    assert.equal(s.events[0], 'subscribe,news,1');
    assert.equal(await io.publish('news', 'hello, world'), 1);
    const rest = new Rest(base);
    assert.deepEqual((await rest.get('/publish/news/second')).json, { result: 1 });
    await s.waitFor(3);
    assert.deepEqual(s.events.slice(1), ['message,news,hello, world', 'message,news,second']);
    assert.deepEqual(await io.call('PUBSUB', 'NUMSUB', 'news'), ['news', 1]);
    await s.close();
    for (let i = 0; i < 100 && (await io.call('PUBSUB', 'NUMSUB', 'news') as unknown[])[1] !== 0; i++) await sleep(10);
    assert.deepEqual(await io.call('PUBSUB', 'NUMSUB', 'news'), ['news', 0], 'a closed stream is dropped at once');
  });

  it('/psubscribe with a pattern; several channels on one stream; multi-line payloads', async () => {
    const p = await stream(base, '/psubscribe/chat:*:messages');
    const m = await stream(base, '/subscribe/a/b', RO_TOKEN);
    await p.waitFor(1);
    await m.waitFor(2);
    assert.equal(p.events[0], 'psubscribe,chat:*:messages,1');
    assert.deepEqual(m.events, ['subscribe,a,1', 'subscribe,b,2']);
    assert.equal(await io.publish('chat:42:messages', '{"text":"hi"}'), 1);
    assert.equal(await io.publish('b', 'line1\nline2'), 1);
    await p.waitFor(2);
    await m.waitFor(3);
    assert.equal(p.events[1], 'pmessage,chat:*:messages,chat:42:messages,{"text":"hi"}');
    assert.equal(m.events[2], 'message,b,line1\nline2');
    await p.close();
    await m.close();
  });

  it('a TCP subscriber gets what REST publishes', async () => {
    const sub = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    const got: string[] = [];
    sub.on('message', (ch, msg) => got.push(`${ch}:${msg}`));
    await sub.subscribe('tcp-side');
    const rest = new Rest(base);
    assert.deepEqual((await rest.cmd(['PUBLISH', 'tcp-side', 'from rest'])).json, { result: 1 });
    for (let i = 0; i < 100 && got.length === 0; i++) await sleep(10);
    assert.deepEqual(got, ['tcp-side:from rest']);
    sub.disconnect();
  });

  it('/monitor streams "OK" then MONITOR lines; the read-only token may not monitor', async () => {
    const ro = await fetch(`${base}/monitor`, { method: 'POST', headers: { authorization: `Bearer ${RO_TOKEN}`, accept: 'text/event-stream' } });
    assert.equal(ro.status, 400);
    assert.match((await ro.json()).error, /NOPERM/);
    const mon = await stream(base, '/monitor');
    await mon.waitFor(1);
    assert.equal(mon.events[0], '"OK"');
    await io.set('mon-key', 'v a"l');
    await mon.waitFor(2);
    assert.match(mon.events[1], /^\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] "set" "mon-key" "v a\\"l"$/);
    await mon.close();
    const unauth = await fetch(`${base}/subscribe/x`, { method: 'POST', headers: { accept: 'text/event-stream' } });
    assert.equal(unauth.status, 401);
  });

  it('the @upstash/redis SDK subscribes and receives messages', async () => {
    const redis = new Redis({ url: base, token: TOKEN, enableTelemetry: false });
    const sub = redis.subscribe<{ n: number }>(['sdk-chan']);
    const got: unknown[] = [];
    sub.on('message', (e) => got.push(e.message));
    for (let i = 0; i < 100 && ((await io.call('PUBSUB', 'NUMSUB', 'sdk-chan')) as unknown[])[1] !== 1; i++) await sleep(10);
    await io.publish('sdk-chan', JSON.stringify({ n: 7 }));
    await redis.publish('sdk-chan', 'plain text');
    for (let i = 0; i < 100 && got.length < 2; i++) await sleep(10);
    assert.deepEqual(got, [{ n: 7 }, 'plain text']);
    await sub.unsubscribe();
  });

  it('a stream whose reader does not read is closed at the pubsub output limit; memory stays bounded', async () => {
    assert.equal(await io.call('CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub 1mb 512kb 60'), 'OK');
    // A raw HTTP request that never reads its response.
    const sock = net.connect({ port: srv.httpPort, host: '127.0.0.1' });
    await new Promise((r) => sock.once('connect', r));
    sock.write(`POST /subscribe/flood HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\nContent-Length: 0\r\n\r\n`);
    sock.pause();
    for (let i = 0; i < 100 && ((await io.call('PUBSUB', 'NUMSUB', 'flood')) as unknown[])[1] !== 1; i++) await sleep(10);
    const rssBefore = Number((await io.info('memory')).match(/used_memory_rss:(\d+)/)![1]);
    const big = 'x'.repeat(256 * 1024);
    let receivers = 1;
    for (let i = 0; i < 400 && receivers > 0; i++) receivers = await io.publish('flood', big);
    assert.equal(receivers, 0, 'the slow stream was dropped');
    const rssAfter = Number((await io.info('memory')).match(/used_memory_rss:(\d+)/)![1]);
    assert.ok(rssAfter - rssBefore < 64 * 1024 * 1024, `RSS grew by ${rssAfter - rssBefore}`);
    sock.destroy();
    assert.equal(await io.call('CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub 32mb 8mb 60'), 'OK');
  });
});
