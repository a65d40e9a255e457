/**
 * Bitmap commands on string values: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO.
 * Bit 0 is the most significant bit of byte 0, as in Redis. Writes grow or change the value
 * through ds/strbuf.ts, so repeated SETBITs do not copy the whole value each time.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, CommandError } from '../../resp/errors.js';
import type { Client } from '../client.js';
import type { Db, Entry } from '../db.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { grow, mutable } from '../ds/strbuf.js';
import { parseSafeInt } from '../../resp/ascii.js';
import { KF, type KeyRef } from '../keys.js';
import { N, keyEvent } from '../notify.js';

const BIT_OFFSET = 'ERR bit offset is not an integer or out of range';
const WRONGTYPE = new CommandError(E.WRONGTYPE);
const EMPTY = Buffer.alloc(0);

/** The string at key for reading (EMPTY when missing); throws WRONGTYPE. */
function readString(db: Db, key: string): Buffer | null {
  const e = db.read(key);
  if (e === undefined) return null;
  if (!(e.value instanceof Uint8Array)) throw WRONGTYPE;
  return e.value as Buffer;
}

/** The entry for writing a string at key (created empty when missing); throws WRONGTYPE. */
function writeEntry(db: Db, key: string): Entry {
  const e = db.get(key);
  if (e === undefined) return db.add(key, EMPTY);
  if (!(e.value instanceof Uint8Array)) throw WRONGTYPE;
  return e;
}

/** Bit offsets as Redis's getBitOffsetFromArgument ("#N" means N * width when `width` > 0). */
function bitOffset(c: Client, argv: Argv, i: number, width = 0): number {
  let b = argv.view(i);
  let mul = 1;
  if (width > 0 && b[0] === 0x23 /* # */) {
    b = b.subarray(1);
    mul = width;
  }
  const v = parseSafeInt(b, 0, b.length) * mul;
  if (v !== v || v < 0 || Math.floor(v / 8) >= c.engine.cfgInt('proto-max-bulk-len')) {
    throw new CommandError(BIT_OFFSET);
  }
  return v;
}

// SETBIT key offset value
function setbitCommand(c: Client, argv: Argv, out: ReplySink): void {
  const offset = bitOffset(c, argv, 2);
  const bit = argv.int(3);
  if (bit !== 0 && bit !== 1) throw new CommandError('ERR bit is not an integer or out of range');
  const db = c.db;
  const created = db.get(argv.key(1)) === undefined;
  const e = writeEntry(db, argv.key(1));
  const byte = offset >>> 3;
  let v = e.value as Buffer;
  const grown = byte >= v.length;
  v = grown ? grow(v, byte + 1) : mutable(v);
  const mask = 0x80 >> (offset & 7);
  const old = v[byte] & mask ? 1 : 0;
  if (bit) v[byte] |= mask;
  else v[byte] &= ~mask;
  db.setStored(e, v);
  e.raw = true;
  // Redis 7.0: a change (dirty counter, WATCH, events) only when the key was created or
  // grown or the bit flipped; creating the key already counted as one.
  if (created || grown || old !== bit) {
    if (!created) db.modified(e.key);
    keyEvent(c, N.STRING, 'setbit', e.key);
  }
  out.int(old);
}

// GETBIT key offset
function getbitCommand(c: Client, argv: Argv, out: ReplySink): void {
  const offset = bitOffset(c, argv, 2);
  const v = readString(c.db, argv.key(1));
  const byte = offset >>> 3;
  out.int(v !== null && byte < v.length && v[byte] & (0x80 >> (offset & 7)) ? 1 : 0);
}

const POPCOUNT = new Uint8Array(256);
for (let i = 0; i < 256; i++) POPCOUNT[i] = (i & 1) + POPCOUNT[i >> 1];

