/**
 * Blocking list commands (BLPOP BRPOP BRPOPLPUSH BLMOVE BLMPOP) and the blocking sorted-set
 * pops, on paths one connection can observe: immediate serving, argument and type errors
 * (and their order), timeouts of a few milliseconds, the timeout argument's parsing, and
 * MULTI/EXEC where they never block. Wake-ups between clients are in
 * test/commands/blocking.test.ts.
 */
import type { Script, Step } from '../harness.js';

/** Timeout arguments that expire at once (rounded up to 1 ms) or are rejected. */
const TIMEOUTS = [
  '0.0001', '1e-400', '0x1p-20', '.5e-3', '0.001', '1e-4950', '0.0000000001',
  'inf', '-inf', '+inf', 'infinity', '1e400', '1e4932', '9.3e15', '9223372036854776', '-1', '-0.0011', '-0.002', '-1e400',
  'nan', 'abc', '', ' 1', '1 ', '1e-5000', '1e4933', '0x', '1,5', '--1', '1e', '0.01a',
];

const timeoutSteps: Step[] = [];
for (const t of TIMEOUTS) {
  timeoutSteps.push(['BLPOP', 'none', t], ['BRPOP', 'none', t], ['BRPOPLPUSH', 'none', 'd', t]);
  timeoutSteps.push(['BLMOVE', 'none', 'd', 'LEFT', 'RIGHT', t], ['BLMPOP', t, '1', 'none', 'LEFT']);
  timeoutSteps.push(['BZPOPMIN', 'none', t], ['BZMPOP', t, '1', 'none', 'MIN']);
}

