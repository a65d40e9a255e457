/**
 * Synchronous messaging between the engine thread and the scripting worker.
 *
 * Two paths. A script's redis.call and its reply, the hot path of a moved script, travel as
 * frames: bytes in a SharedArrayBuffer region per direction, announced by a length in the
 * control array, with no MessagePort, structured clone or allocation per call. Everything else
 * (requests, 'done', logs, ACL checks, frames too big for a region) is a message on the
 * MessagePort (structured clone), received with receiveMessageOnPort. Both are received in the
 * order they were sent: a counter of posted port messages tells the receiver that a port
 * message comes before the frame.
 *
 * A frame region is written only by its sender and only when the previous frame was consumed:
 * the protocol alternates (the worker sends a call frame and waits for its reply frame; the
 * engine sends a reply frame only in answer to a call frame), so a frame stays valid until its
 * receiver answers it.
 *
 * Waiting: a shared wake-up counter per side; the receiver checks for work, then sleeps in
 * Atomics.wait.
 *
 * Slots of the control array:
 *   0  wake-ups for the engine thread      1  wake-ups for the worker
 *   2  kill request (SCRIPT KILL / FUNCTION KILL), read by the Lua count hook
 *   3  the worker has exited (set by its exit handler): waiting for it would never end
 *   4  length of the frame waiting for the engine thread (0: none)   5  ... for the worker
 *   6  port messages posted to the engine thread                      7  ... to the worker
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';

/** Atomics.waitAsync (V8, Node 16+); not yet in the ES2022 lib typings. */
const waitAsync = (Atomics as unknown as {
  waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string };
}).waitAsync;

export const CTL_MAIN = 0;
export const CTL_WORKER = 1;
export const CTL_KILL = 2;
export const CTL_DEAD = 3;
const CTL_FRAME = 4;
const CTL_POSTED = 6;
export const CTL_SIZE = 8;

/** Bytes of each direction's frame region; larger calls and replies go on the port. */
export const FRAME_MAX = 256 * 1024;

/** recv() / poll() result: a frame is waiting in `inFrame`, `frameLen` bytes. */
export const FRAME = Symbol('frame');

/** Thrown by recv / waitAsync when the peer thread has exited. */
export class PeerGone extends Error {
  constructor() {
    super('scripting worker exited');
  }
}

/** The shared memory of a channel: control slots and the two frame regions. */
export interface ChannelMemory {
  ctl: Int32Array;
  frames: SharedArrayBuffer;
}

export function channelMemory(): ChannelMemory {
  return { ctl: new Int32Array(new SharedArrayBuffer(CTL_SIZE * 4)), frames: new SharedArrayBuffer(2 * FRAME_MAX) };
}

export class SyncChannel {
  readonly ctl: Int32Array;
  /** My outgoing frame's region: write a frame there, then sendFrame(len). */
  readonly outFrame: Buffer;
  /** The incoming frame's region (valid after recv/poll returned FRAME, until I answer). */
  readonly inFrame: Buffer;
  /** Length of the frame recv/poll returned. */
  frameLen = 0;
  /** Port messages received so far (CTL_POSTED + mine counts those posted). */
  private received = 0;

  constructor(
    mem: ChannelMemory,
    private readonly port: MessagePort,
    private readonly mine: number,
    private readonly peer: number,
  ) {
    this.ctl = mem.ctl;
    this.outFrame = Buffer.from(mem.frames, peer * FRAME_MAX, FRAME_MAX);
    this.inFrame = Buffer.from(mem.frames, mine * FRAME_MAX, FRAME_MAX);
  }

  send(msg: unknown): void {
    this.port.postMessage(msg);
    Atomics.add(this.ctl, CTL_POSTED + this.peer, 1);
    this.wake();
  }

  /** Send the frame written in outFrame[0, len) (0 < len <= FRAME_MAX). */
  sendFrame(len: number): void {
    Atomics.store(this.ctl, CTL_FRAME + this.peer, len);
    this.wake();
  }

  private wake(): void {
    Atomics.add(this.ctl, this.peer, 1);
    Atomics.notify(this.ctl, this.peer);
  }

  /** A message or FRAME if one is waiting, else undefined (never blocks). */
  poll(): unknown {
    const ctl = this.ctl;
    if (Atomics.load(ctl, CTL_POSTED + this.mine) !== this.received) {
      const m = receiveMessageOnPort(this.port);
      if (m !== undefined) {
        this.received++;
        return m.message;
      }
    }
    const len = Atomics.load(ctl, CTL_FRAME + this.mine);
    if (len === 0) return undefined;
    Atomics.store(ctl, CTL_FRAME + this.mine, 0);
    this.frameLen = len;
    return FRAME;
  }

  /** Wait up to `timeoutMs` (Infinity = forever) for a message or FRAME; undefined on timeout. */
  recv(timeoutMs = Infinity): unknown {
    const ctl = this.ctl;
    const mine = this.mine;
    let deadline = -1;
    for (;;) {
      const seen = Atomics.load(ctl, mine);
      const m = this.poll();
      if (m !== undefined) return m;
      if (Atomics.load(ctl, CTL_DEAD) !== 0) throw new PeerGone();
      let left = Infinity;
      if (timeoutMs !== Infinity) {
        const now = performance.now();
        if (deadline < 0) deadline = now + timeoutMs;
        left = deadline - now;
        if (left <= 0) return undefined;
      }
      // (No spin first: on a loaded machine the peer seldom holds a core meanwhile, and a spin
      // of a few µs made a crossing dearer, of tens of µs much dearer: RESULTS-lua.md.)
      Atomics.wait(ctl, mine, seen, left);
    }
  }

  /** Resolves once a message or frame is waiting (the engine thread's wait while a script is busy). */
  async waitAsync(): Promise<void> {
    const ctl = this.ctl;
    for (;;) {
      const seen = Atomics.load(ctl, this.mine);
      if (Atomics.load(ctl, CTL_POSTED + this.mine) !== this.received || Atomics.load(ctl, CTL_FRAME + this.mine) !== 0) return;
      if (Atomics.load(ctl, CTL_DEAD) !== 0) throw new PeerGone();
      const r = waitAsync(ctl, this.mine, seen);
      if (r.async) await r.value;
    }
  }
}
