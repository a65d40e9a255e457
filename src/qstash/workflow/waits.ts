/**
 * context.waitForEvent / waitForWebhook: waiters registered by POST /v2/wait/{eventId}, resolved
 * by POST /v2/notify/{eventId} (every waiter of the event), POST /v2/notify/{runId}/{eventId}
 * (that run's waiter, or kept as a lookback event until the run waits for it) and by webhook
 * hits; or timed out at their deadline. Resolution appends the Wait step result to the run
 * (out = base64 of the event data, waitTimeout false; on timeout no out and waitTimeout true).
 * Waiters and lookback events are stored (wfWait) and re-armed on start.
 */
import { HttpError } from '../service.js';
import { parseDuration } from '../expr.js';
import { fromArrays, ownForward, type Headers } from './headers.js';
import type { Run, WorkflowService } from './service.js';
import type { RunRec, StepJson, WaiterRec } from './types.js';

export interface WaiterView { url: string; headers: Record<string, string[]>; deadline: number; timeoutBody?: string; timeoutUrl: string; timeoutHeaders: Record<string, string[]>; workflowRunId: string; eventId: string }

export interface NotifyResult { waiter: WaiterView; messageId: string; deduplicated: boolean; workflowRunId: string; workflowCreatedAt: number; error?: string }

/** Deadlines beyond setTimeout's range are re-armed in steps. */
const MAX_TIMER = 2 ** 31 - 1;

export class Waits {
  /** eventId -> runId -> waiter. */
  private readonly byEvent = new Map<string, Map<string, WaiterRec>>();
  private readonly timers = new Map<WaiterRec, NodeJS.Timeout>();
  /** `${runId}\0${eventId}` -> base64 event data that arrived before the wait. */
  private readonly lookback = new Map<string, string>();

  constructor(private readonly wf: WorkflowService) {}

  load(): void {
    const now = Date.now();
    for (const { key, value } of this.wf.waitDb.getRange({ start: ['l', ''], end: ['l', '\uffff'] })) {
      const [, runId, eventId] = key as [string, string, string];
      if (this.wf.activeRun(runId) === undefined) { this.wf.remove(this.wf.waitDb, key); continue; }
      this.lookback.set(`${runId}\0${eventId}`, value as string);
    }
    for (const { key, value } of this.wf.waitDb.getRange({ start: ['w', ''], end: ['w', '\uffff'] })) {
      const w = value as WaiterRec;
      if (this.wf.activeRun(w.runId, w.createdAt) === undefined) { this.wf.remove(this.wf.waitDb, key); continue; }
      this.add(w, now);
    }
  }

  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private add(w: WaiterRec, now: number): void {
    let m = this.byEvent.get(w.eventId);
    if (m === undefined) { m = new Map(); this.byEvent.set(w.eventId, m); }
    m.set(w.runId, w);
    this.arm(w, now);
  }

  private arm(w: WaiterRec, now: number): void {
    const ms = Math.max(0, w.deadline - now);
    const t = setTimeout(() => {
      this.timers.delete(w);
      if (w.deadline > Date.now()) this.arm(w, Date.now());
      else this.timeout(w);
    }, Math.min(ms, MAX_TIMER));
    t.unref();
    this.timers.set(w, t);
  }

  private remove(w: WaiterRec): boolean {
    const m = this.byEvent.get(w.eventId);
    if (m?.get(w.runId) !== w) return false;
    m.delete(w.runId);
    if (m.size === 0) this.byEvent.delete(w.eventId);
    const t = this.timers.get(w);
    if (t !== undefined) { clearTimeout(t); this.timers.delete(w); }
    this.wf.remove(this.wf.waitDb, ['w', w.eventId, w.runId]);
    return true;
  }

  /** POST /v2/wait/{eventId}: headers = the step headers, body = the WaitRequest. */
  wait(eventId: string, h: Headers, body: Buffer): void {
    const runId = h.get('upstash-workflow-runid');
    const run = runId === undefined ? undefined : this.wf.activeRun(runId);
    if (run === undefined) throw new HttpError(400, `workflow run ${runId ?? ''} does not exist or is not active`);
    let req: { url?: unknown; timeout?: unknown; timeoutUrl?: unknown; timeoutBody?: unknown; timeoutHeaders?: Record<string, string[]>; step?: StepJson };
    try { req = JSON.parse(body.toString('utf8')); } catch { throw new HttpError(400, 'wait body must be JSON'); }
    if (req === null || typeof req !== 'object' || req.step === undefined) throw new HttpError(400, 'wait body must carry the step');
    const duration = typeof req.timeout === 'string' ? req.timeout : typeof req.timeout === 'number' ? `${req.timeout}s` : '7d';
    const ms = parseDuration(duration);
    if (!(ms >= 0)) throw new HttpError(400, `invalid timeout: ${duration}`);
    const now = Date.now();
    const step = { ...req.step, waitEventId: eventId };
    const rec = this.wf.addEntry(run, {
      messageId: '', callType: 'step', body: '', raw: false, createdAt: now, step, d: 'PROGRESS',
      wait: { eventId, timeoutDuration: duration, deadline: now + ms },
    });
    const w: WaiterRec = {
      eventId, runId: run.rec.workflowRunId, createdAt: run.rec.createdAt, url: typeof req.url === 'string' ? req.url : run.rec.workflowUrl,
      deadline: now + ms, timeoutDuration: duration, timeoutUrl: typeof req.timeoutUrl === 'string' ? req.timeoutUrl : run.rec.workflowUrl,
      timeoutBody: typeof req.timeoutBody === 'string' ? req.timeoutBody : undefined, timeoutHeaders: req.timeoutHeaders ?? {},
      own: ownForward(h), step, idx: rec.idx, registeredAt: now,
    };
    this.wf.event(run.rec, 'WAITER_ADDED', { stepInfo: { ...step, waitTimeoutDuration: duration, waitTimeoutDeadline: w.deadline } });
    const key = `${w.runId}\0${eventId}`;
    const early = this.lookback.get(key);
    if (early !== undefined) {
      this.lookback.delete(key);
      this.wf.remove(this.wf.waitDb, ['l', w.runId, eventId]);
      this.resolve(run, w, Buffer.from(early, 'base64'));
      return;
    }
    // A run waits for one event id once: a repeated wait replaces the older waiter.
    const old = this.byEvent.get(eventId)?.get(w.runId);
    if (old !== undefined) this.remove(old);
    this.wf.put(this.wf.waitDb, ['w', eventId, w.runId], w);
    this.add(w, now);
  }

