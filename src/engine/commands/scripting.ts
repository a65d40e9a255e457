/**
 * Scripting commands: EVAL EVALSHA EVAL_RO EVALSHA_RO, SCRIPT (LOAD EXISTS FLUSH KILL DEBUG
 * HELP), FUNCTION (LOAD DELETE FLUSH LIST STATS DUMP RESTORE KILL HELP), FCALL FCALL_RO.
 * The Lua runtime, the script cache and the libraries are in ../scripting/ (host.ts explains
 * where scripts run, BUSY and KILL).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import type { Client } from '../client.js';
import { row, container, family } from '../command.js';
import { F } from '../flags.js';
import { globMatch } from '../glob.js';
import { feedMonitors } from '../monitor.js';
import { scripting } from '../scripting/host.js';
import { parsePayload } from '../scripting/functions.js';
import { numkeysKeys } from '../keys.js';

/** numkeys of EVAL (isFcall: FCALL's wording for a non-integer); NaN after replying an error. */
function numKeys(argv: Argv, out: ReplySink, isFcall: boolean): number {
  const n = argv.int(2);
  if (n >= 0 && n <= argv.count - 3) return n;
  const v = argv.int64(2);
  if (v === null) {
    out.error(isFcall ? 'ERR Bad number of keys provided' : E.NOT_INTEGER);
    return NaN;
  }
  if (v > BigInt(argv.count - 3)) {
    out.error("ERR Number of keys can't be greater than number of args");
    return NaN;
  }
  if (v < 0n) {
    out.error("ERR Number of keys can't be negative");
    return NaN;
  }
  return Number(v);
}

/** Redis's scriptPrepareForRun checks that depend on the script's flags; the read-only state or null after an error. */
function prepare(present: boolean, flags: readonly string[], ro: boolean, out: ReplySink): boolean | null {
  if (present && !flags.includes('no-writes') && ro) {
    out.error('ERR Can not execute a script with write flag using *_ro command.');
    return null;
  }
  return ro || (present && flags.includes('no-writes'));
}

function evalGeneric(c: Client, argv: Argv, out: ReplySink, isSha: boolean, ro: boolean): void {
  const s = scripting(c.engine);
  if (isSha && argv.len(1) !== 40) {
    out.error('NOSCRIPT No matching script. Please use EVAL.');
    return;
  }
  const nk = numKeys(argv, out, false);
  if (Number.isNaN(nk)) return;
  let sha: string;
  if (isSha) {
    sha = s.shaArg(argv, 1);
    const err = s.ensureCompiled(sha);
    if (err !== null) {
      out.error(err);
      return;
    }
  } else {
    const r = s.load(argv.copy(1));
    if ('err' in r) {
      out.error(r.err);
      return;
    }
    sha = r.sha;
  }
  const { present, flags } = s.scriptFlags(sha);
  const readOnly = prepare(present, flags, ro, out);
  if (readOnly === null) return;
  if (c.engine.monitors.size !== 0) feedMonitors(c, argv);
  s.call(c, out, argv, nk, readOnly, sha, null);
}

// EVAL script numkeys [key [key ...]] [arg [arg ...]]
function evalCommand(c: Client, argv: Argv, out: ReplySink): void {
  evalGeneric(c, argv, out, false, false);
}

// EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]
function evalshaCommand(c: Client, argv: Argv, out: ReplySink): void {
  evalGeneric(c, argv, out, true, false);
}

// EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]
function evalRoCommand(c: Client, argv: Argv, out: ReplySink): void {
  evalGeneric(c, argv, out, false, true);
}

// EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]
function evalshaRoCommand(c: Client, argv: Argv, out: ReplySink): void {
  evalGeneric(c, argv, out, true, true);
}

function fcallGeneric(c: Client, argv: Argv, out: ReplySink, ro: boolean): void {
  const s = scripting(c.engine);
  if (c.engine.monitors.size !== 0) feedMonitors(c, argv);
  const fi = s.functions.getFunction(argv.key(1));
  if (fi === undefined) {
    out.error('ERR Function not found');
    return;
  }
  const nk = numKeys(argv, out, true);
  if (Number.isNaN(nk)) return;
  const readOnly = prepare(true, fi.flags, ro, out);
  if (readOnly === null) return;
  s.call(c, out, argv, nk, readOnly, '', fi);
}

// FCALL function numkeys [key [key ...]] [arg [arg ...]]
function fcallCommand(c: Client, argv: Argv, out: ReplySink): void {
  fcallGeneric(c, argv, out, false);
}

