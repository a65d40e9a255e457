/**
 * The Lua 5.1 virtual machine of the scripting worker: the real Lua 5.1.5 compiled to
 * WebAssembly by us (native/lua/, loaded by lua-wasm.ts).
 *
 *  - JS functions callable from Lua ("bridges"): C closures in the registry (__slot<i>) that
 *    call handlers[i]. A bridge reads its arguments in place or with lua_tolstring (exact
 *    bytes, length through a pointer) and returns its results on the stack.
 *
 *  - JS values pushed into Lua: small ones on the stack (pushSmall); others by a Lua 5.1
 *    binary chunk (bytecode) whose constants are the strings and numbers and whose code builds
 *    the tables; luaL_loadbuffer loads it (binary safe, no escaping) and the caller runs it.
 *    Values going the other way are serialised by Lua code (see prelude.ts) into one string
 *    that JS reads with lua_tolstring.
 *
 * Two VMs exist per server: the engine thread's, where scripts run first, and the scripting
 * worker's, where long scripts are moved (runtime.ts, host.ts, worker.ts).
 */
import type { Argv } from '../../resp/argv.js';
import { instantiateLua, type LuaModule } from './lua-wasm.js';

export const LUA_REGISTRYINDEX = -10000;
export const LUA_GLOBALSINDEX = -10002;
export const LUA_TNIL = 0;
export const LUA_TBOOLEAN = 1;
export const LUA_TNUMBER = 3;
export const LUA_TSTRING = 4;
export const LUA_TTABLE = 5;

/** Bytes for the digits of a redis.call's integer arguments (LuaVM.stringArgs). */
const NUM_AREA = 1024;

/** Marker for the cjson null value in a value tree (pushed from the chunk's first parameter). */
export const LUA_NULL: unique symbol = Symbol('lua-null');

/**
 * A value tree pushed into Lua: Uint8Array = string, a JS string = the string of its latin1
 * bytes (one byte per char: replies the commands give as text), number, boolean, null = nil, LUA_NULL =
 * the first parameter of the chunk (cjson.null), arrays = sequences, {err}/{ok} = Redis error
 * and status tables, {h: [k, v, k, v...]} = a table with the given pairs.
 */
export type LuaValue =
  | Uint8Array | string | number | boolean | null | typeof LUA_NULL | LuaValue[]
  | { err: Uint8Array } | { ok: Uint8Array } | { h: LuaValue[] };

/**
 * A JS function called from Lua: gets the state, returns the number of results it pushed, or
 * RAISE to raise the value on the stack top as a Lua error (lua_error, called by the bridge's
 * C side after this JS frame has returned: a JS exception through JS frames costs several µs).
 */
export type Bridge = (L: number) => number;

export const RAISE = -1;

/** Host bridges of a state (registry __slot0 ..): enough for the runtime's. */
const BRIDGES = 22;

export class LuaVM {
  readonly M: LuaModule;
  /**
   * The state the helpers below work on: the main state, or while a bridge runs, the state
   * (thread) that called it (a redis.call made inside a coroutine pushes its reply there).
   */
  L: number;
  /** The main state (replaced by renew()). */
  main: number;
  /** The state panicked: it cannot be used any more. */
  dead = false;
  private heap: Uint8Array;
  private scratch = 0;
  private scratchSize = 0;
  private readonly lenp: number;
  /** Interned C strings (field names, chunk names) allocated once. */
  private readonly cstrs = new Map<string, number>();
  /** Registry __slot<k> calls handlers[k]. */
  private readonly handlers: Bridge[] = [];
  /** Bridges not yet given a slot. */
  private freeSlots: string[] = [];

  constructor() {
    // A Lua panic calls exit(): it must not end the process (or the worker thread) but throw
    // to the caller, who drops this VM (dead).
    this.M = instantiateLua({
      bridge: (k: number, L: number) => {
        const h = this.handlers[k];
        if (h === undefined) throw new Error(`lua: no bridge ${k}`);
        const prev = this.L;
        this.L = L;
        try {
          return h(L);
        } finally {
          this.L = prev;
        }
      },
      exit: (status: number) => {
        this.dead = true;
        throw new Error(`Lua state aborted (exit ${status})`);
      },
    });
    this.heap = this.M.HEAPU8;
    this.lenp = this.M._malloc(8);
    this.numArea = this.M._malloc(NUM_AREA);
    this.L = this.main = this.newState();
    this.freeSlots = Array.from({ length: BRIDGES }, (_, i) => `__slot${i}`);
    this.numKey = this.cstr('__num');
    this.direct = this.probeLayout();
    this.stackDirect = this.direct && this.probeStack();
    this.nullKey = this.cstr('__null');
  }

  // ---------------------------------------------------------------- numbers through memory

  /**
   * perf: numbers are read in place (no lua_tonumber call per value). Lua 5.1's layout on
   * wasm32 is fixed (lua_State.top at offset 8; a TValue is 16 bytes: the double, then the
   * type tag). probeLayout() checks this layout once; if it does not hold (another build),
   * `direct` is false and callers use the text forms.
   */
  readonly direct: boolean;
  private readonly numKey: number;
  private f64: Float64Array<ArrayBufferLike> = new Float64Array(0);

  private get heapF64(): Float64Array {
    // perf: a view's .buffer costs ~40 ns; growing the memory detaches the old buffer, which
    // leaves its views empty.
    if (this.f64.length === 0) this.f64 = new Float64Array(this.M.HEAPU8.buffer);
    return this.f64;
  }

