/**
 * The engine-thread side of scripting: the script cache, the function libraries, the two Lua
 * states and the running script.
 *
 * Design. Every script starts in a Lua state of the engine thread (runtime.ts): redis.call is a
 * direct, synchronous call into the dispatcher, so a script costs no thread crossing, and it is
 * atomic because nothing else runs on the thread until it returns.
 *
 * A script that runs long must not freeze the server beyond busy-reply-threshold: Redis answers
 * other clients -BUSY from then on and lets SCRIPT KILL / FUNCTION KILL stop it, which needs
 * the engine thread back while Lua runs. So the engine-thread state watches the time (in its
 * count hook and before every redis.call): once a script has run for MOVE_AFTER_MS (or
 * busy-reply-threshold if smaller), has had no effect yet (no write, PUBLISH or other
 * may-replicate command: see scriptCall) and is not busy with redis.call (MOVE_MAX_CALLS: in the
 * worker each call crosses threads), it is stopped and run again from its start in the
 * worker thread's Lua state (worker.ts), which holds the same prelude, scripts and libraries
 * (each compiled or loaded there when first needed). Running again a script that has only read
 * is invisible to clients: nothing else ran in between, the time its commands see stays its
 * start time, math.random's state is put back to what it was as the script started, and its
 * redis.log lines are held until it ends (dropped when it moves). Only the statistics of the
 * commands it ran before moving (INFO commandstats, keyspace hits) count them twice. A moved
 * script that turns busy with redis.call in the worker while it has still had no effect is
 * stopped there and run again the same way, back on the engine thread to its end (callCrossed).
 *
 * In the worker, the engine thread serves the script's redis.call requests synchronously
 * (Atomics.wait) until busy-reply-threshold (from the script's start), then returns to the
 * event loop with the caller blocked and serves them as they arrive (Atomics.waitAsync, then
 * synchronously while they keep coming, up to POLL_MS at a time: see pump); the
 * dispatcher answers every other command with -BUSY except the ALLOW_BUSY ones (SCRIPT KILL,
 * FUNCTION KILL, FUNCTION STATS, SHUTDOWN...). Active expiry is paused meanwhile and the time seen
 * by the script's commands stays the script's start time, so atomicity still holds. SCRIPT KILL
 * sets a shared flag that the worker's Lua count hook checks (as Redis's luaMaskCountHook).
 *
 * A script that has written (or published) cannot be moved, and scripts of callers that cannot
 * wait for a late reply (inside MULTI, over REST) are never moved: they run to their end on the
 * engine thread. Past busy-reply-threshold, their count hook (and every redis.call) serves the
 * other clients every POLL_MS, as Redis's processEventsWhileBlocked: each TCP connection's
 * socket is read synchronously (Transport.poll) and its commands executed, so they get -BUSY,
 * SCRIPT KILL / FUNCTION KILL answer UNKILLABLE (or stop a script that has not written),
 * SHUTDOWN NOSAVE exits; a worker thread accepts new connections meanwhile (tcp/busy-acceptor.ts).
 * The caller's own input waits (Redis's protectClient). Below the threshold none of this runs:
 * the hook compares one time with checkAt and returns. Not served meanwhile: REST requests
 * (uWebSockets.js has no synchronous API; they wait for the script) and timers.
 *
 * While any script is busy, on either thread, the store commits nothing (its writes so far
 * must not reach the disk before it ends), replies to other clients skip the appendfsync-always
 * gate (BUSY depends on no commit), and clients blocked on keys the script made ready are served
 * only once it ends.
 *
 * The worker is started on the first move. If it fails internally it is replaced (scripts and
 * libraries are loaded into the new one on demand); if the engine-thread state fails, it is
 * replaced too and the libraries are loaded into the new one.
 */
import { Worker, MessageChannel } from 'node:worker_threads';
import { performance } from 'node:perf_hooks'; // a module binding: the global is an accessor (slow load)
import { createHash } from 'node:crypto';
import { Argv } from '../../resp/argv.js';
import { type ReplySink, Resp2Shapes, countError, replyStats } from '../../resp/reply-sink.js';
import { Client, type Transport } from '../client.js';
import type { Engine } from '../engine.js';
import { F } from '../flags.js';
import type { CommandDef } from '../command.js';
import { call } from '../dispatch.js';
import { OOM } from '../evict.js';
import { SyncChannel, PeerGone, CTL_MAIN, CTL_WORKER, CTL_KILL, FRAME, channelMemory } from './channel.js';
import { FunctionStore, type FunctionInfo, type Library, type Shebang, parseShebang, parsePayload } from './functions.js';
import { LuaRuntime, Plan, Reply, type RuntimeHost } from './runtime.js';
import { FLAT_BYTES, FLAT_FALSE, FLAT_MAX, FLAT_NUM, FLAT_STR, type LuaValue } from './lua-vm.js';
import { REDIS_VERSION } from '../commands/connection.js';
import { drainPushed } from '../commands/pubsub.js';
import { grown } from '../../bytes.js';
import { clientInfo } from '../commands/client.js';

export const SLOW_EVAL = 'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.';
export const SLOW_SCRIPT = 'BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.';

/** The script being run (fields set once per run: see Scripting.call, which reuses one). */
export interface RunCtx {
  caller: Client;
  out: ReplySink;
  /** sha1 (EVAL) or function name (FCALL): "script: <name>" in errors. */
  name: string;
  isEval: boolean;
  readOnly: boolean;
  /** The caller's arguments (borrowed: valid while the EVAL / FCALL handler runs). */
  src: Argv;
  /** numkeys: KEYS are src[3, 3+nk), ARGV the rest. */
  nk: number;
  /** FCALL's function (null for EVAL). */
  fn: FunctionInfo | null;
  /** The caller's argv, copied when the script goes busy (FUNCTION STATS). */
  argv: Buffer[] | null;
  start: number;
  /** The caller can wait for a late reply: the script may go busy (moved to the worker). */
  movable: boolean;
  wrote: boolean;
  /** Ran a command with an effect (write, publish...): cannot be run again elsewhere. */
  pinned: boolean;
  killed: boolean;
  async: boolean;
}

/**
 * A RunCtx for EVAL (sha) or FCALL (fn) called by `c` with `argv`. Its start (the time its
 * commands see, Redis's scriptTimeSnapshot) is the command's time snapshot, taken as it
 * arrived; inside EXEC, the script's own start.
 */
export function newRun(c: Client, out: ReplySink, argv: Argv, nk: number, readOnly: boolean, sha: string, fn: FunctionInfo | null): RunCtx {
  const ctx: RunCtx = {
    caller: c, out, name: '', isEval: true, readOnly, src: argv, nk, fn,
    argv: null, start: 0, movable: false, wrote: false, pinned: false, killed: false, async: false,
  };
  return setRun(ctx, c, out, argv, nk, readOnly, sha, fn);
}

/** Make `ctx` a new run (newRun's), whatever it held. */
function setRun(ctx: RunCtx, c: Client, out: ReplySink, argv: Argv, nk: number, readOnly: boolean, sha: string, fn: FunctionInfo | null): RunCtx {
  ctx.caller = c;
  ctx.out = out;
  ctx.name = fn === null ? sha : fn.name;
  ctx.isEval = fn === null;
  ctx.readOnly = readOnly;
  ctx.src = argv;
  ctx.nk = nk;
  ctx.fn = fn;
  ctx.argv = null;
  ctx.start = c.engine.inExec ? Date.now() : c.engine.now;
  ctx.movable = ctx.wrote = ctx.pinned = ctx.killed = ctx.async = false;
  return ctx;
}

interface Done {
  t: 'done';
  /** The run was stopped by CTL_KILL (SCRIPT KILL, or host.ts running it back on its thread). */
  stopped?: boolean;
  r?: Uint8Array;
  err?: string | null;
  rand?: string;
  fns?: { name: string; description: string | null; flags: string[] }[];
}

/**
 * Commands Redis flags may-replicate internally without showing it in COMMAND INFO (7.0.15):
 * read-only scripts refuse them like writes.
 */
const MAY_REPLICATE = new Set(['publish', 'spublish', 'pfcount']);

/** EVALSHA sha1 arguments whose strings are kept (Scripting.shaArg). */
const SHA_SEEN = 8;

/** Entries of the redis.call site table (Scripting.siteLookup): 2^SITE_BITS. */
const SITE_BITS = 8;
const SITES = 1 << SITE_BITS;

/**
 * How long a script runs on the engine thread before it is moved to the worker if it can be
 * (host comment above; busy-reply-threshold if smaller). Long enough that scripts of a few
 * thousand redis.call never pay the thread crossings; short enough that few scripts write
 * after it and then run past the threshold (those cannot move: others wait instead of BUSY).
 */
export const MOVE_AFTER_MS = 100;

