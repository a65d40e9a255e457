#!/usr/bin/env node
/**
 * BullMQ against our server and a real redis-server (issue 21): BullMQ is all Lua scripts
 * (EVALSHA of long scripts with many redis.calls, cmsgpack, cjson), the way most Node users
 * load a Redis.
 *
 * Phases, each timed on its own, with N jobs (BULLMQ_N, default 10,000):
 *   add        N × queue.add, one by one (each awaited)
 *   addBulk    one queue.addBulk of N jobs
 *   process1   a Worker at concurrency 1 processes N waiting jobs (added by addBulk, untimed)
 *   process10  the same at concurrency 10
 *   process50  the same at concurrency 50
 *   delayed    N jobs added with a delay (untimed); once due, a Worker (concurrency 10)
 *              promotes and processes them
 *   flow       N/10 flows (FlowProducer.add, each awaited) of a parent and 9 children, then
 *              processed by a Worker at concurrency 10: N jobs added and processed in all
 *
 * Servers: ours with `--appendfsync everysec` against redis-server `appendonly yes,
 * appendfsync everysec`, and ours with `--appendfsync no` against redis-server without
 * persistence (BULLMQ_MODES=everysec,no). Per mode both servers run side by side; rounds
 * alternate which one goes first. Per phase: jobs/s (median of the rounds), the ratio
 * ours/Redis, and each server's CPU time (utime+stime of its process, all threads) per job,
 * read from the timed part's start (the process and delayed phases' addBulk is not in it).
 * Before session 17 it was read before the setup: those rows' CPU included an addBulk of N jobs.
 * Per mode also our server's RSS once it listens and after the last phase (a start flag's memory).
 * Every phase checks its outcome (N jobs completed, each with the processor's return value):
 * a wrong result stops the benchmark.
 *
 *   npm run bench:bullmq
 *   BULLMQ_N=2000 BULLMQ_ROUNDS=1 BULLMQ_MODES=no npm run bench:bullmq      # a quick run
 *   BULLMQ_PHASES=add,process10 node bench/bullmq.mjs
 *   BULLMQ_WARMUP=2000 node bench/bullmq.mjs                            # steady state: phases run once untimed first
 *   BULLMQ_DIST=.base-dist node bench/bullmq.mjs                       # another build of ours (before/after)
 *   BULLMQ_OURS_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof' BULLMQ_MODES=no node bench/bullmq.mjs   # profile ours
 *   BULLMQ_STATS=1 BULLMQ_PHASES=addBulk node bench/bullmq.mjs      # + INFO commandstats per phase and server
 *
 * Bounded: a phase that does not finish in BULLMQ_PHASE_S seconds (default 120) is reported
 * as a timeout and the run goes on with the next server.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue, Worker, FlowProducer } from 'bullmq';
import { oursArgv } from './server-cmd.mjs';
import { cpuSeconds, freePort, start, stop } from './proc.mjs';

const N = Number(process.env.BULLMQ_N ?? 10000);
// BULLMQ_WARMUP=<jobs>: before the timed rounds, every phase runs once with this many jobs on
// each server, untimed: the rounds then measure a server whose JIT has compiled the scripts'
// paths (a fresh Node server spends 2-3x the steady CPU per job on its first ~2,000 jobs).
const WARMUP = Number(process.env.BULLMQ_WARMUP ?? 0);
const ROUNDS = Number(process.env.BULLMQ_ROUNDS ?? 3);
const MODES = (process.env.BULLMQ_MODES ?? 'no,everysec').split(',').filter(Boolean);
const PHASE_S = Number(process.env.BULLMQ_PHASE_S ?? 120);
const ALL = ['add', 'addBulk', 'process1', 'process10', 'process50', 'delayed', 'flow'];
const PHASES = (process.env.BULLMQ_PHASES ?? ALL.join(',')).split(',').filter(Boolean);
const DELAY_MS = 1500;
// BULLMQ_STATS=1: CONFIG RESETSTAT before each timed phase and INFO commandstats after it, printed
// per server as calls and µs per call per job (where a row's CPU goes, command by command).
const STATS = process.env.BULLMQ_STATS === '1';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Wait until `count()` reaches n, or reject after the phase time limit. */
function until(n, count, what) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = setInterval(() => {
      if (count() >= n) {
        clearInterval(tick);
        resolve();
      } else if (Date.now() - t0 > PHASE_S * 1000) {
        clearInterval(tick);
        reject(new Error(`${what}: timeout after ${PHASE_S} s (${count()}/${n})`));
      }
    }, 2);
  });
}

