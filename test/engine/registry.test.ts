/**
 * The command table: invariants of every row (names, flags, arity, key positions), the
 * registry's own startup checks, COMMAND COUNT against the table, and every row against the
 * `COMMAND INFO` of a real redis-server (arity, flags, key positions are transcribed from it).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { Registry } from '../../dist/engine/registry.js';
import { row, family, type CommandDef } from '../../dist/engine/command.js';
import { F, FLAG_NAMES } from '../../dist/engine/flags.js';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

/** Every row, top-level and sub, with its family. */
function allRows(): Array<{ fam: string; def: CommandDef; parent: CommandDef | null }> {
  const out: Array<{ fam: string; def: CommandDef; parent: CommandDef | null }> = [];
  for (const fam of FAMILIES) {
    for (const def of fam.rows) {
      out.push({ fam: fam.name, def, parent: null });
      if (def.subcommands) for (const s of def.subcommands.values()) out.push({ fam: fam.name, def: s, parent: def });
    }
  }
  return out;
}

const noop = () => {};

describe('command table invariants', () => {
  it('every family is non-empty and family names are unique', () => {
    const names = new Set<string>();
    for (const fam of FAMILIES) {
      assert.ok(fam.rows.length > 0, `family ${fam.name} is empty`);
      assert.ok(!names.has(fam.name), `family ${fam.name} listed twice`);
      names.add(fam.name);
    }
  });

  it('names are unique and lower-case', () => {
    const seen = new Map<string, string>();
    for (const { fam, def, parent } of allRows()) {
      const re = parent ? /^[a-z][a-z0-9_-]*\|[a-z][a-z0-9_-]*$/ : /^[a-z][a-z0-9_.-]*$/; // "." for module commands (json.set)
      assert.match(def.name, re, `${fam}: bad name ${JSON.stringify(def.name)}`);
      if (parent) assert.ok(def.name.startsWith(parent.name + '|'), `${def.name} is not named after ${parent.name}`);
      assert.ok(!seen.has(def.name), `${def.name} defined in ${seen.get(def.name)} and ${fam}`);
      seen.set(def.name, fam);
    }
  });

  it('no command is both write and readonly', () => {
    for (const { def } of allRows()) {
      assert.ok(!((def.flags & F.WRITE) && (def.flags & F.READONLY)), `${def.name} is both write and readonly`);
    }
  });

  it('admin implies noscript (but for PFDEBUG and PFSELFTEST, as in Redis), and movablekeys comes with getKeys', () => {
    const scriptableAdmin = new Set(['pfdebug', 'pfselftest']);
    for (const { def } of allRows()) {
      if (def.flags & F.ADMIN) assert.equal(!!(def.flags & F.NOSCRIPT), !scriptableAdmin.has(def.name), `${def.name}: admin and noscript`);
      if (def.flags & F.MOVABLE_KEYS) assert.equal(typeof def.getKeys, 'function', `${def.name}: movablekeys without getKeys`);
    }
  });

  it('key positions are consistent with arity', () => {
    for (const { def } of allRows()) {
      const [first, last, step] = def.keys;
      const where = `${def.name} (arity ${def.arity}, keys [${first}, ${last}, ${step}])`;
      assert.notEqual(def.arity, 0, `${where}: arity 0`);
      assert.ok(Number.isInteger(def.arity) && Number.isInteger(first) && Number.isInteger(last) && Number.isInteger(step), where);
      if (first === 0) {
        assert.deepEqual([last, step], [0, 0], `${where}: keyless commands use [0, 0, 0]`);
        continue;
      }
      assert.ok(first > 0 && step > 0, `${where}: first and step must be positive`);
      const min = Math.abs(def.arity);
      if (def.arity > 0) {
        assert.ok(first < def.arity, `${where}: first key beyond the arguments`);
        const lastIdx = last < 0 ? def.arity + last : last;
        assert.ok(lastIdx >= first && lastIdx < def.arity, `${where}: last key outside the arguments`);
      } else {
        // Variadic: the first key is within the minimum arguments, except for commands whose
        // keys are all optional (Redis's SUNSUBSCRIBE: arity -1, first key 1).
        assert.ok(first < min || (first === min && last === -1), `${where}: first key beyond the minimum arguments`);
        if (last > 0) assert.ok(last >= first, `${where}: last key before first`);
      }
    }
  });

  it('subcommands belong to container commands with a matching arity', () => {
    for (const { def, parent } of allRows()) {
      if (!parent) continue;
      assert.ok(Math.abs(def.arity) >= 2, `${def.name}: a subcommand has at least 2 arguments`);
      assert.ok(parent.arity < 0, `${parent.name}: a container command is variadic`);
    }
  });

  it('the registry assigns dense ids to every row and resolves names case-insensitively', () => {
    const reg = new Registry(FAMILIES);
    const rows = allRows();
    assert.equal(reg.all.length, rows.length);
    reg.all.forEach((d, i) => assert.equal(d.id, i, `${d.name} has id ${d.id} at ${i}`));
    assert.equal(reg.commands.size, rows.filter((r) => !r.parent).length);
  });

  it('the registry refuses broken tables at startup', () => {
    const ok = row('okcmd', 2, F.READONLY | F.FAST, [1, 1, 1], noop);
    const cases: Array<[string, () => unknown]> = [
      ['empty family', () => new Registry([family('x', [], [])])],
      ['duplicate name', () => new Registry([family('a', [], [ok]), family('b', [], [row('okcmd', 2, 0, [1, 1, 1], noop)])])],
      ['upper-case name', () => new Registry([family('a', [], [row('GET', 2, 0, [1, 1, 1], noop)])])],
      ['write and readonly', () => new Registry([family('a', [], [row('x', 2, F.WRITE | F.READONLY, [1, 1, 1], noop)])])],
      ['movablekeys without getKeys', () => new Registry([family('a', [], [row('x', -2, F.MOVABLE_KEYS, [0, 0, 0], noop)])])],
      ['first key beyond arity', () => new Registry([family('a', [], [row('x', 2, 0, [2, 2, 1], noop)])])],
      ['arity 0', () => new Registry([family('a', [], [row('x', 0, 0, [0, 0, 0], noop)])])],
    ];
    for (const [what, build] of cases) assert.throws(build, Error, what);
    assert.doesNotThrow(() => new Registry([family('a', [], [ok])]));
  });
});

