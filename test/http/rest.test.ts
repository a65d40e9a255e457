/**
 * The REST API over raw fetch against a real server process: every request form, header,
 * status and error of redis-rest.md / seed.md §4.1, §7.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startOurs, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { Rest, TOKEN, RO_TOKEN, TOKEN_ARGS, hasCommand } from './rest-helpers.js';

let srv: Proc;
let rest: Rest;
let ro: Rest;
let base: string;

/** Direct RESP access to the same engine. */
async function resp(...args: Array<string | Buffer>): Promise<Buffer> {
  const c = await RawClient.connect(srv.port);
  try {
    return await c.call(...args);
  } finally {
    c.close();
  }
}

/** The args of an unknown command as the error message lists them: shows argument order. */
function listedArgs(error: string): string[] {
  const m = /with args beginning with: (.*)$/.exec(error);
  assert.ok(m, error);
  return [...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]);
}

before(async () => {
  srv = await startOurs(TOKEN_ARGS);
  base = `http://127.0.0.1:${srv.httpPort}`;
  rest = new Rest(base);
  ro = new Rest(base, RO_TOKEN);
});
after(async () => {
  await srv?.stop();
});
beforeEach(async () => {
  await resp('FLUSHALL');
});

describe('path form', () => {
  it('GET /set then /get, command names case-insensitive', async () => {
    let r = await rest.get('/set/foo/bar');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { result: 'OK' });
    assert.equal(r.headers.get('content-type'), 'application/json');
    r = await rest.get('/GET/foo');
    assert.deepEqual(r.json, { result: 'bar' });
    r = await rest.get('/gEt/foo');
    assert.deepEqual(r.json, { result: 'bar' });
    r = await rest.get('/get/missing');
    assert.equal(r.status, 200);
    assert.equal(r.text, '{"result":null}');
  });

  it('segments are percent-decoded to raw bytes, %2F stays inside an argument', async () => {
    const r = await rest.get('/set/a%2Fb/%00%FF%FEx+y%20z');
    assert.deepEqual(r.json, { result: 'OK' });
    const v = await resp('GET', 'a/b');
    assert.deepEqual(v, Buffer.concat([Buffer.from('$8\r\n'), Buffer.from([0, 0xff, 0xfe]), Buffer.from('x+y z\r\n')]));
  });

  it('UTF-8 arguments round-trip; an empty trailing segment is an empty argument', async () => {
    await rest.get('/set/' + encodeURIComponent('clé') + '/' + encodeURIComponent('värde 😀'));
    assert.deepEqual((await rest.get('/get/' + encodeURIComponent('clé'))).json, { result: 'värde 😀' });
    assert.deepEqual((await rest.get('/echo/')).json, { result: '' });
  });

  it('HEAD runs the command and answers headers only', async () => {
    await rest.get('/set/h/v');
    let r = await rest.req('/get/h', { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.bytes.length, 0);
    assert.ok(r.headers.get('upstash-sync-token'));
    r = await rest.req('/get', { method: 'HEAD' });
    assert.equal(r.status, 400);
    r = await rest.req('/set/h2/v', { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.deepEqual((await rest.get('/get/h2')).json, { result: 'v' });
  });

  it('POST and PUT append the raw body (any content type, binary-safe) as the last argument', async () => {
    const bin = Buffer.from([0, 1, 2, 0xff, 0x22, 0x5c, 0x0a, 0xc3]);
    let r = await rest.post('/set/bin', bin, { 'content-type': 'application/x-www-form-urlencoded' });
    assert.deepEqual(r.json, { result: 'OK' });
    assert.deepEqual(await resp('GET', 'bin'), Buffer.concat([Buffer.from('$8\r\n'), bin, Buffer.from('\r\n')]));
    r = await rest.req('/set/put', { method: 'PUT', body: '{"json": ["value"]}', headers: { 'content-type': 'application/json' } });
    assert.deepEqual(r.json, { result: 'OK' });
    assert.deepEqual((await rest.get('/get/put')).json, { result: '{"json": ["value"]}' });
  });

  it('order: path segments, then the body, then query pairs (name, value)', async () => {
    const r = await rest.post('/nosuchcmd/a/b?EX=100&NX&k=v%20w', 'BODY');
    assert.equal(r.status, 400);
    assert.deepEqual(listedArgs(r.json.error), ['a', 'b', 'BODY', 'EX', '100', 'NX', 'k', 'v w']);
  });

  it('query pairs apply on GET too; _token never becomes an argument', async () => {
    const r = await rest.get(`/nosuchcmd/a?x=1&_token=${TOKEN}&y`);
    assert.deepEqual(listedArgs(r.json.error), ['a', 'x', '1', 'y']);
  });

  it('an empty body adds nothing', async () => {
    const r = await rest.post('/echo/x', '');
    assert.deepEqual(r.json, { result: 'x' });
  });

  it('SET with options from the query string (when SET options exist)', async (t) => {
    const r = await rest.post('/set/withex?EX=100', 'v');
    if (r.status === 400 && r.json.error === 'ERR syntax error') {
      t.skip('SET EX not implemented yet on this branch');
      return;
    }
    assert.deepEqual(r.json, { result: 'OK' });
    const ttl = await resp('TTL', 'withex');
    assert.match(ttl.toString(), /^:(99|100)\r\n$/);
  });

  it('invalid percent-encoding is a 400 and nothing runs', async () => {
    for (const p of ['/set/k/%G1', '/set/k/%', '/set/k/%4', '/set/k/v?EX=%ZZ']) {
      const r = await rest.get(p);
      assert.equal(r.status, 400, p);
      assert.match(r.json.error, /^ERR invalid percent-encoding/, p);
    }
    assert.equal((await resp('GET', 'k')).toString(), '$-1\r\n');
  });
});

describe('POST / (JSON command)', () => {
  it('strings and numbers, any content type', async () => {
    let r = await rest.cmd(['SET', 'n', 100]);
    assert.deepEqual(r.json, { result: 'OK' });
    assert.deepEqual((await rest.cmd(['GET', 'n'])).json, { result: '100' });
    r = await rest.post('/', '["ECHO", 12345678901234567890]');
    assert.equal(r.text, '{"result":"12345678901234567890"}', 'the number lexeme is kept');
    r = await rest.post('/', '["ECHO", 0.1]');
    assert.equal(r.text, '{"result":"0.1"}');
    r = await rest.post('/', '["ECHO", true]');
    assert.equal(r.text, '{"result":"true"}');
    r = await rest.req('/', { method: 'PUT', body: '["PING"]' });
    assert.deepEqual(r.json, { result: 'PONG' });
  });

  it('JSON escapes become UTF-8 bytes', async () => {
    await rest.post('/', '["SET","e","\\u00e9\\ud83d\\ude00\\n\\"q\\""]');
    const v = await resp('GET', 'e');
    assert.deepEqual(v, Buffer.concat([Buffer.from('$10\r\n'), Buffer.from('é😀\n"q"'), Buffer.from('\r\n')]));
  });

  it('errors are 400 with the Redis error text', async () => {
    let r = await rest.cmd(['GET']);
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, { error: "ERR wrong number of arguments for 'get' command" });
    r = await rest.cmd(['NOPE', 'x']);
    assert.equal(r.status, 400);
    assert.equal(r.json.error, "ERR unknown command 'NOPE', with args beginning with: 'x' ");
  });

  it('malformed bodies: 400 with a clear ERR message', async () => {
    const cases: Array<[string, RegExp]> = [
      ['', /must be a JSON array/],
      ['{"cmd":"GET"}', /must be a JSON array/],
      ['"GET"', /must be a JSON array/],
      ['[]', /^ERR empty command$/],
      ['["SET",["a"]]', /strings, numbers or booleans/],
      ['["SET","k",null]', /strings, numbers or booleans/],
      ['["SET","k",{"a":1}]', /strings, numbers or booleans/],
      ['["GET","a"', /invalid JSON/],
      ['[GET]', /invalid JSON/],
      ['["GET","a"] trailing', /invalid JSON/],
    ];
    for (const [body, want] of cases) {
      const r = await rest.post('/', body);
      assert.equal(r.status, 400, body);
      assert.equal(Object.keys(r.json).join(), 'error', body);
      assert.match(r.json.error, want, body);
    }
    const r = await rest.get('/');
    assert.equal(r.status, 405);
    assert.ok(r.json.error.startsWith('ERR '));
  });
});

describe('/pipeline', () => {
  it('one {result} or {error} per command, in order, HTTP 200', async () => {
    const r = await rest.pipeline([['SET', 'p1', 'v1'], ['GET', 'p1'], ['NOPE'], ['GET'], ['GET', 'zz'], ['SET', 'p1', 'x', 'BAD'], ['ECHO', 5], ['DEL', 'p1', 'zz']]);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, [
      { result: 'OK' },
      { result: 'v1' },
      { error: "ERR unknown command 'NOPE', with args beginning with: " },
      { error: "ERR wrong number of arguments for 'get' command" },
      { result: null },
      { error: 'ERR syntax error' },
      { result: '5' },
      { result: 1 },
    ]);
    for (const e of r.json) assert.equal(Object.keys(e).length, 1, 'strict entry shape');
  });

  it('malformed pipeline: 400 and nothing runs', async () => {
    const cases = ['[]', '[[]]', '["GET","a"]', '[["SET","pp","1"],5]', '[["SET","pp","1"],["GET",null]]', '[["SET","pp","1"]', '{}'];
    for (const body of cases) {
      const r = await rest.post('/pipeline', body);
      assert.equal(r.status, 400, body);
      assert.ok(r.json.error.startsWith('ERR '), body);
    }
    assert.equal((await resp('GET', 'pp')).toString(), '$-1\r\n');
  });

  it('large pipelines', async () => {
    const cmds: string[][] = [];
    for (let i = 0; i < 1000; i++) cmds.push(['SET', `k${i}`, `v${i}`]);
    for (let i = 0; i < 1000; i++) cmds.push(['GET', `k${i}`]);
    const r = await rest.pipeline(cmds);
    assert.equal(r.json.length, 2000);
    assert.deepEqual(r.json[1999], { result: 'v999' });
    assert.equal((await resp('DBSIZE')).toString(), ':1000\r\n');
  });
});

