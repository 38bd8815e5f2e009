import { hasAnswer } from '../incident/queries.js';
import { runDirRelative } from '../workspace/layout.js';
import { evidenceLine } from '../evidence/summary.js';
import { STANDING_WORDS, standingOf, type AnswerStanding, type StandingWords } from '../evidence/standing.js';
import { listWorkloads } from '../workspace/workloads.js';
import type { RenderInput } from './types.js';

// Wording shared by every sink: the headline, figures, what to do after a failure, the one-paragraph
// summary. Plain text; each sink escapes it for its own format.

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return 'n/a';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  return m > 0 ? `${m}m ${String(s).padStart(2, '0')}s` : `${s}s`;
}

export function formatCost(usd: number | undefined): string {
  if (usd === undefined || !Number.isFinite(usd)) return 'n/a';
  return usd < 0.01 && usd > 0 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export const formatTokens = (tokens: { input: number; output: number } | undefined): string =>
  tokens
    ? `${tokens.input.toLocaleString('en-US')} in · ${tokens.output.toLocaleString('en-US')} out`
    : 'n/a';

/** `Deployment payments/payments-api`. */
export function resourceLabel(input: RenderInput): string {
  const { resource, namespace } = input.incident;
  const ns = resource.namespace ?? namespace;
  return `${resource.kind} ${ns ? `${ns}/` : ''}${resource.name}`;
}

/** Most workloads a notification names; the rest are counted. */
export const NOTIFY_WORKLOADS = 20;

/** How many other workloads alerted into this incident (a storm's), 0 for one. */
const otherWorkloads = (input: RenderInput): number => Math.max(0, (input.workloads?.length ?? 0) - 1);

/** " and 5 other workloads" after the resource, for a storm's incident; '' for one workload. */
export function othersNote(input: RenderInput): string {
  const others = otherWorkloads(input);
  return others === 0 ? '' : ` and ${others} other workload${others === 1 ? '' : 's'}`;
}

/** Every workload of a storm's incident, one line (at most NOTIFY_WORKLOADS named); undefined for one. */
export const workloadsLine = (input: RenderInput): string | undefined =>
  otherWorkloads(input) > 0 && input.workloads ? listWorkloads(input.workloads, NOTIFY_WORKLOADS) : undefined;

/** The run answered (its report is the answer); otherwise the notification tells why it failed. */
export const succeeded = (input: RenderInput): boolean => hasAnswer(input.state.state);

/**
 * What happened, as every sink says it: an answered run by how far its answer holds (never
 * "succeeded"), a failed run, an incident rejected before any run, one resolved before its run.
 */
export type NotifyOutcome = AnswerStanding | 'failed' | 'rejected' | 'resolved';

const OTHER_WORDS: Readonly<Record<'failed' | 'rejected' | 'resolved', StandingWords>> = {
  failed: { short: 'failed', title: 'Investigation failed', mark: '🔴' },
  rejected: { short: 'rejected', title: 'Incident rejected, not investigated', mark: '🚫' },
  resolved: {
    short: 'resolved before the run',
    title: 'Alert resolved before the investigation',
    mark: '☑️',
  },
};

export function outcomeOf(input: Pick<RenderInput, 'state' | 'result'>): NotifyOutcome {
  const state = input.state.state;
  if (hasAnswer(state)) return standingOf(input.result);
  if (state === 'rejected' || state === 'resolved') return state;
  return 'failed';
}

export const outcomeWords = (outcome: NotifyOutcome): StandingWords =>
  outcome === 'failed' || outcome === 'rejected' || outcome === 'resolved'
    ? OTHER_WORDS[outcome]
    : STANDING_WORDS[outcome];

/** What kind of delivery this is, when not the daemon's own first one. */
export function triggerNote(input: RenderInput): string | undefined {
  if (input.label) return input.label;
  if (input.trigger === 'resend') return 're-sent';
  if (input.trigger === 'replay') return 'replay';
  if (input.trigger === 'compare') return 'compare';
  return undefined;
}

/** `Answer grounded in the cluster — CrashLoop on Deployment payments/payments-api (prod-eu-1)`. */
export function headline(input: RenderInput): string {
  const note = triggerNote(input);
  const resolved = input.resolvedAt && input.state.state !== 'resolved' ? 'Resolved · ' : '';
  const { title } = outcomeWords(outcomeOf(input));
  return `${note ? `[${note}] ` : ''}${resolved}${title} — ${input.incident.faultType} on ${resourceLabel(input)}${othersNote(input)} (${input.incident.cluster})`;
}

/** Why a failed run failed (or an incident was rejected or not run), as recorded. */
export const failureReason = (input: RenderInput): string =>
  input.state.reason ??
  (input.result ? `the run ended with status ${input.result.status}` : 'the run left no result');

/** The next step for a human after a failed run: which log to read, and the command that re-queues it. */
export function failureAdvice(input: RenderInput): string {
  const retry = `then re-queue it: \`triage-runner retry ${input.folder}\``;
  if (input.state.state === 'rejected')
    return `Nothing was investigated: fix what the reason names (for an alert, its cluster label or an entry under clusters:), ${retry}.`;
  const runDir = runDirRelative(input.runId);
  const result = input.result;
  if (!result)
    return `The run stopped before the agent produced a result: read the daemon log for this incident and ${runDir}/; ${retry}.`;
  if (result.status === 'timed_out')
    return `The agent ran out of time (agent.timeout): read ${runDir}/agent-stderr.log; ${retry} (raise agent.timeout if the cluster is slow to inspect).`;
  if (result.status === 'interrupted') return `The daemon stopped the agent while shutting down: ${retry}.`;
  if (result.report.bytes === 0)
    return `The agent wrote no report: read ${runDir}/agent-stdout.log and agent-stderr.log; ${retry}.`;
  return `Read ${runDir}/agent-stderr.log for the agent's error; ${retry}.`;
}

/** One paragraph for a human: headline, hypothesis and confidence, first action (or reason and advice). */
export function summaryText(input: RenderInput): string {
  const { summary } = input;
  const parts = [headline(input)];
  const workloads = workloadsLine(input);
  if (workloads) parts.push(`Workloads: ${workloads}`);
  if (!succeeded(input)) parts.push(`Reason: ${failureReason(input)}`);
  if (summary.hypothesis)
    parts.push(
      `Hypothesis: ${summary.hypothesis}${summary.confidence ? ` (confidence ${summary.confidence})` : ''}`,
    );
  if (summary.firstAction) parts.push(`First action: ${summary.firstAction}`);
  if (input.result?.evidence) parts.push(evidenceLine(input.result.evidence));
  // A resolution before the run needs nothing done: its reason says how to run it anyway.
  if (!succeeded(input) && input.state.state !== 'resolved')
    parts.push(`What to do: ${failureAdvice(input)}`);
  return `${parts.map((p) => p.replace(/[.\s]+$/u, '')).join('. ')}.`;
}

/** Cuts `text` to `max` characters (UTF-16 units, as Slack and PagerDuty count), ending with an ellipsis. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  // Never leave half of a surrogate pair.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
