/**
 * Start real server processes for tests: ours (node dist/main.js) and a real redis-server,
 * each on a free port, stopped by the test (t.after / after).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { before, after } from 'node:test';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MAIN = path.join(ROOT, 'dist', 'main.js');

/**
 * Ports below the kernel's ephemeral range: an outgoing connection (any client socket of the
 * machine) never takes one, so a port probed free stays free until the server binds it, unless
 * another listener takes it. A port probed inside the range has been taken by a client socket
 * meanwhile under CI load.
 */
const EPHEMERAL_LOW = (() => {
  try {
    return Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'latin1').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
})();
const PROBE_LOW = Math.max(10000, EPHEMERAL_LOW - 12000);

function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(null));
    s.listen(port, '127.0.0.1', () => {
      const got = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(got));
    });
  });
}

export async function freePort(): Promise<number> {
  for (let i = 0; EPHEMERAL_LOW - PROBE_LOW >= 1000 && i < 20; i++) {
    const port = await tryListen(PROBE_LOW + Math.floor(Math.random() * (EPHEMERAL_LOW - PROBE_LOW)));
    if (port !== null) return port;
  }
  const port = await tryListen(0);
  if (port === null) throw new Error('no free port');
  return port;
}

export interface Proc {
  readonly port: number;
  readonly httpPort: number;
  readonly proc: ChildProcess;
  readonly dir: string;
  /** Everything the process printed so far. */
  output(): string;
  /** Send `signal`; SIGKILL follows after `killAfterMs` (10 s) if the process has not ended. */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<number | null>;
}

async function waitForPort(port: number, proc: ChildProcess, out: () => string): Promise<void> {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}):\n${out()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server did not listen on ${port}:\n${out()}`);
}

function track(proc: ChildProcess): () => string {
  let text = '';
  proc.stdout?.on('data', (d) => { text += d; });
  proc.stderr?.on('data', (d) => { text += d; });
  return () => text;
}

function stopper(proc: ChildProcess) {
  return (signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 10000) => new Promise<number | null>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve(proc.exitCode);
    const t = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
    proc.once('exit', (code) => { clearTimeout(t); resolve(code); });
    proc.kill(signal);
  });
}

export interface OursOptions {
  /**
   * Data directory to use (restart tests). The caller owns it: it is not removed on stop.
   * Without it, each call gets a fresh temporary directory, removed on stop.
   */
  dir?: string;
  /** Command prefix, e.g. ['prlimit', '--fsize=1000000:unlimited'] (fault tests). */
  wrap?: string[];
  /** Fixed ports (a restart that must keep the address); free ports by default. */
  port?: number;
  httpPort?: number;
}

/** Start our server. `args` are extra command-line options. */
export async function startOurs(args: string[] = [], env: NodeJS.ProcessEnv = {}, opts: OursOptions = {}): Promise<Proc> {
  let earlier = '';
  for (let attempt = 1; ; attempt++) {
    try {
      const proc = await startOursOnce(args, env, opts);
      return earlier === '' ? proc : { ...proc, output: () => earlier + proc.output() };
    } catch (err) {
      // A probed free port can be taken before the server binds it (another socket of the
      // machine got it meanwhile): probe again. Fixed ports are the caller's choice.
      const raced = opts.port === undefined && opts.httpPort === undefined && /EADDRINUSE/.test(String(err));
      if (!raced || attempt >= 3) throw err;
      // The failed start may already have changed the data directory (a journal replayed into
      // LMDB before the listen failed): what it printed stays part of the output tests read.
      earlier += `[attempt ${attempt}, port taken] ${(err as Error).message}\n`;
    }
  }
}

async function startOursOnce(args: string[], env: NodeJS.ProcessEnv, opts: OursOptions): Promise<Proc> {
  const port = opts.port ?? await freePort();
  const httpPort = opts.httpPort ?? await freePort();
  const ownDir = opts.dir === undefined;
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rs-test-'));
  const argv = [MAIN, '--port', String(port), '--http-port', String(httpPort), '--dir', dir, ...args];
  const wrap = opts.wrap ?? [];
  const proc = spawn(wrap.length > 0 ? wrap[0] : process.execPath, wrap.length > 0 ? [...wrap.slice(1), process.execPath, ...argv] : argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const out = track(proc);
  try {
    await waitForPort(port, proc, out);
  } catch (err) {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await new Promise((r) => proc.once('exit', r));
    }
    if (ownDir) fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const stop = stopper(proc);
  return {
    port, httpPort, proc, dir, output: out,
    stop: async (signal, killAfterMs) => {
      const code = await stop(signal, killAfterMs);
      if (ownDir) fs.rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Run our server to completion (it is expected to exit by itself, e.g. refusing to start). */
export function runOursToExit(args: string[], dir: string, timeoutMs = 15000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [MAIN, '--port', '0', '--http-port', '0', '--dir', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = track(proc);
    const t = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`server did not exit:\n${out()}`)); }, timeoutMs);
    proc.once('exit', (code) => { clearTimeout(t); resolve({ code, output: out() }); });
  });
}

/** Start a real redis-server (Debian's), without persistence. */
export async function startRedis(args: string[] = []): Promise<Proc> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-redis-'));
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = track(proc);
  await waitForPort(port, proc, out);
  const stop = stopper(proc);
  return {
    port, httpPort: 0, proc, dir, output: out,
    stop: async (signal, killAfterMs) => {
      const code = await stop(signal, killAfterMs);
      fs.rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/**
 * The differential tests' set-up: ours (no fsync) and a redis-server started before the
 * file's tests and stopped after them; `use` receives both once they answer.
 */
export function withBothServers(use: (ours: Proc, redis: Proc) => void, oursArgs = ['--appendfsync', 'no'], redisArgs: string[] = []): void {
  const procs: Proc[] = [];
  // Each one is kept as soon as it runs, so a failed start of the other still stops it.
  const keep = (p: Proc): Proc => { procs.push(p); return p; };
  before(async () => {
    const [ours, redis] = await Promise.all([startOurs(oursArgs).then(keep), startRedis(redisArgs).then(keep)]);
    use(ours, redis);
  });
  after(async () => { await Promise.all(procs.map((p) => p.stop())); });
}

/**
 * A maker of fresh, empty data directories under one temporary directory that the file's
 * `after` hook removes (the set-up of the store tests that restart servers on a directory).
 */
export function dataDirs(prefix: string): () => string {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  let seq = 0;
  return () => {
    const d = path.join(tmp, `d${seq++}`);
    fs.mkdirSync(d);
    return d;
  };
}
