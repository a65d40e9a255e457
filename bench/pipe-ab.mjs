#!/usr/bin/env node
/**
 * redis-benchmark's `-P 16` requests, in process: 16 pipelined commands in one chunk, parsed by
 * the RESP parser, executed, the replies written by a RespWriter and flushed to a sink that
 * drops them (no socket, no kernel: the user-space part of the server's CPU per request).
 * Both builds are loaded into this one process and their rounds alternate, so a shared
 * machine's load falls on both alike; prints the median CPU ns per command.
 *
 *   node --max-semi-space-size=4 bench/pipe-ab.mjs base-dist dist [tests] [iterations] [rounds]
 *   tests: get,set,incr,hset,lpush,lpop,sadd,zadd (redis-benchmark's commands and keys),
 *          hsetv (the value changes every time), hset10 (a field of a 10-field hash),
 *          lpushpop (8 LPUSH then 8 LPOP: a list that does not grow),
 *          getc (GET of a key of the compact tier: set once by a plain SET, never written again),
 *          ssadd / ssismember (many small sets: random keys of 100,000 and members, as
 *          redis-benchmark -r 100000);
 *          on `bz`, a sorted set of 100,000 members (member:NNNNNNN, score N), random members
 *          and ranks: zrange10 (ZRANGE r r+9 WITHSCORES), zrangebyscore (10 members), zrank,
 *          zincrby (ZINCRBY 1), zaddu (ZADD of an existing member, new score), zscore;
 *          zaddpop (8 ZADD of new members then ZPOPMIN 8 times on a queue set, BullMQ's way),
 *          zremadd (8 times ZREM of a random member of bz and its ZADD back)
 *
 * For instruction counts (stable whatever the load), run one build under
 * `valgrind --tool=callgrind --smc-check=all-non-file` with PIPEAB_ONLY=A at two iteration
 * counts and divide the difference.
 */
import { pipeTurn } from './inproc.mjs';

const [dA = 'base-dist', dB = 'dist', tests = 'get,set,incr,hset,lpush,lpop,sadd,zadd', iters = '20000', rounds = '11'] = process.argv.slice(2);
const V = 'xxx';
/** Members of the sorted set `bz` of the z* tests. */
const ZN = 100000;
const CMDS = {
  get: ['GET', 'key:__rand_int__'], set: ['SET', 'key:__rand_int__', V], incr: ['INCR', 'counter:__rand_int__'],
  hset: ['HSET', 'myhash', 'element:__rand_int__', V], lpush: ['LPUSH', 'mylist', V], lpop: ['LPOP', 'mylist'],
  sadd: ['SADD', 'myset', 'element:__rand_int__'], zadd: ['ZADD', 'myzset', '0', 'element:__rand_int__'],
  hset10: ['HSET', 'h10', 'field:7', V], getc: ['GET', 'kc'],
};
const resp = (ws) => `*${ws.length}\r\n` + ws.map((w) => `$${w.length}\r\n${w}\r\n`).join('');
/** The 16-command chunk of a test. */
function chunk(t) {
  // Many small sets: redis-benchmark -r 100000 `SADD set:__rand_int__ m:__rand_int__`, then
  // SISMEMBER the same way (512 chunks of random keys, cycled).
  if (t === 'ssadd' || t === 'ssismember') {
    const cmd = t === 'ssadd' ? 'SADD' : 'SISMEMBER';
    const r = () => String(Math.floor(Math.random() * 100000)).padStart(12, '0');
    return Array.from({ length: 512 }, () => Buffer.from(Array.from({ length: 16 }, () => resp([cmd, `set:${r()}`, `m:${r()}`])).join('')));
  }
  const rm = () => `member:${String(Math.floor(Math.random() * ZN)).padStart(7, '0')}`;
  const rr = () => Math.floor(Math.random() * (ZN - 10));
  const ZCMD = {
    zrange10: () => { const r = rr(); return ['ZRANGE', 'bz', String(r), String(r + 9), 'WITHSCORES']; },
    zrangebyscore: () => { const r = rr(); return ['ZRANGEBYSCORE', 'bz', String(r), String(r + 9)]; },
    zrank: () => ['ZRANK', 'bz', rm()],
    zscore: () => ['ZSCORE', 'bz', rm()],
    zincrby: () => ['ZINCRBY', 'bz', '1', rm()],
    zaddu: () => ['ZADD', 'bz', String(rr()), rm()],
  };
  if (ZCMD[t]) return Array.from({ length: 512 }, () => Buffer.from(Array.from({ length: 16 }, () => resp(ZCMD[t]())).join('')));
  if (t === 'zremadd') {
    // ZREM of a random member of bz and its ZADD back (the size stays).
    return Array.from({ length: 512 }, () => Buffer.from(Array.from({ length: 8 }, () => { const m = rm(); return resp(['ZREM', 'bz', m]) + resp(['ZADD', 'bz', m.slice(7), m]); }).join('')));
  }
  if (t === 'zaddpop') {
    let q = 0;
    return Array.from({ length: 512 }, () => Buffer.from(Array.from({ length: 8 }, () => resp(['ZADD', 'zq', String(q), `job:${q++}`])).join('') + resp(['ZPOPMIN', 'zq']).repeat(8)));
  }
  if (t === 'lpushpop') return Buffer.from(resp(['LPUSH', 'ql', V]).repeat(8) + resp(['LPOP', 'ql']).repeat(8));
  if (t === 'hsetv') return Buffer.from(Array.from({ length: 16 }, (_, k) => resp(['HSET', 'myhash2', 'element:__rand_int__', `x${String.fromCharCode(65 + k)}x`])).join(''));
  return Buffer.from(resp(CMDS[t]).repeat(16));
}

