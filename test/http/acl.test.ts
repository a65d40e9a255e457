/**
 * ACL users over REST: ACL RESTTOKEN mints a token that carries the user's permissions
 * (commands, key patterns); wrong credentials get Redis's WRONGPASS; a deleted or disabled
 * user's token stops working at once. Keys found at run time (XREAD, LMPOP, ZUNION, EVAL's
 * keys, redis.call inside scripts) and channels (SSE /subscribe, /psubscribe) are held to the
 * user's patterns; the read-only token cannot be widened by a script.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis as IORedis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';
import { Rest, RO_TOKEN, TOKEN_ARGS } from './rest-helpers.js';

describe('ACL users over REST', () => {
  let srv: Proc;
  let io: IORedis;
  before(async () => {
    srv = await startOurs(TOKEN_ARGS);
    io = new IORedis({ port: srv.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
    await io.connect();
  });
  after(async () => {
    io?.disconnect();
    await srv?.stop();
  });

  it('a RESTTOKEN carries the user\'s command and key permissions', async () => {
    assert.equal(await io.call('ACL', 'SETUSER', 'reader', 'on', '>s3cret', '~app:*', '+@read', '+set'), 'OK');
    const token = (await io.call('ACL', 'RESTTOKEN', 'reader', 's3cret')) as string;
    assert.match(token, /^[A-Za-z0-9_-]{20,}$/);
    assert.equal(await io.call('ACL', 'RESTTOKEN', 'reader', 's3cret'), token, 'the same user keeps one token');
    const rest = new Rest(`http://127.0.0.1:${srv.httpPort}`, token);
    assert.deepEqual((await rest.cmd(['SET', 'app:1', 'v'])).json, { result: 'OK' });
    assert.deepEqual((await rest.get('/get/app:1')).json, { result: 'v' });
    const denied = await rest.cmd(['DEL', 'app:1']);
    assert.equal(denied.status, 400);
    assert.deepEqual(denied.json, { error: "NOPERM this user has no permissions to run the 'del' command" });
    const key = await rest.cmd(['GET', 'other']);
    assert.deepEqual(key.json, { error: 'NOPERM this user has no permissions to access one of the keys used as arguments' });
    // ?_token= works as well as the header.
    const q = await new Rest(`http://127.0.0.1:${srv.httpPort}`).req(`/get/app:1?_token=${token}`, { noAuth: true });
    assert.deepEqual(q.json, { result: 'v' });
    // Pipelines and transactions run as the user too.
    const p = await rest.pipeline([['GET', 'app:1'], ['DEL', 'app:1']]);
    assert.deepEqual(p.json, [{ result: 'v' }, { error: "NOPERM this user has no permissions to run the 'del' command" }]);
  });

  it('wrong credentials are refused with Redis\'s error', async () => {
    await assert.rejects(io.call('ACL', 'RESTTOKEN', 'reader', 'wrong'), /WRONGPASS invalid username-password pair or user is disabled/);
    await assert.rejects(io.call('ACL', 'RESTTOKEN', 'nobody', 'x'), /WRONGPASS/);
  });

  it('disabling or deleting the user revokes its token at once', async () => {
    await io.call('ACL', 'SETUSER', 'temp', 'on', '>pw', '~*', '+@all');
    const token = (await io.call('ACL', 'RESTTOKEN', 'temp', 'pw')) as string;
    const rest = new Rest(`http://127.0.0.1:${srv.httpPort}`, token);
    assert.equal((await rest.get('/ping')).status, 200);
    await io.call('ACL', 'SETUSER', 'temp', 'off');
    assert.equal((await rest.get('/ping')).status, 401);
    await io.call('ACL', 'SETUSER', 'temp', 'on');
    assert.equal((await rest.get('/ping')).status, 200);
    await io.call('ACL', 'DELUSER', 'temp');
    assert.equal((await rest.get('/ping')).status, 401);
  });

  it('keys found at run time and keys touched by scripts stay inside the user\'s patterns', async () => {
    await io.call('ACL', 'SETUSER', 'app', 'on', '>pw', '~app:*', '&app:*', '+@all', '-@dangerous');
    const token = (await io.call('ACL', 'RESTTOKEN', 'app', 'pw')) as string;
    const rest = new Rest(`http://127.0.0.1:${srv.httpPort}`, token);
    await io.call('XADD', 'x', '1-1', 'f', 'secret');
    await io.call('RPUSH', 'xl', 'secret');
    await io.call('ZADD', 'xz', '1', 'secret');
    await io.call('SADD', 'xs', 'secret');
    await io.call('FUNCTION', 'LOAD', 'REPLACE', "#!lua name=rest_acl\nredis.register_function('f', function(keys, args) return redis.call('xread', 'streams', 'x', '0') end)");
    const KEYS = 'NOPERM this user has no permissions to access one of the keys used as arguments';
    const refused: unknown[][] = [
      ['XREAD', 'STREAMS', 'x', '0'],
      ['XREAD', 'COUNT', '1', 'STREAMS', 'app:s', 'x', '0', '0'],
      ['XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', 'x', '>'],
      ['LMPOP', '2', 'app:l', 'xl', 'LEFT'],
      ['ZMPOP', '2', 'app:z', 'xz', 'MIN'],
      ['SINTERCARD', '2', 'app:s', 'xs'],
      ['ZINTERCARD', '1', 'xz'],
      ['ZUNION', '2', 'app:z', 'xz'],
      ['ZINTER', '1', 'xz'],
      ['ZDIFF', '1', 'xz'],
      ['GEORADIUS', 'app:g', '0', '0', '1', 'm', 'STORE', 'xl'],
      ['EVAL', 'return 1', '1', 'x'],
      ['FCALL', 'f', '1', 'x'],
    ];
    for (const cmd of refused) assert.deepEqual((await rest.cmd(cmd)).json, { error: KEYS }, JSON.stringify(cmd));
    // Nothing was read or popped.
    assert.equal(await io.call('LLEN', 'xl'), 1);
    assert.equal(await io.call('ZCARD', 'xz'), 1);
    // Inside a script: Redis's script error, and the data stays out of reach.
    const inScript = await rest.cmd(['EVAL', "return redis.call('xread', 'streams', 'x', '0')", '0']);
    assert.match(inScript.json.error, /^ERR The user executing the script can't access at least one of the keys mentioned in the command arguments/);
    const fcall = await rest.cmd(['FCALL', 'f', '0']);
    assert.match(fcall.json.error, /^ERR The user executing the script can't access at least one of the keys/);
    assert.ok(!inScript.text.includes('secret') && !fcall.text.includes('secret'));
    // Keys inside the patterns work.
    assert.deepEqual((await rest.cmd(['LMPOP', '1', 'app:l', 'LEFT'])).json, { result: null });
  });

  it('SSE /subscribe and /psubscribe hold a token user to its channel patterns', async () => {
    await io.call('ACL', 'SETUSER', 'chan', 'on', '>pw', '~app:*', 'resetchannels', '&app:*', '+@all', '-@dangerous');
    const token = (await io.call('ACL', 'RESTTOKEN', 'chan', 'pw')) as string;
    const rest = new Rest(`http://127.0.0.1:${srv.httpPort}`, token);
    const CH = 'NOPERM this user has no permissions to access one of the channels used as arguments';
    assert.deepEqual((await rest.post('/subscribe/app:a/other', '[]')).json, { error: CH });
    // A pattern must be allowed literally (Redis 7): app:x* is inside app:* yet refused.
    assert.deepEqual((await rest.post('/psubscribe/app:x*', '[]')).json, { error: CH });
    assert.deepEqual((await rest.cmd(['PUBLISH', 'other', 'm'])).json, { error: CH });
    assert.deepEqual((await rest.cmd(['PUBLISH', 'app:a', 'm'])).json, { result: 0 });
    const ctl = new AbortController();
    const ok = await fetch(`http://127.0.0.1:${srv.httpPort}/psubscribe/app:*`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, body: '[]', signal: ctl.signal,
    });
    assert.equal(ok.status, 200);
    // Revoking the channel ends the stream (Redis disconnects such subscribers).
    const ended = (async () => {
      try {
        for await (const _ of ok.body as unknown as AsyncIterable<Uint8Array>) { /* drain */ }
        return 'ended';
      } catch {
        return 'ended';
      }
    })();
    await io.call('ACL', 'SETUSER', 'chan', '&app:more');
    const still = await Promise.race([ended, new Promise((r) => setTimeout(() => r('open'), 300))]);
    assert.equal(still, 'open', 'adding a channel revokes nothing');
    await io.call('ACL', 'SETUSER', 'chan', 'resetchannels', '&app:other');
    assert.equal(await Promise.race([ended, new Promise((r) => setTimeout(() => r('open'), 5000))]), 'ended');
    ctl.abort();
  });

  it('the read-only token cannot be widened by a script', async () => {
    const ro = new Rest(`http://127.0.0.1:${srv.httpPort}`, RO_TOKEN);
    await io.call('SET', 'ro:k', 'v');
    const keys = "NOPERM this user has no permissions to run the 'keys' command";
    assert.deepEqual((await ro.cmd(['KEYS', '*'])).json, { error: keys });
    const cases: Array<[string, string]> = [
      ["return redis.call('keys', '*')", keys],
      ["return redis.call('scan', '0')", "NOPERM this user has no permissions to run the 'scan' command"],
      ["return redis.pcall('keys', '*')", keys],
    ];
    for (const [script, err] of cases) {
      const r = await ro.cmd(['EVAL_RO', script, '0']);
      assert.equal(r.status, 400, script);
      assert.ok(r.json.error.startsWith(err), `${script}: ${r.json.error}`);
      assert.ok(!r.text.includes('ro:k'));
    }
    // A write inside EVAL_RO gets the error the token gets for it directly.
    const direct = (await ro.cmd(['SET', 'ro:k', 'w'])).json.error as string;
    const scripted = (await ro.cmd(['EVAL_RO', "return redis.call('set', 'ro:k', 'w')", '0'])).json.error as string;
    assert.ok(scripted.startsWith(direct), scripted);
    assert.equal(await io.call('GET', 'ro:k'), 'v');
    // redis.acl_check_cmd tells the script the same.
    assert.deepEqual((await ro.cmd(['EVAL_RO', "return {redis.acl_check_cmd('keys', '*') and 1 or 0, redis.acl_check_cmd('get', 'k') and 1 or 0}", '0'])).json, { result: [0, 1] });
    // Reads still work inside scripts.
    assert.deepEqual((await ro.cmd(['EVAL_RO', "return redis.call('get', 'ro:k')", '0'])).json, { result: 'v' });
    // A RESTTOKEN user refused KEYS is refused inside its scripts too (its ACL rules).
    await io.call('ACL', 'SETUSER', 'nokeys', 'on', '>pw', '~*', '&*', '+@all', '-keys');
    const t = (await io.call('ACL', 'RESTTOKEN', 'nokeys', 'pw')) as string;
    const r = await new Rest(`http://127.0.0.1:${srv.httpPort}`, t).cmd(['EVAL_RO', "return redis.call('keys', '*')", '0']);
    assert.match(r.json.error, /^ERR The user executing the script can't run this command or subcommand/);
  });
});
