/**
 * RDB files: reading a whole file (Redis 2.8 to 7.2: RDB versions 6 to 11) for import, and
 * writing one (RDB version 10, Redis 7.0's layout) incrementally for export and SYNC.
 *
 * Reading validates everything before anything is applied (CRC, every value deeply, SELECT
 * bounds): a damaged file is refused with the offset of the damage and nothing is imported.
 * A key given twice in one file (which Redis refuses) is not looked for: the later one wins
 * (perf: a set of a million fresh key strings cost more than the rest of the parse).
 */
import type { Engine } from '../engine/engine.js';
import { T, type Db, type Entry, type Stored, type TypedValue } from '../engine/db.js';
import type { Client } from '../engine/client.js';
import type { CommandDef } from '../engine/command.js';
import type { Argv } from '../resp/argv.js';
import { commandKeys } from '../engine/keys.js';
import { hashBytes, hashKey, type KeyTable } from '../engine/keytable.js';
import { P, lfuCounter, parsePolicy } from '../engine/evict.js';
import { Crc64 } from './crc64.js';
import { checkValue, checkedCount, type DecodeLimits } from './decode.js';
import { DumpUnsupported, needsHfeVersion, writeValue, type EncodeOptions } from './encode.js';
import { RdbError } from './errors.js';
import { RdbReader } from './reader.js';
import { ARENA_MAX_KEY, ARENA_MAX_VALUE } from '../engine/arena.js';
import { RDB_OP, RDB_TYPE, RDB_VERSION, RDB_VERSION_HFE, RdbWriter } from './writer.js';
import { scripting } from '../engine/scripting/host.js';

/**
 * The keys of a file, as parallel columns (perf: one object per key for a million keys made
 * the import spend a quarter of its time in garbage collection). The parse checks each value
 * (decode.ts checkValue) and keeps only where its record is (`at`); the insert reads it again
 * in key-table order (cli.ts), so that a key's objects lie together in the order the garbage
 * collector's marker walks the table (perf: built in file order and held until the insert,
 * they were marked at a cache miss each: the full GC after an import of 1M keys took 4-5x
 * longer).
 */
export class RdbKeys {
  length = 0;
  db = new Uint32Array(1024);
  /** File offset of the record's key (its value follows). */
  at = new Float64Array(1024);
  /** The record's value type (RDB_TYPE). */
  type = new Uint8Array(1024);
  /** hashKey(key): the key table's hash of the key (its bucket, before the insert). */
  hash = new Int32Array(1024);
  /** Absolute expiry (ms), 0 = none. */
  exp = new Float64Array(1024);
  /** decode.ts checkedCount of the record's value (0: read it with readValue). */
  count = new Uint32Array(1024);
  /** Idle seconds (RDB_OPCODE_IDLE) by key index, when given. */
  readonly idle = new Map<number, number>();
  /** LFU counters (RDB_OPCODE_FREQ) by key index, when given. */
  readonly freq = new Map<number, number>();
  /** Keys per db index. */
  readonly perDb: number[] = [];
  /** Keys per db index that fit the compact tier (a short plain string without TTL: Db.restoreStored). */
  readonly compactPerDb: number[] = [];

  /**
   * Room for `n` more keys (RESIZEDB's count, bounded by the caller by the bytes left): perf,
   * the columns of a million keys grown by doubling were garbage the size of the columns.
   */
  reserve(n: number): void {
    this.grow(this.length + n);
  }

  private grow(want: number): void {
    if (want <= this.at.length) return;
    const grow = <A extends Uint32Array | Float64Array | Uint8Array | Int32Array>(a: A, b: A): A => {
      b.set(a.subarray(0, this.length));
      return b;
    };
    this.db = grow(this.db, new Uint32Array(want));
    this.at = grow(this.at, new Float64Array(want));
    this.type = grow(this.type, new Uint8Array(want));
    this.hash = grow(this.hash, new Int32Array(want));
    this.exp = grow(this.exp, new Float64Array(want));
    this.count = grow(this.count, new Uint32Array(want));
  }

