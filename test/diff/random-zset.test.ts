/**
 * Seeded randomized differential test of the sorted-set commands: thousands of random
 * operations (valid and invalid arguments, wrong types, missing keys, every range form, set
 * algebra, pops, stores) go to our server and to redis-server 7.0, and every reply is compared
 * byte for byte (a sorted set's order is fully specified). Only ZRANDMEMBER, whose answer is
 * random, is compared by its shape. Reproduce a failure with RANDOM_SEED=<printed seed>.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Proc, withBothServers } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { rng } from '../helpers/rng.js';

const SEED = Number(process.env.RANDOM_SEED ?? Math.floor(Math.random() * 2 ** 31));
const OPS = Number(process.env.RANDOM_OPS ?? 4000);
/** RANDOM_CHECK=1: also compare every sorted set's contents after each operation (finds the
 * operation that made the states diverge, rather than the later one that showed it). */
const CHECK = process.env.RANDOM_CHECK === '1';

const KEYS = ['z1', 'z2', 'z3', 'plainset', 'str', 'missing'];
const MEMBERS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'aa', 'ab', 'longer-member', '1', '2', '10', ''];
const SCORES = ['0', '1', '2', '-1', '1.5', '-0', '3', '10', '1e3', 'inf', '-inf', '+inf', '0.1', '7', 'x', 'nan', ' 1'];
const BOUNDS = ['-inf', '+inf', '0', '1', '(1', '2', '(2.5', '5', '(', 'x', '10', '-1'];
const LEX = ['-', '+', '[a', '(a', '[c', '(d', '[aa', '[longer-member', 'b', '[', '('];
const RANKS = ['0', '1', '-1', '2', '-2', '5', '-100', '100', 'x'];

function generator(r: () => number) {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)];
  const key = () => (r() < 0.85 ? pick(['z1', 'z2', 'z3']) : pick(KEYS));
  const members = (n: number) => Array.from({ length: n }, () => pick(MEMBERS));
  const pairs = (n: number) => Array.from({ length: n }, () => [pick(SCORES.slice(0, 14)), pick(MEMBERS)]).flat();
  const flags = () => ['NX', 'XX', 'GT', 'LT', 'CH', 'INCR'].filter(() => r() < 0.15);
  const range = (): string[] => {
    const form = r();
    if (form < 0.4) return [pick(RANKS), pick(RANKS)];
    if (form < 0.75) return [pick(BOUNDS), pick(BOUNDS), 'BYSCORE'];
    return [pick(LEX), pick(LEX), 'BYLEX'];
  };
  const opts = () => {
    const o: string[] = [];
    if (r() < 0.3) o.push('REV');
    if (r() < 0.3) o.push('LIMIT', pick(['0', '1', '2', '-1']), pick(['1', '2', '-1', '0']));
    if (r() < 0.4) o.push('WITHSCORES');
    return o;
  };
  const numkeys = () => {
    const n = 1 + Math.floor(r() * 3);
    return [String(r() < 0.05 ? 0 : n), ...Array.from({ length: n }, key)];
  };
  const algebraOpts = (n: string[]) => {
    const o: string[] = [];
    const count = Number(n[0]);
    if (r() < 0.3 && count > 0) o.push('WEIGHTS', ...Array.from({ length: count }, () => pick(['1', '2', '0.5', '-1', '0', 'x'])));
    if (r() < 0.3) o.push('AGGREGATE', pick(['SUM', 'MIN', 'MAX', 'AVG']));
    return o;
  };
  return (): { cmd: string[]; random?: boolean } => {
    const x = r();
    const k = key();
    if (x < 0.18) return { cmd: ['ZADD', k, ...flags(), ...pairs(1 + Math.floor(r() * 4))] };
    if (x < 0.22) return { cmd: ['ZINCRBY', k, pick(SCORES), pick(MEMBERS)] };
    if (x < 0.27) return { cmd: ['ZREM', k, ...members(1 + Math.floor(r() * 3))] };
    if (x < 0.29) return { cmd: ['ZCARD', k] };
    if (x < 0.32) return { cmd: ['ZSCORE', k, pick(MEMBERS)] };
    if (x < 0.34) return { cmd: ['ZMSCORE', k, ...members(3)] };
    if (x < 0.37) return { cmd: [pick(['ZRANK', 'ZREVRANK']), k, pick(MEMBERS)] };
    if (x < 0.40) return { cmd: ['ZCOUNT', k, pick(BOUNDS), pick(BOUNDS)] };
    if (x < 0.42) return { cmd: ['ZLEXCOUNT', k, pick(LEX), pick(LEX)] };
    if (x < 0.52) return { cmd: ['ZRANGE', k, ...range(), ...opts()] };
    if (x < 0.56) return { cmd: [pick(['ZRANGEBYSCORE', 'ZREVRANGEBYSCORE']), k, pick(BOUNDS), pick(BOUNDS), ...(r() < 0.5 ? ['WITHSCORES'] : []), ...(r() < 0.3 ? ['LIMIT', '0', '2'] : [])] };
    if (x < 0.59) return { cmd: [pick(['ZRANGEBYLEX', 'ZREVRANGEBYLEX']), k, pick(LEX), pick(LEX), ...(r() < 0.3 ? ['LIMIT', '1', '2'] : [])] };
    if (x < 0.61) return { cmd: ['ZREVRANGE', k, pick(RANKS), pick(RANKS), ...(r() < 0.5 ? ['WITHSCORES'] : [])] };
    if (x < 0.64) return { cmd: ['ZREMRANGEBYRANK', k, pick(RANKS), pick(RANKS)] };
    if (x < 0.66) return { cmd: ['ZREMRANGEBYSCORE', k, pick(BOUNDS), pick(BOUNDS)] };
    if (x < 0.67) return { cmd: ['ZREMRANGEBYLEX', k, pick(LEX), pick(LEX)] };
    if (x < 0.71) return { cmd: [pick(['ZPOPMIN', 'ZPOPMAX']), k, ...(r() < 0.5 ? [pick(['0', '1', '2', '5', '-1'])] : [])] };
    if (x < 0.73) return { cmd: ['ZMPOP', ...numkeys(), pick(['MIN', 'MAX']), ...(r() < 0.5 ? ['COUNT', pick(['1', '2', '0'])] : [])] };
    if (x < 0.78) {
      const n = numkeys();
      const op = pick(['ZUNION', 'ZINTER', 'ZDIFF']);
      return { cmd: [op, ...n, ...(op === 'ZDIFF' ? [] : algebraOpts(n)), ...(r() < 0.5 ? ['WITHSCORES'] : [])] };
    }
    if (x < 0.83) {
      const n = numkeys();
      const op = pick(['ZUNIONSTORE', 'ZINTERSTORE', 'ZDIFFSTORE']);
      return { cmd: [op, key(), ...n, ...(op === 'ZDIFFSTORE' ? [] : algebraOpts(n))] };
    }
    if (x < 0.85) return { cmd: ['ZINTERCARD', ...numkeys(), ...(r() < 0.3 ? ['LIMIT', pick(['0', '1', '-1'])] : [])] };
    if (x < 0.88) {
      const rg = range();
      return { cmd: ['ZRANGESTORE', key(), k, ...rg, ...opts().filter((o) => o !== 'WITHSCORES')] };
    }
    if (x < 0.90) return { cmd: ['ZRANDMEMBER', k, ...(r() < 0.6 ? [pick(['1', '3', '-3', '0'])] : [])], random: true };
    // (plain sets report 7.2's listpack encoding on our side: zsets only)
    if (x < 0.92) return { cmd: ['OBJECT', 'ENCODING', pick(['z1', 'z2', 'z3'])] };
    if (x < 0.94) return { cmd: ['TYPE', k] };
    if (x < 0.96) return { cmd: ['SADD', 'plainset', ...members(2)] };
    if (x < 0.97) return { cmd: ['SET', 'str', 'v'] };
    if (x < 0.985) return { cmd: ['DEL', k] };
    return { cmd: ['ZSCAN', k, '0', ...(r() < 0.5 ? ['MATCH', pick(['*', 'a*', '?'])] : [])] };
  };
}

