/**
 * Configuration as Redis 7.0.15 has it, compared with a real redis-server: every name its
 * CONFIG GET * lists (aliases included) is known here, with the same default, the same
 * mutability and the same answers to valid and invalid CONFIG SET values; CONFIG GET
 * patterns and several arguments; redis.conf files (syntax, include, repeated directives,
 * errors with Redis's text and line numbers, command-line options after the file) and
 * CONFIG REWRITE; requirepass across a restart.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { startOurs, startRedis, freePort, MAIN, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { arrayElements } from '../diff/harness.js';

/** Parameters another change defines (keyspace notifications, eviction tuning). */
/**
 * Values that depend on how each server was started (ports, directories, our persistence
 * mode), and options that differ on purpose (README): bind, port and appendfsync cannot be
 * changed at run time here; dir is fixed.
 */
const STARTUP_DEPENDENT = new Set(['port', 'dir', 'pidfile', 'bind', 'appendfsync', 'daemonize']);
/** CONFIG SET values Redis applies with side effects outside the server (TLS files, OOM score, AOF files). */
const NOT_SET = new Set([...STARTUP_DEPENDENT, 'requirepass', 'appendonly', 'oom-score-adj', 'oom-score-adj-values',
  'tls-cert-file', 'tls-key-file', 'tls-key-file-pass', 'tls-client-cert-file', 'tls-client-key-file', 'tls-client-key-file-pass',
  'tls-dh-params-file', 'tls-ca-cert-file', 'tls-ca-cert-dir', 'tls-protocols', 'tls-ciphers', 'tls-ciphersuites',
  'tls-prefer-server-ciphers', 'tls-session-caching', 'tls-session-cache-size', 'tls-session-cache-timeout', 'tls-port',
  'tls-auth-clients', 'tls-replication', 'tls-cluster', 'maxclients', 'shutdown-on-sigterm', 'shutdown-on-sigint']);

