/**
 * The workflow endpoints of the /v2 API (bearer token like the queue's, except webhook hits):
 *   /v2/workflows/runs[/{id}]          DELETE (complete/cancel, bulk cancel), GET (lazy fetch)
 *   /v2/workflows/logs|events          run logs (groupBy=workflowRunId) or flat events
 *   /v2/workflows/messageLogs          flat per-message and per-run events
 *   /v2/workflows/dlq[...]             list/get/delete/restart/resume/callback (also /v2/dlq?source=workflow)
 *   /v2/workflows/hooks/{user}/{run}/{event}   webhook hits (any method, no token)
 *   /v2/wait/{eventId}, /v2/notify/{eventId}, /v2/notify/{runId}/{eventId}, /v2/waiters/{eventId}
 *   /v2/trigger/{url}, /v2/batch/trigger (the unknown-SDK trigger)
 * Listings run in the log worker (query.ts).
 */
import type { V2Handler, V2Request, V2Response } from '../../http/v2.js';
import { HttpError, isUrl, type QStashService } from '../service.js';
import { canonicalHeader } from '../deliver.js';
import { parseSpec } from '../routes.js';
import { RUNS_CANCEL_PARAMS, WF_DLQ_PARAMS, checkParams } from '../params.js';
import { cancelCallback, dlqPage, dlqView, rerun, retryCallback } from './dlq.js';
import { newRunId, type WorkflowService } from './service.js';
import type { RunFilter } from './query.js';
import type { RunRec } from './types.js';

const json = (body: unknown, status = 200): V2Response => ({ status, body });
const err = (status: number, error: string): V2Response => ({ status, body: { error } });

export function workflowHandlers(wf: WorkflowService): Record<string, V2Handler> {
  const q: QStashService = wf.q;
  const guard = (h: (req: V2Request) => Promise<V2Response> | V2Response, open?: (req: V2Request) => boolean): V2Handler => async (req) => {
    if (open === undefined || !open(req)) {
      const auth = req.headers.get('authorization');
      const t = auth !== undefined && auth.startsWith('Bearer ') ? auth.slice(7).trim() : req.query.get('qstash_token');
      if (t === null || t === undefined || !q.checkToken(t)) return err(401, 'invalid or missing QStash token');
    }
    try {
      return await h(req);
    } catch (e) {
      if (e instanceof HttpError) return err(e.status, e.message);
      throw e;
    }
  };
  wf.handlers.batchTrigger = async (req) => { try { return await batchTrigger(wf, req); } catch (e) { if (e instanceof HttpError) return err(e.status, e.message); throw e; } };
  wf.handlers.dlq = async (req) => { try { return await dlqRoot(wf, req); } catch (e) { if (e instanceof HttpError) return err(e.status, e.message); throw e; } };
  return {
    workflows: guard((req) => workflows(wf, req), (req) => req.segments[1] === 'hooks'),
    wait: guard(async (req) => {
      if (req.method !== 'POST' || req.segments.length !== 2) return err(404, 'not found');
      wf.waits.wait(req.segments[1], req.headers, req.body);
      await wf.committed();
      return json({});
    }),
    notify: guard(async (req) => {
      if (req.method !== 'POST') return err(405, 'method not allowed');
      const s = req.segments;
      if (s.length !== 2 && s.length !== 3) return err(404, 'not found');
      const r = s.length === 2 ? wf.waits.notify(s[1], req.body) : wf.waits.notify(s[2], req.body, s[1]);
      await wf.committed();
      return json(r);
    }),
    waiters: guard((req) => (req.method === 'GET' && req.segments.length === 2 ? json(wf.waits.waiters(req.segments[1])) : err(404, 'not found'))),
    trigger: guard((req) => trigger(wf, req)),
  };
}

// ---- /v2/workflows ---------------------------------------------------------------------------

