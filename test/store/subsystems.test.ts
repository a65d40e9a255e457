/**
 * Restart tests on real server processes for what lives beside the keyspace and for the
 * collection types end to end: function libraries (FUNCTION LIST identical, FCALL works; the
 * EVAL cache is not kept, as in Redis), REST tokens (kept in LMDB, migrated once from the JSON
 * file of earlier versions, kept in that file with appendfsync no), ACL users (ACL LIST
 * identical, AUTH and ACL RESTTOKEN tokens work), and lists, streams and JSON written by
 * clients, blocking pops included, after SIGKILL in both durability modes.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startOurs, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-subsys-'));
/** Every server started, so that a failed test leaves none running. */
const started: Proc[] = [];
after(async () => {
  for (const p of started) await p.stop('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});
let seq = 0;
const newDir = () => {
  const d = path.join(tmp, `d${seq++}`);
  fs.mkdirSync(d);
  return d;
};

interface Server {
  proc: Proc;
  c: RawClient;
}

async function start(dir: string, mode: string, extra: string[] = []): Promise<Server> {
  const proc = await startOurs(['--appendfsync', mode, ...extra], {}, { dir });
  started.push(proc);
  const c = await RawClient.connect(proc.port);
  return { proc, c };
}

async function stop(s: Server, signal: NodeJS.Signals): Promise<void> {
  s.c.close();
  await s.proc.stop(signal);
}

const text = (b: Buffer) => b.toString('latin1');
const call = async (c: RawClient, ...args: string[]) => text(await c.call(...args));

async function waitFor(cond: () => boolean | Promise<boolean>, what = 'condition'): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`${what} not reached`);
}

/** The tokens a server printed at start-up (generated ones are printed). */
async function printedTokens(p: Proc): Promise<{ token: string; ro: string }> {
  await waitFor(() => p.output().includes('REST read-only token'), 'start-up message');
  const t = /REST token:\s+(\S+) \(/.exec(p.output());
  const r = /REST read-only token:\s+(\S+) \(/.exec(p.output());
  assert.ok(t && r, p.output());
  return { token: t[1], ro: r[1] };
}

async function rest(p: Proc, token: string, ...cmd: string[]): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${p.httpPort}/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    body: JSON.stringify(cmd),
  });
  return { status: res.status, body: await res.json() };
}

// ---------------------------------------------------------------- functions

const LIB1 = "#!lua name=mylib\nredis.register_function('myset', function(keys, args) return redis.call('SET', keys[1], args[1]) end)\n"
  + "redis.register_function('myget', function(keys) return redis.call('GET', keys[1]) end)";
const LIB2 = "#!lua name=lib2\nredis.register_function{function_name='ro', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads one key'}";

describe('function libraries survive a restart, the EVAL script cache does not', () => {
  for (const [mode, signal] of [['always', 'SIGKILL'], ['everysec', 'SIGTERM']] as const) {
    it(`appendfsync ${mode}, ${signal}`, async () => {
      const dir = newDir();
      let s = await start(dir, mode);
      assert.equal(await call(s.c, 'FUNCTION', 'LOAD', LIB1), '$5\r\nmylib\r\n');
      assert.equal(await call(s.c, 'FUNCTION', 'LOAD', LIB2), '$4\r\nlib2\r\n');
      const sha = (await call(s.c, 'SCRIPT', 'LOAD', 'return 1')).split('\r\n')[1];
      const list = await call(s.c, 'FUNCTION', 'LIST', 'WITHCODE');
      await stop(s, signal);
      s = await start(dir, mode);
      assert.equal(await call(s.c, 'FUNCTION', 'LIST', 'WITHCODE'), list);
      assert.equal(await call(s.c, 'FCALL', 'myset', '1', 'k', 'v'), '+OK\r\n');
      assert.equal(await call(s.c, 'FCALL_RO', 'ro', '1', 'k'), '$1\r\nv\r\n');
      assert.equal(await call(s.c, 'SCRIPT', 'EXISTS', sha), '*1\r\n:0\r\n', 'the script cache is not persisted (as in Redis)');
      // FUNCTION DELETE, LOAD REPLACE and RESTORE are persisted too.
      const dump = await s.c.call('FUNCTION', 'DUMP');
      assert.equal(await call(s.c, 'FUNCTION', 'DELETE', 'lib2'), '+OK\r\n');
      assert.equal(await call(s.c, 'FUNCTION', 'LOAD', 'REPLACE', LIB1.replace("'myget'", "'myget2'")), '$5\r\nmylib\r\n');
      const list2 = await call(s.c, 'FUNCTION', 'LIST', 'WITHCODE');
      await stop(s, signal);
      s = await start(dir, mode);
      assert.equal(await call(s.c, 'FUNCTION', 'LIST', 'WITHCODE'), list2);
      assert.equal(await call(s.c, 'FCALL', 'myget2', '1', 'k'), '$1\r\nv\r\n');
      const bulk = dump.subarray(dump.indexOf('\r\n') + 2, dump.length - 2);
      assert.equal(text(await s.c.call('FUNCTION', 'RESTORE', bulk, 'FLUSH')), '+OK\r\n');
      await stop(s, signal);
      s = await start(dir, mode);
      assert.equal(await call(s.c, 'FUNCTION', 'LIST', 'WITHCODE'), list);
      assert.equal(await call(s.c, 'FUNCTION', 'FLUSH'), '+OK\r\n');
      await stop(s, signal);
      s = await start(dir, mode);
      assert.equal(await call(s.c, 'FUNCTION', 'LIST'), '*0\r\n');
      await stop(s, 'SIGTERM');
    });
  }
});

