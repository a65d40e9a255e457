/**
 * The Upstash-compatible Redis REST API on uWebSockets.js, sharing the engine (database 0) with
 * the RESP server: every request runs through the same execute() as a TCP command.
 *
 * Request forms (redis-rest.md §2, §5):
 *   GET|HEAD|POST|PUT /cmd/arg/...?k=v   path form; POST/PUT body = one more argument, placed
 *                                        after the path arguments and before the query ones
 *   POST|PUT /                           one command as a JSON array
 *   POST|PUT /pipeline                   JSON array of commands, run in order, not atomic
 *   POST|PUT /multi-exec                 JSON array of commands, run as MULTI ... EXEC
 *   OPTIONS *                            CORS preflight; any other method: 405
 * Streaming endpoints (/subscribe, /psubscribe, /monitor: SSE) plug in through `routes`, keyed
 * by the first path segment, after authentication and header checks.
 * uWS itself refuses request heads (URL + headers) beyond about 100 KB by closing the
 * connection: large values belong in the body, as Upstash's documentation says.
 *
 * uWebSockets.js rules followed here: the HttpRequest is only valid during the handler, so
 * everything needed later is read first; a response answered later (after the body arrived)
 * has an onAborted handler and is never touched once aborted; body chunks are copied at once
 * (uWS reuses their memory); answers are written inside res.cork().
 *
 * Hot path (measured against a bare uWS server, see bench/RESULTS-http.md): a GET is decoded
 * into a shared scratch buffer and answered synchronously; the JSON reply is written by one
 * shared JsonWriter into one buffer; JSON bodies are parsed in place (no JSON.parse, no
 * argument strings); CORS headers are only written for browsers (Origin present); bodies are
 * read through pooled PendingBody objects whose callbacks are created once, so a request
 * allocates no closure of ours.
 */
import { createRequire } from 'node:module';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { Argv } from '../resp/argv.js';
import { type ReplySink, Resp2Shapes, replyStats } from '../resp/reply-sink.js';
import { RespWriter } from '../resp/writer.js';
import { execute } from '../engine/dispatch.js';
import type { Engine, HeldOutput } from '../engine/engine.js';
import type { Transport } from '../engine/client.js';
import { discardTransaction } from '../engine/commands/transactions.js';
import { clientInfo } from '../engine/commands/client.js';
import type { AclDenial, AclUser } from '../engine/acl.js';
import type { CommandDef, Prefetch } from '../engine/command.js';
import { afterPause, pauseCovers } from '../engine/pause.js';
import { JsonWriter } from './json-writer.js';
import { CommandList, decodePath, decodeQuery, queryToken } from './parse.js';
import { Access, type AccessKind, AUTH_ERROR, RestClient, RestTokens, aclTokenAccess, applyAccess, ruleTable } from './auth.js';

const require = createRequire(import.meta.url);
const uWS = require('@trufflesuite/uws-js-unofficial') as typeof import('@trufflesuite/uws-js-unofficial');

export const Method = { GET: 1, HEAD: 2, POST: 3, PUT: 4 } as const;
export type MethodKind = (typeof Method)[keyof typeof Method];

/** What a route gets to know about a request that passed authentication and header checks. */
export interface RouteContext {
  readonly method: MethodKind;
  /** Raw path, e.g. "/subscribe/chan%201". */
  readonly url: string;
  readonly query: string | undefined;
  readonly access: AccessKind;
  readonly base64: boolean;
  readonly resp2: boolean;
}

/** Handler of an endpoint named by its first path segment (SSE streams). */
export type Route = (srv: HttpServer, res: HttpResponse, req: HttpRequest, ctx: RouteContext) => void;

// Header names and constant values.
const H_CONTENT_TYPE = 'Content-Type';
const H_SYNC = 'upstash-sync-token';
const H_ACAO = 'Access-Control-Allow-Origin';
const H_ACEH = 'Access-Control-Expose-Headers';
const V_JSON = 'application/json';
const V_OCTET = 'application/octet-stream';
const ALLOW_METHODS = 'GET, HEAD, POST, PUT, OPTIONS';
const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Cache-Control, Upstash-Encoding, Upstash-Response-Format, ' +
  'Upstash-Sync-Token, Upstash-Telemetry-Runtime, Upstash-Telemetry-Platform, Upstash-Telemetry-Sdk, ' +
  'Upstash-Telemetry-Retry, Svc-Encoding, Svc-Response-Format';

const S_204 = '204 No Content';
const S_400 = '400 Bad Request';
const S_401 = '401 Unauthorized';
const S_405 = '405 Method Not Allowed';
const S_413 = '413 Payload Too Large';
const S_500 = '500 Internal Server Error';

