/**
 * Server, CLIENT and connection commands where a byte-for-byte differential comparison is not
 * possible (values that depend on the connection, the time or the process), through ioredis
 * and raw RESP: INFO fields and their changes, redis-cli compatibility, CONFIG GET/SET effects,
 * AUTH with requirepass, DEBUG (against a redis-server with enable-debug-command), CLIENT LIST
 * and KILL, the Redis 7.2 additions (CLIENT SETINFO, NO-TOUCH), MONITOR, SHUTDOWN and the
 * command table rows against the real server's COMMAND INFO.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { OPTIONS } from '../../dist/config.js';

let ours: Proc;
let redis: Proc;
const opened: Array<{ disconnect(): void } | RawClient> = [];

before(async () => {
  // Memory-only: with LMDB persistence every commit already counts as a save (rdb_changes_since_last_save).
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no', '--enable-debug-command', 'yes']), startRedis(['--enable-debug-command', 'yes'])]);
});
after(async () => {
  for (const c of opened) (c instanceof RawClient ? c.close() : c.disconnect());
  await Promise.all([ours?.stop(), redis?.stop()]);
});

function io(port: number, opts: Record<string, unknown> = {}): Redis {
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => null, ...opts });
  r.on('error', () => {});
  opened.push(r);
  return r;
}

async function raw(port: number): Promise<RawClient> {
  const c = await RawClient.connect(port);
  opened.push(c);
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Info {
  sections: string[];
  fields: Map<string, string>;
}

/** Parse INFO text strictly: CRLF lines, "# Section" headers, blank separators, name:value. */
function parseInfo(text: string): Info {
  assert.ok(!/[^\r]\n/.test(text), 'every line ends with CRLF');
  const sections: string[] = [];
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    if (line === '') continue;
    if (line.startsWith('# ')) {
      sections.push(line.slice(2));
      continue;
    }
    const i = line.indexOf(':');
    assert.ok(i > 0, `field line: ${JSON.stringify(line)}`);
    const name = line.slice(0, i);
    assert.match(name, /^[a-z0-9_|.-]+$/i, `field name ${name}`);
    assert.ok(!fields.has(name), `duplicate field ${name}`);
    fields.set(name, line.slice(i + 1));
  }
  return { sections, fields };
}

async function info(r: Redis, ...sections: string[]): Promise<Info> {
  return parseInfo((await r.call('INFO', ...sections)) as string);
}

function num(i: Info, name: string): number {
  const v = i.fields.get(name);
  assert.ok(v !== undefined, `INFO has ${name}`);
  assert.match(v, /^-?\d+(\.\d+)?$/, `${name} is a number: ${v}`);
  return Number(v);
}

// ---------------------------------------------------------------- INFO

