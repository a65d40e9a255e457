/**
 * JSON documents below the command layer: the serde_json-compatible parser (values, number
 * nature, error texts and positions), the ryu-style number printing, RedisJSON's formatter,
 * and JSONPath evaluation (every selector, filters, legacy paths, syntax errors), including
 * the Upstash order of recursive-descent matches (redis-rest.md §7.3: deeper matches first).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  JFloat, JsonDoc, JsonParseError, cloneValue, formatFloat, parseJson, pathsForDeletion, serialize,
  serializeFormatted, strictEqual, typeName, type JValue,
} from '../../dist/engine/ds/json.js';
import { PathSyntaxError, compile, pathArg, select, selectPaths, splitLast } from '../../dist/engine/ds/jsonpath.js';

const parse = (s: string): JValue => parseJson(Buffer.from(s, 'utf8'));
const roundTrip = (s: string): string => serialize(parse(s));
const get = (doc: string, path: string): string => serialize(select(compile(path), parse(doc)));

function parseError(s: string): string {
  try {
    parse(s);
  } catch (err) {
    assert.ok(err instanceof JsonParseError, `${JSON.stringify(s)} threw ${err}`);
    return err.message;
  }
  assert.fail(`${JSON.stringify(s)} parsed`);
}

function pathError(p: string): string {
  try {
    compile(p);
  } catch (err) {
    assert.ok(err instanceof PathSyntaxError, `${p} threw ${err}`);
    return err.message;
  }
  assert.fail(`${p} compiled`);
}

describe('JSON values', () => {
  it('keeps integers and floats apart, and prints floats as serde_json/ryu do', () => {
    assert.equal(roundTrip('[1, 1.0, -1, -1.5, 0, 0.0, 1e2, 1E2, 2.5e-3]'), '[1,1.0,-1,-1.5,0,0.0,100.0,100.0,0.0025]');
    assert.equal(typeName(parse('1')), 'integer');
    assert.equal(typeName(parse('1.0')), 'number');
    assert.equal(typeName(parse('1e0')), 'number');
    // serde reads "-0" as the float -0.0.
    assert.equal(roundTrip('-0'), '-0.0');
    assert.equal(roundTrip('-0.0'), '-0.0');
  });

  it('prints f64 like ryu: shortest digits, ".0" or an exponent', () => {
    const cases: Array<[number, string]> = [
      [1, '1.0'], [0.1, '0.1'], [100, '100.0'], [1.5, '1.5'], [123.456, '123.456'],
      [1e15, '1000000000000000.0'], [1e16, '1e16'], [1e20, '1e20'], [3e20, '3e20'], [1.25e21, '1.25e21'],
      [1e-4, '0.0001'], [1e-5, '0.00001'], [1e-6, '1e-6'], [1.5e-7, '1.5e-7'], [0.1 + 0.2, '0.30000000000000004'],
      [-2.5, '-2.5'], [5e-324, '5e-324'], [1.7976931348623157e308, '1.7976931348623157e308'],
      [2 ** 53, '9007199254740992.0'], [12345678901234567, '1.2345678901234568e16'], [0, '0.0'], [-0, '-0.0'],
    ];
    for (const [x, want] of cases) assert.equal(formatFloat(x), want, String(x));
  });

  it('keeps integers exact up to u64, and reads larger ones as floats', () => {
    assert.equal(roundTrip('9007199254740993'), '9007199254740993');
    assert.equal(roundTrip('-9223372036854775808'), '-9223372036854775808');
    assert.equal(roundTrip('9223372036854775807'), '9223372036854775807');
    assert.equal(roundTrip('18446744073709551615'), '18446744073709551615');
    assert.equal(typeof parse('9007199254740993'), 'bigint');
    assert.equal(typeof parse('9007199254740991'), 'number');
    // Beyond u64 (or below i64): an f64, as serde_json reads it.
    assert.equal(roundTrip('18446744073709551616'), '1.8446744073709552e19');
    assert.equal(roundTrip('-9223372036854775809'), '-9.223372036854776e18');
    assert.ok(parse('123456789012345678901234567890') instanceof JFloat);
  });

  it('escapes strings as serde_json does and keeps non-ASCII as UTF-8', () => {
    assert.equal(roundTrip('"a\\"b\\\\c\\/d"'), '"a\\"b\\\\c/d"');
    assert.equal(roundTrip('"\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f"'), '"\\b\\f\\n\\r\\t\\u0001\\u001f\u007f"');
    assert.equal(roundTrip('"h\\u00e9llo \\ud83d\\ude00"'), '"héllo 😀"');
    assert.equal(roundTrip('"日本 😀"'), '"日本 😀"');
    assert.equal(parse('"\\u0000"'), '\u0000');
  });

  it('keeps object keys in insertion order; a repeated key keeps its first place', () => {
    assert.equal(roundTrip('{"z":1,"a":2,"m":{"y":1,"b":2}}'), '{"z":1,"a":2,"m":{"y":1,"b":2}}');
    assert.equal(roundTrip('{"a":1,"b":2,"a":3}'), '{"a":3,"b":2}');
    assert.equal(roundTrip(' { } '), '{}');
    assert.equal(roundTrip('[ ]'), '[]');
  });

  it('reports errors with serde_json wording and positions', () => {
    const cases: Array<[string, string]> = [
      ['', 'EOF while parsing a value at line 1 column 0'],
      ['   ', 'EOF while parsing a value at line 1 column 3'],
      ['x', 'expected value at line 1 column 1'],
      ['{', 'EOF while parsing an object at line 1 column 1'],
      ['[', 'EOF while parsing a list at line 1 column 1'],
      ['[1,]', 'trailing comma at line 1 column 4'],
      ['{"a":1,}', 'trailing comma at line 1 column 8'],
      ['[1 2]', 'expected `,` or `]` at line 1 column 4'],
      ['{"a":1 "b":2}', 'expected `,` or `}` at line 1 column 8'],
      ['{"a" 1}', 'expected `:` at line 1 column 6'],
      ['{1:2}', 'key must be a string at line 1 column 2'],
      ['{"a":', 'EOF while parsing a value at line 1 column 5'],
      ['"abc', 'EOF while parsing a string at line 1 column 4'],
      ['"a\u0001"', 'control character (\\u0000-\\u001F) found while parsing a string at line 1 column 3'],
      ['"\\x"', 'invalid escape at line 1 column 3'],
      ['"\\u12"', 'EOF while parsing a string at line 1 column 6'],
      ['"\\uzzzz"', 'invalid escape at line 1 column 7'],
      ['"\\ud83d"', 'unexpected end of hex escape at line 1 column 8'],
      ['"\\ude00"', 'lone leading surrogate in hex escape at line 1 column 7'],
      ['"\\ud83d\\u0041"', 'lone leading surrogate in hex escape at line 1 column 13'],
      ['tru', 'EOF while parsing a value at line 1 column 3'],
      ['trux', 'expected ident at line 1 column 4'],
      ['nul', 'EOF while parsing a value at line 1 column 3'],
      ['01', 'invalid number at line 1 column 2'],
      ['-', 'EOF while parsing a value at line 1 column 1'],
      ['-a', 'invalid number at line 1 column 2'],
      ['1.', 'EOF while parsing a value at line 1 column 2'],
      ['1.a', 'invalid number at line 1 column 3'],
      ['1e', 'EOF while parsing a value at line 1 column 2'],
      ['1e+', 'EOF while parsing a value at line 1 column 3'],
      ['1ex', 'invalid number at line 1 column 3'],
      ['1e400', 'number out of range at line 1 column 5'],
      ['1 2', 'trailing characters at line 1 column 3'],
      ['{}x', 'trailing characters at line 1 column 3'],
      ['[\n1,\n]', 'trailing comma at line 3 column 1'],
      ['{\n  "a": x}', 'expected value at line 2 column 8'],
    ];
    for (const [input, want] of cases) assert.equal(parseError(input), want, JSON.stringify(input));
    assert.equal(roundTrip('1e-400'), '0.0');
  });

  it('refuses the 128th nested container (serde_json recursion limit)', () => {
    assert.equal(roundTrip('['.repeat(127) + ']'.repeat(127)).length, 254);
    assert.equal(parseError('['.repeat(128) + ']'.repeat(128)), 'recursion limit exceeded at line 1 column 128');
    assert.equal(parseError('{"a":'.repeat(128) + '1' + '}'.repeat(128)), 'recursion limit exceeded at line 1 column 636');
  });

  it('formats with INDENT, NEWLINE and SPACE like RedisJSON\'s formatter', () => {
    const v = parse('[{"a":1,"b":[]},3,{}]');
    assert.equal(serializeFormatted(v, { indent: '_', newline: '', space: '' }), '[_{__"a":1,__"b":[]_},_3,_{}]');
    assert.equal(serializeFormatted(v, { indent: '', newline: 'n', space: '' }), '[n{n"a":1,n"b":[]n},n3,n{}n]');
    assert.equal(serializeFormatted(v, { indent: '', newline: '', space: 's' }), '[{"a":s1,"b":s[]},3,{}]');
    assert.equal(
      serializeFormatted(parse('{"a":[1,2],"b":{"c":null}}'), { indent: '  ', newline: '\n', space: ' ' }),
      '{\n  "a": [\n    1,\n    2\n  ],\n  "b": {\n    "c": null\n  }\n}',
    );
    assert.equal(serializeFormatted(parse('"x"'), { indent: '\t', newline: '\n', space: ' ' }), '"x"');
  });

  it('compares values the way ARRINDEX does: same type, same content', () => {
    assert.ok(strictEqual(parse('{"a":[1,{"b":null}],"c":"x"}'), parse('{"c":"x","a":[1,{"b":null}]}')));
    assert.ok(!strictEqual(parse('1'), parse('1.0')));
    assert.ok(strictEqual(parse('9007199254740993'), parse('9007199254740993')));
    assert.ok(!strictEqual(parse('[1]'), parse('[1,2]')));
    assert.ok(!strictEqual(parse('"1"'), parse('1')));
  });

  it('clones deeply; the document value reports encoding "raw"', () => {
    const v = parse('{"a":[1,{"b":2}]}');
    const c = cloneValue(v);
    assert.equal(serialize(c), serialize(v));
    ((c as Map<string, JValue>).get('a') as JValue[]).push(3);
    assert.equal(serialize(v), '{"a":[1,{"b":2}]}');
    const doc = new JsonDoc(v);
    assert.equal(doc.encoding(), 'raw');
    assert.equal(serialize(doc.clone().root), serialize(v));
    assert.notEqual(doc.clone().root, v);
  });

  it('orders deletions: nested locations dropped, higher array indexes first', () => {
    assert.deepEqual(pathsForDeletion([['a'], ['a', 'b'], ['c', 0], ['c', 2], ['c', 1], ['c', 2]]), [['a'], ['c', 2], ['c', 1], ['c', 0]]);
  });
});

describe('JSONPath selectors', () => {
  const doc = '{"a":{"b":[10,20,30,40,50]},"c":"x","d":[{"e":1},{"e":2}],"f":{"g":{"h":true}},"k l":1,"q\\"":2}';

  it('selects keys, indexes, unions, wildcards and slices', () => {
    const cases: Array<[string, string]> = [
      ['$', `[${serialize(parse(doc))}]`],
      ['$.c', '["x"]'], ['$c', '["x"]'], ['$["c"]', '["x"]'], ["$['c']", '["x"]'], ['$.["c"]', '["x"]'],
      ['$["k l"]', '[1]'], ['$["q\\""]', '[2]'], ['$["c","k l"]', '["x",1]'],
      ['$.a.b[0]', '[10]'], ['$.a.b[-1]', '[50]'], ['$.a.b[4]', '[50]'], ['$.a.b[5]', '[]'],
      // RedisJSON clamps a negative index beyond the start to the first element.
      ['$.a.b[-10]', '[10]'],
      ['$.a.b[0,2,0]', '[10,30,10]'], ['$.a.b[1:3]', '[20,30]'], ['$.a.b[:2]', '[10,20]'], ['$.a.b[3:]', '[40,50]'],
      ['$.a.b[::2]', '[10,30,50]'], ['$.a.b[1::2]', '[20,40]'], ['$.a.b[-2:]', '[40,50]'], ['$.a.b[:-3]', '[10,20]'],
      ['$.a.b[:]', '[10,20,30,40,50]'], ['$.a.b[3:1]', '[]'], ['$.a.b[*]', '[10,20,30,40,50]'],
      ['$.d[*].e', '[1,2]'], ['$.d.*.e', '[1,2]'], ['$.f.*', '[{"h":true}]'], ['$.f.*.*', '[true]'],
      ['$.a.b.0', '[]'], ['$.c[0]', '[]'], ['$.c.*', '[]'], ['$.zz', '[]'], ['$.zz.yy', '[]'],
      // Implicit single spaces between tokens (pest WHITESPACE).
      ['$ .a .b[ 1 , 2 ]', '[20,30]'], ['$. c', '["x"]'],
    ];
    for (const [p, want] of cases) assert.equal(get(doc, p), want, p);
  });

  it('drops leading spaces inside quoted keys (pest skips before the string body)', () => {
    assert.equal(get('{"a":1,"a ":2}', '$[" a"]'), '[1]');
    assert.equal(get('{"a":1,"a ":2}', '$["a "]'), '[2]');
  });

  it('rewrites legacy paths and reports them as legacy', () => {
    assert.deepEqual(pathArg('.'), { original: '.', fixed: '$', legacy: true });
    assert.deepEqual(pathArg('.a.b'), { original: '.a.b', fixed: '$.a.b', legacy: true });
    assert.deepEqual(pathArg('a[0]'), { original: 'a[0]', fixed: '$.a[0]', legacy: true });
    assert.deepEqual(pathArg('$.a'), { original: '$.a', fixed: '$.a', legacy: false });
    assert.equal(get(doc, pathArg('a.b[1]').fixed), '[20]');
    assert.equal(get(doc, pathArg('["a"]["b"][2]').fixed), '[30]');
    assert.equal(get(doc, pathArg("['d'][1].e").fixed), '[2]');
  });

  it('gives concrete locations for updates', () => {
    const v = parse(doc);
    assert.deepEqual(selectPaths(compile('$.d[*].e'), v).map((m) => m.path), [['d', 0, 'e'], ['d', 1, 'e']]);
    assert.deepEqual(selectPaths(compile('$.a.b[-1]'), v).map((m) => m.path), [['a', 'b', 4]]);
    assert.deepEqual(selectPaths(compile('$'), v).map((m) => m.path), [[]]);
    assert.deepEqual(selectPaths(compile('$.f[?(@.h==true)]'), v).map((m) => m.path), [['f', 'g']]);
  });

  it('knows static paths and splits the last step (JSON.SET adding a member)', () => {
    assert.ok(compile('$.a.b[0]').isStatic);
    assert.ok(compile('$["a"]').isStatic);
    assert.ok(!compile('$["a","b"]').isStatic);
    assert.ok(!compile('$..a').isStatic);
    assert.ok(!compile('$.a[0,1]').isStatic);
    assert.ok(!compile('$.a[0:1]').isStatic);
    assert.ok(!compile('$.*').isStatic);
    assert.deepEqual(splitLast(compile('$.a.b'))?.last, { key: 'b' });
    assert.deepEqual(splitLast(compile('$.a[3]'))?.last, { index: '3' });
    assert.equal(splitLast(compile('$')), null);
  });
});

describe('JSONPath recursive descent (Upstash order: deeper matches first)', () => {
  it('matches the Upstash SDK expectations', () => {
    // redis-rest.md §7.3, from the SDK's json_get / json_mget / json_objlen tests.
    const d = '{"a":2,"b":3,"nested":{"a":4,"b":null}}';
    assert.equal(get(d, '$..b'), '[null,3]');
    assert.equal(get(d, '$..a'), '[4,2]');
    assert.equal(get('{"a":1,"b":2,"nested":{"a":3},"c":null}', '$..a'), '[3,1]');
    assert.equal(get('{"a":4,"b":5,"nested":{"a":6},"c":null}', '$..a'), '[6,4]');
    const objlen = select(compile('$..a'), parse('{"a":[3],"nested":{"a":{"b":2,"c":1}}}'))
      .map((v) => (v instanceof Map ? v.size : null));
    assert.deepEqual(objlen, [2, null]);
  });

  it('walks post-order: each child subtree, then the node itself', () => {
    const d = '{"x":{"a":1,"z":{"a":5}},"y":[{"a":2}],"a":0}';
    assert.equal(get(d, '$..a'), '[5,1,2,0]');
    assert.equal(get('{"a":{"b":1}}', '$..*'), '[1,{"b":1}]');
    assert.equal(get('[[1,[2]],[3]]', '$..[0]'), '[2,1,3,[1,[2]]]');
    assert.equal(get('{"a":[{"b":1},{"b":2}]}', '$..[?(@.b>1)].b'), '[2]');
    assert.equal(get('{"a":{"a":{"a":1}}}', '$..a'), '[1,{"a":1},{"a":{"a":1}}]');
    assert.equal(get('{"a":{"b":{"c":1}}}', '$.a..c'), '[1]');
    assert.equal(get('{"a":1}', '$..zz'), '[]');
    assert.equal(get('5', '$..*'), '[]');
  });

  it('gives locations in the same order', () => {
    const m = selectPaths(compile('$..a'), parse('{"a":2,"nested":{"a":4}}'));
    assert.deepEqual(m.map((x) => x.path), [['nested', 'a'], ['a']]);
  });
});

describe('JSONPath filters', () => {
  const store = '{"items":[' +
    '{"id":1,"name":"Noise-cancelling headphones","price":99.98,"stock":25,"wireless":true,"tags":["a"]},' +
    '{"id":2,"name":"Wireless earbuds","price":64.99,"stock":17,"wireless":true,"pat":"^wire"},' +
    '{"id":3,"name":"USB-C keyboard","price":30,"stock":30,"wireless":false,"rating":null}' +
    '],"limit":50}';
  const ids = (filter: string) => get(store, `$.items[?(${filter})].id`);

  it('compares with ==, !=, <, <=, >, >=', () => {
    assert.equal(ids('@.price<70'), '[2,3]');
    assert.equal(ids('@.price<=30'), '[3]');
    assert.equal(ids('@.price>64.99'), '[1]');
    assert.equal(ids('@.price>=64.99'), '[1,2]');
    assert.equal(ids('@.id==2'), '[2]');
    assert.equal(ids('@.id!=2'), '[1,3]');
    // Integers and floats compare by value.
    assert.equal(ids('@.price==30.0'), '[3]');
    assert.equal(ids('@.stock==30'), '[3]');
    assert.equal(ids('@.wireless==true'), '[1,2]');
    assert.equal(ids('@.wireless==false'), '[3]');
    assert.equal(ids('@.name=="Wireless earbuds"'), '[2]');
    assert.equal(ids("@.name=='Wireless earbuds'"), '[2]');
    assert.equal(ids('@.name>"V"'), '[2]');
    assert.equal(ids('@.rating==null'), '[3]');
    assert.equal(ids('@.price == 99.98'), '[1]');
  });

  it('treats values of different kinds as not comparable (false, and != is true)', () => {
    assert.equal(ids('@.name>1'), '[]');
    assert.equal(ids('@.id=="1"'), '[]');
    assert.equal(ids('@.tags==1'), '[]');
    assert.equal(ids('@.missing==1'), '[]');
    assert.equal(ids('@.missing!=1'), '[1,2,3]');
    assert.equal(ids('@.tags>0'), '[]');
  });

  it('combines with && and || (&& binds tighter) and parentheses', () => {
    assert.equal(ids('@.price<70&&@.wireless==true'), '[2]');
    assert.equal(ids('@.id==1||@.id==3'), '[1,3]');
    assert.equal(ids('@.id==1 || @.id==2 && @.wireless==false'), '[1]');
    assert.equal(ids('(@.id==1 || @.id==2) && @.wireless==true'), '[1,2]');
    assert.equal(ids('@.id==3 || @.id==2 && @.stock==17 || @.id==1'), '[1,2,3]');
    assert.equal(ids('@.id>0 && @.id<3 && @.stock>20'), '[1]');
  });

  it('tests existence with a lone term, and refers to the root with $', () => {
    assert.equal(ids('@.tags'), '[1]');
    assert.equal(ids('@.rating'), '[3]');
    assert.equal(ids('@.price<$.limit'), '[3]');
    assert.equal(ids('@'), '[1,2,3]');
    assert.equal(get('[1,5,3]', '$[?(@>2)]'), '[5,3]');
    assert.equal(get('[1,"a",null,true]', '$[?(@==null)]'), '[null]');
  });

  it('matches regular expressions with =~ (unanchored, (?i) flag, pattern from a value)', () => {
    assert.equal(ids('@.name =~ "(?i)usb"'), '[3]');
    assert.equal(ids('@.name =~ "usb"'), '[]');
    assert.equal(ids('@.name =~ "^Wire"'), '[2]');
    assert.equal(ids('@.name =~ "board$"'), '[3]');
    assert.equal(ids('@.name =~ @.pat'), '[]');
    assert.equal(get('[{"s":"wireless","p":"^wire"},{"s":"x","p":"^wire"}]', '$[?(@.s =~ @.p)].s'), '["wireless"]');
    assert.equal(ids('@.price =~ "9"'), '[]');
    // An invalid pattern matches nothing.
    assert.equal(ids('@.name =~ "(("'), '[]');
  });

  it('filters object values and scalars too', () => {
    assert.equal(get('{"a":{"x":1},"b":{"x":2}}', '$[?(@.x>1)]'), '[{"x":2}]');
    assert.equal(get('{"a":5}', '$.a[?(@>1)]'), '[5]');
    assert.equal(get('{"a":5}', '$.a[?(@>9)]'), '[]');
  });
});

describe('JSONPath syntax errors (RedisJSON / pest wording)', () => {
  it('reports the position and what was expected', () => {
    assert.equal(pathError('$.a['), `Error occurred on position 4, "$.a[ <<<<----", expected one of the following: '<string>[,<string>,...]', '<number>', ['start:end:steps'], '*'.`);
    assert.equal(pathError('$a b'), `Error occurred on position 3, "$a  ---->>>> b", expected one of the following: EOI, '..'.`);
    assert.equal(pathError('$.a[1'), `Error occurred on position 4, "$.a[ ---->>>> 1", expected one of the following: ['start:end:steps'].`);
    assert.equal(pathError('$.'), `Error occurred on position 2, "$. <<<<----", expected one of the following: <string>, '*'.`);
    assert.match(pathError('x'), /^Error occurred on position 0, "x <<<<----"|^Error occurred on position 0, " ---->>>> x"/);
  });

  it('counts positions in bytes', () => {
    assert.match(pathError('$["é"]x'), /^Error occurred on position 7, "\$\["é"\] ---->>>> x"/);
  });

  it('accepts what the grammar accepts', () => {
    for (const p of ['$', '$.a', '$..a', '$.*', '$[*]', '$..*', '$..[0]', '$.a[?(@.b)]', '$.a[?@.b==1]', '$.a[?(@.b=~"x")]',
      '$.a[-1]', '$.a[1:2:3]', '$.a[1:2:]', '$.a[::3]', '$["a","b"]', "$['a']", '$.a-b_c:d', '$.$x', '$.a[?(@.x==null)]', '$$']) {
      assert.doesNotThrow(() => compile(p), p);
    }
    for (const p of ['$.', '$..', '$[', '$[01]', '$.a[?()]', '$.a[1:2:0]', '$.a b', '$.é', '$.a[?(@.b=1)]']) {
      assert.throws(() => compile(p), PathSyntaxError, p);
    }
  });
});
