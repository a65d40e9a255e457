#!/usr/bin/env node
/**
 * Memory benchmark: the same data loaded into our server and into a real redis-server; prints
 * each server's resident memory (RSS) and the ratio ours/redis.
 *
 * Datasets (each on a fresh pair of servers, so the figures do not mix):
 *   strings  1,000,000 keys   key:000000 .. key:999999 -> a 10-byte value
 *   strings-ttl  the same keys, each with a TTL (not in the default set: BENCH_SETS=strings-ttl)
 *   strings-100  the same keys with 100-byte values (not in the default set either)
 *   hash     1,000,000 fields in one hash   (HSET, 10-byte values)
 *   hashes5  the same items as 200,000 hashes of 5 fields (listpack; not in the default set)
 *   set      1,000,000 members in one set   (SADD)
 *   sets5    the same items as 200,000 sets of 5 members (hashtable; not in the default set)
 *   sets12   the same items as 83,333 sets of 12 members (hashtable; not in the default set)
 *   zset     1,000,000 members in one zset  (ZADD, integer scores)
 *   list     1,000,000 elements in one list (RPUSH)
 *
 * Ours runs as `npm start` runs it (bench/server-cmd.mjs: its Node flags) with `--appendfsync no`
 * (keyspace in memory only: no LMDB map in the RSS), Redis
 * with `--save '' --appendonly no`. RSS is VmRSS from /proc/<pid>/status (what Redis reports as
 * used_memory_rss); Redis's own used_memory is printed too. "idle" is each server's RSS before
 * loading (0.5 s after its first reply); "Δ" columns subtract it (Node alone is ~41 MB idle).
 *
 *   npm run bench:memory
 *   BENCH_N=200000 BENCH_SETS=strings,hash node bench/memory.mjs
 *   BENCH_N=1000000,4000000,10000000 BENCH_SETS=strings node bench/memory.mjs   (the curve over sizes)
 *   node bench/memory.mjs --json out.json
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { oursArgv } from './server-cmd.mjs';
import { freePort } from './proc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Item counts (BENCH_N, comma-separated: the curve over sizes, e.g. 1000000,4000000,10000000). */
const SIZES = String(process.env.BENCH_N ?? 1_000_000).split(',').map(Number);
let N = SIZES[0];
const SETS = (process.env.BENCH_SETS ?? 'strings,hash,set,zset,list').split(',').map((s) => s.trim()).filter(Boolean);
/** Seconds to let each server settle after loading before RSS is read. */
const SETTLE = Number(process.env.BENCH_SETTLE ?? 2);
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null;

const pad = (i, w) => String(i).padStart(w, '0');

/**
 * Each dataset yields commands (argv arrays) in batches; every reply is a one-line reply
 * (+OK or :n), which is how the loader counts them.
 */
