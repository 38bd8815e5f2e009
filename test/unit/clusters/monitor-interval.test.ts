// The cluster access monitor's periodic check on fake timers (only setInterval is faked: the check
// itself runs a real stand-in kubectl): checked at start, again every interval and not before, one
// timer however often readiness asks, and none left after stop().
import { chmod, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ACCESS_INTERVAL_MS, ClusterAccessMonitor } from '../../../src/clusters/monitor.js';
import type { ClusterAccess } from '../../../src/clusters/types.js';
import { tempDir } from '../../support/runs.js';

// Answers `version` with a server version unless a file named `down` sits next to it.
const KUBECTL = `#!/bin/sh
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
if [ -e "$here/down" ]; then echo 'Unable to connect to the server: dial tcp 10.0.0.9:443: i/o timeout' >&2; exit 1; fi
echo '{"serverVersion":{"gitVersion":"v1.31.0"}}'
`;

describe('cluster access monitor: the periodic check', () => {
  let t: { dir: string; cleanup: () => Promise<void> };
  let changes: ClusterAccess[];
  let m: ClusterAccessMonitor;

  beforeEach(async () => {
    t = await tempDir('triage-monitor-interval-');
    const command = path.join(t.dir, 'kubectl');
    await writeFile(command, KUBECTL);
    await chmod(command, 0o755);
    await writeFile(path.join(t.dir, 'down'), '');
    changes = [];
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    m = new ClusterAccessMonitor({
      entries: [{ name: 'prod', kubeconfig: '/k/prod' }],
      kubectl: { command, env: { PATH: '/usr/bin:/bin' }, cwd: t.dir, timeoutMs: 10_000 },
      onChange: (access) => changes.push(access),
    });
  });
  afterEach(async () => {
    m.stop();
    vi.useRealTimers();
    await t.cleanup();
  });

  it('checks at start, then again every ACCESS_INTERVAL_MS and not before, and a cluster that comes back is reported', async () => {
    const checks = vi.spyOn(m, 'checkAll');
    expect((await m.start())[0]).toMatchObject({ name: 'prod', reachable: false });
    expect(checks).toHaveBeenCalledTimes(1);
    expect(changes.map((c) => c.reachable)).toEqual([false]);

    await rm(path.join(t.dir, 'down'));
    vi.advanceTimersByTime(ACCESS_INTERVAL_MS - 1);
    expect(checks).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(checks).toHaveBeenCalledTimes(2);
    await vi.waitFor(() => expect(changes.map((c) => c.reachable)).toEqual([false, true]), {
      timeout: 10_000,
    });
    expect((await m.current())[0]).toMatchObject({ reachable: true });

    vi.advanceTimersByTime(ACCESS_INTERVAL_MS);
    expect(checks).toHaveBeenCalledTimes(3);
  });

  it('keeps one timer however often readiness asks, and stop() leaves none', async () => {
    await m.readiness();
    await m.readiness();
    await m.start();
    expect(vi.getTimerCount()).toBe(1);
    const checks = vi.spyOn(m, 'checkAll');
    m.stop();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5 * ACCESS_INTERVAL_MS);
    expect(checks).not.toHaveBeenCalled();
  });
});
