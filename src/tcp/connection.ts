/**
 * One RESP connection: socket bytes -> parser -> engine -> writer -> one socket write per read,
 * made after the poll phase when several connections are open (deferFlush).
 *
 * Replies go to the socket's handle directly when nothing is queued (direct-write.ts), else
 * through socket.write. Backpressure: when a write reports a full kernel buffer, reading is
 * paused until it drains, so a client that does not read its replies stalls itself instead of
 * growing our memory. Output pushed without a request (pub/sub, MONITOR) is bounded by the output-buffer
 * limit of the client's class: over the hard limit, or over the soft limit for longer than its
 * time, the client is disconnected, as Redis's client-output-buffer-limit does.
 *
 * Input arrives either through the socket's `onread` callback into one process-wide read
 * buffer (server.ts sets that up: no allocation and no stream machinery per read) or, as a
 * fallback, through 'data' events. With the shared buffer, the parser copies whatever it has
 * not consumed (a partial command, commands behind a blocked one) before the read returns.
 */
import type { Socket } from 'node:net';
import { readSync } from 'node:fs';
import { Argv } from '../resp/argv.js';
import { Parse, RespParser } from '../resp/parser.js';
import { RespWriter } from '../resp/writer.js';
import { Client, noteReplyBytes, type Transport } from '../engine/client.js';
import type { Engine, HeldOutput } from '../engine/engine.js';
import type { QueuedReader } from '../engine/output-budget.js';
import { execute } from '../engine/dispatch.js';
import { parseBytes } from '../config.js';
import { clientMemoryChanged } from '../engine/client-evict.js';
import { directSink } from './direct-write.js';
import type { ByteSink } from '../resp/writer.js';

/** Commands one connection runs per event-loop turn before the others get theirs (yieldTurn). */
const TURN_COMMANDS = 256;

export class Connection implements Transport, HeldOutput, QueuedReader {
  readonly kind = 'tcp' as const;
  readonly client: Client;
  private readonly parser: RespParser;
  private readonly argv = new Argv();
  private readonly writer = new RespWriter();
  /** Where replies go: the socket's handle directly (direct-write.ts), else the socket. */
  private readonly out: ByteSink;
  private closing = false;
  private paused = false;
  private flushQueued = false;
  /** When the output buffer first went over the soft limit (0 = not over). */
  private softSince = 0;
  /** appendfsync always: output waits for a durable commit. */
  private held = false;
  /**
   * Reading was paused because input arrived while held. Pausing only then (not at every hold)
   * spares a request-reply client the two epoll_ctl calls of a pause and resume per command:
   * it sends nothing until it has its reply.
   */
  private heldPause = false;
  /** engine.dirty when the current input chunk started (did our commands write?). */
  private dirtyMark = 0;
  private lateInput = false;
  /** poll() met the end of the stream or an error: libuv reports it once the loop runs. */
  private pollOff = false;
  /**
   * Reading stopped for the rest of this event-loop turn: the last read filled the whole read
   * buffer (a deep pipeline, `redis-cli --pipe`), see sliceTurn().
   */
  private sliced = false;
  /** In `batch`: its replies go out in flushBatch (deferFlush). */
  private inBatch = false;

  /**
   * `ownRead`: the transport delivers reads through onRead() (from the socket's onread
   * callback) instead of 'data' events.
   */
  constructor(private readonly sock: Socket, private readonly engine: Engine, private readonly onClose: (c: Connection) => void, ownRead = false) {
    this.parser = new RespParser({
      maxBulk: engine.cfgInt('proto-max-bulk-len'),
      maxInline: 64 * 1024,
      maxMultibulk: 2147483647,
    });
    const addr = `${sock.remoteAddress}:${sock.remotePort}`;
    const laddr = `${sock.localAddress}:${sock.localPort}`;
    this.client = new Client(engine, this, this.writer, addr, laddr);
    liveConnections++;
    engine.register(this.client);
    sock.setNoDelay(true);
    const ka = engine.cfgInt('tcp-keepalive');
    if (ka > 0) sock.setKeepAlive(true, ka * 1000);
    if (!ownRead) sock.on('data', (chunk: Buffer) => this.onData(chunk, chunk.length));
    const onDrain = () => this.onDrain();
    this.out = directSink(sock, onDrain) ?? sock;
    sock.on('drain', onDrain);
    sock.on('error', () => {});
    sock.on('close', () => this.closed());
  }

