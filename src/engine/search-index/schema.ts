/**
 * An index definition (SEARCH.CREATE's arguments) as data: parsed, validated, compared
 * (EXISTSOK), described (SEARCH.DESCRIBE) and kept on disk as JSON.
 */
import type { Argv } from '../../resp/argv.js';

export const FIELD_TYPES = ['TEXT', 'U64', 'I64', 'F64', 'BOOL', 'DATE', 'KEYWORD', 'FACET'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const DATA_TYPES = ['JSON', 'HASH', 'STRING', 'STREAM'] as const;
export type DataType = (typeof DATA_TYPES)[number];

/** Languages of the reference; stemming is applied for English only (see analyze.ts). */
export const LANGUAGES = [
  'english', 'arabic', 'danish', 'dutch', 'finnish', 'french', 'german', 'greek', 'hungarian',
  'italian', 'norwegian', 'portuguese', 'romanian', 'russian', 'spanish', 'swedish', 'tamil', 'turkish',
];

export interface FieldDef {
  /** The field's name in queries: a dotted path for nested JSON fields. */
  readonly name: string;
  readonly type: FieldType;
  readonly fast: boolean;
  readonly noStem: boolean;
  readonly noTokenize: boolean;
  /** The document path the value is read from (FROM), else the name. */
  readonly from: string | null;
}

export interface IndexDef {
  readonly name: string;
  readonly on: DataType;
  /** The key prefixes; ON STREAM: the one stream key the index is bound to. */
  readonly prefixes: readonly string[];
  readonly language: string;
  readonly fields: readonly FieldDef[];
  /** The database the index covers (the creating client's). */
  readonly db: number;
}

export interface CreateOptions {
  readonly def: IndexDef;
  readonly skipInitialScan: boolean;
  readonly existsOk: boolean;
}

/** Limits on what one CREATE may ask for (untrusted input). */
export const MAX_FIELDS = 512;
export const MAX_PREFIXES = 256;
export const MAX_NAME = 1024;

export class SchemaError extends Error {}

const NUMERIC = new Set<FieldType>(['U64', 'I64', 'F64', 'DATE', 'BOOL', 'KEYWORD']);

/** SEARCH.CREATE name [options in any order: ON JSON|HASH|STRING, or ON STREAM key; PREFIX...] SCHEMA field type [FAST|NOSTEM|NOTOKENIZE|FROM src]... */
export function parseCreate(argv: Argv, db: number): CreateOptions {
  const name = argv.key(1);
  if (name.length === 0 || name.length > MAX_NAME) throw new SchemaError('ERR invalid index name');
  let on: DataType | null = null;
  let prefixes: string[] | null = null;
  let language = 'english';
  let skipInitialScan = false;
  let existsOk = false;
  let stream: string | null = null;
  let i = 2;
  for (; i < argv.count; i++) {
    if (argv.is(i, 'SCHEMA')) break;
    if (argv.is(i, 'ON')) {
      if (i + 1 >= argv.count) throw new SchemaError('ERR syntax error: ON needs a data type');
      const t = argv.str(++i).toUpperCase();
      if (!(DATA_TYPES as readonly string[]).includes(t)) throw new SchemaError(`ERR unsupported data type '${argv.str(i)}', expected JSON, HASH, STRING or STREAM`);
      on = t as DataType;
      if (on === 'STREAM') {
        if (i + 1 >= argv.count) throw new SchemaError('ERR syntax error: ON STREAM needs a stream key');
        stream = argv.key(++i);
      }
    } else if (argv.is(i, 'PREFIX')) {
      const n = i + 1 < argv.count ? argv.int(i + 1) : NaN;
      if (!(n >= 1) || n > MAX_PREFIXES) throw new SchemaError(`ERR PREFIX count must be between 1 and ${MAX_PREFIXES}`);
      if (i + 1 + n >= argv.count) throw new SchemaError('ERR syntax error: fewer prefixes than PREFIX count');
      prefixes = [];
      for (let k = 0; k < n; k++) prefixes.push(argv.key(i + 2 + k));
      i += 1 + n;
    } else if (argv.is(i, 'LANGUAGE')) {
      if (i + 1 >= argv.count) throw new SchemaError('ERR syntax error: LANGUAGE needs a value');
      const l = argv.str(++i).toLowerCase();
      if (!LANGUAGES.includes(l)) throw new SchemaError(`ERR unsupported language '${argv.str(i)}'`);
      language = l;
    } else if (argv.is(i, 'SKIPINITIALSCAN')) {
      skipInitialScan = true;
    } else if (argv.is(i, 'EXISTSOK')) {
      existsOk = true;
    } else {
      throw new SchemaError(`ERR syntax error near '${argv.str(i)}'`);
    }
  }
  if (on === null) throw new SchemaError('ERR missing ON <JSON|HASH|STRING|STREAM>');
  if (on === 'STREAM') {
    if (prefixes !== null) throw new SchemaError('ERR PREFIX is not supported for STREAM indexes');
    prefixes = [stream!];
  }
  if (prefixes === null) throw new SchemaError('ERR missing PREFIX');
  if (i >= argv.count) throw new SchemaError('ERR missing SCHEMA');
  const fields: FieldDef[] = [];
  const seen = new Set<string>();
  i++;
  while (i < argv.count) {
    if (i + 1 >= argv.count) throw new SchemaError(`ERR missing type for field '${argv.str(i)}'`);
    const fname = argv.str(i);
    const type = argv.str(i + 1).toUpperCase();
    if (!(FIELD_TYPES as readonly string[]).includes(type)) throw new SchemaError(`ERR unknown field type '${argv.str(i + 1)}' for field '${fname}'`);
    if (fname.length === 0 || fname.length > MAX_NAME) throw new SchemaError('ERR invalid field name');
    if (seen.has(fname)) throw new SchemaError(`ERR duplicate field '${fname}'`);
    seen.add(fname);
    i += 2;
    let fast = false;
    let noStem = false;
    let noTokenize = false;
    let from: string | null = null;
    for (;;) {
      if (i < argv.count && argv.is(i, 'FAST')) { fast = true; i++; }
      else if (i < argv.count && argv.is(i, 'NOSTEM')) { noStem = true; i++; }
      else if (i < argv.count && argv.is(i, 'NOTOKENIZE')) { noTokenize = true; i++; }
      else if (i < argv.count && argv.is(i, 'FROM')) {
        if (i + 1 >= argv.count) throw new SchemaError('ERR syntax error: FROM needs a source field');
        from = argv.str(i + 1);
        i += 2;
      } else break;
    }
    const t = type as FieldType;
    if (fast && !NUMERIC.has(t)) throw new SchemaError(`ERR FAST is not supported for ${t} field '${fname}'`);
    if ((noStem || noTokenize) && t !== 'TEXT') throw new SchemaError(`ERR NOSTEM and NOTOKENIZE apply to TEXT fields only ('${fname}' is ${t})`);
    fields.push({ name: fname, type: t, fast, noStem, noTokenize, from });
    if (fields.length > MAX_FIELDS) throw new SchemaError(`ERR too many fields (at most ${MAX_FIELDS})`);
  }
  if (fields.length === 0) throw new SchemaError('ERR SCHEMA needs at least one field');
  return { def: { name, on, prefixes, language, fields, db }, skipInitialScan, existsOk };
}

/** EXISTSOK: same data type, prefixes, language and fields (options included). */
export function sameDefinition(a: IndexDef, b: IndexDef): boolean {
  return JSON.stringify({ ...a, name: '' }) === JSON.stringify({ ...b, name: '' });
}

/** A definition read back from disk, checked field by field (the file may be damaged). */
export function defFromJson(x: unknown): IndexDef | null {
  if (typeof x !== 'object' || x === null) return null;
  const o = x as Record<string, unknown>;
  if (typeof o.name !== 'string' || !(DATA_TYPES as readonly unknown[]).includes(o.on)) return null;
  if (!Array.isArray(o.prefixes) || !o.prefixes.every((p) => typeof p === 'string')) return null;
  if (o.on === 'STREAM' && o.prefixes.length !== 1) return null;
  if (typeof o.language !== 'string' || typeof o.db !== 'number' || !Array.isArray(o.fields)) return null;
  const fields: FieldDef[] = [];
  for (const f of o.fields as Record<string, unknown>[]) {
    if (typeof f !== 'object' || f === null || typeof f.name !== 'string') return null;
    if (!(FIELD_TYPES as readonly unknown[]).includes(f.type)) return null;
    fields.push({
      name: f.name, type: f.type as FieldType, fast: f.fast === true, noStem: f.noStem === true,
      noTokenize: f.noTokenize === true, from: typeof f.from === 'string' ? f.from : null,
    });
  }
  return { name: o.name, on: o.on as DataType, prefixes: o.prefixes as string[], language: o.language, fields, db: o.db };
}
