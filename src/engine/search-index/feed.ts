/**
 * The engine thread's half of a SEARCH.* index: which keys it covers, the keys written since
 * the last batch, and the encoding of their raw schema values into one binary batch per turn
 * of the event loop for the search worker (worker.ts), which tokenizes and indexes them.
 *
 * Only the leaves at the schema's paths are taken here (no tokenizing, stemming or type
 * conversion, which is most of the indexing work): a JSON document's leaves, a hash's field
 * bytes, a STRING key's whole text (the worker parses it), a stream entry's field bytes.
 *
 * Batch records (little-endian), one after another:
 *   u8 op (1 PUT leaves, 2 DEL, 3 PUT raw JSON text) · u32 index id · u32 key length · key
 *   (latin1 bytes; ON STREAM: the entry id as UTF-16LE) · PUT/raw: f64 expiry ms (0: none) ·
 *   PUT: u32 field count, per schema field u32 leaf count, then per leaf u8 tag (1 UTF-8 text: u32 length +
 *   bytes, 2 f64, 3 bigint as decimal text, 4 true, 5 false) · raw: u32 length + bytes.
 */
import type { Db, Entry } from '../db.js';
import { T } from '../db.js';
import { REMOVED } from '../keytable.js';
import { JFloat, type JValue, serialize } from '../ds/json.js';
import type { HashValue } from '../ds/hash.js';
import type { JsonDoc } from '../ds/json.js';
import { formatId, ID_MAX, ID_MIN, type Stream, type StreamId } from '../ds/stream.js';
import type { IndexDef } from './schema.js';
import { grown } from '../../bytes.js';

/** A scan posts its batch whenever it grows past this. */
const SPILL_BYTES = 8 << 20;

export const OP_PUT = 1;
export const OP_DEL = 2;
export const OP_RAW = 3;
export const TAG_TEXT = 1;
export const TAG_NUM = 2;
export const TAG_BIG = 3;
export const TAG_TRUE = 4;
export const TAG_FALSE = 5;

/** A growing batch buffer; its ArrayBuffer is handed over (transferred) when posted. */
export class Batch {
  buf: Buffer = Buffer.allocUnsafeSlow(1 << 16);
  n = 0;

  private room(k: number): void {
    // (Never below 64 KB, so never a slice of Node's shared pool: the whole ArrayBuffer is ours to transfer.)
    if (this.n + k > this.buf.length) this.buf = grown(this.buf, this.n, this.n + k);
  }

  u8(x: number): void { this.room(1); this.buf[this.n++] = x; }
  u32(x: number): void { this.room(4); this.buf.writeUInt32LE(x, this.n); this.n += 4; }
  f64(x: number): void { this.room(8); this.buf.writeDoubleLE(x, this.n); this.n += 8; }

  /** u32 byte length + the string's bytes in `enc`. */
  text(s: string, enc: 'utf8' | 'latin1' | 'utf16le'): void {
    const max = enc === 'latin1' ? s.length : s.length * 3;
    this.room(4 + max);
    if (s.length <= 48 && enc !== 'utf16le') {
      // Short text copied here when it is ASCII: cheaper than a call into the runtime.
      const buf = this.buf;
      const at = this.n + 4;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[at + i] = c;
      }
      if (i === s.length) {
        buf.writeUInt32LE(i, this.n);
        this.n = at + i;
        return;
      }
    }
    const k = this.buf.write(s, this.n + 4, enc);
    this.buf.writeUInt32LE(k, this.n);
    this.n += 4 + k;
  }

  bytes(b: Buffer): void {
    this.room(4 + b.length);
    this.buf.writeUInt32LE(b.length, this.n);
    b.copy(this.buf, this.n + 4);
    this.n += 4 + b.length;
  }

  /** The bytes so far (an ArrayBuffer to transfer, and its used length); starts a new buffer. */
  take(): { ab: ArrayBuffer; len: number } {
    const out = { ab: this.buf.buffer as ArrayBuffer, len: this.n };
    // The next batch is likely as large (a burst, a scan): start near its size, up to 1 MB.
    this.buf = Buffer.allocUnsafeSlow(Math.min(this.buf.length, 1 << 20));
    this.n = 0;
    return out;
  }
}

