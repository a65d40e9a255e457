/**
 * JSON commands (RedisJSON 2.x, as Upstash serves them): JSON.SET JSON.GET JSON.MGET JSON.MSET
 * JSON.MERGE JSON.DEL JSON.FORGET JSON.TYPE JSON.CLEAR JSON.TOGGLE JSON.NUMINCRBY
 * JSON.NUMMULTBY JSON.STRAPPEND JSON.STRLEN JSON.ARRAPPEND JSON.ARRINDEX JSON.ARRINSERT
 * JSON.ARRLEN JSON.ARRPOP JSON.ARRTRIM JSON.OBJKEYS JSON.OBJLEN JSON.RESP.
 *
 * The behaviour is RedisJSON's (src/commands.rs): the order in which arguments are checked,
 * the two reply shapes (a legacy path answers with one value and errors when nothing matches;
 * a '$' path answers with one entry per match, nil for matches of the wrong type), and the
 * error texts, which a module replies verbatim (so some have no "ERR" code, e.g. "Couldn't
 * parse as integer" or serde_json's "expected value at line 1 column 1"). Upstash's one known
 * difference, the order of recursive-descent matches, lives in ds/jsonpath.ts.
 *
 * Arity: RedisJSON registers its commands with arity -1 and reports missing arguments itself
 * with the same "wrong number of arguments for 'json.x' command" text; the table carries the
 * minimum argument counts of each syntax instead, so the dispatcher gives that error.
 */
import { isUtf8 } from 'node:buffer';
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { CommandError, E, wrongArity } from '../../resp/errors.js';
import { formatDouble17g } from '../../resp/ascii.js';
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';
import {
  I64_MAX, I64_MIN, JFloat, JsonDoc, JsonParseError, addKey, byteLength, cloneValue, deleteAt,
  formatNumber, getAt, intValue, mergePatch, parseJson, pathsForDeletion, serialize,
  serializeFormatted, setAt, strictEqual, toBytes, typeName, type Format, type JValue, type Seg,
} from '../ds/json.js';
import {
  PathSyntaxError, compile, pathArg, select, selectPaths, splitLast, type Match, type PathArg, type Query,
} from '../ds/jsonpath.js';
import { lookupRead, lookupWrite } from './typed-helpers.js';
import { N, keyEvent } from '../notify.js';

const NOT_UTF8 = "Couldn't parse as UTF-8 string";
const NOT_INTEGER = "Couldn't parse as integer";
const NO_SUCH_KEY = "ERR could not perform this operation on a key that doesn't exist";
const AT_ROOT = 'ERR new objects must be created at the root';
const WRONG_STATIC = 'Err wrong static path';
const MUST_END_WITH_KEY = 'Err path must end with object key to set';
const INDEX_OUT_OF_RANGE = 'ERR array index out of range';
const INDEX_OUT_OF_BOUNDS = 'ERR index out of bounds';
const RESULT_NOT_NUMBER = 'result is not a number';
const BAD_NUMBER = 'bad input number';

const pathMissing = (p: string) => `ERR Path '${p}' does not exist`;
const pathMissingOr = (p: string, or: string) => `ERR Path '${p}' does not exist or ${or}`;
const expected = (want: string, found: string) => `WRONGTYPE wrong type of path value - expected ${want} but found ${found}`;

/** Reply errors are byte strings (latin1); ours may quote UTF-8 paths and values. */
function fail(msg: string): never {
  throw new CommandError(Buffer.from(msg, 'utf8').toString('latin1'));
}

// ---------------------------------------------------------------- arguments

/** An argument as text: RedisJSON takes &str, so it must be valid UTF-8. */
function text(argv: Argv, i: number): string {
  const v = argv.view(i);
  if (!isUtf8(v)) fail(NOT_UTF8);
  return v.toString('utf8');
}

/** `args.next_str().unwrap_or(".")`: a missing or non-UTF-8 path means the root. */
function textOr(argv: Argv, i: number, dflt: string): string {
  if (i >= argv.count) return dflt;
  const v = argv.view(i);
  return isUtf8(v) ? v.toString('utf8') : dflt;
}

/** A JSON argument (serde_json::from_str): UTF-8 first, then serde's grammar and messages. */
function parseArg(argv: Argv, i: number): JValue {
  const v = argv.view(i);
  if (!isUtf8(v)) fail(NOT_UTF8);
  return parseText(v);
}

function parseText(v: Uint8Array): JValue {
  try {
    return parseJson(v);
  } catch (err) {
    if (err instanceof JsonParseError) fail(err.message);
    throw err;
  }
}

/** RedisString::parse_integer (RM_StringToLongLong). */
function int64Arg(argv: Argv, i: number): bigint {
  const v = argv.int64(i);
  if (v === null) fail(NOT_INTEGER);
  return v;
}

function query(path: string): Query {
  try {
    return compile(path);
  } catch (err) {
    if (err instanceof PathSyntaxError) fail(err.message);
    throw err;
  }
}

// ---------------------------------------------------------------- documents

