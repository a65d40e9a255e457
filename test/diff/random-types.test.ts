/**
 * Seeded randomized differential test of the hash, list and set commands: for each type a
 * generator issues thousands of random operations (valid and invalid arguments, wrong types,
 * missing keys) to our server and to redis-server 7.0, and every reply is compared.
 *
 * Where Redis's order is unspecified the comparison is a multiset; where Redis's answer is
 * random (SPOP, SRANDMEMBER, HRANDFIELD) only its shape is compared, and after an SPOP our
 * set is re-synchronised to Redis's. Redis's own OBJECT ENCODING decides whether an order is
 * specified (listpack and intset: byte for byte).
 *
 * Both servers run with small encoding limits so conversions happen often. Reproduce a failure
 * with RANDOM_SEED=<seed printed in the failure> (and RANDOM_OPS to change the length).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

const SEED = Number(process.env.RANDOM_SEED ?? Math.floor(Math.random() * 2 ** 31));
const OPS = Number(process.env.RANDOM_OPS ?? 5000);

const LIMITS = [
  '--hash-max-listpack-entries', '16', '--hash-max-listpack-value', '16',
  '--set-max-intset-entries', '16', '--list-max-listpack-size', '4',
];

// ---------------------------------------------------------------- RESP decoding

type Reply = { t: string; v: string | null | Reply[] };

function parse(buf: Buffer, pos = 0): [Reply, number] {
  const nl = buf.indexOf('\r\n', pos);
  const t = String.fromCharCode(buf[pos]);
  const head = buf.toString('latin1', pos + 1, nl);
  if (t === '$') {
    const n = Number(head);
    if (n < 0) return [{ t, v: null }, nl + 2];
    return [{ t, v: buf.toString('latin1', nl + 2, nl + 2 + n) }, nl + 2 + n + 2];
  }
  if (t === '*') {
    const n = Number(head);
    if (n < 0) return [{ t, v: null }, nl + 2];
    const items: Reply[] = [];
    let p = nl + 2;
    for (let i = 0; i < n; i++) {
      const [r, q] = parse(buf, p);
      items.push(r);
      p = q;
    }
    return [{ t, v: items }, p];
  }
  return [{ t, v: head }, nl + 2];
}

const decode = (b: Buffer): Reply => parse(b)[0];
const show = (b: Buffer) => JSON.stringify(b.toString('latin1')).slice(0, 600);

function items(r: Reply): string[] {
  return (r.v as Reply[]).map((x) => String(x.v));
}

function sortedKey(r: Reply): string {
  if (r.t !== '*' || r.v === null) return JSON.stringify(r);
  return '*' + items(r).sort().join('\u0001');
}

/** HGETALL-style replies as sorted "field=value" pairs. */
function pairsKey(r: Reply): string {
  if (r.t !== '*' || r.v === null) return JSON.stringify(r);
  const a = items(r);
  const pairs: string[] = [];
  for (let i = 0; i < a.length; i += 2) pairs.push(JSON.stringify([a[i], a[i + 1]]));
  return '*' + pairs.sort().join('|');
}

/** Same reply type, and for arrays the same length. */
function sameShape(a: Reply, b: Reply): boolean {
  if (a.t !== b.t) return false;
  if (a.t === '-') return a.v === b.v;
  if (a.t === '*') return a.v === null ? b.v === null : b.v !== null && (a.v as Reply[]).length === (b.v as Reply[]).length;
  if (a.t === ':') return a.v === b.v;
  return true;
}

// ---------------------------------------------------------------- random helpers

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  constructor(readonly r: () => number) {}
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  pick<T>(a: readonly T[]): T {
    return a[Math.floor(this.r() * a.length)];
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  many<T>(lo: number, hi: number, f: () => T): T[] {
    const n = this.int(lo, hi);
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(f());
    return out;
  }
}

const ELEMENTS = [
  'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'foo', 'bar', '1', '2', '3', '4', '5', '10', '-1', '-7', '100', '007', '+1',
  '', ' ', '1.5', '9223372036854775807', '-9223372036854775808', '9223372036854775808', 'héllo', '\u0000\u00ff',
  'a-rather-long-value-of-more-than-sixteen-bytes',
];
const NUMBERS = ['-100', '-5', '-3', '-2', '-1', '0', '1', '2', '3', '5', '100', '9223372036854775807',
  '-9223372036854775808', '9223372036854775808', 'x', '1.5', '', '-0', '01'];
