import { createHash } from 'node:crypto';
import { z } from '../../shared/zod.js';
import { describeIssues } from '../../workspace/incident-schema.js';
import { fieldsOf, groupOf, type MappingOptions } from './mapping.js';
import type { MappedAlert } from './types.js';

// Alertmanager's webhook payload (version 4) -> mapped alerts, one per alert in the notification.

const labelSet = z.record(z.string(), z.string());

const alertSchema = z.looseObject({
  status: z.enum(['firing', 'resolved']),
  labels: labelSet,
  annotations: labelSet.default({}),
  startsAt: z.string().min(1, 'must be a timestamp'),
  endsAt: z.string().optional(),
  generatorURL: z.string().optional(),
  fingerprint: z.string().optional(),
});

export const alertmanagerPayloadSchema = z.looseObject({
  version: z.string().optional(),
  groupKey: z.string().optional(),
  status: z.enum(['firing', 'resolved']).optional(),
  receiver: z.string().optional(),
  externalURL: z.string().optional(),
  alerts: z.array(alertSchema).min(1, 'must hold at least one alert'),
});

export type AlertmanagerPayload = z.infer<typeof alertmanagerPayloadSchema>;

export interface GroupingOptions extends MappingOptions {
  groupBy: readonly string[];
  stormBy: readonly string[];
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** Validates a webhook body, saying which fields are wrong. */
export function parseAlertmanager(body: unknown): Parsed<AlertmanagerPayload> {
  const parsed = alertmanagerPayloadSchema.safeParse(body);
  if (parsed.success) {
    if (parsed.data.version !== undefined && parsed.data.version !== '4')
      return {
        ok: false,
        message: `Alertmanager webhook payload version ${JSON.stringify(parsed.data.version)} is not supported: this endpoint takes version "4" (Alertmanager 0.x webhook_configs)`,
      };
    return { ok: true, value: parsed.data };
  }
  return {
    ok: false,
    message: `body is not an Alertmanager webhook payload (version 4): ${describeIssues(parsed.error.issues)}`,
  };
}

/** Alertmanager's fingerprint, or one computed the same way from the sorted labels when absent. */
function fingerprintOf(alert: z.infer<typeof alertSchema>): string {
  if (alert.fingerprint) return alert.fingerprint;
  const sorted = Object.keys(alert.labels)
    .sort()
    .map((k) => `${k}\u0000${alert.labels[k]}`)
    .join('\u0001');
  return createHash('sha256').update(sorted).digest('hex').slice(0, 16);
}

/** One mapped alert per alert of the notification, in order. */
export function mapAlertmanager(payload: AlertmanagerPayload, options: GroupingOptions): MappedAlert[] {
  return payload.alerts.map((alert) => {
    const fields = fieldsOf(alert.labels, alert.annotations, options);
    const group = groupOf(options.groupBy, fields, alert.labels);
    const storm = groupOf(options.stormBy, fields, alert.labels);
    const fingerprint = fingerprintOf(alert);
    const resolved = alert.status === 'resolved';
    return {
      source: 'alertmanager',
      // The firing key; a resolution finds its incident through it.
      key: `alertmanager:${fingerprint}:${alert.startsAt}`,
      status: alert.status,
      startsAt: alert.startsAt,
      ...(resolved && alert.endsAt ? { endsAt: alert.endsAt } : {}),
      fields,
      groupKey: `alertmanager:${group.key}`,
      stormKey: `alertmanager:${storm.key}`,
      group: group.values,
      sourceRef: {
        type: 'alertmanager',
        id: fingerprint,
        ...(alert.generatorURL ? { url: alert.generatorURL } : {}),
        ...(payload.externalURL ? { alertmanagerURL: payload.externalURL } : {}),
        ...(payload.receiver ? { receiver: payload.receiver } : {}),
      },
      original: alert,
    };
  });
}
