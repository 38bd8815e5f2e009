import type { ClusterCallRecord } from '../kubectl/broker/calls.js';
import type { CallOutputRecord } from '../kubectl/broker/outputs.js';

// Why a recorded call did not give the agent what it asked for, in the words an on-call engineer uses:
// refused by a rule, denied by RBAC, not found, cluster unreachable, timed out.

export type CallFailure = 'RBAC denial' | 'not found' | 'cluster unreachable' | 'timed out' | 'failed';

const UNREACHABLE =
  /unable to connect to the server|connection refused|no such host|i\/o timeout|couldn't get current server api group list|dial tcp|tls handshake timeout|the server is currently unable|was refused - did you specify the right host/i;

/** What kind of failure an allowed call that did not exit 0 was, from its exit and its stderr. */
export function classifyFailure(call: ClusterCallRecord, output?: CallOutputRecord): CallFailure {
  if (call.timedOut) return 'timed out';
  const stderr = output?.stderr ?? '';
  if (/\(Forbidden\)|\bforbidden\b|cannot (?:get|list|watch)/i.test(stderr)) return 'RBAC denial';
  if (/\(NotFound\)|\bnot found\b/i.test(stderr)) return 'not found';
  if (UNREACHABLE.test(stderr)) return 'cluster unreachable';
  return 'failed';
}

/** The gap lines for the run's refused and failed calls, one per distinct command. */
export function callGaps(calls: ClusterCallRecord[], outputs: Map<number, CallOutputRecord>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const call of calls) {
    // A promql call is recorded as the agent typed it (`promql query up`); a kubectl call without its tool.
    const command = call.tool === 'prometheus' ? call.normalized : `${call.tool} ${call.normalized}`.trim();
    let line: string | undefined;
    if (call.decision === 'refused') line = `refused (${call.rule}): ${command}`;
    else if (call.exitCode !== 0) {
      const kind = classifyFailure(call, call.call === undefined ? undefined : outputs.get(call.call));
      const exit = call.exitCode === null ? 'killed' : `exit ${call.exitCode}`;
      // "failed (exit 1)", never "failed (failed, exit 1)", when nothing more is known of the failure.
      const why = kind === 'failed' ? exit : `${kind}, ${exit}`;
      line = `failed (${why}): ${command}${call.by === 'triage' ? ' [triage]' : ''}`;
    }
    if (line && !seen.has(line)) {
      seen.add(line);
      out.push(line);
    }
  }
  return out;
}
