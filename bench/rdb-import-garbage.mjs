// Bytes allocated and kept per key by an in-process RDB import (no server, no persistence).
//   node --expose-gc --max-semi-space-size=1024 bench/rdb-import-garbage.mjs file.rdb
// With a young generation bigger than what the import allocates, no collection runs during it
// (checked: the gc count), so heapUsed after the import minus before is every byte allocated;
// what a full collection leaves is what the keys keep.
import { PerformanceObserver } from 'node:perf_hooks';
import { inProcess } from './inproc.mjs';

const file = process.argv[2];
const { DIST, engine } = await inProcess(process.env.DIST);
const { importRdb } = await import(`${DIST}/rdb/cli.js`);
let gcs = 0;
new PerformanceObserver((l) => { gcs += l.getEntries().length; }).observe({ entryTypes: ['gc'] });
globalThis.gc();
await new Promise((r) => setTimeout(r, 10));
const h0 = process.memoryUsage().heapUsed;
gcs = 0;
const line = importRdb(engine, file);
const h1 = process.memoryUsage().heapUsed;
const during = gcs;
globalThis.gc();
const h2 = process.memoryUsage().heapUsed;
const keys = Number(/Imported (\d+) keys/.exec(line)[1]);
console.log(`${keys} keys: allocated ${((h1 - h0) / keys).toFixed(0)} B/key, kept ${((h2 - h0) / keys).toFixed(0)} B/key, garbage ${((h1 - h2) / keys).toFixed(0)} B/key (collections during the import: ${during})`);
