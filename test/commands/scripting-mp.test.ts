/**
 * cmsgpack.pack's encoder (scripting/libs.ts mpPackLua, which walks the values on a Lua stack)
 * does work in proportion to its output: the
 * output buffer is copied O(log n) times (it doubles), never once per element. (A 5 MB pack
 * took 4.5 s when the output was a JS array of byte numbers.) Its bytes are compared with
 * redis-server's in test/diff/cases/scripting.ts ("long strings ... cmsgpack.pack of megabytes").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as libs from '../../dist/engine/scripting/libs.js';
import { LuaVM, type LuaValue } from '../../dist/engine/scripting/lua-vm.js';

type Ser = LuaValue;
const vm = new LuaVM();

/** The copies doubling from 256 bytes needs at most for n bytes. */
const bound = (n: number): number => Math.max(0, Math.ceil(Math.log2(n / 256)));

/** The values pushed onto a Lua stack, then packed from there. */
function pack(args: Ser[]): Buffer {
  vm.M._lua_settop(vm.L, 0);
  assert.ok(vm.pushValues(args), vm.lastError);
  const out = libs.mpPackLua(vm, 1, args.length, 0);
  assert.ok(out !== null);
  return Buffer.from(out);
}

test('an array of 5,000 1 KB strings: 5 MB out, O(log n) copies', () => {
  const s = Buffer.alloc(1024, 0x78);
  const arr: Ser = Array.from({ length: 5000 }, (_, i) => Buffer.concat([s, Buffer.from(String(i + 1))]));
  const out = pack([arr]);
  let want = 3; // 0xdc + 16-bit count
  for (let i = 1; i <= 5000; i++) want += 3 + 1024 + String(i).length; // 0xda + 16-bit length
  assert.equal(out.length, want);
  assert.deepEqual([...out.subarray(0, 6)], [0xdc, 0x13, 0x88, 0xda, 0x04, 0x01]);
  assert.ok(libs.mpPackGrows <= bound(want), `${libs.mpPackGrows} copies for ${want} bytes`);
});

test('100,000 integers and a 3 MB string: O(log n) copies; one copy for one big string', () => {
  const ints: Ser = Array.from({ length: 100000 }, (_, i) => i * 977 - 40000000);
  const out = pack([ints]);
  assert.ok(libs.mpPackGrows <= bound(out.length), `${libs.mpPackGrows} copies for ${out.length} bytes`);
  assert.equal(out[5], 0xd2); // -40,000,000 + 977: int32
  const big = pack([Buffer.alloc(3_000_000, 0x79)]);
  assert.equal(big.length, 5 + 3_000_000);
  assert.equal(libs.mpPackGrows, 1);
});

test('integers, floats and lengths at their encoding edges', () => {
  const hex = (v: Ser): string => pack([v]).toString('hex');
  assert.equal(hex(127), '7f');
  assert.equal(hex(128), 'cc80');
  assert.equal(hex(65535), 'cdffff');
  assert.equal(hex(2 ** 32 - 1), 'ceffffffff');
  assert.equal(hex(2 ** 32), 'cf0000000100000000');
  assert.equal(hex(-32), 'e0');
  assert.equal(hex(-33), 'd0df');
  assert.equal(hex(-129), 'd1ff7f');
  assert.equal(hex(-32769), 'd2ffff7fff');
  assert.equal(hex(-(2 ** 31) - 1), 'd3ffffffff7fffffff');
  assert.equal(hex(-(2 ** 63)), 'd38000000000000000');
  assert.equal(hex(0.5), 'ca3f000000');
  assert.equal(hex(1 / 3), 'cb3fd5555555555555');
  assert.equal(hex(NaN).slice(0, 2), 'cb');
  assert.equal(hex(Buffer.alloc(31, 0x61)).slice(0, 2), 'bf');
  assert.equal(hex(Buffer.alloc(32, 0x61)).slice(0, 4), 'd920');
  assert.equal(hex(Buffer.alloc(256, 0x61)).slice(0, 6), 'da0100');
  assert.equal(hex(Buffer.alloc(65536, 0x61)).slice(0, 10), 'db00010000');
});
