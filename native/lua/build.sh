#!/bin/sh
# Builds native/lua.wasm (committed) from Lua 5.1.5 (src/, patched as README.md says) and
# lua-wasm.c. Needs clang, wasm-ld and wasi-libc (Debian: clang lld wasi-libc
# libclang-rt-dev-wasm32). Reproducible: relative paths only, no debug info.
#   native/lua/build.sh                 (writes native/lua.wasm)
#   OUT=/tmp/x.wasm native/lua/build.sh (elsewhere: test/native/build.test.ts compares the bytes)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-${1:-$here/../lua.wasm}}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
cd "$here"
EXPORTS="lua_gettop lua_settop lua_pushvalue lua_insert lua_replace lua_remove lua_checkstack
  lua_type lua_tolstring lua_tonumber lua_toboolean lua_objlen lua_pushnil lua_pushnumber
  lua_pushinteger lua_pushlstring lua_pushstring lua_pushboolean lua_createtable lua_gettable
  lua_getfield lua_rawget lua_rawgeti lua_next lua_settable lua_setfield lua_rawset lua_rawseti lua_call
  lua_pcall lua_error lua_close luaL_loadbuffer malloc free"
flags=""
for e in $EXPORTS; do flags="$flags -Wl,--export=$e"; done
# shellcheck disable=SC2086
clang --target=wasm32-wasi -O2 -mnontrapping-fptoint -msign-ext -std=gnu99 -DLUA_WASM_JS_TRY -Ishim -Isrc \
  -Wall -Wno-empty-body -Wno-misleading-indentation -mexec-model=reactor \
  -Wl,--export=__stack_pointer -Wl,-z,stack-size=1048576 -Wl,--strip-all \
  $flags -o "$out" all.c lua-wasm.c
chmod 644 "$out"
