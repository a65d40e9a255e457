import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ZSet } from '../../dist/engine/ds/zset.js';
import { rng } from '../helpers/rng.js';

/** memcmp order of latin1 strings (one char per byte), then score: Redis's zset order. */
const cmp = (a: [string, number], b: [string, number]) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/**
 * A member from a small pool (so adds, rescores and removes hit each other): binary bytes
 * 0-255, the empty member, prefixes of each other, and long ones (over 255 bytes: the arena's
 * long length form).
 */
function memberOf(r: () => number): string {
  const k = Math.floor(r() * 600);
  if (k === 0) return '';
  if (k < 20) return 'L'.repeat(250 + k) + String.fromCharCode(k * 13);
  if (k < 300) {
    let s = '';
    for (let i = 0; i < k % 4; i++) s += String.fromCharCode((k * 37 + i * 101) & 255);
    return s;
  }
  return 'm\x00' + String(k) + '\xff';
}

test('ZSet under thousands of random operations matches a sorted reference (binary members, tied scores)', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  const z = new ZSet();
  const ref = new Map<string, number>();
  const scoreOf = () => (r() < 0.6 ? Math.floor(r() * 5) : r() < 0.5 ? (r() - 0.5) * 1e6 : [-Infinity, Infinity, 1e-300, 0.5][Math.floor(r() * 4)]);
  const verify = (label: string) => {
    const sorted = [...ref].sort(cmp);
    assert.equal(z.size, sorted.length, label);
    z.tree.check();
    let i = 0;
    for (let c = z.tree.first(); c !== null; c = c.next(), i++) {
      assert.equal(c.member, sorted[i][0], `${label}: member at ${i} (seed ${seed})`);
      assert.ok(Object.is(c.score, sorted[i][1]) || (c.score === 0 && sorted[i][1] === 0), `${label}: score at ${i}`);
      assert.equal(c.rank, i);
    }
    assert.equal(i, sorted.length);
    for (const [m, s] of sorted) {
      assert.equal(z.score(m), s, `${label}: score of ${JSON.stringify(m)} (seed ${seed})`);
      assert.equal(z.rank(m), sorted.findIndex((p) => p[0] === m));
    }
    const viewed = new Map(z.dict);
    assert.equal(viewed.size, ref.size);
    for (const [m, s] of ref) assert.equal(viewed.get(m), s);
  };
  for (let step = 0; step < 20000; step++) {
    const m = memberOf(r);
    const op = r();
    if (op < 0.45) {
      const s = scoreOf();
      const old = z.set(m, s);
      assert.equal(old, ref.get(m), `set ${JSON.stringify(m)} (seed ${seed})`);
      ref.set(m, s);
    } else if (op < 0.6) {
      const old = z.score(m);
      assert.equal(old, ref.get(m));
      if (old !== undefined) {
        const s = r() < 0.7 ? old + 1 : scoreOf();
        z.rescore(m, old, s);
        ref.set(m, s);
      }
    } else if (op < 0.9) {
      assert.equal(z.remove(m), ref.delete(m), `remove (seed ${seed})`);
    } else if (op < 0.93 && z.size > 0) {
      // ZPOPMIN's way: the first pair, removed by its member.
      const c = z.tree.first()!;
      const m0 = c.member;
      assert.equal(z.remove(m0), true);
      ref.delete(m0);
    } else {
      assert.equal(z.score(m), ref.get(m));
    }
    if (step % 2500 === 0) verify(`step ${step}`);
  }
  verify('end');
  // A clone is equal and independent.
  const c = z.clone();
  c.tree.check();
  assert.deepEqual([...c.dict].sort(cmp), [...ref].sort(cmp));
  if (ref.size > 0) {
    c.remove([...ref.keys()][0]);
    assert.equal(z.size, ref.size);
  }
  // Emptied, then used again.
  for (const m of [...ref.keys()]) assert.equal(z.remove(m), true);
  assert.equal(z.size, 0);
  z.set('\x00\xff', 1);
  assert.equal(z.score('\x00\xff'), 1);
  z.tree.check();
});

test('ZSet member arena: compaction after many removals keeps every member and score', () => {
  const z = new ZSet();
  const n = 20000;
  for (let i = 0; i < n; i++) z.set('member:' + String(i).padStart(7, '0') + (i % 7 === 0 ? 'x'.repeat(300) : ''), i % 100);
  // Remove three in four (the arena's garbage passes half: compactions), re-add some.
  for (let i = 0; i < n; i++) if (i % 4 !== 0) assert.equal(z.remove('member:' + String(i).padStart(7, '0') + (i % 7 === 0 ? 'x'.repeat(300) : '')), true);
  for (let i = 0; i < 1000; i++) z.set('again:' + i, -i);
  z.tree.check();
  assert.equal(z.size, n / 4 + 1000);
  for (let i = 0; i < n; i += 4) assert.equal(z.score('member:' + String(i).padStart(7, '0') + (i % 7 === 0 ? 'x'.repeat(300) : '')), i % 100);
  for (let i = 0; i < 1000; i++) assert.equal(z.rank('again:' + i), 999 - i);
});

test('ZSet.fromLoaded refuses a member given twice, and keeps a loaded set lazy and in order', () => {
  assert.equal(ZSet.fromLoaded(['a', 'b', 'a'], new Float64Array([1, 2, 3]), 3), null);
  const z = ZSet.fromLoaded(['a', 'b', 'c'], new Float64Array([1, 2, 2]), 3)!;
  assert.notEqual(z.loadedPairs, null);
  assert.equal(z.score('b'), 2);
  assert.equal(z.rank('c'), 2);
  z.tree.check();
  const u = ZSet.fromLoaded(['b', 'a'], new Float64Array([1, 1]), 2)!; // out of order: built at once
  assert.equal(u.at(0)!.member, 'a');
});
