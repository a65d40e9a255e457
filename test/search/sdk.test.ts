/**
 * The unmodified @upstash/search SDK against an index created through the management API:
 * upsert, search (plain, filtered, prefix, typo), fetch, range, delete, reset, info, listIndexes,
 * deleteIndex; the read-only token is refused for writes.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startSearch, tempDir, createIndex, loadSearchSdk, type SearchProc } from './helpers.js';

let dir: string;
let srv: SearchProc;
let sdk: any;
let client: any;
let ro: any;

const MOVIES = [
  { id: 'star-wars', content: { title: 'Star Wars', genre: 'sci-fi', plot: 'A farm boy joins rebels to fight an evil galactic empire' }, metadata: { year: 1977, tags: ['space', 'classic'], rating: 8.6 } },
  { id: 'godfather', content: { title: 'The Godfather', genre: 'crime', plot: 'The aging patriarch of a crime dynasty transfers control to his son' }, metadata: { year: 1972, tags: ['mafia', 'classic'], rating: 9.2 } },
  { id: 'interstellar', content: { title: 'Interstellar', genre: 'sci-fi', plot: 'Explorers travel through a wormhole in space to save humanity' }, metadata: { year: 2014, tags: ['space'], rating: 8.7 } },
  { id: 'inception', content: { title: 'Inception', genre: 'sci-fi', plot: 'A thief steals corporate secrets through dream sharing technology' }, metadata: { year: 2010, tags: ['dreams'], rating: 8.8 } },
  { id: 'goodfellas', content: { title: 'Goodfellas', genre: 'crime', plot: 'The story of Henry Hill and his life in the mob' }, metadata: { year: 1990, tags: ['mafia'], rating: 8.7 } },
];

before(async () => {
  sdk = await loadSearchSdk();
  dir = tempDir();
  srv = await startSearch(dir);
  const idx = await createIndex(srv.base, 'sdk-db');
  client = new sdk.Search({ url: idx.endpoint, token: idx.token, enableTelemetry: false });
  ro = new sdk.Search({ url: idx.endpoint, token: idx.read_only_token, enableTelemetry: false, retry: false });
});
after(async () => {
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('@upstash/search SDK', () => {
  it('upsert then search ranks the best match first with scores in 0..1', async (t) => {
    const movies = client.index('movies');
    assert.equal(await movies.upsert(MOVIES), 'Success');
    const r = await movies.search({ query: 'space wormhole crime', limit: 3 });
    assert.equal(r.length, 3);
    assert.equal(r[0].id, 'interstellar');
    assert.deepEqual(r[0].content, MOVIES[2].content);
    assert.deepEqual(r[0].metadata, MOVIES[2].metadata);
    for (const h of r) assert.ok(h.score > 0 && h.score <= 1, String(h.score));
    for (let i = 1; i < r.length; i++) assert.ok(r[i - 1].score >= r[i].score);
    assert.ok(r[0].score > r[r.length - 1].score);
    assert.equal((await movies.search({ query: 'crime', limit: 1 })).length, 1);
    assert.deepEqual(await movies.search({ query: 'zzzzqqq' }), []);
  });
  it('prefix and typo-tolerant matching', async (t) => {
    const movies = client.index('movies');
    assert.equal((await movies.search({ query: 'interst' }))[0].id, 'interstellar');
    assert.equal((await movies.search({ query: 'godfater' }))[0].id, 'godfather');
    const exact = (await movies.search({ query: 'godfather' }))[0].score;
    const typo = (await movies.search({ query: 'godfater' }))[0].score;
    assert.ok(exact > typo);
  });
  it('filters: string syntax and the SDK filter tree', async (t) => {
    const movies = client.index('movies');
    const ids = (r: any[]) => r.map((h) => h.id).sort();
    assert.deepEqual(ids(await movies.search({ query: 'the', filter: "genre = 'crime'" })), ['godfather', 'goodfellas']);
    assert.deepEqual(ids(await movies.search({ query: 'space', filter: '@metadata.year > 2000' })), ['interstellar']);
    assert.deepEqual(ids(await movies.search({ query: 'a the in', limit: 10, filter: "@metadata.tags CONTAINS 'classic'" })), ['godfather', 'star-wars']);
    assert.deepEqual(ids(await movies.search({ query: 'a the in', limit: 10, filter: "@metadata.year >= 1990 AND (genre = 'crime' OR @metadata.rating >= 8.8)" })), ['goodfellas', 'inception']);
    assert.deepEqual(ids(await movies.search({ query: 'a the in', limit: 10, filter: { AND: [{ genre: { equals: 'sci-fi' } }, { '@metadata.year': { lessThan: 2012 } }] } })), ['inception', 'star-wars']);
    assert.deepEqual(ids(await movies.search({ query: 'the', filter: { title: { glob: 'The *' } } })), ['godfather']);
    assert.deepEqual(ids(await movies.search({ query: 'a the in', limit: 10, filter: { '@metadata.year': { in: [1972, 1990] } } })), ['godfather', 'goodfellas']);
    await assert.rejects(movies.search({ query: 'x', filter: 'genre ==== 1' }), /filter/);
  });
  it('fetch by ids (null for missing) and by prefix', async (t) => {
    const movies = client.index('movies');
    const r = await movies.fetch({ ids: ['godfather', 'nope', 'inception'] });
    assert.equal(r.length, 3);
    assert.deepEqual(r[0], { id: 'godfather', content: MOVIES[1].content, metadata: MOVIES[1].metadata });
    assert.equal(r[1], null);
    assert.equal(r[2].id, 'inception');
    const p = await movies.fetch({ prefix: 'go' });
    assert.deepEqual(p.map((d: any) => d.id), ['godfather', 'goodfellas']);
  });
  it('range pages through every document', async (t) => {
    const movies = client.index('movies');
    const seen: string[] = [];
    let cursor = '0';
    let pages = 0;
    do {
      const r = await movies.range({ cursor, limit: 2 });
      pages++;
      for (const d of r.documents) { seen.push(d.id); assert.ok(d.content); }
      cursor = r.nextCursor;
    } while (cursor !== '' && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(seen, MOVIES.map((m) => m.id).sort());
    const pr = await movies.range({ cursor: '0', limit: 10, prefix: 'in' });
    assert.deepEqual(pr.documents.map((d: any) => d.id), ['inception', 'interstellar']);
    assert.equal(pr.nextCursor, '');
  });
  it('info and listIndexes', async (t) => {
    await client.index('other').upsert({ id: 'x', content: { a: 'b' } });
    assert.deepEqual(await client.index('movies').info(), { documentCount: 5, pendingDocumentCount: 0 });
    const all = await client.info();
    assert.equal(all.documentCount, 6);
    assert.equal(all.indexes.other.documentCount, 1);
    assert.ok(all.diskSize > 0);
    const list = await client.listIndexes();
    assert.ok(list.includes('movies') && list.includes('other'));
  });
  it('delete by ids, then reset and deleteIndex', async (t) => {
    const movies = client.index('movies');
    assert.deepEqual(await movies.delete({ ids: ['godfather', 'missing'] }), { deleted: 1 });
    assert.deepEqual(await movies.delete(['goodfellas']), { deleted: 1 });
    assert.equal((await movies.fetch({ ids: ['godfather'] }))[0], null);
    assert.ok(!(await movies.search({ query: 'godfather' })).some((h: any) => h.id === 'godfather'));
    assert.equal((await movies.info()).documentCount, 3);
    assert.equal(await movies.reset(), 'Success');
    assert.equal((await movies.info()).documentCount, 0);
    assert.deepEqual(await movies.search({ query: 'space' }), []);
    assert.equal(await client.index('other').deleteIndex(), 'Success');
    assert.ok(!(await client.listIndexes()).includes('other'));
    await assert.rejects(client.index('other').deleteIndex(), /does not exist/);
  });
  it('the read-only token searches but cannot write', async (t) => {
    await client.index('ro').upsert([{ id: 'a', content: { text: 'read only access' } }]);
    const idx = ro.index('ro');
    assert.equal((await idx.search({ query: 'access' }))[0].id, 'a');
    assert.equal((await idx.fetch({ ids: ['a'] }))[0].id, 'a');
    await assert.rejects(idx.upsert({ id: 'b', content: { text: 'x' } }), /read-only/);
    await assert.rejects(idx.delete(['a']), /read-only/);
    await assert.rejects(idx.reset(), /read-only/);
    await assert.rejects(idx.deleteIndex(), /read-only/);
  });
});
