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
  HLL_DENSE, HLL_REGISTERS, HLL_SPARSE, cacheValid, createHll, denseSet, estimate, invalidateCache,
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

export default family('hyperloglog', ['hyperloglog'], [
  //   name        arity  flags                          keys         handler
  row('pfadd',      -2,   F.WRITE | F.DENYOOM | F.FAST,  [1, 1, 1],   pfaddCommand),
  row('pfcount',    -2,   F.READONLY,                    [1, -1, 1],  pfcountCommand),
  row('pfmerge',    -2,   F.WRITE | F.DENYOOM,           [1, -1, 1],  pfmergeCommand),
]);