/** Count set bits in bit range [from, to] (inclusive). */
function countBits(v: Buffer, from: number, to: number): number {
  let n = 0;
  let b = from;
  for (; b <= to && (b & 7) !== 0; b++) if (v[b >>> 3] & (0x80 >> (b & 7))) n++;
  for (; b + 7 <= to; b += 8) n += POPCOUNT[v[b >>> 3]];
  for (; b <= to; b++) if (v[b >>> 3] & (0x80 >> (b & 7))) n++;
  return n;
}

/** Normalise a start/end pair against a length, as Redis does for BITCOUNT/BITPOS. */
function clampRange(start: number, end: number, len: number): [number, number] | null {
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end) return null;
  return [start, end];
}

/** A long long argument (ranges beyond 2^53 are clamped like any other, as in Redis). */
function intArg(argv: Argv, i: number): number {
  const v = argv.int(i);
  if (v === v) return v;
  const big = argv.int64(i);
  if (big === null) throw new CommandError(E.NOT_INTEGER);
  return Number(big);
}

// BITCOUNT key [start end [BYTE|BIT]]
function bitcountCommand(c: Client, argv: Argv, out: ReplySink): void {
  let isBit = false;
  let start = 0;
  let end = -1;
  // As in Redis 7.0: the key (missing: 0, wrong type: WRONGTYPE) before the arguments.
  const v = readString(c.db, argv.key(1));
  if (v === null) {
    out.int(0);
    return;
  }
  if (argv.count === 3 || argv.count > 5) throw new CommandError(E.SYNTAX);
  if (argv.count >= 4) {
    start = intArg(argv, 2);
    end = intArg(argv, 3);
    if (argv.count === 5) {
      if (argv.is(4, 'BIT')) isBit = true;
      else if (!argv.is(4, 'BYTE')) throw new CommandError(E.SYNTAX);
    }
  }
  const r = clampRange(start, end, isBit ? v.length * 8 : v.length);
  if (r === null) {
    out.int(0);
    return;
  }
  out.int(isBit ? countBits(v, r[0], r[1]) : countBits(v, r[0] * 8, r[1] * 8 + 7));
}

// BITPOS key bit [start [end [BYTE|BIT]]]
function bitposCommand(c: Client, argv: Argv, out: ReplySink): void {
  const big = argv.int64(2);
  if (big === null) throw new CommandError(E.NOT_INTEGER);
  if (big !== 0n && big !== 1n) throw new CommandError('ERR The bit argument must be 1 or 0.');
  const bit = Number(big);
  // As in Redis 7.0: the key (missing: all clear bits, wrong type: WRONGTYPE) before the range.
  const v = readString(c.db, argv.key(1));
  if (v === null) {
    out.int(bit ? -1 : 0);
    return;
  }
  let start = 0;
  let end = -1;
  let endGiven = false;
  let isBit = false;
  if (argv.count > 6) throw new CommandError(E.SYNTAX);
  if (argv.count >= 4) start = intArg(argv, 3);
  if (argv.count >= 5) {
    end = intArg(argv, 4);
    endGiven = true;
  }
  if (argv.count === 6) {
    if (argv.is(5, 'BIT')) isBit = true;
    else if (!argv.is(5, 'BYTE')) throw new CommandError(E.SYNTAX);
  }
  const r = clampRange(start, end, isBit ? v.length * 8 : v.length);
  if (r === null) {
    out.int(-1);
    return;
  }
  const from = isBit ? r[0] : r[0] * 8;
  const to = isBit ? r[1] : r[1] * 8 + 7;
  for (let b = from; b <= to; b++) {
    // Skip whole bytes that cannot match.
    if ((b & 7) === 0 && b + 7 <= to) {
      const byte = v[b >>> 3];
      if ((bit && byte === 0) || (!bit && byte === 0xff)) {
        b += 7;
        continue;
      }
    }
    const set = v[b >>> 3] & (0x80 >> (b & 7)) ? 1 : 0;
    if (set === bit) {
      out.int(b);
      return;
    }
  }
  // Looking for a clear bit past an all-ones value with no explicit end: the bit just after.
  if (!bit && !endGiven) {
    out.int(to + 1);
    return;
  }
  out.int(-1);
}

