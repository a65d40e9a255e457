/**
 * HyperLogLog in Redis's own string representation, so that values are byte-compatible with
 * Redis (a value copied with GET/SET between the two keeps working) and counts are identical:
 *
 *   header (16 bytes): "HYLL", encoding (0 dense, 1 sparse), 3 unused bytes, 8-byte cached
 *   cardinality little-endian (MSB of the last byte set = cache invalid);
 *   dense: 16384 registers of 6 bits, packed little-endian;
 *   sparse: ZERO (00xxxxxx, 1-64 zeros), XZERO (01xxxxxx yyyyyyyy, 1-16384 zeros),
 *           VAL (1vvvvvxx, value 1-32 repeated 1-4 times).
 *
 * Hashing is MurmurHash64A (seed 0xadc83b19); the estimator is Ertl's improved raw estimator
 * that Redis uses since 5.0. The sparse update follows the same in-place split and merge steps
 * as Redis, so the resulting bytes are the same. Written from the published format and
 * algorithm descriptions, not copied.
 */

export const HLL_P = 14;
export const HLL_Q = 64 - HLL_P;
export const HLL_REGISTERS = 1 << HLL_P;
const HLL_P_MASK = HLL_REGISTERS - 1;
const HLL_BITS = 6;
const HLL_REGISTER_MAX = (1 << HLL_BITS) - 1;
export const HLL_HDR_SIZE = 16;
export const HLL_DENSE_SIZE = HLL_HDR_SIZE + Math.floor((HLL_REGISTERS * HLL_BITS + 7) / 8);
export const HLL_DENSE = 0;
export const HLL_SPARSE = 1;
const HLL_ALPHA_INF = 0.721347520444481703680;
const ZERO_MAX_LEN = 64;
const XZERO_MAX_LEN = 16384;
const VAL_MAX_VALUE = 32;
const VAL_MAX_LEN = 4;

// ---------------------------------------------------------------- MurmurHash64A

const M = 0xc6a4a7935bd1e995n;
const MASK64 = 0xffffffffffffffffn;

export function murmur64a(data: Uint8Array, seed: bigint): bigint {
  const len = data.length;
  let h = (seed ^ ((BigInt(len) * M) & MASK64)) & MASK64;
  const blocks = len - (len & 7);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = 0; i < blocks; i += 8) {
    let k = view.getBigUint64(i, true);
    k = (k * M) & MASK64;
    k ^= k >> 47n;
    k = (k * M) & MASK64;
    h ^= k;
    h = (h * M) & MASK64;
  }
  const rem = len & 7;
  if (rem > 0) {
    for (let i = rem - 1; i >= 0; i--) h ^= BigInt(data[blocks + i]) << BigInt(8 * i);
    h = (h * M) & MASK64;
  }
  h ^= h >> 47n;
  h = (h * M) & MASK64;
  h ^= h >> 47n;
  return h;
}

/** Register index and run length (count of the "000..1" pattern) of an element. */
export function patLen(ele: Uint8Array): [index: number, count: number] {
  let hash = murmur64a(ele, 0xadc83b19n);
  const index = Number(hash & BigInt(HLL_P_MASK));
  hash >>= BigInt(HLL_P);
  hash |= 1n << BigInt(HLL_Q);
  // Count trailing zeros on the low 32 bits, then the high ones.
  let lo = Number(hash & 0xffffffffn);
  let count = 1;
  if (lo === 0) {
    count += 32;
    lo = Number(hash >> 32n);
  }
  while ((lo & 1) === 0) {
    count++;
    lo >>>= 1;
  }
  return [index, count];
}

// ---------------------------------------------------------------- header and validation

/** A new empty HLL, sparse, exactly as Redis creates it. */
export function createHll(): Buffer {
  const b = Buffer.alloc(HLL_HDR_SIZE + 2);
  b.write('HYLL', 0, 'latin1');
  b[4] = HLL_SPARSE;
  // One XZERO opcode covering every register.
  b[HLL_HDR_SIZE] = ((XZERO_MAX_LEN - 1) >> 8) | 0x40;
  b[HLL_HDR_SIZE + 1] = (XZERO_MAX_LEN - 1) & 0xff;
  return b;
}

/** Redis's isHLLObjectOrReply checks on the raw bytes. */
export function isHll(v: Buffer): boolean {
  if (v.length < HLL_HDR_SIZE) return false;
  if (v[0] !== 0x48 || v[1] !== 0x59 || v[2] !== 0x4c || v[3] !== 0x4c) return false; // HYLL
  if (v[4] > HLL_SPARSE) return false;
  if (v[4] === HLL_DENSE && v.length !== HLL_DENSE_SIZE) return false;
  return true;
}

export function invalidateCache(v: Buffer): void {
  v[15] |= 0x80;
}