  private probeLayout(): boolean {
    const M = this.M;
    const L = this.L;
    const top0 = M.HEAPU32[(L + 8) >> 2];
    M._lua_getfield(L, LUA_REGISTRYINDEX, this.numKey);
    const top = M.HEAPU32[(L + 8) >> 2];
    const ok = top === top0 + 16 && this.heapF64[(top - 16) >> 3] === 0.5 && M.HEAPU32[(top - 8) >> 2] === LUA_TNUMBER;
    if (ok) this.heapF64[(top - 16) >> 3] = -1234.75;
    // Read back through Lua: the value pushed is that number.
    const back = ok && M._lua_type(L, -1) === LUA_TNUMBER && this.latin1(-1) === '-1234.75';
    M._lua_settop(L, -2);
    return back && M.HEAPU32[(L + 8) >> 2] === top0;
  }

  /**
   * perf: a redis.call's arguments read in place, without a lua_type and a lua_tolstring call
   * per argument. Lua 5.1 on wasm32: lua_State.base at offset 12 (the running C function's
   * first argument), a TValue's type tag at +8, a string's TString pointer at +0, its length at
   * TString+12 and its bytes at TString+16. probeStack() checks this against the C API once.
   */
  readonly stackDirect: boolean;

  private probeStack(): boolean {
    const M = this.M;
    const L = this.L;
    M._lua_settop(L, 0);
    this.pushString('abc');
    this.pushNumber(7);
    this.pushString('hello');
    const u32 = this.M.HEAPU32;
    const base = u32[(L + 12) >> 2];
    let ok = u32[(L + 8) >> 2] === base + 48;
    for (let i = 1; ok && i <= 3; i++) {
      const tv = base + (i - 1) * 16;
      ok = u32[(tv + 8) >> 2] === M._lua_type(L, i);
      if (ok && i !== 2) {
        const ts = u32[tv >> 2];
        ok = M._lua_tolstring(L, i, this.lenp) === ts + 16 && u32[(ts + 12) >> 2] === M.HEAPU32[this.lenp >> 2];
      }
    }
    M._lua_settop(L, 0);
    return ok;
  }

  /**
   * The running bridge's arguments into argv (reset over heapBuffer()) when there are n >= 1 of
   * them, all strings or integers, and the stack layout is known (stackDirect); otherwise false.
   * perf: an integer (BullMQ passes scores, timestamps, counts) becomes its digits in numArea,
   * what Redis's "%.17g" makes of a safe integer, with no Lua string made for it; fractions,
   * -0 and larger numbers return false (the caller converts them as before). The offsets are
   * valid while the arguments stay on the stack and until the next call.
   */
  stringArgs(argv: Argv): boolean {
    if (!this.stackDirect) return false;
    const u32 = this.M.HEAPU32;
    const L = this.L;
    const base = u32[(L + 12) >> 2];
    const n = (u32[(L + 8) >> 2] - base) >> 4;
    if (n === 0) return false;
    const hb = this.heapBuffer();
    argv.reset(hb);
    let at = this.numArea;
    for (let i = 0, tv = base; i < n; i++, tv += 16) {
      const t = u32[(tv + 8) >> 2];
      if (t === LUA_TSTRING) {
        const ts = u32[tv >> 2];
        argv.push(ts + 16, ts + 16 + u32[(ts + 12) >> 2]);
      } else if (t === LUA_TNUMBER) {
        const x = this.heapF64[tv >> 3];
        if (!Number.isSafeInteger(x) || Object.is(x, -0) || at + 17 > this.numArea + NUM_AREA) return false;
        const d = String(x);
        for (let j = 0; j < d.length; j++) hb[at + j] = d.charCodeAt(j);
        argv.push(at, at + d.length);
        at += d.length;
      } else {
        return false;
      }
    }
    return true;
  }

  /**
   * Stack slots i and j (> 0) of the running bridge hold the same value, compared as lua_rawequal
   * does for reference types: the type tag and the object pointer (only when stackDirect).
   */
  sameRef(i: number, j: number): boolean {
    const u32 = this.M.HEAPU32;
    const base = u32[(this.L + 12) >> 2];
    const a = base + (i - 1) * 16;
    const b = base + (j - 1) * 16;
    return u32[(a + 8) >> 2] === u32[(b + 8) >> 2] && u32[a >> 2] === u32[b >> 2];
  }

  /** Where stringArgs() writes integer arguments' digits (NUM_AREA bytes of the heap). */
  private readonly numArea: number;

  /** Push number x. */
  pushNumber(x: number): void {
    this.M._lua_pushnumber(this.L, x);
  }

  /** The number at negative stack index i (only when `direct`; the value must be a number). */
  numberAt(i: number): number {
    return this.heapF64[(this.M.HEAPU32[(this.L + 8) >> 2] + i * 16) >> 3];
  }

  /**
   * t[k] where t is the table at stack index t (> 0) and t[k] a number (only when `direct`):
   * the serialiser's numbers (prelude.ts ser_any) read without a text conversion.
   */
  tableNumber(t: number, k: number): number {
    const M = this.M;
    this.pushNumber(k);
    M._lua_gettable(this.L, t);
    const x = this.numberAt(-1);
    M._lua_settop(this.L, -2);
    return x;
  }

  /** The number at stack index i (> 0; only when `direct`; the value must be a number). */
  numberArg(i: number): number {
    const M = this.M;
    M._lua_pushvalue(this.L, i);
    const x = this.numberAt(-1);
    M._lua_settop(this.L, -2);
    return x;
  }

