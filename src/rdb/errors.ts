/** A malformed payload or RDB file (the command layer answers Redis's "Bad data format"). */
export class RdbError extends Error {
  /** Byte offset of the damage in the file, when known. */
  offset = -1;
}
