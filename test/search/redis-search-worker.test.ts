/**
 * SEARCH.* with the indexes in the search worker thread: requests answered asynchronously keep
 * each connection's reply order and see every write sent before them (pipelines); inside
 * MULTI/EXEC, EVAL and FCALL they answer in their turn; a document whose key expired without
 * a write leaves the results; a client gone while waiting does not disturb the others;
 * SKIPINITIALSCAN on a stream index.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis as IORedis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';
import { Rest, RO_TOKEN, TOKEN_ARGS } from '../http/rest-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * 20,000 hashes under `${name}:`, then an index `name` over them: its initial scan goes to the
 * worker in one batch, which takes it long enough for a PING to overtake a wait for it.
 */
async function bigIndex(io: IORedis, name: string): Promise<void> {
  const p = io.pipeline();
  const text = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma';
  for (let i = 0; i < 20_000; i++) p.hset(`${name}:${i}`, 'body', `${text} w${i}`, 'n', String(i));
  await p.exec();
  await io.call('SEARCH.CREATE', name, 'ON', 'HASH', 'PREFIX', '1', `${name}:`, 'SCHEMA', 'body', 'TEXT', 'n', 'U64');
}

describe('SEARCH.* through the search worker', () => {
  let srv: Proc;
  let io: IORedis;
  before(async () => {
    srv = await startOurs(['--enable-debug-command', 'yes', ...TOKEN_ARGS]);
    io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    await io.call('SEARCH.CREATE', 'w', 'ON', 'HASH', 'PREFIX', '1', 'w:', 'SCHEMA', 'tag', 'KEYWORD', 'n', 'U64', 'FAST', 'body', 'TEXT');
  });
  after(async () => {
    io?.disconnect();
    await srv?.stop();
  });

  it('a pipeline: each request sees the writes before it, replies in order', async () => {
    const p = io.pipeline();
    for (let i = 0; i < 50; i++) p.hset(`w:p${i}`, 'tag', 'pipe', 'n', String(i));
    p.call('SEARCH.COUNT', 'w', JSON.stringify({ tag: 'pipe' }));
    p.set('plain', 'x');
    p.get('plain');
    p.hset('w:p50', 'tag', 'pipe', 'n', '50');
    p.call('SEARCH.QUERY', 'w', JSON.stringify({ tag: 'pipe', n: { $gte: 49 } }), 'NOCONTENT', 'ORDERBY', 'n', 'ASC');
    p.del('w:p0', 'w:p1');
    p.call('SEARCH.COUNT', 'w', JSON.stringify({ tag: 'pipe' }));
    p.call('SEARCH.AGGREGATE', 'w', JSON.stringify({ tag: 'pipe' }), JSON.stringify({ s: { $stats: { field: 'n' } } }));
    p.call('SEARCH.WAITINDEXING', 'w');
    p.echo('last');
    const r = (await p.exec())!.map(([err, v]) => { assert.equal(err, null); return v; });
    const tail = r.slice(50);
    assert.equal(tail[0], 50);
    assert.equal(tail[1], 'OK');
    assert.equal(tail[2], 'x');
    assert.equal(tail[3], 2);
    assert.deepEqual((tail[4] as string[][]).map((h) => h[0]), ['w:p49', 'w:p50']);
    assert.equal(tail[5], 2);
    assert.equal(tail[6], 49);
    assert.deepEqual(tail[7], ['s', ['count', 49, 'min', '2', 'max', '50', 'avg', '26', 'sum', '1274']].flat(0));
    assert.equal(tail[8], 1);
    assert.equal(tail[9], 'last');
  });

  it('other clients are served while a request waits for the worker', async () => {
    // 20,000 documents, then an index over them (its initial scan goes to the worker in one
    // batch) and WAITINDEXING: it waits while the worker indexes them; a PING sent on another
    // connection after it is answered first.
    const other = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    try {
      await bigIndex(io, 'big');
      const order: string[] = [];
      const waited = other.call('SEARCH.WAITINDEXING', 'big').then(() => order.push('wait'));
      await sleep(1);
      await io.ping().then(() => order.push('ping'));
      await waited;
      assert.deepEqual(order, ['ping', 'wait']);
      assert.equal(await io.call('SEARCH.COUNT', 'big', '{"n": 19999}'), 1);
      assert.equal(await io.call('SEARCH.DROP', 'big'), 1);
    } finally {
      other.disconnect();
    }
  });

  it('inside MULTI/EXEC: the queued writes before a query are visible to it', async () => {
    const r = await io.multi()
      .hset('w:m1', 'tag', 'multi', 'body', 'hello world')
      .call('SEARCH.COUNT', 'w', JSON.stringify({ tag: 'multi' }))
      .hset('w:m2', 'tag', 'multi', 'body', 'hello there')
      .call('SEARCH.QUERY', 'w', JSON.stringify({ body: 'hello' }), 'NOCONTENT')
      .call('SEARCH.WAITINDEXING', 'w')
      .call('SEARCH.QUERY', 'nosuchindex', '{}')
      .call('SEARCH.COUNT', 'w', '{"n": {"$bad": 1}}')
      .exec();
    assert.equal(r![0][1], 2);
    assert.equal(r![1][1], 1);
    assert.equal(r![2][1], 2);
    assert.deepEqual((r![3][1] as string[][]).map((h) => h[0]).sort(), ['w:m1', 'w:m2']);
    assert.equal(r![4][1], 1);
    assert.equal(r![5][1], null);
    assert.match(String(r![6][0]), /ERR/);
  });

  it('inside EVAL and FCALL', async () => {
    const n = await io.eval(
      "redis.call('HSET', KEYS[1], 'tag', 'lua', 'n', '7'); return redis.call('SEARCH.COUNT', 'w', ARGV[1])",
      1, 'w:lua', JSON.stringify({ tag: 'lua' }));
    assert.equal(n, 1);
    const q = (await io.eval("return redis.call('SEARCH.QUERY', 'w', ARGV[1], 'SELECT', '1', 'n')", 0, JSON.stringify({ tag: 'lua' }))) as any[];
    assert.deepEqual(q, [['w:lua', q[0][1], [['n', '7']]]]);
    await io.call('FUNCTION', 'LOAD', 'REPLACE', "#!lua name=searchlib\nredis.register_function('scount', function(keys, args) redis.call('HSET', keys[1], 'tag', 'fn'); return redis.call('SEARCH.COUNT', 'w', args[1]) end)");
    assert.equal(await io.call('FCALL', 'scount', '1', 'w:fn', JSON.stringify({ tag: 'fn' })), 1);
    const err = await io.eval("return redis.pcall('SEARCH.QUERY', 'w', 'not json')", 0).catch((e) => e);
    assert.match(String((err as any)?.message ?? err), /ERR/);
  });

  it('a key that expired without a write leaves the results (active expiry off)', async () => {
    await io.call('DEBUG', 'SET-ACTIVE-EXPIRE', '0');
    try {
      await io.hset('w:exp', 'tag', 'expiring');
      await io.pexpire('w:exp', 80);
      assert.equal(await io.call('SEARCH.COUNT', 'w', JSON.stringify({ tag: 'expiring' })), 1);
      await sleep(200);
      assert.equal(await io.call('SEARCH.COUNT', 'w', JSON.stringify({ tag: 'expiring' })), 0);
      assert.deepEqual(await io.call('SEARCH.QUERY', 'w', JSON.stringify({ tag: 'expiring' })), []);
    } finally {
      await io.call('DEBUG', 'SET-ACTIVE-EXPIRE', '1');
    }
  });

  it('a client that disconnects while its query waits does not disturb the others', async () => {
    const gone = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
    await gone.ping();
    void gone.call('SEARCH.QUERY', 'w', '{}', 'LIMIT', '100').catch(() => {});
    gone.disconnect();
    assert.equal(await io.call('SEARCH.COUNT', 'w', JSON.stringify({ tag: 'pipe' })), 49);
    assert.equal(await io.ping(), 'PONG');
  });

  it('over REST: single commands (answered when the worker is), pipelines, transactions, the read-only token, errors', async () => {
    const rest = new Rest(`http://127.0.0.1:${srv.httpPort}`);
    const ro = new Rest(`http://127.0.0.1:${srv.httpPort}`, RO_TOKEN);
    assert.deepEqual((await rest.cmd(['HSET', 'w:r1', 'tag', 'rest', 'n', '5'])).json, { result: 2 });
    assert.deepEqual((await rest.cmd(['SEARCH.COUNT', 'w', '{"tag": "rest"}'])).json, { result: 1 });
    assert.deepEqual((await ro.cmd(['SEARCH.QUERY', 'w', '{"tag": "rest"}', 'SELECT', '1', 'n'])).json.result.map((h: any[]) => [h[0], h[2]]), [['w:r1', [['n', '5']]]]);
    assert.deepEqual((await rest.cmd(['SEARCH.AGGREGATE', 'w', '{"tag": "rest"}', '{"s": {"$stats": {"field": "n"}}}'])).json.result[0], 's');
    assert.deepEqual((await rest.cmd(['SEARCH.WAITINDEXING', 'w'])).json, { result: 1 });
    assert.deepEqual((await rest.cmd(['SEARCH.WAITINDEXING', 'nosuch'])).json, { result: 0 });
    assert.deepEqual((await rest.cmd(['SEARCH.QUERY', 'nosuch', '{}'])).json, { result: null });
    const bad = await rest.cmd(['SEARCH.QUERY', 'w', 'not json']);
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /ERR/);
    const arity = await rest.cmd(['SEARCH.COUNT', 'w']);
    assert.match(arity.json.error, /wrong number of arguments/);
    // Many at once: each answered with its own result.
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => rest.cmd(['SEARCH.COUNT', 'w', JSON.stringify({ n: { $gte: i } })])));
    for (const r of many) assert.equal(typeof r.json.result, 'number');
    assert.equal(many[0].json.result >= many[19].json.result, true);
    const pipe = await rest.pipeline([['HSET', 'w:r2', 'tag', 'rest'], ['SEARCH.COUNT', 'w', '{"tag": "rest"}'], ['GET', 'plain']]);
    assert.deepEqual(pipe.json, [{ result: 1 }, { result: 2 }, { result: 'x' }]);
    const tx = await rest.multi([['HSET', 'w:r3', 'tag', 'rest'], ['SEARCH.COUNT', 'w', '{"tag": "rest"}']]);
    assert.deepEqual(tx.json, [{ result: 1 }, { result: 3 }]);
  });

  it('a REST pipeline waits for the worker without holding the engine thread, and resumes in order', async () => {
    const rest = new Rest(`http://127.0.0.1:${srv.httpPort}`);
    await bigIndex(io, 'rp');
    // The pipeline's WAITINDEXING waits while the worker indexes 20,000 documents: a PING sent
    // after it, on another connection, is answered first (a blocked engine thread could not).
    const order: string[] = [];
    const piped = rest.pipeline([
      ['SET', 'rp-before', '1'],
      ['SEARCH.WAITINDEXING', 'rp'],
      ['HSET', 'rp:new', 'n', '20000'],
      ['SEARCH.COUNT', 'rp', '{"n": {"$gte": 19999}}'],
      ['GET', 'rp-before'],
      ['SEARCH.COUNT', 'rp', 'not json'],
      ['SEARCH.QUERY', 'rp', '{"n": 20000}', 'NOCONTENT'],
      ['ECHO', 'last'],
    ]).then((r) => { order.push('pipeline'); return r; });
    await sleep(1);
    await io.ping().then(() => order.push('ping'));
    const r = await piped;
    assert.deepEqual(order, ['ping', 'pipeline']);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.slice(0, 5), [{ result: 'OK' }, { result: 1 }, { result: 1 }, { result: 2 }, { result: '1' }]);
    assert.match(r.json[5].error, /^ERR/);
    assert.deepEqual(r.json[6].result.map((h: string[]) => h[0]), ['rp:new']);
    assert.deepEqual(r.json[7], { result: 'last' });
    // The RESP2 form of the same: the replies concatenated, the part before the wait included.
    const raw = await rest.post('/pipeline', JSON.stringify([['ECHO', 'a'], ['SEARCH.COUNT', 'rp', '{"n": 20000}'], ['ECHO', 'b'], ['SEARCH.COUNT', 'rp', '{"n": 1}']]),
      { 'Upstash-Response-Format': 'resp2' });
    assert.equal(raw.text, '$1\r\na\r\n:1\r\n$1\r\nb\r\n:1\r\n');
    assert.equal(await io.call('SEARCH.DROP', 'rp'), 1);
  });

  it('MOVE, SWAPDB, DUMP/RESTORE, eviction: the index follows the keyspace', async () => {
    await io.call('SEARCH.CREATE', 'k', 'ON', 'HASH', 'PREFIX', '1', 'k:', 'SCHEMA', 'tag', 'KEYWORD');
    const count = async () => Number(await io.call('SEARCH.COUNT', 'k', '{}'));
    const keys = async () => { const [, ks] = await io.scan(0, 'MATCH', 'k:*', 'COUNT', 100000); return ks.length; };
    await io.hset('k:1', 'tag', 'a');
    await io.hset('k:2', 'tag', 'a');
    assert.equal(await count(), 2);
    await io.move('k:1', 1);
    assert.equal(await count(), 1);
    await io.select(1);
    await io.move('k:1', 0);
    await io.select(0);
    assert.equal(await count(), 2);
    const dump = await io.dumpBuffer('k:2');
    await io.del('k:2');
    assert.equal(await count(), 1);
    await io.restore('k:3', 0, dump);
    assert.equal(await io.call('SEARCH.COUNT', 'k', '{"tag": "a"}'), 2);
    // SWAPDB: the index covers db 0, whatever is in it now.
    await io.swapdb(0, 1);
    assert.equal(await count(), 0);
    await io.swapdb(0, 1);
    assert.equal(await count(), 2);
    // Eviction: the documents are the keys that remain.
    const used = Number(/used_memory:(\d+)/.exec(await io.info('memory'))![1]);
    await io.config('SET', 'maxmemory-policy', 'allkeys-random');
    await io.config('SET', 'maxmemory', String(used + 2_000_000));
    try {
      for (let b = 0; b < 40; b++) {
        const p = io.pipeline();
        for (let i = 0; i < 500; i++) p.hset(`k:e${b}:${i}`, 'tag', 'e', 'pad', 'x'.repeat(200));
        await p.exec();
      }
    } finally {
      await io.config('SET', 'maxmemory', '0');
    }
    const evicted = Number(/evicted_keys:(\d+)/.exec(await io.info('stats'))![1]);
    assert.ok(evicted > 0, 'some keys were evicted');
    assert.equal(await count(), await keys());
  });

  it('DROP and re-create under the same name, REINDEX, FLUSHALL', async () => {
    await io.hset('x:1', 'v', 'one');
    await io.call('SEARCH.CREATE', 'x', 'ON', 'HASH', 'PREFIX', '1', 'x:', 'SCHEMA', 'v', 'KEYWORD');
    assert.equal(await io.call('SEARCH.COUNT', 'x', '{}'), 1);
    assert.equal(await io.call('SEARCH.DROP', 'x'), 1);
    await io.hset('x:2', 'v', 'two');
    await io.call('SEARCH.CREATE', 'x', 'SKIPINITIALSCAN', 'ON', 'HASH', 'PREFIX', '1', 'x:', 'SCHEMA', 'v', 'KEYWORD');
    assert.equal(await io.call('SEARCH.COUNT', 'x', '{}'), 0);
    assert.equal(await io.call('SEARCH.REINDEX', 'x'), 1);
    assert.equal(await io.call('SEARCH.COUNT', 'x', '{}'), 2);
    await io.flushall();
    assert.equal(await io.call('SEARCH.COUNT', 'x', '{}'), 0);
    await io.hset('x:3', 'v', 'three');
    assert.equal(await io.call('SEARCH.COUNT', 'x', '{"v": "three"}'), 1);
  });
});

