/**
 * Every option in one place: its Redis name (CONFIG GET/SET), command-line flag, environment
 * variable, default, type and whether CONFIG SET may change it at run time.
 */

export type OptionType = 'int' | 'bytes' | 'string' | 'bool' | 'enum';

export interface OptionSpec {
  /** Redis-style name (CONFIG GET); the flag is --<name>. */
  readonly name: string;
  readonly env: string;
  readonly type: OptionType;
  readonly def: string;
  readonly help: string;
  /** CONFIG SET may change it. */
  readonly mutable: boolean;
  /** Redis's PROTECTED_CONFIG (dir...): CONFIG SET answers "can't set protected config". */
  readonly protected?: boolean;
  readonly values?: readonly string[];
  readonly min?: number;
  /** Upper bound; a bigint for Redis's LONG_MAX-style bounds that a number cannot print exactly. */
  readonly max?: number | bigint;
  /** Accepted values outside this range are clamped into it (Redis's hz). */
  readonly clamp?: readonly [number, number];
  /** Special syntax (client-output-buffer-limit): validates and normalises against the current value. */
  readonly parse?: (raw: string, current: string) => { value: string } | { error: string };
  /** Hidden from CONFIG GET (options of ours that Redis does not have are still listed). */
  readonly secret?: boolean;
  /** A Redis parameter without an option of ours (src/redis-options.ts): no flag help, no environment variable. */
  readonly redisOnly?: boolean;
  /** Takes several words in redis.conf and on the command line (save, bind, client-output-buffer-limit...). */
  readonly multiArg?: boolean;
}

import { checkNotifyFlags } from './engine/notify.js';
import { REDIS_OPTIONS, ALIASES } from './redis-options.js';
import { memToBig } from './config-parsers.js';
import { loadConfigFile } from './config-file.js';

/** Redis's LONG_MAX bound, printed exactly in range errors. */
const LONG_MAX = 9223372036854775807n;

