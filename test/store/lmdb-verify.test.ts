/**
 * The structural check of LMDB files (src/store/lmdb-verify.ts) on files made by lmdb-js here,
 * without a server: the free-page database's lists, and which snapshot is checked (the one
 * lmdb-js opens). The damage cases
 * through a real server start, `--check` and `--repair` are in datadir.test.ts.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { open } from 'lmdb';
import { verifyLmdb, LmdbDamage } from '../../dist/store/lmdb-verify.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-verify-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const HDR = 24;
/** MDB_meta offsets: dbs[2] at 24 (48 bytes each, root at +40), last_pg 120, txnid 128, boot_id 136. */
const meta = (data: Buffer, psize: number, m: number) => m * psize + HDR;
const txnOf = (data: Buffer, psize: number, m: number) => Number(data.readBigUInt64LE(meta(data, psize, m) + 128));

/** An environment as the store makes it, written in `txns` transactions of puts and deletes (so pages are freed). */
async function build(name: string, txns: number): Promise<string> {
  const dir = path.join(tmp, name);
  const env = open({ path: dir, maxDbs: 8, overlappingSync: true, eventTurnBatching: false, encoding: 'binary', keyEncoding: 'binary' } as any);
  const db = env.openDB('meta', { encoding: 'binary', keyEncoding: 'binary' } as any);
  for (let t = 0; t < txns; t++) {
    env.transactionSync(() => {
      for (let i = 0; i < 400; i++) db.putSync(Buffer.from(`key:${(i * 7919 + t * 13) % 2000}`), Buffer.from(`value ${t} ${i}`));
      for (let i = 0; i < 100; i++) db.removeSync(Buffer.from(`key:${(i * 31 + t) % 2000}`));
    });
  }
  await env.close();
  return path.join(dir, 'data.mdb');
}

/** The file's bytes, page size, the root page of its only named database ('meta'), and node `i` of page `pg` (its file offset). */
function keyspaceTree(file: string) {
  const data = fs.readFileSync(file);
  const psize = data.readUInt32LE(HDR + 24);
  const m = txnOf(data, psize, 1) > txnOf(data, psize, 0) ? 1 : 0;
  const mainRoot = Number(data.readBigUInt64LE(meta(data, psize, m) + 24 + 48 + 40));
  const node = (pg: number, i: number) => pg * psize + data.readUInt16LE(pg * psize + HDR + 2 * i) + HDR;
  const n0 = node(mainRoot, 0);
  return { data, psize, root: Number(data.readBigUInt64LE(n0 + 8 + data.readUInt16LE(n0 + 6) + 40)), node };
}

describe('the structural check of an LMDB file', () => {
  it('a sound file passes, with every record counted', async () => {
    const file = await build('sound', 20);
    const s = verifyLmdb(file);
    assert.ok(s.records > 1000 && s.pages > 10, JSON.stringify(s));
  });

  it('a free-page list claiming more entries than it holds is reported with its page (LMDB would read past it)', async () => {
    const file = await build('freelist', 20);
    const data = fs.readFileSync(file);
    const psize = data.readUInt32LE(HDR + 24);
    const m = txnOf(data, psize, 1) > txnOf(data, psize, 0) ? 1 : 0;
    const freeRoot = Number(data.readBigUInt64LE(meta(data, psize, m) + 24 + 40));
    assert.ok(freeRoot > 1 && freeRoot < data.length / psize, `free-page database root ${freeRoot}`);
    const at = freeRoot * psize;
    assert.equal(data.readUInt16LE(at + 18) & 0x02, 0x02, 'its root is a leaf');
    const node = at + data.readUInt16LE(at + HDR) + HDR;
    const dataAt = node + 8 + data.readUInt16LE(node + 6);
    data.writeBigUInt64LE(1_000_000n, dataAt); // the list's count
    fs.writeFileSync(file, data);
    assert.throws(() => verifyLmdb(file), (err: unknown) => err instanceof LmdbDamage && err.page === freeRoot &&
      /node 0's free-page list: says 1000000 entries in \d+ bytes \(a page of the free-page database/.test(err.message));
  });

  it('a branch page naming a page another branch node names (a page reached twice) is reported', async () => {
    const file = await build('twice', 20);
    const { data, psize, root, node } = keyspaceTree(file);
    assert.equal(data.readUInt16LE(root * psize + 18) & 0x01, 0x01, 'its root is a branch page');
    const child0 = data.readUInt32LE(node(root, 0));
    data.writeUInt32LE(child0, node(root, 1));
    fs.writeFileSync(file, data);
    assert.throws(() => verifyLmdb(file), (err: unknown) => err instanceof LmdbDamage && err.page === root &&
      new RegExp(`branch page ${root}'s node 1 names a child that is page ${child0}, but page ${child0} is already part of a tree`).test(err.message));
  });

  it('a leaf key emptied or out of order is reported (lmdb-js range reads would stop there: a load would miss records in silence)', async () => {
    const file = await build('order', 20);
    const { data, psize, root, node } = keyspaceTree(file);
    const leaf = data.readUInt32LE(node(root, 1));
    for (const [how, damage, said] of [
      ['emptied', (d: Buffer) => d.writeUInt16LE(0, node(leaf, 5) + 6), /node 5 has an empty key/],
      ['out of order', (d: Buffer) => { d[node(leaf, 5) + 8] = 0x00; }, /node 5's key is not after node 4's \(keys out of order\)/],
    ] as const) {
      fs.writeFileSync(file, data);
      const d = fs.readFileSync(file);
      damage(d);
      fs.writeFileSync(file, d);
      assert.throws(() => verifyLmdb(file), (err: unknown) => err instanceof LmdbDamage && err.page === leaf && said.test(err.message), how);
    }
  });

  it('the snapshot checked is the one lmdb-js opens: the latest, also after a reboot (this lmdb-js never records overlapping sync in the meta, so it never goes back)', async () => {
    const file = await build('reboot', 6);
    const data = fs.readFileSync(file);
    const psize = data.readUInt32LE(HDR + 24);
    const latest = txnOf(data, psize, 1) > txnOf(data, psize, 0) ? 1 : 0;
    const root = (m: number) => Number(data.readBigUInt64LE(meta(data, psize, m) + 24 + 48 + 40));
    assert.notEqual(root(latest), root(1 - latest), 'each snapshot has its own main database root');
    assert.equal(data.readUInt16LE(meta(data, psize, latest) + 28) & 0x1000, 0, 'mm_flags without MDB_OVERLAPPINGSYNC');
    // Garbage over the latest snapshot's own main root, and every meta written in another boot.
    data.fill(0x5a, root(latest) * psize, (root(latest) + 1) * psize);
    for (const at of [meta(data, psize, 0), meta(data, psize, 1), HDR + psize / 2]) data.writeBigUInt64LE(0x1234n, at + 136);
    fs.writeFileSync(file, data);
    assert.throws(() => verifyLmdb(file), (err: unknown) => err instanceof LmdbDamage && err.page === root(latest));
    // lmdb-js reads that page (in a child process: it dies of it or fails).
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `
      import { open } from 'lmdb';
      const env = open({ path: ${JSON.stringify(path.dirname(file))}, maxDbs: 8, overlappingSync: true, encoding: 'binary', keyEncoding: 'binary' });
      const db = env.openDB('meta', { encoding: 'binary', keyEncoding: 'binary' });
      let n = 0; for (const _ of db.getKeys({})) n++;
      console.log(n);
      await env.close();`], { encoding: 'utf8', cwd: process.cwd() });
    assert.ok(r.status !== 0 || r.signal !== null, `lmdb-js read the file: ${r.stdout}`);
  });
});
