/**
 * String commands against redis-server: every command, option and error reply.
 *
 * WRONGTYPE paths need a non-string key, which no command of ours can create yet: they are
 * covered in-process by test/engine/string-wrongtype.test.ts.
 * TTLs are observed through expiry (sleep, then GET), as TTL/PTTL belong to another family.
 */
import type { Script, Step } from '../harness.js';

const farFutureSec = String(Math.floor(Date.now() / 1000) + 3600);
const farFutureMs = String(Date.now() + 3600_000);

/** Deterministic pseudo-random numbers (LCG) so both servers get the same script. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

function randomFloats(seed: number, n: number): Step[] {
  const r = lcg(seed);
  const steps: Step[] = [];
  const digits = (k: number) => Array.from({ length: k }, () => Math.floor(r() * 10)).join('');
  for (let i = 0; i < n; i++) {
    const sign = r() < 0.4 ? '-' : '';
    let v: string;
    switch (Math.floor(r() * 6)) {
      case 0: v = `${sign}${digits(1 + Math.floor(r() * 6))}.${digits(Math.floor(r() * 12))}`; break;
      case 1: v = `${sign}0.${digits(1 + Math.floor(r() * 25))}`; break;
      case 2: v = `${sign}${digits(1 + Math.floor(r() * 3))}e${Math.floor(r() * 40) - 20}`; break;
      case 3: v = `${sign}${digits(1 + Math.floor(r() * 20))}`; break;
      case 4: v = `${sign}${(r() * 1000).toPrecision(1 + Math.floor(r() * 17))}`; break;
      default: v = `${sign}${digits(1 + Math.floor(r() * 2))}.${digits(1 + Math.floor(r() * 2))}`;
    }
    steps.push(['INCRBYFLOAT', `f${i % 4}`, v]);
  }
  for (let i = 0; i < 4; i++) steps.push(['GET', `f${i}`]);
  return steps;
}

const bin = Buffer.from([0x00, 0xff, 0x10, 0x0d, 0x0a, 0x80, 0x41, 0x00]);

const scripts: Script[] = [
  // ---------------------------------------------------------------- GET / SET
  { name: 'GET and SET basics', steps: [
    ['GET', 'k'], ['SET', 'k', 'v'], ['GET', 'k'], ['SET', 'k', ''], ['GET', 'k'],
    ['SET', 'k', '12345'], ['GET', 'k'], ['SET', 'k', 'x'.repeat(20000)], ['GET', 'k'],
    ['set', 'K', 'lower-case command'], ['GET', 'K'],
  ] },
  { name: 'binary keys and values', steps: [
    ['SET', bin, bin], ['GET', bin], ['STRLEN', bin], ['GETRANGE', bin, '1', '3'],
    ['APPEND', bin, bin], ['GET', bin], ['MGET', bin, 'nokey', bin],
  ] },
  { name: 'GET and SET arity errors', steps: [
    ['GET'], ['GET', 'a', 'b'], ['SET'], ['SET', 'k'],
  ] },
  { name: 'SET NX and XX', steps: [
    ['SET', 'k', 'v', 'XX'], ['GET', 'k'], ['SET', 'k', 'v', 'NX'], ['SET', 'k', 'w', 'NX'],
    ['GET', 'k'], ['SET', 'k', 'w', 'XX'], ['GET', 'k'], ['SET', 'k', 'z', 'nx', 'nx'],
    ['SET', 'k', 'z', 'xx', 'XX'], ['GET', 'k'],
  ] },
  { name: 'SET option conflicts are syntax errors', steps: [
    ['SET', 'k', 'v', 'NX', 'XX'], ['SET', 'k', 'v', 'XX', 'NX'], ['SET', 'k', 'v', 'EX', '10', 'PX', '100'],
    ['SET', 'k', 'v', 'PX', '100', 'EX', '10'], ['SET', 'k', 'v', 'EX', '10', 'EXAT', farFutureSec],
    ['SET', 'k', 'v', 'PXAT', farFutureMs, 'EXAT', farFutureSec], ['SET', 'k', 'v', 'EXAT', farFutureSec, 'PXAT', farFutureMs],
    ['SET', 'k', 'v', 'KEEPTTL', 'EX', '10'], ['SET', 'k', 'v', 'EX', '10', 'KEEPTTL'],
    ['SET', 'k', 'v', 'PX', '10', 'KEEPTTL'], ['SET', 'k', 'v', 'KEEPTTL', 'PXAT', farFutureMs],
    ['SET', 'k', 'v', 'PERSIST'], ['SET', 'k', 'v', 'FOO'], ['SET', 'k', 'v', 'EX'], ['SET', 'k', 'v', 'PX'],
    ['SET', 'k', 'v', 'EXAT'], ['SET', 'k', 'v', 'PXAT'], ['SET', 'k', 'v', 'NXX'], ['SET', 'k', 'v', 'N'],
    ['SET', 'k', 'v', 'KEEPTTLX'], ['SET', 'k', 'v', 'GETX'], ['SET', 'k', 'v', ''],
    ['GET', 'k'],
  ] },
  { name: 'SET errors: syntax before value before expire validity', steps: [
    ['SET', 'k', 'v', 'EX', 'abc'], ['SET', 'k', 'v', 'EX', '1.5'], ['SET', 'k', 'v', 'EX', ''],
    ['SET', 'k', 'v', 'EX', 'abc', 'FOO'], ['SET', 'k', 'v', 'FOO', 'EX', 'abc'], ['SET', 'k', 'v', 'EX', '0', 'FOO'],
    ['SET', 'k', 'v', 'EX', '0'], ['SET', 'k', 'v', 'EX', '-1'], ['SET', 'k', 'v', 'PX', '0'], ['SET', 'k', 'v', 'PX', '-100'],
    ['SET', 'k', 'v', 'EXAT', '0'], ['SET', 'k', 'v', 'PXAT', '0'], ['SET', 'k', 'v', 'EXAT', '-5'],
    ['SET', 'k', 'v', 'EX', 'NX'], ['SET', 'k', 'v', 'EX', '+10'], ['SET', 'k', 'v', 'EX', ' 10'], ['SET', 'k', 'v', 'EX', '010'],
    ['SET', 'k', 'v', 'EX', '9223372036854775808'], ['SET', 'k', 'v', 'EX', '-9223372036854775809'],
    ['SET', 'k', 'v', 'EX', '9223372036854775807'], ['SET', 'k', 'v', 'EX', '9223372036854776'],
    ['SET', 'k', 'v', 'EX', '9223372036854775'], ['SET', 'k', 'v', 'PX', '9223372036854775807'],
    ['SET', 'k', 'v', 'PX', '9223372036854775000'], ['SET', 'k', 'v', 'EXAT', '9223372036854776'],
    ['SET', 'k', 'v', 'EX', '-9223372036854775808'], ['SET', 'k', 'v', 'GET', 'EX', 'abc'], ['SET', 'k', 'v', 'GET', 'EX', '0'],
    ['GET', 'k'],
  ] },
  { name: 'SET with huge absolute expiries is accepted', steps: [
    ['SET', 'a', 'v', 'EXAT', '9223372036854775'], ['GET', 'a'],
    ['SET', 'b', 'v', 'PXAT', '9223372036854775807'], ['GET', 'b'],
    ['SET', 'c', 'v', 'EX', '8000000000000'], ['GET', 'c'],
    ['SET', 'd', 'v', 'PX', '9000000000000000000'], ['GET', 'd'],
  ] },
  { name: 'SET EX/PX expire the key', steps: [
    ['SET', 'a', 'v', 'PX', '100'], ['SET', 'b', 'v', 'px', '5000'], ['SET', 'c', 'v', 'EX', '100'],
    ['GET', 'a'], { cmd: ['GET', 'a'], sleep: 200 }, ['GET', 'b'], ['GET', 'c'],
  ] },
  { name: 'SET EX twice: the last one wins', steps: [
    ['SET', 'a', 'v', 'EX', '100', 'EX', '1'], ['SET', 'b', 'v', 'PX', '100000', 'PX', '100'],
    { cmd: ['GET', 'b'], sleep: 200 }, ['GET', 'a'],
  ] },
  { name: 'SET EXAT/PXAT in the past, and in the future', steps: [
    ['SET', 'k', 'v', 'EXAT', '1'], ['GET', 'k'], ['SET', 'k', 'v', 'PXAT', '1000'], ['GET', 'k'],
    ['SET', 'k', 'v', 'EXAT', farFutureSec], ['GET', 'k'], ['SET', 'k', 'w', 'PXAT', farFutureMs], ['GET', 'k'],
    ['SET', 'k', 'x', 'pxat', '1', 'GET'], ['GET', 'k'],
  ] },
  { name: 'SET with a past EXAT leaves the key counted until it is accessed (Redis 7.0)',
    skip: 'documented difference: we delete the key at once, as Redis 7.2 does; Redis 7.0 leaves it to lazy expiry',
    steps: [['SET', 'k', 'v', 'EXAT', '1'], ['DBSIZE']] },
  { name: 'SET without KEEPTTL clears the TTL, KEEPTTL keeps it', steps: [
    ['SET', 'a', 'v', 'PX', '100'], ['SET', 'a', 'w'], ['SET', 'b', 'v', 'PX', '100'], ['SET', 'b', 'w', 'KEEPTTL'],
    ['SET', 'c', 'v', 'PX', '100'], ['SET', 'c', 'w', 'keepttl', 'XX', 'GET'], ['SET', 'd', 'v', 'KEEPTTL'],
    { cmd: ['GET', 'a'], sleep: 200 }, ['GET', 'b'], ['GET', 'c'], ['GET', 'd'],
  ] },
  { name: 'SET GET', steps: [
    ['SET', 'k', 'v', 'GET'], ['SET', 'k', 'w', 'GET'], ['SET', 'k', 'x', 'get', 'get'], ['GET', 'k'],
    ['SET', 'k', 'y', 'GET', 'EX', '100'], ['SET', 'k', 'z', 'EX', '100', 'GET'], ['GET', 'k'],
    ['SET', 'n', 'v', 'XX', 'GET'], ['GET', 'n'], ['SET', 'n', 'v', 'NX', 'GET'], ['SET', 'n', 'w', 'NX', 'GET'], ['GET', 'n'],
    ['SET', 'n', 'u', 'GET', 'XX'], ['GET', 'n'], ['SET', 'm', '', 'GET'], ['SET', 'm', '1', 'GET'],
  ] },
  { name: 'SET options are C strings (a NUL ends them)', steps: [
    ['SET', 'k', 'v', 'NX\0junk'], ['SET', 'k', 'w', 'xx\0'], ['GET', 'k'], ['SET', 'k', 'v', 'EX\0x', '100'],
    ['SET', 'k', 'v', 'get\0'], ['SET', 'k', 'v', 'KEEPTTL\0\0'], ['SET', 'k', 'v', '\0NX'], ['SET', 'k', 'v', 'N\0X'],
  ] },
  // ---------------------------------------------------------------- SETNX / SETEX / PSETEX
  { name: 'SETNX', steps: [
    ['SETNX', 'k', 'v'], ['SETNX', 'k', 'w'], ['GET', 'k'], ['SETNX', 'k'], ['SETNX', 'k', 'v', 'x'],
    ['SET', 'e', 'v', 'PX', '100'], { cmd: ['SETNX', 'e', 'new'], sleep: 200 }, ['GET', 'e'],
  ] },
  { name: 'SETEX and PSETEX', steps: [
    ['SETEX', 'k', '100', 'v'], ['GET', 'k'], ['PSETEX', 'p', '100', 'v'], ['GET', 'p'], ['SETEX', 'k', '100', 'w'], ['GET', 'k'],
    { cmd: ['GET', 'p'], sleep: 200 },
    ['SETEX', 'k', '0', 'v'], ['SETEX', 'k', '-1', 'v'], ['SETEX', 'k', 'abc', 'v'], ['SETEX', 'k', '1.5', 'v'],
    ['PSETEX', 'k', '0', 'v'], ['PSETEX', 'k', '-10', 'v'], ['PSETEX', 'k', 'x', 'v'],
    ['SETEX', 'k', '9223372036854775807', 'v'], ['SETEX', 'k', '9223372036854775', 'v'],
    ['PSETEX', 'k', '9223372036854775807', 'v'], ['SETEX', 'k', '9223372036854775808', 'v'],
    ['SETEX', 'k', '10'], ['PSETEX', 'k', '10'], ['SETEX', 'k', '10', 'v', 'x'], ['GET', 'k'],
  ] },
  // ---------------------------------------------------------------- GETSET / GETDEL / GETEX
  { name: 'GETSET', steps: [
    ['GETSET', 'k', 'v'], ['GETSET', 'k', 'w'], ['GET', 'k'], ['GETSET', 'k'], ['GETSET', 'k', 'a', 'b'],
    ['SET', 't', 'v', 'PX', '100'], ['GETSET', 't', 'w'], { cmd: ['GET', 't'], sleep: 200 },
  ] },
  { name: 'GETDEL', steps: [
    ['GETDEL', 'k'], ['SET', 'k', 'v'], ['GETDEL', 'k'], ['GET', 'k'], ['GETDEL', 'k'], ['GETDEL'], ['GETDEL', 'a', 'b'],
  ] },
  { name: 'GETEX options', steps: [
    ['GETEX', 'k'], ['GETEX', 'k', 'EX', '10'], ['SET', 'k', 'v'], ['GETEX', 'k'], ['GETEX', 'k', 'EX', '100'],
    ['GETEX', 'k', 'PX', '100000'], ['GETEX', 'k', 'EXAT', farFutureSec], ['GETEX', 'k', 'PXAT', farFutureMs],
    ['GETEX', 'k', 'PERSIST'], ['GETEX', 'k', 'persist', 'PERSIST'], ['GETEX', 'k', 'ex', '10', 'EX', '20'], ['GET', 'k'],
  ] },
  { name: 'GETEX errors', steps: [
    ['SET', 'k', 'v'],
    ['GETEX', 'k', 'NX'], ['GETEX', 'k', 'XX'], ['GETEX', 'k', 'GET'], ['GETEX', 'k', 'KEEPTTL'], ['GETEX', 'k', 'FOO'],
    ['GETEX', 'k', 'EX'], ['GETEX', 'k', 'PERSIST', 'EX', '10'], ['GETEX', 'k', 'EX', '10', 'PERSIST'],
    ['GETEX', 'k', 'EX', '10', 'PX', '10'], ['GETEX', 'k', 'EXAT', '10', 'PXAT', '10'],
    ['GETEX', 'k', 'EX', 'abc'], ['GETEX', 'k', 'EX', '0'], ['GETEX', 'k', 'PX', '-1'], ['GETEX', 'k', 'EXAT', '0'],
    ['GETEX', 'k', 'PXAT', '-1'], ['GETEX', 'k', 'EX', '9223372036854775807'], ['GETEX', 'k', 'EX', 'abc', 'FOO'],
    ['GETEX', 'missing', 'EX', 'abc'], ['GETEX', 'missing', 'EX', '0'], ['GETEX', 'missing', 'FOO'],
    ['GETEX'], ['GET', 'k'],
  ] },
  { name: 'GETEX sets, persists and expires', steps: [
    ['SET', 'a', 'v'], ['GETEX', 'a', 'PX', '100'], ['SET', 'b', 'v', 'PX', '100'], ['GETEX', 'b', 'PERSIST'],
    ['SET', 'c', 'v', 'PX', '100'], ['GETEX', 'c'], ['SET', 'd', 'v'], ['GETEX', 'd', 'PERSIST'],
    ['SET', 'e', 'v', 'PX', '100'], ['GETEX', 'e', 'EX', '100'],
    { cmd: ['GET', 'a'], sleep: 200 }, ['GET', 'b'], ['GET', 'c'], ['GET', 'd'], ['GET', 'e'],
    ['SET', 'f', 'v'], ['GETEX', 'f', 'EXAT', '1'], ['GET', 'f'], ['SET', 'g', 'v'], ['GETEX', 'g', 'PXAT', '1'], ['GET', 'g'],
  ] },
  // ---------------------------------------------------------------- MGET / MSET / MSETNX
  { name: 'MGET', steps: [
    ['MSET', 'a', '1', 'b', '2'], ['MGET', 'a', 'b', 'c'], ['MGET', 'c'], ['MGET', 'a', 'a'], ['MGET'],
  ] },
  { name: 'MSET', steps: [
    ['MSET', 'a', '1'], ['MSET', 'a', '2', 'b', '3', 'a', '4'], ['MGET', 'a', 'b'], ['MSET'], ['MSET', 'a'],
    ['MSET', 'a', '1', 'b'], ['MGET', 'a', 'b'],
    ['SET', 't', 'v', 'PX', '100'], ['MSET', 't', 'w'], { cmd: ['GET', 't'], sleep: 200 },
  ] },
  { name: 'MSETNX', steps: [
    ['MSETNX', 'a', '1', 'b', '2'], ['MSETNX', 'b', '3', 'c', '4'], ['MGET', 'a', 'b', 'c'], ['MSETNX', 'c', '5', 'c', '6'],
    ['GET', 'c'], ['MSETNX'], ['MSETNX', 'a'], ['MSETNX', 'x', '1', 'y'], ['GET', 'x'],
    ['SET', 'e', 'v', 'PX', '100'], { cmd: ['MSETNX', 'e', 'new', 'f', 'g'], sleep: 200 }, ['MGET', 'e', 'f'],
  ] },
  { name: 'MSET wrong arity inside MULTI fails at EXEC', steps: [
    ['MULTI'], ['MSET', 'a', '1', 'b'], ['MSETNX', 'a'], ['SET', 'c', '1'], ['EXEC'],
  ] },
  // ---------------------------------------------------------------- APPEND / STRLEN
  { name: 'APPEND and STRLEN', steps: [
    ['STRLEN', 'k'], ['APPEND', 'k', 'hello'], ['APPEND', 'k', ' world'], ['GET', 'k'], ['STRLEN', 'k'],
    ['APPEND', 'k', ''], ['GET', 'k'], ['APPEND', 'e', ''], ['GET', 'e'], ['STRLEN', 'e'], ['APPEND', 'n', '12'],
    ['APPEND', 'n', '34'], ['INCR', 'n'], ['APPEND', 'n', 'x'], ['INCR', 'n'], ['STRLEN', 'n'],
    ['APPEND', 'k'], ['APPEND', 'k', 'a', 'b'], ['STRLEN'], ['STRLEN', 'a', 'b'],
  ] },
  { name: 'APPEND keeps the TTL', steps: [
    ['SET', 'k', 'v', 'PX', '100'], ['APPEND', 'k', 'w'], ['GET', 'k'], { cmd: ['GET', 'k'], sleep: 200 },
  ] },
  { name: 'many APPENDs build a big value (growable blocks)', steps: (() => {
    const s: Step[] = [];
    for (let i = 0; i < 300; i++) s.push(['APPEND', 'k', `chunk-${i}-`.padEnd(37 + (i % 50), String.fromCharCode(97 + (i % 26)))]);
    s.push(['GET', 'k'], ['SET', 'copy', 'x'], ['APPEND', 'copy', 'y'.repeat(300)], ['APPEND', 'copy', 'z'], ['GET', 'copy'],
      ['GETRANGE', 'k', '1000', '1100'], ['STRLEN', 'k'], ['SETRANGE', 'k', '5', 'ZZZ'], ['APPEND', 'k', 'tail'], ['GET', 'k']);
    return s;
  })() },
  // ---------------------------------------------------------------- GETRANGE / SUBSTR
  { name: 'GETRANGE', steps: [
    ['SET', 's', 'hello world'], ['GETRANGE', 's', '0', '4'], ['GETRANGE', 's', '-5', '-1'], ['GETRANGE', 's', '-1', '-5'],
    ['GETRANGE', 's', '0', '-1'], ['GETRANGE', 's', '0', '-100'], ['GETRANGE', 's', '-100', '-100'], ['GETRANGE', 's', '-100', '2'],
    ['GETRANGE', 's', '5', '3'], ['GETRANGE', 's', '10', '100'], ['GETRANGE', 's', '11', '100'], ['GETRANGE', 's', '100', '200'],
    ['GETRANGE', 's', '3', '3'], ['GETRANGE', 's', '-9223372036854775808', '9223372036854775807'],
    ['GETRANGE', 's', '-9223372036854775807', '-9223372036854775808'], ['GETRANGE', 's', '-9223372036854775808', '-9223372036854775807'],
    ['GETRANGE', 's', '9223372036854775807', '9223372036854775807'], ['GETRANGE', 's', '-4611686018427387904', '-4611686018427387905'],
    ['GETRANGE', 's', '9223372036854775808', '1'], ['GETRANGE', 's', '0', 'x'], ['GETRANGE', 's', 'x', '0'],
    ['GETRANGE', 's', '1.5', '2'], ['GETRANGE', 'missing', '0', '-1'], ['GETRANGE', 'missing', 'a', '0'],
    ['SET', 'e', ''], ['GETRANGE', 'e', '0', '-1'], ['GETRANGE', 'e', '-1', '0'], ['GETRANGE', 'e', '0', '0'],
    ['SET', 'n', '-12345'], ['GETRANGE', 'n', '1', '3'], ['GETRANGE', 's', '0'], ['GETRANGE', 's', '0', '1', '2'],
  ] },
  { name: 'SUBSTR', steps: [
    ['SET', 's', 'hello world'], ['SUBSTR', 's', '0', '4'], ['SUBSTR', 's', '-3', '-1'], ['SUBSTR', 's', '-1', '-3'],
    ['SUBSTR', 'missing', '0', '-1'], ['SUBSTR', 's', 'a', 'b'], ['SUBSTR', 's', '0'],
  ] },
  // ---------------------------------------------------------------- SETRANGE
  { name: 'SETRANGE', steps: [
    ['SETRANGE', 'k', '0', 'hello'], ['GET', 'k'], ['SETRANGE', 'k', '1', 'EL'], ['GET', 'k'], ['SETRANGE', 'k', '5', '!!'],
    ['GET', 'k'], ['SETRANGE', 'k', '10', 'x'], ['GET', 'k'], ['SETRANGE', 'k', '0', ''], ['SETRANGE', 'k', '100', ''],
    ['GET', 'k'], ['SETRANGE', 'z', '3', 'abc'], ['GET', 'z'], ['SETRANGE', 'none', '0', ''], ['SETRANGE', 'none', '5', ''],
    ['GET', 'none'], ['SET', 'n', '12345'], ['SETRANGE', 'n', '1', '9'], ['INCR', 'n'], ['SETRANGE', 'k', '2', 'longer than before'],
    ['GET', 'k'], ['SETRANGE', bin, '2', bin], ['GET', bin],
  ] },
  { name: 'SETRANGE errors and the size limit', steps: [
    ['SET', 'k', 'v'], ['SETRANGE', 'k', '-1', 'x'], ['SETRANGE', 'k', '-1', ''], ['SETRANGE', 'k', 'x', 'y'], ['SETRANGE', 'k', '1.5', 'y'],
    ['SETRANGE', 'k', '9223372036854775808', 'y'], ['SETRANGE', 'k', '-9223372036854775808', 'y'],
    ['SETRANGE', 'k', '536870912', 'x'], ['SETRANGE', 'k', '536870911', 'xy'], ['SETRANGE', 'k', '536870912', ''],
    ['SETRANGE', 'k', '9223372036854775807', 'x'], ['SETRANGE', 'k', '9223372036854775807', ''],
    ['SETRANGE', 'new', '536870912', 'x'], ['SETRANGE', 'new', '536870912', ''], ['SETRANGE', 'new', '9223372036854775807', 'x'],
    ['SETRANGE', 'new', '-1', ''], ['GET', 'new'], ['GET', 'k'], ['SETRANGE', 'k', '0'], ['SETRANGE', 'k', '0', 'a', 'b'],
  ] },
  { name: 'SETRANGE keeps the TTL', steps: [
    ['SET', 'k', 'v', 'PX', '100'], ['SETRANGE', 'k', '1', 'w'], ['GET', 'k'], { cmd: ['GET', 'k'], sleep: 200 },
  ] },
  // ---------------------------------------------------------------- INCR / DECR family
  { name: 'INCR DECR INCRBY DECRBY', steps: [
    ['INCR', 'n'], ['INCR', 'n'], ['DECR', 'n'], ['DECR', 'm'], ['INCRBY', 'n', '10'], ['INCRBY', 'n', '-100'],
    ['DECRBY', 'n', '5'], ['DECRBY', 'n', '-1000'], ['GET', 'n'], ['GET', 'm'], ['INCRBY', 'z', '0'], ['DECRBY', 'y', '0'],
    ['GET', 'z'], ['GET', 'y'], ['SET', 'n', '9999'], ['INCR', 'n'], ['GET', 'n'], ['SET', 'n', '-1'], ['INCR', 'n'], ['GET', 'n'],
  ] },
  { name: 'INCR on non-integers', steps: [
    ['SET', 'n', 'abc'], ['INCR', 'n'], ['SET', 'n', ''], ['INCR', 'n'], ['SET', 'n', ' 1'], ['INCR', 'n'], ['SET', 'n', '1 '],
    ['INCR', 'n'], ['SET', 'n', '01'], ['INCR', 'n'], ['SET', 'n', '+1'], ['INCR', 'n'], ['SET', 'n', '-0'], ['INCR', 'n'],
    ['SET', 'n', '1.0'], ['INCR', 'n'], ['SET', 'n', '1e3'], ['INCR', 'n'], ['SET', 'n', '9223372036854775808'], ['INCR', 'n'],
    ['SET', 'n', '-9223372036854775809'], ['DECR', 'n'], ['SET', 'n', '00000000000000000001'], ['INCR', 'n'],
    ['SET', 'n', '1\0'], ['INCR', 'n'], ['SET', 'n', '0'], ['INCR', 'n'], ['SET', 'n', '-'], ['DECR', 'n'],
  ] },
  { name: 'INCRBY/DECRBY argument errors', steps: [
    ['INCRBY', 'n', 'x'], ['INCRBY', 'n', '1.5'], ['INCRBY', 'n', ''], ['INCRBY', 'n', '9223372036854775808'],
    ['DECRBY', 'n', '-9223372036854775809'], ['DECRBY', 'n', '-9223372036854775808'], ['DECRBY', 'n', 'x'],
    ['SET', 'n', 'abc'], ['INCRBY', 'n', 'x'], ['DECRBY', 'n', '-9223372036854775808'], ['INCRBY', 'n', '1'],
    ['GET', 'n'], ['INCR'], ['INCR', 'a', 'b'], ['INCRBY', 'n'], ['DECR'], ['DECRBY', 'n'], ['DECRBY', 'n', '1', '2'],
  ] },
  { name: '64-bit counters beyond 2^53', steps: [
    ['SET', 'n', '9007199254740991'], ['INCR', 'n'], ['INCR', 'n'], ['INCR', 'n'], ['GET', 'n'], ['DECR', 'n'],
    ['INCRBY', 'n', '9007199254740993'], ['GET', 'n'], ['SET', 'm', '-9007199254740991'], ['DECR', 'm'], ['DECRBY', 'm', '3'],
    ['INCRBY', 'm', '18014398509481990'], ['SET', 'x', '4611686018427387904'], ['INCRBY', 'x', '4611686018427387903'],
    ['INCR', 'x'], ['GET', 'x'], ['DECRBY', 'x', '9223372036854775807'], ['DECRBY', 'x', '9223372036854775807'],
    ['DECR', 'x'], ['DECR', 'x'], ['GET', 'x'], ['INCRBY', 'y', '9223372036854775807'], ['INCRBY', 'y', '-9223372036854775808'],
    ['INCRBY', 'w', '-9223372036854775808'], ['DECR', 'w'], ['INCR', 'w'], ['INCRBY', 'w', '9223372036854775807'],
    ['INCRBY', 'w', '9223372036854775807'], ['DECRBY', 'w', '-1'], ['GET', 'w'],
    ['SET', 'big', '9007199254740993'], ['INCRBY', 'big', '-2'], ['INCRBY', 'big', '-9007199254740991'], ['GET', 'big'],
  ] },
  { name: 'overflow errors leave the value unchanged', steps: [
    ['SET', 'n', '9223372036854775807'], ['INCR', 'n'], ['INCRBY', 'n', '1'], ['DECRBY', 'n', '-1'], ['GET', 'n'],
    ['SET', 'n', '-9223372036854775808'], ['DECR', 'n'], ['INCRBY', 'n', '-1'], ['DECRBY', 'n', '1'], ['GET', 'n'],
    ['DECRBY', 'n', '9223372036854775807'], ['INCRBY', 'n', '9223372036854775807'], ['INCR', 'n'],
    ['SET', 'p', '1'], ['INCRBY', 'p', '9223372036854775807'], ['INCRBY', 'p', '9223372036854775806'], ['INCR', 'p'],
  ] },
  { name: 'INCR keeps the TTL', steps: [
    ['SET', 'k', '1', 'PX', '100'], ['INCR', 'k'], ['INCRBY', 'k', '5'], ['DECR', 'k'], ['GET', 'k'], { cmd: ['GET', 'k'], sleep: 200 },
  ] },
  // ---------------------------------------------------------------- INCRBYFLOAT
  { name: 'INCRBYFLOAT rounding as long double', steps: [
    ['SET', 'k', '0.1'], ['INCRBYFLOAT', 'k', '0.2'], ['SET', 'k', '10.5'], ['INCRBYFLOAT', 'k', '0.1'],
    ['INCRBYFLOAT', 'a', '1.1'], ['INCRBYFLOAT', 'a', '2.2'], ['INCRBYFLOAT', 'a', '3.3'], ['INCRBYFLOAT', 'b', '3.0'],
    ['INCRBYFLOAT', 'b', '0.1'], ['INCRBYFLOAT', 'c', '5.0e3'], ['INCRBYFLOAT', 'c', '2.0e2'], ['INCRBYFLOAT', 'd', '1e-20'],
    ['INCRBYFLOAT', 'd', '1'], ['INCRBYFLOAT', 'e', '0.000003814697265625'], ['INCRBYFLOAT', 'f', '0.000001907348632812'],
    ['INCRBYFLOAT', 'g', '-0.000003814697265625'], ['INCRBYFLOAT', 'h', '1.5e-17'], ['INCRBYFLOAT', 'i', '2.5e-17'],
    ['INCRBYFLOAT', 'j', '0.123456789012345678901234567890'], ['INCRBYFLOAT', 'j', '-0.1'], ['INCRBYFLOAT', 'l', '1.7976931348623157e308'],
    ['INCRBYFLOAT', 'm', '9007199254740993'], ['INCRBYFLOAT', 'm', '0.5'], ['INCRBYFLOAT', 'o', '18446744073709551615'],
    ['INCRBYFLOAT', 'o', '1'], ['INCRBYFLOAT', 'p', '18446744073709551617'], ['INCRBYFLOAT', 'q', '3.14159265358979323846264338327950288'],
  ] },
  { name: 'INCRBYFLOAT big exponents', steps: [
    ['INCRBYFLOAT', 'k', '1e308'], ['INCRBYFLOAT', 'k', '1e308'], ['INCRBYFLOAT', 'k', '-1e308'],
    ['INCRBYFLOAT', 'x', '1e4932'], ['INCRBYFLOAT', 'x', '1e4932'], ['INCRBYFLOAT', 'y', '1.18e4932'],
    ['INCRBYFLOAT', 'y', '1e4931'], ['INCRBYFLOAT', 'y', '-1e4932'], ['INCRBYFLOAT', 'z', '1e4933'], ['INCRBYFLOAT', 'z', '-1.2e4932'],
    ['INCRBYFLOAT', 'z', '1e-4950'], ['GET', 'z'], ['INCRBYFLOAT', 'z', '1e-4951'], ['INCRBYFLOAT', 'z', '3e-4951'],
    ['INCRBYFLOAT', 'z', '1e-4940'], ['INCRBYFLOAT', 'w', '1e-18'], ['INCRBYFLOAT', 'w', '5e-18'], ['INCRBYFLOAT', 'w', '5e-18'],
    ['INCRBYFLOAT', 'v', '123456789012345678901234567890e-10'], ['INCRBYFLOAT', 'v', '1e25'],
    ['INCRBYFLOAT', 'u', '0e99999999999999'], ['INCRBYFLOAT', 'u', '1e-99999999999999'], ['INCRBYFLOAT', 'u', '1e99999999999999'],
  ] },
  { name: 'INCRBYFLOAT negative zero and signs', steps: [
    ['INCRBYFLOAT', 'a', '-0'], ['INCRBYFLOAT', 'a', '-0.0'], ['SET', 'b', '-0'], ['INCRBYFLOAT', 'b', '-0'],
    ['INCRBYFLOAT', 'c', '-1e-18'], ['INCRBYFLOAT', 'd', '-0.000000000000000005'], ['INCRBYFLOAT', 'd', '-0.000000000000000006'],
    ['INCRBYFLOAT', 'e', '+1.5'], ['INCRBYFLOAT', 'e', '-1.5'], ['INCRBYFLOAT', 'f', '-.5'], ['INCRBYFLOAT', 'f', '+.25'],
    ['INCRBYFLOAT', 'g', '5.'], ['INCRBYFLOAT', 'g', '-5.'], ['SET', 'h', '1.50'], ['INCRBYFLOAT', 'h', '0'],
  ] },
  { name: 'INCRBYFLOAT hex and special forms', steps: [
    ['INCRBYFLOAT', 'a', '0x10'], ['INCRBYFLOAT', 'a', '0x1p-2'], ['INCRBYFLOAT', 'a', '0X.8P1'], ['INCRBYFLOAT', 'a', '0x1.8'],
    ['INCRBYFLOAT', 'a', '0x'], ['INCRBYFLOAT', 'a', '0x1p'], ['INCRBYFLOAT', 'a', '0xg'], ['INCRBYFLOAT', 'a', '0x1p-16445'],
    ['INCRBYFLOAT', 'a', '0x1p-16446'], ['INCRBYFLOAT', 'a', '0x1p16384'], ['INCRBYFLOAT', 'a', '-0x1p16383'],
    ['GET', 'a'], ['INCRBYFLOAT', 'b', 'inf'], ['INCRBYFLOAT', 'b', '-inf'], ['INCRBYFLOAT', 'b', 'Infinity'],
    ['INCRBYFLOAT', 'b', '+INF'], ['INCRBYFLOAT', 'b', 'infinit'], ['INCRBYFLOAT', 'b', 'nan'], ['INCRBYFLOAT', 'b', 'NaN'],
    ['INCRBYFLOAT', 'b', '-nan'], ['INCRBYFLOAT', 'b', 'nan(123)'], ['GET', 'b'],
    ['SET', 'c', 'inf'], ['INCRBYFLOAT', 'c', '1'], ['SET', 'c', 'nan'], ['INCRBYFLOAT', 'c', '1'], ['SET', 'c', '1e5000'], ['INCRBYFLOAT', 'c', '1'],
  ] },
  { name: 'INCRBYFLOAT invalid numbers', steps: [
    ['INCRBYFLOAT', 'k', ''], ['INCRBYFLOAT', 'k', ' 1'], ['INCRBYFLOAT', 'k', '1 '], ['INCRBYFLOAT', 'k', '\t1'],
    ['INCRBYFLOAT', 'k', '\n1'], ['INCRBYFLOAT', 'k', '1\n'], ['INCRBYFLOAT', 'k', 'abc'], ['INCRBYFLOAT', 'k', '1e'],
    ['INCRBYFLOAT', 'k', '1e+'], ['INCRBYFLOAT', 'k', '.'], ['INCRBYFLOAT', 'k', '-'], ['INCRBYFLOAT', 'k', '+'],
    ['INCRBYFLOAT', 'k', '1.5\0'], ['INCRBYFLOAT', 'k', '\0'], ['INCRBYFLOAT', 'k', '1,5'], ['INCRBYFLOAT', 'k', '--1'],
    ['INCRBYFLOAT', 'k', '1.2.3'], ['INCRBYFLOAT', 'k', '0b101'],
    ['INCRBYFLOAT', 'k', '1' + '0'.repeat(5118)], ['INCRBYFLOAT', 'k', '1' + '0'.repeat(5119)],
    ['INCRBYFLOAT', 'k', '0.' + '0'.repeat(5116) + '1'], ['GET', 'k'],
    ['SET', 's', 'abc'], ['INCRBYFLOAT', 's', '1'], ['SET', 's', ' 1'], ['INCRBYFLOAT', 's', '1'], ['SET', 's', ''], ['INCRBYFLOAT', 's', '1'],
    ['SET', 's', '2'], ['INCRBYFLOAT', 's', 'x'], ['GET', 's'], ['INCRBYFLOAT', 's'], ['INCRBYFLOAT', 's', '1', '2'],
  ] },
  { name: 'INCRBYFLOAT keeps the TTL and then INCR refuses the float', steps: [
    ['SET', 'k', '1', 'PX', '100'], ['INCRBYFLOAT', 'k', '0.5'], ['INCR', 'k'], ['INCRBYFLOAT', 'k', '0.5'], ['INCR', 'k'],
    ['GET', 'k'], { cmd: ['GET', 'k'], sleep: 200 },
  ] },
  { name: 'INCRBYFLOAT pseudo-random sequence 1', steps: randomFloats(1, 120) },
  { name: 'INCRBYFLOAT pseudo-random sequence 2', steps: randomFloats(77, 120) },
  { name: 'INCRBYFLOAT pseudo-random sequence 3', steps: randomFloats(4242, 120) },
  // ---------------------------------------------------------------- LCS
  { name: 'LCS', steps: [
    ['MSET', 'a', 'ohmytext', 'b', 'mynewtext'], ['LCS', 'a', 'b'], ['LCS', 'a', 'b', 'LEN'], ['LCS', 'b', 'a'],
    ['LCS', 'a', 'a'], ['LCS', 'a', 'missing'], ['LCS', 'missing', 'a', 'LEN'], ['LCS', 'x', 'y'], ['LCS', 'x', 'y', 'IDX'],
    ['LCS', 'a', 'b', 'len', 'len'],
  ] },
  { name: 'LCS IDX, MINMATCHLEN, WITHMATCHLEN', steps: [
    ['MSET', 'a', 'ohmytext', 'b', 'mynewtext'], ['LCS', 'a', 'b', 'IDX'], ['LCS', 'a', 'b', 'IDX', 'MINMATCHLEN', '4'],
    ['LCS', 'a', 'b', 'IDX', 'WITHMATCHLEN'], ['LCS', 'a', 'b', 'idx', 'minmatchlen', '2', 'withmatchlen'],
    ['LCS', 'a', 'b', 'MINMATCHLEN', '-5', 'IDX'], ['LCS', 'a', 'b', 'MINMATCHLEN', '100', 'IDX'],
    ['LCS', 'a', 'b', 'MINMATCHLEN', '9223372036854775807', 'IDX'], ['LCS', 'a', 'b', 'WITHMATCHLEN'],
    ['LCS', 'a', 'b', 'MINMATCHLEN', '3'], ['LCS', 'a', 'b', 'LEN', 'MINMATCHLEN', '3', 'WITHMATCHLEN'],
    ['MSET', 'c', 'ABCBDAB', 'd', 'BDCABA'], ['LCS', 'c', 'd'], ['LCS', 'c', 'd', 'IDX', 'WITHMATCHLEN'], ['LCS', 'd', 'c', 'IDX'],
    ['MSET', 'e', 'aaaa', 'f', 'aa'], ['LCS', 'e', 'f', 'IDX', 'WITHMATCHLEN'], ['LCS', 'f', 'e', 'IDX'],
    ['MSET', 'g', bin, 'h', Buffer.concat([bin, bin])], ['LCS', 'g', 'h'], ['LCS', 'h', 'g', 'IDX', 'WITHMATCHLEN'],
    ['SET', 'i', ''], ['LCS', 'i', 'a', 'IDX'], ['LCS', 'i', 'i'],
  ] },
  { name: 'LCS errors', steps: [
    ['MSET', 'a', 'ohmytext', 'b', 'mynewtext'], ['LCS', 'a', 'b', 'LEN', 'IDX'], ['LCS', 'a', 'b', 'IDX', 'LEN'],
    ['LCS', 'a', 'b', 'MINMATCHLEN'], ['LCS', 'a', 'b', 'MINMATCHLEN', 'x'], ['LCS', 'a', 'b', 'MINMATCHLEN', 'x', 'LEN', 'IDX'],
    ['LCS', 'a', 'b', 'MINMATCHLEN', '1.5'], ['LCS', 'a', 'b', 'FOO'], ['LCS', 'a', 'b', 'LEN', 'FOO'], ['LCS', 'a', 'b', 'IDX\0'],
    ['LCS', 'a', 'b', 'LEN\0x'], ['LCS', 'a'], ['LCS'],
  ] },
  { name: 'LCS on longer pseudo-random strings', steps: (() => {
    const r = lcg(9);
    const s = (n: number) => Array.from({ length: n }, () => 'ACGT'[Math.floor(r() * 4)]).join('');
    return [['MSET', 'a', s(300), 'b', s(280)], ['LCS', 'a', 'b'], ['LCS', 'a', 'b', 'LEN'], ['LCS', 'a', 'b', 'IDX', 'MINMATCHLEN', '3', 'WITHMATCHLEN']];
  })() },
  // ---------------------------------------------------------------- transactions
  { name: 'string commands inside MULTI', steps: [
    ['MULTI'], ['SET', 'a', '1'], ['INCR', 'a'], ['INCRBYFLOAT', 'a', '0.5'], ['APPEND', 'a', 'x'], ['GETRANGE', 'a', '0', '-1'],
    ['SET', 'a', 'v', 'FOO'], ['GETDEL', 'a'], ['MGET', 'a'], ['EXEC'],
  ] },
];
export default scripts;
