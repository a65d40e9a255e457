// In-process CPU per DUMP / RESTORE of a 100-byte string, a 100- and a 5-field hash (and
// HGET/HGETALL/HSET on them) and lists of 5 and 100 elements, through the dispatcher (no
// socket), for one build or two alternated (before/after):
//   node bench/dump-inproc.mjs [distA] [distB]     (N=20000 ROUNDS=5 ONLY=name,name)
// Run it with node --max-semi-space-size=1 for npm start's young generation.
import { inProcess, cpuMicros } from './inproc.mjs';

const N = Number(process.env.N ?? 20000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const dists = process.argv.slice(2);
if (dists.length === 0) dists.push(undefined);

async function setup(dist) {
  const { DIST, engine, client, execute, NULL_SINK, Argv } = await inProcess(dist);
  const { dumpPayload } = await import(`${DIST}/rdb/encode.js`);
  const { encodeOptions } = await import(`${DIST}/engine/commands/dump.js`);
  const argvOf = (words) => {
    const bufs = words.map((w) => (Buffer.isBuffer(w) ? w : Buffer.from(w, 'latin1')));
    const a = new Argv();
    a.reset(Buffer.concat(bufs));
    let p = 0;
    for (const b of bufs) { a.push(p, p + b.length); p += b.length; }
    return a;
  };
  const run = (words) => execute(client, argvOf(words), NULL_SINK);
  run(['SET', 'bs', 'v'.repeat(100)]);
  const f = []; for (let i = 0; i < 100; i++) f.push(`field:${i}`, `value:${i}`);
  run(['HSET', 'bh', ...f]);
  run(['HSET', 'bh5', ...f.slice(0, 10)]);
  run(['RPUSH', 'bl5', 'job:1', '2', 'hello', '12345', 'world']);
  const l100 = []; for (let i = 0; i < 100; i++) l100.push(i % 2 ? `item-${i}` : String(i * 37));
  run(['RPUSH', 'bl100', ...l100]);
  const db = engine.dbs[0];
  const pl5 = Buffer.from(dumpPayload(db.map.get('bl5').v, encodeOptions(engine)));
  const pl100 = Buffer.from(dumpPayload(db.map.get('bl100').v, encodeOptions(engine)));
  const ps = Buffer.from(dumpPayload(db.map.get('bs').v, encodeOptions(engine)));
  const ph = Buffer.from(dumpPayload(db.map.get('bh').v, encodeOptions(engine)));
  const ph5 = Buffer.from(dumpPayload(db.map.get('bh5').v, encodeOptions(engine)));
  const tests = {
    'DUMP string': argvOf(['DUMP', 'bs']),
    'RESTORE string': argvOf(['RESTORE', 'rs', '0', ps, 'REPLACE']),
    'DUMP hash': argvOf(['DUMP', 'bh']),
    'RESTORE hash': argvOf(['RESTORE', 'rh', '0', ph, 'REPLACE']),
    // Over 50 keys in turn, as bench/dump-socket.mjs's clients: the last 50 hashes stay live
    // (what a young-generation collection copies).
    'RESTORE hash 50 keys': Array.from({ length: 50 }, (_, i) => argvOf(['RESTORE', `rh:${i}`, '0', ph, 'REPLACE'])),
    'DUMP hash 5': argvOf(['DUMP', 'bh5']),
    'RESTORE hash 5': argvOf(['RESTORE', 'rh5', '0', ph5, 'REPLACE']),
    'HGET hash 100': argvOf(['HGET', 'bh', 'field:50']),
    'HGETALL hash 100': argvOf(['HGETALL', 'bh']),
    'HSET hash 5 (update)': argvOf(['HSET', 'bh5', 'field:3', 'value:x']),
    'DUMP list 5': argvOf(['DUMP', 'bl5']),
    'RESTORE list 5': argvOf(['RESTORE', 'rl5', '0', pl5, 'REPLACE']),
    'DUMP list 100': argvOf(['DUMP', 'bl100']),
    'RESTORE list 100': argvOf(['RESTORE', 'rl100', '0', pl100, 'REPLACE']),
  };
  if (process.env.ONLY) for (const k of Object.keys(tests)) if (!process.env.ONLY.split(',').includes(k)) delete tests[k];
  return { client, execute, NULL_SINK, tests };
}

const sides = [];
for (const d of dists) sides.push(await setup(d));
const res = sides.map(() => new Map());
for (let r = 0; r < ROUNDS; r++) {
  sides.forEach((s, si) => {
    for (const [name, argv] of Object.entries(s.tests)) {
      const t0 = cpuMicros();
      if (Array.isArray(argv)) for (let i = 0; i < N; i++) s.execute(s.client, argv[i % argv.length], s.NULL_SINK);
      else for (let i = 0; i < N; i++) s.execute(s.client, argv, s.NULL_SINK);
      const us = (cpuMicros() - t0) / N;
      if (!res[si].has(name)) res[si].set(name, []);
      res[si].get(name).push(us);
    }
  });
}
const med = (a) => { const b = [...a].sort((x, y) => x - y); return b[Math.floor(b.length / 2)]; };
console.log(`| command | ${dists.map((d) => d ?? 'dist').join(' | ')} |`);
console.log(`|---|${dists.map(() => '---').join('|')}|`);
for (const name of res[0].keys()) console.log(`| ${name} | ${res.map((m) => `${med(m.get(name)).toFixed(2)} µs`).join(' | ')} |`);
