/**
 * Pub/Sub commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE PUBLISH PUBSUB SSUBSCRIBE
 * SUNSUBSCRIBE SPUBLISH, over the engine's registry (engine/pubsub.ts).
 *
 * A client subscribes through its ClientSubscriber, which writes message frames to the
 * client's asynchronous sink (`c.out`) and asks the transport to flush, as MONITOR does. The
 * client leaves everything at once on disconnect and on RESET. `c.subscriptions` always equals
 * the client's channels + patterns + shard channels: the dispatcher's RESP2 subscribe context
 * and the output-buffer class (pubsub) depend on it.
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import { RespWriter } from '../../resp/writer.js';
import { ReplyMode, type Client } from '../client.js';
import type { Engine } from '../engine.js';
import { F } from '../flags.js';
import { container, family, row } from '../command.js';
import { Kind, subscriptionCounts, type Delivery, type Subscriber } from '../pubsub.js';
import { resetHooks } from './connection.js';
import type { AclUser } from '../acl.js';

/** Messages at least this big are queued by reference, not copied (RespWriter's BIG_VALUE). */
const BIG_MESSAGE = 16 * 1024;
const KIND_NAMES = ['message', 'pmessage', 'smessage'] as const;

/**
 * A connected client as a subscriber.
 *
 * Frames are queued (by reference: each is encoded once per publish and never changes) and
 * written to the client's sink in one go when the publisher's batch of commands is done. The
 * shared reply slab therefore holds each subscriber's messages, and the publisher's replies,
 * as contiguous runs instead of alternating fragments, so a pipelined PUBLISH flood costs one
 * write per connection per batch rather than one iovec per message. Inside EXEC the frame is
 * written at once: a client that subscribes and publishes in one transaction gets the
 * message inside the EXEC reply, where Redis puts it.
 */
class ClientSubscriber implements Subscriber {
  /** Queued output: pairs of (frame or frame head, null or the big message it precedes). */
  private pending: (Buffer | null)[] = [];
  private scheduled = false;
  private readonly drainNow = (): void => {
    this.scheduled = false;
    this.drain();
    if (!this.c.closed) this.c.transport.requestFlush();
  };

  constructor(readonly c: Client) {}

  aclUser(): AclUser {
    return this.c.aclUser;
  }

  /** As CLIENT KILL does. */
  disconnect(): void {
    if (this.c.closed) return;
    this.c.transport.close(false);
    this.c.closed = true;
  }

  deliver(d: Delivery): void {
    const c = this.c;
    // CLIENT REPLY OFF drops pushed messages too (Redis's prepareClientToWrite).
    if (c.closed || c.replyMode === ReplyMode.OFF) return;
    if (!(c.out instanceof RespWriter)) {
      writeElements(c.out, d);
      c.transport.requestFlush();
      return;
    }
    if (d.message.length < BIG_MESSAGE) this.pending.push(d.respFrame(), null);
    else this.pending.push(d.respHead(), d.ownedMessage());
    // Inside EXEC, and to a RESP3 client publishing to itself, Redis writes the message at once:
    // before the EXEC or PUBLISH reply.
    if (c.engine.inExec || c === publisher) {
      this.drain();
      c.transport.requestFlush();
    } else if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.drainNow);
    }
  }

  drainNowIfQueued(): void {
    if (this.pending.length !== 0) this.drain();
  }

  /** Write the queued frames to the client's sink, in order. */
  private drain(): void {
    const q = this.pending;
    if (q.length === 0) return;
    this.pending = [];
    const c = this.c;
    if (c.closed) return;
    const out = c.out as RespWriter;
    for (let i = 0; i < q.length; i += 2) {
      const frame = q[i]!;
      if (out.resp3) {
        // The shared frame starts with "*3\r\n" or "*4\r\n": the same elements as a push.
        out.push(frame[1] - 48);
        out.raw(frame.subarray(4));
      } else out.raw(frame);
      const big = q[i + 1];
      if (big !== null) out.bulk(big!);
    }
  }
}

/** Any sink other than the RESP writer: element by element, with owned copies. */
function writeElements(out: ReplySink, d: Delivery): void {
  out.push(d.pattern === null ? 3 : 4);
  out.bulkText(KIND_NAMES[d.kind]);
  if (d.pattern !== null) out.bulk(Buffer.from(d.pattern));
  out.bulk(Buffer.from(d.channel));
  out.bulk(d.ownedMessage());
}

const subscribers = new WeakMap<Client, ClientSubscriber>();
/** The client running PUBLISH/SPUBLISH (a subscribed RESP3 client gets its own message first). */
let publisher: Client | null = null;

/**
 * Write a client's queued messages to its sink now (its transport sends them): while a script
 * is busy on the engine thread no microtask runs, and Redis delivers messages meanwhile.
 */
export function drainPushed(c: Client): void {
  subscribers.get(c)?.drainNowIfQueued();
}
/** Engines whose client-gone listener is installed (done on first use: the engine is built before any client exists, and it knows nothing of this module). */
const hooked = new WeakSet<Engine>();

