/**
 * A damaged data directory never loses acknowledged writes in silence (issue 16, point 5).
 *
 * One server with `--appendfsync always` gets 3,000 acknowledged SETs (each its own journal
 * frame) and is killed with SIGKILL while LMDB still lacks the last frames; each case then
 * damages a copy of that directory and checks what a start says (message, exit code), what
 * `--check` and `--repair` say and do, and that every acknowledged write is still there,
 * except those a repair was explicitly asked to drop and reported:
 *
 *   - a flipped byte / a bad magic in a middle frame LMDB lacks: the start stops, naming the
 *     file, the offset and what follows; nothing is changed; --repair cuts there and says so;
 *   - the same damage in a frame LMDB already holds: the start skips it, says so, loses nothing;
 *   - a torn last frame: cut off, with a log line (bytes, records);
 *   - the journal emptied or deleted: the start stops (LMDB records the file it expects);
 *   - the journal replaced by a directory: the error names the file;
 *   - data.mdb cut to 8 KB, its meta pages zeroed, the qstash and search LMDB files cut: an
 *     error naming the file and exit code 1, never SIGBUS/SIGSEGV.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { startOurs, runOursToExit } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

const WRITES = 3000;
/** Most a refused start, --check or --repair may take (a loaded machine). */
const LIMIT = 60_000;
const ALWAYS = ['--appendfsync', 'always'];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-datadir-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const text = (b: Buffer) => b.toString('latin1');

interface Frame {
  file: string;
  offset: number;
  length: number;
  seq: number;
  /** User keys its records write (meta puts). */
  keys: string[];
}

/** The journal's frames, parsed here independently of the server's reader. */
function frames(dir: string): Frame[] {
  const out: Frame[] = [];
  const files = fs.readdirSync(dir).filter((n) => /^journal\.\d+$/.test(n)).sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)));
  for (const name of files) {
    const file = path.join(dir, name);
    const data = fs.readFileSync(file);
    let p = data.readUInt32LE(0) === 0x464a5352 ? 24 : 0; // 'RSJF' file header
    while (p + 20 <= data.length && data.readUInt32LE(p) === 0x314a5352) {
      const len = data.readUInt32LE(p + 4);
      const keys: string[] = [];
      for (let q = p + 20; q < p + 20 + len;) {
        const op = data[q];
        const kl = data.readUInt16LE(q + 1);
        const vl = op & 1 ? data.readUInt32LE(q + 3) : 0;
        const k = q + (op & 1 ? 7 : 3);
        if (op === 1) keys.push(data.subarray(k + 6, k + kl).toString('latin1')); // meta key: [ns u48][user key]
        q = k + kl + vl;
      }
      out.push({ file, offset: p, length: 20 + len, seq: data.readUInt32LE(p + 12), keys });
      p += 20 + len;
    }
  }
  return out;
}

/** The last journal frame LMDB holds (`sys journalSeq`), read from its file. */
function applied(dir: string): number {
  const env = open({ path: path.join(dir, 'lmdb'), readOnly: true, maxDbs: 8 });
  try {
    return env.openDB('sys', { encoding: 'msgpack' }).get('journalSeq') as number ?? 0;
  } finally {
    void env.close();
  }
}

function patch(file: string, offset: number, bytes: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, bytes, 0, bytes.length, offset);
  fs.closeSync(fd);
}

/** Start on `dir`, check that every key of `keys` holds its value and DBSIZE is `size`, stop. */
async function expectKeys(dir: string, keys: string[], size: number, args: string[] = []): Promise<string> {
  const s = await startOurs([...ALWAYS, ...args], {}, { dir });
  const c = await RawClient.connect(s.port);
  try {
    assert.equal(text(await c.call('DBSIZE')), `:${size}\r\n`);
    for (let i = 0; i < keys.length; i += 500) {
      const part = keys.slice(i, i + 500);
      const want = `*${part.length}\r\n` + part.map((k) => `$${k.length}\r\nv${k.slice(1)}\r\n`).join('');
      assert.equal(text(await c.call('MGET', ...part)), want);
    }
  } finally {
    c.close();
    await s.stop('SIGTERM');
  }
  return s.output();
}

