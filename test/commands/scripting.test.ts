/**
 * Scripting behaviour that a byte-for-byte differential step cannot show, through ioredis and
 * against both servers where the behaviour is Redis's: a long-running script makes other
 * clients get BUSY, SCRIPT KILL / FUNCTION KILL stop it, a script that wrote cannot be killed,
 * the keyspace stays frozen while a script is busy, the caller's pipelined commands wait for
 * the script; blocking commands in scripts answer as on timeout; FUNCTION DUMP / RESTORE round
 * trips with its policies; ioredis's defineCommand (EVALSHA, then EVAL on NOSCRIPT).
 *
 * Ours runs scripts on the engine thread and moves a read-only one that runs past 100 ms to
 * the worker thread (scripting/host.ts): the long read-only scripts here are moved, math.random's
 * sequence survives the move, a function's library is loaded in the worker when needed. A
 * script that wrote first, or one that cannot move (inside MULTI, called over REST), stays on
 * the engine thread, which answers the other clients from the script's count hook: the same
 * BUSY / UNKILLABLE / SCRIPT KILL / SHUTDOWN NOSAVE behaviour, checked against Redis.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { IoClients } from '../helpers/io.js';

let ours: Proc;
let redis: Proc;
const conns = new IoClients();

before(async () => {
  [ours, redis] = await Promise.all([
    startOurs(['--busy-reply-threshold', '300']),
    startRedis(['--busy-reply-threshold', '300']),
  ]);
});
after(async () => {
  conns.closeAll();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

const io = (port: number): Redis => conns.io(port);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The error message of a rejected promise, or the value. */
async function outcome<T>(p: Promise<T>): Promise<T | string> {
  try {
    return await p;
  } catch (e) {
    return `ERR:${(e as Error).message}`;
  }
}

const LOOP = 'local i = 0 while true do i = i + 1 end';
/** Lua that spins for about `ms` milliseconds (TIME is allowed in scripts), then goes on. */
const spin = (ms: number) => `local t = redis.call('time') local t0 = t[1] * 1000 + t[2] / 1000 local i = 0
while true do
  i = i + 1
  if i % 100000 == 0 then t = redis.call('time') if t[1] * 1000 + t[2] / 1000 - t0 > ${ms} then break end end
end`;

/** Connected clients (ioredis's ready check would meet BUSY if it connected during a script). */
async function clients(port: number, n: number): Promise<Redis[]> {
  const cs = Array.from({ length: n }, () => io(port));
  await Promise.all(cs.map((c) => c.ping()));
  return cs;
}
const BUSY_EVAL = 'ERR:BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.';
const BUSY_FN = 'ERR:BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.';
const UNKILLABLE = 'ERR:UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.';
const KILLED_EVAL = /^ERR Script killed by user with SCRIPT KILL\.\.\. script: [0-9a-f]{40}, on @user_script:1\.$/;

