/**
 * The RESP TCP listener: accepts connections up to `maxclients` (then answers Redis's error
 * and closes), and closes them all on shutdown.
 */
import net from 'node:net';
import type { Engine } from '../engine/engine.js';
import { Connection } from './connection.js';
import { BusyAcceptor } from './busy-acceptor.js';
import { E } from '../resp/errors.js';

/**
 * One read buffer for every connection: reads are handled one at a time, synchronously, and
 * the parser copies out what it keeps (Connection.onRead). 64 KB, libuv's usual read size.
 */
const READ_BUF = Buffer.allocUnsafe(64 * 1024);

/** The private fields of a net.Socket that the read set-up below relies on. */
interface SocketInternals {
  _handle: unknown;
  _server: net.Server | null;
  server: net.Server | null;
}

export class TcpServer {
  private readonly server: net.Server;
  private readonly conns = new Set<Connection>();

  constructor(private readonly engine: Engine) {
    // Paused on connect: accept() moves the connection to a socket that reads into READ_BUF
    // before anything is read.
    this.server = net.createServer({ noDelay: true, pauseOnConnect: true }, (sock) => this.accept(sock));
    this.server.on('error', (err) => console.error('tcp server error:', err));
    engine.busyHooks.push(new BusyAcceptor(() => this.listenFd(), (fd) => this.adopt(fd)));
  }

  /** The listening socket's descriptor (-1 if unknown). */
  private listenFd(): number {
    const h = (this.server as unknown as { _handle: { fd?: number } | null })._handle;
    return h?.fd ?? -1;
  }

  /** A connection accepted by the busy acceptor (busy-acceptor.ts): from its descriptor on, as accept(). */
  private adopt(fd: number): void {
    let sock: net.Socket;
    try {
      sock = new net.Socket({ fd, readable: true, writable: true });
    } catch (e) {
      console.error('tcp: a connection accepted during a busy script could not be adopted:', e);
      return;
    }
    this.accept(sock);
  }

  private accept(sock: net.Socket): void {
    if (this.engine.clients.size >= this.engine.cfgInt('maxclients')) {
      this.engine.stats.rejectedConnections++;
      sock.on('error', () => {});
      sock.end(`-${E.MAX_CLIENTS}\r\n`);
      return;
    }
    let c: Connection | undefined;
    const own = this.ownReads(sock, (n, buf) => {
      c!.onRead(n, buf);
      if (n === buf.length) c!.yieldTurn();
    });
    if (own !== null) {
      c = new Connection(own, this.engine, (x) => this.conns.delete(x), true);
    } else {
      c = new Connection(sock, this.engine, (x) => this.conns.delete(x));
      sock.resume();
    }
    this.conns.add(c);
  }

  /**
   * perf: a server cannot give its sockets an `onread` buffer (only net.connect/new Socket
   * take the option), so the accepted handle is moved into a new Socket that has one: each
   * read then goes straight to `cb` with no Buffer allocated and no stream machinery (about
   * 1 µs less CPU per read). Relies on net.Socket's `handle` option and `_handle`/`_server`
   * fields (stable since Node 12); returns null, leaving `sock` as it was, if they are not
   * there.
   */
  private ownReads(sock: net.Socket, cb: (n: number, buf: Buffer) => void): net.Socket | null {
    const old = sock as unknown as SocketInternals;
    const handle = old._handle;
    if (handle === null || handle === undefined || old._server !== this.server) return null;
    let fresh: net.Socket;
    try {
      fresh = new net.Socket({
        handle, readable: true, writable: true, onread: { buffer: READ_BUF, callback: cb },
      } as net.SocketConstructorOpts);
    } catch {
      return null;
    }
    // The old socket forgets the handle (it is never used again, and must not count itself
    // out of the server's connections: the new one does, once, when it closes).
    old._handle = null;
    old._server = null;
    const f = fresh as unknown as SocketInternals;
    f.server = this.server;
    f._server = this.server;
    return fresh;
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
