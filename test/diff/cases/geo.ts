import type { Script, Step } from '../harness.js';

/** Deterministic pseudo-random numbers (mulberry32), so both servers get the same points. */
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

const sicily = ['GEOADD', 'Sicily', '13.361389', '38.115556', 'Palermo', '15.087269', '37.502669', 'Catania'];
const edges = ['GEOADD', 'Sicily', '12.758489', '38.788135', 'edge1', '17.241510', '38.788135', 'edge2'];

/** GEOADD of n random points named <prefix><i>, within the given ranges. */
function randomPoints(key: string, prefix: string, n: number, seed: number, lon: [number, number], lat: [number, number]): string[] {
  const r = prng(seed);
  const args = ['GEOADD', key];
  for (let i = 0; i < n; i++) {
    const x = lon[0] + r() * (lon[1] - lon[0]);
    const y = lat[0] + r() * (lat[1] - lat[0]);
    args.push(x.toFixed(6), y.toFixed(6), `${prefix}${i}`);
  }
  return args;
}

const world = randomPoints('w', 'p', 300, 1, [-180, 180], [-85.05112878, 85.05112878]);
const europe = randomPoints('eu', 'e', 300, 2, [-10, 30], [35, 60]);
const pole = randomPoints('np', 'n', 150, 3, [-180, 180], [80, 85.05112878]);
const southPole = randomPoints('sp', 's', 150, 4, [-180, 180], [-85.05112878, -80]);
const antimeridianEast = randomPoints('am', 'a', 100, 5, [178, 180], [-10, 10]);
const antimeridianWest = randomPoints('am', 'b', 100, 6, [-180, -178], [-10, 10]);

/** Searches of one set from several centers, with every reply form (order included). */
function searches(key: string, centers: Array<[string, string]>, shapes: string[][]): Step[] {
  const steps: Step[] = [];
  for (const [lon, lat] of centers) {
    for (const shape of shapes) {
      steps.push(['GEOSEARCH', key, 'FROMLONLAT', lon, lat, ...shape]);
      steps.push(['GEOSEARCH', key, 'FROMLONLAT', lon, lat, ...shape, 'WITHDIST', 'WITHHASH', 'WITHCOORD']);
      steps.push(['GEOSEARCH', key, 'FROMLONLAT', lon, lat, ...shape, 'DESC', 'WITHDIST']);
      steps.push(['GEOSEARCH', key, 'FROMLONLAT', lon, lat, ...shape, 'COUNT', '7', 'WITHDIST']);
      steps.push(['GEOSEARCH', key, 'FROMLONLAT', lon, lat, ...shape, 'COUNT', '7', 'ANY']);
    }
  }
  return steps;
}

const radii = [['BYRADIUS', '0', 'm'], ['BYRADIUS', '150', 'km'], ['BYRADIUS', '1500', 'km'], ['BYRADIUS', '6000', 'km'], ['BYRADIUS', '30000', 'km']];
const boxes = [['BYBOX', '300', '100', 'km'], ['BYBOX', '2000', '4000', 'km'], ['BYBOX', '20000', '9000', 'km'], ['BYBOX', '1', '1', 'mi']];

