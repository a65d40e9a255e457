/**
 * RDB files and `redis-cli --rdb`, with real redis-server and redis-cli at both ends:
 *  - redis-server dataset (every type, small and big encodings, TTLs, several databases,
 *    function libraries) -> redis-cli --rdb -> our --import-rdb -> redis-cli --rdb against
 *    us -> a fresh redis-server loads it -> DEBUG DIGEST and every key compared;
 *  - the same from our side first (and --export-rdb);
 *  - damaged files are refused with the offset, and nothing is imported.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { runOursToExit, startOurs, startRedis } from '../helpers/server.js';
import { scratch } from './both-load.js';

const { tmp, procs, clients } = scratch('rs-rdb-');

function client(port: number): Redis {
  const c = new Redis(port, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  clients.push(c);
  return c;
}

function cliRdb(port: number, file: string): void {
  execFileSync('redis-cli', ['-p', String(port), '--rdb', file], { stdio: 'pipe' });
}

/** Keys k:0..k:n-1 with 400 incompressible bytes each; returns their values. */
async function fillIncompressible(o: Redis, n: number): Promise<string[]> {
  const { randomBytes } = await import('node:crypto');
  const vals: string[] = [];
  for (let i = 0; i < n; i += 1000) {
    const p = o.pipeline();
    for (let j = i; j < i + 1000 && j < n; j++) {
      vals.push(randomBytes(300).toString('base64'));
      p.set(`k:${j}`, vals[j]);
    }
    await p.exec();
  }
  return vals;
}

/**
 * SYNC from a raw socket, paused once the EOF-mark header came (the snapshot exists): the
 * caller writes meanwhile, then resumes the socket and awaits `closed`.
 */
async function pausedSync(port: number): Promise<{ s: import('node:net').Socket; chunks: Buffer[]; closed: Promise<void> }> {
  const net = await import('node:net');
  const s = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let total = 0;
  const closed = new Promise<void>((resolve) => s.on('close', () => resolve()));
  const started = new Promise<void>((resolve) => {
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      total += d.length;
      if (total >= 46) resolve();
    });
  });
  s.write('SYNC\r\n');
  await started;
  s.pause();
  return { s, chunks, closed };
}

const LIB = "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return args[1] end)";

async function fill(c: Redis): Promise<void> {
  await c.set('str', 'hello');
  await c.set('int', '123456');
  await c.set('bigint', '12345678901234567');
  await c.set('long', 'compressible '.repeat(200));
  await c.set('ttl', 'v', 'EX', '5000');
  await c.rpush('list', 'a', 'b', '1', '-2');
  await c.rpush('biglist', ...Array.from({ length: 5000 }, (_, i) => `element-${i}`));
  await c.sadd('iset', 1, 2, 3, -40000);
  await c.sadd('set', 'x', 'y', 'z');
  await c.sadd('bigset', ...Array.from({ length: 1000 }, (_, i) => `m${i}`));
  await c.zadd('zset', 1, 'a', 2.5, 'b', -1, 'c');
  await c.zadd('bigzset', ...Array.from({ length: 500 }, (_, i) => [i / 3, `m${i}`]).flat());
  await c.hset('hash', 'f', 'v', 'n', '1');
  await c.hset('bighash', ...Array.from({ length: 1000 }, (_, i) => [`f${i}`, `v${i}`]).flat());
  await c.hset('ttlhash', 'f', 'v');
  await c.pexpire('ttlhash', 9000000);
  for (let i = 0; i < 150; i++) await c.xadd('stream', `${i + 1}-1`, 'f', `v${i}`, 'g', 'w');
  await c.xdel('stream', '3-1');
  await c.xgroup('CREATE', 'stream', 'g1', '0');
  await c.xreadgroup('GROUP', 'g1', 'alice', 'COUNT', '5', 'STREAMS', 'stream', '>');
  await c.xreadgroup('GROUP', 'g1', 'bob', 'COUNT', '3', 'STREAMS', 'stream', '>');
  await c.xack('stream', 'g1', '1-1');
  await c.select(3);
  await c.set('db3key', 'three');
  await c.rpush('db3list', 'q');
  await c.select(15);
  await c.hset('db15hash', 'a', 'b');
  await c.select(0);
  await c.call('FUNCTION', 'LOAD', LIB);
}

