/**
 * The listpack checks of native/lzf.wasm (listpack.c, through src/engine/ds/listpack.ts)
 * against the JavaScript they replaced (test/types/listpack-oracle.ts): the same count, -1 or
 * -2 and longest text on canonical, non-canonical and corrupted listpacks, and the same
 * duplicate-field answers; bytes in place in the module's memory, copied there, and past the
 * fixed instance's regions (a temporary instance).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LpWriter } from '../../dist/rdb/listpack.js';
import { lpCheck, lpCheckFields, lpDupFields, lpDupState, lpMaxText, lpsDupFields } from '../../dist/engine/ds/listpack.js';
import { fixed } from '../../dist/rdb/lzf.js';
import * as oracle from './listpack-oracle.js';

let x = 2463534242;
function rnd(n: number): number {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return (x >>> 0) % n;
}

const SPECIAL = [
  '0', '-0', '00', '007', '-', '1', '-1', '127', '128', '-4096', '4095', '4096', '-32768', '32767',
  '-8388608', '8388607', '2147483647', '-2147483648', '2147483648', '9223372036854775807',
  '-9223372036854775808', '9223372036854775808', '-9223372036854775809', '18446744073709551616',
  '12345678901234567890', '123456789012345678901', '1e3', ' 1', '+1', '',
];

function element(): string {
  switch (rnd(6)) {
    case 0:
      return SPECIAL[rnd(SPECIAL.length)];
    case 1:
      return String(rnd(2 ** 31) - 2 ** 30);
    case 2:
      return 'x'.repeat(rnd(70));
    case 3:
      return 'y'.repeat(60 + rnd(200));
    case 4:
      return `field:${rnd(50)}`;
    default:
      return String.fromCharCode(...Array.from({ length: rnd(12) }, () => rnd(256)));
  }
}

function listpack(elems: string[]): Buffer {
  const w = new LpWriter().start();
  for (const e of elems) w.text(e);
  return Buffer.from(w.finish());
}

function sameCheck(b: Buffer, what: string): number {
  const want = oracle.lpsCheck(b.toString('latin1'));
  const got = lpCheck(b, 0, b.length);
  assert.equal(got, want, what);
  if (want !== -1) assert.equal(lpMaxText(), oracle.lpsMaxText, `${what}: longest text`);
  return want;
}

describe('native listpack checks against the JavaScript oracle', () => {
  it('lpCheck: canonical, non-canonical and corrupted listpacks', () => {
    let valid = 0;
    let refused = 0;
    for (let i = 0; i < 600; i++) {
      const elems = Array.from({ length: rnd(40) }, element);
      const lp = listpack(elems);
      if (sameCheck(lp, `listpack ${i}`) >= 0) valid++;
      for (let m = 0; m < 6; m++) {
        const bad = Buffer.from(lp);
        const at = rnd(bad.length);
        if (m < 4) bad[at] ^= 1 << rnd(8);
        else bad[at] = rnd(256);
        if (sameCheck(bad, `listpack ${i}, byte ${at} changed`) === -1) refused++;
      }
      const cut = lp.subarray(0, rnd(lp.length));
      sameCheck(cut, `listpack ${i} cut`);
    }
    // A string entry holding a canonical integer, and an integer in a wider encoding: -2.
    const str = Buffer.from([0, 0, 0, 0, 1, 0, 0x83, 0x31, 0x32, 0x33, 4, 0xff]);
    str.writeUInt32LE(str.length, 0);
    assert.equal(sameCheck(str, 'string "123"'), -2);
    const wide = Buffer.from([0, 0, 0, 0, 1, 0, 0xf1, 5, 0, 3, 0xff]);
    wide.writeUInt32LE(wide.length, 0);
    assert.equal(sameCheck(wide, '16-bit 5'), -2);
    assert.ok(valid > 300 && refused > 300, `${valid} valid, ${refused} corrupt refused`);
  });

  it('lpDupFields: hashes with and without a repeated field', () => {
    let dups = 0;
    for (let i = 0; i < 600; i++) {
      const fields = Array.from({ length: 1 + rnd(60) }, (_, j) => (rnd(3) === 0 ? element() : `f${j}:${rnd(1000)}`));
      if (i % 3 === 0 && fields.length > 1) fields[rnd(fields.length)] = fields[rnd(fields.length)];
      const elems = fields.flatMap((f) => [f, element()]);
      const lp = listpack(elems);
      const k = oracle.lpsCheck(lp.toString('latin1'));
      if (k < 0) continue;
      const want = oracle.lpsDupFields(lp.toString('latin1'), k / 2);
      if (want) dups++;
      assert.equal(lpDupFields(lp, 0, lp.length, k / 2), want, `hash ${i}`);
      assert.equal(lpsDupFields(lp.toString('latin1'), k / 2), want, `hash ${i} as a string`);
      // The check with the duplicate search in the same pass.
      assert.equal(lpCheckFields(lp, 0, lp.length), k);
      assert.equal(lpDupState(), want ? 1 : 0, `hash ${i}: lpCheckFields`);
      // In place in the module's memory.
      lp.copy(fixed.mem, fixed.b);
      assert.equal(lpCheck(fixed.mem, fixed.b, fixed.b + lp.length), k);
      assert.equal(lpDupFields(fixed.mem, fixed.b, fixed.b + lp.length, k / 2), want, `hash ${i} in place`);
      assert.equal(lpCheckFields(fixed.mem, fixed.b, fixed.b + lp.length), k);
      assert.equal(lpDupState(), want ? 1 : 0, `hash ${i}: lpCheckFields in place`);
    }
    assert.ok(dups > 100, `${dups} with a repeated field`);
  });

  it('past the fixed regions: 20,000 fields, a 300 KB listpack', () => {
    for (const elems of [
      Array.from({ length: 40_000 }, (_, j) => `k${j}`),
      Array.from({ length: 40 }, (_, j) => `${j}`.padEnd(8000, 'v')),
    ]) {
      const lp = listpack(elems);
      const k = sameCheck(lp, `${elems.length} elements, ${lp.length} bytes`);
      assert.equal(k, elems.length);
      assert.equal(lpDupFields(lp, 0, lp.length, k / 2), false);
      elems[elems.length - 2] = elems[0];
      const dup = listpack(elems);
      assert.equal(lpDupFields(dup, 0, dup.length, k / 2), true);
      // More fields than lpCheckFields's table takes (20,000): not known, then lpDupFields.
      assert.equal(lpCheckFields(dup, 0, dup.length), k);
      assert.equal(lpDupState(), elems.length / 2 > 8192 ? 2 : 1);
      assert.equal(lpsDupFields(dup.toString('latin1'), k / 2), true);
    }
  });
});