const DATASETS = {
  strings: {
    get label() { return `${N} string keys (key:NNNNNN -> 10 B)`; },
    *commands() {
      // MSET of 50 pairs per command: fewer round trips, same stored data as SET.
      for (let i = 0; i < N; i += 50) {
        const a = ['MSET'];
        for (let j = i; j < Math.min(N, i + 50); j++) a.push(`key:${pad(j, 6)}`, `val:${pad(j, 6)}`);
        yield a;
      }
    },
  },
  'strings-100': {
    get label() { return `${N} string keys (key:NNNNNN -> 100 B)`; },
    *commands() {
      for (let i = 0; i < N; i += 50) {
        const a = ['MSET'];
        for (let j = i; j < Math.min(N, i + 50); j++) a.push(`key:${pad(j, 6)}`, `val:${pad(j, 6)}`.padEnd(100, '.'));
        yield a;
      }
    },
  },
  'strings-ttl': {
    get label() { return `${N} string keys with a TTL (SET key:NNNNNN 10 B EX 86400)`; },
    *commands() {
      for (let i = 0; i < N; i++) yield ['SET', `key:${pad(i, 6)}`, `val:${pad(i, 6)}`, 'EX', '86400'];
    },
  },
  hash: {
    get label() { return `one hash, ${N} fields (10 B values)`; },
    *commands() {
      for (let i = 0; i < N; i += 100) {
        const a = ['HSET', 'bench:hash'];
        for (let j = i; j < Math.min(N, i + 100); j++) a.push(`field:${pad(j, 7)}`, `val:${pad(j, 6)}`);
        yield a;
      }
    },
  },
  // Not in the default set (BENCH_SETS=hashes5): N items as N/5 small (listpack) hashes.
  hashes5: {
    get label() { return `${N / 5} hashes of 5 fields (listpack, 10 B values)`; },
    *commands() {
      for (let i = 0; i < N / 5; i++) {
        const a = ['HSET', `h:${pad(i, 7)}`];
        for (let j = 0; j < 5; j++) a.push(`field:${j}`, `val:${pad(i * 5 + j, 6)}`);
        yield a;
      }
    },
  },
  // Not in the default set (BENCH_SETS=sets5): N members as N/5 small sets (hashtable in 7.0).
  sets5: {
    get label() { return `${N / 5} sets of 5 members (10 B members)`; },
    *commands() {
      for (let i = 0; i < N / 5; i++) {
        const a = ['SADD', `s:${pad(i, 7)}`];
        for (let j = 0; j < 5; j++) a.push(`mem:${pad(i * 5 + j, 6)}`);
        yield a;
      }
    },
  },
  // Not in the default set (BENCH_SETS=sets12): N members as N/12 sets of 12 (a BullMQ flow
  // parent's dependencies set: our small packed form up to 16 members, a table past it).
  sets12: {
    get label() { return `${Math.floor(N / 12)} sets of 12 members (10 B members)`; },
    *commands() {
      for (let i = 0; i < Math.floor(N / 12); i++) {
        const a = ['SADD', `s:${pad(i, 7)}`];
        for (let j = 0; j < 12; j++) a.push(`mem:${pad(i * 12 + j, 7)}`);
        yield a;
      }
    },
  },
  set: {
    get label() { return `one set, ${N} members`; },
    *commands() {
      for (let i = 0; i < N; i += 100) {
        const a = ['SADD', 'bench:set'];
        for (let j = i; j < Math.min(N, i + 100); j++) a.push(`member:${pad(j, 7)}`);
        yield a;
      }
    },
  },
  zset: {
    get label() { return `one zset, ${N} members`; },
    *commands() {
      for (let i = 0; i < N; i += 100) {
        const a = ['ZADD', 'bench:zset'];
        for (let j = i; j < Math.min(N, i + 100); j++) a.push(String(j), `member:${pad(j, 7)}`);
        yield a;
      }
    },
  },
  list: {
    get label() { return `one list, ${N} elements`; },
    *commands() {
      for (let i = 0; i < N; i += 100) {
        const a = ['RPUSH', 'bench:list'];
        for (let j = i; j < Math.min(N, i + 100); j++) a.push(`item:${pad(j, 7)}`);
        yield a;
      }
    },
  },
  // Not in the default set (BENCH_SETS=stream): one stream of N entries shaped as BullMQ's
  // events ("event" "added" "jobId" <n>), 100 XADDs per EVAL (an integer reply each).
  stream: {
    get label() { return `one stream, ${N} entries (event/added/jobId/n)`; },
    *commands() {
      const lua = "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('XADD', KEYS[1], i .. '-0', 'event', 'added', 'jobId', i) end return 1";
      for (let i = 1; i <= N; i += 100) yield ['EVAL', lua, '1', 'bench:stream', String(i), String(Math.min(N, i + 99))];
    },
  },
};

function encode(argv) {
  let s = `*${argv.length}\r\n`;
  for (const a of argv) s += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return s;
}