function withTimeout(p, what) {
  let t;
  return Promise.race([p, new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`${what}: timeout after ${PHASE_S} s`)), PHASE_S * 1000); })])
    .finally(() => clearTimeout(t));
}

const jobData = (i) => ({ i, user: `user:${i % 97}`, payload: 'x'.repeat(64) });

/** A Worker whose processor returns the job's index: counts completions, checks each result. */
function worker(name, connection, concurrency) {
  const state = { done: 0, bad: null };
  const w = new Worker(name, async (job) => job.data.i, { connection, concurrency, autorun: false });
  w.on('completed', (job, rv) => {
    if (rv !== job.data.i && state.bad === null) state.bad = `job ${job.id}: returned ${rv}, expected ${job.data.i}`;
    state.done++;
  });
  w.on('failed', (job, err) => { if (state.bad === null) state.bad = `job ${job?.id} failed: ${err.message}`; });
  w.on('error', (err) => { if (state.bad === null) state.bad = `worker error: ${err.message}`; });
  return { w, state };
}

/**
 * One phase on one server: { ms, jobs }. Setup outside the timed part: `atStart()` is called
 * right before the clock starts, so that the CPU and commandstats read there leave the setup
 * out (the process and delayed phases' addBulk of N jobs).
 */
async function phase(p, connection, qname, N, atStart = () => {}) {
  const q = new Queue(qname, { connection });
  await q.waitUntilReady();
  try {
    if (p === 'add') {
      atStart();
      const t0 = performance.now();
      for (let i = 0; i < N; i++) await q.add('job', jobData(i));
      const ms = performance.now() - t0;
      const c = await q.getJobCounts('waiting');
      if (c.waiting !== N) throw new Error(`add: ${c.waiting} waiting, expected ${N}`);
      return { ms, jobs: N };
    }
    if (p === 'addBulk') {
      const jobs = Array.from({ length: N }, (_, i) => ({ name: 'job', data: jobData(i) }));
      atStart();
      const t0 = performance.now();
      await withTimeout(q.addBulk(jobs), 'addBulk');
      const ms = performance.now() - t0;
      const c = await q.getJobCounts('waiting');
      if (c.waiting !== N) throw new Error(`addBulk: ${c.waiting} waiting, expected ${N}`);
      return { ms, jobs: N };
    }
    if (p.startsWith('process') || p === 'delayed') {
      const delayed = p === 'delayed';
      const conc = delayed ? 10 : Number(p.slice('process'.length));
      const due = Date.now() + DELAY_MS;
      await q.addBulk(Array.from({ length: N }, (_, i) => ({ name: 'job', data: jobData(i), opts: delayed ? { delay: Math.max(1, due - Date.now()) } : {} })));
      if (delayed) {
        const c = await q.getJobCounts('delayed');
        if (c.delayed !== N) throw new Error(`delayed: ${c.delayed} delayed, expected ${N}`);
        await sleep(Math.max(0, due - Date.now()) + 50);
      }
      const { w, state } = worker(qname, connection, conc);
      atStart();
      const t0 = performance.now();
      w.run();
      try {
        await until(N, () => (state.bad !== null ? Infinity : state.done), p);
      } finally {
        await w.close();
      }
      const ms = performance.now() - t0;
      if (state.bad !== null) throw new Error(`${p}: ${state.bad}`);
      const c = await q.getJobCounts('completed', 'waiting', 'delayed', 'active');
      if (c.completed !== N || c.waiting + c.delayed + c.active !== 0) throw new Error(`${p}: counts ${JSON.stringify(c)}`);
      return { ms, jobs: N };
    }
    if (p === 'flow') {
      const fp = new FlowProducer({ connection });
      const flows = Math.max(1, Math.floor(N / 10));
      const { w, state } = worker(qname, connection, 10);
      atStart();
      const t0 = performance.now();
      try {
        for (let f = 0; f < flows; f++) {
          await fp.add({
            name: 'parent', queueName: qname, data: jobData(f * 10),
            children: Array.from({ length: 9 }, (_, c) => ({ name: 'child', queueName: qname, data: jobData(f * 10 + c + 1) })),
          });
        }
        w.run();
        await until(flows * 10, () => (state.bad !== null ? Infinity : state.done), p);
      } finally {
        await w.close();
        await fp.close();
      }
      const ms = performance.now() - t0;
      if (state.bad !== null) throw new Error(`flow: ${state.bad}`);
      const c = await q.getJobCounts('completed', 'waiting-children');
      if (c.completed !== flows * 10 || c['waiting-children'] !== 0) throw new Error(`flow: counts ${JSON.stringify(c)}`);
      return { ms, jobs: flows * 10 };
    }
    throw new Error(`unknown phase ${p}`);
  } finally {
    await q.close();
  }
}