const scripts: Script[] = [
  // ------------------------------------------------------------ documentation examples
  { name: 'GEOADD, GEODIST, GEORADIUS: the Sicily examples', steps: [
    sicily, ['GEODIST', 'Sicily', 'Palermo', 'Catania'], ['GEORADIUS', 'Sicily', '15', '37', '100', 'km'],
    ['GEORADIUS', 'Sicily', '15', '37', '200', 'km'], ['GEORADIUS', 'Sicily', '15', '37', '200', 'km', 'WITHDIST'],
    ['GEORADIUS', 'Sicily', '15', '37', '200', 'km', 'WITHCOORD'], ['GEORADIUS', 'Sicily', '15', '37', '200', 'km', 'WITHDIST', 'WITHCOORD'],
    ['GEORADIUS', 'Sicily', '15', '37', '200', 'km', 'WITHHASH', 'WITHCOORD', 'WITHDIST', 'ASC'],
    ['GEODIST', 'Sicily', 'Palermo', 'Catania', 'km'], ['GEODIST', 'Sicily', 'Palermo', 'Catania', 'mi'],
    ['GEODIST', 'Sicily', 'Palermo', 'Catania', 'ft'], ['GEODIST', 'Sicily', 'Palermo', 'Catania', 'M'], ['GEODIST', 'Sicily', 'Foo', 'Bar'],
  ] },
  { name: 'GEOHASH and GEOPOS: the Sicily examples', steps: [
    sicily, ['GEOHASH', 'Sicily', 'Palermo', 'Catania'], ['GEOPOS', 'Sicily', 'Palermo', 'Catania', 'NonExisting'],
    ['GEOHASH', 'Sicily', 'Palermo', 'nosuch'], ['GEOHASH', 'Sicily'], ['GEOPOS', 'Sicily'],
    ['GEOHASH', 'none', 'a', 'b'], ['GEOPOS', 'none', 'a', 'b'], ['GEOPOS', 'none'],
  ] },
  { name: 'GEORADIUSBYMEMBER: the documentation example', steps: [
    ['GEOADD', 'Sicily', '13.583333', '37.316667', 'Agrigento'], sicily,
    ['GEORADIUSBYMEMBER', 'Sicily', 'Agrigento', '100', 'km'], ['GEORADIUSBYMEMBER', 'Sicily', 'Agrigento', '200', 'km', 'WITHDIST', 'ASC'],
    ['GEORADIUSBYMEMBER_RO', 'Sicily', 'Agrigento', '200', 'km', 'WITHCOORD', 'DESC'],
    ['GEORADIUS_RO', 'Sicily', '15', '37', '200', 'km', 'WITHDIST', 'WITHCOORD', 'WITHHASH', 'COUNT', '1'],
  ] },
  { name: 'GEOSEARCH and GEOSEARCHSTORE: the documentation examples', steps: [
    sicily, edges,
    ['GEOSEARCH', 'Sicily', 'FROMLONLAT', '15', '37', 'BYRADIUS', '200', 'km', 'ASC'],
    ['GEOSEARCH', 'Sicily', 'FROMLONLAT', '15', '37', 'BYBOX', '400', '400', 'km', 'ASC', 'WITHCOORD', 'WITHDIST'],
    ['GEOSEARCH', 'Sicily', 'FROMLONLAT', '15', '37', 'BYBOX', '400', '400', 'km', 'ASC', 'WITHCOORD', 'WITHDIST', 'WITHHASH'],
    ['GEOSEARCHSTORE', 'key1', 'Sicily', 'FROMLONLAT', '15', '37', 'BYBOX', '400', '400', 'km', 'ASC', 'COUNT', '3'],
    ['GEOSEARCH', 'key1', 'FROMLONLAT', '15', '37', 'BYBOX', '400', '400', 'km', 'ASC', 'WITHCOORD', 'WITHDIST', 'WITHHASH'],
    ['GEOSEARCHSTORE', 'key2', 'Sicily', 'FROMLONLAT', '15', '37', 'BYBOX', '400', '400', 'km', 'ASC', 'COUNT', '3', 'STOREDIST'],
    ['ZRANGE', 'key2', '0', '-1', 'WITHSCORES'], ['ZRANGE', 'key1', '0', '-1', 'WITHSCORES'],
    ['GEOSEARCH', 'Sicily', 'FROMMEMBER', 'Palermo', 'BYRADIUS', '300', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'Sicily', 'FROMMEMBER', 'edge2', 'BYBOX', '500', '200', 'km', 'DESC', 'WITHDIST'],
  ] },
  // ------------------------------------------------------------ the value is a sorted set
  { name: 'a geo set is a sorted set with the geohash as score', steps: [
    sicily, ['TYPE', 'Sicily'], ['OBJECT', 'ENCODING', 'Sicily'], ['ZRANGE', 'Sicily', '0', '-1', 'WITHSCORES'],
    ['ZSCORE', 'Sicily', 'Palermo'], ['ZCARD', 'Sicily'], ['ZREM', 'Sicily', 'Palermo'], ['GEOPOS', 'Sicily', 'Palermo', 'Catania'],
    ['ZADD', 'Sicily', '3479099956230698', 'Palermo'], ['GEOPOS', 'Sicily', 'Palermo'], ['GEODIST', 'Sicily', 'Palermo', 'Catania'],
    ['ZREM', 'Sicily', 'Palermo', 'Catania'], ['EXISTS', 'Sicily'],
  ] },
  { name: 'arbitrary zset scores decode as Redis decodes them', steps: [
    ['ZADD', 'z', '-5', 'neg', '1.5', 'frac', '1e300', 'huge', 'inf', 'inf', '-inf', 'minf', '9007199254740993', 'b53',
      '18014398509481984', 'b54', '1e19', 'e19', '0', 'zero', '-0.5', 'mhalf', '-9.3e18', 'mbig', '4503599627370495', 'max52'],
    ['GEOPOS', 'z', 'neg', 'frac', 'huge', 'inf', 'minf', 'b53', 'b54', 'e19', 'zero', 'mhalf', 'mbig', 'max52'],
    ['GEOHASH', 'z', 'neg', 'frac', 'huge', 'inf', 'minf', 'b53', 'b54', 'e19', 'zero', 'mhalf', 'mbig', 'max52'],
    ['GEODIST', 'z', 'neg', 'zero'], ['GEODIST', 'z', 'frac', 'max52', 'km'], ['GEODIST', 'z', 'minf', 'mbig'],
    ['GEOSEARCH', 'z', 'FROMMEMBER', 'neg', 'BYRADIUS', '100', 'km', 'WITHDIST', 'WITHCOORD'],
    ['GEOSEARCH', 'z', 'FROMMEMBER', 'zero', 'BYRADIUS', '10', 'km', 'WITHDIST', 'WITHHASH', 'WITHCOORD'],
    ['GEOSEARCH', 'z', 'FROMMEMBER', 'max52', 'BYBOX', '100', '100', 'km', 'WITHHASH'],
  ] },
  // ------------------------------------------------------------ GEOADD
  { name: 'GEOADD NX XX CH', steps: [
    sicily, ['GEOADD', 'Sicily', 'NX', '13.361389', '38.115556', 'Palermo', '15', '37', 'New'],
    ['GEOADD', 'Sicily', 'XX', '13', '38', 'Palermo', '16', '38', 'Other'], ['GEOPOS', 'Sicily', 'Palermo', 'Other', 'New'],
    ['GEOADD', 'Sicily', 'CH', '13.5', '38', 'Palermo', '15', '37', 'New', '14', '37', 'Third'],
    ['GEOADD', 'Sicily', 'XX', 'CH', '13.6', '38', 'Palermo', '1', '1', 'Nope'], ['GEOADD', 'Sicily', 'CH', 'NX', '1', '1', 'Palermo', '2', '2', 'Fourth'],
    ['GEOADD', 'Sicily', 'nx', 'ch', '3', '3', 'Fifth'], ['GEOADD', 'Sicily', '13.6', '38', 'Palermo'],
    ['GEOADD', 'Sicily', 'CH', '13.6', '38', 'Palermo'], ['GEOADD', 'Sicily', 'CH', '1', '2', 'dup', '3', '4', 'dup'],
    ['GEOADD', 'Sicily', '1', '2', 'dup2', '3', '4', 'dup2'], ['GEOPOS', 'Sicily', 'dup', 'dup2'],
    ['ZRANGE', 'Sicily', '0', '-1', 'WITHSCORES'],
    ['GEOADD', 'fresh', 'XX', '1', '1', 'a'], ['EXISTS', 'fresh'], ['GEOADD', 'fresh', 'XX', 'CH', '1', '1', 'a'], ['EXISTS', 'fresh'],
    ['GEOADD', 'fresh', 'NX', '1', '1', 'a'], ['TYPE', 'fresh'],
  ] },
  { name: 'GEOADD errors', steps: [
    ['GEOADD', 'k', '1', '2'], ['GEOADD', 'k', '1', '2', 'a', '3'], ['GEOADD', 'k', 'NX', 'XX', '1', '2', 'a'],
    ['GEOADD', 'k', 'CH', 'CH', 'CH'], ['GEOADD', 'k', 'NX', 'CH', 'XX'], ['GEOADD', 'k', 'GT', '1', '2', 'a'],
    ['GEOADD', 'k', 'GT', '1', '2'], ['GEOADD', 'k', 'x', '2', 'a'], ['GEOADD', 'k', '1', 'y', 'a'], ['GEOADD', 'k', 'nan', '2', 'a'],
    ['GEOADD', 'k', '200', '100', 'a'], ['GEOADD', 'k', '180.0000001', '0', 'a'], ['GEOADD', 'k', '-180.0000001', '0', 'a'],
    ['GEOADD', 'k', '0', '85.05112879', 'a'], ['GEOADD', 'k', '0', '-85.05112879', 'a'], ['GEOADD', 'k', '0', '90', 'a'],
    ['GEOADD', 'k', 'inf', '0', 'a'], ['GEOADD', 'k', '0', '-inf', 'a'], ['GEOADD', 'k', '1e300', '1', 'a'], ['GEOADD', 'k', '-1e25', '-1e-7', 'a'],
    ['GEOADD', 'k', '-0', '100', 'a'], ['GEOADD', 'k', '181.0000005', '0', 'a'], ['GEOADD', 'k', '181.0000015', '0', 'a'],
    ['GEOADD', 'k', '200.1234565', '0', 'a'], ['GEOADD', 'k', '1', '1', 'ok', '1', '91', 'bad'], ['EXISTS', 'k'],
    ['GEOADD', 'k'], ['GEOADD', 'k', '1', '1'], ['SET', 's', 'x'], ['GEOADD', 's', '1', '1', 'a'], ['GEOADD', 's', '1', '100', 'a'],
    ['GEOADD', 's', 'XX', '1', '1', 'a'], ['GEOADD', 's', 'NX', 'XX', '1', '1', 'a'], ['GEOADD', 's', '1', '1'],
  ] },
  { name: 'coordinates at the limits and on the antimeridian', steps: [
    ['GEOADD', 'lim', '180', '85.05112878', 'ne', '-180', '-85.05112878', 'sw', '180', '-85.05112878', 'se', '-180', '85.05112878', 'nw',
      '0', '0', 'origin', '180', '0', 'east', '-180', '0', 'west', '0', '85.05112878', 'north', '0', '-85.05112878', 'south',
      '179.9999999', '85.0511287', 'almost', '-0', '-0', 'negzero', '1e-300', '-1e-300', 'tiny'],
    ['ZRANGE', 'lim', '0', '-1', 'WITHSCORES'],
    ['GEOPOS', 'lim', 'ne', 'sw', 'se', 'nw', 'origin', 'east', 'west', 'north', 'south', 'almost', 'negzero', 'tiny'],
    ['GEOHASH', 'lim', 'ne', 'sw', 'se', 'nw', 'origin', 'east', 'west', 'north', 'south', 'almost', 'negzero', 'tiny'],
    ['GEODIST', 'lim', 'east', 'west'], ['GEODIST', 'lim', 'ne', 'sw'], ['GEODIST', 'lim', 'north', 'south', 'km'],
    ['GEODIST', 'lim', 'origin', 'east', 'mi'], ['GEODIST', 'lim', 'ne', 'nw'], ['GEODIST', 'lim', 'origin', 'negzero'],
    ['GEOSEARCH', 'lim', 'FROMLONLAT', '180', '85.05112878', 'BYRADIUS', '100', 'km', 'WITHDIST', 'WITHHASH'],
    ['GEOSEARCH', 'lim', 'FROMLONLAT', '180', '85.05112878', 'BYRADIUS', '0', 'm', 'WITHDIST'],
    ['GEOSEARCH', 'lim', 'FROMLONLAT', '-180', '-85.05112878', 'BYBOX', '100', '100', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'lim', 'FROMLONLAT', '180', '0', 'BYRADIUS', '1', 'km', 'WITHDIST', 'WITHCOORD'],
    ['GEOSEARCH', 'lim', 'FROMLONLAT', '-180', '0', 'BYBOX', '10', '10', 'km', 'WITHDIST', 'WITHCOORD'],
    ['GEOSEARCH', 'lim', 'FROMMEMBER', 'east', 'BYRADIUS', '20000', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'lim', 'FROMMEMBER', 'north', 'BYRADIUS', '20000', 'km', 'DESC', 'WITHDIST'],
    ['GEOSEARCH', 'lim', 'FROMMEMBER', 'origin', 'BYRADIUS', '0', 'km', 'WITHDIST'],
  ] },
  // ------------------------------------------------------------ GEODIST / GEOHASH / GEOPOS errors
  { name: 'GEODIST, GEOHASH, GEOPOS errors and missing data', steps: [
    sicily, ['GEODIST', 'Sicily', 'Palermo', 'Catania', 'yd'], ['GEODIST', 'Sicily', 'Palermo', 'Catania', 'km', 'x'],
    ['GEODIST', 'none', 'a', 'b', 'x'], ['GEODIST', 'none', 'a', 'b'], ['GEODIST', 'Sicily', 'Palermo', 'nosuch'],
    ['GEODIST', 'Sicily', 'nosuch', 'Palermo', 'km'], ['GEODIST', 'Sicily', 'Palermo', 'Palermo'], ['GEODIST', 'Sicily', 'Palermo'],
    ['SET', 's', 'x'], ['GEODIST', 's', 'a', 'b'], ['GEODIST', 's', 'a', 'b', 'zz'], ['GEOHASH', 's', 'a'], ['GEOPOS', 's', 'a'],
    ['GEOHASH', 's'], ['GEOPOS'], ['GEOHASH'],
  ] },
  // ------------------------------------------------------------ GEORADIUS family
  { name: 'GEORADIUS options: COUNT, ANY, ASC, DESC, WITH*', steps: [
    europe,
    ['GEORADIUS', 'eu', '10', '50', '300', 'km'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'ASC'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'DESC', 'WITHDIST'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '3'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '3', 'DESC'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '3', 'ANY'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '3', 'ANY', 'ASC', 'WITHDIST'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'ANY', 'COUNT', '5', 'DESC', 'WITHCOORD'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '1000', 'WITHHASH'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '1000', 'ANY'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'withdist', 'withcoord', 'withhash', 'count', '4', 'asc'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'ASC', 'DESC', 'COUNT', '9', 'COUNT', '4'],
    ['GEORADIUS', 'eu', '10', '50', '186411.4', 'mi', 'COUNT', '5', 'WITHDIST'], ['GEORADIUS', 'eu', '10', '50', '984252', 'ft', 'WITHDIST', 'COUNT', '5'],
    ['GEORADIUS', 'eu', '10', '50', '0', 'km'], ['GEORADIUS', 'eu', '0', '0', '10', 'km'], ['GEORADIUS', 'none', '0', '0', '10', 'km'],
    ['GEORADIUS_RO', 'eu', '10', '50', '200', 'km', 'WITHDIST', 'COUNT', '6', 'DESC'],
    ['GEORADIUSBYMEMBER', 'eu', 'e17', '500', 'km', 'WITHDIST', 'COUNT', '5'], ['GEORADIUSBYMEMBER', 'eu', 'e17', '500', 'km'],
    ['GEORADIUSBYMEMBER_RO', 'eu', 'e17', '500', 'km', 'COUNT', '5', 'ANY', 'WITHCOORD'],
    ['GEORADIUS', 'eu', '10', '50', 'inf', 'km', 'COUNT', '3'], ['GEORADIUS', 'eu', '10', '50', '+inf', 'm'],
  ] },
  { name: 'GEORADIUS STORE and STOREDIST', steps: [
    europe,
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STORE', 'dst'], ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES'], ['TYPE', 'dst'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STOREDIST', 'dst'], ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '3', 'STOREDIST', 'dst'], ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'mi', 'COUNT', '4', 'DESC', 'STORE', 'dst'], ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STORE', 'a', 'STOREDIST', 'b'], ['EXISTS', 'a', 'b'], ['ZRANGE', 'b', '0', '2', 'WITHSCORES'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STOREDIST', 'a', 'STORE', 'c'], ['EXISTS', 'c'], ['ZRANGE', 'c', '0', '2', 'WITHSCORES'],
    ['GEORADIUSBYMEMBER', 'eu', 'e3', '200', 'km', 'STOREDIST', 'dst2', 'COUNT', '5'], ['ZRANGE', 'dst2', '0', '-1', 'WITHSCORES'],
    ['GEORADIUSBYMEMBER', 'eu', 'e3', '200', 'km', 'store', 'dst2', 'count', '5', 'any'], ['ZRANGE', 'dst2', '0', '-1', 'WITHSCORES'],
    ['SET', 'dst', 'string'], ['EXPIRE', 'dst', '100'], ['GEORADIUS', 'eu', '10', '50', '100', 'km', 'STORE', 'dst'], ['TYPE', 'dst'], ['TTL', 'dst'],
    ['GEORADIUS', 'eu', '0', '0', '10', 'km', 'STORE', 'dst'], ['EXISTS', 'dst'],
    ['SET', 'dst', 'x'], ['GEORADIUS', 'none', '0', '0', '10', 'km', 'STORE', 'dst'], ['EXISTS', 'dst'],
    ['SET', 'dst', 'x'], ['GEORADIUSBYMEMBER', 'none', 'm', '10', 'km', 'STOREDIST', 'dst'], ['EXISTS', 'dst'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STORE', 'eu', 'COUNT', '2'], ['ZRANGE', 'eu', '0', '-1', 'WITHSCORES'],
  ] },
  { name: 'GEORADIUS errors', steps: [
    europe, ['SET', 's', 'x'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '0'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '-1'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', 'x'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'COUNT', '99999999999999999999'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'ANY'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STORE'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STOREDIST'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STORE', 'd', 'WITHDIST'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'WITHCOORD', 'STOREDIST', 'd'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'WITHHASH', 'STORE', 'd'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'STORE', 'd', 'ANY'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'FOO'], ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'FROMMEMBER', 'e1'],
    ['GEORADIUS', 'eu', '10', '50', '300', 'km', 'BYRADIUS', '1', 'km'], ['GEORADIUS', 'eu', '10', '50', '300', 'yards'],
    ['GEORADIUS', 'eu', '10', '50', 'x', 'km'], ['GEORADIUS', 'eu', '10', '50', '-1', 'km'], ['GEORADIUS', 'eu', '10', '50', '-1', 'yd'],
    ['GEORADIUS', 'eu', '10', '50', 'nan', 'km'], ['GEORADIUS', 'eu', 'x', '50', '300', 'km'], ['GEORADIUS', 'eu', '10', '95', '300', 'km'],
    ['GEORADIUS', 'eu', '10', '95', 'x', 'km'], ['GEORADIUS', 'eu', '10', '50', '300'], ['GEORADIUS', 'none', '10', '95', '300', 'km'],
    ['GEORADIUS', 'none', '10', '50', '300', 'km', 'ANY'], ['GEORADIUS', 'none', '10', '50', '300', 'km', 'COUNT', '0'],
    ['GEORADIUS', 's', '10', '95', '300', 'km'], ['GEORADIUS', 's', '10', '50', '300', 'km', 'STORE', 'd'],
    ['GEORADIUS_RO', 'eu', '10', '50', '300', 'km', 'STORE', 'd'], ['GEORADIUS_RO', 'eu', '10', '50', '300', 'km', 'STOREDIST', 'd'],
    ['GEORADIUSBYMEMBER', 'eu', 'nosuch', '300', 'km'], ['GEORADIUSBYMEMBER', 'eu', 'nosuch', 'x', 'km'],
    ['GEORADIUSBYMEMBER', 'eu', 'e1', 'x', 'km'], ['GEORADIUSBYMEMBER', 'eu', 'e1', '-5', 'km'], ['GEORADIUSBYMEMBER', 'eu', 'e1', '5', 'parsec'],
    ['GEORADIUSBYMEMBER', 'none', 'e1', 'x', 'parsec'], ['GEORADIUSBYMEMBER', 'none', 'e1', 'x', 'parsec', 'FOO'],
    ['GEORADIUSBYMEMBER', 'none', 'e1', '1', 'km', 'ANY'], ['GEORADIUSBYMEMBER', 's', 'e1', '1', 'km'],
    ['GEORADIUSBYMEMBER_RO', 'eu', 'e1', '10', 'km', 'STORE', 'd'], ['GEORADIUSBYMEMBER', 'eu', 'e1', '10', 'km', 'STORE', 'd', 'WITHDIST'],
    ['GEORADIUSBYMEMBER', 'eu', 'e1', '10'], ['GEORADIUS_RO', 'eu', '10', '50', '300'], ['GEORADIUSBYMEMBER_RO', 'eu', 'e1'],
    ['EXISTS', 'd'],
  ] },
  // ------------------------------------------------------------ GEOSEARCH / GEOSEARCHSTORE
  { name: 'GEOSEARCH options', steps: [
    europe,
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '250', 'km'],
    ['GEOSEARCH', 'eu', 'BYRADIUS', '250', 'km', 'FROMLONLAT', '10', '50', 'ASC', 'WITHDIST'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYRADIUS', '250', 'km', 'DESC', 'WITHCOORD', 'WITHHASH'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYBOX', '500', '250', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYBOX', '500', '250', 'km', 'COUNT', '4'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYBOX', '500', '250', 'km', 'COUNT', '4', 'ANY'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYBOX', '500', '250', 'km', 'COUNT', '4', 'ANY', 'DESC', 'WITHDIST'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'FROMMEMBER', 'e11', 'BYRADIUS', '100', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '10', '50', 'FROMLONLAT', '0', '40', 'BYRADIUS', '300', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '1', 'km', 'BYRADIUS', '300', 'km', 'COUNT', '3'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '10', '50', 'BYBOX', '1', '1', 'km', 'BYBOX', '600', '300', 'km', 'COUNT', '3'],
    ['geosearch', 'eu', 'frommember', 'e10', 'bybox', '311', '155', 'mi', 'asc', 'count', '3', 'withdist', 'withcoord', 'withhash'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYBOX', '1000000', '1000000', 'ft', 'COUNT', '3', 'WITHDIST'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYBOX', '0', '0', 'm', 'WITHDIST'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYRADIUS', '0', 'm'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYBOX', '0', '1000', 'km', 'WITHDIST'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e10', 'BYBOX', '1000', '0', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '10', '50', 'BYBOX', 'inf', '100', 'km', 'COUNT', '5'], ['GEOSEARCH', 'eu', 'FROMLONLAT', '10', '50', 'BYBOX', '100', 'inf', 'km', 'COUNT', '5'],
    ['GEOSEARCH', 'none', 'FROMMEMBER', 'x', 'BYRADIUS', '10', 'km'], ['GEOSEARCH', 'none', 'FROMLONLAT', '0', '0', 'BYBOX', '10', '10', 'km'],
  ] },
  { name: 'GEOSEARCH errors', steps: [
    europe, ['SET', 's', 'x'],
    ['GEOSEARCH', 'eu', 'BYRADIUS', '10', 'km', 'ASC'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'ASC', 'COUNT', '1'],
    ['geosearch', 'eu', 'BYRADIUS', '10', 'km', 'ASC'], ['GeoSearch', 'eu', 'FROMMEMBER', 'e1', 'ASC', 'DESC'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'FROMMEMBER', 'e1', 'BYRADIUS', '1', 'km'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', '1', 'km', 'BYBOX', '1', '1', 'km'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYBOX', '1', '1', 'km', 'BYRADIUS', '1', 'km'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'nosuch', 'BYRADIUS', '1', 'km'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'nosuch', 'BYRADIUS', 'x', 'km'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', 'x', 'km'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', '-1', 'km'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', '1', 'au'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', '1'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYBOX', 'x', '1', 'km'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYBOX', '1', 'y', 'km'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYBOX', 'x', 'y', 'km'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYBOX', '-1', '1', 'km'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYBOX', '1', '-1', 'km'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYBOX', '1', '1', 'au'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYBOX', '1', '1'], ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', 'BYBOX', '1', '1', 'km'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '200', '1', 'BYRADIUS', '1', 'km'], ['GEOSEARCH', 'eu', 'FROMLONLAT', 'x', '1', 'BYRADIUS', '1', 'km'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'STORE', 'd'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'STOREDIST'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'ANY'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'COUNT', '0'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'COUNT', 'two'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'COUNT'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'FOO'],
    ['GEOSEARCH', 'eu', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'WITHDIST', 'FROMMEMBER', 'nosuch'],
    ['GEOSEARCH', 'none', 'FROMMEMBER', 'e1', 'ASC'], ['GEOSEARCH', 'none', 'FROMLONLAT', '1', '1', 'BYRADIUS', '1', 'km', 'ANY'],
    ['GEOSEARCH', 'none', 'FROMLONLAT', '1', '100', 'BYRADIUS', '1', 'km'], ['GEOSEARCH', 's', 'FROMMEMBER', 'e1', 'BYRADIUS', '1', 'km'],
    ['GEOSEARCH', 's', 'BYRADIUS', '1', 'km'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS'], ['GEOSEARCH', 'eu', 'FROMMEMBER', 'e1'],
    ['GEOSEARCH', 'eu', 'FROMMEMBER'],
  ] },
  { name: 'GEOSEARCHSTORE', steps: [
    europe, ['SET', 's', 'x'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '250', 'km'], ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '250', 'km', 'STOREDIST'], ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMMEMBER', 'e5', 'BYBOX', '400', '400', 'km', 'COUNT', '5', 'STOREDIST'], ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMMEMBER', 'e5', 'BYBOX', '400', '400', 'mi', 'COUNT', '5', 'ANY', 'DESC', 'storedist'],
    ['ZRANGE', 'dst', '0', '-1', 'WITHSCORES'], ['OBJECT', 'ENCODING', 'dst'],
    ['GEOSEARCHSTORE', 'big', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '3000', 'km'], ['OBJECT', 'ENCODING', 'big'], ['ZCARD', 'big'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '250', 'km', 'WITHDIST'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '250', 'km', 'WITHCOORD'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '250', 'km', 'WITHHASH', 'STOREDIST'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMLONLAT', '10', '50', 'BYRADIUS', '250', 'km', 'STORE', 'x'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'BYRADIUS', '250', 'km'], ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMMEMBER', 'e1', 'STOREDIST'],
    ['geosearchstore', 'dst', 'eu', 'FROMMEMBER', 'e1', 'STOREDIST'], ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMMEMBER', 'nosuch', 'BYRADIUS', '1', 'km'],
    ['GEOSEARCHSTORE', 'dst', 's', 'FROMMEMBER', 'e1', 'BYRADIUS', '1', 'km'], ['GEOSEARCHSTORE', 's', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', '1', 'km'],
    ['TYPE', 's'], ['SET', 'dst', 'x'], ['EXPIRE', 'dst', '50'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', '100', 'km'], ['TYPE', 'dst'], ['TTL', 'dst'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMLONLAT', '0', '0', 'BYRADIUS', '1', 'km'], ['EXISTS', 'dst'],
    ['SET', 'dst', 'x'], ['GEOSEARCHSTORE', 'dst', 'none', 'FROMMEMBER', 'e1', 'BYRADIUS', '1', 'km'], ['EXISTS', 'dst'],
    ['GEOSEARCHSTORE', 'eu', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', '300', 'km', 'COUNT', '3'], ['ZRANGE', 'eu', '0', '-1', 'WITHSCORES'],
    ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS'], ['GEOSEARCHSTORE', 'dst', 'eu', 'FROMMEMBER', 'e1', 'BYRADIUS', '1'],
  ] },
  // ------------------------------------------------------------ ordering: ties, partial sorts
  { name: 'equal distances: full and partial sorts order ties as Redis does', steps: [
    ['GEOADD', 'ties', ...Array.from({ length: 60 }, (_, i) => ['10', '10', `m${i}`]).flat(), '10.0001', '10', 'k', '10', '10.0002', 'j'],
    ...['1', '2', '5', '6', '7', '8', '30', '41', '59', '60', '61', '100'].flatMap((n) => [
      ['GEOSEARCH', 'ties', 'FROMLONLAT', '10', '10', 'BYRADIUS', '100', 'km', 'COUNT', n],
      ['GEOSEARCH', 'ties', 'FROMLONLAT', '10', '10', 'BYRADIUS', '100', 'km', 'COUNT', n, 'DESC'],
      ['GEOSEARCH', 'ties', 'FROMLONLAT', '10.00005', '10', 'BYRADIUS', '100', 'km', 'COUNT', n, 'WITHDIST'],
    ]),
    ['GEOSEARCH', 'ties', 'FROMLONLAT', '10', '10', 'BYRADIUS', '100', 'km', 'DESC'],
    ['GEOSEARCH', 'ties', 'FROMLONLAT', '10', '10', 'BYRADIUS', '100', 'km', 'ASC'],
    ['GEOSEARCH', 'ties', 'FROMLONLAT', '10', '10', 'BYRADIUS', '100', 'km'],
    ['GEOSEARCHSTORE', 'd', 'ties', 'FROMLONLAT', '10', '10', 'BYRADIUS', '100', 'km', 'COUNT', '10', 'DESC', 'STOREDIST'],
    ['ZRANGE', 'd', '0', '-1', 'WITHSCORES'],
  ] },
  { name: 'a grid: many equal distances from grid centers', steps: [
    ['GEOADD', 'grid', ...Array.from({ length: 15 * 15 }, (_, i) => [(2 + (i % 15) * 0.01).toFixed(2), (40 + Math.floor(i / 15) * 0.01).toFixed(2), `g${i}`]).flat()],
    ['GEOSEARCH', 'grid', 'FROMLONLAT', '2.07', '40.07', 'BYRADIUS', '3', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'grid', 'FROMLONLAT', '2.07', '40.07', 'BYRADIUS', '3', 'km', 'ASC', 'WITHDIST'],
    ['GEOSEARCH', 'grid', 'FROMLONLAT', '2.07', '40.07', 'BYRADIUS', '3', 'km', 'COUNT', '13', 'WITHDIST'],
    ['GEOSEARCH', 'grid', 'FROMLONLAT', '2.07', '40.07', 'BYBOX', '4', '4', 'km', 'DESC', 'COUNT', '50'],
    ['GEOSEARCH', 'grid', 'FROMMEMBER', 'g112', 'BYBOX', '2.5', '2.5', 'km', 'COUNT', '20', 'DESC'],
    ['GEOSEARCH', 'grid', 'FROMMEMBER', 'g0', 'BYRADIUS', '5', 'km', 'COUNT', '20', 'ANY', 'ASC'],
  ] },
  // ------------------------------------------------------------ many random points
  { name: 'random points worldwide: radius searches, unsorted order included', steps: [
    world, ['ZRANGE', 'w', '0', '-1', 'WITHSCORES'], ['GEOHASH', 'w', ...Array.from({ length: 300 }, (_, i) => `p${i}`)],
    ['GEOPOS', 'w', ...Array.from({ length: 300 }, (_, i) => `p${i}`)],
    ...searches('w', [['0', '0'], ['-73.98', '40.75'], ['139.69', '35.68'], ['179.5', '-16.5'], ['-179.9', '65'], ['10', '84']], radii),
    ...['p0', 'p17', 'p123', 'p299'].map((m) => ['GEORADIUSBYMEMBER', 'w', m, '3000', 'km', 'WITHDIST']),
    ...['p1', 'p2', 'p3'].flatMap((a) => ['p4', 'p5'].flatMap((b) => ['m', 'km', 'mi', 'ft'].map((u) => ['GEODIST', 'w', a, b, u]))),
  ] },
  { name: 'random points worldwide: box searches', steps: [
    world, ...searches('w', [['0', '0'], ['-73.98', '40.75'], ['179.5', '-16.5'], ['-120', '-60'], ['45', '80']], boxes),
  ] },
  { name: 'random points near the north pole', steps: [
    pole, ['GEOPOS', 'np', 'n0', 'n1', 'n2', 'n3', 'n4'],
    ...searches('np', [['0', '85'], ['90', '84'], ['-179', '82'], ['180', '85.05112878']], [radii[1], radii[2], boxes[0], boxes[1]]),
  ] },
  { name: 'random points near the south pole', steps: [
    southPole,
    ...searches('sp', [['0', '-85'], ['-90', '-84'], ['179', '-81'], ['-180', '-85.05112878']], [radii[1], radii[2], boxes[0], boxes[1]]),
  ] },
  { name: 'random points across the antimeridian', steps: [
    antimeridianEast, antimeridianWest, ['ZRANGE', 'am', '0', '9', 'WITHSCORES'],
    ...searches('am', [['180', '0'], ['-180', '0'], ['179.9', '5'], ['-179.9', '-5']], [['BYRADIUS', '50', 'km'], ['BYRADIUS', '300', 'km'], ['BYBOX', '200', '100', 'km'], ['BYBOX', '600', '600', 'km']]),
    ['GEOSEARCH', 'am', 'FROMMEMBER', 'a0', 'BYRADIUS', '100', 'km', 'WITHDIST', 'ASC'],
    ['GEOSEARCH', 'am', 'FROMMEMBER', 'b0', 'BYBOX', '400', '400', 'km', 'WITHDIST', 'DESC'],
  ] },
  { name: 'short and long distances', steps: [
    ['GEOADD', 'd', '0', '0', 'o', '0.000001', '0', 'um', '0.00001', '0', 'cm', '0.0001', '0', 'dm', '0.001', '0', 'hm', '0', '0.001', 'hn',
      '179.999999', '0', 'far', '180', '0', 'anti', '-179.999999', '0', 'anti2', '0', '85', 'top', '0', '-85', 'bottom', '90', '0', 'q',
      '-0.000001', '-0.000001', 'diag'],
    ...['um', 'cm', 'dm', 'hm', 'hn', 'far', 'anti', 'anti2', 'top', 'bottom', 'q', 'diag'].flatMap((m) => [['GEODIST', 'd', 'o', m], ['GEODIST', 'd', 'o', m, 'km'], ['GEODIST', 'd', 'o', m, 'ft']]),
    ['GEODIST', 'd', 'top', 'bottom', 'mi'], ['GEODIST', 'd', 'far', 'anti2'], ['GEODIST', 'd', 'anti', 'anti2'],
    ['GEOSEARCH', 'd', 'FROMMEMBER', 'o', 'BYRADIUS', '20100', 'km', 'WITHDIST'],
    ['GEOSEARCH', 'd', 'FROMMEMBER', 'o', 'BYRADIUS', '1', 'm', 'WITHDIST'],
    ['GEOSEARCH', 'd', 'FROMMEMBER', 'o', 'BYBOX', '40100', '20000', 'km', 'WITHDIST', 'ASC'],
    ['GEORADIUS', 'd', '0', '0', '20100', 'km', 'STOREDIST', 'st'], ['ZRANGE', 'st', '0', '-1', 'WITHSCORES'],
  ] },
  { name: 'binary member names and keys', steps: [
    ['GEOADD', Buffer.from([0x6b, 0xff, 0x00]), '1', '1', Buffer.from([0xc3, 0x28, 0x00, 0xfe]), '1.001', '1', Buffer.from('plain')],
    ['GEOSEARCH', Buffer.from([0x6b, 0xff, 0x00]), 'FROMMEMBER', Buffer.from([0xc3, 0x28, 0x00, 0xfe]), 'BYRADIUS', '1', 'km', 'WITHDIST'],
    ['GEOPOS', Buffer.from([0x6b, 0xff, 0x00]), Buffer.from([0xc3, 0x28, 0x00, 0xfe]), 'plain'],
    ['GEOSEARCHSTORE', Buffer.from([0xfe]), Buffer.from([0x6b, 0xff, 0x00]), 'FROMLONLAT', '1', '1', 'BYBOX', '1', '1', 'km'],
    ['ZRANGE', Buffer.from([0xfe]), '0', '-1', 'WITHSCORES'],
  ] },
  { name: 'key positions (COMMAND GETKEYS)', steps: [
    ['COMMAND', 'GETKEYS', 'GEORADIUS', 'k', '1', '2', '3', 'm', 'STORE', 'a', 'STOREDIST', 'b', 'store', 'c'],
    ['COMMAND', 'GETKEYS', 'GEORADIUS', 'k', '1', '2', '3', 'm', 'WITHDIST'],
    ['COMMAND', 'GETKEYS', 'GEORADIUSBYMEMBER', 'k', 'm', '3', 'm', 'store', 'a', 'x', 'storedist'],
    ['COMMAND', 'GETKEYS', 'GEORADIUSBYMEMBER', 'k', 'm', '3', 'store', 'a'],
    ['COMMAND', 'GETKEYS', 'GEORADIUS_RO', 'k', '1', '2', '3', 'm', 'STORE', 'a'],
    ['COMMAND', 'GETKEYS', 'GEOSEARCHSTORE', 'd', 's', 'FROMMEMBER', 'm', 'BYRADIUS', '1', 'm'],
    ['COMMAND', 'GETKEYS', 'GEOSEARCH', 's', 'FROMMEMBER', 'm', 'BYRADIUS', '1', 'm'],
    ['COMMAND', 'GETKEYS', 'GEOADD', 'k', '1', '2', 'm'], ['COMMAND', 'GETKEYS', 'GEODIST', 'k', 'a', 'b'],
  ] },
  { name: 'geo commands inside MULTI', steps: [
    ['MULTI'], sicily, ['GEOSEARCH', 'Sicily', 'FROMLONLAT', '15', '37', 'BYRADIUS', '200', 'km', 'WITHDIST'],
    ['GEOADD', 'Sicily', '200', '0', 'bad'], ['GEOPOS', 'Sicily', 'Catania'], ['EXEC'],
    ['MULTI'], ['GEOADD', 'Sicily', '1'], ['EXEC'],
  ] },
];
export default scripts;
