/**
 * Keyspace notifications (Redis notify.c): `notify-keyspace-events` and the events commands,
 * expiry and eviction publish on __keyspace@<db>__:<key> and __keyevent@<db>__:<event>,
 * through the ordinary pub/sub layer (TCP subscribers and REST SSE streams alike).
 *
 * perf: with notifications off (the default) an event costs one bit test on Engine.notifyFlags;
 * handlers call `keyEvent` next to their change signal (Db.modified), as Redis calls
 * notifyKeyspaceEvent next to signalModifiedKey.
 */
import type { Engine } from './engine.js';
import type { Client } from './client.js';

/** Event classes (Redis's NOTIFY_* bits). */
export const N = {
  KEYSPACE: 1 << 0, // K
  KEYEVENT: 1 << 1, // E
  GENERIC: 1 << 2, // g
  STRING: 1 << 3, // $
  LIST: 1 << 4, // l
  SET: 1 << 5, // s
  HASH: 1 << 6, // h
  ZSET: 1 << 7, // z
  EXPIRED: 1 << 8, // x
  EVICTED: 1 << 9, // e
  STREAM: 1 << 10, // t
  KEY_MISS: 1 << 11, // m
  LOADED: 1 << 12, // module key-loaded events (no letter)
  MODULE: 1 << 13, // d
  NEW: 1 << 14, // n
} as const;

/** The `A` alias: every class but m and n (Redis's NOTIFY_ALL). */
const ALL = N.GENERIC | N.STRING | N.LIST | N.SET | N.HASH | N.ZSET | N.EXPIRED | N.EVICTED | N.STREAM | N.MODULE;

const LETTERS: Record<string, number> = {
  A: ALL, g: N.GENERIC, $: N.STRING, l: N.LIST, s: N.SET, h: N.HASH, z: N.ZSET, x: N.EXPIRED,
  e: N.EVICTED, K: N.KEYSPACE, E: N.KEYEVENT, t: N.STREAM, m: N.KEY_MISS, d: N.MODULE, n: N.NEW,
};

/** keyspaceEventsStringToFlags: the flags, or -1 for an unknown class character. */
export function parseNotifyFlags(s: string): number {
  let f = 0;
  for (const ch of s) {
    const b = LETTERS[ch];
    if (b === undefined) return -1;
    f |= b;
  }
  return f;
}

/** keyspaceEventsFlagsToString: Redis's normalised form (CONFIG GET). */
export function formatNotifyFlags(f: number): string {
  let s = '';
  if ((f & ALL) === ALL) {
    s = 'A';
  } else {
    if (f & N.GENERIC) s += 'g';
    if (f & N.STRING) s += '$';
    if (f & N.LIST) s += 'l';
    if (f & N.SET) s += 's';
    if (f & N.HASH) s += 'h';
    if (f & N.ZSET) s += 'z';
    if (f & N.EXPIRED) s += 'x';
    if (f & N.EVICTED) s += 'e';
    if (f & N.STREAM) s += 't';
    if (f & N.MODULE) s += 'd';
    if (f & N.NEW) s += 'n'; // 7.0 prints no n after A (the flag is kept all the same)
  }
  if (f & N.KEYSPACE) s += 'K';
  if (f & N.KEYEVENT) s += 'E';
  if (f & N.KEY_MISS) s += 'm';
  return s;
}

/**
 * The flags behind each normalised text given out: "A" hides n ("KEAn" reads back "AKE" but
 * keeps new-key events), so the text alone does not say whether n was set.
 */
const flagsOfText = new Map<string, number>();

/** CONFIG SET notify-keyspace-events: normalise or refuse (Redis's error text). */
export function checkNotifyFlags(raw: string): { value: string } | { error: string } {
  const f = parseNotifyFlags(raw);
  if (f < 0) return { error: 'Invalid event class character. Use \'Ag$lshzxeKEtmdn\'.' };
  const value = formatNotifyFlags(f);
  flagsOfText.set(value, f);
  return { value };
}

/** The flags of a value checkNotifyFlags normalised (the last set with that text). */
export function notifyFlagsOf(value: string): number {
  return flagsOfText.get(value) ?? Math.max(0, parseNotifyFlags(value));
}

const eventBufs = new Map<string, Buffer>();
const prefixes: Buffer[][] = [[], []];

function prefix(kind: 0 | 1, db: number): Buffer {
  return (prefixes[kind][db] ??= Buffer.from(kind === 0 ? `__keyspace@${db}__:` : `__keyevent@${db}__:`));
}

/**
 * notifyKeyspaceEvent: publish `event` about `key` (latin1) of database `db` if its class is
 * enabled. Callers check `eng.notifyFlags & type` first (keyEvent does) so nothing is built
 * when it is off.
 */
export function publishKeyEvent(eng: Engine, type: number, event: string, key: string, db: number): void {
  const f = eng.notifyFlags;
  if ((f & type) === 0) return;
  let ev = eventBufs.get(event);
  if (ev === undefined) {
    ev = Buffer.from(event, 'latin1');
    if (eventBufs.size < 1024) eventBufs.set(event, ev);
  }
  const k = Buffer.from(key, 'latin1');
  if (f & N.KEYSPACE) eng.pubsub.publish(Buffer.concat([prefix(0, db), k]), ev);
  if (f & N.KEYEVENT) eng.pubsub.publish(Buffer.concat([prefix(1, db), ev]), k);
}

/** An event of the client's current database (the common case in command handlers). */
export function keyEvent(c: Client, type: number, event: string, key: string): void {
  if ((c.engine.notifyFlags & type) !== 0) publishKeyEvent(c.engine, type, event, key, c.dbIndex);
}

/** An event of database `db` (expiry, eviction, MOVE/COPY targets...). */
export function dbEvent(eng: Engine, type: number, event: string, key: string, db: number): void {
  if ((eng.notifyFlags & type) !== 0) publishKeyEvent(eng, type, event, key, db);
}
