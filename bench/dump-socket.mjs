// DUMP / RESTORE of a 100-byte string and a 100-field hash at -P 1 (50 clients) against
// redis-server, CPU per op of the server (all its threads, /proc) beside ops/s, builds and Redis
// alternated round by round. DUMP is driven by redis-benchmark (C: the load generator does not
// compete with the server as much as a Node one); RESTORE, whose payload is binary, by a Node
// closed loop.
//   node bench/dump-socket.mjs [distA] [distB ...]     (ROUNDS=3 N=100000 PORT=<spare>)
//   SAME=1 ROUNDS=8 node bench/dump-socket.mjs base-dist dist   (servers started once, order rotated: A/B)
//   SAME=1 ROWS='RESTORE string,DUMP string' ...                 (only these rows)
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { NODE_FLAGS } from './server-cmd.mjs';

const dists = process.argv.slice(2);
if (dists.length === 0) dists.push('dist');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const N = Number(process.env.N ?? 100_000);
const CLIENTS = 50;

const cpu = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms (CLK_TCK 100)
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const spare = () => new Promise((res) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
const cli = (port, ...a) => execFileSync('redis-cli', ['-p', String(port), ...a], { encoding: 'latin1', stdio: ['ignore', 'pipe', 'ignore'] });

async function up(port) {
  for (let i = 0; i < 600; i++) {
    try { if (cli(port, 'PING').startsWith('PONG')) return; } catch { /* not yet */ }
    await sleep(50);
  }
  throw new Error('no PONG');
}

/** The bulk reply of one command, raw bytes. */
function bulk(port, args) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let b = Buffer.alloc(0);
    s.on('error', reject);
    s.on('data', (x) => {
      b = Buffer.concat([b, x]);
      const e = b.indexOf('\r\n');
      if (e < 0) return;
      const n = Number(b.subarray(1, e));
      if (b.length >= e + 2 + n + 2) { s.destroy(); resolve(b.subarray(e + 2, e + 2 + n)); }
    });
    s.write(`*${args.length}\r\n${args.map((a) => `$${a.length}\r\n${a}\r\n`).join('')}`);
  });
}

function dumpBench(port, pid, key) {
  const c0 = cpu(pid);
  const out = execFileSync('redis-benchmark', ['-p', String(port), '-c', String(CLIENTS), '-n', String(N), '-P', '1', '-q', 'DUMP', key], { encoding: 'latin1' });
  const ops = Number((/([\d.]+) requests per second/.exec(out) ?? [])[1]);
  return { ops, us: ((cpu(pid) - c0) * 1000) / N };
}

async function restoreBench(port, pid, payload) {
  const per = N / CLIENTS;
  const c0 = cpu(pid);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, ci) => new Promise((ok, fail) => {
    const key = `r:${ci}`;
    const req = Buffer.concat([Buffer.from(`*5\r\n$7\r\nRESTORE\r\n$${key.length}\r\n${key}\r\n$1\r\n0\r\n$${payload.length}\r\n`), payload, Buffer.from('\r\n$7\r\nREPLACE\r\n')]);
    const s = net.connect(port, '127.0.0.1');
    let left = per;
    s.on('error', fail);
    s.on('data', (x) => {
      if (x[0] !== 0x2b) { fail(new Error(x.toString())); return; }
      if (--left === 0) { s.destroy(); ok(); } else s.write(req);
    });
    s.write(req);
  })));
  return { ops: N / ((performance.now() - t0) / 1000), us: ((cpu(pid) - c0) * 1000) / N };
}

/**
 * SAME=1: every server started once (our builds with `npm start`'s flags, bench/server-cmd.mjs),
 * warmed up, then ROUNDS rounds with the order of the servers rotated each round, and the
 * per-round differences against the first build printed: an A/B that the start order and the
 * minute-to-minute load of a shared machine bias less than fresh servers in a fixed order.
 */
const SAME = process.env.SAME === '1';
/** ROWS='DUMP hash,RESTORE string': only these rows (SAME=1). */
const ROWS = process.env.ROWS ? process.env.ROWS.split(',') : null;

