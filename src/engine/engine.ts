/**
 * Engine: the single writer. Owns the databases, the clients, the statistics and the command
 * table; every transport feeds commands through `execute()` (see dispatch.ts) and gets replies
 * through a ReplySink. Nothing here knows about sockets or HTTP.
 */
import { Db, type Entry, type TypedValue } from './db.js';
import { Registry } from './registry.js';
import { Acl } from './acl.js';
import { Blocking } from './blocking.js';
import { PubSub } from './pubsub.js';
import { Slowlog } from './slowlog.js';
import { RespWriter } from '../resp/writer.js';
import { OutputBudget } from './output-budget.js';
import { Tracking } from './tracking.js';
import { type Client, resizeReplyBuffer } from './client.js';
import type { Argv } from '../resp/argv.js';
import type { CommandDef, Family } from './command.js';
import { type Config, lookupOption, checkValue } from '../config.js';
import { N, dbEvent, notifyFlagsOf } from './notify.js';
import { CLIENT_BASE, STARTUP } from './memory.js';
import { clientEvictionLimit, evictClients } from './client-evict.js';
import { EVICT_OK, P, parsePolicy, performEvictions, resetEvictionPool } from './evict.js';

/** Per-command counters, in Stats.cmd at id * CS_ROW: usec, calls, rejected, failed. */
export const CS_ROW = 4;
export const CS_USEC = 0;
export const CS_CALLS = 1;
export const CS_REJECTED = 2;
export const CS_FAILED = 3;

/** Number of latency buckets: bucket b holds calls of at most 2^(b/4) microseconds. */
export const LATENCY_BUCKETS = 128;

/**
 * One command's counters (INFO commandstats and latencystats, LATENCY HISTOGRAM), read and
 * written through Stats.cmd and Stats.hist. perf: the dispatcher writes those arrays directly,
 * so a call touches no stats object, no boxed double (usec) and no histogram object.
 */
export class CommandStats {
  private view: Uint32Array | null = null;
  constructor(private readonly stats: Stats, private readonly id: number) {}
  get usec(): number { return this.stats.cmd[this.id * CS_ROW + CS_USEC]; }
  set usec(v: number) { this.stats.cmd[this.id * CS_ROW + CS_USEC] = v; }
  get calls(): number { return this.stats.cmd[this.id * CS_ROW + CS_CALLS]; }
  set calls(v: number) { this.stats.cmd[this.id * CS_ROW + CS_CALLS] = v; }
  get rejected(): number { return this.stats.cmd[this.id * CS_ROW + CS_REJECTED]; }
  set rejected(v: number) { this.stats.cmd[this.id * CS_ROW + CS_REJECTED] = v; }
  get failed(): number { return this.stats.cmd[this.id * CS_ROW + CS_FAILED]; }
  set failed(v: number) { this.stats.cmd[this.id * CS_ROW + CS_FAILED] = v; }
  /**
   * Latency histogram: LATENCY_BUCKETS log buckets, 4 per power of two; null while the command
   * has had no call since the start or the last reset (each call records one bucket).
   */
  get hist(): Uint32Array | null {
    if (this.calls === 0) return null;
    return this.view ??= this.stats.hist.subarray(this.id * LATENCY_BUCKETS, (this.id + 1) * LATENCY_BUCKETS);
  }
}

/** Upper bound of each latency bucket: 2^(b/4) µs. */
const BUCKET_MAX = Array.from({ length: LATENCY_BUCKETS }, (_, b) => 2 ** (b / 4));

/** Record one call's duration (microseconds) in command `id`'s histogram (Stats.hist). */
export function recordLatency(hist: Uint32Array, id: number, usec: number): void {
  // The smallest b with usec <= 2^(b/4), i.e. ceil(4 * log2(usec)), without Math.log2 (perf:
  // once per command): the power of two from clz32, then at most four comparisons.
  let b = 0;
  if (usec > 1) {
    const whole = Math.ceil(usec);
    b = whole > 0xffffffff ? LATENCY_BUCKETS - 1 : 4 * (31 - Math.clz32(whole - 1)) - 3;
    if (b < 1) b = 1;
    while (b < LATENCY_BUCKETS - 1 && usec > BUCKET_MAX[b]) b++;
  }
  hist[id * LATENCY_BUCKETS + b]++;
}

