import type { Evidence } from '../workspace/run-record.js';

// The evidence verdict (result.json `evidence`) as Slack's mark; the words are src/evidence/summary.ts.

export const EVIDENCE_MARK: Record<Evidence['verdict'], string> = {
  grounded: '🟢',
  partial: '🟡',
  ungrounded: '🟠',
};
