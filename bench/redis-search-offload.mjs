#!/usr/bin/env node
/**
 * What keeping SEARCH.* indexes in a worker costs. Measures, on one in-memory SEARCH.* index of
 * N JSON documents (the shape of bench/redis-search.mjs):
 *   - query time (evaluate + rank) of the benchmark's query shapes, in this thread;
 *   - ways to ship documents to a worker, on the sending thread: a snapshot of the index's
 *     documents (v8.serialize, what postMessage does), one changed document's values by
 *     v8.serialize per document (what the first measurement did), and the compact encoding the
 *     engine now uses (feed.ts: the raw leaves appended to one batch buffer per turn);
 *   - indexing one document (what the worker does per changed document);
 *   - a piscina round trip of an empty task (the floor of any query sent to a pool).
 *
 *   npm run build && BENCH_DOCS=100000 node bench/redis-search-offload.mjs
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { Piscina } from 'piscina';
import { SearchIndex } from '../dist/engine/search-index/index.js';
import { Batch, writeLeaves } from '../dist/engine/search-index/feed.js';
import { evaluate, parseQuery, countMatches } from '../dist/engine/search-index/query.js';
import { words, VOCAB, CATEGORIES } from './corpus.mjs';

const N = Number(process.env.BENCH_DOCS ?? 100_000);
const Q = Number(process.env.BENCH_QUERIES ?? 200);
const f = (name, type, fast = false) => ({ name, type, fast, noStem: false, noTokenize: false, from: null });
const def = { name: 'docs', on: 'STRING', prefixes: ['doc:'], language: 'english', db: 0, fields: [f('title', 'TEXT'), f('body', 'TEXT'), f('category', 'KEYWORD'), f('price', 'U64', true)] };
/** The raw leaves of a document per schema field (what the worker receives). */
const leavesOf = (i) => [[words(3)], [words(10)], [CATEGORIES[i % 10]], [i % 500]];
const pct = (xs, p) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

const idx = new SearchIndex(def);
const ents = Array.from({ length: N }, (_, i) => leavesOf(i));
let t = performance.now();
for (let i = 0; i < N; i++) idx.putLeaves(`doc:${i}`, ents[i], 0);
const indexUs = (performance.now() - t) / N * 1000;

const shapes = {
  'selective filter': (i) => ({ category: CATEGORIES[i % 10], price: { $lt: 5 } }),
  'full-text 1 word': (i) => ({ body: VOCAB[(i * 7) % 300] }),
  'full-text 2 words': (i) => ({ title: `${VOCAB[i % 300]} ${VOCAB[(i * 13) % 300]}` }),
};
const lines = [];
for (const [name, q] of Object.entries(shapes)) {
  const xs = [];
  for (let i = 0; i < Q; i++) { const s = performance.now(); evaluate(parseQuery(JSON.stringify(q(i)), idx), idx); xs.push(performance.now() - s); }
  lines.push(`in-thread ${name.padEnd(18)} evaluate p50 ${pct(xs, 0.5).toFixed(2)} ms, p99 ${pct(xs, 0.99).toFixed(2)} ms`);
}
{
  const xs = [];
  for (let i = 0; i < Q; i++) { const s = performance.now(); countMatches(parseQuery(JSON.stringify({ price: { $gte: i % 400, $lt: (i % 400) + 50 } }), idx), idx); xs.push(performance.now() - s); }
  lines.push(`in-thread count range         p50 ${pct(xs, 0.5).toFixed(2)} ms, p99 ${pct(xs, 0.99).toFixed(2)} ms`);
}

t = performance.now();
const snap = v8.serialize({ keys: idx.keyAt, vals: idx.recAt.map((r) => r?.vals) });
const snapMs = performance.now() - t;
t = performance.now();
let bytes = 0;
for (let i = 0; i < N; i++) bytes += v8.serialize([idx.keyAt[i], idx.recAt[i].vals]).length;
const shipUs = (performance.now() - t) / N * 1000;
// The compact encoding: key and raw leaves appended to one buffer (posted once per turn).
const batch = new Batch();
t = performance.now();
let cbytes = 0;
for (let i = 0; i < N; i++) {
  batch.u8(1); batch.u32(1); batch.text(`doc:${i}`, 'latin1'); batch.f64(0); batch.u32(4);
  for (const ls of ents[i]) writeLeaves(ls, batch);
  if (batch.n > 1 << 20) { cbytes += batch.n; batch.n = 0; }
}
cbytes += batch.n;
const compactUs = (performance.now() - t) / N * 1000;

const noop = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-offload-')), 'noop.mjs');
fs.writeFileSync(noop, 'export default () => 0;\n');
const pool = new Piscina({ filename: noop, maxThreads: 1, minThreads: 1 });
await pool.run(null);
const rt = [];
for (let i = 0; i < Q; i++) { const s = performance.now(); await pool.run(null); rt.push(performance.now() - s); }
await pool.destroy();
fs.rmSync(path.dirname(noop), { recursive: true, force: true });

console.log(`${N} documents; in-thread indexing ${indexUs.toFixed(1)} us per document`);
for (const l of lines) console.log(l);
console.log(`snapshot of the documents for a worker: ${(snap.length / 1e6).toFixed(1)} MB, ${snapMs.toFixed(0)} ms to serialize on the engine thread (the worker then re-indexes all of them)`);
console.log(`shipping one changed document to a worker, v8.serialize per document: ${shipUs.toFixed(1)} us on the engine thread, ${(bytes / N).toFixed(0)} bytes`);
console.log(`shipping one changed document to a worker, compact batch encoding: ${compactUs.toFixed(2)} us on the engine thread, ${(cbytes / N).toFixed(0)} bytes`);
console.log(`piscina round trip of an empty task: p50 ${pct(rt, 0.5).toFixed(3)} ms, p99 ${pct(rt, 0.99).toFixed(3)} ms`);
