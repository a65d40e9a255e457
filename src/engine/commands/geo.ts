/**
 * Geo commands: GEOADD GEODIST GEOHASH GEOPOS GEORADIUS GEORADIUS_RO GEORADIUSBYMEMBER
 * GEORADIUSBYMEMBER_RO GEOSEARCH GEOSEARCHSTORE.
 *
 * A geo value is a plain sorted set (sorted-set.ts / ds/zset.ts) whose scores are 52-bit
 * interleaved geohashes (ds/geohash.ts). Searches scan the score ranges of up to 9 geohash
 * boxes around the center in Redis's order, so unsorted replies, COUNT ANY and ties come out
 * in the same order as Redis's. Numbers print as Redis 7.0.15 prints them: distances with 4
 * decimals through a scaled integer (formatDistance), coordinates "%.17Lf" with trailing zeros
 * removed.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, CommandError } from '../../resp/errors.js';
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { ZSet } from '../ds/zset.js';
import {
  GEO_LAT_MAX, GEO_LAT_MIN, GEO_LONG_MAX, GEO_LONG_MIN, type GeoShape,
  decodeScore, geoDistance, geoScore, inShape, searchRanges, standardGeohash,
} from '../ds/geohash.js';
import { ZADD_ADDED, ZADD_CH, ZADD_NX, ZADD_UPDATED, ZADD_XX, lookupZset, storeResult, zaddOne } from './sorted-set.js';
import { KF, type KeyRef } from '../keys.js';

// ---------------------------------------------------------------- number formatting

/**
 * C's "%.<d>f" of a double: exact decimal rounding, ties to even (toFixed is exact too but
 * breaks ties upwards), "inf", a sign on negative zero. (No NaN reaches it: the coordinates
 * it prints are parsed or decoded ones.)
 */
export function formatFixed(x: number, d: number): string {
  if (x !== x) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  const neg = x < 0 || Object.is(x, -0);
  const a = Math.abs(x);
  let s: string;
  if (a < 1e21) {
    s = a.toFixed(d);
    // An exact tie at digit d+1 needs exactly d+1 binary fraction digits.
    const t = a * Math.pow(2, d + 1);
    if (t < 9007199254740992 && t % 2 === 1) {
      const last = s.charCodeAt(s.length - 1) - 48;
      if (last % 2 === 1) s = s.slice(0, -1) + String.fromCharCode(47 + last);
    }
  } else {
    s = BigInt(a).toString() + (d > 0 ? '.' + '0'.repeat(d) : '');
  }
  return neg ? '-' + s : s;
}

/** Redis's human-friendly long double ("%.17Lf", trailing zeros and '.' removed, "-0" -> "0"). */
function formatCoord(x: number): string {
  let s = formatFixed(x, 17);
  if (s.indexOf('.') >= 0) {
    let l = s.length;
    while (s.charCodeAt(l - 1) === 48) l--;
    if (s.charCodeAt(l - 1) === 46) l--;
    s = s.slice(0, l);
  }
  return s === '-0' ? '0' : s;
}

/**
 * A distance with 4 decimals the way Redis 7.0.15 prints it: the double scaled by 10^4 (one
 * rounding), rounded to an integer half-to-even (llrint), then printed as fixed point. This is
 * not an exact "%.4f": 5856325.4847499998 prints as 5856325.4848.
 */
export function formatDistance(d: number): string {
  if (d === 0) return '0.0000';
  const v = d * 10000;
  let r = Math.floor(v);
  const frac = v - r;
  if (frac > 0.5 || (frac === 0.5 && r % 2 !== 0)) r += 1;
  let neg = r < 0;
  let digits: string;
  if (!(Math.abs(r) < 9223372036854775808)) {
    // llrint out of range (or NaN) gives LLONG_MIN on x86-64.
    neg = true;
    digits = '9223372036854775808';
  } else {
    digits = Math.abs(r) < 9007199254740992 ? String(Math.abs(r)) : BigInt(Math.abs(r)).toString();
  }
  if (digits.length < 5) digits = '0'.repeat(5 - digits.length) + digits;
  const s = `${digits.slice(0, -4)}.${digits.slice(-4)}`;
  return neg ? '-' + s : s;
}

function replyDistance(out: ReplySink, d: number): void {
  out.bulkText(formatDistance(d));
}

