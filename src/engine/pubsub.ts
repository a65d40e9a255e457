/**
 * Pub/Sub registry (Redis pubsub.c analogue), owned by the engine as `engine.pubsub`.
 *
 * It knows nothing about connections: a Subscriber is anything with a `deliver()` method, so a
 * TCP client (commands/pubsub.ts), and later an HTTP SSE stream, subscribe the same way and
 * PUBLISH counts them all. Three namespaces, as in Redis 7: channels, patterns, and shard
 * channels (SSUBSCRIBE/SPUBLISH; in standalone mode they are simply a separate set of channels).
 *
 * Names are bytes, held as latin1-string Map keys (one char per byte, exact) like the keyspace;
 * each topic also keeps its name as a Buffer, built once when the topic appears, for frames and
 * glob matching. Delivery order follows Redis: channel subscribers in subscription order, then
 * each matching pattern (in the order patterns first appeared) with its subscribers.
 *
 * PUBLISH is a hot path: the message frame is encoded once per publish (once per matching
 * pattern for pmessage frames) and copied as bytes to every subscriber; nothing is converted
 * per subscriber, and a publish that nobody hears allocates nothing.
 */
import { globMatch } from './glob.js';
import type { AclUser } from './acl.js';
import type { Client } from './client.js';

/**
 * A client's channel, pattern and shard-channel subscription counts (CLIENT LIST sub, psub,
 * ssub), installed by the pub/sub commands (which own the client -> subscriber map).
 */
export const subscriptionCounts: { of: ((c: Client) => [number, number, number]) | null } = { of: null };

