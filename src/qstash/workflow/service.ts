/**
 * Workflow runs on top of the QStash-compatible queue (spec qstash-workflow.md): a run is
 * created by a publish with Upstash-Workflow-Init: true, keeps the configuration given at
 * trigger time (retries, retry delay, timeout, flow control, labels, forwarded headers, failure
 * callback) and applies it to every later message of the run. Every step message is appended
 * to the run when it is accepted (synchronously, so concurrent publishes get a total order) and
 * delivered with the run's entries up to and including itself (the prefix rule). The queue
 * delivers, signs and retries; this layer builds the bodies, learns each attempt's outcome
 * (WorkflowExt), and owns run endings: success and cancel (DELETE /v2/workflows/runs), failure
 * (workflow DLQ, failure callback, invoker notification), context.call callbacks, invoke
 * results. Waits and notifications live in waits.ts, the DLQ in dlq.ts, HTTP in routes.ts.
 *
 * Storage: the records of types.ts in the queue's LMDB environment; active runs are also kept
 * in memory (runs by id) and reloaded on start, so a sleeping or waiting run continues.
 */
import crypto from 'node:crypto';
import type { Database, Key } from 'lmdb';
import { HttpError, arrays, newMessageId, type AttemptEnd, type QStashService, type WorkflowExt } from '../service.js';
import type { EventRec, MessageRec, MessageSpec, WfMeta } from '../types.js';
import type { V2Request, V2Response } from '../../http/v2.js';
import { dropServerOwned, failureConfig, ownForward, prefixed, splitForward, type Headers } from './headers.js';
import { Waits } from './waits.js';
import { entriesOf } from './query.js';
import { redactedText, redactor } from './view.js';
import { eventIndexPrefixes, runIndexPrefixes } from './indexes.js';
import type { EntryRec, ErrorRec, FailureConfig, InvokerRec, RunRec, RunState, StepJson, WfDlqRec, WfEventRec } from './types.js';

export interface WorkflowOptions {
  /** Deliver step and callback messages with empty bodies (the SDK fetches the run: LazyFetch). */
  lazyFetch: boolean;
}

export interface Run {
  rec: RunRec;
  entries: EntryRec[];
  /** Serialized raw entries ({messageId, body, callType}), built once per entry. */
  json: (string | undefined)[];
  /** Deduplication keys of the run's step and call messages -> their message ids (built on first use). */
  seen?: Map<string, string>;
}

/** What a new run starts with (trigger, REST trigger, invoke, DLQ restart/resume). */
export interface NewRun {
  runId: string;
  url: string;
  payload: Buffer;
  contentType?: string;
  forward: Record<string, string>;
  own: Record<string, string>;
  retries: number;
  retryDelay?: string;
  timeout?: number;
  flowControl?: MessageSpec['flowControl'];
  labels?: string[];
  redact?: MessageSpec['redact'];
  failure?: FailureConfig;
  notBefore: number;
  callerIp?: string;
  invoker?: InvokerRec;
  unknownSdk?: boolean;
}

/** Records pruned per chunk of a retention pass (each kind). */
const PRUNE_BATCH = 5000;
/** Version of the log indexes (indexes.ts); a store without it gets them built on start. */
const INDEX_VERSION = 1;

/** Workflows invoking workflows: at most this many levels. */
const MAX_INVOKE_DEPTH = 100;

export const NON_WORKFLOW = 'detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint';
export const OLD_SDK = 'trigger rest api is only usable with sdk versions after v1.0.0 major version';

export function newRunId(): string {
  return `wfr_${crypto.randomBytes(15).toString('base64url')}`;
}

