/**
 * HyperLogLog commands: PFADD PFCOUNT PFMERGE, on string values in Redis's own HLL format
 * (ds/hll.ts), so counts and bytes match Redis.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, CommandError } from '../../resp/errors.js';
import type { Client } from '../client.js';
import type { Db, Entry } from '../db.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { mutable } from '../ds/strbuf.js';
import {
  HLL_DENSE, HLL_REGISTERS, HLL_SPARSE, cacheValid, createHll, denseGet, denseSet, denseSetRaw, estimate, invalidateCache,
  isHll, patLen, readCache, registers, sparseSet, sparseToDense, writeCache,
} from '../ds/hll.js';
import { N, keyEvent } from '../notify.js';

const INVALID_HLL = 'WRONGTYPE Key is not a valid HyperLogLog string value.';
const CORRUPTED = 'INVALIDOBJ Corrupted HLL object detected';

/** The HLL bytes of an entry; throws WRONGTYPE for other types or non-HLL strings. */
function hllOf(e: Entry): Buffer {
  if (!(e.value instanceof Uint8Array)) throw new CommandError(E.WRONGTYPE);
  const v = e.value as Buffer;
  if (!isHll(v)) throw new CommandError(INVALID_HLL);
  return v;
}

/** Set one register in either encoding; returns the (possibly new) value and 1/0/-1. */
function setRegister(v: Buffer, index: number, count: number, maxBytes: number): { value: Buffer; changed: number } {
  if (v[4] === HLL_DENSE) return { value: v, changed: denseSet(v, index, count) };
  return sparseSet(v, index, count, maxBytes);
}

// PFADD key [element [element ...]]
function pfaddCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const key = argv.key(1);
  const e = db.get(key);
  let v: Buffer;
  let updated = 0;
  if (e === undefined) {
    v = createHll();
    updated++;
  } else {
    v = mutable(hllOf(e));
  }
  const maxBytes = c.engine.cfgInt('hll-sparse-max-bytes');
  for (let i = 2; i < argv.count; i++) {
    const [index, count] = patLen(argv.view(i));
    const r = setRegister(v, index, count, maxBytes);
    if (r.changed < 0) throw new CommandError(CORRUPTED);
    v = r.value;
    updated += r.changed;
  }
  if (updated > 0) {
    invalidateCache(v);
    if (e === undefined) db.add(key, v);
    else {
      db.setStored(e, v);
      e.raw = true;
      db.modified(key);
    }
    keyEvent(c, N.STRING, 'pfadd', key);
  }
  out.int(updated > 0 ? 1 : 0);
}

/** Max-merge the registers of the HLL keys into `max`; true if any source was dense. */
function mergeInto(db: Db, keys: readonly string[], max: Uint8Array): boolean {
  let dense = false;
  for (const key of keys) {
    const e = db.read(key);
    if (e === undefined) continue;
    const v = hllOf(e);
    if (v[4] === HLL_DENSE) dense = true;
    const regs = registers(v);
    if (regs === null) throw new CommandError(CORRUPTED);
    for (let i = 0; i < HLL_REGISTERS; i++) if (regs[i] > max[i]) max[i] = regs[i];
  }
  return dense;
}

// PFCOUNT key [key ...]
function pfcountCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  if (argv.count > 2) {
    const keys: string[] = [];
    for (let i = 1; i < argv.count; i++) keys.push(argv.key(i));
    const max = new Uint8Array(HLL_REGISTERS);
    mergeInto(db, keys, max);
    out.int(estimate(max));
    return;
  }
  const e = db.read(argv.key(1));
  if (e === undefined) {
    out.int(0);
    return;
  }
  let v = hllOf(e);
  if (cacheValid(v)) {
    out.int(readCache(v));
    return;
  }
  const regs = registers(v);
  if (regs === null) throw new CommandError(CORRUPTED);
  const card = estimate(regs);
  // Redis stores the estimate in the header cache, which changes the value's bytes.
  v = mutable(v);
  writeCache(v, card);
  db.setStored(e, v);
  db.modified(e.key);
  out.int(card);
}

// PFMERGE destkey [sourcekey [sourcekey ...]]
function pfmergeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const keys: string[] = [];
  for (let i = 1; i < argv.count; i++) keys.push(argv.key(i));
  const max = new Uint8Array(HLL_REGISTERS);
  const useDense = mergeInto(db, keys, max);
  const dst = argv.key(1);
  const e = db.get(dst);
  let v = e === undefined ? createHll() : mutable(hllOf(e));
  if (useDense && v[4] === HLL_SPARSE) {
    const d = sparseToDense(v);
    if (d === null) throw new CommandError(CORRUPTED);
    v = d;
  }
  const maxBytes = c.engine.cfgInt('hll-sparse-max-bytes');
  for (let i = 0; i < HLL_REGISTERS; i++) {
    if (max[i] === 0) continue;
    const r = setRegister(v, i, max[i], maxBytes);
    if (r.changed < 0) throw new CommandError(CORRUPTED);
    v = r.value;
  }
  invalidateCache(v);
  if (e === undefined) db.add(dst, v);
  else {
    db.setStored(e, v);
    e.raw = true;
    db.modified(dst);
  }
  keyEvent(c, N.STRING, 'pfadd', dst);
  out.ok();
}