/**
 * A script that has made more than this many redis.calls per ms of its running time is not
 * moved (looked at again every MOVE_AFTER_MS; never past busy-reply-threshold). In the worker
 * each call is a thread crossing: a futex wake-up each way unless both threads hold a core,
 * tens of µs on a loaded machine against ~1 µs on the engine thread (200,000 GETs took 36 s
 * instead of 0.1 s), and the calls it made so far are made again there. One call per ms keeps
 * the crossings to about a tenth of its running time. A script that is not moved and runs past
 * busy-reply-threshold is served as one that cannot move: TCP clients get BUSY and SCRIPT KILL
 * / SHUTDOWN NOSAVE work from the count hook's polls; REST requests wait for it.
 */
export const MOVE_MAX_CALLS_PER_MS = 1;

/** A script in the worker is run back on the engine thread (callCrossed) only past this many calls there. */
const MOVE_BACK_MIN_CALLS = 100;

/**
 * How often a script busy on the engine thread reads the other clients' input (at most: the
 * count hook runs every 100000 Lua instructions, redis.call checks every call).
 */
const POLL_MS = 5;

/** In the busy phase, how long the engine thread waits synchronously for a moved script's next request (see pump). */
const BURST_WAIT_MS = 0.2;

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
  bulkLatin1Range(s: string, a: number, e: number): void { this.target?.bulkLatin1Range(s, a, e); }
  bulkInt(v: number): void { this.target?.bulkInt(v); }
  bulkBytes(b: Buffer, s: number, e: number): void { this.target?.bulkBytes(b, s, e); }
  bulkText(s: string): void { this.target?.bulkText(s); }
  nil(): void { this.target?.nil(); }
  array(n: number): void { this.target?.array(n); }
  nilArray(): void { this.target?.nilArray(); }
  map(n: number): void { this.target?.map(n); }
  set(n: number): void { this.target?.set(n); }
  push(n: number): void { this.target?.push(n); }
  double(d: number | string): void { this.target?.double(d); }
  pairs(n: number): void { this.target?.pairs(n); }
  pair(): void { this.target?.pair(); }
  assoc(n: number): void { this.target?.assoc(n); }
  assocItem(): void { this.target?.assocItem(); }
  bool(b: boolean): void { this.target?.bool(b); }
  verbatim(s: string | Buffer, fmt?: string): void { this.target?.verbatim(s, fmt); }
  bigNumber(digits: string): void { this.target?.bigNumber(digits); }
  attribute(n: number): boolean { return this.target?.attribute(n) ?? false; }
}

/**
 * Encodes a command's reply for Lua (Redis's RESP2 -> Lua rules): integer -> number, bulk ->
 * string, nil bulk / nil array -> false, array -> table, status -> {ok=}, error -> {err=}.
 * Binary form read by the worker: s/e/o <u32 len> bytes, i <f64>, f, a <u32 count>.
 */
/**
 * What the two Lua reply sinks share: RESP2 shapes by default; under redis.setresp(3)
 * (`resp3`), tuples and keyed entries keep RESP3's nesting and push frames are arrays.
 */
abstract class LuaSink extends Resp2Shapes {
  resp3 = false;
  override push(n: number): void { this.array(n); }
  override pairs(n: number): void {
    if (this.resp3) this.array(n);
    else super.pairs(n);
  }
  override pair(): void {
    if (this.resp3) this.array(2);
  }
  override assoc(n: number): void {
    if (this.resp3) this.map(n);
    else super.assoc(n);
  }
  override assocItem(): void {
    if (!this.resp3) this.array(2);
  }
}

export class LuaReplyEncoder extends LuaSink {
  private buf = Buffer.allocUnsafe(256);
  private pos = 0;
  /** Elements still expected by each open array. */
  private readonly open: number[] = [];
  /** Whether each open container is a set's table (each member is followed by true). */
  private readonly inSet: boolean[] = [];
  topError = false;
  // resp3 (redis.setresp(3)): RESP3 types become Redis's Lua forms (null -> nil, booleans,
  // {map=}, {set=}, {double=}, {big_number=}, {verbatim_string=}); 'h' <u32 pairs> is a
  // table of key/value pairs, T true, n nil.

  private room(n: number): void {
    if (this.pos + n > this.buf.length) this.buf = grown(this.buf, this.pos, this.pos + n);
  }

  private done(): void {
    const o = this.open;
    while (o.length > 0) {
      const top = o.length - 1;
      if (this.inSet[top]) {
        this.room(1);
        this.buf[this.pos++] = 0x54; // the member's value: true
        o[top] -= 2;
      } else o[top]--;
      if (o[top] > 0) return;
      o.pop();
      this.inSet.pop();
    }
  }

  /** A container header; `elems` values follow. */
  private container(tag: number, count: number, elems: number, isSet = false): void {
    this.room(5);
    this.buf[this.pos] = tag;
    this.buf.writeUInt32LE(count, this.pos + 1);
    this.pos += 5;
    if (elems === 0) this.done();
    else {
      this.open.push(elems);
      this.inSet.push(isSet);
    }
  }

  /** { <field> = <value written next> } */
  private field(name: string): void {
    this.container(0x68, 1, 2);
    this.bytes(0x73, name, 'latin1');
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
  override bulkBytes(b: Buffer, s: number, e: number): void {
    const n = e - s;
    this.room(5 + n);
    this.buf[this.pos] = 0x73;
    this.buf.writeUInt32LE(n, this.pos + 1);
    b.copy(this.buf, this.pos + 5, s, e);
    this.pos += 5 + n;
    this.done();
  }
  bulkLatin1(s: string): void { this.bytes(0x73, s, 'latin1'); }
  bulkText(s: string): void { this.bytes(0x73, s, 'utf8'); }
  private byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
    this.done();
  }
  nil(): void { this.byte(this.resp3 ? 0x6e : 0x66); }
  nilArray(): void { this.nil(); }
  array(n: number): void { this.container(0x61, n, n); }
  override map(n: number): void {
    if (!this.resp3) return super.map(n);
    this.field('map');
    this.container(0x68, n, 2 * n);
  }
  override set(n: number): void {
    if (!this.resp3) return super.set(n);
    this.field('set');
    this.container(0x68, n, 2 * n, true);
  }
  override double(d: number | string): void {
    if (!this.resp3) return super.double(d);
    this.field('double');
    this.int(toNumber(d));
  }
  override bool(b: boolean): void {
    if (!this.resp3) return super.bool(b);
    this.byte(b ? 0x54 : 0x66);
  }
  override bigNumber(digits: string): void {
    if (!this.resp3) return super.bigNumber(digits);
    this.field('big_number');
    this.bytes(0x73, digits, 'latin1');
  }
  override verbatim(s: string | Buffer, fmt = 'txt'): void {
    if (!this.resp3) return super.verbatim(s);
    this.field('verbatim_string');
    this.container(0x68, 2, 4);
    this.bytes(0x73, 'format', 'latin1');
    this.bytes(0x73, fmt, 'latin1');
    this.bytes(0x73, 'string', 'latin1');
    this.bytes(0x73, s, 'utf8');
  }

  /** Ready for the next reply (the encoder is reused from call to call). */
  clear(resp3: boolean): void {
    this.pos = 0;
    this.open.length = 0;
    this.inSet.length = 0;
    this.topError = false;
    this.resp3 = resp3;
  }

