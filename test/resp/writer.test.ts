/**
 * RespWriter: every reply type byte for byte, several writers sharing the process-wide slab,
 * big values sent by reference, and flush/rewind safety against a fake socket that sometimes
 * keeps the buffers it was given (an asynchronous write, as a real socket does under load).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RespWriter, type ByteSink } from '../../dist/resp/writer.js';
import { replyStats } from '../../dist/resp/reply-sink.js';

/**
 * A socket stand-in. In 'sync' mode every write is "sent" at once (copied, as the kernel
 * would), so writableLength stays 0; in 'async' mode the Buffers are kept by reference and
 * copied only when send() runs, so any later overwrite by the writer shows up as corruption.
 */
class FakeSocket implements ByteSink {
  mode: 'sync' | 'async' = 'sync';
  /** Every Buffer handed to write(), by reference. */
  readonly refs: Uint8Array[] = [];
  private held: Uint8Array[] = [];
  private received: Buffer[] = [];
  private corked = 0;

  write(b: Uint8Array): boolean {
    this.refs.push(b);
    this.held.push(b);
    if (this.corked === 0 && this.mode === 'sync') this.send();
    return this.mode === 'sync';
  }
  cork(): void {
    this.corked++;
  }
  uncork(): void {
    if (--this.corked === 0 && this.mode === 'sync') this.send();
  }
  get writableLength(): number {
    let n = 0;
    for (const b of this.held) n += b.length;
    return n;
  }
  /** The kernel takes every held byte now. */
  send(): void {
    for (const b of this.held) this.received.push(Buffer.from(b));
    this.held = [];
  }
  bytes(): Buffer {
    this.send();
    return Buffer.concat(this.received);
  }
}

// ---------------------------------------------------------------- reference encoder

const enc = {
  ok: () => Buffer.from('+OK\r\n'),
  simple: (s: string) => Buffer.from(`+${s}\r\n`, 'latin1'),
  error: (s: string) => Buffer.from(`-${s.replace(/[\r\n]/g, ' ')}\r\n`, 'latin1'),
  int: (n: number | bigint) => Buffer.from(`:${n}\r\n`),
  bulk: (v: Buffer) => Buffer.concat([Buffer.from(`$${v.length}\r\n`), v, Buffer.from('\r\n')]),
  bulkLatin1: (s: string) => enc.bulk(Buffer.from(s, 'latin1')),
  bulkText: (s: string) => enc.bulk(Buffer.from(s, 'utf8')),
  nil: () => Buffer.from('$-1\r\n'),
  array: (n: number) => Buffer.from(`*${n}\r\n`),
  nilArray: () => Buffer.from('*-1\r\n'),
};

/** Compare big outputs without dumping megabytes: report the first differing byte. */
function sameBytes(got: Buffer, want: Buffer, what: string): void {
  if (got.equals(want)) return;
  let d = 0;
  while (d < got.length && got[d] === want[d]) d++;
  assert.fail(`${what}: differs at byte ${d} of ${want.length} (got ${got.length} bytes)`);
}

function written(fn: (w: RespWriter) => void): Buffer {
  const w = new RespWriter();
  fn(w);
  return w.take();
}

/** Seeded PRNG (mulberry32) so a failure can be replayed. */
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