export class Stats {
  totalCommands = 0;
  totalConnections = 0;
  rejectedConnections = 0;
  expiredKeys = 0;
  evictedKeys = 0;
  /** Connections closed by maxmemory-clients (client-evict.ts). */
  evictedClients = 0;
  keyspaceHits = 0;
  keyspaceMisses = 0;
  netInputBytes = 0;
  /** Socket reads and writes (INFO total_reads_processed / total_writes_processed). */
  readsProcessed = 0;
  writesProcessed = 0;
  replyBufferShrinks = 0;
  replyBufferExpands = 0;
  /** Time spent in the active expiry cycle, ms (INFO expire_cycle_cpu_milliseconds). */
  expireCycleMs = 0;
  /** Ring of (time, input bytes, output bytes) samples for instantaneous_*_kbps. */
  netSamples: number[] = [];
  totalErrorReplies = 0;
  errorCodes = new Map<string, number>();
  perCommand: CommandStats[] = [];
  /** Every command's counters, CS_ROW per command id (see CommandStats). */
  cmd = new Float64Array(0);
  /** Every command's latency histogram, LATENCY_BUCKETS per command id. */
  hist = new Uint32Array(0);
  /** Ring of (time, total commands) samples for instantaneous_ops_per_sec. */
  opsSamples: number[] = [];
  /** Highest used_memory seen (INFO used_memory_peak), sampled by cron and INFO. */
  memPeak = 0;
  /** replyStats.errors at the last CONFIG RESETSTAT (the counter itself is process-wide). */
  errorBase = 0;
  /** RespWriter.totalOut at the last CONFIG RESETSTAT (process-wide too). */
  netOutputBase = 0;
  /** Completed saves (INFO rdb_saves). */
  rdbSaves = 0;
  /** Counters for `n` command ids (the registry's rows). */
  commands(n: number): void {
    this.cmd = new Float64Array(n * CS_ROW);
    this.hist = new Uint32Array(n * LATENCY_BUCKETS);
    this.perCommand = Array.from({ length: n }, (_, id) => new CommandStats(this, id));
  }

  reset(): void {
    this.totalCommands = 0;
    this.totalConnections = 0;
    this.rejectedConnections = 0;
    this.expiredKeys = 0;
    this.evictedKeys = 0;
    this.evictedClients = 0;
    this.keyspaceHits = 0;
    this.keyspaceMisses = 0;
    this.netInputBytes = 0;
    this.readsProcessed = 0;
    this.writesProcessed = 0;
    this.replyBufferShrinks = this.replyBufferExpands = 0;
    this.expireCycleMs = 0;
    this.netSamples = [];
    this.totalErrorReplies = 0;
    this.errorCodes.clear();
    this.cmd.fill(0);
    this.hist.fill(0);
    this.memPeak = 0;
    this.rdbSaves = 0;
  }
}

/** Change listeners: persistence, keyspace notifications, blocked clients. */
export interface KeyspaceListener {
  /**
   * `key` changed; `e` is its live entry when the signal had it at hand (it may leave the table
   * later: then its `next` is keytable's REMOVED), undefined otherwise.
   */
  keyChanged(db: Db, key: string, e?: Entry): void;
  flushed(db: Db): void;
  /** SWAPDB exchanged the contents of two databases. */
  swapped?(a: Db, b: Db): void;
  /**
   * Many new keys at once (an RDB import before serving); without this method, keyChanged is
   * called for each. Persistence writes them in bounded batches instead of one huge one.
   */
  keysAdded?(db: Db, keys: string[]): void;
  /** False when keysAdded / keyChanged of keys new to the keyspace would do nothing (default true). */
  wantsAddedKeys?(): boolean;
  /** A collection left the keyspace (deleted, expired or overwritten); strings are not reported. */
  valueDropped?(v: TypedValue): void;
  /** DEBUG RELOAD read the keyspace back from disk (without keyChanged calls). */
  reloaded?(): void;
}

