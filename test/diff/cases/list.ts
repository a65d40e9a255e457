/**
 * List commands against redis-server 7.0 (every reply is deterministic, so all byte for byte).
 */
import type { Script, Step } from '../harness.js';

const wrongType: Step[] = [
  ['SET', 's', 'x'],
  ['LPUSH', 's', 'a'], ['RPUSH', 's', 'a'], ['LPUSHX', 's', 'a'], ['RPUSHX', 's', 'a'], ['LPOP', 's'], ['RPOP', 's'],
  ['LPOP', 's', '2'], ['LLEN', 's'], ['LRANGE', 's', '0', '-1'], ['LINDEX', 's', '0'], ['LSET', 's', '0', 'x'],
  ['LINSERT', 's', 'BEFORE', 'a', 'b'], ['LREM', 's', '0', 'a'], ['LTRIM', 's', '0', '1'], ['LPOS', 's', 'a'],
  ['LMOVE', 's', 'd', 'LEFT', 'RIGHT'], ['RPOPLPUSH', 's', 'd'], ['LMPOP', '1', 's', 'LEFT'],
  ['RPUSH', 'l', 'a'], ['LMOVE', 'l', 's', 'LEFT', 'LEFT'], ['RPOPLPUSH', 'l', 's'], ['LRANGE', 'l', '0', '-1'],
  ['LMPOP', '2', 'nokey', 's', 'LEFT'], ['LMPOP', '2', 'l', 's', 'LEFT'], ['GET', 's'],
  // Argument errors come before the type check where Redis parses first.
  ['LINSERT', 's', 'MIDDLE', 'a', 'b'], ['LPOS', 's', 'a', 'RANK', '0'], ['LRANGE', 's', 'x', '1'],
  ['LMOVE', 's', 'd', 'UP', 'LEFT'], ['LPOP', 's', '-1'], ['LREM', 's', 'x', 'a'], ['LTRIM', 's', '0', 'x'],
  ['LINDEX', 's', 'x'], ['LSET', 's', 'x', 'v'], ['LMPOP', '0', 's', 'LEFT'], ['LMPOP', '1', 's', 'LEFT', 'COUNT', '0'],
];

const INTS = ['0', '1', '127', '128', '-1', '4095', '-4096', '4096', '32767', '-32768', '32768', '8388607', '-8388608', '8388608', '2147483647', '-2147483648', '2147483648', '999999999999999', '-999999999999999', '1000000000000000', '9007199254740991', '9007199254740993', '9223372036854775807', '-9223372036854775808', '1795840337019'];

