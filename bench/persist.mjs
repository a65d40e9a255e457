#!/usr/bin/env node
/**
 * Persistence benchmarks (npm run bench:persist). Figures go in bench/RESULTS-persist.md.
 *
 *  1. Throughput: SET and HSET with redis-benchmark -c 50, ours with --appendfsync always and
 *     everysec against redis-server --appendonly yes with the same appendfsync. Rounds
 *     alternate ours / Redis on fresh data directories and the median is reported (the disk's
 *     fsync latency drifts with the machine's load). Targets: >= 1.0x with always, >= 0.8x
 *     with everysec. Ours with appendfsync no (in memory) is shown for reference.
 *  2. A write's cost against the size of the value: HSET / ZADD / SADD / LPUSH into a key of
 *     1,000,000 elements against a key of 1,000, same server, durability on (both modes; the
 *     1M-element values are loaded from disk by a restart between the two). HSET and ZADD
 *     update existing fields / members (the sizes stay put), SADD adds new members, LPUSH
 *     pushes. Target: ratio big / small >= 0.8. Ours in memory (appendfsync no) and Redis's
 *     own ratio (appendonly yes, same appendfsync) are shown for reference.
 *  3. Restart: 1,000,000 keys of mixed types (60% strings, 10% each small hash, list, set,
 *     sorted set), time from spawning the process to its first PING answer (target <= 3 s),
 *     and Redis's time on the same keys from its AOF for reference. Ours loads the keys in the
 *     background once it answers: the note also gives when a DBSIZE (which waits for all of
 *     them) sent right after the first PONG was answered.
 *
 * Environment: ROUNDS (default 3), THROUGHPUT_ROUNDS (default 4), REQUESTS (per throughput run, default 200000), WARMUP
 * (unmeasured requests of the same test on each fresh or restarted server first, default
 * 20000; at most SIZE_REQUESTS per key in the size section),
 * SIZE_REQUESTS (per cost run, default 200000; ours runs small and big alternately ROUNDS
 * times), BIG (elements of the big keys, default 1000000), RESTART_KEYS (default 1000000),
 * ONLY=throughput|size|restart, CASES (of the size section, e.g. HSET,ZADD).
 * The whole run is bounded (TIME_LIMIT_S, default 1800): past it, the processes it started are
 * killed and it exits. It only ever kills processes it started.
 */
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { oursArgv } from './server-cmd.mjs';
import { freePort } from './proc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** Throughput rounds (ours and Redis in turn, each on a fresh server): this machine's speed drifts. */
const THROUGHPUT_ROUNDS = Number(process.env.THROUGHPUT_ROUNDS ?? 4);
// Long enough that a run includes the journal applier's LMDB commits (every 5 s), as a steady state does.
const REQUESTS = Number(process.env.REQUESTS ?? 200000);
/** Unmeasured requests sent to each fresh server before a throughput run (0 = none). */
const WARMUP = Number(process.env.WARMUP ?? 20000);
const SIZE_REQUESTS = Number(process.env.SIZE_REQUESTS ?? 200000);
const BIG = Number(process.env.BIG ?? 1000000);
const SMALL = 1000;
const RESTART_KEYS = Number(process.env.RESTART_KEYS ?? 1000000);
const ONLY = process.env.ONLY ?? '';
const TIME_LIMIT_S = Number(process.env.TIME_LIMIT_S ?? 1800);

// ---------------------------------------------------------------- processes

/** Every child process this run started and that has not exited. */
const children = new Set();

function track(proc) {
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return proc;
}

