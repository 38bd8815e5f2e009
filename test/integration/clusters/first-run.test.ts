// The first run of a daemon started without a kubeconfig, as a newcomer starts it: the real kubectl
// falls back to localhost:8080, and the run's cluster record says so and what to do. The daemon runs in
// a network namespace of its own (nothing else listens there) on its default HTTP port: when that port
// was 8080, kubectl asked the daemon itself, got NotFound, and the advice never fired.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  dropIncident,
  OWN_NETWORK,
  startCliDaemon,
  waitForFinalRun,
  type CliDaemon,
} from '../../support/cli-daemon.js';
import { incidentJson } from '../../support/incidents.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

const AGENT = path.join(REPO_ROOT, 'test/fixtures/agents/claude-like-agent.sh');

let dir: { dir: string; cleanup: () => Promise<void> };
let daemon: CliDaemon | undefined;
beforeEach(async () => {
  dir = await tempDir('triage-first-run-');
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await dir.cleanup();
});

describe('a first run without a kubeconfig', () => {
  it('says kubectl fell back to localhost:8080 and to set kubeconfig:, with the daemon on its default port', async () => {
    const root = path.join(dir.dir, 'incidents');
    const home = path.join(dir.dir, 'home');
    await mkdir(home);
    daemon = await startCliDaemon({
      dir: dir.dir,
      wrap: OWN_NETWORK,
      config: {
        workspaces_root: root,
        engine: 'process',
        agent: { command: AGENT, min_report_bytes: 10, report_sections: ['Summary'] },
        // No port: the default one, as a first start has it.
        http: { host: '127.0.0.1' },
      },
      args: [],
      // No KUBECONFIG and a HOME without .kube/config: the real kubectl has nothing to go on.
      env: { PATH: process.env.PATH ?? '', HOME: home },
    });
    const ws = path.join(root, 'first');
    await dropIncident(ws, incidentJson({ incidentId: 'first-run' }));
    const done = await waitForFinalRun(ws, 60_000, daemon.tail);
    const cluster = done.result?.cluster as { reachable?: boolean; detail?: string } | undefined;
    expect(cluster?.reachable, daemon.tail()).toBe(false);
    expect(cluster?.detail).toContain('so kubectl fell back to localhost:8080');
    expect(cluster?.detail).toContain("set kubeconfig: (or clusters:) to the cluster's kubeconfig");
  });
});