const OWN_OPTIONS: readonly OptionSpec[] = [
  { name: 'port', env: 'PORT', type: 'int', def: '6379', min: 0, max: 65535, mutable: false, help: 'TCP port for RESP clients (0 = pick a free port)' },
  { name: 'bind', env: 'BIND', type: 'string', def: '127.0.0.1', multiArg: true, mutable: false, help: 'address to listen on (TCP and HTTP)' },
  { name: 'http-port', env: 'HTTP_PORT', type: 'int', def: '8080', min: -1, max: 65535, mutable: false, help: 'HTTP port for the REST and /v2 APIs (0 = pick a free port, -1 = off)' },
  { name: 'token', env: 'REST_TOKEN', type: 'string', def: '', mutable: false, secret: true, help: 'REST API standard token (empty = generate one on first start and keep it in --dir)' },
  { name: 'read-only-token', env: 'REST_READ_ONLY_TOKEN', type: 'string', def: '', mutable: false, secret: true, help: 'REST API read-only token (empty = generate one on first start and keep it in --dir)' },
  { name: 'max-request-size', env: 'MAX_REQUEST_SIZE', type: 'bytes', def: '10485760', min: 1024, mutable: true, help: 'largest REST request (URL plus body) in bytes; larger ones get 413' },
  // Search indexes (src/search): management credentials, plan overrides, workers, public URL.
  { name: 'account-email', env: 'SEARCH_ACCOUNT_EMAIL', type: 'string', def: '', mutable: false, help: 'account e-mail of the search management API (Basic auth user; empty = generate on first start and keep it in --dir)' },
  { name: 'api-key', env: 'SEARCH_API_KEY', type: 'string', def: '', mutable: false, secret: true, help: 'API key of the search management API (Basic auth password; empty = generate on first start and keep it in --dir)' },
  { name: 'search-plan-free', env: 'SEARCH_PLAN_FREE', type: 'string', def: '', mutable: false, help: 'overrides of the free search plan quotas: "max_daily_queries=100,max_vector_count=500,..."' },
  { name: 'search-plan-payg', env: 'SEARCH_PLAN_PAYG', type: 'string', def: '', mutable: false, help: 'overrides of the payg search plan quotas (same syntax as search-plan-free)' },
  { name: 'search-workers', env: 'SEARCH_WORKERS', type: 'int', def: '0', min: 0, max: 64, mutable: false, help: 'worker threads for search queries (0 = min(2, CPUs))' },
  { name: 'search-embedding-url', env: 'SEARCH_EMBEDDING_URL', type: 'string', def: '', mutable: false, help: 'OpenAI-compatible /embeddings URL for hybrid (semantic + full-text) search (empty = full-text only)' },
  { name: 'search-embedding-model', env: 'SEARCH_EMBEDDING_MODEL', type: 'string', def: 'text-embedding-3-small', mutable: false, help: 'model name sent to the embedding endpoint' },
  { name: 'search-embedding-key', env: 'SEARCH_EMBEDDING_KEY', type: 'string', def: '', mutable: false, secret: true, help: 'bearer key of the embedding endpoint (empty = none)' },
  { name: 'search-public-url', env: 'SEARCH_PUBLIC_URL', type: 'string', def: '', mutable: false, help: 'base URL shown as the endpoint of search indexes (empty = http://<bind>:<http-port>)' },
  { name: 'qstash-token', env: 'QSTASH_TOKEN', type: 'string', def: '', mutable: false, secret: true, help: 'QStash API token (empty = generate one on first start and keep it in <dir>/qstash)' },
  { name: 'qstash-dev-credentials', env: 'QSTASH_DEV_CREDENTIALS', type: 'bool', def: 'no', mutable: false, help: 'use the QStash dev server\'s published token and signing keys (for apps run with QSTASH_DEV=true)' },
  { name: 'qstash-log-retention', env: 'QSTASH_LOG_RETENTION', type: 'int', def: '604800', min: 1, max: 2147483647, mutable: false, help: 'seconds a QStash event-log entry, and a finished workflow run with its logs and DLQ entry, is kept' },
  { name: 'qstash-workflow-lazy-fetch', env: 'QSTASH_WORKFLOW_LAZY_FETCH', type: 'bool', def: 'no', mutable: false, help: 'deliver workflow steps with empty bodies, so that the SDK fetches the run (GET /v2/workflows/runs/{id}); for testing LazyFetch' },
  { name: 'qstash-timeout', env: 'QSTASH_TIMEOUT', type: 'int', def: '900', min: 1, max: 2147483647, mutable: false, help: 'default delivery timeout in seconds (Upstash-Timeout overrides it)' },
  { name: 'qstash-parallelism', env: 'QSTASH_PARALLELISM', type: 'int', def: '1000', min: 1, max: 1000000, mutable: false, help: 'most QStash deliveries in flight at once, server-wide (GET /v2/globalParallelism reports it); more wait their turn' },
  { name: 'dir', env: 'DIR', type: 'string', def: './data', mutable: false, protected: true, help: 'data directory' },
  { name: 'requirepass', env: 'REQUIREPASS', type: 'string', def: '', mutable: true, help: 'password of the default user (empty = no password)' },
  { name: 'maxclients', env: 'MAXCLIENTS', type: 'int', def: '10000', min: 1, max: 4294967295, mutable: true, help: 'maximum number of connected clients' },
  { name: 'timeout', env: 'TIMEOUT', type: 'int', def: '0', min: 0, max: 2147483647, mutable: true, help: 'close a client after this many idle seconds (0 = never)' },
  { name: 'tcp-keepalive', env: 'TCP_KEEPALIVE', type: 'int', def: '300', min: 0, max: 2147483647, mutable: true, help: 'TCP keepalive interval in seconds (0 = off)' },
  { name: 'databases', env: 'DATABASES', type: 'int', def: '16', min: 1, max: 1024, mutable: false, help: 'number of logical databases (at most 1024 here; Redis allows more)' },
  { name: 'proto-max-bulk-len', env: 'PROTO_MAX_BULK_LEN', type: 'bytes', def: '536870912', min: 1024 * 1024, max: LONG_MAX, mutable: true, help: 'largest bulk string a client may send' },
  { name: 'client-query-buffer-limit', env: 'CLIENT_QUERY_BUFFER_LIMIT', type: 'bytes', def: '1073741824', min: 1024 * 1024, max: LONG_MAX, mutable: true, help: 'largest unparsed input a client may accumulate' },
  { name: 'client-output-buffer-limit', env: 'CLIENT_OUTPUT_BUFFER_LIMIT', type: 'string', def: 'normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60', parse: parseBufferLimits, multiArg: true, mutable: true, help: 'output-buffer limits per class: <class> <hard> <soft> <soft-seconds>' },
  { name: 'pubsub-output-total-limit', env: 'PUBSUB_OUTPUT_TOTAL_LIMIT', type: 'bytes', def: '134217728', min: 0, mutable: true, help: 'most bytes queued in total for all pub/sub and MONITOR readers, TCP and SSE (on top of each one\'s output-buffer limit); over it the readers holding the most are disconnected first (0 = no limit)' },
  { name: 'hz', env: 'HZ', type: 'int', def: '10', min: 0, max: 2147483647, clamp: [1, 500], mutable: true, help: 'background task frequency (active expiry, timeouts)' },
  { name: 'maxmemory', env: 'MAXMEMORY', type: 'bytes', def: '0', min: 0, max: 18446744073709551615n, mutable: true, help: 'memory limit in bytes (0 = none)' },
  { name: 'maxmemory-policy', env: 'MAXMEMORY_POLICY', type: 'enum', def: 'noeviction', values: ['volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl', 'allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'noeviction'], mutable: true, help: 'what to do at maxmemory' },
  // Eviction tuning and keyspace events (src/engine/evict.ts, notify.ts); maxmemory-clients and
  // maxmemory-eviction-tenacity are Redis parameter rows (redis-options.ts).
  { name: 'maxmemory-samples', env: 'MAXMEMORY_SAMPLES', type: 'int', def: '5', min: 1, max: 2147483647, mutable: true, help: 'keys sampled per eviction (approximated LRU/LFU/TTL)' },
  { name: 'lfu-log-factor', env: 'LFU_LOG_FACTOR', type: 'int', def: '10', min: 0, max: 2147483647, mutable: true, help: 'LFU counter logarithm factor' },
  { name: 'lfu-decay-time', env: 'LFU_DECAY_TIME', type: 'int', def: '1', min: 0, max: 2147483647, mutable: true, help: 'minutes for the LFU counter to decay by one' },
  { name: 'notify-keyspace-events', env: 'NOTIFY_KEYSPACE_EVENTS', type: 'string', def: '', parse: (raw) => checkNotifyFlags(raw), mutable: true, help: 'keyspace notification classes (K E g $ l s h z x e d t m n A)' },
  { name: 'loglevel', env: 'LOGLEVEL', type: 'enum', def: 'notice', values: ['debug', 'verbose', 'notice', 'warning'], mutable: true, help: 'log verbosity' },
  { name: 'appendfsync', env: 'APPENDFSYNC', type: 'enum', def: 'everysec', values: ['everysec', 'always', 'no'], mutable: false, help: 'durability: always, everysec or no (memory only)' },
  { name: 'rdb-extended-types', env: 'RDB_EXTENDED_TYPES', type: 'enum', def: 'no', values: ['no', 'yes'], mutable: true, help: 'SYNC and --export-rdb also write JSON documents (RedisJSON form) and hashes with field TTLs (Redis 7.4 form) in an RDB 12 file; no: they are left out and any Redis 7.0 loads the file' },
  { name: 'lmdb-check', env: 'LMDB_CHECK', type: 'enum', def: 'yes', values: ['yes', 'auto', 'no'], mutable: false, help: 'read every B-tree page of the LMDB files at start (damage is reported, never a crash): yes = every start; auto = files up to 1 GB, bigger ones after an unclean stop; no = never' },
  { name: 'hll-sparse-max-bytes', env: 'HLL_SPARSE_MAX_BYTES', type: 'bytes', def: '3000', min: 0, max: LONG_MAX, mutable: true, help: 'largest sparse HyperLogLog before it turns dense' },
  { name: 'busy-reply-threshold', env: 'BUSY_REPLY_THRESHOLD', type: 'int', def: '5000', min: 0, max: LONG_MAX, mutable: true, help: 'milliseconds before a long script makes others get BUSY' },
  // Collection encodings (OBJECT ENCODING); Redis's defaults and ranges.
  { name: 'hash-max-listpack-entries', env: 'HASH_MAX_LISTPACK_ENTRIES', type: 'int', def: '512', min: 0, max: LONG_MAX, mutable: true, help: 'hashes with more fields are encoded as hashtable' },
  { name: 'hash-max-listpack-value', env: 'HASH_MAX_LISTPACK_VALUE', type: 'bytes', def: '64', min: 0, max: LONG_MAX, mutable: true, help: 'hashes with a longer field or value are encoded as hashtable' },
  { name: 'set-max-intset-entries', env: 'SET_MAX_INTSET_ENTRIES', type: 'int', def: '512', min: 0, max: LONG_MAX, mutable: true, help: 'integer sets with more members are encoded as hashtable' },
  { name: 'list-max-listpack-size', env: 'LIST_MAX_LISTPACK_SIZE', type: 'int', def: '-2', min: -2147483648, max: 2147483647, mutable: true, help: 'list node limit: positive = entries, -1..-5 = 4..64 KB' },
  { name: 'stream-node-max-bytes', env: 'STREAM_NODE_MAX_BYTES', type: 'bytes', def: '4096', min: 0, max: LONG_MAX, mutable: true, help: 'stream macro node size limit in bytes (0 = none)' },
  { name: 'stream-node-max-entries', env: 'STREAM_NODE_MAX_ENTRIES', type: 'int', def: '100', min: 0, max: LONG_MAX, mutable: true, help: 'stream macro node entry limit (0 = none)' },
];

/** Every option: ours, then the Redis parameters we have no option for. */
export const OPTIONS: readonly OptionSpec[] = [...OWN_OPTIONS, ...REDIS_OPTIONS];

const BY_NAME = new Map<string, OptionSpec>(OPTIONS.map((o) => [o.name, o]));

/**
 * An option by the name a client or a config file gives (any case; Redis 7.0's old names
 * such as hash-max-ziplist-entries or lua-time-limit included). `name` is the name as Redis
 * reports it in errors: the alias when an alias was used, lower-cased.
 */
export function lookupOption(given: string): { spec: OptionSpec; name: string } | undefined {
  const name = given.toLowerCase();
  const direct = BY_NAME.get(name);
  if (direct !== undefined) return { spec: direct, name };
  const target = ALIASES.get(name);
  return target === undefined ? undefined : { spec: BY_NAME.get(target)!, name };
}

/** Option values by name, and the config file they were read from (CONFIG REWRITE, INFO config_file). */
export type Config = Map<string, string> & { file?: string };

const BYTE_UNITS: Record<string, number> = {
  '': 1, b: 1, k: 1000, kb: 1024, m: 1000 * 1000, mb: 1024 * 1024, g: 1000 * 1000 * 1000, gb: 1024 * 1024 * 1024,
};

/** Redis memtoull: "1gb", "64mb", "100k", "1GB"... (no sign, no fraction). NaN when invalid. */
export function parseBytes(v: string): number {
  const m = /^(\d*)([a-zA-Z]*)$/.exec(v);
  if (!m) return NaN;
  const mul = BYTE_UNITS[m[2].toLowerCase()];
  // As strtoull, an empty digit string reads as 0 ("mb" is 0 bytes for Redis too).
  return mul === undefined ? NaN : Number(m[1] === '' ? 0 : m[1]) * mul;
}

/** Client classes of client-output-buffer-limit, in Redis's CONFIG GET order. */
const OBL_CLASSES = ['normal', 'slave', 'pubsub'] as const;

/**
 * client-output-buffer-limit: groups of <class> <hard> <soft> <soft-seconds>, merged into the
 * current value and printed for every class in bytes, as Redis's CONFIG GET shows it.
 */
function parseBufferLimits(raw: string, current: string): { value: string } | { error: string } {
  const w = raw.split(/\s+/).filter((x) => x !== '');
  if (w.length % 4 !== 0) return { error: 'Wrong number of arguments in buffer limit configuration.' };
  const cur = new Map<string, string[]>();
  const cw = current.split(/\s+/).filter((x) => x !== '');
  for (let i = 0; i + 3 < cw.length; i += 4) cur.set(cw[i], cw.slice(i + 1, i + 4));
  const updates: [string, string[]][] = [];
  for (let i = 0; i < w.length; i += 4) {
    let cls = w[i].toLowerCase();
    if (cls === 'replica') cls = 'slave';
    if (!(OBL_CLASSES as readonly string[]).includes(cls)) {
      return { error: 'Invalid client class specified in buffer limit configuration.' };
    }
    const hard = parseBytes(w[i + 1]);
    const soft = parseBytes(w[i + 2]);
    const secs = /^\d+$/.test(w[i + 3]) ? Number(w[i + 3]) : NaN;
    if (!Number.isFinite(hard) || !Number.isFinite(soft) || !Number.isFinite(secs)) {
      return { error: 'Error in hard, soft or soft_seconds setting in buffer limit configuration.' };
    }
    updates.push([cls, [String(hard), String(soft), String(secs)]]);
  }
  for (const [cls, v] of updates) cur.set(cls, v);
  return { value: OBL_CLASSES.map((c) => `${c} ${(cur.get(c) ?? ['0', '0', '0']).join(' ')}`).join(' ') };
}

/** Redis's string2ll acceptance (no '+', no leading zeros) over 64 bits; null when invalid. */
function parseConfigInt(raw: string): bigint | null {
  if (!/^-?(0|[1-9]\d{0,18})$/.test(raw) || raw === '-0') return null;
  const v = BigInt(raw);
  return v > 9223372036854775807n || v < -9223372036854775808n ? null : v;
}

/**
 * Validate a value for an option; returns the normalised text or Redis's error text.
 * `current` is the value being replaced (options with a merging syntax need it).
 */
export function checkValue(spec: OptionSpec, raw: string, current = spec.def): { value: string } | { error: string } {
  if (spec.parse) return spec.parse(raw, current);
  switch (spec.type) {
    case 'int':
    case 'bytes': {
      let n: bigint | null;
      if (spec.type === 'int') {
        n = parseConfigInt(raw);
        if (n === null) return { error: 'argument couldn\'t be parsed into an integer' };
      } else {
        n = memToBig(raw);
        if (n === null) return { error: 'argument must be a memory value' };
      }
      if ((spec.min !== undefined && n < BigInt(spec.min)) || (spec.max !== undefined && n > BigInt(spec.max))) {
        return { error: `argument must be between ${spec.min ?? '-inf'} and ${spec.max ?? 'inf'} inclusive` };
      }
      if (spec.clamp) {
        const [lo, hi] = spec.clamp;
        if (n < BigInt(lo)) n = BigInt(lo);
        else if (n > BigInt(hi)) n = BigInt(hi);
      }
      return { value: String(n) };
    }
    case 'bool': {
      // yesnotoi: case-insensitive, shown in lower case.
      const v = raw.toLowerCase();
      if (v === 'yes' || v === 'no') return { value: v };
      return { error: 'argument must be \'yes\' or \'no\'' };
    }
    case 'enum': {
      const v = raw.toLowerCase();
      if (spec.values!.includes(v)) return { value: v };
      return { error: 'argument(s) must be one of the following: ' + spec.values!.join(', ') };
    }
    default:
      return { value: raw };
  }
}

/** A configuration error; `redisStyle`: the text is Redis's own (config file errors), printed as it is. */
export class ConfigError extends Error {
  constructor(message: string, readonly redisStyle = false) {
    super(message);
  }
}

/** What start-up learns from the configuration besides option values. */
export interface ConfigExtras {
  /** ACL `user` lines of the config file. */
  users: string[][];
  /** Options given in the file or on the command line (not left at their default). */
  given: Set<string>;
}

const EXTRAS = new WeakMap<Config, ConfigExtras>();

/** The extras of a loaded configuration (empty for a hand-built one). */
export function configExtras(cfg: Config): ConfigExtras {
  return EXTRAS.get(cfg) ?? { users: [], given: new Set() };
}

/**
 * Defaults, overridden by environment variables, overridden by a redis.conf (when the first
 * argument is a file name, as redis-server takes it), overridden by command-line flags.
 */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Config {
  const cfg = readConfig(argv, env);
  // appendonly says whether the data is kept on disk, unless the configuration sets it.
  if (!configExtras(cfg).given.has('appendonly')) cfg.set('appendonly', cfg.get('appendfsync') === 'no' ? 'no' : 'yes');
  return cfg;
}

function readConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const cfg: Config = new Map();
  const given = new Set<string>();
  const set = (spec: OptionSpec, raw: string, from: string) => {
    const r = checkValue(spec, raw, cfg.get(spec.name));
    if ('error' in r) throw new ConfigError(`invalid ${from} for ${spec.name}: ${r.error}`);
    cfg.set(spec.name, r.value);
    given.add(spec.name);
  };
  for (const o of OPTIONS) {
    cfg.set(o.name, o.def);
    const e = o.env === '' ? undefined : env[o.env];
    if (e !== undefined && e !== '') set(o, e, `environment variable ${o.env}`);
  }
  if (argv.length > 0 && !argv[0].startsWith('-')) {
    const r = loadConfigFile(argv[0], argv.slice(1), cfg);
    for (const n of r.given) given.add(n);
    EXTRAS.set(cfg, { users: r.users, given });
    return cfg;
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new ConfigError(`unexpected argument '${a}' (options look like --port 6379)`);
    let name = a.slice(2);
    let value: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    const found = lookupOption(name);
    if (!found) throw new ConfigError(`unknown option --${name} (see --help)`);
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new ConfigError(`option --${name} needs a value`);
      value = argv[++i];
      // Several words (--save 3600 1 300 100, --bind a b), as redis-server takes them.
      if (found.spec.multiArg) while (i + 1 < argv.length && !argv[i + 1].startsWith('--')) value += ' ' + argv[++i];
    }
    set(found.spec, value, `--${name}`);
  }
  EXTRAS.set(cfg, { users: [], given });
  return cfg;
}

export function helpText(): string {
  const lines = [
    'Usage: node dist/main.js [--option value]...',
    '',
    'A drop-in Redis (RESP2 over TCP) and Upstash-compatible REST server, persisted in LMDB.',
    'Every option can also be given as an environment variable (shown in brackets).',
    '',
  ];
  for (const o of OPTIONS) {
    if (o.redisOnly) continue;
    const flag = `  --${o.name} <${o.type === 'enum' ? o.values!.join('|') : o.type}>`;
    lines.push(flag);
    lines.push(`      ${o.help} (default: ${o.def === '' ? 'none' : o.def}) [${o.env}]`);
  }
  lines.push('  --help', '      print this help and exit');
  lines.push('', 'Every parameter of Redis 7.0.15 (CONFIG GET *) is accepted too, as --name value or in a redis.conf', 'given as the first argument: node dist/main.js /path/to/redis.conf [--option value]...');
  return lines.join('\n');
}
