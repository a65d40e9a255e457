/**
 * The run log of one run (seed 2.4/2.5, spec 4.3), derived from its stored entries:
 *   - group 0: `sequential` with the init step (entry 0, out = the raw initial payload);
 *   - one `sequential` group per sequential step, in the order steps first appeared;
 *   - one `parallel` group per parallel block (its plan steps' targets), each branch the result
 *     step or, while it runs, its plan (or wait/call/invoke record) with the delivery's state;
 *   - a trailing `next` group when the last step's own delivery has not gone through (pending,
 *     sleeping, retrying, failed or cancelled).
 * Zero and empty fields are left out, as the real service does. Pure: used by the log worker.
 *
 * Two rules shape what a listing shows:
 *   - trimBody (seed 4.3; default -1): request and response bodies (call request and response,
 *     the failure function's response, the body an invoked run got) are cut to that many bytes,
 *     or left out with -1. Step outputs (`out`), the run's result and the attempts' `errors`
 *     (with the failing response's body) are not: the SDK's client.logs() sends no trimBody, and
 *     the real service shows them there (spec 4.3, its live observations).
 *   - Upstash-Redact-Fields of the trigger: the run's message bodies (the initial payload, step
 *     outputs, call and invoke request bodies) and the named request headers are shown as
 *     REDACTED:<sha256>; deliveries keep the real values.
 */
import crypto from 'node:crypto';
import type { EntryRec, RunRec, StepJson } from './types.js';

export interface StepView { [k: string]: unknown }
export interface GroupView { type: 'sequential' | 'parallel' | 'next'; steps: StepView[] }
export interface RunView { [k: string]: unknown; steps: GroupView[] }

const STATE: Record<string, string> = { PROGRESS: 'STEP_PROGRESS', SUCCESS: 'STEP_SUCCESS', RETRY: 'STEP_RETRY', FAILED: 'STEP_FAILED', CANCELED: 'STEP_CANCELED' };

const text = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

/** trimBody: -1 drops bodies; n >= 0 keeps their first n bytes (UTF-8). */
export function trimmer(trim: number): (s: string | undefined) => string | undefined {
  if (trim < 0) return () => undefined;
  return (s) => {
    if (s === undefined || s.length <= trim / 3) return s;
    const b = Buffer.from(s, 'utf8');
    // A cut inside a multi-byte character drops the partial character.
    return b.length <= trim ? s : b.subarray(0, trim).toString('utf8').replace(/\uFFFD$/, '');
  };
}

export const redactedText = (v: string | Buffer): string => `REDACTED:${crypto.createHash('sha256').update(v).digest('hex')}`;

export interface Redactor {
  body: (s: string | undefined) => string | undefined;
  headers: <T extends Record<string, unknown> | undefined>(h: T) => T;
}

/** The redaction of a run's logs (Upstash-Redact-Fields given at trigger time). */
export function redactor(r: RunRec['redact']): Redactor {
  const hr = r?.header;
  return {
    body: r?.body === true ? (s) => (s === undefined ? undefined : redactedText(s)) : (s) => s,
    headers: hr === undefined ? (h) => h : (h) => {
      if (h === undefined) return h;
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(h)) {
        const hide = hr === true || hr.includes(k.toLowerCase());
        o[k] = !hide ? v : Array.isArray(v) ? v.map((x) => redactedText(String(x))) : redactedText(String(v));
      }
      return o as typeof h;
    },
  };
}

/** Drop undefined, empty-string and empty-object fields. */
function compact<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (v === undefined || v === '' || (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0)) delete o[k];
  }
  return o;
}

function outText(out: unknown): string | undefined {
  if (out === undefined) return undefined;
  return typeof out === 'string' ? out : JSON.stringify(out);
}

