// RDB import, DUMP/RESTORE and redis-cli --rdb, against redis-server 7.0 on the same machine.
//   npm run bench:rdb                       (N=1000000 keys by default)
//   N=200000 ROUNDS=1 node bench/rdb.mjs    (smaller / quicker)
//   PARTS=dump ROUNDS=5 node bench/rdb.mjs  (only DUMP/RESTORE, on empty servers; PARTS is a
//                                            comma list of import, rdb, dump)
//   PARTS=...,flush                         (last, destroys ours' dataset: FLUSHALL during a
//                                            redis-cli --rdb, its latency and the file's size)
//   RDB_FILE=/tmp/x.rdb                     (reuse a dataset file; made and kept there if missing)
//   PORT_BASE=7200                          (ports from there up instead of spare ones)
//   DATASET=strings                         (the dataset's keys all strings, 20-99 bytes, 10% TTLs)
//   BENCH_DIST=/tmp/base-dist               (run that build of ours instead of dist/)
// Prints markdown tables (bench/RESULTS.md has the figures and the machine).
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// BENCH_DIST: another build (a before/after in the same minutes).
const MAIN = path.join(process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : path.join(ROOT, 'dist'), 'main.js');
const N = Number(process.env.N ?? 1_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const OPS = Number(process.env.OPS ?? 100_000);
const CLIENTS = 50;
const PARTS = new Set((process.env.PARTS ?? 'import,rdb,dump').split(','));
const STRINGS_ONLY = process.env.DATASET === 'strings';
const OURS_ARGS = (process.env.OURS_ARGS ?? '').split(' ').filter(Boolean);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-bench-rdb-'));
const started = [];

let nextPort = Number(process.env.PORT_BASE ?? 0);
function freePort() {
  if (nextPort > 0) return Promise.resolve(nextPort++);
  return new Promise((res) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
}
async function waitPing(port, proc, deadlineMs = 600_000) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`exited ${proc.exitCode}`);
    try {
      const r = await cmd(port, ['PING'], 2000);
      if (r.startsWith('+PONG')) return;
    } catch { /* not yet */ }
    if (Date.now() > end) throw new Error('no PONG');
    await new Promise((r) => setTimeout(r, 20));
  }
}
function enc(args) {
  let s = `*${args.length}\r\n`;
  const parts = [];
  for (const a of args) { const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a)); parts.push(Buffer.from(`${s}$${b.length}\r\n`), b); s = '\r\n'; }
  parts.push(Buffer.from('\r\n'));
  return Buffer.concat(parts);
}
/** One command on a fresh connection; resolves with the raw reply. */
function cmd(port, args, timeout = 600_000) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const t = setTimeout(() => { s.destroy(); reject(new Error('timeout')); }, timeout);
    s.on('error', (e) => { clearTimeout(t); reject(e); });
    s.on('connect', () => s.write(enc(args)));
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const l = replyLen(buf, 0);
      if (l > 0) { clearTimeout(t); s.destroy(); resolve(buf.subarray(0, l).toString('latin1')); }
    });
  });
}
function replyLen(b, p) {
  const e = b.indexOf('\r\n', p);
  if (e < 0) return -1;
  const t = b[p];
  if (t === 0x24) { const n = Number(b.latin1Slice(p + 1, e)); if (n < 0) return e + 2 - p; return b.length >= e + 2 + n + 2 ? e + 4 + n - p : -1; }
  if (t === 0x2a) { const n = Number(b.latin1Slice(p + 1, e)); let q = e + 2; for (let i = 0; i < n; i++) { const l = replyLen(b, q); if (l < 0) return -1; q += l; } return q - p; }
  return e + 2 - p;
}
function cpu(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms (CLK_TCK 100)
}
function startRedis(port, dir, extra = []) {
  const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = ''; p.stdout.on('data', (d) => { out += d; });
  started.push(p);
  return { proc: p, out: () => out };
}
function startOurs(port, dir, extra = []) {
  const p = spawn(process.execPath, [...OURS_ARGS, MAIN, '--port', String(port), '--http-port', '-1', '--dir', dir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = ''; p.stdout.on('data', (d) => { out += d; }); p.stderr.on('data', (d) => { out += d; });
  started.push(p);
  return { proc: p, out: () => out };
}
async function stop(p) {
  if (p.exitCode !== null) return;
  p.kill('SIGTERM');
  await new Promise((r) => p.once('exit', r));
}

// ---------------------------------------------------------------- dataset
async function makeDataset() {
  const keep = process.env.RDB_FILE;
  if (keep && fs.existsSync(keep)) return keep;
  const port = await freePort();
  const dir = path.join(tmp, 'src');
  fs.mkdirSync(dir);
  const r = startRedis(port, dir, ['--dbfilename', 'bench.rdb']);
  await waitPing(port, r.proc);
  // Mixed keys (DATASET=strings: all strings): 70% strings, 10% hashes, 10% lists, 5% sets (half intsets), 5% sorted sets; 10% with TTLs.
  const chunks = [];
  for (let i = 0; i < N; i++) {
    const k = `key:${i}`;
    const m = i % 20;
    if (m < 14 || STRINGS_ONLY) chunks.push(enc(['SET', k, `value-${i}-`.padEnd(20 + (i % 80), 'x')]));
    else if (m < 16) chunks.push(enc(['HSET', k, 'a', i, 'b', 'two', 'c', 'three', 'd', `d${i}`, 'e', 'five']));
    else if (m < 18) chunks.push(enc(['RPUSH', k, 'one', 'two', i, 'four', 'five']));
    else if (m < 19) chunks.push(enc(i % 2 ? ['SADD', k, 1, 2, 3, i] : ['SADD', k, 'a', 'b', `c${i}`]));
    else chunks.push(enc(['ZADD', k, 1, 'a', 2, 'b', i, 'c']));
    if (i % 10 === 3) chunks.push(enc(['EXPIRE', k, 100000]));
  }
  const proto = path.join(tmp, 'proto');
  fs.writeFileSync(proto, Buffer.concat(chunks));
  execFileSync('sh', ['-c', `redis-cli -p ${port} --pipe < ${proto}`], { stdio: 'pipe' });
  fs.rmSync(proto);
  await cmd(port, ['SAVE']);
  await stop(r.proc);
  if (keep) { fs.copyFileSync(path.join(dir, 'bench.rdb'), keep); return keep; }
  return path.join(dir, 'bench.rdb');
}

// ---------------------------------------------------------------- 1. import vs load
async function loadRound(file) {
  // redis-server loading the file at start-up.
  const rdir = path.join(tmp, `r${Math.random()}`);
  fs.mkdirSync(rdir);
  fs.copyFileSync(file, path.join(rdir, 'dump.rdb'));
  let port = await freePort();
  let t0 = performance.now();
  const r = startRedis(port, rdir, ['--dbfilename', 'dump.rdb']);
  await waitPing(port, r.proc);
  const redisWall = performance.now() - t0;
  const redisCpu = cpu(r.proc.pid);
  const redisLoad = Number((/DB loaded from disk: ([\d.]+) seconds/.exec(r.out()) ?? [])[1]) * 1000;
  await stop(r.proc);
  fs.rmSync(rdir, { recursive: true, force: true });
  // Ours importing it (in memory, then with the data directory written: everysec).
  const res = {};
  for (const mode of ['no', 'everysec']) {
    const odir = path.join(tmp, `o${Math.random()}`);
    port = await freePort();
    t0 = performance.now();
    const o = startOurs(port, odir, ['--appendfsync', mode, '--import-rdb', file]);
    await waitPing(port, o.proc);
    const wall = performance.now() - t0;
    const procCpu = cpu(o.proc.pid);
    const imp = Number((/Imported \d+ keys .* in (\d+) ms/.exec(o.out()) ?? [])[1]);
    // The full GC run after the import, before the first client (rdb/cli.ts collectAfterImport).
    const gc = Number((/Heap collected after the import in (\d+) ms/.exec(o.out()) ?? [])[1]);
    res[mode] = { wall, imp, gc, cpu: procCpu };
    if (mode === 'no') res.ours = { port, proc: o.proc };
    else { await stop(o.proc); fs.rmSync(odir, { recursive: true, force: true }); }
  }
  return { redisWall, redisLoad, redisCpu, times: res, ours: res.ours };
}

// ---------------------------------------------------------------- 2. DUMP / RESTORE at -P 1
async function closedLoop(port, pid, argsFor, ops) {
  const per = Math.ceil(ops / CLIENTS);
  const c0 = cpu(pid);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, ci) => new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    const req = enc(argsFor(ci));
    let left = per;
    let buf = Buffer.alloc(0);
    s.on('error', reject);
    s.on('connect', () => s.write(req));
    s.on('data', (d) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      const l = replyLen(buf, 0);
      if (l < 0) return;
      if (buf[0] === 0x2d) { reject(new Error(buf.toString())); return; }
      buf = buf.subarray(l);
      if (--left === 0) { s.destroy(); resolve(); } else s.write(req);
    });
  })));
  const secs = (performance.now() - t0) / 1000;
  return { opsPerSec: (per * CLIENTS) / secs, cpuUs: ((cpu(pid) - c0) * 1000) / (per * CLIENTS) };
}

