#!/usr/bin/env node
/**
 * A/B of our server's variants in turn against redis-server, for persistence work: each round
 * starts a fresh Redis (appendonly yes with the same appendfsync, or no AOF for MODE=no) and a
 * fresh server per variant (order reversed every other round), warms each up with 20,000
 * requests, then measures N requests of redis-benchmark -c 50 (SET or HSET, 100,000 random
 * keys / fields). Per run: req/s, the ratio to that round's Redis, the server's CPU per request
 * (all threads and the main thread, from /proc) and the worst latency. Medians of the ratios at
 * the end. This machine's speed drifts by 2x within minutes: compare ratios round by round.
 *
 *   node bench/persist-ab.mjs
 *   CONFIGS="base:DIST=/path/to/other/dist;new:" MODE=always TEST=set ROUNDS=4 N=200000 node bench/persist-ab.mjs
 *
 * CONFIGS: `name:ENV=value,ENV=value;name2:...`; DIST=<dir> runs <dir>/main.js (another build;
 * it must sit inside this repository so that it finds node_modules), other variables go to the
 * server's environment. Every process it starts is killed when its run ends.
 */
import { spawn, execFileSync } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { oursArgv } from './server-cmd.mjs';

const MODE = process.env.MODE ?? 'always';
const TEST = process.env.TEST ?? 'set';
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const N = Number(process.env.N ?? 200000);
const CONFIGS = (process.env.CONFIGS ?? 'main:').split(';').map((c) => {
  const [name, env] = c.split(':');
  return { name, env: Object.fromEntries((env ?? '').split(',').filter(Boolean).map((kv) => kv.split('='))) };
});
const BENCH_ARGS = { set: ['-t', 'set', '-r', '100000', '-d', '32'], hset: ['-t', 'hset', '-r', '100000', '-d', '32'] }[TEST];

const freePort = () => new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

async function ready(port, proc) {
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited (${proc.exitCode})`);
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.write('PING\r\n');
        s.once('data', (d) => {
          s.destroy();
          resolve(String(d).startsWith('+PONG'));
        });
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** CPU time (us) of a process, or of one of its threads. */
function cpu(pid, tid = null) {
  const f = fs.readFileSync(tid === null ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  const a = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(a[11]) + Number(a[12])) * (1e6 / 100);
}

function bench(port, n) {
  const out = execFileSync('redis-benchmark', ['-p', String(port), '--csv', '-n', String(n), '-c', '50', ...BENCH_ARGS]).toString().trim().split('\n').pop();
  const cols = out.split(',').map((c) => Number(c.replace(/"/g, '')));
  return { rps: cols[1], max: cols[cols.length - 1] };
}

async function run(who, env) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'persist-ab-'));
  const port = await freePort();
  const aof = MODE === 'no' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', MODE];
  const args = who === 'redis'
    ? ['--port', String(port), '--save', '', '--dir', dir, ...aof]
    : oursArgv(['--port', String(port), '--http-port', '0', '--dir', dir, '--appendfsync', MODE])
      .map((a) => (env.DIST && a.endsWith(path.join('dist', 'main.js')) ? path.join(env.DIST, 'main.js') : a));
  const proc = spawn(who === 'redis' ? 'redis-server' : process.execPath, args, { stdio: 'ignore', env: { ...process.env, ...env } });
  try {
    await ready(port, proc);
    bench(port, 20000);
    const c0 = cpu(proc.pid), m0 = cpu(proc.pid, proc.pid);
    const r = bench(port, N);
    const c1 = cpu(proc.pid), m1 = cpu(proc.pid, proc.pid);
    return { ...r, all: (c1 - c0) / N, main: (m1 - m0) / N };
  } finally {
    proc.kill('SIGKILL');
    if (proc.exitCode === null) await new Promise((r) => proc.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const ratios = Object.fromEntries(CONFIGS.map((c) => [c.name, []]));
console.log(`${MODE} ${TEST}, ${N} requests per run, ${ROUNDS} rounds; CPU in us per request (all threads / main thread)`);
for (let r = 0; r < ROUNDS; r++) {
  const red = await run('redis', {});
  const line = [`round ${r + 1}: redis ${Math.round(red.rps)} req/s (${red.all.toFixed(1)}, max ${red.max} ms)`];
  for (const c of r % 2 === 0 ? CONFIGS : [...CONFIGS].reverse()) {
    const o = await run('ours', c.env);
    ratios[c.name].push(o.rps / red.rps);
    line.push(`${c.name} ${Math.round(o.rps)} ${(o.rps / red.rps).toFixed(2)}x (${o.all.toFixed(1)} / ${o.main.toFixed(1)}, max ${o.max} ms)`);
  }
  console.log(line.join(' | '), `| load ${os.loadavg()[0].toFixed(2)}`);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 === 1 ? s[h] : (s[h - 1] + s[h]) / 2;
};
console.log('medians of the ratios: ' + CONFIGS.map((c) => `${c.name} ${median(ratios[c.name]).toFixed(2)}x`).join(', '));
