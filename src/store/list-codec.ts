/**
 * Persistence of lists (the CollectionCodec of ListValue; see codec.ts for the contract).
 *
 * Flat lists (one listpack node, ds/list-flat.ts) are stored whole as [F_FLAT][listpack].
 * Other small lists (at most WHOLE_MAX_LEN elements and WHOLE_MAX_BYTES listpack bytes) are
 * stored whole in their metadata record: [flags u8][varint count]([varint length][bytes])...
 *
 * Bigger lists are one item record per element:
 *   sub-key = the element's position as a u64, big-endian, 2^63 + pos (so records sort in list
 *             order and both ends can grow); value = the element's bytes.
 *   header  = [flags u8][head position u64 BE]; the tail is head + size.
 * Index i of the list is at position `pos + i` (ListValue.pos). LPUSH/RPUSH/LPOP/RPOP/LSET
 * change one position, so they write one item record plus the metadata record. LINSERT and
 * LREM rewrite the positions of the elements they shift, LTRIM deletes the positions it drops:
 * the cost follows the change, never the list's size.
 */
import { T } from '../engine/db.js';
import { ListValue, elemBytes, elemOf, type Elem } from '../engine/ds/list.js';
import type { CollectionCodec, ItemWriter } from './codec.js';
import { ByteReader, ByteWriter } from './pack.js';
import { lpValidate } from '../rdb/listpack.js';

const WHOLE_MAX_LEN = 128;
const WHOLE_MAX_BYTES = 8192;

/**
 * flags: 1 was "listpack encoding" (ignored: data dirs of earlier versions); F_FLAT: the rest
 * of the record is the flat list's listpack, as it is in memory.
 */
const F_FLAT = 2;

/** list-max-listpack-size's default: the node rule for lists loaded from records. */
const DEFAULT_FILL = -2;

const P32 = 0x100000000;

/** Write position `p` (a safe integer, may be negative) as the u64 2^63 + p, big-endian. */
function writePos(b: Buffer, o: number, p: number): void {
  const hi = Math.floor(p / P32);
  b.writeUInt32BE((0x80000000 + hi) >>> 0, o);
  b.writeUInt32BE(p - hi * P32, o + 4);
}

function readPos(b: Buffer, o: number): number {
  return (b.readUInt32BE(o) - 0x80000000) * P32 + b.readUInt32BE(o + 4);
}

/** Sub-key scratch: the store copies sub-keys as it queues a write. */
const subBuf = Buffer.allocUnsafe(8);

function sub(p: number): Buffer {
  writePos(subBuf, 0, p);
  return subBuf;
}

/** [varint length][bytes] of an element. */
function putLen(w: ByteWriter, e: Elem): void {
  if (typeof e === 'string') {
    w.varint(e.length);
    w.latin1(e);
  } else {
    w.lenBytes(e);
  }
}

export const listCodec: CollectionCodec<ListValue> = {
  type: T.LIST,

  encodeWhole(v) {
    const flat = v.listpack;
    if (flat !== null) {
      v.changed = null;
      const b = Buffer.allocUnsafe(1 + flat.length);
      b[0] = F_FLAT;
      b.latin1Write(flat, 1);
      return b;
    }
    if (v.length > WHOLE_MAX_LEN || v.lpBytes > WHOLE_MAX_BYTES) return null;
    v.changed = null;
    const w = new ByteWriter(v.lpBytes + 16);
    w.u8(0);
    w.varint(v.length);
    if (v.length > 0) v.scan(0, v.length - 1, (e) => putLen(w, e));
    return w.done();
  },

  size: (v) => v.length,

  header(v) {
    const b = Buffer.allocUnsafe(9);
    b[0] = 0;
    writePos(b, 1, v.pos);
    return b;
  },

  writeRecords(v: ListValue, w: ItemWriter, all: boolean) {
    const lo = v.pos;
    const hi = v.pos + v.length;
    const put = (e: Elem, i: number): void => w.put(sub(lo + i), elemBytes(e));
    if (all) {
      if (v.length > 0) v.scan(0, v.length - 1, put);
    } else if (v.changed !== null) {
      const r = v.changed.r;
      for (let k = 0; k < r.length; k += 2) {
        const a = r[k];
        const b = r[k + 1];
        // Positions still in the list are rewritten (one chunk walk per range), the others
        // that were on disk deleted.
        if (Math.max(a, lo) < Math.min(b, hi)) v.scan(Math.max(a, lo) - lo, Math.min(b, hi) - 1 - lo, put);
        for (let p = a; p < b; p++) {
          if ((p < lo || p >= hi) && p >= v.diskLo && p < v.diskHi) w.del(sub(p));
        }
      }
    }
    v.changed = null;
    v.diskLo = lo;
    v.diskHi = hi;
  },

  decodeWhole(b) {
    // The listpack is checked as a RESTORE payload is (a data dir is input like any other).
    if (b.length > 0 && (b[0] & F_FLAT) !== 0) return ListValue.fromEntries(b.latin1Slice(7, b.length - 1), lpValidate(b, 1, b.length));
    const r = new ByteReader(b);
    r.u8();
    const n = r.varint();
    const v = ListValue.forLoad();
    for (let i = 0; i < n; i++) v.pushTail(elemOf(r.lenBytes()));
    v.loaded(0);
    v.loadDone(DEFAULT_FILL);
    return v;
  },

  loadBegin(header, size) {
    void size;
    const v = ListValue.forLoad();
    return {
      add: (_sub, value) => v.pushTail(elemOf(value)),
      end() {
        v.loaded(readPos(header, 1));
        v.loadDone(DEFAULT_FILL);
        return v;
      },
    };
  },
};
