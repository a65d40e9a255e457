/**
 * RespWriter: RESP2 encoding into one process-wide bump slab (msgpackr's idea).
 *
 * Every writer appends to the same slab; a writer owns the bytes from `start` to the slab's
 * `pos` while it is the last one to have written. When another writer takes over (a PUBLISH
 * writing into a subscriber's output while the publisher's replies are pending), the previous
 * owner's bytes are sealed into its `parts` list first, so each writer's output stays in order.
 *
 * Lifetime rules (MUST):
 *  - Bytes handed to socket.write() are never overwritten while the socket holds them: the
 *    slab only moves forward, except that a writer whose region is the slab's tail rewinds
 *    `pos` after its socket took every byte synchronously (writableLength === 0), and the
 *    whole slab starts over at 0 once no region of it is open, sealed or held by a socket
 *    (rewindIfFree), so the hot request/reply loop reuses the same cache-warm bytes. A sink
 *    that reports writableLength 0 MUST have copied the bytes it was given.
 *  - Values of at least BIG_VALUE bytes are not copied: the Buffer itself is queued. Such a
 *    Buffer MUST be immutable (stored values are: APPEND and SETRANGE build new Buffers).
 */
import { type ReplySink, countError } from './reply-sink.js';
import { formatDouble17g } from './ascii.js';

const SLAB_SIZE = 256 * 1024;
const BIG_VALUE = 16 * 1024;

let slab = Buffer.allocUnsafe(SLAB_SIZE);
let pos = 0;
/**
 * perf: bulkBytes copies 33-256 bytes four at a time through DataViews (the slab's, and one
 * for the last source buffer: arena chunks serve many replies each). Buffer#copy of a byte
 * range validates its arguments and makes a Uint8Array of the range per call: 100 bytes took
 * ~120 ns that way, ~65 this way (bench/RESULTS.md, session 15, sockjs). Integer reads, not
 * Float64: a NaN's bits need not survive a float round trip.
 */
let slabWords: DataView<ArrayBufferLike> = new DataView(slab.buffer, slab.byteOffset, slab.length);
/** Not the slab: a replaced slab must not stay referenced here. */
let srcBuf: Buffer = Buffer.alloc(0);
let srcWords: DataView<ArrayBufferLike> = new DataView(srcBuf.buffer, srcBuf.byteOffset, 0);
let owner: RespWriter | null = null;
/**
 * perf: regions of the current slab that are sealed (a writer's sealed region or a part) and
 * not yet flushed or discarded. With no owner, no pinned region and no region of this slab
 * still held by a socket (`held`), no byte before `pos` is referenced: the slab starts over
 * at 0 (rewindIfFree). Batched replies (connection.ts deferFlush: 50 connections, one reply
 * each per poll phase) so reuse the same few KB of the slab instead of walking through it and
 * faulting in a new 256 KB slab every ~2,500 replies (bench/RESULTS.md, session 15, sockjs).
 */
let pinned = 0;
/** A socket kept bytes of the current slab (an asynchronous write): no rewind in this slab. */
let held = false;

/** A sealed region of `b` (a slab) was flushed or dropped. */
function unpin(b: ArrayBufferLike): void {
  if (b === slab.buffer) pinned--;
}

/** After a flush of bytes of `b` to `sock`: bytes the socket still holds stay untouched. */
function noteHeld(b: ArrayBufferLike, sock: ByteSink): void {
  if (b === slab.buffer && sock.writableLength !== 0) held = true;
}

function rewindIfFree(): void {
  if (owner === null && pinned === 0 && !held) pos = 0;
}

/** Pre-encoded small integers ":0\r\n" .. ":9999\r\n" and bulk headers "$0\r\n" ... */
const SMALL = 10000;

/**
 * Memory that may be referenced outside its key (a value queued to a socket by reference):
 * code that changes a stored value's bytes in place MUST copy first when its ArrayBuffer is
 * here (see engine/ds/strbuf.ts). Tracked per ArrayBuffer because views share bytes.
 */
