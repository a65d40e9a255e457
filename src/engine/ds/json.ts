/**
 * JSON documents: the value behind RedisJSON's `ReJSON-RL` type.
 *
 * Owns the in-memory model, the parser and the serializer. RedisJSON parses with serde_json and
 * prints with serde_json + ryu, so both sides follow those libraries:
 *  - numbers keep their nature: a lexeme without '.'/'e' inside the i64/u64 range is an integer
 *    (a JS number when within ±2^53, a bigint beyond, so it stays exact); anything else is a
 *    float (JFloat) and prints the way ryu prints an f64 (`1.0`, `0.1`, `1e20`, `1.5e-7`);
 *  - parse errors carry serde_json's wording and its "at line L column C" position (bytes);
 *  - strings are valid UTF-8 (the argument is checked before parsing), stored as JS strings;
 *  - object keys keep insertion order (Map); a repeated key keeps its first position.
 * Path evaluation lives in jsonpath.ts; the commands in commands/json.ts mutate documents only
 * through the helpers here (setAt, deleteAt, ...) and then call db.modified(key).
 */
import { T, type TypedValue } from '../db.js';

/** A JSON float (serde's f64). Integers are plain numbers/bigints; the class keeps 1.0 apart from 1. */
export class JFloat {
  constructor(readonly v: number) {}
}

export type JObject = Map<string, JValue>;
export type JValue = null | boolean | number | bigint | string | JFloat | JValue[] | JObject;

/** One segment of a concrete location: an object key or an array index. */
export type Seg = string | number;

/** The keyspace value. OBJECT ENCODING of a module value is "raw" (createModuleObject). */
export class JsonDoc implements TypedValue {
  readonly type = T.JSON;
  /** Memory accounting (memory.ts): the charge, and the size and average (x16) it was sampled at. */
  mem = 0;
  memN = -1;
  memAvg = 0;
  /** Always 0: documents are stored whole (src/store/json-codec.ts), never as records. */
  sid = 0;
  constructor(public root: JValue) {}
  encoding(): string {
    return 'raw';
  }
  clone(): JsonDoc {
    return new JsonDoc(cloneValue(this.root));
  }
}

export const I64_MIN = -(2n ** 63n);
export const I64_MAX = 2n ** 63n - 1n;
const U64_MAX = 2n ** 64n - 1n;

/** An integer in its canonical form: a number when exactly representable, else a bigint. */
export function intValue(b: bigint): number | bigint {
  return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b;
}

export function isObject(v: JValue): v is JObject {
  return v instanceof Map;
}

/** RedisJSON's type names (JSON.TYPE and the WRONGTYPE texts). */
export function typeName(v: JValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean': return 'boolean';
    case 'number':
    case 'bigint': return 'integer';
    case 'string': return 'string';
  }
  if (v instanceof JFloat) return 'number';
  return Array.isArray(v) ? 'array' : 'object';
}

export function cloneValue(v: JValue): JValue {
  if (v === null || typeof v !== 'object' || v instanceof JFloat) return v;
  if (Array.isArray(v)) return v.map(cloneValue);
  const m: JObject = new Map();
  for (const [k, x] of v) m.set(k, cloneValue(x));
  return m;
}

/**
 * RedisJSON's is_equal (ARRINDEX): same type and same content; an integer never equals a
 * float; objects compare as key sets.
 */
export function strictEqual(a: JValue, b: JValue): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  const ta = typeof a;
  if (ta === 'number' || ta === 'bigint') {
    const tb = typeof b;
    return (tb === 'number' || tb === 'bigint') && BigInt(a as number | bigint) === BigInt(b as number | bigint);
  }
  if (a instanceof JFloat) return b instanceof JFloat && a.v === b.v;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!strictEqual(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, x] of a) {
      const y = b.get(k);
      if (y === undefined || !strictEqual(x, y)) return false;
    }
    return true;
  }
  return false;
}

/** Numeric value of a number node (integers as bigint when beyond 2^53), or null. */
export function numberOf(v: JValue): number | bigint | null {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (v instanceof JFloat) return v.v;
  return null;
}

// ---------------------------------------------------------------- locations

/** The value at a concrete location, or undefined (walks like RedisJSON's update()). */
export function getAt(root: JValue, path: readonly Seg[]): JValue | undefined {
  let v: JValue | undefined = root;
  for (const s of path) {
    if (typeof s === 'number') {
      if (!Array.isArray(v) || s >= v.length) return undefined;
      v = v[s];
    } else {
      if (!(v instanceof Map)) return undefined;
      v = v.get(s);
      if (v === undefined) return undefined;
    }
  }
  return v;
}

