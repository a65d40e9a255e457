/**
 * SLOWLOG GET|LEN|RESET|HELP and LATENCY LATEST|HISTORY|RESET|DOCTOR|GRAPH|HISTOGRAM|HELP,
 * over the state of ../slowlog.ts and the per-command histograms INFO latencystats reads.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import fs from 'node:fs';
import type { Client } from '../client.js';
import type { Engine } from '../engine.js';
import { LATENCY_BUCKETS } from '../engine.js';
import { F } from '../flags.js';
import { container, family, row } from '../command.js';
import type { LatencySeries } from '../slowlog.js';
import { help } from './server.js';
import { cstr } from '../../bytes.js';


// ---------------------------------------------------------------- SLOWLOG

// SLOWLOG GET [count]
function slowlogGetCommand(c: Client, argv: Argv, out: ReplySink): void {
  let count = 10;
  if (argv.count === 3) {
    const n = argv.int64(2);
    if (n === null || n < -1n) {
      out.error('ERR count should be greater than or equal to -1');
      return;
    }
    count = n === -1n ? Infinity : Number(n);
  } else if (argv.count > 3) {
    out.error(`ERR unknown subcommand or wrong number of arguments for '${argv.key(1)}'. Try SLOWLOG HELP.`);
    return;
  }
  const entries = c.engine.slowlog.entries;
  const n = Math.min(count, entries.length);
  out.array(n);
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    out.array(6);
    out.int(e.id);
    out.int(e.time);
    out.int(e.usec);
    out.array(e.args.length);
    for (const a of e.args) out.bulk(a);
    out.bulkText(e.addr);
    out.bulkLatin1(e.name);
  }
}

// SLOWLOG LEN
function slowlogLenCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.int(c.engine.slowlog.entries.length);
}

// SLOWLOG RESET
function slowlogResetCommand(c: Client, _argv: Argv, out: ReplySink): void {
  c.engine.slowlog.entries = [];
  out.ok();
}

// SLOWLOG HELP
function slowlogHelpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  help(out, 'SLOWLOG', [
    'GET [<count>]',
    '    Return top <count> entries from the slowlog (default: 10, -1 mean all).',
    '    Entries are made of:',
    '    id, timestamp, time in microseconds, arguments array, client IP and port,',
    '    client name',
    'LEN',
    '    Return the length of the slowlog.',
    'RESET',
    '    Reset the slowlog.',
  ]);
}

// ---------------------------------------------------------------- LATENCY

// LATENCY LATEST
function latencyLatestCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const events = c.engine.slowlog.events;
  out.array(events.size);
  for (const [name, s] of events) {
    const [t, ms] = s.last();
    out.array(4);
    out.bulkText(name);
    out.int(t);
    out.int(ms);
    out.int(s.max);
  }
}

// LATENCY HISTORY event
function latencyHistoryCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = c.engine.slowlog.events.get(argv.str(2));
  const samples = s === undefined ? [] : s.samples();
  out.array(samples.length);
  for (const [t, ms] of samples) {
    out.array(2);
    out.int(t);
    out.int(ms);
  }
}

// LATENCY RESET [event ...]
function latencyResetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const events = c.engine.slowlog.events;
  if (argv.count === 2) {
    const n = events.size;
    events.clear();
    out.int(n);
    return;
  }
  let n = 0;
  for (let i = 2; i < argv.count; i++) if (events.delete(argv.str(i))) n++;
  out.int(n);
}

/** Redis's sparkline.c renderer (SPARKLINE_FILL), for LATENCY GRAPH. */
function sparkline(values: number[], labels: string[], columns: number, rows: number): string {
  const charset = '_-`';
  const fill = '_o#';
  let out = '';
  if (values.length === 0) return out;
  let min = values[0];
  let max = values[0];
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  let relmax = max - min;
  if (relmax === 0) relmax = 1;
  const steps = charset.length * rows;
  for (let off = 0; off < values.length; off += columns) {
    if (off !== 0) out += '\n';
    const len = Math.min(columns, values.length - off);
    let row = 0;
    for (;;) {
      let loop = false;
      const chars: string[] = new Array(len).fill(' ');
      for (let j = 0; j < len; j++) {
        const relval = values[off + j] - min;
        let step = Math.trunc((relval * steps) / relmax);
        if (step < 0) step = 0;
        if (step >= steps) step = steps - 1;
        if (row < rows) {
          const idx = step - (rows - row - 1) * charset.length;
          loop = true;
          if (idx >= 0 && idx < charset.length) chars[j] = fill[idx];
          else if (idx >= charset.length) chars[j] = '|';
        } else {
          if (row - rows < 1) {
            loop = true;
            break;
          }
          const label = labels[off + j];
          const k = row - rows - 1;
          if (label.length > k) {
            loop = true;
            chars[j] = label[k];
          }
        }
      }
      if (!loop) break;
      row++;
      out += chars.join('') + '\n';
    }
  }
  return out;
}

