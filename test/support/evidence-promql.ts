// Recorded promql calls for tests of the evidence check: each call's cluster-calls.jsonl record and
// cluster-outputs.jsonl line as the broker writes them, its stdout printed by the promql tool's own
// formatter and its exchange holding Prometheus's answer, at a fixed time.
import type { ClusterCallRecord } from '../../src/kubectl/broker/calls.js';
import type { CallOutputRecord } from '../../src/kubectl/broker/outputs.js';
import { parsePromql } from '../../src/prometheus/command.js';
import { formatQuery } from '../../src/prometheus/format.js';
import { headOf } from '../../src/prometheus/tool.js';
import type { QueryData } from '../../src/prometheus/types.js';

/** When the recorded promql calls were made. */
export const PROMQL_NOW = Date.parse('2026-11-26T09:00:00Z');

export interface PromqlCall {
  /** The words after `promql`. */
  argv: string[];
  /** What Prometheus answered; absent for a call that failed (`failure` is its stderr). */
  data?: QueryData;
  failure?: string;
}

/** The printed answer of a query or range call, as the promql tool prints it. */
export function promqlStdout(argv: string[], data: QueryData): string {
  const parsed = parsePromql(argv);
  if (!parsed.ok || 'help' in parsed) throw new Error(`not a promql call: ${argv.join(' ')}`);
  return formatQuery(headOf(parsed.command, PROMQL_NOW), data);
}

/** The records of `calls`, numbered from `first`. */
export function recordedPromql(
  calls: PromqlCall[],
  first: number,
): { calls: ClusterCallRecord[]; outputs: CallOutputRecord[] } {
  const records: ClusterCallRecord[] = [];
  const outputs: CallOutputRecord[] = [];
  calls.forEach((c, i) => {
    const parsed = parsePromql(c.argv);
    const call = first + i;
    const stdout = c.data ? promqlStdout(c.argv, c.data) : '';
    const stderr = c.failure ? `promql: ${c.failure}\n` : '';
    const exitCode = c.data ? 0 : 1;
    records.push({
      at: new Date(PROMQL_NOW).toISOString(),
      tool: 'prometheus',
      by: 'guard',
      argv: c.argv,
      normalized: parsed.normalized,
      category: 'read',
      decision: 'allowed',
      rule: 'include "metrics-read"',
      exitCode,
      durationMs: 5,
      stdoutBytes: Buffer.byteLength(stdout),
      stderrBytes: Buffer.byteLength(stderr),
      call,
    });
    outputs.push({
      call,
      by: 'guard',
      tool: 'prometheus',
      normalized: parsed.normalized,
      exitCode,
      stdout,
      stderr,
      ...(c.data
        ? {
            prometheus: {
              endpoint:
                parsed.ok && 'command' in parsed && parsed.command.kind === 'range' ? 'query_range' : 'query',
              params: [],
              httpStatus: 200,
              answer: { status: 'success', data: c.data },
            },
          }
        : {}),
    });
  });
  return { calls: records, outputs };
}
