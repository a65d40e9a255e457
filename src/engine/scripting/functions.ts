/**
 * Function libraries (FUNCTION LOAD) and the EVAL script cache as the engine thread keeps them:
 * names, flags, descriptions and source code. The compiled Lua lives in the worker; these
 * structures are what survives a restart of the worker or of the server.
 *
 * Persistence plugs in through `serialize()` / `restore()` of FunctionStore (the FUNCTION DUMP
 * payload: a sequence of [0xf5, RDB length, code] records, the RDB version (10, Redis 7.0) and a
 * CRC-64 (Jones) of everything before it, as Redis's own payload with uncompressed strings).
 * Redis keeps functions across restarts (RDB/AOF) and does not keep the EVAL script cache.
 */
import { crc64 as crc64Of } from '../../rdb/crc64.js';
import { lzfDecompress } from '../../rdb/lzf.js';
import { RdbWriter } from '../../rdb/writer.js';

export const SCRIPT_FLAGS = ['no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'] as const;

export interface FunctionInfo {
  readonly name: string;
  readonly description: string | null;
  readonly flags: readonly string[];
  readonly library: Library;
}

export interface Library {
  readonly name: string;
  readonly code: Buffer;
  readonly functions: Map<string, FunctionInfo>;
}

/** The result of parsing a script or library's first line. */
export interface Shebang {
  /** Engine and options were given ("#!lua ..."). */
  readonly present: boolean;
  readonly name: string | null;
  readonly flags: readonly string[];
  /** The code to compile: the shebang line removed, its line feed kept (line numbers stay). */
  readonly body: Buffer;
}

/**
 * Parse "#!lua [name=<lib>] [flags=a,b]". `forFunction` accepts name= (FUNCTION LOAD); EVAL
 * accepts flags= only. Returns an error text (without "ERR ") or the parsed header.
 */
export function parseShebang(code: Buffer, forFunction: boolean): Shebang | string {
  if (code.length < 2 || code[0] !== 0x23 || code[1] !== 0x21) {
    if (forFunction) return 'Missing library metadata';
    return { present: false, name: null, flags: [], body: code };
  }
  const eol = code.indexOf(0x0a);
  if (eol < 0) return forFunction ? 'Invalid library metadata' : 'Invalid script shebang';
  const parts = code.toString('latin1', 0, eol).split(/[ \t\r]+/).filter((p) => p !== '');
  if (parts.length === 0) return forFunction ? 'Invalid library metadata' : 'Invalid engine in script shebang';
  const body = code.subarray(eol);
  if (forFunction) {
    let name: string | null = null;
    for (const p of parts.slice(1)) {
      if (p.slice(0, 5).toLowerCase() === 'name=') {
        if (name !== null) return 'Invalid metadata value, name argument was given multiple times';
        name = p.slice(5);
        continue;
      }
      return `Invalid metadata value given: ${p}`;
    }
    if (name === null) return 'Library name was not given';
    const engine = parts[0].slice(2);
    if (engine.toUpperCase() !== 'LUA') return `Engine '${engine}' not found`;
    return { present: true, name, flags: [], body };
  }
  if (parts[0] !== '#!lua') return `Unexpected engine in script shebang: ${parts[0]}`;
  const flags: string[] = [];
  for (const p of parts.slice(1)) {
    if (!p.startsWith('flags=')) return `Unknown lua shebang option: ${p}`;
    const list = p.slice(6);
    if (list === '') continue;
    for (const f of list.split(',')) {
      if (!(SCRIPT_FLAGS as readonly string[]).includes(f)) return `Unexpected flag in script shebang: ${f}`;
      flags.push(f);
    }
  }
  return { present: true, name: null, flags, body };
}

export class FunctionStore {
  readonly libraries = new Map<string, Library>();
  /** By lower-cased name: function names are case-insensitive in Redis (library names are not). */
  readonly functions = new Map<string, FunctionInfo>();

