#!/usr/bin/env node
/**
 * A read-only script that is moved to the scripting worker (host.ts: a spin with few
 * redis.calls runs past MOVE_AFTER_MS on the engine thread first), then makes N redis.call GETs
 * (main 6cb2b4b: each a thread crossing; since session 14 the script is then run back on the
 * engine thread); against the same N GETs run on the engine thread (no spin: never moved).
 * Prints wall ms and the server's CPU µs per call (INFO cpu: the whole process, both threads).
 *
 *   node bench/lua-moved.mjs <port> [N=20000] [spinMs=150] [passes=3]
 */
import Redis from 'ioredis';

const port = Number(process.argv[2]);
const N = Number(process.argv[3] ?? 20000);
const spinMs = Number(process.argv[4] ?? 150);
const passes = Number(process.argv[5] ?? 3);
const r = new Redis({ port, host: '127.0.0.1' });
await r.set('k', 'v');
const spin = `local t = redis.call('time') local t0 = t[1] * 1000 + t[2] / 1000 local i = 0
while true do i = i + 1 if i % 100000 == 0 then t = redis.call('time') if t[1] * 1000 + t[2] / 1000 - t0 > ${spinMs} then break end end end `;
const loop = `local x for i = 1, ${N} do x = redis.call('GET', 'k') end return x`;
const cpu = async () => {
  const info = await r.info('cpu');
  const f = (k) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)[1]);
  return (f('used_cpu_sys') + f('used_cpu_user')) * 1e6;
};
const spinOnly = `${spin} return 1`;
const time = async (body) => {
  const c0 = await cpu();
  const t0 = performance.now();
  await r.eval(body, 0);
  const ms = performance.now() - t0;
  return { ms, cpu: (await cpu()) - c0 };
};
for (let pass = 0; pass < passes; pass++) {
  const s = spinMs > 0 ? await time(spinOnly) : { ms: 0, cpu: 0 };
  const moved = spinMs > 0 ? await time(spin + loop) : { ms: 0, cpu: 0 };
  const local = await time(loop);
  const per = (x) => ((x * 1000) / N).toFixed(1);
  console.log(`pass ${pass}: spin alone ${s.ms.toFixed(0)} ms; spin + ${N} GETs (moved) ${moved.ms.toFixed(0)} ms, ` +
    `${per(moved.ms - s.ms)} us/call beyond the spin, CPU ${((moved.cpu - s.cpu) / N).toFixed(1)} us/call; ` +
    `${N} GETs on the engine thread ${local.ms.toFixed(0)} ms, ${per(local.ms)} us/call, CPU ${(local.cpu / N).toFixed(1)} us/call`);
}
r.disconnect();