/** Parent container of a location (undefined when the walk breaks). */
function parentOf(root: JValue, path: readonly Seg[]): JValue | undefined {
  return getAt(root, path.length === 1 ? [] : path.slice(0, -1));
}

/**
 * Replace the value at a non-root location that exists; true if it did. A location whose
 * parent is gone or of another kind is left alone (RedisJSON's replace()).
 */
export function setAt(root: JValue, path: readonly Seg[], v: JValue): boolean {
  const p = parentOf(root, path);
  const last = path[path.length - 1];
  if (typeof last === 'number') {
    if (!Array.isArray(p) || last >= p.length) return false;
    p[last] = v;
    return true;
  }
  if (!(p instanceof Map) || !p.has(last)) return false;
  p.set(last, v);
  return true;
}

/** Remove the value at a non-root location; true if something was removed. */
export function deleteAt(root: JValue, path: readonly Seg[]): boolean {
  const p = parentOf(root, path);
  const last = path[path.length - 1];
  if (typeof last === 'number') {
    if (!Array.isArray(p) || last >= p.length) return false;
    p.splice(last, 1);
    return true;
  }
  return p instanceof Map && p.delete(last);
}

/** Add `key` to the object at `path` if it is an object without that key (dict_add). */
export function addKey(root: JValue, path: readonly Seg[], key: string, v: JValue): boolean {
  const o = getAt(root, path);
  if (!(o instanceof Map) || o.has(key)) return false;
  o.set(key, v);
  return true;
}

/**
 * RFC 7396 merge of `patch` into `target`, returning the merged value (objects are merged in
 * place: a null member deletes the key, other members merge recursively).
 */
export function mergePatch(target: JValue, patch: JValue): JValue {
  if (!(patch instanceof Map)) return cloneValue(patch);
  const o: JObject = target instanceof Map ? target : new Map();
  for (const [k, pv] of patch) {
    if (pv === null) o.delete(k);
    else {
      const cur = o.get(k);
      o.set(k, mergePatch(cur === undefined ? null : cur, pv));
    }
  }
  return o;
}

/**
 * Order paths for deletion (RedisJSON's prepare_paths_for_deletion): a path inside another
 * matched path is dropped (its ancestor goes anyway), and within an array higher indexes go
 * first so that earlier removals do not shift later ones.
 */
export function pathsForDeletion(paths: Seg[][]): Seg[][] {
  if (paths.length < 2) return paths;
  const cmp = (a: Seg[], b: Seg[]): number => {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const x = a[i];
      const y = b[i];
      if (typeof x === 'number' && typeof y === 'number') {
        if (x !== y) return y - x;
      } else if (typeof x === 'number') {
        return 1;
      } else if (typeof y === 'number') {
        return -1;
      } else if (x !== y) {
        return x < y ? -1 : 1;
      }
    }
    return b.length - a.length;
  };
  const id = (p: Seg[], n: number) => JSON.stringify(p.slice(0, n));
  const all = new Set(paths.map((p) => id(p, p.length)));
  const seen = new Set<string>();
  const out: Seg[][] = [];
  for (const q of paths.slice().sort(cmp)) {
    const qid = id(q, q.length);
    if (seen.has(qid)) continue; // the same location twice: delete it once
    seen.add(qid);
    let nested = false;
    for (let n = 0; n < q.length && !nested; n++) nested = all.has(id(q, n));
    if (!nested) out.push(q);
  }
  return out;
}

// ---------------------------------------------------------------- parser (serde_json rules)

export class JsonParseError extends Error {}

const WS = new Uint8Array(256);
WS[0x20] = WS[0x0a] = WS[0x0d] = WS[0x09] = 1;

/** serde_json's default recursion limit: the 128th nested container is refused. */
const MAX_DEPTH = 128;

class Parser {
  i = 0;
  private remaining: number;
  private readonly len: number;
  constructor(private readonly b: Uint8Array, maxDepth: number) {
    this.len = b.length;
    this.remaining = maxDepth;
  }

  /** Error at the current index (serde's error()). */
  err(msg: string): JsonParseError {
    return new JsonParseError(this.at(msg, this.i));
  }

  /** Error at the peeked byte (serde's peek_error()). */
  peekErr(msg: string): JsonParseError {
    return new JsonParseError(this.at(msg, Math.min(this.len, this.i + 1)));
  }

  private at(msg: string, idx: number): string {
    let line = 1;
    let col = 0;
    for (let k = 0; k < idx; k++) {
      if (this.b[k] === 0x0a) {
        line++;
        col = 0;
      } else {
        col++;
      }
    }
    return `${msg} at line ${line} column ${col}`;
  }