/** The document at `key` for reading; undefined when missing; WRONGTYPE for other types. */
function readDoc(c: Client, key: string): JsonDoc | undefined {
  const e = lookupRead(c, key);
  if (e === undefined) return undefined;
  if (!(e.value instanceof JsonDoc)) fail(E.WRONGTYPE);
  return e.value;
}

function writeDoc(c: Client, key: string): JsonDoc | undefined {
  const e = lookupWrite(c, key);
  if (e === undefined) return undefined;
  if (!(e.value instanceof JsonDoc)) fail(E.WRONGTYPE);
  return e.value;
}

/** Commands that need an existing document (RedisError::nonexistent_key). */
function existingDoc(c: Client, key: string): JsonDoc {
  const d = writeDoc(c, key);
  if (d === undefined) fail(NO_SUCH_KEY);
  return d;
}

/** The value at a location, which the command modifies in place. */
function valueAt(doc: JsonDoc, path: readonly Seg[]): JValue | undefined {
  return getAt(doc.root, path);
}

/** Replace the value at a location (the root included). */
function replaceAt(doc: JsonDoc, path: readonly Seg[], v: JValue): boolean {
  if (path.length === 0) {
    doc.root = v;
    return true;
  }
  return setAt(doc.root, path, v);
}

const isNumberValue = (v: JValue) => typeof v === 'number' || typeof v === 'bigint' || v instanceof JFloat;
const isString = (v: JValue) => typeof v === 'string';
const isBool = (v: JValue) => typeof v === 'boolean';

/** The matches of a path with a location each, for the commands that modify. */
function locate(doc: JsonDoc, path: PathArg): Match[] {
  return selectPaths(query(path.fixed), doc.root);
}

/** The first value a legacy path selects (KeyValue::get_first). */
function first(doc: JsonDoc, path: PathArg): JValue {
  const vals = select(query(path.fixed), doc.root);
  if (vals.length === 0) fail(pathMissing(path.fixed));
  return vals[0];
}

// ---------------------------------------------------------------- JSON.SET / MSET / MERGE

type Update = { set: Seg[] } | { add: Seg[]; key: string };

const NONE = 0;
const NX = 1;
const XX = 2;

/**
 * KeyValue::find_paths: the existing locations the path matches (unless NX), else (unless XX)
 * the one member a static path would add to an existing object.
 */
function findUpdates(doc: JsonDoc, fixed: string, mode: number): Update[] {
  const q = query(fixed);
  if (mode !== NX) {
    const m = selectPaths(q, doc.root);
    if (m.length > 0) return m.map((x) => ({ set: x.path! }));
  }
  if (mode === XX) return [];
  if (!q.isStatic) fail(WRONG_STATIC);
  const split = splitLast(q);
  if (split === null) fail(MUST_END_WITH_KEY);
  if ('key' in split.last) {
    const key = split.last.key;
    if (q.toks.length === 1) return [{ add: [], key }];
    return selectPaths(split.parent, doc.root).map((x) => ({ add: x.path!, key }));
  }
  // A missing array index cannot be added; an existing one under NX is a no-op.
  if (selectPaths(q, doc.root).length === 0) fail(INDEX_OUT_OF_RANGE);
  return [];
}

/** Apply JSON.SET updates; true if anything changed. Each location gets its own copy. */
function applyUpdates(doc: JsonDoc, updates: Update[], v: JValue): boolean {
  let changed = false;
  updates.forEach((u, i) => {
    const val = i === 0 ? v : cloneValue(v);
    if ('set' in u) changed = replaceAt(doc, u.set, val) || changed;
    else changed = addKey(doc.root, u.add, u.key, val) || changed;
  });
  return changed;
}

/** FORMAT <fmt>: only JSON is served. */
function formatOption(argv: Argv, i: number, name: string, out: ReplySink): number {
  if (i + 1 >= argv.count) {
    out.error(wrongArity(name));
    return -1;
  }
  const f = text(argv, i + 1);
  if (f !== 'JSON') fail(`ERR wrong format ${f}`);
  return i + 1;
}

// JSON.SET key path value [NX | XX]
/** RedisJSON's keyspace event (class d): the command's name; JSON.FORGET reports json.del. */
function jsonEvent(c: Client, argv: Argv, key: string): void {
  if ((c.engine.notifyFlags & N.MODULE) === 0) return;
  const name = argv.lower(0);
  keyEvent(c, N.MODULE, name === 'json.forget' ? 'json.del' : name, key);
}

function jsonSetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const path = pathArg(text(argv, 2));
  text(argv, 3);
  let mode = NONE;
  for (let i = 4; i < argv.count; i++) {
    text(argv, i);
    if (argv.is(i, 'NX') && mode === NONE) mode = NX;
    else if (argv.is(i, 'XX') && mode === NONE) mode = XX;
    else if (argv.is(i, 'FORMAT')) {
      i = formatOption(argv, i, 'json.set', out);
      if (i < 0) return;
    } else fail(E.SYNTAX);
  }
  const doc = writeDoc(c, key);
  const val = parseArg(argv, 3);
  if (doc === undefined) {
    if (mode === XX) return out.nil();
    if (path.fixed !== '$') fail(AT_ROOT);
    c.db.add(key, new JsonDoc(val));
    jsonEvent(c, argv, key);
    return out.ok();
  }
  if (path.fixed === '$') {
    if (mode === NX) return out.nil();
    doc.root = val;
    c.db.modified(key);
    jsonEvent(c, argv, key);
    return out.ok();
  }
  const updates = findUpdates(doc, path.fixed, mode);
  if (updates.length === 0 || !applyUpdates(doc, updates, val)) return out.nil();
  c.db.modified(key);
  jsonEvent(c, argv, key);
  out.ok();
}

// JSON.MSET key path value [key path value ...]
function jsonMsetCommand(c: Client, argv: Argv, out: ReplySink): void {
  // Everything is checked first, then applied: all triplets or none.
  const actions: Array<{ key: string; updates: Update[] | null; val: JValue }> = [];
  for (let i = 1; i < argv.count; i += 3) {
    const key = argv.key(i);
    const doc = writeDoc(c, key);
    if (i + 1 >= argv.count) return out.error(wrongArity('json.mset'));
    const path = pathArg(text(argv, i + 1));
    let updates: Update[] | null = null;
    if (path.fixed !== '$') {
      if (doc === undefined) fail(AT_ROOT);
      updates = findUpdates(doc, path.fixed, NONE);
    }
    if (i + 2 >= argv.count) return out.error(wrongArity('json.mset'));
    actions.push({ key, updates, val: parseArg(argv, i + 2) });
  }
  for (const a of actions) {
    const e = c.db.get(a.key);
    const doc = e !== undefined && e.value instanceof JsonDoc ? e.value : undefined;
    if (a.updates === null) {
      if (doc === undefined) c.db.add(a.key, new JsonDoc(a.val));
      else {
        doc.root = a.val;
        c.db.modified(a.key);
      }
      jsonEvent(c, argv, a.key);
    } else if (doc !== undefined && a.updates.length > 0 && applyUpdates(doc, a.updates, a.val)) {
      c.db.modified(a.key);
      jsonEvent(c, argv, a.key);
    }
  }
  out.ok();
}

// JSON.MERGE key path value
function jsonMergeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const path = pathArg(text(argv, 2));
  text(argv, 3);
  for (let i = 4; i < argv.count; i++) {
    text(argv, i);
    if (!argv.is(i, 'FORMAT')) fail(E.SYNTAX);
    i = formatOption(argv, i, 'json.merge', out);
    if (i < 0) return;
  }
  const doc = writeDoc(c, key);
  const val = parseArg(argv, 3);
  if (doc === undefined) {
    if (path.fixed !== '$') fail(AT_ROOT);
    c.db.add(key, new JsonDoc(val));
    jsonEvent(c, argv, key);
    return out.ok();
  }
  if (path.fixed === '$') {
    doc.root = mergePatch(doc.root, val);
    c.db.modified(key);
    jsonEvent(c, argv, key);
    return out.ok();
  }
  const updates = findUpdates(doc, path.fixed, NONE);
  let changed = false;
  for (const u of updates) {
    if ('add' in u) {
      changed = addKey(doc.root, u.add, u.key, cloneValue(val)) || changed;
    } else if (val === null) {
      // Merging null into an existing member removes it (RFC 7396).
      changed = (u.set.length === 0 ? replaceAt(doc, u.set, null) : deleteAt(doc.root, u.set)) || changed;
    } else {
      const cur = valueAt(doc, u.set);
      if (cur !== undefined) changed = replaceAt(doc, u.set, mergePatch(cur, val)) || changed;
    }
  }
  if (!changed) return out.nil();
  c.db.modified(key);
  jsonEvent(c, argv, key);
  out.ok();
}

// ---------------------------------------------------------------- reading

/** JSON.GET's formatting options, collected before the document is read. */
interface GetArgs {
  paths: PathArg[];
  fmt: Format;
}

// JSON.GET key [INDENT indent] [NEWLINE newline] [SPACE space] [path [path ...]]
function jsonGetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const a: GetArgs = { paths: [], fmt: { indent: '', newline: '', space: '' } };
  for (let i = 2; i < argv.count; i++) {
    // `while let Ok(arg) = args.next_str()`: a non-UTF-8 argument ends the list.
    if (!isUtf8(argv.view(i))) break;
    const s = argv.str(i);
    // Anything longer (in bytes) than the longest keyword, NOESCAPE, is a path.
    if (argv.len(i) <= 8) {
      const opt = argv.is(i, 'INDENT') ? 'indent' : argv.is(i, 'NEWLINE') ? 'newline' : argv.is(i, 'SPACE') ? 'space' : null;
      if (opt !== null) {
        if (i + 1 >= argv.count) return out.error(wrongArity('json.get'));
        a.fmt[opt] = text(argv, ++i);
        continue;
      }
      if (argv.is(i, 'NOESCAPE')) continue; // accepted and ignored, as RedisJSON does
      if (argv.is(i, 'FORMAT')) {
        i = formatOption(argv, i, 'json.get', out);
        if (i < 0) return;
        continue;
      }
    }
    a.paths.push(pathArg(s));
  }
  if (a.paths.length === 0) a.paths.push(pathArg('.'));
  const doc = readDoc(c, argv.key(1));
  if (doc === undefined) return out.nil();
  out.bulk(toBytes(serializeFormatted(getValue(doc, a.paths), a.fmt)));
}

