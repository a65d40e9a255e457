/**
 * QStash test helpers: our server started with a fixed QStash token (and optionally a kept
 * data dir, for restart tests), and local HTTP endpoints (node:http on 127.0.0.1) that record
 * every delivery and verify its Upstash-Signature with the SDK's Receiver.
 */
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { MAIN, freePort } from '../helpers/server.js';
import { loadSdk } from './sdk.js';

export const QTOKEN = 'test-qstash-token';

export interface QServer {
  httpPort: number; port: number; dir: string; base: string; proc: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

async function waitPort(port: number, proc: ChildProcess, out: () => string): Promise<void> {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server exited early:\n${out()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server did not start:\n${out()}`);
}

/** Start our server; pass `dir` (and the same ports) to restart on the same data. */
export async function startQ(opts: { dir?: string; args?: string[]; httpPort?: number } = {}): Promise<QServer> {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rs-qstash-'));
  const port = await freePort();
  const httpPort = opts.httpPort ?? await freePort();
  const proc = spawn(process.execPath, [MAIN, '--port', String(port), '--http-port', String(httpPort), '--dir', dir,
    ...(opts.args ?? ['--qstash-token', QTOKEN])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  proc.stdout?.on('data', (d) => { text += d; });
  proc.stderr?.on('data', (d) => { text += d; });
  await waitPort(port, proc, () => text);
  return {
    httpPort, port, dir, proc, base: `http://127.0.0.1:${httpPort}`, output: () => text,
    stop: (signal = 'SIGTERM') => new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
      proc.once('exit', () => { clearTimeout(t); resolve(); });
      proc.kill(signal);
    }),
  };
}

export interface Delivery {
  method: string; path: string; headers: http.IncomingHttpHeaders; body: string; at: number; verified: boolean | string;
}

export interface Endpoint {
  url: string;
  deliveries: Delivery[];
  /** Current number of requests being handled (for parallelism checks) and its maximum. */
  maxConcurrent: number;
  handler: (d: Delivery, res: http.ServerResponse) => void | Promise<void>;
  waitFor(n: number, timeoutMs?: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
export async function endpoint(keys: { current: string; next: string }): Promise<Endpoint> {
  const { Receiver } = await loadSdk();
  const rec = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
  let current = 0;
  const ep: Endpoint = {
    url: '', deliveries: [], maxConcurrent: 0,
    handler: (_d, res) => { res.writeHead(200); res.end('ok'); },
    waitFor: async (n, timeoutMs = 10000) => {
      const deadline = Date.now() + timeoutMs;
      while (ep.deliveries.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} deliveries, got ${ep.deliveries.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return ep.deliveries;
    },
    close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()); }),
  };
  const srv = http.createServer(async (req, res) => {
    current++;
    ep.maxConcurrent = Math.max(ep.maxConcurrent, current);
    res.on('close', () => { current--; });
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const verified = await rec.verify({ signature: String(req.headers['upstash-signature']), body, url: `${ep.url}${req.url}` })
      .then(() => true, (e: Error) => e.message);
    const d: Delivery = { method: req.method!, path: req.url!, headers: req.headers, body, at: Date.now(), verified };
    ep.deliveries.push(d);
    await ep.handler(d, res);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  ep.url = `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`;
  return ep;
}

export async function client(base: string, token = QTOKEN): Promise<any> {
  const { Client } = await loadSdk();
  return new Client({ token, baseUrl: base, enableTelemetry: false, retry: false });
}

export async function keysOf(base: string, token = QTOKEN): Promise<{ current: string; next: string }> {
  const r = await fetch(`${base}/v2/keys`, { headers: { authorization: `Bearer ${token}` } });
  return await r.json() as { current: string; next: string };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll until fn() is truthy. */
export async function until<T>(fn: () => Promise<T> | T, timeoutMs = 10000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Event states of one message, oldest first. */
export async function statesOf(c: any, messageId: string): Promise<string[]> {
  const r = await c.logs({ filter: { messageId } });
  return r.events.map((e: { state: string }) => e.state).reverse();
}