export const referenced = new WeakSet<ArrayBufferLike>();

/**
 * perf: bytes [s, e) of a slab as a plain Uint8Array: Buffer#subarray (TypedArray species
 * lookup, a Buffer) cost ~145 ns per reply here, this ~50 (bench/RESULTS.md, session 14,
 * branch sockcost). The socket's handle takes any Uint8Array; socket.write too.
 */
function newView(b: Buffer, s: number, e: number): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset + s, e - s);
}

/**
 * perf: views of the current slab by start offset (direct-mapped, VIEWS entries). The slab
 * starts over at 0 (rewindIfFree), so request/reply traffic writes its replies at the same
 * few offsets again and again: a lone connection at one, the 50 batched replies of a poll
 * phase at 50 (same-sized replies in the same order). A view is immutable and only says which
 * bytes to send, so one may serve many writes. Emptied when the slab is replaced: only the
 * current slab is pinned by it.
 */
const VIEWS = 512;
const views: (Uint8Array | null)[] = new Array<Uint8Array | null>(VIEWS).fill(null);
/** Start and end of views[i] in the slab (perf: no reads of the view's own fields). */
const viewStart = new Int32Array(VIEWS);
const viewEnd = new Int32Array(VIEWS);

function slabView(b: Buffer, s: number, e: number): Uint8Array {
  if (b !== slab) return newView(b, s, e);
  const i = s & (VIEWS - 1);
  const v = views[i];
  if (v !== null && viewStart[i] === s && viewEnd[i] === e) return v;
  viewStart[i] = s;
  viewEnd[i] = e;
  return (views[i] = newView(b, s, e));
}

/**
 * A sink for anything that can take bytes (net.Socket). Slab regions come as plain
 * Uint8Array views (slabView), other chunks as Buffers.
 */
export interface ByteSink {
  write(b: Uint8Array): boolean;
  cork(): void;
  uncork(): void;
  readonly writableLength: number;
}

export class RespWriter implements ReplySink {
  /** Start of this writer's unsealed bytes in the current slab (valid while owner === this). */
  private start = 0;
  /** Sealed output waiting for the next flush, in order (after `sealedSlab`'s region). */
  private parts: Buffer[] = [];
  /**
   * perf: the first sealed slab region, kept as offsets: with several connections batching
   * their replies (connection.ts deferFlush), each reply is sealed when the next connection
   * writes, and a parts array per reply (allocated, grown, replaced at flush) cost more than
   * the reply's own bytes. The region becomes a part when anything is queued behind it.
   */
  private sealedSlab: Buffer | null = null;
  private sealedStart = 0;
  private sealedEnd = 0;
  /** Bytes waiting in the sealed region and `parts` (for output-buffer limits). */
  pendingBytes = 0;
  /** Total bytes handed to the socket (INFO total_net_output_bytes). */
  static totalOut = 0;
  /** The connection speaks RESP3 (after HELLO 3): RESP3 types go out as such. */
  resp3 = false;

  private claim(need: number): void {
    if (owner !== this) {
      if (owner !== null) owner.seal();
      owner = this;
      this.start = pos;
    }
    if (slab.length - pos < need) {
      this.seal();
      slab = Buffer.allocUnsafe(Math.max(SLAB_SIZE, need));
      slabWords = new DataView(slab.buffer, slab.byteOffset, slab.length);
      pos = 0;
      pinned = 0;
      held = false;
      views.fill(null);
      this.start = 0;
      owner = this; // seal() released ownership: without this, the next claim orphans these bytes
    }
  }

  /** Move this writer's slab bytes into the sealed region or `parts`. */
  private seal(): void {
    if (owner === this) {
      if (pos > this.start) {
        pinned++;
        if (this.sealedSlab === null && this.parts.length === 0) {
          this.sealedSlab = slab;
          this.sealedStart = this.start;
          this.sealedEnd = pos;
        } else {
          this.spill();
          this.parts.push(slab.subarray(this.start, pos));
        }
        this.pendingBytes += pos - this.start;
      }
      this.start = pos;
      owner = null;
    }
  }

