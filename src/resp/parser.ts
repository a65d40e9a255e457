/**
 * RespParser: incremental, zero-copy RESP2 request parser (multibulk and inline), with the
 * acceptance rules and error texts of Redis 7's processMultibulkBuffer/processInlineBuffer.
 *
 * Zero copy: when a chunk holds whole commands, the Argv offsets point into the chunk itself.
 * Only the unconsumed tail of a chunk (a command split across packets) is copied, into a
 * private buffer that grows geometrically; a bulk argument of BIG_ARG bytes or more gets a
 * buffer of its announced size at once, so a 500 MB value is copied exactly once.
 *
 * Parsing is resumable: a partially received multibulk keeps its parsed arguments, so a
 * command with a million arguments arriving in small packets is parsed in linear time.
 *
 * Lifetime (MUST): the Argv filled by next() is valid until the next call to push() or next().
 */
import { Argv } from './argv.js';

export const Parse = { OK: 0, INCOMPLETE: 1, ERROR: 2 } as const;
export type ParseResult = (typeof Parse)[keyof typeof Parse];

export interface ParserLimits {
  /** proto-max-bulk-len (Redis default 512 MB). */
  maxBulk: number;
  /** Longest inline command or header line (Redis PROTO_INLINE_MAX_SIZE, 64 KB). */
  maxInline: number;
  /** Largest multibulk count (Redis: INT_MAX). */
  maxMultibulk: number;
}

export const DEFAULT_LIMITS: ParserLimits = {
  maxBulk: 512 * 1024 * 1024,
  maxInline: 64 * 1024,
  maxMultibulk: 2147483647,
};

const BIG_ARG = 32 * 1024;
const MIN_PRIVATE = 16 * 1024;
const BIG_SLACK = 64 * 1024;
const EMPTY = Buffer.alloc(0);

export class RespParser {
  /** Set by the connection: Redis caps request sizes before authentication. */
  authRequired = false;
  /** The protocol error text (without the leading '-'), after next() returned ERROR. */
  error: string | null = null;

  private buf: Buffer = EMPTY;
  private pos = 0;
  private end = 0;
  /** True when `buf` is our own private buffer (we may append into it). */
  private owned = false;
  /** Minimum buffer size from `pos` that the current command needs (big bulk hint). */
  private need = 0;

  // Resumable multibulk state.
  private cmdStart = -1;
  private multibulk = 0;
  private bulkLen = -1;

  constructor(private readonly limits: ParserLimits = DEFAULT_LIMITS) {}

  /** Bytes received but not yet parsed. */
  get buffered(): number {
    return this.end - this.pos;
  }

  /** Free room after the received bytes in a buffer of the parser's own (CLIENT LIST qbuf-free). */
  get free(): number {
    return this.owned ? this.buf.length - this.end : 0;
  }