async function workflows(wf: WorkflowService, req: V2Request): Promise<V2Response> {
  const s = req.segments;
  switch (s[1]) {
    case 'runs': return runs(wf, req);
    case 'logs': return logs(wf, req, req.query.get('groupBy') === 'workflowRunId' ? 'runs' : 'steps');
    case 'events': return logs(wf, req, req.query.get('groupBy') === 'workflowRunId' ? 'runs' : 'steps');
    case 'messageLogs': return logs(wf, req, 'messages');
    case 'dlq': return dlq(wf, req);
    case 'hooks': return hook(wf, req);
    default: return err(404, 'not found');
  }
}

async function runs(wf: WorkflowService, req: V2Request): Promise<V2Response> {
  const s = req.segments;
  const id = s[2];
  if (id !== undefined && id !== '') {
    if (s.length > 3) return err(404, 'not found');
    if (req.method === 'GET') {
      const raw = wf.rawEntries(id);
      return raw === undefined ? err(404, `workflow run ${id} not found`) : { status: 200, body: raw, headers: { 'Content-Type': 'application/json' } };
    }
    if (req.method !== 'DELETE') return err(405, 'method not allowed');
    // No `cancel` parameter: a cancel. cancel=false: the run's successful end.
    const cancel = req.query.get('cancel') !== 'false';
    if (!wf.complete(id, cancel, req.body)) {
      // A run that already ended (cancelled, deleted, finished) is done: the service answers 2xx
      // again, as for the first call; a run it never had is an error.
      const known = await wf.query<{ runs: unknown[] }>({ kind: 'wfRuns', workflowRunId: id, count: 1, trimBody: 0 });
      if (known.runs.length === 0) return err(400, `workflow run ${id} does not exist or is not active`);
      return json(cancel ? { cancelled: 0 } : {});
    }
    await wf.committed();
    return json(cancel ? { cancelled: 1 } : {});
  }
  if (req.method !== 'DELETE') return err(405, 'method not allowed');
  const qs = req.query;
  checkParams(qs, RUNS_CANCEL_PARAMS, 'DELETE /v2/workflows/runs');
  const ids = qs.getAll('workflowRunIds').flatMap((x) => x.split(',')).filter((x) => x !== '');
  const urls = qs.getAll('workflowUrl').filter((x) => x !== '');
  const exact = qs.get('workflowUrlExactMatch') === 'true';
  const labels = qs.getAll('label');
  const from = intParam(qs, 'fromDate');
  const to = intParam(qs, 'toDate');
  const anyOf = (n: string) => { const w = qs.getAll(n).filter((x) => x !== ''); return (v: string | undefined) => w.length === 0 || (v !== undefined && w.includes(v)); };
  const callerIp = anyOf('callerIp');
  const fck = anyOf('flowControlKey');
  const host = anyOf('host');
  const path = anyOf('path');
  const count = intParam(qs, 'count', 1) ?? 100;
  const match = (r: RunRec) => {
    if (urls.length > 0 && !urls.some((u) => (exact ? r.workflowUrl === u : r.workflowUrl.startsWith(u)))) return false;
    if (labels.length > 0 && !(r.labels ?? []).some((l) => labels.includes(l))) return false;
    if (from !== undefined && r.createdAt < from) return false;
    if (to !== undefined && r.createdAt > to) return false;
    if (!callerIp(r.callerIp) || !fck(r.flowControl?.key)) return false;
    if (qs.has('host') || qs.has('path')) {
      let u: URL | null = null;
      try { u = new URL(r.workflowUrl); } catch { /* no host or path to match */ }
      if (!host(u?.host) || !path(u?.pathname)) return false;
    }
    return true;
  };
  const cancelled = wf.cancelMany(ids, match, count);
  await wf.committed();
  return json({ cancelled });
}

function intParam(q: URLSearchParams, n: string, min = 0): number | undefined {
  const v = q.get(n);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v) || Number(v) < min) throw new HttpError(400, `invalid ${n}: ${v}`);
  return Number(v);
}