const FLOATS = ['0.1', '-1.5', '1e3', '3', '-0.25', '1e-5', 'abc', 'inf', '-inf', '1e400', '.5', '0x1p3', '7.0', ''];

function elem(g: Gen): string {
  if (g.chance(0.05)) return String(g.int(-50, 600));
  return g.pick(ELEMENTS);
}

// ---------------------------------------------------------------- operations

type Compare = 'bytes' | 'sorted' | 'pairs' | 'shape' | 'type' | 'scan-set' | 'scan-hash';
interface Op {
  cmd: string[];
  compare: Compare;
  /** Compare byte for byte instead when Redis reports every one of these keys in an ordered encoding. */
  orderedIf?: string[];
  /** ...and the reply has at most this many elements (a SUNION/SDIFF result that outgrew the intset is unordered). */
  orderedMax?: number;
  /** After the command, make our set at this key equal to Redis's (SPOP's random choice). */
  resyncSet?: string;
}

const ORDERED = new Set(['listpack', 'intset', 'quicklist', 'ziplist']);

function hashOp(g: Gen): Op {
  const key = g.chance(0.08) ? 'str' : g.pick(['h1', 'h2', 'h3']);
  const f = () => elem(g);
  switch (g.int(0, 19)) {
    case 0: case 1: {
      const pairs = g.many(1, 3, () => [f(), f()]).flat();
      if (g.chance(0.05)) pairs.pop();
      return { cmd: [g.pick(['HSET', 'HMSET']), key, ...pairs], compare: 'bytes' };
    }
    case 2: return { cmd: ['HSETNX', key, f(), f()], compare: 'bytes' };
    case 3: return { cmd: ['HGET', key, f()], compare: 'bytes' };
    case 4: return { cmd: ['HMGET', key, ...g.many(1, 4, f)], compare: 'bytes' };
    case 5: return { cmd: ['HDEL', key, ...g.many(1, 3, f)], compare: 'bytes' };
    case 6: return { cmd: [g.pick(['HLEN', 'HKEYS', 'HVALS']), key], compare: 'sorted', orderedIf: [key] };
    case 7: return { cmd: ['HGETALL', key], compare: 'pairs', orderedIf: [key] };
    case 8: return { cmd: [g.pick(['HSTRLEN', 'HEXISTS']), key, f()], compare: 'bytes' };
    case 9: case 10: return { cmd: ['HINCRBY', key, g.pick(['1', '2', '3', 'n']), g.pick(NUMBERS)], compare: 'bytes' };
    case 11: return { cmd: ['HINCRBYFLOAT', key, g.pick(['1', '2', 'x', 'y']), g.pick(FLOATS)], compare: 'bytes' };
    case 12: {
      const args = [key];
      if (g.chance(0.8)) args.push(g.pick(NUMBERS));
      if (g.chance(0.4)) args.push(g.pick(['WITHVALUES', 'withvalues', 'bogus']));
      return { cmd: ['HRANDFIELD', ...args], compare: 'shape' };
    }
    case 13: {
      const args = ['HSCAN', key, g.pick(['0', '0', '0', 'x'])];
      if (g.chance(0.4)) args.push('MATCH', g.pick(['*', 'a*', '?', '[0-9]*', '*o*']));
      if (g.chance(0.4)) args.push('COUNT', g.pick(['1', '3', '100', '0', 'x']));
      return { cmd: args, compare: 'scan-hash' };
    }
    case 14: return { cmd: ['HSCAN', key, '0'], compare: 'type', orderedIf: [key] };
    case 15: return { cmd: ['DEL', key], compare: 'bytes' };
    case 16: return { cmd: ['SET', 'str', f()], compare: 'bytes' };
    // At most hash-max-listpack-entries (16) pairs per HSET: Redis 7.2+ (and we) convert a
    // listpack up front when an HSET brings more pairs than that, duplicates or not, where
    // Redis 7.0 counts the fields after inserting them (a documented 7.0/7.2 difference).
    case 17: return { cmd: ['HSET', key, ...g.many(5, 16, () => [String(g.int(0, 40)), f()]).flat()], compare: 'bytes' };
    default: return { cmd: ['HINCRBYFLOAT', key, f(), g.pick(FLOATS)], compare: 'bytes' };
  }
}

