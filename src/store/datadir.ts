/**
 * A damaged data directory is reported, never loaded in silence (as Redis refuses an AOF
 * damaged before its end): what start-up and `--check` / `--repair` (repair.ts) find wrong
 * with the journal and the LMDB files, in words that name the file.
 *
 * LMDB maps its file into memory and trusts it: a file cut short makes the first read past
 * its end a SIGBUS, a garbage meta page a SIGSEGV, and the process dies without a word. So
 * every LMDB environment of the directory (the keyspace, search indexes, qstash) is checked
 * with plain reads before it is mapped (`checkLmdbFile`): its size against its page size, and
 * its meta pages as LMDB lays them out (magic, version, page size, and every root page it
 * names, also those of the named databases, inside the file). That costs a few small reads
 * per environment. A file shorter than its latest transaction's last page but holding every
 * root (cut short further in) is read whole in a child process before it is mapped: LMDB may
 * legitimately leave a transaction's last pages unwritten, so it is not refused outright.
 * Damage deeper in a B-tree (a page's header, a node's offset or size, a child page number, an
 * overflow run) is found by reading every page LMDB can reach with plain reads first
 * (lmdb-verify.ts), at every start for files up to 1 GB, for bigger ones after an unclean stop
 * (`--lmdb-check`); with that check, the file cut short is judged by it instead of a child.
 */
import fs from 'node:fs';
import path from 'node:path';
import { frameSeq, type JournalScan } from './journal.js';
import { walkInChild } from './lmdb-walk.js';
import { LmdbDamage, verifyLmdb, type VerifyStats } from './lmdb-verify.js';

/** The data directory cannot be used as it is: start-up stops with this message (exit code 1). */
export class DataDirError extends Error {}

/** How the operator inspects and repairs a directory (the server's own check mode). */
export function repairHint(dir: string): string {
  return `Run \`node dist/main.js --dir ${dir} --check\` for a report; \`--repair\` instead of \`--check\` ` +
    'cuts the journal at its last intact frame (keeping a copy of what it cuts) and starts from what is left.';
}

/**
 * What is wrong with a scanned journal, given what LMDB records: `applied` (sys journalSeq,
 * the last frame it holds) and `expected` (sys journal, the file being written when the
 * server stopped; 0 after a clean stop). Null when it can be replayed.
 */
export function journalProblem(dir: string, scan: JournalScan, applied: number, expected: number): string | null {
  const d = scan.damage;
  if (d !== null) {
    return `the journal is damaged before its last frame: ${d.file}: ${d.reason} at offset ${d.offset}` +
      (d.lastGood > 0 ? ` (after frame ${d.lastGood})` : '') +
      `, followed by ${d.following} intact frame${d.following === 1 ? '' : 's'} (${d.followingRecords} records, ${d.bytes} bytes from the damage on), ` +
      `${d.unapplied} of them not in LMDB (which holds frames up to ${applied}). ` +
      'They hold acknowledged writes but cannot be applied without the damaged frame; the server does not start.';
  }
  if (expected > 0) {
    const f = scan.files.find((x) => x.num === expected);
    const name = path.join(dir, `journal.${expected}`);
    if (f === undefined) {
      return `${name} is missing: LMDB records it as the journal being written when the server stopped ` +
        `(LMDB holds frames up to ${applied}; any acknowledged write after that was in this file).`;
    }
    if (f.firstSeq === null && f.frames === 0) {
      return `${name} is empty (${f.size} bytes, no header): LMDB records it as the journal being written when the server stopped ` +
        `(LMDB holds frames up to ${applied}; any acknowledged write after that was in this file).`;
    }
  }
  // Frames after what LMDB holds must follow it without a gap.
  let needed = scan.last;
  for (const f of scan.files) if (f.firstSeq !== null) needed = Math.max(needed, f.firstSeq - 1);
  if (needed > applied) {
    const first = scan.frames.length > 0 ? frameSeq(scan.frames[0]) : 0;
    if (first !== applied + 1) {
      return `the journal in ${dir} does not follow LMDB: LMDB holds frames up to ${applied}, ` +
        (first === 0 ? `the journal's files announce frames up to ${needed} but hold none after ${applied}` : `the journal's next frame is ${first}`) +
        ` (frames ${applied + 1}..${first === 0 ? needed : first - 1} are missing: a journal file or the LMDB file was removed or replaced).`;
    }
  }
  return null;
}

