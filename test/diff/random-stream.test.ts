/**
 * Seeded randomized differential test of streams and consumer groups: thousands of random
 * XADD/XDEL/XTRIM/XRANGE/XREAD/XSETID operations, then a consumer-group mix (XGROUP,
 * XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO), sent to our server and to
 * redis-server 7.0; every reply is compared.
 *
 * Ids are explicit or "<ms>-*" so both servers build the same streams. Replies that carry
 * times are compared with the times masked (XPENDING's idle, XINFO's seen-time, delivery
 * times and idle); idle thresholds (XPENDING IDLE, XCLAIM/XAUTOCLAIM min-idle-time) are 0 or
 * far from the times the test produces, so which entries they select is deterministic.
 *
 * Both servers run with small stream nodes (stream-node-max-entries 7, -bytes 600) so node
 * boundaries, approximate trimming and XINFO's radix tree figures are exercised. Reproduce
 * a failure with RANDOM_SEED=<seed printed in the failure> (RANDOM_OPS changes the length).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

const SEED = Number(process.env.RANDOM_SEED ?? Math.floor(Math.random() * 2 ** 31));
const OPS = Number(process.env.RANDOM_OPS ?? 3000);

const LIMITS = ['--stream-node-max-entries', '7', '--stream-node-max-bytes', '600'];

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
const show = (b: Buffer) => JSON.stringify(b.toString('latin1')).slice(0, 1500);
const TIME: Reply = { t: 'T', v: 'time' };

function arr(r: Reply): Reply[] | null {
  return r.t === '*' && r.v !== null ? (r.v as Reply[]) : null;
}

/** In a flat RESP2 map, replace the values of `fields` with a time marker. */
function maskMap(r: Reply, fields: readonly string[], nested?: (field: string, v: Reply) => Reply): Reply {
  const a = arr(r);
  if (a === null) return r;
  const out: Reply[] = [];
  for (let i = 0; i + 1 < a.length; i += 2) {
    const f = String(a[i].v);
    out.push(a[i], fields.includes(f) ? TIME : nested ? nested(f, a[i + 1]) : a[i + 1]);
  }
  return { t: '*', v: out };
}

/** Replace element `idx` of each row of an array with a time marker. */
function maskRows(r: Reply, idx: number): Reply {
  const a = arr(r);
  if (a === null) return r;
  return { t: '*', v: a.map((row) => {
    const x = arr(row);
    if (x === null) return row;
    return { t: '*', v: x.map((e, i) => (i === idx ? TIME : e)) };
  }) };
}

/** The reply with its time-dependent parts masked, for the command that produced it. */
function masked(cmd: string[], r: Reply): Reply {
  const name = cmd[0].toUpperCase();
  const sub = (cmd[1] ?? '').toUpperCase();
  if (r.t === '-') return r;
  if (name === 'XPENDING' && cmd.length > 3) return maskRows(r, 2);
  if (name === 'XINFO' && sub === 'CONSUMERS') {
    const a = arr(r);
    return a === null ? r : { t: '*', v: a.map((m) => maskMap(m, ['idle'])) };
  }
  if (name === 'XINFO' && sub === 'STREAM' && cmd.length > 3) {
    return maskMap(r, [], (f, v) => {
      if (f !== 'groups') return v;
      const groups = arr(v);
      if (groups === null) return v;
      return { t: '*', v: groups.map((g) => maskMap(g, [], (gf, gv) => {
        if (gf === 'pending') return maskRows(gv, 2);
        if (gf !== 'consumers') return gv;
        const cs = arr(gv);
        if (cs === null) return gv;
        return { t: '*', v: cs.map((cm) => maskMap(cm, ['seen-time'], (cf, cv) => (cf === 'pending' ? maskRows(cv, 1) : cv))) };
      })) };
    });
  }
  return r;
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
  /** A millisecond clock for ids: mostly moves forward. */
  ms = 1;
  /** Ids handed out recently (for XDEL, ranges, claims...). */
  readonly ids: string[] = [];
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
  /** Next sequence for explicit ids in the current millisecond. */
  seq = 0;
  /** An id for XADD: usually the next one, sometimes "<ms>-*", sometimes stale or odd. */
  newId(): string {
    if (this.chance(0.3)) {
      this.ms += this.pick([1, 1, 1, 2, 50, 100000, 4294967296]);
      this.seq = this.int(0, 3);
    }
    const r = this.r();
    if (r < 0.45) return `${this.ms}-*`;
    if (r < 0.88) {
      this.seq += this.pick([1, 1, 1, 2, 7]);
      return `${this.ms}-${this.seq}`;
    }
    if (r < 0.94) return this.known();
    return this.pick(['0-0', '0-1', '0', '18446744073709551615-18446744073709551615', 'x', `${this.ms}`, `${this.ms + 1}`]);
  }
  /** Remember an id a server generated. */
  added(id: string): void {
    this.ids.push(id);
    if (this.ids.length > 60) this.ids.shift();
  }
  /** An id that probably exists (or existed), or a nearby one. */
  known(): string {
    if (this.ids.length === 0 || this.chance(0.1)) return `${this.int(0, this.ms)}-${this.int(0, 5)}`;
    return this.pick(this.ids);
  }
  bound(start: boolean): string {
    const r = this.r();
    if (r < 0.25) return start ? '-' : '+';
    if (r < 0.35) return '(' + this.known();
    if (r < 0.45) return String(this.int(0, this.ms + 1));
    if (r < 0.5) return this.pick(['(-', '(+', 'x', '(0-0', '(18446744073709551615-18446744073709551615']);
    return this.known();
  }
}

