/**
 * One Lua 5.1 state with Redis's scripting runtime in it (lua-vm.ts + prelude.ts): compiled
 * EVAL scripts, function libraries, and the runs of both. Two of these exist per server (see
 * host.ts): the engine thread's, where every script starts and redis.call is a direct call into
 * the dispatcher, and the worker thread's (worker.ts), where a long read-only script is moved so
 * that the engine thread can answer BUSY, SCRIPT KILL and FUNCTION KILL meanwhile.
 *
 * What differs between the two (how redis.call reaches the engine, redis.log, the count hook)
 * is the RuntimeHost; everything a script can observe is this file and the prelude, shared.
 *
 * redis.call and redis.pcall are the bridges `call` and `pcall` themselves (C functions to Lua,
 * as Redis's are: no Lua wrapper per call). When every argument is a string the host runs the
 * command and pushes the reply with pushReply(), which returns what it pushed (a Reply code):
 * a bulk string or an integer (a Lua number, vm.direct) is the result as it is; a status becomes
 * {ok=} and an error reply {err=} here (redis.call raises it: the bridge returns RAISE and its
 * C side calls lua_error, so the Lua error does not unwind through JS frames); without
 * vm.direct, an integer's text is finished by the prelude's tonumber. Other arguments go to the
 * prelude's __call_convert (numbers converted as Redis does, other types refused), which calls
 * the bridge again; a stop asked by RuntimeHost.check before the command (SCRIPT KILL, moving
 * the script) raises through __call_killed as the count hook does.
 */
import { createHash } from 'node:crypto';
import { Argv } from '../../resp/argv.js';
import { LuaVM, LUA_REGISTRYINDEX, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, RAISE, type LuaValue } from './lua-vm.js';
import { PRELUDE, PRELUDE_NAME } from './prelude.js';
import {
  type Ser, parseSer, jsonEncode, jsonEncodeLua, JSON_STACK_DEPTH, jsonDecode, jsonConfig, resetJsonConfig, mpPackLua, mpUnpack, mpUnpackLua, MP_OTHER, structPack, structUnpack, structSize, bitOp,
} from './libs.js';

/** What a runtime asks of its thread. */
export interface RuntimeHost {
  /**
   * redis.call / redis.pcall with n string arguments at stack 1..n: run it, return pushReply()'s
   * code. `argv`: those arguments in place in the heap when the runtime read them already (else null).
   */
  call(rt: LuaRuntime, n: number, argv: Argv | null): Reply;
  /** redis.acl_check_cmd with n string arguments: '1' allowed, '0' denied, 'u' unknown command. */
  acl(rt: LuaRuntime, n: number): string;
  log(level: number, msg: string): void;
  /** redis.setresp(v), and back to 2 as a run starts: the protocol redis.call replies take. */
  setResp(v: 2 | 3): void;
  /**
   * The count hook (every 100000 instructions of user code) and every redis.call (beforeCall):
   * null to go on, 'k' to stop the script with the kill error (SCRIPT KILL, or host.ts moving
   * it: it is then run again elsewhere).
   */
  check(beforeCall: boolean): string | null;
}

export interface Registration {
  name: string;
  description: string | null;
  flags: string[];
}

/** Registry keys of a runner family (prelude.ts): numkeys 0, 1, 2, any (n), tables (t). */
type RunnerKeys = number[];

/**
 * perf: what every run fetches from the registry is also kept there at an integer key (pinRefs,
 * compile), read with lua_rawgeti: lua_getfield makes a Lua string of its C string key on every
 * call (every byte hashed, then looked up in the string table; "f_" + a sha is 42 bytes).
 * 1: __errh; 2-6: __run_eval<0|1|2|n|t>; 7-11: __run_fn<...>; 12: __set_name; 13: the
 * anchors of the redis.call site table (anchorSite); from 14, two per compiled script: its
 * function, then its name (the sha, for setName).
 */
const REF_ERRH = 1;
const RUNNER_REFS = { eval: [2, 3, 4, 5, 6], fn: [7, 8, 9, 10, 11] };
const REF_SET_NAME = 12;
const REF_SITES = 13;
const FIRST_SCRIPT_REF = 14;

/** Lua states made so far in this thread (LuaRuntime.stateId). */
let statesMade = 0;

/**
 * A run's reply: buf[p, p+len), the bytes of a string result (raw) or serialised (prelude.ts);
 * or, when len is -1, the number num; or, when len is -2, a table left on the stack (see
 * LuaRuntime.tablePlan and serialised).
 */