const scripts: Script[] = [
  { name: 'LPUSH / RPUSH and LRANGE', steps: [
    ['RPUSH', 'l', 'a', 'b', 'c'], ['LPUSH', 'l', 'x', 'y'], ['LRANGE', 'l', '0', '-1'], ['LLEN', 'l'],
    ['LRANGE', 'l', '1', '2'], ['LRANGE', 'l', '-2', '-1'], ['LRANGE', 'l', '-100', '100'], ['LRANGE', 'l', '3', '1'],
    ['LRANGE', 'l', '5', '10'], ['LRANGE', 'l', '-1', '-2'], ['LRANGE', 'l', '0', '0'], ['LRANGE', 'l', '4', '-1'],
    ['LRANGE', 'l', '-9223372036854775808', '9223372036854775807'], ['LRANGE', 'l', 'a', '1'], ['LRANGE', 'l', '0', '1.5'],
    ['LRANGE', 'nokey', '0', '-1'], ['LRANGE', 'nokey', 'x', '1'], ['LRANGE', 'l', '0', '9223372036854775808'],
  ] },
  { name: 'LPUSHX / RPUSHX', steps: [
    ['LPUSHX', 'l', 'a'], ['RPUSHX', 'l', 'a', 'b'], ['LLEN', 'l'], ['RPUSH', 'l', 'm'], ['LPUSHX', 'l', 'a', 'b'],
    ['RPUSHX', 'l', 'y', 'z'], ['LRANGE', 'l', '0', '-1'],
  ] },
  { name: 'WRONGTYPE for every list command', steps: wrongType },
  { name: 'LPOP / RPOP with and without count', steps: [
    ['RPUSH', 'l', 'a', 'b', 'c', 'd', 'e'], ['LPOP', 'l'], ['RPOP', 'l'], ['LPOP', 'l', '0'], ['RPOP', 'l', '2'],
    ['LPOP', 'l', '10'], ['LLEN', 'l'], ['LPOP', 'l'], ['LPOP', 'l', '2'], ['RPOP', 'l', '0'], ['RPOP', 'l'],
    ['RPUSH', 'l', 'a'], ['LPOP', 'l', '-1'], ['LPOP', 'l', 'x'], ['LPOP', 'l', '1.5'], ['RPOP', 'l', '-9223372036854775808'],
    ['LPOP', 'l', '1', '2'], ['RPOP', 'l', '1', '2'], ['LPOP', 'nokey', '-1'], ['LPOP', 'l', '9223372036854775807'],
    ['LLEN', 'l'],
  ] },
  { name: 'LINDEX', steps: [
    ['RPUSH', 'l', 'a', 'b', 'c'], ['LINDEX', 'l', '0'], ['LINDEX', 'l', '2'], ['LINDEX', 'l', '3'], ['LINDEX', 'l', '-1'],
    ['LINDEX', 'l', '-3'], ['LINDEX', 'l', '-4'], ['LINDEX', 'l', 'x'], ['LINDEX', 'nokey', 'x'], ['LINDEX', 'nokey', '0'],
    ['LINDEX', 'l', '-9223372036854775808'], ['LINDEX', 'l', '9223372036854775808'],
  ] },
  { name: 'LSET', steps: [
    ['LSET', 'nokey', '0', 'x'], ['LSET', 'nokey', 'bad', 'x'], ['RPUSH', 'l', 'a', 'b', 'c'], ['LSET', 'l', '1', 'B'],
    ['LSET', 'l', '-1', 'C'], ['LSET', 'l', '3', 'x'], ['LSET', 'l', '-4', 'x'], ['LSET', 'l', 'x', 'y'],
    ['LSET', 'l', '0', 'x'.repeat(10000)], ['LRANGE', 'l', '1', '-1'], ['LLEN', 'l'],
  ] },
  { name: 'LINSERT', steps: [
    ['LINSERT', 'nokey', 'BEFORE', 'a', 'b'], ['RPUSH', 'l', 'a', 'b', 'a'], ['LINSERT', 'l', 'BEFORE', 'a', 'x'],
    ['LINSERT', 'l', 'after', 'a', 'y'], ['LINSERT', 'l', 'AFTER', 'z', 'q'], ['LINSERT', 'l', 'MIDDLE', 'a', 'q'],
    ['LINSERT', 'nokey', 'MIDDLE', 'a', 'q'], ['LINSERT', 'l', 'AFTER', 'a', ''], ['LINSERT', 'l', 'BEFORE', '', 'e'],
    ['LRANGE', 'l', '0', '-1'], ['LINSERT', 'l', 'AFTER', 'b', 'b2'], ['LRANGE', 'l', '0', '-1'],
  ] },
  // Integer entries are compared with an integer target as numbers: every listpack integer
  // width, 15/16+ digits, and targets that are not canonical integer text.
  { name: 'LREM and LPOS of integer elements of every width, canonical and not', steps: [
    ['RPUSH', 'n', ...INTS, 'x', ...INTS, '007', '-0', '+1', '1.0', ' 1', '9223372036854775808'],
    ...[...INTS, '007', '-0', '+1', '1.0', ' 1', '9223372036854775808', '00', '', '-'].flatMap((t): Step[] => [
      ['LPOS', 'n', t, 'COUNT', '0'], ['LPOS', 'n', t, 'RANK', '-1'],
    ]),
    ['LREM', 'n', '1', '128'], ['LREM', 'n', '-1', '-4096'], ['LREM', 'n', '0', '9007199254740993'], ['LREM', 'n', '0', '007'],
    ['LREM', 'n', '0', '7'], ['LREM', 'n', '0', '-0'], ['LREM', 'n', '0', '0'], ['LREM', 'n', '0', '1795840337019'],
    ['LREM', 'n', '0', '-9223372036854775808'], ['LREM', 'n', '2', '9223372036854775808'], ['LRANGE', 'n', '0', '-1'],
    ['LREM', 'n', '0', '1000000000000000'], ['LREM', 'n', '-5', '999999999999999'], ['LLEN', 'n'], ['LRANGE', 'n', '0', '-1'],
    ['RPUSH', 'q', '150', '151', '152', '153'], ['LREM', 'q', '-1', '152'], ['LREM', 'q', '1', '15'], ['LRANGE', 'q', '0', '-1'],
  ] },
  // The flat list's LREM cuts entries through a reused offsets scratch: one match (at either
  // end or inside), several from either side, and more matches than the scratch first holds.
  { name: 'LREM of a flat list: one match, several, and more than 8', steps: [
    ['RPUSH', 'f', '1', '2', '3', '4', '5'], ['LREM', 'f', '-1', '5'], ['LREM', 'f', '1', '1'], ['LREM', 'f', '-1', '3'],
    ['LRANGE', 'f', '0', '-1'], ['LREM', 'f', '0', '2'], ['LREM', 'f', '1', '4'], ['EXISTS', 'f'],
    ['RPUSH', 'g', ...Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? 'x' : `v${i}`))], ['LREM', 'g', '-3', 'x'],
    ['LREM', 'g', '4', 'x'], ['LRANGE', 'g', '0', '-1'], ['LREM', 'g', '0', 'x'], ['LRANGE', 'g', '0', '-1'],
    ['RPUSH', 'h', ...Array.from({ length: 40 }, () => '7')], ['LREM', 'h', '-25', '7'], ['LRANGE', 'h', '0', '-1'],
    ['LREM', 'h', '0', '7'], ['EXISTS', 'h'],
  ] },
  { name: 'LREM', steps: [
    ['RPUSH', 'l', 'a', 'b', 'a', 'c', 'a', 'b', 'a'], ['LREM', 'l', '2', 'a'], ['LRANGE', 'l', '0', '-1'],
    ['LREM', 'l', '-1', 'a'], ['LRANGE', 'l', '0', '-1'], ['LREM', 'l', '0', 'b'], ['LRANGE', 'l', '0', '-1'],
    ['LREM', 'l', '0', 'zz'], ['LREM', 'l', 'x', 'a'], ['LREM', 'nokey', '0', 'a'], ['LREM', 'nokey', 'x', 'a'],
    ['LREM', 'l', '100', 'a'], ['LREM', 'l', '-100', 'c'], ['LLEN', 'l'], ['LRANGE', 'l', '0', '-1'],
    ['RPUSH', 'm', 'x', 'y', 'x', 'y', 'x'], ['LREM', 'm', '-2', 'x'], ['LRANGE', 'm', '0', '-1'],
    ['LREM', 'm', '9223372036854775807', 'y'], ['LRANGE', 'm', '0', '-1'],
  ] },
  { name: 'LTRIM', steps: [
    ['LTRIM', 'nokey', '0', '1'], ['LTRIM', 'nokey', 'x', '1'], ['RPUSH', 'l', '1', '2', '3', '4', '5', '6'],
    ['LTRIM', 'l', '1', '-2'], ['LRANGE', 'l', '0', '-1'], ['LTRIM', 'l', '-3', '100'], ['LRANGE', 'l', '0', '-1'],
    ['LTRIM', 'l', '0', '0'], ['LRANGE', 'l', '0', '-1'], ['LTRIM', 'l', '1', '0'], ['LLEN', 'l'], ['LRANGE', 'l', '0', '-1'],
    ['RPUSH', 'l', 'a', 'b'], ['LTRIM', 'l', '5', '10'], ['LLEN', 'l'], ['RPUSH', 'l', 'a', 'b'], ['LTRIM', 'l', 'a', 'b'],
    ['LTRIM', 'l', '-100', '-50'], ['LLEN', 'l'],
  ] },
  { name: 'LPOS', steps: [
    ['RPUSH', 'l', 'a', 'b', 'c', 'a', 'b', 'c', 'a'], ['LPOS', 'l', 'a'], ['LPOS', 'l', 'c'], ['LPOS', 'l', 'z'],
    ['LPOS', 'l', 'a', 'RANK', '2'], ['LPOS', 'l', 'a', 'RANK', '-1'], ['LPOS', 'l', 'a', 'RANK', '-2'],
    ['LPOS', 'l', 'a', 'RANK', '4'], ['LPOS', 'l', 'a', 'COUNT', '0'], ['LPOS', 'l', 'a', 'COUNT', '2'],
    ['LPOS', 'l', 'a', 'COUNT', '2', 'RANK', '-1'], ['LPOS', 'l', 'a', 'COUNT', '0', 'RANK', '2'],
    ['LPOS', 'l', 'a', 'MAXLEN', '3'], ['LPOS', 'l', 'a', 'MAXLEN', '4', 'COUNT', '0'], ['LPOS', 'l', 'a', 'MAXLEN', '1', 'RANK', '-1'],
    ['LPOS', 'l', 'a', 'MAXLEN', '0', 'COUNT', '10'], ['LPOS', 'l', 'z', 'COUNT', '0'], ['LPOS', 'l', 'a', 'RANK', '-9223372036854775807'],
    ['LPOS', 'l', 'a', 'RANK', '0'], ['LPOS', 'l', 'a', 'RANK', 'x'], ['LPOS', 'l', 'a', 'COUNT', '-1'],
    ['LPOS', 'l', 'a', 'COUNT', 'x'], ['LPOS', 'l', 'a', 'MAXLEN', '-1'], ['LPOS', 'l', 'a', 'MAXLEN', 'x'],
    ['LPOS', 'l', 'a', 'RANK'], ['LPOS', 'l', 'a', 'BOGUS', '1'], ['LPOS', 'l', 'a', 'COUNT'], ['LPOS', 'nokey', 'a'],
    ['LPOS', 'nokey', 'a', 'COUNT', '1'], ['LPOS', 'nokey', 'a', 'RANK', '0'], ['LPOS', 'l', 'a', 'RANK', '1', 'RANK', '3'],
  ] },
  { name: 'LMOVE and RPOPLPUSH', steps: [
    ['RPUSH', 'src', 'a', 'b', 'c'], ['LMOVE', 'src', 'dst', 'LEFT', 'RIGHT'], ['LMOVE', 'src', 'dst', 'RIGHT', 'LEFT'],
    ['LRANGE', 'src', '0', '-1'], ['LRANGE', 'dst', '0', '-1'], ['RPOPLPUSH', 'src', 'dst'], ['LLEN', 'src'],
    ['LRANGE', 'dst', '0', '-1'], ['LMOVE', 'src', 'dst', 'LEFT', 'LEFT'], ['RPOPLPUSH', 'src', 'dst'],
    ['LMOVE', 'dst', 'dst', 'LEFT', 'RIGHT'], ['LRANGE', 'dst', '0', '-1'], ['RPOPLPUSH', 'dst', 'dst'],
    ['LRANGE', 'dst', '0', '-1'], ['LMOVE', 'dst', 'dst', 'left', 'left'], ['LRANGE', 'dst', '0', '-1'],
    ['LMOVE', 'dst', 'x', 'UP', 'LEFT'], ['LMOVE', 'dst', 'x', 'LEFT', 'DOWN'], ['LMOVE', 'nokey', 'x', 'UP', 'LEFT'],
    ['RPUSH', 'one', 'z'], ['LMOVE', 'one', 'one', 'RIGHT', 'LEFT'], ['LRANGE', 'one', '0', '-1'],
    ['RPOPLPUSH', 'one', 'other'], ['LLEN', 'one'], ['LRANGE', 'other', '0', '-1'],
  ] },
  { name: 'LMPOP', steps: [
    ['LMPOP', '2', 'a', 'b', 'LEFT'], ['RPUSH', 'b', '1', '2', '3', '4'], ['LMPOP', '2', 'a', 'b', 'LEFT'],
    ['LMPOP', '2', 'a', 'b', 'RIGHT', 'COUNT', '2'], ['LMPOP', '1', 'b', 'left', 'count', '10'], ['LLEN', 'b'],
    ['LMPOP', '0', 'a', 'LEFT'], ['LMPOP', '-1', 'a', 'LEFT'], ['LMPOP', 'x', 'a', 'LEFT'], ['LMPOP', '3', 'a', 'LEFT'],
    ['LMPOP', '1', 'a', 'MIDDLE'], ['LMPOP', '1', 'a', 'LEFT', 'COUNT', '0'], ['LMPOP', '1', 'a', 'LEFT', 'COUNT', '-1'],
    ['LMPOP', '1', 'a', 'LEFT', 'COUNT', 'x'], ['LMPOP', '1', 'a', 'LEFT', 'COUNT'], ['LMPOP', '1', 'a', 'LEFT', 'BOGUS'],
    ['LMPOP', '1', 'a', 'LEFT', 'COUNT', '1', 'COUNT', '2'], ['LMPOP', '2', 'a', 'LEFT'], ['LMPOP', '1', 'a', 'b', 'LEFT'],
    ['RPUSH', 'c', 'x'], ['LMPOP', '3', 'a', 'nokey', 'c', 'RIGHT', 'COUNT', '5'], ['LLEN', 'c'],
  ] },
  { name: 'big elements and many elements', steps: [
    ['RPUSH', 'l', 'x'.repeat(5000), 'y'.repeat(5000), '12345', '-9223372036854775808', 'z'.repeat(70000)],
    ['LLEN', 'l'], ['LINDEX', 'l', '2'], ['LINDEX', 'l', '3'], ['LPOP', 'l', '2'], ['RPOP', 'l'], ['LRANGE', 'l', '0', '-1'],
    ['RPUSH', 'big', ...Array.from({ length: 1000 }, (_, i) => String(i))], ['LLEN', 'big'], ['LINDEX', 'big', '500'],
    ['LRANGE', 'big', '995', '-1'], ['LTRIM', 'big', '100', '-100'], ['LLEN', 'big'], ['LRANGE', 'big', '0', '3'],
    ['LREM', 'big', '0', '500'], ['LPOS', 'big', '501'], ['LINSERT', 'big', 'BEFORE', '501', 'new'], ['LRANGE', 'big', '398', '402'],
    ['LSET', 'big', '400', 'set'], ['LRANGE', 'big', '398', '402'],
  ] },
  { name: 'binary elements', steps: [
    ['RPUSH', 'l', Buffer.from([0, 1, 2]), Buffer.from('\r\n'), ''], ['LRANGE', 'l', '0', '-1'],
    ['LPOS', 'l', Buffer.from([0, 1, 2])], ['LREM', 'l', '0', ''], ['LRANGE', 'l', '0', '-1'],
  ] },
  { name: 'ring buffer wrap-around: mixed pushes, pops and middle inserts', steps: [
    ['RPUSH', 'l', '1', '2', '3', '4', '5', '6', '7'], ['LPOP', 'l', '5'], ['RPUSH', 'l', '8', '9', '10', '11'],
    ['LPUSH', 'l', '0', '-1'], ['LINSERT', 'l', 'AFTER', '9', '9.5'], ['LINSERT', 'l', 'BEFORE', '7', '6.5'],
    ['LRANGE', 'l', '0', '-1'], ['LREM', 'l', '0', '9'], ['LRANGE', 'l', '0', '-1'], ['LINDEX', 'l', '-2'],
    ['RPUSH', 'l', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'], ['LTRIM', 'l', '3', '-3'], ['LRANGE', 'l', '0', '-1'],
  ] },
  { name: 'big lists (many chunks, packed interior): middle access and edits, both ends', steps: bigList() },
  { name: 'MULTI and WATCH with lists', steps: [
    ['RPUSH', 'l', 'a'], ['WATCH', 'l'], ['LREM', 'l', '0', 'zz'], ['LINSERT', 'l', 'BEFORE', 'zz', 'x'], ['MULTI'],
    ['LLEN', 'l'], ['EXEC'], ['WATCH', 'l'], ['LPOP', 'l', '0'], ['MULTI'], ['LLEN', 'l'], ['EXEC'],
    ['WATCH', 'l'], ['LTRIM', 'l', '0', '-1'], ['MULTI'], ['LLEN', 'l'], ['EXEC'],
    ['MULTI'], ['RPUSH', 'l', 'b'], ['LPOP', 'l', 'x'], ['LRANGE', 'l', '0', '-1'], ['EXEC'],
  ] },
];
/**
 * A list of a few thousand elements of mixed sizes (integers, short and 300-byte strings, one
 * element over 8 KB), then reads and edits in its middle, and pops across chunk boundaries.
 */
