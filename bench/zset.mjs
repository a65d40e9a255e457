#!/usr/bin/env node
/**
 * In-process sorted-set scaling benchmark: the cost of an operation on a 1,000-member set and
 * on a 1,000,000-member one (the same code, so the ratio shows what the size costs: cache
 * misses of the tree descent and of the member map). Operations, each on random members:
 *   zadd-new     ZADD of a new member (then ZREM of it, untimed batch, to keep the size)
 *   zadd-update  ZADD of an existing member with a new random score
 *   zadd-persisted  the same on a set the store persists as records, with the store's
 *                encoding of the logged changes every 1,600 updates (one everysec batch)
 *   zincrby-1    ZINCRBY 1 of an existing member
 *   zrank        ZRANK of an existing member
 * Members are passed as fresh string copies, as a command's arguments are.
 *   zrange10     range by rank, 10 pairs from a random rank
 *
 *   npm run build && node bench/zset.mjs
 *   ZSET_DIST=/path/to/other/dist node bench/zset.mjs   # the same on another build (before/after)
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = process.env.ZSET_DIST ?? path.join(ROOT, 'dist');
const { ZSet } = await import(path.join(DIST, 'engine/ds/zset.js'));
const SIZES = (process.env.BENCH_SIZES ?? '1000,1000000').split(',').map(Number);
const OPS = Number(process.env.BENCH_OPS ?? 200000);

let seed = 12345;
function rnd() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function build(n) {
  const z = new ZSet();
  const members = new Array(n);
  for (let i = 0; i < n; i++) {
    members[i] = `member:${String(i).padStart(7, '0')}`;
    z.set(members[i], Math.floor(rnd() * 1e9));
  }
  return { z, members };
}

/** CPU time in ns (user + system): on a shared, loaded machine wall time says little. */
function cpuNs() {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}

/**
 * Fresh copies of the chosen members (new string objects, hash not computed yet), as a command's
 * arguments are: a lookup then hashes the string and compares it with the stored key.
 */
function copies(members, idx) {
  const text = Buffer.from(Array.from(idx, (k) => members[k]).join('\0'), 'latin1');
  const out = new Array(idx.length);
  let p = 0;
  for (let i = 0; i < idx.length; i++) {
    const e = text.indexOf(0, p);
    out[i] = text.latin1Slice(p, e < 0 ? text.length : e);
    p = e + 1;
  }
  return out;
}

/** CPU ns per operation of fn(i, args) over OPS calls, best of 3 runs (fresh argument copies each). */
function time(members, idx, fn) {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const args = copies(members, idx);
    const t0 = cpuNs();
    for (let i = 0; i < OPS; i++) fn(i, args);
    const ns = (cpuNs() - t0) / OPS;
    if (ns < best) best = ns;
  }
  return best;
}

const results = {};
for (const n of SIZES) {
  const { z, members } = build(n);
  // Random indexes drawn beforehand (the draw is not what is measured).
  const idx = new Uint32Array(OPS);
  for (let i = 0; i < OPS; i++) idx[i] = Math.floor(rnd() * n);
  const scores = new Float64Array(OPS);
  for (let i = 0; i < OPS; i++) scores[i] = Math.floor(rnd() * 1e9);
  const r = {};
  let sink = 0;
  // New members in batches of 1,000 (each batch removed again, untimed): the size stays n.
  const fresh = Array.from({ length: OPS }, (_, i) => `fresh:${String(i).padStart(7, '0')}`);
  const all = Uint32Array.from({ length: OPS }, (_, i) => i);
  r['zadd-new'] = (() => {
    let best = Infinity;
    for (let run = 0; run < 3; run++) {
      const args = copies(fresh, all);
      let ns = 0;
      for (let b = 0; b < OPS; b += 1000) {
        const t0 = cpuNs();
        for (let i = b; i < b + 1000; i++) z.set(args[i], scores[i]);
        ns += cpuNs() - t0;
        for (let i = b; i < b + 1000; i++) z.remove(fresh[i]);
      }
      best = Math.min(best, ns / OPS);
    }
    return best;
  })();
  r['zadd-update'] = time(members, idx, (i, a) => z.set(a[i], scores[i]));
  // As ZADD runs on a set the store persists as records (sid !== 0): look the member up, give
  // it its new score, and every 1,600 updates (one 100 ms everysec batch at 16,000 req/s) let
  // the store encode the logged changes (a writer that only takes the buffers).
  r['zadd-persisted'] = (() => {
    z.sid = 1;
    const w = { put(k, v) { sink += k.length + v.length; }, del(k) { sink += k.length; } };
    const ns = time(members, idx, (i, a) => {
      const m = a[i];
      if (typeof z.rescore === 'function') z.rescore(m, z.score(m), scores[i]);
      else z.set(m, scores[i]);
      if (i % 1600 === 1599) z.storeRecords(w, false);
    });
    z.storeRecords(w, false);
    z.sid = 0;
    return ns;
  })();
  r['zincrby-1'] = time(members, idx, (i, a) => z.set(a[i], z.score(a[i]) + 1));
  r.zrank = time(members, idx, (i, a) => { sink += z.rank(a[i]); });
  r.zrange10 = time(members, idx, (i) => {
    let c = z.at(idx[i] % Math.max(1, n - 10));
    for (let k = 0; c !== null && k < 10; k++, c = typeof c.next === 'function' ? c.next() : c.next[0]) sink += c.score;
  });
  results[n] = r;
  if (sink === 0.5) console.log(sink);
}

console.log(`# in-process sorted set, ${OPS} ops per figure, best of 3; CPU ns per operation (${DIST})`);
const ops = Object.keys(results[SIZES[0]]);
console.log(['op', ...SIZES.map((n) => `n=${n}`), SIZES.length > 1 ? `cost ${SIZES.at(-1)}/${SIZES[0]}` : ''].join('\t'));
for (const op of ops) {
  const row = [op, ...SIZES.map((n) => results[n][op].toFixed(0))];
  if (SIZES.length > 1) row.push((results[SIZES.at(-1)][op] / results[SIZES[0]][op]).toFixed(2));
  console.log(row.join('\t'));
}
