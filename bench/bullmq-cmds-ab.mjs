#!/usr/bin/env node
/**
 * The commands BullMQ's scripts call on a job (issue 21), in process through the dispatcher, for
 * two builds loaded into one process (A/B, batches alternated A, B, B, A...): CPU ns per
 * command, median of the batches, and the median of the per-batch ratios B/A. Each batch runs
 * the tests in order on a flushed keyspace (HMSET creates the job hashes the later tests use).
 *
 *   node bench/bullmq-cmds-ab.mjs /tmp/s12-base-dist dist
 *   AB_TESTS=hmsetNew,hsetFinished AB_BATCHES=21 AB_N=2000 node bench/bullmq-cmds-ab.mjs A B
 */
import os from 'node:os';
import path from 'node:path';
import { inProcess, argvOf, cpuMicros } from './inproc.mjs';

const [distA, distB] = process.argv.slice(2).map((d) => path.resolve(d));
if (!distA || !distB) throw new Error('usage: bullmq-cmds-ab.mjs <distA> <distB>');
const N = Number(process.env.AB_N ?? 2000);
const BATCHES = Number(process.env.AB_BATCHES ?? 15);
const data = JSON.stringify({ i: 1, payload: 'x'.repeat(100) });
const dataLp = JSON.stringify({ i: 1, payload: 'x'.repeat(20) });
// The calls as BullMQ 6.7 makes them (captured with MONITOR): job hash fields, event stream, lists.
const TESTS = {
  hmsetNew: (i) => ['HMSET', `bull:q:${i}`, 'name', 'job', 'data', data, 'opts', '{"attempts":0}', 'timestamp', '1795840335853', 'delay', '0', 'priority', '0'],
  // A job whose data fits a listpack hash (hash-max-listpack-value 64): created, then completed.
  hmsetNewLp: (i) => ['HMSET', `bull:lp:${i}`, 'name', 'job', 'data', dataLp, 'opts', '{"attempts":0}', 'timestamp', '1795840335853', 'delay', '0', 'priority', '0'],
  hsetFinishedLp: (i) => ['HSET', `bull:lp:${i}`, 'returnvalue', '{"ok":0}', 'finishedOn', '1795840335999'],
  hincrbyNewField: (i) => ['HINCRBY', `bull:q:${i}`, 'atm', '1'],
  hincrbyAgain: (i) => ['HINCRBY', `bull:q:${i}`, 'atm', '1'],
  hsetFinished: (i) => ['HSET', `bull:q:${i}`, 'returnvalue', String(i), 'finishedOn', '1795840335999'],
  hmsetAgain: (i) => ['HMSET', `bull:q:${i}`, 'processedOn', '1795840335990', 'finishedOn', '1795840335999'],
  hgetall: (i) => ['HGETALL', `bull:q:${i}`],
  hmget: (i) => ['HMGET', `bull:q:${i}`, 'parentKey', 'parent'],
  hget: () => ['HGET', 'bull:q:meta', 'opts.maxLenEvents'],
  hmgetMeta: () => ['HMGET', 'bull:q:meta', 'opts.maxLenEvents', 'concurrency', 'paused'],
  exists: (i) => ['EXISTS', `bull:q:${i}`],
  zrangebyscoreEmpty: (i) => ['ZRANGEBYSCORE', 'bull:q:delayed', '0', String(7355762028834815 + 4096 * i), 'LIMIT', '0', '1000'],
  xadd: (i) => ['XADD', 'bull:q:events', 'MAXLEN', '~', '10000', '*', 'event', 'added', 'jobId', String(i), 'name', 'job'],
  // QueueEvents' read of the events stream (its XREAD BLOCK returns up to COUNT entries).
  xrange10: (i) => ['XRANGE', 'bull:q:events', String(1 + (i % 1000)), '+', 'COUNT', '10'],
  // Not BullMQ's: XADD's worst case for sharing recent values (unique values of equal length).
  xaddUnique: (i) => ['XADD', 'other:events', '*', 'a', (i * 2654435761 >>> 0).toString(16).padStart(8, '0'), 'b', (i * 40503 >>> 0).toString(16).padStart(8, '0'), 'c', String(1e9 + i)],
  zadd: (i) => ['ZADD', 'bull:q:completed', String(1795840335000 + i), String(i)],
  lpush: (i) => ['LPUSH', 'bull:q:wait', String(i)],
  rpoplpush: () => ['RPOPLPUSH', 'bull:q:wait', 'bull:q:active'],
  lrem: (i) => ['LREM', 'bull:q:active', '-1', String(i)],
  incr: () => ['INCR', 'bull:q:id'],
  setPx: (i) => ['SET', `bull:q:${i}:lock`, 'token-abcdef', 'PX', '30000'],
  del: (i) => ['DEL', `bull:q:${i}:lock`],
  // A flow's parent: each child adds its key to the parent's dependencies set (9 children a
  // parent), and removes it when it completes (moveToFinished). hsetDeps: HSET of the same shape.
  saddDeps: (i) => ['SADD', `bull:q:p${Math.floor(i / 9)}:dependencies`, `bull:q:${i}`],
  sremDeps: (i) => ['SREM', `bull:q:p${Math.floor(i / 9)}:dependencies`, `bull:q:${i}`],
  hsetDeps: (i) => ['HSET', `bull:q:p${Math.floor(i / 9)}:processed`, `bull:q:${i}`, '1'],
  // Integer members (an intset), 9 a key.
  saddInts: (i) => ['SADD', `bull:q:p${Math.floor(i / 9)}:ints`, String(i)],
  sremInts: (i) => ['SREM', `bull:q:p${Math.floor(i / 9)}:ints`, String(i)],
  // One growing set of N members (a hashtable past 8), then emptied.
  saddBig: (i) => ['SADD', 'bull:q:bigset', `member:${i}`],
  sremBig: (i) => ['SREM', 'bull:q:bigset', `member:${i}`],
};
const names = (process.env.AB_TESTS ?? Object.keys(TESTS).join(',')).split(',');
const sides = [];
for (const d of [distA, distB]) {
  const s = await inProcess(d);
  s.argvs = Object.fromEntries(Object.entries(TESTS).map(([k, f]) => [k, Array.from({ length: N }, (_, i) => argvOf(s.Argv, f(i)))]));
  s.run = (w) => s.execute(s.client, argvOf(s.Argv, w), s.NULL_SINK);
  sides.push(s);
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
/** One batch on side k: every test (names order) once over N jobs; ns per command each. */
function batch(k) {
  const s = sides[k];
  s.run(['FLUSHALL']);
  s.run(['HSET', 'bull:q:meta', 'opts.maxLenEvents', '10000']);
  const got = {};
  for (const name of Object.keys(TESTS)) {
    const argvs = s.argvs[name];
    const t0 = cpuMicros();
    for (let i = 0; i < N; i++) s.execute(s.client, argvs[i], s.NULL_SINK);
    got[name] = ((cpuMicros() - t0) * 1000) / N;
  }
  return got;
}
batch(0); batch(1);
const res = sides.map(() => []);
for (let j = 0; j < BATCHES; j++) {
  const order = j % 2 ? [1, 0] : [0, 1];
  for (const k of order) res[k].push(batch(k));
}
console.log(`# A=${distA}\n# B=${distB}\n# ${BATCHES} batches of ${N} jobs, alternated; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| command | A ns/op | B ns/op | B/A (median of batch ratios) |');
console.log('|---|---:|---:|---:|');
for (const name of names) {
  const a = res[0].map((r) => r[name]);
  const b = res[1].map((r) => r[name]);
  console.log(`| ${name} | ${med(a).toFixed(0)} | ${med(b).toFixed(0)} | ${med(a.map((x, i) => b[i] / x)).toFixed(3)} |`);
}
process.exit(0);
