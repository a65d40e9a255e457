/**
 * Small byte-encoding helpers shared by the collection codecs (list, stream, ...): LEB128
 * varints, length-prefixed byte strings, and the "whole" form of a collection built from its
 * own item records (a small value is stored inside its metadata record as
 * [header][sub-key, value]... so that one record layout serves both forms).
 */
import { loadRecords, type CollectionCodec, type ItemRecord, type ItemWriter, type StoredValue } from './codec.js';
import { grown } from '../bytes.js';

/** Bytes a varint of `n` (a non-negative safe integer) takes. */
export function varintSize(n: number): number {
  let s = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    s++;
  }
  return s;
}

/** Writes the varint of `n` (a non-negative safe integer) at b[p]; returns the offset past it. */
export function putVarint(b: Uint8Array, p: number, n: number): number {
  while (n >= 0x80) {
    b[p++] = (n % 128) | 0x80;
    n = Math.floor(n / 128);
  }
  b[p++] = n;
  return p;
}

/** Appends bytes to a growing buffer. */
export class ByteWriter {
  buf: Buffer;
  pos = 0;

  constructor(size = 256) {
    this.buf = Buffer.allocUnsafe(size);
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) this.buf = grown(this.buf, this.pos, this.pos + n);
  }

  u8(v: number): void {
    this.need(1);
    this.buf[this.pos++] = v;
  }

  varint(n: number): void {
    this.need(10);
    this.pos = putVarint(this.buf, this.pos, n);
  }

  bytes(b: Uint8Array): void {
    this.need(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** varint length + bytes. */
  lenBytes(b: Uint8Array): void {
    this.varint(b.length);
    this.bytes(b);
  }

  latin1(s: string): void {
    this.need(s.length);
    this.pos += this.buf.latin1Write(s, this.pos);
  }

  f64(v: number): void {
    this.need(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  u64(v: bigint): void {
    this.need(8);
    this.buf.writeBigUInt64BE(BigInt.asUintN(64, v), this.pos);
    this.pos += 8;
  }

  i64(v: bigint): void {
    this.need(8);
    this.buf.writeBigInt64BE(BigInt.asIntN(64, v), this.pos);
    this.pos += 8;
  }

  /** A fresh Buffer with the bytes written (safe to hand to the store). */
  done(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}

/** Reads what ByteWriter wrote. Byte strings are returned as views of the input. */
export class ByteReader {
  pos: number;

  constructor(readonly buf: Buffer, start = 0, readonly end = buf.length) {
    this.pos = start;
  }

  get atEnd(): boolean {
    return this.pos >= this.end;
  }

  u8(): number {
    if (this.pos >= this.end) throw new Error('truncated record');
    return this.buf[this.pos++];
  }

  varint(): number {
    let n = 0;
    let mul = 1;
    for (;;) {
      const b = this.u8();
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 128;
    }
  }

  bytes(n: number): Buffer {
    if (this.pos + n > this.end) throw new Error('truncated record');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  lenBytes(): Buffer {
    return this.bytes(this.varint());
  }

  latin1(n: number): string {
    return this.bytes(n).latin1Slice(0, n);
  }

  /** The rest of the input as latin1. */
  restLatin1(): string {
    return this.latin1(this.end - this.pos);
  }

  f64(): number {
    const v = this.bytes(8).readDoubleLE(0);
    return v;
  }

  u64(): bigint {
    return this.bytes(8).readBigUInt64BE(0);
  }

  i64(): bigint {
    return this.bytes(8).readBigInt64BE(0);
  }
}

/** An ItemWriter that collects the records of one value into a whole-value body. */
class WholeWriter implements ItemWriter {
  readonly w = new ByteWriter(1024);
  put(sub: Buffer, value: Buffer): void {
    this.w.lenBytes(sub);
    this.w.lenBytes(value);
  }
  del(): void {
    // A whole value is written from scratch: there is nothing to delete.
  }
}

/**
 * The whole-value body of `v`: [varint header length][header][varint sub][sub][varint value]
 * [value]... from the codec's own `writeRecords(v, w, true)` (which also clears the log).
 */
export function packWhole<V extends StoredValue>(codec: CollectionCodec<V>, v: V): Buffer {
  const ww = new WholeWriter();
  const header = codec.header?.(v) ?? Buffer.alloc(0);
  ww.w.lenBytes(header);
  codec.writeRecords(v, ww, true);
  return ww.w.done();
}

/** Rebuild a value stored by packWhole through the codec's `loadBegin`. */
export function unpackWhole<V extends StoredValue>(codec: CollectionCodec<V>, body: Buffer): V {
  const r = new ByteReader(body);
  const header = r.lenBytes();
  const items: ItemRecord[] = [];
  while (!r.atEnd) {
    const sub = r.lenBytes();
    const value = r.lenBytes();
    items.push({ sub, value });
  }
  return loadRecords(codec, header, items.length, items);
}
