import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyTable, REMOVED, hashKey } from '../../dist/engine/keytable.js';
import { Entry } from '../../dist/engine/db.js';
import { rng } from '../helpers/rng.js';

const entry = (k: string) => new Entry(k, k, 0);

test('KeyTable: get/insert/remove/replace agree with a Map through growth, rehashing and shrinking', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  const t = new KeyTable();
  const ref = new Map<string, Entry>();
  for (let round = 0; round < 3; round++) {
    // Grow to a few thousand keys, then delete most of them (cron shrinks the table).
    for (let i = 0; i < 20000; i++) {
      const k = 'k' + Math.floor(r() * 5000);
      const e = t.get(k);
      assert.equal(e, ref.get(k), `seed ${seed}`);
      // The lookup from bytes (no key string) finds the same entry, mid-rehash included.
      const b = Buffer.from('..' + k + '.', 'latin1');
      assert.equal(t.getBytes(b, 2, b.length - 1), e, `seed ${seed}`);
      if (r() < 0.7) {
        if (e === undefined) {
          const n = entry(k);
          t.insert(n);
          ref.set(k, n);
        } else if (r() < 0.3) {
          // Db.setExpire swaps an Entry for a TimedEntry in place.
          const n = entry(k);
          t.replace(e, n);
          assert.equal(e.next, REMOVED);
          ref.set(k, n);
        }
      } else if (e !== undefined) {
        t.remove(e);
        assert.equal(e.next, REMOVED);
        ref.delete(k);
      }
      assert.equal(t.size, ref.size, `seed ${seed}`);
    }
    for (const [k, e] of ref) {
      if (r() < 0.95) {
        t.remove(e);
        ref.delete(k);
      }
    }
    t.cron(Date.now() + 1000);
    assert.equal(t.size, ref.size);
    for (const [k, e] of ref) assert.equal(t.get(k), e, `seed ${seed}`);
    assert.deepEqual([...t.keys()].sort(), [...ref.keys()].sort(), `seed ${seed}`);
  }
});

test('KeyTable: keys with equal hashes in a bucket chain, and the empty key', () => {
  const t = new KeyTable();
  const keys = ['', 'a', '\x00', '\x00\x00', '\xff', 'ab', 'ba'];
  for (let i = 0; i < 100; i++) keys.push('x'.repeat(i));
  for (const k of keys) t.insert(entry(k));
  for (const k of keys) assert.equal(t.get(k)?.key, k);
  for (const k of keys) assert.equal(t.getBytes(Buffer.from(k, 'latin1'), 0, k.length)?.key, k);
  assert.equal(t.get('zz'), undefined);
  assert.equal(t.getBytes(Buffer.from('zz'), 0, 2), undefined);
  // Same length, one byte apart (the comparison looks at every byte, the last one too).
  assert.equal(t.getBytes(Buffer.from('xxxxxy'), 0, 6), undefined);
  assert.equal(t.size, keys.length);
});

test('KeyTable: two keys with the same 32-bit hash stay apart (the entry keeps its hash; strings decide)', () => {
  // The hash is seeded per process: find a colliding pair now. Random keys, since sequential
  // ones ('c0', 'c1', ...) collide far less often than chance under this hash: with some seeds,
  // not once in 2M (a flaky failure). Random keys meet the birthday bound (~77k keys for even
  // odds; 2M leaves a chance of about e^-465 of no pair).
  const seen = new Map<number, string>();
  let pair: [string, string] | null = null;
  for (let i = 0; i < 2_000_000 && pair === null; i++) {
    const k = 'c' + Math.floor(Math.random() * 2 ** 52).toString(36) + ':' + i;
    const h = hashKey(k);
    const other = seen.get(h);
    if (other !== undefined) pair = [other, k];
    else seen.set(h, k);
  }
  assert.ok(pair !== null, 'no 32-bit collision among 2M keys');
  const [a, b] = pair;
  assert.equal(hashKey(a), hashKey(b));
  const t = new KeyTable();
  const ea = entry(a);
  t.insert(ea);
  assert.equal(t.get(b), undefined);
  const eb = entry(b);
  t.insert(eb);
  assert.equal(t.get(a), ea);
  assert.equal(t.get(b), eb);
  // Through a rehash (growth) and back.
  for (let i = 0; i < 5000; i++) t.insert(entry('g' + i));
  t.cron(Date.now() + 1000);
  assert.equal(t.get(a), ea);
  assert.equal(t.get(b), eb);
  const nb = entry(b);
  t.replace(eb, nb);
  assert.equal(t.get(b), nb);
  assert.equal(t.get(a), ea);
  t.remove(ea);
  assert.equal(t.get(a), undefined);
  assert.equal(t.get(b), nb);
  for (let i = 0; i < 5000; i++) t.remove(t.get('g' + i)!);
  t.cron(Date.now() + 1000);
  assert.equal(t.get(b), nb);
  assert.equal(t.size, 1);
});

