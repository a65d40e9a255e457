/**
 * The libraries Redis loads into its Lua state, implemented in JS behind the worker's bridges
 * (the Lua wrappers are in prelude.ts): cjson (lua_cjson 2.1 as Redis ships it), cmsgpack
 * (lua_cmsgpack), struct (Roberto Ierusalimschy's struct.c) and bit (LuaBitOp). Outputs and
 * error texts follow those C sources; Lua values arrive serialised (see prelude.ts).
 */
import { LUA_NULL, LUA_TBOOLEAN, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, type LuaValue, type LuaVM } from './lua-vm.js';

// ---------------------------------------------------------------- the serialised form

/** A Lua value as serialised by the prelude's ser_any. */
export type Ser =
  | Buffer | number | boolean | null | typeof LUA_NULL
  | { t: [Ser, Ser][] } | { x: string } | { deep: true };

/**
 * The values serialised in b. `num(k)` gives the k-th number (from 1) of the 'd' tokens: the
 * serialiser's table of numbers (prelude.ts ser_any), read in place by the caller.
 */
export function parseSer(b: Buffer, num: ((k: number) => number) | null = null): Ser[] {
  const out: Ser[] = [];
  const st: ParseState = { p: 0, k: 0, num };
  while (st.p < b.length) out.push(parseOne(b, st));
  return out;
}

interface ParseState {
  p: number;
  /** 'd' tokens read so far. */
  k: number;
  num: ((k: number) => number) | null;
}

function readNum(b: Buffer, st: ParseState, end: number): string {
  const i = b.indexOf(end, st.p);
  const s = b.toString('latin1', st.p, i);
  st.p = i + 1;
  return s;
}

function parseOne(b: Buffer, st: ParseState): Ser {
  const c = b[st.p++];
  switch (c) {
    case 0x73: { // s
      const n = readLen(b, st);
      const v = b.subarray(st.p, st.p + n);
      st.p += n;
      return v;
    }
    case 0x6e: return Number(readNum(b, st, 0x3b)); // n
    case 0x64: { // d
      if (st.num === null) throw new Error(`bad serialised value at ${st.p - 1}`);
      return st.num(++st.k);
    }
    case 0x54: return true;
    case 0x46: return false;
    case 0x4e: return null;
    case 0x7a: return LUA_NULL;
    case 0x44: return { deep: true };
    case 0x78: return { x: readNum(b, st, 0x3b) };
    case 0x74: { // t
      const n = readLen(b, st);
      const pairs: [Ser, Ser][] = [];
      for (let i = 0; i < n; i++) {
        const k = parseOne(b, st);
        pairs.push([k, parseOne(b, st)]);
      }
      return { t: pairs };
    }
    default: throw new Error(`bad serialised value at ${st.p - 1}`);
  }
}

/** The decimal count before ':' or ';' at st.p (a length or an element count). */
function readLen(b: Buffer, st: ParseState): number {
  let n = 0;
  let p = st.p;
  for (let c = b[p]; c >= 0x30 && c <= 0x39; c = b[++p]) n = n * 10 + (c - 0x30);
  if (p === st.p || p >= b.length) throw new Error(`bad serialised value at ${st.p}`);
  st.p = p + 1;
  return n;
}

/** C's "%.14g" (Lua's number format, cjson's default precision). */
export function fmtG(n: number, prec = 14): string {
  if (Number.isNaN(n)) return n > 0 ? 'nan' : '-nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  // perf: an integer of at most prec digits is printed as its digits (no exponent, no rounding).
  if (prec <= 15 && Number.isInteger(n) && Math.abs(n) < 10 ** prec) return String(n);
  const exp = Math.floor(Math.log10(Math.abs(n)));
  let e = Number(n.toExponential(prec - 1).split('e')[1]);
  if (Number.isNaN(e)) e = exp;
  if (e < -4 || e >= prec) {
    let [m, ex] = n.toExponential(prec - 1).split('e');
    if (m.includes('.')) m = m.replace(/0+$/, '').replace(/\.$/, '');
    const en = Number(ex);
    return `${m}e${en < 0 ? '-' : '+'}${String(Math.abs(en)).padStart(2, '0')}`;
  }
  let s = n.toFixed(Math.max(0, prec - 1 - e));
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return s;
}

// ---------------------------------------------------------------- cjson

const JSON_DEFAULTS = {
  encodeMaxDepth: 1000,
  decodeMaxDepth: 1000,
  precision: 14,
  sparseConvert: false,
  sparseRatio: 2,
  sparseSafe: 10,
  encodeInvalid: 0 as number | 'null',
  decodeInvalid: true,
  keepBuffer: true,
};

/** cjson's settings: the Lua state's (this thread has one), changed by cjson.encode_max_depth() etc. */
export const jsonCfg = { ...JSON_DEFAULTS };

/** A fresh Lua state starts with cjson's defaults. */
export function resetJsonConfig(): void {
  Object.assign(jsonCfg, JSON_DEFAULTS);
}

class JsonError extends Error {}

function typeName(v: Ser): string {
  if (v === null) return 'nil';
  if (v === LUA_NULL) return 'userdata';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return 'number';
  if (Buffer.isBuffer(v)) return 'string';
  if ('t' in v) return 'table';
  if ('x' in v) return v.x;
  return 'table';
}

const ESC: (string | null)[] = [];
for (let i = 0; i < 256; i++) ESC.push(null);
for (let i = 0; i < 32; i++) ESC[i] = `\\u${i.toString(16).padStart(4, '0')}`;
ESC[8] = '\\b'; ESC[9] = '\\t'; ESC[10] = '\\n'; ESC[12] = '\\f'; ESC[13] = '\\r';
ESC[34] = '\\"'; ESC[47] = '\\/'; ESC[92] = '\\\\'; ESC[127] = '\\u007f';

// perf: the encoder builds latin1 text (one char per byte: the output's exact bytes), one
// Buffer at the end.

function jsonString(s: Buffer): string {
  return jsonBytes(s, 0, s.length);
}

/** The JSON string of s[from, to). */
function jsonBytes(s: Buffer, from: number, to: number): string {
  let start = from;
  let r = '"';
  for (let i = from; i < to; i++) {
    const e = ESC[s[i]];
    if (e !== null) {
      if (i > start) r += s.latin1Slice(start, i);
      r += e;
      start = i + 1;
    }
  }
  if (start < to) r += s.latin1Slice(start, to);
  return r + '"';
}

function jsonNumber(n: number): string {
  if (!Number.isFinite(n)) {
    if (jsonCfg.encodeInvalid === 0) throw new JsonError('Cannot serialise number: must not be NaN or Inf');
    if (jsonCfg.encodeInvalid === 'null') return 'null';
  }
  return fmtG(n, jsonCfg.precision);
}