function replyCoords(out: ReplySink, lon: number, lat: number): void {
  out.array(2);
  out.bulkText(formatCoord(lon));
  out.bulkText(formatCoord(lat));
}

// ---------------------------------------------------------------- argument parsing

/** Meters per unit, or throws. */
function parseUnit(argv: Argv, i: number): number {
  if (argv.is(i, 'M')) return 1;
  if (argv.is(i, 'KM')) return 1000;
  if (argv.is(i, 'FT')) return 0.3048;
  if (argv.is(i, 'MI')) return 1609.34;
  throw new CommandError('ERR unsupported unit provided. please use M, KM, FT, MI');
}

function parseDouble(argv: Argv, i: number, msg: string): number {
  const v = argv.float(i);
  if (v !== v) throw new CommandError(msg);
  return v;
}

/** Longitude and latitude at argv[i], argv[i+1], validated against the Mercator limits. */
function parseLonLat(argv: Argv, i: number, xy: Float64Array): void {
  const lon = parseDouble(argv, i, E.NOT_FLOAT);
  const lat = parseDouble(argv, i + 1, E.NOT_FLOAT);
  if (lon < GEO_LONG_MIN || lon > GEO_LONG_MAX || lat < GEO_LAT_MIN || lat > GEO_LAT_MAX) {
    throw new CommandError(`ERR invalid longitude,latitude pair ${formatFixed(lon, 6)},${formatFixed(lat, 6)}`);
  }
  xy[0] = lon;
  xy[1] = lat;
}

/** radius unit at argv[i]. */
function parseRadius(argv: Argv, i: number, shape: GeoShape): void {
  const r = parseDouble(argv, i, 'ERR need numeric radius');
  if (r < 0) throw new CommandError('ERR radius cannot be negative');
  shape.radius = r;
  shape.conversion = parseUnit(argv, i + 1);
  shape.box = false;
}

/** width height unit at argv[i]. */
function parseBox(argv: Argv, i: number, shape: GeoShape): void {
  const w = parseDouble(argv, i, 'ERR need numeric width');
  const h = parseDouble(argv, i + 1, 'ERR need numeric height');
  if (h < 0 || w < 0) throw new CommandError('ERR height or width cannot be negative');
  shape.width = w;
  shape.height = h;
  shape.conversion = parseUnit(argv, i + 2);
  shape.box = true;
}

const MEMBER_ERR = 'ERR could not decode requested zset member';
const xy = new Float64Array(2);

/** Center of a search from a member's position; throws when the member is missing. */
function centerFromMember(z: ZSet, member: string, shape: GeoShape): void {
  const s = z.score(member);
  if (s === undefined) throw new CommandError(MEMBER_ERR);
  decodeScore(s, xy);
  shape.lon = xy[0];
  shape.lat = xy[1];
}

// ---------------------------------------------------------------- simple commands

// GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]
function geoaddCommand(c: Client, argv: Argv, out: ReplySink): void {
  let flags = 0;
  let i = 2;
  for (; i < argv.count; i++) {
    if (argv.is(i, 'NX')) flags |= ZADD_NX;
    else if (argv.is(i, 'XX')) flags |= ZADD_XX;
    else if (argv.is(i, 'CH')) flags |= ZADD_CH;
    else break;
  }
  const rest = argv.count - i;
  // No element at all is ZADD's syntax error (GEOADD hands its arguments over to ZADD).
  if (rest % 3 !== 0 || rest === 0 || (flags & ZADD_NX && flags & ZADD_XX)) throw new CommandError(E.SYNTAX);
  const n = rest / 3;
  const scores = new Array<number>(n);
  for (let k = 0; k < n; k++) {
    parseLonLat(argv, i + k * 3, xy);
    scores[k] = geoScore(xy[0], xy[1]);
  }
  const db = c.db;
  const key = argv.key(1);
  let z = lookupZset(db, key, false);
  if (z === null) {
    if (flags & ZADD_XX) {
      out.int(0);
      return;
    }
    z = new ZSet();
    db.add(key, z);
  }
  let added = 0;
  let updated = 0;
  for (let k = 0; k < n; k++) {
    const r = zaddOne(z, argv.key(i + k * 3 + 2), scores[k], flags);
    if (r === ZADD_ADDED) added++;
    else if (r === ZADD_UPDATED) updated++;
  }
  if (added + updated > 0) db.modified(key);
  else if (z.size === 0) db.delete(key);
  out.int(flags & ZADD_CH ? added + updated : added);
}

