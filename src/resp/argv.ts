/**
 * Argv: the arguments of one command as offsets into a borrowed buffer.
 *
 * Ownership rule (MUST): `buf` belongs to the connection's parser (or to the HTTP request).
 * Views returned by `view()` are valid only until the handler returns. Anything that is
 * stored (a value, a key kept in a structure, a queued MULTI command) MUST be `copy()`-ed.
 *
 * Keys are looked up as `key(i)`: a latin1 string, i.e. one char per byte, so the mapping
 * from bytes to the Map key is exact and reversible (no UTF-8 decoding, nothing lost).
 */
import { parseInt64, parseSafeInt, parseDouble } from './ascii.js';

const INITIAL = 16;

export class Argv {
  buf: Buffer = EMPTY;
  start: Int32Array;
  end: Int32Array;
  count = 0;

  constructor(start: Int32Array = new Int32Array(INITIAL), end: Int32Array = new Int32Array(INITIAL)) {
    this.start = start;
    this.end = end;
  }

  /** Reset to zero arguments over `buf`. */
  reset(buf: Buffer): void {
    this.buf = buf;
    this.count = 0;
  }

  /** Append the argument buf[s, e). */
  push(s: number, e: number): void {
    if (this.count === this.start.length) this.grow();
    this.start[this.count] = s;
    this.end[this.count] = e;
    this.count++;
  }

  private grow(): void {
    const n = this.start.length * 2;
    const s = new Int32Array(n);
    s.set(this.start);
    const e = new Int32Array(n);
    e.set(this.end);
    this.start = s;
    this.end = e;
  }

  /** Shift every offset by `delta` (the parser moved the bytes to a new buffer). */
  rebase(buf: Buffer, delta: number): void {
    this.buf = buf;
    for (let i = 0; i < this.count; i++) {
      this.start[i] += delta;
      this.end[i] += delta;
    }
  }

  len(i: number): number {
    return this.end[i] - this.start[i];
  }

  /** Borrowed view: no copy. Dies when the handler returns. */
  view(i: number): Buffer {
    return this.buf.subarray(this.start[i], this.end[i]);
  }

  /** Owned copy: use it whenever the bytes are stored. */
  copy(i: number): Buffer {
    const n = this.end[i] - this.start[i];
    const out = Buffer.allocUnsafe(n);
    this.buf.copy(out, 0, this.start[i], this.end[i]);
    return out;
  }

  /** The argument as a keyspace key: latin1, one char per byte (exact). */
  key(i: number): string {
    return latin1(this.buf, this.start[i], this.end[i]);
  }

  /** UTF-8 text (for option names in messages, config values...). Allocates. */
  str(i: number): string {
    return this.buf.toString('utf8', this.start[i], this.end[i]);
  }

  /** ASCII case-insensitive comparison against an upper-case token, no allocation. */
  is(i: number, upper: string): boolean {
    const s = this.start[i];
    const n = this.end[i] - s;
    if (n !== upper.length) return false;
    const b = this.buf;
    for (let j = 0; j < n; j++) {
      let c = b[s + j];
      if (c >= 97 && c <= 122) c -= 32;
      if (c !== upper.charCodeAt(j)) return false;
    }
    return true;
  }

  /** Lower-case ASCII name of the argument (command names). */
  lower(i: number): string {
    return this.buf.latin1Slice(this.start[i], this.end[i]).toLowerCase();
  }

  /** Strict integer (Redis string2ll rules) within ±2^53; NaN otherwise. */
  int(i: number): number {
    return parseSafeInt(this.buf, this.start[i], this.end[i]);
  }

  /** Strict signed 64-bit integer; null if invalid or out of range. */
  int64(i: number): bigint | null {
    return parseInt64(this.buf, this.start[i], this.end[i]);
  }

  /** Redis strtold-style double (accepts inf/-inf); NaN if invalid. */
  float(i: number): number {
    return parseDouble(this.buf, this.start[i], this.end[i]);
  }

  /** The arguments' bytes in all (a clone's buffer may also hold their RESP framing). */
  size(): number {
    let n = 0;
    for (let i = 0; i < this.count; i++) n += this.end[i] - this.start[i];
    return n;
  }

