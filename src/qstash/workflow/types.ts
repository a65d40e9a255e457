/**
 * Records of the workflow layer, stored beside the queue's in the same LMDB environment
 * (<dir>/qstash), so that the log worker reads them with the queue's events:
 *   wfRuns     [createdAt, runId]        -> RunRec (one per run; runs sharing an id differ by createdAt)
 *   wfEntries  [runId, createdAt, idx]   -> EntryRec (the run's raw entries and its log-only step records)
 *   wfEvents   [time, seq]               -> WfEventRec (flat workflow log: message and run events)
 *   wfDlq      dlqId                     -> WfDlqRec
 *   wfWait     ['w', eventId, runId]     -> WaiterRec; ['l', runId, eventId] -> base64 event data (lookback)
 *   wfIndex    ['a', runId] -> createdAt (active runs); ['r', runId, createdAt] -> 1; ['m', messageId] -> [runId, createdAt];
 *              ['e', runId, time, seq] -> 1 (a run's flat-log events); the log filters' indexes (indexes.ts); ['v'] their version
 * Finished runs (with entries, index keys and DLQ entry) and flat-log events are pruned after
 * --qstash-log-retention.
 */
import type { FlowControl, MessageSpec } from '../types.js';

export type RunState = 'RUN_STARTED' | 'RUN_SUCCESS' | 'RUN_FAILED' | 'RUN_CANCELED';
export type StepState = 'STEP_PROGRESS' | 'STEP_SUCCESS' | 'STEP_RETRY' | 'STEP_FAILED' | 'STEP_CANCELED';
export type CallbackState = 'CALLBACK_INPROGRESS' | 'CALLBACK_SUCCESS' | 'CALLBACK_FAIL' | 'CALLBACK_CANCELED';

