/*
 * The host side of our WebAssembly build of Lua 5.1.5 (see README.md): what the JS loader
 * (src/engine/scripting/lua-wasm.ts) needs beyond Lua's C API.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
static int bridge_to(lua_State *L, int k) {
  int n = lua_wasm_bridge(k, L);
  return n >= 0 ? n : lua_error(L);
}

/* A bridge past the numbered ones below: its number in its upvalue. */
static int bridge(lua_State *L) {
  return bridge_to(L, (int)lua_tointeger(L, lua_upvalueindex(1)));
}

/*
 * perf: bridges 0..23 are C functions of their own, their number a constant: no upvalue to
 * read on every redis.call (lua_tointeger through index2adr's pseudo-index switch).
 */
#define BRIDGE_FN(k) static int bridge_##k(lua_State *L) { return bridge_to(L, k); }
BRIDGE_FN(0) BRIDGE_FN(1) BRIDGE_FN(2) BRIDGE_FN(3) BRIDGE_FN(4) BRIDGE_FN(5) BRIDGE_FN(6)
BRIDGE_FN(7) BRIDGE_FN(8) BRIDGE_FN(9) BRIDGE_FN(10) BRIDGE_FN(11) BRIDGE_FN(12) BRIDGE_FN(13)
BRIDGE_FN(14) BRIDGE_FN(15) BRIDGE_FN(16) BRIDGE_FN(17) BRIDGE_FN(18) BRIDGE_FN(19) BRIDGE_FN(20)
BRIDGE_FN(21) BRIDGE_FN(22) BRIDGE_FN(23)
static const lua_CFunction bridges[] = {
  bridge_0, bridge_1, bridge_2, bridge_3, bridge_4, bridge_5, bridge_6, bridge_7, bridge_8,
  bridge_9, bridge_10, bridge_11, bridge_12, bridge_13, bridge_14, bridge_15, bridge_16,
  bridge_17, bridge_18, bridge_19, bridge_20, bridge_21, bridge_22, bridge_23,
};

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
    if (i < (int)(sizeof bridges / sizeof bridges[0])) {
      lua_pushcfunction(L, bridges[i]);
    } else {
      lua_pushinteger(L, i);
      lua_pushcclosure(L, bridge, 1);
    }
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

/* A table of the strings from..to-1 of lua_wasm_args's buffer, as Redis's luaCreateArray
 * builds it (an array part of exactly its size, elements set raw). */
static void args_table(lua_State *L, const uint32_t *at, const char *base, int from, int to) {
  lua_createtable(L, to - from, 0);
  for (int i = from; i < to; i++) {
    lua_pushlstring(L, base + at[2 * i], at[2 * i + 1]);
    lua_rawseti(L, -2, i - from + 1);
  }
}

/*
 * A script's KEYS and ARGV from bytes the host wrote once (runtime.ts run()): string i is
 * base[at[2i], at[2i] + at[2i + 1]). nk < 0: the n strings are pushed onto the stack (the
 * runner's arguments; the host checked the stack has room). Else two tables, KEYS (the first
 * nk strings) and ARGV (the rest). perf: one host call for all of them instead of a
 * lua_pushlstring (and a lua_rawseti) each through the JS/wasm boundary.
 */
EXPORT("lua_wasm_args") void lua_wasm_args(lua_State *L, const uint32_t *at, const char *base, int n, int nk) {
  if (nk < 0) {
    for (int i = 0; i < n; i++) lua_pushlstring(L, base + at[2 * i], at[2 * i + 1]);
    return;
  }
  args_table(L, at, base, 0, nk);
  args_table(L, at, base, nk, n);
}

/* lua_wasm_mp_unpack's results besides a count: not handled (nothing pushed), raise the top. */
#define MP_OTHER (-2)
#define MP_RAISE (-1)
/* Values lua_wasm_mp_unpack pushes at most (a bridge has LUA_MINSTACK slots), nesting it handles. */
#define MP_DIRECT_VALUES 8
#define MP_DIRECT_DEPTH 64
/* Per open map: the pending key is NaN or nil; per open array: it has a nil. */
#define MP_KEY_NAN 1
#define MP_KEY_NIL 2

/*
 * The array on the stack top (n elements, some nil) replaced by the table cmsgpack's reference
 * decoder (libs.ts mpUnpack) makes of it: filled from empty in index order, or pre-sized when
 * the nils were all at the end (a sequence).
 */
