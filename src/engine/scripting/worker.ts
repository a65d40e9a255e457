/**
 * The scripting worker thread: owns the Lua 5.1 state (lua-vm.ts + prelude.ts) and runs
 * scripts and function libraries on request of the engine thread (host.ts).
 *
 * Everything here is synchronous. A request arrives, the script runs; each redis.call sends the
 * command to the engine thread and sleeps in Atomics.wait until the reply arrives, so the engine
 * runs the script's commands, and only those, while the script is alive (atomicity is kept by
 * the engine, which refuses other clients' commands meanwhile). SCRIPT KILL / FUNCTION KILL set
 * a shared flag that the Lua count hook reads every 100000 instructions.
 *
 * Requests (engine -> worker), each answered by exactly one {t:'done'}:
 *   {t:'compile', sha, body}                     SCRIPT LOAD / first EVAL of a body
 *   {t:'eval', sha, body?, keys, args, name}     run a cached script (compiled first if body)
 *   {t:'sflush'}                                 SCRIPT FLUSH
 *   {t:'fload', code}                            FUNCTION LOAD step 1: run the library code
 *   {t:'fcommit', name} / {t:'fdrop'}            FUNCTION LOAD step 2: keep or drop it
 *   {t:'fdelete', name} / {t:'fflush'}           FUNCTION DELETE / FLUSH
 *   {t:'fcall', lib, fn, keys, args, name}       FCALL
 * While a script runs (worker -> engine): {t:'call', argv} and {t:'acl', argv}, answered by
 * {t:'reply', v, err} / {t:'reply', v}.
 */
import { workerData } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { SyncChannel, CTL_MAIN, CTL_WORKER, CTL_KILL } from './channel.js';
import { LuaVM, LUA_REGISTRYINDEX, type LuaValue } from './lua-vm.js';
import { PRELUDE, PRELUDE_NAME } from './prelude.js';
import {
  parseSer, jsonEncode, jsonDecode, jsonConfig, mpPack, mpUnpack, structPack, structUnpack, structSize, bitOp,
} from './libs.js';

interface WorkerInit {
  ctl: Int32Array;
  port: import('node:worker_threads').MessagePort;
  version: string;
  versionNum: number;
}

const init = workerData as WorkerInit;
const ch = new SyncChannel(init.ctl, init.port, CTL_WORKER, CTL_MAIN);

let vm: LuaVM = null as unknown as LuaVM;
/** While FUNCTION LOAD runs library code: when it must stop (Redis's 500 ms LOAD_TIMEOUT_MS). */
let loadDeadline = 0;
const LOAD_TIMEOUT_MS = 500;
const compiled = new Set<string>();

/** Push a bridge's results; on failure push (false, message). Returns the count pushed. */
function pushResult(values: LuaValue[]): number {
  if (!vm.pushValues(values)) {
    vm.pushValues([false, Buffer.from(vm.lastError, 'latin1')]);
    return 2;
  }
  return values.length;
}

function args(L: number, from: number): Uint8Array[] {
  const n = vm.M._lua_gettop(L);
  const out: Uint8Array[] = [];
  for (let i = from; i <= n; i++) out.push(vm.bytes(i));
  return out;
}

