/**
 * The QStash-compatible message service: durable messages in LMDB (<dir>/qstash), the
 * scheduler (a min-heap of due times armed on one timer), the gates that hold a due message
 * back (queue parallelism and order, flow-control parallelism/rate/pause), the HTTP delivery
 * worker (node:http with keep-alive agents, deliver.ts) with signatures, retries, DLQ and callbacks, the
 * event log, cron schedules, URL groups, tokens and signing keys. HTTP parsing of the /v2
 * endpoints lives in routes.ts; the event listing runs in the piscina pool (log-query.ts).
 *
 * Durability: a message is written (awaited commit) before publish answers; every state change
 * rewrites it. On start every stored message is scheduled again; one marked active (in flight at
 * a crash) is delivered again at once: at-least-once.
 *
 * Gates, in this order: a queue (FIFO; a message holds one of the queue's `parallelism` slots
 * from its first attempt until it is delivered, failed or cancelled, retries and callbacks
 * included, as QStash documents), its flow-control key (parallelism, rate), then the
 * server-wide cap on deliveries in flight (--qstash-parallelism, GET /v2/globalParallelism).
 */
import crypto from 'node:crypto';
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { open, type RootDatabase, type Database } from 'lmdb';
import { openChecked } from '../store/datadir.js';
import { Piscina } from 'piscina';
import { signDelivery, newSigningKey } from './sign.js';
import type { V2Request, V2Response } from '../http/v2.js';
import { attempt, canonicalHeader, type Attempt } from './deliver.js';
import { compileRetryDelay, defaultBackoff, parseRetryAfter } from './expr.js';
import { parseCron, nextRun } from './cron.js';
import type { CallbackOpts, DlqRec, EventQuery, EventRec, FlowControl, MessageRec, MessageSpec, QueueRec, ScheduleRec, TopicRec } from './types.js';

/** The dev server's published credentials (qstash-js dev mode probes /v2/keys for these). */
export const DEV_TOKEN = 'eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=';
export const DEV_CURRENT_KEY = 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r';
export const DEV_NEXT_KEY = 'sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs';

export interface QStashOptions {
  dir: string;
  token: string; // '' = generated and kept
  devCredentials: boolean;
  retentionMs: number;
  defaultTimeoutMs: number;
  /** Commit without fsync (survives a process crash, not a power loss): appendfsync no/everysec. */
  noSync?: boolean;
  /** Most deliveries in flight at once, server-wide (default 1000). */
  parallelism?: number;
}

/**
 * The workflow layer (src/qstash/workflow) on top of the queue: it builds the delivered body of
 * its messages (the run's entry prefix), vets a 2xx (a non-workflow endpoint), and learns how
 * each attempt ended. It owns the DLQ and failure callbacks of its messages.
 */
export interface WorkflowExt {
  /** A publish with Upstash-Workflow-RunId becomes a run or a step of one; null for other messages. */
  accept(dest: string, h: ReadonlyMap<string, string>, body: Buffer, spec: MessageSpec): Promise<unknown> | null;
  /** POST /v2/batch/trigger and /v2/dlq?source=workflow. */
  handlers: Partial<Record<'batchTrigger' | 'dlq', (req: V2Request) => Promise<V2Response>>>;
  body(m: MessageRec): Buffer;
  /** An error text turns a 2xx into a failed attempt. */
  check(m: MessageRec, status: number, header: Record<string, string[]>): string | undefined;
  delivered(m: MessageRec, status: number, header: Record<string, string[]>, body: Buffer): Promise<void>;
  retrying(m: MessageRec, a: AttemptEnd): void;
  failed(m: MessageRec, a: AttemptEnd): Promise<void>;
  logged(m: MessageRec, e: EventRec): void;
}

export interface AttemptEnd { status: number; header: Record<string, string[]>; body: Buffer; error: string; nextDeliveryTime?: number }

export class HttpError extends Error {
  constructor(readonly status: number, msg: string) { super(msg); }
}

interface FlowState {
  key: string; parallelism?: number; rate?: number; period: number;
  active: number; rateCount: number; periodStart: number; waiting: MessageRec[];
  paused: boolean; pinnedParallelism: boolean; pinnedRate: boolean; timer: NodeJS.Timeout | null;
}
interface QueueState { active: number; waiting: MessageRec[] }
interface HeapItem { due: number; id: string }

const DEDUP_WINDOW = 10 * 60_000;

export class QStashService {
  readonly env: RootDatabase;
  readonly dbPath: string;
  private readonly msgs: Database<MessageRec, string>;
  private readonly events: Database<EventRec, [number, number]>;
  private readonly byMsg: Database<number, [string, number, number]>;
  private readonly dlqDb: Database<DlqRec, string>;
  private readonly schedDb: Database<ScheduleRec, string>;
  private readonly queueDb: Database<QueueRec, string>;
  private readonly topicDb: Database<TopicRec, string>;
  private readonly meta: Database<unknown, string>;

  token = '';
  tokenSource = '';
  currentKey = '';
  nextKey = '';