describe('command table against running servers', () => {
  let ours: Proc;
  let redis: Proc;
  let a: RawClient;
  let b: RawClient;
  before(async () => {
    [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
    [a, b] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
  });
  after(async () => {
    a?.close();
    b?.close();
    await Promise.all([ours?.stop(), redis?.stop()]);
  });

  it('COMMAND COUNT and COMMAND equal the table', async () => {
    const reg = new Registry(FAMILIES);
    assert.equal((await a.call('COMMAND', 'COUNT')).toString(), `:${reg.commands.size}\r\n`);
    const all = decode(await a.call('COMMAND')) as Info[];
    assert.equal(all.length, reg.commands.size);
    assert.deepEqual(all.map((c) => c[0]).sort(), [...reg.commands.keys()].sort());
  });

  it('arity, flags and key positions match redis-server\'s COMMAND INFO', async () => {
    const known = new Set(FLAG_NAMES.map(([, n]) => n));
    const diffs: string[] = [];
    for (const { def } of allRows()) {
      // Rows that follow a newer Redis on purpose (the Upstash SDK uses these forms).
      if (NEWER_THAN_7_0[def.name]) continue;
      const [info] = decode(await b.call('COMMAND', 'INFO', def.name)) as Array<Info | null>;
      if (info === null) continue; // a command of ours that Redis 7.0 does not have
      const [, arity, flags, first, last, step] = info;
      const want = {
        arity,
        keys: [first, last, step],
        flags: (flags as string[]).filter((f) => known.has(f)).sort(),
      };
      const got = {
        arity: def.arity,
        keys: [...def.keys],
        flags: FLAG_NAMES.filter(([bit]) => def.flags & bit).map(([, n]) => n).sort(),
      };
      // Redis does not show NOSCRIPT on some admin subcommands; ours derives it from ADMIN.
      if (def.flags & F.ADMIN && !want.flags.includes('noscript')) got.flags = got.flags.filter((f) => f !== 'noscript');
      try {
        assert.deepEqual(got, want);
      } catch {
        diffs.push(`${def.name}: ours ${JSON.stringify(got)} redis ${JSON.stringify(want)}`);
      }
    }
    assert.deepEqual(diffs, []);
  });
});

/** Documented deviations from 7.0.15's table, with the Redis version we follow instead. */
const NEWER_THAN_7_0: Record<string, string> = {
  zrank: 'Redis 7.2: ZRANK key member [WITHSCORE] (arity -3)',
  zrevrank: 'Redis 7.2: ZREVRANK key member [WITHSCORE] (arity -3)',
};

type Info = [string, number, string[], number, number, number, ...unknown[]];

/** Minimal RESP2 decoder for COMMAND replies (strings, integers, arrays, nulls). */
function decode(buf: Buffer): unknown {
  let p = 0;
  const line = () => {
    const e = buf.indexOf('\r\n', p);
    const s = buf.toString('latin1', p + 1, e);
    const t = buf[p];
    p = e + 2;
    return [t, s] as const;
  };
  const value = (): unknown => {
    const [t, s] = line();
    switch (t) {
      case 0x2b: return s;
      case 0x2d: return new Error(s);
      case 0x3a: return Number(s);
      case 0x24: {
        const n = Number(s);
        if (n < 0) return null;
        const v = buf.toString('latin1', p, p + n);
        p += n + 2;
        return v;
      }
      case 0x2a: {
        const n = Number(s);
        if (n < 0) return null;
        const out: unknown[] = [];
        for (let i = 0; i < n; i++) out.push(value());
        return out;
      }
      default: throw new Error(`bad reply type ${t}`);
    }
  };
  return value();
}
