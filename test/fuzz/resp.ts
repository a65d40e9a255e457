/**
 * The fuzzer's wire client: RESP2 and RESP3 replies (a fuzzed HELLO 3 switches protocol), each
 * returned as its exact bytes, plus a decoder for the few structured replies the fuzzer reads
 * (COMMAND DOCS). A connection that closes or stays silent is a result, not an exception.
 */
import net from 'node:net';
import { encode } from '../helpers/resp-client.js';

export type Decoded = null | number | bigint | string | Buffer | Error | Decoded[] | Map<string, Decoded>;

/** Parse one reply at buf[pos...]: its decoded value and end, or null if incomplete. */
export function parseReply(buf: Buffer, pos: number): { value: Decoded; end: number } | null {
  if (pos >= buf.length) return null;
  const nl = buf.indexOf('\r\n', pos);
  if (nl < 0) return null;
  const type = buf[pos];
  const line = buf.toString('latin1', pos + 1, nl);
  const after = nl + 2;
  switch (type) {
    case 0x2b: return { value: line, end: after }; // +
    case 0x2d: case 0x21: { // - and ! (blob error)
      if (type === 0x2d) return { value: new Error(line), end: after };
      const n = Number(line);
      if (after + n + 2 > buf.length) return null;
      return { value: new Error(buf.toString('latin1', after, after + n)), end: after + n + 2 };
    }
    case 0x3a: return { value: Number(line), end: after }; // :
    case 0x28: return { value: BigInt(line), end: after }; // ( big number
    case 0x2c: return { value: line, end: after }; // , double
    case 0x23: return { value: line === 't' ? 1 : 0, end: after }; // # boolean
    case 0x5f: return { value: null, end: after }; // _ null
    case 0x24: case 0x3d: { // $ and = (verbatim)
      const n = Number(line);
      if (n < 0) return { value: null, end: after };
      if (after + n + 2 > buf.length) return null;
      return { value: buf.subarray(after, after + n), end: after + n + 2 };
    }
    case 0x2a: case 0x7e: case 0x3e: case 0x25: case 0x7c: { // * ~ > % |
      const n = Number(line);
      if (n < 0) return { value: null, end: after };
      const count = type === 0x25 || type === 0x7c ? n * 2 : n;
      const items: Decoded[] = [];
      let p = after;
      for (let i = 0; i < count; i++) {
        const r = parseReply(buf, p);
        if (r === null) return null;
        items.push(r.value);
        p = r.end;
      }
      if (type === 0x7c) { // attribute: the real reply follows
        const r = parseReply(buf, p);
        return r;
      }
      if (type === 0x25) {
        const m = new Map<string, Decoded>();
        for (let i = 0; i < items.length; i += 2) m.set(String(items[i]), items[i + 1]);
        return { value: m, end: p };
      }
      return { value: items, end: p };
    }
    default:
      throw new Error(`bad reply type byte ${type}: ${JSON.stringify(buf.toString('latin1', pos, pos + 40))}`);
  }
}

/**
 * End of the complete reply at buf[pos...], or -1 if incomplete: a byte-level scan without
 * decoding (a million-element reply scans in milliseconds; decoding it took seconds).
 */
export function scanEnd(buf: Buffer, pos: number): number {
  const left: number[] = [1];
  let p = pos;
  while (left.length > 0) {
    const top = left.length - 1;
    if (left[top] === 0) {
      left.pop();
      continue;
    }
    left[top]--;
    if (p >= buf.length) return -1;
    const type = buf[p];
    const cr = buf.indexOf(13, p);
    if (cr < 0 || cr + 1 >= buf.length) return -1;
    const after = cr + 2;
    let n = 0;
    let neg = false;
    for (let i = p + 1; i < cr; i++) {
      const d = buf[i];
      if (d === 0x2d) neg = true;
      else n = n * 10 + (d - 48);
    }
    if (neg) n = -n;
    switch (type) {
      case 0x24: case 0x3d: case 0x21: // $ = !
        if (n < 0) p = after;
        else if (after + n + 2 > buf.length) return -1;
        else p = after + n + 2;
        break;
      case 0x2a: case 0x7e: case 0x3e: // * ~ >
        p = after;
        if (n > 0) left.push(n);
        break;
      case 0x25: case 0x7c: // % | (an attribute precedes the reply it annotates)
        p = after;
        if (type === 0x7c) left[top]++;
        if (n > 0) left.push(2 * n);
        break;
      default:
        p = after;
    }
  }
  return p;
}

