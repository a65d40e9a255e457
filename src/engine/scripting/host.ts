/**
 * The engine-thread side of scripting: the script cache, the function libraries, the Lua worker
 * thread and the running script.
 *
 * Design (why a worker): Lua runs in a worker thread; the engine thread sends it a request and
 * then serves the script's redis.call requests synchronously (Atomics.wait), so the script's
 * commands run through the normal command table on the single writer and nothing else runs in
 * between: the script is atomic. If the script is still running after busy-reply-threshold ms,
 * the engine thread stops waiting synchronously and returns to the event loop with the caller
 * blocked; from then on it serves redis.call requests as they arrive (Atomics.waitAsync) and the
 * dispatcher answers every other command with -BUSY except the ALLOW_BUSY ones (SCRIPT KILL,
 * FUNCTION KILL, FUNCTION STATS, SHUTDOWN...). Active expiry is paused meanwhile and the time
 * seen by the script's commands stays the script's start time, so atomicity still holds.
 * SCRIPT KILL sets a shared flag that the Lua count hook checks (as Redis's luaMaskCountHook).
 *
 * The worker is started on first use. If it fails internally it is replaced and the function
 * libraries are loaded into the new one (the EVAL cache is compiled again on demand).
 */
import { Worker, MessageChannel } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { Argv } from '../../resp/argv.js';
import { type ReplySink, countError, replyStats } from '../../resp/reply-sink.js';
import { Client, type Transport } from '../client.js';
import type { Engine } from '../engine.js';
import { F } from '../flags.js';
import { call } from '../dispatch.js';
import { SyncChannel, CTL_MAIN, CTL_WORKER, CTL_KILL, CTL_SIZE } from './channel.js';
import { FunctionStore, type FunctionInfo, type Library, parseShebang, parsePayload } from './functions.js';
import { REDIS_VERSION } from '../commands/connection.js';

export const SLOW_EVAL = 'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.';
export const SLOW_SCRIPT = 'BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.';

/** The script being run. */
export interface RunCtx {
  readonly caller: Client;
  readonly out: ReplySink;
  /** sha1 (EVAL) or function name (FCALL): "script: <name>" in errors. */
  readonly name: string;
  readonly isEval: boolean;
  readonly readOnly: boolean;
  /** The caller's argv (FUNCTION STATS). */
  readonly argv: Buffer[];
  readonly start: number;
  wrote: boolean;
  killed: boolean;
  async: boolean;
}

interface Done {
  t: 'done';
  r?: Uint8Array;
  err?: string | null;
  fns?: { name: string; description: string | null; flags: string[] }[];
}

/**
 * Commands Redis flags may-replicate internally without showing it in COMMAND INFO (7.0.15):
 * read-only scripts refuse them like writes.
 */
const MAY_REPLICATE = new Set(['publish', 'spublish', 'pfcount']);

const VERSION_NUM = REDIS_VERSION.split('.').reduce((a, p) => a * 256 + Number(p), 0);

/** A transport for the script client: nothing to flush or close. */
const INTERNAL: Transport = {
  kind: 'internal',
  close() {},
  requestFlush() {},
  outputBytes: () => 0,
  inputBytes: () => 0,
  resume() {},
};

/** Forwards to the sink of the redis.call being executed (blocking commands reply through c.out). */
class ForwardSink implements ReplySink {
  target: ReplySink | null = null;
  ok(): void { this.target?.ok(); }
  simple(s: string): void { this.target?.simple(s); }
  error(msg: string): void {
    if (this.target) this.target.error(msg);
    else countError(msg);
  }
  int(n: number | bigint): void { this.target?.int(n); }
  bulk(v: Buffer): void { this.target?.bulk(v); }
  bulkLatin1(s: string): void { this.target?.bulkLatin1(s); }
  bulkText(s: string): void { this.target?.bulkText(s); }
  nil(): void { this.target?.nil(); }
  array(n: number): void { this.target?.array(n); }
  nilArray(): void { this.target?.nilArray(); }
}