async function dumpRestore(port, pid) {
  await cmd(port, ['SET', 'bs', 'v'.repeat(100)]);
  const fields = []; for (let i = 0; i < 100; i++) fields.push(`field:${i}`, `value:${i}`);
  await cmd(port, ['DEL', 'bh']);
  await cmd(port, ['HSET', 'bh', ...fields]);
  await cmd(port, ['DEL', 'bh5']);
  await cmd(port, ['HSET', 'bh5', ...fields.slice(0, 10)]);
  const payload = async (k) => {
    const r = await new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1');
      let b = Buffer.alloc(0);
      s.on('connect', () => s.write(enc(['DUMP', k])));
      s.on('data', (d) => { b = Buffer.concat([b, d]); const l = replyLen(b, 0); if (l > 0) { s.destroy(); resolve(b.subarray(0, l)); } });
      s.on('error', reject);
    });
    const e = r.indexOf('\r\n');
    return r.subarray(e + 2, r.length - 2);
  };
  const ps = await payload('bs');
  const ph = await payload('bh');
  const ph5 = await payload('bh5');
  const out = {};
  out['DUMP string'] = await closedLoop(port, pid, () => ['DUMP', 'bs'], OPS);
  out['RESTORE string'] = await closedLoop(port, pid, (c) => ['RESTORE', `rs:${c}`, '0', ps, 'REPLACE'], OPS);
  out['DUMP hash'] = await closedLoop(port, pid, () => ['DUMP', 'bh'], OPS);
  out['RESTORE hash'] = await closedLoop(port, pid, (c) => ['RESTORE', `rh:${c}`, '0', ph, 'REPLACE'], OPS);
  out['DUMP hash 5'] = await closedLoop(port, pid, () => ['DUMP', 'bh5'], OPS);
  out['RESTORE hash 5'] = await closedLoop(port, pid, (c) => ['RESTORE', `rh5:${c}`, '0', ph5, 'REPLACE'], OPS);
  return out;
}

