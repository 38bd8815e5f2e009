import { describe, expect, it } from 'vitest';
import { ClusterHealth, type ProbeRunner } from '../../../src/clusters/health.js';

const clusters = [
  { name: 'prod-eu-1', kubeconfig: '/k/eu', context: 'eu-investigator', aliases: [] },
  { name: 'dr', kubeconfig: '/k/dr', aliases: [] },
];

function fixture() {
  let now = 1_000;
  const calls: { args: string[]; kubeconfig?: string }[] = [];
  const down = new Set<string>(['/k/dr']);
  const run: ProbeRunner = async ({ args, env }) => {
    calls.push({ args, ...(env.KUBECONFIG ? { kubeconfig: env.KUBECONFIG } : {}) });
    return down.has(env.KUBECONFIG ?? '')
      ? {
          exitCode: 1,
          timedOut: false,
          stderrTail: 'I1126 noise\nUnable to connect to the server: dial tcp 10.0.0.9:443: i/o timeout\n',
        }
      : { exitCode: 0, timedOut: false, stderrTail: '' };
  };
  const health = new ClusterHealth({
    clusters,
    command: 'kubectl',
    env: { PATH: '/usr/bin', HOME: '/home/x', KUBECONFIG: '/daemon/own/kubeconfig' },
    maxAgeMs: 30_000,
    now: () => now,
    run,
  });
  return { health, calls, down, advance: (ms: number) => (now += ms) };
}

describe('cluster reachability', () => {
  it("probes each entry with its own kubeconfig and context, never the daemon's KUBECONFIG, and says why one is unreachable", async () => {
    const { health, calls } = fixture();
    expect(await health.all()).toEqual([
      { name: 'prod-eu-1', reachable: true, checkedAt: 1_000 },
      {
        name: 'dr',
        reachable: false,
        detail: 'Unable to connect to the server: dial tcp 10.0.0.9:443: i/o timeout',
        checkedAt: 1_000,
      },
    ]);
    expect(calls).toEqual([
      { args: ['--context', 'eu-investigator', '--request-timeout', '3s', 'version'], kubeconfig: '/k/eu' },
      { args: ['--request-timeout', '3s', 'version'], kubeconfig: '/k/dr' },
    ]);
  });

  it('reuses an answer younger than maxAgeMs, shares one probe between concurrent callers, and probes again after', async () => {
    const { health, calls, down, advance } = fixture();
    await Promise.all([health.of('dr'), health.of('dr'), health.all()]);
    expect(calls.filter((c) => c.kubeconfig === '/k/dr')).toHaveLength(1);
    advance(29_999);
    expect((await health.of('dr')).reachable).toBe(false);
    expect(calls.filter((c) => c.kubeconfig === '/k/dr')).toHaveLength(1);
    down.delete('/k/dr');
    advance(1);
    expect(await health.of('dr')).toEqual({ name: 'dr', reachable: true, checkedAt: 31_000 });
    expect(calls.filter((c) => c.kubeconfig === '/k/dr')).toHaveLength(2);
  });

  it('a kubectl that cannot start or does not answer in time is unreachable with the reason', async () => {
    const health = new ClusterHealth({
      clusters: [clusters[1]!],
      command: '/missing/kubectl',
      env: {},
      timeoutMs: 2_000,
      run: async ({ args }) =>
        args.includes('version')
          ? { exitCode: null, timedOut: true, stderrTail: '' }
          : { exitCode: null, timedOut: false, stderrTail: '', error: 'ENOENT' },
    });
    expect(await health.of('dr')).toMatchObject({
      reachable: false,
      detail: '/missing/kubectl version did not answer within 2000 ms',
    });
    expect(await health.of('nowhere')).toMatchObject({
      reachable: false,
      detail: 'not in the cluster registry',
    });
  });
});