  /** The encoded reply (a copy sized to fit: it is posted to the worker). */
  take(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.pos));
  }

  get length(): number {
    return this.pos;
  }

  /** Copy the encoded reply to dst at `at`; false if it does not fit. */
  copyTo(dst: Buffer, at: number): boolean {
    if (at + this.pos > dst.length) return false;
    this.buf.copy(dst, at, 0, this.pos);
    return true;
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

/** A decimal count (prelude.ts writes lengths and sizes as plain digits) up to `end`. */
function readCount(b: Buffer, st: { p: number }, end: number): number {
  let p = st.p;
  let v = 0;
  for (let c = b[p]; c !== end; c = b[++p]) v = v * 10 + (c - 48);
  st.p = p + 1;
  return v;
}

/**
 * A table result read by LuaRuntime.tablePlan(): what writeOne writes for its serialised form
 * (the same sink calls: strings copied from the heap by bulkBytes, numbers as integers).
 */
function writePlan(plan: number[], b: Buffer, out: ReplySink): void {
  for (let i = 0; i < plan.length;) {
    switch (plan[i] as Plan) {
      case Plan.Array:
        out.array(plan[i + 1]);
        i += 2;
        break;
      case Plan.String: {
        const p = plan[i + 1];
        const len = plan[i + 2];
        out.bulkBytes(b, p, p + len);
        i += 3;
        break;
      }
      default:
        out.int(luaNumberToInt(plan[i + 1]));
        i += 2;
    }
  }
}

/** One value (iterative: a reply may nest 7995 levels deep, past the JS stack). */
function writeOne(b: Buffer, st: { p: number }, out: ReplySink): void {
  // Without recursion (a reply can nest about 8000 levels): values left to write at each open
  // aggregate level; n at the current one.
  const left: number[] = [];
  let n = 1;
  for (;;) {
    while (n === 0) {
      if (left.length === 0) return;
      n = left.pop()!;
    }
    n--;
    const c = b[st.p++];
    switch (c) {
      case 0x73: { // s
        const len = readCount(b, st, 0x3a);
        // perf: copied by the sink straight from the heap (no JS string, no Buffer; every sink
        // copies bulkBytes' bytes before it returns).
        out.bulkBytes(b, st.p, st.p + len);
        st.p += len;
        continue;
      }
      case 0x6e: // n
        out.int(luaNumberToInt(Number(readTo(b, st, 0x3b))));
        continue;
      case 0x54: out.int(1); continue; // T
      case 0x46: case 0x4e: out.nil(); continue; // F N
      case 0x74: out.bool(true); continue; // t (RESP3 script)
      case 0x66: out.bool(false); continue; // f
      case 0x44: out.double(readTo(b, st, 0x3b)); continue; // D <%.17g>;
      case 0x4d: case 0x53: case 0x61: { // M <pairs>; / S <members>; / a <items>;
        const k = readCount(b, st, 0x3b);
        if (c === 0x4d) out.map(k);
        else if (c === 0x53) out.set(k);
        else out.array(k);
        left.push(n);
        n = c === 0x4d ? 2 * k : k;
        continue;
      }
      case 0x42: { // B <len>:digits (CR/LF become spaces, as Redis)
        const len = Number(readTo(b, st, 0x3a));
        out.bigNumber(b.toString('latin1', st.p, st.p + len).replace(/[\r\n]/g, ' '));
        st.p += len;
        continue;
      }
      case 0x56: { // V <len>:format <len>:string
        const fl = Number(readTo(b, st, 0x3a));
        const fmt = b.toString('latin1', st.p, st.p + fl);
        st.p += fl;
        const len = Number(readTo(b, st, 0x3a));
        out.verbatim(Buffer.from(b.subarray(st.p, st.p + len)), fmt);
        st.p += len;
        continue;
      }
      case 0x65: case 0x45: case 0x6f: { // e E o
        const len = Number(readTo(b, st, 0x3a));
        const s = b.toString('latin1', st.p, st.p + len);
        st.p += len;
        if (c === 0x6f) out.simple(s.replace(/[\r\n]/g, ' '));
        else {
          out.error(s);
          if (c === 0x45) uncountError(s.replace(/[\r\n]/g, ' '));
        }
        continue;
      }
    }
    throw new Error('bad script result');
  }
}

/**
 * perf: b[s, s+40) is `seen` (lower case) byte for byte, four bytes a step: clients send the
 * sha as SCRIPT LOAD gave it, and this is ~half the folding loop's cost (sameShaFolded).
 */
function sameSha(b: Uint8Array, s: number, seen: Uint8Array): boolean {
  for (let j = 0; j < 40; j += 4) {
    if (b[s + j] !== seen[j] || b[s + j + 1] !== seen[j + 1] || b[s + j + 2] !== seen[j + 2] || b[s + j + 3] !== seen[j + 3]) return false;
  }
  return true;
}

/** b[s, s+40) lower-cased is `seen`. */
function sameShaFolded(b: Uint8Array, s: number, seen: Uint8Array): boolean {
  for (let j = 0; j < 40; j++) {
    let ch = b[s + j];
    if (ch >= 65 && ch <= 90) ch += 32;
    if (ch !== seen[j]) return false;
  }
  return true;
}

export function sha1hex(b: Uint8Array): string {
  return createHash('sha1').update(b).digest('hex');
}

const hosts = new WeakMap<Engine, Scripting>();
const EMPTY = Buffer.alloc(0);
const NO_SHEBANG = { present: false, flags: [] as readonly string[] };

function isDone(m: unknown): m is Done {
  return m !== FRAME && (m as { t: string }).t === 'done';
}

function asBuffer(x: Uint8Array): Buffer {
  return Buffer.from(x.buffer, x.byteOffset, x.length);
}

function callerArgv(argv: Argv): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < argv.count; i++) out.push(argv.copy(i));
  return out;
}

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

/**
 * Collects a redis.call reply for the engine thread's Lua state (runtime.ts pushReply): Redis's
 * RESP2 -> Lua rules as LuaReplyEncoder, as a value tree. Reused from call to call.
 */
/** Bytes of a reply LuaTreeSink stages (longer ones: a Buffer, the stage stays small). */
const STAGE_MAX = 4096;

class LuaTreeSink extends LuaSink {
  value: LuaValue = false;
  isErr = false;
  /** A short NUL-free bulk or status reply as latin1 text (value is then not used). */
  text: string | null = null;
  /** text is a status reply. */
  status = false;
  /**
   * A bulk reply on its own given as bytes (HGET, GET...): stage[0, staged), pushed into Lua
   * after the command (perf: no string or Buffer for it; pushing during the command could grow
   * the wasm memory under the arguments it still reads). -1: none.
   */
  staged = -1;
  stage = Buffer.allocUnsafeSlow(256);
  /**
   * perf: a flat RESP2 array reply (HMGET, HGETALL, ZRANGE, LRANGE...) of at most FLAT_MAX
   * elements, each a bulk of at most FLAT_STR bytes, an integer or a nil, is staged too: the
   * bytes in `stage`, per element a kind and where its bytes end (flatEnd) or its number, then
   * pushed after the command by LuaVM.pushFlat as the table the value tree became (no string,
   * Buffer or array per element). Anything else on the way turns what is staged into the value
   * tree (unflat) and goes on there. -1: not staging; else the array's length.
   */
  flat = -1;
  /** Elements staged so far. */
  flatN = 0;
  readonly flatKind = new Uint8Array(FLAT_MAX);
  readonly flatEnd = new Int32Array(FLAT_MAX);
  readonly flatNum = new Float64Array(FLAT_MAX);
  /** The wasm heap's ArrayBuffer: a reply borrowed from it is copied (the heap may move). */
  heap: ArrayBufferLike | null = null;
  private readonly open: LuaValue[][] = [];
  private readonly left: number[] = [];
  /** What each open container becomes: K_ARRAY, K_MAP or K_SET. */
  private readonly kinds: number[] = [];

  reset(heap: ArrayBufferLike): void {
    this.value = false;
    this.isErr = false;
    this.text = null;
    this.staged = -1;
    this.flat = -1;
    this.heap = heap;
    if (this.open.length !== 0) {
      this.open.length = 0;
      this.left.length = 0;
      this.kinds.length = 0;
    }
  }

  private begin(n: number, kind: number): void {
    if (this.flat >= 0) this.unflat();
    else if (kind === K_ARRAY && this.open.length === 0 && n > 0 && n <= FLAT_MAX && !this.resp3) {
      this.flat = n;
      this.flatN = 0;
      return;
    }
    if (n === 0) {
      this.put(wrapContainer([], kind));
      return;
    }
    this.open.push([]);
    this.left.push(n);
    this.kinds.push(kind);
  }

  private put(v: LuaValue): void {
    if (this.flat >= 0) {
      if (v instanceof Uint8Array && v.length <= FLAT_STR) return this.flatBytes(v, 0, v.length);
      if (typeof v === 'number') return this.flatOne(FLAT_NUM, v);
      if (v === false) return this.flatOne(FLAT_FALSE, 0);
      this.unflat();
    }
    let d = this.open.length;
    if (d === 0) {
      this.value = v;
      return;
    }
    this.open[d - 1].push(v);
    // Close every array that this element completes.
    while (--this.left[d - 1] === 0) {
      const done = wrapContainer(this.open.pop()!, this.kinds.pop()!);
      this.left.pop();
      d--;
      if (d === 0) {
        this.value = done;
        return;
      }
      this.open[d - 1].push(done);
    }
  }

  /** Where the next staged element's n bytes go (the stage made large enough). */
  private flatAt(n: number): number {
    const i = this.flatN;
    const at = i === 0 ? 0 : this.flatEnd[i - 1];
    if (at + n > this.stage.length) {
      const d = Buffer.allocUnsafeSlow(Math.max(at + n, this.stage.length * 2));
      this.stage.copy(d, 0, 0, at);
      this.stage = d;
    }
    this.flatKind[i] = FLAT_BYTES;
    this.flatEnd[i] = at + n;
    this.flatN = i + 1;
    return at;
  }

  /** The next element of the staged array: bytes b[s, e) (at most FLAT_STR). */
  private flatBytes(b: Uint8Array, s: number, e: number): void {
    const n = e - s;
    const at = this.flatAt(n);
    const d = this.stage;
    // perf: a loop up to 256 bytes, where a copy makes a view object.
    if (n <= 256) for (let j = 0; j < n; j++) d[at + j] = b[s + j];
    else d.set(b.subarray(s, e), at);
  }

  /** The next element of the staged array: latin1 text (at most FLAT_STR chars). */
  private flatText(s: string): void {
    const n = s.length;
    const at = this.flatAt(n);
    const d = this.stage;
    if (n <= 32) for (let j = 0; j < n; j++) d[at + j] = s.charCodeAt(j);
    else d.latin1Write(s, at, n);
  }

