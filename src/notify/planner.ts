import { createHash } from 'node:crypto';
import path from 'node:path';
import { randomHex } from '../util/random.js';
import type { NotifySinkConfig } from '../config/schema.js';
import type { Redactor } from '../log/redact.js';
import { compactStamp } from '../util/time.js';
import { runningMatches, sinkMatches, type FilterVerdict } from './filters.js';
import { listEntries } from '../workspace/outbox.js';
import { summarize } from './summary.js';
import type {
  FinishedIncident,
  OutboxEntry,
  RenderInput,
  SinkAdapter,
  SinkPayload,
  Trigger,
} from './types.js';

// Planning a notification: which sinks are told, under which outbox key, what they render from, and
// which earlier message of the incident a sink updates instead of posting anew. No sending, no timers.

export interface PlanOptions {
  trigger?: Trigger;
  /** Only these sinks (by name); unknown names throw. */
  sinks?: string[];
  /** Deliver even when a sink's filters (on, min_severity, clusters) do not match: an explicit request. */
  ignoreFilters?: boolean;
  /** Shown with the message: "replay of …", "compare claude/preload". */
  label?: string;
  /** Ends the outbox key instead of the trigger's own (a rejection: once per incident.json version). */
  keySuffix?: string;
}

export interface PlannedDelivery {
  sink: string;
  key: string;
  /** False when the delivery was recorded before (it is resumed, not sent again). */
  created: boolean;
}

export interface Plan {
  workspaceDir: string;
  deliveries: PlannedDelivery[];
  skipped: { sink: string; why: string }[];
}

export class UnknownSinkError extends Error {
  constructor(
    readonly names: string[],
    readonly known: string[],
  ) {
    super(`no sink named ${names.join(', ')} in notify.sinks; configured: ${known.join(', ') || '(none)'}`);
    this.name = 'UnknownSinkError';
  }
}

/**
 * What ends a delivery's outbox key: a run's own delivery, its start and its resolution are recorded
 * once each (a second call resumes them); a re-send, replay or compare is new every time.
 */
export function keySuffix(trigger: Trigger, now: number): string {
  if (trigger === 'finished') return '';
  if (trigger === 'resolved' || trigger === 'running') return `.${trigger}`;
  return `.${trigger}-${compactStamp(now)}-${randomHex(3)}`;
}

/** The configured sinks, or the named ones (unknown names throw). */
export function selectSinks(sinks: NotifySinkConfig[], names: string[] | undefined): NotifySinkConfig[] {
  if (!names) return sinks;
  const unknown = names.filter((n) => !sinks.some((s) => s.name === n));
  if (unknown.length > 0)
    throw new UnknownSinkError(
      unknown,
      sinks.map((s) => s.name),
    );
  return sinks.filter((s) => names.includes(s.name));
}

/** Whether a sink is told: its filters (or an explicit request), and a start only where it is kept. */
export function sinkVerdict(
  sink: NotifySinkConfig,
  adapter: SinkAdapter<SinkPayload>,
  input: FinishedIncident,
  trigger: Trigger,
  ignoreFilters: boolean,
): FilterVerdict {
  if (trigger === 'running' && !adapter.keepsOneMessage)
    return { match: false, why: `a ${sink.type} sink is told outcomes, not starts` };
  // A rating changes the incident's one message where there is one; other sinks are not told.
  if (trigger === 'feedback')
    return adapter.keepsOneMessage
      ? { match: true }
      : { match: false, why: `a ${sink.type} sink keeps no message to show a rating on` };
  if (ignoreFilters) return { match: true };
  return trigger === 'running' ? runningMatches(sink, input) : sinkMatches(sink, input);
}

