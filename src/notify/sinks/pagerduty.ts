import type { Incident } from '../../workspace/incident.js';
import { DeliveryError, expectSuccess, parseJson, request } from '../delivery.js';
import { severityRank } from '../filters.js';
import {
  clipText,
  formatCost,
  formatDuration,
  outcomeOf,
  outcomeWords,
  resourceLabel,
  summaryText,
} from '../text.js';
import type { RenderInput, SendContext, SinkAdapter } from '../types.js';

// PagerDuty: an Events API v2 event (dedup_key per incident, so a re-send or a retry after a timeout
// updates the same alert instead of paging twice), and, when the incident came from a PagerDuty
// webhook, a note on that PagerDuty incident through the REST API.

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com';
/** PagerDuty cuts payload.summary at 1,024 characters. */
export const PAGERDUTY_SUMMARY_CHARS = 1024;
/** Notes are kept well below PagerDuty's note size limit. */
const NOTE_CHARS = 4000;

export interface PagerDutyPayload {
  [key: string]: unknown;
  /** The event without routing_key (added at send time from secrets:); absent when only a note is added. */
  event?: Record<string, unknown>;
  note?: { incidentId: string; content: string };
}

/**
 * The PagerDuty incident an incident came from: incident.json carries
 * `source: {type: "pagerduty", incidentId: "<PagerDuty incident id>"}` when the PagerDuty intake made it.
 */
export function pagerDutySource(incident: Incident): string | undefined {
  const source = incident.source as { type?: unknown; incidentId?: unknown } | undefined;
  if (!source || typeof source !== 'object' || source.type !== 'pagerduty') return undefined;
  const id = source.incidentId;
  return typeof id === 'string' && /^[A-Za-z0-9]{1,64}$/.test(id) ? id : undefined;
}

/** critical | error | warning | info from the incident's severity (unknown: warning). */
export function pagerDutySeverity(severity: string): 'critical' | 'error' | 'warning' | 'info' {
  const rank = severityRank(severity);
  if (rank === undefined) return 'warning';
  return rank >= 4 ? 'critical' : rank === 3 ? 'error' : rank === 2 ? 'warning' : 'info';
}

export const dedupKey = (incidentId: string): string => clipText(`triage-runner/${incidentId}`, 255);

const noteMarker = (key: string) => `triage-runner delivery ${key}`;

function eventOf(input: RenderInput): Record<string, unknown> {
  const { incident, result, summary } = input;
  const timestamp = Date.parse(incident.timestamp);
  return {
    // Alerts that resolved before the run close the PagerDuty alert of the incident, if one is open.
    event_action: input.state.state === 'resolved' ? 'resolve' : 'trigger',
    dedup_key: dedupKey(incident.incidentId),
    client: 'triage-runner',
    ...(input.statusUrl ? { client_url: input.statusUrl } : {}),
    payload: {
      summary: clipText(summaryText(input), PAGERDUTY_SUMMARY_CHARS),
      source: clipText(incident.cluster || 'unknown cluster', 255),
      severity: pagerDutySeverity(incident.severity),
      ...(Number.isNaN(timestamp) ? {} : { timestamp: new Date(timestamp).toISOString() }),
      component: clipText(resourceLabel(input), 255),
      group: clipText(incident.resource.namespace ?? incident.namespace, 255),
      class: clipText(incident.faultType, 255),
      custom_details: {
        incident_id: incident.incidentId,
        ...(input.runId ? { run_id: input.runId } : {}),
        workspace: input.folder,
        // What happened in words ("no cluster access", "not verified"), never "succeeded".
        outcome: outcomeWords(outcomeOf(input)).short,
        ...(input.state.reason ? { reason: input.state.reason } : {}),
        ...(summary.hypothesis ? { hypothesis: summary.hypothesis } : {}),
        ...(summary.confidence ? { confidence: summary.confidence } : {}),
        ...(summary.firstAction ? { first_action: summary.firstAction } : {}),
        ...(summary.answer ? { answer: summary.answer } : {}),
        ...(result?.evidence
          ? { evidence: result.evidence.verdict, evidence_gaps: result.evidence.gaps }
          : {}),
        ...(result
          ? {
              agent: result.agent,
              duration: formatDuration(result.durationMs),
              cost: formatCost(result.costUsd),
              tokens: result.tokens,
            }
          : {}),
        ...(input.reportSha256 ? { report_sha256: input.reportSha256 } : {}),
        trigger: input.trigger,
      },
    },
    ...(input.statusUrl ? { links: [{ href: input.statusUrl, text: 'triage-runner status page' }] } : {}),
  };
}

