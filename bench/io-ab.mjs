#!/usr/bin/env node
/**
 * A/B of the TCP I/O path at `redis-benchmark -P 1` (sequential request/reply): our server in
 * several variants (environment settings, or other dist/ trees) and redis-server, in alternating
 * rounds; per round the server's user and system CPU per request (/proc/<pid>/stat) beside the
 * ops/s. Medians per variant at the end.
 *
 *   node bench/io-ab.mjs                              # ours vs redis, GET and SET
 *   IOAB_VARIANTS='base:;nocb:RS_IO=nocb' IOAB_TESTS=get IOAB_ROUNDS=5 node bench/io-ab.mjs
 *
 * A variant is `name:ENV=v,ENV2=v[:distdir]`. IOAB_TESTS=set,get,strlen IOAB_D=100: GET and
 * STRLEN (a custom command line) of the 100-byte values SET wrote. The test `evalsha` runs EVALSHA of a script with
 * IOAB_CALLS (default 2) redis.call('GET') on one key (loaded on every server first).
 */
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { start, stop } from './proc.mjs';
import { NODE_FLAGS } from './server-cmd.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const TESTS = (process.env.IOAB_TESTS ?? 'get,set').split(',');
const ROUNDS = Number(process.env.IOAB_ROUNDS ?? 3);
const N = Number(process.env.IOAB_N ?? 200000);
const P = Number(process.env.IOAB_P ?? 1);
const C = Number(process.env.IOAB_C ?? 50);
const PORT0 = Number(process.env.IOAB_PORT ?? 22000);
/** SET's value size (redis-benchmark -d); run `set` first for GET/STRLEN of those values. */
const D = Number(process.env.IOAB_D ?? 3);
const variants = (process.env.IOAB_VARIANTS ?? 'ours:').split(';').map((v) => {
  const [name, envs = '', dist = path.join(ROOT, 'dist')] = v.split(':');
  const env = {};
  for (const kv of envs.split(',').filter(Boolean)) { const i = kv.indexOf('='); env[kv.slice(0, i)] = kv.slice(i + 1); }
  return { name, env, dist };
});

function cpu(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return { u: Number(x[11]) / CLK_TCK, s: Number(x[12]) / CLK_TCK };
}

const servers = [];
let port = PORT0;
for (const v of variants) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ioab-'));
  const p = port++;
  const proc = spawn(process.execPath, [...NODE_FLAGS, path.join(v.dist, 'main.js'), '--port', String(p), '--http-port', '-1', '--appendfsync', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...v.env } });
  servers.push({ name: v.name, proc, port: p, dir });
}
{
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ioab-'));
  const p = port++;
  const proc = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  servers.push({ name: 'redis', proc, port: p, dir });
}
const kill = () => { for (const s of servers) try { s.proc.kill('SIGKILL'); } catch {} };
process.on('exit', kill);
process.on('SIGINT', () => { kill(); process.exit(1); });
for (const s of servers) {
  for (let i = 0; i < 300; i++) {
    const r = spawnSync('redis-cli', ['-p', String(s.port), 'PING'], { encoding: 'utf8' });
    if (r.stdout.trim() === 'PONG') break;
    await new Promise((r) => setTimeout(r, 50));
  }
}
const CALLS = Number(process.env.IOAB_CALLS ?? 2);
const script = `local v ${Array.from({ length: CALLS }, () => "v = redis.call('GET', KEYS[1])").join(' ')} return v`;
let sha = '';
for (const s of servers) sha = spawnSync('redis-cli', ['-p', String(s.port), 'SCRIPT', 'LOAD', script], { encoding: 'utf8' }).stdout.trim();
const res = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const t of TESTS) {
    // Alternate the order of the servers between rounds.
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) {
      const a = cpu(s.proc.pid);
      const what = t === 'evalsha' ? ['EVALSHA', sha, '1', 'key:__rand_int__'] : t === 'strlen' ? ['STRLEN', 'key:__rand_int__'] : ['-t', t];
      const r = spawnSync('redis-benchmark', ['-h', '127.0.0.1', '-p', String(s.port), '-c', String(C), '-n', String(N), '-P', String(P), '-r', '100000', '-d', String(D), '--csv', ...what], { encoding: 'utf8', timeout: 120000 });
      const b = cpu(s.proc.pid);
      const line = r.stdout.split('\n').find((l) => /^"[A-Za-z]/.test(l) && !l.startsWith('"test"'));
      const rps = line ? Number(line.split(',')[1].replace(/"/g, '')) : NaN;
      const row = { rps, u: (b.u - a.u) / N * 1e6, s: (b.s - a.s) / N * 1e6 };
      (res[`${t} ${s.name}`] ??= []).push(row);
      console.log(`round ${round} ${t} ${s.name}: ${Math.round(rps)} ops/s, user ${row.u.toFixed(2)} sys ${row.s.toFixed(2)} µs/op  load ${os.loadavg()[0].toFixed(1)}`);
    }
  }
}
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
console.log(`\n| test | server | ops/s | user µs/op | sys µs/op | total µs/op |`);
console.log('|---|---|---|---|---|---|');
for (const [k, rows] of Object.entries(res)) {
  const [t, n] = k.split(' ');
  console.log(`| ${t} -P ${P} | ${n} | ${Math.round(med(rows.map((r) => r.rps)))} | ${med(rows.map((r) => r.u)).toFixed(2)} | ${med(rows.map((r) => r.s)).toFixed(2)} | ${med(rows.map((r) => r.u + r.s)).toFixed(2)} |`);
}
console.log(`load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
kill();
for (const s of servers) fs.rmSync(s.dir, { recursive: true, force: true });
