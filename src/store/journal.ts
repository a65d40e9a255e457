/**
 * The write-ahead journal of `appendfsync always`, and of everysec without O_DSYNC (each
 * 100 ms batch is one frame, written to the page cache; `sync()` every second): persistence.ts
 * decides when to use it.
 *
 * Each event-loop turn that wrote becomes one frame: the records the LMDB batch would write
 * (puts and deletes per database and key), encoded once, appended to `<dir>/journal.<n>` with
 * a single write on a file opened O_DSYNC (write + fdatasync in one system call), made on the
 * main thread at the end of the turn, as Redis's beforeSleep writes and fsyncs its AOF: every
 * command read in the turn shares it (group commit). The replies of the turn go out once that
 * write returns, in the same turn; LMDB gets the same records later, in bigger batches.
 *
 *   frame   [magic u32 LE][payload length u32 LE][crc32 u32 LE][jseq u64 LE][payload]
 *   payload ([op u8][key length u16 LE][value length u32 LE, puts only][key][value])*
 *
 * The crc covers jseq and payload, and jseq (the frame number, consecutive across files) must
 * follow the previous frame: a torn last frame (the process died mid-write) or stale bytes
 * past the end are ignored at replay. Files are numbered; a full one is closed and a new one
 * started (rotate), and closed files go once LMDB holds their frames durably (`sys
 * journalSeq` records the last frame LMDB applied, in the same transaction).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { grown } from '../bytes.js';

export const OP_META_PUT = 1;
export const OP_META_DEL = 2;
export const OP_ITEM_PUT = 3;
export const OP_ITEM_DEL = 4;
export const OP_GC_PUT = 5;
export const OP_GC_DEL = 6;
export const OP_SYS_PUT = 7;
export const OP_SYS_DEL = 8;

const MAGIC = 0x314a5352; // 'RSJ1'
/** Bytes of zeros a journal file gets before its first frame (past the rotation size). */
const PREALLOC = 9 * 1024 * 1024;
const ZEROS = Buffer.alloc(1024 * 1024);
/** Size of the current file at which the next one is prepared (persistence rotates at 8 MB). */
const PREPARE_AT = 4 * 1024 * 1024;
const HEADER = 20;
const PREFIX = 'journal.';
/** The next file while its zeros are written (not a journal file: replay ignores it). */
const TMP = 'journal.tmp';

/** Encodes one frame's records into a reused buffer. */
export class FrameBuilder {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private pos = HEADER;
  ops = 0;

  private room(n: number): void {
    if (this.pos + n > this.buf.length) this.buf = grown(this.buf, this.pos, this.pos + n);
  }

  put(op: number, key: Uint8Array, value: Uint8Array): void {
    const kl = key.length;
    const vl = value.length;
    this.room(7 + kl + vl);
    const b = this.buf;
    let p = this.pos;
    b[p] = op;
    b[p + 1] = kl & 0xff;
    b[p + 2] = kl >>> 8;
    b.writeUInt32LE(vl, p + 3);
    p += 7;
    b.set(key, p);
    p += kl;
    b.set(value, p);
    this.pos = p + vl;
    this.ops++;
  }

  del(op: number, key: Uint8Array): void {
    const kl = key.length;
    this.room(3 + kl);
    const b = this.buf;
    const p = this.pos;
    b[p] = op;
    b[p + 1] = kl & 0xff;
    b[p + 2] = kl >>> 8;
    b.set(key, p + 3);
    this.pos = p + 3 + kl;
    this.ops++;
  }

  /** The finished frame (a fresh Buffer), numbered `jseq`; the builder is reset. */
  finish(jseq: number): Buffer {
    const b = this.buf;
    const len = this.pos - HEADER;
    b.writeUInt32LE(MAGIC, 0);
    b.writeUInt32LE(len, 4);
    b.writeUInt32LE(jseq % 0x100000000, 12);
    b.writeUInt32LE(Math.floor(jseq / 0x100000000), 16);
    b.writeUInt32LE(zlib.crc32(b.subarray(12, this.pos)), 8);
    const out = Buffer.allocUnsafe(this.pos);
    b.copy(out, 0, 0, this.pos);
    this.pos = HEADER;
    this.ops = 0;
    return out;
  }
}

/** The frame number of a finished frame. */
export function frameSeq(frame: Buffer): number {
  return frame.readUInt32LE(12) + frame.readUInt32LE(16) * 0x100000000;
}

