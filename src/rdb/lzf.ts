/**
 * LZF as Redis uses it for RDB strings. Two compressors produce different (equally valid)
 * bytes, and Redis builds ship either:
 *  - liblzf 3.6 (the default here): what Debian's and Ubuntu's redis-server packages link
 *    (the reference server of our tests);
 *  - Redis's bundled deps/lzf (`RDB_LZF=bundled`): official builds and Docker images. It
 *    differs in two places: it never starts a match in the last 4 input bytes, and it tests
 *    for output space after closing the literal run.
 * Both follow lzf_c.c step by step (HLOG 16, VERY_FAST, shift-based hash). One difference
 * remains with both: lzf_c.c leaves its hash table uninitialised (INIT_HTAB 0), so Redis may
 * now and then find a match through a stale slot; we start from an empty table (INIT_HTAB 1),
 * which is Redis's output whenever no stale slot points into the current input.
 */
const HLOG = 16;
const HSIZE = 1 << HLOG;
const MAX_LIT = 1 << 5;
const MAX_OFF = 1 << 13;
const MAX_REF = (1 << 8) + (1 << 3);

/** Which compressor's output to reproduce (see the header comment). */
export const LZF_BUNDLED = process.env.RDB_LZF === 'bundled';

/**
 * Slot -> base + input position + 1, valid only when above this call's base: a fresh (empty)
 * table per call without clearing 64K slots each time (perf: the clearing cost more than
 * compressing a short string), and without a second array of generation stamps to read.
 */
const htab = new Int32Array(HSIZE);
let base = 0;

/**
 * lzf_compress(in, out_len): the compressed bytes, or null when they would not fit in
 * `outLen` bytes (Redis then stores the string uncompressed).
 */
export function lzfCompress(inp: Uint8Array, outLen: number, bundled = LZF_BUNDLED): Buffer | null {
  if (outLen <= 0) return null;
  const out = Buffer.allocUnsafe(outLen);
  const n = lzfCompressInto(inp, inp.length, outLen, out, bundled);
  return n < 0 ? null : out.subarray(0, n);
}

/**
 * lzfCompress of inp[0, inLen) into out[0, outLen) (out may be a reused scratch of at least
 * outLen bytes): the compressed length, or -1 when it would not fit (perf: no allocation, for
 * the RDB writer's millions of strings).
 */
export function lzfCompressInto(inp: Uint8Array, inLen: number, outLen: number, out: Uint8Array, bundled = LZF_BUNDLED): number {
  if (inLen === 0 || outLen <= 0) return -1;
  if (base + inLen + 2 > 0x7fffffff) {
    htab.fill(0);
    base = 0;
  }
  const b0 = base;
  base += inLen + 1;
  let ip = 0;
  let op = 0;
  const outEnd = outLen;
  let lit = 0;
  op++; // start run
  let hval = ((inp[0] << 8) | inp[1]) >>> 0;
  while (ip < inLen - 2) {
    hval = ((hval << 8) | inp[ip + 2]) >>> 0;
    const slot = (((hval >>> (24 - HLOG)) - Math.imul(hval, 5)) & (HSIZE - 1));
    const ref = htab[slot] - b0 - 1; // negative: empty, or from an earlier call
    htab[slot] = b0 + ip + 1;
    let off = 0;
    if (
      ref > 0 && ref < ip &&
      (off = ip - ref - 1) < MAX_OFF &&
      (!bundled || ip + 4 < inLen) &&
      inp[ref] === inp[ip] && inp[ref + 1] === inp[ip + 1] && inp[ref + 2] === inp[ip + 2]
    ) {
      let len = 2;
      let maxlen = inLen - ip - len;
      if (maxlen > MAX_REF) maxlen = MAX_REF;
      if (!bundled && op - (lit === 0 ? 1 : 0) + 3 + 1 >= outEnd) return -1;
      out[op - lit - 1] = lit - 1; // stop run
      if (lit === 0) op--; // undo run if length is zero
      if (bundled && op + 3 + 1 >= outEnd) return -1;
      // lzf_c.c's unrolled loop compares 16 positions before it looks at maxlen (so a match
      // may run past maxlen when fewer than 19 bytes remain): kept as is for identical output.
      let more = true;
      if (maxlen > 16) {
        for (let k = 0; k < 16; k++) {
          len++;
          if (inp[ref + len] !== inp[ip + len]) {
            more = false;
            break;
          }
        }
      }
      if (more) {
        do len++;
        while (len < maxlen && inp[ref + len] === inp[ip + len]);
      }
      len -= 2; // octets - 1
      ip++;
      if (len < 7) {
        out[op++] = (off >>> 8) + (len << 5);
      } else {
        out[op++] = (off >>> 8) + (7 << 5);
        out[op++] = len - 7;
      }
      out[op++] = off & 0xff;
      lit = 0;
      op++; // start run
      ip += len + 1;
      if (ip >= inLen - 2) break;
      // VERY_FAST: hash the last two positions of the match.
      ip -= 2;
      hval = ((inp[ip] << 8) | inp[ip + 1]) >>> 0;
      hval = ((hval << 8) | inp[ip + 2]) >>> 0;
      let h = ((hval >>> (24 - HLOG)) - Math.imul(hval, 5)) & (HSIZE - 1);
      htab[h] = b0 + ip + 1;
      ip++;
      hval = ((hval << 8) | inp[ip + 2]) >>> 0;
      h = ((hval >>> (24 - HLOG)) - Math.imul(hval, 5)) & (HSIZE - 1);
      htab[h] = b0 + ip + 1;
      ip++;
    } else {
      if (op >= outEnd) return -1;
      lit++;
      out[op++] = inp[ip++];
      if (lit === MAX_LIT) {
        out[op - lit - 1] = lit - 1;
        lit = 0;
        op++;
      }
    }
  }
  if (op + 3 > outEnd) return -1;
  while (ip < inLen) {
    lit++;
    out[op++] = inp[ip++];
    if (lit === MAX_LIT) {
      out[op - lit - 1] = lit - 1;
      lit = 0;
      op++;
    }
  }
  out[op - lit - 1] = lit - 1; // end run
  if (lit === 0) op--;
  return op;
}

/**
 * lzf_decompress with CHECK_INPUT: exactly `outLen` bytes from `inp[s, e)`, or null when the
 * input is corrupt (a reference before the output start, a run past either end) or does not
 * expand to exactly outLen bytes. The output is allocated from outLen, which the caller must
 * have bounded (RDB strings: at most the limit on a string value). `into`: a scratch buffer to
 * decompress into when it is big enough (the caller copies the result out before reusing it).
 */
export function lzfDecompress(inp: Uint8Array, s: number, e: number, outLen: number, into?: Buffer): Buffer | null {
  const out = into !== undefined && into.length >= outLen ? into : Buffer.allocUnsafe(outLen);
  let ip = s;
  let op = 0;
  while (ip < e) {
    let ctrl = inp[ip++];
    if (ctrl < 32) {
      ctrl++; // literal run
      if (op + ctrl > outLen || ip + ctrl > e) return null;
      for (let i = 0; i < ctrl; i++) out[op++] = inp[ip++];
    } else {
      let len = ctrl >> 5;
      let ref = op - ((ctrl & 0x1f) << 8) - 1;
      if (ip >= e) return null;
      if (len === 7) {
        len += inp[ip++];
        if (ip >= e) return null;
      }
      ref -= inp[ip++];
      len += 2;
      if (op + len > outLen || ref < 0) return null;
      for (let i = 0; i < len; i++) out[op++] = out[ref++];
    }
  }
  return op === outLen ? out : null;
}