// ---------------------------------------------------------------- REST tokens

describe('REST tokens', () => {
  it('generated tokens live in LMDB: they still authenticate after SIGKILL, the read-only one stays read-only', async () => {
    const dir = newDir();
    let s = await start(dir, 'always');
    const t = await printedTokens(s.proc);
    assert.equal((await rest(s.proc, t.token, 'SET', 'k', 'v')).status, 200);
    // REST replies do not wait for the durable commit (only RESP connections are held with
    // appendfsync always): a RESP command after it does.
    assert.equal(await call(s.c, 'PING'), '+PONG\r\n');
    assert.equal(fs.existsSync(path.join(dir, 'rest-tokens.json')), false, 'no JSON file any more');
    await stop(s, 'SIGKILL');
    s = await start(dir, 'always');
    const t2 = await printedTokens(s.proc);
    assert.deepEqual(t2, t, 'the same tokens after a restart');
    assert.deepEqual(await rest(s.proc, t.token, 'GET', 'k'), { status: 200, body: { result: 'v' } });
    assert.deepEqual(await rest(s.proc, t.ro, 'GET', 'k'), { status: 200, body: { result: 'v' } });
    const denied = await rest(s.proc, t.ro, 'SET', 'k', 'w');
    assert.notEqual(denied.status, 200);
    assert.match(denied.body.error, /NOPERM/);
    assert.equal((await rest(s.proc, 'not-a-token', 'GET', 'k')).status, 401);
    // A password change revokes both: the new ones are what survives.
    assert.equal(await call(s.c, 'CONFIG', 'SET', 'requirepass', 'pw'), '+OK\r\n');
    await waitFor(() => s.proc.output().includes('New tokens'), 'revocation message');
    const fresh = /New tokens:\s+REST token:\s+(\S+)\s+REST read-only token:\s+(\S+)/.exec(s.proc.output())!;
    await stop(s, 'SIGKILL');
    s = await start(dir, 'always', ['--requirepass', 'pw']);
    assert.equal((await rest(s.proc, t.token, 'GET', 'k')).status, 401, 'revoked token');
    assert.deepEqual(await rest(s.proc, fresh[1], 'GET', 'k'), { status: 200, body: { result: 'v' } });
    assert.notEqual((await rest(s.proc, fresh[2], 'SET', 'k', 'x')).status, 200);
    await stop(s, 'SIGTERM');
  });

  it('an existing rest-tokens.json is migrated into LMDB once, then removed', async () => {
    const dir = newDir();
    const file = path.join(dir, 'rest-tokens.json');
    fs.writeFileSync(file, JSON.stringify({ token: 'file-token-0123456789abcdef0123456789', readOnlyToken: 'file-ro-0123456789abcdef0123456789' }));
    let s = await start(dir, 'everysec');
    assert.equal((await rest(s.proc, 'file-token-0123456789abcdef0123456789', 'SET', 'a', '1')).status, 200);
    await waitFor(() => !fs.existsSync(file), 'the file removed after the migration');
    await stop(s, 'SIGTERM');
    s = await start(dir, 'everysec');
    assert.equal((await rest(s.proc, 'file-token-0123456789abcdef0123456789', 'GET', 'a')).body.result, '1');
    assert.notEqual((await rest(s.proc, 'file-ro-0123456789abcdef0123456789', 'SET', 'a', '2')).status, 200);
    assert.equal((await rest(s.proc, 'file-ro-0123456789abcdef0123456789', 'GET', 'a')).status, 200);
    await stop(s, 'SIGTERM');
  });

  it('appendfsync no writes nothing to LMDB: the tokens stay in rest-tokens.json', async () => {
    const dir = newDir();
    let s = await start(dir, 'no');
    const t = await printedTokens(s.proc);
    const stored = JSON.parse(fs.readFileSync(path.join(dir, 'rest-tokens.json'), 'utf8'));
    assert.deepEqual(stored, { token: t.token, readOnlyToken: t.ro });
    await stop(s, 'SIGTERM');
    assert.equal(fs.existsSync(path.join(dir, 'lmdb')), false);
    s = await start(dir, 'no');
    assert.equal((await rest(s.proc, t.token, 'PING')).status, 200);
    await stop(s, 'SIGTERM');
  });
});