const RUN_STATES = ['RUN_STARTED', 'RUN_SUCCESS', 'RUN_FAILED', 'RUN_CANCELED'];
const STEP_STATES = ['STEP_PROGRESS', 'STEP_SUCCESS', 'STEP_RETRY', 'STEP_FAILED', 'STEP_CANCELED'];
const MESSAGE_STATES = ['CREATED', 'ACTIVE', 'RETRY', 'ERROR', 'DELIVERED', 'FAILED', 'CANCEL_REQUESTED', 'CANCELLED', 'WAITER_ADDED', 'INVOKED'];

function filters(qs: URLSearchParams, allowed: string[]): RunFilter {
  const one = (n: string) => { const v = qs.get(n); return v === null || v === '' ? undefined : v; };
  const f: RunFilter = {};
  const url = one('workflowUrl');
  if (url !== undefined) {
    if (!isUrl(url)) throw new HttpError(400, `invalid workflowUrl: ${url} (must start with http:// or https://)`);
    f.workflowUrl = url;
  }
  f.workflowRunId = one('workflowRunId');
  f.workflowCreatedAt = intParam(qs, 'workflowCreatedAt');
  const pairs = one('workflowRuns');
  if (pairs !== undefined) {
    f.workflowRuns = pairs.split(',').filter((x) => x !== '').map((p) => {
      const at = p.lastIndexOf('@');
      if (at <= 0 || !/^\d+$/.test(p.slice(at + 1))) throw new HttpError(400, `invalid workflowRuns item: ${p} (workflowRunId@workflowCreatedAt)`);
      return [p.slice(0, at), Number(p.slice(at + 1))] as [string, number];
    });
  }
  const st = qs.getAll('state').flatMap((x) => x.split(',')).filter((x) => x !== '');
  if (st.length > 0) {
    for (const x of st) if (!allowed.includes(x)) throw new HttpError(400, `invalid state: ${x}`);
    f.states = st;
  }
  f.fromDate = intParam(qs, 'fromDate');
  f.toDate = intParam(qs, 'toDate');
  const labels = qs.getAll('label').flatMap((x) => x.split(',')).filter((x) => x !== '');
  if (labels.length > 0) f.labels = labels;
  f.flowControlKey = one('flowControlKey');
  f.callerIp = one('callerIp');
  f.messageId = one('messageId');
  return f;
}

function cursorOf<T>(qs: URLSearchParams, check: (v: unknown) => v is T): T | undefined {
  const c = qs.get('cursor');
  if (c === null || c === '') return undefined;
  try {
    const v = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    if (check(v)) return v;
  } catch { /* below */ }
  throw new HttpError(400, 'invalid cursor');
}

async function logs(wf: WorkflowService, req: V2Request, mode: 'runs' | 'steps' | 'messages'): Promise<V2Response> {
  if (req.method !== 'GET' || req.segments.length > 2) return err(404, 'not found');
  const qs = req.query;
  const trimBody = intParam(qs, 'trimBody', -1);
  if (mode === 'runs') {
    const f = filters(qs, [...RUN_STATES, ...STEP_STATES]);
    const count = Math.min(intParam(qs, 'count', 1) ?? 10, 10);
    const cursor = cursorOf(qs, (v): v is [number, string] => Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'string');
    const r = await wf.query<{ runs: unknown[]; cursor?: string }>({ kind: 'wfRuns', ...f, count, cursor, trimBody });
    return json(r);
  }
  const f = filters(qs, mode === 'messages' ? [...MESSAGE_STATES, ...RUN_STATES] : [...RUN_STATES, ...STEP_STATES, 'WAITER_ADDED', 'INVOKED']);
  const count = Math.min(intParam(qs, 'count', 1) ?? 1000, 1000);
  const cursor = cursorOf(qs, (v): v is [number, number] => Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'number');
  const r = await wf.query<{ events: unknown[]; cursor?: string }>({ kind: 'wfEvents', ...f, count, cursor, trimBody, stepStates: mode === 'steps' });
  return json(r);
}

// ---- webhooks --------------------------------------------------------------------------------

