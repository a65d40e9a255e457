/**
 * SCOREFUNC: numeric FAST fields folded into the relevance score.
 *   SCOREFUNC [COMBINEMODE MULTIPLY|SUM] [SCOREMODE MULTIPLY|SUM|REPLACE]
 *             ([SCOREMODE m] FIELDVALUE field [MODIFIER m] [FACTOR x] [MISSING v])...
 * Each field gives modifier(factor * value) (a document without the field uses MISSING, or is
 * left out of that field's part); the field parts combine by COMBINEMODE (default multiply) and
 * the result combines with the relevance score by SCOREMODE (default multiply).
 */
import type { Argv } from '../../resp/argv.js';
import type { DocRec, SearchIndex } from './index.js';
import { QueryError } from './query.js';

const MODIFIERS: Record<string, (x: number) => number> = {
  NONE: (x) => x,
  LOG: Math.log10,
  LOG1P: (x) => Math.log10(x + 1),
  LOG2P: (x) => Math.log10(x + 2),
  LN: Math.log,
  LN1P: Math.log1p,
  LN2P: (x) => Math.log(x + 2),
  SQUARE: (x) => x * x,
  SQRT: Math.sqrt,
  RECIPROCAL: (x) => 1 / x,
};
const MODES = ['MULTIPLY', 'SUM', 'REPLACE'];
const KEYWORDS = ['COMBINEMODE', 'SCOREMODE', 'FIELDVALUE', 'MODIFIER', 'FACTOR', 'MISSING'];

interface FieldFn { field: number; modifier: (x: number) => number; factor: number; missing: number | null }

export interface ScoreFunc { combine: string; mode: string; fields: FieldFn[] }

/** Parse from argv[i] (the word after SCOREFUNC); returns the function and the next index. */
export function parseScoreFunc(argv: Argv, i: number, idx: SearchIndex): [ScoreFunc, number] {
  const sf: ScoreFunc = { combine: 'MULTIPLY', mode: 'MULTIPLY', fields: [] };
  const word = (j: number, what: string) => {
    if (j >= argv.count) throw new QueryError(`ERR syntax error: ${what} needs a value`);
    return argv.str(j).toUpperCase();
  };
  let cur: FieldFn | null = null;
  while (i < argv.count && KEYWORDS.includes(argv.str(i).toUpperCase())) {
    const kw = argv.str(i).toUpperCase();
    if (kw === 'COMBINEMODE') {
      const m = word(i + 1, kw);
      if (m !== 'MULTIPLY' && m !== 'SUM') throw new QueryError(`ERR invalid COMBINEMODE '${argv.str(i + 1)}'`);
      sf.combine = m;
    } else if (kw === 'SCOREMODE') {
      const m = word(i + 1, kw);
      if (!MODES.includes(m)) throw new QueryError(`ERR invalid SCOREMODE '${argv.str(i + 1)}'`);
      sf.mode = m;
    } else if (kw === 'FIELDVALUE') {
      if (i + 1 >= argv.count) throw new QueryError('ERR syntax error: FIELDVALUE needs a field');
      const name = argv.str(i + 1);
      const fi = idx.byName.get(name);
      if (fi === undefined) throw new QueryError(`ERR Unknown field: ${name}`);
      const f = idx.def.fields[fi];
      if (!f.fast || !['U64', 'I64', 'F64', 'DATE'].includes(f.type)) throw new QueryError(`ERR SCOREFUNC field '${name}' must be a FAST numeric or date field`);
      cur = { field: fi, modifier: MODIFIERS.NONE, factor: 1, missing: null };
      sf.fields.push(cur);
      if (sf.fields.length > 64) throw new QueryError('ERR too many SCOREFUNC fields');
    } else {
      if (cur === null) throw new QueryError(`ERR syntax error: ${kw} before FIELDVALUE`);
      if (kw === 'MODIFIER') {
        const m = MODIFIERS[word(i + 1, kw)];
        if (m === undefined) throw new QueryError(`ERR invalid MODIFIER '${argv.str(i + 1)}'`);
        cur.modifier = m;
      } else {
        word(i + 1, kw);
        const x = argv.float(i + 1);
        if (!Number.isFinite(x)) throw new QueryError(`ERR ${kw} must be a number`);
        if (kw === 'FACTOR') cur.factor = x;
        else cur.missing = x;
      }
    }
    i += 2;
  }
  if (sf.fields.length === 0) throw new QueryError('ERR SCOREFUNC needs at least one FIELDVALUE');
  return [sf, i];
}

/** The final score of a document with relevance `score`. */
export function applyScoreFunc(sf: ScoreFunc, rec: DocRec, score: number): number {
  let fn: number | null = null;
  for (const f of sf.fields) {
    const v = rec.vals[f.field]?.[0];
    const x = typeof v === 'number' ? v : f.missing;
    if (x === null) continue;
    let y = f.modifier(f.factor * x);
    if (!Number.isFinite(y)) y = 0;
    fn = fn === null ? y : sf.combine === 'SUM' ? fn + y : fn * y;
  }
  if (fn === null) return score;
  return sf.mode === 'REPLACE' ? fn : sf.mode === 'SUM' ? score + fn : score * fn;
}
