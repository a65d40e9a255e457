/**
 * Registry: builds the command table from the families, assigns dense ids, checks the table's
 * invariants, and resolves an argv to its row (with one level of subcommands).
 */
import type { Argv } from '../resp/argv.js';
import type { CommandDef, Family } from './command.js';
import { F, aclCategories, type AclCategory, ACL_CATEGORIES } from './flags.js';
import { commandKeys, keyMode, parseKeySpec, type KeySpec } from './keys.js';
import { KEY_SPECS } from './keyspecs.js';

export class Registry {
  readonly commands = new Map<string, CommandDef>();
  /** Every row, top-level and sub, indexed by id. */
  readonly all: CommandDef[] = [];
  /**
   * perf: top-level lookup by a hash of the case-folded name bytes, verified byte by byte, so
   * that resolving a command allocates no string (lookup() runs once per command).
   */
  private readonly hashed = new Map<number, { name: Buffer; def: CommandDef }[]>();
  /** perf: the row found by the last lookup (pipelines repeat one command), tried first. */
  private last: { name: Buffer; def: CommandDef } | null = null;
  /**
   * 1 for the rows that run at once inside MULTI instead of being queued (EXEC, DISCARD, MULTI,
   * WATCH, QUIT, RESET), by id. perf: the dispatcher tests this, not a Set of names, per command.
   */
  readonly runsInMulti: Uint8Array;

  constructor(families: readonly Family[]) {
    for (const fam of families) {
      if (fam.rows.length === 0) throw new Error(`command family ${fam.name} is empty`);
      for (const r of fam.rows) {
        if (this.commands.has(r.name)) throw new Error(`duplicate command ${r.name}`);
        this.check(r);
        this.assign(r);
        this.commands.set(r.name, r);
        const name = Buffer.from(r.name, 'latin1');
        const h = foldHash(name, 0, name.length);
        const list = this.hashed.get(h);
        if (list) list.push({ name, def: r });
        else this.hashed.set(h, [{ name, def: r }]);
      }
    }
    this.runsInMulti = new Uint8Array(this.all.length);
    for (const name of MULTI_PASSTHROUGH) {
      const def = this.commands.get(name);
      if (def !== undefined) this.runsInMulti[def.id] = 1;
    }
  }

  private assign(r: CommandDef): void {
    r.id = this.all.length;
    const specs = KEY_SPECS[r.name];
    if (specs !== undefined) r.keySpecs = specs.map(parseSpecOf(r.name));
    else if (r.keys[0] !== 0) r.keySpecs = [legacySpec(r)];
    r.keyMode = keyMode(r);
    this.all.push(r);
    if (r.subcommands) for (const s of r.subcommands.values()) this.assign(s);
  }

  /** Table invariants (also asserted by test/engine/registry.test.ts). */
  private check(r: CommandDef): void {
    const where = `command ${r.name}`;
    if (r.name !== r.name.toLowerCase()) throw new Error(`${where}: name must be lower-case`);
    if (r.flags & F.WRITE && r.flags & F.READONLY) throw new Error(`${where}: both write and readonly`);
    if (r.flags & F.MOVABLE_KEYS && !r.getKeys) throw new Error(`${where}: movablekeys needs getKeys`);
    if (r.arity === 0) throw new Error(`${where}: arity 0`);
    const [first, last, step] = r.keys;
    if (first > 0) {
      if (step <= 0) throw new Error(`${where}: key step must be positive`);
      if (r.arity > 0 && first >= r.arity) throw new Error(`${where}: first key beyond arity`);
      if (last > 0 && last < first) throw new Error(`${where}: last key before first`);
    }
    if (r.subcommands) for (const s of r.subcommands.values()) this.check(s);
  }

  /** Resolve argv[0] (and argv[1] for containers). undefined when unknown. */
  lookup(argv: Argv): CommandDef | undefined {
    const def = this.lookupName(argv.buf, argv.start[0], argv.end[0]);
    if (def === undefined || def.subcommands === undefined || argv.count < 2) return def;
    return def.subcommands.get(argv.lower(1));
  }

  /** Top-level command by its (any-case) name bytes. */
  lookupName(b: Buffer, s: number, e: number): CommandDef | undefined {
    const last = this.last;
    if (last !== null && sameName(last.name, b, s, e)) return last.def;
    const list = this.hashed.get(foldHash(b, s, e));
    if (list === undefined) return undefined;
    for (let i = 0; i < list.length; i++) {
      if (sameName(list[i].name, b, s, e)) {
        this.last = list[i];
        return list[i].def;
      }
    }
    return undefined;
  }

  /** Key argument indexes of a command (COMMAND GETKEYS); with flags: keys.ts commandKeys. */
  keyIndexes(def: CommandDef, argv: Argv): number[] {
    return commandKeys(def, argv).map((k) => k.pos);
  }

  categories(def: CommandDef): AclCategory[] {
    const set = aclCategories(def.flags, def.categories);
    return ACL_CATEGORIES.filter((c) => set.has(c));
  }
}

/** Commands that run immediately even inside MULTI. */
const MULTI_PASSTHROUGH = ['exec', 'discard', 'multi', 'watch', 'quit', 'reset'];

/**
 * A row without a key spec in keyspecs.ts (none of Redis's): one spec from its legacy key
 * positions; a reader reads its keys, anything else needs read and write permission.
 */
function legacySpec(r: CommandDef): KeySpec {
  const [first, last, step] = r.keys;
  const flags = r.flags & F.READONLY ? 'RO access' : 'RW access update';
  return parseKeySpec(`${flags} | index ${first} | range ${last < 0 ? last : last - first} ${step} 0`);
}

function parseSpecOf(name: string): (text: string) => KeySpec {
  return (text) => {
    try {
      return parseKeySpec(text);
    } catch (err) {
      throw new Error(`command ${name}: ${(err as Error).message}`);
    }
  };
}

/** True if b[s, e) is `name` (lower-case) in any ASCII case. */
function sameName(name: Buffer, b: Uint8Array, s: number, e: number): boolean {
  const n = name.length;
  if (n !== e - s) return false;
  for (let j = 0; j < n; j++) {
    let c = b[s + j];
    if (c >= 65 && c <= 90) c += 32;
    if (c !== name[j]) return false;
  }
  return true;
}

/** Hash of the ASCII-lower-cased bytes b[s, e). */
function foldHash(b: Uint8Array, s: number, e: number): number {
  let h = e - s;
  for (let i = s; i < e; i++) {
    let c = b[i];
    if (c >= 65 && c <= 90) c += 32;
    h = (Math.imul(h, 31) + c) | 0;
  }
  return h;
}
