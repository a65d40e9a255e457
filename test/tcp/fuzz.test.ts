/**
 * Protocol fuzzing: at least 100,000 random and mutated RESP frames over several connections
 * (reconnecting whenever the server closes one, as it does after a protocol error), while a
 * checker connection keeps issuing SET/GET with random values and verifies every answer.
 *
 * Checked throughout: every byte the server sends is well-formed RESP; a connection the server
 * closes ends with a complete "-ERR Protocol error: ..." reply; the checker never sees a wrong
 * answer. Afterwards: the server is alive, answers PING, logged no internal error, and its RSS
 * stayed under the bound explained at RSS_BOUND.
 *
 * Replay a failure with FUZZ_SEED=<seed> (the seed is printed in every failure message).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import { startOurs } from '../helpers/server.js';
import { RawClient, encode } from '../helpers/resp-client.js';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const FRAMES = Number(process.env.FUZZ_FRAMES ?? 100000);
const FUZZERS = 4;
const BATCH = 4;
/** No sentinel echo after this long: the connection is inside an unfinished bulk or line. */
const STUCK_MS = 40;

/**
 * RSS bound: baseline + 160 MB. What the server legitimately holds is small by construction:
 * fuzz keys come from a space of 512 names with values under 1 KB (< 1 MB), the checker's from
 * 64 names with values up to 64 KB (< 5 MB); each connection has a parser buffer of at most
 * 64 KB plus slack (announced giant bulks are reserved but untouched, so they are not resident)
 * and the shared 256 KB reply slab. The rest is V8 heap headroom, which stays well under 100 MB
 * in practice. A leak of even ~1.5 KB per frame (100,000+ frames) or per connection (~10,000
 * reconnections at 16 KB) would cross the bound.
 */
const RSS_BOUND = 160 * 1024 * 1024;

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

// ---------------------------------------------------------------- frame generation

