import { describe, expect, it } from 'vitest';
import {
  agentJob,
  daemonOf,
  find,
  KUBECTL,
  podConfig,
  render,
  renderOverlay,
  schemaProblems,
  type Obj,
} from '../../support/manifests.js';

// The two topologies deploy/kubernetes ships, as kubectl kustomize renders them: the default (base, and
// the kind overlay built on it) runs one daemon on a ReadWriteOnce claim with its Jobs beside it;
// overlays/ha runs two replicas on different nodes on a ReadWriteMany claim with Jobs anywhere. The
// Jobs are built by the engine from the configuration as it loads in each topology's pod.

/** The evictions a PodDisruptionBudget allows when every selected pod is healthy. */
function allowedDisruptions(pdb: Obj, replicas: number): number {
  const { maxUnavailable, minAvailable } = pdb.spec as {
    maxUnavailable?: number | string;
    minAvailable?: number | string;
  };
  const count = (v: number | string) =>
    typeof v === 'number' ? v : Math.ceil((Number.parseInt(v, 10) / 100) * replicas);
  if (maxUnavailable !== undefined) return count(maxUnavailable);
  if (minAvailable !== undefined) return replicas - count(minAvailable);
  return replicas;
}

/** The budgets selecting the daemon's pods, each with the evictions it allows. */
function daemonBudgets(objects: Obj[]): { name: string; allowed: number }[] {
  const { deployment } = daemonOf(objects);
  const labels = deployment.spec.template.metadata.labels as Record<string, string>;
  return objects
    .filter((o) => o.kind === 'PodDisruptionBudget')
    .filter((pdb) =>
      Object.entries(pdb.spec.selector.matchLabels as Record<string, string>).every(
        ([k, v]) => labels[k] === v,
      ),
    )
    .map((pdb) => ({ name: pdb.metadata.name, allowed: allowedDisruptions(pdb, deployment.spec.replicas) }));
}

const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe.skipIf(!KUBECTL)('the default topology (base, overlays/kind)', () => {
  it.each(['base', 'overlays/kind'])('%s: one daemon, a Recreate rollout, a ReadWriteOnce claim', (dir) => {
    const objects = render(dir);
    const { deployment } = daemonOf(objects);
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    expect(find(objects, 'PersistentVolumeClaim').spec.accessModes).toEqual(['ReadWriteOnce']);
  });

  it.each(['base', 'overlays/kind'])(
    '%s: no PodDisruptionBudget that could block a drain of its node',
    (dir) => {
      const objects = render(dir);
      expect(objects.filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
      expect(daemonBudgets(objects).filter((b) => b.allowed < 1)).toEqual([]);
    },
  );

  it("builds agent Jobs that mount no PersistentVolumeClaim and have no affinity to the daemon's node, though its claim is ReadWriteOnce", async () => {
    const objects = render('base');
    const job = agentJob(podConfig(objects));
    const pod = job.spec.template.spec;
    expect(pod.affinity).toBeUndefined();
    expect((pod.volumes as Obj[]).filter((v) => v.persistentVolumeClaim)).toEqual([]);
    expect(pod.nodeSelector).toBeUndefined();
    expect(await schemaProblems([job])).toEqual([]);
  });

  it('keeps the Lease election on as a fence, and states how long an unreachable node keeps the pod', () => {
    const objects = render('base');
    expect(podConfig(objects).leader_election.enabled).toBe(true);
    const { pod } = daemonOf(objects);
    const tolerations = Object.fromEntries((pod.tolerations as Obj[]).map((t) => [t.key, t]));
    for (const key of ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'])
      expect(tolerations[key]).toMatchObject({
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      });
  });
});

describe.skipIf(!KUBECTL)('the ha topology (overlays/ha)', () => {
  it('runs two replicas that may never share a node, rolled one at a time without a surge pod', () => {
    const objects = render('overlays/ha');
    const { deployment, pod } = daemonOf(objects);
    expect(deployment.spec.replicas).toBe(2);
    const terms = pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution as Obj[];
    expect(terms).toHaveLength(1);
    expect(terms[0]!.topologyKey).toBe('kubernetes.io/hostname');
    expect(matches(terms[0]!.labelSelector.matchLabels, deployment.spec.template.metadata.labels)).toBe(true);
    expect(pod.affinity.podAffinity).toBeUndefined();
    // A surge pod would need a third node; one replica down at a time keeps the other leading.
    expect(deployment.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 0, maxUnavailable: 1 },
    });
  });

  it('mounts a ReadWriteMany claim, its storage class left to the operator', () => {
    const pvc = find(render('overlays/ha'), 'PersistentVolumeClaim');
    expect(pvc.spec.accessModes).toEqual(['ReadWriteMany']);
    expect(pvc.spec.storageClassName).toBeUndefined();
    expect(daemonOf(render('overlays/ha')).pod.volumes).toContainEqual({
      name: 'data',
      persistentVolumeClaim: { claimName: pvc.metadata.name },
    });
  });

  it('has a PodDisruptionBudget over the daemon pods that lets a drain evict one replica at a time', () => {
    const objects = render('overlays/ha');
    expect(daemonBudgets(objects)).toEqual([{ name: 'triage-runner', allowed: 1 }]);
    expect(find(objects, 'PodDisruptionBudget').spec).toMatchObject({
      maxUnavailable: 1,
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    });
  });

  it('elects one active replica with the Lease, which the Service follows', () => {
    const objects = render('overlays/ha');
    const config = podConfig(objects);
    expect(config.leader_election.enabled).toBe(true);
    expect(find(objects, 'Service').spec.selector['triage-runner.io/role']).toBe('leader');
  });

  it('builds agent Jobs with no affinity to the daemon and no claim: they run on any node', async () => {
    const objects = render('overlays/ha');
    const config = podConfig(objects);
    const job = agentJob(config);
    expect((job.spec.template.spec.volumes as Obj[]).filter((v) => v.persistentVolumeClaim)).toEqual([]);
    expect(job.spec.template.spec.affinity).toBeUndefined();
    expect(await schemaProblems([job])).toEqual([]);
    // The same with every component added, as an operator's overlay would.
    const all = renderOverlay({
      resources: ['overlays/ha'],
      components: ['components/clusters', 'components/ingress', 'components/restricted-egress'],
    });
    expect(agentJob(podConfig(all)).spec.template.spec.affinity).toBeUndefined();
  });

  it('differs from the base only where the topology does', () => {
    const base = daemonOf(render('base'));
    const ha = daemonOf(render('overlays/ha'));
    const names = (c: Obj) => (c.env as Obj[]).map((e) => e.name as string);
    expect(names(base.container)).toEqual(names(ha.container));
    expect(ha.pod.tolerations).toEqual(base.pod.tolerations);
    expect(ha.container.image).toBe(base.container.image);
  });
});
