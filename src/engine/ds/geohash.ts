/**
 * Geohash arithmetic of Redis's geo commands: the 52-bit interleaved geohash used as the
 * sorted-set score, its decoding back to coordinates, the haversine distance, and the choice
 * of the 9 geohash boxes a radius/box search scans. Written from the published descriptions
 * of Redis's geo implementation (geohash with Mercator latitude limits, step 26, neighbour
 * boxes); every floating-point operation is done in the same order as Redis does it so that
 * scores, coordinates, search boxes and result order come out bit-identical. Distances use
 * correctly rounded sin/cos/asin (crmath.ts): Redis gets them from glibc, which misrounds
 * about 0.1% of its results, so a full-precision distance (STOREDIST) can differ from
 * Redis's in the last place.
 *
 * Hashes are handled as two uint32 halves (hi/lo): scores can reach 54 bits (a longitude of
 * exactly 180 or a latitude of exactly the limit encodes an index of 2^26), beyond the 2^53
 * of exact JS integers.
 */
import { crAsin, crCos, crSin } from './crmath.js';

export const GEO_STEP_MAX = 26;
export const GEO_LAT_MIN = -85.05112878;
export const GEO_LAT_MAX = 85.05112878;
export const GEO_LONG_MIN = -180;
export const GEO_LONG_MAX = 180;
export const EARTH_RADIUS_IN_METERS = 6372797.560856;
const MERCATOR_MAX = 20037726.37;
const D_R = Math.PI / 180.0;
const TWO32 = 4294967296;

function degRad(ang: number): number {
  return ang * D_R;
}

function radDeg(ang: number): number {
  return ang / D_R;
}

// ---------------------------------------------------------------- bit interleaving

/** Spread the low 16 bits of x onto the even bit positions of a 32-bit word. */
function spread16(x: number): number {
  x &= 0xffff;
  x = (x | (x << 8)) & 0x00ff00ff;
  x = (x | (x << 4)) & 0x0f0f0f0f;
  x = (x | (x << 2)) & 0x33333333;
  x = (x | (x << 1)) & 0x55555555;
  return x;
}

/** Gather the even bits of a 32-bit word into 16 bits. */
function squash32(x: number): number {
  x &= 0x55555555;
  x = (x | (x >>> 1)) & 0x33333333;
  x = (x | (x >>> 2)) & 0x0f0f0f0f;
  x = (x | (x >>> 4)) & 0x00ff00ff;
  x = (x | (x >>> 8)) & 0x0000ffff;
  return x;
}

/** 64-bit interleave of two uint32 (latitude on even bits, longitude on odd), as a double
 * rounded once (what C's (double) of the uint64 gives). `scale` is a power of two (the
 * left shift that aligns a box hash to 52 bits). */
function interleaveToDouble(lat: number, lon: number, scale: number): number {
  const lo = (spread16(lat) | (spread16(lon) << 1)) >>> 0;
  const hi = (spread16(lat >>> 16) | (spread16(lon >>> 16) << 1)) >>> 0;
  return (hi * TWO32 + lo) * scale;
}

/** Scratch output of index computations: [latIdx, lonIdx]. */
const idx = new Float64Array(2);

/**
 * Grid indexes of (lon, lat) at `step` within the ranges: the offset in the range scaled to
 * 2^step and truncated (an index of 2^step is possible at the upper limits, as in Redis).
 */
function encodeIdx(lon: number, lat: number, step: number, latMin: number, latMax: number, lonMin: number, lonMax: number): void {
  let latOff = (lat - latMin) / (latMax - latMin);
  let lonOff = (lon - lonMin) / (lonMax - lonMin);
  const p = Math.pow(2, step);
  latOff *= p;
  lonOff *= p;
  idx[0] = Math.floor(latOff);
  idx[1] = Math.floor(lonOff);
}

/** The sorted-set score of a coordinate pair (already validated). */
export function geoScore(lon: number, lat: number): number {
  encodeIdx(lon, lat, GEO_STEP_MAX, GEO_LAT_MIN, GEO_LAT_MAX, GEO_LONG_MIN, GEO_LONG_MAX);
  return interleaveToDouble(idx[0], idx[1], 1);
}

// ---------------------------------------------------------------- decoding

const P26 = 67108864; // 2^26
const LAT_SCALE = GEO_LAT_MAX - GEO_LAT_MIN;
const LONG_SCALE = GEO_LONG_MAX - GEO_LONG_MIN;

