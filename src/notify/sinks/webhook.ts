import { createHmac } from 'node:crypto';
import { clipText, outcomeOf, outcomeWords, summaryText } from '../text.js';
import { expectSuccess, request } from '../delivery.js';
import type { RenderInput, SinkAdapter } from '../types.js';

// A generic webhook: a versioned JSON document POSTed to `url`, signed so that the receiver can check
// it came from us and is fresh, with an idempotency key so that it can drop a copy (a retry after a
// timeout, for instance). The body is rendered once and sent byte for byte on every attempt.

export const WEBHOOK_SCHEMA_VERSION = 1;
/** An investigation ended: its answer (with how far it holds) or its failure. */
export const WEBHOOK_EVENT = 'triage-runner.investigation.finished';
/** Every alert behind an incident resolved: after its answer, or before its run (then never run). */
export const WEBHOOK_RESOLVED_EVENT = 'triage-runner.incident.resolved';
/** An incident was refused before any run (an unknown cluster, an invalid incident.json): its reason. */
export const WEBHOOK_REJECTED_EVENT = 'triage-runner.incident.rejected';
export type WebhookEvent =
  typeof WEBHOOK_EVENT | typeof WEBHOOK_RESOLVED_EVENT | typeof WEBHOOK_REJECTED_EVENT;

/** The event a delivery is: a resolution and a rejection have their own, never "investigation finished". */
export function webhookEvent(input: Pick<RenderInput, 'trigger' | 'state'>): WebhookEvent {
  if (input.trigger === 'resolved' || input.state.state === 'resolved') return WEBHOOK_RESOLVED_EVENT;
  if (input.state.state === 'rejected') return WEBHOOK_REJECTED_EVENT;
  return WEBHOOK_EVENT;
}
export const WEBHOOK_HEADERS = {
  timestamp: 'x-triage-runner-timestamp',
  signature: 'x-triage-runner-signature',
  event: 'x-triage-runner-event',
  idempotencyKey: 'idempotency-key',
} as const;

export interface WebhookPayload {
  [key: string]: unknown;
  url: string;
  body: string;
  /** The event type (absent in deliveries recorded before resolutions had their own: finished). */
  event?: WebhookEvent;
}

/** The body: incident, state, run result, summary, report text and its sha256. */
export function webhookDocument(input: RenderInput): Record<string, unknown> {
  const { summary } = input;
  return {
    schemaVersion: WEBHOOK_SCHEMA_VERSION,
    type: webhookEvent(input),
    idempotencyKey: input.idempotencyKey,
    trigger: input.trigger,
    ...(input.label ? { label: input.label } : {}),
    ...(input.resolvedAt ? { resolvedAt: input.resolvedAt } : {}),
    workspace: input.folder,
    incident: input.incident,
    state: {
      state: input.state.state,
      ...(input.state.reason !== undefined ? { reason: input.state.reason } : {}),
      attempts: input.state.attempts,
      ...(input.state.updatedAt !== undefined ? { updatedAt: input.state.updatedAt } : {}),
    },
    // What happened, in words: how far an answer holds (grounded only when the cluster supports it).
    outcome: { kind: outcomeOf(input), label: outcomeWords(outcomeOf(input)).short },
    run: input.runId ? { id: input.runId, result: input.result ?? null } : null,
    evidence: input.result?.evidence ?? null,
    summary: {
      text: clipText(summaryText(input), 4000),
      source: summary.source,
      ...(summary.hypothesis ? { hypothesis: summary.hypothesis } : {}),
      ...(summary.confidence ? { confidence: summary.confidence } : {}),
      ...(summary.firstAction ? { firstAction: summary.firstAction } : {}),
      ...(summary.answer ? { answer: summary.answer } : {}),
    },
    report:
      input.report === undefined
        ? null
        : {
            path: 'output/investigation.md',
            bytes: input.reportTruncated?.bytes ?? Buffer.byteLength(input.report),
            sha256: input.reportSha256,
            truncated: input.reportTruncated !== undefined,
            text: input.report,
          },
    links: { ...(input.statusUrl ? { status: input.statusUrl } : {}) },
  };
}

/** `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`: what a receiver recomputes to verify a delivery. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export const webhook: SinkAdapter<WebhookPayload> = {
  type: 'webhook',
  render: (input, sink) => ({
    url: sink.url ?? '',
    body: JSON.stringify(webhookDocument(input)),
    event: webhookEvent(input),
  }),
  steps: () => ['post'],
  async send(ctx) {
    const timestamp = String(Math.floor(ctx.now() / 1000));
    const answer = await request(
      ctx.fetch,
      'the webhook',
      ctx.payload.url,
      {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'triage-runner',
          [WEBHOOK_HEADERS.event]: ctx.payload.event ?? WEBHOOK_EVENT,
          [WEBHOOK_HEADERS.idempotencyKey]: ctx.entry.idempotencyKey,
          [WEBHOOK_HEADERS.timestamp]: timestamp,
          [WEBHOOK_HEADERS.signature]: webhookSignature(ctx.credentials.secret, timestamp, ctx.payload.body),
        },
        body: ctx.payload.body,
      },
      ctx.timeoutMs,
    );
    return { status: expectSuccess('the webhook', answer, ctx.now()).status };
  },
};
