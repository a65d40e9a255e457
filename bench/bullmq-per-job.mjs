#!/usr/bin/env node
/**
 * Where a BullMQ job's server CPU goes (issue 21), per job, ours against redis-server: a Worker
 * (BULLMQ_CONC, default 10) processes N waiting jobs (added by addBulk, untimed) after an untimed
 * warm-up; per server the CPU µs per job (utime+stime, all threads), context switches per job
 * (voluntary/involuntary, all threads, /proc/<pid>/task/* /status) and the commands per job by
 * name (INFO commandstats after CONFIG RESETSTAT). Rounds alternate the servers.
 *
 *   node bench/bullmq-per-job.mjs
 *   BULLMQ_N=5000 BULLMQ_ROUNDS=3 BULLMQ_PORTS=7400,7401 node bench/bullmq-per-job.mjs
 *   BULLMQ_OURS_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof' node bench/bullmq-per-job.mjs
 *   BENCH_DIST=/tmp/base-dist node bench/bullmq-per-job.mjs     # another build of ours
 *   BULLMQ_B_DIST=base-dist node bench/bullmq-per-job.mjs       # + a second server "oursB" of that build
 *   BULLMQ_B_FLAGS='--max-semi-space-size=8' node bench/bullmq-per-job.mjs   # + "oursB" with other Node flags
 *   BULLMQ_SYSCALLS=1 node bench/bullmq-per-job.mjs  # + socket syscalls per job while the Worker runs
 *
 * Per round also: the kernel's share of the CPU (stime, all threads) and the main thread's CPU
 * outside the top-level commands (main-thread CPU minus commandstats' usec of the commands a
 * client sent, TOP: the socket, parser, replies, event loop, timers and GC between commands).
 * BULLMQ_SYSCALLS counts syscalls with `perf stat` tracepoints, which do not stop the process:
 * strace's ptrace stops slow a server so much that every job became its own read and write.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue, Worker } from 'bullmq';
import { oursArgv } from './server-cmd.mjs';
import { cpuSeconds, freePort, start, stop } from './proc.mjs';

const N = Number(process.env.BULLMQ_N ?? 5000);
const WARMUP = Number(process.env.BULLMQ_WARMUP ?? 3000);
const ROUNDS = Number(process.env.BULLMQ_ROUNDS ?? 3);
const CONC = Number(process.env.BULLMQ_CONC ?? 10);
const MODE = process.env.BULLMQ_MODE ?? 'no';

const cli = (port, ...args) => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * One reading of every thread of `pid` (/proc/<pid>/task/*): context switches (voluntary,
 * involuntary) and CPU seconds of the main thread (tid = pid) and of all the others (V8's GC
 * and compiler threads, libuv, LMDB).
 */
function threads(pid) {
  const r = { vol: 0, invol: 0, main: 0, rest: 0, kernel: 0 };
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    let status;
    let stat;
    try {
      status = fs.readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8');
      stat = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    r.vol += Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]);
    r.invol += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]);
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpu = (Number(f[11]) + Number(f[12])) / CLK_TCK;
    r.kernel += Number(f[12]) / CLK_TCK;
    if (t === String(pid)) r.main += cpu;
    else r.rest += cpu;
  }
  return r;
}

function commandstats(port) {
  const out = {};
  for (const line of cli(port, 'INFO', 'commandstats').split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m) out[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  }
  return out;
}

/** Commands BullMQ's clients send (the rest of commandstats are calls made by its scripts). */
const TOP = /^(evalsha|eval|evalsha_ro|eval_ro|client\|.*|hello|info|ping|select|quit|script\|.*|config\|.*)$/;
const SYSCALLS = ['read', 'write', 'writev', 'epoll_wait', 'epoll_pwait', 'futex'];

