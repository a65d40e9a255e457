/**
 * The search worker thread: owns the contents of every SEARCH.* index of one engine. It takes,
 * in the order the engine posted them, index definitions, clears, batches of changed documents
 * (feed.ts's encoding: it tokenizes, stems, converts and indexes here) and requests (queries,
 * counts, aggregations, WAITINDEXING). Because every batch posted before a request is applied
 * before it, a request sees every write the engine acknowledged before sending it.
 *
 * Replies go back on the worker's port (asynchronous requests), or on the synchronous port
 * followed by a wake-up of the engine thread sleeping in Atomics.wait (MULTI/EXEC, scripts,
 * REST: the command must complete in its turn).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { Argv } from '../../resp/argv.js';
import { SearchIndex } from './index.js';
import { run, type Kind, type Result } from './exec.js';
import { OP_DEL, OP_RAW, TAG_BIG, TAG_NUM, TAG_TEXT, TAG_TRUE, collect } from './feed.js';
import type { IndexDef } from './schema.js';

export type ToWorker =
  | { t: 'create'; id: number; def: IndexDef }
  | { t: 'drop'; id: number }
  | { t: 'clear'; id: number }
  | { t: 'batch'; ab: ArrayBuffer; len: number }
  | { t: 'req'; rid: number; id: number; kind: Kind; args: ArgvData | null; now: number; sync: boolean };

export interface ArgvData { buf: Uint8Array; start: Int32Array; end: Int32Array; count: number }

export interface FromWorker { rid: number; r: Result }

const { syncPort, cell } = workerData as { syncPort: MessagePort; cell: Int32Array };
// A thread that dies (an error, out of memory) wakes an engine thread waiting for it.
process.on('exit', () => {
  Atomics.store(cell, 1, 1);
  Atomics.store(cell, 0, 1);
  Atomics.notify(cell, 0);
});

const indexes = new Map<number, SearchIndex>();
/** Per index: the dotted paths of its fields (for STRING documents, parsed here). */
const paths = new Map<number, string[][]>();

parentPort!.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'create':
      indexes.set(m.id, new SearchIndex(m.def));
      paths.set(m.id, m.def.fields.map((f) => (f.from ?? f.name).split('.')));
      break;
    case 'drop':
      indexes.delete(m.id);
      paths.delete(m.id);
      break;
    case 'clear':
      indexes.get(m.id)?.clear();
      break;
    case 'batch':
      apply(Buffer.from(m.ab, 0, m.len));
      break;
    case 'req': {
      const idx = indexes.get(m.id);
      let r: Result;
      if (idx === undefined) {
        r = { err: 'ERR search index not found' };
      } else {
        idx.purge(m.now);
        let argv = EMPTY;
        if (m.args !== null) {
          argv = new Argv();
          argv.reset(Buffer.from(m.args.buf.buffer, m.args.buf.byteOffset, m.args.buf.byteLength));
          for (let i = 0; i < m.args.count; i++) argv.push(m.args.start[i], m.args.end[i]);
        }
        try {
          r = run(m.kind, idx, argv);
        } catch (err) {
          // A bug, not the client's input (run() turns those into errors): keep serving.
          console.error('search worker:', err);
          r = { err: 'ERR internal error in the search worker' };
        }
      }
      const reply: FromWorker = { rid: m.rid, r };
      if (m.sync) {
        syncPort.postMessage(reply);
        Atomics.store(cell, 0, 1);
        Atomics.notify(cell, 0);
      } else {
        parentPort!.postMessage(reply);
      }
      break;
    }
  }
});

const EMPTY = new Argv();

/** Apply one batch of records (see feed.ts for the layout). */
function apply(b: Buffer): void {
  let p = 0;
  const leaves: (unknown[] | undefined)[] = [];
  while (p < b.length) {
    const op = b[p];
    const id = b.readUInt32LE(p + 1);
    const kl = b.readUInt32LE(p + 5);
    p += 9;
    const idx = indexes.get(id);
    const stream = idx?.def.on === 'STREAM';
    const key = stream ? b.toString('utf16le', p, p + kl) : b.latin1Slice(p, p + kl);
    p += kl;
    if (op === OP_DEL) {
      idx?.putLeaves(key, null, 0);
      continue;
    }
    const exp = b.readDoubleLE(p);
    p += 8;
    if (op === OP_RAW) {
      const n = b.readUInt32LE(p);
      const text = b.toString('utf8', p + 4, p + 4 + n);
      p += 4 + n;
      if (idx === undefined) continue;
      let root: unknown;
      try {
        root = JSON.parse(text);
      } catch {
        idx.putLeaves(key, null, 0); // not JSON: not a document
        continue;
      }
      const ps = paths.get(id)!;
      const ls: (unknown[] | undefined)[] = new Array(ps.length);
      for (let f = 0; f < ps.length; f++) {
        const out: unknown[] = [];
        collect(root, ps[f], 0, out);
        if (out.length > 0) ls[f] = out;
      }
      idx.putLeaves(key, ls, exp);
      continue;
    }
    // OP_PUT: the field count, then per field a count of tagged leaves.
    const nf = b.readUInt32LE(p);
    p += 4;
    leaves.length = 0;
    for (let f = 0; f < nf; f++) {
      const k = b.readUInt32LE(p);
      p += 4;
      if (k === 0) { leaves.push(undefined); continue; }
      const ls: unknown[] = new Array(k);
      for (let j = 0; j < k; j++) {
        const tag = b[p++];
        if (tag === TAG_TEXT) {
          const n = b.readUInt32LE(p);
          ls[j] = b.toString('utf8', p + 4, p + 4 + n);
          p += 4 + n;
        } else if (tag === TAG_NUM) {
          ls[j] = b.readDoubleLE(p);
          p += 8;
        } else if (tag === TAG_BIG) {
          const n = b.readUInt32LE(p);
          ls[j] = BigInt(b.latin1Slice(p + 4, p + 4 + n));
          p += 4 + n;
        } else {
          ls[j] = tag === TAG_TRUE;
        }
      }
      leaves.push(ls);
    }
    idx?.putLeaves(key, leaves, exp);
  }
}
