import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ZSet } from '../../dist/engine/ds/zset.js';
import { ZMembers } from '../../dist/engine/ds/zset-members.js';
import { ZTree as Tree } from '../../dist/engine/ds/zset-tree.js';
import { rng } from '../helpers/rng.js';

/** A ZTree over its own ZMembers, driven by (score, member) as the tests were written. */
class PairTree extends Tree {
  constructor() {
    super(new ZMembers());
  }
  put(s: number, m: string): void {
    this.insert(s, m, this.mem.add(m, s));
  }
  del(s: number, m: string): string | null {
    const slot = this.delete(s, m);
    if (slot < 0) return null;
    const held = this.mem.memberAt(slot);
    this.mem.remove(slot);
    return held;
  }
  move(old: number, m: string, s: number): string | null {
    const slot = this.update(old, m, s);
    if (slot < 0) return null;
    this.mem.scores[slot] = s;
    return this.mem.memberAt(slot);
  }
  load(scores: number[], members: string[]): boolean {
    const slots = members.map((m, i) => this.mem.add(m, scores[i]));
    if (this.loadSorted(slots, slots.length)) return true;
    for (const slot of slots) this.mem.remove(slot);
    return false;
  }
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
  assert.equal(z.tree.length, sorted.length);
  z.tree.check();
  sorted.forEach(([m, s], i) => {
    assert.equal(z.rank(m), i, `rank of ${m} (seed ${seed})`);
    const n = z.at(i)!;
    assert.equal(n.member, m);
    assert.equal(n.score, s);
    assert.equal(n.rank, i);
  });
  // Walk forward and backward.
  let i = 0;
  for (let n = z.tree.first(); n; n = n.next()) assert.equal(n.member, sorted[i++][0]);
  assert.equal(i, sorted.length);
  i = sorted.length - 1;
  for (let n = z.tree.last(); n; n = n.prev()) assert.equal(n.member, sorted[i--][0]);
  assert.equal(i, -1);
  // Score ranges and counts.
  for (const [lo, loEx, hi, hiEx] of [[-3, true, 5, false], [-3, false, 5, true], [-100, false, 100, false], [7, false, 7, false], [30, false, 40, false], [5, false, -3, false]] as const) {
    const inRange = sorted.filter(([, s]) => (loEx ? s > lo : s >= lo) && (hiEx ? s < hi : s <= hi));
    const first = z.tree.firstInScore(lo, loEx, hi, hiEx);
    assert.equal(first?.member, inRange[0]?.[0], `first in ${lo} ${hi}`);
    const last = z.tree.lastInScore(lo, loEx, hi, hiEx);
    assert.equal(last?.member, inRange.at(-1)?.[0], `last in ${lo} ${hi}`);
    if (first) assert.equal(first.rank, z.rank(first.member));
    if (last) assert.equal(last.rank, z.rank(last.member));
    const count = Math.max(0, z.tree.countBelow(hi, !hiEx) - z.tree.countBelow(lo, loEx));
    assert.equal(count, inRange.length, `count in ${lo} ${hi}`);
  }
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

test('ZTree.loadSorted builds the same order as inserts, and the tree stays consistent under updates', async () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  for (const n of [0, 1, 2, 7, 300, 5000, 40000]) {
    const ref = new Map<string, number>();
    while (ref.size < n) ref.set('m' + Math.floor(r() * 1e6), Math.floor(r() * 100) - 50);
    const cmp = (a: [string, number], b: [string, number]) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    const sorted = [...ref].sort(cmp);
    const zsl = new PairTree();
    assert.equal(zsl.load(sorted.map((p) => p[1]), sorted.map((p) => p[0])), true);
    const check = (label: string) => {
      zsl.check();
      const exp = [...ref].sort(cmp);
      assert.equal(zsl.length, exp.length, label);
      exp.forEach(([m, s], i) => {
        assert.equal(zsl.rank(s, m), i, `${label}: rank of ${m} (seed ${seed})`);
        assert.equal(zsl.at(i)?.member, m, `${label}: at ${i} (seed ${seed})`);
      });
      let i = exp.length - 1;
      for (let x = zsl.last(); x; x = x.prev()) assert.equal(x.member, exp[i--][0], label);
      assert.equal(i, -1);
    };
    check(`loaded ${n}`);
    // Updates, then removal of most members (merges and root collapses), then regrowth.
    for (let i = 0; i < 2000; i++) {
      const m = n > 0 && r() < 0.5 ? sorted[Math.floor(r() * n)][0] : 'n' + Math.floor(r() * 3000);
      const old = ref.get(m);
      if (old !== undefined) zsl.del(old, m);
      if (r() < 0.7) {
        const s = Math.floor(r() * 100) - 50;
        zsl.put(s, m);
        ref.set(m, s);
      } else {
        ref.delete(m);
      }
    }
    check(`updated ${n}`);
    for (const [m, s] of [...ref]) {
      if (r() < 0.9) {
        assert.equal(zsl.del(s, m), m);
        ref.delete(m);
      }
    }
    check(`emptied ${n}`);
    for (let i = 0; i < 3000; i++) {
      const m = 'p' + Math.floor(r() * 1e6);
      if (ref.has(m)) continue;
      const s = r() < 0.5 ? i : -i; // runs at both ends: the append and prepend splits
      zsl.put(s, m);
      ref.set(m, s);
    }
    check(`regrown ${n}`);
    // Score changes, small (in place in the leaf) and large (moved), as ZINCRBY makes them.
    const keys = [...ref.keys()];
    for (let i = 0; i < 5000 && keys.length > 0; i++) {
      const m = keys[Math.floor(r() * keys.length)];
      const old = ref.get(m)!;
      const s = r() < 0.8 ? old + (r() < 0.5 ? 1 : -1) : Math.floor(r() * 10000) - 5000;
      if (s === old) continue;
      assert.equal(zsl.move(old, m, s), m);
      ref.set(m, s);
    }
    check(`rescored ${n}`);
  }
  // Pairs out of order are refused and leave the list empty.
  const bad = new PairTree();
  assert.equal(bad.load([1, 1], ['b', 'a']), false);
  assert.equal(bad.length, 0);
  assert.equal(bad.first(), null);
  // An absent pair is not deleted; rank of an absent member is -1.
  const t = new PairTree();
  t.put(1, 'a');
  assert.equal(t.del(1, 'b'), null);
  assert.equal(t.del(2, 'a'), null);
  assert.equal(t.rank(1, 'b'), -1);
});

test('ZTree lex ranges on equal scores', async () => {
  const t = new PairTree();
  const names: string[] = [];
  for (let i = 0; i < 5000; i++) names.push('k' + String(i).padStart(5, '0'));
  for (const m of [...names].reverse()) t.put(0, m);
  t.check();
  const b = (v: string, exclusive: boolean) => ({ inf: 0 as const, value: v, exclusive });
  const f = t.firstInLex(b('k01000', true), b('k02000', false))!;
  assert.equal(f.member, 'k01001');
  assert.equal(f.rank, 1001);
  const l = t.lastInLex(b('k01000', true), b('k02000', true))!;
  assert.equal(l.member, 'k01999');
  assert.equal(l.rank, 1999);
  assert.equal(t.firstInLex(b('k9', false), { inf: 1, value: '', exclusive: false }), null);
  assert.equal(t.lastInLex({ inf: -1, value: '', exclusive: false }, b('k', false)), null);
});