/** FLUSHALL through a plain connection (BullMQ's Queue has no such call). */
function flushall(port) {
  execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'FLUSHALL'], { encoding: 'utf8' });
}

const cli = (port, ...args) => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });

/** BULLMQ_STATS: user and system CPU seconds, read and write syscalls of a process so far. */
function procCounters(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
  const num = (k) => Number(new RegExp(`^${k}: (\\d+)`, 'm').exec(io)[1]);
  const m = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const g = m.slice(m.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]), sys: Number(f[12]), main: Number(g[11]) + Number(g[12]), syscr: num('syscr'), syscw: num('syscw') };
}

/** BULLMQ_STATS: INFO commandstats as lines "cmd calls/job usec/call usec/job", largest usec/job first. */
function printStats(port, who, p, jobs, c0, c1) {
  const tick = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const other = c1.user + c1.sys - c0.user - c0.sys - (c1.main - c0.main);
  console.log(`    stats ${who} ${p}: user ${(((c1.user - c0.user) * tick) / jobs).toFixed(1)} sys ${(((c1.sys - c0.sys) * tick) / jobs).toFixed(1)} µs/job (main thread ${(((c1.main - c0.main) * tick) / jobs).toFixed(1)}, other threads ${((other * tick) / jobs).toFixed(1)}); read syscalls ${((c1.syscr - c0.syscr) / jobs).toFixed(2)} write syscalls ${((c1.syscw - c0.syscw) / jobs).toFixed(2)} per job`);
  const rows = [];
  let total = 0;
  for (const line of cli(port, 'INFO', 'commandstats').split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/.exec(line);
    if (m === null) continue;
    const [calls, usec] = [Number(m[2]), Number(m[3])];
    total += usec;
    rows.push({ cmd: m[1], calls, usec });
  }
  rows.sort((a, b) => b.usec - a.usec);
  console.log(`    stats ${who} ${p}: commands ${(total / jobs).toFixed(1)} µs/job`);
  for (const r of rows) {
    if (r.usec / jobs < 0.05 && r.calls < jobs) continue;
    console.log(`      ${r.cmd.padEnd(22)} ${(r.calls / jobs).toFixed(2).padStart(7)} calls/job ${(r.usec / r.calls).toFixed(2).padStart(8)} µs/call ${(r.usec / jobs).toFixed(2).padStart(8)} µs/job`);
  }
}

/** Resident set size of a process in MB (/proc/<pid>/status VmRSS). */
function rssMB(pid) {
  return Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}

const median = (xs) => {
  const v = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return v.length === 0 ? NaN : v[Math.floor((v.length - 1) / 2)];
};

