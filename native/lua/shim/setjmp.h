/* Empty: wasi-libc has no setjmp.h, and this build of Lua does not use setjmp
   (LUA_WASM_JS_TRY in src/luaconf.h; see ../README.md). */
