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
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { KF, type KeyRef } from '../keys.js';
import { hashLimits, listFill, setLimits } from './typed-helpers.js';
import { DumpUnsupported, type PayloadView, dumpPayload, dumpPayloadShared, type EncodeOptions } from '../../rdb/encode.js';
import { type DecodeLimits, readValue } from '../../rdb/decode.js';
import { RdbReader } from '../../rdb/reader.js';
import { Crc64 } from '../../rdb/crc64.js';
import { dropResident, fixed, makeResident } from '../../rdb/lzf.js';
import { RdbError } from '../../rdb/errors.js';
import { RdbSnapshot, functionCodes } from '../../rdb/file.js';
import { randomBytes } from 'node:crypto';
import { type MigrateRequest, type MigrateResult, migrateExchange, migrateExchangeSync } from '../../rdb/migrate-exchange.js';
import type { Db, Entry, Stored } from '../db.js';
import { cstr } from '../../bytes.js';
import { setLruOrLfu } from '../evict.js';
import { HashValue, trackVolatile } from '../ds/hash.js';
import { N } from '../notify.js';

/**
 * Highest RDB version RESTORE accepts: 7.4's (hashes with field TTLs), a deliberate leniency
 * (Redis 7.0 itself stops at 10).
 */
const RESTORE_MAX_VERSION = 12;

export const BAD_FORMAT = 'ERR Bad data format';
export const BAD_PAYLOAD = 'ERR DUMP payload version or checksum are wrong';

export function encodeOptions(eng: Engine): EncodeOptions {
  return { listFill: listFill(eng) };
}

/** decodeLimits' answer, for the engine and configuration generation it was made for. */
let limits: DecodeLimits | null = null;
let limitsEng: Engine | null = null;
let limitsGen = -1;

export function decodeLimits(eng: Engine): DecodeLimits {
  if (limits === null || eng !== limitsEng || eng.cfgGen !== limitsGen) {
    limits = { hash: hashLimits(eng), set: setLimits(eng), listFill: listFill(eng) };
    limitsEng = eng;
    limitsGen = eng.cfgGen;
  }
  return limits;
}

/**
 * restoreValue's answer for a payload whose footer version or CRC-64 is wrong (a symbol: any
 * number or string could be a stored value).
 */
const BAD_CHECKSUM: unique symbol = Symbol('bad checksum');

/**
 * The value of a RESTORE payload b[s, e) (argv's bytes, without a view of them): BAD_CHECKSUM
 * when its footer version or CRC-64 is wrong (verifyDumpPayload), null when it is malformed.
 * Never throws on bad input. perf: a payload of up to FIXED_SMALL bytes is copied into the
 * codec's memory once (makeResident): the CRC, the decompression and the listpack checks all
 * read that copy.
 */
function restoreValue(b: Buffer, s: number, e: number, lim: DecodeLimits): Stored | null | typeof BAD_CHECKSUM {
  if (e - s < 10) return BAD_CHECKSUM;
  const ver = b[e - 10] | (b[e - 9] << 8);
  if (ver > RESTORE_MAX_VERSION) return BAD_CHECKSUM;
  const n = e - s - 8;
  const at = makeResident(b, s, e);
  try {
    const crc = at >= 0 ? new Crc64().update(fixed.mem, at, at + n) : new Crc64().update(b, s, s + n);
    if (!crc.matchesLE(b, s + n)) return BAD_CHECKSUM;
    try {
      const r = new RdbReader(b, s, e - 10);
      const type = r.u8();
      return readValue(r, type, lim);
    } catch (err) {
      if (err instanceof RdbError || err instanceof RangeError) return null;
      throw err;
    }
  } finally {
    dropResident();
  }
}

