// The one vocabulary of how a run ends. Every status union of the daemon is made from these words: a
// run's end in result.json and in the incident's `Finished` event (`RunOutcomeStatus`), a run in state.json's
// runs (`RunStatus`), what an agent CLI's output says (`AgentStatus`), and the incident's states of a
// verdict (`INCIDENT_STATES` in workspace/state.ts holds `VERDICTS`). A word means the same wherever it
// appears; a new status is added here, once.

/** A run's verdict: it answered (`succeeded`) or it did not (`failed`). The incident's final states of a run. */
export const VERDICTS = ['succeeded', 'failed'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** How a run ended: a verdict, or stopped at `agent.timeout`, or stopped by the daemon's shutdown. */
export const RUN_OUTCOME_STATUSES = [...VERDICTS, 'timed_out', 'interrupted'] as const;
export type RunOutcomeStatus = (typeof RUN_OUTCOME_STATUSES)[number];

/** A run as state.json's `runs` lists it: still going, or how it ended. */
export type RunStatus = 'running' | RunOutcomeStatus;

/**
 * What an adapter reads from its CLI's output: a verdict or a timeout, or a failure the CLI names (it
 * ran out of turns, the provider refused its key). The daemon stops an agent, never the CLI itself, so
 * an agent is never `interrupted`.
 */
export type AgentStatus = Exclude<RunOutcomeStatus, 'interrupted'> | 'turn_limit' | 'auth_failed';
