/**
 * Persistence of hashes (with field TTLs), sets and sorted sets: in-process, with the real
 * command handlers (execute()) on an Engine with Persistence on a temporary directory,
 * "restarted" by closing it and opening a new Engine on the same directory. Every test runs
 * with appendfsync always and everysec.
 *
 * Covered: small values (stored whole) and big ones (one record per element), with their
 * encodings and orders; conversions between the two forms across restarts; DEL, overwrite,
 * RENAME, MOVE, SWAPDB, FLUSHDB and COPY of big collections; a big collection and a hash field
 * expiring while the server is down; and the write cost: one HSET / SADD / ZADD into a value of
 * 100,000 elements writes as many LMDB records and about as many bytes as into a small one.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Engine } from '../../dist/engine/engine.js';
import { Client, type Transport } from '../../dist/engine/client.js';
import { execute } from '../../dist/engine/dispatch.js';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { loadConfig } from '../../dist/config.js';
import { Argv } from '../../dist/resp/argv.js';
import { Persistence } from '../../dist/store/persistence.js';
import { Resp2Shapes } from '../../dist/resp/reply-sink.js';
import { startOurs } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

// ---------------------------------------------------------------- harness

/** Replies as RESP2 text (latin1: one char per byte). */
class Capture extends Resp2Shapes {
  text = '';
  ok(): void { this.text += '+OK\r\n'; }
  simple(s: string): void { this.text += `+${s}\r\n`; }
  error(msg: string): void { this.text += `-${msg}\r\n`; }
  int(n: number | bigint): void { this.text += `:${n}\r\n`; }
  bulk(v: Buffer): void { this.text += `$${v.length}\r\n${v.toString('latin1')}\r\n`; }
  bulkLatin1(s: string): void { this.text += `$${s.length}\r\n${s}\r\n`; }
  bulkText(s: string): void { this.bulk(Buffer.from(s)); }
  nil(): void { this.text += '$-1\r\n'; }
  array(n: number): void { this.text += `*${n}\r\n`; }
  nilArray(): void { this.text += '*-1\r\n'; }
}

const transport: Transport = {
  kind: 'internal', close() {}, requestFlush() {}, resume() {}, outputBytes: () => 0, inputBytes: () => 0,
};

type Mode = 'always' | 'everysec';

interface Node {
  eng: Engine;
  p: Persistence;
  /** Run one command; returns its reply as RESP text. */
  run: (...args: Array<string | Buffer>) => string;
}

function open(dir: string, mode: Mode): Node {
  const eng = new Engine(loadConfig(['--dir', dir, '--appendfsync', mode], {}), FAMILIES);
  eng.now = Date.now();
  const p = Persistence.open(eng, { dir, mode });
  const out = new Capture();
  const c = new Client(eng, transport, out, '127.0.0.1:1', '127.0.0.1:2');
  const run = (...args: Array<string | Buffer>): string => {
    out.text = '';
    execute(c, Argv.of(args), out);
    return out.text;
  };
  return { eng, p, run };
}

async function restart(n: Node, dir: string, mode: Mode): Promise<Node> {
  await n.p.close();
  return open(dir, mode);
}

