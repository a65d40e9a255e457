/**
 * `node dist/store/lmdb-walk.js <env dir>`: read every record of every named database of an
 * LMDB environment, read-only, and print `{"<name>": <records>, ...}` as JSON. Run by
 * `--check` (repair.ts) in a child process: damage inside the B-tree makes LMDB read outside
 * its map (SIGBUS, SIGSEGV), which kills the child, not the check.
 */
import { open } from 'lmdb';

export function walk(envDir: string): Record<string, number> {
  const root = open({ path: envDir, readOnly: true, maxDbs: 32, encoding: 'binary', keyEncoding: 'binary' } as any);
  const out: Record<string, number> = {};
  try {
    // The main database's keys are the names of the named databases (NUL-terminated).
    const names = [...root.getKeys({})].map((k) => Buffer.from(k as Buffer).toString('utf8').replace(/\0$/, ''));
    for (const name of names) {
      const db = root.openDB(name, { encoding: 'binary', keyEncoding: 'binary' } as any);
      let n = 0;
      for (const { value } of db.getRange({})) if (value !== undefined) n++;
      out[name] = n;
    }
  } finally {
    void root.close();
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  process.stdout.write(JSON.stringify(walk(process.argv[2])) + '\n');
}
