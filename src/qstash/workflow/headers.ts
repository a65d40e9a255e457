/**
 * Reading the workflow headers of a publish: forwarded header sets (Upstash-Forward-*,
 * Upstash-Failure-Callback-Forward-*, Upstash-Callback-Forward-*), the protocol version header
 * that only a message's own forwards carry, and the failure-callback configuration of a trigger.
 */
import { HttpError } from '../service.js';
import { compileRetryDelay, parseFlowValue } from '../expr.js';
import type { FlowControl } from '../types.js';
import type { FailureConfig } from './types.js';

export type Headers = ReadonlyMap<string, string>;

export const PROTOCOL = 'upstash-workflow-sdk-version';

/** Headers with `prefix` (lower case), unprefixed. */
export function prefixed(h: Headers, prefix: string): Record<string, string> {
  const o: Record<string, string> = {};
  for (const [k, v] of h) if (k.startsWith(prefix)) o[k.slice(prefix.length)] = v;
  return o;
}

/** {name: [value]} headers (wait timeout headers, invoke step headers) as a Map, names lower-cased. */
export function fromArrays(h: Record<string, unknown> | undefined): Map<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of Object.entries(h ?? {})) m.set(k.toLowerCase(), Array.isArray(v) ? v.map(String).join(', ') : String(v));
  return m;
}

/**
 * The run-level forward set (re-sent on every delivery of the run) and the message's own
 * protocol header: the protocol header must never reach a call callback, so it stays out of
 * the run's set and travels only with the messages that carry it themselves.
 */
export function splitForward(h: Headers): { forward: Record<string, string>; own: Record<string, string> } {
  const forward = prefixed(h, 'upstash-forward-');
  const own: Record<string, string> = {};
  if (forward[PROTOCOL] !== undefined) {
    own['Upstash-Workflow-Sdk-Version'] = forward[PROTOCOL];
    delete forward[PROTOCOL];
  }
  return { forward, own };
}

/** A message's own forwards (steps: the protocol version and the invoke count). */
export function ownForward(h: Headers): Record<string, string> {
  const own = prefixed(h, 'upstash-forward-');
  if (own[PROTOCOL] !== undefined) {
    own['Upstash-Workflow-Sdk-Version'] = own[PROTOCOL];
    delete own[PROTOCOL];
  }
  return own;
}

/** Names the server sets itself: dropped from a forwarded set given back by the SDK (unknown-SDK re-trigger). */
const SERVER_OWNED = new Set([
  'upstash-signature', 'upstash-message-id', 'upstash-retried', 'upstash-caller-ip', 'upstash-topic-name', 'upstash-schedule-id',
  'content-length', 'host', 'user-agent', 'connection', 'transfer-encoding', 'content-type', 'accept', 'accept-encoding',
  'accept-language', 'sec-fetch-mode', 'keep-alive',
]);

export function dropServerOwned(f: Record<string, string>): Record<string, string> {
  const o: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) if (!SERVER_OWNED.has(k.toLowerCase())) o[k] = v;
  return o;
}

function flowOf(h: Headers, prefix: string): FlowControl | undefined {
  const key = h.get(`${prefix}flow-control-key`);
  if (key === undefined) return undefined;
  const v = h.get(`${prefix}flow-control-value`);
  if (v === undefined) throw new HttpError(400, `${prefix}Flow-Control-Value header is required with ${prefix}Flow-Control-Key`);
  try { return { key, ...parseFlowValue(v) }; } catch (e) { throw new HttpError(400, (e as Error).message); }
}

/**
 * The failure callback of a run: Upstash-Failure-Callback and its -Forward-*, -Retries,
 * -Retry-Delay, -Flow-Control-* headers. A run triggered without one (a direct call to the
 * endpoint, the REST trigger) gets the workflow URL, i.e. the endpoint's failure function.
 */
export function failureConfig(h: Headers, workflowUrl: string, forward: Record<string, string>): FailureConfig {
  const url = h.get('upstash-failure-callback');
  const header = prefixed(h, 'upstash-failure-callback-forward-');
  if (url === undefined) {
    return { url: workflowUrl, header: { ...forward, 'Upstash-Workflow-Is-Failure': 'true', 'Upstash-Workflow-Failure-Callback': 'true' } };
  }
  const f: FailureConfig = { url, header };
  const r = h.get('upstash-failure-callback-retries');
  if (r !== undefined) {
    if (!/^\d+$/.test(r.trim()) || Number(r) > 100) throw new HttpError(400, `invalid Upstash-Failure-Callback-Retries header: ${r}`);
    f.retries = Number(r);
  }
  const rd = h.get('upstash-failure-callback-retry-delay');
  if (rd !== undefined) {
    try { compileRetryDelay(rd); } catch (e) { throw new HttpError(400, (e as Error).message); }
    f.retryDelay = rd;
  }
  f.flowControl = flowOf(h, 'upstash-failure-callback-');
  return f;
}
