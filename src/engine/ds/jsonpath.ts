/**
 * JSONPath for JSON documents: RedisJSON 2's dialect, parsed and evaluated.
 *
 * Parsing mirrors RedisJSON's pest grammar rule for rule (implicit single-space skipping in
 * non-atomic rules, ordered choice, atomic rules), including pest's "attempt tracking", so a
 * syntax error reports the same position and the same "expected one of the following: ..."
 * list ("Error occurred on position N, ..."). The parse tree is then lowered to a token list.
 *
 * Evaluation follows RedisJSON's calculator (indexes, slices, unions, filters with ==, !=, <,
 * <=, >, >=, =~, &&, || and parentheses, @ and $ terms), with one documented exception that
 * Upstash makes: recursive descent ($..x) lists deeper matches before shallower ones, i.e. a
 * post-order walk (children's matches, then the node's own), where RedisJSON walks pre-order.
 *
 * Legacy paths (anything not starting with '$') are rewritten to JSONPath as RedisJSON does:
 * "." -> "$", ".a" -> "$.a", "a" -> "$.a".
 */
import { JFloat, type JObject, type JValue, type Seg } from './json.js';

// ---------------------------------------------------------------- path arguments

/** A path argument: the text the user gave, the JSONPath it means, and its syntax. */
export interface PathArg {
  readonly original: string;
  readonly fixed: string;
  readonly legacy: boolean;
}

export function pathArg(original: string): PathArg {
  if (original.startsWith('$')) return { original, fixed: original, legacy: false };
  const fixed = original === '.' ? '$' : original.startsWith('.') ? '$' + original : '$.' + original;
  return { original, fixed, legacy: true };
}

// ---------------------------------------------------------------- grammar (pest, by hand)

/** Rule identifiers in the grammar's declaration order (pest sorts expectations by it). */
const enum R {
  EOI, literal, string, string_escape, string_value, string_value_escape_1, string_value_escape_2,
  string_list, pos_number, number, decimal, numbers_list, numbers_range, right_range, all_range,
  left_range, full_range, from_current, from_root, select_term, op, ge, gt, le, lt, eq, ne, re,
  boolean, boolean_true, boolean_false, null, term, single_filter, filter_relation, and, or,
  inner_filter, filter, all, full_scan, bracket, element, first_element, root,
}

const RULE_NAMES: Record<number, string> = {
  [R.EOI]: 'EOI', [R.literal]: '<string>', [R.string_escape]: 'string_escape',
  [R.string_value]: 'string_value', [R.string_value_escape_1]: 'string_value_escape_1',
  [R.string_value_escape_2]: 'string_value_escape_2', [R.string_list]: "'<string>[,<string>,...]'",
  [R.pos_number]: 'pos_number', [R.number]: "'<number>'", [R.decimal]: 'decimal',
  [R.numbers_list]: "'<number>[,<number>,...]'", [R.numbers_range]: "['start:end:steps']",
  [R.right_range]: 'right_range', [R.all_range]: 'all_range', [R.left_range]: 'left_range',
  [R.full_range]: 'full_range', [R.from_current]: 'from_current', [R.from_root]: 'from_root',
  [R.ge]: 'ge', [R.gt]: 'gt', [R.le]: 'le', [R.lt]: 'lt', [R.eq]: 'eq', [R.ne]: 'ne', [R.re]: 're',
  [R.boolean_true]: 'boolean_true', [R.boolean_false]: 'boolean_false', [R.null]: 'null',
  [R.single_filter]: 'single_filter', [R.and]: 'and', [R.or]: 'or',
  [R.filter]: "'[?(filter_expression)]'", [R.all]: "'*'", [R.full_scan]: "'..'", [R.root]: 'root',
};

interface Pair {
  readonly rule: R;
  readonly start: number;
  readonly end: number;
  readonly children: Pair[];
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** literal = @{('a'..'z' | 'A'..'Z' | '0'..'9' | "-" | "_" | "`" | "~" | "+" | "#" | "%" | "$" | "^" | "/" | ":")+} */
const LITERAL = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || isDigit(c) || '-_`~+#%$^/:'.includes(String.fromCharCode(c))) LITERAL[c] = 1;
}