function graphText(event: string, s: LatencySeries): string {
  const now = Math.floor(Date.now() / 1000);
  const samples = s.samples();
  const values: number[] = [];
  const labels: string[] = [];
  let min = 0;
  let max = 0;
  for (const [t, ms] of samples) {
    if (values.length === 0) min = max = ms;
    else {
      if (ms > max) max = ms;
      if (ms < min) min = ms;
    }
    const el = now - t;
    labels.push(el < 60 ? `${el}s` : el < 3600 ? `${Math.floor(el / 60)}m` : el < 86400 ? `${Math.floor(el / 3600)}h` : `${Math.floor(el / 86400)}d`);
    values.push(ms);
  }
  return `${event} - high ${max} ms, low ${min} ms (all time high ${s.max} ms)\n${'-'.repeat(80)}\n` + sparkline(values, labels, 80, 4);
}

// LATENCY GRAPH event
function latencyGraphCommand(c: Client, argv: Argv, out: ReplySink): void {
  const event = argv.str(2);
  const s = c.engine.slowlog.events.get(event);
  if (s === undefined) {
    // Redis prints the name as a C string: up to its first NUL byte.
    out.error(`ERR No samples available for event '${cstr(event)}'`);
    return;
  }
  out.bulkText(graphText(event, s));
}

// LATENCY DOCTOR
function latencyDoctorCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.bulkText(latencyReport(c.engine));
}

/** Bytes of transparent huge pages the process uses (Redis's THPGetAnonHugePagesSize). */
function anonHugePages(): number {
  for (const f of ['/proc/self/smaps_rollup', '/proc/self/smaps']) {
    let text: string;
    try {
      text = fs.readFileSync(f, 'latin1');
    } catch {
      continue;
    }
    let kb = 0;
    for (const m of text.matchAll(/^AnonHugePages:\s+(\d+) kB/gm)) kb += Number(m[1]);
    return kb * 1024;
  }
  return 0;
}

const ADVICE = {
  slowlogInspect: '- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n',
  scheduler: '- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n'
    + '  1) Lower the system load.\n'
    + '  2) Use a computer / VM just for Redis if you are running other software in the same system.\n'
    + '  3) Check if you have a "noisy neighbour" problem.\n'
    + "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n"
    + '  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n',
  localDisk: '- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n',
  ssd: '- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting (resulting in smaller memory usage). With extremely high write load SSD disks can be a good option. However Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n',
  dataWriteback: '- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to data=ordered, however this mode of operation provides less guarantees, and sometimes it can happen that after a hard crash the AOF file will have a half-written command at the end and will require to be repaired before Redis restarts.\n',
  diskContention: '- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n',
  noAppendfsync: "- Assuming from the point of view of data safety this is viable in your environment, you could try to enable the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed while there is a child rewriting the AOF file or producing an RDB file (the moment where there is high disk contention).\n",
  relaxFsync: "- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n",
  writeLoad: '- Latency during the AOF atomic rename operation or when the final difference is flushed to the AOF file at the end of the rewrite, sometimes is caused by very high write load, causing the AOF buffer to get very large. If possible try to send less commands to accomplish the same work, or use Lua scripts to group multiple operations into a single EVALSHA call.\n',
  hz: "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n",
  largeObjects: '- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n',
  massEviction: "- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n",
  thp: "- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n",
};

/**
 * Redis 7.0's createLatencyReport (latency.c), word for word: each event's figures
 * (analyzeLatencyForEvent: integer average and mean deviation, period from the oldest sample),
 * the advice its event name calls for, and the transparent-huge-pages check of this process.
 * Events come in the order they were first seen (Redis's: its dict's hash order). There is
 * no fork here, so no "fork" event and no fork-rate line.
 */
