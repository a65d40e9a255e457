/*
 * The host side of our WebAssembly build of Lua 5.1.5 (see README.md): what the JS loader
 * (src/engine/scripting/lua-wasm.ts) needs beyond Lua's C API.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#define IMPORT(name) __attribute__((import_module("lua"), import_name(name)))
#define EXPORT(name) __attribute__((export_name(name)))

/* Bridge k of the host (a JS function), called from Lua: returns its number of results. */
IMPORT("bridge") int lua_wasm_bridge(int k, lua_State *L);
/* The memory grew: the host's views of it must be renewed. */
IMPORT("grown") void lua_wasm_grown(void);

/* Run f(L, ud): the host calls this inside its try (lua_wasm_try, see luaconf.h). */
EXPORT("lua_wasm_run") void lua_wasm_run(void (*f)(lua_State *, void *), lua_State *L, void *ud) {
  f(L, ud);
}

/* dlmalloc's only way to grow the memory: pages taken here, then the host is told. */
void *sbrk(intptr_t increment) {
  uintptr_t old = __builtin_wasm_memory_size(0) * 65536;
  if (increment == 0) return (void *)old;
  if (increment < 0 || (increment & 65535) != 0) return (void *)-1;
  if (__builtin_wasm_memory_grow(0, increment >> 16) == (size_t)-1) return (void *)-1;
  lua_wasm_grown();
  return (void *)old;
}

static int bridge(lua_State *L) {
  return lua_wasm_bridge((int)lua_tointeger(L, lua_upvalueindex(1)), L);
}

/*
 * A new state with the libraries Redis 7.0 gives scripts that are part of Lua (base, table,
 * string, math, debug; cjson, cmsgpack, struct and bit are the runtime's), and n host bridges
 * in the registry as __slot0 .. __slot<n-1>.
 */
EXPORT("lua_wasm_newstate") lua_State *lua_wasm_newstate(int n) {
  static const luaL_Reg libs[] = {
    {"", luaopen_base}, {LUA_TABLIBNAME, luaopen_table}, {LUA_STRLIBNAME, luaopen_string},
    {LUA_MATHLIBNAME, luaopen_math}, {LUA_DBLIBNAME, luaopen_debug}, {NULL, NULL},
  };
  char name[16] = "__slot";
  lua_State *L = luaL_newstate();
  if (L == NULL) return NULL;
  for (const luaL_Reg *lib = libs; lib->func; lib++) {
    lua_pushcfunction(L, lib->func);
    lua_pushstring(L, lib->name);
    lua_call(L, 1, 0);
  }
  for (int i = 0; i < n; i++) {
    int d = 6, v = i, w = 1;
    while (v / w >= 10) w *= 10;
    for (; w > 0; w /= 10) name[d++] = (char)('0' + (v / w) % 10);
    name[d] = 0;
    lua_pushinteger(L, i);
    lua_pushcclosure(L, bridge, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, name);
  }
  return L;
}
