/**
 * Server commands: DBSIZE FLUSHDB FLUSHALL INFO TIME CONFIG MONITOR LASTSAVE SAVE BGSAVE
 * SHUTDOWN DEBUG ROLE.
 *
 * INFO follows Redis 7.0's genRedisInfoString: the same section names, order, "# Section"
 * headers, field names and CRLF line ends, so tools that parse INFO (redis-cli --stat,
 * exporters, client libraries) work unchanged. Fields we cannot measure the way Redis does
 * (memory, CPU) are the nearest Node.js figures; fields of subsystems we do not have
 * (replication, forks, AOF rewrite) report the idle values Redis itself reports without them.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Argv } from '../../resp/argv.js';
import { type ReplySink, replyStats } from '../../resp/reply-sink.js';
import { allCachedSockets } from '../../rdb/migrate-exchange.js';
import { syncStats } from './dump.js';
import { RespWriter } from '../../resp/writer.js';
import { E, subcommandSyntax } from '../../resp/errors.js';
import { parseInt64 } from '../../resp/ascii.js';
import { OPTIONS, checkValue, lookupOption, type OptionSpec } from '../../config.js';
import { ALIASES } from '../../redis-options.js';
import { rewriteConfigFile } from '../../config-file.js';
import type { Client } from '../client.js';
import type { Engine } from '../engine.js';
import { LATENCY_BUCKETS } from '../engine.js';
import type { Db, Entry } from '../db.js';
import { F } from '../flags.js';
import { container, family, row } from '../command.js';
import { globMatch } from '../glob.js';
import { Kind } from '../pubsub.js';
import { REDIS_VERSION } from './connection.js';
import { STARTUP } from '../memory.js';
import { datasetDigest, valueDigest } from '../digest.js';
import { timeoutMsArg } from './client.js';
import { cstr } from '../../bytes.js';

// ---------------------------------------------------------------- helpers


/** A help reply: one status line per text line, as Redis's addReplyHelp. */
export function help(out: ReplySink, cmd: string, lines: readonly string[]): void {
  out.array(lines.length + 3);
  out.simple(`${cmd} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:`);
  for (const l of lines) out.simple(l);
  out.simple('HELP');
  out.simple('    Prints this help.');
}

/** INFO memory: used_memory_overhead .. used_memory_dataset_perc (memory.ts's model). */
function memoryOverheadLines(eng: Engine, used: number): string[] {
  let overhead = STARTUP + eng.memClients;
  for (const db of eng.dbs) overhead += eng.dictOverhead(db.loadedSize) + db.loadedSize * 24;
  const dataset = Math.max(0, used - overhead);
  const net = used - STARTUP;
  return [
    `used_memory_overhead:${overhead}`,
    `used_memory_startup:${STARTUP}`,
    `used_memory_dataset:${dataset}`,
    `used_memory_dataset_perc:${net > 0 ? ((dataset * 100) / net).toFixed(2) : '0.00'}%`,
    `allocator_allocated:${used}`,
    `allocator_active:${used}`,
    `allocator_resident:${used}`,
  ];
}

/** INFO memory: the lines after maxmemory_policy that Redis 7.0 prints before mem_allocator. */
function memoryTailLines(eng: Engine): string[] {
  return [
    `mem_not_counted_for_evict:0`,
    'mem_replication_backlog:0',
    'mem_total_replication_buffers:0',
    'mem_clients_slaves:0',
    `mem_clients_normal:${eng.memClients}`,
    'mem_cluster_links:0',
    'mem_aof_buffer:0',
  ];
}

/** Redis's bytesToHuman. */
export function bytesToHuman(n: number): string {
  if (n < 1024) return `${n}B`;
  const units = ['K', 'M', 'G', 'T', 'P'];
  let d = n / 1024;
  for (let i = 0; i < units.length; i++) {
    if (d < 1024 || i === units.length - 1) return `${d.toFixed(2)}${units[i]}`;
    d /= 1024;
  }
  return `${n}B`;
}

/**
 * Wall-clock time with microseconds: [seconds, microseconds]. The milliseconds are Date.now()'s
 * (so the clock follows system time adjustments, as gettimeofday); the sub-millisecond digits
 * come from the monotonic clock.
 */
function nowMicros(): [number, number] {
  const ms = Date.now();
  const sub = Math.floor((performance.now() % 1) * 1000);
  return [Math.floor(ms / 1000), (ms % 1000) * 1000 + sub];
}

/** Seconds.microseconds as Redis prints CPU times ("%ld.%06ld"). */
function cpuText(us: number): string {
  return `${Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`;
}

/** Record a completed save (SAVE, BGSAVE; the persistence layer will do the real work here). */
function markSaved(eng: Engine): void {
  eng.lastSave = Math.floor(Date.now() / 1000);
  eng.dirty = 0;
  eng.stats.rdbSaves++;
}

// ---------------------------------------------------------------- keyspace

// DBSIZE
function dbsizeCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.int(c.db.size);
}

/** Redis's getFlushCommandFlags: [ASYNC|SYNC] or a syntax error. Both run synchronously here. */
function flushArgsOk(argv: Argv): boolean {
  return argv.count === 1 || (argv.count === 2 && (argv.is(1, 'ASYNC') || argv.is(1, 'SYNC')));
}

