/**
 * Byte-buffer helpers shared by the append-only encoders (RESP-to-JSON writer, store packers,
 * journal frames, script results).
 */

/**
 * A buffer of at least `need` bytes holding the first `used` bytes of `buf`: `buf` itself when
 * it is big enough, else a copy into one twice as large as needed steps (amortised O(1) appends).
 */
export function grown<B extends Buffer>(buf: B, used: number, need: number): B {
  if (need <= buf.length) return buf;
  let size = buf.length * 2;
  while (size < need) size *= 2;
  const b = Buffer.allocUnsafe(size);
  buf.copy(b, 0, 0, used);
  return b as B;
}

/** A string as C code reads it: up to its first NUL byte (Redis echoes names in errors so). */
export function cstr(s: string): string {
  const i = s.indexOf('\0');
  return i < 0 ? s : s.slice(0, i);
}