  /**
   * The sealed region becomes a part (something is queued behind it). While there is a
   * sealed region, `parts` is empty: it is only set then (seal), and spilled before any push.
   */
  private spill(): void {
    const b = this.sealedSlab;
    if (b !== null) {
      this.sealedSlab = null;
      this.parts.push(b.subarray(this.sealedStart, this.sealedEnd));
    }
  }

  /** Unsealed reply bytes in the shared slab (CLIENT LIST obl). */
  get openBytes(): number {
    return owner === this ? pos - this.start : 0;
  }

  /** Sealed chunks waiting for the next flush (CLIENT LIST oll). */
  get queuedParts(): number {
    return this.parts.length + (this.sealedSlab !== null ? 1 : 0);
  }

  /** True when there is something to flush. */
  get pending(): boolean {
    return this.sealedSlab !== null || this.parts.length > 0 || (owner === this && pos > this.start);
  }

  /** Drop everything not yet flushed (CLIENT REPLY OFF, killed client). */
  discard(): void {
    if (owner === this) {
      pos = this.start;
      owner = null;
    }
    if (this.sealedSlab !== null) {
      unpin(this.sealedSlab.buffer);
      this.sealedSlab = null;
    }
    if (this.parts.length !== 0) {
      for (const p of this.parts) unpin(p.buffer);
      this.parts = [];
    }
    this.pendingBytes = 0;
  }

  /**
   * Hand everything written since the last flush to `sock` in one write (or one corked batch).
   * Returns socket.write's result: false means the kernel buffer is full (backpressure).
   */
  flush(sock: ByteSink): boolean {
    let tailStart = -1;
    const tailSlab = slab;
    if (owner === this && pos > this.start) {
      if (pos === tailSlab.length || this.sealedSlab !== null || this.parts.length > 0) {
        this.seal();
      } else {
        tailStart = this.start;
      }
    }
    let ok = true;
    if (tailStart >= 0) {
      // Fast path: one contiguous region at the slab's tail. A request/reply client's replies
      // start at the same rewound offset each time: the view is reused (slabView).
      const region = slabView(tailSlab, tailStart, pos);
      RespWriter.totalOut += region.length;
      owner = null;
      ok = sock.write(region);
      if (slab === tailSlab) {
        if (sock.writableLength !== 0) held = true;
        else if (pos === tailStart + region.length) pos = tailStart; // the kernel has every byte: reuse the region
        rewindIfFree();
      }
      this.start = pos;
      return ok;
    }
    const region = this.sealedSlab;
    if (region !== null) {
      // One sealed region (a batched reply): no parts array.
      this.sealedSlab = null;
      RespWriter.totalOut += this.pendingBytes;
      this.pendingBytes = 0;
      ok = sock.write(slabView(region, this.sealedStart, this.sealedEnd));
      if (region === slab) {
        pinned--;
        if (sock.writableLength !== 0) held = true;
        rewindIfFree();
      }
      return ok;
    }
    this.spill();
    const parts = this.parts;
    if (parts.length === 0) return true;
    this.parts = [];
    RespWriter.totalOut += this.pendingBytes;
    this.pendingBytes = 0;
    if (parts.length === 1) {
      ok = sock.write(parts[0]);
    } else {
      sock.cork();
      for (const p of parts) ok = sock.write(p);
      sock.uncork();
    }
    for (const p of parts) {
      unpin(p.buffer);
      noteHeld(p.buffer, sock);
    }
    rewindIfFree();
    return ok;
  }

  /** Concatenate and take everything written so far (tests, HTTP resp2 format, captures). */
  take(): Buffer {
    this.seal();
    this.spill();
    const out = this.parts.length === 1 ? Buffer.from(this.parts[0]) : Buffer.concat(this.parts);
    for (const p of this.parts) unpin(p.buffer);
    this.parts = [];
    this.pendingBytes = 0;
    return out;
  }

