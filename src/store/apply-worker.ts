/**
 * The journal applier's thread (apply-thread.ts): gives LMDB the journal frames the main thread
 * has written, so that the main thread never spends a turn on them (lmdb-js queues each
 * asynchronous put on the calling thread: 25-70 ms per MB of frames, which used to be the
 * longest stalls of a bulk load with everysec, issue 21).
 *
 * It opens the same environment (lmdb-js shares one per path within the process; LMDB's own
 * write lock orders its transactions with the main thread's) and, per message, writes the
 * frames and the two journal records (`sys journalSeq`, `sys journal`) in one synchronous
 * transaction, then waits for LMDB's flush: the reply means "durable", so the main thread may
 * then delete journal files (checkpoint) as it did after `syncNow()`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { applyFrameTo, openDbs, openEnv } from './lmdb.js';
import { GATE_BUSY, GATE_EXITING, type ApplyRequest, type ApplyReply } from './apply-thread.js';

/**
 * Test hooks (test/store/apply-thread.test.ts): REDSTASH_APPLY_TEST_HOLD_MS holds each
 * transaction open that long before its commit (announced on stderr), so that a test can kill
 * the process inside it; REDSTASH_APPLY_TEST_CRASH=1 ends the thread at its first request.
 */
const HOLD_MS = Number(process.env.REDSTASH_APPLY_TEST_HOLD_MS ?? 0) || 0;
const CRASH = process.env.REDSTASH_APPLY_TEST_CRASH === '1';

const { path, gate } = workerData as { path: string; gate: Int32Array };
const root = openEnv(path);
const dbs = openDbs(root);
const port = parentPort!;

/** Frames are concatenated in `buf`: each is [magic][payload length u32][crc][jseq u64][payload]. */
function applyAll(buf: Buffer): void {
  let p = 0;
  while (p < buf.length) {
    const end = p + 20 + buf.readUInt32LE(p + 4);
    applyFrameTo(dbs, buf.subarray(p, end), true);
    p = end;
  }
}

port.on('message', (m: ApplyRequest | 'close') => {
  if (m === 'close') {
    void root.close().finally(() => port.postMessage({ id: -1, error: null } satisfies ApplyReply));
    return;
  }
  if (CRASH) throw new Error('REDSTASH_APPLY_TEST_CRASH');
  // Busy first, then the exit flag (the main thread sets them the other way round): either the
  // exiting process waits for this transaction, or this thread sees the exit and starts none.
  Atomics.store(gate, GATE_BUSY, 1);
  if (Atomics.load(gate, GATE_EXITING) === 1) {
    done();
    return;
  }
  try {
    root.transactionSync(() => {
      applyAll(Buffer.from(m.buf));
      if (m.seq !== null) dbs.sys.putSync('journalSeq', m.seq);
      if (m.file !== null) dbs.sys.putSync('journal', { file: m.file });
      if (HOLD_MS > 0) {
        console.error(`apply thread: holding the transaction up to frame ${m.seq} for ${HOLD_MS} ms`);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, HOLD_MS);
      }
    });
  } catch (err) {
    done();
    port.postMessage({ id: m.id, error: fault(err) } satisfies ApplyReply);
    return;
  }
  // Committed; durable once flushed (overlapping sync may leave the flush to a later commit).
  // Busy until the flush is over: an exiting process waits for it too, instead of tearing the
  // environment down while the flush still uses it (a CI run's process ended by a signal, not
  // exit code 0, when its forced exit came during this transaction).
  (root as unknown as { sync(cb: (err?: unknown) => void): void }).sync((err) => {
    done();
    port.postMessage({ id: m.id, error: null, unsynced: err !== undefined && err !== null } satisfies ApplyReply);
  });
});

/** Out of the transaction and its flush: an exiting process waiting for it goes on. */
function done(): void {
  Atomics.store(gate, GATE_BUSY, 0);
  Atomics.notify(gate, GATE_BUSY);
}

function fault(err: unknown): { message: string; code: unknown } {
  const e = err as { message?: unknown; code?: unknown } | null;
  return { message: typeof e?.message === 'string' ? e.message : String(err), code: e?.code };
}