// ------------------------------------------------------------------ LMDB files

/** LMDB's layout (dependencies/lmdb/libraries/liblmdb/mdb.c, 64-bit, as lmdb-js builds it). */
const PAGE_HEADER = 24; // pgno u64, txnid u64, pad u16, flags u16, lower/upper u32
const P_META = 0x08;
const MDB_MAGIC = 0xbeefc0de;
const MDB_DATA_VERSION = 2;
/** Offsets inside MDB_meta (which starts after the page header). */
const M_MAGIC = 0;
const M_VERSION = 4;
const M_DBS = 24; // MDB_db[2]: free pages, main (named databases)
const DB_SIZE = 48; // pad u32 (page size in dbs[0]), flags u16, depth u16, branch, leaf, overflow, entries, root (u64 each)
const DB_ROOT = 40;
const M_LAST_PG = M_DBS + 2 * DB_SIZE;
const M_TXNID = M_LAST_PG + 8;
const P_INVALID = 0xffffffffffffffffn;
/** LMDB's node header: lo u16, hi u16, flags u16, ksize u16; F_SUBDATA marks a named database. */
const NODE_HEADER = 8;
const F_SUBDATA = 0x02;

function readAt(fd: number, file: string, len: number, pos: number): Buffer {
  const b = Buffer.alloc(len);
  let n: number;
  try {
    n = fs.readSync(fd, b, 0, len, pos);
  } catch (err) {
    throw new DataDirError(`${file}: cannot be read: ${(err as Error).message}`);
  }
  return n === len ? b : b.subarray(0, n);
}

interface Meta {
  psize: number;
  lastPg: bigint;
  txnid: bigint;
  roots: bigint[];
}

/** The meta page at `off`, or why it is not one. */
function readMeta(fd: number, file: string, off: number, psize: number): Meta | string {
  const b = readAt(fd, file, PAGE_HEADER + M_TXNID + 8, off);
  if (b.length < PAGE_HEADER + M_TXNID + 8) return 'cut short';
  if ((b.readUInt16LE(18) & P_META) === 0) return 'not a meta page';
  const m = PAGE_HEADER;
  if (b.readUInt32LE(m + M_MAGIC) !== MDB_MAGIC) return 'bad magic';
  const version = b.readUInt32LE(m + M_VERSION) & 0xffff;
  if (version !== MDB_DATA_VERSION) return `format version ${version} (this server reads ${MDB_DATA_VERSION})`;
  const ps = b.readUInt32LE(m + M_DBS);
  if (ps < 512 || ps > 65536 || (ps & (ps - 1)) !== 0 || (psize !== 0 && ps !== psize)) return `bad page size ${ps}`;
  return {
    psize: ps,
    lastPg: b.readBigUInt64LE(m + M_LAST_PG),
    txnid: b.readBigUInt64LE(m + M_TXNID),
    roots: [b.readBigUInt64LE(m + M_DBS + DB_ROOT), b.readBigUInt64LE(m + M_DBS + DB_SIZE + DB_ROOT)],
  };
}

/**
 * Check `<envDir>/data.mdb` before LMDB maps it: throws DataDirError naming the file when it
 * is not a regular file, is cut short, or its meta pages are not LMDB's. A directory without
 * the file (a new environment) passes. Returns how many pages the file lacks to hold the last
 * page its latest transaction uses (0 normally; more when cut short somewhere past its roots).
 */