describe('a damaged data directory', () => {
  const base = path.join(tmp, 'base');
  let all: Frame[] = [];
  let acked: string[] = [];
  let lmdbHas = 0;
  let n = 0;
  const copy = (name: string) => {
    const d = path.join(tmp, name);
    fs.cpSync(base, d, { recursive: true });
    return d;
  };
  /** Frame `f` as it is in the copy `dir`. */
  const at = (f: Frame, dir: string): Frame => ({ ...f, file: path.join(dir, path.basename(f.file)) });
  const keysUpTo = (seq: number) => all.filter((f) => f.seq <= seq).flatMap((f) => f.keys);

  before(async () => {
    fs.mkdirSync(base);
    const s = await startOurs(ALWAYS, {}, { dir: base });
    const c = await RawClient.connect(s.port);
    // One at a time: each acknowledged SET is its own frame. More until LMDB lacks at least
    // 100 frames (it applies the journal every 5 s), so that damage can hit frames only the
    // journal holds.
    for (let target = WRITES; ; target += 200) {
      for (; n < target; n++) assert.equal(text(await c.call('SET', `k${n}`, `v${n}`)), '+OK\r\n');
      const info = text(await c.call('INFO', 'persistence'));
      if (Number(/journal_frames_pending:(\d+)/.exec(info)![1]) >= 100) break;
    }
    c.close();
    await s.stop('SIGKILL');
    acked = Array.from({ length: n }, (_, i) => `k${i}`);
    all = frames(base);
    lmdbHas = applied(base);
    assert.ok(all.length >= WRITES && all[all.length - 1].seq - lmdbHas >= 50, `frames ${all.length}, LMDB has ${lmdbHas}`);
    assert.deepEqual(keysUpTo(Infinity).sort(), [...acked].sort(), 'each acknowledged SET is in a frame');
  });

  it('the undamaged copy starts with every acknowledged write (the baseline)', async () => {
    await expectKeys(copy('intact'), acked, n);
  });

  it('a flipped byte in a middle frame LMDB lacks: the start stops naming file, offset and what follows; --repair cuts there and reports it', async () => {
    const dir = copy('flip');
    const lmdbLast = all.findIndex((f) => f.seq === lmdbHas);
    const victim = at(all[lmdbLast + Math.floor((all.length - lmdbLast) / 2)], dir);
    const after = all.filter((f) => f.seq > victim.seq).length;
    patch(victim.file, victim.offset + 30, Buffer.from([fs.readFileSync(victim.file)[victim.offset + 30] ^ 0x01]));
    const before = fs.readFileSync(victim.file);

    const r = await runOursToExit(ALWAYS, dir, LIMIT);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, new RegExp(`${victim.file.replace(/[.]/g, '\\.')}: frame checksum mismatch at offset ${victim.offset} \\(after frame ${victim.seq - 1}\\), followed by ${after} intact frames`));
    assert.match(r.output, /--check/);
    assert.ok(before.equals(fs.readFileSync(victim.file)), 'a refused start changes nothing');

    const check = await runOursToExit(['--check', ...ALWAYS], dir, LIMIT);
    assert.equal(check.code, 1, check.output);
    assert.match(check.output, /DAMAGED: the journal is damaged before its last frame/);

    const rep = await runOursToExit(['--repair', ...ALWAYS], dir, LIMIT);
    assert.equal(rep.code, 0, rep.output);
    assert.match(rep.output, new RegExp(`cut at offset ${victim.offset}, after frame ${victim.seq - 1}: dropped ${after} intact frames`));
    const kept = fs.readdirSync(dir).filter((f) => f.startsWith(`${path.basename(victim.file)}.damaged-`));
    assert.equal(kept.length, 1, 'the whole damaged file is kept beside it');
    assert.ok(before.equals(fs.readFileSync(path.join(dir, kept[0]))));
    // Everything before the damage is there; what the repair dropped is what it reported.
    const keys = keysUpTo(victim.seq - 1);
    await expectKeys(dir, keys, keys.length);
  });

  it('a bad magic in a middle frame LMDB lacks: the start stops; put back, every write is there', async () => {
    const dir = copy('magic');
    const victim = at(all[all.length - 20], dir);
    const orig = fs.readFileSync(victim.file).subarray(victim.offset, victim.offset + 4);
    patch(victim.file, victim.offset, Buffer.from('XXXX'));
    const r = await runOursToExit(ALWAYS, dir, LIMIT);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, new RegExp(`journal\\.\\d+: bad frame magic at offset ${victim.offset} .*followed by 19 intact frames`));
    patch(victim.file, victim.offset, Buffer.from(orig));
    await expectKeys(dir, acked, n);
  });

  it('damage in a frame LMDB already holds is skipped, said, and loses nothing', async (t) => {
    if (lmdbHas < 3) return t.skip('LMDB applied nothing before the kill');
    const dir = copy('applied');
    const victim = at(all.find((f) => f.seq === Math.floor(lmdbHas / 2))!, dir);
    patch(victim.file, victim.offset + 30, Buffer.from([fs.readFileSync(victim.file)[victim.offset + 30] ^ 0x40]));
    const out = await expectKeys(dir, acked, n);
    assert.match(out, new RegExp(`frame checksum mismatch at offset ${victim.offset}: frames ${victim.seq}\\.\\.${victim.seq} skipped, as LMDB holds them already`));
  });

  it('a torn last frame is cut off with a log line saying how many bytes and records', async () => {
    const dir = copy('torn');
    const last = at(all[all.length - 1], dir);
    // The process died inside the write: the end of the frame never reached the file.
    patch(last.file, last.offset + 25, Buffer.alloc(last.length - 25));
    const out = await expectKeys(dir, acked.filter((k) => !last.keys.includes(k)), n - last.keys.length);
    assert.match(out, new RegExp(`journal\\.\\d+: the last frame, at offset ${last.offset}, is incomplete or damaged \\(\\d+ bytes, 0 records readable\\): cut off`));
  });

  for (const how of ['emptied', 'deleted'] as const) {
    it(`a journal ${how} while LMDB expects it: the start stops; --repair starts from what LMDB holds, saying what is lost`, async () => {
      const dir = copy(how);
      const file = at(all[all.length - 1], dir).file;
      if (how === 'emptied') fs.truncateSync(file, 0);
      else fs.rmSync(file);
      const r = await runOursToExit(ALWAYS, dir, LIMIT);
      assert.equal(r.code, 1, r.output);
      const what = how === 'emptied' ? 'is empty \\(0 bytes, no header\\)' : 'is missing';
      assert.match(r.output, new RegExp(`${file.replace(/[.]/g, '\\.')} ${what}: LMDB records it as the journal being written when the server stopped \\(LMDB holds frames up to ${lmdbHas};`));
      const rep = await runOursToExit(['--repair', ...ALWAYS], dir, LIMIT);
      assert.equal(rep.code, 0, rep.output);
      assert.match(rep.output, new RegExp(`writes acknowledged after frame ${lmdbHas} that were only in the missing journal are lost`));
      const keys = keysUpTo(lmdbHas);
      await expectKeys(dir, keys, keys.length);
    });
  }

  it('a journal replaced by a directory: the error names the file', async () => {
    const dir = copy('isdir');
    const file = at(all[all.length - 1], dir).file;
    fs.rmSync(file);
    fs.mkdirSync(file);
    const r = await runOursToExit(ALWAYS, dir, LIMIT);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, new RegExp(`${file.replace(/[.]/g, '\\.')}: EISDIR`));
  });

  it('damage inside the B-tree (every leaf page but the main root overwritten): the start stops naming the page; --check says the same', async () => {
    const dir = copy('leaves');
    const file = path.join(dir, 'lmdb', 'data.mdb');
    const data = fs.readFileSync(file);
    const psize = data.readUInt32LE(24 + 24); // meta page 0: page size in its free-list entry
    const metaAt = (pg: number) => pg * psize + 24;
    const txn = (pg: number) => data.readBigUInt64LE(metaAt(pg) + 128);
    const latest = txn(1) > txn(0) ? 1 : 0;
    const mainRoot = Number(data.readBigUInt64LE(metaAt(latest) + 72 + 40));
    let hit = 0;
    for (let pg = 2; pg < data.length / psize; pg++) {
      const at = pg * psize;
      if (pg === mainRoot || data.readBigUInt64LE(at) !== BigInt(pg) || (data.readUInt16LE(at + 18) & 0x02) === 0) continue;
      data.fill(0x5a, at, at + psize);
      hit++;
    }
    assert.ok(hit > 0);
    fs.writeFileSync(file, data);
    const r = await runOursToExit(ALWAYS, dir, LIMIT);
    assert.equal(r.code, 1, r.output);
    assert.ok(r.output.includes(`${file} is damaged inside its B-tree: page `), r.output);
    const c = await runOursToExit(['--check', ...ALWAYS], dir, LIMIT);
    assert.equal(c.code, 1, c.output);
    assert.ok(c.output.includes(`DAMAGED: ${file} is damaged inside its B-tree: page `), c.output);
  });

  for (const check of ['auto', 'no']) {
    it(`data.mdb shorter than its latest transaction says, but whole: ${check === 'auto' ? 'every B-tree page is checked' : '(--lmdb-check no) every record is read in a child process'} first, then it opens, with a warning`, async () => {
      // LMDB may leave a transaction's last pages unwritten (freed within it), so such a file is
      // not refused outright: every page its B-trees reach must be inside it (the start's check),
      // or without that check, every record is read in a child process (a SIGBUS kills the
      // child; the start then stops naming the file). Here the file is whole and only its meta
      // pages claim 3 more pages.
      const dir = copy(`short-whole-${check}`);
      const file = path.join(dir, 'lmdb', 'data.mdb');
      const data = fs.readFileSync(file);
      const psize = data.readUInt32LE(24 + 24);
      // Claim 3 pages past the end of the file, not past the meta's own last page: a SIGKILL
      // inside a transaction can leave the file longer than its last committed page says.
      const fileLast = BigInt(data.length / psize) - 1n;
      const was: bigint[] = [];
      for (const m of [0, 1]) {
        const at = m * psize + 24 + 120; // mm_last_pg
        const last = data.readBigUInt64LE(at);
        was.push(last);
        data.writeBigUInt64LE((last > fileLast ? last : fileLast) + 3n, at);
      }
      fs.writeFileSync(file, data);
      const out = await expectKeys(dir, acked, n, ['--lmdb-check', check]);
      const said = check === 'auto' ? 'every page of its B-trees is inside it' : 'every record was read without error';
      assert.ok(out.includes(`persistence: ${file} is `) && out.includes(`shorter than its latest transaction says; ${said}`),
        `file ${data.length} bytes (${psize}-byte pages), meta last pages were ${was.join(', ')}:\n${out}`);
    });
  }

  // [case, environment, damage, message, also run --check (slow: it reads every record)]
  const lmdbCases: [string, string, (file: string) => void, RegExp, boolean][] = [
    ['data.mdb cut to 8 KB', 'lmdb', (f) => fs.truncateSync(f, 8192), /is damaged: meta page \d \(transaction \d+\) names page \d+, but the file holds 2 pages of 4096 bytes \(cut short\?\)/, true],
    ['data.mdb meta pages zeroed', 'lmdb', (f) => patch(f, 0, Buffer.alloc(8192)), /is damaged: meta page 0: not a meta page/, false],
    ['data.mdb emptied', 'lmdb', (f) => fs.truncateSync(f, 0), /is damaged: it is empty \(0 bytes: truncated\?\)/, false],
    ['the qstash LMDB file cut to 8 KB', 'qstash', (f) => fs.truncateSync(f, 8192), /is damaged: .*cut short/, true],
    ['the search LMDB file cut to 8 KB', 'search', (f) => fs.truncateSync(f, 8192), /is damaged: .*cut short/, false],
  ];
  for (const [name, env, damage, message, check] of lmdbCases) {
    it(`${name}: a message naming the file and exit code 1, no SIGBUS/SIGSEGV${check ? '; --check says the same' : ''}`, async (t) => {
      const dir = copy(`lmdb-${name.replace(/\W+/g, '-')}`);
      const file = path.join(dir, env, 'data.mdb');
      if (!fs.existsSync(file)) return t.skip(`${env}/data.mdb was not created`);
      damage(file);
      const r = await runOursToExit(ALWAYS, dir, LIMIT);
      assert.equal(r.code, 1, `exit ${r.code}:\n${r.output}`);
      assert.ok(r.output.includes(`${file} is damaged`), r.output);
      assert.match(r.output, message);
      if (!check) return;
      const c = await runOursToExit(['--check', ...ALWAYS], dir, LIMIT);
      assert.equal(c.code, 1, c.output);
      assert.ok(c.output.includes(`DAMAGED: ${file} is damaged`), c.output);
    });
  }
});