const scripts: Script[] = [
  { name: 'BLPOP / BRPOP served at once', steps: [
    ['RPUSH', 'l', 'a', 'b', 'c'], ['BLPOP', 'l', '0'], ['BRPOP', 'l', '0'], ['LRANGE', 'l', '0', '-1'],
    ['RPUSH', 'l2', 'x'], ['BLPOP', 'none', 'l', 'l2', '1'], ['EXISTS', 'l'], ['BRPOP', 'none', 'l2', '0.5'],
    ['EXISTS', 'l2'], ['RPUSH', 'l', '1', '2'], ['BLPOP', 'l', 'l', '0'], ['BRPOP', 'l', '0'], ['EXISTS', 'l'],
    ['RPUSH', Buffer.from([0xff, 0x00, 0x41]), Buffer.from([0xc3, 0x28, 0x0a])],
    ['BLPOP', 'none', Buffer.from([0xff, 0x00, 0x41]), '0'],
  ] },
  { name: 'BLPOP / BRPOP time out with a null array', steps: [
    ['BLPOP', 'none', '0.01'], ['BRPOP', 'none', 'other', '0.02'], ['BLPOP', 'none', '0.001'],
    ['RPUSH', 'l', 'a'], ['BLPOP', 'none', 'l', '0.01'], ['BLPOP', 'none', '0.01'],
  ] },
  { name: 'BLPOP / BRPOP errors and their order', steps: [
    ['SET', 's', 'x'], ['ZADD', 'z', '1', 'm'],
    ['BLPOP', 's', '0'], ['BRPOP', 'none', 's', '0'], ['BLPOP', 'z', '1'], ['BLPOP', 's', 'abc'],
    ['BLPOP', 's', '-1'], ['RPUSH', 'l', 'a'], ['BLPOP', 'l', 's', '0'], ['BLPOP', 's', 'l', '0'],
    ['BLPOP', 'l'], ['BRPOP', 'l'], ['BLPOP'], ['LRANGE', 'l', '0', '-1'],
  ] },
  { name: 'BRPOPLPUSH / BLMOVE served at once', steps: [
    ['RPUSH', 'src', 'a', 'b', 'c'], ['BRPOPLPUSH', 'src', 'dst', '0'], ['BLMOVE', 'src', 'dst', 'LEFT', 'RIGHT', '0'],
    ['BLMOVE', 'src', 'dst', 'right', 'left', '1.5'], ['EXISTS', 'src'], ['LRANGE', 'dst', '0', '-1'],
    ['BLMOVE', 'dst', 'dst', 'LEFT', 'RIGHT', '0'], ['BRPOPLPUSH', 'dst', 'dst', '0'], ['LRANGE', 'dst', '0', '-1'],
    ['RPUSH', 'one', 'x'], ['BLMOVE', 'one', 'one', 'LEFT', 'LEFT', '0'], ['LRANGE', 'one', '0', '-1'],
  ] },
  { name: 'BRPOPLPUSH / BLMOVE time out with a null bulk', steps: [
    ['BRPOPLPUSH', 'none', 'd', '0.01'], ['BLMOVE', 'none', 'd', 'LEFT', 'LEFT', '0.01'], ['EXISTS', 'd'],
    // A missing source blocks whatever the destination holds.
    ['SET', 's', 'x'], ['BRPOPLPUSH', 'none', 's', '0.01'], ['BLMOVE', 'none', 's', 'RIGHT', 'LEFT', '0.01'],
  ] },
  { name: 'BRPOPLPUSH / BLMOVE errors and their order', steps: [
    ['SET', 's', 'x'], ['RPUSH', 'l', 'a', 'b'],
    ['BRPOPLPUSH', 's', 'd', '0'], ['BRPOPLPUSH', 'l', 's', '0'], ['BLMOVE', 's', 'l', 'LEFT', 'LEFT', '0'],
    ['BLMOVE', 'l', 's', 'LEFT', 'LEFT', '0'], ['LRANGE', 'l', '0', '-1'],
    ['BLMOVE', 'l', 'd', 'MIDDLE', 'LEFT', '0'], ['BLMOVE', 'l', 'd', 'LEFT', 'UP', '0'],
    ['BLMOVE', 'l', 'd', 'UP', 'LEFT', 'abc'], ['BLMOVE', 'l', 'd', 'LEFT', 'LEFT', 'abc'],
    ['BLMOVE', 's', 'd', 'LEFT', 'LEFT', 'abc'], ['BLMOVE', 's', 'd', 'UP', 'LEFT', '0'],
    ['BLMOVE', 'none', 'd', 'UP', 'LEFT', '0'], ['BLMOVE', 'none', 'd', 'LEFT', 'LEFT', '-1'],
    ['BRPOPLPUSH', 's', 'd', 'abc'], ['BRPOPLPUSH', 'none', 'd', '-0.5'], ['BRPOPLPUSH', 'l', 'd'],
    ['BLMOVE', 'l', 'd', 'LEFT', 'LEFT'], ['BRPOPLPUSH', 'l', 'd', '0', 'x'],
  ] },
  { name: 'BLMPOP served at once', steps: [
    ['RPUSH', 'a', '1', '2', '3'], ['RPUSH', 'b', 'x', 'y'],
    ['BLMPOP', '0', '2', 'none', 'a', 'LEFT'], ['BLMPOP', '0', '2', 'a', 'b', 'RIGHT', 'COUNT', '10'],
    ['BLMPOP', '0.5', '1', 'b', 'left', 'count', '1'], ['BLMPOP', '0', '3', 'none', 'a', 'b', 'RIGHT', 'COUNT', '5'],
    ['EXISTS', 'a', 'b'], ['BLMPOP', '0.01', '2', 'a', 'b', 'LEFT'],
  ] },
  { name: 'BLMPOP errors and their order', steps: [
    ['SET', 's', 'x'], ['RPUSH', 'l', 'a'],
    ['BLMPOP', '0', '1', 's', 'LEFT'], ['BLMPOP', '0', '2', 'none', 's', 'LEFT'], ['BLMPOP', '0', '2', 'l', 's', 'LEFT'],
    ['BLMPOP', '0', '0', 'l', 'LEFT'], ['BLMPOP', '0', '-1', 'l', 'LEFT'], ['BLMPOP', '0', 'abc', 'l', 'LEFT'],
    ['BLMPOP', '0', '2', 'l', 'LEFT'], ['BLMPOP', '0', '5', 'l', 'LEFT'], ['BLMPOP', '0', '1', 'l', 'UP'],
    ['BLMPOP', '0', '1', 'l', 'LEFT', 'COUNT'], ['BLMPOP', '0', '1', 'l', 'LEFT', 'COUNT', '0'],
    ['BLMPOP', '0', '1', 'l', 'LEFT', 'COUNT', '-1'], ['BLMPOP', '0', '1', 'l', 'LEFT', 'COUNT', 'x'],
    ['BLMPOP', '0', '1', 'l', 'LEFT', 'COUNT', '1', 'COUNT', '1'], ['BLMPOP', '0', '1', 'l', 'LEFT', 'EXTRA'],
    // The timeout is parsed after everything else.
    ['BLMPOP', 'abc', '0', 'l', 'LEFT'], ['BLMPOP', 'abc', '1', 'l', 'UP'], ['BLMPOP', '-1', '1', 'l', 'LEFT', 'COUNT', '0'],
    ['BLMPOP', 'abc', '1', 's', 'LEFT'], ['BLMPOP', '-1', '1', 'l', 'LEFT'], ['BLMPOP', 'x', '1', 'l', 'LEFT'],
    ['BLMPOP', '0', '1', 'l'], ['BLMPOP', '0', '1'], ['LRANGE', 'l', '0', '-1'],
  ] },
  { name: 'BZPOPMIN / BZMPOP errors and their order', steps: [
    ['SET', 's', 'x'], ['ZADD', 'z', '1', 'm', '2', 'n'],
    ['BZPOPMIN', 's', 'abc'], ['BZPOPMIN', 's', '0'], ['BZMPOP', 'abc', '0', 'z', 'MIN'], ['BZMPOP', 'abc', '1', 'z', 'UP'],
    ['BZMPOP', '-1', '1', 'z', 'MIN', 'COUNT', '0'], ['BZMPOP', 'abc', '1', 's', 'MIN'], ['BZMPOP', '-1', '1', 'z', 'MIN'],
    ['BZMPOP', '0', '1', 's', 'MIN'], ['BZMPOP', '0', '2', 'z', 's', 'MAX', 'COUNT', '1'], ['BZPOPMAX', 'none', 'z', '0'],
    ['BZMPOP', '0.01', '1', 'z', 'MIN'], ['BZPOPMIN', 'z', '0.01'],
  ] },
  { name: 'timeout argument parsing', steps: timeoutSteps },
  { name: 'inside MULTI they never block: they answer as on timeout', steps: [
    ['SET', 's', 'x'], ['RPUSH', 'l', 'a'],
    ['MULTI'], ['BLPOP', 'none', '0'], ['BRPOP', 'none', 'other', '0'], ['BRPOPLPUSH', 'none', 'd', '0'],
    ['BLMOVE', 'none', 'd', 'LEFT', 'LEFT', '0'], ['BLMPOP', '0', '1', 'none', 'LEFT'], ['BZPOPMIN', 'none', '0'],
    ['BZMPOP', '0', '1', 'none', 'MAX'], ['BLPOP', 'l', '0'], ['BLPOP', 'l', '0'], ['BLPOP', 's', '0'], ['BLPOP', 'none', 'abc'],
    ['BLPOP', 'none', '-1'], ['BRPOPLPUSH', 'none', 's', '0'], ['EXEC'],
    ['MULTI'], ['RPUSH', 'q', 'x', 'y'], ['BLMOVE', 'q', 'q2', 'LEFT', 'RIGHT', '0'], ['BLPOP', 'q', '0'],
    ['BLPOP', 'q', '0'], ['BLMPOP', '0', '2', 'q', 'q2', 'LEFT', 'COUNT', '3'], ['EXEC'], ['EXISTS', 'q', 'q2'],
    ['MULTI'], ['BLPOP', 'none'], ['EXEC'],
  ] },
  { name: 'immediate serving in another database', steps: [
    ['SELECT', '3'], ['RPUSH', 'l', 'a', 'b'], ['BLPOP', 'l', '0'], ['BLMOVE', 'l', 'm', 'LEFT', 'LEFT', '0'],
    ['SELECT', '0'], ['BLPOP', 'l', '0.01'], ['SELECT', '3'], ['LRANGE', 'm', '0', '-1'],
  ] },
  // COMMAND INFO (minus key specs, which the table does not model) is checked in
  // test/commands/blocking.test.ts.
  { name: 'COMMAND GETKEYS of the blocking list commands', steps: [
    ['COMMAND', 'GETKEYS', 'BLPOP', 'a', 'b', '0'], ['COMMAND', 'GETKEYS', 'BRPOPLPUSH', 'a', 'b', '0'],
    ['COMMAND', 'GETKEYS', 'BLMOVE', 'a', 'b', 'LEFT', 'LEFT', '0'],
    ['COMMAND', 'GETKEYS', 'BLMPOP', '0', '2', 'a', 'b', 'LEFT'],
  ] },
];

export default scripts;
