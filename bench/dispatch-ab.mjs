#!/usr/bin/env node
/**
 * A/B form of bench/dispatch.mjs: two builds (dist directories) loaded into ONE process, their
 * rounds interleaved (A, B, A, B...), so that the load of a shared machine falls on both alike.
 * Prints the median µs CPU per command of each and the ratio B/A.
 *
 *   node bench/dispatch-ab.mjs /path/to/base/dist dist     # A = base, B = this tree
 *   DISPATCH_TESTS=hset,lpush DISPATCH_PIPES=16 AB_ROUNDS=15 node bench/dispatch-ab.mjs A B
 *   DISPATCH_RANDOM=100000 node bench/dispatch-ab.mjs A B   # keys/members as redis-benchmark -r
 *   DISPATCH_PHASE=1 DISPATCH_PIPES=1 DISPATCH_TESTS=get,get100 node bench/dispatch-ab.mjs A B
 *
 * DISPATCH_PHASE=1: a poll phase as at `-c 50 -P 1`: one read per connection, then the check
 * phase (setImmediate) where the batched replies are flushed (connection.ts deferFlush);
 * without it the reads run back to back and a batch is flushed only at the round's end.
 * `get100` is GET of a 100-byte value (set first on both sides), `get100s` of one set twice
 * (no longer in the compact tier: its reply is written from a string).
 */
import { FakeSock, TESTS, encode } from './dispatch-common.mjs';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const names = (process.env.DISPATCH_TESTS ?? 'set,incr,lpush,lpop,sadd,hset,zadd,get').split(',');
const pipes = (process.env.DISPATCH_PIPES ?? '16').split(',').map(Number);
const OPS = Number(process.env.DISPATCH_OPS ?? 100000);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 11);
const CONNS = 50;
const RANDOM = Number(process.env.DISPATCH_RANDOM ?? 0);
const [distA, distB] = process.argv.slice(2).map((d) => path.resolve(d));
if (!distA || !distB) throw new Error('usage: dispatch-ab.mjs <distA> <distB>');

async function load(dist) {
  const imp = (f) => import(pathToFileURL(path.join(dist, f)).href);
  const { loadConfig } = await imp('config.js');
  const { createServer } = await imp('app.js');
  const { Connection } = await imp('tcp/connection.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dispatch-ab-'));
  const server = await createServer(loadConfig(['--port', '0', '--http-port', '-1', '--appendfsync', 'no', '--dir', dir]));
  const conns = Array.from({ length: CONNS }, (_, i) => new Connection(new FakeSock(i), server.engine, () => {}, true));
  for (const args of [['SET', 'key:000000000000', 'v'.repeat(100)], ['SET', 'skey', 'w'.repeat(100)], ['SET', 'skey', 'v'.repeat(100)]]) {
    const set = Buffer.from(encode(args));
    set.copy(BUF, 0);
    conns[0].onRead(set.length, BUF);
  }
  return { server, conns, dir };
}

const BUF = Buffer.allocUnsafe(64 * 1024);
const sides = [await load(distA), await load(distB)];
const buf = BUF;
const PHASE = process.env.DISPATCH_PHASE === '1';
const TESTS_AB = { ...TESTS, get100: () => ['GET', 'key:__rand_int__'], get100s: () => ['GET', 'skey'] };
const tick = () => new Promise((r) => setImmediate(r));

async function run(side, name, pipe, ops) {
  // DISPATCH_RANDOM=N: __rand_int__ drawn from [0, N) (redis-benchmark -r N), in 64 batches reused.
  const rand = () => String(RANDOM ? Math.floor(Math.random() * RANDOM) : 0).padStart(12, '0');
  const bs = Array.from({ length: RANDOM ? 64 : 1 }, () => Buffer.from(Array.from({ length: pipe }, () => encode(TESTS_AB[name]().map((a) => a.replace('__rand_int__', rand())))).join('')));
  const rounds = Math.ceil(ops / pipe);
  const c0 = process.cpuUsage();
  for (let r = 0; r < rounds; r++) {
    const b = bs[r & (bs.length - 1)];
    b.copy(buf, 0);
    side.conns[r % CONNS].onRead(b.length, buf);
    if (PHASE && r % CONNS === CONNS - 1) await tick();
  }
  if (PHASE) await tick();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / (rounds * pipe);
}

const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
console.log(`# ${new Date().toISOString()} load ${os.loadavg()[0].toFixed(1)}; A=${distA} B=${distB}; ${ROUNDS} interleaved rounds of ${OPS} ops; median µs CPU per command`);
// Every test warmed up on both sides before any is measured (the first test measured in a
// fresh process otherwise pays for the JIT's work on code the later tests share).
for (const pipe of pipes) for (const name of names) for (const s of sides) await run(s, name, pipe, OPS / 2);
for (const pipe of pipes) for (const name of names) {
  const a = [], b = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (i & 1) { b.push(await run(sides[1], name, pipe, OPS)); a.push(await run(sides[0], name, pipe, OPS)); }
    else { a.push(await run(sides[0], name, pipe, OPS)); b.push(await run(sides[1], name, pipe, OPS)); }
  }
    // The minimum too: on a loaded machine, contention only ever adds CPU time to a round.
  const min = (xs) => Math.min(...xs);
  console.log(`${name.padStart(8)} -P ${String(pipe).padStart(2)}  A ${med(a).toFixed(3)}  B ${med(b).toFixed(3)}  B/A ${(med(b) / med(a)).toFixed(3)}   min A ${min(a).toFixed(3)}  B ${min(b).toFixed(3)}  B/A ${(min(b) / min(a)).toFixed(3)}`);
}
for (const s of sides) { await s.server.stop(); fs.rmSync(s.dir, { recursive: true, force: true }); }
process.exit(0);