// ------------------------------------------------------------------ damage deep inside an LMDB B-tree

interface Node {
  /** Offset in the file of the node header. */
  at: number;
  flags: number;
  key: Buffer;
  /** Offset in the file of its data. */
  data: number;
  /** A branch node's child page. */
  child: number;
}

/** The nodes of page `pg` (LMDB's layout, read here independently of the server's check). */
function nodesOf(data: Buffer, psize: number, pg: number): Node[] {
  const at = pg * psize;
  return Array.from({ length: data.readUInt16LE(at + 20) >> 1 }, (_, i) => {
    const o = at + data.readUInt16LE(at + 24 + 2 * i) + 24;
    const ks = data.readUInt16LE(o + 6);
    return { at: o, flags: data.readUInt16LE(o + 4), key: data.subarray(o + 8, o + 8 + ks), data: o + 8 + ks, child: data.readUInt32LE(o) + data.readUInt16LE(o + 4) * 2 ** 32 };
  });
}

/** The file's page size, and the root page and depth of each named database of its latest snapshot. */
function layout(data: Buffer): { psize: number; dbs: Map<string, { root: number; depth: number }> } {
  const psize = data.readUInt32LE(24 + 24);
  const txn = (pg: number) => data.readBigUInt64LE(pg * psize + 24 + 128);
  const meta = (txn(1) > txn(0) ? psize : 0) + 24;
  const mainRoot = Number(data.readBigUInt64LE(meta + 72 + 40));
  const dbs = new Map<string, { root: number; depth: number }>();
  for (const n of nodesOf(data, psize, mainRoot)) {
    dbs.set(n.key.toString('latin1').replace(/\0$/, ''), { root: Number(data.readBigUInt64LE(n.data + 40)), depth: data.readUInt16LE(n.data + 6) });
  }
  return { psize, dbs };
}