static void mp_holes(lua_State *L, int n) {
  int m = 0, seq = 1;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    int nil = lua_type(L, -1) == LUA_TNIL;
    lua_settop(L, -2);
    if (nil) continue;
    if (m != i - 1) seq = 0;
    m++;
  }
  lua_createtable(L, seq ? m : 0, 0);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, -2, i);
    if (lua_type(L, -1) == LUA_TNIL) lua_settop(L, -2);
    else lua_rawseti(L, -2, i);
  }
  lua_replace(L, -2);
}

static uint32_t mp_be(const unsigned char *p, int w) {
  uint32_t v = 0;
  for (int i = 0; i < w; i++) v = v << 8 | p[i];
  return v;
}

/*
 * cmsgpack.unpack / unpack_one / unpack_limit of the n bytes at src, decoded onto the stack as
 * (true, count, [next offset,] values...) from byte `offset`, at most `limit` values (decodeAll:
 * all, no next offset). The tables are the ones libs.ts mpUnpack's values become (arrays:
 * lua_rawseti from 1; maps: an empty table, lua_rawset of the pairs in order, as Redis's
 * cmsgpack fills them). Returns the values pushed; MP_RAISE with the error on the stack for a
 * NaN or nil key (lua_settable's); MP_OTHER with the stack as it was for anything but the
 * common case (bad input, deep nesting, more than MP_DIRECT_VALUES values): the host then runs
 * mpUnpack, whose results and error texts stay the reference. perf: one host call, where the
 * same walk in JS crossed into wasm for every value (~30 times for a BullMQ job's options).
 */
