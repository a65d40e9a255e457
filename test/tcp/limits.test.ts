/**
 * Server limits and process behaviour: maxclients, idle timeout, proto-max-bulk-len, request
 * caps before AUTH, output backpressure against a client that never reads, graceful shutdown
 * on SIGTERM, and the command line (--help, unknown options).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { startOurs, startRedis, MAIN, type Proc } from '../helpers/server.js';
import { RawClient, encode } from '../helpers/resp-client.js';
import { OPTIONS } from '../../dist/config.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resident memory of a process in bytes (VmRSS from /proc/<pid>/status). */
export function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Connect, send `first`, and collect everything until the server closes or `ms` pass. */
function probe(port: number, first: Buffer | string, ms = 1000): Promise<{ data: string; closed: boolean }> {
  return new Promise((resolve) => {
    let data = '';
    const s = net.connect(port, '127.0.0.1', () => s.write(first));
    s.on('data', (d) => { data += d.toString('latin1'); });
    s.on('error', () => {});
    const t = setTimeout(() => { s.destroy(); resolve({ data, closed: false }); }, ms);
    s.on('close', () => { clearTimeout(t); resolve({ data, closed: true }); });
  });
}

async function withServers<T>(args: string[], fn: (ours: Proc, redis: Proc) => Promise<T>): Promise<T> {
  const [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no', ...args]), startRedis(args)]);
  try {
    return await fn(ours, redis);
  } finally {
    await Promise.all([ours.stop(), redis.stop()]);
  }
}

describe('connection limits', () => {
  it('maxclients: the next client gets Redis\'s error and is closed; a freed slot is reused', async () => {
    await withServers(['--maxclients', '5'], async (ours, redis) => {
      for (const p of [ours, redis]) {
        await sleep(200); // let the start-up probe connection go away
        const held: RawClient[] = [];
        for (let i = 0; i < 5; i++) {
          const c = await RawClient.connect(p.port);
          assert.equal((await c.call('PING')).toString(), '+PONG\r\n', `client ${i + 1} of 5`);
          held.push(c);
        }
        const over = await probe(p.port, 'PING\r\n');
        assert.deepEqual(over, { data: '-ERR max number of clients reached\r\n', closed: true });
        held.pop()!.close();
        await sleep(100);
        const again = await RawClient.connect(p.port);
        assert.equal((await again.call('PING')).toString(), '+PONG\r\n', 'a slot freed by a closed client is reused');
        again.close();
        for (const c of held) c.close();
      }
    });
  });

  it('timeout: an idle client is disconnected, an active one is not', async () => {
    const ours = await startOurs(['--appendfsync', 'no', '--timeout', '1']);
    try {
      const idle = await RawClient.connect(ours.port);
      const active = await RawClient.connect(ours.port);
      let idleClosedAt = 0;
      const t0 = Date.now();
      void idle.closed.then(() => { idleClosedAt = Date.now() - t0; });
      for (let i = 0; i < 14; i++) {
        await sleep(250);
        assert.equal((await active.call('PING')).toString(), '+PONG\r\n');
      }
      assert.ok(idleClosedAt > 900 && idleClosedAt < 3000, `idle client closed after ${idleClosedAt} ms`);
      assert.equal(idle.leftover().length, 0, 'nothing is sent before an idle disconnect');
      active.close();
      // A slow upload is activity too (Redis counts every read): a value sent over 2.5 s.
      const slow = await RawClient.connect(ours.port);
      const wire = encode(['SET', 'slow', 'x'.repeat(100)]);
      for (let i = 0; i < 10; i++) {
        slow.write(wire.subarray(Math.floor((i * wire.length) / 10), Math.floor(((i + 1) * wire.length) / 10)));
        await sleep(250);
      }
      assert.equal((await slow.next()).toString(), '+OK\r\n');
      slow.close();
    } finally {
      await ours.stop();
    }
  });

  it('proto-max-bulk-len: a longer bulk is a protocol error, the limit itself is fine', async () => {
    await withServers(['--proto-max-bulk-len', '1mb'], async (ours, redis) => {
      for (const p of [ours, redis]) {
        const over = await probe(p.port, '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n');
        assert.deepEqual(over, { data: '-ERR Protocol error: invalid bulk length\r\n', closed: true }, `port ${p.port}`);
        const c = await RawClient.connect(p.port);
        assert.equal((await c.call('SET', 'k', Buffer.alloc(1024 * 1024, 0x61))).toString(), '+OK\r\n');
        c.close();
      }
    });
  });

  it('before AUTH, big multibulk counts and bulk lengths are refused as in Redis', async () => {
    await withServers(['--requirepass', 'secret'], async (ours, redis) => {
      const cases: Array<[string, string]> = [
        ['*11\r\n', '-ERR Protocol error: unauthenticated multibulk length\r\n'],
        ['*2\r\n$3\r\nGET\r\n$16385\r\n', '-ERR Protocol error: unauthenticated bulk length\r\n'],
      ];
      for (const [wire, reply] of cases) {
        const [a, b] = await Promise.all([probe(ours.port, wire), probe(redis.port, wire)]);
        assert.deepEqual(a, b, JSON.stringify(wire));
        assert.deepEqual(a, { data: reply, closed: true });
      }
      // Within the caps, and after AUTH without caps.
      const big = encode(['AUTH', 'secret']).toString('latin1') + encode(['SET', 'k', 'v'.repeat(20000)]).toString('latin1') + '*11\r\n';
      const [a, b] = await Promise.all([probe(ours.port, big, 500), probe(redis.port, big, 500)]);
      assert.deepEqual(a, b);
      assert.deepEqual(a, { data: '+OK\r\n+OK\r\n', closed: false });
    });
  });
});

describe('backpressure', () => {
  it('a client that never reads its replies does not make the server grow without bound', async () => {
    const ours = await startOurs(['--appendfsync', 'no']);
    const flooder = new net.Socket();
    try {
      const setup = await RawClient.connect(ours.port);
      assert.equal((await setup.call('SET', 'big', Buffer.alloc(1024 * 1024, 0x78))).toString(), '+OK\r\n');
      assert.equal((await setup.call('SET', 'small', 'ok')).toString(), '+OK\r\n');
      await sleep(300);
      const base = rss(ours.proc.pid!);

      // Flood GET big (1 MB each) without ever reading. Unpaused, the server would read all
      // 2,000,000 GETs (44 MB) and queue 2 TB of replies: gigabytes of write requests even
      // with every value sent by reference. Paused, it stops after a few kernel buffers' worth.
      await new Promise<void>((resolve, reject) => flooder.connect(ours.port, '127.0.0.1', resolve).once('error', reject));
      flooder.pause();
      flooder.on('error', () => {});
      const per = 10000;
      const batch = Buffer.from(encode(['GET', 'big']).toString('latin1').repeat(per), 'latin1');
      const target = 2000000;
      let sent = 0;
      let stuckSince = 0;
      while (sent < target) {
        if (flooder.writableLength < 4 * 1024 * 1024) {
          flooder.write(batch);
          sent += per;
          stuckSince = 0;
        } else {
          stuckSince ||= Date.now();
          if (Date.now() - stuckSince > 1500) break; // the server stopped reading: that's the point
        }
        await sleep(5);
      }
      await sleep(500);
      const grown = rss(ours.proc.pid!) - base;
      assert.ok(sent < target, `the server read all ${sent} GETs of a client that reads nothing`);
      // Bound: the replies of one 64 KB read (~2,900 GETs) sent by reference, plus the
      // paused socket's buffers; far below what unbounded queueing reaches.
      assert.ok(grown < 150 * 1024 * 1024, `server RSS grew by ${(grown / 1048576).toFixed(1)} MB`);
      // Other clients are still served.
      assert.equal((await setup.call('GET', 'small')).toString(), '$2\r\nok\r\n');
      flooder.destroy();
      await sleep(300);
      assert.equal((await setup.call('PING')).toString(), '+PONG\r\n');
      setup.close();
    } finally {
      flooder.destroy();
      await ours.stop();
    }
  });
});

describe('replies through a full kernel buffer', () => {
  it('a client that reads late gets every reply, complete and in order', async () => {
    // Replies of 8 KB come from one slab region per read; with the client not reading, the
    // kernel buffer fills and a write is left to libuv to finish (src/tcp/direct-write.ts):
    // reading pauses, and once the client reads, everything arrives in order.
    const ours = await startOurs(['--appendfsync', 'no']);
    const sock = new net.Socket();
    try {
      const setup = await RawClient.connect(ours.port);
      const vals: Buffer[] = [];
      for (let i = 0; i < 10; i++) {
        vals.push(Buffer.alloc(8000, 0x61 + i));
        assert.equal((await setup.call('SET', `v${i}`, vals[i])).toString(), '+OK\r\n');
      }
      await new Promise<void>((resolve, reject) => sock.connect(ours.port, '127.0.0.1', resolve).once('error', reject));
      sock.pause();
      const rounds = 400;
      const chunks: Buffer[] = [];
      sock.on('data', (d: Buffer) => chunks.push(d));
      // 400 pipelines of 10 GETs (80 KB of replies each, 32 MB in all), sent in pieces so that
      // each read is one slab region.
      for (let r = 0; r < rounds; r++) {
        let cmd = '';
        for (let i = 0; i < 10; i++) cmd += encode(['GET', `v${i}`]).toString('latin1');
        sock.write(cmd);
        await new Promise((res) => setTimeout(res, 3));
      }
      await new Promise((res) => setTimeout(res, 500));
      // Another client is served meanwhile.
      assert.equal((await setup.call('PING')).toString(), '+PONG\r\n');
      sock.resume();
      const one = Buffer.concat(vals.map((v) => Buffer.concat([Buffer.from('$8000\r\n'), v, Buffer.from('\r\n')])));
      const want = one.length * rounds;
      const deadline = Date.now() + 30000;
      let got = 0;
      while (got < want && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 20));
        got = chunks.reduce((a, c) => a + c.length, 0);
      }
      const all = Buffer.concat(chunks);
      assert.equal(all.length, want);
      for (let r = 0; r < rounds; r++) {
        assert.ok(all.subarray(r * one.length, (r + 1) * one.length).equals(one), `pipeline ${r} intact`);
      }
      setup.close();
    } finally {
      sock.destroy();
      await ours.stop();
    }
  });
});

