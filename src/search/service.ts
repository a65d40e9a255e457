/**
 * The search service: the Upstash Developer API for search indexes (/v2/search..., Basic auth)
 * and each index's data plane (/v2/search-data/<id>/..., Bearer tokens), the one the
 * @upstash/search SDK calls. Index records, documents, tokens and usage live in LMDB
 * (<dir>/search); queries and filter scans run in a piscina worker pool; writes happen here.
 * Quotas come from the plan table (plans.ts) and are enforced per request, per second and per day.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { Piscina } from 'piscina';
import type { V2Request, V2Response } from '../http/v2.js';
import { openSearchDb, nsPrefix, prefixEnd, docKey, verKey, nsKey, logKey, LOG_KEEP, splitKey, type SearchDb, type StoredDoc } from './store.js';
import { IndexStats, emptyStats, PERIODS, mean, maxOf, perSecond, timeText, type StatsRecord } from './stats.js';
import { type Plan, type PlanName, PLAN_NAMES, planTable } from './plans.js';
import { contentText, type Json } from './text.js';
import { Embedder, EmbeddingError } from './embed.js';
import type { SearchResult } from './worker.js';

export const REGIONS = ['eu-west-1', 'us-central1'] as const;

interface IndexRecord {
  id: string;
  name: string;
  type: PlanName;
  region: string;
  token: string;
  read_only_token: string;
  creation_time: number;
  input_enrichment_enabled: boolean;
}

export interface SearchOptions {
  dir: string;
  accountEmail: string;
  apiKey: string;
  /** "key=value,..." overrides of the free and payg plans. */
  planFree: string;
  planPayg: string;
  workers: number;
  /** Base URL of this server's HTTP port, e.g. http://127.0.0.1:8080 (read when an index is shown). */
  baseUrl: () => string;
  /** OpenAI-compatible embeddings endpoint for hybrid search (url '' = full-text only). */
  embedding?: { url: string; model: string; key: string };
  log?: (msg: string) => void;
}

class HttpError extends Error {
  constructor(readonly status: number, msg: string) { super(msg); }
}

interface NsState { count: number; bytes: number; version: number }

const MAX_KEY = 1900; // LMDB's key limit is 1978 bytes; leave room for the index id and namespace
const FETCH_PREFIX_CAP = 1000;

export class SearchService {
  private readonly db: SearchDb;
  private readonly indexes = new Map<string, IndexRecord>();
  private readonly tokens = new Map<string, { id: string; readOnly: boolean }>();
  private readonly ns = new Map<string, Map<string, NsState>>(); // index id -> namespace -> state
  private readonly stats = new Map<string, IndexStats>();
  private readonly rate = new Map<string, { sec: number; queries: number; writes: number }>();
  private readonly plans: Record<PlanName, Plan>;
  private readonly pool: Piscina;
  private readonly email: string;
  private readonly apiKey: string;
  private readonly flushTimer: NodeJS.Timeout;
  /** Writes are serialised so that a namespace's count and version stay consistent. */
  private writeChain: Promise<unknown> = Promise.resolve();
  private closing = false;
  /** Length of the embeddings seen so far (info's dimension). */
  private dimension = 0;
  private readonly embedder: Embedder | null;

