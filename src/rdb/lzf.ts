/**
 * LZF as Redis uses it for RDB strings, and the memory of native/lzf.wasm (our C, built by
 * native/lzf/build.sh), which also computes CRC-64 (crc64.ts).
 *
 * Two compressors produce different (equally valid) bytes, and Redis builds ship either:
 *  - liblzf 3.6 (the default here): what Debian's and Ubuntu's redis-server packages link
 *    (the reference server of our tests);
 *  - Redis's bundled deps/lzf (`RDB_LZF=bundled`): official builds and Docker images. It
 *    differs in two places: it never starts a match in the last 4 input bytes, and it tests
 *    for output space after closing the literal run.
 * Both follow lzf_c.c step by step (HLOG 16, VERY_FAST, shift-based hash). One difference
 * remains with both: lzf_c.c leaves its hash table uninitialised (INIT_HTAB 0), so Redis may
 * now and then find a match through a stale slot; we start from an empty table (INIT_HTAB 1),
 * which is Redis's output whenever no stale slot points into the current input.
 *
 * Memory: one instance with a fixed data area (two regions of SMALL bytes: input, output)
 * serves every job that fits; its memory never grows, so views of it stay valid. A bigger job
 * runs in a second instance grown to the job's real size (the input's length; an output
 * length a payload claims is bounded by the caller from the input's length first), dropped
 * after a job that left it above BIG_KEEP.
 */
import { readFileSync } from 'node:fs';

/** Which compressor's output to reproduce (see the header comment). */
export const LZF_BUNDLED = process.env.RDB_LZF === 'bundled';

interface Exports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  lzf_compress(inp: number, inLen: number, out: number, outLen: number, bundled: number): number;
  lzf_decompress(inp: number, inLen: number, out: number, outLen: number): number;
  crc64_init(): void;
  crc64_state(): number;
  crc64_update(p: number, n: number): void;
  lp_check(p: number, n: number, table: number, size: number): number;
  lp_dup_state(): number;
  lp_max_text(): number;
  lp_dup_fields(p: number, n: number, table: number, size: number): number;
}

const wasm = new WebAssembly.Module(readFileSync(new URL('../../native/lzf.wasm', import.meta.url)));

/** LZF expands at most 264 output bytes per 3 input bytes (a long back-reference). */
export const LZF_MAX_RATIO = 89;

/**
 * Longest decompressed string: twice the longest string value (proto-max-bulk-len's default,
 * 512 MB), well inside a wasm32 memory with the input beside it.
 */
const MAX_OUT = 1024 * 1024 * 1024;

/** Bytes lzf_decompress may touch past its input and output (DECOMP_SLACK in lzf.c). */
const SLACK = 32;
/** The largest input (and output) of a job in the fixed instance. */
const SMALL = 128 * 1024;
/** A big-job instance whose memory is above this after a job is dropped. */
const BIG_KEEP = 8 * 1024 * 1024;

/** One instance of native/lzf.wasm: its exports and its memory as a Buffer. */
export class Codec {
  readonly x: Exports;
  mem: Buffer;
  /** Input region (and the CRC staging region). */
  readonly a: number;
  /** Output region: set by fit(). */
  b = 0;
  /** Table region (listpack checks), after the output region: set by fit(). */
  t = 0;
  /** The CRC state, two little-endian uint32 halves in the module's memory. */
  crcAt: number;

  constructor(inBytes: number, outBytes: number, tableBytes = 0) {
    this.x = new WebAssembly.Instance(wasm, {}).exports as unknown as Exports;
    this.x.crc64_init();
    this.crcAt = this.x.crc64_state();
    this.a = ((this.x.__heap_base.value as number) + 15) & ~15;
    this.mem = Buffer.from(this.x.memory.buffer);
    this.fit(inBytes, outBytes, tableBytes);
  }

  /**
   * Room for an input of inBytes, an output of outBytes and a table of tableBytes (grows the
   * memory: views of it detach).
   */
  fit(inBytes: number, outBytes: number, tableBytes = 0): void {
    this.b = (this.a + inBytes + SLACK + 15) & ~15;
    this.t = (this.b + outBytes + SLACK + 15) & ~15;
    const need = this.t + tableBytes;
    const have = this.x.memory.buffer.byteLength;
    if (need > have) {
      this.x.memory.grow(Math.ceil((need - have) / 65536));
      this.mem = Buffer.from(this.x.memory.buffer);
    }
  }
}