function listOp(g: Gen): Op {
  const key = g.chance(0.08) ? 'str' : g.pick(['l1', 'l2', 'l3']);
  const other = g.pick(['l1', 'l2', 'l3', 'str', 'none']);
  const e = () => elem(g);
  const idx = () => g.pick(['-100', '-5', '-3', '-2', '-1', '0', '1', '2', '3', '5', '100', 'x', '9223372036854775807', '-9223372036854775808']);
  const side = () => g.pick(['LEFT', 'RIGHT', 'left', 'right', 'UP']);
  switch (g.int(0, 21)) {
    case 0: case 1: case 2: return { cmd: [g.pick(['LPUSH', 'RPUSH']), key, ...g.many(1, 5, e)], compare: 'bytes' };
    case 3: return { cmd: [g.pick(['LPUSHX', 'RPUSHX']), key, ...g.many(1, 3, e)], compare: 'bytes' };
    case 4: case 5: {
      const cmd = [g.pick(['LPOP', 'RPOP']), key];
      if (g.chance(0.6)) cmd.push(g.pick(NUMBERS));
      if (g.chance(0.03)) cmd.push('1');
      return { cmd, compare: 'bytes' };
    }
    case 6: return { cmd: ['LLEN', key], compare: 'bytes' };
    case 7: case 8: return { cmd: ['LRANGE', key, idx(), idx()], compare: 'bytes' };
    case 9: return { cmd: ['LINDEX', key, idx()], compare: 'bytes' };
    case 10: return { cmd: ['LSET', key, idx(), e()], compare: 'bytes' };
    case 11: return { cmd: ['LINSERT', key, g.pick(['BEFORE', 'AFTER', 'after', 'middle']), e(), e()], compare: 'bytes' };
    case 12: return { cmd: ['LREM', key, g.pick(['-2', '-1', '0', '1', '2', '5', 'x']), e()], compare: 'bytes' };
    case 13: return { cmd: ['LTRIM', key, idx(), idx()], compare: 'bytes' };
    case 14: {
      const cmd = ['LPOS', key, e()];
      for (let i = g.int(0, 3); i > 0; i--) {
        const opt = g.pick(['RANK', 'COUNT', 'MAXLEN', 'BOGUS']);
        cmd.push(opt, g.pick(opt === 'RANK' ? ['1', '2', '-1', '-2', '0', 'x', '3'] : ['0', '1', '2', '-1', '5', 'x']));
      }
      return { cmd, compare: 'bytes' };
    }
    case 15: return { cmd: ['LMOVE', key, other, side(), side()], compare: 'bytes' };
    case 16: return { cmd: ['RPOPLPUSH', key, other], compare: 'bytes' };
    case 17: {
      const keys = g.many(1, 3, () => g.pick(['l1', 'l2', 'l3', 'str', 'none']));
      const cmd = ['LMPOP', g.chance(0.1) ? g.pick(['0', 'x', '9']) : String(keys.length), ...keys, side()];
      if (g.chance(0.5)) cmd.push('COUNT', g.pick(['1', '2', '10', '0', '-1', 'x']));
      return { cmd, compare: 'bytes' };
    }
    case 18: return { cmd: ['DEL', key], compare: 'bytes' };
    case 19: return { cmd: ['SET', 'str', e()], compare: 'bytes' };
    default: return { cmd: ['RPUSH', key, ...g.many(5, 15, e)], compare: 'bytes' };
  }
}

