/**
 * Our types that Redis 7.0 lacks, in the forms of the software that has them: JSON documents
 * as RedisJSON's module values (RDB_TYPE_MODULE_2, type ReJSON-RL, encoding version 3: one
 * module string holding the compact document, then the module EOF), hashes with field TTLs as
 * Redis 7.4 writes them (RDB_TYPE_HASH_LISTPACK_EX / RDB_TYPE_HASH_METADATA, RDB version 12).
 * DUMP/RESTORE round trips, the payload layout checked byte by byte, hand-built payloads of
 * the older RedisJSON encoding, and RDB files with rdb-extended-types yes / no.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { Crc64 } from '../../dist/rdb/crc64.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-ext-'));
const procs: Proc[] = [];
const clients: Redis[] = [];
let o: Redis;

function client(port: number): Redis {
  const c = new Redis(port, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  clients.push(c);
  return c;
}

before(async () => {
  const ours = await startOurs(['--appendfsync', 'no']);
  procs.push(ours);
  o = client(ours.port);
});
after(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(procs.map((p) => p.stop()));
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** ReJSON-RL's module id with encoding version 3 (moduleTypeEncodeId, worked out by hand). */
const REJSON_V3 = Buffer.from('8145e25238df912c03', 'hex'); // 0x81: a 64-bit length follows
const REJSON_V2 = Buffer.from('8145e25238df912c02', 'hex');

/** A DUMP payload around `body`: version `ver` and the CRC-64. */
function payload(body: Buffer, ver = 10): Buffer {
  const head = Buffer.concat([body, Buffer.from([ver, 0])]);
  const crc = Buffer.alloc(8);
  new Crc64().update(head, 0, head.length).writeLE(crc, 0);
  return Buffer.concat([head, crc]);
}

function rawString(s: string): Buffer {
  const b = Buffer.from(s);
  assert.ok(b.length < 64);
  return Buffer.concat([Buffer.from([b.length]), b]);
}

describe('DUMP/RESTORE of JSON documents: RedisJSON module values', () => {
  it('the payload is RedisJSON\'s (ReJSON-RL v3, one string, EOF) and restores', async () => {
    await o.call('JSON.SET', 'doc', '$', '{"a":[1,"x"]}');
    const p = (await o.dumpBuffer('doc'))!;
    const doc = '{"a":[1,"x"]}';
    assert.deepEqual(p, payload(Buffer.concat([Buffer.from([7]), REJSON_V3, Buffer.from([5]), rawString(doc), Buffer.from([0])])));
    await o.call('RESTORE', 'doc2', '0', p);
    assert.equal(await o.call('JSON.GET', 'doc2'), doc);
    assert.equal(await o.type('doc2'), 'ReJSON-RL');
    // A bigger document (an LZF-compressed string) round-trips too.
    const big = JSON.stringify({ list: Array.from({ length: 200 }, (_, i) => ({ i, name: `item ${i}`, ok: i % 2 === 0 })) });
    await o.call('JSON.SET', 'big', '$', big);
    await o.call('RESTORE', 'big2', '0', (await o.dumpBuffer('big'))!);
    assert.equal(await o.call('JSON.GET', 'big2'), await o.call('JSON.GET', 'big'));
  });

  it('RESTORE takes encoding version 2 (a legacy count of RediSearch strings) and refuses other modules and bad documents', async () => {
    const v2 = (extra: number[]) => payload(Buffer.concat([Buffer.from([7]), REJSON_V2, Buffer.from([5]), rawString('[true,null]'), Buffer.from([2, ...extra, 0])]));
    await o.call('RESTORE', 'v2a', '0', v2([0]));
    assert.equal(await o.call('JSON.GET', 'v2a'), '[true,null]');
    await o.call('RESTORE', 'v2b', '0', v2([1, 5, ...rawString('idx'), 5, ...rawString('x')]));
    assert.equal(await o.call('JSON.GET', 'v2b'), '[true,null]');
    const other = Buffer.from(REJSON_V3);
    other[3] ^= 0x40; // another type name
    const bad = [
      payload(Buffer.concat([Buffer.from([7]), other, Buffer.from([5]), rawString('1'), Buffer.from([0])])),
      payload(Buffer.concat([Buffer.from([7]), REJSON_V3, Buffer.from([5]), rawString('{"a":'), Buffer.from([0])])),
      payload(Buffer.concat([Buffer.from([7]), REJSON_V3, Buffer.from([5]), rawString('1')])), // no EOF
      payload(Buffer.concat([Buffer.from([7]), REJSON_V3, Buffer.from([2, 1, 0])])), // not a string
    ];
    for (const b of bad) await assert.rejects(o.call('RESTORE', 'nope', '0', b), /ERR Bad data format/);
    assert.equal(await o.exists('nope'), 0);
  });
});

