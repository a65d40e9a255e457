/**
 * native/lzf.wasm (src/rdb/lzf.ts, crc64.ts) against oracles: LZF against the JavaScript
 * implementation it replaced (test/rdb/lzf-oracle.ts, byte-identical to Redis's lzf_c.c and
 * lzf_d.c as test/rdb/lzf.test.ts showed against redis-server), in both compressor variants,
 * at every output limit that matters, on intact and corrupted input; CRC-64 against a bit-by-bit
 * BigInt reference. Inputs past the fixed instance's 128 KB go to the big-job instance.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lzfCheck, lzfInto, lzfCompress, lzfCompressLatin1, lzfDecompress, lzfDecompressAt, lzfMem, lzfOut, fixed } from '../../dist/rdb/lzf.js';
import { Crc64, crc64 } from '../../dist/rdb/crc64.js';
import * as oracle from './lzf-oracle.js';
import { xorshiftBytes } from './fixtures.js';

/** Deterministic bytes from an alphabet of `alpha` symbols, partly repetitive. */
function bytes(n: number, alpha: number, seed: number, repeat: boolean): Buffer {
  const b = xorshiftBytes(n, alpha, seed);
  if (repeat) for (let j = 16; j < n; j++) if ((b[j] & 3) === 0) b[j] = b[j - 1 - (b[j] % 9)];
  return b;
}

function inputs(): Buffer[] {
  const out: Buffer[] = [];
  for (let n = 1; n <= 40; n++) out.push(Buffer.alloc(n, 97), bytes(n, 3, n, false));
  for (let i = 0; i < 400; i++) {
    const n = 1 + ((i * 7919) % 6000);
    out.push(bytes(n, [1, 2, 4, 16, 64, 256][i % 6], i + 11, i % 3 !== 0));
  }
  // Long matches (MAX_REF), offsets around MAX_OFF, and inputs for the big-job instance.
  out.push(Buffer.alloc(5000, 0x61), Buffer.from('abc'.repeat(3000)));
  for (const gap of [8190, 8191, 8192, 8193]) {
    const head = bytes(40, 26, gap, false);
    out.push(Buffer.concat([head, bytes(gap - 40, 256, 7, false), head]));
  }
  // Match extension: a repeat of 3-40 bytes ending 0-20 bytes before the input's end, so the
  // match stops at a mismatch or at maxlen on either side of lzf_c.c's 16 unrolled compares.
  for (let m = 3; m <= 40; m++) {
    for (let tail = 0; tail <= 20; tail += m % 2 === 0 ? 1 : 3) {
      const a = bytes(m, 256, m * 31 + tail, false);
      out.push(Buffer.concat([a, Buffer.from([0, 1, 2]), a, bytes(tail, 256, tail + 5, false)]));
    }
  }
  // A 100-field hash's listpack-like run of short repeats (what DUMP compresses most).
  out.push(Buffer.from(Array.from({ length: 100 }, (_, i) => `\x88field:${i}\x08\x88value:${i}\x08`).join(''), 'latin1'));
  out.push(bytes(200_000, 16, 5, true), bytes(300_000, 256, 6, false), Buffer.alloc(1 << 20, 7));
  return out;
}

const result = (n: number): Buffer | null => (n < 0 ? null : Buffer.from(lzfMem().subarray(lzfOut, lzfOut + n)));

