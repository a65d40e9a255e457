/**
 * Workflow listings, run in the log worker (piscina) over a read-only snapshot of the LMDB
 * environment: run logs grouped per run (newest first, cursor = the last run's key) and the
 * flat workflow event log (newest first, cursor = the last event's key), both through the
 * filters' indexes (indexes.ts) when a filter names one; and pages of the workflow DLQ. Filters
 * follow the seed's section 4.3; `workflowRuns` pairs override every other filter.
 */
import type { Database, Key, RootDatabase } from 'lmdb';
import { snapshot } from '../log-query.js';
import { runView, trimmer, type RunView } from './view.js';
import { mergeDesc } from './indexes.js';
import type { EntryRec, RunRec, WfDlqRec, WfEventRec } from './types.js';

export interface RunFilter {
  workflowRunId?: string;
  workflowUrl?: string;
  workflowCreatedAt?: number;
  workflowRuns?: [string, number][];
  states?: string[];
  fromDate?: number;
  toDate?: number;
  labels?: string[];
  flowControlKey?: string;
  callerIp?: string;
  messageId?: string;
}

/** A DLQ page: explicit ids, or the filters from the cursor (a dlqId) on. */
export interface DlqFilter {
  count: number;
  ids: string[];
  cursor?: string;
  fromDate?: number;
  toDate?: number;
  workflowCreatedAt?: number;
  labels: string[];
  workflowRunId?: string;
  workflowUrl?: string;
  url?: string;
  messageId?: string;
  flowControlKey?: string;
  callerIp?: string;
  responseStatus?: string;
  failureCallbackState?: string;
}

export type WorkflowQuery =
  | ({ kind: 'wfRuns'; path: string; count: number; cursor?: [number, string]; trimBody?: number } & RunFilter)
  | ({ kind: 'wfEvents'; path: string; count: number; cursor?: [number, number]; trimBody?: number; stepStates?: boolean } & RunFilter)
  | ({ kind: 'wfDlq'; path: string } & DlqFilter);

interface Dbs {
  runs: Database<RunRec, [number, string]>; entries: Database<EntryRec, [string, number, number]>; events: Database<WfEventRec, [number, number]>;
  index: Database<unknown, Key>; dlq: Database<WfDlqRec, string>;
}

let opened: { env: RootDatabase; dbs: Dbs } | null = null;

function dbs(path: string): Dbs {
  const env = snapshot(path);
  if (opened === null || opened.env !== env) {
    return (opened = {
      env,
      dbs: {
        runs: env.openDB({ name: 'wfRuns', encoding: 'json' }),
        entries: env.openDB({ name: 'wfEntries', encoding: 'json' }),
        events: env.openDB({ name: 'wfEvents', encoding: 'json' }),
        index: env.openDB({ name: 'wfIndex', encoding: 'json' }),
        dlq: env.openDB({ name: 'wfDlq', encoding: 'json' }),
      },
    }).dbs;
  }
  return opened.dbs;
}

export function entriesOf(db: Database<EntryRec, [string, number, number]>, runId: string, createdAt: number): EntryRec[] {
  return [...db.getRange({ start: [runId, createdAt, -1], end: [runId, createdAt, Number.MAX_SAFE_INTEGER] }).map(({ value }) => value)];
}

export function workflowQuery(q: WorkflowQuery): unknown {
  const d = dbs(q.path);
  return q.kind === 'wfRuns' ? listRuns(d, q) : q.kind === 'wfEvents' ? listEvents(d, q) : listDlq(d, q);
}

function listDlq(d: Dbs, q: Extract<WorkflowQuery, { kind: 'wfDlq' }>): { items: WfDlqRec[]; cursor?: string } {
  const items: WfDlqRec[] = [];
  let next: string | undefined;
  const src: Iterable<WfDlqRec> = q.ids.length > 0
    ? q.ids.map((i) => d.dlq.get(i)).filter((x): x is WfDlqRec => x !== undefined)
    : d.dlq.getRange(q.cursor === undefined ? {} : { start: q.cursor }).map(({ value }) => value);
  for (const x of src) {
    if (q.ids.length === 0) {
      if (q.workflowRunId !== undefined && x.workflowRunId !== q.workflowRunId) continue;
      if (q.workflowUrl !== undefined && x.workflowUrl !== q.workflowUrl) continue;
      if (q.workflowCreatedAt !== undefined && x.workflowCreatedAt !== q.workflowCreatedAt) continue;
      if (q.url !== undefined && x.url !== q.url) continue;
      if (q.messageId !== undefined && x.messageId !== q.messageId) continue;
      if (q.flowControlKey !== undefined && x.flowControlKey !== q.flowControlKey) continue;
      if (q.callerIp !== undefined && x.callerIp !== q.callerIp) continue;
      if (q.responseStatus !== undefined && String(x.responseStatus ?? '') !== q.responseStatus) continue;
      if (q.labels.length > 0 && !(x.labels ?? []).some((l) => q.labels.includes(l))) continue;
      if (q.fromDate !== undefined && x.failedAt < q.fromDate) continue;
      if (q.toDate !== undefined && x.failedAt > q.toDate) continue;
      if (q.failureCallbackState !== undefined) {
        const ff = d.runs.get([x.workflowCreatedAt, x.workflowRunId])?.failureFunction;
        if (ff?.dlqId !== x.dlqId || ff.state !== q.failureCallbackState) continue;
      }
    }
    if (items.length === q.count) { next = x.dlqId; break; }
    items.push(x);
  }
  return next === undefined ? { items } : { items, cursor: next };
}