/** Bytes of the fixed instance's table region (lp_dup_fields: 16K slots, 8K fields). */
export const FIXED_TABLE = 64 * 1024;

/**
 * The fixed instance (its memory never grows). After its table region: the resident region, a
 * DUMP payload copied there once by makeResident (SMALL bytes and the decompressor's slack).
 */
export const fixed = new Codec(SMALL, SMALL, FIXED_TABLE + SMALL + SLACK);
const RESIDENT_AT = fixed.t + FIXED_TABLE;
/** Bytes of a job's input or output in the fixed instance. */
export const FIXED_SMALL = SMALL;
const SMALL_OUT = fixed.b;
const FIXED_IN = fixed.a;
const FIXED_MEM = fixed.mem;
const fixedX = fixed.x;
let big: Codec | null = null;

/** The instance for a job of these sizes. */
function codecFor(inBytes: number, outBytes: number): Codec {
  if (inBytes <= SMALL && outBytes <= SMALL) return fixed;
  if (big === null) big = new Codec(inBytes, outBytes);
  else big.fit(inBytes, outBytes);
  return big;
}

/** The Buffer whose bytes [residentBase, ...) are at RESIDENT_AT (makeResident), or null. */
let residentSrc: Uint8Array | null = null;
let residentBase = 0;

/**
 * Copy b[s, e) (at most FIXED_SMALL bytes) into the fixed instance's resident region: until
 * dropResident(), LZF jobs and listpack checks on those bytes of b read them there instead of
 * copying them in again (perf: RESTORE's CRC, decompression and checks on one copy of its
 * payload). Returns the region's offset in fixed.mem, or -1 when the range is bigger. b[s, e)
 * MUST NOT change before dropResident().
 */
export function makeResident(b: Uint8Array, s = 0, e = b.length): number {
  residentSrc = null;
  if (e - s > SMALL) return -1;
  copyBytes(b, s, e - s, FIXED_MEM, RESIDENT_AT);
  residentSrc = b;
  residentBase = s;
  return RESIDENT_AT;
}

/** Where b[s] is in fixed.mem when b is the resident Buffer, else -1 (s must lie in the resident range). */
export function residentAt(b: Uint8Array, s: number): number {
  return b === residentSrc ? RESIDENT_AT + s - residentBase : -1;
}

export function dropResident(): void {
  residentSrc = null;
}

/** After a job on `c`: a big instance is not kept past BIG_KEEP (its memory is the job's). */
function done(c: Codec): void {
  if (c !== fixed && c.mem.length > BIG_KEEP) big = null;
}

/** The memory holding the last job's output (lzfCompress, lzfDecompressAt) and its offset. */
let lastMem = fixed.mem;
export let lzfOut = SMALL_OUT;

/** The Buffer that holds the last job's output at lzfOut (valid until the next LZF job). */
export function lzfMem(): Buffer {
  return lastMem;
}

/**
 * dst[o, o + n) = inp[s, s + n) (perf: up to 32 bytes by a loop, ~2 ns a byte; set() of a view
 * costs ~90 ns whatever the size).
 */
export function copyBytes(inp: Uint8Array, s: number, n: number, dst: Uint8Array, o: number): void {
  if (n <= 32) {
    for (let i = 0; i < n; i++) dst[o + i] = inp[s + i];
  } else {
    dst.set(s === 0 && n === inp.length ? inp : inp.subarray(s, s + n), o);
  }
}

/**
 * lzf_compress(inp[0, inLen), out_len): the compressed length, at lzfMem()[lzfOut, ...), or -1
 * when it would not fit in outLen bytes (Redis then stores the string uncompressed).
 */
export function lzfCompress(inp: Uint8Array, inLen: number, outLen: number, bundled = LZF_BUNDLED): number {
  if (inLen === 0 || outLen <= 0) return -1;
  const c = codecFor(inLen, outLen);
  copyBytes(inp, 0, inLen, c.mem, c.a);
  return compressIn(c, inLen, outLen, bundled);
}

/** lzfCompress of a latin1 string's first inLen chars (one byte each), written straight into the module's memory. */
export function lzfCompressLatin1(s: string, inLen: number, outLen: number, bundled = LZF_BUNDLED): number {
  if (inLen === 0 || outLen <= 0) return -1;
  const c = codecFor(inLen, outLen);
  c.mem.latin1Write(s, c.a, inLen);
  return compressIn(c, inLen, outLen, bundled);
}

