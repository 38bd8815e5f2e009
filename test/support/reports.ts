// Reports as an agent writes them, for tests of the report checks.
import { DEFAULT_REPORT_SECTIONS } from '../../src/config/schema.js';

/** What the k8s4agents template puts under its sections (by position), kept short. */
const BODIES = [
  '| Field | Value |\n|-------|-------|\n| **Status** | 🔴 Active Incident |\n\n### Primary Hypothesis\nA bad config value crashes the container at start-up — Confidence: High\n\n⚠️ **Most Dangerous Assumption**: the crash started with the last rollout.',
  '### Symptoms\n- api-7d9f-x2k9q is in CrashLoopBackOff',
  '### Observed Facts\n- **[FACT-1]** api-7d9f-x2k9q restarted 14 times — Source: `kubectl get pods -n shop`\n\n### Derived Inferences\n- **[INF-1]** The container exits on start-up — Confidence: High\n  - Based on: FACT-1',
  '### H1: Bad config value — Confidence: High\n\n**Falsification Test**:\n- Command: `kubectl logs api-7d9f-x2k9q -n shop --previous`\n- Expected if TRUE: a parse error',
  '### Immediate Mitigation\n| Step | Action | Validation | Rollback |\n|---|---|---|---|\n| 1 | Fix the value | pods Ready | revert |',
  '### Commands Executed\n\n```bash\nkubectl get pods -n shop\n```',
  '### Log Excerpts\n\n<details>\n<summary>Pod logs</summary>\n\n```\nparse error\n```\n\n</details>',
];

/** A report following the default template: its title, the seven headings in order, labelled facts and inferences. */
export function templateReport(sections: readonly string[] = DEFAULT_REPORT_SECTIONS): string {
  return `${[
    '# Kubernetes Incident Triage Report',
    ...sections.map((s, i) => `## ${s}\n\n${BODIES[i] ?? 'Not available: test report.'}`),
  ].join('\n\n')}\n`;
}
