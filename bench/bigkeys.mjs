#!/usr/bin/env node
/**
 * Large keyspaces (issue 21): `redis-cli --pipe` of N `SET key:<12 digits> <V bytes>` into our
 * server and into redis-server, in alternating rounds, at each size N; per server and round:
 *
 *   load     wall time of the --pipe load, the server's CPU time over it (utime+stime), and
 *            a second client's PING round trips during it (sent every 50 ms: p50 and max)
 *   rss      VmRSS after the load (2 s settle)
 *   get      (--get) redis-benchmark -t get -r N -n GET_REQUESTS -c 50 at -P 1 and -P 16:
 *            ops/s, p50, p99 and the server's CPU µs per GET (the keys are redis-benchmark's
 *            key:__rand_int__ form, so they hit)
 *   restart  (--restart, persistent modes) kill -9 after the load, then the time from spawning
 *            the server to its first PONG and to the whole keyspace loaded (ours: DBSIZE = N,
 *            which waits for the background load; Redis: PING answers once loaded)
 *
 * Modes (--modes): `no` = ours --appendfsync no vs Redis without persistence; `everysec` =
 * ours --appendfsync everysec vs Redis appendonly yes, appendfsync everysec.
 *
 *   node bench/bigkeys.mjs --sizes 1000000,4000000 --value 16 --modes no,everysec --rounds 2 --get --restart
 *   [--main dist/main.js] [--port-base 21800] [--node-flags "--max-semi-space-size=4"]
 *
 * The command files are written once to $TMPDIR/rs-bigkeys-N-V.resp and reused. Bounded: the
 * whole run stops after TIME_LIMIT_S (default 1500) and kills only the processes it started.
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from './server-cmd.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const flag = (name) => process.argv.includes(`--${name}`);
const SIZES = arg('sizes', '1000000').split(',').map(Number);
const VALUE = Number(arg('value', '16'));
const MODES = arg('modes', 'no').split(',');
const ROUNDS = Number(arg('rounds', '1'));
const MAIN = path.resolve(arg('main', path.join(ROOT, 'dist', 'main.js')));
const NODE = arg('node-flags', NODE_FLAGS.join(' ')).split(' ').filter(Boolean);
const PORT_BASE = Number(arg('port-base', '21800'));
const GET_REQUESTS = Number(process.env.GET_REQUESTS ?? 300000);
const TIME_LIMIT_S = Number(process.env.TIME_LIMIT_S ?? 1500);
const ONLY = arg('only', 'ours,redis').split(',');

const children = new Set();
function track(p) {
  children.add(p);
  p.once('exit', () => children.delete(p));
  return p;
}
const limit = setTimeout(() => {
  console.error(`time limit of ${TIME_LIMIT_S} s reached: stopping`);
  for (const p of children) p.kill('SIGKILL');
  process.exit(2);
}, TIME_LIMIT_S * 1000);
limit.unref();
process.on('SIGINT', () => {
  for (const p of children) p.kill('SIGKILL');
  process.exit(130);
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function commandFile(n) {
  const file = path.join(os.tmpdir(), `rs-bigkeys-${n}-${VALUE}.resp`);
  if (fs.existsSync(file)) return file;
  const fd = fs.openSync(file + '.tmp', 'w');
  const val = 'v'.repeat(VALUE);
  const head = `*3\r\n$3\r\nSET\r\n$16\r\n`;
  const tail = `\r\n$${VALUE}\r\n${val}\r\n`;
  let chunk = '';
  for (let i = 0; i < n; i++) {
    chunk += head + 'key:' + String(i).padStart(12, '0') + tail;
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  fs.renameSync(file + '.tmp', file);
  return file;
}

function cpuMs(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, 100 ticks/s
  } catch {
    return NaN;
  }
}

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** One RESP command on a fresh connection; resolves with the raw reply text (first complete line / bulk). */
function command(port, argv, timeoutMs = 120000) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    let buf = '';
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error(`timeout: ${argv.join(' ')}`));
    }, timeoutMs);
    s.on('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
    s.on('data', (d) => {
      buf += d.toString('latin1');
      const nl = buf.indexOf('\r\n');
      if (nl < 0) return;
      if (buf[0] === '$') {
        const len = Number(buf.slice(1, nl));
        if (buf.length < nl + 2 + len + 2) return;
        buf = buf.slice(nl + 2, nl + 2 + len);
      } else buf = buf.slice(0, nl);
      clearTimeout(t);
      s.destroy();
      resolve(buf);
    });
    s.write(`*${argv.length}\r\n${argv.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
  });
}

async function waitPort(port, proc, ms = 60000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (proc.exitCode !== null) throw new Error(`server exited (${proc.exitCode})`);
    try {
      const r = await command(port, ['PING'], 2000);
      return r;
    } catch {
      await sleep(20);
    }
  }
  throw new Error(`no answer on ${port}`);
}

/** PING every 50 ms on one connection while `run` is pending: round trips in ms. */
function prober(port) {
  const s = net.connect({ port, host: '127.0.0.1' });
  s.setNoDelay(true);
  const rtts = [];
  let sent = 0;
  let timer = null;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    sent = performance.now();
    s.write('*1\r\n$4\r\nPING\r\n');
  };
  s.on('data', () => {
    rtts.push(performance.now() - sent);
    if (!stopped) timer = setTimeout(tick, 50);
  });
  s.on('error', () => {});
  s.on('connect', tick);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      // A PING still unanswered counts with its wait so far.
      if (sent !== 0 && rtts.length === 0) rtts.push(performance.now() - sent);
      s.destroy();
      return rtts;
    },
  };
}

const pct = (a, p) => {
  if (a.length === 0) return NaN;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

function startOurs(port, dir, mode) {
  // --server-log FILE: our server's output (e.g. with --node-flags "--trace-gc") appended there.
  const log = arg('server-log', null);
  const out = log === null ? 'ignore' : fs.openSync(log, 'a');
  return track(spawn(process.execPath, [...NODE, MAIN, '--port', String(port), '--http-port', '-1', '--dir', dir, '--appendfsync', mode], { stdio: ['ignore', out, out] }));
}

function startRedis(port, dir, mode) {
  const persist = mode === 'no' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', mode];
  return track(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...persist], { stdio: ['ignore', 'ignore', 'ignore'] }));
}

function pipeLoad(port, file) {
  return new Promise((resolve, reject) => {
    const p = track(spawn('sh', ['-c', `redis-cli -p ${port} --pipe --pipe-timeout 600 < ${file}`], { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('exit', (code) => (code === 0 && /errors: 0/.test(out) ? resolve(out) : reject(new Error(`--pipe: ${code} ${out}`))));
  });
}

function benchGet(port, n, pipeline) {
  const out = execFileSync('redis-benchmark', ['-p', String(port), '-t', 'get', '-r', String(n), '-n', String(GET_REQUESTS), '-c', '50', '-P', String(pipeline), '-q', '--csv'], { encoding: 'utf8', timeout: 300000 });
  const line = out.trim().split('\n').find((l) => l.startsWith('"GET"'));
  const f = line.split(',').map((x) => Number(x.replace(/"/g, '')));
  return { rps: f[1], p50: f[4], p99: f[6] };
}

function stopProc(p) {
  return new Promise((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    const t = setTimeout(() => p.kill('SIGKILL'), 30000);
    p.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    p.kill('SIGTERM');
  });
}

async function one(which, n, mode, port) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rs-bigkeys-${which}-`));
  const start = which === 'ours' ? startOurs : startRedis;
  let proc = start(port, dir, mode);
  const row = { which, n, mode };
  try {
    await waitPort(port, proc);
    const file = commandFile(n);
    const cpu0 = cpuMs(proc.pid);
    const probe = prober(port);
    const t0 = performance.now();
    await pipeLoad(port, file);
    row.loadS = (performance.now() - t0) / 1000;
    const rtts = probe.stop();
    row.cpuS = (cpuMs(proc.pid) - cpu0) / 1000;
    row.pingP50 = pct(rtts, 50);
    row.pingMax = Math.max(...rtts);
    await sleep(2000);
    row.rssMb = rssMb(proc.pid);
    if (flag('get')) {
      for (const P of [1, 16]) {
        const c0 = cpuMs(proc.pid);
        const g = benchGet(port, n, P);
        g.cpuUs = ((cpuMs(proc.pid) - c0) * 1000) / GET_REQUESTS;
        row[`get${P}`] = g;
      }
    }
    if (flag('restart') && mode !== 'no') {
      await sleep(1500); // everysec: the last second reaches the file
      proc.kill('SIGKILL');
      await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r() : proc.once('exit', r)));
      const t1 = performance.now();
      proc = start(port, dir, mode);
      let first = null;
      for (;;) {
        if (proc.exitCode !== null) throw new Error('restart failed');
        let r;
        try {
          r = await command(port, ['PING'], 5000);
        } catch {
          await sleep(20);
          continue;
        }
        if (first === null) first = performance.now() - t1;
        if (r === '+PONG') break;
        await sleep(20); // Redis: -LOADING
      }
      row.pongS = first / 1000;
      const size = await command(port, ['DBSIZE'], 600000);
      row.fullS = (performance.now() - t1) / 1000;
      row.restartKeys = Number(size.slice(1));
    }
  } finally {
    await stopProc(proc);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return row;
}

