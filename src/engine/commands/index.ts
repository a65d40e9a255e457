/**
 * The command families, listed explicitly and in order (dragonfly's RegisterCommands style):
 * adding a family means adding it here.
 */
import type { Family } from '../command.js';
import connection from './connection.js';
import introspection from './introspection.js';
import transactions from './transactions.js';
import string from './string.js';
import generic from './generic.js';
import server from './server.js';
import client from './client.js';

export const FAMILIES: readonly Family[] = [
  connection,
  introspection,
  transactions,
  string,
  generic,
  server,
  client,
];
