/**
 * A tiny raw RESP client for wire-level tests: sends commands, returns each reply's exact
 * bytes (no decoding), so two servers' replies can be compared byte for byte.
 */
import net from 'node:net';

/** Encode a command as a RESP multibulk. */
export function encode(args: ReadonlyArray<string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = typeof a === 'string' ? Buffer.from(a) : a;
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Length of the complete RESP2 or RESP3 reply at buf[pos...], or -1 if incomplete. */
export function replyLength(buf: Buffer, pos = 0): number {
  if (pos >= buf.length) return -1;
  const nl = buf.indexOf('\r\n', pos);
  if (nl < 0) return -1;
  const type = buf[pos];
  const head = nl + 2 - pos;
  switch (type) {
    case 0x2b: case 0x2d: case 0x3a: // + - :
    case 0x5f: case 0x2c: case 0x23: case 0x28: // _ , # (
      return head;
    case 0x24: case 0x3d: case 0x21: { // $ = !
      const n = Number(buf.toString('latin1', pos + 1, nl));
      if (n < 0) return head;
      return nl + 2 + n + 2 <= buf.length ? head + n + 2 : -1;
    }
    case 0x2a: case 0x7e: case 0x3e: case 0x25: { // * ~ > %
      let n = Number(buf.toString('latin1', pos + 1, nl));
      if (type === 0x25) n *= 2;
      let p = nl + 2;
      for (let i = 0; i < n; i++) {
        const l = replyLength(buf, p);
        if (l < 0) return -1;
        p += l;
      }
      return p - pos;
    }
    default:
      throw new Error(`bad reply type byte ${type} at ${pos}: ${JSON.stringify(buf.toString('latin1', pos, pos + 40))}`);
  }
}

export class RawClient {
  private buf = Buffer.alloc(0);
  private waiters: { resolve: (b: Buffer) => void; reject: (e: Error) => void }[] = [];
  private closedErr: Error | null = null;
  readonly closed: Promise<void>;

  private constructor(readonly sock: net.Socket) {
    sock.on('data', (d) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      this.drain();
    });
    this.closed = new Promise((resolve) => {
      sock.on('close', () => {
        this.closedErr = new Error('connection closed');
        for (const w of this.waiters.splice(0)) w.reject(this.closedErr);
        resolve();
      });
    });
    sock.on('error', () => {});
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host }, () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  private drain(): void {
    while (this.waiters.length > 0) {
      const n = replyLength(this.buf);
      if (n < 0) return;
      const reply = this.buf.subarray(0, n);
      this.buf = this.buf.subarray(n);
      this.waiters.shift()!.resolve(Buffer.from(reply));
    }
  }

  /** Wait for the next reply (raw bytes). */
  next(timeoutMs = 5000): Promise<Buffer> {
    if (this.closedErr && replyLength(this.buf) < 0) return Promise.reject(this.closedErr);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('timeout waiting for reply')), timeoutMs);
      this.waiters.push({
        resolve: (b) => { clearTimeout(t); resolve(b); },
        reject: (e) => { clearTimeout(t); reject(e); },
      });
      this.drain();
    });
  }

  /** Send one command and return its reply bytes. */
  call(...args: Array<string | Buffer>): Promise<Buffer> {
    this.sock.write(encode(args));
    return this.next();
  }

  /** Send raw bytes. */
  write(b: Buffer | string): void {
    this.sock.write(b);
  }

  /** Everything received and not yet consumed as a reply. */
  leftover(): Buffer {
    return this.buf;
  }

  close(): void {
    this.sock.destroy();
  }
}
