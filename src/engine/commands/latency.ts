/**
 * SLOWLOG GET|LEN|RESET|HELP and LATENCY LATEST|HISTORY|RESET|DOCTOR|GRAPH|HISTOGRAM|HELP,
 * over the state of ../slowlog.ts and the per-command histograms INFO latencystats reads.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import type { Client } from '../client.js';
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
  const sl = c.engine.slowlog;
  if (!sl.latencyEnabled && sl.events.size === 0) {
    out.bulkText('I\'m sorry, Dave, I can\'t do that. Latency monitoring is disabled in this Redis instance. You may use "CONFIG SET latency-monitor-threshold <milliseconds>." in order to enable it. If we weren\'t in a deep space mission I\'d suggest to take a look at https://redis.io/topics/latency-monitor.\n');
    return;
  }
  if (sl.events.size === 0) {
    out.bulkText('Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n');
    return;
  }
  // Redis's per-event analysis (latency.c createLatencyReport): spikes, average, mean
  // deviation, period, worst event; then the advice for command latency.
  let text = 'Dave, I have observed latency spikes in this Redis instance. You don\'t mind talking about it, do you Dave?\n\n';
  let i = 1;
  for (const [name, s] of sl.events) {
    const samples = s.samples();
    const avg = samples.reduce((a, [, ms]) => a + ms, 0) / samples.length;
    const mad = samples.reduce((a, [, ms]) => a + Math.abs(ms - avg), 0) / samples.length;
    const period = samples.length > 1 ? Math.round((samples[samples.length - 1][0] - samples[0][0]) / (samples.length - 1)) : 0;
    text += `${i++}. ${name}: ${samples.length} latency spikes (average ${Math.round(avg)}ms, mean deviation ${Math.round(mad)}ms, period ${period} sec). Worst all time event ${s.max}ms.\n`;
  }
  text += '\nI have a few advices for you:\n\n';
  text += '- Check your Redis CPU usage (and the other processes of the host): a busy CPU makes every command slower.\n';
  text += '- Check SLOWLOG GET: the slow commands are logged there with their arguments; commands of O(N) complexity on big values (KEYS, SMEMBERS, LRANGE 0 -1...) are the usual cause.\n';
  out.bulkText(text);
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
