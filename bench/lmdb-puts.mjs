#!/usr/bin/env node
/**
 * What a random record update costs LMDB itself (lmdb-js, the store's options), by the size of
 * the database and the number of puts per transaction: N records keyed as a sorted set's
 * member records ([sid u48][m + 12 digits] -> f64), then R transactions of B puts of random
 * existing keys (synchronous, on this thread), each followed by LMDB's flush. Prints the CPU
 * (all threads) per put inside the transaction and for its commit. SORT=1 sorts each
 * transaction's keys first.
 *
 *   N=1000000 B=1600 node bench/lmdb-puts.mjs     # one everysec batch of the old 100 ms commits
 *   N=1000000 B=16000 node bench/lmdb-puts.mjs    # one second of them in one transaction
 */
import { open } from 'lmdb';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const N = Number(process.env.N ?? 1000000);
const B = Number(process.env.B ?? 1600);
const R = Number(process.env.R ?? Math.ceil(32000 / B));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-lmdb-puts-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const root = open({ path: dir, maxDbs: 8, overlappingSync: true, eventTurnBatching: false, encoding: 'binary', keyEncoding: 'binary' });
const items = root.openDB('items', { encoding: 'binary', keyEncoding: 'binary' });
const key = (i) => {
  const k = Buffer.alloc(19);
  k.writeUIntBE(7, 0, 6);
  k.write('m' + String(i).padStart(12, '0'), 6, 'latin1');
  return k;
};
const val = (x) => {
  const v = Buffer.alloc(8);
  v.writeDoubleBE(x);
  return v;
};
for (let i = 0; i < N; i += 10000) await root.batch(() => { for (let j = i; j < Math.min(N, i + 10000); j++) items.put(key(j), val(j)); });
await root.flushed;
const keys = [];
for (let r = 0; r < R * B; r++) keys.push(key(Math.floor(Math.random() * N)));
if (process.env.SORT) {
  for (let r = 0; r < R; r++) {
    const part = keys.slice(r * B, (r + 1) * B).sort(Buffer.compare);
    for (let j = 0; j < B; j++) keys[r * B + j] = part[j];
  }
}
const v = val(1.5);
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
let inTxn = 0;
let commit = 0;
for (let r = 0; r < R; r++) {
  const c0 = cpu();
  let c1 = 0;
  root.transactionSync(() => {
    for (let j = 0; j < B; j++) items.putSync(keys[r * B + j], v);
    c1 = cpu();
  });
  const c2 = cpu();
  inTxn += c1 - c0;
  commit += c2 - c1;
  await root.flushed;
}
const puts = R * B;
console.log(`N ${N}, ${B} puts per transaction, ${R} transactions${process.env.SORT ? ', keys sorted' : ''}: CPU us per put in the transaction ${(inTxn / puts).toFixed(2)}, for the commit ${(commit / puts).toFixed(2)}; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
await root.close();
