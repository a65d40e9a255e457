/**
 * Seeded randomized differential test of the geo searches: the same random sets (worldwide,
 * clustered with duplicate positions, near the latitude limits and the antimeridian, on a
 * grid) and a few hundred random GEOSEARCH / GEOSEARCHSTORE / GEORADIUS* queries run on our
 * server and on a real redis-server; every reply must be byte-identical, including the order
 * of unsorted results, COUNT ANY and ties.
 *
 * One documented tolerance: the scores STOREDIST stores (full-precision distances) may differ
 * in the last unit from Redis's for about 0.3% of the members, because Redis's distances go
 * through glibc's sin/cos/asin, which are not always correctly rounded, while ours are (see
 * src/engine/ds/crmath.ts). Those replies are compared member by member with scores within a
 * relative 1e-13 (a last-place difference grows through asin for nearly antipodal points);
 * everything else is compared byte for byte.
 *
 * GEO_SEED=<n> replays a run; the seed is printed on failure. GEO_QUERIES sets the count,
 * GEO_DEBUG=1 lists the stored distances that differ in the last place.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Proc, withBothServers } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { arrayElements } from './harness.js';

const SEED = process.env.GEO_SEED ? Number(process.env.GEO_SEED) : Math.floor(Math.random() * 2 ** 31);
const QUERIES = process.env.GEO_QUERIES ? Number(process.env.GEO_QUERIES) : 800;

/** mulberry32: small, seedable. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rnd = prng(SEED);
const between = (a: number, b: number): number => a + rnd() * (b - a);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
const chance = (p: number): boolean => rnd() < p;
/** A coordinate as a client would type it: a few to many decimals. */
const num = (x: number): string => pick([() => x.toFixed(pick([0, 1, 3, 6])), () => String(x)])();
const clampLat = (y: number): number => Math.max(-85.05112878, Math.min(85.05112878, y));
const clampLon = (x: number): number => Math.max(-180, Math.min(180, x));

interface Dataset { key: string; members: string[]; points: [number, number][] }

function makeSets(): Dataset[] {
  const sets: Dataset[] = [];
  const add = (key: string, pts: [number, number][]): void => {
    sets.push({ key, members: pts.map((_, i) => `${key}:${i}`), points: pts });
  };
  // Worldwide.
  add('world', Array.from({ length: 1500 }, () => [between(-180, 180), between(-85.05112878, 85.05112878)]));
  // A cluster with repeated positions (ties in distance).
  const cx = between(-170, 170), cy = between(-70, 70);
  const cluster: [number, number][] = [];
  for (let i = 0; i < 800; i++) {
    if (i > 10 && chance(0.2)) cluster.push(cluster[Math.floor(rnd() * cluster.length)]);
    else cluster.push([clampLon(cx + between(-0.5, 0.5)), clampLat(cy + between(-0.5, 0.5))]);
  }
  add('city', cluster);
  // Near the latitude limits and the antimeridian, including the exact limits.
  const edge: [number, number][] = [[180, 0], [-180, 0], [180, 85.05112878], [-180, -85.05112878], [0, 85.05112878], [0, -85.05112878]];
  for (let i = 0; i < 400; i++) {
    const lat = chance(0.5) ? pick([1, -1]) * between(80, 85.05112878) : between(-85, 85);
    const lon = chance(0.6) ? pick([1, -1]) * between(178, 180) : between(-180, 180);
    edge.push([lon, lat]);
  }
  add('edge', edge);
  // A grid: many members at equal distances from grid-aligned centers.
  const grid: [number, number][] = [];
  const gx = between(-150, 150), gy = between(-60, 60);
  for (let i = -12; i <= 12; i++) for (let j = -12; j <= 12; j++) grid.push([gx + i * 0.01, gy + j * 0.01]);
  add('grid', grid);
  return sets;
}

function randomCenter(sets: Dataset[], ds: Dataset): string[] {
  if (chance(0.35)) return ['FROMMEMBER', chance(0.03) ? 'no-such-member' : pick(ds.members)];
  let lon: number, lat: number;
  const r = rnd();
  if (r < 0.4) {
    const [x, y] = pick(ds.points);
    lon = clampLon(x + between(-0.2, 0.2));
    lat = clampLat(y + between(-0.2, 0.2));
  } else if (r < 0.6) {
    lon = pick([1, -1]) * between(175, 180);
    lat = between(-85, 85);
  } else if (r < 0.75) {
    lon = between(-180, 180);
    lat = pick([1, -1]) * between(75, 85.05);
  } else {
    lon = between(-180, 180);
    lat = between(-85.05, 85.05);
  }
  void sets;
  return ['FROMLONLAT', num(lon), num(lat)];
}

