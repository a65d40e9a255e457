/**
 * Command-argument fuzzer (issue 16 point 4): walks every row of the command table, every
 * subcommand too, with edge-case arguments in every position, against our server as a real
 * process. After each call the process must be alive, answer PING within 1 s on a fresh
 * connection, and stay under RSS_LIMIT; error replies must equal a real redis-server's for the
 * same call on the same keyspace (test/fuzz/known-differences.ts lists the rows where they may
 * not, and why). The same calls also go through the REST API (POST /), and one in ten through
 * a script's redis.call or MULTI/EXEC; one in five follows another fuzzed call of its family.
 * Calls that kill or hang redis-server 7.0.15 itself are fuzzed but not compared (hurtsRedis).
 *
 *   FUZZ_SEED=<n>    seed (default: fixed, so CI is reproducible); a failure prints it
 *   FUZZ_CALLS=<n>   number of calls (default: six rounds of the table)
 *   FUZZ_FROM=<i>    first call index (replay one failing call: FUZZ_FROM=i FUZZ_CALLS=1)
 *   FUZZ_ONLY=a,b    only these rows (e.g. zrandmember,config|set)
 *   FUZZ_KEEP_GOING=1, FUZZ_LOG=<file>, FUZZ_SHOW_MISMATCHES=1: exploration runs
 *
 * Both servers run with proto-max-bulk-len 32mb so that legitimate 512 MB strings (SETBIT at
 * offset 2^32-1) stay out of a shared machine's memory; the limit's checks are fuzzed instead.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { F } from '../../dist/engine/flags.js';
import type { CommandDef } from '../../dist/engine/command.js';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { FuzzConn, callOnce, lastCall, type Outcome } from './resp.js';
import { Generator, Rng, callSeed, parseDocs, populate, SAFE_CONFIG, TYPED_KEYS, INT64_MIN, type Arg, type Doc } from './generator.js';
import { REGRESSIONS } from './regressions.js';
import { KNOWN_DIFFERENCES } from './known-differences.js';

const TOKEN = 'fuzz-token';
const RSS_LIMIT = 1024 * 1024 * 1024;
const PING_MS = 1000;
/** A reply slower than this from a command that cannot block is a hang. */
const REPLY_MS = 10000;
/** Blocking commands (and CLIENT REPLY OFF...) may stay silent: wait this long. */
const BLOCK_MS = 300;
const SERVER_ARGS = ['--proto-max-bulk-len', '32mb'];
const OURS_ARGS = [...SERVER_ARGS, '--appendfsync', 'no', '--token', TOKEN, '--read-only-token', 'fuzz-ro'];

/** Rows never called, and why. */
const SKIP: Record<string, string> = {
  'shutdown': 'stops the server',
  'debug': 'DEBUG SEGFAULT/SLEEP/RELOAD... stop or freeze the server by design',
  'client|pause': 'pauses every client (the PING check) by design',
  'sync': 'turns the connection into a replica',
  'psync': 'turns the connection into a replica',
  'replicaof': 'makes the server a replica of a fuzzed address',
  'slaveof': 'makes the server a replica of a fuzzed address',
  'failover': 'replication handover',
};

/** Replies that may legitimately differ or block: blocking rows, plus these. */
const SILENT_OK = new Set(['wait', 'client|reply', 'xread', 'xreadgroup', 'monitor', 'quit', 'reset']);

/**
 * Rows whose error replies are not compared: they depend on time or chance (client ids, and
 * whether a background save or rewrite started by an earlier call is still running).
 */
const NO_COMPARE = new Set(['client|kill', 'client|list', 'client|info', 'client|id', 'client|unblock', 'bgsave', 'bgrewriteaof', 'save']);

interface Row { name: string; head: string[]; def: CommandDef; fam: string }

function tableRows(): Row[] {
  const out: Row[] = [];
  for (const fam of FAMILIES) {
    for (const def of fam.rows) {
      if (def.subcommands) {
        for (const s of def.subcommands.values()) out.push({ name: s.name, head: s.name.split('|'), def: s, fam: fam.name });
        // The container itself with an unknown or missing subcommand.
        out.push({ name: def.name, head: [def.name], def, fam: fam.name });
      } else {
        out.push({ name: def.name, head: [def.name], def, fam: fam.name });
      }
    }
  }
  return out.filter((r) => !(r.name in SKIP) && !(r.name.split('|')[0] in SKIP));
}

