#!/usr/bin/env node
/**
 * Micro benchmarks (tinybench) of the RESP hot paths, on the compiled code in dist/:
 *  - parser: commands/s parsed from a pipelined buffer of SET commands and of GET commands,
 *    in one chunk (zero copy) and split into 1460-byte packets (the copy path);
 *  - writer: replies/s encoded and flushed for +OK, 100-byte bulks, integers and arrays.
 *
 *   npm run bench:micro
 *   BENCH_TIME=2000 npm run bench:micro      # ms per task (default 1000)
 */
import { Bench } from 'tinybench';
import { Parse, RespParser } from '../dist/resp/parser.js';
import { Argv } from '../dist/resp/argv.js';
import { RespWriter } from '../dist/resp/writer.js';

const TIME = Number(process.env.BENCH_TIME ?? 1000);
const N = 1000; // commands or replies per task iteration

function encode(args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = Buffer.isBuffer(a) ? a : Buffer.from(a);
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

function pipeline(make) {
  return Buffer.concat(Array.from({ length: N }, (_, i) => encode(make(i))));
}

function packets(buf, size) {
  const out = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

const setBuf = pipeline((i) => ['SET', `key:${i % 1000}`, 'v'.repeat(32)]);
const getBuf = pipeline((i) => ['GET', `key:${i % 1000}`]);
const setPackets = packets(setBuf, 1460);

const argv = new Argv();
let sink = 0;

/** Parse every command of the chunks; touch the key so the work is not optimised away. */
function parseAll(chunks) {
  const p = new RespParser();
  let n = 0;
  for (const c of chunks) {
    p.push(c, argv);
    while (p.next(argv) === Parse.OK) {
      sink += argv.len(1);
      n++;
    }
  }
  if (n !== N) throw new Error(`parsed ${n} commands, expected ${N}`);
}

/** A socket stand-in that takes everything synchronously (the common case). */
const fakeSocket = {
  bytes: 0,
  write(b) { this.bytes += b.length; return true; },
  cork() {},
  uncork() {},
  writableLength: 0,
};

const writer = new RespWriter();
const value100 = Buffer.alloc(100, 0x61);

function writeReplies(fn) {
  // Flush every 50 replies, like a connection answering a pipelined read.
  for (let i = 0; i < N; i++) {
    fn(i);
    if (i % 50 === 49) writer.flush(fakeSocket);
  }
  writer.flush(fakeSocket);
}

const bench = new Bench({ time: TIME, warmupTime: 200 });
bench
  .add('parser: SET key value (32 B), one chunk', () => parseAll([setBuf]))
  .add('parser: SET key value (32 B), 1460-byte packets', () => parseAll(setPackets))
  .add('parser: GET key, one chunk', () => parseAll([getBuf]))
  .add('writer: +OK', () => writeReplies(() => writer.ok()))
  .add('writer: bulk 100 B', () => writeReplies(() => writer.bulk(value100)))
  .add('writer: integer (small, cached)', () => writeReplies((i) => writer.int(i)))
  .add('writer: integer (large)', () => writeReplies((i) => writer.int(1234567890123 + i)))
  .add('writer: array of 10 bulks (100 B), per array', () => writeReplies(() => {
    writer.array(10);
    for (let k = 0; k < 10; k++) writer.bulk(value100);
  }));

await bench.run();

const rows = bench.tasks.map((t) => {
  const r = t.result;
  const perSec = (r.throughput?.mean ?? 1000 / r.latency.mean) * N;
  return {
    task: t.name,
    'items/s': Math.round(perSec).toLocaleString('en-US'),
    'ns/item': (1e9 / perSec).toFixed(1),
    'rme %': r.latency.rme.toFixed(2),
    samples: r.latency.samplesCount,
  };
});
console.log(`# ${new Date().toISOString()}  node ${process.version}  ${N} commands/replies per iteration, ${TIME} ms per task`);
console.table(rows);
if (sink < 0) console.log(sink);