// FLUSHDB [ASYNC|SYNC]
function flushdbCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (!flushArgsOk(argv)) {
    out.error(E.SYNTAX);
    return;
  }
  c.db.flush();
  out.ok();
}

// FLUSHALL [ASYNC|SYNC]
function flushallCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (!flushArgsOk(argv)) {
    out.error(E.SYNTAX);
    return;
  }
  for (const db of c.engine.dbs) db.flush();
  out.ok();
}

// ---------------------------------------------------------------- INFO

/** Section names in Redis's output order; `default` lists those INFO shows without arguments. */
const SECTIONS = [
  'server', 'clients', 'memory', 'persistence', 'stats', 'replication', 'cpu', 'modules',
  'commandstats', 'errorstats', 'latencystats', 'cluster', 'keyspace',
] as const;
const DEFAULT_SECTIONS = new Set<string>([
  'server', 'clients', 'memory', 'persistence', 'stats', 'replication', 'cpu', 'modules',
  'errorstats', 'cluster', 'keyspace',
]);

/**
 * Extra lines other command families contribute to a section (pub/sub counts in "stats",
 * blocked keys...): each hook returns "name:value" lines appended to its section.
 */
export const infoHooks: Record<string, ((eng: Engine) => string[])[]> = {};


function percentile(hist: Uint32Array, total: number, p: number): number {
  const want = Math.max(1, Math.ceil((total * p) / 100));
  let seen = 0;
  for (let b = 0; b < LATENCY_BUCKETS; b++) {
    seen += hist[b];
    if (seen >= want) return 2 ** (b / 4);
  }
  return 2 ** ((LATENCY_BUCKETS - 1) / 4);
}

/** avg_ttl of a db: the mean remaining TTL (ms) of its volatile keys, sampled on big dbs. */
function avgTtl(db: Db, now: number): number {
  if (db.expires === 0) return 0;
  let sum = 0;
  let n = 0;
  let visited = 0;
  for (const e of db.map.values()) {
    if (++visited > 10000) break;
    if (e.exp > now) {
      sum += e.exp - now;
      n++;
    }
  }
  return n === 0 ? 0 : Math.round(sum / n);
}

