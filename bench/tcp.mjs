#!/usr/bin/env node
/**
 * TCP macro benchmark: redis-benchmark against our server and against a real redis-server,
 * same flags, runs interleaved (ours, redis, ours, redis...) so both see the same machine load.
 *
 * For each protocol (RESP2, then RESP3: redis-benchmark -3, every connection sends HELLO 3),
 * test and pipeline depth it prints ops/s for both servers, the ratio ours/redis, and each
 * server's CPU time per operation (utime+stime of the server process from /proc/<pid>/stat
 * before and after the run, in µs/op).
 *
 *   npm run bench:tcp                          # defaults below
 *   BENCH_TESTS=set,get BENCH_PIPELINES=1 BENCH_ROUNDS=3 npm run bench:tcp
 *   BENCH_PROTOCOLS=3 npm run bench:tcp        # the RESP3 runs only
 *   BENCH_PORT=21900 npm run bench:tcp         # ours on 21900, redis-server on 21901
 *   BENCH_DATA=100 BENCH_TESTS=set,get ...     # 100-byte values (redis-benchmark -d)
 *   node bench/tcp.mjs --json results.json     # also write the raw figures
 *
 * Adding a command: append it to DEFAULT_TESTS (a redis-benchmark -t name; see `redis-benchmark --help`
 * for the list: set get incr lpush rpush lpop rpop sadd hset spop zadd zpopmin lrange_100 ...
 * mset). Tests that need data first (LPOP, LRANGE...) are preceded by their filling test in the
 * same list, as redis-benchmark itself does.
 */
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { oursArgv } from './server-cmd.mjs';
import { createHash } from 'node:crypto';
import { freePort } from './proc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Test names, in run order: redis-benchmark -t names, or the custom commands of CUSTOM below
 * (run as `redis-benchmark ... <command>` after their setup commands).
 */
const DEFAULT_TESTS = 'set,get,incr,mset,lpush,lpop,sadd,hset,hgetall10,zadd,zrange100,zrange100ws,zrank,xadd,xrange10,evalsha,json.set,json.get';
const TESTS = (process.env.BENCH_TESTS ?? DEFAULT_TESTS).split(',').map((s) => s.trim()).filter(Boolean);

const SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])";
/** Fills KEYS[1] with ARGV[1] members member:<12 digits> (score = their number), 1000 per ZADD. */
const FILL_ZSET = "local n = tonumber(ARGV[1]) for b = 0, n - 1, 1000 do local a = {} for i = b, math.min(n, b + 1000) - 1 do a[#a + 1] = i a[#a + 1] = string.format('member:%012d', i) end redis.call('ZADD', KEYS[1], unpack(a)) end return n";
/** Fills ARGV[1] string keys fill:<i> with 64-byte values. */
const FILL_STRINGS = "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'fill:' .. i, string.rep('x', 64)) end return 1";
/**
 * Custom tests: setup commands (sent once with redis-cli), then the measured command, then
 * optional teardown commands.
 */
