import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { acquireLease, type LeaseIdentity } from '../../src/intake/lease.js';
import { readState, writeState } from '../../src/intake/state.js';
import { sha256Hex } from '../../src/intake/read.js';
import { stateFromFile, type IntakeHooks } from '../../src/intake/webhooks/hooks.js';

// A stand-in for the daemon's side of IntakeHooks until its lifecycle has a Resolved event: under the
// workspace lease (as the daemon writes), an incident that has not started is recorded `rejected`
// with the resolution as reason (the daemon will use a final state of its own); a running one is
// left alone. Records every call.

export interface RecordingHooks extends IntakeHooks {
  readonly calls: { workspace: string; at: string; state: string | undefined; stopped: boolean }[];
}

export function stateFileHooks(identity: LeaseIdentity = { daemonId: 'intake-test' }): RecordingHooks {
  const calls: RecordingHooks['calls'] = [];
  return {
    calls,
    stateOf: stateFromFile,
    async resolved(dir, at) {
      for (let attempt = 0; attempt < 50; attempt++) {
        const got = await acquireLease(dir, identity, { ttlMs: 30_000 });
        if (!got.acquired) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        try {
          const state = await readState(dir);
          const started = state !== undefined && !['queued', 'deferred', 'interrupted'].includes(state.state);
          if (!started) {
            const bytes = await readFile(path.join(dir, 'incident.json'));
            await writeState(dir, state, {
              incidentId: state?.incidentId ?? path.basename(dir),
              state: 'rejected',
              attempts: state?.attempts ?? 0,
              reason: `alert resolved at ${at} before the investigation started`,
              updatedAt: new Date().toISOString(),
              runs: state?.runs ?? [],
              incidentSha256: sha256Hex(bytes),
            });
          }
          calls.push({ workspace: path.basename(dir), at, state: state?.state, stopped: !started });
          return;
        } finally {
          await got.lease.release();
        }
      }
      // Held the whole time by a run: it is running, and goes on.
      calls.push({ workspace: path.basename(dir), at, state: 'running', stopped: false });
    },
  };
}