function show(args: readonly Arg[]): string {
  return args.map((a) => {
    const s = typeof a === 'string' ? a : a.toString('latin1');
    const t = s.length > 80 ? `${s.slice(0, 20)}...(${s.length} bytes)` : s;
    return JSON.stringify(t);
  }).join(' ');
}

function showOutcome(o: Outcome): string {
  if (o.kind === 'reply') {
    const s = o.bytes.toString('latin1');
    return JSON.stringify(s.length > 200 ? s.slice(0, 200) + '...' : s);
  }
  return `<${o.kind}>`;
}

function rss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Whether this call would kill (or endlessly stream from) redis-server 7.0.15 itself. */
function hurtsRedis(args: readonly Arg[]): boolean {
  const name = String(args[0]).toLowerCase();
  if (name === 'zrandmember' || name === 'srandmember' || name === 'hrandfield') {
    if (args.length < 3) return false;
    const s = String(args[2]);
    if (!/^-?\d+$/.test(s)) return false;
    const n = BigInt(s);
    if (n >= -100000n || n < BigInt(INT64_MIN)) return false;
    if (n === BigInt(INT64_MIN)) return false;
    const withExtra = args.length >= 4;
    return !(withExtra && n < -(2n ** 63n - 1n) / 2n);
  }
  return false;
}

/**
 * REST body of a call: JSON array of strings (bytes that are not UTF-8 arrive replaced); with
 * `numbers`, arguments that are JSON numbers go as numbers (the REST API's own number path).
 */
function restBody(args: readonly Arg[], numbers: boolean): string {
  const parts = args.map((a) => {
    const s = typeof a === 'string' ? a : a.toString('utf8');
    return numbers && /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(s) ? s : JSON.stringify(s);
  });
  return `[${parts.join(',')}]`;
}

/** FUZZ_LOG=<file>: every failure and mismatch, appended as it happens (long runs). */
function log(text: string): void {
  if (process.env.FUZZ_LOG) fs.appendFileSync(process.env.FUZZ_LOG, text + '\n');
}

/** A word that sets a TTL: after such a call, which keys still exist depends on timing. */
function isTimed(a: Arg): boolean {
  return /^(p?expire(at)?|setex|psetex|getex|restore|px|ex|pxat|exat|h(p)?expire(at)?)$/i.test(String(a));
}

function isErr(o: Outcome): boolean {
  return o.kind === 'reply' && o.value instanceof Error;
}

class Fuzz {
  readonly failures: string[] = [];
  readonly mismatches: string[] = [];
  /** Mismatches of rows with a documented difference (known-differences.ts): reported only. */
  readonly known: string[] = [];
  readonly found = new Map<string, number>();
  calls = 0;
  redisRestarts = 0;
  maxRss = 0;
  private dirty = new Set<string>();

  constructor(public ours: Proc, public redis: Proc, readonly docs: Map<string, Doc>, readonly redisDocs: Set<string>) {}

  /** Start a fresh connection on which the keyspace was rebuilt. */
  private async prepared(p: Proc, isOurs: boolean): Promise<FuzzConn | null> {
    const c = await FuzzConn.connect(p.port, REPLY_MS);
    if (c === null) return null;
    const setup: Arg[][] = [];
    if (this.dirty.has('acl')) {
      // Users made by ACL SETUSER calls go, so that both servers start each call alike.
      c.send(['ACL', 'USERS']);
      const o = await c.next(REPLY_MS);
      const users = o.kind === 'reply' && Array.isArray(o.value) ? o.value.map(String).filter((u) => u !== 'default') : [];
      if (users.length > 0) setup.push(['ACL', 'DELUSER', ...users]);
    }
    if (this.dirty.has('config')) setup.push(['CONFIG', 'SET', ...Object.entries(SAFE_CONFIG).flat()]);
    if (this.dirty.has('script')) setup.push(['SCRIPT', 'FLUSH'], ['FUNCTION', 'FLUSH']);
    setup.push(...populate(isOurs));
    for (const cmd of setup) c.send(cmd);
    for (const cmd of setup) {
      const o = await c.next(REPLY_MS);
      if (o.kind !== 'reply' || o.value instanceof Error) {
        c.close();
        throw new Error(`setup ${show(cmd.slice(0, 3))} on ${isOurs ? 'ours' : 'redis'}: ${showOutcome(o)}`);
      }
    }
    return c;
  }

