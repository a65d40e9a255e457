#!/usr/bin/env node
/**
 * Search benchmark (npm run bench:search): against dist/main.js on free ports,
 *   1. index 100,000 small documents through the data plane (batches of 1000) -> documents/s,
 *      then the first query (each worker builds its in-memory text index from LMDB);
 *   2. query throughput and p50/p99 latency with autocannon for single-word, multi-word and
 *      filtered queries;
 *   3. the p99 latency of Redis GETs (one RESP connection, back-to-back) without search load,
 *      then while the filtered query load runs;
 *   4. the same documents as Redis Search (SEARCH.*) JSON keys: loading and indexing them, then
 *      sequential p50/p99 (one client) of a selective filter and a full-text query, SEARCH.QUERY
 *      over REST and over RESP next to the /v2/search data plane (same client loop, same HTTP),
 *      after one warm-up pass, the three alternating query by query.
 *      bench/redis-search.mjs (npm run bench:redis-search) has the write-cost figures.
 *
 *   BENCH_DOCS=100000 BENCH_DURATION=10 BENCH_CONNECTIONS=16 npm run bench:search
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { oursArgv } from './server-cmd.mjs';
import { freePort, rnd, VOCAB, words, CATEGORIES } from './corpus.mjs';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOCS = Number(process.env.BENCH_DOCS ?? 100_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const EMAIL = 'bench@example.com';
const KEY = 'bench-key';
const BASIC = 'Basic ' + Buffer.from(`${EMAIL}:${KEY}`).toString('base64');
const REST_TOKEN = 'bench-rest-token';
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);


function makeDoc(i) {
  return { id: `d${i}`, content: { title: words(3), body: words(10) }, metadata: { category: CATEGORIES[i % 10], price: i % 500 } };
}

async function post(url, body, auth) {
  const res = await fetch(url, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Back-to-back GETs on one RESP connection for `ms`; returns sorted latencies (ms). */
function redisGets(port, ms) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const lat = [];
    const end = performance.now() + ms;
    let t0 = 0;
    let buf = '';
    const send = () => { t0 = performance.now(); sock.write('*2\r\n$3\r\nGET\r\n$5\r\nbench\r\n'); };
    sock.on('connect', send);
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      // a whole reply: "$-1\r\n" or "$<n>\r\n<n bytes>\r\n"
      if (!buf.endsWith('\r\n') || (buf.startsWith('$') && !buf.startsWith('$-1') && buf.split('\r\n').length < 3)) return;
      lat.push(performance.now() - t0);
      buf = '';
      if (performance.now() < end) send(); else { sock.end(); resolve(lat.sort((a, b) => a - b)); }
    });
    sock.on('error', reject);
  });
}

const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.ceil(xs.length * p) - 1)];

