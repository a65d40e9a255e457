/**
 * The workflow DLQ: one entry per failed run (the delivery that failed for good). Listing and
 * deletion with the run filters, restart (a new run from the initial payload), resume (a new
 * run carrying the entries before the failed delivery, which is delivered again), and a retry
 * of a failed failure callback. Restart/resume take override headers (Upstash-Retries,
 * -Retry-Delay, -Flow-Control-*, -Delay, -Label, -Failure-Callback) and give new run ids.
 */
import { HttpError, arrays, newMessageId } from '../service.js';
import { parseSpec } from '../routes.js';
import { failureConfig, type Headers } from './headers.js';
import { entriesOf, type DlqFilter } from './query.js';
import { redactedText, redactor } from './view.js';
import { newRunId, type NewRun, type WorkflowService } from './service.js';
import type { EntryRec, RunRec, WfDlqRec } from './types.js';

export function dlqView(wf: WorkflowService, d: WfDlqRec): Record<string, unknown> {
  const rec = wf.runRec(d.workflowRunId, d.workflowCreatedAt);
  const ff = rec?.failureFunction;
  const text = (b: string | undefined) => (b === undefined ? undefined : Buffer.from(b, 'base64').toString('utf8'));
  // Upstash-Redact-Fields of the run: the failed message's body and named headers are hidden.
  const red = redactor(rec?.redact);
  const body = rec?.redact?.body === true ? redactedText(Buffer.from(d.body, 'base64')) : text(d.body);
  return {
    dlqId: d.dlqId, messageId: d.messageId, url: d.url, method: d.method, header: red.headers(d.header), body, maxRetries: d.maxRetries,
    retryDelayExpression: d.retryDelay, notBefore: d.notBefore, createdAt: d.createdAt, callerIP: d.callerIp, callerIp: d.callerIp,
    workflowRunId: d.workflowRunId, workflowCreatedAt: d.workflowCreatedAt, workflowUrl: d.workflowUrl,
    responseStatus: d.responseStatus, responseHeader: d.responseHeader, responseBody: text(d.responseBody), error: d.error,
    failureCallback: d.failureCallback,
    failureCallbackInfo: ff === undefined || ff.dlqId !== d.dlqId ? undefined : {
      state: ff.state, responseStatus: ff.responseStatus, responseBody: ff.responseBody, responseHeaders: ff.responseHeaders,
    },
    label: d.labels?.[0], labels: d.labels, flowControlKey: d.flowControlKey,
  };
}

const one = (q: URLSearchParams, n: string) => { const v = q.get(n); return v === null || v === '' ? undefined : v; };

function num(q: URLSearchParams, n: string): number | undefined {
  const v = one(q, n);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new HttpError(400, `invalid ${n}: ${v}`);
  return Number(v);
}

/**
 * Entries matching dlqIds or the filters, from the cursor (a dlqId) on, at most `count`: read
 * in the log worker (a DLQ can be large), after every write issued so far is committed.
 */
export async function dlqPage(wf: WorkflowService, q: URLSearchParams, def: number): Promise<{ items: WfDlqRec[]; cursor?: string }> {
  const c = num(q, 'count');
  const f: DlqFilter = {
    count: c === undefined ? def : Math.max(1, Math.min(c, 1000)),
    ids: q.getAll('dlqIds').flatMap((x) => x.split(',')).filter((x) => x !== ''),
    cursor: one(q, 'cursor'), fromDate: num(q, 'fromDate'), toDate: num(q, 'toDate'), workflowCreatedAt: num(q, 'workflowCreatedAt'),
    labels: q.getAll('label').flatMap((x) => x.split(',')).filter((x) => x !== ''),
    workflowRunId: one(q, 'workflowRunId'), workflowUrl: one(q, 'workflowUrl'), url: one(q, 'url'), messageId: one(q, 'messageId'),
    flowControlKey: one(q, 'flowControlKey'), callerIp: one(q, 'callerIp'), responseStatus: one(q, 'responseStatus'),
    failureCallbackState: one(q, 'failureCallbackState') ?? one(q, 'failureFunctionState'), // the REST name, the SDK's name
  };
  return wf.query<{ items: WfDlqRec[]; cursor?: string }>({ kind: 'wfDlq', ...f });
}