  /** A record whose key is `keyLength` bytes of hash `hash` (hashKey). */
  push(db: number, keyLength: number, hash: number, at: number, type: number, value: Stored | null, count: number, exp: number, idle: number, freq = -1): void {
    const i = this.length;
    if (i === this.at.length) this.grow(2 * i);
    this.length++;
    this.perDb[db] = (this.perDb[db] ?? 0) + 1;
    if (exp === 0 && keyLength <= ARENA_MAX_KEY && (typeof value === 'number' || (typeof value === 'string' && value.length <= ARENA_MAX_VALUE))) {
      this.compactPerDb[db] = (this.compactPerDb[db] ?? 0) + 1;
    }
    this.db[i] = db;
    this.at[i] = at;
    this.type[i] = type;
    this.hash[i] = hash;
    this.exp[i] = exp;
    this.count[i] = count;
    if (idle >= 0) this.idle.set(i, idle);
    if (freq >= 0) this.freq.set(i, freq);
  }
}

/** Kinds of a staged value's bytes. */
export const STAGED_FILE = 0;
export const STAGED_LZF = 1;
export const STAGED_INT = 2;

/** Longest LZF input of a staged value (its field in a record's last word has 14 bits). */
const STAGED_LZF_MAX = 0x3fff;

/**
 * The file's plain-string records that may go to the compact tier (no TTL, no LRU/LFU data, a
 * raw key and a value of at most 255 bytes each), held as byte ranges, not as JS strings (perf:
 * a million key and value strings, all alive until the insert, were the import's GC work).
 * Keys and raw values stay in the file's Buffer; LZF-compressed values too: the parse
 * checks them (lzfCheck: no output), the insert decompresses them straight from the file (perf: a side
 * Buffer of their decompressed bytes, doubled as it grew, was 130 MB of external memory,
 * whose pressure started a full mark of the whole heap during the import); integer-encoded
 * ones are kept as numbers.
 */
export class StagedStrings {
  n = 0;
  /**
   * Per record, W words: keys of the other columns before it, db, key offset, value offset
   * (an LZF value's compressed bytes), key length | value length << 8 | kind << 16 | LZF input
   * length << 18.
   */
  w = new Uint32Array(0);
  /** The value of a STAGED_INT record. */
  num = new Float64Array(0);

  constructor(readonly file: Buffer) {}

  /**
   * Room for `n` more records (RESIZEDB's count, as RdbKeys.reserve: most keys of a file are
   * such strings; 28 bytes each for the import's duration). perf: grown by doubling, the copies
   * and the garbage were a quarter of the parse (309 -> 230 ms CPU).
   */
  reserve(n: number): void {
    this.grow(this.n + n);
  }

  private grow(cap: number): void {
    if (cap * W <= this.w.length) return;
    const w = new Uint32Array(cap * W);
    w.set(this.w);
    this.w = w;
    const f = new Float64Array(cap);
    f.set(this.num);
    this.num = f;
  }

  push(before: number, db: number, ks: number, kl: number, vs: number, vl: number, kind: number, num: number, clen = 0): void {
    const i = this.n++;
    if (i * W === this.w.length) this.grow(Math.max(1024, 2 * i));
    const o = i * W;
    const w = this.w;
    w[o] = before;
    w[o + 1] = db;
    w[o + 2] = ks;
    w[o + 3] = vs;
    w[o + 4] = (kl | (vl << 8) | (kind << 16) | (clen << 18)) >>> 0;
    this.num[i] = num;
  }

  before(i: number): number {
    return this.w[i * W];
  }

  db(i: number): number {
    return this.w[i * W + 1];
  }

  keyStart(i: number): number {
    return this.w[i * W + 2];
  }

  keyLength(i: number): number {
    return this.w[i * W + 4] & 0xff;
  }

  valueStart(i: number): number {
    return this.w[i * W + 3];
  }

  valueLength(i: number): number {
    return (this.w[i * W + 4] >>> 8) & 0xff;
  }

  kind(i: number): number {
    return (this.w[i * W + 4] >>> 16) & 3;
  }

  /** The length of a STAGED_LZF record's compressed bytes (at valueStart). */
  lzfLength(i: number): number {
    return this.w[i * W + 4] >>> 18;
  }