/** PFDEBUG DECODE: the opcodes of a sparse HLL as Redis prints them (z: ZERO, Z: XZERO, v: VAL). */
function decodeSparse(v: Buffer): string {
  const parts: string[] = [];
  let p = 16;
  while (p < v.length) {
    const b = v[p];
    if ((b & 0xc0) === 0) {
      parts.push(`z:${(b & 0x3f) + 1}`);
      p++;
    } else if ((b & 0xc0) === 0x40) {
      parts.push(`Z:${(((b & 0x3f) << 8) | (v[p + 1] ?? 0)) + 1}`);
      p += 2;
    } else {
      parts.push(`v:${((b >> 2) & 0x1f) + 1},${(b & 0x3) + 1}`);
      p++;
    }
  }
  return parts.join(' ');
}

// PFDEBUG <GETREG|DECODE|ENCODING|TODENSE> key
function pfdebugCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  const e = db.get(argv.key(2));
  if (e === undefined) {
    out.error('ERR The specified key does not exist');
    return;
  }
  let v = hllOf(e);
  const toDense = (): boolean => {
    if (v[4] !== HLL_SPARSE) return false;
    const d = sparseToDense(v);
    if (d === null) throw new CommandError(CORRUPTED);
    v = d;
    e.value = v;
    e.raw = true;
    db.modified(e.key); // Redis counts the conversion as a change (propagated)
    return true;
  };
  if (argv.is(1, 'GETREG')) {
    toDense();
    const regs = registers(v);
    if (regs === null) throw new CommandError(CORRUPTED);
    out.array(HLL_REGISTERS);
    for (let i = 0; i < HLL_REGISTERS; i++) out.int(regs[i]);
  } else if (argv.is(1, 'DECODE')) {
    if (v[4] !== HLL_SPARSE) {
      out.error('ERR HLL encoding is not sparse');
      return;
    }
    out.bulkLatin1(decodeSparse(v));
  } else if (argv.is(1, 'ENCODING')) {
    out.simple(v[4] === HLL_SPARSE ? 'sparse' : 'dense');
  } else if (argv.is(1, 'TODENSE')) {
    out.int(toDense() ? 1 : 0);
  } else {
    out.error(`ERR Unknown PFDEBUG subcommand '${argv.key(1)}'`);
  }
}

/**
 * PFSELFTEST: Redis's internal consistency checks of the HLL code: every dense register
 * stores and reads back any 6-bit value, and an HLL created sparse (promoted to dense on the
 * way) and a dense one fed the same elements give the same estimate, within 5 standard errors
 * of the true count.
 */
function pfselftestCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  const dense = sparseToDense(createHll())!;
  const want = new Uint8Array(HLL_REGISTERS);
  let seed = 12345;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  for (let j = 0; j < 10; j++) {
    for (let i = 0; i < HLL_REGISTERS; i++) {
      const r = rand() & 63;
      want[i] = r;
      denseSetRaw(dense, i, r);
    }
    for (let i = 0; i < HLL_REGISTERS; i++) {
      if (denseGet(dense, i) !== want[i]) {
        out.error(`TESTFAILED Register error at register ${i}`);
        return;
      }
    }
  }
  let sparse = createHll();
  const full = sparseToDense(createHll())!;
  const relerr = 1.04 / Math.sqrt(HLL_REGISTERS);
  let checkpoint = 1;
  const ele = Buffer.alloc(8);
  for (let n = 1; n <= 100000; n++) {
    ele.writeUInt32LE(rand(), 0);
    ele.writeUInt32LE(n, 4);
    const [index, count] = patLen(ele);
    const r = setRegister(sparse, index, count, 3000); // promoted to dense past 3000 bytes, as by default
    if (r.changed < 0) {
      out.error('TESTFAILED sparse HLL corrupted');
      return;
    }
    sparse = r.value;
    denseSet(full, index, count);
    if (n === checkpoint) {
      const a = estimate(registers(sparse)!);
      const b = estimate(registers(full)!);
      if (a !== b) {
        out.error(`TESTFAILED sparse and dense estimates differ at ${n} elements: ${a} vs ${b}`);
        return;
      }
      const maxerr = Math.ceil(relerr * 5 * n);
      if (Math.abs(Number(b) - n) > maxerr) {
        out.error(`TESTFAILED Too big error. card:${n} abserr:${Math.abs(Number(b) - n)}`);
        return;
      }
      checkpoint *= 10;
    }
  }
  out.ok();
}

export default family('hyperloglog', ['hyperloglog'], [
  //   name        arity  flags                          keys         handler
  row('pfadd',      -2,   F.WRITE | F.DENYOOM | F.FAST,  [1, 1, 1],   pfaddCommand),
  row('pfcount',    -2,   F.READONLY,                    [1, -1, 1],  pfcountCommand),
  row('pfmerge',    -2,   F.WRITE | F.DENYOOM,           [1, -1, 1],  pfmergeCommand),
  row('pfdebug',     3,   F.WRITE | F.DENYOOM | F.ADMIN, [2, 2, 1],   pfdebugCommand, { scriptable: true }),
  row('pfselftest',  1,   F.ADMIN,                       [0, 0, 0],   pfselftestCommand, { scriptable: true }),
]);
