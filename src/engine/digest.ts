/**
 * DEBUG DIGEST and DEBUG DIGEST-VALUE with Redis 7.0's algorithm (debug.c): SHA1-based
 * mixDigest (order-dependent: strings, list elements, stream entries) and xorDigest
 * (order-independent: set members, hash fields, sorted-set members), so that the same data
 * gives the same digest on redis-server and here.
 */
import { createHash } from 'node:crypto';
import type { Db, Entry, TypedValue } from './db.js';
import { T } from './db.js';
import type { ListValue } from './ds/list.js';
import type { SetValue } from './ds/set.js';
import type { HashValue } from './ds/hash.js';
import type { ZSet } from './ds/zset.js';
import { type Stream as StreamValue, formatId, ID_MIN, ID_MAX } from './ds/stream.js';
import { type JsonDoc, serialize } from './ds/json.js';

type Bytes = Uint8Array | string;

function sha1(data: Bytes): Buffer {
  return createHash('sha1').update(typeof data === 'string' ? Buffer.from(data, 'latin1') : data).digest();
}

/** xorDigest: digest ^= SHA1(data). */
function xorDigest(digest: Buffer, data: Bytes): void {
  const h = sha1(data);
  for (let j = 0; j < 20; j++) digest[j] ^= h[j];
}

/** mixDigest: digest = SHA1(digest ^ SHA1(data)). */
function mixDigest(digest: Buffer, data: Bytes): void {
  xorDigest(digest, data);
  sha1(digest).copy(digest);
}

/** C's printf("%.17g"): how Redis 7.0 writes scores into the digest. */
export function fmtG17(v: number): string {
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  if (Number.isNaN(v)) return 'nan';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  let s = v.toExponential(16); // 17 significant digits, and the exponent %g decides on
  let [mant, e] = s.split('e');
  const x = Number(e);
  if (x < -4 || x >= 17) {
    mant = mant.includes('.') ? mant.replace(/0+$/, '').replace(/\.$/, '') : mant;
    return `${mant}e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`;
  }
  s = v.toFixed(Math.max(0, 16 - x));
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return s;
}

/** Redis's type numbers (OBJ_STRING ... OBJ_STREAM); JSON is a module type there. */
const REDIS_TYPE: Record<number, number> = { [T.STRING]: 0, [T.LIST]: 1, [T.SET]: 2, [T.ZSET]: 3, [T.HASH]: 4, [T.STREAM]: 6, [T.JSON]: 5 };

/** xorObjectDigest: the value's contribution (type, contents, expire flag) to `digest`. */
function objectDigest(digest: Buffer, e: Entry): void {
  const v = e.value;
  const type = v instanceof Uint8Array ? T.STRING : (v as TypedValue).type;
  const aux = Buffer.alloc(4);
  aux.writeUInt32BE(REDIS_TYPE[type]);
  mixDigest(digest, aux);
  switch (type) {
    case T.STRING:
      mixDigest(digest, v as Buffer);
      break;
    case T.LIST: {
      const l = v as unknown as ListValue;
      l.scan(0, l.length - 1, (el) => {
        mixDigest(digest, el);
      });
      break;
    }
    case T.SET:
      (v as unknown as SetValue).forEach((m) => xorDigest(digest, m));
      break;
    case T.ZSET: {
      const ele = Buffer.alloc(20);
      for (const [m, score] of (v as unknown as ZSet).dict) {
        ele.fill(0);
        mixDigest(ele, m);
        mixDigest(ele, fmtG17(score));
        xorDigest(digest, ele);
      }
      break;
    }
    case T.HASH: {
      const ele = Buffer.alloc(20);
      (v as unknown as HashValue).forEach((value, field) => {
        ele.fill(0);
        mixDigest(ele, field);
        mixDigest(ele, value);
        xorDigest(digest, ele);
      });
      break;
    }
    case T.STREAM:
      (v as unknown as StreamValue).forRange(ID_MIN, ID_MAX, false, (id, fv) => {
        mixDigest(digest, formatId(id).replace('-', '.'));
        for (const b of fv) mixDigest(digest, b);
        return true;
      });
      break;
    case T.JSON:
      // A module type for Redis (its digest callback); the serialized document here.
      mixDigest(digest, Buffer.from(serialize((v as unknown as JsonDoc).root), 'utf8'));
      break;
  }
  if (e.exp !== 0) xorDigest(digest, '!!expire!!');
}

/** DEBUG DIGEST-VALUE: the digest of one value (without its key), 20 zero bytes when missing. */
export function valueDigest(db: Db, key: string): string {
  const d = Buffer.alloc(20);
  const e = db.get(key);
  if (e !== undefined) objectDigest(d, e);
  return d.toString('hex');
}

/** DEBUG DIGEST: the digest of every database (computeDatasetDigest). */
export function datasetDigest(dbs: readonly Db[]): string {
  const final = Buffer.alloc(20);
  const d = Buffer.alloc(20);
  const aux = Buffer.alloc(4);
  for (const db of dbs) {
    const entries = [...db.entries()];
    if (entries.length === 0) continue;
    aux.writeUInt32BE(db.index);
    mixDigest(final, aux);
    for (const e of entries) {
      d.fill(0);
      mixDigest(d, e.key);
      objectDigest(d, e);
      xorDigest(final, d);
    }
  }
  return final.toString('hex');
}
