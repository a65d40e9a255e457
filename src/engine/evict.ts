/**
 * maxmemory (Redis evict.c): the eight policies, approximated LRU / LFU / TTL with an eviction
 * pool fed by sampling (maxmemory-samples keys per database per round), LFU counters in the
 * LRU bits of each entry, and the OOM gate of DENYOOM commands.
 *
 * Memory is the modelled used_memory (memory.ts), not RSS. With maxmemory 0 (the default)
 * nothing here runs: dispatch tests one number per command.
 *
 * Evicted keys leave through Db.delete (the normal change path: persistence, WATCH, client
 * tracking, blocked clients), then `evicted` is published (class e) and evicted_keys counted.
 */
import type { Engine } from './engine.js';
import type { Client } from './client.js';
import type { CommandDef } from './command.js';
import type { Argv } from '../resp/argv.js';
import type { Db, Entry } from './db.js';
import { F } from './flags.js';
import { N } from './notify.js';
import { REMOVED, VIEW } from './keytable.js';

export const OOM = "OOM command not allowed when used memory > 'maxmemory'.";

export const EVICT_OK = 0;
export const EVICT_RUNNING = 1;
export const EVICT_FAIL = 2;

/** Policy bits (Redis's MAXMEMORY_FLAG_* and kinds). */
export const P = { NONE: 0, LRU: 1, LFU: 2, TTL: 3, RANDOM: 4 } as const;

/** maxmemory-policy -> [kind, volatile only]. */
export function parsePolicy(name: string): { kind: number; volatile: boolean } {
  const volatile = name.startsWith('volatile-');
  if (name.endsWith('-lru')) return { kind: P.LRU, volatile };
  if (name.endsWith('-lfu')) return { kind: P.LFU, volatile };
  if (name.endsWith('-ttl')) return { kind: P.TTL, volatile };
  if (name.endsWith('-random')) return { kind: P.RANDOM, volatile };
  return { kind: P.NONE, volatile: false };
}

// ---------------------------------------------------------------- LFU (the entry's LRU bits)

/** LFU_INIT_VAL: the counter of a new key. */
export const LFU_INIT_VAL = 5;

/** LFUGetTimeInMinutes: 16 bits of minutes. */
function minutes(eng: Engine): number {
  return Math.floor(eng.now / 60000) & 65535;
}

/** The 24-bit LRU/LFU field of an entry (ldt << 8 | counter under LFU). */
function field(e: Entry): number {
  return e.bits >>> 2;
}

function setField(e: Entry, f: number): void {
  e.bits = f * 4 + (e.bits & 3);
}

/** The bits a new entry starts with under LFU (hint bits clear). */
export function lfuNewBits(eng: Engine): number {
  return ((minutes(eng) << 8) | LFU_INIT_VAL) * 4;
}

/**
 * objectSetLRUOrLFU (RESTORE's IDLETIME/FREQ, an RDB file's IDLE/FREQ opcodes): under an LFU
 * policy a given frequency becomes the counter (as of now); otherwise a given idle time (s)
 * sets the access time. The other one is ignored, as in Redis.
 */
export function setLruOrLfu(eng: Engine, e: Entry, freq: number, idle: number): void {
  if (eng.lfu) {
    if (freq >= 0) setField(e, (minutes(eng) << 8) | Math.min(freq, 255));
  } else if (idle >= 0) {
    e.lru = eng.lruClock - Math.min(idle, 1 << 28);
  }
}

/** LFUDecrAndReturn: the counter decayed by the periods elapsed since its last decrement. */
export function lfuCounter(eng: Engine, e: Entry): number {
  const f = field(e);
  const ldt = f >>> 8;
  let counter = f & 255;
  const now = minutes(eng);
  const elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
  const decay = eng.lfuDecayTime;
  const periods = decay > 0 ? Math.floor(elapsed / decay) : 0;
  if (periods) counter = periods > counter ? 0 : counter - periods;
  return counter;
}

/** updateLFU: decay, then the logarithmic increment (LFULogIncr). */
export function lfuTouch(eng: Engine, e: Entry): void {
  let counter = lfuCounter(eng, e);
  if (counter < 255) {
    const base = Math.max(0, counter - LFU_INIT_VAL);
    if (Math.random() < 1 / (base * eng.lfuLogFactor + 1)) counter++;
  }
  setField(e, (minutes(eng) << 8) | counter);
}

// ---------------------------------------------------------------- the eviction pool

const POOL_SIZE = 16;
/**
 * The pool, best candidate last: idle scores and the entries themselves (an entry knows its
 * key; one that left its table has next === REMOVED). Comparing entries by identity keeps the
 * duplicate check off the key strings (long common prefixes made it the eviction path's main
 * cost). Fixed arrays, moved in place, as Redis's memmove.
 */
const poolIdle = new Float64Array(POOL_SIZE);
const poolEnt: (Entry | undefined)[] = new Array(POOL_SIZE).fill(undefined);
const poolDb = new Int32Array(POOL_SIZE);
let poolLen = 0;

const sampled: Entry[] = [];

