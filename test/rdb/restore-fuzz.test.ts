/**
 * RESTORE fuzzer: valid payloads of every type and encoding, mutated (bit flips, boundary
 * bytes, truncation, insertion, duplicated slices) and resealed with a correct CRC so that
 * they reach the decoder. Every reply must be OK or "ERR Bad data format"; a restored value
 * must then answer its read commands and DUMP; the server must stay up. Bounded here
 * (RDB_FUZZ_ITERATIONS, default 3000; a long run: RDB_FUZZ_ITERATIONS=200000).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';
import { rng } from '../helpers/rng.js';
import { RdbReader } from '../../dist/rdb/reader.js';
import { intset, len, listpackStrings, payload, reseal, str, ziplist, zipmap } from './fixtures.js';

const ITERATIONS = Number(process.env.RDB_FUZZ_ITERATIONS ?? 3000);

let ours: Proc;
let o: Redis;

before(async () => {
  ours = await startOurs(['--appendfsync', 'no']);
  o = new Redis(ours.port, { maxRetriesPerRequest: 0 });
});
after(async () => {
  o?.disconnect();
  await ours?.stop();
});

/** The same payload with every LZF string stored raw (so mutations reach the structures inside). */
function raw(p: Buffer): Buffer {
  const t = p[0];
  const rd = new RdbReader(p, 1, p.length - 10);
  const parts: Buffer[] = [];
  if ([9, 10, 11, 12, 13, 16, 17, 20].includes(t)) {
    parts.push(str(Buffer.from(rd.string())));
  } else if (t === 18) {
    const n = rd.len();
    parts.push(len(n));
    for (let i = 0; i < n; i++) parts.push(len(rd.len()), str(Buffer.from(rd.string())));
  } else if (t === 19) {
    const n = rd.len();
    parts.push(len(n));
    for (let i = 0; i < n; i++) parts.push(str(Buffer.from(rd.string())), str(Buffer.from(rd.string())));
    parts.push(p.subarray(rd.p, p.length - 10));
  } else {
    return p;
  }
  return payload(t, Buffer.concat(parts), 10);
}

async function seeds(): Promise<Buffer[]> {
  const c = o;
  await c.flushall();
  await c.set('s1', 'x'.repeat(50));
  await c.set('s2', '12345');
  await c.rpush('l1', 'a', 'b', '1', '-300', '70000', 'y'.repeat(100));
  await c.rpush('l2', ...Array.from({ length: 300 }, (_, i) => `e${i}`.repeat(10)));
  await c.sadd('i1', 1, 2, 3, 70000);
  await c.sadd('t1', 'a', 'b', 'c');
  await c.zadd('z1', 1, 'a', 2.5, 'b', -1, 'c');
  await c.zadd('z2', ...Array.from({ length: 200 }, (_, i) => [i, `m${i}`]).flat());
  await c.hset('h1', 'f', 'v', 'n', '12', 'g', 'z'.repeat(30));
  await c.hset('h2', ...Array.from({ length: 600 }, (_, i) => [`f${i}`, `v${i}`]).flat());
  await c.xadd('x1', '1-1', 'a', '1', 'b', '2');
  await c.xadd('x1', '1-2', 'a', '3', 'b', '4');
  await c.xadd('x1', '2-0', 'c', '5');
  await c.xdel('x1', '1-2');
  await c.xgroup('CREATE', 'x1', 'g', '0');
  await c.xreadgroup('GROUP', 'g', 'alice', 'STREAMS', 'x1', '>');
  const out: Buffer[] = [];
  for (const k of ['s1', 's2', 'l1', 'l2', 'i1', 't1', 'z1', 'z2', 'h1', 'h2', 'x1']) {
    const p = (await c.dumpBuffer(k))!;
    out.push(p, raw(p));
  }
  out.push(
    payload(10, str(ziplist(['a', 1, 300, -70000, 5000000000, 'q'.repeat(70)]))),
    payload(13, str(ziplist(['f', 'v', 'n', 12]))),
    payload(12, str(ziplist(['a', 1, 'b', '2.5']))),
    payload(9, str(zipmap([['f', 'v'], ['g', 'w']], 2)), 6),
    payload(11, str(intset(4, [-70000, 1, 70000]))),
    payload(20, str(listpackStrings(['a', 'b'])), 11),
    payload(14, Buffer.concat([len(2), str(ziplist(['x', 'y'])), str(ziplist([1, 2]))]), 8),
  );
  return out;
}