/**
 * Encodes a command's reply for Lua (Redis's RESP2 -> Lua rules): integer -> number, bulk ->
 * string, nil bulk / nil array -> false, array -> table, status -> {ok=}, error -> {err=}.
 * Binary form read by the worker: s/e/o <u32 len> bytes, i <f64>, f, a <u32 count>.
 */
export class LuaReplyEncoder implements ReplySink {
  private buf = Buffer.allocUnsafe(256);
  private pos = 0;
  /** Elements still expected by each open array. */
  private readonly open: number[] = [];
  topError = false;

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const b = Buffer.allocUnsafe(size);
    this.buf.copy(b, 0, 0, this.pos);
    this.buf = b;
  }

  private done(): void {
    const o = this.open;
    while (o.length > 0) {
      if (--o[o.length - 1] > 0) return;
      o.pop();
    }
  }

  private bytes(tag: number, s: string | Buffer, enc: BufferEncoding): void {
    const n = typeof s === 'string' ? Buffer.byteLength(s, enc) : s.length;
    this.room(5 + n);
    this.buf[this.pos] = tag;
    this.buf.writeUInt32LE(n, this.pos + 1);
    if (typeof s === 'string') this.buf.write(s, this.pos + 5, enc);
    else s.copy(this.buf, this.pos + 5);
    this.pos += 5 + n;
    this.done();
  }

  ok(): void { this.bytes(0x6f, 'OK', 'latin1'); }
  simple(s: string): void { this.bytes(0x6f, s, 'latin1'); }
  error(msg: string): void {
    countError(msg);
    if (this.open.length === 0) this.topError = true;
    this.bytes(0x65, msg, 'latin1');
  }
  int(n: number | bigint): void {
    this.room(9);
    this.buf[this.pos] = 0x69;
    this.buf.writeDoubleLE(Number(n), this.pos + 1);
    this.pos += 9;
    this.done();
  }
  bulk(v: Buffer): void { this.bytes(0x73, v, 'latin1'); }
  bulkLatin1(s: string): void { this.bytes(0x73, s, 'latin1'); }
  bulkText(s: string): void { this.bytes(0x73, s, 'utf8'); }
  nil(): void {
    this.room(1);
    this.buf[this.pos++] = 0x66;
    this.done();
  }
  nilArray(): void { this.nil(); }
  array(n: number): void {
    if (n === 0) {
      this.room(5);
      this.buf[this.pos] = 0x61;
      this.buf.writeUInt32LE(0, this.pos + 1);
      this.pos += 5;
      this.done();
      return;
    }
    this.room(5);
    this.buf[this.pos] = 0x61;
    this.buf.writeUInt32LE(n, this.pos + 1);
    this.pos += 5;
    this.open.push(n);
  }

  /** The encoded reply (a copy sized to fit: it is posted to the worker). */
  take(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.pos));
  }
}

/** Lua number -> Redis integer reply: C's (long long) cast, x86's value for NaN and overflow. */
function luaNumberToInt(x: number): number | bigint {
  if (Number.isNaN(x) || x >= 9223372036854775808 || x < -9223372036854775808) return -9223372036854775808n;
  const t = Math.trunc(x);
  if (Number.isSafeInteger(t)) return t === 0 ? 0 : t;
  return BigInt(t);
}

/**
 * Write a serialised script result (see prelude.ts) as a RESP reply. Status texts cannot hold
 * CR/LF: Redis maps them to spaces.
 */
export function writeResult(r: Uint8Array, out: ReplySink): boolean {
  const b = Buffer.from(r.buffer, r.byteOffset, r.length);
  const st = { p: 0 };
  if (b.length === 0) {
    out.nil();
    return false;
  }
  const uncounted = b[0] === 0x45;
  writeOne(b, st, out);
  return uncounted;
}

/**
 * Take back the statistics of an error reply already counted when the command called by the
 * script failed (Redis's ERR_REPLY_FLAG_NO_STATS_UPDATE).
 */