  /**
   * Add received bytes: chunk[0, len). Keeps only the unconsumed tail of the previous data.
   * The chunk is borrowed until the next push(); a transport that reuses its read buffer
   * calls detach() before reading into it again.
   */
  push(chunk: Buffer, argv: Argv, len = chunk.length): void {
    const start = this.cmdStart >= 0 ? this.cmdStart : this.pos;
    const left = this.end - start;
    if (left === 0) {
      // Nothing pending: parse straight from the chunk (zero copy).
      this.buf = chunk;
      this.pos = 0;
      this.end = len;
      this.owned = false;
      // A multibulk whose header was the last thing received keeps its progress (it has no
      // argument yet, or `left` would not be 0): it now starts at the chunk's first byte.
      if (this.cmdStart >= 0) {
        this.cmdStart = 0;
        argv.reset(chunk);
      }
      return;
    }
    const total = left + len;
    if (this.owned && this.buf.length - this.end >= len) {
      chunk.copy(this.buf, this.end, 0, len);
      this.end += len;
      return;
    }
    // Move the pending bytes to the start of a (possibly new) private buffer.
    // A big argument gets its announced size plus one socket read (64 KB) of slack, so the
    // chunk that holds its end and the next commands still fits: the value is copied once.
    const size = Math.max(total, this.need > 0 ? this.need + BIG_SLACK : 0, MIN_PRIVATE, this.owned ? Math.min(total * 2, total + 64 * 1024 * 1024) : 0);
    const next = this.owned && this.buf.length >= size && start > 0 ? this.buf : Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, start, this.end);
    chunk.copy(next, left, 0, len);
    if (this.cmdStart >= 0) {
      argv.rebase(next, -start);
      this.pos -= start;
      this.cmdStart = 0;
    } else {
      this.pos = 0;
    }
    this.buf = next;
    this.end = total;
    this.owned = true;
    this.need = 0;
  }

  /**
   * Copy the bytes not parsed yet out of a borrowed chunk into a private buffer, so that the
   * transport may overwrite its read buffer (the argv of a partial command is rebased).
   */
  detach(argv: Argv): void {
    if (this.owned) return;
    const start = this.cmdStart >= 0 ? this.cmdStart : this.pos;
    if (this.end - start > 0) this.push(EMPTY, argv, 0);
  }

  /**
   * Parse the next complete command into `argv`. INCOMPLETE means: wait for more bytes
   * (a partial multibulk keeps its progress). An empty multibulk ("*0") or empty inline line
   * yields nothing and parsing continues, as in Redis.
   */
  next(argv: Argv): ParseResult {
    for (;;) {
      if (this.cmdStart < 0) {
        if (this.pos >= this.end) return Parse.INCOMPLETE;
        if (this.buf[this.pos] !== 0x2a /* * */) {
          const r = this.inline(argv);
          if (r === EMPTY_LINE) continue;
          return r;
        }
        const r = this.multibulkHeader(argv);
        if (r === EMPTY_LINE) continue;
        if (r !== Parse.OK) return r;
      }
      return this.bulks(argv);
    }
  }

  /** Index of the first '\r' in [from, end), stopping at NUL like C's strchr; -1 if none. */
  private findCR(from: number): number {
    const b = this.buf;
    const end = this.end;
    for (let i = from; i < end; i++) {
      const c = b[i];
      if (c === 13) return i;
      if (c === 0) return -1;
    }
    return -1;
  }

  /** Parse the decimal between [s, e) with string2ll rules; NaN if invalid. */
  private static num(b: Buffer, s: number, e: number): number {
    const n = e - s;
    if (n === 0 || n > 20) return NaN;
    let p = s;
    let neg = false;
    if (b[p] === 45) {
      neg = true;
      if (++p === e) return NaN;
    }
    if (b[p] === 48) return n === 1 ? 0 : NaN;
    let v = 0;
    for (; p < e; p++) {
      const c = b[p];
      if (c < 48 || c > 57) return NaN;
      v = v * 10 + (c - 48);
    }
    // Beyond 2^53 the exact value no longer matters: every such count or length is rejected.
    return neg ? -v : v;
  }

  private fail(msg: string): ParseResult {
    this.error = 'ERR Protocol error: ' + msg;
    return Parse.ERROR;
  }

  private multibulkHeader(argv: Argv): ParseResult | typeof EMPTY_LINE {
    const cr = this.findCR(this.pos);
    if (cr < 0) {
      if (this.end - this.pos > this.limits.maxInline) return this.fail('too big mbulk count string');
      return Parse.INCOMPLETE;
    }
    if (cr + 1 >= this.end) return Parse.INCOMPLETE; // the byte after '\r' is not here yet
    const ll = RespParser.num(this.buf, this.pos + 1, cr);
    if (ll !== ll || ll > this.limits.maxMultibulk) return this.fail('invalid multibulk length');
    if (ll > 10 && this.authRequired) return this.fail('unauthenticated multibulk length');
    this.pos = cr + 2;
    if (ll <= 0) return EMPTY_LINE;
    this.cmdStart = this.pos;
    this.multibulk = ll;
    this.bulkLen = -1;
    argv.reset(this.buf);
    return Parse.OK;
  }

  private bulks(argv: Argv): ParseResult {
    const b = this.buf;
    const end = this.end;
    while (this.multibulk > 0) {
      if (this.bulkLen < 0) {
        // perf: the common shape "$<digits>\r\n<payload>\r\n" entirely in the buffer, parsed in
        // one pass; anything else (split, odd, invalid) takes the general path below.
        const p = this.pos;
        if (p + 3 < end && b[p] === 0x24) {
          let q = p + 1;
          let ll = b[q] - 48;
          if (ll >= 1 && ll <= 9) {
            q++;
            let c = 0;
            while (q < end && (c = b[q]) >= 48 && c <= 57 && q - p < 10) {
              ll = ll * 10 + (c - 48);
              q++;
            }
            // q - p < 10: at most 8 digits here (< 100 MB), so no limit check is due except
            // the pre-AUTH one.
            if (c === 13 && q + 1 < end && q - p < 10 && (ll <= 16384 || !this.authRequired)) {
              const start = q + 2;
              if (ll < BIG_ARG && end - start >= ll + 2) {
                argv.push(start, start + ll);
                this.pos = start + ll + 2;
                this.multibulk--;
                continue;
              }
            }
          }
        }

        const cr = this.findCR(this.pos);
        if (cr < 0) {
          if (this.end - this.pos > this.limits.maxInline) return this.fail('too big bulk count string');
          return Parse.INCOMPLETE;
        }
        if (cr + 1 >= this.end) return Parse.INCOMPLETE;
        if (b[this.pos] !== 0x24 /* $ */) {
          return this.fail(`expected '$', got '${String.fromCharCode(b[this.pos])}'`);
        }
        const ll = RespParser.num(b, this.pos + 1, cr);
        if (ll !== ll || ll < 0 || ll > this.limits.maxBulk) return this.fail('invalid bulk length');
        if (ll > 16384 && this.authRequired) return this.fail('unauthenticated bulk length');
        this.pos = cr + 2;
        this.bulkLen = ll;
        if (ll >= BIG_ARG) this.need = this.pos - this.cmdStart + ll + 2;
      }
      // Redis skips the two bytes after the payload without checking them; so do we.
      if (this.end - this.pos < this.bulkLen + 2) return Parse.INCOMPLETE;
      argv.push(this.pos, this.pos + this.bulkLen);
      this.pos += this.bulkLen + 2;
      this.bulkLen = -1;
      this.multibulk--;
    }
    this.cmdStart = -1;
    this.need = 0;
    argv.buf = this.buf;
    return Parse.OK;
  }

  private inline(argv: Argv): ParseResult | typeof EMPTY_LINE {
    const b = this.buf;
    // Redis looks for '\n' with strchr: a NUL byte before it means "no line yet".
    let nl = -1;
    for (let i = this.pos; i < this.end; i++) {
      const c = b[i];
      if (c === 10) {
        nl = i;
        break;
      }
      if (c === 0) break;
    }
    if (nl < 0) {
      if (this.end - this.pos > this.limits.maxInline) return this.fail('too big inline request');
      return Parse.INCOMPLETE;
    }
    let lineEnd = nl;
    if (lineEnd > this.pos && b[lineEnd - 1] === 13) lineEnd--;
    const args = splitArgs(b, this.pos, lineEnd);
    this.pos = nl + 1;
    if (args === null) return this.fail('unbalanced quotes in request');
    if (args.length === 0) return EMPTY_LINE;
    const a = Argv.of(args);
    argv.reset(a.buf);
    for (let i = 0; i < a.count; i++) argv.push(a.start[i], a.end[i]);
    return Parse.OK;
  }
}

