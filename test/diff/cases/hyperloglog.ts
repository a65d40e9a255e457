import type { Script } from '../harness.js';

/** Deterministic element lists. */
function elems(prefix: string, n: number, step = 1): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i += step) out.push(`${prefix}${i}`);
  return out;
}

const scripts: Script[] = [
  { name: 'PFADD/PFCOUNT on a small sparse HLL, bytes identical', steps: [
    ['PFADD', 'h'], ['GET', 'h'], ['PFADD', 'h'], ['PFADD', 'h', 'a', 'b', 'c'], ['GET', 'h'], ['PFCOUNT', 'h'], ['GET', 'h'],
    ['PFADD', 'h', 'a'], ['PFCOUNT', 'h'], ['PFADD', 'h', 'd'], ['GET', 'h'], ['PFCOUNT', 'h', 'none'], ['PFCOUNT', 'none'],
  ] },
  { name: 'sparse growth, merging of runs and promotion to dense', steps: [
    ['PFADD', 'h', ...elems('e', 200)], ['GET', 'h'], ['PFCOUNT', 'h'],
    ['PFADD', 'h', ...elems('f', 2000)], ['GET', 'h'], ['PFCOUNT', 'h'],
    ['PFADD', 'h', ...elems('g', 20000)], ['PFCOUNT', 'h'], ['GET', 'h'],
  ] },
  { name: 'counts for many sizes', steps: [
    ['PFADD', 'a', ...elems('x', 10)], ['PFCOUNT', 'a'], ['PFADD', 'a', ...elems('y', 1000)], ['PFCOUNT', 'a'],
    ['PFADD', 'a', ...elems('z', 50000)], ['PFCOUNT', 'a'], ['PFADD', 'b', ...elems('z', 50000, 7)], ['PFCOUNT', 'b'],
    ['PFCOUNT', 'a', 'b'], ['PFCOUNT', 'b', 'none'],
  ] },
  { name: 'PFMERGE', steps: [
    ['PFADD', 's1', ...elems('p', 50)], ['PFADD', 's2', ...elems('q', 60)], ['PFMERGE', 'd', 's1', 's2'], ['GET', 'd'], ['PFCOUNT', 'd'],
    ['PFADD', 'big', ...elems('r', 5000)], ['PFMERGE', 'd', 'big'], ['GET', 'd'], ['PFCOUNT', 'd'], ['PFMERGE', 'e'], ['GET', 'e'],
    ['PFMERGE', 'f', 'none'], ['PFCOUNT', 'f'], ['PFMERGE', 's1', 's2'], ['PFCOUNT', 's1'],
  ] },
  { name: 'type errors', steps: [
    ['SET', 's', 'hello'], ['PFADD', 's', 'a'], ['PFCOUNT', 's'], ['PFMERGE', 'd', 's'], ['PFMERGE', 's', 'x'],
    ['SET', 'fake', 'HYLL\x05aaaaaaaaaaaaaaa'], ['PFCOUNT', 'fake'], ['ZADD', 'z', '1', 'a'], ['PFADD', 'z', 'a'], ['PFCOUNT', 'z'],
    ['PFADD'], ['PFCOUNT'],
  ] },
  { name: 'a value written by SET keeps working', steps: [
    ['PFADD', 'h', 'a', 'b', 'c'], ['GET', 'h'],
    ['SET', 'h2', Buffer.from('48594c4c01000000000000000000000051805d8c0280457ffe', 'hex')], ['PFCOUNT', 'h2'], ['PFADD', 'h2', 'zz'], ['GET', 'h2'],
  ] },
  { name: 'PFDEBUG and PFSELFTEST', steps: [
    ['PFADD', 'h', 'a', 'b', 'c'], ['PFDEBUG', 'DECODE', 'h'], ['PFDEBUG', 'ENCODING', 'h'], ['PFDEBUG', 'TODENSE', 'h'],
    ['PFDEBUG', 'ENCODING', 'h'], ['PFDEBUG', 'TODENSE', 'h'], ['PFDEBUG', 'DECODE', 'h'], ['PFCOUNT', 'h'], ['GET', 'h'],
    ['PFADD', 'g', 'x', 'y'], ['PFDEBUG', 'GETREG', 'g'], ['PFDEBUG', 'ENCODING', 'g'], ['PFDEBUG', 'foo', 'g'],
    ['PFDEBUG', 'GETREG', 'nokey'], ['SET', 's', 'x'], ['PFDEBUG', 'GETREG', 's'], ['LPUSH', 'l', 'x'], ['PFDEBUG', 'encoding', 'l'],
    ['PFDEBUG', 'DECODE'], ['PFSELFTEST', 'x'],
    ['PFADD', 'big', ...Array.from({ length: 300 }, (_, i) => `e${i}`)], ['PFDEBUG', 'DECODE', 'big'],
  ] },
];
export default scripts;
