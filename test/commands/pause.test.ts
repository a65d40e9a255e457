/**
 * CLIENT PAUSE / UNPAUSE as Redis 7.0: which commands wait, in which order they run, and
 * that keys do not expire meanwhile. The same script runs against redis-server and ours and
 * the observed order of events is compared (no timing is asserted).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { IoClients } from '../helpers/io.js';

let ours: Proc;
let redis: Proc;
const clients = new IoClients();

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
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
});
