/**
 * The query parameters each bulk endpoint knows. A bulk delete, cancel or retry with a filter
 * name it does not know (a typo: `labeel=x`) must not fall back to "no filter" and act on
 * everything: any other name is a 400 that names it, as the real service rejects it.
 */
import { HttpError } from './service.js';

/** Always accepted: the token may come in the query instead of the Authorization header. */
const AUTH = 'qstash_token';

export function checkParams(q: URLSearchParams, allowed: ReadonlySet<string>, what: string): void {
  for (const k of q.keys()) {
    if (k !== AUTH && !allowed.has(k)) {
      throw new HttpError(400, `unknown query parameter for ${what}: ${k} (accepted: ${[...allowed].join(', ')})`);
    }
  }
}

const UNIVERSAL = ['fromDate', 'toDate', 'callerIp', 'label', 'flowControlKey'];
const IDENTITY = ['url', 'topicName', 'scheduleId', 'queueName'];

/** GET/DELETE /v2/dlq and POST /v2/dlq/retry (the DLQ rejects host and path, as the service). */
export const DLQ_PARAMS: ReadonlySet<string> = new Set(['dlqIds', 'cursor', 'count', 'messageId', 'responseStatus', 'api', 'source', ...UNIVERSAL, ...IDENTITY]);

/** DELETE /v2/messages (bulk cancel). */
export const CANCEL_PARAMS: ReadonlySet<string> = new Set(['messageIds', 'cursor', 'count', 'host', 'path', ...UNIVERSAL, ...IDENTITY]);

/** DELETE /v2/workflows/runs (bulk cancel). */
export const RUNS_CANCEL_PARAMS: ReadonlySet<string> = new Set(['workflowRunIds', 'cursor', 'count', 'workflowUrl', 'workflowUrlExactMatch', 'host', 'path', ...UNIVERSAL]);

/** /v2/workflows/dlq (and /v2/dlq?source=workflow): listing, delete, resume, restart. */
export const WF_DLQ_PARAMS: ReadonlySet<string> = new Set([
  'dlqIds', 'cursor', 'count', 'source', 'workflowUrl', 'workflowRunId', 'workflowCreatedAt', 'url', 'messageId', 'responseStatus',
  'failureCallbackState', 'failureFunctionState', ...UNIVERSAL,
]);