/** /v2/workflows/hooks/{userId}/{runId}/{eventId}: the request becomes the waiter's event. */
async function hook(wf: WorkflowService, req: V2Request): Promise<V2Response> {
  const s = req.segments;
  if (s.length !== 5) return err(404, 'not found');
  const [, , , runId, eventId] = s;
  const header: Record<string, string[]> = {};
  for (const [k, v] of req.headers) header[canonicalHeader(k)] = [v];
  const data = {
    method: req.method, header, body: req.body.toString('base64'),
    proto: (req.headers.get('x-forwarded-proto') ?? 'http').split(',')[0].trim(), host: req.headers.get('host') ?? '',
    url: `/v2/${req.rawPath}${req.rawQuery === '' ? '' : `?${req.rawQuery}`}`,
  };
  const r = wf.waits.notify(eventId, Buffer.from(JSON.stringify(data)), runId);
  await wf.committed();
  return json(r);
}

// ---- DLQ -------------------------------------------------------------------------------------

/** GET/DELETE /v2/dlq?source=workflow (the SDK's dlq.list). */
function dlqRoot(wf: WorkflowService, req: V2Request): Promise<V2Response> {
  return dlq(wf, { ...req, segments: ['workflows', 'dlq', ...req.segments.slice(1)] });
}

async function dlq(wf: WorkflowService, req: V2Request): Promise<V2Response> {
  checkParams(req.query, WF_DLQ_PARAMS, '/v2/workflows/dlq');
  await wf.committed(); // entries of runs that just failed are read directly
  const s = req.segments;
  const action = s[2];
  if (action === 'resume' || action === 'restart') {
    if (req.method !== 'POST') return err(405, 'method not allowed');
    if (s[3] !== undefined && s[3] !== '') {
      const d = wf.dlqDb.get(s[3]);
      if (d === undefined) return err(404, `dlq message ${s[3]} not found`);
      return json(await rerun(wf, d, action, req.headers, req.remote));
    }
    // Explicit ids must all exist (the SDK's single-id form reads the first result).
    for (const id of req.query.getAll('dlqIds').flatMap((x) => x.split(',')).filter((x) => x !== '')) {
      if (wf.dlqDb.get(id) === undefined) return err(404, `dlq message ${id} not found`);
    }
    const page = await dlqPage(wf, req.query, 100);
    const workflowRuns = [];
    for (const d of page.items) workflowRuns.push(await rerun(wf, d, action, req.headers, req.remote));
    return json(page.cursor === undefined ? { workflowRuns } : { workflowRuns, cursor: page.cursor });
  }
  if (action === 'callback') {
    const d = s[3] === undefined ? undefined : wf.dlqDb.get(s[3]);
    if (d === undefined) return err(404, `dlq message ${s[3] ?? ''} not found`);
    if (req.method === 'POST') return json(retryCallback(wf, d));
    if (req.method === 'DELETE') { await cancelCallback(wf, d); return json({}); }
    return err(405, 'method not allowed');
  }
  if (action !== undefined && action !== '') {
    if (s.length > 3) return err(404, 'not found');
    const d = wf.dlqDb.get(action);
    if (req.method === 'GET') return d === undefined ? err(404, `dlq message ${action} not found`) : json(dlqView(wf, d));
    if (req.method === 'DELETE') {
      if (d === undefined) return err(404, `dlq message ${action} not found`);
      wf.remove(wf.dlqDb, action);
      await wf.committed();
      return json({ deleted: 1 });
    }
    return err(405, 'method not allowed');
  }
  if (req.method === 'GET') {
    const page = await dlqPage(wf, req.query, 100);
    const body: Record<string, unknown> = { messages: page.items.map((d) => dlqView(wf, d)) };
    if (page.cursor !== undefined) body.cursor = page.cursor;
    return json(body);
  }
  if (req.method === 'DELETE') {
    const page = await dlqPage(wf, req.query, 100);
    let deleted = 0;
    for (const d of page.items) { wf.remove(wf.dlqDb, d.dlqId); deleted++; }
    await wf.committed();
    return json(page.cursor === undefined ? { deleted } : { deleted, cursor: page.cursor });
  }
  return err(405, 'method not allowed');
}