  /** Pre-encoded bytes. */
  raw(b: Buffer): void {
    const n = b.length;
    this.claim(n);
    if (n <= 16) {
      // perf: +OK, small integers and the like: Buffer#copy costs a call into TypedArray#set
      for (let i = 0; i < n; i++) slab[pos + i] = b[i];
      pos += n;
    } else {
      pos += b.copy(slab, pos);
    }
  }

  ok(): void {
    this.raw(OK);
  }

  simple(s: string): void {
    this.claim(s.length + 3);
    slab[pos++] = 0x2b; // +
    pos += slab.latin1Write(s, pos);
    crlf();
  }

  error(msg: string): void {
    if (msg.indexOf('\r') >= 0 || msg.indexOf('\n') >= 0) msg = msg.replace(/[\r\n]/g, ' ');
    countError(msg);
    this.claim(msg.length + 3);
    slab[pos++] = 0x2d; // -
    pos += slab.latin1Write(msg, pos);
    crlf();
  }

  int(n: number | bigint): void {
    if (typeof n === 'number' && n >= 0 && n < SMALL && (n | 0) === n) {
      this.raw(INTS[n] ?? smallInt(n));
      return;
    }
    this.claim(24);
    slab[pos++] = 0x3a; // :
    if (typeof n === 'number' && Number.isSafeInteger(n)) pos = writeDigits(slab, pos, n);
    else pos += slab.latin1Write(typeof n === 'number' ? String(n) : n.toString(), pos);
    crlf();
  }

  private header(prefix: number, n: number): void {
    if (n < 10) {
      slab[pos] = prefix;
      slab[pos + 1] = 48 + n;
      slab[pos + 2] = 13;
      slab[pos + 3] = 10;
      pos += 4;
    } else if (n < 1000) {
      // perf: two or three digits written directly (writeDigits' length search and loop
      // showed in a 100-byte GET's profile).
      const b = slab;
      let p = pos;
      b[p++] = prefix;
      if (n >= 100) {
        const h = (n / 100) | 0;
        b[p++] = 48 + h;
        n -= h * 100;
      }
      const t = (n / 10) | 0;
      b[p] = 48 + t;
      b[p + 1] = 48 + (n - t * 10);
      b[p + 2] = 13;
      b[p + 3] = 10;
      pos = p + 4;
    } else {
      slab[pos++] = prefix;
      pos = writeDigits(slab, pos, n);
      crlf();
    }
  }

  bulk(v: Buffer): void {
    const n = v.length;
    if (n >= BIG_VALUE) {
      this.claim(16);
      this.header(0x24, n);
      this.seal();
      this.spill();
      referenced.add(v.buffer);
      this.parts.push(v, CRLF_BUF);
      this.pendingBytes += n + 2;
      return;
    }
    this.claim(n + 16);
    this.header(0x24, n);
    pos += v.copy(slab, pos);
    crlf();
  }

  bulkLatin1(s: string): void {
    const n = s.length;
    this.claim(n + 16);
    this.header(0x24, n);
    if (n <= 24) {
      // perf: a JS loop beats the latin1Write binding (a C++ call) for short keys and values.
      for (let i = 0; i < n; i++) slab[pos + i] = s.charCodeAt(i);
      pos += n;
    } else {
      pos += slab.latin1Write(s, pos);
    }
    crlf();
  }

  /** bulkLatin1(s.substring(a, e)) without the substring (perf: listpack hashes' entries). */
  bulkLatin1Range(s: string, a: number, e: number): void {
    const n = e - a;
    if (n > 64) return this.bulkLatin1(s.substring(a, e));
    this.claim(n + 16);
    this.header(0x24, n);
    // perf: the slab and position in locals (module variables are reloaded on every store).
    const b = slab;
    const q = pos - a;
    for (let i = a; i < e; i++) b[q + i] = s.charCodeAt(i);
    pos += n;
    crlf();
  }