const RUN_STATES = new Set(['RUN_STARTED', 'RUN_SUCCESS', 'RUN_FAILED', 'RUN_CANCELED']);

function runMatches(r: RunRec, q: RunFilter): boolean {
  if (q.workflowUrl !== undefined && r.workflowUrl !== q.workflowUrl) return false;
  if (q.workflowRunId !== undefined && r.workflowRunId !== q.workflowRunId) return false;
  if (q.workflowCreatedAt !== undefined && r.createdAt !== q.workflowCreatedAt) return false;
  if (q.fromDate !== undefined && r.createdAt < q.fromDate) return false;
  if (q.toDate !== undefined && r.createdAt > q.toDate) return false;
  if (q.labels !== undefined && !(r.labels ?? []).some((l) => q.labels!.includes(l))) return false;
  if (q.flowControlKey !== undefined && r.flowControl?.key !== q.flowControlKey) return false;
  if (q.callerIp !== undefined && r.callerIp !== q.callerIp) return false;
  return true;
}

/** Step states of a run view (for the STEP_* state filter). */
function hasStepState(v: RunView, states: string[]): boolean {
  for (const g of v.steps) for (const s of g.steps) if (states.includes(String(s.state))) return true;
  return false;
}

/**
 * Run states a run must be in to show a step state (a narrowing for the state index):
 * a step in progress or retrying belongs to a running run; a failed step failed its run; a
 * cancelled step belongs to a cancelled run, or to a failed one (its other deliveries). Any run
 * may hold successful steps: no narrowing.
 */
const RUNS_OF_STEP: Record<string, string[] | null> = {
  STEP_PROGRESS: ['RUN_STARTED'], STEP_RETRY: ['RUN_STARTED'], STEP_FAILED: ['RUN_FAILED'],
  STEP_CANCELED: ['RUN_CANCELED', 'RUN_FAILED'], STEP_SUCCESS: null,
};

/**
 * The candidate runs of a filter, newest first, from the cursor on and within fromDate/toDate:
 * through the most selective index the filter names (run URL, labels, flow-control key, caller
 * IP, run states), else every run by creation time.
 */
function runCandidates(d: Dbs, q: Extract<WorkflowQuery, { kind: 'wfRuns' }>): Iterable<Hit<[number, string], RunRec>> {
  const hi = q.cursor ?? [q.toDate ?? Number.MAX_SAFE_INTEGER, '\uffff'];
  const lo = [q.fromDate ?? 0, ''];
  const keys = (prefix: (string | number)[]): Iterable<[number, string]> => d.index
    .getKeys({ start: [...prefix, ...hi], end: [...prefix, ...lo], reverse: true } as never)
    .map((k) => (k as unknown as unknown[]).slice(prefix.length) as [number, string]);
  const hits = (it: Iterable<[number, string]>): Iterable<Hit<[number, string], RunRec>> => mapIt(it, (key) => ({ key }));
  if (q.workflowUrl !== undefined) return hits(keys(['u', q.workflowUrl]));
  if (q.labels !== undefined) return hits(mergeDesc(q.labels.map((l) => keys(['l', l]))));
  if (q.flowControlKey !== undefined) return hits(keys(['k', q.flowControlKey]));
  if (q.callerIp !== undefined) return hits(keys(['i', q.callerIp]));
  if (q.states !== undefined) {
    const runStates = new Set<string>();
    let all = false;
    for (const st of q.states) {
      if (RUN_STATES.has(st)) runStates.add(st);
      else if (RUNS_OF_STEP[st] === null) all = true;
      else for (const r of RUNS_OF_STEP[st] ?? []) runStates.add(r);
    }
    if (!all) return hits(mergeDesc([...runStates].map((st) => keys(['s', st]))));
  }
  return d.runs.getRange({ start: hi, end: lo, reverse: true } as never) as unknown as Iterable<Hit<[number, string], RunRec>>;
}