const FIELD_SETS = [['f'], ['f'], ['f', 'g'], ['g', 'f'], ['a', 'b', 'c'], ['1', '2'], ['f', 'f']];

function value(g: Gen): string {
  const r = g.r();
  if (r < 0.3) return String(g.int(-300000, 300000));
  if (r < 0.4) return g.pick(['0', '127', '128', '-4096', '4095', '32768', '8388608', '2147483648', '9223372036854775807',
    '-9223372036854775808', '9223372036854775808', '-0', '01', '+5', '1.5', '']);
  return 'v'.repeat(g.pick([0, 1, 5, 20, 63, 64, 100, 200]));
}

function trimArgs(g: Gen, withLimit: boolean): string[] {
  const strat = g.pick(['MAXLEN', 'MINID', 'maxlen']);
  const out = [strat];
  const mode = g.pick(['~', '~', '=', '']);
  if (mode !== '') out.push(mode);
  out.push(strat === 'MINID' ? g.known() : String(g.pick([0, 1, 3, 5, 10, 20, 40, g.int(0, 80)])));
  if (withLimit && g.chance(0.3)) out.push('LIMIT', g.pick(['0', '1', '7', '20', '100', '-1']));
  return out;
}

interface Op {
  cmd: string[];
}

const KEYS = ['s1', 's2'];

function streamOp(g: Gen): Op {
  const key = g.chance(0.05) ? 'str' : g.pick(KEYS);
  switch (g.int(0, 24)) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: {
      const cmd = ['XADD', key];
      if (g.chance(0.05)) cmd.push('NOMKSTREAM');
      if (g.chance(0.15)) cmd.push(...trimArgs(g, true));
      cmd.push(g.newId());
      for (const f of g.pick(FIELD_SETS)) cmd.push(f, value(g));
      if (g.chance(0.02)) cmd.pop();
      return { cmd };
    }
    case 9: case 10: return { cmd: ['XDEL', key, ...g.many(1, 4, () => g.known())] };
    case 11: return { cmd: ['XTRIM', key, ...trimArgs(g, true)] };
    case 12: case 13: case 14: {
      const cmd = [g.pick(['XRANGE', 'XREVRANGE']), key, g.bound(true), g.bound(false)];
      if (g.chance(0.4)) cmd.push('COUNT', g.pick(['0', '1', '3', '10', '-1']));
      return { cmd };
    }
    case 15: return { cmd: ['XLEN', key] };
    case 16: case 17: {
      const keys = g.many(1, 2, () => g.pick([...KEYS, 'none']));
      const cmd = ['XREAD'];
      if (g.chance(0.4)) cmd.push('COUNT', g.pick(['1', '2', '5', '0']));
      cmd.push('STREAMS', ...keys, ...keys.map(() => (g.chance(0.2) ? '$' : g.known())));
      return { cmd };
    }
    case 18: case 19: return { cmd: ['XINFO', 'STREAM', key] };
    case 20: {
      const cmd = ['XSETID', key, g.chance(0.7) ? `${g.ms + g.int(0, 3)}-${g.int(0, 9)}` : g.known()];
      if (g.chance(0.3)) cmd.push('ENTRIESADDED', String(g.int(0, 400)));
      if (g.chance(0.3)) cmd.push('MAXDELETEDID', g.known());
      return { cmd };
    }
    case 21: return { cmd: ['XINFO', 'STREAM', key, 'FULL', 'COUNT', g.pick(['0', '3', '10'])] };
    case 22: return { cmd: g.chance(0.5) ? ['DEL', key] : ['SET', 'str', 'x'] };
    default: {
      // A burst of appends with one field set fills nodes.
      const cmd = ['XADD', key, g.newId(), 'f', value(g)];
      return { cmd };
    }
  }
}

