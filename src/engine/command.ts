/**
 * The declarative command row. One row per command (and per subcommand) drives: the
 * unknown-command and arity errors, COMMAND output, read-only enforcement (REST read-only
 * token, *_RO scripts), MULTI queueing and ACL categories. Handlers never re-check arity.
 */
import type { Argv } from '../resp/argv.js';
import type { ReplySink } from '../resp/reply-sink.js';
import type { Client } from './client.js';
import { type AclCategory, impliedFlags } from './flags.js';
import type { GetKeys, KeySpec } from './keys.js';

/** Legacy key positions: first, last (negative counts from the end), step. [0,0,0] = keyless. */
export type Keys = readonly [first: number, last: number, step: number];

/** Synchronous: no Promise per command on the hot path. */
export type Handler = (c: Client, argv: Argv, out: ReplySink) => void;

/**
 * For a transport that cannot hold a command's reply (REST): start the command's slow part
 * elsewhere (a worker thread); `ready` is called once the handler can run without waiting.
 * False: nothing was started, run the handler now. argv is borrowed (copy what is kept).
 */
export type Prefetch = (c: Client, argv: Argv, ready: () => void) => boolean;

export interface CommandDef {
  /** Lower-case wire name; "parent|sub" for subcommands. */
  readonly name: string;
  /** Redis convention: +N exactly N arguments, -N at least N; the name counts. */
  readonly arity: number;
  readonly flags: number;
  readonly keys: Keys;
  readonly handler: Handler;
  /** ACL categories given by the family (the flag-implied ones are added by the registry). */
  readonly categories: readonly AclCategory[];
  /**
   * Redis's getkeys_proc: the keys (with key-spec flags) when the key specs cannot tell (every
   * F.MOVABLE_KEYS row has one; SET and BITFIELD too, whose flags depend on the arguments).
   * Keys are found by commandKeys() in keys.ts, never by calling this directly.
   */
  readonly getKeys?: GetKeys;
  /** CONFIG GET, CLIENT SETNAME...: looked up by the second argument. */
  readonly subcommands?: ReadonlyMap<string, CommandDef>;
  /** Dense id assigned by the registry (per-command stats). */
  id: number;
  /** Redis 7 key specs, attached by the registry from keyspecs.ts. */
  keySpecs: readonly KeySpec[];
  /** See Prefetch (REST only). */
  readonly prefetch?: Prefetch;
  /** How keys are found (keys.ts KEY_MODE bits), derived by the registry from specs and getKeys. */
  keyMode: number;
}

export interface RowOptions {
  getKeys?: GetKeys;
  categories?: readonly AclCategory[];
  /** An admin command that scripts may call (Redis's PFDEBUG, PFSELFTEST): no implied noscript. */
  scriptable?: boolean;
  prefetch?: Prefetch;
}

/**
 * perf: every CommandDef is built here, with the same fields in the same order, so that all
 * rows share one hidden class and the dispatcher's loads of def.arity, def.flags, def.handler
 * stay monomorphic (object spreads and differently ordered literals made them megamorphic).
 */
function makeDef(d: CommandDef): CommandDef {
  return {
    name: d.name, arity: d.arity, flags: d.flags, keys: d.keys, handler: d.handler,
    categories: d.categories, getKeys: d.getKeys, subcommands: d.subcommands, id: d.id, keySpecs: d.keySpecs, keyMode: d.keyMode,
    prefetch: d.prefetch,
  };
}

const NO_SPECS: readonly KeySpec[] = [];

/** One table row. */
export function row(
  name: string, arity: number, flags: number, keys: Keys, handler: Handler, opts: RowOptions = {},
): CommandDef {
  return makeDef({
    name, arity, flags: opts.scriptable ? flags : impliedFlags(flags), keys, handler,
    categories: opts.categories ?? [], getKeys: opts.getKeys, subcommands: undefined, id: -1, keySpecs: NO_SPECS, keyMode: 0,
    prefetch: opts.prefetch,
  });
}

/** A container command (CONFIG, CLIENT, OBJECT...) whose rows are its subcommands. */
export function container(
  name: string, arity: number, flags: number, subs: CommandDef[], fallback: Handler,
  categories: readonly AclCategory[] = [],
): CommandDef {
  const map = new Map<string, CommandDef>();
  for (const s of subs) map.set(s.name, makeDef({ ...s, name: `${name}|${s.name}` }));
  return makeDef({ name, arity, flags: impliedFlags(flags), keys: [0, 0, 0], handler: fallback, categories: [...categories], getKeys: undefined, subcommands: map, id: -1, keySpecs: NO_SPECS, keyMode: 0 });
}

export interface Family {
  readonly name: string;
  readonly categories: readonly AclCategory[];
  readonly rows: readonly CommandDef[];
}

/** A command family: its rows get the family's ACL categories. */
export function family(name: string, categories: readonly AclCategory[], rows: CommandDef[]): Family {
  return {
    name, categories,
    rows: rows.map((r) => withCategories(r, categories)),
  };
}

function withCategories(r: CommandDef, categories: readonly AclCategory[]): CommandDef {
  const subs = r.subcommands
    ? new Map([...r.subcommands].map(([k, v]) => [k, withCategories(v, categories)] as const))
    : undefined;
  // A container row has no category of its family (Redis's CONFIG, OBJECT, XINFO...: only @slow).
  return makeDef({ ...r, categories: subs ? [...r.categories] : [...categories, ...r.categories], subcommands: subs });
}
