/**
 * SORT and SORT_RO against redis-server 7.0: numeric and ALPHA ordering (ties, NUL bytes, high
 * bytes), strtod score rules, BY patterns (`*`, `->field`, constant = no sort), LIMIT edge
 * values, GET, STORE, lists / sets / sorted sets, errors and their order, ACL refusals, and
 * the partial sort Redis uses for BY + LIMIT, on larger inputs with many ties.
 *
 * Where Redis's own order is random (hash-table sets, ties among sorted-set members) the
 * steps compare as multisets or avoid ties.
 */
import type { Script, Step } from '../harness.js';

const b = (...bytes: number[]) => Buffer.from(bytes);

/** A deterministic pseudo-random sequence (LCG), so both servers get the same data. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Values whose scores are checked one at a time (accepted, or the conversion error).
 * Redis 7.0 does not clear errno before strtod(): once one value overflowed or underflowed,
 * errno stays ERANGE and every later numeric SORT fails until some other call resets it (a
 * new connection's accept() does). So the values that set ERANGE come last.
 */
const SCORES: Array<string | Buffer> = [
  '2.2250738585072014e-308', '', '  ', ' 5', '5 ', '\t\n\v\f\r7', '0x1p3', '0X1P3', '0x', '0x.8', '0x1p', 'nan', '-nan',
  'NaN(123)', 'inf', '-Infinity', 'INF', '+inf', 'infinit', '1e', '+.5', '-.5e1', '.', '+', '-', '1.', '0x1p-1074',
  '0x1p1023', '0x1.fffffffffffff8p1022', '0x123456789abcdef0123456789p-100', '0.0', '-0', '00012', '1e308', '12abc', 'abc',
  '1_000', '\u0661', b(0x35, 0x00, 0x61), b(0x00, 0x33), b(0x00), b(0x20, 0x00, 0x78), b(0x31, 0x00, 0x20),
];
/** Each of these sets ERANGE (see above): one per script, on its own connection. */
const ERANGE: Array<string | Buffer> = [
  '1e-310', '4.9406564584124654e-324', '2.2250738585072011e-308', '1e-400', '1e309', '-1e309', '0x1p-1080',
  '0x1.8p-1074', '0x1.1p-1074', '0x1p1024', '0x1.fffffffffffff8p1023',
];

const scoreSteps: Step[] = [];
for (const v of SCORES) scoreSteps.push(['DEL', 'l'], ['RPUSH', 'l', v, '3'], ['SORT', 'l']);

