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
import { encode, RawClient } from '../helpers/resp-client.js';
import { Rest, TOKEN_ARGS } from '../http/rest-helpers.js';
import { Engine } from '../../dist/engine/engine.js';
import { Client, type Transport } from '../../dist/engine/client.js';
import { execute } from '../../dist/engine/dispatch.js';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { loadConfig } from '../../dist/config.js';
import { Argv } from '../../dist/resp/argv.js';
import { RespWriter } from '../../dist/resp/writer.js';
import { importRdb } from '../../dist/rdb/cli.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
    const seed = Number(process.env.COMPACT_SEED ?? Date.now() % 100000);
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

/**
 * Values a GET of a compact key writes from the arena's bytes (ReplySink.bulkBytes): empty,
 * integers (held as such: their digits are the reply), a non-canonical integer, bytes that are
 * not UTF-8, JSON's escapes, the longest value the tier holds.
 */
const VALUES: Buffer[] = [
  Buffer.alloc(0),
  Buffer.from('abc'),
  Buffer.from('12345'),
  Buffer.from('-7'),
  Buffer.from('007'),
  Buffer.from('9007199254740993'),
  Buffer.from(Array.from({ length: 255 }, (_, i) => (i * 7 + 1) & 255)),
  Buffer.from('q"b\\s\n\u00e9', 'latin1'),
  Buffer.from('\u00e9\u00ff', 'latin1'),
  Buffer.from('x'.repeat(255)),
];
const KEYS = VALUES.map((_, i) => `ck:${i}`);

const INTERNAL: Transport = { kind: 'internal', close() {}, requestFlush() {}, resume() {}, outputBytes: () => 0, inputBytes: () => 0 };

describe('GET of a compact key: the reply written from the arena bytes, through every reply path', () => {
  it('in process: the keys stay compact through GET, MULTI/EXEC and EVAL', () => {
    const eng = new Engine(loadConfig([], {}), FAMILIES);
    const out = new RespWriter();
    const c = new Client(eng, INTERNAL, out, '127.0.0.1:1', '127.0.0.1:2');
    const run = (...args: Array<string | Buffer>): Buffer => {
      execute(c, Argv.of(args), out);
      return out.take();
    };
    const bulk = (v: Buffer) => Buffer.concat([Buffer.from(`$${v.length}\r\n`), v, Buffer.from('\r\n')]);
    VALUES.forEach((v, i) => run('SET', KEYS[i], v));
    assert.equal(c.db.map.compactSize, VALUES.length);
    VALUES.forEach((v, i) => assert.deepEqual(run('GET', KEYS[i]), bulk(v), KEYS[i]));
    run('MULTI');
    for (const k of KEYS) run('GET', k);
    assert.deepEqual(run('EXEC'), Buffer.concat([Buffer.from(`*${VALUES.length}\r\n`), ...VALUES.map(bulk)]));
    assert.deepEqual(run('EVAL', "return redis.call('GET', KEYS[1])", '1', KEYS[1]), bulk(VALUES[1]));
    // Neither GET nor a script's GET moved a key into the table.
    assert.equal(c.db.map.compactSize, VALUES.length);
  });

  it('over TCP (RESP2, RESP3, MULTI, CLIENT REPLY SKIP, Lua on the engine thread and in the worker) and REST, as redis-server', async () => {
    const ours = await startOurs(TOKEN_ARGS);
    procs.push(ours);
    const redis = await startRedis();
    procs.push(redis);
    const [a, b] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    const same = async (...cmd: Array<string | Buffer>) => {
      const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]).catch((e: Error) => { throw new Error(`${cmd.map(String).join(" ")}: ${e.message}`); });
      assert.deepEqual(x, y, cmd.map(String).join(' '));
      return x;
    };
    // HELLO's reply holds the connection id, which differs.
    const hello = (proto: string) => Promise.all([a.call('HELLO', proto), b.call('HELLO', proto)]);
    for (let i = 0; i < VALUES.length; i++) await same('SET', KEYS[i], VALUES[i]);
    for (const proto of ['2', '3']) {
      await hello(proto);
      for (const k of KEYS) await same('GET', k);
      await same('MULTI');
      for (const k of KEYS) await same('GET', k);
      await same('EXEC');
      // A reply skipped (the null sink), then the next one written.
      const skipped = Buffer.concat([encode(['CLIENT', 'REPLY', 'SKIP']), encode(['GET', KEYS[1]])]);
      a.write(skipped);
      b.write(skipped);
      await same('GET', KEYS[2]);
      // Lua: a reply on its own (as text) and inside a table, under RESP2 and RESP3 script replies.
      for (const setresp of ['', 'redis.setresp(3) ']) {
        await same('EVAL', `${setresp}return redis.call('GET', KEYS[1])`, '1', KEYS[6]);
        await same('EVAL', `${setresp}local t = {} for i, k in ipairs(KEYS) do t[i] = redis.call('GET', k) end return t`, String(KEYS.length), ...KEYS);
      }
    }
    await hello('2');
    // A read-only script past 100 ms moves to the worker: its calls are answered by LuaReplyEncoder.
    const spin = `local t = redis.call('time') local t0 = t[1] * 1000 + t[2] / 1000 local i = 0
      while true do i = i + 1 if i % 100000 == 0 then t = redis.call('time') if t[1] * 1000 + t[2] / 1000 - t0 > 200 then break end end end`;
    await same('EVAL', `${spin} local t = {} for i, k in ipairs(KEYS) do t[i] = redis.call('GET', k) end return t`, String(KEYS.length), ...KEYS);
    a.close();
    b.close();

    // REST: JSON strings (the bytes as UTF-8, invalid sequences replaced) and base64.
    const rest = new Rest(`http://127.0.0.1:${ours.httpPort}`);
    for (let i = 0; i < VALUES.length; i++) {
      assert.deepEqual((await rest.get(`/get/${KEYS[i]}`)).json, { result: VALUES[i].toString('utf8') }, KEYS[i]);
      assert.deepEqual((await rest.cmd(['GET', KEYS[i]], { 'Upstash-Encoding': 'base64' })).json, { result: VALUES[i].toString('base64') }, KEYS[i]);
    }
    const multi = await rest.multi(KEYS.map((k) => ['GET', k]), { 'Upstash-Encoding': 'base64' });
    assert.deepEqual(multi.json, VALUES.map((v) => ({ result: v.toString('base64') })));
    const pipe = await rest.pipeline(KEYS.map((k) => ['GET', k]));
    assert.deepEqual(pipe.json, VALUES.map((v) => ({ result: v.toString('utf8') })));
  });
});

