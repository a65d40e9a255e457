/**
 * x87 80-bit "long double" arithmetic for HINCRBYFLOAT, exact to the bit: Redis parses the
 * operands with strtold, adds them in long double and prints "%.17Lf" with trailing zeros
 * removed; doubles would print 10.5 + 0.1 as 10.59999999999999964 instead of 10.6.
 *
 * TODO: replace with src/engine/ds/long-double.ts (written on the `strings` branch for
 * INCRBYFLOAT) once both branches are merged, and delete this file.
 *
 * A finite value is m * 2^e with a 64-bit mantissa m (2^63 <= m < 2^64 when normal), as the
 * x87 extended format; every operation rounds once, to nearest with ties to even.
 */

export interface LongDouble {
  readonly neg: boolean;
  /** Infinity when true (m and e unused). */
  readonly inf: boolean;
  /** Mantissa; 0n for zero. */
  readonly m: bigint;
  readonly e: number;
}

/** Smallest quantum exponent (denormals); largest exponent of a 64-bit mantissa. */
const E_MIN = -16445;
const E_MAX = 16320;
const TWO63 = 1n << 63n;
const TWO64 = 1n << 64n;
/** MAX_LONG_DOUBLE_CHARS: strings this long are not parsed. */
const MAX_CHARS = 5 * 1024;

function bitlen(x: bigint): number {
  return x === 0n ? 0 : x.toString(2).length;
}

/**
 * Round num/den * 2^exp2 (num >= 0, den > 0) to long double. Returns null on overflow.
 */
function round(neg: boolean, num: bigint, den: bigint, exp2: number): LongDouble | null {
  if (num === 0n) return { neg, inf: false, m: 0n, e: 0 };
  let e = bitlen(num) - bitlen(den) + exp2 - 64;
  let q = 0n;
  let r = 0n;
  let d = den;
  for (let iter = 0; iter < 4; iter++) {
    const shift = exp2 - e;
    const n = shift >= 0 ? num << BigInt(shift) : num;
    d = shift >= 0 ? den : den << BigInt(-shift);
    q = n / d;
    r = n % d;
    if (q >= TWO64) e++;
    else if (q < TWO63 && e > E_MIN) e--;
    else break;
  }
  if (e < E_MIN) {
    e = E_MIN;
    const shift = exp2 - e;
    const n = shift >= 0 ? num << BigInt(shift) : num;
    d = shift >= 0 ? den : den << BigInt(-shift);
    q = n / d;
    r = n % d;
  }
  const twice = r * 2n;
  if (twice > d || (twice === d && (q & 1n) === 1n)) q++;
  if (q === TWO64) {
    q = TWO63;
    e++;
  }
  if (e > E_MAX) return null;
  return { neg, inf: false, m: q, e };
}

const INF_RE = /^([+-]?)(inf|infinity)$/i;
const DEC_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
const HEX_RE = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?$/;

/** Exponent digits, saturated (strtold accepts any number of them). */
function expValue(s: string | undefined): number {
  if (s === undefined) return 0;
  const v = Number(s);
  return Math.max(-1e7, Math.min(1e7, v));
}

/**
 * string2ld: the whole argument must be a strtold number; leading space, NaN, overflow and
 * underflow to zero are rejected. Returns null when invalid.
 */
export function ldParse(b: Uint8Array): LongDouble | null {
  if (b.length === 0 || b.length >= MAX_CHARS) return null;
  const s = Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');
  let m = INF_RE.exec(s);
  if (m !== null) return { neg: m[1] === '-', inf: true, m: 0n, e: 0 };
  m = HEX_RE.exec(s);
  if (m !== null) {
    const ip = m[2];
    const fp = m[3] ?? '';
    if (ip === '' && fp === '') return null;
    const mant = BigInt('0x' + (ip + fp || '0'));
    const exp2 = expValue(m[4]) - 4 * fp.length;
    const r = round(m[1] === '-', mant, 1n, exp2);
    if (r === null) return null;
    if (r.m === 0n && mant !== 0n) return null;
    return r;
  }
  m = DEC_RE.exec(s);
  if (m === null) return null;
  const ip = m[2];
  const fp = m[3] ?? '';
  if (ip === '' && fp === '') return null;
  const digits = BigInt((ip + fp) || '0');
  const neg = m[1] === '-';
  if (digits === 0n) return { neg, inf: false, m: 0n, e: 0 };
  const exp10 = expValue(m[4]) - fp.length;
  // Decimal magnitude: far outside 1e-4951..1.2e4932 it overflows or underflows to zero.
  const mag = digits.toString().length + exp10;
  if (mag > 4940 || mag < -4960) return null;
  const r = exp10 >= 0
    ? round(neg, digits * 10n ** BigInt(exp10), 1n, 0)
    : round(neg, digits, 10n ** BigInt(-exp10), 0);
  if (r === null || r.m === 0n) return null;
  return r;
}

/** (long double) of a 64-bit integer: exact. */
export function ldFromInt(v: bigint): LongDouble {
  const neg = v < 0n;
  return round(neg, neg ? -v : v, 1n, 0)!;
}

/** a + b, rounded once. Infinity on overflow; NaN is reported as null (inf + -inf). */
export function ldAdd(a: LongDouble, b: LongDouble): LongDouble | null {
  if (a.inf || b.inf) {
    if (a.inf && b.inf && a.neg !== b.neg) return null;
    return a.inf ? a : b;
  }
  if (a.m === 0n) return b.m === 0n ? { neg: a.neg && b.neg, inf: false, m: 0n, e: 0 } : b;
  if (b.m === 0n) return a;
  const e0 = Math.min(a.e, b.e);
  const A = (a.neg ? -a.m : a.m) << BigInt(a.e - e0);
  const B = (b.neg ? -b.m : b.m) << BigInt(b.e - e0);
  const s = A + B;
  if (s === 0n) return { neg: false, inf: false, m: 0n, e: 0 };
  const r = round(s < 0n, s < 0n ? -s : s, 1n, e0);
  return r ?? { neg: s < 0n, inf: true, m: 0n, e: 0 };
}

/** ld2string(LD_STR_HUMAN): "%.17Lf" without trailing zeros; "inf"/"-inf". */
export function ldFormatHuman(x: LongDouble): string {
  if (x.inf) return x.neg ? '-inf' : 'inf';
  const SCALE = 10n ** 17n;
  let q: bigint;
  if (x.e >= 0) {
    q = (x.m << BigInt(x.e)) * SCALE;
  } else {
    const den = 1n << BigInt(-x.e);
    const n = x.m * SCALE;
    q = n / den;
    const twice = (n % den) * 2n;
    if (twice > den || (twice === den && (q & 1n) === 1n)) q++;
  }
  const int = (q / SCALE).toString();
  const frac = (q % SCALE).toString().padStart(17, '0').replace(/0+$/, '');
  const out = (x.neg ? '-' : '') + int + (frac === '' ? '' : '.' + frac);
  return out === '-0' ? '0' : out;
}
