/**
 * Command-line import and export of RDB files (src/main.ts):
 *   --import-rdb <file>   load a Redis RDB file (Redis 2.8 to 7.2) into the keyspace (and so
 *                         into the data directory) before serving; a damaged file is refused
 *                         with the offset of the damage and nothing is imported.
 *   --export-rdb <file>   write the whole dataset as a Redis 7.0-loadable dump.rdb, then exit.
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Engine } from '../engine/engine.js';
import type { Db } from '../engine/db.js';
import { decodeLimits, encodeOptions } from '../engine/commands/dump.js';
import { scripting } from '../engine/scripting/host.js';
import { RdbError } from './errors.js';
import { setLruOrLfu } from '../engine/evict.js';
import { HashValue, trackVolatile } from '../engine/ds/hash.js';
import { RdbSnapshot, STAGED_FILE, STAGED_LZF, type RdbKeys, type StagedStrings, functionCodes, parseRdb } from './file.js';
import { readChecked, readValue } from './decode.js';
import { RdbReader } from './reader.js';
import { hashBytes } from '../engine/keytable.js';
import { lzfDecompressAt, lzfMem, lzfOut } from './lzf.js';

/** --help lines of the options below. */
export const RDB_HELP = [
  '  --import-rdb <file>',
  '      load a Redis RDB file (Redis 2.8 to 7.2) into the data directory before serving; a damaged file is refused (exit 1)',
  '  --export-rdb <file>',
  '      write the whole dataset as a Redis 7.0 dump.rdb and exit',
].join('\n');

export interface RdbOptions {
  importPath: string | null;
  exportPath: string | null;
}

/** Take --import-rdb/--export-rdb out of the argument list (the rest goes to the config). */
export function takeRdbArgs(args: string[]): RdbOptions {
  const o: RdbOptions = { importPath: null, exportPath: null };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const name = a === '--import-rdb' ? 'importPath' : a === '--export-rdb' ? 'exportPath' : null;
    if (name === null) continue;
    if (i + 1 >= args.length) throw new Error(`${a} needs a file name`);
    o[name] = args[i + 1];
    args.splice(i, 2);
    i--;
  }
  return o;
}

/** Staged record i (file.ts StagedStrings) into db; h: the hash of its key (hashBytes). */
function importStaged(db: Db, st: StagedStrings, i: number, h: number): void {
  const ks = st.keyStart(i);
  const ke = ks + st.keyLength(i);
  const kind = st.kind(i);
  let vs = st.valueStart(i);
  if (kind === STAGED_FILE) {
    db.importStringBytes(st.file, ks, ke, h, st.file, vs, vs + st.valueLength(i), 0);
  } else if (kind === STAGED_LZF) {
    // Decompressed again (the parse checked these bytes): straight into the compact tier
    // (perf), or else into the LZF module's memory. (At most 16 bytes it may be an integer.)
    const n = st.valueLength(i);
    if (n > 16 && db.importStringLzf(st.file, ks, ke, h, st.file, vs, vs + st.lzfLength(i), n)) return;
    if (!lzfDecompressAt(st.file, vs, vs + st.lzfLength(i), n)) throw new Error('RDB import: a checked LZF value failed to decompress');
    vs = lzfOut;
    db.importStringBytes(st.file, ks, ke, h, lzfMem(), vs, vs + n, 0);
  } else {
    db.importStringBytes(st.file, ks, ke, h, null, 0, 0, st.num[i]);
  }
}

/**
 * The records of one db (`idx`: indices into k, in file order) in the order of the table's
 * buckets (`mask`: bucket count - 1), file order kept within a bucket (a key given twice: the
 * later wins). A counting sort over at most 2^16 groups of adjacent buckets (perf: the counts
 * stay in the cache, where 2^20 of them cost a miss per record; a group of a few adjacent
 * buckets keeps the locality the order is for).
 */
function bucketOrder(hash: Int32Array, idx: Uint32Array, mask: number): Uint32Array {
  let shift = 0;
  while (mask >>> shift > 0xffff) shift++;
  const groups = (mask >>> shift) + 1;
  const count = new Uint32Array(groups + 1);
  for (let j = 0; j < idx.length; j++) count[((hash[idx[j]] & mask) >>> shift) + 1]++;
  for (let g = 1; g <= groups; g++) count[g] += count[g - 1];
  const out = new Uint32Array(idx.length);
  for (let j = 0; j < idx.length; j++) out[count[(hash[idx[j]] & mask) >>> shift]++] = idx[j];
  return out;
}

