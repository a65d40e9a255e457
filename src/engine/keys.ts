/**
 * Where a command's keys are, and what it does to each: the one place that answers it, for ACL
 * key checks (the read/write split of %R~ / %W~ patterns), scripts' redis.call, COMMAND GETKEYS
 * and GETKEYSANDFLAGS.
 *
 * It follows Redis 7.0's getKeysFromCommandWithSpecs: a row's key specs (src/engine/keyspecs.ts,
 * Redis's own) find the keys unless a spec is incomplete, has variable flags or does not fit the
 * arguments; then the row's getKeys (Redis's getkeys_proc) decides. Each key comes with its
 * key-spec flags (RO/RW/OW/RM and ACCESS/UPDATE/INSERT/DELETE): ACCESS needs read permission,
 * UPDATE/INSERT/DELETE need write permission (Redis's ACLSelectorCheckKey).
 */
import type { Argv } from '../resp/argv.js';
import type { CommandDef } from './command.js';
import type { ReplySink } from '../resp/reply-sink.js';

/** Key-spec flags, in the order Redis prints them. */
export const KF = {
  RO: 1 << 0,
  RW: 1 << 1,
  OW: 1 << 2,
  RM: 1 << 3,
  ACCESS: 1 << 4,
  UPDATE: 1 << 5,
  INSERT: 1 << 6,
  DELETE: 1 << 7,
  NOT_KEY: 1 << 8,
  INCOMPLETE: 1 << 9,
  VARIABLE_FLAGS: 1 << 10,
} as const;

export const KEY_FLAG_NAMES: ReadonlyArray<readonly [number, string]> = [
  [KF.RO, 'RO'], [KF.RW, 'RW'], [KF.OW, 'OW'], [KF.RM, 'RM'],
  [KF.ACCESS, 'access'], [KF.UPDATE, 'update'], [KF.INSERT, 'insert'], [KF.DELETE, 'delete'],
  [KF.NOT_KEY, 'not_key'], [KF.INCOMPLETE, 'incomplete'], [KF.VARIABLE_FLAGS, 'variable_flags'],
];

/** A key argument: its index in argv and its key-spec flags. */
export interface KeyRef {
  readonly pos: number;
  readonly flags: number;
}

/** Redis's getkeys_proc: the keys of one call, with flags ([] when the arguments make none). */
export type GetKeys = (argv: Argv) => KeyRef[];

const BS_UNKNOWN = 0;
const BS_INDEX = 1;
const BS_KEYWORD = 2;
const FK_UNKNOWN = 0;
const FK_RANGE = 1;
const FK_KEYNUM = 2;

/** One Redis 7 key spec (begin_search + find_keys). */
export interface KeySpec {
  readonly flags: number;
  readonly bs: number;
  /** BS_INDEX: the index. BS_KEYWORD: startfrom (negative: from the end, searching back). */
  readonly index: number;
  /** BS_KEYWORD: the keyword, upper-case. */
  readonly keyword: string;
  readonly fk: number;
  /** FK_RANGE: lastkey, keystep, limit. FK_KEYNUM: keynumidx, firstkey, keystep. */
  readonly a: number;
  readonly b: number;
  readonly c: number;
  /** Redis's notes on the spec ('' when none). */
  readonly notes: string;
}

/**
 * Parse a spec written the way `COMMAND INFO` shows it:
 * "<flags> | index <i> | keyword <KW> <startfrom> | unknown" then "| range <lastkey> <step> <limit>
 * | keynum <keynumidx> <firstkey> <step> | unknown", then optionally "| <notes>", e.g.
 * 'RO access | keyword STREAMS 1 | range -1 1 2'.
 */
