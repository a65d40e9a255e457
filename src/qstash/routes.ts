/**
 * The QStash REST API on the /v2 router: bearer-token auth (or ?qstash_token=), header parsing
 * of publish/enqueue/batch/schedules into a MessageSpec, and the management endpoints
 * (messages, dlq, schedules, queues, topics, flowControl, globalParallelism, keys, events/logs).
 * Shapes follow what @upstash/qstash 2.12 sends and parses.
 */
import crypto from 'node:crypto';
import type { V2Handler, V2Request, V2Response } from '../http/v2.js';
import { HttpError, QStashService, arrays, isUrl, shown } from './service.js';
import { compileRetryDelay, parseDuration, parseFlowValue } from './expr.js';
import { decodeCursor } from './log-query.js';
import { CANCEL_PARAMS, DLQ_PARAMS, checkParams } from './params.js';
import type { DlqRec, MessageRec, MessageSpec, ScheduleRec } from './types.js';

type Headers = ReadonlyMap<string, string>;

const json = (body: unknown, status = 200): V2Response => ({ status, body });
const err = (status: number, error: string): V2Response => ({ status, body: { error } });

/** The segments this service answers, with its handler. */
export function qstashHandlers(svc: QStashService): Record<string, V2Handler> {
  const guard = (h: (req: V2Request) => Promise<V2Response> | V2Response): V2Handler => async (req) => {
    const auth = req.headers.get('authorization');
    const t = auth !== undefined && auth.startsWith('Bearer ') ? auth.slice(7).trim() : req.query.get('qstash_token');
    if (t === null || t === undefined || !svc.checkToken(t)) return err(401, 'invalid or missing QStash token');
    try {
      return await h(req);
    } catch (e) {
      if (e instanceof HttpError) return err(e.status, e.message);
      throw e;
    }
  };
  const events = guard((req) => listEvents(svc, req));
  return {
    publish: guard((req) => publish(svc, req, 1)),
    enqueue: guard((req) => publish(svc, req, 2)),
    batch: guard((req) => batch(svc, req)),
    messages: guard((req) => messages(svc, req)),
    dlq: guard((req) => dlq(svc, req)),
    schedules: guard((req) => schedules(svc, req)),
    queues: guard((req) => queues(svc, req)),
    topics: guard((req) => topics(svc, req)),
    flowControl: guard((req) => flowControl(svc, req)),
    globalParallelism: guard((req) => (req.method === 'GET' ? json(svc.globalParallelism()) : err(405, 'method not allowed'))),
    keys: guard(async (req) => {
      if (req.method === 'GET' && req.segments.length === 1) return json({ current: svc.currentKey, next: svc.nextKey });
      if (req.method === 'POST' && req.segments[1] === 'rotate') return json(await svc.rotateKeys());
      return err(404, 'not found');
    }),
    events,
    logs: events,
  };
}

// ---- publishing ------------------------------------------------------------------------------

/** The raw remainder of the path after `skip` segments, with the query (minus our token). */
function destination(req: V2Request, skip: number): string {
  let p = req.rawPath;
  for (let i = 0; i < skip; i++) {
    const j = p.indexOf('/');
    if (j < 0) return '';
    p = p.slice(j + 1);
  }
  const q = req.rawQuery.split('&').filter((x) => x !== '' && !x.startsWith('qstash_token=')).join('&');
  let d = p;
  // A URL-group name may arrive percent-encoded; a URL arrives raw and is kept byte for byte.
  if (!isUrl(d)) {
    try { d = decodeURIComponent(d); } catch { /* keep */ }
  }
  return q === '' ? d : `${d}?${q}`;
}

function checkDestination(d: string): void {
  if (d === '') throw new HttpError(400, 'destination is missing');
  if (isUrl(d)) {
    try { new URL(d); } catch { throw new HttpError(400, `invalid destination url: ${d}`); }
  } else if (!/^[A-Za-z0-9._-]+$/.test(d)) {
    throw new HttpError(400, `invalid destination: ${d} (a URL starting with http:// or https://, or a URL group name)`);
  }
}

