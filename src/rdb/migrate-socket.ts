/**
 * MIGRATE's connections to target instances (cluster.c migrateGetSocket & co): one cached
 * connection per host:port, at most 64, closed after 10 s unused; replies are read line by
 * line with a timeout per read, as syncReadLine does. Asynchronous: the engine keeps serving
 * other clients while a MIGRATE waits (Redis blocks the whole server instead).
 */
import net from 'node:net';

const CACHE_MAX = 64;
const CACHE_TTL_MS = 10_000;

/** A connect/read/write failure; `timeout` for Redis's ETIMEDOUT case (no retry). */
export class MigrateIoError extends Error {
  /**
   * `unreachable`: the address could not even be formed (no such host, a port out of range):
   * Redis's anetTcpNonBlockConnect fails at once there, a refused connection only at the write.
   */
  constructor(readonly phase: 'connect' | 'write' | 'read', readonly timeout: boolean, readonly unreachable = false) {
    super(phase);
  }
}

const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_SERVICE', 'ERR_SOCKET_BAD_PORT', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE']);

export class MigrateSocket {
  /** Database selected on the target by the last successful MIGRATE (-1: unknown). */
  lastDb = -1;
  private buf = Buffer.alloc(0);
  private waiter: (() => void) | null = null;
  private failed: Error | null = null;
  private idle: NodeJS.Timeout | null = null;

  private constructor(readonly key: string, private readonly sock: net.Socket) {
    sock.on('data', (d) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.wake();
    });
    const fail = (e: Error) => {
      this.failed ??= e;
      this.wake();
      drop(this);
    };
    sock.on('error', fail);
    sock.on('close', () => fail(new Error('closed')));
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  static connect(host: string, port: number, timeoutMs: number): Promise<MigrateSocket> {
    return new Promise((resolve, reject) => {
      let sock: net.Socket;
      try {
        sock = net.connect({ host, port });
      } catch {
        reject(new MigrateIoError('connect', false, true)); // a port net cannot use
        return;
      }
      sock.setNoDelay(true);
      const t = setTimeout(() => {
        sock.destroy();
        reject(new MigrateIoError('connect', true));
      }, timeoutMs);
      sock.once('connect', () => {
        clearTimeout(t);
        sock.removeAllListeners('error');
        resolve(new MigrateSocket(`${host}:${port}`, sock));
      });
      sock.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(t);
        reject(new MigrateIoError('connect', false, UNRESOLVED.has(err.code ?? '')));
      });
    });
  }

  write(data: Buffer, timeoutMs: number): Promise<void> {
    if (this.failed) return Promise.reject(new MigrateIoError('write', false));
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new MigrateIoError('write', true)), timeoutMs);
      this.sock.write(data, (err) => {
        clearTimeout(t);
        if (err) reject(new MigrateIoError('write', false));
        else resolve();
      });
    });
  }

  /** The next reply line (without CRLF), within timeoutMs. */
  async readLine(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.buf.indexOf('\r\n');
      if (i >= 0) {
        const line = this.buf.latin1Slice(0, i);
        this.buf = this.buf.subarray(i + 2);
        return line;
      }
      if (this.failed) throw new MigrateIoError('read', false);
      const left = deadline - Date.now();
      if (left <= 0) throw new MigrateIoError('read', true);
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.waiter = null;
          resolve();
        }, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  private chain: Promise<unknown> = Promise.resolve();

  /** Run `fn` after the exchanges already queued on this connection (one at a time). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Used again: restart the idle timer. */
  touch(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => close(this.key), CACHE_TTL_MS);
    this.idle.unref();
  }

  destroy(): void {
    if (this.idle) clearTimeout(this.idle);
    this.sock.destroy();
  }
}

const cache = new Map<string, MigrateSocket>();

function drop(s: MigrateSocket): void {
  if (cache.get(s.key) === s) cache.delete(s.key);
}

/** migrateGetSocket: the cached connection to host:port, or a new one. */
export async function getSocket(host: string, port: number, timeoutMs: number): Promise<MigrateSocket> {
  const key = `${host}:${port}`;
  let s = cache.get(key);
  if (s === undefined) {
    if (cache.size >= CACHE_MAX) {
      // Too many items: drop one at random (Redis does the same).
      const keys = [...cache.keys()];
      close(keys[Math.floor(Math.random() * keys.length)]);
    }
    s = await MigrateSocket.connect(host, port, timeoutMs);
    const other = cache.get(key);
    if (other !== undefined) {
      // A concurrent MIGRATE connected first: keep one.
      s.destroy();
      s = other;
    } else {
      cache.set(key, s);
    }
  }
  s.touch();
  return s;
}

/** migrateCloseSocket */
export function close(key: string): void {
  const s = cache.get(key);
  if (s === undefined) return;
  cache.delete(key);
  s.destroy();
}

/** INFO migrate_cached_sockets */
export function cachedSockets(): number {
  return cache.size;
}
