/**
 * Unit tests of the collection data structures: encodings and their conversions (Redis 7.2+
 * rules; redis-server 7.0 cannot report listpack sets or lists), the chunked list against an
 * array model, the scan guarantee of DenseTable, clone(), listpack sizes and long doubles.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HashValue, hashCodec } from '../../dist/engine/ds/hash.js';
import { Packer } from '../../dist/store/packing.js';
import { lpDecodeText } from '../../dist/rdb/listpack.js';
import { SetValue } from '../../dist/engine/ds/set.js';
import { ListValue } from '../../dist/engine/ds/list.js';
import { DenseTable } from '../../dist/engine/ds/dense.js';
import { lpEntrySize, LP_HDR } from '../../dist/engine/ds/listpack.js';
import { LpWriter } from '../../dist/rdb/listpack.js';
import '../../dist/store/codec.js'; // first: the codec registry imports list-codec.js
import { listCodec } from '../../dist/store/list-codec.js';
import { ldAdd, formatHuman, parseLongDouble, ldIsFinite } from '../../dist/engine/ds/long-double.js';

const HL = { maxEntries: 512, maxValue: 64 };
const SL = { maxIntset: 512, maxEntries: 128, maxValue: 64 };
/** Redis 7.0's set limits (what the server uses): no listpack sets. */
const L70 = { maxIntset: 512, maxEntries: 0, maxValue: 0 };
const b = (s: string) => Buffer.from(s, 'latin1');

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('HashValue encodings', () => {
  it('a listpack hash is its listpack bytes; the store keeps them, and reads the form written before', () => {
    const h = new HashValue();
    const pairs = ['a', '1', 'b', 'two', '-5', '9223372036854775807', 'e', '', 'f', '12345678901234567890'];
    for (let i = 0; i < pairs.length; i += 2) h.set(pairs[i], pairs[i + 1], HL);
    const bytes = Buffer.from(h.listpackBytes!, 'latin1');
    assert.deepEqual(lpDecodeText(bytes), pairs);
    // Whole form: flags 3, then the bytes.
    const stored = Buffer.from(hashCodec.encodeWhole(h)!);
    assert.equal(stored[0], 3);
    const back = hashCodec.decodeWhole(stored);
    assert.equal(back.listpackBytes, h.listpackBytes);
    assert.equal(back.size, 5);
    // The form written before (flags 0, count, field and value strings) loads as the same listpack.
    const pk = new Packer();
    pk.reset(64);
    pk.u8(0);
    pk.varint(5);
    for (const x of pairs) pk.str(x);
    const old = hashCodec.decodeWhole(Buffer.from(pk.view()));
    assert.equal(old.encoding(), 'listpack');
    assert.equal(old.listpackBytes, h.listpackBytes);
    assert.equal(old.get('-5'), '9223372036854775807');
    assert.equal(old.get('f'), '12345678901234567890');
  });

  it('listpack edits give lpAppend / lpReplace / lpDelete bytes, reads agree with a Map model', () => {
    const r = rng(7);
    const h = new HashValue();
    const model = new Map<string, string>();
    const pool = ['0', '1', '-1', '127', '128', '-4096', '4095', '40000', '-9000000', '3000000000', '9223372036854775807',
      '9223372036854775808', '007', '-0', 'x', '', 'field', 'y'.repeat(63), 'z'.repeat(64)];
    for (let step = 0; step < 3000; step++) {
      const f = pool[Math.floor(r() * pool.length)];
      if (r() < 0.3) {
        assert.equal(h.delete(f), model.delete(f));
      } else {
        const v = pool[Math.floor(r() * pool.length)];
        const isNew = !model.has(f);
        model.set(f, v);
        assert.equal(h.set(f, v, HL), isNew);
      }
      assert.equal(h.encoding(), 'listpack');
      // The bytes decode to the model's pairs in order (Map order = append order, updates in place).
      const expect = [...model].flat();
      const lp = h.listpackBytes!;
      assert.deepEqual(lpDecodeText(Buffer.from(lp, 'latin1')), expect);
      for (const k of pool) assert.equal(h.get(k), model.get(k));
      assert.equal(h.size, model.size);
    }
  });

  it('hashes of 32-128 fields (field index) and HINCRBY in place agree with a Map model', () => {
    const r = rng(11);
    // Fields of every entry kind: 6-bit strings, integers of each width, 12-bit strings, empty.
    const pool: string[] = [''];
    for (let i = 0; i < 60; i++) pool.push(`f:${i}`);
    for (const v of [0, 1, -1, 127, 128, -4096, 4095, 40000, -9000000, 3000000000, 9007199254740993]) pool.push(String(v));
    pool.push('9223372036854775807', '-9223372036854775808', '9223372036854775808', '007', '-0');
    for (let i = 0; i < 60; i++) pool.push(`${'k'.repeat(60)}${i}`);
    const vals = ['0', '1', '127', '128', '4095', '4096', '32767', '32768', '8388607', '8388608', '2147483647',
      '2147483648', '-1', '-129', '-4097', '9007199254740990', 'x', '', 'y'.repeat(64)];
    let indexed = 0;
    for (let round = 0; round < 2; round++) {
      const h = new HashValue();
      const model = new Map<string, string>();
      for (let step = 0; step < 4000; step++) {
        const f = pool[Math.floor(r() * pool.length)];
        const op = r();
        if (op < 0.25) {
          assert.equal(h.delete(f), model.delete(f));
        } else if (op < 0.45) {
          const by = [1, -1, 100, 5000, -70000, 2 ** 31][Math.floor(r() * 6)];
          const cur = model.get(f);
          const sum = h.incrFlat(f, by, HL);
          if (cur === undefined) {
            // A new field is appended with `by` while the hash stays a small listpack.
            if (sum !== null) {
              assert.equal(sum, by);
              model.set(f, String(by));
            }
          } else if (!/^(0|-?[1-9][0-9]*)$/.test(cur) || !Number.isSafeInteger(Number(cur) + by)) {
            assert.equal(sum, null);
          } else {
            assert.equal(sum, Number(cur) + by);
            model.set(f, String(sum));
          }
        } else {
          const v = vals[Math.floor(r() * vals.length)];
          assert.equal(h.set(f, v, HL), !model.has(f));
          model.set(f, v);
        }
        if (h.encoding() !== 'listpack' || h.listpackBytes === null) break; // past 128 fields: a Map
        if (h.size >= 32) indexed++;
        if (step % 3 === 0) assert.deepEqual(lpDecodeText(Buffer.from(h.listpackBytes, 'latin1')), [...model].flat());
        // Several reads of each state: the index is built and used.
        for (let k = 0; k < 3; k++) {
          const g = pool[Math.floor(r() * pool.length)];
          assert.equal(h.get(g), model.get(g), g);
          assert.equal(h.has(g), model.has(g));
        }
        assert.equal(h.size, model.size);
      }
      for (const g of pool) assert.equal(h.get(g), model.get(g));
    }
    assert.ok(indexed > 2000, `steps at 32+ fields: ${indexed}`);
  });

  it('listpack until 512 fields, then hashtable for good', () => {
    const h = new HashValue();
    for (let i = 0; i < 512; i++) h.set(`f${i}`, 'v', HL);
    assert.equal(h.encoding(), 'listpack');
    h.set('one-more', 'v', HL);
    assert.equal(h.encoding(), 'hashtable');
    for (let i = 0; i < 500; i++) h.delete(`f${i}`);
    assert.equal(h.encoding(), 'hashtable');
    assert.equal(h.size, 13);
  });

  it('a field or value over 64 bytes converts', () => {
    const h = new HashValue();
    h.set('a', 'x'.repeat(64), HL);
    assert.equal(h.encoding(), 'listpack');
    h.set('b', 'x'.repeat(65), HL);
    assert.equal(h.encoding(), 'hashtable');
    const h2 = new HashValue();
    h2.convertForLength(65, HL);
    assert.equal(h2.encoding(), 'hashtable');
    const h3 = new HashValue();
    h3.convertForCount(513, HL);
    assert.equal(h3.encoding(), 'hashtable');
  });

  it('listpackex after a field-expiry command, TTLs survive conversion', () => {
    const h = new HashValue();
    h.set('a', '1', HL);
    h.markFieldExpiry();
    assert.equal(h.encoding(), 'listpackex');
    h.setFieldExpire('a', 1000);
    h.set('big', 'x'.repeat(100), HL);
    assert.equal(h.encoding(), 'hashtable');
    assert.equal(h.fieldExpire('a'), 1000);
    assert.equal(h.purgeExpired(999), 0);
    assert.equal(h.purgeExpired(1001), 1);
    assert.equal(h.has('a'), false);
    assert.equal(h.volatile, false);
  });

  it('clone is deep and keeps encoding and TTLs', () => {
    const h = new HashValue();
    h.set('a', '1', HL);
    h.setFieldExpire('a', 5000);
    const c = h.clone();
    c.set('b', '2', HL);
    c.persistField('a');
    assert.equal(h.size, 1);
    assert.equal(h.fieldExpire('a'), 5000);
    assert.equal(c.encoding(), 'listpackex');
    const big = new HashValue();
    for (let i = 0; i < 600; i++) big.set(String(i), 'v', HL);
    const bc = big.clone();
    assert.equal(bc.encoding(), 'hashtable');
    bc.delete('0');
    assert.equal(big.size, 600);
    assert.equal(bc.size, 599);
  });
});

