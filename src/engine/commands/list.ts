/**
 * List commands (Redis's t_list.c): LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX
 * LSET LINSERT LREM LTRIM LPOS LMOVE RPOPLPUSH LMPOP, and the blocking BLPOP BRPOP BRPOPLPUSH
 * BLMOVE BLMPOP (through blocking.ts; see "blocking variants" below).
 *
 * Encoding checks follow Redis 7.2+: before adding, the list may grow from listpack to
 * quicklist; after removing, it may shrink back (see ds/list.ts).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, wrongArity } from '../../resp/errors.js';
import type { Client } from '../client.js';
import type { Entry } from '../db.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import { BIG_ELEMENT, ListValue, elemEquals, type Elem } from '../ds/list.js';
import { replyElem } from '../ds/list-flat.js';
import { blockOrTimeout, canBlock, parseTimeout } from './blocking-timeout.js';
import { numkeysKeys } from '../keys.js';
import { N, keyEvent } from '../notify.js';
import {
  OUT_OF_RANGE_POSITIVE, isLongMin, listFill, longArg, lookupRead, lookupWrite, lookupWriteArg, rangeError,
} from './typed-helpers.js';

const RANK_ZERO = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
const COUNT_NEGATIVE = "ERR COUNT can't be negative";
const MAXLEN_NEGATIVE = "ERR MAXLEN can't be negative";
const NUMKEYS_POSITIVE = 'ERR numkeys should be greater than 0';
const COUNT_POSITIVE = 'ERR count should be greater than 0';
const LONG_RANGE = rangeError('-9223372036854775807', '9223372036854775807');

const HEAD = 0;
const TAIL = 1;

/** Argument i as a list element (latin1 string, or a Buffer copy when big: see ds/list.ts). */
function elemArg(argv: Argv, i: number): Elem {
  return argv.len(i) <= BIG_ELEMENT ? argv.key(i) : argv.copy(i);
}

/** Argument i as a comparison target for elemEquals: its string form, or null when big. */
function targetStr(argv: Argv, i: number): string | null {
  return argv.len(i) <= BIG_ELEMENT ? argv.key(i) : null;
}

function bulkElem(out: ReplySink, e: Elem): void {
  if (typeof e === 'string') out.bulkLatin1(e);
  else out.bulk(e);
}

/** The list at `key`: undefined when missing, null when the key holds another type. */
function readList(c: Client, key: string): ListValue | undefined | null {
  const e = lookupRead(c, key);
  if (e === undefined) return undefined;
  return e.value instanceof ListValue ? e.value : null;
}

function writeList(c: Client, key: string): ListValue | undefined | null {
  const e = lookupWrite(c, key);
  if (e === undefined) return undefined;
  return e.value instanceof ListValue ? e.value : null;
}

/** After removing elements: delete the emptied key, or signal and maybe shrink the encoding. */
function afterRemoval(c: Client, key: string, l: ListValue, e?: Entry): void {
  if (l.length === 0) {
    c.db.delete(key);
    keyEvent(c, N.GENERIC, 'del', key);
    return;
  }
  l.shrinkCheck(listFill(c.engine));
  c.db.modified(key, e);
}

/** Sum of the raw lengths of arguments [from, to) (listTypeTryConvertListpack's add_bytes). */
function argBytes(argv: Argv, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n += argv.len(i);
  return n;
}

/** "LEFT" / "RIGHT" (getListPositionFromObjectOrReply); -1 when neither. */
function position(argv: Argv, i: number): number {
  if (argv.is(i, 'LEFT')) return HEAD;
  if (argv.is(i, 'RIGHT')) return TAIL;
  return -1;
}

// LPUSH key element [element ...]   RPUSH   LPUSHX   RPUSHX
function pushGeneric(c: Client, argv: Argv, out: ReplySink, where: number, onlyIfExists: boolean): void {
  const e = lookupWriteArg(c, argv, 1);
  let l = e === undefined ? undefined : e.value instanceof ListValue ? e.value : null;
  if (l === null) return out.error(E.WRONGTYPE);
  const key = e !== undefined ? e.key : argv.key(1);
  if (l === undefined) {
    if (onlyIfExists) return out.int(0);
    l = new ListValue(argv.count - 2);
    l.growCheck(argBytes(argv, 2, argv.count), argv.count - 2, listFill(c.engine));
    pushAll(l, argv, where);
    c.db.add(key, l);
  } else {
    l.growCheck(argBytes(argv, 2, argv.count), argv.count - 2, listFill(c.engine));
    pushAll(l, argv, where);
    c.db.modified(key, e);
  }
  keyEvent(c, N.LIST, where === HEAD ? 'lpush' : 'rpush', key);
  out.int(l.length);
}

