/**
 * The scripting worker thread: a second Lua state (runtime.ts) where the engine thread moves a
 * script that runs long without having written (host.ts explains when and why).
 *
 * Everything here is synchronous. A request arrives, the script runs; each redis.call sends the
 * command to the engine thread and sleeps in Atomics.wait until the reply arrives, so the engine
 * runs the script's commands, and only those, while the script is alive (atomicity is kept by
 * the engine, which refuses other clients' commands meanwhile). SCRIPT KILL / FUNCTION KILL set
 * a shared flag that the Lua count hook reads every 100000 instructions.
 *
 * Requests (engine -> worker), each answered by exactly one {t:'done'}:
 *   {t:'compile', sha, body}                           compile a script
 *   {t:'eval', sha, body?, keys, args, name, rand}     run a script (compiled first if body)
 *   {t:'fresh'}                                        SCRIPT FLUSH, FUNCTION FLUSH: a fresh Lua state
 *   {t:'fload', code} then {t:'fcommit', name} / {t:'fdrop'}   load a library
 *   {t:'fdelete', name}                                FUNCTION DELETE
 *   {t:'fcall', lib, fn, keys, args, name, rand}       FCALL
 * A run's done carries rand, math.random's state after it (it persists across scripts), and
 * stopped: whether CTL_KILL stopped it (SCRIPT KILL, or the engine thread running it back there).
 * While a script runs (worker -> engine): a redis.call as a frame (callFrame; channel.ts),
 * answered by a reply frame, or when either is too big for a frame region {t:'call', argv}
 * answered by {t:'reply', v, err}; {t:'acl', argv} answered by {t:'reply', v}; {t:'log', level, msg}.
 */
import { workerData } from 'node:worker_threads';
import { Argv } from '../../resp/argv.js';
import { SyncChannel, CTL_MAIN, CTL_WORKER, CTL_KILL, CTL_DEAD, FRAME, FRAME_MAX, type ChannelMemory } from './channel.js';
import type { LuaValue } from './lua-vm.js';
import { LuaRuntime, Reply, type RuntimeHost } from './runtime.js';

interface WorkerInit {
  mem: ChannelMemory;
  port: import('node:worker_threads').MessagePort;
  version: string;
  versionNum: number;
}

const init = workerData as WorkerInit;
const ctl = init.mem.ctl;
const ch = new SyncChannel(init.mem, init.port, CTL_WORKER, CTL_MAIN);
// However this thread ends, the engine thread must not wait for it forever.
process.on('exit', () => {
  Atomics.store(ctl, CTL_DEAD, 1);
  Atomics.add(ctl, CTL_MAIN, 1);
  Atomics.notify(ctl, CTL_MAIN);
});

function args(rt: LuaRuntime, n: number, argv: Argv | null = null): Uint8Array[] {
  const out: Uint8Array[] = [];
  // argv: read in place by the runtime (integer arguments as their digits, not on the stack);
  // copied into arrays of their own, as they are posted to the engine thread.
  if (argv !== null) for (let i = 0; i < argv.count; i++) out.push(new Uint8Array(argv.view(i)));
  else for (let i = 1; i <= n; i++) out.push(rt.bytes(i));
  return out;
}

/** redis.setresp of the running script: the engine thread renders redis.call replies for it. */
let resp: 2 | 3 = 2;
/** The running script was stopped by CTL_KILL (told in its 'done'). */
let stopped = false;

/**
 * A redis.call as a frame (channel.ts): resp (1 byte), the argument count (u32), then each
 * argument as its length (u32) and bytes. Returns the length, or -1 if it does not fit.
 */
function callFrame(rt: LuaRuntime, n: number, argv: Argv | null): number {
  const out = ch.outFrame;
  const count = argv !== null ? argv.count : n;
  out[0] = resp;
  out.writeUInt32LE(count, 1);
  let p = 5;
  for (let i = 0; i < count; i++) {
    if (argv !== null) {
      const s = argv.start[i];
      const e = argv.end[i];
      if (p + 4 + e - s > FRAME_MAX) return -1;
      out.writeUInt32LE(e - s, p);
      argv.buf.copy(out, p + 4, s, e);
      p += 4 + e - s;
    } else {
      const src = rt.bytes(i + 1);
      if (p + 4 + src.length > FRAME_MAX) return -1;
      out.writeUInt32LE(src.length, p);
      out.set(src, p + 4);
      p += 4 + src.length;
    }
  }
  return p;
}

/** Push the reply frame (the top-level error flag, then the reply as decodeReply reads it). */
function pushFrameReply(rt: LuaRuntime): Reply {
  const b = ch.inFrame;
  const tag = b[1];
  // perf: the common replies without building a LuaValue.
  if (tag === 0x73) {
    rt.vm.pushBytes(b, 6, 6 + b.readUInt32LE(2));
    return Reply.Value;
  }
  if (tag === 0x69 && rt.vm.direct) {
    rt.vm.pushNumber(b.readDoubleLE(2));
    return Reply.Value;
  }
  return rt.pushReply(decodeReply(b.subarray(1, ch.frameLen)), b[0] === 1);
}