export function parseKeySpec(text: string): KeySpec {
  const parts = text.split('|');
  const notes = parts.slice(3).join('|').trim();
  const [f, b, k] = parts.slice(0, 3).map((s) => s.trim().split(/\s+/));
  let flags = 0;
  for (const name of f) {
    const bit = KEY_FLAG_NAMES.find(([, n]) => n === name);
    if (bit === undefined) throw new Error(`key spec '${text}': unknown flag ${name}`);
    flags |= bit[0];
  }
  let bs = BS_UNKNOWN, index = 0, keyword = '';
  if (b[0] === 'index') { bs = BS_INDEX; index = Number(b[1]); }
  else if (b[0] === 'keyword') { bs = BS_KEYWORD; keyword = b[1].toUpperCase(); index = Number(b[2]); }
  else if (b[0] !== 'unknown') throw new Error(`key spec '${text}': bad begin_search`);
  let fk = FK_UNKNOWN;
  if (k[0] === 'range') fk = FK_RANGE;
  else if (k[0] === 'keynum') fk = FK_KEYNUM;
  else if (k[0] !== 'unknown') throw new Error(`key spec '${text}': bad find_keys`);
  const [a, bb, c] = fk === FK_UNKNOWN ? [0, 0, 0] : [Number(k[1]), Number(k[2]), Number(k[3])];
  return { flags, bs, index, keyword, fk, a, b: bb, c, notes };
}

/** A key spec as COMMAND INFO and COMMAND DOCS show it (Redis's addReplyCommandKeySpecs). */
export function writeKeySpec(s: KeySpec, out: ReplySink): void {
  out.array(s.notes ? 8 : 6);
  if (s.notes) {
    out.bulkText('notes');
    out.bulkText(s.notes);
  }
  out.bulkText('flags');
  const names = keyFlagNames(s.flags);
  out.array(names.length);
  for (const n of names) out.simple(n);
  out.bulkText('begin_search');
  out.array(4);
  out.bulkText('type');
  if (s.bs === BS_INDEX) {
    out.bulkText('index');
    out.bulkText('spec'); out.array(2);
    out.bulkText('index'); out.int(s.index);
  } else if (s.bs === BS_KEYWORD) {
    out.bulkText('keyword');
    out.bulkText('spec'); out.array(4);
    out.bulkText('keyword'); out.bulkText(s.keyword);
    out.bulkText('startfrom'); out.int(s.index);
  } else {
    out.bulkText('unknown');
    out.bulkText('spec'); out.array(0);
  }
  out.bulkText('find_keys');
  out.array(4);
  out.bulkText('type');
  if (s.fk === FK_RANGE) {
    out.bulkText('range');
    out.bulkText('spec'); out.array(6);
    out.bulkText('lastkey'); out.int(s.a);
    out.bulkText('keystep'); out.int(s.b);
    out.bulkText('limit'); out.int(s.c);
  } else if (s.fk === FK_KEYNUM) {
    out.bulkText('keynum');
    out.bulkText('spec'); out.array(6);
    out.bulkText('keynumidx'); out.int(s.a);
    out.bulkText('firstkey'); out.int(s.b);
    out.bulkText('keystep'); out.int(s.c);
  } else {
    out.bulkText('unknown');
    out.bulkText('spec'); out.array(0);
  }
}

export function keyFlagNames(flags: number): string[] {
  const out: string[] = [];
  for (const [bit, name] of KEY_FLAG_NAMES) if (flags & bit) out.push(name);
  return out;
}

/** CommandDef.keyMode bits. */
export const KEY_MODE = {
  /** Redis's doesCommandHaveKeys: a getkeys proc, or a spec for real keys (not channels). */
  HAS_KEYS: 1,
  /** The specs find the keys (some spec is a real key, none has variable flags). */
  SPECS: 2,
} as const;

/** The keyMode of a row (the registry stores it: no per-call scan of the specs). */
export function keyMode(def: CommandDef): number {
  let real = false;
  let variable = false;
  for (const s of def.keySpecs) {
    if (!(s.flags & KF.NOT_KEY)) real = true;
    if (s.flags & KF.VARIABLE_FLAGS) variable = true;
  }
  return (real || def.getKeys !== undefined ? KEY_MODE.HAS_KEYS : 0) | (real && !variable ? KEY_MODE.SPECS : 0);
}

export function commandHasKeys(def: CommandDef): boolean {
  return (def.keyMode & KEY_MODE.HAS_KEYS) !== 0;
}

/**
 * Keys found for one call: positions and key-spec flags. perf: one reusable list per user of
 * it (the engine is single-threaded), so checking a restricted user's keys allocates nothing.
 */
export class KeyList {
  pos = new Int32Array(8);
  flags = new Int32Array(8);
  count = 0;

  push(pos: number, flags: number): void {
    if (this.count === this.pos.length) {
      const p = new Int32Array(this.count * 2);
      p.set(this.pos);
      this.pos = p;
      const f = new Int32Array(this.count * 2);
      f.set(this.flags);
      this.flags = f;
    }
    this.pos[this.count] = pos;
    this.flags[this.count++] = flags;
  }
}

