import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { mapAlertmanager, parseAlertmanager } from '../../../src/intake/webhooks/alertmanager.js';
import { fieldsOf } from '../../../src/intake/webhooks/mapping.js';
import { groupingOptions } from '../../../src/server/routes/intake.js';

const registry = configSchema.parse({
  clusters: {
    'prod-eu-1': { kubeconfig: '/k/prod-eu-1', aliases: ['prod-eu', 'eks-prod-eu'] },
    staging: { kubeconfig: '/k/staging' },
  },
});

const crashLoop = (cluster: Record<string, string>) => ({
  labels: { alertname: 'KubePodCrashLooping', namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k', ...cluster },
  annotations: {},
});

describe('alert intake maps cluster labels through the registry aliases', () => {
  it('an alias label becomes its entry name, so alerts about one cluster group together', () => {
    const payload = parseAlertmanager({
      version: '4',
      status: 'firing',
      receiver: 'triage',
      groupKey: '{}:{}',
      alerts: [
        { status: 'firing', startsAt: '2026-11-22T01:00:00Z', ...crashLoop({ cluster: 'prod-eu' }) },
        { status: 'firing', startsAt: '2026-11-22T01:00:00Z', ...crashLoop({ k8s_cluster: 'eks-prod-eu' }) },
        { status: 'firing', startsAt: '2026-11-22T01:00:00Z', ...crashLoop({ cluster: 'prod-eu-1' }) },
      ],
    });
    if (!payload.ok) throw new Error(payload.message);
    const mapped = mapAlertmanager(payload.value, groupingOptions(registry));
    expect(mapped.map((m) => m.fields.cluster)).toEqual(['prod-eu-1', 'prod-eu-1', 'prod-eu-1']);
    expect(new Set(mapped.map((m) => m.groupKey)).size).toBe(1);
  });

  it('a value the registry does not know is kept, for routing to reject or send to default_cluster', () => {
    const { labels, annotations } = crashLoop({ cluster: 'prod-us-9' });
    expect(fieldsOf(labels, annotations, groupingOptions(registry)).cluster).toBe('prod-us-9');
  });

  it('without a registry the label is taken as it is', () => {
    const { labels, annotations } = crashLoop({ cluster: 'prod-eu' });
    expect(fieldsOf(labels, annotations, groupingOptions(configSchema.parse({}))).cluster).toBe('prod-eu');
  });
});
