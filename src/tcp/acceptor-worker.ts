/**
 * The busy acceptor's thread (busy-acceptor.ts): accepts new RESP connections while the engine
 * thread is inside a busy script, and hands their file descriptors over through shared memory.
 *
 * It listens on the engine thread's listening socket (same descriptor, its own libuv handle).
 * Outside busy periods it sleeps in Atomics.wait, so its event loop, and with it its accepting,
 * is stopped: the engine thread's own loop accepts as usual. Accepted sockets are never read or
 * closed here (pauseOnConnect, kept referenced): the descriptor belongs to the engine thread's
 * Socket from the hand-over on.
 */
import net from 'node:net';
import { workerData } from 'node:worker_threads';
import { A_STATE, A_ACK, A_HEAD, A_TAIL, A_RING, A_RING_SIZE } from './busy-acceptor-shared.js';

const { ctl, fd } = workerData as { ctl: Int32Array; fd: number };
/** Accepted sockets whose descriptors were handed over: kept so that no handle is ever closed here. */
const handed: net.Socket[] = [];
/** Descriptors accepted while the ring was full. */
const waiting: number[] = [];

// This thread must never end on its own: its teardown would close the descriptors it handed
// over (the engine thread's live connections).
process.on('uncaughtException', (e) => console.error('busy acceptor:', e));

const server = net.createServer({ pauseOnConnect: true }, (sock) => {
  handed.push(sock);
  const h = (sock as unknown as { _handle: { fd?: number } | null })._handle;
  if (h?.fd !== undefined && h.fd >= 0) waiting.push(h.fd);
  pushFds();
});
server.on('error', () => {});
server.listen({ fd });

function pushFds(): void {
  while (waiting.length > 0) {
    const head = Atomics.load(ctl, A_HEAD);
    if (head - Atomics.load(ctl, A_TAIL) >= A_RING_SIZE) return;
    ctl[A_RING + (head % A_RING_SIZE)] = waiting.shift()!;
    Atomics.store(ctl, A_HEAD, head + 1);
  }
}

/**
 * Every few ms: once the engine thread says the busy period is over, stop (sleep until the next
 * one). ACK is 1 before STATE is read, so the engine thread, which writes STATE before reading
 * ACK, never sees 0 while this loop can still accept.
 */
function tick(): void {
  for (;;) {
    Atomics.store(ctl, A_ACK, 1);
    pushFds();
    if (Atomics.load(ctl, A_STATE) !== 0 || waiting.length !== 0) break;
    Atomics.store(ctl, A_ACK, 0);
    Atomics.notify(ctl, A_ACK);
    Atomics.wait(ctl, A_STATE, 0);
  }
  setTimeout(tick, 2);
}
tick();