/**
 * Persistence as the engine and the commands see it (src/store/persistence.ts implements it;
 * app.ts installs it). Present in every mode; with appendfsync no it stores nothing.
 */
export interface PersistenceApi {
  /** appendfsync: always | everysec | no */
  readonly mode: string;
  /** INFO persistence lines ("field:value"). */
  info(): string[];
  /** SAVE / BGSAVE / SHUTDOWN: commit everything changed so far and force it to disk. */
  saveNow(): Promise<void>;
  /**
   * DEBUG RELOAD, after saveNow: drop the keyspace in memory and read it back from the store,
   * as a restart does. False when there is no store to read (appendfsync no).
   */
  reload(): boolean;
  /** A record of another subsystem (REST tokens, ACL users), stored with the next commit. */
  putRecord(name: string, value: unknown): void;
  /** The record as loaded at start-up or last put; undefined when absent. */
  getRecord<V = unknown>(name: string): V | undefined;
}

/** Something whose output can be held until a commit is durable (a connection). */
export interface HeldOutput {
  commitReleased(): void;
}

/**
 * appendfsync always: transports ask before sending output. `hold` returns true when the
 * output depends on a commit that is not durable yet; `t.commitReleased()` is called once it
 * is. `wrote` says whether the output's own commands changed the keyspace.
 */
export interface CommitGate {
  hold(t: HeldOutput, wrote: boolean): boolean;
}

