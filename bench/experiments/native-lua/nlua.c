/*
 * Experiment (issue 21): Debian's native Lua 5.1 (liblua5.1) in a tiny N-API addon, to measure
 * what a redis.call-like crossing Lua -> JS -> Lua costs natively, against our WebAssembly VM
 * (see run.mjs). Not part of the server; not built by npm ci.
 *
 * rcall(...) in Lua copies its string arguments into one shared buffer (u32 count, then u32
 * length + bytes per argument), calls the JS callback with no arguments; the callback writes
 * the reply there (u8 tag: 0 nil, 1 integer (f64 after), 2 bulk (u32 length + bytes), 3 status)
 * and rcall pushes it. Mode 1 passes the arguments as JS strings instead (napi_create_string_latin1).
 */
#include <node_api.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <string.h>
#include <stdlib.h>

static lua_State *L;
static napi_env cur_env;
static napi_ref cb_ref;
static unsigned char *shared;
static size_t shared_len;
static int mode;

static int rcall(lua_State *L) {
  int n = lua_gettop(L);
  napi_env env = cur_env;
  napi_value cb, global, ret;
  napi_get_reference_value(env, cb_ref, &cb);
  napi_get_global(env, &global);
  if (mode == 0) {
    unsigned char *p = shared + 4;
    *(uint32_t *)shared = n;
    for (int i = 1; i <= n; i++) {
      size_t len;
      const char *s = lua_tolstring(L, i, &len);
      if (s == NULL || (size_t)(p - shared) + 4 + len > shared_len) return luaL_error(L, "bad argument");
      *(uint32_t *)p = (uint32_t)len;
      memcpy(p + 4, s, len);
      p += 4 + len;
    }
    napi_call_function(env, global, cb, 0, NULL, &ret);
  } else {
    napi_value argv[16];
    if (n > 16) n = 16;
    for (int i = 1; i <= n; i++) {
      size_t len;
      const char *s = lua_tolstring(L, i, &len);
      napi_create_string_latin1(env, s, len, &argv[i - 1]);
    }
    napi_call_function(env, global, cb, n, argv, &ret);
  }
  unsigned char tag = shared[0];
  switch (tag) {
    case 0: lua_pushboolean(L, 0); return 1;
    case 1: { double d; memcpy(&d, shared + 8, 8); lua_pushnumber(L, d); return 1; }
    case 2: { uint32_t len; memcpy(&len, shared + 4, 4); lua_pushlstring(L, (const char *)shared + 8, len); return 1; }
    default: {
      uint32_t len; memcpy(&len, shared + 4, 4);
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, (const char *)shared + 8, len);
      lua_setfield(L, -2, "ok");
      return 1;
    }
  }
}

/* init(callback, sharedArrayBuffer, mode) */
static napi_value init(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  napi_create_reference(env, argv[0], 1, &cb_ref);
  void *data;
  napi_get_arraybuffer_info(env, argv[1], &data, &shared_len);
  shared = data;
  napi_get_value_int32(env, argv[2], &mode);
  L = luaL_newstate();
  luaL_openlibs(L);
  lua_pushcfunction(L, rcall);
  lua_setglobal(L, "rcall");
  return NULL;
}

/* load(code) -> registry ref of the compiled chunk */
static napi_value load(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  char buf[65536];
  size_t len;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  napi_get_value_string_latin1(env, argv[0], buf, sizeof buf, &len);
  if (luaL_loadbuffer(L, buf, len, "@user_script") != 0) {
    napi_throw_error(env, NULL, lua_tostring(L, -1));
    lua_pop(L, 1);
    return NULL;
  }
  int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  napi_create_int32(env, ref, &out);
  return out;
}

/* run(ref, times) -> the last result as a number (pcall of the chunk `times` times) */
static napi_value run(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], out;
  int32_t ref, times;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  napi_get_value_int32(env, argv[0], &ref);
  napi_get_value_int32(env, argv[1], &times);
  cur_env = env;
  double r = 0;
  for (int i = 0; i < times; i++) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    if (lua_pcall(L, 0, 1, 0) != 0) {
      napi_throw_error(env, NULL, lua_tostring(L, -1));
      lua_settop(L, 0);
      return NULL;
    }
    r = lua_tonumber(L, -1);
    lua_settop(L, 0);
  }
  napi_create_double(env, r, &out);
  return out;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor d[] = {
    { "init", 0, init, 0, 0, 0, napi_default, 0 },
    { "load", 0, load, 0, 0, 0, napi_default, 0 },
    { "run", 0, run, 0, 0, 0, napi_default, 0 },
  };
  napi_define_properties(env, exports, 3, d);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