/**
 * A key given both as a staged string and as another record of one db: the occurrences that a
 * later one replaces (the two lists are inserted apart, no longer in file order). Returns null
 * when there is none, else the set of record indices (i) and staged indices (~s) that a later
 * occurrence replaces (the insert skips those records).
 * `sh`: the hashes of the staged records' keys.
 * Candidates are found by hash (a bitset of the records' hashes), then compared by name.
 */
function crossDuplicates(k: RdbKeys, idx: Uint32Array, st: StagedStrings, staged: Uint32Array, sh: Int32Array, r: RdbReader): Set<number> | null {
  if (idx.length === 0 || staged.length === 0) return null;
  let bits = 1 << 16;
  while (bits < 32 * idx.length && bits < 1 << 28) bits *= 2;
  const mask = bits - 1;
  const seen = new Int32Array(bits >>> 5);
  for (let j = 0; j < idx.length; j++) {
    const b = k.hash[idx[j]] & mask;
    seen[b >>> 5] |= 1 << (b & 31);
  }
  // Staged keys whose hash may be a record's, by hash.
  const cand = new Map<number, number[]>();
  for (let j = 0; j < staged.length; j++) {
    const s = staged[j];
    const h = sh[j];
    const b = h & mask;
    if ((seen[b >>> 5] & (1 << (b & 31))) === 0) continue;
    const l = cand.get(h);
    if (l === undefined) cand.set(h, [s]);
    else l.push(s);
  }
  if (cand.size === 0) return null;
  const drop = new Set<number>();
  for (let j = 0; j < idx.length; j++) {
    const i = idx[j];
    const l = cand.get(k.hash[i]);
    if (l === undefined) continue;
    r.p = k.at[i];
    const key = r.latin1();
    for (const s of l) {
      if (st.keyString(s) !== key) continue;
      // Record i comes after staged s when s had fewer records before it than i's index.
      if (i >= st.before(s)) drop.add(~s);
      else drop.add(i);
    }
  }
  return drop.size === 0 ? null : drop;
}

/** Records whose columns and first file bytes are read ahead together (touchAhead). */
const TOUCH_AHEAD = 32;
/** Where touchAhead's reads go (so that they are not optimised away). */
let touched = 0;

/**
 * Read the columns and the first byte of records order[j, j + TOUCH_AHEAD). perf: in bucket
 * order each record lies at a random place in the file and the columns, a cache miss each; read
 * in a tight loop of independent loads, the misses of a batch overlap instead of stalling the
 * insert one by one.
 */
function touchAhead(k: RdbKeys, order: Uint32Array, j: number, file: Buffer): void {
  const end = Math.min(order.length, j + TOUCH_AHEAD);
  let t = touched;
  for (let q = j; q < end; q++) {
    const i = order[q];
    t ^= file[k.at[i]] ^ k.type[i] ^ (k.exp[i] > 0 ? 1 : 0) ^ k.count[i];
  }
  touched = t;
}

/** touchAhead for staged records (`sh`: their keys' hashes): the words their inserts take (Db.importTouch). */
function touchStaged(db: Db, sh: Int32Array, j: number): void {
  const end = Math.min(sh.length, j + TOUCH_AHEAD);
  let t = touched;
  for (let q = j; q < end; q++) t ^= db.importTouch(sh[q]);
  touched = t;
}

