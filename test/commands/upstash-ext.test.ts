/**
 * Upstash's additions to Redis 7 that @upstash/redis exposes: BITOP DIFF/DIFF1/ANDOR/ONE
 * (Redis 8.2's operators) checked bit by bit against a model over random strings, and SCAN
 * ... WITHTYPE. Over TCP (ioredis) and over REST with the unmodified SDK; MEMORY USAGE over REST
 * (the SDK has no helper for it: plain fetch, as Upstash's REST docs show).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis as IORedis } from 'ioredis';
import { Redis } from '@upstash/redis';
import { startOurs, type Proc } from '../helpers/server.js';
import { rng } from '../helpers/rng.js';
import { Rest, TOKEN, TOKEN_ARGS } from '../http/rest-helpers.js';

let srv: Proc;
let r: IORedis;
let sdk: Redis;

before(async () => {
  srv = await startOurs(TOKEN_ARGS);
  r = new IORedis({ port: srv.port, lazyConnect: true });
  await r.connect();
  sdk = new Redis({ url: `http://127.0.0.1:${srv.httpPort}`, token: TOKEN, enableTelemetry: false });
});
after(async () => {
  r.disconnect();
  await srv.stop();
});

/** One bit of the result, from the same bit of each source (missing = 0). */
const MODEL: Record<string, (x: number, ys: number[]) => number> = {
  AND: (x, ys) => ys.reduce((a, b) => a & b, x),
  OR: (x, ys) => ys.reduce((a, b) => a | b, x),
  XOR: (x, ys) => ys.reduce((a, b) => a ^ b, x),
  DIFF: (x, ys) => x & (ys.some((y) => y === 1) ? 0 : 1),
  DIFF1: (x, ys) => (x === 0 && ys.some((y) => y === 1) ? 1 : 0),
  ANDOR: (x, ys) => x & (ys.some((y) => y === 1) ? 1 : 0),
  ONE: (x, ys) => ([x, ...ys].filter((b) => b === 1).length === 1 ? 1 : 0),
};

function expected(op: string, srcs: Buffer[]): Buffer {
  const max = Math.max(...srcs.map((s) => s.length));
  const out = Buffer.alloc(max);
  const bit = (s: Buffer, i: number) => (i >> 3 < s.length ? (s[i >> 3] >> (7 - (i & 7))) & 1 : 0);
  for (let i = 0; i < max * 8; i++) {
    if (MODEL[op](bit(srcs[0], i), srcs.slice(1).map((s) => bit(s, i)))) out[i >> 3] |= 0x80 >> (i & 7);
  }
  return out;
}

describe('BITOP DIFF, DIFF1, ANDOR, ONE', () => {
  it('matches the bit model over random strings of different lengths, missing keys included', async () => {
    const rand = rng(20261127);
    for (let round = 0; round < 40; round++) {
      const n = 2 + Math.floor(rand() * 4);
      const srcs: Buffer[] = [];
      for (let k = 0; k < n; k++) {
        const len = rand() < 0.15 ? 0 : Math.floor(rand() * 9);
        const b = Buffer.alloc(len);
        for (let i = 0; i < len; i++) b[i] = Math.floor(rand() * 256);
        srcs.push(b);
        if (len === 0) await r.del(`b:${k}`); // a missing key counts as an empty string
        else await r.set(`b:${k}`, b);
      }
      const keys = srcs.map((_, k) => `b:${k}`);
      for (const op of Object.keys(MODEL)) {
        const want = expected(op, srcs);
        assert.equal(await r.call('BITOP', op, 'dst', ...keys), want.length, `${op} length`);
        const got = await r.getBuffer('dst');
        if (want.length === 0) assert.equal(got, null, `${op}: an empty result deletes the destination`);
        else assert.deepEqual(got, want, `${op} of ${srcs.map((s) => s.toString('hex')).join(' ')}`);
      }
    }
  });

  it('DIFF, DIFF1 and ANDOR need two sources; ONE takes one; errors as Redis 8.2', async () => {
    await r.set('one', Buffer.from([0xf0]));
    for (const op of ['DIFF', 'DIFF1', 'ANDOR', 'diff1']) {
      await assert.rejects(r.call('BITOP', op, 'dst', 'one'), { message: `ERR BITOP ${op.toUpperCase()} must be called with at least two source keys.` });
    }
    assert.equal(await r.call('BITOP', 'ONE', 'dst', 'one'), 1);
    assert.deepEqual(await r.getBuffer('dst'), Buffer.from([0xf0]));
    await assert.rejects(r.call('BITOP', 'NOT', 'dst', 'one', 'one'), { message: 'ERR BITOP NOT must be called with a single source key.' });
    await assert.rejects(r.call('BITOP', 'NAND', 'dst', 'one', 'one'), { message: 'ERR syntax error' });
    await r.lpush('list', 'x');
    await assert.rejects(r.call('BITOP', 'DIFF', 'dst', 'one', 'list'), /^ReplyError: WRONGTYPE/);
  });

  it('through @upstash/redis over REST', async () => {
    await sdk.set('x', 'abc');
    await sdk.set('y', 'a');
    const x = Buffer.from('abc');
    const y = Buffer.from('a');
    assert.equal(await sdk.bitop('diff', 'd', 'x', 'y'), 3);
    assert.deepEqual(await r.getBuffer('d'), expected('DIFF', [x, y]));
    assert.equal(await sdk.bitop('andor', 'd', 'x', 'y'), 3);
    assert.deepEqual(await r.getBuffer('d'), expected('ANDOR', [x, y]));
    assert.equal(await sdk.bitop('diff1', 'd', 'y', 'x'), 3);
    assert.deepEqual(await r.getBuffer('d'), expected('DIFF1', [y, x]));
  });
});

