/** Records of the QStash-compatible service, as stored in its LMDB environment (<dir>/qstash). */

export interface CallbackOpts { retries?: number; retryDelay?: string; timeout?: number; method?: string; delay?: number }

export interface FlowControl { key: string; parallelism?: number; rate?: number; period?: number }

/** What a publish request asks for, before it becomes one message per destination. */
export interface MessageSpec {
  method: string;
  /** Header name -> value, as delivered (forwarded headers unprefixed, content-type). */
  header: Record<string, string>;
  body: string; // base64 of the raw bytes
  retries: number;
  retryDelay?: string;
  timeout?: number; // ms
  callback?: string;
  failureCallback?: string;
  callbackHeader?: Record<string, string>;
  failureCallbackHeader?: Record<string, string>;
  /** Upstash-Callback-{Retries,Retry-Delay,Timeout,Method,Delay} (and the Failure-Callback ones). */
  callbackOpts?: CallbackOpts;
  /** Upstash-Redact-Fields: shown as REDACTED:<sha256> in logs, DLQ and message views. */
  redact?: { body?: boolean; header?: true | string[] };
  failureCallbackOpts?: CallbackOpts;
  notBefore: number; // ms
  labels?: string[];
  flowControl?: FlowControl;
  queueName?: string;
  scheduleId?: string;
  callerIp?: string;
  /** Internal: a callback/failure-callback message (its own callbacks are not chained). */
  kind?: 'callback' | 'failureCallback';
  /**
   * Internal: the queue whose delivery slot this message holds until it ends (delivered,
   * failed or cancelled). A queue message takes it at its first attempt and keeps it through
   * its retries; its callback and failure callback inherit it, so the next message of the
   * queue waits for them too (QStash's ordered delivery).
   */
  queueSlot?: string;
  /** Workflow messages (src/qstash/workflow): the run and entry they belong to. */
  wf?: WfMeta;
  /** A message id chosen by the caller (workflow entries are appended before the publish). */
  id?: string;
}

/**
 * What a workflow message is: a step delivered with its run's entry prefix (`step`), a
 * context.call request to a third party (`toCallback`), the call's callback to the workflow
 * (`fromCallback`), or a failure callback (`failure`). `idx` is the entry's place in the run.
 */
export interface WfMeta { runId: string; createdAt: number; kind: 'step' | 'toCallback' | 'fromCallback' | 'failure'; idx: number }

export interface MessageRec extends MessageSpec {
  messageId: string;
  url: string;
  topicName?: string;
  endpointName?: string;
  createdAt: number;
  retried: number;
  /** When the next attempt is due (ms). */
  due: number;
  /** Order within a queue (enqueue order). */
  seq: number;
  /** A delivery attempt was started (on restart such a message is delivered again). */
  active?: boolean;
  dedupId?: string;
  /** Last failed attempt (for the DLQ and the failure callback). */
  last?: { status: number; header: Record<string, string[]>; body: string; error?: string };
}

export interface DlqRec extends MessageRec { dlqId: string; failedAt: number }

export interface EventRec {
  time: number;
  state: string;
  messageId: string;
  url: string;
  topicName?: string;
  endpointName?: string;
  scheduleId?: string;
  queueName?: string;
  header?: Record<string, string[]>;
  body?: string;
  error?: string;
  nextDeliveryTime?: number;
  responseStatus?: number;
  responseHeaders?: Record<string, string[]>;
  responseBody?: string;
  timeout?: number;
  callback?: string;
  failureCallback?: string;
  retryDelayExpression?: string;
  label?: string;
  labels?: string[];
  flowControlKey?: string;
  method?: string;
  maxRetries?: number;
  retried?: number;
}

export interface ScheduleRec {
  scheduleId: string;
  cron: string;
  destination: string;
  spec: MessageSpec;
  delay: number; // ms
  createdAt: number;
  isPaused: boolean;
  lastScheduleTime?: number;
  nextScheduleTime: number;
  lastScheduleStates?: Record<string, string>;
}

export interface QueueRec { name: string; parallelism: number; paused: boolean; createdAt: number; updatedAt: number }

export interface TopicRec { name: string; createdAt: number; updatedAt: number; endpoints: { name?: string; url: string }[] }

/** The filters of GET /v2/events, as passed to the log worker. */
export interface EventQuery {
  path: string;
  messageIds?: string[];
  states?: string[];
  /** Each list: any of its values (repeated query parameters are OR-ed). */
  url?: string[];
  topicName?: string[];
  scheduleId?: string[];
  queueName?: string[];
  host?: string[];
  /** The `path` filter (the destination URL's path; `path` is the database's). */
  urlPath?: string[];
  fromDate?: number;
  toDate?: number;
  labels?: string[];
  flowControlKey?: string[];
  count: number;
  latestFirst: boolean;
  cursor?: [number, number];
}