  private resolve(run: Run, w: WaiterRec, data: Buffer): string {
    const step: StepJson = { ...w.step, waitEventId: w.eventId, out: data.toString('base64'), waitTimeout: false };
    // A result never carries targetStep: the SDK takes an entry with one for a plan step.
    delete step.targetStep;
    const rec = run.entries[w.idx];
    if (rec?.wait !== undefined) { rec.d = 'SUCCESS'; rec.wait.timedOut = false; this.wf.saveEntry(run, rec); }
    const done = this.wf.appendStep(run, Buffer.from(JSON.stringify(step)), w.own, 0, w.url);
    done.catch((err) => console.error('workflow: wait result not published:', err));
    return run.entries[run.entries.length - 1].messageId;
  }

  private timeout(w: WaiterRec): void {
    if (!this.remove(w)) return;
    const run = this.wf.activeRun(w.runId, w.createdAt);
    if (run === undefined) return;
    // No `out` on a timeout: an empty string would break waitForWebhook.
    const step: StepJson = { ...w.step, waitEventId: w.eventId, waitTimeout: true };
    delete step.out;
    delete step.targetStep;
    const rec = run.entries[w.idx];
    if (rec?.wait !== undefined) { rec.d = 'SUCCESS'; rec.wait.timedOut = true; this.wf.saveEntry(run, rec); }
    const own = Object.keys(w.timeoutHeaders).length > 0 ? ownForward(fromArrays(w.timeoutHeaders)) : w.own;
    if (own['Upstash-Workflow-Sdk-Version'] === undefined && w.own['Upstash-Workflow-Sdk-Version'] !== undefined) own['Upstash-Workflow-Sdk-Version'] = w.own['Upstash-Workflow-Sdk-Version'];
    this.wf.appendStep(run, Buffer.from(JSON.stringify(step)), own, 0, w.timeoutUrl).catch((err) => console.error('workflow: wait timeout not published:', err));
  }

  /**
   * Notify the waiters of an event (all of them, or one run's). With a run id and no waiter,
   * the event is kept until that run waits for it (lookback).
   */
  notify(eventId: string, data: Buffer, runId?: string): NotifyResult[] {
    const out: NotifyResult[] = [];
    const m = this.byEvent.get(eventId);
    const targets = m === undefined ? [] : runId === undefined ? [...m.values()] : m.has(runId) ? [m.get(runId)!] : [];
    for (const w of targets) {
      this.remove(w);
      const run = this.wf.activeRun(w.runId, w.createdAt);
      if (run === undefined) continue;
      const messageId = this.resolve(run, w, data);
      out.push({ waiter: view(w), messageId, deduplicated: false, workflowRunId: w.runId, workflowCreatedAt: w.createdAt });
    }
    if (runId !== undefined && targets.length === 0) {
      if (this.wf.activeRun(runId) === undefined) throw new HttpError(404, `workflow run ${runId} does not exist or is not active`);
      this.lookback.set(`${runId}\0${eventId}`, data.toString('base64'));
      this.wf.put(this.wf.waitDb, ['l', runId, eventId], data.toString('base64'));
    }
    return out;
  }

  waiters(eventId: string): WaiterView[] {
    return [...(this.byEvent.get(eventId)?.values() ?? [])].map(view);
  }

  /** A run ended: its waiters and lookback events go. */
  dropRun(rec: RunRec): void {
    for (const m of this.byEvent.values()) {
      const w = m.get(rec.workflowRunId);
      if (w !== undefined && w.createdAt === rec.createdAt) this.remove(w);
    }
    const prefix = `${rec.workflowRunId}\0`;
    for (const k of this.lookback.keys()) {
      if (!k.startsWith(prefix)) continue;
      this.lookback.delete(k);
      this.wf.remove(this.wf.waitDb, ['l', rec.workflowRunId, k.slice(prefix.length)]);
    }
  }
}

function view(w: WaiterRec): WaiterView {
  const headers: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(w.own)) headers[k] = [v];
  return {
    url: w.url, headers, deadline: Math.floor(w.deadline / 1000), timeoutBody: w.timeoutBody, timeoutUrl: w.timeoutUrl,
    timeoutHeaders: w.timeoutHeaders, workflowRunId: w.runId, eventId: w.eventId,
  };
}
