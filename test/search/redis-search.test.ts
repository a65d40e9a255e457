/**
 * Upstash Redis Search (SEARCH.*): the unmodified @upstash/redis SDK's `redis.search` API over
 * REST, the same commands through ioredis over TCP, the index kept in sync under every write
 * path, definitions surviving a restart, and a randomized comparison of SEARCH.QUERY/COUNT
 * against a brute-force evaluation of the same filter over the same documents.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { Redis, s } from '@upstash/redis';
import { startOurs, type Proc } from '../helpers/server.js';
import { rng } from '../helpers/rng.js';
import { RO_TOKEN, TOKEN, TOKEN_ARGS } from '../http/rest-helpers.js';
import { analyze } from '../../dist/engine/search-index/analyze.js';
import { tokenize } from '../../dist/search/text.js';
import { Bm25, fieldnorm, fieldnormId } from '../../dist/engine/search-index/bm25.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh server for the enclosing describe, with an ioredis client handed to `use`. */
function withServer(use: (io: IORedis) => void): void {
  let srv: Proc;
  let io: IORedis;
  before(async () => {
    srv = await startOurs();
    io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    use(io);
  });
  after(async () => {
    io?.disconnect();
    await srv?.stop();
  });
}

describe('SEARCH.* through @upstash/redis over REST', () => {
  let srv: Proc;
  let redis: Redis;
  before(async () => {
    srv = await startOurs(TOKEN_ARGS);
    redis = new Redis({ url: `http://127.0.0.1:${srv.httpPort}`, token: TOKEN, enableTelemetry: false });
  });
  after(async () => {
    await srv?.stop();
  });

  const schema = s.object({
    name: s.string(),
    description: s.string(),
    category: s.string().noTokenize(),
    price: s.number(),
    inStock: s.boolean(),
    meta: s.object({ brand: s.keyword(), added: s.date() }),
  });

  it('createIndex, query, count, describe, aliases and drop', async () => {
    const products = await redis.search.createIndex({ name: 'products', dataType: 'json', prefix: 'product:', schema });
    await redis.json.set('product:1', '$', {
      name: 'Wireless Headphones', description: 'Premium noise-cancelling wireless headphones', category: 'Electronics',
      price: 199.99, inStock: true, meta: { brand: 'Sony', added: '2024-01-15T00:00:00Z' },
    });
    await redis.json.set('product:2', '$', {
      name: 'Running Shoes', description: 'Lightweight shoes for running', category: 'Sports',
      price: 89.5, inStock: false, meta: { brand: 'Nike', added: '2024-03-01T00:00:00Z' },
    });
    await redis.json.set('product:3', '$', {
      name: 'Bluetooth Speaker', description: 'Portable wireless speaker', category: 'Electronics',
      price: 49, inStock: true, meta: { brand: 'Sony', added: '2023-11-20T10:00:00Z' },
    });
    await redis.json.set('other:1', '$', { name: 'Wireless Headphones' }); // outside the prefix
    assert.equal(await products.waitIndexing(), 1);

    const hits = await products.query({ filter: { name: 'headphones' } });
    assert.deepEqual(hits.map((h) => h.key), ['product:1']);
    assert.equal(typeof hits[0].score, 'number');
    assert.equal((hits[0] as any).data.meta.brand, 'Sony');
    assert.equal((hits[0] as any).data.price, 199.99);

    // A typo still finds it (smart matching), and the exact word ranks first.
    const typo = await products.query({ filter: { description: 'wirelss' } });
    assert.deepEqual(typo.map((h) => h.key).sort(), ['product:1', 'product:3']);

    // Several words: any one is enough; the exact phrase first, then the words in order a few
    // positions apart, then both words anywhere, then one word.
    await redis.json.set('product:4', '$', { name: 'Headphones', description: 'headphones with a wireless case' });
    await redis.json.set('product:5', '$', { name: 'Case', description: 'wireless bluetooth noise-cancelling headphones' });
    await products.waitIndexing();
    const multi = await products.query({ filter: { description: 'wireless headphones' } });
    assert.deepEqual(multi.map((h) => h.key), ['product:1', 'product:5', 'product:4', 'product:3']);
    assert.deepEqual(await products.count({ filter: { description: 'running speaker' } }), { count: 2 });
    assert.deepEqual(await products.count({ filter: { description: '"wireless headphones"' } }), { count: 1 });
    await redis.del('product:4', 'product:5');

    const cheap = await products.query({ filter: { price: { $lt: 100 } }, orderBy: { price: 'DESC' }, select: { name: true, 'meta.brand': true } } as any);
    assert.deepEqual(cheap.map((h) => h.key), ['product:2', 'product:3']);
    assert.deepEqual((cheap[0] as any).data, { name: 'Running Shoes', meta: { brand: 'Nike' } });

    const keysOnly = await products.query({ filter: { category: 'Electronics' }, select: {} } as any);
    assert.deepEqual(keysOnly.map((h) => h.key).sort(), ['product:1', 'product:3']);
    assert.equal((keysOnly[0] as any).data, undefined);

    assert.deepEqual(await products.count({ filter: { inStock: true } }), { count: 2 });
    assert.deepEqual(await products.count({ filter: { 'meta.brand': { $in: ['Nike', 'Adidas'] } } }), { count: 1 });
    assert.deepEqual(await products.count({ filter: { 'meta.added': { $gte: '2024-01-01T00:00:00Z' } } }), { count: 2 });
    assert.deepEqual(await products.count({ filter: { $mustNot: [{ 'meta.brand': 'Sony' }] } as any }), { count: 1 });
    assert.deepEqual(await products.count({ filter: { $or: [{ price: { $gt: 150 } }, { name: { $phrase: 'running shoes' } }] } }), { count: 2 });

    const agg = await products.aggregate({
      filter: {},
      aggregations: {
        avg_price: { $avg: { field: 'price' } },
        stats: { $stats: { field: 'price' } },
        hist: { $histogram: { field: 'price', interval: 100 }, $aggs: { top: { $max: { field: 'price' } } } },
        ranges: { $range: { field: 'price', ranges: [{ to: 50 }, { from: 50 }] } },
      },
    } as any) as any;
    assert.ok(Math.abs(agg.avg_price.value - (199.99 + 89.5 + 49) / 3) < 1e-9);
    assert.deepEqual(agg.stats, { count: 3, min: 49, max: 199.99, avg: agg.avg_price.value, sum: 199.99 + 89.5 + 49 });
    assert.deepEqual(agg.hist, { buckets: [{ key: 0, docCount: 2, top: { value: 89.5 } }, { key: 100, docCount: 1, top: { value: 199.99 } }] });
    assert.deepEqual(agg.ranges.buckets.map((b: any) => [b.key, b.docCount]), [['*-50', 1], ['50-*', 2]]);
    await assert.rejects(products.aggregate({ aggregations: { t: { $terms: { field: 'meta.brand' } } } } as any), /not FAST/);

    const hl = await products.query({ filter: { description: 'wireless' }, highlight: { fields: ['description'], preTag: '<b>', postTag: '</b>' } } as any);
    assert.equal((hl.find((h) => h.key === 'product:1') as any).data.description, 'Premium noise-cancelling <b>wireless</b> <b>headphones</b>'.replace('<b>headphones</b>', 'headphones'));
    const scored = await products.query({ filter: { inStock: true }, scoreFunc: { field: 'price', modifier: 'log1p', factor: 2 } } as any);
    assert.deepEqual(scored.map((h) => h.key), ['product:1', 'product:3']);
    assert.ok(Math.abs(scored[0].score - Math.log10(1 + 2 * 199.99)) < 1e-9);
    const summed = await products.query({ filter: { inStock: true }, scoreFunc: { scoreMode: 'replace', combineMode: 'sum', fields: [{ field: 'price', missing: 0 }, 'price'] } } as any);
    assert.equal(summed[0].score, 2 * 199.99);
    await assert.rejects(products.query({ filter: {}, scoreFunc: 'description' } as any), /must be a FAST numeric/);

    const page = await products.query({ filter: {}, limit: 2, offset: 1, orderBy: { price: 'ASC' } } as any);
    assert.deepEqual(page.map((h) => h.key), ['product:2', 'product:1']);

    const d = await products.describe();
    assert.deepEqual(d, {
      name: 'products', dataType: 'json', prefixes: ['product:'], language: 'english',
      schema: {
        name: { type: 'TEXT' }, description: { type: 'TEXT' }, category: { type: 'TEXT', noTokenize: true },
        price: { type: 'F64', fast: true }, inStock: { type: 'BOOL' },
        'meta.brand': { type: 'KEYWORD' }, 'meta.added': { type: 'DATE' },
      },
    });

    // EXISTSOK: the same definition answers 0, a different one is an error.
    await redis.search.createIndex({ name: 'products', dataType: 'json', prefix: 'product:', schema, existsOk: true });
    await assert.rejects(redis.search.createIndex({ name: 'products', dataType: 'json', prefix: 'item:', schema, existsOk: true }), /already exists/);
    await assert.rejects(redis.search.createIndex({ name: 'products', dataType: 'json', prefix: 'product:', schema }), /ERR Index products already exists/);

    assert.equal(await redis.search.alias.add({ indexName: 'products', alias: 'shop' }), 1);
    assert.equal(await products.addAlias({ alias: 'shop' }), 2);
    assert.deepEqual(await redis.search.alias.list(), { shop: 'products' });
    const viaAlias = redis.search.index({ name: 'shop', schema });
    assert.deepEqual(await viaAlias.count({ filter: { inStock: false } }), { count: 1 });
    assert.equal(await redis.search.alias.delete({ alias: 'shop' }), 1);
    assert.equal(await redis.search.alias.delete({ alias: 'shop' }), 0);
    assert.deepEqual(await redis.search.alias.list(), {});

    assert.equal(await products.drop(), 1);
    assert.equal(await products.drop(), 0);
    assert.equal(await products.query({ filter: {} }), null);
    assert.equal(await products.describe(), null);
    assert.equal(await redis.exists('product:1'), 1); // dropping an index keeps the keys
  });

  it('aggregations: $dateHistogram, $extendedStats, $percentiles, $facet, missing', async () => {
    await redis.exec(['SEARCH.CREATE', 'ev', 'ON', 'JSON', 'PREFIX', '1', 'ev:', 'SCHEMA', 'at', 'DATE', 'FAST', 'ms', 'U64', 'FAST', 'cat', 'FACET']);
    const day = 86_400_000;
    const t0 = Date.UTC(2024, 0, 1);
    const docs = [
      { at: new Date(t0 + 3_600_000).toISOString(), ms: 0, cat: '/category/books/fiction' },
      { at: new Date(t0 + 5 * 3_600_000).toISOString(), ms: 10, cat: '/category/books/nonfiction' },
      { at: new Date(t0 + 2 * day).toISOString(), ms: 20, cat: '/category/electronics/phones' },
      { at: new Date(t0 + 2 * day + 1).toISOString(), cat: '/category/books/fiction' },
    ];
    for (let i = 0; i < docs.length; i++) await redis.json.set(`ev:${i}`, '$', docs[i]);
    const ev = redis.search.index({ name: 'ev' });
    await ev.waitIndexing();
    const r = await ev.aggregate({
      filter: {},
      aggregations: {
        by_day: { $dateHistogram: { field: 'at', fixedInterval: '1d' }, $aggs: { top: { $max: { field: 'ms' } } } },
        busy: { $dateHistogram: { field: 'at', fixedInterval: '1d', minDocCount: 1, offset: '-1h' } },
        wide: { $dateHistogram: { field: 'at', fixedInterval: '1d', extendedBounds: { min: t0 - day, max: t0 + 3 * day }, hardBounds: { min: t0, max: t0 + 3 * day } } },
        ext: { $extendedStats: { field: 'ms', sigma: 1 } },
        withMissing: { $avg: { field: 'ms', missing: 50 } },
        pct: { $percentiles: { field: 'ms', percents: [50, 95] } },
        pctList: { $percentiles: { field: 'ms', percents: [50], keyed: false } },
        cats: { $facet: { field: 'cat', path: '/category', depth: 2 } },
        top1: { $facet: { field: 'cat', path: '/category/', size: 1 } },
      },
    } as any) as any;
    assert.deepEqual(r.by_day.buckets, [
      { key: t0, keyAsString: '2024-01-01T00:00:00Z', docCount: 2, top: { value: 10 } },
      { key: t0 + day, keyAsString: '2024-01-02T00:00:00Z', docCount: 0, top: { value: null } },
      { key: t0 + 2 * day, keyAsString: '2024-01-03T00:00:00Z', docCount: 2, top: { value: 20 } },
    ]);
    // offset -1h: buckets start at 23:00; minDocCount 1 leaves the empty one out.
    assert.deepEqual(r.busy.buckets.map((b: any) => [b.keyAsString, b.docCount]), [
      ['2023-12-31T23:00:00Z', 2], ['2024-01-02T23:00:00Z', 2],
    ]);
    assert.deepEqual(r.wide.buckets.map((b: any) => b.docCount), [2, 0, 2, 0]);
    // keyed $dateHistogram: bucket keys as text (the key's ms; the SDK's exec turns them into numbers).
    const keyed = await redis.exec(['SEARCH.AGGREGATE', 'ev', '{}', JSON.stringify({ d: { $dateHistogram: { field: 'at', fixedInterval: '1d', minDocCount: 1, keyed: true } } })]) as any;
    assert.deepEqual(keyed, ['d', ['buckets', [
      t0, ['key', t0, 'keyAsString', '2024-01-01T00:00:00Z', 'docCount', 2],
      t0 + 2 * day, ['key', t0 + 2 * day, 'keyAsString', '2024-01-03T00:00:00Z', 'docCount', 2],
    ]]]);
    const sd = Math.sqrt(((0 - 10) ** 2 + 0 + (20 - 10) ** 2) / 3);
    assert.equal(r.ext.count, 3);
    assert.equal(r.ext.sumOfSquares, 500);
    assert.ok(Math.abs(r.ext.stdDeviation - sd) < 1e-9);
    assert.ok(Math.abs(r.ext.varianceSampling - 100) < 1e-9);
    assert.ok(Math.abs(r.ext.stdDeviationBounds.upper - (10 + sd)) < 1e-9);
    assert.equal(r.withMissing.value, 20);
    assert.deepEqual(r.pct, { values: { '50.0': 10, '95.0': 19 } });
    assert.deepEqual(r.pctList, { values: [{ key: 50, value: 10 }] });
    assert.deepEqual(r.cats, {
      path: '/category', sumOtherDocCount: 0, children: [
        { path: '/category/books', docCount: 3, sumOtherDocCount: 0, children: [
          { path: '/category/books/fiction', docCount: 2, sumOtherDocCount: 0 },
          { path: '/category/books/nonfiction', docCount: 1, sumOtherDocCount: 0 },
        ] },
        { path: '/category/electronics', docCount: 1, sumOtherDocCount: 0, children: [
          { path: '/category/electronics/phones', docCount: 1, sumOtherDocCount: 0 },
        ] },
      ],
    });
    assert.deepEqual(r.top1, { path: '/category', sumOtherDocCount: 1, children: [{ path: '/category/books', docCount: 3, sumOtherDocCount: 0 }] });
    const bad = (aggs: object) => assert.rejects(ev.aggregate({ aggregations: aggs } as any));
    await bad({ x: { $dateHistogram: { field: 'ms', fixedInterval: '1d' } } });
    await bad({ x: { $dateHistogram: { field: 'at', fixedInterval: '1 week' } } });
    await bad({ x: { $dateHistogram: { field: 'at', fixedInterval: '1ms', extendedBounds: { min: 0, max: 1e12 } } } });
    await bad({ x: { $percentiles: { field: 'ms', percents: [101] } } });
    await bad({ x: { $facet: { field: 'cat', path: 'category' } } });
    await bad({ x: { $terms: { field: 'ms' }, $aggs: { y: { $facet: { field: 'cat', path: '/' } } } } });
  });

  it('hash documents, and errors for bad queries', async () => {
    const users = await redis.search.createIndex({
      name: 'users', dataType: 'hash', prefix: ['user:', 'member:'],
      schema: s.object({ name: s.string(), age: s.number('U64'), city: s.keyword() }),
    });
    await redis.hset('user:1', { name: 'Ada Lovelace', age: 36, city: 'London' });
    await redis.hset('member:2', { name: 'Alan Turing', age: 41, city: 'Manchester' });
    await users.waitIndexing();
    const r = await users.query({ filter: { age: { $gte: 40 } } });
    assert.deepEqual(r.map((h) => h.key), ['member:2']);
    assert.deepEqual(r[0].data, { name: 'Alan Turing', age: 41, city: 'Manchester' });
    await assert.rejects(users.query({ filter: { nope: 1 } as any }), /ERR Unknown field: nope/);
    await assert.rejects(users.query({ filter: { name: { $not: 'x' } } as any }), /ERR Unknown field operator: \$not/);
    await assert.rejects(users.query({ filter: { age: { $phrase: 'x' } } as any }), /not supported for U64/);
    await assert.rejects(users.query({ filter: { age: 'old' } as any }), /invalid value/);
    await assert.rejects(users.query({ filter: {}, limit: 0 }), /ERR limit should be a positive number less than 1000/);
    await assert.rejects(users.query({ filter: {}, limit: 1001 }), /ERR limit should be a positive number less than 1000/);
    // The read-only REST token may query but not change indexes.
    const ro = new Redis({ url: `http://127.0.0.1:${srv.httpPort}`, token: RO_TOKEN, enableTelemetry: false });
    assert.deepEqual(await ro.search.index({ name: 'users' }).count({ filter: {} }), { count: 2 });
    await assert.rejects(ro.search.index({ name: 'users' }).drop(), /NOPERM|read ?only|not allowed/i);
    await users.drop();
  });
});

