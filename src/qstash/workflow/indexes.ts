/**
 * Secondary indexes of the workflow logs (wfIndex, value 1), so that a selective filter reads
 * the matching records instead of scanning the store. Their last two key parts are the record's
 * own key, so an index range walks in the listing's order (newest first) and a cursor or a date
 * range bounds it:
 *   runs   ['u', url | 's', state | 'l', label | 'k', flowControlKey | 'i', callerIp, createdAt, runId]
 *          ['f', completedAt, createdAt, runId]   finished runs, by end time (retention)
 *   events ['E', 'u' | 's' | 'l' | 'k', value, time, seq]   flat-log events
 * (['e', runId, time, seq] indexes a run's events, ['r', runId, createdAt] its runs, see types.ts.)
 */
import type { RunRec, WfEventRec } from './types.js';

export type RunKey = [number, string];
export type EventKey = [number, number];

/** The index prefixes a run is listed under (its state included). */
export function runIndexPrefixes(r: RunRec): (string | number)[][] {
  const p: (string | number)[][] = [['u', r.workflowUrl], ['s', r.state]];
  for (const l of new Set(r.labels ?? [])) p.push(['l', l]);
  if (r.flowControl !== undefined) p.push(['k', r.flowControl.key]);
  if (r.callerIp !== undefined) p.push(['i', r.callerIp]);
  return p;
}

/** The index prefixes of a flat-log event. */
export function eventIndexPrefixes(e: WfEventRec): (string | number)[][] {
  const p: (string | number)[][] = [['E', 'u', e.workflowUrl], ['E', 's', e.state]];
  for (const l of new Set(e.labels ?? [])) p.push(['E', 'l', l]);
  if (e.flowControlKey !== undefined) p.push(['E', 'k', e.flowControlKey]);
  return p;
}

/**
 * Newest-first merge of several newest-first key streams (a label filter with several labels,
 * several states), each key once. Keys compare as [number, string | number].
 */
export function* mergeDesc<K extends [number, string | number]>(streams: Iterable<K>[]): Generator<K> {
  const its = streams.map((s) => s[Symbol.iterator]());
  const heads: (K | undefined)[] = its.map((it) => { const n = it.next(); return n.done ? undefined : n.value; });
  let prev: K | undefined;
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      if (h !== undefined && (best < 0 || cmp(h, heads[best]!) > 0)) best = i;
    }
    if (best < 0) return;
    const k = heads[best]!;
    const n = its[best].next();
    heads[best] = n.done ? undefined : n.value;
    if (prev !== undefined && cmp(prev, k) === 0) continue;
    prev = k;
    yield k;
  }
}

function cmp(a: [number, string | number], b: [number, string | number]): number {
  return a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
}
