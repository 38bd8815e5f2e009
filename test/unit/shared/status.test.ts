// The one status vocabulary (src/shared/status.ts): result.json, state.json's runs, the incident's
// `Finished` event, the adapters' reading of a CLI and the incident's states of a verdict all use its
// words, and a word means the same in each.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { AgentOutcome } from '../../../src/agents/types.js';
import { transition, type RunOutcome } from '../../../src/incident/machine.js';
import { hasVerdict, verdictOfRun } from '../../../src/incident/queries.js';
import {
  RUN_OUTCOME_STATUSES,
  VERDICTS,
  type AgentStatus,
  type RunOutcomeStatus,
  type RunStatus,
} from '../../../src/shared/status.js';
import { runResultSchema, type RunResult } from '../../../src/workspace/run-record.js';
import { INCIDENT_STATES, type StateFile } from '../../../src/workspace/state.js';
import { sampleRunResult } from '../../support/runs.js';
import { MACHINE_CTX, stateRecord } from '../../support/incident-machine.js';

const ctx = MACHINE_CTX;

const running = stateRecord('running');

describe('one status vocabulary', () => {
  it('every union is made from it (checked by the type checker)', () => {
    expectTypeOf<RunResult['status']>().toEqualTypeOf<RunOutcomeStatus>();
    expectTypeOf<RunOutcome['status']>().toEqualTypeOf<RunOutcomeStatus>();
    expectTypeOf<StateFile['runs'][number]['status']>().toEqualTypeOf<RunStatus>();
    expectTypeOf<AgentOutcome['status']>().toEqualTypeOf<AgentStatus>();
    expectTypeOf<Exclude<AgentStatus, 'turn_limit' | 'auth_failed'>>().toEqualTypeOf<
      Exclude<RunOutcomeStatus, 'interrupted'>
    >();
  });

  it("result.json's status is read for every run outcome status and refused for any other word", () => {
    for (const status of RUN_OUTCOME_STATUSES)
      expect(runResultSchema.safeParse(sampleRunResult({ status })).success).toBe(true);
    for (const status of ['running', 'turn_limit', 'answered', 'success'])
      expect({ status, read: runResultSchema.safeParse({ ...sampleRunResult(), status }).success }).toEqual({
        status,
        read: false,
      });
  });

  it('a verdict is an incident state by the same word, and a run that ends with it leaves its incident there', () => {
    for (const verdict of VERDICTS) {
      expect(INCIDENT_STATES).toContain(verdict);
      expect(hasVerdict(verdict)).toBe(true);
      const next = transition(
        running,
        {
          type: 'Finished',
          runId: 'r1',
          outcome: { status: verdict, exitCode: verdict === 'succeeded' ? 0 : 1 },
        },
        ctx,
      ).record;
      expect({ state: next.state, run: next.runs[0]?.status }).toEqual({ state: verdict, run: verdict });
    }
  });

  it('every way a run ends gives a replayed incident a verdict of the vocabulary: its own word when it is one', () => {
    expect(Object.fromEntries(RUN_OUTCOME_STATUSES.map((s) => [s, verdictOfRun(s)]))).toEqual({
      succeeded: 'succeeded',
      failed: 'failed',
      timed_out: 'failed',
      interrupted: 'failed',
    });
  });
});
