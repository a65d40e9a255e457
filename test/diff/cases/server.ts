/**
 * Server commands against redis-server 7.0: DBSIZE FLUSHDB FLUSHALL INFO TIME CONFIG MONITOR
 * LASTSAVE SAVE BGSAVE SHUTDOWN (errors only) ROLE FUNCTION/SCRIPT FLUSH.
 * DEBUG is disabled in the reference server (enable-debug-command no): it is compared in
 * test/commands/server.test.ts against a server started with it enabled.
 * Every CONFIG SET here restores the value it changed: the servers are shared by all scripts.
 */
import type { Script } from '../harness.js';

const raw = (...cmds: string[][]): string =>
  cmds.map((a) => `*${a.length}\r\n` + a.map((x) => `$${Buffer.byteLength(x)}\r\n${x}\r\n`).join('')).join('');

const scripts: Script[] = [
  // ---------------------------------------------------------------- DBSIZE / FLUSHDB / FLUSHALL
  { name: 'DBSIZE counts the keys of the current db', steps: [
    ['DBSIZE'], ['SET', 'a', '1'], ['SET', 'b', '2'], ['DBSIZE'], ['SELECT', '1'], ['DBSIZE'],
    ['SET', 'c', '3'], ['DBSIZE'], ['SELECT', '0'], ['DBSIZE'], ['DBSIZE', 'x'],
  ] },
  { name: 'FLUSHDB empties only the current db', steps: [
    ['SET', 'a', '1'], ['SELECT', '2'], ['SET', 'b', '1'], ['FLUSHDB'], ['DBSIZE'],
    ['SELECT', '0'], ['DBSIZE'], ['GET', 'a'],
  ] },
  { name: 'FLUSHDB options and syntax errors', steps: [
    ['SET', 'a', '1'], ['FLUSHDB', 'ASYNC'], ['DBSIZE'], ['SET', 'a', '1'], ['FLUSHDB', 'sync'],
    ['DBSIZE'], ['FLUSHDB', 'foo'], ['FLUSHDB', 'ASYNC', 'SYNC'], ['FLUSHDB', 'async', 'x'],
  ] },
  { name: 'FLUSHALL empties every db, options and syntax errors', steps: [
    ['SET', 'a', '1'], ['SELECT', '5'], ['SET', 'b', '1'], ['FLUSHALL'], ['DBSIZE'], ['SELECT', '0'],
    ['DBSIZE'], ['SET', 'a', '1'], ['FLUSHALL', 'ASYNC'], ['DBSIZE'], ['FLUSHALL', 'Sync'],
    ['FLUSHALL', 'x'], ['FLUSHALL', 'SYNC', 'ASYNC'],
  ] },
  { name: 'FLUSHALL inside MULTI', steps: [
    ['SET', 'a', '1'], ['MULTI'], ['FLUSHALL'], ['DBSIZE'], ['EXEC'],
  ] },

  // ---------------------------------------------------------------- INFO
  { name: 'INFO of an unknown section is empty', steps: [['INFO', 'nosuch'], ['INFO', 'NoSuch', 'other']] },
  { name: 'INFO sections come in Redis order whatever the argument order', steps: [
    ['INFO', 'cluster', 'modules'], ['INFO', 'CLUSTER'], ['INFO', 'modules'], ['INFO', 'module_list'],
    ['INFO', 'keyspace', 'cluster'],
  ] },
  { name: 'INFO keyspace lists every non-empty db', steps: [
    ['INFO', 'keyspace'], ['SET', 'k', 'v'], ['SET', 'k2', 'v'], ['SELECT', '3'], ['SET', 'z', '1'],
    ['INFO', 'keyspace'], ['INFO', 'Keyspace', 'nosuch'], ['FLUSHALL'], ['INFO', 'keyspace'],
  ] },
  { name: 'INFO default, all, everything are bulk strings', steps: [
    { cmd: ['INFO'], compare: 'type' }, { cmd: ['INFO', 'default'], compare: 'type' },
    { cmd: ['INFO', 'all'], compare: 'type' }, { cmd: ['INFO', 'everything'], compare: 'type' },
    { cmd: ['INFO', 'server', 'clients'], compare: 'type' }, { cmd: ['INFO', 'commandstats'], compare: 'type' },
  ] },

  // ---------------------------------------------------------------- TIME / LASTSAVE / SAVE / BGSAVE / ROLE
  { name: 'TIME and LASTSAVE', steps: [
    { cmd: ['TIME'], compare: 'type' }, ['TIME', 'x'], { cmd: ['LASTSAVE'], compare: 'type' },
    ['LASTSAVE', 'x'],
  ] },
  { name: 'SAVE, and SAVE refused inside MULTI', steps: [
    ['SAVE'], ['SAVE', 'x'], ['MULTI'], ['SAVE'], ['EXEC'],
  ] },
  { name: 'BGSAVE syntax, then scheduled inside EXEC', steps: [
    ['BGSAVE', 'x'], ['BGSAVE', 'SCHEDULE', 'x'], ['BGSAVE'],
    { cmd: ['MULTI'], sleep: 500 }, ['BGSAVE'], ['EXEC'], { cmd: ['PING'], sleep: 500 },
  ] },
  { name: 'ROLE', steps: [['ROLE'], ['ROLE', 'x']] },

  // ---------------------------------------------------------------- SHUTDOWN (errors only)
  { name: 'SHUTDOWN argument errors and ABORT without a shutdown', steps: [
    ['SHUTDOWN', 'foo'], ['SHUTDOWN', 'NOSAVE', 'SAVE'], ['SHUTDOWN', 'ABORT', 'NOW'],
    ['SHUTDOWN', 'ABORT', 'NOSAVE'], ['SHUTDOWN', 'abort'], ['SHUTDOWN', 'NOW', 'bad'],
    ['MULTI'], ['SHUTDOWN'], ['EXEC'],
  ] },

  // ---------------------------------------------------------------- MONITOR
  { name: 'MONITOR answers OK and then streams', steps: [['MONITOR'], ['PING']] },
  { name: 'MONITOR arity, and a second MONITOR is ignored', steps: [
    ['MONITOR', 'x'],
    { raw: raw(['MONITOR'], ['MONITOR'], ['ECHO', 'after']), replies: 2 },
  ] },
  { name: 'MONITOR inside EXEC is refused', steps: [['MULTI'], ['MONITOR'], ['EXEC'], ['PING']] },

  // ---------------------------------------------------------------- CONFIG GET
  { name: 'CONFIG GET exact names echo the given case', steps: [
    ['CONFIG', 'GET', 'maxclients'], ['CONFIG', 'GET', 'MAXCLIENTS'], ['CONFIG', 'GET', 'nosuch'],
    ['CONFIG', 'GET', 'hz', 'hz'], ['CONFIG', 'GET', 'HZ', 'hz'], ['CONFIG', 'GET', 'timeout'],
    ['CONFIG', 'GET', 'databases'], ['CONFIG', 'GET', 'maxmemory-policy'], ['CONFIG', 'GET', 'requirepass'],
    ['CONFIG', 'GET', 'proto-max-bulk-len'], ['CONFIG', 'GET', 'client-query-buffer-limit'],
    ['CONFIG', 'GET', 'client-output-buffer-limit'], ['CONFIG', 'GET', 'tcp-keepalive'],
    ['CONFIG', 'GET', 'busy-reply-threshold'], ['CONFIG', 'GET', 'bind'],
  ] },
  { name: 'CONFIG GET several names and patterns', steps: [
    { cmd: ['CONFIG', 'GET', 'hz', 'timeout'], compare: 'sorted' },
    { cmd: ['CONFIG', 'GET', 'maxclients', 'nosuch', 'databases'], compare: 'sorted' },
    ['CONFIG', 'GET', 'maxmemory-p*'], ['CONFIG', 'GET', 'h?'], ['CONFIG', 'GET', 'MAXMEMORY-POL*'],
    ['CONFIG', 'GET', 'nosuch*'], ['CONFIG', 'GET', '[h]z'],
  ] },
  { name: 'CONFIG GET arity', steps: [['CONFIG', 'GET'], ['CONFIG'], ['CONFIG', 'nosuch'], ['CONFIG', 'nosuch', 'x']] },

  // ---------------------------------------------------------------- CONFIG SET
  { name: 'CONFIG SET arity, pairs and unknown options', steps: [
    ['CONFIG', 'SET', 'hz'], ['CONFIG', 'SET', 'hz', '11', 'maxclients'], ['CONFIG', 'SET', 'nosuch', '1'],
    ['CONFIG', 'SET', 'hz', '11', 'nosuch', '1'], ['CONFIG', 'GET', 'hz'], ['CONFIG', 'SET', 'NoSuch', 'x', 'hz', '1'],
  ] },
  { name: 'CONFIG SET immutable and duplicate parameters', steps: [
    ['CONFIG', 'SET', 'databases', '1'], ['CONFIG', 'SET', 'DATABASES', '1'],
    ['CONFIG', 'SET', 'hz', '11', 'hz', '12'], ['CONFIG', 'SET', 'HZ', '10', 'Hz', '11'],
    ['CONFIG', 'SET', 'databases', '1', 'nosuch', '2'], ['CONFIG', 'GET', 'hz'], ['CONFIG', 'SET', 'dir', '/nonexistent'],
    ['CONFIG', 'SET', 'hz', '11', 'DIR', '/tmp'], ['CONFIG', 'GET', 'hz'],
  ] },
  { name: 'CONFIG SET integer validation', steps: [
    ['CONFIG', 'SET', 'hz', 'abc'], ['CONFIG', 'SET', 'HZ', 'abc'], ['CONFIG', 'SET', 'timeout', '-1'],
    ['CONFIG', 'SET', 'timeout', '1.5'], ['CONFIG', 'SET', 'timeout', '0x10'], ['CONFIG', 'SET', 'timeout', '+5'],
    ['CONFIG', 'SET', 'timeout', '007'], ['CONFIG', 'SET', 'timeout', ''], ['CONFIG', 'SET', 'timeout', '9007199254740993'],
    ['CONFIG', 'SET', 'maxclients', '0'], ['CONFIG', 'SET', 'maxclients', 'abc'], ['CONFIG', 'SET', 'maxclients', '99999999999'],
    ['CONFIG', 'SET', 'tcp-keepalive', '-1'], ['CONFIG', 'SET', 'busy-reply-threshold', '-1'], ['CONFIG', 'SET', 'hz', '-5'],
    ['CONFIG', 'GET', 'timeout'],
  ] },
  { name: 'CONFIG SET memory and enum validation', steps: [
    ['CONFIG', 'SET', 'maxmemory', '1x'], ['CONFIG', 'SET', 'maxmemory', '-1'], ['CONFIG', 'SET', 'maxmemory', '1.5gb'],
    ['CONFIG', 'SET', 'proto-max-bulk-len', '1'], ['CONFIG', 'SET', 'proto-max-bulk-len', '1x'],
    ['CONFIG', 'SET', 'client-query-buffer-limit', '1k'], ['CONFIG', 'SET', 'maxmemory-policy', 'foo'],
    ['CONFIG', 'GET', 'maxmemory'],
  ] },
  { name: 'CONFIG SET client-output-buffer-limit', steps: [
    ['CONFIG', 'SET', 'client-output-buffer-limit', 'x'],
    ['CONFIG', 'SET', 'client-output-buffer-limit', 'foo 1 2 3'],
    ['CONFIG', 'SET', 'client-output-buffer-limit', 'master 1 2 3'],
    ['CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub x 2 3'],
    ['CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub 1 2 x'],
    ['CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub 1mb 1kb 3'],
    ['CONFIG', 'GET', 'client-output-buffer-limit'],
    ['CONFIG', 'SET', 'client-output-buffer-limit', 'replica 1gb 2mb 10 normal 1 2 3'],
    ['CONFIG', 'GET', 'client-output-buffer-limit'],
    ['CONFIG', 'SET', 'client-output-buffer-limit', 'normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60'],
    ['CONFIG', 'GET', 'client-output-buffer-limit'],
  ] },
  { name: 'CONFIG SET applies values (and restores them)', steps: [
    ['CONFIG', 'SET', 'hz', '20'], ['CONFIG', 'GET', 'hz'], ['CONFIG', 'SET', 'hz', '0'], ['CONFIG', 'GET', 'hz'],
    ['CONFIG', 'SET', 'hz', '1000'], ['CONFIG', 'GET', 'hz'], ['CONFIG', 'SET', 'hz', '10'],
    ['CONFIG', 'SET', 'maxmemory', '100mb'], ['CONFIG', 'GET', 'maxmemory'], ['CONFIG', 'SET', 'maxmemory', '1GB'],
    ['CONFIG', 'GET', 'maxmemory'], ['CONFIG', 'SET', 'maxmemory', 'mb'], ['CONFIG', 'GET', 'maxmemory'],
    ['CONFIG', 'SET', 'maxmemory', '0'],
    ['CONFIG', 'SET', 'maxmemory-policy', 'ALLKEYS-LRU'], ['CONFIG', 'GET', 'maxmemory-policy'],
    ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction'],
    ['CONFIG', 'SET', 'proto-max-bulk-len', '2mb'], ['CONFIG', 'GET', 'proto-max-bulk-len'],
    ['CONFIG', 'SET', 'proto-max-bulk-len', '512mb'], ['CONFIG', 'GET', 'proto-max-bulk-len'],
  ] },
  { name: 'CONFIG SET of several options is atomic', steps: [
    ['CONFIG', 'SET', 'hz', '15', 'timeout', 'abc'], ['CONFIG', 'GET', 'hz'],
    ['CONFIG', 'SET', 'hz', '15', 'timeout', '100'], ['CONFIG', 'GET', 'hz'], ['CONFIG', 'GET', 'timeout'],
    ['CONFIG', 'SET', 'timeout', '0', 'hz', '10'], ['CONFIG', 'GET', 'timeout'], ['CONFIG', 'GET', 'hz'],
  ] },
  { name: 'CONFIG RESETSTAT, REWRITE, HELP', steps: [
    ['CONFIG', 'RESETSTAT'], ['CONFIG', 'RESETSTAT', 'x'], ['CONFIG', 'REWRITE'], ['CONFIG', 'REWRITE', 'x'],
    ['CONFIG', 'HELP'], ['CONFIG', 'help', 'x'], ['config', 'HeLp'],
  ] },

  { name: 'CONFIG aliases: old names read and write the same option', steps: [
    ['CONFIG', 'SET', 'hash-max-ziplist-entries', '100'], ['CONFIG', 'GET', 'hash-max-listpack-entries'],
    ['CONFIG', 'GET', 'hash-max-ziplist-entries'], ['CONFIG', 'SET', 'hash-max-listpack-entries', '512'],
    ['CONFIG', 'SET', 'zset-max-ziplist-value', '1kb'], ['CONFIG', 'GET', 'zset-max-listpack-value'],
    ['CONFIG', 'SET', 'zset-max-ziplist-value', '64'], ['CONFIG', 'SET', 'list-max-ziplist-size', '-3'],
    ['CONFIG', 'GET', 'list-max-listpack-size'], ['CONFIG', 'SET', 'list-max-ziplist-size', '-2'],
    ['CONFIG', 'SET', 'lua-time-limit', '1000'], ['CONFIG', 'GET', 'busy-reply-threshold'], ['CONFIG', 'GET', 'lua-time-limit'],
    ['CONFIG', 'SET', 'busy-reply-threshold', '5000'], ['CONFIG', 'SET', 'slave-read-only', 'no'],
    ['CONFIG', 'GET', 'replica-read-only'], ['CONFIG', 'SET', 'replica-read-only', 'yes'], ['CONFIG', 'GET', 'slaveof'],
    ['CONFIG', 'SET', 'slaveof', 'no one'], ['CONFIG', 'SET', 'list-max-ziplist-entries', '5'],
    { cmd: ['CONFIG', 'GET', '*ziplist*'], compare: 'sorted' }, { cmd: ['CONFIG', 'GET', 'slave-*'], compare: 'sorted' },
  ] },
  { name: 'CONFIG SET of Redis parameters without effect here keeps their value; bad values refused', steps: [
    ['CONFIG', 'SET', 'save', '3600 1 300 100'], ['CONFIG', 'GET', 'save'], ['CONFIG', 'SET', 'save', '3600'],
    ['CONFIG', 'SET', 'save', ''], ['CONFIG', 'SET', 'activerehashing', 'NO'], ['CONFIG', 'GET', 'activerehashing'],
    ['CONFIG', 'SET', 'activerehashing', 'yes'], ['CONFIG', 'SET', 'repl-backlog-size', '1'], ['CONFIG', 'GET', 'repl-backlog-size'],
    ['CONFIG', 'SET', 'repl-backlog-size', '1mb'], ['CONFIG', 'SET', 'oom-score-adj-values', '0 200'],
    ['CONFIG', 'SET', 'maxmemory-clients', '200%'], ['CONFIG', 'SET', 'maxmemory-clients', '5%'], ['CONFIG', 'GET', 'maxmemory-clients'],
    ['CONFIG', 'SET', 'maxmemory-clients', '0'], ['CONFIG', 'SET', 'latency-tracking-info-percentiles', '50 101'],
    ['CONFIG', 'SET', 'latency-tracking-info-percentiles', '50.0 99.50'], ['CONFIG', 'GET', 'latency-tracking-info-percentiles'],
    ['CONFIG', 'SET', 'latency-tracking-info-percentiles', '50 99 99.9'], ['CONFIG', 'SET', 'dbfilename', 'x.rdb'],
    ['CONFIG', 'SET', 'daemonize', 'yes'], ['CONFIG', 'SET', 'activedefrag', 'yes'], ['CONFIG', 'SET', 'unixsocketperm', '700'],
  ] },
  { name: 'WAIT without replicas answers 0', steps: [
    ['WAIT', '0', '0'], ['WAIT', '1', '5'], ['WAIT', 'x', '0'], ['WAIT', '0', '-1'], ['WAIT', '0', 'x'], ['WAIT', '0'],
    ['MULTI'], ['WAIT', '1', '0'], ['EXEC'],
  ] },
  { name: 'COMMAND DOCS: Redis 7.0.15\'s documentation', steps: [
    ['COMMAND', 'DOCS', 'get'], ['COMMAND', 'DOCS', 'SET', 'config|get', 'nosuch'], ['COMMAND', 'DOCS', 'client|list'],
    ['COMMAND', 'DOCS', 'zadd', 'xadd', 'eval'], ['COMMAND', 'DOCS', 'nosuch'],
    // Containers (CLIENT, CONFIG) list their subcommands in Redis's dict order, which changes from run to run.
  ] },
  { name: 'COMMAND GETKEYSANDFLAGS errors and read commands', steps: [
    ['COMMAND', 'GETKEYSANDFLAGS', 'get'], ['COMMAND', 'GETKEYSANDFLAGS', 'get', 'k'], ['COMMAND', 'GETKEYSANDFLAGS', 'mget', 'a', 'b'],
    ['COMMAND', 'GETKEYSANDFLAGS', 'nosuch', 'x'], ['COMMAND', 'GETKEYSANDFLAGS', 'ping', 'x'], ['COMMAND', 'GETKEYSANDFLAGS', 'get', 'a', 'b'],
  ] },

  // ---------------------------------------------------------------- FUNCTION / SCRIPT FLUSH
  { name: 'FUNCTION FLUSH options', steps: [
    ['FUNCTION', 'FLUSH'], ['FUNCTION', 'FLUSH', 'ASYNC'], ['FUNCTION', 'flush', 'sync'],
    ['FUNCTION', 'FLUSH', 'x'], ['FUNCTION', 'FLUSH', 'ASYNC', 'SYNC'], ['FUNCTION', 'Flush', 'a', 'b'],
    ['FUNCTION'], ['FUNCTION', 'nosuch'],
  ] },
  { name: 'SCRIPT FLUSH options', steps: [
    ['SCRIPT', 'FLUSH'], ['SCRIPT', 'FLUSH', 'async'], ['SCRIPT', 'FLUSH', 'SYNC'], ['SCRIPT', 'FLUSH', 'x'],
    ['SCRIPT', 'FLUSH', 'SYNC', 'ASYNC'], ['SCRIPT'], ['SCRIPT', 'nosuch'],
  ] },
];
export default scripts;
