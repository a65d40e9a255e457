/**
 * Hybrid search with an OpenAI-compatible embedding endpoint (a fake one here: words of the
 * same concept share a dimension, so "car" is close to "automobile" with no word in common):
 * semanticWeight mixes the scores, 0 is full-text only, info() reports the mode, and a failing
 * endpoint makes writes fail with a clear 503. Without an endpoint, info() says lexical.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSearch, tempDir, createIndex, dataCall, EMAIL, API_KEY, type SearchProc } from './helpers.js';

const DIM = 32;
const CONCEPTS: Record<string, number> = { car: 0, automobile: 0, vehicle: 0, sedan: 0, dog: 1, puppy: 1, canine: 1, hound: 1, food: 2, meal: 2, dinner: 2, pizza: 2 };

function embedText(t: string): number[] {
  const v = new Array(DIM).fill(0);
  for (const w of t.toLowerCase().match(/[a-z]+/g) ?? []) {
    const c = CONCEPTS[w];
    if (c !== undefined) v[c] += 1;
    else { let h = 0; for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0; v[8 + (h % (DIM - 8))] += 0.3; }
  }
  return v;
}

let fake: http.Server;
let fakeUrl: string;
let calls = 0;
let auth = '';
let dir: string;
let srv: SearchProc;
let idx: any;
const call = (p: string, b?: unknown) => dataCall(idx.endpoint, idx.token, p, b);

before(async () => {
  fake = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      calls++;
      auth = String(req.headers.authorization ?? '');
      const { input, model } = JSON.parse(body);
      if (model !== 'fake-model') { res.writeHead(400); res.end(JSON.stringify({ error: 'unknown model' })); return; }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: input.map((t: string, index: number) => ({ object: 'embedding', index, embedding: embedText(t) })) }));
    });
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', () => r()));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/v1/embeddings`;
  dir = tempDir();
  srv = await startSearch(dir, ['--account-email', EMAIL, '--api-key', API_KEY, '--search-embedding-url', fakeUrl, '--search-embedding-model', 'fake-model', '--search-embedding-key', 'sk-test']);
  idx = await createIndex(srv.base, 'hybrid');
});
after(async () => {
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  await new Promise((r) => fake.close(r));
});

describe('hybrid search', () => {
  it('finds documents by meaning, weighted by semanticWeight', async () => {
    const before = calls;
    assert.equal((await call('upsert-data/h', [
      { id: 'auto', content: { text: 'a fast red automobile' } },
      { id: 'pup', content: { text: 'a sleepy puppy on the sofa' } },
      { id: 'pizza', content: { text: 'pizza for dinner tonight' } },
    ])).status, 200);
    assert.equal(calls, before + 1); // one batch for the whole upsert
    assert.equal(auth, 'Bearer sk-test');
    const r = await call('search/h', { query: 'car', topK: 3 });
    assert.equal(r.status, 200);
    assert.equal(r.body.result[0].id, 'auto');
    assert.ok(r.body.result[0].score > 0.5 && r.body.result[0].score <= 1);
    assert.equal((await call('search/h', { query: 'canine', topK: 1 })).body.result[0].id, 'pup');
    // semanticWeight 0: full-text only, and "car" is not in any document
    assert.deepEqual((await call('search/h', { query: 'car', semanticWeight: 0 })).body.result, []);
    // a lexical match still counts: "sofa" is only in pup
    const mixed = await call('search/h', { query: 'sofa', semanticWeight: 0.5, topK: 1 });
    assert.equal(mixed.body.result[0].id, 'pup');
    const info = (await call('info', [])).body.result;
    assert.equal(info.searchMode, 'hybrid');
    assert.equal(info.dimension, DIM);
    assert.equal(info.embeddingModel, 'fake-model');
  });
  it('a failing embedding endpoint fails writes and hybrid queries with 503', async () => {
    const d = tempDir();
    const s = await startSearch(d, ['--account-email', EMAIL, '--api-key', API_KEY, '--search-embedding-url', fakeUrl, '--search-embedding-model', 'wrong-model']);
    try {
      const i = await createIndex(s.base, 'broken');
      const r = await dataCall(i.endpoint, i.token, 'upsert-data/x', [{ id: '1', content: { t: 'x' } }]);
      assert.equal(r.status, 503);
      assert.match(r.body.error, /embedding endpoint .* answered 400/);
      assert.equal((await dataCall(i.endpoint, i.token, 'info', [])).body.result.vectorCount, 0);
    } finally {
      await s.stop();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
  it('without an endpoint info() says lexical', async () => {
    const d = tempDir();
    const s = await startSearch(d);
    try {
      const i = await createIndex(s.base, 'plain');
      const info = (await dataCall(i.endpoint, i.token, 'info', [])).body.result;
      assert.equal(info.searchMode, 'lexical');
      assert.equal(info.dimension, 0);
    } finally {
      await s.stop();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
