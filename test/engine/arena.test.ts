import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Arena, ARENA_MAX_KEY, ARENA_MAX_VALUE } from '../../dist/engine/arena.js';
import { hashKey, KeyTable, VIEW } from '../../dist/engine/keytable.js';
import { Entry } from '../../dist/engine/db.js';
import { RespWriter } from '../../dist/resp/writer.js';
import { rng } from '../helpers/rng.js';

/** A random latin1 string of length 0..max (all 256 byte values). */
function bytes(r: () => number, max: number): string {
  const n = Math.floor(r() * (max + 1));
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(Math.floor(r() * 256));
  return s;
}

/** Every live record's key -> [value, bits], from a full walk (each record exactly once). */
function walk(a: Arena): Map<string, [string | number, number]> {
  const out = new Map<string, [string | number, number]>();
  for (const r of a.records()) {
    const k = a.key(r);
    assert.ok(!out.has(k), `key ${JSON.stringify(k)} met twice in one walk without a change`);
    out.set(k, [a.value(r), a.bits(r)]);
  }
  return out;
}

test('Arena: add/find/setValue/remove agree with a Map, through index growth, shrinking and compaction', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  const a = new Arena();
  const ref = new Map<string, [string | number, number]>();
  const keys: string[] = [];
  for (let i = 0; i < 3000; i++) keys.push(i % 7 === 0 ? bytes(r, 20) : 'k' + i);
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 30000; i++) {
      const k = keys[Math.floor(r() * keys.length)];
      const h = hashKey(k);
      const at = a.find(k, h);
      // The lookup from bytes finds the same record.
      const b = Buffer.from('..' + k + '.', 'latin1');
      assert.equal(a.findBytes(b, 2, b.length - 1, h), at, `seed ${seed}`);
      const want = ref.get(k);
      assert.equal(at !== 0, want !== undefined, `seed ${seed} key ${JSON.stringify(k)}`);
      if (at !== 0) {
        assert.deepEqual([a.value(at), a.bits(at)], want, `seed ${seed}`);
        assert.equal(a.key(at), k);
      }
      const v: string | number = r() < 0.2 ? Math.floor((r() - 0.5) * 2 ** 53) : bytes(r, round === 3 ? ARENA_MAX_VALUE : 40);
      const bits = (Math.floor(r() * 2 ** 30) * (r() < 0.5 ? -1 : 1)) | 0;
      const op = r();
      if (at === 0) {
        if (op < 0.8 || round === 3) {
          a.add(h, k, 0, k.length, v, bits);
          ref.set(k, [v, bits]);
        }
      } else if (op < (round === 2 ? 0.8 : 0.4)) {
        a.remove(at, h);
        ref.delete(k);
      } else {
        const nr = a.setValue(at, h, v, bits);
        assert.equal(a.find(k, h), nr);
        ref.set(k, [v, bits]);
      }
    }
    assert.equal(a.size, ref.size);
    assert.deepEqual(walk(a), ref, `seed ${seed}`);
    while (!a.compactStep(Date.now() + 1000));
    assert.deepEqual(walk(a), ref, `seed ${seed} after compaction`);
  }
  // Everything removed: empty walk, no live bytes.
  for (const k of [...ref.keys()]) a.remove(a.find(k), hashKey(k));
  assert.equal(a.size, 0);
  assert.equal(a.liveBytes, 0);
  assert.deepEqual(walk(a), new Map());
});

test('Arena: values and keys at the length limits, integers, empty strings, all byte values', () => {
  const a = new Arena();
  const long = 'x'.repeat(ARENA_MAX_KEY);
  const all = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join('').slice(0, ARENA_MAX_VALUE);
  const cases: [string, string | number][] = [
    ['', ''],
    [long, all],
    ['int', -9007199254740991],
    ['zero', 0],
    ['\u0000\u00ff', 'v'],
  ];
  for (const [k, v] of cases) a.add(hashKey(k), k, 0, k.length, v, 7);
  for (const [k, v] of cases) {
    const r = a.find(k);
    assert.notEqual(r, 0, JSON.stringify(k));
    assert.equal(a.key(r), k);
    assert.equal(a.value(r), v);
    assert.equal(a.keyLength(r), k.length);
    assert.equal(a.isInt(r), typeof v === 'number');
    // The reply written from the chunk's bytes is String(v)'s bytes (an integer's digits).
    const w = new RespWriter();
    a.replyValue(r, w);
    const s = String(v);
    assert.deepEqual(w.take(), Buffer.concat([Buffer.from(`$${s.length}\r\n`), Buffer.from(s, 'latin1'), Buffer.from('\r\n')]));
  }
  // A key longer than the arena holds is simply not there.
  assert.equal(a.find(long + 'y'), 0);
});