export const REST_ERR = {
  TOO_LARGE: 'ERR max request size exceeded',
  BAD_ESCAPE: 'ERR invalid percent-encoding in the request URL',
  BAD_FORMAT: 'ERR invalid Upstash-Response-Format: expected json or resp2',
  RESP2_BASE64: 'ERR Upstash-Encoding: base64 cannot be combined with Upstash-Response-Format: resp2',
  METHOD: 'ERR method not allowed: use GET, HEAD, POST or PUT',
  NEEDS_BODY: 'ERR this endpoint needs a POST or PUT request with a JSON body',
} as const;

/** Body kinds. */
const K_PATH = 0;
const K_SINGLE = 1;
const K_PIPELINE = 2;
const K_MULTI = 3;

/** The shared decoding buffer grows up to this; longer URLs get a buffer of their own. */
const SCRATCH_MAX = 1024 * 1024;
/** Bodies at most this large are allocated at once from Content-Length; larger ones grow. */
const PREALLOC_MAX = 1024 * 1024;

/** Discards asynchronous output: a REST request has nowhere to send it. */
const DROP_SINK: ReplySink = {
  ok() {}, simple() {}, error() { replyStats.errors++; }, int() {}, bulk() {}, bulkLatin1() {}, bulkLatin1Range() {}, bulkInt() {}, bulkBytes() {},
  bulkText() {}, nil() {}, array() {}, nilArray() {},
  map() {}, set() {}, push() {}, double() {}, bool() {}, verbatim() {}, bigNumber() {}, pairs() {}, pair() {}, assoc() {}, assocItem() {}, attribute: () => false,
};

/** A REST request has no connection to close, flush or resume: everything is synchronous. */
class HttpTransport implements Transport {
  readonly kind = 'http' as const;
  close(): void {}
  requestFlush(): void {}
  outputBytes(): number {
    return 0;
  }
  inputBytes(): number {
    return 0;
  }
  /** Blocking commands are refused over REST (NO_REST), so there is nothing to resume. */
  resume(): void {}
}
const HTTP_TRANSPORT = new HttpTransport();

/** Replies to commands queued inside /multi-exec: keeps the first error, drops +QUEUED. */
class QueueSink extends Resp2Shapes {
  firstError: string | null = null;
  at = 0;
  index = 0;
  ok() {}
  simple() {}
  error(msg: string) {
    replyStats.errors++;
    if (this.firstError === null) {
      this.firstError = msg;
      this.at = this.index;
    }
  }
  int() {}
  bulk() {}
  bulkLatin1() {}
  override bulkBytes() {}
  bulkText() {}
  nil() {}
  array() {}
  nilArray() {}
}

const MULTI_ARGV = Argv.of(['MULTI']);
/** Redis's wording when EXEC is refused; used for a discarded /multi-exec too. */
const EXECABORT_PREFIX = 'EXECABORT Transaction discarded because of: ';
const EXEC_ARGV = Argv.of(['EXEC']);

function insertArg(argv: Argv, k: number, s: number, e: number): void {
  argv.push(s, e);
  for (let i = argv.count - 1; i > k; i--) {
    argv.start[i] = argv.start[i - 1];
    argv.end[i] = argv.end[i - 1];
  }
  argv.start[k] = s;
  argv.end[k] = e;
}

/** A `{"error": msg}` body (replies produced outside the engine). */
export function errorJson(msg: string): Buffer {
  return Buffer.from(JSON.stringify({ error: msg }));
}

/** A request whose body is being read. Pooled: its callbacks are created once. */
class PendingBody {
  res: HttpResponse | null = null;
  kind = K_PATH;
  method: MethodKind = Method.POST;
  access: AccessKind = Access.NONE;
  base64 = false;
  resp2 = false;
  cors = false;
  readonly argv = new Argv();
  /** Path-form arguments before which the body goes. */
  nPath = 0;
  buf: Buffer = EMPTY;
  start = 0;
  pos = 0;
  limit = 0;
  aborted = false;

  constructor(private readonly srv: HttpServer) {}

  readonly onAborted = (): void => {
    this.aborted = true;
    this.res = null;
  };

  readonly onData = (chunk: ArrayBuffer, last: boolean): void => {
    if (this.aborted || this.res === null) return;
    try {
      this.data(chunk, last);
    } catch (err) {
      const res = this.res;
      this.aborted = true; // not recycled
      this.res = null;
      if (res !== null) this.srv.internalError(res, err);
    }
  };

