/**
 * The x87 long double emulation (src/engine/ds/long-double.ts).
 *
 * Fixed vectors were produced by C on x86-64 (glibc strtold, long double addition, printf
 * "%.17Lf" + Redis's trimming) and by redis-server 7.0.15's INCRBYFLOAT. When gcc is present,
 * a seeded random comparison against a freshly compiled C reference runs as well.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  LdKind, LD_ZERO, formatFixed17, formatHuman, ldAdd, ldExactDecimal, ldFromBigInt, ldFromNumber, ldIsFinite,
  ldNeg, ldToNumber, parseLongDoubleStr, strtold, type LongDouble,
} from '../../dist/engine/ds/long-double.js';

function parse(s: string): LongDouble {
  const v = parseLongDoubleStr(s);
  assert.ok(v !== null, `expected ${JSON.stringify(s)} to parse`);
  return v;
}

/** Normalized significand/exponent (bit 63 set), as frexpl would give them. */
function norm(v: LongDouble): string {
  if (v.kind === LdKind.INF) return v.neg ? '-inf' : 'inf';
  if (v.mant === 0n) return v.neg ? '-0' : '0';
  let m = v.mant;
  let e = v.exp;
  while (m < 1n << 63n) { m <<= 1n; e--; }
  return `${v.neg ? '-' : ''}${m}p${e}`;
}

/** INCRBYFLOAT: human format of a + b, or the error. */
function incr(a: string, b: string): string {
  const x = parseLongDoubleStr(a);
  const y = parseLongDoubleStr(b);
  if (x === null || y === null) return 'ERR not a valid float';
  const s = ldAdd(x, y);
  return ldIsFinite(s) ? formatHuman(s) : 'ERR NaN or Infinity';
}

describe('parsing (strtold, correctly rounded)', () => {
  it('rounds decimals to 64-bit significands', () => {
    assert.equal(norm(parse('0.1')), '14757395258967641293p-67');
    assert.equal(norm(parse('0.2')), '14757395258967641293p-66');
    assert.equal(norm(parse('1')), '9223372036854775808p-63');
    assert.equal(norm(parse('-2.5')), '-11529215046068469760p-62');
    assert.equal(norm(parse('1e308')), '10261342003245940623p960');
    // 2^64+1 is a tie between 2^64 and 2^64+2: even significand wins.
    assert.equal(norm(parse('18446744073709551617')), '9223372036854775808p1');
    assert.equal(norm(parse('18446744073709551619')), '9223372036854775810p1');
    assert.equal(norm(parse('18446744073709551615')), '18446744073709551615p0');
  });

  it('accepts the forms strtold accepts', () => {
    assert.equal(formatHuman(parse('.5')), '0.5');
    assert.equal(formatHuman(parse('5.')), '5');
    assert.equal(formatHuman(parse('+1.25')), '1.25');
    assert.equal(formatHuman(parse('5.0e3')), '5000');
    assert.equal(formatHuman(parse('1E-2')), '0.01');
    assert.equal(formatHuman(parse('0x10')), '16');
    assert.equal(formatHuman(parse('0x1p-2')), '0.25');
    assert.equal(formatHuman(parse('0X.8P1')), '1');
    assert.equal(formatHuman(parse('0x1.8')), '1.5');
    assert.equal(parse('inf').kind, LdKind.INF);
    assert.equal(parse('-Infinity').neg, true);
    assert.equal(parse('-0').neg, true);
    assert.equal(formatHuman(parse('0e999999999999999')), '0');
  });

  it('rejects what Redis string2ld rejects', () => {
    for (const s of ['', ' 1', '1 ', '\t1', '\n1', '1\n', 'abc', '1e', '1e+', '.', '-', '+', '0x', '0x1p', '1.5\0',
      '\0', 'nan', '-nan', 'NaN(12)', 'infinit', '--1', '1,5', '1e4933', '1e-4951', '0x1p16384', '0x1p-16446',
      '1e99999999999', '1e-99999999999', '1' + '0'.repeat(5119)]) {
      assert.equal(parseLongDoubleStr(s), null, JSON.stringify(s.slice(0, 30)));
    }
  });

  it('keeps gradual underflow down to 2^-16445', () => {
    assert.equal(norm(parse('0x1p-16445')), '9223372036854775808p-16508');
    assert.equal(norm(parse('0x1.8p-16446')), '9223372036854775808p-16508'); // 0.75 quantum rounds up
    assert.equal(norm(parse('0x3p-16447')), '9223372036854775808p-16508');
    assert.equal(norm(parse('1e-4950')), '13835058055282163712p-16507'); // 3 quanta (from C)
  });

  it('overflows to infinity only past max + half an ulp', () => {
    const max = ((1n << 64n) - 1n) << 16320n;
    const half = 1n << 16319n;
    assert.equal(norm(parse(max.toString())), `18446744073709551615p16320`);
    assert.equal(norm(parse((max + half - 1n).toString())), `18446744073709551615p16320`);
    assert.equal(parseLongDoubleStr((max + half).toString()), null);
    // strtold itself reports the overflow as ERANGE with an infinite value
    const r = strtold((max + half).toString());
    assert.equal(r.erange, true);
    assert.equal(r.value.kind, LdKind.INF);
  });

  it('reports the consumed prefix like strtold', () => {
    assert.equal(strtold('12abc').end, 2);
    assert.equal(strtold('0x').end, 1);
    assert.equal(strtold('1e+').end, 1);
    assert.equal(strtold('  -inFINITYx').end, 11);
    assert.equal(strtold('nan(abc)d').end, 8);
    assert.equal(strtold('x').end, 0);
  });
});