const CUSTOM = {
  // SET of new keys with maxmemory reached under allkeys-lru: every SET evicts (approximated
  // LRU, eviction pool). 200,000 keys are written first, then the limit is set below them.
  set_lru: {
    label: 'SET at maxmemory (allkeys-lru)',
    setup: [['FLUSHALL'], ['EVAL', FILL_STRINGS, '0', '200000'], ['CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru'],
      ['CONFIG', 'SET', 'maxmemory', '16mb'], ['SET', 'bench:warm', 'x']],
    cmd: ['-r', '1000000', 'SET', 'key:__rand_int__', 'x'.repeat(64)],
    teardown: [['CONFIG', 'SET', 'maxmemory', '0'], ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction'], ['FLUSHALL']],
  },
  zrange100: {
    label: 'ZRANGE (100 members)',
    setup: [['DEL', 'bench:z'], ['ZADD', 'bench:z', ...Array.from({ length: 100 }, (_, i) => [String(i), `member:${i}`]).flat()]],
    cmd: ['ZRANGE', 'bench:z', '0', '99'],
  },
  // RESP3 shapes: a map (HGETALL) and (member, double) pairs (WITHSCORES).
  hgetall10: {
    label: 'HGETALL (10 fields)',
    setup: [['DEL', 'bench:h'], ['HSET', 'bench:h', ...Array.from({ length: 10 }, (_, i) => [`field:${i}`, `value:${i}`]).flat()]],
    cmd: ['HGETALL', 'bench:h'],
  },
  hget10: {
    label: 'HGET (10 fields)',
    setup: [['DEL', 'bench:hg'], ['HSET', 'bench:hg', ...Array.from({ length: 10 }, (_, i) => [`field:${i}`, `value:${i}`]).flat()]],
    cmd: ['HGET', 'bench:hg', 'field:7'],
  },
  hget100: {
    label: 'HGET (100 fields)',
    setup: [['DEL', 'bench:hg100'], ['HSET', 'bench:hg100', ...Array.from({ length: 100 }, (_, i) => [`field:${i}`, `value:${i}`]).flat()]],
    cmd: ['HGET', 'bench:hg100', 'field:77'],
  },
  zrange100ws: {
    label: 'ZRANGE WITHSCORES',
    setup: [['DEL', 'bench:zw'], ['ZADD', 'bench:zw', ...Array.from({ length: 100 }, (_, i) => [String(i + 0.5), `member:${i}`]).flat()]],
    cmd: ['ZRANGE', 'bench:zw', '0', '99', 'WITHSCORES'],
  },
  zrank: {
    label: 'ZRANK',
    setup: [['DEL', 'bench:zr'], ['ZADD', 'bench:zr', ...Array.from({ length: 1000 }, (_, i) => [String(i), `member:${i}`]).flat()]],
    cmd: ['ZRANK', 'bench:zr', 'member:500'],
  },
  // ZADD updating random members of a 1,000-member and of a 1,000,000-member set (-r: redis-
  // benchmark's __rand_int__ is a 12-digit number below it): what the size of the set costs.
  zadd1k: {
    label: 'ZADD (update, 1K set)',
    setup: [['DEL', 'bench:zs'], ['EVAL', FILL_ZSET, '1', 'bench:zs', '1000']],
    cmd: ['-r', '1000', 'ZADD', 'bench:zs', '__rand_int__', 'member:__rand_int__'],
  },
  zadd1m: {
    label: 'ZADD (update, 1M set)',
    setup: [['DEL', 'bench:zb'], ['EVAL', FILL_ZSET, '1', 'bench:zb', '1000000']],
    cmd: ['-r', '1000000', 'ZADD', 'bench:zb', '__rand_int__', 'member:__rand_int__'],
  },
  xadd: {
    label: 'XADD',
    setup: [['DEL', 'bench:xa']],
    cmd: ['XADD', 'bench:xa', '*', 'field', 'value'],
  },
  xrange10: {
    label: 'XRANGE (10 entries)',
    setup: [['DEL', 'bench:x'], ...Array.from({ length: 10 }, (_, i) => ['XADD', 'bench:x', `${i + 1}-0`, 'field', 'value'])],
    cmd: ['XRANGE', 'bench:x', '-', '+'],
  },
  evalsha: {
    label: 'EVALSHA (SET+GET)',
    setup: [['SCRIPT', 'LOAD', SCRIPT]],
    cmd: ['EVALSHA', createHash('sha1').update(SCRIPT).digest('hex'), '1', 'bench:eval', 'value'],
  },
  'json.set': {
    label: 'JSON.SET (small doc)',
    setup: [],
    cmd: ['JSON.SET', 'bench:json', '$', '{"name":"bench","n":1,"tags":["a","b"]}'],
  },
  'json.get': {
    label: 'JSON.GET (small doc)',
    setup: [['JSON.SET', 'bench:json', '$', '{"name":"bench","n":1,"tags":["a","b"]}']],
    cmd: ['JSON.GET', 'bench:json', '$.name'],
  },
};
const PIPELINES = (process.env.BENCH_PIPELINES ?? '1,16').split(',').map(Number);
/** Protocols: 2 (RESP2) and 3 (redis-benchmark -3: HELLO 3 on every connection). */
const PROTOCOLS = (process.env.BENCH_PROTOCOLS ?? '2,3').split(',').map(Number);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100000);
/** Value size of the -t tests (redis-benchmark -d; its default is 3 bytes). */
const DATA = process.env.BENCH_DATA ? ['-d', String(Number(process.env.BENCH_DATA))] : [];
/** Rounds per (test, pipeline); the median of the rounds is reported. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
/**
 * Our persistence mode: 'no' (default: in memory, like the redis-server it is compared with,
 * which runs without RDB/AOF) or 'everysec' / 'always' (LMDB in a temporary directory).
 */