async function build(dist) {
  const { turn } = await pipeTurn(dist);
  const f10 = [];
  for (let i = 0; i < 10; i++) f10.push(`field:${i}`, `value:${i}`);
  turn(Buffer.from(resp(['HSET', 'h10', ...f10])));
  turn(Buffer.from(resp(['SET', 'kc', V]))); // a new key: the compact tier
  for (let i = 0; i < ZN; i += 1000) {
    const a = ['ZADD', 'bz'];
    for (let j = i; j < i + 1000; j++) a.push(String(j), `member:${String(j).padStart(7, '0')}`);
    turn(Buffer.from(resp(a)));
  }
  return turn;
}

const only = process.env.PIPEAB_ONLY;
const builds = only === 'A' ? { A: await build(dA) } : { A: await build(dA), B: await build(dB) };
const N = Number(iters);
const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const { loadavg } = await import('node:os');
console.log(`# ${new Date().toISOString()} load ${loadavg().map((x) => x.toFixed(1)).join(' ')}; ${N} x 16 commands per round, ${rounds} rounds; A=${dA} B=${dB}`);
for (const t of tests.split(',')) {
  const c = chunk(t);
  const bs = Array.isArray(c) ? c : [c];
  const names = Object.keys(builds);
  const res = Object.fromEntries(names.map((k) => [k, []]));
  for (const k of names) for (let i = 0; i < N / 4; i++) builds[k](bs[i % bs.length]);
  for (let r = 0; r < Number(rounds); r++) {
    for (const k of r & 1 ? names.slice().reverse() : names) {
      const turn = builds[k];
      const c0 = process.cpuUsage();
      for (let i = 0; i < N; i++) turn(bs[i % bs.length]);
      const c = process.cpuUsage(c0);
      res[k].push(((c.user + c.system) * 1000) / N / 16);
    }
  }
  const a = med(res.A);
  if (res.B === undefined) console.log(`${t.padEnd(8)} A ${a.toFixed(0).padStart(5)} ns`);
  else console.log(`${t.padEnd(8)} A ${a.toFixed(0).padStart(5)} ns  B ${med(res.B).toFixed(0).padStart(5)} ns  B/A ${(med(res.B) / a).toFixed(2)}`);
}
