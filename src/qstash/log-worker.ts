/** Piscina worker entry (loaded by path from dist/qstash/log-worker.js): one event-log query. */
import { queryEvents } from './log-query.js';
import type { EventQuery } from './types.js';

export default function run(q: EventQuery) {
  return queryEvents(q);
}
