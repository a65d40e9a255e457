/**
 * COMMAND and its subcommands, produced entirely from the command table.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import type { Client } from '../client.js';
import type { CommandDef } from '../command.js';
import { F, FLAG_NAMES } from '../flags.js';
import { container, family, row } from '../command.js';
import { globMatch } from '../glob.js';
import { COMMAND_DOCS_JSON } from './command-docs.js';
import { commandHasKeys, commandKeys, keyFlagNames, writeKeySpec } from '../keys.js';

/** One COMMAND INFO entry: name, arity, flags, first, last, step, categories, tips, key specs, subcommands. */
function writeInfo(c: Client, def: CommandDef, out: ReplySink): void {
  const reg = c.engine.registry;
  out.array(10);
  out.bulkText(def.name);
  out.int(def.arity);
  const names = FLAG_NAMES.filter(([bit]) => def.flags & bit).map(([, n]) => n);
  out.set(names.length);
  for (const n of names) out.simple(n);
  out.int(def.keys[0]);
  out.int(def.keys[1]);
  out.int(def.keys[2]);
  const cats = reg.categories(def);
  out.set(cats.length);
  for (const cat of cats) out.simple('@' + cat);
  out.set(0); // tips
  writeKeySpecs(def, out);
  const subs = def.subcommands ? [...def.subcommands.values()] : [];
  // No subcommands: an empty set in RESP3 (Redis 7.0.15), else an array.
  if (subs.length === 0) out.set(0);
  else out.array(subs.length);
  for (const s of subs) writeInfo(c, s, out);
}

/** The row's Redis 7 key specs (keys.ts). */
function writeKeySpecs(def: CommandDef, out: ReplySink): void {
  // A set of maps in RESP3, as Redis 7.0.15 sends them (flat arrays in RESP2).
  out.set(def.keySpecs.length);
  for (const spec of def.keySpecs) writeKeySpec(spec, out);
}

function topLevel(c: Client): CommandDef[] {
  return [...c.engine.registry.commands.values()];
}

// COMMAND
function commandCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const all = topLevel(c);
  out.array(all.length);
  for (const d of all) writeInfo(c, d, out);
}

// COMMAND COUNT
function countCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.int(c.engine.registry.commands.size);
}

/** Resolve "get" or "config|get" to a row. */
function findByName(c: Client, name: string): CommandDef | undefined {
  const [top, sub] = name.toLowerCase().split('|');
  const def = c.engine.registry.commands.get(top);
  if (sub === undefined || def === undefined) return def;
  return def.subcommands?.get(sub);
}

// COMMAND INFO [command-name ...]
function infoCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count === 2) {
    commandCommand(c, argv, out);
    return;
  }
  out.array(argv.count - 2);
  for (let i = 2; i < argv.count; i++) {
    const def = findByName(c, argv.str(i));
    if (def) writeInfo(c, def, out);
    else out.nilArray();
  }
}

type DocNode = string | number | { '%': DocNode[] } | { '+': string } | DocNode[];

let docsCache: Record<string, DocNode> | null = null;

/** Redis 7.0.15's COMMAND DOCS data (command-docs.ts), parsed on first use. */
function redisDocs(): Record<string, DocNode> {
  return (docsCache ??= JSON.parse(COMMAND_DOCS_JSON) as Record<string, DocNode>);
}

/** The documentation of a row: Redis's own, or (commands Redis 7.0 does not have) the group only. */
function docOf(def: CommandDef): DocNode {
  const [top, sub] = def.name.split('|');
  let doc: DocNode | undefined = redisDocs()[top];
  if (sub !== undefined && doc !== undefined) {
    const m = (doc as { '%': DocNode[] })['%'];
    const i = m.indexOf('subcommands');
    const subs = i >= 0 ? (m[i + 1] as { '%': DocNode[] })['%'] : [];
    const j = subs.indexOf(def.name);
    doc = j >= 0 ? subs[j + 1] : undefined;
  }
  return doc ?? { '%': ['group', def.categories[0] ?? 'generic'] };
}

/** Map entries whose list Redis sends as a set in RESP3 (addReplySetLen in commands.c). */
const SET_VALUED = new Set(['history', 'doc_flags', 'flags']);

/** Write a docs node; `{'%': [k, v, ...]}` is a map (flat in RESP2, as Redis's maps). */
function writeDoc(n: DocNode, out: ReplySink, asSet = false): void {
  if (typeof n === 'string') out.bulkLatin1(n);
  else if (typeof n === 'number') out.int(n);
  else if (Array.isArray(n)) {
    if (asSet) out.set(n.length);
    else out.array(n.length);
    for (const x of n) writeDoc(x, out);
  } else if ('%' in n) {
    const kv = n['%'];
    out.map(kv.length / 2);
    for (let i = 0; i < kv.length; i += 2) {
      writeDoc(kv[i], out);
      writeDoc(kv[i + 1], out, typeof kv[i] === 'string' && SET_VALUED.has(kv[i] as string));
    }
  } else out.simple(n['+']);
}