describe('addition and %.17Lf formatting', () => {
  it('matches redis-server INCRBYFLOAT', () => {
    assert.equal(incr('0.1', '0.2'), '0.3');
    assert.equal(incr('10.5', '0.1'), '10.6');
    assert.equal(incr('0', '5.0e3'), '5000');
    assert.equal(incr('16', '0x1p-2'), '16.25');
    assert.equal(incr('0', '0.000003814697265625'), '0.00000381469726562'); // exact tie: to even
    assert.equal(incr('0', '1.5e-18'), '0');
    assert.equal(incr('0', '-1e-18'), '0'); // "-0.00000000000000000" -> "-0" -> "0"
    assert.equal(incr('0', '-0'), '0');
    assert.equal(incr('0', 'inf'), 'ERR NaN or Infinity');
    assert.equal(incr('0', 'nan'), 'ERR not a valid float');
    assert.equal(incr('0', ' 1'), 'ERR not a valid float');
    assert.equal(incr('0', '1e308'),
      '99999999999999999996685879655845645660560099847415567207797047994921734868838061872100126921888539320446747225054013223152134749593960583597420814430196418767959100019603190778663109604507106667939153395788938914560543563061268364901618630217086589253444881623791300855757318142424510452728255046343928578048');
    assert.equal(incr('99999999999999999996685879655845645660560099847415567207797047994921734868838061872100126921888539320446747225054013223152134749593960583597420814430196418767959100019603190778663109604507106667939153395788938914560543563061268364901618630217086589253444881623791300855757318142424510452728255046343928578048', '1e308'),
      '199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096');
    assert.equal(incr('0', '1.7976931348623157e308').slice(0, 40), '1797693134862315699959210467741044340483');
    assert.equal(incr('1.18e4932', '0').length, 4933); // still finite in long double
    assert.equal(incr('1.18e4932', '1e4931'), 'ERR NaN or Infinity');
  });

  it('rounds sums once, to 64 bits, ties to even', () => {
    assert.equal(norm(ldAdd(parse('1'), parse('0x1p-64'))), '9223372036854775808p-63'); // tie -> even (down)
    assert.equal(norm(ldAdd(parse('1'), parse('0x1.8p-64'))), '9223372036854775809p-63');
    assert.equal(norm(ldAdd(parse('0x1.0000000000000002p0'), parse('0x1p-64'))), '9223372036854775810p-63'); // tie -> even (up)
    assert.equal(norm(ldAdd(parse('-1'), parse('0x1p-64'))), '-18446744073709551615p-64'); // exact below 1
    assert.equal(norm(ldAdd(parse('-1'), parse('0x1p-65'))), '-9223372036854775808p-63'); // tie -> even (back to -1)
    assert.equal(norm(ldAdd(parse('18446744073709551615'), parse('1'))), '9223372036854775808p1');
    assert.equal(norm(ldAdd(parse('0x1p-16445'), parse('0x1p-16445'))), '9223372036854775808p-16507');
  });

  it('handles zeros, infinities and NaN as IEEE round-to-nearest', () => {
    assert.equal(norm(ldAdd(parse('0.1'), parse('-0.1'))), '0');
    assert.equal(norm(ldAdd(parse('-0'), parse('-0'))), '-0');
    assert.equal(norm(ldAdd(parse('-0'), parse('0'))), '0');
    assert.equal(ldAdd(parse('inf'), parse('-inf')).kind, LdKind.NAN);
    assert.equal(ldAdd(parse('inf'), parse('1')).kind, LdKind.INF);
    assert.equal(ldAdd(parse('1e4932'), parse('1e4932')).kind, LdKind.INF);
    assert.equal(formatHuman(ldAdd(LD_ZERO, ldNeg(parse('0.5')))), '-0.5');
  });

  it('formats %.17Lf exactly', () => {
    assert.equal(formatFixed17(parse('0.1')), '0.10000000000000000');
    assert.equal(formatFixed17(parse('-1e-18')), '-0.00000000000000000');
    assert.equal(formatFixed17(parse('2.5e-17')), '0.00000000000000002'); // binary value is below the tie
    assert.equal(formatFixed17(parse('1.5e-17')), '0.00000000000000002');
    assert.equal(formatFixed17(parse('123')), '123.00000000000000000');
    assert.equal(formatHuman(parse('1.50')), '1.5');
    assert.equal(formatHuman(parse('100')), '100');
    assert.equal(formatHuman(parse('inf')), 'inf');
    assert.equal(formatHuman(parse('-inf')), '-inf');
  });

  it('converts from and to JS numbers and integers', () => {
    assert.equal(ldToNumber(parse('0.1')), 0.1);
    assert.equal(ldToNumber(ldFromNumber(0.1)), 0.1);
    assert.equal(formatHuman(ldFromNumber(0.1)), '0.10000000000000001');
    assert.equal(formatHuman(ldFromNumber(-2.5)), '-2.5');
    assert.equal(ldToNumber(ldFromNumber(5e-324)), 5e-324);
    assert.equal(formatHuman(ldFromBigInt(-9223372036854775808n)), '-9223372036854775808');
    assert.equal(ldExactDecimal(parse('0x1p-3')), '0.125');
    assert.equal(ldExactDecimal(parse('-0x3p4')), '-48');
  });
});