/** Let batches and background deletion finish. */
async function settle(n: Node): Promise<void> {
  for (let i = 0; i < 400; i++) {
    await n.p.idle();
    await sleep(5);
    if (n.p.info().includes('lmdb_gc_pending:0')) {
      await n.p.idle();
      return;
    }
  }
  throw new Error('background deletion did not finish');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function items(n: Node): number {
  return n.p.store.items.getKeysCount({});
}

/** Run a command with many arguments after a fixed prefix, in chunks. */
function bulk(n: Node, prefix: string[], args: string[], per = 1000): void {
  for (let i = 0; i < args.length; i += per) {
    const r = n.run(...prefix, ...args.slice(i, i + per));
    assert.ok(!r.startsWith('-'), r);
  }
}

function hashArgs(count: number, prefix = 'f'): string[] {
  const a: string[] = [];
  for (let i = 0; i < count; i++) a.push(prefix + i, 'v' + i);
  return a;
}

function members(count: number, prefix = 'm'): string[] {
  const a: string[] = [];
  for (let i = 0; i < count; i++) a.push(prefix + i);
  return a;
}

function zsetArgs(count: number, prefix = 'm'): string[] {
  const a: string[] = [];
  for (let i = 0; i < count; i++) a.push(String(i % 97), prefix + i);
  return a;
}

/** Sorted lines of an array reply (order-insensitive comparison of big hashtables). */
function sortedReply(r: string): string {
  return r.split('\r\n').slice(1).sort().join('\n');
}

/** An array reply of bulk strings as (field, value) pairs (values may hold CR LF). */
function pairs(r: string): [string, string][] {
  const items: string[] = [];
  let p = r.indexOf('\r\n') + 2;
  while (p < r.length) {
    const nl = r.indexOf('\r\n', p);
    const len = Number(r.slice(p + 1, nl));
    items.push(r.slice(nl + 2, nl + 2 + len));
    p = nl + 2 + len + 2;
  }
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < items.length; i += 2) out.push([items[i], items[i + 1]]);
  return out;
}

/** Every command here, in the state before the restart and after it, must reply the same. */
function snapshot(n: Node, cmds: string[][]): string[] {
  return cmds.map((c) => n.run(...c));
}

let tmp: string;
let seq = 0;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-types-'));
});
after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});
function freshDir(): string {
  const d = path.join(tmp, `d${seq++}`);
  fs.mkdirSync(d);
  return d;
}

// ---------------------------------------------------------------- tests