// FCALL_RO function numkeys [key [key ...]] [arg [arg ...]]
function fcallRoCommand(c: Client, argv: Argv, out: ReplySink): void {
  fcallGeneric(c, argv, out, true);
}

// ---------------------------------------------------------------- SCRIPT

// SCRIPT LOAD script
function scriptLoadCommand(c: Client, argv: Argv, out: ReplySink): void {
  const r = scripting(c.engine).load(argv.copy(2));
  if ('err' in r) out.error(r.err);
  else out.bulkLatin1(r.sha);
}

// SCRIPT EXISTS sha1 [sha1 ...]
function scriptExistsCommand(c: Client, argv: Argv, out: ReplySink): void {
  const s = scripting(c.engine);
  out.array(argv.count - 2);
  for (let i = 2; i < argv.count; i++) out.int(argv.len(i) === 40 && s.scripts.has(argv.key(i).toLowerCase()) ? 1 : 0);
}

// SCRIPT FLUSH [ASYNC|SYNC]
function scriptFlushCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 3 || (argv.count === 3 && !argv.is(2, 'SYNC') && !argv.is(2, 'ASYNC'))) {
    out.error('ERR SCRIPT FLUSH only support SYNC|ASYNC option');
    return;
  }
  scripting(c.engine).flushScripts();
  out.ok();
}

// SCRIPT KILL
function scriptKillCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const err = scripting(c.engine).kill(true);
  if (err === null) out.ok();
  else out.error(err);
}

// SCRIPT DEBUG YES|SYNC|NO
function scriptDebugCommand(_c: Client, argv: Argv, out: ReplySink): void {
  if (argv.is(2, 'NO')) out.ok();
  else if (argv.is(2, 'YES') || argv.is(2, 'SYNC')) out.error('ERR SCRIPT DEBUG (the Lua debugger) is not supported by this server');
  else out.error('ERR Use SCRIPT DEBUG YES/SYNC/NO');
}

const SCRIPT_HELP = [
  'SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'DEBUG (YES|SYNC|NO)',
  '    Set the debug mode for subsequent scripts executed.',
  'EXISTS <sha1> [<sha1> ...]',
  '    Return information about the existence of the scripts in the script cache.',
  'FLUSH [ASYNC|SYNC]',
  '    Flush the Lua scripts cache. Very dangerous on replicas.',
  '    When called without the optional mode argument, the behavior is determined by the',
  '    lazyfree-lazy-user-flush configuration directive. Valid modes are:',
  '    * ASYNC: Asynchronously flush the scripts cache.',
  '    * SYNC: Synchronously flush the scripts cache.',
  'KILL',
  '    Kill the currently executing Lua script.',
  'LOAD <script>',
  '    Load a script into the scripts cache without executing it.',
  'HELP',
  '    Prints this help.',
];

// SCRIPT HELP
function scriptHelpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(SCRIPT_HELP.length);
  for (const l of SCRIPT_HELP) out.simple(l);
}

// ---------------------------------------------------------------- FUNCTION

// FUNCTION LOAD [REPLACE] function-code
function functionLoadCommand(c: Client, argv: Argv, out: ReplySink): void {
  let replace = false;
  let i = 2;
  for (; i < argv.count - 1; i++) {
    if (argv.is(i, 'REPLACE')) replace = true;
    else {
      out.error(`ERR Unknown option given: ${argv.key(i)}`);
      return;
    }
  }
  const r = scripting(c.engine).loadLibrary(argv.copy(argv.count - 1), replace);
  if ('err' in r) out.error(r.err);
  else out.bulkLatin1(r.name);
}

// FUNCTION DELETE library-name
function functionDeleteCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (scripting(c.engine).deleteLibrary(argv.key(2))) out.ok();
  else out.error('ERR Library not found');
}

// FUNCTION FLUSH [ASYNC|SYNC]
function functionFlushCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 3) {
    out.error(`ERR unknown subcommand or wrong number of arguments for '${argv.key(1)}'. Try FUNCTION HELP.`);
    return;
  }
  if (argv.count === 3 && !argv.is(2, 'SYNC') && !argv.is(2, 'ASYNC')) {
    out.error('ERR FUNCTION FLUSH only supports SYNC|ASYNC option');
    return;
  }
  scripting(c.engine).flushFunctions();
  out.ok();
}