function parseStep(body: Buffer): StepJson | undefined {
  try {
    const v = JSON.parse(body.toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as StepJson : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The deduplication key of a step or call message of a run: its Upstash-Deduplication-Id, or
 * else its content (destination, call step and body). Content-based deduplication is always on
 * for workflow messages: a delivery retried after its step was already published (a lost 200,
 * a timeout) makes the SDK publish the same step again, and a second entry would mean a second
 * continuation of the run. Two different steps never have the same body (it holds the step id).
 */
export function dedupKey(dest: string, h: Headers, body: Buffer, toCallback: boolean): string {
  const id = h.get('upstash-deduplication-id');
  if (id !== undefined) return `id:${id}`;
  const hash = crypto.createHash('sha256').update(dest).update('\0');
  if (toCallback) hash.update(h.get('upstash-method') ?? 'POST').update('\0').update(h.get('upstash-callback-forward-upstash-workflow-stepid') ?? '').update('\0');
  return `c:${hash.update(body).digest('base64url')}`;
}

function errorOf(a: AttemptEnd): ErrorRec[] {
  return [{ error: a.error, status: a.status || undefined, body: a.body.toString('utf8'), headers: a.header, time: Date.now() }];
}

export class WorkflowService implements WorkflowExt {
  readonly runsDb: Database<RunRec, [number, string]>;
  readonly entriesDb: Database<EntryRec, [string, number, number]>;
  readonly eventsDb: Database<WfEventRec, [number, number]>;
  readonly dlqDb: Database<WfDlqRec, string>;
  readonly waitDb: Database<unknown, Key>;
  readonly indexDb: Database<unknown, Key>;
  readonly waits: Waits;
  /** Active runs by id (one active run per id: a second trigger is deduplicated). */
  private readonly active = new Map<string, Run>();
  private evSeq = 0;
  private dlqSeq = 0;
  /** Set by the HTTP layer: the handler of /v2/batch/trigger and of /v2/dlq?source=workflow. */
  handlers: Partial<Record<'batchTrigger' | 'dlq', (req: V2Request) => Promise<V2Response>>> = {};

  constructor(readonly q: QStashService, readonly opts: WorkflowOptions) {
    const env = q.env;
    this.runsDb = env.openDB({ name: 'wfRuns', encoding: 'json' });
    this.entriesDb = env.openDB({ name: 'wfEntries', encoding: 'json' });
    this.eventsDb = env.openDB({ name: 'wfEvents', encoding: 'json' });
    this.dlqDb = env.openDB({ name: 'wfDlq', encoding: 'json' });
    this.waitDb = env.openDB({ name: 'wfWait', encoding: 'json' });
    this.indexDb = env.openDB({ name: 'wfIndex', encoding: 'json' });
    this.waits = new Waits(this);
    this.buildIndexes();
    // Loaded before the queue starts delivering: deliveries of these runs need them.
    for (const k of this.eventsDb.getKeys({ reverse: true, limit: 1 } as never)) this.evSeq = (k as unknown as [number, number])[1] + 1;
    for (const { key, value } of this.indexDb.getRange({ start: ['a', ''], end: ['a', '\uffff'] })) {
      const runId = (key as [string, string])[1];
      const rec = this.runsDb.get([value as number, runId]);
      if (rec === undefined || rec.state !== 'RUN_STARTED') continue;
      const entries = entriesOf(this.entriesDb, runId, rec.createdAt);
      this.active.set(runId, { rec, entries, json: [] });
    }
    q.ext = this;
  }

  private pruneTimer: NodeJS.Timeout | null = null;
  private pruning = false;
  private stopped = false;

  /** Waiters (deadlines) start with the server; the logs are pruned every minute. */
  start(): void {
    this.waits.load();
    this.pruneTimer = setInterval(() => void this.pruneAll(), 60_000);
    this.pruneTimer.unref();
    void this.pruneAll();
  }

  stop(): void {
    this.stopped = true;
    this.waits.stop();
    if (this.pruneTimer !== null) clearInterval(this.pruneTimer);
  }

  /** Prune in chunks, each committed before the next is read, until nothing is past retention. */
  private async pruneAll(): Promise<void> {
    if (this.pruning) return;
    this.pruning = true;
    try {
      const now = Date.now();
      while (!this.stopped && this.prune(now)) await this.committed();
    } finally {
      this.pruning = false;
    }
  }

  /**
   * Retention (--qstash-log-retention): flat-log events older than it go, and so do runs that
   * finished before it, with their entries, index keys and DLQ entry. Active runs stay however
   * old they are. One chunk of at most PRUNE_BATCH of each, so that a backlog never stalls the
   * server; true if there may be more.
   */
  prune(now = Date.now()): boolean {
    const cut = now - this.q.opts.retentionMs;
    let more = false;
    let n = 0;
    for (const { key, value } of this.eventsDb.getRange({ start: [0, -1], end: [cut, -1] })) {
      if (n++ >= PRUNE_BATCH) { more = true; break; }
      const ek = key as unknown as [number, number];
      this.q.write(() => {
        this.eventsDb.remove(ek);
        this.indexDb.remove(['e', value.workflowRunId, ek[0], ek[1]]);
        for (const p of eventIndexPrefixes(value)) this.indexDb.remove([...p, ek[0], ek[1]]);
      });
    }
    n = 0;
    for (const k of this.indexDb.getKeys({ start: ['f', 0], end: ['f', cut] })) {
      if (n++ >= PRUNE_BATCH) { more = true; break; }
      const [, , createdAt, runId] = k as [string, number, number, string];
      const rec = this.runsDb.get([createdAt, runId]);
      const entries = entriesOf(this.entriesDb, runId, createdAt);
      this.q.write(() => {
        this.indexDb.remove(k as Key);
        if (rec === undefined) return;
        for (const e of entries) {
          this.entriesDb.remove([runId, createdAt, e.idx]);
          // A message id carried over to a resumed run belongs to that run now.
          const m = this.indexDb.get(['m', e.messageId]) as [string, number] | undefined;
          if (e.raw && m !== undefined && m[0] === runId && m[1] === createdAt) this.indexDb.remove(['m', e.messageId]);
        }
        for (const p of runIndexPrefixes(rec)) this.indexDb.remove([...p, createdAt, runId]);
        this.indexDb.remove(['r', runId, createdAt]);
        if (rec.dlqId !== undefined) this.dlqDb.remove(rec.dlqId);
        this.runsDb.remove([createdAt, runId]);
      });
    }
    return more;
  }

  /**
   * Stores written before the log indexes existed get them once (runs and flat-log events),
   * in transactions of a few thousand records.
   */
  private buildIndexes(): void {
    if (this.indexDb.get(['v']) === INDEX_VERSION) return;
    const env = this.q.env;
    const batch = <T>(it: Iterable<T>, f: (x: T) => void) => {
      let chunk: T[] = [];
      const flush = () => { const c = chunk; chunk = []; env.transactionSync(() => { for (const x of c) f(x); }); };
      for (const x of it) { chunk.push(x); if (chunk.length === 5000) flush(); }
      flush();
    };
    batch(this.runsDb.getRange({}), ({ value: r }) => {
      for (const p of runIndexPrefixes(r)) this.indexDb.putSync([...p, r.createdAt, r.workflowRunId], 1);
      if (r.state !== 'RUN_STARTED') this.indexDb.putSync(['f', r.completedAt ?? r.createdAt, r.createdAt, r.workflowRunId], 1);
    });
    batch(this.eventsDb.getRange({}), ({ key, value }) => {
      const ek = key as unknown as [number, number];
      for (const p of eventIndexPrefixes(value)) this.indexDb.putSync([...p, ek[0], ek[1]], 1);
    });
    this.indexDb.putSync(['v'], INDEX_VERSION);
  }

  // ---- run lookup and persistence --------------------------------------------------------

  activeRun(runId: string, createdAt?: number): Run | undefined {
    const r = this.active.get(runId);
    return r !== undefined && (createdAt === undefined || r.rec.createdAt === createdAt) ? r : undefined;
  }

  activeRuns(): IterableIterator<Run> {
    return this.active.values();
  }

  private runOfMsg(w: WfMeta): Run | undefined {
    return this.activeRun(w.runId, w.createdAt);
  }

  /** The stored record of a run (active or ended). */
  runRec(runId: string, createdAt: number): RunRec | undefined {
    return this.activeRun(runId, createdAt)?.rec ?? this.runsDb.get([createdAt, runId]);
  }

  /**
   * Writes go through the queue's write batch: issued together every few ms, one LMDB write
   * transaction for all of them (one per write would cost far more main-thread time).
   */
  put<K extends Key, V>(db: Database<V, K>, key: K, value: V): void {
    this.q.write(() => db.put(key, value));
  }

  remove<K extends Key, V>(db: Database<V, K>, key: K): void {
    this.q.write(() => db.remove(key));
  }

  saveRun(run: Run | RunRec): void {
    const rec = 'rec' in run ? run.rec : run;
    this.put(this.runsDb, [rec.createdAt, rec.workflowRunId], rec);
  }

  saveEntry(run: Run, e: EntryRec): void {
    this.put(this.entriesDb, [run.rec.workflowRunId, run.rec.createdAt, e.idx], e);
  }

  private entryJson(run: Run, i: number): string {
    let s = run.json[i];
    if (s === undefined) {
      const e = run.entries[i];
      s = JSON.stringify({ messageId: e.messageId, body: e.body, callType: e.callType });
      run.json[i] = s;
    }
    return s;
  }

  /** A record appended to a run (raw entry or log-only record), stored and indexed. */
  addEntry(run: Run, e: Omit<EntryRec, 'idx'>): EntryRec {
    const rec = e as EntryRec;
    rec.idx = run.entries.length;
    run.entries.push(rec);
    this.saveEntry(run, rec);
    if (rec.raw) this.put(this.indexDb, ['m', rec.messageId], [run.rec.workflowRunId, run.rec.createdAt]);
    return rec;
  }

  // ---- the flat log ------------------------------------------------------------------------

  event(rec: RunRec, state: string, extra: Partial<WfEventRec> = {}): void {
    const time = Date.now();
    const e: WfEventRec = {
      time, state, workflowRunId: rec.workflowRunId, workflowUrl: rec.workflowUrl, workflowCreatedAt: rec.createdAt,
      label: rec.labels?.[0], labels: rec.labels, flowControlKey: rec.flowControl?.key, callerIp: rec.callerIp, ...extra,
    };
    const seq = this.evSeq++;
    this.q.write(() => {
      this.eventsDb.put([time, seq], e);
      // Per-run index of the flat log (messageLogs?workflowRunId=... without a scan), and the filters'.
      this.indexDb.put(['e', rec.workflowRunId, time, seq], 1);
      for (const p of eventIndexPrefixes(e)) this.indexDb.put([...p, time, seq], 1);
    });
  }

  /** Message events of workflow messages, enriched with the run and step (messageLogs). */
  logged(m: MessageRec, ev: EventRec): void {
    const w = m.wf!;
    const run = this.runOfMsg(w);
    const rec = run?.rec ?? this.runsDb.get([w.createdAt, w.runId]);
    if (rec === undefined) return;
    const e = w.idx >= 0 ? (run?.entries[w.idx] ?? this.entriesDb.get([w.runId, w.createdAt, w.idx])) : undefined;
    const s = e?.step;
    // The flat log is only read: redaction (Upstash-Redact-Fields) is applied as it is written.
    const red = redactor(rec.redact);
    const stepInfo = w.kind === 'failure'
      ? { callType: 'failureCall', messageId: m.messageId, createdAt: m.createdAt }
      : {
        stepId: w.idx === 0 ? 0 : s?.stepId, stepName: w.idx === 0 ? 'init' : s?.stepName, stepType: w.idx === 0 ? 'Initial' : s?.stepType,
        callType: e?.callType ?? 'step', messageId: m.messageId, concurrent: s?.concurrent ?? 1, createdAt: m.createdAt,
        targetStep: s?.targetStep,
        out: w.idx === 0 ? (rec.redact?.body === true ? redactedText(Buffer.from(e?.body ?? '', 'base64')) : Buffer.from(e?.body ?? '', 'base64').toString('utf8'))
          : red.body(typeof s?.out === 'string' ? s.out : undefined),
        sleepFor: s?.sleepFor, sleepUntil: s?.sleepUntil, waitEventId: s?.waitEventId, waitTimeout: s?.waitTimeout,
        callUrl: e?.call?.url, callMethod: e?.call?.method, callHeaders: red.headers(e?.call?.headers), callBody: red.body(e?.call?.body),
        callResponseStatus: e?.call?.responseStatus, callResponseBody: e?.call?.responseBody, callResponseHeaders: e?.call?.responseHeaders,
        retries: m.retries, nextDeliveryTime: ev.nextDeliveryTime,
      };
    this.event(rec, ev.state, {
      time: ev.time, messageId: m.messageId, stepInfo, nextDeliveryTime: ev.nextDeliveryTime, error: ev.error, responseStatus: ev.responseStatus,
      responseBody: ev.responseBody === undefined ? undefined : Buffer.from(ev.responseBody, 'base64').toString('utf8'),
      responseHeaders: ev.responseHeaders, headers: ev.header,
    });
  }

  // ---- publishing --------------------------------------------------------------------------

  /** The headers of a delivery to the workflow: the run's forwards, the message's own, identity. */
  deliveryHeader(rec: RunRec, own: Record<string, string>, contentType: string): Record<string, string> {
    return {
      ...rec.forward, ...own, 'Content-Type': contentType,
      'Upstash-Workflow-RunId': rec.workflowRunId, 'Upstash-Workflow-CreatedAt': String(rec.createdAt),
    };
  }

  /** The queue message of a workflow delivery, with the run's configuration. */
  runSpec(rec: RunRec, e: EntryRec, kind: WfMeta['kind'], header: Record<string, string>, notBefore: number): MessageSpec {
    return {
      method: 'POST', header, body: e.body, retries: rec.retries, retryDelay: rec.retryDelay, timeout: rec.timeout, notBefore,
      labels: rec.labels, flowControl: rec.flowControl, callerIp: rec.callerIp, redact: rec.redact,
      wf: { runId: rec.workflowRunId, createdAt: rec.createdAt, kind, idx: e.idx }, id: e.messageId,
    };
  }

  /**
   * Append a step entry and publish its delivery. Synchronous up to the publish, so entries
   * accepted together keep their order (a parallel block's last result is appended last).
   */
  appendStep(run: Run, body: Buffer, own: Record<string, string>, notBefore: number, url = run.rec.workflowUrl): Promise<unknown> {
    const now = Date.now();
    const e = this.addEntry(run, {
      messageId: newMessageId(), callType: 'step', body: body.toString('base64'), raw: true, createdAt: now, step: parseStep(body),
      d: 'PROGRESS', next: notBefore > now ? notBefore : undefined,
    });
    const spec = this.runSpec(run.rec, e, 'step', this.deliveryHeader(run.rec, own, 'application/json'), notBefore);
    e.headers = arrays(spec.header);
    this.saveEntry(run, e);
    return this.q.publish(url, spec);
  }

  /** A new run record: active, indexed, RUN_STARTED logged; no entries yet. */
  openRun(p: NewRun): Run {
    const now = Date.now();
    const rec: RunRec = {
      workflowRunId: p.runId, workflowUrl: p.url, createdAt: now, state: 'RUN_STARTED', callerIp: p.callerIp, labels: p.labels,
      retries: p.retries, retryDelay: p.retryDelay, timeout: p.timeout, flowControl: p.flowControl, redact: p.redact,
      forward: p.forward, failure: p.failure, initialBody: p.payload.toString('base64'), contentType: p.contentType,
      invoker: p.invoker, unknownSdk: p.unknownSdk || undefined,
    };
    // Runs of one id are told apart by their creation time: keep it unique.
    while (this.runsDb.get([rec.createdAt, p.runId]) !== undefined) rec.createdAt++;
    const run: Run = { rec, entries: [], json: [] };
    this.active.set(p.runId, run);
    this.saveRun(run);
    this.q.write(() => {
      this.indexDb.put(['a', p.runId], rec.createdAt);
      this.indexDb.put(['r', p.runId, rec.createdAt], 1);
      for (const x of runIndexPrefixes(rec)) this.indexDb.put([...x, rec.createdAt, p.runId], 1);
    });
    this.event(rec, 'RUN_STARTED', p.invoker === undefined ? {} : {
      invokerWorkflowRunId: p.invoker.workflowRunId, invokerWorkflowUrl: p.invoker.workflowUrl, invokerWorkflowCreatedAt: p.invoker.workflowRunCreatedAt,
    });
    return run;
  }

  /** Create a run, append entry 0 (the initial payload) and publish its first delivery. */
  createRun(p: NewRun): { run: Run; done: Promise<unknown> } {
    const run = this.openRun(p);
    const rec = run.rec;
    const now = Date.now();
    const e = this.addEntry(run, {
      messageId: newMessageId(), callType: 'step', body: rec.initialBody, raw: true, createdAt: rec.createdAt, d: 'PROGRESS',
      next: p.notBefore > now ? p.notBefore : undefined,
    });
    const own = p.unknownSdk ? { ...p.own, 'Upstash-Workflow-Unknown-Sdk': 'true' } : p.own;
    const spec = this.runSpec(rec, e, 'step', this.deliveryHeader(rec, own, p.contentType ?? 'application/json'), p.notBefore);
    e.headers = arrays(spec.header);
    this.saveEntry(run, e);
    return { run, done: this.q.publish(p.url, spec) };
  }

  /** The run configuration of a trigger's headers (parseSpec already validated them). */
  newRunFrom(dest: string, h: Headers, body: Buffer, spec: MessageSpec, runId: string): NewRun {
    const url = h.get('upstash-workflow-url') ?? dest;
    const { forward, own } = splitForward(h);
    // The run's label reaches the endpoint too (context.label), as the SDK's own trigger forwards it.
    if (spec.labels !== undefined && !Object.keys(forward).some((k) => k.toLowerCase() === 'upstash-label')) forward['Upstash-Label'] = spec.labels.join(',');
    return {
      runId, url, payload: body, contentType: h.get('content-type'), forward, own, retries: spec.retries, retryDelay: spec.retryDelay,
      timeout: spec.timeout, flowControl: spec.flowControl, labels: spec.labels, redact: spec.redact, failure: failureConfig(h, url, forward),
      notBefore: spec.notBefore, callerIp: spec.callerIp,
    };
  }

  /**
   * A publish carrying Upstash-Workflow-RunId: a trigger (Init), an invoke, a step, or a call
   * request. Null for ordinary messages. Throws HttpError 400 for a step of an inactive run.
   */
  accept(dest: string, h: Headers, body: Buffer, spec: MessageSpec): Promise<unknown> | null {
    const runId = h.get('upstash-workflow-runid');
    if (runId === undefined) return null;
    if (h.get('upstash-workflow-init') === 'true') return this.trigger(dest, h, body, spec, runId);
    const run = this.active.get(runId);
    if (run === undefined) throw new HttpError(400, `workflow run ${runId} does not exist or is not active`);
    const toCallback = h.get('upstash-workflow-calltype') === 'toCallback';
    const dk = dedupKey(dest, h, body, toCallback);
    const seen = this.seenOf(run).get(dk);
    if (seen !== undefined) return Promise.resolve({ messageId: seen, url: dest, deduplicated: true });
    const done = toCallback ? this.callRequest(run, dest, h, body, spec) : this.appendStep(run, body, ownForward(h), spec.notBefore, dest);
    const e = run.entries[run.entries.length - 1];
    e.dk = dk;
    run.seen!.set(dk, e.messageId);
    this.saveEntry(run, e);
    return done;
  }

  /** The run's deduplication keys (rebuilt from its entries after a restart). */
  private seenOf(run: Run): Map<string, string> {
    if (run.seen === undefined) {
      run.seen = new Map();
      for (const e of run.entries) if (e.dk !== undefined) run.seen.set(e.dk, e.messageId);
    }
    return run.seen;
  }

  private trigger(dest: string, h: Headers, body: Buffer, spec: MessageSpec, runId: string): Promise<unknown> {
    const existing = this.active.get(runId);
    if (existing !== undefined) {
      if (h.get('upstash-workflow-trigger-by-sdk') === 'true' && existing.rec.unknownSdk) return this.retrigger(existing, h);
      return Promise.resolve({ messageId: existing.entries[0].messageId, url: dest, deduplicated: true });
    }
    let p: NewRun;
    if (h.get('upstash-workflow-invoke') === 'true') {
      p = this.invokeRun(dest, h, body, spec, runId);
    } else {
      p = this.newRunFrom(dest, h, body, spec, runId);
    }
    const { run, done } = this.createRun(p);
    if (p.invoker !== undefined) this.recordInvoke(run, p.invoker);
    return done;
  }

  /**
   * The SDK answering an unknown-SDK first delivery: it re-publishes the Init for the same run.
   * The run keeps its configuration; its forwarded headers become the re-trigger's, and entry 0
   * is delivered again, now as an ordinary first step.
   */
  private retrigger(run: Run, h: Headers): Promise<unknown> {
    const { forward, own } = splitForward(h);
    run.rec.forward = dropServerOwned(forward);
    run.rec.unknownSdk = undefined;
    if (run.rec.failure !== undefined && h.get('upstash-failure-callback') === undefined && run.rec.failure.url === run.rec.workflowUrl) {
      run.rec.failure.header = { ...run.rec.forward, 'Upstash-Workflow-Is-Failure': 'true', 'Upstash-Workflow-Failure-Callback': 'true' };
    }
    const e = run.entries[0];
    e.messageId = newMessageId();
    e.d = 'PROGRESS';
    run.json[0] = undefined;
    const spec = this.runSpec(run.rec, e, 'step', this.deliveryHeader(run.rec, own, run.rec.contentType ?? 'application/json'), 0);
    e.headers = arrays(spec.header);
    this.saveEntry(run, e);
    this.saveRun(run);
    this.put(this.indexDb, ['m', e.messageId], [run.rec.workflowRunId, run.rec.createdAt]);
    return this.q.publish(run.rec.workflowUrl, spec);
  }

  /** context.invoke: the child run's payload is the request's `body`; the parent is linked. */
  private invokeRun(dest: string, h: Headers, body: Buffer, spec: MessageSpec, runId: string): NewRun {
    let req: { body?: unknown; headers?: Record<string, string[]>; workflowRunId?: unknown; workflowRunCreatedAt?: unknown; workflowUrl?: unknown; step?: StepJson };
    try { req = JSON.parse(body.toString('utf8')); } catch { throw new HttpError(400, 'invoke body must be a JSON object'); }
    if (req === null || typeof req !== 'object' || typeof req.workflowRunId !== 'string') throw new HttpError(400, 'invoke body must carry the invoker workflowRunId');
    const parent = this.active.get(req.workflowRunId);
    if (parent === undefined) throw new HttpError(400, `workflow run ${req.workflowRunId} does not exist or is not active`);
    const depth = Number(h.get('upstash-forward-upstash-workflow-invoke-count') ?? 0);
    if (depth > MAX_INVOKE_DEPTH) throw new HttpError(400, `invoke depth limit ${MAX_INVOKE_DEPTH} exceeded`);
    const payload = Buffer.from(typeof req.body === 'string' ? req.body : req.body === undefined ? '' : JSON.stringify(req.body), 'utf8');
    const p = this.newRunFrom(dest, h, payload, spec, runId);
    p.invoker = {
      workflowRunId: parent.rec.workflowRunId, workflowUrl: parent.rec.workflowUrl, workflowRunCreatedAt: parent.rec.createdAt,
      step: req.step ?? {}, headers: req.headers ?? {},
    };
    return p;
  }

  /** The parent's log-only Invoke record (STEP_PROGRESS until the child ends). */
  private recordInvoke(child: Run, inv: InvokerRec): void {
    const parent = this.activeRun(inv.workflowRunId, inv.workflowRunCreatedAt);
    if (parent === undefined) return;
    this.addEntry(parent, {
      messageId: child.entries[0].messageId, callType: 'step', body: '', raw: false, createdAt: Date.now(), step: { ...inv.step, stepType: inv.step.stepType ?? 'Invoke' },
      d: 'PROGRESS', invoke: {
        runId: child.rec.workflowRunId, url: child.rec.workflowUrl, createdAt: child.rec.createdAt,
        body: Buffer.from(child.rec.initialBody, 'base64').toString('utf8'), headers: arrays(child.rec.forward),
      },
    });
    const red = redactor(parent.rec.redact);
    this.event(parent.rec, 'INVOKED', {
      stepInfo: {
        ...inv.step, invokedWorkflowRunId: child.rec.workflowRunId, invokedWorkflowUrl: child.rec.workflowUrl, invokedWorkflowCreatedAt: child.rec.createdAt,
        invokedWorkflowRunBody: red.body(Buffer.from(child.rec.initialBody, 'base64').toString('utf8')), invokedWorkflowRunHeaders: red.headers(arrays(child.rec.forward)),
      },
    });
  }

  /** A finished child: its result becomes the parent's Invoke step (unless the parent ended). */
  private invokeResult(child: RunRec): void {
    const inv = child.invoker!;
    const parent = this.activeRun(inv.workflowRunId, inv.workflowRunCreatedAt);
    if (parent === undefined) return;
    const out = child.state === 'RUN_SUCCESS'
      ? { body: child.response, isFailed: false, isCanceled: false }
      : { isFailed: child.state === 'RUN_FAILED', isCanceled: child.state === 'RUN_CANCELED' };
    const step: StepJson = { ...inv.step, out: JSON.stringify(out) };
    delete step.targetStep;
    const own: Record<string, string> = {};
    for (const [k, v] of Object.entries(inv.headers)) {
      const l = k.toLowerCase();
      if (l.startsWith('upstash-forward-')) own[l === 'upstash-forward-upstash-workflow-sdk-version' ? 'Upstash-Workflow-Sdk-Version' : l.slice(16)] = v.join(', ');
    }
    this.appendStep(parent, Buffer.from(JSON.stringify(step)), own, 0).catch((err) => console.error('workflow: invoke result not published:', err));
  }

  /** context.call: the request goes to the third party as is; its callback comes back later. */
  private callRequest(run: Run, dest: string, h: Headers, body: Buffer, spec: MessageSpec): Promise<unknown> {
    const cbf = prefixed(h, 'upstash-callback-forward-');
    const step: StepJson = {
      stepId: Number(cbf['upstash-workflow-stepid'] ?? 0), stepName: cbf['upstash-workflow-stepname'], stepType: cbf['upstash-workflow-steptype'] ?? 'Call',
      concurrent: Number(cbf['upstash-workflow-concurrent'] ?? 1),
    };
    const callHeaders: Record<string, string> = { ...spec.header };
    const e = this.addEntry(run, {
      messageId: newMessageId(), callType: 'toCallback', body: body.toString('base64'), raw: true, createdAt: Date.now(), step, d: 'PROGRESS',
      call: { url: dest, method: spec.method, headers: callHeaders, body: body.toString('utf8') },
    });
    e.cb = { url: h.get('upstash-callback') ?? run.rec.workflowUrl, forward: cbf };
    e.headers = arrays(spec.header);
    this.saveEntry(run, e);
    const m: MessageSpec = {
      ...spec, callback: undefined, failureCallback: undefined, callbackHeader: undefined, failureCallbackHeader: undefined,
      callbackOpts: undefined, failureCallbackOpts: undefined, labels: run.rec.labels,
      wf: { runId: run.rec.workflowRunId, createdAt: run.rec.createdAt, kind: 'toCallback', idx: e.idx }, id: e.messageId,
    };
    return this.q.publish(dest, m);
  }

  /** The call finished (success, or retries exhausted): its callback goes to the workflow once. */
  private callDone(run: Run, m: MessageRec, status: number, rh: Record<string, string[]>, rbody: Buffer): void {
    const e = run.entries[m.wf!.idx];
    e.d = 'SUCCESS';
    if (e.call !== undefined) Object.assign(e.call, { responseStatus: status, responseBody: rbody.toString('utf8'), responseHeaders: rh });
    this.saveEntry(run, e);
    const rec = run.rec;
    const payload = {
      status, header: rh, body: rbody.toString('base64'), retried: m.retried, maxRetries: m.retries, sourceMessageId: m.messageId,
      url: m.url, method: m.method, sourceHeader: arrays(m.header), sourceBody: m.body, notBefore: m.notBefore || m.createdAt,
      createdAt: m.createdAt, callerIP: m.callerIp, workflowRunId: rec.workflowRunId, workflowCreatedAt: rec.createdAt,
    };
    const body = Buffer.from(JSON.stringify(payload));
    // The callback's entry carries the call with its response: its message events show both.
    const cb = this.addEntry(run, {
      messageId: newMessageId(), callType: 'fromCallback', body: body.toString('base64'), raw: true, createdAt: Date.now(), d: 'PROGRESS',
      step: e.step, call: e.call,
    });
    const header = this.deliveryHeader(rec, e.cb?.forward ?? {}, 'application/json');
    const spec = this.runSpec(rec, cb, 'fromCallback', header, 0);
    cb.headers = arrays(header);
    this.saveEntry(run, cb);
    this.q.publish(e.cb?.url ?? rec.workflowUrl, spec).catch((err) => console.error('workflow: call callback not published:', err));
  }

  // ---- WorkflowExt: deliveries of workflow messages ----------------------------------------

  body(m: MessageRec): Buffer {
    const w = m.wf!;
    // Callbacks always carry their body: the SDK parses a callback's body before it would
    // fetch anything (an empty one makes it fail).
    if (w.kind !== 'step') return Buffer.from(m.body, 'base64');
    if (this.opts.lazyFetch) return Buffer.alloc(0);
    const run = this.runOfMsg(w) ?? this.endedRun(w.runId, w.createdAt);
    if (run === undefined) return Buffer.from('[]');
    const parts: string[] = [];
    for (let i = 0; i <= w.idx && i < run.entries.length; i++) if (run.entries[i].raw) parts.push(this.entryJson(run, i));
    return Buffer.from(`[${parts.join(',')}]`);
  }

  private endedRun(runId: string, createdAt: number): Run | undefined {
    const rec = this.runsDb.get([createdAt, runId]);
    return rec === undefined ? undefined : { rec, entries: entriesOf(this.entriesDb, runId, createdAt), json: [] };
  }

  check(m: MessageRec, _status: number, header: Record<string, string[]>): string | undefined {
    const w = m.wf!;
    if (w.kind !== 'step' || w.idx !== 0) return undefined;
    // WF_DetectTrigger: every SDK response carries the protocol header.
    if (header['Upstash-Workflow-Sdk-Version'] === undefined) return NON_WORKFLOW;
    if (m.header['Upstash-Workflow-Unknown-Sdk'] === 'true') {
      const v = /^v?(\d+)/.exec(header['Upstash-Workflow-Sdk']?.[0] ?? '');
      if (v === null || Number(v[1]) < 1) return OLD_SDK;
    }
    return undefined;
  }

  async delivered(m: MessageRec, status: number, rh: Record<string, string[]>, rbody: Buffer): Promise<void> {
    const w = m.wf!;
    if (w.kind === 'failure') return this.failureDone(m, 'CALLBACK_SUCCESS', status, rh, rbody);
    const run = this.runOfMsg(w);
    if (run === undefined) return;
    if (w.kind === 'toCallback') return this.callDone(run, m, status, rh, rbody);
    const e = run.entries[w.idx];
    if (e !== undefined && e.messageId === m.messageId) {
      e.d = 'SUCCESS';
      e.next = undefined;
      this.saveEntry(run, e);
    }
  }

  retrying(m: MessageRec, a: AttemptEnd): void {
    const w = m.wf!;
    if (w.kind === 'failure') return;
    const run = this.runOfMsg(w);
    const e = run?.entries[w.idx];
    if (run === undefined || e === undefined || e.messageId !== m.messageId) return;
    e.d = 'RETRY';
    e.errors = [...(e.errors ?? []), ...errorOf(a)];
    e.next = a.nextDeliveryTime;
    this.saveEntry(run, e);
  }

  async failed(m: MessageRec, a: AttemptEnd): Promise<void> {
    const w = m.wf!;
    if (w.kind === 'failure') return this.failureDone(m, 'CALLBACK_FAIL', a.status, a.header, a.body, a.error);
    const run = this.runOfMsg(w);
    if (run === undefined) return;
    // A call whose retries are spent still answers the workflow (with the failing status).
    if (w.kind === 'toCallback') return this.callDone(run, m, a.status, a.header, a.body);
    const e = run.entries[w.idx];
    if (e === undefined || e.messageId !== m.messageId) return;
    e.d = 'FAILED';
    e.errors = [...(e.errors ?? []), ...errorOf(a)];
    e.next = undefined;
    this.saveEntry(run, e);
    this.failRun(run, m, a, w.kind === 'fromCallback' ? 'fromCallback' : 'step');
  }

  /** A delivery of the run failed for good: DLQ, failure callback, RUN_FAILED. */
  private failRun(run: Run, m: MessageRec, a: AttemptEnd, kind: 'step' | 'fromCallback'): void {
    const rec = run.rec;
    const now = Date.now();
    const dlqId = `${now}-${String(this.dlqSeq++ % 1e6).padStart(6, '0')}${crypto.randomBytes(3).toString('hex')}`;
    const d: WfDlqRec = {
      dlqId, messageId: m.messageId, url: m.url, method: m.method, header: arrays(m.header), body: m.body, maxRetries: m.retries,
      retryDelay: m.retryDelay, notBefore: m.notBefore || m.createdAt, createdAt: m.createdAt, failedAt: now, callerIp: rec.callerIp,
      workflowRunId: rec.workflowRunId, workflowCreatedAt: rec.createdAt, workflowUrl: rec.workflowUrl, responseStatus: a.status || undefined,
      responseHeader: a.header, responseBody: a.body.toString('base64'), error: a.error, failureCallback: rec.failure?.url,
      labels: rec.labels, flowControlKey: rec.flowControl?.key, idx: m.wf!.idx, kind,
    };
    this.put(this.dlqDb, dlqId, d);
    if (rec.failure !== undefined) this.sendFailure(rec, d, m.retried);
    this.finishRun(run, 'RUN_FAILED', { dlqId });
  }

  /** Publish the failure callback of a failed run (also DLQ callback retries). */
  sendFailure(rec: RunRec, d: WfDlqRec, retried: number): void {
    const f = rec.failure!;
    const payload = {
      status: d.responseStatus ?? 0, header: d.responseHeader ?? {}, body: d.responseBody ?? '', retried, maxRetries: d.maxRetries,
      dlqId: d.dlqId, sourceMessageId: d.messageId, url: rec.workflowUrl, method: d.method, sourceHeader: d.header,
      sourceBody: rec.initialBody, workflowRunId: rec.workflowRunId, workflowCreatedAt: rec.createdAt, createdAt: d.createdAt,
      callerIP: rec.callerIp,
    };
    const body = Buffer.from(JSON.stringify(payload));
    const messageId = newMessageId();
    const header = { ...f.header, 'Content-Type': 'application/json', 'Upstash-Workflow-RunId': rec.workflowRunId, 'Upstash-Workflow-CreatedAt': String(rec.createdAt) };
    const retries = f.retries ?? rec.retries;
    const text = Buffer.from(d.responseBody ?? '', 'base64').toString('utf8');
    let failResponse = text;
    try { const j = JSON.parse(text); if (typeof j?.message === 'string') failResponse = j.message; } catch { /* the raw text */ }
    rec.failureFunction = {
      messageId, url: f.url, state: 'CALLBACK_INPROGRESS', failHeaders: d.responseHeader ?? {}, failStatus: d.responseStatus ?? 0,
      failResponse, dlqId: d.dlqId, maxRetries: retries,
    };
    const spec: MessageSpec = {
      method: 'POST', header, body: body.toString('base64'), retries, retryDelay: f.retryDelay ?? rec.retryDelay, timeout: rec.timeout,
      notBefore: 0, labels: rec.labels, flowControl: f.flowControl, callerIp: rec.callerIp, redact: rec.redact,
      wf: { runId: rec.workflowRunId, createdAt: rec.createdAt, kind: 'failure', idx: -1 }, id: messageId,
    };
    this.q.publish(f.url, spec).catch((err) => console.error('workflow: failure callback not published:', err));
  }

  private async failureDone(m: MessageRec, state: 'CALLBACK_SUCCESS' | 'CALLBACK_FAIL', status: number, rh: Record<string, string[]>, rbody: Buffer, error?: string): Promise<void> {
    const w = m.wf!;
    const rec = this.runRec(w.runId, w.createdAt);
    const ff = rec?.failureFunction;
    if (rec === undefined || ff === undefined || ff.messageId !== m.messageId) return;
    Object.assign(ff, { state, responseStatus: status || undefined, responseBody: rbody.toString('utf8'), responseHeaders: rh });
    if (error !== undefined) ff.errors = [...(ff.errors ?? []), { error, status: status || undefined, time: Date.now() }];
    this.put(this.runsDb, [rec.createdAt, rec.workflowRunId], rec);
  }

  // ---- endings -------------------------------------------------------------------------------

  /**
   * End a run: its pending deliveries are cancelled (not one in flight: the DELETE or cancel may
   * come from inside it), its waiters dropped, its invoker told; the run leaves memory.
   */
  finishRun(run: Run, state: Exclude<RunState, 'RUN_STARTED'>, extra: Partial<RunRec> = {}): void {
    const rec = run.rec;
    rec.state = state;
    rec.completedAt = Date.now();
    Object.assign(rec, extra);
    for (const e of run.entries) {
      if (e.d !== 'PROGRESS' && e.d !== 'RETRY') continue;
      const msg = e.raw ? this.q.getMessage(e.messageId) : undefined;
      if (msg !== undefined && !msg.active) void this.q.cancel(e.messageId);
      if (state !== 'RUN_SUCCESS') {
        e.d = 'CANCELED';
        e.next = undefined;
        this.saveEntry(run, e);
      }
    }
    this.waits.dropRun(rec);
    this.active.delete(rec.workflowRunId);
    const { createdAt, workflowRunId: id, completedAt } = rec;
    this.q.write(() => {
      this.indexDb.remove(['a', id]);
      this.indexDb.remove(['s', 'RUN_STARTED', createdAt, id]);
      this.indexDb.put(['s', state, createdAt, id], 1);
      this.indexDb.put(['f', completedAt, createdAt, id], 1);
    });
    this.saveRun(run);
    this.event(rec, state, state === 'RUN_SUCCESS' ? { workflowRunResponse: rec.response } : state === 'RUN_FAILED' ? { dlqId: rec.dlqId } : {});
    if (rec.invoker !== undefined) this.invokeResult(rec);
  }

  /** DELETE /v2/workflows/runs/{id}?cancel=false|true. */
  complete(runId: string, cancel: boolean, body: Buffer): boolean {
    const run = this.active.get(runId);
    if (run === undefined) return false;
    if (cancel) this.finishRun(run, 'RUN_CANCELED');
    else this.finishRun(run, 'RUN_SUCCESS', { response: body.length > 0 ? body.toString('utf8') : undefined });
    return true;
  }

  /** Bulk cancel (DELETE /v2/workflows/runs?...): active runs matching the filters. */
  cancelMany(ids: string[], match: (r: RunRec) => boolean, count: number): number {
    const targets: Run[] = [];
    if (ids.length > 0) {
      for (const id of ids) { const r = this.active.get(id); if (r !== undefined) targets.push(r); }
    } else {
      for (const r of this.active.values()) {
        if (targets.length >= count) break;
        if (match(r.rec)) targets.push(r);
      }
    }
    for (const r of targets) this.finishRun(r, 'RUN_CANCELED');
    return targets.length;
  }

  /** GET /v2/workflows/runs/{id}: every raw entry of the active run (lazy fetch). */
  rawEntries(runId: string): string | undefined {
    const run = this.active.get(runId);
    if (run === undefined) return undefined;
    const parts: string[] = [];
    for (let i = 0; i < run.entries.length; i++) if (run.entries[i].raw) parts.push(this.entryJson(run, i));
    return `[${parts.join(',')}]`;
  }

  /** Resolves once every write issued so far is committed (before answering a request). */
  committed(): Promise<unknown> {
    return this.q.writeAwait(() => this.q.env.committed);
  }

  /** A listing in the log worker, after every write issued so far is committed. */
  query<T>(task: Record<string, unknown>): Promise<T> {
    return this.q.query<T>({ ...task, path: this.q.dbPath });
  }
}
