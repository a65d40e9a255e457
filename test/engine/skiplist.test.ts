import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ZSet } from '../../dist/engine/ds/zset.js';

/** A seeded PRNG (mulberry32) so failures reproduce. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('ZSet ranks, ranges and order match a sorted reference under random updates', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  const z = new ZSet();
  const ref = new Map<string, number>();
  for (let i = 0; i < 20000; i++) {
    const m = 'm' + Math.floor(r() * 500);
    const op = r();
    if (op < 0.6) {
      const s = Math.floor(r() * 50) - 25;
      z.set(m, s);
      ref.set(m, s);
    } else {
      assert.equal(z.remove(m), ref.delete(m), `seed ${seed}`);
    }
  }
  const sorted = [...ref].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  assert.equal(z.size, sorted.length);
  assert.equal(z.zsl.length, sorted.length);
  sorted.forEach(([m, s], i) => {
    assert.equal(z.rank(m), i, `rank of ${m} (seed ${seed})`);
    const n = z.at(i)!;
    assert.equal(n.member, m);
    assert.equal(n.score, s);
  });
  // Walk forward and backward.
  let i = 0;
  for (let n = z.zsl.first(); n; n = n.next[0]) assert.equal(n.member, sorted[i++][0]);
  i = sorted.length - 1;
  for (let n = z.zsl.tail; n; n = n.prev) assert.equal(n.member, sorted[i--][0]);
  // Score ranges.
  const first = z.zsl.firstInScore(-3, true, 5, false);
  const expect = sorted.find(([, s]) => s > -3 && s <= 5);
  assert.equal(first?.member, expect?.[0]);
  const last = z.zsl.lastInScore(-3, true, 5, false);
  const expectLast = [...sorted].reverse().find(([, s]) => s > -3 && s <= 5);
  assert.equal(last?.member, expectLast?.[0]);
});

test('ZSet reports listpack until it outgrows 128 entries or 64-byte members', () => {
  const z = new ZSet();
  for (let i = 0; i < 128; i++) z.set('m' + i, i);
  assert.equal(z.encoding(), 'listpack');
  z.set('one-more', 1);
  assert.equal(z.encoding(), 'skiplist');
  const y = new ZSet();
  y.set('x'.repeat(65), 1);
  assert.equal(y.encoding(), 'skiplist');
});

test('SkipList.loadSorted builds the same list as inserts, and it stays consistent under updates', async () => {
  const { SkipList } = await import('../../dist/engine/ds/skiplist.js');
  const seed = Date.now() % 100000;
  const r = rng(seed);
  for (const n of [0, 1, 2, 7, 300, 5000]) {
    const ref = new Map<string, number>();
    while (ref.size < n) ref.set('m' + Math.floor(r() * 1e6), Math.floor(r() * 100) - 50);
    const cmp = (a: [string, number], b: [string, number]) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    const sorted = [...ref].sort(cmp);
    const zsl = new SkipList();
    assert.equal(zsl.loadSorted(sorted.map((p) => p[1]), sorted.map((p) => p[0])), true);
    const check = (label: string) => {
      const exp = [...ref].sort(cmp);
      assert.equal(zsl.length, exp.length, label);
      exp.forEach(([m, s], i) => {
        assert.equal(zsl.rank(s, m), i + 1, `${label}: rank of ${m} (seed ${seed})`);
        assert.equal(zsl.byRank(i + 1)?.member, m, `${label}: byRank ${i + 1} (seed ${seed})`);
      });
      let i = exp.length - 1;
      for (let x = zsl.tail; x; x = x.prev) assert.equal(x.member, exp[i--][0], label);
      assert.equal(i, -1);
    };
    check(`loaded ${n}`);
    for (let i = 0; i < 2000; i++) {
      const m = n > 0 && r() < 0.5 ? sorted[Math.floor(r() * n)][0] : 'n' + Math.floor(r() * 3000);
      const old = ref.get(m);
      if (old !== undefined) zsl.delete(old, m);
      if (r() < 0.7) {
        const s = Math.floor(r() * 100) - 50;
        zsl.insert(s, m);
        ref.set(m, s);
      } else {
        ref.delete(m);
      }
    }
    check(`updated ${n}`);
  }
  // Pairs out of order are refused and leave the list empty.
  const bad = new SkipList();
  assert.equal(bad.loadSorted([1, 1], ['b', 'a']), false);
  assert.equal(bad.length, 0);
  assert.equal(bad.first(), null);
});