function pushAll(l: ListValue, argv: Argv, where: number): void {
  if (where === HEAD) for (let i = 2; i < argv.count; i++) l.pushHead(elemArg(argv, i));
  else for (let i = 2; i < argv.count; i++) l.pushTail(elemArg(argv, i));
}

function lpushCommand(c: Client, argv: Argv, out: ReplySink): void {
  pushGeneric(c, argv, out, HEAD, false);
}
function rpushCommand(c: Client, argv: Argv, out: ReplySink): void {
  pushGeneric(c, argv, out, TAIL, false);
}
function lpushxCommand(c: Client, argv: Argv, out: ReplySink): void {
  pushGeneric(c, argv, out, HEAD, true);
}
function rpushxCommand(c: Client, argv: Argv, out: ReplySink): void {
  pushGeneric(c, argv, out, TAIL, true);
}

// LPOP key [count]   RPOP key [count]
function popGeneric(c: Client, argv: Argv, out: ReplySink, where: number): void {
  const hasCount = argv.count === 3;
  let count = 0;
  if (argv.count > 3) return out.error(wrongArity(where === HEAD ? 'lpop' : 'rpop'));
  if (hasCount) {
    count = longArg(argv, 2);
    if (count !== count || count < 0) return out.error(OUT_OF_RANGE_POSITIVE);
  }
  const key = argv.key(1);
  const e = lookupWrite(c, key);
  const l = e === undefined ? undefined : e.value instanceof ListValue ? e.value : null;
  if (l === null) return out.error(E.WRONGTYPE);
  if (l === undefined) return hasCount ? out.nilArray() : out.nil();
  if (hasCount && count === 0) return out.array(0);
  if (!hasCount) {
    bulkElem(out, where === HEAD ? l.popHead() : l.popTail());
  } else {
    const n = Math.min(count, l.length);
    out.array(n);
    for (let i = 0; i < n; i++) bulkElem(out, where === HEAD ? l.popHead() : l.popTail());
  }
  keyEvent(c, N.LIST, where === HEAD ? 'lpop' : 'rpop', key);
  afterRemoval(c, key, l, e);
}

function lpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  popGeneric(c, argv, out, HEAD);
}
function rpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  popGeneric(c, argv, out, TAIL);
}

// LLEN key
function llenCommand(c: Client, argv: Argv, out: ReplySink): void {
  // perf: the key found from its bytes (no key string).
  const e = c.db.readArg(argv, 1, !c.noTouch);
  if (e === undefined) return out.int(0);
  const l = e.value;
  if (!(l instanceof ListValue)) return out.error(E.WRONGTYPE);
  out.int(l.length);
}

// LRANGE key start stop
function lrangeCommand(c: Client, argv: Argv, out: ReplySink): void {
  let start = longArg(argv, 2);
  let end = longArg(argv, 3);
  if (start !== start || end !== end) return out.error(E.NOT_INTEGER);
  const l = readList(c, argv.key(1));
  if (l === null) return out.error(E.WRONGTYPE);
  if (l === undefined) return out.array(0);
  const len = l.length;
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return out.array(0);
  if (end >= len) end = len - 1;
  out.array(end - start + 1);
  const f = l.entries;
  if (f !== null) {
    // perf: a flat list's elements written from its bytes (no string per element).
    for (let i = start, o = l.offsetOf(start); i <= end; i++) o = replyElem(out, f, o);
    return;
  }
  l.scan(start, end, (e) => bulkElem(out, e));
}

// LINDEX key index
function lindexCommand(c: Client, argv: Argv, out: ReplySink): void {
  const l = readList(c, argv.key(1));
  if (l === null) return out.error(E.WRONGTYPE);
  if (l === undefined) return out.nil();
  let i = longArg(argv, 2);
  if (i !== i) return out.error(E.NOT_INTEGER);
  if (i < 0) i += l.length;
  if (i < 0 || i >= l.length) return out.nil();
  const f = l.entries;
  if (f !== null) replyElem(out, f, l.offsetOf(i));
  else bulkElem(out, l.get(i));
}

