// Recorded cluster calls and their outputs, as the broker writes them, for tests of the evidence check.
import type { Evidence } from '../../src/workspace/run-record.js';
import type { ClusterCallRecord } from '../../src/kubectl/broker/calls.js';
import type { CallOutputRecord } from '../../src/kubectl/broker/outputs.js';
import { classifyKubectl } from '../../src/kubectl/policy/classify.js';

export interface RecordedCall {
  argv: string[];
  exitCode?: number;
  refused?: string;
  stdout?: string;
  stderr?: string;
  by?: ClusterCallRecord['by'];
}

/** cluster-calls.jsonl records and cluster-outputs.jsonl lines for `calls`, numbered from 1. */
export function recorded(calls: RecordedCall[]): { calls: ClusterCallRecord[]; outputs: CallOutputRecord[] } {
  const records: ClusterCallRecord[] = [];
  const outputs: CallOutputRecord[] = [];
  calls.forEach((c, i) => {
    const command = classifyKubectl(c.argv);
    const call = i + 1;
    const exitCode = c.refused ? 1 : (c.exitCode ?? 0);
    records.push({
      at: '2026-11-26T09:00:00.000Z',
      tool: 'kubectl',
      by: c.by ?? 'guard',
      argv: c.argv,
      normalized: command.normalized,
      category: command.category,
      decision: c.refused ? 'refused' : 'allowed',
      rule: c.refused ?? 'include "kubectl @read"',
      exitCode,
      durationMs: 5,
      stdoutBytes: Buffer.byteLength(c.stdout ?? ''),
      stderrBytes: Buffer.byteLength(c.stderr ?? ''),
      call,
    });
    if (!c.refused)
      outputs.push({
        call,
        by: c.by ?? 'guard',
        normalized: command.normalized,
        exitCode,
        stdout: c.stdout ?? '',
        stderr: c.stderr ?? '',
      });
  });
  return { calls: records, outputs };
}

/** A report in the k8s4agents shape citing a describe, a log line and a fact sourced from `get pods`. */
export const CITING_REPORT = `# Kubernetes Incident Triage Report

## 0. Executive Triage Card

### Primary Hypothesis
The api container exits at start-up with exit code 1 [INF-1] — Confidence: High

### Top 3 Recommended Actions

| Priority | Action | Expected Outcome | Risk |
|---|---|---|---|
| 1 | \`kubectl -n shop rollout undo deployment/api\` | pods start | Low |

## 2. Assessment & Findings

### Observed Facts
- **[FACT-1]** api-7d9f-x2k9q restarted 14 times — Source: \`kubectl get pods -n shop\`
- **[FACT-2]** The container exits with exit code 1 — Source: \`kubectl describe pod api-7d9f-x2k9q -n shop\`

### Derived Inferences
- **[INF-1]** The container fails at start-up — Confidence: High
  - Based on: FACT-1, FACT-2

## 3. Root Cause Analysis

### H1: Missing variable — Confidence: High

**Falsification Test**:
- Command: \`kubectl get secret api-env -n shop -o yaml\`

## 4. Remediation Plan

\`\`\`bash
kubectl -n shop rollout undo deployment/api
\`\`\`

## 5. Proof of Work

### Commands Executed

\`\`\`bash
kubectl get pods -n shop
kubectl describe pod api-7d9f-x2k9q -n shop | grep -A3 State
kubectl logs api-7d9f-x2k9q -n shop --previous
\`\`\`

## 6. Supporting Evidence

### Log Excerpts

\`\`\`
panic:   missing environment variable DATABASE_URL
\`\`\`
`;

/** An evidence record with empty lists, for tests of what reads one. */
export const evidenceOf = (fields: Partial<Evidence> & Pick<Evidence, 'verdict'>): Evidence => ({
  facts: 0,
  verified: 0,
  unverified: [],
  citedNotRun: [],
  excerptsNotFound: [],
  gaps: [],
  ...fields,
});