function sectionLines(eng: Engine, name: string): string[] {
  const st = eng.stats;
  const L: string[] = [];
  switch (name) {
    case 'server': {
      const [sec, usec] = nowMicros();
      const uptime = Math.floor((Date.now() - eng.startTime) / 1000);
      L.push(
        `redis_version:${REDIS_VERSION}`,
        'redis_git_sha1:00000000',
        'redis_git_dirty:0',
        'redis_mode:standalone',
        `os:${os.type()} ${os.release()} ${os.machine()}`,
        `arch_bits:${process.arch.endsWith('64') ? 64 : 32}`,
        'monotonic_clock:POSIX clock_gettime',
        `multiplexing_api:${process.platform === 'linux' ? 'epoll' : process.platform === 'win32' ? 'iocp' : 'kqueue'}`,
        `process_id:${process.pid}`,
        'process_supervised:no',
        `run_id:${eng.runId}`,
        `tcp_port:${eng.tcpPort}`,
        `server_time_usec:${sec}${String(usec).padStart(6, '0')}`,
        `uptime_in_seconds:${uptime}`,
        `uptime_in_days:${Math.floor(uptime / 86400)}`,
        `hz:${eng.cfgInt('hz')}`,
        `configured_hz:${eng.cfgInt('hz')}`,
        `lru_clock:${eng.lruClock & 0xffffff}`,
        `executable:${process.argv[1] ?? ''}`,
        `config_file:${eng.config.file ?? ''}`,
        'io_threads_active:0',
      );
      break;
    }
    case 'clients': {
      let maxIn = 0;
      let maxOut = 0;
      for (const c of eng.clients.values()) {
        const i = c.transport.inputBytes();
        const o = c.transport.outputBytes();
        if (i > maxIn) maxIn = i;
        if (o > maxOut) maxOut = o;
      }
      L.push(
        `connected_clients:${eng.clients.size}`,
        'cluster_connections:0',
        `maxclients:${eng.cfgInt('maxclients')}`,
        `client_recent_max_input_buffer:${maxIn}`,
        `client_recent_max_output_buffer:${maxOut}`,
        `blocked_clients:${eng.blocking.count}`,
        // Ours: bytes queued for pub/sub and MONITOR readers in total, and its limit.
        `pubsub_output_queued:${eng.outputs.total}`,
        `pubsub_output_total_limit:${eng.cfgInt('pubsub-output-total-limit')}`,
        `tracking_clients:${eng.tracking.clients}`,
        'clients_in_timeout_table:0',
      );
      break;
    }
    case 'memory': {
      const used = eng.usedMemory();
      const rss = process.memoryUsage.rss();
      const peak = st.memPeak;
      const total = os.totalmem();
      const maxmemory = eng.cfgInt('maxmemory');
      L.push(
        `used_memory:${used}`,
        `used_memory_human:${bytesToHuman(used)}`,
        `used_memory_rss:${rss}`,
        `used_memory_rss_human:${bytesToHuman(rss)}`,
        `used_memory_peak:${peak}`,
        `used_memory_peak_human:${bytesToHuman(peak)}`,
        `used_memory_peak_perc:${peak > 0 ? ((used * 100) / peak).toFixed(2) : '0.00'}%`,
        ...memoryOverheadLines(eng, used),
        `total_system_memory:${total}`,
        `total_system_memory_human:${bytesToHuman(total)}`,
        `maxmemory:${maxmemory}`,
        `maxmemory_human:${bytesToHuman(maxmemory)}`,
        `maxmemory_policy:${eng.cfg('maxmemory-policy')}`,
        `mem_fragmentation_ratio:${used > 0 ? (rss / used).toFixed(2) : '0.00'}`,
        `mem_fragmentation_bytes:${rss - used}`,
        ...memoryTailLines(eng),
        'mem_allocator:libc',
        'lazyfree_pending_objects:0',
        'lazyfreed_objects:0',
      );
      break;
    }
    case 'persistence':
      // The store's own lines (mode, last commit, errors, records written) when it is installed.
      // Ours, last: keys a SYNC snapshot wrote ahead of its walk because a command was about to change them.
      if (eng.persistence !== null) {
        L.push(...eng.persistence.info(), `rdb_snapshot_keys_preserved:${syncStats.preserved}`, `rdb_snapshot_completed_at_once:${syncStats.completedAtOnce}`);
        break;
      }
      L.push(
        'loading:0',
        'async_loading:0',
        `rdb_changes_since_last_save:${eng.dirty}`,
        'rdb_bgsave_in_progress:0',
        `rdb_last_save_time:${eng.lastSave}`,
        'rdb_last_bgsave_status:ok',
        'rdb_last_bgsave_time_sec:-1',
        'rdb_current_bgsave_time_sec:-1',
        `rdb_saves:${st.rdbSaves}`,
        'aof_enabled:0',
        'aof_rewrite_in_progress:0',
        'aof_rewrite_scheduled:0',
        'aof_last_rewrite_time_sec:-1',
        'aof_current_rewrite_time_sec:-1',
        'aof_last_bgrewrite_status:ok',
        'aof_rewrites:0',
        'aof_last_write_status:ok',
      );
      break;
    case 'stats': {
      // Redis 7.0's fields and order; subsystems we do not have (replication, defragmentation,
      // I/O threads, reply-buffer resizing) report the values Redis reports without them.
      const [inKbps, outKbps] = eng.netKbps();
      const ps = eng.pubsub;
      L.push(
        `total_connections_received:${st.totalConnections}`,
        `total_commands_processed:${st.totalCommands}`,
        `instantaneous_ops_per_sec:${eng.opsPerSec()}`,
        `total_net_input_bytes:${st.netInputBytes}`,
        `total_net_output_bytes:${RespWriter.totalOut - st.netOutputBase}`,
        'total_net_repl_input_bytes:0',
        'total_net_repl_output_bytes:0',
        `instantaneous_input_kbps:${inKbps.toFixed(2)}`,
        `instantaneous_output_kbps:${outKbps.toFixed(2)}`,
        'instantaneous_input_repl_kbps:0.00',
        'instantaneous_output_repl_kbps:0.00',
        `rejected_connections:${st.rejectedConnections}`,
        `sync_full:${syncStats.full}`,
        'sync_partial_ok:0',
        'sync_partial_err:0',
        `expired_keys:${st.expiredKeys}`,
        'expired_stale_perc:0.00',
        'expired_time_cap_reached_count:0',
        `expire_cycle_cpu_milliseconds:${Math.floor(st.expireCycleMs)}`,
        `evicted_keys:${st.evictedKeys}`,
        `evicted_clients:${eng.outputs.evictions + st.evictedClients}`,
        'total_eviction_exceeded_time:0',
        'current_eviction_exceeded_time:0',
        `keyspace_hits:${st.keyspaceHits}`,
        `keyspace_misses:${st.keyspaceMisses}`,
        `pubsub_channels:${ps.names(Kind.CHANNEL, null).length}`,
        `pubsub_patterns:${ps.numpat()}`,
        `pubsubshard_channels:${ps.names(Kind.SHARD, null).length}`,
        'latest_fork_usec:0',
        'total_forks:0',
        `migrate_cached_sockets:${allCachedSockets()}`,
        'slave_expires_tracked_keys:0',
        'active_defrag_hits:0',
        'active_defrag_misses:0',
        'active_defrag_key_hits:0',
        'active_defrag_key_misses:0',
        'total_active_defrag_time:0',
        'current_active_defrag_time:0',
        `tracking_total_keys:${eng.tracking.keys}`,
        `tracking_total_items:${eng.tracking.items}`,
        `tracking_total_prefixes:${eng.tracking.prefixCount}`,
        'unexpected_error_replies:0',
        `total_error_replies:${replyStats.errors - st.errorBase}`,
        'dump_payload_sanitizations:0',
        `total_reads_processed:${st.readsProcessed}`,
        `total_writes_processed:${st.writesProcessed}`,
        'io_threaded_reads_processed:0',
        'io_threaded_writes_processed:0',
        `reply_buffer_shrinks:${st.replyBufferShrinks}`,
        `reply_buffer_expands:${st.replyBufferExpands}`,
      );
      break;
    }
    case 'replication':
      L.push(
        'role:master',
        'connected_slaves:0',
        'master_failover_state:no-failover',
        `master_replid:${eng.replId}`,
        'master_replid2:0000000000000000000000000000000000000000',
        'master_repl_offset:0',
        'second_repl_offset:-1',
        'repl_backlog_active:0',
        'repl_backlog_size:1048576',
        'repl_backlog_first_byte_offset:0',
        'repl_backlog_histlen:0',
      );
      break;
    case 'cpu': {
      const u = process.cpuUsage();
      L.push(
        `used_cpu_sys:${cpuText(u.system)}`,
        `used_cpu_user:${cpuText(u.user)}`,
        'used_cpu_sys_children:0.000000',
        'used_cpu_user_children:0.000000',
      );
      break;
    }
    case 'modules':
      break;
    case 'commandstats': {
      const all = eng.registry.all;
      for (let i = 0; i < all.length; i++) {
        const s = st.perCommand[i];
        if (s.calls === 0 && s.failed === 0 && s.rejected === 0) continue;
        const usec = Math.floor(s.usec);
        L.push(`cmdstat_${all[i].name}:calls=${s.calls},usec=${usec},usec_per_call=${(s.calls === 0 ? 0 : s.usec / s.calls).toFixed(2)},rejected_calls=${s.rejected},failed_calls=${s.failed}`);
      }
      break;
    }
    case 'errorstats': {
      const codes = [...replyStats.codes].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      for (const [code, n] of codes) L.push(`errorstat_${code}:count=${n}`);
      break;
    }
    case 'latencystats': {
      // latency-tracking no: nothing reported; the percentiles are latency-tracking-info-percentiles.
      if (eng.cfg('latency-tracking') === 'no') break;
      const pcts = eng.cfg('latency-tracking-info-percentiles').split(' ').filter((x) => x !== '').map(Number);
      const all = eng.registry.all;
      for (let i = 0; i < all.length; i++) {
        const s = st.perCommand[i];
        if (s.hist === null || s.calls === 0) continue;
        let total = 0;
        for (let b = 0; b < LATENCY_BUCKETS; b++) total += s.hist[b];
        if (total === 0) continue;
        const ps = pcts.map((p) => `p${p}=${percentile(s.hist!, total, p).toFixed(3)}`);
        L.push(`latency_percentiles_usec_${all[i].name}:${ps.join(',')}`);
      }
      break;
    }
    case 'cluster':
      L.push('cluster_enabled:0');
      break;
    case 'keyspace': {
      const now = Date.now();
      for (const db of eng.dbs) {
        const n = db.loadedSize;
        if (n === 0) continue;
        L.push(`db${db.index}:keys=${n},expires=${db.expires},avg_ttl=${avgTtl(db, now)}`);
      }
      break;
    }
  }
  const hooks = infoHooks[name];
  if (hooks !== undefined) for (const h of hooks) L.push(...h(eng));
  return L;
}

