/**
 * Background load of big collections: how long the event loop is blocked at most while a
 * server restarts with one N-field hash and one N-member sorted set (random scores), and how
 * long the whole load takes.
 *
 *   node bench/bigload.mjs [--n 1000000] [--rounds 3] [--main dist/main.js] [--dir DIR]
 *
 * The data set is written once into DIR (kept, reused when it exists). Each round spawns the
 * server on it, connects as soon as the port accepts and sends PING (one at a time, 1 ms
 * apart) until `INFO persistence` says `async_loading:0`: the worst PING round trip is the
 * longest stall a client saw; `lmdb_load_time_ms` is the server's own load time. Bounded:
 * stops by itself after TIME_LIMIT_S. Reference: the same script run with --main pointing at
 * another build (before/after), in the same session.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort } from './proc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const N = Number(arg('n', '1000000'));
const ROUNDS = Number(arg('rounds', '3'));
const MAIN = path.resolve(arg('main', path.join(ROOT, 'dist', 'main.js')));
const DIR = arg('dir', path.join(os.tmpdir(), `rs-bigload-${N}`));
const TIME_LIMIT_S = 300;

const children = new Set();
const deadline = setTimeout(() => {
  console.error(`time limit of ${TIME_LIMIT_S} s reached: stopping`);
  for (const p of children) p.kill('SIGKILL');
  process.exit(2);
}, TIME_LIMIT_S * 1000);
deadline.unref();


/** Spawn the server; resolves with a socket connected as soon as the port accepts (no PING yet). */
async function start() {
  const port = await freePort();
  const proc = spawn(process.execPath, [MAIN, '--port', String(port), '--http-port', '0', '--dir', DIR, '--appendfsync', 'everysec'], { stdio: 'ignore' });
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited (${proc.exitCode})`);
    const sock = await new Promise((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(s));
      s.on('error', () => resolve(null));
    });
    if (sock !== null) return { port, proc, sock };
    await new Promise((r) => setTimeout(r, 2));
  }
}

function stop(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

async function fill() {
  if (fs.existsSync(path.join(DIR, 'lmdb'))) return;
  fs.mkdirSync(DIR, { recursive: true });
  const { port, proc, sock } = await start();
  sock.destroy();
  const r = new Redis({ port, host: '127.0.0.1' });
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  for (let i = 0; i < N; i += 1000) {
    const p = r.pipeline();
    const h = [];
    const z = [];
    for (let j = i; j < Math.min(N, i + 1000); j++) {
      h.push(`field:${j}`, `value:${j}`);
      z.push(String(Math.floor(rnd() * 1e9)), `member:${j}`);
    }
    p.hset('big:h', ...h);
    p.zadd('big:z', ...z);
    await p.exec();
  }
  r.disconnect();
  await stop(proc);
}

async function round() {
  const { port, proc, sock } = await start();
  const info = new Redis({ port, host: '127.0.0.1', enableReadyCheck: false });
  let worst = 0;
  let pings = 0;
  let done = false;
  const pinger = new Promise((resolve) => {
    let t = 0;
    const send = () => {
      if (done) return resolve();
      t = performance.now();
      sock.write('*1\r\n$4\r\nPING\r\n');
    };
    sock.on('data', () => {
      const d = performance.now() - t;
      if (d > worst) worst = d;
      pings++;
      setTimeout(send, 1);
    });
    send();
  });
  let loadMs = 0;
  for (;;) {
    const s = await info.info('persistence');
    if (/async_loading:0/.test(s)) {
      loadMs = Number(/lmdb_load_time_ms:(\d+)/.exec(s)?.[1] ?? -1);
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  done = true;
  await pinger;
  const sizes = [await info.hlen('big:h'), await info.zcard('big:z')];
  sock.destroy();
  info.disconnect();
  await stop(proc);
  return { worst, pings, loadMs, sizes };
}

await fill();
console.log(`main ${MAIN}; N ${N}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const res = [];
for (let i = 0; i < ROUNDS; i++) {
  const r = await round();
  res.push(r);
  console.log(`round ${i + 1}: worst PING round trip ${r.worst.toFixed(1)} ms over ${r.pings} pings; lmdb_load_time_ms ${r.loadMs}; sizes ${r.sizes.join(' ')}; load average ${os.loadavg()[0].toFixed(2)}`);
}
const med = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`median: worst block ${med(res.map((r) => r.worst)).toFixed(1)} ms, load ${med(res.map((r) => r.loadMs))} ms`);
