/**
 * `node dist/main.js --dir <dir> --check | --repair`: the data directory's own redis-check-aof.
 *
 * --check reports, changing nothing: each LMDB file (the keyspace, search indexes, qstash):
 * its meta pages and roots (datadir.ts), every page of its B-trees (lmdb-verify.ts), then every
 * record read in a child process (damage the structural check misses kills that child, not
 * the check); the journal: each file's header and
 * frames, what LMDB says it holds and expects, a torn last frame, damage before the last
 * frame. Exit code 0 when the server would start with nothing lost in silence, else 1.
 *
 * --repair does what --check does, then, for an LMDB file damaged inside a B-tree (its meta
 * pages sound), copies every record it can still read into a new file (the walk of
 * lmdb-verify.ts stepping over damaged pages and nodes), keeps the damaged file as
 * `data.mdb.damaged-<time>` and prints the records kept and lost per database; for the
 * journal: cuts a damaged file at its last intact frame (a copy of the whole file
 * is kept beside it as `<file>.damaged-<time>`; later files are renamed so too), and when LMDB
 * expects a journal file that is missing or empty, or frames are missing between LMDB and the
 * journal, it records that no journal is expected and moves the files that cannot be applied
 * aside. What is dropped is printed: frames, records, bytes. The server then starts from what
 * is left. The directory's lock is taken meanwhile: a running server's directory is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DirLock } from './lock.js';
import { LmdbStore } from './lmdb.js';
import { open } from 'lmdb';
import { checkLmdbFile, DataDirError, journalProblem } from './datadir.js';
import { scanJournal, truncateJournal, type JournalScan } from './journal.js';
import { walkInChild } from './lmdb-walk.js';
import { LmdbDamage, verifyLmdb } from './lmdb-verify.js';

/** The LMDB environments a data directory may hold (src/store, src/search, src/qstash). */
export const LMDB_ENVS = ['lmdb', 'search', 'qstash'];

/** Run the check (and the repair when asked); resolves to the exit code. */
export async function checkDataDir(dir: string, repair: boolean, log: (line: string) => void = (l) => console.log(l)): Promise<number> {
  if (!fs.existsSync(dir)) {
    log(`${dir}: no such directory`);
    return 1;
  }
  let lock: DirLock;
  try {
    lock = DirLock.acquire(dir);
  } catch (err) {
    log((err as Error).message);
    return 1;
  }
  try {
    return await new Check(dir, repair, log).run();
  } finally {
    lock.release();
  }
}

class Check {
  problems = 0;
  private readonly stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');

  constructor(readonly dir: string, readonly repair: boolean, readonly log: (line: string) => void) {}

  private bad(what: string): void {
    this.problems++;
    this.log(`  DAMAGED: ${what}`);
  }

  async run(): Promise<number> {
    this.log(`${this.repair ? 'Repairing' : 'Checking'} the data directory ${this.dir}`);
    const sound: string[] = [];
    for (const env of LMDB_ENVS) {
      const state = this.checkHeader(env);
      if (state === 'sound' || (state === 'tree' && this.repair && await this.salvage(env))) sound.push(env);
    }
    const read = this.walk(sound);
    if (this.repair) {
      // Damage the structural check missed but reading did find: salvage what can be read.
      for (const env of sound) if (!read.includes(env) && await this.salvage(env) && this.walk([env]).length === 1) read.push(env);
    }
    const mainOk = read.includes('lmdb') || !fs.existsSync(path.join(this.dir, 'lmdb', 'data.mdb'));
    this.checkJournal(mainOk);
    if (this.problems === 0) {
      this.log(this.repair ? 'Result: the server can start.' : 'Result: no damage found.');
      return 0;
    }
    this.log(`Result: ${this.problems} problem${this.problems === 1 ? '' : 's'} ${this.repair ? 'left' : 'found'}.` +
      (this.repair ? '' : ' `--repair` cuts a damaged journal at its last intact frame and copies the records a damaged LMDB file still holds into a new one (what it drops is printed); a backup is better for LMDB.'));
    return 1;
  }

