#!/usr/bin/env node
/**
 * CPU per command of small hashes and lists (the flat listpack forms), in process, with the
 * replies written by a real RespWriter (flushed to a sink that drops them): each build given
 * runs in its own child process, the builds alternate round by round, medians printed.
 *
 *   node bench/flat-read.mjs /tmp/s10-base-dist dist            # A/B (any number of builds)
 *   FR_ROUNDS=5 FR_N=200000 FR_TESTS='HGET h10,HINCRBY h10' node bench/flat-read.mjs dist
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const HERE = fileURLToPath(import.meta.url);

if (process.env.FR_CHILD) {
  const { inProcess, argvOf: argvWords } = await import('./inproc.mjs');
  const { DIST, client, execute, Argv } = await inProcess(process.env.FR_CHILD);
  const { RespWriter } = await import(`${DIST}/resp/writer.js`);
  const out = new RespWriter();
  const sock = { write: () => true, writableLength: 0 };
  const argvOf = (words) => argvWords(Argv, words);
  const run = (w) => { execute(client, argvOf(w), out); out.flush(sock); };
  const f10 = []; for (let i = 0; i < 10; i++) f10.push(`field:${i}`, `value:${i}`);
  const f100 = []; for (let i = 0; i < 100; i++) f100.push(`field:${i}`, `value:${i}`);
  const mixed = []; for (let i = 0; i < 10; i++) mixed.push(`f${i}`, i % 2 ? String(i * 1000) : `some-value-${i}`);
  run(['HSET', 'h10', ...f10]); run(['HSET', 'h100', ...f100]); run(['HSET', 'hm', ...mixed]);
  run(['HSET', 'hc', ...f10.map((x, i) => (i % 2 ? String(i * 500) : x))]);
  run(['RPUSH', 'l10', ...f10.slice(0, 10)]); run(['RPUSH', 'l100', ...f100.slice(0, 100)]);
  const li = []; for (let i = 0; i < 100; i++) li.push(String(i * 37));
  run(['RPUSH', 'li100', ...li]);
  const TESTS = {
    'HGET h10': [['HGET', 'h10', 'field:7']],
    'HGET h100': [['HGET', 'h100', 'field:70']],
    'HGET h100 miss': [['HGET', 'h100', 'nofield']],
    'HEXISTS h10': [['HEXISTS', 'h10', 'field:7']],
    'HMGET h10 3': [['HMGET', 'h10', 'field:1', 'field:5', 'field:9']],
    'HSET h10 upd': [['HSET', 'h10', 'field:3', 'abc']],
    'HINCRBY h10': [['HINCRBY', 'hc', 'cnt', '1']],
    'HINCRBY h10 mid': [['HINCRBY', 'hc', 'field:4', '1']],
    'HGETALL h10': [['HGETALL', 'h10']],
    'HGETALL mixed': [['HGETALL', 'hm']],
    'HGETALL h100': [['HGETALL', 'h100']],
    'HSET new+HDEL': [['HSET', 'h10', 'tmp', 'x'], ['HDEL', 'h10', 'tmp']],
    'LRANGE l100': [['LRANGE', 'l100', '0', '-1']],
    'LRANGE ints100': [['LRANGE', 'li100', '0', '-1']],
    'LRANGE l100 0 9': [['LRANGE', 'l100', '0', '9']],
    'LINDEX l10': [['LINDEX', 'l10', '5']],
    'RPUSH+LPOP l10': [['RPUSH', 'l10', 'job:123'], ['LPOP', 'l10']],
  };
  const N = Number(process.env.FR_N ?? 200000);
  const only = process.env.FR_TESTS ? process.env.FR_TESTS.split(',') : Object.keys(TESTS);
  const res = {};
  for (const name of only) {
    const cmds = TESTS[name].map(argvOf);
    const once = () => { for (const a of cmds) execute(client, a, out); out.flush(sock); };
    for (let i = 0; i < 20000; i++) once();
    const t0 = process.cpuUsage();
    for (let i = 0; i < N; i++) once();
    const t = process.cpuUsage(t0);
    res[name] = (t.user + t.system) / N;
  }
  console.log(JSON.stringify(res));
  process.exit(0);
}

const dists = process.argv.slice(2);
if (dists.length === 0) dists.push('dist');
const ROUNDS = Number(process.env.FR_ROUNDS ?? 3);
const all = dists.map(() => ({}));
for (let r = 0; r < ROUNDS; r++) {
  dists.forEach((d, i) => {
    const p = spawnSync(process.execPath, [HERE], { env: { ...process.env, FR_CHILD: path.resolve(d) }, encoding: 'utf8' });
    if (p.status !== 0) throw new Error(p.stderr);
    const res = JSON.parse(p.stdout.trim().split('\n').pop());
    for (const [k, v] of Object.entries(res)) (all[i][k] ??= []).push(v);
  });
}
const med = (v) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];
const { loadavg } = await import('node:os');
console.log(`# ${new Date().toISOString()} ${ROUNDS} rounds, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; µs CPU per command (median [min-max])`);
console.log(['command', ...dists].map((s, i) => (i === 0 ? s.padEnd(18) : s.slice(-26).padStart(28))).join(''));
for (const name of Object.keys(all[0])) {
  const cells = all.map((a) => { const v = a[name]; return `${med(v).toFixed(2)} [${Math.min(...v).toFixed(2)}-${Math.max(...v).toFixed(2)}]`; });
  console.log([name.padEnd(18), ...cells.map((c) => c.padStart(28))].join(''));
}
