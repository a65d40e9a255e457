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