/** The INFO text for the requested arguments (none = default sections). */
export function infoText(eng: Engine, args: readonly string[]): string {
  let wanted: Set<string>;
  let all = false;
  if (args.length === 0) {
    wanted = DEFAULT_SECTIONS;
  } else {
    wanted = new Set();
    for (const a0 of args) {
      const a = a0.toLowerCase();
      if (a === 'default') for (const s of DEFAULT_SECTIONS) wanted.add(s);
      else if (a === 'all' || a === 'everything') all = true;
      else wanted.add(a === 'module_list' ? 'modules' : a);
    }
  }
  let text = '';
  let n = 0;
  for (const name of SECTIONS) {
    if (!all && !wanted.has(name)) continue;
    if (n++ > 0) text += '\r\n';
    text += `# ${name === 'cpu' ? 'CPU' : name[0].toUpperCase() + name.slice(1)}\r\n`;
    for (const l of sectionLines(eng, name)) text += l + '\r\n';
  }
  return text;
}

// INFO [section [section ...]]
function infoCommand(c: Client, argv: Argv, out: ReplySink): void {
  const args: string[] = [];
  for (let i = 1; i < argv.count; i++) args.push(argv.key(i));
  out.verbatim(infoText(c.engine, args));
}

// ---------------------------------------------------------------- time and persistence

// TIME
function timeCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  const [sec, usec] = nowMicros();
  out.array(2);
  out.bulkText(String(sec));
  out.bulkText(String(usec));
}

// LASTSAVE
function lastsaveCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.int(c.engine.lastSave);
}

// SAVE
function saveCommand(c: Client, _argv: Argv, out: ReplySink): void {
  markSaved(c.engine);
  out.ok();
}

// BGSAVE [SCHEDULE]
function bgsaveCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 1 && !(argv.count === 2 && argv.is(1, 'SCHEDULE'))) {
    out.error(E.SYNTAX);
    return;
  }
  markSaved(c.engine);
  // Inside EXEC Redis defers the fork and says so.
  out.simple(c.engine.inExec ? 'Background saving scheduled' : 'Background saving started');
}

// ROLE
function roleCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(3);
  out.bulkText('master');
  out.int(0);
  out.array(0);
}

