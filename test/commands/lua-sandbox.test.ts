/**
 * The Lua sandbox seen from several clients (issue 16, point 3), on both servers: one client
 * tries every way to poison the scripts of the others (overwrite redis.call, a library, a
 * global; through EVAL, EVALSHA, EVAL_RO, FCALL and FUNCTION LOAD), and the next client's
 * EVAL and FCALL still see the real API, also after SCRIPT FLUSH and FUNCTION FLUSH. Replies
 * deeper than Redis's Lua stack limit (read here with an iterative RESP reader: the shared one
 * recurses), and ours' bounds where Redis has none (string.rep).
 * The script-by-script replies are compared byte for byte in test/diff/cases/lua-sandbox.ts.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { IoClients } from '../helpers/io.js';

let ours: Proc;
let redis: Proc;
const clients = new IoClients();

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
});
after(async () => {
  clients.closeAll();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

const io = (port: number): Redis => clients.io(port);

async function outcome<T>(p: Promise<T>): Promise<T | string> {
  try {
    return await p;
  } catch (e) {
    return `ERR:${(e as Error).message}`;
  }
}

/** Lua that spins for about `ms` milliseconds (TIME is allowed in scripts), then goes on. */
const spin = (ms: number) => `local t = redis.call('time') local t0 = t[1] * 1000 + t[2] / 1000 local i = 0
while true do
  i = i + 1
  if i % 100000 == 0 then t = redis.call('time') if t[1] * 1000 + t[2] / 1000 - t0 > ${ms} then break end end
end`;

/** Attempts to change what later scripts see: every one must fail and change nothing. */
const POISON = [
  "redis.call = function() return 'pwned' end",
  "rawset(redis, 'call', function() return 'pwned' end)",
  "redis.pcall = redis.call",
  "cjson.encode = function() return 'pwned' end",
  "rawset(cjson, 'encode', 1)",
  'cmsgpack.pack = nil',
  'bit.band = nil',
  'struct.pack = nil',
  "string.rep = function() return 'pwned' end",
  "getmetatable('').__index = { rep = function() return 'pwned' end }",
  "rawset(getmetatable(''), '__index', {})",
  'table.insert = nil',
  'math.floor = nil',
  'tostring = nil',
  "rawset(_G, 'tostring', nil)",
  "rawset(_G, 'pwned', 1)",
  'pwned = 1',
  "_G.redis = { call = function() return 'pwned' end }",
  'setmetatable(_G, nil)',
  'setmetatable(redis, { __index = function() return nil end })',
  "table.insert(redis, 'pwned')",
  "table.insert(_G, 'pwned')",
  "loadstring('redis.call = nil')()",
  "load(function() return nil end)() redis.call = nil",
  "local co = coroutine.wrap(function() redis.call = nil end) co()",
];

/** What the victim's script returns when the API is intact. */
const CHECK = "return {redis.call('set', KEYS[1], 'v'), redis.call('get', KEYS[1]), redis.pcall('get', KEYS[1]), " +
  "cjson.encode({1}), tostring(bit.band(7, 3)), string.rep('ab', 2), ('x'):rep(2), math.floor(2.5), " +
  "type(cmsgpack.pack), type(struct.pack), tostring(rawget(_G, 'pwned')), #redis, type(table.insert), tostring(#_G)}";
const EXPECTED = ['OK', 'v', 'v', '[1]', '3', 'abab', 'xx', 2, 'function', 'function', 'nil', 0, 'function', '0'];
const LIB = `#!lua name=victim\nredis.register_function('check', function(keys, args) ${CHECK.replace(/KEYS/g, 'keys')} end)`;

