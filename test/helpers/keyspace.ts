/**
 * Keyspace snapshots for restart and loading tests: every key of some databases described by
 * type, content (order-free where Redis's order is unspecified) and TTL presence, so that two
 * servers (or one server before and after a restart) can be compared with deepEqual.
 */
import type { Redis } from 'ioredis';

/** A key's type, content and TTL presence, as one comparable string. */
export async function describeKey(r: Redis, key: string): Promise<string> {
  const type = await r.type(key);
  let v: unknown = null;
  if (type === 'string') v = (await r.getBuffer(key))!.toString('latin1');
  else if (type === 'hash') v = Object.entries(await r.hgetall(key)).sort();
  else if (type === 'list') v = await r.lrange(key, 0, -1);
  else if (type === 'set') v = (await r.smembers(key)).sort();
  else if (type === 'zset') v = await r.zrange(key, '0', '-1', 'WITHSCORES');
  else if (type === 'stream') v = [await r.xrange(key, '-', '+'), await r.call('XPENDING', key, 'g')];
  const pttl = await r.pttl(key);
  return JSON.stringify([type, v, pttl > 0 ? 'ttl' : pttl]);
}

/** Every key of `dbs` described (KEYS: on our server it loads everything left first). */
export async function snapshot(r: Redis, dbs: readonly number[] = [0, 3]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const db of dbs) {
    await r.select(db);
    for (const k of (await r.keys('*')).sort()) out[`${db}:${k}`] = await describeKey(r, k);
  }
  await r.select(0);
  return out;
}