// WAIT numreplicas timeout
function waitCommand(c: Client, argv: Argv, out: ReplySink): void {
  const want = argv.int64(1);
  if (want === null) {
    out.error(E.NOT_INTEGER);
    return;
  }
  const ms = timeoutMsArg(argv, 2, out);
  if (ms === null) return;
  // There are no replicas: 0 acknowledged. Asking for more waits for the timeout, as Redis
  // does (forever with 0), except where a client cannot block (MULTI, scripts).
  if (want <= 0n || c.engine.inExec || c.transport.kind !== 'tcp') {
    out.int(0);
    return;
  }
  c.engine.blocking.block(c, {
    keys: [], deadline: ms === 0 ? 0 : Date.now() + ms,
    serve: () => false,
    timeout: (o) => o.int(0),
  });
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
function shutdownCommand(c: Client, argv: Argv, out: ReplySink): void {
  let nosave = false;
  let save = false;
  let abort = false;
  let other = false;
  for (let i = 1; i < argv.count; i++) {
    if (argv.is(i, 'NOSAVE')) nosave = true;
    else if (argv.is(i, 'SAVE')) save = true;
    else if (argv.is(i, 'NOW') || argv.is(i, 'FORCE')) other = true;
    else if (argv.is(i, 'ABORT')) abort = true;
    else {
      out.error(E.SYNTAX);
      return;
    }
  }
  if ((abort && (nosave || save || other)) || (nosave && save)) {
    out.error(E.SYNTAX);
    return;
  }
  if (abort) {
    // Our shutdown never waits for replicas, so there is never one to abort.
    out.error('ERR No shutdown in progress.');
    return;
  }
  const eng = c.engine;
  // A busy script: only SHUTDOWN NOSAVE may stop the server (Redis's shutdownCommand).
  if (eng.busyReply !== null && !nosave) {
    out.error(eng.busyReply);
    return;
  }
  if (eng.shutdown === null) {
    out.error('ERR Errors trying to SHUTDOWN. Check logs.');
    return;
  }
  // SAVE/NOSAVE are for the persistence layer; the shutdown hook flushes whatever it keeps.
  if (save && !nosave) markSaved(eng);
  // No reply, as Redis: the connection closes when the server goes away.
  c.transport.close(true);
  eng.shutdown(eng.busyReply !== null);
}

// MONITOR
function monitorCommand(c: Client, _argv: Argv, out: ReplySink): void {
  if (c.engine.inExec) {
    out.error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    return;
  }
  if (c.monitor) return; // Redis ignores a second MONITOR, without a reply.
  c.monitor = true;
  c.engine.monitors.add(c);
  out.ok();
}

// ---------------------------------------------------------------- CONFIG

/** Names CONFIG GET * lists: every option (secret ones need their exact name) and every alias. */
const LISTED_NAMES: readonly string[] = [
  ...OPTIONS.filter((o) => !o.secret).map((o) => o.name),
  ...ALIASES.keys(),
];

// CONFIG GET parameter [parameter ...]
function configGetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const matches: [string, string][] = [];
  const seen = new Set<string>();
  const add = (shown: string, spec: OptionSpec): void => {
    const k = shown.toLowerCase();
    if (seen.has(k)) return;
    seen.add(k);
    matches.push([shown, c.engine.cfg(spec.name)]);
  };
  for (let i = 2; i < argv.count; i++) {
    const arg = argv.key(i);
    if (!/[[*?]/.test(arg)) {
      // An exact name is echoed as the client typed it, as Redis does.
      const o = lookupOption(arg);
      if (o !== undefined) add(arg, o.spec);
      continue;
    }
    const pat = argv.view(i);
    for (const name of LISTED_NAMES) {
      if (!seen.has(name) && globMatch(pat, Buffer.from(name, 'latin1'), true)) add(name, lookupOption(name)!.spec);
    }
  }
  out.map(matches.length);
  for (const [name, value] of matches) {
    out.bulkLatin1(name);
    out.bulkText(value);
  }
}

// CONFIG SET parameter value [parameter value ...]
function configSetCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count % 2 !== 0) {
    out.error(E.SYNTAX);
    return;
  }
  const eng = c.engine;
  const specs: OptionSpec[] = [];
  const names: string[] = [];
  // First pass, in argument order: unknown names, immutable options, duplicates (Redis's
  // order). An alias and its option are two parameters for Redis 7.0: both may be given.
  for (let i = 2; i < argv.count; i += 2) {
    const given = argv.key(i);
    const o = lookupOption(given);
    if (o === undefined) {
      out.error(`ERR Unknown option or number of arguments for CONFIG SET - '${cstr(given)}'`);
      return;
    }
    if (!o.spec.mutable) {
      const why = o.spec.protected ? "can't set protected config" : "can't set immutable config";
      out.error(`ERR CONFIG SET failed (possibly related to argument '${cstr(given)}') - ${why}`);
      return;
    }
    if (names.includes(o.name)) {
      out.error(`ERR CONFIG SET failed (possibly related to argument '${cstr(given)}') - duplicate parameter`);
      return;
    }
    specs.push(o.spec);
    names.push(o.name);
  }
  // Second pass: validate every value before applying any (the set is atomic); a later
  // value for the same option (alias and name) validates against the earlier one.
  const values: string[] = [];
  const pending = new Map<string, string>();
  for (let j = 0; j < specs.length; j++) {
    const o = specs[j];
    const r = checkValue(o, argv.str(3 + 2 * j), pending.get(o.name) ?? eng.cfg(o.name));
    if ('error' in r) {
      out.error(`ERR CONFIG SET failed (possibly related to argument '${names[j]}') - ${r.error}`);
      return;
    }
    values.push(r.value);
    pending.set(o.name, r.value);
  }
  for (let j = 0; j < specs.length; j++) eng.applyConfig(specs[j].name, values[j]);
  out.ok();
}

