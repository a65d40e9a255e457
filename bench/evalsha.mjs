#!/usr/bin/env node
/**
 * EVALSHA of a script making 2, 10 and 50 redis.calls (issue 21), with redis-benchmark at
 * -P 1 and -P 16, against our server and a real redis-server, runs alternated (ours, Redis,
 * Redis, ours...). Both servers get the script with SCRIPT LOAD; redis-benchmark then sends
 * `EVALSHA <sha> 0`. Per row: ops/s (median of the rounds), the ratio ours/Redis and each
 * server's CPU time per script run (all threads).
 *
 * The script's calls cycle through SET of a 16-byte value, GET (a bulk reply), INCR (an
 * integer reply) and HSET of one field (a write with an integer reply): the kinds of calls
 * BullMQ's scripts make, with the reply types they get.
 *
 *   npm run bench:evalsha
 *   EVALSHA_CALLS=10 EVALSHA_PIPELINES=16 EVALSHA_ROUNDS=1 node bench/evalsha.mjs
 *   EVALSHA_APPENDFSYNC=everysec node bench/evalsha.mjs     # both servers persist (AOF everysec)
 */
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { oursArgv } from './server-cmd.mjs';
import { cpuSeconds, freePort, start, stop } from './proc.mjs';

const CALLS = (process.env.EVALSHA_CALLS ?? '2,10,50').split(',').map(Number);
const PIPELINES = (process.env.EVALSHA_PIPELINES ?? '1,16').split(',').map(Number);
const ROUNDS = Number(process.env.EVALSHA_ROUNDS ?? 3);
const REQUESTS = Number(process.env.EVALSHA_REQUESTS ?? 50000);
const CLIENTS = Number(process.env.EVALSHA_CLIENTS ?? 50);
const MODE = process.env.EVALSHA_APPENDFSYNC ?? 'no';

/** A script of n redis.calls, unrolled as BullMQ's are (also used by lua-micro.mjs). */
export function script(n) {
  const lines = [];
  for (let i = 0; i < n; i++) {
    const k = `'bench:lua:${i % 8}'`;
    switch (i % 4) {
      case 0: lines.push(`redis.call('SET', ${k}, '0123456789abcdef')`); break;
      case 1: lines.push(`local v${i} = redis.call('GET', ${k})`); break;
      case 2: lines.push(`redis.call('INCR', 'bench:lua:n')`); break;
      default: lines.push(`redis.call('HSET', 'bench:lua:h', 'f${i % 16}', 'value')`);
    }
  }
  lines.push('return 1');
  return lines.join('\n');
}

function cli(port, ...args) {
  return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' }).trim();
}

function run(server, sha, pipeline) {
  const before = cpuSeconds(server.proc.pid);
  const res = spawnSync('redis-benchmark', ['-h', '127.0.0.1', '-p', String(server.port), '-c', String(CLIENTS), '-n', String(REQUESTS),
    '-P', String(pipeline), '-q', '--csv', 'EVALSHA', sha, '0'], { encoding: 'utf8', timeout: 300000 });
  const cpu = cpuSeconds(server.proc.pid) - before;
  const row = (res.stdout ?? '').trim().split('\n').find((l) => !l.startsWith('"test"'));
  if (res.status !== 0 || row === undefined) throw new Error(`redis-benchmark on ${server.name}: ${res.stderr || res.error?.message}`);
  return { rps: Number(row.split(',')[1].replace(/"/g, '')), cpu: (cpu * 1e6) / REQUESTS };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

async function main() {
  const dirs = [fs.mkdtempSync(path.join(os.tmpdir(), 'ev-ours-')), fs.mkdtempSync(path.join(os.tmpdir(), 'ev-redis-'))];
  const [pOurs, pRedis] = process.env.EVALSHA_PORTS ? process.env.EVALSHA_PORTS.split(',').map(Number) : [await freePort(), await freePort()];
  const extra = (process.env.EVALSHA_OURS_FLAGS ?? '').split(' ').filter(Boolean);
  const ours = await start('ours', process.execPath, [...extra, ...oursArgv(['--port', String(pOurs), '--http-port', '-1', '--appendfsync', MODE, '--dir', dirs[0]])], pOurs);
  const persist = MODE === 'no' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', MODE];
  const redis = await start('redis', 'redis-server', ['--port', String(pRedis), '--bind', '127.0.0.1', '--save', '', ...persist, '--dir', dirs[1]], pRedis);
  console.log(`# ${new Date().toISOString()}  node ${process.version}  redis-benchmark -c ${CLIENTS} -n ${REQUESTS}; ${ROUNDS} round(s), median; ours --appendfsync ${MODE}, redis ${persist.join(' ')}`);
  console.log('| calls | -P | ours ops/s | Redis ops/s | ratio | ours µs CPU/op | Redis µs CPU/op | CPU ratio |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  try {
    for (const n of CALLS) {
      const body = script(n);
      const sha = cli(ours.port, 'SCRIPT', 'LOAD', body);
      if (cli(redis.port, 'SCRIPT', 'LOAD', body) !== sha) throw new Error('SCRIPT LOAD: different sha1');
      // The replies must agree before anything is timed.
      for (const s of [ours, redis]) cli(s.port, 'FLUSHALL');
      const r1 = cli(ours.port, 'EVALSHA', sha, '0') + cli(ours.port, 'GET', 'bench:lua:n');
      const r2 = cli(redis.port, 'EVALSHA', sha, '0') + cli(redis.port, 'GET', 'bench:lua:n');
      if (r1 !== r2) throw new Error(`different results: ${r1} / ${r2}`);
      for (const p of PIPELINES) {
        const rows = { ours: [], redis: [] };
        for (let r = 0; r < ROUNDS; r++) {
          for (const s of r % 2 === 0 ? [ours, redis] : [redis, ours]) rows[s.name].push(run(s, sha, p));
        }
        const [or, rr] = [median(rows.ours.map((x) => x.rps)), median(rows.redis.map((x) => x.rps))];
        const [oc, rc] = [median(rows.ours.map((x) => x.cpu)), median(rows.redis.map((x) => x.cpu))];
        console.log(`| ${n} | ${p} | ${or.toFixed(0)} | ${rr.toFixed(0)} | ${(or / rr).toFixed(2)} | ${oc.toFixed(1)} | ${rc.toFixed(1)} | ${(oc / rc).toFixed(2)} |`);
      }
    }
  } finally {
    await Promise.all([stop(ours), stop(redis)]);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
  console.log(`# load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}

// EVALSHA_PRINT=n: print the script of n calls (to profile it by hand) instead of running.
if (process.env.EVALSHA_PRINT) console.log(script(Number(process.env.EVALSHA_PRINT)));
else if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