/** Calls `fn` for each record of a finished frame (key and value are views into it). */
export function forEachOp(frame: Buffer, fn: (op: number, key: Buffer, value: Buffer | null) => void): void {
  let p = HEADER;
  const end = frame.length;
  while (p < end) {
    const op = frame[p];
    const kl = frame[p + 1] | (frame[p + 2] << 8);
    if (op & 1) {
      const vl = frame.readUInt32LE(p + 3);
      const k = p + 7;
      fn(op, frame.subarray(k, k + kl), frame.subarray(k + kl, k + kl + vl));
      p = k + kl + vl;
    } else {
      fn(op, frame.subarray(p + 3, p + 3 + kl), null);
      p += 3 + kl;
    }
  }
}

interface ClosedFile {
  file: string;
  /** Last frame number it holds. */
  last: number;
}

/** The journal files of one data directory. */
export class Journal {
  private fd = -1;
  private num = 0;
  private offset = 0;
  private closed: ClosedFile[] = [];
  /** Last frame number written to the current file (0 = none). */
  private last = 0;
  /**
   * The next file is written full of zeros (and synced) in the background, as `journal.tmp`,
   * and renamed into place when a file is opened: a frame then overwrites allocated blocks,
   * and the O_DSYNC write has no file-size or block-allocation metadata to commit (measured
   * about 2x quicker than appending). Zeros end a replay. A file needed before its zeros are
   * ready is simply created empty (nothing ever waits for the preparation).
   */
  private prepared = false;
  private preparing = false;
  private waiting: (() => void)[] = [];
  private ended = false;

  /**
   * `dsync` (appendfsync always): every frame is durable when its append completes (O_DSYNC).
   * Otherwise (everysec) an append only reaches the page cache, which a killed process does
   * not lose, and `sync()` makes everything appended so far durable (called every second).
   */
  constructor(readonly dir: string, firstNum: number, readonly dsync = true) {
    this.num = firstNum;
  }

  /** Journal files of `dir`, oldest first. */
  static files(dir: string): { file: string; num: number }[] {
    const out: { file: string; num: number }[] = [];
    for (const name of fs.readdirSync(dir)) {
      if (!name.startsWith(PREFIX)) continue;
      const num = Number(name.slice(PREFIX.length));
      if (Number.isSafeInteger(num) && num > 0) out.push({ file: path.join(dir, name), num });
    }
    return out.sort((a, b) => a.num - b.num);
  }

  /**
   * Every intact frame after `after`, in order, across the files: reading stops at the first
   * torn, corrupt or out-of-sequence frame. Returns the frames (views into the file contents).
   */
  static read(dir: string, after: number): Buffer[] {
    const frames: Buffer[] = [];
    let prev = -1;
    for (const { file } of Journal.files(dir)) {
      const data = fs.readFileSync(file);
      let p = 0;
      while (p + HEADER <= data.length) {
        if (data.readUInt32LE(p) !== MAGIC) break;
        const len = data.readUInt32LE(p + 4);
        if (p + HEADER + len > data.length) break;
        if (zlib.crc32(data.subarray(p + 12, p + HEADER + len)) !== data.readUInt32LE(p + 8)) break;
        const frame = data.subarray(p, p + HEADER + len);
        const seq = frameSeq(frame);
        if (prev !== -1 && seq !== prev + 1) return frames;
        prev = seq;
        if (seq > after) frames.push(frame);
        p += HEADER + len;
      }
    }
    return frames;
  }

  /** Current file size (what rotation looks at). */
  get size(): number {
    return this.offset;
  }

