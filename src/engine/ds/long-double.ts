/**
 * x87 80-bit `long double` arithmetic, emulated exactly with BigInt.
 *
 * Redis computes INCRBYFLOAT (and HINCRBYFLOAT) in C `long double`, which on x86-64 Linux is
 * the x87 extended format: a 64-bit mantissa with an explicit integer bit, exponents down to
 * 2^-16382 for normal numbers and gradual underflow to 2^-16445, largest finite value
 * (2^64-1)*2^16320 ~ 1.19e4932. Replies must be byte-exact, so this module reproduces:
 *
 *   - glibc strtold: correctly rounded (round-half-even) decimal and hex parsing, inf/nan,
 *     ERANGE on overflow and on underflow to zero;
 *   - Redis string2ld: its acceptance rules on top of strtold;
 *   - x87 addition: the exact sum rounded once to 64 bits (round-half-even);
 *   - Redis ld2string(LD_STR_HUMAN): glibc "%.17Lf" (exactly rounded, ties to even), trailing
 *     zeros and '.' trimmed, "-0" turned into "0".
 *
 * A finite value is (-1)^neg * mant * 2^exp with 0 <= mant < 2^64 and exp >= EMIN: every value
 * of the x87 format (normal or subnormal) has such a form, and rounding a real number to
 * "64 significant bits, but no bit below 2^EMIN" is exactly x87 rounding.
 */

export const enum LdKind { FINITE = 0, INF = 1, NAN = 2 }

export interface LongDouble {
  readonly kind: LdKind;
  /** Sign bit (also for zero and infinity). */
  readonly neg: boolean;
  /** Integer significand, 0 <= mant < 2^64 (0n for inf/nan). */
  readonly mant: bigint;
  /** Binary exponent of the significand's lowest bit. */
  readonly exp: number;
}

/** Exponent of the smallest subnormal quantum (2^-16445). */
const EMIN = -16445;
/** Largest exponent of a 64-bit significand: max = (2^64-1) * 2^16320. */
const EMAX = 16320;
const TWO64 = 1n << 64n;
const TWO63 = 1n << 63n;

export const LD_ZERO: LongDouble = { kind: LdKind.FINITE, neg: false, mant: 0n, exp: 0 };
export const LD_NEG_ZERO: LongDouble = { kind: LdKind.FINITE, neg: true, mant: 0n, exp: 0 };
export const LD_INF: LongDouble = { kind: LdKind.INF, neg: false, mant: 0n, exp: 0 };
export const LD_NEG_INF: LongDouble = { kind: LdKind.INF, neg: true, mant: 0n, exp: 0 };
export const LD_NAN: LongDouble = { kind: LdKind.NAN, neg: false, mant: 0n, exp: 0 };

function finite(neg: boolean, mant: bigint, exp: number): LongDouble {
  return { kind: LdKind.FINITE, neg, mant, exp };
}

function inf(neg: boolean): LongDouble {
  return neg ? LD_NEG_INF : LD_INF;
}

export function ldIsFinite(x: LongDouble): boolean {
  return x.kind === LdKind.FINITE;
}

export function ldIsZero(x: LongDouble): boolean {
  return x.kind === LdKind.FINITE && x.mant === 0n;
}

/** Number of significant bits of x > 0 (large values). */
function bitLength(x: bigint): number {
  const h = x.toString(16);
  return (h.length - 1) * 4 + (32 - Math.clz32(parseInt(h[0], 16)));
}

/** Exact bit length for small values (< 2^53), avoiding log2 rounding issues. */
function smallBitLength(v: number): number {
  if (v < 0x100000000) return 32 - Math.clz32(v);
  const hi = Math.floor(v / 0x100000000);
  return 64 - Math.clz32(hi);
}

function bits(x: bigint): number {
  if (x < 0x20000000000000n) return smallBitLength(Number(x));
  return bitLength(x);
}

/**
 * Round (-1)^neg * num/den * 2^e0 (num, den > 0) to the x87 format with round-half-even.
 * Gives infinity on overflow and a (signed) zero when the value is below half the smallest
 * subnormal.
 */