  private async run(p: Proc, isOurs: boolean, args: readonly Arg[], waitMs: number, before: readonly Arg[] | null): Promise<Outcome> {
    const c = await this.prepared(p, isOurs);
    if (c !== null && before !== null) {
      // A fuzzed call of the same family first, to leave odd state behind (its reply unread).
      c.send(before);
      if ((await c.next(REPLY_MS)).kind !== 'reply') {
        c.close();
        return { kind: 'closed' };
      }
    }
    return lastCall(c, args, waitMs);
  }

  async alive(): Promise<string | null> {
    const pr = this.ours.proc;
    if (pr.exitCode !== null || pr.signalCode !== null) return `server exited (${pr.exitCode ?? pr.signalCode})`;
    let o = await callOnce(this.ours.port, ['PING'], PING_MS);
    // A refused or reset connection on a loaded machine is tried again; silence is not.
    for (let i = 0; i < 3 && o.kind === 'closed' && pr.exitCode === null && pr.signalCode === null; i++) {
      await new Promise((r) => setTimeout(r, 100));
      o = await callOnce(this.ours.port, ['PING'], PING_MS);
    }
    if (o.kind !== 'reply' || o.bytes.toString() !== '+PONG\r\n') {
      if (pr.exitCode !== null || pr.signalCode !== null) return `server exited (${pr.exitCode ?? pr.signalCode})`;
      return `no PONG within ${PING_MS} ms on a fresh connection (${showOutcome(o)})`;
    }
    const r = rss(pr.pid!);
    this.maxRss = Math.max(this.maxRss, r);
    if (r > RSS_LIMIT) return `RSS ${Math.round(r / 1048576)} MB above ${RSS_LIMIT / 1048576} MB`;
    return null;
  }

  private async rest(args: readonly Arg[]): Promise<string | null> {
    try {
      const ctl = new AbortController();
      const t = setTimeout(() => ctl.abort(), REPLY_MS);
      const r = await fetch(`http://127.0.0.1:${this.ours.httpPort}/`, {
        method: 'POST', body: restBody(args, this.calls % 2 === 1), headers: { authorization: `Bearer ${TOKEN}` }, signal: ctl.signal,
      });
      const text = await r.text();
      clearTimeout(t);
      if (r.status >= 500) return `REST status ${r.status}: ${text.slice(0, 200)}`;
      return null;
    } catch (e) {
      return `REST request failed: ${(e as Error).message}`;
    }
  }

  async restartOurs(): Promise<void> {
    await this.ours.stop('SIGKILL');
    this.ours = await startOurs(OURS_ARGS);
  }

  private async restartRedis(): Promise<void> {
    this.redisRestarts++;
    await this.redis.stop('SIGKILL');
    this.redis = await startRedis(SERVER_ARGS);
  }

  /**
   * The same call through another path of ours only (no comparison: liveness and memory):
   * inside a script's redis.call, or queued in MULTI and run by EXEC.
   */
  async via(mode: 'eval' | 'multi', args: readonly Arg[], label: string): Promise<string | null> {
    const c = await this.prepared(this.ours, true);
    if (c !== null) {
      try {
        if (mode === 'eval') {
          c.send(['EVAL', 'return redis.call(unpack(ARGV))', '0', ...args]);
          await c.next(REPLY_MS);
        } else {
          c.send(['MULTI']);
          c.send(args);
          c.send(['EXEC']);
          for (let i = 0; i < 3; i++) if ((await c.next(REPLY_MS)).kind !== 'reply') break;
        }
      } finally {
        c.close();
      }
    }
    const dead = await this.alive();
    return dead ? `${label}: ${mode === 'eval' ? 'EVAL "return redis.call(unpack(ARGV))" 0' : 'MULTI /'} ${show(args)}${mode === 'multi' ? ' / EXEC' : ''}\n  ${dead}` : null;
  }