  /** The next element of the staged array: a number or false. */
  private flatOne(kind: number, x: number): void {
    const i = this.flatN;
    this.flatKind[i] = kind;
    this.flatEnd[i] = i === 0 ? 0 : this.flatEnd[i - 1];
    this.flatNum[i] = x;
    this.flatN = i + 1;
  }

  /** The staged array is complete. */
  get flatDone(): boolean {
    return this.flat >= 0 && this.flatN === this.flat;
  }

  /** What is staged becomes the value tree's open array (strings as latin1 text, as bulkLatin1 puts them). */
  unflat(): void {
    const n = this.flat;
    this.flat = -1;
    const elems: LuaValue[] = [];
    let p = 0;
    for (let i = 0; i < this.flatN; i++) {
      const k = this.flatKind[i];
      if (k === FLAT_BYTES) {
        elems.push(this.stage.latin1Slice(p, this.flatEnd[i]));
        p = this.flatEnd[i];
      } else elems.push(k === FLAT_NUM ? this.flatNum[i] : false);
    }
    if (this.flatN === n) {
      this.value = elems;
      return;
    }
    this.open.push(elems);
    this.left.push(n - this.flatN);
    this.kinds.push(K_ARRAY);
  }

  ok(): void {
    if (this.flat >= 0) this.unflat();
    if (this.open.length === 0) this.topText('OK', true);
    else this.put({ ok: OK });
  }
  simple(s: string): void {
    if (this.flat >= 0) this.unflat();
    if (this.open.length === 0 && s.length <= 512 && s.indexOf('\0') < 0) this.topText(s, true);
    else this.put({ ok: Buffer.from(s, 'latin1') });
  }
  error(msg: string): void {
    countError(msg);
    if (this.flat >= 0) this.unflat();
    if (this.open.length === 0) this.isErr = true;
    this.put({ err: Buffer.from(msg, 'latin1') });
  }
  int(n: number | bigint): void { this.put(Number(n)); }
  bulk(v: Buffer): void {
    if (this.flat >= 0 && v.length <= FLAT_STR) return this.flatBytes(v, 0, v.length);
    this.put(v.buffer === this.heap ? Buffer.from(v) : v);
  }
  /** As bulkLatin1 of the bytes' text: a short reply on its own goes to Lua as text. */
  override bulkBytes(b: Buffer, s: number, e: number): void {
    const n = e - s;
    if (this.flat >= 0 && n <= FLAT_STR) return this.flatBytes(b, s, e);
    if (this.open.length !== 0 || n > STAGE_MAX) return this.bulkLatin1(b.latin1Slice(s, e));
    if (n > this.stage.length) this.stage = Buffer.allocUnsafeSlow(Math.max(n, this.stage.length * 2));
    const d = this.stage;
    if (n <= 64) for (let i = 0; i < n; i++) d[i] = b[s + i];
    else b.copy(d, 0, s, e);
    this.staged = n;
    this.value = true;
  }
  bulkLatin1(s: string): void {
    if (this.flat >= 0) {
      if (s.length <= FLAT_STR) return this.flatText(s);
      this.unflat();
    }
    if (this.open.length === 0) {
      if (s.length <= 512 && s.indexOf('\0') < 0) this.topText(s, false);
      else this.put(Buffer.from(s, 'latin1'));
    } else {
      // perf: inside an array (HGETALL, HMGET...), the text itself (vm.pushLatin1, no Buffer).
      this.put(s);
    }
  }

  /** perf: in a staged array (listpack and list elements), the chars themselves: no substring. */
  override bulkLatin1Range(s: string, a: number, e: number): void {
    if (this.flat < 0 || e - a > 32) return this.bulkLatin1(s.substring(a, e));
    const at = this.flatAt(e - a);
    const d = this.stage;
    for (let j = a; j < e; j++) d[at + j - a] = s.charCodeAt(j);
  }

  /**
   * perf: a short bulk (GET, HGET...) or status reply (SET's OK) on its own goes into Lua from
   * the text, without a Buffer or a value tree.
   */
  private topText(s: string, status: boolean): void {
    this.text = s;
    this.status = status;
    this.value = true;
  }
  bulkText(s: string): void { this.put(Buffer.from(s, 'utf8')); }
  nil(): void { this.put(this.resp3 ? null : false); }
  nilArray(): void { this.put(this.resp3 ? null : false); }
  array(n: number): void { this.begin(n, K_ARRAY); }
  override map(n: number): void {
    if (this.resp3) this.begin(2 * n, K_MAP);
    else super.map(n);
  }
  override set(n: number): void {
    if (this.resp3) this.begin(n, K_SET);
    else super.set(n);
  }
  override double(d: number | string): void {
    if (this.resp3) this.put({ h: [L_DOUBLE, toNumber(d)] });
    else super.double(d);
  }
  override bool(b: boolean): void {
    if (this.resp3) this.put(b);
    else super.bool(b);
  }
  override bigNumber(digits: string): void {
    if (this.resp3) this.put({ h: [L_BIG_NUMBER, Buffer.from(digits, 'latin1')] });
    else super.bigNumber(digits);
  }
  override verbatim(s: string | Buffer, fmt = 'txt'): void {
    if (!this.resp3) return super.verbatim(s);
    const text = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    this.put({ h: [L_VERBATIM, { h: [L_FORMAT, Buffer.from(fmt, 'latin1'), L_STRING, text] }] });
  }
}

const K_ARRAY = 0;
const K_MAP = 1;
const K_SET = 2;
const L_MAP = Buffer.from('map');
const L_SET = Buffer.from('set');
const L_DOUBLE = Buffer.from('double');
const L_BIG_NUMBER = Buffer.from('big_number');
const L_VERBATIM = Buffer.from('verbatim_string');
const L_FORMAT = Buffer.from('format');
const L_STRING = Buffer.from('string');

/** A RESP3 container as Redis gives it to Lua: {map = {k = v}}, {set = {m = true}}, or the array. */
function wrapContainer(elems: LuaValue[], kind: number): LuaValue {
  if (kind === K_ARRAY) return elems;
  if (kind === K_MAP) return { h: [L_MAP, { h: elems }] };
  const kv: LuaValue[] = [];
  for (const m of elems) kv.push(m, true);
  return { h: [L_SET, { h: kv }] };
}

/** A double given as a number or as its text ("inf", "-inf" included). */
function toNumber(d: number | string): number {
  if (typeof d === 'number') return d;
  if (d === 'inf') return Infinity;
  if (d === '-inf') return -Infinity;
  return Number(d);
}

const OK = Buffer.from('OK');

export class Scripting {
  /** EVAL script cache: sha1 -> body as given. */
  readonly scripts = new Map<string, Buffer>();
  /** The parsed shebang of each cached script. */
  private readonly shebangs = new Map<string, Shebang>();
  readonly functions = new FunctionStore();
  run: RunCtx | null = null;

  /** The engine thread's Lua state (created on first use). */
  private rt: LuaRuntime | null = null;
  /** The running script is being stopped to be run again in the worker. */
  private moving = false;
  /** When the running script is moved if it can be (performance.now() time). */
  private moveAt = Infinity;
  /** redis.calls of the running script on this thread (see MOVE_MAX_CALLS_PER_MS). */
  private calls = 0;
  /** When the running script started on this thread, or in the worker (performance.now()). */
  private runStart = 0;
  /** The script in the worker was asked to stop, to be run again on the engine thread (see callCrossed). */
  private movingBack = false;
  /** math.random's state as the script in the worker started (for its run back here). */
  private startRand = '';
  /** When the running script passes busy-reply-threshold on this thread (performance.now()). */
  private busyAt = Infinity;
  /**
   * perf: the count hook and redis.call do nothing before this time (performance.now()): the
   * next deadline (move, busy, next poll), or -Infinity to stop the script at once.
   */
  private checkAt = Infinity;
  /** The running script is busy on this thread: clients are polled from its count hook. */
  private localBusy = false;
  /** Read buffer of the polls (the transports' own may hold the caller's arguments). */
  private pollBuf: Buffer | null = null;
  /** redis.log lines of the running script, written when it ends on the engine thread. */
  private readonly logs: { level: number; msg: string }[] = [];
  private readonly callArgv = new Argv();
  private readonly sink = new LuaTreeSink();

  private worker: Worker | null = null;
  private ch: SyncChannel | null = null;
  /** Replies to the worker's redis.call, and their arguments copied out of the frame. */
  private readonly enc = new LuaReplyEncoder();
  private readonly frameArgv = new Argv();
  private frameCopy = Buffer.allocUnsafe(1024);
  private ctl: Int32Array | null = null;
  /** Scripts compiled in the current worker. */
  private readonly compiled = new Set<string>();
  /** Libraries loaded in the current worker, as they were loaded (a replaced library is another object). */
  private readonly workerLibs = new Map<string, Library>();
  private readonly client: Client;
  private readonly fwd = new ForwardSink();