/**
 * Operations on two big sets (tens of thousands of members: a B+tree of several levels, where
 * the small sets above are single leaves): 'big' with many equal scores, 'lexz' with all
 * scores equal (lex ranges). Updates, removals and pops split and merge nodes on the way.
 */
function bigGenerator(r: () => number, size: number) {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)];
  const member = () => 'm' + Math.floor(r() * size * 1.5);
  const score = () => String(r() < 0.5 ? Math.floor(r() * 200) : (r() * 1000 - 500).toFixed(3));
  const lexm = () => 'w' + Math.floor(r() * size * 1.5).toString(36);
  const lexb = () => (r() < 0.1 ? pick(['-', '+']) : pick(['[', '(']) + lexm());
  const fill = (key: string, lex: boolean) => {
    const args: string[] = ['ZADD', key];
    for (let i = 0; i < size; i++) args.push(lex ? '0' : score(), lex ? lexm() : member());
    return args;
  };
  return {
    fill,
    next: (): string[] => {
      const x = r();
      if (x < 0.2) return ['ZADD', 'big', ...Array.from({ length: 1 + Math.floor(r() * 20) }, () => [score(), member()]).flat()];
      if (x < 0.27) return ['ZINCRBY', 'big', pick(['1', '-1', '0.5', '100']), member()];
      if (x < 0.35) return ['ZREM', 'big', ...Array.from({ length: 1 + Math.floor(r() * 30) }, member)];
      if (x < 0.45) return [pick(['ZRANK', 'ZREVRANK']), 'big', member()]; // (WITHSCORE is 7.2's)
      if (x < 0.52) {
        const a = Math.floor(r() * size);
        return ['ZRANGE', 'big', String(a), String(a + Math.floor(r() * 40)), ...(r() < 0.3 ? ['REV'] : []), ...(r() < 0.5 ? ['WITHSCORES'] : [])];
      }
      if (x < 0.6) {
        const lo = Math.floor(r() * 220) - 10;
        return ['ZRANGE', 'big', pick(['', '(']) + lo, pick(['', '(']) + (lo + Math.floor(r() * 3)), 'BYSCORE', 'LIMIT', String(Math.floor(r() * 5)), String(Math.floor(r() * 50)), ...(r() < 0.5 ? ['WITHSCORES'] : [])];
      }
      if (x < 0.66) return ['ZCOUNT', 'big', pick(['-inf', String(Math.floor(r() * 200)), '(' + Math.floor(r() * 200)]), pick(['+inf', String(Math.floor(r() * 200)), '(' + Math.floor(r() * 200)])];
      if (x < 0.68) {
        const a = Math.floor(r() * size) * (r() < 0.2 ? -1 : 1);
        return ['ZREMRANGEBYRANK', 'big', String(a), String(a + Math.floor(r() * 300))];
      }
      if (x < 0.7) return ['ZREMRANGEBYSCORE', 'big', String(Math.floor(r() * 200)), '(' + Math.floor(r() * 200)];
      if (x < 0.73) return [pick(['ZPOPMIN', 'ZPOPMAX']), 'big', String(1 + Math.floor(r() * 30))];
      if (x < 0.75) return ['ZSCORE', 'big', member()];
      if (x < 0.8) return ['ZADD', 'lexz', ...Array.from({ length: 1 + Math.floor(r() * 20) }, () => ['0', lexm()]).flat()];
      if (x < 0.84) return ['ZREM', 'lexz', ...Array.from({ length: 1 + Math.floor(r() * 30) }, lexm)];
      if (x < 0.9) return [pick(['ZRANGEBYLEX', 'ZREVRANGEBYLEX']), 'lexz', lexb(), lexb(), 'LIMIT', String(Math.floor(r() * 3)), String(Math.floor(r() * 30))];
      if (x < 0.94) return ['ZLEXCOUNT', 'lexz', lexb(), lexb()];
      if (x < 0.96) return ['ZREMRANGEBYLEX', 'lexz', '[' + lexm(), '(' + lexm()];
      if (x < 0.98) return [pick(['ZRANK', 'ZREVRANK']), 'lexz', lexm()];
      return r() < 0.5 ? ['ZCARD', pick(['big', 'lexz'])] : ['OBJECT', 'ENCODING', pick(['big', 'lexz'])];
    },
  };
}

