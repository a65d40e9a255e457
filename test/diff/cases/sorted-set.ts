import type { Script, Step } from '../harness.js';

const seed = ['ZADD', 'z', '1', 'a', '2', 'b', '3', 'c', '4', 'd', '5', 'e'];
const lex = ['ZADD', 'l', '0', 'a', '0', 'b', '0', 'c', '0', 'd', '0', 'e', '0', 'f', '0', 'g'];

const scripts: Script[] = [
  { name: 'ZADD basics and score formatting', steps: [
    ['ZADD', 'z', '1.1', 'a', '0.1', 'b', '1e20', 'c', '-0', 'd', 'inf', 'e', '3', 'f', '1.5e-7', 'g', '123456789012345678', 'h'],
    ['ZRANGE', 'z', '0', '-1', 'WITHSCORES'], ['ZSCORE', 'z', 'd'], ['ZSCORE', 'z', 'e'], ['ZSCORE', 'z', 'nosuch'],
    ['ZADD', 'z', '-inf', 'x', '+inf', 'y'], ['ZRANGE', 'z', '0', '1', 'WITHSCORES'], ['ZCARD', 'z'], ['ZCARD', 'none'],
    ['OBJECT', 'ENCODING', 'z'],
  ] },
  { name: 'ZADD flags and errors', steps: [
    ['ZADD', 'z', 'nan', 'x'], ['ZADD', 'z', '1'], ['ZADD', 'z', 'XX', 'NX', '1', 'a'], ['ZADD', 'z', 'GT', 'LT', '1', 'a'],
    ['ZADD', 'z', 'GT', 'NX', '1', 'a'], ['ZADD', 'z', 'INCR', '1', 'a', '2', 'b'], ['ZADD', 'z', 'abc', 'a'],
    ['ZADD', 'z', '1', 'a', 'x', 'b'], ['EXISTS', 'z'], ['ZADD', 'z', 'XX', '1', 'a'], ['ZADD', 'z', 'XX', 'INCR', '1', 'a'], ['EXISTS', 'z'],
    ['ZADD', 'z', '1', 'a', '2', 'b'], ['ZADD', 'z', 'NX', '5', 'a', '3', 'c'], ['ZADD', 'z', 'XX', 'CH', '5', 'a', '3', 'd'],
    ['ZADD', 'z', 'GT', 'CH', '1', 'a', '10', 'b'], ['ZADD', 'z', 'LT', 'CH', '1', 'a', '100', 'b'], ['ZRANGE', 'z', '0', '-1', 'WITHSCORES'],
    ['ZADD', 'z', 'INCR', '2.5', 'a'], ['ZADD', 'z', 'NX', 'INCR', '1', 'a'], ['ZADD', 'z', 'GT', 'INCR', '-1', 'a'],
    ['ZADD', 'z', 'INCR', 'inf', 'a'], ['ZADD', 'z', 'INCR', '-inf', 'a'], ['ZADD', 'z', 'ch', 'incr', '1', 'q'],
    ['SET', 's', 'x'], ['ZADD', 's', '1', 'a'], ['ZADD', 's', 'XX', '1', 'a'],
  ] },
  { name: 'ZINCRBY', steps: [
    ['ZINCRBY', 'z', '0.1', 'a'], ['ZINCRBY', 'z', '0.2', 'a'], ['ZINCRBY', 'z', 'x', 'a'], ['ZINCRBY', 'z', 'inf', 'a'],
    ['ZINCRBY', 'z', '-inf', 'a'], ['ZSCORE', 'z', 'a'], ['SET', 's', 'x'], ['ZINCRBY', 's', '1', 'a'],
  ] },
  { name: 'ZREM, ZRANK, ZREVRANK, ZMSCORE', steps: [
    seed, ['ZRANK', 'z', 'c'], ['ZREVRANK', 'z', 'c'], ['ZRANK', 'z', 'x'], ['ZRANK', 'none', 'x'],
    ['ZMSCORE', 'z', 'a', 'x', 'e'], ['ZMSCORE', 'none', 'a'], ['ZREM', 'z', 'a', 'x', 'b'], ['ZREM', 'z', 'c', 'd', 'e'], ['EXISTS', 'z'],
    ['ZREM', 'none', 'a'], ['SET', 's', 'x'], ['ZREM', 's', 'a'], ['ZRANK', 's', 'a'], ['ZSCORE', 's', 'a'], ['ZCARD', 's'],
  ] },
  { name: 'ZCOUNT and ZLEXCOUNT', steps: [
    seed, ['ZCOUNT', 'z', '2', '4'], ['ZCOUNT', 'z', '(2', '(4'], ['ZCOUNT', 'z', '-inf', '+inf'], ['ZCOUNT', 'z', '5', '1'],
    ['ZCOUNT', 'z', 'x', '1'], ['ZCOUNT', 'z', '(', '1'], ['ZCOUNT', 'none', '0', '1'],
    lex, ['ZLEXCOUNT', 'l', '-', '+'], ['ZLEXCOUNT', 'l', '[b', '(e'], ['ZLEXCOUNT', 'l', '(b', '[e'], ['ZLEXCOUNT', 'l', 'b', 'e'],
    ['ZLEXCOUNT', 'l', '+', '-'], ['ZLEXCOUNT', 'none', '-', '+'],
  ] },
  { name: 'ZRANGE by rank, score and lex', steps: [
    seed, ['ZRANGE', 'z', '0', '-1'], ['ZRANGE', 'z', '1', '2', 'WITHSCORES'], ['ZRANGE', 'z', '-2', '-1'], ['ZRANGE', 'z', '3', '1'],
    ['ZRANGE', 'z', '0', '100', 'REV'], ['ZRANGE', 'z', '0', '1', 'REV', 'WITHSCORES'], ['ZRANGE', 'z', '-100', '1'],
    ['ZRANGE', 'z', '2', '4', 'BYSCORE'], ['ZRANGE', 'z', '(2', '+inf', 'BYSCORE', 'WITHSCORES'], ['ZRANGE', 'z', '4', '2', 'BYSCORE', 'REV'],
    ['ZRANGE', 'z', '-inf', '+inf', 'BYSCORE', 'LIMIT', '1', '2'], ['ZRANGE', 'z', '-inf', '+inf', 'BYSCORE', 'LIMIT', '1', '-1'],
    ['ZRANGE', 'z', '-inf', '+inf', 'BYSCORE', 'LIMIT', '-1', '2'], ['ZRANGE', 'z', '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', '1', '2', 'WITHSCORES'],
    ['ZRANGE', 'z', '0', '1', 'LIMIT', '0', '1'], ['ZRANGE', 'z', 'a', 'b'], ['ZRANGE', 'z', 'x', '1', 'BYSCORE'], ['ZRANGE', 'z', '0', '1', 'FOO'],
    lex, ['ZRANGE', 'l', '[b', '(e', 'BYLEX'], ['ZRANGE', 'l', '(e', '[b', 'BYLEX', 'REV'], ['ZRANGE', 'l', '-', '+', 'BYLEX', 'LIMIT', '2', '3'],
    ['ZRANGE', 'l', '-', '+', 'BYLEX', 'WITHSCORES'], ['ZRANGE', 'l', 'b', 'e', 'BYLEX'], ['ZRANGE', 'none', '0', '-1'],
    ['ZRANGE', 'z', '0', '-1', 'BYSCORE', 'BYLEX'],
  ] },
  { name: 'legacy range commands', steps: [
    seed, ['ZREVRANGE', 'z', '0', '2'], ['ZREVRANGE', 'z', '0', '2', 'WITHSCORES'], ['ZREVRANGE', 'z', '0', '2', 'LIMIT', '0', '1'],
    ['ZRANGEBYSCORE', 'z', '2', '4'], ['ZRANGEBYSCORE', 'z', '-inf', '(3', 'WITHSCORES', 'LIMIT', '0', '1'], ['ZRANGEBYSCORE', 'z', '2', '4', 'REV'],
    ['ZREVRANGEBYSCORE', 'z', '4', '2'], ['ZREVRANGEBYSCORE', 'z', '+inf', '-inf', 'LIMIT', '1', '1', 'WITHSCORES'],
    lex, ['ZRANGEBYLEX', 'l', '-', '[c'], ['ZRANGEBYLEX', 'l', '-', '+', 'LIMIT', '1', '2'], ['ZREVRANGEBYLEX', 'l', '[c', '-'],
    ['ZREVRANGEBYLEX', 'l', '+', '(d', 'LIMIT', '0', '2'], ['ZRANGEBYLEX', 'l', 'a', 'b'], ['ZRANGEBYLEX', 'l', '-', '+', 'WITHSCORES'],
  ] },
  // Integer bounds are read from their bytes (no string); every other form takes strtod's path.
  { name: 'score bounds: plain integers from bytes and every edge of the fallback', steps: [
    ['ZADD', 'b', '0', 'zero', '-0', 'nz', '5', 'five', '-5', 'm5', '9007199254740991', 'max', '9007199254740992', 'max1',
      '7355762028834815', 'bull', '12', 'twelve', '1e3', 'k'],
    ...['0', '(0', '-0', '(-0', '5', '(5', '-5', '(-5', '007', '(007', '+5', '(+5', '', '(', '-', '(-', '( 5', ' 5', '5 ',
      '9007199254740991', '(9007199254740991', '9007199254740992', '(9007199254740993', '7355762028834815', '(7355762028834815',
      '99999999999999999', '12345678901234567890', '1e3', '(1e3', '-(5', '((5', '5(', '0x10', '1.', '.5', 'inf', '(inf', '-inf',
    ].flatMap((x): Step[] => [
      ['ZCOUNT', 'b', x, '+inf'], ['ZCOUNT', 'b', '-inf', x], ['ZRANGEBYSCORE', 'b', x, '+inf', 'WITHSCORES'],
      ['ZREVRANGEBYSCORE', 'b', x, '-inf', 'LIMIT', '0', '3'], ['ZRANGEBYSCORE', 'none', x, '(7355762028834815', 'LIMIT', '0', '1000'],
    ]),
    ['ZRANGE', 'b', '(5', '9007199254740991', 'BYSCORE'], ['ZRANGESTORE', 'd', 'b', '(0', '12', 'BYSCORE'], ['ZRANGE', 'd', '0', '-1'],
    ['ZREMRANGEBYSCORE', 'b', '(5', '(9007199254740992'], ['ZRANGE', 'b', '0', '-1', 'WITHSCORES'], ['ZREMRANGEBYSCORE', 'none', 'x', '1'],
  ] },
  { name: 'ZRANGESTORE', steps: [
    seed, ['ZRANGESTORE', 'd', 'z', '1', '3'], ['ZRANGE', 'd', '0', '-1', 'WITHSCORES'], ['ZRANGESTORE', 'd', 'z', '(2', '+inf', 'BYSCORE', 'LIMIT', '0', '2'],
    ['ZRANGE', 'd', '0', '-1', 'WITHSCORES'], ['ZRANGESTORE', 'd', 'none', '0', '-1'], ['EXISTS', 'd'], ['ZRANGESTORE', 'd', 'z', '0', '-1', 'WITHSCORES'],
    ['SET', 's', 'x'], ['ZRANGESTORE', 'd', 's', '0', '-1'], ['ZRANGESTORE', 's', 'z', '0', '0'], ['TYPE', 's'],
  ] },
  { name: 'ZREMRANGEBY*', steps: [
    seed, ['ZREMRANGEBYRANK', 'z', '0', '1'], ['ZRANGE', 'z', '0', '-1'], ['ZREMRANGEBYSCORE', 'z', '(3', '4'], ['ZRANGE', 'z', '0', '-1'],
    ['ZREMRANGEBYRANK', 'z', 'x', '1'], ['ZREMRANGEBYSCORE', 'z', 'x', '1'], ['ZREMRANGEBYRANK', 'z', '0', '-1'], ['EXISTS', 'z'],
    lex, ['ZREMRANGEBYLEX', 'l', '[b', '(e'], ['ZRANGE', 'l', '0', '-1'], ['ZREMRANGEBYLEX', 'l', 'x', 'y'], ['ZREMRANGEBYLEX', 'none', '-', '+'],
  ] },
  { name: 'ZPOPMIN, ZPOPMAX, ZMPOP', steps: [
    seed, ['ZPOPMIN', 'z'], ['ZPOPMAX', 'z'], ['ZPOPMIN', 'z', '2'], ['ZPOPMIN', 'z', '0'], ['ZPOPMIN', 'z', '-1'], ['ZPOPMAX', 'z', '10'],
    ['EXISTS', 'z'], ['ZPOPMIN', 'none'], ['ZPOPMIN', 'none', '3'], seed,
    ['ZMPOP', '2', 'none', 'z', 'MIN'], ['ZMPOP', '1', 'z', 'MAX', 'COUNT', '2'], ['ZMPOP', '1', 'none', 'MIN'], ['ZMPOP', '0', 'z', 'MIN'],
    ['ZMPOP', '1', 'z', 'MID'], ['ZMPOP', '1', 'z', 'MIN', 'COUNT', '0'], ['ZMPOP', '3', 'z', 'MIN'], ['ZMPOP', '1', 'z', 'MIN', 'COUNT', '1', 'COUNT', '1'],
    ['SET', 's', 'x'], ['ZPOPMIN', 's'], ['ZMPOP', '1', 's', 'MIN'],
  ] },
  { name: 'blocking pops that do not block', steps: [
    seed, ['BZPOPMIN', 'none', 'z', '0'], ['BZPOPMAX', 'z', '0.5'], ['BZMPOP', '0', '2', 'none', 'z', 'MAX', 'COUNT', '2'],
    ['BZPOPMIN', 'z', '-1'], ['BZPOPMIN', 'z', 'x'], ['MULTI'], ['BZPOPMIN', 'none', '0'], ['BZMPOP', '0', '1', 'none', 'MIN'], ['EXEC'],
  ] },
  { name: 'set algebra', steps: [
    ['ZADD', 'a', '1', 'x', '2', 'y', '3', 'z'], ['ZADD', 'b', '10', 'y', '20', 'z', '30', 'w'],
    ['ZUNION', '2', 'a', 'b', 'WITHSCORES'], ['ZUNION', '2', 'a', 'b', 'WEIGHTS', '2', '0.5', 'AGGREGATE', 'MAX', 'WITHSCORES'],
    ['ZINTER', '2', 'a', 'b', 'WITHSCORES'], ['ZINTER', '2', 'a', 'b', 'AGGREGATE', 'MIN'], ['ZDIFF', '2', 'a', 'b', 'WITHSCORES'],
    ['ZDIFF', '1', 'a'], ['ZUNIONSTORE', 'd', '2', 'a', 'b'], ['ZRANGE', 'd', '0', '-1', 'WITHSCORES'], ['ZINTERSTORE', 'd', '2', 'a', 'none'],
    ['EXISTS', 'd'], ['ZDIFFSTORE', 'd', '2', 'b', 'a'], ['ZRANGE', 'd', '0', '-1', 'WITHSCORES'],
    ['ZUNION', '0', 'a'], ['ZUNION', '3', 'a', 'b'], ['ZUNION', '2', 'a', 'b', 'WEIGHTS', '1'], ['ZUNION', '2', 'a', 'b', 'WEIGHTS', '1', 'x'],
    ['ZUNION', '2', 'a', 'b', 'AGGREGATE', 'AVG'], ['ZDIFF', '2', 'a', 'b', 'WEIGHTS', '1', '1'], ['ZUNIONSTORE', 'd', '2', 'a', 'b', 'WITHSCORES'],
    ['ZUNION', 'x', 'a'], ['ZADD', 'i', 'inf', 'x'], ['ZADD', 'j', '-inf', 'x'], ['ZUNION', '2', 'i', 'j', 'WITHSCORES'],
    ['ZUNION', '2', 'i', 'a', 'WEIGHTS', '0', '1', 'WITHSCORES'], ['SET', 's', 'x'], ['ZUNION', '2', 'a', 's'],
    ['ZINTERCARD', '2', 'a', 'b'], ['ZINTERCARD', '2', 'a', 'b', 'LIMIT', '1'], ['ZINTERCARD', '0', 'a'], ['ZINTERCARD', '3', 'a', 'b'],
    ['ZINTERCARD', '2', 'a', 'b', 'LIMIT', '-1'], ['ZINTERCARD', '1', 'none'],
  ] },
  { name: 'set algebra with plain sets as sources', steps: [
    ['SADD', 's1', 'x', 'y', 'q'], ['ZADD', 'z1', '5', 'x', '2', 'w'], ['ZUNION', '2', 's1', 'z1', 'WITHSCORES'],
    ['ZINTER', '2', 's1', 'z1', 'WEIGHTS', '3', '1', 'WITHSCORES'], ['ZDIFF', '2', 's1', 'z1', 'WITHSCORES'],
    ['ZUNIONSTORE', 'd', '1', 's1'], ['ZRANGE', 'd', '0', '-1', 'WITHSCORES'], ['ZINTERCARD', '2', 's1', 'z1'],
    ['SADD', 'i1', '1', '2', '3'], ['ZUNION', '2', 'i1', 'z1', 'WITHSCORES'],
  ] },
  { name: 'ZRANDMEMBER shapes', steps: [
    ['ZADD', 'z', '1', 'a'], ['ZRANDMEMBER', 'z'], ['ZRANDMEMBER', 'z', '1'], ['ZRANDMEMBER', 'z', '-3', 'WITHSCORES'],
    ['ZRANDMEMBER', 'z', '5', 'WITHSCORES'], ['ZRANDMEMBER', 'none'], ['ZRANDMEMBER', 'none', '5'], ['ZRANDMEMBER', 'z', '1', 'FOO'],
    ['ZRANDMEMBER', 'z', 'x'], ['ZRANDMEMBER', 'z', '0'],
  ] },
  { name: 'ZSCAN of a small zset', steps: [
    seed, ['ZSCAN', 'z', '0'], ['ZSCAN', 'z', '0', 'MATCH', '[a-c]', 'COUNT', '1'], ['ZSCAN', 'z', 'x'], ['ZSCAN', 'none', '0'],
    ['ZSCAN', 'z', '0', 'COUNT', '0'],
  ] },
  { name: 'arity errors', steps: [['ZADD', 'z'], ['ZCARD'], ['ZRANGE', 'z', '0'], ['ZINCRBY', 'z', '1'], ['ZPOPMIN'], ['ZMPOP', '1', 'z']] },
  // Members are bytes in an arena here (ds/zset-members.ts): binary bytes, the empty member,
  // prefixes, members over 255 bytes (the long length form), a small set (strings kept) and a
  // big one (indexed), through every way a member comes out or is found.
  { name: 'binary, empty and long members, small and big sets', steps: [
    ['ZADD', 'b', '1', Buffer.from([0, 255, 10, 13]), '1', '', '1', Buffer.from([0, 255]), '2', 'L'.repeat(300), '0', Buffer.from([0xc3, 0xa9])],
    ['ZRANGE', 'b', '0', '-1', 'WITHSCORES'], ['ZRANGEBYSCORE', 'b', '1', '2'], ['ZREVRANGEBYSCORE', 'b', '+inf', '(0', 'LIMIT', '1', '2'],
    ['ZRANK', 'b', Buffer.from([0, 255])], ['ZSCORE', 'b', ''], ['ZMSCORE', 'b', 'L'.repeat(300), 'L'.repeat(299)],
    ['ZINCRBY', 'b', '5', ''], ['ZREVRANGE', 'b', '0', '1'], ['ZREM', 'b', Buffer.from([0, 255, 10, 13]), 'nope'],
    ['ZRANGESTORE', 'b2', 'b', '0', '-1'], ['ZRANGE', 'b2', '0', '-1', 'WITHSCORES'],
    ['ZPOPMIN', 'b', '2'], ['ZPOPMAX', 'b'], ['ZRANGE', 'b', '0', '-1'], ['DUMP', 'b'],
    ['ZADD', 'g', ...Array.from({ length: 300 }, (_, i) => [String(i % 7), `m${String.fromCharCode(i % 256)}${i}`]).flat()],
    ['ZADD', 'g', '3', Buffer.from([0]), '3', 'x'.repeat(400)],
    ['ZCARD', 'g'], ['OBJECT', 'ENCODING', 'g'], ['ZRANGE', 'g', '40', '60', 'WITHSCORES'], ['ZRANGEBYSCORE', 'g', '3', '3', 'LIMIT', '10', '20'],
    ['ZRANK', 'g', 'm\x05' + '5'], ['ZRANK', 'g', Buffer.from([0])], ['ZINCRBY', 'g', '100', 'x'.repeat(400)], ['ZREVRANGE', 'g', '0', '2', 'WITHSCORES'],
    ['ZREMRANGEBYRANK', 'g', '0', '99'], ['ZREMRANGEBYSCORE', 'g', '5', '6'], ['ZCARD', 'g'], ['ZRANGE', 'g', '0', '10'],
    ['ZPOPMIN', 'g', '5'], ['ZRANGE', 'g', '-3', '-1', 'WITHSCORES'], ['ZCOUNT', 'g', '-inf', '+inf'],
    ['ZUNIONSTORE', 'u', '2', 'g', 'b2'], ['ZRANGE', 'u', '0', '5', 'WITHSCORES'], ['ZINTERCARD', '2', 'g', 'u'],
    ['ZADD', 'lx', '0', 'a', '0', Buffer.from([0x61, 0]), '0', Buffer.from([0x61, 0xff]), '0', 'b', '0', ''],
    ['ZRANGEBYLEX', 'lx', '[a', '(b'], ['ZRANGEBYLEX', 'lx', '(a', '+'], ['ZLEXCOUNT', 'lx', '-', '[a'], ['ZREMRANGEBYLEX', 'lx', '[a', '[a'], ['ZRANGE', 'lx', '0', '-1'],
  ] },
];
export default scripts;
