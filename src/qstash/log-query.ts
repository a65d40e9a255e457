/**
 * The event-log listing, run in a piscina worker thread: it opens the service's LMDB
 * environment read-only and walks the `events` database (key [time, seq]) in the requested
 * order, or the `eventsByMsg` index when message ids are given, applies the filters and
 * returns one page plus an opaque cursor (absent on the last page). Kept apart from the
 * engine's thread so that listing 1000 events never stalls Redis commands.
 */
import { open, type RootDatabase, type Database } from 'lmdb';
import type { EventQuery, EventRec } from './types.js';

let env: RootDatabase | null = null;
let events: Database<EventRec, [number, number]>;
let byMsg: Database<null, [string, number, number]>;

/** The environment on a fresh snapshot (the writer, the main thread, commits all the time). */
export function snapshot(path: string): RootDatabase {
  if (env !== null) { env.resetReadTxn(); return env; }
  env = open({ path, readOnly: true, maxDbs: 16 });
  events = env.openDB({ name: 'events', encoding: 'json' });
  byMsg = env.openDB({ name: 'eventsByMsg', encoding: 'binary' });
  return env;
}

function openEnv(path: string): void {
  snapshot(path);
}

const anyOf = (want: string[] | undefined, v: string | undefined) => want === undefined || (v !== undefined && want.includes(v));

function matches(e: EventRec, q: EventQuery): boolean {
  if (q.states !== undefined && !q.states.includes(e.state)) return false;
  if (!anyOf(q.url, e.url) || !anyOf(q.topicName, e.topicName) || !anyOf(q.scheduleId, e.scheduleId)) return false;
  if (!anyOf(q.queueName, e.queueName) || !anyOf(q.flowControlKey, e.flowControlKey)) return false;
  if (q.labels !== undefined && !(e.labels ?? []).some((l) => q.labels!.includes(l))) return false;
  if (q.host !== undefined || q.urlPath !== undefined) {
    let u: URL | null = null;
    try { u = new URL(e.url); } catch { /* matches no host or path */ }
    if (!anyOf(q.host, u?.host) || !anyOf(q.urlPath, u?.pathname)) return false;
  }
  return true;
}

export function queryEvents(q: EventQuery): { events: EventRec[]; cursor?: string } {
  openEnv(q.path);
  const from = q.fromDate ?? 0;
  const to = q.toDate ?? Number.MAX_SAFE_INTEGER;
  const out: EventRec[] = [];
  let last: [number, number] | null = null;
  let more = false;
  const accept = (key: [number, number], e: EventRec | undefined): boolean => {
    if (e === undefined || key[0] < from || key[0] > to || !matches(e, q)) return true;
    if (out.length === q.count) { more = true; return false; }
    out.push(e);
    last = key;
    return true;
  };
  if (q.messageIds !== undefined) {
    // Per-message index: gather every id's keys, merge them in the requested order.
    const keys: [number, number][] = [];
    for (const id of q.messageIds) {
      for (const k of byMsg.getKeys({ start: [id, from, 0], end: [id, to, Number.MAX_SAFE_INTEGER] })) keys.push([k[1], k[2]]);
    }
    keys.sort((a, b) => (a[0] - b[0] || a[1] - b[1]) * (q.latestFirst ? -1 : 1));
    for (const k of keys) {
      if (q.cursor !== undefined && !after(k, q.cursor, q.latestFirst)) continue;
      if (!accept(k, events.get(k))) break;
    }
  } else {
    const range = q.latestFirst
      ? { start: q.cursor ?? [to, Number.MAX_SAFE_INTEGER], end: [from, -1], reverse: true }
      : { start: q.cursor ?? [from, -1], end: [to, Number.MAX_SAFE_INTEGER] };
    for (const { key, value } of events.getRange(range as never)) {
      const k = key as unknown as [number, number];
      if (q.cursor !== undefined && !after(k, q.cursor, q.latestFirst)) continue;
      if (!accept(k, value as EventRec)) break;
    }
  }
  const res: { events: EventRec[]; cursor?: string } = { events: out };
  if (more && last !== null) res.cursor = Buffer.from(JSON.stringify(last)).toString('base64url');
  return res;
}

function after(k: [number, number], c: [number, number], latestFirst: boolean): boolean {
  const d = k[0] - c[0] || k[1] - c[1];
  return latestFirst ? d < 0 : d > 0;
}

export function decodeCursor(s: string): [number, number] | null {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString());
    if (Array.isArray(v) && v.length === 2 && Number.isFinite(v[0]) && Number.isFinite(v[1])) return [v[0], v[1]];
  } catch { /* fall through */ }
  return null;
}