async function valueText(c: Redis, key: string): Promise<string> {
  const type = await c.type(key);
  let v: unknown;
  if (type === 'string') v = await c.get(key);
  else if (type === 'hash') v = Object.entries(await c.hgetall(key)).sort();
  else if (type === 'list') v = await c.lrange(key, 0, -1);
  else if (type === 'set') v = (await c.smembers(key)).sort();
  else if (type === 'zset') v = await c.zrange(key, '0', '-1', 'WITHSCORES');
  else if (type === 'stream') {
    // Pending entries without their idle times (which move with the clock).
    const pel = (await c.xpending(key, 'g1', '-', '+', 100)) as Array<[string, string, number, number]>;
    v = [await c.xrange(key, '-', '+'), pel.map(([id, who, , n]) => [id, who, n])];
  }
  const ttl = await c.pttl(key);
  return JSON.stringify([type, v, ttl > 0 ? 'ttl' : ttl]);
}

async function snapshot(c: Redis): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const db of [0, 3, 15]) {
    await c.select(db);
    for (const k of (await c.keys('*')).sort()) out[`${db}:${k}`] = await valueText(c, k);
  }
  await c.select(0);
  out.functions = JSON.stringify(await c.call('FUNCTION', 'LIST', 'WITHCODE'));
  return out;
}

