/**
 * JSON.* through a real client (ioredis) against our server. No RedisJSON module is installed
 * here to diff against, so the expectations are RedisJSON's documented examples (redis.io
 * command pages, copied below with their replies) and RedisJSON 2.x's source behaviour, with
 * Upstash's one documented difference: recursive descent ($..x) lists deeper matches first
 * (redis-rest.md §7.3), so examples using $.. show Upstash's order, noted where it differs.
 * Raw RESP bytes are checked with RawClient where the reply type matters (JSON.RESP, TYPE).
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

let ours: Proc;
let r: Redis;
let raw: RawClient;

before(async () => {
  ours = await startOurs(['--appendfsync', 'no']);
  r = new Redis({ port: ours.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1, enableReadyCheck: false });
  await r.connect();
  raw = await RawClient.connect(ours.port);
});
after(async () => {
  r?.disconnect();
  raw?.close();
  await ours?.stop();
});
beforeEach(async () => {
  await r.flushall();
});

const j = (...args: Array<string | number | Buffer>) => r.call(args[0] as string, ...args.slice(1));
const rawCall = async (...args: Array<string | Buffer>) => (await raw.call(...args)).toString('latin1');

async function fails(p: Promise<unknown>, message: string): Promise<void> {
  await assert.rejects(p, (err: Error) => {
    assert.equal(err.message, message);
    return true;
  });
}

const AT_ROOT = 'ERR new objects must be created at the root';
const NO_KEY = "ERR could not perform this operation on a key that doesn't exist";
const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';
const arity = (name: string) => `ERR wrong number of arguments for '${name}' command`;
const NOT_UTF8 = "Couldn't parse as UTF-8 string";

describe('JSON.SET / JSON.GET', () => {
  it('replaces, adds and updates several paths (redis.io JSON.SET examples)', async () => {
    assert.equal(await j('JSON.SET', 'doc', '$', '{"a":2}'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '$.a', '3'), 'OK');
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"a":3}]');

    assert.equal(await j('JSON.SET', 'doc', '$', '{"a":2}'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '$.b', '8'), 'OK');
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"a":2,"b":8}]');

    assert.equal(await j('JSON.SET', 'doc', '$', '{"f1": {"a":1}, "f2":{"a":2}}'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '$..a', '3'), 'OK');
    assert.equal(await j('JSON.GET', 'doc'), '{"f1":{"a":3},"f2":{"a":3}}');
  });

  it('creates documents only at the root, legacy "." included', async () => {
    await fails(j('JSON.SET', 'doc', '$.a', '1'), AT_ROOT);
    await fails(j('JSON.SET', 'doc', '.a', '1'), AT_ROOT);
    assert.equal(await j('EXISTS', 'doc'), 0);
    assert.equal(await j('JSON.SET', 'doc', '.', '{"a":1}'), 'OK');
    assert.equal(await j('JSON.GET', 'doc'), '{"a":1}');
    assert.equal(await j('JSON.SET', 'scalar', '$', '"text"'), 'OK');
    assert.equal(await j('JSON.GET', 'scalar'), '"text"');
  });

  it('honours NX and XX on keys and on members', async () => {
    assert.equal(await j('JSON.SET', 'doc', '$', '{"a":1}', 'XX'), null);
    assert.equal(await j('EXISTS', 'doc'), 0);
    assert.equal(await j('JSON.SET', 'doc', '$', '{"a":1}', 'nx'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '$', '{"a":2}', 'NX'), null);
    assert.equal(await j('JSON.SET', 'doc', '$.a', '5', 'NX'), null);
    assert.equal(await j('JSON.SET', 'doc', '$.b', '5', 'XX'), null);
    assert.equal(await j('JSON.SET', 'doc', '$.b', '5', 'NX'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '$.a', '6', 'xx'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '$', '{"c":1}', 'XX'), 'OK');
    assert.equal(await j('JSON.GET', 'doc'), '{"c":1}');
    await fails(j('JSON.SET', 'doc', '$.a', '1', 'NX', 'XX'), 'ERR syntax error');
    await fails(j('JSON.SET', 'doc', '$.a', '1', 'XX', 'XX'), 'ERR syntax error');
    await fails(j('JSON.SET', 'doc', '$.a', '1', 'BOGUS'), 'ERR syntax error');
  });

  it('adds a member only under an existing object, at the end of a static path', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":{"b":1},"arr":[1,2],"s":"x"}');
    assert.equal(await j('JSON.SET', 'doc', '$.a.c', '2'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '.a.d', '3'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '$["a"]["e f"]', '4'), 'OK');
    // Missing parent, or a parent that is not an object: nothing to do (nil).
    assert.equal(await j('JSON.SET', 'doc', '$.x.y', '1'), null);
    assert.equal(await j('JSON.SET', 'doc', '$.s.y', '1'), null);
    assert.equal(await j('JSON.SET', 'doc', '$.arr.y', '1'), null);
    // A path with wildcards cannot create anything.
    await fails(j('JSON.SET', 'doc', '$..zz', '1'), 'Err wrong static path');
    await fails(j('JSON.SET', 'doc', '$.*.zz', '1'), 'Err wrong static path');
    await fails(j('JSON.SET', 'doc', '$..b', '1', 'NX'), 'Err wrong static path');
    // Array elements can be replaced, never appended.
    assert.equal(await j('JSON.SET', 'doc', '$.arr[1]', '"two"'), 'OK');
    assert.equal(await j('JSON.SET', 'doc', '$.arr[-1]', '"last"'), 'OK');
    await fails(j('JSON.SET', 'doc', '$.arr[2]', '3'), 'ERR array index out of range');
    await fails(j('JSON.SET', 'doc', '$.nope[0]', '3'), 'ERR array index out of range');
    assert.equal(await j('JSON.SET', 'doc', '$.arr[0]', '9', 'NX'), null);
    assert.equal(await j('JSON.GET', 'doc'), '{"a":{"b":1,"c":2,"d":3,"e f":4},"arr":[1,"last"],"s":"x"}');
  });

  it('updates every match of a filter (redis.io path examples)', async () => {
    await j('JSON.SET', 'store', '$', '{"inventory":{"headphones":[{"name":"A","price":99.98,"free-shipping":false},{"name":"B","price":64.99,"free-shipping":false},{"name":"C","price":35.01,"free-shipping":false}]}}');
    assert.equal(await j('JSON.SET', 'store', '$..headphones[0].price', '78.99'), 'OK');
    assert.equal(await j('JSON.GET', 'store', '$..headphones[0].price'), '[78.99]');
    assert.equal(await j('JSON.SET', 'store', '$.inventory.*[?(@.price>49)].free-shipping', 'true'), 'OK');
    assert.equal(await j('JSON.GET', 'store', '$.inventory.*[?(@.free-shipping==true)].name'), '["A","B"]');
  });

  it('checks the key type before the value, and reports serde_json parse errors', async () => {
    await r.set('str', 'x');
    await fails(j('JSON.SET', 'str', '$', '{bad'), WRONGTYPE);
    await fails(j('JSON.GET', 'str'), WRONGTYPE);
    await fails(j('JSON.SET', 'doc', '$', '{bad'), 'key must be a string at line 1 column 2');
    await fails(j('JSON.SET', 'doc', '$', ''), 'EOF while parsing a value at line 1 column 0');
    await fails(j('JSON.SET', 'doc', '$', 'nope'), 'expected ident at line 1 column 2');
    await fails(j('JSON.SET', 'doc', '$', '[1,2'), 'EOF while parsing a list at line 1 column 4');
    await fails(j('JSON.SET', 'doc', '$', '{"a":1} x'), 'trailing characters at line 1 column 9');
    await fails(j('JSON.SET', 'doc', '$', "'single'"), 'expected value at line 1 column 1');
    // Parse errors come before NX/XX decisions.
    await fails(j('JSON.SET', 'doc', '$', '{', 'XX'), 'EOF while parsing an object at line 1 column 1');
    assert.equal(await j('EXISTS', 'doc'), 0);
  });

  it('needs UTF-8 arguments (RedisJSON takes them as &str)', async () => {
    await fails(j('JSON.SET', 'doc', '$', Buffer.from([0x22, 0xff, 0x22])), NOT_UTF8);
    await fails(j('JSON.SET', 'doc', Buffer.from([0x24, 0xff]), '1'), NOT_UTF8);
    await j('JSON.SET', 'doc', '$', '{"a":1}');
    await fails(j('JSON.SET', 'doc', '$.a', '1', Buffer.from([0xff])), NOT_UTF8);
    // JSON.GET stops reading paths at a non-UTF-8 argument.
    assert.equal(await j('JSON.GET', 'doc', Buffer.from([0xff]), '$.a'), '{"a":1}');
  });

  it('accepts FORMAT JSON only', async () => {
    assert.equal(await j('JSON.SET', 'doc', '$', '[1]', 'FORMAT', 'JSON'), 'OK');
    await fails(j('JSON.SET', 'doc', '$', '[1]', 'FORMAT', 'XML'), 'ERR wrong format XML');
    await fails(j('JSON.SET', 'doc', '$', '[1]', 'FORMAT'), arity('json.set'));
    assert.equal(await j('JSON.GET', 'doc', 'FORMAT', 'JSON', '$'), '[[1]]');
  });

  it('reports wrong arity like any command', async () => {
    await fails(j('JSON.SET', 'doc', '$'), arity('json.set'));
    await fails(j('JSON.GET'), arity('json.get'));
    await fails(j('JSON.MGET', 'k'), arity('json.mget'));
    await fails(j('JSON.DEL'), arity('json.del'));
    await fails(j('JSON.ARRINSERT', 'k', '$', '0'), arity('json.arrinsert'));
    await fails(j('JSON.ARRTRIM', 'k', '$', '0'), arity('json.arrtrim'));
  });

  it('keeps the TTL when the root is replaced', async () => {
    await j('JSON.SET', 'doc', '$', '1');
    await r.pexpire('doc', 100000);
    await j('JSON.SET', 'doc', '$', '2');
    assert.ok((await r.pttl('doc')) > 0);
    await j('JSON.SET', 'doc', '$', '3');
    assert.ok((await r.pttl('doc')) > 0);
  });

  it('keeps numbers exact and prints them as RedisJSON does', async () => {
    await j('JSON.SET', 'n', '$', '[1, 1.0, 1.5, 1e2, 1E-7, 0.1, 100000000000000000000, 12345678901234567890, -9223372036854775808, 9007199254740993, -0, 1e400]'.replace(', 1e400', ''));
    assert.equal(await j('JSON.GET', 'n'), '[1,1.0,1.5,100.0,1e-7,0.1,1e20,12345678901234567890,-9223372036854775808,9007199254740993,-0.0]');
    await fails(j('JSON.SET', 'n', '$', '1e400'), 'number out of range at line 1 column 5');
    await j('JSON.SET', 'n', '$', '{"big":18446744073709551615,"bigger":18446744073709551616}');
    assert.equal(await j('JSON.GET', 'n'), '{"big":18446744073709551615,"bigger":1.8446744073709552e19}');
  });

  it('replies with one value for a legacy path, an array for a JSONPath', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":2, "b": 3, "nested": {"a": 4, "b": null}}');
    assert.equal(await j('JSON.GET', 'doc'), '{"a":2,"b":3,"nested":{"a":4,"b":null}}');
    assert.equal(await j('JSON.GET', 'doc', '.'), '{"a":2,"b":3,"nested":{"a":4,"b":null}}');
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"a":2,"b":3,"nested":{"a":4,"b":null}}]');
    assert.equal(await j('JSON.GET', 'doc', '.nested.a'), '4');
    assert.equal(await j('JSON.GET', 'doc', 'nested'), '{"a":4,"b":null}');
    assert.equal(await j('JSON.GET', 'doc', '..a'), '4');
    assert.equal(await j('JSON.GET', 'doc', '$.nested.a'), '[4]');
    assert.equal(await j('JSON.GET', 'doc', '$.zz'), '[]');
    await fails(j('JSON.GET', 'doc', '.zz'), "ERR Path '$.zz' does not exist");
    await fails(j('JSON.GET', 'doc', 'zz'), "ERR Path '$.zz' does not exist");
    assert.equal(await j('JSON.GET', 'nokey'), null);
    assert.equal(await j('JSON.GET', 'nokey', '$'), null);
  });

  it('lists recursive-descent matches deeper first (Upstash; redis.io shows [3,null])', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":2, "b": 3, "nested": {"a": 4, "b": null}}');
    assert.equal(await j('JSON.GET', 'doc', '$..b'), '[null,3]');
    assert.equal(await j('JSON.GET', 'doc', '$..a'), '[4,2]');
    // Several paths: an object keyed by path (redis.io: {"$..b":[3,null],"..a":[2,4]}).
    assert.deepEqual(JSON.parse(await j('JSON.GET', 'doc', '..a', '$..b') as string), { '..a': [4, 2], '$..b': [null, 3] });
    assert.deepEqual(JSON.parse(await j('JSON.GET', 'doc', '$..a', '$..b') as string), { '$..b': [null, 3], '$..a': [4, 2] });
  });

  it('answers several paths with an object keyed by path', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":1,"b":{"c":[1,2]}}');
    assert.equal(await j('JSON.GET', 'doc', '.a', '.b.c'), '{".a":1,".b.c":[1,2]}');
    assert.equal(await j('JSON.GET', 'doc', '.a', '$.b.c'), '{".a":[1],"$.b.c":[[1,2]]}');
    assert.equal(await j('JSON.GET', 'doc', '.a', '.a'), '{".a":1}');
    await fails(j('JSON.GET', 'doc', '.a', '.zz', '.yy'), "ERR Path '.zz' does not exist");
    assert.equal(await j('JSON.GET', 'doc', '$.a', '$.zz'), '{"$.a":[1],"$.zz":[]}');
    // A path that does not compile is left out when there are several.
    assert.equal(await j('JSON.GET', 'doc', '$.a', '$['), '{"$.a":[1]}');
  });

  it('reports JSONPath syntax errors with RedisJSON\'s text', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1]}');
    await fails(j('JSON.GET', 'doc', '$.a['),
      `Error occurred on position 4, "$.a[ <<<<----", expected one of the following: '<string>[,<string>,...]', '<number>', ['start:end:steps'], '*'.`);
    await fails(j('JSON.GET', 'doc', '$.'), `Error occurred on position 2, "$. <<<<----", expected one of the following: <string>, '*'.`);
    await fails(j('JSON.SET', 'doc', '$.a[', '1'),
      `Error occurred on position 4, "$.a[ <<<<----", expected one of the following: '<string>[,<string>,...]', '<number>', ['start:end:steps'], '*'.`);
  });

  it('formats with INDENT, NEWLINE and SPACE', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1,2],"b":{"c":null},"e":{}}');
    assert.equal(await j('JSON.GET', 'doc', 'INDENT', '\t', 'NEWLINE', '\n', 'SPACE', ' ', '.'),
      '{\n\t"a": [\n\t\t1,\n\t\t2\n\t],\n\t"b": {\n\t\t"c": null\n\t},\n\t"e": {}\n}');
    assert.equal(await j('JSON.GET', 'doc', 'indent', '_', '$.a'), '[_[__1,__2_]]');
    assert.equal(await j('JSON.GET', 'doc', 'SPACE', ' ', 'NEWLINE', '|'), '{|"a": [|1,|2|],|"b": {|"c": null|},|"e": {}|}');
    assert.equal(await j('JSON.GET', 'doc', 'NOESCAPE', '$.e'), '[{}]');
    assert.equal(await j('JSON.GET', 'doc', 'SPACE', ' ', '.a', '.e'), '{".a": [1,2],".e": {}}');
    await fails(j('JSON.GET', 'doc', 'INDENT'), arity('json.get'));
  });

  it('keeps keys in insertion order and strings as UTF-8', async () => {
    await j('JSON.SET', 'doc', '$', '{"z":1,"a":"héllo 😀","m":"\\u0001\\"\\\\"}');
    assert.equal(await j('JSON.GET', 'doc'), '{"z":1,"a":"héllo 😀","m":"\\u0001\\"\\\\"}');
    const bytes = await r.callBuffer('JSON.GET', 'doc', '$.a') as Buffer;
    assert.deepEqual(bytes, Buffer.from('["héllo 😀"]', 'utf8'));
    assert.equal(await j('JSON.GET', 'doc', '$["a"]'), '["héllo 😀"]');
    await j('JSON.SET', 'doc', '$["日本"]', '"語"');
    assert.equal(await j('JSON.GET', 'doc', '$["日本"]'), '["語"]');
  });

  it('works with binary key names', async () => {
    const key = Buffer.from([0x00, 0xff, 0x80, 0x41]);
    assert.equal(await j('JSON.SET', key, '$', '{"a":1}'), 'OK');
    assert.equal(await j('JSON.GET', key, '.a'), '1');
    assert.equal(await j('TYPE', key), 'ReJSON-RL');
  });
});

describe('JSON.MGET', () => {
  it('reads a path from several documents (redis.io example, Upstash order)', async () => {
    await j('JSON.SET', 'doc1', '$', '{"a":1, "b": 2, "nested": {"a": 3}, "c": null}');
    await j('JSON.SET', 'doc2', '$', '{"a":4, "b": 5, "nested": {"a": 6}, "c": null}');
    assert.deepEqual(await j('JSON.MGET', 'doc1', 'doc2', '$..a'), ['[3,1]', '[6,4]']);
    assert.deepEqual(await j('JSON.MGET', 'doc1', 'doc2', '.b'), ['2', '5']);
    assert.deepEqual(await j('JSON.MGET', 'doc1', 'doc2', '$.nested'), ['[{"a":3}]', '[{"a":6}]']);
  });

  it('answers nil for missing keys, other types, legacy misses and bad paths', async () => {
    await j('JSON.SET', 'doc1', '$', '{"a":1}');
    await r.set('str', 'x');
    assert.deepEqual(await j('JSON.MGET', 'doc1', 'nokey', 'str', '$.a'), ['[1]', null, null]);
    assert.deepEqual(await j('JSON.MGET', 'doc1', 'nokey', '.zz'), [null, null]);
    assert.deepEqual(await j('JSON.MGET', 'doc1', '$.zz'), ['[]']);
    assert.deepEqual(await j('JSON.MGET', 'doc1', '$['), [null]);
  });
});

describe('JSON.MSET', () => {
  it('sets several key/path/value triplets', async () => {
    await j('JSON.SET', 'doc2', '$', '{"f":{"a":1}}');
    assert.equal(await j('JSON.MSET', 'doc1', '$', '{"a":2}', 'doc2', '$.f.a', '3', 'doc3', '$', '{"f1": {"a":1}, "f2":{"a":2}}'), 'OK');
    assert.equal(await j('JSON.GET', 'doc1', '$'), '[{"a":2}]');
    assert.equal(await j('JSON.GET', 'doc2', '$'), '[{"f":{"a":3}}]');
    assert.equal(await j('JSON.GET', 'doc3'), '{"f1":{"a":1},"f2":{"a":2}}');
    assert.equal(await j('JSON.MSET', 'doc3', '$..a', '0', 'doc3', '$.f3', '[]'), 'OK');
    assert.equal(await j('JSON.GET', 'doc3'), '{"f1":{"a":0},"f2":{"a":0},"f3":[]}');
  });

  it('applies nothing when any triplet fails', async () => {
    await r.set('str', 'x');
    await fails(j('JSON.MSET', 'a', '$', '1', 'b', '$.x', '2'), AT_ROOT);
    await fails(j('JSON.MSET', 'a', '$', '1', 'str', '$', '2'), WRONGTYPE);
    await fails(j('JSON.MSET', 'a', '$', '1', 'b', '$', '{'), 'EOF while parsing an object at line 1 column 1');
    await fails(j('JSON.MSET', 'a', '$', '1', 'b', '$'), arity('json.mset'));
    await fails(j('JSON.MSET', 'a', '$', '1', 'b'), arity('json.mset'));
    assert.equal(await r.exists('a', 'b'), 0);
  });
});

describe('JSON.MERGE', () => {
  it('creates, replaces, deletes and replaces arrays (redis.io examples)', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":2}');
    assert.equal(await j('JSON.MERGE', 'doc', '$.b', '8'), 'OK');
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"a":2,"b":8}]');

    await j('JSON.SET', 'doc', '$', '{"a":2}');
    assert.equal(await j('JSON.MERGE', 'doc', '$.a', '3'), 'OK');
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"a":3}]');

    await j('JSON.SET', 'doc', '$', '{"a":2}');
    assert.equal(await j('JSON.MERGE', 'doc', '$.a', 'null'), 'OK');
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{}]');

    await j('JSON.SET', 'doc', '$', '{"a":[2,4,6,8]}');
    assert.equal(await j('JSON.MERGE', 'doc', '$.a', '[10,12]'), 'OK');
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"a":[10,12]}]');

    await j('JSON.SET', 'doc', '$', '{"f1": {"a":1}, "f2":{"a":2}}');
    assert.equal(await j('JSON.MERGE', 'doc', '$', '{"f1": null, "f2":{"a":3, "b":4}, "f3":[2,4,6]}'), 'OK');
    assert.equal(await j('JSON.GET', 'doc'), '{"f2":{"a":3,"b":4},"f3":[2,4,6]}');
  });

  it('merges objects recursively at every match', async () => {
    await j('JSON.SET', 'doc', '$', '{"x":{"p":{"a":1,"b":{"c":1}}},"y":{"p":{"a":2}}}');
    assert.equal(await j('JSON.MERGE', 'doc', '$.*.p', '{"a":null,"b":{"d":2},"n":[1]}'), 'OK');
    assert.equal(await j('JSON.GET', 'doc'), '{"x":{"p":{"b":{"c":1,"d":2},"n":[1]}},"y":{"p":{"b":{"d":2},"n":[1]}}}');
  });

  it('creates documents at the root only; reports nil when nothing matches', async () => {
    await fails(j('JSON.MERGE', 'doc', '$.a', '1'), AT_ROOT);
    assert.equal(await j('JSON.MERGE', 'doc', '$', '{"a":{"b":null}}'), 'OK');
    assert.equal(await j('JSON.GET', 'doc'), '{"a":{"b":null}}');
    assert.equal(await j('JSON.MERGE', 'doc', '$.x.y', '1'), null);
    await fails(j('JSON.MERGE', 'doc', '$', '1', 'NX'), 'ERR syntax error');
    await r.set('str', 'x');
    await fails(j('JSON.MERGE', 'str', '$', '1'), WRONGTYPE);
  });
});

describe('JSON.DEL / JSON.FORGET', () => {
  it('deletes matching values (redis.io example)', async () => {
    await j('JSON.SET', 'doc', '$', '{"a": 1, "nested": {"a": 2, "b": 3}}');
    assert.equal(await j('JSON.DEL', 'doc', '$..a'), 2);
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"nested":{"b":3}}]');
  });

  it('deletes the key at the root, counts array elements once, ignores missing paths', async () => {
    await j('JSON.SET', 'doc', '$', '{"arr":[0,1,2,3,4],"o":{"a":{"a":1}}}');
    assert.equal(await j('JSON.DEL', 'doc', '$.arr[0,2,4]'), 3);
    assert.equal(await j('JSON.GET', 'doc', '$.arr'), '[[1,3]]');
    assert.equal(await j('JSON.DEL', 'doc', '$.arr[0,0]'), 1);
    assert.equal(await j('JSON.DEL', 'doc', '$.o..a'), 1);
    assert.equal(await j('JSON.GET', 'doc'), '{"arr":[3],"o":{}}');
    assert.equal(await j('JSON.DEL', 'doc', '$.zz'), 0);
    assert.equal(await j('JSON.FORGET', 'doc', '.arr'), 1);
    assert.equal(await j('JSON.GET', 'doc'), '{"o":{}}');
    assert.equal(await j('JSON.DEL', 'doc'), 1);
    assert.equal(await j('EXISTS', 'doc'), 0);
    assert.equal(await j('JSON.DEL', 'doc'), 0);
    await j('JSON.SET', 'doc', '$', '[]');
    assert.equal(await j('JSON.FORGET', 'doc', '$'), 1);
    assert.equal(await j('EXISTS', 'doc'), 0);
    await r.set('str', 'x');
    await fails(j('JSON.DEL', 'str'), WRONGTYPE);
  });
});

describe('JSON.TYPE', () => {
  it('reports types (redis.io example, Upstash order for $..a)', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":2, "nested": {"a": true}, "foo": "bar"}');
    assert.deepEqual(await j('JSON.TYPE', 'doc', '$..foo'), ['string']);
    assert.deepEqual(await j('JSON.TYPE', 'doc', '$..a'), ['boolean', 'integer']);
    assert.deepEqual(await j('JSON.TYPE', 'doc', '$..dummy'), []);
  });

  it('names every type; a legacy path answers one name or nil', async () => {
    await j('JSON.SET', 'doc', '$', '{"n":null,"b":false,"i":1,"f":1.5,"s":"x","a":[],"o":{}}');
    assert.deepEqual(await j('JSON.TYPE', 'doc', '$.*'), ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object']);
    assert.equal(await j('JSON.TYPE', 'doc'), 'object');
    assert.equal(await j('JSON.TYPE', 'doc', '.f'), 'number');
    assert.equal(await j('JSON.TYPE', 'doc', '.zz'), null);
    assert.equal(await j('JSON.TYPE', 'doc', '.a['), null);
    assert.equal(await j('JSON.TYPE', 'nokey'), null);
    assert.equal(await j('JSON.TYPE', 'nokey', '$'), null);
    assert.equal((await rawCall('JSON.TYPE', 'doc', '.s')), '$6\r\nstring\r\n');
  });
});

describe('JSON.CLEAR', () => {
  it('empties containers and zeroes numbers (redis.io example)', async () => {
    await j('JSON.SET', 'doc', '$', '{"obj":{"a":1, "b":2}, "arr":[1,2,3], "str": "foo", "bool": true, "int": 42, "float": 3.14}');
    assert.equal(await j('JSON.CLEAR', 'doc', '$.*'), 4);
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"obj":{},"arr":[],"str":"foo","bool":true,"int":0,"float":0}]');
    assert.equal(await j('JSON.CLEAR', 'doc', '$.*'), 0);
  });

  it('clears the root by default; needs an existing key', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1]}');
    assert.equal(await j('JSON.CLEAR', 'doc'), 1);
    assert.equal(await j('JSON.GET', 'doc'), '{}');
    assert.equal(await j('JSON.CLEAR', 'doc', '.'), 0);
    await fails(j('JSON.CLEAR', 'nokey'), NO_KEY);
  });
});

describe('JSON.TOGGLE', () => {
  it('flips booleans (redis.io example)', async () => {
    await j('JSON.SET', 'doc', '$', '{"bool": true}');
    assert.deepEqual(await j('JSON.TOGGLE', 'doc', '$.bool'), [0]);
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"bool":false}]');
    assert.deepEqual(await j('JSON.TOGGLE', 'doc', '$.bool'), [1]);
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"bool":true}]');
  });

  it('answers nil for non-booleans, "true"/"false" for a legacy path', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":true,"b":1,"c":{"a":false}}');
    assert.deepEqual(await j('JSON.TOGGLE', 'doc', '$..a'), [1, 0]);
    assert.deepEqual(await j('JSON.TOGGLE', 'doc', '$.b'), [null]);
    assert.equal(await j('JSON.TOGGLE', 'doc', '.a'), 'true');
    assert.equal(await j('JSON.TOGGLE', 'doc', '.a'), 'false');
    await fails(j('JSON.TOGGLE', 'doc', '.b'), "ERR Path '$.b' does not exist or not a bool");
    await fails(j('JSON.TOGGLE', 'nokey', '$'), NO_KEY);
    await j('JSON.SET', 'doc', '$', 'true');
    assert.deepEqual(await j('JSON.TOGGLE', 'doc', '$'), [0]);
    assert.equal(await j('JSON.GET', 'doc'), 'false');
  });
});

describe('JSON.NUMINCRBY / JSON.NUMMULTBY', () => {
  it('updates numbers (redis.io examples, Upstash order for $..a)', async () => {
    await j('JSON.SET', 'doc', '.', '{"a":"b","b":[{"a":2}, {"a":5}, {"a":"c"}]}');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.a', '2'), '[null]');
    // redis.io: "[null,4,7,null]"; deeper matches come first.
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$..a', '2'), '[4,7,null,null]');
    await j('JSON.SET', 'doc', '.', '{"a":"b","b":[{"a":2}, {"a":5}, {"a":"c"}]}');
    assert.equal(await j('JSON.NUMMULTBY', 'doc', '$.a', '2'), '[null]');
    assert.equal(await j('JSON.NUMMULTBY', 'doc', '$..a', '2'), '[4,10,null,null]');
  });

  it('keeps integers integral and turns floats into floats', async () => {
    await j('JSON.SET', 'doc', '$', '{"i":1,"f":1.5,"g":2.0}');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.i', '2'), '[3]');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '.i', '-3'), '0');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.i', '0.5'), '[0.5]');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.f', '1'), '[2.5]');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '.g', '1'), '3.0');
    assert.equal(await j('JSON.NUMMULTBY', 'doc', '$.g', '2'), '[6.0]');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.f', '1e20'), '[1e20]');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.i', '2.0'), '[2.5]');
    assert.deepEqual(await j('JSON.TYPE', 'doc', '$.*'), ['number', 'number', 'number']);
    await j('JSON.SET', 'doc', '$', '{"i":7}');
    assert.equal(await j('JSON.NUMMULTBY', 'doc', '.i', '3'), '21');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '.i', '0.1'), '21.1');
    assert.equal(await j('JSON.GET', 'doc'), '{"i":21.1}');
  });

  it('is exact on 64-bit integers; an overflow becomes a float', async () => {
    await j('JSON.SET', 'doc', '$', '{"i":9223372036854775806,"n":-9223372036854775807}');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.i', '1'), '[9223372036854775807]');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.n', '-1'), '[-9223372036854775808]');
    assert.equal(await j('JSON.GET', 'doc'), '{"i":9223372036854775807,"n":-9223372036854775808}');
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.i', '1'), '[9.223372036854776e18]');
    await j('JSON.SET', 'doc', '$', '{"i":4611686018427387904}');
    assert.equal(await j('JSON.NUMMULTBY', 'doc', '.i', '-2'), '-9223372036854775808');
  });

  it('reports bad operands, non-finite results and missing numbers', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":1,"s":"x","f":1e308}');
    await fails(j('JSON.NUMINCRBY', 'doc', '$.a', 'x'), 'expected value at line 1 column 1');
    await fails(j('JSON.NUMINCRBY', 'doc', '$.a', '"1"'), 'bad input number');
    await fails(j('JSON.NUMINCRBY', 'doc', '$.a', '[1]'), 'bad input number');
    // The operand is only read when a number matched.
    assert.equal(await j('JSON.NUMINCRBY', 'doc', '$.s', 'x'), '[null]');
    await fails(j('JSON.NUMMULTBY', 'doc', '$.f', '10'), 'result is not a number');
    assert.equal(await j('JSON.GET', 'doc', '$.f'), '[1e308]');
    await fails(j('JSON.NUMINCRBY', 'doc', '.s', '1'), "ERR Path '$.s' does not exist or does not contains a number");
    await fails(j('JSON.NUMINCRBY', 'doc', '.zz', '1'), "ERR Path '$.zz' does not exist or does not contains a number");
    await fails(j('JSON.NUMINCRBY', 'nokey', '$', '1'), NO_KEY);
  });
});

describe('JSON.STRAPPEND / JSON.STRLEN', () => {
  it('appends to strings (redis.io example, Upstash order for $..a)', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":"foo", "nested": {"a": "hello"}, "nested2": {"a": 31}}');
    // redis.io: 6, 8, nil; deeper matches come first.
    assert.deepEqual(await j('JSON.STRAPPEND', 'doc', '$..a', '"baz"'), [8, null, 6]);
    assert.equal(await j('JSON.GET', 'doc', '$'), '[{"a":"foobaz","nested":{"a":"hellobaz"},"nested2":{"a":31}}]');
  });

  it('defaults to the root, counts UTF-8 bytes, checks the operand', async () => {
    await j('JSON.SET', 'doc', '$', '"ab"');
    assert.equal(await j('JSON.STRAPPEND', 'doc', '"é"'), 4);
    assert.equal(await j('JSON.STRLEN', 'doc'), 4);
    assert.equal(await j('JSON.GET', 'doc'), '"abé"');
    assert.equal(await j('JSON.STRAPPEND', 'doc', '.', '"😀"'), 8);
    await fails(j('JSON.STRAPPEND', 'doc', '$', '1'), 'WRONGTYPE wrong type of path value - expected string but found 1');
    await fails(j('JSON.STRAPPEND', 'doc', '$', 'baz'), 'expected value at line 1 column 1');
    await j('JSON.SET', 'doc', '$', '{"n":1}');
    await fails(j('JSON.STRAPPEND', 'doc', '.n', '"x"'), "ERR Path '$.n' does not exist or not a string");
    assert.deepEqual(await j('JSON.STRAPPEND', 'doc', '$.n', 'not-json'), [null]);
    await fails(j('JSON.STRAPPEND', 'nokey', '$', '"x"'), NO_KEY);
  });

  it('measures strings per path and per legacy path', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":"foo","nested":{"a":"hello"},"n":{"a":1}}');
    assert.deepEqual(await j('JSON.STRLEN', 'doc', '$..a'), [5, null, 3]);
    assert.equal(await j('JSON.STRLEN', 'doc', '.a'), 3);
    await fails(j('JSON.STRLEN', 'doc', '.n.a'), 'WRONGTYPE wrong type of path value - expected string but found integer');
    await fails(j('JSON.STRLEN', 'doc', '.zz'), "ERR Path '$.zz' does not exist");
    assert.equal(await j('JSON.STRLEN', 'nokey'), null);
    await fails(j('JSON.STRLEN', 'nokey', '$'), NO_KEY);
  });
});

describe('JSON arrays', () => {
  const ITEM = '{"name":"Noise-cancelling Bluetooth headphones","description":"Wireless Bluetooth headphones with noise-cancelling technology","connection":{"wireless":true,"type":"Bluetooth"},"price":99.98,"stock":25,"colors":["black","silver"]}';

  it('appends and inserts (redis.io JSON.ARRINSERT example)', async () => {
    await j('JSON.SET', 'item:1', '$', ITEM);
    assert.deepEqual(await j('JSON.ARRAPPEND', 'item:1', '$.colors', '"blue"'), [3]);
    assert.equal(await j('JSON.GET', 'item:1'), ITEM.replace('"silver"]', '"silver","blue"]'));
    assert.equal(await j('JSON.GET', 'item:1', '$.colors[*]'), '["black","silver","blue"]');
    assert.deepEqual(await j('JSON.ARRINSERT', 'item:1', '$.colors', '2', '"yellow"', '"gold"'), [5]);
    assert.equal(await j('JSON.GET', 'item:1', '$.colors'), '[["black","silver","yellow","gold","blue"]]');
  });

  it('pops, inserts and trims (redis.io JSON.ARRPOP / JSON.ARRTRIM examples)', async () => {
    await j('JSON.SET', 'key', '$', '[{"name":"Healthy headphones","max_level":[60,70,80]},{"name":"Noisy headphones","max_level":[80,90,100,120]}]');
    assert.equal(await j('JSON.GET', 'key', '$.[1].max_level'), '[[80,90,100,120]]');
    assert.deepEqual(await j('JSON.ARRPOP', 'key', '$.[1].max_level', '0'), ['80']);
    assert.equal(await j('JSON.GET', 'key', '$.[1].max_level'), '[[90,100,120]]');
    assert.deepEqual(await j('JSON.ARRINSERT', 'key', '$.[1].max_level', '0', '85'), [4]);
    assert.equal(await j('JSON.GET', 'key', '$.[1].max_level'), '[[85,90,100,120]]');
    assert.deepEqual(await j('JSON.ARRAPPEND', 'key', '$.[1].max_level', '200', '300', '400', '500', '600', '700', '800', '1000'), [12]);
    assert.equal(await j('JSON.GET', 'key', '$.[1].max_level'), '[[85,90,100,120,200,300,400,500,600,700,800,1000]]');
    assert.deepEqual(await j('JSON.ARRTRIM', 'key', '$.[1].max_level', '4', '8'), [5]);
    assert.equal(await j('JSON.GET', 'key', '$.[1].max_level'), '[[200,300,400,500,600]]');
  });

  it('finds the first index (redis.io JSON.ARRINDEX examples, Upstash order)', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1,2,3,2], "nested": {"a": [3,4]}}');
    // redis.io: 1, -1; deeper matches come first.
    assert.deepEqual(await j('JSON.ARRINDEX', 'doc', '$..a', '2'), [-1, 1]);
    await j('JSON.SET', 'doc', '$', '{"a":[1,2,3,2], "nested": {"a": false}}');
    assert.deepEqual(await j('JSON.ARRINDEX', 'doc', '$..a', '2'), [null, 1]);
  });

  it('searches a [start, stop) slice with ARRINDEX', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1,2,3,2,1.0,"2",{"k":[1]},null]}');
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '2'), 1);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '2', '2'), 3);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '2', '-5'), 3);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '2', '0', '3'), 1);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '2', '2', '3'), -1);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '2', '0', '-6'), 1);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '2', '3', '1'), -1);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '2', '100'), -1);
    // Same type and content: 1.0 is not 1, "2" is not 2; objects compare structurally.
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '1.0'), 4);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '"2"'), 5);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '{"k":[1]}'), 6);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', 'null'), 7);
    assert.equal(await j('JSON.ARRINDEX', 'doc', '.a', '5'), -1);
    await fails(j('JSON.ARRINDEX', 'doc', '.a', '2', 'x'), "Couldn't parse as integer");
    await fails(j('JSON.ARRINDEX', 'doc', '.a', '2', '0', '1', '2'), arity('json.arrindex'));
    await fails(j('JSON.ARRINDEX', 'doc', '.a', 'x'), 'expected value at line 1 column 1');
    await fails(j('JSON.ARRINDEX', 'doc', '.zz', '1'), "ERR Path '$.zz' does not exist");
    await j('JSON.SET', 'doc', '$.s', '"x"');
    await fails(j('JSON.ARRINDEX', 'doc', '.s', '1'), 'WRONGTYPE wrong type of path value - expected array but found string');
    await fails(j('JSON.ARRINDEX', 'nokey', '$.a', '1'), "ERR Path '$.a' does not exist");
    await j('JSON.SET', 'e', '$', '[]');
    assert.deepEqual(await j('JSON.ARRINDEX', 'e', '$', '1'), [-1]);
  });

  it('appends to every matched array; legacy paths answer the last length', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1],"b":{"a":[1,2]},"c":{"a":3}}');
    assert.deepEqual(await j('JSON.ARRAPPEND', 'doc', '$..a', '4', '{"x":[5]}'), [4, null, 3]);
    assert.equal(await j('JSON.GET', 'doc'), '{"a":[1,4,{"x":[5]}],"b":{"a":[1,2,4,{"x":[5]}]},"c":{"a":3}}');
    assert.equal(await j('JSON.ARRAPPEND', 'doc', '.a', '"s"'), 4);
    await fails(j('JSON.ARRAPPEND', 'doc', '.c.a', '1'), "ERR Path '.c.a' does not exist or not an array");
    await fails(j('JSON.ARRAPPEND', 'doc', '$.a', '[1'), 'EOF while parsing a list at line 1 column 2');
    await fails(j('JSON.ARRAPPEND', 'nokey', '$', '1'), NO_KEY);
    await fails(j('JSON.ARRAPPEND', 'nokey', '$', '{'), 'EOF while parsing an object at line 1 column 1');
  });

  it('inserts at an index within the array, negative from the end', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1,2,3]}');
    assert.equal(await j('JSON.ARRINSERT', 'doc', '.a', '-1', '"x"'), 4);
    assert.equal(await j('JSON.ARRINSERT', 'doc', '.a', '4', '"end"'), 5);
    assert.equal(await j('JSON.ARRINSERT', 'doc', '.a', '-5', '"start"'), 6);
    assert.equal(await j('JSON.GET', 'doc', '.a'), '["start",1,2,"x",3,"end"]');
    await fails(j('JSON.ARRINSERT', 'doc', '.a', '7', '1'), 'ERR index out of bounds');
    await fails(j('JSON.ARRINSERT', 'doc', '.a', '-7', '1'), 'ERR index out of bounds');
    await fails(j('JSON.ARRINSERT', 'doc', '.a', 'x', '1'), "Couldn't parse as integer");
    await fails(j('JSON.ARRINSERT', 'doc', '.b', '0', '1'), "ERR Path '$.b' does not exist or not an array");
    assert.deepEqual(await j('JSON.ARRINSERT', 'doc', '$.b', '0', '1'), []);
  });

  it('pops the last element by default', async () => {
    await j('JSON.SET', 'doc', '$', '[1,{"a":[2]},"three"]');
    assert.equal(await j('JSON.ARRPOP', 'doc'), '"three"');
    assert.equal(await j('JSON.ARRPOP', 'doc', '.', '0'), '1');
    assert.deepEqual(await j('JSON.ARRPOP', 'doc', '$'), ['{"a":[2]}']);
    assert.deepEqual(await j('JSON.ARRPOP', 'doc', '$'), [null]);
    assert.equal(await j('JSON.GET', 'doc'), '[]');
  });

  it('pops with index rules and nil for empty arrays', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1,2,3,4,5],"e":[],"s":"x"}');
    assert.equal(await j('JSON.ARRPOP', 'doc', '.a', '99'), '5');
    assert.equal(await j('JSON.ARRPOP', 'doc', '.a', '-99'), '1');
    // An index that is not an integer means the last element.
    assert.equal(await j('JSON.ARRPOP', 'doc', '.a', 'x'), '4');
    assert.deepEqual(await j('JSON.ARRPOP', 'doc', '$.*'), ['3', null, null]);
    assert.equal(await j('JSON.ARRPOP', 'doc', '.e'), null);
    await fails(j('JSON.ARRPOP', 'doc', '.s'), "ERR Path '$.s' does not exist or not an array");
    await fails(j('JSON.ARRPOP', 'doc'), "ERR Path '$' does not exist or not an array");
    await fails(j('JSON.ARRPOP', 'nokey'), NO_KEY);
    assert.equal(await j('JSON.GET', 'doc'), '{"a":[2],"e":[],"s":"x"}');
  });

  it('trims forgivingly (RedisJSON 2 rules)', async () => {
    const trim = async (start: string, stop: string) => {
      await j('JSON.SET', 'doc', '$', '[0,1,2,3,4]');
      const n = await j('JSON.ARRTRIM', 'doc', '.', start, stop);
      return [n, await j('JSON.GET', 'doc')];
    };
    assert.deepEqual(await trim('1', '3'), [3, '[1,2,3]']);
    assert.deepEqual(await trim('0', '-1'), [5, '[0,1,2,3,4]']);
    assert.deepEqual(await trim('-2', '-1'), [2, '[3,4]']);
    assert.deepEqual(await trim('3', '1'), [0, '[]']);
    assert.deepEqual(await trim('5', '10'), [0, '[]']);
    assert.deepEqual(await trim('2', '99'), [3, '[2,3,4]']);
    assert.deepEqual(await trim('-99', '1'), [2, '[0,1]']);
    assert.deepEqual(await trim('0', '-99'), [1, '[0]']);
    await fails(j('JSON.ARRTRIM', 'doc', '.', 'a', '1'), "Couldn't parse as integer");
    await j('JSON.SET', 'doc', '$', '{"a":[1,2],"b":1}');
    assert.deepEqual(await j('JSON.ARRTRIM', 'doc', '$.*', '0', '0'), [1, null]);
    await fails(j('JSON.ARRTRIM', 'doc', '.b', '0', '0'), "ERR Path '$.b' does not exist or not an array");
    await fails(j('JSON.ARRTRIM', 'nokey', '$', '0', '0'), NO_KEY);
  });

  it('measures arrays', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1,2],"b":{"a":[]},"c":{"a":"x"}}');
    assert.deepEqual(await j('JSON.ARRLEN', 'doc', '$..a'), [0, null, 2]);
    assert.equal(await j('JSON.ARRLEN', 'doc', '.a'), 2);
    await fails(j('JSON.ARRLEN', 'doc', '.c.a'), "ERR Path '.c.a' does not exist or not an array");
    await fails(j('JSON.ARRLEN', 'doc', '.zz'), "ERR Path '.zz' does not exist");
    await fails(j('JSON.ARRLEN', 'doc'), "ERR Path '.' does not exist or not an array");
    assert.equal(await j('JSON.ARRLEN', 'nokey'), null);
    await fails(j('JSON.ARRLEN', 'nokey', '$'), NO_KEY);
  });
});

describe('JSON objects', () => {
  it('counts and lists keys (Upstash SDK json_objlen expectation)', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[3], "nested": {"a": {"b":2, "c": 1}}}');
    assert.deepEqual(await j('JSON.OBJLEN', 'doc', '$..a'), [2, null]);
    assert.deepEqual(await j('JSON.OBJKEYS', 'doc', '$..a'), [['b', 'c'], null]);
    assert.equal(await j('JSON.OBJLEN', 'doc'), 2);
    assert.deepEqual(await j('JSON.OBJKEYS', 'doc'), ['a', 'nested']);
    assert.deepEqual(await j('JSON.OBJKEYS', 'doc', '.nested.a'), ['b', 'c']);
  });

  it('handles legacy misses, wrong types and missing keys as RedisJSON does', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[3],"o":{}}');
    assert.equal(await j('JSON.OBJLEN', 'doc', '.zz'), null);
    assert.equal(await j('JSON.OBJKEYS', 'doc', '.zz'), null);
    assert.equal(await j('JSON.OBJLEN', 'doc', '.o'), 0);
    assert.deepEqual(await j('JSON.OBJKEYS', 'doc', '.o'), []);
    await fails(j('JSON.OBJLEN', 'doc', '.a'), 'WRONGTYPE wrong type of path value - expected object but found array');
    await fails(j('JSON.OBJKEYS', 'doc', '.a'), "ERR Path '$.a' does not exist or not an object");
    assert.equal(await j('JSON.OBJLEN', 'nokey'), null);
    assert.equal(await j('JSON.OBJKEYS', 'nokey'), null);
    await fails(j('JSON.OBJLEN', 'nokey', '$'), "ERR Path '$' does not exist or not an object");
    await fails(j('JSON.OBJKEYS', 'nokey', '$'), NO_KEY);
    await fails(j('JSON.OBJLEN', 'doc', '$['),
      `Error occurred on position 2, "$[ <<<<----", expected one of the following: '<string>[,<string>,...]', '<number>', ['start:end:steps'], '*'.`);
  });
});

describe('JSON.RESP', () => {
  it('answers the RESP form (redis.io example)', async () => {
    await j('JSON.SET', 'item:2', '$', '{"name":"Wireless earbuds","description":"Wireless Bluetooth in-ear headphones","connection":{"wireless":true,"type":"Bluetooth"},"price":64.99,"stock":17,"colors":["black","white"], "max_level":[80, 100, 120]}');
    assert.deepEqual(await j('JSON.RESP', 'item:2'), [
      '{', 'name', 'Wireless earbuds', 'description', 'Wireless Bluetooth in-ear headphones',
      'connection', ['{', 'wireless', 'true', 'type', 'Bluetooth'],
      'price', '64.989999999999995', 'stock', 17,
      'colors', ['[', 'black', 'white'], 'max_level', ['[', 80, 100, 120],
    ]);
  });

  it('uses simple strings for markers and booleans, nil for null', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[true,null,-1,1.5,"x"],"big":18446744073709551615}');
    assert.equal(await rawCall('JSON.RESP', 'doc', '.a'), '*6\r\n+[\r\n+true\r\n$-1\r\n:-1\r\n$3\r\n1.5\r\n$1\r\nx\r\n');
    assert.equal(await rawCall('JSON.RESP', 'doc', '$.a[0,4]'), '*2\r\n+true\r\n$1\r\nx\r\n');
    assert.equal(await rawCall('JSON.RESP', 'doc', '$.big'), '*1\r\n$20\r\n18446744073709551615\r\n');
    assert.equal(await rawCall('JSON.RESP', 'doc', '$.zz'), '*0\r\n');
    assert.equal(await rawCall('JSON.RESP', 'nokey'), '$-1\r\n');
    assert.equal(await rawCall('JSON.RESP', 'doc', '.zz'), "-ERR Path '$.zz' does not exist\r\n");
    await j('JSON.SET', 'doc', '$', '{"o":{}}');
    assert.equal(await rawCall('JSON.RESP', 'doc'), '*3\r\n+{\r\n$1\r\no\r\n*1\r\n+{\r\n');
  });
});

describe('JSON documents in the keyspace', () => {
  it('reports type ReJSON-RL and encoding raw', async () => {
    await j('JSON.SET', 'doc', '$', '{}');
    assert.equal(await rawCall('TYPE', 'doc'), '+ReJSON-RL\r\n');
    assert.equal(await j('OBJECT', 'ENCODING', 'doc'), 'raw');
    await fails(r.get('doc'), WRONGTYPE);
    await fails(r.lpush('doc', 'x'), WRONGTYPE);
  });

  it('is copied deeply by COPY and moved by RENAME', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1]}');
    assert.equal(await j('COPY', 'doc', 'copy'), 1);
    await j('JSON.ARRAPPEND', 'copy', '$.a', '2');
    assert.equal(await j('JSON.GET', 'doc'), '{"a":[1]}');
    assert.equal(await j('JSON.GET', 'copy'), '{"a":[1,2]}');
    await r.rename('copy', 'moved');
    assert.equal(await j('JSON.GET', 'moved'), '{"a":[1,2]}');
  });

  it('signals modifications to WATCH', async () => {
    await j('JSON.SET', 'doc', '$', '{"a":[1],"n":1,"s":"x","t":true}');
    const other = new Redis({ port: ours.port, host: '127.0.0.1', lazyConnect: true, enableReadyCheck: false });
    await other.connect();
    try {
      const cases: Array<Array<string>> = [
        ['JSON.ARRAPPEND', 'doc', '$.a', '2'], ['JSON.NUMINCRBY', 'doc', '$.n', '1'], ['JSON.STRAPPEND', 'doc', '$.s', '"y"'],
        ['JSON.SET', 'doc', '$.n', '5'], ['JSON.DEL', 'doc', '$.s'], ['JSON.MERGE', 'doc', '$', '{"m":1}'],
        ['JSON.CLEAR', 'doc', '$.a'], ['JSON.TOGGLE', 'doc', '$.t'],
      ];
      for (const cmd of cases) {
        await other.watch('doc');
        await j(...cmd);
        const res = await other.multi().get('k').exec();
        assert.equal(res, null, `${cmd.join(' ')} invalidates WATCH`);
      }
      // A command that changes nothing does not.
      await other.watch('doc');
      await j('JSON.DEL', 'doc', '$.zz');
      await j('JSON.GET', 'doc');
      assert.notEqual(await other.multi().get('k').exec(), null);
    } finally {
      other.disconnect();
    }
  });

  it('expires like any key', async () => {
    await j('JSON.SET', 'doc', '$', '1');
    await r.pexpire('doc', 30);
    await new Promise((res) => setTimeout(res, 60));
    assert.equal(await j('JSON.GET', 'doc'), null);
  });

  it('runs inside MULTI', async () => {
    const res = await r.multi().call('JSON.SET', 'doc', '$', '{"a":1}').call('JSON.NUMINCRBY', 'doc', '.a', '2').call('JSON.GET', 'doc').exec();
    assert.deepEqual(res, [[null, 'OK'], [null, '3'], [null, '{"a":3}']]);
  });
});