const host: RuntimeHost = {
  call(rt, n, argv) {
    const len = callFrame(rt, n, argv);
    if (len < 0) ch.send({ t: 'call', argv: args(rt, n, argv), resp });
    else ch.sendFrame(len);
    const r = ch.recv();
    if (r === FRAME) return pushFrameReply(rt);
    const m = r as { v: Uint8Array; err: boolean };
    return rt.pushReply(decodeReply(m.v), m.err);
  },
  acl(rt, n) {
    ch.send({ t: 'acl', argv: args(rt, n) });
    return (ch.recv() as { v: string }).v;
  },
  log(level, msg) {
    ch.send({ t: 'log', level, msg });
  },
  setResp(v) {
    resp = v;
  },
  check() {
    if (Atomics.load(ctl, CTL_KILL) === 0) return null;
    stopped = true;
    return 'k';
  },
};

/** Decode a redis.call reply encoded by host.ts's LuaReplyEncoder. */
function decodeReply(u: Uint8Array): LuaValue {
  const b = Buffer.from(u.buffer, u.byteOffset, u.length);
  let p = 0;
  const one = (): LuaValue => {
    const tag = b[p++];
    switch (tag) {
      case 0x73: case 0x65: case 0x6f: {
        const n = b.readUInt32LE(p);
        const v = b.subarray(p + 4, p + 4 + n);
        p += 4 + n;
        return tag === 0x73 ? v : tag === 0x65 ? { err: v } : { ok: v };
      }
      case 0x69: {
        const v = b.readDoubleLE(p);
        p += 8;
        return v;
      }
      case 0x66: return false;
      case 0x54: return true;
      case 0x6e: return null;
      case 0x68: { // a table of n key/value pairs (RESP3 map, set, double... tables)
        const n = b.readUInt32LE(p);
        p += 4;
        const kv: LuaValue[] = [];
        for (let i = 0; i < 2 * n; i++) kv.push(one());
        return { h: kv };
      }
      case 0x61: {
        const n = b.readUInt32LE(p);
        p += 4;
        const arr: LuaValue[] = [];
        for (let i = 0; i < n; i++) arr.push(one());
        return arr;
      }
    }
    throw new Error('bad reply encoding');
  };
  return b.length === 0 ? false : one();
}

/** Run a script or function; the serialised reply (a copy) and the random state after it. */
function run(rt: LuaRuntime, msg: Record<string, unknown>): unknown {
  const keys = msg.keys as Uint8Array[];
  const argv = Argv.of([...keys, ...(msg.args as Uint8Array[])].map((x) => Buffer.from(x.buffer, x.byteOffset, x.length)));
  rt.setRandState(msg.rand as string);
  stopped = false;
  // (CTL_KILL was cleared by the engine thread before it sent the request: a SCRIPT KILL that
  // came since, e.g. while this thread was starting, must stop the script.)
  let r = msg.t === 'eval'
    ? rt.runEval(msg.sha as string, argv, 0, keys.length, msg.name as string)
    : rt.runFunction(msg.lib as string, msg.fn as string, argv, 0, keys.length, msg.name as string);
  if (r.len === -2) r = rt.serialised();
  // The host reads serialised replies only (see prelude.ts).
  // A number as text that reads back to the same double.
  const out = r.len === -1 ? Buffer.from(`n${r.num};`, 'latin1')
    : r.raw ? Buffer.concat([Buffer.from(`s${r.len}:`, 'latin1'), r.buf.subarray(r.p, r.p + r.len)])
      : r.buf.slice(r.p, r.p + r.len);
  rt.endRun();
  return { t: 'done', r: out, rand: rt.randState('now'), stopped };
}

function handle(rt: LuaRuntime, msg: Record<string, unknown>): unknown {
  switch (msg.t) {
    case 'compile':
      return { t: 'done', err: rt.compile(msg.sha as string, msg.body as Uint8Array) };
    case 'eval': {
      const sha = msg.sha as string;
      if (msg.body !== undefined && !rt.compiled.has(sha)) {
        const err = rt.compile(sha, msg.body as Uint8Array);
        if (err !== null) return { t: 'done', r: Buffer.from(`e${err.length}:${err}`, 'latin1'), rand: msg.rand };
      }
      return run(rt, msg);
    }
    case 'fcall':
      return run(rt, msg);
    case 'fresh':
      rt.fresh();
      return { t: 'done' };
    case 'fload': {
      const r = rt.loadLibrary(msg.code as Uint8Array);
      return 'err' in r ? { t: 'done', err: r.err } : { t: 'done', fns: r.fns };
    }
    case 'fcommit':
      rt.commitLibrary(msg.name as string);
      return { t: 'done' };
    case 'fdrop':
      rt.dropPending();
      return { t: 'done' };
    case 'fdelete':
      rt.deleteLibrary(msg.name as string);
      return { t: 'done' };
  }
  return { t: 'done', err: `unknown request ${String(msg.t)}` };
}

let rt: LuaRuntime;
try {
  rt = new LuaRuntime(host, init.version, init.versionNum);
  ch.send({ t: 'ready' });
} catch (e) {
  ch.send({ t: 'fatal', error: String((e as Error).stack ?? e) });
  throw e;
}
for (;;) {
  const msg = ch.recv() as Record<string, unknown>;
  let reply: unknown;
  try {
    reply = handle(rt, msg);
  } catch (e) {
    reply = { t: 'done', err: `ERR internal scripting error: ${(e as Error).message}` };
    rt.recover();
  }
  ch.send(reply);
}