/** The engine-side state of one index. */
export class Feed {
  /**
   * Keys written since the last batch, with their entry when the change signal had it (read at
   * flush time unless it left the table since: no second lookup of the key).
   */
  readonly dirty = new Map<string, Entry | undefined>();
  /** The whole keyspace must be sent again before the next use (start-up, SWAPDB, REINDEX). */
  stale = false;
  /** Hash field names as keyspace strings (latin1 bytes of the UTF-8 name). */
  private readonly hashNames: string[];
  private readonly paths: string[][];
  private readonly fieldBufs: Buffer[];
  /** ON STREAM: the stream object indexed, the last entry id taken, the ids sent (in order). */
  private stream: Stream | null = null;
  private streamLast: StreamId = ID_MIN;
  private readonly ids = new Set<StreamId>();
  /**
   * ON STREAM with SKIPINITIALSCAN: the entries present at creation are not documents; the
   * last of their ids and how many of them were still in the stream at the last look.
   */
  private skipUpTo: StreamId | null = null;
  private skipped = 0;

  constructor(readonly def: IndexDef, readonly id: number) {
    this.hashNames = def.fields.map((f) => Buffer.from(f.from ?? f.name, 'utf8').toString('latin1'));
    this.paths = def.fields.map((f) => (f.from ?? f.name).split('.'));
    this.fieldBufs = def.fields.map((f) => Buffer.from(f.from ?? f.name, 'utf8'));
  }

  /** True if `key` lies under one of the prefixes. */
  covers(key: string): boolean {
    const ps = this.def.prefixes;
    if (this.def.on === 'STREAM') return key === ps[0];
    for (let i = 0; i < ps.length; i++) if (key.startsWith(ps[i])) return true;
    return false;
  }

  /** A document's name in replies: the key, or for a stream its entry id as text. */
  replyKey(key: string): string {
    return this.def.on === 'STREAM' ? formatId(key) : key;
  }

  /** SKIPINITIALSCAN: what is under the prefixes now is not indexed until written again. */
  skipExisting(db: Db): void {
    if (this.def.on !== 'STREAM') return;
    const e = db.peek(this.def.prefixes[0]);
    if (e === undefined || e.type !== T.STREAM) return;
    const s = e.v as Stream;
    this.stream = s;
    let last: StreamId = ID_MIN;
    s.forRange(ID_MIN, ID_MAX, true, (id) => { last = id; return false; });
    this.streamLast = last;
    if (s.length > 0) { this.skipUpTo = last; this.skipped = s.length; }
  }

  /** Forget the stream position (the worker's copy was cleared). */
  reset(): void {
    this.stream = null;
    this.streamLast = ID_MIN;
    this.ids.clear();
    this.skipUpTo = null;
    this.skipped = 0;
  }

  /** Encode every pending key (ON STREAM: the entries that arrived or left). */
  flush(db: Db, now: number, out: Batch): void {
    if (this.def.on === 'STREAM') {
      this.dirty.clear();
      this.syncStream(db, now, out);
      return;
    }
    for (const [key, e] of this.dirty) this.encode(key, e === undefined || e.next === REMOVED ? db.peek(key) : e, now, out);
    this.dirty.clear();
  }

  /**
   * Encode every covered key of the database (after the worker's copy was cleared); `spill`
   * posts the batch whenever it passes SPILL_BYTES (the worker starts meanwhile, and a large
   * keyspace is never held twice in one buffer).
   */
  scan(db: Db, now: number, out: Batch, spill: () => void): void {
    this.dirty.clear();
    this.reset();
    if (this.def.on === 'STREAM') { this.syncStream(db, now, out); return; }
    for (const e of db.entries()) {
      if (!this.covers(e.key)) continue;
      this.encode(e.key, e, now, out);
      if (out.n > SPILL_BYTES) spill();
    }
  }

  /** One key's record: its schema leaves, or a removal when it is gone or not a document. */
  encode(key: string, e: Entry | undefined, now: number, out: Batch): void {
    const start = out.n;
    if (e !== undefined && (e.exp === 0 || e.exp >= now) && this.leaves(key, e, out)) return;
    out.n = start;
    this.head(OP_DEL, key, out);
  }