describe('/multi-exec', () => {
  it('runs atomically and returns each result', async () => {
    const r = await rest.multi([['SET', 'm', 'v'], ['GET', 'm'], ['DEL', 'm']]);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, [{ result: 'OK' }, { result: 'v' }, { result: 1 }]);
  });

  it('a command failing at run time gives its error; the others still run', async () => {
    const r = await rest.multi([['SET', 'a', '1'], ['SET', 'b', '2', 'BAD'], ['SET', 'c', '3']]);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, [{ result: 'OK' }, { error: 'ERR syntax error' }, { result: 'OK' }]);
    assert.equal((await resp('GET', 'c')).toString(), '$1\r\n3\r\n');
  });

  it('unknown command, wrong arity, REST-refused command: whole transaction discarded', async () => {
    for (const bad of [['NOPE', 'x'], ['GET'], ['SELECT', '1'], ['WATCH', 'x'], ['MULTI'], ['EXEC']]) {
      const r = await rest.multi([['SET', 'd', '1'], bad, ['SET', 'e', '1']]);
      assert.equal(r.status, 400, bad.join(' '));
      assert.deepEqual(Object.keys(r.json), ['error'], 'a single {error}, not an array');
      assert.match(r.json.error, /^EXECABORT Transaction discarded because of: .*\(command 2\)$/);
      assert.equal((await resp('DBSIZE')).toString(), ':0\r\n', 'nothing applied');
    }
    // No MULTI state survives: the next requests run normally.
    assert.deepEqual((await rest.get('/set/after/1')).json, { result: 'OK' });
    assert.deepEqual((await rest.multi([['GET', 'after']])).json, [{ result: '1' }]);
  });

  it('malformed body: 400, nothing applied', async () => {
    const r = await rest.post('/multi-exec', '[["SET","x","1"],["GET",{}]]');
    assert.equal(r.status, 400);
    assert.match(r.json.error, /strings, numbers or booleans/);
    assert.equal((await resp('DBSIZE')).toString(), ':0\r\n');
  });

  it('the read-only token cannot sneak a write into a transaction', async () => {
    const r = await ro.multi([['GET', 'x'], ['SET', 'x', '1']]);
    assert.equal(r.status, 400);
    assert.match(r.json.error, /NOPERM/);
    assert.equal((await resp('DBSIZE')).toString(), ':0\r\n');
  });

  it('is always JSON, even when resp2 is asked for', async () => {
    const r = await rest.multi([['PING']], { 'Upstash-Response-Format': 'resp2' });
    assert.deepEqual(r.json, [{ result: 'PONG' }]);
  });
});

