/**
 * Command flags, as Redis defines them (src/server.h, the comment above struct redisCommand):
 *
 *  WRITE        may modify the keyspace.                              -> @write
 *  READONLY     only reads the keyspace.                              -> @read
 *  DENYOOM      may grow memory: refused when over maxmemory.
 *  ADMIN        administrative; implies NOSCRIPT.                     -> @admin @dangerous
 *  PUBSUB       pub/sub related.                                      -> @pubsub
 *  NOSCRIPT     not allowed from scripts.
 *  BLOCKING     may block the client.                                 -> @blocking
 *  LOADING      allowed while the dataset loads.
 *  STALE        allowed on a stale replica.
 *  SKIP_MONITOR not shown to MONITOR clients.
 *  SKIP_SLOWLOG not logged to the slowlog.
 *  FAST         O(1) or O(log N); absence means @slow.                -> @fast / @slow
 *  NO_AUTH      allowed before authentication.
 *  MAY_REPLICATE may produce replication traffic.
 *  NO_MULTI     refused inside MULTI.
 *  MOVABLE_KEYS key positions depend on the arguments (getKeys given).
 *  ALLOW_BUSY   allowed while a script is busy.
 *  NO_MANDATORY_KEYS may take keys but may also be called with none (EVAL, FCALL).
 *  SUBSCRIBE_CTX allowed in RESP2 subscribe mode (our own bit; not shown by COMMAND).
 *  NO_REST      refused over the REST API (our own bit; blocking and connection-state commands).
 */
export const F = {
  WRITE: 1 << 0,
  READONLY: 1 << 1,
  DENYOOM: 1 << 2,
  ADMIN: 1 << 3,
  PUBSUB: 1 << 4,
  NOSCRIPT: 1 << 5,
  BLOCKING: 1 << 6,
  LOADING: 1 << 7,
  STALE: 1 << 8,
  SKIP_MONITOR: 1 << 9,
  SKIP_SLOWLOG: 1 << 10,
  FAST: 1 << 11,
  NO_AUTH: 1 << 12,
  MAY_REPLICATE: 1 << 13,
  NO_MULTI: 1 << 14,
  MOVABLE_KEYS: 1 << 15,
  ALLOW_BUSY: 1 << 16,
  SUBSCRIBE_CTX: 1 << 17,
  NO_REST: 1 << 18,
  NO_MANDATORY_KEYS: 1 << 19,
} as const;

/** Flag names in the order Redis prints them in COMMAND replies. */
export const FLAG_NAMES: ReadonlyArray<readonly [number, string]> = [
  [F.WRITE, 'write'],
  [F.READONLY, 'readonly'],
  [F.DENYOOM, 'denyoom'],
  [F.ADMIN, 'admin'],
  [F.PUBSUB, 'pubsub'],
  [F.NOSCRIPT, 'noscript'],
  [F.BLOCKING, 'blocking'],
  [F.LOADING, 'loading'],
  [F.STALE, 'stale'],
  [F.SKIP_MONITOR, 'skip_monitor'],
  [F.SKIP_SLOWLOG, 'skip_slowlog'],
  [F.FAST, 'fast'],
  [F.NO_AUTH, 'no_auth'],
  [F.MAY_REPLICATE, 'may_replicate'],
  [F.NO_MANDATORY_KEYS, 'no_mandatory_keys'],
  [F.NO_MULTI, 'no_multi'],
  [F.MOVABLE_KEYS, 'movablekeys'],
  [F.ALLOW_BUSY, 'allow_busy'],
];

/** ACL categories in the order Redis prints them (ACLCommandCategories). */
export const ACL_CATEGORIES = [
  'keyspace', 'read', 'write', 'set', 'sortedset', 'list', 'hash', 'string', 'bitmap',
  'hyperloglog', 'geo', 'stream', 'pubsub', 'admin', 'fast', 'slow', 'blocking', 'dangerous',
  'connection', 'transaction', 'scripting',
] as const;
export type AclCategory = (typeof ACL_CATEGORIES)[number];

/** Flags implied by others (dragonfly's ImplicitCategories idea, Redis's rules). */
export function impliedFlags(flags: number): number {
  if (flags & F.ADMIN) flags |= F.NOSCRIPT;
  return flags;
}

/** ACL categories of a command: its family's categories plus those its flags imply. */
export function aclCategories(flags: number, family: readonly AclCategory[]): Set<AclCategory> {
  const cats = new Set<AclCategory>(family);
  if (flags & F.WRITE) cats.add('write');
  if (flags & F.READONLY && !family.includes('scripting')) cats.add('read');
  if (flags & F.ADMIN) {
    cats.add('admin');
    cats.add('dangerous');
  }
  if (flags & F.PUBSUB) cats.add('pubsub');
  if (flags & F.FAST) cats.add('fast');
  if (flags & F.BLOCKING) cats.add('blocking');
  if (!(flags & F.FAST)) cats.add('slow');
  return cats;
}