/** The Step JSON the SDK publishes (or the server builds for wait, call and invoke results). */
export interface StepJson {
  stepId?: number;
  stepName?: string;
  stepType?: string;
  out?: unknown;
  concurrent?: number;
  targetStep?: number;
  sleepFor?: number | string;
  sleepUntil?: number;
  waitEventId?: string;
  timeout?: string;
  waitTimeout?: boolean;
  callUrl?: string;
  callMethod?: string;
  callBody?: unknown;
  callHeaders?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface ErrorRec { error: string; status?: number; body?: string; headers?: Record<string, string[]>; time: number }

export interface FailureFunctionRec {
  messageId: string;
  url: string;
  state: CallbackState;
  failHeaders: Record<string, string[]>;
  failStatus: number;
  failResponse: string;
  dlqId: string;
  maxRetries: number;
  responseStatus?: number;
  responseBody?: string;
  responseHeaders?: Record<string, string[]>;
  errors?: ErrorRec[];
}

/** Where a failure callback goes and what it carries (captured at trigger time). */
export interface FailureConfig {
  url: string;
  header: Record<string, string>;
  retries?: number;
  retryDelay?: string;
  flowControl?: FlowControl;
}

export interface InvokerRec {
  workflowRunId: string;
  workflowUrl: string;
  workflowRunCreatedAt: number;
  /** The parent's Invoke step (stepId, stepName, stepType, concurrent...). */
  step: StepJson;
  /** The parent's step headers sent with the invoke ({name: [value]}). */
  headers: Record<string, string[]>;
}

export interface RunRec {
  workflowRunId: string;
  workflowUrl: string;
  createdAt: number;
  state: RunState;
  completedAt?: number;
  /** The body of DELETE ...?cancel=false (the route function's return value as JSON text). */
  response?: string;
  callerIp?: string;
  labels?: string[];
  // ---- configuration kept at trigger time, applied to every later delivery of the run
  retries: number;
  retryDelay?: string;
  timeout?: number;
  flowControl?: FlowControl;
  redact?: MessageSpec['redact'];
  /** The trigger's Upstash-Forward-* headers (unprefixed), minus the protocol version header. */
  forward: Record<string, string>;
  failure?: FailureConfig;
  /** base64 of the initial payload (entry 0's body). */
  initialBody: string;
  contentType?: string;
  invoker?: InvokerRec;
  /** Started through /v2/trigger: the first delivery asks the SDK to re-trigger itself. */
  unknownSdk?: boolean;
  failureFunction?: FailureFunctionRec;
  dlqId?: string;
}

export type Delivery = 'PROGRESS' | 'SUCCESS' | 'RETRY' | 'FAILED' | 'CANCELED';

/**
 * One entry of a run: a raw entry (`raw`, part of what the SDK receives: entry 0 = the initial
 * payload, step results, plan steps, call requests and callbacks), or a log-only record of a
 * step in progress on the server's side (a wait, an invoke). `d` is the state of the entry's own
 * delivery (for the log's `next` group and parallel branches).
 */
export interface EntryRec {
  idx: number;
  messageId: string;
  callType: 'step' | 'toCallback' | 'fromCallback';
  /** base64 (the raw entry body). */
  body: string;
  raw: boolean;
  createdAt: number;
  /** The parsed step (raw step entries), or the step a log-only record / call request stands for. */
  step?: StepJson;
  /** The headers its message is delivered with ({name: [value]}). */
  headers?: Record<string, string[]>;
  d?: Delivery;
  /** Deduplication key of a step or call message published by the SDK (see dedupKey). */
  dk?: string;
  errors?: ErrorRec[];
  next?: number;
  /** A call request's callback: where it goes, and its Upstash-Callback-Forward-* headers. */
  cb?: { url: string; forward: Record<string, string> };
  call?: {
    url: string; method: string; headers: Record<string, string>; body: string;
    responseStatus?: number; responseBody?: string; responseHeaders?: Record<string, string[]>;
  };
  wait?: { eventId: string; timeoutDuration: string; deadline: number; timedOut?: boolean };
  invoke?: { runId: string; url: string; createdAt: number; body?: string; headers: Record<string, string[]> };
}

export interface WfEventRec {
  time: number;
  state: string;
  workflowRunId: string;
  workflowUrl: string;
  workflowCreatedAt: number;
  messageId?: string;
  stepInfo?: Record<string, unknown>;
  nextDeliveryTime?: number;
  error?: string;
  responseStatus?: number;
  responseBody?: string;
  responseHeaders?: Record<string, string[]>;
  headers?: Record<string, string[]>;
  body?: string;
  invokerWorkflowRunId?: string;
  invokerWorkflowUrl?: string;
  invokerWorkflowCreatedAt?: number;
  workflowRunResponse?: string;
  dlqId?: string;
  label?: string;
  labels?: string[];
  flowControlKey?: string;
  callerIp?: string;
}

export interface WfDlqRec {
  dlqId: string;
  messageId: string;
  url: string;
  method: string;
  header: Record<string, string[]>;
  body: string; // base64
  maxRetries: number;
  retryDelay?: string;
  notBefore: number;
  createdAt: number;
  failedAt: number;
  callerIp?: string;
  workflowRunId: string;
  workflowCreatedAt: number;
  workflowUrl: string;
  responseStatus?: number;
  responseHeader?: Record<string, string[]>;
  responseBody?: string; // base64
  error?: string;
  failureCallback?: string;
  labels?: string[];
  flowControlKey?: string;
  /** The failed entry (resume re-delivers it with the entries before it). */
  idx: number;
  kind: 'step' | 'fromCallback';
}

export interface WaiterRec {
  eventId: string;
  runId: string;
  createdAt: number; // the run's
  url: string;
  deadline: number; // ms
  timeoutDuration: string;
  timeoutUrl: string;
  timeoutBody?: string;
  timeoutHeaders: Record<string, string[]>;
  /** The wait request's own Upstash-Forward-* headers (the protocol header), for the result. */
  own: Record<string, string>;
  step: StepJson;
  /** Index of its log-only record. */
  idx: number;
  registeredAt: number;
}