describe('methods and CORS', () => {
  it('other methods: 405 with a JSON error', async () => {
    for (const method of ['DELETE', 'PATCH']) {
      const r = await rest.req('/get/x', { method });
      assert.equal(r.status, 405, method);
      assert.ok(r.json.error.startsWith('ERR '));
      assert.match(r.headers.get('allow')!, /GET, HEAD, POST, PUT/);
    }
  });

  it('OPTIONS preflight succeeds without a token', async () => {
    const r = await rest.req('/pipeline', {
      method: 'OPTIONS', noAuth: true,
      headers: { origin: 'https://example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, upstash-encoding' },
    });
    assert.equal(r.status, 204);
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    assert.match(r.headers.get('access-control-allow-methods')!, /POST/);
    assert.match(r.headers.get('access-control-allow-headers')!, /authorization/i);
    const plain = await rest.req('/', { method: 'OPTIONS', noAuth: true });
    assert.match(plain.headers.get('access-control-allow-headers')!, /Upstash-Encoding/);
  });

  it('every reply to a browser (Origin) carries CORS headers exposing the sync token', async () => {
    const origin = { origin: 'https://app.example' };
    for (const r of [
      await rest.get('/ping', origin), await rest.get('/get', origin), await rest.req('/ping', { noAuth: true, headers: origin }),
      await rest.post('/', '["PING"]', origin), await rest.post('/pipeline', '[["PING"]]', origin), await rest.post('/', 'bad', origin),
      await rest.req('/get/x', { method: 'DELETE', headers: origin }),
    ]) {
      assert.equal(r.headers.get('access-control-allow-origin'), '*');
      assert.equal(r.headers.get('access-control-expose-headers'), 'upstash-sync-token');
    }
    const plain = await rest.get('/ping');
    assert.equal(plain.headers.get('access-control-allow-origin'), null, 'server-side clients get no CORS headers');
  });
});

