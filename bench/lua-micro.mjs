#!/usr/bin/env node
/**
 * In-process cost of scripts through the dispatcher (no sockets, as bench/commands.mjs): CPU ns
 * per EVALSHA of bench/evalsha.mjs's scripts (2, 10, 50 redis.calls), of `return 1` (what a
 * run costs without calls) and of the same commands called directly. What a redis.call adds
 * on top of its command is (calls<n> - return1) / n - direct. Steady on a shared machine: use
 * it for A/B work on src/engine/scripting/, bench:evalsha for the ratio to Redis.
 *
 *   npm run build && node bench/lua-micro.mjs
 *   node bench/lua-micro.mjs /other/checkout/dist      # another build (before/after)
 *   LUA_N=20000 LUA_ROUNDS=7 LUA_TESTS=return1,calls50 node bench/lua-micro.mjs
 */
import { createHash } from 'node:crypto';
import { script } from './evalsha.mjs';
import { pathToFileURL } from 'node:url';
import { inProcess, cpuMicros } from './inproc.mjs';

const N = Number(process.env.LUA_N ?? 20000);
const ROUNDS = Number(process.env.LUA_ROUNDS ?? 5);

const sha = (body) => createHash('sha1').update(body).digest('hex');
// BullMQ's Queue.add script, with the arguments BullMQ 6.7.0 sends (captured with MONITOR):
// 8 redis.calls, cmsgpack.unpack of its options, a stream trimmed at 10,000 events.
const { addStandardJob } = await import('bullmq/dist/esm/scripts/addStandardJob-9.js');
// BullMQ's worker scripts' shapes (moveToActive, moveToFinished): 14 keys and 9 arguments, one a
// msgpack blob holding NULs; their options (9 pairs, one a map) through cmsgpack.unpack.
const workerOpts = Buffer.concat([Buffer.from([0x89, 0xa8]), Buffer.from('attempts'), Buffer.from([0x03, 0xa5]), Buffer.from('delay'), Buffer.from([0x00, 0xa7]),
  Buffer.from('backoff'), Buffer.from([0x81, 0xa4]), Buffer.from('type'), Buffer.from([0xa5]), Buffer.from('fixed'), Buffer.from([0xa5]), Buffer.from('jobId'),
  Buffer.from([0xa3]), Buffer.from('123'), Buffer.from([0xa4]), Buffer.from('lifo'), Buffer.from([0xc2, 0xa8]), Buffer.from('priority'), Buffer.from([0x00, 0xa2]),
  Buffer.from('ts'), Buffer.from([0xcb, 0x42, 0x78, 0xbc, 0xfe, 0x56, 0x80, 0x00, 0x00, 0xa2]), Buffer.from('k8'), Buffer.from([0xa1, 0x76, 0xa2]), Buffer.from('k9'), Buffer.from([0xc3])]);
const bodies = { return1: 'return 1', calls2: script(2), calls10: script(10), calls50: script(50), bullmqAdd: addStandardJob.content,
  args23: 'return #KEYS + #ARGV', unpackOpts: 'local o = cmsgpack.unpack(ARGV[1]) return o.attempts',
  // 10 redis.call errors caught by pcall (a wrong arity: no command runs).
  callErr10: "for i = 1, 10 do pcall(redis.call, 'GET') end return 1",
  // Array replies into Lua (setup() makes the keys): a BullMQ-sized job hash (16 fields),
  // HMGET of 4 fields (one missing), ZRANGE of 10 members with scores.
  hgetall10: "for i = 1, 10 do redis.call('HGETALL', 'bench:lua:job') end return 1",
  hmget10: "for i = 1, 10 do redis.call('HMGET', 'bench:lua:job', 'name', 'data', 'nope', 'timestamp') end return 1",
  zrange10: "for i = 1, 10 do redis.call('ZRANGE', 'bench:lua:z', 0, 9, 'WITHSCORES') end return 1",
  // A table result shaped as moveToFinished's next job: {HGETALL of the job hash, id, 0, 0}.
  jobResult: "return {redis.call('HGETALL', 'bench:lua:job'), 'id', 0, 0}" };
const Q = 'bull:one:';
const bullmqAddArgs = ['9', ...['wait', 'paused', 'meta', 'id', 'completed', 'delayed', 'active', 'events', 'marker'].map((k) => Q + k),
  Buffer.concat([Buffer.from([0x9a, 0xa9]), Buffer.from(Q), Buffer.from([0xa0, 0xa3]), Buffer.from('job'),
    Buffer.from([0xcb, 0x42, 0x7a, 0x21, 0xd4, 0x5f, 0xed, 0xe0, 0x00, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0])]),
  JSON.stringify({ i: 1, payload: 'x'.repeat(64) }), Buffer.concat([Buffer.from([0xde, 0x00, 0x01, 0xa8]), Buffer.from('attempts'), Buffer.from([0])])];