  /**
   * One LMDB environment's file, before mapping it: 'sound', 'absent', 'meta' (its meta pages
   * or roots are damaged: nothing to salvage from) or 'tree' (damage inside a B-tree).
   */
  private checkHeader(env: string): 'sound' | 'absent' | 'meta' | 'tree' {
    const envDir = path.join(this.dir, env);
    const file = path.join(envDir, 'data.mdb');
    if (!fs.existsSync(file)) {
      this.log(`  ${file}: absent`);
      return 'absent';
    }
    try {
      checkLmdbFile(envDir);
    } catch (err) {
      if (!(err instanceof DataDirError)) throw err;
      this.bad(err.message);
      return 'meta';
    }
    try {
      const s = verifyLmdb(file);
      this.log(`  ${file}: every B-tree page sound (${s.pages} pages, ${s.records} records, transaction ${s.txnid})`);
      return 'sound';
    } catch (err) {
      this.bad(err instanceof LmdbDamage ? `${err.message}; LMDB cannot read it safely` : `${file}: the check of its B-trees failed: ${(err as Error).message}`);
      return 'tree';
    }
  }

  /**
   * Copy every record the damaged file `env` still holds into a new file, read with plain
   * reads (lmdb-verify.ts steps over the damaged pages), and put it in place; the damaged file
   * is kept beside it. True when done.
   */
  private async salvage(env: string): Promise<boolean> {
    const envDir = path.join(this.dir, env);
    const file = path.join(envDir, 'data.mdb');
    const work = path.join(envDir, `salvage-${this.stamp}`);
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(work);
    // The new file gets the old one's environment flags (lmdb-js refuses overlapping sync on a file made without it).
    const head = Buffer.alloc(2);
    const fd = fs.openSync(file, 'r');
    fs.readSync(fd, head, 0, 2, 24 + 24 + 4); // meta page 0: page header, then mm_dbs[0].md_flags
    fs.closeSync(fd);
    const flags = head.readUInt16LE(0);
    const out = open({ path: work, maxDbs: 32, encoding: 'binary', keyEncoding: 'binary', overlappingSync: (flags & 0x1000) !== 0 } as any);
    const dbs = new Map<string, any>();
    const kept = new Map<string, number>();
    let batch: [string, Buffer, Buffer][] = [];
    const flush = () => {
      out.transactionSync(() => {
        for (const [name, k, v] of batch) {
          let db = dbs.get(name);
          if (db === undefined) dbs.set(name, db = out.openDB(name, { encoding: 'binary', keyEncoding: 'binary' } as any));
          db.putSync(k, v);
          kept.set(name, (kept.get(name) ?? 0) + 1);
        }
      });
      batch = [];
    };
    const damage: LmdbDamage[] = [];
    let stats;
    try {
      stats = verifyLmdb(file, {
        onRecord: (db, key, value) => {
          batch.push([db, key, value]);
          if (batch.length >= 10_000) flush();
        },
        onDamage: (d) => damage.push(d),
      });
      flush();
    } finally {
      await out.close();
    }
    for (const d of damage.slice(0, 20)) this.log(`  stepped over: page ${d.page} (offset ${d.offset}): ${d.what}`);
    if (damage.length > 20) this.log(`  ... and ${damage.length - 20} more damaged pages`);
    const names = new Set([...stats.recorded.keys(), ...kept.keys()]);
    let lost = 0;
    const parts: string[] = [];
    for (const name of [...names].sort()) {
      const has = kept.get(name) ?? 0;
      const recorded = stats.recorded.get(name);
      if (recorded !== undefined && recorded > has) lost += recorded - has;
      parts.push(`${name} ${has}${recorded === undefined ? ' (its record is lost)' : ` of ${recorded}`}`);
    }
    this.keepCopy(file, false);
    fs.renameSync(path.join(work, 'data.mdb'), file);
    fs.rmSync(path.join(envDir, 'lock.mdb'), { force: true });
    fs.rmSync(work, { recursive: true, force: true });
    const pages = new Set(damage.map((d) => d.page)).size;
    this.log(`  repaired: ${file} rebuilt from the records it still held: ${parts.join(', ')}; ` +
      `${lost} recorded record${lost === 1 ? '' : 's'} lost with ${pages} damaged page${pages === 1 ? '' : 's'}`);
    this.problems--;
    return true;
  }

  /**
   * Every record of the environments `envs`, read in one child process (damage inside a
   * B-tree kills it, not us; the environment it was reading is the first it did not report).
   * Returns the environments read whole.
   */
  private walk(envs: string[]): string[] {
    if (envs.length === 0) return [];
    const dirs = envs.map((e) => path.join(this.dir, e));
    const r = walkInChild(dirs);
    const done: string[] = [];
    for (const { envDir, counts } of r.read) {
      const file = path.join(envDir, 'data.mdb');
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      this.log(`  ${file}: ok, ${fs.statSync(file).size} bytes, ${total} records in ${Object.keys(counts).length} databases`);
      done.push(envs[dirs.indexOf(envDir)]);
    }
    if (r.failed !== null) {
      this.bad(`${path.join(r.failed.envDir, 'data.mdb')}: reading every record failed (${r.failed.why}): the file is damaged inside its B-tree; restore it from a backup`);
      // The environments after it were not read: read them on their own.
      done.push(...this.walk(envs.slice(done.length + 1)));
    }
    return done;
  }