function roundRatio(neg: boolean, num: bigint, den: bigint, e0: number): LongDouble {
  // Scale so that the integer quotient q has at least 66 bits: 64 kept, a round bit, and
  // a guard bit; everything below goes into `sticky`.
  const k = 66 - (bits(num) - bits(den));
  let q: bigint;
  let sticky: boolean;
  if (den === 1n) {
    if (k >= 0) {
      q = num << BigInt(k);
      sticky = false;
    } else {
      q = num >> BigInt(-k);
      sticky = (q << BigInt(-k)) !== num;
    }
  } else {
    const n2 = k >= 0 ? num << BigInt(k) : num;
    const d2 = k >= 0 ? den : den << BigInt(-k);
    q = n2 / d2;
    sticky = q * d2 !== n2;
  }
  const e = e0 - k; // exponent of q's lowest bit
  let s = bits(q) - 64;
  if (e + s < EMIN) s = EMIN - e; // gradual underflow: fewer bits are kept
  // s >= 2 here (q has at least 66 bits, and the EMIN rule only raises s).
  const sb = BigInt(s);
  let mant = q >> sb;
  const roundBit = (q >> (sb - 1n)) & 1n;
  if (!sticky) sticky = (q & ((1n << (sb - 1n)) - 1n)) !== 0n;
  if (roundBit === 1n && (sticky || (mant & 1n) === 1n)) mant++;
  let exp = e + s;
  if (mant === TWO64) {
    mant = TWO63;
    exp++;
  }
  if (exp > EMAX) return inf(neg);
  if (mant === 0n) return finite(neg, 0n, 0);
  return finite(neg, mant, exp);
}

// ------------------------------------------------------------------ parsing (strtold)

export interface StrtoldResult {
  value: LongDouble;
  /** Characters consumed (0 = no conversion). */
  end: number;
  /** errno would be ERANGE: overflow to infinity or underflow. */
  erange: boolean;
}

const WS = /^[ \t\n\v\f\r]*/;
const INF_RE = /^inf(?:inity)?/i;
const NAN_RE = /^nan(?:\([0-9A-Za-z_]*\))?/i;
const HEX_RE = /^0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?/;
const HEXP_RE = /^[pP]([+-]?)(\d+)/;
const DEC_RE = /^(\d*)(?:\.(\d*))?/;
const DEXP_RE = /^[eE]([+-]?)(\d+)/;

/** Exponent digits saturated far beyond any representable range. */
function expValue(sign: string, digits: string): number {
  let v = 0;
  for (let i = 0; i < digits.length && v < 1e9; i++) v = v * 10 + (digits.charCodeAt(i) - 48);
  return sign === '-' ? -v : v;
}

const POW10: bigint[] = [];
function pow10(n: number): bigint {
  if (n < 64) {
    let p = POW10[n];
    if (p === undefined) POW10[n] = p = 10n ** BigInt(n);
    return p;
  }
  return 10n ** BigInt(n);
}

/** Decimal digits * 10^e10 (digits without sign). */
function decimalValue(neg: boolean, digits: string, e10: number): { value: LongDouble; erange: boolean } {
  let i = 0;
  while (i < digits.length && digits.charCodeAt(i) === 48) i++;
  if (i === digits.length) return { value: neg ? LD_NEG_ZERO : LD_ZERO, erange: false };
  const sig = digits.slice(i);
  const nd = sig.length;
  // Value lies in [10^(nd-1+e10), 10^(nd+e10)). Max ~1.19e4932, half the smallest subnormal
  // ~1.82e-4951: outside these bounds the result is known without arithmetic.
  if (nd - 1 + e10 > 4932) return { value: inf(neg), erange: true };
  if (nd + e10 < -4951) return { value: finite(neg, 0n, 0), erange: true };
  const d = BigInt(sig);
  const v = e10 >= 0 ? roundRatio(neg, d * pow10(e10), 1n, 0) : roundRatio(neg, d, pow10(-e10), 0);
  return { value: v, erange: v.kind === LdKind.INF || v.mant === 0n || isTiny(v) };
}

/** glibc reports ERANGE for results in the subnormal range that were rounded. */
function isTiny(v: LongDouble): boolean {
  return v.mant < TWO63 && v.exp === EMIN;
}

/**
 * glibc strtold on a JS string (one char per byte): the longest accepted prefix, its value
 * and whether errno would be ERANGE.
 */