const extraArgs = {
  bullmqAdd: bullmqAddArgs,
  args23: ['14', ...Array.from({ length: 14 }, (_, i) => `bull:one:k${i}`), 'tok', '30000', String(Date.now()), '1', 'x', 'y', 'z', bullmqAddArgs[10], ''],
  unpackOpts: ['0', workerOpts],
};
const TESTS = {
  ...Object.fromEntries(Object.entries(bodies).map(([k, b]) => [k, [['EVALSHA', sha(b), ...(extraArgs[k] ?? ['0'])]]])),
  // Two scripts in turn (as BullMQ's add and moveToFinished): per op, one EVALSHA of each.
  alt2: [['EVALSHA', sha(bodies.return1), '0'], ['EVALSHA', sha(bodies.args23), ...extraArgs.args23]],
  // A FlowProducer-sized transaction (bench:bullmq's flow row): MULTI, ten BullMQ adds, EXEC;
  // and the same ten adds without MULTI. MULTI's cost per queued script: (multiAdd10 - add10) / 10.
  multiAdd10: [['MULTI'], ...Array.from({ length: 10 }, () => ['EVALSHA', sha(bodies.bullmqAdd), ...bullmqAddArgs]), ['EXEC']],
  add10: Array.from({ length: 10 }, () => ['EVALSHA', sha(bodies.bullmqAdd), ...bullmqAddArgs]),
  multiCalls2x10: [['MULTI'], ...Array.from({ length: 10 }, () => ['EVALSHA', sha(bodies.calls2), '0']), ['EXEC']],
  calls2x10: Array.from({ length: 10 }, () => ['EVALSHA', sha(bodies.calls2), '0']),
  multiArgs23x10: [['MULTI'], ...Array.from({ length: 10 }, () => ['EVALSHA', sha(bodies.args23), ...extraArgs.args23]), ['EXEC']],
  args23x10: Array.from({ length: 10 }, () => ['EVALSHA', sha(bodies.args23), ...extraArgs.args23]),
  // The commands of one cycle of the scripts, called directly (per command: divide by 4).
  direct4: [['SET', 'bench:lua:0', '0123456789abcdef'], ['GET', 'bench:lua:1'], ['INCR', 'bench:lua:n'], ['HSET', 'bench:lua:h', 'f3', 'value']],
};

/** An engine of build `dist` with the scripts loaded; argvsOf(test) gives a test's commands. */
export async function setup(dist) {
  const { DIST, client, execute, NULL_SINK, Argv } = await inProcess(dist, 'tcp');
  for (const b of Object.values(bodies)) execute(client, Argv.of(['SCRIPT', 'LOAD', b].map((s) => Buffer.from(s))), NULL_SINK);
  const job = ['name', 'job', 'data', JSON.stringify({ i: 1, payload: 'x'.repeat(64) }), 'opts', '{"attempts":3}', 'timestamp', '1764300000000',
    'delay', '0', 'priority', '0', 'processedOn', '1764300000100', 'atm', '1', 'ats', '1', 'finishedOn', '1764300000200', 'returnvalue', 'null',
    'parent', '', 'rjk', '', 'stc', '0', 'pb', 'w1', 'nrjid', ''];
  for (const w of [['HSET', 'bench:lua:job', ...job], ['ZADD', 'bench:lua:z', ...Array.from({ length: 20 }, (_, i) => [String(i * 1000 + 0.5), `job:${i}`]).flat()]]) {
    execute(client, Argv.of(w.map((s) => Buffer.from(s))), NULL_SINK);
  }
  const argvsOf = (name) => TESTS[name].map((w) => Argv.of(w.map((s) => (Buffer.isBuffer(s) ? s : Buffer.from(s)))));
  // LUA_SINK=resp: replies written by the build's RespWriter, flushed to a socket that drops
  // them after each command (as a -P 1 connection), instead of NULL_SINK's nothing.
  let sink = NULL_SINK;
  let flush = () => {};
  if (process.env.LUA_SINK === 'resp') {
    const { RespWriter } = await import(`${DIST}/resp/writer.js`);
    const w = new RespWriter();
    const sock = { write: () => true, writableLength: 0 };
    sink = w;
    flush = () => w.flush(sock);
  }
  return { DIST, client, execute, NULL_SINK: sink, flush, argvsOf };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();

async function main() {
  // A TCP client: scripts of other transports (REST, MULTI) are never moved to the worker.
  const { DIST, client, execute, NULL_SINK, argvsOf } = await setup(process.argv[2]);
  const names = (process.env.LUA_TESTS ?? Object.keys(TESTS).join(',')).split(',').filter(Boolean);

  const results = new Map();
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names) {
      const argvs = argvsOf(name);
      const t0 = cpuMicros();
      for (let i = 0; i < N; i++) for (const a of argvs) execute(client, a, NULL_SINK);
      const ns = ((cpuMicros() - t0) * 1000) / N;
      if (!results.has(name)) results.set(name, []);
      results.get(name).push(ns);
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  console.log(`# ${DIST}  N=${N} x ${ROUNDS} rounds, CPU ns per op (median, min)`);
  for (const [name, xs] of results) console.log(`${name.padEnd(9)} ${med(xs).toFixed(0).padStart(8)} ${Math.min(...xs).toFixed(0).padStart(8)}`);
  const m = (k) => (results.has(k) ? med(results.get(k)) : NaN);
  const direct = m('direct4') / 4;
  for (const n of [2, 10, 50]) {
    if (results.has(`calls${n}`)) console.log(`per redis.call (calls${n}): ${((m(`calls${n}`) - m('return1')) / n).toFixed(0)} ns, of which the command ${direct.toFixed(0)} ns`);
  }
}
