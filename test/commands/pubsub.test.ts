/**
 * Pub/Sub between several connections (ioredis clients and raw sockets) against our server:
 * delivery order, binary exactness, PUBLISH counts, channel + pattern double delivery, shard
 * channels, cleanup on disconnect and RESET, a 10,000-message flood, and the pubsub class of
 * client-output-buffer-limit disconnecting a subscriber that never reads.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { Redis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';
import { RawClient, encode } from '../helpers/resp-client.js';

let srv: Proc;
const clients: Redis[] = [];

function client(): Redis {
  const r = new Redis({ port: srv.port, host: '127.0.0.1', protocol: 2, enableReadyCheck: false, maxRetriesPerRequest: 1, retryStrategy: () => null,
  });
  clients.push(r);
  return r;
}

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type Msg = [kind: string, ...parts: Buffer[]];

/** Collect every message/pmessage/smessage a subscriber receives, as exact bytes. */
function collect(r: Redis): Msg[] {
  const got: Msg[] = [];
  r.on('messageBuffer', (ch: Buffer, m: Buffer) => got.push(['message', ch, m]));
  r.on('pmessageBuffer', (p: string, ch: Buffer, m: Buffer) => got.push(['pmessage', Buffer.from(p), ch, m]));
  r.on('smessageBuffer', (ch: Buffer, m: Buffer) => got.push(['smessage', ch, m]));
  return got;
}

const text = (m: Msg) => [m[0], ...m.slice(1).map((b) => (b as Buffer).toString('latin1'))].join(' ');

async function numsub(r: Redis, ...chs: string[]): Promise<number[]> {
  const res = (await r.pubsub('NUMSUB', ...chs)) as unknown[];
  return res.filter((_, i) => i % 2 === 1) as number[];
}

before(async () => {
  srv = await startOurs(['--appendfsync', 'no']);
});
after(async () => {
  for (const r of clients) r.disconnect();
  await srv?.stop();
});

