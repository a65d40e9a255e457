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
import hash from './hash.js';
import list from './list.js';
import set from './set.js';
import server from './server.js';
import acl from './acl.js';
import sortedSet from './sorted-set.js';
import bitmap from './bitmap.js';
import hyperloglog from './hyperloglog.js';
import pubsub from './pubsub.js';
import client from './client.js';
import json from './json.js';
import sort from './sort.js';
import geo from './geo.js';
import scripting from './scripting.js';
import stream from './stream.js';
import memory from './memory.js';
import dump, { replication } from './dump.js';
import latency from './latency.js';
import search from './search.js';
import lolwut from './lolwut.js';

export const FAMILIES: readonly Family[] = [
  connection,
  introspection,
  transactions,
  string,
  generic,
  hash,
  list,
  set,
  server,
  acl,
  sortedSet,
  bitmap,
  hyperloglog,
  pubsub,
  client,
  json,
  sort,
  geo,
  scripting,
  stream,
  memory,
  dump,
  replication,
  latency,
  search,
  lolwut,
];
