/**
 * Argv.clone(): an owned copy whatever the source's layout (the parser's, with RESP framing
 * between arguments; out of order; sparse), independent of the source buffer, and many clones
 * alive at once each keeping its own offsets (they share offset slabs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, RespParser, DEFAULT_LIMITS } from '../../dist/resp/parser.js';
import { Argv } from '../../dist/resp/argv.js';

function mb(args: string[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) parts.push(Buffer.from(`$${a.length}\r\n`), Buffer.from(a, 'latin1'), Buffer.from('\r\n'));
  return Buffer.concat(parts);
}

const args = (a: Argv): string[] => Array.from({ length: a.count }, (_, i) => a.key(i));

/** Parse one command from `bytes` into a parser-owned Argv (the layout MULTI queues). */
function parsed(bytes: Buffer): Argv {
  const p = new RespParser(DEFAULT_LIMITS);
  const argv = new Argv();
  p.push(bytes, argv);
  assert.equal(p.next(argv), Parse.OK);
  return argv;
}

describe('Argv.clone', () => {
  it('copies a parsed command (framing between arguments), then owns its bytes', () => {
    for (const n of [1, 2, 16, 17, 26, 40]) {
      const want = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 'x'.repeat(40 + i) : `a${i}`));
      const src = parsed(mb(want));
      const c = src.clone();
      src.buf.fill(0x21);
      assert.deepEqual(args(c), want, `${n} arguments`);
      assert.equal(c.size(), want.reduce((s, a) => s + a.length, 0));
    }
  });

  it('copies arguments out of order or far apart one by one', () => {
    const buf = Buffer.from('0123456789'.repeat(30), 'latin1');
    const out = new Argv();
    out.reset(buf);
    out.push(20, 25);
    out.push(5, 8);
    out.push(8, 8);
    const c = out.clone();
    buf.fill(0x21);
    assert.deepEqual(args(c), ['01234', '567', '']);
    assert.equal(c.buf.length, 8);
    const sparse = new Argv();
    const b2 = Buffer.from('0123456789'.repeat(30), 'latin1');
    sparse.reset(b2);
    sparse.push(0, 2);
    sparse.push(250, 252);
    const s = sparse.clone();
    b2.fill(0x21);
    assert.deepEqual(args(s), ['01', '01']);
    assert.equal(s.buf.length, 4);
  });

  it('keeps every clone intact while thousands are alive (shared offset slabs)', () => {
    const clones: Argv[] = [];
    const wants: string[][] = [];
    for (let k = 0; k < 3000; k++) {
      const n = 1 + (k % 30);
      const want = Array.from({ length: n }, (_, i) => `${k}:${i}`);
      wants.push(want);
      clones.push(parsed(mb(want)).clone());
    }
    for (let k = 0; k < clones.length; k++) assert.deepEqual(args(clones[k]), wants[k], `clone ${k}`);
    // A clone grows like any Argv.
    const c = clones[29];
    c.push(0, 2);
    assert.equal(c.count, 31);
    assert.deepEqual(args(clones[30]), wants[30]);
    assert.deepEqual(args(c).slice(0, 30), wants[29]);
  });

  it('clones an empty Argv', () => {
    const c = new Argv().clone();
    assert.equal(c.count, 0);
    c.push(0, 0);
    assert.equal(c.count, 1);
  });
});