  // ---------------------------------------------------------------- memory helpers

  private get u8(): Uint8Array {
    // The heap is replaced when wasm memory grows.
    if (this.heap !== this.M.HEAPU8) this.heap = this.M.HEAPU8;
    return this.heap;
  }

  /** A scratch area of at least n bytes (the module exports malloc but no free: grow by doubling). */
  private buffer(n: number): number {
    if (n > this.scratchSize) {
      let size = Math.max(65536, this.scratchSize * 2);
      while (size < n) size *= 2;
      this.scratch = this.M._malloc(size);
      if (this.scratch === 0) throw new Error('out of memory');
      this.scratchSize = size;
    }
    return this.scratch;
  }

  /** A NUL-terminated copy of a short ASCII string, kept for the life of the VM. */
  cstr(s: string): number {
    let p = this.cstrs.get(s);
    if (p === undefined) {
      p = this.M._malloc(s.length + 1);
      const u8 = this.u8;
      for (let i = 0; i < s.length; i++) u8[p + i] = s.charCodeAt(i);
      u8[p + s.length] = 0;
      this.cstrs.set(s, p);
    }
    return p;
  }

  /** The exact bytes of the string (or number, converted by Lua) at stack index i (a copy). */
  bytes(i: number): Uint8Array {
    const p = this.M._lua_tolstring(this.L, i, this.lenp);
    if (p === 0) return new Uint8Array(0);
    const n = this.M.HEAPU32[this.lenp >> 2];
    return this.u8.slice(p, p + n);
  }

  /**
   * bytes(i) as a Buffer for use on this thread (perf: small ones come from Node's pool, so
   * never post one to another thread: its whole pool would be copied).
   */
  buf(i: number): Buffer {
    const p = this.M._lua_tolstring(this.L, i, this.lenp);
    if (p === 0) return Buffer.alloc(0);
    const n = this.M.HEAPU32[this.lenp >> 2];
    const b = Buffer.allocUnsafe(n);
    this.heapBuffer().copy(b, 0, p, p + n);
    return b;
  }

  /**
   * The string (or number, converted by Lua) at stack index i, in place: its offset in the heap
   * (see heap()); its length is then in strLen. Valid while the value stays on the stack.
   */
  strPtr(i: number): number {
    const p = this.M._lua_tolstring(this.L, i, this.lenp);
    this.strLen = p === 0 ? 0 : this.M.HEAPU32[this.lenp >> 2];
    return p;
  }

  strLen = 0;

  /**
   * The string at stack index i as a Buffer over the heap, in place (no copy); empty when it is
   * not a string or number. Valid until the next call into Lua (see heapBuffer()).
   */
  view(i: number): Buffer {
    const p = this.strPtr(i);
    return p === 0 ? EMPTY_BUF : this.heapBuffer().subarray(p, p + this.strLen);
  }

  private heapBuf: Buffer = Buffer.alloc(0);
  /** The HEAPU8 that heapBuf covers. */
  private heapBufOf: Uint8Array | null = null;

  /** A Buffer over the whole wasm heap (replaced when the memory grows: do not keep it across Lua calls). */
  heapBuffer(): Buffer {
    const u8 = this.M.HEAPU8;
    if (this.heapBufOf !== u8) {
      this.heapAB = u8.buffer;
      this.heapBuf = Buffer.from(this.heapAB, u8.byteOffset, u8.length);
      this.heapBufOf = u8;
    }
    return this.heapBuf;
  }

  /** The ArrayBuffer of heapBuffer() (perf: a view's .buffer is not free). */
  get heapArrayBuffer(): ArrayBufferLike {
    this.heapBuffer();
    return this.heapAB;
  }

  private heapAB: ArrayBufferLike = this.heapBuf.buffer;

  /** Push bytes src[s, e) (NULs included). */
  pushBytes(src: Uint8Array, s: number, e: number): void {
    const p = this.buffer(e - s);
    const u8 = this.u8;
    if (e - s < 64) for (let i = s; i < e; i++) u8[p + i - s] = src[i];
    else u8.set(src.subarray(s, e), p);
    this.M._lua_pushlstring(this.L, p, e - s);
  }

  /**
   * Arguments argv[first, count) for a run, written into the heap once and pushed by one wasm
   * call (lua_wasm_args): nk < 0, as count - first strings on the stack (room checked by the
   * caller); else as two tables, KEYS (the first nk) and ARGV (the rest).
   */
  pushArgs(argv: Argv, first: number, nk: number): void {
    const n = argv.count - first;
    const st = argv.start;
    const en = argv.end;
    const s0 = st[first];
    // perf: arguments in order with small gaps between them (the RESP parser's: each one's
    // header) are copied as one block, gaps included; else one by one, packed.
    let total = 0;
    let inOrder = true;
    for (let i = first; i < argv.count; i++) {
      total += en[i] - st[i];
      if (i > first && st[i] < en[i - 1]) inOrder = false;
    }
    const span = en[argv.count - 1] - s0;
    const block = inOrder && span <= total + 32 * n;
    const p = this.buffer(8 * n + (block ? span : total));
    const at = this.M.HEAPU32;
    const base = p + 8 * n;
    const src = argv.buf;
    if (block) {
      for (let i = 0; i < n; i++) {
        at[(p >> 2) + 2 * i] = st[first + i] - s0;
        at[(p >> 2) + 2 * i + 1] = en[first + i] - st[first + i];
      }
      if (span <= 64) {
        const u8 = this.u8;
        for (let j = 0; j < span; j++) u8[base + j] = src[s0 + j];
      } else src.copy(this.heapBuffer(), base, s0, s0 + span);
    } else {
      const u8 = this.u8;
      let d = 0;
      for (let i = 0; i < n; i++) {
        const s = st[first + i];
        const e = en[first + i];
        at[(p >> 2) + 2 * i] = d;
        at[(p >> 2) + 2 * i + 1] = e - s;
        for (let j = s; j < e; j++) u8[base + d++] = src[j];
      }
    }
    this.M._lua_wasm_args(this.L, p, base, n, nk);
  }