/** `perf stat` of syscall tracepoints on `pid` (BULLMQ_SYSCALLS=1): stop() resolves to {name: calls}. */
async function syscallsStart(pid) {
  const out = path.join(os.tmpdir(), `bqj-sys-${pid}-${Date.now()}`);
  const ev = SYSCALLS.map((n) => `syscalls:sys_enter_${n}`).join(',');
  const p = spawn('perf', ['stat', '-x', ',', '-e', ev, '-p', String(pid), '-o', out], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300)); // attached
  return () => new Promise((resolve) => {
    p.once('exit', () => {
      const calls = {};
      for (const line of fs.readFileSync(out, 'utf8').split('\n')) {
        const f = line.split(',');
        const m = /sys_enter_(\w+)/.exec(f[2] ?? '');
        if (m) calls[m[1]] = Number(f[0]) || 0;
      }
      fs.rmSync(out, { force: true });
      resolve(calls);
    });
    p.kill('SIGINT');
  });
}

async function run(port, qname, n, pid) {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const q = new Queue(qname, { connection });
  await q.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'job', data: { i, user: `user:${i % 97}`, payload: 'x'.repeat(64) } })));
  const sysStop = process.env.BULLMQ_SYSCALLS === '1' && pid !== undefined ? await syscallsStart(pid) : null;
  let done = 0;
  const w = new Worker(qname, async (job) => job.data.i, { connection, concurrency: CONC, autorun: false });
  w.on('completed', () => { done++; });
  const t0 = performance.now();
  w.run();
  while (done < n) {
    if (performance.now() - t0 > 120000) throw new Error('timeout');
    await new Promise((r) => setTimeout(r, 2));
  }
  const ms = performance.now() - t0;
  const sys = sysStop === null ? null : await sysStop();
  await w.close();
  await q.close();
  return { ms, sys };
}

