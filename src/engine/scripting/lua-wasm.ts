/**
 * Our WebAssembly build of Lua 5.1.5 (native/lua/, built by native/lua/build.sh into the
 * committed native/lua.wasm): compiled once when this module loads, instantiated once per
 * LuaVM. It exports Lua's C API under its own names; this file adds what the build imports:
 *
 *  - Lua's error handling without setjmp (wasi-libc has none; native/lua/README.md): the
 *    protected call (luaD_rawrunprotected) calls `try`, which runs it through lua_wasm_run
 *    inside a JS try; luaD_throw calls `throw`, which throws LUA_THROW. The catch restores the
 *    shadow stack pointer (__stack_pointer) the unwound C frames had moved.
 *  - `bridge(k, L)`: the C closures the build puts in the registry as __slot<k> call host.bridge.
 *  - `grown()`: the memory grew (sbrk), so the views over it are renewed.
 *  - WASI: the C library links file and exit calls that Lua's base library could reach
 *    (loadfile, print); the runtime removes those functions, and every file call fails here
 *    (EBADF). exit() (after a Lua panic) calls host.exit, which must throw.
 */
import { readFileSync } from 'node:fs';

const WASM_URL = new URL('../../../native/lua.wasm', import.meta.url);
let LUA_WASM: WebAssembly.Module | null = null;

/** What a Lua error throws through the wasm frames (caught by `try`). */
const LUA_THROW = new Error('lua error');

export interface LuaHost {
  bridge(k: number, L: number): number;
  exit(status: number): never;
}

/** The instance's exports and the memory views (renewed when the memory grows). */
export interface LuaModule {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  HEAPF64: Float64Array;
  memory: WebAssembly.Memory;
  _malloc(n: number): number;
  _free(p: number): void;
  _lua_wasm_newstate(nbridges: number): number;
  _lua_wasm_args(L: number, at: number, base: number, n: number, nk: number): void;
  _lua_wasm_mp_unpack(L: number, src: number, len: number, offset: number, limit: number, decodeAll: number): number;
  _lua_wasm_flat(L: number, n: number, narr: number, num: number, end: number, kind: number, bytes: number): void;
  _luaL_loadbuffer(L: number, p: number, n: number, name: number): number;
  _lua_pcall(L: number, nargs: number, nres: number, errfunc: number): number;
  _lua_call(L: number, nargs: number, nres: number): void;
  _lua_error(L: number): never;
  _lua_checkstack(L: number, n: number): number;
  _lua_gettop(L: number): number;
  _lua_settop(L: number, i: number): void;
  _lua_type(L: number, i: number): number;
  _lua_tolstring(L: number, i: number, lenp: number): number;
  _lua_tonumber(L: number, i: number): number;
  _lua_toboolean(L: number, i: number): number;
  _lua_objlen(L: number, i: number): number;
  _lua_pushnil(L: number): void;
  _lua_pushnumber(L: number, x: number): void;
  _lua_pushinteger(L: number, x: number): void;
  _lua_pushboolean(L: number, b: number): void;
  _lua_pushstring(L: number, p: number): void;
  _lua_pushlstring(L: number, p: number, n: number): void;
  _lua_pushvalue(L: number, i: number): void;
  _lua_createtable(L: number, narr: number, nrec: number): void;
  _lua_getfield(L: number, i: number, k: number): void;
  _lua_gettable(L: number, i: number): void;
  _lua_rawget(L: number, i: number): void;
  _lua_rawgeti(L: number, i: number, n: number): void;
  _lua_next(L: number, i: number): number;
  _lua_setfield(L: number, i: number, k: number): void;
  _lua_settable(L: number, i: number): void;
  _lua_rawset(L: number, i: number): void;
  _lua_rawseti(L: number, i: number, n: number): void;
  _lua_insert(L: number, i: number): void;
  _lua_replace(L: number, i: number): void;
  _lua_remove(L: number, i: number): void;
  _lua_close(L: number): void;
}

const EBADF = 8;

