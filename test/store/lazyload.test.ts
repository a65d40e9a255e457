/**
 * Background loading at start-up (src/store/loader.ts): the server answers while the keyspace
 * is still coming in from LMDB. Each test restarts our server on a data directory with a very
 * slow load pace (REDSTASH_LOAD_STEP=1 record every REDSTASH_LOAD_PAUSE_MS) so that every
 * command below runs while most keys are not loaded yet (checked: INFO says async_loading:1
 * after them), and replays the same commands on a real redis-server holding the same data: the
 * replies and, at the end, the whole keyspaces must be the same, then again after a restart.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { rng } from '../helpers/rng.js';
import { describeKey, snapshot } from '../helpers/keyspace.js';

// One record per step, 25 ms apart; collections of 100+ elements (big:*) loaded after the rest.
const SLOW = { REDSTASH_LOAD_STEP: '1', REDSTASH_LOAD_PAUSE_MS: '25', REDSTASH_LOAD_DEFER: '100' };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-lazyload-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Cmd = (string | number)[];

/** The data set: every type, small (stored whole) and big (one record per element), TTLs, two dbs. */
function fillCommands(): Cmd[] {
  const r = rng(5);
  const cmds: Cmd[] = [];
  for (let i = 0; i < 300; i++) cmds.push(['SET', `s:${i}`, i % 7 === 0 ? String(i * 13) : `v${i}-${'x'.repeat(Math.floor(r() * 80))}`]);
  for (let i = 0; i < 40; i++) cmds.push(['HSET', `h:${i}`, 'a', String(i), 'b', `bee${i}`, 'c', 'x'.repeat(i)]);
  for (let i = 0; i < 20; i++) cmds.push(['RPUSH', `l:${i}`, 'p', 'q', String(i)]);
  for (let i = 0; i < 20; i++) cmds.push(['SADD', `set:${i}`, ...(i % 2 === 0 ? ['1', '2', String(i + 3)] : ['m', 'n', `o${i}`])]);
  for (let i = 0; i < 20; i++) cmds.push(['ZADD', `z:${i}`, '1', 'a', String(i), 'b', '2.5', 'c']);
  const big = (n: number, f: (j: number) => string[]): string[] => Array.from({ length: n }, (_, j) => f(j)).flat();
  cmds.push(['HSET', 'big:h', ...big(300, (j) => [`f${j}`, `val${j}`])]);
  cmds.push(['ZADD', 'big:z', ...big(300, (j) => [String((j * 7) % 101), `m${j}`])]);
  cmds.push(['RPUSH', 'big:l', ...big(300, (j) => [`e${j}`])]);
  cmds.push(['SADD', 'big:s', ...big(300, (j) => [`k${j}`])]);
  for (let i = 0; i < 30; i++) cmds.push(['SET', `t:${i}`, `ttl${i}`, 'EX', '3600']);
  cmds.push(['EXPIRE', 'h:5', '3600'], ['EXPIRE', 'big:l', '3600']);
  // Gone before the restart: they must not come back from disk.
  for (let i = 0; i < 5; i++) cmds.push(['SET', `short:${i}`, 'x', 'PX', '300']);
  cmds.push(['HSET', 'short:h', 'a', '1'], ['PEXPIRE', 'short:h', '300']);
  cmds.push(['SELECT', '3']);
  for (let i = 0; i < 50; i++) cmds.push(['SET', `d3:${i}`, `three${i}`]);
  cmds.push(['HSET', 'd3:h', 'x', '1'], ['SELECT', '0']);
  return cmds;
}

async function loadingNow(r: Redis): Promise<boolean> {
  return /async_loading:1\r?\n/.test(await r.info('persistence'));
}

const client = (p: Proc) => new Redis({ port: p.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, enableReadyCheck: false });