for (const mode of ['always', 'everysec'] as const) {
  describe(`appendfsync ${mode}`, () => {
    it('hashes: small ones whole (order, encoding, field TTLs), big ones as records, a field expiring while down', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      const bin = Buffer.from([0, 0xff, 13, 10, 0x80]);
      n.run('HSET', 'lp', 'z', '1', 'a', '2', Buffer.from('f\x00\xff', 'latin1'), bin, 'm', '');
      n.run('HSET', 'lpex', 'x', '1', 'y', '2', 'z', '3');
      assert.equal(n.run('HPEXPIRE', 'lpex', '100000', 'FIELDS', '1', 'z'), '*1\r\n:1\r\n');
      n.run('HSET', 'ht', 'f', 'x'.repeat(100), 'g', 'short');
      bulk(n, ['HSET', 'big'], hashArgs(2000));
      n.run('HSET', 'big', Buffer.from('bin\x00', 'latin1'), bin);
      n.run('HSET', 'big', 'L'.repeat(3000), 'long field', 'L'.repeat(2999) + 'x', 'other long field');
      assert.equal(n.run('HPEXPIRE', 'big', '100000', 'FIELDS', '2', 'f1', 'f2'), '*2\r\n:1\r\n:1\r\n');
      await n.p.idle();
      assert.equal(items(n), 2003, 'the big hash is stored as records, the small ones whole');
      const cmds = [
        ['HGETALL', 'lp'], ['OBJECT', 'ENCODING', 'lp'],
        ['OBJECT', 'ENCODING', 'lpex'], ['HPEXPIRETIME', 'lpex', 'FIELDS', '2', 'y', 'z'],
        ['HGETALL', 'ht'], ['OBJECT', 'ENCODING', 'ht'],
        ['OBJECT', 'ENCODING', 'big'], ['HGET', 'big', 'bin\x00'], ['HGET', 'big', 'f1999'],
        ['HPEXPIRETIME', 'big', 'FIELDS', '3', 'f1', 'f2', 'f4'],
        ['HGET', 'big', 'L'.repeat(3000)], ['HGET', 'big', 'L'.repeat(2999) + 'x'],
      ];
      const before = snapshot(n, cmds);
      const bigAll = pairs(n.run('HGETALL', 'big'));
      assert.equal(bigAll.length, 2003);
      // The short TTLs are set last, so that a slow machine cannot expire them before the
      // snapshot; x and f3 expire "while down" (or just before the restart: same end state).
      assert.equal(n.run('HPEXPIRE', 'lpex', '150', 'FIELDS', '1', 'x'), '*1\r\n:1\r\n');
      assert.equal(n.run('HPEXPIRE', 'big', '150', 'FIELDS', '1', 'f3'), '*1\r\n:1\r\n');
      await sleep(200);
      n = await restart(n, dir, mode);
      assert.deepEqual(snapshot(n, cmds), before);
      assert.equal(n.run('HGET', 'lpex', 'x'), '$-1\r\n');
      assert.equal(n.run('HGETALL', 'lpex').startsWith('*4\r\n'), true, 'y and z remain');
      assert.equal(n.run('HGET', 'big', 'f3'), '$-1\r\n');
      assert.equal(n.run('HLEN', 'big'), ':2002\r\n');
      const expected = new Map(bigAll);
      expected.delete('f3');
      assert.deepEqual(new Map(pairs(n.run('HGETALL', 'big'))), expected);
      // The expired field record is deleted on disk (lazily above, or by the sweep).
      await sleep(150);
      await settle(n);
      assert.equal(items(n), 2002);
      n = await restart(n, dir, mode);
      assert.equal(n.run('HLEN', 'big'), ':2002\r\n');
      assert.equal(n.run('HEXISTS', 'big', 'f3'), ':0\r\n');
      await n.p.close();
    });

    it('hashes: an untouched hash whose fields all expired while down is removed by the sweep', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      bulk(n, ['HSET', 'big'], hashArgs(600));
      n.run('HSET', 'small', 'a', '1');
      n.run('HPEXPIRE', 'small', '100', 'FIELDS', '1', 'a');
      const f = members(600, 'f');
      n.run('HPEXPIRE', 'big', '100', 'FIELDS', '600', ...f);
      await n.p.idle();
      assert.equal(items(n), 600);
      await sleep(150);
      n = await restart(n, dir, mode);
      // Nobody touches them: the active sweep deletes the fields, then the keys.
      for (let i = 0; i < 100 && n.eng.dbs[0].size > 0; i++) await sleep(20);
      assert.equal(n.eng.dbs[0].size, 0);
      await settle(n);
      assert.equal(items(n), 0);
      n = await restart(n, dir, mode);
      assert.equal(n.run('DBSIZE'), ':0\r\n');
      await n.p.close();
    });

    it('sets: intset, listpack, small and big hashtables', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      n.run('SADD', 'ints', '5', '-3', '9223372036854775807', '-9223372036854775808', '0');
      n.run('SADD', 'lp', 'b', 'a', 'c', '1');
      n.run('SADD', 'ht', 'x'.repeat(100), 'y');
      bulk(n, ['SADD', 'big'], members(3000));
      n.run('SADD', 'big', Buffer.from('\x00\xff\r\n', 'latin1'));
      n.run('SADD', 'big2', 'M'.repeat(2000), ...members(500));
      await n.p.idle();
      assert.equal(items(n), 3001 + 501);
      const cmds = [
        ['SMEMBERS', 'ints'], ['OBJECT', 'ENCODING', 'ints'],
        ['SMEMBERS', 'lp'], ['OBJECT', 'ENCODING', 'lp'],
        ['OBJECT', 'ENCODING', 'ht'], ['SCARD', 'ht'], ['SISMEMBER', 'ht', 'x'.repeat(100)],
        ['OBJECT', 'ENCODING', 'big'], ['SCARD', 'big'], ['SISMEMBER', 'big', '\x00\xff\r\n'],
      ];
      const before = snapshot(n, cmds);
      const all = sortedReply(n.run('SMEMBERS', 'big'));
      n = await restart(n, dir, mode);
      assert.deepEqual(snapshot(n, cmds), before);
      assert.equal(sortedReply(n.run('SMEMBERS', 'big')), all);
      // The reloaded set keeps logging its changes.
      n.run('SREM', 'big', 'm7');
      n.run('SADD', 'big', 'new');
      n.run('SPOP', 'big', '3');
      n.run('SMOVE', 'big', 'lp', 'm8');
      await n.p.idle();
      const after1 = sortedReply(n.run('SMEMBERS', 'big'));
      const lp = n.run('SMEMBERS', 'lp');
      n = await restart(n, dir, mode);
      assert.equal(sortedReply(n.run('SMEMBERS', 'big')), after1);
      assert.equal(n.run('SMEMBERS', 'lp'), lp);
      assert.equal(n.run('SCARD', 'big'), ':2997\r\n');
      assert.equal(n.run('SISMEMBER', 'big2', 'M'.repeat(2000)), ':1\r\n');
      assert.equal(items(n), 2997 + 501);
      // SPOP leaving a few members rebuilds a small set: stored whole, its records dropped.
      n.run('SPOP', 'big2', '495');
      const rest = sortedReply(n.run('SMEMBERS', 'big2'));
      await settle(n);
      assert.equal(items(n), 2997);
      n = await restart(n, dir, mode);
      assert.equal(sortedReply(n.run('SMEMBERS', 'big2')), rest);
      await n.p.close();
    });

    it('sorted sets: scores with inf, -inf, -0, equal scores in member order, lex ranges', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      n.run('ZADD', 'small', 'inf', 'top', '-inf', 'bottom', '1.5', 'b', '1.5', 'a', '1.5', 'c', '0', 'zero', '-2e-300', 'tiny');
      n.run('ZADD', 'lex', '0', 'b', '0', 'a', '0', 'ab', '0', Buffer.from('\xff', 'latin1'), '0', Buffer.from('\x00', 'latin1'));
      bulk(n, ['ZADD', 'big'], zsetArgs(3000));
      n.run('ZADD', 'big', 'inf', 'top', '-inf', 'bottom', '-0', 'negzero', '3.141592653589793', 'pi', '1e308', 'huge', '-1e-308', 'neg-tiny');
      n.run('ZADD', 'biglex', ...zsetArgs(300).map((x, i) => (i % 2 === 0 ? '0' : x)));
      // Long members are keyed by a prefix and a hash on disk: they come back out of order.
      const P = 'P'.repeat(1500);
      n.run('ZADD', 'biglex', '0', P + 'b', '0', P + 'a', '0', P + 'c', '0', P, '-1', P + 'z');
      // All scores equal: the records come back in zset order (no sort at load).
      n.run('ZADD', 'lexonly', ...members(200).flatMap((m) => ['0', m]));
      await n.p.idle();
      assert.equal(items(n), 3006 + 305 + 200);
      const cmds = [
        ['ZRANGE', 'small', '0', '-1', 'WITHSCORES'], ['OBJECT', 'ENCODING', 'small'],
        ['ZRANGEBYLEX', 'lex', '-', '+'], ['ZRANGEBYLEX', 'lex', '[a', '(b'],
        ['ZRANGE', 'big', '0', '-1', 'WITHSCORES'], ['OBJECT', 'ENCODING', 'big'],
        ['ZSCORE', 'big', 'negzero'], ['ZRANK', 'big', 'pi'], ['ZREVRANK', 'big', 'm1500'],
        ['ZRANGEBYSCORE', 'big', '(3', '4', 'WITHSCORES', 'LIMIT', '5', '10'],
        ['ZRANGEBYLEX', 'biglex', '[m10', '(m2'], ['ZCARD', 'biglex'], ['ZRANGE', 'biglex', '0', '-1'],
        ['ZRANGE', 'lexonly', '0', '-1', 'WITHSCORES'], ['ZRANGEBYLEX', 'lexonly', '(m150', '+'],
      ];
      const before = snapshot(n, cmds);
      assert.equal(before[6], '$2\r\n-0\r\n', 'a skiplist keeps -0');
      n = await restart(n, dir, mode);
      assert.deepEqual(snapshot(n, cmds), before);
      // Updates after the restart: new scores, removals, a score moving to -0 and back.
      n.run('ZADD', 'big', '-inf', 'm5', '42', 'm6', '0', 'negzero');
      n.run('ZINCRBY', 'big', '1', 'm7');
      n.run('ZINCRBY', 'big', '1', 'm7');
      n.run('ZREM', 'big', 'm8', 'top');
      n.run('ZPOPMIN', 'big', '2');
      n.run('ZADD', 'big', '-0', 'zero2');
      await n.p.idle();
      const changed = snapshot(n, cmds);
      n = await restart(n, dir, mode);
      assert.deepEqual(snapshot(n, cmds), changed);
      assert.equal(n.run('ZSCORE', 'big', 'zero2'), '$2\r\n-0\r\n');
      assert.equal(items(n), Number(n.run('ZCARD', 'big').slice(1)) + 305 + 200);
      await n.p.close();
    });

    it('switches between whole and records across restarts, in both directions', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      n.run('HSET', 'h', 'a', '1');
      n.run('SADD', 's', 'a');
      n.run('ZADD', 'z', '1', 'a');
      await n.p.idle();
      assert.equal(items(n), 0);
      n = await restart(n, dir, mode);
      bulk(n, ['HSET', 'h'], hashArgs(600));
      bulk(n, ['SADD', 's'], members(600));
      bulk(n, ['ZADD', 'z'], zsetArgs(600));
      await n.p.idle();
      assert.equal(items(n), 1803, 'grown: records');
      n = await restart(n, dir, mode);
      assert.equal(n.run('HLEN', 'h'), ':601\r\n');
      assert.equal(n.run('SCARD', 's'), ':601\r\n');
      assert.equal(n.run('ZCARD', 'z'), ':601\r\n');
      // Shrink below the limits: stored whole again, the records deleted in the background.
      for (let i = 0; i < 560; i++) {
        n.run('HDEL', 'h', 'f' + i);
        n.run('SREM', 's', 'm' + i);
        n.run('ZREM', 'z', 'm' + i);
      }
      await settle(n);
      assert.equal(items(n), 0);
      const cmds = [['HGETALL', 'h'], ['SMEMBERS', 's'], ['ZRANGE', 'z', '0', '-1', 'WITHSCORES'], ['OBJECT', 'ENCODING', 'h'], ['OBJECT', 'ENCODING', 's'], ['OBJECT', 'ENCODING', 'z']];
      const before = snapshot(n, cmds);
      assert.deepEqual(before.slice(3), ['$9\r\nhashtable\r\n', '$9\r\nhashtable\r\n', '$8\r\nskiplist\r\n']);
      n = await restart(n, dir, mode);
      assert.deepEqual(snapshot(n, cmds), before);
      // ...and grown again.
      bulk(n, ['HSET', 'h'], hashArgs(100, 'g'));
      await n.p.idle();
      n = await restart(n, dir, mode);
      assert.equal(n.run('HLEN', 'h'), ':141\r\n');
      assert.equal(items(n), 141);
      await n.p.close();
    });

    it('DEL, overwrite, RENAME, MOVE, SWAPDB, FLUSHDB and COPY of big collections survive a restart', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      for (const k of ['del', 'over', 'ren', 'mv', 'swap', 'flush', 'copy']) bulk(n, ['HSET', k], hashArgs(1000, k));
      bulk(n, ['SADD', 'sset'], members(1000));
      bulk(n, ['ZADD', 'zset'], zsetArgs(1000));
      await n.p.idle();
      assert.equal(items(n), 9000);
      const w0 = n.p.store.stats.puts + n.p.store.stats.dels;
      n.run('DEL', 'del');
      n.run('SET', 'over', 'a string now');
      n.run('RENAME', 'ren', 'renamed');
      n.run('MOVE', 'mv', '3');
      n.run('SELECT', '5');
      n.run('SET', 'in5', 'x');
      n.run('SELECT', '0');
      n.run('SWAPDB', '0', '5');
      n.run('SELECT', '5');
      n.run('MOVE', 'flush', '6');
      n.run('SELECT', '6');
      n.run('FLUSHDB');
      n.run('SELECT', '5');
      assert.equal(n.run('COPY', 'copy', 'copied', 'DB', '7'), ':1\r\n');
      assert.equal(n.run('COPY', 'sset', 'sset2'), ':1\r\n');
      assert.equal(n.run('COPY', 'zset', 'zset2'), ':1\r\n');
      await n.p.idle();
      // O(1) in the foreground: metadata records, the copies' records, and GC steps.
      const w1 = n.p.store.stats.puts + n.p.store.stats.dels - w0;
      assert.ok(w1 < 3000 + 3 * 100 + 50, `foreground writes ${w1}`);
      // The copies are independent objects.
      n.run('HSET', 'copy', 'only-in-source', '1');
      n.run('SADD', 'sset2', 'only-in-copy');
      n.run('ZADD', 'zset', '5', 'only-in-source');
      await settle(n);
      assert.equal(items(n), 1000 * 5 + 1001 + 1001 + 1000 + 1001 + 1000 - 1000, 'dead records collected');
      n = await restart(n, dir, mode);
      const run = n.run;
      run('SELECT', '5');
      assert.equal(run('EXISTS', 'del', 'ren', 'mv', 'flush'), ':0\r\n');
      assert.equal(run('GET', 'over'), '$12\r\na string now\r\n');
      assert.equal(run('HLEN', 'renamed'), ':1000\r\n');
      assert.equal(run('HGET', 'renamed', 'ren999'), '$4\r\nv999\r\n');
      assert.equal(run('HLEN', 'swap'), ':1000\r\n');
      assert.equal(run('HLEN', 'copy'), ':1001\r\n');
      assert.equal(run('SCARD', 'sset'), ':1000\r\n');
      assert.equal(run('SCARD', 'sset2'), ':1001\r\n');
      assert.equal(run('ZCARD', 'zset'), ':1001\r\n');
      assert.equal(run('ZCARD', 'zset2'), ':1000\r\n');
      run('SELECT', '0');
      assert.equal(run('DBSIZE'), ':1\r\n');
      assert.equal(run('GET', 'in5'), '$1\r\nx\r\n');
      run('SELECT', '3');
      assert.equal(run('HLEN', 'mv'), ':1000\r\n');
      run('SELECT', '6');
      assert.equal(run('DBSIZE'), ':0\r\n');
      run('SELECT', '7');
      assert.equal(run('HLEN', 'copied'), ':1000\r\n');
      assert.equal(run('HEXISTS', 'copied', 'only-in-source'), ':0\r\n');
      await n.p.close();
    });

    it('a big collection that expired while the server was down is gone, with its records', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      bulk(n, ['HSET', 'h'], hashArgs(1000));
      bulk(n, ['SADD', 's'], members(1000));
      bulk(n, ['ZADD', 'z'], zsetArgs(1000));
      bulk(n, ['ZADD', 'keep'], zsetArgs(500));
      for (const k of ['h', 's', 'z']) n.run('PEXPIRE', k, '100');
      n.run('PEXPIRE', 'keep', '100000');
      await n.p.idle();
      await sleep(200);
      n = await restart(n, dir, mode);
      assert.equal(n.run('DBSIZE'), ':1\r\n');
      assert.ok(Number(n.run('PTTL', 'keep').slice(1)) > 90_000);
      await settle(n);
      assert.equal(items(n), 500);
      n = await restart(n, dir, mode);
      assert.equal(n.run('ZCARD', 'keep'), ':500\r\n');
      await n.p.close();
    });

    it('a write into a value of 100,000 elements costs the same as into a small one', async () => {
      const dir = freshDir();
      const n = open(dir, mode);
      const N = 100_000;
      bulk(n, ['HSET', 'bigh'], hashArgs(N));
      bulk(n, ['SADD', 'bigs'], members(N));
      bulk(n, ['ZADD', 'bigz'], zsetArgs(N));
      bulk(n, ['HSET', 'smallh'], hashArgs(1000));
      bulk(n, ['SADD', 'smalls'], members(1000));
      bulk(n, ['ZADD', 'smallz'], zsetArgs(1000));
      await n.p.idle();
      const st = n.p.store.stats;
      const cost = async (...cmd: string[]): Promise<[number, number]> => {
        const r0 = st.puts + st.dels;
        const b0 = st.bytes;
        const reply = n.run(...cmd);
        assert.ok(!reply.startsWith('-'), reply);
        await n.p.idle();
        return [st.puts + st.dels - r0, st.bytes - b0];
      };
      const cases: [string, string[], (k: string) => string[]][] = [
        ['HSET new field', ['bigh', 'smallh'], (k) => ['HSET', k, 'newfield', 'value']],
        ['HSET existing field', ['bigh', 'smallh'], (k) => ['HSET', k, 'f10', 'changed']],
        ['HDEL', ['bigh', 'smallh'], (k) => ['HDEL', k, 'f11']],
        ['HPEXPIRE', ['bigh', 'smallh'], (k) => ['HPEXPIRE', k, '100000', 'FIELDS', '1', 'f12']],
        ['SADD', ['bigs', 'smalls'], (k) => ['SADD', k, 'newmember']],
        ['SREM', ['bigs', 'smalls'], (k) => ['SREM', k, 'm10']],
        ['ZADD new member', ['bigz', 'smallz'], (k) => ['ZADD', k, '1.5', 'newmember']],
        ['ZADD new score', ['bigz', 'smallz'], (k) => ['ZADD', k, '-7', 'm10']],
        ['ZINCRBY', ['bigz', 'smallz'], (k) => ['ZINCRBY', k, '2', 'm11']],
        ['ZREM', ['bigz', 'smallz'], (k) => ['ZREM', k, 'm12']],
      ];
      for (const [what, [big, small], cmd] of cases) {
        const [rb, bb] = await cost(...cmd(big));
        const [rs, bs] = await cost(...cmd(small));
        assert.ok(rb <= 2, `${what}: ${rb} records on ${big} (one item, the metadata)`);
        assert.equal(rb, rs, `${what}: records, big vs small`);
        assert.ok(bb < 120 && Math.abs(bb - bs) <= 8, `${what}: ${bb} bytes on ${big}, ${bs} on ${small}`);
      }
      // INFO reports the counters.
      const info = n.p.info().join('\n');
      assert.match(info, /lmdb_records_written:\d+/);
      assert.match(info, /lmdb_bytes_written:\d+/);
      await n.p.close();
    });
  });
}