  /** bulk() of b[s, e), copied now (perf: GET of a compact key, from its arena chunk). */
  bulkBytes(b: Buffer, s: number, e: number): void {
    const n = e - s;
    this.claim(n + 16);
    this.header(0x24, n);
    if (n <= 32) {
      // perf: a JS loop beats Buffer#copy (a native call) for short values.
      const d = slab;
      const q = pos - s;
      for (let i = s; i < e; i++) d[q + i] = b[i];
      pos += n;
    } else if (n <= 256) {
      copyWords(b, s, n);
      pos += n;
    } else {
      pos += b.copy(slab, pos, s, e);
    }
    crlf();
  }

  /** bulkLatin1(String(v)) of a safe integer without the string (perf: listpack integer entries). */
  bulkInt(v: number): void {
    this.claim(40);
    const a = v < 0 ? -v : v;
    let len = a < 10 ? 1 : a < 100 ? 2 : a < 1000 ? 3 : 4;
    while (len < 16 && a >= POW10[len]) len++;
    const t = v < 0 ? len + 1 : len;
    // perf: the header written here (at most 17 chars), not through header()'s general path.
    const b = slab;
    b[pos] = 0x24; // $
    if (t < 10) {
      b[pos + 1] = 48 + t;
      pos += 2;
    } else {
      b[pos + 1] = 49;
      b[pos + 2] = 38 + t;
      pos += 3;
    }
    b[pos] = 13;
    b[pos + 1] = 10;
    let p = pos + 2;
    if (v < 0) b[p++] = 0x2d; // -
    // The digits from the right: writeDigits' loop with the length known (perf: through
    // writeDigits, LRANGE of 100 integers took 3.2-3.9 µs against 2.7-2.8 inline).
    let q = p + len;
    let x = a;
    if (x < 0x80000000) {
      x |= 0;
      do {
        const y = (x / 10) | 0;
        b[--q] = 48 + (x - y * 10);
        x = y;
      } while (x !== 0);
    } else {
      do {
        const y = Math.floor(x / 10);
        b[--q] = 48 + (x - y * 10);
        x = y;
      } while (x !== 0);
    }
    p += len;
    b[p] = 13;
    b[p + 1] = 10;
    pos = p + 2;
  }

  bulkText(s: string): void {
    const n = Buffer.byteLength(s);
    this.claim(n + 16);
    this.header(0x24, n);
    pos += slab.utf8Write(s, pos);
    crlf();
  }

  nil(): void {
    this.raw(this.resp3 ? NULL3 : NIL);
  }

  array(n: number): void {
    this.claim(16);
    this.header(0x2a, n);
  }

  nilArray(): void {
    this.raw(this.resp3 ? NULL3 : NIL_ARRAY);
  }

  map(n: number): void {
    this.claim(16);
    if (this.resp3) this.header(0x25, n); // %
    else this.header(0x2a, 2 * n);
  }

  set(n: number): void {
    this.claim(16);
    this.header(this.resp3 ? 0x7e : 0x2a, n); // ~
  }

  push(n: number): void {
    this.claim(16);
    this.header(this.resp3 ? 0x3e : 0x2a, n); // >
  }

  pairs(n: number): void {
    this.claim(16);
    this.header(0x2a, this.resp3 ? n : 2 * n);
  }

  pair(): void {
    if (this.resp3) this.raw(PAIR);
  }

  assoc(n: number): void {
    this.claim(16);
    this.header(this.resp3 ? 0x25 : 0x2a, n);
  }

  assocItem(): void {
    if (!this.resp3) this.raw(PAIR);
  }

  double(d: number | string): void {
    const s = typeof d === 'string' ? d : formatDouble17g(d);
    if (!this.resp3) {
      this.bulkLatin1(s);
      return;
    }
    this.claim(s.length + 3);
    slab[pos++] = 0x2c; // ,
    pos += slab.latin1Write(s, pos);
    crlf();
  }

