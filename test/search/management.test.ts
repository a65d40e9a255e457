/**
 * The search management API (/v2/search...) through plain fetch: every endpoint, Basic auth,
 * validation errors, unknown ids, token rotation, stats, and persistence across a restart.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startSearch, tempDir, api, basic, dataCall, createIndex, EMAIL, type SearchProc } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIME_TEXT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \+0000 UTC$/;
const FIELDS = ['customer_id', 'id', 'name', 'endpoint', 'type', 'region', 'vercel_email', 'token', 'read_only_token',
  'max_vector_count', 'max_monthly_reranks', 'max_daily_updates', 'max_daily_queries', 'max_monthly_bandwidth',
  'max_writes_per_second', 'max_query_per_second', 'max_reads_per_request', 'max_writes_per_request',
  'creation_time', 'input_enrichment_enabled', 'throughput_vector'];

let dir: string;
let srv: SearchProc;

before(async () => {
  dir = tempDir();
  srv = await startSearch(dir);
});
after(async () => {
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('Basic auth', () => {
  it('refuses missing, malformed and wrong credentials with 401', async () => {
    for (const auth of [null, 'Bearer x', 'Basic !!!', basic(EMAIL, 'wrong'), basic('other@example.com', 'test-api-key-0123456789')]) {
      const r = await api(srv.base, 'GET', '/v2/search', undefined, auth);
      assert.equal(r.status, 401, String(auth));
      assert.equal(typeof r.body.error, 'string');
    }
    const s = await api(srv.base, 'GET', '/v2/search/stats', undefined, null);
    assert.equal(s.status, 401);
  });
  it('accepts the configured account', async () => {
    const r = await api(srv.base, 'GET', '/v2/search');
    assert.equal(r.status, 200);
    assert.ok(Array.isArray(r.body));
  });
});

describe('create', () => {
  it('returns a complete SearchIndex object with working tokens', async () => {
    const before = Math.floor(Date.now() / 1000);
    const idx = await createIndex(srv.base, 'products', 'free');
    assert.deepEqual(Object.keys(idx).sort(), [...FIELDS].sort());
    assert.match(idx.id, UUID);
    assert.equal(idx.customer_id, EMAIL);
    assert.equal(idx.name, 'products');
    assert.equal(idx.type, 'free');
    assert.equal(idx.region, 'eu-west-1');
    assert.equal(idx.vercel_email, '');
    assert.equal(idx.endpoint, `${srv.base}/v2/search-data/${idx.id}`);
    assert.ok(idx.creation_time >= before && idx.creation_time <= before + 5);
    assert.equal(idx.max_vector_count, 10000);
    assert.equal(idx.max_daily_queries, 10000);
    assert.equal(idx.input_enrichment_enabled, false);
    assert.equal(idx.throughput_vector.length, 60);
    for (const p of idx.throughput_vector) { assert.match(p.x, TIME_TEXT); assert.equal(p.y, 0); }
    assert.notEqual(idx.token, idx.read_only_token);
    const info = await dataCall(idx.endpoint, idx.token, 'info');
    assert.equal(info.status, 200);
    assert.equal(info.body.result.vectorCount, 0);
    const ro = await dataCall(idx.endpoint, idx.read_only_token, 'info');
    assert.equal(ro.status, 200);
    const payg = await createIndex(srv.base, 'payg-one', 'payg');
    assert.equal(payg.max_daily_queries, -1);
    assert.equal(payg.max_vector_count, 2000000);
  });
  it('validates the body: 400 with a clear error', async () => {
    const cases: [unknown, RegExp][] = [
      [undefined, /body/],
      ['not json', /JSON/],
      [[1, 2], /object/],
      [{ region: 'eu-west-1', type: 'free' }, /name is required/],
      [{ name: 'x', type: 'free' }, /region is required/],
      [{ name: 'x', region: 'eu-west-1' }, /type is required/],
      [{ name: 5, region: 'eu-west-1', type: 'free' }, /name must be a string/],
      [{ name: 'x', region: 7, type: 'free' }, /region must be a string/],
      [{ name: '', region: 'eu-west-1', type: 'free' }, /name must not be empty/],
      [{ name: 'x', region: 'mars-1', type: 'free' }, /invalid region 'mars-1'/],
      [{ name: 'x', region: 'us-central1', type: 'gold' }, /invalid type 'gold'/],
      [{ name: 'x', region: 'us-central1', type: 'fixed' }, /fixed' is not available/],
      [{ name: 'products', region: 'us-central1', type: 'payg' }, /already exists/],
    ];
    for (const [body, re] of cases) {
      const r = await api(srv.base, 'POST', '/v2/search', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.error, re, JSON.stringify(body));
    }
  });
});

describe('get, list, rename, delete', () => {
  it('GET /v2/search/{id} and the list return the index; unknown ids are 404', async () => {
    const idx = await createIndex(srv.base, 'getme');
    const g = await api(srv.base, 'GET', `/v2/search/${idx.id}`);
    assert.equal(g.status, 200);
    assert.equal(g.body.id, idx.id);
    assert.equal(g.body.token, idx.token);
    const l = await api(srv.base, 'GET', '/v2/search');
    assert.ok(l.body.some((x: any) => x.id === idx.id && x.name === 'getme'));
    for (const [m, p] of [['GET', ''], ['DELETE', ''], ['POST', '/rename'], ['POST', '/reset-password'], ['GET', '/stats']]) {
      const r = await api(srv.base, m, `/v2/search/00000000-0000-4000-8000-000000000000${p}`, m === 'POST' ? { name: 'z' } : undefined);
      assert.equal(r.status, 404, `${m} ${p}`);
      assert.match(r.body.error, /not found/);
    }
  });
  it('rename answers "OK" as a JSON string and validates the name', async () => {
    const idx = await createIndex(srv.base, 'old-name');
    const r = await api(srv.base, 'POST', `/v2/search/${idx.id}/rename`, { name: 'new-name' });
    assert.equal(r.status, 200);
    assert.equal(r.text, '"OK"');
    assert.equal((await api(srv.base, 'GET', `/v2/search/${idx.id}`)).body.name, 'new-name');
    assert.equal((await api(srv.base, 'POST', `/v2/search/${idx.id}/rename`, {})).status, 400);
    assert.equal((await api(srv.base, 'POST', `/v2/search/${idx.id}/rename`, { name: 3 })).status, 400);
    const dup = await api(srv.base, 'POST', `/v2/search/${idx.id}/rename`, { name: 'getme' });
    assert.equal(dup.status, 400);
    assert.match(dup.body.error, /already exists/);
    assert.equal((await api(srv.base, 'GET', `/v2/search/${idx.id}/rename`)).status, 405);
  });
  it('reset-password issues new tokens; the old ones stop working at once', async () => {
    const idx = await createIndex(srv.base, 'rotate');
    const r = await api(srv.base, 'POST', `/v2/search/${idx.id}/reset-password`);
    assert.equal(r.status, 200);
    assert.equal(r.text, '"OK"');
    const now = (await api(srv.base, 'GET', `/v2/search/${idx.id}`)).body;
    assert.notEqual(now.token, idx.token);
    assert.notEqual(now.read_only_token, idx.read_only_token);
    assert.equal((await dataCall(idx.endpoint, idx.token, 'info')).status, 401);
    assert.equal((await dataCall(idx.endpoint, idx.read_only_token, 'info')).status, 401);
    assert.equal((await dataCall(idx.endpoint, now.token, 'info')).status, 200);
    assert.equal((await dataCall(idx.endpoint, now.read_only_token, 'info')).status, 200);
  });
  it('DELETE removes the index, its data and its tokens', async () => {
    const idx = await createIndex(srv.base, 'doomed');
    await dataCall(idx.endpoint, idx.token, 'upsert-data/ns', [{ id: 'a', content: { t: 'x' } }]);
    const r = await api(srv.base, 'DELETE', `/v2/search/${idx.id}`);
    assert.equal(r.status, 200);
    assert.equal(r.text, '"OK"');
    assert.equal((await api(srv.base, 'GET', `/v2/search/${idx.id}`)).status, 404);
    assert.equal((await dataCall(idx.endpoint, idx.token, 'info')).status, 404);
    assert.ok(!(await api(srv.base, 'GET', '/v2/search')).body.some((x: any) => x.id === idx.id));
    // the name is free again
    await createIndex(srv.base, 'doomed');
  });
  it('tokens of one index do not open another', async () => {
    const a = await createIndex(srv.base, 'iso-a');
    const b = await createIndex(srv.base, 'iso-b');
    assert.equal((await dataCall(b.endpoint, a.token, 'info')).status, 401);
  });
});

describe('stats', () => {
  it('per-index stats count the requests the index served', async () => {
    const idx = await createIndex(srv.base, 'counted');
    await dataCall(idx.endpoint, idx.token, 'upsert-data/n', [{ id: '1', content: { t: 'hello world' } }, { id: '2', content: { t: 'hello there' } }]);
    for (let i = 0; i < 3; i++) await dataCall(idx.endpoint, idx.token, 'search/n', { query: 'hello', topK: 5 });
    const r = await api(srv.base, 'GET', `/v2/search/${idx.id}/stats`);
    assert.equal(r.status, 200);
    const s = r.body;
    assert.equal(s.current_vector_count, 2);
    assert.equal(s.daily_query_count, 3);
    assert.equal(s.daily_update_count, 2); // documents written
    assert.equal(s.monthly_query_count, 3);
    assert.ok(s.monthly_bandwidth_usage > 0);
    assert.ok(s.storage_usage > 0);
    for (const k of ['query_throughput', 'update_throughput', 'query_latency_mean', 'query_latency_99', 'update_latency_mean', 'update_latency_99', 'vector_count', 'data_size']) {
      assert.equal(s[k].length, 60, k);
      assert.match(s[k][0].x, TIME_TEXT);
    }
    assert.equal(s.vector_count[59].y, 2);
    assert.ok(s.query_throughput[59].y > 0);
    assert.ok(s.query_latency_mean[59].y > 0);
    assert.equal(s.daily_query_requests.length, 7);
    assert.equal(s.daily_query_requests[6].y, 3);
    assert.equal(s.days.length, 7);
    const idxNow = (await api(srv.base, 'GET', `/v2/search/${idx.id}`)).body;
    assert.equal(idxNow.throughput_vector[59].y, 5);
    const d30 = await api(srv.base, 'GET', `/v2/search/${idx.id}/stats?period=30d`);
    assert.equal(d30.body.query_throughput.length, 240);
    for (const p of ['3h', '12h', '1d', '3d', '7d']) assert.equal((await api(srv.base, 'GET', `/v2/search/${idx.id}/stats?period=${p}`)).status, 200);
    const bad = await api(srv.base, 'GET', `/v2/search/${idx.id}/stats?period=2h`);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /period/);
  });
  it('global stats sum every index', async () => {
    const r = await api(srv.base, 'GET', '/v2/search/stats');
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ['bandwidth', 'billing', 'record_count', 'request', 'rerank_count', 'storage']);
    assert.ok(r.body.record_count >= 2);
    assert.ok(r.body.request >= 4);
    assert.equal((await api(srv.base, 'POST', '/v2/search/stats')).status, 405);
  });
});

describe('persistence', () => {
  it('indexes, documents, tokens and stats survive a restart', async () => {
    const idx = await createIndex(srv.base, 'durable');
    await dataCall(idx.endpoint, idx.token, 'upsert-data/docs', [{ id: 'k1', content: { title: 'persistent storage engines' }, metadata: { n: 1 } }]);
    await dataCall(idx.endpoint, idx.token, 'search/docs', { query: 'storage', topK: 1 });
    await new Promise((r) => setTimeout(r, 1200)); // stats are flushed every second
    await srv.stop();
    srv = await startSearch(dir);
    const g = await api(srv.base, 'GET', `/v2/search/${idx.id}`);
    assert.equal(g.status, 200);
    assert.equal(g.body.name, 'durable');
    assert.equal(g.body.token, idx.token);
    const endpoint = g.body.endpoint;
    const s = await dataCall(endpoint, idx.token, 'search/docs', { query: 'storage', topK: 1 });
    assert.equal(s.status, 200);
    assert.equal(s.body.result[0].id, 'k1');
    const st = (await api(srv.base, 'GET', `/v2/search/${idx.id}/stats`)).body;
    assert.equal(st.daily_query_count, 2);
    assert.equal(st.current_vector_count, 1);
  });
  it('generated credentials are stored and printed on first start', async () => {
    const d = tempDir();
    const a = await startSearch(d, []);
    try {
      const m = /account e-mail (\S+), API key (\S+)/.exec(a.output());
      assert.ok(m, a.output());
      assert.equal((await api(a.base, 'GET', '/v2/search', undefined, basic(m[1], m[2]))).status, 200);
      await a.stop();
      const b = await startSearch(d, []);
      try {
        assert.equal((await api(b.base, 'GET', '/v2/search', undefined, basic(m[1], m[2]))).status, 200);
        assert.equal((await api(b.base, 'GET', '/v2/search', undefined, basic(m[1], 'nope'))).status, 401);
      } finally {
        await b.stop();
      }
    } finally {
      await a.stop();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
