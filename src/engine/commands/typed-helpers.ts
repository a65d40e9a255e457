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

/** lookupWrite() of the key argv[i], found from its bytes (perf: no key string; Db.peekArg). */
export function lookupWriteArg(c: Client, argv: Argv, i: number): Entry | undefined {
  const e = c.db.getArg(argv, i);
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

// perf: each write of a collection reads its limits; looking the options up (two Map lookups
// of string keys) cost ~3% of an LPUSH. They are re-read only when some option changed
// (Engine.cfgGen counts CONFIG SETs) or another engine asks (tests run several).
let hashEng: Engine | null = null;
let hashGen = -1;
let hashLim: HashLimits = { maxEntries: 512, maxValue: 64 };

export function hashLimits(eng: Engine): HashLimits {
  if (eng !== hashEng || eng.cfgGen !== hashGen) {
    hashEng = eng;
    hashGen = eng.cfgGen;
    hashLim = {
      maxEntries: Number(eng.config.get('hash-max-listpack-entries') ?? 512),
      maxValue: Number(eng.config.get('hash-max-listpack-value') ?? 64),
    };
  }
  return hashLim;
}

let setEng: Engine | null = null;
let setGen = -1;
let setLim: SetLimits = { maxIntset: 512, maxEntries: 0, maxValue: 0 };

/**
 * Set encodings as Redis 7.0: intset for integers, hashtable for anything else (listpack
 * sets and their set-max-listpack-* options came with 7.2).
 */
export function setLimits(eng: Engine): SetLimits {
  if (eng !== setEng || eng.cfgGen !== setGen) {
    setEng = eng;
    setGen = eng.cfgGen;
    setLim = { maxIntset: Number(eng.config.get('set-max-intset-entries') ?? 512), maxEntries: 0, maxValue: 0 };
  }
  return setLim;
}

let fillEng: Engine | null = null;
let fillGen = -1;
let fill = -2;

/** list-max-listpack-size */
export function listFill(eng: Engine): number {
  if (eng !== fillEng || eng.cfgGen !== fillGen) {
    fillEng = eng;
    fillGen = eng.cfgGen;
    fill = Number(eng.config.get('list-max-listpack-size') ?? -2);
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