describe('SetValue encodings (Redis 7.2+)', () => {
  it('intset, sorted, up to set-max-intset-entries', () => {
    const s = SetValue.create('5', 1, SL);
    for (const m of ['5', '-3', '100', '9223372036854775807', '-9223372036854775808', '0']) s.add(m, SL);
    assert.equal(s.encoding(), 'intset');
    assert.deepEqual(s.members(), ['-9223372036854775808', '-3', '0', '5', '100', '9223372036854775807']);
    assert.equal(s.has('05'), false);
    assert.equal(s.add('05', SL), true);
    assert.equal(s.encoding(), 'listpack');
    assert.deepEqual(s.members().slice(-2), ['9223372036854775807', '05']);
    const t = SetValue.create('1', 1, SL);
    for (let i = 0; i < 512; i++) t.add(String(i), SL);
    assert.equal(t.encoding(), 'intset');
    t.add('512', SL);
    assert.equal(t.encoding(), 'hashtable');
  });

  it('intset + string: listpack below 128 members, hashtable at 128', () => {
    const a = SetValue.create('0', 1, SL);
    for (let i = 0; i < 127; i++) a.add(String(i), SL);
    a.add('x', SL);
    assert.equal(a.encoding(), 'listpack');
    assert.equal(a.size, 128);
    a.add('y', SL);
    assert.equal(a.encoding(), 'hashtable');
    const c = SetValue.create('0', 1, SL);
    for (let i = 0; i < 128; i++) c.add(String(i), SL);
    c.add('x', SL);
    assert.equal(c.encoding(), 'hashtable');
    const d = SetValue.create('0', 1, SL);
    d.add('1', SL);
    d.add('x'.repeat(65), SL);
    assert.equal(d.encoding(), 'hashtable');
  });

  it('creation from the first member and the number of members added', () => {
    assert.equal(SetValue.create('1', 512, SL).encoding(), 'intset');
    assert.equal(SetValue.create('1', 513, SL).encoding(), 'hashtable');
    assert.equal(SetValue.create('1', 20, { maxIntset: 16, maxEntries: 128, maxValue: 64 }).encoding(), 'listpack');
    assert.equal(SetValue.create('a', 128, SL).encoding(), 'listpack');
    assert.equal(SetValue.create('a', 129, SL).encoding(), 'hashtable');
    const s = SetValue.create('a', 1, SL);
    s.add('a', SL);
    s.maybeConvert(129, SL);
    assert.equal(s.encoding(), 'hashtable');
  });

  it('SPOP keeping few members moves them into a smaller encoding', () => {
    const s = SetValue.create('a', 1, SL);
    for (let i = 0; i < 200; i++) s.add(`m${i}`, SL);
    assert.equal(s.encoding(), 'hashtable');
    const popped = s.popMany(190, SL);
    assert.equal(popped.length, 190);
    assert.equal(s.size, 10);
    assert.equal(s.encoding(), 'listpack');
    for (const m of popped) assert.equal(s.has(m), false);
    const i = SetValue.create('1', 1, SL);
    for (let k = 0; k < 100; k++) i.add(String(k), SL);
    i.popMany(98, SL);
    assert.equal(i.encoding(), 'intset');
    assert.equal(i.size, 2);
    const few = SetValue.create('1', 1, SL);
    for (let k = 0; k < 100; k++) few.add(String(k), SL);
    assert.equal(new Set(few.popMany(10, SL)).size, 10);
    assert.equal(few.size, 90);
  });

  it('random members are members; distinct samples are distinct', () => {
    const s = SetValue.create('a', 1, SL);
    for (let i = 0; i < 50; i++) s.add(`m${i}`, SL);
    for (let i = 0; i < 100; i++) assert.ok(s.has(s.random()));
    const d = s.randomDistinct(20);
    assert.equal(new Set(d).size, 20);
    // Listpack samples come out in listpack order.
    const order = s.members();
    const idx = d.map((m) => order.indexOf(m));
    assert.deepEqual(idx, [...idx].sort((x, y) => x - y));
  });

  it('clone is deep', () => {
    for (const first of ['1', 'a']) {
      const s = SetValue.create(first, 1, SL);
      s.add(first, SL);
      const c = s.clone();
      c.add('2', SL);
      assert.equal(s.size, 1);
      assert.equal(c.size, 2);
      assert.equal(c.encoding(), s.encoding());
    }
  });
});