// COMMAND DOCS [command-name ...]
function docsCommand(c: Client, argv: Argv, out: ReplySink): void {
  const defs: CommandDef[] = [];
  if (argv.count === 2) defs.push(...topLevel(c));
  else for (let i = 2; i < argv.count; i++) {
    const d = findByName(c, argv.str(i));
    if (d) defs.push(d);
  }
  out.map(defs.length);
  for (const d of defs) {
    out.bulkText(d.name);
    writeDoc(docOf(d), out);
  }
}

// COMMAND GETKEYS command [arg ...] / COMMAND GETKEYSANDFLAGS command [arg ...]
function getkeysReply(c: Client, argv: Argv, out: ReplySink, withFlags: boolean): void {
  const inner = argv.tail(2);
  const def = c.engine.registry.lookup(inner);
  if (def === undefined) {
    out.error('ERR Invalid command specified');
    return;
  }
  if (!commandHasKeys(def)) {
    out.error('ERR The command has no key arguments');
    return;
  }
  if ((def.arity > 0 && inner.count !== def.arity) || inner.count < -def.arity) {
    out.error('ERR Invalid number of arguments specified for command');
    return;
  }
  const keys = commandKeys(def, inner);
  if (keys.length === 0 && !(def.flags & F.NO_MANDATORY_KEYS)) {
    out.error('ERR Invalid arguments specified for command');
    return;
  }
  out.array(keys.length);
  for (const k of keys) {
    if (!withFlags) {
      out.bulk(inner.copy(k.pos));
      continue;
    }
    out.array(2);
    out.bulk(inner.copy(k.pos));
    const names = keyFlagNames(k.flags);
    out.set(names.length);
    for (const n of names) out.simple(n);
  }
}

function getkeysCommand(c: Client, argv: Argv, out: ReplySink): void {
  getkeysReply(c, argv, out, false);
}

function getkeysandflagsCommand(c: Client, argv: Argv, out: ReplySink): void {
  getkeysReply(c, argv, out, true);
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
function listCommand(c: Client, argv: Argv, out: ReplySink): void {
  let names: string[] = [];
  const reg = c.engine.registry;
  for (const d of reg.commands.values()) {
    names.push(d.name);
    if (d.subcommands) for (const s of d.subcommands.values()) names.push(s.name);
  }
  if (argv.count === 5 && argv.is(2, 'FILTERBY')) {
    const v = argv.str(4);
    if (argv.is(3, 'MODULE')) names = [];
    else if (argv.is(3, 'ACLCAT')) {
      names = names.filter((n) => {
        const d = findByName(c, n)!;
        return (reg.categories(d) as string[]).includes(v.toLowerCase());
      });
    } else if (argv.is(3, 'PATTERN')) {
      const pat = Buffer.from(v);
      names = names.filter((n) => globMatch(pat, Buffer.from(n), true));
    } else {
      out.error(E.SYNTAX);
      return;
    }
  } else if (argv.count !== 2) {
    out.error(E.SYNTAX);
    return;
  }
  out.array(names.length);
  for (const n of names) out.bulkText(n);
}

// COMMAND HELP
function helpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  const lines = [
    'COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
    '(no subcommand)',
    '    Return details about all Redis commands.',
    'COUNT',
    '    Return the total number of commands in this Redis server.',
    'LIST',
    '    Return a list of all commands in this Redis server.',
    'INFO [<command-name> ...]',
    '    Return details about multiple Redis commands.',
    '    If no command names are given, documentation details for all',
    '    commands are returned.',
    'DOCS [<command-name> ...]',
    '    Return documentation details about multiple Redis commands.',
    '    If no command names are given, documentation details for all',
    '    commands are returned.',
    'GETKEYS <full-command>',
    '    Return the keys from a full Redis command.',
    'GETKEYSANDFLAGS <full-command>',
    '    Return the keys and the access flags from a full Redis command.',
    'HELP',
    '    Print this help.',
  ];
  out.array(lines.length);
  for (const l of lines) out.simple(l);
}

const SUB = F.LOADING | F.STALE;
export default family('introspection', ['connection'], [
  container('command', -1, SUB, [
    //   name        arity  flags      keys       handler
    row('count',       2,   SUB,       [0, 0, 0], countCommand),
    row('info',       -2,   SUB,       [0, 0, 0], infoCommand),
    row('docs',       -2,   SUB,       [0, 0, 0], docsCommand),
    row('getkeys',    -4,   SUB,       [0, 0, 0], getkeysCommand),
    row('getkeysandflags', -4, SUB,     [0, 0, 0], getkeysandflagsCommand),
    row('list',       -2,   SUB,       [0, 0, 0], listCommand),
    row('help',        2,   SUB,       [0, 0, 0], helpCommand),
  ], commandCommand, ['connection']), // Redis's COMMAND row itself is @connection
]);