function setup(): void {
  vm = new LuaVM();
  const M = vm.M;
  const spec: string[] = [];
  const add = (name: string, fn: (L: number) => number) => spec.push(`${name}=${vm.bridge(fn)};`);

  add('call', (L) => {
    ch.send({ t: 'call', argv: args(L, 1) });
    const r = ch.recv() as { v: Uint8Array; err: boolean };
    if (!vm.pushValues([decodeReply(r.v), r.err])) {
      vm.pushValues([{ err: Buffer.from(`ERR ${vm.lastError}`, 'latin1') }, true]);
    }
    return 2;
  });
  add('acl_check', (L) => {
    ch.send({ t: 'acl', argv: args(L, 1) });
    const r = ch.recv() as { v: string };
    vm.pushString(r.v);
    return 1;
  });
  add('sha1hex', () => {
    vm.pushString(createHash('sha1').update(vm.bytes(1)).digest('hex'));
    return 1;
  });
  add('log', () => {
    const level = Number(vm.latin1(1));
    const msg = Buffer.from(vm.bytes(2)).toString('latin1');
    ch.send({ t: 'log', level, msg });
    return 0;
  });
  add('check', () => {
    if (Atomics.load(init.ctl, CTL_KILL) !== 0) {
      vm.pushString('k');
      return 1;
    }
    if (loadDeadline !== 0 && Date.now() > loadDeadline) {
      vm.pushString('t');
      return 1;
    }
    return 0;
  });
  add('json_encode', () => pushResult(jsonEncode(parseSer(Buffer.from(vm.bytes(1)))[0] ?? null)));
  add('json_decode', () => pushResult(jsonDecode(Buffer.from(vm.bytes(1)))));
  add('json_config', () => pushResult(jsonConfig(vm.latin1(1), parseSer(Buffer.from(vm.bytes(2))))));
  add('mp_pack', () => pushResult(mpPack(parseSer(Buffer.from(vm.bytes(1))))));
  add('mp_unpack', () => pushResult(mpUnpack(Buffer.from(vm.bytes(1)), vm.latin1(2), Number(vm.latin1(3)), Number(vm.latin1(4)))));
  add('struct_pack', () => pushResult(structPack(vm.latin1(1), parseSer(Buffer.from(vm.bytes(2))))));
  add('struct_unpack', () => pushResult(structUnpack(vm.latin1(1), Buffer.from(vm.bytes(2)), Number(vm.latin1(3)))));
  add('struct_size', () => pushResult(structSize(vm.latin1(1))));
  add('bit', (L) => {
    const n = M._lua_gettop(L);
    const nums: number[] = [];
    for (let i = 2; i <= n; i++) nums.push(Number(vm.latin1(i)));
    vm.pushString(bitOp(vm.latin1(1), nums));
    return 1;
  });
  spec.push(`version=${init.version};`, `version_num=${init.versionNum};`);

  // Run the prelude with (registry, spec).
  const code = Buffer.from(PRELUDE, 'latin1');
  if (vm.load(code, PRELUDE_NAME) !== 0) throw new Error(`prelude: ${vm.latin1(-1)}`);
  M._lua_pushvalue(vm.L, LUA_REGISTRYINDEX);
  vm.pushString(spec.join(''));
  if (M._lua_pcall(vm.L, 2, 0, 0) !== 0) throw new Error(`prelude: ${vm.latin1(-1)}`);
  M._lua_settop(vm.L, 0);
}

/** Decode a redis.call reply encoded by host.ts's LuaReplyEncoder. */
function decodeReply(u: Uint8Array): LuaValue {
  const b = Buffer.from(u.buffer, u.byteOffset, u.length);
  const st = { p: 0 };
  const one = (): LuaValue => {
    const tag = b[st.p++];
    switch (tag) {
      case 0x73: case 0x65: case 0x6f: {
        const n = b.readUInt32LE(st.p);
        const v = b.subarray(st.p + 4, st.p + 4 + n);
        st.p += 4 + n;
        return tag === 0x73 ? v : tag === 0x65 ? { err: v } : { ok: v };
      }
      case 0x69: {
        const v = b.readDoubleLE(st.p);
        st.p += 8;
        return v;
      }
      case 0x66: return false;
      case 0x61: {
        const n = b.readUInt32LE(st.p);
        st.p += 4;
        const arr: LuaValue[] = [];
        for (let i = 0; i < n; i++) arr.push(one());
        return arr;
      }
    }
    throw new Error('bad reply encoding');
  };
  return b.length === 0 ? false : one();
}

/**
 * Replace the function on the stack top by the same function with every TAILCALL turned into a
 * CALL (the RETURN that the compiler emits after it returns the results). Redis's API functions
 * are C functions, so `return redis.call(...)` keeps the script's frame, and errors say
 * "on @user_script:N"; ours are Lua wrappers, which a real tail call would erase.
 */