function jsonValue(v: Ser, depth: number): string {
  if (v === null || v === LUA_NULL) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return jsonNumber(v);
  if (Buffer.isBuffer(v)) return jsonString(v);
  if ('t' in v) return jsonTable(v.t, depth + 1);
  if ('deep' in v) throw new JsonError(`Cannot serialise, excessive nesting (${jsonCfg.encodeMaxDepth + 1})`);
  throw new JsonError(`Cannot serialise ${v.x}: type not supported`);
}

/**
 * lua_array_length's sparse check of an array of `count` elements up to index `max`: true when
 * it is encoded as an object (encode_sparse_array's convert), an error when it is refused.
 */
function tooSparse(max: number, count: number): boolean {
  if (jsonCfg.sparseRatio <= 0 || max <= count * jsonCfg.sparseRatio || max <= jsonCfg.sparseSafe) return false;
  if (!jsonCfg.sparseConvert) throw new JsonError('Cannot serialise table: excessively sparse array');
  return true;
}

function jsonTable(pairs: [Ser, Ser][], depth: number): string {
  if (depth > jsonCfg.encodeMaxDepth) throw new JsonError(`Cannot serialise, excessive nesting (${depth})`);
  // lua_array_length: every key a positive integer -> array of length max.
  let max = 0;
  let isArray = true;
  for (const [k] of pairs) {
    if (typeof k === 'number' && k >= 1 && Math.floor(k) === k) {
      if (k > max) max = k;
    } else {
      isArray = false;
      break;
    }
  }
  if (isArray && max > 0) isArray = !tooSparse(max, pairs.length);
  if (isArray && max > 0) {
    const byIndex = new Map<number, Ser>();
    for (const [k, x] of pairs) byIndex.set(k as number, x);
    let r = '[';
    for (let i = 1; i <= max; i++) {
      if (i > 1) r += ',';
      r += jsonValue(byIndex.has(i) ? byIndex.get(i)! : null, depth);
    }
    return r + ']';
  }
  let r = '{';
  let first = true;
  for (const [k, x] of pairs) {
    if (!first) r += ',';
    first = false;
    if (typeof k === 'number') r += '"' + jsonNumber(k) + '"';
    else if (Buffer.isBuffer(k)) r += jsonString(k);
    else throw new JsonError(`Cannot serialise ${typeName(k)}: table key must be a number or string`);
    r += ':' + jsonValue(x, depth);
  }
  return r + '}';
}

/** Tables cjson.encode reads from the stack (jsonEncodeLua); deeper values take jsonEncode. */
export const JSON_STACK_DEPTH = 20;

/** type() of the stack values jsonLua names in its errors. */
const TYPE_NAMES = ['nil', 'boolean', 'userdata', 'number', 'string', 'table', 'function', 'userdata', 'thread'];

/** Thrown by jsonLua past JSON_STACK_DEPTH levels: the caller takes the serialised path. */
const TOO_DEEP = new Error('json: too deep for the stack path');

/**
 * cjson.encode of stack value i, read with the C API: what jsonEncode makes of the Ser values
 * prelude.ts's serialise_any gives for it (the same walk in the same order, so the same text
 * and the same first error), without those values. `view`: stack index of the prelude's VIEW
 * (a read-only proxy is encoded as the table it shows); `nul`: of cjson.null. undefined past
 * JSON_STACK_DEPTH levels (the stack is then left as it is: the caller resets it). Needs
 * 4 * JSON_STACK_DEPTH + 8 free stack slots and vm.stackDirect; allocates nothing in Lua.
 */
export function jsonEncodeLua(vm: LuaVM, i: number, view: number, nul: number): LuaValue[] | undefined {
  let text: string;
  try {
    text = jsonLua(vm, i, 0, view, nul);
  } catch (e) {
    if (e === TOO_DEEP) return undefined;
    if (e instanceof JsonError) return [false, Buffer.from(e.message, 'latin1')];
    throw e;
  }
  return [true, Buffer.from(text, 'latin1')];
}

/** jsonValue of stack value i (depth as there). */
function jsonLua(vm: LuaVM, i: number, depth: number, view: number, nul: number): string {
  const M = vm.M;
  const L = vm.L;
  const t = M._lua_type(L, i);
  if (t === LUA_TSTRING) {
    const p = vm.strPtr(i);
    return jsonBytes(vm.heapBuffer(), p, p + vm.strLen);
  }
  if (t === LUA_TNUMBER) return jsonNumber(M._lua_tonumber(L, i));
  if (t === LUA_TBOOLEAN) return M._lua_toboolean(L, i) !== 0 ? 'true' : 'false';
  if (t === LUA_TNIL) return 'null';
  if (t !== LUA_TTABLE) {
    if (vm.sameRef(i, nul)) return 'null';
    throw new JsonError(`Cannot serialise ${TYPE_NAMES[t]}: type not supported`);
  }
  if (depth >= JSON_STACK_DEPTH) throw TOO_DEEP;
  const top = M._lua_gettop(L);
  let tb = i;
  M._lua_pushvalue(L, i);
  M._lua_rawget(L, view);
  if (M._lua_type(L, -1) !== LUA_TNIL) tb = top + 1;
  const r = jsonTableLua(vm, tb, depth + 1, view, nul);
  M._lua_settop(L, top);
  return r;
}

/** jsonTable of the table at stack index tb: its pairs in `next` order. */
function jsonTableLua(vm: LuaVM, tb: number, depth: number, view: number, nul: number): string {
  const M = vm.M;
  const L = vm.L;
  // (serialise_any serialises the keys too: a key table nested too deep is a Ser path case.)
  if (depth > jsonCfg.encodeMaxDepth) throw new JsonError(`Cannot serialise, excessive nesting (${depth})`);
  let max = 0;
  let count = 0;
  let isArray = true;
  M._lua_pushnil(L);
  while (M._lua_next(L, tb) !== 0) {
    count++;
    M._lua_settop(L, -2);
    if (!isArray) continue;
    const k = M._lua_type(L, -1) === LUA_TNUMBER ? M._lua_tonumber(L, -1) : 0;
    if (k >= 1 && Math.floor(k) === k) {
      if (k > max) max = k;
    } else isArray = false;
  }
  if (isArray && max > 0) isArray = !tooSparse(max, count);
  if (isArray && max > 0) {
    let r = '[';
    for (let j = 1; j <= max; j++) {
      if (j > 1) r += ',';
      M._lua_rawgeti(L, tb, j);
      r += jsonLua(vm, M._lua_gettop(L), depth, view, nul);
      M._lua_settop(L, -2);
    }
    return r + ']';
  }
  let r = '{';
  let first = true;
  M._lua_pushnil(L);
  while (M._lua_next(L, tb) !== 0) {
    const v = M._lua_gettop(L);
    if (!first) r += ',';
    first = false;
    const kt = M._lua_type(L, v - 1);
    if (kt === LUA_TNUMBER) r += '"' + jsonNumber(M._lua_tonumber(L, v - 1)) + '"';
    else if (kt === LUA_TSTRING) r += jsonLua(vm, v - 1, depth, view, nul);
    else throw new JsonError(`Cannot serialise ${TYPE_NAMES[kt]}: table key must be a number or string`);
    r += ':' + jsonLua(vm, v, depth, view, nul);
    M._lua_settop(L, -2);
  }
  return r + '}';
}