export interface RunResult {
  buf: Buffer;
  p: number;
  len: number;
  raw: boolean;
  num: number;
}

const EMPTY = Buffer.alloc(0);

/** cmsgpack's offset and limit as they were read from %.17g text: inf and nan became NaN. */
function finiteOrNaN(x: number): number {
  return Number.isFinite(x) ? x : NaN;
}

/** Redis's LOAD_TIMEOUT_MS: FUNCTION LOAD stops library code running longer. */
const LOAD_TIMEOUT_MS = 500;
/**
 * KEYS and ARGV go onto the Lua stack one by one (no chunk to build) when there are at most this
 * many and short (NULs included). A run starts at the bottom of the main state's stack, which
 * Lua 5.1 never makes smaller than BASIC_STACK_SIZE (40 slots); the runner, its 4 fixed
 * arguments and the values use at most 4 + 12 + 1 = 17.
 */
const FAST_ARGS = 12;
const FAST_ARG_LEN = 512;

/** Nesting of tables tablePlan() walks; deeper results take the prelude's serialiser. */
const PLAN_DEPTH = 32;

/** Entries of LuaRuntime.plan: an array header (its count), a string (offset, length), a number. */
export const enum Plan { Array, String, Number }

/** What pushReply() pushed for a redis.call reply (see finish()). */
export const enum Reply {
  /** The result itself (bulk string, number, table). */
  Value,
  /** Nothing: a RESP2 nil (false). */
  False,
  /** Nothing: a RESP3 null (nil). */
  Nil,
  /** A status reply's text ({ok=}). */
  Status,
  /** An error reply's text ({err=}, raised by redis.call). */
  Error,
  /** An integer's decimal text (when numbers cannot be pushed in place). */
  IntText,
}

export class LuaRuntime {
  readonly vm: LuaVM;
  /** Scripts compiled in this state (sha1 -> registry f_<sha>). */
  readonly compiled = new Set<string>();
  /** A redis.call's arguments read in place (vm.stringArgs), reused from call to call. */
  private readonly callArgv = new Argv();
  /** While FUNCTION LOAD runs library code: when it must stop. */
  private loadDeadline = 0;
  /** User code runs (inside a protected call): the count hook may stop it. */
  private active = false;

