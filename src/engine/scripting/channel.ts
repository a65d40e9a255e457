/**
 * Synchronous messaging between the engine thread and the scripting worker: messages travel on a
 * MessagePort (structured clone) and are received with receiveMessageOnPort; a shared Int32Array
 * carries a wake-up counter per side so that the receiver can sleep in Atomics.wait.
 *
 * Slots of the control array:
 *   0  wake-ups for the engine thread      1  wake-ups for the worker
 *   2  kill request (SCRIPT KILL / FUNCTION KILL), read by the Lua count hook
 *   3  the worker has exited (set by its exit handler): waiting for it would never end
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';

/** Atomics.waitAsync (V8, Node 16+); not yet in the ES2022 lib typings. */
const waitAsync = (Atomics as unknown as {
  waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string };
}).waitAsync;

export const CTL_MAIN = 0;
export const CTL_WORKER = 1;
export const CTL_KILL = 2;
export const CTL_DEAD = 3;
export const CTL_SIZE = 4;

/** Thrown by recv / waitAsync when the peer thread has exited. */
export class PeerGone extends Error {
  constructor() {
    super('scripting worker exited');
  }
}

export class SyncChannel {
  /** A message taken off the port by waitAsync() and not yet returned. */
  private peeked: { message: unknown } | undefined;

  constructor(
    readonly ctl: Int32Array,
    private readonly port: MessagePort,
    private readonly mine: number,
    private readonly peer: number,
  ) {}

  send(msg: unknown): void {
    this.port.postMessage(msg);
    Atomics.add(this.ctl, this.peer, 1);
    Atomics.notify(this.ctl, this.peer);
  }

  private next(): { message: unknown } | undefined {
    const p = this.peeked;
    if (p !== undefined) {
      this.peeked = undefined;
      return p;
    }
    return receiveMessageOnPort(this.port);
  }

  /** A message if one is waiting, else undefined (never blocks). */
  poll(): unknown {
    return this.next()?.message;
  }

  /** Wait up to `timeoutMs` (Infinity = forever) for a message; undefined on timeout. */
  recv(timeoutMs = Infinity): unknown {
    const deadline = timeoutMs === Infinity ? Infinity : performance.now() + timeoutMs;
    for (;;) {
      const seen = Atomics.load(this.ctl, this.mine);
      const m = this.next();
      if (m !== undefined) return m.message;
      if (Atomics.load(this.ctl, CTL_DEAD) !== 0) throw new PeerGone();
      const left = deadline === Infinity ? Infinity : deadline - performance.now();
      if (left <= 0) return undefined;
      Atomics.wait(this.ctl, this.mine, seen, left);
    }
  }

  /** Resolves once a message is waiting (the engine thread's wait while a script is busy). */
  async waitAsync(): Promise<void> {
    for (;;) {
      const seen = Atomics.load(this.ctl, this.mine);
      if (this.peeked === undefined) this.peeked = receiveMessageOnPort(this.port);
      if (this.peeked !== undefined) return;
      if (Atomics.load(this.ctl, CTL_DEAD) !== 0) throw new PeerGone();
      const r = waitAsync(this.ctl, this.mine, seen);
      if (r.async) await r.value;
    }
  }
}