/** cjson.encode: [true, json] or [false, message]. */
export function jsonEncode(v: Ser): LuaValue[] {
  let text: string;
  try {
    text = jsonValue(v, 0);
  } catch (e) {
    if (e instanceof JsonError) return [false, Buffer.from(e.message, 'latin1')];
    throw e;
  }
  return [true, Buffer.from(text, 'latin1')];
}

const T = {
  OBJ_BEGIN: 'T_OBJ_BEGIN', OBJ_END: 'T_OBJ_END', ARR_BEGIN: 'T_ARR_BEGIN', ARR_END: 'T_ARR_END',
  STRING: 'T_STRING', NUMBER: 'T_NUMBER', BOOLEAN: 'T_BOOLEAN', NULL: 'T_NULL', COLON: 'T_COLON',
  COMMA: 'T_COMMA', END: 'T_END', ERROR: 'T_ERROR',
} as const;

interface Tok { type: string; index: number; value?: LuaValue; err?: string }

/** Token types of the one-byte tokens, by byte. */
const SINGLE: (string | null)[] = new Array(256).fill(null);
SINGLE[0x7b] = T.OBJ_BEGIN; SINGLE[0x7d] = T.OBJ_END; SINGLE[0x5b] = T.ARR_BEGIN;
SINGLE[0x5d] = T.ARR_END; SINGLE[0x3a] = T.COLON; SINGLE[0x2c] = T.COMMA;
/** The byte of each one-letter escape (\" \\ \/ \b \f \n \r \t), -1 for others. */
const ESCAPED: number[] = new Array(256).fill(-1);
ESCAPED[0x22] = 0x22; ESCAPED[0x5c] = 0x5c; ESCAPED[0x2f] = 0x2f; ESCAPED[0x62] = 8;
ESCAPED[0x66] = 12; ESCAPED[0x6e] = 10; ESCAPED[0x72] = 13; ESCAPED[0x74] = 9;
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL_WORD = Buffer.from('null');

class JsonParser {
  p = 0;
  depth = 0;
  constructor(readonly s: Buffer) {}

  private error(exp: string, tok: Tok): never {
    const found = tok.type === T.ERROR ? tok.err! : tok.type;
    throw new JsonError(`Expected ${exp} but found ${found} at character ${tok.index + 1}`);
  }

