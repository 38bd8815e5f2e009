import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  clusterProblem,
  clusterRegistry,
  schedulingKey,
  SINGLE_CLUSTER,
} from '../../../src/clusters/registry.js';
import { ConfigError, loadConfig } from '../../../src/config/index.js';
import { scratchDir } from '../../support/scratch.js';

function configFrom(yaml: string) {
  const dir = scratchDir('tr-clusters-');
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, yaml);
  return { dir, load: () => loadConfig({ file, env: {}, cwd: dir }).config };
}

function problemsOf(yaml: string): { path: string; message: string }[] {
  try {
    configFrom(yaml).load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => ({ path: p.path, message: p.message }));
    throw err;
  }
  throw new Error('expected a ConfigError');
}

const TWO = `
clusters:
  prod-eu-1: { kubeconfig: ./kube/prod-eu-1, context: prod-eu-1, aliases: [prod-eu, "arn:aws:eks:eu-west-1:1:cluster/prod"] }
  staging: { kubeconfig: /etc/kube/staging }
`;

describe('the cluster registry', () => {
  it('without clusters: is one entry with the single kubeconfig that every incident routes to', () => {
    const registry = clusterRegistry({
      kubeconfig: '/etc/kubeconfig',
      unknown_cluster: 'reject',
    });
    expect(registry.configured).toBe(false);
    expect(registry.listClusters()).toEqual([
      { name: SINGLE_CLUSTER, kubeconfig: '/etc/kubeconfig', aliases: [] },
    ]);
    expect(registry.resolveCluster('anything-at-all')).toEqual({
      entry: { name: SINGLE_CLUSTER, kubeconfig: '/etc/kubeconfig', aliases: [] },
      routedBy: 'default',
    });
    // max_per_cluster keeps counting by the incident's own cluster, as before.
    expect(schedulingKey(registry)('prod-a')).toBe('prod-a');
  });

  it('routes by name and by alias, resolves kubeconfig paths against the config file, and rejects an unknown cluster naming the known ones', () => {
    const { dir, load } = configFrom(TWO);
    const registry = clusterRegistry(load());
    expect(registry.listClusters()).toEqual([
      {
        name: 'prod-eu-1',
        kubeconfig: path.join(dir, 'kube/prod-eu-1'),
        context: 'prod-eu-1',
        aliases: ['prod-eu', 'arn:aws:eks:eu-west-1:1:cluster/prod'],
      },
      { name: 'staging', kubeconfig: '/etc/kube/staging', aliases: [] },
    ]);
    expect(registry.resolveCluster('staging')).toMatchObject({
      entry: { name: 'staging' },
      routedBy: 'name',
    });
    expect(registry.resolveCluster('prod-eu')).toMatchObject({
      entry: { name: 'prod-eu-1' },
      routedBy: 'alias',
    });
    expect(registry.resolveCluster('arn:aws:eks:eu-west-1:1:cluster/prod')).toMatchObject({
      entry: { name: 'prod-eu-1' },
      routedBy: 'alias',
    });
    const unknown = registry.resolveCluster('prod-us-1');
    expect(unknown).toEqual({
      rejected: expect.stringContaining('"prod-us-1" is not in the cluster registry'),
    });
    expect(clusterProblem(registry, 'prod-us-1')).toContain('known: prod-eu-1, staging');
    expect(clusterProblem(registry, 'prod-eu')).toBeUndefined();
    // An alias and the name share one max_per_cluster limit.
    expect(schedulingKey(registry)('prod-eu')).toBe('prod-eu-1');
  });

  it('with unknown_cluster: default routes an unknown cluster to default_cluster, recorded as such', () => {
    const registry = clusterRegistry(
      configFrom(`${TWO}unknown_cluster: default\ndefault_cluster: staging\n`).load(),
    );
    expect(registry.resolveCluster('prod-us-1')).toMatchObject({
      entry: { name: 'staging' },
      routedBy: 'default',
    });
    expect(registry.resolveCluster('prod-eu')).toMatchObject({ routedBy: 'alias' });
  });

  it('a configuration reports every registry problem with its path', () => {
    const problems = problemsOf(`
kubeconfig: /etc/kubeconfig
clusters:
  prod-eu-1: { aliases: [prod-eu, staging] }
  staging: { aliases: [prod-eu, staging] }
  Bad_Name: {}
unknown_cluster: default
default_cluster: nowhere
`);
    expect(problems).toEqual(
      expect.arrayContaining([
        {
          path: 'clusters.prod-eu-1.aliases.1',
          message: expect.stringContaining('already names the registry entry staging'),
        },
        {
          path: 'clusters.staging.aliases.0',
          message: expect.stringContaining('prod-eu already names an alias of prod-eu-1'),
        },
        { path: 'clusters.staging.aliases.1', message: expect.stringContaining("the entry's own name") },
        { path: 'clusters.Bad_Name', message: expect.stringContaining('lowercase') },
        { path: 'default_cluster', message: expect.stringContaining('nowhere is not a registry entry') },
        {
          path: 'kubeconfig',
          message: expect.stringContaining('move the kubeconfig into a clusters: entry'),
        },
      ]),
    );
    expect(problemsOf(`${TWO}unknown_cluster: default\n`)).toEqual([
      { path: 'default_cluster', message: expect.stringContaining('default_cluster is not set') },
    ]);
    expect(problemsOf(`${TWO}kubectl: { kubeconfig: /etc/broker-kubeconfig }\n`)).toEqual([
      {
        path: 'kubectl.kubeconfig',
        message: expect.stringContaining('give each entry its read-only identity'),
      },
    ]);
    expect(problemsOf('default_cluster: staging\n')).toEqual([
      { path: 'default_cluster', message: expect.stringContaining('needs a clusters: registry') },
    ]);
  });
});
