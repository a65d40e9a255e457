/**
 * Correctly rounded sin, cos and asin for the geo distance formulas.
 *
 * Redis computes distances with the C library's sin/cos/asin (glibc on Linux), which round to
 * nearest almost always; V8's Math.sin/cos/asin (fdlibm ports) are off by one unit in the last
 * place for a few percent of the arguments, which shows in the full-precision scores that
 * GEOSEARCHSTORE ... STOREDIST stores. These versions evaluate the functions in double-double
 * arithmetic (about 2^-70 relative error) and round once, so they agree with glibc except in
 * its own rare misrounded cases.
 *
 * Method: Cody-Waite reduction by pi/2 with a three-part constant, a table of sin/cos at
 * multiples of 1/256 (double-double, computed exactly with BigInt at load), short Taylor
 * polynomials for the remainder; asin is one Newton step on sin from Math.asin.
 */

const SPLIT = 134217729; // 2^27 + 1

// ---------------------------------------------------------------- constants, computed exactly

const PREC = 160n; // fixed-point bits of the BigInt computations
const ONE = 1n << PREC;
const PI_DIGITS = '3141592653589793238462643383279502884197169399375105820974944592307816406286208998628034825342117067982148086513282306647093844609550582231725359408128481';

/** pi * 2^PREC, from its decimal digits. */
const PI_FIXED = (BigInt(PI_DIGITS) << PREC) / 10n ** BigInt(PI_DIGITS.length - 1);

/** A fixed-point value as a double-double [hi, lo]. */
function toDD(v: bigint): [number, number] {
  const scale = Math.pow(2, -Number(PREC));
  const hi = Number(v) * scale; // Number(bigint) rounds to nearest
  const rest = v - BigInt(hi / scale);
  return [hi, Number(rest) * scale];
}

/** The leading `bits` significant bits of a positive fixed-point value, as an exact double. */
function leadingBits(v: bigint, bits: number): [number, bigint] {
  const len = v.toString(2).length;
  const drop = BigInt(Math.max(0, len - bits));
  const head = (v >> drop) << drop;
  return [Number(head) * Math.pow(2, -Number(PREC)), v - head];
}

// pi/2 in three parts: the first two have 33 significant bits so k * part is exact for |k| < 2^20.
const HALF_PI_FIXED = PI_FIXED / 2n;
const [PIO2_1, rest1] = leadingBits(HALF_PI_FIXED, 33);
const [PIO2_2, rest2] = leadingBits(rest1, 33);
const PIO2_3 = Number(rest2) * Math.pow(2, -Number(PREC));
const TWO_OVER_PI = 0.6366197723675814;

/** sin(x) and cos(x) of a fixed-point x in [0, 1] by Taylor series in BigInt. */
function sinCosFixed(x: bigint): [bigint, bigint] {
  let s = 0n;
  let c = 0n;
  let term = ONE; // x^n / n!
  for (let n = 0n; term !== 0n; n++) {
    const k = n % 4n;
    if (k === 0n) c += term;
    else if (k === 1n) s += term;
    else if (k === 2n) c -= term;
    else s -= term;
    term = (term * x) / ONE / (n + 1n);
  }
  return [s, c];
}

const TABLE_STEP = 256;
const TABLE_SIZE = 204; // covers [0, pi/4] plus rounding margin
const SIN_HI = new Float64Array(TABLE_SIZE);
const SIN_LO = new Float64Array(TABLE_SIZE);
const COS_HI = new Float64Array(TABLE_SIZE);
const COS_LO = new Float64Array(TABLE_SIZE);
for (let j = 0; j < TABLE_SIZE; j++) {
  const [s, c] = sinCosFixed((BigInt(j) << PREC) / BigInt(TABLE_STEP));
  [SIN_HI[j], SIN_LO[j]] = toDD(s);
  [COS_HI[j], COS_LO[j]] = toDD(c);
}

// ---------------------------------------------------------------- kernels on [-pi/4, pi/4]

/** Low part of the last double-double result (the high part is returned). */
const LO = new Float64Array(1);

/**
 * sin (wantCos false) or cos of the double-double r = rh + rl, |r| <= pi/4 (a little more is
 * fine). Returns the high part, the low part in LO[0]. The error-free sums and products are
 * written out inline (this is the hot path of every distance).
 */