describe('authentication and tokens', () => {
  it('missing or wrong token: 401 with a JSON error', async () => {
    let r = await rest.req('/get/x', { noAuth: true });
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, { error: 'WRONGPASS invalid or missing auth token' });
    r = await rest.req('/get/x', { headers: { authorization: 'Bearer nope' } });
    assert.equal(r.status, 401);
    r = await rest.req('/get/x', { headers: { authorization: `Basic ${TOKEN}` } });
    assert.equal(r.status, 401);
    r = await rest.req('/', { method: 'POST', body: '["PING"]', noAuth: true, headers: { 'Upstash-Encoding': 'base64' } });
    assert.equal(r.status, 401);
    assert.equal(r.json.error, 'WRONGPASS invalid or missing auth token', 'never base64');
  });

  it('?_token= works on every endpoint; the header wins over it', async () => {
    let r = await rest.req(`/ping?_token=${TOKEN}`, { noAuth: true });
    assert.deepEqual(r.json, { result: 'PONG' });
    r = await rest.req(`/pipeline?_token=${TOKEN}`, { method: 'POST', body: '[["PING"]]', noAuth: true });
    assert.deepEqual(r.json, [{ result: 'PONG' }]);
    r = await rest.req(`/ping?_token=${TOKEN}`, { headers: { authorization: 'Bearer wrong' } });
    assert.equal(r.status, 401);
    r = await rest.req('/ping', { headers: { authorization: `bearer ${TOKEN}` } });
    assert.equal(r.status, 200, 'the scheme is case-insensitive');
  });

  it('read-only token: reads yes, writes and dangerous commands NOPERM (400)', async () => {
    await rest.get('/set/r/v');
    assert.deepEqual((await ro.get('/get/r')).json, { result: 'v' });
    assert.deepEqual((await ro.get('/ping')).json, { result: 'PONG' });
    assert.deepEqual((await ro.get('/echo/x')).json, { result: 'x' });
    assert.deepEqual((await ro.get('/dbsize')).json, { result: 1 });
    let r = await ro.get('/set/r/x');
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, { error: "NOPERM this user has no permissions to run the 'set' command" });
    r = await ro.get('/flushall');
    assert.equal(r.status, 400);
    assert.match(r.json.error, /^NOPERM/);
    r = await ro.pipeline([['GET', 'r'], ['DEL', 'r']]);
    assert.deepEqual(r.json, [{ result: 'v' }, { error: "NOPERM this user has no permissions to run the 'del' command" }]);
    assert.equal((await resp('GET', 'r')).toString(), '$1\r\nv\r\n');
  });

  it('read-only token refuses SCAN and KEYS (when they exist)', async (t) => {
    let tested = 0;
    for (const [cmd, path] of [['scan', '/scan/0'], ['keys', '/keys/*']]) {
      if (!(await hasCommand(srv.port, cmd))) continue;
      tested++;
      const r = await ro.get(path);
      assert.equal(r.status, 400, cmd);
      assert.match(r.json.error, /^NOPERM/);
      assert.equal((await rest.get(path)).status, 200, `${cmd} with the standard token`);
    }
    if (tested === 0) t.skip('SCAN and KEYS not implemented yet on this branch');
  });

  it('commands that need a connection are refused over REST with a clear error', async () => {
    for (const c of [['SELECT', '1'], ['MULTI'], ['WATCH', 'k'], ['AUTH', 'x'], ['HELLO'], ['QUIT'], ['RESET'], ['COMMAND', 'COUNT']]) {
      const r = await rest.cmd(c);
      assert.equal(r.status, 400, c.join(' '));
      assert.match(r.json.error, /^ERR Command '[a-z|]+' is not available over the REST API$/, c.join(' '));
    }
    // A refused EXEC words it as Redis does for any rejected EXEC.
    const exec = await rest.cmd(['EXEC']);
    assert.equal(exec.status, 400);
    assert.equal(exec.json.error, "EXECABORT Transaction discarded because of: Command 'exec' is not available over the REST API");
    for (const c of [['MONITOR'], ['SUBSCRIBE', 'ch']]) {
      const r = await rest.cmd(c);
      assert.equal(r.status, 400, c.join(' '));
    }
  });
});

