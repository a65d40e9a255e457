/**
 * Error reply texts, exactly as Redis 7 words them ("CODE message", without the leading '-').
 * Clients and the Upstash SDK match on these strings, so keep the wording byte-exact.
 */
import type { Argv } from './argv.js';
import { cstr } from '../bytes.js';

export const E = {
  SYNTAX: 'ERR syntax error',
  WRONGTYPE: 'WRONGTYPE Operation against a key holding the wrong kind of value',
  NOT_INTEGER: 'ERR value is not an integer or out of range',
  NOT_FLOAT: 'ERR value is not a valid float',
  OVERFLOW: 'ERR increment or decrement would overflow',
  INCR_NAN: 'ERR increment would produce NaN or Infinity',
  NO_KEY: 'ERR no such key',
  OUT_OF_RANGE: 'ERR index out of range',
  DB_INDEX: 'ERR DB index is out of range',
  INVALID_DB: 'ERR invalid DB index',
  SAME_OBJECT: 'ERR source and destination objects are the same',
  NOAUTH: 'NOAUTH Authentication required.',
  WRONGPASS: 'WRONGPASS invalid username-password pair or user is disabled.',
  EXECABORT: 'EXECABORT Transaction discarded because of previous errors.',
  NESTED_MULTI: 'ERR MULTI calls can not be nested',
  EXEC_NO_MULTI: 'ERR EXEC without MULTI',
  DISCARD_NO_MULTI: 'ERR DISCARD without MULTI',
  WATCH_IN_MULTI: 'ERR WATCH inside MULTI is not allowed',
  NOT_IN_MULTI: 'ERR Command not allowed inside a transaction',
  INVALID_EXPIRE: (cmd: string) => `ERR invalid expire time in '${cmd}' command`,
  INTERNAL: 'ERR internal error',
  MAX_CLIENTS: 'ERR max number of clients reached',
  CLIENT_NAME: 'ERR Client names cannot contain spaces, newlines or special characters.',
} as const;

/**
 * Redis's addReplySubcommandSyntaxError: argv[1] as typed (a C string, at most 128 bytes), the
 * command upper-cased.
 */
export function subcommandSyntax(argv: Argv): string {
  return `ERR unknown subcommand or wrong number of arguments for '${cstr(argv.key(1)).slice(0, 128)}'. Try ${argv.key(0).toUpperCase()} HELP.`;
}

/** ERR wrong number of arguments for '<name>' command */
export function wrongArity(name: string): string {
  return `ERR wrong number of arguments for '${name}' command`;
}

/**
 * ERR unknown command '<name>', with args beginning with: '<a>' '<b>'
 * Redis prints the name with %.128s and keeps appending quoted args while the list stays
 * under 128 characters.
 */
export function unknownCommand(name: string, args: string[]): string {
  let list = '';
  for (const a of args) {
    if (list.length >= 128) break;
    list += `'${a.slice(0, 128 - list.length)}' `;
  }
  return `ERR unknown command '${name.slice(0, 128)}', with args beginning with: ${list}`;
}

/** ERR unknown subcommand '<sub>'. Try <CMD> HELP. */
export function unknownSubcommand(cmd: string, sub: string): string {
  return `ERR unknown subcommand '${sub.slice(0, 128)}'. Try ${cmd.toUpperCase()} HELP.`;
}

/** Thrown by deep validation code; the dispatcher catches it and replies with `message`. */
export class CommandError extends Error {}
