/**
 * Big collections load in steps at start-up (src/store/loader.ts): a collection stored one
 * record per element is read a chunk per step and built in pieces, and goes into the keyspace
 * only once complete. "Big" is made small here (REDSTASH_LOAD_DEFER=100) and the pace slow (20
 * records per step, 10 ms apart) so that a 1,500-element collection takes many steps;
 * `INFO persistence` field `lmdb_load_big_records` (records read so far of the collection being
 * built) tells the test when one is in progress, and a MULTI that starts with INFO proves the
 * commands after it ran while it was. Every reply and every final value is compared with a real
 * redis-server given the same commands, then again after a restart.
 */
import { describe, it, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startOurs as start, startRedis, type Proc } from '../helpers/server.js';
import { rng } from '../helpers/rng.js';
import { describeKey, snapshot } from '../helpers/keyspace.js';

const SLOW = { REDSTASH_LOAD_STEP: '20', REDSTASH_LOAD_PAUSE_MS: '10', REDSTASH_LOAD_DEFER: '100' };
const N = 1500;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-bigload-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Cmd = (string | number)[];

const small = (): Cmd[] => {
  const cmds: Cmd[] = [];
  for (let i = 0; i < 30; i++) cmds.push(['SET', `s:${i}`, `v${i}`]);
  cmds.push(['HSET', 'smallh', 'a', '1', 'b', '2'], ['SADD', 'smalls', 'x', 'y']);
  return cmds;
};

const seq = (f: (j: number) => string[]): string[] => Array.from({ length: N }, (_, j) => f(j)).flat();

/** The big collection `big` of each type (written in pieces, as clients do). */
const BIG: Record<string, () => Cmd[]> = {
  hash: () => [['HSET', 'big', ...seq((j) => [`f${j}`, j % 10 === 0 ? `long${'x'.repeat(80)}${j}` : `v${j}`])]],
  set: () => [['SADD', 'big', ...seq((j) => [`m${j}`])]],
  zset: () => {
    const r = rng(3);
    const score = (j: number): string => (j === 5 ? 'inf' : j === 6 ? '-inf' : j === 9 ? '-0' : String(Math.floor(r() * 200) - 100 + (j % 3) / 4));
    return [['ZADD', 'big', ...seq((j) => [score(j), `m${j}`])]];
  },
  zlex: () => [['ZADD', 'big', ...seq((j) => ['0', `m${j}`])]],
  list: () => [['RPUSH', 'big', ...seq((j) => [`e${j}`])], ['LPUSH', 'big', 'head1', 'head2']],
  stream: () => [
    ...Array.from({ length: N }, (_, j): Cmd => ['XADD', 'big', `${j + 1}-0`, 'f', `v${j}`, ...(j % 7 === 0 ? ['g', 'x'] : [])]),
    ['XGROUP', 'CREATE', 'big', 'g', '0'],
    ['XREADGROUP', 'GROUP', 'g', 'c1', 'COUNT', '5', 'STREAMS', 'big', '>'],
  ],
};

/** Commands run on the big collection while it loads: reads and writes. */
const TOUCH: Record<string, Cmd[]> = {
  hash: [['HGET', 'big', 'f7'], ['HLEN', 'big'], ['HSET', 'big', 'f7', 'new'], ['HDEL', 'big', 'f8'], ['HGET', 'big', 'f7'], ['HLEN', 'big']],
  set: [['SISMEMBER', 'big', 'm7'], ['SCARD', 'big'], ['SADD', 'big', 'zz'], ['SREM', 'big', 'm8'], ['SCARD', 'big']],
  zset: [['ZSCORE', 'big', 'm7'], ['ZRANK', 'big', 'm7'], ['ZCARD', 'big'], ['ZADD', 'big', '5.5', 'm7'], ['ZREM', 'big', 'm8'],
    ['ZRANGE', 'big', '0', '9'], ['ZSCORE', 'big', 'm6'], ['ZRANGEBYSCORE', 'big', '-1', '1'], ['ZRANK', 'big', 'm7']],
  zlex: [['ZRANGEBYLEX', 'big', '[m7', '(m8'], ['ZADD', 'big', '0', 'a'], ['ZREM', 'big', 'm8'], ['ZRANK', 'big', 'm9'], ['ZCARD', 'big']],
  list: [['LINDEX', 'big', '7'], ['LLEN', 'big'], ['LPUSH', 'big', 'x'], ['RPOP', 'big'], ['LRANGE', 'big', '0', '5'], ['LINDEX', 'big', '-1']],
  stream: [['XLEN', 'big'], ['XRANGE', 'big', '7-0', '9-0'], ['XADD', 'big', '99999-0', 'f', 'z'], ['XACK', 'big', 'g', '1-0'],
    ['XPENDING', 'big', 'g'], ['XLEN', 'big']],
};

