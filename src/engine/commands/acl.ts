/**
 * ACL commands: SETUSER GETUSER DELUSER LIST USERS WHOAMI CAT GENPASS LOG DRYRUN LOAD SAVE HELP,
 * plus Upstash's RESTTOKEN (a REST token carrying a user's permissions).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E, subcommandSyntax } from '../../resp/errors.js';
import { cstr } from '../../bytes.js';
import type { Client } from '../client.js';
import { Acl, AclError, hasSpaces, type AclSelector, type AclUser } from '../acl.js';
import { ACL_CATEGORIES, type AclCategory } from '../flags.js';
import { F } from '../flags.js';
import { container, family, row } from '../command.js';

// ACL SETUSER username [rule [rule ...]]
function setuserCommand(c: Client, argv: Argv, out: ReplySink): void {
  const acl = c.engine.acl;
  const name = argv.key(2);
  // Redis's ACLStringHasSpaces: white space and NUL only (an empty name is a name).
  if (hasSpaces(name)) {
    out.error('ERR Usernames can\'t contain spaces or null characters');
    return;
  }
  const rules = mergeSelectorArgs(argv, 3);
  if (typeof rules === 'number') {
    out.error(`ERR Unmatched parenthesis in acl selector starting at '${argv.key(rules)}'.`);
    return;
  }
  const existing = acl.users.get(name);
  // Rules apply to a scratch copy first so that a bad rule changes nothing.
  const scratch = acl.create('\0scratch');
  acl.users.delete('\0scratch');
  if (existing) scratch.copyUser(existing);
  try {
    acl.apply(scratch, rules);
  } catch (err) {
    if (err instanceof AclError) {
      out.error('ERR ' + err.message);
      return;
    }
    throw err;
  }
  let before: AclUser | null = null;
  if (existing) {
    before = acl.create('\0before');
    acl.users.delete('\0before');
    before.copyUser(existing);
  }
  const target = existing ?? acl.create(name);
  target.copyUser(scratch);
  if (before !== null) acl.disconnectRevokedSubscribers(before, target, c.engine.pubsub);
  c.engine.aclChanged(name);
  out.ok();
}

/**
 * Redis's ACLMergeSelectorArguments: a selector may be given as several arguments, "(~a*"
 * "+get)", joined with spaces (each cut at a NUL, as "%s" does); a new unclosed "(" starts the
 * selector again. The index of an unclosed "(" argument when there is one.
 */
function mergeSelectorArgs(argv: Argv, from: number): string[] | number {
  const rules: string[] = [];
  let open = -1;
  let sel = '';
  for (let i = from; i < argv.count; i++) {
    const op = argv.key(i);
    if (op.startsWith('(') && !op.endsWith(')')) {
      open = i;
      sel = op;
    } else if (open >= 0) {
      sel += ' ' + cstr(op);
      if (op.endsWith(')')) {
        rules.push(sel);
        open = -1;
      }
    } else {
      rules.push(op);
    }
  }
  return open >= 0 ? open : rules;
}

// ACL GETUSER username
function getuserCommand(c: Client, argv: Argv, out: ReplySink): void {
  const acl = c.engine.acl;
  const u = acl.users.get(argv.key(2));
  if (u === undefined) {
    out.nil();
    return;
  }
  out.map(6);
  out.bulkText('flags');
  const flags = acl.flags(u);
  out.set(flags.length);
  for (const f of flags) out.bulkText(f);
  out.bulkText('passwords');
  out.array(u.passwords.size);
  for (const p of u.passwords) out.bulkText(p);
  selectorFields(acl, u, out);
  out.bulkText('selectors');
  out.array(u.selectors.length);
  for (const s of u.selectors) {
    out.map(3);
    selectorFields(acl, s, out);
  }
}

/** Redis's aclAddReplySelectorDescription: commands, keys, channels (three name/value pairs). */
function selectorFields(acl: Acl, s: AclSelector, out: ReplySink): void {
  out.bulkText('commands');
  out.bulkLatin1(acl.describeCommands(s));
  out.bulkText('keys');
  out.bulkLatin1(acl.describeKeys(s));
  out.bulkText('channels');
  out.bulkLatin1(acl.describeChannels(s));
}

