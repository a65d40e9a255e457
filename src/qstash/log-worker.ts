/**
 * Piscina worker entry (loaded by path from dist/qstash/log-worker.js): one listing query.
 * QStash event queries have no `kind`; workflow listings (runs, flat events, DLQ) carry one.
 */
import { queryEvents } from './log-query.js';
import { workflowQuery, type WorkflowQuery } from './workflow/query.js';
import type { EventQuery } from './types.js';

export default function run(q: EventQuery | WorkflowQuery) {
  return 'kind' in q ? workflowQuery(q) : queryEvents(q);
}