function intHeader(h: Headers, name: string, min: number, max: number): number | undefined {
  const v = h.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim()) || Number(v) < min || Number(v) > max) throw new HttpError(400, `invalid ${name} header: ${v}`);
  return Number(v);
}

function urlHeader(h: Headers, name: string): string | undefined {
  const v = h.get(name);
  if (v === undefined) return undefined;
  if (!isUrl(v)) throw new HttpError(400, `invalid ${name} header: ${v} (must start with http:// or https://)`);
  try { new URL(v); } catch { throw new HttpError(400, `invalid ${name} header: ${v}`); }
  return v;
}

/** Headers -> MessageSpec (plus dedup id and delay); 400 on any malformed header. */
export function parseSpec(h: Headers, body: Buffer, callerIp: string, dest: string): { spec: MessageSpec; dedupId?: string; delay: number } {
  const header: Record<string, string> = {};
  const cbh: Record<string, string> = {};
  const fcbh: Record<string, string> = {};
  for (const [k, v] of h) {
    if (k.startsWith('upstash-forward-')) header[k.slice(16)] = v;
    else if (k.startsWith('upstash-callback-forward-')) cbh[k.slice(25)] = v;
    else if (k.startsWith('upstash-failure-callback-forward-')) fcbh[k.slice(33)] = v;
  }
  const ct = h.get('content-type');
  if (ct !== undefined) header['Content-Type'] = ct;
  const method = (h.get('upstash-method') ?? 'POST').toUpperCase();
  if (!['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'].includes(method)) throw new HttpError(400, `invalid Upstash-Method header: ${method}`);
  let delay = 0;
  const dl = h.get('upstash-delay');
  if (dl !== undefined) {
    delay = parseDuration(dl);
    if (!(delay >= 0)) throw new HttpError(400, `invalid Upstash-Delay header: ${dl}`);
  }
  let notBefore = 0;
  const nb = h.get('upstash-not-before');
  if (nb !== undefined) {
    if (!/^\d+$/.test(nb.trim())) throw new HttpError(400, `invalid Upstash-Not-Before header: ${nb}`);
    notBefore = Number(nb) * 1000;
  } else if (delay > 0) {
    notBefore = Date.now() + delay;
  }
  const retries = intHeader(h, 'upstash-retries', 0, 100) ?? 3;
  const retryDelay = h.get('upstash-retry-delay');
  if (retryDelay !== undefined) {
    try { compileRetryDelay(retryDelay); } catch (e) { throw new HttpError(400, (e as Error).message); }
  }
  let timeout: number | undefined;
  const to = h.get('upstash-timeout');
  if (to !== undefined) {
    timeout = parseDuration(to);
    if (!(timeout > 0)) throw new HttpError(400, `invalid Upstash-Timeout header: ${to}`);
  }
  const labelH = h.get('upstash-label');
  const labels = labelH === undefined ? undefined : labelH.split(',').map((x) => x.trim()).filter((x) => x !== '');
  let flowControl: MessageSpec['flowControl'];
  const fk = h.get('upstash-flow-control-key');
  if (fk !== undefined) {
    const fv = h.get('upstash-flow-control-value');
    if (fv === undefined) throw new HttpError(400, 'Upstash-Flow-Control-Value header is required with Upstash-Flow-Control-Key');
    try { flowControl = { key: fk, ...parseFlowValue(fv) }; } catch (e) { throw new HttpError(400, (e as Error).message); }
  }
  let dedupId = h.get('upstash-deduplication-id');
  if (dedupId === undefined && h.get('upstash-content-based-deduplication') === 'true') {
    dedupId = `cbd:${crypto.createHash('sha256').update(dest).update('\0').update(JSON.stringify(header)).update('\0').update(body).digest('hex')}`;
  }
  const spec: MessageSpec = {
    callbackOpts: callbackOpts(h, 'upstash-callback-'), failureCallbackOpts: callbackOpts(h, 'upstash-failure-callback-'),
    method, header, body: body.toString('base64'), retries, retryDelay, timeout,
    callback: urlHeader(h, 'upstash-callback'), failureCallback: urlHeader(h, 'upstash-failure-callback'),
    callbackHeader: Object.keys(cbh).length > 0 ? cbh : undefined, failureCallbackHeader: Object.keys(fcbh).length > 0 ? fcbh : undefined,
    notBefore, labels, flowControl, callerIp, redact: parseRedact(h.get('upstash-redact-fields')),
  };
  return { spec, dedupId, delay };
}

