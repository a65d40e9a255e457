/**
 * Replies batched per poll phase (src/tcp/connection.ts, deferFlush): with two or more
 * connections open, a read's replies go out after every ready socket was read, as Redis writes
 * them in beforeSleep. What must not change, against redis-server byte for byte: every reply
 * reaches its own connection, whole and in order, whatever the frames' split into reads, with
 * output beyond the batch's bound (64 KB) and with QUIT (its +OK, then the close).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { withBothServers, type Proc } from '../helpers/server.js';
import { encode, replyLength } from '../helpers/resp-client.js';

/** A deterministic pseudo-random sequence (xorshift32). */
function rng(seed: number): () => number {
  let x = seed | 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

interface Session {
  /** Every byte received, until `replies` complete replies arrived (or the server closed). */
  bytes: Promise<Buffer>;
}

/**
 * Connect, send `frames` cut at random points into writes spaced by a macrotask (so that
 * reads end inside frames), and collect the replies.
 */
function session(port: number, frames: Buffer[], replies: number, seed: number): Session {
  const sock = net.connect(port, '127.0.0.1');
  const bytes = new Promise<Buffer>((resolve, reject) => {
    let got = Buffer.alloc(0);
    const done = () => {
      sock.destroy();
      resolve(got);
    };
    sock.on('error', reject);
    sock.on('close', () => resolve(got));
    // A reply that never comes fails the test instead of holding it open.
    sock.setTimeout(20_000, () => {
      sock.destroy();
      reject(new Error(`no reply for 20 s; ${got.length} bytes received`));
    });
    sock.on('data', (d) => {
      got = Buffer.concat([got, d]);
      let p = 0;
      let n = 0;
      for (;;) {
        const l = replyLength(got, p);
        if (l < 0) break;
        p += l;
        n++;
      }
      if (n >= replies) done();
    });
    sock.on('connect', async () => {
      const all = Buffer.concat(frames);
      const r = rng(seed);
      for (let at = 0; at < all.length;) {
        const n = 1 + Math.floor(r() * (r() < 0.5 ? 12 : 400));
        sock.write(all.subarray(at, at + n));
        at += n;
        if (r() < 0.3) await new Promise((ok) => setImmediate(ok));
      }
    });
  });
  return { bytes };
}

async function both(ours: Proc, redis: Proc, run: (port: number) => Promise<Buffer[]>): Promise<void> {
  const [a, b] = [await run(ours.port), await run(redis.port)];
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++) assert.equal(a[i].toString('latin1'), b[i].toString('latin1'), `connection ${i}`);
}

describe('replies batched per poll phase, against redis-server', () => {
  let ours: Proc;
  let redis: Proc;
  withBothServers((o, r) => {
    ours = o;
    redis = r;
  });

  it('every reply reaches its own connection, whole and in order, across partial frames', async () => {
    await both(ours, redis, async (port) => {
      const sessions: Session[] = [];
      for (let c = 0; c < 24; c++) {
        const frames: Buffer[] = [];
        const k = `bf:${c}`;
        frames.push(encode(['DEL', k, `${k}:n`, `${k}:h`]));
        for (let i = 0; i < 40; i++) {
          frames.push(encode(['INCR', `${k}:n`]));
          frames.push(encode(['SET', k, `v${c}:${i}:${'x'.repeat((c * 37 + i * 11) % 300)}`]));
          frames.push(encode(['GET', k]));
          frames.push(encode(['HSET', `${k}:h`, `f${i}`, String(i)]));
          if (i % 10 === 9) frames.push(encode(['HGETALL', `${k}:h`]), encode(['NOSUCHCOMMAND', k]));
        }
        frames.push(encode(['DEL', k, `${k}:n`, `${k}:h`]));
        sessions.push(session(port, frames, frames.length, c + 1));
      }
      return Promise.all(sessions.map((s) => s.bytes));
    });
  });

  it('output beyond the batch bound (64 KB) in one read arrives whole', async () => {
    await both(ours, redis, async (port) => {
      const setup = session(port, [encode(['SET', 'bf:big', 'b'.repeat(40_000)])], 1, 99);
      await setup.bytes;
      const sessions: Session[] = [];
      for (let c = 0; c < 6; c++) {
        const frames: Buffer[] = [];
        for (let i = 0; i < 8; i++) frames.push(encode(['GET', 'bf:big']), encode(['ECHO', `c${c} i${i}`]));
        sessions.push(session(port, frames, frames.length, 40 + c));
      }
      const out = await Promise.all(sessions.map((s) => s.bytes));
      await session(port, [encode(['DEL', 'bf:big'])], 1, 98).bytes;
      return out;
    });
  });

  it('QUIT among other connections: its +OK, then the close, replies before it intact', async () => {
    await both(ours, redis, async (port) => {
      const sessions: Session[] = [];
      for (let c = 0; c < 8; c++) {
        const frames = [encode(['PING', `p${c}`]), encode(['ECHO', 'y'.repeat(c * 100)])];
        if (c % 2 === 0) frames.push(encode(['QUIT']));
        // A QUIT session waits for one reply more than it gets: it ends with the server's close.
        sessions.push(session(port, frames, c % 2 === 0 ? 4 : 2, 70 + c));
      }
      return Promise.all(sessions.map((s) => s.bytes));
    });
  });
});