  /**
   * The first file's zeros, written before the server answers (start-up): written in the
   * background, they would compete for the disk with the first frames' writes.
   */
  prepareSync(): void {
    if (this.prepared || this.preparing || !this.dsync) return;
    let fd: number;
    try {
      fd = fs.openSync(path.join(this.dir, TMP), 'w', 0o644);
    } catch {
      return; // the journal's own writes will report the problem
    }
    try {
      for (let off = 0; off < PREALLOC; off += ZEROS.length) fs.writeSync(fd, ZEROS, 0, Math.min(ZEROS.length, PREALLOC - off), off);
      fs.fdatasyncSync(fd);
      this.prepared = true;
    } catch {
      // no room: the file is created when needed, without zeros
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Start writing zeros into `journal.tmp` for the next file, in the background. */
  prepare(): void {
    if (this.preparing || this.prepared || this.ended || !this.dsync) return;
    this.preparing = true;
    const file = path.join(this.dir, TMP);
    const finish = (ok: boolean): void => {
      this.preparing = false;
      this.prepared = ok && !this.ended;
      if (this.ended) fs.unlink(file, () => {});
      const ws = this.waiting;
      this.waiting = [];
      for (const w of ws) w();
    };
    fs.open(file, 'w', 0o644, (err, fd) => {
      if (err !== null) {
        finish(false);
        return;
      }
      let off = 0;
      const next = (e: Error | null): void => {
        if (e !== null || this.ended) {
          fs.close(fd, () => finish(false));
          return;
        }
        if (off < PREALLOC) {
          const n = Math.min(ZEROS.length, PREALLOC - off);
          off += n;
          fs.write(fd, ZEROS, 0, n, off - n, (we) => next(we));
          return;
        }
        fs.fdatasync(fd, (se) => fs.close(fd, () => finish(se === null)));
      };
      next(null);
    });
  }

  private open(): void {
    const file = path.join(this.dir, PREFIX + this.num);
    const c = fs.constants;
    const dsync = this.dsync ? c.O_DSYNC : 0;
    if (this.prepared) {
      this.prepared = false;
      fs.renameSync(path.join(this.dir, TMP), file);
      this.fd = fs.openSync(file, c.O_WRONLY | dsync);
    } else {
      this.fd = fs.openSync(file, c.O_WRONLY | c.O_CREAT | c.O_TRUNC | dsync, 0o644);
    }
    // The new name must survive a crash as surely as the frames written into it.
    syncDir(this.dir);
    this.offset = 0;
    this.last = 0;
  }

  /**
   * Append one frame durably: a single O_DSYNC write, on the calling thread, as Redis writes
   * and fsyncs its AOF in beforeSleep. Returns null once the frame is on disk, else the error;
   * on failure the file is cut back to where the frame started, so that the next frame
   * follows the last good one.
   */
  append(frame: Buffer): Error | null {
    try {
      if (this.fd < 0) this.open();
    } catch (err) {
      return err as Error;
    }
    const fd = this.fd;
    const start = this.offset;
    let done = 0;
    try {
      while (done < frame.length) {
        const n = fs.writeSync(fd, frame, done, frame.length - done, start + done);
        if (n <= 0) throw Object.assign(new Error('short write to the journal'), { code: 'EIO' });
        done += n;
      }
    } catch (err) {
      try {
        fs.ftruncateSync(fd, start);
      } catch {
        // the next frame's write reports it
      }
      return err as Error;
    }
    this.offset = start + frame.length;
    this.last = frameSeq(frame);
    // The next file's zeros, once this one is half full (not at its start, where they would
    // compete for the disk with the first frames).
    if (this.offset >= PREPARE_AT && !this.prepared) this.prepare();
    return null;
  }

  /** Without `dsync`: make every frame appended so far durable (fdatasync of the current file). */
  sync(cb: (err: Error | null) => void): void {
    if (this.fd < 0) {
      cb(null);
      return;
    }
    fs.fdatasync(this.fd, (err) => cb(err));
  }

  /** Close the current file (if it holds frames) and start the next one at the next append. */
  rotate(): void {
    if (this.fd < 0 || this.last === 0) return;
    if (!this.dsync) fs.fdatasyncSync(this.fd); // the file's frames stay durable once it is closed
    fs.closeSync(this.fd);
    this.closed.push({ file: path.join(this.dir, PREFIX + this.num), last: this.last });
    this.fd = -1;
    this.num++;
  }

  /** LMDB holds every frame up to `seq` durably: closed files up to it go. */
  checkpoint(seq: number): void {
    while (this.closed.length > 0 && this.closed[0].last <= seq) {
      const f = this.closed.shift()!;
      fs.unlink(f.file, () => {});
    }
  }

  /** Files present before this run, already replayed into LMDB: they go with the next checkpoint. */
  adopt(files: string[], last: number): void {
    for (const file of files) this.closed.push({ file, last });
  }

  /** Resolves once no file is being prepared (close waits for it: no file appears after). */
  settled(): Promise<void> {
    if (!this.preparing) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Close, removing every file when `drop` (LMDB holds all frames durably). */
  close(drop: boolean): void {
    this.ended = true;
    try {
      fs.unlinkSync(path.join(this.dir, TMP));
    } catch {
      // none
    }
    const open = this.fd >= 0;
    if (open) fs.closeSync(this.fd);
    this.fd = -1;
    if (!drop) return;
    if (open) this.closed.push({ file: path.join(this.dir, PREFIX + this.num), last: this.last });
    for (const f of this.closed) {
      try {
        fs.unlinkSync(f.file);
      } catch {
        // already gone
      }
    }
    this.closed = [];
  }
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
