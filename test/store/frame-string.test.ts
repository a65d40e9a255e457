/**
 * String records written straight into a journal frame (LmdbStore.putStringMeta: FrameBuilder
 * reserve + codec writeStringMeta) are byte for byte what metaKey + encodeString + put write,
 * across key lengths, TTLs, value forms and namespaces, in one builder that grows meanwhile.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FrameBuilder } from '../../dist/store/journal.js';
import { encodeString, metaKey, stringMetaLen, writeStringMeta, Slab, NS_BYTES, LONG } from '../../dist/store/codec.js';

describe('string records written into the frame', () => {
  it('equal the records metaKey + encodeString + put write', () => {
    const slab = new Slab();
    const kb = Buffer.alloc(LONG + 16);
    const a = new FrameBuilder();
    const b = new FrameBuilder();
    const big = 'z'.repeat(70_000); // grows the builders' buffers between a reserve and its write
    let n = 0;
    for (const key of ['a', 'key:000000000001', 'k\x00\xff' + 'x'.repeat(200), 'x'.repeat(LONG - 1)]) {
      for (const exp of [0, 1795818010170.5, 1]) {
        for (const v of ['', 'v', '\xff\x00abc', 12345, -7, 3.5, new Uint8Array([0, 255, 1]), 'y'.repeat(300), big]) {
          for (const ns of [1, 2 ** 40 + 3]) {
            const kl = metaKey(kb, ns, key);
            a.put(1, kb.subarray(0, kl), encodeString(slab, key, exp, v));
            const s = typeof v === 'number' ? String(v) : v;
            const at = b.reserve(1, NS_BYTES + key.length, stringMetaLen(key, exp, s));
            writeStringMeta(b.buffer, at, ns, key, exp, s);
            if (++n % 7 === 0) assert.deepEqual(b.finish(n), a.finish(n), `key ${key.length} B, exp ${exp}, value ${typeof v}, ns ${ns}`);
          }
        }
      }
    }
    assert.deepEqual(b.finish(0), a.finish(0));
  });
});