export function strtold(str: string): StrtoldResult {
  let p = WS.exec(str)![0].length;
  let neg = false;
  const c = str.charCodeAt(p);
  if (c === 43 /* + */ || c === 45 /* - */) {
    neg = c === 45;
    p++;
  }
  const rest = str.slice(p);
  let m = INF_RE.exec(rest);
  if (m) return { value: inf(neg), end: p + m[0].length, erange: false };
  m = NAN_RE.exec(rest);
  if (m) return { value: LD_NAN, end: p + m[0].length, erange: false };
  m = HEX_RE.exec(rest);
  if (m && (m[1].length > 0 || (m[2] !== undefined && m[2].length > 0))) {
    let end = p + m[0].length;
    const intH = m[1];
    const fracH = m[2] ?? '';
    let e2 = 0;
    const x = HEXP_RE.exec(str.slice(end));
    if (x) {
      e2 = expValue(x[1], x[2]);
      end += x[0].length;
    }
    const all = (intH + fracH).replace(/^0+/, '');
    if (all.length === 0) return { value: neg ? LD_NEG_ZERO : LD_ZERO, end, erange: false };
    const mant = BigInt('0x' + all);
    const e0 = e2 - 4 * fracH.length;
    const top = bits(mant) + e0; // value < 2^top
    if (top - 1 > 16383) return { value: inf(neg), end, erange: true };
    if (top < EMIN - 1) return { value: finite(neg, 0n, 0), end, erange: true };
    const v = roundRatio(neg, mant, 1n, e0);
    const exact = v.kind === LdKind.FINITE && v.mant !== 0n && !isTiny(v);
    return { value: v, end, erange: !exact };
  }
  m = DEC_RE.exec(rest);
  const intD = m![1];
  const fracD = m![2] ?? '';
  if (intD.length === 0 && fracD.length === 0) return { value: LD_ZERO, end: 0, erange: false };
  let end = p + m![0].length;
  let e10 = 0;
  const x = DEXP_RE.exec(str.slice(end));
  if (x) {
    e10 = expValue(x[1], x[2]);
    end += x[0].length;
  }
  const r = decimalValue(neg, intD + fracD, e10 - fracD.length);
  return { value: r.value, end, erange: r.erange };
}

/** Redis's MAX_LONG_DOUBLE_CHARS: strings of this length or more are not numbers. */
export const MAX_LONG_DOUBLE_CHARS = 5 * 1024;

/**
 * Redis string2ld: the whole string must be a number for strtold, with no leading space, no
 * NaN, no overflow and no underflow to zero. Returns null when it is not a valid float.
 */
export function parseLongDouble(b: Uint8Array, s = 0, e = b.length): LongDouble | null {
  const n = e - s;
  if (n === 0 || n >= MAX_LONG_DOUBLE_CHARS) return null;
  const c = b[s];
  if (c === 32 || (c >= 9 && c <= 13)) return null;
  const str = Buffer.from(b.buffer, b.byteOffset + s, n).latin1Slice(0, n);
  const r = strtold(str);
  if (r.end !== n) return null;
  const v = r.value;
  if (v.kind === LdKind.NAN) return null;
  if (r.erange && (v.kind === LdKind.INF || v.mant === 0n)) return null;
  return v;
}

/** parseLongDouble on a JS string (tests, config). */
export function parseLongDoubleStr(s: string): LongDouble | null {
  return parseLongDouble(Buffer.from(s, 'latin1'));
}

// ------------------------------------------------------------------ arithmetic

/** a + b in x87 extended precision (round-to-nearest-even, as the FPU's default mode). */
export function ldAdd(a: LongDouble, b: LongDouble): LongDouble {
  if (a.kind === LdKind.NAN || b.kind === LdKind.NAN) return LD_NAN;
  if (a.kind === LdKind.INF) {
    if (b.kind === LdKind.INF && b.neg !== a.neg) return LD_NAN;
    return a;
  }
  if (b.kind === LdKind.INF) return b;
  if (a.mant === 0n) {
    if (b.mant === 0n) return a.neg && b.neg ? LD_NEG_ZERO : LD_ZERO;
    return b;
  }
  if (b.mant === 0n) return a;
  const e = a.exp < b.exp ? a.exp : b.exp;
  const A = a.mant << BigInt(a.exp - e);
  const B = b.mant << BigInt(b.exp - e);
  const sum = (a.neg ? -A : A) + (b.neg ? -B : B);
  if (sum === 0n) return LD_ZERO; // x + (-x) is +0 when rounding to nearest
  return sum < 0n ? roundRatio(true, -sum, 1n, e) : roundRatio(false, sum, 1n, e);
}