export function checkLmdbFile(envDir: string): number {
  const file = path.join(envDir, 'data.mdb');
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw new DataDirError(`${file}: ${(err as Error).message}`);
  }
  if (!st.isFile()) throw new DataDirError(`${file} is not a regular file`);
  const bad = (what: string) => new DataDirError(`${file} is damaged: ${what}. LMDB cannot open it safely; ` +
    'restore it from a backup (or move it away to start this part of the data directory empty).');
  if (st.size === 0) throw bad('it is empty (0 bytes: truncated?); an LMDB file starts with two meta pages');
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    throw new DataDirError(`${file}: ${(err as Error).message}`);
  }
  try {
    const first = readMeta(fd, file, 0, 0);
    if (typeof first === 'string') throw bad(`meta page 0: ${first}`);
    const psize = first.psize;
    const pages = BigInt(Math.floor(st.size / psize));
    if (st.size < 2 * psize) throw bad(`it is ${st.size} bytes, less than its two meta pages of ${psize} bytes`);
    const second = readMeta(fd, file, psize, psize);
    if (typeof second === 'string') throw bad(`meta page 1: ${second}`);
    // The snapshot LMDB opens is the meta with the highest transaction id; both must be sound,
    // as either may be the one (and lmdb-js reads a third, half-page one with overlapping sync).
    for (const [i, m] of [first, second].entries()) {
      for (const root of m.roots) {
        if (root !== P_INVALID && root >= pages) {
          throw bad(`meta page ${i} (transaction ${m.txnid}) names page ${root}, but the file holds ${pages} pages of ${psize} bytes (cut short?)`);
        }
      }
    }
    const latest = second.txnid > first.txnid ? second : first;
    const main = latest.roots[1];
    if (main !== P_INVALID) checkNamedRoots(fd, file, psize, main, pages, bad);
    return latest.lastPg >= pages ? Number(latest.lastPg - pages + 1n) : 0;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The main database's root, when it is a leaf (always so for a handful of named databases):
 * every named database's root page must be inside the file.
 */
function checkNamedRoots(fd: number, file: string, psize: number, pgno: bigint, pages: bigint, bad: (what: string) => Error): void {
  const p = readAt(fd, file, psize, Number(pgno) * psize);
  if (p.length < psize) throw bad(`page ${pgno} is cut short`);
  if (p.readBigUInt64LE(0) !== pgno) throw bad(`page ${pgno} (the root of the main database) holds page number ${p.readBigUInt64LE(0)}`);
  const flags = p.readUInt16LE(18);
  if ((flags & 0x02) === 0) return; // a branch page: too many databases to be ours; LMDB checks the rest
  const lower = p.readUInt16LE(20); // bytes of node offsets after the header (LMDB's PAGEBASE is the header size)
  const count = lower >> 1;
  if (PAGE_HEADER + lower > psize) throw bad(`page ${pgno} (the root of the main database) is not a valid leaf`);
  for (let i = 0; i < count; i++) {
    const at = p.readUInt16LE(PAGE_HEADER + 2 * i) + PAGE_HEADER;
    if (at + NODE_HEADER > psize) throw bad(`page ${pgno} (the root of the main database) has a node outside the page`);
    const nflags = p.readUInt16LE(at + 4);
    const ksize = p.readUInt16LE(at + 6);
    if ((nflags & F_SUBDATA) === 0) continue;
    const data = at + NODE_HEADER + ksize;
    if (data + DB_SIZE > psize) throw bad(`page ${pgno} (the root of the main database) has a node outside the page`);
    const root = p.readBigUInt64LE(data + DB_ROOT);
    if (root !== P_INVALID && root >= pages) {
      const name = p.subarray(at + NODE_HEADER, at + NODE_HEADER + ksize).toString('latin1');
      throw bad(`the root page ${root} of database '${name}' is past the end of the file (${pages} pages of ${psize} bytes: cut short?)`);
    }
  }
}

// ------------------------------------------------------------------ the B-tree check at start-up

/**
 * `--lmdb-check`: whether a start reads every B-tree page of each LMDB file before mapping it
 * (lmdb-verify.ts). `yes` (the default) at every start; `auto` does it for files up to AUTO_MAX_BYTES, and for bigger ones only
 * after an unclean stop (journal files left in the data directory: a clean stop removes them).
 */
export type LmdbCheckMode = 'auto' | 'yes' | 'no';
let checkMode: LmdbCheckMode = 'yes';
/** Files `auto` checks at every start: up to ~2 s of CPU at this size (bench/lmdb-verify.mjs, bench/RESULTS-persist.md). */
export const AUTO_MAX_BYTES = 1 << 30;

/** Set once per process, from the configuration, before the stores open (src/app.ts). */
export function setLmdbCheck(mode: LmdbCheckMode): void {
  checkMode = mode;
}

/** Whether the start checks `file` of data directory `dir`, and why (for the log line). */
function checkAtStart(dir: string, file: string): string | null {
  if (checkMode === 'no') return null;
  if (checkMode === 'yes') return '--lmdb-check yes';
  const size = fs.statSync(file).size;
  if (size <= AUTO_MAX_BYTES) return `${size} bytes, at most ${AUTO_MAX_BYTES}`;
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    // An unreadable directory is reported by whatever reads it next.
  }
  if (names.some((n) => /^journal\.\d+$/.test(n))) return 'the last stop was unclean (journal files left)';
  console.log(`persistence: ${file} (${size} bytes, over ${AUTO_MAX_BYTES}) is not checked page by page after a clean stop; \`--lmdb-check yes\` checks it at every start`);
  return null;
}