// ---------------------------------------------------------------- 3. PING during redis-cli --rdb
async function pingDuringRdb(port) {
  const s = net.connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  let worst = 0;
  const lat = [];
  let running = true;
  const file = path.join(tmp, `cli-${Math.random()}.rdb`);
  const t0 = performance.now();
  const cli = spawn('redis-cli', ['-p', String(port), '--rdb', file], { stdio: 'ignore' });
  const done = new Promise((r) => cli.once('exit', () => { running = false; r(); }));
  while (running) {
    const a = performance.now();
    await new Promise((r) => { s.once('data', r); s.write('PING\r\n'); });
    const d = performance.now() - a;
    lat.push(d);
    if (d > worst) worst = d;
    await new Promise((r) => setTimeout(r, 1));
  }
  await done;
  const secs = (performance.now() - t0) / 1000;
  s.destroy();
  const size = fs.statSync(file).size;
  fs.rmSync(file);
  lat.sort((x, y) => x - y);
  return { worst, p99: lat[Math.floor(lat.length * 0.99)], pings: lat.length, secs, size };
}

// ---------------------------------------------------------------- 4. FLUSHALL during redis-cli --rdb
async function flushDuringRdb(port) {
  const file = path.join(tmp, `flush-${Math.random()}.rdb`);
  const cli = spawn('redis-cli', ['-p', String(port), '--rdb', file], { stdio: 'ignore' });
  const done = new Promise((r) => cli.once('exit', r));
  // Once part of the file is out.
  for (let i = 0; i < 2000 && !(fs.existsSync(file) && fs.statSync(file).size > 4 * 1024 * 1024); i++) await new Promise((r) => setTimeout(r, 5));
  const at = fs.existsSync(file) ? fs.statSync(file).size : 0;
  const t0 = performance.now();
  const reply = await cmd(port, ['FLUSHALL']);
  const ms = performance.now() - t0;
  await done;
  const size = fs.statSync(file).size;
  fs.rmSync(file);
  const info = await cmd(port, ['INFO', 'persistence']);
  const atOnce = (/rdb_snapshot_completed_at_once:(\d+)/.exec(info) ?? [])[1];
  return { ms, reply: reply.trim(), at, size, atOnce };
}