  bool(b: boolean): void {
    if (this.resp3) this.raw(b ? TRUE3 : FALSE3);
    else this.raw(b ? ONE : ZERO);
  }

  verbatim(s: string | Buffer, fmt = 'txt'): void {
    if (!this.resp3) {
      if (typeof s === 'string') this.bulkText(s);
      else this.bulk(s);
      return;
    }
    const n = (typeof s === 'string' ? Buffer.byteLength(s) : s.length) + 4;
    this.claim(n + 16);
    this.header(0x3d, n); // =
    // Exactly three bytes (Redis copies three from the format, its NUL included when shorter).
    for (let i = 0; i < 3; i++) slab[pos + i] = i < fmt.length ? fmt.charCodeAt(i) & 0xff : 0;
    pos += 3;
    slab[pos++] = 0x3a; // :
    pos += typeof s === 'string' ? slab.utf8Write(s, pos) : s.copy(slab, pos);
    crlf();
  }

  attribute(n: number): boolean {
    if (!this.resp3) return false;
    this.claim(16);
    this.header(0x7c, n); // |
    return true;
  }

  bigNumber(digits: string): void {
    if (!this.resp3) {
      this.bulkLatin1(digits);
      return;
    }
    this.claim(digits.length + 3);
    slab[pos++] = 0x28; // (
    pos += slab.latin1Write(digits, pos);
    crlf();
  }
}

/** b[s, s + n) into the slab at pos (pos is not moved), see slabWords. */
function copyWords(b: Buffer, s: number, n: number): void {
  if (b !== srcBuf) {
    srcBuf = b;
    srcWords = new DataView(b.buffer, b.byteOffset, b.length);
  }
  const src = srcWords;
  const dst = slabWords;
  const p = pos;
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    dst.setInt32(p + i, src.getInt32(s + i, true), true);
    dst.setInt32(p + i + 4, src.getInt32(s + i + 4, true), true);
  }
  const d = slab;
  for (; i < n; i++) d[p + i] = b[s + i];
}

/** "\r\n" at pos. perf: plain stores (Buffer#writeUInt16LE validates its arguments, slowly). */
function crlf(): void {
  slab[pos] = 13;
  slab[pos + 1] = 10;
  pos += 2;
}

const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** Decimal digits of the safe integer `n` at b[p]; returns the position after them. */
function writeDigits(b: Buffer, p: number, n: number): number {
  if (n < 0) {
    b[p++] = 0x2d; // -
    n = -n;
  }
  let len = 1;
  while (len < 16 && n >= POW10[len]) len++;
  let q = p + len;
  if (n < 0x80000000) {
    // perf: int32 arithmetic for the usual sizes
    let x = n | 0;
    do {
      const y = (x / 10) | 0;
      b[--q] = 48 + (x - y * 10);
      x = y;
    } while (x !== 0);
  } else {
    do {
      const y = Math.floor(n / 10);
      b[--q] = 48 + (n - y * 10);
      n = y;
    } while (n > 0);
  }
  return p + len;
}

const OK = Buffer.from('+OK\r\n');
const NIL = Buffer.from('$-1\r\n');
const NIL_ARRAY = Buffer.from('*-1\r\n');
const NULL3 = Buffer.from('_\r\n');
const PAIR = Buffer.from('*2\r\n');
const TRUE3 = Buffer.from('#t\r\n');
const FALSE3 = Buffer.from('#f\r\n');
const CRLF_BUF = Buffer.from('\r\n');
/**
 * ":<n>\r\n" for 0 <= n < SMALL, each made on its first use: the whole table built at start-up
 * was 10,000 Buffer objects (~1 MB of an idle server's heap) for the few a workload replies.
 */
const INTS: (Buffer | undefined)[] = new Array(SMALL);
function smallInt(n: number): Buffer {
  return (INTS[n] = Buffer.from(`:${n}\r\n`, 'latin1'));
}
const ZERO = smallInt(0);
const ONE = smallInt(1);
