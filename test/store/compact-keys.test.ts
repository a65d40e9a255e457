/**
 * Keys of the keyspace's compact tier (src/engine/arena.ts: plain SET/MSET of short strings,
 * no TTL; no Entry per key) beside keys held as Entries: one script against our server and
 * redis-server, then the whole keyspace compared (DBSIZE, a full SCAN, KEYS, types, every
 * string value), then ours restarted after kill -9 (everysec) and compared again (and its
 * DEBUG DIGEST with its own before the restart: TTLs are absolute times, which differ
 * between the two servers, and the digest covers them).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { dataDirs, startOurs, startRedis, type Proc } from '../helpers/server.js';
import { IoClients } from '../helpers/io.js';
import { rng } from '../helpers/rng.js';

const clients = new IoClients();
const procs: Proc[] = [];
after(async () => {
  clients.closeAll();
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
});
const newDir = dataDirs('rs-compact-');

/** The same commands to both servers, replies compared. */
async function both(a: Redis, b: Redis, cmd: string[]): Promise<void> {
  const [x, y] = await Promise.all([a.call(cmd[0], ...cmd.slice(1)).catch((e: Error) => `ERR ${e.message}`), b.call(cmd[0], ...cmd.slice(1)).catch((e: Error) => `ERR ${e.message}`)]);
  assert.deepEqual(x, y, cmd.join(' '));
}

async function scanAll(c: Redis, count: number): Promise<string[]> {
  const seen = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = (await c.scan(cursor, 'COUNT', count)) as [string, string[]];
    for (const k of keys) seen.add(k);
    cursor = next;
  } while (cursor !== '0');
  return [...seen].sort();
}

/** Everything a client can see of the keyspace, in a comparable form. */
async function snapshot(c: Redis): Promise<Record<string, unknown>> {
  const keys = ((await c.keys('*')) as string[]).sort();
  const types = await Promise.all(keys.map((k) => c.type(k)));
  const strings = keys.filter((_, i) => types[i] === 'string');
  return {
    dbsize: await c.dbsize(),
    keys,
    scan: await scanAll(c, 7),
    types,
    values: strings.length === 0 ? [] : await c.mget(...strings),
  };
}

describe('compact keys (the arena tier) against redis-server', () => {
  it('a mixed script: same replies, same keyspace, and the same after kill -9 and reload', async () => {
    const seed = Date.now() % 100000;
    const r = rng(seed);
    const dir = newDir();
    let ours = await startOurs(['--appendfsync', 'everysec', '--enable-debug-command', 'yes'], {}, { dir });
    procs.push(ours);
    const redis = await startRedis(['--enable-debug-command', 'yes']);
    procs.push(redis);
    let a = clients.io(ours.port);
    const b = clients.io(redis.port);
    const key = () => `k:${Math.floor(r() * 3000)}`;
    const val = () => (r() < 0.3 ? String(Math.floor((r() - 0.5) * 1e6)) : 'v'.repeat(Math.floor(r() * 300)));
    for (let i = 0; i < 6000; i++) {
      const op = r();
      const k = key();
      let cmd: string[];
      if (op < 0.35) cmd = ['SET', k, val()];
      else if (op < 0.45) cmd = ['MSET', k, val(), key(), val()];
      else if (op < 0.52) cmd = ['GET', k];
      else if (op < 0.57) cmd = ['DEL', k, key()];
      else if (op < 0.6) cmd = ['EXPIRE', k, '1000'];
      else if (op < 0.63) cmd = ['SET', k, val(), 'EX', '1000'];
      else if (op < 0.66) cmd = ['APPEND', k, 'x'];
      else if (op < 0.69) cmd = ['INCR', k];
      else if (op < 0.72) cmd = ['HSET', k, 'f', val()];
      else if (op < 0.75) cmd = ['STRLEN', k];
      else if (op < 0.78) cmd = ['EXISTS', k, key()];
      else if (op < 0.8) cmd = ['TYPE', k];
      else if (op < 0.82) cmd = ['OBJECT', 'ENCODING', k];
      else if (op < 0.84) cmd = ['RENAME', k, key()];
      else if (op < 0.86) cmd = ['GETDEL', k];
      else if (op < 0.88) cmd = ['SETNX', k, val()];
      else if (op < 0.9) cmd = ['PERSIST', k];
      else if (op < 0.92) cmd = ['TTL', k];
      else if (op < 0.94) cmd = ['COPY', k, key()];
      else if (op < 0.96) cmd = ['GETRANGE', k, '0', '3'];
      else if (op < 0.98) cmd = ['MGET', k, key(), key()];
      else cmd = ['SETRANGE', k, '2', 'zz'];
      await both(a, b, cmd);
    }
    const want = await snapshot(b);
    assert.ok((want.dbsize as number) > 1000, `seed ${seed}`);
    assert.deepEqual(await snapshot(a), want, `seed ${seed}`);
    const digest = await a.call('DEBUG', 'DIGEST');
    // RANDOMKEY answers a key that exists.
    for (let i = 0; i < 20; i++) assert.equal(await a.exists((await a.randomkey()) as string), 1);

    // Restart after kill -9 (everysec: the journal is written within about a second).
    await new Promise((res) => setTimeout(res, 2500));
    await ours.stop('SIGKILL');
    ours = await startOurs(['--appendfsync', 'everysec', '--enable-debug-command', 'yes'], {}, { dir });
    procs.push(ours);
    a = clients.io(ours.port);
    assert.deepEqual(await snapshot(a), want, `seed ${seed}, after reload`);
    assert.equal(await a.call('DEBUG', 'DIGEST'), digest);

    // SWAPDB and FLUSHDB move or drop both tiers at once.
    await both(a, b, ['SWAPDB', '0', '1']);
    await both(a, b, ['DBSIZE']);
    await both(a, b, ['SELECT', '1']);
    assert.deepEqual(await snapshot(a), want);
    await both(a, b, ['FLUSHDB']);
    assert.deepEqual(await snapshot(a), await snapshot(b));
  });
});