  /** Record i's key as a latin1 string. */
  keyString(i: number): string {
    const s = this.keyStart(i);
    return this.file.latin1Slice(s, s + this.keyLength(i));
  }
}

/** Words per staged record. */
const W = 5;

/**
 * Stage the string record at r.p (key, then value) if it is a plain one (see StagedStrings);
 * false with r.p unchanged when it is not, or when anything about it is unusual (the generic
 * path then reads it, and reports any damage with its offset).
 */
function stageString(r: RdbReader, st: StagedStrings, before: number, db: number): boolean {
  const b = r.b;
  const end = b.length;
  let p = r.p;
  if (p + 2 > end) return false;
  let c = b[p];
  let kl: number;
  if (c < 0x40) kl = c, p += 1;
  else if (c >> 6 === 1) kl = ((c & 0x3f) << 8) | b[p + 1], p += 2;
  else return false;
  const ks = p;
  if (kl > ARENA_MAX_KEY || ks + kl >= end) return false;
  p = ks + kl;
  c = b[p];
  let vl: number;
  if (c < 0x40) vl = c, p += 1;
  else if (c >> 6 === 1) {
    if (p + 1 >= end) return false;
    vl = ((c & 0x3f) << 8) | b[p + 1];
    p += 2;
  } else if (c === 0xc0 || c === 0xc1 || c === 0xc2) {
    // RDB_ENC_INT8/16/32: a canonical integer.
    const n = c === 0xc0 ? 1 : c === 0xc1 ? 2 : 4;
    if (p + 1 + n > end) return false;
    const v = n === 1 ? b.readInt8(p + 1) : n === 2 ? b.readInt16LE(p + 1) : b.readInt32LE(p + 1);
    st.push(before, db, ks, kl, 0, 0, STAGED_INT, v);
    r.p = p + 1 + n;
    return true;
  } else if (c === 0xc3) {
    // RDB_ENC_LZF: two lengths, then the compressed bytes.
    const at = r.p;
    r.p = p + 1;
    const len = r.checkedLzf(ARENA_MAX_VALUE);
    const clen = r.lzfClen;
    if (len < 0 || clen > STAGED_LZF_MAX) {
      r.p = at;
      return false;
    }
    const cs = r.p;
    st.push(before, db, ks, kl, cs, len, STAGED_LZF, 0, clen);
    r.p = cs + clen;
    return true;
  } else return false;
  if (vl > ARENA_MAX_VALUE || p + vl > end) return false;
  st.push(before, db, ks, kl, p, vl, STAGED_FILE, 0);
  r.p = p + vl;
  return true;
}

export interface RdbContents {
  version: number;
  keys: RdbKeys;
  /** Function library codes (RDB_OPCODE_FUNCTION2). */
  functions: Buffer[];
  aux: Map<string, string>;
  /** Keys skipped because they were already expired (as a master loading its RDB does). */
  expired: number;
  /** Plain-string records kept as bytes (in file order with `keys` by their `before`). */
  staged: StagedStrings;
}

