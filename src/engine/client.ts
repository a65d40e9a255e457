/**
 * Client: per-connection state shared by every transport (TCP connection, HTTP request,
 * later scripts). The engine reads and changes it; the transport owns the socket.
 */
import type { Argv } from '../resp/argv.js';
import type { ReplySink } from '../resp/reply-sink.js';
import type { CommandDef } from './command.js';
import type { Db } from './db.js';
import type { Engine } from './engine.js';
import type { DenyHook } from './dispatch.js';
import type { AclUser } from './acl.js';
import { RespWriter } from '../resp/writer.js';
import { mallocSize } from './memory.js';

/** Redis's PROTO_REPLY_CHUNK_BYTES and PROTO_REPLY_MIN_BYTES (the reply buffer's bounds). */
export const REPLY_CHUNK = 16 * 1024;
const REPLY_MIN = 1024;
/** Redis's reply_buffer_peak_reset_time default (ms). */
const PEAK_RESET_MS = 5000;

/** Reply bytes one write carried (rbp: the most the reply buffer held at once). */
export function noteReplyBytes(c: Client, n: number): void {
  const used = n < c.rbs ? n : c.rbs;
  if (used > c.rbp) c.rbp = used;
}

/**
 * Redis's clientsCronResizeOutputBuffer, once a second per client: shrink to the peak when it
 * stayed under half the buffer, double when the buffer filled up; the peak restarts every 5 s.
 * Returns 1 for a shrink, 2 for an expansion, 0 otherwise (INFO reply_buffer_*).
 */
export function resizeReplyBuffer(c: Client, now: number): number {
  let size = 0;
  let r = 0;
  const half = c.rbs >> 1;
  if (half >= REPLY_MIN && c.rbp < half) {
    size = Math.max(REPLY_MIN, c.rbp + 1);
    r = 1;
  } else if (c.rbs * 2 < REPLY_CHUNK * 2 && c.rbp === c.rbs) {
    size = Math.min(REPLY_CHUNK, c.rbs * 2);
    r = 2;
  }
  if (now - c.rbpResetAt >= PEAK_RESET_MS) {
    // Redis restarts the peak from the bytes in the buffer then: none between our writes.
    c.rbp = 0;
    c.rbpResetAt = now;
  }
  if (size !== 0) c.rbs = mallocSize(size);
  return r;
}

export const ReplyMode = { ON: 0, OFF: 1, SKIP: 2, SKIP_NEXT: 3 } as const;

/** What a transport must provide to the engine. */
export interface Transport {
  readonly kind: 'tcp' | 'http' | 'internal';
  /** Close the connection after pending replies are written (QUIT, CLIENT KILL, limits). */
  close(afterReply: boolean): void;
  /** Flush output written asynchronously (pub/sub messages, MONITOR lines, unblocked replies). */
  requestFlush(): void;
  /** Bytes waiting in the output buffer (CLIENT LIST omem, output-buffer limits). */
  outputBytes(): number;
  /** Bytes received but not yet parsed (CLIENT LIST qbuf). */
  inputBytes(): number;
  /** CLIENT LIST buffer figures: query-buffer free room, open reply bytes, queued reply chunks. */
  bufferStats?(): { qbufFree: number; obl: number; oll: number };
  /** The client was unblocked: execute the input that waited behind the blocking command. */
  resume(): void;
  /**
   * Read and execute, synchronously, what the client has sent (TCP only): how the engine
   * thread serves other clients while a script runs past busy-reply-threshold on it
   * (scripting/host.ts), as Redis's processEventsWhileBlocked. `buf` is scratch space.
   */
  poll?(buf: Buffer): void;
}

export interface QueuedCommand {
  readonly def: CommandDef;
  readonly argv: Argv;
}

export class Client {
  readonly id: number;
  dbIndex = 0;
  name: string | null = null;
  libName = '';
  libVer = '';
  authenticated: boolean;
  user = 'default';
  /** The ACL user the connection runs as (permissions are checked against it). */
  aclUser: AclUser;
  // perf: both start as doubles here. A field declared without a value is first defined as
  // undefined (ES2022 class fields) and stays a tagged field: then every store of a new time
  // (each command sets lastInteraction) allocated a heap number.
  /** A fresh reading (engine.now may be one cron tick old): idle timeouts count from here. */
  readonly createdAt: number = Date.now();
  lastInteraction: number = this.createdAt;
  lastCommand = 'NULL';

  /** MULTI queue; null when not in a transaction. */
  multi: QueuedCommand[] | null = null;
  /** A command was rejected while queueing: EXEC answers EXECABORT. */
  multiError = false;
  /** A watched key changed: EXEC answers a null array. */
  dirtyCas = false;
  /** Watched keys: db index and key, with whether the key was already expired at WATCH time. */
  watched: { db: number; key: string; expired: boolean }[] = [];

  /** Protocol version: 2 (default) or 3 after HELLO 3. */
  resp: 2 | 3 = 2;
  /** Client-side caching: TR bits (tracking.ts), 0 when off. */
  track = 0;
  /** CLIENT TRACKING REDIRECT id (0: none). */
  trackRedirect = 0;
  /** BCAST prefixes (null until one is registered). */
  trackPrefixes: Set<string> | null = null;
  /**
   * Writes the pub/sub messages queued for this client (set by its subscriber, which batches
   * them): called before other out-of-band output (invalidations) so the order stays Redis's.
   */
  flushPushed: (() => void) | null = null;
  replyMode: number = ReplyMode.ON;
  noEvict = false;
  noTouch = false;
  monitor = false;
  /** Number of channel + pattern subscriptions (RESP2 subscribe context when > 0). */
  subscriptions = 0;
  /** Waiting in a blocking command (see blocking.ts): further input waits. */
  blocked = false;
  /** Closed: nothing more is written or executed. */
  closed = false;
  /** Transport-specific admission rule (REST tokens, ACL); null = none. */
  deny: DenyHook | null = null;
  /**
   * Redis 7.0's per-client reply buffer, as CLIENT LIST rbs / rbp report it: its size and the
   * most reply bytes one write carried since the last peak reset. Our replies share one slab,
   * so the size is the one Redis's resizing rules (replyBufferCron) would give this traffic.
   */
  rbs = REPLY_CHUNK;
  rbp = REPLY_CHUNK;
  /** Redis starts it at 0: the first cron pass restarts the peak. */
  rbpResetAt = 0;
  /** When cron last resized this client's reply buffer. */
  rbCronAt = 0;

  constructor(
    readonly engine: Engine,
    readonly transport: Transport,
    /** Where asynchronous output for this client goes (pub/sub, MONITOR, unblocked replies). */
    readonly out: ReplySink,
    readonly addr: string,
    readonly laddr: string,
  ) {
    this.id = engine.nextClientId++;
    this.authenticated = !engine.authRequired();
    this.aclUser = engine.acl.defaultUser;
  }

  /** Switch the protocol (HELLO, RESET): the RESP writer renders RESP3 types from now on. */
  setProtocol(v: 2 | 3): void {
    this.resp = v;
    if (this.out instanceof RespWriter) this.out.resp3 = v === 3;
  }

  get db(): Db {
    return this.engine.dbs[this.dbIndex];
  }
}