/** Upstash-Redact-Fields: "body", "header", "header[Name]" (comma-separated). */
function parseRedact(v: string | undefined): MessageSpec['redact'] {
  if (v === undefined) return undefined;
  const r: NonNullable<MessageSpec['redact']> = {};
  for (const part of v.split(',').map((x) => x.trim()).filter((x) => x !== '')) {
    const m = /^header\[([^\]]+)\]$/.exec(part);
    if (part === 'body') r.body = true;
    else if (part === 'header') r.header = true;
    else if (m !== null) { if (r.header !== true) r.header = [...(r.header ?? []), m[1].toLowerCase()]; }
    else throw new HttpError(400, `invalid Upstash-Redact-Fields: ${v}`);
  }
  return r;
}

/** The options of a callback message: Upstash-Callback-Retries, -Retry-Delay, -Timeout, -Method, -Delay. */
function callbackOpts(h: Headers, prefix: string): MessageSpec['callbackOpts'] {
  const o: NonNullable<MessageSpec['callbackOpts']> = {};
  o.retries = intHeader(h, `${prefix}retries`, 0, 100);
  const rd = h.get(`${prefix}retry-delay`);
  if (rd !== undefined) {
    try { compileRetryDelay(rd); } catch (e) { throw new HttpError(400, (e as Error).message); }
    o.retryDelay = rd;
  }
  for (const k of ['timeout', 'delay'] as const) {
    const v = h.get(`${prefix}${k}`);
    if (v === undefined) continue;
    const ms = parseDuration(v);
    if (!(ms >= 0)) throw new HttpError(400, `invalid ${prefix}${k} header: ${v}`);
    o[k] = ms;
  }
  const m = h.get(`${prefix}method`);
  if (m !== undefined) {
    if (!['GET', 'POST', 'PUT', 'DELETE', 'PATCH'].includes(m.toUpperCase())) throw new HttpError(400, `invalid ${prefix}method header: ${m}`);
    o.method = m.toUpperCase();
  }
  return Object.values(o).some((v) => v !== undefined) ? o : undefined;
}

async function publish(svc: QStashService, req: V2Request, skip: number): Promise<V2Response> {
  if (req.method !== 'POST') return err(405, 'method not allowed');
  const dest = destination(req, skip);
  checkDestination(dest);
  const { spec, dedupId } = parseSpec(req.headers, req.body, req.remote, dest);
  if (skip === 2) {
    const q = req.segments[1];
    if (q === undefined || !/^[A-Za-z0-9._-]+$/.test(q)) return err(400, 'invalid queue name');
    spec.queueName = q;
  }
  const wf = svc.ext?.accept(dest, req.headers, req.body, spec) ?? null;
  if (wf !== null) return json(await wf, 201);
  return json(await svc.publish(dest, spec, dedupId), 201);
}

