import { readState } from '../../workspace/state.js';
import { runStage } from '../../incident/queries.js';

// What HTTP intake asks of the incident lifecycle, which it does not own: whether an incident has
// started, and telling it that every alert behind an incident has resolved. The daemon implements
// this (it applies a Resolved event through its state machine); readOnlyHooks below only reads.

/** Where an incident is, as far as intake cares: not yet started, running, or done. */
export type IntakeState = 'pending' | 'running' | 'final';

export interface IntakeHooks {
  /**
   * Every alert behind the incident at `workspaceDir` resolved at `at` (ISO-8601). Not started yet:
   * it must not run (a final state saying so). Running: it continues, and its record notes `at`.
   * Called once per resolution; must be idempotent.
   */
  resolved(workspaceDir: string, at: string): Promise<void>;
  /** Undefined while the daemon has not seen the folder yet (it will, as pending). */
  stateOf(workspaceDir: string): Promise<IntakeState | undefined>;
}

/** Reads `.triage/state.json` through the state module. */
export async function stateFromFile(workspaceDir: string): Promise<IntakeState | undefined> {
  const state = await readState(workspaceDir);
  return state ? runStage(state.state) : undefined;
}

/**
 * Hooks for a daemon whose lifecycle has no Resolved event yet: states are read from disk, and a
 * resolution is only recorded in alerts.json (by the store) and reported to `onResolved`.
 */
export function readOnlyHooks(
  onResolved: (workspaceDir: string, at: string) => void = () => undefined,
): IntakeHooks {
  return {
    resolved: async (workspaceDir, at) => onResolved(workspaceDir, at),
    stateOf: stateFromFile,
  };
}