  /**
   * Fairness: one client piping millions of commands must not hold the event loop. libuv
   * reads a ready socket again and again (up to 32 reads per readiness) and every read ran
   * all its commands, so other clients waited for seconds. Now a connection runs at most
   * TURN_COMMANDS commands (process()) and one full read buffer per turn of the event loop;
   * then it stops reading and continues after every other ready socket was served
   * (setImmediate runs after the poll phase), as Redis reads at most 16 KB per client per
   * iteration. Pipelines that fit in one read (-P 16) never get here.
   * Called after a read that filled the whole buffer (more input is waiting), and by process().
   */
  yieldTurn(): void {
    if (this.sliced || this.closing) return;
    this.sliced = true;
    if (!this.paused && !this.heldPause) this.sock.pause();
    setImmediate(this.continueTurn);
  }

  private readonly continueTurn = (): void => {
    this.sliced = false;
    if (this.closing) return;
    // What the last turn left in the parser runs first; it may yield again. Its replies wait
    // for the commit of its own writes, as those of a new input chunk (onData).
    if (!this.client.blocked && this.parser.buffered > 0) {
      if (this.held) this.lateInput = true;
      else this.dirtyMark = this.engine.dirty;
      this.process();
    }
    if (!this.sliced && !this.paused && !this.heldPause && !this.closing) this.sock.resume();
  };

  /** Bytes read into `buf` (the shared read buffer): parse and run them. */
  onRead(nread: number, buf: Buffer): void {
    this.onData(buf, nread);
    // The buffer is reused by the next read: keep only what the parser has not consumed.
    if (!this.closing) this.parser.detach(this.argv);
  }

  private onData(chunk: Buffer, len: number): void {
    if (this.closing) return;
    const eng = this.engine;
    // Any input counts as activity for `timeout`, as in Redis (a slow upload is not idle);
    // the engine's time is at most one cron tick old, plenty for a timeout in seconds.
    this.client.lastInteraction = eng.now;
    eng.stats.netInputBytes += len;
    eng.stats.readsProcessed++;
    const p = this.parser;
    const c = this.client;
    // Input while held: its replies may need a later commit, so the release re-asks the gate.
    if (this.held) {
      this.lateInput = true;
      // Read nothing more until the release (this chunk was already read), so that later
      // replies cannot overtake and a pipelining client cannot starve the others.
      if (!this.heldPause) {
        this.heldPause = true;
        if (!this.paused && !this.sliced) this.sock.pause();
      }
    } else this.dirtyMark = eng.dirty;
    p.push(chunk, this.argv, len);
    // The limit cannot be set below 1 MB: skip the option lookup for smaller inputs.
    if (p.buffered > 1024 * 1024 && p.buffered > eng.cfgInt('client-query-buffer-limit')) {
      // Redis: "closing client that reached max query buffer length"
      this.close(false);
      return;
    }
    if (!c.blocked) this.process();
    else this.flush();
    // maxmemory-clients: a query buffer left holding a partial command counts.
    if (eng.clientMemLimit !== 0 && p.buffered !== 0) clientMemoryChanged(eng);
  }

  /** Execute every complete command in the parser, until one blocks. */
  private process(): void {
    const p = this.parser;
    const argv = this.argv;
    const c = this.client;
    const eng = this.engine;
    let first = true;
    // While a busy script polls (poll()), everything read runs at once: SCRIPT KILL must not
    // wait behind a turn that cannot come before the script ends.
    let budget = eng.busyReply === null ? TURN_COMMANDS : -1;
    for (;;) {
      p.authRequired = !c.authenticated;
      const r = p.next(argv);
      if (r === Parse.INCOMPLETE) break;
      if (r === Parse.ERROR) {
        this.writer.error(p.error!);
        this.close(true);
        break;
      }
      // perf: back-to-back commands of one read start when the previous one ended (one clock
      // read per command instead of two, see dispatch.ts).
      if (!first) eng.clockNext = eng.lastClock;
      first = false;
      execute(c, argv, this.writer);
      if (this.closing || c.closed || c.blocked) break;
      if (--budget === 0) {
        this.yieldTurn();
        break;
      }
    }
    eng.clockNext = -1;
    if (!this.deferFlush()) this.flush();
  }