describe('ListValue', () => {
  it('behaves like an array under random operations (and keeps lpBytes exact)', () => {
    for (const seed of [7, 8, 9]) {
      const r = rng(seed);
      const l = new ListValue();
      const model: string[] = [];
      const vals = ['a', 'bb', '1', '-5', '12345678901', '', 'x'.repeat(100), '9223372036854775808', 'y'.repeat(300)];
      // Seed 9 grows big (many chunks, packed interior); the others hover around small sizes.
      const pushBias = seed === 9 ? 0.7 : 0.5;
      for (let step = 0; step < 20000; step++) {
        const v = vals[Math.floor(r() * vals.length)] + (r() < 0.3 ? String(step % 7) : '');
        const op = r() < pushBias ? Math.floor(r() * 3) : 3 + Math.floor(r() * 6);
        if (op === 0) { l.pushHead(v); model.unshift(v); }
        else if (op === 1 || op === 2) { l.pushTail(v); model.push(v); }
        else if (op === 3 && model.length) { assert.equal(l.popHead(), model.shift()); }
        else if (op === 4 && model.length) { assert.equal(l.popTail(), model.pop()); }
        else if (op === 5) { const i = Math.floor(r() * (model.length + 1)); l.insert(i, v); model.splice(i, 0, v); }
        else if (op === 6 && model.length) { const i = Math.floor(r() * model.length); l.removeAt(i); model.splice(i, 1); }
        else if (op === 7 && model.length) { const i = Math.floor(r() * model.length); l.set(i, v); model[i] = v; }
        else if (op === 8 && model.length && r() < 0.2) {
          const count = Math.floor(r() * 5) - 2;
          const target = model[Math.floor(r() * model.length)];
          const removed = l.removeEqual(target, b(target), count);
          let n = 0;
          const limit = count === 0 ? Infinity : Math.abs(count);
          if (count >= 0) {
            for (let i = 0; i < model.length && n < limit;) { if (model[i] === target) { model.splice(i, 1); n++; } else i++; }
          } else {
            for (let i = model.length - 1; i >= 0 && n < limit; i--) if (model[i] === target) { model.splice(i, 1); n++; }
          }
          assert.equal(removed, n);
        }
        if (r() < 0.05) l.shrinkCheck(-2); // back to flat when small (conversions both ways)
        assert.equal(l.length, model.length);
        if (step % 500 === 0 || step === 19999) {
          for (let i = 0; i < model.length; i++) assert.equal(l.get(i), model[i], `seed ${seed} step ${step} index ${i}`);
          const fwd: string[] = [];
          if (model.length) l.scan(0, model.length - 1, (e) => { fwd.push(e as string); });
          assert.deepEqual(fwd, model);
          const back: string[] = [];
          if (model.length) l.scan(model.length - 1, 0, (e) => { back.push(e as string); });
          assert.deepEqual(back, model.slice().reverse());
          let bytes = LP_HDR;
          for (const m of model) bytes += lpEntrySize(b(m));
          assert.equal(l.lpBytes, bytes);
          const c = l.clone();
          c.pushTail('clone');
          assert.equal(l.length, model.length);
        }
      }
    }
  });

  it('long lists: head pushes (room below the first chunk), queues both ways, middle edits between them', () => {
    const r = rng(21);
    const l = new ListValue();
    const model: string[] = [];
    const check = (what: string) => {
      assert.equal(l.length, model.length, what);
      for (let i = 0; i < model.length; i += 97) assert.equal(l.get(i), model[i], `${what} index ${i}`);
      if (model.length) assert.equal(l.get(model.length - 1), model[model.length - 1], what);
      const fwd: string[] = [];
      if (model.length) l.scan(0, model.length - 1, (e) => { fwd.push(e as string); });
      assert.deepEqual(fwd, model, what);
    };
    // LPUSH only: thousands of chunks, the room below them regrown many times.
    for (let i = 0; i < 60000; i++) { l.pushHead(`h${i}`); model.unshift(`h${i}`); }
    check('after head pushes');
    // Middle edits (they compact the chunks) between head pushes.
    for (let k = 0; k < 50; k++) {
      const i = Math.floor(r() * model.length);
      l.insert(i, `i${k}`); model.splice(i, 0, `i${k}`);
      for (let j = 0; j < 200; j++) { l.pushHead(`p${k}.${j}`); model.unshift(`p${k}.${j}`); }
      const d = Math.floor(r() * model.length);
      l.removeAt(d); model.splice(d, 1);
      l.set(k, `s${k}`); model[k] = `s${k}`;
    }
    check('after middle edits');
    // RPUSH + LPOP (the free slots below the first chunk are given back), LPUSH + RPOP.
    for (let i = 0; i < 80000; i++) {
      l.pushTail(`t${i}`); model.push(`t${i}`);
      assert.equal(l.popHead(), model.shift());
      if (i % 10000 === 0) check(`queue tail->head ${i}`);
    }
    for (let i = 0; i < 80000; i++) {
      l.pushHead(`q${i}`); model.unshift(`q${i}`);
      assert.equal(l.popTail(), model.pop());
    }
    check('queue head->tail');
    assert.equal(l.removeEqual('q79999', b('q79999'), 0), 1);
    model.splice(model.indexOf('q79999'), 1);
    check('after LREM');
    const c = l.clone();
    assert.equal(c.length, l.length);
    assert.equal(c.get(0), model[0]);
    // Drained from both ends, then used again.
    while (model.length) { assert.equal(l.popHead(), model.shift()); if (model.length) assert.equal(l.popTail(), model.pop()); }
    assert.equal(l.length, 0);
    for (let i = 0; i < 1000; i++) { l.pushHead(`z${i}`); model.unshift(`z${i}`); }
    check('refilled');
  });

  it('big elements stay Buffers; pushes and pops alternating at chunk boundaries', () => {
    const l = new ListValue();
    const big = Buffer.alloc(20000, 0x61);
    for (let i = 0; i < 1000; i++) l.pushTail(String(i));
    l.insert(500, big);
    assert.ok((l.get(500) as Buffer).equals(big));
    assert.equal(l.get(501), '500');
    for (let k = 0; k < 300; k++) { l.pushTail('t'); l.popTail(); l.pushHead('h'); l.popHead(); }
    for (let i = 0; i < 1000; i++) assert.equal(l.get(i < 500 ? i : i + 1), String(i));
    assert.equal(l.removeEqual(null, big, 0), 1);
    assert.equal(l.length, 1000);
  });

  it('flat while one quicklist node holds it (7.0 _quicklistNodeAllowInsert), chunked past it, flat again at half a node', () => {
    const flat = (l: InstanceType<typeof ListValue>) => l.listpack !== null;
    assert.equal(new ListValue().encoding(), 'quicklist');
    // fill -2 (8 KB): a push goes in while node bytes + element length + 8 <= 8192.
    const l = new ListValue();
    l.growCheck(8000, 1, -2);
    l.pushTail('a'.repeat(8000)); // 7 + 5 + 8000 + 2 = 8014 bytes
    assert.equal(l.listpack!.length, 8014);
    l.pushHead('b'.repeat(170)); // 8014 + 170 + 8 = 8192
    assert.equal(flat(l), true);
    const l2 = l.clone();
    l.pushTail('c'); // 8014 + 173 + 1 + 8 > 8192
    assert.equal(flat(l), false);
    assert.deepEqual([l.get(0), l.get(1), l.get(2)], ['b'.repeat(170), 'a'.repeat(8000), 'c']);
    l2.insert(1, 'c'); // the same rule for LINSERT
    assert.equal(flat(l2), false);
    assert.equal(l2.get(1), 'c');
    // LSET changes the node in place whatever it grows to (7.0 does not split for it).
    const s = new ListValue();
    for (let i = 0; i < 70; i++) s.pushTail('x'.repeat(100));
    s.set(0, 'y'.repeat(4000));
    assert.equal(flat(s), true);
    assert.equal(s.get(0), 'y'.repeat(4000));
    // By count (fill 4): four elements, then chunked; flat again at two.
    const c = new ListValue();
    for (let i = 0; i < 4; i++) {
      c.growCheck(1, 1, 4);
      c.pushTail('a');
    }
    assert.equal(flat(c), true);
    c.growCheck(1, 1, 4);
    c.pushTail('a');
    assert.equal(flat(c), false);
    c.popTail();
    c.popTail();
    c.shrinkCheck(4);
    assert.equal(flat(c), false);
    c.popTail();
    c.shrinkCheck(4);
    assert.equal(flat(c), true);
    assert.equal(c.listpack, '\x0d\x00\x00\x00\x02\x00\x81a\x02\x81a\x02\xff');
    const big = new ListValue();
    for (let i = 0; i < 3000; i++) {
      big.growCheck(1, 1, -2);
      big.pushTail('x');
    }
    assert.equal(flat(big), false); // 3 bytes per entry
    while (big.lpBytes > 4096) big.popHead();
    big.shrinkCheck(-2);
    assert.equal(flat(big), true);
    assert.equal(big.listpack!.length, big.lpBytes);
    const cl = big.clone();
    cl.pushTail('y');
    assert.equal(cl.length, big.length + 1);
    assert.equal(flat(cl), true);
    // A bulk load is flat when tail pushes make one node.
    const ld = ListValue.forLoad();
    for (let i = 0; i < 10; i++) ld.pushTail(String(i * 1000));
    ld.loadDone(-2);
    assert.equal(flat(ld), true);
    assert.equal(ld.get(9), '9000');
  });

  it('the flat form is the listpack lpAppend builds, whatever the edits', () => {
    const r = rng(11);
    const vals = ['a', '7', '-1', '4095', '-4097', '32767', '8388607', '2147483647', '2147483648', '-9223372036854775808',
      '9223372036854775807', '9223372036854775808', '007', '+1', '', 'é', 'z'.repeat(63), 'z'.repeat(64), 'w'.repeat(4095), 'w'.repeat(4096)];
    const ref = new LpWriter();
    for (let round = 0; round < 300; round++) {
      const l = new ListValue();
      l.growCheck(0, 0, -5);
      const model: string[] = [];
      for (let k = 0; k < 12; k++) {
        const v = vals[Math.floor(r() * vals.length)];
        const op = Math.floor(r() * 6);
        if (op === 0) { l.pushHead(v); model.unshift(v); }
        else if (op <= 2) { l.pushTail(v); model.push(v); }
        else if (op === 3 && model.length) { const i = Math.floor(r() * model.length); l.set(i, v); model[i] = v; }
        else if (op === 4 && model.length > 2) { l.trim(1, 1); model.shift(); model.pop(); }
        else if (op === 5 && model.length) { const t = model[0]; const n = l.removeEqual(t, b(t), -1); assert.equal(n, 1); model.splice(model.lastIndexOf(t), 1); }
      }
      if (l.listpack === null) continue;
      ref.start();
      for (const m of model) ref.str(b(m));
      assert.equal(l.listpack, ref.finish().toString('latin1'), `round ${round}`);
      const back: string[] = [];
      if (model.length) l.scan(model.length - 1, 0, (e) => { back.push(typeof e === 'string' ? e : e.toString('latin1')); });
      assert.deepEqual(back, model.slice().reverse());
    }
  });

  it('store codec: a flat list is stored as its listpack; records of earlier versions still load; a bad listpack is refused', () => {
    const l = new ListValue();
    l.pushTail('a');
    l.pushTail('12');
    const whole = listCodec.encodeWhole(l)!;
    assert.equal(whole[0], 2);
    assert.equal(whole.subarray(1).toString('latin1'), l.listpack);
    const back = listCodec.decodeWhole(whole);
    assert.equal(back.listpack, l.listpack);
    assert.equal(back.length, 2);
    // Earlier versions: [flags (1 = listpack)][varint count]([varint length][bytes])...
    for (const flags of [0, 1]) {
      const old = listCodec.decodeWhole(Buffer.from([flags, 2, 1, 0x61, 2, 0x31, 0x32]));
      assert.equal(old.listpack, l.listpack);
    }
    const bad = Buffer.from(whole);
    bad[bad.length - 2] |= 0x80; // a back-length's continuation bit
    assert.throws(() => listCodec.decodeWhole(bad));
    // A list past one node is stored as records, and comes back chunked.
    const big = new ListValue();
    for (let i = 0; i < 1000; i++) big.pushTail('e'.repeat(20) + i);
    assert.equal(big.listpack, null);
    assert.equal(listCodec.encodeWhole(big), null);
  });

  it('listpack entry sizes', () => {
    assert.equal(lpEntrySize(b('a')), 3); // 1 header + 1 byte + backlen
    assert.equal(lpEntrySize(b('127')), 2); // 7-bit uint
    assert.equal(lpEntrySize(b('-1')), 3); // 13-bit int
    assert.equal(lpEntrySize(b('4096')), 4); // 16-bit int
    assert.equal(lpEntrySize(b('9223372036854775807')), 10); // 64-bit int
    assert.equal(lpEntrySize(b('9223372036854775808')), 21); // a string of 19 digits
    assert.equal(lpEntrySize(b('01')), 4); // not canonical: a string
    assert.equal(lpEntrySize(b('x'.repeat(63))), 65);
    assert.equal(lpEntrySize(b('x'.repeat(64))), 67); // 2-byte header
    assert.equal(lpEntrySize(b('x'.repeat(126))), 130); // 128 bytes of entry: 2-byte backlen
    assert.equal(lpEntrySize(b('x'.repeat(5000))), 5007);
  });
});

