import { formatDouble17g } from './ascii.js';

/**
 * ReplySink: the engine's only output vocabulary. Handlers write replies here and never touch
 * a socket; RESP over TCP, Upstash JSON over HTTP and the capture used by tests each implement it.
 *
 * An `array(n)` / `set(n)` / `push(n)` header MUST be followed by exactly n elements, a
 * `map(n)` header by n key/value pairs (2n elements).
 *
 * RESP3 types (map, set, double, boolean, verbatim, push, big number, and null for nil/nilArray)
 * are rendered by each sink for its protocol: the RESP writer after HELLO 3 sends them as
 * RESP3 types, every other sink as the RESP2 shapes Redis sends to a RESP2 client (see
 * Resp2Shapes). Handlers therefore call map()/set()/double() where Redis calls
 * addReplyMapLen/addReplySetLen/addReplyDouble, whatever the connection's protocol.
 */
export interface ReplySink {
  /** +OK */
  ok(): void;
  /** +<s> : a status line, as a latin1 byte string; s MUST NOT contain CR or LF. */
  simple(s: string): void;
  /**
   * -<CODE message>, as a latin1 byte string (embed user bytes with argv.key(i), which is
   * exact). The writer strips CR/LF so user input cannot break the protocol. Every
   * implementation MUST count the reply with countError(msg).
   */
  error(msg: string): void;
  /** :<n> */
  int(n: number | bigint): void;
  /** $<len> bytes */
  bulk(v: Buffer): void;
  /** A bulk string given as latin1 chars, one per byte (keyspace keys). */
  bulkLatin1(s: string): void;
  /** bulkLatin1(s.substring(a, e)); a writer may copy the chars without the substring. */
  bulkLatin1Range(s: string, a: number, e: number): void;
  /** bulkLatin1(String(v)) of a safe integer; a writer may write the digits without the string. */
  bulkInt(v: number): void;
  /**
   * bulk(b.subarray(s, e)) of bytes that may change once this returns (a compact key's value
   * in its arena chunk): a sink copies or encodes them now, never keeps a reference.
   */
  bulkBytes(b: Buffer, s: number, e: number): void;
  /** A bulk string given as UTF-8 text (server-generated text: INFO, CLIENT LIST...). */
  bulkText(s: string): void;
  /** $-1 */
  nil(): void;
  /** *<n> header */
  array(n: number): void;
  /** *-1 */
  nilArray(): void;
  /** RESP3 %<n> (n pairs follow); RESP2 *<2n>. */
  map(n: number): void;
  /** RESP3 ~<n>; RESP2 *<n>. */
  set(n: number): void;
  /** RESP3 ><n> (out-of-band: pub/sub, invalidations); RESP2 *<n>. */
  push(n: number): void;
  /**
   * RESP3 ,<%.17g>; RESP2 the same text as a bulk string (Redis 7.0's addReplyDouble). A
   * string is the double's text already formatted (addReplyHumanLongDouble).
   */
  double(d: number | string): void;
  /**
   * A list of n two-element tuples (WITHSCORES, WITHVALUES): RESP3 *<n> whose elements are
   * each opened by pair(); RESP2 one flat *<2n> (pair() writes nothing).
   */
  pairs(n: number): void;
  /** Opens one tuple of a pairs(n) list: RESP3 *2, RESP2 nothing. */
  pair(): void;
  /**
   * n key/value entries (XREAD's streams): RESP3 a map %<n>; RESP2 *<n> whose elements are
   * each opened by assocItem() as a *2.
   */
  assoc(n: number): void;
  /** Opens one entry of an assoc(n): RESP3 nothing, RESP2 *2. */
  assocItem(): void;
  /** RESP3 #t / #f; RESP2 :1 / :0. */
  bool(b: boolean): void;
  /**
   * RESP3 =<len> txt:<s> (`fmt` three letters); RESP2 a bulk string. A string is UTF-8 text,
   * a Buffer raw bytes.
   */
  verbatim(s: string | Buffer, fmt?: string): void;
  /** RESP3 (<digits>; RESP2 a bulk string. */
  bigNumber(digits: string): void;
  /**
   * RESP3 |<n> attribute header: returns true when written, and the caller then writes n
   * key/value pairs followed by the reply they describe. False (RESP2 and every other sink,
   * Lua included: Redis drops attributes there): the caller writes only the reply.
   */
  attribute(n: number): boolean;
}

/**
 * The RESP2 rendering of the RESP3-only types, for sinks that speak RESP2 only (REST JSON,
 * script replies under redis.setresp(2), test captures): extend this and implement the
 * RESP2 primitives.
 */
export abstract class Resp2Shapes implements ReplySink {
  abstract ok(): void;
  abstract simple(s: string): void;
  abstract error(msg: string): void;
  abstract int(n: number | bigint): void;
  abstract bulk(v: Buffer): void;
  abstract bulkLatin1(s: string): void;
  abstract bulkText(s: string): void;
  bulkLatin1Range(s: string, a: number, e: number): void { this.bulkLatin1(s.substring(a, e)); }
  bulkInt(v: number): void { this.bulkLatin1(String(v)); }
  bulkBytes(b: Buffer, s: number, e: number): void { this.bulk(Buffer.from(b.subarray(s, e))); }
  abstract nil(): void;
  abstract array(n: number): void;
  abstract nilArray(): void;
  map(n: number): void { this.array(2 * n); }
  set(n: number): void { this.array(n); }
  push(n: number): void { this.array(n); }
  double(d: number | string): void { this.bulkLatin1(typeof d === 'string' ? d : formatDouble17g(d)); }
  pairs(n: number): void { this.array(2 * n); }
  pair(): void {}
  assoc(n: number): void { this.array(n); }
  assocItem(): void { this.array(2); }
  bool(b: boolean): void { this.int(b ? 1 : 0); }
  verbatim(s: string | Buffer): void {
    if (typeof s === 'string') this.bulkText(s);
    else this.bulk(s);
  }
  bigNumber(digits: string): void { this.bulkLatin1(digits); }
  attribute(_n: number): boolean { return false; }
}

/** Process-wide reply counters shared by every sink (INFO total_error_replies, failed_calls, errorstats). */
export const replyStats = {
  errors: 0,
  /**
   * `errors` when the last command call (nested ones included: EXEC's, scripts') ended: Redis's
   * static prev_err_count. A call fails when errors moved past it, so an error already charged to
   * a command a script or EXEC ran is not charged to the EVAL or EXEC as well.
   */
  mark: 0,
  /** Error replies per error code (INFO errorstats). */
  codes: new Map<string, number>(),
};

/** Distinct error codes tracked at most (codes can come from user scripts: bound the map). */
const MAX_ERROR_CODES = 128;

/**
 * Count one error reply; every sink's error() MUST call it. The code is Redis's: the text
 * before the first space when that space is within the first 32 bytes of "-CODE ...", else ERR.
 */
export function countError(msg: string): void {
  replyStats.errors++;
  const sp = msg.indexOf(' ');
  const code = sp >= 0 && sp < 31 ? msg.slice(0, sp) : 'ERR';
  const codes = replyStats.codes;
  const n = codes.get(code);
  if (n !== undefined) codes.set(code, n + 1);
  else if (codes.size < MAX_ERROR_CODES) codes.set(code, 1);
}