// CONFIG RESETSTAT
function configResetstatCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const st = c.engine.stats;
  st.reset();
  // The error and output-byte counters are process-wide: keep a base instead of zeroing them.
  st.errorBase = replyStats.errors;
  st.netOutputBase = RespWriter.totalOut;
  replyStats.codes.clear();
  out.ok();
}

// CONFIG REWRITE
function configRewriteCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const cfg = c.engine.config;
  if (cfg.file === undefined) {
    out.error('ERR The server is running without a config file');
    return;
  }
  try {
    const acl = c.engine.acl;
    rewriteConfigFile(cfg, [...acl.users.values()].map((u) => acl.describe(u)));
  } catch (err) {
    out.error(`ERR Rewriting config file: ${(err as Error).message}`);
    return;
  }
  out.ok();
}

// CONFIG HELP
function configHelpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  help(out, 'CONFIG', [
    'GET <pattern>',
    '    Return parameters matching the glob-like <pattern> and their values.',
    'SET <directive> <value>',
    '    Set the configuration <directive> to <value>.',
    'RESETSTAT',
    '    Reset statistics reported by the INFO command.',
    'REWRITE',
    '    Rewrite the configuration file.',
  ]);
}

// ---------------------------------------------------------------- DEBUG

/** OBJECT ENCODING of a string value, with Redis's rules (int, embstr up to 44 bytes, raw). */
export function stringEncoding(e: Entry): string {
  const v = e.value as Buffer;
  if (!e.notInt && v.length <= 20 && v.length > 0 && parseInt64(v, 0, v.length) !== null) return 'int';
  return !e.raw && v.length <= 44 ? 'embstr' : 'raw';
}

/** Bytes of an RDB length prefix. */
function rdbLenBytes(n: number): number {
  return n < 64 ? 1 : n < 16384 ? 2 : n <= 0xffffffff ? 5 : 9;
}

/**
 * DEBUG OBJECT serializedlength: the RDB size of a string (integer encodings, length prefix,
 * no LZF); for other types an estimate from the encoding-independent parts we know.
 */
function serializedLength(e: Entry): number {
  const v = e.value;
  if (!(v instanceof Uint8Array)) return 1;
  const buf = v as Buffer;
  if (buf.length <= 11 && buf.length > 0) {
    const n = parseInt64(buf, 0, buf.length);
    if (n !== null) {
      if (n >= -128n && n <= 127n) return 2;
      if (n >= -32768n && n <= 32767n) return 3;
      if (n >= -2147483648n && n <= 2147483647n) return 5;
    }
  }
  return rdbLenBytes(buf.length) + buf.length;
}

/** A stable fake address per key for DEBUG OBJECT's "Value at:" (there is no pointer to show). */
function fakeAddress(key: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619) >>> 0;
  return '0x7f' + (h.toString(16).padStart(8, '0') + '0000').slice(0, 10);
}

/** strtod's prefix parse (DEBUG SLEEP takes "1a" as 1 and "x" as 0). */
function strtodPrefix(s: string): number {
  const m = /^\s*[+-]?(?:0x[0-9a-f]+(?:\.[0-9a-f]*)?|\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?|inf(?:inity)?|nan)/i.exec(s);
  if (!m) return 0;
  const t = m[0].trim().toLowerCase();
  const neg = t.startsWith('-');
  const u = t.replace(/^[+-]/, '');
  let v: number;
  if (u.startsWith('0x')) {
    const [ip, fp = ''] = u.slice(2).split('.');
    v = parseInt(ip || '0', 16);
    for (let i = 0; i < fp.length; i++) v += parseInt(fp[i], 16) / 16 ** (i + 1);
  } else if (u.startsWith('inf')) v = Infinity;
  else if (u === 'nan') v = NaN;
  else v = Number(u);
  return neg ? -v : v;
}

/** Block the whole process, as DEBUG SLEEP blocks Redis's event loop. */
function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const DEBUG_HELP = [
  'CHANGE-REPL-ID',
  '    Change the replication IDs of the instance.',
  '    Dangerous: should be used only for testing the replication subsystem.',
  'DIGEST',
  '    Output a hex signature representing the current DB content.',
  'DIGEST-VALUE <key> [<key> ...]',
  '    Output a hex signature of the values of all the specified keys.',
  'ERROR <string>',
  '    Return a Redis protocol error with <string> as message. Useful for clients',
  '    unit tests to simulate Redis errors.',
  'LOG <message>',
  '    Write <message> to the server log.',
  'OBJECT <key>',
  '    Show low level info about `key` and associated value.',
  'POPULATE <count> [<prefix>] [<size>]',
  '    Create <count> string keys named key:<num>. If <prefix> is specified then',
  '    it is used instead of the \'key\' prefix. These are not propagated to',
  '    replicas. Cluster slots are not respected so keys not belonging to the',
  '    current node can be created in cluster mode.',
  'PROTOCOL <type>',
  '    Reply with a test value of the specified type. <type> can be: string,',
  '    integer, double, bignum, null, array, set, map, attrib, push, verbatim,',
  '    true, false.',
  'RELOAD [option ...]',
  '    Save the RDB on disk and reload it back to memory. Valid <option> values:',
  '    * MERGE: conflicting keys will be loaded from RDB.',
  '    * NOFLUSH: the existing database will not be removed before load, but',
  '      conflicting keys will generate an exception and kill the server.',
  '    * NOSAVE: the database will be loaded from an existing RDB file.',
  '    Examples:',
  '    * DEBUG RELOAD: verify that the server is able to persist, flush and reload',
  '      the database.',
  '    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an',
  '      existing RDB file.',
  '    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB',
  '      file to the database.',
  'SET-ACTIVE-EXPIRE <0|1>',
  '    Setting it to 0 disables expiring keys in background when they are not',
  '    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the',
  '    default.',
  'SLEEP <seconds>',
  '    Stop the server for <seconds>. Decimals allowed.',
];

