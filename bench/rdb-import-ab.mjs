// RDB import, two builds in process, alternated: one process per build per round (Node flags of
// `npm start`, bench/server-cmd.mjs), each importing the file once after a full GC. Prints the CPU
// of importRdb, then of the full GC the server runs before serving (collectAfterImport), per
// round and the medians; CPU (all threads), not wall: the machine is shared.
//   node bench/rdb-import-ab.mjs file.rdb [rounds] [buildA] [buildB]   (builds: base-dist dist)
//   RDB_AB_PARSE=5 ...: instead, the parse alone (parseRdb: read and check, nothing inserted),
//   5 times per process, the median's CPU (a change to the parse measured without the insert's noise).
//   RDB_AB_REPEAT=5 ...: instead, the whole import 5 times per process (the dbs flushed and a full
//   GC between), the median's CPU: the JIT warm, steadier than one cold import on a loaded machine.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import fs from 'node:fs';
import { NODE_FLAGS } from './server-cmd.mjs';

const [file, rounds = '3', A = 'base-dist', B = 'dist'] = process.argv.slice(2);
const self = fileURLToPath(import.meta.url);

if (process.env.RDB_AB_CHILD) {
  const { inProcess, cpuMicros } = await import('./inproc.mjs');
  const { DIST, engine } = await inProcess(process.env.RDB_AB_CHILD);
  const { importRdb, collectAfterImport } = await import(`${DIST}/rdb/cli.js`);
  if (process.env.RDB_AB_PARSE) {
    const { parseRdb } = await import(`${DIST}/rdb/file.js`);
    const { decodeLimits } = await import(`${DIST}/engine/commands/dump.js`);
    const fs = await import('node:fs');
    const bytes = fs.readFileSync(file);
    const times = [];
    for (let i = 0; i < Number(process.env.RDB_AB_PARSE); i++) {
      collectAfterImport();
      const c0 = cpuMicros();
      parseRdb(bytes, decodeLimits(engine), engine.dbs.length, Date.now());
      times.push((cpuMicros() - c0) / 1000);
    }
    times.sort((x, y) => x - y);
    console.log(JSON.stringify({ imp: times[times.length >> 1], gc: 0, heap: process.memoryUsage().heapUsed / 1e6 }));
    process.exit(0);
  }
  if (process.env.RDB_AB_REPEAT) {
    const times = [];
    for (let i = 0; i < Number(process.env.RDB_AB_REPEAT); i++) {
      for (const db of engine.dbs) db.flush();
      collectAfterImport();
      const c0 = cpuMicros();
      const m0 = mainMs();
      importRdb(engine, file);
      times.push([(cpuMicros() - c0) / 1000, mainMs() - m0]);
    }
    const mid = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
    console.log(JSON.stringify({ imp: mid(times.map((t) => t[0])), gc: 0, main: mid(times.map((t) => t[1])), heap: process.memoryUsage().heapUsed / 1e6 }));
    process.exit(0);
  }
  collectAfterImport();
  const c0 = cpuMicros();
  const m0 = mainMs();
  importRdb(engine, file);
  const c1 = cpuMicros();
  const m1 = mainMs();
  collectAfterImport();
  const c2 = cpuMicros();
  console.log(JSON.stringify({ imp: (c1 - c0) / 1000, gc: (c2 - c1) / 1000, main: m1 - m0, heap: process.memoryUsage().heapUsed / 1e6 }));
  process.exit(0);
}

/** CPU of this process's main thread so far (ms; /proc, 10 ms ticks): GC helper threads left out. */
function mainMs() {
  const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const w = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(w[11]) + Number(w[12])) * 10;
}

const runs = { [A]: [], [B]: [] };
const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
console.log(`# ${new Date().toISOString()} load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; ${file}; flags ${NODE_FLAGS.join(' ')}`);
for (let i = 0; i < Number(rounds); i++) {
  for (const d of [A, B]) {
    const out = execFileSync(process.execPath, [...NODE_FLAGS, self, file], { env: { ...process.env, RDB_AB_CHILD: d }, encoding: 'utf8', maxBuffer: 1 << 24 });
    const r = JSON.parse(out.trim().split('\n').pop());
    runs[d].push(r);
    console.log(`${d.padEnd(10)} import ${r.imp.toFixed(0).padStart(5)} ms (main thread ${(r.main ?? 0).toFixed(0).padStart(5)})  gc ${r.gc.toFixed(0).padStart(4)} ms  total ${(r.imp + r.gc).toFixed(0).padStart(5)} ms  heap ${r.heap.toFixed(0)} MB`);
  }
}
for (const d of [A, B]) {
  const rs = runs[d];
  console.log(`median ${d}: import ${median(rs.map((r) => r.imp)).toFixed(0)} (main thread ${median(rs.map((r) => r.main ?? 0)).toFixed(0)}), gc ${median(rs.map((r) => r.gc)).toFixed(0)}, total ${median(rs.map((r) => r.imp + r.gc)).toFixed(0)} ms CPU`);
}
console.log(`# load after ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