  constructor(host: RuntimeHost, version: string, versionNum: number) {
    const vm = new LuaVM();
    this.vm = vm;
    const M = vm.M;
    const spec: string[] = [];
    const add = (name: string, fn: (L: number) => number) => spec.push(`${name}=${vm.bridge(fn)};`);

    // redis.call (raises error replies) and redis.pcall (returns them).
    const callBridge = (raise: boolean) => (L: number): number => {
      // A redis.call-heavy loop runs few Lua instructions: the count hook alone would see a
      // kill (or the time to move) late.
      if (host.check(true) !== null) return this.helper(this.killedKey, 0);
      // perf: all strings (the common case), read in place; else checked and converted.
      let code: Reply;
      if (vm.stringArgs(this.callArgv)) {
        code = host.call(this, this.callArgv.count, this.callArgv);
      } else {
        const n = M._lua_gettop(L);
        let i = 1;
        while (i <= n && (M._lua_type(L, i) === LUA_TSTRING || this.intArg(i))) i++;
        if (n === 0 || i <= n) {
          // __call_convert(raise, ...): converts, refuses or calls this bridge again.
          M._lua_getfield(L, LUA_REGISTRYINDEX, this.convertKey);
          M._lua_insert(L, 1);
          vm.pushBool(raise);
          M._lua_insert(L, 2);
          M._lua_call(L, n + 1, 1);
          return 1;
        }
        code = host.call(this, n, null);
      }
      return this.finish(code, raise);
    };
    add('call', callBridge(true));
    add('pcall', callBridge(false));
    add('acl_check', (L) => {
      vm.pushString(host.acl(this, M._lua_gettop(L)));
      return 1;
    });
    add('setresp', () => {
      host.setResp(vm.latin1(1) === '3' ? 3 : 2);
      return 0;
    });
    add('sha1hex', () => {
      vm.pushString(createHash('sha1').update(vm.bytes(1)).digest('hex'));
      return 1;
    });
    add('log', () => {
      host.log(Number(vm.latin1(1)), vm.latin1(2));
      return 0;
    });
    add('check', () => {
      // Outside runs (JS calling runtime helpers, value chunks) nothing may raise: no pcall.
      if (!this.active) return 0;
      const why = this.loadDeadline !== 0 ? (Date.now() > this.loadDeadline ? 't' : null) : host.check(false);
      if (why === null) return 0;
      vm.pushString(why);
      return 1;
    });
    // (VIEW, NULL, value): encoded from the stack (jsonEncodeLua); past its depth, from what
    // serialise_any makes of the value, as before.
    add('json_encode', (L) => {
      if (vm.stackDirect && M._lua_checkstack(L, 4 * JSON_STACK_DEPTH + 8) !== 0) {
        const r = jsonEncodeLua(vm, 3, 1, 2);
        if (r !== undefined) return this.pushResult(r);
        M._lua_settop(L, 3);
      }
      return this.pushResult(jsonEncode(this.serAny()));
    });
    add('json_decode', () => this.pushResult(jsonDecode(vm.buf(1))));
    add('json_config', () => this.pushResult(jsonConfig(vm.latin1(1), this.ser(2))));
    add('mp_pack', (L) => {
      // (VIEW, values...): packed from the stack (libs.ts mpPackLua).
      const out = mpPackLua(vm, 2, M._lua_gettop(L), 1);
      if (out === null) return this.pushResult([false, Buffer.from('stack overflow (cmsgpack.pack)')]);
      M._lua_pushboolean(L, 1);
      vm.pushBytes(out, 0, out.length);
      return 2;
    });
    add('mp_unpack', () => {
      // The other arguments first: converting one may grow the heap, which the view is over.
      const mode = vm.latin1(2);
      const a = finiteOrNaN(this.numArg(3));
      const b = finiteOrNaN(this.numArg(4));
      if (vm.direct) {
        // perf: decoded onto the stack from the string's own bytes (no JS values).
        const p = vm.strPtr(1);
        const n = mpUnpackLua(vm, p, vm.strLen, mode, a, b);
        if (n !== MP_OTHER) return n;
      }
      // perf: decoded in place (mpUnpack copies what it keeps, and calls nothing in Lua).
      return this.pushResult(mpUnpack(vm.view(1), mode, a, b));
    });
    add('struct_pack', () => this.pushResult(structPack(vm.latin1(1), this.ser(2))));
    add('struct_unpack', () => this.pushResult(structUnpack(vm.latin1(1), vm.buf(2), Number(vm.latin1(3)))));
    add('struct_size', () => this.pushResult(structSize(vm.latin1(1))));
    add('bit', (L) => {
      const n = M._lua_gettop(L);
      const nums: number[] = [];
      for (let i = 2; i <= n; i++) nums.push(Number(vm.latin1(i)));
      vm.pushString(bitOp(vm.latin1(1), nums));
      return 1;
    });
    spec.push(`version=${version};`, `version_num=${versionNum};`, `direct=${vm.direct ? 1 : 0};`);
    this.spec = spec.join('');
    this.startPrelude();
    this.runEvalKey = RUNNER_REFS.eval;
    this.runFnKey = RUNNER_REFS.fn;
    this.serNumKey = vm.cstr('__ser_num');
    this.runErrorKey = vm.cstr('__run_error');
    this.finishKey = vm.cstr('__finish');
    this.serAnyKey = vm.cstr('__ser_any');
    this.okField = vm.cstr('ok');
    this.errField = vm.cstr('err');
    this.ignoreStatsField = vm.cstr('ignore_err_stats_update');
    this.tonumberKey = vm.cstr('__call_tonumber');
    this.killedKey = vm.cstr('__call_killed');
    this.convertKey = vm.cstr('__call_convert');
  }

  /** The bridges' names for the prelude (name=__slot<i>;...). */
  private readonly spec: string;

  /** Run the prelude in the VM's (new) state with (registry, spec). */
  private startPrelude(): void {
    const vm = this.vm;
    const M = vm.M;
    resetJsonConfig();
    const code = Buffer.from(PRELUDE, 'latin1');
    if (vm.load(code, PRELUDE_NAME) !== 0) throw new Error(`prelude: ${vm.latin1(-1)}`);
    M._lua_pushvalue(vm.L, LUA_REGISTRYINDEX);
    vm.pushString(this.spec);
    if (M._lua_pcall(vm.L, 2, 0, 0) !== 0) throw new Error(`prelude: ${vm.latin1(-1)}`);
    M._lua_settop(vm.L, 0);
    this.pinRefs();
  }

