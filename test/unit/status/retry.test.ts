// retryIncident directly: it re-queues what the machine allows and refuses the rest with the
// machine's reason, under the workspace lease.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { IncidentStore } from '../../../src/incident/store.js';
import { readState } from '../../../src/workspace/state.js';
import { acquireLease } from '../../../src/workspace/lease.js';
import { silentLogger } from '../../../src/log/logger.js';
import { retryIncident, type RetryDeps } from '../../../src/status/retry.js';
import { tempRoot } from '../../support/incidents.js';

const policy = { max_attempts: 3, retry_base_delay: 1000, retry_max_delay: 60_000 };
let root: { root: string; cleanup: () => Promise<void> };
let dir: string;
let deps: RetryDeps;

beforeEach(async () => {
  root = await tempRoot('triage-retry-');
  dir = path.join(root.root, 'inc-1');
  await mkdir(dir);
  const store = new IncidentStore({ audit: new AuditLog(), log: silentLogger(), policy });
  deps = { store, identity: { daemonId: 'cli' }, lease: { ttlMs: 30_000 } };
});
afterEach(() => root.cleanup());

async function to(...events: Parameters<IncidentStore['apply']>[1][]): Promise<void> {
  for (const event of events) await deps.store.apply(dir, event);
}
const validated = { type: 'Validated', incidentId: 'inc-1', sha256: 'a'.repeat(64) } as const;
const claimed = { type: 'Claimed', runId: 'r1', holder: 'd:1' } as const;

describe('retryIncident', () => {
  it('queues a failed incident again, a new series of attempts', async () => {
    await to(validated, claimed, {
      type: 'Finished',
      runId: 'r1',
      outcome: { status: 'failed', exitCode: 1 },
    });
    const out = await retryIncident(dir, 'cli', deps);
    expect(out).toMatchObject({
      kind: 'queued',
      previousState: 'failed',
      record: { state: 'queued', attemptBase: 1 },
    });
    expect((await readState(dir))?.state).toBe('queued');
  });

  it('refuses a state the machine does not retry, naming what can be', async () => {
    await to(validated, claimed, {
      type: 'Finished',
      runId: 'r1',
      outcome: { status: 'succeeded', exitCode: 0 },
    });
    expect(await retryIncident(dir, 'cli', deps)).toEqual({
      kind: 'refused',
      state: 'succeeded',
      message:
        'inc-1 is succeeded, which cannot be retried (it finished; save a changed incident.json to investigate it again); only failed, interrupted, rejected, resolved incidents can be',
    });
  });

  it("refuses an interrupted run that did not stop, with the machine's guard as the reason", async () => {
    await to(validated, claimed, { type: 'Interrupted', runId: 'r1', reason: 'x', unstopped: true });
    const out = await retryIncident(dir, 'cli', deps);
    expect(out).toMatchObject({ kind: 'refused', state: 'interrupted' });
    expect(out.kind === 'refused' && out.message).toBe(
      'inc-1 is interrupted but its last run did not stop at shutdown and may still be running: the next daemon start takes that run over; retry it if it then fails',
    );
    expect((await readState(dir))?.state).toBe('interrupted');
  });

  it('answers busy while another holder has the lease, and changes nothing', async () => {
    await to(validated, claimed, {
      type: 'Finished',
      runId: 'r1',
      outcome: { status: 'failed', exitCode: 1 },
    });
    const held = await acquireLease(dir, { daemonId: 'daemon', pid: process.pid }, { ttlMs: 30_000 });
    if (!held.acquired) throw new Error('lease not taken');
    const out = await retryIncident(dir, 'cli', {
      ...deps,
      identity: { daemonId: 'cli', pid: process.pid + 1 },
    });
    expect(out.kind).toBe('busy');
    expect((await readState(dir))?.state).toBe('failed');
    await held.lease.release();
  });

  it('refuses a folder the daemon has not taken in', async () => {
    expect(await retryIncident(dir, 'cli', deps)).toMatchObject({ kind: 'refused' });
  });
});