/** Load an RDB file into the engine; returns a summary line. Throws with the damage's offset. */
export function importRdb(eng: Engine, path: string): string {
  const t0 = performance.now();
  const bytes = fs.readFileSync(path);
  let parsed;
  try {
    parsed = parseRdb(bytes, decodeLimits(eng), eng.dbs.length, Date.now());
  } catch (e) {
    if (e instanceof RdbError) throw new Error(`${path}: ${e.message} at offset ${e.offset}; nothing was imported`);
    throw e;
  }
  if (parsed.functions.length > 0) {
    const err = scripting(eng).restoreLibraries(parsed.functions, 'REPLACE');
    if (err !== null) throw new Error(`${path}: function libraries refused (${err}); nothing was imported`);
  }
  // Size empty tables for what comes (no incremental rehashing during the import).
  const k = parsed.keys;
  const st = parsed.staged;
  const r = new RdbReader(bytes);
  const lim = decodeLimits(eng);
  const lru = k.idle.size > 0 || k.freq.size > 0;
  const names = eng.wantsAddedKeys();
  for (let dbi = 0; dbi < k.perDb.length; dbi++) {
    if ((k.perDb[dbi] ?? 0) === 0) continue;
    const db = eng.dbs[dbi];
    // perDb counts the staged records too.
    let n = 0;
    for (let i = 0; i < k.length; i++) if (k.db[i] === dbi) n++;
    const idx = new Uint32Array(n);
    for (let i = 0, j = 0; i < k.length; i++) if (k.db[i] === dbi) idx[j++] = i;
    let m = 0;
    for (let s = 0; s < st.n; s++) if (st.db(s) === dbi) m++;
    const staged = new Uint32Array(m);
    const sh = new Int32Array(m);
    for (let s = 0, j = 0; s < st.n; s++) {
      if (st.db(s) !== dbi) continue;
      const ks = st.keyStart(s);
      staged[j] = s;
      sh[j++] = hashBytes(st.file, ks, ks + st.keyLength(s));
    }
    // Keys with the file's LRU/LFU data become Entries (importKey); others may be compact.
    db.map.reserve(n + staged.length, eng.lfu ? 0 : staged.length + (lru ? 0 : (k.compactPerDb[dbi] ?? 0)));
    db.beginImport(n + staged.length);
    // The staged strings (mostly off the V8 heap) in file order, then the other keys decoded
    // again, in the order of their table buckets (file.ts RdbKeys: why).
    for (let j = 0; j < m; j++) {
      if ((j & (TOUCH_AHEAD - 1)) === 0) touchStaged(db, sh, j);
      importStaged(db, st, staged[j], sh[j]);
    }
    // A record whose key a later staged string gives again is skipped (crossDuplicates); one
    // that comes after replaces the staged key as any duplicate. Those are looked for only once
    // a record meets a key already here (perf: up front, a pass over every key of every file).
    let drop: Set<number> | null = null;
    let dropKnown = false;
    const order = bucketOrder(k.hash, idx, db.map.bucketCount - 1);
    for (let j = 0; j < order.length; j++) {
      if ((j & (TOUCH_AHEAD - 1)) === 0) touchAhead(k, order, j, bytes);
      const i = order[j];
      r.p = k.at[i];
      const key = r.latin1();
      if (!dropKnown && db.importPresent(key)) {
        dropKnown = true;
        const at = r.p;
        drop = crossDuplicates(k, idx, st, staged, sh, r);
        r.p = at;
      }
      if (drop !== null && drop.has(i)) continue;
      const c = k.count[i];
      const v = c > 0 ? readChecked(r, k.type[i], c) : readValue(r, k.type[i], lim);
      const e = db.importKey(key, v, k.exp[i], lru);
      if (v instanceof HashValue && v.volatile) trackVolatile(db, key, v);
      if (e !== undefined && lru) {
        const idle = k.idle.get(i) ?? -1;
        const freq = k.freq.get(i) ?? -1;
        if (idle >= 0 || freq >= 0) setLruOrLfu(eng, e, freq, idle);
      }
    }
    // The names, in file order, are built only for a listener that takes them.
    const all: string[] = [];
    if (names) {
      for (const i of idx) {
        r.p = k.at[i];
        all.push(r.latin1());
      }
      for (const s of staged) all.push(st.keyString(s));
    }
    db.endImport(all, n + staged.length);
  }
  const ms = Math.round(performance.now() - t0);
  return `Imported ${k.length + st.n} keys and ${parsed.functions.length} function libraries from ${path} (RDB version ${parsed.version}, ${bytes.length} bytes, ${parsed.expired} expired keys skipped) in ${ms} ms`;
}

/**
 * A full garbage collection, run once after an import and before the first client is served;
 * returns its duration (ms). Why: an import leaves V8 in the middle of the old generation's
 * mark-compact (it promoted hundreds of MB), and that collection's atomic pause (91 ms at
 * 162 MB) then fell on whatever ran first, e.g. a `redis-cli --rdb` export (a 71.9 ms PING).
 * Collected here, that cost is paid at start-up instead. `gc` is not exposed without
 * --expose-gc: the flag is set for one fresh context, its `gc` taken, the flag cleared again.
 */
export function collectAfterImport(): number {
  const t0 = performance.now();
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  v8.setFlagsFromString('--no-expose-gc');
  gc();
  return performance.now() - t0;
}

/** Write the dataset to `path` (through a temporary file renamed into place). */
export function exportRdb(eng: Engine, path: string): string {
  const t0 = performance.now();
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  const snap = new RdbSnapshot(eng, encodeOptions(eng), functionCodes(eng));
  let bytes = 0;
  try {
    for (let c = snap.next(Infinity); c !== null; c = snap.next(Infinity)) {
      fs.writeSync(fd, c);
      bytes += c.length;
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, path);
  const skipped = snap.skipped > 0 ? `, ${snap.skipped} keys left out: JSON documents and hashes with field TTLs have no Redis 7.0 form (rdb-extended-types yes writes them for Redis 7.4+ with RedisJSON)` : '';
  return `Exported ${snap.keys} keys to ${path} (${bytes} bytes${skipped}) in ${Math.round(performance.now() - t0)} ms`;
}