const B = process.env.BULLMQ_B_DIST !== undefined || process.env.BULLMQ_B_FLAGS !== undefined;
const dir = ['ours', 'oursB', 'redis'].map((n) => fs.mkdtempSync(path.join(os.tmpdir(), `bqj-${n}-`)));
const [pOurs, pRedis, pB] = process.env.BULLMQ_PORTS ? process.env.BULLMQ_PORTS.split(',').map(Number) : [await freePort(), await freePort(), await freePort()];
const extra = (process.env.BULLMQ_OURS_FLAGS ?? '').split(' ').filter(Boolean);
/** Our server: the start script's flags, then `flags` (the later of two equal flags wins), on `dist`'s build. */
function oursOf(name, port, flags, d, dist) {
  const argv = oursArgv(['--port', String(port), '--http-port', '-1', '--appendfsync', MODE, '--dir', d]);
  const main = argv.findIndex((a) => a.endsWith(path.join('dist', 'main.js')));
  if (dist !== undefined) argv[main] = path.resolve(dist, 'main.js');
  argv.splice(main, 0, ...flags);
  return start(name, process.execPath, argv, port);
}
const servers = [await oursOf('ours', pOurs, extra, dir[0])];
if (B) servers.push(await oursOf('oursB', pB, [...extra, ...(process.env.BULLMQ_B_FLAGS ?? '').split(' ').filter(Boolean)], dir[1], process.env.BULLMQ_B_DIST));
const persist = MODE === 'no' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', MODE];
servers.push(await start('redis', 'redis-server', ['--port', String(pRedis), '--bind', '127.0.0.1', '--save', '', ...persist, '--dir', dir[2]], pRedis));
const rows = Object.fromEntries(servers.map((s) => [s.name, []]));
try {
  for (const s of servers) { cli(s.port, 'FLUSHALL'); await run(s.port, 'warm', WARMUP); }
  for (let r = 0; r < ROUNDS; r++) {
    // Each round in another order: every server goes first, middle and last in turn.
    const order = servers.map((_, i) => servers[(i + r) % servers.length]);
    for (const s of r % 2 === 0 ? order : order.reverse()) {
      cli(s.port, 'FLUSHALL');
      cli(s.port, 'CONFIG', 'RESETSTAT');
      const c0 = cpuSeconds(s.proc.pid);
      const x0 = threads(s.proc.pid);
      const { ms, sys } = await run(s.port, `r${r}`, N, s.proc.pid);
      const cpu = ((cpuSeconds(s.proc.pid) - c0) * 1e6) / N;
      const x1 = threads(s.proc.pid);
      const mainCpu = ((x1.main - x0.main) * 1e6) / N;
      const restCpu = ((x1.rest - x0.rest) * 1e6) / N;
      const cmds = commandstats(s.port);
      const kernel = ((x1.kernel - x0.kernel) * 1e6) / N;
      let top = 0;
      for (const [k, v] of Object.entries(cmds)) if (TOP.test(k)) top += v.usec;
      const outside = mainCpu - top / N;
      rows[s.name].push({ rate: (N * 1000) / ms, cpu, vol: (x1.vol - x0.vol) / N, invol: (x1.invol - x0.invol) / N, cmds, mainCpu, restCpu, kernel, outside });
      console.log(`round ${r + 1} ${s.name.padEnd(5)} ${((N * 1000) / ms).toFixed(0).padStart(6)} jobs/s ${cpu.toFixed(1).padStart(6)} µs CPU/job (main thread ${mainCpu.toFixed(0)}, other threads ${restCpu.toFixed(0)}, kernel ${kernel.toFixed(0)}; main outside commands ${outside.toFixed(0)})  ctxsw/job ${((x1.vol - x0.vol) / N).toFixed(2)} vol ${((x1.invol - x0.invol) / N).toFixed(2)} invol`);
      if (sys !== null) console.log(`  syscalls/job: ${SYSCALLS.filter((k) => sys[k]).map((k) => `${k} ${(sys[k] / N).toFixed(3)}`).join(', ')}`);
    }
  }
} finally {
  await Promise.all(servers.map(stop));
  for (const d of dir) fs.rmSync(d, { recursive: true, force: true });
}
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
console.log(`\nN=${N} conc=${CONC} mode=${MODE} rounds=${ROUNDS}${B ? ` oursB: ${process.env.BULLMQ_B_DIST ?? 'dist'} ${process.env.BULLMQ_B_FLAGS ?? ''}` : ''} load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| server | jobs/s | µs CPU/job | main thread | other threads | kernel | main outside commands | vol ctxsw/job | invol ctxsw/job |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const k of Object.keys(rows)) {
  const r = rows[k];
  console.log(`| ${k} | ${med(r.map((x) => x.rate)).toFixed(0)} | ${med(r.map((x) => x.cpu)).toFixed(1)} | ${med(r.map((x) => x.mainCpu)).toFixed(0)} | ${med(r.map((x) => x.restCpu)).toFixed(0)} | ${med(r.map((x) => x.kernel)).toFixed(0)} | ${med(r.map((x) => x.outside)).toFixed(0)} | ${med(r.map((x) => x.vol)).toFixed(2)} | ${med(r.map((x) => x.invol)).toFixed(2)} |`);
}
// Commands per job, last round of each (the untimed addBulk is counted too; nested calls of
// scripts included), and their wall µs per job (commandstats' usec: the whole EVALSHA for a
// script, its calls counted again in their own rows).
const names = [...new Set([...Object.keys(rows.ours.at(-1).cmds), ...Object.keys(rows.redis.at(-1).cmds)])].sort();
console.log('\n| command | ours calls/job | Redis calls/job | ours µs/job | Redis µs/job |');
console.log('|---|---:|---:|---:|---:|');
const f = (x, k) => ((x?.[k] ?? 0) / N).toFixed(k === 'calls' ? 3 : 1);
for (const n of names) {
  const [o, rd] = [rows.ours.at(-1).cmds[n], rows.redis.at(-1).cmds[n]];
  console.log(`| ${n} | ${f(o, 'calls')} | ${f(rd, 'calls')} | ${f(o, 'usec')} | ${f(rd, 'usec')} |`);
}