/** The three subscription namespaces. */
export const Kind = { CHANNEL: 0, PATTERN: 1, SHARD: 2 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/** What a delivery is, as the first element of the Redis frame says. */
export const MessageKind = { MESSAGE: 0, PMESSAGE: 1, SMESSAGE: 2 } as const;
export type MessageKind = (typeof MessageKind)[keyof typeof MessageKind];

/** Anything that receives published messages (TCP client, SSE stream...). */
export interface Subscriber {
  /**
   * One message. `d`, `d.channel` and `d.message` are valid only during the call (they may be
   * views of the publisher's input); what respFrame(), respHead(), ownedMessage() and
   * encode() return is owned and immutable, and may be kept (queued for a later write).
   */
  deliver(d: Delivery): void;
  /** The ACL user the subscriptions were made as, when ACL channel rules apply to it. */
  aclUser?(): AclUser | null;
  /** End the subscriber's connection (its user lost the right to a channel it listens to). */
  disconnect?(): void;
}

/** A transport-specific encoding of a delivery (SSE event...), cached per delivery. */
export type Encoder = (d: Delivery) => Buffer;

/** One channel, pattern or shard channel and its subscribers (in subscription order). */
export class Topic {
  readonly subs = new Set<Subscriber>();
  constructor(readonly key: string, readonly name: Buffer) {}
}

const KIND_NAMES = [Buffer.from('message'), Buffer.from('pmessage'), Buffer.from('smessage')];

/**
 * One published message as seen by the subscribers of one topic. The registry reuses it for
 * every matching pattern (changing `kind`/`pattern`), so each encoding is built at most once
 * per topic, whatever the number of subscribers.
 */
export class Delivery {
  kind: MessageKind;
  /** The matching pattern for PMESSAGE deliveries, else null. */
  pattern: Buffer | null = null;
  private frame: Buffer | null = null;
  private head: Buffer | null = null;
  private owned: Buffer | null = null;
  private memoEnc: Encoder | null = null;
  private memoBuf: Buffer | null = null;

  constructor(kind: MessageKind, readonly channel: Buffer, readonly message: Buffer) {
    this.kind = kind;
  }

  /** The complete RESP2 frame: *3 message <channel> <msg> (or *4 pmessage <pattern> ...). */
  respFrame(): Buffer {
    if (this.frame === null) this.frame = this.encodeResp(true);
    return this.frame;
  }

  /**
   * The frame up to (not including) the message bulk string: for big messages, which a
   * writer queues by reference instead of copying (see RespWriter.bulk).
   */
  respHead(): Buffer {
    if (this.head === null) this.head = this.encodeResp(false);
    return this.head;
  }

  /** One allocation, no intermediate strings. */
  private encodeResp(withMessage: boolean): Buffer {
    const kind = KIND_NAMES[this.kind];
    const pat = this.pattern;
    const ch = this.channel;
    const m = this.message;
    let n = 4 + bulkSize(kind.length) + bulkSize(ch.length);
    if (pat !== null) n += bulkSize(pat.length);
    if (withMessage) n += bulkSize(m.length);
    const b = Buffer.allocUnsafe(n);
    b[0] = 0x2a; // *
    b[1] = pat === null ? 0x33 : 0x34;
    let p = crlf(b, 2);
    p = putBulk(b, p, kind);
    if (pat !== null) p = putBulk(b, p, pat);
    p = putBulk(b, p, ch);
    if (withMessage) putBulk(b, p, m);
    return b;
  }

  /** An owned copy of the message (made at most once per publish), safe to keep. */
  ownedMessage(): Buffer {
    if (this.owned === null) this.owned = Buffer.from(this.message);
    return this.owned;
  }

  /** Another transport's encoding (SSE event...), built once per topic for one encoder. */
  encode(enc: Encoder): Buffer {
    if (this.memoEnc !== enc || this.memoBuf === null) {
      this.memoBuf = enc(this);
      this.memoEnc = enc;
    }
    return this.memoBuf;
  }

  /** Switch to the subscribers of a matching pattern: encodings are rebuilt on demand. */
  forPattern(pattern: Buffer): void {
    this.kind = MessageKind.PMESSAGE;
    this.pattern = pattern;
    this.frame = null;
    this.head = null;
    this.memoBuf = null;
  }
}

function crlf(b: Buffer, p: number): number {
  b[p] = 13;
  b[p + 1] = 10;
  return p + 2;
}

function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/** Bytes of "$<len>\r\n<bytes>\r\n". */
function bulkSize(len: number): number {
  return 1 + digits(len) + 2 + len + 2;
}

/** Write "$<len>\r\n<bytes>\r\n" at p; returns the new position. */
function putBulk(b: Buffer, p: number, v: Uint8Array): number {
  b[p++] = 0x24; // $
  let len = v.length;
  const d = digits(len);
  for (let i = p + d - 1; i >= p; i--) {
    b[i] = 0x30 + (len % 10);
    len = Math.floor(len / 10);
  }
  p = crlf(b, p + d);
  b.set(v, p);
  return crlf(b, p + v.length);
}

type Subscriptions = [channels: Map<string, Topic>, patterns: Map<string, Topic>, shards: Map<string, Topic>];

export class PubSub {
  /** Topics by namespace (Kind): name -> subscribers. A topic exists while it has one. */
  private readonly topics: [Map<string, Topic>, Map<string, Topic>, Map<string, Topic>] = [new Map(), new Map(), new Map()];
  /** Each subscriber's own subscriptions, by namespace, in subscription order. */
  private readonly subscribers = new Map<Subscriber, Subscriptions>();

  /** Subscribe `s` to a channel/pattern/shard channel; false if it already was. */
  subscribe(s: Subscriber, kind: Kind, key: string): boolean {
    let mine = this.subscribers.get(s);
    if (mine === undefined) {
      mine = [new Map(), new Map(), new Map()];
      this.subscribers.set(s, mine);
    }
    if (mine[kind].has(key)) return false;
    const all = this.topics[kind];
    let t = all.get(key);
    if (t === undefined) {
      t = new Topic(key, Buffer.from(key, 'latin1'));
      all.set(key, t);
    }
    t.subs.add(s);
    mine[kind].set(key, t);
    return true;
  }

  /** Unsubscribe `s` from one name; false if it was not subscribed. */
  unsubscribe(s: Subscriber, kind: Kind, key: string): boolean {
    const mine = this.subscribers.get(s);
    if (mine === undefined) return false;
    const t = mine[kind].get(key);
    if (t === undefined) return false;
    mine[kind].delete(key);
    t.subs.delete(s);
    if (t.subs.size === 0) this.topics[kind].delete(key);
    if (mine[0].size + mine[1].size + mine[2].size === 0) this.subscribers.delete(s);
    return true;
  }

  /**
   * Redis's ACLKillPubsubClientsIfNeeded: disconnect the subscribers of `user` with a
   * subscription that `allowed` no longer lets through (patterns are compared literally).
   */
  disconnectRevoked(user: AclUser, allowed: (name: Buffer, literal: boolean) => boolean): void {
    const doomed: Subscriber[] = [];
    for (const [s, mine] of this.subscribers) {
      if (s.aclUser === undefined || s.aclUser() !== user) continue;
      let kill = false;
      for (const t of mine[Kind.PATTERN].values()) if (!kill && !allowed(t.name, true)) kill = true;
      for (const t of mine[Kind.CHANNEL].values()) if (!kill && !allowed(t.name, false)) kill = true;
      for (const t of mine[Kind.SHARD].values()) if (!kill && !allowed(t.name, false)) kill = true;
      if (kill) doomed.push(s);
    }
    for (const s of doomed) s.disconnect?.();
  }

  /** The names `s` is subscribed to in one namespace, in subscription order (a snapshot). */
  subscriptionsOf(s: Subscriber, kind: Kind): string[] {
    const mine = this.subscribers.get(s);
    return mine === undefined ? [] : [...mine[kind].keys()];
  }

  /** Number of subscriptions of `s` in one namespace. */
  count(s: Subscriber, kind: Kind): number {
    const mine = this.subscribers.get(s);
    return mine === undefined ? 0 : mine[kind].size;
  }

  /** Channels + patterns + shard channels of `s`. */
  total(s: Subscriber): number {
    const mine = this.subscribers.get(s);
    return mine === undefined ? 0 : mine[0].size + mine[1].size + mine[2].size;
  }

  /** Leave everything at once, silently (disconnect, RESET, closed SSE stream). */
  drop(s: Subscriber): void {
    const mine = this.subscribers.get(s);
    if (mine === undefined) return;
    this.subscribers.delete(s);
    for (let kind = 0; kind < 3; kind++) {
      const all = this.topics[kind];
      for (const t of mine[kind].values()) {
        t.subs.delete(s);
        if (t.subs.size === 0) all.delete(t.key);
      }
    }
  }

  /**
   * PUBLISH: deliver to the channel's subscribers, then to every matching pattern's. Returns
   * the number of receivers as Redis counts them (a client subscribed to the channel and to
   * two matching patterns counts, and receives, three times). `channel` and `message` may be
   * borrowed views: subscribers copy what they keep.
   */
  publish(channel: Buffer, message: Buffer): number {
    const channels = this.topics[Kind.CHANNEL];
    const patterns = this.topics[Kind.PATTERN];
    let n = 0;
    let d: Delivery | null = null;
    if (channels.size !== 0) {
      const t = channels.get(channel.latin1Slice(0, channel.length));
      if (t !== undefined) {
        d = new Delivery(MessageKind.MESSAGE, channel, message);
        for (const s of t.subs) {
          s.deliver(d);
          n++;
        }
      }
    }
    if (patterns.size !== 0) {
      for (const t of patterns.values()) {
        if (!globMatch(t.name, channel)) continue;
        if (d === null) d = new Delivery(MessageKind.PMESSAGE, channel, message);
        d.forPattern(t.name);
        for (const s of t.subs) {
          s.deliver(d);
          n++;
        }
      }
    }
    return n;
  }

  /** SPUBLISH: shard channels have no patterns. */
  spublish(channel: Buffer, message: Buffer): number {
    const shards = this.topics[Kind.SHARD];
    if (shards.size === 0) return 0;
    const t = shards.get(channel.latin1Slice(0, channel.length));
    if (t === undefined) return 0;
    const d = new Delivery(MessageKind.SMESSAGE, channel, message);
    let n = 0;
    for (const s of t.subs) {
      s.deliver(d);
      n++;
    }
    return n;
  }

  /** Subscribers of one channel or shard channel (PUBSUB NUMSUB / SHARDNUMSUB). */
  numsub(kind: Kind, key: string): number {
    return this.topics[kind].get(key)?.subs.size ?? 0;
  }

  /** Distinct patterns with at least one subscriber (PUBSUB NUMPAT, Redis 7 semantics). */
  numpat(): number {
    return this.topics[Kind.PATTERN].size;
  }

  /** Active channel (or shard channel) names, optionally filtered by a glob pattern. */
  names(kind: Kind, pattern: Buffer | null): Buffer[] {
    const out: Buffer[] = [];
    for (const t of this.topics[kind].values()) {
      if (pattern === null || globMatch(pattern, t.name)) out.push(t.name);
    }
    return out;
  }
}
