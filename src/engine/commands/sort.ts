/**
 * SORT and SORT_RO (Redis's sort.c, as in 7.0): sorting lists, sets and sorted sets by their
 * elements or by external keys (BY pattern, `*` substituted, `->field` for hash fields),
 * fetching external values (GET), LIMIT, ASC/DESC, ALPHA, and STORE into a list.
 *
 * Ordering reproduces Redis exactly where Redis itself is deterministic:
 *   - numeric: by the score, equal scores by the elements' bytes (compareStringObjects);
 *   - ALPHA: strcoll() in the C / C.UTF-8 locale Redis runs under, which compares bytes up to
 *     the first NUL; with STORE, full binary comparison (Redis's replication-safe choice);
 *   - ALPHA BY: missing weight keys first, then as ALPHA;
 *   - the full sort is glibc's stable merge sort, i.e. equal elements keep their input order
 *     (Array.prototype.sort is stable too); BY with a LIMIT that cuts the range uses Redis's
 *     partial quicksort (pqsort.c), reproduced below, whose placement of equal elements we
 *     follow step for step.
 * Scores are parsed as C strtod() does it: leading white space, an empty string is 0, the
 * text ends at the first NUL byte; overflow, underflow (also to a subnormal) and NaN are the
 * "One or more scores can't be converted into double" error.
 *
 * Not reproduced:
 *   - Redis 7.0 does not clear errno before strtod(), so after one out-of-range score every
 *     later numeric SORT fails until some unrelated failing call resets errno; here each SORT
 *     is judged on its own values.
 *   - Redis iterates hash-table sets, and the sorted sets it sorts, through their dict, whose
 *     order is random per process; where that order shows (ties under ALPHA BY, sets with
 *     BY nosort) our order is the value's own iteration order.
 *   - Inside scripts Redis also sorts a set given BY nosort (for determinism); scripts do
 *     not exist yet, so only STORE triggers it here.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import type { Client } from '../client.js';
import type { Entry } from '../db.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { ListValue, elemFromStr, elemOf, type Elem } from '../ds/list.js';
import { SetValue } from '../ds/set.js';
import { ZSet } from '../ds/zset.js';
import { HashValue } from '../ds/hash.js';
import { listFill, longArg, lookupRead, lookupWrite } from './typed-helpers.js';
import { KF, type KeyRef } from '../keys.js';
import { N, keyEvent } from '../notify.js';
import { cstr } from '../../bytes.js';

const SCORE_ERROR = "ERR One or more scores can't be converted into double";
const BY_DENIED = 'ERR BY option of SORT denied due to insufficient ACL permissions.';
const GET_DENIED = 'ERR GET option of SORT denied due to insufficient ACL permissions.';


// ---------------------------------------------------------------- scores (strtod)

const DBL_MIN = 2.2250738585072014e-308;
const DEC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INF = /^[+-]?inf(?:inity)?$/i;
const HEX = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?$/;

function isSpace(ch: number): boolean {
  return ch === 32 || (ch >= 9 && ch <= 13);
}

/**
 * strtod(s, &end) accepted only when *end is '\0', errno is not ERANGE and the value is not
 * NaN (sortCommand's check). `s` is a latin1 byte string. NaN when rejected.
 */
export function sortScore(s: string): number {
  const nul = s.indexOf('\0');
  if (nul >= 0) s = s.slice(0, nul);
  if (s.length === 0) return 0; // nothing converted, and *end is already '\0'
  let i = 0;
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  const t = i === 0 ? s : s.slice(i);
  if (DEC.test(t)) {
    const v = Number(t);
    if (v === Infinity || v === -Infinity) return NaN; // overflow
    // Underflow to zero or into the subnormals sets ERANGE (the literal is not all zeros).
    if (Math.abs(v) < DBL_MIN && /[1-9]/.test(t.replace(/[eE].*$/, ''))) return NaN;
    return v;
  }
  if (INF.test(t)) return t.charCodeAt(0) === 45 ? -Infinity : Infinity;
  const m = HEX.exec(t);
  if (m === null) return NaN;
  const intPart = m[2];
  const frac = m[3] ?? '';
  if (intPart.length === 0 && frac.length === 0) return NaN; // "0x": only the 0 converts
  const v = hexValue(intPart + frac, (m[4] === undefined ? 0 : Number(m[4])) - 4 * frac.length);
  return m[1] === '-' ? -v : v;
}