  /** The next non-whitespace byte, not consumed; -1 at the end. */
  ws(): number {
    const b = this.b;
    while (this.i < this.len && WS[b[this.i]] === 1) this.i++;
    return this.i < this.len ? b[this.i] : -1;
  }

  value(): JValue {
    const c = this.ws();
    if (c < 0) throw this.peekErr('EOF while parsing a value');
    switch (c) {
      case 0x6e: this.i++; this.ident('ull'); return null;
      case 0x74: this.i++; this.ident('rue'); return true;
      case 0x66: this.i++; this.ident('alse'); return false;
      case 0x2d: this.i++; return this.number(false);
      case 0x22: this.i++; return this.string();
      case 0x5b: return this.array();
      case 0x7b: return this.object();
      default:
        if (c >= 0x30 && c <= 0x39) return this.number(true);
        throw this.peekErr('expected value');
    }
  }

  private ident(rest: string): void {
    for (let k = 0; k < rest.length; k++) {
      if (this.i >= this.len) throw this.err('EOF while parsing a value');
      const c = this.b[this.i++];
      if (c !== rest.charCodeAt(k)) throw this.err('expected ident');
    }
  }

  private enter(): void {
    if (--this.remaining === 0) throw this.peekErr('recursion limit exceeded');
    this.i++;
  }

  private array(): JValue[] {
    this.enter();
    const out: JValue[] = [];
    let first = true;
    for (;;) {
      let c = this.ws();
      if (c === 0x5d) break;
      if (c === 0x2c && !first) {
        this.i++;
        c = this.ws();
        if (c === 0x5d) throw this.peekErr('trailing comma');
        if (c < 0) throw this.peekErr('EOF while parsing a value');
      } else if (c < 0) {
        throw this.peekErr('EOF while parsing a list');
      } else if (first) {
        first = false;
      } else {
        throw this.peekErr('expected `,` or `]`');
      }
      out.push(this.value());
    }
    this.i++;
    this.remaining++;
    return out;
  }

  private object(): JObject {
    this.enter();
    const out: JObject = new Map();
    let first = true;
    for (;;) {
      let c = this.ws();
      if (c === 0x7d) break;
      if (c === 0x2c && !first) {
        this.i++;
        c = this.ws();
      } else if (c < 0) {
        throw this.peekErr('EOF while parsing an object');
      } else if (first) {
        first = false;
      } else {
        throw this.peekErr('expected `,` or `}`');
      }
      if (c === 0x22) {
        this.i++;
      } else if (c === 0x7d) {
        throw this.peekErr('trailing comma');
      } else if (c < 0) {
        throw this.peekErr('EOF while parsing a value');
      } else {
        throw this.peekErr('key must be a string');
      }
      const key = this.string();
      const colon = this.ws();
      if (colon === 0x3a) this.i++;
      else if (colon < 0) throw this.peekErr('EOF while parsing an object');
      else throw this.peekErr('expected `:`');
      out.set(key, this.value());
    }
    this.i++;
    this.remaining++;
    return out;
  }

  /** After the opening quote. The input was checked to be UTF-8, so raw runs decode as is. */
  private string(): string {
    const b = this.b;
    let out = '';
    let start = this.i;
    for (;;) {
      while (this.i < this.len) {
        const c = b[this.i];
        if (c === 0x22 || c === 0x5c || c < 0x20) break;
        this.i++;
      }
      if (this.i >= this.len) throw this.err('EOF while parsing a string');
      const c = b[this.i];
      if (this.i > start) out += Buffer.from(b.buffer, b.byteOffset + start, this.i - start).toString('utf8');
      if (c === 0x22) {
        this.i++;
        return out;
      }
      if (c !== 0x5c) {
        this.i++;
        throw this.err('control character (\\u0000-\\u001F) found while parsing a string');
      }
      this.i++;
      out += this.escape();
      start = this.i;
    }
  }

  private escape(): string {
    if (this.i >= this.len) throw this.err('EOF while parsing a string');
    const c = this.b[this.i++];
    switch (c) {
      case 0x22: return '"';
      case 0x5c: return '\\';
      case 0x2f: return '/';
      case 0x62: return '\b';
      case 0x66: return '\f';
      case 0x6e: return '\n';
      case 0x72: return '\r';
      case 0x74: return '\t';
      case 0x75: return this.unicodeEscape();
      default: throw this.err('invalid escape');
    }
  }