async function sameServers() {
  const base = Number(process.env.PORT ?? 0);
  const servers = [];
  for (let i = 0; i < cols.length; i++) {
    const d = cols[i];
    const port = base ? base + i : await spare();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-bench-dump-'));
    const p = d === 'redis'
      ? spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' })
      : spawn(process.execPath, [...NODE_FLAGS, path.join(path.resolve(d), 'main.js'), '--port', String(port), '--http-port', '-1', '--dir', dir, '--appendfsync', 'no'], { stdio: 'ignore' });
    servers.push({ d, port, p, dir });
  }
  try {
    for (const s of servers) {
      await up(s.port);
      cli(s.port, 'SET', 'bs', 'v'.repeat(100));
      const f = [];
      for (let i = 0; i < 100; i++) f.push(`field:${i}`, `value:${i}`);
      cli(s.port, 'HSET', 'bh', ...f);
      s.ps = await bulk(s.port, ['DUMP', 'bs']);
      s.ph = await bulk(s.port, ['DUMP', 'bh']);
      dumpBench(s.port, s.p.pid, 'bh'); // warm-up
      await restoreBench(s.port, s.p.pid, s.ph);
    }
    for (let r = 0; r < ROUNDS; r++) {
      const order = servers.map((_, i) => servers[(i + r) % servers.length]);
      const rows = new Map(servers.map((s) => [s, {}]));
      for (const [k, run] of [['DUMP string', (s) => dumpBench(s.port, s.p.pid, 'bs')], ['DUMP hash', (s) => dumpBench(s.port, s.p.pid, 'bh')],
        ['RESTORE string', (s) => restoreBench(s.port, s.p.pid, s.ps)], ['RESTORE hash', (s) => restoreBench(s.port, s.p.pid, s.ph)]]) {
        if (ROWS !== null && !ROWS.includes(k)) continue;
        for (const s of order) rows.get(s)[k] = await run(s);
      }
      for (const s of servers) for (const [k, v] of Object.entries(rows.get(s))) ((res[k] ??= {})[s.d] ??= []).push(v);
    }
  } finally {
    for (const s of servers) {
      s.p.kill('SIGKILL');
      await new Promise((ok) => (s.p.exitCode !== null ? ok() : s.p.once('exit', ok)));
      fs.rmSync(s.dir, { recursive: true, force: true });
    }
  }
}

const res = {};
const cols = [...dists, 'redis'];
console.log(`# bench/dump-socket.mjs: ROUNDS=${ROUNDS} N=${N}${SAME ? ' SAME=1' : ''}, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
if (SAME) await sameServers();
else for (let r = 0; r < ROUNDS; r++) {
  for (const d of cols) {
    const port = Number(process.env.PORT ?? 0) || (await spare());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-bench-dump-'));
    const p = d === 'redis'
      ? spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' })
      : spawn(process.execPath, ['--max-semi-space-size=4', path.join(path.resolve(d), 'main.js'), '--port', String(port), '--http-port', '-1', '--dir', dir, '--appendfsync', 'no'], { stdio: 'ignore' });
    try {
      await up(port);
      cli(port, 'SET', 'bs', 'v'.repeat(100));
      const f = [];
      for (let i = 0; i < 100; i++) f.push(`field:${i}`, `value:${i}`);
      cli(port, 'HSET', 'bh', ...f);
      const ps = await bulk(port, ['DUMP', 'bs']);
      const ph = await bulk(port, ['DUMP', 'bh']);
      const rows = {
        'DUMP string': dumpBench(port, p.pid, 'bs'),
        'DUMP hash': dumpBench(port, p.pid, 'bh'),
        'RESTORE string': await restoreBench(port, p.pid, ps),
        'RESTORE hash': await restoreBench(port, p.pid, ph),
      };
      for (const [k, v] of Object.entries(rows)) ((res[k] ??= {})[d] ??= []).push(v);
    } finally {
      p.kill('SIGKILL');
      await new Promise((ok) => (p.exitCode !== null ? ok() : p.once('exit', ok)));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}
const med = (a) => { const b = [...a].sort((x, y) => x - y); return b[Math.floor(b.length / 2)]; };
if (SAME && dists.length > 1) {
  // Paired per-round differences against the first build (same round, adjacent minutes).
  for (const [k, m] of Object.entries(res)) {
    for (const d of dists.slice(1)) {
      const diff = m[d].map((x, i) => x.us - m[dists[0]][i].us);
      console.log(`# ${k}: ${d} - ${dists[0]} CPU µs/op per round ${diff.map((x) => x.toFixed(2)).join(' ')}, median ${med(diff).toFixed(2)}`);
    }
  }
}
console.log(`| command | ${cols.map((c) => `${c} CPU µs/op`).join(' | ')} | ${cols.map((c) => `${c} ops/s`).join(' | ')} |`);
console.log(`|---|${cols.map(() => '---').join('|')}|${cols.map(() => '---').join('|')}|`);
for (const [k, m] of Object.entries(res)) {
  console.log(`| ${k} | ${cols.map((c) => med(m[c].map((x) => x.us)).toFixed(1)).join(' | ')} | ${cols.map((c) => Math.round(med(m[c].map((x) => x.ops))).toLocaleString('en-US')).join(' | ')} |`);
}
console.log(`load after: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
