/**
 * String commands. Values are immutable Buffers: every change builds a new Buffer, so the
 * writer may send a stored value by reference.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { E } from '../../resp/errors.js';
import type { Client } from '../client.js';
import { T } from '../db.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';

// GET key
function getCommand(c: Client, argv: Argv, out: ReplySink): void {
  const e = c.db.read(argv.key(1), !c.noTouch);
  if (e === undefined) out.nil();
  else if (e.value instanceof Uint8Array) out.bulk(e.value);
  else out.error(E.WRONGTYPE);
}

// SET key value (options to come)
function setCommand(c: Client, argv: Argv, out: ReplySink): void {
  if (argv.count !== 3) {
    out.error(E.SYNTAX);
    return;
  }
  c.db.set(argv.key(1), argv.copy(2));
  out.ok();
}

void T;
export default family('string', ['string'], [
  //   name       arity  flags                          keys        handler
  row('get',        2,   F.READONLY | F.FAST,           [1, 1, 1],  getCommand),
  row('set',       -3,   F.WRITE | F.DENYOOM,           [1, 1, 1],  setCommand),
]);