describe('RDB files', () => {
  let original: Redis;
  let digest: string;
  let snap: Record<string, string>;

  before(async () => {
    const r = await startRedis(['--enable-debug-command', 'yes']);
    procs.push(r);
    original = client(r.port);
    await fill(original);
    digest = String(await original.call('DEBUG', 'DIGEST'));
    snap = await snapshot(original);
    cliRdb(r.port, path.join(tmp, 'from-redis.rdb'));
  });

  it('redis-server -> RDB -> us -> redis-cli --rdb -> fresh redis-server: same data', async () => {
    const ours = await startOurs(['--appendfsync', 'no', '--import-rdb', path.join(tmp, 'from-redis.rdb')]);
    procs.push(ours);
    while (!ours.output().includes('Ready to accept')) await new Promise((r) => setTimeout(r, 50));
    assert.match(ours.output(), /Imported 19 keys and 1 function libraries/);
    const o = client(ours.port);
    assert.deepEqual(await snapshot(o), snap);
    cliRdb(ours.port, path.join(tmp, 'from-us.rdb'));
    const fresh = await startRedis(['--enable-debug-command', 'yes', '--dbfilename', 'from-us.rdb', '--dir', tmp]);
    procs.push(fresh);
    const f = client(fresh.port);
    assert.equal(String(await f.call('DEBUG', 'DIGEST')), digest);
    assert.deepEqual(await snapshot(f), snap);
    assert.match(await o.info('stats'), /sync_full:1/);
  });

  it('from our side first: ours -> redis-cli --rdb and --export-rdb -> redis-server', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'ours-'));
    const ours = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    const o = client(ours.port);
    await fill(o);
    const mine = await snapshot(o);
    cliRdb(ours.port, path.join(tmp, 'ours-first.rdb'));
    await ours.stop();
    const fresh = await startRedis(['--enable-debug-command', 'yes', '--dbfilename', 'ours-first.rdb', '--dir', tmp]);
    procs.push(fresh);
    assert.deepEqual(await snapshot(client(fresh.port)), mine);
    // --export-rdb from the data directory, then loaded by redis-server.
    const res = await runOursToExit(['--export-rdb', path.join(tmp, 'exported.rdb')], dir);
    assert.equal(res.code, 0, res.output);
    assert.match(res.output, /Exported 19 keys/);
    const fresh2 = await startRedis(['--dbfilename', 'exported.rdb', '--dir', tmp]);
    procs.push(fresh2);
    const f2 = client(fresh2.port);
    const s2 = await snapshot(f2);
    assert.deepEqual(s2, mine);
  });

  it('an import into a data directory is written in slices after serving starts, and survives a restart', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'imp-'));
    // A data directory that already holds a key the file also has (the file's value wins) and one it lacks.
    const pre = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    const p = client(pre.port);
    await p.set('str', 'older');
    await p.set('mine', 'kept');
    await pre.stop();
    const ours = await startOurs(['--appendfsync', 'everysec', '--import-rdb', path.join(tmp, 'from-redis.rdb')], {}, { dir });
    const o = client(ours.port);
    // A write while the imported keys are still being written: its own state wins.
    await o.set('hash', 'overwritten');
    for (let i = 0; i < 200 && !/lmdb_import_pending:0\r/.test(await o.info('persistence')); i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(await o.info('persistence'), /lmdb_import_pending:0\r/);
    const expected = await snapshot(o);
    assert.equal(expected['0:str'], JSON.stringify(['string', 'hello', -1]));
    assert.equal(expected['0:mine'], JSON.stringify(['string', 'kept', -1]));
    await ours.stop();
    const again = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    procs.push(again);
    assert.deepEqual(await snapshot(client(again.port)), expected);
  });

  it('a shutdown while an import is still being written writes the rest first', async (t) => {
    const r = await startRedis([]);
    procs.push(r);
    const rc = client(r.port);
    const N = 30000;
    for (let i = 0; i < N; i += 1000) {
      const p = rc.pipeline();
      for (let j = i; j < i + 1000; j++) p.hset(`h:${j}`, 'a', String(j), 'b', 'x'.repeat(j % 50));
      await p.exec();
    }
    const file = path.join(tmp, 'many.rdb');
    cliRdb(r.port, file);
    const dir = fs.mkdtempSync(path.join(tmp, 'many-'));
    const ours = await startOurs(['--appendfsync', 'everysec', '--import-rdb', file], {}, { dir });
    // Connections accepted while the import holds the event loop are answered by the busy acceptor.
    while (!ours.output().includes('Ready to accept')) await new Promise((res) => setTimeout(res, 20));
    const pending = /lmdb_import_pending:(\d+)/.exec(await client(ours.port).info('persistence'))![1];
    t.diagnostic(`import keys not written yet at the shutdown: ${pending}`);
    await ours.stop();
    const again = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    procs.push(again);
    const c = client(again.port);
    assert.equal(await c.dbsize(), N, `pending at the shutdown: ${pending}`);
    assert.deepEqual(await c.hgetall(`h:${N - 1}`), { a: String(N - 1), b: 'x'.repeat((N - 1) % 50) });
  });

  it('LFU counters and idle times travel in RDB files both ways (FREQ / IDLE opcodes)', async () => {
    const payload = (await original.dumpBuffer('str'))!;
    // An idle time grows with the clock (servers start slowly on a busy machine); an LFU
    // counter may lose one to a minute boundary (lfu-decay-time 1).
    const near = (got: number, want: number, lfu: boolean) => (lfu ? got >= want - 1 && got <= want : got >= want && got <= want + 60);
    for (const [policy, opt, value, ask] of [['allkeys-lfu', 'FREQ', 77, 'FREQ'], ['allkeys-lru', 'IDLETIME', 5000, 'IDLETIME']] as const) {
      const lfu = opt === 'FREQ';
      // Redis -> file -> us.
      const r = await startRedis(['--maxmemory-policy', policy]);
      procs.push(r);
      const rc = client(r.port);
      await rc.call('RESTORE', 'k', '0', payload, opt, String(value));
      const fromRedis = path.join(tmp, `pol-${policy}-redis.rdb`);
      cliRdb(r.port, fromRedis);
      const ours = await startOurs(['--appendfsync', 'no', '--maxmemory-policy', policy, '--import-rdb', fromRedis]);
      procs.push(ours);
      const oc = client(ours.port);
      const got = Number(await oc.call('OBJECT', ask, 'k'));
      assert.ok(near(got, value, lfu), `${policy} redis -> us: ${got}`);
      // Us -> file -> Redis.
      await oc.call('RESTORE', 'k2', '0', payload, opt, String(value + 10));
      const fromUs = path.join(tmp, `pol-${policy}-us.rdb`);
      cliRdb(ours.port, fromUs);
      const fresh = await startRedis(['--maxmemory-policy', policy, '--dbfilename', path.basename(fromUs), '--dir', tmp]);
      procs.push(fresh);
      const back = Number(await client(fresh.port).call('OBJECT', ask, 'k2'));
      assert.ok(near(back, value + 10, lfu), `${policy} us -> redis: ${back}`);
    }
  });

  it('a damaged file is refused with the offset of the damage; nothing is imported', async () => {
    const good = fs.readFileSync(path.join(tmp, 'from-redis.rdb'));
    const dir = fs.mkdtempSync(path.join(tmp, 'dmg-'));
    // A data directory that already holds a key.
    const ours = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    await client(ours.port).set('keep', 'me');
    await ours.stop();
    const cases: Array<[string, Buffer, RegExp]> = [
      ['truncated', good.subarray(0, Math.floor(good.length / 2)), /unexpected end of data at offset \d+/],
      ['bad checksum', Buffer.concat([good.subarray(0, good.length - 1), Buffer.from([good[good.length - 1] ^ 1])]), /wrong RDB checksum at offset \d+/],
      ['not an RDB', Buffer.from('hello world, not an rdb'), /not an RDB file/],
    ];
    // A flipped byte inside a value, with the CRC disabled (0), so the value decoder must catch it.
    const flipped = Buffer.from(good);
    const at = good.indexOf(Buffer.from('biglist')) + 7; // the list's node count
    flipped[at] = 0x3f;
    flipped.fill(0, flipped.length - 8);
    cases.push(['corrupt value', flipped, /at offset \d+/]);
    for (const [name, bytes, re] of cases) {
      const file = path.join(tmp, `damaged-${name.replace(/ /g, '-')}.rdb`);
      fs.writeFileSync(file, bytes);
      const res = await runOursToExit(['--appendfsync', 'everysec', '--import-rdb', file], dir);
      assert.equal(res.code, 1, `${name}: ${res.output}`);
      assert.match(res.output, re, name);
      assert.match(res.output, /nothing was imported/, name);
    }
    const again = await startOurs(['--appendfsync', 'everysec'], {}, { dir });
    procs.push(again);
    const c = client(again.port);
    assert.deepEqual(await c.keys('*'), ['keep']);
  });

  it('a SYNC snapshot is one point in time while writes continue (copy-on-write of the keys written)', async () => {
    const ours = await startOurs(['--appendfsync', 'no', '--enable-debug-command', 'local']);
    procs.push(ours);
    const o = client(ours.port);
    // More incompressible bytes than the socket buffers and our output limit (8 MB) hold, so
    // that the snapshot cannot finish while its reader is paused below.
    const N = 60000;
    const vals = await fillIncompressible(o, N);
    for (let i = 0; i < 100; i++) await o.hset(`h:${i}`, 'f', 'old', 'g', String(i));
    await o.select(3);
    for (let i = 0; i < 100; i++) await o.set(`d3:${i}`, `three${i}`);
    await o.select(0);
    // SYNC from a raw socket; the writes go out once the snapshot exists (its EOF mark came).
    const { s, chunks, closed } = await pausedSync(ours.port);
    const w = client(ours.port);
    const p = w.pipeline();
    for (let j = 0; j < N; j += 7) p.set(`k:${j}`, 'new');
    for (let j = 3; j < N; j += 11) p.del(`k:${j}`);
    for (let j = 0; j < 100; j++) p.set(`fresh:${j}`, 'later');
    // DEBUG POPULATE is not a write command: its new keys are kept out all the same.
    p.call('DEBUG', 'POPULATE', '5000', 'pop');
    for (let j = 0; j < 100; j += 2) p.hset(`h:${j}`, 'f', 'new', 'extra', '1');
    p.expire('k:5', 100);
    p.rename('k:1', 'renamed');
    p.select(3);
    p.del('d3:0');
    p.flushdb(); // keyless reach: the whole file is completed first
    p.select(0);
    p.set('after-flush', '1');
    const res = await p.exec();
    assert.ok(res!.every(([err]) => err === null));
    s.resume();
    await closed;
    const all = Buffer.concat(chunks);
    const head = all.subarray(0, all.indexOf('\r\n') + 2).toString('latin1');
    assert.match(head, /^\$EOF:[0-9a-f]{40}\r\n$/);
    const mark = head.slice(5, 45);
    assert.equal(all.subarray(all.length - 40).toString('latin1'), mark);
    const dir = fs.mkdtempSync(path.join(tmp, 'pit-'));
    fs.writeFileSync(path.join(dir, 'pit.rdb'), all.subarray(head.length, all.length - 40));
    // redis-server refuses a file that holds a key twice: loading it checks that too.
    const fresh = await startRedis(['--dbfilename', 'pit.rdb', '--dir', dir]);
    procs.push(fresh);
    const f = client(fresh.port);
    assert.equal(await f.dbsize(), N + 100);
    for (let j = 0; j < N; j += 1) {
      if (j % 7 !== 0 && j % 11 !== 3 && j !== 1 && j !== 5 && j % 1000 !== 999) continue;
      assert.equal(await f.get(`k:${j}`), vals[j], `k:${j}`);
    }
    assert.equal(await f.pttl('k:5'), -1);
    assert.equal(await f.exists('renamed', 'fresh:0', 'fresh:99', 'after-flush'), 0);
    assert.deepEqual(await f.keys('pop:*'), []);
    assert.deepEqual(await f.hgetall('h:0'), { f: 'old', g: '0' });
    await f.select(3);
    assert.equal(await f.dbsize(), 100);
    assert.equal(await f.get('d3:0'), 'three0');
    // And the live data went on: the writes are there.
    assert.equal(await o.get('k:0'), 'new');
    assert.equal(await o.get('after-flush'), '1');
    assert.match(await o.info('persistence'), /rdb_snapshot_keys_preserved:[1-9]/);
  });

  it('a SYNC snapshot keeps its point in time across FLUSHALL, SWAPDB, MOVE, COPY, expiry, eviction and MIGRATE, none of which completes the file at once', async () => {
    const ours = await startOurs(['--appendfsync', 'no', '--maxmemory-policy', 'allkeys-random']);
    procs.push(ours);
    const target = await startRedis();
    procs.push(target);
    const o = client(ours.port);
    // More incompressible bytes than the socket buffers and our output limit hold (see above).
    const N = 60000;
    const vals = await fillIncompressible(o, N);
    const E = 200;
    const p0 = o.pipeline();
    for (let i = 0; i < E; i++) p0.set(`e:${i}`, `exp${i}`, 'PX', 400);
    for (const d of [1, 2]) {
      p0.select(d);
      for (let i = 0; i < 100; i++) p0.set(`d${d}:${i}`, `db${d}-${i}`);
    }
    p0.select(0);
    await p0.exec();
    const before = await o.info('persistence');
    const atOnce = Number(/rdb_snapshot_completed_at_once:(\d+)/.exec(before)![1]);
    const { s, chunks, closed } = await pausedSync(ours.port);
    const w = client(ours.port);
    // Expiry: active (the cycle) and lazy (a read); MIGRATE deletes its source key once the
    // target answered; eviction removes random keys.
    await new Promise((r) => setTimeout(r, 900));
    assert.equal(await w.get('e:0'), null);
    assert.equal(await w.migrate('127.0.0.1', target.port, 'k:10', 0, 5000), 'OK');
    const used = Number(/used_memory:(\d+)/.exec(await w.info('memory'))![1]);
    await w.config('SET', 'maxmemory', String(used - 200_000));
    await w.set('evictor', 'x');
    await w.config('SET', 'maxmemory', '0');
    assert.ok((await w.dbsize()) < N, 'eviction removed keys');
    const p = w.pipeline();
    p.move('k:20', 1);
    p.copy('k:30', 'copied', 'DB', 2);
    p.swapdb(1, 2);
    p.select(1); // db 1 now holds what db 2 held
    p.set('d2:0', 'changed');
    p.select(2);
    p.del('d1:0');
    p.flushall();
    p.select(0);
    p.set('after-flush', '1');
    const res = await p.exec();
    assert.ok(res!.every(([err]) => err === null), JSON.stringify(res));
    assert.equal(await w.dbsize(), 1);
    s.resume();
    await closed;
    const all = Buffer.concat(chunks);
    const head = all.subarray(0, all.indexOf('\r\n') + 2).toString('latin1');
    const dir = fs.mkdtempSync(path.join(tmp, 'pit2-'));
    const file = path.join(dir, 'pit.rdb');
    fs.writeFileSync(file, all.subarray(head.length, all.length - 40));
    // The expired keys are in the file with their (now past) times, as Redis's fork writes them.
    const check = execFileSync('redis-check-rdb', [file], { encoding: 'latin1' });
    assert.match(check, new RegExp(`\\[info\\] ${N + E + 200} keys read`));
    assert.match(check, new RegExp(`\\[info\\] ${E} already expired`));
    const fresh = await startRedis(['--dbfilename', 'pit.rdb', '--dir', dir]);
    procs.push(fresh);
    const f = client(fresh.port);
    assert.equal(await f.dbsize(), N); // the expired ones are skipped on load
    for (let j = 0; j < N; j += 97) assert.equal(await f.get(`k:${j}`), vals[j], `k:${j}`);
    assert.equal(await f.get('k:10'), vals[10]);
    assert.equal(await f.get('k:20'), vals[20]);
    assert.equal(await f.exists('evictor', 'after-flush', 'copied'), 0);
    for (const d of [1, 2]) {
      await f.select(d);
      assert.equal(await f.dbsize(), 100, `db ${d}`);
      assert.equal(await f.get(`d${d}:0`), `db${d}-0`);
      assert.equal(await f.exists('k:20', 'copied'), 0);
    }
    const after = await o.info('persistence');
    assert.equal(Number(/rdb_snapshot_completed_at_once:(\d+)/.exec(after)![1]), atOnce);
  });
});