const field = (info: string, name: string): number => Number(new RegExp(`${name}:(\\d+)`).exec(info)![1]);

/**
 * Poll INFO persistence until `ok(records)` holds for `lmdb_load_big_records`; fails if the
 * load completes first. Returns every value seen.
 */
async function waitBig(o: Redis, ok: (n: number) => boolean): Promise<number[]> {
  const seen: number[] = [];
  for (;;) {
    const info = await o.info('persistence');
    assert.match(info, /async_loading:1/, `the load ended before the big collection was in progress (seen ${seen.slice(-5)})`);
    const n = field(info, 'lmdb_load_big_records');
    seen.push(n);
    if (ok(n)) return seen;
    await new Promise((res) => setTimeout(res, 2));
  }
}

/** Our servers still running: stopped after each test, even a failed one. */
const running = new Set<Proc>();
async function startOurs(...a: Parameters<typeof start>): Promise<Proc> {
  const p = await start(...a);
  running.add(p);
  const stop = p.stop;
  return { ...p, output: p.output, stop: (sig) => { running.delete(p); return stop(sig); } } as Proc;
}
afterEach(async () => {
  for (const p of [...running]) await p.stop('SIGKILL');
  running.clear();
});

const client = (p: Proc) => new Redis({ port: p.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, enableReadyCheck: false });
const call = (r: Redis, c: Cmd) => r.call(String(c[0]), ...c.slice(1).map(String)).catch((e: Error) => `error: ${e.message}`);