  private checkJournal(mainOk: boolean): void {
    const dir = this.dir;
    let store: LmdbStore | null = null;
    let applied = 0;
    let expected = 0;
    if (mainOk && fs.existsSync(path.join(dir, 'lmdb', 'data.mdb'))) {
      store = new LmdbStore(path.join(dir, 'lmdb'));
      applied = store.getSys<number>('journalSeq') ?? 0;
      expected = store.getSys<{ file: number }>('journal')?.file ?? 0;
      this.log(`  LMDB holds journal frames up to ${applied}; ${expected > 0 ? `journal.${expected} was being written (unclean stop)` : 'no journal file is expected (clean stop)'}`);
    } else if (!mainOk) this.log('  the journal is checked without what LMDB records (its file is damaged)');
    try {
      let scan = this.scan(applied, true);
      if (scan === null) return;
      let problem = journalProblem(dir, scan, applied, expected);
      if (problem === null) {
        if (this.repair && scan.tail !== null) {
          truncateJournal(scan.tail.file, scan.tail.offset);
          this.log(`  repaired: ${scan.tail.file} cut at offset ${scan.tail.offset} (${scan.tail.bytes} bytes dropped)`);
        }
        return;
      }
      if (!this.repair || store === null) {
        this.bad(problem);
        return;
      }
      this.log(`  found: ${problem}`);
      if (scan.damage !== null) {
        const d = scan.damage;
        this.keepCopy(d.file, true);
        truncateJournal(d.file, d.offset);
        for (const f of scan.files) if (f.num > Number(path.basename(d.file).slice('journal.'.length))) this.keepCopy(f.file, false);
        this.log(`  repaired: ${d.file} cut at offset ${d.offset}, after frame ${d.lastGood}: dropped ${d.following} intact frames ` +
          `(${d.followingRecords} records) and the damaged one, ${d.bytes} bytes`);
        scan = this.scan(applied, false)!;
        problem = journalProblem(dir, scan, applied, expected);
      }
      if (problem !== null) {
        // A missing or emptied file, or frames missing between LMDB and the journal: what
        // LMDB holds is all there is; files that cannot follow it go aside.
        if (scan.frames.length === 0 || journalProblem(dir, scan, applied, 0) !== null) {
          for (const f of scan.files) this.keepCopy(f.file, false);
        }
        store.transactionSync(() => store!.sys.putSync('journal', { file: 0 }));
        this.log(`  repaired: LMDB (frames up to ${applied}) is taken as the whole store; writes acknowledged after frame ${applied} that were only in the missing journal are lost`);
        scan = this.scan(applied, false)!;
        problem = journalProblem(dir, scan, applied, 0);
      }
      if (problem !== null) this.bad(problem);
    } finally {
      if (store !== null) void store.close();
    }
  }

  /** Scan and list the journal files (null: a file could not be read, reported). */
  private scan(applied: number, print: boolean): JournalScan | null {
    let scan: JournalScan;
    try {
      scan = scanJournal(this.dir, applied);
    } catch (err) {
      this.bad((err as Error).message);
      return null;
    }
    if (!print) return scan;
    if (scan.files.length === 0) this.log('  journal: no files');
    for (const f of scan.files) {
      this.log(`  ${f.file}: ${f.size} bytes, ${f.firstSeq === null ? 'no header' : `header (first frame ${f.firstSeq})`}, ` +
        (f.frames === 0 ? 'no frames' : `${f.frames} intact frames (${f.first}..${f.last})`));
    }
    const t = scan.tail;
    if (t !== null) {
      this.log(`  note: ${t.file}: the last frame, at offset ${t.offset}, is incomplete or damaged (${t.bytes} bytes, ${t.records} records readable): ` +
        'the write a killed process did not finish; a start cuts it off');
    }
    return scan;
  }

  /** Keep `file` beside itself as `<file>.damaged-<time>`: copied (it is cut next) or renamed. */
  private keepCopy(file: string, copy: boolean): void {
    const to = `${file}.damaged-${this.stamp}`;
    if (copy) fs.copyFileSync(file, to);
    else fs.renameSync(file, to);
    this.log(`  kept: ${file} ${copy ? 'copied' : 'moved'} to ${to}`);
  }
}