async function batch(svc: QStashService, req: V2Request): Promise<V2Response> {
  if (req.segments[1] === 'trigger' && svc.ext?.handlers.batchTrigger !== undefined) return svc.ext.handlers.batchTrigger(req);
  if (req.method !== 'POST') return err(405, 'method not allowed');
  let items: unknown;
  try { items = JSON.parse(req.body.toString('utf8')); } catch { return err(400, 'body must be a JSON array of messages'); }
  if (!Array.isArray(items)) return err(400, 'body must be a JSON array of messages');
  // Validate every item before publishing any.
  const parsed = items.map((it, i) => {
    if (it === null || typeof it !== 'object') throw new HttpError(400, `batch item ${i} is not an object`);
    const o = it as { destination?: unknown; headers?: unknown; body?: unknown; queue?: unknown };
    if (typeof o.destination !== 'string') throw new HttpError(400, `batch item ${i}: destination is required`);
    checkDestination(o.destination);
    const hs = new Map<string, string>();
    if (o.headers !== undefined) {
      if (o.headers === null || typeof o.headers !== 'object') throw new HttpError(400, `batch item ${i}: headers must be an object`);
      for (const [k, v] of Object.entries(o.headers)) hs.set(k.toLowerCase(), String(v));
    }
    // A JSON value other than a string is sent as its JSON text (the SDK's context.call passes objects through).
    const body = Buffer.from(o.body === undefined ? '' : typeof o.body === 'string' ? o.body : JSON.stringify(o.body), 'utf8');
    const p = parseSpec(hs, body, req.remote, o.destination);
    if (o.queue !== undefined) {
      if (typeof o.queue !== 'string' || !/^[A-Za-z0-9._-]+$/.test(o.queue)) throw new HttpError(400, `batch item ${i}: invalid queue`);
      p.spec.queueName = o.queue;
    }
    return { dest: o.destination, hs, body, ...p };
  });
  // Published together: their writes share commits; ids and order are fixed synchronously.
  // Workflow items (Upstash-Workflow-RunId) go to the workflow layer.
  return json(await Promise.all(parsed.map((p) => svc.ext?.accept(p.dest, p.hs, p.body, p.spec) ?? svc.publish(p.dest, p.spec, p.dedupId))), 201);
}

// ---- messages ------------------------------------------------------------------------------

function bodyFields(b64: string, textKey: string, b64Key: string): Record<string, string> {
  const buf = Buffer.from(b64, 'base64');
  const text = buf.toString('utf8');
  return Buffer.from(text, 'utf8').equals(buf) ? { [textKey]: text } : { [b64Key]: b64 };
}

function messageView(m: MessageRec): Record<string, unknown> {
  return {
    messageId: m.messageId, url: m.url, topicName: m.topicName, endpointName: m.endpointName, method: m.method,
    header: shown(m).header, ...bodyFields(shown(m).body, 'body', 'bodyBase64'), maxRetries: m.retries, retried: m.retried,
    retryDelayExpression: m.retryDelay, timeout: m.timeout, notBefore: m.notBefore || m.createdAt, createdAt: m.createdAt,
    callback: m.callback, failureCallback: m.failureCallback, queueName: m.queueName, scheduleId: m.scheduleId, callerIp: m.callerIp,
    flowControlKey: m.flowControl?.key, parallelism: m.flowControl?.parallelism, rate: m.flowControl?.rate,
    period: m.flowControl?.period === undefined ? undefined : m.flowControl.period / 1000,
    label: m.labels?.[0], labels: m.labels,
  };
}

/** The filters shared by bulk cancel, DLQ listing/deletion/retry. */
function matchFilter(m: MessageRec, q: URLSearchParams): boolean {
  const any = (name: string, v: string | undefined) => {
    const want = q.getAll(name);
    return want.length === 0 || (v !== undefined && want.includes(v));
  };
  if (!any('messageId', m.messageId) || !any('url', m.url) || !any('topicName', m.topicName) || !any('queueName', m.queueName)) return false;
  if (!any('scheduleId', m.scheduleId) || !any('flowControlKey', m.flowControl?.key) || !any('callerIp', m.callerIp)) return false;
  const labels = q.getAll('label');
  if (labels.length > 0 && !(m.labels ?? []).some((l) => labels.includes(l))) return false;
  const url = (() => { try { return new URL(m.url); } catch { return null; } })();
  if (!any('host', url?.host) || !any('path', url?.pathname)) return false;
  return true;
}