/**
 * KeyValue::to_json: one legacy path gives its first match; one JSONPath the array of matches;
 * several paths an object keyed by path (arrays unless every path is legacy). With several
 * paths a path that does not compile is left out, as RedisJSON does.
 */
function getValue(doc: JsonDoc, paths: PathArg[]): JValue {
  const legacy = paths.every((p) => p.legacy);
  if (paths.length === 1) {
    const p = paths[0];
    return legacy ? first(doc, p) : select(query(p.fixed), doc.root);
  }
  const obj = new Map<string, JValue>();
  let missing: string | null = null;
  for (const p of paths) {
    let q: Query;
    try {
      q = compile(p.fixed);
    } catch (err) {
      if (err instanceof PathSyntaxError) continue;
      throw err;
    }
    const vals = select(q, doc.root);
    if (!legacy) {
      obj.set(p.original, vals);
    } else if (vals.length > 0) {
      obj.set(p.original, vals[0]);
    } else if (missing === null) {
      missing = p.original;
    }
  }
  if (missing !== null) fail(pathMissing(missing));
  return obj;
}

// JSON.MGET key [key ...] path
function jsonMgetCommand(c: Client, argv: Argv, out: ReplySink): void {
  const path = pathArg(text(argv, argv.count - 1));
  const n = argv.count - 2;
  out.array(n);
  for (let i = 1; i <= n; i++) {
    // Every per-key failure (missing, other type, no match, bad path) is a nil entry.
    const e = lookupRead(c, argv.key(i));
    if (e === undefined || !(e.value instanceof JsonDoc)) {
      out.nil();
      continue;
    }
    let q: Query;
    try {
      q = compile(path.fixed);
    } catch (err) {
      if (!(err instanceof PathSyntaxError)) throw err;
      out.nil();
      continue;
    }
    const vals = select(q, e.value.root);
    if (!path.legacy) out.bulk(toBytes(serialize(vals)));
    else if (vals.length > 0) out.bulk(toBytes(serialize(vals[0])));
    else out.nil();
  }
}

// JSON.TYPE key [path]
function jsonTypeCommand(c: Client, argv: Argv, out: ReplySink): void {
  const path = pathArg(textOr(argv, 2, '.'));
  const doc = readDoc(c, argv.key(1));
  if (doc === undefined) return out.nil();
  if (path.legacy) {
    // Any failure of a legacy path (no match, bad syntax) is a nil reply.
    let vals: JValue[];
    try {
      vals = select(compile(path.fixed), doc.root);
    } catch (err) {
      if (err instanceof PathSyntaxError) return out.nil();
      throw err;
    }
    return vals.length === 0 ? out.nil() : out.bulkText(typeName(vals[0]));
  }
  const vals = select(query(path.fixed), doc.root);
  out.array(vals.length);
  for (const v of vals) out.bulkText(typeName(v));
}

// JSON.STRLEN key [path]
function jsonStrlenCommand(c: Client, argv: Argv, out: ReplySink): void {
  const path = pathArg(textOr(argv, 2, '.'));
  const doc = readDoc(c, argv.key(1));
  if (path.legacy) {
    if (doc === undefined) return out.nil();
    const v = first(doc, path);
    if (typeof v !== 'string') fail(expected('string', typeName(v)));
    return out.int(byteLength(v));
  }
  if (doc === undefined) fail(NO_SUCH_KEY);
  const vals = select(query(path.fixed), doc.root);
  out.array(vals.length);
  for (const v of vals) {
    if (typeof v === 'string') out.int(byteLength(v));
    else out.nil();
  }
}

// JSON.ARRLEN key [path]
function jsonArrlenCommand(c: Client, argv: Argv, out: ReplySink): void {
  const path = pathArg(textOr(argv, 2, '.'));
  const doc = readDoc(c, argv.key(1));
  if (doc === undefined) {
    if (path.legacy) return out.nil();
    fail(NO_SUCH_KEY);
  }
  const vals = select(query(path.fixed), doc.root);
  if (path.legacy) {
    if (vals.length === 0) fail(pathMissing(path.original));
    const v = vals[0];
    if (!Array.isArray(v)) fail(pathMissingOr(path.original, 'not an array'));
    return out.int(v.length);
  }
  out.array(vals.length);
  for (const v of vals) {
    if (Array.isArray(v)) out.int(v.length);
    else out.nil();
  }
}