  private readonly pending = new Map<string, MessageRec>();
  private readonly inflight = new Map<string, Attempt>();
  private readonly cancelled = new Set<string>();
  private readonly heap: HeapItem[] = [];
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private readonly qstate = new Map<string, QueueState>();
  /** Deliveries in flight (the global parallelism count) and those waiting for a free one. */
  private globalActive = 0;
  private globalWaiting: MessageRec[] = [];
  private readonly flows = new Map<string, FlowState>();
  private readonly dedup = new Map<string, { messageId: string; exp: number }>();
  private readonly schedules = new Map<string, ScheduleRec>();
  private schedTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private pool: Piscina | null = null;
  /** The workflow layer, when attached (app.ts). */
  ext: WorkflowExt | null = null;
  private evSeq = 0;
  private msgSeq = 0;
  private dlqSeq = 0;
  private stopped = false;
  // Hot-path writes (messages, events) are queued and issued together every few ms: lmdb-js
  // starts one write transaction per event-loop turn that writes, and under load one per turn
  // costs far more main-thread time than one per batch.
  private wq: (() => unknown)[] = [];
  private wqWaiters: (() => void)[] = [];
  private wqTimer: NodeJS.Timeout | null = null;

  constructor(readonly opts: QStashOptions) {
    this.dbPath = path.join(opts.dir, 'qstash');
    fs.mkdirSync(this.dbPath, { recursive: true });
    this.env = openChecked(this.dbPath, () => open({ path: this.dbPath, maxDbs: 16, noSync: opts.noSync, commitDelay: 2 }));
    this.msgs = this.env.openDB({ name: 'messages', encoding: 'json' });
    this.events = this.env.openDB({ name: 'events', encoding: 'json' });
    this.byMsg = this.env.openDB({ name: 'eventsByMsg', encoding: 'json' });
    this.dlqDb = this.env.openDB({ name: 'dlq', encoding: 'json' });
    this.schedDb = this.env.openDB({ name: 'schedules', encoding: 'json' });
    this.queueDb = this.env.openDB({ name: 'queues', encoding: 'json' });
    this.topicDb = this.env.openDB({ name: 'topics', encoding: 'json' });
    this.meta = this.env.openDB({ name: 'meta', encoding: 'json' });
  }

  // ---- life cycle --------------------------------------------------------------------------

  async start(): Promise<void> {
    const o = this.opts;
    if (o.devCredentials) {
      this.token = o.token || DEV_TOKEN;
      this.tokenSource = o.token ? '--qstash-token' : 'dev credentials';
      this.currentKey = DEV_CURRENT_KEY;
      this.nextKey = DEV_NEXT_KEY;
    } else {
      const saved = this.meta.get('credentials') as { token: string; current: string; next: string } | undefined;
      this.token = o.token || saved?.token || `qstash_${crypto.randomBytes(24).toString('base64url')}`;
      this.tokenSource = o.token ? '--qstash-token' : saved ? `stored in ${this.dbPath}` : 'generated';
      this.currentKey = saved?.current ?? newSigningKey();
      this.nextKey = saved?.next ?? newSigningKey();
      await this.meta.put('credentials', { token: o.token ? saved?.token ?? '' : this.token, current: this.currentKey, next: this.nextKey });
    }
    const lastEv = this.events.getKeys({ reverse: true, limit: 1 } as never);
    for (const k of lastEv) this.evSeq = (k as unknown as [number, number])[1] + 1;
    const now = Date.now();
    for (const { value: m } of this.msgs.getRange()) {
      // In flight at a crash or stop: deliver again (at least once).
      if (m.active) { m.active = false; m.due = now; }
      if (m.seq >= this.msgSeq) this.msgSeq = m.seq + 1;
      // A message between retries, or a callback of a queue message, still holds its slot.
      if (m.queueSlot !== undefined) this.queueState(m.queueSlot).active++;
      this.pending.set(m.messageId, m);
      this.push({ due: m.due, id: m.messageId });
    }
    for (const { key, value } of this.meta.getRange({ start: 'dedup:', end: 'dedup;' })) {
      const d = value as { messageId: string; exp: number };
      if (d.exp > now) this.dedup.set((key as string).slice(6), d);
      else this.meta.remove(key);
    }
    for (const { key, value } of this.meta.getRange({ start: 'flow:', end: 'flow;' })) {
      const f = value as Partial<FlowState>;
      const st = this.flow((key as string).slice(5));
      Object.assign(st, { parallelism: f.parallelism, rate: f.rate, period: f.period ?? 1000, paused: !!f.paused, pinnedParallelism: !!f.pinnedParallelism, pinnedRate: !!f.pinnedRate });
    }
    for (const { value: s } of this.schedDb.getRange()) this.schedules.set(s.scheduleId, s);
    this.pool = new Piscina({
      filename: path.join(path.dirname(fileURLToPath(import.meta.url)), 'log-worker.js'),
      minThreads: 0, maxThreads: 1, idleTimeout: 30_000,
    });
    this.arm();
    this.armSchedules();
    this.pruneTimer = setInterval(() => this.prune(), 60_000);
    this.pruneTimer.unref();
    this.prune();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.schedTimer) clearTimeout(this.schedTimer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    for (const f of this.flows.values()) if (f.timer) clearTimeout(f.timer);
    for (const at of this.inflight.values()) at.abort(new Error('server stopping'));
    if (this.wqTimer !== null) { clearTimeout(this.wqTimer); this.flushWrites(); }
    await this.pool?.destroy();
    await this.env.committed;
    await this.env.close();
  }

  /** Queue a write (the workflow layer's too): issued with the others every few ms, in order. */
  write(fn: () => unknown): void {
    this.wq.push(fn);
    this.wqTimer ??= setTimeout(() => this.flushWrites(), 2);
  }

  /** Queue a write and resolve once its batch is committed. */
  writeAwait(fn: () => unknown): Promise<void> {
    this.write(fn);
    return new Promise((resolve) => { this.wqWaiters.push(resolve); });
  }

