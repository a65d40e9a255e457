/**
 * ACL command rules, differential against a real redis-server 7.0.15:
 * - how ACL LIST and ACL GETUSER describe overlapping category and command rules (Redis 7.0
 *   works the text out from the command bits: best-fit categories, then single commands), and
 *   that the bits behind them match (ACL DRYRUN of every command both servers have);
 * - "+cmd|sub" and first-argument rules ("+select|0"): ACL SETUSER's errors, enforcement
 *   directly, in scripts, in MULTI/EXEC, in ACL DRYRUN, and the ACL LOG entries;
 * - ACL LOG entries of refusals over REST (commands, keys, channels, SSE /subscribe,
 *   /psubscribe, /ssubscribe and /monitor), against the same refusals over TCP on Redis.
 *
 * Redis lists the single-command rules in the hash order of its command dict, which is random
 * per process: those are compared as a set, the rest in order.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { aclLogEntries, arrayElements, replyText } from './harness.js';
import { Rest, TOKEN_ARGS } from '../http/rest-helpers.js';

let ours: Proc;
let redis: Proc;

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no', ...TOKEN_ARGS]), startRedis()]);
});
after(async () => {
  await Promise.all([ours?.stop(), redis?.stop()]);
});

function show(b: Buffer | string): string {
  return JSON.stringify(typeof b === 'string' ? b : b.toString('latin1'));
}

/** Redis's rows (COMMAND, subcommands as "parent|sub"), set by the first test. */
let redisRows = new Set<string>();

/** A single-command rule about a row Redis 7.0.15 has (not one of our later additions). */
function redisKnows(rule: string): boolean {
  const name = rule.slice(1);
  const top = name.split('|')[0];
  if (redisRows.has(name)) return true;
  // "+select|0": a first argument of a command without subcommands.
  return redisRows.has(top) && ![...redisRows].some((r) => r.startsWith(top + '|'));
}

/**
 * Runs of single-command rules ("+get", "-config|set", "+select|0") sorted in place, in the
 * root rules and inside each "(...)" selector; rules about rows Redis lacks (our hash-field
 * expiry, JSON, search... commands) are left out.
 */
function sortSingles(line: string): string {
  const groups = line.match(/\([^)]*\)|[^()]+/g) ?? [];
  return groups.map((g) => {
    const inner = g.startsWith('(');
    const out: string[] = [];
    let run: string[] = [];
    for (const tok of (inner ? g.slice(1, -1) : g).split(' ')) {
      if (/^[+-][^@]/.test(tok)) {
        if (redisKnows(tok)) run.push(tok);
        continue;
      }
      out.push(...run.sort(), tok);
      run = [];
    }
    out.push(...run.sort());
    return inner ? `(${out.join(' ')})` : out.join(' ');
  }).join('');
}

/** The client-info field of each ACL LOG entry. */
function logClientInfo(reply: Buffer): string[] {
  return (arrayElements(reply) ?? []).map((e) => {
    const f = arrayElements(e)!.map(replyText);
    return f[f.indexOf('client-info') + 1];
  });
}

/** Our user's line of ACL LIST, as text. */
async function listLine(c: RawClient, name: string): Promise<string> {
  const lines = (arrayElements(await c.call('ACL', 'LIST')) ?? []).map(replyText);
  return lines.find((l) => l.startsWith(`user ${name} `)) ?? '';
}

/** GETUSER's commands field, root and selectors. */
async function getuserCommands(c: RawClient, name: string): Promise<string[]> {
  const f = (arrayElements(await c.call('ACL', 'GETUSER', name)) ?? []).map((b) => b);
  const out: string[] = [];
  const text = replyText;
  for (let i = 0; i + 1 < f.length; i += 2) {
    const k = text(f[i]);
    if (k === 'commands') out.push(text(f[i + 1]));
    if (k === 'selectors') {
      for (const s of arrayElements(f[i + 1]) ?? []) {
        const sf = arrayElements(s) ?? [];
        for (let j = 0; j + 1 < sf.length; j += 2) if (text(sf[j]) === 'commands') out.push(text(sf[j + 1]));
      }
    }
  }
  return out;
}

