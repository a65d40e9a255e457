/**
 * The text engine without a server: tokenisation, every filter operator and its NOT form,
 * AND/OR precedence and parentheses, filter syntax errors, BM25 ordering and score range.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tokenize, parseFilter, TextIndex, boundedDistance, FilterError, type Doc } from '../../dist/search/text.js';

const doc = (content: any, metadata?: any, id = 'd'): Doc => ({ id, content, metadata });
const D = doc({ title: 'Hello World', n: 5, tags: ['a', 'b'], nested: { x: 'deep' } }, { year: 2001, price: 9.5, ok: true, color: 'red', list: [1, 2] });

describe('tokenize', () => {
  it('lower-cases, splits on non-word characters and folds accents', () => {
    assert.deepEqual(tokenize('Héllo, WORLD! café-au-lait 42x'), ['hello', 'world', 'cafe', 'au', 'lait', '42x']);
    assert.deepEqual(tokenize('  ...  '), []);
  });
  it('bounded edit distance', () => {
    assert.equal(boundedDistance('kitten', 'sitten', 2), 1);
    assert.equal(boundedDistance('kitten', 'sitting', 3), 3);
    assert.equal(boundedDistance('kitten', 'sitting', 2), 3); // more than max: max + 1
    assert.equal(boundedDistance('abc', 'xyz', 1), 2);
  });
});

describe('filters', () => {
  const yes = (f: string) => assert.equal(parseFilter(f)(D), true, f);
  const no = (f: string) => assert.equal(parseFilter(f)(D), false, f);
  it('comparisons on content and @metadata fields', () => {
    yes("title = 'Hello World'"); no("title = 'hello world'");
    yes("title != 'x'"); no("title != 'Hello World'");
    yes('n < 6'); no('n < 5'); yes('n <= 5'); yes('n > 4'); no('n > 5'); yes('n >= 5');
    yes('@metadata.year = 2001'); yes('@metadata.price >= 9.5'); no('@metadata.price > 9.5');
    yes('@metadata.ok = true'); no('@metadata.ok = false');
    yes("nested.x = 'deep'"); yes("tags[1] = 'b'");
    no("missing = 'x'"); no("missing != 'x'"); no('n = \'5\'');
  });
  it('GLOB, IN, CONTAINS and their NOT forms', () => {
    yes("title GLOB 'Hello*'"); no("title GLOB 'hello*'"); yes("title GLOB '?ello [Ww]orld'");
    yes("title NOT GLOB 'Bye*'"); no("title NOT GLOB 'H*'");
    yes("@metadata.color IN ('blue', 'red')"); no("@metadata.color IN ('blue')"); yes('@metadata.year IN (2000, 2001)');
    yes("@metadata.color NOT IN ('blue')"); no("@metadata.color NOT IN ('red')");
    yes("tags CONTAINS 'a'"); no("tags CONTAINS 'z'"); yes('@metadata.list CONTAINS 2');
    yes("tags NOT CONTAINS 'z'"); no("tags NOT CONTAINS 'b'");
    yes('@metadata.year HAS FIELD'); no('@metadata.nope HAS FIELD'); yes('@metadata.nope HAS NOT FIELD');
  });
  it('AND binds tighter than OR; parentheses; case-insensitive keywords', () => {
    yes("n = 1 OR n = 5 AND title = 'Hello World'");
    no("(n = 1 OR n = 5) AND title = 'x'");
    yes("n = 1 or (n = 5 and @metadata.color in ('red'))");
    yes("(((n = 5)))");
  });
  it('syntax errors are FilterErrors with the filter in the message', () => {
    for (const bad of ["title = 'x", 'n ==== 1', '(n = 1', 'n = 1 AND', "n IN 'a'", 'n = 1 n = 2', "n NOT = 'x'", '= 1', 'n ~ 1']) {
      assert.throws(() => parseFilter(bad), (e: unknown) => e instanceof FilterError && (e as Error).message.includes(bad), bad);
    }
  });
});

describe('BM25 index', () => {
  const ix = new TextIndex();
  ix.add(doc({ t: 'the quick brown fox' }, undefined, 'a'));
  ix.add(doc({ t: 'the lazy dog sleeps' }, undefined, 'b'));
  ix.add(doc({ t: 'quick quick quick fox jumps' }, { k: 1 }, 'c'));
  ix.add(doc({ t: 'an unrelated sentence about cooking' }, undefined, 'd'));
  it('ranks by term frequency and rarity, scores within 0..1', () => {
    const r = ix.search('quick fox', 10, null);
    assert.deepEqual(r.map((h) => h.doc.id), ['c', 'a']);
    for (const h of r) assert.ok(h.score > 0 && h.score <= 1);
    const rare = ix.search('cooking', 1, null)[0];
    assert.equal(rare.doc.id, 'd');
  });
  it('topK, filters and prefix expansion', () => {
    assert.equal(ix.search('the', 1, null).length, 1);
    assert.deepEqual(ix.search('fox', 10, parseFilter('@metadata.k = 1')).map((h) => h.doc.id), ['c']);
    assert.deepEqual(ix.search('slee', 10, null).map((h) => h.doc.id), ['b']);
    assert.deepEqual(ix.search('cookng', 10, null).map((h) => h.doc.id), ['d']);
    assert.deepEqual(ix.search('xylophone', 10, null), []);
  });
  it('a word that matches nothing lowers the score of the others', () => {
    const one = ix.search('cooking', 1, null)[0].score;
    const two = ix.search('cooking xylophone', 1, null)[0].score;
    assert.ok(two < one);
  });
});

describe('tombstones', () => {
  it('a removed or replaced document is no longer found; counts follow', () => {
    const ix = new TextIndex();
    ix.add(doc({ t: 'red apple' }, undefined, 'x'));
    ix.add(doc({ t: 'green apple' }, undefined, 'y'));
    assert.equal(ix.size, 2);
    ix.add(doc({ t: 'blue sky' }, undefined, 'x')); // replaces x
    assert.equal(ix.size, 2);
    assert.deepEqual(ix.search('apple', 10, null).map((h) => h.doc.id), ['y']);
    assert.deepEqual(ix.search('sky', 10, null).map((h) => h.doc.id), ['x']);
    ix.remove('y');
    assert.deepEqual(ix.search('apple', 10, null), []);
    assert.deepEqual([...ix.live()].map((d) => d.id), ['x']);
    assert.equal(ix.deadCount, 2);
  });
});