// ---------------------------------------------------------------- ACL users

describe('ACL users survive a restart', () => {
  it('ACL LIST identical, AUTH works, deleted users stay deleted, RESTTOKEN tokens still work', async () => {
    const dir = newDir();
    let s = await start(dir, 'always');
    const ok = '+OK\r\n';
    assert.equal(await call(s.c, 'ACL', 'SETUSER', 'alice', 'on', '>pw1', '>pw2', '~app:*', '%R~ro:*', 'resetchannels', '&chan:*', '+@read', '-get', '+set', '+client|id'), ok);
    assert.equal(await call(s.c, 'ACL', 'SETUSER', 'bob', 'off', 'nopass', 'allkeys', '+@all', '-@dangerous', 'sanitize-payload'), ok);
    assert.equal(await call(s.c, 'ACL', 'SETUSER', 'carol', 'on', '#' + 'a'.repeat(64), '~*', '-@all', '+ping', '(%R~sel:* &sel +get)', '(%W~w:* +set)'), ok);
    assert.equal(await call(s.c, 'ACL', 'SETUSER', 'dave', 'on', '>pw', '~*', '-@all', '+@read', '+select|0', '+Select|Ab', '+config', '-config|set'), ok);
    assert.equal(await call(s.c, 'ACL', 'SETUSER', 'temp', 'on', '>x'), ok);
    assert.equal(await call(s.c, 'ACL', 'DELUSER', 'temp'), ':1\r\n');
    const token = (await call(s.c, 'ACL', 'RESTTOKEN', 'alice', 'pw2')).split('\r\n')[1];
    assert.equal(await call(s.c, 'ACL', 'SETUSER', 'default', '>defpw'), ok);
    const list = await call(s.c, 'ACL', 'LIST');
    assert.match(list, /user alice on #/);
    assert.ok(list.includes('-@all +ping (%R~sel:* resetchannels &sel -@all +get) (%W~w:* resetchannels -@all +set)'), 'selectors');
    await stop(s, 'SIGKILL');
    s = await start(dir, 'always');
    assert.match(await call(s.c, 'PING'), /^-NOAUTH/, 'the default user keeps its password');
    assert.equal(await call(s.c, 'AUTH', 'defpw'), ok);
    assert.equal(await call(s.c, 'ACL', 'LIST'), list);
    assert.match(await call(s.c, 'AUTH', 'alice', 'bad'), /^-WRONGPASS/);
    assert.match(await call(s.c, 'AUTH', 'temp', 'x'), /^-WRONGPASS/);
    assert.equal(await call(s.c, 'AUTH', 'alice', 'pw1'), ok);
    assert.equal(await call(s.c, 'SET', 'app:1', 'v'), ok);
    assert.match(await call(s.c, 'GET', 'app:1'), /^-NOPERM/);
    assert.match(await call(s.c, 'SET', 'other', 'v'), /^-NOPERM/);
    assert.equal(await call(s.c, 'AUTH', 'alice', 'pw2'), ok);
    assert.match(await call(s.c, 'AUTH', 'bob', 'any'), /^-WRONGPASS/, 'bob is off');
    // First-arg and subcommand rules hold after the restart.
    assert.ok(list.includes('-@all +@read +select|0 +select|Ab +config -config|set'), list);
    assert.equal(await call(s.c, 'AUTH', 'dave', 'pw'), ok);
    assert.equal(await call(s.c, 'SELECT', 'ab'), '-ERR value is not an integer or out of range\r\n');
    assert.match(await call(s.c, 'SELECT', '1'), /^-NOPERM/);
    assert.match(await call(s.c, 'CONFIG', 'SET', 'maxmemory', '0'), /^-NOPERM/);
    assert.equal(await call(s.c, 'SELECT', '0'), ok);
    assert.equal(await call(s.c, 'AUTH', 'alice', 'pw2'), ok);
    // The token minted by ACL RESTTOKEN carries alice's permissions.
    assert.equal((await rest(s.proc, token, 'SET', 'app:2', 'w')).status, 200);
    assert.notEqual((await rest(s.proc, token, 'GET', 'app:2')).status, 200);
    // Changes after the restart persist as well.
    assert.equal(await call(s.c, 'AUTH', 'defpw'), ok);
    assert.equal(await call(s.c, 'ACL', 'DELUSER', 'alice'), ':1\r\n');
    assert.equal(await call(s.c, 'ACL', 'SETUSER', 'default', 'nopass'), ok);
    const list2 = await call(s.c, 'ACL', 'LIST');
    await stop(s, 'SIGKILL');
    s = await start(dir, 'always');
    assert.equal(await call(s.c, 'ACL', 'LIST'), list2);
    assert.equal((await rest(s.proc, token, 'GET', 'app:2')).status, 401, 'the token went with its user');
    await stop(s, 'SIGTERM');
  });
});

// ---------------------------------------------------------------- collections end to end

for (const mode of ['always', 'everysec'] as const) {
  describe(`lists, streams and JSON written by clients survive SIGKILL (appendfsync ${mode})`, () => {
    it('including what blocking pops and blocking group reads changed', async () => {
      const dir = newDir();
      let s = await start(dir, mode);
      const c = s.c;
      const big: string[] = [];
      for (let i = 0; i < 3000; i++) big.push('e' + i);
      for (let i = 0; i < 3000; i += 500) await c.call('RPUSH', 'big', ...big.slice(i, i + 500));
      await c.call('LPUSH', 'big', 'head');
      await c.call('RPOP', 'big');
      await c.call('LINSERT', 'big', 'AFTER', 'e1500', 'mid');
      await c.call('LREM', 'big', '1', 'e10');
      await c.call('LTRIM', 'big', '2', '-3');
      for (let i = 1; i <= 1200; i++) await c.call('XADD', 'st', `${i}-0`, 'f', 'v' + i);
      await c.call('XGROUP', 'CREATE', 'st', 'g', '0');
      await c.call('XREADGROUP', 'GROUP', 'g', 'c1', 'COUNT', '20', 'STREAMS', 'st', '>');
      await c.call('XACK', 'st', 'g', '3-0', '4-0');
      await c.call('XDEL', 'st', '5-0', '700-0');
      await c.call('JSON.SET', 'doc', '$', '{"a":[1,2.5,"x"],"b":{"n":18446744073709551615}}');
      // Blocking: BLPOP and BLMOVE woken by pushes, XREADGROUP BLOCK woken by XADD.
      const b1 = await RawClient.connect(s.proc.port);
      const b2 = await RawClient.connect(s.proc.port);
      const b3 = await RawClient.connect(s.proc.port);
      await c.call('XGROUP', 'CREATE', 'wake', 'wg', '$', 'MKSTREAM');
      const p1 = b1.call('BLPOP', 'waitlist', '0');
      const p2 = b2.call('BLMOVE', 'src', 'dst', 'RIGHT', 'LEFT', '0');
      const p3 = b3.call('XREADGROUP', 'GROUP', 'wg', 'reader', 'BLOCK', '0', 'STREAMS', 'wake', '>');
      await waitFor(async () => /blocked_clients:3/.test(await call(c, 'INFO', 'clients')), 'three blocked clients');
      await c.call('LPUSH', 'waitlist', 'w1', 'w2', 'w3');
      await c.call('RPUSH', 'src', 's1', 's2');
      await c.call('XADD', 'wake', '1-1', 'k', 'v');
      assert.equal(text(await p1), '*2\r\n$8\r\nwaitlist\r\n$2\r\nw3\r\n');
      assert.equal(text(await p2), '$2\r\ns2\r\n');
      assert.match(text(await p3), /1-1/);
      for (const b of [b1, b2, b3]) b.close();
      const view = async (x: RawClient) => [
        await call(x, 'LRANGE', 'big', '0', '-1'), await call(x, 'LRANGE', 'waitlist', '0', '-1'),
        await call(x, 'LRANGE', 'src', '0', '-1'), await call(x, 'LRANGE', 'dst', '0', '-1'),
        await call(x, 'XINFO', 'STREAM', 'st', 'FULL', 'COUNT', '0'), await call(x, 'XINFO', 'STREAM', 'wake', 'FULL'),
        await call(x, 'JSON.GET', 'doc'), await call(x, 'DBSIZE'),
      ].join('');
      const before = await view(c);
      assert.match(before, /\$6\r\nreader\r\n/);
      if (mode === 'everysec') await new Promise((r) => setTimeout(r, 1200));
      await stop(s, 'SIGKILL');
      s = await start(dir, mode);
      assert.equal(await view(s.c), before);
      await stop(s, 'SIGTERM');
    });
  });
}