export class PathSyntaxError extends Error {}

class Peg {
  pos = 0;
  private atomic = false;
  private attemptPos = 0;
  private attempts: R[] = [];
  /** Children of the rule being matched (pairs, as pest's queue). */
  private kids: Pair[] = [];

  constructor(private readonly s: string) {}

  private attemptsAt(pos: number): number {
    return pos === this.attemptPos ? this.attempts.length : 0;
  }

  /** pest's ParserState::track, called when a rule fails. */
  private track(rule: R, pos: number, index: number, prev: number): void {
    if (this.atomic) return;
    const curr = this.attemptsAt(pos);
    // Nested rules that made no progress are replaced by this one, unless exactly one.
    if (curr > prev && curr - prev === 1) return;
    if (pos === this.attemptPos) this.attempts.length = index;
    if (pos > this.attemptPos) {
      this.attempts = [];
      this.attemptPos = pos;
    }
    if (pos === this.attemptPos) this.attempts.push(rule);
  }

  /** A named rule: produces a pair on success, is tracked on failure. */
  rule(r: R, atomic: boolean, f: () => boolean): boolean {
    const start = this.pos;
    const index = start === this.attemptPos ? this.attempts.length : 0;
    const prev = this.attemptsAt(start);
    const outer = this.kids;
    const wasAtomic = this.atomic;
    this.kids = [];
    if (atomic) this.atomic = true;
    const ok = f();
    this.atomic = wasAtomic;
    const kids = this.kids;
    this.kids = outer;
    if (ok) {
      outer.push({ rule: r, start, end: this.pos, children: kids });
      return true;
    }
    this.pos = start;
    this.track(r, start, index, prev);
    return false;
  }

  /** Implicit whitespace between the parts of a non-atomic rule (WHITESPACE = " "). */
  skip(): void {
    if (this.atomic) return;
    while (this.s.charCodeAt(this.pos) === 0x20) this.pos++;
  }

  lit(t: string): boolean {
    if (this.s.startsWith(t, this.pos)) {
      this.pos += t.length;
      return true;
    }
    return false;
  }