/** -x */
export function ldNeg(x: LongDouble): LongDouble {
  if (x.kind === LdKind.NAN) return x;
  return { kind: x.kind, neg: !x.neg, mant: x.mant, exp: x.exp };
}

/** An exact long double from a 64-bit integer (Redis's INT-encoded values). */
export function ldFromBigInt(v: bigint): LongDouble {
  if (v === 0n) return LD_ZERO;
  const neg = v < 0n;
  return roundRatio(neg, neg ? -v : v, 1n, 0);
}

/** The long double equal to a JS double (exact: every double is a long double). */
export function ldFromNumber(x: number): LongDouble {
  if (Number.isNaN(x)) return LD_NAN;
  if (x === Infinity) return LD_INF;
  if (x === -Infinity) return LD_NEG_INF;
  if (x === 0) return Object.is(x, -0) ? LD_NEG_ZERO : LD_ZERO;
  const neg = x < 0;
  let v = Math.abs(x);
  let e = 0;
  // Scale to an integer exactly (powers of two are exact).
  while (v !== Math.floor(v)) {
    v *= 2;
    e--;
  }
  while (v > Number.MAX_SAFE_INTEGER) {
    v /= 2;
    e++;
  }
  return roundRatio(neg, BigInt(v), 1n, e);
}

/** The nearest JS double (round-half-even), for callers that need a number. */
export function ldToNumber(x: LongDouble): number {
  if (x.kind === LdKind.NAN) return NaN;
  if (x.kind === LdKind.INF) return x.neg ? -Infinity : Infinity;
  if (x.mant === 0n) return x.neg ? -0 : 0;
  // Exact for normal doubles: the decimal text of the exact value parses correctly rounded.
  const v = Number(ldExactDecimal(x));
  return v;
}

/** The exact decimal expansion of a finite value (every binary fraction is a finite decimal). */
export function ldExactDecimal(x: LongDouble): string {
  const sign = x.neg ? '-' : '';
  if (x.exp >= 0) return sign + (x.mant << BigInt(x.exp)).toString();
  const s = -x.exp;
  // mant / 2^s = mant * 5^s / 10^s
  const digits = (x.mant * 5n ** BigInt(s)).toString().padStart(s + 1, '0');
  const int = digits.slice(0, digits.length - s);
  const frac = digits.slice(digits.length - s).replace(/0+$/, '');
  return sign + int + (frac ? '.' + frac : '');
}

// ------------------------------------------------------------------ formatting

const TEN17 = 10n ** 17n;

/** glibc printf("%.17Lf"): fixed notation, 17 decimals, exactly rounded (ties to even). */
export function formatFixed17(x: LongDouble): string {
  if (x.kind === LdKind.NAN) return x.neg ? '-nan' : 'nan';
  if (x.kind === LdKind.INF) return x.neg ? '-inf' : 'inf';
  const sign = x.neg ? '-' : '';
  if (x.exp >= 0) return sign + (x.mant << BigInt(x.exp)).toString() + '.00000000000000000';
  const s = BigInt(-x.exp);
  const scaled = x.mant * TEN17;
  let q = scaled >> s;
  const r = scaled - (q << s);
  const half = 1n << (s - 1n);
  if (r > half || (r === half && (q & 1n) === 1n)) q++;
  const int = q / TEN17;
  const frac = (q - int * TEN17).toString().padStart(17, '0');
  return sign + int.toString() + '.' + frac;
}

/**
 * Redis ld2string(LD_STR_HUMAN): "%.17Lf" with trailing zeros (and a bare '.') removed and
 * "-0" printed as "0". Infinities print as "inf"/"-inf".
 */
export function formatHuman(x: LongDouble): string {
  if (x.kind === LdKind.INF) return x.neg ? '-inf' : 'inf';
  let s = formatFixed17(x);
  if (x.kind === LdKind.NAN) return s;
  let l = s.length;
  while (s.charCodeAt(l - 1) === 48) l--;
  if (s.charCodeAt(l - 1) === 46) l--;
  s = s.slice(0, l);
  return s === '-0' ? '0' : s;
}
