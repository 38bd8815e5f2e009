import { createHmac } from 'node:crypto';
import { clipText, summaryText } from '../text.js';
import { expectSuccess, request } from '../delivery.js';
import type { RenderInput, SinkAdapter } from '../types.js';

// A generic webhook: a versioned JSON document POSTed to `url`, signed so that the receiver can check
// it came from us and is fresh, with an idempotency key so that it can drop a copy (a retry after a
// timeout, for instance). The body is rendered once and sent byte for byte on every attempt.

export const WEBHOOK_SCHEMA_VERSION = 1;
export const WEBHOOK_EVENT = 'triage-runner.investigation.finished';
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
}

/** The body: incident, state, run result, summary, report text and its sha256. */
export function webhookDocument(input: RenderInput): Record<string, unknown> {
  const { summary } = input;
  return {
    schemaVersion: WEBHOOK_SCHEMA_VERSION,
    type: WEBHOOK_EVENT,
    idempotencyKey: input.idempotencyKey,
    trigger: input.trigger,
    ...(input.label ? { label: input.label } : {}),
    workspace: input.folder,
    incident: input.incident,
    state: {
      state: input.state.state,
      ...(input.state.reason !== undefined ? { reason: input.state.reason } : {}),
      attempts: input.state.attempts,
      ...(input.state.updatedAt !== undefined ? { updatedAt: input.state.updatedAt } : {}),
    },
    run: { id: input.runId, result: input.result ?? null },
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
  render: (input, sink) => ({ url: sink.url ?? '', body: JSON.stringify(webhookDocument(input)) }),
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
          [WEBHOOK_HEADERS.event]: WEBHOOK_EVENT,
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
