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
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  /** Hidden from CONFIG GET (options of ours that Redis does not have are still listed). */
  readonly secret?: boolean;
}

export const OPTIONS: readonly OptionSpec[] = [
  { name: 'port', env: 'PORT', type: 'int', def: '6379', min: 0, max: 65535, mutable: false, help: 'TCP port for RESP clients (0 = pick a free port)' },
  { name: 'bind', env: 'BIND', type: 'string', def: '127.0.0.1', mutable: false, help: 'address to listen on (TCP and HTTP)' },
  { name: 'http-port', env: 'HTTP_PORT', type: 'int', def: '8080', min: -1, max: 65535, mutable: false, help: 'HTTP port for the REST and /v2 APIs (0 = pick a free port, -1 = off)' },
  { name: 'token', env: 'REST_TOKEN', type: 'string', def: '', mutable: false, secret: true, help: 'REST API standard token (empty = generate one on first start and keep it in --dir)' },
  { name: 'read-only-token', env: 'REST_READ_ONLY_TOKEN', type: 'string', def: '', mutable: false, secret: true, help: 'REST API read-only token (empty = generate one on first start and keep it in --dir)' },
  { name: 'max-request-size', env: 'MAX_REQUEST_SIZE', type: 'bytes', def: '10485760', min: 1024, mutable: true, help: 'largest REST request (URL plus body) in bytes; larger ones get 413' },
  { name: 'dir', env: 'DIR', type: 'string', def: './data', mutable: false, help: 'data directory' },
  { name: 'requirepass', env: 'REQUIREPASS', type: 'string', def: '', mutable: true, help: 'password of the default user (empty = no password)' },
  { name: 'maxclients', env: 'MAXCLIENTS', type: 'int', def: '10000', min: 1, max: 1000000, mutable: true, help: 'maximum number of connected clients' },
  { name: 'timeout', env: 'TIMEOUT', type: 'int', def: '0', min: 0, max: 2147483647, mutable: true, help: 'close a client after this many idle seconds (0 = never)' },
  { name: 'tcp-keepalive', env: 'TCP_KEEPALIVE', type: 'int', def: '300', min: 0, max: 2147483647, mutable: true, help: 'TCP keepalive interval in seconds (0 = off)' },
  { name: 'databases', env: 'DATABASES', type: 'int', def: '16', min: 1, max: 1024, mutable: false, help: 'number of logical databases' },
  { name: 'proto-max-bulk-len', env: 'PROTO_MAX_BULK_LEN', type: 'bytes', def: '536870912', min: 1024 * 1024, mutable: true, help: 'largest bulk string a client may send' },
  { name: 'client-query-buffer-limit', env: 'CLIENT_QUERY_BUFFER_LIMIT', type: 'bytes', def: '1073741824', min: 1024 * 1024, mutable: true, help: 'largest unparsed input a client may accumulate' },
  { name: 'client-output-buffer-limit', env: 'CLIENT_OUTPUT_BUFFER_LIMIT', type: 'string', def: 'normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60', mutable: true, help: 'output-buffer limits per class: <class> <hard> <soft> <soft-seconds>' },
  { name: 'hz', env: 'HZ', type: 'int', def: '10', min: 1, max: 500, mutable: true, help: 'background task frequency (active expiry, timeouts)' },
  { name: 'maxmemory', env: 'MAXMEMORY', type: 'bytes', def: '0', min: 0, mutable: true, help: 'memory limit in bytes (0 = none)' },
  { name: 'maxmemory-policy', env: 'MAXMEMORY_POLICY', type: 'enum', def: 'noeviction', values: ['noeviction', 'allkeys-lru', 'volatile-lru', 'allkeys-random', 'volatile-random', 'volatile-ttl', 'allkeys-lfu', 'volatile-lfu'], mutable: true, help: 'what to do at maxmemory' },
  { name: 'loglevel', env: 'LOGLEVEL', type: 'enum', def: 'notice', values: ['debug', 'verbose', 'notice', 'warning', 'nothing'], mutable: true, help: 'log verbosity' },
  { name: 'appendfsync', env: 'APPENDFSYNC', type: 'enum', def: 'everysec', values: ['always', 'everysec', 'no'], mutable: false, help: 'durability: always, everysec or no (memory only)' },
  { name: 'busy-reply-threshold', env: 'BUSY_REPLY_THRESHOLD', type: 'int', def: '5000', min: 0, mutable: true, help: 'milliseconds before a long script makes others get BUSY' },
];

export type Config = Map<string, string>;

const BYTE_UNITS: Record<string, number> = {
  '': 1, b: 1, k: 1000, kb: 1024, m: 1000 * 1000, mb: 1024 * 1024, g: 1000 * 1000 * 1000, gb: 1024 * 1024 * 1024,
};

/** Redis memtoll: "1gb", "64mb", "100k"... Returns NaN when invalid. */
export function parseBytes(v: string): number {
  const m = /^(-?\d+)([a-zA-Z]*)$/.exec(v);
  if (!m) return NaN;
  const mul = BYTE_UNITS[m[2].toLowerCase()];
  return mul === undefined ? NaN : Number(m[1]) * mul;
}

/** Validate a value for an option; returns the normalised text or an error message. */
export function checkValue(spec: OptionSpec, raw: string): { value: string } | { error: string } {
  switch (spec.type) {
    case 'int':
    case 'bytes': {
      const n = spec.type === 'int' ? (/^-?\d+$/.test(raw) ? Number(raw) : NaN) : parseBytes(raw);
      if (!Number.isSafeInteger(n)) return { error: 'argument couldn\'t be parsed into an integer' };
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        return { error: `argument must be between ${spec.min ?? '-inf'} and ${spec.max ?? 'inf'} inclusive` };
      }
      return { value: String(n) };
    }
    case 'bool':
      if (raw === 'yes' || raw === 'no') return { value: raw };
      return { error: 'argument must be \'yes\' or \'no\'' };
    case 'enum': {
      const v = raw.toLowerCase();
      if (spec.values!.includes(v)) return { value: v };
      return { error: 'argument(s) must be one of the following: ' + spec.values!.join(', ') };
    }
    default:
      return { value: raw };
  }
}

export class ConfigError extends Error {}

/** Defaults, overridden by environment variables, overridden by command-line flags. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Config {
  const cfg: Config = new Map();
  const byName = new Map(OPTIONS.map((o) => [o.name, o]));
  const set = (spec: OptionSpec, raw: string, from: string) => {
    const r = checkValue(spec, raw);
    if ('error' in r) throw new ConfigError(`invalid ${from} for ${spec.name}: ${r.error}`);
    cfg.set(spec.name, r.value);
  };
  for (const o of OPTIONS) {
    cfg.set(o.name, o.def);
    const e = env[o.env];
    if (e !== undefined && e !== '') set(o, e, `environment variable ${o.env}`);
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
    const spec = byName.get(name);
    if (!spec) throw new ConfigError(`unknown option --${name} (see --help)`);
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new ConfigError(`option --${name} needs a value`);
      value = argv[++i];
    }
    set(spec, value, `--${name}`);
  }
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
    const flag = `  --${o.name} <${o.type === 'enum' ? o.values!.join('|') : o.type}>`;
    lines.push(flag);
    lines.push(`      ${o.help} (default: ${o.def === '' ? 'none' : o.def}) [${o.env}]`);
  }
  lines.push('  --help', '      print this help and exit');
  return lines.join('\n');
}
