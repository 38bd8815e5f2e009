import type {
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebClient,
  Logger as SlackLogger,
  LogLevel,
} from '@slack/web-api';
import { DeliveryError, httpFailure, NOT_CONNECTED } from '../delivery.js';
import type { SendContext, SinkAdapter, StepResult } from '../types.js';
import {
  parentMessage,
  resolvedMessage,
  retryStartedMessage,
  runningMessage,
  threadMessages,
  type SlackMessage,
} from '../slack-blocks.js';

// Slack through the official Web API client: one parent message per incident, posted with
// chat.postMessage when its first run starts and updated in place (chat.update) as it moves on, then one
// threaded reply per report part. The client's own retries are off (the outbox keeps the schedule, across restarts)
// and a 429 is handed back with its Retry-After. Every message carries the delivery's idempotency key in
// its metadata, so a step whose outcome a crash left unknown is looked up before it is posted again.

export interface SlackPayload {
  [key: string]: unknown;
  channel: string;
  parent: SlackMessage;
  parts: SlackMessage[];
}

export const SLACK_EVENT_TYPE = 'triage_runner_delivery';
const PARENT = 'parent';
const partStep = (i: number) => `part-${i + 1}`;
const partIndex = (step: string) => Number(step.slice('part-'.length)) - 1;

/** Slack error codes worth trying again; every other `ok: false` answer is permanent. */
const RETRYABLE = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
  'team_added_to_org',
]);

/** Channel IDs (not #names) can be read back with conversations.history. */
const CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/;

export const slack: SinkAdapter<SlackPayload> = {
  type: 'slack',
  keepsOneMessage: true,
  render(input, sink) {
    const channel = sink.channel ?? '';
    // A run that starts posts (or, for a retry, updates) the parent; its outcome replaces it later.
    if (input.trigger === 'running')
      return {
        channel,
        parent: runningMessage(input),
        parts: input.followUp ? [retryStartedMessage(input)] : [],
      };
    const withThread = sink.thread_report !== false;
    // A resolution updates the parent and says so in the thread; the report is there already.
    // A rating only updates the parent.
    const parts =
      input.trigger === 'resolved'
        ? [resolvedMessage(input)]
        : input.trigger === 'feedback' || !withThread
          ? []
          : threadMessages(input);
    return { channel, parent: parentMessage(input, withThread), parts };
  },
  steps: (payload) => [PARENT, ...payload.parts.map((_, i) => partStep(i))],
  async send(ctx, step) {
    const client = await clientFor(ctx);
    const metadata = { event_type: SLACK_EVENT_TYPE, event_payload: { key: ctx.entry.idempotencyKey, step } };
    if (step === PARENT) {
      const { text, blocks } = ctx.payload.parent;
      const earlier = ctx.entry.parent;
      if (earlier) {
        // The incident already has its message here: it is updated in place, the thread keeps growing.
        const res = await call(() =>
          client.chat.update({ channel: earlier.channel, ts: earlier.ts, text, blocks, metadata }),
        );
        const updated: StepResult = {
          ts: String(res.ts ?? earlier.ts),
          channel: String(res.channel ?? earlier.channel),
          updated: true,
        };
        return updated;
      }
      const res = await call(() =>
        client.chat.postMessage({
          channel: ctx.payload.channel,
          text,
          blocks,
          metadata,
          unfurl_links: false,
          unfurl_media: false,
        }),
      );
      return { ts: String(res.ts), channel: String(res.channel) };
    }
    const part = ctx.payload.parts[partIndex(step)];
    const parent = ctx.results[PARENT];
    if (!part || !parent) throw new DeliveryError(`no ${step} in this delivery`, 'permanent');
    const res = await call(() =>
      client.chat.postMessage({
        channel: String(parent.channel),
        thread_ts: String(parent.ts),
        text: part.text,
        blocks: part.blocks,
        metadata,
        unfurl_links: false,
        unfurl_media: false,
      }),
    );
    return { ts: String(res.ts), channel: String(res.channel) };
  },
  async reconcile(ctx, step, startedAt) {
    const client = await clientFor(ctx);
    const mine = (m: { metadata?: { event_type?: string; event_payload?: Record<string, unknown> } }) =>
      m.metadata?.event_type === SLACK_EVENT_TYPE &&
      m.metadata.event_payload?.key === ctx.entry.idempotencyKey &&
      m.metadata.event_payload.step === step;
    try {
      if (step === PARENT) {
        if (!CHANNEL_ID.test(ctx.payload.channel)) return undefined;
        // From a minute before the send began (clock skew), newest first.
        const oldest = ((Date.parse(startedAt) - 60_000) / 1000).toFixed(6);
        const res = await call(() =>
          client.conversations.history({
            channel: ctx.payload.channel,
            oldest,
            limit: 200,
            include_all_metadata: true,
          }),
        );
        const found = res.messages?.find(mine);
        return found?.ts ? { ts: found.ts, channel: ctx.payload.channel, reconciled: true } : undefined;
      }
      const parent = ctx.results[PARENT];
      if (!parent) return undefined;
      const res = await call(() =>
        client.conversations.replies({
          channel: String(parent.channel),
          ts: String(parent.ts),
          limit: 1000,
          include_all_metadata: true,
        }),
      );
      const found = res.messages?.find(mine);
      return found?.ts ? { ts: found.ts, channel: String(parent.channel), reconciled: true } : undefined;
    } catch (err) {
      // Without history access (scope, membership) nothing can be told: the step is posted again.
      if (err instanceof DeliveryError && err.kind === 'permanent') return undefined;
      throw err;
    }
  },
};