  constructor(private readonly opt: SearchOptions) {
    this.plans = planTable(opt.planFree, opt.planPayg); // first: a bad override opens nothing
    this.db = openSearchDb(opt.dir);
    this.embedder = opt.embedding && opt.embedding.url !== '' ? new Embedder(opt.embedding) : null;
    let email = opt.accountEmail;
    let key = opt.apiKey;
    if (email === '' || key === '') {
      const stored = this.db.meta.get('account') as { email: string; apiKey: string } | undefined;
      if (stored !== undefined) {
        email ||= stored.email;
        key ||= stored.apiKey;
      } else {
        email ||= 'admin@localhost';
        key ||= crypto.randomBytes(24).toString('hex');
        this.db.meta.putSync('account', { email, apiKey: key });
        (opt.log ?? console.log)(`search management API: account e-mail ${email}, API key ${key} (stored in ${opt.dir}/search)`);
      }
    }
    this.email = email;
    this.apiKey = key;
    this.load();
    this.pool = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      workerData: { dir: opt.dir },
      // Threads start with the first query and then stay: each keeps its namespaces' text
      // indexes in memory, which an idle timeout would throw away.
      minThreads: 0,
      maxThreads: Math.max(1, opt.workers || Math.min(2, os.availableParallelism())),
      idleTimeout: Infinity,
    });
    this.flushTimer = setInterval(() => this.flushStats(), 1000);
    this.flushTimer.unref();
  }

  private load(): void {
    for (const { key, value } of this.db.indexes.getRange()) {
      const rec = value as IndexRecord;
      this.indexes.set(key, rec);
      this.tokens.set(rec.token, { id: rec.id, readOnly: false });
      this.tokens.set(rec.read_only_token, { id: rec.id, readOnly: true });
      this.stats.set(key, new IndexStats((this.db.stats.get(key) as StatsRecord | undefined) ?? emptyStats()));
      const spaces = new Map<string, NsState>();
      spaces.set('', { count: 0, bytes: 0, version: (this.db.meta.get(verKey(key, '')) as number | undefined) ?? 0 });
      const nsp = nsKey(key, '');
      for (const k of this.db.meta.getKeys({ start: nsp, end: nsp.slice(0, -1) + '\u0001' })) {
        const name = (k as string).slice(nsp.length);
        spaces.set(name, { count: 0, bytes: 0, version: (this.db.meta.get(verKey(key, name)) as number | undefined) ?? 0 });
      }
      const prefix = nsPrefix(key, null);
      for (const { key: dk, value: dv } of this.db.docs.getRange({ start: prefix, end: prefixEnd(prefix) })) {
        const { ns } = splitKey(dk, Buffer.byteLength(key));
        const st = spaces.get(ns);
        if (st !== undefined) { st.count++; st.bytes += docSize(dv); }
      }
      this.ns.set(key, spaces);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.flushTimer);
    await this.writeChain.catch(() => {});
    this.flushStats();
    await this.pool.destroy();
    await this.db.env.close();
  }

  private flushStats(): void {
    const now = Date.now();
    for (const [id, st] of this.stats) {
      if (!st.dirty || !this.indexes.has(id)) continue;
      st.dirty = false;
      st.prune(now);
      void this.db.stats.put(id, st.rec);
    }
  }

  // ------------------------------------------------------------ management API (/v2/search)

  management = async (req: V2Request): Promise<V2Response> => {
    try {
      if (!this.basicAuthOk(req.headers.get('authorization'))) {
        return { status: 401, headers: { 'WWW-Authenticate': 'Basic realm="upstash"' }, body: { error: 'Unauthorized: wrong or missing account e-mail or API key' } };
      }
      const [, a, b, ...more] = req.segments;
      const m = req.method;
      if (more.length > 0) throw new HttpError(404, `no such endpoint: ${m} /v2/${req.rawPath}`);
      if (a === undefined || a === '') {
        if (m === 'GET') return ok([...this.indexes.values()].map((r) => this.view(r)));
        if (m === 'POST') return ok(await this.create(jsonBody(req)));
        throw notAllowed(m);
      }
      if (a === 'stats' && b === undefined) {
        if (m !== 'GET') throw notAllowed(m);
        return ok(this.globalStats());
      }
      const rec = this.indexes.get(a);
      if (rec === undefined) throw new HttpError(404, `search index ${a} not found`);
      if (b === undefined) {
        if (m === 'GET') return ok(this.view(rec));
        if (m === 'DELETE') { await this.deleteIndex(rec); return ok('OK'); }
        throw notAllowed(m);
      }
      if (b === 'rename') {
        if (m !== 'POST') throw notAllowed(m);
        const body = jsonBody(req);
        const name = body.name;
        if (typeof name !== 'string' || name.trim() === '') throw new HttpError(400, 'name is required and must be a non-empty string');
        this.checkNameFree(name, rec.id);
        rec.name = name;
        await this.db.indexes.put(rec.id, rec);
        return ok('OK');
      }
      if (b === 'reset-password') {
        if (m !== 'POST') throw notAllowed(m);
        this.tokens.delete(rec.token);
        this.tokens.delete(rec.read_only_token);
        rec.token = newToken(rec.id, false);
        rec.read_only_token = newToken(rec.id, true);
        this.tokens.set(rec.token, { id: rec.id, readOnly: false });
        this.tokens.set(rec.read_only_token, { id: rec.id, readOnly: true });
        await this.db.indexes.put(rec.id, rec);
        return ok('OK');
      }
      if (b === 'stats') {
        if (m !== 'GET') throw notAllowed(m);
        const period = req.query.get('period') ?? '1h';
        const p = PERIODS[period];
        if (p === undefined) throw new HttpError(400, `invalid period '${period}': use one of ${Object.keys(PERIODS).join(', ')}`);
        return ok(this.indexStats(rec, p.points, p.width));
      }
      throw new HttpError(404, `no such endpoint: ${m} /v2/${req.rawPath}`);
    } catch (err) {
      return failure(err);
    }
  };

  private basicAuthOk(h: string | undefined): boolean {
    if (h === undefined || !/^basic /i.test(h)) return false;
    const decoded = Buffer.from(h.slice(6).trim(), 'base64').toString();
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    return safeEqual(decoded.slice(0, colon), this.email) && safeEqual(decoded.slice(colon + 1), this.apiKey);
  }

  private checkNameFree(name: string, except: string | null): void {
    for (const r of this.indexes.values()) {
      if (r.name === name && r.id !== except) throw new HttpError(400, `a search index named '${name}' already exists`);
    }
  }

  private async create(body: Record<string, unknown>): Promise<unknown> {
    for (const f of ['name', 'region', 'type']) {
      if (body[f] === undefined) throw new HttpError(400, `${f} is required`);
      if (typeof body[f] !== 'string') throw new HttpError(400, `${f} must be a string`);
    }
    const name = body.name as string;
    const region = body.region as string;
    const type = body.type as string;
    if (name.trim() === '') throw new HttpError(400, 'name must not be empty');
    if (name.length > 256) throw new HttpError(400, 'name is longer than 256 characters');
    if (!(REGIONS as readonly string[]).includes(region)) throw new HttpError(400, `invalid region '${region}': use one of ${REGIONS.join(', ')}`);
    if (type === 'fixed') throw new HttpError(400, "plan type 'fixed' is not available: use free or payg");
    if (!(PLAN_NAMES as readonly string[]).includes(type)) throw new HttpError(400, `invalid type '${type}': use one of free, payg, fixed`);
    this.checkNameFree(name, null);
    const id = crypto.randomUUID();
    const rec: IndexRecord = {
      id, name, region, type: type as PlanName,
      token: newToken(id, false), read_only_token: newToken(id, true),
      creation_time: Math.floor(Date.now() / 1000), input_enrichment_enabled: false,
    };
    await this.db.indexes.put(id, rec);
    this.indexes.set(id, rec);
    this.tokens.set(rec.token, { id, readOnly: false });
    this.tokens.set(rec.read_only_token, { id, readOnly: true });
    this.ns.set(id, new Map([['', { count: 0, bytes: 0, version: 0 }]]));
    this.stats.set(id, new IndexStats(emptyStats()));
    return this.view(rec);
  }

  private async deleteIndex(rec: IndexRecord): Promise<void> {
    this.indexes.delete(rec.id);
    this.tokens.delete(rec.token);
    this.tokens.delete(rec.read_only_token);
    this.ns.delete(rec.id);
    this.stats.delete(rec.id);
    this.rate.delete(rec.id);
    await this.serial(async () => {
      await this.db.env.transaction(() => {
        const prefix = nsPrefix(rec.id, null);
        for (const k of this.db.docs.getKeys({ start: prefix, end: prefixEnd(prefix) })) void this.db.docs.remove(k);
        for (const k of this.db.meta.getKeys({ start: `ver:${rec.id}\u0000`, end: `ver:${rec.id}\u0001` })) void this.db.meta.remove(k);
        for (const k of this.db.meta.getKeys({ start: `ns:${rec.id}\u0000`, end: `ns:${rec.id}\u0001` })) void this.db.meta.remove(k);
        for (const k of this.db.meta.getKeys({ start: `log:${rec.id}\u0000`, end: `log:${rec.id}\u0001` })) void this.db.meta.remove(k);
        void this.db.indexes.remove(rec.id);
        void this.db.stats.remove(rec.id);
      });
    });
  }

  private view(r: IndexRecord): Record<string, unknown> {
    const plan = this.plans[r.type];
    const st = this.stats.get(r.id)!;
    const now = Date.now();
    return {
      customer_id: this.email,
      id: r.id,
      name: r.name,
      endpoint: `${this.opt.baseUrl()}/v2/search-data/${r.id}`,
      type: r.type,
      region: r.region,
      vercel_email: '',
      token: r.token,
      read_only_token: r.read_only_token,
      max_vector_count: plan.max_vector_count,
      max_monthly_reranks: plan.max_monthly_reranks,
      max_daily_updates: plan.max_daily_updates,
      max_daily_queries: plan.max_daily_queries,
      max_monthly_bandwidth: plan.max_monthly_bandwidth,
      max_writes_per_second: plan.max_writes_per_second,
      max_query_per_second: plan.max_query_per_second,
      max_reads_per_request: plan.max_reads_per_request,
      max_writes_per_request: plan.max_writes_per_request,
      creation_time: r.creation_time,
      input_enrichment_enabled: r.input_enrichment_enabled,
      // Requests (queries + updates) served in each of the last 60 minutes.
      throughput_vector: st.series(now, 60, 1, (bs) => bs.reduce((a, b) => a + b[0] + b[1], 0)),
    };
  }

  private totals(id: string): { count: number; bytes: number } {
    let count = 0;
    let bytes = 0;
    for (const s of this.ns.get(id)?.values() ?? []) { count += s.count; bytes += s.bytes; }
    return { count, bytes };
  }

  private globalStats(): Record<string, unknown> {
    let records = 0, requests = 0, bandwidth = 0, storage = 0;
    const now = Date.now();
    for (const id of this.indexes.keys()) {
      const t = this.totals(id);
      records += t.count;
      storage += t.bytes;
      const st = this.stats.get(id)!;
      st.roll(now);
      requests += st.rec.monthQueries + st.rec.monthUpdates;
      bandwidth += st.rec.monthBytes;
    }
    return { record_count: records, request: requests, bandwidth, storage, billing: 0, rerank_count: 0 };
  }

  private indexStats(rec: IndexRecord, points: number, width: number): Record<string, unknown> {
    const now = Date.now();
    const st = this.stats.get(rec.id)!;
    st.roll(now);
    const t = this.totals(rec.id);
    const today = Math.floor(now / 86_400_000);
    const lastDays = Array.from({ length: 7 }, (_, i) => today - 6 + i);
    const daily = (i: number) => lastDays.map((d) => ({ x: timeText(d * 86_400_000), y: st.rec.days[d]?.[i] ?? 0 }));
    const zero = st.series(now, points, width, () => 0);
    const endMinute = Math.floor(now / 60_000);
    const sizeSeries = (i: number) => zero.map((p, k) => {
      const upTo = endMinute - (points - 1 - k) * width;
      return { x: p.x, y: k === points - 1 ? (i === 0 ? t.count : t.bytes) : st.sizeAt(upTo)[i] };
    });
    return {
      pending_index_count: 0,
      current_vector_count: t.count,
      daily_query_count: st.rec.dayQueries,
      daily_update_count: st.rec.dayUpdates,
      monthly_query_count: st.rec.monthQueries,
      monthly_update_count: st.rec.monthUpdates,
      monthly_bandwidth_usage: st.rec.monthBytes,
      storage_usage: t.bytes,
      monthly_cost: 0,
      daily_rerank_count: 0,
      monthly_rerank_count: 0,
      daily_update_requests: daily(1),
      daily_query_requests: daily(0),
      daily_bandwidths: daily(2),
      days: lastDays.map((d) => new Date(d * 86_400_000).toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' })),
      query_throughput: st.series(now, points, width, perSecond(0)),
      update_throughput: st.series(now, points, width, perSecond(1)),
      query_latency_mean: st.series(now, points, width, mean(2, 0)),
      query_latency_99: st.series(now, points, width, maxOf(5)),
      update_latency_mean: st.series(now, points, width, mean(3, 1)),
      update_latency_99: st.series(now, points, width, maxOf(6)),
      embeds_latency_mean: zero,
      embeds_latency_99: zero,
      vector_count: sizeSeries(0),
      data_size: sizeSeries(1),
      daily_rerank_requests: zero,
      rerank_latency_mean: zero,
      rerank_latency_99: zero,
    };
  }

  // ------------------------------------------------------------ data plane (/v2/search-data/<id>)

  data = async (req: V2Request): Promise<V2Response> => {
    const started = performance.now();
    const [, id, op, ...rest] = req.segments;
    try {
      const rec = id === undefined ? undefined : this.indexes.get(id);
      if (rec === undefined) throw new HttpError(404, `search index ${id ?? ''} not found`);
      const auth = req.headers.get('authorization') ?? '';
      const m = /^bearer\s+(.+)$/i.exec(auth);
      const tok = m === null ? undefined : this.tokens.get(m[1].trim());
      if (tok === undefined || tok.id !== rec.id) throw new HttpError(401, 'Unauthorized: missing or invalid token');
      if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'PUT' && req.method !== 'DELETE') throw notAllowed(req.method);
      const ns = rest.join('/');
      const write = op === 'upsert-data' || op === 'upsert' || op === 'delete' || op === 'reset' || op === 'delete-namespace';
      if (write && tok.readOnly) throw new HttpError(403, 'Forbidden: the read-only token cannot be used for write operations');
      const plan = this.plans[rec.type];
      const body = req.body.length === 0 ? null : parseJson(req.body);
      let result: unknown;
      switch (op) {
        case 'upsert-data': result = await this.upsert(rec, plan, ns, body); break;
        case 'upsert': throw new HttpError(400, 'vector upserts are not supported: this is a search index, send documents to upsert-data');
        case 'search': case 'query-data': result = await this.search(rec, plan, ns, body); break;
        case 'fetch': result = this.fetch(rec, plan, ns, body); break;
        case 'range': result = this.range(rec, plan, ns, body); break;
        case 'delete': result = await this.delete(rec, plan, ns, body); break;
        case 'reset': result = await this.reset(rec, req.rawQuery === 'all' || req.query.has('all') ? null : ns); break;
        case 'delete-namespace': result = await this.deleteNamespace(rec, ns); break;
        case 'info': result = this.info(rec); break;
        case 'list-namespaces': result = [...this.ns.get(rec.id)!.keys()].sort(); break;
        default: throw new HttpError(404, `no such endpoint: ${op ?? ''}`);
      }
      const out = JSON.stringify({ result });
      // Updates count documents written or deleted (what max_daily_updates limits); queries count requests.
      let units = 1;
      if (op === 'upsert-data') units = Array.isArray(body) ? body.length : 1;
      else if (op === 'delete') units = Math.max(1, (result as { deleted: number }).deleted);
      this.stats.get(rec.id)?.record(Date.now(), write ? 'update' : 'query', performance.now() - started, req.body.length + out.length, units);
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: out };
    } catch (err) {
      return failure(err, true);
    }
  };

  /** Per-second and per-day quotas; `n` operations of the kind (documents written, 1 query). */
  private admit(rec: IndexRecord, plan: Plan, kind: 'query' | 'write', n: number): void {
    const now = Date.now();
    const st = this.stats.get(rec.id)!;
    st.roll(now);
    if (kind === 'query' && plan.max_daily_queries >= 0 && st.rec.dayQueries + 1 > plan.max_daily_queries) {
      throw new HttpError(429, `Exceeded daily query limit: max_daily_queries is ${plan.max_daily_queries} for the ${rec.type} plan`);
    }
    if (kind === 'write' && plan.max_daily_updates >= 0 && st.rec.dayUpdates + n > plan.max_daily_updates) {
      throw new HttpError(429, `Exceeded daily update limit: max_daily_updates is ${plan.max_daily_updates} for the ${rec.type} plan`);
    }
    if (plan.max_monthly_bandwidth >= 0 && st.rec.monthBytes >= plan.max_monthly_bandwidth) {
      throw new HttpError(429, `Exceeded monthly bandwidth limit: max_monthly_bandwidth is ${plan.max_monthly_bandwidth} bytes for the ${rec.type} plan`);
    }
    const sec = Math.floor(now / 1000);
    let r = this.rate.get(rec.id);
    if (r === undefined || r.sec !== sec) { r = { sec, queries: 0, writes: 0 }; this.rate.set(rec.id, r); }
    if (kind === 'query') {
      if (plan.max_query_per_second >= 0 && r.queries + 1 > plan.max_query_per_second) {
        throw new HttpError(429, `Exceeded query rate limit: max_query_per_second is ${plan.max_query_per_second} for the ${rec.type} plan`);
      }
      r.queries++;
    } else {
      if (plan.max_writes_per_second >= 0 && r.writes + n > plan.max_writes_per_second) {
        throw new HttpError(429, `Exceeded write rate limit: max_writes_per_second is ${plan.max_writes_per_second} for the ${rec.type} plan`);
      }
      r.writes += n;
    }
  }

  private readLimit(rec: IndexRecord, plan: Plan, n: number, what: string): void {
    if (plan.max_reads_per_request >= 0 && n > plan.max_reads_per_request) {
      throw new HttpError(400, `Exceeded read limit per request: ${what} ${n} is more than max_reads_per_request ${plan.max_reads_per_request} of the ${rec.type} plan`);
    }
  }

  private async embed(texts: string[]): Promise<number[][]> {
    try {
      const vecs = await this.embedder!.embed(texts);
      if (vecs.length > 0) this.dimension = vecs[0].length;
      return vecs;
    } catch (err) {
      if (err instanceof EmbeddingError) throw new HttpError(503, err.message);
      throw err;
    }
  }

  /** A task for the worker pool; tasks still queued at shutdown answer 503. */
  private async work<T>(task: object): Promise<T> {
    try {
      return await this.pool.run(task) as T;
    } catch (err) {
      if (this.closing) throw new HttpError(503, 'the server is shutting down');
      throw err;
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.writeChain.then(fn, fn);
    this.writeChain = p.catch(() => {});
    return p;
  }

  /** Inside a write transaction: the namespace's new version and what it changed (for the workers). */
  private bump(id: string, ns: string, version: number, ids: string[] | null): void {
    void this.db.meta.put(verKey(id, ns), version);
    void this.db.meta.put(logKey(id, ns, version), ids);
    if (version > LOG_KEEP) void this.db.meta.remove(logKey(id, ns, version - LOG_KEEP));
  }

  private space(rec: IndexRecord, ns: string, create: boolean): NsState | undefined {
    const spaces = this.ns.get(rec.id)!;
    let s = spaces.get(ns);
    if (s === undefined && create) {
      // A namespace deleted and made again continues its version: a worker's cached index of
      // the old one must never look current.
      s = { count: 0, bytes: 0, version: (this.db.meta.get(verKey(rec.id, ns)) as number | undefined) ?? 0 };
      spaces.set(ns, s);
      void this.db.meta.put(nsKey(rec.id, ns), 1);
    }
    return s;
  }

  private async upsert(rec: IndexRecord, plan: Plan, ns: string, body: unknown): Promise<string> {
    checkNs(ns);
    const docs = Array.isArray(body) ? body : body !== null && typeof body === 'object' ? [body] : null;
    if (docs === null) throw new HttpError(400, 'the body must be a document or an array of documents: {"id", "content", "metadata"?}');
    if (plan.max_writes_per_request >= 0 && docs.length > plan.max_writes_per_request) {
      throw new HttpError(400, `Exceeded write limit per request: ${docs.length} documents is more than max_writes_per_request ${plan.max_writes_per_request} of the ${rec.type} plan`);
    }
    const parsed: { key: Buffer; id: string; value: StoredDoc }[] = [];
    for (const [i, d] of docs.entries()) {
      if (d === null || typeof d !== 'object' || Array.isArray(d)) throw new HttpError(400, `document ${i} is not an object`);
      const o = d as Record<string, unknown>;
      if (typeof o.id !== 'string' && typeof o.id !== 'number') throw new HttpError(400, `document ${i}: id is required and must be a string or a number`);
      const docId = String(o.id);
      if (docId === '') throw new HttpError(400, `document ${i}: id must not be empty`);
      if (Buffer.byteLength(docId) > MAX_KEY) throw new HttpError(400, `document ${i}: id is longer than ${MAX_KEY} bytes`);
      if (o.content === null || typeof o.content !== 'object' || Array.isArray(o.content)) throw new HttpError(400, `document ${i} (${docId}): content is required and must be an object`);
      if (o.metadata !== undefined && o.metadata !== null && (typeof o.metadata !== 'object' || Array.isArray(o.metadata))) throw new HttpError(400, `document ${i} (${docId}): metadata must be an object`);
      const value: StoredDoc = { c: o.content as Json };
      if (o.metadata !== undefined && o.metadata !== null) value.m = o.metadata as Json;
      parsed.push({ key: docKey(rec.id, ns, docId), id: docId, value });
    }
    this.admit(rec, plan, 'write', parsed.length);
    if (this.embedder !== null) {
      const vecs = await this.embed(parsed.map((p) => contentText(p.value.c).join(' ')));
      parsed.forEach((p, i) => { p.value.e = vecs[i]; });
    }
    await this.serial(async () => {
      const s = this.space(rec, ns, true)!;
      let added = 0;
      let bytes = 0;
      const seen = new Set<string>();
      for (const p of parsed) {
        const old = seen.has(p.id) ? undefined : this.db.docs.get(p.key);
        if (old !== undefined) bytes -= docSize(old);
        else if (!seen.has(p.id)) added++;
        seen.add(p.id);
        bytes += docSize(p.value);
      }
      const total = this.totals(rec.id).count;
      if (plan.max_vector_count >= 0 && total + added > plan.max_vector_count) {
        throw new HttpError(400, `Exceeded max document count: the ${rec.type} plan allows ${plan.max_vector_count} documents (the index has ${total})`);
      }
      s.version++;
      await this.db.env.transaction(() => {
        for (const p of parsed) void this.db.docs.put(p.key, p.value);
        this.bump(rec.id, ns, s.version, [...seen]);
      });
      s.count += added;
      s.bytes += bytes;
      const t = this.totals(rec.id);
      this.stats.get(rec.id)!.size(Date.now(), t.count, t.bytes);
    });
    return 'Success';
  }

  private async search(rec: IndexRecord, plan: Plan, ns: string, body: unknown): Promise<SearchResult[]> {
    const o = objectBody(body);
    const query = o.query ?? o.data ?? '';
    if (typeof query !== 'string') throw new HttpError(400, 'query must be a string');
    const topK = o.topK ?? 10;
    if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 1) throw new HttpError(400, 'topK must be a positive integer');
    this.readLimit(rec, plan, topK, 'topK');
    if (o.filter !== undefined && o.filter !== null && typeof o.filter !== 'string') throw new HttpError(400, 'filter must be a string');
    if (o.semanticWeight !== undefined && (typeof o.semanticWeight !== 'number' || o.semanticWeight < 0 || o.semanticWeight > 1)) {
      throw new HttpError(400, 'semanticWeight must be a number between 0 and 1');
    }
    this.admit(rec, plan, 'query', 1);
    if (this.space(rec, ns, false) === undefined) return [];
    // Hybrid only with an embedding endpoint; the SDK's default semanticWeight is 0.75.
    const weight = this.embedder === null ? 0 : (o.semanticWeight as number | undefined) ?? 0.75;
    const semantic = weight > 0 && query.trim() !== '' ? { vec: (await this.embed([query]))[0], weight } : null;
    const r = await this.work<{ error: string } | { hits: SearchResult[] }>({
      op: 'search', id: rec.id, ns, query, topK, filter: (o.filter as string | undefined) || null,
      data: o.includeData !== false, metadata: o.includeMetadata !== false, semantic,
    });
    if ('error' in r) throw new HttpError(400, r.error);
    return r.hits;
  }

  private fetch(rec: IndexRecord, plan: Plan, ns: string, body: unknown): unknown[] {
    const o = objectBody(body);
    const data = o.includeData !== false;
    const meta = o.includeMetadata !== false;
    const shape = (docId: string, v: StoredDoc | undefined) => {
      if (v === undefined) return null;
      const r: Record<string, unknown> = { id: docId };
      if (data) r.content = v.c;
      if (meta && v.m !== undefined) r.metadata = v.m;
      return r;
    };
    if (o.ids !== undefined) {
      if (!Array.isArray(o.ids) || o.ids.some((x) => typeof x !== 'string' && typeof x !== 'number')) throw new HttpError(400, 'ids must be an array of strings');
      this.readLimit(rec, plan, o.ids.length, 'ids');
      this.admit(rec, plan, 'query', 1);
      return o.ids.map((x) => String(x)).map((docId) => shape(docId, this.db.docs.get(docKey(rec.id, ns, docId))));
    }
    if (typeof o.prefix !== 'string') throw new HttpError(400, 'fetch needs ids (an array) or prefix (a string)');
    this.admit(rec, plan, 'query', 1);
    const start = docKey(rec.id, ns, o.prefix);
    const cap = plan.max_reads_per_request >= 0 ? Math.min(FETCH_PREFIX_CAP, plan.max_reads_per_request) : FETCH_PREFIX_CAP;
    const base = nsPrefix(rec.id, ns).length;
    const out: unknown[] = [];
    for (const { key, value } of this.db.docs.getRange({ start, end: prefixEnd(start), limit: cap })) {
      out.push(shape(key.subarray(base).toString(), value));
    }
    return out;
  }

  private range(rec: IndexRecord, plan: Plan, ns: string, body: unknown): unknown {
    const o = objectBody(body);
    const limit = o.limit;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw new HttpError(400, 'limit must be a positive integer');
    this.readLimit(rec, plan, limit, 'limit');
    const cursor = o.cursor ?? '0';
    if (typeof cursor !== 'string' && typeof cursor !== 'number') throw new HttpError(400, 'cursor must be a string');
    if (o.prefix !== undefined && typeof o.prefix !== 'string') throw new HttpError(400, 'prefix must be a string');
    this.admit(rec, plan, 'query', 1);
    const prefix = (o.prefix as string | undefined) ?? '';
    const base = nsPrefix(rec.id, ns);
    const first = docKey(rec.id, ns, prefix);
    let start = first;
    const c = String(cursor);
    if (c !== '0' && c !== '') {
      // Our cursors are the base64url of the next id ("0" and "" start from the beginning).
      const after = docKey(rec.id, ns, Buffer.from(c, 'base64url').toString());
      if (Buffer.compare(after, start) > 0) start = after;
    }
    const data = o.includeData !== false;
    const meta = o.includeMetadata !== false;
    const vectors: unknown[] = [];
    let nextCursor = '';
    for (const { key, value } of this.db.docs.getRange({ start, end: prefixEnd(first), limit: limit + 1 })) {
      const docId = key.subarray(base.length).toString();
      if (vectors.length === limit) { nextCursor = Buffer.from(docId).toString('base64url'); break; }
      const r: Record<string, unknown> = { id: docId };
      if (data) r.content = value.c;
      if (meta && value.m !== undefined) r.metadata = value.m;
      vectors.push(r);
    }
    return { nextCursor, vectors };
  }

  private async delete(rec: IndexRecord, plan: Plan, ns: string, body: unknown): Promise<{ deleted: number }> {
    let ids: string[];
    if (Array.isArray(body)) body = { ids: body };
    else if (typeof body === 'string' || typeof body === 'number') body = { ids: [body] };
    const o = objectBody(body);
    if (o.ids !== undefined) {
      if (!Array.isArray(o.ids) || o.ids.some((x) => typeof x !== 'string' && typeof x !== 'number')) throw new HttpError(400, 'ids must be an array of strings');
      ids = o.ids.map(String);
      if (plan.max_writes_per_request >= 0 && ids.length > plan.max_writes_per_request) {
        throw new HttpError(400, `Exceeded write limit per request: ${ids.length} ids is more than max_writes_per_request ${plan.max_writes_per_request} of the ${rec.type} plan`);
      }
    } else if (typeof o.prefix === 'string') {
      const start = docKey(rec.id, ns, o.prefix);
      const base = nsPrefix(rec.id, ns).length;
      ids = [...this.db.docs.getKeys({ start, end: prefixEnd(start) })].map((k) => k.subarray(base).toString());
    } else if (typeof o.filter === 'string') {
      if (this.space(rec, ns, false) === undefined) return { deleted: 0 };
      const r = await this.work<{ error: string } | { ids: string[] }>({ op: 'filter', id: rec.id, ns, filter: o.filter });
      if ('error' in r) throw new HttpError(400, r.error);
      ids = r.ids;
    } else {
      throw new HttpError(400, 'delete needs ids (an array), prefix (a string) or filter (a string)');
    }
    this.admit(rec, plan, 'write', Math.max(1, ids.length));
    return this.serial(async () => {
      const s = this.space(rec, ns, false);
      if (s === undefined) return { deleted: 0 };
      let deleted = 0;
      let bytes = 0;
      const keys: Buffer[] = [];
      const removed: string[] = [];
      for (const docId of new Set(ids)) {
        const k = docKey(rec.id, ns, docId);
        const old = this.db.docs.get(k);
        if (old === undefined) continue;
        deleted++;
        bytes += docSize(old);
        keys.push(k);
        removed.push(docId);
      }
      if (deleted > 0) {
        s.version++;
        await this.db.env.transaction(() => {
          for (const k of keys) void this.db.docs.remove(k);
          this.bump(rec.id, ns, s.version, removed);
        });
        s.count -= deleted;
        s.bytes -= bytes;
        const t = this.totals(rec.id);
        this.stats.get(rec.id)!.size(Date.now(), t.count, t.bytes);
      }
      return { deleted };
    });
  }

  /** Remove every document of one namespace (or all of them when ns is null); drop the namespace too if asked. */
  private clear(rec: IndexRecord, ns: string | null, drop: boolean): Promise<void> {
    return this.serial(async () => {
      const spaces = this.ns.get(rec.id)!;
      const names = ns === null ? [...spaces.keys()] : [ns];
      await this.db.env.transaction(() => {
        for (const name of names) {
          const s = spaces.get(name);
          if (s === undefined) continue;
          const prefix = nsPrefix(rec.id, name);
          for (const k of this.db.docs.getKeys({ start: prefix, end: prefixEnd(prefix) })) void this.db.docs.remove(k);
          s.version++;
          s.count = 0;
          s.bytes = 0;
          this.bump(rec.id, name, s.version, null);
          if (drop && name !== '') {
            spaces.delete(name);
            void this.db.meta.remove(nsKey(rec.id, name));
            const logs = `log:${rec.id}\u0000${name}\u0000`;
            for (const k of this.db.meta.getKeys({ start: logs, end: logs.slice(0, -1) + '\u0001' })) {
              if (k !== logKey(rec.id, name, s.version)) void this.db.meta.remove(k);
            }
          }
        }
      });
      const t = this.totals(rec.id);
      this.stats.get(rec.id)!.size(Date.now(), t.count, t.bytes);
    });
  }

  private async reset(rec: IndexRecord, ns: string | null): Promise<string> {
    if (ns !== null && this.space(rec, ns, false) === undefined) return 'Success';
    await this.clear(rec, ns, false);
    return 'Success';
  }

  private async deleteNamespace(rec: IndexRecord, ns: string): Promise<string> {
    if (ns === '') throw new HttpError(400, 'The default namespace cannot be deleted');
    if (this.space(rec, ns, false) === undefined) throw new HttpError(404, `Namespace ${ns} does not exist`);
    await this.clear(rec, ns, true);
    return 'Success';
  }

  private info(rec: IndexRecord): unknown {
    const namespaces: Record<string, { vectorCount: number; pendingVectorCount: number }> = {};
    for (const [name, s] of this.ns.get(rec.id)!) namespaces[name] = { vectorCount: s.count, pendingVectorCount: 0 };
    const t = this.totals(rec.id);
    return {
      vectorCount: t.count,
      pendingVectorCount: 0,
      indexSize: t.bytes,
      // Without an embedding endpoint search is full-text (BM25) only and semanticWeight is ignored.
      dimension: this.embedder === null ? 0 : this.dimension,
      similarityFunction: this.embedder === null ? 'BM25' : 'COSINE',
      searchMode: this.embedder === null ? 'lexical' : 'hybrid',
      embeddingModel: this.embedder === null ? null : this.embedder.model,
      namespaces,
    };
  }
}