describe('pub/sub between connections', () => {
  it('delivers messages and pmessages in order, with PUBLISH counting receivers', async () => {
    const pub = client();
    const a = client();
    const b = client();
    const ga = collect(a);
    const gb = collect(b);
    await a.subscribe('ch1', 'ch2');
    await b.psubscribe('ch*');
    assert.equal(await pub.publish('nobody', 'x'), 0);
    const counts: number[] = [];
    for (let i = 0; i < 50; i++) counts.push(await pub.publish(i % 2 ? 'ch2' : 'ch1', `m${i}`));
    assert.deepEqual(counts, Array(50).fill(2));
    assert.equal(await pub.publish('chX', 'only-pattern'), 1);
    await waitFor('all messages', () => ga.length === 50 && gb.length === 51);
    assert.deepEqual(ga.map(text), Array.from({ length: 50 }, (_, i) => `message ${i % 2 ? 'ch2' : 'ch1'} m${i}`));
    assert.deepEqual(gb.map(text), [
      ...Array.from({ length: 50 }, (_, i) => `pmessage ch* ${i % 2 ? 'ch2' : 'ch1'} m${i}`),
      'pmessage ch* chX only-pattern',
    ]);
    await a.unsubscribe('ch1');
    assert.equal(await pub.publish('ch1', 'after'), 1); // only the pattern now
    assert.equal(await pub.publish('ch2', 'after'), 2);
    await b.punsubscribe();
    assert.equal(await pub.publish('ch1', 'after'), 0);
    assert.equal(await pub.publish('ch2', 'after'), 1);
    await a.unsubscribe();
  });

  it('channel and pattern subscriptions of one client each receive (and count) the message', async () => {
    const pub = client();
    const s = client();
    const got = collect(s);
    await s.subscribe('news.tech');
    await s.psubscribe('news.*', '*.tech', 'nomatch*');
    assert.equal(await pub.publish('news.tech', 'hello'), 3);
    await waitFor('3 deliveries', () => got.length === 3);
    // The channel subscription first, then the matching patterns in the order they appeared.
    assert.deepEqual(got.map(text), [
      'message news.tech hello', 'pmessage news.* news.tech hello', 'pmessage *.tech news.tech hello',
    ]);
    // A second client on the same pattern counts once more; NUMPAT counts distinct patterns.
    const s2 = client();
    await s2.psubscribe('news.*');
    assert.equal(await pub.publish('news.tech', 'again'), 4);
    assert.equal(await pub.pubsub('NUMPAT'), 3);
    await s.quit();
    await s2.quit();
  });

  it('binary channel names, patterns and payloads arrive byte for byte', async () => {
    const pub = client();
    const s = client();
    const got = collect(s);
    const ch = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x2a, 0xc3, 0x28, 0x80]);
    const pat = Buffer.from([0x00, 0xff, 0x2a]); // "\0\xff*" matches ch
    const small = Buffer.alloc(256);
    for (let i = 0; i < 256; i++) small[i] = i;
    const big = Buffer.alloc(200 * 1024); // above the writer's by-reference threshold
    for (let i = 0; i < big.length; i++) big[i] = (i * 131 + 7) & 0xff;
    await s.subscribe(ch);
    await s.psubscribe(pat as unknown as string);
    assert.equal(await pub.publish(ch, small), 2);
    assert.equal(await pub.publish(ch, big), 2);
    assert.equal(await pub.publish(ch, Buffer.alloc(0)), 2);
    await waitFor('6 deliveries', () => got.length === 6);
    const expect: Buffer[] = [small, small, big, big, Buffer.alloc(0), Buffer.alloc(0)];
    for (let i = 0; i < 6; i++) {
      const m = got[i];
      assert.equal(m[0], i % 2 === 0 ? 'message' : 'pmessage');
      const [c, p] = i % 2 === 0 ? [m[1], m[2]] : [m[2], m[3]];
      assert.ok(c.equals(ch), `channel bytes of delivery ${i}`);
      assert.ok(p.equals(expect[i]), `payload bytes of delivery ${i}`);
    }
    const ns = (await pub.callBuffer('PUBSUB', 'NUMSUB', ch)) as [Buffer, number];
    assert.ok(ns[0].equals(ch));
    assert.equal(ns[1], 1);
    const names = (await pub.callBuffer('PUBSUB', 'CHANNELS', Buffer.from([0x00, 0x2a]))) as Buffer[];
    assert.equal(names.length, 1);
    assert.ok(names[0].equals(ch));
    // The pattern itself, exactly, on a raw connection (ioredis decodes it as text).
    const raw = await RawClient.connect(srv.port);
    try {
      raw.write(encode(['PSUBSCRIBE', pat]));
      assert.ok((await raw.next()).equals(Buffer.concat([
        Buffer.from('*3\r\n$10\r\npsubscribe\r\n$3\r\n'), pat, Buffer.from('\r\n:1\r\n')])));
      assert.equal(await pub.publish(ch, 'x'), 3);
      assert.ok((await raw.next()).equals(Buffer.concat([
        Buffer.from('*4\r\n$8\r\npmessage\r\n$3\r\n'), pat, Buffer.from(`\r\n$${ch.length}\r\n`), ch,
        Buffer.from('\r\n$1\r\nx\r\n')])));
    } finally {
      raw.close();
    }
    await s.quit();
  });

  it('shard channels are their own namespace: SPUBLISH reaches only SSUBSCRIBE', async () => {
    const pub = client();
    const sh = client();
    const pl = client();
    const gs = collect(sh);
    const gp = collect(pl);
    await sh.ssubscribe('orders');
    await pl.subscribe('orders');
    await pl.psubscribe('*');
    assert.equal(await pub.spublish('orders', 's1'), 1);
    assert.equal(await pub.publish('orders', 'p1'), 2);
    await waitFor('deliveries', () => gs.length === 1 && gp.length === 2);
    assert.deepEqual(gs.map(text), ['smessage orders s1']);
    assert.deepEqual(gp.map(text), ['message orders p1', 'pmessage * orders p1']);
    assert.deepEqual(await pub.pubsub('SHARDCHANNELS'), ['orders']);
    assert.deepEqual(await pub.pubsub('SHARDNUMSUB', 'orders', 'x'), ['orders', 1, 'x', 0]);
    await sh.quit();
    await pl.quit();
  });

  it('disconnect and RESET leave every channel and pattern (no leak)', async () => {
    const pub = client();
    const chans = ['c1', 'c2', 'c3'];
    const quitter = client();
    const killed = client();
    const resetter = client();
    for (const r of [quitter, killed, resetter]) {
      await r.subscribe(...chans);
      await r.psubscribe('c*', 'x?');
      await r.ssubscribe('s1', 's2');
    }
    assert.deepEqual(await numsub(pub, ...chans), [3, 3, 3]);
    assert.equal(await pub.pubsub('NUMPAT'), 2);
    assert.deepEqual(((await pub.pubsub('CHANNELS')) as string[]).sort(), chans);
    assert.deepEqual(await pub.pubsub('SHARDNUMSUB', 's1', 's2'), ['s1', 3, 's2', 3]);
    assert.equal(await pub.publish('c1', 'x'), 6);

    await quitter.quit(); // orderly
    killed.stream.destroy(); // abrupt
    killed.disconnect();
    // RESET on a raw connection: the reply is +RESET and the client leaves the context.
    const raw = await RawClient.connect(srv.port);
    raw.write(encode(['SUBSCRIBE', 'c1']));
    await raw.next();
    assert.equal((await raw.call('RESET')).toString(), '+RESET\r\n');
    assert.equal((await raw.call('PUBSUB', 'NUMSUB', 'zz')).toString(), '*2\r\n$2\r\nzz\r\n:0\r\n');
    await waitFor('two clients gone', async () => (await numsub(pub, 'c1'))[0] === 1);
    resetter.disconnect();
    await waitFor('all gone', async () => (await numsub(pub, ...chans)).every((n) => n === 0));
    assert.deepEqual(await numsub(pub, ...chans), [0, 0, 0]);
    assert.equal(await pub.pubsub('NUMPAT'), 0);
    assert.deepEqual(await pub.pubsub('CHANNELS'), []);
    assert.deepEqual(await pub.pubsub('SHARDCHANNELS'), []);
    assert.deepEqual(await pub.pubsub('SHARDNUMSUB', 's1', 's2'), ['s1', 0, 's2', 0]);
    assert.equal(await pub.publish('c1', 'x'), 0);
    assert.equal(await pub.spublish('s1', 'x'), 0);
    raw.close();
  });

  it('a PUBLISH whose packet ends right after the multibulk header (parser regression)', async () => {
    // ioredis floods hit this boundary: the parser used to forget the header and read the
    // rest of the command as inline commands.
    const sub = await RawClient.connect(srv.port);
    const raw = await RawClient.connect(srv.port);
    try {
      sub.write(encode(['SUBSCRIBE', 'split']));
      await sub.next();
      raw.sock.setNoDelay(true);
      raw.write('*3\r\n');
      await new Promise((r) => setTimeout(r, 50));
      raw.write('$7\r\nPUBLISH\r\n$5\r\nsplit\r\n$2\r\nok\r\n');
      assert.equal((await raw.next()).toString(), ':1\r\n');
      assert.equal((await sub.next()).toString(), '*3\r\n$7\r\nmessage\r\n$5\r\nsplit\r\n$2\r\nok\r\n');
      assert.equal(raw.leftover().length, 0);
    } finally {
      sub.close();
      raw.close();
    }
  });

  it('a flood of 10,000 published messages arrives complete and in order', async () => {
    const pub = client();
    const s = client();
    const got = collect(s);
    await s.subscribe('flood');
    await s.psubscribe('flo*');
    const N = 10000;
    const p = pub.pipeline();
    for (let i = 0; i < N; i++) p.publish('flood', `msg-${i}-${'x'.repeat(i % 97)}`);
    const res = (await p.exec())!;
    assert.equal(res.length, N);
    const bad = res.findIndex(([err, n]) => err !== null || n !== 2);
    assert.equal(bad, -1, `PUBLISH #${bad} answered ${JSON.stringify(res[bad])}`);
    await waitFor('20,000 deliveries', () => got.length === 2 * N, 20000)
      .catch((e: Error) => { throw new Error(`${e.message} (received ${got.length})`); });
    for (let i = 0; i < N; i++) {
      const payload = `msg-${i}-${'x'.repeat(i % 97)}`;
      assert.equal(text(got[2 * i]), `message flood ${payload}`);
      assert.equal(text(got[2 * i + 1]), `pmessage flo* flood ${payload}`);
    }
    await s.quit();
  });
});