// GEODIST key member1 member2 [M|KM|FT|MI]
function geodistCommand(c: Client, argv: Argv, out: ReplySink): void {
  let toMeter = 1;
  if (argv.count === 5) toMeter = parseUnit(argv, 4);
  else if (argv.count > 5) throw new CommandError(E.SYNTAX);
  const z = lookupZset(c.db, argv.key(1));
  const s1 = z?.score(argv.key(2));
  const s2 = z?.score(argv.key(3));
  if (s1 === undefined || s2 === undefined) {
    out.nil();
    return;
  }
  decodeScore(s1, xy);
  const lon1 = xy[0], lat1 = xy[1];
  decodeScore(s2, xy);
  replyDistance(out, geoDistance(lon1, lat1, xy[0], xy[1]) / toMeter);
}

// GEOHASH key [member [member ...]]
function geohashCommand(c: Client, argv: Argv, out: ReplySink): void {
  const z = lookupZset(c.db, argv.key(1));
  out.array(argv.count - 2);
  for (let i = 2; i < argv.count; i++) {
    const s = z?.score(argv.key(i));
    if (s === undefined) out.nil();
    else out.bulkText(standardGeohash(s));
  }
}

// GEOPOS key [member [member ...]]
function geoposCommand(c: Client, argv: Argv, out: ReplySink): void {
  const z = lookupZset(c.db, argv.key(1));
  out.array(argv.count - 2);
  for (let i = 2; i < argv.count; i++) {
    const s = z?.score(argv.key(i));
    if (s === undefined) {
      out.nilArray();
    } else {
      decodeScore(s, xy);
      replyCoords(out, xy[0], xy[1]);
    }
  }
}

// ---------------------------------------------------------------- searches

/** One match: the member, its score (geohash), decoded position and distance to the center. */
interface GeoPoint {
  member: string;
  score: number;
  lon: number;
  lat: number;
  dist: number;
}

/**
 * Members of z inside the shape, box after box in Redis's scan order (ascending score within
 * a box). With limit > 0 (COUNT ANY) stop once that many were found. Distances are computed
 * only when `withDist` (replies, sorts and STOREDIST need them; the in/out test alone is
 * cheaper).
 */
function searchShape(z: ZSet, shape: GeoShape, limit: number, withDist: boolean): GeoPoint[] {
  const found: GeoPoint[] = [];
  const ranges = searchRanges(shape);
  for (let r = 0; r < ranges.length; r += 2) {
    if (limit > 0 && found.length >= limit) break;
    const min = ranges[r], max = ranges[r + 1];
    for (let n = z.tree.firstInScore(min, false, max, true); n !== null && n.score < max; n = n.next()) {
      if (limit > 0 && found.length >= limit) break;
      decodeScore(n.score, xy);
      const lon = xy[0], lat = xy[1];
      if (!inShape(shape, lon, lat)) continue;
      const dist = withDist ? geoDistance(shape.lon, shape.lat, lon, lat) : 0;
      found.push({ member: n.member, score: n.score, lon, lat, dist });
    }
  }
  return found;
}

function cmpAsc(a: GeoPoint, b: GeoPoint): number {
  return a.dist > b.dist ? 1 : a.dist === b.dist ? 0 : -1;
}

function cmpDesc(a: GeoPoint, b: GeoPoint): number {
  return -cmpAsc(a, b);
}

/** Top-down merge sort (the stable qsort of glibc, which Redis's full sorts go through). */
function mergeSort(a: GeoPoint[], cmp: (x: GeoPoint, y: GeoPoint) => number): void {
  const tmp = new Array<GeoPoint>(a.length);
  const sort = (lo: number, n: number): void => {
    if (n <= 1) return;
    const n1 = n >>> 1;
    const n2 = n - n1;
    sort(lo, n1);
    sort(lo + n1, n2);
    let i = lo, j = lo + n1, k = 0;
    const iEnd = lo + n1, jEnd = lo + n;
    while (i < iEnd && j < jEnd) tmp[k++] = cmp(a[i], a[j]) <= 0 ? a[i++] : a[j++];
    while (i < iEnd) tmp[k++] = a[i++];
    for (let t = 0; t < k; t++) a[lo + t] = tmp[t];
  };
  sort(0, a.length);
}