function fmt(r) {
  const g = (P) => (r[`get${P}`] ? `${Math.round(r[`get${P}`].rps)} p50 ${r[`get${P}`].p50} p99 ${r[`get${P}`].p99} cpu ${r[`get${P}`].cpuUs.toFixed(2)} µs/op` : '-');
  return [
    r.which.padEnd(5), String(r.n).padStart(9), r.mode.padEnd(8), `load ${r.loadS.toFixed(1)} s`, `cpu ${r.cpuS.toFixed(1)} s`,
    `ping p50 ${r.pingP50.toFixed(1)} max ${r.pingMax.toFixed(0)} ms`, `rss ${r.rssMb.toFixed(0)} MB`,
    `GET -P1 ${g(1)}`, `-P16 ${g(16)}`,
    r.fullS !== undefined ? `restart pong ${r.pongS.toFixed(1)} s full ${r.fullS.toFixed(1)} s (${r.restartKeys})` : '',
  ].join(' | ');
}

async function main() {
  console.log(`# ${new Date().toISOString()} load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} node ${process.version} flags ${NODE.join(' ')} value ${VALUE} B`);
  const rows = [];
  for (const n of SIZES) {
    for (const mode of MODES) {
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? ['ours', 'redis'] : ['redis', 'ours'];
        for (const which of order) {
          if (!ONLY.includes(which)) continue;
          const r = await one(which, n, mode, PORT_BASE + (which === 'ours' ? 1 : 2));
          rows.push(r);
          console.log(`${fmt(r)} | load avg ${os.loadavg()[0].toFixed(1)}`);
        }
      }
    }
  }
  const out = arg('json', null);
  if (out) fs.writeFileSync(out, JSON.stringify(rows, null, 2));
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  for (const p of children) p.kill('SIGKILL');
  process.exit(1);
});