describe('reply formats', () => {
  it('Upstash-Encoding: base64 encodes every string but the OK status; errors stay plain', async () => {
    const b64 = { 'Upstash-Encoding': 'base64' };
    assert.equal((await rest.cmd(['SET', 'k', 'OK'], b64)).text, '{"result":"OK"}');
    assert.equal((await rest.cmd(['GET', 'k'], b64)).text, '{"result":"T0s="}');
    assert.equal((await rest.cmd(['PING'], b64)).text, '{"result":"UE9ORw=="}');
    assert.equal((await rest.cmd(['DBSIZE'], b64)).text, '{"result":1}');
    assert.equal((await rest.cmd(['GET', 'none'], b64)).text, '{"result":null}');
    assert.equal((await rest.cmd(['GET'], b64)).text, '{"error":"ERR wrong number of arguments for \'get\' command"}');
    const r = await rest.pipeline([['SET', 'x', 'bar'], ['GET', 'x'], ['NOPE']], b64);
    assert.deepEqual(r.json, [{ result: 'OK' }, { result: 'YmFy' }, { error: "ERR unknown command 'NOPE', with args beginning with: " }]);
    const m = await rest.multi([['SET', 'x', 'bar'], ['GET', 'x']], b64);
    assert.deepEqual(m.json, [{ result: 'OK' }, { result: 'YmFy' }]);
  });

  it('base64 carries raw bytes exactly; the Svc-Encoding alias works', async () => {
    const bin = Buffer.from([0, 0xff, 0xfe, 0x80, 0x41]);
    await rest.post('/set/bin', bin);
    const r = await rest.get('/get/bin', { 'Svc-Encoding': 'base64' });
    assert.deepEqual(Buffer.from(r.json.result, 'base64'), bin);
  });

  it('invalid UTF-8 becomes U+FFFD in JSON mode; control characters are escaped', async () => {
    await rest.post('/set/bad', Buffer.from([0x61, 0xff, 0x62, 0x0a, 0x22, 0x00]));
    const r = await rest.get('/get/bad');
    assert.deepEqual(r.json, { result: 'a\ufffdb\n"\u0000' });
  });

  it('Upstash-Response-Format: resp2 returns raw RESP2 as octet-stream', async () => {
    const h = { 'Upstash-Response-Format': 'resp2' };
    let r = await rest.get('/set/foo/bar', h);
    assert.equal(r.headers.get('content-type'), 'application/octet-stream');
    assert.equal(r.text, '+OK\r\n');
    r = await rest.cmd(['GET', 'foo'], h);
    assert.equal(r.text, '$3\r\nbar\r\n');
    r = await rest.get('/get', h);
    assert.equal(r.status, 400);
    assert.equal(r.text, "-ERR wrong number of arguments for 'get' command\r\n");
    r = await rest.pipeline([['GET', 'foo'], ['DBSIZE'], ['NOPE']], h);
    assert.equal(r.status, 200);
    assert.equal(r.text, "$3\r\nbar\r\n:1\r\n-ERR unknown command 'NOPE', with args beginning with: \r\n");
    r = await rest.get('/get/foo', { 'Svc-Response-Format': 'resp2' });
    assert.equal(r.text, '$3\r\nbar\r\n');
    r = await rest.get('/get/foo', { 'Upstash-Response-Format': 'json' });
    assert.deepEqual(r.json, { result: 'bar' });
  });

  it('unknown format, or resp2 with base64: 400', async () => {
    let r = await rest.get('/ping', { 'Upstash-Response-Format': 'xml' });
    assert.equal(r.status, 400);
    assert.match(r.json.error, /^ERR invalid Upstash-Response-Format/);
    r = await rest.get('/ping', { 'Upstash-Response-Format': 'resp2', 'Upstash-Encoding': 'base64' });
    assert.equal(r.status, 400);
    assert.match(r.json.error, /^ERR /);
  });

  it('integers beyond 2^53 keep every digit (when INCRBY exists)', async (t) => {
    if (!(await hasCommand(srv.port, 'incrby'))) {
      t.skip('INCRBY not implemented yet on this branch');
      return;
    }
    await rest.get('/set/big/9223372036854775800');
    const r = await rest.get('/incrby/big/7');
    assert.equal(r.text, '{"result":9223372036854775807}');
  });

  it('large values round-trip (1 MB body, JSON and base64)', async () => {
    const v = Buffer.alloc(1024 * 1024, 'abcdefghij');
    assert.deepEqual((await rest.post('/set/large', v)).json, { result: 'OK' });
    const r = await rest.get('/get/large');
    assert.equal(r.json.result, v.toString());
    const b = await rest.get('/get/large', { 'Upstash-Encoding': 'base64' });
    assert.equal(b.json.result, v.toString('base64'));
    // A JSON body that arrives in several chunks, and a streamed one without Content-Length.
    const big = 'é'.repeat(300000);
    assert.deepEqual((await rest.cmd(['SET', 'large2', big])).json, { result: 'OK' });
    assert.equal((await rest.cmd(['GET', 'large2'])).json.result, big);
    const body = Buffer.from(JSON.stringify([['SET', 'large3', big], ['GET', 'large3']]));
    const stream = new ReadableStream({
      start(ctrl) {
        for (let i = 0; i < body.length; i += 70000) ctrl.enqueue(new Uint8Array(body.subarray(i, i + 70000)));
        ctrl.close();
      },
    });
    const r2 = await fetch(base + '/pipeline', { method: 'POST', body: stream, headers: { authorization: `Bearer ${TOKEN}` }, duplex: 'half' } as RequestInit);
    assert.deepEqual(await r2.json(), [{ result: 'OK' }, { result: big }]);
  });
});