function untail(): void {
  const M = vm.M;
  vm.getRegistry('__dump');
  M._lua_insert(vm.L, -2);
  M._lua_call(vm.L, 1, 1);
  const b = Buffer.from(vm.bytes(-1));
  M._lua_settop(vm.L, -2);
  let p = 12;
  const int = () => {
    const v = b.readInt32LE(p);
    p += 4;
    return v;
  };
  const str = () => {
    const n = b.readUInt32LE(p);
    p += 4 + n;
  };
  const fn = (): void => {
    str();
    p += 8 + 4;
    const ncode = int();
    for (let i = 0; i < ncode; i++, p += 4) {
      const ins = b.readUInt32LE(p);
      if ((ins & 0x3f) === 29) b.writeUInt32LE(((ins & ~0x3f) | 28) >>> 0, p);
    }
    const nk = int();
    for (let i = 0; i < nk; i++) {
      const t = b[p++];
      if (t === 1) p += 1;
      else if (t === 3) p += 8;
      else if (t === 4) str();
    }
    const np = int();
    for (let i = 0; i < np; i++) fn();
    const nli = int();
    p += 4 * nli; // lineinfo
    const nl = int();
    for (let i = 0; i < nl; i++) {
      str();
      p += 8;
    }
    const nu = int();
    for (let i = 0; i < nu; i++) str();
  };
  fn();
  if (vm.load(b, '=untail') !== 0) throw new Error(`reloading a script: ${vm.latin1(-1)}`);
}

/** Compile `body` as @user_script into the registry as f_<sha>; null or the error text. */
function compileScript(sha: string, body: Uint8Array): string | null {
  const M = vm.M;
  if (vm.load(body, '@user_script') !== 0) {
    const msg = vm.latin1(-1);
    M._lua_settop(vm.L, 0);
    return `ERR Error compiling script (new function): ${msg}`;
  }
  untail();
  // setfenv to the protected globals, then store.
  vm.getRegistry('__prep');
  M._lua_insert(vm.L, -2);
  M._lua_call(vm.L, 1, 1);
  vm.setRegistry(`f_${sha}`);
  compiled.add(sha);
  M._lua_settop(vm.L, 0);
  return null;
}

/** Run runner(fn, KEYS, ARGV, name, killText) where fn is already on the stack; returns the serialised reply. */
function run(runner: string, keys: Uint8Array[], argv: Uint8Array[], name: string, killText: string): Uint8Array {
  const M = vm.M;
  const L = vm.L;
  Atomics.store(init.ctl, CTL_KILL, 0);
  // stack: fn
  vm.getRegistry(runner);
  M._lua_insert(L, -2); // runner fn
  if (!vm.pushValues([keys, argv])) {
    M._lua_settop(L, 0);
    const msg = `ERR ${vm.lastError}`;
    return Buffer.from(`e${msg.length}:${msg}`, 'latin1');
  }
  // runner fn KEYS ARGV
  vm.pushString(name);
  vm.pushString(killText);
  const st = M._lua_pcall(L, 5, 1, 0);
  let out: Uint8Array;
  if (st !== 0) {
    const msg = `ERR Error running script ${name}, ${vm.latin1(-1).slice(0, 100)}`;
    out = Buffer.from(`e${msg.length}:${msg}`, 'latin1');
  } else {
    out = vm.bytes(-1);
  }
  M._lua_settop(L, 0);
  return out;
}