for (const [label, server] of [['ours', () => ours], ['redis', () => redis]] as const) {
  describe(`scripting (${label})`, () => {
    it('a long script makes others get BUSY until SCRIPT KILL', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      await other.set('k', 'before');
      const sha = await other.script('LOAD', LOOP) as string;
      const running = outcome(runner.evalsha(sha, 0));
      await sleep(500);
      assert.equal(await outcome(other.get('k')), BUSY_EVAL);
      assert.equal(await outcome(other.set('k', 'x')), BUSY_EVAL);
      assert.equal(await outcome(other.call('FUNCTION', 'STATS')), BUSY_EVAL);
      assert.equal(await outcome(other.call('FUNCTION', 'KILL')), BUSY_EVAL);
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      assert.equal(await running,
        `ERR:ERR Script killed by user with SCRIPT KILL... script: ${sha}, on @user_script:1.`);
      assert.equal(await other.get('k'), 'before');
      assert.equal(await outcome(other.call('SCRIPT', 'KILL')), 'ERR:NOTBUSY No scripts in execution right now.');
    });

    it('a client waiting before the threshold gets BUSY when it passes', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      const running = outcome(runner.eval(LOOP, 0));
      await sleep(50);
      const t0 = Date.now();
      assert.equal(await outcome(other.ping()), BUSY_EVAL);
      assert.ok(Date.now() - t0 >= 150, 'the PING waited for the threshold');
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      assert.match(String(await running), /Script killed by user/);
    });

    it('the caller\'s pipelined commands wait for the script and run after it', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      const pipe = runner.pipeline();
      pipe.eval(LOOP, 0);
      pipe.set('after', '1');
      pipe.get('after');
      const results = pipe.exec();
      await sleep(450);
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      const r = await results;
      assert.ok(r !== null);
      assert.match(String(r[0][0]), /Script killed by user/);
      assert.deepEqual([r[1][1], r[2][1]], ['OK', '1']);
    });

    it('a script that writes after running a while cannot be killed; others get BUSY', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      // Ours: read-only past its engine-thread budget (100 ms), so it is moved to the worker;
      // it writes there, then works past the threshold. Bounded so the test ends by itself.
      const script = `${spin(150)} redis.call('set', 'w', 'started') ${spin(800)} redis.call('set', 'w', 'done') return 7`;
      const running = outcome(runner.eval(script, 0));
      await sleep(450);
      const killed = await outcome(other.call('SCRIPT', 'KILL'));
      assert.match(String(killed), /^ERR:UNKILLABLE Sorry the script already executed write commands/);
      assert.equal(await outcome(other.get('w')), BUSY_EVAL);
      assert.equal(await running, 7);
      assert.equal(await other.get('w'), 'done');
    });

    it('a script that wrote first and runs past the threshold: BUSY, UNKILLABLE, then it completes', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      await other.set('w', 'before');
      // Ours: it wrote at once, so it stays on the engine thread (no move to the worker).
      const script = `redis.call('set', 'w', 'started') ${spin(1000)} redis.call('set', 'w', 'done') return 7`;
      const running = outcome(runner.eval(script, 0));
      await sleep(450);
      assert.equal(await outcome(other.get('w')), BUSY_EVAL);
      assert.equal(await outcome(other.call('SCRIPT', 'KILL')), UNKILLABLE);
      assert.equal(await outcome(other.call('FUNCTION', 'KILL')), UNKILLABLE);
      assert.equal(await outcome(other.call('FUNCTION', 'STATS')), BUSY_EVAL);
      assert.equal(await outcome(other.call('SHUTDOWN')), BUSY_EVAL);
      assert.equal(await outcome(other.call('SHUTDOWN', 'SAVE')), BUSY_EVAL);
      // MULTI is allowed meanwhile, queued commands are refused and EXEC aborts.
      assert.equal(await other.call('MULTI'), 'OK');
      assert.equal(await outcome(other.call('INCR', 'n')), BUSY_EVAL);
      assert.equal(await running, 7);
      assert.equal(await outcome(other.call('EXEC')),
        'ERR:EXECABORT Transaction discarded because of previous errors.');
      assert.equal(await other.get('w'), 'done');
    });

    it('new connections during a busy script get BUSY; they work normally after it', async () => {
      const p = server().port;
      const [runner] = await clients(p, 1);
      const script = `redis.call('set', 'nc', 'started') ${spin(900)} redis.call('set', 'nc', 'done') return 1`;
      for (let round = 0; round < 2; round++) {
        const running = outcome(runner.eval(script, 0));
        await sleep(450);
        // Connected now (no ready check: its INFO would meet BUSY).
        const fresh = new Redis({ port: p, host: '127.0.0.1', enableReadyCheck: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
        fresh.on('error', () => {});
        conns.keep(fresh);
        assert.equal(await outcome(fresh.get('nc')), BUSY_EVAL);
        assert.equal(await outcome(fresh.call('SCRIPT', 'KILL')), UNKILLABLE);
        assert.equal(await running, 1);
        assert.equal(await fresh.get('nc'), 'done');
        assert.equal(await fresh.set('nc2', 'x'), 'OK');
        // Connections made after it are accepted as usual.
        const later = await clients(p, 10);
        assert.deepEqual(await Promise.all(later.map((c) => c.get('nc2'))), Array(10).fill('x'));
      }
    });

    it('a read-only script that cannot move (inside MULTI) is stopped by SCRIPT KILL', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      await other.set('m', 'kept');
      const running = runner.multi().get('m').eval(LOOP, 0).get('m').exec();
      await sleep(450);
      assert.equal(await outcome(other.get('m')), BUSY_EVAL);
      assert.equal(await outcome(other.call('FUNCTION', 'KILL')), BUSY_EVAL);
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      const r = await running;
      assert.ok(r !== null);
      assert.deepEqual([r[0][1], r[2][1]], ['kept', 'kept']);
      assert.match((r[1][0] as Error).message, KILLED_EVAL);
      assert.equal(await outcome(other.call('SCRIPT', 'KILL')), 'ERR:NOTBUSY No scripts in execution right now.');
    });

    it('FCALL that wrote: BUSY with the FUNCTION text, both KILLs UNKILLABLE', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      await other.call('FUNCTION', 'LOAD', 'REPLACE', `#!lua name=wspin
redis.register_function('wspin', function(keys) redis.call('set', keys[1], 'started') ${spin(1000)} redis.call('set', keys[1], 'done') return 'ok' end)`);
      const running = outcome(runner.call('FCALL', 'wspin', '1', 'fw'));
      await sleep(450);
      assert.equal(await outcome(other.get('fw')), BUSY_FN);
      assert.equal(await outcome(other.call('FUNCTION', 'KILL')), UNKILLABLE);
      assert.equal(await outcome(other.call('SCRIPT', 'KILL')), UNKILLABLE);
      assert.equal(await outcome(other.call('SHUTDOWN')), BUSY_FN);
      const stats = await other.call('FUNCTION', 'STATS') as unknown[];
      assert.deepEqual((stats[1] as unknown[]).slice(0, 4), ['name', 'wspin', 'command', ['FCALL', 'wspin', '1', 'fw']]);
      assert.equal(await running, 'ok');
      assert.equal(await other.get('fw'), 'done');
      await other.call('FUNCTION', 'DELETE', 'wspin');
    });

    it('a read-only FCALL inside MULTI is stopped by FUNCTION KILL; SCRIPT KILL refuses', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      await other.call('FUNCTION', 'LOAD', 'REPLACE', `#!lua name=rspin\nredis.register_function('rspin', function() ${LOOP} end)`);
      const running = runner.multi().call('FCALL', 'rspin', '0').exec();
      await sleep(450);
      assert.equal(await outcome(other.ping()), BUSY_FN);
      assert.equal(await outcome(other.call('SCRIPT', 'KILL')), BUSY_FN);
      assert.equal(await other.call('FUNCTION', 'KILL'), 'OK');
      const r = await running;
      assert.ok(r !== null);
      assert.equal((r[0][0] as Error).message, 'ERR Script killed by user with SCRIPT KILL... script: rspin, on @user_function:2.');
      await other.call('FUNCTION', 'DELETE', 'rspin');
    });

    it('a read-only script moved while running keeps its math.random sequence', async () => {
      const c = io(server().port);
      await c.eval('math.randomseed(42)', 0);
      // Ours: the first math.random runs on the engine thread, the script then moves and runs
      // again from its start in the worker; the next script continues the worker's sequence.
      const moved = await c.eval(`local a = math.random(1000000) ${spin(200)} return {a, math.random(1000000)}`, 0);
      const after = await c.eval('return math.random(1000000)', 0);
      assert.deepEqual([moved, after], [[744526, 342702], 111086]);
    });

    it('a moved script passes integer arguments to redis.call as Redis does (%.17g)', async () => {
      const c = io(server().port);
      await c.set('mv:s', 'abc');
      // Ours: the calls after the spin run in the worker (the script is moved and run again there).
      const r = await c.eval(`${spin(200)} redis.call('set', 'mv:n', 1234567890123456)
        return {redis.call('getrange', 'mv:s', 0, 9007199254740991), redis.call('get', 'mv:n'), redis.call('getrange', 'mv:s', 1, 2^53 + 2)}`, 0);
      assert.deepEqual(r, ['abc', '1234567890123456', 'bc']);
    });

    it('FUNCTION KILL stops a function; SCRIPT KILL refuses to; FUNCTION STATS shows it', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      await other.call('FUNCTION', 'LOAD', 'REPLACE', `#!lua name=spin\nredis.register_function('spin', function() ${LOOP} end)`);
      const running = outcome(runner.call('FCALL', 'spin', '0'));
      await sleep(450);
      assert.equal(await outcome(other.get('x')), BUSY_FN);
      assert.equal(await outcome(other.call('SCRIPT', 'KILL')), BUSY_FN);
      const stats = await other.call('FUNCTION', 'STATS') as unknown[];
      const run = stats[1] as unknown[];
      assert.equal(run[0], 'name');
      assert.equal(run[1], 'spin');
      assert.deepEqual(run[3], ['FCALL', 'spin', '0']);
      assert.ok((run[5] as number) >= 300);
      assert.equal(await other.call('FUNCTION', 'KILL'), 'OK');
      assert.equal(await running, 'ERR:ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.');
      await other.call('FUNCTION', 'DELETE', 'spin');
    });

    it('a loop inside a coroutine is killed too', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      const running = outcome(runner.eval(`local co = coroutine.wrap(function() ${LOOP} end) co()`, 0));
      await sleep(450);
      assert.equal(await outcome(other.ping()), BUSY_EVAL);
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      assert.match(String(await running), /^ERR:ERR Script killed by user with SCRIPT KILL\.\.\. script: [0-9a-f]{40}, on @user_script:1\.$/);
    });

    it('pcall cannot swallow a kill', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      const running = outcome(runner.eval('local i = 0 while true do pcall(function() while true do i = i + 1 end end) end', 0));
      await sleep(450);
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      assert.match(String(await running), /^ERR:ERR Script killed by user with SCRIPT KILL\.\.\. script: [0-9a-f]{40}, on @user_script:1\.$/);
    });

    it('blocking commands inside scripts answer as on timeout', async () => {
      const c = io(server().port);
      await c.del('bz');
      assert.equal(await c.eval("return redis.call('bzmpop', 0, 1, 'bz', 'min')", 0), null);
      await c.zadd('bz', 1, 'a');
      assert.deepEqual(await c.eval("return redis.call('bzmpop', 0, 1, 'bz', 'min')", 0), ['bz', [['a', '1']]]);
    });

    it('ioredis defineCommand: EVALSHA, then EVAL on NOSCRIPT', async () => {
      const c = io(server().port);
      await c.script('FLUSH');
      c.defineCommand('incrTwice', { numberOfKeys: 1, lua: "redis.call('incr', KEYS[1]) return redis.call('incr', KEYS[1])" });
      await c.del('ic');
      const cc = c as unknown as { incrTwice(k: string): Promise<number> };
      assert.equal(await cc.incrTwice('ic'), 2);
      assert.equal(await cc.incrTwice('ic'), 4);
    });

    it('FUNCTION DUMP / RESTORE round trip and policies', async () => {
      const c = io(server().port);
      await c.call('FUNCTION', 'FLUSH');
      await c.call('FUNCTION', 'LOAD', "#!lua name=la\nredis.register_function('fa', function() return 'a' end)");
      await c.call('FUNCTION', 'LOAD', "#!lua name=lb\nredis.register_function{function_name='fb', callback=function() return 'b' end, flags={'no-writes'}, description='B'}");
      const dump = await c.callBuffer('FUNCTION', 'DUMP') as Buffer;
      const before = await c.call('FUNCTION', 'LIST', 'WITHCODE');
      assert.match(String(await outcome(c.call('FUNCTION', 'RESTORE', dump))), /^ERR:ERR Library l[ab] already exists$/);
      await c.call('FUNCTION', 'FLUSH');
      assert.equal(await c.call('FUNCTION', 'RESTORE', dump), 'OK');
      const sortLibs = (v: unknown) => (v as unknown[][]).map((l) => JSON.stringify(l)).sort();
      assert.deepEqual(sortLibs(await c.call('FUNCTION', 'LIST', 'WITHCODE')), sortLibs(before));
      assert.equal(await c.call('FCALL_RO', 'fb', '0'), 'b');
      await c.call('FUNCTION', 'LOAD', 'REPLACE', "#!lua name=la\nredis.register_function('fa', function() return 'a2' end)");
      assert.equal(await c.call('FUNCTION', 'RESTORE', dump, 'REPLACE'), 'OK');
      assert.equal(await c.call('FCALL', 'fa', '0'), 'a');
      await c.call('FUNCTION', 'LOAD', "#!lua name=lc\nredis.register_function('fc', function() return 'c' end)");
      assert.equal(await c.call('FUNCTION', 'RESTORE', dump, 'FLUSH'), 'OK');
      assert.equal(await outcome(c.call('FCALL', 'fc', '0')), 'ERR:ERR Function not found');
      const bad = Buffer.from(dump);
      bad[bad.length - 1] ^= 0xff;
      assert.equal(await outcome(c.call('FUNCTION', 'RESTORE', bad)), 'ERR:ERR DUMP payload version or checksum are wrong');
      await c.call('FUNCTION', 'FLUSH');
    });

    it('a read-only script busy with redis.call runs once: each of its calls is counted once', async () => {
      const c = io(server().port);
      await c.set('cs', 'v');
      await c.config('RESETSTAT');
      // Ours: past 100 ms it stays on the engine thread (over one redis.call per ms). Moved, it
      // would run again from its start in the worker (each call a thread crossing there), and
      // the GETs it made before would be counted twice.
      const n = await c.eval(`local n = 0 local t = redis.call('time') local t0 = t[1] * 1000 + t[2] / 1000
        while true do
          for i = 1, 100 do redis.call('get', 'cs') n = n + 1 end
          t = redis.call('time') if t[1] * 1000 + t[2] / 1000 - t0 > 250 then break end
        end
        return n`, 0) as number;
      const calls = Number(/cmdstat_get:calls=(\d+)/.exec(await c.info('commandstats'))![1]);
      assert.ok(n >= 100);
      assert.equal(calls, n);
    });

    it('a read-only script busy with redis.call past the threshold: BUSY, then SCRIPT KILL stops it', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      await other.set('hk', 'v');
      // Ours: not moved (over one redis.call per ms): served from its count hook and calls.
      const running = outcome(runner.eval("local n = 0 while true do redis.call('get', 'hk') n = n + 1 end", 0));
      await sleep(450);
      assert.equal(await outcome(other.get('hk')), BUSY_EVAL);
      assert.equal(await outcome(other.call('FUNCTION', 'KILL')), BUSY_EVAL);
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      assert.match(String(await running), /^ERR:ERR Script killed by user with SCRIPT KILL\.\.\. script: [0-9a-f]{40}, on @user_script:1\.$/);
      assert.equal(await other.get('hk'), 'v');
    });

    it('a moved script that turns busy with redis.call is run back where it started: same results', async () => {
      const c = io(server().port);
      await c.set('mb', 'v');
      await c.eval('math.randomseed(7)', 0);
      // Ours: moved after 100 ms (few calls), then busy with GETs in the worker: stopped there
      // and run again from its start on the engine thread (math.random from the same state).
      const r = await c.eval(`local a = math.random(1000000) ${spin(150)}
        local n, v = 0, nil
        for i = 1, 20000 do v = redis.call('get', 'mb') n = n + 1 end
        return {a, n, v, math.random(1000000)}`, 0);
      const after = await c.eval('return math.random(1000000)', 0);
      assert.deepEqual([r, after], [[266445, 20000, 'v', 682036], 265491]);
    });

    it('a script run back from the worker past the threshold: BUSY meanwhile, then SCRIPT KILL stops it', async () => {
      const p = server().port;
      const [runner, other] = await clients(p, 2);
      await other.set('mb2', 'w');
      // Ours: moved after 100 ms; busy (past 300 ms) in the worker when its GETs begin, so it is
      // run back on the engine thread while its caller waits: the others are served from there.
      const running = outcome(runner.eval(`${spin(350)} local n = 0
        for i = 1, 20000 do if redis.call('get', 'mb2') == 'w' then n = n + 1 end end
        ${LOOP}`, 0));
      await sleep(450);
      assert.equal(await outcome(other.get('mb2')), BUSY_EVAL);
      await sleep(300);
      assert.equal(await outcome(other.get('mb2')), BUSY_EVAL);
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      assert.match(String(await running), /^ERR:ERR Script killed by user with SCRIPT KILL\.\.\. script: [0-9a-f]{40}, on @user_script:/);
      assert.equal(await other.get('mb2'), 'w');
    });

    it('a moved script: arguments and replies past 256 KiB, errors, RESP3 shapes', async () => {
      const c = io(server().port);
      await c.del('mbig', 'mlist', 'mh', 'nokey');
      await c.hset('mh', 'f', 'v');
      // Ours: moved after 100 ms; its calls cross to the engine thread as shared-memory frames,
      // those larger than a frame region (256 KiB) on the message port.
      const r = await c.eval(`${spin(150)}
        local big = string.rep('x', 300000)
        redis.call('set', 'mbig', big)
        local args = {} for i = 1, 7000 do args[i] = string.rep('y', 40) .. i end
        redis.call('rpush', 'mlist', unpack(args))
        local got = redis.call('get', 'mbig')
        local l = redis.call('lrange', 'mlist', 0, -1)
        local e = redis.pcall('incr', 'mbig')
        redis.setresp(3)
        local m = redis.call('hgetall', 'mh')
        local none = redis.call('get', 'nokey')
        return {#got, #l, l[7000], e.err, m.map.f, none == nil and 'nil' or 'not nil', redis.call('strlen', 'mbig')}`, 0);
      assert.deepEqual(r, [300000, 7000, `${'y'.repeat(40)}7000`, 'ERR value is not an integer or out of range', 'v', 'nil', 300000]);
      await c.del('mbig', 'mlist', 'mh');
    });
  });
}

