#!/usr/bin/env node
/**
 * The reply writer under batched flushes (connection.ts deferFlush: at -P 1 with many clients,
 * every connection writes one reply into the shared slab, then each flushes in the check
 * phase): C writers each write one bulk reply of D bytes in turn, then each flushes to a sink
 * that drops the bytes. Both builds' writers in this one process, rounds alternating; prints
 * the median ns per reply and scavenges are visible with --trace-gc.
 *
 *   node bench/writer-batch-ab.mjs base-dist dist [clients=50] [bytes=100] [batches=20000] [rounds=9]
 *   (WBAB_BUF=1: Buffer values through bulk())
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dA = 'base-dist', dB = 'dist', clients = '50', bytes = '100', batches = '20000', rounds = '9'] = process.argv.slice(2);
const C = Number(clients);
const D = Number(bytes);
const value = Buffer.alloc(D, 120).toString('latin1');
/** WBAB_BUF=1: the value as a Buffer (bulk(), e.g. a DUMP payload) instead of a latin1 string. */
const asBuf = process.env.WBAB_BUF === '1';
const bvalue = Buffer.alloc(D, 120);
const sink = { writableLength: 0, write() { return true; }, cork() {}, uncork() {} };

async function load(dir) {
  const { RespWriter } = await import(pathToFileURL(path.resolve(dir, 'resp/writer.js')).href);
  const ws = Array.from({ length: C }, () => new RespWriter());
  return () => {
    if (asBuf) for (let i = 0; i < C; i++) ws[i].bulk(bvalue);
    else for (let i = 0; i < C; i++) ws[i].bulkLatin1(value);
    for (let i = 0; i < C; i++) ws[i].flush(sink);
  };
}
const runs = { A: await load(dA), B: await load(dB) };
const res = { A: [], B: [] };
for (let r = 0; r < Number(rounds); r++) {
  for (const k of r % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
    const f = runs[k];
    const t = process.cpuUsage();
    for (let i = 0; i < Number(batches); i++) f();
    const u = process.cpuUsage(t);
    res[k].push(((u.user + u.system) * 1000) / (Number(batches) * C));
  }
}
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(`${C} writers, ${D}-byte bulk each, then each flushes: ns per reply (median of ${rounds})`);
console.log(`A ${dA}: ${med(res.A).toFixed(1)}  B ${dB}: ${med(res.B).toFixed(1)}  B/A ${(med(res.B) / med(res.A)).toFixed(3)}`);