  /**
   * perf: with several connections, the replies of one poll phase go out together after it
   * (flushBatch, libuv's check phase), as Redis writes replies in beforeSleep
   * (handleClientsWithPendingWrites) instead of in the read handler. Each write wakes its
   * client; a write in the middle of the phase woke a load generator that served that one
   * reply and slept again, once per reply, and the server, busy past its time slice, was
   * preempted at those wakeups: at -P 1 with 50 clients, 0.5 involuntary context switches per
   * DUMP of a 100-field hash and 0.27 per EVALSHA, against 0.2 and 0.12 batched (bench/RESULTS.md,
   * "session 12, branch reqpath"). A lone connection flushes at once (the batch would cost it
   * a setImmediate per request), as does output over DEFER_MAX (memory stays bounded: the read
   * pauses on a full kernel buffer, see send()) and output behind appendfsync always's commit
   * gate (its release decides when output goes); so does one active connection among idle ones
   * (below). True when this connection's flush is batched.
   */
  private deferFlush(): boolean {
    const w = this.writer;
    if (this.inBatch) {
      if (w.pendingBytes + w.openBytes <= DEFER_MAX) return true;
      return false; // flushed now; the batch's flush finds nothing more
    }
    if (liveConnections < 2 || this.closing || !w.pending || this.engine.commitGate !== null) return false;
    if (w.pendingBytes + w.openBytes > DEFER_MAX) return false;
    // One active connection among idle ones (a pool, a blocked BullMQ connection): the last
    // batch held only it, so flush at once; every PROBE_EVERY-th flush batches again to see
    // whether others have become active.
    if (batchLen === 0 && lastBatch < 2 && ++sinceProbe < PROBE_EVERY) return false;
    sinceProbe = 0;
    this.inBatch = true;
    batch[batchLen++] = this;
    if (!batchQueued) {
      batchQueued = true;
      setImmediate(flushBatch);
    }
    return true;
  }

  /** flushBatch(): this connection's batched replies. */
  flushBatched(): void {
    this.inBatch = false;
    this.flush();
  }

  /**
   * Transport.poll: while a script runs past busy-reply-threshold on the engine thread, read
   * the socket directly (libuv's reads cannot run: the thread is inside the script) and
   * execute what arrived, which answers BUSY or runs SCRIPT KILL / SHUTDOWN NOSAVE...; the
   * reply is written at once (socket.write tries the kernel first). libuv sockets are
   * non-blocking: EAGAIN means nothing more to read. End of stream and errors are left for
   * libuv to see when the loop runs again.
   */
  poll(buf: Buffer): void {
    if (this.closing || this.paused || this.held) return;
    if (!this.pollOff && !this.client.blocked) this.pollRead(buf);
    // Output the script caused meanwhile (pub/sub messages, MONITOR lines) goes out too, as
    // Redis writes every client's pending replies while a script is busy.
    if (this.writer.pending && !this.closing) this.flush();
  }

  /** The socket's file descriptor (CLIENT LIST's fd=, the busy-script poller); -1 once closed. */
  get fd(): number {
    const fd = (this.sock as unknown as { _handle: { fd?: number } | null })._handle?.fd;
    return fd === undefined ? -1 : fd;
  }