function killChildren() {
  for (const p of children) {
    try {
      p.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

const deadline = setTimeout(() => {
  console.error(`time limit of ${TIME_LIMIT_S} s reached: stopping`);
  killChildren();
  process.exit(2);
}, TIME_LIMIT_S * 1000);
deadline.unref();
process.on('SIGINT', () => {
  killChildren();
  process.exit(130);
});


/** Resolves when `port` answers PING with +PONG; returns ms since `t0`. */
async function waitReady(port, proc, t0, timeoutMs = 120000) {
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`process exited (${proc.exitCode})`);
    const ok = await new Promise((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => {
        s.write('*1\r\n$4\r\nPING\r\n');
        s.once('data', (d) => {
          s.destroy();
          resolve(d.toString().startsWith('+PONG'));
        });
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error('server did not answer');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function startOurs(dir, mode, attempt = 1) {
  const port = await freePort();
  const t0 = performance.now();
  const proc = track(spawn(process.execPath, oursArgv(['--port', String(port), '--http-port', '0', '--dir', dir, '--appendfsync', mode]), { stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  try {
    const readyMs = await waitReady(port, proc, t0);
    return { port, proc, readyMs, t0, name: 'ours' };
  } catch (err) {
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
    // The free port was taken between the probe and the listen (other programs on the machine).
    if (attempt < 3 && /EADDRINUSE/.test(stderr)) return startOurs(dir, mode, attempt + 1);
    throw new Error(`${err.message}: ${stderr.trim()}`);
  }
}

async function startRedis(dir, mode) {
  const port = await freePort();
  const t0 = performance.now();
  const proc = track(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
    '--appendonly', 'yes', '--appendfsync', mode], { stdio: 'ignore' }));
  const readyMs = await waitReady(port, proc, t0);
  return { port, proc, readyMs, name: 'redis' };
}

function stop(s, signal = 'SIGTERM') {
  return new Promise((resolve) => {
    if (s.proc.exitCode !== null) return resolve();
    const t = setTimeout(() => s.proc.kill('SIGKILL'), 60000);
    s.proc.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    s.proc.kill(signal);
  });
}

const tmpDirs = [];
function tmpDir(tag) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `rs-bench-persist-${tag}-`));
  tmpDirs.push(d);
  return d;
}
process.on('exit', () => {
  killChildren();
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------- clients

function encode(args) {
  let s = `*${args.length}\r\n`;
  for (const a of args) s += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return s;
}

/**
 * Send commands pipelined (in chunks of `chunk`, the next chunk once the previous one is
 * answered) and wait for every reply; returns the first error replies. Replies are expected to
 * be simple, integer or bulk (not arrays).
 */
function pipeline(port, commands, chunk = 200) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    let sent = 0;
    let replies = 0;
    let buf = Buffer.alloc(0);
    const errors = [];
    const sendChunk = () => {
      const end = Math.min(commands.length, sent + chunk);
      let out = '';
      for (; sent < end; sent++) out += encode(commands[sent]);
      s.write(out);
    };
    s.on('connect', sendChunk);
    s.on('error', reject);
    s.on('data', (d) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      let p = 0;
      for (;;) {
        const nl = buf.indexOf('\r\n', p);
        if (nl < 0) break;
        const t = buf[p];
        if (t === 0x24) { // bulk
          const n = Number(buf.toString('latin1', p + 1, nl));
          const end = n < 0 ? nl + 2 : nl + 2 + n + 2;
          if (end > buf.length) break;
          p = end;
        } else {
          if (t === 0x2d && errors.length < 3) errors.push(buf.toString('latin1', p, nl));
          p = nl + 2;
        }
        replies++;
      }
      buf = buf.subarray(p);
      if (replies === sent && sent < commands.length) sendChunk();
      if (replies === commands.length) {
        s.destroy();
        resolve(errors);
      }
    });
  });
}

/** `pipeline` over `conns` connections in parallel (commands split round-robin by block). */
async function load(port, commands, conns = 8, chunk = 200) {
  const parts = Array.from({ length: conns }, () => []);
  for (let i = 0; i < commands.length; i++) parts[Math.floor(i / chunk) % conns].push(commands[i]);
  const errs = await Promise.all(parts.filter((p) => p.length > 0).map((p) => pipeline(port, p, chunk)));
  const flat = errs.flat();
  if (flat.length > 0) throw new Error(`loading failed: ${flat.join(' / ')}`);
}

/** requests/second from redis-benchmark (--csv), run asynchronously (the bench's timer keeps running). */
function redisBenchmark(port, args) {
  return new Promise((resolve, reject) => {
    const p = track(spawn('redis-benchmark', ['-p', String(port), '--csv', ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', () => {
      const lines = out.trim().split('\n').filter((l) => !l.startsWith('"test"'));
      const last = lines[lines.length - 1] ?? '';
      const m = /^"[^"]+","([\d.]+)"/.exec(last);
      if (!m) reject(new Error(`redis-benchmark failed: ${out} ${err}`));
      else resolve(Number(m[1]));
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 === 1 ? s[h] : (s[h - 1] + s[h]) / 2;
};
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const pad12 = (i) => String(i).padStart(12, '0');
const rows = [];
function report(section, what, ours, other, unit, note = '') {
  const ratio = typeof ours === 'number' && typeof other === 'number' && other > 0 ? (ours / other).toFixed(2) + 'x' : '';
  rows.push({ section, what, ours, other, unit, ratio, note });
  const show = (x) => (typeof x === 'number' ? fmt(x) : x ?? '-');
  console.log(`${section.padEnd(10)} ${what.padEnd(46)} ${String(show(ours)).padStart(9)} vs ${String(show(other)).padStart(9)} ${unit.padEnd(6)} ${ratio.padStart(6)}  ${note}`);
}

// ---------------------------------------------------------------- 1. throughput

/**
 * The same test, unmeasured, on every fresh server before its measured run: a cold Node
 * process spends its first thousands of requests in the interpreter and the JIT, which a
 * 50,000-request run would otherwise count against it (Redis has no warm-up). Both servers
 * get it, so both measured runs also start from the same keyspace.
 */
async function warmUp(port, args) {
  await redisBenchmark(port, ['-n', String(WARMUP), '-c', '50', ...args]);
}

async function throughput() {
  const tests = [
    ['SET', ['-t', 'set', '-r', '100000', '-d', '32']],
    ['HSET', ['-t', 'hset', '-r', '100000', '-d', '32']],
  ];
  // Ours without persistence (appendfsync no), once per test: how much of the gap is the
  // engine's own.
  const memory = {};
  for (const [name, args] of tests) {
    const runs = [];
    for (let r = 0; r < ROUNDS; r++) {
      const dir = tmpDir('mem');
      const s = await startOurs(dir, 'no');
      await warmUp(s.port, args);
      runs.push(await redisBenchmark(s.port, ['-n', String(REQUESTS), '-c', '50', ...args]));
      await stop(s);
    }
    memory[name] = median(runs);
  }
  for (const mode of ['always', 'everysec']) {
    for (const [name, args] of tests) {
      const ours = [];
      const theirs = [];
      for (let r = 0; r < THROUGHPUT_ROUNDS; r++) {
        // Who goes first alternates: a drift of the machine's speed favours neither.
        for (const which of r % 2 === 0 ? ['ours', 'redis'] : ['redis', 'ours']) {
          const dir = tmpDir(which);
          const s = which === 'ours' ? await startOurs(dir, mode) : await startRedis(dir, mode);
          await warmUp(s.port, args);
          (which === 'ours' ? ours : theirs).push(await redisBenchmark(s.port, ['-n', String(REQUESTS), '-c', '50', ...args]));
          await stop(s);
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }
      const pairs = ours.map((o, i) => o / theirs[i]);
      report('throughput', `${name} appendfsync ${mode}, 50 clients`, median(ours), median(theirs), 'req/s',
        `ours vs redis (appendonly yes); medians of ${THROUGHPUT_ROUNDS}; round by round ${pairs.map((x) => x.toFixed(2)).join(', ')} (median ${median(pairs).toFixed(2)}); target ${mode === 'always' ? '>= 1.0' : '>= 0.8'}; ours with appendfsync no: ${fmt(memory[name])}`);
    }
  }
}

// ---------------------------------------------------------------- 2. cost vs value size

/** One unmeasured run on each key of a size case, on a server just started (see warmUp). */
async function warmSize(port, c) {
  if (WARMUP === 0) return;
  for (const key of ['small', 'big']) {
    await redisBenchmark(port, ['-n', String(Math.min(WARMUP, SIZE_REQUESTS)), '-c', '50', ...c.bench(key, key === 'big' ? BIG : SMALL)]);
  }
}

async function sizeIndependence() {
  // fill: commands creating key `k` with n elements (chunks of 1000); bench: redis-benchmark args.
  const cases = [
    {
      cmd: 'HSET',
      fill: (k, from, to) => ['HSET', k, ...range(from, to).flatMap((i) => [`f${pad12(i)}`, 'v'])],
      bench: (k, n) => ['-r', String(n), 'HSET', k, 'f__rand_int__', 'value'],
      note: 'updates existing fields',
    },
    {
      cmd: 'ZADD',
      fill: (k, from, to) => ['ZADD', k, ...range(from, to).flatMap((i) => [String(i), `m${pad12(i)}`])],
      bench: (k, n) => ['-r', String(n), 'ZADD', k, '__rand_int__', 'm__rand_int__'],
      note: 'new scores for existing members',
    },
    {
      cmd: 'SADD',
      fill: (k, from, to) => ['SADD', k, ...range(from, to).map((i) => `m${i}`)],
      bench: (k) => ['-r', '100000000', 'SADD', k, 'n__rand_int__'],
      note: 'new members',
    },
    {
      cmd: 'LPUSH',
      fill: (k, from, to) => ['RPUSH', k, ...range(from, to).map((i) => `e${i}`)],
      bench: (k) => ['LPUSH', k, 'value'],
      note: 'pushes',
    },
  ];
  const only = process.env.CASES ? process.env.CASES.toUpperCase().split(',') : null;
  for (const c of cases) {
    if (only !== null && !only.includes(c.cmd)) continue;
    // Ours without persistence first (how much of a difference is the in-memory structure's
    // own), then ours with it, then Redis for reference.
    const ratios = {};
    {
      const dir = tmpDir('size-mem');
      const s = await startOurs(dir, 'no');
      await fillSize(s.port, c);
      await warmSize(s.port, c);
      const rate = {};
      for (const key of ['small', 'big']) {
        rate[key] = await redisBenchmark(s.port, ['-n', String(SIZE_REQUESTS), '-c', '50', ...c.bench(key, key === 'big' ? BIG : SMALL)]);
      }
      ratios.memory = rate;
      await stop(s);
    }
    for (const which of ['ours', 'redis']) {
      const dir = tmpDir('size');
      const start = which === 'ours' ? startOurs : startRedis;
      let s = await start(dir, 'always');
      const t0 = performance.now();
      await fillSize(s.port, c);
      const fillMs = performance.now() - t0;
      for (const mode of ['always', 'everysec']) {
        if (mode === 'everysec') {
          // Restart in the other mode: the big value is loaded back from disk.
          await stop(s);
          s = await start(dir, mode);
        }
        await warmSize(s.port, c);
        // Ours: small and big alternate, ROUNDS times (the disk's latency drifts), medians.
        const runs = { small: [], big: [] };
        for (let r = 0; r < (which === 'ours' ? ROUNDS : 1); r++) {
          for (const key of ['small', 'big']) {
            runs[key].push(await redisBenchmark(s.port, ['-n', String(SIZE_REQUESTS), '-c', '50', ...c.bench(key, key === 'big' ? BIG : SMALL)]));
          }
        }
        const rate = { small: median(runs.small), big: median(runs.big) };
        if (which === 'ours') {
          ratios[mode] = { rate, fillMs, readyMs: s.readyMs };
        } else {
          const o = ratios[mode];
          const m = ratios.memory;
          report('size', `${c.cmd} ${mode}: key of ${fmt(BIG)} vs of ${fmt(SMALL)}`, o.rate.big, o.rate.small, 'req/s',
            `${c.note}; target >= 0.8; redis: ${fmt(rate.big)} vs ${fmt(rate.small)} = ${(rate.big / rate.small).toFixed(2)}x` +
            `; ours in memory (appendfsync no): ${fmt(m.big)} vs ${fmt(m.small)} = ${(m.big / m.small).toFixed(2)}x` +
            (mode === 'everysec' ? `; our restart with the big key: ${fmt(o.readyMs)} ms` : `; our fill: ${fmt(o.fillMs)} ms`));
        }
      }
      await stop(s);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** Create the small and the big key of a size case. */
async function fillSize(port, c) {
  for (const [key, n] of [['small', SMALL], ['big', BIG]]) {
    for (let i = 0; i < n; i += 100000) {
      const cmds = [];
      for (let j = i; j < Math.min(n, i + 100000); j += 1000) cmds.push(c.fill(key, j, Math.min(n, j + 1000)));
      await load(port, cmds, 4, 10);
    }
  }
}

function range(from, to) {
  const a = [];
  for (let i = from; i < to; i++) a.push(i);
  return a;
}

// ---------------------------------------------------------------- 3. restart time

function mixedCommand(j) {
  const k = `key:${j}`;
  switch (j % 10) {
    case 6: return ['HSET', k, 'a', '1', 'b', '2', 'c', String(j)];
    case 7: return ['RPUSH', k, 'x', 'y', String(j)];
    case 8: return ['SADD', k, 'x', 'y', String(j)];
    case 9: return ['ZADD', k, '1', 'x', '2', String(j)];
    default: return ['SET', k, `value-${j}-${'x'.repeat(j % 32)}`];
  }
}

async function fillMixed(port, n) {
  for (let i = 0; i < n; i += 50000) {
    const cmds = [];
    for (let j = i; j < Math.min(n, i + 50000); j++) cmds.push(mixedCommand(j));
    await load(port, cmds);
  }
}

async function restart() {
  const N = RESTART_KEYS;
  const dir = tmpDir('restart');
  let s = await startOurs(dir, 'everysec');
  const t0 = performance.now();
  await fillMixed(s.port, N);
  const fillMs = performance.now() - t0;
  await stop(s, 'SIGTERM');
  const size = fs.statSync(path.join(dir, 'lmdb', 'data.mdb')).size;
  const times = [];
  let dbsize = '';
  let loadedMs = 0;
  for (let r = 0; r < ROUNDS; r++) {
    s = await startOurs(dir, 'everysec');
    times.push(s.readyMs);
    // DBSIZE waits for the whole keyspace (the server answers while it loads in the background).
    if (r === 0) dbsize = await new Promise((resolve) => {
      const c = net.connect({ port: s.port, host: '127.0.0.1' }, () => c.write('*1\r\n$6\r\nDBSIZE\r\n'));
      c.once('data', (d) => {
        c.destroy();
        loadedMs = performance.now() - s.t0;
        resolve(d.toString().trim().slice(1));
      });
    });
    await stop(s);
  }
  // Redis for reference: the same keys in its AOF (appendonly yes), restarted.
  const rdir = tmpDir('restart-redis');
  let rs = await startRedis(rdir, 'everysec');
  await fillMixed(rs.port, N);
  await stop(rs);
  const rtimes = [];
  for (let r = 0; r < ROUNDS; r++) {
    rs = await startRedis(rdir, 'everysec');
    rtimes.push(rs.readyMs);
    await stop(rs);
  }
  report('restart', `${fmt(N)} keys, mixed types: spawn to first PONG`, median(times), median(rtimes), 'ms',
    `ours vs redis (AOF); median of ${ROUNDS}; target <= 3000 ms; DBSIZE after restart ${dbsize}, answered ${fmt(loadedMs)} ms after spawn (whole keyspace loaded; first round); LMDB file ${(size / 1e6).toFixed(0)} MB; writing the keys took ${fmt(fillMs)} ms`);
}

// ---------------------------------------------------------------- main

const started = new Date();
console.log(`${started.toISOString()}  node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout.trim());
if (!ONLY || ONLY === 'throughput') await throughput();
if (!ONLY || ONLY === 'size') await sizeIndependence();
if (!ONLY || ONLY === 'restart') await restart();
console.log(`\nfinished in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('\n| section | measure | ours / big | redis / small | unit | ratio | note |\n|---|---|---:|---:|---|---:|---|');
for (const r of rows) {
  const show = (x) => (typeof x === 'number' ? fmt(x) : x ?? '-');
  console.log(`| ${r.section} | ${r.what} | ${show(r.ours)} | ${show(r.other)} | ${r.unit} | ${r.ratio} | ${r.note} |`);
}
clearTimeout(deadline);
