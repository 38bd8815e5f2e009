import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { LeaderElector } from '../../../src/election/elector.js';
import { createLeaseStore } from '../../../src/engines/kubernetes/index.js';
import { FakeKubeApi } from '../../support/fake-kube-api.js';

// The election against the fake API server over real HTTP (the real @kubernetes/client-node), with a
// manual clock: each test steps the replicas with tick() and moves time by hand, so nothing waits on
// the wall clock.

const DURATION = 15_000;
const DEADLINE = 10_000;
const RETRY = 2_000;

interface Timer {
  at: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock the test moves: timers fire when `advance` passes their time. */
function manualClock(start = Date.parse('2026-11-26T09:00:00Z')) {
  let now = start;
  const timers: Timer[] = [];
  return {
    now: () => now,
    setTimer: (fn: () => void, ms: number) => {
      const t = { at: now + ms, fn, cancelled: false };
      timers.push(t);
      return () => void (t.cancelled = true);
    },
    advance(ms: number) {
      now += ms;
      for (const t of timers.filter((x) => !x.cancelled && x.at <= now)) {
        t.cancelled = true;
        t.fn();
      }
    },
  };
}

const quiet = { info: () => undefined, warn: () => undefined };

let api: FakeKubeApi;
let clock: ReturnType<typeof manualClock>;
const lost: string[] = [];

function replica(identity: string): LeaderElector {
  return new LeaderElector({
    store: createLeaseStore({
      name: 'triage-runner',
      namespace: 'triage-runner',
      kubeConfig: api.kubeConfig(),
    }),
    identity,
    leaseDurationMs: DURATION,
    renewDeadlineMs: DEADLINE,
    retryPeriodMs: RETRY,
    onLost: (why) => lost.push(`${identity}: ${why}`),
    log: quiet,
    now: clock.now,
    setTimer: clock.setTimer,
  });
}

const leaseSpec = () =>
  api.leases.get('triage-runner/triage-runner')?.spec as
    { holderIdentity: string; leaseTransitions: number; renewTime: string; acquireTime: string } | undefined;

beforeEach(async () => {
  api = await new FakeKubeApi().start();
  clock = manualClock();
  lost.length = 0;
});

afterEach(async () => {
  await api.close();
});

describe('leader election with a coordination.k8s.io/v1 Lease', () => {
  it('of two replicas racing for a Lease that does not exist, exactly one leads', async () => {
    const a = replica('pod-a');
    const b = replica('pod-b');
    await Promise.all([a.tick(), b.tick()]);
    expect([a.state, b.state].sort()).toEqual(['leader', 'standby']);
    expect(api.requestsTo('POST', '/leases')).toHaveLength(2);
    const leader = a.state === 'leader' ? 'pod-a' : 'pod-b';
    expect(leaseSpec()).toMatchObject({ holderIdentity: leader, leaseTransitions: 0 });
    // The loser's second try sees a live holder and stays standby; it knows who leads.
    const standby = a.state === 'leader' ? b : a;
    await standby.tick();
    expect(standby.state).toBe('standby');
    expect(standby.holder).toBe(leader);
  });

  it('of two standbys taking over an expired Lease at once, the stale resourceVersion loses (409)', async () => {
    const old = replica('pod-old');
    await old.tick();
    const a = replica('pod-a');
    const b = replica('pod-b');
    await Promise.all([a.tick(), b.tick()]);
    clock.advance(DURATION + 1);
    await Promise.all([a.tick(), b.tick()]);
    expect([a.state, b.state].sort()).toEqual(['leader', 'standby']);
    const puts = api.requestsTo('PUT', '/leases/triage-runner');
    expect(puts).toHaveLength(2);
    expect(leaseSpec()?.leaseTransitions).toBe(1);
  });

  it('a renewing leader keeps the Lease however long a standby waits', async () => {
    const a = replica('pod-a');
    const b = replica('pod-b');
    await a.tick();
    for (let i = 0; i < 20; i++) {
      clock.advance(RETRY);
      await a.tick();
      await b.tick();
    }
    expect(a.state).toBe('leader');
    expect(b.state).toBe('standby');
    expect(leaseSpec()).toMatchObject({ holderIdentity: 'pod-a', leaseTransitions: 0 });
    expect(lost).toEqual([]);
  });

  it('a standby takes over only once the leader has not renewed for a whole lease duration', async () => {
    const a = replica('pod-a');
    const b = replica('pod-b');
    await a.tick();
    await b.tick();
    const lastRenew = leaseSpec()!.renewTime;
    // pod-a stops renewing (killed): pod-b keeps trying every retry period.
    let waited = 0;
    while (b.state !== 'leader') {
      clock.advance(RETRY);
      waited += RETRY;
      await b.tick();
      if (waited < DURATION) expect(b.state).toBe('standby');
      expect(waited).toBeLessThanOrEqual(DURATION + RETRY);
    }
    const spec = leaseSpec()!;
    expect(spec).toMatchObject({ holderIdentity: 'pod-b', leaseTransitions: 1 });
    expect(Date.parse(spec.acquireTime) - Date.parse(lastRenew)).toBeLessThanOrEqual(DURATION + RETRY);
  });

  it('a leader that cannot renew steps down at the renew deadline, before the Lease can be taken', async () => {
    const a = replica('pod-a');
    await a.tick();
    api.failNext('/leases/', 503, 100);
    for (let t = RETRY; t < DEADLINE; t += RETRY) {
      clock.advance(RETRY);
      await a.tick();
      expect(a.state).toBe('leader');
    }
    clock.advance(DEADLINE);
    expect(a.state).toBe('stopped');
    expect(lost).toEqual([`pod-a: the Lease was not renewed within ${DEADLINE} ms (renew_deadline)`]);
    expect(DEADLINE).toBeLessThan(DURATION);
  });

  it('a leader that finds another holder in the Lease steps down at once', async () => {
    const a = replica('pod-a');
    await a.tick();
    const lease = api.leases.get('triage-runner/triage-runner')!;
    (lease.spec as { holderIdentity: string }).holderIdentity = 'pod-z';
    (lease.metadata as { resourceVersion: string }).resourceVersion = '999';
    clock.advance(RETRY);
    await a.tick();
    expect(a.state).toBe('stopped');
    expect(lost).toEqual(['pod-a: pod-z holds the Lease now']);
  });

  it('a leader that stops with release hands the Lease to a standby at its next try', async () => {
    const a = replica('pod-a');
    const b = replica('pod-b');
    await a.tick();
    await b.tick();
    const waiting = b.whenLeader();
    await a.stop({ release: true });
    expect(leaseSpec()?.holderIdentity).toBe('');
    clock.advance(RETRY);
    await b.tick();
    await expect(waiting).resolves.toBe(true);
    expect(b.state).toBe('leader');
  });

  it('whenLeader answers false when the elector stops before it leads', async () => {
    const a = replica('pod-a');
    const b = replica('pod-b');
    await a.tick();
    const waiting = b.whenLeader();
    await b.stop();
    await expect(waiting).resolves.toBe(false);
  });
});

describe('leader_election configuration', () => {
  it('refuses a renew deadline that is not shorter than the lease duration (a leader must step down first)', () => {
    const r = configSchema.safeParse({ leader_election: { lease_duration: '10s', renew_deadline: '10s' } });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain('renew_deadline must be shorter than lease_duration');
    expect(configSchema.parse({}).leader_election).toMatchObject({
      enabled: false,
      lease_duration: 15_000,
      renew_deadline: 10_000,
      retry_period: 2_000,
    });
  });
});
