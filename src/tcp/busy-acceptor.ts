/**
 * New connections while a script is busy on the engine thread (scripting/host.ts polls the
 * connected clients from the script's count hook, as Redis's processEventsWhileBlocked). The
 * engine thread cannot accept then (Node has no synchronous accept, and its event loop does not
 * run inside the script), yet a new redis-cli is how one sends SCRIPT KILL or SHUTDOWN NOSAVE.
 * So a small worker thread (acceptor-worker.ts) accepts on the same listening socket during busy
 * periods only, and passes the descriptors back through shared memory; the engine thread wraps
 * each in a Socket and a Connection and polls it like the others. Started at the first busy
 * period; costs nothing otherwise.
 */
import { Worker } from 'node:worker_threads';
import { A_STATE, A_ACK, A_HEAD, A_TAIL, A_RING, A_RING_SIZE, A_SIZE } from './busy-acceptor-shared.js';

/** Longest wait for the acceptor to stop as a busy period ends. */
const STOP_WAIT_MS = 1000;

export class BusyAcceptor {
  private ctl: Int32Array | null = null;
  private worker: Worker | null = null;
  private dead = false;

  constructor(private readonly listenFd: () => number, private readonly adopt: (fd: number) => void) {}

  /** A busy period starts: accept from the other thread. */
  start(): void {
    if (this.dead) return;
    if (this.worker === null) {
      const fd = this.listenFd();
      if (fd < 0) return;
      const ctl = new Int32Array(new SharedArrayBuffer(A_SIZE * 4));
      Atomics.store(ctl, A_STATE, 1);
      try {
        const w = new Worker(new URL('./acceptor-worker.js', import.meta.url), { workerData: { ctl, fd } });
        w.unref();
        w.on('error', (e) => console.error('busy acceptor error:', e));
        w.on('exit', () => {
          this.dead = true;
        });
        this.worker = w;
        this.ctl = ctl;
      } catch (e) {
        console.error('busy acceptor could not start:', e);
        this.dead = true;
      }
      return;
    }
    Atomics.store(this.ctl!, A_STATE, 1);
    Atomics.notify(this.ctl!, A_STATE);
  }

  /** During the busy period: adopt what was accepted. */
  poll(): void {
    const ctl = this.ctl;
    if (ctl === null) return;
    let tail = Atomics.load(ctl, A_TAIL);
    while (tail < Atomics.load(ctl, A_HEAD)) {
      const fd = ctl[A_RING + (tail % A_RING_SIZE)];
      Atomics.store(ctl, A_TAIL, ++tail);
      this.adopt(fd);
    }
  }

  /** The busy period is over: stop the acceptor, then adopt the last connections it took. */
  end(): void {
    const ctl = this.ctl;
    if (ctl === null) return;
    Atomics.store(ctl, A_STATE, 0);
    const until = Date.now() + STOP_WAIT_MS;
    while (!this.dead && Atomics.load(ctl, A_ACK) !== 0) {
      const left = until - Date.now();
      if (left <= 0) break;
      Atomics.wait(ctl, A_ACK, 1, Math.min(left, 50));
    }
    this.poll();
  }
}