/**
 * Coordinates [lon, lat] a score stands for, written to out: the score cast to uint64 as C
 * does on x86-64 (any score can be in a zset, not only geohashes: truncation, negative values
 * wrap, 2^64 and up and +inf give 0, -inf and below -2^63 give 2^63), de-interleaved into the
 * step-26 cell indexes, and the cell's center in the Mercator ranges, clamped to the limits.
 * Hot path of every search: locals only.
 */
export function decodeScore(score: number, out: Float64Array): void {
  let hi: number, lo: number;
  if (score >= 0 && score < 18446744073709551616) {
    const t = Math.trunc(score);
    hi = Math.floor(t / TWO32);
    lo = t - hi * TWO32;
  } else if (score >= 18446744073709551616) {
    hi = 0;
    lo = 0;
  } else if (score > -9223372036854775808) {
    const m = -Math.trunc(score); // 0 <= m < 2^63: the result is 2^64 - m
    const mh = Math.floor(m / TWO32);
    const ml = m - mh * TWO32;
    lo = (-ml) >>> 0;
    hi = m === 0 ? 0 : (~mh + (ml === 0 ? 1 : 0)) >>> 0;
  } else {
    hi = 0x80000000;
    lo = 0;
  }
  const latIdx = ((squash32(hi) << 16) | squash32(lo)) >>> 0;
  const lonIdx = ((squash32(hi >>> 1) << 16) | squash32(lo >>> 1)) >>> 0;
  // uint32 arithmetic in C: index + 1 wraps to 0 at 2^32.
  const latMin = GEO_LAT_MIN + (latIdx / P26) * LAT_SCALE;
  const latMax = GEO_LAT_MIN + (((latIdx + 1) >>> 0) / P26) * LAT_SCALE;
  const lonMin = GEO_LONG_MIN + (lonIdx / P26) * LONG_SCALE;
  const lonMax = GEO_LONG_MIN + (((lonIdx + 1) >>> 0) / P26) * LONG_SCALE;
  let x = (lonMin + lonMax) / 2;
  if (x > GEO_LONG_MAX) x = GEO_LONG_MAX;
  if (x < GEO_LONG_MIN) x = GEO_LONG_MIN;
  let y = (latMin + latMax) / 2;
  if (y > GEO_LAT_MAX) y = GEO_LAT_MAX;
  if (y < GEO_LAT_MIN) y = GEO_LAT_MIN;
  out[0] = x;
  out[1] = y;
}

const GEOALPHABET = '0123456789bcdefghjkmnpqrstuvwxyz';

/**
 * The standard 11-character geohash of a score: decode, re-encode with the standard ranges
 * (latitude ±90) at step 26, 10 characters from bits 51..2 and a final '0'.
 */
export function standardGeohash(score: number): string {
  const xy = new Float64Array(2);
  decodeScore(score, xy);
  encodeIdx(xy[0], xy[1], GEO_STEP_MAX, -90, 90, -180, 180);
  // Bits beyond 52 (an index of 2^26) never reach the printed windows.
  const lat = idx[0], lon = idx[1];
  const lo = (spread16(lat) | (spread16(lon) << 1)) >>> 0;
  const hi = (spread16(lat >>> 16) | (spread16(lon >>> 16) << 1)) >>> 0;
  let s = '';
  for (let i = 0; i < 10; i++) {
    const shift = 52 - (i + 1) * 5; // 47 .. 2
    let v: number;
    if (shift >= 32) v = hi >>> (shift - 32);
    else v = ((hi << (32 - shift)) | (lo >>> shift)) >>> 0;
    s += GEOALPHABET[v & 0x1f];
  }
  return s + '0';
}

// ---------------------------------------------------------------- distances

/** Distance along a meridian. */
export function latDistance(lat1d: number, lat2d: number): number {
  return EARTH_RADIUS_IN_METERS * Math.abs(degRad(lat2d) - degRad(lat1d));
}

/** Haversine distance in meters (the meridian shortcut when the longitudes are equal). */
export function geoDistance(lon1d: number, lat1d: number, lon2d: number, lat2d: number): number {
  const lon1r = degRad(lon1d);
  const lon2r = degRad(lon2d);
  const v = crSin((lon2r - lon1r) / 2);
  if (v === 0.0) return latDistance(lat1d, lat2d);
  const lat1r = degRad(lat1d);
  const lat2r = degRad(lat2d);
  const u = crSin((lat2r - lat1r) / 2);
  const a = u * u + crCos(lat1r) * crCos(lat2r) * v * v;
  return 2.0 * EARTH_RADIUS_IN_METERS * crAsin(Math.sqrt(a));
}