/**
 * Partial sort so that positions [lrange, rrange] hold their final elements: Bentley and
 * McIlroy's quicksort ("Engineering a Sort Function", 1993) that only recurses into the
 * partitions overlapping the range, as Redis's pqsort does for COUNT. Ties end up in the
 * same (unstable) order.
 */
function partialSort(a: GeoPoint[], cmp: (x: GeoPoint, y: GeoPoint) => number, lrange: number, rrange: number): void {
  const swap = (i: number, j: number): void => {
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  };
  const vecswap = (i: number, j: number, n: number): void => {
    for (let k = 0; k < n; k++) swap(i + k, j + k);
  };
  const med3 = (x: number, y: number, z: number): number =>
    cmp(a[x], a[y]) < 0
      ? (cmp(a[y], a[z]) < 0 ? y : cmp(a[x], a[z]) < 0 ? z : x)
      : (cmp(a[y], a[z]) > 0 ? y : cmp(a[x], a[z]) < 0 ? x : z);
  const outside = (l: number, r: number): boolean => (lrange < l && rrange < l) || (lrange > r && rrange > r);

  const sort = (base: number, n: number): void => {
    for (;;) {
      if (n < 7) {
        for (let pm = base + 1; pm < base + n; pm++) {
          for (let pl = pm; pl > base && cmp(a[pl - 1], a[pl]) > 0; pl--) swap(pl, pl - 1);
        }
        return;
      }
      let pm = base + (n >>> 1);
      if (n > 7) {
        let pl = base;
        let pn = base + n - 1;
        if (n > 40) {
          const d = n >>> 3;
          pl = med3(pl, pl + d, pl + 2 * d);
          pm = med3(pm - d, pm, pm + d);
          pn = med3(pn - 2 * d, pn - d, pn);
        }
        pm = med3(pl, pm, pn);
      }
      swap(base, pm);
      let pa = base + 1, pb = pa;
      let pc = base + n - 1, pd = pc;
      for (;;) {
        let r: number;
        while (pb <= pc && (r = cmp(a[pb], a[base])) <= 0) {
          if (r === 0) swap(pa++, pb);
          pb++;
        }
        while (pb <= pc && (r = cmp(a[pc], a[base])) >= 0) {
          if (r === 0) swap(pc, pd--);
          pc--;
        }
        if (pb > pc) break;
        swap(pb++, pc--);
      }
      const pn = base + n;
      let r = Math.min(pa - base, pb - pa);
      vecswap(base, pb - r, r);
      r = Math.min(pd - pc, pn - pd - 1);
      vecswap(pb, pn - r, r);
      r = pb - pa;
      if (r > 1 && !outside(base, base + r - 1)) sort(base, r);
      r = pd - pc;
      if (r <= 1) return;
      // The right part is handled by iterating, not recursing.
      base = pn - r;
      n = r;
      if (outside(base, base + r - 1)) return;
    }
  };
  sort(0, a.length);
}

const RADIUS_COORDS = 1, RADIUS_MEMBER = 2, RADIUS_NOSTORE = 4, GEOSEARCH = 8, GEOSEARCHSTORE = 16;
const SORT_NONE = 0, SORT_ASC = 1, SORT_DESC = 2;