  private data(chunk: ArrayBuffer, last: boolean): void {
    const n = chunk.byteLength;
    if (last && this.pos === 0 && n <= SCRATCH_MAX) {
      // The whole body in one chunk, no path prefix (JSON endpoints): it is processed right
      // now, so the server's shared body buffer holds it, no allocation.
      this.buf = this.srv.bodyScratch(n);
      this.buf.set(new Uint8Array(chunk), 0);
      this.pos = n;
      this.res!.cork(this.finish);
      return;
    }
    if (n > 0) {
      if (this.pos + n > this.buf.length) {
        if (this.pos - this.start + n > this.limit) {
          this.srv.tooLarge(this.res!, this.cors);
          this.aborted = true; // not recycled: uWS may still hold the callbacks
          this.res = null;
          return;
        }
        let size = Math.max(this.buf.length * 2, 16 * 1024);
        while (size < this.pos + n) size *= 2;
        const b = Buffer.allocUnsafe(Math.min(size, this.start + this.limit));
        this.buf.copy(b, 0, 0, this.pos);
        this.buf = b;
      }
      this.buf.set(new Uint8Array(chunk), this.pos);
      this.pos += n;
    }
    if (!last) return;
    this.res!.cork(this.finish);
  }

  private readonly finish = (): void => {
    const res = this.res!;
    this.res = null;
    try {
      this.srv.bodyComplete(res, this);
    } catch (err) {
      this.srv.internalError(res, err);
    }
    this.buf = EMPTY;
    this.srv.recycle(this);
  };
}

const EMPTY = Buffer.alloc(0);

/**
 * appendfsync always: a command reply waiting for the journal write it depends on (as RESP
 * replies do), with the headers it would have had.
 */
/** What a suspended pipeline had written, and whether its commands so far changed data. */
interface PipelineDone {
  /** The reply so far, its items and how many of them are errors (JSON). */
  bytes: Buffer;
  items: number;
  errors: number;
  /** Commands in the pipeline, and copies of those still to run. */
  total: number;
  left: Argv[];
  wrote: boolean;
}

class HeldReply implements HeldOutput {
  private aborted = false;
  private body: Buffer = EMPTY;
  constructor(
    private readonly res: HttpResponse,
    private readonly status: string | null,
    private readonly type: string,
    private readonly token: string,
    private readonly cors: boolean,
    private readonly head: boolean,
  ) {}

  /** It is held: keep a copy of the body (the writers reuse theirs) and watch for aborts. */
  keep(body: Uint8Array): void {
    this.body = Buffer.from(body);
    this.res.onAborted(this.onAborted);
  }

  private readonly onAborted = (): void => {
    this.aborted = true;
  };

  commitReleased(): void {
    if (this.aborted) return;
    const res = this.res;
    res.cork(() => {
      if (this.status !== null) res.writeStatus(this.status);
      res.writeHeader(H_CONTENT_TYPE, this.type);
      res.writeHeader(H_SYNC, this.token);
      if (this.cors) {
        res.writeHeader(H_ACAO, '*');
        res.writeHeader(H_ACEH, H_SYNC);
      }
      if (this.head) res.endWithoutBody();
      else res.end(this.body);
    });
  }
}

export class HttpServer {
  private readonly app: TemplatedApp;
  private listenSocket: us_listen_socket | null = null;
  /** Endpoints by first path segment (SSE streams plug in here). */
  readonly routes = new Map<string, Route>();
  /**
   * APIs that take a whole path prefix before any Redis REST processing (no REST token check,
   * any method): "v2" serves /v2/... (see http/v2.ts).
   */
  readonly apis = new Map<string, (res: HttpResponse, req: HttpRequest) => void>();
  /** The client of path-form, single and pipeline requests. */
  private readonly client: RestClient;
  /** The client of /multi-exec (its MULTI state lives only within one request). */
  private readonly txClient: RestClient;
  private readonly writer = new JsonWriter();
  private readonly resp = new RespWriter();
  private readonly list = new CommandList();
  private readonly argv = new Argv();
  private readonly queueSink = new QueueSink();
  private scratch = Buffer.allocUnsafe(64 * 1024);
  private body = Buffer.allocUnsafe(64 * 1024);
  private readonly pool: PendingBody[] = [];
  private seenDirty = -1;
  private syncSeq = 0;
  private syncToken = '';
  /** The request being answered came with an Origin header (browser): add CORS headers. */
  private cors = false;
  /** engine.dirty before the commands of the request being answered ran. */
  private dirtyMark = 0;
  private maxRequest: number;