  /** One call on both servers (and REST); returns a failure text or null. */
  async one(row: Row, args: Arg[], label: string, before: Arg[] | null = null): Promise<string | null> {
    this.calls++;
    const def = row.def;
    const silentOk = (def.flags & F.BLOCKING) !== 0 || SILENT_OK.has(row.name) || SILENT_OK.has(row.head[0]);
    const wait = silentOk ? BLOCK_MS : REPLY_MS;
    const ourOnly = !this.redisDocs.has(row.name);
    const toRedis = !ourOnly && !hurtsRedis(args);
    const [a, b] = await Promise.all([
      this.run(this.ours, true, args, wait, before),
      toRedis ? this.run(this.redis, false, args, wait, before) : Promise.resolve(null),
    ]);
    if (row.name === 'config|set') this.dirty.add('config');
    if (row.name === 'acl|setuser') this.dirty.add('acl');
    if (row.head[0] === 'script' || row.head[0] === 'function' || row.head[0] === 'eval' || row.head[0] === 'fcall') this.dirty.add('script');
    const where = `${label}: ${before ? `${show(before)} then ` : ''}${show(args)}`;
    const dead = await this.alive();
    if (dead) return `${where}\n  ${dead}\n  reply: ${showOutcome(a)}`;
    if (a.kind === 'silent' && !silentOk && !(b && b.kind === 'silent')) return `${where}\n  no reply within ${REPLY_MS} ms`;
    if (b !== null) {
      let redisDead = this.redis.proc.exitCode !== null || this.redis.proc.signalCode !== null;
      if (!redisDead && b.kind !== 'reply') {
        const ping = await callOnce(this.redis.port, ['PING'], 2000);
        redisDead = ping.kind !== 'reply';
      }
      if (redisDead || (b.kind === 'silent' && !silentOk)) {
        // Not compared: a case that crashes or hangs Redis itself.
        this.found.set(`redis ${redisDead ? 'crash' : 'hang'}: ${show(args).slice(0, 120)}`, 1);
        await this.restartRedis();
      } else if (!NO_COMPARE.has(row.name) && !(before && before.some(isTimed)) && (isErr(a) || isErr(b)) && !(silentOk && (a.kind === 'silent' || b.kind === 'silent'))) {
        const same = a.kind === 'reply' && b.kind === 'reply' && a.bytes.equals(b.bytes);
        if (!same) {
          const text = `${where}\n  ours:  ${showOutcome(a)}\n  redis: ${showOutcome(b)}`;
          if (row.name in KNOWN_DIFFERENCES) this.known.push(text);
          else this.mismatches.push(text);
          log(`MISMATCH ${text}`);
        }
      }
    }
    if (!(def.flags & F.NO_REST) && !silentOk) {
      const bad = await this.rest(args);
      if (bad) return `${where} (REST)\n  ${bad}`;
      const dead2 = await this.alive();
      if (dead2) return `${where} (REST)\n  ${dead2}`;
    }
    return null;
  }
}

function argsFor(gen: Generator, row: Row, docs: Map<string, Doc>): Arg[] {
  const typed = row.head[0].startsWith('json.') ? TYPED_KEYS.json : TYPED_KEYS[row.fam] ?? [];
  if (row.name === 'config|set') {
    const names = Object.keys(SAFE_CONFIG);
    const out: Arg[] = ['config', 'set'];
    const pairs = 1 + gen.rng.int(2);
    for (let i = 0; i < pairs; i++) out.push(gen.rng.pick(names), gen.rng.chance(0.5) ? gen.number() : gen.string());
    if (gen.rng.chance(0.1)) out.pop();
    return out;
  }
  return gen.call(row.head, docs.get(row.name), row.def.arity, typed);
}

const seed = Number(process.env.FUZZ_SEED ?? 20261127) >>> 0;
const rows = tableRows().filter((r) => !process.env.FUZZ_ONLY || process.env.FUZZ_ONLY.split(',').includes(r.name));
const from = Number(process.env.FUZZ_FROM ?? 0);
const calls = Number(process.env.FUZZ_CALLS ?? rows.length * 6);
/** FUZZ_KEEP_GOING=1: log failures, restart the server and continue (exploration runs). */
const keepGoing = !!process.env.FUZZ_KEEP_GOING;