describe('start-up: big collections load in steps and are complete when seen', () => {
  let redis: Proc;
  let ref: Redis;
  const masters = new Map<string, string>();

  /** The data directory of a data set (written once; each test works on a copy). */
  async function master(name: string, cmds: Cmd[]): Promise<string> {
    const dir = path.join(tmp, `master-${name}`);
    if (!masters.has(name)) {
      fs.mkdirSync(dir);
      const ours = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
      const o = client(ours);
      await o.connect();
      for (const c of cmds) await call(o, c);
      o.disconnect();
      await ours.stop('SIGTERM');
      masters.set(name, dir);
    }
    await ref.flushall();
    for (const c of cmds) await call(ref, c);
    return dir;
  }

  let copies = 0;
  function copy(dir: string): string {
    const d = path.join(tmp, `copy-${copies++}`);
    fs.cpSync(dir, d, { recursive: true });
    return d;
  }

  /** After a restart at full speed, the data must still be Redis's. */
  async function persisted(dir: string): Promise<void> {
    const ours = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    const o = client(ours);
    await o.connect();
    assert.deepEqual(await snapshot(o), await snapshot(ref));
    o.disconnect();
    await ours.stop('SIGTERM');
  }

  before(async () => {
    redis = await startRedis();
    ref = client(redis);
    await ref.connect();
  });

  after(async () => {
    ref?.disconnect();
    await redis?.stop('SIGTERM');
  });

  for (const type of Object.keys(BIG)) {
    const data = (): Cmd[] => [...small(), ...BIG[type]()];

    it(`${type}: left alone, it is loaded in many steps and equals what was stored`, async () => {
      const dir = copy(await master(type, data()));
      const ours = await startOurs(['--appendfsync', 'everysec'], SLOW, { dir });
      const o = client(ours);
      await o.connect();
      const seen = await waitBig(o, (n) => n > 0);
      // Until the load ends (INFO does not touch keys): the collection came in many pieces.
      for (;;) {
        const info = await o.info('persistence');
        if (/async_loading:0/.test(info)) break;
        seen.push(field(info, 'lmdb_load_big_records'));
        await new Promise((res) => setTimeout(res, 2));
      }
      const partial = new Set(seen.filter((n) => n > 0 && n < N));
      assert.ok(partial.size >= 5, `records read in steps (seen ${[...partial]})`);
      assert.deepEqual(await snapshot(o), await snapshot(ref));
      o.disconnect();
      await ours.stop('SIGTERM');
    });

    const touch = async (phase: string, ok: (n: number, size: number) => boolean) => {
      const dir = copy(await master(type, data()));
      const ours = await startOurs(['--appendfsync', 'everysec'], SLOW, { dir });
      const o = client(ours);
      await o.connect();
      const size = Number(await ref.call(type === 'hash' ? 'HLEN' : type === 'set' ? 'SCARD' : type === 'list' ? 'LLEN' : type === 'stream' ? 'XLEN' : 'ZCARD', 'big'));
      await waitBig(o, (n) => ok(n, size));
      // One transaction: INFO shows the collection in progress, then the commands run on it.
      const m = o.multi();
      m.info('persistence');
      for (const c of TOUCH[type]) m.call(String(c[0]), ...c.slice(1).map(String));
      const res = (await m.exec())!;
      const at = field(res[0][1] as string, 'lmdb_load_big_records');
      assert.ok(ok(at, size), `the commands ran while the collection was ${phase} (records read: ${at})`);
      const want: unknown[] = [];
      for (const c of TOUCH[type]) want.push(await call(ref, c));
      assert.deepEqual(res.slice(1).map(([e, v]) => (e ? `error: ${e.message}` : v)), want);
      assert.equal(await describeKey(o, 'big'), await describeKey(ref, 'big'));
      assert.deepEqual(await snapshot(o), await snapshot(ref));
      o.disconnect();
      await ours.stop('SIGTERM');
      await persisted(dir);
    };

    it(`${type}: reads and writes while its records are being read give Redis's answers`, () => touch('being read', (n, size) => n > 0 && n < size));
    if (type === 'zset') {
      it(`${type}: reads and writes while it is being built (all records read, sort and tree in progress)`, () => touch('being built', (n, size) => n === size));
    }
  }

  /** Big collections in db 0 and db 3, small keys beside them. */
  const mixed = (): Cmd[] => [
    ...small(), ...BIG.hash().map((c) => c.map((x) => (x === 'big' ? 'big:h' : x))), ...BIG.zset().map((c) => c.map((x) => (x === 'big' ? 'big:z' : x))),
    ['SELECT', '3'], ...small(), ...BIG.list().map((c) => c.map((x) => (x === 'big' ? 'big:l' : x))), ['SELECT', '0'],
  ];

  /** Start on a copy of the mixed data set and wait until a big collection of db 0 is loading. */
  async function midLoad(): Promise<{ o: Redis; ours: Proc; dir: string }> {
    const dir = copy(await master('mixed', mixed()));
    const ours = await startOurs(['--appendfsync', 'everysec'], SLOW, { dir });
    const o = client(ours);
    await o.connect();
    await waitBig(o, (n) => n > 0);
    return { o, ours, dir };
  }

  it('SWAPDB while a big collection is half loaded: both databases are complete and swapped', async () => {
    const { o, ours, dir } = await midLoad();
    const m = o.multi();
    m.info('persistence');
    m.swapdb(0, 3);
    const res = (await m.exec())!;
    assert.ok(field(res[0][1] as string, 'lmdb_load_big_records') > 0);
    assert.equal(res[1][1], await ref.swapdb(0, 3));
    assert.deepEqual(await snapshot(o), await snapshot(ref));
    o.disconnect();
    await ours.stop('SIGTERM');
    await persisted(dir);
  });

  it('FLUSHDB and FLUSHALL while a big collection is half loaded: nothing comes back, now or after a restart', async () => {
    for (const flush of [['FLUSHDB'], ['FLUSHALL']]) {
      const { o, ours, dir } = await midLoad();
      const m = o.multi();
      m.info('persistence');
      m.call(flush[0]);
      const res = (await m.exec())!;
      assert.ok(field(res[0][1] as string, 'lmdb_load_big_records') > 0);
      assert.equal(res[1][1], await call(ref, flush));
      for (const c of [['HSET', 'big:h', 'a', '1'], ['ZCARD', 'big:z'], ['SET', 'after', 'x']]) assert.deepEqual(await call(o, c), await call(ref, c));
      assert.deepEqual(await snapshot(o), await snapshot(ref));
      o.disconnect();
      await ours.stop('SIGTERM');
      await persisted(dir);
    }
  });

  it('keys loaded by the background pass and then deleted by a client stay deleted while the load goes on', async () => {
    const { o, ours } = await midLoad();
    // db 0's small keys are loaded (big collections come after them); the journal has not
    // reached LMDB yet, so their records are still on disk.
    assert.equal(await o.del('s:3', 's:4'), 2);
    await ref.del('s:3', 's:4');
    // Until big:h is in the table (loaded before big:z): db 0 then counts 30 + 2 + 1 - 2 keys.
    while (Number(/db0:keys=(\d+)/.exec(await o.info('keyspace'))?.[1] ?? 0) < 31) {
      assert.match(await o.info('persistence'), /async_loading:1/);
      await new Promise((res) => setTimeout(res, 2));
    }
    assert.equal(await o.del('big:h'), 1);
    await ref.del('big:h');
    const m = o.multi();
    m.info('persistence');
    m.exists('s:3', 's:4', 'big:h');
    m.hlen('big:h');
    const res = (await m.exec())!;
    assert.match(res[0][1] as string, /async_loading:1/);
    assert.deepEqual(res.slice(1).map(([, v]) => v), [0, 0]);
    assert.deepEqual(await snapshot(o), await snapshot(ref));
    o.disconnect();
    await ours.stop('SIGTERM');
  });
});