test('KeyTable: a SCAN returns every key present from start to end, while keys come and go and the table resizes', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  for (let trial = 0; trial < 20; trial++) {
    const t = new KeyTable();
    const stable: string[] = [];
    const transient = new Map<string, Entry>();
    const nStable = 50 + Math.floor(r() * 2000);
    for (let i = 0; i < nStable; i++) {
      const k = 's' + i;
      stable.push(k);
      t.insert(entry(k));
    }
    const seen = new Set<string>();
    let cursor = 0;
    let steps = 0;
    do {
      cursor = t.scanStep(cursor, (e) => seen.add(e.key));
      // Churn between steps: adds (growth), deletes, and now and then a cron (shrink/rehash).
      const adds = Math.floor(r() * 40);
      for (let i = 0; i < adds; i++) {
        const k = 't' + Math.floor(r() * 100000);
        if (t.get(k) === undefined) {
          const e = entry(k);
          t.insert(e);
          transient.set(k, e);
        }
      }
      for (const [k, e] of transient) {
        if (r() < 0.3) {
          t.remove(e);
          transient.delete(k);
        }
      }
      if (r() < 0.1) t.cron(Date.now() + (r() < 0.5 ? 0 : 5));
      steps++;
      assert.ok(steps < 1e6, 'the scan ends');
    } while (cursor !== 0);
    for (const k of stable) assert.ok(seen.has(k), `key ${k} missed (seed ${seed}, trial ${trial})`);
  }
});

test('KeyTable: values() skips entries removed while iterating, random() returns members', () => {
  const t = new KeyTable();
  const all: Entry[] = [];
  for (let i = 0; i < 1000; i++) {
    const e = entry('k' + i);
    all.push(e);
    t.insert(e);
  }
  const seen = new Set<string>();
  for (const e of t.values()) {
    seen.add(e.key);
    // Remove some not-yet-visited entries (odd numbers) as we go.
    const n = Number(e.key.slice(1));
    if (n % 2 === 0 && all[n + 1].next !== REMOVED && !seen.has(all[n + 1].key)) t.remove(all[n + 1]);
  }
  for (const k of seen) assert.equal(t.get(k)?.key ?? k, k);
  for (const e of t.values()) assert.ok(seen.has(e.key), 'every remaining key was visited');
  const counts = new Map<string, number>();
  for (let i = 0; i < 20000; i++) {
    const e = t.random()!;
    assert.equal(t.get(e.key), e);
    counts.set(e.key, (counts.get(e.key) ?? 0) + 1);
  }
  assert.ok(counts.size > t.size * 0.9, 'random() reaches (nearly) every key');
});

test('KeyTable: a reserved table is not shrunk by cron before its keys are in (start-up load)', () => {
  const t = new KeyTable();
  t.reserve(100000);
  const size = t.bucketCount;
  // Most keys loaded in bulk are plain strings, which go to the compact tier: the table is
  // sized for an eighth of them (the compact tier's index for all).
  assert.ok(size >= 100000 / 8);
  t.cron(Date.now() + 10); // the server's cron runs while the loader is still reading
  for (let i = 0; i < 1000; i++) t.insert(entry('k' + i));
  t.cron(Date.now() + 10);
  assert.equal(t.bucketCount, size, 'no shrink while the reserve stands');
  t.endReserve();
  t.cron(Date.now() + 1000);
  assert.ok(t.bucketCount < size, 'sparse table shrinks once the load is over');
  for (let i = 0; i < 1000; i++) assert.equal(t.get('k' + i)?.key, 'k' + i);
  t.clear();
  t.reserve(100000);
  t.clear();
  t.cron(Date.now() + 10);
  assert.equal(t.bucketCount, 4);
});