// LSET key index element
function lsetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const l = writeList(c, key);
  if (l === undefined) return out.error(E.NO_KEY);
  if (l === null) return out.error(E.WRONGTYPE);
  let i = longArg(argv, 2);
  if (i !== i) return out.error(E.NOT_INTEGER);
  const fill = listFill(c.engine);
  l.growCheck(argv.len(3), 1, fill);
  if (i < 0) i += l.length;
  if (i < 0 || i >= l.length) return out.error(E.OUT_OF_RANGE);
  l.set(i, elemArg(argv, 3));
  l.shrinkCheck(fill);
  c.db.modified(key);
  keyEvent(c, N.LIST, 'lset', key);
  out.ok();
}

// LINSERT key BEFORE|AFTER pivot element
function linsertCommand(c: Client, argv: Argv, out: ReplySink): void {
  let after: boolean;
  if (argv.is(2, 'AFTER')) after = true;
  else if (argv.is(2, 'BEFORE')) after = false;
  else return out.error(E.SYNTAX);
  const key = argv.key(1);
  const l = writeList(c, key);
  if (l === null) return out.error(E.WRONGTYPE);
  if (l === undefined) return out.int(0);
  l.growCheck(argv.len(4), 1, listFill(c.engine));
  const ps = targetStr(argv, 3);
  const pb = argv.view(3);
  const i = l.scan(0, l.length - 1, (e) => elemEquals(e, ps, pb));
  if (i < 0) return out.int(-1);
  l.insert(after ? i + 1 : i, elemArg(argv, 4));
  c.db.modified(key);
  keyEvent(c, N.LIST, 'linsert', key);
  out.int(l.length);
}

// LREM key count element
function lremCommand(c: Client, argv: Argv, out: ReplySink): void {
  // A plain long in Redis: LONG_MIN is accepted (removes every match, from the tail).
  const count = longArg(argv, 2);
  if (count !== count) return out.error(E.NOT_INTEGER);
  // perf: the key found from its bytes; its string is the entry's.
  const e = lookupWriteArg(c, argv, 1);
  if (e === undefined) return out.int(0);
  const l = e.value;
  if (!(l instanceof ListValue)) return out.error(E.WRONGTYPE);
  const removed = l.removeEqual(targetStr(argv, 3), argv.view(3), count);
  if (removed > 0) {
    keyEvent(c, N.LIST, 'lrem', e.key);
    afterRemoval(c, e.key, l, e);
  }
  out.int(removed);
}