/** Overlapping rules, including rows only one of the two tables has. */
const RULE_SETS: string[][] = [
  ['-@all', '+@set', '+@sortedset', '+@list', '+@hash', '-@write'],
  ['+@all', '-@hash'],
  ['-@all', '+@hash', '+@read'],
  ['-@all', '+cluster', '+module|list'],
  ['+@all', '-cluster|info', '-failover'],
  ['-@all', '+@admin', '+@fast'],
  ['-@all', '+failover|x', '+lolwut', '+cluster|nodes'],
  ['-@all', '+@admin', '-cluster', '+cluster|info'],
  ['+@all', '-@dangerous', '+flushall'],
  ['-@all', '+@read', '-get', '+@string'],
  ['+@hash', '-hset'],
  ['allcommands', 'nocommands', '+get'],
  ['-@all', '+@hash', '-hset', '+@hash'],
  ['-@all', '+get', '+@string', '-@read'],
  ['+@all', '-get', '+@read'],
  ['+@all', '-@dangerous'],
  ['+@all', '-@dangerous', '+@write', '-@read'],
  ['+@read', '-@write'],
  ['-@all', '+@read', '+@write'],
  ['+@all', '-@read', '-@write'],
  ['+@all', '-@keyspace'],
  ['-@all', '+@keyspace', '+@string', '-del'],
  ['-@all', '+@slow'],
  ['-@all', '+@fast'],
  ['+@all', '-@slow'],
  ['-@all', '+@admin', '-config|set'],
  ['-@all', '+config|get', '+config|set'],
  ['+@all', '-config'],
  ['+@all', '-config', '+config|get'],
  ['-@all', '+config', '-config|set', '-config|rewrite'],
  ['-@all', '+client|list', '+client|info'],
  ['-@all', '+select|0', '+select|1'],
  ['-@all', '+select|0', '+@connection'],
  ['+@all', '-select', '+select|0'],
  ['-@all', '+select|0', '-select'],
  ['-@all', '+select|0', '+SELECT|0', '+debug|object', '+Select|Ab'],
  ['+@all', '-@connection', '+select|9', '-@all', '+get'],
  ['-@all', '+@pubsub', '-publish'],
  ['-@all', '+@scripting', '-eval'],
  ['+@all', '-@scripting', '+eval'],
  ['-@all', '+@transaction', '+@stream'],
  ['+@all', '-@blocking'],
  ['-@all', '+@geo', '+@bitmap', '+@hyperloglog'],
  ['-@all', '+@dangerous'],
  ['+@all', '-@admin', '-@dangerous'],
  ['-@all', '+@connection', '-auth'],
  ['-@all', '+acl', '+@read'],
  ['-@all', '+acl', '-acl|setuser'],
  ['+@all', '-acl|setuser', '-config|set', '-client|kill'],
  ['-@all', '+@string', '+@list', '-@write', '+lpush'],
  ['+@all', '-@string', '-@list', '+@read'],
  ['-@all', '+@read', '(-@all', '+@write', '-del)', '(+@all', '-@admin)'],
  ['nocommands', '+@set', '+@sortedset'],
  ['+@all', '-@write', '+set', '+select|0'],
];

