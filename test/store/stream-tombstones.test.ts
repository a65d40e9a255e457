/**
 * Stream tombstones in the data dir. Deleted entries keep their fields and values (Redis keeps
 * them in the node's listpack until the node goes, and DUMP/RDB write them back: the DUMP
 * bytes are compared with redis-server's in test/diff/cases/stream.ts and across a restart in
 * types-list-stream-json.test.ts). A data dir written before that stored only a tombstone's
 * listpack size: such a record still loads, and DUMP re-creates an entry of that size, so the
 * node's size and boundaries stay Redis's.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import '../../dist/store/codec.js'; // first: the codec registry
import { streamCodec } from '../../dist/store/stream-codec.js';
import { Stream, type StreamNode, makeIdNum } from '../../dist/engine/ds/stream.js';
import { dumpPayload } from '../../dist/rdb/encode.js';
import { readValue } from '../../dist/rdb/decode.js';
import { RdbReader } from '../../dist/rdb/reader.js';

const K_ENTRY = 1;
const F_DEAD = 2;
const F_KEPT = 8;
const LIMITS = { hash: { maxEntries: 512, maxValue: 64 }, set: { maxIntset: 512, maxEntries: 128, maxValue: 64 }, listFill: -2 };

/** A stream of 6 entries in one node, entries 2 and 4 deleted. */
function sample(): Stream {
  const s = new Stream();
  for (let i = 1; i <= 6; i++) {
    const fv = i % 2 ? [Buffer.from('f'), Buffer.from(`v${i}`)] : [Buffer.from('g'), Buffer.from('x'.repeat(10 * i)), Buffer.from('h'), Buffer.from([0, 255])];
    const id = makeIdNum(100, i);
    s.append(id, fv, { maxBytes: 4096, maxEntries: 100 });
    s.lastId = id;
  }
  s.deleteIds([makeIdNum(100, 2), makeIdNum(100, 4)]);
  return s;
}

/** The stream's records as the store writes them (all of them). */
function records(s: Stream): { sub: Buffer; value: Buffer }[] {
  const out: { sub: Buffer; value: Buffer }[] = [];
  streamCodec.writeRecords(s, { put: (sub, value) => out.push({ sub: Buffer.from(sub), value: Buffer.from(value) }), del: () => {} }, true);
  return out;
}

function load(header: Buffer, recs: { sub: Buffer; value: Buffer }[]): Stream {
  const b = streamCodec.loadBegin(header, recs.length);
  for (const r of recs) b.add(r.sub, r.value);
  while (b.work !== undefined && !b.work(1e9));
  return b.end();
}

function decode(payload: Buffer): Stream {
  return readValue(new RdbReader(payload, 1, payload.length - 10), payload[0], LIMITS) as unknown as Stream;
}

/** [varint n] LEB128, as the records write lengths and counts. */
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return out;
}

/**
 * Entry i's record as stream-codec.ts's header comment lays it out, built from the entry's
 * fields and values (the model the records are checked against).
 */
function modelRecord(n: StreamNode, i: number): Buffer {
  const fv = n.contents(i)!;
  const mf = n.masterFields;
  const lenBytes = (b: Buffer) => [...varint(b.length), ...b];
  let flags = i === 0 ? 1 : 0;
  if (!n.isLive(i)) flags |= F_DEAD | F_KEPT;
  const same = fv.length === 2 * mf.length && mf.every((f, k) => f.equals(fv[2 * k]));
  if (same) flags |= 4;
  const out = [flags];
  if (i === 0) out.push(...varint(mf.length), ...mf.flatMap(lenBytes));
  if (same) for (let k = 1; k < fv.length; k += 2) out.push(...lenBytes(fv[k]));
  else out.push(...varint(fv.length >> 1), ...fv.flatMap(lenBytes));
  return Buffer.from(out);
}

