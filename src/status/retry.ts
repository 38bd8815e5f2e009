import path from 'node:path';
import { IllegalTransitionError } from '../incident/machine.js';
import type { IncidentStore } from '../incident/store.js';
import { RETRYABLE_STATES, retryRefusal } from '../incident/queries.js';
import type { IncidentState, StateFile } from '../workspace/state.js';
import {
  acquireLease,
  type AcquireResult,
  type LeaseIdentity,
  type LeaseOptions,
} from '../workspace/lease.js';
import { waitFor } from '../util/backoff.js';
import { unsafeWorkspace } from '../workspace/files.js';

// Retry in place: a failed, interrupted, rejected or resolved incident is queued again in its own folder, its
// runs and audit trail kept (the next run is a new attempt and a new run bundle). The event is applied
// through the store under the workspace lease, like every other change; the caller then has the daemon
// look at the folder (`daemon.reconsider`), or leaves it to the next start or rescan.

export type RetryOutcome =
  | { kind: 'queued'; record: StateFile; previousState: IncidentState }
  /** The incident cannot be retried in its state (or has none): exit 1, HTTP 409. */
  | { kind: 'refused'; state?: IncidentState; message: string }
  /** Someone holds the lease right now: try again shortly. */
  | { kind: 'busy'; holder?: string; message: string };

export interface RetryDeps {
  store: IncidentStore;
  identity: LeaseIdentity;
  lease: LeaseOptions;
  /** How long to keep trying for a lease someone holds briefly (the daemon looking at the folder). */
  waitMs?: number;
}

const LEASE_POLL_MS = 100;

const leaseWithin = (dir: string, deps: RetryDeps): Promise<AcquireResult> =>
  waitFor(
    () => acquireLease(dir, deps.identity, deps.lease),
    (got) => got.acquired,
    { waitMs: deps.waitMs ?? 0, delayMs: LEASE_POLL_MS, maxDelayMs: LEASE_POLL_MS },
  );

const RETRYABLE = [...RETRYABLE_STATES].sort().join(', ');

/** What to do instead, for a state that cannot be retried. */
function notRetryable(name: string, state: IncidentState): string {
  const why: Record<IncidentState, string> = {
    queued: 'it is already waiting to run',
    deferred: 'it is already waiting for room in the queue',
    preparing: 'its run is starting now',
    running: 'its run is in progress',
    succeeded: 'it finished; save a changed incident.json to investigate it again',
    failed: '',
    resolved: '',
    rejected: '',
    interrupted: '',
  };
  return `${name} is ${state}, which cannot be retried (${why[state]}); only ${RETRYABLE} incidents can be`;
}

/** Queues `dir`'s incident again when its state allows it; `by` is recorded in the audit event. */
export async function retryIncident(dir: string, by: string, deps: RetryDeps): Promise<RetryOutcome> {
  const name = path.basename(dir);
  const unsafe = await unsafeWorkspace(dir);
  if (unsafe) return { kind: 'refused', message: `${name} cannot be retried in place: ${unsafe}` };
  const got = await leaseWithin(dir, deps);
  if (!got.acquired) {
    const holder = got.holder?.holder;
    return {
      kind: 'busy',
      ...(holder ? { holder } : {}),
      message: `${name} is being worked on right now (its lease is held${holder ? ` by ${holder}` : ''}): try again in a few seconds`,
    };
  }
  try {
    const current = await deps.store.read(dir);
    if (!current)
      return {
        kind: 'refused',
        message: `${name} has no incident state (.triage/state.json): the daemon has not taken it in, so there is nothing to retry; start the daemon and it runs`,
      };
    const refused = retryRefusal(current);
    if (refused)
      return {
        kind: 'refused',
        state: current.state,
        message: refused.guard
          ? `${name} is ${current.state} but ${refused.guard}`
          : notRetryable(name, current.state),
      };
    const applied = await deps.store.apply(dir, { type: 'RetryRequested', by }, { current });
    return { kind: 'queued', record: applied.record, previousState: current.state };
  } catch (err) {
    if (err instanceof IllegalTransitionError)
      return {
        kind: 'refused',
        ...(err.from ? { state: err.from } : {}),
        message: `${name} changed meanwhile: ${err.message}`,
      };
    throw err;
  } finally {
    await got.lease.release();
  }
}