async function messages(svc: QStashService, req: V2Request): Promise<V2Response> {
  const id = req.segments[1];
  if (id !== undefined && id !== '') {
    if (req.segments.length > 2) return err(404, 'not found');
    if (req.method === 'GET') {
      const m = svc.getMessage(id);
      return m === undefined ? err(404, `message ${id} not found`) : json(messageView(m));
    }
    if (req.method === 'DELETE') {
      return (await svc.cancel(id)) ? json({ cancelled: 1 }) : err(404, `message ${id} not found`);
    }
    return err(405, 'method not allowed');
  }
  if (req.method !== 'DELETE') return err(405, 'method not allowed');
  const q = req.query;
  checkParams(q, CANCEL_PARAMS, 'DELETE /v2/messages');
  const ids = q.getAll('messageIds');
  if (ids.length > 0) {
    let n = 0;
    for (const x of ids) if (await svc.cancel(x)) n++;
    return json({ cancelled: n });
  }
  // No filter at all cancels every message, as the service does; `count` bounds one call.
  const count = q.has('count') ? countParam(q, 0, Number.MAX_SAFE_INTEGER) : Infinity;
  const targets: string[] = [];
  // fromDate/toDate (ms): a malformed bound is a 400, never ignored.
  const from = dateParam(q, 'fromDate') ?? 0;
  const to = dateParam(q, 'toDate') ?? Infinity;
  for (const m of svc.listMessages()) {
    if (targets.length >= count) break;
    if (m.createdAt >= from && m.createdAt <= to && matchFilter(m, q)) targets.push(m.messageId);
  }
  let n = 0;
  for (const x of targets) if (await svc.cancel(x)) n++;
  return json({ cancelled: n });
}

// ---- DLQ -----------------------------------------------------------------------------------

function dlqView(d: DlqRec): Record<string, unknown> {
  return {
    ...messageView(d), dlqId: d.dlqId, responseStatus: d.last?.status || undefined, responseHeader: d.last?.header,
    ...(d.last ? bodyFields(d.last.body, 'responseBody', 'responseBodyBase64') : {}), error: d.last?.error,
  };
}

function countParam(q: URLSearchParams, def: number, max: number): number {
  const c = q.get('count');
  if (c === null || c === '') return def;
  if (!/^\d+$/.test(c) || Number(c) < 1) throw new HttpError(400, `invalid count: ${c}`);
  return Math.min(Number(c), max);
}

function dateParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw new HttpError(400, `invalid ${name}: ${v}`);
  return Number(v);
}

/** One page of DLQ entries matching the query's filters (dlqIds, or the message filters). */
function dlqPage(svc: QStashService, q: URLSearchParams, def: number): { items: DlqRec[]; cursor?: string } {
  checkParams(q, DLQ_PARAMS, '/v2/dlq');
  const count = countParam(q, def, 1000);
  const ids = q.getAll('dlqIds');
  const from = dateParam(q, 'fromDate');
  const to = dateParam(q, 'toDate');
  const status = q.get('responseStatus');
  const cursor = q.get('cursor') ?? undefined;
  const items: DlqRec[] = [];
  let next: string | undefined;
  const src = ids.length > 0 ? ids.map((i) => svc.dlqGet(i)).filter((d): d is DlqRec => d !== undefined) : svc.dlqList(cursor || undefined);
  for (const d of src) {
    if (ids.length === 0) {
      if (cursor && d.dlqId < cursor) continue;
      if (!matchFilter(d, q)) continue;
      if (from !== undefined && d.failedAt < from) continue;
      if (to !== undefined && d.failedAt > to) continue;
      if (status !== null && String(d.last?.status ?? '') !== status) continue;
    }
    if (items.length === count) { next = d.dlqId; break; }
    items.push(d);
  }
  return { items, cursor: next };
}

/** The configuration headers of a DLQ retry request, which override the failed message's. */
function retryOverrides(h: Headers): Partial<MessageSpec> {
  const o: Partial<MessageSpec> = {};
  const has = (n: string) => h.has(n);
  if (!['upstash-method', 'upstash-retries', 'upstash-retry-delay', 'upstash-timeout', 'upstash-delay', 'upstash-not-before', 'upstash-callback',
    'upstash-failure-callback', 'upstash-label', 'upstash-flow-control-key'].some(has)) return o;
  const { spec } = parseSpec(h, Buffer.alloc(0), '', ''); // validates them (400)
  if (has('upstash-method')) o.method = spec.method;
  if (has('upstash-retries')) o.retries = spec.retries;
  if (has('upstash-retry-delay')) o.retryDelay = spec.retryDelay;
  if (has('upstash-timeout')) o.timeout = spec.timeout;
  if (has('upstash-delay') || has('upstash-not-before')) o.notBefore = spec.notBefore;
  if (has('upstash-callback')) o.callback = spec.callback;
  if (has('upstash-failure-callback')) o.failureCallback = spec.failureCallback;
  if (has('upstash-label')) o.labels = spec.labels;
  if (has('upstash-flow-control-key')) o.flowControl = spec.flowControl;
  return o;
}