const APPENDFSYNC = process.env.BENCH_APPENDFSYNC ?? 'no';
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null;

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;


async function waitForPort(port, proc) {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server on ${port} exited with ${proc.exitCode}`);
    const ok = await new Promise((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the ")" of the command name; utime and stime are fields 14 and 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

async function start(name, cmd, args) {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  const port = Number(args[args.indexOf('--port') + 1]);
  try {
    await waitForPort(port, proc);
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error(`${name}: ${err.message}\n${out}`);
  }
  return { name, proc, port, output: () => out };
}

function stop(s) {
  return new Promise((resolve) => {
    if (s.proc.exitCode !== null) return resolve();
    const t = setTimeout(() => s.proc.kill('SIGKILL'), 5000);
    s.proc.once('exit', () => { clearTimeout(t); resolve(); });
    s.proc.kill('SIGTERM');
  });
}

/** One redis-benchmark run of one test; returns ops/s and the server's CPU µs per op. */
function run(server, test, pipeline, resp = 2) {
  const custom = CUSTOM[test];
  if (custom) {
    for (const c of custom.setup) spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(server.port), ...c], { encoding: 'utf8' });
  }
  const before = cpuSeconds(server.proc.pid);
  const args = ['-h', '127.0.0.1', '-p', String(server.port), '-c', String(CLIENTS), '-n', String(REQUESTS),
    '-P', String(pipeline), '-q', '--csv', ...(resp === 3 ? ['-3'] : []), ...(custom ? custom.cmd : [...DATA, '-t', test])];
  const res = spawnSync('redis-benchmark', args, { encoding: 'utf8', timeout: 600000 });
  const cpu = cpuSeconds(server.proc.pid) - before;
  for (const c of custom?.teardown ?? []) spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(server.port), ...c], { encoding: 'utf8' });
  const out = res.stdout ?? '';
  if (res.status !== 0) {
    // e.g. "Error from server: ERR unknown command 'INCR'": report it and go on.
    const why = (res.stderr || res.error?.message || '').trim().split('\n').filter((l) => !l.startsWith('WARNING')).pop();
    return { label: custom?.label ?? test.toUpperCase(), rps: NaN, cpuUsPerOp: NaN, error: `${server.name}: ${why}` };
  }
  const rows = out.trim().split('\n').filter((l) => !l.startsWith('"test"')).map((l) => l.split(',').map((x) => x.replace(/"/g, '')));
  if (rows.length === 0) throw new Error(`no result from redis-benchmark ${args.join(' ')}:\n${out}`);
  // The label may itself hold commas (JSON.SET's document): the 7 figures are the last columns.
  const label0 = rows[0].slice(0, -7).join(',');
  const rps = rows[0][rows[0].length - 7];
  const label = custom?.label ?? label0;
  // redis-benchmark exits 0 even when the server answers an error to a custom command.
  if (custom && rows.length === 0) return { label, rps: NaN, cpuUsPerOp: NaN, error: `${server.name}: no result` };
  // MSET counts one operation per command (10 keys each), as redis-benchmark reports it.
  return { label, rps: Number(rps), cpuUsPerOp: (cpu * 1e6) / REQUESTS };
}

const median = (xs) => (xs.some(Number.isNaN) ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]);

async function main() {
  for (const bin of ['redis-server', 'redis-benchmark']) {
    try {
      execFileSync('which', [bin], { stdio: 'ignore' });
    } catch {
      console.error(`${bin} not found: apt-get install redis-server redis-tools`);
      process.exit(1);
    }
  }
  const dirOurs = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ours-'));
  const dirRedis = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-redis-'));
  // BENCH_PORT: fixed ports (it and the next) on a machine where runs are given a port range.
  const base = Number(process.env.BENCH_PORT ?? 0);
  const [pOurs, pRedis] = base > 0 ? [base, base + 1] : [await freePort(), await freePort()];
  const ours = await start('ours', process.execPath, oursArgv(['--port', String(pOurs), '--http-port', '-1', '--appendfsync', APPENDFSYNC, '--dir', dirOurs]));
  // Like for like: with persistence on, Redis keeps an AOF with the same fsync policy.
  const redisPersist = APPENDFSYNC === 'no' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', APPENDFSYNC];
  const redis = await start('redis', 'redis-server', ['--port', String(pRedis), '--bind', '127.0.0.1', '--save', '', ...redisPersist, '--dir', dirRedis]);
  const redisVersion = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim();
  const cpuModel = (os.cpus()[0]?.model ?? 'unknown').trim();
  console.log(`# ${new Date().toISOString()}  node ${process.version}  ${redisVersion.split(' ').slice(0, 3).join(' ')}`);
  console.log(`# ${os.cpus().length} CPUs (${cpuModel}); redis-benchmark -c ${CLIENTS} -n ${REQUESTS}; ${ROUNDS} round(s), median; ours --appendfsync ${APPENDFSYNC}; redis ${redisPersist.join(' ')}`);
  const results = [];
  try {
    // Warm-up: let V8 optimise the hot paths before the measured runs.
    run(ours, 'set,get', 16);
    for (const resp of PROTOCOLS) for (const pipeline of PIPELINES) {
      for (const test of TESTS) {
        const o = [];
        const r = [];
        for (let i = 0; i < ROUNDS; i++) {
          // Interleaved, alternating who goes first.
          if (i % 2 === 0) { o.push(run(ours, test, pipeline, resp)); r.push(run(redis, test, pipeline, resp)); }
          else { r.push(run(redis, test, pipeline, resp)); o.push(run(ours, test, pipeline, resp)); }
        }
        const row = {
          test: o[0].label, resp, pipeline,
          ours: median(o.map((x) => x.rps)), redis: median(r.map((x) => x.rps)),
          oursCpu: median(o.map((x) => x.cpuUsPerOp)), redisCpu: median(r.map((x) => x.cpuUsPerOp)),
        };
        row.ratio = row.ours / row.redis;
        const errors = [...o, ...r].map((x) => x.error).filter(Boolean);
        if (errors.length) row.error = errors[0];
        results.push(row);
        printRow(row, results.length === 1);
        if (row.error) console.log(`    ! ${row.error}`);
      }
    }
  } finally {
    await Promise.all([stop(ours), stop(redis)]);
    fs.rmSync(dirOurs, { recursive: true, force: true });
    fs.rmSync(dirRedis, { recursive: true, force: true });
  }
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), clients: CLIENTS, requests: REQUESTS, rounds: ROUNDS, results }, null, 2));
}

function printRow(r, header) {
  const cols = [
    ['test', 20, r.test], ['resp', 4, r.resp], ['-P', 4, r.pipeline], ['ours ops/s', 12, Math.round(r.ours)], ['redis ops/s', 12, Number.isNaN(r.redis) ? '-' : Math.round(r.redis)],
    ['ours/redis', 11, Number.isNaN(r.ratio) ? '-' : r.ratio.toFixed(2)], ['ours µs/op', 11, r.oursCpu.toFixed(2)], ['redis µs/op', 12, Number.isNaN(r.redisCpu) ? '-' : r.redisCpu.toFixed(2)],
  ];
  if (header) console.log(cols.map(([h, w]) => String(h).padStart(w)).join(' '));
  console.log(cols.map(([, w, v]) => String(v).padStart(w)).join(' '));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
