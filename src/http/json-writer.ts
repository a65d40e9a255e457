/**
 * JsonWriter: the ReplySink of the REST API. It turns the engine's RESP2-shaped replies into
 * Upstash's JSON, written straight into one reusable byte buffer (no object tree, no
 * JSON.stringify of the whole reply).
 *
 * Framing. A reply "item" is the envelope of one command: `{"result":<value>}` or
 * `{"error":"<text>"}`. `itemLevel` says at which array depth items sit:
 *   0  single command: the top-level reply is the item.
 *   1  /pipeline (the server opens an array of n items, one per command) and /multi-exec
 *      (EXEC's own array holds the items). An error at level 0 (EXECABORT) is the single
 *      `{"error"}` of a discarded transaction.
 * Arrays close themselves once their n elements are written (RESP's contract), so the writer
 * needs no end call per value.
 *
 * Strings. JSON mode: bytes are emitted as UTF-8; invalid sequences become U+FFFD (Node's
 * decoder, WHATWG rules). Base64 mode (`Upstash-Encoding: base64`): every string is the
 * standard base64 of its raw bytes, except an item's top-level `OK` status (the SDKs keep it
 * as is); errors are never encoded. Integers are JSON numbers with their exact digits, also
 * beyond 2^53 (redis-rest.md §4.2): clients with a BigInt-aware parser get them exactly.
 */
import { Resp2Shapes, replyStats } from '../resp/reply-sink.js';
import { grown } from '../bytes.js';

const INITIAL_SIZE = 64 * 1024;
/** After a reply larger than this, the buffer goes back to INITIAL_SIZE (no lasting bloat). */
const KEEP_MAX = 4 * 1024 * 1024;

const B64 = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 'latin1');
const Q = 0x22; // "
/** Values up to this many bytes are copied by a JS loop rather than a native call. */
const SMALL = 64;
const RESULT_OPEN = Buffer.from('{"result":');
const ERROR_OPEN = Buffer.from('{"error":');
const NULL = Buffer.from('null');

export class JsonWriter extends Resp2Shapes {
  buf: Buffer = Buffer.allocUnsafe(INITIAL_SIZE);
  pos = 0;
  base64 = false;
  private itemLevel = 0;
  /** Open arrays. */
  private level = 0;
  /** Elements still expected by each open array (index = its level). */
  private left: number[] = [];
  /** Items written (one per command). */
  items = 0;
  /** Items that are errors. */
  itemErrors = 0;
  /** An error above the item level: the whole request failed (discarded transaction). */
  topError = false;
  // Where the current command's reply starts (mark/settle).
  private mPos = 0;
  private mLevel = 0;
  private mItems = 0;
  private mErrors = 0;
  private mLeft = 0;

  /** Start a response. */
  begin(itemLevel: number, base64: boolean): void {
    if (this.buf.length > KEEP_MAX) this.buf = Buffer.allocUnsafe(INITIAL_SIZE);
    this.pos = 0;
    this.base64 = base64;
    this.itemLevel = itemLevel;
    this.level = 0;
    this.items = 0;
    this.itemErrors = 0;
    this.topError = false;
  }

  /** Before a command: remember where its reply starts. */
  mark(): void {
    this.mPos = this.pos;
    this.mLevel = this.level;
    this.mItems = this.items;
    this.mErrors = this.itemErrors;
    this.mLeft = this.level > 0 ? this.left[this.level - 1] : 0;
  }

  /**
   * After a command: its reply must be exactly one complete item. A handler that broke that
   * contract (no reply, a partial array after an exception) gets an error item instead, so the
   * JSON stays well-formed.
   */
  settle(): void {
    const level = this.mLeft === 1 ? this.mLevel - 1 : this.mLevel;
    if (this.items === this.mItems + 1 && this.level === level) return;
    this.pos = this.mPos;
    this.level = this.mLevel;
    this.items = this.mItems;
    this.itemErrors = this.mErrors;
    if (this.mLevel > 0) this.left[this.mLevel - 1] = this.mLeft;
    this.error('ERR internal error: the command did not produce exactly one reply');
  }

