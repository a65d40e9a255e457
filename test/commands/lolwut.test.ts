/**
 * LOLWUT's random drawings against redis-server's: the same canvas size and line widths, the
 * rows drawn before any random number byte for byte, the same trailer. (The replies that do
 * not depend on random numbers are compared whole in test/diff/cases/lolwut.ts.)
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPair, type Pair } from '../helpers/pair.js';

let pair: Pair;
before(async () => {
  pair = await startPair();
});
after(async () => {
  await pair?.stop();
});

/** The verbatim text of a RESP2 bulk reply, as lines. */
function lines(reply: string): string[] {
  const body = Buffer.from(reply, 'latin1');
  const nl = body.indexOf('\r\n');
  return body.subarray(nl + 2, body.length - 2).toString('utf8').split('\n');
}

describe('LOLWUT', () => {
  it('VERSION 5: Schotter with Redis\'s canvas, its unrotated top rows and its trailer', async () => {
    for (const args of [[], ['40'], ['66', '4', '6'], ['120', '10', '20']]) {
      const [a, b] = (await pair.both('LOLWUT', 'VERSION', '5', ...args)).map(lines);
      assert.equal(a.length, b.length, args.join(' '));
      assert.deepEqual(a.map((l) => [...l].length), b.map((l) => [...l].length));
      // Rows 0 and 1 of squares are drawn without random numbers: the lines above the highest
      // pixel a (jittered, rotated) square of row 2 can reach are fixed.
      const [cols, perRow, perCol] = [Number(args[0] ?? 66), Number(args[1] ?? 8), Number(args[2] ?? 12)];
      const side = (cols * 2 - 4) / perRow;
      const top = 2 * side + side / 2 + 2 - ((2 / perCol) * side) / 3 - Math.round(side / 1.4142135623) - 1;
      const fixed = Math.floor(top / 4);
      assert.ok(fixed >= 2, `${fixed} fixed lines`);
      assert.deepEqual(a.slice(0, fixed), b.slice(0, fixed));
      assert.deepEqual(a.slice(-2), b.slice(-2));
      assert.match(a.at(-2)!, /^Georg Nees - schotter, plotter on paper, 1968\. Redis ver\. 7\.0\.15$/);
      for (const l of a.slice(0, -3)) assert.match(l, /^[\u2800-\u28ff]+$/u);
    }
  });

  it('VERSION 6: the skyline canvas, colours and trailer of Redis', async () => {
    for (const args of [[], ['40', '10'], ['200', '50']]) {
      const [a, b] = (await pair.both('LOLWUT', 'VERSION', '6', ...args)).map(lines);
      assert.equal(a.length, b.length);
      assert.deepEqual(a.slice(-3), b.slice(-3));
      const cols = Number(args[0] ?? 80);
      const cell = /\x1b\[0;(?:30;40|90;100|37;47|97;107)m \x1b\[0m/g;
      for (const l of a.slice(0, -3)) {
        assert.equal(l.match(cell)?.length, cols);
        assert.equal(l.replace(cell, ''), '');
      }
    }
  });
});
