/**
 * A structural check of an LMDB file with plain reads, no mmap: every B-tree reachable from a
 * meta page (the free-page database, the main database, every named database), page by page,
 * checking what LMDB dereferences without checking (mdb.c trusts its map): each page's number
 * and kind, its lower/upper bounds, every node's offset and size inside the page, its keys
 * non-empty and in order (else lmdb-js's range reads stop early: a silent short load), every child
 * page and overflow run inside the file, each page reached once, leaves at the tree's depth,
 * each free-list entry's length and pages, and every database's record and page counts against
 * the ones LMDB recorded. Damage there would otherwise kill the process that reads the page
 * (SIGSEGV, SIGBUS, an LMDB assertion) or return garbage.
 *
 * The trees are read level by level: the pages of each level are sorted and read in runs of
 * adjacent pages (one readSync of up to 1 MB), so the file is read mostly sequentially, and
 * only the pages LMDB would reach are read (free pages are not).
 *
 * The same walk, given `onRecord`, hands out every record it can read and steps over damaged
 * pages instead of stopping (`--repair`'s salvage, repair.ts).
 */
import fs from 'node:fs';

/** LMDB's layout (mdb.c of lmdb-js 3, 64-bit): page header pgno u64, txnid u64, pad u16, flags u16, lower u16, upper u16. */
const HDR = 24;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_META = 0x08;
const P_LEAF2 = 0x20;
const P_SUBP = 0x40;
/** Flags a committed tree page may carry besides its kind (P_DIRTY_OVF, P_LOOSE, P_KEEP are in-memory marks). */
const P_KNOWN = P_BRANCH | P_LEAF | P_LEAF2 | P_SUBP | 0x2000 | 0x4000 | 0x8000;
const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const F_DUPDATA = 0x04;
const MDB_REVERSEKEY = 0x02;
const MDB_DUPSORT = 0x04;
const MDB_INTEGERKEY = 0x08;
const NODE = 8;
/** MDB_db: pad u32, flags u16, depth u16, branch, leaf, overflow, entries, root (u64 each). */
const DB_SIZE = 48;
/** MDB_ovpage, a big value's node data: pgno, txnid, pages (u64 each). */
const OVPAGE = 24;
/** Meta page: MDB_meta after the header: magic, version, address, mapsize, dbs[2], last_pg, txnid. */
const M_DBS = 24;
const M_LAST_PG = M_DBS + 2 * DB_SIZE;
const M_TXNID = M_LAST_PG + 8;
/** A run of pages read at once, and the largest gap of unwanted pages read through. */
const RUN_BYTES = 1 << 20;
const GAP_PAGES = 8;

/** Little-endian reads by index: V8 inlines these, where Buffer's read methods check their arguments. */
const r16 = (b: Buffer, at: number): number => b[at] | (b[at + 1] << 8);
const r32 = (b: Buffer, at: number): number => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)) + b[at + 3] * 16777216;
/**
 * memcmp order of two byte ranges of `b` (LMDB's default key order: then the shorter first),
 * four bytes at a time through `v`, a DataView of `b` (keys share long prefixes).
 */
function compareBytes(b: Buffer, v: DataView, x: number, xl: number, y: number, yl: number): number {
  const n = xl < yl ? xl : yl;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const d = v.getUint32(x + i) - v.getUint32(y + i);
    if (d !== 0) return d;
  }
  for (; i < n; i++) {
    const d = b[x + i] - b[y + i];
    if (d !== 0) return d;
  }
  return xl - yl;
}
const u64 = (b: Buffer, at: number): number => r32(b, at) + r32(b, at + 4) * 4294967296;
const INVALID = u64(Buffer.alloc(8, 0xff), 0);

interface DbRecord {
  pad: number;
  flags: number;
  depth: number;
  branch: number;
  leaf: number;
  overflow: number;
  entries: number;
  root: number;
}

function readDb(b: Buffer, at: number): DbRecord {
  return {
    pad: b.readUInt32LE(at),
    flags: b.readUInt16LE(at + 4),
    depth: b.readUInt16LE(at + 6),
    branch: u64(b, at + 8),
    leaf: u64(b, at + 16),
    overflow: u64(b, at + 24),
    entries: u64(b, at + 32),
    root: u64(b, at + 40),
  };
}