  private hex4(): number {
    if (this.i + 4 > this.len) {
      this.i = this.len;
      throw this.err('EOF while parsing a string');
    }
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.b[this.i + k];
      const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 87 : c >= 0x41 && c <= 0x46 ? c - 55 : -1;
      if (d < 0) {
        this.i += 4;
        throw this.err('invalid escape');
      }
      n = n * 16 + d;
    }
    this.i += 4;
    return n;
  }

  private unicodeEscape(): string {
    const n = this.hex4();
    if (n >= 0xdc00 && n <= 0xdfff) throw this.err('lone leading surrogate in hex escape');
    if (n < 0xd800 || n > 0xdbff) return String.fromCharCode(n);
    // A leading surrogate must be followed by \uDC00-\uDFFF.
    for (const want of [0x5c, 0x75]) {
      if (this.i >= this.len) throw this.err('EOF while parsing a string');
      if (this.b[this.i] !== want) {
        this.i++;
        throw this.err('unexpected end of hex escape');
      }
      this.i++;
    }
    const n2 = this.hex4();
    if (n2 < 0xdc00 || n2 > 0xdfff) throw this.err('lone leading surrogate in hex escape');
    return String.fromCharCode(n, n2);
  }

  /** After an optional '-': serde's parse_integer / parse_number / parse_decimal / parse_exponent. */
  private number(positive: boolean): JValue {
    const b = this.b;
    const start = positive ? this.i : this.i - 1;
    if (this.i >= this.len) throw this.err('EOF while parsing a value');
    const first = b[this.i++];
    if (first === 0x30) {
      const p = this.i < this.len ? b[this.i] : 0;
      if (p >= 0x30 && p <= 0x39) throw this.peekErr('invalid number');
    } else if (first >= 0x31 && first <= 0x39) {
      while (this.i < this.len && b[this.i] >= 0x30 && b[this.i] <= 0x39) this.i++;
    } else {
      throw this.err('invalid number');
    }
    let float = false;
    let p = this.i < this.len ? b[this.i] : -1;
    if (p === 0x2e) {
      float = true;
      this.i++;
      const d0 = this.i;
      while (this.i < this.len && b[this.i] >= 0x30 && b[this.i] <= 0x39) this.i++;
      if (this.i === d0) {
        if (this.i < this.len) throw this.peekErr('invalid number');
        throw this.peekErr('EOF while parsing a value');
      }
      p = this.i < this.len ? b[this.i] : -1;
    }
    if (p === 0x65 || p === 0x45) {
      float = true;
      this.i++;
      if (this.i < this.len && (b[this.i] === 0x2b || b[this.i] === 0x2d)) this.i++;
      if (this.i >= this.len) throw this.err('EOF while parsing a value');
      const e = b[this.i++];
      if (e < 0x30 || e > 0x39) throw this.err('invalid number');
      while (this.i < this.len && b[this.i] >= 0x30 && b[this.i] <= 0x39) this.i++;
    }
    const lexeme = Buffer.from(b.buffer, b.byteOffset + start, this.i - start).toString('latin1');
    if (!float) {
      if (this.i - start <= 16) {
        // At most 16 characters: exact as a double (|n| < 10^16 < 2^53 needs 16 digits).
        const n = Number(lexeme);
        if (n === 0 && !positive) return new JFloat(-0); // serde: "-0" is the float -0.0
        if (Number.isSafeInteger(n)) return n;
      }
      const big = BigInt(lexeme);
      if (positive ? big <= U64_MAX : big >= I64_MIN) return intValue(big);
      // Beyond u64 / i64: serde reads it as an f64.
    }
    const f = Number(lexeme);
    if (!Number.isFinite(f)) throw this.err('number out of range');
    return new JFloat(f);
  }
}

/**
 * Parse one JSON text (the caller checked it is valid UTF-8). Throws JsonParseError with
 * serde_json's message, e.g. "expected value at line 1 column 1". `maxDepth`: the nesting
 * limit; documents read back from disk pass Infinity (JSON.SET at a path can nest a value
 * deeper than one argument may).
 */
export function parseJson(text: Uint8Array, maxDepth = MAX_DEPTH): JValue {
  const p = new Parser(text, maxDepth);
  const v = p.value();
  if (p.ws() >= 0) throw p.peekErr('trailing characters');
  return v;
}

// ---------------------------------------------------------------- serializer

/** JSON.GET's INDENT / NEWLINE / SPACE strings (RedisJsonFormatter). */
export interface Format {
  indent: string;
  newline: string;
  space: string;
}

/**
 * An f64 the way ryu (serde_json) prints it: the shortest round-trip digits, always with a
 * ".0" or an exponent so that it reads back as a float: 1.0, 0.1, 100.0, 1e16, 1.5e-7, -0.0.
 */
