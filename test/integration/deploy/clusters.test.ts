import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterRegistry } from '../../../src/clusters/registry.js';
import {
  daemonOf,
  KUBECTL,
  podConfig,
  readManifests,
  renderOverlay,
  schemaProblems,
  type Obj,
} from '../../support/manifests.js';

// deploy/kubernetes/components/clusters: one Secret per cluster mounted into the daemon, the registry
// naming those files, and the read-only identity to create in each registered cluster. Rendered by
// kubectl kustomize on each topology, as an operator's overlay adds it, and validated against the
// Kubernetes OpenAPI schemas (kubernetes-models).

const secrets = readManifests('components/clusters/cluster-secrets.example.yaml');
const identity = readManifests('components/clusters/read-only-identity.yaml');
const withClusters = (topology: string) =>
  renderOverlay({ resources: [topology], components: ['components/clusters'] });

describe.skipIf(!KUBECTL)('deploy/kubernetes/components/clusters', () => {
  it.each(['base', 'overlays/ha'])(
    'renders on %s to schema-valid objects, with the cluster Secrets and the read-only identity',
    async (topology) => {
      const rendered = withClusters(topology);
      expect(await schemaProblems([...rendered, ...secrets, ...identity])).toEqual([]);
      // The Secrets are created by the user from real kubeconfigs, never applied from the component.
      expect(rendered.some((o) => o.kind === 'Secret')).toBe(false);
      expect(secrets.every((s) => s.stringData.kubeconfig === 'REPLACE-ME')).toBe(true);
    },
  );

  it.each(['base', 'overlays/ha'])(
    'on %s, mounts one Secret per registry entry, read-only, where the registry in the environment points',
    (topology) => {
      const rendered = withClusters(topology);
      const { pod, container: daemon } = daemonOf(rendered);
      // The daemon's configuration as it loads in the pod: config.yaml, then the environment over it.
      const config = podConfig(rendered);
      const entries = clusterRegistry(config).listClusters();
      expect(entries.map((e) => e.name)).toEqual(['prod-eu-1', 'staging']);
      expect(config.unknown_cluster).toBe('reject');
      for (const entry of entries) {
        const mount = (daemon.volumeMounts as Obj[]).find((m) =>
          entry.kubeconfig?.startsWith(`${m.mountPath}/`),
        );
        expect(mount, entry.name).toMatchObject({
          readOnly: true,
          mountPath: `/etc/triage-runner-kube/${entry.name}`,
        });
        const volume = (pod.volumes as Obj[]).find((v) => v.name === mount!.name)!;
        const secret = secrets.find((s) => s.metadata.name === volume.secret.secretName);
        expect(secret, `a Secret for ${entry.name}`).toBeDefined();
        expect(entry.kubeconfig).toBe(path.posix.join(mount!.mountPath, Object.keys(secret!.stringData)[0]!));
        // Readable by the daemon through the pod's fsGroup, by nobody else.
        expect(volume.secret.defaultMode).toBe(0o440);
        expect(pod.securityContext.fsGroup).toBe(daemon.securityContext.runAsGroup);
      }
    },
  );

  it("each cluster's identity reads what an investigation needs and nothing else", () => {
    const role = identity.find((o) => o.kind === 'ClusterRole')!;
    const binding = identity.find((o) => o.kind === 'ClusterRoleBinding')!;
    const sa = identity.find((o) => o.kind === 'ServiceAccount')!;
    expect(binding.roleRef.name).toBe(role.metadata.name);
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace },
    ]);
    const rules = role.rules as { resources: string[]; verbs: string[] }[];
    const resources = rules.flatMap((r) => r.resources);
    const verbs = new Set(rules.flatMap((r) => r.verbs));
    expect([...verbs].sort()).toEqual(['get', 'list', 'watch']);
    for (const forbidden of ['secrets', 'pods/exec', 'pods/attach', 'pods/portforward', '*'])
      expect(resources).not.toContain(forbidden);
    expect(resources).toContain('pods/log');
  });
});
