#!/usr/bin/env node
/**
 * In-process cost of single commands through the dispatcher (`execute`), without sockets: the
 * engine work per command (parsing excluded, lookup, data structure, reply calls into a sink
 * that drops them). Much steadier than bench/tcp.mjs on a shared machine, and it isolates what
 * a data structure costs from the socket path every command shares. Prints CPU ns/op (min and
 * median of BENCH_ROUNDS rounds) and the ratio to SET measured in the same run (the reference:
 * the cheapest write).
 *
 *   npm run build && node bench/commands.mjs
 *   BENCH_N=300000 BENCH_ROUNDS=5 BENCH_TESTS=set,lpush,hset node bench/commands.mjs
 *   node bench/commands.mjs /other/checkout/dist      # the same commands against another build
 *
 * The commands are redis-benchmark's (same keys and arguments); LPOP follows LPUSH, so it pops
 * from a list of BENCH_N elements.
 */
import { inProcess, cpuMicros } from './inproc.mjs';

const N = Number(process.env.BENCH_N ?? 300000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const { DIST, client, execute, NULL_SINK, Argv } = await inProcess(process.argv[2]);

const TESTS = {
  set: ['SET', 'key:__rand_int__', 'xxx'],
  get: ['GET', 'key:__rand_int__'],
  lpush: ['LPUSH', 'mylist', 'xxx'],
  lpop: ['LPOP', 'mylist'],
  sadd: ['SADD', 'myset', 'element:__rand_int__'],
  hset: ['HSET', 'myhash', 'element:__rand_int__', 'xxx'],
  zadd: ['ZADD', 'myzset', '0', 'element:__rand_int__'],
};
const names = (process.env.BENCH_TESTS ?? 'set,lpush,lpop,sadd,hset').split(',').map((s) => s.trim()).filter(Boolean);
if (!names.includes('set')) names.unshift('set');


function argvOf(words) {
  const a = new Argv();
  a.reset(Buffer.from(words.join(''), 'latin1'));
  let p = 0;
  for (const w of words) {
    a.push(p, p + w.length);
    p += w.length;
  }
  return a;
}


const results = new Map();
for (let round = 0; round < ROUNDS; round++) {
  for (const name of names) {
    const words = TESTS[name];
    if (!words) throw new Error(`unknown test ${name} (${Object.keys(TESTS).join(', ')})`);
    const argv = argvOf(words);
    const t0 = cpuMicros();
    for (let i = 0; i < N; i++) execute(client, argv, NULL_SINK);
    const ns = ((cpuMicros() - t0) * 1000) / N;
    if (!results.has(name)) results.set(name, []);
    results.get(name).push(ns);
  }
}

console.log(`# ${new Date().toISOString()}  node ${process.version}  ${N} commands x ${ROUNDS} rounds  ${DIST}`);
const med = (v) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];
const setMed = med(results.get('set'));
console.log(['command', 'min ns/op', 'median ns/op', 'median / SET'].map((h, i) => h.padStart(i === 0 ? 8 : 13)).join(' '));
for (const [name, v] of results) {
  const m = med(v);
  console.log([name.toUpperCase().padStart(8), Math.min(...v).toFixed(0).padStart(13), m.toFixed(0).padStart(13), (m / setMed).toFixed(2).padStart(13)].join(' '));
}
