/**
 * DUMP, RESTORE, RESTORE-ASKING (and MIGRATE, src/engine/commands/migrate.ts): values in
 * Redis's serialization (src/rdb). DUMP writes Redis 7.0.15's payload (RDB 10 value encoding,
 * 2-byte version, CRC-64); RESTORE accepts payloads of RDB versions up to 11 (Redis 7.2's,
 * a deliberate leniency: 7.0 refuses 11) and every value encoding they may hold.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import type { Client } from '../client.js';
import type { Engine } from '../engine.js';
import type { Stored } from '../db.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { hashLimits, listFill, setLimits } from './typed-helpers.js';
import { DumpUnsupported, dumpPayload, type EncodeOptions } from '../../rdb/encode.js';
import { type DecodeLimits, readValue } from '../../rdb/decode.js';
import { RdbReader } from '../../rdb/reader.js';
import { Crc64 } from '../../rdb/crc64.js';
import { RdbError } from '../../rdb/errors.js';

/** Highest RDB version RESTORE accepts (7.2's; Redis 7.0 itself stops at 10). */
const RESTORE_MAX_VERSION = 11;

export const BAD_FORMAT = 'ERR Bad data format';
export const BAD_PAYLOAD = 'ERR DUMP payload version or checksum are wrong';

export function encodeOptions(eng: Engine): EncodeOptions {
  return { listFill: listFill(eng) };
}

export function decodeLimits(eng: Engine): DecodeLimits {
  return { hash: hashLimits(eng), set: setLimits(eng), listFill: listFill(eng) };
}

/** verifyDumpPayload: footer version and CRC-64. */
export function verifyPayload(p: Buffer): boolean {
  if (p.length < 10) return false;
  const ver = p[p.length - 10] | (p[p.length - 9] << 8);
  if (ver > RESTORE_MAX_VERSION) return false;
  return new Crc64().update(p, 0, p.length - 8).matchesLE(p, p.length - 8);
}

/** The value of a verified payload, or null when it is malformed. Never throws on bad input. */
export function payloadValue(p: Buffer, lim: DecodeLimits): Stored | null {
  try {
    const r = new RdbReader(p, 0, p.length - 10);
    const type = r.u8();
    return readValue(r, type, lim);
  } catch (e) {
    if (e instanceof RdbError || e instanceof RangeError) return null;
    throw e;
  }
}

// DUMP key
function dumpCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = c.db.read(argv.key(1), !c.noTouch);
  if (e === undefined) {
    out.nil();
    return;
  }
  let p: Buffer;
  try {
    p = dumpPayload(e.v, encodeOptions(c.engine));
  } catch (err) {
    if (err instanceof DumpUnsupported) {
      out.error(err.message);
      return;
    }
    throw err;
  }
  out.bulk(p);
}

/** Longest idle time kept (the LRU clock field holds about 2^29 seconds). */
const MAX_IDLE = 1 << 28;

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
function restoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  let replace = false;
  let absttl = false;
  let idle = -1n;
  let freq = -1n;
  for (let j = 4; j < argv.count; j++) {
    const more = argv.count - j - 1;
    if (argv.is(j, 'REPLACE')) {
      replace = true;
    } else if (argv.is(j, 'ABSTTL')) {
      absttl = true;
    } else if (argv.is(j, 'IDLETIME') && more >= 1 && freq === -1n) {
      const v = argv.int64(j + 1);
      if (v === null) return out.error(E.NOT_INTEGER);
      if (v < 0n) return out.error('ERR Invalid IDLETIME value, must be >= 0');
      idle = v;
      j++;
    } else if (argv.is(j, 'FREQ') && more >= 1 && idle === -1n) {
      const v = argv.int64(j + 1);
      if (v === null) return out.error(E.NOT_INTEGER);
      if (v < 0n || v > 255n) return out.error('ERR Invalid FREQ value, must be >= 0 and <= 255');
      freq = v;
      j++;
    } else {
      return out.error(E.SYNTAX);
    }
  }
  const db = c.db;
  const key = argv.key(1);
  if (!replace && db.get(key) !== undefined) return out.error('BUSYKEY Target key name already exists.');
  let ttl = argv.int64(2);
  if (ttl === null) return out.error(E.NOT_INTEGER);
  if (ttl < 0n) return out.error('ERR Invalid TTL value, must be >= 0');
  const payload = argv.view(3);
  if (!verifyPayload(payload)) return out.error(BAD_PAYLOAD);
  const v = payloadValue(payload, decodeLimits(c.engine));
  if (v === null) return out.error(BAD_FORMAT);
  const deleted = replace && db.get(key) !== undefined && db.delete(key);
  if (ttl !== 0n && !absttl) ttl += BigInt(c.engine.now);
  if (ttl !== 0n && ttl <= BigInt(c.engine.now)) {
    // Already expired: nothing is created (the old value, with REPLACE, is gone).
    void deleted;
    out.ok();
    return;
  }
  const e = db.add(key, v);
  if (ttl !== 0n) db.setExpireExact(e, ttl);
  if (idle >= 0n) {
    const live = db.get(key);
    if (live !== undefined) live.lru = c.engine.lruClock - Number(idle > BigInt(MAX_IDLE) ? BigInt(MAX_IDLE) : idle);
  }
  out.ok();
}

const DUMP_ROWS = [
  //   name             arity  flags                             keys        handler
  row('dump',              2,  F.READONLY,                       [1, 1, 1],  dumpCommand),
  row('restore',          -4,  F.WRITE | F.DENYOOM,              [1, 1, 1],  restoreCommand, { categories: ['dangerous'] }),
  row('restore-asking',   -4,  F.WRITE | F.DENYOOM,              [1, 1, 1],  restoreCommand, { categories: ['dangerous'] }),
];

export default family('dump', ['keyspace'], DUMP_ROWS);
