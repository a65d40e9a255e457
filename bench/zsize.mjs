#!/usr/bin/env node
/**
 * Where a ZADD into a big sorted set spends its time, server side: one of our servers per
 * mode (MODES, default no,everysec), a 1,000-member and a BIG-member sorted set (members
 * m<12 digits>, as bench/persist.mjs), then redis-benchmark ZADD of new random scores for
 * random existing members on the small and the big key alternately (ROUNDS times, N requests
 * each, after one unmeasured run per key). Per run: throughput, the server's CPU (utime+stime,
 * all threads) per request and the bytes it caused to be written (/proc/<pid>/io write_bytes)
 * per request. Bounded: every process it starts is killed on exit or after TIME_LIMIT_S.
 *
 *   npm run build && node bench/zsize.mjs
 *   ZSIZE_DIST=/other/dist node bench/zsize.mjs     # another build (before/after)
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from './server-cmd.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = path.join(process.env.ZSIZE_DIST ?? path.join(ROOT, 'dist'), 'main.js');
const MODES = (process.env.MODES ?? 'no,everysec').split(',');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const N = Number(process.env.N ?? 20000);
const BIG = Number(process.env.BIG ?? 1000000);
const SMALL = 1000;
const TIME_LIMIT_S = Number(process.env.TIME_LIMIT_S ?? 600);

const children = new Set();
const dirs = [];
function cleanup() {
  for (const p of children) p.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
}
process.on('exit', cleanup);
setTimeout(() => {
  console.error('time limit reached');
  process.exit(2);
}, TIME_LIMIT_S * 1000).unref();

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => s.write('*1\r\n$4\r\nPING\r\n'));
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    s.on('error', () => resolve(false));
  });
}

async function start(mode) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-zsize-'));
  dirs.push(dir);
  const port = await freePort();
  const proc = spawn(process.execPath, [...NODE_FLAGS, MAIN, '--port', String(port), '--http-port', '-1', '--dir', dir, '--appendfsync', mode], { stdio: 'ignore' });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  while (!(await ping(port))) await new Promise((r) => setTimeout(r, 20));
  return { port, proc };
}

/** Pipelined commands on one connection, `chunk` at a time; resolves when all are answered. */
function pipeline(port, commands, chunk = 20) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    let sent = 0;
    let lines = 0;
    const send = () => {
      let out = '';
      const end = Math.min(commands.length, sent + chunk);
      for (; sent < end; sent++) {
        const a = commands[sent];
        out += `*${a.length}\r\n` + a.map((x) => `$${x.length}\r\n${x}\r\n`).join('');
      }
      s.write(out);
    };
    s.on('connect', send);
    s.on('error', reject);
    s.on('data', (d) => {
      for (const b of d) if (b === 10) lines++; // integer replies: one line each
      if (lines === sent && sent < commands.length) send();
      if (lines === commands.length) {
        s.destroy();
        resolve();
      }
    });
  });
}

const pad12 = (i) => String(i).padStart(12, '0');

async function fill(port) {
  for (const [key, n] of [['small', SMALL], ['big', BIG]]) {
    const cmds = [];
    for (let j = 0; j < n; j += 1000) {
      const a = ['ZADD', key];
      for (let i = j; i < Math.min(n, j + 1000); i++) a.push(String(i), `m${pad12(i)}`);
      cmds.push(a);
    }
    await pipeline(port, cmds);
  }
}

function bench(port, key, n, requests) {
  return new Promise((resolve, reject) => {
    const p = spawn('redis-benchmark', ['-p', String(port), '--csv', '-c', '50', '-n', String(requests), '-r', String(n),
      'ZADD', key, '__rand_int__', 'm__rand_int__'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.add(p);
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', () => {
      children.delete(p);
      const m = /"([\d.]+)"/.exec(out.trim().split('\n').pop() ?? '');
      if (m) resolve(Number(m[1]));
      else reject(new Error(`redis-benchmark: ${out}`));
    });
  });
}

/** CPU seconds (utime + stime of all threads) and write_bytes of the process. */
function usage(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tick = 100;
  const cpu = (Number(f[11]) + Number(f[12])) / tick;
  const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
  const wb = Number(/write_bytes: (\d+)/.exec(io)[1]);
  return { cpu, wb };
}

/** CPU seconds per thread name (main thread first), for THREADS=1. */
function threads(pid) {
  const out = new Map();
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) + (Number(t) === pid ? '*' : '');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      // thread gone
    }
  }
  return out;
}

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`# ${MAIN}; ${N} requests per run, ${ROUNDS} rounds; load ${load()}`);
console.log('mode\tkey\treq/s\tCPU us/op\twritten B/op');
for (const mode of MODES) {
  const s = await start(mode);
  await fill(s.port);
  // Let the fill's commits and the sync settle, then one unmeasured run per key.
  await new Promise((r) => setTimeout(r, 2000));
  for (const key of ['small', 'big']) await bench(s.port, key, key === 'big' ? BIG : SMALL, N);
  const res = { small: [], big: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const key of ['small', 'big']) {
      await new Promise((r2) => setTimeout(r2, 1200)); // the previous run's commits and sync
      const u0 = usage(s.proc.pid);
      const t0 = process.env.THREADS ? threads(s.proc.pid) : null;
      const rate = await bench(s.port, key, key === 'big' ? BIG : SMALL, N);
      await new Promise((r2) => setTimeout(r2, 1200)); // its own last commit and sync
      const u1 = usage(s.proc.pid);
      const row = { rate, cpu: ((u1.cpu - u0.cpu) * 1e6) / N, wb: (u1.wb - u0.wb) / N };
      res[key].push(row);
      console.log(`${mode}\t${key}\t${Math.round(rate)}\t${row.cpu.toFixed(1)}\t${Math.round(row.wb)}`);
      if (t0 !== null) {
        const t1 = threads(s.proc.pid);
        console.log('\t' + [...t1].map(([n, c]) => [n, ((c - (t0.get(n) ?? 0)) * 1e6) / N]).filter(([, c]) => c >= 0.5).map(([n, c]) => `${n} ${c.toFixed(1)}`).join(', '));
      }
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const rs = med(res.small.map((x) => x.rate));
  const rb = med(res.big.map((x) => x.rate));
  console.log(`${mode}\tmedian\tbig/small ${(rb / rs).toFixed(2)}x (${Math.round(rb)} / ${Math.round(rs)}); CPU us/op ${med(res.big.map((x) => x.cpu)).toFixed(1)} / ${med(res.small.map((x) => x.cpu)).toFixed(1)}; load ${load()}`);
  s.proc.kill('SIGKILL');
}
process.exit(0);