/** The Web API client; @slack/web-api (and its dependencies) load on the first Slack delivery only. */
async function clientFor(ctx: SendContext<SlackPayload>): Promise<WebClient> {
  const { WebClient } = await import('@slack/web-api');
  return new WebClient(ctx.credentials.secret, {
    ...(ctx.sink.api_url ? { slackApiUrl: ctx.sink.api_url } : {}),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: ctx.timeoutMs,
    fetch: ctx.fetch,
    allowAbsoluteUrls: false,
    logger: quietLogger,
  });
}

/** Runs one Web API call and turns its failure into a DeliveryError that says whether to retry. */
async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw slackFailure(err);
  }
}

/** The Web API client's error, told apart by its documented `code` (the classes load lazily). */
function isSlackError<E>(err: unknown, code: string): err is E {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

export function slackFailure(err: unknown): DeliveryError {
  if (isSlackError<WebAPIRateLimitedError>(err, 'slack_webapi_rate_limited_error'))
    return new DeliveryError(
      `Slack is rate limiting; retrying after ${err.retryAfter} s (Retry-After)`,
      'retry',
      {
        status: 429,
        code: 'ratelimited',
        retryAfterMs: err.retryAfter * 1000,
      },
    );
  if (isSlackError<WebAPIPlatformError>(err, 'slack_webapi_platform_error')) {
    const code = err.data.error;
    const retry = RETRYABLE.has(code);
    return new DeliveryError(
      `Slack refused the message: ${code}${retry ? '; retrying' : `; not retried (${platformAdvice(code)})`}`,
      retry ? 'retry' : 'permanent',
      { status: 200, code, response: JSON.stringify(err.data) },
    );
  }
  if (isSlackError<WebAPIHTTPError>(err, 'slack_webapi_http_error')) {
    const body = typeof err.body === 'string' ? err.body : JSON.stringify(err.body ?? '');
    return httpFailure('Slack', err.statusCode, body, err.headers['retry-after'] ?? null, Date.now());
  }
  // A request error: network, timeout; unless no connection was made, the message may have been posted.
  const original = (err as { original?: Error }).original ?? (err as Error);
  const code = (original as { cause?: { code?: string } }).cause?.code ?? original.name;
  return new DeliveryError(`Slack could not be reached (${code}); retrying`, 'retry', {
    uncertain: !NOT_CONNECTED.has(code),
    code,
    cause: err,
  });
}

function platformAdvice(code: string): string {
  switch (code) {
    case 'channel_not_found':
    case 'not_in_channel':
      return 'invite the bot to the channel or fix channel';
    case 'invalid_auth':
    case 'not_authed':
    case 'token_revoked':
    case 'account_inactive':
      return 'the bot token in secrets: is not valid';
    case 'missing_scope':
      return 'the bot needs the chat:write scope';
    default:
      return 'see the response recorded in the outbox';
  }
}

/** The client logs through us only at error level (never the token: it sends it in a header). */
const quietLogger: SlackLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => 'error' as LogLevel,
  setName: () => undefined,
};
