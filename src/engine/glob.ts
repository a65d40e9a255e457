/**
 * Glob matching with Redis's stringmatchlen rules (KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG GET):
 * `*`, `?`, `[abc]`, `[^a-z]`, `\x` escapes; optional ASCII case folding. Like Redis, the
 * recursion for `*` is bounded so that a hostile pattern cannot take exponential time.
 */

const MAX_NESTING = 1000;

function lower(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

export function globMatch(pat: Uint8Array, str: Uint8Array, nocase = false): boolean {
  const skip = { longer: false };
  return match(pat, 0, pat.length, str, 0, str.length, nocase, skip, 0);
}

function match(
  p: Uint8Array, pi: number, pe: number, s: Uint8Array, si: number, se: number,
  nocase: boolean, skip: { longer: boolean }, nesting: number,
): boolean {
  if (nesting > MAX_NESTING) return false;
  while (pi < pe && si < se) {
    const pc = p[pi];
    switch (pc) {
      case 42: { // *
        while (pi + 1 < pe && p[pi + 1] === 42) pi++;
        if (pi + 1 === pe) return true;
        while (si < se) {
          if (match(p, pi + 1, pe, s, si, se, nocase, skip, nesting + 1)) return true;
          if (skip.longer) return false;
          si++;
        }
        skip.longer = true;
        return false;
      }
      case 63: // ?
        si++;
        break;
      case 91: { // [
        pi++;
        const not = p[pi] === 94; // ^
        if (not) pi++;
        let matched = false;
        for (;;) {
          if (pi < pe && p[pi] === 92 && pi + 1 < pe) {
            pi++;
            if (p[pi] === s[si]) matched = true;
          } else if (pi >= pe || p[pi] === 93) {
            break;
          } else if (pi + 2 < pe && p[pi + 1] === 45) {
            let start = p[pi];
            let end = p[pi + 2];
            let c = s[si];
            if (start > end) [start, end] = [end, start];
            if (nocase) {
              start = lower(start);
              end = lower(end);
              c = lower(c);
            }
            pi += 2;
            if (c >= start && c <= end) matched = true;
          } else if (nocase ? lower(p[pi]) === lower(s[si]) : p[pi] === s[si]) {
            matched = true;
          }
          pi++;
        }
        if (pi >= pe) pi = pe - 1; // unterminated class: Redis treats the end as ']'
        if (not) matched = !matched;
        if (!matched) return false;
        si++;
        break;
      }
      default: {
        if (pc === 92 && pi + 1 < pe) pi++; // backslash: the next char is literal
        const a = p[pi];
        const b = s[si];
        if (nocase ? lower(a) !== lower(b) : a !== b) return false;
        si++;
        break;
      }
    }
    pi++;
    if (si === se) {
      while (pi < pe && p[pi] === 42) pi++;
      break;
    }
  }
  return pi === pe && si === se;
}
