#!/usr/bin/env node
/**
 * CPU per op of the server process under redis-benchmark, for two builds of ours and
 * redis-server, started once and measured in alternating rounds (A, B, redis, A, B, redis...),
 * so that the load of a shared machine falls on all three alike. Reports the median utime+stime
 * per request (from /proc/<pid>/stat) and ops/s.
 *
 *   cp -r /tmp/base-dist ./base-dist    # a build must sit in the tree to find node_modules
 *   CPUAB_A=base-dist CPUAB_B=dist CPUAB_TESTS=get,incr,hset CPUAB_P=16 CPUAB_C=50 \
 *     CPUAB_N=1000000 CPUAB_ROUNDS=3 CPUAB_PORT=7510 node bench/cpu-ab.mjs
 *
 * Node flags and environment per build (default: those of `npm start`, bench/server-cmd.mjs):
 *   CPUAB_R=1000000 (random keys, redis-benchmark -r)
 *   CPUAB_FLAGS_A='--max-semi-space-size=4' CPUAB_ENV_A='MALLOC_MMAP_THRESHOLD_=' (empty: unset)
 *
 * /proc CPU times tick at 10 ms: give each figure >= 1 s of server CPU (-P 16: 1M requests).
 */
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { NODE_FLAGS } from './server-cmd.mjs';

const A = path.resolve(process.env.CPUAB_A ?? 'base-dist');
const B = path.resolve(process.env.CPUAB_B ?? 'dist');
const TESTS = (process.env.CPUAB_TESTS ?? 'get,set,incr,lpush,lpop,sadd,hset,zadd').split(',');
const P = Number(process.env.CPUAB_P ?? 16);
const N = Number(process.env.CPUAB_N ?? 1000000);
const ROUNDS = Number(process.env.CPUAB_ROUNDS ?? 3);
const PORT = Number(process.env.CPUAB_PORT ?? 7510);
const CLIENTS = String(process.env.CPUAB_C ?? 50);
/** CPUAB_R=n: redis-benchmark -r n (random keys / members: the data set grows through the run). */
const RAND = process.env.CPUAB_R ? ['-r', process.env.CPUAB_R] : [];
/** CPUAB_APPENDFSYNC=everysec|always: ours with that mode, redis-server with AOF and the same fsync (default no: neither persists). */
const FSYNC = process.env.CPUAB_APPENDFSYNC ?? 'no';
const REDIS_AOF = FSYNC === 'no' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', FSYNC];
/**
 * Tests beyond redis-benchmark's -t names: a custom command line (sets of session 12: many
 * small sets under -r 100000, filled by `ssadd` first, then read; run them in this order).
 */