// JSON.OBJKEYS key [path]
function jsonObjkeysCommand(c: Client, argv: Argv, out: ReplySink): void {
  const path = pathArg(textOr(argv, 2, '.'));
  const doc = readDoc(c, argv.key(1));
  if (path.legacy) {
    if (doc === undefined) return out.nil();
    let vals: JValue[];
    try {
      vals = select(compile(path.fixed), doc.root);
    } catch (err) {
      if (err instanceof PathSyntaxError) return out.nil();
      throw err;
    }
    if (vals.length === 0) return out.nil();
    const v = vals[0];
    if (!(v instanceof Map)) fail(pathMissingOr(path.fixed, 'not an object'));
    return replyKeys(out, v);
  }
  if (doc === undefined) fail(NO_SUCH_KEY);
  const vals = select(query(path.fixed), doc.root);
  out.array(vals.length);
  for (const v of vals) {
    if (v instanceof Map) replyKeys(out, v);
    else out.nil();
  }
}

function replyKeys(out: ReplySink, o: Map<string, JValue>): void {
  out.array(o.size);
  for (const k of o.keys()) out.bulk(toBytes(k));
}

// JSON.OBJLEN key [path]
function jsonObjlenCommand(c: Client, argv: Argv, out: ReplySink): void {
  const path = pathArg(textOr(argv, 2, '.'));
  const doc = readDoc(c, argv.key(1));
  if (path.legacy) {
    if (doc === undefined) return out.nil();
    let vals: JValue[];
    try {
      vals = select(compile(path.fixed), doc.root);
    } catch (err) {
      if (err instanceof PathSyntaxError) return out.nil();
      throw err;
    }
    if (vals.length === 0) return out.nil();
    const v = vals[0];
    if (!(v instanceof Map)) fail(expected('object', typeName(v)));
    return out.int(v.size);
  }
  if (doc === undefined) fail(pathMissingOr(path.fixed, 'not an object'));
  const vals = select(query(path.fixed), doc.root);
  out.array(vals.length);
  for (const v of vals) {
    if (v instanceof Map) out.int(v.size);
    else out.nil();
  }
}

/** JSON.ARRINDEX's normalize_arr_indices, then a search of [start, end). */
function arrIndex(arr: JValue[], v: JValue, start: bigint, end: bigint): number {
  const len = BigInt(arr.length);
  if (len === 0n) return -1;
  const s = start < 0n ? (len + start > 0n ? len + start : 0n) : start < len - 1n ? start : len - 1n;
  const e = end === 0n ? len : end < 0n ? (len + end > 0n ? len + end : 0n) : end < len ? end : len;
  for (let i = Number(s); i < Number(e); i++) if (strictEqual(arr[i], v)) return i;
  return -1;
}

// JSON.ARRINDEX key path value [start [stop]]
function jsonArrindexCommand(c: Client, argv: Argv, out: ReplySink): void {
  const path = pathArg(text(argv, 2));
  text(argv, 3);
  const start = argv.count > 4 ? int64Arg(argv, 4) : 0n;
  const end = argv.count > 5 ? int64Arg(argv, 5) : 0n;
  if (argv.count > 6) return out.error(wrongArity('json.arrindex'));
  const e = lookupRead(c, argv.key(1));
  const v = parseArg(argv, 3);
  if (e !== undefined && !(e.value instanceof JsonDoc)) fail(E.WRONGTYPE);
  if (e === undefined) fail(pathMissing(path.original));
  const doc = e.value as JsonDoc;
  if (path.legacy) {
    const arr = first(doc, path);
    if (!Array.isArray(arr)) fail(expected('array', typeName(arr)));
    return out.int(arrIndex(arr, v, start, end));
  }
  const vals = select(query(path.fixed), doc.root);
  out.array(vals.length);
  for (const a of vals) {
    if (Array.isArray(a)) out.int(arrIndex(a, v, start, end));
    else out.nil();
  }
}

// JSON.RESP key [path]
function jsonRespCommand(c: Client, argv: Argv, out: ReplySink): void {
  const path = pathArg(argv.count > 2 ? text(argv, 2) : '.');
  const doc = readDoc(c, argv.key(1));
  if (doc === undefined) return out.nil();
  if (path.legacy) return replyResp(out, first(doc, path));
  const vals = select(query(path.fixed), doc.root);
  out.array(vals.length);
  for (const v of vals) replyResp(out, v);
}

/**
 * RESP form of a value: null -> nil, booleans -> simple "true"/"false", integers -> integer
 * (u64 values beyond i64, which RedisJSON cannot reply, as their digits),
 * floats -> RM_ReplyWithDouble (a "%.17g" bulk string in RESP2), strings -> bulk, arrays ->
 * ["[", elements...], objects -> ["{", key, value, ...].
 */