const EMPTY_LINE = 3 as const;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9 || c === 11 || c === 12;
}

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Split an inline command line as Redis's sdssplitargs does: whitespace separates
 * arguments; "double quotes" accept \n \r \t \b \a \xHH and \<any>; 'single quotes' accept \'.
 * A closing quote must be followed by whitespace or the end. Returns null on unbalanced quotes.
 */
export function splitArgs(b: Uint8Array, s: number, e: number): Buffer[] | null {
  const out: Buffer[] = [];
  let p = s;
  for (;;) {
    while (p < e && isSpace(b[p])) p++;
    if (p >= e) return out;
    const cur: number[] = [];
    let inq = false;
    let insq = false;
    for (;;) {
      if (inq) {
        if (p >= e) return null;
        const c = b[p];
        if (c === 92 /* \ */ && p + 3 < e && b[p + 1] === 120 /* x */ && hexVal(b[p + 2]) >= 0 && hexVal(b[p + 3]) >= 0) {
          cur.push(hexVal(b[p + 2]) * 16 + hexVal(b[p + 3]));
          p += 3;
        } else if (c === 92 && p + 1 < e) {
          p++;
          const d = b[p];
          cur.push(d === 110 ? 10 : d === 114 ? 13 : d === 116 ? 9 : d === 98 ? 8 : d === 97 ? 7 : d);
        } else if (c === 34 /* " */) {
          if (p + 1 < e && !isSpace(b[p + 1])) return null;
          inq = false;
          p++;
          break;
        } else {
          cur.push(c);
        }
      } else if (insq) {
        if (p >= e) return null;
        const c = b[p];
        if (c === 92 && p + 1 < e && b[p + 1] === 39 /* ' */) {
          p++;
          cur.push(39);
        } else if (c === 39) {
          if (p + 1 < e && !isSpace(b[p + 1])) return null;
          insq = false;
          p++;
          break;
        } else {
          cur.push(c);
        }
      } else {
        if (p >= e) break;
        const c = b[p];
        if (isSpace(c)) break;
        if (c === 34) inq = true;
        else if (c === 39) insq = true;
        else cur.push(c);
      }
      p++;
    }
    out.push(Buffer.from(cur));
  }
}