  /** Integer registry keys of the prelude's run values (REF_ERRH, RUNNER_REFS) in a new state. */
  private pinRefs(): void {
    const vm = this.vm;
    const pin = (name: string, ref: number): void => {
      vm.getRegistry(name);
      vm.M._lua_rawseti(vm.L, LUA_REGISTRYINDEX, ref);
    };
    pin('__errh', REF_ERRH);
    pin('__set_name', REF_SET_NAME);
    for (const kind of ['eval', 'fn'] as const) {
      ['0', '1', '2', 'n', 't'].forEach((v, i) => pin(`__run_${kind}${v}`, RUNNER_REFS[kind][i]));
    }
    this.fnRefs.clear();
    this.nextRef = FIRST_SCRIPT_REF;
    vm.M._lua_createtable(vm.L, 0, 0);
    vm.M._lua_rawseti(vm.L, LUA_REGISTRYINDEX, REF_SITES);
    this.stateId = ++statesMade;
  }

  /**
   * Which Lua state this is (unique in the thread, new at every renew): the anchored strings of
   * anchorSite belong to one state.
   */
  stateId = 0;

  /**
   * perf (the host's redis.call site table): keep the string at stack index 1 of the calling
   * state (a redis.call's command name) alive at anchor `slot`, first moving what slot held to
   * `moveTo` (>= 0; what was there goes); false (nothing done) if it is not a string. Lua 5.1
   * never moves an object and interns every string, so while anchored, a string at that heap
   * address is that very string: the table knows a name by its address alone.
   */
  anchorSite(slot: number, moveTo: number): boolean {
    const M = this.vm.M;
    const L = this.vm.L;
    // (A number argument's digits are not a Lua string: not kept.)
    if (M._lua_type(L, 1) !== LUA_TSTRING) return false;
    M._lua_rawgeti(L, LUA_REGISTRYINDEX, REF_SITES);
    if (moveTo >= 0) {
      M._lua_rawgeti(L, -1, slot + 1);
      M._lua_rawseti(L, -2, moveTo + 1);
    }
    M._lua_pushvalue(L, 1);
    M._lua_rawseti(L, -2, slot + 1);
    M._lua_settop(L, -2);
    return true;
  }

  /**
   * Start over in a fresh Lua state (SCRIPT FLUSH, FUNCTION FLUSH, as Redis's scriptingReset):
   * no compiled script, no library, cjson settings back to their defaults. Only math.random's
   * sequence goes on (Redis's rand48 state belongs to the process, not to the Lua state).
   */
  fresh(): void {
    const rand = this.randState('now');
    this.vm.renew();
    this.compiled.clear();
    this.name = '';
    this.startPrelude();
    this.setRandState(rand);
  }

  /** Number argument i of a bridge (a number, or with !vm.direct its %.17g text). */
  private numArg(i: number): number {
    const vm = this.vm;
    return vm.M._lua_type(vm.L, i) === LUA_TNUMBER ? vm.numberArg(i) : Number(vm.latin1(i));
  }

  /** cjson.encode's value (bridge argument 3) through prelude.ts's serialise_any and parseSer. */
  private serAny(): Ser {
    const vm = this.vm;
    const M = vm.M;
    const L = vm.L;
    M._lua_getfield(L, LUA_REGISTRYINDEX, this.serAnyKey);
    M._lua_pushvalue(L, 3);
    M._lua_call(L, 1, 2);
    const top = M._lua_gettop(L);
    return parseSer(vm.buf(top - 1), vm.direct ? (k) => vm.tableNumber(top, k) : null)[0] ?? null;
  }

  /**
   * The values prelude.ts's serialise_any passed as arguments i (the serialised text) and
   * i + 1 (the table of its numbers).
   */
  private ser(i: number): Ser[] {
    const vm = this.vm;
    return parseSer(vm.buf(i), vm.direct ? (k) => vm.tableNumber(i + 1, k) : null);
  }

  /**
   * perf: a redis.call argument that is an integer (BullMQ passes scores, counts, MAXLEN...)
   * becomes its text here, in its stack slot: what the prelude's gencall would make of it
   * (Redis's "%.17g", which for a safe integer is its digits), without a second call through
   * Lua and a printf in wasm (~2 µs). Other numbers (fractions, -0, beyond 2^53) and other
   * types still go to gencall. False when argument i is not such an integer.
   */
  private intArg(i: number): boolean {
    const vm = this.vm;
    const M = vm.M;
    if (!vm.direct || M._lua_type(vm.L, i) !== LUA_TNUMBER) return false;
    const x = vm.numberArg(i);
    if (!Number.isSafeInteger(x) || Object.is(x, -0)) return false;
    vm.pushLatin1(String(x));
    M._lua_replace(vm.L, i);
    return true;
  }

