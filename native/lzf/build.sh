#!/bin/sh
# Builds native/lzf.wasm (LZF, CRC-64, listpack checks: the RDB codec) from lzf.c and listpack.c
# (freestanding wasm32, no libc). Needs clang and wasm-ld
# (Debian: clang lld). OUT=<file> writes elsewhere (test/native/build.test.ts rebuilds into a
# temporary directory and compares bytes with the committed file).
set -eu
cd "$(dirname "$0")"
OUT="${OUT:-../lzf.wasm}"
CLANG="${CLANG:-clang}"
# -mbulk-memory: the compiler's memset/memcpy become memory.fill/copy (there is no libc).
# --strip-all: no names or producer strings, so the bytes depend only on source and compiler.
"$CLANG" --target=wasm32 -nostdlib -O3 -mbulk-memory -fno-exceptions \
  -Wall -Wextra -Werror \
  -Wl,--no-entry -Wl,--strip-all -Wl,--export=__heap_base -Wl,-z,stack-size=16384 \
  -o "$OUT" lzf.c listpack.c
chmod 644 "$OUT"