describe('INFO', () => {
  it('lists the same sections as Redis for INFO, default, all and everything', async () => {
    const a = io(ours.port);
    const b = io(redis.port);
    for (const args of [[], ['default'], ['all'], ['everything'], ['commandstats', 'server'], ['ALL', 'nosuch']]) {
      const [x, y] = await Promise.all([info(a, ...args), info(b, ...args)]);
      assert.deepEqual(x.sections, y.sections, `INFO ${args.join(' ')}`);
    }
  });

  it('has every field tools read, with values that parse', async () => {
    const r = io(ours.port);
    await r.set('some', 'key');
    const i = await info(r, 'everything');
    assert.equal(i.fields.get('redis_version'), '7.0.15');
    assert.equal(i.fields.get('redis_mode'), 'standalone');
    assert.ok(i.fields.get('os')!.length > 0);
    assert.equal(num(i, 'arch_bits'), 64);
    assert.equal(num(i, 'process_id'), ours.proc.pid);
    assert.match(i.fields.get('run_id')!, /^[0-9a-f]{40}$/);
    assert.equal(num(i, 'tcp_port'), ours.port);
    assert.ok(num(i, 'uptime_in_seconds') >= 0);
    assert.equal(num(i, 'uptime_in_days'), 0);
    assert.equal(num(i, 'hz'), 10);
    for (const f of ['connected_clients', 'blocked_clients', 'maxclients', 'used_memory', 'used_memory_rss',
      'used_memory_peak', 'maxmemory', 'loading', 'rdb_changes_since_last_save', 'rdb_last_save_time',
      'aof_enabled', 'total_connections_received', 'total_commands_processed', 'instantaneous_ops_per_sec',
      'total_net_input_bytes', 'total_net_output_bytes', 'rejected_connections', 'expired_keys',
      'keyspace_hits', 'keyspace_misses', 'total_error_replies', 'connected_slaves', 'used_cpu_sys',
      'used_cpu_user', 'server_time_usec', 'lru_clock']) num(i, f);
    assert.equal(num(i, 'loading'), 0);
    assert.equal(num(i, 'blocked_clients'), 0);
    assert.equal(num(i, 'maxclients'), 10000);
    assert.ok(num(i, 'used_memory') > 0);
    assert.ok(num(i, 'used_memory_peak') >= num(i, 'used_memory') * 0.5);
    assert.match(i.fields.get('used_memory_human')!, /^\d+(\.\d\d[KMGTP]|B)$/);
    assert.equal(i.fields.get('maxmemory_policy'), 'noeviction');
    assert.equal(i.fields.get('role'), 'master');
    assert.equal(num(i, 'connected_slaves'), 0);
    assert.match(i.fields.get('master_replid')!, /^[0-9a-f]{40}$/);
    assert.notEqual(i.fields.get('master_replid'), i.fields.get('run_id'));
    assert.match(i.fields.get('used_cpu_sys')!, /^\d+\.\d{6}$/);
    assert.match(i.fields.get('used_cpu_user')!, /^\d+\.\d{6}$/);
    assert.match(i.fields.get('cmdstat_set')!, /^calls=\d+,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=\d+,failed_calls=\d+$/);
    assert.match(i.fields.get('db0')!, /^keys=\d+,expires=\d+,avg_ttl=\d+$/);
    assert.match(i.fields.get('latency_percentiles_usec_set')!, /^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$/);
    assert.equal(i.fields.get('cluster_enabled'), '0');
    const t = Number(i.fields.get('server_time_usec')) / 1000;
    assert.ok(Math.abs(t - Date.now()) < 5000, 'server_time_usec is now');
  });

  it('counters change when they should', async () => {
    const r = io(ours.port);
    await r.call('CONFIG', 'RESETSTAT');
    const i0 = await info(r, 'everything');
    assert.ok(num(i0, 'total_commands_processed') <= 2, 'RESETSTAT zeroes the command count');
    assert.equal(num(i0, 'total_error_replies'), 0);
    assert.equal(i0.sections.includes('Errorstats'), true);
    assert.equal([...i0.fields.keys()].filter((k) => k.startsWith('errorstat_')).length, 0);
    assert.equal(i0.fields.get('cmdstat_get'), undefined, 'commandstats cleared');

    await r.flushall();
    let k = await info(r, 'keyspace');
    assert.equal(k.fields.get('db0'), undefined);
    await r.set('a', '1');
    await r.set('b', '2');
    await r.select(4);
    await r.set('c', '3');
    await r.select(0);
    k = await info(r, 'keyspace');
    assert.equal(k.fields.get('db0'), 'keys=2,expires=0,avg_ttl=0');
    assert.equal(k.fields.get('db4'), 'keys=1,expires=0,avg_ttl=0');

    await r.get('a'); // hit
    await r.get('nope'); // miss
    await assert.rejects(r.call('GET')); // rejected: arity
    await assert.rejects(r.call('SET', 'a', 'b', 'c')); // failed: syntax error
    await assert.rejects(r.call('NOSUCHCMD'));
    const x = new Redis({ port: ours.port, host: '127.0.0.1', lazyConnect: true });
    x.on('error', () => {});
    await x.connect();
    const i1 = await info(r, 'everything');
    assert.ok(num(i1, 'total_commands_processed') > num(i0, 'total_commands_processed') + 6);
    assert.equal(num(i1, 'keyspace_hits') - num(i0, 'keyspace_hits'), 1);
    assert.equal(num(i1, 'keyspace_misses') - num(i0, 'keyspace_misses'), 1);
    // The total is the sum per code.
    assert.equal(i1.fields.get('errorstat_ERR'), 'count=3');
    let perCode = 0;
    for (const [k, v] of i1.fields) if (k.startsWith('errorstat_')) perCode += Number(v.slice('count='.length));
    assert.equal(num(i1, 'total_error_replies'), perCode);
    assert.match(i1.fields.get('cmdstat_get')!, /^calls=2,.*rejected_calls=1,failed_calls=0$/);
    assert.match(i1.fields.get('cmdstat_set')!, /^calls=4,.*rejected_calls=0,failed_calls=1$/);
    assert.match(i1.fields.get('cmdstat_select')!, /^calls=2,/);
    assert.ok(num(i1, 'total_connections_received') >= 1);
    assert.ok(num(i1, 'total_net_input_bytes') > num(i0, 'total_net_input_bytes'));
    assert.ok(num(i1, 'total_net_output_bytes') > num(i0, 'total_net_output_bytes'));
    assert.ok(num(i1, 'rdb_changes_since_last_save') >= 3);
    const clientsWithX = num(i1, 'connected_clients');
    x.disconnect();
    await sleep(100);
    assert.equal(num(await info(r, 'clients'), 'connected_clients'), clientsWithX - 1);

    // SAVE resets the change counter and moves the last save time.
    await sleep(1100);
    const before = num(await info(r, 'persistence'), 'rdb_last_save_time');
    assert.equal(await r.call('SAVE'), 'OK');
    const p = await info(r, 'persistence');
    assert.equal(num(p, 'rdb_changes_since_last_save'), 0);
    assert.ok(num(p, 'rdb_last_save_time') > before);
    assert.equal(await r.lastsave(), num(p, 'rdb_last_save_time'));
  });

  it('counts error replies per error code', async () => {
    const r = io(ours.port);
    await r.call('CONFIG', 'RESETSTAT');
    await assert.rejects(r.call('DEBUG', 'ERROR', 'MYCODE something failed'));
    await assert.rejects(r.call('DEBUG', 'ERROR', 'MYCODE again'));
    await assert.rejects(r.call('AUTH', 'nouser', 'pw'));
    await assert.rejects(r.call('HELLO', '9'));
    const i = await info(r, 'errorstats');
    assert.equal(i.fields.get('errorstat_MYCODE'), 'count=2');
    assert.equal(i.fields.get('errorstat_WRONGPASS'), 'count=1');
    assert.equal(i.fields.get('errorstat_NOPROTO'), 'count=1');
    // Sorted by code, as Redis's rax.
    const names = [...i.fields.keys()];
    assert.deepEqual(names, [...names].sort());
  });

  it('instantaneous_ops_per_sec follows the load', async () => {
    const r = io(ours.port);
    const end = Date.now() + 1500;
    while (Date.now() < end) {
      const p = r.pipeline();
      for (let j = 0; j < 200; j++) p.ping();
      await p.exec();
    }
    assert.ok(num(await info(r, 'stats'), 'instantaneous_ops_per_sec') > 0);
  });

  it('redis-cli info parses and redis-cli --stat polls', async () => {
    const out = spawnSync('redis-cli', ['-p', String(ours.port), 'info'], { encoding: 'utf8', timeout: 5000 });
    assert.equal(out.status, 0);
    const lines = out.stdout.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l !== '' && !l.startsWith('#'));
    assert.ok(lines.some((l) => l.startsWith('redis_version:7.0.15')));
    for (const l of lines) assert.match(l, /^[A-Za-z0-9_|]+:/, l);

    const r = io(ours.port);
    await r.set('stat-key', 'v');
    // stdbuf: redis-cli's stdout is a pipe here, line-buffer it so the rows arrive before the kill.
    const cli = spawn('stdbuf', ['-oL', 'redis-cli', '-p', String(ours.port), '--stat', '-i', '0.2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    cli.stdout.on('data', (d) => { text += d; });
    cli.stderr.on('data', (d) => { text += d; });
    await sleep(1200);
    cli.kill('SIGKILL');
    assert.match(text, /keys\s+mem\s+clients\s+blocked\s+requests\s+connections/);
    const rows = text.split('\n').filter((l) => /^\d+\s+\d/.test(l));
    assert.ok(rows.length >= 2, text);
    // keys, used memory, clients, blocked, requests (+delta), connections
    assert.match(rows[0], /^\d+\s+[\d.]+[BKMGT]?\s+\d+\s+0\s+\d+ \(\+\d+\)\s+\d+/);
  });
});

// ---------------------------------------------------------------- CONFIG

describe('CONFIG', () => {
  it('CONFIG GET * lists every option with its value', async () => {
    const r = io(ours.port);
    const flat = (await r.call('CONFIG', 'GET', '*')) as string[];
    const got = new Map<string, string>();
    for (let i = 0; i < flat.length; i += 2) got.set(flat[i], flat[i + 1]);
    for (const o of OPTIONS) {
      if (o.secret) continue;
      assert.ok(got.has(o.name), `CONFIG GET * has ${o.name}`);
    }
    assert.equal(got.get('port'), String(ours.port));
    assert.equal(got.get('maxmemory-policy'), 'noeviction');
    const two = (await r.call('CONFIG', 'GET', 'maxmemory*', 'hz')) as string[];
    assert.deepEqual(new Set(two.filter((_, i) => i % 2 === 0)),
      new Set(['maxmemory', 'maxmemory-policy', 'maxmemory-samples', 'maxmemory-eviction-tenacity', 'maxmemory-clients', 'hz']));
  });

  it('CONFIG GET save and appendonly describe the store (redis-benchmark reads them)', async () => {
    const r = io(ours.port);
    const appendonly = (await r.call('CONFIG', 'GET', 'appendfsync')) as string[];
    const expected = appendonly[1] === 'no' ? 'no' : 'yes';
    assert.deepEqual(await r.call('CONFIG', 'GET', 'save', 'APPENDONLY'), ['save', '', 'APPENDONLY', expected]);
    const flat = (await r.call('CONFIG', 'GET', 'append*')) as string[];
    assert.deepEqual(new Set(flat.filter((_, i) => i % 2 === 0)), new Set(['appendfsync', 'appendonly', 'appendfilename', 'appenddirname']));
  });

  it('CONFIG SET takes effect (INFO shows the new values)', async () => {
    const r = io(ours.port);
    assert.equal(await r.call('CONFIG', 'SET', 'maxmemory', '10mb', 'hz', '25', 'maxclients', '500'), 'OK');
    const i = await info(r);
    assert.equal(num(i, 'maxmemory'), 10485760);
    assert.equal(i.fields.get('maxmemory_human'), '10.00M');
    assert.equal(num(i, 'hz'), 25);
    assert.equal(num(i, 'maxclients'), 500);
    assert.equal(await r.call('CONFIG', 'SET', 'maxmemory', '0', 'hz', '10', 'maxclients', '10000'), 'OK');
  });

  it('requirepass takes effect for new connections and new AUTHs, as in Redis', async () => {
    for (const p of [ours, redis]) {
      const admin = await raw(p.port);
      assert.equal(String(await admin.call('CONFIG', 'SET', 'requirepass', 's3cret')), '+OK\r\n');
    }
    try {
      const script: string[][] = [
        ['PING'], ['GET', 'x'], ['AUTH', 'wrong'], ['AUTH', 'default', 'wrong'], ['AUTH', 'nouser', 's3cret'],
        ['HELLO'], ['HELLO', '2', 'SETNAME', 'x'], ['HELLO', '2', 'AUTH', 'default', 'nope'], ['PING'],
        ['AUTH', 's3cret'], ['PING'], ['AUTH', 'wrong'], ['PING'], ['AUTH', 'default', 's3cret'], ['RESET'], ['PING'],
        ['AUTH', 'default', 's3cret', 'x'], ['QUIT'],
      ];
      const [a, b] = await Promise.all([raw(ours.port), raw(redis.port)]);
      for (const cmd of script) {
        const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]);
        assert.equal(x.toString('latin1'), y.toString('latin1'), cmd.join(' '));
      }
      // HELLO with AUTH authenticates (the reply differs only by the client id).
      const [c, d] = await Promise.all([raw(ours.port), raw(redis.port)]);
      const [x, y] = await Promise.all([c.call('HELLO', '2', 'AUTH', 'default', 's3cret'), d.call('HELLO', '2', 'AUTH', 'default', 's3cret')]);
      const noId = (s: Buffer) => s.toString('latin1').replace(/\$2\r\nid\r\n:\d+/, 'ID');
      assert.equal(noId(x), noId(y));
      assert.equal(String(await c.call('PING')), '+PONG\r\n');
      // A connection already authenticated stays so when the password changes.
      assert.equal(String(await c.call('CONFIG', 'SET', 'requirepass', 'other')), '+OK\r\n');
      assert.equal(String(await c.call('PING')), '+PONG\r\n');
      assert.equal(String(await c.call('CONFIG', 'SET', 'requirepass', 's3cret')), '+OK\r\n');
    } finally {
      for (const p of [ours, redis]) {
        const admin = await raw(p.port);
        await admin.call('AUTH', 's3cret');
        assert.equal(String(await admin.call('CONFIG', 'SET', 'requirepass', '')), '+OK\r\n');
      }
    }
  });
});