  /** `a ~ b ~ ...`: all or nothing, skipping whitespace between parts. */
  seq(...parts: Array<() => boolean>): boolean {
    const start = this.pos;
    const nk = this.kids.length;
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) this.skip();
      if (!parts[i]()) {
        this.pos = start;
        this.kids.length = nk;
        return false;
      }
    }
    return true;
  }

  /** `a | b | ...`: ordered choice. */
  alt(...parts: Array<() => boolean>): boolean {
    for (const p of parts) if (p()) return true;
    return false;
  }

  opt(f: () => boolean): true {
    f();
    return true;
  }

  /** `a*` in a non-atomic rule: (a ~ (skip ~ a)*)? */
  star(f: () => boolean): true {
    if (!f()) return true;
    for (;;) {
      const p = this.pos;
      const nk = this.kids.length;
      this.skip();
      if (!f()) {
        this.pos = p;
        this.kids.length = nk;
        return true;
      }
    }
  }

  // ------------------------------------------------------------ the grammar

  literal = (): boolean => this.rule(R.literal, true, () => {
    const p = this.pos;
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c >= 128 || LITERAL[c] !== 1) break;
      this.pos++;
    }
    return this.pos > p;
  });

  /** string_value* rules: atomic, may be empty. `esc` is the quote that may be escaped. */
  private stringBody(r: R, stop: string, esc: string | null): boolean {
    return this.rule(r, true, () => {
      for (;;) {
        const ch = this.s[this.pos];
        if (ch === undefined) return true;
        if (ch === '\\') {
          const n = this.s[this.pos + 1];
          if (esc !== null && (n === esc || n === '\\')) {
            this.rule(R.string_escape, true, () => this.lit('\\'));
            this.pos++;
            continue;
          }
          return true;
        }
        if (stop.includes(ch)) return true;
        this.pos++;
      }
    });
  }

  string = (): boolean => this.alt(
    () => this.seq(() => this.lit("'"), () => this.stringBody(R.string_value, '"\'', null), () => this.lit("'")),
    () => this.seq(() => this.lit('"'), () => this.stringBody(R.string_value, '"\'', null), () => this.lit('"')),
    () => this.seq(() => this.lit('"'), () => this.stringBody(R.string_value_escape_1, '"', '"'), () => this.lit('"')),
    () => this.seq(() => this.lit("'"), () => this.stringBody(R.string_value_escape_2, "'", "'"), () => this.lit("'")),
  );

  stringList = (): boolean => this.rule(R.string_list, false, () =>
    this.seq(this.string, () => this.star(() => this.seq(() => this.lit(','), this.string))));

  posNumber = (): boolean => this.rule(R.pos_number, true, () => {
    const c = this.s.charCodeAt(this.pos);
    if (!(c >= 0x31 && c <= 0x39)) return false;
    this.pos++;
    while (isDigit(this.s.charCodeAt(this.pos))) this.pos++;
    return true;
  });

  number = (): boolean => this.rule(R.number, true, () => {
    const p = this.pos;
    if (this.s.charCodeAt(this.pos) === 0x2d) this.pos++;
    const c = this.s.charCodeAt(this.pos);
    if (c >= 0x31 && c <= 0x39) {
      this.pos++;
      while (isDigit(this.s.charCodeAt(this.pos))) this.pos++;
      return true;
    }
    if (c === 0x30) {
      this.pos++;
      return true;
    }
    this.pos = p;
    return false;
  });

  decimal = (): boolean => this.rule(R.decimal, true, () => {
    if (!this.number()) return false;
    if (this.s.charCodeAt(this.pos) === 0x2e && isDigit(this.s.charCodeAt(this.pos + 1))) {
      this.pos += 2;
      while (isDigit(this.s.charCodeAt(this.pos))) this.pos++;
    }
    return true;
  });

  numbersList = (): boolean => this.rule(R.numbers_list, false, () =>
    this.seq(this.number, () => this.star(() => this.seq(() => this.lit(','), this.number))));

  /** ((":" ~ pos_number) | ":")? */
  private step = (): boolean => this.opt(() => this.alt(() => this.seq(() => this.lit(':'), this.posNumber), () => this.lit(':')));

  numbersRange = (): boolean => this.rule(R.numbers_range, false, () => this.alt(
    () => this.rule(R.full_range, false, () => this.seq(this.number, () => this.lit(':'), this.number, this.step)),
    () => this.rule(R.right_range, false, () => this.seq(() => this.lit(':'), this.number, this.step)),
    () => this.rule(R.all_range, false, () => this.seq(() => this.lit(':'), this.step)),
    () => this.rule(R.left_range, false, () => this.seq(this.number, () => this.lit(':'), this.step)),
  ));

  private atom = (r: R, t: string) => (): boolean => this.rule(r, true, () => this.lit(t));

  private op = (): boolean => this.alt(
    this.atom(R.ge, '>='), this.atom(R.gt, '>'), this.atom(R.le, '<='), this.atom(R.lt, '<'),
    this.atom(R.eq, '=='), this.atom(R.ne, '!='), this.atom(R.re, '=~'),
  );

  private term = (): boolean => this.alt(
    () => this.rule(R.from_current, false, () => this.seq(() => this.lit('@'), () => this.opt(this.root))),
    () => this.rule(R.from_root, false, () => this.seq(() => this.lit('$'), () => this.opt(this.root))),
    this.decimal,
    this.string,
    this.atom(R.boolean_true, 'true'),
    this.atom(R.boolean_false, 'false'),
    this.atom(R.null, 'null'),
  );

  private singleFilter = (): boolean => this.rule(R.single_filter, false, () => this.alt(
    () => this.seq(this.term, this.op, this.term),
    this.term,
  ));

  private innerFilter = (): boolean => this.alt(
    this.singleFilter,
    () => this.seq(() => this.lit('('), this.filter, () => this.lit(')')),
  );

  filter = (): boolean => this.rule(R.filter, false, () => this.seq(
    this.innerFilter,
    () => this.star(() => this.seq(
      () => this.alt(() => this.rule(R.and, false, () => this.lit('&&')), () => this.rule(R.or, false, () => this.lit('||'))),
      this.innerFilter,
    )),
  ));

  all = (): boolean => this.rule(R.all, false, () => this.lit('*'));

  private bracket = (): boolean => this.alt(
    this.numbersRange, this.numbersList, this.stringList, this.all,
    () => this.seq(() => this.lit('?'), this.filter),
  );

  private inBrackets = (): boolean => this.seq(() => this.lit('['), this.bracket, () => this.lit(']'));

  private element = (): boolean => this.alt(
    () => this.seq(() => this.lit('.'), this.literal),
    () => this.seq(() => this.rule(R.full_scan, false, () => this.lit('..')), () => this.alt(this.literal, this.all, this.inBrackets)),
    () => this.seq(() => this.lit('.'), this.all),
    () => this.seq(() => this.opt(() => this.lit('.')), this.inBrackets),
  );

  root = (): boolean => this.rule(R.root, false, () => this.seq(
    () => this.alt(this.element, this.literal, this.all),
    () => this.star(this.element),
  ));

  /** query = _{SOI ~ "$" ~ root? ~ EOI}: the root pair (or null for "$"), or a syntax error. */
  query(): Pair | null {
    const ok = this.seq(
      () => this.lit('$'),
      () => this.opt(this.root),
      () => this.rule(R.EOI, false, () => this.pos === this.s.length),
    );
    if (ok) return this.kids.find((p) => p.rule === R.root) ?? null;
    throw new PathSyntaxError(this.message());
  }

  private message(): string {
    const src = this.s;
    const pos = this.attemptPos;
    const rules = [...new Set(this.attempts)].sort((a, b) => a - b);
    const msg = rules.length === 0 ? 'parsing error' : `expected one of the following: ${rules.map((r) => RULE_NAMES[r] ?? String(r)).join(', ')}`;
    const final = pos === src.length ? `"${src} <<<<----", ${msg}.` : `"${src.slice(0, pos)} ---->>>> ${src.slice(pos)}", ${msg}.`;
    // pest positions are byte offsets into the UTF-8 text.
    return `Error occurred on position ${Buffer.byteLength(src.slice(0, pos), 'utf8')}, ${final}`;
  }
}

