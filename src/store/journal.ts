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
 *   file    [magic 'RSJF' u32 LE][crc32 u32 LE][file number u64 LE][first jseq u64 LE] frame*
 *   frame   [magic u32 LE][payload length u32 LE][crc32 u32 LE][jseq u64 LE][payload]
 *   payload ([op u8][key length u16 LE][value length u32 LE, puts only][key][value])*
 *
 * The crc covers jseq and payload, and jseq (the frame number, consecutive across files) must
 * follow the previous frame. At replay (`scanJournal`), a damaged frame followed by nothing
 * valid is a torn last frame (the process died mid-write): it is cut off and reported; a
 * damaged frame followed by intact ones LMDB lacks stops the start (datadir.ts) until the
 * operator repairs the file (`--repair`, src/store/repair.ts). Files are numbered; a full one
 * is closed and a new one started (rotate), and closed files go once LMDB holds their frames
 * durably (`sys journalSeq` records the last frame LMDB applied, and `sys journal` the file
 * being written, in the same transaction: a missing or emptied file is then detected).
 * Each file starts with a header naming its number and first frame, so that a file emptied
 * by accident is told apart from one that never held a frame.
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
const FILE_MAGIC = 0x464a5352; // 'RSJF'
/** Size of the file header. */
export const FILE_HEADER = 24;
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
    const p = this.reserve(op, key.length, value.length);
    this.buf.set(key, p);
    this.buf.set(value, p + key.length);
  }

  /** put() of the key src[0, kl) (perf: the store's scratch key, without a view of it per record). */
  putFirst(op: number, src: Uint8Array, kl: number, value: Uint8Array): void {
    const p = this.reserve(op, kl, value.length);
    const b = this.buf;
    for (let i = 0; i < kl; i++) b[p + i] = src[i];
    b.set(value, p + kl);
  }

  /**
   * Room for a put of a `kl`-byte key and a `vl`-byte value, its op and lengths written:
   * returns where the key goes in `buffer` (the value follows it), for the caller to fill.
   */
  reserve(op: number, kl: number, vl: number): number {
    this.room(7 + kl + vl);
    const b = this.buf;
    const p = this.pos;
    b[p] = op;
    b[p + 1] = kl & 0xff;
    b[p + 2] = kl >>> 8;
    b.writeUInt32LE(vl, p + 3);
    this.pos = p + 7 + kl + vl;
    this.ops++;
    return p + 7;
  }

  /** The buffer `reserve` positions refer to (valid until the next put). */
  get buffer(): Buffer {
    return this.buf;
  }

  del(op: number, key: Uint8Array): void {
    this.delFirst(op, key, key.length);
  }

  /** del() of the key src[0, kl) (see putFirst). */
  delFirst(op: number, src: Uint8Array, kl: number): void {
    this.room(3 + kl);
    const b = this.buf;
    const p = this.pos;
    b[p] = op;
    b[p + 1] = kl & 0xff;
    b[p + 2] = kl >>> 8;
    for (let i = 0; i < kl; i++) b[p + 3 + i] = src[i];
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

function u64(b: Buffer, at: number): number {
  return b.readUInt32LE(at) + b.readUInt32LE(at + 4) * 0x100000000;
}

/** The header a journal file starts with. */
function fileHeader(num: number, firstSeq: number): Buffer {
  const h = Buffer.alloc(FILE_HEADER);
  h.writeUInt32LE(FILE_MAGIC, 0);
  h.writeUInt32LE(num % 0x100000000, 8);
  h.writeUInt32LE(Math.floor(num / 0x100000000), 12);
  h.writeUInt32LE(firstSeq % 0x100000000, 16);
  h.writeUInt32LE(Math.floor(firstSeq / 0x100000000), 20);
  h.writeUInt32LE(zlib.crc32(h.subarray(8)), 4);
  return h;
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
  /** Number of the last file opened (it exists on disk; 0 = none yet). */
  opened = 0;
  /**
   * Number of the last file whose header and name are known durable: the one LMDB may name
   * as being written (`sys journal`). Equals `opened` except, with everysec, while a file
   * opened by a rotation is still being synced in the background.
   */
  named = 0;
  /** everysec: the background sync of the current file's header and name, until it ends. */
  private headerSync: Promise<void> | null = null;
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
  /** Closed files whose fdatasync still runs (everysec rotate). */
  private syncing = 0;
  /** everysec: a closed file's background fdatasync failed (the owner refuses writes: MISCONF). */
  onSyncError: ((err: Error, file: string) => void) | null = null;

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
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (err) {
      throw named(err, dir);
    }
    for (const name of names) {
      if (!name.startsWith(PREFIX)) continue;
      const num = Number(name.slice(PREFIX.length));
      if (Number.isSafeInteger(num) && num > 0) out.push({ file: path.join(dir, name), num });
    }
    return out.sort((a, b) => a.num - b.num);
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
      this.wake();
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

  /** `wait`: sync the header and name before returning (always; start-up), else in the background. */
  private open(wait = this.dsync): void {
    const file = path.join(this.dir, PREFIX + this.num);
    const c = fs.constants;
    const dsync = this.dsync ? c.O_DSYNC : 0;
    try {
      if (this.prepared) {
        this.prepared = false;
        fs.renameSync(path.join(this.dir, TMP), file);
        this.fd = fs.openSync(file, c.O_WRONLY | dsync);
      } else {
        this.fd = fs.openSync(file, c.O_WRONLY | c.O_CREAT | c.O_TRUNC | dsync, 0o644);
      }
    } catch (err) {
      throw named(err, file);
    }
    // The header first (durable: O_DSYNC, or synced), then the name: a file LMDB is told
    // about exists with its header, whatever happens next.
    try {
      fs.writeSync(this.fd, fileHeader(this.num, this.nextSeq), 0, FILE_HEADER, 0);
      if (wait) {
        if (!this.dsync) fs.fdatasyncSync(this.fd);
        // The new name must survive a crash as surely as the frames written into it.
        syncDir(this.dir);
      }
    } catch (err) {
      fs.closeSync(this.fd);
      this.fd = -1;
      throw named(err, file);
    }
    if (wait) this.named = this.num;
    else this.syncHeader(this.fd, this.num, file);
    this.opened = this.num;
    this.offset = FILE_HEADER;
    this.last = 0;
  }

  /**
   * everysec, a file opened by a rotation: its header and name are made durable in the
   * background (on the main thread, with LMDB flushing a big transaction, these two fsyncs
   * once took 49 s of one turn in a 10M-key load: ext4 commits other files' data with them).
   * Until then LMDB keeps naming the previous file (`named`), which is therefore not deleted;
   * the frames written meanwhile are synced within the second, as everysec promises.
   */
  private syncHeader(fd: number, num: number, file: string): void {
    this.syncing++;
    this.headerSync = new Promise<void>((resolve) => {
      const end = (err: Error | null): void => {
        this.syncing--;
        if (err !== null) this.onSyncError?.(err, file);
        else if (num > this.named) this.named = num;
        resolve();
        this.wake();
      };
      fs.fdatasync(fd, (err) => {
        if (err !== null) return end(err);
        fs.open(this.dir, 'r', (oe, dfd) => {
          if (oe !== null) return end(oe);
          fs.fsync(dfd, (se) => fs.close(dfd, () => end(se)));
        });
      });
    });
  }

  /** The file being written (or the next one, before it is opened). */
  get file(): string {
    return path.join(this.dir, PREFIX + this.num);
  }

  /** Number of the next frame (the first of a file opened now). */
  nextSeq = 1;

  /**
   * Open the first file of this run now (start-up), so that LMDB can record it as the one
   * being written: from then on a missing or emptied journal file is detected at start-up.
   */
  start(nextSeq: number): void {
    this.nextSeq = nextSeq;
    this.open(true);
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
    this.nextSeq = this.last + 1;
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
    const file = path.join(this.dir, PREFIX + this.num);
    if (this.dsync) fs.closeSync(this.fd);
    else {
      // everysec: the frames appended since the last periodic sync become durable in the
      // background, then the file is closed (the periodic sync only sees the current file). A
      // synchronous fdatasync here held the event loop 50-140 ms in a bulk load (issue 21).
      const fd = this.fd;
      this.syncing++;
      // After its header's sync, if that still runs: the descriptor stays open until both end.
      void Promise.resolve(this.headerSync).then(() => fs.fdatasync(fd, (err) => {
        fs.close(fd, () => {});
        this.syncing--;
        if (err !== null) this.onSyncError?.(err, file);
        this.wake();
      }));
      this.headerSync = null;
    }
    this.closed.push({ file, last: this.last });
    this.fd = -1;
    this.num++;
  }

  /**
   * LMDB holds every frame up to `seq` durably, and records file `current` as the one being
   * written: closed files before it whose frames LMDB has go.
   */
  checkpoint(seq: number, current: number): void {
    while (this.closed.length > 0 && this.closed[0].last <= seq && fileNum(this.closed[0].file) < current) {
      const f = this.closed.shift()!;
      fs.unlink(f.file, () => {});
    }
  }

  /** Files present before this run, already replayed into LMDB: they go with the next checkpoint. */
  adopt(files: string[], last: number): void {
    for (const file of files) this.closed.push({ file, last });
  }

  /**
   * Resolves once no file is being prepared (close waits for it: no file appears after) and
   * no closed file is being synced.
   */
  settled(): Promise<void> {
    if (!this.preparing && this.syncing === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private wake(): void {
    if (this.preparing || this.syncing > 0) return;
    const ws = this.waiting;
    this.waiting = [];
    for (const w of ws) w();
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

function fileNum(file: string): number {
  return Number(path.basename(file).slice(PREFIX.length));
}

/** `err` with the file it concerns in its message (Node's fs errors often omit it). */
export function named(err: unknown, file: string): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  if (e.message.includes(file)) return e;
  const code = (e as NodeJS.ErrnoException).code;
  return Object.assign(new Error(`${file}: ${e.message}`), { code });
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

// ------------------------------------------------------------------ start-up scan

/** What a damaged journal holds from the damage on. */
export interface JournalDamage {
  file: string;
  /** Byte offset of the damaged frame (or header) in `file`. */
  offset: number;
  reason: string;
  /** Last intact frame before the damage (0: none). */
  lastGood: number;
  /** Intact frames found after the damage (in this file and the later ones), and their records. */
  following: number;
  followingRecords: number;
  /** How many of them LMDB does not hold. */
  unapplied: number;
  /** Bytes from the damage to the end of the journal's data. */
  bytes: number;
}

/** A torn (incomplete or damaged) last frame: nothing valid follows it. */
export interface JournalTail {
  file: string;
  offset: number;
  /** Non-zero bytes it spans (what is cut off). */
  bytes: number;
  /** Records of it that could be parsed (writes dropped). */
  records: number;
}

export interface JournalFile {
  file: string;
  num: number;
  size: number;
  /** First frame number its header announces; null: no header (empty file, or written by an older version). */
  firstSeq: number | null;
  /** Intact frames in it, and the first and last frame number (0 when none). */
  frames: number;
  first: number;
  last: number;
}

export interface JournalScan {
  files: JournalFile[];
  /** Intact frames after `after`, in order. */
  frames: Buffer[];
  /** Last intact frame number (0: none). */
  last: number;
  damage: JournalDamage | null;
  tail: JournalTail | null;
  /** Damage skipped because LMDB already holds the frames it hit (frames first..last; last null: to the end of the file). */
  skipped: { file: string; offset: number; reason: string; first: number; last: number | null }[];
}

const MAGIC_BYTES = Buffer.from([0x52, 0x53, 0x4a, 0x31]);

/** Why the frame at `p` is not intact, or null. */
function frameFault(data: Buffer, p: number): string | null {
  if (p + HEADER > data.length) return 'incomplete frame header';
  if (data.readUInt32LE(p) !== MAGIC) return 'bad frame magic';
  const len = data.readUInt32LE(p + 4);
  if (p + HEADER + len > data.length) return `incomplete frame (length ${len}, ${data.length - p - HEADER} bytes present)`;
  if (zlib.crc32(data.subarray(p + 12, p + HEADER + len)) !== data.readUInt32LE(p + 8)) return 'frame checksum mismatch';
  return null;
}

/** Offset of the first non-zero byte at or after `from` (data.length when none). */
function nonZero(data: Buffer, from: number): number {
  for (let p = from; p < data.length; p += ZEROS.length) {
    const end = Math.min(data.length, p + ZEROS.length);
    if (ZEROS.compare(data, p, end, 0, end - p) === 0) continue;
    for (let q = p; q < end; q++) if (data[q] !== 0) return q;
  }
  return data.length;
}

/** One past the last non-zero byte. */
function dataEnd(data: Buffer): number {
  let e = data.length;
  while (e > 0 && data[e - 1] === 0) e--;
  return e;
}

/** Records of a frame's payload that fit in the bytes present (a torn frame: best effort). */
function countRecords(data: Buffer, p: number, end: number): number {
  let n = 0;
  let q = p + HEADER;
  while (q + 3 <= end) {
    const op = data[q];
    if (op < OP_META_PUT || op > OP_SYS_DEL) break;
    const kl = data[q + 1] | (data[q + 2] << 8);
    const size = op & 1 ? (q + 7 <= end ? 7 + kl + data.readUInt32LE(q + 3) : Infinity) : 3 + kl;
    if (q + size > end) break;
    q += size;
    n++;
  }
  return n;
}

/** Offset of the first intact frame at or after `from`, or -1. */
function nextIntact(data: Buffer, from: number): number {
  let p = data.indexOf(MAGIC_BYTES, from);
  while (p >= 0 && frameFault(data, p) !== null) p = data.indexOf(MAGIC_BYTES, p + 1);
  return p;
}

/** Intact frames from `from` on (resynchronising on the magic after junk): count, records, and those numbered after `after`. */
function intactAfter(data: Buffer, from: number, after: number): { frames: number; records: number; unapplied: number } {
  const r = { frames: 0, records: 0, unapplied: 0 };
  let p = nextIntact(data, from);
  while (p >= 0) {
    const end = p + HEADER + data.readUInt32LE(p + 4);
    r.frames++;
    r.records += countRecords(data, p, end);
    if (u64(data, p + 12) > after) r.unapplied++;
    p = nextIntact(data, end);
  }
  return r;
}

function readJournalFile(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw named(err, file);
  }
}

/**
 * Read every journal file of `dir`: the intact frames after `after`, each file's header and
 * frame range, and where reading stopped. A frame that is not intact (torn, bad magic, bad
 * checksum, out of sequence) followed by zeros or by nothing valid is the torn last frame
 * (`tail`); followed by any intact frame, in its file or a later one, it is `damage`: the
 * frames after it cannot be applied (each frame follows from the previous ones).
 */
export function scanJournal(dir: string, after: number): JournalScan {
  const list = Journal.files(dir);
  const out: JournalScan = { files: [], frames: [], last: 0, damage: null, tail: null, skipped: [] };
  let prev = -1;
  for (let i = 0; i < list.length; i++) {
    const { file, num } = list[i];
    const data = readJournalFile(file);
    const info: JournalFile = { file, num, size: data.length, firstSeq: null, frames: 0, first: 0, last: 0 };
    out.files.push(info);
    let p = 0;
    let fault: string | null = null;
    if (data.length >= 4 && data.readUInt32LE(0) === FILE_MAGIC) {
      if (data.length < FILE_HEADER || zlib.crc32(data.subarray(8, FILE_HEADER)) !== data.readUInt32LE(4)) fault = 'damaged file header';
      else {
        info.firstSeq = u64(data, 16);
        p = FILE_HEADER;
      }
    } else if (!(data.length >= 4 && data.readUInt32LE(0) === MAGIC) && nonZero(data, 0) < data.length) {
      fault = 'bad file header'; // (a file of an older version starts with its first frame; an empty one is all zeros)
    }
    for (;;) {
      if (fault === null) {
        if (nonZero(data, p) === data.length) break; // zeros (preallocated) or the end: the file ends here
        fault = frameFault(data, p);
        if (fault === null) {
          const seq = u64(data, p + 12);
          if (prev !== -1 && seq !== prev + 1) fault = `frame number ${seq} where ${prev + 1} was expected`;
          else if (p === FILE_HEADER && info.firstSeq !== null && seq !== info.firstSeq) fault = `first frame is number ${seq}, the file header says ${info.firstSeq}`;
        }
        if (fault === null) {
          const len = data.readUInt32LE(p + 4);
          const seq = u64(data, p + 12);
          if (seq > after) out.frames.push(data.subarray(p, p + HEADER + len));
          if (info.frames++ === 0) info.first = seq;
          info.last = seq;
          prev = seq;
          out.last = Math.max(out.last, seq);
          p += HEADER + len;
          continue;
        }
      }
      // Damage that LMDB has made harmless: the damaged frame, and every one up to the next
      // intact frame, are frames LMDB already holds (applied before the server stopped).
      const damagedSeq = prev !== -1 ? prev + 1 : info.firstSeq ?? Infinity;
      if (damagedSeq > after) break;
      const q = nextIntact(data, p + 1);
      const s = q === -1 ? -1 : u64(data, q + 12);
      if (q === -1 ? i === list.length - 1 : s > after + 1 || s < damagedSeq) break;
      out.skipped.push({ file, offset: p, reason: fault, first: damagedSeq, last: q === -1 ? null : s - 1 });
      fault = null;
      if (q === -1) {
        prev = -1; // the next file's frames are checked against LMDB (journalProblem)
        break;
      }
      prev = s - 1;
      p = q;
    }
    if (fault === null) continue;
    // Anything intact after the fault, here or in a later file?
    const following = intactAfter(data, p + 1, after);
    let bytes = dataEnd(data) - p;
    for (let j = i + 1; j < list.length; j++) {
      const later = readJournalFile(list[j].file);
      const f = intactAfter(later, 0, after);
      following.frames += f.frames;
      following.records += f.records;
      following.unapplied += f.unapplied;
      bytes += dataEnd(later);
    }
    if (following.frames > 0) {
      out.damage = {
        file, offset: p, reason: fault, lastGood: out.last, following: following.frames, followingRecords: following.records,
        unapplied: following.unapplied, bytes,
      };
    } else {
      const start = nonZero(data, p);
      const len = start + HEADER <= data.length && data.readUInt32LE(start) === MAGIC ? data.readUInt32LE(start + 4) : 0;
      const end = dataEnd(data);
      // Records whose bytes are there (zeros past the last written byte are not a record's).
      out.tail = { file, offset: p, bytes: end - start, records: countRecords(data, start, Math.min(end, start + HEADER + len)) };
    }
    break;
  }
  return out;
}

/**
 * Cut `file` at `offset` (the end of its last intact frame), durably: what a torn last frame
 * left, or (`--repair`) a damaged frame and everything after it.
 */
export function truncateJournal(file: string, offset: number): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r+');
  } catch (err) {
    throw named(err, file);
  }
  try {
    fs.ftruncateSync(fd, offset);
    fs.fsyncSync(fd);
  } catch (err) {
    throw named(err, file);
  } finally {
    fs.closeSync(fd);
  }
}