function subscriberOf(c: Client): ClientSubscriber {
  let s = subscribers.get(c);
  if (s === undefined) {
    s = new ClientSubscriber(c);
    subscribers.set(c, s);
    const sub = s;
    c.flushPushed = () => sub.drainNowIfQueued();
    const eng = c.engine;
    if (!hooked.has(eng)) {
      hooked.add(eng);
      eng.clientListeners.push(leaveAll);
    }
  }
  return s;
}

subscriptionCounts.of = (c: Client): [number, number, number] => {
  const s = subscribers.get(c);
  if (s === undefined) return [0, 0, 0];
  const ps = c.engine.pubsub;
  return [ps.count(s, Kind.CHANNEL), ps.count(s, Kind.PATTERN), ps.count(s, Kind.SHARD)];
};

/** Disconnect and RESET: leave every channel, pattern and shard channel, silently. */
function leaveAll(c: Client): void {
  const s = subscribers.get(c);
  if (s === undefined) return;
  c.engine.pubsub.drop(s);
  c.subscriptions = 0;
}
resetHooks.push(leaveAll);

/** The count in a confirmation: channels + patterns, or shard channels alone (Redis 7.0). */
function confirmCount(c: Client, s: Subscriber, kind: Kind): number {
  const ps = c.engine.pubsub;
  return kind === Kind.SHARD ? ps.count(s, Kind.SHARD) : ps.count(s, Kind.CHANNEL) + ps.count(s, Kind.PATTERN);
}

function confirm(out: ReplySink, verb: string, name: string | null, count: number): void {
  out.push(3);
  out.bulkText(verb);
  if (name === null) out.nil();
  else out.bulkLatin1(name);
  out.int(count);
}

function subscribeTo(c: Client, argv: Argv, out: ReplySink, kind: Kind, verb: string): void {
  const ps = c.engine.pubsub;
  const s = subscriberOf(c);
  for (let i = 1; i < argv.count; i++) {
    const key = argv.key(i);
    ps.subscribe(s, kind, key);
    c.subscriptions = ps.total(s);
    confirm(out, verb, key, confirmCount(c, s, kind));
  }
}

function unsubscribeFrom(c: Client, argv: Argv, out: ReplySink, kind: Kind, verb: string): void {
  const ps = c.engine.pubsub;
  const s = subscriberOf(c);
  if (argv.count === 1) {
    // No argument: every subscription of this kind, one confirmation each (or one with nil).
    const names = ps.subscriptionsOf(s, kind);
    if (names.length === 0) confirm(out, verb, null, confirmCount(c, s, kind));
    for (const key of names) {
      ps.unsubscribe(s, kind, key);
      c.subscriptions = ps.total(s);
      confirm(out, verb, key, confirmCount(c, s, kind));
    }
    return;
  }
  for (let i = 1; i < argv.count; i++) {
    const key = argv.key(i);
    ps.unsubscribe(s, kind, key);
    c.subscriptions = ps.total(s);
    confirm(out, verb, key, confirmCount(c, s, kind));
  }
}

// SUBSCRIBE channel [channel ...]
function subscribeCommand(c: Client, argv: Argv, out: ReplySink): void {
  subscribeTo(c, argv, out, Kind.CHANNEL, 'subscribe');
}

// UNSUBSCRIBE [channel [channel ...]]
function unsubscribeCommand(c: Client, argv: Argv, out: ReplySink): void {
  unsubscribeFrom(c, argv, out, Kind.CHANNEL, 'unsubscribe');
}

// PSUBSCRIBE pattern [pattern ...]
function psubscribeCommand(c: Client, argv: Argv, out: ReplySink): void {
  subscribeTo(c, argv, out, Kind.PATTERN, 'psubscribe');
}

// PUNSUBSCRIBE [pattern [pattern ...]]
function punsubscribeCommand(c: Client, argv: Argv, out: ReplySink): void {
  unsubscribeFrom(c, argv, out, Kind.PATTERN, 'punsubscribe');
}

// SSUBSCRIBE shardchannel [shardchannel ...]
function ssubscribeCommand(c: Client, argv: Argv, out: ReplySink): void {
  // Redis refuses it for CLIENT_DENY_BLOCKING clients, which includes a running EXEC
  // (SUBSCRIBE and PSUBSCRIBE make an exception for MULTI; SSUBSCRIBE does not).
  if (c.engine.inExec) {
    out.error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
    return;
  }
  subscribeTo(c, argv, out, Kind.SHARD, 'ssubscribe');
}

// SUNSUBSCRIBE [shardchannel [shardchannel ...]]
function sunsubscribeCommand(c: Client, argv: Argv, out: ReplySink): void {
  unsubscribeFrom(c, argv, out, Kind.SHARD, 'sunsubscribe');
}

// PUBLISH channel message
function publishCommand(c: Client, argv: Argv, out: ReplySink): void {
  publisher = c;
  // Views: the registry encodes the frame from them before returning and copies what it keeps.
  const n = c.engine.pubsub.publish(argv.view(1), argv.view(2));
  publisher = null;
  out.int(n);
}

// SPUBLISH shardchannel message
function spublishCommand(c: Client, argv: Argv, out: ReplySink): void {
  publisher = c;
  const n = c.engine.pubsub.spublish(argv.view(1), argv.view(2));
  publisher = null;
  out.int(n);
}