/** One B-tree being walked, and what the walk found in it. */
interface Tree {
  /** 'the free-page database', "database 'meta'"... */
  name: string;
  /** The named database's name (null: the free-page or the main database, or a duplicate tree). */
  db: string | null;
  rec: DbRecord;
  free: boolean;
  main: boolean;
  branch: number;
  leaf: number;
  overflow: number;
  entries: number;
  /** A damaged page was stepped over (salvage): counts are not compared. */
  damaged: boolean;
}

interface Task {
  pgno: number;
  tree: Tree;
  depth: number;
  /** The page that names it (0: a meta page). */
  parent: number;
}

/** Damage found: the file, the page (and its byte offset), what is wrong. */
export class LmdbDamage extends Error {
  constructor(readonly file: string, readonly page: number, readonly offset: number, readonly what: string) {
    super(`${file} is damaged inside its B-tree: page ${page} (offset ${offset}): ${what}`);
  }
}

export interface VerifyStats {
  /** Pages checked (tree pages plus overflow pages). */
  pages: number;
  /** Bytes read. */
  bytes: number;
  /** Records (leaf entries) seen, all databases. */
  records: number;
  /** The snapshot (transaction id) checked. */
  txnid: number;
  /** Each named database's record count as LMDB recorded it (in the snapshot checked). */
  recorded: Map<string, number>;
}

export interface VerifyOptions {
  /** Salvage: every readable record of each named database; damaged pages are stepped over (each reported to `onDamage`). */
  onRecord?: (db: string, key: Buffer, value: Buffer) => void;
  onDamage?: (d: LmdbDamage) => void;
}

/**
 * Check the LMDB file `file` (whose meta pages `checkLmdbFile` found sound): throws LmdbDamage
 * at the first damage, unless `opts.onDamage` is given.
 */
export function verifyLmdb(file: string, opts: VerifyOptions = {}): VerifyStats {
  const fd = fs.openSync(file, 'r');
  try {
    return new Verifier(fd, file, opts).run();
  } finally {
    fs.closeSync(fd);
  }
}

/** lmdb-js's overlapping sync (a persistent environment flag); with it, lmdb-js opens with MDB_PREVSNAPSHOT. */
const MDB_OVERLAPPINGSYNC = 0x1000;

/** The boot id as lmdb-js reads it (mdb.c: strtoll of /proc/sys/kernel/random/boot_id, base 16: its first group). */
function bootId(): number {
  try {
    const m = /^[0-9a-f]+/i.exec(fs.readFileSync('/proc/sys/kernel/random/boot_id', 'latin1'));
    return m === null ? 0 : parseInt(m[0], 16);
  } catch {
    return 0;
  }
}

/**
 * Which meta a start opens (0, 1, or 2: the flushed copy), as mdb_env_pick_meta does: the
 * latest transaction, unless the environment uses overlapping sync and the latest was
 * written before this boot (the machine restarted since: its pages may never have reached
 * the disk), then the previous one, which lmdb-js rolls back to. (lmdb-js 3.5 never sets
 * that flag in the meta's mm_flags, so in practice it is the latest: test/store/lmdb-verify.)
 * Only that snapshot's pages are ever read: the other meta's own pages are free to be reused.
 */
function pickMeta(m0: Buffer, m1: Buffer, flushed: Buffer): number {
  const txn = (m: Buffer) => u64(m, M_TXNID);
  const prev = (m0.readUInt16LE(M_DBS + 4) & MDB_OVERLAPPINGSYNC) !== 0;
  const boot = prev ? bootId() : 0;
  const safe = process.env.LMDB_RESTORE === 'safe';
  const pick = (a: number, b: number, ms: Buffer[]): number => {
    const latest = txn(ms[a]) >= txn(ms[b]) ? a : b;
    if (!prev) return latest;
    if (txn(ms[b]) === 0) return a;
    const lb = u64(ms[latest], M_TXNID + 8);
    if ((lb !== 0 && lb === boot && !safe) || (ms[latest].readUInt16LE(M_DBS + 4) & MDB_OVERLAPPINGSYNC) === 0) return latest;
    return txn(ms[a]) > txn(ms[b]) ? b : a;
  };
  const ms = [m0, m1, flushed];
  const first = pick(0, 1, ms);
  return prev ? pick(first, 2, ms) : first;
}

class Verifier {
  private psize = 0;
  private filePages = 0;
  /** Pages past this (the snapshot's last page + 1, or the end of the file) are not LMDB's. */
  private limit = 0;
  private lastPg = 0;
  private seen: Uint8Array = new Uint8Array(0);
  private buf = Buffer.allocUnsafe(RUN_BYTES);
  private next: Task[] = [];
  private overflows: { pgno: number; pages: number; tree: Tree; parent: number }[] = [];
  private readonly stats: VerifyStats = { pages: 0, bytes: 0, records: 0, txnid: 0, recorded: new Map() };