// ---------------------------------------------------------------- compiled form

type Tok =
  | { readonly k: 'key'; readonly name: string }
  | { readonly k: 'keys'; readonly names: readonly string[] }
  | { readonly k: 'all' }
  | { readonly k: 'scan' }
  | { readonly k: 'idx'; readonly list: readonly number[]; readonly text: readonly string[] }
  | { readonly k: 'range'; readonly start: number | null; readonly end: number | null; readonly step: number }
  | { readonly k: 'filter'; readonly expr: Expr };

type Term =
  | { readonly k: 'int'; readonly v: number | bigint }
  | { readonly k: 'float'; readonly v: number }
  | { readonly k: 'str'; readonly v: string }
  | { readonly k: 'bool'; readonly v: boolean }
  | { readonly k: 'null' }
  | { readonly k: 'cur' | 'root'; readonly toks: readonly Tok[] };

type Op = 'ge' | 'gt' | 'le' | 'lt' | 'eq' | 'ne' | 're';

type Expr =
  | { readonly k: 'test'; readonly a: Term; readonly op: Op | null; readonly b: Term | null }
  | { readonly k: 'or'; readonly parts: readonly Expr[] }
  | { readonly k: 'and'; readonly parts: readonly Expr[] };

export interface Query {
  readonly toks: readonly Tok[];
  /** RedisJSON's is_static(): only single keys and single indexes (at most one match). */
  readonly isStatic: boolean;
}

const OPS: Partial<Record<R, Op>> = { [R.ge]: 'ge', [R.gt]: 'gt', [R.le]: 'le', [R.lt]: 'lt', [R.eq]: 'eq', [R.ne]: 'ne', [R.re]: 're' };

