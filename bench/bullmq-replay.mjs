#!/usr/bin/env node
/**
 * In-process replay of a BullMQ workload captured with redis-cli MONITOR (issue 21): the scripts
 * (EVAL bodies are SCRIPT LOADed first) and the top-level commands of the capture, minus
 * blocking, connection and introspection commands, run through the dispatcher with no sockets,
 * on a flushed keyspace each round. Prints CPU µs per round, and per script (by sha: its first
 * comment line) the wall µs per call, median of the rounds. Two builds: both engines in this
 * process, rounds alternated (A, B, B, A...), with the median ratio B/A of the round CPU.
 *
 *   redis-cli -p 7461 monitor > /tmp/mon.txt   (while BullMQ runs against that server)
 *   node bench/bullmq-replay.mjs /tmp/mon.txt [distA] [distB]
 *   REPLAY_ROUNDS=9 node --cpu-prof bench/bullmq-replay.mjs /tmp/mon.txt
 *   REPLAY_INNER=1 node bench/bullmq-replay.mjs /tmp/mon.txt
 *   REPLAY_SINK=resp node bench/bullmq-replay.mjs /tmp/mon.txt A B   (replies through a RespWriter)
 *   REPLAY_PERSIST=everysec node bench/bullmq-replay.mjs /tmp/mon.txt A B   (with the store, below)
 *
 * REPLAY_INNER=1 replays, instead of each EVALSHA, the commands its script called (MONITOR's
 * "[0 lua]" lines) as top-level commands: what the same work costs with no Lua VM and no bridge
 * (a floor for any Lua implementation; the commands run outside a script context).
 *
 * REPLAY_PERSIST=everysec|always: each build with its store open on a fresh data directory
 * (LMDB, the journal, the applier thread); every REPLAY_BATCH commands (default 3000, about an
 * everysec batch's 100 ms of BullMQ at the socket) the batch of changed keys is encoded and
 * appended to the journal as the store's timer would (its `submit()`), inside the timed round
 * (row "(batch)"); the journal applied to LMDB between rounds, outside the round's CPU (its
 * CPU, all threads, printed apart).
 */
import fs from 'node:fs';
import os from 'node:os';
import { createHash } from 'node:crypto';
import { inProcess, argvOf, cpuMicros } from './inproc.mjs';

const [file, ...dists] = process.argv.slice(2);
const ROUNDS = Number(process.env.REPLAY_ROUNDS ?? 7);
const SKIP = new Set(['info', 'hello', 'quit', 'client', 'bzpopmin', 'blpop', 'brpoplpush', 'blmove', 'bzpopmax', 'monitor', 'config', 'ping', 'select', 'script']);

