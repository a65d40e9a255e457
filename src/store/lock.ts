/**
 * One owner per data directory: a lock file `<dir>/redstash.lock` holding the owner's pid, the
 * process start time and the boot id, created with O_EXCL.
 *
 * LMDB itself lets several processes share an environment, so without this a second server on
 * the same --dir would happily interleave its writes with ours. A lock left by a process that
 * died (SIGKILL, power loss) is stale when its pid no longer runs, or runs but is another
 * process (different start time or boot id: pid reuse in containers). Breaking a stale lock
 * takes a second O_EXCL file (`.break`) first, so two starters racing over the same stale lock
 * cannot both win.
 *
 * Limit: liveness is judged through /proc of this pid namespace; two containers with separate
 * pid namespaces sharing one volume cannot see each other's pids (a lock from the other one
 * looks stale). Deployments must not share a data volume between running containers.
 */
import fs from 'node:fs';
import path from 'node:path';

export class DirLockedError extends Error {
  constructor(readonly dir: string, readonly pid: number) {
    super(`the data directory ${dir} is in use by another server process (pid ${pid}); ` +
      'only one process may own a data directory (stop it, or give this one another --dir)');
  }
}

interface LockInfo {
  pid: number;
  start: string;
  boot: string;
}

function bootId(): string {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
  } catch {
    return '';
  }
}

/** Start time of a process (clock ticks since boot, /proc/<pid>/stat field 22), or null. */
function startTime(pid: number): string | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return null; // zombie: exited, not yet reaped
    return rest[19];
  } catch {
    return null;
  }
}

function alive(info: LockInfo): boolean {
  if (info.pid === process.pid) return false; // our own pid from a previous life
  if (fs.existsSync('/proc/self/stat')) {
    if (info.boot !== '' && info.boot !== bootId()) return false;
    const st = startTime(info.pid);
    return st !== null && (info.start === '' || st === info.start);
  }
  try {
    process.kill(info.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(file: string): LockInfo | null {
  try {
    const j = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (typeof j.pid === 'number') return { pid: j.pid, start: String(j.start ?? ''), boot: String(j.boot ?? '') };
  } catch {
    // missing or half-written (a crash between create and write): treated as stale below
  }
  return null;
}

export class DirLock {
  private constructor(readonly file: string) {}

  /** Take the directory or throw DirLockedError. */
  static acquire(dir: string): DirLock {
    const file = path.join(dir, 'redstash.lock');
    const mine = JSON.stringify({ pid: process.pid, start: startTime(process.pid) ?? '', boot: bootId() });
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        const fd = fs.openSync(file, 'wx');
        fs.writeSync(fd, mine);
        fs.fsyncSync(fd);
        fs.closeSync(fd);
        return new DirLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const info = readLock(file);
      if (info !== null && alive(info)) throw new DirLockedError(dir, info.pid);
      if (info === null && attempt < 3) {
        // Possibly being written right now by a starting owner: look again shortly.
        sleep(20);
        continue;
      }
      DirLock.breakStale(file, info);
    }
    throw new Error(`could not take the lock file ${file}`);
  }

  /** Remove a stale lock, under the `.break` guard so only one starter does it. */
  private static breakStale(file: string, seen: LockInfo | null): void {
    const guard = file + '.break';
    let fd: number;
    try {
      fd = fs.openSync(guard, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // Someone else is breaking it; a guard older than 10 s belongs to a dead breaker.
      try {
        if (Date.now() - fs.statSync(guard).mtimeMs > 10000) fs.rmSync(guard, { force: true });
      } catch {
        // vanished meanwhile
      }
      sleep(20);
      return;
    }
    try {
      const now = readLock(file);
      // Only remove the very lock we judged stale (not a fresh one created meanwhile).
      if (JSON.stringify(now) === JSON.stringify(seen)) fs.rmSync(file, { force: true });
    } finally {
      fs.closeSync(fd);
      fs.rmSync(guard, { force: true });
    }
  }

  release(): void {
    const info = readLock(this.file);
    if (info !== null && info.pid === process.pid) fs.rmSync(this.file, { force: true });
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