  /** Push latin1 text (one byte per char). */
  pushLatin1(s: string): void {
    const n = s.length;
    const p = this.buffer(n);
    if (n < 32) {
      const u8 = this.u8;
      for (let i = 0; i < n; i++) u8[p + i] = s.charCodeAt(i);
    } else {
      this.heapBuffer().latin1Write(s, p, n);
    }
    this.M._lua_pushlstring(this.L, p, n);
  }

  /** The string at stack index i as latin1 text (one char per byte). */
  latin1(i: number): string {
    const p = this.M._lua_tolstring(this.L, i, this.lenp);
    if (p === 0) return '';
    const n = this.M.HEAPU32[this.lenp >> 2];
    return this.heapBuffer().latin1Slice(p, p + n);
  }

  /** Load a chunk from bytes; returns the Lua status (0 = the function is on the stack, else the error message). */
  load(code: Uint8Array, chunkname: string): number {
    const p = this.buffer(code.length + 1);
    this.u8.set(code, p);
    return this.M._luaL_loadbuffer(this.L, p, code.length, this.cstr(chunkname));
  }

  /** Push an ASCII/latin1 string (bridge results). */
  pushString(s: string): void {
    this.pushLatin1(s);
  }

  pushBool(b: boolean): void {
    this.M._lua_pushboolean(this.L, b ? 1 : 0);
  }

  getRegistry(name: string): void {
    this.M._lua_getfield(this.L, LUA_REGISTRYINDEX, this.cstr(name));
  }

  setRegistry(name: string): void {
    this.M._lua_setfield(this.L, LUA_REGISTRYINDEX, this.cstr(name));
  }

  // ---------------------------------------------------------------- bridges

  /**
   * A fresh state with Lua's libraries, BRIDGES host bridges in the registry (__slot<i>: C
   * closures calling handlers[i], see lua-wasm.ts) and the values pushSmall() uses.
   */
  private newState(): number {
    const L = this.M._lua_wasm_newstate(BRIDGES);
    if (L === 0) throw new Error('lua: out of memory');
    this.L = L;
    // __num: the number probeLayout() checks the stack layout with.
    this.doString('local R = debug.getregistry()\nR.__num = 0.5', '=slots');
    return L;
  }

  /**
   * Close the Lua state and open a fresh one (SCRIPT FLUSH, FUNCTION FLUSH): the bridges stay
   * (handlers[i] is what the new state's __slot<i> calls too).
   */
  renew(): void {
    this.M._lua_close(this.main);
    this.L = this.main = this.newState();
  }

  /** Give `fn` a free bridge and return its registry name (the prelude moves it to where scripts reach it). */
  bridge(fn: Bridge): string {
    const name = this.freeSlots.shift();
    if (name === undefined) throw new Error('no free bridge slot');
    this.handlers[Number(name.slice(6))] = fn;
    return name;
  }

  /** Run a text chunk, throwing a JS Error with the Lua message on failure (start-up code). */
  doString(code: string, name: string, nargs = 0): void {
    const st = this.load(Buffer.from(code, 'latin1'), name);
    if (st !== 0) throw new Error(`lua load ${name}: ${this.latin1(-1)}`);
    if (nargs > 0) this.M._lua_insert(this.L, -1 - nargs);
    const r = this.M._lua_pcall(this.L, nargs, 0, 0);
    if (r !== 0) throw new Error(`lua run ${name}: ${this.latin1(-1)}`);
  }

  // ---------------------------------------------------------------- values into Lua

  /**
   * Push the given values onto the Lua stack (LUA_NULL is the value in the registry's __null).
   * A chunk that builds them is loaded and called; an array too large for one chunk (Lua's limit
   * of 262143 constants per function) is built by several chunks that each fill a part of it.
   * Returns false (nothing pushed, message in `lastError`) when a value cannot be built.
   */
  pushValues(values: readonly LuaValue[], inParts = true, room = SMALL_SLOTS): boolean {
    const M = this.M;
    const L = this.L;
    if (this.direct && smallPeak(values, room) >= 0) {
      for (let i = 0; i < values.length; i++) this.pushSmall(values[i]);
      return true;
    }
    const b = new ChunkBuilder(1);
    try {
      const base = 1;
      for (let i = 0; i < values.length; i++) b.emit(values[i], base + i);
      b.op(OP_RETURN, base, values.length + 1, 0);
      b.use(base + values.length);
    } catch (e) {
      if ((e as Error).message === TOO_LARGE && inParts) return this.pushLarge(values);
      this.lastError = (e as Error).message;
      return false;
    }
    if (!this.loadChunk(b)) return false;
    this.getRegistry('__null');
    M._lua_call(L, 1, values.length);
    return true;
  }