describe('scripting (ours only)', () => {
  it('redis.log lines of a moved script, and of one run back from the worker, are written once', async () => {
    const c = io(ours.port);
    await c.set('lg', 'v');
    const tag = `wklog${Date.now()}`;
    // The first moves to the worker and ends there; the second moves, turns busy with GETs
    // there and is run back on the engine thread (its lines held, then dropped, each time).
    await c.eval(`redis.log(redis.LOG_WARNING, '${tag}-moved') ${spin(150)} redis.log(redis.LOG_WARNING, '${tag}-moved-end') return 1`, 0);
    await c.eval(`redis.log(redis.LOG_WARNING, '${tag}-back') ${spin(150)}
      for i = 1, 20000 do redis.call('get', 'lg') end redis.log(redis.LOG_WARNING, '${tag}-back-end') return 1`, 0);
    // The lines reach our pipe from the process's stdout in their own time (later under load):
    // wait for all four, then a little more, so a second copy of any would be there too.
    const lines = ['moved', 'moved-end', 'back', 'back-end'];
    for (const end = Date.now() + 10_000; Date.now() < end;) {
      const seen = ours.output();
      if (lines.every((line) => new RegExp(`# ${tag}-${line}$`, 'm').test(seen))) break;
      await sleep(50);
    }
    await sleep(200);
    const out = ours.output();
    for (const line of lines) {
      assert.equal(out.match(new RegExp(`# ${tag}-${line}$`, 'gm'))?.length, 1, line);
    }
  });

  it('a FUNCTION DUMP of real Redis restores here', async () => {
    const r = io(redis.port);
    const o = io(ours.port);
    await r.call('FUNCTION', 'FLUSH');
    await r.call('FUNCTION', 'LOAD', `#!lua name=big\n${'-- padding that makes Redis compress the code\n'.repeat(20)}redis.register_function('big', function() return 'big' end)`);
    const dump = await r.callBuffer('FUNCTION', 'DUMP') as Buffer;
    await o.call('FUNCTION', 'FLUSH');
    assert.equal(await o.call('FUNCTION', 'RESTORE', dump), 'OK');
    assert.equal(await o.call('FCALL', 'big', '0'), 'big');
    // And ours restores on real Redis (uncompressed RDB strings, RDB version 10, CRC-64).
    const ourDump = await o.callBuffer('FUNCTION', 'DUMP') as Buffer;
    await r.call('FUNCTION', 'FLUSH');
    assert.equal(await r.call('FUNCTION', 'RESTORE', ourDump), 'OK');
    assert.equal(await r.call('FCALL', 'big', '0'), 'big');
    await Promise.all([r.call('FUNCTION', 'FLUSH'), o.call('FUNCTION', 'FLUSH')]);
  });

  it('a script called over REST cannot move: a TCP client gets BUSY and SCRIPT KILL stops it', async () => {
    const token = 'busy-test-token';
    const srv = await startOurs(['--busy-reply-threshold', '300', '--token', token]);
    try {
      const [other] = await clients(srv.port, 1);
      const rest = fetch(`http://127.0.0.1:${srv.httpPort}/`, {
        method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: JSON.stringify(['EVAL', LOOP, '0']),
      }).then((r) => r.json());
      await sleep(450);
      assert.equal(await outcome(other.get('x')), BUSY_EVAL);
      assert.equal(await other.call('SCRIPT', 'KILL'), 'OK');
      const body = await rest as { error: string };
      assert.match(body.error, KILLED_EVAL);
      assert.equal(await other.ping(), 'PONG');
    } finally {
      await srv.stop();
    }
  });

  it('a long read-only function is moved and killed; its library loads in the worker on demand', async () => {
    const [runner, other] = await clients(ours.port, 2);
    await other.set('fk', 'v');
    await other.call('FUNCTION', 'LOAD', 'REPLACE', `#!lua name=slowread
redis.register_function('slowread', function(keys) local v = redis.call('get', keys[1]) ${LOOP} end)
redis.register_function{function_name='quick', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}`);
    assert.equal(await runner.call('FCALL_RO', 'quick', '1', 'fk'), 'v');
    const running = outcome(runner.call('FCALL', 'slowread', '1', 'fk'));
    await sleep(450);
    assert.equal(await outcome(other.get('fk')), BUSY_FN);
    assert.equal(await other.call('FUNCTION', 'KILL'), 'OK');
    assert.equal(await running, 'ERR:ERR Script killed by user with SCRIPT KILL... script: slowread, on @user_function:2.');
    // The library replaced: the worker gets the new code on the next move.
    await other.call('FUNCTION', 'LOAD', 'REPLACE', `#!lua name=slowread
redis.register_function('slowread', function(keys) ${spin(200)} return 'new ' .. redis.call('get', keys[1]) end)`);
    assert.equal(await runner.call('FCALL', 'slowread', '1', 'fk'), 'new v');
    await other.call('FUNCTION', 'DELETE', 'slowread');
  });

  it('the keyspace is frozen while a script is busy: no active expiry', async () => {
    const p = ours.port;
    const [runner, other] = await clients(p, 2);
    await other.set('exp', 'v', 'PX', 150);
    const script = `local a = redis.call('get', 'exp') ${spin(1000)} return {a, redis.call('get', 'exp')}`;
    const running = runner.eval(script, 0);
    await sleep(450);
    assert.equal(await outcome(other.get('exp')), BUSY_EVAL);
    assert.deepEqual(await running, ['v', 'v']);
    assert.equal(await other.get('exp'), null);
  });

  it('replies larger than one Lua chunk reach the script whole', async () => {
    const c = io(ours.port);
    await c.del('big');
    const n = await c.eval(`for i = 1, 300000, 1000 do local t = {} for j = i, i + 999 do t[#t+1] = 'v' .. j end redis.call('rpush', 'big', unpack(t)) end
return redis.call('llen', 'big')`, 0);
    assert.equal(n, 300000);
    assert.deepEqual(await c.eval("local r = redis.call('lrange', 'big', 0, -1) return {#r, r[1], r[262144], r[300000]}", 0),
      [300000, 'v1', 'v262144', 'v300000']);
    await c.del('big');
  });

  it('deeply nested values cross between JSON and Lua', async () => {
    const c = io(ours.port);
    const deep = '['.repeat(120) + '1' + ']'.repeat(120);
    assert.equal(await c.eval('return cjson.encode(cjson.decode(ARGV[1]))', 0, deep), deep);
  });

  it('scripts queued in MULTI run inside EXEC', async () => {
    const c = io(ours.port);
    const r = await c.multi().set('m', '1').eval("return redis.call('incr', 'm')", 0).exec();
    assert.deepEqual(r, [[null, 'OK'], [null, 2]]);
  });
});

