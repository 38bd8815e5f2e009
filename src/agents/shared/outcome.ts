// What every adapter's parseOutput shares: the exit code passes through untouched, timeouts win,
// auth failures are recognised from the provider's words, and error lines are kept short.
import type { AgentOutcome, AgentRunOutput, AgentStatus } from '../types.js';

/** Longest error line kept in an outcome (the full output is in the run bundle). */
const MAX_ERROR_CHARS = 500;

const AUTH_PATTERNS: RegExp[] = [
  /\b401\b[^\n]{0,80}\bunauthori[sz]ed\b/i,
  /\bunauthori[sz]ed\b[^\n]{0,80}\b401\b/i,
  /\bstatus[":= ]{1,4}40[13]\b/i,
  /\bcode[":= ]{1,4}40[13]\b/i,
  /invalid[ _-]?(x-)?api[ _-]?key/i,
  /incorrect api key/i,
  /api key not valid/i,
  /authentication_error/i,
  /\bUNAUTHENTICATED\b/,
  /\bPERMISSION_DENIED\b/,
  /\bFix external API key\b/i,
];

/** True when `text` carries a provider's authentication failure (401/403, invalid API key). */
export function looksLikeAuthFailure(text: string): boolean {
  return AUTH_PATTERNS.some((p) => p.test(text));
}

/** One readable line from a possibly long, multi-line message. */
export function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_ERROR_CHARS ? `${flat.slice(0, MAX_ERROR_CHARS)}…` : flat;
}

/** The last non-empty line of `text` (for error context when no JSON explains the failure). */
export function lastLine(text: string): string {
  const tail = text.length > 64 * 1024 ? text.slice(-64 * 1024) : text;
  const lines = tail.split('\n').filter((l) => l.trim().length > 0);
  return oneLine(lines.at(-1) ?? '');
}

export interface OutcomeParts {
  status: AgentStatus;
  turns?: number;
  tokens?: { input: number; output: number };
  costUsd?: number;
  error?: string;
  /** The agent's final message (its answer), when the CLI reports one. */
  finalMessage?: string;
}

/**
 * Builds the outcome from what the adapter read. The exit code is copied as it was; a timeout
 * overrides the parsed status (the daemon stopped the agent), and a non-zero exit never reads as
 * success even when the CLI's JSON claims it.
 */
export function makeOutcome(cli: string, output: AgentRunOutput, parts: OutcomeParts): AgentOutcome {
  let { status, error } = parts;
  if (output.timedOut) {
    status = 'timed_out';
    error ??= `${cli} was stopped at the wall-clock timeout`;
  } else if (status === 'succeeded' && output.exitCode !== 0) {
    status = 'failed';
    const how =
      output.exitCode === null ? `signal ${output.signal ?? 'unknown'}` : `exit code ${output.exitCode}`;
    error ??= `${cli} ended with ${how} although its output reported success`;
  }
  const outcome: AgentOutcome = {
    status,
    exitCode: output.exitCode,
    tokens: parts.tokens ?? { input: 0, output: 0 },
  };
  if (parts.turns !== undefined) outcome.turns = parts.turns;
  if (parts.costUsd !== undefined) outcome.costUsd = parts.costUsd;
  if (parts.finalMessage) outcome.finalMessage = parts.finalMessage;
  if (status !== 'succeeded') {
    outcome.error = oneLine(error ?? `${cli} failed with exit code ${String(output.exitCode)}`);
  }
  return outcome;
}

/** The error line for output that could not be read at all. */
export function unreadable(cli: string, output: AgentRunOutput, what: string): string {
  const tail = lastLine(output.stderr) || lastLine(output.stdout);
  const size = output.stdout.length;
  return `${cli} printed no readable ${what} (${size} characters on stdout, exit code ${String(output.exitCode)})${
    tail ? `: ${tail}` : ''
  }; see the run's stdout/stderr logs`;
}