/** ACL SETUSER rules with Redis's errors (or OK) for command, subcommand and first-arg forms. */
const SETUSER_EDGES: string[][] = [
  ['+'], ['-'], ['+select|0'], ['+SELECT|Ab'], ['-select|0'], ['+select|'], ['+config|'], ['-config|'],
  ['+config|get|x'], ['-config|get|x'], ['+config|foo'], ['+CONFIG|GET'], ['-config|set'], ['+|x'], ['+get|x|y'],
  ['+select|0|1'], ['+@all|x'], ['+client|list'], ['+debug|object'], ['+acl|cat|x'], ['+@'], ['-@'], ['+@READ'],
  ['+get\0x'], ['+select|a\0b'], ['+nosuch|x'], ['-nosuch'], ['+@nosuch'], ['(+select|0 ~x)'], ['(+config|get|x)'],
  ['+select|0', '+select|1', '-@all', '+select|2'],
  // Empty rules, selectors over several arguments, sdssplitargs quoting inside a selector, C strings.
  [''], ['on', ''], ['(a', '(~b', '+get)'], ['(~x', '', '+get)'], ['('], ['(', 'x'], ['()'], ['(~a)', 'x)'],
  ['(~x "+get")', "(~y 'unbalanced)", '(~z "+set" +@read)', '(~w "\\x2bget")'], ['(~q "a"b)'],
  ['+cluster|info'], ['+cluster|nosuch'], ['+module|list|x'], ['+failover|x'], ['-lolwut|x'],
  ['on\0x', 'allkeys\0y', 'nopass\0'], ['\0abc'], ['(~k +get\0x)'], ['(~k', '+get\0x', '+set)'],
];