/** Big inputs: numbers with duplicates, words, and weights drawn from a small set (ties). */
function bigSteps(): Step[] {
  const r = rng(7);
  const steps: Step[] = [];
  const nums: string[] = [];
  const words: string[] = [];
  for (let i = 0; i < 300; i++) {
    nums.push(String(Math.floor(r() * 100) - 50) + (r() < 0.3 ? '.5' : ''));
    words.push('w' + Math.floor(r() * 60).toString(36) + (r() < 0.5 ? 'x' : ''));
  }
  steps.push(['RPUSH', 'nums', ...nums], ['RPUSH', 'words', ...words]);
  for (let i = 0; i < 60; i++) {
    const w = 'w' + i.toString(36);
    steps.push(['SET', `wt_${w}`, String(Math.floor(r() * 5))], ['SET', `wt_${w}x`, String(Math.floor(r() * 5))]);
    if (i % 3 === 0) steps.push(['HSET', `h_${w}`, 'f', ['a', 'b', 'c'][i % 3 === 0 ? Math.floor(r() * 3) : 0]]);
  }
  steps.push(
    ['SORT', 'nums'], ['SORT', 'nums', 'DESC'], ['SORT', 'nums', 'LIMIT', '10', '20'], ['SORT', 'nums', 'DESC', 'LIMIT', '250', '100'],
    ['SORT', 'nums', 'ALPHA'], ['SORT', 'nums', 'ALPHA', 'DESC', 'LIMIT', '5', '7'],
    ['SORT', 'words', 'ALPHA'], ['SORT', 'words', 'ALPHA', 'DESC'],
    // Full sorts with ties under BY: stable (input order kept).
    ['SORT', 'words', 'BY', 'wt_*'], ['SORT', 'words', 'BY', 'wt_*', 'ALPHA'], ['SORT', 'words', 'BY', 'wt_*', 'ALPHA', 'DESC'],
    ['SORT', 'words', 'BY', 'h_*->f', 'ALPHA'], ['SORT', 'words', 'BY', 'h_*->f', 'ALPHA', 'DESC'],
    // BY + LIMIT: Redis's partial quicksort, with its own placement of equal elements.
    ['SORT', 'words', 'BY', 'wt_*', 'ALPHA', 'LIMIT', '0', '10'], ['SORT', 'words', 'BY', 'wt_*', 'ALPHA', 'LIMIT', '100', '50'],
    ['SORT', 'words', 'BY', 'wt_*', 'ALPHA', 'DESC', 'LIMIT', '290', '20'], ['SORT', 'words', 'BY', 'h_*->f', 'ALPHA', 'LIMIT', '1', '298'],
    ['SORT', 'words', 'BY', 'nosuch_*', 'ALPHA', 'LIMIT', '0', '50'], ['SORT', 'words', 'BY', 'nosuch_*', 'ALPHA', 'LIMIT', '3', '5'],
    ['SORT', 'words', 'BY', 'wt_*', 'LIMIT', '20', '30'], ['SORT', 'words', 'BY', 'wt_*', 'DESC', 'LIMIT', '0', '40', 'GET', '#', 'GET', 'wt_*'],
    ['SORT', 'words', 'BY', 'h_*->f', 'ALPHA', 'LIMIT', '0', '40', 'STORE', 'out'], ['LRANGE', 'out', '0', '-1'],
    ['SORT', 'nums', 'BY', 'wt_*', 'ALPHA', 'LIMIT', '0', '100'],
  );
  // Small vectors (the insertion-sort cut-off is 7, median-of-nine from 41) with ties.
  for (const n of [2, 6, 7, 8, 40, 41, 42]) {
    const key = `small${n}`;
    const items: string[] = [];
    for (let i = 0; i < n; i++) items.push('w' + Math.floor(r() * 60).toString(36));
    steps.push(['RPUSH', key, ...items], ['SORT', key, 'BY', 'wt_*', 'ALPHA', 'LIMIT', '1', String(Math.max(1, n - 3))]);
    steps.push(['SORT', key, 'BY', 'nosuch_*', 'ALPHA', 'LIMIT', '0', '1'], ['SORT', key, 'BY', 'wt_*', 'ALPHA', 'DESC', 'LIMIT', '0', '3']);
  }
  return steps;
}

