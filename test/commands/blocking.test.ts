/**
 * Blocking commands between several connections (ioredis clients and raw sockets): BLPOP
 * BRPOP BRPOPLPUSH BLMOVE BLMPOP BZPOPMIN BZMPOP. Timeouts (fractional, measured loosely),
 * first-blocked-first-served order, wake-ups by pushes from other clients and from
 * MULTI/EXEC, several keys, BLMOVE chains, keys deleted / renamed / retyped while clients
 * wait, SWAPDB, disconnects, pipelined input held back behind a blocked command, CLIENT
 * REPLY OFF. Every scenario runs against our server AND a real redis-server 7.0, so each
 * expectation is checked against the reference too.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient, encode } from '../helpers/resp-client.js';

let ours: Proc;
let redis: Proc;
const open: Array<{ close(): void }> = [];

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
});
after(async () => {
  for (const c of open) c.close();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Time for a command sent on one connection to be registered by the server. */
const SETTLE = 60;

/** Whether the server knows a command or subcommand ("client|reply"). */
async function hasCommand(r: Redis, name: string): Promise<boolean> {
  const info = (await r.call('COMMAND', 'INFO', name)) as unknown[];
  return info[0] !== null;
}

/** 'pending' if `p` has not settled within `ms`, else its value. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([p, sleep(ms).then(() => 'pending' as const)]);
}

const targets: Array<[string, () => Proc]> = [['ours', () => ours], ['redis-server', () => redis]];

for (const [target, srv] of targets) {
  function client(): Redis {
    const r = new Redis({
      port: srv().port, host: '127.0.0.1', protocol: 2, enableReadyCheck: false, maxRetriesPerRequest: 1,
      retryStrategy: () => null, lazyConnect: false,
    });
    open.push({ close: () => r.disconnect() });
    return r;
  }

  async function raw(): Promise<RawClient> {
    const c = await RawClient.connect(srv().port);
    open.push(c);
    return c;
  }

  /** Send without waiting for the reply; the reply is read later with next(). */
  function send(c: RawClient, ...args: string[]): void {
    c.write(encode(args));
  }

  async function fresh(): Promise<Redis> {
    const r = client();
    await r.flushall();
    return r;
  }

  describe(`blocking commands (${target})`, () => {
    it('time out after fractional timeouts with the null replies of Redis', async () => {
      await fresh();
      const c = await raw();
      const cases: Array<[string[], string, number]> = [
        [['BLPOP', 'none', '0.2'], '*-1\r\n', 200],
        [['BRPOP', 'a', 'b', '0.15'], '*-1\r\n', 150],
        [['BRPOPLPUSH', 'none', 'd', '0.1'], '*-1\r\n', 100],
        [['BLMOVE', 'none', 'd', 'LEFT', 'RIGHT', '0.1'], '*-1\r\n', 100],
        [['BLMPOP', '0.1', '2', 'a', 'b', 'LEFT'], '*-1\r\n', 100],
        [['BZPOPMIN', 'none', '0.1'], '*-1\r\n', 100],
        [['BZMPOP', '0.1', '1', 'none', 'MAX'], '*-1\r\n', 100],
        [['BLPOP', 'none', '0.0001'], '*-1\r\n', 0],
      ];
      for (const [cmd, reply, ms] of cases) {
        const t0 = Date.now();
        assert.equal((await c.call(...cmd)).toString(), reply, cmd.join(' '));
        const took = Date.now() - t0;
        assert.ok(took >= ms - 20 && took < ms + 1000, `${cmd.join(' ')} took ${took} ms`);
      }
    });

    it('timeout 0, rounding to 0 (-0.0001) and a timeout beyond 24.8 days all keep waiting', async () => {
      const r = await fresh();
      for (const t of ['0', '-0.0001', '3000000']) {
        const w = client();
        const p = w.blpop('k', t as unknown as number);
        assert.equal(await within(p, 250), 'pending', `timeout ${t}`);
        await r.rpush('k', `v${t}`);
        assert.deepEqual(await p, ['k', `v${t}`]);
      }
    });

    it('serves three waiters first blocked, first served', async () => {
      const r = await fresh();
      const ws = [client(), client(), client()];
      const ps: Promise<unknown>[] = [];
      for (const w of ws) {
        ps.push(w.blpop('q', 0));
        await sleep(SETTLE);
      }
      await r.rpush('q', 'one');
      assert.deepEqual(await ps[0], ['q', 'one']);
      assert.equal(await within(ps[1], 100), 'pending');
      // Two elements at once: the next two waiters, in order.
      await r.rpush('q', 'two', 'three', 'four');
      assert.deepEqual(await Promise.all([ps[1], ps[2]]), [['q', 'two'], ['q', 'three']]);
      assert.deepEqual(await r.lrange('q', 0, -1), ['four']);
    });

    it('is woken by LPUSH from another client, in the waiter\'s database', async () => {
      const r = await fresh();
      const w = client();
      await w.select(2);
      const p = w.brpop('k', 0);
      await sleep(SETTLE);
      await r.lpush('k', 'db0'); // another database: not for this waiter
      assert.equal(await within(p, 100), 'pending');
      await r.select(2);
      await r.lpush('k', 'a', 'b');
      assert.deepEqual(await p, ['k', 'a']);
      assert.deepEqual(await r.lrange('k', 0, -1), ['b']);
      await r.select(0);
      assert.deepEqual(await r.lrange('k', 0, -1), ['db0']);
    });

    it('is woken after MULTI/EXEC, by what the transaction left', async () => {
      const r = await fresh();
      const w1 = client();
      const w2 = client();
      const p1 = w1.blpop('k', 0);
      await sleep(SETTLE);
      const p2 = w2.blpop('k', 0);
      await sleep(SETTLE);
      // Pushed and popped inside the transaction: nothing to serve afterwards.
      assert.deepEqual(await r.multi().rpush('k', 'x').lpop('k').exec(), [[null, 1], [null, 'x']]);
      assert.equal(await within(p1, 100), 'pending');
      await r.multi().rpush('k', 'a', 'b').rpush('k', 'c').exec();
      assert.deepEqual(await Promise.all([p1, p2]), [['k', 'a'], ['k', 'b']]);
      assert.deepEqual(await r.lrange('k', 0, -1), ['c']);
    });

    it('waits on several keys and is served from the first key made ready', async () => {
      const r = await fresh();
      const w = client();
      const p = w.blpop('a', 'b', 'c', 0);
      await sleep(SETTLE);
      await r.rpush('c', 'from-c');
      assert.deepEqual(await p, ['c', 'from-c']);
      const p2 = w.call('BLMPOP', '0', '3', 'a', 'b', 'c', 'RIGHT', 'COUNT', '2');
      await sleep(SETTLE);
      // Both keys filled in one transaction: b became ready first.
      await r.multi().rpush('b', 'b1', 'b2', 'b3').rpush('a', 'a1').exec();
      assert.deepEqual(await p2, ['b', ['b3', 'b2']]);
      assert.deepEqual(await r.lrange('b', 0, -1), ['b1']);
      assert.deepEqual(await r.lrange('a', 0, -1), ['a1']);
    });

    it('chains BLMOVE / BRPOPLPUSH wake-ups through their destinations', async () => {
      const r = await fresh();
      const [w1, w2, w3] = [client(), client(), client()];
      const p1 = w1.blmove('a', 'b', 'LEFT', 'RIGHT', 0);
      await sleep(SETTLE);
      const p2 = w2.brpoplpush('b', 'c', 0);
      await sleep(SETTLE);
      const p3 = w3.blpop('c', 0);
      await sleep(SETTLE);
      await r.rpush('a', 'x');
      assert.deepEqual(await Promise.all([p1, p2, p3]), ['x', 'x', ['c', 'x']]);
      assert.equal(await r.exists('a', 'b', 'c'), 0);
      // A waiter on its own source and destination gets the element back in place.
      const p4 = w1.blmove('ring', 'ring', 'LEFT', 'RIGHT', 0);
      await sleep(SETTLE);
      await r.rpush('ring', '1', '2');
      assert.equal(await p4, '1');
      assert.deepEqual(await r.lrange('ring', 0, -1), ['2', '1']);
    });

    it('is woken by every writer that creates the list: LMOVE, SORT STORE, COPY, MOVE', async () => {
      const r = await fresh();
      const keys = ['k1', 'k2', 'k3', 'k4'];
      const ws = keys.map(() => client());
      const ps = ws.map((w, i) => w.blpop(keys[i], 0));
      await sleep(SETTLE);
      await r.rpush('src', 'moved');
      await r.lmove('src', 'k1', 'LEFT', 'RIGHT');
      await r.rpush('unsorted', '3', '1', '2');
      await r.sort('unsorted', 'STORE', 'k2');
      await r.copy('unsorted', 'k3');
      await r.select(1);
      await r.rpush('k4', 'from-db1');
      await r.move('k4', 0);
      await r.select(0);
      assert.deepEqual(await Promise.all(ps), [['k1', 'moved'], ['k2', '1'], ['k3', '3'], ['k4', 'from-db1']]);
      assert.deepEqual(await r.lrange('k2', 0, -1), ['2', '3']);
    });

    it('many waiters on one key: each push serves exactly the next one', async () => {
      const r = await fresh();
      const ws = Array.from({ length: 20 }, () => client());
      const ps: Promise<unknown>[] = [];
      for (const w of ws) {
        ps.push(w.brpop('jobs', 0));
        await sleep(10);
      }
      await sleep(SETTLE);
      for (let i = 0; i < 20; i++) await r.lpush('jobs', `job${i}`);
      const got = await Promise.all(ps);
      // Registration order is only approximately the send order (10 ms apart): check that
      // every job went to exactly one waiter and none was lost.
      assert.deepEqual(got.map((x) => (x as string[])[1]).sort(), Array.from({ length: 20 }, (_, i) => `job${i}`).sort());
      assert.equal(await r.exists('jobs'), 0);
    });

    it('BLMOVE served while its destination holds another type: WRONGTYPE, source untouched', async () => {
      const r = await fresh();
      const w = client();
      // The error may arrive before RPUSH's reply: settle it into a value at once.
      const p = w.blmove('src', 'dst', 'LEFT', 'LEFT', 0).then(() => null, (e: Error) => e.message);
      await sleep(SETTLE);
      await r.set('dst', 'string');
      await r.rpush('src', 'v');
      assert.equal(await p, 'WRONGTYPE Operation against a key holding the wrong kind of value');
      assert.deepEqual(await r.lrange('src', 0, -1), ['v']);
    });

    it('keeps waiting while the key is deleted, set to another type, or renamed away', async () => {
      const r = await fresh();
      const w = client();
      const p = w.blpop('k', 0);
      await sleep(SETTLE);
      await r.set('k', 'a string');
      await r.del('k');
      await r.multi().rpush('k', 'x').del('k').exec();
      await r.set('k', 'again');
      await r.rename('k', 'elsewhere');
      await r.zadd('k', 1, 'm');
      await r.rename('k', 'zset');
      assert.equal(await within(p, 100), 'pending');
      // Renaming a list onto the waited key serves it.
      await r.rpush('other', 'renamed');
      await r.rename('other', 'k');
      assert.deepEqual(await p, ['k', 'renamed']);
    });

    it('a zset on a key serves BZPOPMIN waiters and leaves BLPOP waiters waiting', async () => {
      const r = await fresh();
      const wl = client();
      const wz = client();
      const pl = wl.blpop('k', 0);
      await sleep(SETTLE);
      const pz = wz.bzpopmin('k', 0);
      await sleep(SETTLE);
      await r.zadd('k', 5, 'm', 3, 'n');
      assert.deepEqual(await pz, ['k', 'n', '3']);
      assert.equal(await within(pl, 100), 'pending');
      await r.del('k');
      await r.lpush('k', 'l');
      assert.deepEqual(await pl, ['k', 'l']);
    });

    it('BZPOPMIN / BZMPOP: fairness, wake-up by ZADD and by MULTI/EXEC', async () => {
      const r = await fresh();
      const [w1, w2, w3] = [client(), client(), client()];
      const p1 = w1.bzpopmin('z', 0);
      await sleep(SETTLE);
      const p2 = w2.call('BZMPOP', '0', '2', 'y', 'z', 'MAX', 'COUNT', '2');
      await sleep(SETTLE);
      const p3 = w3.bzpopmax('z', 0);
      await sleep(SETTLE);
      await r.multi().zadd('z', 1, 'a', 2, 'b', 3, 'c').zadd('z', 4, 'd').exec();
      assert.deepEqual(await Promise.all([p1, p2]), [['z', 'a', '1'], ['z', [['d', '4'], ['c', '3']]]]);
      assert.deepEqual(await p3, ['z', 'b', '2']);
      assert.equal(await r.exists('z'), 0);
    });

    it('a disconnected waiter leaves no trace: a later push is not lost', async () => {
      const r = await fresh();
      const gone = await raw();
      send(gone, 'BLPOP', 'k', '0');
      const gone2 = client();
      gone2.bzpopmin('z', 0).catch(() => {});
      await sleep(SETTLE);
      gone.close();
      gone2.disconnect();
      await sleep(SETTLE);
      await r.rpush('k', 'kept');
      await r.zadd('z', 1, 'm');
      assert.deepEqual(await r.lrange('k', 0, -1), ['kept']);
      assert.equal(await r.zcard('z'), 1);
      const w = client();
      assert.deepEqual(await w.blpop('k', 0), ['k', 'kept']);
    });

    it('pipelined commands after a blocking command run only after it is served', async () => {
      const r = await fresh();
      const c = await raw();
      c.write(Buffer.concat([
        encode(['BLPOP', 'k', '0']), encode(['SET', 'after', '1']), encode(['PING']), encode(['LLEN', 'k']),
      ]));
      await sleep(SETTLE * 2);
      assert.equal(await r.get('after'), null);
      assert.equal(c.leftover().length, 0);
      await r.rpush('k', 'v', 'w');
      assert.equal((await c.next()).toString(), '*2\r\n$1\r\nk\r\n$1\r\nv\r\n');
      assert.equal((await c.next()).toString(), '+OK\r\n');
      assert.equal((await c.next()).toString(), '+PONG\r\n');
      assert.equal((await c.next()).toString(), ':1\r\n');
      // Also behind a timeout, and behind BZMPOP.
      c.write(Buffer.concat([encode(['BZMPOP', '0.05', '1', 'z', 'MIN']), encode(['ECHO', 'next'])]));
      assert.equal((await c.next()).toString(), '*-1\r\n');
      assert.equal((await c.next()).toString(), '$4\r\nnext\r\n');
    });

    it('SWAPDB serves clients waiting on keys that now hold values', async () => {
      const r = await fresh();
      const w = client();
      const p = w.blpop('k', 0);
      await sleep(SETTLE);
      await r.select(1);
      await r.rpush('k', 'from-db1');
      await r.swapdb(0, 1);
      assert.deepEqual(await p, ['k', 'from-db1']);
      await r.select(0);
    });

    it('CLIENT REPLY OFF / SKIP also suppress the reply given when served', async (t) => {
      const r = await fresh();
      if (!(await hasCommand(r, 'client|reply'))) return t.skip('CLIENT REPLY is not in this build');
      const c = await raw();
      c.write('CLIENT REPLY OFF\r\nBLPOP k 0\r\nCLIENT REPLY ON\r\nPING\r\n');
      const d = await raw();
      d.write('CLIENT REPLY SKIP\r\nBLPOP k2 0\r\nPING\r\n');
      await sleep(SETTLE);
      await r.rpush('k', 'v');
      await r.rpush('k2', 'v');
      assert.equal((await c.next()).toString(), '+OK\r\n'); // CLIENT REPLY ON
      assert.equal((await c.next()).toString(), '+PONG\r\n');
      assert.equal((await d.next()).toString(), '+PONG\r\n');
      assert.equal(await r.exists('k', 'k2'), 0);
    });

    it('CLIENT UNBLOCK answers as on timeout, or with an UNBLOCKED error', async (t) => {
      const r = await fresh();
      if (!(await hasCommand(r, 'client|unblock'))) return t.skip('CLIENT UNBLOCK is not in this build');
      const c = await raw();
      const id = (await c.call('CLIENT', 'ID')).toString().slice(1, -2);
      const cases: Array<[string[], string, string]> = [
        [['BLPOP', 'k', '0'], 'TIMEOUT', '*-1\r\n'],
        [['BLMOVE', 'k', 'd', 'LEFT', 'LEFT', '0'], 'TIMEOUT', '*-1\r\n'],
        [['BZMPOP', '0', '1', 'z', 'MIN'], 'TIMEOUT', '*-1\r\n'],
        [['BRPOP', 'k', '0'], 'ERROR', '-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n'],
      ];
      for (const [cmd, how, reply] of cases) {
        send(c, ...cmd);
        await sleep(SETTLE);
        assert.equal(await r.call('CLIENT', 'UNBLOCK', id, how), 1);
        assert.equal((await c.next()).toString(), reply, cmd.join(' '));
      }
      assert.equal(await r.call('CLIENT', 'UNBLOCK', id), 0);
      // No longer waiting: a push stays in the list.
      await r.rpush('k', 'v');
      assert.equal(await r.llen('k'), 1);
    });

    // Key specs are not modelled by the command table, so COMMAND INFO is compared up to them
    // here rather than byte for byte in the differential cases. SORT's rows are checked too.
    it('COMMAND INFO rows match (name, arity, flags, key positions, categories)', async () => {
      const r = client();
      const names = ['blpop', 'brpop', 'brpoplpush', 'blmove', 'blmpop', 'bzpopmin', 'bzpopmax', 'bzmpop', 'sort', 'sort_ro'];
      const info = (await r.call('COMMAND', 'INFO', ...names)) as unknown[][];
      const rows = info.map((x) => JSON.stringify(x.slice(0, 7)));
      const expected = [
        '["blpop",-3,["write","noscript","blocking"],1,-2,1,["@write","@list","@slow","@blocking"]]',
        '["brpop",-3,["write","noscript","blocking"],1,-2,1,["@write","@list","@slow","@blocking"]]',
        '["brpoplpush",4,["write","denyoom","noscript","blocking"],1,2,1,["@write","@list","@slow","@blocking"]]',
        '["blmove",6,["write","denyoom","noscript","blocking"],1,2,1,["@write","@list","@slow","@blocking"]]',
        '["blmpop",-5,["write","blocking","movablekeys"],0,0,0,["@write","@list","@slow","@blocking"]]',
        '["bzpopmin",-3,["write","noscript","blocking","fast"],1,-2,1,["@write","@sortedset","@fast","@blocking"]]',
        '["bzpopmax",-3,["write","noscript","blocking","fast"],1,-2,1,["@write","@sortedset","@fast","@blocking"]]',
        '["bzmpop",-5,["write","blocking","movablekeys"],0,0,0,["@write","@sortedset","@slow","@blocking"]]',
        '["sort",-2,["write","denyoom","movablekeys"],1,1,1,["@write","@set","@sortedset","@list","@slow","@dangerous"]]',
        '["sort_ro",-2,["readonly","movablekeys"],1,1,1,["@read","@set","@sortedset","@list","@slow","@dangerous"]]',
      ];
      assert.deepEqual(rows, expected);
    });
  });
}