async function dlq(svc: QStashService, req: V2Request): Promise<V2Response> {
  if (req.query.get('source') === 'workflow' && svc.ext?.handlers.dlq !== undefined) return svc.ext.handlers.dlq(req);
  const s = req.segments;
  if (s[1] === 'retry') {
    if (req.method !== 'POST') return err(405, 'method not allowed');
    const over = retryOverrides(req.headers);
    if (s[2] !== undefined && s[2] !== '') {
      const r = await svc.dlqRetry(s[2], over);
      return r === null ? err(404, `dlq message ${s[2]} not found`) : json(r, 201);
    }
    const page = dlqPage(svc, req.query, 100);
    const responses: unknown[] = [];
    for (const d of page.items) {
      const r = await svc.dlqRetry(d.dlqId, over);
      if (r !== null) responses.push(r);
    }
    return json(page.cursor === undefined ? { responses } : { responses, cursor: page.cursor }, 201);
  }
  const id = s[1];
  if (id !== undefined && id !== '') {
    if (req.method === 'GET') {
      const d = svc.dlqGet(id);
      return d === undefined ? err(404, `dlq message ${id} not found`) : json(dlqView(d));
    }
    if (req.method === 'DELETE') return (await svc.dlqDelete(id)) ? json({ deleted: 1 }) : err(404, `dlq message ${id} not found`);
    return err(405, 'method not allowed');
  }
  if (req.method === 'GET') {
    const page = dlqPage(svc, req.query, 100);
    const body: Record<string, unknown> = { messages: page.items.map(dlqView) };
    if (page.cursor !== undefined) body.cursor = page.cursor;
    return json(body);
  }
  if (req.method === 'DELETE') {
    const page = dlqPage(svc, req.query, 100);
    let deleted = 0;
    for (const d of page.items) if (await svc.dlqDelete(d.dlqId)) deleted++;
    return json(page.cursor === undefined ? { deleted } : { deleted, cursor: page.cursor });
  }
  return err(405, 'method not allowed');
}

// ---- schedules -----------------------------------------------------------------------------

function scheduleView(s: ScheduleRec): Record<string, unknown> {
  const m = s.spec;
  return {
    scheduleId: s.scheduleId, cron: s.cron, createdAt: s.createdAt, destination: s.destination, method: m.method,
    // A schedule created without a body has no body field, as the service shows it.
    header: arrays(m.header), ...(m.body === '' ? {} : bodyFields(m.body, 'body', 'bodyBase64')), retries: m.retries, delay: s.delay / 1000,
    callback: m.callback, failureCallback: m.failureCallback, callerIp: m.callerIp, callerIP: m.callerIp, isPaused: s.isPaused,
    queueName: m.queueName, flowControlKey: m.flowControl?.key, parallelism: m.flowControl?.parallelism, rate: m.flowControl?.rate,
    period: m.flowControl?.period === undefined ? undefined : m.flowControl.period / 1000, retryDelayExpression: m.retryDelay,
    label: m.labels?.[0], labels: m.labels, lastScheduleTime: s.lastScheduleTime, nextScheduleTime: s.nextScheduleTime,
    lastScheduleStates: s.lastScheduleStates,
  };
}