  next(): Tok {
    const s = this.s;
    while (this.p < s.length && (s[this.p] === 0x20 || s[this.p] === 0x09 || s[this.p] === 0x0a || s[this.p] === 0x0d)) this.p++;
    const index = this.p;
    if (this.p >= s.length) return { type: T.END, index };
    const c = s[this.p];
    const single = SINGLE[c];
    if (single !== null) {
      this.p++;
      return { type: single, index };
    }
    if (c === 0x22) return this.string(index);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39) || (jsonCfg.decodeInvalid && (c === 0x69 || c === 0x49 || c === 0x6e || c === 0x4e) && this.isNumLike())) return this.number(index);
    if (this.word(TRUE)) return { type: T.BOOLEAN, index, value: true };
    if (this.word(FALSE)) return { type: T.BOOLEAN, index, value: false };
    if (this.word(NULL_WORD)) return { type: T.NULL, index, value: LUA_NULL };
    return { type: T.ERROR, index, err: 'invalid token' };
  }

  /** The bytes at p are w: skip them. */
  private word(w: Buffer): boolean {
    const s = this.s;
    if (this.p + w.length > s.length) return false;
    for (let i = 0; i < w.length; i++) if (s[this.p + i] !== w[i]) return false;
    this.p += w.length;
    return true;
  }

  private isNumLike(): boolean {
    const t = this.s.toString('latin1', this.p, this.p + 8).toLowerCase();
    return t.startsWith('inf') || t.startsWith('nan');
  }

  private number(index: number): Tok {
    const s = this.s;
    // perf: a plain decimal ([-]digits[.digits][e[+-]digits], not 0x...) read without the
    // regular expression below, which accepts the same text for it.
    let q = this.p;
    if (s[q] === 0x2d) q++;
    if (q < s.length && s[q] >= 0x30 && s[q] <= 0x39 && !(s[q] === 0x30 && (s[q + 1] === 0x78 || s[q + 1] === 0x58))) {
      while (q < s.length && s[q] >= 0x30 && s[q] <= 0x39) q++;
      if (s[q] === 0x2e) {
        q++;
        while (q < s.length && s[q] >= 0x30 && s[q] <= 0x39) q++;
      }
      if (s[q] === 0x65 || s[q] === 0x45) {
        let e = q + 1;
        if (s[e] === 0x2b || s[e] === 0x2d) e++;
        if (e < s.length && s[e] >= 0x30 && s[e] <= 0x39) {
          while (e < s.length && s[e] >= 0x30 && s[e] <= 0x39) e++;
          q = e;
        }
      }
      const v = Number(s.latin1Slice(this.p, q));
      if (!jsonCfg.decodeInvalid && !Number.isFinite(v)) return { type: T.ERROR, index, err: 'invalid number' };
      this.p = q;
      return { type: T.NUMBER, index, value: v };
    }
    const rest = s.toString('latin1', this.p, Math.min(s.length, this.p + 400));
    const m = /^[-+]?(?:0[xX][0-9a-fA-F]+|(?:[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)|(?:[nN][aA][nN])|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)/.exec(rest);
    if (m === null) return { type: T.ERROR, index, err: 'invalid number' };
    const txt = m[0];
    let v: number;
    const low = txt.toLowerCase().replace(/^[-+]/, '');
    if (low.startsWith('0x')) v = parseInt(txt, 16);
    else if (low.startsWith('inf')) v = txt.startsWith('-') ? -Infinity : Infinity;
    else if (low.startsWith('nan')) v = NaN;
    else v = Number(txt);
    if (!jsonCfg.decodeInvalid && (low.startsWith('0x') || !Number.isFinite(v))) return { type: T.ERROR, index, err: 'invalid number' };
    this.p += txt.length;
    return { type: T.NUMBER, index, value: v };
  }

  private string(index: number): Tok {
    const s = this.s;
    // perf: no escape before the closing quote: the bytes as they are (a view of the input,
    // which the caller pushes into Lua before it goes).
    const close = s.indexOf(0x22, this.p + 1);
    if (close >= 0) {
      const slash = s.indexOf(0x5c, this.p + 1);
      if (slash < 0 || slash > close) {
        const value = s.subarray(this.p + 1, close);
        this.p = close + 1;
        return { type: T.STRING, index, value };
      }
    }
    this.p++;
    const out: number[] = [];
    for (;;) {
      if (this.p >= s.length) return { type: T.ERROR, index: this.p, err: 'unexpected end of string' };
      const c = s[this.p++];
      if (c === 0x22) break;
      if (c !== 0x5c) {
        out.push(c);
        continue;
      }
      const at = this.p - 1;
      if (this.p >= s.length) return { type: T.ERROR, index: this.p, err: 'unexpected end of string' };
      const e = s[this.p++];
      const simple = ESCAPED[e];
      if (simple >= 0) {
        out.push(simple);
        continue;
      }
      if (e !== 0x75) return { type: T.ERROR, index: at, err: 'invalid escape code' };
      let cp = this.hex4();
      if (cp < 0) return { type: T.ERROR, index: at, err: 'invalid unicode escape code' };
      if (cp >= 0xd800 && cp <= 0xdbff) {
        if (s[this.p] !== 0x5c || s[this.p + 1] !== 0x75) return { type: T.ERROR, index: at, err: 'invalid unicode escape code' };
        this.p += 2;
        const lo = this.hex4();
        if (lo < 0xdc00 || lo > 0xdfff) return { type: T.ERROR, index: at, err: 'invalid unicode escape code' };
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      } else if (cp >= 0xdc00 && cp <= 0xdfff) return { type: T.ERROR, index: at, err: 'invalid unicode escape code' };
      out.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
    }
    return { type: T.STRING, index, value: Buffer.from(out) };
  }

  private hex4(): number {
    const t = this.s.toString('latin1', this.p, this.p + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(t)) return -1;
    this.p += 4;
    return parseInt(t, 16);
  }

  value(tok: Tok): LuaValue {
    if (tok.type === T.OBJ_BEGIN) return this.object(tok);
    if (tok.type === T.ARR_BEGIN) return this.array(tok);
    if (tok.type === T.STRING || tok.type === T.NUMBER || tok.type === T.BOOLEAN || tok.type === T.NULL) return tok.value!;
    this.error('value', tok);
  }

  private enter(tok: Tok): void {
    if (++this.depth > jsonCfg.decodeMaxDepth) {
      throw new JsonError(`Found too many nested data structures (${this.depth}) at character ${tok.index + 1}`);
    }
  }

  private object(open: Tok): LuaValue {
    this.enter(open);
    const kv: LuaValue[] = [];
    let tok = this.next();
    if (tok.type === T.OBJ_END) {
      this.depth--;
      return { h: kv };
    }
    for (;;) {
      if (tok.type !== T.STRING) this.error('object key string', tok);
      const key = tok.value!;
      tok = this.next();
      if (tok.type !== T.COLON) this.error('colon', tok);
      kv.push(key, this.value(this.next()));
      tok = this.next();
      if (tok.type === T.OBJ_END) break;
      if (tok.type !== T.COMMA) this.error('comma or object end', tok);
      tok = this.next();
    }
    this.depth--;
    return { h: kv };
  }

  private array(open: Tok): LuaValue {
    this.enter(open);
    const items: LuaValue[] = [];
    let tok = this.next();
    if (tok.type === T.ARR_END) {
      this.depth--;
      return items;
    }
    for (;;) {
      items.push(this.value(tok));
      tok = this.next();
      if (tok.type === T.ARR_END) break;
      if (tok.type !== T.COMMA) this.error('comma or array end', tok);
      tok = this.next();
    }
    this.depth--;
    // Elements that are JSON null stay cjson.null; a Lua array cannot hold nil anyway.
    return items;
  }
}

/** cjson.decode: [true, value] or [false, message]. */
export function jsonDecode(s: Buffer): LuaValue[] {
  const p = new JsonParser(s);
  try {
    const v = p.value(p.next());
    const end = p.next();
    if (end.type !== T.END) {
      const found = end.type === T.ERROR ? end.err! : end.type;
      throw new JsonError(`Expected the end but found ${found} at character ${end.index + 1}`);
    }
    return [true, v];
  } catch (e) {
    if (e instanceof JsonError) return [false, Buffer.from(e.message, 'latin1')];
    throw e;
  }
}

/** cjson.<config>(...): [true, count, values...] or [false, message]. */
export function jsonConfig(name: string, args: Ser[]): LuaValue[] {
  const num = (v: Ser | undefined): number | undefined => (typeof v === 'number' ? v : Buffer.isBuffer(v) ? Number(v.toString('latin1')) : undefined);
  const bool = (v: Ser | undefined): boolean | undefined => (v === undefined || v === null ? undefined : typeof v === 'boolean' ? v
    : Buffer.isBuffer(v) ? v.toString('latin1') === 'on' || v.toString('latin1') === 'true' : v !== 0);
  const onoff = (b: boolean): Buffer => Buffer.from(b ? 'on' : 'off');
  switch (name) {
    case 'encode_max_depth': {
      const n = num(args[0]);
      if (n !== undefined) jsonCfg.encodeMaxDepth = n;
      return [true, 1, jsonCfg.encodeMaxDepth];
    }
    case 'decode_max_depth': {
      const n = num(args[0]);
      if (n !== undefined) jsonCfg.decodeMaxDepth = n;
      return [true, 1, jsonCfg.decodeMaxDepth];
    }
    case 'encode_number_precision': {
      const n = num(args[0]);
      if (n !== undefined) {
        if (n < 1 || n > 14) return [false, Buffer.from("bad argument #1 to '?' (expected integer between 1 and 14)")];
        jsonCfg.precision = n;
      }
      return [true, 1, jsonCfg.precision];
    }
    case 'encode_sparse_array': {
      const b = bool(args[0]);
      if (b !== undefined) jsonCfg.sparseConvert = b;
      const r = num(args[1]);
      if (r !== undefined) jsonCfg.sparseRatio = r;
      const sf = num(args[2]);
      if (sf !== undefined) jsonCfg.sparseSafe = sf;
      return [true, 3, jsonCfg.sparseConvert, jsonCfg.sparseRatio, jsonCfg.sparseSafe];
    }
    case 'encode_keep_buffer': {
      const b = bool(args[0]);
      if (b !== undefined) jsonCfg.keepBuffer = b;
      return [true, 1, jsonCfg.keepBuffer];
    }
    case 'encode_invalid_numbers': {
      const v = args[0];
      if (Buffer.isBuffer(v) && v.toString('latin1') === 'null') jsonCfg.encodeInvalid = 'null';
      else {
        const b = bool(v);
        if (b !== undefined) jsonCfg.encodeInvalid = b ? 1 : 0;
      }
      const cur = jsonCfg.encodeInvalid;
      return [true, 1, cur === 'null' ? Buffer.from('null') : cur === 1];
    }
    case 'decode_invalid_numbers': {
      const b = bool(args[0]);
      if (b !== undefined) jsonCfg.decodeInvalid = b;
      return [true, 1, jsonCfg.decodeInvalid];
    }
  }
  return [true, 1, onoff(false)];
}

