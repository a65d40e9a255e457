/**
 * One engine behind both transports: keys written over RESP (ioredis) are read over REST at
 * once and vice versa, bytes intact; plus the REST server's lifecycle (ports, tokens kept in
 * --dir, revocation on a password change, shutdown).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';
import { Rest, TOKEN, TOKEN_ARGS, hasCommand } from './rest-helpers.js';
import { createServer } from '../../dist/app.js';
import { loadConfig } from '../../dist/config.js';

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond(), 'condition not reached');
}

describe('TCP and REST share one engine', () => {
  let srv: Proc;
  let io: IORedis;
  let rest: Rest;
  before(async () => {
    srv = await startOurs(TOKEN_ARGS);
    // No ready check: INFO may not exist yet on this branch.
    io = new IORedis({ port: srv.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1, enableReadyCheck: false });
    await io.connect();
    rest = new Rest(`http://127.0.0.1:${srv.httpPort}`);
  });
  after(async () => {
    io?.disconnect();
    await srv?.stop();
  });

  it('written over TCP, read over REST (and the other way)', async () => {
    await io.set('from-tcp', 'hello');
    assert.deepEqual((await rest.get('/get/from-tcp')).json, { result: 'hello' });
    await rest.get('/set/from-rest/world');
    assert.equal(await io.get('from-rest'), 'world');
    await rest.cmd(['DEL', 'from-tcp']);
    assert.equal(await io.get('from-tcp'), null);
    await io.del('from-rest');
    assert.deepEqual((await rest.get('/get/from-rest')).json, { result: null });
  });

  it('binary values keep every byte across transports', async () => {
    const bin = Buffer.from([0, 1, 0xfe, 0xff, 0x0d, 0x0a, 0x80]);
    await io.set(Buffer.from([0x6b, 0xff]), bin);
    const r = await rest.get('/get/k%FF', { 'Upstash-Encoding': 'base64' });
    assert.deepEqual(Buffer.from(r.json.result, 'base64'), bin);
    await rest.post('/set/b%00in', bin);
    assert.deepEqual(await io.getBuffer(Buffer.from('b\0in')), bin);
  });

  it('a REST pipeline and a TCP client see the same keyspace size', async () => {
    await io.flushall();
    await rest.pipeline([['SET', 'a', '1'], ['SET', 'b', '2']]);
    await io.set('c', '3');
    assert.equal(await io.dbsize(), 3);
    assert.deepEqual((await rest.get('/dbsize')).json, { result: 3 });
  });

  it('REST always works on database 0, whatever TCP clients select', async () => {
    await io.flushall();
    await io.select(1);
    await io.set('in-db1', 'x');
    assert.deepEqual((await rest.get('/get/in-db1')).json, { result: null });
    await rest.get('/set/in-db0/y');
    assert.equal(await io.get('in-db0'), null);
    await io.select(0);
    assert.equal(await io.get('in-db0'), 'y');
  });

  it('a REST transaction runs between TCP commands, atomically', async () => {
    await io.flushall();
    const r = await rest.multi([['SET', 'tx', 'a'], ['GET', 'tx'], ['SET', 'tx', 'b']]);
    assert.deepEqual(r.json, [{ result: 'OK' }, { result: 'a' }, { result: 'OK' }]);
    assert.equal(await io.get('tx'), 'b');
  });

  it('a TCP client in MULTI is not disturbed by REST requests', async () => {
    await io.flushall();
    const tx = io.multi();
    tx.set('t', '1');
    tx.get('t');
    const pending = tx.exec();
    await rest.multi([['SET', 'u', '1']]);
    await rest.get('/set/v/1');
    assert.deepEqual(await pending, [[null, 'OK'], [null, '1']]);
    assert.equal(await io.dbsize(), 3);
  });
});

/** The tokens a server printed at start-up. */
function printedTokens(output: string): { token: string; readOnlyToken: string } {
  const t = /REST token:\s+(\S+) \(/.exec(output);
  const r = /REST read-only token:\s+(\S+) \(/.exec(output);
  assert.ok(t && r, output);
  return { token: t[1], readOnlyToken: r[1] };
}

describe('REST server lifecycle', () => {
  it('tokens are generated on first start, stored in --dir (LMDB), printed, and reused', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-rest-tokens-'));
    try {
      const a = await startOurs(['--dir', dir]);
      await waitFor(() => a.output().includes('REST read-only token'));
      const stored = printedTokens(a.output());
      assert.ok(stored.token.length >= 32 && stored.readOnlyToken.length >= 32);
      assert.notEqual(stored.token, stored.readOnlyToken);
      assert.match(a.output(), /generated, stored in the data directory/);
      assert.match(a.output(), new RegExp(`REST API on http://127\\.0\\.0\\.1:${a.httpPort}`));
      const r1 = new Rest(`http://127.0.0.1:${a.httpPort}`, stored.token);
      assert.deepEqual((await r1.get('/ping')).json, { result: 'PONG' });
      // Kept in LMDB with the data (appendfsync no keeps them in rest-tokens.json instead).
      assert.equal(fs.existsSync(path.join(dir, 'rest-tokens.json')), false);
      await a.proc.kill('SIGTERM');
      await new Promise((r) => a.proc.once('exit', r));
      const b = await startOurs(['--dir', dir]);
      const r2 = new Rest(`http://127.0.0.1:${b.httpPort}`, stored.token);
      assert.deepEqual((await r2.get('/ping')).json, { result: 'PONG' }, 'same token after a restart');
      await b.stop();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--token and --read-only-token (and their environment variables) win', async () => {
    const a = await startOurs([], { REST_TOKEN: 'env-token', REST_READ_ONLY_TOKEN: 'env-ro' });
    try {
      assert.equal((await new Rest(`http://127.0.0.1:${a.httpPort}`, 'env-token').get('/ping')).status, 200);
      assert.equal((await new Rest(`http://127.0.0.1:${a.httpPort}`, 'env-ro').get('/set/a/b')).status, 400);
      // Both given: nothing generated, nothing stored.
      assert.equal(fs.existsSync(path.join(a.dir, 'rest-tokens.json')), false);
      await waitFor(() => a.output().includes('REST read-only token'));
      assert.ok(!a.output().includes('env-token'), 'a token given by the operator is not echoed');
    } finally {
      await a.stop();
    }
  });

  it('--http-port -1 turns the REST API off', async () => {
    const a = await startOurs(['--http-port', '-1']);
    try {
      await assert.rejects(fetch(`http://127.0.0.1:${a.httpPort}/ping`));
      // The start-up line is printed just after the RESP port opens: wait for it.
      await waitFor(() => /REST API off/.test(a.output()));
    } finally {
      await a.stop();
    }
  });

  it('in process: --http-port 0 picks a free port; a password change revokes both tokens; stop() closes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-rest-inproc-'));
    const log = console.log;
    const printed: string[] = [];
    try {
      const s = await createServer(loadConfig(['--port', '0', '--http-port', '0', '--dir', dir, '--token', TOKEN]));
      assert.ok(s.httpPort > 0);
      const base = `http://127.0.0.1:${s.httpPort}`;
      const oldRo = s.tokens!.readOnlyToken;
      assert.equal((await new Rest(base, TOKEN).get('/set/k/v')).status, 200);
      assert.equal((await new Rest(base, oldRo).get('/get/k')).status, 200);
      console.log = (...a: unknown[]) => { printed.push(a.join(' ')); };
      assert.equal(s.engine.setConfig('requirepass', 'secret'), null);
      console.log = log;
      assert.equal((await new Rest(base, TOKEN).get('/get/k')).status, 401, 'standard token revoked');
      assert.equal((await new Rest(base, oldRo).get('/get/k')).status, 401, 'read-only token revoked');
      const fresh = new Rest(base, s.tokens!.token);
      assert.deepEqual((await fresh.get('/get/k')).json, { result: 'v' }, 'REST needs no AUTH, only its token');
      assert.equal((await new Rest(base, s.tokens!.readOnlyToken).get('/get/k')).status, 200);
      assert.deepEqual(s.engine.persistence!.getRecord('rest-tokens'), { token: s.tokens!.token, readOnlyToken: s.tokens!.readOnlyToken });
      assert.ok(printed.join('\n').includes(s.tokens!.token), 'new tokens printed');
      await s.stop();
      await assert.rejects(fetch(base + '/ping'));
    } finally {
      console.log = log;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('CONFIG SET requirepass over RESP revokes the tokens (when CONFIG exists)', async (t) => {
    const a = await startOurs(TOKEN_ARGS);
    try {
      if (!(await hasCommand(a.port, 'config'))) {
        t.skip('CONFIG not implemented yet on this branch');
        return;
      }
      const io = new IORedis({ port: a.port, host: '127.0.0.1', enableReadyCheck: false });
      await io.config('SET', 'requirepass', 'pw');
      io.disconnect();
      assert.equal((await new Rest(`http://127.0.0.1:${a.httpPort}`, TOKEN).get('/ping')).status, 401);
      await waitFor(() => a.output().includes('New tokens'));
      const stored = /New tokens:\s+REST token:\s+(\S+)/.exec(a.output())!;
      assert.equal((await new Rest(`http://127.0.0.1:${a.httpPort}`, stored[1]).get('/ping')).status, 200);
    } finally {
      await a.stop();
    }
  });
});
