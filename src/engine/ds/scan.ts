/**
 * Argument parsing shared by the collection SCANs (HSCAN, SSCAN; ZSCAN can reuse it), with
 * Redis's rules: the cursor is parsed like strtoul (parseScanCursorOrReply), the options like
 * scanGenericCommand.
 */
import type { Argv } from '../../resp/argv.js';
import { E } from '../../resp/errors.js';

export const INVALID_CURSOR = 'ERR invalid cursor';
export const NOVALUES_ONLY_HSCAN = 'ERR NOVALUES option can only be used in HSCAN';

const ULONG_MAX = 18446744073709551615n;

/**
 * strtoul(3) over the argument up to its first NUL byte (the C string Redis reads): optional '+' or '-' (negative values wrap, as in C),
 * decimal digits, nothing else; no leading space; out of range is an error. An empty argument
 * is cursor 0, as in Redis. Returns the cursor (Infinity when beyond 2^53, which our cursors
 * never reach) or -1 when invalid.
 */
export function parseCursor(argv: Argv, i: number): number {
  const b = argv.buf;
  const s = argv.start[i];
  // Redis parses the C string: a NUL byte ends it ("\0" is cursor 0).
  let e = s;
  while (e < argv.end[i] && b[e] !== 0) e++;
  if (s === e) return 0;
  let p = s;
  let neg = false;
  if (b[p] === 43 || b[p] === 45) {
    neg = b[p] === 45;
    p++;
  }
  if (p === e) return -1;
  let v = 0n;
  let fast = 0;
  const digits = e - p;
  for (let k = p; k < e; k++) {
    const c = b[k];
    if (c < 48 || c > 57) return -1;
    if (digits <= 15) fast = fast * 10 + (c - 48);
  }
  if (digits <= 15) {
    if (!neg || fast === 0) return fast;
    v = BigInt(fast);
  } else {
    v = BigInt(b.latin1Slice(p, e));
    if (v > ULONG_MAX) return -1;
    if (!neg) return v > 9007199254740991n ? Infinity : Number(v);
  }
  // -x wraps to 2^64 - x.
  const w = (ULONG_MAX + 1n - v) & ULONG_MAX;
  return w > 9007199254740991n ? Infinity : Number(w);
}

export interface ScanOptions {
  count: number;
  /** The MATCH pattern, or null when absent or "*". */
  pattern: Buffer | null;
  novalues: boolean;
}

/**
 * Parse [MATCH pattern] [COUNT count] [NOVALUES] from argument `from` on. Returns an error
 * text or the options. `hash` allows NOVALUES.
 */
export function parseScanOptions(argv: Argv, from: number, hash: boolean): ScanOptions | string {
  const opts: ScanOptions = { count: 10, pattern: null, novalues: false };
  let i = from;
  while (i < argv.count) {
    const more = argv.count - i;
    if (argv.is(i, 'COUNT') && more >= 2) {
      let n = argv.int(i + 1);
      if (n !== n) {
        const big = argv.int64(i + 1);
        if (big === null) return E.NOT_INTEGER;
        n = big < 0n ? -1 : Number.MAX_SAFE_INTEGER;
      }
      if (n < 1) return E.SYNTAX;
      opts.count = n;
      i += 2;
    } else if (argv.is(i, 'MATCH') && more >= 2) {
      opts.pattern = argv.len(i + 1) === 1 && argv.buf[argv.start[i + 1]] === 42 ? null : argv.copy(i + 1);
      i += 2;
    } else if (argv.is(i, 'NOVALUES')) {
      if (!hash) return NOVALUES_ONLY_HSCAN;
      opts.novalues = true;
      i++;
    } else {
      return E.SYNTAX;
    }
  }
  return opts;
}
