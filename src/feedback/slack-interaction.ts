import { createHmac, timingSafeEqual } from 'node:crypto';
import { FEEDBACK_VERDICTS, type FeedbackVerdict } from '../workspace/feedback.js';

// Feedback buttons on a Slack message come back as an interaction request: a form body with one
// `payload` field (JSON), signed with the app's signing secret. The signature covers
// `v0:<timestamp>:<body>` (HMAC-SHA256); a request older than five minutes is refused, so a captured
// request cannot be replayed later.

/** How far a request's timestamp may be from now. */
export const SLACK_SIGNATURE_WINDOW_S = 5 * 60;
/** `action_id` of a feedback button: the prefix, then the verdict; its `value` is the workspace folder. */
export const FEEDBACK_ACTION_PREFIX = 'triage_feedback_';

export type SignatureCheck = { ok: true } | { ok: false; message: string };

/** Checks `X-Slack-Signature` and `X-Slack-Request-Timestamp` against the exact body bytes. */
export function verifySlackSignature(
  secret: string,
  headers: { signature?: string | undefined; timestamp?: string | undefined },
  rawBody: Buffer | string,
  nowMs: number,
): SignatureCheck {
  const { signature, timestamp } = headers;
  if (!signature || !timestamp)
    return { ok: false, message: 'X-Slack-Signature and X-Slack-Request-Timestamp are required' };
  if (!/^\d{1,12}$/.test(timestamp))
    return { ok: false, message: 'X-Slack-Request-Timestamp is not a Unix time in seconds' };
  const age = Math.abs(nowMs / 1000 - Number(timestamp));
  if (age > SLACK_SIGNATURE_WINDOW_S)
    return {
      ok: false,
      message: `the request is ${Math.round(age)} s from this server's clock, over the ${SLACK_SIGNATURE_WINDOW_S} s window (replayed, or a clock is wrong)`,
    };
  const expected = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(rawBody).digest('hex')}`;
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b))
    return { ok: false, message: 'the signature does not match (check SLACK_SIGNING_SECRET)' };
  return { ok: true };
}

export interface FeedbackAction {
  folder: string;
  verdict: FeedbackVerdict;
  /** The Slack user who clicked, as `name (id)`. */
  by: string;
}

export type ParsedInteraction =
  | { kind: 'feedback'; action: FeedbackAction }
  | { kind: 'ignored'; why: string }
  | { kind: 'invalid'; message: string };

/** The feedback action in an interaction body (`payload=<json>`), if the click was a feedback button. */
export function parseSlackInteraction(rawBody: string): ParsedInteraction {
  const payloadText = new URLSearchParams(rawBody).get('payload');
  if (payloadText === null) return { kind: 'invalid', message: 'the form body has no payload field' };
  let payload: unknown;
  try {
    payload = JSON.parse(payloadText);
  } catch {
    return { kind: 'invalid', message: 'payload is not JSON' };
  }
  if (!payload || typeof payload !== 'object')
    return { kind: 'invalid', message: 'payload is not an object' };
  const p = payload as { type?: unknown; actions?: unknown; user?: unknown };
  if (p.type !== 'block_actions') return { kind: 'ignored', why: `interaction type ${String(p.type)}` };
  const actions = Array.isArray(p.actions) ? (p.actions as unknown[]) : [];
  for (const a of actions) {
    if (!a || typeof a !== 'object') continue;
    const { action_id: id, value } = a as { action_id?: unknown; value?: unknown };
    if (typeof id !== 'string' || !id.startsWith(FEEDBACK_ACTION_PREFIX)) continue;
    const verdict = id.slice(FEEDBACK_ACTION_PREFIX.length);
    if (!(FEEDBACK_VERDICTS as readonly string[]).includes(verdict))
      return { kind: 'invalid', message: `unknown feedback action ${id}` };
    if (typeof value !== 'string' || !value)
      return { kind: 'invalid', message: 'the button carries no incident' };
    const user = (p.user ?? {}) as { id?: unknown; username?: unknown; name?: unknown };
    const name = [user.username, user.name].find((v): v is string => typeof v === 'string') ?? 'someone';
    const by = typeof user.id === 'string' ? `slack:${name} (${user.id})` : `slack:${name}`;
    return { kind: 'feedback', action: { folder: value, verdict: verdict as FeedbackVerdict, by } };
  }
  return { kind: 'ignored', why: 'no feedback button in the interaction' };
}