  private head(op: number, key: string, out: Batch): void {
    out.u8(op);
    out.u32(this.id);
    out.text(key, 'latin1');
  }

  /** Writes the PUT record of an entry; false when it is not a document of this index. */
  private leaves(key: string, e: Entry, out: Batch): boolean {
    const fields = this.def.fields;
    const on = this.def.on;
    if (on === 'HASH') {
      if (e.type !== T.HASH) return false;
      this.head(OP_PUT, key, out);
      out.f64(e.exp);
      out.u32(fields.length);
      const h = e.v as HashValue;
      for (let f = 0; f < fields.length; f++) {
        const raw = h.get(this.hashNames[f]);
        if (raw === undefined) { out.u32(0); continue; }
        out.u32(1);
        out.u8(TAG_TEXT);
        out.text(raw, 'latin1'); // the value's bytes: the worker reads them as UTF-8
      }
      return true;
    }
    if (on === 'STRING') {
      if (!e.isString) return false;
      this.head(OP_RAW, key, out);
      out.f64(e.exp);
      out.bytes(e.value as Buffer);
      return true;
    }
    if (e.type !== T.JSON) return false;
    this.head(OP_PUT, key, out);
    out.f64(e.exp);
    out.u32(fields.length);
    const root = (e.v as JsonDoc).root;
    const leaves: unknown[] = [];
    for (let f = 0; f < fields.length; f++) {
      leaves.length = 0;
      collect(root, this.paths[f], 0, leaves);
      writeLeaves(leaves, out);
    }
    return true;
  }

  /** Bring the worker's copy of a stream index in line with the stream now under its key. */
  private syncStream(db: Db, now: number, out: Batch): void {
    const e = db.peek(this.def.prefixes[0]);
    const s = e === undefined || e.type !== T.STREAM || (e.exp !== 0 && e.exp < now) ? null : (e.v as Stream);
    if (s !== this.stream) {
      for (const id of this.ids) this.streamHead(OP_DEL, id, out);
      this.reset();
      this.stream = s;
    }
    if (s === null) return;
    const last = this.streamLast;
    s.forRange(last, ID_MAX, false, (id, fv) => {
      if (id !== last) {
        this.streamHead(OP_PUT, id, out);
        out.f64(0);
        out.u32(this.fieldBufs.length);
        this.entryLeaves(fv, out);
        this.ids.add(id);
        this.streamLast = id;
      }
      return true;
    });
    // Every entry is a document (but those skipped at creation): fewer entries than that
    // means some were deleted or trimmed.
    if (this.ids.size + this.skipped <= s.length) return;
    if (this.skipUpTo !== null) {
      // Which of them: count the skipped entries left (they precede every document).
      let k = 0;
      s.forRange(ID_MIN, this.skipUpTo, false, () => { k++; return true; });
      this.skipped = k;
      if (k === 0) this.skipUpTo = null;
    }
    this.removeGone(s, this.ids.size + this.skipped - s.length, out);
  }

  /** Documents were sent in id order, so a trim (the oldest entries) is found in as many steps as it removed. */
  private removeGone(s: Stream, gone: number, out: Batch): void {
    if (gone <= 0) return;
    for (const id of this.ids) {
      if (s.get(id) !== null) continue;
      this.ids.delete(id);
      this.streamHead(OP_DEL, id, out);
      if (--gone === 0) break;
    }
  }

  private streamHead(op: number, id: StreamId, out: Batch): void {
    out.u8(op);
    out.u32(this.id);
    out.text(id, 'utf16le');
  }

  /** A stream entry's schema values from its field-value pairs (a field given twice: both). */
  private entryLeaves(fv: readonly Buffer[], out: Batch): void {
    for (let f = 0; f < this.fieldBufs.length; f++) {
      let k = 0;
      for (let i = 0; i + 1 < fv.length; i += 2) if (fv[i].equals(this.fieldBufs[f])) k++;
      out.u32(k);
      for (let i = 0; i + 1 < fv.length; i += 2) {
        if (!fv[i].equals(this.fieldBufs[f])) continue;
        out.u8(TAG_TEXT);
        out.bytes(fv[i + 1]);
      }
    }
  }