// ---------------------------------------------------------------- main
const fmt = (x, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
try {
  console.log(`# bench/rdb.mjs: N=${N}, ROUNDS=${ROUNDS}, OPS=${OPS}, ${os.cpus().length} CPUs, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  let ours = null;
  let rport = 0;
  let r = null;
  if (PARTS.has('import') || PARTS.has('rdb')) {
    const t = performance.now();
    const file = await makeDataset();
    console.log(`dataset: ${fmt(fs.statSync(file).size)} bytes (made in ${fmt((performance.now() - t) / 1000, 1)} s)\n`);
    // "import" is importRdb: read, parse and validate the file, every key in the key table (the
    // server answers with all keys visible right after); Redis's "DB loaded from disk" is the
    // same span of rdbLoad. With everysec the keys reach the data directory afterwards, in the
    // background. CPU: the process's CPU time at its first PONG (start-up included).
    // "+ GC": the import and the full collection after it (both before the first PONG).
    console.log('| round | redis load (log) | redis start→PONG | redis CPU at PONG | ours import (in memory) | ours GC after | ours start→PONG (no) | ours CPU at PONG (no) | ours import (everysec) | ours start→PONG (everysec) | import/load | import + GC / load | CPU ratio (no) |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    let last = null;
    for (let i = 0; i < (PARTS.has('import') ? ROUNDS : 1); i++) {
      if (last) await stop(last.ours.proc);
      const lr = await loadRound(file);
      last = lr;
      console.log(`| ${i + 1} | ${fmt(lr.redisLoad)} ms | ${fmt(lr.redisWall)} ms | ${fmt(lr.redisCpu)} ms | ${fmt(lr.times.no.imp)} ms | ${fmt(lr.times.no.gc)} ms | ${fmt(lr.times.no.wall)} ms | ${fmt(lr.times.no.cpu)} ms | ${fmt(lr.times.everysec.imp)} ms | ${fmt(lr.times.everysec.wall)} ms | ${(lr.times.no.imp / lr.redisLoad).toFixed(2)} | ${((lr.times.no.imp + lr.times.no.gc) / lr.redisLoad).toFixed(2)} | ${(lr.times.no.cpu / lr.redisCpu).toFixed(2)} |`);
    }
    ours = last.ours;
    rport = await freePort();
    const rdir = path.join(tmp, 'rl');
    fs.mkdirSync(rdir);
    fs.copyFileSync(file, path.join(rdir, 'dump.rdb'));
    r = startRedis(rport, rdir, ['--dbfilename', 'dump.rdb']);
    await waitPing(rport, r.proc);
  } else {
    const port = await freePort();
    const o = startOurs(port, path.join(tmp, 'empty'), ['--appendfsync', 'no']);
    await waitPing(port, o.proc);
    ours = { port, proc: o.proc };
    rport = await freePort();
    r = startRedis(rport, tmp);
    await waitPing(rport, r.proc);
  }
  if (PARTS.has('rdb')) {
    // PING latency while redis-cli --rdb reads the N keys from us (and from Redis, for reference).
    console.log('\n| server | redis-cli --rdb of the dataset | file bytes | PINGs | PING p99 | PING worst |');
    console.log('|---|---|---|---|---|---|');
    for (let i = 0; i < ROUNDS; i++) {
      const po = await pingDuringRdb(ours.port);
      console.log(`| ours | ${fmt(po.secs, 2)} s | ${fmt(po.size)} | ${po.pings} | ${fmt(po.p99, 2)} ms | ${fmt(po.worst, 2)} ms |`);
      const pr = await pingDuringRdb(rport);
      console.log(`| redis | ${fmt(pr.secs, 2)} s | ${fmt(pr.size)} | ${pr.pings} | ${fmt(pr.p99, 2)} ms | ${fmt(pr.worst, 2)} ms |`);
    }
  }
  if (PARTS.has('flush')) {
    const f = await flushDuringRdb(ours.port);
    console.log(`\nFLUSHALL during ours' redis-cli --rdb (sent at ${fmt(f.at)} bytes of the file): reply ${f.reply} in ${fmt(f.ms, 2)} ms; file ${fmt(f.size)} bytes; rdb_snapshot_completed_at_once:${f.atOnce}`);
  }
  if (PARTS.has('dump')) {
    console.log(`\n| command (${CLIENTS} clients, -P 1, ${fmt(OPS)} ops) | ours ops/s | redis ops/s | ours/redis | ours CPU µs/op | redis CPU µs/op | CPU ratio |`);
    console.log('|---|---|---|---|---|---|---|');
    const rows = {};
    for (let round = 0; round < ROUNDS; round++) {
      const a = await dumpRestore(ours.port, ours.proc.pid);
      const b = await dumpRestore(rport, r.proc.pid);
      for (const k of Object.keys(a)) (rows[k] ??= []).push([a[k], b[k]]);
    }
    for (const [k, list] of Object.entries(rows)) {
      const med = (f) => { const v = list.map(f).sort((x, y) => x - y); return v[Math.floor(v.length / 2)]; };
      const oo = med((x) => x[0].opsPerSec), rr = med((x) => x[1].opsPerSec);
      const oc = med((x) => x[0].cpuUs), rc = med((x) => x[1].cpuUs);
      console.log(`| ${k} | ${fmt(oo)} | ${fmt(rr)} | ${(oo / rr).toFixed(2)} | ${fmt(oc, 1)} | ${fmt(rc, 1)} | ${(rc / oc).toFixed(2)} |`);
    }
  }
  console.log(`\nload after: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
} finally {
  for (const p of started) await stop(p);
  fs.rmSync(tmp, { recursive: true, force: true });
}
