#!/usr/bin/env node
/**
 * Fairness under bulk load (issue 21): while `redis-cli --pipe` loads N `SET key:<i> <16 bytes>`,
 * a second client sends PING every 50 ms and times each reply. Prints, per server and round,
 * the load time and the PING p50 / p99 / max, ours and redis-server alternating.
 *
 *   npm run build && node bench/fairness.mjs [--n 2000000] [--rounds 2] [--fsync no|everysec]
 *
 * --fsync everysec: ours with --appendfsync everysec (LMDB + journal), Redis with
 * appendonly yes, appendfsync everysec. Bounded: each load stops after 600 s.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { NODE_FLAGS, oursArgv } from './server-cmd.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const N = Number(arg('n', '2000000'));
const ROUNDS = Number(arg('rounds', '2'));
const FSYNC = arg('fsync', 'no');
const WHO = arg('servers', 'ours,redis').split(',');
const BASE_PORT = Number(arg('port', process.env.FAIR_PORT ?? '0'));
// --log FILE: our server's stderr goes there (with REDSTASH_TRACE_STALLS, NODE_OPTIONS=--trace-gc...).
const LOG = arg('log', '');
// --node-flags '--cpu-prof --cpu-prof-dir=/tmp/x': extra Node flags for our server (after npm start's: they win).
const EXTRA = arg('node-flags', '').split(/\s+/).filter(Boolean);

const cmdFile = path.join(os.tmpdir(), `fairness-${N}.resp`);
if (!fs.existsSync(cmdFile)) {
  const fd = fs.openSync(cmdFile, 'w');
  const val = 'v'.repeat(16);
  let s = '';
  for (let i = 0; i < N; i++) {
    const k = `key:${i}`;
    s += `*3\r\n$3\r\nSET\r\n$${k.length}\r\n${k}\r\n$16\r\n${val}\r\n`;
    if (s.length > 1 << 20) { fs.writeSync(fd, s); s = ''; }
  }
  fs.writeSync(fd, s);
  fs.closeSync(fd);
}

/** The server's user + system CPU seconds so far (Linux /proc; NaN elsewhere). */
function cpuSeconds(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

function freePort() {
  if (BASE_PORT) return Promise.resolve(BASE_PORT);
  return new Promise((resolve) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); }); });
}

async function waitPort(port) {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((r) => { const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); }); s.on('error', () => r(false)); });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no server on ' + port);
}

async function round(who) {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fair-'));
  const proc = who === 'ours'
    ? spawn(process.execPath, oursArgv(['--port', String(port), '--http-port', '-1', '--appendfsync', FSYNC, '--dir', dir]).toSpliced(NODE_FLAGS.length, 0, ...EXTRA),
      { stdio: LOG ? ['ignore', fs.openSync(LOG, 'a'), fs.openSync(LOG, 'a')] : 'ignore' })
    : spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir,
      ...(FSYNC === 'no' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', FSYNC])], { stdio: 'ignore' });
  try {
    await waitPort(port);
    const sock = net.connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    const lat = [];
    let sentAt = 0;
    let timer = null;
    sock.on('data', () => { lat.push(performance.now() - sentAt); timer = setTimeout(ping, 50); });
    const ping = () => { sentAt = performance.now(); sock.write('PING\r\n'); };
    const t0 = performance.now();
    const pipe = spawn('redis-cli', ['-p', String(port), '--pipe'], { stdio: [fs.openSync(cmdFile, 'r'), 'pipe', 'inherit'] });
    let out = '';
    pipe.stdout.on('data', (d) => { out += d; });
    ping();
    const killer = setTimeout(() => pipe.kill('SIGKILL'), 600000);
    await new Promise((r) => pipe.on('exit', r));
    clearTimeout(killer);
    const loadS = (performance.now() - t0) / 1000;
    const cpuS = cpuSeconds(proc.pid);
    clearTimeout(timer);
    sock.destroy();
    const s = [...lat].sort((a, b) => a - b);
    const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
    const replies = /replies: (\d+)/.exec(out)?.[1];
    return { who, loadS, cpuS, pings: s.length, p50: q(0.5), p99: q(0.99), max: s[s.length - 1], replies };
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`# ${new Date().toISOString()} N=${N} fsync=${FSYNC} load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log('server  load s   CPU s   pings  p50 ms  p99 ms  max ms  replies');
for (let r = 0; r < ROUNDS; r++) {
  for (const who of r % 2 === 0 ? WHO : [...WHO].reverse()) {
    const x = await round(who);
    console.log(`${x.who.padEnd(6)} ${x.loadS.toFixed(1).padStart(7)} ${x.cpuS.toFixed(1).padStart(7)} ${String(x.pings).padStart(7)} ${x.p50.toFixed(1).padStart(7)} ${x.p99.toFixed(1).padStart(7)} ${x.max.toFixed(1).padStart(7)}  ${x.replies}`);
  }
}
console.log(`# load after: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
