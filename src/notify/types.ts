import type { RunResult } from '../workspace/run-record.js';
import type { NotifySinkConfig, NotifySinkType } from '../config/schema.js';
import type { Incident } from '../workspace/incident.js';
import type { IncidentWorkload } from '../workspace/workloads.js';
import type { Summary } from './summary.js';
import type { OutboxEntry, SinkPayload, StepResult, Trigger } from '../workspace/outbox.js';

// Shapes shared by the notifier and the sink adapters; the outbox entry's are the workspace's record
// (src/workspace/outbox.ts).

export {
  TRIGGERS,
  type EntryStatus,
  type OutboxEntry,
  type RecordedError,
  type SinkPayload,
  type StepResult,
  type StepState,
  type StepStatus,
  type Trigger,
} from '../workspace/outbox.js';

export type { NotifySinkConfig, NotifySinkType } from '../config/schema.js';

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
  /** Every workload whose alerts the incident holds (alerts.json; a storm joins many), when recorded. */
  workloads?: IncidentWorkload[];
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