/** A distance in the unit: from 0 to across the globe, log-uniform. */
function randomDistance(): string {
  const unit = pick(['m', 'km', 'mi', 'ft', 'M', 'KM']);
  if (chance(0.03)) return `0 ${unit}`;
  const meters = Math.pow(10, between(0, 7.3));
  const per = { m: 1, km: 1000, mi: 1609.34, ft: 0.3048 }[unit.toLowerCase() as 'm']!;
  return `${num(meters / per)} ${unit}`;
}

function randomOptions(store: boolean): string[] {
  const groups: string[][] = [];
  if (chance(0.6)) groups.push([pick(['ASC', 'DESC', 'asc'])]);
  if (chance(0.5)) {
    const n = String(pick([1, 2, 3, 5, 10, 25, 100, 1000, Math.floor(between(1, 300))]));
    groups.push(chance(0.3) ? ['COUNT', n, 'ANY'] : ['COUNT', n]);
  }
  if (!store) {
    if (chance(0.4)) groups.push(['WITHDIST']);
    if (chance(0.3)) groups.push(['WITHCOORD']);
    if (chance(0.3)) groups.push(['WITHHASH']);
  }
  // Options in any order.
  for (let i = groups.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [groups[i], groups[j]] = [groups[j], groups[i]];
  }
  return groups.flat();
}

