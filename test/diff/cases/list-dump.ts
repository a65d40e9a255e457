/**
 * Lists held flat (one listpack node) and the edges of that form, for the DUMP corpus
 * (test/rdb/dump-corpus.test.ts DUMPs every key left here on both servers): integer and
 * string encodings of every width, in-place edits, moves between lists, growth past one node
 * and shrinking back. Every reply is compared byte for byte too.
 */
import type { Script, Step } from '../harness.js';

const ints = ['0', '1', '127', '128', '-1', '4095', '-4096', '4096', '32767', '-32768', '32768', '8388607', '-8388608',
  '8388608', '2147483647', '-2147483648', '2147483648', '9223372036854775807', '-9223372036854775808',
  '9223372036854775808', '007', '-0', '+5', '1.5', ' 1'];
const strs = ['', 'a', 'x'.repeat(63), 'x'.repeat(64), 'y'.repeat(4095), 'y'.repeat(4096), 'é\u00ff\u0000'];
const ids = Array.from({ length: 40 }, (_, i) => `job:${1000 + i}`);
const range = (k: string): Step => ['LRANGE', k, '0', '-1'];

const scripts: Script[] = [
  { name: 'RPUSH / LPUSH of integers and strings of every encoding width', steps: [
    ['RPUSH', 'ri', ...ints], ['LPUSH', 'li', ...ints], ['RPUSH', 'rs', ...strs.slice(0, 4), strs[6]], ['LPUSH', 'ls', ...strs.slice(0, 4)],
    ['RPUSH', 'big', strs[4]], ['LPUSH', 'big', strs[5]], range('ri'), range('li'), ['LLEN', 'big'],
  ] },
  { name: 'LRANGE / LINDEX of integers near ±2^53 and of every digit count', steps: [
    ['RPUSH', 'n', '9007199254740991', '-9007199254740991', '9007199254740992', '-9007199254740993', '999999999', '-999999999',
      '1000000000', '-1000000000', '4294967296', '-4294967297', '99999999999999', '-100000000000000', '10', '-10', '9', '-9'],
    range('n'), ['LRANGE', 'n', '2', '5'], ['LRANGE', 'n', '-3', '-1'], ['LINDEX', 'n', '0'], ['LINDEX', 'n', '1'], ['LINDEX', 'n', '3'],
    ['LINDEX', 'n', '-1'], ['LINDEX', 'n', '7'],
  ] },
  { name: 'LSET, LINSERT, LREM, LTRIM in one node', steps: [
    ['RPUSH', 'l', ...ints.slice(0, 12), 'a', 'b', 'a', 'c', 'a'],
    ['LSET', 'l', '0', 'zero'], ['LSET', 'l', '-1', '12345'], ['LSET', 'l', '3', 'x'.repeat(100)],
    ['LINSERT', 'l', 'BEFORE', 'a', '-77'], ['LINSERT', 'l', 'AFTER', 'c', 'after-c'], ['LINSERT', 'l', 'BEFORE', 'zero', 'first'],
    ['LREM', 'l', '1', 'a'], ['LREM', 'l', '-1', 'a'], ['LREM', 'l', '0', 'b'], ['LREM', 'l', '0', 'nothing'],
    range('l'), ['LTRIM', 'l', '2', '-3'], range('l'), ['LTRIM', 'l', '1', '1'], range('l'),
    ['RPUSH', 'm', '1', '2', '3'], ['LSET', 'm', '1', 'y'.repeat(5000)], ['LSET', 'm', '1', '2'], ['LLEN', 'm'],
    // LSET grows the node past 8 KB: 7.0 keeps one node.
    ['RPUSH', 'n', ...Array.from({ length: 70 }, () => 'z'.repeat(100))], ['LSET', 'n', '5', 'w'.repeat(4000)], ['LLEN', 'n'],
  ] },
  { name: 'LPOP / RPOP / LMPOP and LMOVE between flat lists (queues of short ids)', steps: [
    ['RPUSH', 'wait', ...ids], ['LPOP', 'wait'], ['RPOP', 'wait'], ['LPOP', 'wait', '3'], ['RPOP', 'wait', '2'],
    ['LMOVE', 'wait', 'active', 'LEFT', 'RIGHT'], ['LMOVE', 'wait', 'active', 'RIGHT', 'LEFT'], ['LMOVE', 'active', 'done', 'LEFT', 'LEFT'],
    ['RPOPLPUSH', 'wait', 'wait'], ['LMOVE', 'wait', 'wait', 'LEFT', 'RIGHT'], ['LMPOP', '2', 'nokey', 'wait', 'RIGHT', 'COUNT', '2'],
    ['LREM', 'active', '0', 'job:1001'], range('wait'), range('active'), range('done'),
    ['RPUSH', 'one', 'x'], ['LMOVE', 'one', 'two', 'LEFT', 'RIGHT'], ['EXISTS', 'one'], range('two'),
  ] },
  { name: 'growth past one node (tail pushes), then popped back to one', steps: [
    ['RPUSH', 'g', ...Array.from({ length: 200 }, (_, i) => `element-${i}-${'p'.repeat(30)}`)],
    ['LLEN', 'g'], ['RPUSH', 'g2', ...Array.from({ length: 3000 }, (_, i) => String(i))],
    ['RPUSH', 'g3', 'y'.repeat(8100)], ['RPUSH', 'g3', 'b'], ['RPUSH', 'g4', 'y'.repeat(8000)], ['RPUSH', 'g4', 'c'.repeat(170)], ['RPUSH', 'g4', 'd'],
    ['LPOP', 'g', '190'], ['LLEN', 'g'], ['LTRIM', 'g2', '0', '9'], range('g2'),
  ] },
  { name: 'count-limited nodes (list-max-listpack-size 4)', steps: [
    ['CONFIG', 'SET', 'list-max-listpack-size', '4'],
    ['RPUSH', 'c4', 'a', 'b', 'c'], ['RPUSH', 'c4', 'd'], ['RPUSH', 'c5', '1', '2', '3', '4', '5'], ['LPOP', 'c5', '3'],
    ['RPUSH', 'c6', 'q'], ['LINSERT', 'c6', 'BEFORE', 'q', 'p'], range('c4'), range('c5'),
    ['CONFIG', 'SET', 'list-max-listpack-size', '-2'],
  ] },
];

export default scripts;