  /**
   * perf: a value that smallPeak() accepts, built on the stack with the C API (no chunk to
   * build, load and collect, no Lua call). The tables are the ones the table constructor and
   * plain assignments in order make (as the earlier Lua packers did): an array of n <= SMALL_ELEMS
   * elements without nil has an array part of exactly n; a longer one starts at SMALL_ELEMS and
   * grows as appending does; one with a nil starts empty (as Redis's reply arrays); a {h} table
   * starts empty and gets its pairs in order.
   */
  private pushSmall(v: LuaValue): void {
    const M = this.M;
    const L = this.L;
    if (v instanceof Uint8Array) this.pushBytes(v, 0, v.length);
    else if (typeof v === 'string') this.pushLatin1(v);
    else if (typeof v === 'number') this.pushNumber(v);
    else if (typeof v === 'boolean') M._lua_pushboolean(L, v ? 1 : 0);
    else if (v === LUA_NULL) M._lua_getfield(L, LUA_REGISTRYINDEX, this.nullKey);
    else if (v === null) M._lua_pushnil(L);
    else if (Array.isArray(v)) {
      // An array with a nil (a RESP3 null in a reply) as Redis builds every reply array
      // (lua_newtable, then t[j] = v in order, nil included): where its nils leave the border.
      M._lua_createtable(L, v.includes(null) ? 0 : Math.min(v.length, SMALL_ELEMS), 0);
      for (let i = 0; i < v.length; i++) {
        this.pushSmall(v[i]);
        M._lua_rawseti(L, -2, i + 1);
      }
    } else {
      const kv = (v as { h: LuaValue[] }).h;
      if (isSequence(kv)) {
        M._lua_createtable(L, kv.length >> 1, 0);
        for (let i = 1; i < kv.length; i += 2) {
          this.pushSmall(kv[i]);
          M._lua_rawseti(L, -2, (i + 1) >> 1);
        }
        return;
      }
      M._lua_createtable(L, 0, 0);
      for (let i = 0; i < kv.length; i += 2) {
        this.pushSmall(kv[i]);
        this.pushSmall(kv[i + 1]);
        M._lua_rawset(L, -3);
      }
    }
  }

  /**
   * The table pushSmall() makes of an array of n scalars (n <= FLAT_MAX, strings of at most
   * FLAT_STR bytes), given staged (host.ts's reply sink): per element its kind, FLAT_BYTES
   * (bytes[the previous element's end, end[i])), FLAT_NUM (num[i]) or FLAT_FALSE.
   */
  pushFlat(n: number, kind: Uint8Array, end: Int32Array, num: Float64Array, bytes: Buffer): void {
    // perf: written into the heap once (numbers, ends, kinds, then the bytes) and pushed by one
    // wasm call (lua_wasm_flat), not one or two per element.
    const total = n === 0 ? 0 : end[n - 1];
    const p = this.buffer(13 * n + total);
    const f64 = this.heapF64;
    const u32 = this.M.HEAPU32;
    const u8 = this.u8;
    const pe = p + 8 * n;
    const pk = pe + 4 * n;
    const pb = pk + n;
    for (let i = 0; i < n; i++) {
      const k = kind[i];
      if (k === FLAT_NUM) f64[(p >> 3) + i] = num[i];
      u32[(pe >> 2) + i] = end[i];
      u8[pk + i] = k;
    }
    if (total <= 256) for (let j = 0; j < total; j++) u8[pb + j] = bytes[j];
    else bytes.copy(this.heapBuffer(), pb, 0, total);
    this.M._lua_wasm_flat(this.L, n, Math.min(n, SMALL_ELEMS), p, pe, pk, pb);
  }

  /** Registry key (C string) of cjson.null (set by the constructor). */
  private nullKey = 0;

  private loadChunk(b: ChunkBuilder): boolean {
    const size = b.size();
    const p = this.buffer(size);
    b.write(this.u8, p);
    const st = this.M._luaL_loadbuffer(this.L, p, size, this.cstr('=reply'));
    if (st !== 0) {
      this.lastError = this.latin1(-1);
      this.M._lua_settop(this.L, -2);
      return false;
    }
    return true;
  }

  /** pushValues for values holding a huge array: each huge top-level array is filled in parts. */
  private pushLarge(values: readonly LuaValue[]): boolean {
    const M = this.M;
    const L = this.L;
    const top = M._lua_gettop(L);
    for (const v of values) {
      if (!Array.isArray(v) || v.length < 1000) {
        if (!this.pushValues([v], false)) {
          M._lua_settop(L, top);
          return false;
        }
        continue;
      }
      if (!this.pushValues([[]])) return false;
      let i = 0;
      while (i < v.length) {
        // One part: t[i+1..j] = v[i..j-1], as many elements as fit in a chunk.
        const b = new ChunkBuilder(2);
        let j = i;
        try {
          for (; j < v.length && b.room(); j++) b.setIndex(v[j], j + 1);
        } catch (e) {
          if ((e as Error).message !== TOO_LARGE || j === i) {
            this.lastError = (e as Error).message;
            M._lua_settop(L, top);
            return false;
          }
          // The element that did not fit starts the next part (its code is dropped with the chunk).
          b.truncate();
        }
        b.op(OP_RETURN, 0, 1, 0);
        if (!this.loadChunk(b)) {
          M._lua_settop(L, top);
          return false;
        }
        this.getRegistry('__null');
        M._lua_pushvalue(L, -3);
        M._lua_call(L, 2, 0);
        i = j;
      }
    }
    return true;
  }

  lastError = '';
}