/** A candidate: its key, and its record when the walk read it already (a scan of the records). */
interface Hit<K, V> { key: K; value?: V }

function listRuns(d: Dbs, q: Extract<WorkflowQuery, { kind: 'wfRuns' }>): { runs: RunView[]; cursor?: string } {
  const out: RunView[] = [];
  let last: [number, string] | null = null;
  let more = false;
  const runStates = q.states?.filter((s) => RUN_STATES.has(s));
  const stepStates = q.states?.filter((s) => !RUN_STATES.has(s));
  const accept = (key: [number, string], r: RunRec | undefined): boolean => {
    if (r === undefined) return true;
    if (q.workflowRuns === undefined && !runMatches(r, q)) return true;
    let view: RunView | undefined;
    if (q.workflowRuns === undefined && q.states !== undefined) {
      const runOk = runStates!.length > 0 && runStates!.includes(r.state);
      if (!runOk && stepStates!.length === 0) return true;
      if (!runOk) {
        view = runView(r, entriesOf(d.entries, r.workflowRunId, r.createdAt), q.trimBody);
        if (!hasStepState(view, stepStates!)) return true;
      }
    }
    if (out.length === q.count) { more = true; return false; }
    out.push(view ?? runView(r, entriesOf(d.entries, r.workflowRunId, r.createdAt), q.trimBody));
    last = key;
    return true;
  };
  const after = (k: [number, string]) => q.cursor === undefined || k[0] < q.cursor[0] || (k[0] === q.cursor[0] && k[1] < q.cursor[1]);
  let cands: Iterable<Hit<[number, string], RunRec>>;
  if (q.workflowRuns !== undefined || q.workflowRunId !== undefined || q.messageId !== undefined) {
    // Direct lookups: the pairs, the runs of one id, or the run holding a message.
    const ks: [number, string][] = [];
    if (q.workflowRuns !== undefined) ks.push(...q.workflowRuns.map(([id, at]) => [at, id] as [number, string]));
    else if (q.messageId !== undefined) {
      const k = d.index.get(['m', q.messageId]) as [string, number] | undefined;
      if (k !== undefined) ks.push([k[1], k[0]]);
    } else {
      for (const k of d.index.getKeys({ start: ['r', q.workflowRunId!, -1], end: ['r', q.workflowRunId!, Number.MAX_SAFE_INTEGER] })) {
        ks.push([(k as [string, string, number])[2], q.workflowRunId!]);
      }
    }
    ks.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0));
    cands = ks.map((key) => ({ key }));
  } else {
    cands = runCandidates(d, q);
  }
  for (const { key, value } of cands) {
    if (!after(key)) continue;
    if (!accept(key, value ?? d.runs.get(key))) break;
  }
  const res: { runs: RunView[]; cursor?: string } = { runs: out };
  if (more && last !== null) res.cursor = Buffer.from(JSON.stringify(last)).toString('base64url');
  return res;
}

const STEP_OF: Record<string, string> = {
  CREATED: 'STEP_PROGRESS', ACTIVE: 'STEP_PROGRESS', DELIVERED: 'STEP_SUCCESS', ERROR: 'STEP_RETRY', RETRY: 'STEP_RETRY',
  FAILED: 'STEP_FAILED', CANCEL_REQUESTED: 'STEP_CANCELED', CANCELLED: 'STEP_CANCELED',
};

/** Message states shown as each step state by /v2/workflows/logs without groupBy. */
const RAW_OF: Record<string, string[]> = {};
for (const [raw, step] of Object.entries(STEP_OF)) (RAW_OF[step] ??= []).push(raw);

/**
 * The candidate events of a flat listing, newest first, from the cursor on and within the
 * dates: one run's (per-run index), the run holding a message, the pairs' runs, or through the
 * URL, label, flow-control-key or state index; else the whole log.
 */