/** A path index as i64 (numbers beyond i64 would panic RedisJSON; they clamp here). */
function parseIndex(t: string): number {
  const n = Number(t);
  return Number.isFinite(n) ? n : 0;
}

function unescape(raw: string, rule: R): string {
  if (rule === R.string_value) return raw;
  const q = rule === R.string_value_escape_1 ? '"' : "'";
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '\\' && (raw[i + 1] === q || raw[i + 1] === '\\')) {
      out += raw[i + 1];
      i++;
    } else {
      out += c;
    }
  }
  return out;
}

class Lower {
  constructor(private readonly s: string) {}

  text(p: Pair): string {
    return this.s.slice(p.start, p.end);
  }

  toks(root: Pair | null): Tok[] {
    const out: Tok[] = [];
    if (root === null) return out;
    for (const p of root.children) out.push(this.tok(p));
    return out;
  }

  private tok(p: Pair): Tok {
    switch (p.rule) {
      case R.literal: return { k: 'key', name: this.text(p) };
      case R.all: return { k: 'all' };
      case R.full_scan: return { k: 'scan' };
      case R.string_list: {
        const names = p.children.filter((c) => c.rule !== R.string_escape).map((c) => unescape(this.text(c), c.rule));
        return names.length === 1 ? { k: 'key', name: names[0] } : { k: 'keys', names };
      }
      case R.numbers_list: {
        const text = p.children.map((c) => this.text(c));
        return { k: 'idx', list: text.map(parseIndex), text };
      }
      case R.numbers_range: {
        const r = p.children[0];
        const nums = r.children.filter((c) => c.rule === R.number).map((c) => parseIndex(this.text(c)));
        const stepPair = r.children.find((c) => c.rule === R.pos_number);
        const step = stepPair ? parseIndex(this.text(stepPair)) : 1;
        switch (r.rule) {
          case R.full_range: return { k: 'range', start: nums[0], end: nums[1], step };
          case R.right_range: return { k: 'range', start: null, end: nums[0], step };
          case R.left_range: return { k: 'range', start: nums[0], end: null, step };
          default: return { k: 'range', start: null, end: null, step };
        }
      }
      case R.filter: return { k: 'filter', expr: this.filter(p) };
      default: throw new Error(`unexpected path rule ${p.rule}`);
    }
  }

  /** filter: operands joined by && / ||, && binding tighter (RedisJSON 2.x precedence). */
  private filter(p: Pair): Expr {
    const ors: Expr[] = [];
    let ands: Expr[] = [];
    for (const c of p.children) {
      if (c.rule === R.and) continue;
      if (c.rule === R.or) {
        ors.push(ands.length === 1 ? ands[0] : { k: 'and', parts: ands });
        ands = [];
        continue;
      }
      ands.push(c.rule === R.filter ? this.filter(c) : this.single(c));
    }
    ors.push(ands.length === 1 ? ands[0] : { k: 'and', parts: ands });
    return ors.length === 1 ? ors[0] : { k: 'or', parts: ors };
  }

  private single(p: Pair): Expr {
    const terms = p.children.filter((c) => OPS[c.rule] === undefined && c.rule !== R.string_escape);
    const opPair = p.children.find((c) => OPS[c.rule] !== undefined);
    return { k: 'test', a: this.term(terms[0]), op: opPair ? OPS[opPair.rule]! : null, b: terms.length > 1 ? this.term(terms[1]) : null };
  }

  private term(p: Pair): Term {
    switch (p.rule) {
      case R.decimal: {
        const t = this.text(p);
        // i64 when it parses as one, else f64 (RedisJSON's evaluate_single_term).
        if (!t.includes('.')) {
          const b = BigInt(t);
          if (b >= -(2n ** 63n) && b < 2n ** 63n) return { k: 'int', v: Number.isSafeInteger(Number(t)) ? Number(t) : b };
        }
        return { k: 'float', v: Number(t) };
      }
      case R.boolean_true: return { k: 'bool', v: true };
      case R.boolean_false: return { k: 'bool', v: false };
      case R.null: return { k: 'null' };
      case R.from_current:
      case R.from_root: {
        const root = p.children.find((c) => c.rule === R.root) ?? null;
        return { k: p.rule === R.from_current ? 'cur' : 'root', toks: this.toks(root) };
      }
      default: return { k: 'str', v: unescape(this.text(p), p.rule) };
    }
  }
}

