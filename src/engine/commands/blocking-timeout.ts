/**
 * What the blocking commands of every family share (BLPOP BRPOP BRPOPLPUSH BLMOVE BLMPOP,
 * BZPOPMIN BZPOPMAX BZMPOP, later XREAD BLOCK): the timeout argument and the decision to block.
 *
 * Redis 7.0's getTimeoutFromObjectOrReply(UNIT_SECONDS) reads the timeout as a C long double
 * (strtold rules: "0x10", "1e-400" and "inf" are numbers), multiplies it by 1000 and rounds
 * up with ceill(), then converts to long long. Consequences we reproduce exactly:
 *   - 0.0001 is 1 ms, while -0.0001 rounds up to 0: "wait forever";
 *   - "inf", "1e400" or anything >= 2^63 ms converts to LLONG_MIN: "timeout is negative".
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { CommandError } from '../../resp/errors.js';
import type { WaitSpec } from '../blocking.js';
import type { Client } from '../client.js';
import { LdKind, type LongDouble, parseLongDouble } from '../ds/long-double.js';

const NOT_A_FLOAT = new CommandError('ERR timeout is not a float or out of range');
const NEGATIVE = new CommandError('ERR timeout is negative');

const TWO63 = 1n << 63n;
const TWO64 = 1n << 64n;

/**
 * The timeout argument at `i` as an absolute deadline in ms (0 = wait forever).
 * Throws CommandError with Redis's texts.
 */
export function parseTimeout(argv: Argv, i: number): number {
  // Fast path: a small non-negative integer number of seconds (the common "0", "5").
  const n = argv.int(i);
  if (n === n && n >= 0 && n < 1e12) return n === 0 ? 0 : Date.now() + n * 1000;
  const v = parseLongDouble(argv.buf, argv.start[i], argv.end[i]);
  if (v === null) throw NOT_A_FLOAT;
  const ms = ceilTimes1000(v);
  if (ms < 0n) throw NEGATIVE;
  return ms === 0n ? 0 : Date.now() + Number(ms);
}

/**
 * (long long) ceill(v * 1000.0L): the product rounded to the x87's 64-bit significand (ties to
 * even), rounded up to an integer; values outside long long become LLONG_MIN, as the x86
 * conversion instruction does.
 */
function ceilTimes1000(v: LongDouble): bigint {
  if (v.kind !== LdKind.FINITE) return -TWO63;
  if (v.mant === 0n) return 0n;
  let p = v.mant * 1000n;
  let e = v.exp;
  const extra = p.toString(2).length - 64;
  if (extra > 0) {
    const s = BigInt(extra);
    let q = p >> s;
    const rest = p - (q << s);
    const half = 1n << (s - 1n);
    if (rest > half || (rest === half && (q & 1n) === 1n)) q++;
    if (q === TWO64) {
      q = TWO64 >> 1n;
      e++;
    }
    p = q;
    e += extra;
  }
  let r: bigint;
  if (e >= 0) {
    if (e > 64) return -TWO63; // certainly beyond long long
    r = p << BigInt(e);
  } else if (e < -80) {
    r = v.neg ? 0n : 1n; // 0 < |v * 1000| < 1
    return r;
  } else {
    const s = BigInt(-e);
    r = p >> s;
    // ceil: a positive value with a fractional part goes up; a negative one goes towards 0.
    if (!v.neg && r << s !== p) r++;
  }
  if (v.neg) r = -r;
  if (r >= TWO63 || r < -TWO63) return -TWO63;
  return r;
}

/**
 * Whether the client may block now. Redis's CLIENT_DENY_BLOCKING: inside MULTI/EXEC (and in
 * scripts) a blocking command that cannot be served answers as if it had timed out.
 */
export function canBlock(c: Client): boolean {
  // Inside EXEC or a script (internal client) a blocking command answers as on timeout.
  return !c.engine.inExec && c.transport.kind !== 'internal';
}

/**
 * Block the client on `keys` (nothing could be served now), or answer with the timeout reply
 * when blocking is not allowed. `out` is the sink of the command (a suppressed one under
 * CLIENT REPLY OFF/SKIP stays suppressed for the later reply).
 */
export function blockOrTimeout(c: Client, out: ReplySink, spec: WaitSpec): void {
  if (!canBlock(c)) {
    spec.timeout(out);
    return;
  }
  c.engine.blocking.block(c, spec, out);
}