describe('RDB import into the compact tier', () => {
  /** An RDB file of string (type 0) and hash (type 4) records, no checksum (8 zero bytes). */
  function rdb(records: Array<[number, string, string | Array<[string, string]>, number?]>): Buffer {
    const str = (x: string) => {
      const b = Buffer.from(x, 'latin1');
      assert.ok(b.length < 64);
      return Buffer.concat([Buffer.from([b.length]), b]);
    };
    const parts = [Buffer.from('REDIS0010'), Buffer.from([0xfe, 0])];
    for (const [type, key, value, expMs] of records) {
      if (expMs !== undefined) {
        const e = Buffer.alloc(9);
        e[0] = 0xfc;
        e.writeBigUInt64LE(BigInt(expMs), 1);
        parts.push(e);
      }
      parts.push(Buffer.from([type]), str(key));
      if (typeof value === 'string') parts.push(str(value));
      else parts.push(Buffer.from([value.length]), ...value.flatMap(([f, v]) => [str(f), str(v)]));
    }
    parts.push(Buffer.from([0xff]), Buffer.alloc(8));
    return Buffer.concat(parts);
  }

  it('keys given twice replace each other across tiers; TTL keys and long values stay Entries', () => {
    const later = Date.now() + 3_600_000;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rs-compact-import-')), 'dup.rdb');
    fs.writeFileSync(file, rdb([
      [0, 'd', 'one'], [0, 'd', 'two'], // string twice: the second stays, compact
      [0, 'h', 'x'], [4, 'h', [['f', 'v']]], // a compact string, then a hash of that name
      [4, 'g', [['f', 'v']]], [0, 'g', '42'], // a hash, then a (compact, integer) string
      [0, 'i', '12'], [0, 'i', '-13'],
      [0, 't', 'ttl', later], // a TTL: an Entry
      [0, 'z', 'plain'],
    ]));
    const eng = new Engine(loadConfig([], {}), FAMILIES);
    const out = new RespWriter();
    const c = new Client(eng, INTERNAL, out, '127.0.0.1:1', '127.0.0.1:2');
    const run = (...args: string[]): string => {
      execute(c, Argv.of(args), out);
      return out.take().toString('latin1');
    };
    importRdb(eng, file);
    assert.equal(run('DBSIZE'), ':6\r\n');
    // Read the compact keys before anything moves them into the table.
    assert.equal(c.db.map.compactSize, 4); // d, g, i, z
    assert.equal(run('GET', 'd'), '$3\r\ntwo\r\n');
    assert.equal(run('GET', 'g'), '$2\r\n42\r\n');
    assert.equal(run('GET', 'i'), '$3\r\n-13\r\n');
    assert.equal(run('GET', 'z'), '$5\r\nplain\r\n');
    assert.equal(c.db.map.compactSize, 4);
    assert.equal(run('TYPE', 'h'), '+hash\r\n');
    assert.equal(run('HGET', 'h', 'f'), '$1\r\nv\r\n');
    assert.equal(run('OBJECT', 'ENCODING', 'g'), '$3\r\nint\r\n');
    assert.equal(run('GET', 't'), '$3\r\nttl\r\n');
    assert.match(run('TTL', 't'), /^:3[56]\d\d\r\n$/);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