function compressIn(c: Codec, inLen: number, outLen: number, bundled: boolean): number {
  const n = c.x.lzf_compress(c.a, inLen, c.b, outLen, bundled ? 1 : 0);
  lastMem = c.mem;
  lzfOut = c.b;
  done(c);
  return n;
}

/**
 * lzf_decompress with CHECK_INPUT of inp[s, e) into exactly `outLen` bytes, at
 * lzfMem()[lzfOut, lzfOut + outLen) (valid until the next LZF job): false when the input is
 * corrupt (a reference before the output start, a run past either end) or does not expand to
 * exactly outLen bytes, or more than the input can expand to (memory of outLen is made only
 * below that bound).
 */
export function lzfDecompressAt(inp: Uint8Array, s: number, e: number, outLen: number): boolean {
  const inLen = e - s;
  // No memory from a claimed length the input cannot expand to, nor past MAX_OUT.
  if (!(outLen >= 0 && outLen <= inLen * LZF_MAX_RATIO + 64 && outLen <= MAX_OUT)) return false;
  if (inLen <= SMALL && outLen <= SMALL) {
    // perf: the usual job (an RDB file's many short strings) without codecFor and done.
    const r = residentAt(inp, s);
    if (r < 0) copyBytes(inp, s, inLen, FIXED_MEM, FIXED_IN);
    const at = r >= 0 ? r : FIXED_IN;
    lastMem = FIXED_MEM;
    lzfOut = SMALL_OUT;
    return fixedX.lzf_decompress(at, inLen, SMALL_OUT, outLen) === outLen;
  }
  const c = codecFor(inLen, outLen);
  copyBytes(inp, s, inLen, c.mem, c.a);
  const n = c.x.lzf_decompress(c.a, inLen, c.b, outLen);
  lastMem = c.mem;
  lzfOut = c.b;
  done(c);
  return n === outLen;
}

/**
 * lzfDecompressAt's answer without the output (the RDB parse checks a value it reads again
 * later): the same walk of lzf.c's lzf_decompress over inp[s, e), counting output bytes
 * instead of writing them. perf: no copy into the module's memory and no output written; a
 * 1M-key file has ~540k LZF strings, each decompressed once to check it and once to insert it.
 */
export function lzfCheck(inp: Uint8Array, s: number, e: number, outLen: number): boolean {
  if (!(outLen >= 0 && outLen <= (e - s) * LZF_MAX_RATIO + 64 && outLen <= MAX_OUT)) return false;
  return lzfWalk(inp, s, e, outLen, null, 0);
}

/**
 * lzf_decompress of inp[s, e), which lzfCheck accepted for outLen bytes, into
 * out[o, o + outLen): false when it is not such input (then at most outLen bytes were written).
 * The RDB import's second decompression, straight into the key's arena record (perf: no copy
 * into the module's memory and out again).
 */
export function lzfInto(inp: Uint8Array, s: number, e: number, out: Uint8Array, o: number, outLen: number): boolean {
  return lzfWalk(inp, s, e, outLen, out, o);
}

/** lzfCheck's walk, writing the output to out[o, ...) unless `out` is null. */
function lzfWalk(inp: Uint8Array, s: number, e: number, outLen: number, out: Uint8Array | null, o: number): boolean {
  let ip = s;
  let op = 0;
  while (ip < e) {
    const ctrl = inp[ip++];
    if (ctrl < 32) {
      const n = ctrl + 1;
      if (op + n > outLen || ip + n > e) return false;
      if (out !== null) for (let i = 0; i < n; i++) out[o + op + i] = inp[ip + i];
      op += n;
      ip += n;
    } else {
      let len = ctrl >>> 5;
      if (ip >= e) return false;
      if (len === 7) {
        len += inp[ip++];
        if (ip >= e) return false;
      }
      const back = ((ctrl & 0x1f) << 8) + 1 + inp[ip++];
      len += 2;
      if (outLen - op < len || op < back) return false;
      // Byte by byte: a reference may overlap what it writes (a run repeats).
      if (out !== null) for (let i = 0, d = o + op; i < len; i++) out[d + i] = out[d - back + i];
      op += len;
    }
  }
  return op === outLen;
}

/** lzfDecompressAt into a fresh Buffer, or null. */
export function lzfDecompress(inp: Uint8Array, s: number, e: number, outLen: number): Buffer | null {
  if (!lzfDecompressAt(inp, s, e, outLen)) return null;
  const out = Buffer.allocUnsafe(outLen);
  copyBytes(lastMem, lzfOut, outLen, out, 0);
  return out;
}