// ---------------------------------------------------------------- search areas

/** A search shape: center, a radius or a width/height, and the unit's meters. */
export interface GeoShape {
  lon: number;
  lat: number;
  box: boolean;
  radius: number;
  width: number;
  height: number;
  conversion: number;
}

/**
 * The haversine with V8's Math functions: within about 1e-15 relative of the exact distance
 * (more near antipodal points, which `fastDistance` reports as NaN). Only used to settle
 * the in/out checks that are not close calls.
 */
function fastDistance(lon1d: number, lat1d: number, lon2d: number, lat2d: number): number {
  const v = Math.sin((lon2d * D_R - lon1d * D_R) / 2);
  if (v === 0.0) return latDistance(lat1d, lat2d);
  const u = Math.sin((lat2d * D_R - lat1d * D_R) / 2);
  const a = u * u + Math.cos(lat1d * D_R) * Math.cos(lat2d * D_R) * v * v;
  if (a > 0.9999999999) return NaN; // asin is ill-conditioned there: decide exactly
  return 2.0 * EARTH_RADIUS_IN_METERS * Math.asin(Math.sqrt(a));
}

/**
 * Redis's "distance > limit" test on the exact distance, deciding from the fast distance
 * when it is far enough from the limit (a relative 1e-9 is orders of magnitude above its
 * error) and computing the correctly rounded one otherwise.
 */
function beyond(lon1: number, lat1: number, lon2: number, lat2: number, limit: number): boolean {
  const f = fastDistance(lon1, lat1, lon2, lat2);
  const tol = f * 1e-9 + 1e-9;
  if (f > limit + tol) return true;
  if (f < limit - tol) return false;
  return geoDistance(lon1, lat1, lon2, lat2) > limit;
}

/**
 * Is a point inside the shape (Redis's checks, in its order)? The distance itself is left to
 * `geoDistance(shape.lon, shape.lat, lon, lat)`, only computed when a reply needs it.
 */
export function inShape(shape: GeoShape, lon: number, lat: number): boolean {
  if (!shape.box) return !beyond(shape.lon, shape.lat, lon, lat, shape.radius * shape.conversion);
  // Latitude first: cheaper, as Redis orders the checks.
  const w = shape.width * shape.conversion;
  const h = shape.height * shape.conversion;
  if (latDistance(lat, shape.lat) > h / 2) return false;
  return !beyond(lon, lat, shape.lon, lat, w / 2);
}

/** Geohash precision (step) whose cells are about the size of the radius. */
function estimateSteps(rangeMeters: number, lat: number): number {
  if (rangeMeters === 0) return 26;
  let step = 1;
  while (rangeMeters < MERCATOR_MAX) {
    rangeMeters *= 2;
    step++;
  }
  step -= 2; // make sure the range is included in most base cases
  // Cells narrow towards the poles.
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > 26) step = 26;
  return step;
}

/**
 * The score ranges [min, max) to scan for a shape, in Redis's order (center, N, S, E, W, NE,
 * NW, SE, SW), useless boxes left out and a box equal to the previous scanned one skipped.
 * Returned as a flat [min0, max0, min1, max1, ...] list.
 */