function randomQuery(sets: Dataset[]): string[][] {
  const ds = pick(sets);
  const by = chance(0.5)
    ? ['BYRADIUS', ...randomDistance().split(' ')]
    : (() => {
      const [w, unit] = randomDistance().split(' ');
      const [h] = randomDistance().split(' ');
      return ['BYBOX', w, chance(0.2) ? w : h, unit];
    })();
  const kind = rnd();
  if (kind < 0.6) return [['GEOSEARCH', ds.key, ...randomCenter(sets, ds), ...by, ...randomOptions(false)]];
  if (kind < 0.75) {
    const opts = randomOptions(true);
    if (chance(0.5)) opts.push('STOREDIST');
    return [['GEOSEARCHSTORE', 'dst', ds.key, ...randomCenter(sets, ds), ...by, ...opts], ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES']];
  }
  const [dist, unit] = randomDistance().split(' ');
  const store = chance(0.2) ? [pick(['STORE', 'STOREDIST']), 'dst'] : [];
  const tail = [dist, unit, ...randomOptions(store.length > 0), ...store];
  const cmds: string[][] = [];
  if (chance(0.5)) {
    const [, lon, lat] = ['', num(between(-180, 180)), num(between(-85, 85))];
    const c = rnd() < 0.3 ? randomCenter(sets, ds) : ['FROMLONLAT', lon, lat];
    const [x, y] = c[0] === 'FROMLONLAT' ? [c[1], c[2]] : [lon, lat];
    cmds.push([store.length ? 'GEORADIUS' : pick(['GEORADIUS', 'GEORADIUS_RO']), ds.key, x, y, ...tail]);
  } else {
    cmds.push([store.length ? 'GEORADIUSBYMEMBER' : pick(['GEORADIUSBYMEMBER', 'GEORADIUSBYMEMBER_RO']), ds.key, pick(ds.members), ...tail]);
  }
  if (store.length) cmds.push(['ZRANGE', 'dst', '0', '-1', 'WITHSCORES']);
  return cmds;
}

let ours: Proc;
let redis: Proc;
withBothServers((o, r) => { ours = o; redis = r; });

test(`random GEOSEARCH queries match redis-server (seed ${SEED})`, { timeout: 120_000 }, async () => {
  const a = await RawClient.connect(ours.port);
  const b = await RawClient.connect(redis.port);
  const fail = (what: string, x: Buffer, y: Buffer): never => {
    // Show the replies from a little before their first difference.
    let d = 0;
    while (d < x.length && d < y.length && x[d] === y[d]) d++;
    const from = Math.max(0, d - 200);
    const show = (r: Buffer): string => `${from > 0 ? `(from byte ${from}) ` : ''}${JSON.stringify(r.toString('latin1').slice(from, from + 400))}`;
    assert.fail(`GEO_SEED=${SEED}: ${what}\n  ours:  ${show(x)}\n  redis: ${show(y)}`);
  };
  let last = '';
  let dstHasDistances = false; // was dst last written by a STOREDIST search?
  let storedScores = 0;
  let storeCmd = '';
  let ulpScores = 0;
  const both = async (cmd: string[]): Promise<void> => {
    const [x, y] = await Promise.all([a.call(...cmd), b.call(...cmd)]);
    const distances = cmd[0] === 'ZRANGE' && dstHasDistances;
    if (!x.equals(y) && !(distances && sameWithinUlps(x, y))) fail(`${cmd.join(' ')}${last ? `\n  after: ${last}` : ''}`, x, y);
    if (distances) {
      const ex = arrayElements(x)!, ey = arrayElements(y)!;
      for (let i = 1; i < ex.length; i += 2) {
        storedScores++;
        if (ex[i].equals(ey[i])) continue;
        ulpScores++;
        if (process.env.GEO_DEBUG) console.log(`# ${storeCmd} :: ${bulkText(ex[i - 1])} ours ${bulkText(ex[i])} redis ${bulkText(ey[i])}`);
      }
    }
    last = cmd.join(' ');
    // A store that did not fail replaced (or deleted) dst.
    if (cmd.includes('dst') && cmd[0] !== 'ZRANGE' && y[0] === 0x3a) dstHasDistances = /STOREDIST/i.test(last);
    if (cmd.includes('dst') && cmd[0] !== 'ZRANGE') storeCmd = last;
  };
  try {
    await both(['FLUSHALL']);
    const sets = makeSets();
    for (const ds of sets) {
      for (let i = 0; i < ds.points.length; i += 200) {
        const args: string[] = [];
        for (let j = i; j < Math.min(i + 200, ds.points.length); j++) {
          args.push(String(ds.points[j][0]), String(ds.points[j][1]), ds.members[j]);
        }
        await both(['GEOADD', ds.key, ...args]);
      }
      // Scores and decoded positions of every member.
      await both(['ZRANGE', ds.key, '0', '-1', 'WITHSCORES']);
      await both(['GEOPOS', ds.key, ...ds.members]);
      await both(['GEOHASH', ds.key, ...ds.members]);
    }
    for (let q = 0; q < QUERIES; q++) {
      for (const cmd of randomQuery(sets)) {
        if (cmd.some((x) => typeof x !== 'string')) throw new Error(`bad query ${JSON.stringify(cmd)}`);
        await both(cmd);
      }
      if (chance(0.1)) {
        const ds = pick(sets);
        await both(['GEODIST', ds.key, pick(ds.members), pick(ds.members), pick(['m', 'km', 'mi', 'ft'])]);
      }
    }
  } finally {
    a.close();
    b.close();
  }
  // The last-place differences must stay rare: libm rounding only, not a formula difference
  // (which would change nearly every stored distance). They come in clusters: when glibc
  // misrounds the cosine of a search's center, most distances of that search move by an ulp.
  assert.ok(ulpScores <= Math.max(5, storedScores * 0.1), `GEO_SEED=${SEED}: ${ulpScores} of ${storedScores} stored distances differ in the last place`);
  console.log(`# seed ${SEED}: ${storedScores} STOREDIST scores compared, ${ulpScores} within 1e-13 but not identical`);
});

/** ZRANGE WITHSCORES replies with the same members in the same order and scores within 1e-13. */
function sameWithinUlps(x: Buffer, y: Buffer): boolean {
  const ex = arrayElements(x), ey = arrayElements(y);
  if (ex === null || ey === null || ex.length !== ey.length) return false;
  for (let i = 0; i < ex.length; i += 2) {
    if (!ex[i].equals(ey[i])) return false;
    const s1 = Number(bulkText(ex[i + 1])), s2 = Number(bulkText(ey[i + 1]));
    // A last-place difference in sin/cos grows through asin for nearly antipodal points.
    if (!(Math.abs(s1 - s2) <= Math.max(Math.abs(s1), Math.abs(s2)) * 1e-13)) return false;
  }
  return true;
}

function bulkText(el: Buffer): string {
  const nl = el.indexOf('\r\n');
  return el.toString('latin1', nl + 2, el.length - 2);
}