// ---------------------------------------------------------------- cmsgpack

const MAX_NESTING = 16;

function isInt64Equivalent(n: number): boolean {
  return Number.isFinite(n) && Math.trunc(n) === n && n >= -9223372036854775808 && n < 9223372036854775808;
}

/**
 * cmsgpack.pack's output: one Buffer, doubled when full (perf: a 5 MB pack was a JS array of
 * 5M byte numbers; `grows` counts the copies, test/commands/scripting-mp.test.ts bounds it).
 */
class MpOut {
  buf = Buffer.allocUnsafe(256);
  n = 0;
  grows = 0;
  /** Room for k more bytes. */
  room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.n + k) size *= 2;
    const b = Buffer.allocUnsafe(size);
    this.buf.copy(b, 0, 0, this.n);
    this.buf = b;
    this.grows++;
  }
  byte(c: number): void {
    this.room(1);
    this.buf[this.n++] = c;
  }
  /** A type byte and a big-endian unsigned value of `bytes` (2 or 4) bytes. */
  uint(c: number, v: number, bytes: number): void {
    this.room(1 + bytes);
    const b = this.buf;
    b[this.n++] = c;
    for (let i = bytes - 1; i >= 0; i--) b[this.n++] = Math.floor(v / 2 ** (i * 8)) & 0xff;
  }
}

function mpInt(n: number, out: MpOut): void {
  if (n >= 0) {
    if (n <= 127) out.byte(n);
    else if (n <= 0xff) { out.byte(0xcc); out.byte(n); }
    else if (n <= 0xffff) out.uint(0xcd, n, 2);
    else if (n <= 0xffffffff) out.uint(0xce, n, 4);
    else {
      out.room(9);
      out.buf[out.n] = 0xcf;
      out.buf.writeBigUInt64BE(BigInt(n), out.n + 1);
      out.n += 9;
    }
  } else if (n >= -32) out.byte(n & 0xff);
  else if (n >= -128) { out.byte(0xd0); out.byte(n & 0xff); }
  else if (n >= -32768) out.uint(0xd1, n & 0xffff, 2);
  else if (n >= -2147483648) out.uint(0xd2, n >>> 0, 4);
  else {
    out.room(9);
    out.buf[out.n] = 0xd3;
    out.buf.writeBigInt64BE(BigInt(n), out.n + 1);
    out.n += 9;
  }
}

function mpLen(len: number, fix: number, fixMax: number, c16: number, c32: number, out: MpOut, c8 = -1): void {
  if (len < fixMax) out.byte(fix | len);
  else if (c8 >= 0 && len <= 0xff) { out.byte(c8); out.byte(len); }
  else if (len <= 0xffff) out.uint(c16, len, 2);
  else out.uint(c32, len, 4);
}

function mpNumber(v: number, out: MpOut): void {
  if (isInt64Equivalent(v)) mpInt(v, out);
  // (lua_cmsgpack: a float when (double)(float)d == d, which NaN never is: a double.)
  else if (Math.fround(v) === v) {
    out.room(5);
    out.buf[out.n] = 0xca;
    out.buf.writeFloatBE(v, out.n + 1);
    out.n += 5;
  } else {
    out.room(9);
    out.buf[out.n] = 0xcb;
    out.buf.writeDoubleBE(v, out.n + 1);
    out.n += 9;
  }
}

/** Stack slots one nesting level of mpLua uses (the table's view, a key, a value). */
const MP_LEVEL_SLOTS = 3;

/**
 * The Lua value at stack index i (absolute) as lua_cmsgpack encodes it: a table whose keys are
 * exactly 1..n is an array (its elements by index), any other a map in next() order; nil at
 * MAX_NESTING levels of tables; functions, userdata (cjson.null) and threads as nil. A read-only
 * global's proxy is packed as the table it shows (`view`: the prelude's VIEW table, or 0).
 * perf: walked with the C API, nothing serialised first; nothing here allocates in Lua, so the
 * heap (and the strings read from it) stays where it is.
 */
function mpLua(vm: LuaVM, i: number, out: MpOut, level: number, view: number): void {
  const M = vm.M;
  const L = vm.L;
  const t = M._lua_type(L, i);
  if (t === LUA_TNUMBER) mpNumber(M._lua_tonumber(L, i), out);
  else if (t === LUA_TSTRING) {
    const p = vm.strPtr(i);
    const n = vm.strLen;
    mpLen(n, 0xa0, 32, 0xda, 0xdb, out, 0xd9);
    out.room(n);
    const h = vm.heapBuffer();
    if (n <= 64) for (let j = 0; j < n; j++) out.buf[out.n + j] = h[p + j];
    else h.copy(out.buf, out.n, p, p + n);
    out.n += n;
  } else if (t === LUA_TBOOLEAN) out.byte(M._lua_toboolean(L, i) !== 0 ? 0xc3 : 0xc2);
  else if (t === LUA_TTABLE) {
    if (level >= MAX_NESTING) {
      out.byte(0xc0);
      return;
    }
    const top = M._lua_gettop(L);
    let tb = i;
    if (view !== 0) {
      M._lua_pushvalue(L, i);
      M._lua_rawget(L, view);
      if (M._lua_type(L, -1) !== LUA_TNIL) tb = top + 1;
    }
    let count = 0;
    let max = 0;
    let isArray = true;
    M._lua_pushnil(L);
    while (M._lua_next(L, tb) !== 0) {
      M._lua_settop(L, -2);
      count++;
      if (isArray) {
        const k = M._lua_type(L, -1) === LUA_TNUMBER ? M._lua_tonumber(L, -1) : 0;
        if (k > 0 && Math.trunc(k) === k) max = Math.max(max, k);
        else isArray = false;
      }
    }
    if (isArray && max === count) {
      mpLen(count, 0x90, 16, 0xdc, 0xdd, out);
      for (let j = 1; j <= count; j++) {
        M._lua_rawgeti(L, tb, j);
        mpLua(vm, M._lua_gettop(L), out, level + 1, view);
        M._lua_settop(L, -2);
      }
    } else {
      mpLen(count, 0x80, 16, 0xde, 0xdf, out);
      M._lua_pushnil(L);
      while (M._lua_next(L, tb) !== 0) {
        const v = M._lua_gettop(L);
        mpLua(vm, v - 1, out, level + 1, view);
        mpLua(vm, v, out, level + 1, view);
        M._lua_settop(L, -2);
      }
    }
    M._lua_settop(L, top);
  } else out.byte(0xc0);
}