async function connect(port, proc) {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server on ${port} exited with ${proc.exitCode}`);
    const sock = await new Promise((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(s));
      s.on('error', () => resolve(null));
    });
    if (sock) return sock;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

/** A minimal pipelining client: send() batches, replies counted by lines (one-line replies only). */
class Loader {
  constructor(sock) {
    this.sock = sock;
    this.waiting = 0;
    this.wake = null;
    this.error = null;
    this.tail = '';
    sock.setNoDelay(true);
    sock.on('data', (d) => {
      const s = this.tail + d.toString('latin1');
      let nl = 0;
      let from = 0;
      for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) {
        if (s[from] === '-') this.error ??= s.slice(from, i - 1);
        nl++;
        from = i + 1;
      }
      this.tail = s.slice(from);
      this.waiting -= nl;
      if (this.wake && this.waiting <= this.low) { const w = this.wake; this.wake = null; w(); }
    });
  }

  /** Send every command, keeping at most `window` unanswered. */
  async run(commands, window = 64) {
    this.low = window / 2;
    let batch = '';
    let inBatch = 0;
    for (const argv of commands) {
      batch += encode(argv);
      inBatch++;
      if (inBatch === 16) {
        this.sock.write(batch);
        this.waiting += inBatch;
        batch = '';
        inBatch = 0;
        if (this.waiting >= window) await new Promise((r) => { this.wake = r; });
      }
    }
    if (inBatch > 0) { this.sock.write(batch); this.waiting += inBatch; }
    this.low = 0;
    if (this.waiting > 0) await new Promise((r) => { this.wake = r; });
    if (this.error) throw new Error(`server replied ${this.error}`);
  }

  /** One command with a bulk reply (INFO): the whole reply as text. */
  async bulk(argv) {
    return new Promise((resolve) => {
      let buf = '';
      const onData = (d) => {
        buf += d.toString('latin1');
        const m = /^\$(\d+)\r\n/.exec(buf);
        if (m && buf.length >= m[0].length + Number(m[1]) + 2) {
          this.sock.off('data', onData);
          this.sock.on('data', saved);
          resolve(buf.slice(m[0].length, m[0].length + Number(m[1])));
        }
      };
      const saved = this.sock.listeners('data')[0];
      this.sock.off('data', saved);
      this.sock.on('data', onData);
      this.sock.write(encode(argv));
    });
  }
}

function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function startServer(name, cmd, args) {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  const port = Number(args[args.indexOf('--port') + 1]);
  let sock;
  try {
    sock = await connect(port, proc);
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error(`${name}: ${err.message}\n${out}`);
  }
  return { name, proc, port, loader: new Loader(sock), output: () => out };
}

function stop(s) {
  return new Promise((resolve) => {
    s.loader.sock.destroy();
    if (s.proc.exitCode !== null) return resolve();
    const t = setTimeout(() => s.proc.kill('SIGKILL'), 5000);
    s.proc.once('exit', () => { clearTimeout(t); resolve(); });
    s.proc.kill('SIGTERM');
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mb = (b) => (b / 1048576).toFixed(1);

async function measure(setName) {
  const ds = DATASETS[setName];
  if (!ds) throw new Error(`unknown dataset ${setName} (${Object.keys(DATASETS).join(', ')})`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-mem-'));
  const [pOurs, pRedis] = [await freePort(), await freePort()];
  const ours = await startServer('ours', process.execPath, [...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []), ...oursArgv(['--port', String(pOurs), '--http-port', '-1', '--appendfsync', 'no', '--dir', path.join(dir, 'ours')])]);
  const redis = await startServer('redis', 'redis-server', ['--port', String(pRedis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]);
  try {
    await sleep(500);
    const row = { dataset: setName, n: N, label: ds.label };
    for (const s of [ours, redis]) {
      const base = rssBytes(s.proc.pid);
      const t0 = performance.now();
      await s.loader.run(ds.commands());
      const loadMs = performance.now() - t0;
      await sleep(SETTLE * 1000);
      const rss = rssBytes(s.proc.pid);
      const info = await s.loader.bulk(['INFO', 'memory']);
      const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
      row[s.name] = { baseRss: base, rss, usedMemory: used, loadMs: Math.round(loadMs) };
    }
    row.ratio = row.ours.rss / row.redis.rss;
    row.deltaRatio = (row.ours.rss - row.ours.baseRss) / (row.redis.rss - row.redis.baseRss);
    return row;
  } finally {
    await Promise.all([stop(ours), stop(redis)]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function printRow(r, header) {
  const cols = [
    ['dataset', 11, r.dataset], ['items', 9, r.n],
    ['ours idle MB', 13, mb(r.ours.baseRss)], ['redis idle MB', 14, mb(r.redis.baseRss)],
    ['ours RSS MB', 12, mb(r.ours.rss)], ['redis RSS MB', 13, mb(r.redis.rss)], ['ours/redis', 11, r.ratio.toFixed(2)],
    ['ours Δ MB', 10, mb(r.ours.rss - r.ours.baseRss)], ['redis Δ MB', 11, mb(r.redis.rss - r.redis.baseRss)], ['Δ ratio', 8, r.deltaRatio.toFixed(2)],
    ['redis used MB', 14, mb(r.redis.usedMemory)], ['ours B/item', 12, ((r.ours.rss - r.ours.baseRss) / r.n).toFixed(0)], ['redis B/item', 13, ((r.redis.rss - r.redis.baseRss) / r.n).toFixed(0)],
  ];
  if (header) console.log(cols.map(([h, w]) => String(h).padStart(w)).join(' '));
  console.log(cols.map(([, w, v]) => String(v).padStart(w)).join(' '));
}

async function main() {
  try {
    execFileSync('which', ['redis-server'], { stdio: 'ignore' });
  } catch {
    console.error('redis-server not found: apt-get install redis-server');
    process.exit(1);
  }
  const redisVersion = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim();
  console.log(`# ${new Date().toISOString()}  node ${process.version}  ${redisVersion.split(' ').slice(0, 3).join(' ')}`);
  console.log(`# ${SIZES.join(', ')} items per dataset; RSS after ${SETTLE} s idle; ours --appendfsync no`);
  const rows = [];
  for (const n of SIZES) {
    N = n;
    for (const name of SETS) {
      const row = await measure(name);
      rows.push(row);
      printRow(row, rows.length === 1);
    }
  }
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), sizes: SIZES, rows }, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
