/**
 * The small languages of the QStash headers: durations ("10s", "1h30m", "500ms"), the
 * Upstash-Retry-Delay arithmetic expression (milliseconds, variable `retried`, functions pow,
 * sqrt, abs, exp, floor, ceil, round, min, max), Retry-After values, and the flow-control value
 * "parallelism=1, rate=10, period=1m". Everything is validated at publish time so that a bad
 * header is a 400, never a failure inside the delivery loop.
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "10s", "1h30m", "500ms", "2d"; a bare number counts as `bareUnit`. NaN when invalid. */
export function parseDuration(v: string, bareUnit = 1000): number {
  const s = v.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * bareUnit;
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(s)) return NaN;
  let total = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) total += Number(m[1]) * UNIT_MS[m[2]];
  return total;
}

type Node =
  | { k: 'num'; v: number }
  | { k: 'var' }
  | { k: 'neg'; a: Node }
  | { k: 'bin'; op: string; a: Node; b: Node }
  | { k: 'call'; f: string; args: Node[] };

const FUNCS: Record<string, [number, number, (...a: number[]) => number]> = {
  pow: [2, 2, Math.pow], sqrt: [1, 1, Math.sqrt], abs: [1, 1, Math.abs], exp: [1, 1, Math.exp],
  floor: [1, 1, Math.floor], ceil: [1, 1, Math.ceil], round: [1, 1, Math.round],
  min: [1, 64, Math.min], max: [1, 64, Math.max],
};

/** A compiled retry-delay expression: (retried) => milliseconds. Throws Error on bad syntax. */
export function compileRetryDelay(src: string): (retried: number) => number {
  const toks = src.match(/\s*(\d+(?:\.\d+)?|[A-Za-z_]+|[-+*/%^(),])/g);
  if (toks === null || toks.join('').replace(/\s+/g, '') !== src.replace(/\s+/g, '')) throw new Error(`invalid retry delay expression: ${src}`);
  const t = toks.map((x) => x.trim());
  let i = 0;
  const peek = () => t[i];
  const eat = (x: string) => { if (t[i] !== x) throw new Error(`invalid retry delay expression: ${src}`); i++; };
  const primary = (): Node => {
    const x = t[i++];
    if (x === undefined) throw new Error(`invalid retry delay expression: ${src}`);
    if (/^\d/.test(x)) return { k: 'num', v: Number(x) };
    if (x === '(') { const n = sum(); eat(')'); return n; }
    if (x === '-') return { k: 'neg', a: unary() };
    if (x === '+') return unary();
    if (x === 'retried') return { k: 'var' };
    const f = FUNCS[x];
    if (f === undefined) throw new Error(`invalid retry delay expression: unknown name ${x}`);
    eat('(');
    const args: Node[] = [sum()];
    while (peek() === ',') { i++; args.push(sum()); }
    eat(')');
    if (args.length < f[0] || args.length > f[1]) throw new Error(`invalid retry delay expression: wrong argument count for ${x}`);
    return { k: 'call', f: x, args };
  };
  const unary = (): Node => primary();
  const power = (): Node => {
    const a = unary();
    if (peek() === '^') { i++; return { k: 'bin', op: '^', a, b: power() }; }
    return a;
  };
  const product = (): Node => {
    let a = power();
    while (peek() === '*' || peek() === '/' || peek() === '%') { const op = t[i++]; a = { k: 'bin', op, a, b: power() }; }
    return a;
  };
  const sum = (): Node => {
    let a = product();
    while (peek() === '+' || peek() === '-') { const op = t[i++]; a = { k: 'bin', op, a, b: product() }; }
    return a;
  };
  const root = sum();
  if (i !== t.length) throw new Error(`invalid retry delay expression: ${src}`);
  const ev = (n: Node, r: number): number => {
    switch (n.k) {
      case 'num': return n.v;
      case 'var': return r;
      case 'neg': return -ev(n.a, r);
      case 'call': return FUNCS[n.f][2](...n.args.map((x) => ev(x, r)));
      case 'bin': {
        const a = ev(n.a, r);
        const b = ev(n.b, r);
        switch (n.op) {
          case '+': return a + b;
          case '-': return a - b;
          case '*': return a * b;
          case '/': return a / b;
          case '%': return a % b;
          default: return Math.pow(a, b);
        }
      }
    }
  };
  return (r) => {
    const v = ev(root, r);
    return Number.isFinite(v) && v > 0 ? Math.min(v, 86_400_000) : 0;
  };
}

/** QStash's default backoff: min(1 day, e^(2.5·n)) seconds, n = 1 for the first retry. */
export function defaultBackoff(retried: number): number {
  return Math.min(86_400_000, Math.round(Math.exp(2.5 * (retried + 1)) * 1000));
}

/** Retry-After: seconds, an HTTP date or "6m5s"; capped at one day. null when absent or bad. */
export function parseRetryAfter(v: string | null, now: number): number | null {
  if (v === null || v === '') return null;
  let ms = parseDuration(v);
  if (Number.isNaN(ms)) {
    const d = Date.parse(v);
    if (Number.isNaN(d)) return null;
    ms = Math.max(0, d - now);
  }
  return Math.min(ms, 86_400_000);
}

export interface FlowValue { parallelism?: number; rate?: number; period?: number }

/** "parallelism=1, rate=10, period=1m" (period in ms; a bare number is seconds). */
export function parseFlowValue(v: string): FlowValue {
  const out: FlowValue = {};
  for (const part of v.split(',')) {
    const p = part.trim();
    if (p === '') continue;
    const m = /^(parallelism|rate|period)\s*=\s*(\S+)$/.exec(p);
    if (m === null) throw new Error(`invalid Upstash-Flow-Control-Value: ${v}`);
    if (m[1] === 'period') {
      const ms = parseDuration(m[2]);
      if (!(ms > 0)) throw new Error(`invalid flow control period: ${m[2]}`);
      out.period = ms;
    } else {
      const n = Number(m[2]);
      if (!Number.isInteger(n) || n < 1) throw new Error(`invalid flow control ${m[1]}: ${m[2]}`);
      out[m[1] as 'parallelism' | 'rate'] = n;
    }
  }
  if (out.parallelism === undefined && out.rate === undefined) throw new Error('flow control needs parallelism or rate');
  return out;
}
