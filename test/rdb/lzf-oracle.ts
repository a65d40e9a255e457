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
export const LZF_BUNDLED = false;

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
  // A slot holds b1 + position: ref = slot - b1 is negative for an empty slot or one of an
  // earlier call.
  const b1 = base + 1;
  base += inLen + 1;
  const tab = htab;
  const last = inLen - 2;
  let ip = 0;
  let op = 1; // start run
  let lit = 0;
  // perf: hval stays an int32 (lzf_c.c's unsigned int has the same bits; IDX shifts it
  // unsigned): with `>>> 0` it was a uint32 that V8 kept as a double.
  let hval = (inp[0] << 8) | inp[1];
  while (ip < last) {
    hval = (hval << 8) | inp[ip + 2];
    const slot = ((hval >>> (24 - HLOG)) - Math.imul(hval, 5)) & (HSIZE - 1);
    const ref = tab[slot] - b1;
    tab[slot] = b1 + ip;
    const off = ip - ref - 1;
    if (
      ref > 0 && off >= 0 && off < MAX_OFF &&
      (!bundled || ip + 4 < inLen) &&
      inp[ref] === inp[ip] && inp[ref + 1] === inp[ip + 1] && inp[ref + 2] === inp[ip + 2]
    ) {
      let maxlen = inLen - ip - 2;
      if (maxlen > MAX_REF) maxlen = MAX_REF;
      if (!bundled && op - (lit === 0 ? 1 : 0) + 3 + 1 >= outLen) return -1;
      out[op - lit - 1] = lit - 1; // stop run
      if (lit === 0) op--; // undo run if length is zero
      if (bundled && op + 3 + 1 >= outLen) return -1;
      // lzf_c.c compares 16 positions unrolled before it looks at maxlen (so a match may run
      // past maxlen when fewer than 19 bytes remain), then goes on while len < maxlen: the
      // same stop as one loop up to `cap`. len = the first position that differs.
      const cap = maxlen > 16 ? (maxlen > 19 ? maxlen : 19) : maxlen > 3 ? maxlen : 3;
      let len = 3;
      while (len < cap && inp[ref + len] === inp[ip + len]) len++;
      len -= 2; // octets - 1
      ip++;
      if (len < 7) {
        out[op++] = (off >> 8) + (len << 5);
      } else {
        out[op++] = (off >> 8) + (7 << 5);
        out[op++] = len - 7;
      }
      out[op++] = off & 0xff;
      lit = 0;
      op++; // start run
      ip += len + 1;
      if (ip >= last) break;
      // VERY_FAST: hash the last two positions of the match.
      ip -= 2;
      hval = (inp[ip] << 16) | (inp[ip + 1] << 8) | inp[ip + 2];
      tab[((hval >>> (24 - HLOG)) - Math.imul(hval, 5)) & (HSIZE - 1)] = b1 + ip;
      ip++;
      hval = (hval << 8) | inp[ip + 2];
      tab[((hval >>> (24 - HLOG)) - Math.imul(hval, 5)) & (HSIZE - 1)] = b1 + ip;
      ip++;
    } else {
      if (op >= outLen) return -1;
      lit++;
      out[op++] = inp[ip++];
      if (lit === MAX_LIT) {
        out[op - lit - 1] = lit - 1;
        lit = 0;
        op++;
      }
    }
  }
  if (op + 3 > outLen) return -1;
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
  const room = out.length;
  let ip = s;
  let op = 0;
  while (ip < e) {
    const ctrl = inp[ip++];
    if (ctrl < 32) {
      // literal run of ctrl + 1 bytes
      const end = op + ctrl + 1;
      if (end > outLen || ip + ctrl + 1 > e) return null;
      while (op < end) out[op++] = inp[ip++];
    } else {
      let len = ctrl >> 5;
      if (ip >= e) return null;
      if (len === 7) {
        len += inp[ip++];
        if (ip >= e) return null;
      }
      let ref = op - ((ctrl & 0x1f) << 8) - 1 - inp[ip++];
      const end = op + len + 2;
      if (end > outLen || ref < 0) return null;
      if (len < 7 && op + 8 <= room) {
        // perf: a short back-reference (3 to 8 bytes, most of them in listpacks) as 8 copies
        // in a row, byte by byte as lzf_d.c (so an overlapping one repeats): the bytes past
        // `end` are scratch that what follows overwrites before anything reads them.
        out[op] = out[ref];
        out[op + 1] = out[ref + 1];
        out[op + 2] = out[ref + 2];
        out[op + 3] = out[ref + 3];
        out[op + 4] = out[ref + 4];
        out[op + 5] = out[ref + 5];
        out[op + 6] = out[ref + 6];
        out[op + 7] = out[ref + 7];
        op = end;
      } else {
        while (op < end) out[op++] = out[ref++];
      }
    }
  }
  return op === outLen ? out : null;
}