// LTRIM key start stop
function ltrimCommand(c: Client, argv: Argv, out: ReplySink): void {
  let start = longArg(argv, 2);
  let end = longArg(argv, 3);
  if (start !== start || end !== end) return out.error(E.NOT_INTEGER);
  const key = argv.key(1);
  const l = writeList(c, key);
  if (l === null) return out.error(E.WRONGTYPE);
  if (l === undefined) return out.ok();
  const len = l.length;
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  let left: number;
  let right: number;
  if (start > end || start >= len) {
    left = len;
    right = 0;
  } else {
    if (end >= len) end = len - 1;
    left = start;
    right = len - end - 1;
  }
  l.trim(left, right);
  keyEvent(c, N.LIST, 'ltrim', key);
  afterRemoval(c, key, l);
  out.ok();
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
function lposCommand(c: Client, argv: Argv, out: ReplySink): void {
  let rank = 1;
  let count = -1;
  let maxlen = 0;
  for (let j = 3; j < argv.count; j++) {
    const more = argv.count - 1 - j;
    if (argv.is(j, 'RANK') && more > 0) {
      j++;
      rank = longArg(argv, j);
      if (rank !== rank) return out.error(E.NOT_INTEGER);
      if (isLongMin(argv, j)) return out.error(LONG_RANGE);
      if (rank === 0) return out.error(RANK_ZERO);
    } else if (argv.is(j, 'COUNT') && more > 0) {
      j++;
      count = longArg(argv, j);
      if (count !== count || count < 0) return out.error(COUNT_NEGATIVE);
    } else if (argv.is(j, 'MAXLEN') && more > 0) {
      j++;
      maxlen = longArg(argv, j);
      if (maxlen !== maxlen || maxlen < 0) return out.error(MAXLEN_NEGATIVE);
    } else {
      return out.error(E.SYNTAX);
    }
  }
  const l = readList(c, argv.key(1));
  if (l === undefined) return count !== -1 ? out.array(0) : out.nil();
  if (l === null) return out.error(E.WRONGTYPE);
  const fromTail = rank < 0;
  if (fromTail) rank = -rank;
  const es = targetStr(argv, 2);
  const eb = argv.view(2);
  const len = l.length;
  const matches: number[] = [];
  let seen = 0;
  const span = maxlen === 0 ? len : Math.min(maxlen, len);
  const want = count === -1 ? 1 : count;
  const visit = (e: Elem, idx: number): boolean => {
    if (!elemEquals(e, es, eb)) return false;
    seen++;
    if (seen < rank) return false;
    matches.push(idx);
    return count !== 0 && matches.length === want;
  };
  if (span > 0) {
    if (fromTail) l.scan(len - 1, len - span, visit);
    else l.scan(0, span - 1, visit);
  }
  if (count === -1) {
    if (matches.length === 0) out.nil();
    else out.int(matches[0]);
    return;
  }
  out.array(matches.length);
  for (const m of matches) out.int(m);
}

/** Pop from `src` and push onto `dst` (LMOVE / RPOPLPUSH). */
function lmoveGeneric(c: Client, argv: Argv, out: ReplySink, from: number, to: number): void {
  // perf: both keys found from their bytes; a key string only for a destination to create.
  const se = lookupWriteArg(c, argv, 1);
  if (se === undefined) return out.nil();
  const src = se.value;
  if (!(src instanceof ListValue)) return out.error(E.WRONGTYPE);
  const de = lookupWriteArg(c, argv, 2);
  if (de !== undefined && !(de.value instanceof ListValue)) return out.error(E.WRONGTYPE);
  moveOne(c, se.key, src, de !== undefined ? de.key : argv.key(2), from, to, out, se, de === undefined ? null : de);
}

/**
 * Move one element from `src`, the non-empty list at `skey`, to `dkey` and reply with it.
 * `se`: skey's entry when at hand. `de`: dkey's entry when the caller looked it up (then it
 * holds a list), null when it looked it up and found none, undefined: looked up here.
 */
function moveOne(
  c: Client, skey: string, src: ListValue, dkey: string, from: number, to: number, out: ReplySink,
  se?: Entry, de?: Entry | null,
): void {
  let dst = de === undefined ? writeList(c, dkey) : de === null ? undefined : de.value as ListValue;
  if (dst === null) return out.error(E.WRONGTYPE);
  const fill = listFill(c.engine);
  const v = from === HEAD ? src.popHead() : src.popTail();
  const created = dst === undefined;
  if (dst === undefined) dst = new ListValue();
  dst.growCheck(v.length, 1, fill);
  if (to === HEAD) dst.pushHead(v);
  else dst.pushTail(v);
  if (created) c.db.add(dkey, dst);
  else c.db.modified(dkey, de ?? undefined);
  keyEvent(c, N.LIST, to === HEAD ? 'lpush' : 'rpush', dkey);
  keyEvent(c, N.LIST, from === HEAD ? 'lpop' : 'rpop', skey);
  afterRemoval(c, skey, src, se);
  bulkElem(out, v);
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
function lmoveCommand(c: Client, argv: Argv, out: ReplySink): void {
  const from = position(argv, 3);
  if (from < 0) return out.error(E.SYNTAX);
  const to = position(argv, 4);
  if (to < 0) return out.error(E.SYNTAX);
  lmoveGeneric(c, argv, out, from, to);
}

// RPOPLPUSH source destination
function rpoplpushCommand(c: Client, argv: Argv, out: ReplySink): void {
  lmoveGeneric(c, argv, out, TAIL, HEAD);
}

/** Parsed "numkeys key [key ...] LEFT|RIGHT [COUNT count]" of LMPOP / BLMPOP. */
interface MpopArgs {
  keys: string[];
  where: number;
  count: number;
}

/** Parse the LMPOP arguments from `at` (numkeys); null after replying with the error. */
function parseMpop(argv: Argv, at: number, out: ReplySink): MpopArgs | null {
  const numkeys = longArg(argv, at);
  if (numkeys !== numkeys || numkeys < 1) return out.error(NUMKEYS_POSITIVE), null;
  const whereIdx = at + numkeys + 1;
  if (whereIdx >= argv.count) return out.error(E.SYNTAX), null;
  const where = position(argv, whereIdx);
  if (where < 0) return out.error(E.SYNTAX), null;
  let count = -1;
  for (let j = whereIdx + 1; j < argv.count; j++) {
    const more = argv.count - 1 - j;
    if (count === -1 && argv.is(j, 'COUNT') && more > 0) {
      j++;
      count = longArg(argv, j);
      if (count !== count || count < 1) return out.error(COUNT_POSITIVE), null;
    } else {
      return out.error(E.SYNTAX), null;
    }
  }
  const keys: string[] = [];
  for (let k = at + 1; k < whereIdx; k++) keys.push(argv.key(k));
  return { keys, where, count: count === -1 ? 1 : count };
}

/** Pop up to `count` from `key`'s list and reply [key, [elements]]. */
function mpopFrom(c: Client, key: string, l: ListValue, where: number, count: number, out: ReplySink): void {
  const n = Math.min(count, l.length);
  out.array(2);
  out.bulkLatin1(key);
  out.array(n);
  for (let i = 0; i < n; i++) bulkElem(out, where === HEAD ? l.popHead() : l.popTail());
  keyEvent(c, N.LIST, where === HEAD ? 'lpop' : 'rpop', key);
  afterRemoval(c, key, l);
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
function lmpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  const a = parseMpop(argv, 1, out);
  if (a === null) return;
  for (const key of a.keys) {
    const l = writeList(c, key);
    if (l === undefined) continue;
    if (l === null) return out.error(E.WRONGTYPE);
    if (l.length === 0) continue;
    return mpopFrom(c, key, l, a.where, a.count, out);
  }
  out.nilArray();
}

// ---------------------------------------------------------------- blocking variants
//
// Each first tries to be served like its non-blocking twin; when every key is missing (or
// empty) it blocks, and blocking.ts later calls its `serve` for a key that changed. `serve`
// declines (returns false) while the key is missing or holds another type: the client keeps
// waiting, as in Redis 7.0.

function nilArray(out: ReplySink): void {
  out.nilArray();
}

/** The list to serve a waiter from: a non-empty ListValue, else null (keep waiting). */
function servable(c: Client, key: string): ListValue | null {
  const e = c.db.get(key);
  if (e === undefined || !(e.value instanceof ListValue) || e.value.length === 0) return null;
  return e.value;
}

/** Pop one element and reply [key, element] (BLPOP / BRPOP). */
function popOneWithKey(c: Client, key: string, l: ListValue, where: number, out: ReplySink): void {
  const v = where === HEAD ? l.popHead() : l.popTail();
  out.array(2);
  out.bulkLatin1(key);
  bulkElem(out, v);
  keyEvent(c, N.LIST, where === HEAD ? 'lpop' : 'rpop', key);
  afterRemoval(c, key, l);
}

// BLPOP key [key ...] timeout   BRPOP key [key ...] timeout
function bpopGeneric(c: Client, argv: Argv, out: ReplySink, where: number): void {
  const deadline = parseTimeout(argv, argv.count - 1);
  const keys: string[] = [];
  for (let i = 1; i < argv.count - 1; i++) {
    const key = argv.key(i);
    const l = writeList(c, key);
    if (l === null) return out.error(E.WRONGTYPE);
    if (l !== undefined && l.length > 0) return popOneWithKey(c, key, l, where, out);
    keys.push(key);
  }
  blockOrTimeout(c, out, {
    keys, deadline, timeout: nilArray,
    serve(key, o) {
      const l = servable(c, key);
      if (l === null) return false;
      popOneWithKey(c, key, l, where, o);
      return true;
    },
  });
}

function blpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  bpopGeneric(c, argv, out, HEAD);
}
function brpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  bpopGeneric(c, argv, out, TAIL);
}

