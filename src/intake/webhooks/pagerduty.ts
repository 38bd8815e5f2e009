import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from '../../shared/zod.js';
import { describeIssues } from '../../workspace/incident-schema.js';
import type { Parsed } from './alertmanager.js';
import { DEFAULT_FAULT_TYPES, lookup } from './fault-types.js';
import type { MappingOptions } from './mapping.js';
import type { MappedAlert } from './types.js';

// PagerDuty V3 webhooks: signature check (X-PagerDuty-Signature, HMAC-SHA256 of the raw body, one or
// more `v1=<hex>` separated by commas during a secret rotation) and incident events -> mapped alerts.

export type SignatureCheck = { ok: true } | { ok: false; message: string };

/** Checks the raw body against every v1 signature in the header; constant-time comparison. */
export function verifyPagerDutySignature(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
): SignatureCheck {
  if (!header)
    return {
      ok: false,
      message:
        'missing X-PagerDuty-Signature header: this endpoint takes PagerDuty V3 webhooks, signed with the subscription secret (PAGERDUTY_WEBHOOK_SECRET)',
    };
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const candidates = header
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('v1='))
    .map((s) => s.slice(3));
  if (candidates.length === 0)
    return {
      ok: false,
      message: 'X-PagerDuty-Signature holds no v1= signature: only version v1 (HMAC-SHA256) is understood',
    };
  const match = candidates.some((hex) => {
    if (!/^[0-9a-f]{64}$/i.test(hex)) return false;
    return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
  });
  return match
    ? { ok: true }
    : {
        ok: false,
        message: `none of the ${candidates.length} v1 signature(s) in X-PagerDuty-Signature matches the body signed with PAGERDUTY_WEBHOOK_SECRET: check that the secret is the one of this webhook subscription and that nothing between PagerDuty and this server rewrites the body`,
      };
}

const reference = z.looseObject({ id: z.string().optional(), summary: z.string().optional() });

const incidentData = z.looseObject({
  id: z.string().min(1),
  type: z.literal('incident'),
  html_url: z.string().optional(),
  number: z.number().optional(),
  status: z.string().optional(),
  incident_key: z.string().nullish(),
  created_at: z.string().optional(),
  title: z.string().optional(),
  service: reference.optional(),
  priority: reference.nullish(),
  urgency: z.string().optional(),
});

export const pagerDutyPayloadSchema = z.looseObject({
  event: z.looseObject({
    id: z.string().min(1),
    event_type: z.string().min(1),
    resource_type: z.string().optional(),
    occurred_at: z.string().optional(),
    data: z.unknown(),
  }),
});

export type PagerDutyPayload = z.infer<typeof pagerDutyPayloadSchema>;

/** Event types that start an investigation, and the one that ends it. */
const FIRING = new Set(['incident.triggered', 'incident.reopened']);
const RESOLVED = 'incident.resolved';

export function parsePagerDuty(body: unknown): Parsed<PagerDutyPayload> {
  const parsed = pagerDutyPayloadSchema.safeParse(body);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : {
        ok: false,
        message: `body is not a PagerDuty V3 webhook payload: ${describeIssues(parsed.error.issues)}`,
      };
}

/** PagerDuty priority P1/P2 or urgency -> severity. */
function severityOf(data: z.infer<typeof incidentData>): string {
  const priority = data.priority?.summary?.toUpperCase();
  if (priority === 'P1') return 'critical';
  if (priority === 'P2') return 'high';
  return data.urgency === 'high' ? 'high' : data.urgency === 'low' ? 'low' : 'warning';
}

/** An alertname named in the title ("[FIRING:1] KubePodCrashLooping …" from Alertmanager), if any. */
function alertnameIn(title: string, configured: Readonly<Record<string, string>>): string | undefined {
  return title
    .split(/[^A-Za-z0-9_]+/)
    .find(
      (word) => lookup(configured, word) !== undefined || lookup(DEFAULT_FAULT_TYPES, word) !== undefined,
    );
}

export type PagerDutyEvent =
  | { kind: 'alert'; alert: MappedAlert }
  /** A well-formed event that starts nothing (acknowledged, annotated, a ping…). */
  | { kind: 'ignored'; reason: string }
  | { kind: 'invalid'; message: string };

/** incident.triggered / incident.reopened -> a firing alert; incident.resolved -> a resolution. */
export function mapPagerDuty(payload: PagerDutyPayload, options: MappingOptions): PagerDutyEvent {
  const { event } = payload;
  const firing = FIRING.has(event.event_type);
  if (!firing && event.event_type !== RESOLVED)
    return {
      kind: 'ignored',
      reason: `event type ${event.event_type} does not start or end an investigation (incident.triggered, incident.reopened and incident.resolved do)`,
    };
  const data = incidentData.safeParse(event.data);
  if (!data.success)
    return {
      kind: 'invalid',
      message: `event.data of a ${event.event_type} event is not a PagerDuty incident: ${describeIssues(data.error.issues)}`,
    };
  const incident = data.data;
  const title = incident.title ?? `PagerDuty incident ${incident.id}`;
  const alertname = alertnameIn(title, options.faultTypes);
  const faultType = alertname
    ? (lookup(options.faultTypes, alertname) ?? lookup(DEFAULT_FAULT_TYPES, alertname) ?? alertname)
    : 'PagerDutyIncident';
  const service = incident.service?.summary ?? incident.service?.id ?? 'unknown-service';
  const resource = { kind: 'PagerDutyService', name: service };
  const at = event.occurred_at ?? incident.created_at ?? new Date(0).toISOString();
  const groupKey = `pagerduty:${incident.id}`;
  return {
    kind: 'alert',
    alert: {
      source: 'pagerduty',
      // Triggered and reopened are separate deliveries of one PagerDuty incident; a resolution finds
      // the incident by the PagerDuty incident id.
      key: firing ? `pagerduty:event:${event.id}` : `pagerduty:incident:${incident.id}`,
      ...(firing
        ? { aliasKey: `pagerduty:incident:${incident.id}` }
        : { resolutionKey: `pagerduty:event:${event.id}` }),
      status: firing ? 'firing' : 'resolved',
      startsAt: incident.created_at ?? at,
      ...(firing ? {} : { endsAt: at }),
      fields: {
        alertname: alertname ?? 'PagerDutyIncident',
        cluster: options.canonicalCluster?.(options.defaultCluster) ?? options.defaultCluster,
        namespace: 'default',
        resource,
        workload: resource,
        faultType,
        severity: severityOf(incident),
        summary: title,
      },
      groupKey,
      // PagerDuty groups alerts into incidents itself: each of its incidents stays its own.
      stormKey: groupKey,
      group: { pagerdutyIncident: incident.id },
      sourceRef: {
        type: 'pagerduty',
        id: incident.id,
        ...(incident.html_url ? { url: incident.html_url } : {}),
        ...(incident.incident_key ? { incidentKey: incident.incident_key } : {}),
        ...(incident.service?.id ? { serviceId: incident.service.id } : {}),
        eventId: event.id,
        eventType: event.event_type,
      },
      original: payload,
    },
  };
}