const CACHE = new Map<string, Query>();
const CACHE_MAX = 512;

/** Compile a JSONPath ("$..."); throws PathSyntaxError with RedisJSON's message. Cached. */
export function compile(path: string): Query {
  const hit = CACHE.get(path);
  if (hit !== undefined) return hit;
  const peg = new Peg(path);
  const root = peg.query();
  const toks = new Lower(path).toks(root);
  const isStatic = toks.every((t) => t.k === 'key' || (t.k === 'idx' && t.list.length === 1));
  const q: Query = { toks, isStatic };
  if (CACHE.size >= CACHE_MAX) CACHE.delete(CACHE.keys().next().value!);
  CACHE.set(path, q);
  return q;
}

/** The query without its last step, and that step (for JSON.SET's "add a member" case). */
export function splitLast(q: Query): { parent: Query; last: { key: string } | { index: string } } | null {
  const n = q.toks.length;
  if (n === 0) return null;
  const t = q.toks[n - 1];
  const parent: Query = { toks: q.toks.slice(0, n - 1), isStatic: q.isStatic };
  if (t.k === 'key') return { parent, last: { key: t.name } };
  if (t.k === 'idx') return { parent, last: { index: t.text[0] } };
  return null;
}

// ---------------------------------------------------------------- evaluation

/** A match: the value and (when asked for) its concrete location from the root. */
export interface Match {
  readonly value: JValue;
  readonly path: Seg[] | null;
}

interface Trail {
  readonly up: Trail | null;
  readonly seg: Seg;
}

function materialize(t: Trail | null): Seg[] {
  const out: Seg[] = [];
  for (let x = t; x !== null; x = x.up) out.push(x.seg);
  return out.reverse();
}

class Calc {
  readonly out: Match[] = [];
  constructor(
    private readonly toks: readonly Tok[],
    private readonly root: JValue,
    private readonly withPaths: boolean,
  ) {}

  private child(t: Trail | null, seg: Seg): Trail | null {
    return this.withPaths ? { up: t, seg } : null;
  }

  run(i: number, v: JValue, t: Trail | null): void {
    if (i === this.toks.length) {
      this.out.push({ value: v, path: this.withPaths ? materialize(t) : null });
      return;
    }
    const tok = this.toks[i];
    switch (tok.k) {
      case 'key':
        if (v instanceof Map) {
          const x = v.get(tok.name);
          if (x !== undefined) this.run(i + 1, x, this.child(t, tok.name));
        }
        return;
      case 'keys':
        if (v instanceof Map) {
          for (const name of tok.names) {
            const x = v.get(name);
            if (x !== undefined) this.run(i + 1, x, this.child(t, name));
          }
        }
        return;
      case 'all':
        this.each(v, (x, seg) => this.run(i + 1, x, this.child(t, seg)));
        return;
      case 'scan':
        this.descend(i + 1, v, t);
        return;
      case 'idx':
        if (Array.isArray(v)) {
          for (const n of tok.list) {
            const k = absIndex(n, v.length);
            if (k < v.length) this.run(i + 1, v[k], this.child(t, k));
          }
        }
        return;
      case 'range':
        if (Array.isArray(v)) {
          const n = v.length;
          const start = tok.start === null ? 0 : absIndex(tok.start, n);
          const end = tok.end === null ? n : absIndex(tok.end, n);
          for (let k = start; k < end; k += tok.step) this.run(i + 1, v[k], this.child(t, k));
        }
        return;
      case 'filter':
        if (Array.isArray(v) || v instanceof Map) {
          // Filters iterate array elements and object values (Goessner's engines do the same).
          this.each(v, (x, seg) => {
            if (this.test(tok.expr, x)) this.run(i + 1, x, this.child(t, seg));
          });
        } else if (this.test(tok.expr, v)) {
          this.run(i + 1, v, t);
        }
        return;
    }
  }