  private flushWrites(): void {
    this.wqTimer = null;
    const q = this.wq;
    const waiters = this.wqWaiters;
    this.wq = [];
    this.wqWaiters = [];
    let last: unknown;
    for (const f of q) last = f();
    // Writes issued in one turn share one transaction: the last one settles with all of them.
    Promise.resolve(last).then(() => { for (const w of waiters) w(); }, (err) => {
      console.error('qstash: write failed:', err);
      for (const w of waiters) w();
    });
  }

  // ---- auth and keys -----------------------------------------------------------------------

  checkToken(t: string): boolean {
    const a = Buffer.from(t);
    const b = Buffer.from(this.token);
    return a.length === b.length && crypto.timingSafeEqual(a, b);
  }

  async rotateKeys(): Promise<{ current: string; next: string }> {
    this.currentKey = this.nextKey;
    this.nextKey = newSigningKey();
    const saved = (this.meta.get('credentials') as { token: string } | undefined)?.token ?? '';
    if (!this.opts.devCredentials) await this.meta.put('credentials', { token: saved, current: this.currentKey, next: this.nextKey });
    return { current: this.currentKey, next: this.nextKey };
  }

  // ---- publishing --------------------------------------------------------------------------

  /** Publish one request: to a URL (one message) or a URL group (one per endpoint). */
  async publish(dest: string, spec: MessageSpec, dedupId?: string): Promise<unknown> {
    const now = Date.now();
    if (dedupId !== undefined) {
      const d = this.dedup.get(dedupId);
      if (d !== undefined && d.exp > now) {
        return isUrl(dest) ? { messageId: d.messageId, url: dest, deduplicated: true } : [{ messageId: d.messageId, deduplicated: true }];
      }
    }
    // Nothing is awaited before the messages get their queue order (seq): concurrent publishes
    // (a batch) keep their request order.
    if (spec.flowControl !== undefined) this.configureFlow(spec.flowControl);
    let targets: { url: string; topicName?: string; endpointName?: string }[];
    const group = !isUrl(dest);
    if (group) {
      const t = this.topicDb.get(dest);
      if (t === undefined) throw new HttpError(404, `urlGroup ${dest} not found`);
      if (t.endpoints.length === 0) throw new HttpError(400, `urlGroup ${dest} has no endpoints`);
      targets = t.endpoints.map((e) => ({ url: e.url, topicName: dest, endpointName: e.name }));
    } else {
      targets = [{ url: dest }];
    }
    const made: MessageRec[] = [];
    const writes: Promise<unknown>[] = [];
    if (spec.queueName !== undefined) writes.push(this.ensureQueue(spec.queueName));
    for (const t of targets) {
      const m: MessageRec = {
        ...spec, messageId: spec.id ?? newMessageId(), url: t.url, topicName: t.topicName, endpointName: t.endpointName,
        createdAt: now, retried: 0, due: Math.max(spec.notBefore, now), seq: this.msgSeq++, dedupId,
      };
      made.push(m);
      writes.push(this.writeAwait(() => this.msgs.put(m.messageId, m)));
    }
    if (dedupId !== undefined) {
      const d = { messageId: made[0].messageId, exp: now + DEDUP_WINDOW };
      this.dedup.set(dedupId, d);
      writes.push(this.writeAwait(() => this.meta.put(`dedup:${dedupId}`, d)));
    }
    await Promise.all(writes);
    for (const m of made) {
      this.log(m, 'CREATED');
      this.pending.set(m.messageId, m);
      this.push({ due: m.due, id: m.messageId });
    }
    this.arm();
    if (group) return made.map((m) => ({ messageId: m.messageId, url: m.url, ...(dedupId !== undefined ? { deduplicated: false } : {}) }));
    return { messageId: made[0].messageId, url: made[0].url, ...(dedupId !== undefined ? { deduplicated: false } : {}) };
  }

  // ---- scheduler ---------------------------------------------------------------------------