describe('damage deep inside an LMDB B-tree (meta pages and roots intact)', () => {
  const KEYS = 3000;
  const BIG = 3;
  const base = path.join(tmp, 'deep-base');
  const keys = Array.from({ length: KEYS }, (_, i) => `k${i}`);
  const bigValue = (b: number) => `v${'x'.repeat(100_000 + b)}`;
  let psize = 0;
  /** Leaf pages of the keyspace's `meta` database with the user keys they hold; its root (a branch page). */
  let leaves: { pg: number; keys: string[] }[] = [];
  let branch = 0;
  /** The leaf node of a big value (its overflow pages), and its key. */
  let big: { pg: number; node: number; key: string; first: number } | null = null;

  before(async () => {
    fs.mkdirSync(base);
    const s = await startOurs(ALWAYS, {}, { dir: base });
    const c = await RawClient.connect(s.port);
    for (let i = 0; i < KEYS; i += 500) {
      const args = keys.slice(i, i + 500).flatMap((k) => [k, `v${k.slice(1)}`]);
      assert.equal(text(await c.call('MSET', ...args)), '+OK\r\n');
    }
    for (let b = 0; b < BIG; b++) assert.equal(text(await c.call('SET', `big${b}`, bigValue(b))), '+OK\r\n');
    c.close();
    // A clean stop: LMDB holds everything, no journal is left.
    await s.stop('SIGTERM');
    const data = fs.readFileSync(path.join(base, 'lmdb', 'data.mdb'));
    const l = layout(data);
    psize = l.psize;
    const meta = l.dbs.get('meta')!;
    assert.equal(meta.depth, 2, 'the keyspace tree is a branch page over leaves');
    branch = meta.root;
    const user = (k: Buffer) => k.subarray(6).toString('latin1'); // [ns u48][user key]
    for (const n of nodesOf(data, psize, branch)) {
      const ns = nodesOf(data, psize, n.child);
      leaves.push({ pg: n.child, keys: ns.map((x) => user(x.key)) });
      ns.forEach((x, i) => {
        if ((x.flags & 0x01) !== 0 && big === null) big = { pg: n.child, node: i, key: user(x.key), first: Number(data.readBigUInt64LE(x.data)) };
      });
    }
    assert.ok(leaves.length >= 4 && big !== null, `${leaves.length} leaves, big value found: ${big !== null}`);
  });

  // [case, damage (file bytes, in place) -> the damaged page, what the message says]
  const cases: [string, (data: Buffer) => { page: number; lost: string[] }, RegExp][] = [
    ['a flipped byte in a leaf page header (its page number)', (data) => {
      const leaf = leaves[Math.floor(leaves.length / 2)];
      data[leaf.pg * psize] ^= 0x40;
      return { page: leaf.pg, lost: leaf.keys };
    }, /its header holds page number \d+ \(a page of database 'meta', named by page \d+\)/],
    ['a leaf page whose flags say branch (without the check: an LMDB assertion, SIGABRT)', (data) => {
      const leaf = leaves[3];
      data.writeUInt16LE(0x01, leaf.pg * psize + 18);
      return { page: leaf.pg, lost: leaf.keys };
    }, /a branch page at depth 2 of a tree of depth 2 \(a page of database 'meta', named by page \d+\)/],
    ['a node offset of a leaf page out of the page', (data) => {
      const leaf = leaves[1];
      data.writeUInt16LE(0xfff0, leaf.pg * psize + 24 + 2);
      return { page: leaf.pg, lost: [leaf.keys[1]] }; // the page's other records are read
    }, /node 1 at offset 65544 is outside the page's node area/],
    ['a bad child page number in a branch page', (data) => {
      const n = nodesOf(data, psize, branch)[2];
      data.writeUInt32LE(0x00fffff0, n.at); // mn_lo, mn_hi: page 16777200
      return { page: branch, lost: leaves[2].keys };
    }, /branch page \d+'s node 2 names a child that is page 16777200, past the end of the file \(\d+ pages of 4096 bytes\)/],
    ['an overflow page count past the end of the file', (data) => {
      const n = nodesOf(data, psize, big!.pg)[big!.node];
      data.writeUInt32LE(1_000_000, n.data + 16); // MDB_ovpage.op_pages
      return { page: big!.pg, lost: [big!.key] };
    }, /node \d+'s value of \d+ bytes does not fit|has overflow pages that is pages \d+\.\.\d+, past the end of the file/],
    ['an overflow page whose header is not one', (data) => {
      // The value after the header is intact: LMDB would read it, and so does --repair.
      data.fill(0, big!.first * psize, big!.first * psize + 24);
      return { page: big!.first, lost: [] };
    }, /its header holds page number 0 \(the first overflow page of a value of database 'meta'/],
  ];
  for (const [name, damage, message] of cases) {
    it(`${name}: the start stops naming the file and page (exit code 1, no signal); --check says the same; --repair keeps every other record`, async () => {
      const dir = path.join(tmp, `deep-${name.replace(/\W+/g, '-')}`);
      fs.cpSync(base, dir, { recursive: true });
      const file = path.join(dir, 'lmdb', 'data.mdb');
      const data = fs.readFileSync(file);
      const { page, lost } = damage(data);
      fs.writeFileSync(file, data);

      const r = await runOursToExit(ALWAYS, dir, LIMIT);
      assert.equal(r.code, 1, `exit ${r.code} (null: killed by a signal):\n${r.output}`);
      const head = `${file} is damaged inside its B-tree: page ${page} (offset ${page * psize}): `;
      assert.ok(r.output.includes(head), r.output);
      assert.match(r.output, message);
      assert.match(r.output, /--check/);

      const check = await runOursToExit(['--check', ...ALWAYS], dir, LIMIT);
      assert.equal(check.code, 1, check.output);
      assert.ok(check.output.includes(`DAMAGED: ${head}`), check.output);
      assert.match(check.output, message);

      const rep = await runOursToExit(['--repair', ...ALWAYS], dir, LIMIT);
      assert.equal(rep.code, 0, rep.output);
      assert.match(rep.output, new RegExp(`repaired: ${file.replace(/[.]/g, '\\.')} rebuilt from the records it still held: .*meta ${KEYS + BIG - lost.length} of ${KEYS + BIG}.*; ${lost.length} recorded records? lost with 1 damaged page`));
      assert.equal(fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith('data.mdb.damaged-')).length, 1, 'the damaged file is kept');
      const kept = keys.filter((k) => !lost.includes(k));
      const bigs = Array.from({ length: BIG }, (_, b) => `big${b}`).filter((k) => !lost.includes(k));
      await expectKeys(dir, kept, kept.length + bigs.length);
      const s = await startOurs(ALWAYS, {}, { dir });
      const c = await RawClient.connect(s.port);
      try {
        for (const k of bigs) assert.equal(text(await c.call('GET', k)), `$${bigValue(Number(k.slice(3))).length}\r\n${bigValue(Number(k.slice(3)))}\r\n`);
      } finally {
        c.close();
        await s.stop('SIGTERM');
      }
    });
  }
});