export const pagerduty: SinkAdapter<PagerDutyPayload> = {
  type: 'pagerduty',
  render(input, sink) {
    const source = sink.notes ? pagerDutySource(input.incident) : undefined;
    const resolved =
      input.trigger === 'resolved'
        ? `Every alert behind this incident resolved at ${input.resolvedAt}.\n`
        : '';
    const content = `${clipText(`${resolved}${summaryText(input)}`, NOTE_CHARS - 200)}\n\n(${noteMarker(input.idempotencyKey)})`;
    const note = source ? { note: { incidentId: source, content } } : {};
    // A retry or a resolution adds a note to the PagerDuty incident the first delivery already noted;
    // an event then could open a new incident if responders resolved that one. A resolution without a
    // note to add sends nothing.
    if (input.followUp && (source || input.trigger === 'resolved')) return note;
    return { event: eventOf(input), ...note };
  },
  steps: (payload) => [...(payload.event ? ['event'] : []), ...(payload.note ? ['note'] : [])],
  async send(ctx, step) {
    if (step === 'event') return sendEvent(ctx);
    const note = ctx.payload.note;
    const notes = ctx.sink.notes;
    if (!note || !notes || !ctx.credentials.notesSecret)
      throw new DeliveryError('a PagerDuty note needs notes.secret and notes.from', 'permanent');
    const answer = await request(
      ctx.fetch,
      'the PagerDuty REST API',
      notesUrl(notes.api_url, note.incidentId),
      {
        headers: restHeaders(ctx.credentials.notesSecret, notes.from),
        body: JSON.stringify({ note: { content: note.content } }),
      },
      ctx.timeoutMs,
    );
    expectSuccess('the PagerDuty REST API', answer, ctx.now());
    const id = (parseJson(answer.body) as { note?: { id?: unknown } } | undefined)?.note?.id;
    return { status: answer.status, ...(typeof id === 'string' ? { noteId: id } : {}) };
  },
  async reconcile(ctx, step) {
    // Events are deduplicated by dedup_key: sending again is harmless. Notes are looked up by their marker.
    const note = ctx.payload.note;
    const notes = ctx.sink.notes;
    if (step !== 'note' || !note || !notes || !ctx.credentials.notesSecret) return undefined;
    const answer = await request(
      ctx.fetch,
      'the PagerDuty REST API',
      notesUrl(notes.api_url, note.incidentId),
      { method: 'GET', headers: restHeaders(ctx.credentials.notesSecret, notes.from) },
      ctx.timeoutMs,
    );
    if (answer.status < 200 || answer.status >= 300) return undefined;
    const list = (parseJson(answer.body) as { notes?: { id?: unknown; content?: unknown }[] } | undefined)
      ?.notes;
    const marker = noteMarker(ctx.entry.idempotencyKey);
    const found = list?.find((n) => typeof n.content === 'string' && n.content.includes(marker));
    return found
      ? { status: 201, reconciled: true, ...(typeof found.id === 'string' ? { noteId: found.id } : {}) }
      : undefined;
  },
};

async function sendEvent(ctx: SendContext<PagerDutyPayload>) {
  const base = (ctx.sink.api_url ?? PAGERDUTY_EVENTS_URL).replace(/\/+$/, '');
  const answer = await request(
    ctx.fetch,
    'the PagerDuty Events API',
    `${base}/v2/enqueue`,
    {
      headers: { 'content-type': 'application/json', 'user-agent': 'triage-runner' },
      body: JSON.stringify({ routing_key: ctx.credentials.secret, ...ctx.payload.event }),
    },
    ctx.timeoutMs,
  );
  expectSuccess('the PagerDuty Events API', answer, ctx.now());
  const key = (parseJson(answer.body) as { dedup_key?: unknown } | undefined)?.dedup_key;
  return { status: answer.status, ...(typeof key === 'string' ? { dedupKey: key } : {}) };
}

const notesUrl = (base: string, incidentId: string) =>
  `${base.replace(/\/+$/, '')}/incidents/${encodeURIComponent(incidentId)}/notes`;

const restHeaders = (token: string, from: string) => ({
  accept: 'application/vnd.pagerduty+json;version=2',
  'content-type': 'application/json',
  authorization: `Token token=${token}`,
  from,
  'user-agent': 'triage-runner',
});
