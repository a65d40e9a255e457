/**
 * Text analysis for SEARCH.* TEXT fields: the tokenizer of src/search/text.ts (lower-cased,
 * accent-folded words), an English suffix stemmer, and the edit distances of $fuzzy and smart
 * matching. Documents and queries go through the same functions, so a query term meets the
 * indexed term whatever the stemmer does to both.
 */
import { tokenize, boundedDistance } from '../../search/text.js';

export { tokenize, boundedDistance };

/** Tokens longer than this are cut (bounded work per term in fuzzy and regex matching). */
export const MAX_TERM = 64;

const VOWEL = /[aeiouy]/;

/**
 * A light English stemmer (plural and -ed/-ing/-ly endings, Porter's step 1 in spirit): enough
 * for "headphones" to meet "headphone" and "running" to meet "run". Not Porter's full algorithm.
 */
export function stem(w: string): string {
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ies') && w.length > 4) return w.slice(0, -3) + 'y';
  if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  for (const suf of ['ing', 'ed']) {
    if (w.endsWith(suf) && w.length - suf.length >= 3) {
      const base = w.slice(0, -suf.length);
      if (!VOWEL.test(base)) break;
      const n = base.length;
      // running -> run, stopped -> stop (a doubled final consonant other than l, s, z).
      if (n >= 2 && base[n - 1] === base[n - 2] && !'lsz'.includes(base[n - 1]) && !VOWEL.test(base[n - 1])) return base.slice(0, -1);
      return base;
    }
  }
  if (w.endsWith('ly') && w.length > 5) return w.slice(0, -2);
  return w;
}

/** The terms of a TEXT value, in order (positions are indexes into the result). */
export function analyze(text: string, noTokenize: boolean, noStem: boolean): string[] {
  if (noTokenize) {
    const t = text.toLowerCase();
    return t.length === 0 ? [] : [t.length > 256 ? t.slice(0, 256) : t];
  }
  const toks = asciiWords(text) ?? tokenize(text);
  for (let i = 0; i < toks.length; i++) {
    let t = toks[i];
    if (t.length > MAX_TERM) t = t.slice(0, MAX_TERM);
    toks[i] = noStem ? t : stemCached(t);
  }
  return toks;
}

/**
 * tokenize() for ASCII text, without Unicode normalization and regexes (the indexing hot path):
 * lower-cased runs of letters and digits, which is what tokenize yields for ASCII; null when the
 * text has any other character.
 */
function asciiWords(text: string): string[] | null {
  const out: string[] = [];
  let start = -1;
  let lower = true;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    if (c >= 0x80) return null;
    const alnum = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
    if (alnum) {
      if (start < 0) { start = i; lower = true; }
      if (c <= 90 && c >= 65) lower = false;
    } else if (start >= 0) {
      const w = text.slice(start, i);
      out.push(lower ? w : w.toLowerCase());
      start = -1;
    }
  }
  return out;
}

/** Stems of recent words: vocabularies are small next to the text, so most words repeat. */
const STEMS = new Map<string, string>();
const MAX_STEMS = 65_536;

function stemCached(w: string): string {
  let s = STEMS.get(w);
  if (s === undefined) {
    s = stem(w);
    if (STEMS.size >= MAX_STEMS) STEMS.clear();
    STEMS.set(w, s);
  }
  return s;
}

/**
 * Edit distance with adjacent transpositions counted as one edit (optimal string alignment),
 * if it is at most `max`; else max + 1. Early exit when a whole row exceeds max.
 */
export function osaDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let pp = new Array<number>(n + 1).fill(0);
  let prev = new Array<number>(n + 1);
  let cur = new Array<number>(n + 1);
  for (let j = 0; j <= n; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, pp[j - 2] + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = pp; pp = prev; prev = cur; cur = t;
  }
  return prev[n];
}

/** Distance of `q` to `t` with or without transpositions as one edit. */
export function editDistance(q: string, t: string, max: number, transpositionOne: boolean): number {
  return transpositionOne ? osaDistance(q, t, max) : boundedDistance(q, t, max);
}

/** True if some prefix of `t` is within `max` edits of `q` (fuzzy prefix: "tabeltopping" for "tabletop"). */
export function fuzzyPrefix(q: string, t: string, max: number, transpositionOne: boolean): boolean {
  const lo = Math.max(0, q.length - max);
  const hi = Math.min(t.length, q.length + max);
  for (let n = lo; n <= hi; n++) if (editDistance(q, t.slice(0, n), max, transpositionOne) <= max) return true;
  return false;
}