// FUNCTION LIST [LIBRARYNAME library-name-pattern] [WITHCODE]
function functionListCommand(c: Client, argv: Argv, out: ReplySink): void {
  let withCode = false;
  let pattern: Buffer | null = null;
  for (let i = 2; i < argv.count; i++) {
    if (!withCode && argv.is(i, 'WITHCODE')) withCode = true;
    else if (pattern === null && argv.is(i, 'LIBRARYNAME')) {
      if (i + 1 >= argv.count) {
        out.error('ERR library name argument was not given');
        return;
      }
      pattern = argv.copy(++i);
    } else {
      out.error(`ERR Unknown argument ${argv.key(i)}`);
      return;
    }
  }
  const libs = [...scripting(c.engine).functions.libraries.values()]
    .filter((l) => pattern === null || globMatch(pattern, Buffer.from(l.name, 'latin1'), false));
  out.array(libs.length);
  for (const lib of libs) {
    out.map(withCode ? 4 : 3);
    out.bulkText('library_name');
    out.bulkLatin1(lib.name);
    out.bulkText('engine');
    out.bulkText('LUA');
    out.bulkText('functions');
    out.array(lib.functions.size);
    for (const f of lib.functions.values()) {
      out.map(3);
      out.bulkText('name');
      out.bulkLatin1(f.name);
      out.bulkText('description');
      if (f.description === null) out.nil();
      else out.bulkLatin1(f.description);
      out.bulkText('flags');
      out.set(f.flags.length);
      for (const fl of f.flags) out.simple(fl);
    }
    if (withCode) {
      out.bulkText('library_code');
      out.bulk(lib.code);
    }
  }
}

// FUNCTION STATS
function functionStatsCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const s = scripting(c.engine);
  const run = s.run;
  if (run !== null && run.isEval) {
    out.error('BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.');
    return;
  }
  out.map(2);
  out.bulkText('running_script');
  if (run === null) out.nil();
  else {
    out.map(3);
    out.bulkText('name');
    out.bulkLatin1(run.name);
    out.bulkText('command');
    const cmd = run.argv ?? [];
    out.array(cmd.length);
    for (const a of cmd) out.bulk(a);
    out.bulkText('duration_ms');
    out.int(Date.now() - run.start);
  }
  out.bulkText('engines');
  out.map(1);
  out.bulkText('LUA');
  out.map(2);
  out.bulkText('libraries_count');
  out.int(s.functions.libraries.size);
  out.bulkText('functions_count');
  out.int(s.functions.functionCount);
}

// FUNCTION DUMP
function functionDumpCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.bulk(scripting(c.engine).dumpFunctions());
}

// FUNCTION RESTORE serialized-value [FLUSH|APPEND|REPLACE]
function functionRestoreCommand(c: Client, argv: Argv, out: ReplySink): void {
  let policy: 'FLUSH' | 'APPEND' | 'REPLACE' = 'APPEND';
  if (argv.count > 4) {
    out.error(`ERR unknown subcommand or wrong number of arguments for '${argv.key(1)}'. Try FUNCTION HELP.`);
    return;
  }
  if (argv.count === 4) {
    if (argv.is(3, 'FLUSH')) policy = 'FLUSH';
    else if (argv.is(3, 'APPEND')) policy = 'APPEND';
    else if (argv.is(3, 'REPLACE')) policy = 'REPLACE';
    else {
      out.error('ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.');
      return;
    }
  }
  const codes = parsePayload(argv.copy(2));
  if (codes === null) {
    out.error('ERR DUMP payload version or checksum are wrong');
    return;
  }
  const err = scripting(c.engine).restoreLibraries(codes, policy);
  if (err === null) out.ok();
  else out.error(err);
}

// FUNCTION KILL
function functionKillCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const err = scripting(c.engine).kill(false);
  if (err === null) out.ok();
  else out.error(err);
}

const FUNCTION_HELP = [
  'FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'LOAD [REPLACE] <FUNCTION CODE>',
  '    Create a new library with the given library name and code.',
  'DELETE <LIBRARY NAME>',
  '    Delete the given library.',
  'LIST [LIBRARYNAME PATTERN] [WITHCODE]',
  '    Return general information on all the libraries:',
  '    * Library name',
  '    * The engine used to run the Library',
  '    * Library description',
  '    * Functions list',
  '    * Library code (if WITHCODE is given)',
  '    It also possible to get only function that matches a pattern using LIBRARYNAME argument.',
  'STATS',
  '    Return information about the current function running:',
  '    * Function name',
  '    * Command used to run the function',
  '    * Duration in MS that the function is running',
  '    If no function is running, return nil',
  '    In addition, returns a list of available engines.',
  'KILL',
  '    Kill the current running function.',
  'FLUSH [ASYNC|SYNC]',
  '    Delete all the libraries.',
  '    When called without the optional mode argument, the behavior is determined by the',
  '    lazyfree-lazy-user-flush configuration directive. Valid modes are:',
  '    * ASYNC: Asynchronously flush the libraries.',
  '    * SYNC: Synchronously flush the libraries.',
  'DUMP',
  '    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command',
  'RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]',
  '    Restore the libraries represented by the given payload, it is possible to give a restore policy to',
  '    control how to handle existing libraries (default APPEND):',
  '    * FLUSH: delete all existing libraries.',
  '    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.',
  '    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old',
  '      libraries with the new libraries (notice that even on this option there is a chance of failure',
  '      in case of functions name collision with another library).',
  'HELP',
  '    Prints this help.',
];