describe('DenseTable scan guarantee', () => {
  it('members present for the whole scan are returned, whatever changes in between', () => {
    const r = rng(11);
    for (let round = 0; round < 200; round++) {
      const t = new DenseTable(true);
      let next = 0;
      for (let i = 0, n = Math.floor(r() * 300); i < n; i++) t.set(`k${next++}`, '');
      const initial = new Set(t.keys());
      const removed = new Set<string>();
      const seen = new Set<string>();
      let cursor = 0;
      do {
        cursor = t.scan(cursor, 1 + Math.floor(r() * 20), (i) => seen.add(t.keyAt(i)));
        for (let k = Math.floor(r() * 10); k > 0; k--) {
          if (r() < 0.5 && t.size > 0) {
            const victim = t.keyAt(t.randomIndex());
            t.delete(victim);
            removed.add(victim);
          } else {
            t.set(`k${next++}`, '');
          }
        }
      } while (cursor !== 0);
      for (const k of initial) if (!removed.has(k)) assert.ok(seen.has(k), `round ${round}: ${k} missed`);
    }
  });
});

describe('DenseTable against a Map model', () => {
  it('setBytes (HSET from the request bytes) makes the entries set() makes', () => {
    const r = rng(9);
    const t = new DenseTable(true);
    const model = new Map<string, string>();
    // Binary keys and values (any byte, NULs), in-place same-length rewrites, appended longer
    // ones (over the 32-byte JS copy), compactions; set() and setBytes() mixed on the same keys.
    const str = (n: number) => Array.from({ length: n }, () => String.fromCharCode(Math.floor(r() * 256))).join('');
    const keys = Array.from({ length: 600 }, (_, i) => (i % 3 === 0 ? str(1 + (i % 40)) : `f${i}`));
    for (let step = 0; step < 30000; step++) {
      const k = keys[Math.floor(r() * keys.length)];
      const op = r();
      if (op < 0.6) {
        const v = str([0, 1, 5, 31, 32, 33, 100, 300][Math.floor(r() * 8)]);
        const pad = Math.floor(r() * 4);
        const buf = Buffer.concat([Buffer.alloc(pad, 0xee), b(k), Buffer.alloc(pad, 0xdd), b(v), Buffer.alloc(pad, 0xcc)]);
        const ks = pad;
        const vs = 2 * pad + k.length;
        const isNew = op < 0.3 ? t.setBytes(buf, ks, ks + k.length, vs, vs + v.length) : t.set(k, v);
        assert.equal(isNew, !model.has(k));
        model.set(k, v);
      } else if (op < 0.8) {
        assert.equal(t.delete(k), model.delete(k));
      } else {
        assert.equal(t.get(k), model.get(k));
      }
      assert.equal(t.size, model.size);
    }
    for (const [mk, mv] of model) assert.equal(t.get(mk), mv);
    for (let i = 0; i < t.size; i++) assert.equal(model.get(t.keyAt(i)), t.valAt(i));
  });

  it('set/get/delete with growth, tombstones and shrinking', () => {
    const r = rng(5);
    const t = new DenseTable(true);
    const model = new Map<string, string>();
    // Values of varying length: in-place rewrites, appended replacements, compactions.
    const val = (step: number) => 'v'.repeat(step % 7) + String(step % 1000) + (step % 13 === 0 ? 'x'.repeat(200) : '');
    for (let step = 0; step < 60000; step++) {
      // Phases: grow to a few thousand, churn, then drain to exercise shrinking.
      const phase = Math.floor(step / 20000);
      const k = `m${Math.floor(r() * 4000)}`;
      const op = r();
      if (phase === 2 ? op < 0.2 : op < 0.55) {
        assert.equal(t.set(k, val(step)), !model.has(k));
        model.set(k, val(step));
      } else if (op < 0.9) {
        assert.equal(t.delete(k), model.delete(k));
      } else {
        assert.equal(t.get(k), model.get(k));
      }
      assert.equal(t.size, model.size);
      if (step % 5000 === 0) {
        for (const [mk, mv] of model) assert.equal(t.get(mk), mv);
        for (let i = 0; i < t.size; i++) {
          assert.equal(model.get(t.keyAt(i)), t.valAt(i));
          // The lengths memory sampling reads without making strings (memory.ts hashCharge).
          assert.equal(t.keyLength(i), t.keyAt(i).length);
          assert.equal(t.valueLength(i), t.valAt(i).length);
        }
        const c = t.clone();
        c.set('only-in-clone', '1');
        assert.equal(t.has('only-in-clone'), false);
        assert.equal(c.size, t.size + 1);
      }
    }
    for (const k of Array.from(model.keys())) assert.equal(t.delete(k), true);
    assert.equal(t.size, 0);
    assert.equal(t.has('m1'), false);
    // Emptied, the table starts again without an arena; a first entry larger than the first
    // arena (256 bytes) gets room at once.
    assert.equal(t.set('big', 'y'.repeat(1000)), true);
    assert.equal(t.set('small', 's'), true);
    assert.equal(t.get('big'), 'y'.repeat(1000));
    assert.equal(t.valueLength(t.indexOf('big')), 1000);
    assert.equal(t.get('small'), 's');
  });

  it('a fresh table whose first entry is longer than the first arena', () => {
    const t = new DenseTable(true);
    assert.equal(t.set('k'.repeat(300), 'v'.repeat(5000)), true);
    assert.equal(t.get('k'.repeat(300)), 'v'.repeat(5000));
    assert.equal(t.keyLength(0), 300);
    assert.equal(t.valueLength(0), 5000);
    assert.equal(t.clone().get('k'.repeat(300)), 'v'.repeat(5000));
    const e = new DenseTable(false).clone();
    assert.equal(e.add('x'), true);
    assert.equal(e.has('x'), true);
  });
});

