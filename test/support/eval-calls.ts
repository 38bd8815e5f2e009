import type { KubectlCallRecord } from '../../src/eval/shim/log.js';

/** One call record of an eval run's kubectl-calls.jsonl: an agent's read the objects answered, unless `over` says otherwise. */
export const kubectlCall = (
  normalized: string,
  over: Partial<KubectlCallRecord> = {},
): KubectlCallRecord => ({
  at: '2026-03-14T02:10:00Z',
  stage: 'agent',
  argv: normalized.split(' '),
  normalized,
  category: 'read',
  exitCode: 0,
  answeredFrom: 'objects',
  durationMs: 40,
  stdoutBytes: 100,
  stderrBytes: 0,
  ...over,
});