function kernel(rh: number, rl: number, wantCos: boolean): number {
  let sign = 1;
  if (rh < 0) {
    rh = -rh;
    rl = -rl;
    if (!wantCos) sign = -1;
  }
  const j = Math.round(rh * TABLE_STEP);
  const th = rh - j / TABLE_STEP; // exact (Sterbenz)
  // th * th = P + e exactly
  let t = SPLIT * th;
  const thh = t - (t - th), thl = th - thh;
  const P = th * th;
  const e = ((thh * thh - P) + 2 * thh * thl) + thl * thl;
  // sin t = th + rl + sp ; cos t = 1 + qh + ql
  const sp = th * P * (-1 / 6 + P * (1 / 120 - P / 5040));
  const qh = -P / 2;
  const ql = -e / 2 - th * rl + P * P * (1 / 24 - P / 720);
  const sh = SIN_HI[j], sl = SIN_LO[j], ch = COS_HI[j], cl = COS_LO[j];
  // sin(a + t) = sin a cos t + cos a sin t ; cos(a + t) = cos a cos t - sin a sin t
  const A = wantCos ? ch : sh; // main term
  const B = wantCos ? -sh : ch; // multiplies sin t
  const Al = wantCos ? cl : sl;
  const Bl = wantCos ? -sl : cl;
  // p1 + e1 = B * th
  const p1 = B * th;
  t = SPLIT * B;
  const bh = t - (t - B), bl = B - bh;
  const e1 = ((bh * thh - p1) + bh * thl + bl * thh) + bl * thl;
  // p2 + e2 = A * qh
  const p2 = A * qh;
  t = SPLIT * A;
  const ah = t - (t - A), al = A - ah;
  t = SPLIT * qh;
  const qhh = t - (t - qh), qhl = qh - qhh;
  const e2 = ((ah * qhh - p2) + ah * qhl + al * qhh) + al * qhl;
  // s1 + f1 = A + p1 ; s2 + f2 = s1 + p2
  const s1 = A + p1;
  let bb = s1 - A;
  const f1 = (A - (s1 - bb)) + (p1 - bb);
  const s2 = s1 + p2;
  bb = s2 - s1;
  const f2 = (s1 - (s2 - bb)) + (p2 - bb);
  const lo = f2 + f1 + e1 + e2 + Al + A * ql + Al * qh + B * (rl + sp) + Bl * th;
  const hi = s2 + lo;
  LO[0] = sign * (lo - (hi - s2));
  return sign * hi;
}

/** sin (cos when `cos`) of any double: high part returned, low part in LO[0]. */
function sinCosDD(x: number, cos: boolean): number {
  if (!(Math.abs(x) < 1e6)) {
    // Outside the reduction's exact range (or not finite): the plain result.
    LO[0] = 0;
    return cos ? Math.cos(x) : Math.sin(x);
  }
  const k = Math.round(x * TWO_OVER_PI);
  let rh = x, rl = 0;
  if (k !== 0) {
    const t = x - k * PIO2_1; // exact: k * PIO2_1 is exact and close to x
    const b = -k * PIO2_2; // exact
    const s = t + b;
    const bb = s - t;
    const err = (t - (s - bb)) + (b - bb);
    rl = err - k * PIO2_3;
    rh = s + rl;
    rl -= rh - s;
  }
  const n = k & 3; // k is small: & gives the quadrant, negatives included
  // sin: n=0 sin r, 1 cos r, 2 -sin r, 3 -cos r ; cos: n=0 cos r, 1 -sin r, 2 -cos r, 3 sin r
  const useCos = cos ? (n & 1) === 0 : (n & 1) === 1;
  const neg = cos ? n === 1 || n === 2 : n >= 2;
  const hi = kernel(rh, rl, useCos);
  if (neg) {
    LO[0] = -LO[0];
    return -hi;
  }
  return hi;
}

/** sin(x) rounded to nearest. */
export function crSin(x: number): number {
  if (x === 0) return x; // keeps -0
  const hi = sinCosDD(x, false);
  return hi + LO[0];
}

/** cos(x) rounded to nearest. */
export function crCos(x: number): number {
  const hi = sinCosDD(x, true);
  return hi + LO[0];
}

/** asin(x) rounded to nearest: one Newton step on sin from Math.asin's result. */
export function crAsin(x: number): number {
  const y0 = Math.asin(x);
  if (y0 !== y0 || x === 0) return y0;
  if (Math.abs(x) < 1e-8) return x; // asin x = x + x^3/6: below half an ulp of x
  const sh = sinCosDD(y0, false);
  const c = Math.cos(y0);
  // (sin y0 - x) is exact in its leading part (Sterbenz); LO carries the rest.
  const delta = -((sh - x) + LO[0]) / c;
  return y0 + delta;
}