// ---------------------------------------------------------------- small values

/**
 * Stack slots a bridge may fill above its arguments without lua_checkstack: Lua guarantees
 * LUA_MINSTACK (20) at a C function's entry; a few are kept for what the caller pushes besides.
 */
const SMALL_SLOTS = 16;
const EMPTY_BUF = Buffer.alloc(0);
/** Elements of one table built by pushSmall (a Lua call's arguments). */
const SMALL_ELEMS = 12;
/**
 * Elements of an array of scalars (no nil: appended in order, every key lands in the array
 * part, as the chunk's SETLIST puts them), or of a {h} table of scalars with string keys
 * (filled in order from empty, as Redis fills them), that pushSmall builds. perf: HGETALL of a
 * BullMQ job is ~30 elements, its decoded options ~10 pairs.
 */
const SMALL_ARRAY = 256;
/** Strings longer than this go through a chunk anyway (pushBytes copies them once more). */
const SMALL_STR = 4096;

/** pushFlat()'s limits (those of pushSmall) and element kinds. */
export const FLAT_MAX = SMALL_ARRAY;
export const FLAT_STR = SMALL_STR;
export const FLAT_BYTES = 0;
export const FLAT_NUM = 1;
export const FLAT_FALSE = 2;

/**
 * The stack slots pushSmall() needs to push `values` one after the other, or -1 if it cannot
 * push them (within `room` slots): strings, numbers,
 * booleans, nil, LUA_NULL, and arrays and {h} tables (string keys) of such elements, nested
 * (up to SMALL_ARRAY elements each, built in groups of SMALL_ELEMS). An array of
 * n <= 15 elements without nil gets the same table as the chunk's NEWTABLE n + SETLIST: an
 * array part of exactly n; one with a nil is filled from empty, in both (see pushSmall).
 */
function smallPeak(values: readonly LuaValue[], room: number): number {
  let peak = 0;
  for (let i = 0; i < values.length; i++) {
    const p = i + smallOne(values[i], room - i);
    if (p < i || p > room) return -1;
    if (p > peak) peak = p;
  }
  return peak;
}

function smallOne(v: LuaValue, room: number): number {
  if (room < 1) return -1;
  if (v instanceof Uint8Array || typeof v === 'string') return v.length > SMALL_STR ? -1 : 1;
  if (typeof v === 'number' || typeof v === 'boolean' || v === LUA_NULL) return 1;
  if (v === null) return 1;
  let kv: LuaValue[];
  let hash = false;
  if (Array.isArray(v)) kv = v;
  else if ('h' in v) {
    kv = v.h;
    hash = true;
  } else return -1;
  if (kv.length > SMALL_ELEMS) {
    if (kv.length > SMALL_ARRAY) return -1;
    // An array (nils: see pushSmall), a table with string keys.
    if (hash && (kv.length % 2 !== 0 || isSequence(kv))) return -1;
    // A bound from when these were built in groups of SMALL_ELEMS by Lua packers (the packer
    // and the group's elements on the stack); pushSmall needs fewer (the table, a key, a value
    // per level), so the bound stays safe.
    let peak = 0;
    for (let i = 0; i < kv.length; i++) {
      const e = kv[i];
      if (hash && i % 2 === 0 && !(e instanceof Uint8Array) && typeof e !== 'string') return -1;
      const j = i % SMALL_ELEMS;
      const p = smallOne(e, room - 2 - j);
      if (p < 0) return -1;
      if (2 + j + p > peak) peak = 2 + j + p;
    }
    return peak;
  }
  // Keys 1..n (cmsgpack's arrays): packed as an array of the values.
  const seq = hash && isSequence(kv);
  // The packer, then each element (the ones before it are done: one slot each).
  let peak = 1;
  for (let i = seq ? 1 : 0, done = 0; i < kv.length; i += seq ? 2 : 1, done++) {
    const e = kv[i];
    if (hash && !seq && i % 2 === 0 && !(e instanceof Uint8Array) && typeof e !== 'string') return -1;
    const p = smallOne(e, room - 1 - done);
    if (p < 0) return -1;
    if (1 + done + p > peak) peak = 1 + done + p;
  }
  return peak;
}

/**
 * The pairs of a {h} table have the keys 1, 2 ... n in order: the table is the sequence of
 * its values (built as Redis's cmsgpack builds it, lua_rawseti from 1: keys in the array
 * part, iterated in order).
 */
function isSequence(kv: LuaValue[]): boolean {
  for (let i = 0; i < kv.length; i += 2) if (kv[i] !== (i >> 1) + 1) return false;
  return kv.length > 0;
}

// ---------------------------------------------------------------- Lua 5.1 bytecode

const OP_MOVE = 0;
const OP_LOADK = 1;
const OP_LOADBOOL = 2;
const OP_LOADNIL = 3;
const OP_GETTABLE = 6;
const OP_SETTABLE = 9;
const OP_NEWTABLE = 10;
const OP_RETURN = 30;
const OP_SETLIST = 34;
/** Lua's LFIELDS_PER_FLUSH: SETLIST block size. */
const FPF = 50;
/** Lua's MAXSTACK (registers per function). */
const MAXSTACK = 250;
/**
 * Deep values: a table to be built in a register at or above SPILL_AT is built from the bottom
 * register instead, the registers below it saved meanwhile in the table in SPILL_REG (see
 * spill()). So nesting is bounded by the data (cjson's 1000 levels, cmsgpack's 4000), not by
 * Lua's 250 registers.
 */
