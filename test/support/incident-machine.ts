import type { IncidentEvent, MachineContext } from '../../src/incident/machine.js';
import type { IncidentState, StateFile } from '../../src/workspace/state.js';

// What the incident machine's tests share: a fixed clock and retry policy, a record in any state, and
// one sample of every event.

/** A fixed clock, three attempts, no jitter. */
export const MACHINE_CTX: MachineContext = {
  now: Date.parse('2026-11-23T10:00:00.000Z'),
  policy: { max_attempts: 3, retry_base_delay: 1000, retry_max_delay: 60_000 },
  random: () => 1,
};

/** A record of incident inc-1 in `state`, at its first attempt with run r1 going on. */
export const stateRecord = (state: IncidentState, extra: Partial<StateFile> = {}): StateFile => ({
  incidentId: 'inc-1',
  state,
  attempts: 1,
  updatedAt: '2026-11-23T09:00:00.000Z',
  runs: [{ id: 'r1', status: 'running' }],
  incidentSha256: 'aaa',
  ...extra,
});

/** One event of every type, about inc-1 and its run r1 (a claim starts run r2). */
export const SAMPLE_EVENTS: Readonly<Record<IncidentEvent['type'], IncidentEvent>> = {
  Invalid: { type: 'Invalid', incidentId: 'inc-1', reason: 'bad', sha256: 'bbb' },
  Duplicate: { type: 'Duplicate', incidentId: 'inc-1', sha256: 'bbb', duplicateOf: 'inc-0', reason: 'dup' },
  QueueFull: { type: 'QueueFull', incidentId: 'inc-1', sha256: 'bbb', reason: 'full' },
  Validated: { type: 'Validated', incidentId: 'inc-1', sha256: 'bbb' },
  Claimed: { type: 'Claimed', runId: 'r2', holder: 'd:1' },
  Launched: { type: 'Launched', runId: 'r1', engine: 'docker', id: 'c1' },
  Progress: {
    type: 'Progress',
    runId: 'r1',
    progress: { turns: 2, tokens: { input: 10, output: 5 }, elapsedMs: 1000, updatedAt: 'x' },
  },
  Finished: { type: 'Finished', runId: 'r1', outcome: { status: 'succeeded', exitCode: 0 } },
  Gone: { type: 'Gone', runId: 'r1', reason: 'gone' },
  Interrupted: { type: 'Interrupted', runId: 'r1', reason: 'shutdown' },
  Adopted: { type: 'Adopted', runId: 'r1', holder: 'd:2', previousHolder: 'd:1' },
  RetryRequested: { type: 'RetryRequested', by: 'cli' },
  IncidentChanged: { type: 'IncidentChanged', incidentId: 'inc-1', sha256: 'ccc' },
  Resolved: { type: 'Resolved', at: '2026-11-23T09:59:00.000Z', reason: 'alert resolved' },
};
