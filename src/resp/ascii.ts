/**
 * Byte-level number parsing with Redis's exact acceptance rules.
 *
 * Redis parses integers with string2ll: optional '-', no '+', no spaces, no leading zeros
 * (except "0" itself), at most 20 characters, within signed 64 bits. We keep a JS-number fast
 * path for values within ±2^53 and a BigInt path for the full 64-bit range.
 */

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const I64_MAX = 9223372036854775807n;
const I64_MIN = -9223372036854775808n;

/** string2ll within ±2^53; NaN when invalid or outside the safe range. */
export function parseSafeInt(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n === 0 || n > 20) return NaN;
  let p = s;
  let neg = false;
  if (b[p] === 45 /* - */) {
    neg = true;
    p++;
    if (p === e) return NaN;
  }
  let c = b[p];
  if (c === 48 /* 0 */) return n === 1 ? 0 : NaN; // "0" only; "-0" and "01" are invalid
  if (c < 49 || c > 57) return NaN;
  let v = c - 48;
  p++;
  for (; p < e; p++) {
    c = b[p];
    if (c < 48 || c > 57) return NaN;
    v = v * 10 + (c - 48);
    if (v > MAX_SAFE) return NaN;
  }
  return neg ? -v : v;
}

/** string2ll over the full signed 64-bit range; null when invalid. */
export function parseInt64(b: Uint8Array, s: number, e: number): bigint | null {
  const fast = parseSafeInt(b, s, e);
  if (fast === fast) return BigInt(fast);
  const n = e - s;
  if (n === 0 || n > 20) return null;
  let p = s;
  if (b[p] === 45) p++;
  if (p === e || b[p] < 49 || b[p] > 57) return null;
  for (let i = p; i < e; i++) if (b[i] < 48 || b[i] > 57) return null;
  const v = BigInt(Buffer.from(b.buffer, b.byteOffset + s, n).toString('latin1'));
  return v > I64_MAX || v < I64_MIN ? null : v;
}

/** string2ll on a JS string (config values, tests). */
export function parseIntStr(s: string): number {
  const b = Buffer.from(s, 'latin1');
  return parseSafeInt(b, 0, b.length);
}

/**
 * A double as Redis's getDoubleFromObject accepts it (strtod): no leading space, the whole
 * string consumed, no NaN, no overflow to ±HUGE_VAL and no underflow to zero from a non-zero
 * literal. "inf", "+inf", "-inf", "infinity" (any case) are accepted. NaN when invalid.
 */
export function parseDouble(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n === 0 || n > 5 * 1024) return NaN;
  const str = Buffer.from(b.buffer, b.byteOffset + s, n).toString('latin1');
  return parseDoubleStr(str);
}

const DEC_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INF_RE = /^([+-]?)inf(?:inity)?$/i;
const HEX_RE = /^([+-]?)0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)(?:[pP]([+-]?\d+))?$/;

export function parseDoubleStr(str: string): number {
  if (DEC_RE.test(str)) {
    const v = Number(str);
    if (v === Infinity || v === -Infinity) return NaN; // ERANGE overflow
    if (v === 0 && /[1-9]/.test(str.replace(/[eE].*$/, ''))) return NaN; // ERANGE underflow
    return v;
  }
  const inf = INF_RE.exec(str);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  const hex = HEX_RE.exec(str);
  if (hex && (hex[2] || hex[3])) {
    const mant = parseInt((hex[2] || '0') + (hex[3] || ''), 16);
    const exp = (hex[4] ? Number(hex[4]) : 0) - 4 * hex[3].length;
    const v = mant * Math.pow(2, exp);
    if (!Number.isFinite(v)) return NaN;
    return hex[1] === '-' ? -v : v;
  }
  return NaN;
}

/** Decimal text of a 64-bit integer reply. */
export function intText(n: number | bigint): string {
  return typeof n === 'number' ? String(n) : n.toString();
}

/**
 * Redis's "%.17g" formatting of a double (addReplyDouble in Redis 7.0): 17 significant
 * digits, C printf rules for choosing fixed or exponent notation, "inf"/"-inf", and glibc's
 * rounding of exact ties to even (V8's toPrecision/toExponential round them up).
 */
export function formatDouble17g(v: number): string {
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  if (v !== v) return 'nan';
  // perf: integers below 2^53 have at most 16 digits: "%.17g" prints them as String() does.
  if (Number.isSafeInteger(v)) return String(v);
  const a = v < 0 ? -v : v;
  if (a >= 1e-4) {
    const exact = shortExact(v, a);
    if (exact !== null) return exact;
  }
  const tie = tieDigits(v, a);
  if (tie !== null) return fromDigits(v < 0 ? '-' : '', tie.digits, tie.x);
  if (a >= 1e-4 && a < 1e17) {
    // perf: where C's %g picks fixed notation, toPrecision(17) prints the same correctly
    // rounded digits (it also picks fixed, unless rounding carried to 1e17): drop the zeros.
    const f = v.toPrecision(17);
    if (f.indexOf('e') < 0) {
      if (f.indexOf('.') < 0) return f; // an integer of 17 digits
      let l = f.length;
      while (f.charCodeAt(l - 1) === 48) l--; // '0'
      if (f.charCodeAt(l - 1) === 46) l--; // '.'
      return l === f.length ? f : f.slice(0, l);
    }
  }
  const exp = v.toExponential(16); // d.dddddddddddddddde±x : 17 significant digits
  const m = /^(-?)(\d)\.(\d+)e([+-]\d+)$/.exec(exp)!;
  return fromDigits(m[1], m[2] + m[3], Number(m[4]));
}