function uncountError(msg: string): void {
  replyStats.errors--;
  const sp = msg.indexOf(' ');
  const code = sp >= 0 && sp < 31 ? msg.slice(0, sp) : 'ERR';
  const n = replyStats.codes.get(code);
  if (n !== undefined) replyStats.codes.set(code, n - 1);
}

function readTo(b: Buffer, st: { p: number }, end: number): string {
  const i = b.indexOf(end, st.p);
  const s = b.toString('latin1', st.p, i);
  st.p = i + 1;
  return s;
}

function writeOne(b: Buffer, st: { p: number }, out: ReplySink): void {
  const c = b[st.p++];
  switch (c) {
    case 0x73: { // s
      const n = Number(readTo(b, st, 0x3a));
      out.bulk(Buffer.from(b.subarray(st.p, st.p + n)));
      st.p += n;
      return;
    }
    case 0x6e: // n
      out.int(luaNumberToInt(Number(readTo(b, st, 0x3b))));
      return;
    case 0x54: out.int(1); return; // T
    case 0x46: case 0x4e: out.nil(); return; // F N
    case 0x61: { // a
      const n = Number(readTo(b, st, 0x3b));
      out.array(n);
      for (let i = 0; i < n; i++) writeOne(b, st, out);
      return;
    }
    case 0x65: case 0x45: case 0x6f: { // e E o
      const n = Number(readTo(b, st, 0x3a));
      const s = b.toString('latin1', st.p, st.p + n);
      st.p += n;
      if (c === 0x6f) out.simple(s.replace(/[\r\n]/g, ' '));
      else {
        out.error(s);
        if (c === 0x45) uncountError(s.replace(/[\r\n]/g, ' '));
      }
      return;
    }
  }
  throw new Error('bad script result');
}

export function sha1hex(b: Uint8Array): string {
  return createHash('sha1').update(b).digest('hex');
}

const hosts = new WeakMap<Engine, Scripting>();

/**
 * Start-up: load the function libraries saved with the data (record 'functions'), if any.
 * Returns an error text when they could not be loaded (the server starts without them).
 */
export function restoreSavedFunctions(eng: Engine): string | null {
  const saved = eng.persistence?.getRecord<Uint8Array>('functions');
  if (saved === undefined || saved === null) return null;
  const payload = Buffer.from(saved);
  const codes = parsePayload(payload);
  if (codes !== null && codes.length === 0) return null;
  return scripting(eng).restoreFunctions(payload, 'REPLACE');
}

/** The scripting state of an engine (created on first use). */
export function scripting(eng: Engine): Scripting {
  let s = hosts.get(eng);
  if (s === undefined) {
    s = new Scripting(eng);
    hosts.set(eng, s);
  }
  return s;
}

export class Scripting {
  /** EVAL script cache: sha1 -> body as given. */
  readonly scripts = new Map<string, Buffer>();
  readonly functions = new FunctionStore();
  run: RunCtx | null = null;

  private worker: Worker | null = null;
  private ch: SyncChannel | null = null;
  private ctl: Int32Array | null = null;
  /** Scripts compiled in the current worker. */
  private readonly compiled = new Set<string>();
  private readonly client: Client;
  private readonly fwd = new ForwardSink();

  constructor(readonly eng: Engine) {
    this.client = new Client(eng, INTERNAL, this.fwd, '', '');
    this.client.authenticated = true;
  }

  // ---------------------------------------------------------------- worker

