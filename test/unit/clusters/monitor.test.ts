// The one reachability probe of the daemon's clusters (src/clusters/monitor.ts), with a stand-in
// kubectl as a real child process: each registry entry is checked with its own kubeconfig and context
// (never the daemon's KUBECONFIG), an unreachable one says why and what to do, a check younger than
// ACCESS_FRESH_MS is what a starting run uses, concurrent callers share one check, and a kubectl that
// cannot start or does not answer is unreachable with the reason.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACCESS_FRESH_MS, ClusterAccessMonitor } from '../../../src/clusters/monitor.js';
import { tempDir } from '../../support/runs.js';

// Answers `version` with a server version, unless its KUBECONFIG is listed in `down` next to it.
const KUBECTL = `#!/bin/sh
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
echo "\${KUBECONFIG:-unset} $*" >> "$here/calls.log"
if grep -qx "\${KUBECONFIG:-unset}" "$here/down" 2>/dev/null; then
  echo 'I1126 noise' >&2
  echo 'Unable to connect to the server: dial tcp 10.0.0.9:443: i/o timeout' >&2
  exit 1
fi
case "$*" in *slow*) sleep 5 ;; esac
echo '{"serverVersion":{"gitVersion":"v1.31.0"}}'
`;

const entries = [
  { name: 'prod-eu-1', kubeconfig: '/k/eu', context: 'eu-investigator' },
  { name: 'dr', kubeconfig: '/k/dr' },
];

describe('cluster access monitor: one probe, one cache', () => {
  let t: { dir: string; cleanup: () => Promise<void> };
  let command: string;
  let clock: number;
  const calls = async () =>
    (await readFile(path.join(t.dir, 'calls.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
  const monitor = (over: { command?: string; timeoutMs?: number } = {}) =>
    new ClusterAccessMonitor({
      entries,
      kubectl: {
        command: over.command ?? command,
        env: { PATH: '/usr/bin:/bin', KUBECONFIG: '/daemon/own/kubeconfig' },
        cwd: t.dir,
        timeoutMs: over.timeoutMs ?? 10_000,
      },
      now: () => new Date(clock),
    });

  beforeEach(async () => {
    t = await tempDir('triage-monitor-');
    command = path.join(t.dir, 'kubectl');
    await writeFile(command, KUBECTL);
    await chmod(command, 0o755);
    await writeFile(path.join(t.dir, 'down'), '/k/dr\n');
    clock = Date.parse('2026-11-26T10:00:00Z');
  });
  afterEach(async () => t.cleanup());

  it("checks each entry with its own kubeconfig and context, never the daemon's KUBECONFIG, and says why one is unreachable", async () => {
    const all = await monitor().checkAll();
    expect(all[0]).toEqual({ name: 'prod-eu-1', reachable: true, checkedAt: '2026-11-26T10:00:00.000Z' });
    expect(all[1]).toMatchObject({ name: 'dr', reachable: false });
    expect(all[1]?.detail).toBe(
      'cluster dr cannot be reached: Unable to connect to the server: dial tcp 10.0.0.9:443: i/o timeout: ' +
        "check that the API server in /k/dr is reachable from the daemon's host",
    );
    expect((await calls()).sort()).toEqual([
      '/k/dr version --output=json --request-timeout=10s',
      '/k/eu --context eu-investigator version --output=json --request-timeout=10s',
    ]);
  });

  it('a run reuses a check younger than ACCESS_FRESH_MS, concurrent callers share one check, and an older one is checked again', async () => {
    const m = monitor();
    await Promise.all([m.forRun('dr'), m.forRun('dr'), m.checkAll()]);
    const drCalls = async () => (await calls()).filter((c) => c.startsWith('/k/dr')).length;
    expect(await drCalls()).toBe(1);
    clock += ACCESS_FRESH_MS - 1;
    expect((await m.forRun('dr')).reachable).toBe(false);
    expect(await drCalls()).toBe(1);
    await writeFile(path.join(t.dir, 'down'), '');
    clock += 1;
    expect(await m.forRun('dr')).toEqual({
      name: 'dr',
      reachable: true,
      checkedAt: new Date(clock).toISOString(),
    });
    expect(await drCalls()).toBe(2);
  });

  it('a kubectl that cannot be started or does not answer in time is unreachable with the reason', async () => {
    const missing = await monitor({ command: path.join(t.dir, 'missing-kubectl') }).forRun('prod-eu-1');
    expect(missing).toMatchObject({ reachable: false });
    expect(missing.detail).toContain('could not be started');
    expect(missing.detail).toContain('set kubectl.command');

    // The stand-in sleeps when its context names "slow".
    const slowCtx = new ClusterAccessMonitor({
      entries: [{ name: 'slow', kubeconfig: '/k/slow', context: 'slow' }],
      kubectl: { command, env: { PATH: '/usr/bin:/bin' }, cwd: t.dir, timeoutMs: 300 },
      now: () => new Date(clock),
    });
    expect(await slowCtx.forRun('slow')).toMatchObject({
      reachable: false,
      detail:
        'cluster slow cannot be reached: kubectl did not answer within 300 ms: ' +
        "check that the API server in /k/slow is reachable from the daemon's host",
    });
  });

  it('says kubectl fell back to localhost:8080 when no kubeconfig is configured nor at ~/.kube/config, whatever answered there', async () => {
    // What kubectl prints when the server on localhost:8080 is not an API server (the daemon itself).
    const notFound = path.join(t.dir, 'kubectl-notfound');
    await writeFile(
      notFound,
      "#!/bin/sh\necho 'Error from server (NotFound): the server could not find the requested resource' >&2\nexit 1\n",
    );
    await chmod(notFound, 0o755);
    const home = path.join(t.dir, 'home');
    await mkdir(home);
    const check = () =>
      new ClusterAccessMonitor({
        entries: [{ name: 'default' }],
        kubectl: {
          command: notFound,
          env: { PATH: '/usr/bin:/bin', HOME: home },
          cwd: t.dir,
          timeoutMs: 10_000,
        },
        now: () => new Date(clock),
      }).forRun('default');
    expect((await check()).detail).toBe(
      'cluster default cannot be reached: Error from server (NotFound): the server could not find the requested resource: ' +
        "no kubeconfig is configured, so kubectl fell back to localhost:8080 (kubeconfig: is unset and the daemon's user has no ~/.kube/config): set kubeconfig: (or clusters:) to the cluster's kubeconfig",
    );
    // With ~/.kube/config kubectl had one: the advice is about reaching its API server.
    await mkdir(path.join(home, '.kube'));
    await writeFile(path.join(home, '.kube', 'config'), 'apiVersion: v1\nkind: Config\n');
    expect((await check()).detail).toContain(
      'check that the API server in the default kubeconfig is reachable',
    );
  });
});