async function schedules(svc: QStashService, req: V2Request): Promise<V2Response> {
  const s = req.segments;
  if (req.method === 'POST' && s.length > 1 && !(s.length === 3 && (s[2] === 'pause' || s[2] === 'resume') && !s[1].includes(':'))) {
    const dest = destination(req, 1);
    checkDestination(dest);
    const cron = req.headers.get('upstash-cron');
    if (cron === undefined) return err(400, 'Upstash-Cron header is required');
    const { spec, delay } = parseSpec(req.headers, req.body, req.remote, dest);
    spec.notBefore = 0;
    const q = req.headers.get('upstash-queue-name');
    if (q !== undefined) spec.queueName = q;
    const id = req.headers.get('upstash-schedule-id');
    if (id !== undefined && !/^[A-Za-z0-9._-]+$/.test(id)) return err(400, `invalid Upstash-Schedule-Id: ${id}`);
    return json({ scheduleId: await svc.createSchedule(dest, cron, spec, delay, id) }, 201);
  }
  if (s.length === 1 || s[1] === '') {
    return req.method === 'GET' ? json(svc.scheduleList().map(scheduleView)) : err(405, 'method not allowed');
  }
  const id = s[1];
  if (s.length === 3 && (s[2] === 'pause' || s[2] === 'resume')) {
    if (req.method !== 'PATCH' && req.method !== 'POST') return err(405, 'method not allowed');
    return (await svc.pauseSchedule(id, s[2] === 'pause')) ? json({}) : err(404, `schedule ${id} not found`);
  }
  if (s.length !== 2) return err(404, 'not found');
  if (req.method === 'GET') {
    const sc = svc.schedule(id);
    return sc === undefined ? err(404, `schedule ${id} not found`) : json(scheduleView(sc));
  }
  if (req.method === 'DELETE') return (await svc.deleteSchedule(id)) ? json({}) : err(404, `schedule ${id} not found`);
  return err(405, 'method not allowed');
}

// ---- queues --------------------------------------------------------------------------------

function parseJson(req: V2Request): Record<string, unknown> {
  let v: unknown;
  try { v = JSON.parse(req.body.toString('utf8')); } catch { throw new HttpError(400, 'body must be JSON'); }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HttpError(400, 'body must be a JSON object');
  return v as Record<string, unknown>;
}

async function queues(svc: QStashService, req: V2Request): Promise<V2Response> {
  const s = req.segments;
  if (s.length === 1 || s[1] === '') {
    if (req.method === 'GET') return json(svc.queueNames().map((n) => svc.queueInfo(n)));
    if (req.method !== 'POST') return err(405, 'method not allowed');
    const b = parseJson(req);
    if (typeof b.queueName !== 'string' || !/^[A-Za-z0-9._-]+$/.test(b.queueName)) return err(400, 'queueName is required');
    const par = b.parallelism ?? 1;
    if (typeof par !== 'number' || !Number.isInteger(par) || par < 1) return err(400, 'parallelism must be a positive integer');
    if (b.paused !== undefined && typeof b.paused !== 'boolean') return err(400, 'paused must be a boolean');
    await svc.upsertQueue(b.queueName, par, b.paused === true);
    return json({});
  }
  const name = s[1];
  if (s.length === 3 && (s[2] === 'pause' || s[2] === 'resume')) {
    if (req.method !== 'POST') return err(405, 'method not allowed');
    return (await svc.pauseQueue(name, s[2] === 'pause')) ? json({}) : err(404, `queue ${name} not found`);
  }
  if (s.length !== 2) return err(404, 'not found');
  if (req.method === 'GET') {
    const q = svc.queueInfo(name);
    return q === undefined ? err(404, `queue ${name} not found`) : json(q);
  }
  if (req.method === 'DELETE') return (await svc.deleteQueue(name)) ? json({}) : err(404, `queue ${name} not found`);
  return err(405, 'method not allowed');
}

// ---- URL groups (topics) -------------------------------------------------------------------