for (const which of ['ours', 'redis'] as const) {
  describe(`Lua sandbox across clients (${which})`, () => {
    const port = () => (which === 'ours' ? ours : redis).port;

    it('a poisoning attempt by one client leaves the next client\'s EVAL and FCALL intact, also after SCRIPT FLUSH and FUNCTION FLUSH', async () => {
      const admin = io(port());
      await admin.function('FLUSH');
      await admin.script('FLUSH');
      await admin.function('LOAD', LIB);
      const attacker = io(port());
      for (const p of POISON) {
        const r = await outcome(attacker.eval(p, 0));
        assert.match(String(r), /^ERR:/, `${p} was allowed: ${String(r)}`);
        const sha = String(await attacker.script('LOAD', p));
        assert.match(String(await outcome(attacker.evalsha(sha, 0))), /^ERR:/, `EVALSHA ${p}`);
        assert.match(String(await outcome(attacker.call('EVAL_RO', p, '0'))), /^ERR:/, `EVAL_RO ${p}`);
      }
      // Allowed, as in Redis, and harmless: cjson.new() is a copy.
      assert.equal(await attacker.eval('local c = cjson.new() c.encode = nil return 1', 0), 1);
      // The same attempts from inside a function, at load time and at call time.
      const bodies = POISON.map((p, i) => `redis.register_function('p${i}', function() ${p} end)`).join('\n');
      assert.equal(await attacker.function('LOAD', `#!lua name=poison\n${bodies}`), 'poison');
      for (let i = 0; i < POISON.length; i++) {
        assert.match(String(await outcome(attacker.fcall(`p${i}`, 0))), /^ERR:/, `FCALL ${POISON[i]}`);
      }
      for (const p of ['redis.register_function = nil', "rawset(_G, 'pwned', 1)", 'pwned = 1']) {
        assert.match(String(await outcome(attacker.function('LOAD', `#!lua name=poison2\n${p}`))), /^ERR:/);
      }

      const check = async (label: string) => {
        const victim = io(port());
        assert.deepEqual(await victim.eval(CHECK, 1, 'k'), EXPECTED, `EVAL ${label}`);
        assert.deepEqual(await victim.fcall('check', 1, 'k2'), EXPECTED, `FCALL ${label}`);
        assert.deepEqual(await victim.call('FCALL_RO', 'check', '1', 'k3').catch(() => 'refused'), 'refused');
        victim.disconnect();
      };
      await check('after the attempts');
      await admin.script('FLUSH');
      await check('after SCRIPT FLUSH');
      await admin.function('FLUSH');
      assert.match(String(await outcome(admin.fcall('check', 1, 'k'))), /Function not found/);
      await admin.function('LOAD', LIB);
      await check('after FUNCTION FLUSH');
      await admin.function('RESTORE', await admin.callBuffer('FUNCTION', 'DUMP') as Buffer, 'FLUSH');
      await check('after FUNCTION RESTORE FLUSH');
      await admin.function('FLUSH');
    });

    it('the sandbox holds for long scripts too (ours moves them to its worker thread), before and after the flushes', async () => {
      const c = io(port());
      await c.set('k', 'v');
      // Read-only, past 100 ms: ours runs the rest of it in the worker's Lua state.
      const long = (tail: string) => `${spin(200)}\n${tail}`;
      assert.equal(await c.eval(long("return redis.call('get', 'k')"), 0), 'v');
      assert.match(String(await outcome(c.eval(long('redis.call = nil return 1'), 0))), /Attempt to modify a readonly table/);
      assert.match(String(await outcome(c.eval(long("rawset(_G, 'pwned', 1) return 1"), 0))), /Attempt to modify a readonly table/);
      await c.script('FLUSH');
      assert.equal(await c.eval(long("return redis.call('get', 'k') .. tostring(rawget(_G, 'pwned'))"), 0), 'vnil');
      await c.function('LOAD', 'REPLACE', `#!lua name=longlib\nredis.register_function{function_name='long', callback=function() ${spin(200)} return redis.call('get', 'k') end, flags={'no-writes'}}`);
      assert.equal(await c.fcall('long', 0), 'v');
      await c.function('FLUSH');
      await c.function('LOAD', `#!lua name=longlib\nredis.register_function{function_name='long', callback=function() ${spin(200)} return type(redis.call) end, flags={'no-writes'}}`);
      assert.equal(await c.fcall('long', 0), 'function');
      await c.function('FLUSH');
    });

    it('replies nested past the Lua stack limit end in "reached lua stack limit", the connection stays usable', async () => {
      const cases: [string, number, string][] = [
        ['local a = {}; local b = {a}; a[1] = b; return a', 7995, '-ERR reached lua stack limit\r\n'],
        ["local t = 'leaf' for i=1,7995 do t = {t} end return t", 7995, '-ERR reached lua stack limit\r\n'],
        ["local t = 'leaf' for i=1,7994 do t = {t} end return t", 7994, '$4\r\nleaf\r\n'],
      ];
      for (const [script, arrays, tail] of cases) {
        const r = await rawEval(port(), script);
        assert.equal(r.arrays, arrays, script);
        assert.ok(r.text.endsWith(tail), `${script}: ${JSON.stringify(r.text.slice(-40))}`);
      }
      assert.equal(await io(port()).ping(), 'PONG');
    });
  });
}

describe('Lua sandbox: bounds of ours where Redis has none', () => {
  it('string.rep of a huge result is refused as a memory error, fast, and the server goes on', async () => {
    const c = io(ours.port);
    for (const n of ['1e10', '2^31 - 1', '2^29']) {
      assert.deepEqual(await c.eval(`return {pcall(string.rep, 'x', ${n})}`, 0), [null, 'not enough memory'], n);
    }
    assert.equal(await c.eval("return #string.rep('ab', 2^20 + 3)", 0), 2 * (2 ** 20 + 3));
    assert.equal(await io(ours.port).ping(), 'PONG');
  });

  it('deep cmsgpack and cjson values reach the script (nesting bounded by the data, not by Lua registers)', async () => {
    const c = io(ours.port);
    const depth = "local d = 0 while type(v) == 'table' do d = d + 1 v = v[1] end return d";
    assert.equal(await c.eval(`local v = cmsgpack.unpack(string.rep('\\145', 3999) .. '\\192') ${depth}`, 0), 3999);
    assert.equal(await c.eval(`local v = cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)) ${depth}`, 0), 1000);
  });
});

/** EVAL over a raw socket; the reply read iteratively (count of *1 headers, its text). */
function rawEval(port: number, script: string): Promise<{ arrays: number; text: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    const body = Buffer.from(script);
    s.write(`*3\r\n$4\r\nEVAL\r\n$${body.length}\r\n${script}\r\n$1\r\n0\r\n`);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error('no complete reply'));
    }, 20000);
    s.on('data', (d) => {
      chunks.push(d);
      const buf = Buffer.concat(chunks);
      if (!complete(buf)) return;
      clearTimeout(timer);
      s.destroy();
      const text = buf.toString('latin1');
      resolve({ arrays: text.split('*1\r\n').length - 1, text });
    });
    s.on('error', reject);
  });
}

function complete(b: Buffer): boolean {
  let p = 0;
  let need = 1;
  while (need > 0) {
    const nl = b.indexOf('\r\n', p);
    if (nl < 0) return false;
    const n = Number(b.toString('latin1', p + 1, nl));
    need--;
    if (b[p] === 0x2a) need += Math.max(n, 0);
    else if (b[p] === 0x24 && n >= 0) {
      if (b.length < nl + 2 + n + 2) return false;
      p = nl + 2 + n + 2;
      continue;
    }
    p = nl + 2;
  }
  return true;
}
