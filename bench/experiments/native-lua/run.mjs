#!/usr/bin/env node
/**
 * Native Lua 5.1 (Debian's liblua5.1 in the N-API addon nlua.c) against our WebAssembly Lua 5.1
 * (native/lua.wasm since session 11, lua-wasm-bindings before; through dist/engine/scripting/lua-vm.js), in one process, rounds
 * alternated: CPU ns per script run and per redis.call-like crossing into JS and back.
 *
 *   (cd bench/experiments/native-lua && node /usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild --nodedir=/usr)
 *   npm run build && node bench/experiments/native-lua/run.mjs
 *
 * The callback does what our bridge does before and after a command, with no command: reads
 * the arguments (offsets into one buffer), then pushes a reply (an integer, or a 16-byte bulk).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const ROOT = path.resolve(here, '../../..');
const { LuaVM, LUA_REGISTRYINDEX } = await import(pathToFileURL(path.join(ROOT, 'dist/engine/scripting/lua-vm.js')).href);
const N = Number(process.env.N ?? 20000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

const call = (args) => `rcall(${args})`;
const body = (n, args) => Array.from({ length: n }, () => call(args)).join('\n') + '\nreturn 1';
const SCRIPTS = {
  return1: 'return 1',
  calls2: body(2, "'SET', 'bench:lua:1', '0123456789abcdef'"),
  calls50: body(50, "'SET', 'bench:lua:1', '0123456789abcdef'"),
  calls50bulk: body(50, "'GET', 'bench:lua:1'"),
  loop100k: 'local s = 0 for i = 1, 100000 do s = s + i % 7 end return s',
  strings1k: 'local t = {} for i = 1, 1000 do t[i] = tostring(i) .. "x" end return #t',
  tables1k: 'local t = {} for i = 1, 1000 do t[i] = { i, "a", b = i } end return #t',
};
// BullMQ 6.7.0's Queue.add script, run with stubs for what is not Lua (STUBS): redis.call crosses
// into JS (the callback answers by command: integer, nil or a marker the wrapper turns into an
// empty table), cmsgpack.unpack / cjson.encode give fixed values. What it measures is the
// interpreter running BullMQ's Lua, plus its ~15 crossings.
const { addStandardJob } = await import('bullmq/dist/esm/scripts/addStandardJob-9.js');
SCRIPTS.bullmqAdd = addStandardJob.content;
const STUBS = `
KEYS = { 'bull:q:wait', 'bull:q:paused', 'bull:q:meta', 'bull:q:id', 'bull:q:completed', 'bull:q:delayed', 'bull:q:active', 'bull:q:events', 'bull:q:marker' }
ARGV = { 'A', '{"i":1}', 'O' }
local rcall0 = rcall
local function call(...)
  local r = rcall0(...)
  if r == 'T' then return {} end
  return r
end
redis = { call = call, pcall = call, error_reply = function(e) return { err = e } end, status_reply = function(s) return { ok = s } end }
cmsgpack = { unpack = function(s)
  if s == 'A' then return { 'bull:q:', '', 'job', 1700000000000, nil, nil, nil, nil, nil, nil } end
  return { attempts = 1 }
end }
cjson = { encode = function(t) return '{"attempts":1}' end }
`;
const TABLE_REPLY = new Set(['HMGET', 'ZRANGE', 'ZREVRANGEBYSCORE']);
const NIL_REPLY = new Set(['HGET', 'ZSCORE', 'GET']);
/** bullmqAdd is running: replies by command name (else by argument count, no name read). */
let byName = false;
/** The reply kind of a stubbed command (2 args: the micro scripts' GET). */
function kind(name, n) {
  if (n === 2) return 'bulk';
  if (!byName) return 'int';
  if (TABLE_REPLY.has(name)) return 'table';
  if (NIL_REPLY.has(name)) return 'nil';
  return 'int';
}
const BULK = Buffer.from('0123456789abcdef');
const T = Buffer.from('T');
const starts = new Int32Array(16);
const ends = new Int32Array(16);