function setOp(g: Gen): Op {
  const keys = ['s1', 's2', 's3', 's4'];
  const key = g.chance(0.08) ? 'str' : g.pick(keys);
  const anyKey = () => g.pick([...keys, 'str', 'none']);
  const m = () => (g.chance(0.5) ? String(g.int(-20, 40)) : elem(g));
  switch (g.int(0, 22)) {
    case 0: case 1: case 2: return { cmd: ['SADD', key, ...g.many(1, 6, m)], compare: 'bytes' };
    case 3: return { cmd: ['SREM', key, ...g.many(1, 4, m)], compare: 'bytes' };
    case 4: return { cmd: ['SMEMBERS', key], compare: 'sorted', orderedIf: [key] };
    case 5: return { cmd: [g.pick(['SISMEMBER']), key, m()], compare: 'bytes' };
    case 6: return { cmd: ['SMISMEMBER', key, ...g.many(1, 4, m)], compare: 'bytes' };
    case 7: return { cmd: ['SCARD', key], compare: 'bytes' };
    case 8: {
      const cmd = ['SPOP', key];
      if (g.chance(0.6)) cmd.push(g.pick(NUMBERS));
      return { cmd, compare: 'shape', resyncSet: key };
    }
    case 9: {
      const cmd = ['SRANDMEMBER', key];
      if (g.chance(0.7)) cmd.push(g.pick(NUMBERS));
      return { cmd, compare: 'shape' };
    }
    case 10: return { cmd: ['SMOVE', anyKey(), anyKey(), m()], compare: 'bytes' };
    case 11: case 12: {
      const srcs = g.many(1, 3, anyKey);
      return { cmd: [g.pick(['SINTER', 'SUNION', 'SDIFF']), ...srcs], compare: 'sorted', orderedIf: srcs, orderedMax: 16 };
    }
    case 13: case 14: {
      const srcs = g.many(1, 3, anyKey);
      return { cmd: [g.pick(['SINTERSTORE', 'SUNIONSTORE', 'SDIFFSTORE']), g.pick([...keys, 'str']), ...srcs], compare: 'bytes' };
    }
    case 15: {
      const srcs = g.many(1, 3, anyKey);
      const cmd = ['SINTERCARD', g.chance(0.1) ? g.pick(['0', 'x', '9']) : String(srcs.length), ...srcs];
      if (g.chance(0.4)) cmd.push('LIMIT', g.pick(['0', '1', '2', '-1', 'x']));
      return { cmd, compare: 'bytes' };
    }
    case 16: {
      const args = ['SSCAN', key, g.pick(['0', '0', '0', 'x'])];
      if (g.chance(0.4)) args.push('MATCH', g.pick(['*', '1*', '?', '[a-c]*', '*o*']));
      if (g.chance(0.4)) args.push('COUNT', g.pick(['1', '3', '100', '0', 'x']));
      return { cmd: args, compare: 'scan-set' };
    }
    case 17: return { cmd: ['DEL', key], compare: 'bytes' };
    case 18: return { cmd: ['SET', 'str', m()], compare: 'bytes' };
    // At most set-max-intset-entries (16) members per SADD: Redis 7.2+ (and we) size a new set
    // from the argument count, so a longer SADD of repeated integers makes a listpack where
    // Redis 7.0 keeps an intset (a documented 7.0/7.2 difference).
    default: return { cmd: ['SADD', key, ...g.many(5, 16, () => String(g.int(-30, 60)))], compare: 'bytes' };
  }
}

// ---------------------------------------------------------------- runner

/** Iterate a SCAN to completion; the cursor argument of `cmd` is at index 2. */
async function scanAll(c: RawClient, cmd: string[]): Promise<Reply> {
  const seen: string[] = [];
  let cursor = cmd[2];
  for (let rounds = 0; rounds < 100000; rounds++) {
    const r = decode(await c.call(...cmd.slice(0, 2), cursor, ...cmd.slice(3)));
    if (r.t !== '*') return r;
    const [cur, els] = r.v as Reply[];
    seen.push(...items(els));
    cursor = String(cur.v);
    if (cursor === '0') break;
  }
  return { t: '*', v: seen.map((v) => ({ t: '$', v })) };
}

function scanKey(r: Reply, hash: boolean): string {
  if (r.t !== '*') return JSON.stringify(r);
  const a = items(r);
  const uniq = new Set<string>();
  if (hash) for (let i = 0; i < a.length; i += 2) uniq.add(JSON.stringify([a[i], a[i + 1]]));
  else for (const x of a) uniq.add(x);
  return [...uniq].sort().join('|');
}

async function resyncSet(ours: RawClient, redis: RawClient, key: string): Promise<void> {
  const [a, b] = await Promise.all([ours.call('SMEMBERS', key), redis.call('SMEMBERS', key)]);
  const ra = decode(a);
  const rb = decode(b);
  if (ra.t !== '*' || rb.t !== '*') return; // not a set (WRONGTYPE): nothing to align
  const mine = new Set(items(ra));
  const theirs = new Set(items(rb));
  const extra = [...mine].filter((x) => !theirs.has(x));
  const missing = [...theirs].filter((x) => !mine.has(x));
  if (missing.length > 0) await ours.call('SADD', key, ...missing.map((x) => Buffer.from(x, 'latin1')));
  if (extra.length > 0) await ours.call('SREM', key, ...extra.map((x) => Buffer.from(x, 'latin1')));
}