/** The shared body of GEORADIUS*, GEOSEARCH and GEOSEARCHSTORE (Redis's georadiusGeneric). */
function georadiusGeneric(c: Client, argv: Argv, out: ReplySink, srcIndex: number, flags: number): void {
  const db = c.db;
  const z = lookupZset(db, argv.key(srcIndex));
  const shape: GeoShape = { lon: 0, lat: 0, box: false, radius: 0, width: 0, height: 0, conversion: 1 };
  let storeKey: string | null = null;
  let storeDist = false;
  let base: number;
  if (flags & RADIUS_COORDS) {
    base = 6;
    parseLonLat(argv, 2, xy);
    shape.lon = xy[0];
    shape.lat = xy[1];
    parseRadius(argv, 4, shape);
  } else if (flags & RADIUS_MEMBER) {
    base = 5;
    // A missing key still parses the options, for the reply to depend on STORE.
    if (z !== null) {
      centerFromMember(z, argv.key(2), shape);
      parseRadius(argv, 3, shape);
    }
  } else {
    base = 2;
    if (flags & GEOSEARCHSTORE) {
      base = 3;
      storeKey = argv.key(1);
    }
  }

  let withDist = false, withHash = false, withCoords = false;
  let fromMember = false, fromLoc = false, byRadius = false, byBox = false;
  let sort = SORT_NONE;
  let any = false;
  let count = 0;
  const search = (flags & GEOSEARCH) !== 0;
  for (let i = base; i < argv.count; i++) {
    const left = argv.count - i - 1;
    if (argv.is(i, 'WITHDIST')) withDist = true;
    else if (argv.is(i, 'WITHHASH')) withHash = true;
    else if (argv.is(i, 'WITHCOORD')) withCoords = true;
    else if (argv.is(i, 'ANY')) any = true;
    else if (argv.is(i, 'ASC')) sort = SORT_ASC;
    else if (argv.is(i, 'DESC')) sort = SORT_DESC;
    else if (argv.is(i, 'COUNT') && left >= 1) {
      const n = argv.int64(i + 1);
      if (n === null) throw new CommandError(E.NOT_INTEGER);
      if (n <= 0n) throw new CommandError('ERR COUNT must be > 0');
      count = Number(n);
      i++;
    } else if ((argv.is(i, 'STORE') || argv.is(i, 'STOREDIST')) && left >= 1 && !(flags & RADIUS_NOSTORE) && !search) {
      storeKey = argv.key(i + 1);
      storeDist = argv.is(i, 'STOREDIST');
      i++;
    } else if (argv.is(i, 'STOREDIST') && search && flags & GEOSEARCHSTORE) {
      storeDist = true;
    } else if (argv.is(i, 'FROMMEMBER') && left >= 1 && search && !fromLoc) {
      if (z !== null) centerFromMember(z, argv.key(i + 1), shape);
      fromMember = true;
      i++;
    } else if (argv.is(i, 'FROMLONLAT') && left >= 2 && search && !fromMember) {
      parseLonLat(argv, i + 1, xy);
      shape.lon = xy[0];
      shape.lat = xy[1];
      fromLoc = true;
      i += 2;
    } else if (argv.is(i, 'BYRADIUS') && left >= 2 && search && !byBox) {
      parseRadius(argv, i + 1, shape);
      byRadius = true;
      i += 2;
    } else if (argv.is(i, 'BYBOX') && left >= 3 && search && !byRadius) {
      parseBox(argv, i + 1, shape);
      byBox = true;
      i += 3;
    } else {
      throw new CommandError(E.SYNTAX);
    }
  }

  if (storeKey !== null && (withDist || withHash || withCoords)) {
    throw new CommandError(`ERR ${flags & GEOSEARCHSTORE ? 'GEOSEARCHSTORE' : 'STORE option in GEORADIUS'} is not compatible with WITHDIST, WITHHASH and WITHCOORD options`);
  }
  if (search && !(fromMember || fromLoc)) {
    throw new CommandError(`ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ${argv.key(0)}`);
  }
  if (search && !(byRadius || byBox)) {
    throw new CommandError(`ERR exactly one of BYRADIUS and BYBOX can be specified for ${argv.key(0)}`);
  }
  if (any && count === 0) throw new CommandError('ERR the ANY argument requires COUNT argument');

  if (z === null) {
    if (storeKey !== null) {
      storeResult(db, storeKey, []);
      out.int(0);
    } else {
      out.array(0);
    }
    return;
  }

  // COUNT without ANY means the closest ones.
  if (count !== 0 && sort === SORT_NONE && !any) sort = SORT_ASC;

  const needDist = sort !== SORT_NONE || withDist || storeDist;
  const found = searchShape(z, shape, any ? count : 0, needDist);
  if (found.length === 0 && storeKey === null) {
    out.array(0);
    return;
  }
  const returned = count === 0 || found.length < count ? found.length : count;
  if (sort !== SORT_NONE) {
    const cmp = sort === SORT_ASC ? cmpAsc : cmpDesc;
    if (returned === found.length) mergeSort(found, cmp);
    else partialSort(found, cmp, 0, returned - 1);
  }

  if (storeKey === null) {
    const options = (withDist ? 1 : 0) + (withHash ? 1 : 0) + (withCoords ? 1 : 0);
    out.array(returned);
    for (let i = 0; i < returned; i++) {
      const p = found[i];
      if (options) out.array(options + 1);
      out.bulkLatin1(p.member);
      if (withDist) replyDistance(out, p.dist / shape.conversion);
      if (withHash) out.int(Math.trunc(p.score)); // (long long) of the score
      if (withCoords) replyCoords(out, p.lon, p.lat);
    }
    return;
  }
  const pairs: [string, number][] = new Array(returned);
  for (let i = 0; i < returned; i++) {
    const p = found[i];
    pairs[i] = [p.member, storeDist ? p.dist / shape.conversion : p.score];
  }
  storeResult(db, storeKey, pairs);
  out.int(returned);
}

