import type { ClusterCallRecord } from '../../src/kubectl/broker/calls.js';

/** A kubectl call the guard let through, as cluster-calls.jsonl records it; `fields` change it. */
export const guardCall = (fields: Partial<ClusterCallRecord> = {}): ClusterCallRecord => ({
  at: '2026-11-23T10:00:00.000Z',
  tool: 'kubectl',
  by: 'guard',
  argv: ['get', 'pods'],
  normalized: 'get pods',
  category: 'read',
  decision: 'allowed',
  rule: 'include "kubectl @read"',
  exitCode: 0,
  durationMs: 4,
  stdoutBytes: 10,
  stderrBytes: 0,
  ...fields,
});