describe('stream entry records', () => {
  it('are the documented layout for every shape of entry, and load back to the same stream', () => {
    // Element lengths across the varint steps and the copy's 64-byte threshold, binary bytes;
    // entries with the master's fields, other fields, more or fewer of them; tombstones; several
    // nodes (each master entry carries the field list).
    const lens = [0, 1, 63, 64, 65, 127, 128, 200, 16383, 16384, 70000];
    const val = (len: number, seed: number) => Buffer.from(Array.from({ length: len }, (_, k) => (k * 31 + seed) & 255));
    const s = new Stream();
    let seq = 0;
    const add = (fv: Buffer[]) => {
      const id = makeIdNum(7, ++seq);
      s.append(id, fv, { maxBytes: 1 << 20, maxEntries: 8 });
      s.lastId = id;
    };
    for (let r = 0; r < 3; r++) {
      for (const len of lens) {
        add([Buffer.from('f'), val(len, r), Buffer.from('g'), val(len >> 1, r + 1)]);
        add([Buffer.from('f'), val(len, r + 2)]);
        add([val(len, r + 3), Buffer.from('v'), Buffer.from('g'), Buffer.alloc(0)]);
        add([Buffer.from('f'), Buffer.from('1'), Buffer.from('g'), val(len, r), Buffer.from('h'), Buffer.from('')]);
      }
    }
    const ids = (n: StreamNode) => Array.from({ length: n.count }, (_, k) => n.id(k));
    s.deleteIds([makeIdNum(7, 2), makeIdNum(7, 9), makeIdNum(7, 10), makeIdNum(7, 40), makeIdNum(7, 131)]);
    const recs = records(s).filter((r) => r.sub[0] === K_ENTRY);
    let k = 0;
    for (const n of s.nodes) {
      for (let i = 0; i < n.count; i++, k++) {
        assert.deepEqual(recs[k].value, modelRecord(n, i), `entry ${n.id(i)} (node index ${i})`);
      }
    }
    assert.equal(k, recs.length);
    assert.ok(s.nodes.length > 10);
    const back = load(streamCodec.header!(s), records(s));
    assert.deepEqual(dumpPayload(back, { listFill: -2 }), dumpPayload(s, { listFill: -2 }));
    assert.deepEqual(back.nodes.map(ids), s.nodes.map(ids));
  });
});

describe('stream tombstones in the store', () => {
  it('keep their contents through the records: the DUMP after a reload is the same bytes', () => {
    const s = sample();
    const header = streamCodec.header!(s);
    const recs = records(s);
    const dead = recs.filter((r) => r.sub[0] === K_ENTRY && r.value[0] & F_DEAD);
    assert.equal(dead.length, 2);
    for (const r of dead) assert.ok(r.value[0] & F_KEPT);
    const back = load(header, recs);
    assert.deepEqual(dumpPayload(back, { listFill: -2 }), dumpPayload(s, { listFill: -2 }));
    assert.equal(back.length, 4);
  });

  it('a tombstone stored with only its size (older data dirs) loads, and DUMP keeps the node size', () => {
    const s = sample();
    const node = s.nodes[0];
    let i = -1; // entry records come in id order: the node's index
    const legacy = records(s).map((r) => {
      if (r.sub[0] === K_ENTRY) i++;
      if (r.sub[0] !== K_ENTRY || !(r.value[0] & F_DEAD)) return r;
      assert.ok(i > 0); // not the master entry: no field list in the record
      let size = node.entryBytes(i);
      const out = [F_DEAD];
      for (; size >= 0x80; size >>>= 7) out.push((size & 0x7f) | 0x80);
      out.push(size);
      return { sub: r.sub, value: Buffer.from(out) };
    });
    const back = load(streamCodec.header!(s), legacy);
    assert.equal(back.length, 4);
    assert.equal(back.nodes[0].bytes, node.bytes);
    assert.equal(typeof back.nodes[0].tombSize(1), 'number');
    // DUMP re-creates entries of the stored sizes: the same listpack size, the same live entries.
    const again = decode(dumpPayload(back, { listFill: -2 })).nodes[0];
    const orig = decode(dumpPayload(s, { listFill: -2 })).nodes[0];
    assert.equal(again.fixed, orig.fixed);
    const ids = (n: StreamNode) => Array.from({ length: n.count }, (_, k) => n.id(k));
    assert.deepEqual(ids(again), ids(orig));
    assert.deepEqual(ids(again).map((_, k) => again.entry(k)), ids(orig).map((_, k) => orig.entry(k)));
    assert.equal(again.dead, 2);
  });
});