/** The double nearest to 0x<digits> * 2^exp; NaN where glibc sets ERANGE. */
function hexValue(digits: string, exp: number): number {
  let mant = BigInt('0x' + digits);
  if (mant === 0n) return 0;
  while ((mant & 0xffffn) === 0n) {
    mant >>= 16n;
    exp += 16;
  }
  while ((mant & 1n) === 0n) {
    mant >>= 1n;
    exp += 1;
  }
  const bits = mant.toString(2).length;
  const top = exp + bits - 1; // the value is in [2^top, 2^(top+1))
  if (top > 1023) return NaN;
  if (top < -1022) {
    // Subnormal: fine only when exact (no bit below 2^-1074).
    if (exp < -1074) return NaN;
    return Number(mant) * 2 ** exp;
  }
  if (bits > 64) {
    // Keep 64 bits and a sticky bit: Number() then rounds exactly as strtod.
    const drop = BigInt(bits - 64);
    const kept = mant >> drop;
    mant = (kept << 1n) | ((kept << drop) !== mant ? 1n : 0n);
    exp += bits - 65;
  }
  let v = Number(mant);
  if (exp < -1000) {
    v *= 2 ** -1000;
    exp += 1000;
  }
  v *= 2 ** exp;
  return Number.isFinite(v) ? v : NaN;
}

// ---------------------------------------------------------------- patterns

/**
 * Redis's lookupKeyByPattern on a latin1 pattern. The pattern is read as a C string where
 * Redis does (finding '#', '*' and "->"), and as bytes where it copies lengths. Returns the
 * element itself for "#", the string value or hash field value found, or null.
 */
function lookupByPattern(c: Client, pat: string, elem: string, write: boolean): Buffer | string | null {
  // "#" (a NUL may follow: Redis tests spat[1] == '\0').
  if (pat.charCodeAt(0) === 35 && (pat.length === 1 || pat.charCodeAt(1) === 0)) return elem;
  let cend = pat.indexOf('\0');
  if (cend < 0) cend = pat.length;
  const star = pat.indexOf('*');
  if (star < 0 || star >= cend) return null;
  const arrow = pat.indexOf('->', star + 1);
  let field: string | null = null;
  let key: string;
  if (arrow >= 0 && arrow + 2 <= cend && arrow + 2 < pat.length && pat.charCodeAt(arrow + 2) !== 0) {
    field = pat.slice(arrow + 2);
    key = pat.slice(0, star) + elem + pat.slice(star + 1, arrow);
  } else {
    key = pat.slice(0, star) + elem + pat.slice(star + 1);
  }
  const e: Entry | undefined = write ? lookupWrite(c, key) : lookupRead(c, key);
  if (e === undefined) {
    if (write) c.db.event(N.KEY_MISS, 'keymiss', key); // 7.0 reads pattern keys with lookupKeyRead
    return null;
  }
  const v = e.value;
  if (field === null) return v instanceof Buffer ? v : null;
  if (!(v instanceof HashValue)) return null;
  const fv = v.get(field);
  if (fv === undefined) return null;
  // A field whose time has passed is gone (lazy field expiry, without deleting here).
  const at = v.fieldExpire(field);
  if (at !== 0 && at < c.engine.now) return null;
  return fv;
}

/** Redis checks '*' with strchr: only the part before a NUL counts. */
function hasStar(pat: string): boolean {
  const star = pat.indexOf('*');
  if (star < 0) return false;
  const nul = pat.indexOf('\0');
  return nul < 0 || star < nul;
}

/** BY and GET patterns name any key: the user must be able to read every key (Redis 7.0). */
function readsEveryKey(c: Client, argv: Argv): boolean {
  return c.aclUser.unrestricted || c.engine.acl.readsEveryKey(c.aclUser, c.engine.registry.lookup(argv)!, argv);
}

// ---------------------------------------------------------------- comparison

/** Binary comparison of latin1 strings: memcmp, then the shorter first. */
function binCmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------- pqsort

type Cmp = (a: number, b: number) => number;

function insertionSort(v: number[], lo: number, n: number, cmp: Cmp): void {
  for (let m = lo + 1; m < lo + n; m++) {
    for (let l = m; l > lo && cmp(v[l - 1], v[l]) > 0; l--) {
      const t = v[l];
      v[l] = v[l - 1];
      v[l - 1] = t;
    }
  }
}