const SPILL_AT = 200;
const SPILL_REG = MAXSTACK - 2;
/** Lua's MAXARG_Bx: constants a LOADK can address. */
const MAXK = (1 << 18) - 1;
const TEXT = new TextEncoder();

/** luaO_int2fb: the "floating point byte" table-size hint of NEWTABLE. */
function int2fb(x: number): number {
  let e = 0;
  while (x >= 16) {
    x = (x + 1) >> 1;
    e++;
  }
  return x < 8 ? x : ((e + 1) << 3) | (x - 8);
}

/**
 * Builds one Lua 5.1 function (a binary chunk for a 32-bit little-endian Lua: int, size_t and
 * Instruction of 4 bytes, lua_Number a double) whose code builds the pushed values.
 */
const TOO_LARGE = 'reply too large for a Lua value';
/** The source name of value chunks (prelude.ts's count hook skips it). */
const SOURCE = '=reply';

class ChunkBuilder {
  constructor(private readonly nparams: number) {}

  private readonly code: number[] = [];
  /** Code and constant counts at the start of the last setIndex (truncate() goes back there). */
  private mark = { code: 0, k: 0, kbytes: 0, spill: false };
  /** The spill table exists (created by the first spill). */
  private hasSpill = false;
  /** Spills in progress (each saves its registers at its own keys). */
  private spills = 0;
  private readonly kinds: number[] = [];
  private readonly kvals: (number | Uint8Array | boolean)[] = [];
  private readonly numIdx = new Map<number, number>();
  private kbytes = 0;
  private maxReg = 3;
  private errK = -1;
  private okK = -1;

  op(o: number, a: number, b: number, c: number): void {
    this.code.push((o | (a << 6) | (c << 14) | (b << 23)) >>> 0);
  }

  opBx(o: number, a: number, bx: number): void {
    this.code.push((o | (a << 6) | (bx << 14)) >>> 0);
  }

  use(reg: number): void {
    if (reg >= SPILL_REG) throw new Error('reached lua stack limit');
    if (reg + 1 > this.maxReg) this.maxReg = reg + 1;
  }

  private k(kind: number, v: number | Uint8Array): number {
    const i = this.kinds.length;
    if (i >= MAXK) throw new Error(TOO_LARGE);
    this.kinds.push(kind);
    this.kvals.push(v);
    this.kbytes += kind === 3 ? 9 : 1 + 4 + (v as Uint8Array).length + 1;
    return i;
  }

  private knum(n: number): number {
    let i = this.numIdx.get(n);
    if (i === undefined || Object.is(n, -0)) {
      i = this.k(3, n);
      if (!Object.is(n, -0)) this.numIdx.set(n, i);
    }
    return i;
  }

  private loadStr(reg: number, s: Uint8Array): void {
    this.opBx(OP_LOADK, reg, this.k(4, s));
  }

  private fieldTable(reg: number, which: 'err' | 'ok', msg: Uint8Array): void {
    this.use(reg + 2);
    this.op(OP_NEWTABLE, reg, 0, 1);
    let kk = which === 'err' ? this.errK : this.okK;
    if (kk < 0 || kk > 255) {
      kk = this.k(4, TEXT.encode(which));
      if (which === 'err') this.errK = kk;
      else this.okK = kk;
    }
    if (kk <= 255) {
      this.loadStr(reg + 1, msg);
      this.op(OP_SETTABLE, reg, 256 + kk, reg + 1);
    } else {
      this.opBx(OP_LOADK, reg + 1, kk);
      this.loadStr(reg + 2, msg);
      this.op(OP_SETTABLE, reg, reg + 1, reg + 2);
    }
  }

  /** Space left for more elements in a part (pushLarge). */
  room(): boolean {
    return this.kinds.length < MAXK - 1024 && this.code.length < 8_000_000;
  }

  /** Part code: R(1)[index] = v (R(1) is the table parameter). */
  setIndex(v: LuaValue, index: number): void {
    this.mark = { code: this.code.length, k: this.kinds.length, kbytes: this.kbytes, spill: this.hasSpill };
    this.use(3);
    this.opBx(OP_LOADK, 2, this.knum(index));
    this.emit(v, 3);
    this.op(OP_SETTABLE, 1, 2, 3);
  }

  /** Drop what the last setIndex emitted. */
  truncate(): void {
    this.code.length = this.mark.code;
    this.kinds.length = this.mark.k;
    this.kvals.length = this.mark.k;
    this.kbytes = this.mark.kbytes;
    this.hasSpill = this.mark.spill;
    for (const [n, i] of this.numIdx) if (i >= this.mark.k) this.numIdx.delete(n);
  }

