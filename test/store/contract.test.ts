/**
 * In-process persistence tests: an Engine plus Persistence on a temporary directory, changed
 * through the Db API (the same calls the commands make), "restarted" by closing and opening a
 * new Engine on the same directory.
 *
 * The collection type here is TEST-ONLY (TestSet below; in this process it replaces the real
 * set codec, tested with the other real types in types-*.test.ts). It implements the plug-in
 * contract of src/store/codec.ts and proves it: one record per member, O(changes)
 * writes, whole-value storage when small, O(1) DEL / overwrite with background deletion,
 * RENAME/MOVE without rewriting records, and a full rewrite after a failed commit.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Engine } from '../../dist/engine/engine.js';
import { T } from '../../dist/engine/db.js';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { loadConfig } from '../../dist/config.js';
import { Persistence } from '../../dist/store/persistence.js';
import { registerCodec, type CollectionCodec, type ItemWriter, type StoredValue } from '../../dist/store/codec.js';

// ---------------------------------------------------------------- the test-only collection

const WHOLE_MAX = 8;

class TestSet implements StoredValue {
  readonly type = T.SET;
  sid = 0;
  readonly members = new Set<string>();
  /** Members changed since the last writeRecords (only while sid !== 0). */
  readonly log = new Set<string>();
  encoding(): string {
    return 'hashtable';
  }
  // What the engine's memory accounting reads of a set (engine/memory.ts setCharge).
  readonly isIntset = false;
  readonly isListpack = false;
  get size(): number {
    return this.members.size;
  }
  sampleLengths(k: number, size: (len: number) => number): number {
    let t = 0;
    let i = 0;
    for (const m of this.members) {
      if (i++ === k) break;
      t += size(m.length);
    }
    return t;
  }
  add(m: string): void {
    this.members.add(m);
    if (this.sid !== 0) this.log.add(m);
  }
  remove(m: string): void {
    this.members.delete(m);
    if (this.sid !== 0) this.log.add(m);
  }
}

const testSetCodec: CollectionCodec<TestSet> = {
  type: T.SET,
  encodeWhole(v) {
    if (v.members.size > WHOLE_MAX) return null;
    v.log.clear();
    const parts: Buffer[] = [];
    for (const m of v.members) {
      const len = Buffer.allocUnsafe(4);
      len.writeUInt32LE(m.length, 0);
      parts.push(len, Buffer.from(m, 'latin1'));
    }
    return Buffer.concat(parts);
  },
  size: (v) => v.members.size,
  writeRecords(v, w: ItemWriter, all) {
    const empty = Buffer.alloc(0);
    const list = all ? v.members : v.log;
    for (const m of list) {
      if (v.members.has(m)) w.put(Buffer.from(m, 'latin1'), empty);
      else w.del(Buffer.from(m, 'latin1'));
    }
    v.log.clear();
  },
  decodeWhole(b) {
    const v = new TestSet();
    for (let p = 0; p < b.length;) {
      const n = b.readUInt32LE(p);
      v.members.add(b.toString('latin1', p + 4, p + 4 + n));
      p += 4 + n;
    }
    return v;
  },
  loadBegin(_header, size) {
    const v = new TestSet();
    return {
      add: (sub) => v.members.add(sub.toString('latin1')),
      end() {
        assert.equal(v.members.size, size, 'metadata size matches the records');
        return v;
      },
    };
  },
};
registerCodec(testSetCodec);

// ---------------------------------------------------------------- harness

interface Node {
  eng: Engine;
  p: Persistence;
}

function open(dir: string, mode: 'always' | 'everysec' = 'everysec'): Node {
  const eng = new Engine(loadConfig(['--dir', dir, '--appendfsync', mode]), FAMILIES);
  eng.now = Date.now();
  const p = Persistence.open(eng, { dir, mode });
  // These tests read the key tables directly (not through lookups): load everything first
  // (the background load itself is tested in lazyload.test.ts).
  p.finishLoading();
  return { eng, p };
}

async function restart(n: Node, dir: string, mode: 'always' | 'everysec' = 'everysec'): Promise<Node> {
  await n.p.close();
  return open(dir, mode);
}

