/**
 * JSON documents through the unmodified @upstash/redis SDK (its json.* methods), in its default
 * configuration (base64 responses) and with automaticDeserialization off.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from '@upstash/redis';
import { startOurs, type Proc } from '../helpers/server.js';
import { TOKEN, TOKEN_ARGS } from './rest-helpers.js';

describe('@upstash/redis json.*', () => {
  let srv: Proc;
  let redis: Redis;
  let raw: Redis;
  before(async () => {
    srv = await startOurs(TOKEN_ARGS);
    const url = `http://127.0.0.1:${srv.httpPort}`;
    redis = new Redis({ url, token: TOKEN, enableTelemetry: false });
    raw = new Redis({ url, token: TOKEN, enableTelemetry: false, automaticDeserialization: false });
  });
  after(async () => {
    await srv?.stop();
  });

  it('set, get with paths, type, del, forget, clear, toggle', async () => {
    assert.equal(await redis.json.set('doc', '$', { a: 1, b: { c: 'x', d: [1, 2, 3] }, t: true, f: 2.5 }), 'OK');
    assert.deepEqual(await redis.json.get('doc'), { a: 1, b: { c: 'x', d: [1, 2, 3] }, t: true, f: 2.5 });
    assert.deepEqual(await redis.json.get('doc', '$.b.c'), ['x']);
    assert.deepEqual(await redis.json.get('doc', '$..d'), [[1, 2, 3]]);
    assert.deepEqual(await redis.json.type('doc', '$.b'), ['object']);
    assert.deepEqual(await redis.json.type('doc', '$.f'), ['number']);
    assert.equal(await redis.json.set('doc', '$.new', '"v"', { nx: true }), 'OK');
    assert.equal(await redis.json.set('doc', '$.new', '"w"', { nx: true }), null);
    assert.deepEqual(await redis.json.toggle('doc', '$.t'), [0]);
    assert.deepEqual(await redis.json.clear('doc', '$.b.d'), 1);
    assert.deepEqual(await redis.json.get('doc', '$.b.d'), [[]]);
    assert.equal(await redis.json.del('doc', '$.new'), 1);
    assert.equal(await redis.json.forget('doc', '$.f'), 1);
    assert.deepEqual(await redis.json.get('doc', '$.new'), []);
    assert.equal(await redis.json.get('missing'), null);
  });

  it('numbers: numincrby, nummultby keep integer-or-float nature; big integers exact', async () => {
    await redis.json.set('n', '$', { i: 5, f: 1.5 });
    assert.deepEqual(await redis.json.numincrby('n', '$.i', 2), [7]);
    assert.deepEqual(await redis.json.nummultby('n', '$.f', 2), [3]);
    assert.deepEqual(await raw.json.get('n'), '{"i":7,"f":3.0}');
    await redis.json.set('big', '$', '{"v":12345678901234567890123}' as unknown as Record<string, unknown>);
    assert.equal(await raw.json.get('big', '$.v'), '[1.2345678901234568e22]');
    await raw.json.set('i64', '$', '{"v":9007199254740993}');
    assert.equal(await raw.json.get('i64', '$.v'), '[9007199254740993]');
  });

  it('strings, arrays and objects', async () => {
    await redis.json.set('s', '$', { name: 'ab', list: [1, 2, 3], obj: { x: 1, y: 2 } });
    assert.deepEqual(await redis.json.strappend('s', '$.name', '"cd"'), [4]);
    assert.deepEqual(await redis.json.strlen('s', '$.name'), [4]);
    assert.deepEqual(await redis.json.arrappend('s', '$.list', 4, 5), [5]);
    assert.deepEqual(await redis.json.arrinsert('s', '$.list', 0, 0), [6]);
    assert.deepEqual(await redis.json.arrindex('s', '$.list', 3), [3]);
    assert.deepEqual(await redis.json.arrlen('s', '$.list'), [6]);
    assert.deepEqual(await redis.json.arrpop('s', '$.list', -1), [5]);
    assert.deepEqual(await redis.json.arrtrim('s', '$.list', 1, 2), [2]);
    assert.deepEqual(await redis.json.get('s', '$.list'), [[1, 2]]);
    assert.deepEqual(await redis.json.objkeys('s', '$.obj'), [['x', 'y']]);
    assert.deepEqual(await redis.json.objlen('s', '$.obj'), [2]);
    assert.equal(await redis.json.merge('s', '$.obj', { y: null, z: 3 }), 'OK');
    assert.deepEqual(await redis.json.get('s', '$.obj'), [{ x: 1, z: 3 }]);
  });

  it('mset, mget and resp', async () => {
    assert.equal(await redis.json.mset({ key: 'm1', path: '$', value: { a: 1 } }, { key: 'm2', path: '$', value: { a: 2 } }), 'OK');
    assert.deepEqual(await redis.json.mget(['m1', 'm2', 'nope'], '$.a'), [[1], [2], null]);
    assert.deepEqual(await redis.json.resp('m1'), ['{', 'a', 1]);
  });

  it('errors come back as SDK errors with RedisJSON texts', async () => {
    await redis.set('plain', 'x');
    await assert.rejects(redis.json.get('plain'), /WRONGTYPE/);
    await assert.rejects(redis.json.set('newkey', '$.a', 1), /new objects must be created at the root/);
  });
});
