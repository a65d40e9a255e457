/*
 * The host side of our WebAssembly build of Lua 5.1.5 (see README.md): what the JS loader
 * (src/engine/scripting/lua-wasm.ts) needs beyond Lua's C API.
 */
#include <stdint.h>
#include <stdio.h>
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

/* A negative count from the host (RAISE in lua-vm.ts): raise the value on the stack top. */
static int bridge(lua_State *L) {
  int n = lua_wasm_bridge((int)lua_tointeger(L, lua_upvalueindex(1)), L);
  return n >= 0 ? n : lua_error(L);
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

/*
 * lua_number2str (luaconf.h): sprintf's "%.14g", whose output for an integer of at most 14
 * digits is its digits (0 is left to sprintf: it may be -0). perf: musl's printf of a double
 * costs ~0.5 us in WebAssembly; scripts turn counters and ids into strings all the time.
 */
void lua_wasm_number2str(char *s, double n) {
  if (n > -1e14 && n < 1e14 && n != 0 && n == (double)(long long)n) {
    long long v = (long long)n;
    char d[16];
    int k = 0;
    if (v < 0) {
      *s++ = '-';
      v = -v;
    }
    while (v > 0) {
      d[k++] = (char)('0' + v % 10);
      v /= 10;
    }
    while (k > 0) *s++ = d[--k];
    *s = 0;
    return;
  }
  sprintf(s, LUA_NUMBER_FMT, n);
}

/*
 * lua_str2number (luaconf.h): strtod, whose result for a decimal integer of at most 15
 * digits (exact in a double) is that integer; anything else (a point, an exponent, hex, more
 * digits, inf, nan) is strtod's. Spaces and sign as strtod (the C locale's isspace).
 */
double lua_wasm_str2number(const char *s, char **end) {
  const char *p = s;
  const char *d;
  long long v = 0;
  int neg = 0;
  while (*p == ' ' || (*p >= '\t' && *p <= '\r')) p++;
  if (*p == '-' || *p == '+') neg = *p++ == '-';
  d = p;
  while (*p >= '0' && *p <= '9' && p - d < 16) v = v * 10 + (*p++ - '0');
  if (p == d || p - d > 15 || *p == '.' || *p == 'e' || *p == 'E' || *p == 'x' || *p == 'X' ||
      (*p >= '0' && *p <= '9'))
    return strtod(s, end);
  *end = (char *)p;
  return neg ? -(double)v : (double)v;
}

/* A table of the strings from..to-1 of lua_wasm_args's buffer (s: the first's bytes), as
 * Redis's luaCreateArray builds it (an array part of exactly its size, elements set raw). */
static const char *args_table(lua_State *L, const uint32_t *len, const char *s, int from, int to) {
  lua_createtable(L, to - from, 0);
  for (int i = from; i < to; s += len[i++]) {
    lua_pushlstring(L, s, len[i]);
    lua_rawseti(L, -2, i - from + 1);
  }
  return s;
}

/*
 * A script's KEYS and ARGV from one buffer the host wrote once (runtime.ts run()): n 32-bit
 * lengths at len, then the n strings' bytes one after another. nk < 0: the n strings are pushed
 * onto the stack (the runner's arguments; the host checked the stack has room). Else two tables,
 * KEYS (the first nk strings) and ARGV (the rest). perf: one host call for all of them instead
 * of a lua_pushlstring (and a lua_rawseti) each through the JS/wasm boundary.
 */
EXPORT("lua_wasm_args") void lua_wasm_args(lua_State *L, const uint32_t *len, int n, int nk) {
  const char *s = (const char *)(len + n);
  if (nk < 0) {
    for (int i = 0; i < n; s += len[i++]) lua_pushlstring(L, s, len[i]);
    return;
  }
  s = args_table(L, len, s, 0, nk);
  args_table(L, len, s, nk, n);
}