// ---------------------------------------------------------------- a failed commit

describe('a failed commit (disk refusing writes)', () => {
  const hasPrlimit = (() => {
    try {
      execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  /** Limit the size of files this process may write (EFBIG beyond it), or lift the limit. */
  function fsizeLimit(bytes: number | null): void {
    execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${bytes === null ? 'unlimited' : bytes}:unlimited`]);
  }

  it('rewrites the hashes, sets and sorted sets whose change logs it drained, in full', { skip: !hasPrlimit && 'prlimit not installed' }, async () => {
    const dir = freshDir();
    let n = open(dir, 'everysec');
    bulk(n, ['HSET', 'h'], hashArgs(2000));
    bulk(n, ['SADD', 's'], members(2000));
    bulk(n, ['ZADD', 'z'], zsetArgs(2000));
    await n.p.idle();
    const size = fs.statSync(path.join(dir, 'lmdb', 'data.mdb')).size;
    fsizeLimit(size);
    try {
      // Big changes, so that the commit needs more room than the file has.
      bulk(n, ['HSET', 'h'], hashArgs(20_000, 'g'));
      bulk(n, ['SADD', 's'], members(20_000, 'n'));
      bulk(n, ['ZADD', 'z'], zsetArgs(20_000, 'n'));
      n.run('HDEL', 'h', 'f1');
      n.run('SREM', 's', 'm1');
      n.run('ZADD', 'z', '-5', 'm2');
      await n.p.idle();
      assert.match(n.eng.writeDenied ?? '', /^MISCONF /);
      // Changes made while the disk refuses writes.
      n.run('HSET', 'h', 'during', 'x');
      n.run('ZREM', 'z', 'm3');
    } finally {
      fsizeLimit(null);
    }
    for (let i = 0; i < 40 && n.eng.writeDenied !== null; i++) await sleep(100);
    assert.equal(n.eng.writeDenied, null);
    const cmds = [['HLEN', 'h'], ['HGET', 'h', 'during'], ['HEXISTS', 'h', 'f1'], ['SCARD', 's'], ['SISMEMBER', 's', 'm1'], ['ZCARD', 'z'], ['ZSCORE', 'z', 'm2'], ['ZSCORE', 'z', 'm3'], ['ZRANGE', 'z', '0', '9', 'WITHSCORES']];
    const before = snapshot(n, cmds);
    await settle(n);
    assert.equal(items(n), 22_000 + 21_999 + 21_999, 'the old records collected, the new ones complete');
    n = await restart(n, dir, 'everysec');
    assert.deepEqual(snapshot(n, cmds), before);
    await n.p.close();
  });
});

// ---------------------------------------------------------------- real server processes

describe('a real server killed with SIGKILL keeps its hashes, sets and sorted sets', () => {
  for (const mode of ['always', 'everysec'] as const) {
    it(`appendfsync ${mode}`, async () => {
      const dir = freshDir();
      let proc = await startOurs(['--appendfsync', mode], {}, { dir });
      let c = await RawClient.connect(proc.port);
      const call = async (...args: string[]) => (await c.call(...args)).toString('latin1');
      for (let i = 0; i < 5; i++) {
        assert.match(await call('HSET', 'h', ...hashArgs(1000, `f${i}-`)), /^:1000\r\n$/);
        assert.match(await call('SADD', 's', ...members(1000, `m${i}-`)), /^:1000\r\n$/);
        assert.match(await call('ZADD', 'z', ...zsetArgs(1000, `m${i}-`)), /^:1000\r\n$/);
      }
      await call('HSET', 'hs', 'a', '1', 'b', '2');
      await call('HPEXPIRE', 'hs', '150', 'FIELDS', '1', 'a');
      await call('HPEXPIRE', 'h', '100000', 'FIELDS', '1', 'f0-1');
      await call('HPEXPIRE', 'h', '150', 'FIELDS', '1', 'f0-2');
      for (const cmd of [['HSET', 'h', 'new', 'v'], ['SADD', 's', 'new'], ['ZADD', 'z', '7', 'new']]) {
        assert.equal(await call(...cmd), ':1\r\n');
      }
      assert.equal(await call('ZREM', 'z', 'm0-0'), ':1\r\n');
      // always: acknowledged = on disk. everysec: on disk within about a second.
      await sleep(mode === 'everysec' ? 1200 : 200);
      c.close();
      await proc.stop('SIGKILL');
      proc = await startOurs(['--appendfsync', mode], {}, { dir });
      c = await RawClient.connect(proc.port);
      assert.equal(await call('HLEN', 'h'), ':5000\r\n');
      assert.equal(await call('SCARD', 's'), ':5001\r\n');
      assert.equal(await call('ZCARD', 'z'), ':5000\r\n');
      assert.equal(await call('ZSCORE', 'z', 'm0-0'), '$-1\r\n');
      assert.equal(await call('HGET', 'h', 'new'), '$1\r\nv\r\n');
      assert.equal(await call('HGET', 'h', 'f0-2'), '$-1\r\n');
      assert.equal(await call('HTTL', 'h', 'FIELDS', '1', 'f0-1').then((r) => /^\*1\r\n:(9\d|100)\r\n$/.test(r)), true);
      assert.equal(await call('HGETALL', 'hs'), '*2\r\n$1\r\nb\r\n$1\r\n2\r\n');
      assert.equal(await call('ZSCORE', 'z', 'new'), '$1\r\n7\r\n');
      assert.equal(await call('SISMEMBER', 's', 'm4-999'), ':1\r\n');
      c.close();
      await proc.stop('SIGTERM');
    });
  }
});
