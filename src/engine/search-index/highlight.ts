/**
 * HIGHLIGHT FIELDS n field... [TAGS pre post]: the words of a TEXT field whose indexed term a
 * query condition matched are wrapped in tags (default <em></em>) in the returned content.
 */
import type { Argv } from '../../resp/argv.js';
import { analyze } from './analyze.js';
import type { SearchIndex } from './index.js';
import { QueryError } from './query.js';

export interface Highlight { fields: number[]; pre: string; post: string }

/** Parse from argv[i] (the word after HIGHLIGHT); returns the options and the next index. */
export function parseHighlight(argv: Argv, i: number, idx: SearchIndex): [Highlight, number] {
  if (i >= argv.count || !argv.is(i, 'FIELDS')) throw new QueryError('ERR syntax error: HIGHLIGHT needs FIELDS <count> <field>...');
  const n = i + 1 < argv.count ? argv.int(i + 1) : NaN;
  if (!(n >= 1) || i + 1 + n >= argv.count) throw new QueryError('ERR syntax error: HIGHLIGHT FIELDS count does not match the fields given');
  const h: Highlight = { fields: [], pre: '<em>', post: '</em>' };
  for (let k = 0; k < n; k++) {
    const name = argv.str(i + 2 + k);
    const fi = idx.byName.get(name);
    if (fi === undefined) throw new QueryError(`ERR Unknown field: ${name}`);
    if (idx.def.fields[fi].type !== 'TEXT') throw new QueryError(`ERR HIGHLIGHT field '${name}' is not a TEXT field`);
    h.fields.push(fi);
  }
  i += 2 + n;
  if (i < argv.count && argv.is(i, 'TAGS')) {
    if (i + 2 >= argv.count) throw new QueryError('ERR syntax error: TAGS needs a pre tag and a post tag');
    h.pre = argv.str(i + 1);
    h.post = argv.str(i + 2);
    i += 3;
  }
  return [h, i];
}

const WORD = /[\p{L}\p{N}]+/gu;

/** `text` with the words whose term is in `terms` wrapped in tags. */
export function mark(text: string, terms: Set<string>, noTokenize: boolean, noStem: boolean, pre: string, post: string): string {
  if (terms.size === 0) return text;
  if (noTokenize) return terms.has(analyze(text, true, true)[0] ?? '') ? pre + text + post : text;
  return text.replace(WORD, (w) => (terms.has(analyze(w, false, noStem)[0] ?? '') ? pre + w + post : w));
}