function handle(msg: Record<string, unknown>): unknown {
  const M = vm.M;
  switch (msg.t) {
    case 'compile': {
      const err = compileScript(msg.sha as string, msg.body as Uint8Array);
      return { t: 'done', err };
    }
    case 'eval': {
      const sha = msg.sha as string;
      if (msg.body !== undefined && !compiled.has(sha)) {
        const err = compileScript(sha, msg.body as Uint8Array);
        if (err !== null) return { t: 'done', r: Buffer.from(`e${err.length}:${err}`, 'latin1') };
      }
      vm.getRegistry(`f_${sha}`);
      const r = run('__run_eval', msg.keys as Uint8Array[], msg.args as Uint8Array[], msg.name as string,
        'Script killed by user with SCRIPT KILL...');
      return { t: 'done', r };
    }
    case 'sflush': {
      for (const sha of compiled) {
        M._lua_settop(vm.L, 0);
        vm.pushValues([null]);
        vm.setRegistry(`f_${sha}`);
      }
      compiled.clear();
      M._lua_settop(vm.L, 0);
      return { t: 'done' };
    }
    case 'fload': {
      if (vm.load(msg.code as Uint8Array, '@user_function') !== 0) {
        const e = vm.latin1(-1);
        M._lua_settop(vm.L, 0);
        return { t: 'done', err: `ERR Error compiling function: ${e}` };
      }
      untail();
      vm.getRegistry('__load_lib');
      M._lua_insert(vm.L, -2);
      Atomics.store(init.ctl, CTL_KILL, 0);
      loadDeadline = Date.now() + LOAD_TIMEOUT_MS;
      const st = M._lua_pcall(vm.L, 1, 1, 0);
      loadDeadline = 0;
      const out = vm.latin1(-1);
      M._lua_settop(vm.L, 0);
      if (st !== 0) return { t: 'done', err: `ERR Error registering functions: ${out}` };
      if (out[0] === 'E') return { t: 'done', err: `ERR Error registering functions: ${out.slice(1)}` };
      return { t: 'done', fns: parseRegistrations(out.slice(1)) };
    }
    case 'fcommit':
      callRegistry('__commit_lib', msg.name as string);
      return { t: 'done' };
    case 'fdrop':
      callRegistry('__drop_pending');
      return { t: 'done' };
    case 'fdelete':
      callRegistry('__delete_lib', msg.name as string);
      return { t: 'done' };
    case 'fflush':
      callRegistry('__flush_libs');
      return { t: 'done' };
    case 'fcall': {
      vm.getRegistry('__get_fn');
      vm.pushString(msg.lib as string);
      vm.pushString(msg.fn as string);
      M._lua_call(vm.L, 2, 1);
      const r = run('__run_fn', msg.keys as Uint8Array[], msg.args as Uint8Array[], msg.name as string,
        'Script killed by user with SCRIPT KILL...');
      return { t: 'done', r };
    }
  }
  return { t: 'done', err: `unknown request ${String(msg.t)}` };
}

function callRegistry(name: string, arg?: string): void {
  vm.getRegistry(name);
  let n = 0;
  if (arg !== undefined) {
    vm.pushString(arg);
    n = 1;
  }
  vm.M._lua_call(vm.L, n, 0);
  vm.M._lua_settop(vm.L, 0);
}

export interface Registration {
  name: string;
  description: string | null;
  flags: string[];
}

/** "<count>;" then per function "len:name" "d|n len:desc" "count:flags,;" */
function parseRegistrations(s: string): Registration[] {
  let p = s.indexOf(';');
  const n = Number(s.slice(0, p));
  p++;
  const readLen = (): string => {
    const c = s.indexOf(':', p);
    const len = Number(s.slice(p, c));
    const v = s.slice(c + 1, c + 1 + len);
    p = c + 1 + len;
    return v;
  };
  const out: Registration[] = [];
  for (let i = 0; i < n; i++) {
    const name = readLen();
    const hasDesc = s[p] === 'd';
    p++;
    const desc = readLen();
    const c = s.indexOf(':', p);
    const e = s.indexOf(';', c);
    const flags = s.slice(c + 1, e);
    p = e + 1;
    out.push({ name, description: hasDesc ? desc : null, flags: flags === '' ? [] : flags.split(',') });
  }
  return out;
}

try {
  setup();
  ch.send({ t: 'ready' });
} catch (e) {
  ch.send({ t: 'fatal', error: String((e as Error).stack ?? e) });
  throw e;
}
for (;;) {
  const msg = ch.recv() as Record<string, unknown>;
  let reply: unknown;
  try {
    reply = handle(msg);
  } catch (e) {
    reply = { t: 'done', err: `ERR internal scripting error: ${(e as Error).message}` };
    try {
      vm.M._lua_settop(vm.L, 0);
    } catch { /* state unusable: the host restarts the worker on the next fatal */ }
  }
  ch.send(reply);
}
