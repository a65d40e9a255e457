/**
 * LZF (src/rdb/lzf.ts) against redis-server 7.0 (Debian's, liblzf 3.6): DUMP of strings made
 * to reach the compressor's edge cases must give Redis's bytes, and every payload must
 * decompress back to the string. The edges: matches that run into the last 19 bytes (lzf_c.c's
 * unrolled compare looks past maxlen there), matches longer than MAX_REF (264), offsets around
 * MAX_OFF (8192), literal runs of 32 and more, output that just does or does not fit.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { lzfDecompress } from '../../dist/rdb/lzf.js';
import { xorshiftBytes } from './fixtures.js';

/** Deterministic bytes from an alphabet of `alpha` symbols from 'a'. */
const bytes = (n: number, alpha: number, seed: number): Buffer => xorshiftBytes(n, alpha, seed, 97);

function corpus(): Buffer[] {
  const out: Buffer[] = [];
  for (let n = 21; n <= 300; n++) out.push(Buffer.from('a'.repeat(n)));
  for (let k = 18; k <= 40; k++) for (let tail = 0; tail <= 20; tail++) out.push(Buffer.from(`x${'ab'.repeat(k)}${'q'.repeat(tail)}`));
  out.push(Buffer.from('abc'.repeat(400)));
  for (const gap of [8180, 8190, 8191, 8192, 8193, 8200]) {
    const head = bytes(40, 26, gap);
    out.push(Buffer.concat([head, bytes(gap - 40, 255, 7), head]));
  }
  for (let i = 0; i < 120; i++) {
    const n = 21 + ((i * 97) % 3000);
    const b = bytes(n, 1 + (i % 12) * 20, i + 1);
    // Partly repetitive: copy earlier bytes at short distances.
    if (i % 2 === 0) for (let j = 16; j < n; j++) if ((b[j] & 3) === 0) b[j] = b[j - 1 - (b[j] % 9)];
    out.push(b);
  }
  return out;
}

let ours: Proc;
let redis: Proc;
let o: Redis;
let r: Redis;

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
  o = new Redis(ours.port, { lazyConnect: true, maxRetriesPerRequest: 0 });
  r = new Redis(redis.port, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await Promise.all([o.connect(), r.connect()]);
});
after(async () => {
  o?.disconnect();
  r?.disconnect();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

describe('LZF: DUMP of strings at the compressor edges, against redis-server', () => {
  it('gives Redis bytes, and the payloads decompress to the string', async () => {
    const values = corpus();
    const po = o.pipeline();
    const pr = r.pipeline();
    values.forEach((v, i) => {
      po.set(`k${i}`, v);
      pr.set(`k${i}`, v);
    });
    await Promise.all([po.exec(), pr.exec()]);
    let compressed = 0;
    for (let i = 0; i < values.length; i++) {
      const [a, b] = await Promise.all([o.dumpBuffer(`k${i}`), r.dumpBuffer(`k${i}`)]);
      assert.ok(a.equals(b), `value ${i} (${values[i].length} bytes): ours ${a.subarray(0, 24).toString('hex')}…, redis ${b.subarray(0, 24).toString('hex')}…`);
      if (b[1] !== 0xc3) continue;
      // type 0, 0xc3, compressed length, length, data, version, CRC.
      compressed++;
      let p = 2;
      const len = (): number => {
        const c = b[p];
        if (c >> 6 === 0) return (p++, c & 0x3f);
        if (c >> 6 === 1) return ((p += 2), ((c & 0x3f) << 8) | b[p - 1]);
        p += 5;
        return b.readUInt32BE(p - 4);
      };
      const clen = len();
      const n = len();
      const back = lzfDecompress(b, p, p + clen, n);
      assert.ok(back !== null && back.equals(values[i]), `value ${i}: decompression`);
    }
    assert.ok(compressed > values.length / 2, `${compressed} of ${values.length} compressed`);
  });
});