/** Parse and validate a whole RDB file. Throws RdbError (with `offset`) on any damage. */
export function parseRdb(b: Buffer, lim: DecodeLimits, dbCount: number, now: number): RdbContents {
  const r = new RdbReader(b);
  if (b.length < 9 || b.latin1Slice(0, 5) !== 'REDIS') r.fail('not an RDB file (no REDIS signature)');
  const verText = b.latin1Slice(5, 9);
  const version = /^\d{4}$/.test(verText) ? Number(verText) : NaN;
  if (!(version >= 1 && version <= 12)) r.fail(`unsupported RDB version ${verText}`);
  r.p = 9;
  const out: RdbContents = { version, keys: new RdbKeys(), functions: [], aux: new Map(), expired: 0, staged: new StagedStrings(b) };
  // Offsets are kept as uint32.
  const stage = b.length < 2 ** 32;
  let db = 0;
  let exp = 0;
  let idle = -1;
  let freq = -1;
  for (;;) {
    const at = r.p;
    const op = r.u8();
    if (op === RDB_OP.EOF) {
      if (version >= 5) {
        r.need(8);
        const zero = b.readBigUInt64LE(r.p) === 0n;
        if (!zero && !new Crc64().update(b, 0, r.p).matchesLE(b, r.p)) {
          const e = new RdbError('wrong RDB checksum');
          e.offset = r.p;
          throw e;
        }
        r.p += 8;
      }
      if (r.p !== b.length) r.fail('data after the end of the RDB');
      return out;
    }
    switch (op) {
      case RDB_OP.AUX: {
        const k = r.latin1();
        out.aux.set(k, r.latin1());
        continue;
      }
      case RDB_OP.RESIZEDB: {
        const n = r.len();
        r.len();
        // A key takes at least 3 bytes: the hint cannot make us allocate past the file.
        out.keys.reserve(Math.min(n, Math.floor((b.length - r.p) / 3)));
        // (At most 4M up front: past that the records are grown, a false hint costs no more.)
        out.staged.reserve(Math.min(n, Math.floor((b.length - r.p) / 3), 1 << 22));
        continue;
      }
      case RDB_OP.SELECTDB:
        db = r.len();
        if (db >= dbCount) {
          r.p = at;
          r.fail(`SELECT ${db}: this server has ${dbCount} databases`);
        }
        continue;
      case RDB_OP.EXPIRETIME_MS:
        exp = r.ms();
        continue;
      case RDB_OP.EXPIRETIME:
        exp = r.u32le() * 1000;
        continue;
      case RDB_OP.IDLE:
        idle = r.len();
        continue;
      case RDB_OP.FREQ:
        freq = r.u8();
        continue;
      case RDB_OP.FUNCTION2:
        out.functions.push(Buffer.from(r.string()));
        continue;
      case RDB_OP.FUNCTION_PRE_GA:
        r.p = at;
        return r.fail('functions in the pre-GA (7.0 release candidate) format are not supported');
      case RDB_OP.MODULE_AUX:
        r.p = at;
        return r.fail('module auxiliary data: no matching module');
      default:
        break;
    }
    // A key-value pair of type `op`.
    if (op === RDB_TYPE.STRING && exp === 0 && idle < 0 && freq < 0 && stage && stageString(r, out.staged, out.keys.length, db)) {
      out.keys.perDb[db] = (out.keys.perDb[db] ?? 0) + 1;
      continue;
    }
    const kat = r.p;
    // A short raw key (the usual one) hashed from its bytes (perf: no string per record, the
    // insert makes the one it keeps); any other form, or one past the end, through latin1().
    let keyLength: number;
    let hash: number;
    const c = b[kat];
    if (c < 0x40 && kat + 1 + c <= b.length) {
      keyLength = c;
      hash = hashBytes(b, kat + 1, kat + 1 + c);
      r.p = kat + 1 + c;
    } else {
      const key = r.latin1();
      keyLength = key.length;
      hash = hashKey(key);
    }
    let value: Stored | null;
    const vat = r.p;
    try {
      value = checkValue(r, op, lim, exp !== 0);
    } catch (e) {
      if (e instanceof RdbError && e.offset < 0) e.offset = vat;
      if (e instanceof RdbError) {
        r.p = kat;
        e.message = `key ${JSON.stringify(r.latin1().slice(0, 64))}: ${e.message}`;
      }
      throw e;
    }
    if (exp !== 0 && exp < now) out.expired++;
    else out.keys.push(db, keyLength, hash, kat, op, value, checkedCount, exp, idle, freq);
    exp = 0;
    idle = -1;
    freq = -1;
  }
}

/** The snapshots being produced, per engine (their beforeWrite / beforeKeyChange hooks). */
const active = new Map<Engine, Set<RdbSnapshot>>();

function hookFor(eng: Engine): (c: Client, def: CommandDef, argv: Argv) => void {
  return (c, def, argv) => {
    const set = active.get(eng);
    if (set !== undefined) for (const s of set) s.beforeWrite(c, def, argv);
  };
}

function changeHookFor(eng: Engine): (db: Db, key: string) => void {
  return (db, key) => {
    const set = active.get(eng);
    if (set !== undefined) for (const s of set) s.beforeKeyChange(db, key);
  };
}