  private pollRead(buf: Buffer): void {
    const fd = this.fd;
    if (fd < 0) return;
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') this.pollOff = true;
        return;
      }
      if (n === 0) {
        this.pollOff = true;
        return;
      }
      this.onRead(n, buf);
      if (n < buf.length || this.closing || this.paused || this.sliced || this.client.blocked) return;
    }
  }

  resume(): void {
    if (this.closing || this.client.blocked) return;
    // Run what waited behind the blocking command, after the unblocking reply is flushed.
    queueMicrotask(() => {
      if (!this.closing && !this.client.blocked) this.process();
    });
  }

  private flush(): void {
    if (this.sock.destroyed) return;
    if (this.held) return;
    const gate = this.engine.commitGate;
    // While a script is busy, output (BUSY and the few commands allowed meanwhile) depends on
    // no commit: it goes out at once, as Redis answers then (and commits wait for the script).
    if (gate !== null && this.writer.pending && this.engine.busyReply === null && gate.hold(this, this.engine.dirty !== this.dirtyMark)) {
      // Replies go out once the commit they depend on is durable (more input meanwhile pauses
      // reading: onData).
      this.held = true;
      return;
    }
    this.send();
  }

  /** CommitGate: the commit this output waited for is durable. */
  commitReleased(): void {
    if (!this.held) return;
    this.held = false;
    if (this.heldPause) {
      this.heldPause = false;
      if (!this.paused && !this.sliced && !this.closing) this.sock.resume();
    }
    if (this.lateInput) {
      this.lateInput = false;
      this.flush();
    } else if (!this.sock.destroyed) {
      this.send();
    }
  }

  private send(): void {
    const w = this.writer;
    if (w.pending) {
      this.engine.stats.writesProcessed++;
      const before = RespWriter.totalOut;
      const ok = w.flush(this.out);
      noteReplyBytes(this.client, RespWriter.totalOut - before);
      if (!ok && !this.paused && !this.closing) {
        this.paused = true;
        if (!this.sliced) this.sock.pause();
      }
    }
    this.checkOutputLimit();
    if (this.closing && !this.sock.destroyed) this.sock.end();
  }

  private onDrain(): void {
    this.softSince = 0;
    this.engine.outputs.report(this, this.outputBytes());
    if (this.paused) {
      this.paused = false;
      if (!this.heldPause && !this.sliced) this.sock.resume();
    }
  }

  private checkOutputLimit(): void {
    const used = this.outputBytes();
    if (used !== 0 && this.engine.clientMemLimit !== 0) clientMemoryChanged(this.engine);
    // Pushed-to readers also share one total budget (engine.outputs), over every connection.
    if (this.client.subscriptions > 0 || this.client.monitor) this.engine.outputs.report(this, used);
    if (used === 0) {
      this.softSince = 0;
      return;
    }
    const limits = outputLimits(this.engine.cfg('client-output-buffer-limit'));
    const lim = this.client.subscriptions > 0 ? limits.pubsub : limits.normal;
    if (lim === undefined) return;
    const [hard, soft, secs] = lim;
    const now = Date.now();
    let over = hard > 0 && used >= hard;
    if (soft > 0 && used >= soft) {
      if (this.softSince === 0) this.softSince = now;
      else if (now - this.softSince >= secs * 1000) over = true;
    } else {
      this.softSince = 0;
    }
    if (over) {
      console.warn(`Client id=${this.client.id} addr=${this.client.addr} scheduled to be closed ASAP for overcoming of output buffer limits.`);
      this.writer.discard();
      this.sock.destroy();
    }
  }

  // ---------------------------------------------------------------- Transport

  close(afterReply: boolean): void {
    if (this.closing) return;
    this.closing = true;
    if (!afterReply) {
      this.writer.discard();
      this.sock.destroy();
    }
  }

  requestFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  outputBytes(): number {
    return this.out.writableLength + this.writer.pendingBytes;
  }

  inputBytes(): number {
    return this.parser.buffered;
  }

  bufferStats(): { qbufFree: number; obl: number; oll: number } {
    // Chunks the socket still holds count as reply-list entries too (sent in one write each).
    const queued = this.out.writableLength > 0 ? 1 : 0;
    return { qbufFree: this.parser.free, obl: this.writer.openBytes, oll: this.writer.queuedParts + queued };
  }

  /** QueuedReader: cut off by the total pub/sub output budget. */
  evict(): void {
    this.closing = true;
    this.writer.discard();
    this.sock.destroy();
  }

  describe(): string {
    return `id=${this.client.id} addr=${this.client.addr}`;
  }

  private closed(): void {
    this.closing = true;
    liveConnections--;
    this.engine.outputs.forget(this);
    this.writer.discard();
    this.engine.unregister(this.client);
    this.onClose(this);
  }

  /** Graceful shutdown: finish what was read, flush, close. */
  end(): void {
    this.closing = true;
    this.flush();
    if (!this.sock.destroyed) this.sock.end();
  }
}

/** Open connections (deferFlush batches only when there are two or more). */
let liveConnections = 0;
/** Batched output: at most this many bytes wait for flushBatch per connection. */
const DEFER_MAX = 64 * 1024;
/**
 * Connections whose replies wait for flushBatch, in the order they were read: batch[0, batchLen).
 * perf: the array keeps its length (flushed slots hold null): `batch.length = 0` per poll phase
 * freed its backing store (through V8's runtime), and the next phase's pushes grew it again,
 * ~24 bytes allocated per request at -c 50 -P 1 (bench/RESULTS.md, session 15, sockjs).
 */
const batch: (Connection | null)[] = [];
let batchLen = 0;
let batchQueued = false;
/** Connections the last flushBatch wrote for (deferFlush: below 2, only probes batch). */
let lastBatch = 2;
/** Immediate flushes since the last probe batch. */
let sinceProbe = 0;
const PROBE_EVERY = 64;

function flushBatch(): void {
  batchQueued = false;
  lastBatch = batchLen;
  // A flush runs no command, so nothing joins the batch while it is written out.
  for (let i = 0; i < batchLen; i++) {
    batch[i]!.flushBatched();
    batch[i] = null;
  }
  batchLen = 0;
}

type Limit = readonly [hard: number, soft: number, seconds: number];
let cachedSpec = '';
let cachedLimits: Record<string, Limit> = {};

/** Parse "normal 0 0 0 pubsub 32mb 8mb 60" once per distinct value. */
function outputLimits(spec: string): Record<string, Limit> {
  if (spec !== cachedSpec) {
    const w = spec.trim().split(/\s+/);
    const out: Record<string, Limit> = {};
    for (let i = 0; i + 3 < w.length; i += 4) {
      out[w[i]] = [parseBytes(w[i + 1]), parseBytes(w[i + 2]), Number(w[i + 3])];
    }
    cachedSpec = spec;
    cachedLimits = out;
  }
  return cachedLimits;
}