  private channel(): SyncChannel {
    if (this.ch !== null) return this.ch;
    const ctl = new Int32Array(new SharedArrayBuffer(CTL_SIZE * 4));
    const { port1, port2 } = new MessageChannel();
    const w = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: { ctl, port: port2, version: REDIS_VERSION, versionNum: VERSION_NUM },
      transferList: [port2],
      stdout: false,
      stderr: false,
    });
    w.unref();
    w.on('error', (e) => console.error('scripting worker error:', e));
    const ch = new SyncChannel(ctl, port1, CTL_MAIN, CTL_WORKER);
    const first = ch.recv(30000) as { t: string; error?: string } | undefined;
    if (first === undefined || first.t !== 'ready') {
      void w.terminate();
      throw new Error(`scripting worker failed to start: ${first?.error ?? 'timeout'}`);
    }
    this.worker = w;
    this.ch = ch;
    this.ctl = ctl;
    this.compiled.clear();
    // A replaced worker gets the libraries back.
    for (const lib of this.functions.libraries.values()) {
      const sb = parseShebang(lib.code, true);
      if (typeof sb === 'string') continue;
      const r = this.request({ t: 'fload', code: sb.body }) as Done;
      this.request({ t: r.err ? 'fdrop' : 'fcommit', name: lib.name });
    }
    return ch;
  }

  /** Drop a failed worker; the next request starts a new one. */
  private reset(): void {
    const w = this.worker;
    this.worker = null;
    this.ch = null;
    this.ctl = null;
    this.compiled.clear();
    if (w !== null) void w.terminate();
  }

  /** Stop the worker (server shutdown, tests). */
  close(): void {
    this.reset();
  }

  /** A request that runs no user script code needing redis.call answers (compile, load, flush). */
  private request(msg: object): Done {
    const ch = this.channel();
    ch.send(msg);
    for (;;) {
      const m = ch.recv() as { t: string } & Record<string, unknown>;
      if (m.t === 'done') return m as unknown as Done;
      this.serve(m);
    }
  }

  /** Serve one request of the running script. */
  private serve(m: { t: string } & Record<string, unknown>): void {
    const ch = this.ch!;
    switch (m.t) {
      case 'call': {
        const enc = new LuaReplyEncoder();
        this.scriptCall(m.argv as Uint8Array[], enc);
        ch.send({ t: 'reply', v: enc.take(), err: enc.topError });
        return;
      }
      case 'acl':
        ch.send({ t: 'reply', v: this.aclCheck(m.argv as Uint8Array[]) });
        return;
      case 'log': {
        const min = ['debug', 'verbose', 'notice', 'warning'].indexOf(this.eng.cfg('loglevel'));
        if ((m.level as number) >= min) scriptLog(m.level as number, m.msg as string);
        return;
      }
        return;
    }
  }

  // ---------------------------------------------------------------- running

  /** Is a script running (only observable from other clients once it is busy)? */
  get busy(): boolean {
    return this.run !== null && this.run.async;
  }

  /**
   * Run a request that executes user code (eval / fcall) for `c`, replying to `out`. Returns
   * after the reply unless the script outlives busy-reply-threshold, in which case the caller
   * stays blocked and gets its reply later.
   */
  exec(ctx: RunCtx, msg: object): void {
    const eng = this.eng;
    let ch: SyncChannel;
    try {
      ch = this.channel();
    } catch (e) {
      ctx.out.error(`ERR ${(e as Error).message}`);
      return;
    }
    const sc = this.client;
    sc.dbIndex = ctx.caller.dbIndex;
    sc.aclUser = ctx.caller.aclUser;
    sc.user = ctx.caller.user;
    this.run = ctx;
    Atomics.store(this.ctl!, CTL_KILL, 0);
    ch.send(msg);
    // Only a TCP client outside MULTI can wait for its reply: others run the script to the end.
    const canYield = ctx.caller.transport.kind === 'tcp' && !eng.inExec;
    const threshold = eng.cfgInt('busy-reply-threshold');
    for (;;) {
      const left = canYield ? ctx.start + threshold - Date.now() : Infinity;
      const m = ch.recv(Math.max(0, left)) as ({ t: string } & Record<string, unknown>) | undefined;
      if (m === undefined) {
        this.goBusy(ctx);
        return;
      }
      if (m.t === 'done') {
        this.finish(ctx, m as unknown as Done);
        return;
      }
      this.serve(m);
    }
  }

  private goBusy(ctx: RunCtx): void {
    const eng = this.eng;
    ctx.async = true;
    ctx.caller.blocked = true;
    eng.busyReply = ctx.isEval ? SLOW_EVAL : SLOW_SCRIPT;
    console.warn(`Slow script detected: still in execution after ${Date.now() - ctx.start} milliseconds. You can try killing the script using the ${ctx.isEval ? 'SCRIPT' : 'FUNCTION'} KILL command. Script name is: ${ctx.name}.`);
    void this.pump(ctx);
  }

  /** The busy phase: serve the script's requests as they arrive, on the event loop. */
  private async pump(ctx: RunCtx): Promise<void> {
    const ch = this.ch!;
    for (;;) {
      await ch.waitAsync();
      for (;;) {
        const m = ch.poll() as ({ t: string } & Record<string, unknown>) | undefined;
        if (m === undefined) break;
        if (m.t === 'done') {
          this.finish(ctx, m as unknown as Done);
          return;
        }
        this.serve(m);
      }
    }
  }

  private finish(ctx: RunCtx, d: Done): void {
    const eng = this.eng;
    this.run = null;
    if (d.err) {
      ctx.out.error(d.err);
      if (d.err.startsWith('ERR internal scripting error')) this.reset();
    } else if (d.r !== undefined && writeResult(d.r, ctx.out)) {
      // Not an error in the statistics, but a failed call of EVAL / FCALL all the same.
      const def = eng.registry.commands.get(ctx.argv[0].toString('latin1').toLowerCase());
      if (def !== undefined) eng.stats.perCommand[def.id].failed++;
    }
    if (ctx.async) {
      eng.busyReply = null;
      const c = ctx.caller;
      c.blocked = false;
      if (!c.closed) {
        c.transport.requestFlush();
        c.transport.resume();
      }
      if (eng.blocking.pending) eng.blocking.serveReady();
    }
  }

  /** Redis's scriptCall: the checks of a command called from a script, then the command. */
  private scriptCall(raw: Uint8Array[], out: LuaReplyEncoder): void {
    const eng = this.eng;
    const ctx = this.run;
    const sc = this.client;
    const argv = Argv.of(raw.map((x) => Buffer.from(x.buffer, x.byteOffset, x.length)));
    const def = eng.registry.lookup(argv);
    const fail = (msg: string) => out.error(`ERR ${msg}`);
    if (def === undefined) {
      fail('Unknown Redis command called from script');
      return;
    }
    if ((def.arity > 0 && argv.count !== def.arity) || argv.count < -def.arity) {
      eng.stats.perCommand[def.id].rejected++;
      fail('Wrong number of args calling Redis command from script');
      return;
    }
    if (def.flags & F.NOSCRIPT) {
      eng.stats.perCommand[def.id].rejected++;
      fail('This Redis command is not allowed from script');
      return;
    }
    if (!sc.aclUser.unrestricted) {
      const r = eng.acl.check(sc.aclUser, def, argv);
      if (r !== null) {
        eng.acl.addLog({
          reason: r.reason, context: 'lua',
          object: r.reason === 'command' ? def.name : argv.key(r.index), username: sc.user, clientInfo: `id=${ctx?.caller.id} addr=${ctx?.caller.addr}`,
        });
        eng.stats.perCommand[def.id].rejected++;
        fail(r.reason === 'command' ? "The user executing the script can't run this command or subcommand"
          : r.reason === 'key' ? "The user executing the script can't access at least one of the keys mentioned in the command"
            : "The user executing the script can't publish to the channel mentioned in the command");
        return;
      }
    }
    if (ctx !== null && ctx.readOnly && (def.flags & (F.WRITE | F.MAY_REPLICATE) || MAY_REPLICATE.has(def.name))) {
      eng.stats.perCommand[def.id].rejected++;
      fail('Write commands are not allowed from read-only scripts.');
      return;
    }
    if (ctx !== null && def.flags & F.WRITE) ctx.wrote = true;
    // Time is frozen at the script's start: keys do not expire in the middle of a script.
    if (ctx !== null) eng.now = ctx.start;
    this.fwd.target = out;
    try {
      call(sc, def, argv, out);
    } finally {
      this.fwd.target = null;
    }
  }

  /** redis.acl_check_cmd: '1' allowed, '0' denied, 'u' unknown command. */
  private aclCheck(raw: Uint8Array[]): string {
    const eng = this.eng;
    const argv = Argv.of(raw.map((x) => Buffer.from(x.buffer, x.byteOffset, x.length)));
    const def = eng.registry.lookup(argv);
    if (def === undefined) return 'u';
    if ((def.arity > 0 && argv.count !== def.arity) || argv.count < -def.arity) return 'u';
    const u = this.client.aclUser;
    if (u.unrestricted) return '1';
    return eng.acl.check(u, def, argv) === null ? '1' : '0';
  }

  // ---------------------------------------------------------------- EVAL cache

  /** Compile a body if needed (SCRIPT LOAD, EVAL): the sha, or an error reply text. */
  load(body: Buffer): { sha: string } | { err: string } {
    const sha = sha1hex(body);
    if (this.compiled.has(sha) && this.worker !== null) return { sha };
    const sb = parseShebang(body, false);
    if (typeof sb === 'string') return { err: `ERR ${sb}` };
    let d: Done;
    try {
      d = this.request({ t: 'compile', sha, body: sb.body });
    } catch (e) {
      return { err: `ERR ${(e as Error).message}` };
    }
    if (d.err) return { err: d.err };
    this.compiled.add(sha);
    if (!this.scripts.has(sha)) this.scripts.set(sha, Buffer.from(body));
    return { sha };
  }

  /** Flags of a cached script: [read-only-capable (no-writes), shebang present]. */
  scriptFlags(sha: string): { present: boolean; flags: readonly string[] } {
    const body = this.scripts.get(sha);
    if (body === undefined) return { present: false, flags: [] };
    const sb = parseShebang(body, false);
    return typeof sb === 'string' ? { present: false, flags: [] } : sb;
  }

  /** The worker must hold the compiled script before running it. */
  ensureCompiled(sha: string): string | null {
    if (this.compiled.has(sha) && this.worker !== null) return null;
    const body = this.scripts.get(sha);
    if (body === undefined) return 'NOSCRIPT No matching script. Please use EVAL.';
    const r = this.load(body);
    return 'err' in r ? r.err : null;
  }

  flushScripts(): void {
    this.scripts.clear();
    if (this.worker !== null) this.request({ t: 'sflush' });
    this.compiled.clear();
  }

  // ---------------------------------------------------------------- functions

  /** FUNCTION LOAD: the library name or an error text. */
  loadLibrary(code: Buffer, replace: boolean): { name: string } | { err: string } {
    const sb = parseShebang(code, true);
    if (typeof sb === 'string') return { err: `ERR ${sb}` };
    const name = sb.name!;
    if (!/^[A-Za-z0-9_]+$/.test(name)) {
      return { err: 'ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long' };
    }
    const old = this.functions.libraries.get(name);
    if (old !== undefined && !replace) return { err: `ERR Library '${name}' already exists` };
    let d: Done;
    try {
      d = this.request({ t: 'fload', code: sb.body });
    } catch (e) {
      return { err: `ERR ${(e as Error).message}` };
    }
    if (d.err) return { err: d.err };
    const fns = d.fns!;
    if (fns.length === 0) {
      this.request({ t: 'fdrop' });
      return { err: 'ERR No functions registered' };
    }
    for (const f of fns) {
      const other = this.functions.getFunction(f.name);
      if (other !== undefined && other.library.name !== name) {
        this.request({ t: 'fdrop' });
        return { err: `ERR Function ${f.name} already exists` };
      }
    }
    const lib: Library = { name, code: Buffer.from(code), functions: new Map() };
    for (const f of fns) {
      const info: FunctionInfo = { name: f.name, description: f.description, flags: f.flags, library: lib };
      lib.functions.set(f.name, info);
    }
    if (old !== undefined) this.functions.delete(name);
    this.functions.add(lib);
    this.request({ t: 'fcommit', name });
    this.eng.dirty++;
    this.saveFunctions();
    return { name };
  }

  deleteLibrary(name: string): boolean {
    if (this.functions.delete(name) === undefined) return false;
    if (this.worker !== null) this.request({ t: 'fdelete', name });
    this.eng.dirty++;
    this.saveFunctions();
    return true;
  }

  flushFunctions(): void {
    this.functions.clear();
    if (this.worker !== null) this.request({ t: 'fflush' });
    this.eng.dirty++;
    this.saveFunctions();
  }

  /** True while restoreFunctions() loads the saved libraries: nothing to save back. */
  private restoring = false;

  /**
   * Persist the libraries after every change (record 'functions', a FUNCTION DUMP payload),
   * as Redis keeps them in its RDB/AOF. The EVAL script cache is not persisted, as in Redis.
   */
  private saveFunctions(): void {
    if (!this.restoring) this.eng.persistence?.putRecord('functions', this.functions.serialize());
  }

  /** FUNCTION RESTORE: load every library of a payload with the policy; null or an error. */
  restoreLibraries(codes: Buffer[], policy: 'FLUSH' | 'APPEND' | 'REPLACE'): string | null {
    // Validate against a copy first: a failed restore leaves the libraries unchanged.
    const before = [...this.functions.libraries.values()].map((l) => l.code);
    if (policy === 'FLUSH') this.flushFunctions();
    for (const code of codes) {
      const sb = parseShebang(code, true);
      if (typeof sb === 'string') return this.rollback(before, `ERR ${sb}`);
      if (policy === 'APPEND' && this.functions.libraries.has(sb.name!)) {
        return this.rollback(before, `ERR Library ${sb.name} already exists`);
      }
      const r = this.loadLibrary(code, policy === 'REPLACE');
      if ('err' in r) return this.rollback(before, r.err);
    }
    return null;
  }

  private rollback(codes: Buffer[], err: string): string {
    this.flushFunctions();
    for (const c of codes) this.loadLibrary(c, true);
    return err;
  }

  /**
   * Persistence hook (save): the libraries as a FUNCTION DUMP payload. Redis keeps functions
   * in its RDB/AOF; the EVAL script cache is not persisted (as in Redis).
   */
  dumpFunctions(): Buffer {
    return this.functions.serialize();
  }

  /** Persistence hook (load at start-up): restore a dumpFunctions() payload; null or an error. */
  restoreFunctions(payload: Buffer, policy: 'FLUSH' | 'APPEND' | 'REPLACE' = 'REPLACE'): string | null {
    const codes = parsePayload(payload);
    if (codes === null) return 'ERR DUMP payload version or checksum are wrong';
    this.restoring = true;
    try {
      return this.restoreLibraries(codes, policy);
    } finally {
      this.restoring = false;
    }
  }

  // ---------------------------------------------------------------- kill

  /** SCRIPT KILL (isEval) / FUNCTION KILL: null = OK, else the error reply. */
  kill(isEval: boolean): string | null {
    const ctx = this.run;
    if (ctx === null) return 'NOTBUSY No scripts in execution right now.';
    if (ctx.wrote) {
      return 'UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.';
    }
    if (isEval && !ctx.isEval) return SLOW_SCRIPT;
    if (!isEval && ctx.isEval) return SLOW_EVAL;
    ctx.killed = true;
    Atomics.store(this.ctl!, CTL_KILL, 1);
    Atomics.notify(this.ctl!, CTL_WORKER);
    return null;
  }

  /** The script client (its database follows SELECT inside scripts). */
  get scriptClient(): Client {
    return this.client;
  }
}

/** redis.log: Redis's log line format, to stdout like the rest of the server's log. */
function scriptLog(level: number, msg: string): void {
  const marks = ['.', '-', '*', '#'];
  const d = new Date();
  const ts = `${d.getUTCDate().toString().padStart(2, '0')} ${d.toUTCString().slice(8, 11)} ${d.getUTCFullYear()} ${d.toISOString().slice(11, 23)}`;
  console.log(`${process.pid}:M ${ts} ${marks[level] ?? '*'} ${msg}`);
}