  constructor(readonly engine: Engine, readonly tokens: RestTokens) {
    const rules = ruleTable(engine.registry);
    // Internal clients, never registered (not in CLIENT LIST): they must not shift the ids
    // RESP connections get, which tests compare with Redis's.
    const nextId = engine.nextClientId;
    this.client = new RestClient(engine, HTTP_TRANSPORT, DROP_SINK, '0.0.0.0:0', '0.0.0.0:0');
    this.txClient = new RestClient(engine, HTTP_TRANSPORT, DROP_SINK, '0.0.0.0:0', '0.0.0.0:0');
    engine.nextClientId = nextId;
    this.client.rules = this.txClient.rules = rules;
    this.client.authenticated = this.txClient.authenticated = true;
    this.maxRequest = engine.cfgInt('max-request-size');
    engine.configListeners.push((name, value) => {
      if (name === 'requirepass') tokens.revoke();
      else if (name === 'max-request-size') this.maxRequest = Number(value);
    });
    this.app = uWS.App();
    this.app.any('/*', (res, req) => this.onRequest(res, req));
  }

  /**
   * An ACL refusal decided outside the dispatcher (the SSE endpoints check channels
   * themselves): logged in ACL LOG as the dispatcher logs a refused REST command of `user`
   * (context toplevel, the REST client's info with cmd=<command>).
   */
  logAclDenial(user: AclUser, def: CommandDef, argv: Argv, d: AclDenial): void {
    const c = this.client;
    applyAccess(c, this.engine.acl, user);
    c.lastCommand = def.name;
    this.engine.acl.logDenial(d, def, argv, 'toplevel', c.user, clientInfo(c, this.engine.now, argv));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (ls) => {
        if (!ls) {
          reject(new Error(`could not listen for HTTP on ${host}:${port}`));
          return;
        }
        this.listenSocket = ls;
        resolve(uWS.us_socket_local_port(ls as unknown as Parameters<typeof uWS.us_socket_local_port>[0]));
      });
    });
  }

  /** Stop accepting and close every connection (in-flight bodies are dropped). */
  close(): void {
    if (this.listenSocket !== null) {
      uWS.us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
    (this.app as unknown as { close?: () => void }).close?.();
  }

  // ---------------------------------------------------------------- request entry

  private onRequest(res: HttpResponse, req: HttpRequest): void {
    try {
      this.request(res, req);
    } catch (err) {
      this.internalError(res, err);
    }
  }

  private request(res: HttpResponse, req: HttpRequest): void {
    this.cors = req.getHeader('origin') !== '';
    if (this.apis.size !== 0) {
      // The /v2 APIs (search, queue, workflows) have their own methods and authentication.
      const url = req.getUrl();
      if (url.startsWith('/v2/') || url === '/v2') {
        const api = this.apis.get('v2');
        if (api !== undefined) {
          api(res, req);
          return;
        }
      }
    }
    const m = req.getMethod();
    let method: MethodKind;
    if (m === 'get') method = Method.GET;
    else if (m === 'post') method = Method.POST;
    else if (m === 'put') method = Method.PUT;
    else if (m === 'head') method = Method.HEAD;
    else if (m === 'options') {
      this.preflight(res, req);
      return;
    } else {
      res.writeStatus(S_405);
      res.writeHeader('Allow', ALLOW_METHODS);
      this.sendJson(res, null, errorJson(REST_ERR.METHOD), false);
      return;
    }
    const url = req.getUrl();
    const query = req.getQuery();

    // Authentication: the header wins over ?_token=.
    const authz = req.getHeader('authorization');
    let access: AccessKind = Access.NONE;
    if (authz !== '') {
      if (authz.length > 7 && (authz.startsWith('Bearer ') || authz.slice(0, 7).toLowerCase() === 'bearer ')) {
        access = this.tokens.checkBearer(authz);
        if (access === Access.NONE && this.engine.acl.restTokens.size > 0) {
          access = aclTokenAccess(this.engine.acl, authz.slice(7).trim());
        }
      }
    } else if (query !== undefined && query.includes('_token=')) {
      const t = queryToken(query);
      access = this.tokens.check(t);
      if (access === Access.NONE && this.engine.acl.restTokens.size > 0) access = aclTokenAccess(this.engine.acl, t);
    }
    if (access === Access.NONE) {
      this.sendJson(res, S_401, errorJson(AUTH_ERROR), method === Method.HEAD);
      return;
    }

    // Reply format headers (the Svc-* names are the spec's placeholders for the same thing).
    let enc = req.getHeader('upstash-encoding');
    if (enc === '') enc = req.getHeader('svc-encoding');
    let fmt = req.getHeader('upstash-response-format');
    if (fmt === '') fmt = req.getHeader('svc-response-format');
    const base64 = enc !== '' && (enc === 'base64' || enc.toLowerCase() === 'base64');
    let resp2 = false;
    if (fmt !== '') {
      const f = fmt.toLowerCase();
      if (f === 'resp2') resp2 = true;
      else if (f !== 'json') {
        this.sendJson(res, S_400, errorJson(REST_ERR.BAD_FORMAT), method === Method.HEAD);
        return;
      }
    }
    if (resp2 && base64) {
      this.sendJson(res, S_400, errorJson(REST_ERR.RESP2_BASE64), method === Method.HEAD);
      return;
    }
    const qlen = query === undefined ? 0 : query.length;
    if (url.length + qlen > this.maxRequest) {
      this.tooLarge(res, this.cors);
      return;
    }

    let kind = K_PATH;
    switch (url) {
      case '/': kind = K_SINGLE; break;
      case '/pipeline': kind = K_PIPELINE; break;
      case '/multi-exec': kind = K_MULTI; break;
      default:
        if (this.routes.size !== 0) {
          const slash = url.indexOf('/', 1);
          const route = this.routes.get(slash < 0 ? url.slice(1) : url.slice(1, slash));
          if (route !== undefined) {
            route(this, res, req, { method, url, query, access, base64, resp2 });
            return;
          }
        }
    }

    if (kind !== K_PATH) {
      if (method === Method.GET || method === Method.HEAD) {
        res.writeStatus(S_405);
        res.writeHeader('Allow', 'POST, PUT, OPTIONS');
        this.sendJson(res, null, errorJson(REST_ERR.NEEDS_BODY), method === Method.HEAD);
        return;
      }
      this.readBody(res, req, kind, method, access, base64, resp2, null, 0, 0);
      return;
    }

    // Path form: decode the path and query arguments.
    const need = 3 * (url.length + qlen);
    if (this.scratch.length < need && need <= SCRATCH_MAX) this.scratch = Buffer.allocUnsafe(need);
    const buf = this.scratch.length >= need ? this.scratch : Buffer.allocUnsafe(need); // huge URL: one-off
    const argv = this.argv;
    argv.reset(buf);
    let used = decodePath(url, buf, argv);
    const nPath = argv.count;
    if (used >= 0 && query !== undefined) used = decodeQuery(query, buf, used, argv);
    if (used < 0) {
      this.sendJson(res, S_400, errorJson(REST_ERR.BAD_ESCAPE), method === Method.HEAD);
      return;
    }
    if (method === Method.GET || method === Method.HEAD) {
      this.single(res, argv, access, base64, resp2, method === Method.HEAD);
      return;
    }
    this.readBody(res, req, K_PATH, method, access, base64, resp2, argv, nPath, used);
  }

  /** Start reading a body; the request continues in bodyComplete(). */
  private readBody(
    res: HttpResponse, req: HttpRequest, kind: number, method: MethodKind, access: AccessKind,
    base64: boolean, resp2: boolean, prefix: Argv | null, nPath: number, prefixLen: number,
  ): void {
    const cl = req.getHeader('content-length');
    const declared = cl === '' ? -1 : Number(cl);
    const limit = this.maxRequest - prefixLen;
    if (declared > limit) {
      this.tooLarge(res, this.cors);
      return;
    }
    const p = this.pool.pop() ?? new PendingBody(this);
    p.res = res;
    p.kind = kind;
    p.method = method;
    p.access = access;
    p.base64 = base64;
    p.resp2 = resp2;
    p.cors = this.cors;
    p.aborted = false;
    p.limit = limit;
    p.nPath = nPath;
    // JSON endpoints (no prefix) allocate only if the body comes in more than one chunk.
    const size = prefixLen === 0 ? 0 : prefixLen + (declared >= 0 ? Math.min(declared, PREALLOC_MAX) : 0);
    p.buf = size === 0 ? EMPTY : Buffer.allocUnsafe(size);
    p.start = p.pos = prefixLen;
    const argv = p.argv;
    if (prefix !== null) {
      prefix.buf.copy(p.buf, 0, 0, prefixLen);
      argv.reset(p.buf);
      for (let i = 0; i < prefix.count; i++) argv.push(prefix.start[i], prefix.end[i]);
    }
    res.onAborted(p.onAborted);
    res.onData(p.onData);
  }

  /** @internal The whole body of `p` is in; answer (inside res.cork). */
  bodyComplete(res: HttpResponse, p: PendingBody): void {
    this.cors = p.cors;
    const buf = p.buf;
    if (p.kind === K_PATH) {
      const argv = p.argv;
      argv.buf = buf;
      if (p.pos > p.start) insertArg(argv, p.nPath, p.start, p.pos);
      this.single(res, argv, p.access, p.base64, p.resp2, false);
      return;
    }
    const list = this.list;
    if (!list.parse(buf, p.start, p.pos, p.kind !== K_SINGLE)) {
      this.sendJson(res, S_400, errorJson(list.error!), false);
      return;
    }
    this.runList(res, p.kind, buf, p.start, p.pos, p.access, p.base64, p.resp2);
  }

  /** Run the commands of a JSON body (parsed into this.list from buf[start, pos)). */
  private runList(res: HttpResponse, kind: number, buf: Buffer, start: number, pos: number, access: AccessKind, base64: boolean, resp2: boolean): void {
    const list = this.list;
    if (kind === K_SINGLE) {
      list.load(0, this.argv, buf);
      this.single(res, this.argv, access, base64, resp2, false);
      return;
    }
    if (this.engine.pauseUntil !== 0 && this.listPaused(buf)) {
      const copy = Buffer.from(buf.subarray(start, pos));
      this.holdPaused(res, () => {
        list.parse(copy, 0, copy.length, true);
        this.runList(res, kind, copy, 0, copy.length, access, base64, resp2);
      });
      return;
    }
    if (kind === K_PIPELINE) this.pipeline(res, buf, access, base64, resp2, null);
    else this.multiExec(res, buf, access, base64);
  }

  /** CLIENT PAUSE covers a command of this.list (a pipeline or transaction then waits whole). */
  private listPaused(buf: Buffer): boolean {
    const list = this.list;
    const argv = this.argv;
    const reg = this.engine.registry;
    for (let i = 0; i < list.count; i++) {
      list.load(i, argv, buf);
      const def = reg.lookup(argv);
      if (def !== undefined && pauseCovers(this.engine, def)) return true;
    }
    return false;
  }

  /**
   * CLIENT PAUSE: the request waits until the pause ends, as Redis holds a paused client's
   * command; `run` answers it then (and waits again if a new pause has begun).
   */
  private holdPaused(res: HttpResponse, run: () => void): void {
    const waiting = { aborted: false };
    res.onAborted(() => { waiting.aborted = true; });
    const cors = this.cors;
    afterPause(this.engine, () => {
      if (waiting.aborted) return;
      res.cork(() => {
        this.cors = cors;
        try {
          run();
        } catch (err) {
          this.internalError(res, err);
        }
      });
    });
  }

  /** The prefetch of the command argv names, if it has one (only SEARCH.* rows do: first letter s). */
  private prefetchOf(argv: Argv): Prefetch | undefined {
    if (argv.count === 0 || (argv.buf[argv.start[0]] | 0x20) !== 0x73) return undefined;
    return this.engine.registry.lookup(argv)?.prefetch;
  }

  /** True while a request whose prefetch completed runs (it must not start another). */
  private prefetched = false;

  /** Start `pf`; when it is ready, `run` executes the request (with its own copy of argv). */
  private prefetch(res: HttpResponse, argv: Argv, pf: Prefetch, run: (copy: Argv) => void): boolean {
    const copy = argv.clone();
    const waiting = { aborted: false };
    const cors = this.cors;
    const started = pf(this.client, copy, () => {
      if (waiting.aborted) return;
      res.cork(() => {
        this.cors = cors;
        this.prefetched = true;
        try {
          run(copy);
        } catch (err) {
          this.internalError(res, err);
        } finally {
          this.prefetched = false;
        }
      });
    });
    if (started) res.onAborted(() => { waiting.aborted = true; });
    return started;
  }

  /** @internal The shared buffer for a body read in one chunk (used synchronously only). */
  bodyScratch(n: number): Buffer {
    if (this.body.length < n) this.body = Buffer.allocUnsafe(Math.max(n, 2 * this.body.length));
    return this.body;
  }

  /** @internal Put a finished PendingBody back. */
  recycle(p: PendingBody): void {
    if (this.pool.length < 1024) this.pool.push(p);
  }

  // ---------------------------------------------------------------- execution

  private single(res: HttpResponse, argv: Argv, access: AccessKind, base64: boolean, resp2: boolean, head: boolean): void {
    // A command whose slow part runs elsewhere (SEARCH.* in the search worker): started now,
    // answered when ready, so that the engine thread does not wait for it.
    if (!this.prefetched) {
      const pf = this.prefetchOf(argv);
      if (pf !== undefined && this.prefetch(res, argv, pf, (copy) => this.single(res, copy, access, base64, resp2, head))) return;
    }
    if (this.engine.pauseUntil !== 0) {
      const def = this.engine.registry.lookup(argv);
      if (def !== undefined && pauseCovers(this.engine, def)) {
        const copy = argv.clone();
        this.holdPaused(res, () => this.single(res, copy, access, base64, resp2, head));
        return;
      }
    }
    const c = this.client;
    applyAccess(c, this.engine.acl, access);
    this.dirtyMark = this.engine.dirty;
    if (resp2) {
      execute(c, argv, this.resp);
      const body = this.resp.take();
      this.answer(res, body.length > 0 && body[0] === 0x2d ? S_400 : null, V_OCTET, body, head);
      return;
    }
    const w = this.writer;
    w.begin(0, base64);
    w.mark();
    execute(c, argv, w);
    w.settle();
    this.answer(res, w.itemErrors !== 0 ? S_400 : null, V_JSON, w.view(), head);
  }

  /**
   * The reply of executed commands: at once, or (appendfsync always) once the journal write
   * it depends on is durable, as for RESP clients: no client sees a write a crash could undo.
   */
  private answer(res: HttpResponse, status: string | null, type: string, body: Uint8Array, head: boolean, wroteBefore = false): void {
    const gate = this.engine.commitGate;
    if (gate !== null) {
      const held = new HeldReply(res, status, type, this.currentSyncToken(), this.cors, head);
      if (gate.hold(held, wroteBefore || this.engine.dirty !== this.dirtyMark)) {
        held.keep(body);
        return;
      }
    }
    if (type === V_JSON) this.sendJson(res, status, body, head);
    else this.sendResp(res, status, body as Buffer, head);
  }

  /**
   * Run the commands of a pipeline (parsed into this.list from buf). A command whose slow part
   * runs elsewhere (SEARCH.* in the search worker, see `single`) ends the turn: the output so
   * far and copies of the commands left are kept, the request is sent, and the pipeline resumes
   * at that command once answered (a pipeline is not atomic: other requests may run meanwhile,
   * as on Upstash).
   */
  private pipeline(res: HttpResponse, buf: Buffer, access: AccessKind, base64: boolean, resp2: boolean, done: PipelineDone | null): void {
    const c = this.client;
    applyAccess(c, this.engine.acl, access);
    this.dirtyMark = this.engine.dirty;
    const list = this.list;
    const w = this.writer;
    const out = this.resp;
    const total = done === null ? list.count : done.total;
    const from = done === null ? 0 : total - done.left.length;
    if (resp2) {
      // The concatenation of each command's RESP2 reply (redis-rest.md §4.5 recommendation).
      if (done !== null) out.raw(done.bytes);
    } else if (done === null) {
      w.begin(1, base64);
      w.array(total);
    } else w.resumeArray(done.bytes, total, done.items, done.errors, base64);
    for (let i = from; i < total; i++) {
      let argv = this.argv;
      if (done === null) list.load(i, argv, buf);
      else argv = done.left[i - from];
      if (i !== from || done === null) {
        const pf = this.prefetchOf(argv);
        if (pf !== undefined && this.suspendPipeline(res, argv, pf, buf, access, base64, resp2, i, done)) return;
      }
      if (resp2) execute(c, argv, out);
      else {
        w.mark();
        execute(c, argv, w);
        w.settle();
      }
    }
    // A write of an earlier part counts for the reply's durability wait.
    const wrote = done !== null && done.wrote;
    if (resp2) this.answer(res, null, V_OCTET, out.take(), false, wrote);
    else this.answer(res, null, V_JSON, w.view(), false, wrote);
  }

  /** Keep a pipeline's output so far and its commands from `i` on; resume at `i` once its prefetch is ready. */
  private suspendPipeline(res: HttpResponse, argv: Argv, pf: Prefetch, buf: Buffer, access: AccessKind, base64: boolean, resp2: boolean, i: number, done: PipelineDone | null): boolean {
    let kept: PipelineDone | null = null;
    // The answer comes in a later turn, after `kept` is set below.
    if (!this.prefetch(res, argv, pf, () => this.pipeline(res, buf, access, base64, resp2, kept))) return false;
    const total = done === null ? this.list.count : done.total;
    let left: Argv[];
    if (done !== null) left = done.left.slice(i - (total - done.left.length));
    else {
      left = [];
      for (let j = i; j < total; j++) {
        this.list.load(j, this.argv, buf);
        left.push(this.argv.clone());
      }
    }
    const w = this.writer;
    const wrote = (done !== null && done.wrote) || this.engine.dirty !== this.dirtyMark;
    kept = resp2
      ? { bytes: this.resp.take(), items: 0, errors: 0, total, left, wrote }
      : { bytes: Buffer.from(w.view()), items: w.items, errors: w.itemErrors, total, left, wrote };
    return true;
  }

  /**
   * MULTI, every command queued (a rejection at queue time - unknown command, arity, REST or
   * token rules - discards the whole transaction with one error, as EXECABORT does), then EXEC.
   * Run-time errors are per-command items; the others still run (Redis semantics). Always JSON.
   */
  private multiExec(res: HttpResponse, buf: Buffer, access: AccessKind, base64: boolean): void {
    const c = this.txClient;
    applyAccess(c, this.engine.acl, access);
    this.dirtyMark = this.engine.dirty;
    const deny = c.deny;
    const qs = this.queueSink;
    qs.firstError = null;
    qs.index = 0;
    c.multi = null;
    c.multiError = false;
    // MULTI and EXEC are refused to REST clients (NO_REST); here the server itself issues them,
    // through execute() like any command so that everything execute() does after a command
    // (serving clients blocked on keys the transaction filled...) happens.
    c.deny = null;
    execute(c, MULTI_ARGV, qs);
    c.deny = deny;
    const list = this.list;
    const argv = this.argv;
    // Stop at the first rejection: a rejected EXEC inside the list would end the MULTI state
    // and let the following commands run at once.
    for (let i = 0; i < list.count && qs.firstError === null && c.multi !== null; i++) {
      qs.index = i;
      list.load(i, argv, buf);
      execute(c, argv, qs);
    }
    if (c.multiError || qs.firstError !== null || c.multi === null) {
      discardTransaction(c);
      let why = qs.firstError ?? 'unknown error';
      if (why.startsWith(EXECABORT_PREFIX)) why = why.slice(EXECABORT_PREFIX.length); // a refused EXEC
      else if (why.startsWith('ERR ')) why = why.slice(4);
      this.sendJson(res, S_400, errorJson(`${EXECABORT_PREFIX}${why} (command ${qs.at + 1})`), false);
      return;
    }
    const w = this.writer;
    w.begin(1, base64);
    c.deny = null;
    execute(c, EXEC_ARGV, w);
    discardTransaction(c); // no-op after EXEC; guarantees no state survives the request
    if (!w.finished) {
      // A queued handler broke the one-reply contract: never send malformed JSON.
      w.begin(1, base64);
      w.error('ERR internal error: the transaction did not produce a well-formed reply');
    }
    this.answer(res, w.topError ? S_400 : null, V_JSON, w.view(), false);
  }

  // ---------------------------------------------------------------- responses

  /** The read-your-writes token: changes whenever the dataset changed since the last reply. */
  private currentSyncToken(): string {
    const d = this.engine.writes;
    if (d !== this.seenDirty) {
      this.seenDirty = d;
      this.syncSeq++;
      this.syncToken = String(this.syncSeq);
    }
    return this.syncToken;
  }

  /**
   * Content type, sync token, and the CORS headers when the request came from a browser (it
   * carried an Origin): a browser page can then call the API (read-only token) and read the
   * sync token; server-side clients do not pay for headers they ignore.
   */
  private commonHeaders(res: HttpResponse, type: string): void {
    res.writeHeader(H_CONTENT_TYPE, type);
    res.writeHeader(H_SYNC, this.currentSyncToken());
    if (this.cors) {
      res.writeHeader(H_ACAO, '*');
      res.writeHeader(H_ACEH, H_SYNC);
    }
  }

  /** @internal A JSON reply; status null = 200 (uWS's default). */
  sendJson(res: HttpResponse, status: string | null, body: Uint8Array, head: boolean): void {
    if (status !== null) res.writeStatus(status);
    this.commonHeaders(res, V_JSON);
    if (head) res.endWithoutBody();
    else res.end(body);
  }

  private sendResp(res: HttpResponse, status: string | null, body: Buffer, head: boolean): void {
    if (status !== null) res.writeStatus(status);
    this.commonHeaders(res, V_OCTET);
    if (head) res.endWithoutBody();
    else res.end(body);
  }

  /**
   * @internal 413 at once. The connection stays open: uWS goes on reading (and we drop) the
   * rest of the body, so clients that are still sending (fetch streams) get the reply instead
   * of a reset.
   */
  tooLarge(res: HttpResponse, cors: boolean): void {
    this.cors = cors;
    res.cork(() => {
      res.writeStatus(S_413);
      this.commonHeaders(res, V_JSON);
      res.end(errorJson(REST_ERR.TOO_LARGE));
    });
  }

  /** @internal A bug of ours: answer 500 if the response is still ours to answer. */
  internalError(res: HttpResponse, err: unknown): void {
    console.error('REST internal error:', err);
    try {
      res.cork(() => {
        res.writeStatus(S_500);
        this.commonHeaders(res, V_JSON);
        res.end(errorJson('ERR internal error'), true);
      });
    } catch {
      // already answered or aborted
    }
  }

  private preflight(res: HttpResponse, req: HttpRequest): void {
    const asked = req.getHeader('access-control-request-headers');
    res.writeStatus(S_204);
    res.writeHeader(H_ACAO, '*');
    res.writeHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
    res.writeHeader('Access-Control-Allow-Headers', asked !== '' ? asked : ALLOW_HEADERS);
    res.writeHeader(H_ACEH, H_SYNC);
    res.writeHeader('Access-Control-Max-Age', '86400');
    res.endWithoutBody();
  }
}