  /**
   * The call bridges' result from pushReply()'s code: one value, finished by a prelude helper
   * where the reply needs a table (or, raising, does not return).
   */
  private finish(code: Reply, raise: boolean): number {
    const vm = this.vm;
    switch (code) {
      case Reply.Value: return 1;
      case Reply.False: vm.pushBool(false); return 1;
      case Reply.Nil: vm.M._lua_settop(vm.L, vm.M._lua_gettop(vm.L) + 1); return 1;
      case Reply.Status: {
        // { ok = v }, as the table constructor makes it (no array part, one hash slot).
        const M = vm.M;
        M._lua_createtable(vm.L, 0, 1);
        M._lua_insert(vm.L, -2);
        M._lua_setfield(vm.L, -2, this.okField);
        return 1;
      }
      case Reply.IntText: return this.helper(this.tonumberKey, 1);
      default: {
        // { err = v, ignore_err_stats_update = true }: already counted in the error statistics
        // by the command itself (Redis's flag name). Raised by the C side of the bridge
        // (lua_error: native/lua/lua-wasm.c) once this JS frame has returned.
        const M = vm.M;
        M._lua_createtable(vm.L, 0, 2);
        M._lua_insert(vm.L, -2);
        M._lua_setfield(vm.L, -2, this.errField);
        M._lua_pushboolean(vm.L, 1);
        M._lua_setfield(vm.L, -2, this.ignoreStatsField);
        return raise ? RAISE : 1;
      }
    }
  }

  /** Call registry function `key` on the top n values: its one result replaces them. */
  private helper(key: number, n: number): number {
    const M = this.vm.M;
    const L = this.vm.L;
    M._lua_getfield(L, LUA_REGISTRYINDEX, key);
    M._lua_insert(L, -1 - n);
    M._lua_call(L, n, 1);
    return 1;
  }

  private readonly okField: number;
  private readonly errField: number;
  private readonly ignoreStatsField: number;
  private readonly tonumberKey: number;
  private readonly killedKey: number;
  private readonly convertKey: number;

  /** Push a bridge's results; on failure push (false, message). Returns the count pushed. */
  private pushResult(values: LuaValue[]): number {
    const vm = this.vm;
    if (!vm.pushValues(values)) {
      vm.pushValues([false, Buffer.from(vm.lastError, 'latin1')]);
      return 2;
    }
    return values.length;
  }

  /** The bytes of string argument i of a bridge (a copy). */
  bytes(i: number): Uint8Array {
    return this.vm.bytes(i);
  }

  /**
   * Push a redis.call reply (`isErr`: the reply itself is an error); returns what was pushed
   * (see Reply and finish()).
   */
  pushReply(v: LuaValue, isErr: boolean): Reply {
    const vm = this.vm;
    if (v instanceof Uint8Array) {
      vm.pushBytes(v, 0, v.length);
      return Reply.Value;
    }
    if (typeof v === 'number') {
      // perf: a number in place (vm.direct), else its text for tonumber.
      if (vm.direct) {
        vm.pushNumber(v);
        return Reply.Value;
      }
      vm.pushString(String(v));
      return Reply.IntText;
    }
    if (v === false) return Reply.False;
    // A RESP3 null (redis.setresp(3)): nil, where RESP2's nil bulk is false.
    if (v === null) return Reply.Nil;
    if (!Array.isArray(v) && typeof v === 'object') {
      if ('err' in v && isErr) return this.pushText(v.err, Reply.Error);
      if ('ok' in v) return this.pushText(v.ok, Reply.Status);
    }
    return this.pushTagged(v);
  }

  private pushText(s: Uint8Array, code: Reply): Reply {
    this.vm.pushBytes(s, 0, s.length);
    return code;
  }

  private pushTagged(v: LuaValue): Reply {
    const vm = this.vm;
    if (!vm.pushValues([v])) {
      vm.pushString(`ERR ${vm.lastError}`);
      return Reply.Error;
    }
    return Reply.Value;
  }

  // ---------------------------------------------------------------- scripts