/** The run configuration of a DLQ restart/resume: the failed run's, with the request's overrides. */
function rerunConfig(rec: RunRec, h: Headers, remote: string): NewRun {
  const { spec } = parseSpec(h, Buffer.alloc(0), remote, rec.workflowUrl);
  const p: NewRun = {
    runId: newRunId(), url: rec.workflowUrl, payload: Buffer.from(rec.initialBody, 'base64'), contentType: rec.contentType,
    forward: rec.forward, own: { 'Upstash-Workflow-Sdk-Version': '1' }, retries: h.has('upstash-retries') ? spec.retries : rec.retries,
    retryDelay: spec.retryDelay ?? rec.retryDelay, timeout: rec.timeout, flowControl: spec.flowControl ?? rec.flowControl,
    labels: spec.labels ?? rec.labels, redact: rec.redact,
    failure: h.has('upstash-failure-callback') ? failureConfig(h, rec.workflowUrl, rec.forward) : rec.failure,
    notBefore: spec.notBefore, callerIp: rec.callerIp,
  };
  return p;
}

/** Restart (from the initial payload) or resume (from the failed delivery) one DLQ entry. */
export async function rerun(wf: WorkflowService, d: WfDlqRec, mode: 'restart' | 'resume', h: Headers, remote: string): Promise<{ workflowRunId: string; workflowCreatedAt: number }> {
  const rec = wf.runRec(d.workflowRunId, d.workflowCreatedAt);
  if (rec === undefined) throw new HttpError(404, `workflow run ${d.workflowRunId} of dlq message ${d.dlqId} not found`);
  const p = rerunConfig(rec, h, remote);
  if (mode === 'restart' || d.idx <= 0) {
    const { run, done } = wf.createRun(p);
    await done;
    wf.remove(wf.dlqDb, d.dlqId);
    await wf.committed();
    return { workflowRunId: run.rec.workflowRunId, workflowCreatedAt: run.rec.createdAt };
  }
  // Resume: the raw entries up to the failed one, then that one delivered again.
  const old = entriesOf(wf.entriesDb, rec.workflowRunId, rec.createdAt).filter((e) => e.raw && e.idx <= d.idx);
  const run = wf.openRun(p);
  let last: EntryRec | undefined;
  for (const e of old) {
    const copy: Omit<EntryRec, 'idx'> = { messageId: e.messageId, callType: e.callType, body: e.body, raw: true, createdAt: e.createdAt, step: e.step, headers: e.headers, d: 'SUCCESS', call: e.call, dk: e.dk };
    last = wf.addEntry(run, copy);
  }
  if (last === undefined) throw new HttpError(400, `dlq message ${d.dlqId} has nothing to resume`);
  last.messageId = newMessageId();
  last.d = 'PROGRESS';
  const header: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.header)) header[k] = v.join(', ');
  header['Upstash-Workflow-RunId'] = run.rec.workflowRunId;
  header['Upstash-Workflow-CreatedAt'] = String(run.rec.createdAt);
  const spec = wf.runSpec(run.rec, last, d.kind, header, p.notBefore);
  last.headers = arrays(header);
  wf.saveEntry(run, last);
  wf.put(wf.indexDb, ['m', last.messageId], [run.rec.workflowRunId, run.rec.createdAt]);
  await wf.q.publish(run.rec.workflowUrl, spec);
  wf.remove(wf.dlqDb, d.dlqId);
    await wf.committed();
  return { workflowRunId: run.rec.workflowRunId, workflowCreatedAt: run.rec.createdAt };
}

/** POST /v2/workflows/dlq/callback/{dlqId}: run a failed failure callback again. */
export function retryCallback(wf: WorkflowService, d: WfDlqRec): { workflowRunId: string; workflowCreatedAt: number } {
  const rec = wf.runRec(d.workflowRunId, d.workflowCreatedAt);
  const ff = rec?.failureFunction;
  if (rec === undefined || rec.failure === undefined || ff === undefined || ff.dlqId !== d.dlqId) throw new HttpError(400, `dlq message ${d.dlqId} has no failure callback`);
  if (ff.state !== 'CALLBACK_FAIL') throw new HttpError(400, `failure callback of dlq message ${d.dlqId} is ${ff.state}, not CALLBACK_FAIL`);
  wf.sendFailure(rec, d, 0);
  wf.saveRun(rec);
  return { workflowRunId: rec.workflowRunId, workflowCreatedAt: rec.createdAt };
}

/** DELETE /v2/workflows/dlq/callback/{dlqId}: cancel a failure callback in progress. */
export async function cancelCallback(wf: WorkflowService, d: WfDlqRec): Promise<void> {
  const rec = wf.runRec(d.workflowRunId, d.workflowCreatedAt);
  const ff = rec?.failureFunction;
  if (rec === undefined || ff === undefined || ff.dlqId !== d.dlqId || ff.state !== 'CALLBACK_INPROGRESS') {
    throw new HttpError(400, `no failure callback in progress for dlq message ${d.dlqId}`);
  }
  await wf.q.cancel(ff.messageId);
  ff.state = 'CALLBACK_CANCELED';
  wf.saveRun(rec);
}