  /**
   * Code that leaves v in register reg (registers above reg are free to use). Arrays and
   * tables are built here rather than in helpers: one JS frame per level of nesting (values
   * nest 4000 levels deep: cmsgpack).
   */
  emit(v: LuaValue, reg: number): void {
    if (typeof v === 'string') v = Buffer.from(v, 'latin1');
    if (reg >= SPILL_AT && typeof v === 'object' && v !== null && !(v instanceof Uint8Array)) {
      this.spill(v, reg);
      return;
    }
    this.use(reg);
    if (v instanceof Uint8Array) this.loadStr(reg, v);
    else if (typeof v === 'number') this.opBx(OP_LOADK, reg, this.knum(v));
    else if (typeof v === 'boolean') this.op(OP_LOADBOOL, reg, v ? 1 : 0, 0);
    else if (v === null) this.op(OP_LOADNIL, reg, reg, 0);
    else if (v === LUA_NULL) this.op(OP_MOVE, reg, 0, 0);
    else if (Array.isArray(v)) {
      const n = v.length;
      // With a nil: from empty, t[i] = v in order, as pushSmall (SETLIST would pre-size it).
      const holes = v.includes(null);
      this.op(OP_NEWTABLE, reg, holes ? 0 : int2fb(n), 0);
      if (!holes && reg + FPF + 8 < MAXSTACK / 2) {
        // SETLIST blocks of 50 from registers reg+1..reg+50.
        for (let i = 0; i < n; i += FPF) {
          const cnt = Math.min(FPF, n - i);
          for (let j = 0; j < cnt; j++) this.emit(v[i + j], reg + 1 + j);
          const block = i / FPF + 1;
          if (block <= 511) this.op(OP_SETLIST, reg, cnt, block);
          else {
            this.op(OP_SETLIST, reg, cnt, 0);
            this.code.push(block);
          }
        }
      } else {
        // Deep nesting: one SETTABLE per element keeps register use at reg+2.
        this.use(reg + 2);
        for (let i = 0; i < n; i++) {
          this.opBx(OP_LOADK, reg + 1, this.knum(i + 1));
          this.emit(v[i], reg + 2);
          this.op(OP_SETTABLE, reg, reg + 1, reg + 2);
        }
      }
    } else if ('err' in v) this.fieldTable(reg, 'err', v.err);
    else if ('ok' in v) this.fieldTable(reg, 'ok', v.ok);
    else {
      const kv = v.h;
      this.use(reg + 2);
      // Not pre-sized: filled pair by pair from empty, as Redis's lua_newtable + lua_settable
      // (cjson, cmsgpack, RESP3 maps) do, the table grows the same way and pairs() gives the
      // same order.
      this.op(OP_NEWTABLE, reg, 0, 0);
      for (let i = 0; i + 1 < kv.length; i += 2) {
        this.emit(kv[i], reg + 1);
        this.emit(kv[i + 1], reg + 2);
        this.op(OP_SETTABLE, reg, reg + 1, reg + 2);
      }
    }
  }

  /**
   * Build table v at the bottom register (the lowest one emitted code writes: the parameters
   * stay), with the registers from there to reg saved in the spill table, then move it to reg
   * and restore them. reg and reg + 1 are free: they hold the keys.
   */
  private spill(v: LuaValue, reg: number): void {
    const lo = this.nparams;
    if (!this.hasSpill) {
      this.op(OP_NEWTABLE, SPILL_REG, 0, 0);
      this.hasSpill = true;
    }
    if (SPILL_REG + 1 > this.maxReg) this.maxReg = SPILL_REG + 1;
    const base = this.spills++ * 256;
    for (let i = lo; i < reg; i++) {
      this.opBx(OP_LOADK, reg, this.knum(base + i));
      this.op(OP_SETTABLE, SPILL_REG, reg, i);
    }
    this.emit(v, lo);
    this.op(OP_MOVE, reg, lo, 0);
    for (let i = lo; i < reg; i++) {
      this.opBx(OP_LOADK, reg + 1, this.knum(base + i));
      this.op(OP_GETTABLE, i, SPILL_REG, reg + 1);
    }
    this.spills--;
  }

  size(): number {
    return 12 + 4 + SOURCE.length + 1 + 8 + 4 + 4 + this.code.length * 4 + 4 + this.kbytes + 4 + 12;
  }

  write(u8: Uint8Array, p: number): void {
    const dv = new DataView(u8.buffer, u8.byteOffset);
    const hdr = [0x1b, 0x4c, 0x75, 0x61, 0x51, 0, 1, 4, 4, 4, 8, 0];
    for (let i = 0; i < 12; i++) u8[p + i] = hdr[i];
    p += 12;
    // source: "=reply" (without one the loader says "=?"); the count hook leaves this code alone.
    dv.setUint32(p, SOURCE.length + 1, true);
    p += 4;
    for (let i = 0; i < SOURCE.length; i++) u8[p++] = SOURCE.charCodeAt(i);
    u8[p++] = 0;
    dv.setInt32(p, 0, true); // linedefined
    dv.setInt32(p + 4, 0, true); // lastlinedefined
    p += 8;
    u8[p++] = 0; // nups
    u8[p++] = this.nparams; // parameters: the cjson.null value (and the table a part fills)
    u8[p++] = 0; // is_vararg
    u8[p++] = Math.max(this.maxReg, 3); // maxstacksize
    dv.setInt32(p, this.code.length, true);
    p += 4;
    for (const ins of this.code) {
      dv.setUint32(p, ins, true);
      p += 4;
    }
    dv.setInt32(p, this.kinds.length, true);
    p += 4;
    for (let i = 0; i < this.kinds.length; i++) {
      const kind = this.kinds[i];
      u8[p++] = kind;
      if (kind === 3) {
        dv.setFloat64(p, this.kvals[i] as number, true);
        p += 8;
      } else {
        const s = this.kvals[i] as Uint8Array;
        dv.setUint32(p, s.length + 1, true);
        p += 4;
        u8.set(s, p);
        p += s.length;
        u8[p++] = 0;
      }
    }
    dv.setInt32(p, 0, true); // protos
    dv.setInt32(p + 4, 0, true); // lineinfo
    dv.setInt32(p + 8, 0, true); // locvars
    dv.setInt32(p + 12, 0, true); // upvalues
  }
}