// DUMP key
function dumpCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = c.db.read(argv.key(1), !c.noTouch);
  if (e === undefined) {
    out.nil();
    return;
  }
  let p: PayloadView;
  try {
    p = dumpPayloadShared(e.v, encodeOptions(c.engine));
  } catch (err) {
    if (err instanceof DumpUnsupported) {
      out.error(err.message);
      return;
    }
    throw err;
  }
  // The sink copies the bytes now (the memory is reused by the next payload).
  out.bulkBytes(p.buf, p.start, p.end);
}

/** Longest idle time kept (the LRU clock field holds about 2^29 seconds). */
const MAX_IDLE = 1 << 28;

/** TTLs up to this take the number path: plus any clock reading, still exact (below 2^53). */
const TTL_FAST = 2 ** 52;

/**
 * RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
 * (Redis's restoreCommand: options, BUSYKEY, TTL, payload checks, in that order; then the old
 * key deleted, `new` and `restore` events, or `del` alone when the TTL has already passed).
 * perf: one key lookup, no BigInt unless the TTL is beyond 2^52.
 */
function restoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  let replace = false;
  let absttl = false;
  let idle = -1;
  let freq = -1;
  for (let j = 4; j < argv.count; j++) {
    const more = argv.count - j - 1;
    if (argv.is(j, 'REPLACE')) {
      replace = true;
    } else if (argv.is(j, 'ABSTTL')) {
      absttl = true;
    } else if (argv.is(j, 'IDLETIME') && more >= 1 && freq === -1) {
      const v = argv.int64(j + 1);
      if (v === null) return out.error(E.NOT_INTEGER);
      if (v < 0n) return out.error('ERR Invalid IDLETIME value, must be >= 0');
      idle = v > BigInt(MAX_IDLE) ? MAX_IDLE : Number(v);
      j++;
    } else if (argv.is(j, 'FREQ') && more >= 1 && idle === -1) {
      const v = argv.int64(j + 1);
      if (v === null) return out.error(E.NOT_INTEGER);
      if (v < 0n || v > 255n) return out.error('ERR Invalid FREQ value, must be >= 0 and <= 255');
      freq = Number(v);
      j++;
    } else {
      return out.error(E.SYNTAX);
    }
  }
  const db = c.db;
  // With REPLACE the old key is deleted as it is, even if its TTL has passed (Redis's dbDelete:
  // no `expired` event); without, it is looked up as for a write (lookupKeyWrite: expires it).
  const old = replace ? db.peekArg(argv, 1) : db.getArg(argv, 1);
  if (!replace && old !== undefined) return out.error('BUSYKEY Target key name already exists.');
  let ttl = argv.int(2);
  let big = 0n;
  if (!(ttl >= 0 && ttl <= TTL_FAST)) {
    const v = argv.int64(2);
    if (v === null) return out.error(E.NOT_INTEGER);
    if (v < 0n) return out.error('ERR Invalid TTL value, must be >= 0');
    big = v;
    ttl = -1;
  }
  const v = restoreValue(argv.buf, argv.start[3], argv.end[3], decodeLimits(c.engine));
  if (v === BAD_CHECKSUM) return out.error(BAD_PAYLOAD);
  if (v === null) return out.error(BAD_FORMAT);
  const now = c.engine.now;
  // exp: the absolute expiry (0 = none), or -1 for `big`'s (beyond 2^52).
  let exp = ttl;
  let past: boolean;
  if (ttl < 0) {
    // C's long long arithmetic: ttl + now wraps past 2^63, and then counts as past.
    if (!absttl) big = BigInt.asIntN(64, big + BigInt(now));
    past = big <= BigInt(now);
  } else {
    if (ttl !== 0 && !absttl) exp += now;
    past = exp !== 0 && exp <= now;
  }
  const key = old !== undefined ? old.key : argv.key(1);
  if (past) {
    // Already expired: nothing is created; the old value, with REPLACE, is deleted.
    if (old !== undefined) {
      db.deleteEntry(old);
      db.event(N.GENERIC, 'del', key);
    }
    out.ok();
    return;
  }
  let e = db.recreate(old, key, v, exp > 0 ? exp : 0);
  if (exp < 0) {
    db.setExpireExact(e, big);
    e = db.peek(key)!;
  }
  if (v instanceof HashValue && v.volatile) trackVolatile(db, key, v);
  if (idle >= 0 || freq >= 0) setLruOrLfu(c.engine, e, freq, idle);
  db.event(N.GENERIC, 'restore', key);
  out.ok();
}

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw] [KEYS key ...]
function migrateCommand(c: Client, argv: Argv, out: ReplySink): void {
  let copy = false;
  let replace = false;
  let user: Buffer | null = null;
  let password: Buffer | null = null;
  let firstKey = 3;
  let numKeys = 1;
  for (let j = 6; j < argv.count; j++) {
    const more = argv.count - 1 - j;
    if (argv.is(j, 'COPY')) copy = true;
    else if (argv.is(j, 'REPLACE')) replace = true;
    else if (argv.is(j, 'AUTH')) {
      if (more < 1) return out.error(E.SYNTAX);
      password = argv.copy(++j);
    } else if (argv.is(j, 'AUTH2')) {
      if (more < 2) return out.error(E.SYNTAX);
      user = argv.copy(++j);
      password = argv.copy(++j);
    } else if (argv.is(j, 'KEYS')) {
      if (argv.len(3) !== 0) return out.error('ERR When using MIGRATE KEYS option, the key argument must be set to the empty string');
      firstKey = j + 1;
      numKeys = argv.count - j - 1;
      break;
    } else {
      return out.error(E.SYNTAX);
    }
  }
  // Both are C longs in Redis 7.0 (getLongFromObjectOrReply).
  const timeoutBig = argv.int64(5);
  const dbidBig = argv.int64(4);
  if (timeoutBig === null || dbidBig === null) return out.error(E.NOT_INTEGER);
  let timeout = Number(timeoutBig);
  const dbid = Number(dbidBig);
  if (timeout <= 0) timeout = 1000;
  if (timeout > 2147483647) timeout = 2147483647; // the largest delay a Node timer takes
  const db = c.db;
  const items: MigrateItem[] = [];
  for (let j = 0; j < numKeys; j++) {
    const key = argv.key(firstKey + j);
    const e = db.read(key, !c.noTouch);
    if (e !== undefined) items.push({ key, entry: e, v: e.v, payload: null });
  }
  if (items.length === 0) return out.simple('NOKEY');
  // Serialize now (the values as they are at this point).
  const opt = encodeOptions(c.engine);
  try {
    for (const it of items) it.payload = dumpPayload(it.v, opt);
  } catch (err) {
    if (err instanceof DumpUnsupported) return out.error(err.message);
    throw err;
  }
  const host = argv.str(1);
  const port = argv.int(2);
  const mo = { copy, replace, user, password };
  if (c.transport.kind !== 'tcp' || c.engine.inExec) {
    // Inside EXEC, a script or a REST request the command completes in its turn: the exchange
    // blocks the engine, as Redis's MIGRATE always does (bounded by the timeout).
    const { req, sent } = request(host, port, dbid, timeout, items, mo);
    const reply = finish(db, sent, mo, migrateExchangeSync(req));
    return reply === null ? out.ok() : reply.startsWith('+') ? out.simple(reply.slice(1)) : out.error(reply);
  }
  // A client's own MIGRATE: it waits, the others are served meanwhile.
  c.blocked = true;
  const { req, sent } = request(host, port, dbid, timeout, items, mo);
  void migrateExchange(req).then((res) => {
    const reply = finish(db, sent, mo, res);
    c.blocked = false;
    if (c.closed) return;
    if (reply === null) out.ok();
    else if (reply.startsWith('+')) out.simple(reply.slice(1));
    else out.error(reply);
    c.transport.requestFlush();
    c.transport.resume();
  });
}