/**
 * Keyless write commands that change no key of the file: functions are taken when the
 * snapshot starts, search indexes are not in it, FLUSHALL/FLUSHDB/SWAPDB move whole tables
 * (the snapshot follows its tables, see RdbSnapshot). Any other keyless write completes the
 * file first.
 */
const KEYLESS_SAFE = new Set(['flushall', 'flushdb', 'swapdb', 'function|load', 'function|delete', 'function|flush', 'function|restore']);

/** Bytes per chunk at most (and time, see next()): what one event-loop turn produces. */
const CHUNK_BYTES = 256 * 1024;

/** Keys a walk step takes from the table at a time. */
const STEP_KEYS = 64;

/**
 * An RDB file of the whole dataset as it was when the snapshot was created, produced a chunk
 * at a time (`next`), each chunk within a small time budget so that the server keeps serving
 * between chunks.
 *
 * One point in time while writes continue (copy-on-write at key granularity):
 *  - The snapshot walks the key tables (KeyTable objects) the dbs had when it started, by
 *    identity: SWAPDB exchanges tables between dbs, and the walk writes each under the db
 *    index it had; FLUSHALL/FLUSHDB give the db a fresh table (Db.flush) and leave the old one,
 *    whose entries nothing else reaches any more, to the walk. Both cost O(1).
 *  - Until the file is complete, every write command calls `beforeWrite` first
 *    (Engine.beforeWrite, from dispatch's call(): clients, EXEC, scripts, REST): each key it
 *    names (MOVE's and COPY's target in their target db too) that the walk has not written is
 *    written at once, in its state before the command, and skipped when the walk reaches it; a
 *    key that did not exist is only marked, so a key created later is not written.
 *  - Keys that change or go away outside a command's own keys (active and lazy expiry,
 *    eviction, MIGRATE's deletion after the target answered, hash field expiry) are saved the
 *    same way first (Engine.beforeKeyChange, from Db.aboutToChange and Db's removal); keys
 *    DEBUG POPULATE creates (not a write command) are marked absent (Db.aboutToCreate).
 *  - A keyless write not in KEYLESS_SAFE completes the whole file first (none today).
 * The RDB format does not order keys, so keys written early only need their SELECTDB.
 */
export class RdbSnapshot {
  private readonly w = new RdbWriter(CHUNK_BYTES + 64 * 1024);
  /** Keys written ahead of the walk (beforeWrite), waiting for the next chunk. */
  private readonly early = new RdbWriter(4096);
  private readonly crc = new Crc64();
  private started = false;
  /** EOF written: nothing more is produced. */
  private complete = false;
  /** Chunks produced ahead (drain), handed out first. */
  private readonly queue: Buffer[] = [];
  /** The key table of each db index when the snapshot started (see the class comment). */
  private readonly tables: KeyTable[];
  private db = 0;
  private cursor = 0;
  private dbStarted = false;
  /** Per db: keys decided ahead of the walk (written, or absent when first written to). */
  private readonly decided: (Set<string> | null)[] = [];
  /** Entries of one walk step (reused). */
  private readonly batch: Entry[] = [];
  /**
   * Keys left out: types Redis 7.0 cannot hold (JSON, hashes with field TTLs), unless
   * rdb-extended-types is yes: then they are written in RedisJSON's and Redis 7.4's forms and
   * the file is RDB version 12 (loadable by Redis 7.4+ with RedisJSON: Redis Stack, Redis 8).
   */
  skipped = 0;
  private readonly extended: boolean;
  keys = 0;
  /** Keys written ahead of the walk because a command was about to change them. */
  preserved = 0;
  /** A keyless write made the snapshot complete the whole file in one turn (KEYLESS_SAFE). */
  completedAtOnce = false;
  /** rdbSaveKeyValuePair writes each key's idle time under an LRU policy, its LFU counter under LFU. */
  private readonly policy: number;

