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
import type { Db, Entry, Stored } from '../engine/db.js';
import { ARENA_MAX_KEY, ARENA_MAX_VALUE } from '../engine/arena.js';
import { decodeLimits, encodeOptions } from '../engine/commands/dump.js';
import { scripting } from '../engine/scripting/host.js';
import { RdbError } from './errors.js';
import { setLruOrLfu } from '../engine/evict.js';
import { HashValue, trackVolatile } from '../engine/ds/hash.js';
import { RdbSnapshot, STAGED_FILE, STAGED_LZF, type StagedStrings, functionCodes, parseRdb } from './file.js';
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

/** How many of an import's keys fit the compact tier (Db.restoreStored): sizes both tiers. */
function compactCount(keys: string[], values: Stored[], exps: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < keys.length; i++) {
    const v = values[i];
    if (exps[i] === 0 && keys[i].length <= ARENA_MAX_KEY && (typeof v === 'number' || (typeof v === 'string' && v.length <= ARENA_MAX_VALUE))) n++;
  }
  return n;
}

/** Staged record i (file.ts StagedStrings) into db. */
function importStaged(db: Db, st: StagedStrings, i: number): void {
  const ks = st.keyStart(i);
  const ke = ks + st.keyLength(i);
  const kind = st.kind(i);
  let vs = st.valueStart(i);
  if (kind === STAGED_FILE) {
    db.importStringBytes(st.file, ks, ke, st.file, vs, vs + st.valueLength(i), 0);
  } else if (kind === STAGED_LZF) {
    // Decompressed again (the parse checked these bytes): into the LZF module's memory.
    const n = st.valueLength(i);
    if (!lzfDecompressAt(st.file, vs, vs + st.lzfLength(i), n)) throw new Error('RDB import: a checked LZF value failed to decompress');
    vs = lzfOut;
    db.importStringBytes(st.file, ks, ke, lzfMem(), vs, vs + n, 0);
  } else {
    db.importStringBytes(st.file, ks, ke, null, 0, 0, st.num[i]);
  }
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
  const used: number[] = [];
  for (let dbi = 0; dbi < k.perDb.length; dbi++) if ((k.perDb[dbi] ?? 0) > 0) used.push(dbi);
  const names = eng.wantsAddedKeys();
  for (const dbi of used) {
    const db = eng.dbs[dbi];
    // perf: one db (the usual file) takes the columns as they are; several are split by index.
    const idx = used.length === 1 ? null : k.db.flatMap((d, i) => (d === dbi ? [i] : []));
    const at = (j: number): number => (idx === null ? j : idx[j]);
    const keys = idx === null ? k.key : idx.map((i) => k.key[i]);
    const values = idx === null ? k.value : idx.map((i) => k.value[i]);
    const exps = idx === null ? k.exp.subarray(0, k.length) : Float64Array.from(idx, (i) => k.exp[i]);
    const lru = k.idle.size > 0 || k.freq.size > 0;
    let staged = 0;
    for (let s = 0; s < st.n; s++) if (st.db(s) === dbi) staged++;
    // Keys with the file's LRU/LFU data become Entries (importKey); others may be compact.
    db.map.reserve(keys.length + staged, eng.lfu ? 0 : staged + (lru ? 0 : compactCount(keys, values, exps)));
    db.beginImport(keys.length + staged);
    const entries: (Entry | undefined)[] | null = lru ? new Array(keys.length) : null;
    // File order across both lists (the later of a key given twice wins).
    let s = 0;
    for (let j = 0; j < keys.length; j++) {
      const g = at(j);
      for (; s < st.n && st.before(s) <= g; s++) if (st.db(s) === dbi) importStaged(db, st, s);
      const e = db.importKey(keys[j], values[j], exps[j], lru);
      if (entries !== null) entries[j] = e;
    }
    for (; s < st.n; s++) if (st.db(s) === dbi) importStaged(db, st, s);
    for (let j = 0; j < values.length; j++) {
      const v = values[j];
      if (v instanceof HashValue && v.volatile) trackVolatile(db, keys[j], v);
    }
    for (let j = 0; entries !== null && j < entries.length; j++) {
      const idle = k.idle.get(at(j)) ?? -1;
      const freq = k.freq.get(at(j)) ?? -1;
      if (idle >= 0 || freq >= 0) setLruOrLfu(eng, entries[j]!, freq, idle);
    }
    // The staged keys' names are built only for a listener that takes them.
    let all = keys;
    if (names && staged > 0) {
      all = keys.slice();
      for (let i = 0; i < st.n; i++) if (st.db(i) === dbi) all.push(st.keyString(i));
    }
    db.endImport(all, keys.length + staged);
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