EXPORT("lua_wasm_mp_unpack")
int lua_wasm_mp_unpack(lua_State *L, const unsigned char *src, int len, int offset, double limit, int decodeAll) {
  double left[MP_DIRECT_DEPTH], done_[MP_DIRECT_DEPTH];
  unsigned char ismap[MP_DIRECT_DEPTH], flag[MP_DIRECT_DEPTH];
  const unsigned char *end = src + len, *p = src + offset;
  int base = lua_gettop(L), count = 0, depth = 0, bad = 0;
  if (!lua_checkstack(L, 8)) return MP_OTHER;
  lua_pushboolean(L, 1);
  lua_pushnumber(L, 0);
  if (!decodeAll) lua_pushnumber(L, 0);
  while (p < end && count < limit && !bad) {
    if (count == MP_DIRECT_VALUES || !lua_checkstack(L, 4)) {
      bad = 1;
      break;
    }
    /* One value: containers opened as their header is read, closed as their last element lands. */
    for (;;) {
      if (p >= end) {
        bad = 1;
        break;
      }
      int c = *p++;
      double n = -1;
      int map = 0, nan = 0, nil = 0;
      if ((c & 0xf0) == 0x90) n = c & 0x0f;
      else if ((c & 0xf0) == 0x80) {
        n = c & 0x0f;
        map = 1;
      } else if (c == 0xdc || c == 0xdd || c == 0xde || c == 0xdf) {
        int w = c == 0xdc || c == 0xde ? 2 : 4;
        if (w > end - p) {
          bad = 1;
          break;
        }
        n = mp_be(p, w);
        p += w;
        map = c >= 0xde;
      }
      if (n >= 0) {
        if (depth == MP_DIRECT_DEPTH || !lua_checkstack(L, 4)) {
          bad = 1;
          break;
        }
        /* (Each element takes a byte at least: the size hint follows the input, not n.) */
        lua_createtable(L, map ? 0 : (int)(n < end - p ? n : end - p), 0);
        if (n > 0) {
          left[depth] = map ? n * 2 : n;
          done_[depth] = 0;
          ismap[depth] = (unsigned char)map;
          flag[depth] = 0;
          depth++;
          continue;
        }
      } else if (c <= 0x7f) lua_pushnumber(L, c);
      else if (c >= 0xe0) lua_pushnumber(L, c - 256);
      else if ((c & 0xe0) == 0xa0 || c == 0xd9 || c == 0xda || c == 0xdb) {
        uint32_t k = c & 0x1f;
        if (c >= 0xd9) {
          int w = c == 0xd9 ? 1 : c == 0xda ? 2 : 4;
          if (w > end - p) {
            bad = 1;
            break;
          }
          k = mp_be(p, w);
          p += w;
        }
        if (k > (uint32_t)(end - p)) {
          bad = 1;
          break;
        }
        lua_pushlstring(L, (const char *)p, k);
        p += k;
      } else if (c == 0xc2 || c == 0xc3) lua_pushboolean(L, c - 0xc2);
      else if (c == 0xc0) {
        lua_pushnil(L);
        nil = 1;
      } else {
        /* Numbers (unknown bytes: bad). */
        int w = c == 0xcc || c == 0xd0 ? 1 : c == 0xcd || c == 0xd1 ? 2 : c == 0xce || c == 0xd2 || c == 0xca ? 4
          : c == 0xcf || c == 0xd3 || c == 0xcb ? 8 : 0;
        double x;
        if (w == 0 || w > end - p) {
          bad = 1;
          break;
        }
        if (c == 0xca) {
          uint32_t u = mp_be(p, 4);
          float f;
          memcpy(&f, &u, 4);
          x = f;
          nan = x != x;
        } else if (w == 8) {
          uint64_t u = (uint64_t)mp_be(p, 4) << 32 | mp_be(p + 4, 4);
          if (c == 0xcb) {
            memcpy(&x, &u, 8);
            nan = x != x;
          } else {
            /* One rounding, as Number() of the 64-bit integer. */
            x = c == 0xd3 ? (double)(int64_t)u : (double)u;
          }
        } else {
          uint32_t u = mp_be(p, w);
          x = u;
          if (c >= 0xd0 && u >= (uint32_t)1 << (8 * w - 1)) x -= w == 4 ? 4294967296.0 : (double)((uint32_t)1 << (8 * w));
        }
        p += w;
        lua_pushnumber(L, x);
      }
      /*
       * The value on the top goes into the containers it completes. mpUnpack's values are the
       * reference: an array with a nil becomes its other elements' pairs (mp_holes), a map loses
       * the pairs with a nil value.
       */
      while (depth > 0) {
        int d = depth - 1;
        double done = ++done_[d];
        if (!ismap[d]) {
          if (nil) {
            lua_settop(L, -2);
            flag[d] = 1;
          } else lua_rawseti(L, -2, (int)done);
        } else if ((long long)done & 1) {
          /* A key: its value comes next (a NaN or nil key: lua_settable's error, raised with the pair). */
          flag[d] = nan ? MP_KEY_NAN : nil ? MP_KEY_NIL : 0;
          break;
        } else if (flag[d] != 0) {
          lua_settop(L, base);
          lua_pushstring(L, flag[d] == MP_KEY_NAN ? "table index is NaN" : "table index is nil");
          return MP_RAISE;
        } else if (nil) lua_settop(L, -3);
        else lua_rawset(L, -3);
        if (done < left[d]) break;
        if (!ismap[d] && flag[d] == 1) mp_holes(L, (int)done);
        depth--;
        nil = 0;
        nan = 0;
      }
      if (bad || depth == 0) break;
    }
    count++;
  }
  if (bad || (p < end && count < limit)) {
    /* mpUnpack from the start, on what the stack was. */
    lua_settop(L, base);
    return MP_OTHER;
  }
  int pushed = lua_gettop(L) - base;
  lua_pushnumber(L, pushed - 2);
  lua_replace(L, base + 2);
  if (!decodeAll) {
    lua_pushnumber(L, p >= end ? -1 : (double)(p - src));
    lua_replace(L, base + 3);
  }
  return pushed;
}

/*
 * A redis.call array reply of n scalars staged by the host (lua-vm.ts pushFlat), pushed as a
 * table: per element at most one of kinds 0 (bytes: from the previous bytes' end to end[i] in
 * bytes), 1 (the number num[i]) or 2 (false); the table made with an array part of narr, the
 * elements set raw from 1. perf: one host call for the whole reply (a BullMQ job's HGETALL is
 * ~30 elements) instead of a lua_pushlstring or lua_pushnumber and a lua_rawseti each.
 */
EXPORT("lua_wasm_flat")
void lua_wasm_flat(lua_State *L, int n, int narr, const double *num, const int32_t *end, const unsigned char *kind,
                   const char *bytes) {
  int32_t p = 0;
  lua_createtable(L, narr, 0);
  for (int i = 0; i < n; i++) {
    if (kind[i] == 0) {
      lua_pushlstring(L, bytes + p, (size_t)(end[i] - p));
      p = end[i];
    } else if (kind[i] == 1) lua_pushnumber(L, num[i]);
    else lua_pushboolean(L, 0);
    lua_rawseti(L, -2, i + 1);
  }
}