function med3(v: number[], a: number, b: number, c: number, cmp: Cmp): number {
  return cmp(v[a], v[b]) < 0
    ? (cmp(v[b], v[c]) < 0 ? b : cmp(v[a], v[c]) < 0 ? c : a)
    : (cmp(v[b], v[c]) > 0 ? b : cmp(v[a], v[c]) < 0 ? a : c);
}

function swapRange(v: number[], a: number, b: number, n: number): void {
  for (let i = 0; i < n; i++) {
    const t = v[a + i];
    v[a + i] = v[b + i];
    v[b + i] = t;
  }
}

/**
 * Redis's pqsort(): Bentley & McIlroy's quicksort (three-way partitioning, median of three or
 * of nine) that only descends into partitions overlapping [lrange, rrange]. Sorts v[lo, lo+n).
 */
function pqsort(v: number[], lo: number, n: number, cmp: Cmp, lrange: number, rrange: number): void {
  const overlaps = (s: number, k: number) => !((lrange < s && rrange < s) || (lrange >= s + k && rrange >= s + k));
  for (;;) {
    let swapped = false;
    if (n < 7) return insertionSort(v, lo, n, cmp);
    let pm = lo + (n >>> 1);
    if (n > 7) {
      let pl = lo;
      let pn = lo + n - 1;
      if (n > 40) {
        const d = Math.floor(n / 8);
        pl = med3(v, pl, pl + d, pl + 2 * d, cmp);
        pm = med3(v, pm - d, pm, pm + d, cmp);
        pn = med3(v, pn - 2 * d, pn - d, pn, cmp);
      }
      pm = med3(v, pl, pm, pn, cmp);
    }
    let t = v[lo];
    v[lo] = v[pm];
    v[pm] = t;
    let pa = lo + 1;
    let pb = pa;
    let pc = lo + n - 1;
    let pd = pc;
    for (;;) {
      let r: number;
      while (pb <= pc && (r = cmp(v[pb], v[lo])) <= 0) {
        if (r === 0) {
          swapped = true;
          t = v[pa]; v[pa] = v[pb]; v[pb] = t;
          pa++;
        }
        pb++;
      }
      while (pb <= pc && (r = cmp(v[pc], v[lo])) >= 0) {
        if (r === 0) {
          swapped = true;
          t = v[pc]; v[pc] = v[pd]; v[pd] = t;
          pd--;
        }
        pc--;
      }
      if (pb > pc) break;
      t = v[pb]; v[pb] = v[pc]; v[pc] = t;
      swapped = true;
      pb++;
      pc--;
    }
    if (!swapped) return insertionSort(v, lo, n, cmp);
    const pn = lo + n;
    let r = Math.min(pa - lo, pb - pa);
    swapRange(v, lo, pb - r, r);
    r = Math.min(pd - pc, pn - pd - 1);
    swapRange(v, pb, pn - r, r);
    r = pb - pa;
    if (r > 1 && overlaps(lo, r)) pqsort(v, lo, r, cmp, lrange, rrange);
    r = pd - pc;
    if (r <= 1) return;
    lo = pn - r;
    n = r;
    if (!overlaps(lo, n)) return;
  }
}

// ---------------------------------------------------------------- the command

