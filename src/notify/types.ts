import type { RunResult } from '../audit/bundle.js';
import type { NotifySinkConfig, NotifySinkType } from '../config/schema.js';
import type { Incident } from '../shared/types.js';
import type { Summary } from './summary.js';

// Shapes shared by the notifier, its outbox and the sink adapters.

export type { NotifySinkConfig, NotifySinkType } from '../config/schema.js';

/**
 * Why a delivery was created: a run started (sinks that keep one message per incident only), a run finished, someone re-sent it, a replay/compare asked for it, or every
 * alert behind an incident already told resolved (a follow-up to the message the sink already has).
 */
export const TRIGGERS = ['running', 'finished', 'resend', 'replay', 'compare', 'resolved'] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** The part of `.triage/state.json` a notification reads. */
export interface FinalStateRecord {
  state: string;
  reason?: string;
  attempts: number;
  updatedAt?: string;
  runs: { id: string; status: string }[];
}

/**
 * What the daemon knows when an incident reaches a final state: the notifier's only input. `result` and
 * `report` are absent when the run left none (a failure before launch, an agent that wrote nothing).
 */
export interface FinishedIncident {
  /** Absolute path of the incident's workspace folder. */
  workspaceDir: string;
  incident: Incident;
  state: FinalStateRecord;
  /** The run being reported (the latest one). */
  runId: string;
  result?: RunResult;
  /** `output/investigation.md`, possibly cut to `notify.max_report_bytes` (see reportTruncated). */
  report?: string;
  /** Bytes of the report on disk, when it was cut. */
  reportTruncated?: { bytes: number };
  /** A label shown with replays and compare cells ("replay of …", "compare claude/preload"). */
  label?: string;
  /** When every alert behind the incident resolved (alerts.json), if it did. */
  resolvedAt?: string;
  /** The responders' verdict on the answer, if one was given. */
  feedback?: { verdict: string; by?: string };
}

/** Everything a sink renders from: the input plus the summary and links, computed once. */
export interface RenderInput extends FinishedIncident {
  summary: Summary;
  trigger: Trigger;
  idempotencyKey: string;
  /** sha256 (hex) of the report text sent. */
  reportSha256?: string;
  /** The daemon's status page, when `http.public_url` is configured. */
  statusUrl?: string;
  /** The workspace folder name (what `triage-runner retry` takes, relative to the workspaces root). */
  folder: string;
  /**
   * This sink already has the incident's message from an earlier delivery (a retry, a resolution): the
   * sink adds to it (Slack updates its parent, PagerDuty adds a note) instead of opening anything new.
   */
  followUp?: boolean;
}

/** What one delivered step leaves behind (Slack ts, PagerDuty dedup key, HTTP status…). */
export type StepResult = Record<string, string | number | boolean>;

export type StepStatus = 'pending' | 'sending' | 'delivered';

export interface StepState {
  id: string;
  status: StepStatus;
  /** When the current send began (a crash leaves `sending`: the next attempt reconciles first). */
  startedAt?: string;
  deliveredAt?: string;
  result?: StepResult;
}

export type EntryStatus = 'pending' | 'delivered' | 'failed';

/** A failure as recorded: never a secret (everything passes through the redactor first). */
export interface RecordedError {
  message: string;
  /** permanent: not retried; retry: scheduled again. */
  kind: 'retry' | 'permanent';
  status?: number;
  code?: string;
  /** The response body, cut to a few KB. */
  response?: string;
  retryAfterMs?: number;
}

/** `.triage/outbox/<key>.json`: one delivery to one sink, its steps and its retry schedule. */
export interface OutboxEntry {
  version: 1;
  key: string;
  /** Sent to the sink (webhook header, Slack metadata, PagerDuty note footer); unique across workspaces. */
  idempotencyKey: string;
  sink: string;
  type: NotifySinkType;
  incidentId: string;
  runId: string;
  trigger: Trigger;
  createdAt: string;
  status: EntryStatus;
  /** Failed attempts so far (drives the backoff). */
  attempts: number;
  nextAttemptAt?: string;
  lastError?: RecordedError;
  steps: StepState[];
  finishedAt?: string;
  /**
   * The incident's message at this sink from an earlier delivery (Slack: the parent's channel and ts):
   * this delivery updates it in place instead of posting another one.
   */
  parent?: { channel: string; ts: string };
}

/** What a sink renders once, stored beside the entry (`<key>.payload.json`) and sent as is on every retry. */
export type SinkPayload = Record<string, unknown>;

/** The credentials a sink uses, read from `secrets:` at send time (never stored). */
export interface SinkCredentials {
  secret: string;
  notesSecret?: string;
}

export interface SendContext<P extends SinkPayload = SinkPayload> {
  sink: NotifySinkConfig;
  credentials: SinkCredentials;
  payload: P;
  entry: OutboxEntry;
  /** Results of the steps delivered so far (e.g. the Slack parent's ts for the thread). */
  results: Record<string, StepResult>;
  timeoutMs: number;
  fetch: typeof fetch;
  now: () => number;
}

/** One adapter per sink type: mostly data (what to send), with the sending kept small. */
export interface SinkAdapter<P extends SinkPayload = SinkPayload> {
  type: NotifySinkType;
  /** What to send, rendered once when the delivery is recorded. */
  render(input: RenderInput, sink: NotifySinkConfig): P;
  /**
   * The sink keeps one message per incident, updated in place (Slack's parent): it is told when a run
   * starts, and its deliveries of one incident go out one at a time, in the order they were recorded,
   * so a later one always finds the message an earlier one posted.
   */
  keepsOneMessage?: boolean;
  /** The ordered steps of a delivery (Slack: parent then thread parts). */
  steps(payload: P): string[];
  /** Sends one step; throws a DeliveryError when it failed. */
  send(ctx: SendContext<P>, step: string): Promise<StepResult>;
  /**
   * A step left `sending` by a crash or a timeout may have been delivered: finds it at the sink by the
   * idempotency key when the sink can be asked (Slack message metadata, PagerDuty notes); undefined =
   * not found (or cannot tell), so it is sent again (receivers that dedupe on the key drop the copy).
   */
  reconcile?(ctx: SendContext<P>, step: string, startedAt: string): Promise<StepResult | undefined>;
}