  /** busy-reply-threshold (ms), kept up to date by CONFIG SET. */
  private threshold: number;

  constructor(readonly eng: Engine) {
    this.client = new Client(eng, INTERNAL, this.fwd, '', '');
    this.client.authenticated = true;
    this.threshold = eng.cfgInt('busy-reply-threshold');
    eng.scriptFlagsOf = (name, argv) => this.declaredFlags(name, argv);
    eng.configListeners.push((name) => {
      if (name === 'busy-reply-threshold') this.threshold = eng.cfgInt(name);
    });
  }

  // ---------------------------------------------------------------- engine-thread Lua state

  private local(): LuaRuntime {
    if (this.rt !== null && !this.rt.vm.dead) return this.rt;
    this.rt = null;
    const host: RuntimeHost = {
      call: (rt, n, argv) => this.localCall(rt, argv ?? this.heapArgv(rt, n)),
      acl: (rt, n) => this.aclCheck(this.heapArgv(rt, n)),
      log: (level, msg) => {
        if (this.run !== null) this.logs.push({ level, msg });
        else this.log(level, msg);
      },
      check: (beforeCall) => this.localCheck(beforeCall),
      setResp: (v) => {
        this.sink.resp3 = v === 3;
        this.client.resp = v;
      },
    };
    const rt = new LuaRuntime(host, REDIS_VERSION, VERSION_NUM);
    this.rt = rt;
    this.reloadLibraries(rt);
    return rt;
  }

  /** A replaced or fresh state gets the libraries back. */
  private reloadLibraries(rt: LuaRuntime): void {
    for (const lib of this.functions.libraries.values()) {
      const sb = parseShebang(lib.code, true);
      if (typeof sb === 'string') continue;
      const r = rt.loadLibrary(sb.body);
      if ('err' in r) rt.dropPending();
      else rt.commitLibrary(lib.name);
    }
  }

  /**
   * SCRIPT FLUSH and FUNCTION FLUSH start fresh Lua states (as Redis's scriptingReset), so that
   * nothing a script left behind outlives them; the libraries still loaded are loaded again
   * (in the worker when it next needs them).
   */
  private freshStates(): void {
    const rt = this.rt;
    if (rt !== null && !rt.vm.dead) {
      rt.fresh();
      this.reloadLibraries(rt);
    }
    if (this.worker !== null) this.request({ t: 'fresh' });
    this.compiled.clear();
    this.workerLibs.clear();
  }

  /** The n string arguments of a bridge call, in place in the heap (valid during the call). */
  private heapArgv(rt: LuaRuntime, n: number): Argv {
    const vm = rt.vm;
    const argv = this.callArgv;
    argv.reset(EMPTY);
    for (let i = 1; i <= n; i++) {
      const p = vm.strPtr(i);
      argv.push(p, p + vm.strLen);
    }
    argv.buf = vm.heapBuffer();
    return argv;
  }

  /** redis.call from the engine thread's state: the command runs right here. */
  private localCall(rt: LuaRuntime, argv: Argv): Reply {
    this.calls++;
    if (rt.stateId !== this.siteState) this.sitesOf(rt);
    const sink = this.sink;
    sink.reset(rt.vm.heapArrayBuffer);
    this.scriptCall(argv, sink, true);
    if (sink.text !== null) {
      rt.vm.pushLatin1(sink.text);
      return sink.status ? Reply.Status : Reply.Value;
    }
    if (sink.staged >= 0) {
      rt.vm.pushBytes(sink.stage, 0, sink.staged);
      return Reply.Value;
    }
    if (sink.flat >= 0) {
      if (sink.flatDone && rt.vm.direct) {
        rt.vm.pushFlat(sink.flat, sink.flatKind, sink.flatEnd, sink.flatNum, sink.stage);
        return Reply.Value;
      }
      sink.unflat();
    }
    return rt.pushReply(sink.value, sink.isErr);
  }

  /**
   * Count hook and redis.call check of the engine thread's state: stop a script that may move
   * and has run long (and from then on, until it has stopped: nothing more may take effect).
   */
  private localCheck(beforeCall: boolean): string | null {
    // perf: before a redis.call, the time the previous command ended (dispatch.ts) is enough.
    if ((beforeCall ? this.eng.lastCallEnd : performance.now()) < this.checkAt) return null;
    return this.localDeadline();
  }

  /**
   * A deadline of the running script has passed: move it to the worker (read-only so far and
   * movable), or, past busy-reply-threshold, serve the other clients from here, as Redis's
   * luaMaskCountHook does (processEventsWhileBlocked): their commands get BUSY except SCRIPT
   * KILL, FUNCTION KILL, SHUTDOWN NOSAVE and the other ALLOW_BUSY ones.
   */
  private localDeadline(): string | null {
    if (this.moving) return 'k';
    const ctx = this.run;
    if (ctx === null) return null;
    if (ctx.killed) return 'k';
    const now = performance.now();
    if (!ctx.pinned && now >= this.moveAt) {
      if (this.calls <= MOVE_MAX_CALLS_PER_MS * (now - this.runStart)) {
        this.moving = true;
        this.checkAt = -Infinity;
        return 'k';
      }
      // Busy with redis.call: looked at again later, up to busy-reply-threshold.
      const next = now + MOVE_AFTER_MS;
      this.moveAt = next < this.busyAt ? next : Infinity;
    }
    if (now < this.busyAt) {
      this.checkAt = ctx.pinned ? this.busyAt : Math.min(this.moveAt, this.busyAt);
      return null;
    }
    if (!this.localBusy) {
      this.localBusy = true;
      ctx.argv ??= callerArgv(ctx.src);
      this.eng.busyReply = ctx.isEval ? SLOW_EVAL : SLOW_SCRIPT;
      // (Run back from the worker past the threshold: the warning was written as it passed.)
      if (!ctx.async) slowScript(ctx);
      for (const h of this.eng.busyHooks) h.start();
    }
    this.pollClients(ctx);
    if (ctx.killed) return 'k';
    this.checkAt = performance.now() + POLL_MS;
    return null;
  }

