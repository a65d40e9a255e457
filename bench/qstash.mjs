#!/usr/bin/env node
/**
 * QStash end-to-end benchmark: our server (dist/main.js, fresh data dir) delivering to a local
 * node:http endpoint on 127.0.0.1.
 *   single  N messages published one per request (POST /v2/publish/<url>, C in flight)
 *   batch   N messages published as POST /v2/batch of 100
 * For each: publish rate (accepted messages/s), end-to-end rate (delivered messages/s from the
 * first publish to the last delivery), p50/p99 delay from publish request start to delivery at
 * the endpoint. Then the p99 latency of sequential Redis GETs (ioredis, one connection) while a
 * single-publish load runs, against the p99 of the same GETs on the idle server.
 *
 *   npm run bench:qstash
 *   BENCH_N=5000 BENCH_C=50 node bench/qstash.mjs
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { oursArgv } from './server-cmd.mjs';
import Redis from 'ioredis';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.BENCH_N ?? 3000);
const C = Number(process.env.BENCH_C ?? 32);
const TOKEN = 'bench-qstash';

const freePort = () => new Promise((res) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-qstash-'));
  const port = await freePort();
  const httpPort = await freePort();
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const proc = spawn(process.execPath, [...nodeArgs, ...oursArgv(['--port', String(port), '--http-port', String(httpPort), '--dir', dir, '--qstash-token', TOKEN])], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise((r) => { const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); }); s.on('error', () => r(false)); });
    if (ok) break;
    await sleep(50);
  }
  // The endpoint: records the delay of each delivery (the body carries the publish time).
  let delivered = 0;
  let lastAt = 0;
  let delays = [];
  let target = 0;
  let done = () => {};
  const ep = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c) => { b += c; });
    req.on('end', () => {
      const now = performance.now();
      delays.push(now - Number(b));
      delivered++;
      lastAt = now;
      res.writeHead(200);
      res.end();
      if (delivered === target) done();
    });
  });
  ep.keepAliveTimeout = 60_000;
  await new Promise((r) => ep.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${ep.address().port}/hook`;
  const base = `http://127.0.0.1:${httpPort}/v2`;
  const auth = { authorization: `Bearer ${TOKEN}` };

  async function run(kind, n) {
    delivered = 0; delays = []; target = n;
    const all = new Promise((r) => { done = r; });
    const t0 = performance.now();
    let next = 0;
    if (kind === 'single') {
      await Promise.all(Array.from({ length: C }, async () => {
        while (next < n) {
          next++;
          const r = await fetch(`${base}/publish/${url}`, { method: 'POST', headers: auth, body: String(performance.now()) });
          if (r.status >= 300) throw new Error(`publish: ${r.status} ${await r.text()}`);
          await r.arrayBuffer();
        }
      }));
    } else {
      const batches = Math.ceil(n / 100);
      await Promise.all(Array.from({ length: Math.min(C, 4) }, async () => {
        while (next < batches) {
          next++;
          const t = String(performance.now());
          const items = Array.from({ length: 100 }, () => ({ destination: url, body: t }));
          const r = await fetch(`${base}/batch`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(items) });
          if (r.status >= 300) throw new Error(`batch: ${r.status} ${await r.text()}`);
          await r.arrayBuffer();
        }
      }));
    }
    const published = performance.now();
    await Promise.race([all, sleep(120_000)]);
    return {
      kind, messages: n, publishPerSec: Math.round(n / ((published - t0) / 1000)),
      deliveredPerSec: Math.round(delivered / ((lastAt - t0) / 1000)), delivered,
      delayP50ms: +pct(delays, 0.5).toFixed(1), delayP99ms: +pct(delays, 0.99).toFixed(1),
    };
  }

  // The GET loop runs in its own process so that the benchmark's own publishing and endpoint
  // work does not delay it: it measures the server.
  async function getP99(ms) {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--gets', String(port), String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    await new Promise((r) => child.once('exit', r));
    return JSON.parse(out);
  }

  const results = [];
  await run('single', 200); // warm-up
  results.push(await run('single', N));
  results.push(await run('batch', N));
  const idle = await getP99(2000);
  const loadRun = run('single', N);
  await sleep(200);
  const loaded = await getP99(2000);
  await loadRun;
  console.table(results);
  console.table([{ case: 'GET idle', ...idle }, { case: 'GET during publish load', ...loaded }]);
  ep.close();
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  fs.rmSync(dir, { recursive: true, force: true });
}

async function gets(port, ms) {
  const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  await r.connect();
  await r.set('k', 'v');
  const lat = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const t = performance.now();
    await r.get('k');
    lat.push(performance.now() - t);
  }
  r.disconnect();
  console.log(JSON.stringify({ gets: lat.length, p50ms: +pct(lat, 0.5).toFixed(3), p99ms: +pct(lat, 0.99).toFixed(3) }));
}

if (process.argv[2] === '--gets') gets(Number(process.argv[3]), Number(process.argv[4])).catch((e) => { console.error(e); process.exit(1); });
else main().catch((e) => { console.error(e); process.exit(1); });
