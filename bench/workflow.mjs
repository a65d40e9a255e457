#!/usr/bin/env node
/**
 * Workflow benchmark: our server (dist/main.js, fresh data dir) driving the unmodified
 * @upstash/workflow SDK served by a local node:http app in this process (signatures verified
 * by the SDK on every delivery, as in production).
 *   seq5      N runs of a 5-step sequential workflow, C triggered at a time: runs/s
 *   par10     N runs of one 10-way parallel block (Promise.all of 10 context.run): runs/s
 *   overhead  one sequential run at a time: time from the end of a step's function (the SDK
 *             then publishes the result) to the arrival of the next delivery, p50/p99 —
 *             the server's own work per step plus one local publish and one local delivery
 *   logs      100,000 finished runs written through the workflow service (in-process, before
 *             the server starts), then GET /v2/workflows/events?groupBy=workflowRunId latency:
 *             first page, labels matched by 1% and 0.01% of runs, a URL and a flow-control key
 *             of 0.1% of runs, a URL within a date range, state=RUN_FAILED (10%), one run id,
 *             10 pages deep through cursors, and /v2/workflows/messageLogs (1000 events, by URL,
 *             by state, of one run)
 *
 *   npm run bench:workflow
 *   BENCH_N=300 BENCH_C=20 BENCH_LOG_RUNS=100000 node bench/workflow.mjs
 *   BENCH_ONLY=logs|throughput node bench/workflow.mjs      (one part only)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { oursArgv } from './server-cmd.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.BENCH_N ?? 200);
const C = Number(process.env.BENCH_C ?? 20);
const LOG_RUNS = Number(process.env.BENCH_LOG_RUNS ?? 100_000);
const TOKEN = Buffer.from(JSON.stringify({ UserID: 'bench', Password: 'bench' })).toString('base64');

const freePort = () => new Promise((res) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** utime + stime of a process in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMs = (pid) => { try { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; } catch { return NaN; } };

async function startServer(dir, httpPort) {
  const port = await freePort();
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const proc = spawn(process.execPath, [...nodeArgs, ...oursArgv(['--port', String(port), '--http-port', String(httpPort), '--dir', dir, '--qstash-token', TOKEN])], { stdio: 'ignore' });
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((r) => { const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); }); s.on('error', () => r(false)); });
    if (ok) break;
    await sleep(50);
  }
  return {
    proc, base: `http://127.0.0.1:${httpPort}`,
    stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }),
  };
}

async function throughput() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-wf-'));
  const srv = await startServer(dir, await freePort());
  const keys = await (await fetch(`${srv.base}/v2/keys`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();
  const { serve } = await import('@upstash/workflow/cloudflare');
  const { Client } = await import('@upstash/workflow');
  const env = { QSTASH_URL: srv.base, QSTASH_TOKEN: TOKEN, QSTASH_CURRENT_SIGNING_KEY: keys.current, QSTASH_NEXT_SIGNING_KEY: keys.next };
  const finished = new Set();
  let waitFor = 0;
  let allDone = () => {};
  const finish = (id) => { finished.add(id); if (finished.size >= waitFor) allDone(); };
  const stepEnd = new Map(); // run id -> time its last step function returned
  const gaps = [];
  let measure = false;
  const routes = {
    '/seq5': serve(async (ctx) => {
      if (measure && stepEnd.has(ctx.workflowRunId)) { gaps.push(performance.now() - stepEnd.get(ctx.workflowRunId)); stepEnd.delete(ctx.workflowRunId); }
      let v = 0;
      for (let i = 0; i < 5; i++) v = await ctx.run(`s${i}`, () => { stepEnd.set(ctx.workflowRunId, performance.now()); return v + 1; });
      finish(ctx.workflowRunId);
      return v;
    }),
    '/par10': serve(async (ctx) => {
      const r = await Promise.all(Array.from({ length: 10 }, (_, i) => ctx.run(`p${i}`, () => i)));
      finish(ctx.workflowRunId);
      return r.length;
    }),
  };
  const app = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const request = new Request(`${appUrl}${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) });
    const response = await routes[req.url.split('?')[0]].fetch(request, env);
    const rh = {};
    response.headers.forEach((v, k) => { rh[k] = v; });
    res.writeHead(response.status, rh);
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  app.keepAliveTimeout = 60_000;
  await new Promise((r) => app.listen(0, '127.0.0.1', r));
  const appUrl = `http://127.0.0.1:${app.address().port}`;
  const client = new Client({ baseUrl: srv.base, token: TOKEN });
  // The SDK's lifecycle messages would flood the output.
  const quiet = console.info;
  console.info = () => {};

  async function runs(route, n, conc, steps) {
    finished.clear();
    waitFor = n;
    const done = new Promise((r) => { allDone = r; });
    const cpu0 = cpuMs(srv.proc.pid);
    const t0 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: conc }, async () => {
      while (next < n) {
        next++;
        const started = finished.size;
        await client.trigger({ url: `${appUrl}${route}`, body: '1' });
        // Keep about `conc` runs in flight.
        while (next - finished.size > conc && finished.size === started) await sleep(1);
      }
    }));
    await Promise.race([done, sleep(300_000)]);
    const s = (performance.now() - t0) / 1000;
    await sleep(300); // the last runs' DELETE
    const cpu = cpuMs(srv.proc.pid) - cpu0;
    return {
      case: route.slice(1), runs: finished.size, seconds: +s.toFixed(2), runsPerSec: +(finished.size / s).toFixed(1),
      deliveriesPerSec: +((finished.size * steps) / s).toFixed(0), serverCpuMsPerDelivery: +(cpu / (finished.size * steps)).toFixed(3),
    };
  }

  const out = [];
  await runs('/seq5', 20, 5, 6); // warm-up
  out.push(await runs('/seq5', N, C, 6));
  out.push(await runs('/par10', N, C, 21));
  measure = true;
  for (let i = 0; i < 40; i++) await runs('/seq5', 1, 1, 6);
  measure = false;
  console.info = quiet;
  app.close();
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  return { table: out, overhead: { steps: gaps.length, p50ms: +pct(gaps, 0.5).toFixed(2), p99ms: +pct(gaps, 0.99).toFixed(2), meanMs: +(gaps.reduce((x, y) => x + y, 0) / gaps.length).toFixed(2) } };
}

/** 100,000 finished runs written through the workflow service, then listing latency over HTTP. */
async function logs() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-wf-logs-'));
  const { loadConfig } = await import(path.join(ROOT, 'dist/config.js'));
  const { createServer } = await import(path.join(ROOT, 'dist/app.js'));
  const httpPort = await freePort();
  const s0 = await createServer(loadConfig(['--port', String(await freePort()), '--http-port', String(httpPort), '--dir', dir, '--qstash-token', TOKEN, '--appendfsync', 'no']));
  const wf = s0.qstash.ext;
  const t0 = performance.now();
  let tenth = 0; // creation time of the run 90% of the way through
  const step = (id, name, out) => Buffer.from(JSON.stringify({ stepId: id, stepName: name, stepType: 'Run', out, concurrent: 1 }));
  for (let i = 0; i < LOG_RUNS; i++) {
    const run = wf.openRun({
      runId: `wfr_bench${i}`, url: `http://127.0.0.1:9/wf/${i % 10}`, payload: Buffer.from(`{"i":${i}}`), forward: {}, own: {}, retries: 3,
      labels: [i % 100 === 0 ? 'rare' : 'common', ...(i % 10_000 === 5 ? ['rarest'] : [])], notBefore: 0, callerIp: '127.0.0.1',
      ...(i % 1000 === 7 ? { url: 'http://127.0.0.1:9/wf/rare', flowControl: { key: 'rarekey', parallelism: 1 } } : {}),
    });
    const add = (body, callType = 'step') => wf.addEntry(run, { messageId: `msg_b${i}_${run.entries.length}`, callType, body: body.toString('base64'), raw: true, createdAt: Date.now(), step: callType === 'step' && run.entries.length > 0 ? JSON.parse(body) : undefined, d: 'SUCCESS', headers: { 'Content-Type': ['application/json'] } });
    add(Buffer.from(`{"i":${i}}`));
    add(step(1, 'a', '"x"'));
    add(step(2, 'b', '"y"'));
    if (i % 10 === 9) {
      const e = add(step(3, 'c', '"z"'));
      e.d = 'FAILED';
      e.errors = [{ error: '500 Server Error', status: 500, body: '{"message":"boom"}', time: Date.now() }];
      wf.saveEntry(run, e);
      wf.finishRun(run, 'RUN_FAILED', { dlqId: `dlq${i}` });
    } else {
      wf.finishRun(run, 'RUN_SUCCESS', { response: `"done ${i}"` });
    }
    if (i === Math.floor(LOG_RUNS * 0.9)) tenth = run.rec.createdAt;
    if (i % 2000 === 1999) await wf.committed();
  }
  await wf.committed();
  const genSec = (performance.now() - t0) / 1000;
  await s0.stop();
  const srv = await startServer(dir, httpPort);
  const auth = { authorization: `Bearer ${TOKEN}` };
  const get = async (q) => {
    const t = performance.now();
    const r = await fetch(`${srv.base}${q}`, { headers: auth });
    const body = await r.json();
    if (r.status !== 200) throw new Error(`${q}: ${r.status} ${JSON.stringify(body)}`);
    return { ms: performance.now() - t, body };
  };
  const g = '/v2/workflows/events?groupBy=workflowRunId';
  let deepCursor = '';
  for (let p = 0; p < 10; p++) deepCursor = (await get(`${g}${deepCursor ? `&cursor=${deepCursor}` : ''}`)).body.cursor;
  const cases = [
    ['first page (10 runs)', g],
    ['label=rare (1% of runs)', `${g}&label=rare`],
    ['state=RUN_FAILED (10%)', `${g}&state=RUN_FAILED`],
    ['state=STEP_FAILED (10%, steps built)', `${g}&state=STEP_FAILED`],
    ['label=rarest (0.01%)', `${g}&label=rarest`],
    ['workflowUrl, 0.1% of runs', `${g}&workflowUrl=${encodeURIComponent('http://127.0.0.1:9/wf/rare')}`],
    ['flowControlKey, 0.1% of runs', `${g}&flowControlKey=rarekey`],
    ['workflowUrl + fromDate, last 10% of runs', `${g}&workflowUrl=${encodeURIComponent('http://127.0.0.1:9/wf/3')}&fromDate=${tenth}`],
    ['workflowRunId (index)', `${g}&workflowRunId=wfr_bench50000`],
    ['page 11 (cursor)', `${g}&cursor=${deepCursor}`],
    ['messageLogs 1000 events', '/v2/workflows/messageLogs'],
    ['messageLogs workflowUrl, 0.1% of runs', `/v2/workflows/messageLogs?workflowUrl=${encodeURIComponent('http://127.0.0.1:9/wf/rare')}`],
    ['messageLogs state=RUN_FAILED (10% of runs)', '/v2/workflows/messageLogs?state=RUN_FAILED'],
    ['messageLogs of one run (index)', `/v2/workflows/messageLogs?count=100&workflowRunId=wfr_bench${LOG_RUNS - 5000}`],
  ];
  const table = [];
  for (const [name, q] of cases) {
    const lat = [];
    let items = 0;
    for (let i = 0; i < 30; i++) { const r = await get(q); lat.push(r.ms); items = (r.body.runs ?? r.body.events).length; }
    table.push({ query: name, items, p50ms: +pct(lat, 0.5).toFixed(2), p99ms: +pct(lat, 0.99).toFixed(2) });
  }
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  return { runs: LOG_RUNS, generateSec: +genSec.toFixed(1), table };
}

async function main() {
  if (process.env.BENCH_ONLY !== 'logs') {
    const t = await throughput();
    console.table(t.table);
    console.log('server overhead per step (step function end -> next delivery):', t.overhead);
  }
  if (process.env.BENCH_ONLY === 'throughput') process.exit(0);
  const l = await logs();
  console.log(`${l.runs} runs written through the workflow service in ${l.generateSec}s`);
  console.table(l.table);
  // The in-process server of the generation phase leaves handles behind (engine timers).
  process.exit(0);
}

main().catch((e) => { console.error(e); process.exit(1); });