export function runView(r: RunRec, entries: EntryRec[], trim = -1): RunView {
  const t = trimmer(trim);
  const red = redactor(r.redact);
  const retryFields = { retries: r.retries, retryDelay: r.retryDelay };
  /** One step's log object, from its result (or in-progress record) and the records it merges. */
  const stepOf = (e: EntryRec, res: EntryRec | undefined, pending: EntryRec | undefined): StepView => {
    const s: StepJson = res?.step ?? pending?.step ?? e.step ?? {};
    const v: StepView = {
      stepId: s.stepId || s.targetStep || undefined, stepName: s.stepName, stepType: s.stepType,
      callType: 'step', messageId: (res ?? e).messageId, out: res !== undefined ? red.body(outText(s.out)) : undefined,
      concurrent: s.concurrent ?? 1, state: res !== undefined ? 'STEP_SUCCESS' : STATE[(pending ?? e).d ?? 'PROGRESS'],
      ...retryFields, createdAt: (pending ?? res ?? e).createdAt, headers: red.headers((res ?? e).headers),
      sleepFor: s.sleepFor, sleepUntil: s.sleepUntil, nextDeliveryTime: res === undefined ? (pending ?? e).next : undefined,
    };
    if (res === undefined && (pending ?? e).errors !== undefined) v.errors = (pending ?? e).errors;
    const c = pending?.call;
    if (c !== undefined) {
      Object.assign(v, {
        callType: 'toCallback', callUrl: c.url, callMethod: c.method, callHeaders: red.headers(c.headers), callBody: t(red.body(c.body)),
        callResponseStatus: c.responseStatus, callResponseBody: t(c.responseBody), callResponseHeaders: c.responseHeaders,
      });
      if (res !== undefined) v.callType = 'step';
    }
    const w = pending?.wait;
    if (w !== undefined) {
      Object.assign(v, {
        waitEventId: w.eventId, waitTimeoutDuration: w.timeoutDuration, waitTimeoutDeadline: w.deadline,
        waitTimeout: res !== undefined ? (res.step?.waitTimeout ?? w.timedOut ?? false) : undefined,
      });
    } else if (s.waitEventId !== undefined) {
      v.waitEventId = s.waitEventId;
      v.waitTimeout = s.waitTimeout;
    }
    const iv = pending?.invoke;
    if (iv !== undefined) {
      Object.assign(v, {
        invokedWorkflowRunId: iv.runId, invokedWorkflowUrl: iv.url, invokedWorkflowCreatedAt: iv.createdAt,
        invokedWorkflowRunBody: t(red.body(iv.body)), invokedWorkflowRunHeaders: red.headers(iv.headers),
      });
    }
    return compact(v);
  };

  const init = entries[0];
  const groups: GroupView[] = [];
  if (init !== undefined) {
    groups.push({
      type: 'sequential',
      steps: [compact({
        stepName: 'init', stepType: 'Initial', callType: 'step', messageId: init.messageId,
        out: r.redact?.body === true ? redactedText(Buffer.from(init.body, 'base64')) : text(init.body),
        concurrent: 1, state: 'STEP_SUCCESS', ...retryFields, createdAt: init.createdAt, headers: red.headers(init.headers),
      })],
    });
  }
  // Index the entries: results by step id, in-progress records (call/wait/invoke) by step id,
  // plans by target step.
  const results = new Map<number, EntryRec>();
  const pendings = new Map<number, EntryRec>();
  const plans = new Map<number, EntryRec>();
  for (const e of entries) {
    if (e.idx === 0) continue;
    const s = e.step;
    if (e.callType === 'fromCallback' || s === undefined) continue;
    if (e.callType === 'toCallback' || e.wait !== undefined || e.invoke !== undefined) {
      const id = s.stepId ?? 0;
      // A call response arriving through its callback: merged into the call's record.
      pendings.set(id, e);
    } else if (s.stepId === 0 && s.targetStep !== undefined) {
      if (!plans.has(s.targetStep)) plans.set(s.targetStep, e);
    } else if (s.stepId !== undefined && !results.has(s.stepId)) {
      results.set(s.stepId, e);
    }
  }
  // Walk in append order; each step id or parallel block gets its group when first seen.
  const seen = new Set<number>();
  const blocks: { start: number; n: number; group: GroupView }[] = [];
  for (const e of entries) {
    if (e.idx === 0 || e.callType === 'fromCallback' || e.step === undefined) continue;
    const s = e.step;
    const id = s.stepId === 0 ? s.targetStep ?? 0 : s.stepId ?? 0;
    const n = s.concurrent ?? 1;
    if (seen.has(id)) continue;
    if (n > 1) {
      let b = blocks.find((x) => id >= x.start && id < x.start + x.n);
      if (b === undefined) {
        b = { start: id, n, group: { type: 'parallel', steps: [] } };
        blocks.push(b);
        groups.push(b.group);
        for (let k = id; k < id + n; k++) {
          seen.add(k);
          const base = results.get(k) ?? pendings.get(k) ?? plans.get(k);
          if (base !== undefined) b.group.steps.push(stepOf(base, results.get(k), pendings.get(k) ?? (results.has(k) ? undefined : plans.get(k))));
        }
      }
      continue;
    }
    seen.add(id);
    groups.push({ type: 'sequential', steps: [stepOf(e, results.get(id), pendings.get(id))] });
  }
  // The `next` group: the last raw step entry whose own delivery has not gone through.
  const last = [...entries].reverse().find((e) => e.raw && e.callType !== 'toCallback');
  if (last !== undefined && r.state !== 'RUN_SUCCESS' && last.d !== undefined && last.d !== 'SUCCESS') {
    const s = last.step;
    const isPlan = s !== undefined && s.stepId === 0 && s.targetStep !== undefined;
    let blockDone = true;
    if (!isPlan && s !== undefined && (s.concurrent ?? 1) > 1) {
      const b = blocks.find((x) => (s.stepId ?? 0) >= x.start && (s.stepId ?? 0) < x.start + x.n);
      if (b !== undefined) for (let k = b.start; k < b.start + b.n; k++) if (!results.has(k)) blockDone = false;
    }
    if (!isPlan && blockDone) {
      groups.push({
        type: 'next',
        steps: [compact({
          messageId: last.messageId, state: STATE[last.d], ...retryFields, nextDeliveryTime: last.next,
          errors: last.errors,
        })],
      });
    }
  }
  const v: RunView = {
    workflowRunId: r.workflowRunId, workflowUrl: r.workflowUrl, workflowState: r.state, workflowRunCreatedAt: r.createdAt,
    workflowRunCompletedAt: r.completedAt, workflowRunResponse: r.response, workflowRunCallerIp: r.callerIp,
    invoker: r.invoker === undefined ? undefined : { workflowRunId: r.invoker.workflowRunId, workflowUrl: r.invoker.workflowUrl, workflowRunCreatedAt: r.invoker.workflowRunCreatedAt },
    failureFunction: r.failureFunction === undefined ? undefined : compact({ ...r.failureFunction, responseBody: t(r.failureFunction.responseBody) }),
    dlqId: r.dlqId, label: r.labels?.[0], labels: r.labels, flowControlKey: r.flowControl?.key,
    steps: groups,
  };
  return compact(v);
}
