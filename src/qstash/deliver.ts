/**
 * One HTTP delivery attempt over node:http/https with keep-alive agents (a pool of sockets per
 * destination host). Lighter than fetch per request (no web streams, no AbortSignal), which
 * matters because deliveries run on the engine's thread. Resolves with the response, rejects
 * with an Error on connection failures, DNS errors, timeouts and aborts. The timeout bounds the
 * whole attempt (connect, response headers and body), not only idle gaps, as Upstash-Timeout
 * does: a destination trickling bytes is cut off too.
 */
import http from 'node:http';
import https from 'node:https';

const agentOpts = { keepAlive: true, maxSockets: 256, keepAliveMsecs: 10_000 };
const httpAgent = new http.Agent(agentOpts);
const httpsAgent = new https.Agent(agentOpts);

/** The part of a response body kept for logs, the DLQ and callbacks. */
const MAX_KEPT_BODY = 1 << 20;

export interface AttemptResult { status: number; headers: Record<string, string[]>; body: Buffer }

export interface Attempt {
  readonly done: Promise<AttemptResult>;
  abort(reason: Error): void;
}

export function attempt(url: string, method: string, headers: Record<string, string>, body: Buffer, timeoutMs: number): Attempt {
  let req: http.ClientRequest | null = null;
  let fail: (e: Error) => void = () => {};
  let timer: NodeJS.Timeout | null = null;
  const done = new Promise<AttemptResult>((resolve0, reject0) => {
    const settle = () => { if (timer !== null) { clearTimeout(timer); timer = null; } };
    const resolve = (r: AttemptResult) => { settle(); resolve0(r); };
    const reject = (e: Error) => { settle(); reject0(e); };
    fail = reject;
    let u: URL;
    try { u = new URL(url); } catch { reject(new Error(`invalid url: ${url}`)); return; }
    const mod = u.protocol === 'https:' ? https : http;
    const hasBody = method !== 'GET' && method !== 'HEAD';
    const hs: Record<string, string | number> = { ...headers };
    if (hasBody) hs['Content-Length'] = body.length;
    try {
      req = mod.request(u, { method, headers: hs, agent: u.protocol === 'https:' ? httpsAgent : httpAgent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => { if (size < MAX_KEPT_BODY) { chunks.push(c); size += c.length; } });
        res.on('end', () => {
          const rh: Record<string, string[]> = {};
          const raw = res.rawHeaders;
          for (let i = 0; i + 1 < raw.length; i += 2) (rh[canonicalHeader(raw[i])] ??= []).push(raw[i + 1]);
          const b = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: rh, body: b.length > MAX_KEPT_BODY ? b.subarray(0, MAX_KEPT_BODY) : b });
        });
        res.on('error', reject);
      });
    } catch (err) {
      reject(err as Error); // invalid header names or values
      return;
    }
    // Rejected here, not only through the request's 'error': once the response has begun, a
    // destroyed request reports on the response (or not at all).
    timer = setTimeout(() => {
      timer = null;
      const e = new Error(`request timed out after ${timeoutMs}ms`);
      reject(e);
      req?.destroy(e);
    }, Math.min(timeoutMs, 2 ** 31 - 1));
    req.on('error', reject);
    req.end(hasBody ? body : undefined);
  });
  return {
    done,
    abort: (reason) => { fail(reason); req?.destroy(reason); },
  };
}

const TOKEN_CHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `test-header` -> `Test-Header`: the service (written in Go) keeps header names in Go's
 * canonical MIME form, which is how it returns them in messages, schedules, logs and DLQ
 * entries; our HTTP server hands them to us lower-cased. A name with a byte outside the
 * token set stays as it is, as Go leaves it.
 */
export function canonicalHeader(k: string): string {
  if (!TOKEN_CHAR.test(k)) return k;
  let out = '';
  let upper = true;
  for (let i = 0; i < k.length; i++) {
    const c = k[i];
    out += upper ? c.toUpperCase() : c.toLowerCase();
    upper = c === '-';
  }
  return out;
}
