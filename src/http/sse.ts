/**
 * Server-sent-event streams of the REST API (redis-rest.md §6):
 *
 *   POST /subscribe/{channel}[/{channel}...]   data: subscribe,<channel>,<count>
 *                                               data: message,<channel>,<payload>
 *   POST /psubscribe/{pattern}[/...]           data: psubscribe,<pattern>,<count>
 *                                               data: pmessage,<pattern>,<channel>,<payload>
 *   POST /monitor                              data: "OK", then one MONITOR line per command
 *
 * Each event is `data: <payload>\n\n`; a payload with line breaks continues on further `data:`
 * lines, as SSE defines. Streams subscribe to the same engine registry as TCP clients, so a
 * PUBLISH from either side reaches both and counts both. A closed stream is dropped at once
 * (uWS onAborted). A reader that does not keep up is cut off when the bytes queued for it pass
 * the pub/sub hard output-buffer limit (client-output-buffer-limit "pubsub"), as Redis does for
 * slow subscribers. A comment line every 15 s keeps proxies from closing idle streams.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { Argv } from '../resp/argv.js';
import { replyStats, Resp2Shapes } from '../resp/reply-sink.js';
import { Client, type Transport } from '../engine/client.js';
import type { QueuedReader } from '../engine/output-budget.js';
import type { Engine } from '../engine/engine.js';
import { Kind, MessageKind, type Delivery, type Subscriber } from '../engine/pubsub.js';
import type { AclUser } from '../engine/acl.js';
import { parseBytes } from '../config.js';
import { decodePath } from './parse.js';
import { Access } from './auth.js';
import { type HttpServer, type RouteContext, errorJson } from './server.js';

const KEEPALIVE_MS = 15000;
const PING = Buffer.from(': ping\n\n');

/** `data: <payload>` lines for one event, with SSE continuation lines for embedded breaks. */
function event(parts: readonly Buffer[]): Buffer {
  let payload = Buffer.concat(parts);
  if (payload.includes(10) || payload.includes(13)) {
    const text = payload.toString('latin1').split(/\r\n|\r|\n/).join('\ndata: ');
    payload = Buffer.from(text, 'latin1');
  }
  return Buffer.concat([DATA, payload, END]);
}
const DATA = Buffer.from('data: ');
const END = Buffer.from('\n\n');
const COMMA = Buffer.from(',');
const MESSAGE = Buffer.from('message');
const PMESSAGE = Buffer.from('pmessage');
const SMESSAGE = Buffer.from('smessage');

/** The SSE encoding of a delivery; the registry caches it per topic (one build per publish). */
function encodeDelivery(d: Delivery): Buffer {
  if (d.kind === MessageKind.PMESSAGE) return event([PMESSAGE, COMMA, d.pattern!, COMMA, d.channel, COMMA, d.message]);
  return event([d.kind === MessageKind.SMESSAGE ? SMESSAGE : MESSAGE, COMMA, d.channel, COMMA, d.message]);
}

/** One open event stream. */
class Stream implements Subscriber, Transport, QueuedReader {
  readonly kind = 'http' as const;
  closed = false;
  /** Bytes handed to uWS; minus res.getWriteOffset() = bytes still queued for the reader. */
  private written = 0;
  client: Client | null = null;
  /** The ACL user of a RESTTOKEN token (its channel rules hold while the stream lasts). */
  user: AclUser | null = null;

  constructor(private readonly res: HttpResponse, private readonly eng: Engine, private readonly streams: Set<Stream>) {}

  write(b: Buffer): void {
    if (this.closed) return;
    this.res.cork(() => this.res.write(b));
    this.written += b.length;
    const queued = this.written - this.res.getWriteOffset();
    if (queued > 0) {
      const limit = pubsubHardLimit(this.eng.cfg('client-output-buffer-limit'));
      if (limit > 0 && queued >= limit) {
        console.warn(`SSE stream closed: ${queued} bytes queued for a slow reader (over the pubsub output-buffer limit)`);
        this.res.close(); // onAborted runs the cleanup
        return;
      }
    }
    // Last: the total budget may close this very stream.
    this.eng.outputs.report(this, queued > 0 ? queued : 0);
  }

  /** QueuedReader: cut off by the total pub/sub output budget. */
  evict(): void {
    this.close();
  }

  describe(): string {
    return `SSE stream${this.client === null ? '' : ` id=${this.client.id}`}`;
  }

  deliver(d: Delivery): void {
    this.write(d.encode(encodeDelivery));
  }

  aclUser(): AclUser | null {
    return this.user;
  }

  disconnect(): void {
    this.close();
  }

  cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    this.eng.outputs.forget(this);
    this.streams.delete(this);
    this.eng.pubsub.drop(this);
    if (this.client) this.eng.unregister(this.client);
  }

  // Transport, for the MONITOR client.
  close(): void {
    if (!this.closed) this.res.close();
  }
  requestFlush(): void {}
  outputBytes(): number {
    return this.written - this.res.getWriteOffset();
  }
  inputBytes(): number {
    return 0;
  }
  resume(): void {}
}

let cachedSpec = '';
let cachedLimit = 0;
function pubsubHardLimit(spec: string): number {
  if (spec !== cachedSpec) {
    const w = spec.trim().split(/\s+/);
    const i = w.indexOf('pubsub');
    cachedLimit = i >= 0 ? parseBytes(w[i + 1]) : 0;
    cachedSpec = spec;
  }
  return cachedLimit;
}