/** Let scheduled batches and background deletion finish. */
async function settle(n: Node): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await n.p.idle();
    await new Promise((r) => setTimeout(r, 5));
    if (n.p.info().includes('lmdb_gc_pending:0')) {
      await n.p.idle();
      return;
    }
  }
  throw new Error('background deletion did not finish');
}

function count(db: { getKeysCount(o?: object): number }): number {
  return db.getKeysCount({});
}

function makeSet(n: number, prefix = 'm'): TestSet {
  const v = new TestSet();
  for (let i = 0; i < n; i++) v.add(prefix + i);
  return v;
}

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-store-'));
});
after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function freshDir(name: string): string {
  const d = path.join(tmp, name);
  fs.mkdirSync(d);
  return d;
}

// ---------------------------------------------------------------- strings, TTLs, databases

describe('strings, TTLs and databases survive a restart', () => {
  it('keeps every string of every database with its TTL, and drops keys that expired while down', async () => {
    const dir = freshDir('strings');
    let n = open(dir);
    const { eng } = n;
    const bin = Buffer.from([0, 1, 2, 255, 13, 10]);
    eng.dbs[0].set('plain', Buffer.from('v0'));
    eng.dbs[0].set('bin\x00\xff', bin);
    eng.dbs[0].set('empty', Buffer.alloc(0));
    eng.dbs[5].set('plain', Buffer.from('v5'));
    eng.dbs[15].set('last', Buffer.from('v15'));
    const ttl = eng.dbs[0].setExpire(eng.dbs[0].set('ttl', Buffer.from('t')), Date.now() + 60_000)!;
    const short = eng.dbs[3].set('short', Buffer.from('s'));
    eng.dbs[3].setExpire(short, Date.now() + 150);
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    eng.dbs[1].set('big', big);
    await n.p.idle();
    const exp = ttl.exp;
    await new Promise((r) => setTimeout(r, 250)); // 'short' expires while "down"
    n = await restart(n, dir);
    const dbs = n.eng.dbs;
    assert.equal(dbs[0].get('plain')?.value.toString(), 'v0');
    assert.deepEqual(dbs[0].get('bin\x00\xff')?.value, bin);
    assert.equal((dbs[0].get('empty')?.value as Buffer).length, 0);
    assert.equal(dbs[5].get('plain')?.value.toString(), 'v5');
    assert.equal(dbs[15].get('last')?.value.toString(), 'v15');
    assert.equal(dbs[0].get('ttl')?.exp, exp, 'TTL kept to the millisecond');
    assert.equal(dbs[0].expires, 1);
    assert.equal(dbs[3].map.has('short'), false, 'expired while down: gone');
    assert.deepEqual(dbs[1].get('big')?.value, big);
    assert.match(n.p.info().join('\n'), /rdb_last_load_keys_expired:1\n/);
    // ...and deleted on disk by the first batch.
    await n.p.idle();
    n = await restart(n, dir);
    assert.match(n.p.info().join('\n'), /rdb_last_load_keys_expired:0\n/);
    assert.equal(n.eng.dbs.reduce((s, d) => s + d.size, 0), 7);
    await n.p.close();
  });

  it('persists deletes, overwrites, PERSIST and TTL changes, writing a key changed many times once', async () => {
    const dir = freshDir('changes');
    let n = open(dir);
    const db = n.eng.dbs[0];
    for (let i = 0; i < 100; i++) db.set('k' + i, Buffer.from('v' + i));
    await n.p.idle();
    const before = n.p.store.stats.puts;
    for (let i = 0; i < 50; i++) db.set('hot', Buffer.from('x' + i));
    db.delete('k1');
    db.set('k2', Buffer.from('new'));
    const e3 = db.get('k3')!;
    db.setExpire(e3, Date.now() + 100_000);
    const e4 = db.setExpire(db.get('k4')!, Date.now() + 100_000)!; // the live entry (it gained a TTL)
    db.persist(e4);
    await n.p.idle();
    // hot, k2, k3, k4 puts (+ k1 delete, counted apart): hot once despite 50 changes.
    assert.equal(n.p.store.stats.puts - before, 4);
    n = await restart(n, dir);
    const d = n.eng.dbs[0];
    assert.equal(d.get('hot')?.value.toString(), 'x49');
    assert.equal(d.get('k1'), undefined);
    assert.equal(d.get('k2')?.value.toString(), 'new');
    assert.ok(d.get('k3')!.exp > Date.now());
    assert.equal(d.get('k4')!.exp, 0);
    assert.equal(d.size, 100);
    await n.p.close();
  });

  it('persists FLUSHDB, FLUSHALL and SWAPDB in O(1) writes and deletes the old data in the background', async () => {
    const dir = freshDir('flush');
    let n = open(dir);
    const dbs = n.eng.dbs;
    for (let i = 0; i < 3000; i++) dbs[0].set('a' + i, Buffer.from('0'));
    for (let i = 0; i < 10; i++) dbs[1].set('b' + i, Buffer.from('1'));
    dbs[2].set('c', Buffer.from('2'));
    await n.p.idle();
    const st = n.p.store;
    const before = st.stats.puts + st.stats.dels;
    dbs[0].flush();
    dbs[0].set('after-flush', Buffer.from('x'));
    dbs[1].swapWith(dbs[2]);
    await n.p.idle();
    assert.ok(st.stats.puts + st.stats.dels - before < 1000, 'the flush did not delete 3000 records in the foreground');
    await settle(n);
    assert.equal(count(st.meta), 12, 'old namespace deleted in the background');
    n = await restart(n, dir);
    assert.equal(n.eng.dbs[0].size, 1);
    assert.ok(n.eng.dbs[0].has('after-flush'));
    assert.equal(n.eng.dbs[1].size, 1);
    assert.ok(n.eng.dbs[1].has('c'));
    assert.equal(n.eng.dbs[2].size, 10);
    // Changes made in the same turn as a SWAPDB land in the right database.
    n.eng.dbs[1].set('pre', Buffer.from('p'));
    n.eng.dbs[1].swapWith(n.eng.dbs[2]);
    n.eng.dbs[1].set('post', Buffer.from('q'));
    // FLUSHALL
    await n.p.idle();
    n = await restart(n, dir);
    assert.ok(n.eng.dbs[2].has('pre'));
    assert.ok(n.eng.dbs[1].has('post'));
    assert.equal(n.eng.dbs[1].size, 11);
    for (const db of n.eng.dbs) db.flush();
    await settle(n);
    assert.equal(count(n.p.store.meta), 0);
    n = await restart(n, dir);
    assert.equal(n.eng.dbs.reduce((s, d) => s + d.size, 0), 0);
    await n.p.close();
  });

  it('stores keys and values longer than an LMDB key', async () => {
    const dir = freshDir('long');
    let n = open(dir);
    const long1 = 'k'.repeat(5000);
    const long2 = 'k'.repeat(4999) + 'x'; // same prefix: the hash tells them apart
    n.eng.dbs[0].set(long1, Buffer.from('one'));
    n.eng.dbs[0].set(long2, Buffer.from('two'));
    const s = makeSet(20);
    s.add('m'.repeat(3000));
    n.eng.dbs[0].set('set-with-long-member', s);
    await n.p.idle();
    n = await restart(n, dir);
    assert.equal(n.eng.dbs[0].get(long1)?.value.toString(), 'one');
    assert.equal(n.eng.dbs[0].get(long2)?.value.toString(), 'two');
    assert.ok((n.eng.dbs[0].get('set-with-long-member')!.value as TestSet).members.has('m'.repeat(3000)));
    n.eng.dbs[0].delete(long1);
    await n.p.idle();
    n = await restart(n, dir);
    assert.equal(n.eng.dbs[0].get(long1), undefined);
    assert.equal(n.eng.dbs[0].size, 2);
    await n.p.close();
  });

  it('keeps records of other subsystems (REST tokens, ACL users)', async () => {
    const dir = freshDir('records');
    let n = open(dir);
    n.p.putRecord('acl', { users: [{ name: 'alice', pass: ['x'] }] });
    n.p.putRecord('rest', { token: 't1', readOnly: 't2' });
    await n.p.idle();
    n = await restart(n, dir);
    assert.deepEqual(n.p.getRecord('acl'), { users: [{ name: 'alice', pass: ['x'] }] });
    assert.deepEqual(n.p.getRecord('rest'), { token: 't1', readOnly: 't2' });
    assert.equal(n.p.getRecord('dbs'), undefined, 'internal records are not visible');
    await n.p.close();
  });
});

