import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../../src/status/format.js';
import type { IncidentView } from '../../../src/status/types.js';
import { emptyTotals } from '../../../src/status/view.js';
import type { Evidence } from '../../../src/workspace/run-record.js';
import { evidenceOf } from '../../support/evidence.js';

// `triage-runner status` as text: an answered incident's STATE says what its answer amounts to, so a
// run that could not reach its cluster or whose answer is ungrounded never reads "succeeded".

const evidence = (over: Partial<Evidence>): Evidence =>
  evidenceOf({ verdict: 'ungrounded', facts: 1, ...over });

function answered(folder: string, outcome: IncidentView['outcome'], ev: Evidence): IncidentView {
  return {
    folder,
    incidentId: `inc-${folder}`,
    state: 'succeeded',
    attempts: 1,
    agent: 'claude',
    durationMs: 60_000,
    tokens: { input: 1000, output: 100 },
    costUsd: 0.1,
    answer: `answer of ${folder}`,
    reportPath: null,
    reason: null,
    updatedAt: '2026-03-01T10:00:00.000Z',
    age: 5000,
    progress: null,
    resolvedAt: null,
    feedback: null,
    evidence: ev,
    outcome,
    subject: null,
    duplicateOf: null,
    measures: null,
  };
}

describe('status text', () => {
  it('shows an unreachable-cluster answer and an ungrounded one by what they amount to, never "succeeded"; totals count answers', () => {
    const views = [
      answered('unreachable', 'no-access', evidence({ clusterRead: false })),
      answered('ungrounded', 'unverified', evidence({ clusterRead: true })),
      answered('grounded', 'grounded', evidence({ verdict: 'grounded', clusterRead: true })),
    ];
    const totals = { ...emptyTotals(), succeeded: 3 };
    const text = formatStatus(views, totals, { cwd: '/' });
    const line = (folder: string) => text.split('\n').find((l) => l.startsWith(`${folder} `)) ?? '';
    expect(line('unreachable')).toMatch(/^unreachable\s+-\s+inc-unreachable\s+no cluster access\s/);
    expect(line('ungrounded')).toMatch(/^ungrounded\s+-\s+inc-ungrounded\s+not verified\s/);
    expect(line('grounded')).toMatch(/^grounded\s+-\s+inc-grounded\s+grounded\s/);
    expect(text).not.toContain('succeeded');
    expect(text).toContain('3 incidents: 3 answered');
  });
});
