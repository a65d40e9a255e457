/**
 * ACL key and channel permissions, differential: the same restricted users on our server and on
 * a real redis-server, then every command of our table that has keys (subcommands included),
 * built from the real server's COMMAND DOCS, run with its keys inside the user's patterns and
 * with one key outside, directly, inside EVAL and inside FCALL. Every reply must match byte for
 * byte (replies Redis marks nondeterministic: their type), and so must the ACL LOG entries
 * (count, reason, context, object, username). COMMAND GETKEYSANDFLAGS of every call must match
 * too: it is the key extraction the ACL checks use.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { type Proc, withBothServers } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { aclLogEntries } from './harness.js';
import { KEY_SPECS } from '../../dist/engine/keyspecs.js';

type Doc = Record<string, unknown>;
type Call = string[];

let ours: Proc;
let redis: Proc;

/** A flat [k, v, k, v] reply as an object. */
function pairs(a: unknown): Doc {
  const o: Doc = {};
  const arr = a as unknown[];
  for (let i = 0; i + 1 < arr.length; i += 2) o[String(arr[i])] = arr[i + 1];
  return o;
}

/**
 * A minimal call from COMMAND DOCS arguments: required arguments only, the first choice of a
 * oneof, one instance of a multiple; keys named by `key(i)`.
 */
function build(args: unknown[], key: () => string, out: string[]): void {
  for (const raw of args) {
    const a = pairs(raw);
    const flags = (a.flags as string[] | undefined) ?? [];
    if (flags.includes('optional')) continue;
    if (a.token !== undefined) out.push(String(a.token));
    switch (a.type) {
      case 'key': out.push(key()); break;
      case 'string': out.push('a'); break;
      case 'pattern': out.push('*'); break;
      case 'integer': out.push('100000'); break; // large: PEXPIRE must not expire mid-test
      case 'double': out.push('0.01'); break;
      case 'unix-time': out.push('1'); break;
      case 'pure-token': break;
      case 'oneof': build([(a.arguments as unknown[])[0]], key, out); break;
      case 'block': build(a.arguments as unknown[], key, out); break;
      default: out.push('a');
    }
  }
}

