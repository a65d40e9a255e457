/**
 * Memory accounting and maxmemory, with ioredis, against our server and (where the behaviour
 * can be compared) a real redis-server with the same settings: MEMORY USAGE figures, INFO
 * memory, the eight eviction policies, the OOM gate, OBJECT FREQ under LFU.
 *
 * Eviction scenarios spread their writes over a few seconds: Redis's LRU clock (and ours)
 * ticks in seconds, so keys written in the same second are equally old.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis as IORedis } from 'ioredis';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OOM = "OOM command not allowed when used memory > 'maxmemory'.";
const VAL = 'v'.repeat(1000);

function field(info: string, name: string): number {
  const m = new RegExp(`^${name}:(\\d+)`, 'm').exec(info);
  assert.ok(m, `INFO has ${name}`);
  return Number(m[1]);
}

async function used(r: IORedis): Promise<number> {
  return field(await r.info('memory'), 'used_memory');
}

/** A server and a client; `redis` says which kind it is. */
interface Side { name: string; proc: Proc; r: IORedis }

async function open(name: string, proc: Proc): Promise<Side> {
  return { name, proc, r: new IORedis({ port: proc.port, host: '127.0.0.1', maxRetriesPerRequest: 1 }) };
}

/** maxmemory a given amount above what the (empty) server uses now. */
async function limitAbove(r: IORedis, extra: number, policy: string): Promise<number> {
  await r.flushall();
  await r.config('SET', 'maxmemory', '0');
  await r.config('RESETSTAT');
  const limit = (await used(r)) + extra;
  await r.config('SET', 'maxmemory-policy', policy);
  await r.config('SET', 'maxmemory', String(limit));
  return limit;
}

async function reset(r: IORedis): Promise<void> {
  await r.config('SET', 'maxmemory', '0');
  await r.config('SET', 'maxmemory-policy', 'noeviction');
  await r.flushall();
}