function bigList(): Step[] {
  const el = (i: number) => (i % 5 === 0 ? String(i) : i % 7 === 0 ? `long-${i}-${'x'.repeat(300)}` : `e${i}`);
  const steps: Step[] = [];
  for (let i = 0; i < 3000; i += 100) {
    const batch: string[] = [];
    for (let j = i; j < i + 100; j++) batch.push(el(j));
    steps.push(['RPUSH', 'bl', ...batch], ['LPUSH', 'bl', ...batch.slice(0, 20)]);
  }
  steps.push(
    ['LLEN', 'bl'], ['LINDEX', 'bl', '1500'], ['LINDEX', 'bl', '-1500'], ['LRANGE', 'bl', '1000', '1300'],
    ['LRANGE', 'bl', '-700', '-400'], ['LPOS', 'bl', 'e1234'], ['LPOS', 'bl', 'e21', 'RANK', '-1'],
    ['LPOS', 'bl', '35', 'COUNT', '0'], ['LPOS', 'bl', 'e1001', 'MAXLEN', '500'],
    ['LSET', 'bl', '1500', 'changed'], ['LSET', 'bl', '1501', 'y'.repeat(9000)], ['LINDEX', 'bl', '1501'],
    ['LINSERT', 'bl', 'BEFORE', 'e1234', 'ins1'], ['LINSERT', 'bl', 'AFTER', 'y'.repeat(9000), 'ins2'],
    ['LRANGE', 'bl', '1490', '1520'], ['LREM', 'bl', '0', 'e13'], ['LREM', 'bl', '-2', 'e1'],
    ['LREM', 'bl', '3', '10'], ['LREM', 'bl', '0', 'y'.repeat(9000)], ['LLEN', 'bl'], ['LRANGE', 'bl', '0', '-1'],
    ['LPOP', 'bl', '700'], ['RPOP', 'bl', '700'], ['LRANGE', 'bl', '0', '-1'],
    ['LTRIM', 'bl', '200', '-200'], ['LRANGE', 'bl', '0', '-1'], ['LMOVE', 'bl', 'bl2', 'LEFT', 'RIGHT'],
    ['LRANGE', 'bl2', '0', '-1'], ['SORT', 'bl', 'LIMIT', '0', '20', 'ALPHA'], ['LLEN', 'bl'],
  );
  return steps;
}

export default scripts;
