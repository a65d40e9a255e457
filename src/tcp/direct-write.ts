/**
 * perf: replies written straight to the socket's libuv handle instead of through
 * net.Socket.write (Writable.write -> writeOrBuffer -> _write -> writeGeneric, a WriteWrap
 * object, an afterWrite nextTick and its info object per write). With request/reply traffic
 * (`redis-benchmark -P 1`, BullMQ, EVALSHA) that machinery was a large part of our user CPU
 * per request: see bench/RESULTS.md, "issue 21 (helper perf-io)".
 *
 * The handle's writeBuffer tries the kernel first (uv_try_write). When every byte went out
 * (the usual case) nothing else happens: the request object is never touched, so one is
 * reused. When the kernel buffer is full, libuv keeps the request and the Buffer until the
 * write completes (oncomplete); this sink then counts those bytes in writableLength, answers
 * false (backpressure: the connection stops reading) and reports the completion as a drain.
 * Later output goes through socket.write until then: libuv queues it behind (uv_try_write
 * refuses while its write queue is not empty), so the order holds.
 *
 * Every other case goes through socket.write as before: bytes already queued in the stream
 * (order), a corked stream, a closed handle. Relies on process.binding('stream_wrap')
 * (WriteWrap, streamBaseState; stable since Node 12) and the handle's writeBuffer; when they
 * are missing, directSink() answers null and the socket is used as it is.
 */
import type { Socket } from 'node:net';
import type { ByteSink } from '../resp/writer.js';

interface WriteReq {
  buffer?: Uint8Array;
  oncomplete?: (status: number) => void;
}
interface StreamWrap {
  WriteWrap: new () => WriteReq;
  streamBaseState: Int32Array;
  kLastWriteWasAsync: number;
}
interface Handle {
  writeBuffer(req: WriteReq, b: Uint8Array): number;
}

let binding: StreamWrap | null | undefined;

function streamWrap(): StreamWrap | null {
  if (binding !== undefined) return binding;
  binding = null;
  try {
    const b = (process as unknown as { binding(name: string): StreamWrap }).binding('stream_wrap');
    if (typeof b.WriteWrap === 'function' && b.streamBaseState instanceof Int32Array && typeof b.kLastWriteWasAsync === 'number') binding = b;
  } catch {
    // not available: socket.write it is
  }
  return binding;
}

class DirectSink implements ByteSink {
  /** Bytes of direct writes libuv still holds (the kernel buffer was full). */
  private inflight = 0;
  private req: WriteReq;

  constructor(private readonly sock: Socket, private readonly sw: StreamWrap, private readonly onDrain: () => void) {
    this.req = new sw.WriteWrap();
  }

  /**
   * perf: the stream was corked or written to and may still hold bytes; until it is seen
   * empty and uncorked again, its state is asked at every write. Otherwise (request/reply
   * traffic) the stream's getters are not read per reply. Every write and cork of the
   * connection goes through this sink; a destroyed socket has no handle.
   */
  private streamed = false;

  get writableLength(): number {
    return this.streamed ? this.sock.writableLength + this.inflight : this.inflight;
  }

  cork(): void {
    this.streamed = true;
    this.sock.cork();
  }

  uncork(): void {
    this.sock.uncork();
  }

  write(b: Uint8Array): boolean {
    const s = this.sock;
    const h = (s as unknown as { _handle?: Handle | null })._handle;
    if (this.streamed) {
      if (s.writableLength !== 0 || s.writableCorked !== 0) return s.write(b);
      this.streamed = false;
    }
    if (h == null || this.inflight !== 0 || s.writableEnded) {
      this.streamed = true;
      return s.write(b);
    }
    const req = this.req;
    const err = h.writeBuffer(req, b);
    if (err !== 0) {
      // EPIPE, ECONNRESET...: as socket.write does, the socket is destroyed ('close' follows).
      s.destroy();
      return false;
    }
    if (this.sw.streamBaseState[this.sw.kLastWriteWasAsync] === 0) return true;
    // libuv owns req and b until the write completes: keep b alive, use a new req next time.
    this.req = new this.sw.WriteWrap();
    req.buffer = b;
    this.inflight += b.length;
    req.oncomplete = (status: number) => {
      req.buffer = undefined;
      this.inflight -= b.length;
      if (status < 0) {
        if (!s.destroyed) s.destroy();
        return;
      }
      // Reading resumes once libuv has every direct byte; what the stream still holds is its
      // own affair (its write() answers false again when it holds too much).
      if (this.inflight === 0) this.onDrain();
    };
    return false;
  }
}

/** A ByteSink writing `sock`'s output through its handle (null: not possible here). */
export function directSink(sock: Socket, onDrain: () => void): ByteSink | null {
  const sw = streamWrap();
  const h = (sock as unknown as { _handle?: Partial<Handle> | null })._handle;
  if (sw === null || h == null || typeof h.writeBuffer !== 'function') return null;
  return new DirectSink(sock, sw, onDrain);
}
