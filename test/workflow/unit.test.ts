/**
 * Unit tests of the workflow log helpers: trimBody cuts (bytes, multi-byte characters, -1),
 * redaction of bodies and named headers, the newest-first merge of index streams.
 */
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { trimmer, redactor } from '../../dist/qstash/workflow/view.js';
import { mergeDesc } from '../../dist/qstash/workflow/indexes.js';

describe('workflow log helpers', () => {
  it('trimBody: n bytes of UTF-8, never half a character; -1 drops', () => {
    assert.equal(trimmer(-1)('abc'), undefined);
    assert.equal(trimmer(0)('abc'), '');
    assert.equal(trimmer(2)('abc'), 'ab');
    assert.equal(trimmer(10)('abc'), 'abc');
    assert.equal(trimmer(3)('héllo'), 'hé'); // h (1) + é (2)
    assert.equal(trimmer(2)('héllo'), 'h'); // é cut in half: dropped
    assert.equal(trimmer(5)('a😀b'), 'a😀');
    assert.equal(trimmer(4)('a😀b'), 'a');
    assert.equal(trimmer(5)(undefined), undefined);
  });

  it('redaction: bodies and the named headers (any case) as REDACTED:<sha256>', () => {
    const sha = (v: string) => `REDACTED:${crypto.createHash('sha256').update(v).digest('hex')}`;
    const r = redactor({ body: true, header: ['x-secret'] });
    assert.equal(r.body('payload'), sha('payload'));
    assert.equal(r.body(undefined), undefined);
    assert.deepEqual(r.headers({ 'X-Secret': ['a', 'b'], 'x-open': ['o'] }), { 'X-Secret': [sha('a'), sha('b')], 'x-open': ['o'] });
    assert.deepEqual(r.headers({ 'x-secret': 's' }), { 'x-secret': sha('s') });
    const all = redactor({ header: true });
    assert.equal(all.body('payload'), 'payload');
    assert.deepEqual(all.headers({ a: ['1'], b: ['2'] }), { a: [sha('1')], b: [sha('2')] });
    const none = redactor(undefined);
    const h = { a: ['1'] };
    assert.equal(none.headers(h), h);
    assert.equal(none.body('x'), 'x');
  });

  it('mergeDesc: newest first across streams, each key once', () => {
    const a: [number, string][] = [[9, 'b'], [5, 'a'], [1, 'z']];
    const b: [number, string][] = [[9, 'c'], [5, 'a'], [3, 'q']];
    assert.deepEqual([...mergeDesc([a, b])], [[9, 'c'], [9, 'b'], [5, 'a'], [3, 'q'], [1, 'z']]);
    assert.deepEqual([...mergeDesc([[], a])], a);
    assert.deepEqual([...mergeDesc([])], []);
  });
});