// ---------------------------------------------------------------- DEBUG

describe('DEBUG', () => {
  it('matches redis-server (enable-debug-command yes) byte for byte', async () => {
    const script: string[][] = [
      ['FLUSHALL'], ['DEBUG', 'nosuch'], ['DEBUG', 'SLEEP', '0'], ['DEBUG', 'SLEEP', 'x'], ['DEBUG', 'sleep', '0.01'],
      ['DEBUG', 'SLEEP'], ['DEBUG', 'SLEEP', '0', '1'], ['DEBUG', 'OBJECT', 'nokey'], ['DEBUG', 'OBJECT'],
      ['DEBUG', 'OBJECT', 'k', 'x'], ['DEBUG', 'JMAP'], ['DEBUG'], ['DEBUG', 'help', 'x'], ['DEBUG', 'SLEEP', '-1'],
      ['DEBUG', 'POPULATE', '3'], ['DBSIZE'], ['GET', 'key:0'], ['GET', 'key:2'], ['DEBUG', 'POPULATE', '2', 'pre', '3'],
      ['GET', 'pre:1'], ['DEBUG', 'POPULATE', '1', 'z', '12'], ['GET', 'z:0'], ['DEBUG', 'POPULATE', 'x'],
      ['DEBUG', 'POPULATE', '-1'], ['DEBUG', 'POPULATE', '1', 'a', 'b'], ['DEBUG', 'POPULATE', '1', 'a', '0'],
      ['DEBUG', 'POPULATE', '1', 'a', '-1'], ['DEBUG', 'POPULATE', '1', 'a', '1', 'x'], ['SET', 'key:1', 'mine'],
      ['DEBUG', 'POPULATE', '3'], ['GET', 'key:1'], ['DBSIZE'], ['DEBUG', 'SET-ACTIVE-EXPIRE', '0'],
      ['DEBUG', 'set-active-expire', '1'], ['DEBUG', 'SET-ACTIVE-EXPIRE', 'x'], ['DEBUG', 'SET-ACTIVE-EXPIRE', '1'],
      ['DEBUG', 'LOG', 'hello from the test'], ['DEBUG', 'ERROR', 'MYERR custom message'], ['DEBUG', 'ERROR', 'x'],
      ['DEBUG', 'CHANGE-REPL-ID'], ['DEBUG', 'change-repl-id', 'x'], ['FLUSHALL'],
    ];
    const [a, b] = await Promise.all([raw(ours.port), raw(redis.port)]);
    for (const cmd of script) {
      const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]);
      assert.equal(x.toString('latin1'), y.toString('latin1'), cmd.join(' '));
    }
  });

  it('DEBUG OBJECT has the shape of Redis, with the right encodings', async () => {
    const [a, b] = await Promise.all([raw(ours.port), raw(redis.port)]);
    const shape = /^\+Value at:0x[0-9a-f]+ refcount:\d+ encoding:(\S+) serializedlength:(\d+) lru:\d+ lru_seconds_idle:\d+\r\n$/;
    for (const [value, enc] of [['hello', 'embstr'], ['12345', 'int'], ['-7', 'int'], ['x'.repeat(45), 'raw'], ['007', 'embstr'], ['99999999999', 'int']]) {
      for (const c of [a, b]) await c.call('SET', 'k', value);
      const [x, y] = await Promise.all([a.call('DEBUG', 'OBJECT', 'k'), b.call('DEBUG', 'OBJECT', 'k')]);
      const mx = shape.exec(x.toString('latin1'));
      const my = shape.exec(y.toString('latin1'));
      assert.ok(mx, x.toString('latin1'));
      assert.ok(my, y.toString('latin1'));
      assert.equal(mx[1], enc);
      assert.equal(mx[1], my[1], `encoding of ${value}`);
      // Redis LZF-compresses strings over 20 bytes in RDB; we do not model that.
      if (value.length <= 20) assert.equal(mx[2], my[2], `serializedlength of ${value}`);
    }
  });

  it('DEBUG SLEEP blocks the server for the given (fractional) time', async () => {
    const a = io(ours.port);
    const b = io(ours.port);
    await Promise.all([a.ping(), b.ping()]);
    const t0 = Date.now();
    const sleeping = a.call('DEBUG', 'SLEEP', '0.3');
    await sleep(20);
    await b.ping(); // waits for the sleep: the whole server is stopped
    const waited = Date.now() - t0;
    await sleeping;
    assert.ok(waited >= 280, `PING waited ${waited} ms`);
  });

  it('DEBUG HELP lists a subset of Redis\'s help, in its order', async () => {
    const [x, y] = await Promise.all([io(ours.port).call('DEBUG', 'HELP'), io(redis.port).call('DEBUG', 'HELP')]) as [string[], string[]];
    assert.equal(x[0], y[0]);
    let j = 0;
    for (const line of x) {
      while (j < y.length && y[j] !== line) j++;
      assert.ok(j < y.length, `line ${JSON.stringify(line)} is in Redis's help, in order`);
    }
  });
});