/** The keys of one call with their flags, as a new array (COMMAND GETKEYS / GETKEYSANDFLAGS). */
export function commandKeys(def: CommandDef, argv: Argv): KeyRef[] {
  const list = new KeyList();
  findKeys(def, argv, list);
  const out: KeyRef[] = [];
  for (let i = 0; i < list.count; i++) out.push({ pos: list.pos[i], flags: list.flags[i] });
  return out;
}

/**
 * The keys of one call into `out` (Redis 7.0 getKeysFromCommandWithSpecs with
 * GET_KEYSPEC_DEFAULT); none when the command has none or the arguments are malformed (the
 * command itself then answers the error).
 */
export function findKeys(def: CommandDef, argv: Argv, out: KeyList): void {
  out.count = 0;
  if (def.keyMode & KEY_MODE.SPECS && keysFromSpecs(def, argv, out)) return;
  out.count = 0;
  if (def.getKeys === undefined) return;
  for (const k of def.getKeys(argv)) out.push(k.pos, k.flags);
}

/** Redis's getKeysUsingKeySpecs; false when a spec is invalid or incomplete for these arguments. */
function keysFromSpecs(def: CommandDef, argv: Argv, out: KeyList): boolean {
  const argc = argv.count;
  const specs = def.keySpecs;
  for (let j = 0; j < specs.length; j++) {
    const s = specs[j];
    if (s.flags & KF.NOT_KEY) continue;
    let first = 0;
    if (s.bs === BS_INDEX) {
      first = s.index;
    } else if (s.bs === BS_KEYWORD) {
      const from = s.index > 0 ? s.index : argc + s.index;
      const to = s.index > 0 ? argc - 1 : 1;
      for (let i = from; i !== to; i = from <= to ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (argv.is(i, s.keyword)) {
          first = i + 1;
          break;
        }
      }
      if (first === 0) continue; // keyword absent: no keys from this spec
    } else {
      return false;
    }
    let last: number;
    let step: number;
    if (s.fk === FK_RANGE) {
      step = s.b;
      if (s.a >= 0) last = first + s.a;
      else if (s.c === 0) last = argc + s.a;
      else last = first + (Math.floor((argc - first) / s.c) + s.a);
    } else if (s.fk === FK_KEYNUM) {
      step = s.c;
      if (first + s.a >= argc) return false;
      // string2ll's failures and the numbers beyond argc are both invalid here.
      const n = argv.int(first + s.a);
      if (!(n >= 0 && n <= argc)) return false;
      first += s.b;
      last = first + n - 1;
    } else {
      return false;
    }
    if (last >= argc || last < first || first >= argc) return false;
    for (let i = first; i <= last; i += step) out.push(i, s.flags);
    if (s.flags & KF.INCOMPLETE) return false;
  }
  return true;
}

/**
 * Redis's genericGetKeys (the getkeys_proc of numkeys commands: ZUNION, EVAL, LMPOP...): numkeys
 * read with atoi at `countAt`, keys from `firstAt`, then the destination at `storeAt` (0: none).
 */
export function numkeysKeys(storeAt: number, countAt: number, firstAt: number): GetKeys {
  return (argv) => {
    if (countAt >= argv.count) return [];
    const n = atoi(argv, countAt);
    if (n < 1 || n > argv.count - firstAt) return [];
    const out: KeyRef[] = [];
    for (let i = 0; i < n; i++) out.push({ pos: firstAt + i, flags: 0 });
    if (storeAt > 0) out.push({ pos: storeAt, flags: 0 });
    return out;
  };
}

/** C's atoi on one argument: leading blanks, a sign, digits up to the first non-digit. */
function atoi(argv: Argv, i: number): number {
  const b = argv.buf;
  let p = argv.start[i];
  const e = argv.end[i];
  while (p < e && (b[p] === 32 || (b[p] >= 9 && b[p] <= 13))) p++;
  let neg = false;
  if (p < e && (b[p] === 43 || b[p] === 45)) neg = b[p++] === 45;
  let n = 0;
  while (p < e && b[p] >= 48 && b[p] <= 57 && n < 1e10) n = n * 10 + (b[p++] - 48);
  return neg ? -n : n;
}
