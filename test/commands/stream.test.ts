/**
 * Stream commands with several connections (ioredis): blocking XREAD/XREADGROUP woken by
 * XADD from other clients, `$` and `>` semantics, several readers on one key, COUNT of woken
 * readers, and what a blocked reader sees when its group is destroyed, its key deleted or
 * replaced, or the group's last id moved. Each scenario runs against our server and a real
 * redis-server 7.0 and the two transcripts must be equal.
 *
 * Then, on our server only: BLOCK refused over REST (an engine client with an HTTP
 * transport), and Redis 8.2's XDELEX / XACKDEL (which redis-server 7.0 does not have),
 * checked against redis.io's description of their replies.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { Engine } from '../../dist/engine/engine.js';
import { Client, type Transport } from '../../dist/engine/client.js';
import { execute } from '../../dist/engine/dispatch.js';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { loadConfig } from '../../dist/config.js';
import { Argv } from '../../dist/resp/argv.js';
import { Resp2Shapes } from '../../dist/resp/reply-sink.js';

let ours: Proc;
let redis: Proc;
const open: Redis[] = [];

function connect(port: number): Redis {
  const r = new Redis({ port, host: '127.0.0.1', protocol: 2, enableReadyCheck: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
  open.push(r);
  return r;
}

async function closeAll(): Promise<void> {
  for (const r of open.splice(0)) r.disconnect();
}

/** A reply or the error text, as a comparable value. */
async function reply(p: Promise<unknown>): Promise<unknown> {
  try {
    return await p;
  } catch (e) {
    return `ERR: ${(e as Error).message}`;
  }
}

