/**
 * Request decoding for the REST API: path segments and query pairs (percent-decoded to raw
 * bytes, binary-safe) and JSON command bodies, all turned into argument offsets without
 * building JS strings or objects for the arguments.
 *
 * JSON bodies are parsed by hand rather than with JSON.parse so that: arguments stay the exact
 * UTF-8 bytes of the body (no decode/re-encode), numbers keep their original lexeme
 * (12345678901234567890 and 0.1 are passed on unaltered, redis-rest.md §2.3), and strings
 * without escapes are used in place. Escaped strings are unescaped in place: the decoded form
 * is never longer than its escaped source, so it fits inside its own quotes.
 */
import type { Argv } from '../resp/argv.js';

// ------------------------------------------------------------------ percent-decoding

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  c |= 0x20;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/**
 * Percent-decode b[r, e) into b at w (w <= r: decoding only shrinks). `plus`: '+' means a space
 * (query strings); in paths it stays a plus. Returns the new write position, or -1 when an
 * escape is malformed ("%G1", a lone "%").
 */
function decodeInPlace(b: Buffer, r: number, e: number, w: number, plus: boolean): number {
  while (r < e) {
    const c = b[r];
    if (c === 0x25) {
      if (r + 2 >= e) return -1;
      const hi = hexVal(b[r + 1]);
      const lo = hexVal(b[r + 2]);
      if (hi < 0 || lo < 0) return -1;
      b[w++] = (hi << 4) | lo;
      r += 3;
    } else {
      b[w++] = plus && c === 0x2b ? 0x20 : c;
      r++;
    }
  }
  return w;
}

/**
 * Split the request path (raw, as written on the request line) on '/' and percent-decode each
 * segment into `buf` from offset 0, pushing one argument per segment. Splitting comes first,
 * so "%2F" is a slash inside an argument. Empty segments are empty arguments (the only way to
 * pass "" in a path). `buf` must hold 3 * url.length bytes. Returns the bytes used, or -1.
 */
export function decodePath(url: string, buf: Buffer, argv: Argv): number {
  const n = buf.utf8Write(url, 0);
  let r = url.charCodeAt(0) === 0x2f ? 1 : 0;
  let w = 0;
  for (;;) {
    const e = find(buf, 0x2f, r, n);
    const start = w;
    w = decodeInPlace(buf, r, e, w, false);
    if (w < 0) return -1;
    argv.push(start, w);
    if (e >= n) return w;
    r = e + 1;
  }
}

/**
 * Decode a query string ("a=1&b&c=") into arguments: `name=value` gives two arguments, a bare
 * `name` one, in order; empty parts are skipped and `_token` (authentication) never becomes an
 * argument. Raw bytes are written at `at` and decoded in place. `buf` must hold
 * at + 3 * query.length bytes. Returns the new end of the used bytes, or -1.
 */
export function decodeQuery(query: string, buf: Buffer, at: number, argv: Argv): number {
  const n = at + buf.utf8Write(query, at);
  let r = at;
  let w = at;
  while (r < n) {
    const amp = find(buf, 0x26, r, n);
    if (amp > r) {
      let eq = find(buf, 0x3d, r, amp);
      if (eq === amp) eq = -1;
      const nameEnd = eq < 0 ? amp : eq;
      const s = w;
      const nw = decodeInPlace(buf, r, nameEnd, w, true);
      if (nw < 0) return -1;
      if (isToken(buf, s, nw)) {
        w = s; // authentication parameter: dropped
      } else {
        argv.push(s, nw);
        w = nw;
        if (eq >= 0) {
          const vs = w;
          w = decodeInPlace(buf, eq + 1, amp, w, true);
          if (w < 0) return -1;
          argv.push(vs, w);
        }
      }
    }
    r = amp + 1;
  }
  return w;
}

/** Index of byte c in b[i, e), or e. */
function find(b: Buffer, c: number, i: number, e: number): number {
  while (i < e && b[i] !== c) i++;
  return i;
}

function isToken(b: Buffer, s: number, e: number): boolean {
  return e - s === 6 && b[s] === 0x5f && b[s + 1] === 0x74 && b[s + 2] === 0x6f &&
    b[s + 3] === 0x6b && b[s + 4] === 0x65 && b[s + 5] === 0x6e; // _token
}

/** The `_token` query parameter (decoded), or '' when absent. Only on the auth path. */
export function queryToken(query: string): string {
  let i = query.startsWith('_token=') ? 0 : query.indexOf('&_token=');
  if (i < 0) return '';
  i += i === 0 ? 7 : 8;
  let e = query.indexOf('&', i);
  if (e < 0) e = query.length;
  const v = query.slice(i, e);
  try {
    return decodeURIComponent(v.replace(/\+/g, ' '));
  } catch {
    return v;
  }
}

// ------------------------------------------------------------------ JSON bodies

