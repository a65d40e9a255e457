/**
 * SEARCH.* ON STREAM: an index bound to one stream key, one document per entry (its id is the
 * document's name), through the unmodified @upstash/redis SDK over REST and ioredis over TCP,
 * kept in sync under XADD, XDEL, XTRIM, DEL, RENAME, EXPIRE, MULTI, EVAL and FLUSHALL.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis as IORedis } from 'ioredis';
import { Redis, s } from '@upstash/redis';
import { startOurs, type Proc } from '../helpers/server.js';
import { TOKEN, TOKEN_ARGS } from '../http/rest-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SEARCH.* ON STREAM', () => {
  let srv: Proc;
  let redis: Redis;
  let io: IORedis;
  before(async () => {
    srv = await startOurs(TOKEN_ARGS);
    redis = new Redis({ url: `http://127.0.0.1:${srv.httpPort}`, token: TOKEN, enableTelemetry: false });
    io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  });
  after(async () => {
    io?.disconnect();
    await srv?.stop();
  });

  const ids = async (idx: string, filter: object = {}) => {
    const r = (await io.call('SEARCH.QUERY', idx, JSON.stringify(filter), 'NOCONTENT', 'LIMIT', '1000')) as [string, string][];
    return r.map((x) => x[0]).sort();
  };

  it('the SDK over REST: createIndex on a stream that does not exist yet, query, count, aggregate, describe', async () => {
    const schema = s.object({ message: s.string(), service: s.keyword(), severity: s.number('U64'), occurredAt: s.date().fast() });
    const events = await redis.search.createIndex({ name: 'event-search', dataType: 'stream', stream: 'events', schema });
    await redis.xadd('events', '1-0', { message: 'disk almost full on db-1', service: 'db', severity: 3, occurredAt: '2026-01-01T10:00:00Z', extra: 'x' });
    await redis.xadd('events', '2-0', { message: 'user login failed', service: 'auth', severity: 2, occurredAt: '2026-01-02T10:00:00Z' });
    await redis.xadd('events', '3-5', { message: 'disk failure on db-2', service: 'db', severity: 5, occurredAt: '2026-01-03T10:00:00Z' });
    await events.waitIndexing();

    const hits = await events.query({ filter: { message: 'disk' } });
    assert.deepEqual(hits.map((h) => h.key).sort(), ['1-0', '3-5']);
    const one = hits.find((h) => h.key === '1-0') as any;
    // Every field of the entry, values as strings (as the SDK parses hash-like content).
    assert.equal(one.data.message, 'disk almost full on db-1');
    assert.equal(one.data.extra, 'x');
    assert.deepEqual(await events.count({ filter: { severity: { $gte: 3 } } }), { count: 2 });
    assert.deepEqual(await events.count({ filter: { service: 'auth' } }), { count: 1 });
    const sorted = await events.query({ filter: {}, orderBy: { severity: 'DESC' }, select: { service: true } } as any);
    assert.deepEqual(sorted.map((h) => [h.key, (h as any).data]), [['3-5', { service: 'db' }], ['1-0', { service: 'db' }], ['2-0', { service: 'auth' }]]);
    const agg = await events.aggregate({ filter: { service: 'db' }, aggregations: { sev: { $stats: { field: 'severity' } } } } as any) as any;
    assert.deepEqual(agg.sev, { count: 2, min: 3, max: 5, avg: 4, sum: 8 });
    const d = await events.describe() as any;
    assert.equal(d.name, 'event-search');
    assert.equal(d.dataType, 'stream');
    assert.deepEqual(Object.keys(d.schema).sort(), ['message', 'occurredAt', 'service', 'severity']);

    // One index per stream; PREFIX is refused on a stream index.
    await assert.rejects(redis.search.createIndex({ name: 'other', dataType: 'stream', stream: 'events', schema }), /already indexed/);
    await assert.rejects(io.call('SEARCH.CREATE', 'p', 'ON', 'STREAM', 'events', 'PREFIX', '1', 'e:', 'SCHEMA', 'm', 'TEXT'), /PREFIX is not supported/);
    await assert.rejects(io.call('SEARCH.CREATE', 'p', 'ON', 'STREAM'), /needs a stream key/);
    assert.equal(await events.drop(), 1);
    assert.equal(await io.call('SEARCH.CREATE', 'other', 'ON', 'STREAM', 'events', 'SCHEMA', 'message', 'TEXT'), 1);
    assert.deepEqual(await ids('other', { message: 'login' }), ['2-0']); // the initial scan
    await io.call('SEARCH.DROP', 'other');
  });

  it('ioredis over TCP: sync under XADD, XDEL, XTRIM, DEL, RENAME, EXPIRE, MULTI, EVAL, FLUSHALL', async () => {
    assert.equal(await io.call('SEARCH.CREATE', 'st', 'ON', 'STREAM', 's1', 'SCHEMA', 'msg', 'TEXT', 'n', 'I64', 'FAST', 'lvl', 'KEYWORD', 'FROM', 'level'), 1);
    assert.deepEqual(await io.call('SEARCH.DESCRIBE', 'st'), [
      'name', 'st', 'type', 'STREAM', 'stream', 's1', 'language', 'english',
      'schema', [['msg', 'TEXT'], ['n', 'I64', 'FAST'], ['lvl', 'KEYWORD', 'FROM', 'level']],
    ]);
    for (let i = 1; i <= 10; i++) await io.xadd('s1', `${i}-0`, 'msg', i % 2 ? 'odd hello' : 'even hello', 'n', String(i), 'level', i > 5 ? 'high' : 'low');
    await io.xadd('other', '1-0', 'msg', 'hello'); // another stream: not indexed
    assert.equal(await io.call('SEARCH.COUNT', 'st', '{"msg":"hello"}'), 10);
    const r = (await io.call('SEARCH.QUERY', 'st', '{"n":{"$lt":2}}')) as any[];
    assert.deepEqual(r, [['1-0', '1', [['msg', 'odd hello'], ['n', '1'], ['level', 'low']]]]);
    assert.deepEqual(await ids('st', { lvl: 'high', msg: 'even' }), ['10-0', '6-0', '8-0']);

    assert.equal(await io.xdel('s1', '2-0', '3-0'), 2);
    assert.deepEqual(await ids('st', { n: { $lte: 4 } }), ['1-0', '4-0']);
    assert.equal(await io.xtrim('s1', 'MAXLEN', 5), 3);
    assert.deepEqual(await ids('st'), ['10-0', '6-0', '7-0', '8-0', '9-0']);
    await io.xadd('s1', 'MAXLEN', '3', '11-0', 'msg', 'new', 'n', '11');
    assert.deepEqual(await ids('st'), ['10-0', '11-0', '9-0']);
    await io.xtrim('s1', 'MINID', '10');
    assert.deepEqual(await ids('st'), ['10-0', '11-0']);

    // A transaction and a script.
    await io.multi().xadd('s1', '12-0', 'msg', 'in multi', 'n', '12').xdel('s1', '10-0').exec();
    assert.deepEqual(await ids('st'), ['11-0', '12-0']);
    await io.eval("redis.call('XADD', KEYS[1], '13-0', 'msg', 'from lua', 'n', '13')", 1, 's1');
    assert.deepEqual(await ids('st', { msg: 'lua' }), ['13-0']);

    // Another stream object under the key: DEL then XADD of lower ids, RENAME in and out.
    await io.del('s1');
    assert.deepEqual(await ids('st'), []);
    await io.xadd('s1', '1-0', 'msg', 'reborn', 'n', '1');
    assert.deepEqual(await ids('st', { msg: 'reborn' }), ['1-0']);
    await io.rename('s1', 'moved');
    assert.deepEqual(await ids('st'), []);
    await io.rename('other', 's1');
    assert.deepEqual(await ids('st', { msg: 'hello' }), ['1-0']);
    await io.set('s1', 'a string now');
    assert.deepEqual(await ids('st'), []);
    await io.del('s1');
    await io.xadd('s1', '5-1', 'msg', 'short lived');
    await io.pexpire('s1', 50);
    assert.deepEqual(await ids('st'), ['5-1']);
    await sleep(120);
    assert.deepEqual(await ids('st'), []);
    await io.xadd('s1', '6-0', 'msg', 'again');
    await io.flushall();
    assert.deepEqual(await ids('st'), []);
    await io.xadd('s1', '7-0', 'msg', 'after flush');
    assert.deepEqual(await ids('st'), ['7-0']);
    // Highlighting a stream field (plain values, not JSON).
    const hl = (await io.call('SEARCH.QUERY', 'st', '{"msg":"flush"}', 'HIGHLIGHT', 'FIELDS', '1', 'msg')) as any[];
    assert.deepEqual(hl[0][2], [['msg', 'after <em>flush</em>']]);
  });

  it('many entries appended between queries, then trimmed', async () => {
    await io.call('SEARCH.CREATE', 'big', 'ON', 'STREAM', 'log', 'SCHEMA', 'n', 'U64', 'FAST');
    for (let round = 0; round < 5; round++) {
      const p = io.pipeline();
      for (let i = 0; i < 500; i++) p.xadd('log', '*', 'n', String(round * 500 + i));
      await p.exec();
      assert.equal(await io.call('SEARCH.COUNT', 'big', '{}'), Math.min((round + 1) * 500, 1500));
      await io.xtrim('log', 'MAXLEN', 1000);
    }
    assert.equal(await io.call('SEARCH.COUNT', 'big', '{"n":{"$gte":1500}}'), 1000);
  });
});