// FUNCTION HELP
function functionHelpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(FUNCTION_HELP.length);
  for (const l of FUNCTION_HELP) out.simple(l);
}

/** Containers whose subcommand is not given are answered by the dispatcher's arity check. */
function noSubcommand(_c: Client, _argv: Argv, _out: ReplySink): void {}

/** Redis's evalGetKeys / functionGetKeys. */
const EVAL_KEYS = numkeysKeys(0, 2, 3);
const EV = F.NOSCRIPT | F.STALE | F.SKIP_MONITOR | F.NO_MANDATORY_KEYS | F.MOVABLE_KEYS;
const LS = F.LOADING | F.STALE;

/** The container rows (SCRIPT, FUNCTION) are only @slow in Redis; every real command is @scripting. */
const SC = ['scripting'] as const;

export default family('scripting', [], [
  //   name              arity  flags                                            keys       handler
  row('eval',             -3,   EV,                                              [0, 0, 0], evalCommand, { getKeys: EVAL_KEYS, categories: SC }),
  row('evalsha',          -3,   EV,                                              [0, 0, 0], evalshaCommand, { getKeys: EVAL_KEYS, categories: SC }),
  row('eval_ro',          -3,   EV | F.READONLY,                                 [0, 0, 0], evalRoCommand, { getKeys: EVAL_KEYS, categories: SC }),
  row('evalsha_ro',       -3,   EV | F.READONLY,                                 [0, 0, 0], evalshaRoCommand, { getKeys: EVAL_KEYS, categories: SC }),
  row('fcall',            -3,   EV,                                              [0, 0, 0], fcallCommand, { getKeys: EVAL_KEYS, categories: SC }),
  row('fcall_ro',         -3,   EV | F.READONLY,                                 [0, 0, 0], fcallRoCommand, { getKeys: EVAL_KEYS, categories: SC }),
  container('script',     -2,   0, [
    row('load',            3,   F.NOSCRIPT | F.STALE,                            [0, 0, 0], scriptLoadCommand, { categories: SC }),
    row('exists',         -3,   F.NOSCRIPT,                                      [0, 0, 0], scriptExistsCommand, { categories: SC }),
    row('flush',          -2,   F.NOSCRIPT,                                      [0, 0, 0], scriptFlushCommand, { categories: SC }),
    row('kill',            2,   F.NOSCRIPT | F.ALLOW_BUSY,                       [0, 0, 0], scriptKillCommand, { categories: SC }),
    row('debug',           3,   F.NOSCRIPT | F.NO_REST,                          [0, 0, 0], scriptDebugCommand, { categories: SC }),
    row('help',            2,   LS,                                              [0, 0, 0], scriptHelpCommand, { categories: SC }),
  ], noSubcommand),
  container('function',   -2,   0, [
    row('load',           -3,   F.WRITE | F.DENYOOM | F.NOSCRIPT,                [0, 0, 0], functionLoadCommand, { categories: SC }),
    row('delete',          3,   F.WRITE | F.NOSCRIPT,                            [0, 0, 0], functionDeleteCommand, { categories: SC }),
    row('flush',          -2,   F.WRITE | F.NOSCRIPT,                            [0, 0, 0], functionFlushCommand, { categories: SC }),
    row('list',           -2,   F.NOSCRIPT,                                      [0, 0, 0], functionListCommand, { categories: SC }),
    row('stats',           2,   F.NOSCRIPT | F.ALLOW_BUSY,                       [0, 0, 0], functionStatsCommand, { categories: SC }),
    row('dump',            2,   F.NOSCRIPT,                                      [0, 0, 0], functionDumpCommand, { categories: SC }),
    row('restore',        -3,   F.WRITE | F.DENYOOM | F.NOSCRIPT,                [0, 0, 0], functionRestoreCommand, { categories: SC }),
    row('kill',            2,   F.NOSCRIPT | F.ALLOW_BUSY,                       [0, 0, 0], functionKillCommand, { categories: SC }),
    row('help',            2,   LS,                                              [0, 0, 0], functionHelpCommand, { categories: SC }),
  ], noSubcommand),
]);