export function cacheValid(v: Buffer): boolean {
  return (v[15] & 0x80) === 0;
}

export function readCache(v: Buffer): bigint {
  return v.readBigUInt64LE(8);
}

export function writeCache(v: Buffer, card: bigint): void {
  v.writeBigUInt64LE(card, 8);
}

// ---------------------------------------------------------------- dense registers

export function denseGet(v: Uint8Array, reg: number): number {
  const bit = reg * HLL_BITS;
  const byte = HLL_HDR_SIZE + (bit >>> 3);
  const fb = bit & 7;
  const b0 = v[byte];
  const b1 = byte + 1 < v.length ? v[byte + 1] : 0;
  return ((b0 >> fb) | (b1 << (8 - fb))) & HLL_REGISTER_MAX;
}

export function denseSetRaw(v: Uint8Array, reg: number, val: number): void {
  const bit = reg * HLL_BITS;
  const byte = HLL_HDR_SIZE + (bit >>> 3);
  const fb = bit & 7;
  const fb8 = 8 - fb;
  v[byte] &= ~(HLL_REGISTER_MAX << fb);
  v[byte] |= (val << fb) & 0xff;
  if (byte + 1 < v.length) {
    v[byte + 1] &= ~(HLL_REGISTER_MAX >> fb8);
    v[byte + 1] |= val >> fb8;
  }
}

/** Set a dense register to `count` if larger; returns 1 when changed. */
export function denseSet(v: Uint8Array, reg: number, count: number): number {
  if (count > denseGet(v, reg)) {
    denseSetRaw(v, reg, count);
    return 1;
  }
  return 0;
}

// ---------------------------------------------------------------- sparse representation

const isZero = (b: number) => (b & 0xc0) === 0;
const isXZero = (b: number) => (b & 0xc0) === 0x40;
const zeroLen = (b: number) => (b & 0x3f) + 1;
const xzeroLen = (b0: number, b1: number) => (((b0 & 0x3f) << 8) | b1) + 1;
const valValue = (b: number) => ((b >> 2) & 0x1f) + 1;
const valLen = (b: number) => (b & 0x3) + 1;
const valByte = (val: number, len: number) => (((val - 1) << 2) | (len - 1)) | 0x80;

/** Expand a sparse HLL to its registers; null if corrupted. */
export function sparseRegisters(v: Uint8Array): Uint8Array | null {
  const regs = new Uint8Array(HLL_REGISTERS);
  let idx = 0;
  let p = HLL_HDR_SIZE;
  while (p < v.length) {
    const b = v[p];
    if (isZero(b)) {
      idx += zeroLen(b);
      p++;
    } else if (isXZero(b)) {
      if (p + 1 >= v.length) return null;
      idx += xzeroLen(b, v[p + 1]);
      p += 2;
    } else {
      const len = valLen(b);
      const val = valValue(b);
      if (idx + len > HLL_REGISTERS) return null;
      for (let i = 0; i < len; i++) regs[idx++] = val;
      p++;
    }
    if (idx > HLL_REGISTERS) return null;
  }
  return idx === HLL_REGISTERS ? regs : null;
}

/** All registers of a valid HLL (dense or sparse); null if corrupted. */
export function registers(v: Uint8Array): Uint8Array | null {
  if (v[4] === HLL_SPARSE) return sparseRegisters(v);
  const regs = new Uint8Array(HLL_REGISTERS);
  for (let i = 0; i < HLL_REGISTERS; i++) regs[i] = denseGet(v, i);
  return regs;
}

/** The dense form of a sparse HLL (same header, cache kept). null if corrupted. */
export function sparseToDense(v: Buffer): Buffer | null {
  const regs = sparseRegisters(v);
  if (regs === null) return null;
  const d = Buffer.alloc(HLL_DENSE_SIZE);
  v.copy(d, 0, 0, HLL_HDR_SIZE);
  d[4] = HLL_DENSE;
  for (let i = 0; i < HLL_REGISTERS; i++) if (regs[i]) denseSetRaw(d, i, regs[i]);
  return d;
}

export interface SetResult {
  /** The value after the update (a new Buffer when it grew or was promoted). */
  value: Buffer;
  /** 1 changed, 0 unchanged, -1 corrupted. */
  changed: number;
}

/**
 * Set register `index` to `count` if larger, in a sparse HLL, promoting to dense when the
 * value exceeds what sparse can hold or the representation would exceed `maxBytes`.
 * `v` may be modified in place (callers pass a mutable copy).
 */