  /**
   * Continue a top-level array of `total` items of which `prefix` (this writer's earlier output,
   * `items` items, `errors` of them errors) is written: a pipeline resumed after a wait.
   */
  resumeArray(prefix: Buffer, total: number, items: number, errors: number, base64: boolean): void {
    this.begin(1, base64);
    this.ensure(prefix.length);
    prefix.copy(this.buf, 0);
    this.pos = prefix.length;
    this.left[0] = total - items;
    this.level = 1;
    this.items = items;
    this.itemErrors = errors;
  }

  /** The bytes written so far (a view: valid until the next begin()). */
  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** True once the outermost value is complete. */
  get finished(): boolean {
    return this.level === 0 && this.pos > 0;
  }

  private ensure(n: number): void {
    if (this.pos + n > this.buf.length) this.buf = grown(this.buf, this.pos, this.pos + n);
  }

  /** Short constant bytes: a plain loop beats Buffer.copy's argument checks. */
  private raw(b: Buffer): void {
    const n = b.length;
    this.ensure(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = b[i];
    this.pos = p;
  }

  /** Before a value: open the item envelope when the value is an item. */
  private open(): void {
    if (this.level === this.itemLevel) this.raw(RESULT_OPEN);
  }

  /** After a value: close its item envelope, then the arrays it completes. */
  private done(): void {
    this.completed(this.level, true);
  }

  /**
   * The value at level `lv` is complete. `envelope`: whether an item at this level still has
   * its `{"result":` envelope open (an error item closes its own).
   */
  private completed(lv: number, envelope: boolean): void {
    const buf = this.ensure1();
    for (;;) {
      if (lv === this.itemLevel) {
        if (envelope) buf[this.pos++] = 0x7d; // }
        this.items++;
      }
      envelope = true;
      if (lv === 0) return;
      const left = --this.left[lv - 1];
      if (left > 0) {
        buf[this.pos++] = 0x2c; // ,
        return;
      }
      buf[this.pos++] = 0x5d; // ]
      this.level = --lv;
    }
  }

  /** Room for the closing bytes of every open array and envelope. */
  private ensure1(): Buffer {
    this.ensure(2 * this.level + 2);
    return this.buf;
  }

  // ---------------------------------------------------------------- ReplySink

  ok(): void {
    this.simple('OK');
  }

  simple(s: string): void {
    this.open();
    if (this.base64 && !(s === 'OK' && this.level === this.itemLevel)) this.b64Latin1(s);
    else this.jsonLatin1(s);
    this.done();
  }

  error(msg: string): void {
    replyStats.errors++;
    const lv = this.level;
    if (lv === this.itemLevel) this.itemErrors++;
    else if (lv < this.itemLevel) this.topError = true;
    // An error is its own envelope: as an item, nested in an array, or above the items.
    this.raw(ERROR_OPEN);
    this.jsonLatin1(msg);
    this.ensure(1);
    this.buf[this.pos++] = 0x7d; // }
    this.completed(lv, false);
  }

  int(n: number | bigint): void {
    this.open();
    const s = typeof n === 'number' ? String(n) : n.toString();
    this.ensure(s.length);
    this.pos += this.buf.latin1Write(s, this.pos);
    this.done();
  }

  bulk(v: Buffer): void {
    this.open();
    if (this.base64) this.b64Bytes(v, 0, v.length);
    else this.jsonBytes(v, 0, v.length);
    this.done();
  }

  override bulkBytes(b: Buffer, s: number, e: number): void {
    this.open();
    if (this.base64) this.b64Bytes(b, s, e);
    else this.jsonBytes(b, s, e);
    this.done();
  }

  bulkLatin1(s: string): void {
    this.open();
    if (this.base64) this.b64Latin1(s);
    else this.jsonLatin1(s);
    this.done();
  }

  bulkText(s: string): void {
    this.open();
    if (this.base64) {
      const b = Buffer.from(s, 'utf8');
      this.b64Bytes(b, 0, b.length);
    } else {
      this.jsonText(s);
    }
    this.done();
  }

  nil(): void {
    this.open();
    this.raw(NULL);
    this.done();
  }

  nilArray(): void {
    this.nil();
  }

  array(n: number): void {
    this.open();
    this.ensure(2);
    this.buf[this.pos++] = 0x5b; // [
    if (n === 0) {
      this.buf[this.pos++] = 0x5d; // ]
      this.done();
      return;
    }
    this.left[this.level] = n;
    this.level++;
  }

  // ---------------------------------------------------------------- strings

  /** Raw bytes as a JSON string: copied as is when plain ASCII, else decoded and escaped. */
  private jsonBytes(b: Uint8Array, s: number, e: number): void {
    const n = e - s;
    this.ensure(n + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = Q;
    let i = s;
    if (n <= SMALL) {
      // Scan and copy in one pass (no subarray, no native call for short values).
      while (i < e) {
        const x = b[i];
        if (x < 0x20 || x === 0x22 || x === 0x5c || x >= 0x80) break;
        buf[p++] = x;
        i++;
      }
    } else {
      while (i < e) {
        const x = b[i];
        if (x < 0x20 || x === 0x22 || x === 0x5c || x >= 0x80) break;
        i++;
      }
      if (i === e) {
        buf.set(b.subarray(s, e), p);
        p += n;
      }
    }
    if (i === e) {
      buf[p++] = Q;
      this.pos = p;
      return;
    }
    // toString('utf8') replaces invalid sequences with U+FFFD; JSON.stringify escapes.
    this.jsonText(Buffer.from(b.buffer, b.byteOffset + s, e - s).toString('utf8'));
  }

  /** A latin1 byte string (keys, statuses, error texts) as a JSON string. */
  private jsonLatin1(str: string): void {
    const n = str.length;
    this.ensure(n + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = Q;
    let i = 0;
    if (n <= SMALL) {
      while (i < n) {
        const x = str.charCodeAt(i);
        if (x < 0x20 || x === 0x22 || x === 0x5c || x >= 0x80) break;
        buf[p++] = x;
        i++;
      }
    } else {
      while (i < n) {
        const x = str.charCodeAt(i);
        if (x < 0x20 || x === 0x22 || x === 0x5c || x >= 0x80) break;
        i++;
      }
      if (i === n) p += buf.latin1Write(str, p);
    }
    if (i === n) {
      buf[p++] = Q;
      this.pos = p;
      return;
    }
    const b = Buffer.from(str, 'latin1');
    this.jsonBytes(b, 0, b.length);
  }

  /** A JS (UTF-16) string as a JSON string. */
  private jsonText(str: string): void {
    const json = JSON.stringify(str);
    this.ensure(json.length * 3);
    this.pos += this.buf.utf8Write(json, this.pos);
  }

  private b64Latin1(str: string): void {
    const b = Buffer.from(str, 'latin1');
    this.b64Bytes(b, 0, b.length);
  }

  /** Standard base64 (RFC 4648, padded) of b[s, e), quoted. */
  private b64Bytes(b: Uint8Array, s: number, e: number): void {
    const n = e - s;
    const outLen = 4 * Math.ceil(n / 3);
    this.ensure(outLen + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = Q;
    if (n > 256) {
      p += buf.latin1Write(Buffer.from(b.buffer, b.byteOffset + s, n).toString('base64'), p);
    } else {
      let i = s;
      const full = s + n - (n % 3);
      while (i < full) {
        const v = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
        buf[p] = B64[v >> 18];
        buf[p + 1] = B64[(v >> 12) & 63];
        buf[p + 2] = B64[(v >> 6) & 63];
        buf[p + 3] = B64[v & 63];
        p += 4;
        i += 3;
      }
      const rest = e - i;
      if (rest === 1) {
        const v = b[i] << 16;
        buf[p] = B64[v >> 18];
        buf[p + 1] = B64[(v >> 12) & 63];
        buf[p + 2] = 0x3d;
        buf[p + 3] = 0x3d;
        p += 4;
      } else if (rest === 2) {
        const v = (b[i] << 16) | (b[i + 1] << 8);
        buf[p] = B64[v >> 18];
        buf[p + 1] = B64[(v >> 12) & 63];
        buf[p + 2] = B64[(v >> 6) & 63];
        buf[p + 3] = 0x3d;
        p += 4;
      }
    }
    buf[p++] = Q;
    this.pos = p;
  }
}
