/**
 * Pub/Sub on one connection: confirmations and their counts, unsubscribe-all, the RESP2
 * subscribe context, PUBSUB introspection, PUBLISH without receivers, arity and table rows.
 * (Delivery between connections is tested in test/commands/pubsub.test.ts.)
 */
import type { Script, Step } from '../harness.js';
import { encode } from '../../helpers/resp-client.js';

/** A command that answers with several replies (one confirmation per channel). */
function many(args: Array<string | Buffer>, replies: number, compare?: 'type'): Step {
  return { raw: encode(args), replies, compare };
}

const BIN = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x80, 0x20]);
const CONTEXT_REFUSED = [['GET', 'x'], ['SET', 'x', '1'], ['PUBLISH', 'a', 'm'], ['SPUBLISH', 'a', 'm'],
  ['PUBSUB', 'NUMSUB', 'a'], ['PUBSUB', 'CHANNELS'], ['MULTI'], ['SELECT', '0'], ['ECHO', 'x'],
  // (Not COMMAND COUNT: the RESP3 pass runs these, and the count differs from Redis's.)
  ['DBSIZE'], ['CLIENT', 'GETNAME'], ['EXEC'], ['DISCARD']];

const scripts: Script[] = [
  { name: 'SUBSCRIBE confirms each channel with the running count', steps: [
    many(['SUBSCRIBE', 'a', 'b', 'a'], 3),
    many(['subscribe', 'c'], 1),
    many(['PSUBSCRIBE', 'p*', 'q?', 'p*'], 3),
    many(['SSUBSCRIBE', 's1', 's2', 's1'], 3),
    many(['SUBSCRIBE', 'd'], 1),
  ] },
  { name: 'UNSUBSCRIBE of named channels, subscribed or not', steps: [
    many(['SUBSCRIBE', 'a', 'b'], 2),
    many(['PSUBSCRIBE', 'p*'], 1),
    many(['UNSUBSCRIBE', 'zz', 'a', 'a'], 3),
    many(['PUNSUBSCRIBE', 'nope', 'p*'], 2),
    many(['UNSUBSCRIBE', 'b'], 1),
    ['GET', 'x'],
  ] },
  { name: 'unsubscribe-all when there is nothing: one reply with nil', steps: [
    ['UNSUBSCRIBE'], ['PUNSUBSCRIBE'], ['SUNSUBSCRIBE'], ['GET', 'x'],
  ] },
  { name: 'unsubscribe-all with nothing of that kind counts the other kinds', steps: [
    many(['PSUBSCRIBE', 'x'], 1),
    ['UNSUBSCRIBE'],
    many(['SSUBSCRIBE', 's'], 1),
    ['PUNSUBSCRIBE'],
    ['SUNSUBSCRIBE'],
    ['GET', 'x'],
  ] },
  { name: 'unsubscribe-all of one channel, one pattern, one shard channel', steps: [
    many(['SUBSCRIBE', 'a'], 1), ['UNSUBSCRIBE'],
    many(['PSUBSCRIBE', 'a*'], 1), ['PUNSUBSCRIBE'],
    many(['SSUBSCRIBE', 'sa'], 1), ['SUNSUBSCRIBE'],
    ['PUBSUB', 'NUMPAT'],
  ] },
  { name: 'PUNSUBSCRIBE with no argument leaves patterns in subscription order', steps: [
    many(['PSUBSCRIBE', 'b*', 'a*', 'c?'], 3),
    many(['PUNSUBSCRIBE'], 3),
    ['PUBSUB', 'NUMPAT'],
  ] },
  { name: 'UNSUBSCRIBE with no argument leaves every channel (order is a hash order in Redis)', steps: [
    many(['SUBSCRIBE', 'a', 'b', 'c'], 3),
    many(['UNSUBSCRIBE'], 3, 'type'),
    ['PUBSUB', 'NUMSUB', 'a', 'b', 'c'],
    many(['SSUBSCRIBE', 'x', 'y'], 2),
    many(['SUNSUBSCRIBE'], 2, 'type'),
    ['PUBSUB', 'SHARDNUMSUB', 'x', 'y'],
    ['UNSUBSCRIBE'],
  ] },
  { name: 'the count runs down to zero and the client leaves the subscribe context', steps: [
    many(['SUBSCRIBE', 'a'], 1), many(['PSUBSCRIBE', 'b'], 1), many(['SSUBSCRIBE', 'c'], 1),
    many(['UNSUBSCRIBE', 'a'], 1), ['GET', 'x'],
    many(['PUNSUBSCRIBE', 'b'], 1), ['GET', 'x'],
    many(['SUNSUBSCRIBE', 'c'], 1), ['GET', 'x'],
  ] },
  { name: 'commands refused in the subscribe context', steps: [
    many(['SUBSCRIBE', 'a'], 1),
    ...CONTEXT_REFUSED,
    ['PING'], ['PING', 'hello'], ['ping', 'a', 'b'],
    ['NOSUCHCMD', 'x'], ['SUBSCRIBE'], ['GET'],
    many(['SUBSCRIBE', 'b'], 1),
    ['UNSUBSCRIBE', 'a'],
  ] },
  { name: 'refused in a pattern-only and in a shard-only subscribe context', steps: [
    many(['PSUBSCRIBE', 'a*'], 1), ['GET', 'x'], ['PUNSUBSCRIBE'],
    many(['SSUBSCRIBE', 'a'], 1), ['GET', 'x'], ['PUBLISH', 'a', 'b'], ['SUNSUBSCRIBE'], ['GET', 'x'],
  ] },
  { name: 'RESET leaves every subscription silently', steps: [
    many(['SUBSCRIBE', 'a', 'b'], 2), many(['PSUBSCRIBE', 'p*'], 1), many(['SSUBSCRIBE', 's'], 1),
    ['RESET'],
    ['GET', 'x'],
    ['PUBSUB', 'NUMSUB', 'a', 'b'], ['PUBSUB', 'NUMPAT'], ['PUBSUB', 'SHARDNUMSUB', 's'],
    ['PUBSUB', 'CHANNELS'], ['PUBSUB', 'SHARDCHANNELS'],
    ['PUBLISH', 'a', 'x'],
    ['UNSUBSCRIBE'],
  ] },
  { name: 'PUBSUB on an idle server', steps: [
    ['PUBSUB', 'CHANNELS'], ['PUBSUB', 'CHANNELS', '*'], ['pubsub', 'channels', 'a*'],
    ['PUBSUB', 'NUMSUB'], ['PUBSUB', 'NUMSUB', 'a', 'b', 'a'], ['PUBSUB', 'NUMPAT'],
    ['PUBSUB', 'SHARDCHANNELS'], ['PUBSUB', 'SHARDCHANNELS', 'x'], ['PUBSUB', 'SHARDNUMSUB'],
    ['PUBSUB', 'SHARDNUMSUB', 'x', BIN],
  ] },
  { name: 'PUBSUB errors and HELP', steps: [
    ['PUBSUB'], ['PUBSUB', 'HELP'], ['pubsub', 'help'], ['PUBSUB', 'HELP', 'x'],
    ['PUBSUB', 'NUMPAT', 'x'], ['PUBSUB', 'nosuch'], ['PUBSUB', 'nosuch', 'a', 'b'],
    ['PUBSUB', 'CHANNELS', 'a', 'b'], ['pubsub', 'channels', 'a', 'b'],
    ['PUBSUB', 'SHARDCHANNELS', 'a', 'b'], ['PUBSUB', 'ShardChannels', 'a', 'b', 'c'],
  ] },
  { name: 'PUBLISH and SPUBLISH with no subscribers', steps: [
    ['PUBLISH', 'a', 'hello'], ['PUBLISH', BIN, BIN], ['PUBLISH', '', ''],
    ['SPUBLISH', 'a', 'hello'], ['spublish', BIN, 'x'],
  ] },
  { name: 'wrong arity', steps: [
    ['PUBLISH'], ['PUBLISH', 'a'], ['PUBLISH', 'a', 'b', 'c'], ['SPUBLISH', 'a'],
    ['SPUBLISH', 'a', 'b', 'c'], ['SUBSCRIBE'], ['PSUBSCRIBE'], ['SSUBSCRIBE'],
  ] },
  { name: 'binary channel names and patterns are exact', steps: [
    many(['SUBSCRIBE', BIN, Buffer.from('caf\xc3\xa9', 'latin1')], 2),
    many(['PSUBSCRIBE', Buffer.from([0x2a, 0x00, 0xfe])], 1),
    many(['SSUBSCRIBE', BIN], 1),
    many(['UNSUBSCRIBE', BIN], 1),
    many(['PUNSUBSCRIBE', Buffer.from([0x2a, 0x00, 0xfe])], 1),
    many(['SUNSUBSCRIBE', BIN], 1),
    many(['UNSUBSCRIBE'], 1),
  ] },
  { name: 'SUBSCRIBE and PSUBSCRIBE inside MULTI; SSUBSCRIBE refused in EXEC', steps: [
    ['MULTI'], ['SUBSCRIBE', 'a', 'b'], ['PSUBSCRIBE', 'p*'], ['SSUBSCRIBE', 's'],
    ['SUNSUBSCRIBE'], ['EXEC'],
    ['GET', 'x'],
    many(['UNSUBSCRIBE', 'a', 'b'], 2),
    many(['PUNSUBSCRIBE'], 1),
    ['GET', 'x'],
  ] },
  { name: 'introspection inside MULTI sees the subscriptions made before it', steps: [
    ['MULTI'], ['SUBSCRIBE', 'a', BIN], ['PSUBSCRIBE', 'x*', 'y*'], ['PUBSUB', 'NUMSUB', 'a', BIN, 'c'],
    ['PUBSUB', 'NUMPAT'], ['PUBSUB', 'CHANNELS', 'a*'], ['UNSUBSCRIBE', 'a'], ['PUBSUB', 'CHANNELS', 'a*'],
    ['EXEC'],
    many(['UNSUBSCRIBE'], 1),
    many(['PUNSUBSCRIBE'], 2),
  ] },
  { name: 'PUBLISH to itself inside MULTI: the message lands inside the EXEC reply, as in Redis', steps: [
    ['MULTI'], ['SUBSCRIBE', 'a'], ['PSUBSCRIBE', 'a*'], ['PUBLISH', 'a', 'hello'], ['SPUBLISH', 'a', 'x'],
    many(['EXEC'], 3),
    many(['UNSUBSCRIBE'], 1),
    many(['PUNSUBSCRIBE'], 1),
  ] },
  { name: 'COMMAND INFO rows (pub/sub commands without key specs)', steps: [
    ['COMMAND', 'INFO', 'subscribe', 'unsubscribe', 'psubscribe', 'punsubscribe', 'publish'],
    ['COMMAND', 'INFO', 'pubsub|channels', 'pubsub|numsub', 'pubsub|numpat'],
    ['COMMAND', 'INFO', 'pubsub|shardchannels', 'pubsub|shardnumsub', 'pubsub|help'],
  ] },
];
export default scripts;
