/**
 * Server commands: DBSIZE FLUSHDB FLUSHALL INFO TIME CONFIG MONITOR LASTSAVE DEBUG SHUTDOWN ...
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import type { Client } from '../client.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';

// DBSIZE
function dbsizeCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.int(c.db.size);
}

// FLUSHALL [ASYNC|SYNC]
function flushallCommand(c: Client, _argv: Argv, out: ReplySink): void {
  for (const db of c.engine.dbs) db.flush();
  out.ok();
}

export default family('server', [], [
  //   name        arity  flags                          keys       handler
  row('dbsize',      1,   F.READONLY | F.FAST,           [0, 0, 0], dbsizeCommand, { categories: ['keyspace'] }),
  row('flushall',   -1,   F.WRITE,                       [0, 0, 0], flushallCommand, { categories: ['keyspace', 'dangerous'] }),
]);
