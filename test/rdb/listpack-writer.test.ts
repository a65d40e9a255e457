/**
 * LpWriter.text (the string-only fast path that DUMP and RDB files use for hash fields and
 * values, set and zset members) and LpWriter.strRange (HSET's arguments, from the request's
 * bytes) write the same bytes as LpWriter.str, whose integer test
 * (lpStringToInt64's rules) is checked against redis-server by the DUMP corpus: edge cases of
 * the integer encodings, then random digit strings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LpWriter } from '../../dist/rdb/listpack.js';
import { rng } from '../helpers/rng.js';

test('LpWriter.text and LpWriter.strRange write what LpWriter.str writes', () => {
  const cases = ['', '-', '0', '-0', '00', '01', '1', '-1', '9', '127', '128', '-4096', '4095', '4096', '32767', '-32768',
    '8388607', '-8388609', '2147483647', '-2147483648', '2147483648', '999999999999999', '-999999999999999',
    '1000000000000000', '9007199254740991', '9007199254740993', '-9223372036854775808', '9223372036854775807',
    '9223372036854775808', '12345678901234567890', '123456789012345678901', '1a', 'a1', ' 1', '+1', '1.0', '1e3',
    'x'.repeat(63), 'x'.repeat(64), 'y'.repeat(4095), 'y'.repeat(4096), '\u00ff\u0000'];
  const r = rng(19);
  for (let i = 0; i < 20000; i++) {
    let s = r() < 0.2 ? '-' : '';
    const len = 1 + Math.floor(r() * 22);
    for (let k = 0; k < len; k++) s += String.fromCharCode(48 + Math.floor(r() * (r() < 0.05 ? 12 : 10)));
    cases.push(s);
  }
  const a = new LpWriter();
  const b = new LpWriter();
  const c2 = new LpWriter();
  for (const c of cases) {
    a.start();
    a.str(c);
    const want = Buffer.from(a.finish());
    b.start();
    b.text(c);
    assert.deepEqual(b.finish(), want, JSON.stringify(c.slice(0, 40)));
    // strRange (HSET's request bytes): the same element from inside a bigger buffer.
    const req = Buffer.from(`$${c.length}\r\n${c}\r\n`, 'latin1');
    const at = req.indexOf(10) + 1;
    c2.start();
    c2.strRange(req, at, at + c.length);
    assert.deepEqual(c2.finish(), want, JSON.stringify(c.slice(0, 40)));
  }
});

test('LpWriter.int of a number past int32 writes what the BigInt path writes', () => {
  // The number path writes the 64-bit integer from its two 32-bit halves (no BigInt).
  const xs = [2147483648, -2147483649, 4294967295, 4294967296, -4294967296, -4294967297, 1795871820903, -1795871820903,
    Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 62, -(2 ** 63)];
  const r = rng(23);
  for (let i = 0; i < 2000; i++) {
    const v = Math.floor(r() * 2 ** (32 + Math.floor(r() * 21)));
    xs.push(v + 2147483648, -v - 2147483649);
  }
  const a = new LpWriter();
  const b = new LpWriter();
  for (const v of xs) {
    a.start();
    a.int(v);
    b.start();
    b.int(BigInt(v));
    assert.deepEqual(a.finish(), b.finish(), String(v));
  }
});