describe('SEARCH.* over TCP (ioredis) and index sync under writes', () => {
  let io: IORedis;
  withServer((c) => { io = c; });

  const keys = async (idx: string, filter: object = {}) => {
    const r = (await io.call('SEARCH.QUERY', idx, JSON.stringify(filter), 'NOCONTENT', 'LIMIT', '1000')) as [string, string][];
    return r.map((x) => x[0]).sort();
  };

  it('replies in the shapes the SDK parses', async () => {
    assert.equal(await io.call('SEARCH.CREATE', 'h', 'ON', 'HASH', 'PREFIX', '1', 'h:', 'SCHEMA', 'title', 'TEXT', 'n', 'I64', 'FAST', 'FROM', 'num'), 1);
    await io.hset('h:1', 'title', 'hello world', 'num', '-5');
    await io.hset('h:2', 'title', 'hello there', 'num', '7');
    const r = (await io.call('SEARCH.QUERY', 'h', '{"title":"hello"}', 'ORDERBY', 'n', 'ASC')) as any[];
    assert.equal(r.length, 2);
    assert.equal(r[0][0], 'h:1');
    assert.ok(Number(r[0][1]) > 0);
    assert.deepEqual(r[0][2], [['title', 'hello world'], ['num', '-5']]);
    assert.deepEqual(await io.call('SEARCH.QUERY', 'h', '{"n":{"$lt":0}}', 'NOCONTENT'), [['h:1', '1']]);
    // A double-quoted value is an exact phrase: adjacent, in order, no typo or prefix matching.
    await io.hset('h:3', 'title', 'world hello', 'num', '1');
    assert.deepEqual(await keys('h', { title: '"hello world"' }), ['h:1']);
    assert.deepEqual(await keys('h', { title: '"helo world"' }), []);
    // Unquoted, any of the words is enough (h:2 has only "hello"); the exact phrase ranks first.
    assert.deepEqual(await keys('h', { title: 'hello world' }), ['h:1', 'h:2', 'h:3']);
    assert.equal(((await io.call('SEARCH.QUERY', 'h', '{"title":"hello world"}', 'NOCONTENT')) as string[][])[0][0], 'h:1');
    assert.deepEqual(await keys('h', { title: 'goodbye world' }), ['h:1', 'h:3']);
    await io.del('h:3');
    assert.equal(await io.call('SEARCH.COUNT', 'h', '{"title":{"$phrase":"hello world"}}'), 1);
    assert.deepEqual(await io.call('SEARCH.DESCRIBE', 'h'), [
      'name', 'h', 'type', 'HASH', 'prefixes', ['h:'], 'language', 'english',
      'schema', [['title', 'TEXT'], ['n', 'I64', 'FAST', 'FROM', 'num']],
    ]);
    await io.call('SEARCH.CREATE', 'kw', 'ON', 'HASH', 'PREFIX', '1', 'kw:', 'SCHEMA', 'cat', 'KEYWORD', 'FAST', 'n', 'U64', 'FAST');
    for (const [k, cat, n] of [['kw:1', 'a', 1], ['kw:2', 'a', 3], ['kw:3', 'b', 5]] as const) await io.hset(k, 'cat', cat, 'n', String(n));
    assert.deepEqual(await io.call('SEARCH.AGGREGATE', 'kw', '{}', '{"by":{"$terms":{"field":"cat","size":1},"$aggs":{"s":{"$sum":{"field":"n"}}}}}'),
      ['by', ['buckets', [['key', 'a', 'docCount', 2, 's', ['value', '4']]], 'sumOtherDocCount', 1]]);
    // keyed: buckets as an object (a flat [key text, bucket...] array) instead of a list.
    assert.deepEqual(await io.call('SEARCH.AGGREGATE', 'kw', '{}', '{"h":{"$histogram":{"field":"n","interval":2,"keyed":true}}}'),
      ['h', ['buckets', ['0', ['key', '0', 'docCount', 1], '2', ['key', '2', 'docCount', 1], '4', ['key', '4', 'docCount', 1]]]]);
    assert.deepEqual(await io.call('SEARCH.AGGREGATE', 'kw', '{}', '{"h":{"$histogram":{"field":"n","interval":2,"keyed":false,"minDocCount":1,"hardBounds":{"min":2,"max":9}}}}'),
      ['h', ['buckets', [['key', '2', 'docCount', 1], ['key', '4', 'docCount', 1]]]]);
    await assert.rejects(io.call('SEARCH.AGGREGATE', 'kw', '{}', '{"h":{"$histogram":{"field":"n","interval":2,"keyed":1}}}'), /keyed must be a boolean/);
    assert.equal(await io.call('SEARCH.AGGREGATE', 'nope', '{}', '{}'), null);
    await assert.rejects(io.call('SEARCH.AGGREGATE', 'kw', '{}', '{"x":{"$median":{"field":"n"}}}'), /Unknown aggregation operator/);
    // Limits on untrusted input: words per text condition, ranges per aggregation, nesting.
    const many = Array.from({ length: 65 }, (_, i) => `w${i}`).join(' ');
    await io.call('SEARCH.CREATE', 'lim', 'ON', 'HASH', 'PREFIX', '1', 'lim:', 'SCHEMA', 't', 'TEXT', 'n', 'U64', 'FAST');
    await assert.rejects(io.call('SEARCH.QUERY', 'lim', JSON.stringify({ t: { $fuzzy: many } })), /more than 64 words/);
    await assert.rejects(io.call('SEARCH.AGGREGATE', 'lim', '{}', JSON.stringify({ r: { $range: { field: 'n', ranges: Array.from({ length: 101 }, () => ({})) } } })), /at most 100/);
    let deep: object = { n: 1 };
    for (let i = 0; i < 40; i++) deep = { $and: [deep] };
    await assert.rejects(io.call('SEARCH.QUERY', 'lim', JSON.stringify(deep)), /nested deeper/);
    assert.equal(await io.call('SEARCH.DROP', 'lim'), 1);
    assert.equal(await io.call('SEARCH.DROP', 'kw'), 1);
    assert.deepEqual(await io.call('SEARCH.LISTINDEXES'), [['name', 'h', 'type', 'HASH']]);
    assert.equal(await io.call('SEARCH.QUERY', 'missing', '{}'), null);
    await assert.rejects(io.call('SEARCH.QUERY', 'h', '{"title":'), /ERR invalid query/);
    await assert.rejects(io.call('SEARCH.CREATE', 'x', 'ON', 'HASH', 'PREFIX', '1', 'x:', 'SCHEMA', 'a', 'VECTOR'), /unknown field type/);
    await assert.rejects(io.call('SEARCH.CREATE', 'x', 'ON', 'HASH', 'PREFIX', '1', 'x:', 'SCHEMA', 'a', 'TEXT', 'FAST'), /FAST is not supported/);
    await assert.rejects(io.call('SEARCH.CREATE', 'x', 'ON', 'HASH', 'SCHEMA', 'a', 'TEXT'), /missing PREFIX/);
    await assert.rejects(io.call('SEARCH.QUERY', 'h', '{}', 'ORDERBY', 'title'), /not FAST/);
    await assert.rejects(io.call('SEARCH.QUERY', 'h', '{"title":{"$regex":"(a+)+b"}}'), /not supported/);
    assert.equal(await io.call('SEARCH.DROP', 'h'), 1);
  });

  it('the name of an index is a key: CREATE refuses a name held by another key; LISTINDEXES', async () => {
    await io.set('taken', 'v');
    await assert.rejects(io.call('SEARCH.CREATE', 'taken', 'ON', 'HASH', 'PREFIX', '1', 't:', 'SCHEMA', 'a', 'TEXT'), /already used by a non-index key/);
    await io.pexpire('taken', 1);
    await sleep(5);
    assert.equal(await io.call('SEARCH.CREATE', 'taken', 'ON', 'HASH', 'PREFIX', '1', 't:', 'SCHEMA', 'a', 'TEXT'), 1);
    await io.call('SEARCH.CREATE', 'b-idx', 'ON', 'JSON', 'PREFIX', '1', 'b:', 'SCHEMA', 'a', 'TEXT');
    await io.call('SEARCH.CREATE', 'a-idx', 'ON', 'STRING', 'PREFIX', '1', 'a:', 'SCHEMA', 'a', 'TEXT');
    assert.deepEqual(await io.call('SEARCH.LISTINDEXES'), [
      ['name', 'a-idx', 'type', 'STRING'], ['name', 'b-idx', 'type', 'JSON'], ['name', 'taken', 'type', 'HASH'],
    ]);
    assert.deepEqual(await io.call('SEARCH.LISTINDEXES', 'MATCH', '*-idx', 'LIMIT', '1', 'OFFSET', '1'), [['name', 'b-idx', 'type', 'JSON']]);
    assert.deepEqual(await io.call('SEARCH.LISTINDEXES', 'LIMIT', '0', 'OFFSET', '5'), []);
    await assert.rejects(io.call('SEARCH.LISTINDEXES', 'LIMIT', '-1'), /out of range/);
    await assert.rejects(io.call('SEARCH.LISTINDEXES', 'MATCH'), /syntax error/);
    for (const n of ['taken', 'a-idx', 'b-idx']) assert.equal(await io.call('SEARCH.DROP', n), 1);
  });

  it('$terms options: order, minDocCount, missing, include/exclude, showTermDocCountError', async () => {
    await io.call('SEARCH.CREATE', 'tm', 'ON', 'HASH', 'PREFIX', '1', 'tm:', 'SCHEMA', 'c', 'KEYWORD', 'FAST', 'n', 'U64', 'FAST');
    const rows: [string, string | null, number][] = [['1', 'a', 1], ['2', 'a', 2], ['3', 'a', 3], ['4', 'b', 10], ['5', 'b', 20], ['6', 'c', 5], ['7', null, 7]];
    for (const [k, c, n] of rows) {
      if (c === null) await io.hset(`tm:${k}`, 'n', String(n));
      else await io.hset(`tm:${k}`, 'c', c, 'n', String(n));
    }
    const agg = async (terms: object, aggs?: object) => {
      const r = (await io.call('SEARCH.AGGREGATE', 'tm', '{}', JSON.stringify({ t: { $terms: { field: 'c', ...terms }, ...(aggs ? { $aggs: aggs } : {}) } }))) as any[];
      return r[1];
    };
    const keysOf = (r: any[]) => (r[1] as any[][]).map((b) => [b[1], b[3]]);
    assert.deepEqual(keysOf(await agg({})), [['a', 3], ['b', 2], ['c', 1]]);
    assert.deepEqual(keysOf(await agg({ order: { key: 'desc' } })), [['c', 1], ['b', 2], ['a', 3]]);
    assert.deepEqual(keysOf(await agg({ order: { count: 'asc' } })), [['c', 1], ['b', 2], ['a', 3]]);
    assert.deepEqual(keysOf(await agg({ order: { top: 'desc' } }, { top: { $max: { field: 'n' } } })), [['b', 2], ['c', 1], ['a', 3]]);
    assert.deepEqual(keysOf(await agg({ minDocCount: 2 })), [['a', 3], ['b', 2]]);
    assert.deepEqual(keysOf(await agg({ missing: 'none' })), [['a', 3], ['b', 2], ['c', 1], ['none', 1]]);
    assert.deepEqual(keysOf(await agg({ include: ['a', 'c'] })), [['a', 3], ['c', 1]]);
    assert.deepEqual(keysOf(await agg({ exclude: '[ab]' })), [['c', 1]]);
    const r = await agg({ size: 1, showTermDocCountError: true });
    assert.deepEqual(r, ['buckets', [['key', 'a', 'docCount', 3, 'docCountErrorUpperBound', 0]], 'sumOtherDocCount', 3, 'docCountErrorUpperBound', 0]);
    await assert.rejects(agg({ order: { nope: 'asc' } }), /order by 'nope'/);
    await assert.rejects(agg({ include: '(a+)+' }), /not supported/);
    await assert.rejects(agg({ minDocCount: -1 }), /non-negative integer/);
    assert.equal(await io.call('SEARCH.DROP', 'tm'), 1);
  });

  it('long texts with repeated words: postings stay right through updates and deletes', async () => {
    await io.call('SEARCH.CREATE', 'lt', 'ON', 'HASH', 'PREFIX', '1', 'lt:', 'SCHEMA', 't', 'TEXT', 'NOSTEM');
    const text = (i: number) => Array.from({ length: 400 }, (_, j) => `w${(i * 7 + j) % 97}`).join(' ');
    for (let i = 0; i < 30; i++) await io.hset(`lt:${i}`, 't', text(i));
    const count = async (w: string) => Number(await io.call('SEARCH.COUNT', 'lt', JSON.stringify({ t: { $eq: w } })));
    assert.equal(await count('w5'), 30);
    for (let i = 0; i < 30; i += 2) await io.hset(`lt:${i}`, 't', 'short text');
    for (let i = 1; i < 10; i += 2) await io.del(`lt:${i}`);
    assert.equal(await count('w5'), 10);
    assert.equal(await count('short'), 15);
    assert.equal(await count('w96'), 10);
    const hits = (await io.call('SEARCH.QUERY', 'lt', JSON.stringify({ t: { $phrase: 'w5 w6' } }), 'NOCONTENT', 'LIMIT', '100')) as string[][];
    assert.equal(hits.length, 10);
    assert.equal(await io.call('SEARCH.DROP', 'lt'), 1);
  });

  it('numeric ranges and equality through the sorted column, before and after writes', async () => {
    await io.call('SEARCH.CREATE', 'num', 'ON', 'HASH', 'PREFIX', '1', 'num:', 'SCHEMA', 'n', 'I64', 'FAST', 'c', 'KEYWORD');
    for (let i = 0; i < 200; i++) await io.hset(`num:${i}`, 'n', String(i % 50), 'c', i % 2 ? 'odd' : 'even');
    const count = async (q: object) => Number(await io.call('SEARCH.COUNT', 'num', JSON.stringify(q)));
    assert.equal(await count({ n: { $gte: 10, $lt: 20 } }), 40);
    assert.equal(await count({ n: { $gt: 10, $lte: 20 } }), 40);
    assert.equal(await count({ n: 7 }), 4);
    assert.equal(await count({ n: { $lt: 0 } }), 0);
    assert.equal(await count({ n: { $gte: 49 }, c: 'odd' }), 4); // i = 49, 99, 149, 199
    for (let i = 0; i < 20; i++) await io.hset(`num:${i}`, 'n', '1000');
    await io.del('num:20', 'num:21');
    await io.hset('num:x', 'n', '15');
    assert.equal(await count({ n: { $gte: 10, $lt: 20 } }), 31); // 40 - num:10..19 + num:x
    assert.equal(await count({ n: 1000 }), 20);
    assert.deepEqual((await keys('num', { n: { $gte: 1000 }, c: 'even' })).length, 10);
    assert.deepEqual(await keys('num', { n: 15 }), ['num:115', 'num:165', 'num:65', 'num:x']);
    assert.equal(await io.call('SEARCH.DROP', 'num'), 1);
  });

  it('stays in sync: HSET, HDEL, DEL, EXPIRE, RENAME, type changes, MULTI, EVAL, FLUSHALL', async () => {
    await io.call('SEARCH.CREATE', 'docs', 'ON', 'HASH', 'PREFIX', '1', 'd:', 'SCHEMA', 'tag', 'KEYWORD');
    await io.hset('d:1', 'tag', 'a');
    await io.hset('d:2', 'tag', 'a');
    assert.deepEqual(await keys('docs', { tag: 'a' }), ['d:1', 'd:2']);
    await io.hset('d:2', 'tag', 'b');
    assert.deepEqual(await keys('docs', { tag: 'a' }), ['d:1']);
    await io.hdel('d:2', 'tag');
    assert.deepEqual(await keys('docs', { tag: 'b' }), []);
    await io.del('d:1');
    assert.deepEqual(await keys('docs', { tag: 'a' }), []);
    // Expiry (active or lazy) removes the document.
    await io.hset('d:3', 'tag', 'x');
    await io.pexpire('d:3', 50);
    await sleep(200);
    assert.deepEqual(await keys('docs', { tag: 'x' }), []);
    // RENAME into and out of the prefix.
    await io.hset('elsewhere', 'tag', 'r');
    await io.rename('elsewhere', 'd:r');
    assert.deepEqual(await keys('docs', { tag: 'r' }), ['d:r']);
    await io.rename('d:r', 'gone');
    assert.deepEqual(await keys('docs', { tag: 'r' }), []);
    // A key that changes type leaves a HASH index.
    await io.hset('d:t', 'tag', 't');
    await io.set('d:t', 'now a string');
    assert.deepEqual(await keys('docs', { tag: 't' }), []);
    // MULTI and scripts go through the same hook.
    await io.multi().hset('d:m', 'tag', 'm').hset('d:n', 'tag', 'm').exec();
    assert.deepEqual(await keys('docs', { tag: 'm' }), ['d:m', 'd:n']);
    await io.eval("redis.call('HSET', KEYS[1], 'tag', 'lua')", 1, 'd:lua');
    assert.deepEqual(await keys('docs', { tag: 'lua' }), ['d:lua']);
    await io.flushall();
    assert.deepEqual(await keys('docs'), []);
    await io.hset('d:after', 'tag', 'z');
    assert.deepEqual(await keys('docs'), ['d:after']);
  });

  it('STRING and JSON indexes: SET, JSON.SET/NUMINCRBY, initial scan and SKIPINITIALSCAN', async () => {
    await io.set('s:1', JSON.stringify({ title: 'first post', votes: 3 }));
    await io.call('JSON.SET', 'j:1', '$', JSON.stringify({ a: { b: 'deep value' }, n: 1 }));
    await io.call('SEARCH.CREATE', 'str', 'ON', 'STRING', 'PREFIX', '1', 's:', 'SCHEMA', 'title', 'TEXT', 'votes', 'U64', 'FAST');
    await io.call('SEARCH.CREATE', 'js', 'ON', 'JSON', 'PREFIX', '1', 'j:', 'SCHEMA', 'a.b', 'TEXT', 'n', 'F64');
    await io.call('SEARCH.CREATE', 'skip', 'SKIPINITIALSCAN', 'ON', 'JSON', 'PREFIX', '1', 'j:', 'SCHEMA', 'n', 'F64');
    assert.deepEqual(await keys('str', { votes: 3 }), ['s:1']); // initial scan
    assert.deepEqual(await keys('js', { 'a.b': 'deep' }), ['j:1']);
    assert.deepEqual(await keys('skip'), []);
    await io.set('s:1', JSON.stringify({ title: 'edited', votes: 4 }));
    await io.set('s:2', 'not json');
    assert.deepEqual(await keys('str', { votes: { $gt: 3 } }), ['s:1']);
    await io.call('JSON.NUMINCRBY', 'j:1', '$.n', '10');
    assert.deepEqual(await keys('js', { n: 11 }), ['j:1']);
    assert.deepEqual(await keys('skip', { n: 11 }), ['j:1']); // later writes are indexed
    const full = (await io.call('SEARCH.QUERY', 'js', '{}')) as any[];
    assert.deepEqual(full[0][2], [['$', '{"a":{"b":"deep value"},"n":11}']]);
  });
});