describe('SCAN WITHTYPE', () => {
  it('each key is followed by its type; TYPE and MATCH still filter', async () => {
    await r.flushdb();
    await r.set('s', '1');
    await r.rpush('l', 'a');
    await r.hset('h', 'f', 'v');
    await r.zadd('z', 1, 'm');
    await r.sadd('set', 'm');
    await r.xadd('st', '*', 'f', 'v');
    const [cursor, flat] = await r.call('SCAN', '0', 'COUNT', 100, 'WITHTYPE') as [string, string[]];
    assert.equal(cursor, '0');
    const pairs = new Map<string, string>();
    for (let i = 0; i < flat.length; i += 2) pairs.set(flat[i], flat[i + 1]);
    assert.deepEqual(Object.fromEntries([...pairs].sort()), { h: 'hash', l: 'list', s: 'string', set: 'set', st: 'stream', z: 'zset' });
    assert.deepEqual(await r.call('SCAN', '0', 'COUNT', 100, 'TYPE', 'hash', 'WITHTYPE'), ['0', ['h', 'hash']]);
    assert.deepEqual(await r.call('SCAN', '0', 'MATCH', 's*', 'COUNT', 100, 'WITHTYPE', 'TYPE', 'string'), ['0', ['s', 'string']]);
    assert.deepEqual(await r.scan('0', 'COUNT', 100, 'TYPE', 'zset'), ['0', ['z']]);
  });

  it('the SDK scan({ withType: true }) gets { key, type } objects', async () => {
    const [cursor, items] = await sdk.scan(0, { withType: true, count: 100 });
    assert.equal(cursor, '0');
    const byKey = Object.fromEntries(items.map((i: { key: string; type: string }) => [i.key, i.type]));
    assert.equal(byKey.l, 'list');
    assert.equal(byKey.z, 'zset');
    assert.equal(byKey.st, 'stream');
  });
});

describe('MEMORY USAGE over REST', () => {
  it('answers as over TCP, in the path, body and pipeline forms; a missing key is null', async () => {
    await r.flushdb();
    await r.set('m:s', 'x'.repeat(100));
    await r.rpush('m:l', 'a', 'b', 'c');
    const rest = new Rest(`http://127.0.0.1:${srv.httpPort}`);
    for (const key of ['m:s', 'm:l']) {
      const tcp = await r.call('MEMORY', 'USAGE', key) as number;
      assert.ok(tcp > 0);
      assert.deepEqual((await rest.cmd(['MEMORY', 'USAGE', key])).json, { result: tcp });
      assert.deepEqual((await rest.get(`/memory/usage/${encodeURIComponent(key)}`)).json, { result: tcp });
      assert.deepEqual((await rest.cmd(['MEMORY', 'USAGE', key, 'SAMPLES', '0'])).json, { result: tcp });
    }
    assert.deepEqual((await rest.cmd(['MEMORY', 'USAGE', 'm:none'])).json, { result: null });
    assert.deepEqual((await rest.pipeline([['MEMORY', 'USAGE', 'm:s'], ['MEMORY', 'USAGE', 'm:none']])).json,
      [{ result: await r.call('MEMORY', 'USAGE', 'm:s') }, { result: null }]);
    const bad = await rest.cmd(['MEMORY', 'USAGE', 'm:s', 'SAMPLES']);
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /^ERR syntax error/);
  });
});