/** The quoted words of one MONITOR line (Redis's sdscatrepr escapes), as latin1 strings. */
function words(line) {
  const out = [];
  let i = line.indexOf('] ') + 2;
  while (i < line.length) {
    if (line[i] !== '"') { i++; continue; }
    let s = '';
    for (i++; line[i] !== '"'; i++) {
      const ch = line[i];
      if (ch !== '\\') { s += ch; continue; }
      const e = line[++i];
      if (e === 'x') { s += String.fromCharCode(parseInt(line.slice(i + 1, i + 3), 16)); i += 2; }
      else s += { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' }[e] ?? e;
    }
    i++;
    out.push(s);
  }
  return out;
}

const INNER = !!process.env.REPLAY_INNER;
const SINK_RESP = process.env.REPLAY_SINK === 'resp';
const scripts = new Map();
const cmds = [];
for (const line of fs.readFileSync(file, 'latin1').split('\n')) {
  if (!line || !line.includes('] "')) continue;
  const lua = line.includes('[0 lua]');
  if (lua && !INNER) continue;
  const w = words(line);
  const name = w[0].toLowerCase();
  if (INNER && !lua && (name === 'eval' || name === 'evalsha')) continue;
  if (name === 'eval') {
    const sha = createHash('sha1').update(Buffer.from(w[1], 'latin1')).digest('hex');
    scripts.set(sha, w[1]);
    w[0] = 'EVALSHA'; w[1] = sha;
  } else if (SKIP.has(name)) continue;
  cmds.push(w);
}
const labels = new Map();
const label = (sha) => labels.get(sha) ?? (labels.set(sha, (scripts.get(sha) ?? sha).replace(/^--\[\[\s*/, '').split('\n')[0].slice(0, 50)), labels.get(sha));

const PERSIST = process.env.REPLAY_PERSIST;
const BATCH = Number(process.env.REPLAY_BATCH ?? 3000);

async function side(dist) {
  const s = await inProcess(dist);
  if (PERSIST) {
    const { Persistence } = await import(`${s.DIST}/store/persistence.js`);
    s.persist = Persistence.open(s.engine, { dir: fs.mkdtempSync(`${os.tmpdir()}/replay-store-`), mode: PERSIST });
    s.persist.finishLoading();
  }
  // Replies are dropped but errors counted and integers kept: a replay that goes wrong shows.
  s.errors = new Map();
  s.lastInt = null;
  s.NULL_SINK = { ...s.NULL_SINK, error(m) { s.errors.set(m, (s.errors.get(m) ?? 0) + 1); }, int(n) { s.lastInt = n; } };
  const run = (w) => s.execute(s.client, argvOf(s.Argv, w), s.NULL_SINK);
  s.flush = () => {};
  s.out = s.NULL_SINK;
  if (SINK_RESP) {
    // The rounds' replies written by the build's RespWriter and flushed after each command (as
    // a -P 1 connection) to a socket that drops them; errors are not counted then.
    const { RespWriter } = await import(`${s.DIST}/resp/writer.js`);
    const w = new RespWriter();
    const sock = { write: () => true, writableLength: 0 };
    s.out = w;
    s.flush = () => w.flush(sock);
  }
  for (const body of scripts.values()) run(['SCRIPT', 'LOAD', body]);
  const argvs = cmds.map((w) => argvOf(s.Argv, w));
  return { s, run, argvs };
}
const sides = [];
for (const d of dists.length ? dists : [undefined]) sides.push(await side(d));

const perScript = sides.map(() => new Map());
function round(k) {
  const { s, run, argvs } = sides[k];
  run(['FLUSHALL']);
  const t = new Map();
  const keys = cmds.map((w) => (w[0].toUpperCase() === 'EVALSHA' ? label(w[1]) : w[0].toUpperCase()));
  const c0 = cpuMicros();
  for (let i = 0; i < argvs.length; i++) {
    const w = cmds[i];
    const t0 = performance.now();
    s.execute(s.client, argvs[i], s.out);
    s.flush();
    const key = keys[i];
    const e = t.get(key) ?? (t.set(key, [0, 0]), t.get(key));
    e[0]++; e[1] += performance.now() - t0;
    if (s.persist !== undefined && (i + 1) % BATCH === 0) batchNow(s, t);
  }
  if (s.persist !== undefined) batchNow(s, t);
  const cpu = cpuMicros() - c0;
  for (const [key, [n, ms]] of t) (perScript[k].get(key) ?? (perScript[k].set(key, []), perScript[k].get(key))).push([n, (ms * 1000) / n]);
  return cpu;
}
/** The store's batch now (its timer's work: changed keys encoded, one journal frame appended). */
function batchNow(s, t) {
  const t0 = performance.now();
  s.persist.submit();
  const e = t.get('(batch)') ?? (t.set('(batch)', [0, 0]), t.get('(batch)'));
  e[0]++; e[1] += performance.now() - t0;
}
/** Between rounds, outside the round's CPU: the journal applied to LMDB, each build in turn (its CPU kept). */
const applyCpu = sides.map(() => []);
async function settle() {
  for (let k = 0; k < sides.length; k++) {
    if (sides[k].s.persist === undefined) continue;
    const c0 = cpuMicros();
    await sides[k].s.persist.idle();
    applyCpu[k].push(cpuMicros() - c0);
  }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
console.log(`# ${cmds.length} commands, ${scripts.size} scripts; ${ROUNDS} rounds; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (let k = 0; k < sides.length; k++) round(k); // warm
await settle();
const cpus = sides.map(() => []);
const ratios = [];
for (let r = 0; r < ROUNDS; r++) {
  const order = sides.length === 2 && r % 2 ? [1, 0] : sides.map((_, k) => k);
  const got = [];
  for (const k of order) got[k] = round(k);
  await settle();
  got.forEach((c, k) => cpus[k].push(c));
  if (sides.length === 2) ratios.push(got[1] / got[0]);
}
for (let k = 0; k < sides.length; k++) {
  const { s, run } = sides[k];
  run(['ZCARD', 'bull:q:completed']);
  console.log(`## errors over all rounds: ${JSON.stringify([...s.errors])}; ZCARD bull:q:completed ${s.lastInt}`);
  console.log(`## ${dists[k] ?? 'dist'}: CPU per round ${med(cpus[k])} µs (${(med(cpus[k]) / cmds.length).toFixed(1)} µs per command)` +
    (applyCpu[k].length ? `; applying its journal to LMDB after it (all threads, ${applyCpu[k].length} rounds) ${med(applyCpu[k])} µs` : ''));
  for (const [key, xs] of perScript[k]) console.log(`  ${key.padEnd(52)} ${String(xs[0][0]).padStart(6)} calls ${med(xs.map((x) => x[1])).toFixed(1).padStart(8)} µs wall each`);
}
// Allocation sampling over rounds of the first build, collected objects included (what feeds
// the young-generation GC): REPLAY_ALLOC=<file> writes the sampling heap profile there.
if (process.env.REPLAY_ALLOC) {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  // REPLAY_ALLOC_LIVE=1: only what is still live at the end (what each scavenge copies and promotes).
  // REPLAY_ALLOC_PROMOTED=1: what outlived a scavenge (promoted), whether or not a mark-compact freed it later.
  const collected = !process.env.REPLAY_ALLOC_LIVE;
  const minor = collected && !process.env.REPLAY_ALLOC_PROMOTED;
  await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMinorGC: minor, includeObjectsCollectedByMajorGC: collected });
  round(0);
  round(0);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  fs.writeFileSync(process.env.REPLAY_ALLOC, JSON.stringify(profile));
}
// Per command, nested calls included (commandstats of a last round of each build): µs each.
if (process.env.REPLAY_CMDSTATS) {
  for (let k = 0; k < sides.length; k++) {
    const { s, run } = sides[k];
    run(['CONFIG', 'RESETSTAT']);
    round(k);
    let text = '';
    const sink = { ...s.NULL_SINK, bulk(v) { text = v.toString('latin1'); }, bulkLatin1(t) { text = t; }, bulkText(t) { text = t; }, verbatim(t) { text = String(t); } };
    s.execute(s.client, argvOf(s.Argv, ['INFO', 'commandstats']), sink);
    const rows = text.split('\n').filter((l) => l.startsWith('cmdstat_')).map((l) => {
      const [name, rest] = l.trim().split(':');
      const o = Object.fromEntries(rest.split(',').map((x) => x.split('=')));
      return [name.slice(8), Number(o.calls), Number(o.usec)];
    }).sort((a, b) => b[2] - a[2]);
    console.log(`## ${dists[k] ?? 'dist'}: commandstats of one round (µs per call, calls)`);
    console.log(rows.map(([n, calls, usec]) => `${n} ${(usec / calls).toFixed(2)} (${calls})`).join(' | '));
  }
}
if (ratios.length) console.log(`B/A CPU per round, median of ${ratios.length}: ${med(ratios).toFixed(3)} (${ratios.map((x) => x.toFixed(2)).join(' ')})`);
process.exit(0);
