#!/usr/bin/env node
/**
 * `-P 16` GET of random keys in a large keyspace, in process (the user-space CPU per GET that
 * bench/bigkeys.mjs measures at the socket, without the kernel and the other helpers' noise):
 * each build loads N keys `key:<12 digits>` -> V-byte value through plain SETs (so they go to
 * the compact tier), then chunks of 16 pipelined `GET key:<random 12 digits>` (redis-benchmark
 * -r N's keys: every one hits) are parsed, executed and their replies written by a RespWriter
 * to a sink that drops them. Both builds live in this one process and their rounds alternate;
 * prints the median CPU ns per GET and the young-generation collections per 100k GETs (each
 * one a pause that lands in some request's latency).
 *
 *   node --max-semi-space-size=4 bench/getbig-ab.mjs base-dist dist [N=10000000] [V=16] [gets per round=400000] [rounds=7]
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { pipeTurn } from './inproc.mjs';

const [dA = 'base-dist', dB = 'dist', nArg = '10000000', vArg = '16', gArg = '400000', rArg = '7'] = process.argv.slice(2);
const N = Number(nArg);
const V = Number(vArg);
const G = Number(gArg);
const ROUNDS = Number(rArg);

const resp = (ws) => `*${ws.length}\r\n` + ws.map((w) => `$${w.length}\r\n${w}\r\n`).join('');
const KEY0 = 'key:000000000000';
/** 16 commands of the same shape; the 12 digits of key k start at digits[k]. */
function template(words) {
  const one = resp(words);
  const b = Buffer.from(one.repeat(16));
  const at = one.indexOf(KEY0) + 4;
  return { b, digits: Array.from({ length: 16 }, (_, k) => k * one.length + at) };
}
function putDigits(b, at, x) {
  for (let p = at + 11; p >= at; p--) {
    b[p] = 48 + (x % 10);
    x = Math.floor(x / 10);
  }
}

let seed = 0x9e3779b9;
function rand(n) {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % n;
}

async function build(dist) {
  const { engine: eng, turn } = await pipeTurn(dist);
  const set = template(['SET', KEY0, 'v'.repeat(V)]);
  for (let i = 0; i < N; i += 16) {
    for (let k = 0; k < 16; k++) putDigits(set.b, set.digits[k], Math.min(i + k, N - 1));
    turn(set.b);
  }
  const size = eng.dbs[0].size;
  if (size !== N) throw new Error(`${dist}: ${size} keys loaded, not ${N}`);
  return turn;
}

const get = template(['GET', KEY0]);
const builds = { A: await build(dA), B: await build(dB) };
const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const { loadavg } = await import('node:os');
console.log(`# ${new Date().toISOString()} load ${loadavg().map((x) => x.toFixed(1)).join(' ')}; N=${N} V=${V}, ${G} GETs per round, ${ROUNDS} rounds; A=${dA} B=${dB}`);
const res = { A: [], B: [] };
const gcs = { A: 0, B: 0 };
let gcN = 0;
new PerformanceObserver((l) => (gcN += l.getEntries().length)).observe({ entryTypes: ['gc'] });
for (let r = 0; r < ROUNDS; r++) {
  for (const k of r & 1 ? ['B', 'A'] : ['A', 'B']) {
    const turn = builds[k];
    await new Promise((r) => setTimeout(r, 20)); // the observer reports the last round's collections
    const g0 = gcN;
    const c0 = process.cpuUsage();
    for (let i = 0; i < G; i += 16) {
      for (let j = 0; j < 16; j++) putDigits(get.b, get.digits[j], rand(N));
      turn(get.b);
    }
    const c = process.cpuUsage(c0);
    res[k].push(((c.user + c.system) * 1000) / G);
    await new Promise((r) => setTimeout(r, 20));
    gcs[k] += gcN - g0;
  }
}
const a = med(res.A);
const b = med(res.B);
console.log(`GET -P16 random of ${N}: A ${a.toFixed(0)} ns  B ${b.toFixed(0)} ns  B/A ${(b / a).toFixed(2)}  (A ${res.A.map((x) => x.toFixed(0)).join(' ')}; B ${res.B.map((x) => x.toFixed(0)).join(' ')})`);
const per = (k) => ((gcs[k] * 100000) / (G * ROUNDS)).toFixed(2);
console.log(`collections per 100k GETs: A ${per('A')}  B ${per('B')}`);
console.log(`# load after ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