describe('RespWriter encodes every reply type byte for byte', () => {
  it('status, OK and errors', () => {
    assert.deepEqual(written((w) => w.ok()), enc.ok());
    assert.deepEqual(written((w) => w.simple('PONG')), Buffer.from('+PONG\r\n'));
    assert.deepEqual(written((w) => w.simple('')), Buffer.from('+\r\n'));
    assert.deepEqual(written((w) => w.simple('\xff\x00x')), Buffer.from([0x2b, 0xff, 0, 0x78, 13, 10]));
    assert.deepEqual(written((w) => w.error('ERR syntax error')), Buffer.from('-ERR syntax error\r\n'));
    // CR and LF in an error would break the protocol: both become spaces, as Redis does.
    assert.deepEqual(written((w) => w.error('ERR a\r\nb\nc\rd')), Buffer.from('-ERR a  b c d\r\n'));
    // Error texts are latin1 byte strings: a user byte 0xe9 stays one byte.
    assert.deepEqual(written((w) => w.error('ERR \xe9')), Buffer.from([0x2d, 0x45, 0x52, 0x52, 0x20, 0xe9, 13, 10]));
  });

  it('error replies are counted', () => {
    const before = replyStats.errors;
    written((w) => { w.error('ERR x'); w.ok(); w.error('WRONGTYPE y'); });
    assert.equal(replyStats.errors, before + 2);
  });

  it('integers: small cached, large, negative, 64-bit bigints', () => {
    const cases: Array<number | bigint> = [
      0, 1, 9, 10, 9999, 10000, 123456789, -1, -9999, -10000, 2 ** 31, -(2 ** 31), 2 ** 32,
      Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER,
      0n, 5n, -5n, 9223372036854775807n, -9223372036854775808n, 9007199254740993n,
    ];
    for (const n of cases) assert.deepEqual(written((w) => w.int(n)), enc.int(n), `int ${n}`);
  });

  it('bulkInt and bulkLatin1Range write what bulkLatin1 of the text would', () => {
    const cases = [0, 1, 9, 10, 99, 100, 127, 128, -1, -9, -10, 4095, -4096, 32767, -32768, 8388607, -8388608,
      123456789, 999999999, -99999999, 1000000000, -999999999, -1000000000, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 32,
      99999999999999, 100000000000000, 999999999999999, 1000000000000000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    for (const n of cases) assert.deepEqual(written((w) => w.bulkInt(n)), enc.bulkLatin1(String(n)), `bulkInt ${n}`);
    // Several in a row (positions carried through the slab), then a range of each length.
    assert.deepEqual(written((w) => { for (const n of cases) w.bulkInt(n); }), Buffer.concat(cases.map((n) => enc.bulkLatin1(String(n)))));
    const s = 'x'.repeat(10) + Array.from({ length: 200 }, (_, i) => String.fromCharCode((i * 7) & 255)).join('');
    for (const [a, e] of [[0, 0], [10, 11], [10, 74], [10, 75], [3, 210]]) {
      assert.deepEqual(written((w) => w.bulkLatin1Range(s, a, e)), enc.bulkLatin1(s.substring(a, e)), `range ${a}-${e}`);
    }
  });

  it('bulk strings of every size class', () => {
    for (const n of [0, 1, 9, 10, 99, 100, 16383, 16384, 16385, 65536, 300 * 1024]) {
      const v = Buffer.alloc(n);
      for (let i = 0; i < n; i++) v[i] = (i * 31 + n) & 0xff;
      assert.deepEqual(written((w) => w.bulk(v)), enc.bulk(v), `bulk of ${n} bytes`);
    }
    const bin = Buffer.from([0, 13, 10, 255, 36, 42]);
    assert.deepEqual(written((w) => w.bulk(bin)), Buffer.from('$6\r\n\x00\r\n\xff$*\r\n', 'latin1'));
  });

  it('bulkBytes writes any byte range of its source, from any offset, across slab roll-overs', () => {
    // Two sources taken in turn (the word copy keeps a view of the last one), values with NaN
    // bit patterns (a float copy could change them), lengths around each copy method's bounds.
    const srcs = [Buffer.alloc(4096), Buffer.alloc(4096).subarray(3)];
    for (const b of srcs) for (let i = 0; i < b.length; i++) b[i] = i % 7 === 0 ? 0xff : (i * 37 + 11) & 0xff;
    const w = new RespWriter();
    const sock = new FakeSocket();
    const want: Buffer[] = [];
    for (let round = 0; round < 40; round++) {
      for (const n of [0, 1, 7, 8, 31, 32, 33, 39, 40, 41, 100, 255, 256, 257, 1000]) {
        const b = srcs[(round + n) & 1];
        const s = (round * 131 + n * 17) % (b.length - n);
        w.bulkBytes(b, s, s + n);
        want.push(enc.bulk(Buffer.from(b.subarray(s, s + n))));
      }
      w.bulkLatin1('x'.repeat(8000)); // roll-overs of the slab now and then
      want.push(enc.bulkLatin1('x'.repeat(8000)));
      if (round % 3 === 0) w.flush(sock);
    }
    w.flush(sock);
    sameBytes(sock.bytes(), Buffer.concat(want), 'bulkBytes stream');
  });

  it('latin1 keys keep one byte per char and UTF-8 text is encoded', () => {
    let all = '';
    for (let i = 0; i < 256; i++) all += String.fromCharCode(i);
    assert.deepEqual(written((w) => w.bulkLatin1(all)), enc.bulkLatin1(all));
    assert.deepEqual(written((w) => w.bulkLatin1('')), Buffer.from('$0\r\n\r\n'));
    const text = 'héllo wörld ✓ 𝄞';
    assert.deepEqual(written((w) => w.bulkText(text)), enc.bulkText(text));
    assert.equal(written((w) => w.bulkText('✓')).toString('latin1', 0, 4), '$3\r\n');
  });

  it('nil, arrays and nested arrays', () => {
    assert.deepEqual(written((w) => w.nil()), Buffer.from('$-1\r\n'));
    assert.deepEqual(written((w) => w.nilArray()), Buffer.from('*-1\r\n'));
    assert.deepEqual(written((w) => w.array(0)), Buffer.from('*0\r\n'));
    assert.deepEqual(written((w) => w.array(9)), Buffer.from('*9\r\n'));
    assert.deepEqual(written((w) => w.array(10)), Buffer.from('*10\r\n'));
    assert.deepEqual(written((w) => w.array(1234567)), Buffer.from('*1234567\r\n'));
    for (let n = 0; n <= 1100; n++) assert.deepEqual(written((w) => w.array(n)), Buffer.from(`*${n}\r\n`), `array(${n})`);
    const nested = written((w) => {
      w.array(3); w.int(1); w.array(2); w.bulkLatin1('a'); w.nil(); w.simple('x');
    });
    assert.equal(nested.toString('latin1'), '*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n+x\r\n');
  });

  it('RESP3 types, and their RESP2 rendering (the same writer before HELLO 3)', () => {
    const all = (w: RespWriter) => {
      w.map(2); w.set(1); w.push(3); w.double(1.5); w.double(-0); w.double(Infinity); w.double('13.25');
      w.bool(true); w.bool(false); w.nil(); w.nilArray(); w.verbatim('héllo'); w.verbatim(Buffer.from([0xff]), 'mkd');
      w.bigNumber('123456789012345678901234567890'); w.pairs(2); w.pair(); w.assoc(1); w.assocItem();
      const a = w.attribute(1);
      w.int(a ? 1 : 0);
    };
    const resp3 = written((w) => { w.resp3 = true; all(w); });
    assert.equal(resp3.toString('latin1'), '%2\r\n~1\r\n>3\r\n,1.5\r\n,-0\r\n,inf\r\n,13.25\r\n#t\r\n#f\r\n_\r\n_\r\n'
      + '=10\r\ntxt:h\xc3\xa9llo\r\n=5\r\nmkd:\xff\r\n(123456789012345678901234567890\r\n*2\r\n*2\r\n%1\r\n|1\r\n:1\r\n');
    const resp2 = written(all);
    assert.equal(resp2.toString('latin1'), '*4\r\n*1\r\n*3\r\n$3\r\n1.5\r\n$2\r\n-0\r\n$3\r\ninf\r\n$5\r\n13.25\r\n:1\r\n:0\r\n'
      + '$-1\r\n*-1\r\n$6\r\nh\xc3\xa9llo\r\n$1\r\n\xff\r\n$30\r\n123456789012345678901234567890\r\n*4\r\n*1\r\n*2\r\n:0\r\n');
  });
});

describe('RespWriter output and the socket', () => {
  it('big values are sent by reference, small ones are copied', () => {
    const sock = new FakeSocket();
    const w = new RespWriter();
    const big = Buffer.alloc(1024 * 1024, 0x61);
    const small = Buffer.alloc(100, 0x62);
    w.array(2);
    w.bulk(big);
    w.bulk(small);
    w.flush(sock);
    assert.ok(sock.refs.includes(big), 'the 1 MB value itself is handed to the socket');
    assert.ok(!sock.refs.includes(small), 'a 100-byte value is copied into the slab');
    sameBytes(sock.bytes(), Buffer.concat([enc.array(2), enc.bulk(big), enc.bulk(small)]), "big value stream");
  });

  it('a synchronous flush lets the next replies reuse the same slab bytes', () => {
    const sock = new FakeSocket();
    const w = new RespWriter();
    w.int(12345678);
    w.flush(sock);
    w.int(87654321);
    w.flush(sock);
    const [a, b] = sock.refs;
    assert.equal(a.buffer, b.buffer);
    assert.equal(a.byteOffset, b.byteOffset, 'rewound: same region reused');
    assert.equal(sock.bytes().toString(), ':12345678\r\n:87654321\r\n');
  });

  it('bytes held by an asynchronous write are never overwritten', () => {
    const sock = new FakeSocket();
    sock.mode = 'async';
    const w = new RespWriter();
    const expect: Buffer[] = [];
    for (let i = 0; i < 2000; i++) {
      const s = `reply-${i}-${'x'.repeat(i % 50)}`;
      w.simple(s);
      expect.push(enc.simple(s));
      assert.equal(w.flush(sock), false, 'async write reports backpressure');
    }
    const refs = sock.refs;
    for (let i = 1; i < refs.length; i++) {
      if (refs[i].buffer === refs[i - 1].buffer) {
        assert.ok(refs[i].byteOffset >= refs[i - 1].byteOffset + refs[i - 1].length, 'regions do not overlap');
      }
    }
    sameBytes(sock.bytes(), Buffer.concat(expect), "async stream");
  });

  it('flush returns true when nothing is pending and pending tracks output', () => {
    const sock = new FakeSocket();
    const w = new RespWriter();
    assert.equal(w.pending, false);
    assert.equal(w.flush(sock), true);
    assert.equal(sock.refs.length, 0);
    w.ok();
    assert.equal(w.pending, true);
    w.flush(sock);
    assert.equal(w.pending, false);
  });

  it('interleaved writers keep their own order', () => {
    const a = new RespWriter();
    const b = new RespWriter();
    const sa = new FakeSocket();
    const sb = new FakeSocket();
    a.simple('a1');
    b.simple('b1');
    a.simple('a2');
    b.int(2);
    b.bulk(Buffer.alloc(20000, 0x42)); // by reference, between slab parts
    a.array(2);
    b.simple('b3');
    a.int(7);
    a.nil();
    a.flush(sa);
    b.flush(sb);
    assert.equal(sa.bytes().toString(), '+a1\r\n+a2\r\n*2\r\n:7\r\n$-1\r\n');
    assert.deepEqual(sb.bytes(), Buffer.concat([enc.simple('b1'), enc.int(2), enc.bulk(Buffer.alloc(20000, 0x42)), enc.simple('b3')]));
  });

  it('batched replies: each sealed by the next writer, flushed as one write, never overwritten', () => {
    // connection.ts deferFlush at -P 1: every connection writes one reply, then each flushes.
    const ws = Array.from({ length: 5 }, () => new RespWriter());
    const socks = ws.map(() => new FakeSocket());
    for (let round = 0; round < 3; round++) {
      ws.forEach((w, i) => w.bulkLatin1(`r${round}w${i}`.repeat(20)));
      assert.equal(ws[0].queuedParts, 1, 'a sealed reply counts as one queued part');
      assert.equal(ws[0].pendingBytes, enc.bulkLatin1(`r${round}w0`.repeat(20)).length);
      assert.equal(ws[0].openBytes, 0);
      ws.forEach((w, i) => {
        socks[i].mode = round === 1 ? 'async' : 'sync'; // held by reference in round 1
        const before = socks[i].refs.length;
        assert.equal(w.flush(socks[i]), round !== 1);
        assert.equal(socks[i].refs.length, before + 1, 'one write per batched reply');
        assert.equal(w.pending, false);
        assert.equal(w.pendingBytes, 0);
      });
    }
    // Output behind a sealed reply (more replies, a value sent by reference) keeps its order.
    ws[0].simple('x1');
    ws[1].simple('y');
    ws[0].simple('x2');
    ws[0].bulk(Buffer.alloc(20000, 0x41));
    ws[1].simple('y2');
    ws[0].int(5);
    ws.forEach((w, i) => { socks[i].mode = 'sync'; w.flush(socks[i]); });
    ws.forEach((_, i) => {
      const want = [0, 1, 2].map((r) => enc.bulkLatin1(`r${r}w${i}`.repeat(20)));
      if (i === 0) want.push(enc.simple('x1'), enc.simple('x2'), enc.bulk(Buffer.alloc(20000, 0x41)), enc.int(5));
      if (i === 1) want.push(enc.simple('y'), enc.simple('y2'));
      sameBytes(socks[i].bytes(), Buffer.concat(want), `writer ${i}`);
    });
    // A sealed reply that is discarded is not sent.
    ws[2].simple('gone');
    ws[3].simple('z');
    ws[2].discard();
    assert.equal(ws[2].pending, false);
    assert.equal(ws[2].queuedParts, 0);
    assert.equal(ws[2].flush(socks[2]), true);
    ws[3].flush(socks[3]);
    assert.ok(!socks[2].bytes().includes('gone'));
  });

  it('batched replies reuse the slab from its start once every region was flushed', () => {
    // Earlier tests left bytes of the current slab held by 'async' sockets: roll over to a new
    // slab first (20 x 14 KB through a synchronous socket, more than one 256 KB slab).
    const filler = new RespWriter();
    const fs = new FakeSocket();
    for (let i = 0; i < 20; i++) {
      filler.bulkLatin1('f'.repeat(14000));
      filler.bulkLatin1('g'.repeat(100)); // not the tail alone: the region moves on
    }
    filler.flush(fs);
    const ws = Array.from({ length: 4 }, () => new RespWriter());
    const socks = ws.map(() => new FakeSocket());
    const offsets: number[][] = [];
    for (let round = 0; round < 3; round++) {
      ws.forEach((w, i) => w.bulkLatin1(`q${round}w${i}`.repeat(10)));
      ws.forEach((w, i) => w.flush(socks[i]));
      offsets.push(ws.map((_, i) => socks[i].refs[round].byteOffset));
    }
    assert.deepEqual(offsets[1], offsets[0], 'second batch at the first one\'s offsets');
    assert.deepEqual(offsets[2], offsets[0]);
    ws.forEach((_, i) => assert.equal(socks[i].refs[2], socks[i].refs[1], 'the same bytes go out through the same view'));
    // A sealed region not yet flushed (writer 0, held back) keeps the slab from starting over.
    ws.forEach((w, i) => w.simple(`s${i}`));
    ws.forEach((w, i) => { if (i !== 0) w.flush(socks[i]); });
    ws[1].simple('after');
    ws[1].flush(socks[1]);
    ws[0].flush(socks[0]);
    // A sealed region whose socket keeps it (an asynchronous write) is not written over by
    // the next batch, though every region was flushed.
    socks[0].mode = 'async';
    ws.forEach((w, i) => w.bulkLatin1(`h${i}`.repeat(10)));
    ws.forEach((w, i) => w.flush(socks[i]));
    ws.forEach((w, i) => w.bulkLatin1(`k${i}`.repeat(10)));
    ws.forEach((w, i) => w.flush(socks[i]));
    socks[0].mode = 'sync';
    ws.forEach((_, i) => {
      const want = [0, 1, 2].map((r) => enc.bulkLatin1(`q${r}w${i}`.repeat(10)));
      want.push(enc.simple(`s${i}`));
      if (i === 1) want.push(enc.simple('after'));
      want.push(enc.bulkLatin1(`h${i}`.repeat(10)), enc.bulkLatin1(`k${i}`.repeat(10)));
      sameBytes(socks[i].bytes(), Buffer.concat(want), `writer ${i}`);
    });
  });

  it('discard drops only this writer\'s unflushed output', () => {
    const a = new RespWriter();
    const b = new RespWriter();
    a.simple('keep-a');
    const s0 = new FakeSocket();
    a.flush(s0);
    a.simple('drop-1');
    b.simple('b');
    a.simple('drop-2');
    a.discard();
    assert.equal(a.pending, false);
    assert.equal(a.pendingBytes, 0);
    a.simple('after');
    b.simple('b2');
    const sa = new FakeSocket();
    const sb = new FakeSocket();
    a.flush(sa);
    b.flush(sb);
    assert.equal(s0.bytes().toString(), '+keep-a\r\n');
    assert.equal(sa.bytes().toString(), '+after\r\n');
    assert.equal(sb.bytes().toString(), '+b\r\n+b2\r\n');
  });

  it('a writer that fills the slab keeps every byte (slab roll-over)', () => {
    // 256 KB slab: 40 values of 10 KB force several roll-overs within one batch.
    const w = new RespWriter();
    const sock = new FakeSocket();
    const expect: Buffer[] = [];
    for (let i = 0; i < 100; i++) {
      const v = Buffer.alloc(10000, i & 0xff);
      w.bulk(v);
      w.int(i);
      expect.push(enc.bulk(v), enc.int(i));
    }
    w.flush(sock);
    sameBytes(sock.bytes(), Buffer.concat(expect), 'roll-over stream');
  });

  it('random interleavings of writers, flushes and socket modes produce exact streams', () => {
    const seed = Number(process.env.WRITER_SEED ?? Date.now() % 1e9);
    const rnd = prng(seed);
    const n = 4;
    const writers = Array.from({ length: n }, () => new RespWriter());
    const socks = Array.from({ length: n }, () => new FakeSocket());
    const expect: Buffer[][] = Array.from({ length: n }, () => []);
    const pick = (k: number) => Math.floor(rnd() * k);
    for (let step = 0; step < 30000; step++) {
      const i = pick(n);
      const w = writers[i];
      const e = expect[i];
      const op = pick(16);
      switch (op) {
        case 0: w.ok(); e.push(enc.ok()); break;
        case 1: { const s = 'st' + pick(1e6); w.simple(s); e.push(enc.simple(s)); break; }
        case 2: { const s = 'ERR e\r\n' + pick(1e3); w.error(s); e.push(enc.error(s)); break; }
        case 3: { const v = pick(20000) - 5000; w.int(v); e.push(enc.int(v)); break; }
        case 4: { const v = BigInt(pick(1e9)) * 10000000000n - 4611686018427387904n; w.int(v); e.push(enc.int(v)); break; }
        case 5: case 6: {
          const len = rnd() < 0.1 ? 16384 + pick(40000) : rnd() < 0.3 ? 10000 + pick(6384) : pick(300);
          const v = Buffer.alloc(len, pick(256));
          w.bulk(v);
          e.push(enc.bulk(v));
          break;
        }
        case 7: { const s = String.fromCharCode(pick(256)).repeat(pick(100)); w.bulkLatin1(s); e.push(enc.bulkLatin1(s)); break; }
        case 8: { const s = 'é✓'.repeat(pick(50)); w.bulkText(s); e.push(enc.bulkText(s)); break; }
        case 9: w.nil(); e.push(enc.nil()); break;
        case 10: { const k = pick(100); w.array(k); e.push(enc.array(k)); break; }
        case 11: w.nilArray(); e.push(enc.nilArray()); break;
        case 12: {
          socks[i].mode = rnd() < 0.5 ? 'sync' : 'async';
          w.flush(socks[i]);
          break;
        }
        case 13: socks[pick(n)].send(); break;
        case 14: { // discard: what the socket was given stays, the rest is dropped
          if (rnd() > 0.1) break;
          w.discard();
          e.length = 0;
          e.push(socks[i].bytes());
          break;
        }
        case 15: { // take: what was not flushed yet comes out as a copy
          if (rnd() > 0.1) break;
          const got = socks[i].bytes();
          sameBytes(Buffer.concat([got, w.take()]), Buffer.concat(e), `take, writer ${i}, seed ${seed}`);
          e.length = 0;
          e.push(got);
          break;
        }
      }
    }
    for (let i = 0; i < n; i++) {
      socks[i].mode = 'sync';
      writers[i].flush(socks[i]);
      sameBytes(socks[i].bytes(), Buffer.concat(expect[i]), `writer ${i}, seed ${seed} (WRITER_SEED=${seed} to replay)`);
    }
  });
});