const GROUPS = ['g1', 'g2'];
const CONSUMERS = ['alice', 'bob', 'carol'];
const IDLES = ['0', '0', '500000000', '3000000000000', '-5'];

function groupOp(g: Gen): Op {
  const key = g.chance(0.04) ? 'str' : g.pick(KEYS);
  const grp = g.chance(0.05) ? 'nog' : g.pick(GROUPS);
  const cons = g.pick(CONSUMERS);
  switch (g.int(0, 29)) {
    case 0: case 1: case 2: case 3: {
      const cmd = ['XADD', key, g.newId(), ...g.pick(FIELD_SETS).flatMap((f) => [f, value(g)])];
      return { cmd };
    }
    case 4: {
      const cmd = ['XGROUP', 'CREATE', key, grp, g.pick(['$', '0', g.known()])];
      if (g.chance(0.3)) cmd.push('MKSTREAM');
      if (g.chance(0.2)) cmd.push('ENTRIESREAD', g.pick(['-1', '0', '3', String(g.int(0, 100))]));
      return { cmd };
    }
    case 5: {
      const cmd = ['XGROUP', 'SETID', key, grp, g.pick(['$', '0', '-', g.known()])];
      if (g.chance(0.3)) cmd.push('ENTRIESREAD', g.pick(['-1', '0', '3', String(g.int(0, 100))]));
      return { cmd };
    }
    case 6: return { cmd: g.chance(0.3) ? ['XGROUP', 'DESTROY', key, grp] : ['XGROUP', 'CREATECONSUMER', key, grp, cons] };
    case 7: return { cmd: ['XGROUP', 'DELCONSUMER', key, grp, cons] };
    case 8: case 9: case 10: case 11: {
      const keys = g.many(1, 2, () => g.pick(KEYS));
      const cmd = ['XREADGROUP', 'GROUP', grp, cons];
      if (g.chance(0.5)) cmd.push('COUNT', g.pick(['1', '2', '3', '0']));
      if (g.chance(0.15)) cmd.push('NOACK');
      cmd.push('STREAMS', ...keys, ...keys.map(() => (g.chance(0.75) ? '>' : g.pick(['0', g.known()]))));
      return { cmd };
    }
    case 12: case 13: return { cmd: ['XACK', key, grp, ...g.many(1, 3, () => g.known())] };
    case 14: return { cmd: ['XPENDING', key, grp] };
    case 15: case 16: {
      const cmd = ['XPENDING', key, grp];
      if (g.chance(0.3)) cmd.push('IDLE', g.pick(IDLES));
      cmd.push(g.bound(true), g.bound(false), g.pick(['1', '3', '10', '0']));
      if (g.chance(0.4)) cmd.push(g.pick([...CONSUMERS, 'nobody']));
      return { cmd };
    }
    case 17: case 18: {
      const cmd = ['XCLAIM', key, grp, cons, g.pick(IDLES), ...g.many(1, 3, () => g.known())];
      for (let i = g.int(0, 3); i > 0; i--) {
        const opt = g.pick(['FORCE', 'JUSTID', 'RETRYCOUNT', 'IDLE', 'TIME', 'LASTID']);
        cmd.push(opt);
        if (opt === 'RETRYCOUNT') cmd.push(g.pick(['0', '5', '-1']));
        if (opt === 'IDLE') cmd.push(g.pick(['0', '1000000000']));
        if (opt === 'TIME') cmd.push(g.pick(['1000', '0']));
        if (opt === 'LASTID') cmd.push(g.known());
      }
      return { cmd };
    }
    case 19: case 20: {
      const cmd = ['XAUTOCLAIM', key, grp, cons, g.pick(IDLES), g.pick(['0', '-', g.known(), '(' + g.known()])];
      if (g.chance(0.5)) cmd.push('COUNT', g.pick(['1', '2', '5', '100']));
      if (g.chance(0.3)) cmd.push('JUSTID');
      return { cmd };
    }
    case 21: case 22: return { cmd: ['XINFO', 'GROUPS', key] };
    case 23: return { cmd: ['XINFO', 'CONSUMERS', key, grp] };
    case 24: return { cmd: ['XINFO', 'STREAM', key, 'FULL'] };
    case 25: return { cmd: ['XDEL', key, ...g.many(1, 2, () => g.known())] };
    case 26: return { cmd: ['XTRIM', key, ...trimArgs(g, false)] };
    case 27: return { cmd: ['XINFO', 'STREAM', key] };
    default: return { cmd: ['XRANGE', key, '-', '+', 'COUNT', '5'] };
  }
}