describe('SEARCH.CREATE ... ON STREAM SKIPINITIALSCAN', () => {
  let srv: Proc;
  let io: IORedis;
  before(async () => {
    srv = await startOurs();
    io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  });
  after(async () => {
    io?.disconnect();
    await srv?.stop();
  });

  const ids = async (filter: object = {}) => {
    const r = (await io.call('SEARCH.QUERY', 'ev', JSON.stringify(filter), 'NOCONTENT', 'LIMIT', '1000')) as [string, string][];
    return r.map((x) => x[0]).sort();
  };

  it('entries present at creation are not indexed, later ones are; trims and deletions of either kind', async () => {
    for (let i = 1; i <= 5; i++) await io.xadd('events', `${i}-0`, 'msg', `old ${i}`);
    await io.call('SEARCH.CREATE', 'ev', 'ON', 'STREAM', 'events', 'SKIPINITIALSCAN', 'SCHEMA', 'msg', 'TEXT');
    assert.deepEqual(await ids(), []);
    await io.xadd('events', '6-0', 'msg', 'new 6');
    await io.xadd('events', '7-0', 'msg', 'new 7');
    assert.deepEqual(await ids(), ['6-0', '7-0']);
    assert.deepEqual(await ids({ msg: 'old' }), []);
    // Deleting a skipped entry, then an indexed one.
    await io.xdel('events', '2-0');
    assert.deepEqual(await ids(), ['6-0', '7-0']);
    await io.xdel('events', '7-0');
    assert.deepEqual(await ids(), ['6-0']);
    await io.xadd('events', '8-0', 'msg', 'new 8');
    // A trim that takes every skipped entry and the oldest document.
    await io.xtrim('events', 'MAXLEN', 1);
    assert.deepEqual(await ids(), ['8-0']);
    await io.xadd('events', '9-0', 'msg', 'new 9');
    assert.deepEqual(await ids(), ['8-0', '9-0']);
    // REINDEX takes everything in the stream.
    await io.xadd('events', '10-0', 'msg', 'newer');
    assert.equal(await io.call('SEARCH.REINDEX', 'ev'), 1);
    assert.deepEqual(await ids(), ['10-0', '8-0', '9-0']);
  });

  it('a stream replaced after creation is indexed whole', async () => {
    await io.xadd('other', '1-0', 'msg', 'before');
    await io.call('SEARCH.CREATE', 'ev2', 'ON', 'STREAM', 'other', 'SKIPINITIALSCAN', 'SCHEMA', 'msg', 'TEXT');
    assert.equal(await io.call('SEARCH.COUNT', 'ev2', '{}'), 0);
    await io.del('other');
    await io.xadd('other', '1-0', 'msg', 'again');
    await io.xadd('other', '2-0', 'msg', 'more');
    assert.equal(await io.call('SEARCH.COUNT', 'ev2', '{}'), 2);
  });
});