describe('read-your-writes sync token', () => {
  it('present on every reply, changes after each write, not after reads, any token accepted', async () => {
    const t0 = (await rest.get('/get/x')).headers.get('upstash-sync-token');
    assert.ok(t0 && t0.length > 0);
    const t1 = (await rest.get('/set/x/1')).headers.get('upstash-sync-token');
    assert.notEqual(t1, t0);
    const t2 = (await rest.get('/set/x/2')).headers.get('upstash-sync-token');
    assert.notEqual(t2, t1);
    const t3 = (await rest.get('/get/x')).headers.get('upstash-sync-token');
    assert.equal(t3, t2, 'a read does not change it');
    const t4 = (await rest.pipeline([['SET', 'x', '3'], ['SET', 'y', '4']])).headers.get('upstash-sync-token');
    assert.notEqual(t4, t3);
    await resp('SET', 'x', 'tcp');
    const t5 = (await rest.get('/get/x')).headers.get('upstash-sync-token');
    assert.notEqual(t5, t4, 'a write over TCP also moves it');
    for (const tok of ['', 'garbage', 'my-new-sync-token', t0!]) {
      const r = await rest.get('/get/x', { 'upstash-sync-token': tok });
      assert.equal(r.status, 200);
    }
    const e = await rest.req('/get/x', { noAuth: true });
    assert.ok(e.headers.get('upstash-sync-token'), 'also on errors');
  });
});