  /** An owned Argv holding copies of every argument (MULTI queue, MONITOR...). */
  clone(): Argv {
    const count = this.count;
    if (count === 0) return new Argv();
    const a = new Argv(offsets(count), offsets(count));
    const src = this.buf;
    const st = this.start;
    const en = this.end;
    // perf: the parser lays a command's arguments out in order, each behind its few framing
    // bytes; copying that one span is one copy instead of one per argument (a BullMQ script's
    // EVALSHA has 14-25 arguments). Offsets keep their distances. The span is taken only when
    // the framing is at most about the arguments' own size, so little memory is kept for it.
    let total = 0;
    let ordered = true;
    for (let i = 0; i < count; i++) {
      total += en[i] - st[i];
      if (i > 0 && st[i] < en[i - 1]) ordered = false;
    }
    const base = st[0];
    const span = en[count - 1] - base;
    if (ordered && span <= 2 * total + 64) {
      const buf = Buffer.allocUnsafe(span);
      copyBytes(src, base, buf, 0, span);
      a.reset(buf);
      for (let i = 0; i < count; i++) {
        a.start[i] = st[i] - base;
        a.end[i] = en[i] - base;
      }
      a.count = count;
      return a;
    }
    const buf = Buffer.allocUnsafe(total);
    a.reset(buf);
    let p = 0;
    for (let i = 0; i < count; i++) {
      const s = st[i];
      const n = en[i] - s;
      copyBytes(src, s, buf, p, n);
      a.start[i] = p;
      a.end[i] = p + n;
      p += n;
    }
    a.count = count;
    return a;
  }

  /** A view of arguments [from, count) sharing this buffer (COMMAND GETKEYS, subcommands). */
  tail(from: number): Argv {
    const a = new Argv();
    a.reset(this.buf);
    for (let i = from; i < this.count; i++) a.push(this.start[i], this.end[i]);
    return a;
  }

  /** Build an owned Argv from strings or Buffers (tests, internal commands, HTTP). */
  static of(args: ReadonlyArray<string | Buffer>): Argv {
    const parts = args.map((x) => (typeof x === 'string' ? Buffer.from(x) : x));
    let total = 0;
    for (const p of parts) total += p.length;
    const buf = Buffer.allocUnsafe(total);
    const a = new Argv();
    a.reset(buf);
    let pos = 0;
    for (const p of parts) {
      p.copy(buf, pos);
      a.push(pos, pos + p.length);
      pos += p.length;
    }
    return a;
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * perf: a clone's offset arrays are views into a shared slab, sized to its argument count. An
 * Int32Array of more than 16 elements gets its own off-heap backing store (~0.5 µs for 24,
 * ~1 µs for 32 on our VMs, against ~25 ns for a view): a queued BullMQ EVALSHA (14-26
 * arguments) paid ~2 µs for its two grown arrays. A slab lives while any of its clones does.
 */
const SLAB = 8192;
let slab = new Int32Array(SLAB);
let slabUsed = 0;

function offsets(n: number): Int32Array {
  if (slabUsed + n > SLAB) {
    if (n > SLAB >> 3) return new Int32Array(n);
    slab = new Int32Array(SLAB);
    slabUsed = 0;
  }
  const v = new Int32Array(slab.buffer, slabUsed << 2, n);
  slabUsed += n;
  return v;
}

/**
 * perf: Buffer#copy's checks cost more than copying a short run byte by byte (a MULTI's queued
 * commands: clone() was ~30% of a MULTI/EXEC of ten small commands).
 */
function copyBytes(src: Buffer, s: number, dst: Buffer, d: number, n: number): void {
  if (n <= 32) for (let j = 0; j < n; j++) dst[d + j] = src[s + j];
  else src.copy(dst, d, s, s + n);
}

/**
 * perf: makers of short latin1 strings. Buffer#latin1Slice is a C++ binding (~100 ns per call
 * on our VMs, most of it the call itself); String.fromCharCode with a fixed number of
 * arguments is a V8 builtin that allocates the one-byte string directly (~40% of that). One
 * monomorphic function per length, generated once.
 */
const SHORT = 32;
type Maker = (b: Uint8Array, s: number) => string;
const MAKERS: Maker[] = [];
for (let n = 0; n <= SHORT; n++) {
  const args = Array.from({ length: n }, (_, i) => `b[s + ${i}]`).join(', ');
  MAKERS.push(new Function('fc', `return function latin1_${n}(b, s) { return fc(${args}); };`)(String.fromCharCode) as Maker);
}

/** The bytes b[s, e) as a latin1 string (one char per byte: exact and reversible). */
export function latin1(b: Buffer, s: number, e: number): string {
  const n = e - s;
  return n <= SHORT ? MAKERS[n](b, s) : b.latin1Slice(s, e);
}