const scripts: Script[] = [
  { name: 'numeric sort of a list: order, DESC, ties broken by bytes', steps: [
    ['RPUSH', 'l', '3', '1', '2', '10', '-5', '1.5', '1e2', 'inf', '-inf', '0', '-0', '100'],
    ['SORT', 'l'], ['SORT', 'l', 'DESC'], ['SORT', 'l', 'ASC'], ['SORT', 'l', 'desc', 'asc'], ['SORT_RO', 'l'],
    ['DEL', 'l'], ['RPUSH', 'l', '1', '1.0', '01', '+1', '1e0', '0x1', ' 1', '1', '0x1p0', '.1e1'],
    ['SORT', 'l'], ['SORT', 'l', 'DESC'], ['SORT', 'l', 'LIMIT', '2', '3'], ['SORT', 'l', 'DESC', 'LIMIT', '2', '3'],
  ] },
  { name: 'ALPHA: bytes up to a NUL without STORE, full bytes with STORE', steps: [
    ['RPUSH', 'l', b(0xff), b(0xc3, 0xa9), 'z', b(0x80), b(0x61, 0x00, 0x62), b(0x61, 0x00, 0x61), 'a', 'A',
      b(0xc3, 0xa8), b(0xe2, 0x82, 0xac), '', 'ab', 'a b', b(0x00), b(0x00, 0x01)],
    ['SORT', 'l', 'ALPHA'], ['SORT', 'l', 'ALPHA', 'DESC'], ['SORT', 'l', 'ALPHA', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['SORT', 'l', 'ALPHA', 'DESC', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'], ['SORT', 'l', 'ALPHA', 'LIMIT', '3', '4'],
    ['SORT_RO', 'l', 'ALPHA', 'DESC', 'LIMIT', '0', '5'],
  ] },
  { name: 'score conversion follows strtod', steps: scoreSteps },
  ...ERANGE.map((v): Script => ({
    name: `score out of range: ${JSON.stringify(String(v))}`,
    steps: [['RPUSH', 'l', '3', v], ['SORT', 'l'], ['SORT', 'l', 'ALPHA']],
  })),
  { name: 'score errors: reported after sorting, nothing stored', steps: [
    ['RPUSH', 'l', '1', 'x', '2'], ['SORT', 'l'], ['SORT', 'l', 'LIMIT', '0', '0'], ['SORT', 'l', 'DESC', 'LIMIT', '0', '1'],
    ['SET', 'd', 'keep'], ['SORT', 'l', 'STORE', 'd'], ['GET', 'd'], ['SORT', 'l', 'ALPHA'], ['SORT', 'l', 'BY', 'nosort'],
    ['SORT', 'l', 'BY', 'w_*'], ['SET', 'w_x', 'bad'], ['SORT', 'l', 'BY', 'w_*'], ['SORT', 'l', 'BY', 'w_*', 'ALPHA'],
  ] },
  { name: 'LIMIT offsets and counts, including out-of-range ones', steps: [
    ['RPUSH', 'l', '5', '4', '3', '2', '1'],
    ...[['0', '0'], ['0', '1'], ['2', '2'], ['4', '10'], ['5', '1'], ['6', '1'], ['-1', '2'], ['-10', '3'], ['1', '-1'],
      ['1', '-100'], ['0', '9223372036854775807'], ['5', '9223372036854775807'], ['9223372036854775807', '9223372036854775807'],
      ['9223372036854775806', '2'], ['2', '-9223372036854775808'], ['-9223372036854775808', '3'], ['3', '0']]
      .flatMap(([s, n]) => [['SORT', 'l', 'LIMIT', s, n], ['SORT', 'l', 'BY', 'nosort', 'LIMIT', s, n],
        ['SORT', 'l', 'BY', 'nosort', 'DESC', 'LIMIT', s, n], ['SORT', 'l', 'DESC', 'LIMIT', s, n]] as Step[]),
    ['SORT', 'l', 'LIMIT', '1', '2', 'LIMIT', '0', '1'], ['SORT', 'nokey', 'LIMIT', '0', '1'], ['SORT', 'nokey', 'LIMIT', '3', '-1'],
  ] },
  { name: 'BY patterns: string weights, hash fields, missing keys, constants', steps: [
    ['RPUSH', 'l', 'a', 'b', 'c', 'd', b(0xff, 0x00)],
    ['MSET', 'w_a', '3', 'w_b', '1', 'w_c', '2', 'w_d', '1', b(0x77, 0x5f, 0xff, 0x00), '-1'],
    ['SORT', 'l', 'BY', 'w_*'], ['SORT', 'l', 'BY', 'w_*', 'DESC'], ['SORT', 'l', 'BY', 'w_*', 'ALPHA'],
    ['DEL', 'w_c'], ['SORT', 'l', 'BY', 'w_*'], ['SORT', 'l', 'BY', 'w_*', 'ALPHA'], ['SORT', 'l', 'BY', 'w_*', 'ALPHA', 'DESC'],
    ['HSET', 'h_a', 'f', '9', 'g', 'x'], ['HSET', 'h_b', 'f', '-1'], ['HSET', 'h_c', 'g', '1'], ['SET', 'h_d', '5'],
    ['SORT', 'l', 'BY', 'h_*->f'], ['SORT', 'l', 'BY', 'h_*->g', 'ALPHA'], ['SORT', 'l', 'BY', 'h_*->nofield'],
    // "->" with nothing after it is part of the key name; the field may contain "->".
    ['SET', 'h_a->', '7'], ['SORT', 'l', 'BY', 'h_*->'], ['HSET', 'h_b', 'f->g', '-9'], ['SORT', 'l', 'BY', 'h_*->f->g'],
    ['SET', 'a', '4'], ['SET', 'b', '8'], ['SORT', 'l', 'BY', '*'], ['SET', 'preapost', '1'], ['SORT', 'l', 'BY', 'pre*post'],
    ['SORT', 'l', 'BY', '*', 'BY', 'w_*'], ['SORT', 'l', 'BY', 'nosort', 'BY', 'w_*'], ['SORT', 'l', 'BY', 'w_*', 'BY', 'nosort'],
    ['SORT', 'l', 'BY', '#'], ['SORT', 'l', 'BY', b(0x77, 0x00, 0x2a)], ['SORT', 'l', 'BY', 'w_*', 'GET', '#', 'GET', 'w_*'],
    ['SORT', 'l', 'BY', '', 'DESC'], ['SORT', 'l', 'BY', 'w_**'],
    ['RPUSH', 'wl_a', '1'], ['SORT', 'l', 'BY', 'wl_*'], ['SORT', 'l', 'BY', 'wl_*', 'ALPHA'],
    ['SET', 'x_a', '1', 'PX', '1'], ['SET', 'x_b', '2'], { cmd: ['SORT', 'l', 'BY', 'x_*', 'GET', 'x_*'], sleep: 20 },
  ] },
  { name: 'GET patterns: #, strings, hash fields, missing and constant patterns', steps: [
    ['RPUSH', 'l', '2', '1', '3'], ['MSET', 'o_1', 'one', 'o_2', 'two', 'v_3', b(0x00, 0xff)],
    ['HSET', 'h_1', 'name', 'uno'], ['HSET', 'h_3', 'name', 'tres'], ['RPUSH', 'o_3', 'list'],
    ['SORT', 'l', 'GET', '#'], ['SORT', 'l', 'GET', 'o_*'], ['SORT', 'l', 'GET', 'o_*', 'GET', '#', 'GET', 'h_*->name'],
    ['SORT', 'l', 'GET', 'constant'], ['SORT', 'l', 'GET', 'v_*', 'DESC', 'LIMIT', '0', '1'], ['SORT', 'l', 'GET', b(0x23, 0x00, 0x78)],
    ['SORT', 'l', 'GET', '#', 'GET', '#'], ['SORT', 'l', 'GET', 'h_*->'], ['SORT', 'l', 'GET', 'h_*->name', 'BY', 'nosort'],
    ['SORT', 'l', 'LIMIT', '5', '1', 'GET', '#'], ['SORT', 'nokey', 'GET', '#'],
  ] },
  { name: 'STORE: a list, TTL dropped, empty result deletes, GET results stored', steps: [
    ['RPUSH', 'l', '3', '1', '2'], ['SET', 'd', 'old', 'EX', '100'], ['SORT', 'l', 'STORE', 'd'], ['TYPE', 'd'], ['TTL', 'd'],
    ['LRANGE', 'd', '0', '-1'], ['SORT', 'l', 'DESC', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['SORT', 'l', 'GET', 'o_*', 'GET', '#', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'], ['SET', 'o_1', 'x'],
    ['SORT', 'l', 'GET', 'o_*', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['SORT', 'l', 'LIMIT', '10', '1', 'STORE', 'd'], ['EXISTS', 'd'], ['SORT', 'l', 'LIMIT', '0', '0', 'STORE', 'd'],
    ['SORT', 'nokey', 'STORE', 'l'], ['EXISTS', 'l'], ['RPUSH', 'l', 'b', 'a'], ['SORT', 'l', 'ALPHA', 'STORE', 'l'],
    ['LRANGE', 'l', '0', '-1'], ['SORT', 'l', 'ALPHA', 'STORE', 'e', 'STORE', 'f'], ['EXISTS', 'e', 'f'],
    ['SORT', 'l', 'STORE', 'd', 'ALPHA'], ['LRANGE', 'd', '0', '-1'],
    ['SORT_RO', 'l', 'STORE', 'd'], ['SORT_RO', 'l', 'ALPHA', 'STORE'], ['SORT', 'l', 'ALPHA', 'STORE'],
    ['HSET', 'hd', 'f', 'v'], ['SORT', 'l', 'ALPHA', 'STORE', 'hd'], ['TYPE', 'hd'],
  ] },
  { name: 'sorted sets: by member value, BY nosort keeps score order', steps: [
    ['ZADD', 'z', '1', '30', '2', '10', '3', '20', '4', '5', '5', '-1', '5', '-2'],
    ['SORT', 'z'], ['SORT', 'z', 'DESC'], ['SORT', 'z', 'ALPHA'], ['SORT', 'z', 'BY', 'nosort'],
    ['SORT', 'z', 'BY', 'nosort', 'DESC'], ['SORT', 'z', 'BY', 'nosort', 'LIMIT', '1', '3'],
    ['SORT', 'z', 'BY', 'nosort', 'DESC', 'LIMIT', '1', '3'], ['SORT', 'z', 'BY', 'nosort', 'DESC', 'LIMIT', '5', '10'],
    ['SORT', 'z', 'BY', 'nosort', 'LIMIT', '6', '1'], ['SORT', 'z', 'BY', 'nosort', 'LIMIT', '0', '0'],
    ['SORT', 'z', 'BY', 'nosort', 'GET', '#', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['SORT', 'z', 'LIMIT', '2', '2'], ['ZADD', 'z', '0', 'abc'], ['SORT', 'z'], ['SORT', 'z', 'ALPHA', 'LIMIT', '0', '3'],
    ['MSET', 'w_30', '1', 'w_10', '2', 'w_20', '3', 'w_5', '4', 'w_-1', '5', 'w_-2', '6', 'w_abc', '7'],
    ['SORT', 'z', 'BY', 'w_*'], ['SORT', 'z', 'BY', 'w_*', 'DESC', 'LIMIT', '1', '2'], ['SORT', 'z', 'BY', 'w_*', 'ALPHA'],
  ] },
  { name: 'SORT and SORT_RO turn a listpack sorted set into a skiplist (DUMP bytes follow)', steps: [
    ['ZADD', 'zl', '1', 'a', '2', 'b', '-0', 'c'], ['OBJECT', 'ENCODING', 'zl'], ['SORT', 'zl', 'BY', 'nosort'],
    ['OBJECT', 'ENCODING', 'zl'], ['DUMP', 'zl'], ['ZADD', 'zl', '5', 'd'], ['ZSCORE', 'zl', 'c'], ['DUMP', 'zl'],
    ['ZADD', 'zr', '3', 'x'], ['SORT_RO', 'zr', 'ALPHA'], ['OBJECT', 'ENCODING', 'zr'], ['DUMP', 'zr'],
    ['ZADD', 'zs', '1', 'x'], ['SORT', 'zs', 'LIMIT', '5', '1'], ['OBJECT', 'ENCODING', 'zs'],
  ] },
  { name: 'a script\'s SORT of a set BY nosort is sorted (ALPHA), as with STORE', steps: [
    ['SADD', 'sn', 'c', 'a', 'b', 'e', 'd'], ['EVAL', "return redis.call('sort', KEYS[1], 'by', 'nosort')", '1', 'sn'],
    ['EVAL', "return redis.call('sort', KEYS[1], 'by', 'nosort', 'desc', 'limit', '1', '2')", '1', 'sn'],
    ['EVAL', "return redis.call('sort_ro', KEYS[1], 'by', 'nosort')", '1', 'sn'],
    ['SADD', 'sni', '5', '3', '9'], ['EVAL', "return redis.call('sort', KEYS[1], 'by', 'nosort')", '1', 'sni'],
  ] },
  { name: 'sets: intset, strings, BY nosort (sorted when stored)', steps: [
    ['SADD', 'is', '5', '-3', '100', '7', '0'], ['SORT', 'is'], ['SORT', 'is', 'DESC', 'LIMIT', '1', '2'],
    ['SORT', 'is', 'BY', 'nosort'], ['SORT', 'is', 'BY', 'nosort', 'DESC'], ['SORT', 'is', 'BY', 'nosort', 'LIMIT', '1', '2'],
    ['SORT', 'is', 'BY', 'nosort', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['SORT', 'is', 'BY', 'nosort', 'DESC', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['SADD', 'ss', 'pear', 'apple', 'fig', 'banana', '10', '9'], ['SORT', 'ss', 'ALPHA'], ['SORT', 'ss', 'ALPHA', 'DESC'],
    ['SORT', 'ss'], { cmd: ['SORT', 'ss', 'BY', 'nosort'], compare: 'sorted' }, ['SORT', 'ss', 'BY', 'nosort', 'STORE', 'd'],
    ['LRANGE', 'd', '0', '-1'], ['SORT', 'ss', 'BY', 'nosort', 'ALPHA', 'DESC', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['SORT', 'ss', 'BY', 'nosort', 'LIMIT', '0', '2', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['MSET', 'w_pear', '1', 'w_apple', '2', 'w_fig', '3'], ['SORT', 'ss', 'BY', 'w_*', 'GET', '#', 'GET', 'w_*'],
    // The three without a weight tie (set order, random in Redis): compared as a multiset.
    { cmd: ['SORT', 'ss', 'BY', 'w_*', 'ALPHA', 'LIMIT', '0', '3'], compare: 'sorted' },
    ['SORT', 'ss', 'BY', 'w_*', 'ALPHA', 'LIMIT', '3', '3'], ['SORT_RO', 'ss', 'ALPHA', 'LIMIT', '1', '2'],
  ] },
  { name: 'errors and their order', steps: [
    ['SET', 's', 'x'], ['HSET', 'h', 'f', 'v'], ['RPUSH', 'l', '1'],
    ['SORT', 's'], ['SORT', 'h'], ['SORT_RO', 's'], ['SORT', 's', 'LIMIT', 'x', '1'], ['SORT', 's', 'BADOPT'],
    ['SORT', 'l', 'LIMIT', '1'], ['SORT', 'l', 'LIMIT', '1', 'x'], ['SORT', 'l', 'LIMIT', '1.5', '1'],
    ['SORT', 'l', 'LIMIT', '9223372036854775808', '1'], ['SORT', 'l', 'BY'], ['SORT', 'l', 'GET'], ['SORT', 'l', 'STORE'],
    ['SORT', 'l', 'ALPHA', 'junk'], ['SORT', 'l', 'junk', 'LIMIT', 'x', 'y'], ['SORT', 'l', 'LIMIT', 'x', 'y', 'junk'],
    ['SORT', 'nokey'], ['SORT', 'nokey', 'ALPHA', 'DESC'], ['SORT'], ['SORT_RO'],
    ['SORT_RO', 'l', 'STORE', 'x'], ['SORT', 's', 'STORE', 'd'], ['EXISTS', 'd'],
  ] },
  { name: 'ACL: BY and GET need access to every key', steps: [
    ['RPUSH', 'k1', '2', '1'], ['SET', 'w_1', '5'],
    ['ACL', 'SETUSER', 'limited', 'on', 'nopass', '~k*', '+@all'], ['ACL', 'SETUSER', 'reader', 'on', 'nopass', '%R~*', '~k*', '+@all'],
    ['AUTH', 'limited', 'x'], ['SORT', 'k1'], ['SORT', 'k1', 'BY', 'w_*'], ['SORT', 'k1', 'BY', 'nosort'],
    ['SORT', 'k1', 'GET', '#'], ['SORT', 'k1', 'GET', 'w_*'], ['SORT', 'k1', 'junk', 'BY', 'w_*'], ['SORT', 'k1', 'BY', 'w_*', 'junk'],
    ['SORT_RO', 'k1', 'BY', 'w_*'], ['SORT', 'k1', 'STORE', 'k2'],
    ['AUTH', 'reader', 'x'], ['SORT', 'k1', 'BY', 'w_*'], ['SORT', 'k1', 'GET', 'w_*'],
    ['AUTH', 'default', 'x'], ['ACL', 'DELUSER', 'limited', 'reader'],
  ] },
  { name: 'SORT in MULTI/EXEC', steps: [
    ['RPUSH', 'l', '2', '1'], ['MULTI'], ['SORT', 'l'], ['SORT', 'l', 'STORE', 'd'], ['LRANGE', 'd', '0', '-1'],
    ['SORT', 'l', 'LIMIT', 'x', '1'], ['SORT_RO', 'l', 'STORE', 'd'], ['EXEC'],
    ['MULTI'], ['SORT'], ['EXEC'],
  ] },
  { name: 'COMMAND GETKEYS for SORT and SORT_RO', steps: [
    ['COMMAND', 'GETKEYS', 'SORT', 'k'], ['COMMAND', 'GETKEYS', 'SORT', 'k', 'STORE', 'd'],
    ['COMMAND', 'GETKEYS', 'SORT', 'k', 'GET', 'store', 'STORE', 'd'], ['COMMAND', 'GETKEYS', 'SORT', 'k', 'BY', 'store', 'x'],
    ['COMMAND', 'GETKEYS', 'SORT', 'k', 'STORE', 'd', 'STORE', 'e'], ['COMMAND', 'GETKEYS', 'SORT', 'k', 'LIMIT', 'store', 'x', 'STORE', 'y'],
    ['COMMAND', 'GETKEYS', 'SORT', 'k', 'STORE'], ['COMMAND', 'GETKEYS', 'SORT', 'k', 'STORE', 'limit', 'a', 'b'],
    ['COMMAND', 'GETKEYS', 'SORT_RO', 'k', 'STORE', 'd'],
  ] },
  { name: 'larger inputs: full sorts, ties, and the partial sort of BY + LIMIT', steps: bigSteps() },
];

export default scripts;
