#!/usr/bin/env node
/**
 * A/B form of bench/lua-micro.mjs: two builds (dist directories) loaded into ONE process, each
 * with its own engine and Lua VM, their batches interleaved (A, B, B, A, ...), so that the load
 * of a shared machine falls on both alike. Prints per test the median CPU ns per EVALSHA of
 * each build and the median of the per-batch ratios B/A.
 *
 *   node bench/lua-ab.mjs /path/to/base/dist dist                 # A = base, B = this tree
 *   LUA_TESTS=bullmqAdd,calls10 AB_BATCHES=41 AB_OPS=500 node bench/lua-ab.mjs A B
 *   LUA_SINK=resp node bench/lua-ab.mjs A B   # replies through each build's RespWriter
 */
import path from 'node:path';
import os from 'node:os';
import { cpuMicros } from './inproc.mjs';
import { setup } from './lua-micro.mjs';

const [distA, distB] = process.argv.slice(2).map((d) => path.resolve(d));
if (!distA || !distB) throw new Error('usage: lua-ab.mjs <distA> <distB>');
const BATCHES = Number(process.env.AB_BATCHES ?? 21);
const OPS = Number(process.env.AB_OPS ?? 500);
const sides = [await setup(distA), await setup(distB)];
const names = (process.env.LUA_TESTS ?? 'return1,calls2,calls10,calls50,bullmqAdd').split(',').filter(Boolean);
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

console.log(`# A=${distA}\n# B=${distB}\n# ${BATCHES} batches of ${OPS} per test and build, interleaved; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| test | A ns/op | B ns/op | B/A (median of batch ratios) |');
console.log('|---|---:|---:|---:|');
for (const name of names) {
  const argvs = sides.map((s) => s.argvsOf(name));
  const run = (i) => {
    const { execute, client, NULL_SINK, flush } = sides[i];
    const t0 = cpuMicros();
    for (let k = 0; k < OPS; k++) {
      for (const a of argvs[i]) execute(client, a, NULL_SINK);
      flush();
    }
    return ((cpuMicros() - t0) * 1000) / OPS;
  };
  run(0); run(1); // warm
  const a = [], b = [], r = [];
  for (let j = 0; j < BATCHES; j++) {
    let x, y;
    if (j % 2 === 0) { x = run(0); y = run(1); } else { y = run(1); x = run(0); }
    a.push(x); b.push(y); r.push(y / x);
  }
  console.log(`| ${name} | ${med(a).toFixed(0)} | ${med(b).toFixed(0)} | ${med(r).toFixed(2)} |`);
}