export function formatFloat(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const neg = x < 0;
  // JS gives the same shortest digits; only the layout differs.
  const s = String(neg ? -x : x);
  let digits: string;
  let kk: number; // value = 0.DIGITS × 10^kk
  const e = s.indexOf('e');
  if (e >= 0) {
    const mant = s.slice(0, e);
    const exp = Number(s.slice(e + 1));
    digits = mant.replace('.', '');
    kk = exp + 1;
  } else {
    const dot = s.indexOf('.');
    const intPart = dot < 0 ? s : s.slice(0, dot);
    const frac = dot < 0 ? '' : s.slice(dot + 1);
    if (intPart === '0') {
      let z = 0;
      while (frac.charCodeAt(z) === 0x30) z++;
      digits = frac.slice(z);
      kk = -z;
    } else {
      digits = intPart + frac;
      kk = intPart.length;
    }
  }
  // Trailing zeros are not significant digits ("100" is 1 × 10^2).
  let end = digits.length;
  while (end > 1 && digits.charCodeAt(end - 1) === 0x30) end--;
  digits = digits.slice(0, end);
  const len = digits.length;
  const k = kk - len;
  let out: string;
  if (k >= 0 && kk <= 16) out = digits + '0'.repeat(kk - len) + '.0';
  else if (kk > 0 && kk <= 16) out = digits.slice(0, kk) + '.' + digits.slice(kk);
  else if (kk > -5 && kk <= 0) out = '0.' + '0'.repeat(-kk) + digits;
  else if (len === 1) out = digits + 'e' + (kk - 1);
  else out = digits[0] + '.' + digits.slice(1) + 'e' + (kk - 1);
  return neg ? '-' + out : out;
}

/** A number node as RedisJSON prints it (also NUMINCRBY's legacy reply). */
export function formatNumber(v: number | bigint | JFloat): string {
  return v instanceof JFloat ? formatFloat(v.v) : String(v);
}

const HEX = '0123456789abcdef';

/** serde_json's string escaping: quote, backslash and C0 controls; everything else as is. */
export function quote(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
    if (i > start) out += s.slice(start, i);
    start = i + 1;
    switch (c) {
      case 0x22: out += '\\"'; break;
      case 0x5c: out += '\\\\'; break;
      case 0x08: out += '\\b'; break;
      case 0x09: out += '\\t'; break;
      case 0x0a: out += '\\n'; break;
      case 0x0c: out += '\\f'; break;
      case 0x0d: out += '\\r'; break;
      default: out += '\\u00' + HEX[c >> 4] + HEX[c & 15];
    }
  }
  if (start < s.length) out += s.slice(start);
  return out + '"';
}

/** Compact serialization (serde_json::to_string). */
export function serialize(v: JValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean': return v ? 'true' : 'false';
    case 'number':
    case 'bigint': return String(v);
    case 'string': return quote(v);
  }
  if (v instanceof JFloat) return formatFloat(v.v);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ',';
      out += serialize(v[i]);
    }
    return out + ']';
  }
  let out = '{';
  let first = true;
  for (const [k, x] of v) {
    if (!first) out += ',';
    first = false;
    out += quote(k) + ':' + serialize(x);
  }
  return out + '}';
}

/**
 * Serialization with RedisJSON's formatter: before each member NEWLINE then INDENT × depth
 * (INDENT is written even without NEWLINE), SPACE after each ':', and a closing NEWLINE +
 * INDENT only for non-empty containers.
 */
export function serializeFormatted(v: JValue, f: Format): string {
  if (f.indent === '' && f.newline === '' && f.space === '') return serialize(v);
  const line = (depth: number) => f.newline + f.indent.repeat(depth);
  const walk = (x: JValue, depth: number): string => {
    if (x === null || typeof x !== 'object' || x instanceof JFloat) return serialize(x);
    if (Array.isArray(x)) {
      if (x.length === 0) return '[]';
      let out = '[';
      for (let i = 0; i < x.length; i++) out += (i > 0 ? ',' : '') + line(depth + 1) + walk(x[i], depth + 1);
      return out + line(depth) + ']';
    }
    if (x.size === 0) return '{}';
    let out = '{';
    let first = true;
    for (const [k, y] of x) {
      out += (first ? '' : ',') + line(depth + 1) + quote(k) + ':' + f.space + walk(y, depth + 1);
      first = false;
    }
    return out + line(depth) + '}';
  };
  return walk(v, 0);
}

/** UTF-8 bytes of a JSON text, for a bulk reply. */
export function toBytes(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

/** Byte length of a string value (JSON.STRLEN / STRAPPEND count UTF-8 bytes, as Rust's len()). */
export function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}
