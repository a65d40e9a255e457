/**
 * Workflow test helpers: our server with a QStash token that is base64 JSON with a UserID (the
 * SDK's webhooks read it), and a local node:http app serving workflows with the unmodified
 * @upstash/workflow SDK (its fetch-style `serve`/`serveMany` from the cloudflare entry, given the
 * env per request: QSTASH_URL pointed at our server, both signing keys so that the SDK verifies
 * every delivery). The app counts and records every request per path and checks each signature
 * itself too.
 */
import http from 'node:http';
import net from 'node:net';
import { startQ, sleep, until, type QServer } from '../qstash/helpers.js';
import { loadSdk } from '../qstash/sdk.js';

export { sleep, until };
export type { QServer };

/* eslint-disable @typescript-eslint/no-explicit-any */
export const WTOKEN = Buffer.from(JSON.stringify({ UserID: 'testUser', Password: 'testPassword' })).toString('base64');

export async function startWf(opts: { dir?: string; httpPort?: number; args?: string[] } = {}): Promise<QServer> {
  // A free port can be taken by another process between the probe and the listen (other jobs
  // share the machine): try again with new ports.
  for (let attempt = 0; ; attempt++) {
    try {
      return await startQ({ dir: opts.dir, httpPort: opts.httpPort, args: ['--qstash-token', WTOKEN, ...(opts.args ?? [])] });
    } catch (e) {
      if (attempt >= 3 || !/EADDRINUSE/.test((e as Error).message)) throw e;
    }
  }
}

export async function keysOf(base: string): Promise<{ current: string; next: string }> {
  const r = await fetch(`${base}/v2/keys`, { headers: { authorization: `Bearer ${WTOKEN}` } });
  return await r.json() as { current: string; next: string };
}

export async function wfSdk(): Promise<any> {
  return import('@upstash/workflow/cloudflare' as string);
}

export async function wfClient(base: string): Promise<any> {
  const { Client } = await import('@upstash/workflow' as string);
  return new Client({ baseUrl: base, token: WTOKEN, retry: false });
}

export interface Hit { path: string; method: string; headers: http.IncomingHttpHeaders; body: string; at: number; verified: boolean | string; status?: number }

type FetchHandler = (req: Request, env: Record<string, string>) => Promise<Response>;
type RawHandler = (hit: Hit, res: http.ServerResponse) => void | Promise<void>;

export interface App {
  url: string;
  env: Record<string, string>;
  hits: Hit[];
  /** Requests per path (without the query). */
  count(path: string): number;
  /** Highest number of requests handled at once per path prefix. */
  maxConcurrent: Map<string, number>;
  /** A workflow route: serve(...) or serveMany(...) from the SDK (their `fetch`). */
  route(path: string, h: { fetch: FetchHandler }): void;
  /** A plain endpoint (third-party call target, non-workflow destination...). */
  raw(path: string, h: RawHandler): void;
  close(): Promise<void>;
}

export async function app(base: string, keys: { current: string; next: string }, extraEnv: Record<string, string> = {}): Promise<App> {
  const { Receiver } = await loadSdk();
  const rec = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
  const routes = new Map<string, FetchHandler>();
  const raws = new Map<string, RawHandler>();
  const current = new Map<string, number>();
  const a: App = {
    url: '', env: {}, hits: [], maxConcurrent: new Map(),
    count: (p) => a.hits.filter((h) => h.path.split('?')[0] === p).length,
    route: (p, h) => { routes.set(p, h.fetch); },
    raw: (p, h) => { raws.set(p, h); },
    close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()); }),
  };
  const find = <T>(m: Map<string, T>, p: string): T | undefined => {
    if (m.has(p)) return m.get(p);
    // serveMany: a route registered as "/many/*" takes "/many/<workflowId>".
    for (const [k, v] of m) if (k.endsWith('/*') && p.startsWith(k.slice(0, -1))) return v;
    return undefined;
  };
  const srv = http.createServer(async (req, res) => {
    const path = req.url!.split('?')[0];
    const group = path.split('/').slice(0, 2).join('/');
    current.set(group, (current.get(group) ?? 0) + 1);
    a.maxConcurrent.set(group, Math.max(a.maxConcurrent.get(group) ?? 0, current.get(group)!));
    res.on('close', () => { current.set(group, current.get(group)! - 1); });
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const sig = req.headers['upstash-signature'];
    const verified = sig === undefined ? 'unsigned' : await rec.verify({ signature: String(sig), body: body.toString('utf8') }).then(() => true, (e: Error) => e.message);
    const hit: Hit = { path: req.url!, method: req.method!, headers: req.headers, body: body.toString('utf8'), at: Date.now(), verified };
    a.hits.push(hit);
    const raw = find(raws, path);
    if (raw !== undefined) { await raw(hit, res); return; }
    const h = find(routes, path);
    if (h === undefined) { res.writeHead(404); res.end('no route'); return; }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const request = new Request(`${a.url}${req.url}`, { method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body });
    let response: Response;
    try {
      response = await h(request, a.env);
    } catch (e) {
      response = new Response(String(e), { status: 599 });
    }
    hit.status = response.status;
    const out = Buffer.from(await response.arrayBuffer());
    const rh: Record<string, string> = {};
    response.headers.forEach((v, k) => { rh[k] = v; });
    res.writeHead(response.status, rh);
    res.end(out);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  a.url = `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`;
  a.env = { QSTASH_URL: base, QSTASH_TOKEN: WTOKEN, QSTASH_CURRENT_SIGNING_KEY: keys.current, QSTASH_NEXT_SIGNING_KEY: keys.next, ...extraEnv };
  return a;
}

/** Wait for a run to reach a state (through the SDK's client.logs). */
export async function runState(c: any, workflowRunId: string, states: string[], timeoutMs = 15000): Promise<any> {
  let last: any;
  try {
    return await until(async () => {
      const r = await c.logs({ workflowRunId });
      last = r.runs[0];
      return last !== undefined && states.includes(last.workflowState) ? last : undefined;
    }, timeoutMs, `run ${workflowRunId} in ${states.join('|')}`);
  } catch (e) {
    throw new Error(`${(e as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
}

/** Wait until an app route has seen n requests and nothing more arrives for `quietMs`. */
export async function settle(a: App, path: string, n: number, timeoutMs = 15000, quietMs = 300): Promise<number> {
  await until(() => a.count(path) >= n, timeoutMs, `${n} requests to ${path} (got ${a.count(path)})`);
  await sleep(quietMs);
  return a.count(path);
}

export function stepsOf(run: any): any[] {
  return run.steps.flatMap((g: any) => g.steps.map((s: any) => ({ ...s, group: g.type })));
}