function replyResp(out: ReplySink, v: JValue): void {
  if (v === null) return out.nil();
  switch (typeof v) {
    case 'boolean': return out.simple(v ? 'true' : 'false');
    case 'number': return out.int(v);
    // An integer between 2^63 and 2^64 has no RESP integer form: its digits, as a bulk string.
    case 'bigint': return v > I64_MAX ? out.bulkText(v.toString()) : out.int(v);
    case 'string': return out.bulk(toBytes(v));
  }
  if (v instanceof JFloat) return out.bulkText(formatDouble17g(v.v));
  if (Array.isArray(v)) {
    out.array(v.length + 1);
    out.simple('[');
    for (const x of v) replyResp(out, x);
    return;
  }
  out.array(2 * v.size + 1);
  out.simple('{');
  for (const [k, x] of v) {
    out.bulk(toBytes(k));
    replyResp(out, x);
  }
}

// ---------------------------------------------------------------- deleting and clearing

// JSON.DEL key [path]   /   JSON.FORGET key [path]
function jsonDelCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const path = pathArg(argv.count > 2 ? text(argv, 2) : '.');
  const doc = writeDoc(c, key);
  if (doc === undefined) return out.int(0);
  if (path.fixed === '$') {
    c.db.delete(key);
    jsonEvent(c, argv, key);
    return out.int(1);
  }
  const paths = locate(doc, path).map((m) => m.path!);
  let n = 0;
  for (const p of pathsForDeletion(paths)) if (p.length > 0 && deleteAt(doc.root, p)) n++;
  if (n > 0) c.db.modified(key);
  if (n > 0) jsonEvent(c, argv, key);
  out.int(n);
}

// JSON.CLEAR key [path]
function jsonClearCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  // Every path must be text, but only the first is used (RedisJSON).
  for (let i = 2; i < argv.count; i++) text(argv, i);
  const path = pathArg(argv.count > 2 ? argv.str(2) : '$');
  const doc = existingDoc(c, key);
  let n = 0;
  for (const m of locate(doc, path)) {
    const v = m.value;
    if (Array.isArray(v)) {
      if (v.length === 0) continue;
      v.length = 0;
    } else if (v instanceof Map) {
      if (v.size === 0) continue;
      v.clear();
    } else if (typeof v === 'number' || typeof v === 'bigint') {
      if (v === 0) continue;
      replaceAt(doc, m.path!, 0);
    } else if (v instanceof JFloat) {
      if (v.v === 0) continue;
      replaceAt(doc, m.path!, 0); // a cleared float becomes the integer 0
    } else {
      continue;
    }
    n++;
  }
  if (n > 0) c.db.modified(key);
  if (n > 0) jsonEvent(c, argv, key);
  out.int(n);
}

// ---------------------------------------------------------------- in-place updates

/**
 * The shape shared by the updating commands (RedisJSON's *_impl / *_legacy pairs): find the
 * matches, apply `op` to those `accept` admits, and reply. A legacy path replies with the last
 * result and errors when nothing was admitted; a JSONPath replies with one entry per match
 * (`none` for the others). The key is marked modified even when `op` throws midway, since
 * the earlier locations were already changed.
 */
function updateEach<T>(
  c: Client, argv: Argv, key: string, doc: JsonDoc, path: PathArg, missing: string,
  accept: (v: JValue) => boolean, op: (m: Match) => T,
  reply: (v: T) => void, out: ReplySink, changed: (v: T) => boolean = () => true,
): void {
  const matches = locate(doc, path);
  let touched = false;
  try {
    if (path.legacy) {
      let last: T | undefined;
      let any = false;
      for (const m of matches) {
        if (!accept(m.value)) continue;
        any = true;
        last = op(m);
        touched = changed(last) || touched;
      }
      if (!any) fail(missing);
      return reply(last as T);
    }
    const results: Array<{ v: T } | null> = [];
    for (const m of matches) {
      if (accept(m.value)) {
        const v = op(m);
        touched = changed(v) || touched;
        results.push({ v });
      } else {
        results.push(null);
      }
    }
    out.array(results.length);
    for (const r of results) {
      if (r === null) out.nil();
      else reply(r.v);
    }
  } finally {
    if (touched) c.db.modified(key);
    if (touched) jsonEvent(c, argv, key);
  }
}

// JSON.TOGGLE key path
function jsonToggleCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const path = pathArg(text(argv, 2));
  const doc = existingDoc(c, key);
  const flip = (m: Match) => {
    const v = !valueAt(doc, m.path!);
    replaceAt(doc, m.path!, v);
    return v;
  };
  if (path.legacy) {
    updateEach(c, argv, key, doc, path, pathMissingOr(path.fixed, 'not a bool'), isBool, flip, (v) => out.bulkText(String(v)), out);
  } else {
    updateEach(c, argv, key, doc, path, '', isBool, flip, (v) => out.int(v ? 1 : 0), out);
  }
}

/**
 * NUMINCRBY / NUMMULTBY on one location (do_num_op): integer arithmetic when the value is an
 * integer and the operand an i64, else f64 arithmetic (a non-finite result is refused). An
 * integer result outside i64 falls back to f64 rather than wrapping around as RedisJSON does.
 */
