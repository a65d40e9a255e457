/**
 * ACL users over REST: ACL RESTTOKEN mints a token that carries the user's permissions
 * (commands, key patterns); wrong credentials get Redis's WRONGPASS; a deleted or disabled
 * user's token stops working at once.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis as IORedis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';
import { Rest, TOKEN_ARGS } from './rest-helpers.js';

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
});