function eventCandidates(d: Dbs, q: Extract<WorkflowQuery, { kind: 'wfEvents' }>): Iterable<Hit<[number, number], WfEventRec>> {
  const hi = q.cursor ?? [q.toDate ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
  const lo = [q.fromDate ?? 0, -1];
  const keys = (prefix: (string | number)[]): Iterable<[number, number]> => d.index
    .getKeys({ start: [...prefix, ...hi], end: [...prefix, ...lo], reverse: true } as never)
    .map((k) => (k as unknown as unknown[]).slice(prefix.length) as [number, number]);
  const hits = (it: Iterable<[number, number]>): Iterable<Hit<[number, number], WfEventRec>> => mapIt(it, (key) => ({ key }));
  if (q.workflowRuns !== undefined) return hits(mergeDesc([...new Set(q.workflowRuns.map(([id]) => id))].map((id) => keys(['e', id]))));
  if (q.workflowRunId !== undefined) return hits(keys(['e', q.workflowRunId]));
  if (q.messageId !== undefined) {
    const k = d.index.get(['m', q.messageId]) as [string, number] | undefined;
    return k === undefined ? [] : hits(keys(['e', k[0]]));
  }
  if (q.workflowUrl !== undefined) return hits(keys(['E', 'u', q.workflowUrl]));
  if (q.labels !== undefined) return hits(mergeDesc(q.labels.map((l) => keys(['E', 'l', l]))));
  if (q.flowControlKey !== undefined) return hits(keys(['E', 'k', q.flowControlKey]));
  if (q.states !== undefined) {
    const raw = new Set(q.states.flatMap((st) => (q.stepStates ? RAW_OF[st] ?? [st] : [st])));
    return hits(mergeDesc([...raw].map((st) => keys(['E', 's', st]))));
  }
  return d.events.getRange({ start: hi, end: lo, reverse: true } as never) as unknown as Iterable<Hit<[number, number], WfEventRec>>;
}

function* mapIt<A, B>(it: Iterable<A>, f: (a: A) => B): Generator<B> {
  for (const a of it) yield f(a);
}

function listEvents(d: Dbs, q: Extract<WorkflowQuery, { kind: 'wfEvents' }>): { events: WfEventRec[]; cursor?: string } {
  const out: WfEventRec[] = [];
  let last: [number, number] | null = null;
  let more = false;
  const pairs = q.workflowRuns === undefined ? null : new Set(q.workflowRuns.map(([id, at]) => `${id}@${at}`));
  for (const { key: k, value } of eventCandidates(d, q)) {
    if (q.cursor !== undefined && !(k[0] < q.cursor[0] || (k[0] === q.cursor[0] && k[1] < q.cursor[1]))) continue;
    const e0 = value ?? d.events.get(k);
    if (e0 === undefined) continue;
    // /v2/workflows/logs without groupBy shows step states; messageLogs the message states.
    const e = q.stepStates && STEP_OF[e0.state] !== undefined ? { ...e0, state: STEP_OF[e0.state] } : e0;
    if (pairs !== null) {
      if (!pairs.has(`${e.workflowRunId}@${e.workflowCreatedAt}`)) continue;
    } else {
      if (q.workflowRunId !== undefined && e.workflowRunId !== q.workflowRunId) continue;
      if (q.workflowUrl !== undefined && e.workflowUrl !== q.workflowUrl) continue;
      if (q.workflowCreatedAt !== undefined && e.workflowCreatedAt !== q.workflowCreatedAt) continue;
      if (q.messageId !== undefined && e.messageId !== q.messageId) continue;
      if (q.states !== undefined && !q.states.includes(e.state)) continue;
      if (q.labels !== undefined && !(e.labels ?? []).some((l) => q.labels!.includes(l))) continue;
      if (q.flowControlKey !== undefined && e.flowControlKey !== q.flowControlKey) continue;
      if (q.callerIp !== undefined && e.callerIp !== q.callerIp) continue;
    }
    if (out.length === q.count) { more = true; break; }
    out.push(trimEvent(e, q.trimBody));
    last = k;
  }
  const res: { events: WfEventRec[]; cursor?: string } = { events: out };
  if (more && last !== null) res.cursor = Buffer.from(JSON.stringify(last)).toString('base64url');
  return res;
}

/** trimBody on a flat event: request/response bodies cut or (-1, the default) left out. */
function trimEvent(e: WfEventRec, trim: number | undefined): WfEventRec {
  const si = e.stepInfo;
  if (e.responseBody === undefined && e.body === undefined && (si === undefined || (si.callBody === undefined && si.callResponseBody === undefined && si.invokedWorkflowRunBody === undefined))) return e;
  const t = trimmer(trim ?? -1);
  const o: WfEventRec = { ...e, responseBody: t(e.responseBody), body: t(e.body) };
  if (e.stepInfo !== undefined) {
    const si = { ...e.stepInfo };
    for (const f of ['callBody', 'callResponseBody', 'invokedWorkflowRunBody']) if (typeof si[f] === 'string') si[f] = t(si[f] as string);
    o.stepInfo = si;
  }
  return o;
}
