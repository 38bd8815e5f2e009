import path from 'node:path';
import { readState } from '../../src/workspace/state.js';
import type { IntakeHooks } from '../../src/intake/webhooks/hooks.js';

// Records every call HTTP intake makes to the daemon's real hooks (the Resolved event), with the state
// the incident was in before and whether the resolution stopped it from running.

export interface RecordingHooks extends IntakeHooks {
  readonly calls: { workspace: string; at: string; state: string | undefined; stopped: boolean }[];
}

export function recordingHooks(inner: IntakeHooks): RecordingHooks {
  const calls: RecordingHooks['calls'] = [];
  return {
    calls,
    stateOf: (dir) => inner.stateOf(dir),
    async resolved(dir, at) {
      const before = await readState(dir);
      await inner.resolved(dir, at);
      const after = await readState(dir);
      calls.push({
        workspace: path.basename(dir),
        at,
        state: before?.state,
        stopped: after?.state === 'resolved',
      });
    },
  };
}