describe('SetValue under 7.0 limits (no listpack): the small hashtable form', () => {
  /** The internal form (the observable encoding is 'hashtable' for both). */
  const form = (s: SetValue) => (s as unknown as { enc: number }).enc;

  it('against a Set model, by strings and by bytes, across every conversion', () => {
    const r = rng(33);
    for (let round = 0; round < 60; round++) {
      const ints = round % 3 === 0;
      const pool = Array.from({ length: 4 + (round % 9) * 2 }, (_, i) =>
        ints && i % 5 !== 4 ? String(i * 7 - 20) : i === 2 ? 'w'.repeat(63 + (round & 3)) : i === 3 ? '\x00\xff' : `m${i}`);
      const first = pool[0];
      const s = SetValue.create(first, 1, L70);
      const model = new Set<string>();
      for (let step = 0; step < 600; step++) {
        const m = pool[Math.floor(r() * pool.length)];
        const buf = b(`[${m}]`);
        const bytes = r() < 0.5;
        const op = r();
        if (op < 0.5) {
          assert.equal(bytes ? s.addBytes(buf, 1, buf.length - 1, L70) : s.add(m, L70), !model.has(m));
          model.add(m);
        } else if (op < 0.8) {
          assert.equal(bytes ? s.removeBytes(buf, 1, buf.length - 1) : s.remove(m), model.delete(m));
        } else {
          assert.equal(bytes ? s.hasBytes(buf, 1, buf.length - 1) : s.has(m), model.has(m));
        }
        assert.equal(s.size, model.size);
        if (step % 50 === 0) {
          assert.deepEqual(s.members().sort(), Array.from(model).sort());
          assert.notEqual(s.encoding(), 'listpack');
          const c = s.clone();
          c.add('only-in-clone', L70);
          assert.equal(s.has('only-in-clone'), false);
          const back = SetValue.loadWhole(Buffer.from(s.storeWhole()!));
          assert.equal(back.encoding(), s.encoding());
          assert.deepEqual(back.members(), s.members());
          if (s.size > 0) assert.ok(model.has(s.random()));
        }
      }
    }
  });

  it('small up to 16 members of up to 64 bytes, then a DenseTable; intsets of a few become small', () => {
    const s = SetValue.create('a', 1, L70);
    for (let i = 0; i < 16; i++) s.add(`m${i}`, L70);
    assert.equal(form(s), 3);
    assert.equal(s.encoding(), 'hashtable');
    s.add('m16', L70);
    assert.equal(form(s), 2);
    s.remove('m16');
    assert.equal(form(s), 2, 'never back');
    const long = SetValue.create('a', 1, L70);
    long.add('x'.repeat(64), L70);
    assert.equal(form(long), 3);
    long.add('y'.repeat(65), L70);
    assert.equal(form(long), 2);
    const is = SetValue.create('1', 1, L70);
    for (const m of ['3', '2', '1']) is.add(m, L70);
    assert.equal(is.encoding(), 'intset');
    is.add('x', L70);
    assert.equal(form(is), 3);
    assert.deepEqual(is.members(), ['1', '2', '3', 'x']);
    assert.equal(SetValue.create('a', 17, L70).encoding(), 'hashtable');
    assert.equal(form(SetValue.create('a', 16, L70)), 3);
    assert.equal(form(SetValue.create('a', 17, L70)), 2);
  });

  it('SSCAN of a small set returns every member present throughout, whatever changes', () => {
    const r = rng(4);
    for (let round = 0; round < 300; round++) {
      const s = SetValue.create('a', 1, L70);
      let next = 0;
      for (let i = Math.floor(r() * 17); i > 0; i--) s.add(`k${next++}`, L70);
      const initial = new Set(s.members());
      const removed = new Set<string>();
      const seen = new Set<string>();
      let cursor = 0;
      do {
        cursor = s.scan(cursor, 1 + Math.floor(r() * 3), (m) => seen.add(m));
        if (r() < 0.5 && s.size > 0) {
          const v = s.random();
          s.remove(v);
          removed.add(v);
        } else if (s.size < 16) {
          s.add(`k${next++}`, L70);
        }
      } while (cursor !== 0);
      for (const k of initial) if (!removed.has(k)) assert.ok(seen.has(k), `round ${round}: ${k} missed`);
    }
  });

  it('SPOP with a count keeps a small set small', () => {
    const s = SetValue.create('a', 1, L70);
    for (let i = 0; i < 8; i++) s.add(`m${i}`, L70);
    const popped = s.popMany(7, L70);
    assert.equal(popped.length, 7);
    assert.equal(s.size, 1);
    assert.equal(new Set([...popped, ...s.members()]).size, 8);
    assert.equal(form(s), 3);
  });
});

