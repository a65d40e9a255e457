/**
 * Helpers shared by the hash, list and set command families: key lookups with Redis's
 * read/write semantics, integer arguments with Redis's range errors, cached encoding limits,
 * and the output guard for unbounded replies.
 */
import type { Argv } from '../../resp/argv.js';
import type { Client } from '../client.js';
import type { Entry } from '../db.js';
import type { Engine } from '../engine.js';
import type { HashLimits } from '../ds/hash.js';
import type { SetLimits } from '../ds/set.js';

export const LONG_MAX = 9223372036854775807n;

/** lookupKeyWrite: no hit/miss statistics, refreshes the LRU clock unless CLIENT NO-TOUCH. */
export function lookupWrite(c: Client, key: string): Entry | undefined {
  const e = c.db.get(key);
  if (e !== undefined && !c.noTouch) c.db.touch(e);
  return e;
}

/** lookupKeyRead: hit/miss statistics and LRU. */
export function lookupRead(c: Client, key: string): Entry | undefined {
  return c.db.read(key, !c.noTouch);
}

/**
 * getLongFromObject: a signed 64-bit integer argument as a number (exact within ±2^53; beyond
 * that, a number of the right magnitude, which is all range and index arithmetic needs).
 * NaN when the argument is not an integer.
 */
export function longArg(argv: Argv, i: number): number {
  const v = argv.int(i);
  if (v === v) return v;
  const big = argv.int64(i);
  return big === null ? NaN : Number(big);
}

/** True when the argument is exactly LONG_MIN (-2^63), which -LONG_MAX..LONG_MAX ranges reject. */
export function isLongMin(argv: Argv, i: number): boolean {
  return argv.len(i) === 20 && argv.int64(i) === -9223372036854775808n;
}

/** getRangeLongFromObjectOrReply's default message. */
export function rangeError(min: string, max: string): string {
  return `ERR value is out of range, value must between ${min} and ${max}`;
}

export const OUT_OF_RANGE_POSITIVE = 'ERR value is out of range, must be positive';

// ---------------------------------------------------------------- encoding limits (cached)

let hashRaw: [string | undefined, string | undefined] = [undefined, undefined];
let hashLim: HashLimits = { maxEntries: 512, maxValue: 64 };

export function hashLimits(eng: Engine): HashLimits {
  const a = eng.config.get('hash-max-listpack-entries');
  const b = eng.config.get('hash-max-listpack-value');
  if (a !== hashRaw[0] || b !== hashRaw[1]) {
    hashRaw = [a, b];
    hashLim = { maxEntries: Number(a ?? 512), maxValue: Number(b ?? 64) };
  }
  return hashLim;
}

let setRaw: [string | undefined, string | undefined, string | undefined] = [undefined, undefined, undefined];
let setLim: SetLimits = { maxIntset: 512, maxEntries: 0, maxValue: 0 };

/**
 * Set encodings as Redis 7.0: intset for integers, hashtable for anything else (listpack
 * sets and their set-max-listpack-* options came with 7.2).
 */
export function setLimits(eng: Engine): SetLimits {
  const a = eng.config.get('set-max-intset-entries');
  if (a !== setRaw[0]) {
    setRaw = [a, undefined, undefined];
    setLim = { maxIntset: Number(a ?? 512), maxEntries: 0, maxValue: 0 };
  }
  return setLim;
}

let fillRaw: string | undefined;
let fill = -2;

/** list-max-listpack-size */
export function listFill(eng: Engine): number {
  const a = eng.config.get('list-max-listpack-size');
  if (a !== fillRaw) {
    fillRaw = a;
    fill = Number(a ?? -2);
  }
  return fill;
}

// ---------------------------------------------------------------- unbounded replies

/** Output bytes past which a reply of caller-chosen size is abandoned. */
const OUTPUT_GUARD = 64 * 1024 * 1024;
/**
 * Elements past which it is abandoned: the command runs synchronously, so this also bounds how
 * long one call holds the server (about 0.1 s), and it bounds transports that do not
 * report buffered output: REST builds its JSON in memory, and a script's redis.call turns every
 * element into a Lua value (about 2.5 µs each: 4M took 10 s and 600 MB), hence its lower cap.
 */
const ELEMENT_GUARD = { tcp: 1024 * 1024, http: 1024 * 1024, internal: 64 * 1024 } as const;

/**
 * For replies whose length the client chooses (HRANDFIELD/SRANDMEMBER/ZRANDMEMBER with a huge
 * negative count): Redis streams them until the client's output limit closes the connection
 * (CLIENT_CLOSE_ASAP). We stop at OUTPUT_GUARD of pending output or ELEMENT_GUARD elements
 * and close the connection, so one request can neither exhaust the server's memory nor stall
 * it. Check it every few thousand elements.
 */
export function outputExhausted(c: Client, written: number): boolean {
  if (c.closed) return true;
  // The element cap covers transports that do not report buffered output.
  if (c.transport.outputBytes() > OUTPUT_GUARD || written >= ELEMENT_GUARD[c.transport.kind]) {
    c.transport.close(false);
    return true;
  }
  return false;
}