describe('randomized differential: sorted sets', () => {
  let ours: Proc;
  let redis: Proc;
  withBothServers((o, r) => { ours = o; redis = r; });

  it(`${OPS} random operations give the same replies (seed ${SEED})`, async () => {
    const [a, b] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    try {
      const next = generator(rng(SEED));
      for (let i = 0; i < OPS; i++) {
        const { cmd, random } = next();
        const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]);
        const same = random ? x[0] === y[0] : x.equals(y);
        assert.ok(same, `seed ${SEED}, op ${i}: ${cmd.join(' ')}\n  ours:  ${JSON.stringify(x.toString('latin1'))}\n  redis: ${JSON.stringify(y.toString('latin1'))}`);
        if (CHECK) {
          for (const k of ['z1', 'z2', 'z3']) {
            const [p, q] = await Promise.all([a.call('ZRANGE', k, '0', '-1', 'WITHSCORES'), b.call('ZRANGE', k, '0', '-1', 'WITHSCORES')]);
            assert.ok(p.equals(q), `seed ${SEED}, op ${i}: ${cmd.join(' ')} left ${k} different\n  ours:  ${JSON.stringify(p.toString('latin1'))}\n  redis: ${JSON.stringify(q.toString('latin1'))}`);
          }
        }
      }
    } finally {
      a.close();
      b.close();
    }
  });

  it(`random operations on big sets give the same replies (seed ${SEED})`, async () => {
    const [a, b] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    try {
      const gen = bigGenerator(rng(SEED + 1), 20000);
      for (const cmd of [['DEL', 'big', 'lexz'], gen.fill('big', false), gen.fill('lexz', true)]) {
        const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]);
        assert.ok(x.equals(y), `seed ${SEED}: ${cmd[0]} ${cmd[1]}: ${x.toString('latin1')} / ${y.toString('latin1')}`);
      }
      for (let i = 0; i < OPS / 2; i++) {
        const cmd = gen.next();
        const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]);
        assert.ok(x.equals(y), `seed ${SEED}, big op ${i}: ${cmd.join(' ')}\n  ours:  ${JSON.stringify(x.toString('latin1'))}\n  redis: ${JSON.stringify(y.toString('latin1'))}`);
      }
      for (const k of ['big', 'lexz']) {
        const [p, q] = await Promise.all([a.call('ZRANGE', k, '0', '-1', 'WITHSCORES'), b.call('ZRANGE', k, '0', '-1', 'WITHSCORES')]);
        assert.ok(p.equals(q), `seed ${SEED}: ${k} differs at the end`);
      }
    } finally {
      a.close();
      b.close();
    }
  });
});