describe('start-up: the keyspace loads in the background while commands are served', () => {
  let redis: Proc;
  let ref: Redis;
  /** A directory holding the data set, written once; each test works on a copy. */
  const master = path.join(tmp, 'master');

  before(async () => {
    redis = await startRedis();
    ref = client(redis);
    await ref.connect();
    fs.mkdirSync(master);
    const ours = await startOurs(['--appendfsync', 'everysec'], {}, { dir: master });
    const o = client(ours);
    await o.connect();
    for (const c of fillCommands()) {
      const a = await o.call(String(c[0]), ...c.slice(1).map(String));
      const b = await ref.call(String(c[0]), ...c.slice(1).map(String));
      assert.deepEqual(a, b, `fill: ${c.join(' ')}`);
    }
    // Let the short TTLs run out (on both sides) before the data set is on disk.
    await new Promise((res) => setTimeout(res, 500));
    o.disconnect();
    await ours.stop('SIGTERM');
  });

  after(async () => {
    ref?.disconnect();
    await redis?.stop('SIGTERM');
  });

  /** A copy of the data set, with Redis reset to the same data. */
  async function fresh(name: string): Promise<string> {
    const dir = path.join(tmp, name);
    fs.cpSync(master, dir, { recursive: true });
    await ref.flushall();
    for (const c of fillCommands()) await ref.call(String(c[0]), ...c.slice(1).map(String));
    await new Promise((res) => setTimeout(res, 500));
    return dir;
  }

  it('reads, writes, deletes, renames, moves and expirations of keys not loaded yet match Redis, during the load and after a restart', async () => {
    const dir = await fresh('ops');
    let ours = await startOurs(['--appendfsync', 'everysec'], SLOW, { dir });
    const o = client(ours);
    await o.connect();
    assert.equal(await loadingNow(o), true, 'the load is still in progress');
    const both = async (...c: Cmd) => {
      const args = c.slice(1).map(String);
      const a = await o.call(String(c[0]), ...args).catch((e: Error) => `error: ${e.message}`);
      const b = await ref.call(String(c[0]), ...args).catch((e: Error) => `error: ${e.message}`);
      assert.deepEqual(a, b, c.join(' '));
    };
    const sameKey = async (key: string) => assert.equal(await describeKey(o, key), await describeKey(ref, key), key);
    // Reads all over the key order (the background pass goes through it slowly).
    const r = rng(11);
    const sample = ['big:h', 'big:z', 'big:l', 'big:s', 'h:5', 'd3:0', 'short:0', 'short:h', 'nothere'];
    for (let i = 0; i < 30; i++) sample.push(`s:${Math.floor(r() * 300)}`, `t:${Math.floor(r() * 30)}`);
    for (let i = 0; i < 8; i++) sample.push(`h:${Math.floor(r() * 40)}`, `l:${Math.floor(r() * 20)}`, `set:${Math.floor(r() * 20)}`, `z:${Math.floor(r() * 20)}`);
    for (const k of sample) await sameKey(k);
    // Writes to keys not loaded yet (the last ones in key order), then reads of them.
    await both('SET', 's:99', 'new');
    await both('APPEND', 's:98', 'zz');
    await both('INCR', 's:91');
    await both('DEL', 's:97');
    await both('EXISTS', 's:97');
    await both('GETDEL', 's:96');
    await both('HSET', 'h:30', 'f', 'new');
    await both('HDEL', 'h:31', 'a');
    await both('RPUSH', 'l:15', 'x');
    await both('LPOP', 'l:16');
    await both('SADD', 'set:15', 'added');
    await both('SREM', 'set:14', '1');
    await both('ZADD', 'z:15', '5', 'm');
    await both('ZINCRBY', 'z:14', '2', 'a');
    await both('HSET', 'big:h', 'f5', 'changed');
    await both('HDEL', 'big:h', 'f6');
    await both('ZADD', 'big:z', '1000', 'm1');
    await both('DEL', 'big:s');
    await both('RENAME', 's:95', 's:renamed');
    await both('MOVE', 's:94', '3');
    await both('COPY', 's:93', 's:copied');
    await both('PEXPIRE', 's:92', '150');
    await both('EXPIRE', 's:90', '3600');
    await both('PERSIST', 't:29');
    await both('SET', 'brandnew', 'v');
    await both('SET', 'short:1', 'back');
    await both('SELECT', '3');
    await both('GET', 'd3:49');
    await both('SET', 'd3:48', 'x');
    await both('DEL', 'd3:47');
    await both('SELECT', '0');
    // WATCH of a key not loaded yet: its loading is not a change, so EXEC runs.
    await both('WATCH', 's:89');
    await both('MULTI');
    await both('SET', 's:89', 'w');
    await both('EXEC');
    await new Promise((res) => setTimeout(res, 300));
    for (const k of ['s:99', 's:98', 's:97', 's:96', 's:95', 's:94', 's:93', 's:92', 's:91', 's:90', 's:89', 's:renamed', 's:copied',
      'h:30', 'h:31', 'l:15', 'l:16', 'set:15', 'set:14', 'z:15', 'z:14', 'big:h', 'big:z', 'big:s', 't:29', 'brandnew', 'short:1']) {
      await sameKey(k);
    }
    // INFO (all sections, as ioredis sends on connect) shows the keys loaded so far: no wait.
    assert.match(await o.info(), /# Keyspace/);
    assert.equal(await loadingNow(o), true, 'everything above ran while the load was in progress');
    // KEYS loads the rest: the whole keyspace must be Redis's.
    assert.deepEqual(await snapshot(o), await snapshot(ref));
    assert.equal(await loadingNow(o), false);
    o.disconnect();
    await ours.stop('SIGTERM');
    // And all of it was persisted (written and deleted keys alike).
    ours = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    const o2 = client(ours);
    await o2.connect();
    assert.deepEqual(await snapshot(o2), await snapshot(ref));
    o2.disconnect();
    await ours.stop('SIGTERM');
  });

  it('keys deleted just ahead of the background pass stay deleted (appendfsync always: LMDB gets the deletes up to a second later)', async () => {
    const dir = await fresh('ahead');
    let ours = await startOurs(['--appendfsync', 'always'], SLOW, { dir });
    const o = client(ours);
    await o.connect();
    // Where the pass is: it goes through db 0's keys in byte order, one per step.
    const order = (await ref.keys('*')).sort((a, b) => Buffer.compare(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1')));
    const at = Number(/rdb_last_load_keys_loaded:(\d+)/.exec(await o.info('persistence'))![1]);
    const victims = order.slice(at + 3, at + 43);
    assert.equal(victims.length, 40);
    assert.equal(await o.del(...victims), await ref.del(...victims));
    // The pass reaches them (records still in LMDB, or not) and must not bring them back.
    await new Promise((res) => setTimeout(res, 1500));
    assert.equal(await loadingNow(o), true, 'the load is still in progress');
    for (const k of victims) assert.equal(await o.exists(k), 0, k);
    assert.deepEqual(await snapshot(o), await snapshot(ref));
    o.disconnect();
    await ours.stop('SIGTERM');
    ours = await startOurs(['--appendfsync', 'always'], {}, { dir });
    const o2 = client(ours);
    await o2.connect();
    assert.deepEqual(await snapshot(o2), await snapshot(ref));
    o2.disconnect();
    await ours.stop('SIGTERM');
  });

  it('commands that need the whole keyspace load it first: DBSIZE, SCAN, RANDOMKEY, SWAPDB, FLUSHDB', async () => {
    const dir = await fresh('whole');
    const round = async (check: (o: Redis) => Promise<void>) => {
      const ours = await startOurs(['--appendfsync', 'everysec'], SLOW, { dir });
      const o = client(ours);
      await o.connect();
      assert.equal(await loadingNow(o), true, 'the load is still in progress');
      await check(o);
      o.disconnect();
      await ours.stop('SIGTERM');
    };
    await round(async (o) => {
      assert.equal(await o.dbsize(), await ref.dbsize());
    });
    await round(async (o) => {
      const seen = new Set<string>();
      let cursor = '0';
      do {
        const [next, keys] = await o.scan(cursor, 'COUNT', 7);
        for (const k of keys) seen.add(k);
        cursor = next;
      } while (cursor !== '0');
      assert.deepEqual([...seen].sort(), (await ref.keys('*')).sort());
    });
    await round(async (o) => {
      const k = await o.randomkey();
      assert.equal(await o.exists(k!), 1);
      // Everything is loaded now: INFO keyspace counts what Redis counts.
      const info = (s: string) => s.split(/\r?\n/).filter((l) => l.startsWith('db')).map((l) => l.replace(/,avg_ttl=\d+/, '')).join('\n');
      assert.equal(info(await o.info('keyspace')), info(await ref.info('keyspace')));
    });
    await round(async (o) => {
      assert.equal(await o.swapdb(0, 3), await ref.swapdb(0, 3));
      assert.deepEqual(await snapshot(o), await snapshot(ref));
    });
    await round(async (o) => {
      await o.select(3);
      await ref.select(3);
      assert.equal(await o.flushdb(), await ref.flushdb());
      await o.select(0);
      await ref.select(0);
      assert.deepEqual(await snapshot(o), await snapshot(ref));
    });
    // The last two rounds were persisted too.
    const ours = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    const o = client(ours);
    await o.connect();
    assert.deepEqual(await snapshot(o), await snapshot(ref));
    o.disconnect();
    await ours.stop('SIGTERM');
  });
});