export function instantiateLua(host: LuaHost): LuaModule {
  const wasm = (LUA_WASM ??= new WebAssembly.Module(readFileSync(WASM_URL)));
  // Filled once the instance exists (the imports below run only after that).
  let run: (f: number, L: number, ud: number) => void = () => {};
  let sp: WebAssembly.Global | null = null;
  let M = null as unknown as LuaModule;
  const views = (): void => {
    const b = M.memory.buffer;
    M.HEAPU8 = new Uint8Array(b);
    M.HEAPU32 = new Uint32Array(b);
    M.HEAPF64 = new Float64Array(b);
  };
  const fail = (): number => EBADF;
  const wasi: Record<string, (...a: number[]) => number> = {};
  for (const imp of WebAssembly.Module.imports(wasm)) {
    if (imp.module === 'wasi_snapshot_preview1') wasi[imp.name] = fail;
  }
  wasi.proc_exit = (status: number) => host.exit(status);
  const instance = new WebAssembly.Instance(wasm, {
    lua: {
      try: (L: number, f: number, ud: number) => {
        const saved = sp!.value as number;
        try {
          run(f, L, ud);
        } catch (e) {
          sp!.value = saved;
          // Anything else (a host bridge's bug, a wasm trap) is not Lua's to handle.
          if (e !== LUA_THROW) throw e;
        }
      },
      throw: () => {
        throw LUA_THROW;
      },
      bridge: host.bridge,
      grown: views,
    },
    wasi_snapshot_preview1: wasi,
  });
  const ex = instance.exports as Record<string, unknown>;
  const fn = <F>(name: string): F => {
    if (typeof ex[name] !== 'function') throw new Error(`lua.wasm: no export ${name}`);
    return ex[name] as F;
  };
  const memory = ex.memory as WebAssembly.Memory;
  // perf: one object literal (a fixed shape): properties added one by one by name would leave
  // it a slow dictionary object, and every Lua API call reads one.
  M = {
    HEAPU8: new Uint8Array(memory.buffer),
    HEAPU32: new Uint32Array(memory.buffer),
    HEAPF64: new Float64Array(memory.buffer),
    memory,
    _malloc: fn('malloc'),
    _free: fn('free'),
    _lua_wasm_newstate: fn('lua_wasm_newstate'),
    _lua_wasm_args: fn('lua_wasm_args'),
    _lua_wasm_mp_unpack: fn('lua_wasm_mp_unpack'),
    _lua_wasm_flat: fn('lua_wasm_flat'),
    _luaL_loadbuffer: fn('luaL_loadbuffer'),
    _lua_pcall: fn('lua_pcall'),
    _lua_call: fn('lua_call'),
    _lua_error: fn('lua_error'),
    _lua_checkstack: fn('lua_checkstack'),
    _lua_gettop: fn('lua_gettop'),
    _lua_settop: fn('lua_settop'),
    _lua_type: fn('lua_type'),
    _lua_tolstring: fn('lua_tolstring'),
    _lua_tonumber: fn('lua_tonumber'),
    _lua_toboolean: fn('lua_toboolean'),
    _lua_objlen: fn('lua_objlen'),
    _lua_pushnil: fn('lua_pushnil'),
    _lua_pushnumber: fn('lua_pushnumber'),
    _lua_pushinteger: fn('lua_pushinteger'),
    _lua_pushboolean: fn('lua_pushboolean'),
    _lua_pushstring: fn('lua_pushstring'),
    _lua_pushlstring: fn('lua_pushlstring'),
    _lua_pushvalue: fn('lua_pushvalue'),
    _lua_createtable: fn('lua_createtable'),
    _lua_getfield: fn('lua_getfield'),
    _lua_gettable: fn('lua_gettable'),
    _lua_rawget: fn('lua_rawget'),
    _lua_rawgeti: fn('lua_rawgeti'),
    _lua_next: fn('lua_next'),
    _lua_setfield: fn('lua_setfield'),
    _lua_settable: fn('lua_settable'),
    _lua_rawset: fn('lua_rawset'),
    _lua_rawseti: fn('lua_rawseti'),
    _lua_insert: fn('lua_insert'),
    _lua_replace: fn('lua_replace'),
    _lua_remove: fn('lua_remove'),
    _lua_close: fn('lua_close'),
  };
  sp = ex.__stack_pointer as WebAssembly.Global;
  run = fn('lua_wasm_run');
  views();
  (ex._initialize as () => void)();
  return M;
}