export const JSON_ERR = {
  SINGLE_SHAPE: 'ERR the request body must be a JSON array of strings and numbers, like ["SET","key","value"]',
  BATCH_SHAPE: 'ERR the request body must be a JSON array of commands, each an array of strings and numbers, like [["SET","key","value"],["GET","key"]]',
  ARG_TYPE: 'ERR command arguments must be strings, numbers or booleans (not null, objects or nested arrays)',
  EMPTY_COMMAND: 'ERR empty command',
  EMPTY_BATCH: 'ERR empty pipeline: the request body holds no command',
} as const;

/**
 * Commands parsed from one body: argument offsets (pairs) into the body buffer and, per
 * command, the index of its first pair.
 */
export class CommandList {
  offs = new Int32Array(64);
  pairs = 0;
  firsts: number[] = [];
  count = 0;
  error: string | null = null;

  reset(): void {
    this.pairs = 0;
    this.count = 0;
    this.error = null;
  }

  private push(s: number, e: number): void {
    if (this.pairs * 2 + 2 > this.offs.length) {
      const o = new Int32Array(this.offs.length * 2);
      o.set(this.offs);
      this.offs = o;
    }
    this.offs[this.pairs * 2] = s;
    this.offs[this.pairs * 2 + 1] = e;
    this.pairs++;
  }

  /** Load command i into argv (which must already point at the body buffer). */
  load(i: number, argv: Argv, buf: Buffer): void {
    argv.reset(buf);
    const from = this.firsts[i];
    const to = i + 1 < this.count ? this.firsts[i + 1] : this.pairs;
    const o = this.offs;
    for (let p = from; p < to; p++) argv.push(o[p * 2], o[p * 2 + 1]);
  }

  /**
   * Parse b[s, e): one command (`batch` false) or an array of commands. Returns false with
   * `error` set on malformed input; nothing is executed before the whole body has parsed.
   */
  parse(b: Buffer, s: number, e: number, batch: boolean): boolean {
    this.reset();
    let i = ws(b, s, e);
    if (i >= e || b[i] !== 0x5b) return this.fail(b, i, e, batch ? JSON_ERR.BATCH_SHAPE : JSON_ERR.SINGLE_SHAPE);
    if (!batch) {
      i = this.command(b, i, e);
    } else {
      i = ws(b, i + 1, e);
      if (i < e && b[i] === 0x5d) {
        i++;
        if (ws(b, i, e) === e) this.error = JSON_ERR.EMPTY_BATCH;
        else return this.fail(b, i, e, null);
        return false;
      }
      for (;;) {
        if (i >= e || b[i] !== 0x5b) return this.fail(b, i, e, JSON_ERR.BATCH_SHAPE);
        i = this.command(b, i, e);
        if (i < 0) return false;
        i = ws(b, i, e);
        if (i < e && b[i] === 0x2c) {
          i = ws(b, i + 1, e);
          continue;
        }
        if (i < e && b[i] === 0x5d) {
          i++;
          break;
        }
        return this.fail(b, i, e, null);
      }
    }
    if (i < 0) return false;
    i = ws(b, i, e);
    if (i !== e) return this.fail(b, i, e, null);
    return true;
  }

  /** One command array starting at b[i] === '['. Returns the index after ']' or -1. */
  private command(b: Buffer, i: number, e: number): number {
    i = ws(b, i + 1, e);
    if (i < e && b[i] === 0x5d) {
      this.error = JSON_ERR.EMPTY_COMMAND;
      return -1;
    }
    this.firsts[this.count++] = this.pairs;
    for (;;) {
      if (i >= e) return this.failN(b, i, e);
      const c = b[i];
      if (c === 0x22) {
        i = this.string(b, i, e);
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        i = this.number(b, i, e);
      } else if (c === 0x74 && lit(b, i, e, 'true')) {
        this.push(i, i + 4);
        i += 4;
      } else if (c === 0x66 && lit(b, i, e, 'false')) {
        this.push(i, i + 5);
        i += 5;
      } else if (c === 0x6e && lit(b, i, e, 'null')) {
        this.error = JSON_ERR.ARG_TYPE;
        return -1;
      } else if (c === 0x5b || c === 0x7b) {
        this.error = JSON_ERR.ARG_TYPE;
        return -1;
      } else {
        return this.failN(b, i, e);
      }
      if (i < 0) return -1;
      i = ws(b, i, e);
      if (i < e && b[i] === 0x2c) {
        i = ws(b, i + 1, e);
        continue;
      }
      if (i < e && b[i] === 0x5d) return i + 1;
      return this.failN(b, i, e);
    }
  }