export function latencyReport(eng: Engine): string {
  const sl = eng.slowlog;
  if (sl.events.size === 0 && !sl.latencyEnabled) {
    return 'I\'m sorry, Dave, I can\'t do that. Latency monitoring is disabled in this Redis instance. You may use "CONFIG SET latency-monitor-threshold <milliseconds>." in order to enable it. If we weren\'t in a deep space mission I\'d suggest to take a look at https://redis.io/topics/latency-monitor.\n';
  }
  const a = new Set<keyof typeof ADVICE | 'slowlogEnabled' | 'slowlogTuning'>();
  let advices = 0;
  const add = (...names: (keyof typeof ADVICE | 'slowlogEnabled' | 'slowlogTuning')[]) => {
    for (const n of names) a.add(n);
    advices += names.length;
  };
  const slower = eng.cfgInt('slowlog-log-slower-than');
  const threshold = eng.cfgInt('latency-monitor-threshold');
  let report = '';
  let eventnum = 0;
  const now = Math.floor(Date.now() / 1000);
  for (const [event, ts] of sl.events) {
    eventnum++;
    if (eventnum === 1) report += "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n";
    const samples = ts.samples();
    let sum = 0;
    let oldest = 0;
    for (const [t, ms] of samples) {
      sum += ms;
      if (oldest === 0 || t < oldest) oldest = t;
    }
    const n = samples.length;
    const avg = n > 0 ? Math.floor(sum / n) : 0;
    let period = n > 0 ? now - oldest : 0;
    if (n > 0 && period === 0) period = 1;
    let dev = 0;
    for (const [, ms] of samples) dev += Math.abs(avg - ms);
    const mad = n > 0 ? Math.floor(dev / n) : 0;
    report += `${eventnum}. ${event}: ${n} latency spikes (average ${avg}ms, mean deviation ${mad}ms, period ${(period / n).toFixed(2)} sec). Worst all time event ${ts.max}ms.`;
    const e = event.toLowerCase();
    if (e === 'command') {
      if (slower < 0) add('slowlogEnabled');
      else if (Math.trunc(slower / 1000) > threshold) add('slowlogTuning');
      add('slowlogInspect', 'largeObjects');
    } else if (e === 'fast-command') add('scheduler');
    else if (e === 'aof-write-pending-fsync') add('localDisk', 'diskContention', 'ssd', 'dataWriteback');
    else if (e === 'aof-write-active-child') add('noAppendfsync', 'dataWriteback', 'ssd');
    else if (e === 'aof-write-alone') add('localDisk', 'dataWriteback', 'ssd');
    else if (e === 'aof-fsync-always') add('relaxFsync');
    else if (e === 'aof-fstat' || e === 'rdb-unlink-temp-file') add('diskContention', 'localDisk');
    else if (e === 'aof-rewrite-diff-write' || e === 'aof-rename') add('writeLoad', 'dataWriteback', 'ssd', 'localDisk');
    else if (e === 'expire-cycle') add('hz', 'largeObjects');
    else if (e === 'eviction-del') add('largeObjects');
    else if (e === 'eviction-cycle') add('massEviction');
    report += '\n';
  }
  if (anonHugePages() > 0) add('thp');
  if (eventnum === 0 && advices === 0) {
    return report + 'Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n';
  }
  if (eventnum > 0 && advices === 0) {
    return report + "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n";
  }
  report += '\nI have a few advices for you:\n\n';
  if (a.has('slowlogEnabled')) report += `- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than ${threshold * 1000}'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n`;
  if (a.has('slowlogTuning')) report += `- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than ${threshold * 1000}'.\n`;
  if (a.has('slowlogInspect')) report += ADVICE.slowlogInspect;
  if (a.has('scheduler')) report += ADVICE.scheduler;
  if (a.has('localDisk')) report += ADVICE.localDisk;
  if (a.has('ssd')) report += ADVICE.ssd;
  if (a.has('dataWriteback')) report += ADVICE.dataWriteback;
  if (a.has('diskContention')) report += ADVICE.diskContention;
  if (a.has('noAppendfsync')) report += ADVICE.noAppendfsync;
  if (a.has('relaxFsync') && eng.cfg('appendfsync') === 'always') report += ADVICE.relaxFsync;
  if (a.has('writeLoad')) report += ADVICE.writeLoad;
  if (a.has('hz') && eng.cfgInt('hz') < 100) report += ADVICE.hz;
  if (a.has('largeObjects')) report += ADVICE.largeObjects;
  if (a.has('massEviction')) report += ADVICE.massEviction;
  if (a.has('thp')) report += ADVICE.thp;
  return report;
}

