/**
 * CLIENT PAUSE / UNPAUSE as Redis 7.0: which commands wait, in which order they run, and
 * that keys do not expire meanwhile. The same script runs against redis-server and ours and
 * the observed order of events is compared (no timing is asserted). REST requests wait as
 * Redis's clients do.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { IoClients } from '../helpers/io.js';
import { Redis as Upstash } from '@upstash/redis';
import { TOKEN, TOKEN_ARGS } from '../http/rest-helpers.js';

let ours: Proc;
let redis: Proc;
const clients = new IoClients();

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no', ...TOKEN_ARGS]), startRedis()]);
});
after(async () => {
  clients.closeAll();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

const io = (port: number): Redis => clients.io(port, false);

const tick = () => new Promise((r) => setTimeout(r, 300));

/**
 * Run a pause scenario on one server and return what was observed: whether a read on another
 * connection waited, then (once the pause ends) the commands that completed, sorted (replies
 * on different connections arrive in no fixed order). WRITE ends with CLIENT UNPAUSE; ALL
 * with its timeout (under ALL, UNPAUSE itself waits, as in Redis).
 */
async function scenario(port: number, mode: 'WRITE' | 'ALL'): Promise<string[]> {
  const [admin, a, b, c, un] = [io(port), io(port), io(port), io(port), io(port)];
  await Promise.all([admin.ping(), a.ping(), b.ping(), c.ping(), un.ping()]);
  await admin.flushall();
  await admin.set('k', 'v');
  const done: string[] = [];
  await admin.call('CLIENT', 'PAUSE', mode === 'ALL' ? '1500' : '100000', mode);
  const pending = [
    a.set('x', '1').then(() => done.push('a: SET done')),
    a.get('x').then((v) => done.push(`a: GET after SET -> ${v}`)),
    b.publish('ch', 'm').then(() => done.push('b: PUBLISH done')),
    b.call('EVAL_RO', "return redis.call('get', KEYS[1])", '1', 'k').then((v) => done.push(`b: EVAL_RO -> ${v}`)),
  ];
  const read = c.get('k').then((v) => `GET -> ${v}`);
  let during: string;
  if (mode === 'WRITE') {
    // A read is answered while the writes still wait.
    during = await read;
    during += done.length === 0 ? ' while the writes wait' : ' after the writes';
    await un.call('CLIENT', 'UNPAUSE');
  } else {
    during = await Promise.race([read, tick().then(() => 'GET waited')]);
  }
  await Promise.all(pending);
  done.push(await read);
  return [during, ...done.sort()];
}

describe('CLIENT PAUSE', () => {
  for (const mode of ['WRITE', 'ALL'] as const) {
    it(`${mode}: the same commands wait, and run in the same order, as on redis-server`, async () => {
      const theirs = await scenario(redis.port, mode);
      const mine = await scenario(ours.port, mode);
      assert.deepEqual(mine, theirs);
    });
  }

  it('keys do not expire while clients are paused; they go once the pause ends', async () => {
    for (const port of [ours.port, redis.port]) {
      const r = io(port);
      await r.flushall();
      await r.set('t', '1', 'PX', 30);
      await r.call('CLIENT', 'PAUSE', '100000', 'WRITE');
      await new Promise((res) => setTimeout(res, 150));
      assert.equal(await r.get('t'), null); // reads as missing
      assert.equal(await r.dbsize(), 1); // but is still there
      await r.call('CLIENT', 'UNPAUSE');
      assert.equal(await r.get('t'), null);
      assert.equal(await r.dbsize(), 0);
    }
  });

  it('errors as Redis', async () => {
    const o = io(ours.port);
    const t = io(redis.port);
    for (const args of [['x'], ['-1'], ['10', 'SOME'], ['10', 'WRITE', 'x']]) {
      const [a, b] = await Promise.all([
        o.call('CLIENT', 'PAUSE', ...args).catch((e: Error) => e.message),
        t.call('CLIENT', 'PAUSE', ...args).catch((e: Error) => e.message),
      ]);
      assert.equal(a, b, args.join(' '));
    }
    await Promise.all([o.call('CLIENT', 'UNPAUSE'), t.call('CLIENT', 'UNPAUSE')]);
  });

  it('REST requests wait as clients do: writes under WRITE (reads go through), everything under ALL', async () => {
    const r = io(ours.port);
    await r.flushall();
    await r.set('k', 'v');
    const base = `http://127.0.0.1:${ours.httpPort}`;
    const rest = (path: string, body?: unknown) => fetch(base + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${TOKEN}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (res) => `${res.status} ${await res.text()}`);
    const sdk = new Upstash({ url: base, token: TOKEN, enableTelemetry: false });
    const done: string[] = [];
    const track = (name: string, p: Promise<unknown>) => p.then((v) => { done.push(name); return v; });

    await r.call('CLIENT', 'PAUSE', '100000', 'WRITE');
    const writes = [
      track('set', rest('/set/k/w')),
      track('pipeline', rest('/pipeline', [['get', 'k'], ['incr', 'n']])),
      track('multi-exec', rest('/multi-exec', [['incr', 'n'], ['get', 'n']])),
      track('body', rest('/', ['set', 'b', '1'])),
      track('sdk.set', sdk.set('s', 'x')),
      track('sdk.eval', sdk.eval('return 1', [], [])),
    ];
    // Reads are answered at once, with the data as it was before the paused writes.
    assert.equal(await rest('/get/k'), '200 {"result":"v"}');
    assert.equal(await rest('/pipeline', [['get', 'k'], ['exists', 'n']]), '200 [{"result":"v"},{"result":0}]');
    assert.equal(await sdk.get('k'), 'v');
    assert.deepEqual(done, [], 'no write answered while paused');
    assert.equal(await r.get('k'), 'v');
    await r.call('CLIENT', 'UNPAUSE');
    const replies = await Promise.all(writes);
    assert.deepEqual(replies.slice(0, 4), [
      '200 {"result":"OK"}',
      '200 [{"result":"w"},{"result":1}]',
      '200 [{"result":2},{"result":"2"}]',
      '200 {"result":"OK"}',
    ]);
    assert.equal(replies[4], 'OK');
    assert.equal(replies[5], 1);
    assert.equal(await r.get('s'), 'x');

    // ALL: reads wait too, until the pause's timeout.
    await r.call('CLIENT', 'PAUSE', '600', 'ALL');
    const read = track('read', rest('/get/k'));
    await tick();
    assert.ok(!(done as string[]).includes('read'), 'a read waits under ALL');
    assert.equal(await read, '200 {"result":"w"}');

    // A request whose client went away while it waited is dropped; the server goes on.
    await r.call('CLIENT', 'PAUSE', '100000', 'WRITE');
    const ac = new AbortController();
    const gone = fetch(`${base}/set/gone/1`, { headers: { Authorization: `Bearer ${TOKEN}` }, signal: ac.signal }).catch(() => 'aborted');
    await tick();
    ac.abort();
    assert.equal(await gone, 'aborted');
    await r.call('CLIENT', 'UNPAUSE');
    assert.equal(await rest('/get/k'), '200 {"result":"w"}');
    assert.equal(await r.get('gone'), null);
  });
});