/** Replies at most this large are decoded; larger ones keep only their bytes (errors are small). */
const DECODE_MAX = 4 * 1024 * 1024;

/** What a call got: the reply bytes, or that the server closed the connection or said nothing. */
export type Outcome =
  | { kind: 'reply'; bytes: Buffer; value: Decoded }
  | { kind: 'closed' }
  | { kind: 'silent' }
  /** More than MAX_REPLY bytes arrived for one reply (the fuzzer stops reading it). */
  | { kind: 'huge'; bytes: number };

/** A reply this large is not read to its end (the connection is closed). */
export const MAX_REPLY = 64 * 1024 * 1024;

export class FuzzConn {
  private buf = Buffer.alloc(0);
  private chunks: Buffer[] = [];
  private pending = 0;
  private closed = false;
  private overflow = 0;
  private wake: (() => void) | null = null;
  /** Bytes buffered at the last parse that found the reply incomplete. */
  private lastTry = 0;
  private idle: NodeJS.Timeout | null = null;

  private constructor(private readonly sock: net.Socket) {
    sock.on('data', (d) => {
      this.chunks.push(d);
      this.pending += d.length;
      if (this.buf.length + this.pending > MAX_REPLY) {
        this.overflow = this.buf.length + this.pending;
        this.chunks = [];
        this.pending = 0;
        this.buf = Buffer.alloc(0);
        sock.destroy();
      }
      // A large reply is parsed again when its size has doubled, or when the data pauses (its
      // end), not on every chunk: parsing stays linear in its length, not quadratic.
      const total = this.buf.length + this.pending;
      if (total < 1024 * 1024 || total >= 2 * this.lastTry) {
        this.wake?.();
        return;
      }
      if (this.idle !== null) clearTimeout(this.idle);
      this.idle = setTimeout(() => { this.idle = null; this.wake?.(); }, 20);
    });
    sock.on('close', () => { this.closed = true; this.wake?.(); });
    sock.on('error', () => {});
  }

  /** Connect, or null if no connection was accepted within `timeoutMs`. */
  static connect(port: number, timeoutMs: number): Promise<FuzzConn | null> {
    return new Promise((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' });
      const t = setTimeout(() => { s.destroy(); resolve(null); }, timeoutMs);
      s.once('connect', () => { clearTimeout(t); resolve(new FuzzConn(s)); });
      s.once('error', () => { clearTimeout(t); resolve(null); });
    });
  }

  send(args: ReadonlyArray<string | Buffer>): void {
    if (!this.closed) this.sock.write(encode(args));
  }

  /** The next reply, within `timeoutMs`. */
  async next(timeoutMs: number): Promise<Outcome> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.pending > 0) {
        this.buf = Buffer.concat([this.buf, ...this.chunks]);
        this.chunks = [];
        this.pending = 0;
      }
      if (this.overflow > 0) return { kind: 'huge', bytes: this.overflow };
      const end = scanEnd(this.buf, 0);
      if (end >= 0) {
        const bytes = Buffer.from(this.buf.subarray(0, end));
        this.buf = this.buf.subarray(end);
        this.lastTry = 0;
        return { kind: 'reply', bytes, value: end <= DECODE_MAX ? parseReply(bytes, 0)!.value : null };
      }
      this.lastTry = this.buf.length;
      if (this.closed) return { kind: 'closed' };
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'silent' };
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => { clearTimeout(t); resolve(); };
      });
      this.wake = null;
    }
  }

  close(): void {
    if (this.idle !== null) clearTimeout(this.idle);
    this.sock.destroy();
  }
}

/** Send one command on `c` (null: no connection), read its reply, close. */
export async function lastCall(c: FuzzConn | null, args: ReadonlyArray<string | Buffer>, timeoutMs: number): Promise<Outcome> {
  if (c === null) return { kind: 'closed' };
  try {
    c.send(args);
    return await c.next(timeoutMs);
  } finally {
    c.close();
  }
}

/** Connect, send one command, read its reply, close. */
export async function callOnce(port: number, args: ReadonlyArray<string | Buffer>, timeoutMs: number): Promise<Outcome> {
  return lastCall(await FuzzConn.connect(port, timeoutMs), args, timeoutMs);
}