describe('robustness', () => {
  it('an aborted upload or garbage bytes do not disturb the server', async () => {
    await new Promise<void>((resolve) => {
      const s = net.connect(srv.httpPort, '127.0.0.1', () => {
        s.write(`POST /set/k HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 100000\r\n\r\npartial`);
        setTimeout(() => { s.destroy(); resolve(); }, 50);
      });
      s.on('error', () => {});
    });
    await new Promise<void>((resolve) => {
      const s = net.connect(srv.httpPort, '127.0.0.1', () => {
        s.write(Buffer.from([0xde, 0xad, 0xbe, 0xef, 13, 10, 13, 10]));
        setTimeout(() => { s.destroy(); resolve(); }, 50);
      });
      s.on('error', () => {});
    });
    assert.deepEqual((await rest.get('/ping')).json, { result: 'PONG' });
    assert.equal((await resp('GET', 'k')).toString(), '$-1\r\n', 'the aborted SET never ran');
  });

  it('mutated JSON bodies and paths: always a JSON reply, 200 or 400, never a crash', async () => {
    const seed = Buffer.from(JSON.stringify([['SET', 'fz', 'v\u00e9"x'], ['GET', 'fz'], ['ECHO', 12.5e3, true]]));
    let state = 12345;
    const rnd = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return state % n;
    };
    const bytes = [0x5b, 0x5d, 0x22, 0x5c, 0x2c, 0x7b, 0x30, 0x2d, 0x65, 0x75, 0x00, 0xff, 0x20];
    for (let i = 0; i < 300; i++) {
      const b = Buffer.from(seed);
      const edits = 1 + rnd(4);
      const arr = [...b];
      for (let k = 0; k < edits; k++) {
        const at = rnd(arr.length + 1);
        const op = rnd(3);
        if (op === 0) arr.splice(at, 1);
        else if (op === 1) arr.splice(at, 0, bytes[rnd(bytes.length)]);
        else arr[Math.min(at, arr.length - 1)] = bytes[rnd(bytes.length)];
      }
      const body = Buffer.from(arr);
      for (const ep of ['/pipeline', '/multi-exec', '/']) {
        const r = await rest.post(ep, body);
        assert.ok(r.status === 200 || r.status === 400, `${ep} ${body.toString('latin1')} -> ${r.status}`);
        assert.ok(r.json !== undefined, `${ep} reply is JSON: ${r.text}`);
      }
      const path = '/' + body.toString('latin1').replace(/[^A-Za-z0-9%/]/g, '');
      const r = await rest.get(path);
      assert.ok([200, 400, 405].includes(r.status), `${path} -> ${r.status}`);
      assert.ok(r.json !== undefined);
    }
    assert.deepEqual((await rest.get('/ping')).json, { result: 'PONG' });
  });

  it('many concurrent requests of every kind', async () => {
    const jobs: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      jobs.push(rest.get(`/set/c${i}/${i}`));
      jobs.push(rest.cmd(['GET', `c${i}`]));
      jobs.push(rest.pipeline([['SET', `d${i}`, 'x'], ['GET', `d${i}`]]));
      jobs.push(rest.post(`/set/e${i}`, 'body'));
    }
    await Promise.all(jobs);
    assert.equal((await resp('DBSIZE')).toString(), ':600\r\n');
  });
});

