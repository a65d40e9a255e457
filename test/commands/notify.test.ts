/**
 * Keyspace notifications with real clients: ioredis and node-redis subscribers over TCP, an
 * SSE stream over REST, expiry by lazy and active expiry, `new` and `keymiss`, eviction. The
 * event-by-event comparison with redis-server over the whole corpus is test/diff/events.test.ts.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { startOurs, type Proc } from '../helpers/server.js';
import { TOKEN, TOKEN_ARGS } from '../http/rest-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string, ms = 3000): Promise<void> {
  for (let t = 0; t < ms && !cond(); t += 10) await sleep(10);
  assert.ok(cond(), what);
}

describe('keyspace notifications', () => {
  let srv: Proc;
  let io: IORedis;
  let sub: IORedis;
  const got: string[] = [];
  before(async () => {
    srv = await startOurs(TOKEN_ARGS);
    io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    sub = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    sub.on('pmessage', (_p: string, ch: string, msg: string) => got.push(`${ch} ${msg}`));
    await sub.psubscribe('__key*__:*');
  });
  after(async () => {
    io?.disconnect();
    sub?.disconnect();
    await srv?.stop();
  });

  async function events(fn: () => Promise<unknown>, n: number): Promise<string[]> {
    got.length = 0;
    await fn();
    await until(() => got.length >= n, `expected ${n} events, got ${JSON.stringify(got)}`);
    await sleep(30);
    return got.splice(0);
  }

  it('is off by default and costs nothing: no events', async () => {
    assert.equal(await io.config('GET', 'notify-keyspace-events').then((r) => (r as string[])[1]), '');
    got.length = 0;
    await io.set('quiet', '1');
    await io.del('quiet');
    await sleep(50);
    assert.deepEqual(got, []);
  });

  it('K and E channels, in Redis order, for a command sequence', async () => {
    await io.config('SET', 'notify-keyspace-events', 'KEA');
    const ev = await events(async () => {
      await io.set('k', 'v', 'EX', 100);
      await io.rename('k', 'k2');
      await io.lpush('l', 'a', 'b');
      await io.del('k2', 'l');
    }, 14);
    assert.deepEqual(ev, [
      '__keyspace@0__:k set', '__keyevent@0__:set k',
      '__keyspace@0__:k expire', '__keyevent@0__:expire k',
      '__keyspace@0__:k rename_from', '__keyevent@0__:rename_from k',
      '__keyspace@0__:k2 rename_to', '__keyevent@0__:rename_to k2',
      '__keyspace@0__:l lpush', '__keyevent@0__:lpush l',
      '__keyspace@0__:k2 del', '__keyevent@0__:del k2',
      '__keyspace@0__:l del', '__keyevent@0__:del l',
    ]);
  });

  it('expired: lazy expiry on access and active expiry in the background', async () => {
    await io.config('SET', 'notify-keyspace-events', 'Ex');
    got.length = 0;
    await io.set('lazy', '1', 'PX', 20);
    await io.set('active', '1', 'PX', 20);
    await sleep(40);
    assert.equal(await io.get('lazy'), null);
    await until(() => got.includes('__keyevent@0__:expired active'), `active expiry event: ${JSON.stringify(got)}`);
    assert.ok(got.includes('__keyevent@0__:expired lazy'));
    assert.ok(!got.some((e) => e.startsWith('__keyspace')), 'E only: no keyspace channel');
  });

  it('new (class n) and keymiss (class m) are not part of A', async () => {
    await io.config('SET', 'notify-keyspace-events', 'KEA');
    got.length = 0;
    await io.set('n1', '1');
    await io.get('nokey');
    await sleep(50);
    assert.ok(!got.some((e) => e.includes('new') || e.includes('keymiss')), JSON.stringify(got));
    await io.config('SET', 'notify-keyspace-events', 'KEAnm');
    assert.deepEqual(await io.config('GET', 'notify-keyspace-events'), ['notify-keyspace-events', 'AKEm']);
    const ev = await events(async () => {
      await io.set('n2', '1');
      await io.get('nokey');
    }, 6);
    assert.deepEqual(ev, [
      '__keyspace@0__:n2 new', '__keyevent@0__:new n2', '__keyspace@0__:n2 set', '__keyevent@0__:set n2',
      '__keyspace@0__:nokey keymiss', '__keyevent@0__:keymiss nokey',
    ]);
  });

  it('node-redis receives the events too', async () => {
    await io.config('SET', 'notify-keyspace-events', 'E$');
    const nr = createClient({ url: `redis://127.0.0.1:${srv.port}`, RESP: 2 });
    await nr.connect();
    const seen: string[] = [];
    await nr.pSubscribe('__keyevent@*__:*', (msg, ch) => seen.push(`${ch} ${msg}`));
    await io.select(2);
    await io.set('x', '1');
    await io.incr('x');
    await io.select(0);
    await until(() => seen.length >= 2, JSON.stringify(seen));
    assert.deepEqual(seen, ['__keyevent@2__:set x', '__keyevent@2__:incrby x']);
    await nr.quit();
  });

  it('an SSE stream (REST /psubscribe) receives keyspace events', async () => {
    await io.config('SET', 'notify-keyspace-events', 'K$');
    const ctl = new AbortController();
    const r = await fetch(`http://127.0.0.1:${srv.httpPort}/psubscribe/__keyspace@0__:*`, {
      method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' }, body: '[]', signal: ctl.signal,
    });
    const data: string[] = [];
    const reading = (async () => {
      const dec = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
          buf += dec.decode(chunk, { stream: true });
          for (let i; (i = buf.indexOf('\n\n')) >= 0; buf = buf.slice(i + 2)) {
            for (const l of buf.slice(0, i).split('\n')) if (l.startsWith('data: ')) data.push(l.slice(6));
          }
        }
      } catch { /* aborted */ }
    })();
    await until(() => data.length >= 1, 'subscribed');
    await io.set('sse', 'v');
    await io.append('sse', 'w');
    await until(() => data.length >= 3, JSON.stringify(data));
    assert.deepEqual(data.slice(1), ['pmessage,__keyspace@0__:*,__keyspace@0__:sse,set', 'pmessage,__keyspace@0__:*,__keyspace@0__:sse,append']);
    ctl.abort();
    await reading;
  });

  it('evicted: keys removed by maxmemory are announced', async () => {
    await io.config('SET', 'notify-keyspace-events', 'Ee');
    await io.flushall();
    const info = await io.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)![1]);
    await io.config('SET', 'maxmemory-policy', 'allkeys-random');
    await io.config('SET', 'maxmemory', String(used + 200_000));
    got.length = 0;
    const val = 'x'.repeat(1000);
    for (let i = 0; i < 400; i++) await io.set(`ev:${i}`, val);
    await until(() => got.length > 0, 'evicted events');
    assert.ok(got.every((e) => /^__keyevent@0__:evicted ev:\d+$/.test(e)), JSON.stringify(got.slice(0, 5)));
    const evicted = Number(/evicted_keys:(\d+)/.exec(await io.info('stats'))![1]);
    await until(() => got.length === evicted, `one event per evicted key: ${got.length} events, ${evicted} evicted`);
    await io.config('SET', 'maxmemory', '0');
    await io.config('SET', 'maxmemory-policy', 'noeviction');
  });

  it('hash-field expiry (Redis 7.4 events) and RedisJSON (class d)', async () => {
    await io.config('SET', 'notify-keyspace-events', 'KEA');
    const ev = await events(async () => {
      await io.hset('hf', 'a', '1', 'b', '2');
      await io.call('HPEXPIRE', 'hf', '20', 'FIELDS', '1', 'a');
      await io.call('HPERSIST', 'hf', 'FIELDS', '1', 'a');
      await io.call('HPEXPIRE', 'hf', '20', 'FIELDS', '2', 'a', 'b');
      await sleep(60);
      await io.hgetall('hf');
      await io.call('JSON.SET', 'doc', '$', '{"n":1}');
      await io.call('JSON.NUMINCRBY', 'doc', '$.n', '2');
      await io.call('JSON.DEL', 'doc');
    }, 18);
    const ks = ev.filter((e) => e.startsWith('__keyspace')).map((e) => e.split(' ')[1]);
    // The background sweep or the read expires the fields: hexpired, then del for the emptied hash.
    assert.deepEqual(ks, ['hset', 'hexpire', 'hpersist', 'hexpire', 'hexpired', 'del', 'json.set', 'json.numincrby', 'json.del']);
  });

  it('the last test turns notifications off again', async () => {
    await io.config('SET', 'notify-keyspace-events', '');
    got.length = 0;
    await io.set('quiet', '2');
    await sleep(50);
    assert.deepEqual(got, []);
  });
});