describe('DenseTable small (no index) and byte forms', () => {
  it('a set crossing the index threshold both ways, by strings and by bytes, against a Set', () => {
    const r = rng(21);
    const t = new DenseTable(false);
    const model = new Set<string>();
    // 14 possible members around the 8-member threshold; some long (arena off the JS heap),
    // one with every byte value.
    const pool = Array.from({ length: 14 }, (_, i) => (i === 3 ? 'L'.repeat(70 + i) : i === 5 ? '\x00\xff\x80' : `m${i}`));
    for (let step = 0; step < 40000; step++) {
      const k = pool[Math.floor(r() * (step % 4000 < 2000 ? pool.length : 4))];
      const buf = Buffer.from(`<${k}>`, 'latin1');
      const op = r();
      const bytes = r() < 0.5;
      if (op < 0.5) {
        assert.equal(bytes ? t.addBytes(buf, 1, buf.length - 1) : t.add(k), !model.has(k));
        model.add(k);
      } else if (op < 0.85) {
        assert.equal(bytes ? t.deleteBytes(buf, 1, buf.length - 1) : t.delete(k), model.delete(k));
      } else {
        assert.equal(bytes ? t.indexOfBytes(buf, 1, buf.length - 1) >= 0 : t.has(k), model.has(k));
      }
      assert.equal(t.size, model.size);
      if (step % 997 === 0) {
        assert.deepEqual(t.keys().sort(), Array.from(model).sort());
        for (let i = 0; i < t.size; i++) assert.equal(t.indexOf(t.keyAt(i)), i);
        const c = t.clone();
        assert.equal(c.add('only-in-clone'), true);
        assert.equal(t.has('only-in-clone'), false);
        assert.deepEqual(c.keys().sort(), [...model, 'only-in-clone'].sort());
      }
    }
  });

  it('a hash of few fields: values rewritten in place and moved, by strings', () => {
    const t = new DenseTable(true);
    const model = new Map<string, string>();
    const r = rng(8);
    for (let step = 0; step < 20000; step++) {
      const k = `f${Math.floor(r() * 11)}`;
      if (r() < 0.7) {
        const v = 'v'.repeat(Math.floor(r() * 5)) + (r() < 0.1 ? 'x'.repeat(100) : '');
        assert.equal(t.set(k, v), !model.has(k));
        model.set(k, v);
      } else {
        assert.equal(t.delete(k), model.delete(k));
      }
      for (const [mk, mv] of model) assert.equal(t.get(mk), mv);
    }
  });
});

