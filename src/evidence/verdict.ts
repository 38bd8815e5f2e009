import type { Evidence } from '../workspace/run-record.js';
import type { Judged } from './judge.js';

// The verdict from the judged claims and what the run could see. Grounded only when the headline and
// the chain behind it hold against the cluster output, and nothing else the report claims is
// unsupported or contradicted. Ungrounded when the access check found the cluster unreachable, when no
// read that needs the cluster (its API server or its Prometheus) succeeded, when the headline is contradicted, when the report cites
// nothing, or when no claim holds. Partial otherwise.

export interface VerdictInput {
  headline: Judged;
  /** Every claim, the headline included. */
  claims: Judged[];
  /** The access check found the cluster unreachable when the run started. */
  unreachable?: string;
  /** A read that needs the cluster (its API server, or an answer of its Prometheus) succeeded. */
  serverRead: boolean;
  /** Calls succeeded, none of which needs the API server (`kubectl version --client`). */
  onlyLocalReads: boolean;
  /** The report cites something: a command, a quote, a source. */
  cites: boolean;
  /** Commands the report says it ran that no recorded call matches. */
  citedNotRun: number;
}

export interface VerdictOutcome {
  verdict: Evidence['verdict'];
  reason: string;
}

const holds = (j: Judged) => j.status === 'supported';
/** Outside the chain, a claim that cannot be checked or rests on the alert is said so, not held against it. */
const tolerated = (j: Judged) =>
  j.status === 'supported' || j.status === 'alert' || (!j.chain && j.status === 'unchecked');

export function decideVerdict(input: VerdictInput): VerdictOutcome {
  if (input.unreachable)
    return {
      verdict: 'ungrounded',
      reason: `no cluster access: the access check found it unreachable (${input.unreachable})`,
    };
  if (!input.serverRead)
    return {
      verdict: 'ungrounded',
      reason: input.onlyLocalReads
        ? 'no cluster access: only calls that need no API server succeeded (kubectl version --client, config)'
        : 'no cluster access: no cluster read succeeded during the run',
    };
  if (input.headline.status === 'contradicted')
    return {
      verdict: 'ungrounded',
      reason: `the headline is contradicted by the cluster: ${input.headline.why}`,
    };
  if (!input.cites)
    return { verdict: 'ungrounded', reason: 'the report cites no command, no output and no source' };
  const failing = input.claims.filter((j) => !tolerated(j));
  if (holds(input.headline) && failing.length === 0 && input.citedNotRun === 0)
    return {
      verdict: 'grounded',
      reason: 'the headline and the chain behind it hold against the cluster output they cite',
    };
  if (!input.claims.some(holds))
    return { verdict: 'ungrounded', reason: 'no claim of the report holds against the cluster output' };
  const first = failing[0];
  const reason = !holds(input.headline)
    ? `the headline is ${input.headline.status}: ${input.headline.why}`
    : first
      ? `${first.id ?? first.kind} is ${first.status}: ${first.why}`
      : `${input.citedNotRun} cited command${input.citedNotRun === 1 ? '' : 's'} never ran`;
  return { verdict: 'partial', reason };
}