/** A non-negative integer as getPositiveLongFromObjectOrReply accepts it; NaN otherwise. */
function positiveLong(argv: Argv, i: number): number {
  const n = argv.int(i);
  return n >= 0 ? n : NaN;
}

const PROTOCOL_TYPES = 'string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false';

/**
 * DEBUG PROTOCOL <type> in the shapes the reply sink writes (RESP2 here: doubles, big
 * numbers and verbatim strings as bulk strings, booleans as integers, sets as arrays, maps
 * flattened, the attribute dropped).
 */
function debugProtocol(argv: Argv, out: ReplySink): void {
  switch (argv.key(2).toLowerCase()) {
    case 'string': out.bulkText('Hello World'); break;
    case 'integer': out.int(12345); break;
    case 'double': out.bulkText('3.141'); break;
    case 'bignum': out.bulkText('1234567999999999999999999999999999999'); break;
    case 'null': out.nil(); break;
    case 'array':
    case 'set':
      out.array(3);
      for (let j = 0; j < 3; j++) out.int(j);
      break;
    case 'map':
      out.array(6);
      for (let j = 0; j < 3; j++) {
        out.int(j);
        out.int(j === 1 ? 1 : 0);
      }
      break;
    case 'attrib': out.bulkText('Some real reply following the attribute'); break;
    case 'push': out.error('ERR RESP2 is not supported by this command'); break;
    case 'verbatim': out.bulkText('This is a verbatim\nstring'); break;
    case 'true': out.int(1); break;
    case 'false': out.int(0); break;
    default: out.error(`ERR Wrong protocol type name. Please use one of the following: ${PROTOCOL_TYPES}`);
  }
}

/**
 * DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: commit everything to LMDB and make it durable, then
 * drop the keyspace in memory and read it back from LMDB, as a restart does; the client waits,
 * as Redis's waits for its save and load. NOSAVE changes nothing here: LMDB is written
 * continuously, so there is no older file whose contents would come back as with Redis's RDB.
 * NOFLUSH (with or without MERGE) keeps the keyspace: what would be loaded is what memory
 * holds, so there is nothing to merge (Redis without MERGE stops on the first duplicate key).
 * With appendfsync no there is no store: the keyspace stays as it is.
 */
function debugReload(c: Client, argv: Argv, out: ReplySink): void {
  let flush = true;
  for (let i = 2; i < argv.count; i++) {
    if (argv.is(i, 'NOFLUSH')) flush = false;
    else if (!argv.is(i, 'NOSAVE') && !argv.is(i, 'MERGE')) {
      out.error('ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.');
      return;
    }
  }
  const eng = c.engine;
  const p = eng.persistence;
  if (p === null) {
    out.ok();
    return;
  }
  const reload = (): void => {
    if (flush) p.reload();
    eng.lastSave = Math.floor(Date.now() / 1000);
  };
  // Inside EXEC or a script, or over REST, the reply cannot wait: the reload happens once the
  // save is done.
  if (eng.inExec || c.transport.kind !== 'tcp') {
    p.saveNow().then(reload, () => {});
    out.ok();
    return;
  }
  c.blocked = true;
  p.saveNow().then(() => {
    reload();
    if (!c.closed) out.ok();
  }, (err: Error) => {
    if (!c.closed) out.error(`ERR Error trying to save the DB: ${err.message}`);
  }).finally(() => {
    c.blocked = false;
    if (c.closed) return;
    c.transport.requestFlush();
    c.transport.resume();
  });
}