/** MONITOR lines reach a monitoring client through `simple()`; nothing else is written to it. */
class MonitorSink extends Resp2Shapes {
  constructor(private readonly stream: Stream) {
    super();
  }
  simple(s: string): void {
    this.stream.write(event([Buffer.from(s, 'latin1')]));
  }
  ok(): void {}
  error(): void { replyStats.errors++; }
  int(): void {}
  bulk(): void {}
  bulkLatin1(): void {}
  override bulkBytes(): void {}
  bulkText(): void {}
  nil(): void {}
  array(): void {}
  nilArray(): void {}
}

/**
 * Register /subscribe, /psubscribe, /ssubscribe and /monitor on the HTTP server. Returns the
 * function that ends every open stream (graceful shutdown).
 */
export function registerSse(srv: HttpServer): () => void {
  const eng = srv.engine;
  const streams = new Set<Stream>();
  const timer = setInterval(() => {
    for (const s of streams) s.write(PING);
  }, KEEPALIVE_MS);
  timer.unref();

  const open = (res: HttpResponse): Stream => {
    const s = new Stream(res, eng, streams);
    streams.add(s);
    res.onAborted(() => s.cleanup());
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'text/event-stream');
    res.writeHeader('Cache-Control', 'no-cache');
    res.writeHeader('Access-Control-Allow-Origin', '*');
    return s;
  };

  const refuse = (res: HttpResponse, status: string, msg: string) => {
    res.cork(() => {
      res.writeStatus(status);
      res.writeHeader('Content-Type', 'application/json');
      res.end(errorJson(msg));
    });
  };

  const subscribeRoute = (kind: Kind, verb: string, command: string) => (_s: HttpServer, res: HttpResponse, _req: unknown, ctx: RouteContext) => {
    // The names: every path segment after the first, percent-decoded to bytes.
    const argv = new Argv();
    const buf = Buffer.allocUnsafe(3 * ctx.url.length + 3);
    if (decodePath(ctx.url, buf, argv) < 0) {
      refuse(res, '400 Bad Request', 'ERR invalid percent-encoding in the path');
      return;
    }
    argv.buf = buf;
    if (argv.count < 2 || argv.len(1) === 0) {
      refuse(res, '400 Bad Request', `ERR wrong number of arguments for '${command}' command`);
      return;
    }
    // The stream runs as the token's ACL user, or as the default user for the REST tokens (as
    // their commands do): its channel rules hold now and when ACL SETUSER changes them.
    const user = typeof ctx.access === 'object' ? ctx.access : eng.acl.defaultUser;
    if (!user.unrestricted) {
      const def = eng.registry.commands.get(command)!;
      const check = Argv.of([command, ...Array.from({ length: argv.count - 1 }, (_, i) => argv.copy(i + 1))]);
      const denied = eng.acl.check(user, def, check);
      if (denied !== null) {
        srv.logAclDenial(user, def, check, denied);
        refuse(res, '400 Bad Request', denied.reason === 'command'
          ? `NOPERM this user has no permissions to run the '${command}' command`
          : 'NOPERM this user has no permissions to access one of the channels used as arguments');
        return;
      }
    }
    const s = open(res);
    s.user = user;
    let count = 0;
    const out: Buffer[] = [];
    for (let i = 1; i < argv.count; i++) {
      if (eng.pubsub.subscribe(s, kind, argv.key(i))) count++;
      out.push(event([Buffer.from(verb), COMMA, argv.copy(i), COMMA, Buffer.from(String(count))]));
    }
    s.write(Buffer.concat(out));
  };

  const MONITOR_ARGV = Argv.of(['monitor']);
  const MONITOR_DEF = eng.registry.commands.get('monitor')!;
  srv.routes.set('subscribe', subscribeRoute(Kind.CHANNEL, 'subscribe', 'subscribe'));
  srv.routes.set('psubscribe', subscribeRoute(Kind.PATTERN, 'psubscribe', 'psubscribe'));
  srv.routes.set('ssubscribe', subscribeRoute(Kind.SHARD, 'ssubscribe', 'ssubscribe'));

  srv.routes.set('monitor', (_s, res, _req, ctx) => {
    // MONITOR is an admin command: not for the read-only token; the standard token runs as the
    // default user, an ACL token as its user, each held to that user's rules.
    let allowed = ctx.access !== Access.READ_ONLY;
    if (allowed) {
      const user = typeof ctx.access === 'object' ? ctx.access : eng.acl.defaultUser;
      const denied = user.unrestricted ? null : eng.acl.check(user, MONITOR_DEF, MONITOR_ARGV);
      if (denied !== null) srv.logAclDenial(user, MONITOR_DEF, MONITOR_ARGV, denied);
      allowed = denied === null;
    }
    if (!allowed) {
      refuse(res, '400 Bad Request', 'NOPERM this user has no permissions to run the \'monitor\' command');
      return;
    }
    const s = open(res);
    const c = new Client(eng, s, new MonitorSink(s), '0.0.0.0:0', '0.0.0.0:0');
    s.client = c;
    eng.register(c);
    c.monitor = true;
    eng.monitors.add(c);
    s.write(event([Buffer.from('"OK"')]));
  });

  return () => {
    clearInterval(timer);
    for (const s of [...streams]) s.close();
  };
}