/** evictionPoolPopulate: sample keys of `db`, keep the best candidates (highest idle last). */
function populate(eng: Engine, db: Db, kind: number, volatile: boolean): void {
  const n = Math.min(eng.maxmemorySamples, volatile ? db.expires : db.map.size);
  sampled.length = 0;
  if (volatile) {
    for (let i = 0; i < n; i++) {
      const e = db.randomVolatile();
      if (e !== undefined) sampled.push(e);
    }
  } else {
    db.map.someEntries(n, sampled);
  }
  const dbi = db.index;
  for (let i = 0; i < sampled.length; i++) {
    const e = sampled[i];
    let idle: number;
    if (kind === P.LRU) idle = (eng.lruClock - e.lru) * 1000;
    else if (kind === P.LFU) idle = 255 - lfuCounter(eng, e);
    else idle = Number.MAX_SAFE_INTEGER - e.exp; // TTL: the nearest expiry is the best candidate
    let dup = false;
    for (let k = 0; k < poolLen; k++) {
      if (poolEnt[k] === e) {
        dup = true;
        break;
      }
    }
    if (dup) continue;
    // Insert in ascending idle order; a full pool drops its worst candidate (the first).
    let k = 0;
    while (k < poolLen && poolIdle[k] < idle) k++;
    if (poolLen === POOL_SIZE) {
      if (k === 0) continue;
      k--;
      for (let j = 0; j < k; j++) {
        poolIdle[j] = poolIdle[j + 1];
        poolEnt[j] = poolEnt[j + 1];
        poolDb[j] = poolDb[j + 1];
      }
    } else {
      for (let j = poolLen; j > k; j--) {
        poolIdle[j] = poolIdle[j - 1];
        poolEnt[j] = poolEnt[j - 1];
        poolDb[j] = poolDb[j - 1];
      }
      poolLen++;
    }
    poolIdle[k] = idle;
    poolEnt[k] = e;
    poolDb[k] = dbi;
  }
}

/** Forget the pooled candidates (a database was flushed or swapped: entries left or moved). */
export function resetEvictionPool(): void {
  for (let k = 0; k < poolLen; k++) poolEnt[k] = undefined;
  poolLen = 0;
}

/** The db of the candidate the two functions below return (no object per eviction). */
let candDb = 0;

/** The best entry to evict now under a pool policy (its db in candDb), or null when none is left. */
function bestFromPool(eng: Engine, kind: number, volatile: boolean): Entry | null {
  for (let tries = 0; tries < 16; tries++) {
    let any = false;
    for (const db of eng.dbs) {
      const size = volatile ? db.expires : db.map.size;
      if (size === 0) continue;
      any = true;
      populate(eng, db, kind, volatile);
    }
    if (!any) return null;
    while (poolLen > 0) {
      let e: Entry | undefined = poolEnt[--poolLen]!;
      poolEnt[poolLen] = undefined;
      // A compact key's view was a copy when sampled: the key as it is now, if still there.
      if (e.next === VIEW) e = eng.dbs[poolDb[poolLen]].map.find(e.key);
      // Gone since it was sampled (deleted, or replaced by a new entry): next one. (FLUSHDB and
      // SWAPDB empty the pool: resetEvictionPool.)
      if (e === undefined || e.next === REMOVED || (volatile && e.exp === 0)) continue;
      candDb = poolDb[poolLen];
      return e;
    }
  }
  return null;
}

let nextDb = 0;

function randomCandidate(eng: Engine, volatile: boolean): Entry | null {
  const dbs = eng.dbs;
  for (let i = 0; i < dbs.length; i++) {
    const db = dbs[nextDb++ % dbs.length];
    const e = volatile ? db.randomVolatile() : db.map.random();
    if (e !== undefined) {
      candDb = db.index;
      return e;
    }
  }
  return null;
}

/**
 * performEvictions: evict until used memory is at or under maxmemory. EVICT_FAIL when over
 * the limit with nothing (left) to evict; EVICT_RUNNING when the time budget ran out first
 * (the background cycle goes on, as Redis's eviction time proc).
 */
export function performEvictions(eng: Engine): number {
  const limit = eng.maxmemory;
  let used = eng.memoryForEviction();
  if (used <= limit) return EVICT_OK;
  const kind = eng.evictKind;
  if (kind === P.NONE) return EVICT_FAIL;
  const volatile = eng.evictVolatile;
  const budgetUs = eng.evictBudgetUs;
  const t0 = performance.now();
  let n = 0;
  while (used > limit) {
    const e = kind === P.RANDOM ? randomCandidate(eng, volatile) : bestFromPool(eng, kind, volatile);
    if (e === null) return EVICT_FAIL;
    const db = eng.dbs[candDb];
    // What the delete frees, from this db's figures alone (memoryForEviction sums every db).
    const before = db.mem + eng.dictOverhead(db.map.size);
    db.deleteEntry(e);
    used -= before - (db.mem + eng.dictOverhead(db.map.size));
    eng.stats.evictedKeys++;
    db.event(N.EVICTED, 'evicted', e.key);
    if ((++n & 15) === 0 && (performance.now() - t0) * 1000 > budgetUs) return used > limit ? EVICT_RUNNING : EVICT_OK;
  }
  return EVICT_OK;
}

// ---------------------------------------------------------------- the OOM gate

const EVAL_FAMILY = new Set(['eval', 'evalsha', 'fcall']);
const MULTI_EXEMPT = new Set(['exec', 'discard', 'quit', 'reset', 'multi', 'watch']);

/**
 * Whether processCommand rejects this command when out of memory: DENYOOM commands, EXEC of
 * a transaction holding one, anything queued into MULTI, and scripts whose declared flags
 * (shebang or function flags) neither say no-writes nor allow-oom. A script without flags
 * runs and is stopped at its first DENYOOM call instead (scripting/host.ts), as in Redis.
 */
export function rejectOnOom(c: Client, def: CommandDef, argv: Argv): boolean {
  if (def.flags & F.DENYOOM) return true;
  if (c.multi !== null) {
    if (def.name === 'exec') return c.multi.some((q) => (q.def.flags & F.DENYOOM) !== 0);
    return !MULTI_EXEMPT.has(def.name);
  }
  if (EVAL_FAMILY.has(def.name)) {
    const hook = c.engine.scriptFlagsOf;
    const flags = hook === null ? null : hook(def.name, argv);
    return flags !== null && !flags.includes('no-writes') && !flags.includes('allow-oom');
  }
  return false;
}