// DEBUG subcommand [arg ...]   (the subset listed in DEBUG HELP)
function debugCommand(c: Client, argv: Argv, out: ReplySink): void {
  const n = argv.count;
  const eng = c.engine;
  if (n === 2 && argv.is(1, 'DIGEST')) {
    out.simple(datasetDigest(eng.dbs));
  } else if (n >= 2 && argv.is(1, 'DIGEST-VALUE')) {
    out.array(n - 2);
    for (let i = 2; i < n; i++) out.simple(valueDigest(c.db, argv.key(i)));
  } else if (n === 3 && argv.is(1, 'PROTOCOL')) {
    debugProtocol(argv, out);
  } else if (n >= 2 && argv.is(1, 'RELOAD')) {
    debugReload(c, argv, out);
  } else if (n === 2 && argv.is(1, 'HELP')) {
    help(out, 'DEBUG', DEBUG_HELP);
  } else if (n === 3 && argv.is(1, 'SLEEP')) {
    const secs = strtodPrefix(argv.str(2));
    // Redis's nanosleep rejects negative times; an infinite sleep would hang forever, so we refuse it.
    if (secs > 0 && Number.isFinite(secs)) sleepMs(Math.floor(secs * 1e6) / 1000);
    out.ok();
  } else if (n === 3 && argv.is(1, 'OBJECT')) {
    const key = argv.key(2);
    const e = c.db.get(key);
    if (e === undefined) {
      out.error(E.NO_KEY);
      return;
    }
    const enc = e.value instanceof Uint8Array ? stringEncoding(e) : e.value.encoding();
    const lru = e.lru & 0xffffff;
    const idle = Math.max(0, eng.lruClock - e.lru);
    out.simple(`Value at:${fakeAddress(key)} refcount:1 encoding:${enc} serializedlength:${serializedLength(e)} lru:${lru} lru_seconds_idle:${idle}`);
  } else if (n >= 3 && n <= 5 && argv.is(1, 'POPULATE')) {
    const count = positiveLong(argv, 2);
    if (count !== count) {
      out.error('ERR value is out of range, must be positive');
      return;
    }
    let size = 0;
    if (n === 5) {
      size = positiveLong(argv, 4);
      if (size !== size) {
        out.error('ERR value is out of range, must be positive');
        return;
      }
    }
    // snprintf("%s:%lu") into a 128-byte buffer: the prefix stops at NUL, the name at 127 bytes.
    const prefix = n >= 4 ? cstr(argv.key(3)) : 'key';
    const db = c.db;
    for (let j = 0; j < count; j++) {
      const key = `${prefix}:${j}`.slice(0, 127);
      if (db.get(key) !== undefined) continue;
      db.aboutToCreate(key);
      const text = Buffer.from(`value:${j}`, 'latin1');
      let val: Buffer;
      if (size === 0) val = text;
      else {
        val = Buffer.alloc(size);
        text.copy(val, 0, 0, Math.min(size, text.length));
      }
      db.set(key, val);
    }
    out.ok();
  } else if (n === 3 && argv.is(1, 'SET-ACTIVE-EXPIRE')) {
    eng.activeExpire = atoi(argv.key(2)) !== 0;
    out.ok();
  } else if (n === 3 && argv.is(1, 'LOG')) {
    console.warn(`DEBUG LOG: ${cstr(argv.str(2))}`);
    out.ok();
  } else if (n === 3 && argv.is(1, 'ERROR')) {
    // Redis sends "-<string>" as given (no ERR prefix added).
    out.error(argv.key(2));
  } else if (n === 2 && argv.is(1, 'CHANGE-REPL-ID')) {
    eng.replId = Array.from({ length: 40 }, () => Math.floor(Math.random() * 16).toString(16)).join('');
    out.ok();
  } else {
    out.error(subcommandSyntax(argv));
  }
}

/** C's atoi: optional spaces and sign, then digits; 0 when there are none. */
function atoi(s: string): number {
  const m = /^\s*([+-]?\d+)/.exec(s);
  return m ? parseInt(m[1], 10) : 0;
}

/** Containers whose subcommand is not given are answered by the dispatcher's arity check. */
function noSubcommand(_c: Client, _argv: Argv, _out: ReplySink): void {}

const LS = F.LOADING | F.STALE;
const ADM = F.ADMIN | F.NOSCRIPT | LS;

export default family('server', [], [
  //   name            arity  flags                                               keys       handler
  row('dbsize',          1,   F.READONLY | F.FAST,                                [0, 0, 0], dbsizeCommand, { categories: ['keyspace'] }),
  row('flushdb',        -1,   F.WRITE,                                            [0, 0, 0], flushdbCommand, { categories: ['keyspace', 'dangerous'] }),
  row('flushall',       -1,   F.WRITE,                                            [0, 0, 0], flushallCommand, { categories: ['keyspace', 'dangerous'] }),
  row('info',           -1,   LS,                                                 [0, 0, 0], infoCommand, { categories: ['dangerous'] }),
  row('time',            1,   LS | F.FAST,                                        [0, 0, 0], timeCommand),
  row('lastsave',        1,   LS | F.FAST,                                        [0, 0, 0], lastsaveCommand, { categories: ['admin', 'dangerous'] }),
  row('save',            1,   F.ADMIN | F.NOSCRIPT | F.NO_MULTI,                  [0, 0, 0], saveCommand),
  row('bgsave',         -1,   F.ADMIN | F.NOSCRIPT,                               [0, 0, 0], bgsaveCommand),
  row('role',            1,   F.NOSCRIPT | LS | F.FAST,                           [0, 0, 0], roleCommand, { categories: ['admin', 'dangerous'] }),
  row('shutdown',       -1,   ADM | F.NO_MULTI | F.ALLOW_BUSY,                    [0, 0, 0], shutdownCommand),
  row('wait',            3,   F.NOSCRIPT,                                         [0, 0, 0], waitCommand, { categories: ['connection'] }),
  row('monitor',         1,   ADM | F.NO_REST,                                    [0, 0, 0], monitorCommand),
  row('debug',          -2,   ADM,                                                [0, 0, 0], debugCommand),
  container('config',   -2,   0, [
    row('get',          -3,   ADM,                                                [0, 0, 0], configGetCommand),
    row('set',          -4,   ADM,                                                [0, 0, 0], configSetCommand),
    row('resetstat',     2,   ADM,                                                [0, 0, 0], configResetstatCommand),
    row('rewrite',       2,   ADM,                                                [0, 0, 0], configRewriteCommand),
    row('help',          2,   LS,                                                 [0, 0, 0], configHelpCommand),
  ], noSubcommand),
]);