/** The input every sink renders from; the report and incident pass through the redactor first. */
export function renderBase(
  input: FinishedIncident,
  trigger: Trigger,
  options: { redactor: Redactor; publicUrl?: string; label?: string },
): Omit<RenderInput, 'idempotencyKey'> {
  const { redactor, label } = options;
  const report = input.report === undefined ? undefined : redactor.redact(input.report);
  const result = input.result ? redactor.redactValue(input.result) : undefined;
  const answer = typeof result?.answer === 'string' ? result.answer : undefined;
  const publicUrl = options.publicUrl?.replace(/\/+$/, '');
  return {
    ...input,
    incident: redactor.redactValue(input.incident),
    state: redactor.redactValue(input.state),
    ...(result ? { result } : {}),
    ...(report !== undefined ? { report, reportSha256: sha256(report) } : {}),
    summary: summarize(report, answer),
    trigger,
    ...((label ?? input.label) ? { label: label ?? input.label } : {}),
    // The incident's own page, not the list.
    ...(publicUrl
      ? { statusUrl: `${publicUrl}/incidents/${encodeURIComponent(path.basename(input.workspaceDir))}` }
      : {}),
    folder: path.basename(input.workspaceDir),
  };
}

/** The outbox entry of a new delivery: every step pending, sent as soon as it is recorded. */
export function newEntry(
  input: FinishedIncident,
  fields: { key: string; idempotencyKey: string; sink: NotifySinkConfig; trigger: Trigger; now: number },
  steps: string[],
  parent: { channel: string; ts: string } | undefined,
): OutboxEntry {
  return {
    version: 1,
    key: fields.key,
    idempotencyKey: fields.idempotencyKey,
    sink: fields.sink.name,
    type: fields.sink.type,
    incidentId: input.incident.incidentId,
    runId: input.runId,
    trigger: fields.trigger,
    createdAt: new Date(fields.now).toISOString(),
    status: 'pending',
    attempts: 0,
    steps: steps.map((id) => ({ id, status: 'pending' as const })),
    ...(parent ? { parent } : {}),
  };
}

export interface EarlierDeliveries {
  /** Per sink, the incident's message from its latest delivery that posted one. */
  parents: Map<string, { channel: string; ts: string }>;
  /** The sinks that have delivered anything of this incident's own runs (not replays or compares). */
  told: Set<string>;
}

/**
 * Per sink, the incident's message from its latest delivery that posted one (a step `parent` with a
 * channel and ts): later deliveries (a retry's result) update that message instead of posting anew.
 * With `before`, only deliveries recorded before that one count.
 */
export async function earlierDeliveries(
  workspaceDir: string,
  before?: OutboxEntry,
): Promise<EarlierDeliveries> {
  const out = new Map<string, { channel: string; ts: string; at: string }>();
  const told = new Set<string>();
  const { entries } = await listEntries(workspaceDir).catch(() => ({ entries: [] as OutboxEntry[] }));
  for (const entry of entries) {
    if (before && !recordedBefore(entry, before)) continue;
    if (
      (entry.trigger === 'finished' || entry.trigger === 'resend') &&
      entry.steps.some((s) => s.status === 'delivered')
    )
      told.add(entry.sink);
    const result = entry.steps.find((s) => s.id === 'parent' && s.status === 'delivered')?.result;
    if (typeof result?.ts !== 'string' || typeof result.channel !== 'string') continue;
    const known = out.get(entry.sink);
    if (!known || known.at < entry.createdAt)
      out.set(entry.sink, { channel: result.channel, ts: result.ts, at: entry.createdAt });
  }
  return { parents: new Map([...out].map(([sink, p]) => [sink, { channel: p.channel, ts: p.ts }])), told };
}

/** Deliveries that go to one message: the same incident at the same sink. */
export const sameThread = (a: OutboxEntry, b: OutboxEntry) =>
  a.key !== b.key && a.sink === b.sink && a.incidentId === b.incidentId;

/** `a` was recorded before `b` (same millisecond: by key, so every process agrees). */
export const recordedBefore = (a: OutboxEntry, b: OutboxEntry) =>
  a.key !== b.key && (a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.key < b.key));

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Incident ids inside idempotency keys: printable, bounded. */
export const safeId = (id: string) => id.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, 128) || 'incident';