// ---------------------------------------------------------------- runner

async function run(name: string, seed: number, gen: (g: Gen) => Op, ours: RawClient, redis: RawClient): Promise<void> {
  await Promise.all([ours.call('FLUSHALL'), redis.call('FLUSHALL')]);
  const g = new Gen(rng(seed));
  const history: string[] = [];
  // Per command: replies that were errors / empty / otherwise (RANDOM_STATS=1 prints them).
  const stats = new Map<string, [number, number, number]>();
  const check = async (cmd: string[], i: number | string) => {
    const args = cmd.map((x) => Buffer.from(x, 'latin1'));
    const [a, b] = await Promise.all([ours.call(...args), redis.call(...args)]);
    if (cmd[0] === 'XADD' && b[0] === 0x24 && b[1] !== 0x2d) g.added(String(decode(b).v));
    const st = stats.get(cmd[0]) ?? [0, 0, 0];
    st[b[0] === 0x2d ? 0 : b.length <= 5 ? 1 : 2]++;
    stats.set(cmd[0], st);
    const same = a.equals(b) || JSON.stringify(masked(cmd, decode(a))) === JSON.stringify(masked(cmd, decode(b)));
    history.push(`${i}: ${cmd.map((x) => JSON.stringify(x)).join(' ')}`);
    if (history.length > 15) history.shift();
    if (!same) {
      assert.fail(
        `${name}: seed ${SEED} (run seed ${seed}), op ${i}: ${cmd.join(' ')}\n` +
        `  ours:  ${show(a)}\n  redis: ${show(b)}\n  last operations:\n    ${history.join('\n    ')}\n` +
        `  reproduce with RANDOM_SEED=${SEED}`,
      );
    }
  };
  for (let i = 0; i < OPS; i++) await check(gen(g).cmd, i);
  if (process.env.RANDOM_STATS) console.log(name, 'error/short/long replies:', Object.fromEntries(stats));
  // The whole final state must agree.
  for (const key of KEYS) {
    await check(['XINFO', 'STREAM', key, 'FULL', 'COUNT', '0'], 'final');
    await check(['XINFO', 'GROUPS', key], 'final');
    await check(['XRANGE', key, '-', '+'], 'final');
  }
}

let oursProc: Proc;
let redisProc: Proc;
let ours: RawClient;
let redis: RawClient;

before(async () => {
  [oursProc, redisProc] = await Promise.all([startOurs(['--appendfsync', 'no', ...LIMITS]), startRedis(LIMITS)]);
  [ours, redis] = await Promise.all([RawClient.connect(oursProc.port), RawClient.connect(redisProc.port)]);
  console.log(`random-stream seed: ${SEED} (RANDOM_SEED=${SEED} to reproduce), ${OPS} operations per run`);
});
after(async () => {
  ours?.close();
  redis?.close();
  await Promise.all([oursProc?.stop(), redisProc?.stop()]);
});

describe('randomized differential: streams', () => {
  it('entries: XADD, XDEL, XTRIM, ranges, XREAD, XSETID, XINFO', async () => run('streams', SEED, streamOp, ours, redis));
  it('consumer groups: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO', async () =>
    run('groups', SEED + 1, groupOp, ours, redis));
});
