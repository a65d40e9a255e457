#!/usr/bin/env node
/**
 * The scripting-worker cliff of RESULTS-lua.md (2026-11-28): EVALs of redis.call loops, timed
 * on each server given (ports), servers alternated per pass. Wall ms per EVAL, and the
 * server's CPU ms (INFO cpu, whole process) where it reports it.
 *
 *   node bench/lua-cliff.mjs <name>=<port> [<name>=<port> ...]
 */
import Redis from 'ioredis';

const targets = process.argv.slice(2).map((a) => {
  const [name, port] = a.split('=');
  return { name, r: new Redis({ port: Number(port), host: '127.0.0.1' }) };
});
const getsOnly = (n) => `local x for i = 1, ${n} do x = redis.call('GET', 'k') end `;
const gets = (n) => `${getsOnly(n)} return x`;
const loop = (n) => `local s = 0 for i = 1, ${n} do s = s + i % 7 end return s`;
const spin = (ms) => `local t = redis.call('time') local t0 = t[1] * 1000 + t[2] / 1000 local i = 0
while true do i = i + 1 if i % 100000 == 0 then t = redis.call('time') if t[1] * 1000 + t[2] / 1000 - t0 > ${ms} then break end end end `;
const rows = [
  ['200,000 GETs', gets(200000), 3],
  ['20,000 GETs', gets(20000), 3],
  ['2,000 GETs, then a 30M-iteration loop', `${getsOnly(2000)} ${loop(30000000)}`, 2],
  ['20,000 GETs, then a 30M-iteration loop', `${getsOnly(20000)} ${loop(30000000)}`, 2],
  ['a 150 ms spin, then 20,000 GETs (moved before its GETs)', `${spin(150)} ${gets(20000)}`, 3],
];
const cpu = async (r) => {
  const info = await r.info('cpu');
  const f = (k) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1] ?? NaN);
  return (f('used_cpu_sys') + f('used_cpu_user')) * 1000;
};
for (const t of targets) await t.r.set('k', 'v');
console.log(`# load ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`| EVAL | ${targets.map((t) => `${t.name} ms (CPU ms) per pass`).join(' | ')} |`);
console.log(`|---|${targets.map(() => '---').join('|')}|`);
for (const [label, body, passes] of rows) {
  const cells = targets.map(() => []);
  for (let p = 0; p < passes; p++) {
    for (let i = 0; i < targets.length; i++) {
      const { r } = targets[(p % 2 === 0) ? i : targets.length - 1 - i];
      const k = (p % 2 === 0) ? i : targets.length - 1 - i;
      const c0 = await cpu(r);
      const t0 = performance.now();
      await r.eval(body, 0);
      const ms = performance.now() - t0;
      cells[k].push(`${ms.toFixed(0)} (${((await cpu(r)) - c0).toFixed(0)})`);
    }
  }
  console.log(`| ${label} | ${cells.map((c) => c.join(' / ')).join(' | ')} |`);
}
for (const t of targets) t.r.disconnect();