describe('pubsub output-buffer limit', () => {
  let limited: Proc;
  before(async () => {
    limited = await startOurs(['--appendfsync', 'no', '--client-output-buffer-limit', 'normal 0 0 0 pubsub 1mb 512kb 1']);
  });
  after(async () => {
    await limited?.stop();
  });

  function rssKb(pid: number): number {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  }

  it('disconnects a subscriber that never reads once over the hard limit; memory stays bounded', async () => {
    // The subscriber: subscribes, then stops reading (its kernel buffers fill, then ours).
    const sub = net.connect({ port: limited.port, host: '127.0.0.1' });
    sub.on('error', () => {});
    let closed = false;
    sub.on('close', () => { closed = true; });
    await new Promise<void>((resolve) => sub.once('connect', () => resolve()));
    sub.write(encode(['SUBSCRIBE', 'big']));
    await new Promise<void>((resolve) => sub.once('data', () => resolve()));
    sub.pause();

    const pub = await RawClient.connect(limited.port);
    const well = await RawClient.connect(limited.port); // a reading subscriber on another channel
    well.write(encode(['SUBSCRIBE', 'other']));
    await well.next();
    const rss0 = rssKb(limited.proc.pid!);
    const payload = Buffer.alloc(256 * 1024, 0x61);
    let sent = 0;
    let receivers = -1;
    // 400 x 256 KB = 100 MB offered to a subscriber allowed 1 MB.
    for (; sent < 400 && receivers !== 0; sent++) {
      receivers = Number((await pub.call('PUBLISH', 'big', payload)).toString().slice(1, -2));
    }
    // The server dropped it: PUBLISH stopped counting it long before 100 MB went out.
    assert.equal(receivers, 0);
    assert.ok(sent < 400, `dropped after ${sent} messages`);
    // The paused socket sees the close only once it reads what the kernel still holds.
    let received = 0;
    sub.on('data', (d: Buffer) => { received += d.length; });
    sub.resume();
    await waitFor('the subscriber connection to close', () => closed, 10000);
    assert.ok(received < sent * payload.length, `received ${received} of ${sent * payload.length} bytes`);
    // Cleanup happened: nobody is left on the channel, and the server still serves others.
    await waitFor('numsub 0', async () => (await pub.call('PUBSUB', 'NUMSUB', 'big')).toString() === '*2\r\n$3\r\nbig\r\n:0\r\n');
    assert.equal((await pub.call('PUBLISH', 'big', 'x')).toString(), ':0\r\n');
    assert.equal((await pub.call('PUBLISH', 'other', 'still here')).toString(), ':1\r\n');
    assert.equal((await well.next()).toString(), '*3\r\n$7\r\nmessage\r\n$5\r\nother\r\n$10\r\nstill here\r\n');
    const grown = rssKb(limited.proc.pid!) - rss0;
    assert.ok(grown < 64 * 1024, `server RSS grew by ${grown} kB`);
    assert.match(limited.output(), /scheduled to be closed ASAP for overcoming of output buffer limits/);
    sub.destroy();
    pub.close();
    well.close();
  });
});