interface MigrateItem {
  key: string;
  entry: Entry;
  v: Entry['v'];
  payload: Buffer | null;
}

interface MigrateOptions {
  copy: boolean;
  replace: boolean;
  user: Buffer | null;
  password: Buffer | null;
}

function bulk(parts: Buffer[], v: Buffer | string): void {
  const b = typeof v === 'string' ? Buffer.from(v, 'latin1') : v;
  parts.push(Buffer.from(`$${b.length}\r\n`), b, CRLF);
}
const CRLF = Buffer.from('\r\n');

/** The commands for the target: AUTH, then a RESTORE per key still alive (TTLs as of now). */
function request(host: string, port: number, dbid: number, timeout: number, items: MigrateItem[], opt: MigrateOptions): { req: MigrateRequest; sent: MigrateItem[] } {
  let auth: Buffer | null = null;
  if (opt.password !== null) {
    const parts: Buffer[] = [Buffer.from(opt.user !== null ? '*3\r\n' : '*2\r\n')];
    bulk(parts, 'AUTH');
    if (opt.user !== null) bulk(parts, opt.user);
    bulk(parts, opt.password);
    auth = Buffer.concat(parts);
  }
  const now = Date.now();
  const sent: MigrateItem[] = [];
  const parts: Buffer[] = [];
  for (const it of items) {
    let ttl = 0;
    const exp = it.entry.exp;
    if (exp !== 0) {
      ttl = exp - now;
      if (ttl < 0) continue; // expired meanwhile
      if (ttl < 1) ttl = 1;
    }
    sent.push(it);
    parts.push(Buffer.from(opt.replace ? '*5\r\n' : '*4\r\n'));
    bulk(parts, 'RESTORE');
    bulk(parts, it.key);
    bulk(parts, String(ttl));
    bulk(parts, it.payload!);
    if (opt.replace) bulk(parts, 'REPLACE');
  }
  return { req: { host, port, dbid, timeout, auth, restores: Buffer.concat(parts), count: sent.length }, sent };
}

