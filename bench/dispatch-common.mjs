/**
 * What bench/dispatch.mjs and bench/dispatch-ab.mjs share: the tests (redis-benchmark's
 * commands), RESP encoding, and the socket stand-in that drops the bytes.
 */
import { EventEmitter } from 'node:events';

export const TESTS = {
  get: (i) => ['GET', 'key:__rand_int__'],
  set: (i) => ['SET', 'key:__rand_int__', 'xxx'],
  incr: () => ['INCR', 'counter:__rand_int__'],
  lpush: () => ['LPUSH', 'mylist', 'xxx'],
  lpop: () => ['LPOP', 'mylist'],
  sadd: () => ['SADD', 'myset', 'element:__rand_int__'],
  hset: () => ['HSET', 'myhash', 'element:__rand_int__', 'xxx'],
  zadd: () => ['ZADD', 'myzset', '0', 'element:__rand_int__'],
  zrangews: () => ['ZRANGE', 'bench:zw', '0', '99', 'WITHSCORES'],
  ping: () => ['PING'],
};

export function encode(args) {
  let s = `*${args.length}\r\n`;
  for (const a of args) s += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return s;
}

export class FakeSock extends EventEmitter {
  constructor(i) { super(); this.remoteAddress = '127.0.0.1'; this.remotePort = 40000 + i; this.localAddress = '127.0.0.1'; this.localPort = 6379; this.destroyed = false; this.writableLength = 0; this.bytes = 0; }
  setNoDelay() {} setKeepAlive() {} pause() {} resume() {} cork() {} uncork() {}
  write(b) { this.bytes += b.length; return true; }
  end() {} destroy() { this.destroyed = true; }
}