describe('memory accounting and maxmemory', () => {
  let ours: Side;
  let redis: Side;
  before(async () => {
    const [a, b] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
    ours = await open('ours', a);
    redis = await open('redis', b);
  });
  after(async () => {
    for (const s of [ours, redis]) {
      s?.r.disconnect();
      await s?.proc.stop();
    }
  });

  it('MEMORY USAGE: strings as Redis to the byte, collections in its ballpark', async () => {
    const fill = async (r: IORedis) => {
      await r.flushall();
      await r.set('str', 'bar');
      await r.set('int', '12345');
      await r.set('raw', 'x'.repeat(1000));
      await r.sadd('intset', 1, 2, 3);
      await r.hset('h', 'f', 'v', 'f2', 'v2');
      await r.zadd('z', 1, 'a', 2, 'b');
      await r.xadd('x', '*', 'f', 'v');
      await r.rpush('l5', 'a', 'b', 'c', 'd', 'e');
      await r.rpush('l100', ...Array.from({ length: 100 }, (_, i) => String(i * 7)));
      await r.rpush('l-edited', ...Array.from({ length: 50 }, (_, i) => `id:${i}`));
      await r.lset('l-edited', 3, 'x'.repeat(300));
      await r.lpop('l-edited', 5);
      const p = r.pipeline();
      for (let i = 0; i < 300; i++) {
        p.sadd('bigset', `member${i}`);
        p.hset('bighash', `field${i}`, `value${i}`.repeat(10));
        p.zadd('bigzset', i, `member${i}`);
        p.rpush('biglist', `element${i}`);
      }
      await p.exec();
    };
    await fill(ours.r);
    await fill(redis.r);
    // Lists of one listpack node are held as its bytes: the charge is Redis's to the byte.
    for (const k of ['str', 'int', 'raw', 'l5', 'l100', 'l-edited']) {
      assert.equal(await ours.r.memory('USAGE', k), await redis.r.memory('USAGE', k), k);
    }
    for (const k of ['intset', 'h', 'z', 'x', 'bigset', 'bighash', 'bigzset', 'biglist']) {
      const a = Number(await ours.r.memory('USAGE', k, 'SAMPLES', '0'));
      const b = Number(await redis.r.memory('USAGE', k, 'SAMPLES', '0'));
      assert.ok(a > b / 2.5 && a < b * 2.5, `${k}: ours ${a}, redis ${b}`);
    }
    assert.equal(await ours.r.memory('USAGE', 'nokey'), null);
    await ours.r.flushall();
    await redis.r.flushall();
  });

  it('MEMORY USAGE of a hashtable hash: all fields up to the sample count, evenly spaced ones past it (no random draw)', async () => {
    const data = 'v'.repeat(80); // over hash-max-listpack-value: a hashtable from the start
    for (const { r } of [ours, redis]) {
      await r.hset('ht3', 'a', data, 'bb', 'x', 'ccc', 'yy');
      await r.hset('ht5', 'a', data, 'b', 'x'.repeat(40), 'c', '', 'd', 'y'.repeat(20), 'e', 'z');
      await r.hset('ht12', ...Array.from({ length: 12 }, (_, i) => [`f${i}`, i === 0 ? data : 'w'.repeat(i * 7)]).flat());
    }
    // Fields of unequal sizes: a random draw with replacement would move the figure between calls.
    // Past the sample count, the samples are evenly spaced positions: the same figure too.
    for (const [k, samples] of [['ht3', '5'], ['ht5', '5'], ['ht5', '0'], ['ht12', '5'], ['ht12', '3']]) {
      const seen = new Set<number>();
      for (let i = 0; i < 8; i++) seen.add(Number(await ours.r.memory('USAGE', k, 'SAMPLES', samples)));
      assert.equal(seen.size, 1, `${k} SAMPLES ${samples}: ${[...seen]}`);
    }
    assert.equal(await ours.r.memory('USAGE', 'ht3'), await redis.r.memory('USAGE', 'ht3'));
    await ours.r.flushall();
    await redis.r.flushall();
  });

  it('MEMORY USAGE of a set: all members up to the sample count, evenly spaced past it; an intset by its widest member', async () => {
    for (const { r } of [ours, redis]) {
      await r.sadd('s3', 'a', 'x'.repeat(40), 'y'.repeat(20));
      await r.sadd('s12', ...Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(i * 7 + 1, 'm')));
      await r.sadd('s40', ...Array.from({ length: 40 }, (_, i) => `${i}`.padEnd((i % 9) * 9 + 1, 'w')));
      await r.sadd('i-wide', ...Array.from({ length: 20 }, (_, i) => i), 100000);
      await r.sadd('i-neg', -32768, 5, 32767);
      await r.sadd('i-64', ...Array.from({ length: 30 }, (_, i) => i), 2147483648);
    }
    // Members of unequal sizes: a random draw with replacement would move the figure between calls.
    for (const [k, samples] of [['s3', '5'], ['s12', '5'], ['s12', '0'], ['s40', '5'], ['s40', '3'], ['i-wide', '5']]) {
      const seen = new Set<number>();
      for (let i = 0; i < 8; i++) seen.add(Number(await ours.r.memory('USAGE', k, 'SAMPLES', samples)));
      assert.equal(seen.size, 1, `${k} SAMPLES ${samples}: ${[...seen]}`);
    }
    // Redis sums every member of a set no bigger than the sample count, and sizes an intset
    // by its encoding: the same bytes.
    for (const k of ['s3', 'i-wide', 'i-neg', 'i-64']) {
      assert.equal(await ours.r.memory('USAGE', k), await redis.r.memory('USAGE', k), k);
    }
    await ours.r.flushall();
    await redis.r.flushall();
  });

  it('INFO memory follows the dataset as it changes', async () => {
    const r = ours.r;
    await r.flushall();
    const info0 = await r.info('memory');
    for (const f of ['used_memory', 'used_memory_peak', 'used_memory_startup', 'used_memory_dataset', 'used_memory_overhead', 'maxmemory', 'used_memory_rss']) field(info0, f);
    assert.match(info0, /^used_memory_human:[\d.]+[BKMG]$/m);
    assert.match(info0, /^maxmemory_policy:noeviction$/m);
    assert.match(info0, /^mem_fragmentation_ratio:[\d.]+$/m);
    const base = field(info0, 'used_memory');
    const p = r.pipeline();
    for (let i = 0; i < 1000; i++) p.set(`key:${i}`, VAL);
    await p.exec();
    const grown = await used(r);
    const perKey = Number(await r.memory('USAGE', 'key:1'));
    assert.ok(Math.abs(grown - base - 1000 * perKey) < 20000, `grew ${grown - base} for 1000 keys of ${perKey}`);
    await r.hset('h', 'f', 'v');
    const withHash = await used(r);
    const p2 = r.pipeline();
    for (let i = 0; i < 1000; i++) p2.hset('h', `f${i}`, VAL);
    await p2.exec();
    assert.ok((await used(r)) - withHash > 900_000, 'in-place growth of a collection is accounted');
    await r.del('h');
    assert.ok(Math.abs((await used(r)) - grown) < 2000, 'a deleted collection gives its charge back');
    await r.flushall();
    assert.ok(Math.abs((await used(r)) - base) < 2000, 'FLUSHALL gives everything back');
    assert.ok(field(await r.info('memory'), 'used_memory_peak') >= grown);
    const stats = await r.memory('STATS') as unknown[];
    assert.equal(stats[0], 'peak.allocated');
    assert.ok(stats.includes('dataset.bytes') && stats.includes('keys.count'));
  });

  for (const side of ['ours', 'redis'] as const) {
    it(`noeviction (${side}): DENYOOM refused with Redis's text, reads and DEL served`, async () => {
      const r = (side === 'ours' ? ours : redis).r;
      await limitAbove(r, 300_000, 'noeviction');
      let refused: Error | null = null;
      let n = 0;
      for (; n < 1000 && refused === null; n++) {
        try {
          await r.set(`k:${n}`, VAL);
        } catch (e) {
          refused = e as Error;
        }
      }
      assert.ok(refused, 'writes are refused past maxmemory');
      assert.equal(refused.message, OOM);
      assert.equal(await r.get('k:0'), VAL);
      await assert.rejects(r.lpush('l', 'x'), { message: OOM });
      await assert.rejects(r.eval("return redis.call('set', 'a', 'b')", 0), (e: Error) => e.message.includes(OOM));
      assert.equal(await r.eval("return redis.call('get', 'k:0')", 0), VAL);
      for (let i = 0; i < n; i++) await r.del(`k:${i}`);
      assert.equal(await r.set('after', 'ok'), 'OK', 'writes work again once memory is freed');
      await reset(r);
    });
  }

  /**
   * Fill well past maxmemory under `policy` in three rounds a second apart, reading the hot
   * keys between writes. Returns what survived.
   */
  async function hotSet(r: IORedis, policy: string) {
    const limit = await limitAbove(r, 1_000_000, policy);
    const hot = Array.from({ length: 100 }, (_, i) => `hot:${i}`);
    for (const k of hot) await r.set(k, VAL);
    let cold = 0;
    // Each round writes less than the limit holds, so that older cold keys are always there
    // to be evicted before any key as fresh as the hot ones.
    for (let round = 0; round < 4; round++) {
      await sleep(1100);
      for (let i = 0; i < 450; i++) {
        if (i % 50 === 0) for (const k of hot) await r.get(k);
        await r.set(`cold:${cold++}`, VAL);
      }
    }
    const alive = (await r.exists(...hot));
    const info = await r.info();
    return { limit, alive, evicted: field(info, 'evicted_keys'), usedNow: field(info, 'used_memory'), dbsize: await r.dbsize() };
  }

  for (const policy of ['allkeys-lru', 'allkeys-lfu']) {
    it(`${policy}: memory stays under the limit, the hot set survives (as with redis-server)`, async () => {
      const [a, b] = await Promise.all([hotSet(ours.r, policy), hotSet(redis.r, policy)]);
      for (const [name, x] of [['ours', a], ['redis', b]] as const) {
        assert.ok(x.evicted > 400, `${name} evicted ${x.evicted}`);
        // Approximated LRU/LFU (5 samples): a few hot keys may go, on redis-server too; at
        // random about a third would survive.
        assert.ok(x.alive >= 80, `${name}: ${x.alive} of 100 hot keys survived`);
      }
      assert.ok(a.usedNow <= a.limit, `ours: used ${a.usedNow} <= maxmemory ${a.limit}`);
      await Promise.all([reset(ours.r), reset(redis.r)]);
    });
  }

  it('volatile-lru / volatile-random / volatile-lfu touch only keys with a TTL; OOM when none is left', async () => {
    for (const policy of ['volatile-lru', 'volatile-random', 'volatile-lfu']) {
      const r = ours.r;
      await limitAbove(r, 600_000, policy);
      for (let i = 0; i < 200; i++) await r.set(`keep:${i}`, VAL);
      for (let i = 0; i < 300; i++) await r.set(`ttl:${i}`, VAL, 'EX', 1000);
      let err: Error | null = null;
      for (let i = 0; i < 600 && err === null; i++) {
        try {
          await r.set(`more:${i}`, VAL);
        } catch (e) {
          err = e as Error;
        }
      }
      assert.equal(await r.exists(...Array.from({ length: 200 }, (_, i) => `keep:${i}`)), 200, `${policy}: keys without TTL untouched`);
      assert.ok(field(await r.info('stats'), 'evicted_keys') > 0, policy);
      assert.ok(err !== null && err.message === OOM, `${policy}: OOM once no key with a TTL is left`);
      await reset(r);
    }
  });

  it('volatile-ttl evicts the nearest expiries first (as redis-server)', async () => {
    const run = async (r: IORedis) => {
      await limitAbove(r, 600_000, 'volatile-ttl');
      for (let i = 0; i < 400; i++) await r.set(`t:${i}`, VAL, 'EX', 10000 + i * 10);
      for (let i = 0; i < 300; i++) await r.set(`p:${i}`, VAL);
      const alive: number[] = [];
      const gone: number[] = [];
      for (let i = 0; i < 400; i++) ((await r.exists(`t:${i}`)) ? alive : gone).push(i);
      const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
      return { alive: mean(alive), gone: mean(gone), n: gone.length };
    };
    const [a, b] = await Promise.all([run(ours.r), run(redis.r)]);
    for (const [name, x] of [['ours', a], ['redis', b]] as const) {
      assert.ok(x.n > 100, `${name} evicted ${x.n}`);
      assert.ok(x.alive - x.gone > 100, `${name}: survivors expire later (${x.alive}) than the evicted (${x.gone})`);
    }
    await Promise.all([reset(ours.r), reset(redis.r)]);
  });

  it('allkeys-random evicts any key; OBJECT FREQ counts accesses under LFU only', async () => {
    const r = ours.r;
    const limit = await limitAbove(r, 400_000, 'allkeys-random');
    for (let i = 0; i < 800; i++) await r.set(`r:${i}`, VAL);
    assert.ok(field(await r.info('stats'), 'evicted_keys') > 300);
    assert.ok((await used(r)) <= limit);
    await reset(r);
    await assert.rejects(r.object('FREQ', 'x'), /ERR no such key|^$/).catch(() => {});
    await r.set('f', 'x');
    await assert.rejects(r.object('FREQ', 'f'), /An LFU maxmemory policy is not selected/);
    await r.config('SET', 'maxmemory-policy', 'allkeys-lfu');
    await r.set('f', 'x');
    const f0 = Number(await r.object('FREQ', 'f'));
    for (let i = 0; i < 300; i++) await r.get('f');
    const f1 = Number(await r.object('FREQ', 'f'));
    assert.ok(f1 > f0, `frequency grows with accesses: ${f0} -> ${f1}`);
    await assert.rejects(r.object('IDLETIME', 'f'), /An LFU maxmemory policy is selected/);
    await reset(r);
  });

  it('evicted keys leave LMDB too: a restart does not bring them back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-evict-'));
    try {
      let p = await startOurs(['--appendfsync', 'always'], {}, { dir });
      let r = new IORedis({ port: p.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      await limitAbove(r, 300_000, 'allkeys-lru');
      for (let i = 0; i < 600; i++) await r.set(`p:${i}`, VAL);
      const evicted = field(await r.info('stats'), 'evicted_keys');
      assert.ok(evicted > 200, `evicted ${evicted}`);
      const alive = await r.dbsize();
      await r.config('SET', 'maxmemory', '0');
      r.disconnect();
      await p.stop();
      p = await startOurs(['--appendfsync', 'always'], {}, { dir });
      r = new IORedis({ port: p.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      assert.equal(await r.dbsize(), alive, 'the keys after a restart are those that were not evicted');
      assert.equal(await r.exists(...Array.from({ length: 600 }, (_, i) => `p:${i}`)), alive);
      r.disconnect();
      await p.stop();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
