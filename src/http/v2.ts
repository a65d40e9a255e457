/**
 * The /v2 API router: the Upstash-style services beside the Redis REST API (search index
 * management, the QStash-compatible queue, workflows) each register the endpoints of their
 * first /v2 path segment here. These APIs do their own authentication (Basic auth for index
 * management, QStash bearer tokens...), so they bypass the Redis REST token check.
 *
 * Handlers get the request already read: method, decoded path segments after /v2, query,
 * lower-case headers and the body bytes (bounded by max-request-size), and answer with
 * `reply()`. Everything about uWS's request lifetime (copying body chunks, onAborted, cork)
 * stays in this file.
 */
import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { HttpServer } from './server.js';

export interface V2Request {
  readonly method: string; // upper case: GET, POST, PUT, PATCH, DELETE...
  /** Raw path after "/v2/" (not decoded: a QStash destination URL keeps its // and %xx). */
  readonly rawPath: string;
  /** Decoded path segments after /v2 ("/v2/search/abc" -> ["search", "abc"]). */
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
  readonly rawQuery: string;
  /** Lower-case header names (multi-valued headers joined by ", " as uWS gives them). */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
  /** The peer address as text. */
  readonly remote: string;
}

export interface V2Response {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a Buffer/string as is. */
  body?: unknown;
}

/** A handler answers now, or later through the returned promise. */
export type V2Handler = (req: V2Request) => V2Response | Promise<V2Response>;

const STATUS: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 202: '202 Accepted', 204: '204 No Content', 400: '400 Bad Request',
  401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed',
  409: '409 Conflict', 412: '412 Precondition Failed', 413: '413 Payload Too Large', 429: '429 Too Many Requests',
  500: '500 Internal Server Error', 503: '503 Service Unavailable',
};

export class V2Router {
  private readonly handlers = new Map<string, V2Handler>();

  constructor(private readonly srv: HttpServer) {
    srv.apis.set('v2', (res, req) => this.onRequest(res, req));
  }

  /** Register the handler of every /v2/<segment>... request. */
  register(segment: string, h: V2Handler): void {
    if (this.handlers.has(segment)) throw new Error(`/v2/${segment} is registered twice`);
    this.handlers.set(segment, h);
  }

  private onRequest(res: HttpResponse, req: HttpRequest): void {
    const method = req.getMethod().toUpperCase();
    const url = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const headers = new Map<string, string>();
    req.forEach((k, v) => headers.set(k, v));
    const rawPath = url.length > 4 ? url.slice(4) : '';
    const segments = rawPath.split('/').filter((s, i) => i === 0 || s !== '').map(safeDecode);
    const handler = this.handlers.get(segments[0] ?? '');
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    if (handler === undefined) {
      send(res, { status: 404, body: { error: `no such endpoint: ${method} ${url}` } });
      return;
    }
    const limit = this.srv.engine.cfgInt('max-request-size');
    const remote = Buffer.from(res.getRemoteAddressAsText()).toString();
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    res.onData((ab, last) => {
      if (!tooBig) {
        size += ab.byteLength;
        if (size > limit) tooBig = true;
        else chunks.push(Buffer.from(Buffer.from(ab))); // uWS reuses the chunk's memory: copy
      }
      if (!last) return;
      if (tooBig) {
        if (!aborted) send(res, { status: 413, body: { error: 'request body too large' } });
        return;
      }
      const request: V2Request = {
        method, rawPath, segments, rawQuery, headers, remote,
        query: new URLSearchParams(rawQuery), body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
      };
      let r: V2Response | Promise<V2Response>;
      try {
        r = handler(request);
      } catch (err) {
        r = internal(err);
      }
      if (r instanceof Promise) {
        r.catch(internal).then((v) => { if (!aborted) res.cork(() => send(res, v)); });
      } else if (!aborted) {
        send(res, r);
      }
    });
  }
}

function internal(err: unknown): V2Response {
  console.error('internal error in a /v2 handler:', err);
  return { status: 500, body: { error: 'internal error' } };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function send(res: HttpResponse, r: V2Response): void {
  const status = r.status ?? 200;
  res.writeStatus(STATUS[status] ?? `${status} Status`);
  let body: string | Buffer = '';
  let type = 'application/json';
  if (Buffer.isBuffer(r.body)) {
    body = r.body;
    type = 'application/octet-stream';
  } else if (typeof r.body === 'string') {
    body = r.body;
    type = 'text/plain; charset=utf-8';
  } else if (r.body !== undefined) {
    body = JSON.stringify(r.body);
  }
  const hs = r.headers ?? {};
  if (!Object.keys(hs).some((k) => k.toLowerCase() === 'content-type') && status !== 204) res.writeHeader('Content-Type', type);
  for (const [k, v] of Object.entries(hs)) res.writeHeader(k, v);
  res.end(body);
}