function numOp(doc: JsonDoc, path: Seg[], operand: JValue, mult: boolean): number | bigint | JFloat {
  const cur = valueAt(doc, path)!;
  let res: number | bigint | JFloat | null = null;
  if ((typeof cur === 'number' || typeof cur === 'bigint') && (typeof operand === 'number' || typeof operand === 'bigint')) {
    const b = BigInt(operand);
    if (b >= I64_MIN && b <= I64_MAX) {
      const r = mult ? BigInt(cur) * b : BigInt(cur) + b;
      if (r >= I64_MIN && r <= I64_MAX) res = intValue(r);
    }
  }
  if (res === null) {
    const x = cur instanceof JFloat ? cur.v : Number(cur);
    const y = operand instanceof JFloat ? operand.v : Number(operand);
    const r = mult ? x * y : x + y;
    if (!Number.isFinite(r)) fail(RESULT_NOT_NUMBER);
    res = new JFloat(r);
  }
  replaceAt(doc, path, res);
  return res;
}

function numCommand(c: Client, argv: Argv, out: ReplySink, mult: boolean): void {
  const key = argv.key(1);
  const path = pathArg(text(argv, 2));
  text(argv, 3);
  const doc = existingDoc(c, key);
  // The operand is parsed only when a number was matched (per location, in RedisJSON).
  let operand: JValue | undefined;
  const op = (m: Match) => {
    if (operand === undefined) {
      operand = parseText(argv.view(3));
      if (!isNumberValue(operand)) fail(BAD_NUMBER);
    }
    return numOp(doc, m.path!, operand, mult);
  };
  if (path.legacy) {
    updateEach(c, argv, key, doc, path, pathMissingOr(path.fixed, 'does not contains a number'), isNumberValue, op,
      (v) => out.bulkText(formatNumber(v)), out);
    return;
  }
  // A JSONPath answers with one JSON array text: the new numbers, null for the others.
  const matches = locate(doc, path);
  const results: JValue[] = [];
  let touched = false;
  try {
    for (const m of matches) {
      if (isNumberValue(m.value)) {
        touched = true;
        results.push(op(m));
      } else {
        results.push(null);
      }
    }
  } finally {
    if (touched) c.db.modified(key);
    if (touched) jsonEvent(c, argv, key);
  }
  out.bulk(toBytes(serialize(results)));
}

// JSON.NUMINCRBY key path value
function jsonNumincrbyCommand(c: Client, argv: Argv, out: ReplySink): void {
  numCommand(c, argv, out, false);
}

// JSON.NUMMULTBY key path value
function jsonNummultbyCommand(c: Client, argv: Argv, out: ReplySink): void {
  numCommand(c, argv, out, true);
}

// JSON.STRAPPEND key [path] value
function jsonStrappendCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  let path: PathArg;
  let vi: number;
  if (argv.count > 3) {
    path = pathArg(text(argv, 2));
    text(argv, 3);
    vi = 3;
  } else {
    text(argv, 2);
    path = pathArg('.');
    vi = 2;
  }
  const doc = existingDoc(c, key);
  let suffix: string | undefined;
  const append = (m: Match) => {
    if (suffix === undefined) {
      const s = parseText(argv.view(vi));
      if (typeof s !== 'string') fail(expected('string', argv.str(vi)));
      suffix = s;
    }
    const v = (valueAt(doc, m.path!) as string) + suffix;
    replaceAt(doc, m.path!, v);
    return byteLength(v);
  };
  updateEach(c, argv, key, doc, path, pathMissingOr(path.fixed, 'not a string'), isString, append, (n) => out.int(n), out);
}

// JSON.ARRAPPEND key path value [value ...]
function jsonArrappendCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const path = pathArg(text(argv, 2));
  const vals: JValue[] = [];
  for (let i = 3; i < argv.count; i++) vals.push(parseArg(argv, i));
  const doc = existingDoc(c, key);
  let uses = 0;
  const append = (m: Match) => {
    const arr = m.value as JValue[];
    for (const v of vals) arr.push(uses === 0 ? v : cloneValue(v));
    uses++;
    return arr.length;
  };
  updateEach(c, argv, key, doc, path, pathMissingOr(path.original, 'not an array'), Array.isArray, append, (n) => out.int(n), out);
}

// JSON.ARRINSERT key path index value [value ...]
function jsonArrinsertCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const path = pathArg(text(argv, 2));
  const index = int64Arg(argv, 3);
  const vals: JValue[] = [];
  for (let i = 4; i < argv.count; i++) vals.push(parseArg(argv, i));
  const doc = existingDoc(c, key);
  const insert = (m: Match) => {
    const arr = m.value as JValue[];
    const len = BigInt(arr.length);
    const at = index < 0n ? len + index : index;
    if (at < 0n || at > len) fail(INDEX_OUT_OF_BOUNDS);
    // No spread: a command may insert more values than a call can take arguments.
    const tail = arr.splice(Number(at));
    for (const v of vals) arr.push(cloneValue(v));
    for (const v of tail) arr.push(v);
    return arr.length;
  };
  updateEach(c, argv, key, doc, path, pathMissingOr(path.fixed, 'not an array'), Array.isArray, insert, (n) => out.int(n), out);
}

