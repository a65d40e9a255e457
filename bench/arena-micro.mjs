/**
 * The arena (src/engine/arena.ts) against today's KeyTable + Entry, in process: N inserts of
 * SET-like keys (`key:<12 digits>` -> a V-byte value, as bench/bigkeys.mjs), then N lookups
 * from the request bytes, in key order (`lookup`) and in a scattered order (`lookup-rand`: key
 * i * 7919 mod N, as random GETs, whose records are not adjacent in memory). Per phase: wall time, GC pause total and worst (perf_hooks 'gc'),
 * RSS and heap after. One structure per process run (RSS is per process):
 *
 *   node --expose-gc bench/arena-micro.mjs arena|table [N=10000000] [V=16] [dist=dist]
 */
import { PerformanceObserver } from 'node:perf_hooks';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [which = 'arena', nArg = '10000000', vArg = '16', dist = 'dist'] = process.argv.slice(2);
const N = Number(nArg);
const V = Number(vArg);
const D = pathToFileURL(path.resolve(dist)).href;
const { hashBytes } = await import(`${D}/engine/keytable.js`);

let gcMs = 0;
let gcMax = 0;
let gcN = 0;
new PerformanceObserver((l) => {
  for (const e of l.getEntries()) {
    gcMs += e.duration;
    gcN++;
    if (e.duration > gcMax) gcMax = e.duration;
  }
}).observe({ entryTypes: ['gc'] });

const kb = Buffer.alloc(16);
kb.write('key:');
const val = 'v'.repeat(V);
function keyBytes(i) {
  let x = i;
  for (let p = 15; p >= 4; p--) {
    kb[p] = 48 + (x % 10);
    x = Math.floor(x / 10);
  }
}

const rss0 = process.memoryUsage().rss;
let ins;
let find;
let findRand;
/** The i-th key of the scattered order (7919 is prime, so i -> i * 7919 mod N is a bijection unless N % 7919 == 0). */
const scatter = (i) => (i * 7919) % N;
if (which === 'arena') {
  const { Arena } = await import(`${D}/engine/arena.js`);
  const a = new Arena();
  ins = () => {
    for (let i = 0; i < N; i++) {
      keyBytes(i);
      a.add(hashBytes(kb, 0, 16), kb, 0, 16, val, 1000);
    }
    return a.size;
  };
  find = () => {
    let hit = 0;
    for (let i = 0; i < N; i++) {
      keyBytes(i);
      if (a.findBytes(kb, 0, 16, hashBytes(kb, 0, 16)) !== 0) hit++;
    }
    return hit;
  };
  findRand = () => {
    let hit = 0;
    for (let i = 0; i < N; i++) {
      keyBytes(scatter(i));
      if (a.findBytes(kb, 0, 16, hashBytes(kb, 0, 16)) !== 0) hit++;
    }
    return hit;
  };
} else {
  const { KeyTable } = await import(`${D}/engine/keytable.js`);
  const { Entry } = await import(`${D}/engine/db.js`);
  const t = new KeyTable();
  ins = () => {
    for (let i = 0; i < N; i++) {
      keyBytes(i);
      // As Db.setArg: the key string is built for a new key, the value is a latin1 string.
      t.insert(new Entry(kb.latin1Slice(0, 16), Buffer.from(val).latin1Slice(0, V), 1000));
    }
    return t.size;
  };
  find = () => {
    let hit = 0;
    for (let i = 0; i < N; i++) {
      keyBytes(i);
      if (t.getBytes(kb, 0, 16) !== undefined) hit++;
    }
    return hit;
  };
  findRand = () => {
    let hit = 0;
    for (let i = 0; i < N; i++) {
      keyBytes(scatter(i));
      if (t.getBytes(kb, 0, 16) !== undefined) hit++;
    }
    return hit;
  };
}
for (const [name, fn] of [['insert', ins], ['lookup', find], ['lookup-rand', findRand]]) {
  gcMs = 0;
  gcMax = 0;
  gcN = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const n = fn();
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 50)); // let the gc observer report
  const cpu = process.cpuUsage(cpu0);
  const m = process.memoryUsage();
  console.log(
    `${which} ${name} N=${N} V=${V}: ${ms.toFixed(0)} ms (${((ms * 1e6) / N).toFixed(0)} ns/op), cpu ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, ` +
      `gc ${gcMs.toFixed(0)} ms in ${gcN} (max ${gcMax.toFixed(1)} ms), rss +${((m.rss - rss0) / 1048576).toFixed(0)} MB ` +
      `(${((m.rss - rss0) / N).toFixed(1)} B/key), heap ${(m.heapUsed / 1048576).toFixed(0)} MB, n=${n}`,
  );
}