export function sparseSet(v: Buffer, index: number, count: number, maxBytes: number): SetResult {
  if (count > VAL_MAX_VALUE) return promote(v, index, count);
  let end = v.length;
  let p = HLL_HDR_SIZE;
  let first = 0;
  let prev = -1;
  let span = 0;
  while (p < end) {
    let oplen = 1;
    const b = v[p];
    if (isZero(b)) span = zeroLen(b);
    else if (isXZero(b)) {
      span = xzeroLen(b, v[p + 1]);
      oplen = 2;
    } else span = valLen(b);
    if (index <= first + span - 1) break;
    prev = p;
    p += oplen;
    first += span;
  }
  if (span === 0 || p >= end) return { value: v, changed: -1 };
  const op = v[p];
  const opIsXZero = isXZero(op);
  const next = opIsXZero ? p + 2 : p + 1;
  const hasNext = next < end;
  const runlen = isZero(op) ? zeroLen(op) : opIsXZero ? xzeroLen(op, v[p + 1]) : valLen(op);
  let out = v;
  let updated = false;
  if (!isZero(op) && !opIsXZero) {
    if (valValue(op) >= count) return { value: v, changed: 0 }; // case A
    if (runlen === 1) { // case B
      out[p] = valByte(count, 1);
      updated = true;
    }
  }
  if (!updated && isZero(op) && runlen === 1) { // case C
    out[p] = valByte(count, 1);
    updated = true;
  }
  if (!updated) {
    // Case D: split the opcode into at most three.
    const seq: number[] = [];
    const last = first + span - 1;
    if (isZero(op) || opIsXZero) {
      if (index !== first) pushZeros(seq, index - first);
      seq.push(valByte(count, 1));
      if (index !== last) pushZeros(seq, last - index);
    } else {
      const cur = valValue(op);
      if (index !== first) seq.push(valByte(cur, index - first));
      seq.push(valByte(count, 1));
      if (index !== last) seq.push(valByte(cur, last - index));
    }
    const oldlen = opIsXZero ? 2 : 1;
    const delta = seq.length - oldlen;
    if (delta > 0 && end + delta > maxBytes) return promote(v, index, count);
    if (delta !== 0) {
      const grown = Buffer.allocUnsafe(end + delta);
      v.copy(grown, 0, 0, p);
      if (hasNext) v.copy(grown, next + delta, next, end);
      out = grown;
      end += delta;
    }
    for (let i = 0; i < seq.length; i++) out[p + i] = seq[i];
  }
  // Merge adjacent VAL opcodes with the same value (up to 5 opcodes from prev).
  let q = prev >= 0 ? prev : HLL_HDR_SIZE;
  let scan = 5;
  let merged = 0;
  while (q < end && scan-- > 0) {
    const b = out[q];
    if (isXZero(b)) { q += 2; continue; }
    if (isZero(b)) { q++; continue; }
    if (q + 1 < end && !isZero(out[q + 1]) && !isXZero(out[q + 1])) {
      const v1 = valValue(b);
      const v2 = valValue(out[q + 1]);
      if (v1 === v2) {
        const len = valLen(b) + valLen(out[q + 1]);
        if (len <= VAL_MAX_LEN) {
          out[q + 1] = valByte(v1, len);
          out.copy(out, q, q + 1, end);
          end--;
          merged++;
          continue;
        }
      }
    }
    q++;
  }
  if (merged > 0) out = out.subarray(0, end);
  invalidateCache(out);
  return { value: out, changed: 1 };
}

function pushZeros(seq: number[], len: number): void {
  if (len > ZERO_MAX_LEN) {
    seq.push(((len - 1) >> 8) | 0x40, (len - 1) & 0xff);
  } else {
    seq.push(len - 1);
  }
}

function promote(v: Buffer, index: number, count: number): SetResult {
  const d = sparseToDense(v);
  if (d === null) return { value: v, changed: -1 };
  denseSet(d, index, count);
  invalidateCache(d);
  return { value: d, changed: 1 };
}

// ---------------------------------------------------------------- estimator

function sigma(x: number): number {
  if (x === 1) return Infinity;
  let y = 1;
  let z = x;
  let zPrime: number;
  do {
    x *= x;
    zPrime = z;
    z += x * y;
    y += y;
  } while (zPrime !== z);
  return z;
}

function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  let zPrime: number;
  do {
    x = Math.sqrt(x);
    zPrime = z;
    y *= 0.5;
    const d = 1 - x;
    z -= d * d * y;
  } while (zPrime !== z);
  return z / 3;
}

/** Cardinality estimate from the registers (Redis's hllCount). */
export function estimate(regs: Uint8Array): bigint {
  const histo = new Array<number>(64).fill(0);
  for (let i = 0; i < HLL_REGISTERS; i++) histo[regs[i]]++;
  const m = HLL_REGISTERS;
  let z = m * tau((m - histo[HLL_Q + 1]) / m);
  for (let j = HLL_Q; j >= 1; --j) {
    z += histo[j];
    z *= 0.5;
  }
  z += m * sigma(histo[0] / m);
  // llroundl: round half away from zero.
  return BigInt(Math.round(HLL_ALPHA_INF * m * m / z));
}
