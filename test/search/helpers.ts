/**
 * Helpers of the search tests: a server process on a data directory the test keeps across
 * restarts, Basic-auth fetch of the management API, and the @upstash/search SDK loaded from
 * node_modules.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MAIN, freePort } from '../helpers/server.js';

export const EMAIL = 'owner@example.com';
export const API_KEY = 'test-api-key-0123456789';

export interface SearchProc {
  port: number;
  httpPort: number;
  dir: string;
  base: string;
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rs-search-'));
}

/** Start our server on `dir` (kept after stop: the caller removes it). */
export async function startSearch(dir: string, args: string[] = ['--account-email', EMAIL, '--api-key', API_KEY]): Promise<SearchProc> {
  const port = await freePort();
  const httpPort = await freePort();
  const proc = spawn(process.execPath, [MAIN, '--port', String(port), '--http-port', String(httpPort), '--dir', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  proc.stdout!.on('data', (d) => { text += d; });
  proc.stderr!.on('data', (d) => { text += d; });
  const deadline = Date.now() + 15000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited early:\n${text}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`server did not start:\n${text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port, httpPort, dir, proc, base: `http://127.0.0.1:${httpPort}`, output: () => text,
    stop: () => new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
      proc.once('exit', () => { clearTimeout(t); resolve(); });
      proc.kill('SIGTERM');
    }),
  };
}

export function basic(email = EMAIL, key = API_KEY): string {
  return 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');
}

export interface Reply { status: number; body: any; text: string }

/** A management API call with the test account's credentials (or the given Authorization). */
export async function api(base: string, method: string, p: string, body?: unknown, auth: string | null = basic()): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (auth !== null) headers.authorization = auth;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = undefined;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body: parsed, text };
}

/** A data-plane call the way the SDK makes it (POST, Bearer token). */
export async function dataCall(endpoint: string, token: string, p: string, body: unknown = []): Promise<Reply> {
  const res = await fetch(`${endpoint}/${p}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = undefined;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body: parsed, text };
}

export async function createIndex(base: string, name: string, type = 'payg'): Promise<any> {
  const r = await api(base, 'POST', '/v2/search', { name, region: 'eu-west-1', type });
  if (r.status !== 200) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body;
}

/** The @upstash/search module (a devDependency). */
export async function loadSearchSdk(): Promise<any> {
  return import('@upstash/search');
}
