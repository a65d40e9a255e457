/**
 * formatDouble17g: Redis 7.0's "%.17g" (glibc printf) for every double a reply carries
 * (scores, RESP3 doubles), exact ties rounded half to even as glibc does. Expected texts are
 * glibc's (python3 -c 'print("%.17g" % v)').
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatDouble17g } from '../../dist/resp/ascii.js';

const CASES: [number, string][] = [
  [-2028361973589665.25, '-2028361973589665.2'], // tie: the 17th digit stays even
  [297086228996623.625, '297086228996623.62'],
  [1511583784718362.25, '1511583784718362.2'],
  [123456789012345.125, '123456789012345.12'],
  [0.1, '0.10000000000000001'],
  [1e-5, '1.0000000000000001e-05'],
  [26215 / 262144, '0.10000228881835938'],
  [1.5, '1.5'],
  // N / 2^k printed from its exact digits (shortExact): bounds of that fast path
  [2 ** -13, '0.0001220703125'],
  [2 ** -14, '6.103515625e-05'],
  [4503599627370495.5, '4503599627370495.5'],
  [-3.75, '-3.75'],
  [1234567.890625, '1234567.890625'],
  [1125899906842623.75, '1125899906842623.8'], // 18 digits: not exact in 17
  [0.5 + 2 ** -30, '0.50000000093132257'],
  [2.5e-300, '2.5e-300'],
  [1e17, '1e+17'],
  [0.00010000000000000001, '0.0001'],
  [9007199254740993, '9007199254740992'],
  [-0, '-0'],
  [Infinity, 'inf'],
  [-Infinity, '-inf'],
  [NaN, 'nan'],
];

describe('formatDouble17g', () => {
  it('prints what glibc prints, ties included', () => {
    for (const [v, want] of CASES) assert.equal(formatDouble17g(v), want, String(v));
  });
});