// BITOP AND|OR|XOR|NOT|DIFF|DIFF1|ANDOR|ONE destkey key [key ...]
// DIFF, DIFF1, ANDOR and ONE are Redis 8.2's (Upstash has them): X is the first source, Y the rest.
const BITOPS = ['and', 'or', 'xor', 'not', 'diff', 'diff1', 'andor', 'one'] as const;
type BitOp = typeof BITOPS[number];
const BITOP_TOKENS = BITOPS.map((o) => o.toUpperCase());

function bitopCommand(c: Client, argv: Argv, out: ReplySink): void {
  const at = BITOP_TOKENS.findIndex((t) => argv.is(1, t));
  if (at < 0) throw new CommandError(E.SYNTAX);
  const op = BITOPS[at];
  if (op === 'not' && argv.count !== 4) throw new CommandError('ERR BITOP NOT must be called with a single source key.');
  if ((op === 'diff' || op === 'diff1' || op === 'andor') && argv.count < 5) {
    throw new CommandError(`ERR BITOP ${op.toUpperCase()} must be called with at least two source keys.`);
  }
  const db = c.db;
  const srcs: Buffer[] = [];
  let max = 0;
  for (let i = 3; i < argv.count; i++) {
    const v = readString(db, argv.key(i)) ?? EMPTY;
    srcs.push(v);
    if (v.length > max) max = v.length;
  }
  const dst = argv.key(2);
  if (max === 0) {
    if (db.delete(dst)) keyEvent(c, N.GENERIC, 'del', dst);
    out.int(0);
    return;
  }
  const res = bitop(op, srcs, max);
  db.set(dst, res).raw = true;
  keyEvent(c, N.STRING, 'set', dst);
  out.int(max);
}

/** The result of `op` over `srcs`, each zero-padded to `max` bytes. */
function bitop(op: BitOp, srcs: readonly Buffer[], max: number): Buffer {
  const res = Buffer.alloc(max);
  const at = (s: Buffer, i: number) => (i < s.length ? s[i] : 0);
  if (op === 'not') {
    for (let i = 0; i < max; i++) res[i] = ~at(srcs[0], i) & 0xff;
  } else if (op === 'one') {
    // Per bit: `res` = seen exactly once so far, `more` = seen twice or more.
    const more = Buffer.alloc(max);
    for (const s of srcs) {
      for (let i = 0; i < s.length; i++) {
        more[i] |= res[i] & s[i];
        res[i] = (res[i] ^ s[i]) & ~more[i];
      }
    }
  } else if (op === 'diff' || op === 'diff1' || op === 'andor') {
    const x = srcs[0];
    for (let k = 1; k < srcs.length; k++) {
      const s = srcs[k];
      for (let i = 0; i < s.length; i++) res[i] |= s[i]; // Y1 | Y2 | ...
    }
    for (let i = 0; i < max; i++) {
      const y = res[i];
      const xi = at(x, i);
      res[i] = op === 'diff' ? xi & ~y : op === 'diff1' ? ~xi & y : xi & y;
    }
  } else {
    srcs[0].copy(res);
    for (let k = 1; k < srcs.length; k++) {
      const s = srcs[k];
      for (let i = 0; i < max; i++) {
        const b = at(s, i);
        if (op === 'and') res[i] &= b;
        else if (op === 'or') res[i] |= b;
        else res[i] ^= b;
      }
    }
  }
  return res;
}

// ---------------------------------------------------------------- BITFIELD

interface FieldType { signed: boolean; bits: number }