  constructor(private readonly eng: Engine, private readonly opt: EncodeOptions, private readonly functions: Buffer[]) {
    let set = active.get(eng);
    if (set === undefined) {
      active.set(eng, (set = new Set()));
      eng.beforeWrite = hookFor(eng);
      eng.beforeKeyChange = changeHookFor(eng);
    }
    set.add(this);
    // Every key in memory (a start-up load still running brings the rest in now).
    for (const db of eng.dbs) if (db.loader !== null) db.loader.finish();
    this.tables = eng.dbs.map((db) => db.map);
    // The walk must not meet a key twice (a shrinking table would make it): no shrinking until
    // the file is complete, in any table (a key may be preserved in a db not walked yet).
    for (const t of this.tables) t.shrinkPaused++;
    for (let i = 0; i < eng.dbs.length; i++) this.decided.push(null);
    this.policy = parsePolicy(String(eng.cfg('maxmemory-policy'))).kind;
    this.extended = eng.cfg('rdb-extended-types') === 'yes';
  }

  /** The next chunk (produced within about `budgetMs` or 256 KB), or null when the file is complete. */
  next(budgetMs = 2): Buffer | null {
    if (this.queue.length > 0) return this.queue.shift()!;
    if (this.complete) return null;
    return this.produce(budgetMs);
  }

  /** Engine.beforeWrite: save what `def` is about to change. */
  beforeWrite(c: Client, def: CommandDef, argv: Argv): void {
    if (this.complete) return;
    const keys = commandKeys(def, argv);
    if (keys.length === 0) {
      if (KEYLESS_SAFE.has(def.name)) return;
      this.completedAtOnce = true;
      while (!this.complete) this.queue.push(this.produce(Infinity));
      return;
    }
    const db = c.db;
    for (const k of keys) this.preserve(db, argv.key(k.pos));
    // MOVE key db / COPY src dst [DB db]: the key they create in another db.
    if (def.name === 'move') {
      const to = this.dbArg(argv, 2);
      if (to !== null) this.preserve(to, argv.key(1));
    } else if (def.name === 'copy') {
      for (let i = 3; i + 1 < argv.count; i++) {
        if (argv.lower(i) !== 'db') continue;
        const to = this.dbArg(argv, i + 1);
        if (to !== null) this.preserve(to, argv.key(2));
      }
    }
  }

  /** Engine.beforeKeyChange: `key` of `db` changes, goes away or appears outside a command's named keys. */
  beforeKeyChange(db: Db, key: string): void {
    if (!this.complete) this.preserve(db, key);
  }

  /** The db given as argument `i` (MOVE/COPY), null when it is not a valid index. */
  private dbArg(argv: Argv, i: number): Db | null {
    const t = argv.str(i);
    if (!/^(0|[1-9][0-9]{0,8})$/.test(t)) return null;
    return this.eng.dbs[Number(t)] ?? null;
  }

  private preserve(db: Db, key: string): void {
    const table = db.map;
    const dbi = this.tables.indexOf(table);
    if (dbi < this.db) return; // not in the snapshot (a table made after it started), or written out
    if (dbi === this.db && this.dbStarted && this.cursor !== 0 && table.scanVisited(key, this.cursor)) return;
    let d = this.decided[dbi];
    if (d === null) this.decided[dbi] = d = new Set();
    if (d.has(key)) return;
    d.add(key);
    const e = table.get(key);
    if (e === undefined) return;
    const w = this.early;
    const mark = w.pos;
    w.u8(RDB_OP.SELECTDB);
    w.len(dbi);
    if (this.writeEntry(w, e)) this.preserved++;
    else w.pos = mark;
  }

  /** One key (its expiry, type, name and value); false when it has no Redis 7.0 form. */
  private writeEntry(w: RdbWriter, e: Entry): boolean {
    const mark = w.pos;
    if (!this.extended && !has70Form(e.v)) {
      this.skipped++;
      return false;
    }
    try {
      if (e.exp !== 0) {
        w.u8(RDB_OP.EXPIRETIME_MS);
        w.ms(this.eng.dbs[0].expireOf(e));
      }
      if (this.policy === P.LRU) {
        w.u8(RDB_OP.IDLE);
        w.len(Math.max(0, this.eng.lruClock - e.lru));
      } else if (this.policy === P.LFU) {
        w.u8(RDB_OP.FREQ);
        w.u8(lfuCounter(this.eng, e));
      }
      writeValue(w, e.v, this.opt, e.key);
      this.keys++;
      return true;
    } catch (err) {
      if (!(err instanceof DumpUnsupported)) throw err;
      w.pos = mark;
      this.skipped++;
      return false;
    }
  }