/** "%.17g" text of sign, significant digits d.ddd... and decimal exponent x. */
function fromDigits(sign: string, all: string, x: number): string {
  const digits = all.replace(/0+$/, '');
  if (x < -4 || x >= 17) {
    const frac = digits.slice(1);
    const ex = Math.abs(x) < 10 ? '0' + Math.abs(x) : String(Math.abs(x));
    return `${sign}${digits[0]}${frac ? '.' + frac : ''}e${x < 0 ? '-' : '+'}${ex}`;
  }
  let out: string;
  if (x >= 0) {
    const intPart = digits.slice(0, x + 1).padEnd(x + 1, '0');
    const frac = digits.slice(x + 1);
    out = frac ? `${intPart}.${frac}` : intPart;
  } else {
    out = '0.' + '0'.repeat(-x - 1) + digits;
  }
  return sign + out;
}

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
/** 5^k, exact for k <= 22. */
const POW5: number[] = [];
for (let k = 0, p = 1; k <= 22; k++, p *= 5) POW5.push(p);

/**
 * perf (scores such as 1.5 or 2.25, ~10x cheaper than toPrecision): v = N / 2^k (k fractional
 * bits) is exactly the decimal N * 5^k / 10^k. When that integer is below 2^53 its digits (at
 * most 16, the last a 5) are exactly what "%.17g" prints, in fixed notation for v >= 1e-4;
 * null when v is not such a number.
 */
function shortExact(v: number, a: number): string | null {
  F64[0] = v;
  const lo = U32[0];
  const hi = U32[1];
  const e = (hi >>> 20) & 0x7ff;
  if (e === 0 || e === 0x7ff) return null;
  const tz = lo !== 0 ? 31 - Math.clz32(lo & -lo) : 32 + 31 - Math.clz32((hi & 0xfffff | 0x100000) & -(hi & 0xfffff | 0x100000));
  const k = 1075 - e - tz; // fractional binary digits (>= 1: integers are handled before)
  if (k < 1 || k > 22) return null;
  const n = a * 2 ** k; // exact: the mantissa without its trailing zeros
  const i = n * POW5[k];
  if (i >= 9007199254740992) return null; // not exact (and more than 16 digits)
  const d = String(i);
  const sign = v < 0 ? '-' : '';
  if (d.length > k) return sign + d.slice(0, d.length - k) + '.' + d.slice(d.length - k);
  return sign + '0.' + '0'.repeat(k - d.length) + d;
}

/**
 * When v lies exactly halfway between two 17-digit decimals (its exact expansion has 18
 * significant digits, the last a 5), the 17 digits glibc prints (half to even) and their
 * exponent; null otherwise (V8's rounding is then the same as C's). v = N / 2^k with N odd
 * has exactly k fractional decimal digits, the last a 5: a tie when k = 17 - x.
 */
function tieDigits(v: number, a: number): { digits: string; x: number } | null {
  F64[0] = v;
  const lo = U32[0];
  const hi = U32[1];
  const e = (hi >>> 20) & 0x7ff;
  const mhi = (hi & 0xfffff) | (e !== 0 ? 0x100000 : 0);
  const tz = lo !== 0 ? 31 - Math.clz32(lo & -lo) : 32 + 31 - Math.clz32(mhi & -mhi);
  const k = 1075 - (e === 0 ? 1 : e) - tz; // fractional binary digits
  if (k <= 0) return null;
  const approx = Math.floor(Math.log10(a));
  if (Math.abs(17 - approx - k) > 1) return null;
  const e18 = a.toExponential(17); // 18 significant digits: exact when v is a tie
  const x = Number(e18.slice(e18.indexOf('e') + 1));
  if (k !== 17 - x || e18.charCodeAt(18) !== 53) return null; // '5'
  const d17 = e18[0] + e18.slice(2, 18);
  // Half to even: keep the truncated digits when the 17th is even, else V8's rounding up.
  if ((d17.charCodeAt(16) - 48) % 2 !== 0) return null;
  return { digits: d17, x };
}

const MAX_SAFE_BIG = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Shared buffers for 0..9999 (Redis's shared integers): values are immutable, so keys may share
 * them. Each is made on its first use (the whole table at start-up was ~1 MB of idle heap).
 */
const SHARED_INTS: (Buffer | undefined)[] = new Array(10000);

/**
 * The decimal bytes of an integer (what Redis stores for INCR results), built without an
 * intermediate string. Numbers must be safe integers; bigints any 64-bit value.
 */
export function intBytes(n: number | bigint): Buffer {
  if (typeof n === 'bigint') {
    if (n >= -MAX_SAFE_BIG && n <= MAX_SAFE_BIG) return intBytes(Number(n));
    return Buffer.from(n.toString(), 'latin1');
  }
  if (n >= 0 && n < 10000) return SHARED_INTS[n] ?? (SHARED_INTS[n] = Buffer.from(String(n), 'latin1'));
  const neg = n < 0;
  let v = neg ? -n : n;
  let len = neg ? 2 : 1;
  for (let t = v; t >= 10; t = Math.floor(t / 10)) len++;
  const b = Buffer.allocUnsafe(len);
  let p = len;
  do {
    const q = Math.floor(v / 10);
    b[--p] = 48 + (v - q * 10);
    v = q;
  } while (v !== 0);
  if (neg) b[0] = 45;
  return b;
}
