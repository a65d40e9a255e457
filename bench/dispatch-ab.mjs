#!/usr/bin/env node
/**
 * A/B form of bench/dispatch.mjs: two builds (dist directories) loaded into ONE process, their
 * rounds interleaved (A, B, A, B...), so that the load of a shared machine falls on both alike.
 * Prints the median µs CPU per command of each and the ratio B/A.
 *
 *   node bench/dispatch-ab.mjs /path/to/base/dist dist     # A = base, B = this tree
 *   DISPATCH_TESTS=hset,lpush DISPATCH_PIPES=16 AB_ROUNDS=15 node bench/dispatch-ab.mjs A B
 */
import { EventEmitter } from 'node:events';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const TESTS = {
  get: () => ['GET', 'key:__rand_int__'],
  set: () => ['SET', 'key:__rand_int__', 'xxx'],
  incr: () => ['INCR', 'counter:__rand_int__'],
  lpush: () => ['LPUSH', 'mylist', 'xxx'],
  lpop: () => ['LPOP', 'mylist'],
  sadd: () => ['SADD', 'myset', 'element:__rand_int__'],
  hset: () => ['HSET', 'myhash', 'element:__rand_int__', 'xxx'],
  zadd: () => ['ZADD', 'myzset', '0', 'element:__rand_int__'],
};
const names = (process.env.DISPATCH_TESTS ?? 'set,incr,lpush,lpop,sadd,hset,zadd,get').split(',');
const pipes = (process.env.DISPATCH_PIPES ?? '16').split(',').map(Number);
const OPS = Number(process.env.DISPATCH_OPS ?? 100000);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 11);
const CONNS = 50;
const [distA, distB] = process.argv.slice(2).map((d) => path.resolve(d));
if (!distA || !distB) throw new Error('usage: dispatch-ab.mjs <distA> <distB>');

function encode(args) {
  let s = `*${args.length}\r\n`;
  for (const a of args) s += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return s;
}

class FakeSock extends EventEmitter {
  constructor(i) { super(); this.remoteAddress = '127.0.0.1'; this.remotePort = 40000 + i; this.localAddress = '127.0.0.1'; this.localPort = 6379; this.destroyed = false; this.writableLength = 0; this.bytes = 0; }
  setNoDelay() {} setKeepAlive() {} pause() {} resume() {} cork() {} uncork() {}
  write(b) { this.bytes += b.length; return true; }
  end() {} destroy() { this.destroyed = true; }
}

async function load(dist) {
  const imp = (f) => import(pathToFileURL(path.join(dist, f)).href);
  const { loadConfig } = await imp('config.js');
  const { createServer } = await imp('app.js');
  const { Connection } = await imp('tcp/connection.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dispatch-ab-'));
  const server = await createServer(loadConfig(['--port', '0', '--http-port', '-1', '--appendfsync', 'no', '--dir', dir]));
  const conns = Array.from({ length: CONNS }, (_, i) => new Connection(new FakeSock(i), server.engine, () => {}, true));
  return { server, conns, dir };
}

const sides = [await load(distA), await load(distB)];
const buf = Buffer.allocUnsafe(64 * 1024);

function run(side, name, pipe, ops) {
  const b = Buffer.from(Array.from({ length: pipe }, () => encode(TESTS[name]().map((a) => a.replace('__rand_int__', '000000000000')))).join(''));
  const rounds = Math.ceil(ops / pipe);
  const c0 = process.cpuUsage();
  for (let r = 0; r < rounds; r++) {
    b.copy(buf, 0);
    side.conns[r % CONNS].onRead(b.length, buf);
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / (rounds * pipe);
}

const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
console.log(`# ${new Date().toISOString()} load ${os.loadavg()[0].toFixed(1)}; A=${distA} B=${distB}; ${ROUNDS} interleaved rounds of ${OPS} ops; median µs CPU per command`);
for (const pipe of pipes) for (const name of names) {
  for (const s of sides) run(s, name, pipe, OPS / 2); // warm-up
  const a = [], b = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (i & 1) { b.push(run(sides[1], name, pipe, OPS)); a.push(run(sides[0], name, pipe, OPS)); }
    else { a.push(run(sides[0], name, pipe, OPS)); b.push(run(sides[1], name, pipe, OPS)); }
  }
  console.log(`${name.padStart(8)} -P ${String(pipe).padStart(2)}  A ${med(a).toFixed(3)}  B ${med(b).toFixed(3)}  B/A ${(med(b) / med(a)).toFixed(3)}`);
}
for (const s of sides) { await s.server.stop(); fs.rmSync(s.dir, { recursive: true, force: true }); }
process.exit(0);