describe('command fuzzer', () => {
  let fz: Fuzz;

  before(async () => {
    const [ours, redis] = await Promise.all([
      startOurs(OURS_ARGS),
      startRedis(SERVER_ARGS),
    ]);
    const docsOf = async (port: number) => {
      const o = await callOnce(port, ['COMMAND', 'DOCS'], 10000);
      return o.kind === 'reply' ? parseDocs(o.value) : new Map<string, Doc>();
    };
    const docs = await docsOf(redis.port);
    const redisDocs = new Set(docs.keys());
    // Our own commands (JSON.*, hash field expiry...): our grammar, when we publish one.
    for (const [k, v] of await docsOf(ours.port)) if (!docs.has(k) && v.args.length > 0) docs.set(k, v);
    fz = new Fuzz(ours, redis, docs, redisDocs);
  });

  after(async () => {
    await Promise.all([fz?.ours.stop(), fz?.redis.stop()]);
  });

  it('regressions: every crash found so far, over TCP, REST and EVAL', async () => {
    const all = tableRows();
    for (const r of REGRESSIONS) {
      const name = r.args[0].toLowerCase();
      const row = all.find((x) => x.name === name)!;
      let bad = await fz.one(row, [...r.args], 'regression');
      if (!bad && r.eval) bad = await fz.via('eval', r.args, 'regression');
      assert.equal(bad, null, `${bad} (before its fix: ${r.was})`);
    }
  });

  it(`${calls} seeded calls over ${rows.length} rows (FUZZ_SEED=${seed})`, async () => {
    // A server left stuck or dead by a failed regression case is replaced first.
    if (await fz.alive() !== null) await fz.restartOurs();
    const t0 = Date.now();
    for (let i = from; i < from + calls; i++) {
      const row = rows[i % rows.length];
      const gen = new Generator(new Rng(callSeed(seed, i)));
      const args = argsFor(gen, row, fz.docs);
      // One call in five follows another call of its family (state that one call cannot make).
      let before: Arg[] | null = null;
      if (gen.rng.chance(0.2)) {
        const kin = rows.filter((r) => r.fam === row.fam && !(r.def.flags & F.BLOCKING) && !SILENT_OK.has(r.name) && !SILENT_OK.has(r.head[0]));
        if (kin.length > 0) {
          const k = gen.rng.pick(kin);
          before = argsFor(gen, k, fz.docs);
          if (hurtsRedis(before) || !fz.redisDocs.has(k.name)) before = null;
        }
      }
      const label = `call ${i} (replay: FUZZ_SEED=${seed} FUZZ_FROM=${i} FUZZ_CALLS=1)`;
      let bad = await fz.one(row, args, label, before);
      // One call in ten also goes through a script's redis.call, one in ten through MULTI/EXEC.
      const path = gen.rng.next();
      if (!bad && path < 0.1 && !(row.def.flags & F.NOSCRIPT)) bad = await fz.via('eval', args, label);
      else if (!bad && path >= 0.9) bad = await fz.via('multi', args, label);
      if (bad && !keepGoing) assert.fail(bad);
      if (bad) {
        // Exploration mode: note the failure, restart our server, go on.
        console.log(`FAILURE ${bad}`);
        log(`FAILURE ${bad}`);
        fz.failures.push(bad);
        await fz.restartOurs();
      }
    }
    const secs = (Date.now() - t0) / 1000;
    console.log(`fuzz: ${fz.calls} calls in ${secs.toFixed(1)} s, max RSS ${Math.round(fz.maxRss / 1048576)} MB, redis restarts ${fz.redisRestarts}, error mismatches ${fz.mismatches.length} (+${fz.known.length} in rows with a known difference)`);
    for (const f of fz.found.keys()) console.log(`  ${f}`);
    if (process.env.FUZZ_SHOW_MISMATCHES) for (const m of [...fz.mismatches, ...fz.known]) console.log(m);
    assert.deepEqual(fz.failures, []);
    assert.ok(fz.mismatches.length === 0, `${fz.mismatches.length} error replies differ from redis-server's:\n${fz.mismatches.slice(0, 20).join('\n')}`);
  });
});
