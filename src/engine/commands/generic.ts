/**
 * Keyspace commands (Redis's "generic" group).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';

// DEL key [key ...]
function delCommand(c: Client, argv: Argv, out: ReplySink): void {
  const db = c.db;
  let n = 0;
  for (let i = 1; i < argv.count; i++) if (db.has(argv.key(i)) && db.delete(argv.key(i))) n++;
  out.int(n);
}

export default family('generic', ['keyspace'], [
  //   name       arity  flags                          keys        handler
  row('del',       -2,   F.WRITE,                       [1, -1, 1], delCommand),
]);