describe('process', () => {
  it('SIGTERM: replies already owed are delivered, then the server exits 0', async () => {
    const ours = await startOurs(['--appendfsync', 'no']);
    const c = await RawClient.connect(ours.port);
    assert.equal((await c.call('SET', 'v', Buffer.alloc(1024 * 1024, 0x79))).toString(), '+OK\r\n');
    const idle = await RawClient.connect(ours.port);
    // 150 GETs of 1 MB in one packet: the server reads them all at once, but the socket
    // cannot take 150 MB at once, so most replies are still owed when SIGTERM arrives.
    c.sock.pause();
    c.write(encode(['GET', 'v']).toString('latin1').repeat(150));
    await sleep(300);
    const exited = ours.stop('SIGTERM');
    await sleep(100);
    c.sock.resume();
    const expected = Buffer.concat([Buffer.from('$1048576\r\n'), Buffer.alloc(1024 * 1024, 0x79), Buffer.from('\r\n')]);
    const replies: Buffer[] = [];
    for (let i = 0; i < 150; i++) replies.push(await c.next(10000));
    assert.ok(replies.every((r) => r.equals(expected)), 'every reply complete');
    await c.closed;
    await idle.closed;
    assert.equal(await exited, 0);
    assert.match(ours.output(), /Received SIGTERM/);
  });

  it('--help lists every option (of ours; Redis\'s other parameters are in the README)', () => {
    const r = spawnSync(process.execPath, [MAIN, '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0);
    for (const o of OPTIONS) {
      if (o.redisOnly) continue;
      assert.ok(r.stdout.includes(`--${o.name} `), `--help mentions --${o.name}`);
      assert.ok(r.stdout.includes(`[${o.env}]`), `--help mentions ${o.env}`);
    }
  });

  it('an unknown option or a bad value exits non-zero with a clear message', () => {
    const unknown = spawnSync(process.execPath, [MAIN, '--no-such-option', '1'], { encoding: 'utf8' });
    assert.notEqual(unknown.status, 0);
    assert.match(unknown.stderr, /unknown option --no-such-option/);
    const bad = spawnSync(process.execPath, [MAIN, '--port', 'abc'], { encoding: 'utf8' });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /port/);
    // A first argument that is not an option names a config file, as for redis-server.
    const stray = spawnSync(process.execPath, [MAIN, 'port', '6379'], { encoding: 'utf8' });
    assert.notEqual(stray.status, 0);
    assert.match(stray.stderr, /can't open config file 'port'/);
  });
});