/** Copies made by the last mpPackLua (tests). */
export let mpPackGrows = 0;

/**
 * cmsgpack.pack of the values at stack indexes first..last: their encodings one after the other.
 * `view` as mpLua. Null when the stack has no room for the nesting.
 */
export function mpPackLua(vm: LuaVM, first: number, last: number, view: number): Buffer | null {
  if (vm.M._lua_checkstack(vm.L, MP_LEVEL_SLOTS * (MAX_NESTING + 1) + 2) === 0) return null;
  const out = new MpOut();
  for (let i = first; i <= last; i++) mpLua(vm, i, out, 0, view);
  mpPackGrows = out.grows;
  return out.buf.subarray(0, out.n);
}

class MpError extends Error {}

/**
 * lua_cmsgpack stops where lua_checkstack finds no room: a 4000th nested array or map (its
 * texts below) fails, as in Redis.
 */
const MP_MAX_NESTING = 4000;

/** An array or map being decoded: its elements so far (maps: key, value...), how many it has. */
interface MpOpen {
  map: boolean;
  n: number;
  items: LuaValue[];
}

/** The elements of a decoded array: a nil element still occupies its index (explicit keys then). */
function mpArray(items: LuaValue[]): LuaValue {
  if (!items.includes(null)) return items;
  const kv: LuaValue[] = [];
  items.forEach((x, i) => { if (x !== null) kv.push(i + 1, x); });
  return { h: kv };
}

function mpMap(items: LuaValue[]): LuaValue {
  // perf: no nil key or value (the common case): the pairs as they are.
  if (!items.includes(null)) return { h: items.length % 2 === 0 ? items : items.slice(0, -1) };
  const kv: LuaValue[] = [];
  for (let i = 0; i + 1 < items.length; i += 2) if (items[i] !== null && items[i + 1] !== null) kv.push(items[i], items[i + 1]);
  return { h: kv };
}

/** One value (iterative: nesting is bounded by MP_MAX_NESTING, not by the JS stack). */
function mpDecode(s: Buffer, st: { p: number }): LuaValue {
  const open: MpOpen[] = [];
  for (;;) {
    const c = mpByte(s, st);
    let v: LuaValue;
    let n = -1;
    let map = false;
    if ((c & 0xf0) === 0x90) n = c & 0x0f;
    else if ((c & 0xf0) === 0x80) { n = c & 0x0f; map = true; }
    else if (c === 0xdc || c === 0xdd) n = mpUint(s, st, c === 0xdc ? 2 : 4);
    else if (c === 0xde || c === 0xdf) { n = mpUint(s, st, c === 0xde ? 2 : 4); map = true; }
    if (n >= 0) {
      if (open.length + 1 >= MP_MAX_NESTING) {
        throw new MpError(map ? 'stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)'
          : 'stack overflow (in function mp_decode_to_lua_array)');
      }
      // (Elements are pushed as they are read: allocation follows the input, not n.)
      if (n > 0) {
        open.push({ map, n: map ? n * 2 : n, items: [] });
        continue;
      }
      v = map ? { h: [] } : [];
    } else {
      v = mpScalar(s, st, c);
    }
    // Hand v to the containers it completes.
    for (;;) {
      const top = open[open.length - 1];
      if (top === undefined) return v;
      top.items.push(v);
      if (top.items.length < top.n) break;
      open.pop();
      v = top.map ? mpMap(top.items) : mpArray(top.items);
    }
  }
}

function mpByte(s: Buffer, st: { p: number }): number {
  if (st.p >= s.length) throw new MpError('Missing bytes in input.');
  return s[st.p++];
}

function mpNeed(s: Buffer, st: { p: number }, n: number): void {
  if (st.p + n > s.length) throw new MpError('Missing bytes in input.');
}

function mpUint(s: Buffer, st: { p: number }, n: number): number {
  mpNeed(s, st, n);
  let v = 0;
  for (let i = 0; i < n; i++) v = v * 256 + s[st.p++];
  return v;
}

/**
 * A msgpack string as latin1 text (a Lua string's bytes; perf: one JS string, where a copied
 * Buffer was two objects and pool memory, for what goes straight into Lua).
 */
function mpBytes(s: Buffer, st: { p: number }, n: number): string {
  mpNeed(s, st, n);
  const b = s.latin1Slice(st.p, st.p + n);
  st.p += n;
  return b;
}

function mpI64(s: Buffer, st: { p: number }, signed: boolean): number {
  mpNeed(s, st, 8);
  const v = signed ? s.readBigInt64BE(st.p) : s.readBigUInt64BE(st.p);
  st.p += 8;
  return Number(v);
}

/** A value that is not an array or map, after its first byte c. */
function mpScalar(s: Buffer, st: { p: number }, c: number): LuaValue {
  if (c <= 0x7f) return c;
  if (c >= 0xe0) return c - 256;
  if ((c & 0xe0) === 0xa0) return mpBytes(s, st, c & 0x1f);
  switch (c) {
    case 0xc0: return null;
    case 0xc2: return false;
    case 0xc3: return true;
    case 0xcc: return mpUint(s, st, 1);
    case 0xcd: return mpUint(s, st, 2);
    case 0xce: return mpUint(s, st, 4);
    case 0xcf: return mpI64(s, st, false);
    case 0xd0: { const v = mpUint(s, st, 1); return v >= 128 ? v - 256 : v; }
    case 0xd1: { const v = mpUint(s, st, 2); return v >= 32768 ? v - 65536 : v; }
    case 0xd2: { mpNeed(s, st, 4); const v = s.readInt32BE(st.p); st.p += 4; return v; }
    case 0xd3: return mpI64(s, st, true);
    case 0xca: { mpNeed(s, st, 4); const v = s.readFloatBE(st.p); st.p += 4; return v; }
    case 0xcb: { mpNeed(s, st, 8); const v = s.readDoubleBE(st.p); st.p += 8; return v; }
    case 0xd9: return mpBytes(s, st, mpUint(s, st, 1));
    case 0xda: return mpBytes(s, st, mpUint(s, st, 2));
    case 0xdb: return mpBytes(s, st, mpUint(s, st, 4));
  }
  throw new MpError('Bad data format in input.');
}

