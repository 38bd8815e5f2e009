import path from 'node:path';
import { isAllowed } from '../incident/machine.js';
import { hasVerdict, inEngine, runStage } from '../incident/queries.js';
import type { IncidentStore } from '../incident/store.js';
import type { StateFile } from '../workspace/state.js';
import { alertsResolvedAt } from '../workspace/alerts.js';
import { dedupKey, type DedupStore } from '../intake/dedup.js';
import { acquireLease, type LeaseIdentity, type LeaseOptions } from '../workspace/lease.js';
import { readWorkspace } from '../workspace/incident.js';
import type { IntakeHooks } from '../intake/webhooks/hooks.js';
import type { Logger } from '../log/logger.js';
import { waitFor } from '../util/backoff.js';
import { errorMessage } from '../util/errors.js';

// What HTTP intake asks of the lifecycle: the state of an incident, and "every alert behind it
// resolved". A resolution is the Resolved event: an incident that has not started ends `resolved` and
// never runs (it leaves the queue, and frees its dedup key so that the alert firing again is a new
// incident); one that is running goes on, its record noting when.

export interface AlertHooksDeps {
  store: IncidentStore;
  dedup: DedupStore;
  identity: LeaseIdentity;
  lease: LeaseOptions;
  maxIncidentBytes: number;
  log: Logger;
  /** A run of this folder is in progress in this daemon (it holds the lease). */
  isActive: (dir: string) => boolean;
  /** Takes the folder out of the run queue (it will not run). */
  dequeue: (dir: string) => void;
  /** Every alert behind an incident whose run already finished resolved (its sinks are told so). */
  resolvedAfterRun?: (dir: string, at: string) => void;
}

/** Tries at the lease while a brief holder (an inspection) has it, for up to LEASE_WAIT_MS. */
const LEASE_POLL_MS = 100;
const LEASE_WAIT_MS = 2_000;

/**
 * Checked by a run slot holding the lease, before it claims a queued incident: every alert behind it
 * resolved (alerts.json says so: a resolution the intake could not apply at the time, another replica's,
 * one from before a restart), and no resolution was applied to it before (a retry after one runs), so
 * it ends `resolved` instead of running. True when it did.
 */
export function resolvedBeforeRun(
  deps: Pick<AlertHooksDeps, 'store' | 'dedup' | 'maxIncidentBytes' | 'dequeue'>,
): (dir: string, state: StateFile) => Promise<boolean> {
  const apply = resolveNotStarted(deps);
  return async (dir, state) => {
    if (state.resolvedAt) return false;
    const at = await alertsResolvedAt(dir);
    if (!at) return false;
    await apply(dir, at);
    return true;
  };
}

/** The Resolved event for an incident that has not run; it leaves the queue and frees its dedup key. */
function resolveNotStarted(deps: Pick<AlertHooksDeps, 'store' | 'dedup' | 'maxIncidentBytes' | 'dequeue'>) {
  return async (dir: string, at: string) => {
    const read = await readWorkspace(dir, { maxBytes: deps.maxIncidentBytes });
    const incident = read.kind === 'ok' ? read.workspace.incident : undefined;
    const reason = `every alert behind this incident resolved at ${at}, before the investigation started: not run (to run it anyway: \`triage-runner retry ${path.basename(dir)}\`, or save incident.json again)`;
    const applied = await deps.store.apply(dir, {
      type: 'Resolved',
      at,
      reason,
      ...(incident ? { incidentId: incident.incidentId } : {}),
      ...(read.kind === 'ok' ? { sha256: read.sha256 } : {}),
    });
    // A run in progress goes on (its record notes when): nothing to dequeue or release.
    if (inEngine(applied.record.state)) return;
    deps.dequeue(dir);
    if (incident) await deps.dedup.release(dedupKey(incident), incident.incidentId);
  };
}

export function createAlertHooks(deps: AlertHooksDeps): IntakeHooks {
  const resolve = resolveNotStarted(deps);
  const apply = async (dir: string, at: string) => {
    const state = (await deps.store.read(dir))?.state;
    // Answered already: nothing is left to stop; whoever was told of the answer is told of this.
    if (state && hasVerdict(state)) return deps.resolvedAfterRun?.(dir, at);
    // Resolved already, or rejected: nothing is left to stop or to note.
    if (!isAllowed(state, 'Resolved')) return;
    await resolve(dir, at);
  };

  return {
    async resolved(dir, at) {
      const applied = await waitFor(
        async () => {
          // Our own run holds the lease: the store orders its events and this one.
          if (deps.isActive(dir)) {
            await apply(dir, at);
            return true;
          }
          const got = await acquireLease(dir, deps.identity, deps.lease);
          if (!got.acquired) return false;
          try {
            await apply(dir, at);
            return true;
          } finally {
            await got.lease.release();
          }
        },
        (done) => done,
        { waitMs: LEASE_WAIT_MS, delayMs: LEASE_POLL_MS, maxDelayMs: LEASE_POLL_MS },
      );
      if (applied) return;
      // Another replica runs it: its run goes on; the resolution is in alerts.json.
      deps.log.info(
        { workspace: path.basename(dir), at },
        'alert resolved while another replica holds the incident',
      );
    },
    async stateOf(dir) {
      try {
        const state = await deps.store.read(dir);
        return state ? runStage(state.state) : undefined;
      } catch (err) {
        deps.log.warn(
          { workspace: path.basename(dir), err: errorMessage(err) },
          'cannot read the incident state',
        );
        return undefined;
      }
    },
  };
}
