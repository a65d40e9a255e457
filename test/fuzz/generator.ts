/**
 * Argument generator of the command fuzzer: a seeded PRNG, pools of edge values, and calls
 * built from a command's argument grammar (COMMAND DOCS of a real redis-server, or of ours for
 * our own commands), then mutated: any position replaced by an edge value, options repeated,
 * arguments dropped, or a plain soup of the command's tokens, numbers, strings and keys.
 */
import type { Decoded } from './resp.js';

/** mulberry32: small, fast, good enough to spread edge values. */
export class Rng {
  private s: number;
  constructor(seed: number) { this.s = seed >>> 0; }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number { return Math.floor(this.next() * n); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(a: readonly T[]): T { return a[this.int(a.length)]; }
}

/** The seed of call `i` of a run: each call replays alone from (seed, i). */
export function callSeed(seed: number, i: number): number {
  let h = (seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

export const INT64_MAX = '9223372036854775807';
export const INT64_MIN = '-9223372036854775808';

export const NUMBERS: readonly string[] = [
  '0', '-1', '1', '2', '3', '-2', '10', '100', '-100', '1000000',
  '2147483647', '2147483648', '-2147483648', '-2147483649', '4294967295', '4294967296',
  '9007199254740991', '9007199254740992', '9007199254740993',
  '-9007199254740991', '-9007199254740992', '-9007199254740993',
  INT64_MAX, INT64_MIN, '9223372036854775808', '-9223372036854775809', '18446744073709551615',
  '99999999999999999999999999', '536870911', '536870912', '4611686018427387904', '-4611686018427387904',
  '1.5', '-1.5', '0.0', '-0', '1e308', '1e309', '-1e309', '1e-320', '0.1', '3.0000000000000001',
  'nan', 'NaN', '-nan', 'inf', '-inf', '+inf', 'Infinity', '-Infinity', 'infinity',
  '0x10', ' 1', '1 ', '+1', '01', '1e3', '', '-', '(1', '[1', '(-inf', '(+inf',
];

/** Integer edges: counts, ranks, offsets, LIMITs, numkeys (where sizes come from). */
export const INTEGERS: readonly string[] = [
  '0', '-1', '1', '2', '-2', '1000000', '-1000000', '2147483647', '2147483648', '-2147483648', '-2147483649',
  '4294967295', '4294967296', '-4294967296', '536870912', '9007199254740991', '9007199254740993', '-9007199254740993',
  '4611686018427387903', '4611686018427387904', '-4611686018427387903', '-4611686018427387904',
  INT64_MAX, INT64_MIN, '-9223372036854775807', '9223372036854775808', '-9223372036854775809',
];

const LONG = 'x'.repeat(70000);
const VERY_LONG = 'y'.repeat(1024 * 1024 + 1);

export const STRINGS: ReadonlyArray<string | Buffer> = [
  '', 'a', 'b', 'f1', 'v1', 'member', 'Palermo', '*', '?', '[', '[a', '(a', '-', '+', '\\', '[^', '[a-',
  '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b', '$', '.', '$..*', '$[*]', '..', '0-0', '0-1', '1-1', '1-0', '*-*',
  '18446744073709551615-18446744073709551615', '>', '0-18446744073709551615', '-1-1', '1-', 'g', 'c',
  '{', '"', '{"a":1}', '[1,2]', 'null', 'true', '__proto__', 'constructor',
  '\u0000', 'a\r\nb', '\u00e9', Buffer.from([0xff, 0xfe, 0x00, 0x80]), 'return 1',
  'return redis.call("get", KEYS[1])', "#!lua name=lib\nredis.register_function('f', function(k, a) return 1 end)",
  LONG, '['.repeat(10000) + ']'.repeat(10000),
];

/** Keys and the type each holds after reset (see populate). */
export const KEYS = ['s', 'n', 'l', 'L', 'h', 'H', 'S', 'T', 'z', 'Z', 'x', 'p', 'P', 'g', 'b', 'nokey', '{s}x'];

/** A damaged sparse HyperLogLog: XZERO runs that cover far more than the 16384 registers. */
const BAD_HLL = Buffer.concat([Buffer.from('HYLL\x01\x00\x00\x00', 'latin1'), Buffer.alloc(8), Buffer.from('7fff'.repeat(100), 'hex')]);

/** The keys holding each family's type (the family names of src/engine/commands). */
export const TYPED_KEYS: Readonly<Record<string, readonly string[]>> = {
  string: ['s', 'n', 'b'], bitmap: ['b', 's', 'n'], list: ['l', 'L'], hash: ['h', 'H'], set: ['S', 'T'],
  'sorted-set': ['z', 'Z'], geo: ['g'], stream: ['x'], hyperloglog: ['p', 'P'], json: ['j'],
  sort: ['l', 'S', 'z', 'L'], generic: KEYS,
};

/** Commands that (re)build the keyspace before every call; `ours` gets the JSON key too. */
export function populate(ours: boolean): Arg[][] {
  const many = (n: number, f: (i: number) => string[]) => Array.from({ length: n }, (_, i) => f(i)).flat();
  const cmds: Arg[][] = [
    ['FLUSHALL'],
    ['SET', 's', 'hello world'],
    ['SET', 'n', '42'],
    ['RPUSH', 'l', 'a', 'b', 'c', '1', '2', '3', 'a'],
    ['RPUSH', 'L', ...many(130, (i) => [`e${i}`])],
    ['HSET', 'h', 'f1', 'v1', 'f2', 'v2', 'n', '3', 'd', '1.5'],
    ['HSET', 'H', ...many(130, (i) => [`f${i}`, `v${i}`])],
    ['SADD', 'S', 'a', 'b', 'c', '1', '2'],
    ['SADD', 'T', ...many(130, (i) => [`m${i}`])],
    ['ZADD', 'z', '1', 'a', '2', 'b', '3', 'c', 'inf', 'd', '-inf', 'e'],
    ['ZADD', 'Z', ...many(130, (i) => [String(i), `m${i}`])],
    ['XADD', 'x', '1-1', 'f', 'v'],
    ['XADD', 'x', '2-1', 'f', 'v', 'g', 'w'],
    ['XGROUP', 'CREATE', 'x', 'g', '0'],
    ['XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', '1', 'STREAMS', 'x', '>'],
    ['PFADD', 'p', 'a', 'b', 'c'],
    ['SET', 'P', BAD_HLL],
    ['GEOADD', 'g', '13.361389', '38.115556', 'Palermo', '15.087269', '37.502669', 'Catania'],
    ['SETBIT', 'b', '7', '1'],
    ['SET', '{s}x', '1'],
  ];
  if (ours) cmds.push(['JSON.SET', 'j', '$', '{"a":[1,2,{"b":"c"}],"s":"str","n":1.5,"o":{"x":null,"t":true}}']);
  return cmds;
}

/** CONFIG SET may change only these (never ports, dir, passwords, memory limits, persistence). */
export const SAFE_CONFIG: Readonly<Record<string, string>> = {
  'hash-max-listpack-entries': '128',
  'hash-max-listpack-value': '64',
  'set-max-intset-entries': '512',
  'list-max-listpack-size': '-2',
  'stream-node-max-entries': '100',
  'stream-node-max-bytes': '4096',
  'hll-sparse-max-bytes': '3000',
  'busy-reply-threshold': '5000',
};

/** One argument of a command's grammar (the COMMAND DOCS shape). */
export interface ArgSpec {
  name: string;
  type: string;
  token?: string;
  optional: boolean;
  multiple: boolean;
  args: ArgSpec[];
}

export interface Doc {
  args: ArgSpec[];
  subcommands: Map<string, Doc>;
}

/** Flat [k, v, k, v] (RESP2) or a Map (RESP3) as a Map. */
function asMap(v: Decoded): Map<string, Decoded> {
  if (v instanceof Map) return v;
  const m = new Map<string, Decoded>();
  if (Array.isArray(v)) for (let i = 0; i + 1 < v.length; i += 2) m.set(String(v[i]), v[i + 1]);
  return m;
}

function parseArg(v: Decoded): ArgSpec {
  const m = asMap(v);
  const flags = (m.get('flags') as Decoded[] | undefined)?.map(String) ?? [];
  const token = m.get('token');
  return {
    name: String(m.get('name') ?? ''),
    type: String(m.get('type') ?? 'string'),
    token: token === undefined || token === null ? undefined : String(token),
    optional: flags.includes('optional'),
    multiple: flags.includes('multiple'),
    args: ((m.get('arguments') as Decoded[] | undefined) ?? []).map(parseArg),
  };
}

function parseDoc(v: Decoded): Doc {
  const m = asMap(v);
  const subs = new Map<string, Doc>();
  const sv = m.get('subcommands');
  if (sv !== undefined) for (const [k, d] of asMap(sv)) subs.set(k.toLowerCase(), parseDoc(d));
  return { args: ((m.get('arguments') as Decoded[] | undefined) ?? []).map(parseArg), subcommands: subs };
}

/** The reply of COMMAND DOCS as name (lower-case, "parent|sub" for subcommands) -> grammar. */
export function parseDocs(reply: Decoded): Map<string, Doc> {
  const out = new Map<string, Doc>();
  for (const [name, d] of asMap(reply)) {
    const doc = parseDoc(d);
    out.set(name.toLowerCase(), doc);
    for (const [sub, sd] of doc.subcommands) out.set(sub.includes('|') ? sub : `${name.toLowerCase()}|${sub}`, sd);
  }
  return out;
}

/** Every token of a grammar (the words a soup call mixes in). */
export function tokensOf(args: readonly ArgSpec[], out: Set<string> = new Set()): Set<string> {
  for (const a of args) {
    if (a.token) out.add(a.token);
    tokensOf(a.args, out);
  }
  return out;
}

export type Arg = string | Buffer;

export class Generator {
  constructor(readonly rng: Rng) {}

  number(): string {
    const r = this.rng;
    return r.chance(0.7) ? r.pick(NUMBERS) : String(r.int(8) - 2);
  }

  integer(): string {
    const r = this.rng;
    const x = r.next();
    return x < 0.7 ? r.pick(INTEGERS) : x < 0.85 ? r.pick(NUMBERS) : String(r.int(8) - 2);
  }

  string(): Arg {
    const r = this.rng;
    if (r.chance(0.01)) return VERY_LONG;
    return r.chance(0.8) ? r.pick(STRINGS) : r.pick(NUMBERS);
  }

  /** Keys of the row's own type come first (a call must reach past the type check). */
  key(typed: readonly string[]): string {
    const r = this.rng;
    if (typed.length > 0 && r.chance(0.6)) return r.pick(typed);
    return r.chance(0.9) ? r.pick(KEYS) : r.pick(['', '\u0000', 'nan', LONG.slice(0, 600)]);
  }

  /** Anything at all, biased to this command's own tokens. */
  any(tokens: readonly string[], typed: readonly string[]): Arg {
    const r = this.rng;
    const x = r.next();
    if (x < 0.3 && tokens.length > 0) return r.chance(0.8) ? r.pick(tokens) : r.pick(tokens).toLowerCase();
    if (x < 0.45) return this.number();
    if (x < 0.6) return this.integer();
    if (x < 0.8) return this.key(typed);
    return this.string();
  }

  /** Arguments from a grammar, every leaf a value from the pools. */
  fromGrammar(args: readonly ArgSpec[], out: Arg[], typed: readonly string[], depth = 0): void {
    for (const a of args) {
      if (a.optional && this.rng.chance(0.5)) continue;
      let reps = 1;
      if (a.multiple) reps = this.rng.chance(0.1) ? (this.rng.chance(0.5) ? 0 : 12) : 1 + this.rng.int(3);
      for (let i = 0; i < reps; i++) this.oneArg(a, out, typed, depth);
    }
  }

  private oneArg(a: ArgSpec, out: Arg[], typed: readonly string[], depth: number): void {
    if (a.token) out.push(a.token);
    switch (a.type) {
      case 'pure-token': return;
      case 'key': out.push(this.key(typed)); return;
      case 'integer': out.push(this.integer()); return;
      case 'double': case 'unix-time': out.push(this.number()); return;
      case 'oneof': if (a.args.length > 0 && depth < 8) this.fromGrammar([{ ...this.rng.pick(a.args), optional: false }], out, typed, depth + 1); return;
      case 'block': if (depth < 8) this.fromGrammar(a.args, out, typed, depth + 1); return;
      default: out.push(this.rng.chance(0.25) ? this.number() : this.string());
    }
  }

  /**
   * One call of a row: `head` is the command name (and subcommand), `doc` its grammar when
   * known, `arity` the table's. Mutations put edge values in every position over many calls.
   */
  call(head: readonly string[], doc: Doc | undefined, arity: number, typed: readonly string[]): Arg[] {
    const r = this.rng;
    const tokens = [...tokensOf(doc?.args ?? [])];
    let args: Arg[] = [];
    if (doc && r.chance(0.85)) {
      this.fromGrammar(doc.args, args, typed);
    } else {
      const min = Math.max(0, Math.abs(arity) - head.length);
      const n = arity > 0 && r.chance(0.7) ? min : min + r.int(6);
      for (let i = 0; i < n; i++) args.push(i === 0 && r.chance(0.7) ? this.key(typed) : this.any(tokens, typed));
    }
    const mutations = r.int(4);
    for (let m = 0; m < mutations; m++) {
      const x = r.next();
      if (x < 0.45 && args.length > 0) {
        args[r.int(args.length)] = this.any(tokens, typed);
      } else if (x < 0.65 && tokens.length > 0) {
        // Repeated option: a token (and a value) again, anywhere.
        const at = r.int(args.length + 1);
        args.splice(at, 0, r.pick(tokens), this.integer());
      } else if (x < 0.8 && args.length > 0) {
        args.splice(r.int(args.length), 1);
      } else if (x < 0.9) {
        args.push(this.any(tokens, typed));
      } else if (args.length > 1) {
        const i = r.int(args.length);
        args.splice(i, 0, args[i]);
      }
    }
    if (args.length > 64) args = args.slice(0, 64);
    return [...head, ...args];
  }
}