  private push(it: HeapItem): void {
    const h = this.heap;
    h.push(it);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p].due <= h[i].due) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  private pop(): HeapItem | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l].due < h[m].due) m = l;
        if (r < h.length && h[r].due < h[m].due) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    return top;
  }

  /** Arm the timer for the earliest due message (runs due ones on the next turn). */
  private arm(): void {
    if (this.stopped || this.heap.length === 0) return;
    const at = this.heap[0].due;
    if (this.timer !== null && this.timerAt <= at) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.tick(), Math.max(0, Math.min(at - Date.now(), 2 ** 31 - 1)));
  }

  private tick(): void {
    this.timer = null;
    this.timerAt = Infinity;
    const now = Date.now();
    // Queues are drained once every due message is in its list, so that the lowest enqueue
    // order goes first even when several fall due together (as after a restart).
    let queues: Set<string> | null = null;
    while (this.heap.length > 0 && this.heap[0].due <= now) {
      const it = this.pop()!;
      const m = this.pending.get(it.id);
      if (m === undefined || m.due !== it.due || m.active) continue; // stale entry
      const q = this.admit(m);
      if (q !== undefined) (queues ??= new Set()).add(q);
    }
    if (queues !== null) for (const q of queues) this.drainQueue(q);
    this.arm();
  }

  /**
   * A due message passes its gates, or waits in their lists. A queue message not yet started
   * joins its queue's list in enqueue order (the caller drains the queue: its name is
   * returned); one that holds a slot (a retry, a callback) goes straight on.
   */
  private admit(m: MessageRec): string | undefined {
    if (m.queueName !== undefined && m.queueSlot === undefined) {
      const q = this.queueState(m.queueName);
      let i = q.waiting.length;
      while (i > 0 && q.waiting[i - 1].seq > m.seq) i--;
      q.waiting.splice(i, 0, m);
      return m.queueName;
    }
    this.admitFlow(m);
    return undefined;
  }

  private admitFlow(m: MessageRec): void {
    if (m.flowControl !== undefined) {
      const f = this.flow(m.flowControl.key);
      if (!this.flowCanStart(f)) { f.waiting.push(m); return; }
      f.active++;
      f.rateCount++;
    }
    this.startDelivery(m);
  }

  private drainQueue(name: string): void {
    const q = this.queueState(name);
    const rec = this.queueDb.get(name);
    const par = rec?.parallelism ?? 1;
    while (q.waiting.length > 0 && !(rec?.paused) && q.active < par) {
      const m = q.waiting.shift()!;
      if (!this.pending.has(m.messageId)) continue;
      q.active++;
      m.queueSlot = name;
      this.admitFlow(m);
    }
  }

  /** The message ends (delivered, failed, cancelled): its queue slot goes to the next one. */
  private releaseQueueSlot(m: MessageRec): void {
    const name = m.queueSlot;
    if (name === undefined) return;
    m.queueSlot = undefined;
    this.queueState(name).active--;
    this.drainQueue(name);
  }

  private flow(key: string): FlowState {
    let f = this.flows.get(key);
    if (f === undefined) {
      f = { key, period: 1000, active: 0, rateCount: 0, periodStart: Date.now(), waiting: [], paused: false, pinnedParallelism: false, pinnedRate: false, timer: null };
      this.flows.set(key, f);
    }
    return f;
  }

  private configureFlow(fc: FlowControl): void {
    const f = this.flow(fc.key);
    if (!f.pinnedParallelism) f.parallelism = fc.parallelism;
    if (!f.pinnedRate) { f.rate = fc.rate; f.period = fc.period ?? 1000; }
    this.saveFlow(f);
  }

  private saveFlow(f: FlowState): void {
    void this.meta.put(`flow:${f.key}`, { parallelism: f.parallelism, rate: f.rate, period: f.period, paused: f.paused, pinnedParallelism: f.pinnedParallelism, pinnedRate: f.pinnedRate });
  }

  private flowCanStart(f: FlowState): boolean {
    if (f.paused) return false;
    if (f.parallelism !== undefined && f.active >= f.parallelism) return false;
    if (f.rate !== undefined) {
      const now = Date.now();
      if (now - f.periodStart >= f.period) { f.periodStart = now; f.rateCount = 0; }
      if (f.rateCount >= f.rate) {
        if (f.timer === null) {
          f.timer = setTimeout(() => { f.timer = null; this.drainFlow(f); }, f.periodStart + f.period - now);
        }
        return false;
      }
    }
    return true;
  }

  private drainFlow(f: FlowState): void {
    while (f.waiting.length > 0 && this.flowCanStart(f)) {
      const m = f.waiting.shift()!;
      if (!this.pending.has(m.messageId)) continue;
      f.active++;
      f.rateCount++;
      this.startDelivery(m);
    }
  }

  // ---- delivery ----------------------------------------------------------------------------

  /** The last gate: the server-wide cap on deliveries in flight. */
  private startDelivery(m: MessageRec): void {
    if (this.globalActive >= (this.opts.parallelism ?? 1000)) { this.globalWaiting.push(m); return; }
    this.globalActive++;
    // A failure outside the HTTP attempt (storage) must not take the server down.
    this.deliver(m).catch((err) => console.error(`qstash: delivery of ${m.messageId} failed:`, err));
  }

  private drainGlobal(): void {
    const max = this.opts.parallelism ?? 1000;
    while (this.globalWaiting.length > 0 && this.globalActive < max) {
      const m = this.globalWaiting.shift()!;
      this.globalActive++;
      this.deliver(m).catch((err) => console.error(`qstash: delivery of ${m.messageId} failed:`, err));
    }
  }

  private async deliver(m: MessageRec): Promise<void> {
    // Not rewritten here: the stored record is already due, so a crash during the attempt
    // delivers it again on start (at least once) without one more write per attempt.
    m.active = true;
    this.log(m, 'ACTIVE');
    const body = m.wf !== undefined && this.ext !== null ? this.ext.body(m) : Buffer.from(m.body, 'base64');
    const headers: Record<string, string> = { ...m.header };
    headers['Upstash-Message-Id'] = m.messageId;
    headers['Upstash-Retried'] = String(m.retried);
    headers['Upstash-Signature'] = signDelivery(this.currentKey, m.url, body);
    headers['User-Agent'] = 'Upstash-QStash';
    if (m.topicName !== undefined) headers['Upstash-Topic-Name'] = m.topicName;
    if (m.scheduleId !== undefined) headers['Upstash-Schedule-Id'] = m.scheduleId;
    if (m.callerIp !== undefined) headers['Upstash-Caller-Ip'] = m.callerIp;
    const at = attempt(m.url, m.method, headers, body, m.timeout ?? this.opts.defaultTimeoutMs);
    this.inflight.set(m.messageId, at);
    let status = 0;
    let rh: Record<string, string[]> = {};
    let rbody: Buffer = Buffer.alloc(0);
    let error: string | undefined;
    let retryAfter: string | null = null;
    let nonRetryable = false;
    try {
      const res = await at.done;
      status = res.status;
      rh = res.headers;
      rbody = res.body;
      retryAfter = rh['Retry-After']?.[0] ?? null;
      nonRetryable = status === 489 && rh['Upstash-Nonretryable-Error']?.[0] === 'true';
    } catch (err) {
      const e = err as Error & { code?: string };
      error = e.code !== undefined && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message;
    } finally {
      this.inflight.delete(m.messageId);
    }
    this.release(m);
    if (this.stopped) return;
    let ok = status >= 200 && status < 300;
    if (ok && m.wf !== undefined && this.ext !== null) {
      error = this.ext.check(m, status, rh);
      ok = error === undefined;
    }
    if (this.cancelled.has(m.messageId)) {
      this.cancelled.delete(m.messageId);
      await this.finish(m);
      this.log(m, 'CANCELLED');
      this.releaseQueueSlot(m);
      return;
    }
    if (ok) {
      this.pending.delete(m.messageId);
      this.log(m, 'DELIVERED', { responseStatus: status });
      if (m.wf !== undefined && this.ext !== null) {
        await this.finish(m);
        this.releaseQueueSlot(m);
        return this.ext.delivered(m, status, rh, rbody);
      }
      this.scheduleState(m, 'SUCCESS');
      // Removed in the commit that stores its callback: a crash in between delivers again.
      const removed = this.writeAwait(() => this.msgs.remove(m.messageId));
      await this.sendCallbacks(m, true, status, rh, rbody);
      await removed;
      return;
    }
    if (error === undefined) error = `${status} ${statusText(status)}`;
    m.last = { status, header: rh, body: rbody.toString('base64'), error };
    this.log(m, 'ERROR', { error, responseStatus: status || undefined, responseHeaders: rh, responseBody: rbody.toString('base64') });
    if (!nonRetryable && m.retried < m.retries) {
      let delay: number | null = status === 429 ? parseRetryAfter(retryAfter, Date.now()) : null;
      if (delay === null) delay = m.retryDelay !== undefined ? compileRetryDelay(m.retryDelay)(m.retried) : defaultBackoff(m.retried);
      m.retried++;
      m.active = false;
      m.due = Date.now() + delay;
      await this.writeAwait(() => this.msgs.put(m.messageId, m));
      this.log(m, 'RETRY', { nextDeliveryTime: m.due });
      if (m.wf !== undefined && this.ext !== null) this.ext.retrying(m, { status, header: rh, body: rbody, error, nextDeliveryTime: m.due });
      this.push({ due: m.due, id: m.messageId });
      this.arm();
      return;
    }
    if (m.wf !== undefined && this.ext !== null) {
      // Workflow messages: the workflow layer owns their DLQ and failure callbacks.
      await this.finish(m);
      this.releaseQueueSlot(m);
      this.log(m, 'FAILED', { error, responseStatus: status || undefined });
      return this.ext.failed(m, { status, header: rh, body: rbody, error });
    }
    // Out of retries (or non-retryable): to the DLQ (in the commit that stores the callbacks),
    // then the callback and the failure callback.
    const dlqId = `${Date.now()}-${this.dlqSeq++}`;
    const d: DlqRec = { ...m, active: false, queueSlot: undefined, dlqId, failedAt: Date.now() };
    this.pending.delete(m.messageId);
    const stored = this.writeAwait(() => { this.dlqDb.put(dlqId, d); return this.msgs.remove(m.messageId); });
    this.log(m, 'FAILED', { error, responseStatus: status || undefined });
    this.scheduleState(m, 'FAIL');
    await this.sendCallbacks(m, false, status, rh, rbody, dlqId);
    await stored;
  }

  /** The end of an attempt: free its flow-control slot and its global one, let waiters go. */
  private release(m: MessageRec): void {
    this.globalActive--;
    if (m.flowControl !== undefined) {
      const f = this.flow(m.flowControl.key);
      f.active--;
      this.drainFlow(f);
    }
    this.drainGlobal();
  }

  /**
   * After the last attempt: the callback (on success, or once the retries are exhausted) and
   * the failure callback. They inherit the message's queue slot (one more slot per extra
   * callback), so the next message of the queue waits for them, as QStash documents.
   */
  private async sendCallbacks(m: MessageRec, delivered: boolean, status: number, rh: Record<string, string[]>, rbody: Buffer, dlqId?: string): Promise<void> {
    const slot = m.queueSlot;
    m.queueSlot = undefined;
    const sends: Promise<boolean>[] = [];
    if (m.kind === undefined) { // callbacks of callbacks are not chained
      if (m.callback !== undefined) sends.push(this.sendCallback(m, m.callback, m.callbackHeader, m.callbackOpts, 'callback', status, rh, rbody, dlqId, slot));
      if (!delivered && m.failureCallback !== undefined) {
        sends.push(this.sendCallback(m, m.failureCallback, m.failureCallbackHeader, m.failureCallbackOpts, 'failureCallback', status, rh, rbody, dlqId, slot));
      }
    }
    if (slot === undefined) { await Promise.all(sends); return; }
    const q = this.queueState(slot);
    q.active += sends.length - 1; // before any callback can end
    const published = await Promise.all(sends);
    q.active -= published.filter((x) => !x).length; // one not published holds nothing
    this.drainQueue(slot);
  }

  private async finish(m: MessageRec): Promise<void> {
    this.pending.delete(m.messageId);
    await this.writeAwait(() => this.msgs.remove(m.messageId));
  }

  /** Publish one callback message; false if that failed. */
  private async sendCallback(m: MessageRec, url: string, hdr: Record<string, string> | undefined, o: CallbackOpts | undefined, kind: 'callback' | 'failureCallback',
    status: number, rh: Record<string, string[]>, rbody: Buffer, dlqId: string | undefined, queueSlot: string | undefined): Promise<boolean> {
    const payload: Record<string, unknown> = {
      status, header: rh, body: rbody.toString('base64'), retried: m.retried, maxRetries: m.retries,
      sourceMessageId: m.messageId, topicName: m.topicName, endpointName: m.endpointName, url: m.url, method: m.method,
      sourceHeader: arrays(m.header), sourceBody: m.body, notBefore: m.notBefore, createdAt: m.createdAt,
      scheduleId: m.scheduleId, callerIP: m.callerIp,
    };
    if (dlqId !== undefined) payload.dlqId = dlqId;
    const spec: MessageSpec = {
      method: o?.method ?? 'POST', header: { ...(hdr ?? {}), 'Content-Type': 'application/json' },
      body: Buffer.from(JSON.stringify(payload)).toString('base64'), retries: o?.retries ?? m.retries,
      retryDelay: o?.retryDelay ?? m.retryDelay, timeout: o?.timeout, notBefore: o?.delay ? Date.now() + o.delay : 0, callerIp: m.callerIp, kind, queueSlot,
    };
    try {
      await this.publish(url, spec);
      return true;
    } catch (err) {
      console.error(`qstash: could not publish the ${kind} of ${m.messageId}:`, (err as Error).message);
      return false;
    }
  }

  // ---- the event log -----------------------------------------------------------------------

  private log(m: MessageRec, state: string, extra: Partial<EventRec> = {}): void {
    const time = Date.now();
    const seq = this.evSeq++;
    const e: EventRec = {
      time, state, messageId: m.messageId, url: m.url, topicName: m.topicName, endpointName: m.endpointName,
      scheduleId: m.scheduleId, queueName: m.queueName, ...shown(m), method: m.method,
      maxRetries: m.retries, retried: m.retried, label: m.labels?.[0], labels: m.labels, flowControlKey: m.flowControl?.key,
      timeout: m.timeout, callback: m.callback, failureCallback: m.failureCallback, retryDelayExpression: m.retryDelay, ...extra,
    };
    if (m.wf !== undefined) this.ext?.logged(m, e);
    this.write(() => {
      this.events.put([time, seq], e);
      return this.byMsg.put([m.messageId, time, seq], 1);
    });
  }

  async queryEvents(q: Omit<EventQuery, 'path'>): Promise<{ events: EventRec[]; cursor?: string }> {
    return this.query({ ...q, path: this.dbPath });
  }

  /** Run a listing in the log worker once every write issued so far is committed. */
  async query<T>(task: { path: string; kind?: string }): Promise<T> {
    if (this.wqTimer !== null) { clearTimeout(this.wqTimer); this.flushWrites(); }
    await this.env.committed;
    return this.pool!.run(task);
  }

  private prune(): void {
    const cut = Date.now() - this.opts.retentionMs;
    void this.env.transaction(() => {
      for (const { key, value } of this.events.getRange({ start: [0, -1], end: [cut, -1] })) {
        this.events.remove(key);
        this.byMsg.remove([value.messageId, key[0], key[1]]);
      }
    });
  }

  // ---- messages ----------------------------------------------------------------------------

  getMessage(id: string): MessageRec | undefined {
    return this.pending.get(id);
  }

  /** Cancel one message; false when unknown or already finished. */
  async cancel(id: string): Promise<boolean> {
    const m = this.pending.get(id);
    if (m === undefined || this.cancelled.has(id)) return false;
    this.log(m, 'CANCEL_REQUESTED');
    const at = this.inflight.get(id);
    if (at !== undefined) {
      this.cancelled.add(id);
      at.abort(new Error('cancelled'));
      return true;
    }
    for (const q of this.qstate.values()) q.waiting = q.waiting.filter((x) => x !== m);
    for (const f of this.flows.values()) f.waiting = f.waiting.filter((x) => x !== m);
    const gi = this.globalWaiting.indexOf(m);
    if (gi >= 0) {
      // Already past its flow-control gate: give that slot back.
      this.globalWaiting.splice(gi, 1);
      if (m.flowControl !== undefined) {
        const f = this.flow(m.flowControl.key);
        f.active--;
        this.drainFlow(f);
      }
    }
    await this.finish(m);
    this.log(m, 'CANCELLED');
    this.releaseQueueSlot(m);
    return true;
  }

  listMessages(): IterableIterator<MessageRec> {
    return this.pending.values();
  }

  // ---- DLQ ---------------------------------------------------------------------------------

  dlqList(start?: string): Iterable<DlqRec> {
    return this.dlqDb.getRange(start === undefined ? {} : { start }).map(({ value }) => value);
  }

  dlqGet(id: string): DlqRec | undefined {
    return this.dlqDb.get(id);
  }

  async dlqDelete(id: string): Promise<boolean> {
    if (this.dlqDb.get(id) === undefined) return false;
    await this.dlqDb.remove(id);
    return true;
  }

  /**
   * Publish the DLQ message again as a new message (retry count reset); the entry goes.
   * `over`: configuration given with the retry request (Upstash-Retries...) replaces the message's.
   */
  async dlqRetry(id: string, over: Partial<MessageSpec> = {}): Promise<{ messageId: string } | null> {
    const d = this.dlqDb.get(id);
    if (d === undefined) return null;
    const spec: MessageSpec = {
      method: d.method, header: d.header, body: d.body, retries: d.retries, retryDelay: d.retryDelay, timeout: d.timeout,
      callback: d.callback, failureCallback: d.failureCallback, callbackHeader: d.callbackHeader, failureCallbackHeader: d.failureCallbackHeader, callbackOpts: d.callbackOpts, failureCallbackOpts: d.failureCallbackOpts,
      notBefore: 0, labels: d.labels, redact: d.redact, flowControl: d.flowControl, queueName: d.queueName, scheduleId: d.scheduleId, callerIp: d.callerIp, kind: d.kind,
      ...over,
    };
    const r = await this.publish(d.url, spec) as { messageId: string };
    await this.dlqDb.remove(id);
    return { messageId: r.messageId };
  }

  // ---- queues ------------------------------------------------------------------------------

  private queueState(name: string): QueueState {
    let q = this.qstate.get(name);
    if (q === undefined) { q = { active: 0, waiting: [] }; this.qstate.set(name, q); }
    return q;
  }

  private async ensureQueue(name: string): Promise<void> {
    if (this.queueDb.get(name) !== undefined) return;
    const now = Date.now();
    await this.queueDb.put(name, { name, parallelism: 1, paused: false, createdAt: now, updatedAt: now });
  }

  async upsertQueue(name: string, parallelism: number, paused: boolean): Promise<void> {
    const now = Date.now();
    const old = this.queueDb.get(name);
    await this.queueDb.put(name, { name, parallelism, paused, createdAt: old?.createdAt ?? now, updatedAt: now });
    this.drainQueue(name);
  }

  queueInfo(name: string): (QueueRec & { lag: number }) | undefined {
    const q = this.queueDb.get(name);
    if (q === undefined) return undefined;
    let lag = 0;
    for (const m of this.pending.values()) if (m.queueName === name && !m.active) lag++;
    return { ...q, lag };
  }

  queueNames(): string[] {
    return [...this.queueDb.getKeys({})] as string[];
  }

  async deleteQueue(name: string): Promise<boolean> {
    if (this.queueDb.get(name) === undefined) return false;
    await this.queueDb.remove(name);
    return true;
  }

  async pauseQueue(name: string, paused: boolean): Promise<boolean> {
    const q = this.queueDb.get(name);
    if (q === undefined) return false;
    await this.queueDb.put(name, { ...q, paused, updatedAt: Date.now() });
    if (!paused) this.drainQueue(name);
    return true;
  }

  // ---- URL groups --------------------------------------------------------------------------

  async addEndpoints(name: string, eps: { name?: string; url: string }[]): Promise<void> {
    const now = Date.now();
    const t = this.topicDb.get(name) ?? { name, createdAt: now, updatedAt: now, endpoints: [] };
    for (const e of eps) {
      if (!t.endpoints.some((x) => x.url === e.url && x.name === e.name)) t.endpoints.push(e.name === undefined ? { url: e.url } : { name: e.name, url: e.url });
    }
    t.updatedAt = now;
    await this.topicDb.put(name, t);
  }

  async removeEndpoints(name: string, eps: { name?: string; url?: string }[]): Promise<boolean> {
    const t = this.topicDb.get(name);
    if (t === undefined) return false;
    t.endpoints = t.endpoints.filter((x) => !eps.some((e) => (e.url === undefined || e.url === x.url) && (e.name === undefined || e.name === x.name)));
    t.updatedAt = Date.now();
    if (t.endpoints.length === 0) await this.topicDb.remove(name);
    else await this.topicDb.put(name, t);
    return true;
  }

  topic(name: string): TopicRec | undefined {
    return this.topicDb.get(name);
  }

  topics(): TopicRec[] {
    return [...this.topicDb.getRange({}).map(({ value }) => value)];
  }

  async deleteTopic(name: string): Promise<boolean> {
    if (this.topicDb.get(name) === undefined) return false;
    await this.topicDb.remove(name);
    return true;
  }

  // ---- flow control ------------------------------------------------------------------------

  flowInfo(key: string): Record<string, unknown> | undefined {
    const f = this.flows.get(key);
    if (f === undefined) return undefined;
    if (Date.now() - f.periodStart >= f.period) { f.periodStart = Date.now(); f.rateCount = 0; }
    return {
      flowControlKey: key, waitListSize: f.waiting.length, waitlistSize: f.waiting.length,
      parallelismMax: f.parallelism ?? 0, parallelismCount: f.active, rateMax: f.rate ?? 0, rateCount: f.rateCount,
      ratePeriod: f.period / 1000, ratePeriodStart: Math.floor(f.periodStart / 1000),
      isPaused: f.paused, isPinnedParallelism: f.pinnedParallelism, isPinnedRate: f.pinnedRate,
    };
  }

  flowKeys(): string[] {
    return [...this.flows.keys()];
  }

  /** pause / resume / pin / unpin / resetRate on one key (created if unknown, as a pin may precede messages). */
  flowAction(key: string, action: string, q: URLSearchParams): void {
    const f = this.flow(key);
    const num = (n: string) => {
      const v = q.get(n);
      if (v === null || v === '') return undefined;
      const x = Number(v);
      if (!Number.isFinite(x) || x < 0) throw new HttpError(400, `invalid ${n}: ${v}`);
      return x;
    };
    switch (action) {
      case 'pause': f.paused = true; break;
      case 'resume': f.paused = false; break;
      case 'pin': {
        const p = num('parallelism'); const r = num('rate'); const per = num('period');
        if (p !== undefined) { f.parallelism = p || undefined; f.pinnedParallelism = true; }
        if (r !== undefined) { f.rate = r || undefined; f.pinnedRate = true; }
        if (per !== undefined) f.period = per * 1000;
        break;
      }
      case 'unpin': {
        // ?parallelism=true / ?rate=true pick what to unpin; neither unpins both.
        const p = q.get('parallelism') === 'true';
        const r = q.get('rate') === 'true';
        if (p || !r) f.pinnedParallelism = false;
        if (r || !p) f.pinnedRate = false;
        break;
      }
      case 'resetRate': f.rateCount = 0; f.periodStart = Date.now(); break;
      default: throw new HttpError(404, `unknown flow control action: ${action}`);
    }
    this.saveFlow(f);
    this.drainFlow(f);
  }

  globalParallelism(): { parallelismMax: number; parallelismCount: number } {
    return { parallelismMax: this.opts.parallelism ?? 1000, parallelismCount: this.globalActive };
  }

  // ---- schedules ---------------------------------------------------------------------------

  async createSchedule(dest: string, cron: string, spec: MessageSpec, delay: number, id?: string): Promise<string> {
    let c;
    try { c = parseCron(cron); } catch (err) { throw new HttpError(400, (err as Error).message); }
    if (!isUrl(dest) && this.topicDb.get(dest) === undefined) throw new HttpError(404, `urlGroup ${dest} not found`);
    const now = Date.now();
    const scheduleId = id ?? `scd_${crypto.randomBytes(12).toString('base64url')}`;
    const old = this.schedules.get(scheduleId);
    const s: ScheduleRec = {
      scheduleId, cron, destination: dest, spec: { ...spec, scheduleId }, delay, createdAt: old?.createdAt ?? now,
      isPaused: false, nextScheduleTime: nextRun(c, now),
    };
    await this.schedDb.put(scheduleId, s);
    this.schedules.set(scheduleId, s);
    this.armSchedules();
    return scheduleId;
  }

  schedule(id: string): ScheduleRec | undefined { return this.schedules.get(id); }
  scheduleList(): ScheduleRec[] { return [...this.schedules.values()].sort((a, b) => a.createdAt - b.createdAt); }

  async deleteSchedule(id: string): Promise<boolean> {
    if (!this.schedules.delete(id)) return false;
    await this.schedDb.remove(id);
    this.armSchedules();
    return true;
  }

  async pauseSchedule(id: string, paused: boolean): Promise<boolean> {
    const s = this.schedules.get(id);
    if (s === undefined) return false;
    s.isPaused = paused;
    if (!paused) s.nextScheduleTime = nextRun(parseCron(s.cron), Date.now());
    await this.schedDb.put(id, s);
    this.armSchedules();
    return true;
  }

  private armSchedules(): void {
    if (this.stopped) return;
    if (this.schedTimer !== null) clearTimeout(this.schedTimer);
    let at = Infinity;
    for (const s of this.schedules.values()) if (!s.isPaused && s.nextScheduleTime < at) at = s.nextScheduleTime;
    if (at === Infinity) { this.schedTimer = null; return; }
    this.schedTimer = setTimeout(() => { void this.fireSchedules(); }, Math.max(0, Math.min(at - Date.now(), 2 ** 31 - 1)));
  }

  /** Fire every due schedule once (a time missed while the server was down fires once on start). */
  private async fireSchedules(): Promise<void> {
    this.schedTimer = null;
    const now = Date.now();
    for (const s of this.schedules.values()) {
      if (s.isPaused || s.nextScheduleTime > now) continue;
      s.lastScheduleTime = s.nextScheduleTime;
      s.nextScheduleTime = nextRun(parseCron(s.cron), now);
      try {
        const r = await this.publish(s.destination, { ...s.spec, notBefore: now + s.delay });
        const ids = (Array.isArray(r) ? r : [r]) as { messageId: string }[];
        s.lastScheduleStates = Object.fromEntries(ids.map((x) => [x.messageId, 'IN_PROGRESS']));
      } catch (err) {
        console.error(`qstash: schedule ${s.scheduleId} could not publish:`, (err as Error).message);
      }
      await this.schedDb.put(s.scheduleId, s);
    }
    this.armSchedules();
  }

  private scheduleState(m: MessageRec, state: string): void {
    if (m.scheduleId === undefined) return;
    const s = this.schedules.get(m.scheduleId);
    if (s?.lastScheduleStates?.[m.messageId] === undefined) return;
    s.lastScheduleStates[m.messageId] = state;
    void this.schedDb.put(s.scheduleId, s);
  }
}

