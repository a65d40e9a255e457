/**
 * Unit tests of the geo arithmetic: correct rounding of crmath's sin/cos/asin against an
 * independent BigInt evaluation, known encodings/decodings, and Redis's number printing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crAsin, crCos, crSin } from '../../dist/engine/ds/crmath.js';
import { decodeScore, geoScore, standardGeohash } from '../../dist/engine/ds/geohash.js';
import { formatDistance, formatFixed } from '../../dist/engine/commands/geo.js';
import { rng } from '../helpers/rng.js';

// ---------------------------------------------------------------- BigInt reference

const P = 220n; // fixed-point bits
const ONE = 1n << P;
const PI = (BigInt('31415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679') << P) / 10n ** 100n;

/** A double as an exact fixed-point BigInt (x * 2^P, exact for the magnitudes used here). */
function fixed(x: number): bigint {
  const [m, e] = frexp(x);
  const shift = BigInt(e) + P;
  return shift >= 0n ? m << shift : m >> -shift;
}

/** x = m * 2^e with m an integer (BigInt). */
function frexp(x: number): [bigint, number] {
  if (x === 0) return [0n, 0];
  let e = 0;
  let m = x;
  while (!Number.isInteger(m)) { m *= 2; e--; }
  return [BigInt(m), e];
}

/** sin and cos of a fixed-point value by reduction modulo pi/2 and Taylor series. */
function sinCosRef(X: bigint): [bigint, bigint] {
  const half = PI / 2n;
  let k = X / half;
  let r = X - k * half;
  if (r > half / 2n) { r -= half; k += 1n; }
  if (r < -half / 2n) { r += half; k -= 1n; }
  let s = 0n, c = 0n, term = ONE;
  for (let n = 0n; term !== 0n; n++) {
    const q = n % 4n;
    if (q === 0n) c += term; else if (q === 1n) s += term; else if (q === 2n) c -= term; else s -= term;
    term = (term * r) / ONE / (n + 1n);
  }
  const quadrant = ((k % 4n) + 4n) % 4n;
  return quadrant === 0n ? [s, c] : quadrant === 1n ? [c, -s] : quadrant === 2n ? [-s, -c] : [-c, s];
}

/** Nearest double to the fixed-point value (Number(bigint) rounds to nearest). */
function nearest(V: bigint): number {
  return Number(V) * Math.pow(2, -Number(P));
}

test('crSin and crCos are correctly rounded', () => {
  const r = rng(12345);
  for (let i = 0; i < 3000; i++) {
    const k = i % 4;
    const x = k === 0 ? (r() * 2 - 1) * Math.PI : k === 1 ? (r() * 2 - 1) * 1.5 : k === 2 ? (r() * 2 - 1) * 400 : r() * 1e-3;
    const [s, c] = sinCosRef(fixed(x));
    assert.equal(crSin(x), nearest(s), `sin(${x})`);
    assert.equal(crCos(x), nearest(c), `cos(${x})`);
  }
});

test('crAsin is correctly rounded', () => {
  const r = rng(777);
  const ulpOf = (y: number): number => Math.pow(2, Math.floor(Math.log2(y)) - 52);
  for (let i = 0; i < 2000; i++) {
    const x = i % 3 === 0 ? 1 - r() * 1e-6 : r();
    const y = crAsin(x);
    // asin(x) is within half an ulp of y: sin(y - ulp/2) < x < sin(y + ulp/2).
    const h = ulpOf(y) / 2;
    const X = fixed(x);
    const lo = sinCosRef(fixed(y) - fixed(h))[0];
    const hi = sinCosRef(fixed(y) + fixed(h))[0];
    assert.ok(lo <= X && X <= hi, `asin(${x}) = ${y}`);
  }
  assert.equal(crAsin(0), 0);
  assert.equal(crAsin(1), Math.PI / 2);
  assert.ok(Number.isNaN(crAsin(1.0000000000000002)));
});

test('encoding and decoding: the documented Palermo and Catania values', () => {
  const xy = new Float64Array(2);
  assert.equal(geoScore(13.361389, 38.115556), 3479099956230698);
  assert.equal(geoScore(15.087269, 37.502669), 3479447370796909);
  decodeScore(3479099956230698, xy);
  assert.equal(formatFixed(xy[0], 17), '13.36138933897018433');
  assert.equal(formatFixed(xy[1], 17), '38.11555639549629859');
  assert.equal(standardGeohash(3479099956230698), 'sqc8b49rny0');
  assert.equal(standardGeohash(3479447370796909), 'sqdtr74hyu0');
  // A latitude or longitude at the limit encodes an index of 2^26 (bits 52 and 53).
  assert.equal(geoScore(180, 85.05112878), 2 ** 53 + 2 ** 52);
  decodeScore(2 ** 53 + 2 ** 52, xy);
  assert.deepEqual([xy[0], xy[1]], [180, 85.05112878]);
});

test('number printing', () => {
  assert.equal(formatFixed(200, 6), '200.000000');
  assert.equal(formatFixed(-0, 6), '-0.000000');
  assert.equal(formatFixed(Infinity, 6), 'inf');
  assert.equal(formatFixed(0.0078125, 6), '0.007812'); // exact tie: to even
  assert.equal(formatFixed(0.0234375, 6), '0.023438');
  assert.equal(formatFixed(1e22, 2), '10000000000000000000000.00');
  assert.equal(formatDistance(0), '0.0000');
  assert.equal(formatDistance(166274.15156960033), '166274.1516');
  assert.equal(formatDistance(5856325.4847499998), '5856325.4848'); // scaled, then rounded
  assert.equal(formatDistance(0.00003), '0.0000');
  assert.equal(formatDistance(0.00015), '0.0001'); // 1.4999999999999998 once scaled
  assert.equal(formatDistance(0.00025), '0.0002'); // scaled to exactly 2.5: half to even
  assert.equal(formatDistance(0.00035), '0.0004');
  assert.equal(formatDistance(2.00005), '2.0000');
  assert.equal(formatDistance(1.5), '1.5000');
});
