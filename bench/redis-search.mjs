#!/usr/bin/env node
/**
 * Redis Search (SEARCH.*) benchmark: against dist/main.js on free ports, one RESP connection.
 *   1. write cost: pipelined JSON.SET of N documents under a prefix no index covers, then under
 *      an indexed prefix: wall time and server CPU (utime+stime from /proc) per write;
 *   2. catching up: SEARCH.WAITINDEXING after those writes (the batched indexing work);
 *   3. query latency p50/p99 (sequential, one connection): a selective filter, a single-word
 *      full-text query, a two-word full-text query, COUNT of a range; with the CPU per request
 *      of the engine thread and of the whole process (the queries run in the search worker).
 *
 *   BENCH_DOCS=100000 BENCH_QUERIES=200 node bench/redis-search.mjs
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { oursArgv } from './server-cmd.mjs';
import { freePort, VOCAB, words, CATEGORIES } from './corpus.mjs';

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);

const doc = (i) => JSON.stringify({ title: words(3), body: words(10), category: CATEGORIES[i % 10], price: i % 500 });

/** CPU ms (utime+stime) of the whole process, or with `thread` of its main (engine) thread only. */
function cpuMs(pid, thread = false) {
  const file = thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
  const f = fs.readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 1000 / 100; // clock ticks (USER_HZ 100) -> ms
}

const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** Pipelined JSON.SET of every document, then (`index`) SEARCH.WAITINDEXING: the indexing work is counted too. */
async function writes(io, pid, prefix, index) {
  const t0 = performance.now();
  const c0 = cpuMs(pid);
  const m0 = cpuMs(pid, true);
  for (let i = 0; i < DOCS; i += 1000) {
    const p = io.pipeline();
    for (let j = i; j < Math.min(DOCS, i + 1000); j++) p.call('JSON.SET', `${prefix}${j}`, '$', doc(j));
    await p.exec();
  }
  const w = { wall: performance.now() - t0, cpu: cpuMs(pid) - c0, main: cpuMs(pid, true) - m0 };
  if (index !== undefined) {
    const t1 = performance.now();
    await io.call('SEARCH.WAITINDEXING', index);
    w.catchUp = performance.now() - t1;
    w.wallAll = performance.now() - t0;
    w.cpuAll = cpuMs(pid) - c0;
    w.mainAll = cpuMs(pid, true) - m0;
  }
  return w;
}

/** Sequential requests: sorted latencies, and the engine thread's and the process's CPU per request (ms). */
async function latency(io, pid, args) {
  const xs = [];
  const m0 = cpuMs(pid, true);
  const c0 = cpuMs(pid);
  for (let i = 0; i < QUERIES; i++) {
    const a = typeof args === 'function' ? args(i) : args;
    const t = performance.now();
    await io.call(...a);
    xs.push(performance.now() - t);
  }
  xs.sort((a, b) => a - b);
  xs.main = (cpuMs(pid, true) - m0) / QUERIES;
  xs.cpu = (cpuMs(pid) - c0) / QUERIES;
  return xs;
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-rsearch-'));
  const port = await freePort();
  const extra = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean); // e.g. --cpu-prof --cpu-prof-dir=/tmp/prof
  const srv = spawn(process.execPath, [...extra, ...oursArgv(['--port', String(port), '--http-port', '-1', '--dir', dir, '--appendfsync', 'no'])], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => srv.stdout.on('data', (b) => { if (String(b).includes('Ready')) resolve(); }));
  const io = new Redis({ port, host: '127.0.0.1' });
  try {
    await io.call('SEARCH.CREATE', 'docs', 'ON', 'JSON', 'PREFIX', '1', 'doc:', 'SCHEMA', 'title', 'TEXT', 'body', 'TEXT', 'category', 'KEYWORD', 'price', 'U64', 'FAST');
    const us = (ms) => (ms / DOCS * 1000).toFixed(1);
    const plain = await writes(io, srv.pid, 'plain:');
    const indexed = await writes(io, srv.pid, 'doc:', 'docs');
    console.log(`${DOCS} JSON.SET, no index on the prefix: ${us(plain.wall)} us wall, ${us(plain.cpu)} us process CPU, ${us(plain.main)} us engine-thread CPU per write`);
    console.log(`${DOCS} JSON.SET, indexed prefix:        ${us(indexed.wall)} us wall, ${us(indexed.cpu)} us process CPU, ${us(indexed.main)} us engine-thread CPU per write (engine-thread ratio ${(indexed.main / plain.main).toFixed(2)})`);
    console.log(`  with SEARCH.WAITINDEXING after them:  ${us(indexed.wallAll)} us wall, ${us(indexed.cpuAll)} us process CPU, ${us(indexed.mainAll)} us engine-thread CPU per write (engine-thread ratio ${(indexed.mainAll / plain.main).toFixed(2)}; the wait alone ${indexed.catchUp.toFixed(0)} ms)`);
    const shapes = {
      'selective filter': (i) => ['SEARCH.QUERY', 'docs', JSON.stringify({ category: CATEGORIES[i % 10], price: { $lt: 5 } }), 'LIMIT', '10'],
      'full-text 1 word': (i) => ['SEARCH.QUERY', 'docs', JSON.stringify({ body: VOCAB[(i * 7) % 300] }), 'LIMIT', '10', 'NOCONTENT'],
      'full-text 2 words': (i) => ['SEARCH.QUERY', 'docs', JSON.stringify({ title: `${VOCAB[i % 300]} ${VOCAB[(i * 13) % 300]}` }), 'LIMIT', '10', 'NOCONTENT'],
      'count range': (i) => ['SEARCH.COUNT', 'docs', JSON.stringify({ price: { $gte: i % 400, $lt: (i % 400) + 50 } })],
    };
    for (const [name, f] of Object.entries(shapes)) {
      const xs = await latency(io, srv.pid, f);
      console.log(`${name.padEnd(18)} p50 ${pct(xs, 0.5).toFixed(2).padStart(7)} ms   p99 ${pct(xs, 0.99).toFixed(2).padStart(7)} ms   CPU per request: engine thread ${xs.main.toFixed(2)} ms, process ${xs.cpu.toFixed(2)} ms`);
    }
  } finally {
    io.disconnect();
    srv.kill('SIGTERM');
    await new Promise((r) => srv.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1; });