function parseType(argv: Argv, i: number): FieldType {
  const s = argv.key(i);
  const signed = s[0] === 'i' || s[0] === 'I';
  if (!signed && s[0] !== 'u' && s[0] !== 'U') throw new CommandError(BAD_TYPE);
  const bits = /^\d+$/.test(s.slice(1)) ? Number(s.slice(1)) : NaN;
  if (!(bits >= 1 && (signed ? bits <= 64 : bits <= 63))) throw new CommandError(BAD_TYPE);
  return { signed, bits };
}

const BAD_TYPE = 'ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.';

function getField(v: Buffer, offset: number, t: FieldType): bigint {
  let x = 0n;
  for (let i = 0; i < t.bits; i++) {
    const b = offset + i;
    const byte = b >>> 3;
    const bit = byte < v.length && v[byte] & (0x80 >> (b & 7)) ? 1n : 0n;
    x = (x << 1n) | bit;
  }
  if (t.signed && x >> BigInt(t.bits - 1)) x -= 1n << BigInt(t.bits);
  return x;
}

function setField(v: Buffer, offset: number, t: FieldType, value: bigint): void {
  const mask = (1n << BigInt(t.bits)) - 1n;
  let x = value & mask;
  for (let i = t.bits - 1; i >= 0; i--) {
    const b = offset + i;
    const m = 0x80 >> (b & 7);
    if (x & 1n) v[b >>> 3] |= m;
    else v[b >>> 3] &= ~m;
    x >>= 1n;
  }
}

type Overflow = 'wrap' | 'sat' | 'fail';

/** Apply overflow handling; null when FAIL refuses the operation. */
function fit(value: bigint, t: FieldType, how: Overflow): bigint | null {
  const min = t.signed ? -(1n << BigInt(t.bits - 1)) : 0n;
  const max = t.signed ? (1n << BigInt(t.bits - 1)) - 1n : (1n << BigInt(t.bits)) - 1n;
  if (value >= min && value <= max) return value;
  if (how === 'fail') return null;
  if (how === 'sat') return value < min ? min : max;
  const span = 1n << BigInt(t.bits);
  let w = ((value - min) % span + span) % span + min;
  if (!t.signed) w = ((value % span) + span) % span;
  return w;
}

interface FieldOp { kind: 'get' | 'set' | 'incrby'; type: FieldType; offset: number; arg: bigint; overflow: Overflow }