// ---------------------------------------------------------------- the collection contract

describe('collections stored one record per element (test-only collection)', () => {
  it('writes a constant number of records per change, whatever the size', async () => {
    const dir = freshDir('coll-size');
    let n = open(dir);
    const st = n.p.store;
    const big = makeSet(100_000);
    n.eng.dbs[0].set('big', big);
    const small = makeSet(WHOLE_MAX + 2);
    n.eng.dbs[0].set('small', small);
    await n.p.idle();
    assert.equal(count(st.items), 100_000 + WHOLE_MAX + 2);
    for (const [v, key] of [[big, 'big'], [small, 'small']] as const) {
      const p0 = st.stats.puts;
      const d0 = st.stats.dels;
      const b0 = st.stats.bytes;
      v.add('new-member');
      v.remove('m5');
      n.eng.dbs[0].modified(key);
      await n.p.idle();
      assert.equal(st.stats.puts - p0, 2, `${key}: one item + the metadata record`);
      assert.equal(st.stats.dels - d0, 1, `${key}: one item deleted`);
      assert.ok(st.stats.bytes - b0 < 200, `${key}: a few bytes, not the value (${st.stats.bytes - b0})`);
    }
    n = await restart(n, dir);
    const back = n.eng.dbs[0].get('big')!.value as TestSet;
    assert.equal(back.members.size, 100_000);
    assert.ok(back.members.has('new-member') && !back.members.has('m5'));
    // The reloaded value keeps its records and logs changes again.
    back.add('after-restart');
    n.eng.dbs[0].modified('big');
    const p0 = n.p.store.stats.puts;
    await n.p.idle();
    assert.equal(n.p.store.stats.puts - p0, 2);
    n = await restart(n, dir);
    assert.ok((n.eng.dbs[0].get('big')!.value as TestSet).members.has('after-restart'));
    await n.p.close();
  });

  it('stores a small value whole, switches to records when it grows and back when it shrinks', async () => {
    const dir = freshDir('coll-whole');
    let n = open(dir);
    const st = n.p.store;
    const v = makeSet(3);
    n.eng.dbs[0].set('s', v);
    await n.p.idle();
    assert.equal(v.sid, 0);
    assert.equal(count(st.items), 0);
    for (let i = 0; i < 20; i++) v.add('g' + i);
    n.eng.dbs[0].modified('s');
    await n.p.idle();
    assert.notEqual(v.sid, 0);
    assert.equal(count(st.items), 23);
    n = await restart(n, dir);
    const w = n.eng.dbs[0].get('s')!.value as TestSet;
    assert.equal(w.members.size, 23);
    for (let i = 0; i < 20; i++) w.remove('g' + i);
    n.eng.dbs[0].modified('s');
    await settle(n);
    assert.equal(w.sid, 0);
    assert.equal(count(n.p.store.items), 0, 'old records deleted in the background');
    n = await restart(n, dir);
    assert.deepEqual([...(n.eng.dbs[0].get('s')!.value as TestSet).members].sort(), ['m0', 'm1', 'm2']);
    await n.p.close();
  });

  it('deletes and overwrites a big collection in O(1), its records going in the background', async () => {
    const dir = freshDir('coll-del');
    let n = open(dir);
    const st = n.p.store;
    n.eng.dbs[0].set('a', makeSet(20_000, 'a'));
    n.eng.dbs[0].set('b', makeSet(20_000, 'b'));
    await n.p.idle();
    const w0 = st.stats.puts + st.stats.dels;
    n.eng.dbs[0].delete('a');
    n.eng.dbs[0].set('b', Buffer.from('now a string'));
    await n.p.idle();
    assert.ok(st.stats.puts + st.stats.dels - w0 < 1000, 'no per-element work in the foreground');
    await settle(n);
    assert.equal(count(st.items), 0);
    assert.equal(count(st.gc), 0);
    n = await restart(n, dir);
    assert.equal(n.eng.dbs[0].get('a'), undefined);
    assert.equal(n.eng.dbs[0].get('b')?.value.toString(), 'now a string');
    await n.p.close();
  });

  it('moves a collection between keys and databases without rewriting its records', async () => {
    const dir = freshDir('coll-move');
    let n = open(dir);
    const st = n.p.store;
    const v = makeSet(5000);
    n.eng.dbs[0].set('src', v);
    await n.p.idle();
    const sid = v.sid;
    const p0 = st.stats.puts + st.stats.dels;
    // RENAME src dst, then MOVE dst 4: what those commands do to the keyspace.
    n.eng.dbs[0].delete('src');
    n.eng.dbs[0].set('dst', v);
    n.eng.dbs[0].delete('dst');
    n.eng.dbs[4].set('dst', v);
    await settle(n);
    assert.equal(v.sid, sid);
    assert.ok(st.stats.puts + st.stats.dels - p0 <= 3, 'metadata records only');
    assert.equal(count(st.items), 5000, 'records kept');
    n = await restart(n, dir);
    assert.equal(n.eng.dbs[0].size, 0);
    assert.equal((n.eng.dbs[4].get('dst')!.value as TestSet).members.size, 5000);
    await n.p.close();
  });

  it('keeps a collection whose TTL is set, and drops one that expired while down with its records', async () => {
    const dir = freshDir('coll-ttl');
    let n = open(dir);
    const a = n.eng.dbs[0].set('a', makeSet(50));
    n.eng.dbs[0].setExpire(a, Date.now() + 100);
    const b = n.eng.dbs[0].set('b', makeSet(50));
    n.eng.dbs[0].setExpire(b, Date.now() + 100_000);
    await n.p.idle();
    await new Promise((r) => setTimeout(r, 200));
    n = await restart(n, dir);
    assert.equal(n.eng.dbs[0].map.has('a'), false);
    assert.ok(n.eng.dbs[0].get('b')!.exp > Date.now());
    await settle(n);
    assert.equal(count(n.p.store.items), 50);
    await n.p.close();
  });
});

