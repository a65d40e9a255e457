#!/usr/bin/env node
/**
 * What persistence adds to BullMQ's events stream (issue 21), in process, two builds in one
 * process (batches alternated A, B, B, A...): XADDs as BullMQ makes them (MAXLEN ~ 10000) into
 * a stream whose records are on disk (`sid` set, so every XADD and trim is logged), and every
 * LOG_EVERY XADDs the store's write of the changes (`streamCodec.writeRecords`, as an everysec
 * batch does) into a writer that copies the records as the journal frame does. Prints CPU ns
 * per XADD (ids given, several per ms as `*` makes them) with the record writes and alone, and
 * checks that both builds wrote the same bytes.
 *
 *   node bench/stream-log-ab.mjs base-dist dist
 *   AB_N=20000 AB_BATCHES=15 LOG_EVERY=400 node bench/stream-log-ab.mjs A B
 *   AB_AUTO=1 ...: ids from `*` as BullMQ sends them (the clock's: the bytes are not compared)
 */
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { inProcess, argvOf, cpuMicros } from './inproc.mjs';

const [distA, distB] = process.argv.slice(2).map((d) => path.resolve(d));
if (!distA || !distB) throw new Error('usage: stream-log-ab.mjs <distA> <distB>');
const N = Number(process.env.AB_N ?? 20000);
const BATCHES = Number(process.env.AB_BATCHES ?? 15);
const EVERY = Number(process.env.LOG_EVERY ?? 400);
const KEY = 'bull:q:events';
const AUTO = process.env.AB_AUTO === '1';
// BullMQ 6.7's four XADDs of a job (MONITOR), ids from `*`.
const EVENTS = [
  (i) => ['event', 'added', 'jobId', String(i), 'name', 'job'],
  (i) => ['event', 'waiting', 'jobId', String(i), 'prev', 'paused'],
  (i) => ['event', 'active', 'jobId', String(i), 'prev', 'waiting'],
  (i) => ['event', 'completed', 'jobId', String(i), 'returnvalue', '{"ok":1}', 'prev', 'active'],
];

const sides = [];
for (const d of [distA, distB]) {
  const s = await inProcess(d);
  const { streamCodec } = await import(`${s.DIST}/store/stream-codec.js`);
  s.codec = streamCodec;
  s.argvs = Array.from({ length: N }, (_, i) => argvOf(s.Argv, ['XADD', KEY, 'MAXLEN', '~', '10000', AUTO ? '*' : `${1795840335000 + (i >> 4)}-${i & 15}`, ...EVENTS[i & 3](i >> 2)]));
  s.run = (w) => s.execute(s.client, argvOf(s.Argv, w), s.NULL_SINK);
  // The journal frame's copy of each record (journal.ts FrameBuilder: op, lengths, key, value).
  const frame = Buffer.allocUnsafe(1 << 24);
  let pos = 0;
  s.hash = createHash('sha1');
  s.writer = {
    put(sub, value) {
      if (pos + sub.length + value.length + 7 > frame.length) { s.hash.update(frame.subarray(0, pos)); pos = 0; }
      frame[pos++] = 3;
      frame.writeUInt16LE(sub.length, pos);
      frame.writeUInt32LE(value.length, pos + 2);
      pos += 6;
      pos += sub.copy(frame, pos);
      pos += value.copy(frame, pos);
    },
    del(sub) {
      if (pos + sub.length + 3 > frame.length) { s.hash.update(frame.subarray(0, pos)); pos = 0; }
      frame[pos++] = 4;
      frame.writeUInt16LE(sub.length, pos);
      pos += 2;
      pos += sub.copy(frame, pos);
    },
    end() { s.hash.update(frame.subarray(0, pos)); pos = 0; },
  };
  sides.push(s);
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** One batch on side k: N XADDs into a fresh logged stream, the changes written every EVERY. */
function batch(k, writer = sides[k].writer) {
  const s = sides[k];
  s.run(['DEL', KEY]);
  s.run(['XADD', KEY, '0-1', 'event', 'x']);
  const v = s.engine.dbs[0].get(KEY).v;
  v.sid = 1;
  v.log = null;
  let write = 0;
  const t0 = cpuMicros();
  for (let i = 0; i < N; i++) {
    s.execute(s.client, s.argvs[i], s.NULL_SINK);
    if ((i + 1) % EVERY === 0) {
      const w0 = cpuMicros();
      s.codec.writeRecords(v, writer, false);
      writer.done?.();
      write += cpuMicros() - w0;
    }
  }
  const all = cpuMicros() - t0;
  writer.end();
  return { all: (all * 1000) / N, write: (write * 1000) / N };
}
batch(0); batch(1);
const res = sides.map(() => []);
for (let j = 0; j < BATCHES; j++) {
  const order = j % 2 ? [1, 0] : [0, 1];
  for (const k of order) res[k].push(batch(k));
}
console.log(`# A=${distA}\n# B=${distB}\n# ${BATCHES} batches of ${N} XADDs, changes written every ${EVERY}, alternated; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| per XADD | A ns | B ns | B/A (median of batch ratios) |');
console.log('|---|---:|---:|---:|');
for (const f of ['all', 'write']) {
  const a = res[0].map((r) => r[f]);
  const b = res[1].map((r) => r[f]);
  console.log(`| ${f === 'all' ? 'XADD + record writes' : 'record writes alone'} | ${med(a).toFixed(0)} | ${med(b).toFixed(0)} | ${med(a.map((x, i) => b[i] / x)).toFixed(3)} |`);
}
// Ids are given (BullMQ's are `*`: several per ms, as here), so both builds must write the same bytes.
const [ha, hb] = sides.map((s) => s.hash.digest('hex').slice(0, 12));
// And the same state: each write's ops folded to each key's last op (put value or del), in key
// order (a build may order one write's ops differently; a write is applied atomically).
const [sa, sb] = sides.map((s, k) => {
  const h = createHash('sha1');
  const ops = new Map();
  batch(k, {
    put(sub, value) { ops.set(sub.toString('hex'), 'p' + value.toString('hex')); },
    del(sub) { ops.set(sub.toString('hex'), 'd'); },
    done() {
      for (const key of [...ops.keys()].sort()) h.update(`${key}=${ops.get(key)};`);
      h.update('|');
      ops.clear();
    },
    end() {},
  });
  return h.digest('hex').slice(0, 12);
});
if (AUTO) console.log('# ids from `*` (the clock): records not compared');
else {
  console.log(`# records written (sha1 of the frames): A ${ha} B ${hb}${ha === hb ? ' (same)' : ' DIFFERENT (the order of ops?)'}`);
  console.log(`# state written (each write's last op per key, sha1): A ${sa} B ${sb}${sa === sb ? ' (same)' : ' DIFFERENT'}`);
}
process.exit(0);