describe('the search worker thread stops', () => {
  it('waiting requests get an error, the next one starts a new worker that rebuilds the index', async () => {
    const { Engine } = await import('../../dist/engine/engine.js');
    const { Client } = await import('../../dist/engine/client.js');
    const { execute } = await import('../../dist/engine/dispatch.js');
    const { FAMILIES } = await import('../../dist/engine/commands/index.js');
    const { loadConfig } = await import('../../dist/config.js');
    const { Argv } = await import('../../dist/resp/argv.js');
    const { RespWriter } = await import('../../dist/resp/writer.js');
    const { registryOf } = await import('../../dist/engine/search-index/registry.js');
    const eng = new Engine(loadConfig(['--appendfsync', 'no'], {}), FAMILIES);
    const out = new RespWriter();
    const transport = { kind: 'internal' as const, close() {}, requestFlush() {}, resume() {}, outputBytes: () => 0, inputBytes: () => 0 };
    const c = new Client(eng, transport, out, '', '');
    const run = (...args: string[]): string => { execute(c, Argv.of(args), out); return out.take().toString('latin1'); };
    assert.equal(run('HSET', 'h:1', 'tag', 'a'), ':1\r\n');
    assert.equal(run('SEARCH.CREATE', 'i', 'ON', 'HASH', 'PREFIX', '1', 'h:', 'SCHEMA', 'tag', 'KEYWORD'), ':1\r\n');
    assert.equal(run('SEARCH.COUNT', 'i', '{}'), ':1\r\n'); // internal client: a synchronous request
    const reg = registryOf(eng) as any;
    const w = reg.worker;
    // An asynchronous request in flight when the thread goes (behind 30,000 documents to
    // index, so that the worker is still busy when it is stopped).
    for (let i = 0; i < 30_000; i++) run('HSET', `h:x${i}`, 'tag', 'x', 'pad', 'some words to index here');
    let answer: unknown = null;
    reg.request(reg.resolve('i'), 'wait', null, (r: unknown) => { answer = r; });
    await w.terminate();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(answer, { err: 'ERR search worker stopped' });
    assert.equal(reg.worker, null);
    // Writes while no worker runs are taken by the rebuild.
    assert.equal(run('HSET', 'h:2', 'tag', 'a'), ':1\r\n');
    assert.equal(run('SEARCH.COUNT', 'i', '{"tag": "a"}'), ':2\r\n');
    await reg.worker.terminate();
  });
});