// ------------------------------------------------------------ helpers

function docSize(d: StoredDoc): number {
  return JSON.stringify(d.c).length + (d.m === undefined ? 0 : JSON.stringify(d.m).length);
}

function newToken(id: string, readOnly: boolean): string {
  // Self-describing like the service's tokens, but only the random part matters.
  return Buffer.from(`${readOnly ? 'ro' : 'rw'}:${id}:${crypto.randomBytes(24).toString('base64url')}`).toString('base64url');
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

function checkNs(ns: string): void {
  if (ns.includes('\u0000')) throw new HttpError(400, 'namespace names cannot contain NUL');
  if (Buffer.byteLength(ns) > 256) throw new HttpError(400, 'namespace name is longer than 256 bytes');
}

function parseJson(b: Buffer): unknown {
  try {
    return JSON.parse(b.toString());
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
}

function jsonBody(req: V2Request): Record<string, unknown> {
  if (req.body.length === 0) throw new HttpError(400, 'a JSON body is required');
  return objectBody(parseJson(req.body));
}

function objectBody(b: unknown): Record<string, unknown> {
  if (b === null) return {};
  if (typeof b !== 'object' || Array.isArray(b)) throw new HttpError(400, 'the body must be a JSON object');
  return b as Record<string, unknown>;
}

function notAllowed(m: string): HttpError {
  return new HttpError(405, `method ${m} not allowed here`);
}

function ok(body: unknown): V2Response {
  return { status: 200, body: typeof body === 'string' ? JSON.stringify(body) : body, headers: { 'Content-Type': 'application/json' } };
}

function failure(err: unknown, withStatus = false): V2Response {
  if (err instanceof HttpError) return { status: err.status, body: withStatus ? { error: err.message, status: err.status } : { error: err.message } };
  console.error('search service error:', err);
  return { status: 500, body: { error: 'internal error' } };
}
