/**
 * RespParser: the same commands whatever the packet boundaries, zero copy for whole commands,
 * big bulks in small chunks, inline commands split as Redis's sdssplitargs does, and every
 * protocol error text of Redis 7's processMultibulkBuffer/processInlineBuffer.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, RespParser, DEFAULT_LIMITS, splitArgs, type ParserLimits } from '../../dist/resp/parser.js';
import { Argv } from '../../dist/resp/argv.js';

/** Encode a command as a RESP multibulk. */
function mb(...args: Array<string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = typeof a === 'string' ? Buffer.from(a, 'latin1') : a;
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

interface Outcome {
  /** Each command's arguments as latin1 strings (exact bytes). */
  cmds: string[][];
  error: string | null;
}

/** Feed `chunks` one by one, draining after each; stop at the first protocol error. */
function feed(chunks: Buffer[], opts: { limits?: ParserLimits; auth?: boolean } = {}): Outcome {
  const p = new RespParser(opts.limits ?? DEFAULT_LIMITS);
  p.authRequired = opts.auth ?? false;
  const argv = new Argv();
  const cmds: string[][] = [];
  for (const chunk of chunks) {
    p.push(chunk, argv);
    for (;;) {
      const r = p.next(argv);
      if (r === Parse.INCOMPLETE) break;
      if (r === Parse.ERROR) return { cmds, error: p.error };
      const args: string[] = [];
      for (let i = 0; i < argv.count; i++) args.push(argv.key(i));
      cmds.push(args);
    }
  }
  return { cmds, error: null };
}

function splitAt(buf: Buffer, ...points: number[]): Buffer[] {
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(buf.subarray(prev, p));
    prev = p;
  }
  out.push(buf.subarray(prev));
  return out;
}