describe('ACL command rules, differential against redis-server', () => {
  it('ACL LIST and ACL GETUSER describe overlapping rules as Redis 7.0.15 does, and the bits agree (ACL DRYRUN of every command)', async () => {
    const cs = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    const mismatches: string[] = [];
    try {
      // Every command and subcommand both servers have, with enough arguments for its arity.
      const tables = await Promise.all(cs.map(async (c) => {
        const rows = new Map<string, number>();
        const visit = (entry: Buffer) => {
          const f = arrayElements(entry)!;
          rows.set(replyText(f[0]), Number(replyText(f[1])));
          for (const s of arrayElements(f[9]) ?? []) visit(s);
        };
        for (const e of arrayElements(await c.call('COMMAND')) ?? []) visit(e);
        return rows;
      }));
      const calls: string[][] = [];
      redisRows = new Set(tables[1].keys());
      for (const [name, arity] of tables[1]) {
        if (!tables[0].has(name)) continue;
        const call = name.split('|');
        while (call.length < Math.abs(arity)) call.push('a');
        calls.push(call);
      }
      assert.ok(calls.length > 300, `only ${calls.length} commands`);

      for (const rules of RULE_SETS) {
        const label = rules.join(' ');
        const set = await Promise.all(cs.map((c) => c.call('ACL', 'SETUSER', 'r', 'reset', 'on', '~*', '&*', ...rules)));
        if (!set[0].equals(set[1])) {
          mismatches.push(`${label}: SETUSER\n    ours:  ${show(set[0])}\n    redis: ${show(set[1])}`);
          continue;
        }
        const lines = await Promise.all(cs.map((c) => listLine(c, 'r')));
        if (sortSingles(lines[0]) !== sortSingles(lines[1])) mismatches.push(`${label}: ACL LIST\n    ours:  ${lines[0]}\n    redis: ${lines[1]}`);
        const gu = await Promise.all(cs.map((c) => getuserCommands(c, 'r')));
        if (gu[0].map(sortSingles).join(' | ') !== gu[1].map(sortSingles).join(' | ')) {
          mismatches.push(`${label}: GETUSER commands\n    ours:  ${gu[0].join(' | ')}\n    redis: ${gu[1].join(' | ')}`);
        }
        // Our description, applied to a fresh user, gives the same description (it rebuilds the bits).
        const described = lines[0].replace(/^user r /, '');
        const args = described.replace(/\(([^)]*)\)/g, (m) => m.replace(/ /g, '\u0001')).split(' ').map((x) => x.replace(/\u0001/g, ' '));
        await cs[0].call('ACL', 'SETUSER', 'r2', 'reset', ...args);
        const again = (await listLine(cs[0], 'r2')).replace(/^user r2 /, '');
        if (again !== described) mismatches.push(`${label}: our description does not rebuild itself\n    first: ${described}\n    again: ${again}`);
        for (const call of calls) {
          const d = await Promise.all(cs.map((c) => c.call('ACL', 'DRYRUN', 'r', ...call)));
          if (!d[0].equals(d[1])) mismatches.push(`${label}: DRYRUN ${call.join(' ')}\n    ours:  ${show(d[0])}\n    redis: ${show(d[1])}`);
        }
      }
      for (const c of cs) await c.call('ACL', 'DELUSER', 'r', 'r2');
    } finally {
      for (const c of cs) c.close();
    }
    assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n  ${mismatches.slice(0, 40).join('\n  ')}`);
  });

  it('ACL SETUSER accepts and refuses subcommand and first-arg rules as Redis does', async () => {
    const cs = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    const mismatches: string[] = [];
    try {
      for (const rules of SETUSER_EDGES) {
        const r = await Promise.all(cs.map((c) => c.call('ACL', 'SETUSER', 'e', 'reset', ...rules)));
        if (!r[0].equals(r[1])) mismatches.push(`${show(rules.join(' '))}: ${show(r[0])} / redis ${show(r[1])}`);
        const l = await Promise.all(cs.map((c) => listLine(c, 'e')));
        if (sortSingles(l[0]) !== sortSingles(l[1])) mismatches.push(`${show(rules.join(' '))}: ACL LIST\n    ours:  ${l[0]}\n    redis: ${l[1]}`);
      }
      for (const c of cs) await c.call('ACL', 'DELUSER', 'e');
    } finally {
      for (const c of cs) c.close();
    }
    assert.equal(mismatches.length, 0, mismatches.join('\n  '));
  });

  it('subcommand and first-arg rules hold directly, in EVAL, in MULTI/EXEC and in ACL DRYRUN, with Redis\'s ACL LOG entries', async () => {
    const USERS: Array<[string, string[]]> = [
      ['f1', ['~*', '&*', '-@all', '+select|0', '+debug|object', '+client|list', '+config|get', '+get', '+eval', '+multi', '+exec', '+ping']],
      ['f2', ['~*', '&*', '+@all', '-config|set', '-client|kill', '-select', '+select|1', '-debug', '+debug|sleep']],
      ['f3', ['~app:*', '&*', '-@all', '+@read', '+select|0', '+eval', '+multi', '+exec', '(~*', '+set', '+select|2', '+config|get)']],
      ['f4', ['~*', '&*', '+@all', '-@connection', '+select|0', '+client|id', '+auth']],
    ];
    // Replies that differ by nature between two servers (client lists): compared by type.
    const byType = (call: string[]) => /^client$/i.test(call[0]) && /^(list|info|id)$/i.test(call[1] ?? '');
    const CALLS: string[][] = [
      ['SELECT', '0'], ['SELECT', '1'], ['SELECT', '2'], ['select', '00'], ['SELECT', '0', 'x'],
      ['CONFIG', 'GET', 'maxmemory'], ['CONFIG', 'SET', 'maxmemory', '0'], ['CONFIG', 'RESETSTAT'],
      ['CLIENT', 'LIST'], ['CLIENT', 'KILL', 'ID', '999999'], ['CLIENT', 'ID'], ['CLIENT', 'SETNAME', 'x'],
      ['DEBUG', 'OBJECT', 'nokey'], ['DEBUG', 'SLEEP', '0'], ['GET', 'k'], ['SET', 'k', 'v'], ['SET', 'app:k', 'v'], ['PING'],
    ];
    const mismatches: string[] = [];
    const admins = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    try {
      for (const [name, rules] of USERS) {
        for (const a of admins) {
          assert.equal((await a.call('ACL', 'SETUSER', name, 'reset', 'on', '>pw', ...rules)).toString(), '+OK\r\n', name);
          await a.call('ACL', 'LOG', 'RESET');
        }
        const lists = await Promise.all(admins.map((a) => listLine(a, name)));
        if (sortSingles(lists[0]) !== sortSingles(lists[1])) mismatches.push(`${name}: ACL LIST\n    ours:  ${lists[0]}\n    redis: ${lists[1]}`);
        const users = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
        try {
          for (const u of users) assert.equal((await u.call('AUTH', name, 'pw')).toString(), '+OK\r\n');
          const same = async (what: string, call: string[], fn: (c: RawClient, i: number) => Promise<Buffer>) => {
            const r = [await fn(users[0], 0), await fn(users[1], 1)];
            if (r[0].equals(r[1])) return;
            if (byType(call) && r[0][0] === r[1][0] && r[0][0] !== 0x2d) return;
            mismatches.push(`${name}: ${what}\n    ours:  ${show(r[0]).slice(0, 300)}\n    redis: ${show(r[1]).slice(0, 300)}`);
          };
          for (const call of CALLS) {
            const text = call.join(' ');
            await same(text, call, (c) => c.call(...call));
            await same(`${text} (in EVAL)`, call, (c) => c.call('EVAL', 'return redis.pcall(unpack(ARGV))', '0', ...call));
            await same(`${text} (in MULTI/EXEC)`, call, async (c) => {
              const parts = [await c.call('MULTI'), await c.call(...call), await c.call('EXEC')];
              return Buffer.concat(parts);
            });
            // Back to db 0 for the next call (SELECT may have moved the connection).
            for (const u of users) await u.call('SELECT', '0');
            const d = await Promise.all(admins.map((a) => a.call('ACL', 'DRYRUN', name, ...call)));
            if (!d[0].equals(d[1])) mismatches.push(`${name}: ACL DRYRUN ${text}\n    ours:  ${show(d[0])}\n    redis: ${show(d[1])}`);
          }
        } finally {
          for (const u of users) u.close();
        }
        const logs = await Promise.all(admins.map(async (a) => aclLogEntries(await a.call('ACL', 'LOG', '128')).join('\n      ')));
        if (logs[0] !== logs[1]) mismatches.push(`${name}: ACL LOG\n    ours:  ${logs[0]}\n    redis: ${logs[1]}`);
      }
      for (const a of admins) await a.call('ACL', 'DELUSER', ...USERS.map(([n]) => n));
    } finally {
      for (const a of admins) a.close();
    }
    assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n  ${mismatches.slice(0, 40).join('\n  ')}`);
  });

  it('refusals over REST (SSE /subscribe, /psubscribe, /ssubscribe, /monitor, commands, keys, channels, scripts, transactions) are logged as Redis logs them over TCP', async () => {
    const USERS: Array<[string, string[]]> = [
      ['ch', ['on', '>pw', '~app:*', 'resetchannels', '&app:*', '+@all', '-@dangerous']],
      ['nosub', ['on', '>pw', '~*', '&*', '-@all', '+get', '+select|0']],
    ];
    // [user, REST request, the same command over TCP]. A REST request is [path] for an SSE
    // endpoint or a command array (POST /), or {multi: [...]} for /multi-exec.
    type Req = string | string[] | { multi: string[][] };
    const STEPS: Array<[string, Req, string[][]]> = [
      ['ch', '/subscribe/app:a/other', [['SUBSCRIBE', 'app:a', 'other']]],
      ['ch', '/psubscribe/app:x*', [['PSUBSCRIBE', 'app:x*']]],
      ['ch', '/psubscribe/app:*/out:*', [['PSUBSCRIBE', 'app:*', 'out:*']]],
      ['ch', '/ssubscribe/out:s', [['SSUBSCRIBE', 'out:s']]],
      ['ch', '/subscribe/app:a/other', [['SUBSCRIBE', 'app:a', 'other']]],
      ['ch', '/monitor', [['MONITOR']]],
      ['nosub', '/subscribe/app:a', [['SUBSCRIBE', 'app:a']]],
      ['nosub', '/psubscribe/app:*', [['PSUBSCRIBE', 'app:*']]],
      ['nosub', '/monitor', [['MONITOR']]],
      ['ch', ['GET', 'other'], [['GET', 'other']]],
      ['ch', ['SET', 'app:k', 'v'], [['SET', 'app:k', 'v']]],
      ['ch', ['PUBLISH', 'other', 'm'], [['PUBLISH', 'other', 'm']]],
      ['ch', ['FLUSHALL'], [['FLUSHALL']]],
      ['ch', ['EVAL', "return redis.pcall('get', 'other')", '0'], [['EVAL', "return redis.pcall('get', 'other')", '0']]],
      ['ch', { multi: [['GET', 'app:k'], ['GET', 'other']] }, [['MULTI'], ['GET', 'app:k'], ['GET', 'other'], ['EXEC']]],
      ['nosub', ['SELECT', '1'], [['SELECT', '1']]],
      ['nosub', ['CONFIG', 'SET', 'maxmemory', '0'], [['CONFIG', 'SET', 'maxmemory', '0']]],
      ['nosub', ['GET', 'k'], [['GET', 'k']]],
    ];
    const admins = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    const tokens = new Map<string, string>();
    try {
      for (const [name, rules] of USERS) {
        for (const a of admins) assert.equal((await a.call('ACL', 'SETUSER', name, 'reset', ...rules)).toString(), '+OK\r\n');
        const t = replyText(await admins[0].call('ACL', 'RESTTOKEN', name, 'pw'));
        tokens.set(name, t);
      }
      for (const a of admins) await a.call('ACL', 'LOG', 'RESET');
      const tcp = new Map<string, RawClient>();
      for (const [name] of USERS) {
        const c = await RawClient.connect(redis.port);
        assert.equal((await c.call('AUTH', name, 'pw')).toString(), '+OK\r\n');
        tcp.set(name, c);
      }
      try {
        for (const [name, req, cmds] of STEPS) {
          const rest = new Rest(`http://127.0.0.1:${ours.httpPort}`, tokens.get(name)!);
          let r;
          if (typeof req === 'string') r = await rest.post(req, '[]');
          else if (Array.isArray(req)) r = await rest.cmd(req);
          else r = await rest.multi(req.multi);
          assert.ok(r.status === 400 || r.status === 200, `${req}: ${r.status} ${r.text}`);
          if (typeof req === 'string') assert.match(r.json.error, /^NOPERM /);
          for (const cmd of cmds) await tcp.get(name)!.call(...cmd);
        }
      } finally {
        for (const c of tcp.values()) c.close();
      }
      const replies = await Promise.all(admins.map((a) => a.call('ACL', 'LOG', '128')));
      const [mine, theirs] = replies.map((r) => aclLogEntries(r));
      assert.ok(theirs.length >= 10, `redis logged ${theirs.length} entries`);
      assert.deepEqual(mine, theirs);
      // The client info of every REST entry has the shape of a REST client's (CLIENT LIST
      // fields, the refused command, the token's user).
      const infos = logClientInfo(replies[0]);
      for (const [i, info] of infos.entries()) {
        const user = /username=(\S+)/.exec(mine[i])![1];
        assert.match(info, new RegExp(`^id=\\d+ addr=0\\.0\\.0\\.0:0 laddr=0\\.0\\.0\\.0:0 fd=-1 name= age=\\d+ idle=\\d+ flags=\\S+ db=0 sub=0 psub=0 ssub=0 .* cmd=\\S+ user=${user} redir=-1 resp=[23]$`));
      }
      assert.ok(infos.some((x) => / cmd=subscribe /.test(x)) && infos.some((x) => / cmd=monitor /.test(x)), infos.join('\n'));
      for (const a of admins) await a.call('ACL', 'DELUSER', ...USERS.map(([n]) => n));
    } finally {
      for (const a of admins) a.close();
    }
  });

  it('the REST tokens run as the default user: its channel and command rules hold for SSE streams, refusals are logged', async () => {
    const admins = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    const rest = new Rest(`http://127.0.0.1:${ours.httpPort}`);
    const ctl = new AbortController();
    try {
      for (const a of admins) {
        assert.equal((await a.call('ACL', 'SETUSER', 'default', 'resetchannels', '&app:*', '-monitor')).toString(), '+OK\r\n');
        await a.call('ACL', 'LOG', 'RESET');
      }
      const CH = 'NOPERM this user has no permissions to access one of the channels used as arguments';
      assert.deepEqual((await rest.post('/subscribe/app:a/other', '[]')).json, { error: CH });
      assert.deepEqual((await rest.post('/psubscribe/app:*x', '[]')).json, { error: CH });
      assert.deepEqual((await rest.post('/monitor', '[]')).json, { error: "NOPERM this user has no permissions to run the 'monitor' command" });
      assert.deepEqual((await rest.cmd(['PUBLISH', 'other', 'm'])).json, { error: CH });
      const tcp = await RawClient.connect(redis.port);
      try {
        for (const cmd of [['SUBSCRIBE', 'app:a', 'other'], ['PSUBSCRIBE', 'app:*x'], ['MONITOR'], ['PUBLISH', 'other', 'm']]) await tcp.call(...cmd);
      } finally {
        tcp.close();
      }
      const logs = await Promise.all(admins.map(async (a) => aclLogEntries(await a.call('ACL', 'LOG'))));
      assert.equal(logs[1].length, 3, 'SUBSCRIBE and PUBLISH of "other" share an entry');
      assert.deepEqual(logs[0], logs[1]);
      // A stream inside the rules opens, and ends when ACL SETUSER takes its channel away.
      const ok = await fetch(`http://127.0.0.1:${ours.httpPort}/subscribe/app:a`, {
        method: 'POST', headers: { authorization: `Bearer ${rest.token}`, accept: 'text/event-stream' }, body: '[]', signal: ctl.signal,
      });
      assert.equal(ok.status, 200);
      const ended = (async () => {
        try {
          for await (const _ of ok.body as unknown as AsyncIterable<Uint8Array>) { /* drain */ }
        } catch { /* aborted */ }
        return 'ended';
      })();
      await admins[0].call('ACL', 'SETUSER', 'default', 'resetchannels', '&app:b');
      assert.equal(await Promise.race([ended, new Promise((r) => setTimeout(() => r('open'), 5000))]), 'ended');
    } finally {
      ctl.abort();
      for (const a of admins) {
        await a.call('ACL', 'SETUSER', 'default', 'allchannels', '+@all');
        a.close();
      }
    }
  });
  it('acllog-max-len bounds ACL LOG at the next entry, as in Redis', async () => {
    const admins = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    const users = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
    try {
      const logs: string[][][] = [[], []];
      for (let s = 0; s < 2; s++) {
        const a = admins[s], u = users[s];
        await a.call('ACL', 'SETUSER', 'limited', 'on', 'nopass', '+get', '~k*');
        await a.call('ACL', 'LOG', 'RESET');
        await u.call('AUTH', 'limited', 'x');
        for (const k of ['x1', 'x2', 'x3']) await u.call('GET', k);
        await a.call('CONFIG', 'SET', 'acllog-max-len', '2');
        logs[s].push(aclLogEntries(await a.call('ACL', 'LOG')));
        await u.call('GET', 'x4');
        logs[s].push(aclLogEntries(await a.call('ACL', 'LOG')));
        await a.call('CONFIG', 'SET', 'acllog-max-len', '0');
        await u.call('GET', 'x5');
        logs[s].push(aclLogEntries(await a.call('ACL', 'LOG')));
        await a.call('CONFIG', 'SET', 'acllog-max-len', '128');
        await a.call('ACL', 'DELUSER', 'limited');
      }
      assert.deepEqual(logs[1].map((l) => l.length), [3, 2, 0], 'redis-server behaves as this test expects');
      assert.deepEqual(logs[0], logs[1]);
    } finally {
      for (const c of [...admins, ...users]) c.close();
    }
  });
});
