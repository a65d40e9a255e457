// In-process CPU per command of a BullMQ-like queue on small lists of short ids, through the
// dispatcher (no socket): LPUSH wait id, LMOVE wait active RIGHT LEFT, LREM active -1 id, with
// the wait list holding `size` ids and active a few, plus a plain RPUSH/LPOP pair. One build
// or two alternated (before/after):
//   node bench/list-queue-inproc.mjs [distA] [distB]     (N=50000 ROUNDS=5 SIZES=1,50,500)
import { inProcess, cpuMicros, argvOf as argvWords } from './inproc.mjs';

const N = Number(process.env.N ?? 50000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SIZES = (process.env.SIZES ?? '1,50,500').split(',').map(Number);
const dists = process.argv.slice(2);
if (dists.length === 0) dists.push(undefined);

async function setup(dist) {
  const { engine, client, execute, NULL_SINK, Argv } = await inProcess(dist);
  const argvOf = (words) => argvWords(Argv, words);
  const ids = Array.from({ length: 1024 }, (_, i) => String(100000 + i));
  const cmds = (size) => {
    execute(client, argvOf(['FLUSHALL']), NULL_SINK);
    // wait is FIFO: the ids of the `size` previous iterations, the oldest at the tail (the one
    // LMOVE takes), so that iteration i moves ids[i - size] and LREM finds it in active.
    for (let k = 0; k < size; k++) execute(client, argvOf(['LPUSH', 'wait', ids[(k - size) & 1023]]), NULL_SINK);
    execute(client, argvOf(['RPUSH', 'active', '1', '2', '3']), NULL_SINK);
    // Prebuilt argvs (the id cycles through 1024 values).
    const out = [];
    for (let i = 0; i < 1024; i++) {
      out.push(argvOf(['LPUSH', 'wait', ids[i]]), argvOf(['LMOVE', 'wait', 'active', 'RIGHT', 'LEFT']),
        argvOf(['LREM', 'active', '-1', ids[(i - size) & 1023]]), argvOf(['RPUSH', 'q', ids[i]]), argvOf(['LPOP', 'q']));
    }
    return out;
  };
  return { client, execute, NULL_SINK, cmds };
}

const sides = [];
for (const d of dists) sides.push(await setup(d));
const med = (a) => { const b = [...a].sort((x, y) => x - y); return b[Math.floor(b.length / 2)]; };
console.log(`| wait list size | ${dists.map((d) => d ?? 'dist').join(' | ')} |  (µs CPU per command, median of ${ROUNDS})`);
console.log(`|---|${dists.map(() => '---').join('|')}|`);
for (const size of SIZES) {
  const res = sides.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    sides.forEach((s, si) => {
      const c = s.cmds(size);
      const t0 = cpuMicros();
      for (let i = 0; i < N; i++) {
        const k = (i & 1023) * 5;
        for (let j = 0; j < 5; j++) s.execute(s.client, c[k + j], s.NULL_SINK);
      }
      res[si].push((cpuMicros() - t0) / (N * 5));
    });
  }
  console.log(`| ${size} | ${res.map((a) => `${med(a).toFixed(3)} µs`).join(' | ')} |`);
}
