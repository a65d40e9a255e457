#!/usr/bin/env node
/**
 * The Lua interpreter alone, two builds in one process (dist directories, A and B, each with
 * its own LuaVM), batches interleaved: CPU ms per run of pure Lua code (no redis.call), so the
 * figures say what a build of Lua itself costs (native/lua/ flags, the Emscripten module of
 * lua-wasm-bindings before it).
 *
 *   node bench/lua-vm-ab.mjs base-dist dist
 *   LUAVM_TESTS=loop,calls AB_BATCHES=11 node bench/lua-vm-ab.mjs A B
 */
import path from 'node:path';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { cpuMicros } from './inproc.mjs';

const [distA, distB] = process.argv.slice(2).map((d) => path.resolve(d));
if (!distA || !distB) throw new Error('usage: lua-vm-ab.mjs <distA> <distB>');
const BATCHES = Number(process.env.AB_BATCHES ?? 11);
const CODE = {
  loop: 'local s = 0 for i = 1, 1000000 do s = s + i % 7 end',
  calls: 'local function f(x) return x + 1 end local y = 0 for i = 1, 300000 do y = f(y) end',
  tables: 'local t = {} for i = 1, 100000 do t[i] = { i, i + 1 } end',
  tostring: 'local t = {} for i = 1, 50000 do t[i] = tostring(i * 3.5) end',
  tonumber: 'local x for i = 1, 50000 do x = tonumber("12345.5") end',
  strings: 'local t = {} for i = 1, 30000 do t[#t + 1] = string.format("%s:%d", "key", i) .. "x" end local s = table.concat(t)',
  errors: 'for i = 1, 5000 do pcall(error, "x") end',
};
const names = (process.env.LUAVM_TESTS ?? Object.keys(CODE).join(',')).split(',').filter(Boolean);
const vms = [];
for (const d of [distA, distB]) {
  const { LuaVM } = await import(pathToFileURL(path.join(d, 'engine/scripting/lua-vm.js')).href);
  vms.push(new LuaVM());
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
console.log(`# A=${distA}\n# B=${distB}\n# ${BATCHES} batches, interleaved; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| test | A ms | B ms | B/A (median of batch ratios) |');
console.log('|---|---:|---:|---:|');
for (const name of names) {
  const run = (i) => {
    const t0 = cpuMicros();
    vms[i].doString(CODE[name], '=bench');
    return (cpuMicros() - t0) / 1000;
  };
  run(0); run(1);
  const a = [], b = [], r = [];
  for (let j = 0; j < BATCHES; j++) {
    let x, y;
    if (j % 2 === 0) { x = run(0); y = run(1); } else { y = run(1); x = run(0); }
    a.push(x); b.push(y); r.push(y / x);
  }
  console.log(`| ${name} | ${med(a).toFixed(2)} | ${med(b).toFixed(2)} | ${med(r).toFixed(2)} |`);
}
