import type { Script } from '../harness.js';

const scripts: Script[] = [
  { name: 'SETBIT and GETBIT', steps: [
    ['SETBIT', 'b', '7', '1'], ['SETBIT', 'b', '7', '0'], ['SETBIT', 'b', '100', '1'], ['GET', 'b'], ['STRLEN', 'b'],
    ['GETBIT', 'b', '100'], ['GETBIT', 'b', '99'], ['GETBIT', 'b', '100000'], ['GETBIT', 'none', '1'],
    ['SETBIT', 'b', '4294967296', '1'], ['SETBIT', 'b', '-1', '1'], ['SETBIT', 'b', '1', '2'], ['SETBIT', 'b', 'x', '1'],
    ['SETBIT', 'b', '1', 'x'], ['GETBIT', 'b', '-1'], ['SET', 's', 'abc'], ['SETBIT', 's', '1', '0'], ['GET', 's'],
    ['LPUSH', 'l', 'x'], ['SETBIT', 'l', '1', '1'], ['GETBIT', 'l', '1'],
  ] },
  { name: 'BITCOUNT', steps: [
    ['SET', 'b', 'foobar'], ['BITCOUNT', 'b'], ['BITCOUNT', 'b', '0', '0'], ['BITCOUNT', 'b', '1', '1'], ['BITCOUNT', 'b', '-2', '-1'],
    ['BITCOUNT', 'b', '5', '30', 'BIT'], ['BITCOUNT', 'b', '0', '-1', 'BIT'], ['BITCOUNT', 'b', '-5', '-3', 'BIT'], ['BITCOUNT', 'b', '3', '1'],
    ['BITCOUNT', 'b', '0'], ['BITCOUNT', 'b', '0', '-1', 'foo'], ['BITCOUNT', 'b', 'a', 'b'], ['BITCOUNT', 'none'], ['BITCOUNT', 'b', '0', '1', 'BYTE', 'x'],
    ['BITCOUNT', 'b', '100', '200'], ['BITCOUNT', 'b', '-100', '-50'],
  ] },
  { name: 'BITPOS', steps: [
    ['SET', 'b', Buffer.from([0xff, 0xf0, 0x00])], ['BITPOS', 'b', '0'], ['BITPOS', 'b', '1'], ['BITPOS', 'b', '1', '1'], ['BITPOS', 'b', '0', '0', '0'],
    ['BITPOS', 'b', '1', '2'], ['BITPOS', 'b', '0', '2', '-1'], ['BITPOS', 'b', '1', '7', '15', 'BIT'], ['BITPOS', 'b', '0', '0', '11', 'BIT'],
    ['SET', 'ones', Buffer.from([0xff, 0xff])], ['BITPOS', 'ones', '0'], ['BITPOS', 'ones', '0', '0', '-1'], ['BITPOS', 'ones', '0', '1'],
    ['BITPOS', 'none', '0'], ['BITPOS', 'none', '1'], ['BITPOS', 'b', '2'], ['BITPOS', 'b', 'x'], ['BITPOS', 'b', '1', 'x'],
    ['BITPOS', 'b', '1', '0', '1', 'FOO'], ['BITPOS', 'b', '1', '5', '2'], ['SET', 'z', ''], ['BITPOS', 'z', '0'], ['BITPOS', 'z', '1'],
  ] },
  { name: 'BITOP', steps: [
    ['SET', 'a', 'foobar'], ['SET', 'b', 'abc'], ['BITOP', 'AND', 'd', 'a', 'b'], ['GET', 'd'], ['BITOP', 'OR', 'd', 'a', 'b'], ['GET', 'd'],
    ['BITOP', 'XOR', 'd', 'a', 'b', 'none'], ['GET', 'd'], ['BITOP', 'NOT', 'd', 'b'], ['GET', 'd'], ['BITOP', 'NOT', 'd', 'a', 'b'],
    ['BITOP', 'FOO', 'd', 'a'], ['BITOP', 'AND', 'd', 'none', 'none2'], ['EXISTS', 'd'], ['LPUSH', 'l', 'x'], ['BITOP', 'AND', 'd', 'a', 'l'],
    ['BITOP', 'and', 'l', 'a'], ['TYPE', 'l'],
  ] },
  { name: 'BITFIELD', steps: [
    ['SETBIT', 'b', '7', '1'], ['BITFIELD', 'b', 'GET', 'u64', '0'], ['BITFIELD', 'b', 'GET', 'i64', '0'], ['BITFIELD', 'b', 'GET', 'x8', '0'],
    ['BITFIELD', 'b', 'OVERFLOW', 'foo'], ['BITFIELD', 'b', 'GET', 'u8', '#1', 'SET', 'u8', '#1', '300', 'INCRBY', 'i8', '0', '200', 'OVERFLOW', 'SAT', 'INCRBY', 'i8', '0', '200', 'OVERFLOW', 'FAIL', 'INCRBY', 'u2', '0', '5'],
    ['BITFIELD_RO', 'b', 'SET', 'u8', '0', '1'], ['BITFIELD', 'b', 'GET', 'u8', '-1'], ['BITFIELD', 'b', 'GET', 'u8', '4294967296'], ['BITFIELD', 'b'],
    ['BITFIELD', 'b', 'INCRBY', 'u8', '0'], ['BITFIELD', 'b', 'SET', 'i8', '0', 'abc'], ['BITFIELD', 'b', 'GET', 'u8'], ['BITFIELD_RO', 'b', 'GET', 'u8', '0', 'GET', 'i4', '3'],
    ['BITFIELD', 'n', 'SET', 'i64', '0', '-9223372036854775808', 'GET', 'i64', '0', 'INCRBY', 'i64', '0', '-1', 'GET', 'u63', '1'],
    ['BITFIELD', 'n', 'OVERFLOW', 'SAT', 'SET', 'u4', '0', '100', 'SET', 'i4', '4', '-100', 'GET', 'u4', '0', 'GET', 'i4', '4'],
    ['BITFIELD', 'n', 'OVERFLOW', 'FAIL', 'SET', 'u4', '100', '16', 'INCRBY', 'i5', '100', '-17'], ['GET', 'n'], ['STRLEN', 'n'],
    ['BITFIELD', 'f', 'OVERFLOW', 'FAIL', 'SET', 'u4', '0', '16'], ['EXISTS', 'f'], ['BITFIELD', 'g', 'GET', 'u4', '0'], ['EXISTS', 'g'],
    ['BITFIELD', 'w', 'INCRBY', 'u8', '#0', '255', 'INCRBY', 'u8', '#0', '2', 'INCRBY', 'i8', '#1', '-129', 'INCRBY', 'i8', '#1', '128'],
    ['BITFIELD', 'w', 'SET', 'u8', '#x', '1'], ['BITFIELD', 'w', 'SET', 'i65', '0', '1'], ['BITFIELD', 'w', 'SET', 'u0', '0', '1'],
    ['BITFIELD', 'w', 'SET', 'i8', '0', '99999999999999999999'], ['LPUSH', 'l', 'x'], ['BITFIELD', 'l', 'GET', 'u8', '0'],
  ] },
];
export default scripts;