// ---------------------------------------------------------------- write failures

describe('a failed commit', () => {
  const hasPrlimit = (() => {
    try {
      execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  /** Limit the size of files this process may write (EFBIG beyond it), or lift the limit. */
  function fsizeLimit(bytes: number | null): void {
    execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${bytes === null ? 'unlimited' : bytes}:unlimited`]);
  }

  it('refuses writes with MISCONF, keeps everything in memory, and retries until it works', { skip: !hasPrlimit && 'prlimit not installed' }, async () => {
    const dir = freshDir('fail');
    let n = open(dir);
    const v = makeSet(2000);
    n.eng.dbs[0].set('s', v);
    n.eng.dbs[0].set('str', Buffer.from('before'));
    await n.p.idle();
    const oldSid = v.sid;
    const size = fs.statSync(path.join(dir, 'lmdb', 'data.mdb')).size;
    fsizeLimit(size);
    try {
      for (let i = 0; i < 20_000; i++) v.add('more' + i);
      n.eng.dbs[0].modified('s');
      n.eng.dbs[0].set('str', Buffer.alloc(200_000, 1));
      await n.p.idle();
      assert.match(n.eng.writeDenied ?? '', /^MISCONF Errors writing to the AOF file: /);
      assert.match(n.p.info().join('\n'), /aof_last_write_status:err/);
      assert.equal(v.sid, 0, 'its change log was drained by the failed batch: rewritten whole next time');
    } finally {
      fsizeLimit(null);
    }
    // The retry (once a second) succeeds now.
    for (let i = 0; i < 40 && n.eng.writeDenied !== null; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(n.eng.writeDenied, null);
    assert.notEqual(v.sid, 0);
    assert.notEqual(v.sid, oldSid);
    await settle(n);
    assert.equal(count(n.p.store.items), 22_000, 'old records deleted, new ones complete');
    n = await restart(n, dir);
    assert.equal((n.eng.dbs[0].get('s')!.value as TestSet).members.size, 22_000);
    assert.equal((n.eng.dbs[0].get('str')!.value as Buffer).length, 200_000);
    await n.p.close();
  });
});