/** cmsgpack.unpack / unpack_one / unpack_limit's limit and offset (limit 0: all values, from 0). */
function mpRange(mode: string, a: number, b: number): [limit: number, offset: number] {
  if (mode === 'one') return [1, Math.trunc(a)];
  if (mode === 'limit') return [Math.trunc(a), Math.trunc(b)];
  return [0, 0];
}

/** cmsgpack.unpack / unpack_one / unpack_limit: [true, count, values...] or [false, message]. */
export function mpUnpack(s: Buffer, mode: string, a: number, b: number): LuaValue[] {
  let [limit, offset] = mpRange(mode, a, b);
  const decodeAll = limit === 0 && offset === 0;
  if (offset < 0 || limit < 0) {
    return [false, Buffer.from(`Invalid request to unpack with offset of ${offset} and limit of ${s.length}.`)];
  }
  if (offset > s.length) return [false, Buffer.from(`Start offset ${offset} greater than input length ${s.length}.`)];
  if (decodeAll) limit = 2147483647;
  const st = { p: offset };
  // [true, count, (next offset,) values...], built in place.
  const out: LuaValue[] = decodeAll ? [true, 0] : [true, 0, 0];
  const first = out.length;
  try {
    while (st.p < s.length && out.length - first < limit) out.push(mpDecode(s, st));
  } catch (e) {
    if (e instanceof MpError) return [false, Buffer.from(e.message)];
    throw e;
  }
  if (!decodeAll) out[2] = st.p >= s.length ? -1 : st.p;
  out[1] = out.length - 2;
  return out;
}

/** mpUnpackLua(): not handled here, nothing pushed (RAISE is -1). */
export const MP_OTHER = -2;

/**
 * perf: mpUnpack's result decoded straight onto the running bridge's Lua stack by lua.wasm
 * (native/lua/lua-wasm.c lua_wasm_mp_unpack) from the string's own bytes (heap offset src, len
 * bytes: a Lua string on the stack, which Lua's GC never moves): no JS value per element and one
 * wasm call. The tables are the ones mpUnpack's values become. Returns the values pushed, RAISE
 * with the error on the stack for a NaN or nil key (lua_settable's), or MP_OTHER with the stack
 * as it was for anything but the common case (bad input, deep nesting, more than 8 values): the
 * caller then runs mpUnpack, whose results and error texts stay the reference.
 */
export function mpUnpackLua(vm: LuaVM, src: number, len: number, mode: string, a: number, b: number): number {
  const [limit, offset] = mpRange(mode, a, b);
  if (!(offset >= 0 && offset <= len && limit >= 0)) return MP_OTHER;
  const decodeAll = limit === 0 && offset === 0;
  return vm.M._lua_wasm_mp_unpack(vm.L, src, len, offset, decodeAll ? 2147483647 : limit, decodeAll ? 1 : 0);
}

// ---------------------------------------------------------------- struct

const MAXINTSIZE = 32;

interface StructState { little: boolean; align: number; fmt: string; p: number }

function getNum(h: StructState, df: number): number {
  const m = /^\d+/.exec(h.fmt.slice(h.p));
  if (m === null) return df;
  h.p += m[0].length;
  return Number(m[0]);
}

function optSize(h: StructState, opt: string): number {
  switch (opt) {
    case 'B': case 'b': return 1;
    case 'H': case 'h': return 2;
    case 'L': case 'l': return 8;
    case 'T': return 8;
    case 'f': return 4;
    case 'd': return 8;
    case 'x': return 1;
    case 'c': return getNum(h, 1);
    case 'i': case 'I': {
      const sz = getNum(h, 4);
      if (sz > MAXINTSIZE) throw new StructError(`integral size ${sz} is larger than limit of ${MAXINTSIZE}`);
      return sz;
    }
    default: return 0;
  }
}

class StructError extends Error {}

function gettoalign(len: number, h: StructState, opt: string, size: number): number {
  if (size === 0 || opt === 'c') return 0;
  if (size > h.align) size = h.align;
  return (size - (len & (size - 1))) & (size - 1);
}

function controlOptions(opt: string, h: StructState, fname: string): void {
  switch (opt) {
    case ' ': return;
    case '>': h.little = false; return;
    case '<': h.little = true; return;
    case '!': {
      const a = getNum(h, 8);
      if (a & (a - 1)) throw new StructError('alignment ' + a + ' is not a power of 2');
      h.align = a;
      return;
    }
    default: throw new StructError(`bad argument #1 to '${fname}' (invalid format option '${opt}')`);
  }
}

function putInt(n: number, little: boolean, size: number, out: number[]): void {
  let v = BigInt.asUintN(64, BigInt(Math.trunc(n)));
  const bytes: number[] = [];
  for (let i = 0; i < size; i++) {
    bytes.push(i < 8 ? Number(v & 0xffn) : (n < 0 ? 0xff : 0));
    v >>= 8n;
  }
  if (!little) bytes.reverse();
  out.push(...bytes);
}

function argNum(args: Ser[], i: number, opt: string): number {
  const v = args[i];
  if (typeof v === 'number') return v;
  if (Buffer.isBuffer(v)) {
    const n = Number(v.toString('latin1').trim());
    if (!Number.isNaN(n)) return n;
  }
  throw new StructError(`bad argument #${i + 2} to 'pack' (number expected, got ${v === undefined ? 'no value' : typeName(v)})`);
  void opt;
}

