/**
 * Byte packing for the whole-value encodings of collections (hash, set, sorted set: see the
 * codecs at the bottom of src/engine/ds/hash.ts, set.ts, zset.ts) and the sub-keys of their
 * item records.
 *
 * `Packer` writes into one growing scratch buffer that is reused from value to value: the store
 * copies the bytes an encoder returns into its own record right away (codec.ts
 * encodeWholeMeta, and itemKey for sub-keys), so nothing is allocated per write. `Unpacker`
 * reads them back at start-up.
 *
 * Lengths and counts are unsigned LEB128 varints (1 byte below 128).
 */

export class Packer {
  buf = Buffer.allocUnsafeSlow(4096);
  pos = 0;

  /** Start a new value with room for `n` bytes (more is reserved on demand). */
  reset(n: number): this {
    this.pos = 0;
    if (n > this.buf.length) this.buf = Buffer.allocUnsafeSlow(grow(this.buf.length, n));
    return this;
  }

  private room(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    const b = Buffer.allocUnsafeSlow(grow(this.buf.length, need));
    this.buf.copy(b, 0, 0, this.pos);
    this.buf = b;
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.pos++] = v;
  }

  varint(v: number): void {
    this.room(8);
    const b = this.buf;
    let p = this.pos;
    while (v >= 0x80) {
      b[p++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    b[p++] = v;
    this.pos = p;
  }

  f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  i64(v: bigint): void {
    this.room(8);
    this.buf.writeBigInt64LE(v, this.pos);
    this.pos += 8;
  }

  /** u48 little-endian (times in ms). */
  u48(v: number): void {
    this.room(6);
    this.buf.writeUIntLE(v, this.pos, 6);
    this.pos += 6;
  }

  /** A latin1 string (one char per byte) with its length first. */
  str(s: string): void {
    this.varint(s.length);
    this.room(s.length);
    this.pos += this.buf.latin1Write(s, this.pos);
  }

  /** A latin1 string without its length. */
  raw(s: string): void {
    this.room(s.length);
    this.pos += this.buf.latin1Write(s, this.pos);
  }

  /** Bytes with their length first. */
  bytes(v: Uint8Array): void {
    this.varint(v.length);
    this.room(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  /** The bytes written since reset (a view of the scratch buffer: copy it before reuse). */
  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

function grow(have: number, need: number): number {
  let n = have;
  while (n < need) n *= 2;
  return n;
}

export class Unpacker {
  p = 0;
  constructor(readonly b: Buffer) {}

  get done(): boolean {
    return this.p >= this.b.length;
  }

  u8(): number {
    return this.b[this.p++];
  }

  varint(): number {
    const b = this.b;
    let v = 0;
    let mul = 1;
    for (;;) {
      const x = b[this.p++];
      v += (x & 0x7f) * mul;
      if (x < 0x80) return v;
      mul *= 128;
    }
  }

  f64(): number {
    const v = this.b.readDoubleLE(this.p);
    this.p += 8;
    return v;
  }

  i64(): bigint {
    const v = this.b.readBigInt64LE(this.p);
    this.p += 8;
    return v;
  }

  u48(): number {
    const v = this.b.readUIntLE(this.p, 6);
    this.p += 6;
    return v;
  }

  /** A length-prefixed latin1 string. */
  str(): string {
    const n = this.varint();
    const s = this.b.latin1Slice(this.p, this.p + n);
    this.p += n;
    return s;
  }

  /** Length-prefixed bytes, as a view of the source buffer (which the caller owns). */
  bytes(): Buffer {
    const n = this.varint();
    const v = this.b.subarray(this.p, this.p + n);
    this.p += n;
    return v;
  }
}

/** Shared scratch of the encoders (single-threaded: one value is encoded at a time). */
export const scratch = new Packer();
/** Scratch of sub-keys (itemKey copies them at once); apart from `scratch`, which may be in use. */
export const subScratch = new Packer();

/** The empty item value (set members, sorted-set members with a non-negative-zero score). */
export const EMPTY = Buffer.alloc(0);

/** Whole-form thresholds shared by the collection codecs (see wholeLimit). */
const WHOLE_ITEMS = 128;
const WHOLE_BYTES = 16 * 1024;

/**
 * Size limits of the whole form of a collection whose in-memory encoding does not need it
 * (hashtable, skiplist): a value at most this big is written whole, a bigger one as records.
 * Once it is stored as records (`sid !== 0`) it goes back to whole only at half the limits, so
 * a value hovering at the limit does not switch form (and rewrite everything) on every write.
 */
export function wholeItems(sid: number): number {
  return sid === 0 ? WHOLE_ITEMS : WHOLE_ITEMS / 2;
}

export function wholeBytes(sid: number): number {
  return sid === 0 ? WHOLE_BYTES : WHOLE_BYTES / 2;
}