/** Calls whose keys are found at run time or whose flags depend on the arguments. */
const MOVABLE: Call[] = [
  ['XREAD', 'COUNT', '1', 'STREAMS', '@s1', '@s2', '0', '0'],
  ['XREAD', 'STREAMS', '@s1', '0'],
  ['XREAD', 'STREAMS', '@s1', '@s2', '0'],
  ['XGROUP', 'CREATE', '@s1', 'g', '$', 'MKSTREAM'],
  ['XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', '@s1', '>'],
  ['XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', '1', 'STREAMS', '@s1', '@s2', '>', '>'],
  ['LMPOP', '2', '@l1', '@l2', 'LEFT'],
  ['LMPOP', '1', '@l1', '@l2', 'LEFT'],
  ['LMPOP', 'x', '@l1', 'LEFT'],
  ['ZMPOP', '2', '@z1', '@z2', 'MIN'],
  ['BLMPOP', '0.01', '2', '@l1', '@l2', 'LEFT'],
  ['BZMPOP', '0.01', '2', '@z1', '@z2', 'MAX'],
  ['SINTERCARD', '2', '@a1', '@a2'],
  ['ZINTERCARD', '2', '@z1', '@z2', 'LIMIT', '1'],
  ['ZUNION', '2', '@z1', '@z2'],
  ['ZINTER', '2', '@z1', '@z2', 'WITHSCORES'],
  ['ZDIFF', '2', '@z1', '@z2'],
  ['ZUNIONSTORE', '@d1', '2', '@z1', '@z2'],
  ['ZDIFFSTORE', '@d1', '1', '@z1'],
  ['SORT', '@l1', 'STORE', '@d1'],
  ['SORT', '@l1', 'BY', 'nosort', 'LIMIT', '0', '1', 'STORE', '@d1'],
  ['SORT_RO', '@l1'],
  ['GEOADD', '@g1', '13.361389', '38.115556', 'm1'],
  ['GEORADIUS', '@g1', '15', '37', '200', 'km', 'STORE', '@d1'],
  ['GEORADIUS', '@g1', '15', '37', '200', 'km', 'STOREDIST', '@d1'],
  ['GEORADIUSBYMEMBER', '@g1', 'm1', '100', 'km', 'STORE', '@d1'],
  ['GEOSEARCHSTORE', '@d1', '@g1', 'FROMMEMBER', 'm1', 'BYRADIUS', '10', 'km'],
  ['SET', '@k1', 'v', 'GET'],
  ['SET', '@k1', 'v', 'NX'],
  ['BITFIELD', '@b1', 'GET', 'u8', '0'],
  ['BITFIELD', '@b1', 'SET', 'u8', '0', '1'],
  ['BITFIELD_RO', '@b1', 'GET', 'u8', '0'],
  ['LMOVE', '@l1', '@l2', 'LEFT', 'RIGHT'],
  ['COPY', '@k1', '@k2'],
  ['RENAME', '@k1', '@k2'],
  ['SMOVE', '@a1', '@a2', 'm'],
  ['MSET', '@k1', 'v', '@k2', 'v'],
  ['EVAL', 'return 1', '1', '@k1'],
  ['EVAL', 'return 1', '2', '@k1', '@k2'],
  ['EVAL_RO', 'return 1', '1', '@k1'],
  ['EVALSHA', 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db', '1', '@k1'],
  ['FCALL', 'noop', '1', '@k1'],
  ['FCALL_RO', 'noop', '2', '@k1', '@k2'],
  ['PUBLISH', '@c1', 'hello'],
  ['SPUBLISH', '@c1', 'hello'],
  ['PUBSUB', 'NUMSUB', '@c1'],
];

/** Malformed calls: key specs that do not fit fall back to Redis's getkeys procs (atoi...). */
const GETKEYS_EDGES: Call[] = [
  ['PING'], ['NOSUCH'], ['EVAL', 'x', '0'], ['EVAL', 'x', '-1', 'a'], ['ZUNION', '0', 'a'],
  ['ZUNIONSTORE', 'd', '1x', 'a'], ['ZUNIONSTORE', 'd', '+1', 'a'], ['LMPOP', '99999999999999999999', 'a', 'LEFT'],
  ['SPUBLISH', 'a', 'b'], ['XREAD', 'STREAMS', 'a'], ['XREAD', 'COUNT', '1', 'STREAMS', 'a', 'b', 'c'],
  ['XREAD', 'STREAMS', 'a', 'b', 'c'], ['XREADGROUP', 'GROUP', 'streams', 'streams', 'STREAMS', 'streams', '>'],
  ['CONFIG', 'GET', 'x'], ['GEORADIUS', 'k', '0', '0', '1', 'm', 'STORE'],
  ['GEORADIUS', 'k', '0', '0', '1', 'm', 'STORE', 'a', 'STOREDIST', 'b'], ['SORT', 'k', 'STORE'],
  ['SORT', 'k', 'GET', 'store', 'STORE', 'a', 'STORE', 'b'], ['BITFIELD', 'k', 'GET', 'u8'],
  ['BITFIELD', 'k', 'OVERFLOW', 'WRAP', 'GET', 'u8', '0'], ['SET', 'k', 'v', 'get'], ['SET', 'k', 'v', 'EX', '1', 'GETX'],
];

/** The call with '@name' placeholders named inside the user's patterns, or one outside. */
function place(call: Call, prefix: string, outsideAt: number): Call {
  let n = 0;
  return call.map((a) => {
    if (!a.startsWith('@')) return a;
    const outside = n++ === outsideAt;
    return (outside ? 'out:' : prefix) + a.slice(1);
  });
}

/** Restricted users, the same on both servers. */
const USERS: Array<[name: string, rules: string[], prefixes: string[]]> = [
  ['app', ['on', '>pw', '~app:*', '&app:*', '+@all', '-@dangerous'], ['app:']],
  // Reads on app:*, writes only on app:w*: the read/write split of key specs.
  ['rw', ['on', '>pw', '%R~app:*', '%W~app:w*', '&app:*', '+@all', '-@dangerous'], ['app:', 'app:w']],
  // A root that reads app:* and a selector that may only write app:* with @write commands.
  ['sel', ['on', '>pw', '%R~app:*', '&app:*', '+@all', '-@dangerous', '(%W~app:*', '+@write)'], ['app:']],
  // Write-only keys, no channels.
  ['wo', ['on', '>pw', '%W~app:*', 'resetchannels', '+@all', '-@dangerous'], ['app:']],
];

const LIB = "#!lua name=acltest\nredis.register_function('call', function(keys, args) return redis.pcall(unpack(args)) end)\n"
  + "redis.register_function('noop', function(keys, args) return 1 end)";

withBothServers((o, r) => { ours = o; redis = r; });

/** Every row of our table that has keys, as a minimal call from Redis's documentation. */
async function keyedCalls(): Promise<{ calls: Call[]; nondeterministic: Set<string> }> {
  const r = new Redis({ port: redis.port, lazyConnect: true });
  const o = new Redis({ port: ours.port, lazyConnect: true });
  try {
    const docs = pairs(await r.call('COMMAND', 'DOCS'));
    const info = (await r.call('COMMAND')) as unknown[][];
    const nondeterministic = new Set<string>();
    const keyed = new Set<string>();
    const visit = (c: unknown[]) => {
      const tips = (c[7] as string[]) ?? [];
      if (tips.some((t) => t.startsWith('nondeterministic_output'))) nondeterministic.add(String(c[0]));
      if (((c[8] as unknown[]) ?? []).length > 0) keyed.add(String(c[0]));
      for (const s of (c[9] as unknown[][]) ?? []) visit(s);
    };
    for (const c of info) visit(c);
    // Stream IDs made by XADD * are times.
    nondeterministic.add('xinfo|stream');
    // Our rows (COMMAND LIST of ours) that Redis documents with keys.
    const oursNames = new Set<string>();
    const list = (await o.call('COMMAND', 'LIST')) as string[];
    for (const n of list) oursNames.add(n.toLowerCase());
    const calls: Call[] = [];
    const add = (name: string, doc: Doc, prefix: string[]) => {
      if (keyed.has(name) && (oursNames.has(name) || oursNames.has(name.split('|')[0]))) {
        let k = 0;
        const call = [...prefix];
        build((doc.arguments as unknown[]) ?? [], () => `@k${++k}`, call);
        calls.push(call);
      }
      const subs = doc.subcommands ? pairs(doc.subcommands) : {};
      for (const [sub, sd] of Object.entries(subs)) add(sub, pairs(sd), [...prefix, sub.split('|')[1]]);
    };
    for (const [name, d] of Object.entries(docs)) add(name, pairs(d), [name]);
    calls.sort((a, b) => a.join(' ').localeCompare(b.join(' ')));
    return { calls, nondeterministic };
  } finally {
    r.disconnect();
    o.disconnect();
  }
}

function show(b: Buffer): string {
  return JSON.stringify(b.toString('latin1'));
}


describe('ACL key and channel permissions, differential against redis-server', () => {
  it('every keyed command, directly, in EVAL and in FCALL, keys inside and outside the patterns', async () => {
    const { calls, nondeterministic } = await keyedCalls();
    assert.ok(calls.length > 150, `only ${calls.length} keyed commands found`);
    const all = [...calls, ...MOVABLE];
    const admins = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    const mismatches: string[] = [];
    let denied = 0;
    const same = async (what: string, fn: (c: RawClient, i: number) => Promise<Buffer>, cmdName: string) => {
      const [a, b] = [await fn(cAll[0], 0), await fn(cAll[1], 1)];
      if (b.includes('NOPERM') || b.includes('The user executing the script')) denied++;
      if (a.equals(b)) return;
      const perm = a.includes('NOPERM') || b.includes('NOPERM') || a.includes("can't") || b.includes("can't");
      if (!perm && nondeterministic.has(cmdName) && a[0] === b[0]) return;
      mismatches.push(`${what}\n    ours:  ${show(a).slice(0, 300)}\n    redis: ${show(b).slice(0, 300)}`);
    };
    let cAll: RawClient[] = admins;
    try {
      for (const a of admins) {
        assert.equal((await a.call('FUNCTION', 'LOAD', 'REPLACE', LIB)).toString(), '$7\r\nacltest\r\n');
        for (const [name, rules] of USERS) assert.equal((await a.call('ACL', 'SETUSER', name, ...rules)).toString(), '+OK\r\n');
      }
      // The users as both servers describe them.
      for (const [name] of USERS) {
        await same(`ACL GETUSER ${name}`, async (c) => {
          const r = await c.call('ACL', 'GETUSER', name);
          return r;
        }, 'acl|getuser');
      }
      await same('ACL LIST', (c) => c.call('ACL', 'LIST'), 'acl|list');

      // Key extraction: COMMAND GETKEYSANDFLAGS of every call.
      for (const call of [...all, ...GETKEYS_EDGES]) {
        const args = place(call, 'app:', -1);
        await same(`COMMAND GETKEYSANDFLAGS ${args.join(' ')}`, (c) => c.call('COMMAND', 'GETKEYSANDFLAGS', ...args), 'command');
      }

      for (const [name, , prefixes] of USERS) {
        const users = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
        for (const u of users) assert.equal((await u.call('AUTH', name, 'pw')).toString(), '+OK\r\n');
        for (const a of admins) { await a.call('FLUSHALL'); await a.call('ACL', 'LOG', 'RESET'); }
        try {
          for (const call of all) {
            const sub = `${call[0]}|${call[1]}`.toLowerCase();
            const cmdName = nondeterministic.has(sub) ? sub : call[0].toLowerCase();
            const nkeys = call.filter((a) => a.startsWith('@')).length;
            const variants: Call[] = [];
            for (const p of prefixes) variants.push(place(call, p, -1));
            if (nkeys > 0) variants.push(place(call, prefixes[0], nkeys - 1));
            if (nkeys > 1) variants.push(place(call, prefixes[0], 0));
            for (const v of variants) {
              const text = `${name}: ${v.join(' ')}`;
              cAll = users;
              await same(text, (c) => c.call(...v), cmdName);
              await same(`${text} (in EVAL)`, (c) => c.call('EVAL', 'return redis.pcall(unpack(ARGV))', '0', ...v), cmdName);
              await same(`${text} (in FCALL)`, (c) => c.call('FCALL', 'call', '0', ...v), cmdName);
              cAll = admins;
              await same(`${text}: ACL DRYRUN`, (c) => c.call('ACL', 'DRYRUN', name, ...v), cmdName);
              await same(`${text}: ACL LOG`, async (c) => {
                const r = await c.call('ACL', 'LOG', '128');
                await c.call('ACL', 'LOG', 'RESET');
                return Buffer.from(aclLogEntries(r).join('\n'));
              }, 'acl|log');
            }
          }
        } finally {
          for (const u of users) u.close();
        }
      }
    } finally {
      for (const a of admins) a.close();
    }
    // The outside-key variants were refused (the test compares refusals, not only successes).
    assert.ok(denied > 1000, `only ${denied} refusals`);
    assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n  ${mismatches.slice(0, 40).join('\n  ')}`);
  });

  it('the key-spec table is Redis 7.0.15\'s', async () => {
    const r = new Redis({ port: redis.port, lazyConnect: true });
    try {
      const info = (await r.call('COMMAND')) as unknown[][];
      const text = (k: Doc) => {
        const bs = pairs(k.begin_search);
        const bsSpec = pairs(bs.spec);
        const fk = pairs(k.find_keys);
        const fkSpec = pairs(fk.spec);
        const b = bs.type === 'index' ? `index ${bsSpec.index}` : bs.type === 'keyword' ? `keyword ${bsSpec.keyword} ${bsSpec.startfrom}` : 'unknown';
        const f = fk.type === 'range' ? `range ${fkSpec.lastkey} ${fkSpec.keystep} ${fkSpec.limit}`
          : fk.type === 'keynum' ? `keynum ${fkSpec.keynumidx} ${fkSpec.firstkey} ${fkSpec.keystep}` : 'unknown';
        return `${(k.flags as string[]).join(' ')} | ${b} | ${f}` + (k.notes ? ` | ${k.notes}` : '');
      };
      let checked = 0;
      const visit = (c: unknown[]) => {
        const name = String(c[0]);
        const ourSpecs = KEY_SPECS[name];
        if (ourSpecs !== undefined) {
          assert.deepEqual(ourSpecs, ((c[8] as unknown[]) ?? []).map((k) => text(pairs(k))), name);
          checked++;
        }
        for (const sub of (c[9] as unknown[][]) ?? []) visit(sub);
      };
      for (const c of info) visit(c);
      assert.ok(checked > 150, `only ${checked} commands checked`);
      // COMMAND INFO shows them as Redis does.
      const o = new Redis({ port: ours.port, lazyConnect: true });
      try {
        const specsOf = (c: unknown[]): unknown => [c[0], c[8], ((c[9] as unknown[][]) ?? []).map(specsOf)];
        for (const c of info) {
          if (!Object.hasOwn(KEY_SPECS, String(c[0]))) continue;
          const [mine] = (await o.call('COMMAND', 'INFO', String(c[0]))) as unknown[][];
          assert.deepEqual(specsOf(mine), specsOf(c), String(c[0]));
        }
      } finally {
        o.disconnect();
      }
    } finally {
      r.disconnect();
    }
  });

  it('channels over TCP: SUBSCRIBE, PSUBSCRIBE (literal patterns), SSUBSCRIBE, PUBLISH, MULTI and EXEC', async () => {
    const steps: Call[][] = [
      // [user, ...command] steps, each on the user's connection.
      [['SUBSCRIBE', 'app:a', 'app:b']],
      [['SUBSCRIBE', 'app:a', 'out:b']],
      [['PSUBSCRIBE', 'app:*']],
      [['PSUBSCRIBE', 'app:x*']],
      [['PSUBSCRIBE', 'app:*', 'out:*']],
      [['SSUBSCRIBE', 'app:s']],
      [['SSUBSCRIBE', 'out:s']],
      [['PUBLISH', 'out:c', 'm']],
      [['SPUBLISH', 'out:c', 'm']],
      [['MULTI'], ['GET', 'out:k'], ['GET', 'app:k'], ['EXEC']],
      [['MULTI'], ['PUBLISH', 'out:c', 'm'], ['EXEC']],
      [['MULTI'], ['GET', 'app:k'], ['ACL-CHANGE'], ['EXEC']],
    ];
    const mismatches: string[] = [];
    for (const [name, rules] of USERS) {
      for (const step of steps) {
        const conns = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
        const admins = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
        try {
          for (const [i, a] of admins.entries()) {
            await a.call('ACL', 'SETUSER', name, 'reset', ...rules);
            await a.call('ACL', 'LOG', 'RESET');
            await conns[i].call('AUTH', name, 'pw');
          }
          for (const cmd of step) {
            const replies: Buffer[] = [];
            for (const [i, c] of conns.entries()) {
              if (cmd[0] === 'ACL-CHANGE') {
                // The rules change between queueing and EXEC: EXEC re-checks them.
                await admins[i].call('ACL', 'SETUSER', name, 'resetkeys', '~other:*');
                replies.push(Buffer.alloc(0));
                continue;
              }
              c.write(Buffer.from(cmd.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('').replace(/^/, `*${cmd.length}\r\n`)));
              // (P|S)SUBSCRIBE answer once per channel, up to the refusal.
              const n = /SUBSCRIBE$/.test(cmd[0]) ? cmd.length - 1 : 1;
              const parts: Buffer[] = [];
              for (let k = 0; k < n; k++) {
                const r = await c.next(2000);
                parts.push(r);
                if (r[0] === 0x2d) break;
              }
              replies.push(Buffer.concat(parts));
            }
            if (!replies[0].equals(replies[1])) mismatches.push(`${name}: ${cmd.join(' ')}\n    ours:  ${show(replies[0])}\n    redis: ${show(replies[1])}`);
          }
          const logs = await Promise.all(admins.map(async (a) => aclLogEntries(await a.call('ACL', 'LOG')).join('\n')));
          if (logs[0] !== logs[1]) mismatches.push(`${name}: ${step.map((c) => c.join(' ')).join('; ')}: ACL LOG\n    ours:  ${logs[0]}\n    redis: ${logs[1]}`);
        } finally {
          for (const c of [...conns, ...admins]) c.close();
        }
      }
    }
    assert.equal(mismatches.length, 0, mismatches.join('\n  '));
  });

  it('SORT BY and GET patterns need a selector that reads every key', async () => {
    const users: Array<[string, string[]]> = [
      ['s1', ['on', '>pw', '%R~*', '+@all']],
      ['s2', ['on', '>pw', '~app:*', '+@all', '(~* +sort)']],
      ['s3', ['on', '>pw', '~app:*', '+@all', '(~* +get)']],
      ['s4', ['on', '>pw', '%W~*', '~app:*', '+@all']],
      ['s5', ['on', '>pw', '~app:*', '+@all']],
    ];
    const cmds: Call[] = [
      ['RPUSH', 'app:l', '2', '1'], ['SORT', 'app:l', 'BY', 'app:w_*'], ['SORT', 'app:l', 'BY', 'nosort'],
      ['SORT', 'app:l', 'GET', '#'], ['SORT_RO', 'app:l', 'GET', 'app:*'], ['SORT', 'app:l', 'BY', 'app:*', 'STORE', 'app:d'],
    ];
    const mismatches: string[] = [];
    for (const [name, rules] of users) {
      const conns = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
      try {
        for (const c of conns) {
          await c.call('ACL', 'SETUSER', 'default', 'on');
          await c.call('ACL', 'SETUSER', name, 'reset', ...rules);
          await c.call('AUTH', name, 'pw');
        }
        for (const cmd of cmds) {
          const [a, b] = [await conns[0].call(...cmd), await conns[1].call(...cmd)];
          if (!a.equals(b)) mismatches.push(`${name}: ${cmd.join(' ')}\n    ours:  ${show(a)}\n    redis: ${show(b)}`);
        }
      } finally {
        for (const c of conns) c.close();
      }
    }
    assert.equal(mismatches.length, 0, mismatches.join('\n  '));
  });

  it('subscribers whose channels ACL SETUSER revokes are disconnected, as in Redis', async () => {
    const outcome = async (port: number) => {
      const admin = await RawClient.connect(port);
      await admin.call('ACL', 'SETUSER', 'pub', 'reset', 'on', '>pw', '~*', '&app:*', '&keep', '+@all');
      const subs = await Promise.all([0, 1, 2, 3].map(() => RawClient.connect(port)));
      for (const s of subs) await s.call('AUTH', 'pub', 'pw');
      await subs[0].call('SUBSCRIBE', 'app:a');
      await subs[1].call('PSUBSCRIBE', 'app:*');
      await subs[2].call('SUBSCRIBE', 'keep');
      await subs[3].call('PSUBSCRIBE', 'app:b*');
      const seen: string[] = [];
      // Adding a channel revokes nothing; replacing them revokes app:* (and app:b* literally).
      await admin.call('ACL', 'SETUSER', 'pub', '&more');
      await admin.call('ACL', 'SETUSER', 'pub', 'resetchannels', '&app:a', '&keep', '&app:b*');
      for (const s of subs) {
        const alive = await Promise.race([s.call('PING').then(() => 'open', () => 'closed'), s.closed.then(() => 'closed')]);
        seen.push(alive);
        s.close();
      }
      admin.close();
      return seen.join(' ');
    };
    const [a, b] = [await outcome(ours.port), await outcome(redis.port)];
    assert.equal(b, 'open closed open open', 'redis-server itself');
    assert.equal(a, b);
  });

  it('rows Redis 7.0 does not have (hash-field expiry, JSON, XDELEX...): a key outside the patterns is refused', async () => {
    const r = new Redis({ port: redis.port, lazyConnect: true });
    const o = new Redis({ port: ours.port, lazyConnect: true });
    const user = await RawClient.connect(ours.port);
    try {
      const known = new Set(((await r.call('COMMAND')) as unknown[][]).map((c) => String(c[0])));
      const mine = (await o.call('COMMAND')) as unknown[][];
      await o.call('ACL', 'SETUSER', 'app', 'reset', ...USERS[0][1]);
      assert.equal((await user.call('AUTH', 'app', 'pw')).toString(), '+OK\r\n');
      let checked = 0;
      for (const c of mine) {
        const name = String(c[0]);
        const first = Number(c[3]);
        if (known.has(name) || first === 0) continue;
        const arity = Number(c[1]);
        const argv = [name];
        for (let i = 1; i < Math.max(Math.abs(arity), first + 1); i++) argv.push(i === first ? 'out:k' : 'a');
        const reply = (await user.call(...argv)).toString();
        assert.equal(reply, '-NOPERM this user has no permissions to access one of the keys used as arguments\r\n', argv.join(' '));
        const inside = (await user.call(...argv.map((a) => (a === 'out:k' ? 'app:k' : a)))).toString();
        assert.ok(!inside.startsWith('-NOPERM'), `${argv.join(' ')} inside the pattern: ${inside}`);
        checked++;
      }
      assert.ok(checked >= 30, `only ${checked} rows checked`);
    } finally {
      user.close();
      r.disconnect();
      o.disconnect();
    }
  });
});
