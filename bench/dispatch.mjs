#!/usr/bin/env node
/**
 * In-process benchmark of the TCP command path without the kernel: RESP bytes -> Connection
 * (parser, dispatcher, handler, reply writer) -> a socket stand-in that drops the bytes. It
 * measures the JavaScript CPU per command (process.cpuUsage), which the loaded 2-core machine
 * disturbs far less than redis-benchmark's throughput. 50 connections take turns, each read
 * holding PIPE commands, as `redis-benchmark -c 50 -P 16` sends them.
 *
 *   npm run build && node bench/dispatch.mjs            # every test, PIPE=16 and 1
 *   DISPATCH_TESTS=hset,zadd DISPATCH_PIPES=16 node bench/dispatch.mjs
 */
import { FakeSock, TESTS, encode } from './dispatch-common.mjs';
import { loadConfig } from '../dist/config.js';
import { createServer } from '../dist/app.js';
import { Connection } from '../dist/tcp/connection.js';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';

const SETUP = {
  zrangews: [['ZADD', 'bench:zw', ...Array.from({ length: 100 }, (_, i) => [String(i + 0.5), `member:${i}`]).flat()]],
};
const names = (process.env.DISPATCH_TESTS ?? 'get,set,incr,lpush,lpop,sadd,hset,zadd,zrangews').split(',');
const pipes = (process.env.DISPATCH_PIPES ?? '16,1').split(',').map(Number);
const OPS = Number(process.env.DISPATCH_OPS ?? 200000);
const CONNS = 50;
const RANDOM = Number(process.env.DISPATCH_RANDOM ?? 0);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dispatch-'));
const server = await createServer(loadConfig(['--port', '0', '--http-port', '-1', '--appendfsync', 'no', '--dir', dir]));
const eng = server.engine;
const conns = Array.from({ length: CONNS }, (_, i) => new Connection(new FakeSock(i), eng, () => {}, true));
const buf = Buffer.allocUnsafe(64 * 1024);

function run(name, pipe, ops) {
  // 256 batches, reused. Without DISPATCH_RANDOM, __rand_int__ is 000000000000, as in
  // redis-benchmark without -r (the same key, field or member every time).
  const batches = Array.from({ length: 256 }, () => {
    let s = '';
    for (let k = 0; k < pipe; k++) s += encode(TESTS[name]().map((a) => a.replace('__rand_int__', String(RANDOM ? Math.floor(Math.random() * RANDOM) : 0).padStart(12, '0'))));
    return Buffer.from(s);
  });
  const rounds = Math.ceil(ops / pipe);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) {
    const b = batches[r & 255];
    b.copy(buf, 0);
    conns[r % CONNS].onRead(b.length, buf);
  }
  const t = Number(process.hrtime.bigint() - t0) / 1e3;
  const c = process.cpuUsage(c0);
  return { wall: t / (rounds * pipe), cpu: (c.user + c.system) / (rounds * pipe) };
}

for (const name of names) for (const c of SETUP[name] ?? []) {
  let s = encode(c);
  const b = Buffer.from(s);
  b.copy(buf, 0);
  conns[0].onRead(b.length, buf);
}
console.log(`# ${new Date().toISOString()} load ${os.loadavg()[0].toFixed(1)}; ${OPS} ops per test, ${CONNS} connections; µs per command (CPU, wall)`);
for (const pipe of pipes) for (const name of names) {
  run(name, pipe, OPS / 4); // warm-up
  const xs = [run(name, pipe, OPS), run(name, pipe, OPS), run(name, pipe, OPS)].sort((a, b) => a.cpu - b.cpu);
  console.log(`${name.padStart(10)} -P ${String(pipe).padStart(2)}  cpu ${xs[1].cpu.toFixed(3)}  wall ${xs[1].wall.toFixed(3)}  (min cpu ${xs[0].cpu.toFixed(3)})`);
}
await server.stop();
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
