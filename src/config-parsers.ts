/**
 * Validators of the Redis parameters with their own syntax (src/redis-options.ts), with
 * Redis 7.0.15's error texts. Each takes the value as CONFIG SET receives it (multi-word
 * values joined by single spaces, as redis.conf lines are) and returns the text CONFIG GET
 * shows afterwards, or the error.
 */
export type ParseResult = { value: string } | { error: string };

/** C's strtoll(s, &end, 10) with *end required to be '\0': leading blanks and a sign allowed. */
function strtollWhole(s: string): number | null {
  if (s === '') return 0; // strtoll of "" consumes nothing: *end is '\0' and the value is 0.
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)$/.exec(s);
  return m ? Number(m[1]) : null;
}

/** save <seconds> <changes> [<seconds> <changes> ...]; "" = no snapshots. */
export function save(raw: string): ParseResult {
  const w = raw === '' ? [] : raw.split(' ');
  const bad = { error: 'Invalid save parameters' };
  if (w.length % 2 !== 0) return bad;
  const out: number[] = [];
  for (let j = 0; j < w.length; j++) {
    const v = strtollWhole(w[j]);
    if (v === null || (j % 2 === 0 && v < 1) || (j % 2 === 1 && v < 0)) return bad;
    out.push(v);
  }
  return { value: out.join(' ') };
}

/** Three integers between -2000 and 2000. */
export function oomScoreAdjValues(raw: string): ParseResult {
  const w = raw.split(' ');
  if (w.length !== 3) return { error: 'wrong number of arguments' };
  const out: number[] = [];
  for (const x of w) {
    const v = x === '' ? null : strtollWhole(x);
    if (v === null || v < -2000 || v > 2000) {
      return { error: 'Invalid oom-score-adj-values, elements must be between -2000 and 2000.' };
    }
    out.push(v);
  }
  return { value: out.join(' ') };
}

/**
 * replicaof <host> <port> | no one. This server is never a replica: "no one" (the default)
 * is accepted, a master address is refused.
 */
export function replicaof(raw: string): ParseResult {
  const w = raw.split(' ');
  if (w.length !== 2) return { error: 'wrong number of arguments' };
  if (w[0].toLowerCase() === 'no' && w[1].toLowerCase() === 'one') return { value: '' };
  return { error: 'replication is not supported by this server (replicaof must be "no one")' };
}

/** An octal permission between 0 and 0777, shown in octal. */
export function unixsocketperm(raw: string): ParseResult {
  const m = /^[ \t]*([+-]?[0-7]+)$/.exec(raw);
  if (!m) return { error: 'argument couldn\'t be parsed as an octal number' };
  const v = parseInt(m[1], 8);
  if (v < 0 || v > 0o777) return { error: 'argument must be between 0 and 777 inclusive' };
  return { value: v.toString(8) };
}

const UNITS: Record<string, bigint> = {
  '': 1n, b: 1n, k: 1000n, kb: 1024n, m: 1000000n, mb: 1048576n, g: 1000000000n, gb: 1073741824n,
};

/** Redis's memtoull over 64 bits: "64mb", "1GB", "100"; null when invalid or past 2^64-1. */
export function memToBig(v: string): bigint | null {
  const m = /^(\d*)([a-zA-Z]*)$/.exec(v);
  if (!m) return null;
  const mul = UNITS[m[2].toLowerCase()];
  if (mul === undefined) return null;
  // strtoull saturates at 2^64-1 (ERANGE is not checked); the unit multiplies in 64 bits.
  let n = m[1] === '' ? 0n : BigInt(m[1]);
  if (n > 18446744073709551615n) n = 18446744073709551615n;
  return (n * mul) & 18446744073709551615n;
}

/** A memory value or a percentage of maxmemory ("10%"). */
export function maxmemoryClients(raw: string): ParseResult {
  const bad = { error: 'argument must be a memory or percent value' };
  if (raw.endsWith('%')) {
    const m = /^(\d+)%$/.exec(raw);
    if (!m) return bad;
    const p = Number(m[1]);
    if (p > 100) return { error: 'percentage argument must be less or equal to 100' };
    return { value: p === 0 ? '0' : `${p}%` };
  }
  const n = memToBig(raw);
  if (n === null) return bad;
  // Stored signed, a negative number meaning a percentage: values past LLONG_MAX read as one.
  if (n > 9223372036854775807n) {
    const p = 18446744073709551616n - n;
    if (p > 100n) return { error: 'percentage argument must be less or equal to 100' };
    return { value: `${p}%` };
  }
  return { value: String(n) };
}

/** Percentiles between 0 and 100, shown as %f without trailing zeros. */
export function latencyTrackingInfoPercentiles(raw: string): ParseResult {
  const w = raw === '' ? [] : raw.split(' ');
  const out: string[] = [];
  for (const x of w) {
    if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(x)) return { error: 'Invalid latency-tracking-info-percentiles parameters' };
    const v = Number(x);
    if (v < 0 || v > 100) return { error: 'latency-tracking-info-percentiles parameters should sit between [0.0,100.0]' };
    out.push(String(Number(v.toFixed(6))));
  }
  return { value: out.join(' ') };
}

export function clusterAnnounceHostname(raw: string): ParseResult {
  if (!/^[A-Za-z0-9.-]*$/.test(raw)) return { error: 'Hostnames may only contain alphanumeric characters, hyphens or dots' };
  return { value: raw };
}

const TITLE_VARS = new Set(['title', 'listen-addr', 'server-mode', 'port', 'tls-port', 'unixsocket', 'config-file']);

/** {title} {listen-addr} {server-mode} {port} {tls-port} {unixsocket} {config-file} and text. */
export function procTitleTemplate(raw: string): ParseResult {
  const bad = { error: 'template format is invalid or contains unknown variables' };
  // Redis expands the template with an empty title and refuses an empty (blank) result.
  let expanded = '';
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== '{') {
      expanded += raw[i];
      continue;
    }
    const end = raw.indexOf('}', i);
    if (end < 0) return bad;
    const v = raw.slice(i + 1, end);
    if (!TITLE_VARS.has(v)) return bad;
    if (v === 'listen-addr' || v === 'port' || v === 'tls-port') expanded += '0';
    i = end;
  }
  return expanded.trim() === '' ? bad : { value: raw };
}

/** activedefrag: Redis refuses `yes` without its own jemalloc; this server has no defragmenter either. */
export function activedefrag(raw: string): ParseResult {
  const v = raw.toLowerCase();
  if (v === 'no') return { value: v };
  if (v === 'yes') return { error: 'Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution' };
  return { error: 'argument must be \'yes\' or \'no\'' };
}