// ACL DELUSER username [username ...]
function deluserCommand(c: Client, argv: Argv, out: ReplySink): void {
  const acl = c.engine.acl;
  for (let i = 2; i < argv.count; i++) {
    if (argv.key(i) === 'default') {
      out.error('ERR The \'default\' user cannot be removed');
      return;
    }
  }
  let n = 0;
  for (let i = 2; i < argv.count; i++) {
    const name = argv.key(i);
    const u = acl.users.get(name);
    if (u !== undefined) {
      // Its SSE streams go too (its connections are closed by the engine).
      c.engine.pubsub.disconnectRevoked(u, () => false);
      acl.deleteUser(name);
      n++;
    }
  }
  if (n > 0) c.engine.aclChanged('');
  out.int(n);
}

function sortedUsers(acl: Acl) {
  return [...acl.users.values()].sort((a, b) => Buffer.compare(Buffer.from(a.name, 'latin1'), Buffer.from(b.name, 'latin1')));
}

// ACL LIST
function listCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const users = sortedUsers(c.engine.acl);
  out.array(users.length);
  for (const u of users) out.bulkLatin1(c.engine.acl.describe(u));
}

// ACL USERS
function usersCommand(c: Client, _argv: Argv, out: ReplySink): void {
  const users = sortedUsers(c.engine.acl);
  out.array(users.length);
  for (const u of users) out.bulkLatin1(u.name);
}

// ACL WHOAMI
function whoamiCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.bulkLatin1(c.user);
}

// ACL CAT [category]
function catCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 3) {
    out.error(subcommandSyntax(argv));
    return;
  }
  if (argv.count === 2) {
    out.array(ACL_CATEGORIES.length);
    for (const cat of ACL_CATEGORIES) out.bulkText(cat);
    return;
  }
  const cat = cstr(argv.key(2)).toLowerCase() as AclCategory; // strcasecmp: a C string
  if (!ACL_CATEGORIES.includes(cat)) {
    out.error(`ERR Unknown category '${cstr(argv.key(2)).slice(0, 128)}'`);
    return;
  }
  const reg = c.engine.registry;
  const names: string[] = [];
  for (const def of reg.all) if (reg.categories(def).includes(cat)) names.push(def.name);
  out.array(names.length);
  for (const n of names) out.bulkText(n);
}

// ACL GENPASS [bits]
function genpassCommand(_c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count > 3) {
    out.error(subcommandSyntax(argv));
    return;
  }
  let bits = 256;
  if (argv.count === 3) {
    const n = argv.int64(2); // a C long: any int64 parses, then the range is checked
    if (n === null) {
      out.error(E.NOT_INTEGER);
      return;
    }
    if (n <= 0n || n > 4096n) {
      out.error('ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096');
      return;
    }
    bits = Number(n);
  }
  out.bulkText(Acl.genpass(bits));
}

// ACL LOG [count | RESET]
function logCommand(c: Client, argv: Argv, out: ReplySink): void {
  const acl = c.engine.acl;
  if (argv.count > 3) {
    out.error(subcommandSyntax(argv));
    return;
  }
  let count = 10;
  if (argv.count === 3) {
    if (cstr(argv.key(2)).toUpperCase() === 'RESET') { // strcasecmp: a C string
      acl.log.length = 0;
      out.ok();
      return;
    }
    const n = argv.int64(2);
    if (n === null) {
      out.error(E.NOT_INTEGER);
      return;
    }
    count = n < 0n ? 0 : n > 128n ? 128 : Number(n); // at most 128 entries are kept
  }
  const entries = acl.log.slice(0, count);
  const now = Date.now();
  out.array(entries.length);
  for (const e of entries) {
    out.map(7);
    out.bulkText('count'); out.int(e.count);
    out.bulkText('reason'); out.bulkText(e.reason);
    out.bulkText('context'); out.bulkText(e.context);
    out.bulkText('object'); out.bulkLatin1(e.object);
    out.bulkText('username'); out.bulkLatin1(e.username);
    // Redis 7.0 shows the age of the last occurrence, as a double ("%.17g").
    out.bulkText('age-seconds'); out.double((now - e.updated) / 1000);
    out.bulkText('client-info'); out.bulkLatin1(e.clientInfo);
  }
}

