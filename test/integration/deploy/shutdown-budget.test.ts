import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { interruptGraceMs, worstCaseDrainMs } from '../../../src/daemon/shutdown.js';
import { daemonOf, KUBECTL, podConfig, render } from '../../support/manifests.js';

// The daemon's worst-case stop (shutdown_timeout, then the stop escalation) must fit the time the
// orchestrator gives it before SIGKILL, or in-flight runs are killed mid-write and their state is lost.
// Computed from each shipped topology as kubectl kustomize renders it (the configuration as it loads
// in the pod, the pod's grace period) over the code's defaults, so neither can drift alone.

/** Room after the drain for recording interrupted runs, closing the store, executor and HTTP. */
const MARGIN_MS = 10_000;

describe('shutdown budget', () => {
  it('adds shutdown_timeout and the stop escalation (2 × stop_grace + 1 s): 71 s with the defaults', () => {
    const defaults = configSchema.parse({});
    expect(interruptGraceMs(defaults)).toBe(41_000);
    expect(worstCaseDrainMs(defaults)).toBe(71_000);
    expect(
      worstCaseDrainMs({
        ...defaults,
        scheduling: { ...defaults.scheduling, shutdown_timeout: 5000 },
        agent: { ...defaults.agent, stop_grace: 2000 },
      }),
    ).toBe(10_000);
  });

  it.skipIf(!KUBECTL).each(['base', 'overlays/ha', 'overlays/kind'])(
    '%s: fits the Kubernetes pod grace period with room for the last writes',
    (dir) => {
      const objects = render(dir);
      const worst = worstCaseDrainMs(podConfig(objects));
      const seconds = daemonOf(objects).pod.terminationGracePeriodSeconds as number | undefined;
      expect(seconds, 'terminationGracePeriodSeconds is set (the default is 30 s)').toBeDefined();
      expect(
        seconds! * 1000,
        `terminationGracePeriodSeconds must be ≥ ${(worst + MARGIN_MS) / 1000} s: raise it in deploy/kubernetes/base/deployment.yaml or lower scheduling.shutdown_timeout / agent.stop_grace`,
      ).toBeGreaterThanOrEqual(worst + MARGIN_MS);
    },
  );
});
