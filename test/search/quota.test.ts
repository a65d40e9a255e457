/**
 * Plan quotas (with the plan table overridden by options): writes and reads per request,
 * document count, daily queries and updates, queries and writes per second. Then the worker
 * pool: Redis commands keep answering quickly while a large search query runs.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startSearch, tempDir, createIndex, dataCall, api, EMAIL, API_KEY, type SearchProc } from './helpers.js';
import { RawClient } from '../helpers/resp-client.js';
import { MAIN } from '../helpers/server.js';
import { spawnSync } from 'node:child_process';

let dir: string;
let srv: SearchProc;

before(async () => {
  dir = tempDir();
  srv = await startSearch(dir, ['--account-email', EMAIL, '--api-key', API_KEY,
    '--search-plan-free', 'max_writes_per_request=2,max_reads_per_request=4,max_vector_count=3,max_daily_queries=3,max_daily_updates=4,max_monthly_bandwidth=100000',
    '--search-plan-payg', 'max_query_per_second=2,max_writes_per_second=3,max_writes_per_request=-1,max_reads_per_request=-1']);
});
after(async () => {
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const doc = (id: string) => ({ id, content: { text: `document ${id}` } });

describe('quotas', () => {
  it('a bad plan override stops the start with a clear message', () => {
    const d = tempDir();
    try {
      for (const [spec, re] of [['max_daily_queries=x', /max_daily_queries needs an integer >= -1/], ['nope=1', /unknown search plan field 'nope=1'/]] as const) {
        const r = spawnSync(process.execPath, [MAIN, '--port', '0', '--http-port', '0', '--dir', d, '--search-plan-free', spec], { encoding: 'utf8', timeout: 15000 });
        assert.notEqual(r.status, 0);
        assert.match(r.stderr, re);
      }
    } finally {
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
  it('the index object shows the overridden plan', async () => {
    const idx = await createIndex(srv.base, 'shown', 'free');
    assert.equal(idx.max_writes_per_request, 2);
    assert.equal(idx.max_vector_count, 3);
    assert.equal(idx.max_query_per_second, 1000); // not overridden: the default
  });
  it('per request, document count and per day (free plan)', async () => {
    const idx = await createIndex(srv.base, 'free-one', 'free');
    const call = (p: string, b: unknown) => dataCall(idx.endpoint, idx.token, p, b);
    let r = await call('upsert-data/n', [doc('1'), doc('2'), doc('3')]);
    assert.equal(r.status, 400);
    assert.match(r.body.error, /max_writes_per_request 2/);
    assert.equal((await call('upsert-data/n', [doc('1'), doc('2')])).status, 200);
    assert.equal((await call('upsert-data/n', [doc('3')])).status, 200);
    r = await call('upsert-data/n', [doc('4')]);
    assert.equal(r.status, 400);
    assert.match(r.body.error, /max document count.*allows 3/);
    assert.equal((await call('upsert-data/n', [doc('3')])).status, 200); // an overwrite adds nothing: allowed
    r = await call('upsert-data/n', [doc('2')]);
    assert.equal(r.status, 429);
    assert.match(r.body.error, /daily update limit.*4/);
    r = await call('fetch/n', { ids: ['1', '2', '3', '4', '5'] });
    assert.equal(r.status, 400);
    assert.match(r.body.error, /max_reads_per_request 4/);
    r = await call('search/n', { query: 'document', topK: 5 });
    assert.equal(r.status, 400);
    assert.match(r.body.error, /topK 5.*max_reads_per_request 4/);
    for (let i = 0; i < 3; i++) assert.equal((await call('search/n', { query: 'document', topK: 4 })).status, 200);
    r = await call('search/n', { query: 'document', topK: 4 });
    assert.equal(r.status, 429);
    assert.match(r.body.error, /daily query limit: max_daily_queries is 3/);
    const st = (await api(srv.base, 'GET', `/v2/search/${idx.id}/stats`)).body;
    assert.equal(st.daily_query_count, 3); // refused requests are not counted
    assert.equal(st.daily_update_count, 4);
  });
  it('monthly bandwidth (free plan)', async () => {
    const idx = await createIndex(srv.base, 'free-bw', 'free');
    const big = { id: 'big', content: { text: 'x'.repeat(60_000) } };
    assert.equal((await dataCall(idx.endpoint, idx.token, 'upsert-data/n', [big])).status, 200);
    assert.equal((await dataCall(idx.endpoint, idx.token, 'upsert-data/n', [big])).status, 200);
    const r = await dataCall(idx.endpoint, idx.token, 'search/n', { query: 'x', topK: 1 });
    assert.equal(r.status, 429);
    assert.match(r.body.error, /monthly bandwidth limit: max_monthly_bandwidth is 100000 bytes/);
  });
  it('per second (payg plan)', async () => {
    const idx = await createIndex(srv.base, 'payg-rate', 'payg');
    const call = (p: string, b: unknown) => dataCall(idx.endpoint, idx.token, p, b);
    // Align to the start of a second so that the burst falls within one.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    const w = await Promise.all([call('upsert-data/n', [doc('a'), doc('b')]), call('upsert-data/n', [doc('c'), doc('d')])]);
    assert.deepEqual(w.map((x) => x.status).sort(), [200, 429]);
    assert.match(w.find((x) => x.status === 429)!.body.error, /write rate limit: max_writes_per_second is 3/);
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    const q = await Promise.all([1, 2, 3, 4].map(() => call('search/n', { query: 'document', topK: 2 })));
    assert.deepEqual(q.map((x) => x.status).sort(), [200, 200, 429, 429]);
    assert.match(q.find((x) => x.status === 429)!.body.error, /query rate limit: max_query_per_second is 2/);
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    assert.equal((await call('search/n', { query: 'document', topK: 2 })).status, 200); // a new second
  });
});

describe('worker pool', () => {
  it('Redis commands keep answering quickly while a large query runs', async (t) => {
    const d2 = tempDir();
    const s2 = await startSearch(d2, ['--account-email', EMAIL, '--api-key', API_KEY,
      '--search-plan-payg', 'max_writes_per_second=-1,max_writes_per_request=-1,max_reads_per_request=-1']);
    const redis = await RawClient.connect(s2.port);
    try {
      const idx = await createIndex(s2.base, 'big', 'payg');
      const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'kappa', 'lambda', 'sigma', 'omega', 'orion', 'vega', 'lyra'];
      const N = 40000;
      for (let start = 0; start < N; start += 10000) {
        const batch = [];
        for (let i = start; i < start + 10000; i++) {
          const text = Array.from({ length: 12 }, (_, k) => words[(i * 7 + k * 13 + (i >> k)) % words.length] + ((i + k) % 50)).join(' ');
          batch.push({ id: `doc-${i}`, content: { text }, metadata: { n: i } });
        }
        assert.equal((await dataCall(idx.endpoint, idx.token, 'upsert-data/big', batch)).status, 200);
      }
      assert.equal((await redis.call('SET', 'k', 'v')).toString(), '+OK\r\n');
      // The first query after the writes rebuilds the namespace's text index in a worker, then
      // scores every document: a long query. Measure Redis round trips while it runs.
      const t0 = performance.now();
      let done = false;
      const query = dataCall(idx.endpoint, idx.token, 'search/big', { query: 'alph bet gama delt epsilon zeta theta kappa lambda sigma omega orion vega lyra', topK: 1000, filter: '@metadata.n >= 0' })
        .then((r) => { done = true; return r; });
      const lat: number[] = [];
      while (!done) {
        const s = performance.now();
        const reply = await redis.call('GET', 'k');
        lat.push(performance.now() - s);
        assert.equal(reply.toString(), '$1\r\nv\r\n');
      }
      const r = await query;
      const queryMs = performance.now() - t0;
      assert.equal(r.status, 200);
      assert.equal(r.body.result.length, 1000);
      lat.sort((a, b) => a - b);
      const max = lat[lat.length - 1];
      t.diagnostic(`query ${queryMs.toFixed(0)} ms; ${lat.length} GETs meanwhile, p50 ${lat[lat.length >> 1].toFixed(2)} ms, max ${max.toFixed(2)} ms`);
      assert.ok(queryMs > 150, `the query should be long enough to matter (${queryMs.toFixed(0)} ms)`);
      assert.ok(lat.length > 20, `Redis answered only ${lat.length} GETs during a ${queryMs.toFixed(0)} ms query`);
      assert.ok(max < Math.max(50, queryMs / 4), `a GET took ${max.toFixed(1)} ms during a ${queryMs.toFixed(0)} ms query`);
    } finally {
      redis.close();
      await s2.stop();
      fs.rmSync(d2, { recursive: true, force: true });
    }
  });
});
