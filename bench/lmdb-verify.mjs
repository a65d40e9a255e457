// The start-up check of LMDB files (src/store/lmdb-verify.ts) against the alternative, reading
// every record in a child process (src/store/lmdb-walk.ts), on data directories of N small keys
// laid out as the store does (named databases meta/items/gc/sys, overlapping sync), plus a few
// big values (overflow pages).
//
//   node bench/lmdb-verify.mjs [keys...]      (default 100000 1000000)
//   ORDER=seq node bench/lmdb-verify.mjs ...    keys written in key order (full pages; much
//                                                quicker to build 10,000,000 keys)
//   CHILD=0 ...                                  without the child walk (its column shows -)
//
// Prints per size: the file size, the check's wall and CPU time (median of 3, alternating with
// the child walk), MB/s, and the child walk's wall time. Warm page cache (the file was just
// written or read): a cold cache adds the disk's sequential read time to both.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { verifyLmdb } from '../dist/store/lmdb-verify.js';
import { walkInChild } from '../dist/store/lmdb-walk.js';

const sizes = process.argv.slice(2).map(Number);
const ORDER = process.env.ORDER === 'seq' ? 'seq' : 'random';
if (sizes.length === 0) sizes.push(100_000, 1_000_000);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-verify-bench-'));

function build(dir, n) {
  const env = open({ path: dir, maxDbs: 8, overlappingSync: true, eventTurnBatching: false, encoding: 'binary', keyEncoding: 'binary' });
  const meta = env.openDB('meta', { encoding: 'binary', keyEncoding: 'binary' });
  const items = env.openDB('items', { encoding: 'binary', keyEncoding: 'binary' });
  const sys = env.openDB('sys', { encoding: 'msgpack' });
  const STEP = ORDER === 'seq' ? 1_000_000 : 100_000;
  for (let i = 0; i < n; i += STEP) {
    env.transactionSync(() => {
      for (let j = i; j < Math.min(n, i + STEP); j++) {
        // Random-ish order, as keys arrive: pages about 70% full, like a real store.
        const k = ORDER === 'seq' ? j : (j * 2654435761) % 4294967296;
        const key = Buffer.alloc(6 + 12);
        key.writeUIntBE(1, 0, 6);
        key.write(`key:${k.toString(16).padStart(8, '0')}`, 6, 'latin1');
        meta.putSync(key, Buffer.from(`\x00value-${j}`));
      }
    });
  }
  env.transactionSync(() => {
    for (let b = 0; b < 20; b++) items.putSync(Buffer.from(`big:${b}`), Buffer.alloc(64 * 1024 + b * 1000, b));
    sys.putSync('journalSeq', n);
  });
  return env.close();
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, ${os.cpus().length} CPUs, keys written in ${ORDER} order`);
console.log('| keys | file MB | pages checked | verify wall ms | verify CPU ms | MB/s (file/wall) | child walk wall ms |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const n of sizes) {
  const dir = path.join(root, String(n));
  fs.mkdirSync(dir);
  await build(dir, n);
  const file = path.join(dir, 'data.mdb');
  const mb = fs.statSync(file).size / 1048576;
  const wall = [];
  const cpu = [];
  const child = [];
  let stats;
  for (let round = 0; round < 3; round++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    stats = verifyLmdb(file);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    if (process.env.CHILD === '0') continue;
    const t1 = performance.now();
    const r = walkInChild([dir]);
    if (r.failed !== null) throw new Error(r.failed.why);
    child.push(performance.now() - t1);
  }
  const w = median(wall);
  console.log(`| ${n} | ${mb.toFixed(1)} | ${stats.pages} | ${w.toFixed(0)} | ${median(cpu).toFixed(0)} | ${(mb / (w / 1000)).toFixed(0)} | ${child.length > 0 ? median(child).toFixed(0) : '-'} |`);
  fs.rmSync(dir, { recursive: true, force: true });
}
fs.rmSync(root, { recursive: true, force: true });