// ---- REST trigger ----------------------------------------------------------------------------

/**
 * One REST trigger: the run starts on the unknown-SDK path (its first delivery asks the SDK to
 * re-trigger itself); a run id already active is deduplicated.
 */
function triggerOne(wf: WorkflowService, dest: string, h: ReadonlyMap<string, string>, body: Buffer, remote: string): { workflowRunId: string; workflowCreatedAt: number; deduplicated: boolean; done: Promise<unknown> } {
  if (!isUrl(dest)) throw new HttpError(400, `invalid destination: ${dest} (a URL starting with http:// or https://)`);
  try { new URL(dest); } catch { throw new HttpError(400, `invalid destination url: ${dest}`); }
  const { spec } = parseSpec(h, body, remote, dest);
  const runId = h.get('upstash-workflow-runid') ?? newRunId();
  const existing = wf.activeRun(runId);
  if (existing !== undefined) {
    return { workflowRunId: runId, workflowCreatedAt: existing.rec.createdAt, deduplicated: true, done: Promise.resolve() };
  }
  const p = wf.newRunFrom(dest, new Map([...h].filter(([k]) => k !== 'upstash-workflow-url')), body, spec, runId);
  p.url = dest;
  p.unknownSdk = true;
  const { run, done } = wf.createRun(p);
  return { workflowRunId: runId, workflowCreatedAt: run.rec.createdAt, deduplicated: false, done };
}

async function trigger(wf: WorkflowService, req: V2Request): Promise<V2Response> {
  if (req.method !== 'POST') return err(405, 'method not allowed');
  const p = req.rawPath.indexOf('/');
  let dest = p < 0 ? '' : req.rawPath.slice(p + 1);
  const qs = req.rawQuery.split('&').filter((x) => x !== '' && !x.startsWith('qstash_token=')).join('&');
  if (qs !== '') dest = `${dest}?${qs}`;
  const r = triggerOne(wf, dest, req.headers, req.body, req.remote);
  await r.done;
  return json({ workflowRunId: r.workflowRunId, workflowCreatedAt: r.workflowCreatedAt });
}

async function batchTrigger(wf: WorkflowService, req: V2Request): Promise<V2Response> {
  if (req.method !== 'POST') return err(405, 'method not allowed');
  let items: unknown;
  try { items = JSON.parse(req.body.toString('utf8')); } catch { return err(400, 'body must be a JSON array of {destination, body?, headers?}'); }
  if (!Array.isArray(items)) return err(400, 'body must be a JSON array of {destination, body?, headers?}');
  const parsed = items.map((it, i) => {
    if (it === null || typeof it !== 'object') throw new HttpError(400, `batch item ${i} is not an object`);
    const o = it as { destination?: unknown; body?: unknown; headers?: unknown };
    if (typeof o.destination !== 'string') throw new HttpError(400, `batch item ${i}: destination is required`);
    if (o.body !== undefined && typeof o.body !== 'string') throw new HttpError(400, `batch item ${i}: body must be a string`);
    const h = new Map<string, string>();
    if (o.headers !== undefined) {
      if (o.headers === null || typeof o.headers !== 'object') throw new HttpError(400, `batch item ${i}: headers must be an object`);
      for (const [k, v] of Object.entries(o.headers)) h.set(k.toLowerCase(), Array.isArray(v) ? v.map(String).join(', ') : String(v));
    }
    parseSpec(h, Buffer.alloc(0), req.remote, o.destination);
    return { dest: o.destination, h, body: Buffer.from((o.body as string | undefined) ?? '', 'utf8') };
  });
  const rs = parsed.map((p) => triggerOne(wf, p.dest, p.h, p.body, req.remote));
  await Promise.all(rs.map((r) => r.done));
  return json(rs.map((r) => ({ workflowRunId: r.workflowRunId, workflowCreatedAt: r.workflowCreatedAt, deduplicated: r.deduplicated })), 201);
}