// ---------------------------------------------------------------- HELLO / connection

describe('connection commands', () => {
  it('HELLO replies as Redis apart from the id, in RESP2 and RESP3', async () => {
    const [a, b] = await Promise.all([raw(ours.port), raw(redis.port)]);
    const noId = (s: Buffer) => s.toString('latin1').replace(/\$2\r\nid\r\n:\d+/, 'ID');
    for (const cmd of [['HELLO'], ['HELLO', '2'], ['HELLO', '2', 'SETNAME', 'n'], ['hello', '2', 'auth', 'default', 'x'],
      ['HELLO', '3'], ['HELLO'], ['HELLO', '3', 'SETNAME', 'x'], ['HELLO', '4'], ['HELLO', '2']]) {
      const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]);
      assert.equal(noId(x), noId(y), cmd.join(' '));
    }
    const idReply = String(await a.call('CLIENT', 'ID'));
    assert.match(String(await a.call('HELLO')), new RegExp(`\\$2\\r\\nid\\r\\n${idReply.replace('\r\n', '')}\\r\\n`));
    assert.equal(String(await a.call('HELLO', '3', 'SETNAME', 'x')).slice(0, 4), '%7\r\n');
    assert.equal(String(await a.call('GET', 'nokey')), '_\r\n'); // RESP3
  });

  it('TIME is the wall clock with microseconds', async () => {
    const [s, us] = (await io(ours.port).call('TIME')) as [string, string];
    assert.match(s, /^\d+$/);
    assert.match(us, /^\d{1,6}$/);
    assert.ok(Math.abs(Number(s) * 1000 + Number(us) / 1000 - Date.now()) < 2000);
  });
});