export function searchRanges(shape: GeoShape): number[] {
  const lon = shape.lon;
  const lat = shape.lat;
  // Bounding box of the shape.
  const height = shape.conversion * (shape.box ? shape.height / 2 : shape.radius);
  const width = shape.conversion * (shape.box ? shape.width / 2 : shape.radius);
  const latDelta = radDeg(height / EARTH_RADIUS_IN_METERS);
  const lonDeltaTop = radDeg(width / EARTH_RADIUS_IN_METERS / crCos(degRad(lat + latDelta)));
  const lonDeltaBottom = radDeg(width / EARTH_RADIUS_IN_METERS / crCos(degRad(lat - latDelta)));
  const south = lat < 0;
  const minLon = south ? lon - lonDeltaBottom : lon - lonDeltaTop;
  const maxLon = south ? lon + lonDeltaBottom : lon + lonDeltaTop;
  const minLat = lat - latDelta;
  const maxLat = lat + latDelta;

  let radiusMeters = shape.box
    ? Math.sqrt((shape.width / 2) * (shape.width / 2) + (shape.height / 2) * (shape.height / 2))
    : shape.radius;
  radiusMeters *= shape.conversion;

  let steps = estimateSteps(radiusMeters, lat);
  encodeIdx(lon, lat, steps, GEO_LAT_MIN, GEO_LAT_MAX, GEO_LONG_MIN, GEO_LONG_MAX);
  let cLat = idx[0], cLon = idx[1];

  // The step may be too coarse when the area touches the edge of the neighbour cells.
  {
    const p = Math.pow(2, steps);
    const mask = p - 1;
    const latScale = GEO_LAT_MAX - GEO_LAT_MIN;
    const lonScale = GEO_LONG_MAX - GEO_LONG_MIN;
    const nLat = (cLat + 1) % p; // index arithmetic wraps within the step's bits
    const sLat = cLat === 0 ? mask : (cLat - 1) % p;
    const eLon = (cLon + 1) % p;
    const wLon = cLon === 0 ? mask : (cLon - 1) % p;
    const northMax = GEO_LAT_MIN + ((nLat + 1) / p) * latScale;
    const southMin = GEO_LAT_MIN + (sLat / p) * latScale;
    const eastMax = GEO_LONG_MIN + ((eLon + 1) / p) * lonScale;
    const westMin = GEO_LONG_MIN + (wLon / p) * lonScale;
    let decrease = false;
    if (northMax < maxLat) decrease = true;
    if (southMin > minLat) decrease = true;
    if (eastMax < maxLon) decrease = true;
    if (westMin > minLon) decrease = true;
    if (steps > 1 && decrease) {
      steps--;
      encodeIdx(lon, lat, steps, GEO_LAT_MIN, GEO_LAT_MAX, GEO_LONG_MIN, GEO_LONG_MAX);
      cLat = idx[0];
      cLon = idx[1];
    }
  }

  const p = Math.pow(2, steps);
  const mask = p - 1;
  const up = (i: number): number => (i + 1) % p;
  const down = (i: number): number => (i === 0 ? mask : (i - 1) % p);
  // [latIdx, lonIdx] of the 9 boxes; NaN marks a box left out.
  const boxes = [
    cLat, cLon, // center
    up(cLat), cLon, // north
    down(cLat), cLon, // south
    cLat, up(cLon), // east
    cLat, down(cLon), // west
    up(cLat), up(cLon), // north-east
    up(cLat), down(cLon), // north-west
    down(cLat), up(cLon), // south-east
    down(cLat), down(cLon), // south-west
  ];
  if (steps >= 2) {
    const latScale = GEO_LAT_MAX - GEO_LAT_MIN;
    const lonScale = GEO_LONG_MAX - GEO_LONG_MIN;
    const areaLatMin = GEO_LAT_MIN + (cLat / p) * latScale;
    const areaLatMax = GEO_LAT_MIN + ((cLat + 1) / p) * latScale;
    const areaLonMin = GEO_LONG_MIN + (cLon / p) * lonScale;
    const areaLonMax = GEO_LONG_MIN + ((cLon + 1) / p) * lonScale;
    const drop = (...which: number[]): void => { for (const b of which) boxes[b * 2] = NaN; };
    if (areaLatMin < minLat) drop(2, 8, 7); // south, south-west, south-east
    if (areaLatMax > maxLat) drop(1, 5, 6); // north, north-east, north-west
    if (areaLonMin < minLon) drop(4, 8, 6); // west, south-west, north-west
    if (areaLonMax > maxLon) drop(3, 7, 5); // east, south-east, north-east
  }

  const scale = Math.pow(2, 52 - steps * 2);
  const ranges: number[] = [];
  let last = -1;
  for (let i = 0; i < 9; i++) {
    const bl = boxes[i * 2], bn = boxes[i * 2 + 1];
    if (bl !== bl) continue;
    // Equal to the box scanned just before (huge radii): skip. The center is never compared.
    if (last > 0 && boxes[last * 2] === bl && boxes[last * 2 + 1] === bn) continue;
    ranges.push(interleaveToDouble(bl, bn, scale), boxEnd(bl, bn, scale));
    last = i;
  }
  return ranges;
}

/** (hash + 1) << shift as a double: the exclusive end of a box's score range. */
function boxEnd(lat: number, lon: number, scale: number): number {
  const lo = (spread16(lat) | (spread16(lon) << 1)) >>> 0;
  const hi = (spread16(lat >>> 16) | (spread16(lon >>> 16) << 1)) >>> 0;
  // lo + 1 stays exact in a double; the carry into hi is implicit in the sum.
  return (hi * TWO32 + (lo + 1)) * scale;
}