/** The target's answers: null = +OK, else the reply; keys restored there are deleted here unless COPY. */
function finish(db: Db, sent: MigrateItem[], opt: MigrateOptions, res: MigrateResult): string | null {
  if ('error' in res) return res.error;
  let error: string | null = null;
  for (let i = 0; i < sent.length; i++) {
    const line = res.lines[i];
    if (res.auth.startsWith('-') || res.select.startsWith('-') || line.startsWith('-')) {
      if (error === null) {
        const from = res.auth.startsWith('-') ? res.auth : res.select.startsWith('-') ? res.select : line;
        error = `ERR Target instance replied with error: ${from.slice(1)}`;
      }
    } else if (!opt.copy) {
      // Delete the local key unless it changed while the target was restoring it.
      const it = sent[i];
      const e = db.get(it.key);
      if (e !== undefined && e.v === it.v) db.delete(it.key);
    }
  }
  return error;
}

/** MIGRATE's keys (Redis's migrateGetKeys): the key argument, or everything after KEYS. */
function migrateKeys(argv: Argv): KeyRef[] {
  const flags = KF.RW | KF.ACCESS | KF.DELETE;
  for (let j = 6; j < argv.count; j++) {
    if (argv.is(j, 'KEYS')) return Array.from({ length: argv.count - j - 1 }, (_, i) => ({ pos: j + 1 + i, flags }));
    if (argv.is(j, 'AUTH')) j++;
    else if (argv.is(j, 'AUTH2')) j += 2;
  }
  return [{ pos: 3, flags }];
}