describe('DUMP/RESTORE of hashes with field TTLs: Redis 7.4 forms', () => {
  it('a listpack hash: RDB_TYPE_HASH_LISTPACK_EX, soonest expiry, field/value/expiry triplets, RDB 12', async () => {
    await o.hset('h', 'a', '1', 'b', 'two', 'c', '3');
    await o.call('HPEXPIRE', 'h', '500000', 'FIELDS', '1', 'b');
    await o.call('HPEXPIRE', 'h', '900000', 'FIELDS', '1', 'a');
    const [atB] = (await o.call('HPEXPIRETIME', 'h', 'FIELDS', '1', 'b')) as number[];
    const [atA] = (await o.call('HPEXPIRETIME', 'h', 'FIELDS', '1', 'a')) as number[];
    const p = (await o.dumpBuffer('h'))!;
    assert.equal(p[0], 25);
    assert.equal(Number(p.readBigInt64LE(1)), atB);
    assert.equal(p.readUInt16LE(p.length - 10), 12);
    await o.call('RESTORE', 'h2', '0', p);
    assert.deepEqual(await o.hgetall('h2'), { a: '1', b: 'two', c: '3' });
    assert.deepEqual(await o.call('HPEXPIRETIME', 'h2', 'FIELDS', '3', 'a', 'b', 'c'), [atA, atB, -1]);
    assert.equal(await o.call('OBJECT', 'ENCODING', 'h2'), 'listpackex');
    // Fields whose TTL comes due expire on the restored copy as on the original.
    await o.call('HPEXPIRE', 'h2', '1', 'FIELDS', '1', 'c');
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(await o.hkeys('h2'), ['b', 'a']);
  });

  it('a hashtable hash: RDB_TYPE_HASH_METADATA with expiries relative to the soonest', async () => {
    const args: string[] = [];
    for (let i = 0; i < 600; i++) args.push(`f${i}`, `v${i}`);
    await o.hset('ht', ...args);
    await o.call('HEXPIRE', 'ht', '1000', 'FIELDS', '2', 'f1', 'f2');
    await o.call('HEXPIRE', 'ht', '2000', 'FIELDS', '1', 'f3');
    const p = (await o.dumpBuffer('ht'))!;
    assert.equal(p[0], 24);
    assert.equal(p.readUInt16LE(p.length - 10), 12);
    await o.call('RESTORE', 'ht2', '0', p);
    assert.equal(await o.hlen('ht2'), 600);
    const f = ['f1', 'f2', 'f3', 'f4'];
    assert.deepEqual(await o.call('HPEXPIRETIME', 'ht2', 'FIELDS', '4', ...f), await o.call('HPEXPIRETIME', 'ht', 'FIELDS', '4', ...f));
    // After HPERSIST of every TTL the hash has Redis 7.0's form again.
    await o.call('HPERSIST', 'ht', 'FIELDS', '3', 'f1', 'f2', 'f3');
    const q = (await o.dumpBuffer('ht'))!;
    assert.equal(q[0], 4);
    assert.equal(q.readUInt16LE(q.length - 10), 10);
  });
});

describe('RDB files with our extended types', () => {
  it('rdb-extended-types no: left out, any Redis 7.0 loads the file; yes: RDB 12 with both forms, which we import back', async () => {
    const ours = await startOurs(['--appendfsync', 'no']);
    procs.push(ours);
    const c = client(ours.port);
    await c.set('plain', 'v');
    await c.call('JSON.SET', 'doc', '$', '{"k":[1,2,{"z":null}]}');
    await c.hset('hf', 'a', '1', 'b', '2');
    await c.call('HEXPIRE', 'hf', '100000', 'FIELDS', '1', 'a');
    const plain = path.join(tmp, 'plain.rdb');
    execFileSync('redis-cli', ['-p', String(ours.port), '--rdb', plain], { stdio: 'pipe' });
    assert.equal(fs.readFileSync(plain).toString('latin1', 0, 9), 'REDIS0010');
    const r = await startRedis(['--dbfilename', 'plain.rdb', '--dir', tmp]);
    procs.push(r);
    assert.deepEqual(await client(r.port).keys('*'), ['plain']);

    await c.config('SET', 'rdb-extended-types', 'yes');
    const ext = path.join(tmp, 'ext.rdb');
    execFileSync('redis-cli', ['-p', String(ours.port), '--rdb', ext], { stdio: 'pipe' });
    assert.equal(fs.readFileSync(ext).toString('latin1', 0, 9), 'REDIS0012');
    const back = await startOurs(['--appendfsync', 'no', '--import-rdb', ext]);
    procs.push(back);
    const b = client(back.port);
    assert.deepEqual((await b.keys('*')).sort(), ['doc', 'hf', 'plain']);
    assert.equal(await b.call('JSON.GET', 'doc'), '{"k":[1,2,{"z":null}]}');
    assert.deepEqual(await b.call('HPEXPIRETIME', 'hf', 'FIELDS', '2', 'a', 'b'), await c.call('HPEXPIRETIME', 'hf', 'FIELDS', '2', 'a', 'b'));
  });
});