// GEORADIUS key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH]
//   [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]
function georadiusCommand(c: Client, argv: Argv, out: ReplySink): void {
  georadiusGeneric(c, argv, out, 1, RADIUS_COORDS);
}

// GEORADIUS_RO key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH]
//   [COUNT count [ANY]] [ASC|DESC]
function georadiusRoCommand(c: Client, argv: Argv, out: ReplySink): void {
  georadiusGeneric(c, argv, out, 1, RADIUS_COORDS | RADIUS_NOSTORE);
}

// GEORADIUSBYMEMBER key member radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH]
//   [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]
function georadiusbymemberCommand(c: Client, argv: Argv, out: ReplySink): void {
  georadiusGeneric(c, argv, out, 1, RADIUS_MEMBER);
}

// GEORADIUSBYMEMBER_RO key member radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH]
//   [COUNT count [ANY]] [ASC|DESC]
function georadiusbymemberRoCommand(c: Client, argv: Argv, out: ReplySink): void {
  georadiusGeneric(c, argv, out, 1, RADIUS_MEMBER | RADIUS_NOSTORE);
}

// GEOSEARCH key FROMMEMBER member|FROMLONLAT longitude latitude
//   BYRADIUS radius M|KM|FT|MI|BYBOX width height M|KM|FT|MI [ASC|DESC] [COUNT count [ANY]]
//   [WITHCOORD] [WITHDIST] [WITHHASH]
function geosearchCommand(c: Client, argv: Argv, out: ReplySink): void {
  georadiusGeneric(c, argv, out, 1, GEOSEARCH);
}

// GEOSEARCHSTORE destination source FROMMEMBER member|FROMLONLAT longitude latitude
//   BYRADIUS radius M|KM|FT|MI|BYBOX width height M|KM|FT|MI [ASC|DESC] [COUNT count [ANY]]
//   [STOREDIST]
function geosearchstoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  georadiusGeneric(c, argv, out, 2, GEOSEARCH | GEOSEARCHSTORE);
}

/**
 * Redis's georadiusGetKeys (used when the STORE / STOREDIST key specs do not fit the
 * arguments): the source, and the argument after the last STORE or STOREDIST from index 5.
 */
function georadiusKeys(argv: Argv): KeyRef[] {
  let stored = -1;
  for (let i = 5; i < argv.count; i++) {
    if ((argv.is(i, 'STORE') || argv.is(i, 'STOREDIST')) && i + 1 < argv.count) stored = ++i;
  }
  const keys: KeyRef[] = [{ pos: 1, flags: KF.RO | KF.ACCESS }];
  if (stored > 0) keys.push({ pos: stored, flags: KF.OW | KF.UPDATE });
  return keys;
}

const W = F.WRITE | F.DENYOOM;
export default family('geo', ['geo'], [
  //   name                     arity  flags                  keys        handler
  row('geoadd',                  -5,   W,                     [1, 1, 1],  geoaddCommand),
  row('geodist',                 -4,   F.READONLY,            [1, 1, 1],  geodistCommand),
  row('geohash',                 -2,   F.READONLY,            [1, 1, 1],  geohashCommand),
  row('geopos',                  -2,   F.READONLY,            [1, 1, 1],  geoposCommand),
  row('georadius',               -6,   W | F.MOVABLE_KEYS,    [1, 1, 1],  georadiusCommand, { getKeys: georadiusKeys }),
  row('georadius_ro',            -6,   F.READONLY,            [1, 1, 1],  georadiusRoCommand),
  row('georadiusbymember',       -5,   W | F.MOVABLE_KEYS,    [1, 1, 1],  georadiusbymemberCommand, { getKeys: georadiusKeys }),
  row('georadiusbymember_ro',    -5,   F.READONLY,            [1, 1, 1],  georadiusbymemberRoCommand),
  row('geosearch',               -7,   F.READONLY,            [1, 1, 1],  geosearchCommand),
  row('geosearchstore',          -8,   W,                     [1, 2, 1],  geosearchstoreCommand),
]);