async function topics(svc: QStashService, req: V2Request): Promise<V2Response> {
  const s = req.segments;
  if (s.length === 1 || s[1] === '') return req.method === 'GET' ? json(svc.topics()) : err(405, 'method not allowed');
  const name = s[1];
  if (!/^[A-Za-z0-9._-]+$/.test(name)) return err(400, `invalid url group name: ${name}`);
  if (s.length === 3 && s[2] === 'endpoints') {
    const b = parseJson(req);
    if (!Array.isArray(b.endpoints)) return err(400, 'endpoints must be an array');
    const eps = b.endpoints.map((e: unknown) => {
      if (e === null || typeof e !== 'object') throw new HttpError(400, 'each endpoint must be an object');
      const o = e as { name?: unknown; url?: unknown };
      if (o.name !== undefined && typeof o.name !== 'string') throw new HttpError(400, 'endpoint name must be a string');
      if (o.url !== undefined && (typeof o.url !== 'string' || !isUrl(o.url))) throw new HttpError(400, `invalid endpoint url: ${String(o.url)}`);
      return { name: o.name as string | undefined, url: o.url as string | undefined };
    });
    if (req.method === 'POST') {
      if (eps.some((e) => e.url === undefined)) return err(400, 'endpoint url is required');
      await svc.addEndpoints(name, eps as { name?: string; url: string }[]);
      return json({});
    }
    if (req.method === 'DELETE') return (await svc.removeEndpoints(name, eps)) ? json({}) : err(404, `urlGroup ${name} not found`);
    return err(405, 'method not allowed');
  }
  if (s.length !== 2) return err(404, 'not found');
  if (req.method === 'GET') {
    const t = svc.topic(name);
    return t === undefined ? err(404, `urlGroup ${name} not found`) : json(t);
  }
  if (req.method === 'DELETE') return (await svc.deleteTopic(name)) ? json({}) : err(404, `urlGroup ${name} not found`);
  return err(405, 'method not allowed');
}

// ---- flow control --------------------------------------------------------------------------

function flowControl(svc: QStashService, req: V2Request): V2Response {
  const s = req.segments;
  if (s.length === 1 || s[1] === '') {
    return req.method === 'GET' ? json(svc.flowKeys().map((k) => svc.flowInfo(k))) : err(405, 'method not allowed');
  }
  const key = s[1];
  if (s.length === 2) {
    if (req.method !== 'GET') return err(405, 'method not allowed');
    const f = svc.flowInfo(key);
    return f === undefined ? err(404, `flow control key ${key} not found`) : json(f);
  }
  if (s.length !== 3) return err(404, 'not found');
  if (req.method !== 'POST') return err(405, 'method not allowed');
  svc.flowAction(key, s[2], req.query);
  return json({});
}

// ---- events --------------------------------------------------------------------------------

const STATES = ['CREATED', 'ACTIVE', 'RETRY', 'ERROR', 'DELIVERED', 'FAILED', 'CANCEL_REQUESTED', 'CANCELLED'];

async function listEvents(svc: QStashService, req: V2Request): Promise<V2Response> {
  if (req.method !== 'GET' || req.segments.length > 1) return err(404, 'not found');
  const q = req.query;
  let states: string[] | undefined;
  const st = q.getAll('state');
  if (st.length > 0) {
    states = [];
    for (const raw of st) {
      const v = raw.toUpperCase();
      if (v === 'IN_PROGRESS') states.push('ACTIVE', 'RETRY', 'ERROR');
      else if (v === 'CANCELED') states.push('CANCELLED');
      else if (STATES.includes(v)) states.push(v);
      else return err(400, `invalid state: ${raw}`);
    }
  }
  const order = q.get('order') ?? 'latestFirst';
  if (order !== 'latestFirst' && order !== 'earliestFirst') return err(400, `invalid order: ${order}`);
  let cursor: [number, number] | undefined;
  const c = q.get('cursor');
  if (c !== null && c !== '') {
    const d = decodeCursor(c);
    if (d === null) return err(400, 'invalid cursor');
    cursor = d;
  }
  const ids = [...q.getAll('messageIds'), ...q.getAll('messageId')];
  const all = (n: string) => { const v = q.getAll(n).filter((x) => x !== ''); return v.length === 0 ? undefined : v; };
  const r = await svc.queryEvents({
    messageIds: ids.length > 0 ? ids : undefined, states, url: all('url'), topicName: all('topicName'), scheduleId: all('scheduleId'),
    queueName: all('queueName'), host: all('host'), urlPath: all('path'), fromDate: dateParam(q, 'fromDate'), toDate: dateParam(q, 'toDate'),
    labels: all('label'), flowControlKey: all('flowControlKey'),
    count: countParam(q, 1000, 1000), latestFirst: order === 'latestFirst', cursor,
  });
  const body: Record<string, unknown> = { events: r.events, logs: r.events };
  if (r.cursor !== undefined) body.cursor = r.cursor;
  return json(body);
}
