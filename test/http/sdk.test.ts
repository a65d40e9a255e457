/**
 * The unmodified @upstash/redis SDK against our server: default configuration (base64
 * responses, auto-pipelining, read-your-writes) and with automaticDeserialization or
 * responseEncoding turned off. Commands other work adds later are tested once they exist.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from '@upstash/redis';
import { startOurs, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { TOKEN, RO_TOKEN, TOKEN_ARGS, hasCommand } from './rest-helpers.js';

let srv: Proc;
let url: string;
let redis: Redis;
const have = new Map<string, boolean>();

async function resp(...args: string[]): Promise<string> {
  const c = await RawClient.connect(srv.port);
  try {
    return (await c.call(...args)).toString('latin1');
  } finally {
    c.close();
  }
}

/** Skips the test (and returns true) unless every named command exists on this build. */
function missing(t: { skip(msg: string): void }, ...names: string[]): boolean {
  const absent = names.filter((n) => !have.get(n));
  if (absent.length === 0) return false;
  t.skip(`not implemented yet on this branch: ${absent.join(', ')}`);
  return true;
}

before(async () => {
  srv = await startOurs(TOKEN_ARGS);
  url = `http://127.0.0.1:${srv.httpPort}`;
  for (const n of ['incr', 'incrby', 'mget', 'mset', 'exists', 'expire', 'ttl', 'flushdb']) have.set(n, await hasCommand(srv.port, n));
  redis = new Redis({ url, token: TOKEN, enableTelemetry: false });
});
after(async () => {
  await srv?.stop();
});
beforeEach(async () => {
  await resp('FLUSHALL');
});