/** BLMOVE / BRPOPLPUSH after parsing: serve now when the source has elements, else block. */
function bmoveGeneric(c: Client, argv: Argv, out: ReplySink, from: number, to: number, deadline: number): void {
  const src = writeList(c, argv.key(1));
  if (src === null) return out.error(E.WRONGTYPE);
  // Only the source decides: a destination of the wrong type is reported when served.
  if (src !== undefined) return lmoveGeneric(c, argv, out, from, to);
  // Not allowed to block (MULTI): a null bulk, although a real timeout answers a null array
  // (Redis 7.0's replyToBlockedClientTimedOut treats every list command alike).
  if (!canBlock(c)) return out.nil();
  const skey = argv.key(1);
  const dkey = argv.key(2);
  blockOrTimeout(c, out, {
    keys: [skey], deadline, timeout: nilArray,
    serve(key, o) {
      const l = servable(c, key);
      if (l === null) return false;
      // Redis 7.0 serveClientBlockedOnList: a destination of another type unblocks the client
      // with WRONGTYPE and leaves the source untouched.
      moveOne(c, key, l, dkey, from, to, o);
      return true;
    },
  });
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
function blmoveCommand(c: Client, argv: Argv, out: ReplySink): void {
  const from = position(argv, 3);
  if (from < 0) return out.error(E.SYNTAX);
  const to = position(argv, 4);
  if (to < 0) return out.error(E.SYNTAX);
  bmoveGeneric(c, argv, out, from, to, parseTimeout(argv, 5));
}

// BRPOPLPUSH source destination timeout
function brpoplpushCommand(c: Client, argv: Argv, out: ReplySink): void {
  bmoveGeneric(c, argv, out, TAIL, HEAD, parseTimeout(argv, 3));
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
function blmpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  // Redis parses the timeout after numkeys, the keys, LEFT|RIGHT and COUNT.
  const a = parseMpop(argv, 2, out);
  if (a === null) return;
  const deadline = parseTimeout(argv, 1);
  const { keys, where, count } = a;
  for (const key of keys) {
    const l = writeList(c, key);
    if (l === null) return out.error(E.WRONGTYPE);
    if (l !== undefined && l.length > 0) return mpopFrom(c, key, l, where, count, out);
  }
  blockOrTimeout(c, out, {
    keys, deadline, timeout: nilArray,
    serve(key, o) {
      const l = servable(c, key);
      if (l === null) return false;
      mpopFrom(c, key, l, where, count, o);
      return true;
    },
  });
}

/** The blocking rows: @blocking, and refused over REST (an HTTP request does not wait). */
const BLOCKING = F.WRITE | F.BLOCKING | F.NO_REST;

export default family('list', ['list'], [
  //   name          arity  flags                                keys        handler
  row('lpush',         -3,  F.WRITE | F.DENYOOM | F.FAST,        [1, 1, 1],  lpushCommand),
  row('rpush',         -3,  F.WRITE | F.DENYOOM | F.FAST,        [1, 1, 1],  rpushCommand),
  row('lpushx',        -3,  F.WRITE | F.DENYOOM | F.FAST,        [1, 1, 1],  lpushxCommand),
  row('rpushx',        -3,  F.WRITE | F.DENYOOM | F.FAST,        [1, 1, 1],  rpushxCommand),
  row('lpop',          -2,  F.WRITE | F.FAST,                    [1, 1, 1],  lpopCommand),
  row('rpop',          -2,  F.WRITE | F.FAST,                    [1, 1, 1],  rpopCommand),
  row('llen',           2,  F.READONLY | F.FAST,                 [1, 1, 1],  llenCommand),
  row('lrange',         4,  F.READONLY,                          [1, 1, 1],  lrangeCommand),
  row('lindex',         3,  F.READONLY,                          [1, 1, 1],  lindexCommand),
  row('lset',           4,  F.WRITE | F.DENYOOM,                 [1, 1, 1],  lsetCommand),
  row('linsert',        5,  F.WRITE | F.DENYOOM,                 [1, 1, 1],  linsertCommand),
  row('lrem',           4,  F.WRITE,                             [1, 1, 1],  lremCommand),
  row('ltrim',          4,  F.WRITE,                             [1, 1, 1],  ltrimCommand),
  row('lpos',          -3,  F.READONLY,                          [1, 1, 1],  lposCommand),
  row('lmove',          5,  F.WRITE | F.DENYOOM,                 [1, 2, 1],  lmoveCommand),
  row('rpoplpush',      3,  F.WRITE | F.DENYOOM,                 [1, 2, 1],  rpoplpushCommand),
  row('lmpop',         -4,  F.WRITE | F.MOVABLE_KEYS,            [0, 0, 0],  lmpopCommand, { getKeys: numkeysKeys(0, 1, 2) }),
  row('blpop',         -3,  BLOCKING | F.NOSCRIPT,               [1, -2, 1], blpopCommand),
  row('brpop',         -3,  BLOCKING | F.NOSCRIPT,               [1, -2, 1], brpopCommand),
  row('brpoplpush',     4,  BLOCKING | F.DENYOOM | F.NOSCRIPT,   [1, 2, 1],  brpoplpushCommand),
  row('blmove',         6,  BLOCKING | F.DENYOOM | F.NOSCRIPT,   [1, 2, 1],  blmoveCommand),
  row('blmpop',        -5,  BLOCKING | F.MOVABLE_KEYS,           [0, 0, 0],  blmpopCommand, { getKeys: numkeysKeys(0, 2, 3) }),
]);