/** The sorted vector: element bytes as latin1 strings. */
interface Vector {
  elems: string[];
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]
//      [STORE destination]
// SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]
function sortGeneric(c: Client, argv: Argv, out: ReplySink, readonly: boolean): void {
  let desc = false;
  let alpha = false;
  let limitStart = 0;
  let limitCount = -1;
  let dontsort = false;
  let sortby: string | null = null;
  let store: string | null = null;
  const gets: string[] = [];
  for (let j = 2; j < argv.count; j++) {
    const left = argv.count - j - 1;
    if (argv.is(j, 'ASC')) desc = false;
    else if (argv.is(j, 'DESC')) desc = true;
    else if (argv.is(j, 'ALPHA')) alpha = true;
    else if (argv.is(j, 'LIMIT') && left >= 2) {
      limitStart = longArg(argv, j + 1);
      if (limitStart !== limitStart) return out.error(E.NOT_INTEGER);
      limitCount = longArg(argv, j + 2);
      if (limitCount !== limitCount) return out.error(E.NOT_INTEGER);
      j += 2;
    } else if (!readonly && argv.is(j, 'STORE') && left >= 1) {
      store = argv.key(++j);
    } else if (argv.is(j, 'BY') && left >= 1) {
      sortby = argv.key(++j);
      // A pattern without '*' is constant: nothing to sort by (NOSORT is the usual spelling).
      if (!hasStar(sortby)) dontsort = true;
      else if (!readsEveryKey(c, argv)) return out.error(BY_DENIED);
    } else if (argv.is(j, 'GET') && left >= 1) {
      if (!readsEveryKey(c, argv)) return out.error(GET_DENIED);
      gets.push(argv.key(++j));
    } else {
      return out.error(E.SYNTAX);
    }
  }
  const write = store !== null;
  const key = argv.key(1);
  const e = write ? lookupWrite(c, key) : lookupRead(c, key);
  if (e === undefined && write) c.db.event(N.KEY_MISS, 'keymiss', key); // 7.0 reads it with lookupKeyRead
  const val = e?.value;
  if (val !== undefined && !(val instanceof ListValue || val instanceof SetValue || val instanceof ZSet)) {
    return out.error(E.WRONGTYPE);
  }
  // A set with nothing to sort by is still sorted (ALPHA) when the result is stored or a
  // script asked (Redis: storekey or CLIENT_SCRIPT), so that it does not depend on the set's
  // internal order.
  if (dontsort && val instanceof SetValue && (write || c.transport.kind === 'internal')) {
    dontsort = false;
    alpha = true;
    sortby = null;
  }
  if (val instanceof ZSet) val.toSkiplist();

  let len = val === undefined ? 0 : val instanceof ListValue ? val.length : val.size;
  let start = Math.min(Math.max(limitStart, 0), len);
  const count = Math.min(Math.max(limitCount, -1), len);
  let end = count < 0 ? len - 1 : start + count - 1;
  if (start >= len) {
    start = len - 1;
    end = len - 2;
  }
  if (end >= len) end = len - 1;

  // Load the vector: only the requested range when a list or sorted set is not sorted.
  const vec: Vector = { elems: [] };
  if (dontsort && (val instanceof ListValue || val instanceof ZSet) && (start !== 0 || end !== len - 1)) {
    len = end - start + 1;
  }
  if (val instanceof ListValue) {
    const elems: string[] = [];
    const take = (e: Elem): void => {
      elems.push(typeof e === 'string' ? e : e.latin1Slice(0, e.length));
    };
    if (dontsort) {
      if (end >= start) {
        if (len > 0) {
          if (desc) val.scan(val.length - start - 1, val.length - start - len, take);
          else val.scan(start, start + len - 1, take);
        }
        end -= start;
        start = 0;
      }
    } else if (val.length > 0) {
      val.scan(0, val.length - 1, take);
    }
    vec.elems = elems;
  } else if (val instanceof SetValue) {
    vec.elems = val.members();
  } else if (val instanceof ZSet) {
    if (dontsort) {
      let n = val.size;
      let node = val.at(desc ? n - 1 - start : start);
      for (n = len; n > 0 && node !== null; n--) {
        vec.elems.push(node.member);
        node = desc ? node.prev() : node.next();
      }
      end -= start;
      start = 0;
    } else {
      for (const m of val.dict.keys()) vec.elems.push(m);
    }
  }

  const elems = vec.elems;
  const n = elems.length;
  const order: number[] = new Array(n);
  for (let k = 0; k < n; k++) order[k] = k;
  if (!dontsort) {
    const scores = alpha ? null : new Float64Array(n);
    const by: (string | null)[] | null = alpha && sortby !== null ? new Array(n).fill(null) : null;
    let bad = false;
    for (let k = 0; k < n; k++) {
      let v: Buffer | string | null;
      if (sortby !== null) {
        v = lookupByPattern(c, sortby, elems[k], write);
        if (v === null) continue;
      } else {
        v = elems[k];
      }
      const s = typeof v === 'string' ? v : v.latin1Slice(0, v.length);
      if (by !== null) by[k] = s;
      else if (scores !== null) {
        const x = sortScore(s);
        if (x !== x) bad = true;
        else scores[k] = x;
      }
    }
    if (bad) return out.error(SCORE_ERROR);
    const cmp = comparator(elems, scores, by, alpha, sortby !== null, write, desc);
    if (sortby !== null && (start !== 0 || end !== n - 1)) pqsort(order, 0, n, cmp, start, end);
    else order.sort(cmp);
  }

  const outputLen = end >= start ? (gets.length > 0 ? gets.length : 1) * (end - start + 1) : 0;
  if (store === null) {
    out.array(outputLen);
    for (let j = start; j <= end; j++) {
      const k = order[j];
      if (gets.length === 0) replyElement(out, vec, k);
      for (const g of gets) {
        const v = lookupByPattern(c, g, elems[k], false);
        if (v === null) out.nil();
        else if (v === elems[k]) replyElement(out, vec, k);
        else if (typeof v === 'string') out.bulkLatin1(v);
        else out.bulk(v);
      }
    }
    return;
  }
  if (outputLen === 0) {
    if (c.db.delete(store)) keyEvent(c, N.GENERIC, 'del', store);
    out.int(0);
    return;
  }
  const l = ListValue.forLoad();
  for (let j = start; j <= end; j++) {
    const k = order[j];
    if (gets.length === 0) l.pushTail(elemFromStr(elems[k]));
    for (const g of gets) {
      const v = lookupByPattern(c, g, elems[k], true);
      if (v === null) l.pushTail('');
      else if (typeof v === 'string') l.pushTail(elemFromStr(v));
      else l.pushTail(elemOf(v));
    }
  }
  // Stored as one listpack when it fits one node (listTypeTryConversion, LIST_CONV_AUTO).
  l.loadDone(listFill(c.engine));
  c.db.set(store, l);
  keyEvent(c, N.LIST, 'sortstore', store);
  out.int(outputLen);
}

