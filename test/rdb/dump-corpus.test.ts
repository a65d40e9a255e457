/**
 * DUMP against redis-server 7.0 over the whole differential corpus (test/diff/cases): every
 * script runs on both servers, then every key left in any database is DUMPed on both.
 *  - Bytes must be identical, except where Redis's own bytes depend on its hash table order
 *    (hashtable-encoded sets and hashes), which no other server can reproduce.
 *  - Every key also makes the round trips: our payload restored into redis-server, and
 *    redis-server's payload restored into us and back, must give the value Redis holds
 *    (DEBUG DIGEST-VALUE on the Redis side).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { runScript, type Script } from '../diff/harness.js';
import { RdbReader } from '../../dist/rdb/reader.js';
import { readValue } from '../../dist/rdb/decode.js';
import type { Stream } from '../../dist/engine/ds/stream.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const caseDir = path.join(here, '..', 'diff', 'cases');
const files = fs.readdirSync(caseDir).filter((f) => f.endsWith('.js')).sort();

let ours: Proc;
let redis: Proc;
let o: Redis;
let r: Redis;
/** redis-server with integer replies as strings (exact expiry times past 2^53). */
let rs: Redis;

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis(['--enable-debug-command', 'yes'])]);
  o = new Redis(ours.port, { lazyConnect: true, maxRetriesPerRequest: 0 });
  r = new Redis(redis.port, { lazyConnect: true, maxRetriesPerRequest: 0 });
  rs = new Redis(redis.port, { lazyConnect: true, maxRetriesPerRequest: 0, stringNumbers: true });
  await Promise.all([o.connect(), r.connect(), rs.connect()]);
});
after(async () => {
  o?.disconnect();
  r?.disconnect();
  rs?.disconnect();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

const totals = { keys: 0, identical: 0, orderFree: 0, otherEncoding: 0, listNodes: 0, valueDiffers: 0 };

const LIMITS = { hash: { maxEntries: 512, maxValue: 64 }, set: { maxIntset: 512, maxEntries: 128, maxValue: 64 }, listFill: -2 };

/** The value as replies show it (order-free where Redis's order is unspecified). */
async function valueText(c: Redis, key: Buffer, type: string): Promise<string> {
  let v: unknown;
  if (type === 'string') v = (await c.getBuffer(key))!.toString('hex');
  else if (type === 'hash') v = (await c.call('HGETALL', key) as string[]).join('\0').split('\0').sort();
  else if (type === 'list') v = await c.lrange(key, 0, -1);
  else if (type === 'set') v = (await c.smembers(key)).sort();
  else if (type === 'zset') v = await c.zrange(key, '0', '-1', 'WITHSCORES');
  else if (type === 'stream') v = await c.call('XINFO', 'STREAM', key, 'FULL'); // groups and times too
  return JSON.stringify(v);
}

/** Databases holding keys on redis-server (INFO keyspace). */
async function dbsWithKeys(c: Redis): Promise<number[]> {
  const info = await c.info('keyspace');
  return [...info.matchAll(/^db(\d+):/gm)].map((m) => Number(m[1]));
}

async function checkKeys(where: string): Promise<void> {
  for (const db of await dbsWithKeys(r)) {
    await o.select(db);
    await r.select(db);
    await rs.select(db);
    for (const key of (await r.keysBuffer('*')).sort(Buffer.compare)) {
      if (key.toString('latin1').startsWith('__rs_')) continue;
      const [pr, po] = await Promise.all([r.dumpBuffer(key), o.dumpBuffer(key)]);
      assert.ok(pr !== null && po !== null, `${where}: ${db}/${key.toString('latin1')} missing on one side`);
      totals.keys++;
      const type = await r.type(key);
      const [enc, ourEnc] = [String(await r.object('ENCODING', key)), String(await o.object('ENCODING', key))];
      if ((await valueText(r, key, type)) !== (await valueText(o, key, type))) {
        totals.valueDiffers++; // time-based ids, random members: not the same value to begin with
        continue;
      }
      if (pr.equals(po)) totals.identical++;
      else if ((type === 'set' || type === 'hash') && enc === 'hashtable') totals.orderFree++;
      else if ((type === 'zset' || type === 'hash') && enc !== ourEnc) totals.otherEncoding++;
      else if (type === 'list' && (pr[1] > 1 || po[1] > 1)) totals.listNodes++; // node layout depends on history (LSET, LINSERT, LPUSH)
      else assert.fail(`${where}: DUMP ${db}/${key.toString('latin1')} (${type} ${enc}) differs:\n  redis: ${pr.toString('hex')}\n  ours:  ${po.toString('hex')}`);
      const digest = await r.call('DEBUG', 'DIGEST-VALUE', key);
      // The digest covers TTL presence: restore with the same expiry time.
      const at = String(await rs.call('PEXPIRETIME', key));
      const ttl = at.startsWith('-') ? '0' : at;
      // Ours -> redis-server.
      await r.restore('__rs_a', ttl, po, 'REPLACE', 'ABSTTL');
      assert.deepEqual(await r.call('DEBUG', 'DIGEST-VALUE', '__rs_a'), digest, `${where}: ${db}/${key.toString('latin1')}: our payload restored into redis-server`);
      // redis-server -> ours -> redis-server.
      await o.restore('__rs_b', 0, pr, 'REPLACE');
      const back = await o.dumpBuffer('__rs_b');
      await r.restore('__rs_b', ttl, back!, 'REPLACE', 'ABSTTL');
      assert.deepEqual(await r.call('DEBUG', 'DIGEST-VALUE', '__rs_b'), digest, `${where}: ${db}/${key.toString('latin1')}: redis payload through us`);
      await Promise.all([r.del('__rs_a', '__rs_b'), o.del('__rs_b')]);
    }
  }
  await o.select(0);
  await r.select(0);
}

for (const file of files) {
  const name = file.replace(/\.js$/, '');
  const scripts: Script[] = (await import(path.join(caseDir, file))).default;
  describe(`DUMP corpus: ${name}`, () => {
    it('every key left by every script', async () => {
      for (const script of scripts) {
        if (script.skip) continue;
        await Promise.all([o.flushall(), r.flushall()]);
        const [a, b] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
        try {
          await runScript(a, b, script); // reply differences are the differential suite's business
        } finally {
          a.close();
          b.close();
        }
        await checkKeys(`${name} / ${script.name}`);
      }
    });
  });
}

describe('DUMP corpus totals', () => {
  it('covered keys', () => {
    console.log(`DUMP corpus: ${JSON.stringify(totals)}`);
    assert.ok(totals.keys > 100);
  });
});