  getFunction(name: string): FunctionInfo | undefined {
    return this.functions.get(name.toLowerCase());
  }

  get functionCount(): number {
    return this.functions.size;
  }

  add(lib: Library): void {
    this.libraries.set(lib.name, lib);
    for (const f of lib.functions.values()) this.functions.set(f.name.toLowerCase(), f);
  }

  delete(name: string): Library | undefined {
    const lib = this.libraries.get(name);
    if (lib === undefined) return undefined;
    this.libraries.delete(name);
    for (const f of lib.functions.keys()) this.functions.delete(f.toLowerCase());
    return lib;
  }

  clear(): void {
    this.libraries.clear();
    this.functions.clear();
  }

  /** FUNCTION DUMP payload (also the persistence format). */
  serialize(): Buffer {
    const parts: Buffer[] = [];
    for (const lib of this.libraries.values()) {
      parts.push(Buffer.from([0xf5]), rdbLen(lib.code.length), lib.code);
    }
    parts.push(Buffer.from([10, 0]));
    const body = Buffer.concat(parts);
    const crc = Buffer.alloc(8);
    crc.writeBigUInt64LE(crc64(body));
    return Buffer.concat([body, crc]);
  }
}

/** The library codes of a FUNCTION DUMP payload, or null if it is not one of ours / Redis's uncompressed form. */
export function parsePayload(p: Buffer): Buffer[] | null {
  if (p.length < 10) return null;
  const body = p.subarray(0, p.length - 8);
  const version = body.readUInt16LE(body.length - 2);
  if (version > 10) return null;
  if (crc64(body) !== p.readBigUInt64LE(p.length - 8)) return null;
  const codes: Buffer[] = [];
  let i = 0;
  const end = body.length - 2;
  while (i < end) {
    if (body[i] !== 0xf5) return null;
    i++;
    const r = readRdbString(body, i);
    if (r === null) return null;
    codes.push(r.value);
    i = r.next;
  }
  return codes;
}

function rdbLen(n: number): Buffer {
  const w = new RdbWriter(9);
  w.len(n);
  return Buffer.from(w.view());
}

/** An RDB string: plain length-prefixed, or LZF-compressed (as Redis writes big strings). */
function readRdbString(b: Buffer, i: number): { value: Buffer; next: number } | null {
  const len = (at: number): { n: number; next: number; enc: number } | null => {
    if (at >= b.length) return null;
    const t = b[at] >> 6;
    if (t === 0) return { n: b[at] & 0x3f, next: at + 1, enc: -1 };
    if (t === 1) return at + 1 < b.length ? { n: ((b[at] & 0x3f) << 8) | b[at + 1], next: at + 2, enc: -1 } : null;
    if (t === 2) {
      if (b[at] === 0x80) return at + 4 < b.length ? { n: b.readUInt32BE(at + 1), next: at + 5, enc: -1 } : null;
      if (b[at] === 0x81) return at + 8 < b.length ? { n: Number(b.readBigUInt64BE(at + 1)), next: at + 9, enc: -1 } : null;
      return null;
    }
    return { n: 0, next: at + 1, enc: b[at] & 0x3f };
  };
  const h = len(i);
  if (h === null) return null;
  if (h.enc === -1) {
    if (h.next + h.n > b.length) return null;
    return { value: Buffer.from(b.subarray(h.next, h.next + h.n)), next: h.next + h.n };
  }
  if (h.enc === 3) {
    const clen = len(h.next);
    if (clen === null) return null;
    const ulen = len(clen.next);
    if (ulen === null || ulen.next + clen.n > b.length) return null;
    const out = lzfDecompress(b, ulen.next, ulen.next + clen.n, ulen.n);
    if (out === null) return null;
    return { value: out, next: ulen.next + clen.n };
  }
  return null;
}

/** CRC-64/Jones as Redis's crc64.c (src/rdb/crc64.ts). */
export function crc64(b: Uint8Array): bigint {
  return crc64Of(b).value;
}
