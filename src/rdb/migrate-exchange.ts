/**
 * MIGRATE's exchange with the target (cluster.c migrateCommand's I/O half): AUTH, SELECT when
 * the cached connection is on another db, the RESTORE commands, then one reply line each;
 * one retry on a fresh connection after a socket error that was neither a timeout nor after
 * replies came, as Redis. The caller builds the commands and interprets the replies.
 *
 * Two ways to run it: `migrateExchange` (asynchronous: the engine serves other clients while a
 * MIGRATE waits) and `migrateExchangeSync` (blocking, as Redis itself is: inside MULTI/EXEC,
 * scripts and REST, where a command must complete in its turn). The blocking one runs the
 * same code in a worker thread, with its own cached connections, and waits on an Atomics cell.
 */
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { MigrateIoError, type MigrateSocket, close as closeSocket, getSocket, cachedSockets } from './migrate-socket.js';

export interface MigrateRequest {
  host: string;
  port: number;
  dbid: number;
  /** ms, per connect/read/write (Redis's timeout argument). */
  timeout: number;
  /** An encoded AUTH command, or null. */
  auth: Uint8Array | null;
  /** The encoded RESTORE commands, `count` of them. */
  restores: Uint8Array;
  count: number;
}

/** Reply lines (without CRLF; '' for a step not taken), or the IOERR text. */
export type MigrateResult = { auth: string; select: string; lines: string[] } | { error: string };

const enc = (args: string[]): Buffer => Buffer.from(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);

export async function migrateExchange(req: MigrateRequest): Promise<MigrateResult> {
  const key = `${req.host}:${req.port}`;
  let mayRetry = true;
  for (;;) {
    let s: MigrateSocket;
    try {
      s = await getSocket(req.host, req.port, req.timeout);
    } catch (err) {
      // Redis's non-blocking connect "succeeds" on a refused connection and the write then
      // fails: only a connect that times out is reported as such.
      if (err instanceof MigrateIoError && (err.timeout || err.unreachable)) return { error: 'IOERR error or timeout connecting to the client' };
      if (mayRetry) {
        mayRetry = false;
        continue;
      }
      return { error: 'IOERR error or timeout writing to target instance' };
    }
    const r = await s.exclusive(() => once(s, req));
    if ('phase' in r) {
      closeSocket(key);
      if (mayRetry && !r.timeout && !r.gotReply) {
        mayRetry = false;
        continue;
      }
      return { error: `IOERR error or timeout ${r.phase === 'write' ? 'writing' : 'reading'} to target instance` };
    }
    return r;
  }
}

interface SocketFailure {
  phase: 'write' | 'read';
  timeout: boolean;
  gotReply: boolean;
}

async function once(s: MigrateSocket, req: MigrateRequest): Promise<{ auth: string; select: string; lines: string[] } | SocketFailure> {
  const select = s.lastDb !== req.dbid;
  const parts: Uint8Array[] = [];
  if (req.auth !== null) parts.push(req.auth);
  if (select) parts.push(enc(['SELECT', String(req.dbid)]));
  parts.push(req.restores);
  let gotReply = false;
  try {
    await s.write(Buffer.concat(parts), req.timeout);
    const auth = req.auth !== null ? await s.readLine(req.timeout) : '';
    const sel = select ? await s.readLine(req.timeout) : '';
    gotReply = true;
    const lines: string[] = [];
    for (let i = 0; i < req.count; i++) lines.push(await s.readLine(req.timeout));
    const failed = auth.startsWith('-') || sel.startsWith('-') || lines.some((l) => l.startsWith('-'));
    s.lastDb = failed ? -1 : req.dbid;
    return { auth, select: sel, lines };
  } catch (err) {
    if (err instanceof MigrateIoError) return { phase: err.phase === 'write' ? 'write' : 'read', timeout: err.timeout, gotReply };
    throw err;
  }
}

// ---------------------------------------------------------------- the blocking form

let worker: Worker | null = null;
let port: MessagePort | null = null;
const cell = new Int32Array(new SharedArrayBuffer(4));
/** Connections cached by the worker (as of its last answer), for INFO. */
let workerSockets = 0;

/** migrateExchange, blocking the thread until it completes (bounded by the timeouts). */
export function migrateExchangeSync(req: MigrateRequest): MigrateResult {
  if (worker === null) {
    const ch = new MessageChannel();
    worker = new Worker(new URL('./migrate-worker.js', import.meta.url), { workerData: { port: ch.port2, cell }, transferList: [ch.port2] });
    worker.unref();
    worker.on('error', (e) => console.error('migrate worker error:', e));
    worker.on('exit', () => {
      worker = null;
      port = null;
      workerSockets = 0;
    });
    port = ch.port1;
  }
  Atomics.store(cell, 0, 0);
  worker.postMessage(req);
  // Connect, write and each read have their own timeout; a retry doubles them: wait that long
  // at most (plus the worker's start-up), then give up as a timeout.
  const limit = 2 * req.timeout * (3 + req.count) + 5000;
  const deadline = Date.now() + limit;
  for (;;) {
    const m = receiveMessageOnPort(port!);
    if (m !== undefined) {
      const { result, sockets } = m.message as { result: MigrateResult; sockets: number };
      workerSockets = sockets;
      return result;
    }
    const left = deadline - Date.now();
    if (left <= 0) return { error: 'IOERR error or timeout reading to target instance' };
    Atomics.wait(cell, 0, 0, left);
    Atomics.store(cell, 0, 0);
  }
}

/** INFO migrate_cached_sockets: both kinds of cached connections. */
export function allCachedSockets(): number {
  return cachedSockets() + workerSockets;
}

export { enc as encodeCommand };