  constructor(readonly fd: number, readonly file: string, readonly opts: VerifyOptions) {}

  run(): VerifyStats {
    this.psize = this.read(0, HDR + M_DBS + 4).readUInt32LE(HDR + M_DBS);
    const size = fs.fstatSync(this.fd).size;
    this.filePages = Math.floor(size / this.psize);
    if (this.psize < 512 || this.psize > 65536 || this.filePages < 2) throw new LmdbDamage(this.file, 0, 0, 'not an LMDB file (meta pages)');
    // MDB_meta of page 0, page 1, and lmdb-js's "flushed" copy half-way into page 0.
    const metaAt = [HDR, this.psize + HDR, HDR + (this.psize >> 1)];
    const metas = metaAt.map((at) => this.read(at, M_TXNID + 16));
    const m = pickMeta(metas[0], metas[1], metas[2]);
    this.snapshot(metas[m], m === 2 ? 'the flushed meta copy in page 0' : `meta page ${m}`);
    return this.stats;
  }

  /** Walk the trees of the meta `m`. */
  private snapshot(m: Buffer, which: string): void {
    this.lastPg = u64(m, M_LAST_PG);
    this.limit = Math.min(this.lastPg + 1, this.filePages);
    this.seen = new Uint8Array((this.filePages >> 3) + 1);
    this.seen[0] = 3; // the meta pages
    const txnid = u64(m, M_TXNID);
    this.stats.txnid = txnid;
    const trees = [
      this.tree('the free-page database', null, readDb(m, M_DBS), { free: true }),
      this.tree('the main database', null, readDb(m, M_DBS + DB_SIZE), { main: true }),
    ];
    for (const t of trees) this.root(t, 0, `${which} (transaction ${txnid})`);
    while (this.next.length > 0) {
      const level = this.next;
      this.next = [];
      this.level(level);
    }
    this.checkOverflows();
    for (const t of this.allTrees) this.counts(t);
    this.allTrees = [];
  }

  private allTrees: Tree[] = [];

  private tree(name: string, db: string | null, rec: DbRecord, kind: { free?: boolean; main?: boolean } = {}): Tree {
    const t: Tree = { name, db, rec, free: kind.free === true, main: kind.main === true, branch: 0, leaf: 0, overflow: 0, entries: 0, damaged: false };
    this.allTrees.push(t);
    return t;
  }

  /** Queue the root of `t`, named by page `parent`. */
  private root(t: Tree, parent: number, by: string): void {
    if (t.rec.root === INVALID) {
      if (t.rec.entries !== 0 || t.rec.depth !== 0) this.damage(parent, `${by}: ${t.name} has no root page but records ${t.rec.entries} records, depth ${t.rec.depth}`, t);
      return;
    }
    if (t.rec.depth < 1 || t.rec.depth > 32) return this.damage(parent, `${by}: ${t.name} has depth ${t.rec.depth}`, t);
    this.child(t, t.rec.root, 1, parent, `${by}: the root page of ${t.name}`);
  }

  /** Page `pgno`, at `depth` of tree `t`, named by page `parent`: inside the file, not reached before. */
  private child(t: Tree, pgno: number, depth: number, parent: number, what: string): void {
    if (!this.inside(t, pgno, 1, parent, what)) return;
    if (!this.claim(t, pgno, 1, parent, what)) return;
    this.next.push({ pgno, tree: t, depth, parent });
  }

  private inside(t: Tree, pgno: number, pages: number, parent: number, what: string): boolean {
    if (pgno < 2 || pages < 1 || pgno + pages > this.limit) {
      const run = pages === 1 ? `page ${pgno}` : `pages ${pgno}..${pgno + pages - 1}`;
      const where = pgno < 2 ? 'a meta page'
        : pgno + pages > this.filePages ? `past the end of the file (${this.filePages} pages of ${this.psize} bytes)`
          : `past the snapshot's last page ${this.lastPg}`;
      this.damage(parent, `${what} is ${run}, ${where}`, t);
      return false;
    }
    return true;
  }

