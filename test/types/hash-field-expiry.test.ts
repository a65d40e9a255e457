/**
 * Hash field expiry (Redis 7.4 / 8.0: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL
 * HEXPIRETIME HPEXPIRETIME HPERSIST HGETDEL HGETEX HSETEX) and HSCAN NOVALUES. redis-server
 * 7.0 lacks them, so the expected replies come from the redis.io documentation and Redis 8's
 * t_hash.c, exercised through ioredis call().
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';

let proc: Proc;
let r: Redis;

before(async () => {
  proc = await startOurs(['--appendfsync', 'no']);
  r = new Redis({ port: proc.port, lazyConnect: true, maxRetriesPerRequest: 0, enableReadyCheck: false });
  await r.connect();
});
after(async () => {
  r?.disconnect();
  await proc?.stop();
});
beforeEach(async () => {
  await r.call('FLUSHALL');
});

const call = (...args: (string | number)[]) => r.call(String(args[0]), ...args.slice(1).map(String));
async function err(...args: (string | number)[]): Promise<string> {
  try {
    await call(...args);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`no error from ${args.join(' ')}`);
}
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

describe('HEXPIRE family', () => {
  it('sets TTLs and reports them per field', async () => {
    await call('HSET', 'h', 'f1', 'v1', 'f2', 'v2');
    assert.deepEqual(await call('HEXPIRE', 'h', 100, 'FIELDS', 2, 'f1', 'nofield'), [1, -2]);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 3, 'f1', 'f2', 'nofield'), [100, -1, -2]);
    const [pttl] = (await call('HPTTL', 'h', 'FIELDS', 1, 'f1')) as number[];
    assert.ok(pttl > 99000 && pttl <= 100000, String(pttl));
    const now = Date.now();
    const [t] = (await call('HEXPIRETIME', 'h', 'FIELDS', 1, 'f1')) as number[];
    assert.ok(Math.abs(t - Math.ceil((now + 100000) / 1000)) <= 1, String(t));
    const [pt] = (await call('HPEXPIRETIME', 'h', 'FIELDS', 1, 'f1')) as number[];
    assert.ok(Math.abs(pt - (now + 100000)) < 1000, String(pt));
    assert.deepEqual(await call('HPEXPIRE', 'h', 5000, 'FIELDS', 1, 'f2'), [1]);
    const [ttl2] = (await call('HTTL', 'h', 'FIELDS', 1, 'f2')) as number[];
    assert.equal(ttl2, 5);
    const at = Math.floor(Date.now() / 1000) + 1000;
    assert.deepEqual(await call('HEXPIREAT', 'h', at, 'FIELDS', 1, 'f1'), [1]);
    assert.deepEqual(await call('HEXPIRETIME', 'h', 'FIELDS', 1, 'f1'), [at]);
    assert.deepEqual(await call('HPEXPIREAT', 'h', at * 1000 + 5, 'FIELDS', 1, 'f1'), [1]);
    assert.deepEqual(await call('HPEXPIRETIME', 'h', 'FIELDS', 1, 'f1'), [at * 1000 + 5]);
  });

  it('NX XX GT LT conditions (a field without TTL counts as infinite)', async () => {
    await call('HSET', 'h', 'a', '1', 'b', '2');
    assert.deepEqual(await call('HEXPIRE', 'h', 100, 'XX', 'FIELDS', 1, 'a'), [0]);
    assert.deepEqual(await call('HEXPIRE', 'h', 100, 'GT', 'FIELDS', 1, 'a'), [0]);
    assert.deepEqual(await call('HEXPIRE', 'h', 100, 'LT', 'FIELDS', 1, 'a'), [1]);
    assert.deepEqual(await call('HEXPIRE', 'h', 100, 'NX', 'FIELDS', 2, 'a', 'b'), [0, 1]);
    assert.deepEqual(await call('HEXPIRE', 'h', 200, 'xx', 'FIELDS', 1, 'a'), [1]);
    assert.deepEqual(await call('HEXPIRE', 'h', 50, 'gt', 'FIELDS', 1, 'a'), [0]);
    assert.deepEqual(await call('HEXPIRE', 'h', 300, 'gt', 'FIELDS', 1, 'a'), [1]);
    assert.deepEqual(await call('HEXPIRE', 'h', 400, 'lt', 'FIELDS', 1, 'a'), [0]);
    assert.deepEqual(await call('HEXPIRE', 'h', 10, 'lt', 'FIELDS', 1, 'a'), [1]);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 2, 'a', 'b'), [10, 100]);
  });

  it('a time in the past deletes the field (2), and the key with its last field', async () => {
    await call('HSET', 'h', 'a', '1', 'b', '2');
    assert.deepEqual(await call('HEXPIREAT', 'h', 0, 'FIELDS', 1, 'a'), [2]);
    assert.deepEqual(await call('HGETALL', 'h'), ['b', '2']);
    assert.deepEqual(await call('HPEXPIRE', 'h', 0, 'FIELDS', 2, 'b', 'b'), [2, -2]);
    assert.equal(await call('DEL', 'h'), 0);
    assert.deepEqual(await call('HEXPIRE', 'nokey', 10, 'FIELDS', 2, 'a', 'b'), [-2, -2]);
    assert.deepEqual(await call('HTTL', 'nokey', 'FIELDS', 1, 'a'), [-2]);
    assert.deepEqual(await call('HPERSIST', 'nokey', 'FIELDS', 1, 'a'), [-2]);
  });

  it('fields expire, and the hash with them', async () => {
    await call('HSET', 'h', 'a', '1', 'b', '2', 'c', '3');
    await call('HPEXPIRE', 'h', 40, 'FIELDS', 2, 'a', 'b');
    assert.equal(await call('HLEN', 'h'), 3);
    await sleep(80);
    assert.equal(await call('HGET', 'h', 'a'), null);
    assert.equal(await call('HLEN', 'h'), 1);
    assert.deepEqual(await call('HGETALL', 'h'), ['c', '3']);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 2, 'a', 'c'), [-2, -1]);
    await call('HPEXPIRE', 'h', 30, 'FIELDS', 1, 'c');
    await sleep(60);
    assert.equal(await call('HLEN', 'h'), 0);
    assert.equal(await call('DEL', 'h'), 0);
  });

  it('active expiry: fields and keys go away without being accessed', async () => {
    await call('HSET', 'h', 'a', '1');
    await call('HSET', 'h2', 'a', '1', 'b', '2');
    await call('HPEXPIRE', 'h', 20, 'FIELDS', 1, 'a');
    await call('HPEXPIRE', 'h2', 20, 'FIELDS', 1, 'a');
    await call('HSET', 'h3', 'a', '1');
    await call('HGETEX', 'h3', 'PX', 20, 'FIELDS', 1, 'a');
    await call('HSETEX', 'h4', 'PX', 20, 'FIELDS', 1, 'a', '1');
    await sleep(300);
    assert.equal(await call('DEL', 'h', 'h3', 'h4'), 0);
    assert.equal(await call('DBSIZE'), 1);
  });

  it('HSET drops a field TTL; HINCRBY and HINCRBYFLOAT keep it', async () => {
    await call('HSET', 'h', 'a', '1', 'n', '5', 'x', '1.5');
    await call('HEXPIRE', 'h', 100, 'FIELDS', 3, 'a', 'n', 'x');
    await call('HSET', 'h', 'a', '2');
    await call('HINCRBY', 'h', 'n', 1);
    await call('HINCRBYFLOAT', 'h', 'x', '0.5');
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 3, 'a', 'n', 'x'), [-1, 100, 100]);
  });

  it('HPERSIST', async () => {
    await call('HSET', 'h', 'a', '1', 'b', '2');
    assert.deepEqual(await call('HPERSIST', 'h', 'FIELDS', 2, 'a', 'z'), [-1, -2]);
    await call('HEXPIRE', 'h', 100, 'FIELDS', 1, 'a');
    assert.deepEqual(await call('HPERSIST', 'h', 'FIELDS', 3, 'a', 'a', 'b'), [1, -1, -1]);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 1, 'a'), [-1]);
  });

  it('listpack order follows expiry times (listpackex)', async () => {
    const t = Date.now() + 100000;
    await call('HSET', 'h', 'a', '1', 'b', '2', 'c', '3');
    await call('HPEXPIREAT', 'h', t, 'FIELDS', 1, 'c');
    assert.deepEqual(await call('HKEYS', 'h'), ['c', 'a', 'b']);
    await call('HPEXPIREAT', 'h', t - 50000, 'FIELDS', 1, 'b');
    assert.deepEqual(await call('HKEYS', 'h'), ['b', 'c', 'a']);
    // Same time as c: inserted before it (before the first field expiring at or after it).
    await call('HPEXPIREAT', 'h', t, 'FIELDS', 1, 'a');
    assert.deepEqual(await call('HKEYS', 'h'), ['b', 'a', 'c']);
    await call('HPERSIST', 'h', 'FIELDS', 1, 'b');
    assert.deepEqual(await call('HKEYS', 'h'), ['a', 'c', 'b']);
    await call('HSET', 'h', 'a', 'new', 'd', '4');
    assert.deepEqual(await call('HKEYS', 'h'), ['c', 'b', 'a', 'd']);
  });

  it('errors', async () => {
    await call('HSET', 'h', 'a', '1');
    await call('SET', 's', 'x');
    assert.equal(await err('HEXPIRE', 's', 10, 'FIELDS', 1, 'a'), 'WRONGTYPE Operation against a key holding the wrong kind of value');
    assert.equal(await err('HTTL', 's', 'FIELDS', 1, 'a'), 'WRONGTYPE Operation against a key holding the wrong kind of value');
    assert.equal(await err('HPERSIST', 's', 'FIELDS', 1, 'a'), 'WRONGTYPE Operation against a key holding the wrong kind of value');
    assert.equal(await err('HEXPIRE', 'h', -1, 'FIELDS', 1, 'a'), 'ERR invalid expire time, must be >= 0');
    assert.equal(await err('HEXPIRE', 'h', 'abc', 'FIELDS', 1, 'a'), 'ERR value is not an integer or out of range');
    assert.equal(await err('HEXPIRE', 'h', '70368744177664', 'FIELDS', 1, 'a'), "ERR invalid expire time in 'hexpire' command");
    assert.equal(await err('HPEXPIREAT', 'h', '70368744177664', 'FIELDS', 1, 'a'), "ERR invalid expire time in 'hpexpireat' command");
    assert.deepEqual(await call('HPEXPIREAT', 'h', '70368744177663', 'FIELDS', 1, 'a'), [1]);
    assert.equal(await err('HEXPIRE', 'h', 10, 'FIELDS', 0, 'a'), 'ERR Parameter `numFields` should be greater than 0');
    assert.equal(await err('HEXPIRE', 'h', 10, 'FIELDS', 'x', 'a'), 'ERR Parameter `numFields` should be greater than 0');
    assert.equal(await err('HEXPIRE', 'h', 10, 'FIELDS', 2, 'a'), 'ERR The `numfields` parameter must match the number of arguments');
    assert.equal(await err('HEXPIRE', 'h', 10, 'XX', 'NOPE', 1, 'a'), 'ERR Mandatory argument FIELDS is missing or not at the right position');
    assert.equal(await err('HEXPIRE', 'h', 10, 'FIELDS', 1), "ERR wrong number of arguments for 'hexpire' command");
    assert.equal(await err('HTTL', 'h', 'FIELDS', 0, 'a'), 'ERR Number of fields must be a positive integer');
    assert.equal(await err('HTTL', 'h', 'FIELD', 1, 'a'), 'ERR Mandatory argument FIELDS is missing or not at the right position');
    assert.equal(await err('HPTTL', 'h', 'FIELDS', 3, 'a'), 'ERR The `numfields` parameter must match the number of arguments');
    assert.equal(await err('HPERSIST', 'h', 'FIELDS', -1, 'a'), 'ERR Number of fields must be a positive integer');
  });
});

describe('HGETDEL / HGETEX / HSETEX', () => {
  it('HGETDEL returns and deletes, and deletes the emptied key', async () => {
    await call('HSET', 'h', 'a', '1', 'b', '2');
    assert.deepEqual(await call('HGETDEL', 'h', 'FIELDS', 2, 'a', 'zz'), ['1', null]);
    assert.deepEqual(await call('HGETALL', 'h'), ['b', '2']);
    assert.deepEqual(await call('HGETDEL', 'h', 'FIELDS', 2, 'b', 'b'), ['2', null]);
    assert.equal(await call('DEL', 'h'), 0);
    assert.deepEqual(await call('HGETDEL', 'nokey', 'FIELDS', 1, 'a'), [null]);
    assert.equal(await err('HGETDEL', 'h', 'FIELDS', 2, 'a'), 'ERR The `numfields` parameter must match the number of arguments');
    assert.equal(await err('HGETDEL', 'h', 'FIELDS', 0, 'a'), 'ERR Number of fields must be a positive integer');
    assert.equal(await err('HGETDEL', 'h', 'X', 1, 'a'), 'ERR Mandatory argument FIELDS is missing or not at the right position');
    await call('SET', 's', 'x');
    assert.equal(await err('HGETDEL', 's', 'FIELDS', 1, 'a'), 'WRONGTYPE Operation against a key holding the wrong kind of value');
  });

  it('HGETEX gets values and sets or removes TTLs', async () => {
    await call('HSET', 'h', 'a', '1', 'b', '2', 'c', '3');
    assert.deepEqual(await call('HGETEX', 'h', 'FIELDS', 2, 'a', 'zz'), ['1', null]);
    assert.deepEqual(await call('HGETEX', 'h', 'EX', 100, 'FIELDS', 2, 'a', 'zz'), ['1', null]);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 2, 'a', 'b'), [100, -1]);
    assert.deepEqual(await call('HGETEX', 'h', 'PX', 5000, 'FIELDS', 1, 'b'), ['2']);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 1, 'b'), [5]);
    assert.deepEqual(await call('HGETEX', 'h', 'PERSIST', 'FIELDS', 2, 'a', 'c'), ['1', '3']);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 2, 'a', 'c'), [-1, -1]);
    const at = Math.floor(Date.now() / 1000) + 500;
    assert.deepEqual(await call('HGETEX', 'h', 'EXAT', at, 'FIELDS', 1, 'c'), ['3']);
    assert.deepEqual(await call('HEXPIRETIME', 'h', 'FIELDS', 1, 'c'), [at]);
    assert.deepEqual(await call('HGETEX', 'h', 'PXAT', 1, 'FIELDS', 1, 'c'), ['3']);
    assert.deepEqual(await call('HGETALL', 'h'), ['b', '2', 'a', '1']);
    assert.deepEqual(await call('HGETEX', 'nokey', 'EX', 10, 'FIELDS', 2, 'a', 'b'), [null, null]);
    assert.equal(await err('HGETEX', 'h', 'EX', -1, 'FIELDS', 1, 'a'), 'ERR invalid expire time, must be >= 0');
    assert.equal(await err('HGETEX', 'h', 'EX', 'x', 'FIELDS', 1, 'a'), 'ERR value is not an integer or out of range');
    assert.equal(await err('HGETEX', 'h', 'EX', '70368744177664', 'FIELDS', 1, 'a'), "ERR invalid expire time in 'hgetex' command");
    assert.equal(await err('HGETEX', 'h', 'BOGUS', 'FIELDS', 1, 'a'), 'ERR Mandatory argument FIELDS is missing or not at the right position');
    assert.equal(await err('HGETEX', 'h', 'FIELDS', 2, 'a'), 'ERR The `numfields` parameter must match the number of arguments');
    assert.equal(await err('HGETEX', 'h', 'PERSIST', 'FIELDS', 'x', 'a'), 'ERR Number of fields must be a positive integer');
  });

  it('HSETEX sets values with an optional expiry and condition', async () => {
    assert.equal(await call('HSETEX', 'h', 'FXX', 'FIELDS', 1, 'a', '1'), 0);
    assert.equal(await call('DEL', 'h'), 0);
    assert.equal(await call('HSETEX', 'h', 'FNX', 'EX', 100, 'FIELDS', 2, 'a', '1', 'b', '2'), 1);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 2, 'a', 'b'), [100, 100]);
    assert.equal(await call('HSETEX', 'h', 'FNX', 'FIELDS', 2, 'c', '3', 'a', 'x'), 0);
    assert.equal(await call('HSETEX', 'h', 'FXX', 'FIELDS', 2, 'a', 'x', 'c', '3'), 0);
    assert.equal(await call('HSETEX', 'h', 'FXX', 'KEEPTTL', 'FIELDS', 1, 'a', 'A'), 1);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 1, 'a'), [100]);
    assert.equal(await call('HSETEX', 'h', 'FIELDS', 1, 'a', 'AA'), 1);
    assert.deepEqual(await call('HTTL', 'h', 'FIELDS', 1, 'a'), [-1]);
    assert.equal(await call('HSETEX', 'h', 'PX', 0, 'FIELDS', 1, 'b', 'gone'), 1);
    assert.deepEqual(await call('HGETALL', 'h'), ['a', 'AA']);
    assert.equal(await call('HSETEX', 'h2', 'PXAT', 1, 'FIELDS', 1, 'x', 'y'), 1);
    assert.equal(await call('DEL', 'h2'), 0);
  });

  it('HSETEX argument errors', async () => {
    assert.equal(await err('HSETEX', 'h', 'FNX', 'FXX', 'FIELDS', 1, 'a', '1'), 'ERR Only one of FXX or FNX arguments can be specified');
    assert.equal(await err('HSETEX', 'h', 'EX', 10, 'PX', 10, 'FIELDS', 1, 'a', '1'), 'ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified');
    assert.equal(await err('HSETEX', 'h', 'KEEPTTL', 'EX', 10, 'FIELDS', 1, 'a', '1'), 'ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified');
    assert.equal(await err('HSETEX', 'h', 'BOGUS', 'FIELDS', 1, 'a', '1'), 'ERR unknown argument: BOGUS');
    assert.equal(await err('HSETEX', 'h', 'FIELDS', 0, 'a', '1'), 'ERR invalid number of fields');
    assert.equal(await err('HSETEX', 'h', 'FIELDS', 2, 'a', '1'), "ERR wrong number of arguments for 'hsetex' command");
    assert.equal(await err('HSETEX', 'h', 'FIELDS', 1, 'a', '1', 'b'), "ERR wrong number of arguments for 'hsetex' command");
    assert.equal(await err('HSETEX', 'h', 'EX', -5, 'FIELDS', 1, 'a', '1'), 'ERR invalid expire time, must be >= 0');
    assert.equal(await err('HSETEX', 'h', 'FXX', 'FNX', 'EX', 5, 'x'), 'ERR Only one of FXX or FNX arguments can be specified');
    await call('SET', 's', 'x');
    assert.equal(await err('HSETEX', 's', 'FIELDS', 1, 'a', '1'), 'WRONGTYPE Operation against a key holding the wrong kind of value');
  });
});

describe('HSCAN NOVALUES', () => {
  it('returns field names only', async () => {
    await call('HSET', 'h', 'a', '1', 'b', '2');
    assert.deepEqual(await call('HSCAN', 'h', 0, 'NOVALUES'), ['0', ['a', 'b']]);
    assert.deepEqual(await call('HSCAN', 'h', 0, 'MATCH', 'b', 'novalues'), ['0', ['b']]);
    await call('SADD', 's', 'x');
    assert.equal(await err('SSCAN', 's', 0, 'NOVALUES'), 'ERR NOVALUES option can only be used in HSCAN');
  });

  it('a hashtable-encoded hash scanned to the end, with and without values', async () => {
    const args: string[] = [];
    for (let i = 0; i < 1000; i++) args.push(`f${i}`, `v${i}`);
    await call('HSET', 'h', ...args);
    let cursor = '0';
    const fields = new Set<string>();
    let calls = 0;
    do {
      const [next, batch] = (await call('HSCAN', 'h', cursor, 'COUNT', 50, 'NOVALUES')) as [string, string[]];
      for (const f of batch) fields.add(f);
      cursor = next;
      calls++;
    } while (cursor !== '0');
    assert.equal(fields.size, 1000);
    assert.ok(calls >= 20, `expected paging, got ${calls} calls`);
  });
});