describe('DenseTable with binary and long keys', () => {
  it('keys of every byte and of any length (multi-byte length prefixes)', () => {
    const t = new DenseTable(false);
    const keys: string[] = [''];
    for (let c = 0; c < 256; c++) keys.push(String.fromCharCode(c), String.fromCharCode(c).repeat(3));
    keys.push('k'.repeat(127), 'k'.repeat(128), 'k'.repeat(20000), '\x00'.repeat(300));
    for (const k of keys) assert.equal(t.add(k), true);
    for (const k of keys) assert.equal(t.add(k), false);
    assert.equal(t.size, keys.length);
    assert.deepEqual(t.keys().sort(), keys.slice().sort());
    for (const k of keys.slice(0, 100)) assert.equal(t.delete(k), true);
    for (const k of keys.slice(100)) assert.equal(t.has(k), true);
    for (const k of keys.slice(0, 100)) assert.equal(t.has(k), false);
  });
});

describe('long double (HINCRBYFLOAT)', () => {
  const add = (a: string, c: string) => formatHuman(ldAdd(parseLongDouble(b(a))!, parseLongDouble(b(c))!));
  it('formats like Redis', () => {
    assert.equal(add('10.5', '0.1'), '10.6');
    assert.equal(add('0.1', '0.2'), '0.3');
    assert.equal(add('3.0', '0'), '3');
    assert.equal(add('-0.0', '0'), '0');
    assert.equal(add('5.0e3', '0'), '5000');
    assert.equal(add('1.23e-10', '0'), '0.000000000123');
    assert.equal(add('-1e-18', '0'), '0');
    assert.equal(add('0x10', '0'), '16');
    assert.equal(add('1', '-1'), '0');
    assert.equal(add('123456789.123456789', '0'), '123456789.12345678899873747');
  });
  it('rejects what string2ld rejects', () => {
    for (const s of ['', ' 1', '1 ', 'abc', '1e', 'nan', '0x', '1e99999', '1e-99999', '.', '+', '--1']) {
      assert.equal(parseLongDouble(b(s)), null, s);
    }
    assert.equal(ldIsFinite(parseLongDouble(b('inf'))!), false);
    assert.equal(parseLongDouble(b('-Infinity'))!.neg, true);
    assert.equal(ldIsFinite(ldAdd(parseLongDouble(b('inf'))!, parseLongDouble(b('-inf'))!)), false);
  });
});