test('Arena: a walk meets every record present throughout at least once while others change and compaction moves records', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  const a = new Arena();
  const stable = new Set<string>();
  for (let i = 0; i < 20000; i++) {
    const k = 's' + i;
    a.add(hashKey(k), k, 0, k.length, 'v' + i, 0);
    stable.add(k);
  }
  let churn = 0;
  const live: string[] = [];
  const seen = new Set<string>();
  let cursor = 0;
  do {
    for (let j = 0; j < 20 && (j === 0 || cursor !== 0); j++) cursor = a.scanStep(cursor, (x) => seen.add(a.key(x)));
    // Between steps: new keys and deletions (the index grows and shrinks), stable keys' values
    // resized (their records move), compaction.
    for (let j = 0; j < 10; j++) {
      const grow = r() < 0.5 || live.length === 0;
      if (grow) {
        for (let q = 0; q < 20; q++) {
          const k = 'c' + churn++;
          a.add(hashKey(k), k, 0, k.length, 'x'.repeat(Math.floor(r() * 30)), 0);
          live.push(k);
        }
      } else {
        for (let q = 0; q < 20 && live.length > 0; q++) {
          const old = live.splice(Math.floor(r() * live.length), 1)[0];
          a.remove(a.find(old), hashKey(old));
        }
      }
      const s = 's' + Math.floor(r() * 20000);
      assert.notEqual(a.setValue(a.find(s), hashKey(s), 'y'.repeat(Math.floor(r() * 60)), 0), 0);
    }
    a.compactStep(Date.now() + 5);
  } while (cursor !== 0);
  for (const k of stable) assert.ok(seen.has(k), `seed ${seed}: ${k} missed`);
});

test('Arena: random() and some() return live records; clear() empties; reserve() sizes the index', () => {
  const a = new Arena();
  assert.equal(a.random(), 0);
  a.reserve(100000);
  const held = a.indexBytes;
  for (let i = 0; i < 1000; i++) a.add(hashKey('k' + i), 'k' + i, 0, ('k' + i).length, i, 0);
  assert.equal(a.indexBytes, held, 'no index growth after reserve()');
  for (let i = 0; i < 500; i++) a.remove(a.find('k' + i), hashKey('k' + i));
  for (let i = 0; i < 200; i++) {
    const x = a.random();
    assert.ok(Number(a.key(x).slice(1)) >= 500);
  }
  // The removals shrank the index: its records move over a few slots per write (and in cron);
  // sampling consecutive slots finds 10 once they are dense again.
  a.migrate(Infinity);
  const out: number[] = [];
  assert.equal(a.some(10, out), 10);
  for (const x of out) assert.ok(Number(a.key(x).slice(1)) >= 500);
  a.clear();
  assert.equal(a.size, 0);
  assert.equal(a.find('k700'), 0);
  assert.deepEqual([...a.records()], []);
});

test('Arena: lookups, removals, value moves and walks while the index is resized a few slots at a time', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  const a = new Arena();
  const ref = new Map<string, string>();
  // Grow (each growth leaves an old index to migrate), then shrink the same way.
  for (const phase of ['grow', 'shrink'] as const) {
    for (let i = 0; i < 60000; i++) {
      const k = 'k' + Math.floor(r() * (phase === 'grow' ? 100000 : 40000));
      const h = hashKey(k);
      const at = a.find(k, h);
      assert.equal(at !== 0, ref.has(k), `seed ${seed}`);
      if (at !== 0) assert.equal(a.value(at), ref.get(k));
      if (phase === 'grow' ? at === 0 : r() < 0.2 && at === 0) {
        const v = 'v' + i;
        a.add(h, k, 0, k.length, v, 0);
        ref.set(k, v);
      } else if (at !== 0 && (phase === 'shrink' || r() < 0.1)) {
        a.remove(at, h);
        ref.delete(k);
      } else if (at !== 0) {
        const v = 'w'.repeat(Math.floor(r() * 40));
        a.setValue(at, h, v, 0);
        ref.set(k, v);
      }
      if (i % 5000 === 0) {
        // A full dictScan walk now meets every key (the old index included).
        const seen = new Set<string>();
        let c = 0;
        do c = a.scanStep(c, (x) => seen.add(a.key(x)));
        while (c !== 0);
        for (const key of ref.keys()) assert.ok(seen.has(key), `seed ${seed}: ${key} missed`);
      }
    }
    assert.equal(a.size, ref.size);
  }
  a.migrateUntil(Date.now() + 1000);
  assert.deepEqual(new Set([...a.records()].map((x) => a.key(x))), new Set(ref.keys()));
});

