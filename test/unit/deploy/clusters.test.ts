import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { clusterRegistry } from '../../../src/clusters/registry.js';
import { loadConfig } from '../../../src/config/index.js';
import { readManifests, renderKustomization, type K8sObject } from '../../support/kustomize.js';

// deploy/kubernetes/overlays/clusters: one Secret per cluster mounted into the daemon, the registry
// naming those files, and the read-only identity to create in each registered cluster. Rendered and
// validated against the Kubernetes OpenAPI schemas (kubernetes-models) as the base is.

const OVERLAY = path.resolve(import.meta.dirname, '../../../deploy/kubernetes/overlays/clusters');
type Obj = K8sObject & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function problemsOf(objects: K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const o of objects) {
    const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
    const mod = (await import(`kubernetes-models/${group ? `${group}/` : ''}${version}/${o.kind}`)) as Record<
      string,
      new (data: unknown) => { validate(): void }
    >;
    const Model = mod[o.kind];
    if (!Model) throw new Error(`no schema model for ${o.apiVersion} ${o.kind}`);
    try {
      new Model(o).validate();
    } catch (err) {
      problems.push(`${o.kind}/${o.metadata.name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

const rendered = renderKustomization(OVERLAY) as Obj[];
const secrets = readManifests(path.join(OVERLAY, 'cluster-secrets.example.yaml')) as Obj[];
const identity = readManifests(path.join(OVERLAY, 'read-only-identity.yaml')) as Obj[];
const deployment = rendered.find((o) => o.kind === 'Deployment' && o.metadata.name === 'triage-runner')!;
const pod = deployment.spec.template.spec;
const daemon = pod.containers[0];

describe('deploy/kubernetes/overlays/clusters', () => {
  it('renders to schema-valid objects, with the cluster Secrets and the read-only identity', async () => {
    expect(await problemsOf([...rendered, ...secrets, ...identity])).toEqual([]);
    // The Secrets are created by the user from real kubeconfigs, never applied from the overlay.
    expect(rendered.some((o) => o.kind === 'Secret')).toBe(false);
    expect(secrets.every((s) => s.stringData.kubeconfig === 'REPLACE-ME')).toBe(true);
  });

  it('mounts one Secret per registry entry, read-only, where the registry in the environment points', () => {
    const env = Object.fromEntries(
      (daemon.env as { name: string; value?: string }[]).map((e) => [e.name, e.value]),
    );
    const configMap = rendered.find((o) => o.kind === 'ConfigMap') as Obj;
    // The daemon's configuration as it loads in the pod: config.yaml, then the environment over it.
    const { config } = loadConfig({
      flags: parseYaml(configMap.data['config.yaml']) as Record<string, unknown>,
      env: {
        TRIAGE_RUNNER_CLUSTERS: env.TRIAGE_RUNNER_CLUSTERS,
        TRIAGE_RUNNER_UNKNOWN_CLUSTER: env.TRIAGE_RUNNER_UNKNOWN_CLUSTER,
      },
      cwd: '/',
    });
    const entries = clusterRegistry(config).listClusters();
    expect(entries.map((e) => e.name)).toEqual(['prod-eu-1', 'staging']);
    expect(config.unknown_cluster).toBe('reject');
    for (const entry of entries) {
      const mount = (daemon.volumeMounts as { name: string; mountPath: string; readOnly?: boolean }[]).find(
        (m) => entry.kubeconfig?.startsWith(`${m.mountPath}/`),
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
  });

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
