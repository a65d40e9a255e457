/**
 * MEMORY USAGE | STATS | DOCTOR | MALLOC-STATS | PURGE | HELP (Redis object.c memoryCommand),
 * from the accounting of memory.ts: figures are Redis 7.0's layout applied to our values (see
 * there), not bytes of the V8 heap.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import { formatDouble17g } from '../../resp/ascii.js';
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { container, family, row } from '../command.js';
import { STARTUP, keyCharge, usageCharge } from '../memory.js';

// MEMORY USAGE key [SAMPLES count]
function usageCommand(c: Client, argv: Argv, out: ReplySink): void {
  let samples = 5;
  for (let j = 3; j < argv.count; j++) {
    if (argv.is(j, 'SAMPLES') && j + 1 < argv.count) {
      const n = argv.int64(++j);
      if (n === null) return out.error(E.NOT_INTEGER);
      if (n < 0n) return out.error(E.SYNTAX);
      samples = n === 0n ? Number.MAX_SAFE_INTEGER : Number(n > 1000000000n ? 1000000000n : n);
    } else {
      return out.error(E.SYNTAX);
    }
  }
  const e = c.db.read(argv.key(2), false, false);
  if (e === undefined) return out.nil();
  out.int(keyCharge(e.key) + usageCharge(e.v, samples));
}

function double(out: ReplySink, v: number): void {
  out.double(formatDouble17g(v));
}

// MEMORY STATS
function statsCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const eng = c.engine;
  const used = eng.usedMemory();
  const peak = eng.stats.memPeak;
  const rss = process.memoryUsage.rss();
  const dbs = eng.dbs.filter((db) => db.loadedSize !== 0);
  let keys = 0;
  let overhead = STARTUP + eng.memClients;
  for (const db of dbs) {
    keys += db.loadedSize;
    overhead += eng.dictOverhead(db.loadedSize) + db.loadedSize * 24;
  }
  const dataset = Math.max(0, used - overhead);
  const net = Math.max(1, used - STARTUP);
  const pairs = 27 + dbs.length;
  out.map(pairs);
  const kv = (k: string, v: number) => {
    out.bulkText(k);
    out.int(v);
  };
  kv('peak.allocated', peak);
  kv('total.allocated', used);
  kv('startup.allocated', STARTUP);
  kv('replication.backlog', 0);
  kv('clients.slaves', 0);
  kv('clients.normal', eng.memClients);
  kv('cluster.links', 0);
  kv('aof.buffer', 0);
  kv('lua.caches', 0);
  kv('functions.caches', 0);
  for (const db of dbs) {
    out.bulkText(`db.${db.index}`);
    out.map(3);
    kv('overhead.hashtable.main', eng.dictOverhead(db.loadedSize) + db.loadedSize * 24);
    kv('overhead.hashtable.expires', db.expires === 0 ? 0 : eng.dictOverhead(db.expires) + db.expires * 24);
    kv('overhead.hashtable.slot-to-keys', 0);
  }
  kv('overhead.total', overhead);
  kv('keys.count', keys);
  kv('keys.bytes-per-key', keys === 0 ? 0 : Math.floor(net / keys));
  kv('dataset.bytes', dataset);
  out.bulkText('dataset.percentage');
  double(out, (dataset * 100) / net);
  out.bulkText('peak.percentage');
  double(out, peak === 0 ? 0 : (used * 100) / peak);
  kv('allocator.allocated', used);
  kv('allocator.active', used);
  kv('allocator.resident', rss);
  out.bulkText('allocator-fragmentation.ratio');
  double(out, 1);
  kv('allocator-fragmentation.bytes', 0);
  out.bulkText('allocator-rss.ratio');
  double(out, rss / Math.max(1, used));
  kv('allocator-rss.bytes', rss - used);
  out.bulkText('rss-overhead.ratio');
  double(out, 1);
  kv('rss-overhead.bytes', 0);
  out.bulkText('fragmentation');
  double(out, rss / Math.max(1, used));
  kv('fragmentation.bytes', rss - used);
}

const EMPTY_DOCTOR = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n";

// MEMORY DOCTOR (getMemoryDoctorReport; fragmentation is not ours to judge: V8 owns the heap)
function doctorCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const eng = c.engine;
  const used = eng.usedMemory();
  const peak = eng.stats.memPeak;
  if (used < 1024 * 1024 * 5) return out.verbatim(EMPTY_DOCTOR);
  const lines: string[] = [];
  if (peak / used > 1.5) lines.push(' * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n');
  let big = 0;
  for (const cl of eng.clients.values()) if (cl.transport.outputBytes() > 1024 * 200) big++;
  if (eng.clients.size > 0 && big > 0 && eng.memClients / eng.clients.size > 1024 * 200) {
    lines.push(' * Big client buffers: The clients output buffers are in general too big, over 200KB per client on average. This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n');
  }
  if (lines.length === 0) return out.verbatim("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n");
  out.verbatim("Sam, I detected a few issues in this Redis instance memory implants:\n\n" + lines.join('') +
    "I'm here to keep you safe, Sam. I want to help you.\n");
}

// MEMORY MALLOC-STATS (zmalloc with libc malloc has none)
function mallocStatsCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.bulkText('Stats not supported for the current allocator');
}

// MEMORY PURGE (jemalloc_purge: nothing to ask of V8)
function purgeCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.ok();
}

const HELP = [
  'MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'DOCTOR',
  '    Return memory problems reports.',
  'MALLOC-STATS',
  '    Return internal statistics report from the memory allocator.',
  'PURGE',
  '    Attempt to purge dirty pages for reclamation by the allocator.',
  'STATS',
  '    Return information about the memory usage of the server.',
  'USAGE <key> [SAMPLES <count>]',
  '    Return memory in bytes used by <key> and its value. Nested values are',
  '    sampled up to <count> times (default: 5, 0 means sample all).',
  'HELP',
  '    Prints this help.',
];

// MEMORY HELP
function helpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(HELP.length);
  for (const l of HELP) out.simple(l);
}

/** Never reached: MEMORY's arity (-2) makes the dispatcher resolve a subcommand first. */
function memoryCommand(_c: Client, argv: Argv, out: ReplySink): void {
  out.error(`ERR unknown subcommand '${argv.key(1)}'. Try MEMORY HELP.`);
}

export default family('memory', [], [
  container('memory', -2, 0, [
    //   name            arity  flags                    keys        handler
    row('doctor',          2,   0,                       [0, 0, 0],  doctorCommand),
    row('malloc-stats',    2,   0,                       [0, 0, 0],  mallocStatsCommand),
    row('purge',           2,   0,                       [0, 0, 0],  purgeCommand),
    row('stats',           2,   0,                       [0, 0, 0],  statsCommand),
    row('usage',          -3,   F.READONLY,              [2, 2, 1],  usageCommand),
    row('help',            2,   F.LOADING | F.STALE,     [0, 0, 0],  helpCommand),
  ], memoryCommand),
]);