export function isUrl(s: string): boolean {
  return s.startsWith('http://') || s.startsWith('https://');
}

export function newMessageId(): string {
  return `msg_${crypto.randomBytes(16).toString('base64url')}`;
}

const redacted = (v: string) => `REDACTED:${crypto.createHash('sha256').update(v).digest('hex')}`;

/** The body (base64) and headers as logs and listings show them (Upstash-Redact-Fields applied). */
export function shown(m: MessageSpec): { body: string; header: Record<string, string[]> } {
  const r = m.redact;
  const header = arrays(m.header);
  if (r === undefined) return { body: m.body, header };
  if (r.header !== undefined) {
    for (const k of Object.keys(header)) {
      if (r.header === true || r.header.includes(k.toLowerCase())) header[k] = header[k].map(redacted);
    }
  }
  return { body: r.body ? Buffer.from(redacted(Buffer.from(m.body, 'base64').toString('latin1'))).toString('base64') : m.body, header };
}

/** {name: value} -> {name: [value]} (the listing and callback shape). */
/** Headers as the service shows them: `{Name: [value]}`, names in canonical form. */
export function arrays(h: Record<string, string>): Record<string, string[]> {
  const o: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(h)) o[canonicalHeader(k)] = [v];
  return o;
}



function statusText(s: number): string {
  return s === 429 ? 'Too Many Requests' : s >= 500 ? 'Server Error' : s >= 400 ? 'Client Error' : 'Unexpected Status';
}