class Gen {
  constructor(readonly rnd: () => number) {}
  int(n: number): number {
    return Math.floor(this.rnd() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
  /** A short argument: often printable, sometimes binary or empty. */
  arg(): Buffer {
    const r = this.rnd();
    if (r < 0.05) return Buffer.alloc(0);
    if (r < 0.25) return this.bytes(1 + this.int(40));
    if (r < 0.3) return this.bytes(200 + this.int(800));
    return Buffer.from(String(this.int(1e6)), 'latin1');
  }
  key(): Buffer {
    return Buffer.from(`fz:${this.int(512)}`);
  }
  /** A valid command (some with wrong arity or unknown names: errors, not protocol errors). */
  command(): Buffer[] {
    const name = this.pick(['GET', 'SET', 'DEL', 'PING', 'ECHO', 'INCR', 'MSET', 'MULTI', 'EXEC', 'DISCARD', 'get', 'sEt', 'NOPE', 'X']);
    const args: Buffer[] = [Buffer.from(name)];
    switch (name.toUpperCase()) {
      case 'GET': case 'INCR': case 'DEL': args.push(this.key()); break;
      case 'SET': args.push(this.key(), this.arg()); break;
      case 'MSET': for (let i = 1 + this.int(3); i > 0; i--) args.push(this.key(), this.arg()); break;
      case 'ECHO': case 'PING': if (this.rnd() < 0.7) args.push(this.arg()); break;
      default: for (let i = this.int(4); i > 0; i--) args.push(this.arg());
    }
    if (this.rnd() < 0.03) args.push(this.arg()); // maybe wrong arity
    return args;
  }
  multibulk(): Buffer {
    return encode(this.command());
  }
  inline(): Buffer {
    const toks = this.command().map((a) => {
      const s = a.toString('latin1');
      if (this.rnd() < 0.2) return `"${s.replace(/[\\"]/g, '').replace(/[\r\n]/g, '\\n')}"`;
      return /^[\x21-\x7e]+$/.test(s) ? s : 'x';
    });
    return Buffer.from(toks.join(this.pick([' ', '  ', '\t'])) + this.pick(['\r\n', '\n']), 'latin1');
  }
  /** A valid frame broken in one of many ways. */
  mutated(): Buffer {
    const f = this.rnd() < 0.8 ? this.multibulk() : this.inline();
    const n = f.length;
    switch (this.int(10)) {
      case 0: { const b = Buffer.from(f); b[this.int(n)] = this.int(256); return b; }
      case 1: return f.subarray(0, this.int(n)); // truncated: the rest of the stream follows
      case 2: { const p = this.int(n); return Buffer.concat([f.subarray(0, p), this.bytes(1 + this.int(8)), f.subarray(p)]); }
      case 3: { const p = this.int(n); return Buffer.concat([f.subarray(0, p), f.subarray(p + 1 + this.int(6))]); }
      case 4: { const p = this.int(n); return Buffer.concat([f.subarray(0, p), f.subarray(this.int(n))]); }
      case 5: return Buffer.from(f.toString('latin1').replace('\r\n', this.pick(['\n', '\r', '\r\r\n', ''])), 'latin1');
      case 6: {
        // A length or count rewritten: off by one, negative, huge, not a number.
        const s = f.toString('latin1');
        const at = [...s.matchAll(/[*$](\d+)\r\n/g)];
        if (at.length === 0) return f;
        const m = this.pick(at);
        const v = Number(m[1]);
        const nv = this.pick([String(v + 1), String(v - 1), '-1', '-7', '2147483648', '99999999999999999999', 'x', '', '0' + v, String(v * 2)]);
        return Buffer.from(s.slice(0, m.index! + 1) + nv + s.slice(m.index! + 1 + m[1].length), 'latin1');
      }
      case 7: return Buffer.concat([f, f.subarray(0, this.int(n))]);
      case 8: { const b = Buffer.from(f); for (let i = 0; i < 3; i++) b[this.int(n)] ^= 1 << this.int(8); return b; }
      default: return Buffer.concat([Buffer.from(this.pick(['*', '$', ':', '+', '-', '"', "'", '\r', '\n', '\0'])), f]);
    }
  }
  /** Structurally hostile frames. */
  hostile(): Buffer {
    switch (this.int(8)) {
      case 0: return this.bytes(1 + this.int(200));
      case 1: return Buffer.from(`*${this.pick(['2147483647', '1048576', '3', '0', '-1'])}\r\n`);
      case 2: return Buffer.from(`*1\r\n$${this.pick(['536870912', '33000', '16385', '0'])}\r\n`);
      case 3: return Buffer.from(this.pick(['"unbalanced\r\n', "'x'y\r\n", '*\r\n', '$3\r\nGET\r\n', ':1\r\n', '\r\n\r\n', '*1\r\n*1\r\n']));
      case 4: return Buffer.alloc(1 + this.int(2000), this.pick([0x20, 0x61, 0x2a, 0x24, 0]));
      case 5: return Buffer.from(`*2\r\n$3\r\nGET\r\n$${1 + this.int(5)}\r\n`); // a bulk that never ends
      case 6: return Buffer.concat([Buffer.from('*1\r\n$'), this.bytes(this.int(30)), Buffer.from('\r\n')]);
      default: return Buffer.from('GET ' + 'k'.repeat(this.int(70000)) + '\r\n'); // long inline line
    }
  }
  frame(): Buffer {
    const r = this.rnd();
    if (r < 0.7) return this.multibulk();
    if (r < 0.84) return this.inline();
    if (r < 0.97) return this.mutated();
    return this.hostile();
  }
}

// ---------------------------------------------------------------- reply validation

/** End of the well-formed reply at `p`, -1 if incomplete; throws on malformed output. */
function replyEnd(b: Buffer, p: number): number {
  if (p >= b.length) return -1;
  const nl = b.indexOf('\r\n', p);
  if (nl < 0) {
    if (b.length - p > 1 << 20) throw new Error('reply line over 1 MB');
    return -1;
  }
  const t = b[p];
  const line = b.toString('latin1', p + 1, nl);
  switch (t) {
    case 0x2b: case 0x2d:
      if (/[\r\n]/.test(line)) throw new Error(`CR or LF inside a status/error line: ${JSON.stringify(line)}`);
      return nl + 2;
    case 0x3a:
      if (!/^-?\d+$/.test(line)) throw new Error(`bad integer reply ${JSON.stringify(line)}`);
      return nl + 2;
    case 0x24: {
      if (line === '-1') return nl + 2;
      if (!/^(0|[1-9]\d*)$/.test(line)) throw new Error(`bad bulk length ${JSON.stringify(line)}`);
      const end = nl + 2 + Number(line);
      if (end + 2 > b.length) return -1;
      if (b[end] !== 13 || b[end + 1] !== 10) throw new Error('bulk not followed by CRLF');
      return end + 2;
    }
    case 0x2a: {
      if (line === '-1') return nl + 2;
      if (!/^(0|[1-9]\d*)$/.test(line)) throw new Error(`bad array length ${JSON.stringify(line)}`);
      let q = nl + 2;
      for (let i = Number(line); i > 0; i--) {
        q = replyEnd(b, q);
        if (q < 0) return -1;
      }
      return q;
    }
    default:
      throw new Error(`bad reply type byte ${t} in ${JSON.stringify(b.toString('latin1', p, p + 40))}`);
  }
}

// ---------------------------------------------------------------- the test

it(`survives ${FRAMES} random and mutated RESP frames (seed ${SEED})`, { timeout: 120000 }, async (t) => {
  t.diagnostic(`FUZZ_SEED=${SEED}`);
  const server = await startOurs(['--appendfsync', 'no']);
  const pid = server.proc.pid!;
  const failures: string[] = [];
  const fail = (m: string) => { if (failures.length < 10) failures.push(m); };
  let sent = 0;
  let processed = 0;
  let stuck = 0;
  let connections = 0;
  let protocolErrors = 0;
  let done = false;
  let checks = 0;
  let maxRss = 0;
  try {
    await new Promise((r) => setTimeout(r, 300));
    const base = rss(pid);
    const sampler = setInterval(() => { try { maxRss = Math.max(maxRss, rss(pid)); } catch { /* exited */ } }, 200);

    async function fuzzer(id: number): Promise<void> {
      const g = new Gen(prng(SEED + id * 7919));
      let seq = 0;
      while (processed < FRAMES && failures.length === 0) {
        const sock = net.connect(server.port, '127.0.0.1');
        connections++;
        let open = true;
        let weClosed = false;
        let buf: Buffer = Buffer.alloc(0);
        let lastReply = '';
        let awaited = '';
        let acked: (() => void) | null = null;
        sock.on('error', () => {});
        sock.on('data', (d: Buffer) => {
          buf = buf.length ? Buffer.concat([buf, d]) : d;
          try {
            let p = 0;
            for (;;) {
              const e = replyEnd(buf, p);
              if (e < 0) break;
              lastReply = buf.toString('latin1', p, Math.min(e, p + 200));
              if (acked !== null && lastReply === awaited) acked();
              p = e;
            }
            buf = buf.subarray(p);
          } catch (err) {
            fail(`fuzzer ${id}: malformed reply: ${(err as Error).message}`);
            buf = Buffer.alloc(0);
          }
        });
        const closed = new Promise<'closed'>((resolve) => sock.on('close', () => {
          open = false;
          if (!weClosed) {
            if (buf.length !== 0) fail(`fuzzer ${id}: server closed with a partial reply ${JSON.stringify(buf.toString('latin1', 0, 80))}`);
            else if (!lastReply.startsWith('-ERR Protocol error: ')) fail(`fuzzer ${id}: server closed after ${JSON.stringify(lastReply)}`);
            else protocolErrors++;
          }
          resolve('closed');
        }));
        await new Promise<void>((resolve) => { sock.once('connect', resolve); sock.once('close', resolve); });
        let onConn = 0;
        while (open && onConn < 400 && processed < FRAMES && failures.length === 0) {
          // A few frames, then a sentinel: DISCARD (leaves any MULTI) and ECHO <marker>. The
          // marker's echo proves the server parsed the whole batch.
          const frames: Buffer[] = [];
          for (let i = 0; i < BATCH; i++) frames.push(g.frame());
          const marker = `mk:${id}:${seq++}`;
          awaited = `$${marker.length}\r\n${marker}\r\n`;
          const ack = new Promise<'ack'>((resolve) => { acked = () => resolve('ack'); });
          sock.write(Buffer.concat([...frames, encode(['DISCARD']), encode(['ECHO', marker])]));
          sent += BATCH;
          onConn += BATCH;
          let timer: NodeJS.Timeout | undefined;
          const outcome = await Promise.race([ack, closed, new Promise<'stuck'>((r) => { timer = setTimeout(() => r('stuck'), STUCK_MS); })]);
          clearTimeout(timer);
          acked = null;
          if (outcome === 'ack') {
            processed += BATCH;
          } else if (outcome === 'closed') {
            processed += 1; // frames after the one that broke the protocol were never read
          } else {
            // Inside an unfinished bulk or line: the server read the frames as payload.
            processed += BATCH;
            stuck++;
            break;
          }
        }
        if (open) {
          weClosed = true;
          sock.destroy();
        }
        await closed;
      }
    }

    async function checker(): Promise<void> {
      const g = new Gen(prng(SEED ^ 0x5bd1e995));
      const c = await RawClient.connect(server.port);
      const model = new Map<string, Buffer>();
      try {
        while (!done && failures.length === 0) {
          // A small pipeline of SET/GET/DEL, every reply checked against the model.
          const ops: Array<{ cmd: Buffer[]; expect: Buffer }> = [];
          for (let i = 0; i < 1 + g.int(8); i++) {
            const key = `chk:${g.int(64)}`;
            const r = g.rnd();
            if (r < 0.45) {
              const len = g.rnd() < 0.05 ? g.int(64 * 1024) : g.int(300);
              const v = g.bytes(len);
              model.set(key, v);
              ops.push({ cmd: [Buffer.from('SET'), Buffer.from(key), v], expect: Buffer.from('+OK\r\n') });
            } else if (r < 0.9) {
              const v = model.get(key);
              ops.push({ cmd: [Buffer.from('GET'), Buffer.from(key)], expect: v === undefined ? Buffer.from('$-1\r\n') : Buffer.concat([Buffer.from(`$${v.length}\r\n`), v, Buffer.from('\r\n')]) });
            } else {
              const had = model.delete(key);
              ops.push({ cmd: [Buffer.from('DEL'), Buffer.from(key)], expect: Buffer.from(had ? ':1\r\n' : ':0\r\n') });
            }
          }
          c.write(Buffer.concat(ops.map((o) => encode(o.cmd))));
          for (const o of ops) {
            const got = await c.next(10000);
            checks++;
            if (!got.equals(o.expect)) {
              fail(`checker: ${o.cmd[0]} ${o.cmd[1]} answered ${JSON.stringify(got.toString('latin1', 0, 80))}, expected ${JSON.stringify(o.expect.toString('latin1', 0, 80))}`);
              return;
            }
          }
        }
      } catch (err) {
        fail(`checker: ${(err as Error).message}`);
      } finally {
        c.close();
      }
    }

    const check = checker();
    const t0 = Date.now();
    await Promise.all(Array.from({ length: FUZZERS }, (_, i) => fuzzer(i)));
    done = true;
    await check;
    clearInterval(sampler);
    const secs = (Date.now() - t0) / 1000;
    t.diagnostic(`${sent} frames sent, ${processed} read by the server, in ${secs.toFixed(1)} s over ${connections} connections (${protocolErrors} closed by protocol errors, ${stuck} stuck in unfinished frames); ${checks} checked replies; RSS ${(base / 1048576).toFixed(0)} -> max ${(maxRss / 1048576).toFixed(0)} MB`);

    assert.deepEqual(failures, [], `seed ${SEED}`);
    assert.ok(processed >= FRAMES, `only ${processed} frames read by the server (seed ${SEED})`);
    assert.ok(checks > 1000, `only ${checks} checker replies (seed ${SEED})`);
    assert.equal(server.proc.exitCode, null, `server exited (seed ${SEED}):\n${server.output()}`);
    const ping = await RawClient.connect(server.port);
    assert.equal((await ping.call('PING')).toString(), '+PONG\r\n');
    ping.close();
    assert.doesNotMatch(server.output(), /internal error|fatal|Error:/i, `seed ${SEED}`);
    assert.ok(maxRss - base < RSS_BOUND, `server RSS grew by ${((maxRss - base) / 1048576).toFixed(0)} MB (seed ${SEED})`);
  } finally {
    await server.stop();
  }
});