async function waitFor(what: string, cond: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Wait until `n` connections sit in a command whose name starts with `prefix` (cmd=xread...). */
async function blocked(admin: Redis, n: number, prefix = 'xread'): Promise<void> {
  await waitFor(`${n} blocked clients`, async () => {
    const list = String(await admin.call('CLIENT', 'LIST'));
    return list.split('\n').filter((l) => new RegExp(`cmd=${prefix}`).test(l)).length >= n;
  });
  await new Promise((r) => setTimeout(r, 30));
}

/** True when the promise has not settled yet. */
async function pending(p: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  const r = await Promise.race([p.then(() => 'done', () => 'done'), new Promise((res) => setTimeout(() => res(marker), 80))]);
  return r === marker;
}

type Scenario = (port: number) => Promise<unknown[]>;

const scenarios: Record<string, Scenario> = {
  async 'several XREAD readers on $ all get the next XADD'(port) {
    const w = connect(port);
    await w.call('XADD', 's', '1-1', 'a', '1');
    const readers = [connect(port), connect(port), connect(port)];
    const ps = readers.map((r) => reply(r.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$')));
    await blocked(w, 3);
    await w.call('XADD', 's', '2-1', 'b', '2');
    return Promise.all(ps);
  },

  async 'XREAD on several keys answers with the key that got data'(port) {
    const w = connect(port);
    const r = connect(port);
    const p = reply(r.call('XREAD', 'BLOCK', '0', 'STREAMS', 'a', 'b', 'c', '$', '$', '0'));
    await blocked(w, 1);
    await w.call('SET', 'unrelated', 'x');
    const stillWaiting = await pending(p);
    await w.call('XADD', 'b', '5-0', 'x', 'y');
    return [stillWaiting, await p, await reply(w.call('XLEN', 'b'))];
  },

  async 'XREAD BLOCK times out with a null reply; an old id is served at once'(port) {
    const w = connect(port);
    const r = connect(port);
    const t0 = Date.now();
    const timedOut = await reply(r.call('XREAD', 'BLOCK', '60', 'STREAMS', 'nokey', '0'));
    const waited = Date.now() - t0 >= 50;
    await w.call('XADD', 's', '3-0', 'a', '1');
    const atOnce = await reply(r.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '2-0'));
    return [timedOut, waited, atOnce];
  },

  async 'a missing key created by XADD wakes an XREAD on $'(port) {
    const w = connect(port);
    const r = connect(port);
    const p = reply(r.call('XREAD', 'BLOCK', '0', 'STREAMS', 'fresh', '$'));
    await blocked(w, 1);
    await w.call('XADD', 'fresh', '7-7', 'k', 'v');
    return [await p];
  },

  async 'COUNT limits what a woken reader gets; MULTI wakes once'(port) {
    const w = connect(port);
    await w.call('XADD', 's', '1-0', 'a', '1');
    const r1 = connect(port);
    const r2 = connect(port);
    const p1 = reply(r1.call('XREAD', 'COUNT', '2', 'BLOCK', '0', 'STREAMS', 's', '$'));
    const p2 = reply(r2.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$'));
    await blocked(w, 2);
    const tx = w.multi();
    for (let i = 2; i <= 6; i++) tx.call('XADD', 's', `${i}-0`, 'f', String(i));
    await tx.exec();
    return [await p1, await p2];
  },

  async 'a reader woken without COUNT gets 1000 entries at most'(port) {
    const w = connect(port);
    const r = connect(port);
    const p = reply(r.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$'));
    await blocked(w, 1);
    const tx = w.multi();
    for (let i = 1; i <= 1005; i++) tx.call('XADD', 's', `${i}-0`, 'f', String(i));
    await tx.exec();
    const got = (await p) as [string, [string, string[]][]][];
    return [got[0][1].length, got[0][1][0][0], got[0][1][999][0]];
  },

  async 'XADD then XDEL in one transaction still wakes XREAD with no entries'(port) {
    const w = connect(port);
    await w.call('XADD', 's', '1-0', 'a', '1');
    const r = connect(port);
    const p = reply(r.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$'));
    await blocked(w, 1);
    const tx = w.multi();
    tx.call('XADD', 's', '2-0', 'b', '2');
    tx.call('XDEL', 's', '2-0');
    await tx.exec();
    return [await p];
  },

  async 'consumers blocked on one group are served in blocking order, one entry each'(port) {
    const w = connect(port);
    await w.call('XGROUP', 'CREATE', 's', 'g', '$', 'MKSTREAM');
    const alice = connect(port);
    const bob = connect(port);
    const pa = reply(alice.call('XREADGROUP', 'GROUP', 'g', 'alice', 'BLOCK', '0', 'STREAMS', 's', '>'));
    await blocked(w, 1);
    const pb = reply(bob.call('XREADGROUP', 'GROUP', 'g', 'bob', 'BLOCK', '0', 'STREAMS', 's', '>'));
    await blocked(w, 2);
    await w.call('XADD', 's', '1-0', 'a', '1');
    const first = await pa;
    const bobWaiting = await pending(pb);
    await w.call('XADD', 's', '2-0', 'b', '2');
    return [first, bobWaiting, await pb, await reply(w.call('XPENDING', 's', 'g')), await reply(w.call('XINFO', 'GROUPS', 's'))];
  },

  async 'NOACK blocked read leaves nothing pending; COUNT applies to groups'(port) {
    const w = connect(port);
    await w.call('XGROUP', 'CREATE', 's', 'g', '$', 'MKSTREAM');
    const r = connect(port);
    const p = reply(r.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', '1', 'BLOCK', '0', 'NOACK', 'STREAMS', 's', '>'));
    await blocked(w, 1);
    const tx = w.multi();
    tx.call('XADD', 's', '1-0', 'a', '1');
    tx.call('XADD', 's', '2-0', 'b', '2');
    await tx.exec();
    return [await p, await reply(w.call('XPENDING', 's', 'g')), await reply(w.call('XINFO', 'GROUPS', 's'))];
  },

  async 'XGROUP DESTROY unblocks the group readers with NOGROUP'(port) {
    const w = connect(port);
    await w.call('XGROUP', 'CREATE', 's', 'g', '$', 'MKSTREAM');
    await w.call('XGROUP', 'CREATE', 's', 'h', '$');
    const r1 = connect(port);
    const r2 = connect(port);
    const p1 = reply(r1.call('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', 's', '>'));
    const p2 = reply(r2.call('XREADGROUP', 'GROUP', 'h', 'c', 'BLOCK', '0', 'STREAMS', 's', '>'));
    await blocked(w, 2);
    await w.call('XGROUP', 'DESTROY', 's', 'g');
    const r1Done = await p1;
    const r2Waiting = await pending(p2);
    await w.call('XADD', 's', '1-0', 'a', '1');
    return [r1Done, r2Waiting, await p2];
  },

  async 'DEL unblocks XREADGROUP with an error; XREAD keeps waiting'(port) {
    const w = connect(port);
    await w.call('XADD', 's', '1-1', 'a', '1');
    await w.call('XGROUP', 'CREATE', 's', 'g', '$');
    const rg = connect(port);
    const rx = connect(port);
    const pg = reply(rg.call('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', 's', '>'));
    const px = reply(rx.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$'));
    await blocked(w, 2);
    await w.call('DEL', 's');
    const groupReader = await pg;
    const xreadWaiting = await pending(px);
    await w.call('XADD', 's', '9-9', 'n', 'v');
    return [groupReader, xreadWaiting, await px];
  },

  async 'FLUSHALL unblocks XREADGROUP with an error; XREAD keeps waiting'(port) {
    const w = connect(port);
    await w.call('XGROUP', 'CREATE', 's', 'g', '$', 'MKSTREAM');
    const rg = connect(port);
    const rx = connect(port);
    const pg = reply(rg.call('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', 's', '>'));
    const px = reply(rx.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$'));
    await blocked(w, 2);
    await w.call('FLUSHALL');
    const groupReader = await pg;
    const xreadWaiting = await pending(px);
    await w.call('XADD', 's', '2-2', 'n', 'v');
    return [groupReader, xreadWaiting, await px];
  },

  async 'a large pending entries list: XACK, XPENDING, XAUTOCLAIM, XCLAIM'(port) {
    const w = connect(port);
    await w.call('XGROUP', 'CREATE', 's', 'g', '$', 'MKSTREAM');
    const p = w.pipeline();
    for (let i = 1; i <= 3000; i++) p.call('XADD', 's', `${i}-0`, 'f', String(i));
    await p.exec();
    const r = connect(port);
    const got = (await r.call('XREADGROUP', 'GROUP', 'g', 'alice', 'STREAMS', 's', '>')) as [string, unknown[]][];
    // Acknowledge every third entry, out of order.
    const acks = [];
    for (let i = 2999; i >= 1; i -= 3) acks.push(`${i}-0`);
    const acked = await reply(w.call('XACK', 's', 'g', ...acks));
    const out: unknown[] = [got[0][1].length, acked, await reply(w.call('XPENDING', 's', 'g'))];
    let cursor = '0';
    for (let round = 0; round < 4; round++) {
      const res = (await w.call('XAUTOCLAIM', 's', 'g', 'bob', '0', cursor, 'COUNT', '300', 'JUSTID')) as [string, string[], string[]];
      out.push(res[0], res[1].length, res[1][0], res[1][res[1].length - 1]);
      cursor = res[0];
    }
    await w.call('XDEL', 's', ...Array.from({ length: 100 }, (_, i) => `${1500 + i}-0`));
    out.push(await reply(w.call('XCLAIM', 's', 'g', 'carol', '0', '1501-0', '1600-0', '1700-0', 'JUSTID')));
    out.push(await reply(w.call('XPENDING', 's', 'g')), await reply(w.call('XINFO', 'GROUPS', 's')));
    out.push(await reply(w.call('XREADGROUP', 'GROUP', 'g', 'bob', 'COUNT', '5', 'STREAMS', 's', '1490')));
    return out;
  },

  async 'a string written over the stream unblocks XREADGROUP; XREAD waits on'(port) {
    const w = connect(port);
    await w.call('XGROUP', 'CREATE', 's', 'g', '$', 'MKSTREAM');
    const rg = connect(port);
    const rx = connect(port);
    const pg = reply(rg.call('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', 's', '>'));
    const px = reply(rx.call('XREAD', 'BLOCK', '200', 'STREAMS', 's', '0'));
    await blocked(w, 2);
    await w.call('SET', 's', 'not a stream');
    return [await pg, await px];
  },

  async 'XGROUP SETID and XDEL do not wake; the next XADD serves from the new last id'(port) {
    const w = connect(port);
    await w.call('XADD', 's', '1-0', 'a', '1');
    await w.call('XADD', 's', '2-0', 'b', '2');
    await w.call('XGROUP', 'CREATE', 's', 'g', '$');
    const r = connect(port);
    const p = reply(r.call('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', 's', '>'));
    await blocked(w, 1);
    await w.call('XGROUP', 'SETID', 's', 'g', '0');
    await w.call('XDEL', 's', '2-0');
    const waiting = await pending(p);
    await w.call('XADD', 's', '3-0', 'c', '3');
    return [waiting, await p, await reply(w.call('XPENDING', 's', 'g'))];
  },

  async 'blocked readers on two groups and plain XREAD are all served by one XADD'(port) {
    const w = connect(port);
    await w.call('XGROUP', 'CREATE', 's', 'g1', '$', 'MKSTREAM');
    await w.call('XGROUP', 'CREATE', 's', 'g2', '$');
    const rs = [connect(port), connect(port), connect(port)];
    const ps = [
      reply(rs[0].call('XREADGROUP', 'GROUP', 'g1', 'a', 'BLOCK', '0', 'STREAMS', 's', '>')),
      reply(rs[1].call('XREADGROUP', 'GROUP', 'g2', 'b', 'BLOCK', '0', 'STREAMS', 's', '>')),
      reply(rs[2].call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$')),
    ];
    await blocked(w, 3);
    await w.call('XADD', 's', '4-4', 'x', 'y');
    return [...(await Promise.all(ps)), await reply(w.call('XINFO', 'GROUPS', 's'))];
  },
};

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
});
after(async () => {
  await closeAll();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

describe('blocking XREAD / XREADGROUP with several clients (ours vs redis-server)', () => {
  for (const [name, run] of Object.entries(scenarios)) {
    it(name, async () => {
      const results: unknown[][] = [];
      for (const p of [ours, redis]) {
        const admin = connect(p.port);
        await admin.call('FLUSHALL');
        results.push(await run(p.port));
        await closeAll();
      }
      assert.deepEqual(results[0], results[1]);
    });
  }
});

// ---------------------------------------------------------------- REST refusal (in process)

/** Collects replies as RESP2 text. */
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

describe('BLOCK over REST', () => {
  const http: Transport = { kind: 'http', close() {}, requestFlush() {}, resume() {}, outputBytes: () => 0, inputBytes: () => 0 };
  const eng = new Engine(loadConfig([], {}), FAMILIES);
  const out = new Capture();
  const c = new Client(eng, http, out, '127.0.0.1:1', '127.0.0.1:2');
  const run = (...args: string[]): string => {
    out.text = '';
    execute(c, Argv.of(args), out);
    return out.text;
  };

  it('refuses XREAD and XREADGROUP with BLOCK, data or not; serves them without BLOCK', () => {
    const refused = '-ERR blocking commands are not allowed over REST\r\n';
    assert.equal(run('XADD', 's', '1-1', 'a', 'b'), '$3\r\n1-1\r\n');
    assert.equal(run('XGROUP', 'CREATE', 's', 'g', '0'), '+OK\r\n');
    assert.equal(run('XREAD', 'BLOCK', '100', 'STREAMS', 's', '0'), refused);
    assert.equal(run('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$'), refused);
    assert.equal(run('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', 's', '>'), refused);
    assert.equal(eng.blocking.isBlocked(c), false);
    assert.equal(run('XREAD', 'STREAMS', 's', '0'), '*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n');
    assert.equal(run('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', 's', '>'), '*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n');
    // Syntax errors still come first, as for any other client.
    assert.equal(run('XREAD', 'BLOCK', 'x', 'STREAMS', 's', '0'), '-ERR timeout is not an integer or out of range\r\n');
  });
});

// ---------------------------------------------------------------- XDELEX / XACKDEL (ours only)

describe('XDELEX and XACKDEL (Redis 8.2, per redis.io)', () => {
  let r: Redis;
  before(async () => {
    r = connect(ours.port);
    await r.call('FLUSHALL');
  });

  it('XDELEX on a missing key answers -1 per id; deletes like XDEL by default (KEEPREF)', async () => {
    assert.deepEqual(await r.call('XDELEX', 'nokey', 'IDS', '2', '1-1', '0-0'), [-1, -1]);
    await r.call('XADD', 's', '1-0', 'f', '1');
    await r.call('XADD', 's', '2-0', 'f', '2');
    await r.call('XADD', 's', '3-0', 'f', '3');
    await r.call('XGROUP', 'CREATE', 's', 'g', '0');
    await r.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', '1', 'STREAMS', 's', '>');
    assert.deepEqual(await r.call('XDELEX', 's', 'IDS', '3', '1-0', '9-0', '1-0'), [1, -1, -1]);
    // KEEPREF: the pending entry of the deleted id stays.
    assert.deepEqual(await r.call('XPENDING', 's', 'g'), [1, '1-0', '1-0', [['c', '1']]]);
    assert.deepEqual(await r.call('XDELEX', 's', 'KEEPREF', 'IDS', '1', '2-0'), [1]);
    assert.equal(await r.call('XLEN', 's'), 1);
    const info = (await r.call('XINFO', 'STREAM', 's')) as unknown[];
    assert.equal(info[info.indexOf('max-deleted-entry-id') + 1], '2-0');
    assert.equal(info[info.indexOf('recorded-first-entry-id') + 1], '3-0');
  });

  it('XDELEX DELREF also drops every group\'s pending entries, even for ids already gone', async () => {
    await r.call('FLUSHALL');
    for (let i = 1; i <= 3; i++) await r.call('XADD', 's', `${i}-0`, 'f', String(i));
    await r.call('XGROUP', 'CREATE', 's', 'g1', '0');
    await r.call('XGROUP', 'CREATE', 's', 'g2', '0');
    await r.call('XREADGROUP', 'GROUP', 'g1', 'a', 'STREAMS', 's', '>');
    await r.call('XREADGROUP', 'GROUP', 'g2', 'b', 'STREAMS', 's', '>');
    await r.call('XDEL', 's', '3-0');
    assert.deepEqual(await r.call('XDELEX', 's', 'DELREF', 'IDS', '2', '1-0', '3-0'), [1, -1]);
    assert.deepEqual(await r.call('XPENDING', 's', 'g1'), [1, '2-0', '2-0', [['a', '1']]]);
    assert.deepEqual(await r.call('XPENDING', 's', 'g2'), [1, '2-0', '2-0', [['b', '1']]]);
  });

  it('XDELEX ACKED deletes only entries every group has read and acknowledged', async () => {
    await r.call('FLUSHALL');
    for (let i = 1; i <= 4; i++) await r.call('XADD', 's', `${i}-0`, 'f', String(i));
    // No consumer group at all: nothing counts as acknowledged.
    assert.deepEqual(await r.call('XDELEX', 's', 'ACKED', 'IDS', '1', '1-0'), [2]);
    await r.call('XGROUP', 'CREATE', 's', 'g1', '0');
    await r.call('XGROUP', 'CREATE', 's', 'g2', '0');
    await r.call('XREADGROUP', 'GROUP', 'g1', 'a', 'COUNT', '3', 'STREAMS', 's', '>');
    await r.call('XREADGROUP', 'GROUP', 'g2', 'b', 'COUNT', '2', 'STREAMS', 's', '>');
    await r.call('XACK', 's', 'g1', '1-0', '2-0', '3-0');
    await r.call('XACK', 's', 'g2', '1-0');
    // 1-0: read and acked by both; 2-0: pending in g2; 3-0: not delivered to g2; 9-0: not in
    // the stream, but as no group has read that far it counts as referenced (checked first).
    assert.deepEqual(await r.call('XDELEX', 's', 'ACKED', 'IDS', '4', '1-0', '2-0', '3-0', '9-0'), [1, 2, 2, 2]);
    assert.deepEqual(await r.call('XDELEX', 's', 'ACKED', 'IDS', '1', '0-5'), [-1]);
    assert.equal(await r.call('XLEN', 's'), 3);
  });

  it('XACKDEL acknowledges in its group then deletes under the policy', async () => {
    await r.call('FLUSHALL');
    assert.deepEqual(await r.call('XACKDEL', 'nokey', 'g', 'IDS', '1', '1-0'), [-1]);
    for (let i = 1; i <= 4; i++) await r.call('XADD', 's', `${i}-0`, 'f', String(i));
    await r.call('XGROUP', 'CREATE', 's', 'g1', '0');
    await r.call('XGROUP', 'CREATE', 's', 'g2', '0');
    await r.call('XREADGROUP', 'GROUP', 'g1', 'a', 'STREAMS', 's', '>');
    await r.call('XREADGROUP', 'GROUP', 'g2', 'b', 'COUNT', '1', 'STREAMS', 's', '>');
    // g2 has 1-0 pending and has not read the rest: ACKED keeps 2-0..4-0, deletes nothing it still references.
    assert.deepEqual(await r.call('XACKDEL', 's', 'g1', 'ACKED', 'IDS', '2', '1-0', '2-0'), [2, 2]);
    assert.deepEqual(await r.call('XPENDING', 's', 'g1'), [2, '3-0', '4-0', [['a', '2']]]);
    assert.deepEqual(await r.call('XACKDEL', 's', 'g2', 'ACKED', 'IDS', '1', '1-0'), [1]);
    // KEEPREF (default): acknowledged in g1, deleted, g2's view untouched.
    assert.deepEqual(await r.call('XACKDEL', 's', 'g1', 'IDS', '2', '3-0', '8-0'), [1, -1]);
    assert.deepEqual(await r.call('XPENDING', 's', 'g1'), [1, '4-0', '4-0', [['a', '1']]]);
    // DELREF: also removes other groups' references.
    await r.call('XREADGROUP', 'GROUP', 'g2', 'b', 'STREAMS', 's', '>');
    assert.deepEqual(await r.call('XACKDEL', 's', 'g1', 'DELREF', 'IDS', '1', '4-0'), [1]);
    assert.deepEqual(await r.call('XPENDING', 's', 'g2'), [1, '2-0', '2-0', [['b', '1']]]);
    assert.deepEqual(await r.call('XRANGE', 's', '-', '+'), [['2-0', ['f', '2']]]);
  });

  it('argument errors', async () => {
    const err = (p: Promise<unknown>) => reply(p);
    assert.equal(await err(r.call('XDELEX', 's', 'IDS', '0', '1-0')), 'ERR: ERR Number of IDs must be a positive integer');
    assert.equal(await err(r.call('XDELEX', 's', 'IDS', 'x', '1-0')), 'ERR: ERR Number of IDs must be a positive integer');
    assert.equal(await err(r.call('XDELEX', 's', 'IDS', '3', '1-0', '2-0')), 'ERR: ERR The `numids` parameter must match the number of arguments');
    assert.equal(await err(r.call('XDELEX', 's', 'IDS', '1', '1-0', 'junk')), 'ERR: ERR syntax error');
    assert.equal(await err(r.call('XDELEX', 's', 'KEEPREF', 'DELREF', 'IDS', '1', '1-0')), 'ERR: ERR syntax error');
    assert.equal(await err(r.call('XDELEX', 's', 'IDS', '1', 'bad')), 'ERR: ERR Invalid stream ID specified as stream command argument');
    assert.equal(await err(r.call('XDELEX', 's', 'ACKED', 'IDS')), "ERR: ERR wrong number of arguments for 'xdelex' command");
    assert.equal(await err(r.call('XDELEX', 's', 'ACKED', 'DELREF', 'X')), 'ERR: ERR syntax error');
    assert.equal(await err(r.call('XDELEX', 's', 'ACKED', 'IDS', '1')), 'ERR: ERR The `numids` parameter must match the number of arguments');
    assert.equal(await err(r.call('XDELEX', 's', 'IDS')), "ERR: ERR wrong number of arguments for 'xdelex' command");
    assert.equal(await err(r.call('XACKDEL', 's', 'nogroup', 'IDS', '1', '1-0')), "ERR: NOGROUP No such key 's' or consumer group 'nogroup'");
    assert.equal(await err(r.call('XACKDEL', 's', 'g', 'IDS', '1')), "ERR: ERR wrong number of arguments for 'xackdel' command");
    // The IDS block may come before the policy.
    assert.deepEqual(await r.call('XDELEX', 's', 'IDS', '1', '2-0', 'DELREF'), [1]);
    await r.call('SET', 'str', 'x');
    assert.equal(await err(r.call('XDELEX', 'str', 'IDS', '1', '1-0')), 'ERR: WRONGTYPE Operation against a key holding the wrong kind of value');
  });
});

// ---------------------------------------------------------------- ds: ordered pending lists

describe('IdMap (ordered pending entries lists)', () => {
  it('agrees with a sorted array under random inserts, deletes and seeks', async () => {
    const { IdMap, makeIdNum, makeId } = await import('../../dist/engine/ds/stream.js');
    const m = new IdMap<number>();
    const ref = new Map<string, number>();
    let x = 12345;
    const rand = (n: number) => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % n;
    };
    const anId = () => (rand(50) === 0 ? makeId(2n ** 64n - 1n, BigInt(rand(3))) : makeIdNum(rand(3000), rand(4)));
    for (let step = 0; step < 30000; step++) {
      const id = anId();
      if (rand(3) === 0) {
        assert.equal(m.delete(id), ref.delete(id));
      } else {
        m.set(id, step);
        ref.set(id, step);
      }
      if (step % 997 === 0) {
        const keys = [...ref.keys()].sort();
        assert.deepEqual(m.keys(), keys);
        assert.equal(m.size, keys.length);
        assert.equal(m.first(), keys[0]);
        assert.equal(m.last(), keys[keys.length - 1]);
        for (let k = 0; k < 50; k++) {
          const probe = anId();
          assert.equal(m.ceil(probe), keys.find((y) => y >= probe));
          assert.equal(m.higher(probe), keys.find((y) => y > probe));
          assert.equal(m.get(probe), ref.get(probe));
        }
      }
    }
  });
});
