/**
 * Workflow listings, run in the log worker (piscina) over a read-only snapshot of the LMDB
 * environment: run logs grouped per run (newest first, cursor = the last run's key) and the
 * flat workflow event log (newest first, cursor = the last event's key). Filters follow the
 * seed's section 4.3; `workflowRuns` pairs override every other filter.
 */
import type { Database, Key, RootDatabase } from 'lmdb';
import { snapshot } from '../log-query.js';
import { runView, type RunView } from './view.js';
import type { EntryRec, RunRec, WfEventRec } from './types.js';

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

export type WorkflowQuery =
  | ({ kind: 'wfRuns'; path: string; count: number; cursor?: [number, string]; trimBody?: number } & RunFilter)
  | ({ kind: 'wfEvents'; path: string; count: number; cursor?: [number, number]; trimBody?: number; stepStates?: boolean } & RunFilter);

interface Dbs { runs: Database<RunRec, [number, string]>; entries: Database<EntryRec, [string, number, number]>; events: Database<WfEventRec, [number, number]>; index: Database<unknown, Key> }

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
  return q.kind === 'wfRuns' ? listRuns(d, q) : listEvents(d, q);
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

function listRuns(d: Dbs, q: Extract<WorkflowQuery, { kind: 'wfRuns' }>): { runs: RunView[]; cursor?: string } {
  const out: RunView[] = [];
  let last: [number, string] | null = null;
  let more = false;
  const runStates = q.states?.filter((s) => RUN_STATES.has(s));
  const stepStates = q.states?.filter((s) => !RUN_STATES.has(s));
  const accept = (key: [number, string], r: RunRec | undefined): boolean => {
    if (r === undefined) return true;
    if (q.workflowRuns === undefined && !runMatches(r, q)) return true;
    if (q.workflowRuns === undefined && q.states !== undefined) {
      const runOk = runStates!.length > 0 && runStates!.includes(r.state);
      if (!runOk && stepStates!.length === 0) return true;
      if (!runOk && !hasStepState(runView(r, entriesOf(d.entries, r.workflowRunId, r.createdAt)), stepStates!)) return true;
    }
    if (out.length === q.count) { more = true; return false; }
    out.push(runView(r, entriesOf(d.entries, r.workflowRunId, r.createdAt), q.trimBody));
    last = key;
    return true;
  };
  const after = (k: [number, string]) => q.cursor === undefined || k[0] < q.cursor[0] || (k[0] === q.cursor[0] && k[1] < q.cursor[1]);
  if (q.workflowRuns !== undefined || q.workflowRunId !== undefined || q.messageId !== undefined) {
    // Direct lookups: the pairs, the runs of one id, or the run holding a message.
    let keys: [number, string][] = [];
    if (q.workflowRuns !== undefined) keys = q.workflowRuns.map(([id, at]) => [at, id]);
    else if (q.messageId !== undefined) {
      const k = d.index.get(['m', q.messageId]) as [string, number] | undefined;
      if (k !== undefined) keys = [[k[1], k[0]]];
    } else {
      for (const k of d.index.getKeys({ start: ['r', q.workflowRunId!, -1], end: ['r', q.workflowRunId!, Number.MAX_SAFE_INTEGER] })) {
        keys.push([(k as [string, string, number])[2], q.workflowRunId!]);
      }
    }
    keys.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0));
    for (const k of keys) {
      if (!after(k)) continue;
      if (!accept(k, d.runs.get(k))) break;
    }
  } else {
    const start = q.cursor ?? [q.toDate ?? Number.MAX_SAFE_INTEGER, '\uffff'];
    for (const { key, value } of d.runs.getRange({ start, end: [q.fromDate ?? 0, ''], reverse: true } as never)) {
      const k = key as unknown as [number, string];
      if (!after(k)) continue;
      if (!accept(k, value as RunRec)) break;
    }
  }
  const res: { runs: RunView[]; cursor?: string } = { runs: out };
  if (more && last !== null) res.cursor = Buffer.from(JSON.stringify(last)).toString('base64url');
  return res;
}

const STEP_OF: Record<string, string> = {
  CREATED: 'STEP_PROGRESS', ACTIVE: 'STEP_PROGRESS', DELIVERED: 'STEP_SUCCESS', ERROR: 'STEP_RETRY', RETRY: 'STEP_RETRY',
  FAILED: 'STEP_FAILED', CANCEL_REQUESTED: 'STEP_CANCELED', CANCELLED: 'STEP_CANCELED',
};

function listEvents(d: Dbs, q: Extract<WorkflowQuery, { kind: 'wfEvents' }>): { events: WfEventRec[]; cursor?: string } {
  const out: WfEventRec[] = [];
  let last: [number, number] | null = null;
  let more = false;
  const pairs = q.workflowRuns === undefined ? null : new Set(q.workflowRuns.map(([id, at]) => `${id}@${at}`));
  const start = q.cursor ?? [q.toDate ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
  const end = [q.fromDate ?? 0, -1];
  // One run: its events through the per-run index; otherwise the whole log, newest first.
  const source: Iterable<{ key: unknown; value: unknown }> = pairs === null && q.workflowRunId !== undefined
    ? d.index.getKeys({ start: ['e', q.workflowRunId, ...start], end: ['e', q.workflowRunId, ...end], reverse: true } as never)
      .map((k) => { const key = (k as unknown as unknown[]).slice(2) as [number, number]; return { key, value: d.events.get(key) }; })
    : d.events.getRange({ start, end, reverse: true } as never);
  for (const { key, value } of source) {
    if (value === undefined) continue;
    const k = key as unknown as [number, number];
    if (q.cursor !== undefined && !(k[0] < q.cursor[0] || (k[0] === q.cursor[0] && k[1] < q.cursor[1]))) continue;
    const e0 = value as WfEventRec;
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

function trimEvent(e: WfEventRec, trim: number | undefined): WfEventRec {
  if (trim === undefined) return e;
  const t = (s: string | undefined) => (s === undefined ? undefined : trim < 0 ? undefined : s.slice(0, trim));
  const o: WfEventRec = { ...e, responseBody: t(e.responseBody), body: t(e.body), workflowRunResponse: t(e.workflowRunResponse) };
  if (e.stepInfo !== undefined) {
    const si = { ...e.stepInfo };
    for (const f of ['out', 'callBody', 'callResponseBody']) if (typeof si[f] === 'string') si[f] = t(si[f] as string);
    o.stepInfo = si;
  }
  return o;
}
