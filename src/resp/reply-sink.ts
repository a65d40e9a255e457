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
   * implementation MUST count the reply in replyStats.errors.
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

/** Process-wide reply counters shared by every sink (INFO total_error_replies, failed_calls). */
export const replyStats = { errors: 0 };