  /** A document's content for replies: [[field, value]...] (JSON: one "$" pair). */
  content(db: Db, key: string, select: readonly string[] | null): [string, string][] {
    if (this.def.on === 'STREAM') {
      const e = db.peek(this.def.prefixes[0]);
      const fv = e !== undefined && e.type === T.STREAM ? (e.v as Stream).get(key) : null;
      if (fv === null) return [];
      const out: [string, string][] = [];
      for (let i = 0; i + 1 < fv.length; i += 2) {
        const name = fv[i].toString('utf8');
        if (select === null || select.includes(name)) out.push([name, fv[i + 1].toString('utf8')]);
      }
      return out;
    }
    const e = db.peek(key);
    if (e === undefined) return [];
    if (this.def.on === 'HASH') {
      if (e.type !== T.HASH) return [];
      const h = e.v as HashValue;
      const out: [string, string][] = [];
      if (select === null) {
        h.forEach((v, f) => out.push([Buffer.from(f, 'latin1').toString('utf8'), Buffer.from(v, 'latin1').toString('utf8')]));
      } else {
        for (const name of select) {
          const v = h.get(Buffer.from(name, 'utf8').toString('latin1'));
          if (v !== undefined) out.push([name, Buffer.from(v, 'latin1').toString('utf8')]);
        }
      }
      return out;
    }
    let root: unknown;
    if (this.def.on === 'JSON') {
      if (e.type !== T.JSON) return [];
      root = (e.v as JsonDoc).root;
      if (select === null) return [['$', serialize(root as JValue)]];
    } else {
      if (!e.isString) return [];
      const text = (e.value as Buffer).toString('utf8');
      if (select === null) return [['$', text]];
      try { root = JSON.parse(text); } catch { return []; }
    }
    const out: [string, string][] = [];
    for (const name of select) {
      const v = walk(root, name.split('.'));
      if (v !== undefined) out.push([name, this.def.on === 'JSON' ? serialize(v as JValue) : JSON.stringify(v)]);
    }
    return out;
  }
}

/** u32 count + tagged leaves. */
export function writeLeaves(leaves: readonly unknown[], out: Batch): void {
  out.u32(leaves.length);
  for (const l of leaves) {
    if (typeof l === 'string') { out.u8(TAG_TEXT); out.text(l, 'utf8'); }
    else if (typeof l === 'number') { out.u8(TAG_NUM); out.f64(l); }
    else if (l instanceof JFloat) { out.u8(TAG_NUM); out.f64(l.v); }
    else if (typeof l === 'bigint') { out.u8(TAG_BIG); out.text(l.toString(), 'latin1'); }
    else if (l === true) out.u8(TAG_TRUE);
    else out.u8(TAG_FALSE);
  }
}

/** Leaves at a dotted path; arrays on the way and at the end fan out (multi-valued fields). */
export function collect(v: unknown, path: string[], i: number, out: unknown[]): void {
  if (out.length >= 10_000) return;
  if (Array.isArray(v)) {
    for (const x of v) collect(x, path, i, out);
    return;
  }
  if (i === path.length) {
    if (v !== null && v !== undefined && !(v instanceof Map) && (typeof v !== 'object' || v instanceof JFloat)) out.push(v);
    return;
  }
  let next: unknown;
  if (v instanceof Map) next = v.get(path[i]);
  else if (typeof v === 'object' && v !== null && !(v instanceof JFloat)) next = (v as Record<string, unknown>)[path[i]];
  if (next !== undefined) collect(next, path, i + 1, out);
}

/** The value at a dotted path (no array fan-out), for SELECT. */
function walk(v: unknown, path: string[]): unknown {
  for (const seg of path) {
    if (v instanceof Map) v = v.get(seg);
    else if (typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JFloat)) v = (v as Record<string, unknown>)[seg];
    else return undefined;
    if (v === undefined) return undefined;
  }
  return v;
}