  private claim(t: Tree, pgno: number, pages: number, parent: number, what: string): boolean {
    for (let p = pgno; p < pgno + pages; p++) {
      const bit = 1 << (p & 7);
      if (this.seen[p >> 3] & bit) {
        this.damage(parent, `${what} is page ${pgno}${pages > 1 ? ` (${pages} pages)` : ''}, but page ${p} is already part of a tree (a page used twice)`, t);
        return false;
      }
    }
    for (let p = pgno; p < pgno + pages; p++) this.seen[p >> 3] |= 1 << (p & 7);
    return true;
  }

  /** Read and check the pages of one level, in file order, in runs of adjacent pages. */
  private level(tasks: Task[]): void {
    tasks.sort((a, b) => a.pgno - b.pgno);
    const ps = this.psize;
    const maxRun = Math.max(1, Math.floor(RUN_BYTES / ps));
    for (let i = 0; i < tasks.length;) {
      const first = tasks[i].pgno;
      let j = i + 1;
      while (j < tasks.length && tasks[j].pgno - first < maxRun && tasks[j].pgno - tasks[j - 1].pgno <= GAP_PAGES) j++;
      const pages = tasks[j - 1].pgno - first + 1;
      const b = this.read(first * ps, pages * ps, this.buf);
      if (b.length < pages * ps) {
        // The file changed under us (or a read error): report the first page missing.
        const t = tasks[i + Math.floor(b.length / ps)] ?? tasks[i];
        this.damage(t.parent, `page ${t.pgno} cannot be read (end of file)`, t.tree);
      }
      const view = new DataView(b.buffer, b.byteOffset, b.length);
      for (let k = i; k < j; k++) {
        const off = (tasks[k].pgno - first) * ps;
        if (off + ps <= b.length) this.page(b, view, off, tasks[k]);
      }
      i = j;
    }
  }

