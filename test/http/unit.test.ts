/**
 * In-process unit tests of the REST building blocks: the JSON reply writer (envelopes, nesting,
 * base64, UTF-8 repair, big integers) and the request decoders (path, query, JSON bodies).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JsonWriter } from '../../dist/http/json-writer.js';
import { CommandList, decodePath, decodeQuery, queryToken, JSON_ERR } from '../../dist/http/parse.js';
import { Argv } from '../../dist/resp/argv.js';

function out(w: JsonWriter): string {
  return w.view().toString('utf8');
}

function args(argv: Argv): Buffer[] {
  const r: Buffer[] = [];
  for (let i = 0; i < argv.count; i++) r.push(Buffer.from(argv.view(i)));
  return r;
}

describe('JsonWriter: single command envelope', () => {
  it('statuses, integers, nil, bulk', () => {
    const w = new JsonWriter();
    w.begin(0, false); w.ok();
    assert.equal(out(w), '{"result":"OK"}');
    w.begin(0, false); w.simple('PONG');
    assert.equal(out(w), '{"result":"PONG"}');
    w.begin(0, false); w.int(-42);
    assert.equal(out(w), '{"result":-42}');
    w.begin(0, false); w.nil();
    assert.equal(out(w), '{"result":null}');
    w.begin(0, false); w.nilArray();
    assert.equal(out(w), '{"result":null}');
    w.begin(0, false); w.bulk(Buffer.from('bar'));
    assert.equal(out(w), '{"result":"bar"}');
    assert.equal(w.itemErrors, 0);
    assert.equal(w.finished, true);
  });

  it('integers beyond 2^53 keep every digit', () => {
    const w = new JsonWriter();
    w.begin(0, false); w.int(9223372036854775807n);
    assert.equal(out(w), '{"result":9223372036854775807}');
    w.begin(0, false); w.int(-9223372036854775808n);
    assert.equal(out(w), '{"result":-9223372036854775808}');
    w.begin(0, false); w.int(9007199254740993n);
    assert.equal(out(w), '{"result":9007199254740993}');
  });

  it('an error is the whole envelope and counts as an item error', () => {
    const w = new JsonWriter();
    w.begin(0, true);
    w.error('ERR wrong number of arguments for \'get\' command');
    assert.equal(out(w), '{"error":"ERR wrong number of arguments for \'get\' command"}');
    assert.equal(w.itemErrors, 1);
    assert.equal(w.items, 1);
  });

  it('nested arrays close themselves, empty arrays and nils inside', () => {
    const w = new JsonWriter();
    w.begin(0, false);
    w.array(4);
    w.bulk(Buffer.from('a'));
    w.array(2); w.int(1); w.array(0);
    w.nil();
    w.array(1); w.array(1); w.simple('x');
    assert.equal(out(w), '{"result":["a",[1,[]],null,[["x"]]]}');
    assert.equal(w.finished, true);
    assert.deepEqual(JSON.parse(out(w)), { result: ['a', [1, []], null, [['x']]] });
  });

  it('an error nested in an array is an {"error"} element', () => {
    const w = new JsonWriter();
    w.begin(0, false);
    w.array(2); w.error('ERR inner'); w.int(3);
    assert.equal(out(w), '{"result":[{"error":"ERR inner"},3]}');
    assert.equal(w.itemErrors, 0);
  });
});

describe('JsonWriter: pipeline and transaction framing', () => {
  it('one item per command, errors in place', () => {
    const w = new JsonWriter();
    w.begin(1, false);
    w.array(4);
    w.ok();
    w.error('ERR value is not an integer or out of range');
    w.array(2); w.bulk(Buffer.from('x')); w.nil();
    w.int(2);
    assert.equal(out(w), '[{"result":"OK"},{"error":"ERR value is not an integer or out of range"},{"result":["x",null]},{"result":2}]');
    assert.equal(w.items, 4);
    assert.equal(w.itemErrors, 1);
    assert.equal(w.topError, false);
  });

  it('an error above the items is a discarded transaction', () => {
    const w = new JsonWriter();
    w.begin(1, false);
    w.error('EXECABORT Transaction discarded because of previous errors.');
    assert.equal(out(w), '{"error":"EXECABORT Transaction discarded because of previous errors."}');
    assert.equal(w.topError, true);
  });

  it('empty EXEC array', () => {
    const w = new JsonWriter();
    w.begin(1, false);
    w.array(0);
    assert.equal(out(w), '[]');
  });
});

describe('JsonWriter: mark/settle keep the JSON well-formed whatever a handler does', () => {
  const BROKEN = '{"error":"ERR internal error: the command did not produce exactly one reply"}';
  it('a good reply is kept', () => {
    const w = new JsonWriter();
    w.begin(1, false); w.array(2);
    w.mark(); w.int(1); w.settle();
    w.mark(); w.array(1); w.nil(); w.settle();
    assert.equal(out(w), '[{"result":1},{"result":[null]}]');
  });
  it('no reply, a partial array or two replies become an error item', () => {
    const w = new JsonWriter();
    w.begin(1, false); w.array(4);
    w.mark(); w.settle();
    w.mark(); w.array(3); w.int(1); w.settle();
    w.mark(); w.ok(); w.ok(); w.settle();
    w.mark(); w.ok(); w.settle();
    assert.equal(out(w), `[${BROKEN},${BROKEN},${BROKEN},{"result":"OK"}]`);
    assert.deepEqual(JSON.parse(out(w)).length, 4);
    w.begin(0, false);
    w.mark(); w.array(2); w.bulk(Buffer.from('x')); w.settle();
    assert.equal(out(w), BROKEN);
    assert.equal(w.itemErrors, 1);
  });
});

describe('JsonWriter: strings', () => {
  it('escapes quotes, backslashes and control characters', () => {
    const w = new JsonWriter();
    const v = Buffer.from('a"b\\c\nd\r\te\x00\x1f\x7f');
    w.begin(0, false); w.bulk(v);
    assert.equal(JSON.parse(out(w)).result, v.toString('latin1'));
  });

  it('valid UTF-8 passes unchanged, invalid sequences become U+FFFD', () => {
    const w = new JsonWriter();
    w.begin(0, false); w.bulk(Buffer.from('héllo 😀 ✓'));
    assert.equal(JSON.parse(out(w)).result, 'héllo 😀 ✓');
    w.begin(0, false); w.bulk(Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x28, 0xed, 0xa0, 0x80]));
    const r = JSON.parse(out(w)).result as string;
    assert.equal(r[0], 'a');
    assert.ok(r.includes('\ufffd'));
    assert.ok(!/[\ud800-\udfff]/.test(r.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '')), 'no lone surrogates');
    // keys and error texts are latin1 byte strings: same repair
    w.begin(0, false); w.bulkLatin1('k\xff');
    assert.equal(JSON.parse(out(w)).result, 'k\ufffd');
    w.begin(0, false); w.error("ERR unknown command '\xc3\xa9'");
    assert.equal(JSON.parse(out(w)).error, "ERR unknown command 'é'");
  });

  it('astral characters are emitted as valid JSON (no \\U escapes)', () => {
    const w = new JsonWriter();
    w.begin(0, false); w.bulkText('𝄞 and 😀');
    assert.equal(JSON.parse(out(w)).result, '𝄞 and 😀');
    assert.ok(!out(w).includes('\\U'));
  });

  it('short and long values, plain or needing escapes at the very end', () => {
    const w = new JsonWriter();
    for (const n of [0, 1, 63, 64, 65, 200, 5000]) {
      for (const tail of ['', '"', '\\', '\n', 'é', '\xff']) {
        const str = 'a'.repeat(n) + tail;
        w.begin(0, false); w.bulk(Buffer.from(str, 'latin1'));
        assert.equal(JSON.parse(out(w)).result, Buffer.from(str, 'latin1').toString('utf8'), `bulk ${n} ${JSON.stringify(tail)}`);
        w.begin(0, false); w.bulkLatin1(str);
        assert.equal(JSON.parse(out(w)).result, Buffer.from(str, 'latin1').toString('utf8'), `latin1 ${n} ${JSON.stringify(tail)}`);
      }
    }
  });

  it('random binary values always give parseable JSON', () => {
    const w = new JsonWriter();
    for (let i = 0; i < 500; i++) {
      const v = Buffer.alloc(i % 40);
      for (let j = 0; j < v.length; j++) v[j] = (Math.random() * 256) | 0;
      w.begin(0, false); w.bulk(v);
      assert.equal(JSON.parse(out(w)).result, v.toString('utf8'));
    }
  });
});

describe('JsonWriter: base64 (Upstash-Encoding)', () => {
  it('encodes every string but an item\'s OK status', () => {
    const w = new JsonWriter();
    w.begin(0, true); w.ok();
    assert.equal(out(w), '{"result":"OK"}');
    w.begin(0, true); w.simple('PONG');
    assert.equal(out(w), '{"result":"UE9ORw=="}');
    w.begin(0, true); w.bulk(Buffer.from('OK')); // a bulk OK is a value, encoded
    assert.equal(out(w), '{"result":"T0s="}');
    w.begin(0, true); w.array(2); w.ok(); w.bulk(Buffer.from('bar')); // a nested OK is encoded
    assert.equal(out(w), '{"result":["T0s=","YmFy"]}');
    w.begin(0, true); w.int(5);
    assert.equal(out(w), '{"result":5}');
    w.begin(0, true); w.nil();
    assert.equal(out(w), '{"result":null}');
    w.begin(0, true); w.error('ERR x');
    assert.equal(out(w), '{"error":"ERR x"}', 'errors are never encoded');
    w.begin(1, true); w.array(2); w.ok(); w.bulk(Buffer.from('v'));
    assert.equal(out(w), '[{"result":"OK"},{"result":"dg=="}]', 'OK exception per pipeline item');
  });

  it('matches Buffer base64 for every length and for raw bytes', () => {
    const w = new JsonWriter();
    for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 255, 256, 257, 1000, 70000]) {
      const v = Buffer.alloc(n);
      for (let j = 0; j < n; j++) v[j] = (j * 131 + 7) & 255;
      w.begin(0, true); w.bulk(v);
      assert.equal(JSON.parse(out(w)).result, v.toString('base64'), `length ${n}`);
    }
    w.begin(0, true); w.bulkLatin1('\x00\xff');
    assert.equal(JSON.parse(out(w)).result, Buffer.from([0, 255]).toString('base64'));
    w.begin(0, true); w.bulkText('é');
    assert.equal(JSON.parse(out(w)).result, Buffer.from('é').toString('base64'));
  });
});

describe('path and query decoding', () => {
  const buf = Buffer.alloc(4096);

  it('splits first, then percent-decodes each segment to raw bytes', () => {
    const a = new Argv();
    a.reset(buf);
    const n = decodePath('/set/a%2Fb/%FF%20x+y', buf, a);
    assert.ok(n > 0);
    assert.deepEqual(args(a), [Buffer.from('set'), Buffer.from('a/b'), Buffer.from([0xff, 0x20, 0x78, 0x2b, 0x79])]);
  });

  it('keeps empty segments as empty arguments', () => {
    const a = new Argv();
    a.reset(buf);
    decodePath('/set/k/', buf, a);
    assert.deepEqual(args(a).map(String), ['set', 'k', '']);
  });

  it('UTF-8 in the path is kept as its bytes', () => {
    const a = new Argv();
    a.reset(buf);
    decodePath('/echo/%C3%A9/é', buf, a);
    assert.deepEqual(args(a).map(String), ['echo', 'é', 'é']);
  });

  it('rejects malformed escapes', () => {
    for (const u of ['/get/%G1', '/get/%', '/get/%4', '/get/a%zz', '/get/%%41']) {
      const a = new Argv();
      a.reset(buf);
      assert.equal(decodePath(u, buf, a), -1, u);
    }
  });

  it('query pairs: name then value, bare names, + as space, _token dropped', () => {
    const a = new Argv();
    a.reset(buf);
    const n = decodeQuery('EX=100&_token=secret&NX&&a=b+c%2B&e=', buf, 0, a);
    assert.ok(n >= 0);
    assert.deepEqual(args(a).map(String), ['EX', '100', 'NX', 'a', 'b c+', 'e', '']);
    const b = new Argv();
    b.reset(buf);
    assert.equal(decodeQuery('a=%ZZ', buf, 0, b), -1);
  });

  it('queryToken finds _token anywhere and decodes it', () => {
    assert.equal(queryToken('_token=abc'), 'abc');
    assert.equal(queryToken('x=1&_token=a%2Bb&y=2'), 'a+b');
    assert.equal(queryToken('x_token=1'), '');
    assert.equal(queryToken('x=1'), '');
  });
});

describe('JSON command bodies', () => {
  function parse(text: string | Buffer, batch: boolean): { ok: boolean; cmds: string[][]; error: string | null; raw: Buffer[][] } {
    const b = Buffer.from(text);
    const l = new CommandList();
    const ok = l.parse(b, 0, b.length, batch);
    const cmds: string[][] = [];
    const raw: Buffer[][] = [];
    if (ok) {
      for (let i = 0; i < l.count; i++) {
        const a = new Argv();
        l.load(i, a, b);
        raw.push(args(a));
        cmds.push(args(a).map((x) => x.toString('utf8')));
      }
    }
    return { ok, cmds, error: l.error, raw };
  }

  it('strings, numbers (original lexeme), booleans', () => {
    const r = parse(' [ "SET" , "k", 12345678901234567890, -0.1e-7, 100, true, false ] ', false);
    assert.equal(r.ok, true);
    assert.deepEqual(r.cmds, [['SET', 'k', '12345678901234567890', '-0.1e-7', '100', 'true', 'false']]);
  });

  it('escapes are decoded to UTF-8 bytes, surrogate pairs joined, lone ones replaced', () => {
    const r = parse('["ECHO","a\\"b\\\\c\\/d\\n\\t\\u00e9\\ud83d\\ude00\\ud800x"]', false);
    assert.equal(r.ok, true);
    assert.deepEqual(r.raw[0][1], Buffer.from('a"b\\c/d\n\té😀\ufffdx'));
  });

  it('raw bytes inside strings are kept as they are (binary-safe)', () => {
    const body = Buffer.concat([Buffer.from('["SET","k","'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('"]')]);
    const r = parse(body, false);
    assert.equal(r.ok, true);
    assert.deepEqual(r.raw[0][2], Buffer.from([0xff, 0xfe, 0x80]));
  });

  it('batches of commands', () => {
    const r = parse('[["SET","a","1"],["GET","a"] ,[ "PING" ]]', true);
    assert.equal(r.ok, true);
    assert.deepEqual(r.cmds, [['SET', 'a', '1'], ['GET', 'a'], ['PING']]);
  });

  it('rejects bad shapes with clear messages', () => {
    const cases: Array<[string, boolean, string | RegExp]> = [
      ['', false, JSON_ERR.SINGLE_SHAPE],
      ['{"a":1}', false, JSON_ERR.SINGLE_SHAPE],
      ['"GET"', false, JSON_ERR.SINGLE_SHAPE],
      ['[]', false, JSON_ERR.EMPTY_COMMAND],
      ['["SET",["a"]]', false, JSON_ERR.ARG_TYPE],
      ['["SET",{"a":1}]', false, JSON_ERR.ARG_TYPE],
      ['["SET",null]', false, JSON_ERR.ARG_TYPE],
      ['["GET","a"]', true, JSON_ERR.BATCH_SHAPE],
      ['[]', true, JSON_ERR.EMPTY_BATCH],
      ['[[]]', true, JSON_ERR.EMPTY_COMMAND],
      ['[["GET","a"],5]', true, JSON_ERR.BATCH_SHAPE],
      ['[["GET","a"]', true, /invalid JSON.*end of input/],
      ['["GET","a"', false, /invalid JSON.*end of input/],
      ['["GET" "a"]', false, /invalid JSON.*unexpected '"'/],
      ['["GET","a"]x', false, /invalid JSON.*unexpected 'x' at position 11/],
      ['["GET","a\nb"]', false, /invalid JSON/],
      ['["GET","\\x"]', false, /invalid JSON/],
      ['["GET","\\u12"]', false, /invalid JSON/],
      ['["GET",01]', false, /invalid JSON/],
      ['["GET",1.]', false, /invalid JSON/],
      ['["GET",-]', false, /invalid JSON/],
      ['["GET",tru]', false, /invalid JSON/],
      ['["GET",]', false, /invalid JSON/],
      ['[,]', false, /invalid JSON/],
    ];
    for (const [text, batch, want] of cases) {
      const r = parse(text, batch);
      assert.equal(r.ok, false, text);
      if (typeof want === 'string') assert.equal(r.error, want, text);
      else assert.match(r.error!, want, text);
      assert.ok(r.error!.startsWith('ERR '), text);
    }
  });
});