  /**
   * Replace the function on the stack top by the same function with every TAILCALL turned into
   * a CALL (the RETURN that the compiler emits after it returns the results). Redis's API
   * functions are C functions, so `return redis.call(...)` keeps the script's frame, and errors
   * say "on @user_script:N"; ours are Lua wrappers, which a real tail call would erase.
   */
  private untail(): void {
    const vm = this.vm;
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

  /** Compile `body` as @user_script into the registry as f_<sha>; null or the error reply. */
  compile(sha: string, body: Uint8Array): string | null {
    const vm = this.vm;
    const M = vm.M;
    if (vm.load(body, '@user_script') !== 0) {
      const msg = vm.latin1(-1);
      M._lua_settop(vm.L, 0);
      return `ERR Error compiling script (new function): ${msg}`;
    }
    this.untail();
    // setfenv to the protected globals, then store.
    vm.getRegistry('__prep');
    M._lua_insert(vm.L, -2);
    M._lua_call(vm.L, 1, 1);
    M._lua_pushvalue(vm.L, -1);
    vm.setRegistry(`f_${sha}`);
    let ref = this.fnRefs.get(sha);
    if (ref === undefined) {
      ref = this.nextRef;
      this.nextRef += 2;
      this.fnRefs.set(sha, ref);
    }
    M._lua_rawseti(vm.L, LUA_REGISTRYINDEX, ref);
    vm.pushString(sha);
    M._lua_rawseti(vm.L, LUA_REGISTRYINDEX, ref + 1);
    this.compiled.add(sha);
    M._lua_settop(vm.L, 0);
    return null;
  }

  /**
   * Run compiled script `sha` with KEYS = argv[first, first+nk) and ARGV = the rest. Returns the
   * serialised reply (prelude.ts) as buf[p, p+len), in place in the heap: read it before the
   * next call into this runtime, then call endRun().
   */
  runEval(sha: string, argv: Argv, first: number, nk: number, name: string): RunResult {
    const vm = this.vm;
    const ref = this.fnRefs.get(sha);
    this.setName(name, ref !== undefined && name === sha ? ref + 1 : 0);
    if (ref !== undefined) vm.M._lua_rawgeti(vm.L, LUA_REGISTRYINDEX, ref);
    else vm.getRegistry(`f_${sha}`);
    return this.run(this.runEvalKey, argv, first, nk);
  }

  /** Integer registry keys of the scripts compiled in this state (see REF_ERRH), the next one. */
  private readonly fnRefs = new Map<string, number>();
  private nextRef = FIRST_SCRIPT_REF;
  /** Integer registry keys of the runners (RUNNER_REFS). */
  private readonly runEvalKey: RunnerKeys;
  private readonly runFnKey: RunnerKeys;
  private readonly serNumKey: number;
  private readonly runErrorKey: number;
  private readonly finishKey: number;
  private readonly serAnyKey: number;

  /** Run function `fn` of library `lib`, as runEval. */
  runFunction(lib: string, fn: string, argv: Argv, first: number, nk: number, name: string): RunResult {
    const vm = this.vm;
    this.setName(name);
    vm.getRegistry('__get_fn');
    vm.pushString(lib);
    vm.pushString(fn);
    vm.M._lua_call(vm.L, 2, 1);
    return this.run(this.runFnKey, argv, first, nk);
  }

  private readonly result: RunResult = { buf: EMPTY, p: 0, len: 0, raw: false, num: 0 };
  /** The script name the prelude holds for error replies. */
  private name = '';

  private setName(name: string, nameRef = 0): void {
    if (name === this.name) return;
    const vm = this.vm;
    // (nameRef: the name's string at that registry key, see REF_ERRH: no text to intern.)
    vm.M._lua_rawgeti(vm.L, LUA_REGISTRYINDEX, REF_SET_NAME);
    if (nameRef !== 0) vm.M._lua_rawgeti(vm.L, LUA_REGISTRYINDEX, nameRef);
    else vm.pushString(name);
    vm.M._lua_call(vm.L, 1, 0);
    this.name = name;
  }

  /**
   * Call the runner of `kind` (prelude.ts: __run_<kind><0|1|2|n|t>) on fn (on the stack) with
   * KEYS and ARGV from argv, in one lua_pcall with the prelude's errh as error handler.
   */
  private run(kind: RunnerKeys, argv: Argv, first: number, nk: number): RunResult {
    const vm = this.vm;
    const M = vm.M;
    const L = vm.L;
    const res = this.result;
    const count = argv.count - first;
    let fast = count <= FAST_ARGS;
    for (let i = first; fast && i < argv.count; i++) {
      fast = argv.len(i) <= FAST_ARG_LEN;
    }
    M._lua_rawgeti(L, LUA_REGISTRYINDEX, REF_ERRH);
    M._lua_rawgeti(L, LUA_REGISTRYINDEX, fast ? (nk <= 2 ? kind[nk] : kind[3]) : kind[4]);
    M._lua_insert(L, -3);
    M._lua_insert(L, -3); // errh runner fn
    const errh = M._lua_gettop(L) - 2;
    let nargs: number;
    if (fast) {
      nargs = 1 + count;
      if (nk > 2) {
        vm.pushString(String(nk));
        nargs++;
      }
      if (count > 0) vm.pushArgs(argv, first, -1);
    } else {
      // KEYS and ARGV built as Redis's luaCreateArray builds them (lua_wasm_args).
      vm.pushArgs(argv, first, nk);
      nargs = 3;
    }
    this.active = true;
    let st: number;
    try {
      st = M._lua_pcall(L, nargs, 1, errh);
    } finally {
      this.active = false;
    }
    if (st !== 0) {
      // The error value (errh's table, or a message) is on the stack top: make the reply.
      M._lua_getfield(L, LUA_REGISTRYINDEX, this.runErrorKey);
      M._lua_insert(L, -2);
      M._lua_call(L, 1, 1);
      res.raw = false;
      return this.textResult(-1);
    }
    // The script's result alone (prelude.ts runners), read by its type.
    const t = M._lua_type(L, -1);
    if (t === LUA_TSTRING) {
      res.raw = true;
      return this.textResult(-1);
    }
    res.raw = false;
    if (t === LUA_TTABLE) {
      // Left on the stack for tablePlan() (or serialised()).
      res.len = -2;
      return res;
    }
    if (t === LUA_TNUMBER) {
      // Read in place, or serialised by the prelude.
      if (vm.direct) {
        res.num = vm.numberAt(-1);
        res.len = -1;
        return res;
      }
      M._lua_getfield(L, LUA_REGISTRYINDEX, this.serNumKey);
      M._lua_pushvalue(L, -2);
      M._lua_call(L, 1, 1);
      return this.textResult(-1);
    }
    // nil, booleans and the rest: serialised as finish() does.
    return this.serialised();
  }

  /** The run's result: the string at stack index i, in place in the heap. */
  private textResult(i: number): RunResult {
    const vm = this.vm;
    const res = this.result;
    res.p = vm.strPtr(i);
    res.len = vm.strLen;
    res.buf = vm.heapBuffer();
    return res;
  }

  /**
   * The result on the stack top (a table, len -2; or nil, a boolean...) serialised by the
   * prelude's finish(): fills and returns the run's result.
   */
  serialised(): RunResult {
    const M = this.vm.M;
    const L = this.vm.L;
    M._lua_getfield(L, LUA_REGISTRYINDEX, this.finishKey);
    M._lua_pushvalue(L, -2);
    if (M._lua_pcall(L, 1, 1, 0) !== 0) {
      // Out of memory: the reply a run that raised it gets.
      M._lua_getfield(L, LUA_REGISTRYINDEX, this.runErrorKey);
      M._lua_insert(L, -2);
      M._lua_call(L, 1, 1);
    }
    return this.textResult(-1);
  }

  /**
   * A table result (len -2) read from the stack into `plan` (array headers, strings in place in
   * the heap, numbers) when it is what the prelude's ser_resp writes as plain arrays: tables
   * whose keys are 1..#t (`next(t, #t)` finds nothing), their elements up to the first nil
   * strings, numbers or such tables, at most PLAN_DEPTH deep. Anything else (error and status
   * tables, booleans, RESP3 types...): false, and the caller takes serialised().
   * perf: no Lua code runs and nothing is allocated (the string offsets stay valid until
   * endRun()); the prelude's walk cost ~10 µs for a BullMQ job's 24 values (type(), table
   * stores, table.concat, then the parse of its text).
   */
  tablePlan(): boolean {
    const vm = this.vm;
    const M = vm.M;
    // (A big result's plan is not kept for the next one.)
    if (this.plan.length > 4096) this.plan = [];
    else this.plan.length = 0;
    if (!vm.direct || M._lua_checkstack(vm.L, PLAN_DEPTH + 4) === 0) return false;
    const top = M._lua_gettop(vm.L);
    const ok = this.planTable(top, 1);
    M._lua_settop(vm.L, top);
    return ok;
  }

  /** The array header, strings and numbers of the result (tablePlan()). */
  plan: number[] = [];

  private planTable(t: number, depth: number): boolean {
    if (depth > PLAN_DEPTH) return false;
    const vm = this.vm;
    const M = vm.M;
    const L = vm.L;
    const plan = this.plan;
    // ser_resp: `next(v, #v ~= 0 and #v or nil) ~= nil` means other keys (maybe err, ok...).
    const len = M._lua_objlen(L, t);
    if (len === 0) M._lua_pushnil(L);
    else M._lua_pushnumber(L, len);
    if (M._lua_next(L, t) !== 0) return false;
    const at = plan.length;
    plan.push(Plan.Array, 0);
    let j = 1;
    for (;; j++) {
      M._lua_rawgeti(L, t, j);
      const ty = M._lua_type(L, -1);
      if (ty === LUA_TNIL) break;
      if (ty === LUA_TSTRING) plan.push(Plan.String, vm.strPtr(-1), vm.strLen);
      else if (ty === LUA_TNUMBER) plan.push(Plan.Number, vm.numberAt(-1));
      else if (ty !== LUA_TTABLE || !this.planTable(M._lua_gettop(L), depth + 1)) return false;
      M._lua_settop(L, -2);
    }
    M._lua_settop(L, -2);
    plan[at + 1] = j - 1;
    return true;
  }

  /** Drop what the last run left on the stack. */
  endRun(): void {
    this.vm.M._lua_settop(this.vm.L, 0);
  }

  // ---------------------------------------------------------------- math.random state

  /**
   * Redis's rand48 state of math.random persists from script to script (7.0.15: no reseeding per
   * script), so it travels with a script moved to the other state: get (now), snapshot (as the
   * last run started), set. The text is "high,low" (two 24-bit halves).
   */
  randState(which: 'now' | 'start'): string {
    const vm = this.vm;
    vm.getRegistry('__rand_get');
    vm.pushString(which);
    vm.M._lua_call(vm.L, 1, 1);
    const s = vm.latin1(-1);
    vm.M._lua_settop(vm.L, 0);
    return s;
  }

  setRandState(s: string): void {
    const vm = this.vm;
    vm.getRegistry('__rand_set');
    vm.pushString(s);
    vm.M._lua_call(vm.L, 1, 0);
    vm.M._lua_settop(vm.L, 0);
  }

  // ---------------------------------------------------------------- function libraries

  /** FUNCTION LOAD step 1: run the library code; its registrations or an error reply. */
  loadLibrary(code: Uint8Array): { fns: Registration[] } | { err: string } {
    const vm = this.vm;
    const M = vm.M;
    if (vm.load(code, '@user_function') !== 0) {
      const e = vm.latin1(-1);
      M._lua_settop(vm.L, 0);
      return { err: `ERR Error compiling function: ${e}` };
    }
    this.untail();
    vm.getRegistry('__load_lib');
    M._lua_insert(vm.L, -2);
    this.loadDeadline = Date.now() + LOAD_TIMEOUT_MS;
    this.active = true;
    let st: number;
    try {
      st = M._lua_pcall(vm.L, 1, 1, 0);
    } finally {
      this.loadDeadline = 0;
      this.active = false;
    }
    const out = vm.latin1(-1);
    M._lua_settop(vm.L, 0);
    if (st !== 0) return { err: `ERR Error registering functions: ${out}` };
    if (out[0] === 'E') return { err: `ERR Error registering functions: ${out.slice(1)}` };
    return { fns: parseRegistrations(out.slice(1)) };
  }

  /** FUNCTION LOAD step 2: keep the loaded library as `name`, or drop it. */
  commitLibrary(name: string): void {
    this.callRegistry('__commit_lib', name);
  }

  dropPending(): void {
    this.callRegistry('__drop_pending');
  }

  deleteLibrary(name: string): void {
    this.callRegistry('__delete_lib', name);
  }

  private callRegistry(name: string, arg?: string): void {
    const vm = this.vm;
    vm.getRegistry(name);
    let n = 0;
    if (arg !== undefined) {
      vm.pushString(arg);
      n = 1;
    }
    vm.M._lua_call(vm.L, n, 0);
    vm.M._lua_settop(vm.L, 0);
  }

  /** After a JS exception inside Lua: try to leave an empty stack (the state may be unusable). */
  recover(): void {
    try {
      this.vm.L = this.vm.main;
      this.vm.M._lua_settop(this.vm.L, 0);
    } catch { /* the owner replaces the state */ }
  }
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
