/**
 * The data plane through plain fetch: errors (tokens, bodies, unknown endpoints), search
 * results staying exact while documents are overwritten and deleted between queries (the
 * workers' change-log catch-up), namespaces deleted and made again, reset?all, range cursors.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startSearch, tempDir, createIndex, dataCall, type SearchProc } from './helpers.js';

let dir: string;
let srv: SearchProc;
let idx: any;
const call = (p: string, b?: unknown) => dataCall(idx.endpoint, idx.token, p, b);
const ids = (r: any) => r.body.result.map((h: any) => h.id).sort();

before(async () => {
  dir = tempDir();
  srv = await startSearch(dir);
  idx = await createIndex(srv.base, 'data');
});
after(async () => {
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('data plane errors', () => {
  it('401 without or with a wrong token, 404 for an unknown index or endpoint', async () => {
    const res = await fetch(`${idx.endpoint}/info`, { method: 'POST', body: '[]' });
    assert.equal(res.status, 401);
    assert.match((await res.json()).error, /Unauthorized/);
    assert.equal((await dataCall(idx.endpoint, 'nope', 'info')).status, 401);
    assert.equal((await dataCall(`${srv.base}/v2/search-data/unknown`, idx.token, 'info')).status, 404);
    const r = await call('frobnicate/x', {});
    assert.equal(r.status, 404);
    assert.equal(r.body.status, 404);
  });
  it('400 for bad bodies', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['upsert-data/n', 5, /document or an array/],
      ['upsert-data/n', [{ content: { a: 'b' } }], /id is required/],
      ['upsert-data/n', [{ id: '', content: { a: 'b' } }], /must not be empty/],
      ['upsert-data/n', [{ id: 'x' }], /content is required/],
      ['upsert-data/n', [{ id: 'x', content: 'text' }], /content is required and must be an object/],
      ['upsert-data/n', [{ id: 'x', content: {}, metadata: [1] }], /metadata must be an object/],
      ['upsert/n', [{ id: 'x', vector: [1, 2] }], /vector upserts are not supported/],
      ['search/n', { query: 5 }, /query must be a string/],
      ['search/n', { query: 'a', topK: 0 }, /topK/],
      ['search/n', { query: 'a', filter: 3 }, /filter must be a string/],
      ['search/n', { query: 'a', semanticWeight: 2 }, /semanticWeight/],
      ['fetch/n', {}, /ids .* or prefix/],
      ['fetch/n', { ids: 'a' }, /ids must be an array/],
      ['range/n', { cursor: '0' }, /limit/],
      ['delete/n', {}, /ids .*prefix.*filter/],
      ['delete/n', { filter: 'a =' }, /filter/],
      ['delete-namespace', [], /default namespace/],
    ];
    await call('upsert-data/n', [{ id: 'seed', content: { a: 'b' } }]);
    for (const [p, body, re] of cases) {
      const r = await call(p, body);
      assert.equal(r.status, 400, `${p} ${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.body.error, re, p);
    }
    const bad = await fetch(`${idx.endpoint}/search/n`, { method: 'POST', headers: { authorization: `Bearer ${idx.token}` }, body: '{nope' });
    assert.equal(bad.status, 400);
    const missing = await call('delete-namespace/never', []);
    assert.equal(missing.status, 404);
  });
});

describe('consistency', () => {
  it('search reflects every overwrite and delete made between queries', async () => {
    await call('upsert-data/c', [{ id: 'a', content: { t: 'apple banana' } }, { id: 'b', content: { t: 'banana cherry' } }]);
    assert.deepEqual(ids(await call('search/c', { query: 'banana' })), ['a', 'b']);
    await call('upsert-data/c', [{ id: 'a', content: { t: 'durian' } }]);
    assert.deepEqual(ids(await call('search/c', { query: 'banana' })), ['b']);
    assert.deepEqual(ids(await call('search/c', { query: 'durian' })), ['a']);
    await call('delete/c', { ids: ['b'] });
    assert.deepEqual(ids(await call('search/c', { query: 'banana' })), []);
    await call('upsert-data/c', [{ id: 'b', content: { t: 'banana again' }, metadata: { v: 2 } }]);
    const r = await call('search/c', { query: 'banana', filter: '@metadata.v = 2' });
    assert.deepEqual(ids(r), ['b']);
    assert.deepEqual(r.body.result[0].metadata, { v: 2 });
    // many small writes in a row, each followed by a query
    for (let i = 0; i < 30; i++) {
      await call('upsert-data/c', [{ id: `n${i}`, content: { t: `number${i} common` } }]);
      assert.equal((await call('search/c', { query: `number${i}`, topK: 1 })).body.result[0].id, `n${i}`);
    }
    assert.equal((await call('search/c', { query: 'common', topK: 100 })).body.result.length, 30);
    assert.deepEqual(await call('delete/c', { prefix: 'n1' }).then((x) => x.body.result), { deleted: 11 });
    assert.equal((await call('search/c', { query: 'common', topK: 100 })).body.result.length, 19);
    assert.deepEqual(await call('delete/c', { filter: "t GLOB 'number2*'" }).then((x) => x.body.result), { deleted: 11 }); // number2, number20..29
    assert.equal((await call('search/c', { query: 'common', topK: 100 })).body.result.length, 8);
  });
  it('a namespace deleted and made again does not show old documents', async () => {
    await call('upsert-data/tmp', [{ id: 'old', content: { t: 'ghost' } }]);
    assert.deepEqual(ids(await call('search/tmp', { query: 'ghost' })), ['old']);
    assert.equal((await call('delete-namespace/tmp', [])).body.result, 'Success');
    assert.ok(!(await call('list-namespaces', [])).body.result.includes('tmp'));
    assert.deepEqual((await call('search/tmp', { query: 'ghost' })).body.result, []);
    await call('upsert-data/tmp', [{ id: 'new', content: { t: 'ghost story' } }]);
    assert.deepEqual(ids(await call('search/tmp', { query: 'ghost' })), ['new']);
  });
  it('reset?all empties every namespace', async () => {
    const other = await createIndex(srv.base, 'reset-all');
    const c = (p: string, b?: unknown) => dataCall(other.endpoint, other.token, p, b);
    await c('upsert-data/x', [{ id: '1', content: { t: 'a' } }]);
    await c('upsert-data', [{ id: '2', content: { t: 'a' } }]);
    assert.equal((await c('info', [])).body.result.vectorCount, 2);
    assert.equal((await c('reset?all', [])).body.result, 'Success');
    const info = (await c('info', [])).body.result;
    assert.equal(info.vectorCount, 0);
    assert.deepEqual(info.namespaces, { '': { vectorCount: 0, pendingVectorCount: 0 }, x: { vectorCount: 0, pendingVectorCount: 0 } });
    assert.deepEqual((await c('search/x', { query: 'a' })).body.result, []);
  });
  it('range cursors work for any id, including "0" and non-ASCII ones', async () => {
    const docs = ['0', '00', 'é', 'ü-1', 'z z', '-', '1'].map((id) => ({ id, content: { t: id } }));
    await call('upsert-data/r', docs);
    const seen: string[] = [];
    let cursor = '0';
    for (let i = 0; i < 10; i++) {
      const r = (await call('range/r', { cursor, limit: 2, includeData: true })).body.result;
      seen.push(...r.vectors.map((v: any) => v.id));
      cursor = r.nextCursor;
      if (cursor === '') break;
    }
    assert.deepEqual(seen.sort(), docs.map((d) => d.id).sort());
  });
});