let ours: Proc;
let REDIS_NAMES: Set<string>;
let redis: Proc;
let oc: RawClient;
let rc: RawClient;

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
  [oc, rc] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
  REDIS_NAMES = new Set(pairs(await rc.call('CONFIG', 'GET', '*')).keys());
});
after(async () => {
  oc?.close();
  rc?.close();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

function pairs(reply: Buffer): Map<string, string> {
  const els = arrayElements(reply)!.map((e) => {
    const s = e.toString('latin1');
    return s.slice(s.indexOf('\r\n') + 2, -2);
  });
  const m = new Map<string, string>();
  for (let i = 0; i < els.length; i += 2) m.set(els[i], els[i + 1]);
  return m;
}

async function both(...args: string[]): Promise<[string, string]> {
  const [a, b] = await Promise.all([oc.call(...args), rc.call(...args)]);
  return [a.toString('latin1'), b.toString('latin1')];
}

describe('CONFIG GET and SET against redis-server 7.0.15', () => {
  it('knows every parameter redis-server lists, with its default', async () => {
    const theirs = pairs(await rc.call('CONFIG', 'GET', '*'));
    const mine = pairs(await oc.call('CONFIG', 'GET', '*'));
    assert.ok(theirs.size > 150);
    const missing: string[] = [];
    const differ: string[] = [];
    for (const [name, v] of theirs) {
      if (!mine.has(name)) missing.push(name);
      else if (!STARTUP_DEPENDENT.has(name) && mine.get(name) !== v) differ.push(`${name}: ours ${JSON.stringify(mine.get(name))}, redis ${JSON.stringify(v)}`);
    }
    assert.deepEqual(missing, []);
    assert.deepEqual(differ, []);
  });

  it('answers every CONFIG SET as redis-server does (invalid values, valid ones, immutable and protected names)', async () => {
    const theirs = pairs(await rc.call('CONFIG', 'GET', '*'));
    const probes = ['zz_notvalid', '-1', '0', '1', '65536', '9223372036854775807', '9223372036854775808', '18446744073709551616',
      '', '1.5', 'YES', 'No', '64mb', '1GB', '10%', '101%', 'local', 'allkeys-lru', '3600 1 300 100', '1 2', '050', '+5'];
    const mismatches: string[] = [];
    for (const [name, original] of theirs) {
      if (NOT_SET.has(name)) continue;
      for (const v of probes) {
        const [a, b] = await both('CONFIG', 'SET', name, v);
        if (a !== b) mismatches.push(`SET ${name} ${JSON.stringify(v)}: ours ${JSON.stringify(a)}, redis ${JSON.stringify(b)}`);
        if (b.startsWith('+')) {
          const [ga, gb] = await both('CONFIG', 'GET', name);
          if (ga !== gb) mismatches.push(`GET ${name} after ${JSON.stringify(v)}: ours ${JSON.stringify(ga)}, redis ${JSON.stringify(gb)}`);
        }
        // Back to the original value, on both (each side's own, for an option started differently).
        await both('CONFIG', 'SET', name, original);
      }
    }
    assert.deepEqual(mismatches, []);
  });

  it('immutable and protected names, unknown names, duplicates, odd arguments: Redis errors', async () => {
    for (const cmd of [
      ['CONFIG', 'SET', 'daemonize', 'no'], ['CONFIG', 'SET', 'dbfilename', 'x.rdb'], ['CONFIG', 'SET', 'enable-debug-command', 'yes'],
      ['CONFIG', 'SET', 'nosuch', '1'], ['CONFIG', 'SET', 'list-max-ziplist-entries', '1'], ['CONFIG', 'SET', 'slaveof', 'no one'],
      ['CONFIG', 'SET', 'replicaof', 'no one'], ['CONFIG', 'SET', 'timeout', '0', 'timeout', '1'], ['CONFIG', 'SET', 'timeout'],
      ['CONFIG', 'SET', 'lua-time-limit', 'abc'], ['CONFIG', 'SET', 'LUA-TIME-LIMIT', '-5'], ['CONFIG', 'SET', 'Slave-Read-Only', 'maybe'],
      ['CONFIG', 'SET', 'timeout', '0', 'nosuch', '1'], ['CONFIG', 'SET', 'nosuch', '1', 'daemonize', 'no'],
      ['CONFIG', 'SET', 'hash-max-ziplist-entries', '100', 'hash-max-listpack-entries', '200'], ['CONFIG', 'GET', 'hash-max-listpack-entries'],
      ['CONFIG', 'SET', 'hash-max-ziplist-entries', '512'], ['CONFIG', 'GET', 'HASH-MAX-ZIPLIST-ENTRIES'],
      ['CONFIG', 'SET', 'lua-time-limit', '4000'], ['CONFIG', 'GET', 'busy-reply-threshold'], ['CONFIG', 'SET', 'busy-reply-threshold', '5000'],
      ['CONFIG', 'SET', 'save', '3600 1 300 100'], ['CONFIG', 'GET', 'save'], ['CONFIG', 'SET', 'save', '5 '], ['CONFIG', 'GET', 'save'],
      ['CONFIG', 'SET', 'save', ''], ['CONFIG', 'GET', 'maxmemory', 'maxmemory', 'MAXMEMORY'],
      ['CONFIG', 'SET', 'client-output-buffer-limit', 'normal 1mb 2mb 3'], ['CONFIG', 'GET', 'client-output-buffer-limit'],
      ['CONFIG', 'SET', 'client-output-buffer-limit', 'normal 0 0 0'],
    ]) {
      const [a, b] = await both(...cmd);
      assert.equal(a, b, cmd.join(' '));
    }
  });

  it('CONFIG GET patterns and several arguments match the same names (in any order, as Redis\'s dict)', async () => {
    for (const args of [['*ziplist*'], ['*listpack*'], ['slave*'], ['*'], ['hash-*', 'zset-*'], ['maxmemory*', 'maxmemory'],
      ['?z*'], ['[lz]*-max-*'], ['lua*'], ['busy*'], ['*REPLICA*'], ['nosuch*'], ['hash-max-ziplist-entries', 'hash-max-listpack-entries']]) {
      const [a, b] = await Promise.all([oc.call('CONFIG', 'GET', ...args), rc.call('CONFIG', 'GET', ...args)]);
      const pa = pairs(a);
      const pb = pairs(b);
      // Our own options (http-port, token...) are listed too: only Redis's names are compared.
      for (const n of [...pa.keys()]) if (!REDIS_NAMES.has(n)) pa.delete(n);
      for (const n of STARTUP_DEPENDENT) {
        if (pa.has(n) && pb.has(n)) pa.set(n, pb.get(n)!);
      }
      assert.deepEqual([...pa].sort(), [...pb].sort(), args.join(' '));
    }
  });
});

// ---------------------------------------------------------------- redis.conf

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-conf-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Run a server binary to its exit with a config file; returns its exit code and stderr. */
function runToExit(bin: 'ours' | 'redis', conf: string, extra: string[] = []): { code: number | null; err: string } {
  const r = bin === 'ours'
    ? spawnSync(process.execPath, [MAIN, conf, ...extra], { encoding: 'latin1', timeout: 15000 })
    : spawnSync('redis-server', [conf, ...extra], { encoding: 'latin1', timeout: 15000 });
  // Redis logs a few lines (pid, version) to stdout first; the fatal text goes to stderr.
  return { code: r.status, err: r.stderr.trim() };
}

/** Connect once a server started by hand listens (up to 10 s); null if it never does. */
async function connectWhenUp(port: number): Promise<RawClient | null> {
  for (let i = 0; i < 100; i++) {
    try {
      return await RawClient.connect(port);
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return null;
}

async function stop(proc: ReturnType<typeof spawn>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

function writeConf(name: string, text: string): string {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
}

describe('redis.conf', () => {
  it('refuses what Redis refuses, with its text and line number', () => {
    const cases: [string, string[]][] = [
      ['# comment\n\nport 0\n  bogus x\n', []],
      ['port 0\nfoo "bar\n', []],
      ['port "0"x\n', []],
      ['timeout abc\n', []],
      ['timeout 1 2\n', []],
      ['save 10\n', []],
      ['maxmemory-policy lru\n', []],
      ['appendonly maybe\n', []],
      ['hz 0\n', ['--timeout', 'x']],
      ['port 0\n', ['--save', '1', '2', '3']],
      ['sentinel monitor x\n', []],
      ["slaveof 'a' b c\n", []],
    ];
    for (const [text, extra] of cases) {
      const f = writeConf('bad.conf', text);
      const a = runToExit('ours', f, extra);
      const b = runToExit('redis', f, extra);
      assert.equal(a.err, b.err, JSON.stringify(text));
      assert.equal(a.code, 1);
      assert.equal(b.code, 1);
    }
    // A missing include: Redis logs it (with its log prefix) and exits.
    const f = writeConf('bad.conf', 'include /nonexistent/file.conf\n');
    const a = runToExit('ours', f);
    assert.equal(a.err, "Fatal error, can't open config file '/nonexistent/file.conf': No such file or directory");
    assert.equal(a.code, 1);
  });

  it('reads quoting, aliases, include, repeated directives; command-line options override the file', async () => {
    const inc = writeConf('inc.conf', 'hash-max-ziplist-entries 77\ntimeout 5\n');
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(tmp, 'data-'));
    const conf = writeConf('good.conf', [
      '# a redis.conf',
      `port ${port}`,
      'http-port -1',
      `dir "${dir}"`,
      'appendfsync no',
      'save 3600 1',
      'save 300 100',
      "masteruser 'it\\'s'",
      'masterauth "a\\x41\\tb"',
      `include ${inc}`,
      'timeout 7',
      'slave-read-only no',
      'client-output-buffer-limit normal 1mb 2mb 3',
      'client-output-buffer-limit pubsub 64mb 16mb 90',
      'list-max-ziplist-entries 512',
      'lua-replicate-commands yes',
      'daemonize no',
      'loglevel WARNING',
      'user alice on >pw ~* +@all',
      '',
    ].join('\n'));
    const proc = spawn(process.execPath, [MAIN, conf, '--maxmemory-policy', 'allkeys-lru', '--save', '60', '10'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const c = await connectWhenUp(port);
      assert.ok(c !== null, 'server started');
      const get = async (n: string) => pairs(await c!.call('CONFIG', 'GET', n)).get(n);
      assert.equal(await get('save'), '3600 1 300 100 60 10'); // the command line's save line adds to the file's
      assert.equal(await get('timeout'), '7');
      assert.equal(await get('hash-max-listpack-entries'), '77');
      assert.equal(await get('replica-read-only'), 'no');
      assert.equal(await get('masteruser'), "it's");
      assert.equal(await get('masterauth'), 'aA\tb');
      assert.equal(await get('loglevel'), 'warning');
      assert.equal(await get('maxmemory-policy'), 'allkeys-lru');
      assert.equal(await get('client-output-buffer-limit'), 'normal 1048576 2097152 3 slave 268435456 67108864 60 pubsub 67108864 16777216 90');
      assert.equal((await c.call('AUTH', 'alice', 'pw')).toString(), '+OK\r\n');
      const info = (await c.call('INFO', 'server')).toString();
      assert.match(info, new RegExp(`config_file:${conf.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\r\n`));
      // CONFIG REWRITE: lines rewritten in place, duplicates dropped, new values appended.
      assert.equal((await c.call('CONFIG', 'SET', 'timeout', '9', 'slowlog-max-len', '200')).toString(), '+OK\r\n');
      assert.equal((await c.call('CONFIG', 'REWRITE')).toString(), '+OK\r\n');
      const text = fs.readFileSync(conf, 'latin1');
      const lines = text.split('\n');
      assert.equal(lines[0], '# a redis.conf');
      assert.ok(lines.includes('timeout 9'));
      assert.ok(!lines.includes('timeout 7'));
      assert.equal(lines.filter((l) => l.startsWith('save ')).join('|'), 'save 3600 1|save 300 100|save 60 10');
      assert.ok(lines.includes('replica-read-only no'), text);
      assert.ok(lines.includes('client-output-buffer-limit pubsub 64mb 16mb 90'), text);
      assert.ok(lines.includes('# Generated by CONFIG REWRITE'));
      assert.ok(lines.includes('slowlog-max-len 200'));
      assert.ok(lines.includes('maxmemory-policy allkeys-lru'));
      assert.ok(lines.includes('masterauth "aA\\tb"'), text);
      c.close();
    } finally {
      await stop(proc);
    }
  });

  it('CONFIG REWRITE writes what redis-server writes for the same changes', async () => {
    const seed = 'port 0\n# keep me\nsave 3600 1\nsave 300 100\ntimeout 3\nslave-read-only yes\nhz 10\n';
    const results: string[] = [];
    for (const bin of ['ours', 'redis'] as const) {
      const port = await freePort();
      const dir = fs.mkdtempSync(path.join(tmp, 'rw-'));
      const conf = writeConf(`rw-${bin}.conf`, seed.replace('port 0', `port ${port}`) + `dir "${dir}"\n` + (bin === 'ours' ? 'http-port -1\nappendfsync no\n' : ''));
      const proc = bin === 'ours'
        ? spawn(process.execPath, [MAIN, conf], { stdio: 'ignore' })
        : spawn('redis-server', [conf], { stdio: 'ignore' });
      try {
        const c = await connectWhenUp(port);
        for (const cmd of [['CONFIG', 'SET', 'timeout', '0'], ['CONFIG', 'SET', 'save', '900 1'], ['CONFIG', 'SET', 'maxmemory', '100mb'],
          ['CONFIG', 'SET', 'lua-time-limit', '3000'], ['CONFIG', 'SET', 'masterauth', 'p w'], ['CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub 1gb 1kb 5'],
          ['CONFIG', 'SET', 'replica-read-only', 'no'], ['CONFIG', 'REWRITE']]) {
          assert.equal((await c!.call(...cmd)).toString(), '+OK\r\n', cmd.join(' '));
        }
        c!.close();
      } finally {
        await stop(proc);
      }
      // Lines that depend on the start-up (port, dir) and on our own options aside.
      // Redis appends new lines in its dict's (random) order: the appended part is compared sorted.
      const text = fs.readFileSync(conf, 'latin1').split('\n').filter((l) => !/^(port|dir|http-port|appendfsync) /.test(l));
      const sig = text.indexOf('# Generated by CONFIG REWRITE');
      results.push([...text.slice(0, sig + 1), ...text.slice(sig + 1).sort()].join('\n'));
    }
    assert.equal(results[0], results[1]);
  });
});

describe('requirepass across a restart', () => {
  it('CONFIG GET requirepass and the password in force agree after a restart', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'pw-'));
    let s = await startOurs([], {}, { dir });
    let c = await RawClient.connect(s.port);
    assert.equal((await c.call('CONFIG', 'SET', 'requirepass', 'pw1')).toString(), '+OK\r\n');
    c.close();
    await s.stop();
    s = await startOurs([], {}, { dir });
    c = await RawClient.connect(s.port);
    assert.match((await c.call('GET', 'x')).toString(), /^-NOAUTH/);
    assert.equal((await c.call('AUTH', 'pw1')).toString(), '+OK\r\n');
    assert.equal((await c.call('CONFIG', 'GET', 'requirepass')).toString(), '*2\r\n$11\r\nrequirepass\r\n$3\r\npw1\r\n');
    // Cleared: no password after the next restart either.
    assert.equal((await c.call('CONFIG', 'SET', 'requirepass', '')).toString(), '+OK\r\n');
    c.close();
    await s.stop();
    s = await startOurs([], {}, { dir });
    c = await RawClient.connect(s.port);
    assert.equal((await c.call('CONFIG', 'GET', 'requirepass')).toString(), '*2\r\n$11\r\nrequirepass\r\n$0\r\n\r\n');
    c.close();
    await s.stop();
    // A password given at start-up wins over the saved one.
    s = await startOurs(['--requirepass', 'given'], {}, { dir });
    c = await RawClient.connect(s.port);
    assert.equal((await c.call('AUTH', 'given')).toString(), '+OK\r\n');
    assert.equal((await c.call('CONFIG', 'GET', 'requirepass')).toString(), '*2\r\n$11\r\nrequirepass\r\n$5\r\ngiven\r\n');
    c.close();
    await s.stop();
  });
});
