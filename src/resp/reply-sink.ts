/**
 * ReplySink: the engine's only output vocabulary. Handlers write replies here and never touch
 * a socket; RESP over TCP, Upstash JSON over HTTP and the capture used by tests each implement it.
 *
 * An `array(n)` header MUST be followed by exactly n elements.
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
  /** A bulk string given as UTF-8 text (server-generated text: INFO, CLIENT LIST...). */
  bulkText(s: string): void;
  /** $-1 */
  nil(): void;
  /** *<n> header */
  array(n: number): void;
  /** *-1 */
  nilArray(): void;
}

/** Process-wide reply counters shared by every sink (INFO total_error_replies, failed_calls, errorstats). */
export const replyStats = {
  errors: 0,
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