describe('@upstash/redis, default configuration (base64, auto-pipelining)', () => {
  it('strings round-trip, including OK, emoji, %, empty and multi-line values', async () => {
    for (const v of ['bar', 'OK', '😀 and ✓', '100%', '', 'line1\nline2 "quoted" \\ back', 'x'.repeat(100000)]) {
      assert.equal(await redis.set('s', v), 'OK');
      assert.equal(await redis.get('s'), v, JSON.stringify(v.slice(0, 20)));
    }
    assert.equal(await redis.get('missing'), null);
  });

  it('numbers and JSON objects (automatic deserialization)', async () => {
    await redis.set('n', 8);
    assert.equal(await redis.get('n'), 8);
    await redis.set('f', 1.5);
    assert.equal(await redis.get('f'), 1.5);
    const obj = { a: 1, b: [1, 'two', null], c: { d: true } };
    await redis.set('o', obj);
    assert.deepEqual(await redis.get('o'), obj);
    assert.equal(await resp('GET', 'o'), `$${JSON.stringify(obj).length}\r\n${JSON.stringify(obj)}\r\n`);
  });

  it('numbers beyond 2^53 are kept exact', async () => {
    await redis.set('big', '9007199254740993');
    assert.equal(await redis.get('big'), '9007199254740993');
    await resp('SET', 'big2', '12345678901234567890');
    assert.equal(await redis.get('big2'), '12345678901234567890');
  });

  it('server commands: ping, echo, dbsize, del', async () => {
    assert.equal(await redis.ping(), 'PONG');
    assert.equal(await redis.ping(['hello']), 'hello');
    assert.equal(await redis.echo('hi there'), 'hi there');
    await redis.set('a', '1');
    await redis.set('b', '2');
    assert.equal(await redis.dbsize(), 2);
    assert.equal(await redis.del('a', 'b', 'c'), 2);
    assert.equal(await redis.dbsize(), 0);
  });

  it('explicit pipeline', async () => {
    const p = redis.pipeline();
    p.set('k', 'v');
    p.get('k');
    p.set('j', { x: 1 });
    p.get('j');
    p.del('k', 'j');
    assert.deepEqual(await p.exec(), ['OK', 'v', 'OK', { x: 1 }, 2]);
  });

  it('pipeline errors: thrown by default, kept with keepErrors', async () => {
    const rw = new Redis({ url, token: RO_TOKEN, enableTelemetry: false, enableAutoPipelining: false });
    await redis.set('k', 'v');
    const p = rw.pipeline();
    p.get('k');
    p.set('k', 'x');
    const res = await p.exec({ keepErrors: true });
    assert.deepEqual(res[0], { result: 'v', error: undefined });
    assert.match(String(res[1].error), /NOPERM/);
    const p2 = rw.pipeline();
    p2.set('k', 'x');
    await assert.rejects(p2.exec(), /NOPERM/);
  });

  it('transactions (multi)', async () => {
    const tx = redis.multi();
    tx.set('k', 'v');
    tx.get('k');
    tx.del('k');
    assert.deepEqual(await tx.exec(), ['OK', 'v', 1]);
    assert.equal(await redis.get('k'), null);
  });

  it('auto-pipelining batches concurrent commands into /pipeline', async () => {
    const seen: string[] = [];
    const orig = globalThis.fetch;
    globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(String(input).slice(url.length));
      return orig(input, init);
    }) as typeof fetch;
    try {
      const r = new Redis({ url, token: TOKEN, enableTelemetry: false });
      const sets = await Promise.all(Array.from({ length: 50 }, (_, i) => r.set(`ap${i}`, `v${i}`)));
      assert.ok(sets.every((x) => x === 'OK'));
      const gets = await Promise.all(Array.from({ length: 50 }, (_, i) => r.get(`ap${i}`)));
      assert.deepEqual(gets, Array.from({ length: 50 }, (_, i) => `v${i}`));
    } finally {
      globalThis.fetch = orig;
    }
    assert.ok(seen.includes('/pipeline'), `requests: ${seen.join(' ')}`);
    assert.ok(seen.length < 100, `batched: ${seen.length} requests for 100 commands`);
  });

  it('read-your-writes: the sync token is kept and changes after each write', async () => {
    const r = new Redis({ url, token: TOKEN, enableTelemetry: false, enableAutoPipelining: false });
    await r.set('w', '1');
    const t1 = r.readYourWritesSyncToken;
    assert.ok(t1 && t1.length > 0);
    await r.set('w', '2');
    const t2 = r.readYourWritesSyncToken;
    assert.notEqual(t2, t1);
    const p = r.pipeline();
    p.set('w', '3');
    p.set('v', '4');
    await p.exec();
    const t3 = r.readYourWritesSyncToken;
    assert.notEqual(t3, t2);
    r.readYourWritesSyncToken = 'my-new-sync-token';
    assert.equal(await r.get('w'), 3);
    // Each of several writes gives a new token.
    const tokens = new Set<string>();
    for (let i = 0; i < 3; i++) {
      await r.set('w', String(i + 10));
      tokens.add(r.readYourWritesSyncToken!);
    }
    assert.equal(tokens.size, 3);
  });

  it('errors surface as UpstashError with the Redis text', async () => {
    const rw = new Redis({ url, token: RO_TOKEN, enableTelemetry: false, enableAutoPipelining: false });
    await assert.rejects(rw.set('x', '1'), /NOPERM this user has no permissions to run the 'set' command/);
    const bad = new Redis({ url, token: 'wrong', enableTelemetry: false, enableAutoPipelining: false });
    await assert.rejects(bad.get('x'), /WRONGPASS/);
  });

  it('integer commands, beyond 2^53 too', async (t) => {
    if (missing(t, 'incr', 'incrby')) return;
    assert.equal(await redis.incr('c'), 1);
    assert.equal(await redis.incrby('c', 41), 42);
    await redis.set('c2', '9007199254740990');
    assert.equal(await redis.incrby('c2', 2), 9007199254740992);
  });

  it('mset/mget', async (t) => {
    if (missing(t, 'mset', 'mget')) return;
    assert.equal(await redis.mset({ a: '1', b: { x: 1 }, c: 'three' }), 'OK');
    assert.deepEqual(await redis.mget('a', 'b', 'c', 'd'), [1, { x: 1 }, 'three', null]);
  });

  it('exists, expire, ttl', async (t) => {
    if (missing(t, 'exists', 'expire', 'ttl')) return;
    await redis.set('e', 'v');
    assert.equal(await redis.exists('e', 'nope'), 1);
    assert.equal(await redis.expire('e', 100), 1);
    const ttl = await redis.ttl('e');
    assert.ok(ttl > 98 && ttl <= 100);
  });

  it('flushdb', async (t) => {
    if (missing(t, 'flushdb')) return;
    await redis.set('a', '1');
    assert.equal(await redis.flushdb(), 'OK');
    assert.equal(await redis.dbsize(), 0);
  });
});

describe('@upstash/redis with automaticDeserialization: false', () => {
  let raw: Redis;
  before(() => {
    raw = new Redis({ url, token: TOKEN, enableTelemetry: false, automaticDeserialization: false });
  });

  it('values come back as the stored strings', async () => {
    await raw.set('o', JSON.stringify({ a: 1 }));
    assert.equal(await raw.get('o'), '{"a":1}');
    await raw.set('n', '8');
    assert.equal(await raw.get('n'), '8');
    await raw.set('big', '9007199254740993');
    assert.equal(await raw.get('big'), '9007199254740993');
    assert.equal(await raw.get('missing'), null);
    assert.equal(await raw.dbsize(), 3);
  });

  it('pipelines and transactions', async () => {
    const p = raw.pipeline();
    p.set('k', '{"x":1}');
    p.get('k');
    assert.deepEqual(await p.exec(), ['OK', '{"x":1}']);
    const tx = raw.multi();
    tx.get('k');
    tx.del('k');
    assert.deepEqual(await tx.exec(), ['{"x":1}', 1]);
  });
});

describe('@upstash/redis with responseEncoding: false (plain JSON)', () => {
  it('emoji and long strings round-trip', async () => {
    const plain = new Redis({ url, token: TOKEN, enableTelemetry: false, responseEncoding: false });
    for (const v of ['😀 ✓ é', 'a'.repeat(10000), 'OK']) {
      await plain.set('p', v);
      assert.equal(await plain.get('p'), v);
    }
  });
});