// ---------------------------------------------------------------- CLIENT

const LINE = /^id=(\d+) addr=(\S+) laddr=(\S+) fd=-?\d+ name=(\S*) age=\d+ idle=\d+ flags=(\S+) db=(\d+) sub=\d+ psub=\d+ ssub=\d+ multi=(-?\d+) qbuf=\d+ qbuf-free=\d+ argv-mem=\d+ multi-mem=\d+ rbs=\d+ rbp=\d+ obl=\d+ oll=\d+ omem=\d+ tot-mem=\d+ events=r?w? cmd=(\S+) user=(\S+) redir=-?\d+ resp=[23]$/;

function lines(text: string): RegExpExecArray[] {
  assert.ok(text === '' || text.endsWith('\n'));
  return text.split('\n').filter((l) => l !== '').map((l) => {
    const m = LINE.exec(l);
    assert.ok(m, `CLIENT LIST line format: ${l}`);
    return m;
  });
}

describe('CLIENT', () => {
  it('CLIENT INFO / LIST: the fields of Redis 7.0.15, in its order, also after ioredis sent CLIENT SETINFO (7.2)', async () => {
    const r = io(ours.port);
    const [m] = lines((await r.call('CLIENT', 'INFO')) as string);
    assert.equal(m[8], 'client|info');
    assert.equal(m[9], 'default');
    const names = (line: string) => line.trim().split(' ').map((f) => f.slice(0, f.indexOf('=')));
    const [a, b] = await Promise.all([raw(ours.port), raw(redis.port)]);
    const [la, lb] = await Promise.all([a.call('CLIENT', 'INFO'), b.call('CLIENT', 'INFO')]);
    assert.deepEqual(names(la.toString('latin1').split('\r\n')[1]), names(lb.toString('latin1').split('\r\n')[1]));
    // A new connection's reply buffer, as Redis creates it: 16 KB, its peak the whole buffer;
    // unless a cron pass (every 100 ms with few clients) came between the connect and CLIENT
    // INFO: Redis 7.0 stores the peak's reset time in seconds and compares it in milliseconds,
    // so a client's first pass restarts the peak from the empty buffer (0), on both servers.
    assert.match(la.toString('latin1'), / rbs=16384 rbp=(16384|0) /);
    assert.match(lb.toString('latin1'), / rbs=16384 rbp=(16384|0) /);
  });

  it('CLIENT LIST rbs / rbp: the reply buffer shrinks to 1 KB when idle and grows with big replies (Redis 7.0 resizing)', async () => {
    const c = await raw(ours.port);
    const rb = async () => /rbs=(\d+) rbp=(\d+)/.exec((await c.call('CLIENT', 'INFO')).toString('latin1'))!.slice(1).map(Number);
    const waitFor = async (ok: (v: number[]) => boolean) => {
      for (let i = 0; i < 100; i++) {
        const v = await rb();
        if (ok(v)) return v;
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.fail('reply buffer did not reach the expected state');
    };
    await waitFor(([rbs]) => rbs === 1024);
    await c.call('SET', 'rbbig', 'x'.repeat(5000));
    await c.call('GET', 'rbbig');
    const [, rbp] = await rb();
    assert.ok(rbp === 1024, `peak capped at the buffer size: ${rbp}`);
    await waitFor(([rbs]) => rbs === 2048);
    const info = (await c.call('INFO', 'stats')).toString('latin1');
    assert.match(info, /reply_buffer_shrinks:[1-9]/);
    assert.match(info, /reply_buffer_expands:[1-9]/);
  });

  it('CLIENT SETINFO validation and clearing (Redis 7.2 texts)', async () => {
    const c = await raw(ours.port);
    assert.equal(String(await c.call('CLIENT', 'SETINFO', 'lib-name', 'mylib')), '+OK\r\n');
    assert.equal(String(await c.call('CLIENT', 'SETINFO', 'LIB-VER', '1.2.3')), '+OK\r\n');
    assert.equal(String(await c.call('CLIENT', 'SETINFO', 'lib-name', 'my lib')), '-ERR lib-name cannot contain spaces, newlines or special characters.\r\n');
    assert.equal(String(await c.call('CLIENT', 'SETINFO', 'LIB-VER', 'a\nb')), '-ERR LIB-VER cannot contain spaces, newlines or special characters.\r\n');
    assert.equal(String(await c.call('CLIENT', 'SETINFO', 'nosuch', 'x')), "-ERR Unrecognized option 'nosuch'\r\n");
    assert.equal(String(await c.call('CLIENT', 'SETINFO', 'lib-name')), "-ERR wrong number of arguments for 'client|setinfo' command\r\n");
    assert.equal(String(await c.call('CLIENT', 'SETINFO', 'lib-name', 'a', 'b')), "-ERR wrong number of arguments for 'client|setinfo' command\r\n");
    // 7.0's CLIENT LIST has no lib-name / lib-ver fields: the values are kept, not shown.
    assert.doesNotMatch((await c.call('CLIENT', 'INFO')).toString('latin1'), /lib-/);
    assert.equal(String(await c.call('CLIENT', 'SETINFO', 'lib-name', '')), '+OK\r\n');
  });

  it('CLIENT NO-TOUCH (Redis 7.2) keeps reads from touching the LRU clock', async () => {
    const c = await raw(ours.port);
    assert.equal(String(await c.call('CLIENT', 'NO-TOUCH', 'x')), '-ERR syntax error\r\n');
    assert.equal(String(await c.call('CLIENT', 'NO-TOUCH')), "-ERR wrong number of arguments for 'client|no-touch' command\r\n");
    await c.call('SET', 'lru', 'v');
    assert.equal(String(await c.call('CLIENT', 'NO-TOUCH', 'ON')), '+OK\r\n');
    assert.match(String(await c.call('CLIENT', 'INFO')), / flags=T /);
    await sleep(2100);
    await c.call('GET', 'lru');
    const idle = () => c.call('DEBUG', 'OBJECT', 'lru').then((b) => Number(/lru_seconds_idle:(\d+)/.exec(String(b))![1]));
    assert.ok((await idle()) >= 1, 'GET with NO-TOUCH on left the LRU alone');
    assert.equal(String(await c.call('CLIENT', 'NO-TOUCH', 'off')), '+OK\r\n');
    await c.call('GET', 'lru');
    assert.equal(await idle(), 0, 'GET touched the key');
    assert.equal(String(await c.call('CLIENT', 'NO-EVICT', 'on')), '+OK\r\n');
    assert.match(String(await c.call('CLIENT', 'INFO')), / flags=e /);
    await c.call('RESET');
    assert.match(String(await c.call('CLIENT', 'INFO')), / flags=N /);
  });

  it('CLIENT LIST shows every connection with its state', async () => {
    const a = await raw(ours.port);
    const b = await raw(ours.port);
    const idA = Number(String(await a.call('CLIENT', 'ID')).slice(1));
    const idB = Number(String(await b.call('CLIENT', 'ID')).slice(1));
    await a.call('CLIENT', 'SETNAME', 'alpha');
    await a.call('SELECT', '3');
    await a.call('MULTI');
    await a.call('SET', 'x', '1');
    await a.call('GET', 'x');
    const all = lines((await b.call('CLIENT', 'LIST')).toString('latin1').replace(/^\$\d+\r\n/, '').replace(/\r\n$/, ''));
    const ma = all.find((m) => Number(m[1]) === idA)!;
    assert.ok(ma);
    assert.equal(ma[4], 'alpha');
    assert.equal(ma[5], 'x');
    assert.equal(ma[6], '3');
    assert.equal(ma[7], '2');
    // multi-mem: the queued arguments' bytes (SET x 1, GET x), not their RESP framing.
    assert.match(ma[0], / multi-mem=9 /);
    assert.equal(ma[8], 'get');
    const mb = all.find((m) => Number(m[1]) === idB)!;
    assert.equal(mb[8], 'client|list');
    assert.equal(mb[5], 'N');
    assert.equal(mb[7], '-1');
    assert.equal(mb[3], `127.0.0.1:${ours.port}`);
    // ID filter, in the given order, unknown ids skipped.
    const byId = lines(String(await b.call('CLIENT', 'LIST', 'ID', String(idB), '999999', String(idA))).replace(/^\$\d+\r\n/, '').replace(/\r\n$/, ''));
    assert.deepEqual(byId.map((m) => Number(m[1])), [idB, idA]);
    const normal = lines(String(await b.call('CLIENT', 'LIST', 'TYPE', 'NORMAL')).replace(/^\$\d+\r\n/, '').replace(/\r\n$/, ''));
    assert.ok(normal.some((m) => Number(m[1]) === idA));
    await a.call('DISCARD');
    // A MONITOR client is flagged O.
    await a.call('MONITOR');
    const mon = lines(String(await b.call('CLIENT', 'LIST', 'ID', String(idA))).replace(/^\$\d+\r\n/, '').replace(/\r\n$/, ''));
    assert.equal(mon[0][5], 'O');
  });

  it('CLIENT KILL closes the target connections', async () => {
    const killer = await raw(ours.port);
    const v1 = await raw(ours.port);
    const id1 = String(await v1.call('CLIENT', 'ID')).slice(1, -2);
    assert.equal(String(await killer.call('CLIENT', 'KILL', 'ID', id1)), ':1\r\n');
    await v1.closed;
    assert.equal(String(await killer.call('CLIENT', 'LIST', 'ID', id1)), '$0\r\n\r\n');

    // Old form by address: +OK, and the address is gone.
    const v2 = await raw(ours.port);
    await v2.call('PING'); // registered by the server before it is looked for
    const addr2 = `${v2.sock.localAddress}:${v2.sock.localPort}`;
    assert.equal(String(await killer.call('CLIENT', 'KILL', addr2)), '+OK\r\n');
    await v2.closed;
    assert.equal(String(await killer.call('CLIENT', 'KILL', addr2)), '-ERR No such client\r\n');

    // New form ADDR, and several filters together.
    const v3 = await raw(ours.port);
    await v3.call('PING');
    const addr3 = `${v3.sock.localAddress}:${v3.sock.localPort}`;
    assert.equal(String(await killer.call('CLIENT', 'KILL', 'ADDR', addr3, 'USER', 'someone')), "-ERR No such user 'someone'\r\n");
    assert.equal(String(await killer.call('CLIENT', 'KILL', 'ADDR', addr3, 'TYPE', 'pubsub')), ':0\r\n');
    assert.equal(String(await killer.call('CLIENT', 'KILL', 'ADDR', addr3, 'TYPE', 'normal', 'USER', 'default')), ':1\r\n');
    await v3.closed;

    // SKIPME yes (default) spares the caller; LADDR matches every connection to our port.
    const v4 = await raw(ours.port);
    await v4.call('PING');
    const n = Number(String(await killer.call('CLIENT', 'KILL', 'LADDR', `127.0.0.1:${ours.port}`)).slice(1));
    assert.ok(n >= 1);
    await v4.closed;
    assert.equal(String(await killer.call('PING')), '+PONG\r\n');

    // SKIPME no: the caller gets its reply, then is closed.
    const self = await raw(ours.port);
    const selfId = String(await self.call('CLIENT', 'ID')).slice(1, -2);
    assert.equal(String(await self.call('CLIENT', 'KILL', 'ID', selfId, 'SKIPME', 'no')), ':1\r\n');
    await self.closed;

    // The old form may kill the caller itself.
    const self2 = await raw(ours.port);
    const addrSelf = `${self2.sock.localAddress}:${self2.sock.localPort}`;
    assert.equal(String(await self2.call('CLIENT', 'KILL', addrSelf)), '+OK\r\n');
    await self2.closed;
  });

  it('CLIENT HELP is Redis 7.0\'s text plus the 7.2 entries, for the subcommands provided', async () => {
    const [x, y] = await Promise.all([io(ours.port).call('CLIENT', 'HELP'), io(redis.port).call('CLIENT', 'HELP')]) as [string[], string[]];
    const added = ['SETINFO <option> <value>', '    Set client meta attr. Options are:', '    * LIB-NAME: the client lib name.',
      '    * LIB-VER: the client lib version.', 'NO-TOUCH (ON|OFF)', '    Will not touch LRU/LFU stats when this mode is on.'];
    for (const l of added) assert.ok(x.includes(l), l);
    let j = 0;
    for (const line of x.filter((l) => !added.includes(l))) {
      while (j < y.length && y[j] !== line) j++;
      assert.ok(j < y.length, `line ${JSON.stringify(line)} is in Redis's help, in order`);
    }
    assert.equal(x[0], y[0]);
    assert.equal(x[x.length - 1], y[y.length - 1]);
  });

  it('CLIENT PAUSE and UNPAUSE are accepted', async () => {
    const r = io(ours.port);
    assert.equal(await r.call('CLIENT', 'PAUSE', '50', 'WRITE'), 'OK');
    assert.equal(await r.call('CLIENT', 'UNPAUSE'), 'OK');
  });
});

// ---------------------------------------------------------------- MONITOR

describe('MONITOR', () => {
  it('streams the same lines as Redis (redactions, skipped admin commands, EXEC)', async () => {
    const cmds: Array<Array<string>> = [
      ['SELECT', '2'], ['SET', 'k', 'a "quoted"\nvalue\x01\\'], ['AUTH', 'secret'], ['AUTH', 'u', 'p'],
      ['HELLO', '2', 'AUTH', 'a', 'b'], ['HELLO', '2', 'SETNAME', 'n', 'AUTH', 'x', 'y'], ['HELLO', 'x', 'AUTH', 'a', 'b'],
      ['CONFIG', 'GET', 'hz'], ['DEBUG', 'SLEEP', '0'], ['PING'], ['MULTI'], ['SET', 'a', '1'], ['EXEC'],
      ['NOSUCH'], ['GET'], ['SELECT', '0'], ['ECHO', 'end'],
    ];
    const streams = await Promise.all([ours, redis].map(async (p) => {
      const m = await raw(p.port);
      assert.equal(String(await m.call('MONITOR')), '+OK\r\n');
      const w = await raw(p.port);
      for (const c of cmds) await w.call(...c);
      const addr = `127.0.0.1:${w.sock.localPort}`;
      const got: string[] = [];
      for (;;) {
        const line = String(await m.next());
        const mm = /^\+\d+\.\d{6} \[(\d+) (\S+)\] (.*)\r\n$/.exec(line);
        assert.ok(mm, line);
        assert.equal(mm[2], addr);
        got.push(`[${mm[1]}] ${mm[3]}`);
        if (mm[3] === '"ECHO" "end"') break;
      }
      return got;
    }));
    assert.deepEqual(streams[0], streams[1]);
    assert.ok(streams[0].includes('[2] "AUTH" "(redacted)"'));
  });
});

// ---------------------------------------------------------------- SHUTDOWN

describe('SHUTDOWN', () => {
  it('stops the server without a reply', async () => {
    const p = await startOurs();
    try {
      const c = await RawClient.connect(p.port);
      assert.equal(String(await c.call('SHUTDOWN', 'ABORT')), '-ERR No shutdown in progress.\r\n');
      assert.equal(String(await c.call('SHUTDOWN', 'NOSAVE', 'SAVE')), '-ERR syntax error\r\n');
      const exited = new Promise<number | null>((resolve) => p.proc.once('exit', (code) => resolve(code)));
      c.write('*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n');
      await c.closed;
      assert.equal(c.leftover().length, 0, 'no reply to SHUTDOWN');
      assert.equal(await exited, 0);
    } finally {
      await p.stop();
    }
  });
});

// ---------------------------------------------------------------- command table

describe('command table', () => {
  it('rows match redis-server\'s COMMAND INFO (arity, flags, keys, categories)', async () => {
    const names = ['dbsize', 'flushdb', 'flushall', 'info', 'time', 'config', 'lastsave', 'save', 'bgsave', 'shutdown',
      'debug', 'role', 'monitor', 'function', 'script', 'client', 'ping', 'echo', 'auth', 'hello', 'select', 'quit', 'reset'];
    type Row = [string, number, string[], number, number, number, string[], unknown, unknown, Row[]];
    const [x, y] = await Promise.all([io(ours.port).call('COMMAND', 'INFO', ...names), io(redis.port).call('COMMAND', 'INFO', ...names)]) as [Row[], Row[]];
    // Redis flags we do not model (no async loading, no sentinel).
    const ignoredFlags = new Set(['no_async_loading']);
    const check = (a: Row, b: Row) => {
      assert.equal(a[0], b[0]);
      assert.equal(a[1], b[1], `${a[0]} arity`);
      assert.deepEqual(a[2], b[2].filter((f) => !ignoredFlags.has(f)), `${a[0]} flags`);
      assert.deepEqual([a[3], a[4], a[5]], [b[3], b[4], b[5]], `${a[0]} keys`);
      assert.deepEqual(a[6], b[6], `${a[0]} categories`);
      for (const sub of a[9]) {
        const other = b[9].find((s) => s[0] === sub[0]);
        if (other) check(sub, other); // 7.2-only subcommands (client|setinfo, client|no-touch) are not in 7.0
        else assert.ok(['client|setinfo', 'client|no-touch'].includes(sub[0]), `${sub[0]} exists in Redis`);
      }
    };
    for (let i = 0; i < names.length; i++) check(x[i], y[i]);
  });
});