// ---- native
const nlua = require(path.join(here, 'build/Release/nlua.node'));
const shared = new ArrayBuffer(1 << 16);
const sh = Buffer.from(shared);
const shDv = new DataView(shared);
let nativeCalls = 0;
nlua.init(() => {
  // Read the arguments: offsets as an Argv would hold them.
  const n = sh.readUInt32LE(0);
  let p = 4;
  for (let i = 0; i < n; i++) {
    const len = sh.readUInt32LE(p);
    starts[i] = p + 4;
    ends[i] = p + 4 + len;
    p += 4 + len;
  }
  nativeCalls++;
  const k = kind(byName ? sh.latin1Slice(starts[0], ends[0]) : '', n);
  if (k === 'bulk' || k === 'table') {
    const b = k === 'bulk' ? BULK : T;
    sh[0] = 2;
    shDv.setUint32(4, b.length, true);
    b.copy(sh, 8);
  } else if (k === 'nil') sh[0] = 0;
  else {
    sh[0] = 1;
    shDv.setFloat64(8, 1, true);
  }
}, shared, 0);
nlua.run(nlua.load(STUBS), 1);
const nref = Object.fromEntries(Object.entries(SCRIPTS).map(([k, s]) => [k, nlua.load(s)]));

// ---- wasm (our VM)
const vm = new LuaVM();
const M = vm.M;
const slot = vm.bridge((L) => {
  const n = M._lua_gettop(L);
  for (let i = 1; i <= n; i++) {
    const p = vm.strPtr(i);
    starts[i - 1] = p;
    ends[i - 1] = p + vm.strLen;
  }
  const k = kind(byName ? vm.heapBuffer().latin1Slice(starts[0], ends[0]) : '', n);
  if (k === 'bulk') vm.pushBytes(BULK, 0, 16);
  else if (k === 'table') vm.pushBytes(T, 0, 1);
  else if (k === 'nil') M._lua_getfield(L, LUA_REGISTRYINDEX, vm.cstr('__false'));
  else vm.pushNumber(1);
  return 1;
});
vm.doString(`rcall = debug.getregistry()['${slot}']`, '=init');
vm.doString(STUBS, '=stubs');
const wkey = {};
for (const [k, s] of Object.entries(SCRIPTS)) {
  if (vm.load(Buffer.from(s), '@user_script') !== 0) throw new Error(vm.latin1(-1));
  vm.setRegistry(`w_${k}`);
  wkey[k] = vm.cstr(`w_${k}`);
}
function wasmRun(k, times) {
  for (let i = 0; i < times; i++) {
    M._lua_getfield(vm.L, LUA_REGISTRYINDEX, wkey[k]);
    if (M._lua_pcall(vm.L, 0, 1, 0) !== 0) throw new Error(vm.latin1(-1));
    M._lua_settop(vm.L, 0);
  }
}

const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
const res = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const k of Object.keys(SCRIPTS)) {
    const times = k.endsWith('k') ? Math.max(1, N / 200) : k === 'bullmqAdd' ? Math.max(1, N / 10) : N;
    for (const [side, fn] of r % 2 === 0 ? [['native', () => nlua.run(nref[k], times)], ['wasm', () => wasmRun(k, times)]]
      : [['wasm', () => wasmRun(k, times)], ['native', () => nlua.run(nref[k], times)]]) {
      byName = k === 'bullmqAdd';
      const t0 = cpu();
      fn();
      const ns = ((cpu() - t0) * 1000) / times;
      ((res[k] ??= { native: [], wasm: [] })[side]).push(ns);
    }
  }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
console.log(`N=${N} x ${ROUNDS} rounds (alternated), CPU ns per script run, median; loadavg ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| script | native Lua 5.1 | wasm Lua 5.1 (ours) | wasm / native |');
console.log('|---|---:|---:|---:|');
for (const [k, v] of Object.entries(res)) console.log(`| ${k} | ${med(v.native).toFixed(0)} | ${med(v.wasm).toFixed(0)} | ${(med(v.wasm) / med(v.native)).toFixed(2)} |`);
const per = (k, n) => [(med(res[k].native) - med(res.return1.native)) / n, (med(res[k].wasm) - med(res.return1.wasm)) / n];
for (const [k, n] of [['calls2', 2], ['calls50', 50], ['calls50bulk', 50]]) {
  const [a, b] = per(k, n);
  console.log(`per crossing (${k}): native ${a.toFixed(0)} ns, wasm ${b.toFixed(0)} ns`);
}
