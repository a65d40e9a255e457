#!/usr/bin/env node
/**
 * REST macro benchmark: autocannon (programmatic API, 50 connections) against
 *   ours   dist/main.js (the REST API on uWebSockets.js, engine in process)
 *   bare   a bare uWebSockets.js server answering from a Map (the ceiling for uWS in Node)
 *   proxy  a node:http server forwarding each command to a real redis-server through ioredis
 *          (what "an HTTP front for Redis" costs without uWS)
 * for three request shapes: GET /get/foo, POST / ["GET","foo"], POST /pipeline of 10 GETs.
 * All three servers check the bearer token and answer the same JSON bytes.
 *
 * Runs are interleaved (shape by shape: ours, bare, proxy, ours, bare, proxy...) so that all
 * see the same machine load. For each run: requests/s, latency p50/p99, and the server's CPU
 * time per request (utime+stime from /proc/<pid>/stat before and after the run; for the proxy,
 * node + redis-server). The summary prints ours/bare and ours/proxy ratios (median of rounds).
 *
 *   npm run bench:http
 *   BENCH_DURATION=5 BENCH_ROUNDS=3 BENCH_SHAPES=get,post npm run bench:http
 *   node bench/http.mjs --json out.json
 *
 * Internal modes (spawned by the orchestrator): --serve-bare <port>, --serve-proxy <port> <redisPort>.
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { oursArgv } from './server-cmd.mjs';
import { freePort } from './proc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const TOKEN = 'bench-token';
const AUTH = `Bearer ${TOKEN}`;
const PIPE_N = 10;

// ------------------------------------------------------------------ bare uWS server

function serveBare(port) {
  const uWS = require('@trufflesuite/uws-js-unofficial');
  const map = new Map([['foo', 'bar']]);
  const reply = (res, obj, status) => {
    if (status) res.writeStatus(status);
    res.writeHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(obj));
  };
  const run = (cmd) => {
    if (String(cmd[0]).toUpperCase() === 'GET') return { result: map.get(String(cmd[1])) ?? null };
    if (String(cmd[0]).toUpperCase() === 'SET') { map.set(String(cmd[1]), String(cmd[2])); return { result: 'OK' }; }
    return { error: 'ERR unknown command' };
  };
  const app = uWS.App();
  app.any('/*', (res, req) => {
    if (req.getHeader('authorization') !== AUTH) return reply(res, { error: 'Unauthorized' }, '401 Unauthorized');
    const url = req.getUrl();
    if (req.getMethod() === 'get') {
      const parts = url.split('/');
      return reply(res, run(parts.slice(1).map(decodeURIComponent)));
    }
    let chunks = [];
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    res.onData((ab, last) => {
      chunks.push(Buffer.from(ab.slice(0)));
      if (!last || aborted) return;
      const body = JSON.parse(Buffer.concat(chunks).toString());
      chunks = null;
      res.cork(() => {
        if (url === '/pipeline') reply(res, body.map(run));
        else reply(res, run(body));
      });
    });
  });
  app.listen('127.0.0.1', port, (ls) => {
    if (!ls) { console.error('bare: cannot listen'); process.exit(1); }
  });
}

// ------------------------------------------------------------------ node:http + ioredis proxy

async function serveProxy(port, redisPort) {
  const http = await import('node:http');
  const { Redis } = require('ioredis');
  const redis = new Redis({ port: redisPort, host: '127.0.0.1' });
  const send = (res, status, obj) => {
    const body = JSON.stringify(obj);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
  const one = async (cmd) => {
    try {
      return { result: await redis.call(String(cmd[0]), ...cmd.slice(1).map(String)) };
    } catch (e) {
      return { error: e.message };
    }
  };
  http.createServer((req, res) => {
    if (req.headers.authorization !== AUTH) return send(res, 401, { error: 'Unauthorized' });
    if (req.method === 'GET') {
      const parts = req.url.split('?')[0].split('/').slice(1).map(decodeURIComponent);
      one(parts).then((r) => send(res, r.error ? 400 : 200, r));
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      if (req.url === '/pipeline') {
        const p = redis.pipeline();
        for (const c of body) p.call(String(c[0]), ...c.slice(1).map(String));
        const out = await p.exec();
        send(res, 200, out.map(([err, result]) => (err ? { error: err.message } : { result })));
      } else {
        const r = await one(body);
        send(res, r.error ? 400 : 200, r);
      }
    });
  }).listen(port, '127.0.0.1');
}

// ------------------------------------------------------------------ orchestration

const SHAPES = {
  get: { label: 'GET /get/foo', method: 'GET', path: '/get/foo', body: undefined, expect: '{"result":"bar"}' },
  post: { label: 'POST / ["GET","foo"]', method: 'POST', path: '/', body: JSON.stringify(['GET', 'foo']), expect: '{"result":"bar"}' },
  pipeline: {
    label: `POST /pipeline (${PIPE_N} GETs)`, method: 'POST', path: '/pipeline',
    body: JSON.stringify(Array.from({ length: PIPE_N }, () => ['GET', 'foo'])),
    expect: JSON.stringify(Array.from({ length: PIPE_N }, () => ({ result: 'bar' }))),
  },
};


async function waitForPort(port, proc) {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server on ${port} exited with ${proc.exitCode}`);
    const ok = await new Promise((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of a process, in ms. */
function cpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
}

function start(cmd, args) {
  const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  p.on('error', (e) => console.error(`${cmd}: ${e.message}`));
  return p;
}

async function main() {
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
  const shapes = (process.env.BENCH_SHAPES ?? 'get,post,pipeline').split(',').map((s) => s.trim()).filter(Boolean);
  const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null;
  const autocannon = require('autocannon');
  const self = fileURLToPath(import.meta.url);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-bench-http-'));
  const procs = [];
  const stopAll = () => { for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL'); };
  process.on('exit', stopAll);

  const [oursHttp, oursTcp, barePort, proxyPort, redisPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const ours = start(process.execPath, oursArgv(['--port', String(oursTcp), '--http-port', String(oursHttp), '--dir', dir, '--token', TOKEN, '--read-only-token', TOKEN + '-ro']));
  const bare = start(process.execPath, [self, '--serve-bare', String(barePort)]);
  const redis = start('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  procs.push(ours, bare, redis);
  await Promise.all([waitForPort(oursHttp, ours), waitForPort(barePort, bare), waitForPort(redisPort, redis)]);
  const proxy = start(process.execPath, [self, '--serve-proxy', String(proxyPort), String(redisPort)]);
  procs.push(proxy);
  await waitForPort(proxyPort, proxy);

  const targets = [
    { name: 'ours', port: oursHttp, pids: [ours.pid] },
    { name: 'bare', port: barePort, pids: [bare.pid] },
    { name: 'proxy', port: proxyPort, pids: [proxy.pid, redis.pid] },
  ];
  // Same data everywhere: foo = bar.
  for (const t of targets) {
    const r = await fetch(`http://127.0.0.1:${t.port}/`, { method: 'POST', headers: { authorization: AUTH }, body: '["SET","foo","bar"]' });
    if (!r.ok) throw new Error(`${t.name}: SET failed: ${await r.text()}`);
  }
  // Every target answers every shape with the same bytes.
  for (const s of shapes.map((k) => SHAPES[k])) {
    for (const t of targets) {
      const r = await fetch(`http://127.0.0.1:${t.port}${s.path}`, { method: s.method, headers: { authorization: AUTH }, body: s.body });
      const text = await r.text();
      if (text !== s.expect) throw new Error(`${t.name} ${s.label}: got ${text}`);
    }
  }

  console.log(`autocannon: ${connections} connections, ${duration} s per run, ${rounds} round(s), ${os.cpus().length} CPUs (${os.cpus()[0].model})`);
  console.log(`node ${process.version}; ours = dist/main.js, bare = uWS + Map, proxy = node:http + ioredis + redis-server ${execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1]}`);
  const results = [];
  for (const key of shapes) {
    const s = SHAPES[key];
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) {
        const cpu0 = t.pids.map(cpuMs);
        const r = await autocannon({
          url: `http://127.0.0.1:${t.port}${s.path}`,
          method: s.method,
          headers: { authorization: AUTH, 'content-type': 'application/json' },
          body: s.body,
          connections,
          duration,
        });
        const cpu = t.pids.map((pid, i) => cpuMs(pid) - cpu0[i]);
        const total = r.requests.total;
        const row = {
          shape: key, target: t.name, round,
          rps: r.requests.average, total,
          p50: r.latency.p50, p99: r.latency.p99,
          errors: r.errors + r.timeouts, non2xx: r.non2xx,
          cpuUsPerReq: (cpu.reduce((a, b) => a + b, 0) * 1000) / Math.max(1, total),
          cpuSplit: cpu.map((c) => (c * 1000) / Math.max(1, total)),
        };
        results.push(row);
        console.log(`${s.label.padEnd(28)} ${t.name.padEnd(6)} round ${round + 1}: ${Math.round(row.rps).toString().padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms  ` +
          `cpu ${row.cpuUsPerReq.toFixed(1)} µs/req${row.cpuSplit.length > 1 ? ` (node ${row.cpuSplit[0].toFixed(1)} + redis ${row.cpuSplit[1].toFixed(1)})` : ''}` +
          `${row.errors || row.non2xx ? `  ERRORS ${row.errors} non2xx ${row.non2xx}` : ''}`);
      }
    }
  }

  const median = (xs) => {
    const a = [...xs].sort((x, y) => x - y);
    return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
  };
  console.log('\nSummary (median of rounds)');
  console.log('shape                        | ours req/s | bare req/s | proxy req/s | ours/bare | ours/proxy | CPU µs/req ours / bare / proxy | CPU ratio bare/ours');
  console.log('-----------------------------|-----------:|-----------:|------------:|----------:|-----------:|-------------------------------:|-------------------:');
  const summary = [];
  for (const key of shapes) {
    const pick = (name, f) => median(results.filter((r) => r.shape === key && r.target === name).map(f));
    const o = pick('ours', (r) => r.rps), b = pick('bare', (r) => r.rps), p = pick('proxy', (r) => r.rps);
    const co = pick('ours', (r) => r.cpuUsPerReq), cb = pick('bare', (r) => r.cpuUsPerReq), cp = pick('proxy', (r) => r.cpuUsPerReq);
    summary.push({ shape: key, ours: o, bare: b, proxy: p, oursOverBare: o / b, oursOverProxy: o / p, cpuOurs: co, cpuBare: cb, cpuProxy: cp, cpuBareOverOurs: cb / co });
    console.log(`${SHAPES[key].label.padEnd(28)} | ${Math.round(o).toString().padStart(10)} | ${Math.round(b).toString().padStart(10)} | ${Math.round(p).toString().padStart(11)} | ` +
      `${(o / b).toFixed(2).padStart(9)} | ${(o / p).toFixed(2).padStart(10)} | ${`${co.toFixed(1)} / ${cb.toFixed(1)} / ${cp.toFixed(1)}`.padStart(30)} | ${(cb / co).toFixed(2).padStart(18)}`);
  }
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify({ duration, rounds, connections, results, summary }, null, 2));
  stopAll();
  fs.rmSync(dir, { recursive: true, force: true });
}

const mode = process.argv[2];
if (mode === '--serve-bare') serveBare(Number(process.argv[3]));
else if (mode === '--serve-proxy') await serveProxy(Number(process.argv[3]), Number(process.argv[4]));
else await main();
