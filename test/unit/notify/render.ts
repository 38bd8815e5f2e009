// A RenderInput for unit tests of the renderers (what the notifier builds from a finished incident).
import { readFileSync } from 'node:fs';
import { summarize } from '../../../src/notify/summary.js';
import type { RenderInput } from '../../../src/notify/types.js';
import { FIXTURE_REPORT } from '../../support/notify.js';

export function renderInput(overrides: Partial<RenderInput> = {}): RenderInput {
  const report = overrides.report === undefined ? readFileSync(FIXTURE_REPORT, 'utf8') : overrides.report;
  return {
    workspaceDir: '/incidents/payments-crashloop',
    folder: 'payments-crashloop',
    incident: {
      incidentId: 'inc-42',
      cluster: 'prod-eu-1',
      namespace: 'payments',
      resource: { kind: 'Deployment', name: 'payments-api', namespace: 'payments' },
      faultType: 'CrashLoop',
      severity: 'critical',
      timestamp: '2026-03-01T10:02:00Z',
    },
    state: { state: 'succeeded', attempts: 1, runs: [{ id: 'run-1', status: 'succeeded' }] },
    runId: 'run-1',
    result: {
      status: 'succeeded',
      exitCode: 0,
      agent: 'claude',
      engine: 'docker',
      startedAt: '2026-03-01T10:15:00Z',
      finishedAt: '2026-03-01T10:19:12Z',
      durationMs: 252_000,
      tokens: { input: 12_345, output: 2_345 },
      costUsd: 0.42,
      report: { path: '/workspace/output/investigation.md', bytes: 100, missingSections: [] },
    },
    report,
    summary: summarize(report),
    trigger: 'finished',
    idempotencyKey: 'inc-42/run-1.oncall',
    ...overrides,
  };
}