// ACL DRYRUN username command [arg ...]
function dryrunCommand(c: Client, argv: Argv, out: ReplySink): void {
  const acl = c.engine.acl;
  const u = acl.users.get(argv.key(2));
  if (u === undefined) {
    out.error(`ERR User '${cstr(argv.key(2))}' not found`);
    return;
  }
  const inner = argv.tail(3);
  const def = c.engine.registry.lookup(inner);
  if (def === undefined) {
    out.error(`ERR Command '${cstr(argv.key(3))}' not found`);
    return;
  }
  if ((def.arity > 0 && inner.count !== def.arity) || inner.count < -def.arity) {
    out.error(`ERR wrong number of arguments for '${def.name}' command`);
    return;
  }
  const r = acl.check(u, def, inner);
  if (r === null) out.ok();
  else if (r.reason === 'command') out.bulkText(`This user has no permissions to run the '${def.name}' command`);
  else if (r.reason === 'key') out.bulkLatin1(`This user has no permissions to access the '${inner.key(r.index)}' key`);
  else out.bulkLatin1(`This user has no permissions to access the '${inner.key(r.index)}' channel`);
}

// ACL LOAD / ACL SAVE: there is no ACL file; users persist with the data directory.
function aclFileCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.error('ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.');
}

// ACL RESTTOKEN username password (Upstash)
function resttokenCommand(c: Client, argv: Argv, out: ReplySink): void {
  const token = c.engine.acl.restToken(argv.key(2), argv.view(3).toString('latin1'));
  if (token === null) {
    out.error(E.WRONGPASS);
    return;
  }
  c.engine.aclChanged(argv.key(2));
  out.bulkText(token);
}

// ACL HELP
function helpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  const lines = [
    'ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
    'CAT [<category>]',
    '    List all commands that belong to <category>, or all command categories',
    '    when no category is specified.',
    'DELUSER <username> [<username> ...]',
    '    Delete a list of users.',
    'DRYRUN <username> <command> [<arg> ...]',
    '    Returns whether the user can execute the given command without executing the command.',
    'GETUSER <username>',
    '    Get the user\'s details.',
    'GENPASS [<bits>]',
    '    Generate a secure 256-bit user password. The optional `bits` argument can',
    '    be used to specify a different size.',
    'LIST',
    '    Show users details in config file format.',
    'LOAD',
    '    Reload users from the ACL file.',
    'LOG [<count> | RESET]',
    '    Show the ACL log entries.',
    'SAVE',
    '    Save the current config to the ACL file.',
    'SETUSER <username> <attribute> [<attribute> ...]',
    '    Create or modify a user with the specified attributes.',
    'USERS',
    '    List all the registered usernames.',
    'WHOAMI',
    '    Return the current connection username.',
    'HELP',
    '    Prints this help.',
  ];
  out.array(lines.length);
  for (const l of lines) out.simple(l);
}

const ADMIN = F.ADMIN | F.NOSCRIPT | F.LOADING | F.STALE;
const CONN = F.NOSCRIPT | F.LOADING | F.STALE;
export default family('acl', [], [
  container('acl', -2, 0, [
    //   name         arity  flags               keys       handler
    row('setuser',     -3,   ADMIN,              [0, 0, 0], setuserCommand),
    row('getuser',      3,   ADMIN,              [0, 0, 0], getuserCommand),
    row('deluser',     -3,   ADMIN,              [0, 0, 0], deluserCommand),
    row('list',         2,   ADMIN,              [0, 0, 0], listCommand),
    row('users',        2,   ADMIN,              [0, 0, 0], usersCommand),
    row('whoami',       2,   CONN,               [0, 0, 0], whoamiCommand),
    row('cat',         -2,   CONN,               [0, 0, 0], catCommand),
    row('genpass',     -2,   CONN,               [0, 0, 0], genpassCommand),
    row('log',         -2,   ADMIN,              [0, 0, 0], logCommand),
    row('dryrun',      -4,   ADMIN,              [0, 0, 0], dryrunCommand),
    row('load',         2,   ADMIN,              [0, 0, 0], aclFileCommand),
    row('save',         2,   ADMIN,              [0, 0, 0], aclFileCommand),
    row('resttoken',    4,   ADMIN,              [0, 0, 0], resttokenCommand),
    row('help',         2,   F.LOADING | F.STALE, [0, 0, 0], helpCommand),
  ], (_c, _argv, out) => out.error('ERR wrong number of arguments for \'acl\' command')),
]);
