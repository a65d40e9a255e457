#!/usr/bin/env node
/**
 * Redis Search (SEARCH.*) benchmark: against dist/main.js on free ports, one RESP connection.
 *   1. write cost: pipelined JSON.SET of N documents under a prefix no index covers, then under
 *      an indexed prefix: wall time and server CPU (utime+stime from /proc) per write;
 *   2. catching up: SEARCH.WAITINDEXING after those writes (the batched indexing work);
 *   3. query latency p50/p99 (sequential, one connection): a selective filter, a single-word
 *      full-text query, a two-word full-text query, COUNT of a range.
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

function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 1000 / 100; // clock ticks (USER_HZ 100) -> ms
}

const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function writes(io, pid, prefix) {
  const t0 = performance.now();
  const c0 = cpuMs(pid);
  for (let i = 0; i < DOCS; i += 1000) {
    const p = io.pipeline();
    for (let j = i; j < Math.min(DOCS, i + 1000); j++) p.call('JSON.SET', `${prefix}${j}`, '$', doc(j));
    await p.exec();
  }
  return { wall: performance.now() - t0, cpu: cpuMs(pid) - c0 };
}

async function latency(io, args) {
  const xs = [];
  for (let i = 0; i < QUERIES; i++) {
    const a = typeof args === 'function' ? args(i) : args;
    const t = performance.now();
    await io.call(...a);
    xs.push(performance.now() - t);
  }
  return xs.sort((a, b) => a - b);
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-rsearch-'));
  const port = await freePort();
  const srv = spawn(process.execPath, oursArgv(['--port', String(port), '--http-port', '-1', '--dir', dir, '--appendfsync', 'no']), { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => srv.stdout.on('data', (b) => { if (String(b).includes('Ready')) resolve(); }));
  const io = new Redis({ port, host: '127.0.0.1' });
  try {
    await io.call('SEARCH.CREATE', 'docs', 'ON', 'JSON', 'PREFIX', '1', 'doc:', 'SCHEMA', 'title', 'TEXT', 'body', 'TEXT', 'category', 'KEYWORD', 'price', 'U64', 'FAST');
    const plain = await writes(io, srv.pid, 'plain:');
    const indexed = await writes(io, srv.pid, 'doc:');
    const t = performance.now();
    await io.call('SEARCH.WAITINDEXING', 'docs');
    const catchUp = performance.now() - t;
    console.log(`${DOCS} JSON.SET, no index on the prefix: ${(plain.wall / DOCS * 1000).toFixed(1)} us wall, ${(plain.cpu / DOCS * 1000).toFixed(1)} us server CPU per write`);
    console.log(`${DOCS} JSON.SET, indexed prefix:        ${(indexed.wall / DOCS * 1000).toFixed(1)} us wall, ${(indexed.cpu / DOCS * 1000).toFixed(1)} us server CPU per write (ratio ${(indexed.cpu / plain.cpu).toFixed(2)})`);
    console.log(`SEARCH.WAITINDEXING after them (the batched indexing): ${catchUp.toFixed(0)} ms (${(catchUp / DOCS * 1000).toFixed(1)} us per document)`);
    const shapes = {
      'selective filter': (i) => ['SEARCH.QUERY', 'docs', JSON.stringify({ category: CATEGORIES[i % 10], price: { $lt: 5 } }), 'LIMIT', '10'],
      'full-text 1 word': (i) => ['SEARCH.QUERY', 'docs', JSON.stringify({ body: VOCAB[(i * 7) % 300] }), 'LIMIT', '10', 'NOCONTENT'],
      'full-text 2 words': (i) => ['SEARCH.QUERY', 'docs', JSON.stringify({ title: `${VOCAB[i % 300]} ${VOCAB[(i * 13) % 300]}` }), 'LIMIT', '10', 'NOCONTENT'],
      'count range': (i) => ['SEARCH.COUNT', 'docs', JSON.stringify({ price: { $gte: i % 400, $lt: (i % 400) + 50 } })],
    };
    for (const [name, f] of Object.entries(shapes)) {
      const xs = await latency(io, f);
      console.log(`${name.padEnd(18)} p50 ${pct(xs, 0.5).toFixed(2).padStart(7)} ms   p99 ${pct(xs, 0.99).toFixed(2).padStart(7)} ms`);
    }
  } finally {
    io.disconnect();
    srv.kill('SIGTERM');
    await new Promise((r) => srv.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1; });