function parseBitfield(c: Client, argv: Argv, readOnly: boolean): FieldOp[] {
  const ops: FieldOp[] = [];
  let overflow: Overflow = 'wrap';
  for (let i = 2; i < argv.count; i++) {
    const left = argv.count - i - 1;
    if (argv.is(i, 'GET') && left >= 2) {
      const type = parseType(argv, i + 1);
      ops.push({ kind: 'get', type, offset: bitOffset(c, argv, i + 2, type.bits), arg: 0n, overflow });
      i += 2;
    } else if ((argv.is(i, 'SET') || argv.is(i, 'INCRBY')) && left >= 3) {
      const kind = argv.is(i, 'SET') ? 'set' : 'incrby';
      const type = parseType(argv, i + 1);
      const offset = bitOffset(c, argv, i + 2, type.bits);
      const arg = argv.int64(i + 3);
      if (arg === null) throw new CommandError(E.NOT_INTEGER);
      ops.push({ kind, type, offset, arg, overflow });
      i += 3;
    } else if (argv.is(i, 'OVERFLOW') && left >= 1) {
      if (argv.is(i + 1, 'WRAP')) overflow = 'wrap';
      else if (argv.is(i + 1, 'SAT')) overflow = 'sat';
      else if (argv.is(i + 1, 'FAIL')) overflow = 'fail';
      else throw new CommandError('ERR Invalid OVERFLOW type specified');
      i++;
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }
  if (readOnly && ops.some((o) => o.kind !== 'get')) throw new CommandError('ERR BITFIELD_RO only supports the GET subcommand');
  return ops;
}

function bitfieldGeneric(c: Client, argv: Argv, out: ReplySink, readOnly: boolean): void {
  const ops = parseBitfield(c, argv, readOnly);
  const db = c.db;
  const key = argv.key(1);
  const writes = ops.some((o) => o.kind !== 'get');
  if (!writes) {
    const v = readString(db, key) ?? EMPTY;
    out.array(ops.length);
    for (const o of ops) out.int(getField(v, o.offset, o.type));
    return;
  }
  const created = db.get(key) === undefined;
  const e = writeEntry(db, key);
  let maxBit = 0;
  for (const o of ops) if (o.kind !== 'get') maxBit = Math.max(maxBit, o.offset + o.type.bits);
  let v = e.value as Buffer;
  const need = Math.ceil(maxBit / 8);
  const grown = need > v.length;
  v = grown ? grow(mutable(v), need) : mutable(v);
  db.setStored(e, v);
  e.raw = true;
  // Redis 7.0 counts one change per applied operation when the key was created or grown, else
  // per operation that changed the value (the dirty counter adds them all).
  let changes = 0;
  out.array(ops.length);
  for (const o of ops) {
    if (o.kind === 'get') {
      out.int(getField(v, o.offset, o.type));
      continue;
    }
    const old = getField(v, o.offset, o.type);
    const wanted = o.kind === 'set' ? o.arg : old + o.arg;
    const next = fit(wanted, o.type, o.overflow);
    if (next === null) {
      out.nil();
      continue;
    }
    setField(v, o.offset, o.type, next);
    if (created || grown || next !== old) changes++;
    out.int(o.kind === 'set' ? old : next);
  }
  if (changes === 0) return;
  // Creating the key counted one change already.
  if (!created) db.modified(key);
  if (changes > 1) c.engine.dirty += changes - 1;
  keyEvent(c, N.STRING, 'setbit', key);
}

// BITFIELD key [GET type offset] [SET type offset value] [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL]
function bitfieldCommand(c: Client, argv: Argv, out: ReplySink): void {
  bitfieldGeneric(c, argv, out, false);
}

// BITFIELD_RO key [GET type offset ...]
function bitfieldRoCommand(c: Client, argv: Argv, out: ReplySink): void {
  bitfieldGeneric(c, argv, out, true);
}

/**
 * Redis's bitfieldGetKeys: read-only (RO access) when every subcommand is a well-formed GET or
 * OVERFLOW, else RW access update (a SET, an INCRBY or a syntax error).
 */
function bitfieldKeys(argv: Argv): KeyRef[] {
  let readonly = true;
  for (let i = 2; i < argv.count; i++) {
    const rest = argv.count - i - 1;
    if (argv.is(i, 'GET') && rest >= 2) i += 2;
    else if (argv.is(i, 'OVERFLOW') && rest >= 1) i += 1;
    else {
      readonly = false;
      break;
    }
  }
  return [{ pos: 1, flags: readonly ? KF.RO | KF.ACCESS : KF.RW | KF.ACCESS | KF.UPDATE }];
}

export default family('bitmap', ['bitmap'], [
  //   name             arity  flags                          keys         handler
  row('setbit',           4,   F.WRITE | F.DENYOOM,           [1, 1, 1],   setbitCommand),
  row('getbit',           3,   F.READONLY | F.FAST,           [1, 1, 1],   getbitCommand),
  row('bitcount',        -2,   F.READONLY,                    [1, 1, 1],   bitcountCommand),
  row('bitpos',          -3,   F.READONLY,                    [1, 1, 1],   bitposCommand),
  row('bitop',           -4,   F.WRITE | F.DENYOOM,           [2, -1, 1],  bitopCommand),
  row('bitfield',        -2,   F.WRITE | F.DENYOOM,           [1, 1, 1],   bitfieldCommand, { getKeys: bitfieldKeys }),
  row('bitfield_ro',     -2,   F.READONLY | F.FAST,           [1, 1, 1],   bitfieldRoCommand),
]);
