/**
 * The main thread's side of the journal applier's thread (apply-worker.ts). One request at a
 * time (persistence.ts keeps one apply in flight): the frames are copied into one buffer that
 * is transferred (the main thread keeps its frames, to retry them after a failure), and the
 * promise settles once the thread's transaction is committed and flushed.
 *
 * REDSTASH_APPLY_WORKER=0: frames are queued to lmdb-js on the main thread, as before (A/B runs).
 */
import { Worker } from 'node:worker_threads';

export interface ApplyRequest {
  id: number;
  buf: ArrayBuffer;
  /** `sys journalSeq` to record, or null (unchanged). */
  seq: number | null;
  /** `sys journal` file to record, or null (unchanged). */
  file: number | null;
}

export interface ApplyReply {
  id: number;
  /** The transaction failed (nothing of it is in LMDB), or null. */
  error: { message: string; code: unknown } | null;
  /** Committed, but the flush failed: applied, not known durable. */
  unsynced?: boolean;
}

export const APPLY_WORKER = process.env.REDSTASH_APPLY_WORKER !== '0';

/** Slots of the gate shared with the thread: it is inside its LMDB transaction or that transaction's flush; the process is exiting. */
export const GATE_BUSY = 0;
export const GATE_EXITING = 1;
/** How long an exiting process waits for the thread's transaction to end (16 MB of frames: ~1-2 s). */
const EXIT_WAIT_MS = 10_000;

export class ApplyThread {
  private thread: Worker | null = null;
  private nextId = 1;
  private wait: { id: number; resolve: (durable: boolean) => void; reject: (err: unknown) => void } | null = null;
  private closing: (() => void) | null = null;
  private ended = false;
  /** The thread died (an exception, or it could not open LMDB): the caller falls back to the main thread. */
  dead = false;

  /** GATE_BUSY / GATE_EXITING, shared with the thread. */
  private readonly gate = new Int32Array(new SharedArrayBuffer(8));

  /**
   * process.exit() (the forced exit 5 s after SIGTERM, say) stops the thread wherever it is. Stopped
   * inside its transaction, the thread keeps lmdb-js's write lock, and its environment's clean-up
   * then waits for that lock forever: the process never ends. So the exit waits (bounded) for the
   * transaction to end, and the thread starts no other one.
   */
  private readonly onExit = (): void => {
    Atomics.store(this.gate, GATE_EXITING, 1);
    if (Atomics.load(this.gate, GATE_BUSY) === 1) Atomics.wait(this.gate, GATE_BUSY, 1, EXIT_WAIT_MS);
  };

  /**
   * The thread starts with the first apply (memory: a thread is a V8 isolate with lmdb loaded,
   * ~15 MB of RSS, which a server nobody writes to need not hold).
   */
  constructor(private readonly path: string) {}

  private get worker(): Worker {
    if (this.thread !== null) return this.thread;
    const worker = new Worker(new URL('./apply-worker.js', import.meta.url), { workerData: { path: this.path, gate: this.gate } });
    this.thread = worker;
    worker.unref();
    process.on('exit', this.onExit);
    worker.on('message', (m: ApplyReply) => {
      if (m.id === -1) {
        this.closing?.();
        return;
      }
      const w = this.wait;
      if (w === null || w.id !== m.id) return;
      this.wait = null;
      if (m.error !== null) w.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else w.resolve(m.unsynced !== true);
    });
    worker.on('error', (err) => this.died(err));
    worker.on('exit', () => this.died(new Error('the journal applier thread exited')));
    return worker;
  }

  private died(err: unknown): void {
    if (this.dead) return;
    this.dead = true;
    process.off('exit', this.onExit);
    if (!this.ended) console.error('persistence: journal applier thread:', err);
    const w = this.wait;
    this.wait = null;
    w?.reject(err);
    this.closing?.();
  }

  /**
   * Apply `frames` (in order) in one transaction that also records `seq` and `file` (null:
   * unchanged). Resolves with true once durable, false when committed but the flush failed;
   * rejects when the transaction failed.
   */
  apply(frames: Buffer[], seq: number | null, file: number | null): Promise<boolean> {
    let total = 0;
    for (const f of frames) total += f.length;
    const buf = Buffer.allocUnsafeSlow(total);
    let p = 0;
    for (const f of frames) p += f.copy(buf, p);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.dead) {
        reject(new Error('the journal applier thread is not running'));
        return;
      }
      this.wait = { id, resolve, reject };
      const ab = buf.buffer as ArrayBuffer;
      this.worker.postMessage({ id, buf: ab, seq, file } satisfies ApplyRequest, [ab]);
    });
  }

  /** Close the thread's LMDB handle and end it (after the last apply settled). */
  close(): Promise<void> {
    if (this.dead || this.thread === null) return Promise.resolve();
    this.ended = true;
    return new Promise<void>((resolve) => {
      this.closing = () => {
        this.closing = null;
        resolve();
      };
      this.worker.postMessage('close');
    }).then(() => this.worker.terminate()).then(() => {
      process.off('exit', this.onExit);
    });
  }
}