describe('SEARCH.* definitions survive a restart', () => {
  it('keeps indexes and aliases, rebuilds contents from the keyspace', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-search-'));
    try {
      let srv = await startOurs([], {}, { dir });
      let io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      await io.call('SEARCH.CREATE', 'p', 'ON', 'HASH', 'PREFIX', '1', 'p:', 'LANGUAGE', 'english', 'SCHEMA', 'name', 'TEXT', 'NOSTEM', 'price', 'F64', 'FAST');
      await io.call('SEARCH.ALIASADD', 'pa', 'p');
      await io.hset('p:1', 'name', 'lamp', 'price', '10');
      await io.call('SEARCH.CREATE', 'ev', 'ON', 'STREAM', 'events', 'SCHEMA', 'm', 'TEXT');
      await io.xadd('events', '1-0', 'm', 'lamp broke');
      io.disconnect();
      await srv.stop();
      srv = await startOurs([], {}, { dir });
      io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      try {
        assert.deepEqual(await io.call('SEARCH.LISTALIASES'), [['pa', 'p']]);
        assert.deepEqual(((await io.call('SEARCH.DESCRIBE', 'pa')) as any[])[9], [['name', 'TEXT', 'NOSTEM'], ['price', 'F64', 'FAST']]);
        await io.hset('p:2', 'name', 'lamp shade', 'price', '20');
        assert.equal(await io.call('SEARCH.COUNT', 'pa', '{"name":"lamp"}'), 2);
        assert.equal(await io.call('SEARCH.DROP', 'p'), 1);
        await io.xadd('events', '2-0', 'm', 'lamp fixed');
        assert.deepEqual(((await io.call('SEARCH.QUERY', 'ev', '{"m":"lamp"}', 'NOCONTENT')) as string[][]).map((x) => x[0]).sort(), ['1-0', '2-0']);
        assert.equal(await io.call('SEARCH.DROP', 'ev'), 1);
      } finally {
        io.disconnect();
        await srv.stop();
      }
      srv = await startOurs([], {}, { dir });
      io = new IORedis({ port: srv.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      try {
        assert.deepEqual(await io.call('SEARCH.LISTINDEXES'), []);
      } finally {
        io.disconnect();
        await srv.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------- randomized vs brute force

interface RDoc { n?: number; k?: string; b?: boolean; t?: string }
type Filter = Record<string, unknown>;
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
const KW = ['a', 'b', 'c', 'd'];

function genDoc(r: () => number): RDoc {
  const d: RDoc = {};
  if (r() < 0.9) d.n = Math.floor(r() * 20);
  if (r() < 0.9) d.k = KW[Math.floor(r() * KW.length)];
  if (r() < 0.9) d.b = r() < 0.5;
  if (r() < 0.9) d.t = Array.from({ length: 1 + Math.floor(r() * 5) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  return d;
}

/** A random filter and its predicate, built side by side. */
function genFilter(r: () => number, depth: number): [Filter, (d: RDoc) => boolean] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const c = depth > 0 ? Math.floor(r() * 14) : Math.floor(r() * 10);
  const x = Math.floor(r() * 20);
  switch (c) {
    case 0: return [{ n: x }, (d) => d.n === x];
    case 1: {
      const op = pick(['$gt', '$gte', '$lt', '$lte'] as const);
      const f = { $gt: (v: number) => v > x, $gte: (v: number) => v >= x, $lt: (v: number) => v < x, $lte: (v: number) => v <= x }[op];
      return [{ n: { [op]: x } }, (d) => d.n !== undefined && f(d.n)];
    }
    case 2: { const k = pick(KW); return [{ k }, (d) => d.k === k]; }
    case 3: { const ks = [pick(KW), pick(KW)]; return [{ k: { $in: ks } }, (d) => d.k !== undefined && ks.includes(d.k)]; }
    case 4: { const k = pick(KW); return [{ k: { $ne: k } }, (d) => d.k !== k]; }
    case 5: { const b = r() < 0.5; return [{ b }, (d) => d.b === b]; }
    case 6: { const w = pick(WORDS); return [{ t: { $eq: w } }, (d) => d.t !== undefined && d.t.split(' ').includes(w)]; }
    case 7: {
      const p = `${pick(WORDS)} ${pick(WORDS)}`;
      return [{ t: { $phrase: p } }, (d) => d.t !== undefined && ` ${d.t} `.includes(` ${p} `)];
    }
    case 8:
    case 9: {
      // Smart matching of several words: any one of them is enough.
      const ws = [pick(WORDS), pick(WORDS)];
      return [{ t: ws.join(' ') }, (d) => d.t !== undefined && d.t.split(' ').some((w) => ws.includes(w))];
    }
    default: {
      const n = 1 + Math.floor(r() * 3);
      const subs = Array.from({ length: n }, () => genFilter(r, depth - 1));
      const fs = subs.map((s) => s[0]);
      const ps = subs.map((s) => s[1]);
      switch (c) {
        case 10: return [{ $and: fs }, (d) => ps.every((p) => p(d))];
        case 11: return [{ $or: fs }, (d) => ps.some((p) => p(d))];
        case 12: return [{ $mustNot: fs }, (d) => !ps.some((p) => p(d))];
        default: {
          const [m, mp] = genFilter(r, depth - 1);
          // $should next to $must only boosts: the set is decided by $must (and $mustNot).
          return [{ $must: [m], $should: fs }, mp];
        }
      }
    }
  }
}

describe('SEARCH.QUERY against a brute-force evaluation', () => {
  let io: IORedis;
  withServer((c) => { io = c; });

  it('matches the same documents for random filters', async () => {
    const seed = Number(process.env.SEARCH_SEED ?? 20);
    const r = rng(seed);
    await io.call('SEARCH.CREATE', 'rnd', 'ON', 'JSON', 'PREFIX', '1', 'r:', 'SCHEMA', 'n', 'I64', 'FAST', 'k', 'KEYWORD', 'b', 'BOOL', 't', 'TEXT', 'NOSTEM');
    const docs = new Map<string, RDoc>();
    for (let i = 0; i < 150; i++) {
      const d = genDoc(r);
      docs.set(`r:${i}`, d);
      await io.call('JSON.SET', `r:${i}`, '$', JSON.stringify(d));
    }
    for (let round = 0; round < 200; round++) {
      // Writes between queries: overwrite or delete a few documents.
      for (let j = 0; j < 3; j++) {
        const key = `r:${Math.floor(r() * 150)}`;
        if (r() < 0.2) { docs.delete(key); await io.del(key); }
        else { const d = genDoc(r); docs.set(key, d); await io.call('JSON.SET', key, '$', JSON.stringify(d)); }
      }
      const [filter, pred] = genFilter(r, 3);
      const want = [...docs].filter(([, d]) => pred(d)).map(([k]) => k).sort();
      const q = JSON.stringify(filter);
      const got = ((await io.call('SEARCH.QUERY', 'rnd', q, 'NOCONTENT', 'LIMIT', '1000')) as [string, string][]).map((x) => x[0]).sort();
      assert.deepEqual(got, want, `seed ${seed} round ${round}: ${q}`);
      assert.equal(await io.call('SEARCH.COUNT', 'rnd', q), want.length, q);
      // Paging over an ORDERBY (all scores equal: ties broken by key; documents without n last).
      const off = Math.floor(r() * 140);
      const desc = r() < 0.5;
      const order = [...docs].sort(([ka, a], [kb, b]) => {
        if (a.n === undefined || b.n === undefined) { if (a.n !== b.n) return a.n === undefined ? 1 : -1; }
        else if (a.n !== b.n) return (a.n - b.n) * (desc ? -1 : 1);
        return ka < kb ? -1 : ka > kb ? 1 : 0;
      }).map(([k]) => k).slice(off, off + 7);
      const page = ((await io.call('SEARCH.QUERY', 'rnd', '{}', 'ORDERBY', 'n', desc ? 'DESC' : 'ASC', 'LIMIT', '7', 'OFFSET', String(off), 'NOCONTENT')) as [string, string][]).map((x) => x[0]);
      assert.deepEqual(page, order, `round ${round}: page at ${off} ${desc ? 'DESC' : 'ASC'}`);
    }
  });
});

describe('SEARCH.* text analysis', () => {
  it('BM25 as Tantivy: fieldnorm codes, idf, f32 arithmetic', () => {
    for (let i = 0; i <= 40; i++) assert.equal(fieldnormId(i), i);
    assert.equal(fieldnormId(41), 40);
    assert.equal(fieldnormId(42), 41);
    assert.equal(fieldnorm(255), 2013265944);
    assert.equal(fieldnormId(0xffffffff), 255);
    for (let id = 43; id < 256; id++) {
      assert.equal(fieldnormId(fieldnorm(id)), id);
      assert.equal(fieldnormId(fieldnorm(id) - 1), id - 1);
    }
    // idf(1, 2) = ln(1 + 1.5 / 1.5) = 0.6931472 (Tantivy's own test); weight = idf * 2.2.
    const bm = new Bm25(1, 2, 4);
    assert.equal(bm.weight, Math.fround(Math.fround(0.6931472) * Math.fround(2.2)));
    // tf 1 in a document of average length: weight * 1 / (1 + k1).
    assert.ok(Math.abs(bm.score(fieldnormId(2), 1) - bm.weight / 2.2) < 1e-6);
  });

  it('the ASCII fast path yields what the Unicode tokenizer yields', () => {
    const r = rng(7);
    const fixed = ['Hello World', 'a-b_c  D9x', '', 'ABC123def', 'x.Y,z!', 'tab\there\nnew', 'Ünïcode café', 'x\u0301y', 'A'.repeat(80)];
    for (let i = 0; i < 5000; i++) {
      const text = i < fixed.length ? fixed[i] : Array.from({ length: 1 + (i % 40) }, () => String.fromCharCode(Math.floor(r() * 128))).join('');
      const want = tokenize(text).map((t: string) => t.slice(0, 64));
      assert.deepEqual(analyze(text, false, true), want, JSON.stringify(text));
    }
  });
});