describe('native LZF against the JavaScript oracle', () => {
  const all = inputs();

  it('compresses to the same bytes (both variants, every output limit that matters)', () => {
    for (const bundled of [false, true]) {
      for (const inp of all) {
        const want = oracle.lzfCompress(inp, inp.length + 64, bundled);
        const wl = want === null ? -1 : want.length;
        for (const outLen of [inp.length - 4, inp.length + 64, wl, wl - 1, 1]) {
          if (outLen <= 0) continue;
          const w = oracle.lzfCompress(inp, outLen, bundled);
          const got = result(lzfCompress(inp, inp.length, outLen, bundled));
          assert.deepEqual(got, w, `${inp.length} bytes, outLen ${outLen}, bundled ${bundled}`);
        }
      }
    }
  });

  it('compresses a latin1 string and a prefix of a larger buffer like the bytes', () => {
    for (const inp of all.slice(0, 300)) {
      const want = oracle.lzfCompress(inp, inp.length - 4 > 0 ? inp.length - 4 : 1, false);
      assert.deepEqual(result(lzfCompressLatin1(inp.toString('latin1'), inp.length, inp.length - 4 > 0 ? inp.length - 4 : 1, false)), want);
      const padded = Buffer.concat([inp, Buffer.from('tail bytes after the input')]);
      assert.deepEqual(result(lzfCompress(padded, inp.length, inp.length - 4 > 0 ? inp.length - 4 : 1, false)), want);
    }
  });

  it('decompresses intact and corrupted input as the oracle does', () => {
    let refused = 0;
    let x = 12345;
    const rnd = (n: number): number => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    for (const inp of all) {
      const c = oracle.lzfCompress(inp, inp.length + 64, false);
      if (c === null) continue;
      const got = lzfDecompress(c, 0, c.length, inp.length);
      assert.ok(got !== null && got.equals(inp), `${inp.length} bytes: intact`);
      // In the middle of a larger buffer.
      const framed = Buffer.concat([Buffer.from('head'), c, Buffer.from('tail')]);
      assert.ok(lzfDecompress(framed, 4, 4 + c.length, inp.length)?.equals(inp));
      assert.ok(lzfCheck(framed, 4, 4 + c.length, inp.length), `${inp.length} bytes: lzfCheck, intact`);
      // The RDB import's second decompression, into a record in the middle of a chunk.
      const into = (b: Buffer, n: number): Buffer | null => {
        const out = Buffer.alloc(n + 16, 0xee);
        if (!lzfInto(b, 0, b.length, out, 8, n)) return null;
        assert.ok(out.subarray(0, 8).every((x) => x === 0xee) && out.subarray(8 + n).every((x) => x === 0xee), 'lzfInto wrote outside its range');
        return out.subarray(8, 8 + n);
      };
      assert.ok(into(c, inp.length)?.equals(inp), `${inp.length} bytes: lzfInto, intact`);
      const cases: [Buffer, number][] = [
        [c, inp.length - 1],
        [c, inp.length + 1],
        [c.subarray(0, c.length - 1), inp.length],
        [c.subarray(0, rnd(c.length)), inp.length],
      ];
      for (let k = 0; k < 4; k++) {
        const bad = Buffer.from(c);
        bad[rnd(bad.length)] ^= 1 << rnd(8);
        cases.push([bad, inp.length]);
      }
      for (const [b, n] of cases) {
        const w = oracle.lzfDecompress(b, 0, b.length, n);
        const g = lzfDecompress(b, 0, b.length, n);
        if (w === null) refused++;
        assert.deepEqual(g, w, `${inp.length} bytes, corrupted input of ${b.length} into ${n}`);
        // The RDB parse's check (no output) gives the decompressor's answer.
        assert.equal(lzfCheck(b, 0, b.length, n), w !== null, `lzfCheck: ${inp.length} bytes, input of ${b.length} into ${n}`);
        if (n >= 0) assert.deepEqual(into(b, n), w, `lzfInto: ${inp.length} bytes, input of ${b.length} into ${n}`);
      }
    }
    assert.ok(refused > 100, `${refused} refusals`);
  });

  it('refuses an output length the input cannot expand to, without making memory for it', () => {
    const before = fixed.mem.length;
    const c = Buffer.from([0xe0, 0xff, 0x00]);
    assert.equal(lzfDecompressAt(c, 0, 3, 2 ** 31), false);
    assert.equal(lzfDecompressAt(c, 0, 3, Number.MAX_SAFE_INTEGER), false);
    assert.equal(lzfDecompressAt(c, 0, 3, -1), false);
    assert.equal(lzfDecompressAt(c, 0, 3, NaN), false);
    for (const n of [2 ** 31, Number.MAX_SAFE_INTEGER, -1, NaN]) assert.equal(lzfCheck(c, 0, 3, n), false);
    // Within what 20 MB could expand to, but past the longest string: refused before any memory.
    const big = Buffer.alloc(20 * 1024 * 1024);
    assert.equal(lzfDecompressAt(big, 0, big.length, 1024 * 1024 * 1024 + 1), false);
    assert.equal(fixed.mem.length, before);
  });
});

/** crc64.c bit by bit, in BigInt. */
function crcRef(b: Uint8Array): bigint {
  const POLY = 0x95ac9329ac4bc9b5n;
  let crc = 0n;
  for (const byte of b) {
    crc ^= BigInt(byte);
    for (let i = 0; i < 8; i++) crc = crc & 1n ? (crc >> 1n) ^ POLY : crc >> 1n;
  }
  return crc;
}

describe('native CRC-64 against a bit-by-bit reference', () => {
  it('has the check value and matches at every length and split', () => {
    assert.equal(crc64(Buffer.from('123456789')).value, 0xe9c6d914c4b8d9can);
    for (let n = 0; n < 80; n++) {
      const b = bytes(n, 256, n + 3, false);
      const want = crcRef(b);
      assert.equal(crc64(b).value, want, `${n} bytes`);
      for (let cut = 0; cut <= n; cut += 7) assert.equal(new Crc64().update(b, 0, cut).update(b, cut, n).value, want);
    }
  });

  it('matches past the staging chunk and for bytes already in the module memory', () => {
    const b = bytes(200_000, 256, 9, false);
    const want = crcRef(b);
    assert.equal(crc64(b).value, want);
    assert.equal(new Crc64().update(b, 0, 70_001).update(b, 70_001).value, want);
    const small = b.subarray(0, 1000);
    small.copy(fixed.mem, fixed.b);
    assert.equal(crc64(fixed.mem, fixed.b, fixed.b + 1000).value, crcRef(small));
    const out = Buffer.alloc(8);
    crc64(small).writeLE(out, 0);
    assert.equal(out.readBigUInt64LE(0), crcRef(small));
    assert.ok(crc64(small).matchesLE(out, 0));
  });
});