/** The B-tree check of `<envDir>/data.mdb` (LMDB's meta pages already checked): DataDirError naming the page. */
export function verifyLmdbFile(envDir: string): VerifyStats {
  const file = path.join(envDir, 'data.mdb');
  try {
    return verifyLmdb(file);
  } catch (err) {
    if (err instanceof LmdbDamage) {
      throw new DataDirError(`${err.message}. LMDB cannot open it safely (reading that page would crash the process or return garbage).\n` +
        `${repairHint(path.dirname(envDir))} A damaged LMDB file is best restored from a backup; \`--repair\` copies the records it can read into a new file.`);
    }
    if (err instanceof DataDirError) throw err;
    throw new DataDirError(`${file}: ${(err as Error).message}`);
  }
}

/**
 * Open an LMDB environment (lmdb-js `open`) after checking its file (meta pages always; every
 * B-tree page as `--lmdb-check` says); an error opening it names the file.
 */
export function openChecked<T>(envDir: string, openFn: () => T): T {
  const missing = checkLmdbFile(envDir);
  const file = path.join(envDir, 'data.mdb');
  const why = fs.existsSync(file) ? checkAtStart(path.dirname(envDir), file) : null;
  if (why !== null) {
    const t0 = performance.now();
    const s = verifyLmdbFile(envDir);
    const ms = performance.now() - t0;
    if (ms > 1000) console.log(`persistence: ${file}: ${s.pages} B-tree pages checked in ${Math.round(ms)} ms (${why})`);
    // Every page LMDB can reach is inside the file: a shorter file than its last transaction says is sound.
    if (missing > 0) console.warn(`persistence: ${file} is ${missing} page${missing === 1 ? '' : 's'} shorter than its latest transaction says; every page of its B-trees is inside it`);
  } else if (missing > 0) {
    // LMDB may leave the last pages of a transaction unwritten when they were freed within
    // it, so a shorter file is not proof of damage (and was never seen in practice): read
    // every record in a child process first, once, instead of risking a SIGBUS here.
    const r = walkInChild([envDir]);
    if (r.failed !== null) {
      throw new DataDirError(`${file} is damaged: it lacks ${missing} page${missing === 1 ? '' : 's'} of its latest transaction (cut short?), ` +
        `and reading every record failed (${r.failed.why}). LMDB cannot open it safely; restore it from a backup.`);
    }
    console.warn(`persistence: ${file} is ${missing} page${missing === 1 ? '' : 's'} shorter than its latest transaction says; every record was read without error`);
  }
  try {
    return openFn();
  } catch (err) {
    const msg = (err as Error).message ?? String(err);
    throw new DataDirError(msg.includes(envDir) ? msg : `${file}: ${msg}`);
  }
}