test('Arena: compaction frees chunks that are mostly garbage', () => {
  const a = new Arena();
  const v = 'v'.repeat(200);
  // ~20 MB of records: more than one 16 MB chunk.
  const n = 100000;
  for (let i = 0; i < n; i++) a.add(hashKey('k' + i), 'k' + i, 0, ('k' + i).length, v, 0);
  const before = a.heldBytes;
  for (let i = 0; i < n; i += 4) {
    for (let j = i; j < i + 3; j++) a.remove(a.find('k' + j), hashKey('k' + j));
  }
  assert.ok(a.garbageBytes > 10 * 1048576);
  while (!a.compactStep(Date.now() + 1000));
  assert.ok(a.heldBytes < before, `${a.heldBytes} < ${before}`);
  for (let i = 3; i < n; i += 4) assert.equal(a.value(a.find('k' + i)), v);
  assert.equal(a.size, n / 4);
});

// ---------------------------------------------------------------- the tier inside KeyTable

test('KeyTable with a compact tier: lookups move compact keys into the table; find/remove/SCAN see both tiers', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  const t = new KeyTable();
  const ref = new Map<string, string | number>();
  for (let i = 0; i < 40000; i++) {
    const k = 'k' + Math.floor(r() * 4000);
    const op = r();
    const e = t.find(k);
    assert.equal(e === undefined ? undefined : e.v, ref.get(k), `seed ${seed}`);
    if (e === undefined) {
      const v: string | number = r() < 0.3 ? i : 'v' + i;
      if (op < 0.7) assert.ok(t.addCompact(k, null, 0, 0, v, 0));
      else t.insert(new Entry(k, v, 0));
      ref.set(k, v);
    } else if (op < 0.3) {
      t.remove(e); // a view or an entry
      ref.delete(k);
    } else if (op < 0.5) {
      const got = t.get(k)!; // moves a compact key into the table
      assert.equal(got.next === VIEW, false);
      assert.equal(got.v, ref.get(k));
      assert.equal(t.find(k), got);
    } else {
      const b = Buffer.from(k, 'latin1'); // as a plain SET over the key: it moves into the table
      const got = t.getBytes(b, 0, b.length)!;
      assert.equal(got.next === VIEW, false);
      got.v = 'w' + i;
      ref.set(k, got.v);
    }
  }
  assert.equal(t.size, ref.size);
  const seen = new Map<string, string | number>();
  for (const e of t.values()) seen.set(e.key, e.v as string | number);
  assert.deepEqual(seen, ref, `seed ${seed}`);
  assert.ok(t.compactSize > 0 && t.compactSize < t.size);
});

test('KeyTable with a compact tier: a SCAN meets every key present throughout while keys move between tiers', () => {
  const seed = Date.now() % 100000;
  const r = rng(seed);
  const t = new KeyTable();
  const stable: string[] = [];
  for (let i = 0; i < 20000; i++) {
    const k = 's' + i;
    if (i % 3 === 0) t.insert(new Entry(k, 'v', 0));
    else t.addCompact(k, null, 0, 0, 'v', 0);
    stable.push(k);
  }
  const live: string[] = [];
  let churn = 0;
  let most = 0;
  const seen = new Set<string>();
  let cursor = 0;
  do {
    let n = 0;
    cursor = t.scanStep(cursor, (e) => {
      seen.add(e.key);
      n++;
    });
    most = Math.max(most, n);
    for (let j = 0; j < 5; j++) {
      t.get(stable[Math.floor(r() * stable.length)]); // compact -> table
      if (r() < 0.5 || live.length === 0) {
        for (let q = 0; q < 30; q++) {
          const k = 'c' + churn++;
          if (q % 2) t.addCompact(k, null, 0, 0, 'x', 0);
          else t.insert(new Entry(k, 'x', 0));
          live.push(k);
        }
      } else {
        for (let q = 0; q < 30 && live.length > 0; q++) t.remove(t.find(live.splice(Math.floor(r() * live.length), 1)[0])!);
      }
    }
    t.cron(Date.now() + 1);
  } while (cursor !== 0);
  for (const k of stable) assert.ok(seen.has(k), `seed ${seed}: ${k} missed`);
  // The tiers' sizes stay within a factor of each other: no step visits a huge slice.
  assert.ok(most < 400, `largest step ${most}`);
});

test('KeyTable: removing a view of a key that has moved into the table since removes the key', () => {
  const t = new KeyTable();
  t.addCompact('a', null, 0, 0, 'x', 0);
  t.addCompact('b', null, 0, 0, 'y', 0);
  const view = t.find('a')!;
  assert.equal(view.next, VIEW);
  const e = t.get('a')!; // moved into the table (an RDB snapshot's hook does this)
  assert.notEqual(e.next, VIEW);
  assert.equal(t.compactSize, 1);
  t.remove(view);
  assert.equal(t.find('a'), undefined);
  assert.equal(t.size, 1);
  // A view of a key that is gone altogether is refused (a bug in the caller).
  const vb = t.find('b')!;
  t.remove(t.find('b')!);
  assert.throws(() => t.remove(vb));
});