  private each(v: JValue, f: (x: JValue, seg: Seg) => void): void {
    if (Array.isArray(v)) {
      for (let k = 0; k < v.length; k++) f(v[k], k);
    } else if (v instanceof Map) {
      for (const [k, x] of v) f(x, k);
    }
  }

  /**
   * `..`: the rest of the path applied to the node and to every descendant. Upstash order:
   * post-order (each child's subtree first, then the node itself); RedisJSON is pre-order.
   */
  private descend(i: number, v: JValue, t: Trail | null): void {
    this.each(v, (x, seg) => this.descend(i, x, this.child(t, seg)));
    this.run(i, v, t);
  }

  // ------------------------------------------------------------ filters

  private test(e: Expr, cur: JValue): boolean {
    switch (e.k) {
      case 'or':
        for (const p of e.parts) if (this.test(p, cur)) return true;
        return false;
      case 'and':
        for (const p of e.parts) if (!this.test(p, cur)) return false;
        return true;
      case 'test': {
        const a = this.term(e.a, cur);
        if (e.op === null) return a !== INVALID;
        const b = this.term(e.b!, cur);
        return compareOp(e.op, a, b);
      }
    }
  }

  private term(t: Term, cur: JValue): TermValue {
    switch (t.k) {
      case 'cur':
      case 'root': {
        const base = t.k === 'cur' ? cur : this.root;
        if (t.toks.length === 0) return { k: 'val', v: base };
        const sub = new Calc(t.toks, this.root, false);
        sub.run(0, base, null);
        return sub.out.length === 1 ? { k: 'val', v: sub.out[0].value } : INVALID;
      }
      case 'int': return { k: 'int', v: t.v };
      case 'float': return { k: 'float', v: t.v };
      case 'str': return { k: 'str', v: t.v };
      case 'bool': return { k: 'bool', v: t.v };
      case 'null': return NULL_TERM;
    }
  }
}

/** RedisJSON's calc_abs_index: negative counts from the end (clamped at 0), positive clamps at n. */
function absIndex(i: number, n: number): number {
  return i >= 0 ? Math.min(i, n) : Math.max(i + n, 0);
}

type TermValue =
  | { readonly k: 'int'; readonly v: number | bigint }
  | { readonly k: 'float'; readonly v: number }
  | { readonly k: 'str'; readonly v: string }
  | { readonly k: 'bool'; readonly v: boolean }
  | { readonly k: 'null' }
  | { readonly k: 'val'; readonly v: JValue }
  | { readonly k: 'invalid' };

const INVALID: TermValue = { k: 'invalid' };
const NULL_TERM: TermValue = { k: 'null' };

/** A document value as a comparable term; containers stay opaque ('val'). */
function scalarTerm(v: JValue): TermValue {
  if (v === null) return NULL_TERM;
  switch (typeof v) {
    case 'number':
    case 'bigint': return { k: 'int', v };
    case 'string': return { k: 'str', v };
    case 'boolean': return { k: 'bool', v };
  }
  if (v instanceof JFloat) return { k: 'float', v: v.v };
  return { k: 'val', v };
}

/** Rust's str ordering is byte-wise UTF-8, i.e. code point order (not UTF-16 units). */
function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs === ys) return x < y ? -1 : 1;
    // A surrogate (astral code point) sorts after any BMP code point.
    return xs ? 1 : -1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : a === b ? 0 : NaN;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** partial_cmp of two terms: a number, or NaN when they are not comparable. */
