/**
 * ioredis, a mainstream RESP client, against our server: connection handshake, big
 * pipelines, MULTI/EXEC, binary values through the Buffer APIs, multi-megabyte values,
 * 64-bit integers as strings, and many concurrent clients.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';

let server: Proc;
const clients: Redis[] = [];

/**
 * A client that does not depend on INFO (ready check) or HELLO 3: those belong to other
 * tests. These run on RESP2 (protocol: 2), the protocol ioredis 5 and older speak.
 */
function connect(opts: RedisOptions = {}): Redis {
  const r = new Redis({
    port: server.port, host: '127.0.0.1', protocol: 2, enableReadyCheck: false,
    maxRetriesPerRequest: 1, retryStrategy: () => null, ...opts,
  });
  r.on('error', () => {});
  clients.push(r);
  return r;
}

before(async () => {
  server = await startOurs(['--appendfsync', 'no']);
});
after(async () => {
  for (const c of clients) c.disconnect();
  await server?.stop();
});

describe('ioredis', () => {
  it('connects with default options (HELLO 3 -> RESP3, INFO ready check)', async () => {
    const r = new Redis({ port: server.port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: true });
    clients.push(r);
    let lastError: Error | null = null;
    r.on('error', (e) => { lastError = e; });
    await r.connect();
    assert.equal(r.status, 'ready', `status ${r.status}, error ${lastError}`);
    assert.equal(await r.ping(), 'PONG');
    assert.equal(await r.set('hello', 'world'), 'OK');
    assert.equal(await r.get('hello'), 'world');
    assert.match(String(await r.client('INFO')), / resp=3\n/);
    assert.deepEqual(await r.hgetall('nokey'), {});
  });

  it('runs a pipeline of 1000 commands and gets every reply in order', async () => {
    const r = connect();
    const p = r.pipeline();
    for (let i = 0; i < 500; i++) p.set(`pipe:${i}`, `value-${i}`);
    for (let i = 0; i < 500; i++) p.get(`pipe:${i}`);
    const res = await p.exec();
    assert.ok(res);
    assert.equal(res.length, 1000);
    for (let i = 0; i < 500; i++) {
      assert.deepEqual(res[i], [null, 'OK']);
      assert.deepEqual(res[500 + i], [null, `value-${i}`]);
    }
    // Several pipelines in flight at once on one connection.
    const many = await Promise.all(Array.from({ length: 10 }, (_, k) => {
      const q = r.pipeline();
      for (let i = 0; i < 1000; i++) q.get(`pipe:${(i + k) % 500}`);
      return q.exec();
    }));
    many.forEach((rs, k) => {
      assert.equal(rs!.length, 1000);
      assert.deepEqual(rs![999], [null, `value-${(999 + k) % 500}`]);
    });
  });

  it('runs MULTI/EXEC transactions', async () => {
    const r = connect();
    await r.del('tx:a', 'tx:n');
    const res = await r.multi().set('tx:a', '1').get('tx:a').incr('tx:n').incr('tx:n').exec();
    assert.deepEqual(res, [[null, 'OK'], [null, '1'], [null, 1], [null, 2]]);
    // A runtime error inside the transaction does not stop it.
    const res2 = await r.multi().set('tx:s', 'abc').incr('tx:s').get('tx:s').exec();
    assert.equal(res2![0][1], 'OK');
    assert.match(String(res2![1][0]), /ERR value is not an integer or out of range/);
    assert.equal(res2![2][1], 'abc');
    // A queueing error aborts it.
    await assert.rejects(r.multi().set('tx:a', '2').call('nosuchcommand').exec(), /EXECABORT/);
    assert.equal(await r.get('tx:a'), '1');
  });

  it('WATCH makes EXEC fail after another client changes the key', async () => {
    const a = connect();
    const b = connect();
    await a.set('w:k', '1');
    await a.watch('w:k');
    await b.set('w:k', '2');
    const res = await a.multi().set('w:k', '3').exec();
    assert.equal(res, null);
    assert.equal(await a.get('w:k'), '2');
  });

  it('round-trips binary keys and values through the Buffer APIs', async () => {
    const r = connect();
    const all = Buffer.alloc(256);
    for (let i = 0; i < 256; i++) all[i] = i;
    const key = Buffer.from([0, 255, 13, 10, 0x80, 0xc3]);
    assert.equal(await r.set(key, all), 'OK');
    assert.deepEqual(await r.getBuffer(key), all);
    for (const size of [0, 1, 100, 16383, 16384, 70000]) {
      const v = crypto.randomBytes(size);
      await r.set(Buffer.from(`bin:${size}`), v);
      assert.deepEqual(await r.getBuffer(`bin:${size}`), v, `${size} random bytes`);
    }
    // Invalid UTF-8 is not altered on the way in or out.
    const bad = Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1]);
    await r.set('bin:bad', bad);
    assert.deepEqual(await r.getBuffer('bin:bad'), bad);
  });

  it('stores and returns values larger than 1 MB', async () => {
    const r = connect();
    for (const size of [1024 * 1024 + 1, 8 * 1024 * 1024]) {
      const v = crypto.randomBytes(size);
      assert.equal(await r.set('big', v), 'OK');
      const got = await r.getBuffer('big');
      assert.equal(got?.length, size);
      assert.ok(got!.equals(v), `${size} bytes round-trip`);
    }
    // Several big values in one pipeline, in both directions.
    const vals = Array.from({ length: 4 }, () => crypto.randomBytes(3 * 1024 * 1024));
    const p = r.pipeline();
    vals.forEach((v, i) => p.set(`big:${i}`, v));
    vals.forEach((_, i) => p.getBuffer(`big:${i}`));
    const res = await p.exec();
    vals.forEach((v, i) => assert.ok((res![4 + i][1] as Buffer).equals(v), `pipelined big value ${i}`));
  });

  it('keeps integers beyond 2^53 exact with INCRBY (as strings)', async () => {
    const r = connect({ stringNumbers: true });
    await r.set('n:big', '9007199254740993'); // 2^53 + 1: not representable as a double
    assert.equal(await r.incrby('n:big', '1'), '9007199254740994');
    assert.equal(await r.get('n:big'), '9007199254740994');
    await r.set('n:max', '9223372036854775806');
    assert.equal(await r.incrby('n:max', '1'), '9223372036854775807');
    await assert.rejects(r.incrby('n:max', '1'), /ERR increment or decrement would overflow/);
    assert.equal(await r.incrby('n:neg', '-9223372036854775808'), '-9223372036854775808');
    await assert.rejects(r.incrby('n:neg', '-1'), /ERR increment or decrement would overflow/);
    await assert.rejects(r.incrby('n:x', '9223372036854775808'), /ERR value is not an integer or out of range/);
  });

  it('serves many concurrent clients', async () => {
    const n = 50;
    const per = 200;
    const rs = Array.from({ length: n }, () => connect());
    await rs[0].del('conc:counter');
    await Promise.all(rs.map(async (r, i) => {
      for (let k = 0; k < per; k++) {
        await r.incr('conc:counter');
        if (k % 20 === 0) {
          await r.set(`conc:${i}`, `${k}`);
          assert.equal(await r.get(`conc:${i}`), `${k}`);
        }
      }
    }));
    assert.equal(await rs[0].get('conc:counter'), String(n * per));
    await Promise.all(rs.map((r, i) => r.mset(`ms:${i}:a`, String(i), `ms:${i}:b`, String(i))));
    const p = rs[1].pipeline();
    rs.forEach((_, i) => p.get(`ms:${i}:a`).get(`ms:${i}:b`));
    const got = (await p.exec())!.map(([, v]) => v);
    assert.deepEqual(got, rs.flatMap((_, i) => [String(i), String(i)]));
  });
});
