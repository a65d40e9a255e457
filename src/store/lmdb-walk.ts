/**
 * `node dist/store/lmdb-walk.js <env dir>...`: read every record of every named database of
 * each LMDB environment, read-only, and print one line per environment once it is read:
 * `<env dir>\t{"<name>": <records>, ...}`. Run in a child process (`walkInChild`) by
 * `--check` (repair.ts), and at start-up for a file shorter than its last transaction says
 * (datadir.ts): damage inside the B-tree makes LMDB read outside its map (SIGBUS, SIGSEGV),
 * which kills the child, not the caller.
 */
import { writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface WalkResult {
  /** Environments read whole, in order, with each named database's record count. */
  read: { envDir: string; counts: Record<string, number> }[];
  /** The first one that could not be read, and why (the later ones were not tried). */
  failed: { envDir: string; why: string } | null;
}

/** Read every record of `envDirs` in one child process. */
export function walkInChild(envDirs: string[]): WalkResult {
  const out: WalkResult = { read: [], failed: null };
  if (envDirs.length === 0) return out;
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...envDirs], { encoding: 'utf8', timeout: 30 * 60_000 });
  for (const line of r.stdout.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab >= 0) out.read.push({ envDir: line.slice(0, tab), counts: JSON.parse(line.slice(tab + 1)) as Record<string, number> });
  }
  if (out.read.length < envDirs.length) {
    const why = r.signal !== null ? `the process reading it died of ${r.signal}` : (r.stderr.trim().split('\n').pop() || `exit code ${r.status}`);
    out.failed = { envDir: envDirs[out.read.length], why };
  }
  return out;
}

/** Reads one environment (in the child: lmdb is imported there only, not by every process that imports walkInChild). */
function walk(open: typeof import('lmdb').open, envDir: string): Record<string, number> {
  const root = open({ path: envDir, readOnly: true, maxDbs: 32, encoding: 'binary', keyEncoding: 'binary' } as any);
  const out: Record<string, number> = {};
  try {
    // The main database's keys are the names of the named databases (NUL-terminated).
    const names = [...root.getKeys({})].map((k) => Buffer.from(k as Buffer).toString('utf8').replace(/\0$/, ''));
    for (const name of names) {
      const db = root.openDB(name, { encoding: 'binary', keyEncoding: 'binary' } as any);
      let n = 0;
      for (const { value } of db.getRange({})) if (value !== undefined) n++;
      // A damaged page can also read as a plausible one that holds fewer records: LMDB keeps
      // each database's record count in its own entry, which must match what was read.
      const recorded = (db.getStats() as { entryCount: number }).entryCount;
      if (recorded !== n) throw new Error(`database '${name}' holds ${n} readable records, ${recorded} recorded`);
      out[name] = n;
    }
  } finally {
    void root.close();
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { open } = await import('lmdb');
  // Written synchronously: a line printed is a line the parent gets, even if the next environment kills us.
  for (const env of process.argv.slice(2)) {
    try {
      writeSync(1, `${env}\t${JSON.stringify(walk(open, env))}\n`);
    } catch (err) {
      writeSync(2, `${(err as Error).message}\n`);
      process.exit(1);
    }
  }
}