// JSON.ARRPOP key [path [index]]
function jsonArrpopCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  let path: PathArg;
  let index = -1n;
  if (argv.count === 2) {
    path = pathArg('.');
    index = I64_MAX; // RedisJSON's default without a path: the last element too
  } else {
    path = pathArg(text(argv, 2));
    // `args.next_i64().unwrap_or(-1)`: an invalid index means the last element.
    if (argv.count > 3) index = argv.int64(3) ?? -1n;
  }
  const doc = existingDoc(c, key);
  const pop = (m: Match): string | null => {
    const arr = m.value as JValue[];
    if (arr.length === 0) return null;
    const len = BigInt(arr.length);
    const at = index < 0n ? (len + index > 0n ? len + index : 0n) : index < len - 1n ? index : len - 1n;
    return serialize(arr.splice(Number(at), 1)[0]);
  };
  const reply = (s: string | null) => (s === null ? out.nil() : out.bulk(toBytes(s)));
  updateEach(c, argv, key, doc, path, pathMissingOr(path.fixed, 'not an array'), Array.isArray, pop, reply, out, (s) => s !== null);
}

/** ArrayIndex::normalize: negative from the end (clamped at 0), positive clamped at len - 1. */
function normalizeIndex(i: bigint, len: bigint): bigint {
  if (i < 0n) return len - (len < -i ? len : -i);
  const m = len - 1n < i ? len - 1n : i;
  return m > 0n ? m : 0n;
}

// JSON.ARRTRIM key path start stop
function jsonArrtrimCommand(c: Client, argv: Argv, out: ReplySink): void {
  const key = argv.key(1);
  const path = pathArg(text(argv, 2));
  const start = int64Arg(argv, 3);
  const stop = int64Arg(argv, 4);
  const doc = existingDoc(c, key);
  const trim = (m: Match) => {
    const arr = m.value as JValue[];
    const len = BigInt(arr.length);
    const e = normalizeIndex(stop, len);
    const s = start < 0n || start < len ? normalizeIndex(start, len) : e + 1n;
    if (s > e || len === 0n) {
      arr.length = 0;
    } else {
      arr.length = Number(e) + 1;
      arr.splice(0, Number(s));
    }
    return arr.length;
  };
  updateEach(c, argv, key, doc, path, pathMissingOr(path.fixed, 'not an array'), Array.isArray, trim, (n) => out.int(n), out);
}

export default family('json', [], [
  //   name              arity  flags                   keys         handler
  row('json.set',          -4,  F.WRITE | F.DENYOOM,    [1, 1, 1],   jsonSetCommand),
  row('json.get',          -2,  F.READONLY,             [1, 1, 1],   jsonGetCommand),
  row('json.mget',         -3,  F.READONLY,             [1, -2, 1],  jsonMgetCommand),
  row('json.mset',         -4,  F.WRITE | F.DENYOOM,    [1, -1, 3],  jsonMsetCommand),
  row('json.merge',        -4,  F.WRITE | F.DENYOOM,    [1, 1, 1],   jsonMergeCommand),
  row('json.del',          -2,  F.WRITE,                [1, 1, 1],   jsonDelCommand),
  row('json.forget',       -2,  F.WRITE,                [1, 1, 1],   jsonDelCommand),
  row('json.type',         -2,  F.READONLY,             [1, 1, 1],   jsonTypeCommand),
  row('json.clear',        -2,  F.WRITE,                [1, 1, 1],   jsonClearCommand),
  row('json.toggle',       -3,  F.WRITE | F.DENYOOM,    [1, 1, 1],   jsonToggleCommand),
  row('json.numincrby',    -4,  F.WRITE,                [1, 1, 1],   jsonNumincrbyCommand),
  row('json.nummultby',    -4,  F.WRITE,                [1, 1, 1],   jsonNummultbyCommand),
  row('json.strappend',    -3,  F.WRITE | F.DENYOOM,    [1, 1, 1],   jsonStrappendCommand),
  row('json.strlen',       -2,  F.READONLY,             [1, 1, 1],   jsonStrlenCommand),
  row('json.arrappend',    -4,  F.WRITE | F.DENYOOM,    [1, 1, 1],   jsonArrappendCommand),
  row('json.arrindex',     -4,  F.READONLY,             [1, 1, 1],   jsonArrindexCommand),
  row('json.arrinsert',    -5,  F.WRITE | F.DENYOOM,    [1, 1, 1],   jsonArrinsertCommand),
  row('json.arrlen',       -2,  F.READONLY,             [1, 1, 1],   jsonArrlenCommand),
  row('json.arrpop',       -2,  F.WRITE,                [1, 1, 1],   jsonArrpopCommand),
  row('json.arrtrim',      -5,  F.WRITE,                [1, 1, 1],   jsonArrtrimCommand),
  row('json.objkeys',      -2,  F.READONLY,             [1, 1, 1],   jsonObjkeysCommand),
  row('json.objlen',       -2,  F.READONLY,             [1, 1, 1],   jsonObjlenCommand),
  row('json.resp',         -2,  F.READONLY,             [1, 1, 1],   jsonRespCommand),
]);
