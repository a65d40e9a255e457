#!/usr/bin/env node
/**
 * What an indexed write costs the engine thread now that the index lives in the search worker:
 * an in-process engine, JSON.SET of N documents in groups of 1000 (one turn of the event loop
 * each, as a pipeline), under a prefix no index covers and under an indexed one, alternated for
 * `BENCH_ROUNDS` rounds. Engine-thread CPU is this thread's utime+stime (/proc/self/task/<pid>);
 * the batch encoding alone (SearchRegistry.flush) is timed separately.
 *
 *   npm run build && BENCH_DOCS=100000 BENCH_ROUNDS=3 node bench/redis-search-feed.mjs
 */
import fs from 'node:fs';
import { inProcess } from './inproc.mjs';
import { words, CATEGORIES } from './corpus.mjs';

const N = Number(process.env.BENCH_DOCS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const { DIST, engine, client, execute, NULL_SINK, Argv } = await inProcess(process.env.BENCH_DIST); // another build: before/after
const { registryOf } = await import(`${DIST}/engine/search-index/registry.js`);

function mainCpuUs() {
  const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000; // clock ticks (USER_HZ 100) -> us
}
const run = (...args) => execute(client, Argv.of(args), NULL_SINK);
const turn = () => new Promise((r) => setImmediate(r));

run('SEARCH.CREATE', 'docs', 'ON', 'JSON', 'PREFIX', '1', 'doc:', 'SCHEMA', 'title', 'TEXT', 'body', 'TEXT', 'category', 'KEYWORD', 'price', 'U64', 'FAST');
const reg = registryOf(engine);
let flushUs = 0;
const flush = reg.flush.bind(reg);
reg.flush = () => { const t = performance.now(); flush(); flushUs += (performance.now() - t) * 1000; };
const docs = Array.from({ length: N }, (_, i) => JSON.stringify({ title: words(3), body: words(10), category: CATEGORIES[i % 10], price: i % 500 }));

async function writes(prefix) {
  flushUs = 0;
  const c0 = mainCpuUs();
  for (let i = 0; i < N; i += 1000) {
    for (let j = i; j < Math.min(N, i + 1000); j++) run('JSON.SET', `${prefix}${j}`, '$', docs[j]);
    await turn();
  }
  return { cpu: (mainCpuUs() - c0) / N, flush: flushUs / N };
}

const rows = [];
for (let r = 0; r < ROUNDS; r++) {
  const plain = await writes(`plain${r}:`);
  const indexed = await writes('doc:');
  rows.push([plain.cpu, indexed.cpu, indexed.flush]);
  console.log(`round ${r + 1}: plain ${plain.cpu.toFixed(2)} us, indexed ${indexed.cpu.toFixed(2)} us (ratio ${(indexed.cpu / plain.cpu).toFixed(2)}), of which batch encoding ${indexed.flush.toFixed(2)} us per write`);
}
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ratios = rows.map(([p, i]) => i / p);
console.log(`median: plain ${med(rows.map((x) => x[0])).toFixed(2)} us, indexed ${med(rows.map((x) => x[1])).toFixed(2)} us, ratio ${med(ratios).toFixed(2)}, encoding ${med(rows.map((x) => x[2])).toFixed(2)} us per write; load ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
run('SEARCH.WAITINDEXING', 'docs');

// The encoding alone, the worker idle: every document's record written into a batch, 10 times.
const { Batch } = await import(`${DIST}/engine/search-index/feed.js`);
const feed = reg.indexes.get('docs');
const db = engine.dbs[0];
const ents = Array.from({ length: N }, (_, i) => [`doc:${i}`, db.peek(`doc:${i}`)]);
const b = new Batch();
const enc = [];
for (let r = 0; r < 10; r++) {
  const u = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    feed.encode(ents[i][0], ents[i][1], 0, b);
    if (b.n > 1 << 20) b.n = 0;
  }
  const d = process.cpuUsage(u);
  enc.push((d.user + d.system) / N);
}
console.log(`encoding alone: ${enc.map((x) => x.toFixed(2)).join(' ')} us per document (median ${med(enc).toFixed(2)}, min ${Math.min(...enc).toFixed(2)})`);
process.exit(0);