async function cannon(url, token, bodies, duration = DURATION) {
  const r = await autocannon({
    url, connections: CONNECTIONS, duration,
    requests: bodies.map((b) => ({ method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(b) })),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

async function main() {
  const port = await freePort();
  const httpPort = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-search-'));
  const unlimited = 'max_vector_count=-1,max_writes_per_second=-1,max_query_per_second=-1,max_writes_per_request=-1,max_reads_per_request=-1';
  const srv = spawn(process.execPath, oursArgv(['--port', String(port), '--http-port', String(httpPort), '--dir', dir,
    '--account-email', EMAIL, '--api-key', KEY, '--token', REST_TOKEN, '--search-plan-payg', unlimited, '--appendfsync', 'no']), { stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    const base = `http://127.0.0.1:${httpPort}`;
    for (let i = 0; ; i++) {
      try { await fetch(`${base}/v2/search`, { headers: { authorization: BASIC } }); break; } catch { if (i > 200) throw new Error('server did not start'); await new Promise((r) => setTimeout(r, 50)); }
    }
    const idx = await post(`${base}/v2/search`, { name: 'bench', region: 'eu-west-1', type: 'payg' }, BASIC);
    const ep = idx.endpoint;
    const auth = `Bearer ${idx.token}`;
    console.log(`search benchmark: ${DOCS} documents, ${CONNECTIONS} connections, ${DURATION}s per run, ${os.cpus().length} CPUs, node ${process.version}`);

    // 1. indexing
    let t = performance.now();
    const BATCH = 1000;
    for (let s = 0; s < DOCS; s += BATCH) {
      const batch = [];
      for (let i = s; i < Math.min(DOCS, s + BATCH); i++) batch.push(makeDoc(i));
      await post(`${ep}/upsert-data/docs`, batch, auth);
    }
    const writeS = (performance.now() - t) / 1000;
    t = performance.now();
    await post(`${ep}/search/docs`, { query: VOCAB[0], topK: 5 }, auth);
    const firstQ = performance.now() - t;
    // warm every worker's text index
    await Promise.all(Array.from({ length: 8 }, () => post(`${ep}/search/docs`, { query: VOCAB[1], topK: 5 }, auth)));
    const warmS = (performance.now() - t) / 1000;
    console.log(`indexing: ${DOCS} documents stored in ${writeS.toFixed(2)} s = ${Math.round(DOCS / writeS)} documents/s`);
    console.log(`first query (builds the in-memory text index in a worker): ${firstQ.toFixed(0)} ms; all workers warm after ${warmS.toFixed(2)} s`);
    console.log(`end to end (stored and searchable in every worker): ${Math.round(DOCS / (writeS + warmS))} documents/s`);

    // 2. query load
    const pick = (k) => Array.from({ length: k }, () => VOCAB[Math.floor(VOCAB.length * rnd() ** 2)]);
    const shapes = {
      'single-word': Array.from({ length: 20 }, () => ({ query: pick(1)[0], topK: 10 })),
      'multi-word': Array.from({ length: 20 }, () => ({ query: pick(3).join(' '), topK: 10 })),
      filtered: Array.from({ length: 20 }, (_, i) => ({ query: pick(2).join(' '), topK: 10, filter: `@metadata.category = '${CATEGORIES[i % 10]}' AND @metadata.price < 250` })),
    };
    const rows = [];
    for (const [name, bodies] of Object.entries(shapes)) {
      const r = await cannon(`${ep}/search/docs`, idx.token, bodies);
      rows.push([name, r]);
      console.log(`${name.padEnd(12)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   errors ${r.errors}`);
    }

    // 3. Redis GET latency with and without search load
    await new Promise((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1', () => c.write('*3\r\n$3\r\nSET\r\n$5\r\nbench\r\n$5\r\nvalue\r\n'));
      c.once('data', () => { c.end(); resolve(); });
      c.on('error', reject);
    });
    const idle = await redisGets(port, 3000);
    const loaded = redisGets(port, Math.max(1000, (DURATION - 1) * 1000));
    const during = cannon(`${ep}/search/docs`, idx.token, shapes.filtered);
    const [busy, load] = await Promise.all([loaded, during]);
    console.log(`Redis GET p50/p99 without search load: ${pct(idle, 0.5).toFixed(3)} / ${pct(idle, 0.99).toFixed(3)} ms (${idle.length} GETs)`);
    console.log(`Redis GET p50/p99 during filtered query load (${load.rps.toFixed(0)} req/s): ${pct(busy, 0.5).toFixed(3)} / ${pct(busy, 0.99).toFixed(3)} ms (${busy.length} GETs)`);

    // 4. Redis Search (SEARCH.*) on the same documents, against the /v2/search data plane
    await redisSearch(port, base, ep, idx.token);
  } finally {
    srv.kill('SIGTERM');
    await new Promise((r) => srv.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Sequential latencies (ms, sorted) of `n` calls of `f(i)`. */
async function redisSearch(port, base, ep, token) {
  const io = new Redis({ port, host: '127.0.0.1' });
  try {
    await io.call('SEARCH.CREATE', 'rsbench', 'ON', 'JSON', 'PREFIX', '1', 'rs:', 'SCHEMA', 'title', 'TEXT', 'body', 'TEXT', 'category', 'KEYWORD', 'price', 'U64', 'FAST');
    let t = performance.now();
    for (let s = 0; s < DOCS; s += 1000) {
      const p = io.pipeline();
      for (let i = s; i < Math.min(DOCS, s + 1000); i++) {
        const d = makeDoc(i);
        p.call('JSON.SET', `rs:${d.id}`, '$', JSON.stringify({ ...d.content, ...d.metadata }));
      }
      await p.exec();
    }
    const writeS = (performance.now() - t) / 1000;
    t = performance.now();
    await io.call('SEARCH.WAITINDEXING', 'rsbench');
    const waitS = (performance.now() - t) / 1000;
    console.log(`Redis Search: ${DOCS} JSON.SET (pipelined, one connection) in ${writeS.toFixed(2)} s, SEARCH.WAITINDEXING ${waitS.toFixed(2)} s after: ${Math.round(DOCS / (writeS + waitS))} documents/s stored and searchable`);
    const rest = async (cmd) => {
      const res = await fetch(base, { method: 'POST', headers: { authorization: `Bearer ${REST_TOKEN}` }, body: JSON.stringify(cmd) });
      const j = await res.json();
      if (!res.ok || j.error) throw new Error(`REST ${cmd[0]}: ${JSON.stringify(j)}`);
      return j.result;
    };
    const v2 = (body) => post(`${ep}/search/docs`, body, `Bearer ${token}`);
    const w = (i) => VOCAB[(i * 7) % 300];
    const cases = {
      'selective filter (category = c AND price < 5), 10 results': {
        v2: (i) => v2({ query: '', topK: 10, filter: `@metadata.category = '${CATEGORIES[i % 10]}' AND @metadata.price < 5` }),
        search: (i) => ['SEARCH.QUERY', 'rsbench', JSON.stringify({ category: CATEGORIES[i % 10], price: { $lt: 5 } }), 'LIMIT', '10'],
      },
      'full-text, 1 word, 10 results': {
        v2: (i) => v2({ query: w(i), topK: 10 }),
        search: (i) => ['SEARCH.QUERY', 'rsbench', JSON.stringify({ $should: [{ title: w(i) }, { body: w(i) }] }), 'LIMIT', '10'],
      },
    };
    for (const [name, c] of Object.entries(cases)) {
      // Warm first (SEARCH.* caches its vocabulary expansions per word: whichever transport
      // ran first paid them all), then the three alternate query by query.
      for (let i = 0; i < QUERIES; i++) { await c.v2(i); await io.call(...c.search(i)); }
      const a = [];
      const b = [];
      const r = [];
      for (let i = 0; i < QUERIES; i++) {
        let t0 = performance.now();
        await c.v2(i);
        a.push(performance.now() - t0);
        t0 = performance.now();
        await rest(c.search(i));
        b.push(performance.now() - t0);
        t0 = performance.now();
        await io.call(...c.search(i));
        r.push(performance.now() - t0);
      }
      for (const xs of [a, b, r]) xs.sort((x, y) => x - y);
      console.log(`${name}:`);
      console.log(`  /v2/search (HTTP)        p50 ${pct(a, 0.5).toFixed(2)} ms   p99 ${pct(a, 0.99).toFixed(2)} ms`);
      console.log(`  SEARCH.QUERY over REST   p50 ${pct(b, 0.5).toFixed(2)} ms   p99 ${pct(b, 0.99).toFixed(2)} ms`);
      console.log(`  SEARCH.QUERY over RESP   p50 ${pct(r, 0.5).toFixed(2)} ms   p99 ${pct(r, 0.99).toFixed(2)} ms`);
    }
  } finally {
    io.disconnect();
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1; });