/** CHANNELS / SHARDCHANNELS [pattern]. */
function listChannels(c: Client, argv: Argv, out: ReplySink, kind: Kind): void {
  if (argv.count > 3) {
    out.error(`ERR unknown subcommand or wrong number of arguments for '${argv.key(1)}'. Try PUBSUB HELP.`);
    return;
  }
  const names = c.engine.pubsub.names(kind, argv.count === 3 ? argv.view(2) : null);
  out.array(names.length);
  for (const n of names) out.bulk(n);
}

/** NUMSUB / SHARDNUMSUB [channel ...]. */
function countSubscribers(c: Client, argv: Argv, out: ReplySink, kind: Kind): void {
  const ps = c.engine.pubsub;
  out.array((argv.count - 2) * 2);
  for (let i = 2; i < argv.count; i++) {
    const key = argv.key(i);
    out.bulkLatin1(key);
    out.int(ps.numsub(kind, key));
  }
}

// PUBSUB CHANNELS [pattern]
function channelsCommand(c: Client, argv: Argv, out: ReplySink): void {
  listChannels(c, argv, out, Kind.CHANNEL);
}

// PUBSUB SHARDCHANNELS [pattern]
function shardchannelsCommand(c: Client, argv: Argv, out: ReplySink): void {
  listChannels(c, argv, out, Kind.SHARD);
}

// PUBSUB NUMSUB [channel ...]
function numsubCommand(c: Client, argv: Argv, out: ReplySink): void {
  countSubscribers(c, argv, out, Kind.CHANNEL);
}

// PUBSUB SHARDNUMSUB [shardchannel ...]
function shardnumsubCommand(c: Client, argv: Argv, out: ReplySink): void {
  countSubscribers(c, argv, out, Kind.SHARD);
}

// PUBSUB NUMPAT
function numpatCommand(c: Client, _argv: Argv, out: ReplySink): void {
  out.int(c.engine.pubsub.numpat());
}

const HELP = [
  'PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
  'CHANNELS [<pattern>]',
  "    Return the currently active channels matching a <pattern> (default: '*').",
  'NUMPAT',
  '    Return number of subscriptions to patterns.',
  'NUMSUB [<channel> ...]',
  '    Return the number of subscribers for the specified channels, excluding',
  '    pattern subscriptions(default: no channels).',
  'SHARDCHANNELS [<pattern>]',
  "    Return the currently active shard level channels matching a <pattern> (default: '*').",
  'SHARDNUMSUB [<shardchannel> ...]',
  '    Return the number of subscribers for the specified shard level channel(s)',
  'HELP',
  '    Prints this help.',
];

// PUBSUB HELP
function helpCommand(_c: Client, _argv: Argv, out: ReplySink): void {
  out.array(HELP.length);
  for (const l of HELP) out.simple(l);
}

// PUBSUB <subcommand>: reached only through arity errors (the container needs a subcommand).
function pubsubCommand(_c: Client, _argv: Argv, _out: ReplySink): void {}

// Keyed shard commands: COMMAND INFO lists their channels at key positions (1 -1 1 / 1 1 1).
// The subscribe family is NO_REST: a subscription is a stream, served over HTTP as SSE.
const SUB = F.PUBSUB | F.NOSCRIPT | F.LOADING | F.STALE | F.SUBSCRIBE_CTX | F.NO_REST;
const PUB = F.PUBSUB | F.LOADING | F.STALE | F.FAST;
const INTRO = F.PUBSUB | F.LOADING | F.STALE;
export default family('pubsub', [], [
  //   name             arity  flags                    keys        handler
  row('subscribe',        -2,  SUB,                     [0, 0, 0],  subscribeCommand),
  row('unsubscribe',      -1,  SUB,                     [0, 0, 0],  unsubscribeCommand),
  row('psubscribe',       -2,  SUB,                     [0, 0, 0],  psubscribeCommand),
  row('punsubscribe',     -1,  SUB,                     [0, 0, 0],  punsubscribeCommand),
  row('ssubscribe',       -2,  SUB,                     [1, -1, 1], ssubscribeCommand),
  row('sunsubscribe',     -1,  SUB,                     [1, -1, 1], sunsubscribeCommand),
  row('publish',           3,  PUB,                     [0, 0, 0],  publishCommand),
  row('spublish',          3,  PUB,                     [1, 1, 1],  spublishCommand),
  container('pubsub',     -2,  0, [
    row('channels',       -2,  INTRO,                   [0, 0, 0],  channelsCommand),
    row('numsub',         -2,  INTRO,                   [0, 0, 0],  numsubCommand),
    row('numpat',          2,  INTRO,                   [0, 0, 0],  numpatCommand),
    row('shardchannels',  -2,  INTRO,                   [0, 0, 0],  shardchannelsCommand),
    row('shardnumsub',    -2,  INTRO,                   [0, 0, 0],  shardnumsubCommand),
    row('help',            2,  F.LOADING | F.STALE,     [0, 0, 0],  helpCommand),
  ], pubsubCommand),
]);