const CUSTOM = {
  ssadd: ['-r', '100000', 'SADD', 'set:__rand_int__', 'm:__rand_int__'],
  ssismember: ['-r', '100000', 'SISMEMBER', 'set:__rand_int__', 'm:__rand_int__'],
  ssmembers: ['-r', '100000', 'SMEMBERS', 'set:__rand_int__'],
  ssrandmember: ['-r', '100000', 'SRANDMEMBER', 'set:__rand_int__'],
  ssinter: ['-r', '100000', 'SINTER', 'set:__rand_int__', 'set:__rand_int__'],
  ssrem: ['-r', '100000', 'SREM', 'set:__rand_int__', 'm:__rand_int__'],
  ssismember1: ['SISMEMBER', 'myset', 'element:__rand_int__'],
  // BullMQ's events stream (issue 21): XADD with MAXLEN ~ 10000 and `*` ids.
  xadd: ['XADD', 'bull:q:events', 'MAXLEN', '~', '10000', '*', 'event', 'added', 'jobId', '__rand_int__', 'name', 'job'],
};
const testArgs = (t) => CUSTOM[t] ?? ['-t', t];
const CLK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function cpu(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(x[11]) + Number(x[12])) / CLK;
}
async function up(port) {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((r) => { const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); }); s.on('error', () => r(false)); });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`port ${port} not up`);
}
const dirs = [];
function ours(dist, port, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cpuab-'));
  dirs.push(dir);
  const flags = process.env[`CPUAB_FLAGS_${name}`]?.split(/\s+/).filter(Boolean) ?? NODE_FLAGS;
  const env = { ...process.env };
  for (const kv of (process.env[`CPUAB_ENV_${name}`] ?? '').split(/\s+/).filter(Boolean)) {
    const [k, v] = [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)];
    if (v === '') delete env[k];
    else env[k] = v;
  }
  return spawn(process.execPath, [...flags, path.join(dist, 'main.js'), '--port', String(port), '--http-port', '-1', '--appendfsync', FSYNC, '--dir', dir], { stdio: 'ignore', env });
}
const redisDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cpuab-redis-'));
dirs.push(redisDir);
const servers = [
  { name: 'A', proc: ours(A, PORT, 'A'), port: PORT },
  { name: 'B', proc: ours(B, PORT + 1, 'B'), port: PORT + 1 },
  { name: 'redis', proc: spawn('redis-server', ['--port', String(PORT + 2), '--save', '', ...REDIS_AOF, '--dir', redisDir], { stdio: 'ignore' }), port: PORT + 2 },
];
try {
  for (const s of servers) await up(s.port);
  const res = {};
  console.log(`# ${new Date().toISOString()} load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; -c ${CLIENTS} -P ${P} -n ${N}${RAND.length ? ` -r ${RAND[1]}` : ''}, appendfsync ${FSYNC}, ${ROUNDS} rounds; A=${A} ${process.env.CPUAB_FLAGS_A ?? ""} ${process.env.CPUAB_ENV_A ?? ""} B=${B} ${process.env.CPUAB_FLAGS_B ?? ""} ${process.env.CPUAB_ENV_B ?? ""}`);
  for (const t of TESTS) for (const s of servers) spawnSync('redis-benchmark', ['-p', String(s.port), '-c', CLIENTS, '-P', String(P), '-n', String(Math.min(N, 200000)), '-q', ...RAND, ...testArgs(t)]);
  for (let r = 0; r < ROUNDS; r++) for (const t of TESTS) for (const s of servers) {
    const c0 = cpu(s.proc.pid);
    const out = spawnSync('redis-benchmark', ['-p', String(s.port), '-c', CLIENTS, '-P', String(P), '-n', String(N), '-q', ...RAND, ...testArgs(t)], { encoding: 'utf8' }).stdout;
    const c1 = cpu(s.proc.pid);
    const m = /([\d.]+) requests per second/.exec(out.split('\r').pop() ?? '');
    ((res[t] ??= {})[s.name] ??= []).push({ cpu: ((c1 - c0) * 1e6) / N, rps: m ? Number(m[1]) : NaN });
  }
  const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
  console.log('test     A µs/op  B µs/op  redis µs/op   B/A   B/redis   A rps   B rps   redis rps  (B cpu rounds)');
  for (const t of TESTS) {
    const m = Object.fromEntries(servers.map((s) => [s.name, { cpu: med(res[t][s.name].map((x) => x.cpu)), rps: med(res[t][s.name].map((x) => x.rps)) }]));
    console.log(`${t.padEnd(6)} ${m.A.cpu.toFixed(2).padStart(8)} ${m.B.cpu.toFixed(2).padStart(8)} ${m.redis.cpu.toFixed(2).padStart(11)} ${(m.B.cpu / m.A.cpu).toFixed(2).padStart(6)} ${(m.B.cpu / m.redis.cpu).toFixed(2).padStart(8)} ${String(Math.round(m.A.rps)).padStart(8)} ${String(Math.round(m.B.rps)).padStart(7)} ${String(Math.round(m.redis.rps)).padStart(10)}  (${res[t].B.map((x) => x.cpu.toFixed(2)).join(' ')})`);
  }
  console.log(`# load after ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
} finally {
  for (const s of servers) s.proc.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
}