describe('SHUTDOWN NOSAVE during a script that wrote', () => {
  // Ours: the first script stays on the engine thread; the second is moved to the worker
  // (read-only for 150 ms), where it writes while the event loop runs. Each tells a subscriber
  // that it has written (both servers deliver messages while a script is busy).
  const WROTE = `redis.call('set', 'kept', 'changed') redis.call('set', 'partial', '1') redis.call('publish', 'sig', 'wrote') ${LOOP}`;
  const scripts = [['wrote first', WROTE], ['wrote later', `${spin(150)} ${WROTE}`]] as const;
  for (const label of ['ours', 'redis'] as const) for (const [what, script] of scripts) {
    it(`stops the server (${label}, ${what})`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-busy-'));
      const args = ['--busy-reply-threshold', '300'];
      // Ours with appendfsync always: a reply means committed, so what survives is known.
      const srv = label === 'ours' ? await startOurs([...args, '--appendfsync', 'always'], {}, { dir }) : await startRedis(args);
      try {
        const [runner, other, sub] = await clients(srv.port, 3);
        await other.set('kept', 'before');
        await sub.subscribe('sig');
        const wrote = new Promise((r) => sub.once('message', r));
        const exited = new Promise<number | null>((r) => srv.proc.once('exit', (code) => r(code)));
        const running = outcome(runner.eval(script, 0));
        await wrote;
        assert.equal(await outcome(other.call('SCRIPT', 'KILL')), UNKILLABLE);
        assert.equal(await outcome(other.call('SHUTDOWN')), BUSY_EVAL);
        assert.match(String(await outcome(other.call('SHUTDOWN', 'NOSAVE'))), /^ERR:Connection is closed\.$/);
        assert.equal(await exited, 0);
        assert.match(String(await running), /^ERR:Connection is closed\.$/);
      } finally {
        await srv.stop();
      }
      if (label === 'ours') {
        // The script's writes were never committed; what was committed before it stays.
        const again = await startOurs([], {}, { dir });
        try {
          const c = io(again.port);
          assert.deepEqual([await c.get('kept'), await c.exists('partial')], ['before', 0]);
        } finally {
          await again.stop();
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
});