export class Engine {
  readonly dbs: Db[] = [];
  readonly registry: Registry;
  readonly acl: Acl;
  readonly blocking: Blocking;
  readonly stats = new Stats();
  readonly clients = new Map<number, Client>();
  readonly monitors = new Set<Client>();
  /** DEBUG's row: refused by the dispatcher unless enable-debug-command allows it. */
  readonly debugDef: CommandDef | null;
  /** SLOWLOG entries and latency-monitor events (slowlog.ts). */
  readonly slowlog: Slowlog;
  /** Channels, patterns and shard channels with their subscribers (TCP clients, SSE streams). */
  readonly pubsub = new PubSub();
  /** Total bytes queued for pushed-to readers (pub/sub, MONITOR), bounded as a whole. */
  readonly outputs = new OutputBudget(() => this.cfgInt('pubsub-output-total-limit'));
  /** Client-side caching state (CLIENT TRACKING). */
  readonly tracking: Tracking = new Tracking(this);
  /** The client whose command is being executed (scripts and EXEC: the caller); null between commands. */
  current: Client | null = null;
  readonly startTime = Date.now();
  readonly runId: string;
  /** Replication id (INFO master_replid); DEBUG CHANGE-REPL-ID renews it. */
  replId: string;
  /** DEBUG SET-ACTIVE-EXPIRE 0 turns the background expiry cycle off (tests). */
  activeExpire = true;
  /** CLIENT PAUSE state (pause.ts): until when (Date.now() ms, 0 = none) and whether only writes are paused. */
  pauseUntil = 0;
  pauseWriteOnly = false;
  nextClientId = 1;
  /** Time snapshot (ms) for the command being executed; frozen during EXEC. */
  now = Date.now();
  /**
   * Wall time = wallBase + performance.now() (ms): dispatch derives `now` from the monotonic
   * reading it takes anyway for command statistics. Re-synchronised with Date.now() by cron,
   * so a step of the system clock is followed within one tick.
   */
  wallBase = calibratedBase();
  /** A performance.now() reading the next execute() may use as its start (pipelined batches); -1: none. */
  clockNext = -1;
  /** The last performance.now() reading taken by dispatch (end of the last command). */
  lastClock = 0;
  /** LRU clock in seconds (OBJECT IDLETIME). */
  lruClock = Math.floor(Date.now() / 1000);
  /** Changes since the last save (INFO rdb_changes_since_last_save); persistence lowers it. */
  private dirtyCount = 0;
  /** Every change ever made (never lowered): the REST sync token follows it. */
  writes = 0;
  get dirty(): number {
    return this.dirtyCount;
  }
  set dirty(v: number) {
    if (v > this.dirtyCount) this.writes += v - this.dirtyCount;
    this.dirtyCount = v;
  }
  /** One more change (Db.modified): `dirty++` without the accessor pair. */
  changed(): void {
    this.dirtyCount++;
    this.writes++;
  }
  lastSave = Math.floor(Date.now() / 1000);
  /** The -BUSY reply while a script outlives busy-reply-threshold (scripting/host.ts); null otherwise. */
  busyReply: string | null = null;
  /**
   * Transports' part in a busy period on the engine thread (scripting/host.ts): start, poll
   * (from the script's count hook), end. The TCP listener accepts new connections meanwhile.
   */
  readonly busyHooks: { start(): void; poll(): void; end(): void }[] = [];
  /** performance.now() as the last command handler returned (dispatch.ts call(); scripts read it). */
  lastCallEnd = 0;
  /** True while EXEC runs its queue (time is frozen, nested rules apply). */
  inExec = false;
  /**
   * Called by dispatch's call() before every write command while an RDB snapshot is being
   * produced (rdb/file.ts: the snapshot saves the keys the command names before it changes
   * them); null otherwise, so it costs one test per command.
   */
  beforeWrite: ((c: Client, def: CommandDef, argv: Argv) => void) | null = null;
  /**
   * Set with beforeWrite: called before a key changes or goes away other than by the command
   * being run (expiry, eviction, MIGRATE's later deletion, field expiry, DEBUG POPULATE's new
   * keys; Db.aboutToChange, Db.aboutToCreate).
   */
  beforeKeyChange: ((db: Db, key: string) => void) | null = null;
  /** notify-keyspace-events as flags (notify.ts N.*): 0 = off, one bit test per event. */
  notifyFlags = 0;
  /** maxmemory in bytes (0 = no limit: dispatch tests this one number per command). */
  maxmemory = 0;
  /** maxmemory-clients in bytes (client-evict.ts), 0 = off. */
  clientMemLimit = 0;
  /** lfu-decay-time and the eviction time budget (maxmemory-eviction-tenacity), read per eviction. */
  lfuDecayTime = 1;
  evictBudgetUs = 500;
  /** maxmemory-policy as evict.ts P.* and whether only keys with a TTL are candidates. */
  evictKind: number = P.NONE;
  evictVolatile = false;
  /** An LFU policy is in force: entries' LRU bits hold LFU counters (evict.ts). */
  lfu = false;
  lfuLogFactor = 10;
  maxmemorySamples = 5;
  /** performEvictions failed before the current command (scripts' first DENYOOM call fails). */
  oomState = false;
  /** Flags a script declares (scripting/host.ts installs it): the OOM gate of EVAL / FCALL. */
  scriptFlagsOf: ((name: string, argv: import('../resp/argv.js').Argv) => readonly string[] | null) | null = null;
  /** Clients' memory (struct, query and output buffers) as last measured by cron. */
  memClients = 0;
  private listeners: KeyspaceListener[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** Ports the transports actually listen on (INFO server). */
  tcpPort = 0;
  httpPort = 0;
  /**
   * Called by SHUTDOWN; set by the application. `now`: SHUTDOWN NOSAVE while a script is busy:
   * exit at once, committing nothing more (the script's partial effects must not reach the
   * disk, and the engine thread may be inside the script).
   */
  shutdown: ((now?: boolean) => void) | null = null;
  /** Counts option changes (applyConfig): hot paths cache what they derive from options by it. */
  cfgGen = 0;
  /** Called with the new value when CONFIG SET changes an option (the REST layer revokes its tokens on requirepass). */
  readonly configListeners: ((name: string, value: string) => void)[] = [];
  /** Installed by the application (app.ts); null only before start-up finishes. */
  persistence: PersistenceApi | null = null;
  /** Non-null with appendfsync always: replies wait for durable commits. */
  commitGate: CommitGate | null = null;
  /** Set while the disk refuses writes: the MISCONF error write commands get. */
  writeDenied: string | null = null;

  constructor(readonly config: Config, families: readonly Family[]) {
    this.registry = new Registry(families);
    this.acl = new Acl(this.registry);
    if (this.cfg('requirepass') !== '') this.acl.setDefaultPassword(this.cfg('requirepass'));
    this.acl.logMaxLen = this.cfgInt('acllog-max-len');
    this.acl.onUserDeleted = (name) => {
      for (const c of this.clients.values()) if (c.user === name) c.transport.close(true);
    };
    this.stats.commands(this.registry.all.length);
    this.blocking = new Blocking(this);
    this.notifyFlags = notifyFlagsOf(this.cfg('notify-keyspace-events'));
    this.memoryConfig();
    this.slowlog = new Slowlog(this);
    this.debugDef = this.registry.commands.get('debug') ?? null;
    const n = Number(config.get('databases') ?? 16);
    for (let i = 0; i < n; i++) this.dbs.push(new Db(i, this));
    this.runId = randomHex40();
    this.replId = randomHex40();
  }

  // ---------------------------------------------------------------- configuration

  cfg(name: string): string {
    return this.config.get(name) ?? '';
  }

  cfgInt(name: string): number {
    return Number(this.config.get(name) ?? 0);
  }

  /** CONFIG SET one option; returns an error text or null. */
  setConfig(name: string, raw: string): string | null {
    const spec = lookupOption(name)?.spec;
    if (!spec) return `Unknown option or number of arguments for CONFIG SET - '${name}'`;
    if (!spec.mutable) return `CONFIG SET failed (possibly related to argument '${name}') - can't set immutable config`;
    const r = checkValue(spec, raw, this.cfg(name));
    if ('error' in r) return `CONFIG SET failed (possibly related to argument '${name}') - ${r.error}`;
    this.applyConfig(name, r.value);
    return null;
  }

  /** Store a validated option value and apply its side effects (the one place for both). */
  applyConfig(name: string, value: string): void {
    this.config.set(name, value);
    this.cfgGen++;
    if (name === 'notify-keyspace-events') this.notifyFlags = notifyFlagsOf(value);
    if (name.startsWith('maxmemory') || name.startsWith('lfu-')) this.memoryConfig();
    if (name === 'acllog-max-len') this.acl.logMaxLen = Number(value);
    if (name === 'requirepass') {
      this.acl.setDefaultPassword(value);
      this.aclChanged('default');
      // Kept with the data: after a restart CONFIG GET requirepass shows the password in force.
      this.persistence?.putRecord('requirepass', value);
    }
    for (const l of this.configListeners) l(name, value);
  }


  /** Cache the maxmemory options the hot paths read. */
  private memoryConfig(): void {
    this.maxmemory = this.cfgInt('maxmemory');
    this.clientMemLimit = clientEvictionLimit(this.cfg('maxmemory-clients'), this.maxmemory);
    const p = parsePolicy(this.cfg('maxmemory-policy'));
    this.evictKind = p.kind;
    this.evictVolatile = p.volatile;
    this.lfu = p.kind === P.LFU;
    this.lfuLogFactor = this.cfgInt('lfu-log-factor');
    this.lfuDecayTime = this.cfgInt('lfu-decay-time');
    // evictionTimeLimitUs: 50 µs per tenacity step up to 10 (500 µs by default), then growing.
    const tenacity = this.cfgInt('maxmemory-eviction-tenacity');
    this.evictBudgetUs = tenacity <= 10 ? 50 * tenacity : tenacity < 100 ? 500 * 1.15 ** (tenacity - 10) : Infinity;
    this.maxmemorySamples = this.cfgInt('maxmemory-samples');
    this.oomState = false;
  }

  /** Connections start unauthenticated when the default user has a password or is off. */
  authRequired(): boolean {
    return this.acl.authRequired();
  }

  /**
   * The ACL users changed (ACL SETUSER / DELUSER / RESTTOKEN, requirepass): persist them.
   * Connections keep their user object, so nothing else to do.
   */
  aclChanged(_name: string): void {
    this.persistence?.putRecord('acl', this.acl.snapshot());
  }

  // ---------------------------------------------------------------- keyspace events

  addListener(l: KeyspaceListener): void {
    this.listeners.push(l);
  }

  onKeyChanged(db: Db, key: string, e?: Entry): void {
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) ls[i].keyChanged(db, key, e);
  }