function partialCmp(a: TermValue, b: TermValue): number {
  if (a.k === 'val') {
    const s = scalarTerm(a.v);
    return s.k === 'val' ? NaN : partialCmp(s, b);
  }
  if (b.k === 'val') {
    const s = scalarTerm(b.v);
    return s.k === 'val' ? NaN : partialCmp(a, s);
  }
  switch (a.k) {
    case 'int':
      if (b.k === 'int') return compareNumbers(a.v, b.v);
      if (b.k === 'float') return compareNumbers(Number(a.v), b.v);
      return NaN;
    case 'float':
      if (b.k === 'float') return compareNumbers(a.v, b.v);
      if (b.k === 'int') return compareNumbers(a.v, Number(b.v));
      return NaN;
    case 'str':
      return b.k === 'str' ? compareStrings(a.v, b.v) : NaN;
    case 'bool':
      return b.k === 'bool' ? Number(a.v) - Number(b.v) : NaN;
    case 'null':
      return b.k === 'null' ? 0 : NaN;
    default:
      return NaN;
  }
}

/** Equality of two document values (IValue ==): numbers by value, objects as key sets. */
function valueEqual(a: JValue, b: JValue): boolean {
  const sa = scalarTerm(a);
  const sb = scalarTerm(b);
  if (sa.k !== 'val' || sb.k !== 'val') {
    if (sa.k === 'val' || sb.k === 'val') return false;
    return partialCmp(sa, sb) === 0;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valueEqual(a[i], b[i])) return false;
    return true;
  }
  if (!(a instanceof Map) || !(b instanceof Map) || a.size !== b.size) return false;
  for (const [k, x] of a as JObject) {
    const y = (b as JObject).get(k);
    if (y === undefined || !valueEqual(x, y)) return false;
  }
  return true;
}

function compareOp(op: Op, a: TermValue, b: TermValue): boolean {
  switch (op) {
    case 'eq': return isEq(a, b);
    case 'ne': return !isEq(a, b);
    case 're': return regexMatch(a, b);
    default: {
      const c = partialCmp(a, b);
      if (Number.isNaN(c)) return false;
      return op === 'gt' ? c > 0 : op === 'ge' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0;
    }
  }
}

function isEq(a: TermValue, b: TermValue): boolean {
  if (a.k === 'val' && b.k === 'val') return valueEqual(a.v, b.v);
  return partialCmp(a, b) === 0;
}

// ---------------------------------------------------------------- regular expressions

const REGEX_CACHE = new Map<string, RegExp | null>();

/**
 * A Rust `regex` pattern as a JS RegExp (null when it does not compile: no match). Leading
 * inline flags "(?i)", "(?s)", "(?m)" become RegExp flags; the match is unanchored.
 */
function toRegExp(pattern: string): RegExp | null {
  const hit = REGEX_CACHE.get(pattern);
  if (hit !== undefined) return hit;
  let flags = '';
  let src = pattern;
  const m = /^\(\?([imsxU]+)\)/.exec(src);
  if (m !== null) {
    src = src.slice(m[0].length);
    for (const f of m[1]) if ('ims'.includes(f) && !flags.includes(f)) flags += f;
  }
  let re: RegExp | null = null;
  try {
    re = new RegExp(src, flags + 'u');
  } catch {
    try {
      re = new RegExp(src, flags);
    } catch {
      re = null;
    }
  }
  if (REGEX_CACHE.size >= 256) REGEX_CACHE.clear();
  REGEX_CACHE.set(pattern, re);
  return re;
}

/** `=~`: the left side must be a string value; the pattern a string literal or string value. */
function regexMatch(a: TermValue, b: TermValue): boolean {
  if (a.k !== 'val' || typeof a.v !== 'string') return false;
  let pattern: string;
  if (b.k === 'str') pattern = b.v;
  else if (b.k === 'val' && typeof b.v === 'string') pattern = b.v;
  else return false;
  const re = toRegExp(pattern);
  return re !== null && re.test(a.v);
}

// ---------------------------------------------------------------- entry points

/** Values matched by `q` in `root`, in match order. */
export function select(q: Query, root: JValue): JValue[] {
  const c = new Calc(q.toks, root, false);
  c.run(0, root, null);
  return c.out.map((m) => m.value);
}

/** Values and their concrete locations (for commands that modify the document). */
export function selectPaths(q: Query, root: JValue): Match[] {
  const c = new Calc(q.toks, root, true);
  c.run(0, root, null);
  return c.out;
}