function mutate(p: Buffer, rand: () => number): Buffer {
  const body = Buffer.from(p.subarray(0, p.length - 10));
  const n = 1 + Math.floor(rand() * 4);
  let b = body;
  for (let k = 0; k < n; k++) {
    const at = Math.floor(rand() * b.length);
    switch (Math.floor(rand() * 7)) {
      case 0: b[at] ^= 1 << Math.floor(rand() * 8); break;
      case 1: b[at] = [0, 0xff, 0x7f, 0x80, 0xfe, 0x40, 0xc0][Math.floor(rand() * 7)]; break;
      case 2: b = b.subarray(0, at); break;
      case 3: b = Buffer.concat([b.subarray(0, at), Buffer.from([Math.floor(rand() * 256)]), b.subarray(at)]); break;
      case 4: { const e = Math.min(b.length, at + 1 + Math.floor(rand() * 16)); b = Buffer.concat([b.subarray(0, e), b.subarray(at, e), b.subarray(e)]); break; }
      case 5: b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + Math.floor(rand() * 8)))]); break;
      default: b[at] = Math.floor(rand() * 256);
    }
    if (b.length === 0) break;
  }
  return reseal(Buffer.concat([b, p.subarray(p.length - 10)]));
}

/** Read a restored value through its commands (none may fail but with WRONGTYPE-free replies). */
async function exercise(c: Redis, key: string): Promise<void> {
  const type = await c.type(key);
  if (type === 'list') { await c.lrange(key, 0, -1); await c.lindex(key, -1); await c.rpush(key, 'z'); await c.lpop(key); }
  else if (type === 'set') { await c.smembers(key); await c.sadd(key, 'zz'); await c.srandmember(key, -3); }
  else if (type === 'zset') { await c.zrange(key, '0', '-1', 'WITHSCORES'); await c.zadd(key, 1, 'zz'); await c.zrangebyscore(key, '-inf', '+inf'); }
  else if (type === 'hash') { await c.hgetall(key); await c.hset(key, 'zz', '1'); }
  else if (type === 'stream') { await c.xrange(key, '-', '+'); await c.xrevrange(key, '+', '-'); await c.call('XINFO', 'STREAM', key, 'FULL'); await c.xadd(key, '*', 'f', 'v'); await c.xtrim(key, 'MAXLEN', '1'); }
  else if (type === 'string') await c.getBuffer(key);
  await c.dumpBuffer(key);
}

describe('RESTORE fuzzer', () => {
  it(`${ITERATIONS} mutated payloads: OK or Bad data format, never a crash`, async () => {
    const base = await seeds();
    const rand = rng(Number(process.env.RDB_FUZZ_SEED ?? 19));
    let ok = 0;
    let bad = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const p = mutate(base[i % base.length], rand);
      let reply: string;
      try {
        reply = await o.restore('f', 0, p, 'REPLACE');
      } catch (e) {
        reply = (e as Error).message;
      }
      if (reply === 'OK') {
        ok++;
        await exercise(o, 'f');
      } else {
        assert.ok(reply === 'ERR Bad data format' || reply === 'ERR DUMP payload version or checksum are wrong', `payload ${p.toString('hex')}: ${reply}`);
        bad++;
      }
    }
    assert.equal(await o.ping(), 'PONG');
    assert.equal(ours.proc.exitCode, null);
    console.log(`fuzz: ${ok} restored, ${bad} refused`);
    assert.ok(bad > 0 && ok > 0);
  });
});