  /** Read and answer what the other TCP clients sent (not the caller: its input waits, as Redis's protectClient). */
  private pollClients(ctx: RunCtx): void {
    const buf = this.pollBuf ??= Buffer.allocUnsafe(64 * 1024);
    // EAGAIN is thrown by every read of an idle socket: no stack traces for those.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      for (const h of this.eng.busyHooks) h.poll();
      // (Clients added meanwhile, e.g. accepted by a hook, are visited too: Map iteration.)
      for (const c of this.eng.clients.values()) {
        if (c === ctx.caller || c.closed) continue;
        // Messages the script published go out meanwhile, as in Redis.
        if (c.subscriptions > 0) drainPushed(c);
        c.transport.poll?.(buf);
      }
    } finally {
      Error.stackTraceLimit = limit;
    }
    // Commands run meanwhile moved the clock; the script's commands see its start time.
    this.eng.now = ctx.start;
  }

  /** The running script ended (or stopped to move): the deadlines are off. */
  private endLocal(): void {
    this.moveAt = this.busyAt = this.checkAt = Infinity;
    if (this.localBusy) {
      this.localBusy = false;
      this.eng.busyReply = null;
      for (const h of this.eng.busyHooks) h.end();
    }
  }

  private log(level: number, msg: string): void {
    const min = ['debug', 'verbose', 'notice', 'warning'].indexOf(this.eng.cfg('loglevel'));
    if (level >= min) scriptLog(level, msg);
  }

  /** Drop a failed engine-thread state; the next use creates a new one. */
  private dropLocal(): void {
    this.rt = null;
  }

  // ---------------------------------------------------------------- worker

  private channel(): SyncChannel {
    if (this.ch !== null) return this.ch;
    const mem = channelMemory();
    const ctl = mem.ctl;
    const { port1, port2 } = new MessageChannel();
    const w = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: { mem, port: port2, version: REDIS_VERSION, versionNum: VERSION_NUM },
      transferList: [port2],
      stdout: false,
      stderr: false,
    });
    w.unref();
    w.on('error', (e) => console.error('scripting worker error:', e));
    const ch = new SyncChannel(mem, port1, CTL_MAIN, CTL_WORKER);
    const first = ch.recv(30000) as { t: string; error?: string } | undefined;
    if (first === undefined || first.t !== 'ready') {
      void w.terminate();
      throw new Error(`scripting worker failed to start: ${first?.error ?? 'timeout'}`);
    }
    this.worker = w;
    this.ch = ch;
    this.ctl = ctl;
    this.compiled.clear();
    this.workerLibs.clear();
    return ch;
  }

  /** Drop a failed worker; the next request starts a new one. */
  private reset(): void {
    const w = this.worker;
    this.worker = null;
    this.ch = null;
    this.ctl = null;
    this.compiled.clear();
    this.workerLibs.clear();
    if (w !== null) void w.terminate();
  }

  /** Stop the worker (server shutdown, tests). */
  close(): void {
    this.reset();
  }

  /** A worker request that runs no user script code needing redis.call answers (compile, load). */
  private request(msg: object): Done {
    const ch = this.channel();
    ch.send(msg);
    for (;;) {
      let m: unknown;
      try {
        m = ch.recv();
      } catch (e) {
        if (e instanceof PeerGone) this.reset();
        throw e;
      }
      if (isDone(m)) return m;
      this.serve(m);
    }
  }

  /** Serve one request of the script running in the worker (a message, or FRAME: a redis.call). */
  private serve(m: unknown): void {
    const ch = this.ch!;
    if (m === FRAME) {
      this.serveFrame(ch);
      return;
    }
    const msg = m as { t: string } & Record<string, unknown>;
    switch (msg.t) {
      case 'call': {
        const enc = this.enc;
        enc.clear(msg.resp === 3);
        this.client.resp = msg.resp === 3 ? 3 : 2;
        this.scriptCall(Argv.of((msg.argv as Uint8Array[]).map(asBuffer)), enc);
        this.reply(ch, enc);
        this.callCrossed();
        return;
      }
      case 'acl':
        ch.send({ t: 'reply', v: this.aclCheck(Argv.of((msg.argv as Uint8Array[]).map(asBuffer))) });
        return;
      case 'log':
        // Held until the script ends, as on the engine thread (dropped if it is run again).
        if (this.run !== null) this.logs.push({ level: msg.level as number, msg: msg.msg as string });
        else this.log(msg.level as number, msg.msg as string);
        return;
    }
  }

  /** A redis.call frame (worker.ts callFrame): run it, reply with a frame (or on the port if too big). */
  private serveFrame(ch: SyncChannel): void {
    const len = ch.frameLen;
    // The arguments are copied out of shared memory: commands get an ordinary Buffer.
    if (this.frameCopy.length < len) this.frameCopy = Buffer.allocUnsafe(Math.max(len, 2 * this.frameCopy.length));
    const b = this.frameCopy;
    ch.inFrame.copy(b, 0, 0, len);
    const resp = b[0] === 3 ? 3 : 2;
    const count = b.readUInt32LE(1);
    const argv = this.frameArgv;
    argv.reset(b);
    let p = 5;
    for (let i = 0; i < count; i++) {
      const n = b.readUInt32LE(p);
      argv.push(p + 4, p + 4 + n);
      p += 4 + n;
    }
    const enc = this.enc;
    enc.clear(resp === 3);
    this.client.resp = resp;
    this.scriptCall(argv, enc);
    this.reply(ch, enc);
    this.callCrossed();
  }

  /**
   * A redis.call of the script in the worker was served. One busy with redis.call there (the
   * rule of MOVE_MAX_CALLS_PER_MS, counted since it began in the worker) that has had no effect
   * yet is stopped (as SCRIPT KILL does) to be run again from its start here (workerDone).
   */
  private callCrossed(): void {
    const ctx = this.run;
    if (ctx === null || ctx.pinned || ctx.killed || this.movingBack) return;
    if (++this.calls <= MOVE_BACK_MIN_CALLS || this.calls <= MOVE_MAX_CALLS_PER_MS * (performance.now() - this.runStart)) return;
    this.movingBack = true;
    Atomics.store(this.ctl!, CTL_KILL, 1);
  }

  private reply(ch: SyncChannel, enc: LuaReplyEncoder): void {
    if (enc.copyTo(ch.outFrame, 1)) {
      ch.outFrame[0] = enc.topError ? 1 : 0;
      ch.sendFrame(1 + enc.length);
    } else ch.send({ t: 'reply', v: enc.take(), err: enc.topError });
  }

  // ---------------------------------------------------------------- running

  /** Is a script running (only observable from other clients once it is busy)? */
  get busy(): boolean {
    return this.run !== null && this.run.async;
  }

  /**
   * Run EVAL (sha) or FCALL (fn) called by `c` with `argv` (its script compiled / library loaded
   * here), replying to `out`. Returns after the reply unless the script was moved to the worker
   * and outlives busy-reply-threshold, in which case the caller stays blocked and gets its reply
   * later. perf: the RunCtx (newRun) of the last run that ended here is reused: no object per run.
   */
  call(c: Client, out: ReplySink, argv: Argv, nk: number, readOnly: boolean, sha: string, fn: FunctionInfo | null): void {
    const spare = this.spare;
    // (Taken: a run started before this one ends makes its own.)
    this.spare = null;
    const ctx = spare === null ? newRun(c, out, argv, nk, readOnly, sha, fn) : setRun(spare, c, out, argv, nk, readOnly, sha, fn);
    this.exec(ctx);
    // Ended here (not busy in the worker, which keeps it until its reply): the next run's.
    if (!ctx.async && this.run !== ctx) this.spare = ctx;
  }

  /** A RunCtx whose run has ended, for the next call(). */
  private spare: RunCtx | null = null;

  private exec(ctx: RunCtx): void {
    // Only a TCP client outside MULTI can wait for its reply: others run the script to the end.
    ctx.movable = ctx.caller.transport.kind === 'tcp' && !this.eng.inExec;
    // perf: the command's start (dispatch.ts read the clock just before its handler) is the
    // run's start: one clock read less per script.
    this.runLocal(ctx, -1, true);
  }

  /**
   * Run `ctx` on the engine thread; moved to the worker if it runs long and can. fromCommand:
   * it starts at its command's start (engine.lastClock), else now.
   */
  private runLocal(ctx: RunCtx, busyAt = -1, fromCommand = false): void {
    let rt: LuaRuntime;
    try {
      rt = this.local();
    } catch (e) {
      ctx.out.error(`ERR ${(e as Error).message}`);
      return;
    }
    const sc = this.client;
    sc.dbIndex = ctx.caller.dbIndex;
    sc.aclUser = ctx.caller.aclUser;
    sc.user = ctx.caller.user;
    // (From now or the command's start rather than from ctx.start, a time in ms. perf: the time
    // is read here, not passed: a double argument is boxed.)
    const t0 = fromCommand ? this.eng.lastClock : performance.now();
    this.moveAt = ctx.movable ? t0 + Math.min(MOVE_AFTER_MS, this.threshold) : Infinity;
    this.busyAt = busyAt >= 0 ? busyAt : t0 + this.threshold;
    this.checkAt = Math.min(this.moveAt, this.busyAt);
    this.calls = 0;
    this.runStart = t0;
    this.moving = false;
    if (this.logs.length !== 0) this.logs.length = 0;
    this.run = ctx;
    let r;
    try {
      r = ctx.fn === null
        ? rt.runEval(ctx.name, ctx.src, 3, ctx.nk, ctx.name)
        : rt.runFunction(ctx.fn.library.name, ctx.fn.name, ctx.src, 3, ctx.nk, ctx.name);
    } catch (e) {
      // A JS exception thrown through Lua: the state cannot be trusted any more.
      this.run = null;
      this.moving = false;
      this.endLocal();
      this.dropLocal();
      ctx.out.error(`ERR internal scripting error: ${(e as Error).message}`);
      return;
    }
    this.endLocal();
    if (this.moving) {
      const rand = rt.randState('start');
      rt.endRun();
      this.moving = false;
      this.logs.length = 0;
      sc.dbIndex = ctx.caller.dbIndex;
      this.execInWorker(ctx, rand);
      return;
    }
    this.run = null;
    if (this.logs.length !== 0) {
      for (const l of this.logs) this.log(l.level, l.msg);
      this.logs.length = 0;
    }
    if (r.len === -1) ctx.out.int(luaNumberToInt(r.num));
    else if (r.raw) {
      // perf: copied by the sink straight from the heap (no JS string, no Buffer).
      ctx.out.bulkBytes(r.buf, r.p, r.p + r.len);
    }
    else if (r.len === -2 && rt.tablePlan()) writePlan(rt.plan, rt.vm.heapBuffer(), ctx.out);
    else {
      const t = r.len === -2 ? rt.serialised() : r;
      if (writeResult(t.buf.subarray(t.p, t.p + t.len), ctx.out)) this.countFailed(ctx);
    }
    rt.endRun();
  }

  /** Run `ctx` again from its start in the worker, with math.random's state `rand`. */
  private execInWorker(ctx: RunCtx, rand: string): void {
    let ch: SyncChannel;
    let msg: object;
    try {
      ch = this.channel();
      msg = this.workerRequest(ctx, rand);
    } catch {
      // No worker: run it again here, to its end.
      ctx.movable = false;
      this.runLocal(ctx);
      return;
    }
    this.run = ctx;
    this.calls = 0;
    this.runStart = performance.now();
    this.movingBack = false;
    this.startRand = rand;
    if (this.logs.length !== 0) this.logs.length = 0;
    Atomics.store(this.ctl!, CTL_KILL, 0);
    ch.send(msg);
    for (;;) {
      const left = ctx.start + this.threshold - Date.now();
      let m: unknown;
      try {
        m = ch.recv(Math.max(0, left));
      } catch (e) {
        this.workerGone(ctx, e);
        return;
      }
      if (m === undefined) {
        this.goBusy(ctx);
        return;
      }
      if (isDone(m)) {
        this.workerDone(ctx, m);
        return;
      }
      this.serve(m);
    }
  }

  /** The worker's run request for `ctx`, after loading what it needs there. */
  private workerRequest(ctx: RunCtx, rand: string): object {
    const keys: Uint8Array[] = [];
    const args: Uint8Array[] = [];
    // Exact-size copies: a view would post its whole underlying buffer.
    for (let i = 3; i < ctx.src.count; i++) (i < 3 + ctx.nk ? keys : args).push(new Uint8Array(ctx.src.view(i)));
    const fn = ctx.fn;
    if (fn === null) {
      const sha = ctx.name;
      let body: Buffer | undefined;
      if (!this.compiled.has(sha)) {
        body = this.shebangs.get(sha)?.body;
        if (body === undefined) throw new Error('script not cached');
        this.compiled.add(sha);
      }
      return { t: 'eval', sha, body, keys, args, name: sha, rand };
    }
    const lib = fn.library;
    if (this.workerLibs.get(lib.name) !== lib) {
      const sb = parseShebang(lib.code, true);
      if (typeof sb === 'string') throw new Error(sb);
      const r = this.request({ t: 'fload', code: sb.body });
      if (r.err) {
        this.request({ t: 'fdrop' });
        throw new Error(r.err);
      }
      this.request({ t: 'fcommit', name: lib.name });
      this.workerLibs.set(lib.name, lib);
    }
    return { t: 'fcall', lib: lib.name, fn: fn.name, keys, args, name: fn.name, rand };
  }

  private goBusy(ctx: RunCtx): void {
    const eng = this.eng;
    ctx.async = true;
    ctx.argv = callerArgv(ctx.src);
    ctx.caller.blocked = true;
    eng.busyReply = ctx.isEval ? SLOW_EVAL : SLOW_SCRIPT;
    slowScript(ctx);
    void this.pump(ctx);
  }

  /**
   * The busy phase: serve the script's requests as they arrive, on the event loop. perf: once
   * one has come, the next ones are served synchronously as long as they follow within
   * BURST_WAIT_MS (a redis.call loop's next call comes within microseconds; a trip through
   * the event loop per call costs far more), for up to POLL_MS; then the event loop has its
   * turn (other clients' BUSY replies, SCRIPT KILL, REST requests, timers).
   */
  private async pump(ctx: RunCtx): Promise<void> {
    const ch = this.ch!;
    for (;;) {
      try {
        await ch.waitAsync();
      } catch (e) {
        this.workerGone(ctx, e);
        return;
      }
      const until = performance.now() + POLL_MS;
      let m: unknown;
      for (;;) {
        const left = until - performance.now();
        try {
          m = left > 0 ? ch.recv(Math.min(left, BURST_WAIT_MS)) : undefined;
        } catch (e) {
          this.workerGone(ctx, e);
          return;
        }
        if (m === undefined) break;
        if (isDone(m)) {
          this.workerDone(ctx, m);
          return;
        }
        this.serve(m);
      }
      // The slice is over with requests still coming: waitAsync would return at once.
      if (performance.now() >= until) await new Promise<void>((r) => setImmediate(r));
    }
  }

  /** The worker ended while running `ctx` (it cannot answer any more): the script fails. */
  private workerGone(ctx: RunCtx, e: unknown): void {
    if (!(e instanceof PeerGone)) throw e;
    this.reset();
    this.finish(ctx, { t: 'done', err: 'ERR internal scripting error: the scripting worker exited' });
  }

  /** A script run in the worker is over. */
  private finish(ctx: RunCtx, d: Done): void {
    this.run = null;
    this.movingBack = false;
    if (this.logs.length !== 0) {
      for (const l of this.logs) this.log(l.level, l.msg);
      this.logs.length = 0;
    }
    if (d.rand !== undefined && this.rt !== null) this.rt.setRandState(d.rand);
    if (d.err) {
      ctx.out.error(d.err);
      if (d.err.startsWith('ERR internal scripting error')) this.reset();
    } else if (d.r !== undefined && writeResult(d.r, ctx.out)) {
      this.countFailed(ctx);
    }
    this.release(ctx);
  }

  /**
   * The script in the worker ended. Stopped to be run back here (callCrossed), it runs again
   * from its start on this thread, to its end: nothing it did took effect, math.random starts
   * from the same state, its logs were held, and the time its commands see is its start time.
   */
  private workerDone(ctx: RunCtx, d: Done): void {
    if (!this.movingBack || ctx.killed || !d.stopped) {
      this.finish(ctx, d);
      return;
    }
    this.movingBack = false;
    this.logs.length = 0;
    // (The state the script started in; should it have been replaced, runLocal makes a new one.)
    if (this.rt !== null && !this.rt.vm.dead) this.rt.setRandState(this.startRand);
    // The caller's arguments are borrowed only while its EVAL / FCALL runs: once the script went
    // busy (async), from the copy made then.
    const again: RunCtx = { ...ctx, src: ctx.async ? Argv.of(ctx.argv!) : ctx.src, movable: false };
    this.runLocal(again, performance.now() + Math.max(0, ctx.start + this.threshold - Date.now()));
    this.release(ctx);
  }

  /** A script that went busy (async) is over: its caller is served again. */
  private release(ctx: RunCtx): void {
    const eng = this.eng;
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

  /** An error reply of the script that its command calls did not count: a failed EVAL / FCALL all the same. */
  private countFailed(ctx: RunCtx): void {
    const eng = this.eng;
    const name = ctx.argv !== null ? ctx.argv[0].toString('latin1') : ctx.src.key(0);
    const def = eng.registry.commands.get(name.toLowerCase());
    if (def !== undefined) eng.stats.perCommand[def.id].failed++;
  }

  /**
   * The flags a script declares (shebang, or its function's flags) for the OOM gate of EVAL,
   * EVALSHA and FCALL; null when it declares none (EVAL compatibility mode) or is unknown.
   */
  declaredFlags(name: string, argv: Argv): readonly string[] | null {
    if (name === 'fcall') return this.functions.getFunction(argv.key(1))?.flags ?? null;
    if (name === 'evalsha') {
      const sb = this.scriptFlags(argv.key(1).toLowerCase());
      return sb.present ? sb.flags : null;
    }
    const sb = parseShebang(argv.copy(1), false);
    return typeof sb === 'string' || !sb.present ? null : sb.flags;
  }

  /** Redis's scriptCall: the checks of a command called from a script, then the command. */
  private scriptCall(argv: Argv, out: ReplySink, inHeap = false): void {
    this.checkedCall(argv, out, inHeap);
    // A refusal here is charged as the command's own error (Redis's incrCommandStatsOnError):
    // not to the script's EVAL / FCALL.
    replyStats.mark = replyStats.errors;
  }

  /** `inHeap`: argv is in place in the engine thread's Lua heap (see siteLookup). */
  private checkedCall(argv: Argv, out: ReplySink, inHeap: boolean): void {
    const eng = this.eng;
    const ctx = this.run;
    const sc = this.client;
    const def = inHeap ? this.siteLookup(argv) : eng.registry.lookup(argv);
    if (def === undefined) {
      out.error('ERR Unknown Redis command called from script');
      return;
    }
    if ((def.arity > 0 && argv.count !== def.arity) || argv.count < -def.arity) {
      eng.stats.perCommand[def.id].rejected++;
      out.error('ERR Wrong number of args calling Redis command from script');
      return;
    }
    if (def.flags & F.NOSCRIPT) {
      eng.stats.perCommand[def.id].rejected++;
      out.error('ERR This Redis command is not allowed from script');
      return;
    }
    if (!sc.aclUser.unrestricted) {
      const r = eng.acl.check(sc.aclUser, def, argv);
      if (r !== null) {
        const caller = ctx !== null ? ctx.caller : sc;
        eng.acl.logDenial(r, def, argv, 'lua', sc.user, clientInfo(caller, eng.now, null));
        eng.stats.perCommand[def.id].rejected++;
        out.error(r.reason === 'command' ? "ERR The user executing the script can't run this command or subcommand"
          : r.reason === 'key' ? "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"
            : "ERR The user executing the script can't publish to the channel mentioned in the command");
        return;
      }
    }
    // The caller's transport rules (REST token permissions) hold inside its scripts too.
    const deny = ctx !== null ? ctx.caller.deny : null;
    if (deny !== null) {
      const err = deny(ctx!.caller, def, argv, true);
      if (err !== null) {
        eng.stats.perCommand[def.id].rejected++;
        out.error(err);
        return;
      }
    }
    const effect = (def.flags & F.READONLY) === 0
      && ((def.flags & (F.WRITE | F.MAY_REPLICATE)) !== 0 || MAY_REPLICATE.has(def.name));
    if (ctx !== null) {
      if (ctx.readOnly && effect) {
        eng.stats.perCommand[def.id].rejected++;
        out.error('ERR Write commands are not allowed from read-only scripts.');
        return;
      }
      // scriptVerifyOOM: out of memory when the script started, its first DENYOOM call fails
      // (unless the script declared allow-oom); later ones cannot stop it half-way.
      if (eng.oomState && !ctx.wrote && def.flags & F.DENYOOM && !this.allowOom(ctx)) {
        eng.stats.perCommand[def.id].rejected++;
        out.error(OOM);
        return;
      }
      if (def.flags & F.WRITE) ctx.wrote = true;
      // Running it again would repeat the effect: the script must end where it is.
      if (effect) ctx.pinned = true;
      // Time is frozen at the script's start: keys do not expire in the middle of a script.
      eng.now = ctx.start;
    }
    this.fwd.target = out;
    try {
      call(sc, def, argv, out);
    } finally {
      this.fwd.target = null;
    }
  }

  /**
   * perf: the command of a redis.call site. Lua interns strings, so a script's command name is
   * one string at one heap address from call to call: a small table keyed by that address gives
   * the command without hashing the name (registry.lookup: ~40 ns when the command changes from
   * call to call). Each name in the table is anchored in the Lua state (rt.anchorSite), so it is
   * never freed and no other string can take its address: the address alone is the name (no
   * bytes compared). Commands with subcommands are not kept (their second argument decides).
   */
  private siteLookup(argv: Argv): CommandDef | undefined {
    const s = argv.start[0];
    // Sets of two ways (k, k ^ 1) picked by a multiplicative hash of the address: with one way
    // and its low bits, two hot names whose strings fell on one slot (BullMQ's XADD and HINCRBY
    // did) evicted each other on every call.
    const k = Math.imul(s >>> 4, 0x9e3779b1) >>> (32 - SITE_BITS);
    if (this.siteAt[k] === s) return this.siteDef[k];
    if (this.siteAt[k ^ 1] === s) return this.siteDef[k ^ 1];
    const def = this.eng.registry.lookupName(argv.buf, s, argv.end[0]);
    if (def === undefined || def.subcommands !== undefined) return this.eng.registry.lookup(argv);
    // The entry in k moves to k ^ 1 (the older one there goes): least recently set goes first.
    const moved = this.siteAt[k] !== -1;
    if (!this.siteRt!.anchorSite(k, moved ? k ^ 1 : -1)) return def;
    if (moved) {
      this.siteAt[k ^ 1] = this.siteAt[k];
      this.siteDef[k ^ 1] = this.siteDef[k];
    }
    this.siteAt[k] = s;
    this.siteDef[k] = def;
    return def;
  }

  /** The site table is of one Lua state (rt.stateId): emptied when another one runs (localCall). */
  private sitesOf(rt: LuaRuntime): void {
    this.siteAt.fill(-1);
    this.siteState = rt.stateId;
    this.siteRt = rt;
  }

  /** Each entry's name: the heap address of its (anchored) Lua string's bytes. */
  private readonly siteAt = new Int32Array(SITES).fill(-1);
  private readonly siteDef: CommandDef[] = [];
  private siteState = 0;
  private siteRt: LuaRuntime | null = null;

  private allowOom(ctx: RunCtx): boolean {
    const flags = ctx.fn !== null ? ctx.fn.flags : this.shebangs.get(ctx.name)?.flags;
    return flags !== undefined && flags.includes('allow-oom');
  }

  /** redis.acl_check_cmd: '1' allowed, '0' denied, 'u' unknown command. */
  private aclCheck(argv: Argv): string {
    const eng = this.eng;
    const def = eng.registry.lookup(argv);
    if (def === undefined) return 'u';
    if ((def.arity > 0 && argv.count !== def.arity) || argv.count < -def.arity) return 'u';
    const caller = this.run?.caller ?? null;
    if (caller !== null && caller.deny !== null && caller.deny(caller, def, argv, true) !== null) return '0';
    const u = this.client.aclUser;
    if (u.unrestricted) return '1';
    return eng.acl.check(u, def, argv) === null ? '1' : '0';
  }

  // ---------------------------------------------------------------- EVAL cache

  /**
   * The last SHA_SEEN sha1 arguments of EVALSHA: lower-cased bytes and string (slot shaNext is
   * replaced next). Several: BullMQ calls its scripts in turn (add, moveToActive, moveToFinished).
   */
  private readonly shaBytes: Buffer[] = [];
  private readonly shaStrings: string[] = [];
  private shaNext = 0;

  /**
   * EVALSHA's 40-byte sha1 argument i, lower-cased. perf: a script called again gets the same
   * string (no allocation, its hash already computed for the cache lookups).
   */
  shaArg(argv: Argv, i: number): string {
    const b = argv.buf;
    const s = argv.start[i];
    for (let k = 0; k < this.shaStrings.length; k++) {
      const seen = this.shaBytes[k];
      if (sameSha(b, s, seen) || sameShaFolded(b, s, seen)) return this.shaStrings[k];
    }
    const sha = argv.key(i).toLowerCase();
    const k = this.shaNext;
    this.shaNext = (k + 1) % SHA_SEEN;
    this.shaBytes[k] = Buffer.from(sha, 'latin1');
    this.shaStrings[k] = sha;
    return sha;
  }

  /** Compile a body if needed (SCRIPT LOAD, EVAL): the sha, or an error reply text. */
  load(body: Buffer): { sha: string } | { err: string } {
    const sha = sha1hex(body);
    let rt: LuaRuntime;
    try {
      rt = this.local();
    } catch (e) {
      return { err: `ERR ${(e as Error).message}` };
    }
    if (rt.compiled.has(sha)) return { sha };
    const copy = this.scripts.get(sha) ?? Buffer.from(body);
    const sb = parseShebang(copy, false);
    if (typeof sb === 'string') return { err: `ERR ${sb}` };
    const err = rt.compile(sha, sb.body);
    if (err !== null) return { err };
    this.scripts.set(sha, copy);
    this.shebangs.set(sha, sb);
    return { sha };
  }

  /** Flags of a cached script: [read-only-capable (no-writes), shebang present]. */
  scriptFlags(sha: string): { present: boolean; flags: readonly string[] } {
    return this.shebangs.get(sha) ?? NO_SHEBANG;
  }

  /** The engine-thread state must hold the compiled script before running it. */
  ensureCompiled(sha: string): string | null {
    const rt = this.rt;
    if (rt !== null && !rt.vm.dead && rt.compiled.has(sha)) return null;
    const body = this.scripts.get(sha);
    if (body === undefined) return 'NOSCRIPT No matching script. Please use EVAL.';
    const r = this.load(body);
    return 'err' in r ? r.err : null;
  }

  flushScripts(): void {
    this.scripts.clear();
    this.shebangs.clear();
    this.freshStates();
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
    let rt: LuaRuntime;
    try {
      rt = this.local();
    } catch (e) {
      return { err: `ERR ${(e as Error).message}` };
    }
    const d = rt.loadLibrary(sb.body);
    if ('err' in d) return { err: d.err };
    const fns = d.fns;
    if (fns.length === 0) {
      rt.dropPending();
      return { err: 'ERR No functions registered' };
    }
    for (const f of fns) {
      const other = this.functions.getFunction(f.name);
      if (other !== undefined && other.library.name !== name) {
        rt.dropPending();
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
    rt.commitLibrary(name);
    this.eng.dirty++;
    this.saveFunctions();
    return { name };
  }

  deleteLibrary(name: string): boolean {
    if (this.functions.delete(name) === undefined) return false;
    this.rt?.deleteLibrary(name);
    this.eng.dirty++;
    this.saveFunctions();
    return true;
  }

  flushFunctions(): void {
    this.functions.clear();
    this.freshStates();
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
    console.warn('Lua script killed by user with SCRIPT KILL.');
    if (this.localBusy) {
      // On this thread: the count hook (or the next redis.call) stops it as the poll returns.
      this.checkAt = -Infinity;
      return null;
    }
    Atomics.store(this.ctl!, CTL_KILL, 1);
    Atomics.notify(this.ctl!, CTL_WORKER);
    return null;
  }

  /** The script client (its database follows SELECT inside scripts). */
  get scriptClient(): Client {
    return this.client;
  }
}

/** Redis's warning as a script passes busy-reply-threshold. */
function slowScript(ctx: RunCtx): void {
  console.warn(`Slow script detected: still in execution after ${Date.now() - ctx.start} milliseconds. You can try killing the script using the ${ctx.isEval ? 'SCRIPT' : 'FUNCTION'} KILL command. Script name is: ${ctx.name}.`);
}

/** redis.log: Redis's log line format, to stdout like the rest of the server's log. */
function scriptLog(level: number, msg: string): void {
  const marks = ['.', '-', '*', '#'];
  const d = new Date();
  const ts = `${d.getUTCDate().toString().padStart(2, '0')} ${d.toUTCString().slice(8, 11)} ${d.getUTCFullYear()} ${d.toISOString().slice(11, 23)}`;
  console.log(`${process.pid}:M ${ts} ${marks[level] ?? '*'} ${msg}`);
}
