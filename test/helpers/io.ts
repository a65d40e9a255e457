/**
 * ioredis connections that fail fast (one try, no reconnect), kept so that a test file's
 * `after` hook can close them all: the set-up shared by tests that drive both servers.
 */
import { Redis } from 'ioredis';

export class IoClients {
  private readonly opened: Redis[] = [];

  /** A new connection to 127.0.0.1:port; `quiet` swallows its error events (a killed server). */
  io(port: number, quiet = true): Redis {
    const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => null });
    if (quiet) r.on('error', () => {});
    this.opened.push(r);
    return r;
  }

  /** Close it with the others at the end. */
  keep(r: Redis): Redis {
    this.opened.push(r);
    return r;
  }

  closeAll(): void {
    for (const c of this.opened) c.disconnect();
  }
}
