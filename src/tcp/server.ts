/**
 * The RESP TCP listener: accepts connections up to `maxclients` (then answers Redis's error
 * and closes), and closes them all on shutdown.
 */
import net from 'node:net';
import type { Engine } from '../engine/engine.js';
import { Connection } from './connection.js';
import { E } from '../resp/errors.js';

export class TcpServer {
  private readonly server: net.Server;
  private readonly conns = new Set<Connection>();

  constructor(private readonly engine: Engine) {
    this.server = net.createServer({ noDelay: true }, (sock) => this.accept(sock));
    this.server.on('error', (err) => console.error('tcp server error:', err));
  }

  private accept(sock: net.Socket): void {
    if (this.engine.clients.size >= this.engine.cfgInt('maxclients')) {
      this.engine.stats.rejectedConnections++;
      sock.on('error', () => {});
      sock.end(`-${E.MAX_CLIENTS}\r\n`);
      return;
    }
    const c = new Connection(sock, this.engine, (x) => this.conns.delete(x));
    this.conns.add(c);
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ port, host, backlog: 511 }, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  /** Stop accepting, let connections finish what they have read, then close them. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const c of this.conns) c.end();
    });
  }
}
