import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  daemonOf,
  KUBECTL,
  KUSTOMIZE_ROOT,
  kustomizeVersion,
  readManifests,
  render,
  renderOverlay,
  schemaProblems,
} from '../../support/manifests.js';

// Every kustomization under deploy/kubernetes rendered by the real `kubectl kustomize`, and what it
// prints validated against the Kubernetes OpenAPI schemas (kubernetes-models, offline). The folders are
// listed from disk, so an overlay or component added later is rendered without touching this file.

const folders = (under: string) =>
  readdirSync(path.join(KUSTOMIZE_ROOT, under), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `${under}/${e.name}`)
    .sort();
const OVERLAYS = folders('overlays');
const COMPONENTS = folders('components');
/** Files that show a Secret's shape; never applied by the kustomizations. */
const EXAMPLES = ['base/secret.example.yaml', 'components/clusters/cluster-secrets.example.yaml'];

describe.skipIf(!KUBECTL)('deploy/kubernetes rendered by kubectl kustomize', () => {
  it('uses a kubectl whose kustomize is v5 or later', () => {
    expect(kustomizeVersion()).toMatch(/^v[5-9]\.|^v\d{2,}\./);
  });

  it('ships base/ with overlays/ and components/ beside it, not inside it', () => {
    expect(readdirSync(KUSTOMIZE_ROOT).sort()).toEqual(['base', 'components', 'overlays']);
    expect(OVERLAYS).toEqual(expect.arrayContaining(['overlays/ha', 'overlays/kind']));
    expect(COMPONENTS).toEqual(
      expect.arrayContaining([
        'components/clusters',
        'components/ingress',
        'components/restricted-egress',
        'components/servicemonitor',
      ]),
    );
  });

  it('renders the base to schema-valid objects', async () => {
    const base = render('base');
    expect(base.map((o) => o.kind).sort()).toEqual(
      [
        'ClusterRole',
        'ClusterRoleBinding',
        'ConfigMap',
        'Deployment',
        'Namespace',
        'NetworkPolicy',
        'NetworkPolicy',
        'NetworkPolicy',
        'PersistentVolumeClaim',
        'Role',
        'Role',
        'RoleBinding',
        'RoleBinding',
        'Service',
        'ServiceAccount',
        'ServiceAccount',
      ].sort(),
    );
    expect(await schemaProblems(base)).toEqual([]);
  });

  it.each(OVERLAYS)('renders %s to schema-valid objects', async (overlay) => {
    const objects = render(overlay);
    expect(objects.length).toBeGreaterThan(0);
    expect(await schemaProblems(objects)).toEqual([]);
  });

  // A component is added to a topology by an overlay of the operator's own: render it on each.
  it.each(COMPONENTS.flatMap((c) => [['base', c] as const, ['overlays/ha', c] as const]))(
    'renders %s with %s to schema-valid objects',
    async (topology, component) => {
      const objects = renderOverlay({ resources: [topology], components: [component] });
      expect(await schemaProblems(objects)).toEqual([]);
      // The component changed something: the rendering differs from the topology alone.
      expect(JSON.stringify(objects)).not.toBe(JSON.stringify(render(topology)));
    },
  );

  it('renders every component together on the ha overlay', async () => {
    const objects = renderOverlay({ resources: ['overlays/ha'], components: COMPONENTS });
    expect(await schemaProblems(objects)).toEqual([]);
  });

  it('the example Secrets and the clusters identity are schema-valid too', async () => {
    const files = [...EXAMPLES, 'components/clusters/read-only-identity.yaml'];
    expect(await schemaProblems(files.flatMap((f) => readManifests(f)))).toEqual([]);
  });

  it('the validator really rejects a broken manifest (a wrong type and a missing container name)', async () => {
    const { deployment } = daemonOf(render('base'));
    deployment.spec.replicas = 'two';
    delete deployment.spec.template.spec.containers[0].name;
    const problems = (await schemaProblems([deployment])).join('\n');
    expect(problems).toMatch(/replicas must be integer/);
    expect(problems).toMatch(/containers\/0 must have required property name/);
  });
});