async function runType(name: string, seed: number, gen: (g: Gen) => Op, ours: RawClient, redis: RawClient): Promise<void> {
  await Promise.all([ours.call('FLUSHALL'), redis.call('FLUSHALL')]);
  const g = new Gen(rng(seed));
  const history: string[] = [];
  for (let i = 0; i < OPS; i++) {
    const op = gen(g);
    const args = op.cmd.map((x) => Buffer.from(x, 'latin1'));
    let ordered = false;
    if (op.orderedIf) {
      const encs = await Promise.all(op.orderedIf.map((k) => redis.call('OBJECT', 'ENCODING', k)));
      ordered = encs.every((e) => {
        const r = decode(e);
        return r.t === '$' && r.v !== null && ORDERED.has(String(r.v));
      });
    }
    let a: Buffer;
    let b: Buffer;
    let same: boolean;
    if (op.compare === 'scan-set' || op.compare === 'scan-hash') {
      const [ra, rb] = await Promise.all([scanAll(ours, op.cmd), scanAll(redis, op.cmd)]);
      a = Buffer.from(JSON.stringify(ra));
      b = Buffer.from(JSON.stringify(rb));
      same = scanKey(ra, op.compare === 'scan-hash') === scanKey(rb, op.compare === 'scan-hash');
    } else {
      [a, b] = await Promise.all([ours.call(...args), redis.call(...args)]);
      const ra = decode(a);
      const rb = decode(b);
      if (ordered && op.orderedMax !== undefined && rb.t === '*' && rb.v !== null && (rb.v as Reply[]).length > op.orderedMax) {
        ordered = false;
      }
      if (ordered || op.compare === 'bytes') same = a.equals(b);
      else if (op.compare === 'type') same = a[0] === b[0];
      else if (op.compare === 'sorted') same = sortedKey(ra) === sortedKey(rb);
      else if (op.compare === 'pairs') same = pairsKey(ra) === pairsKey(rb);
      else same = sameShape(ra, rb);
    }
    history.push(`${i}: ${op.cmd.map((x) => JSON.stringify(x)).join(' ')}`);
    if (history.length > 12) history.shift();
    if (!same) {
      assert.fail(
        `${name}: seed ${SEED} (type seed ${seed}), op ${i}: ${op.cmd.join(' ')}\n` +
        `  ours:  ${show(a)}\n  redis: ${show(b)}\n  last operations:\n    ${history.join('\n    ')}\n` +
        `  reproduce with RANDOM_SEED=${SEED}`,
      );
    }
    if (op.resyncSet) await resyncSet(ours, redis, op.resyncSet);
  }
  // Final state of every key must agree.
  for (const key of ['h1', 'h2', 'h3', 'l1', 'l2', 'l3', 's1', 's2', 's3', 's4', 'str']) {
    const [ta, tb] = await Promise.all([ours.call('DEL', key), redis.call('DEL', key)]);
    assert.ok(ta.equals(tb), `${name}: seed ${SEED}: key ${key} exists on one side only`);
  }
}

let oursProc: Proc;
let redisProc: Proc;
let ours: RawClient;
let redis: RawClient;

before(async () => {
  [oursProc, redisProc] = await Promise.all([
    startOurs(['--appendfsync', 'no', ...LIMITS]),
    startRedis(LIMITS),
  ]);
  [ours, redis] = await Promise.all([RawClient.connect(oursProc.port), RawClient.connect(redisProc.port)]);
  console.log(`random-types seed: ${SEED} (RANDOM_SEED=${SEED} to reproduce), ${OPS} operations per type`);
});
after(async () => {
  ours?.close();
  redis?.close();
  await Promise.all([oursProc?.stop(), redisProc?.stop()]);
});

describe('randomized differential: hash, list, set', () => {
  it('hashes', async () => runType('hash', SEED, hashOp, ours, redis));
  it('lists', async () => runType('list', SEED + 1, listOp, ours, redis));
  it('sets', async () => runType('set', SEED + 2, setOp, ours, redis));
});

