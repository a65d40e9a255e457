/**
 * In-place growth and mutation of stored string values (SETBIT, SETRANGE, APPEND, BITFIELD)
 * without breaking the rule that bytes handed out by reference never change.
 *
 *  - Growing: a value we allocated keeps spare capacity in its ArrayBuffer. Growing writes past
 *    the old end, which no earlier view can see, so it is safe even while the old view is
 *    queued to a socket; a value is grown in place only if it is the tail of its allocation
 *    (`reservedEnd`), so two values can never grow into the same bytes. Capacity doubles
 *    (up to +1 MB at a time): N appends cost O(N) bytes copied overall, as Redis's sds.
 *  - Mutating existing bytes: copy first if the memory was handed out by reference
 *    (resp/writer.ts `referenced`), else change it in place. A stored string Buffer MUST be
 *    owned by one key only (COPY duplicates the bytes).
 */
import { referenced } from '../../resp/writer.js';

const reservedEnd = new WeakMap<ArrayBuffer, number>();
const EMPTY = Buffer.alloc(0);
const MAX_STEP = 1024 * 1024;
/** Values below this size are simply copied (pooled allocation, no dedicated block). */
const GROW_MIN = 256;

/** A buffer with `v`'s bytes that may be mutated in place. */
export function mutable(v: Buffer): Buffer {
  if (!referenced.has(v.buffer)) return v;
  return grow(EMPTY, v.length, false, v);
}

/**
 * `v` grown to `len` bytes, in place when possible. The new bytes are zero when `zero` is true
 * (SETBIT, SETRANGE past the end), left for the caller to overwrite otherwise (APPEND).
 */
export function grow(v: Buffer, len: number, zero = true, fill?: Buffer): Buffer {
  const src = fill ?? v;
  if (fill === undefined) {
    if (len <= v.length) return v;
    const ab = v.buffer as ArrayBuffer;
    const end = v.byteOffset + v.length;
    if (reservedEnd.get(ab) === end && ab.byteLength - v.byteOffset >= len) {
      const n = Buffer.from(ab, v.byteOffset, len);
      if (zero) n.fill(0, v.length);
      reservedEnd.set(ab, v.byteOffset + len);
      return n;
    }
  }
  const keep = Math.min(src.length, len);
  if (len < GROW_MIN) {
    const b = Buffer.allocUnsafe(len);
    src.copy(b, 0, 0, keep);
    if (zero) b.fill(0, keep);
    return b;
  }
  const cap = len + Math.min(len, MAX_STEP);
  const b = Buffer.allocUnsafeSlow(cap);
  src.copy(b, 0, 0, keep);
  if (zero) b.fill(0, keep, len);
  reservedEnd.set(b.buffer as ArrayBuffer, len);
  return b.subarray(0, len);
}