/** hdr_histogram's reporting value (µs) of the log bucket 1024·2^k ns, with 2 significant figures. */
function bucketLabel(k: number): number {
  return Math.floor((1032 * 2 ** k - 1) / 1000);
}

// LATENCY HISTOGRAM [command ...]
function latencyHistogramCommand(c: Client, argv: Argv, out: ReplySink): void {
  const eng = c.engine;
  const all = eng.registry.all;
  const ids: number[] = [];
  if (argv.count === 2) {
    for (let i = 0; i < all.length; i++) if (eng.stats.perCommand[i].hist !== null) ids.push(i);
  } else {
    const seen = new Set<number>();
    for (let i = 2; i < argv.count; i++) {
      const name = argv.key(i).toLowerCase();
      const def = all.find((d) => d.name === name);
      if (def === undefined || seen.has(def.id) || eng.stats.perCommand[def.id].hist === null) continue;
      seen.add(def.id);
      ids.push(def.id);
    }
  }
  // A map in Redis (RESP3); RESP2 shows it flat.
  out.array(ids.length * 2);
  for (const id of ids) {
    const st = eng.stats.perCommand[id];
    const hist = st.hist!;
    const levels: [number, number][] = [];
    let total = 0;
    for (let b = 0; b < LATENCY_BUCKETS; b++) total += hist[b];
    // Cumulative counts at each power-of-two level, listed where they grow.
    let cum = 0;
    let b = 0;
    let prev = 0;
    for (let k = 0; cum < total && k < 64; k++) {
      for (; b <= 4 * k && b < LATENCY_BUCKETS; b++) cum += hist[b];
      if (cum !== prev) levels.push([bucketLabel(k), cum]);
      prev = cum;
    }
    out.bulkText(all[id].name);
    out.array(4);
    out.bulkText('calls');
    out.int(st.calls);
    out.bulkText('histogram_usec');
    out.array(levels.length * 2);
    for (const [label, n] of levels) {
      out.int(label);
      out.int(n);
    }
  }
}

// LATENCY HELP
function latencyHelpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  help(out, 'LATENCY', [
    'DOCTOR',
    '    Return a human readable latency analysis report.',
    'GRAPH <event>',
    '    Return an ASCII latency graph for the <event> class.',
    'HISTORY <event>',
    '    Return time-latency samples for the <event> class.',
    'LATEST',
    '    Return the latest latency samples for all events.',
    'RESET [<event> ...]',
    '    Reset latency data of one or more <event> classes.',
    '    (default: reset all data for all event classes)',
    'HISTOGRAM [COMMAND ...]',
    '    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.',
    '    If no commands are specified then all histograms are replied.',
  ]);
}

function noSubcommand(_c: Client, _argv: Argv, _out: ReplySink): void {}

const ALS = F.ADMIN | F.LOADING | F.STALE;
const ANLS = ALS | F.NOSCRIPT;
const LS = F.LOADING | F.STALE;

export default family('latency', [], [
  container('slowlog', -2, 0, [
    row('get',        -2, ALS,  [0, 0, 0], slowlogGetCommand),
    row('len',         2, ALS,  [0, 0, 0], slowlogLenCommand),
    row('reset',       2, ALS,  [0, 0, 0], slowlogResetCommand),
    row('help',        2, LS,   [0, 0, 0], slowlogHelpCommand),
  ], noSubcommand),
  container('latency', -2, 0, [
    row('latest',      2, ANLS, [0, 0, 0], latencyLatestCommand),
    row('history',     3, ANLS, [0, 0, 0], latencyHistoryCommand),
    row('reset',      -2, ANLS, [0, 0, 0], latencyResetCommand),
    row('doctor',      2, ANLS, [0, 0, 0], latencyDoctorCommand),
    row('graph',       3, ANLS, [0, 0, 0], latencyGraphCommand),
    row('histogram',  -2, ANLS, [0, 0, 0], latencyHistogramCommand),
    row('help',        2, LS,   [0, 0, 0], latencyHelpCommand),
  ], noSubcommand),
]);