  private produce(budgetMs: number): Buffer {
    const w = this.w.reset();
    const deadline = performance.now() + budgetMs;
    if (!this.started) {
      this.started = true;
      w.rawLatin1(`REDIS00${this.extended ? RDB_VERSION_HFE : RDB_VERSION}`);
      const aux = (k: string, v: string) => {
        w.u8(RDB_OP.AUX);
        w.string(k);
        w.string(v);
      };
      aux('redis-ver', '7.0.15');
      aux('redis-bits', '64');
      aux('ctime', String(Math.floor(Date.now() / 1000)));
      aux('used-mem', String(process.memoryUsage().rss));
      aux('aof-base', '0');
      for (const code of this.functions) {
        w.u8(RDB_OP.FUNCTION2);
        w.string(code);
      }
    }
    if (this.early.pos > 0) {
      w.raw(this.early.view());
      this.early.reset();
      if (this.dbStarted) {
        w.u8(RDB_OP.SELECTDB);
        w.len(this.db);
      }
    }
    const tables = this.tables;
    const batch = this.batch;
    const collect = (e: Entry): void => {
      batch.push(e);
    };
    while (this.db < tables.length && w.pos < CHUNK_BYTES && performance.now() < deadline) {
      const table = tables[this.db];
      if (!this.dbStarted) {
        this.dbStarted = true;
        if (table.size === 0) {
          this.nextDb();
          continue;
        }
        // RESIZEDB: a hint (the db holding the table now knows how many keys have a TTL).
        const holder = this.eng.dbs.find((d) => d.map === table);
        w.u8(RDB_OP.SELECTDB);
        w.len(this.db);
        w.u8(RDB_OP.RESIZEDB);
        w.len(table.size);
        w.len(holder === undefined ? 0 : holder.expires);
      }
      // Expired keys are written as they are (as Redis's fork writes them; loaders skip them).
      const d = this.decided[this.db];
      batch.length = 0;
      let budget = STEP_KEYS * 10;
      do {
        this.cursor = table.scanStep(this.cursor, collect);
      } while (this.cursor !== 0 && budget-- > 0 && batch.length < STEP_KEYS);
      for (let i = 0; i < batch.length; i++) {
        const e = batch[i];
        if (d === null || !d.has(e.key)) this.writeEntry(w, e);
      }
      if (this.cursor === 0) this.nextDb();
    }
    batch.length = 0;
    if (this.db >= tables.length) {
      w.u8(RDB_OP.EOF);
      this.crc.update(w.buf, 0, w.pos);
      w.room(8);
      this.crc.writeLE(w.buf, w.pos);
      w.pos += 8;
      this.stop();
      return Buffer.from(w.view());
    }
    this.crc.update(w.buf, 0, w.pos);
    return Buffer.from(w.view());
  }

  private nextDb(): void {
    this.decided[this.db] = null;
    this.db++;
    this.cursor = 0;
    this.dbStarted = false;
  }

  /** No more hooks; the tables may shrink again. */
  private stop(): void {
    if (this.complete) return;
    this.complete = true;
    const set = active.get(this.eng)!;
    set.delete(this);
    if (set.size === 0) {
      active.delete(this.eng);
      this.eng.beforeWrite = null;
      this.eng.beforeKeyChange = null;
    }
    for (const t of this.tables) t.shrinkPaused--;
  }

  /** Stop early (the client went away). */
  abort(): void {
    this.stop();
    this.queue.length = 0;
  }
}

/** False for our types that only Redis 7.4 or RedisJSON can load (JSON, hashes with field TTLs). */
function has70Form(v: Entry['v']): boolean {
  if (needsHfeVersion(v)) return false;
  return !(typeof v === 'object' && !(v instanceof Uint8Array) && (v as TypedValue).type === T.JSON);
}

/** Functions to put in an RDB file: the libraries' codes. */
export function functionCodes(eng: Engine): Buffer[] {
  return [...scripting(eng).functions.libraries.values()].map((l) => l.code);
}