function replyElement(out: ReplySink, vec: Vector, k: number): void {
  out.bulkLatin1(vec.elems[k]);
}


/** Redis's sortCompare over vector indexes. */
function comparator(
  elems: string[], scores: Float64Array | null, by: (string | null)[] | null,
  alpha: boolean, bypattern: boolean, store: boolean, desc: boolean,
): Cmp {
  let cmp: Cmp;
  if (!alpha) {
    const sc = scores!;
    cmp = (a, b) => (sc[a] > sc[b] ? 1 : sc[a] < sc[b] ? -1 : binCmp(elems[a], elems[b]));
  } else if (bypattern) {
    const w = store ? by! : by!.map((s) => (s === null ? null : cstr(s)));
    cmp = (a, b) => {
      const x = w[a];
      const y = w[b];
      if (x === null || y === null) return x === y ? 0 : x === null ? -1 : 1;
      return binCmp(x, y);
    };
  } else {
    const w = store ? elems : elems.map(cstr);
    cmp = (a, b) => binCmp(w[a], w[b]);
  }
  return desc ? (a, b) => -cmp(a, b) : cmp;
}

function sortCommand(c: Client, argv: Argv, out: ReplySink): void {
  sortGeneric(c, argv, out, false);
}

function sortRoCommand(c: Client, argv: Argv, out: ReplySink): void {
  sortGeneric(c, argv, out, true);
}

/**
 * Redis's sortGetKeys: the sorted key, plus the destination of the last STORE. Options are
 * skipped with their argument counts (LIMIT 2, GET 1, BY 1), so a pattern spelled "store" is no key.
 */
function sortKeys(argv: Argv): KeyRef[] {
  const keys: KeyRef[] = [{ pos: 1, flags: KF.RO | KF.ACCESS }];
  let dest = -1;
  for (let i = 2; i < argv.count; i++) {
    if (argv.is(i, 'LIMIT')) i += 2;
    else if (argv.is(i, 'GET') || argv.is(i, 'BY')) i += 1;
    else if (argv.is(i, 'STORE') && i + 1 < argv.count) dest = i + 1;
  }
  if (dest >= 0) keys.push({ pos: dest, flags: KF.OW | KF.UPDATE });
  return keys;
}

/** Redis's sortROGetKeys. */
function sortRoKeys(): KeyRef[] {
  return [{ pos: 1, flags: KF.RO | KF.ACCESS }];
}

export default family('sort', ['set', 'sortedset', 'list', 'dangerous'], [
  //   name       arity  flags                                     keys        handler
  row('sort',      -2,   F.WRITE | F.DENYOOM | F.MOVABLE_KEYS,     [1, 1, 1],  sortCommand, { getKeys: sortKeys }),
  row('sort_ro',   -2,   F.READONLY | F.MOVABLE_KEYS,              [1, 1, 1],  sortRoCommand, { getKeys: sortRoKeys }),
]);