async function runMode(mode) {
  const dirs = [fs.mkdtempSync(path.join(os.tmpdir(), 'bq-ours-')), fs.mkdtempSync(path.join(os.tmpdir(), 'bq-redis-'))];
  const [pOurs, pRedis] = process.env.BULLMQ_PORTS ? process.env.BULLMQ_PORTS.split(',').map(Number) : [await freePort(), await freePort()];
  // BULLMQ_OURS_FLAGS: extra Node flags for our server (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).
  const extra = (process.env.BULLMQ_OURS_FLAGS ?? '').split(' ').filter(Boolean);
  // BULLMQ_DIST: another build of ours (inside the repository: it needs node_modules), for before/after.
  const argv = oursArgv(['--port', String(pOurs), '--http-port', '-1', '--appendfsync', mode, '--dir', dirs[0]])
    .map((a) => (process.env.BULLMQ_DIST && a.endsWith(path.join('dist', 'main.js')) ? path.resolve(process.env.BULLMQ_DIST, 'main.js') : a));
  const ours = await start('ours', process.execPath, [...extra, ...argv], pOurs);
  const persist = mode === 'no' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', mode];
  const redis = await start('redis', 'redis-server', ['--port', String(pRedis), '--bind', '127.0.0.1', '--save', '', ...persist, '--dir', dirs[1]], pRedis);
  const res = {}; // phase -> server -> [{rate, cpu}]
  // Our server's RSS once it listens (idle, before any client) and after the last phase: what a
  // start flag such as the young generation's size costs in memory.
  const rssIdle = rssMB(ours.proc.pid);
  try {
    if (WARMUP > 0) {
      for (const p of PHASES) {
        for (const s of [ours, redis]) {
          flushall(s.port);
          await phase(p, { host: '127.0.0.1', port: s.port, maxRetriesPerRequest: null }, `warm-${p}`, WARMUP);
        }
      }
    }
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? [ours, redis] : [redis, ours];
      for (const p of PHASES) {
        for (const s of order) {
          flushall(s.port);
          const connection = { host: '127.0.0.1', port: s.port, maxRetriesPerRequest: null };
          let c0 = null;
          let cpu0 = 0;
          let row;
          try {
            const { ms, jobs } = await phase(p, connection, `bench-${p}-${r}`, N, () => {
              if (STATS) cli(s.port, 'CONFIG', 'RESETSTAT');
              c0 = STATS ? procCounters(s.proc.pid) : null;
              cpu0 = cpuSeconds(s.proc.pid);
            });
            row = { rate: (jobs * 1000) / ms, cpu: ((cpuSeconds(s.proc.pid) - cpu0) * 1e6) / jobs };
            if (STATS) printStats(s.port, s.name, p, jobs, c0, procCounters(s.proc.pid));
          } catch (err) {
            if (!/timeout/.test(err.message)) throw err;
            console.log(`  ${s.name} ${p}: ${err.message}`);
            row = { rate: NaN, cpu: NaN };
          }
          ((res[p] ??= {})[s.name] ??= []).push(row);
          console.log(`  round ${r + 1} ${p.padEnd(9)} ${s.name.padEnd(5)} ${row.rate.toFixed(0).padStart(7)} jobs/s  ${row.cpu.toFixed(1).padStart(6)} µs CPU/job`);
        }
      }
    }
    console.log(`  rss ours: idle ${rssIdle.toFixed(1)} MB, after the phases ${rssMB(ours.proc.pid).toFixed(1)} MB`);
  } finally {
    await Promise.all([stop(ours), stop(redis)]);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
  const redisName = mode === 'no' ? 'redis (no persistence)' : `redis (appendonly yes, appendfsync ${mode})`;
  console.log(`\n## ours --appendfsync ${mode} vs ${redisName}; N=${N}, ${ROUNDS} round(s)${WARMUP > 0 ? `, after a warm-up of ${WARMUP} jobs per phase` : ''}, median; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log('| phase | ours jobs/s | Redis jobs/s | ratio | ours µs CPU/job | Redis µs CPU/job | CPU ratio |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const p of PHASES) {
    const o = res[p].ours;
    const rd = res[p].redis;
    const [or, rr, oc, rc] = [median(o.map((x) => x.rate)), median(rd.map((x) => x.rate)), median(o.map((x) => x.cpu)), median(rd.map((x) => x.cpu))];
    console.log(`| ${p} | ${or.toFixed(0)} | ${rr.toFixed(0)} | ${(or / rr).toFixed(2)} | ${oc.toFixed(1)} | ${rc.toFixed(1)} | ${(oc / rc).toFixed(2)} |`);
  }
}

console.log(`# ${new Date().toISOString()}  node ${process.version}  ${execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ')}  bullmq ${JSON.parse(fs.readFileSync(new URL('../node_modules/bullmq/package.json', import.meta.url), 'utf8')).version}  ${os.cpus().length} CPUs`);
for (const mode of MODES) await runMode(mode);