export function structPack(fmt: string, args: Ser[]): LuaValue[] {
  const h: StructState = { little: true, align: 1, fmt, p: 0 };
  const out: number[] = [];
  let ai = 0;
  try {
    while (h.p < fmt.length) {
      const opt = fmt[h.p++];
      const size = optSize(h, opt);
      const toalign = gettoalign(out.length, h, opt, size);
      for (let i = 0; i < toalign; i++) out.push(0);
      switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I': {
          putInt(argNum(args, ai, opt), h.little, size, out);
          ai++;
          break;
        }
        case 'x': out.push(0); break;
        case 'f': case 'd': {
          const v = argNum(args, ai++, opt);
          const dv = new DataView(new ArrayBuffer(size));
          if (size === 4) dv.setFloat32(0, v, h.little);
          else dv.setFloat64(0, v, h.little);
          out.push(...new Uint8Array(dv.buffer));
          break;
        }
        case 'c': case 's': {
          const v = args[ai];
          let s: Buffer;
          if (Buffer.isBuffer(v)) s = v;
          else if (typeof v === 'number') s = Buffer.from(fmtG(v), 'latin1');
          else throw new StructError(`bad argument #${ai + 2} to 'pack' (string expected, got ${v === undefined ? 'no value' : typeName(v)})`);
          ai++;
          let l = s.length;
          if (opt === 'c' && size !== 0) {
            if (l < size) throw new StructError(`bad argument #${ai + 1} to 'pack' (string too short)`);
            l = size;
          }
          for (let i = 0; i < l; i++) out.push(s[i]);
          if (opt === 's') out.push(0);
          break;
        }
        default: controlOptions(opt, h, 'pack');
      }
    }
  } catch (e) {
    if (e instanceof StructError) return [false, Buffer.from(e.message, 'latin1')];
    throw e;
  }
  return [true, Buffer.from(out)];
}

function getInt(s: Buffer, p: number, little: boolean, issigned: boolean, size: number): number {
  let v = 0n;
  for (let i = 0; i < size; i++) {
    const b = little ? s[p + size - 1 - i] : s[p + i];
    v = (v << 8n) | BigInt(b);
  }
  if (issigned && size <= 8) v = BigInt.asIntN(size * 8, v);
  else if (size <= 8) v = BigInt.asUintN(size * 8, v);
  return Number(v);
}

export function structUnpack(fmt: string, s: Buffer, pos: number): LuaValue[] {
  const h: StructState = { little: true, align: 1, fmt, p: 0 };
  let p = Math.trunc(pos) - 1;
  if (p < 0) return [false, Buffer.from("bad argument #3 to 'unpack' (offset must be 1 or greater)")];
  const vals: LuaValue[] = [];
  try {
    while (h.p < fmt.length) {
      const opt = fmt[h.p++];
      let size = optSize(h, opt);
      p += gettoalign(p, h, opt, size);
      if (!(size <= s.length && p <= s.length - size)) throw new StructError("bad argument #2 to 'unpack' (data string too short)");
      switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
          vals.push(getInt(s, p, h.little, opt === opt.toLowerCase(), size));
          break;
        case 'x': break;
        case 'f': case 'd': {
          const dv = new DataView(s.buffer, s.byteOffset + p, size);
          vals.push(size === 4 ? dv.getFloat32(0, h.little) : dv.getFloat64(0, h.little));
          break;
        }
        case 'c': {
          if (size === 0) {
            if (vals.length === 0 || typeof vals[vals.length - 1] !== 'number') throw new StructError('format `c0\' needs a previous size');
            size = vals.pop() as number;
            if (!(size <= s.length && p <= s.length - size)) throw new StructError("bad argument #2 to 'unpack' (data string too short)");
          }
          vals.push(Buffer.from(s.subarray(p, p + size)));
          break;
        }
        case 's': {
          const e = s.indexOf(0, p);
          if (e < 0) throw new StructError('unfinished string in data');
          size = e - p + 1;
          vals.push(Buffer.from(s.subarray(p, e)));
          break;
        }
        default: controlOptions(opt, h, 'unpack');
      }
      p += size;
    }
  } catch (e) {
    if (e instanceof StructError) return [false, Buffer.from(e.message, 'latin1')];
    throw e;
  }
  vals.push(p + 1);
  return [true, vals.length, ...vals];
}

export function structSize(fmt: string): LuaValue[] {
  const h: StructState = { little: true, align: 1, fmt, p: 0 };
  let pos = 0;
  try {
    while (h.p < fmt.length) {
      const opt = fmt[h.p++];
      const size = optSize(h, opt);
      pos += gettoalign(pos, h, opt, size);
      if (opt === 's') throw new StructError("bad argument #1 to 'size' (options 'c0' - 's' not allowed)");
      if (opt === 'c' && size === 0) throw new StructError("bad argument #1 to 'size' (options 'c0' - 's' not allowed)");
      if (size === 0 && !'b B h H l L T i I f d x c'.split(' ').includes(opt)) controlOptions(opt, h, 'size');
      pos += size;
    }
  } catch (e) {
    if (e instanceof StructError) return [false, Buffer.from(e.message, 'latin1')];
    throw e;
  }
  return [true, pos];
}

// ---------------------------------------------------------------- bit

/** LuaBitOp's barg: round to nearest (ties to even, as the 2^52+2^51 trick does) modulo 2^32. */
function tobit(x: number): number {
  if (!Number.isFinite(x)) return 0;
  let r = Math.round(x);
  if (Math.abs(x - Math.trunc(x)) === 0.5) r = 2 * Math.round(x / 2);
  const m = ((r % 4294967296) + 4294967296) % 4294967296;
  return m | 0;
}

export function bitOp(op: string, args: number[]): string {
  const a = tobit(args[0]);
  switch (op) {
    case 'tobit': return String(a);
    case 'bnot': return String(~a);
    case 'band': { let r = a; for (let i = 1; i < args.length; i++) r &= tobit(args[i]); return String(r); }
    case 'bor': { let r = a; for (let i = 1; i < args.length; i++) r |= tobit(args[i]); return String(r); }
    case 'bxor': { let r = a; for (let i = 1; i < args.length; i++) r ^= tobit(args[i]); return String(r); }
    case 'lshift': return String(a << (tobit(args[1]) & 31));
    case 'rshift': return String((a >>> (tobit(args[1]) & 31)) | 0);
    case 'arshift': return String(a >> (tobit(args[1]) & 31));
    case 'rol': { const n = tobit(args[1]) & 31; return String((a << n) | (a >>> (32 - n))); }
    case 'ror': { const n = tobit(args[1]) & 31; return String((a >>> n) | (a << (32 - n))); }
    case 'bswap': {
      const u = a >>> 0;
      return String((((u & 0xff) << 24) | ((u & 0xff00) << 8) | ((u >>> 8) & 0xff00) | (u >>> 24)) | 0);
    }
    case 'tohex': {
      let n = args.length > 1 ? tobit(args[1]) : 8;
      let digits = '0123456789abcdef';
      if (n < 0) {
        n = -n;
        digits = '0123456789ABCDEF';
      }
      if (n > 8) n = 8;
      let u = a >>> 0;
      let s = '';
      for (let i = 0; i < n; i++) {
        s = digits[u & 15] + s;
        u >>>= 4;
      }
      return s;
    }
  }
  return '0';
}