describe('request size limit', () => {
  let small: Proc;
  let sr: Rest;
  before(async () => {
    small = await startOurs([...TOKEN_ARGS, '--max-request-size', '4096']);
    sr = new Rest(`http://127.0.0.1:${small.httpPort}`);
  });
  after(async () => {
    await small?.stop();
  });

  it('a body over the limit: 413 with a JSON error, nothing applied', async () => {
    const big = Buffer.alloc(5000, 'x');
    let r = await sr.post('/set/k', big);
    assert.equal(r.status, 413);
    assert.deepEqual(r.json, { error: 'ERR max request size exceeded' });
    r = await sr.post('/multi-exec', JSON.stringify([['SET', 'a', '1'], ['SET', 'b', big.toString()]]));
    assert.equal(r.status, 413);
    assert.deepEqual(Object.keys(r.json), ['error']);
    r = await sr.post('/pipeline', JSON.stringify([['SET', 'a', '1'], ['SET', 'b', big.toString()]]));
    assert.equal(r.status, 413);
    const c = await RawClient.connect(small.port);
    assert.equal((await c.call('DBSIZE')).toString(), ':0\r\n');
    c.close();
    assert.deepEqual((await sr.post('/set/k', Buffer.alloc(3000, 'y'))).json, { result: 'OK' }, 'under the limit is fine');
  });

  it('a chunked body without Content-Length is counted as it streams', async () => {
    const stream = new ReadableStream({
      start(ctrl) {
        for (let i = 0; i < 10; i++) ctrl.enqueue(new Uint8Array(1000).fill(0x61));
        ctrl.close();
      },
    });
    const r = await fetch(sr.base + '/set/k2', {
      method: 'POST', body: stream, headers: { authorization: `Bearer ${TOKEN}` }, duplex: 'half',
    } as RequestInit);
    assert.equal(r.status, 413);
    assert.deepEqual(await r.json(), { error: 'ERR max request size exceeded' });
  });

  it('a URL over the limit: 413', async () => {
    const r = await sr.get('/set/k/' + 'v'.repeat(5000));
    assert.equal(r.status, 413);
  });

  it('the server still works afterwards', async () => {
    assert.deepEqual((await sr.get('/ping')).json, { result: 'PONG' });
  });
});