  /** A JSON string at b[i] === '"'. Pushes its decoded bytes; returns the index after it. */
  private string(b: Buffer, i: number, e: number): number {
    const start = i + 1;
    let r = start;
    for (;;) {
      if (r >= e) return this.failN(b, r, e);
      const c = b[r];
      if (c === 0x22) {
        this.push(start, r);
        return r + 1;
      }
      if (c === 0x5c) break;
      if (c < 0x20) return this.failN(b, r, e);
      r++;
    }
    // Escapes: decode in place from the first backslash on.
    let w = r;
    for (;;) {
      if (r >= e) return this.failN(b, r, e);
      const c = b[r];
      if (c === 0x22) {
        this.push(start, w);
        return r + 1;
      }
      if (c < 0x20) return this.failN(b, r, e);
      if (c !== 0x5c) {
        b[w++] = c;
        r++;
        continue;
      }
      if (r + 1 >= e) return this.failN(b, r, e);
      const x = b[r + 1];
      r += 2;
      switch (x) {
        case 0x22: b[w++] = 0x22; break;
        case 0x5c: b[w++] = 0x5c; break;
        case 0x2f: b[w++] = 0x2f; break;
        case 0x62: b[w++] = 0x08; break;
        case 0x66: b[w++] = 0x0c; break;
        case 0x6e: b[w++] = 0x0a; break;
        case 0x72: b[w++] = 0x0d; break;
        case 0x74: b[w++] = 0x09; break;
        case 0x75: {
          let cp = hex4(b, r, e);
          if (cp < 0) return this.failN(b, r, e);
          r += 4;
          if (cp >= 0xd800 && cp <= 0xdbff) {
            const lo = r + 1 < e && b[r] === 0x5c && b[r + 1] === 0x75 ? hex4(b, r + 2, e) : -1;
            if (lo >= 0xdc00 && lo <= 0xdfff) {
              cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
              r += 6;
            } else {
              cp = 0xfffd; // lone high surrogate: what UTF-8 encoding of the JS string gives
            }
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            cp = 0xfffd;
          }
          w = putUtf8(b, w, cp);
          break;
        }
        default:
          return this.failN(b, r - 1, e);
      }
    }
  }

  /** A JSON number: validated, kept as its original text. */
  private number(b: Buffer, i: number, e: number): number {
    const start = i;
    if (b[i] === 0x2d) i++;
    if (i < e && b[i] === 0x30) {
      i++;
    } else if (i < e && b[i] >= 0x31 && b[i] <= 0x39) {
      while (i < e && b[i] >= 0x30 && b[i] <= 0x39) i++;
    } else {
      return this.failN(b, i, e);
    }
    if (i < e && b[i] === 0x2e) {
      i++;
      const d = i;
      while (i < e && b[i] >= 0x30 && b[i] <= 0x39) i++;
      if (i === d) return this.failN(b, i, e);
    }
    if (i < e && (b[i] === 0x65 || b[i] === 0x45)) {
      i++;
      if (i < e && (b[i] === 0x2b || b[i] === 0x2d)) i++;
      const d = i;
      while (i < e && b[i] >= 0x30 && b[i] <= 0x39) i++;
      if (i === d) return this.failN(b, i, e);
    }
    this.push(start, i);
    return i;
  }

  private failN(b: Buffer, i: number, e: number): number {
    this.fail(b, i, e, null);
    return -1;
  }

  /** Record a parse error: `shape` when the JSON is of the wrong kind, else a syntax error. */
  private fail(b: Buffer, i: number, e: number, shape: string | null): false {
    if (this.error !== null) return false;
    if (shape !== null && i < e && looksLikeJson(b[i])) {
      this.error = shape;
    } else if (i >= e) {
      this.error = shape ?? 'ERR invalid JSON in the request body: unexpected end of input';
    } else {
      const c = b[i];
      const shown = c >= 0x20 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `byte 0x${c.toString(16).padStart(2, '0')}`;
      this.error = `ERR invalid JSON in the request body: unexpected ${shown} at position ${i}`;
    }
    return false;
  }
}

function looksLikeJson(c: number): boolean {
  return c === 0x7b || c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e || c === 0x5b;
}

function ws(b: Buffer, i: number, e: number): number {
  while (i < e) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

function lit(b: Buffer, i: number, e: number, word: string): boolean {
  if (i + word.length > e) return false;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return false;
  return true;
}

function hex4(b: Buffer, i: number, e: number): number {
  if (i + 4 > e) return -1;
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const h = hexVal(b[i + k]);
    if (h < 0) return -1;
    v = (v << 4) | h;
  }
  return v;
}

function putUtf8(b: Buffer, w: number, cp: number): number {
  if (cp < 0x80) {
    b[w++] = cp;
  } else if (cp < 0x800) {
    b[w++] = 0xc0 | (cp >> 6);
    b[w++] = 0x80 | (cp & 63);
  } else if (cp < 0x10000) {
    b[w++] = 0xe0 | (cp >> 12);
    b[w++] = 0x80 | ((cp >> 6) & 63);
    b[w++] = 0x80 | (cp & 63);
  } else {
    b[w++] = 0xf0 | (cp >> 18);
    b[w++] = 0x80 | ((cp >> 12) & 63);
    b[w++] = 0x80 | ((cp >> 6) & 63);
    b[w++] = 0x80 | (cp & 63);
  }
  return w;
}
