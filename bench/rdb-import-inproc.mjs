// In-process RDB import (no server, no persistence): time, CPU and GC of importRdb on a file.
//   node [--cpu-prof] bench/rdb-import-inproc.mjs file.rdb [rounds]
// What it times is importRdb: read the file, parse and validate it, insert every key.
import { PerformanceObserver } from 'node:perf_hooks';
import { inProcess, cpuMicros } from './inproc.mjs';

const file = process.argv[2];
const rounds = Number(process.argv[3] ?? 1);
const { DIST, engine } = await inProcess(process.env.DIST);
const { importRdb } = await import(`${DIST}/rdb/cli.js`);
let gcMs = 0;
new PerformanceObserver((l) => { for (const e of l.getEntries()) gcMs += e.duration; }).observe({ entryTypes: ['gc'] });
for (let i = 0; i < rounds; i++) {
  for (const db of engine.dbs) db.flush?.();
  gcMs = 0;
  const c0 = cpuMicros();
  const t0 = performance.now();
  const line = importRdb(engine, file);
  const wall = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 10));
  console.log(`${line}\n  wall ${wall.toFixed(0)} ms, cpu ${((cpuMicros() - c0) / 1000).toFixed(0)} ms, gc ${gcMs.toFixed(0)} ms, heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`);
}