// SYNC / PSYNC replicationid offset: a full resynchronization's RDB snapshot, produced in
// chunks between other clients' commands, sent with an EOF mark (diskless format), after
// which the connection is closed: enough for `redis-cli --rdb` and backups; no replication
// stream follows (a replica would resync in a loop).
function syncCommand(c: Client, argv: Argv, out: ReplySink): void {
  const raw = (out as { raw?: (b: Buffer) => void }).raw;
  if (c.transport.kind !== 'tcp' || raw === undefined || c.engine.inExec) {
    return out.error('ERR SYNC and PSYNC are only served to TCP connections, outside MULTI');
  }
  const write = raw.bind(out);
  if (argv.count === 3) write(Buffer.from(`+FULLRESYNC ${c.engine.replId} 0\r\n`));
  const mark = randomBytes(20).toString('hex');
  write(Buffer.from(`$EOF:${mark}\r\n`));
  syncStats.full++;
  const snap = new RdbSnapshot(c.engine, encodeOptions(c.engine), functionCodes(c.engine));
  c.blocked = true;
  const step = (): void => {
    if (c.closed) {
      snap.abort();
      return;
    }
    // Back-pressure: wait while the client has not read what was sent.
    if (c.transport.outputBytes() > 8 * 1024 * 1024) {
      setTimeout(step, 2);
      return;
    }
    const chunk = snap.next();
    if (chunk !== null) {
      write(chunk);
      c.transport.requestFlush();
      setImmediate(step);
      return;
    }
    syncStats.preserved += snap.preserved;
    if (snap.completedAtOnce) syncStats.completedAtOnce++;
    write(Buffer.from(mark, 'latin1'));
    c.transport.requestFlush();
    c.transport.close(true);
  };
  setImmediate(step);
}

// REPLCONF option value ...: acknowledged (rdb-only, listening-port, capa: what redis-cli
// --rdb and replicas send before SYNC).
/** The REPLCONF options Redis 7.0 knows; we accept them and act on none (no replication). */
const REPLCONF_OPTIONS = new Set(['listening-port', 'ip-address', 'capa', 'ack', 'getack', 'rdb-only']);

function replconfCommand(_c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count % 2 === 0) return out.error(E.SYNTAX);
  for (let i = 1; i < argv.count; i += 2) {
    if (!REPLCONF_OPTIONS.has(argv.str(i).toLowerCase())) {
      return out.error(`ERR Unrecognized REPLCONF option: ${cstr(argv.str(i))}`);
    }
  }
  out.ok();
}

/**
 * INFO sync_full, rdb_snapshot_keys_preserved (keys written ahead of a snapshot's walk,
 * RdbSnapshot) and rdb_snapshot_completed_at_once (snapshots a keyless write made complete in
 * one turn).
 */
export const syncStats = { full: 0, preserved: 0, completedAtOnce: 0 };

const DUMP_ROWS = [
  //   name             arity  flags                             keys        handler
  row('dump',              2,  F.READONLY,                       [1, 1, 1],  dumpCommand),
  row('restore',          -4,  F.WRITE | F.DENYOOM,              [1, 1, 1],  restoreCommand, { categories: ['dangerous'] }),
  row('restore-asking',   -4,  F.WRITE | F.DENYOOM,              [1, 1, 1],  restoreCommand, { categories: ['dangerous'] }),
  row('migrate',          -6,  F.WRITE | F.MOVABLE_KEYS, [3, 3, 1], migrateCommand, { categories: ['dangerous'], getKeys: migrateKeys }),
];

export default family('dump', ['keyspace'], DUMP_ROWS);

/** The replication handshake: no @keyspace (Redis's server group). */
export const replication = family('replication', [], [
  row('sync',              1,  F.ADMIN | F.NOSCRIPT | F.NO_MULTI | F.NO_REST, [0, 0, 0], syncCommand),
  row('psync',            -3,  F.ADMIN | F.NOSCRIPT | F.NO_MULTI | F.NO_REST, [0, 0, 0], syncCommand),
  row('replconf',         -1,  F.ADMIN | F.NOSCRIPT | F.LOADING | F.STALE | F.ALLOW_BUSY | F.NO_REST, [0, 0, 0], replconfCommand),
]);