  /** The page of `task`, at `b` in `p` (no subarray per page or node: this loop is the check's cost). */
  private page(p: Buffer, view: DataView, b: number, task: Task): void {
    const { pgno, tree: t, depth } = task;
    const ps = this.psize;
    const end = b + ps;
    this.stats.pages++;
    const bad = (what: string) => this.damage(pgno, `${what} (a page of ${t.name}, named by page ${task.parent})`, t);
    const own = u64(p, b);
    if (own !== pgno) return bad(`its header holds page number ${own}`);
    const flags = r16(p, b + 18);
    const kind = flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META);
    if ((kind !== P_BRANCH && kind !== P_LEAF) || (flags & ~P_KNOWN) !== 0 || (flags & P_SUBP) !== 0 || (kind === P_BRANCH && (flags & P_LEAF2) !== 0)) {
      return bad(`flags 0x${flags.toString(16)}: not a branch or leaf page`);
    }
    const leaf = kind === P_LEAF;
    if (leaf !== (depth === t.rec.depth)) return bad(`a ${leaf ? 'leaf' : 'branch'} page at depth ${depth} of a tree of depth ${t.rec.depth}`);
    const lower = r16(p, b + 20);
    const upper = r16(p, b + 22);
    if ((lower & 1) !== 0 || lower > upper || HDR + upper > ps) return bad(`free-space bounds lower ${lower}, upper ${upper} out of range`);
    const n = lower >> 1;
    if (leaf) t.leaf++;
    else t.branch++;
    if (flags & P_LEAF2) {
      const ks = r16(p, b + 16);
      if (ks !== t.rec.pad || HDR + n * ks > ps) return bad(`fixed-size keys of ${ks} bytes (the tree says ${t.rec.pad}) x ${n} do not fit`);
      t.entries += n;
      return;
    }
    if (!leaf && n < (t.free ? 1 : 2)) return bad(`a branch page with ${n} node${n === 1 ? '' : 's'}`);
    if (leaf && n === 0 && depth > 1) return bad('an empty leaf page inside a tree');
    const plain = !t.free && !t.main && this.opts.onRecord === undefined;
    // Keys in order (memcmp, LMDB's default comparator): out of order, lmdb-js's range reads
    // stop early (a load would miss records in silence). Branch node 0's key is not stored.
    const ordered = (t.rec.flags & (MDB_REVERSEKEY | MDB_INTEGERKEY)) === 0;
    let prevKey = -1;
    let prevLen = 0;
    // A damaged node is reported and stepped over: salvage keeps the page's other records.
    for (let i = 0; i < n; i++) {
      const ptr = r16(p, b + HDR + 2 * i);
      const at = b + ptr + HDR;
      if (ptr < upper || at + NODE > end) { bad(`node ${i} at offset ${ptr + HDR} is outside the page's node area (${HDR + upper}..${ps})`); continue; }
      const ksize = r16(p, at + 6);
      const key = at + NODE;
      const data = key + ksize;
      if (data > end) { bad(`node ${i}'s key (${ksize} bytes at offset ${key - b}) runs past the page`); continue; }
      if (leaf || i > 0) {
        if (ksize === 0) { bad(`node ${i} has an empty key`); continue; }
        if (ordered && prevKey >= 0 && compareBytes(p, view, prevKey, prevLen, key, ksize) >= 0) { bad(`node ${i}'s key is not after node ${i - 1}'s (keys out of order)`); continue; }
        prevKey = key;
        prevLen = ksize;
      }
      if (!leaf) {
        this.child(t, r32(p, at) + r16(p, at + 4) * 4294967296, depth + 1, pgno, `branch page ${pgno}'s node ${i} names a child that`);
        continue;
      }
      const nflags = r16(p, at + 4);
      const dsize = r32(p, at);
      if (nflags === 0 && plain) {
        // The common case: a small record in a named database.
        if (data + dsize > end) { bad(`node ${i}'s value (${dsize} bytes at offset ${data - b}) runs past the page`); continue; }
        continue;
      }
      if (nflags & F_BIGDATA) {
        if ((nflags & (F_SUBDATA | F_DUPDATA)) !== 0 || data + OVPAGE > end) { bad(`node ${i} (a big value) is malformed (flags 0x${nflags.toString(16)})`); continue; }
        const op = u64(p, data);
        const pages = u64(p, data + 16);
        if (dsize > pages * ps - HDR) { bad(`node ${i}'s value of ${dsize} bytes does not fit its ${pages} overflow pages`); continue; }
        if (!this.inside(t, op, pages, pgno, `page ${pgno}'s node ${i} (a value of ${dsize} bytes) has overflow pages that`)) continue;
        if (!this.claim(t, op, pages, pgno, `page ${pgno}'s node ${i} (overflow pages)`)) continue;
        this.overflows.push({ pgno: op, pages, tree: t, parent: pgno });
        t.overflow += pages;
        if (!plain) {
          const v = this.read(op * ps + HDR, dsize);
          if (v.length < dsize) { bad(`node ${i}'s value runs past the end of the file`); continue; }
          this.value(t, i, p.subarray(key, data), v, bad);
        }
        continue;
      }
      if (data + dsize > end) { bad(`node ${i}'s value (${dsize} bytes at offset ${data - b}) runs past the page`); continue; }
      if (nflags & F_SUBDATA) {
        if (dsize !== DB_SIZE) { bad(`node ${i} (a database record) holds ${dsize} bytes, not ${DB_SIZE}`); continue; }
        const rec = readDb(p, data);
        if (t.main && (nflags & F_DUPDATA) === 0) {
          const name = p.subarray(key, data).toString('utf8').replace(/\0$/, '');
          this.stats.recorded.set(name, rec.entries);
          this.root(this.tree(`database '${name}'`, name, rec), pgno, `page ${pgno}'s node ${i}`);
        } else if ((nflags & F_DUPDATA) !== 0 && !t.free && !t.main) {
          this.root(this.tree(`a duplicate tree of ${t.name}`, null, rec), pgno, `page ${pgno}'s node ${i}`);
        } else { bad(`node ${i} has database flags 0x${nflags.toString(16)} here`); continue; }
        continue;
      }
      if (nflags & F_DUPDATA) {
        const why = this.subpage(p.subarray(data, data + dsize));
        if (why !== null) bad(`node ${i}'s duplicates sub-page: ${why}`);
        continue;
      }
      if (!plain) this.value(t, i, p.subarray(key, data), p.subarray(data, data + dsize), bad);
    }
    if (leaf) {
      t.entries += n;
      this.stats.records += n;
    }
  }

  /** A leaf record: a free-list entry is checked, a named database's record handed out (salvage). */
  private value(t: Tree, i: number, key: Buffer, v: Buffer, bad: (what: string) => void): void {
    if (t.free) {
      const why = this.freeList(v);
      if (why !== null) bad(`node ${i}'s free-page list: ${why}`);
      return;
    }
    if (t.db !== null && this.opts.onRecord !== undefined) this.opts.onRecord(t.db, Buffer.from(key), Buffer.from(v));
  }

  /** A free-list entry (an IDL: count, then page numbers or -count, first page for a range): what LMDB merges. */
  private freeList(v: Buffer): string | null {
    if (v.length < 8) return `${v.length} bytes`;
    const count = u64(v, 0);
    if (count > (v.length - 8) / 8) return `says ${count} entries in ${v.length} bytes`;
    for (let i = 1; i <= count; i++) {
      const e = v.readBigInt64LE(8 * i);
      let first: number;
      let pages = 1;
      if (e <= 0n) {
        if (e === 0n) continue;
        if (i === count) return `entry ${i}: a range without its first page`;
        pages = Number(-e);
        first = u64(v, 8 * ++i);
      } else first = Number(e);
      if (first < 2 || first + pages > this.lastPg + 1) return `entry ${i}: page ${first}${pages > 1 ? ` (${pages} pages)` : ''} is outside pages 2..${this.lastPg}`;
    }
    return null;
  }

  /** A sub-page of duplicates, inside a leaf node. */
  private subpage(s: Buffer): string | null {
    if (s.length < HDR) return `${s.length} bytes`;
    const flags = s.readUInt16LE(18);
    if ((flags & (P_SUBP | P_LEAF)) !== (P_SUBP | P_LEAF)) return `flags 0x${flags.toString(16)}`;
    const lower = s.readUInt16LE(20);
    const upper = s.readUInt16LE(22);
    if ((lower & 1) !== 0 || lower > upper || HDR + upper > s.length) return `bounds lower ${lower}, upper ${upper}`;
    const n = lower >> 1;
    if (flags & P_LEAF2) return HDR + n * s.readUInt16LE(16) > s.length ? 'keys past its end' : null;
    for (let i = 0; i < n; i++) {
      const at = s.readUInt16LE(HDR + 2 * i) + HDR;
      if (at < HDR + upper || at + NODE > s.length || at + NODE + s.readUInt16LE(at + 6) > s.length) return `node ${i} outside it`;
    }
    return null;
  }

  /** The first page of each overflow run: its number, kind and length as the node says. */
  private checkOverflows(): void {
    const runs = this.overflows.sort((a, b) => a.pgno - b.pgno);
    this.overflows = [];
    const h = Buffer.allocUnsafe(HDR);
    for (const r of runs) {
      this.stats.pages++;
      const b = this.read(r.pgno * this.psize, HDR, h);
      const bad = (what: string) => this.damage(r.pgno, `${what} (the first overflow page of a value of ${r.tree.name}, named by page ${r.parent})`, r.tree);
      if (b.length < HDR) bad('cannot be read (end of file)');
      else if (u64(b, 0) !== r.pgno) bad(`its header holds page number ${u64(b, 0)}`);
      else if ((b.readUInt16LE(18) & (P_OVERFLOW | P_BRANCH | P_LEAF | P_META)) !== P_OVERFLOW) bad(`flags 0x${b.readUInt16LE(18).toString(16)}: not an overflow page`);
      else if (b.readUInt32LE(20) !== r.pages) bad(`it says ${b.readUInt32LE(20)} pages, its node ${r.pages}`);
    }
  }

  /** What the walk counted against what LMDB recorded for the tree. */
  private counts(t: Tree): void {
    if (t.damaged || t.rec.root === INVALID) return;
    const r = t.rec;
    const skipEntries = (r.flags & MDB_DUPSORT) !== 0 || t.db === null && !t.free && !t.main;
    const diff: string[] = [];
    if (!skipEntries && t.entries !== r.entries) diff.push(`${t.entries} records (${r.entries} recorded)`);
    if (t.branch !== r.branch) diff.push(`${t.branch} branch pages (${r.branch} recorded)`);
    if (t.leaf !== r.leaf) diff.push(`${t.leaf} leaf pages (${r.leaf} recorded)`);
    if (t.overflow !== r.overflow) diff.push(`${t.overflow} overflow pages (${r.overflow} recorded)`);
    if (diff.length > 0) this.damage(r.root, `${t.name} (root page ${r.root}) holds ${diff.join(', ')}: pages of it are damaged or lost`, t);
  }

  private damage(page: number, what: string, t: Tree | null): void {
    const d = new LmdbDamage(this.file, page, page * this.psize, what);
    if (t !== null) t.damaged = true;
    if (this.opts.onDamage === undefined) throw d;
    this.opts.onDamage(d);
  }

  private read(pos: number, len: number, into?: Buffer): Buffer {
    const b = into !== undefined && into.length >= len ? into : Buffer.allocUnsafe(len);
    let n = 0;
    while (n < len) {
      const r = fs.readSync(this.fd, b, n, len - n, pos + n);
      if (r === 0) break;
      n += r;
    }
    this.stats.bytes += n;
    return b.subarray(0, n);
  }
}