function chunked(buf: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

const PE = (m: string) => `ERR Protocol error: ${m}`;

describe('RespParser: packet boundaries', () => {
  // Multibulk and inline commands, binary and empty arguments, empty multibulks and blank lines.
  const pipeline = Buffer.concat([
    mb('SET', 'key:1', 'value one'),
    mb('GET', 'key:1'),
    Buffer.from('*0\r\n'),
    mb('SET', Buffer.from([0, 13, 10, 255]), Buffer.alloc(0)),
    Buffer.from('PING\r\n'),
    Buffer.from('*-1\r\n'),
    Buffer.from('  SET  "a b" \'c d\'\n'),
    Buffer.from('\r\n'),
    mb('MSET', 'a', '1', 'b', '22', 'c', '333'),
    Buffer.from('ECHO "\\x41\\r\\n"\r\n'),
    mb('DEL', 'x'.repeat(100)),
  ]);
  const expected = [
    ['SET', 'key:1', 'value one'],
    ['GET', 'key:1'],
    ['SET', '\x00\r\n\xff', ''],
    ['PING'],
    ['SET', 'a b', 'c d'],
    ['MSET', 'a', '1', 'b', '22', 'c', '333'],
    ['ECHO', 'A\r\n'],
    ['DEL', 'x'.repeat(100)],
  ];

  it('parses a pipelined buffer in one chunk', () => {
    assert.deepEqual(feed([pipeline]), { cmds: expected, error: null });
  });

  it('gives the same commands for every split point', () => {
    for (let i = 0; i <= pipeline.length; i++) {
      assert.deepEqual(feed(splitAt(pipeline, i)), { cmds: expected, error: null }, `split at ${i}`);
    }
  });

  it('gives the same commands for every pair of split points', () => {
    const n = pipeline.length;
    for (let i = 0; i <= n; i++) {
      for (let j = i; j <= n; j++) {
        const got = feed(splitAt(pipeline, i, j));
        if (got.error !== null || got.cmds.length !== expected.length) {
          assert.deepEqual(got, { cmds: expected, error: null }, `split at ${i} and ${j}`);
        }
        assert.deepEqual(got.cmds, expected, `split at ${i} and ${j}`);
      }
    }
  });

  it('gives the same commands byte by byte', () => {
    assert.deepEqual(feed(chunked(pipeline, 1)), { cmds: expected, error: null });
  });

  it('parses hundreds of commands in one chunk without copying', () => {
    const n = 800;
    const parts: Buffer[] = [];
    for (let i = 0; i < n; i++) parts.push(i % 2 ? mb('GET', `k${i}`) : mb('SET', `k${i}`, `v${i}`.repeat(i % 7)));
    const chunk = Buffer.concat(parts);
    const p = new RespParser();
    const argv = new Argv();
    p.push(chunk, argv);
    let count = 0;
    while (p.next(argv) === Parse.OK) {
      assert.equal(argv.buf, chunk, 'arguments point into the received chunk');
      const i = count++;
      assert.equal(argv.key(1), `k${i}`);
      if (i % 2 === 0) assert.equal(argv.key(2), `v${i}`.repeat(i % 7));
    }
    assert.equal(count, n);
    assert.equal(p.buffered, 0);
  });

  it('keeps a partial command across chunks and then parses the rest zero-copy', () => {
    const a = mb('SET', 'k', 'v');
    const b = mb('GET', 'k');
    const p = new RespParser();
    const argv = new Argv();
    p.push(a.subarray(0, 5), argv);
    assert.equal(p.next(argv), Parse.INCOMPLETE);
    assert.equal(p.buffered, 1, 'the multibulk header is consumed, "$" is pending');
    p.push(a.subarray(5), argv);
    assert.equal(p.next(argv), Parse.OK);
    assert.deepEqual([argv.key(0), argv.key(1), argv.key(2)], ['SET', 'k', 'v']);
    assert.equal(p.next(argv), Parse.INCOMPLETE);
    p.push(b, argv);
    assert.equal(p.next(argv), Parse.OK);
    assert.equal(argv.buf, b, 'nothing was pending: the new chunk is used directly');
  });

  it('parses a command with 100,000 arguments sent in small packets', () => {
    const args = ['DEL'];
    for (let i = 0; i < 100000; i++) args.push(`key:${i}`);
    const buf = mb(...args);
    const t0 = performance.now();
    const got = feed(chunked(buf, 100));
    const ms = performance.now() - t0;
    assert.equal(got.error, null);
    assert.equal(got.cmds.length, 1);
    assert.equal(got.cmds[0].length, 100001);
    assert.equal(got.cmds[0][100000], 'key:99999');
    // Resumable parsing is linear; re-scanning from the start each packet would take minutes.
    assert.ok(ms < 5000, `took ${ms.toFixed(0)} ms`);
  });

  it('receives a 5 MB bulk in chunks of 1 byte to 64 KB', () => {
    const size = 5 * 1024 * 1024;
    const value = Buffer.allocUnsafe(size);
    for (let i = 0; i < size; i++) value[i] = (i * 7 + (i >> 11)) & 0xff;
    const buf = Buffer.concat([mb('SET', 'big', value), mb('GET', 'big')]);
    for (const step of [1, 3, 1000, 4096, 16 * 1024 + 1, 64 * 1024]) {
      const p = new RespParser();
      const argv = new Argv();
      const seen: Array<{ name: string; len: number; ok: boolean; bufLen: number }> = [];
      for (let i = 0; i < buf.length; i += step) {
        p.push(buf.subarray(i, i + step), argv);
        while (p.next(argv) === Parse.OK) {
          seen.push({
            name: argv.key(0),
            len: argv.len(argv.count - 1),
            ok: argv.count === 3 ? argv.view(2).equals(value) : true,
            bufLen: argv.buf.length,
          });
        }
      }
      assert.equal(seen.length, 2, `chunks of ${step}`);
      assert.deepEqual(seen.map((s) => [s.name, s.len, s.ok]), [['SET', size, true], ['GET', 3, true]], `chunks of ${step}`);
      // The big-argument path sizes the private buffer from the announced length once.
      assert.ok(seen[0].bufLen < size + 128 * 1024, `buffer of ${seen[0].bufLen} bytes for a ${size}-byte value`);
    }
  });

  it('waits for the LF after a CR and for the two bytes after a bulk', () => {
    const p = new RespParser();
    const argv = new Argv();
    p.push(Buffer.from('*1\r'), argv);
    assert.equal(p.next(argv), Parse.INCOMPLETE);
    p.push(Buffer.from('\n$4\r\nPING'), argv);
    assert.equal(p.next(argv), Parse.INCOMPLETE);
    p.push(Buffer.from('\r'), argv);
    assert.equal(p.next(argv), Parse.INCOMPLETE);
    p.push(Buffer.from('\n'), argv);
    assert.equal(p.next(argv), Parse.OK);
    assert.equal(argv.key(0), 'PING');
  });

  it('does not check the two bytes after a bulk payload (as Redis)', () => {
    assert.deepEqual(feed([Buffer.from('*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n')]).cmds, [['PING'], ['PING']]);
  });
});

describe('RespParser: inline commands (sdssplitargs rules)', () => {
  const cases: Array<[string, string[] | null]> = [
    ['SET a b', ['SET', 'a', 'b']],
    ['  SET \t a\x0bb\x0c  ', ['SET', 'a', 'b']],
    ['SET "a b" c', ['SET', 'a b', 'c']],
    ['"\\x41\\x4g"', ['Ax4g']],
    ['"\\n\\r\\t\\b\\a\\z\\\\"', ['\n\r\t\b\x07z\\']],
    ['"\\xff\\x00\\xFf"', ['\xff\x00\xff']],
    ['"\\x"', ['x']],
    ['"\\x4"', ['x4']],
    ['\\x41', ['\\x41']],
    ["'a\\'b'", ["a'b"]],
    ["'a\\nb'", ['a\\nb']],
    ['"" \'\'', ['', '']],
    ['a"b"', ['ab']],
    ["a'b'", ['ab']],
    ['"a"\t"b"', ['a', 'b']],
    ['"a"b', null],
    ["'a'b", null],
    ['"abc', null],
    ["'abc", null],
    ['"\\"', null],
    ['', []],
    ['   ', []],
  ];
  for (const [line, want] of cases) {
    it(`splits ${JSON.stringify(line)}`, () => {
      const b = Buffer.from(line, 'latin1');
      const got = splitArgs(b, 0, b.length);
      assert.deepEqual(got === null ? null : got.map((x) => x.toString('latin1')), want);
      const wire = Buffer.concat([Buffer.from('PING '), b, Buffer.from('\r\n')]);
      const r = feed([wire]);
      if (want === null) assert.equal(r.error, PE('unbalanced quotes in request'));
      else assert.deepEqual(r.cmds, [['PING', ...want]]);
    });
  }

  it('accepts LF and CRLF line ends and skips blank lines', () => {
    assert.deepEqual(feed([Buffer.from('\r\n\n  \r\nPING\nGET a\r\n')]).cmds, [['PING'], ['GET', 'a']]);
  });

  it('treats a NUL byte before the newline as "no line yet" (Redis uses strchr)', () => {
    assert.deepEqual(feed([Buffer.from('PI\x00NG\r\nPING\r\n', 'latin1')]), { cmds: [], error: null });
  });

  it('accepts an inline line of up to 64 KB', () => {
    const line = 'GET ' + 'k'.repeat(64 * 1024 - 4);
    const r = feed(chunked(Buffer.from(line + '\r\n'), 1000));
    assert.equal(r.error, null);
    assert.equal(r.cmds[0][1].length, 64 * 1024 - 4);
  });
});

describe('RespParser: protocol errors (Redis 7 texts)', () => {
  const cases: Array<[string, string | Buffer, string]> = [
    ['non-numeric multibulk count', '*abc\r\n', 'invalid multibulk length'],
    ['multibulk count above INT_MAX', '*3000000000\r\n', 'invalid multibulk length'],
    ['multibulk count with a leading zero', '*01\r\n', 'invalid multibulk length'],
    ['multibulk count with a plus sign', '*+1\r\n', 'invalid multibulk length'],
    ['multibulk count -0', '*-0\r\n', 'invalid multibulk length'],
    ['empty multibulk count', '*\r\n', 'invalid multibulk length'],
    ['multibulk count with a space', '* 1\r\n', 'invalid multibulk length'],
    ['multibulk count of 21 digits', '*100000000000000000000\r\n', 'invalid multibulk length'],
    ['non-numeric bulk length', '*1\r\n$abc\r\n', 'invalid bulk length'],
    ['negative bulk length', '*1\r\n$-1\r\n', 'invalid bulk length'],
    ['bulk length with a leading zero', '*1\r\n$04\r\nPING\r\n', 'invalid bulk length'],
    ['empty bulk length', '*1\r\n$\r\n', 'invalid bulk length'],
    ['bulk length above proto-max-bulk-len', '*1\r\n$536870913\r\n', 'invalid bulk length'],
    ['a bulk that does not start with $', '*1\r\nx3\r\n', "expected '$', got 'x'"],
    ['an integer where a bulk is expected', '*2\r\n$3\r\nGET\r\n:1\r\n', "expected '$', got ':'"],
    ['unbalanced double quote', 'SET "a\r\n', 'unbalanced quotes in request'],
    ['closing quote followed by a letter', "SET 'a'b\r\n", 'unbalanced quotes in request'],
    ['inline request over 64 KB', 'x'.repeat(64 * 1024 + 1), 'too big inline request'],
    ['multibulk count line over 64 KB', '*' + '1'.repeat(64 * 1024 + 1), 'too big mbulk count string'],
    ['bulk length line over 64 KB', '*1\r\n$' + '1'.repeat(64 * 1024 + 1), 'too big bulk count string'],
  ];
  for (const [name, wire, msg] of cases) {
    it(`${name}: "${msg}"`, () => {
      const buf = typeof wire === 'string' ? Buffer.from(wire, 'latin1') : wire;
      assert.deepEqual(feed([buf]), { cmds: [], error: PE(msg) });
      // The same error when the bytes arrive one by one (only up to the error point matters).
      if (buf.length < 200) assert.deepEqual(feed(chunked(buf, 1)), { cmds: [], error: PE(msg) });
    });
  }

  it('accepts exactly 64 KB of an unfinished inline line and fails one byte later', () => {
    const p = new RespParser();
    const argv = new Argv();
    p.push(Buffer.alloc(64 * 1024, 0x61), argv);
    assert.equal(p.next(argv), Parse.INCOMPLETE);
    p.push(Buffer.from('a'), argv);
    assert.equal(p.next(argv), Parse.ERROR);
    assert.equal(p.error, PE('too big inline request'));
  });

  it('a NUL-containing inline line becomes "too big" after 64 KB, as in Redis', () => {
    const r = feed([Buffer.from('GET a\x00b\r\n', 'latin1'), Buffer.alloc(64 * 1024, 0x61)]);
    assert.deepEqual(r, { cmds: [], error: PE('too big inline request') });
  });

  it('honours a configured proto-max-bulk-len', () => {
    const limits = { ...DEFAULT_LIMITS, maxBulk: 1024 * 1024 };
    assert.deepEqual(feed([Buffer.from('*1\r\n$1048577\r\n')], { limits }), { cmds: [], error: PE('invalid bulk length') });
    assert.deepEqual(feed([Buffer.from('*1\r\n$1048576\r\n')], { limits }), { cmds: [], error: null });
  });

  it('limits requests before authentication', () => {
    const auth = true;
    assert.deepEqual(feed([Buffer.from('*11\r\n')], { auth }), { cmds: [], error: PE('unauthenticated multibulk length') });
    assert.deepEqual(feed([Buffer.from('*10\r\n')], { auth }), { cmds: [], error: null });
    assert.deepEqual(feed([Buffer.from('*1\r\n$16385\r\n')], { auth }), { cmds: [], error: PE('unauthenticated bulk length') });
    assert.deepEqual(feed([Buffer.from('*1\r\n$16384\r\n')], { auth }), { cmds: [], error: null });
    // Inline commands are not capped by argument count.
    assert.equal(feed([Buffer.from('PING a b c d e f g h i j k l\r\n')], { auth }).cmds[0].length, 13);
    // Once authenticated, the same request is fine.
    assert.equal(feed([Buffer.from('*11\r\n')]).error, null);
  });

  it('returns the commands before the error first', () => {
    const buf = Buffer.concat([mb('SET', 'a', '1'), Buffer.from('PING\r\n'), Buffer.from('*1\r\n$x\r\n'), mb('GET', 'a')]);
    for (let i = 0; i <= buf.length; i++) {
      assert.deepEqual(feed(splitAt(buf, i)), { cmds: [['SET', 'a', '1'], ['PING']], error: PE('invalid bulk length') }, `split at ${i}`);
    }
  });

  it('treats *0 and negative multibulk counts as nothing', () => {
    assert.deepEqual(feed([Buffer.from('*0\r\n*-1\r\n*-5\r\nPING\r\n')]), { cmds: [['PING']], error: null });
  });

  it('a CR in the middle of a header is part of the header', () => {
    assert.deepEqual(feed([Buffer.from('*1\nfoo\r\n')]), { cmds: [], error: PE('invalid multibulk length') });
  });
});