/** Cross-check against the real thing when a C compiler is available. */
const C_REF = String.raw`
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <ctype.h>
#define MAXC (5*1024)
static int string2ld(const char *s, size_t slen, long double *dp) {
  char buf[MAXC]; long double value; char *eptr;
  if (slen == 0 || slen >= sizeof(buf)) return 0;
  memcpy(buf,s,slen); buf[slen] = '\0';
  errno = 0; value = strtold(buf, &eptr);
  if (isspace(buf[0]) || eptr[0] != '\0' || (size_t)(eptr-buf) != slen ||
      (errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || fpclassify(value) == FP_ZERO)) ||
      errno == EINVAL || isnan(value)) return 0;
  *dp = value; return 1;
}
static void human(long double value) {
  static char buf[MAXC]; size_t l = snprintf(buf,sizeof buf,"%.17Lf",value);
  char *p = buf+l-1; while (*p == '0') { p--; l--; } if (*p == '.') l--;
  if (l == 2 && buf[0] == '-' && buf[1] == '0') { buf[0] = '0'; l = 1; }
  buf[l] = 0; puts(buf);
}
int main(void) {
  static char line[3*MAXC];
  while (fgets(line, sizeof line, stdin)) {
    size_t n = strlen(line); if (n && line[n-1]=='\n') line[--n]=0;
    char *tab = strchr(line, '\t'); long double a, b;
    if (!tab) { puts("BAD INPUT"); continue; }
    *tab = 0;
    if (!string2ld(line, strlen(line), &a) || !string2ld(tab+1, strlen(tab+1), &b)) { puts("ERR not a valid float"); continue; }
    long double v = a + b;
    if (isnan(v) || isinf(v)) { puts("ERR NaN or Infinity"); continue; }
    human(v);
  }
  return 0;
}
`;

const hasGcc = spawnSync('gcc', ['--version']).status === 0 && process.arch === 'x64';

describe('random comparison with C long double', { skip: hasGcc ? undefined : 'needs gcc on x86-64' }, () => {
  it('agrees on 4000 random sums', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ldref-'));
    try {
      fs.writeFileSync(path.join(dir, 'ref.c'), C_REF);
      execFileSync('gcc', ['-O1', '-o', path.join(dir, 'ref'), path.join(dir, 'ref.c'), '-lm']);
      let seed = 12345;
      const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
      const ri = (n: number) => Math.floor(rnd() * n);
      const digits = (n: number) => Array.from({ length: n }, () => ri(10)).join('');
      const gen = (): string => {
        const sign = ['', '-', '+'][ri(3)];
        switch (ri(10)) {
          case 0: return sign + digits(1 + ri(20)) + '.' + digits(ri(25));
          case 1: return sign + digits(1 + ri(3)) + 'e' + (ri(2) ? '-' : '') + ri(5000);
          case 2: return sign + '0.' + digits(ri(40));
          case 3: return sign + digits(1 + ri(30)) + 'e' + (ri(2) ? '-' : '+') + ri(330);
          case 4: return sign + '0x' + ri(1e9).toString(16) + '.' + ri(1e6).toString(16) + 'p' + (ri(2) ? '-' : '') + ri(17000);
          case 5: return sign + digits(1 + ri(300)) + 'e-' + ri(5000);
          case 6: return sign + digits(1 + ri(40)) + 'e' + (4900 + ri(40));
          case 7: return sign + digits(1 + ri(40)) + 'e-' + (4930 + ri(40));
          case 8: return ['inf', '-inf', 'nan', '-0', '0', ' 1', '1e', '0x', '.', '-.5', '5.', '0x.8'][ri(12)];
          default: return sign + String(ri(1000)) + '.' + String(ri(100));
        }
      };
      const pairs: [string, string][] = [];
      for (let i = 0; i < 4000; i++) pairs.push([gen(), gen()]);
      const ref = execFileSync(path.join(dir, 'ref'), {
        input: pairs.map((p) => p.join('\t')).join('\n') + '\n', maxBuffer: 1 << 28,
      }).toString().split('\n');
      let bad = 0;
      const report: string[] = [];
      pairs.forEach(([a, b], i) => {
        const mine = incr(a, b);
        if (mine !== ref[i]) {
          bad++;
          if (report.length < 5) report.push(`${a} + ${b}: ours ${mine.slice(0, 60)} ref ${ref[i].slice(0, 60)}`);
        }
      });
      assert.equal(bad, 0, report.join('\n'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