  /** True when a listener takes the names of bulk-added keys (an import builds them only then). */
  wantsAddedKeys(): boolean {
    for (const l of this.listeners) if (l.wantsAddedKeys?.() ?? true) return true;
    return false;
  }

  /** Bulk counterpart of onKeyChanged (Db.endImport). */
  onKeysAdded(db: Db, keys: string[]): void {
    for (const l of this.listeners) {
      if (l.keysAdded !== undefined) l.keysAdded(db, keys);
      else for (let i = 0; i < keys.length; i++) l.keyChanged(db, keys[i]);
    }
  }

  onExpired(db: Db, key: string): void {
    if (this.notifyFlags & N.EXPIRED) dbEvent(this, N.EXPIRED, 'expired', key, db.index);
  }

  onFlush(db: Db): void {
    resetEvictionPool();
    for (const l of this.listeners) l.flushed(db);
  }

  onReload(): void {
    for (const l of this.listeners) l.reloaded?.();
  }

  onSwap(a: Db, b: Db): void {
    resetEvictionPool();
    for (const l of this.listeners) l.swapped?.(a, b);
  }

  onValueDropped(v: TypedValue): void {
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) ls[i].valueDropped?.(v);
  }

  // ---------------------------------------------------------------- background cycle

  /** Start the periodic tasks (active expiry, idle-client timeout), `hz` times a second. */
  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.cron();
      this.timer = setTimeout(tick, 1000 / Math.max(1, this.cfgInt('hz')));
      this.timer.unref();
    };
    this.timer = setTimeout(tick, 100);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One background step; exposed for tests. */
  cron(): void {
    const now = Date.now();
    this.now = now;
    this.syncClock(now);
    this.lruClock = Math.floor(now / 1000);
    // Active expiry: at most 25% of one tick, as Redis's slow cycle.
    const deadline = now + 250 / Math.max(1, this.cfgInt('hz'));
    // No active expiry while a busy script runs: the script must see a frozen keyspace.
    // No active expiry while clients are paused (CLIENT PAUSE), as Redis 7.
    if (this.activeExpire && this.busyReply === null && this.pauseUntil === 0) {
      const t0 = performance.now();
      for (const db of this.dbs) {
        if (db.expires > 0) db.activeExpire(now, deadline);
        if (Date.now() > deadline) break;
      }
      this.stats.expireCycleMs += performance.now() - t0;
    }
    // Key tables: shrink the sparse ones, move rehashing ones on (Redis's activerehashing:
    // at most about 1 ms per tick).
    const rehashEnd = Date.now() + 1;
    for (const db of this.dbs) db.cron(rehashEnd);
    // Idle clients (timeout seconds; pub/sub and blocked clients are exempt as in Redis).
    const timeout = this.cfgInt('timeout');
    if (timeout > 0) {
      for (const c of this.clients.values()) {
        if (c.transport.kind !== 'tcp' || c.subscriptions > 0 || c.monitor) continue;
        if (now - c.lastInteraction > timeout * 1000) c.transport.close(false);
      }
    }
    // Reply buffers as Redis's clientsCron resizes them: every client at each tick while there
    // are at most 5 (CLIENTS_CRON_MIN_ITERATIONS), else each about once a second.
    let tcp = 0;
    for (const c of this.clients.values()) if (c.transport.kind === 'tcp') tcp++;
    const every = tcp <= 5;
    for (const c of this.clients.values()) {
      // (900: a tick comes a little late; the pass stays about once a second.)
      if (c.transport.kind !== 'tcp' || (!every && now - c.rbCronAt < 900)) continue;
      c.rbCronAt = now;
      const r = resizeReplyBuffer(c, now);
      if (r === 1) this.stats.replyBufferShrinks++;
      else if (r === 2) this.stats.replyBufferExpands++;
    }
    const s = this.stats.opsSamples;
    s.push(now, this.stats.totalCommands);
    if (s.length > 32) s.splice(0, 2);
    const ns = this.stats.netSamples;
    ns.push(now, this.stats.netInputBytes, RespWriter.totalOut);
    if (ns.length > 48) ns.splice(0, 3);
    this.usedMemory();
    if (this.clientMemLimit !== 0) evictClients(this);
    // Background eviction: what the commands' budget left over (Redis's evictionTimeProc).
    if (this.maxmemory !== 0 && this.busyReply === null && performEvictions(this) !== EVICT_OK) performEvictions(this);
  }

  /** Follow steps of the system clock (NTP, manual changes) in the derived wall time. */
  syncClock(now = Date.now()): void {
    // Date.now() truncates: in step, `drift` is in (-1, 0]. (NTP slews both clocks alike.)
    const drift = now - (this.wallBase + performance.now());
    if (drift > 0.25 || drift < -1.25) this.wallBase = calibratedBase();
  }

  /**
   * used_memory as modelled by memory.ts: the startup overhead, the keys' charges, the main
   * dicts' bucket arrays and the clients. Measures the clients now (O(clients)); updates the peak.
   */
  usedMemory(): number {
    this.memClients = this.clientsMemory();
    const used = this.memoryForEviction();
    if (used > this.stats.memPeak) this.stats.memPeak = used;
    return used;
  }

  /** used_memory with the clients as cron last measured them (cheap: what eviction compares). */
  memoryForEviction(): number {
    let t = STARTUP + this.memClients;
    for (const db of this.dbs) t += db.mem + this.dictOverhead(db.map.size);
    return t;
  }

  /** The bucket array of a main dict holding n keys (a power of two at least n, 8 bytes each). */
  dictOverhead(n: number): number {
    if (n === 0) return 0;
    return (n <= 4 ? 4 : 2 ** (32 - Math.clz32(n - 1))) * 8;
  }

  /** Bytes held by the clients: a fixed struct each plus their query and output buffers. */
  clientsMemory(): number {
    let t = 0;
    for (const c of this.clients.values()) {
      if (c.transport.kind === 'internal') continue;
      t += CLIENT_BASE + c.transport.inputBytes() + c.transport.outputBytes();
    }
    return t;
  }

  /** instantaneous_input_kbps / instantaneous_output_kbps from the same samples ([input, output]). */
  netKbps(): [number, number] {
    const s = this.stats.netSamples;
    if (s.length < 6) return [0, 0];
    const dt = s[s.length - 3] - s[0];
    if (dt <= 0) return [0, 0];
    const k = 1000 / dt / 1024;
    return [(s[s.length - 2] - s[1]) * k, (s[s.length - 1] - s[2]) * k];
  }

  /** instantaneous_ops_per_sec from the samples of the last ~1.6 s. */
  opsPerSec(): number {
    const s = this.stats.opsSamples;
    if (s.length < 4) return 0;
    const dt = s[s.length - 2] - s[0];
    return dt > 0 ? Math.round(((s[s.length - 1] - s[1]) * 1000) / dt) : 0;
  }

  // ---------------------------------------------------------------- clients

  register(c: Client): void {
    this.clients.set(c.id, c);
    this.stats.totalConnections++;
  }

  unregister(c: Client): void {
    c.closed = true;
    this.clients.delete(c.id);
    this.monitors.delete(c);
    if (c.track !== 0) this.tracking.disable(c);
    for (const l of this.clientListeners) l(c);
  }

  /** Cleanups run when a client goes away (WATCH lists, pub/sub, blocking). */
  readonly clientListeners: ((c: Client) => void)[] = [];
}

/**
 * wallBase such that Math.floor(wallBase + performance.now()) equals Date.now(), found at
 * millisecond edges of Date.now(), so that the derived time agrees with Date.now() to a few
 * microseconds (XADD * ids, expiry checks and tests compare them). One pass is off when the
 * thread is preempted inside it (or the loop is still cold): the median of seven passes is
 * kept. Spins for about 7 ms (at start-up, and when the system clock is stepped).
 */
function calibratedBase(): number {
  const bases: number[] = [];
  for (let pass = 0; pass < 7; pass++) {
    const d0 = Date.now();
    let d = d0;
    let p = 0;
    while (d === d0) {
      p = performance.now();
      d = Date.now();
    }
    bases.push(d - p);
  }
  bases.sort((x, y) => x - y);
  return bases[3];
}

function randomHex40(): string {
  return Array.from({ length: 40 }, () => Math.floor(Math.random() * 16).toString(16)).join('');
}
