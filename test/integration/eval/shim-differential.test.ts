import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileCluster } from '../../../src/eval/cases/compile.js';
import { discoverCases } from '../../../src/eval/cases/load.js';
import { answer } from '../../../src/eval/shim/answer.js';
import type { FrozenCluster } from '../../../src/eval/shim/cluster.js';
import { classifyKubectl } from '../../../src/kubectl/policy/classify.js';
import { KUBECTL, maskVolatile } from '../../support/kube-objects/record.js';
import { serveScenario } from '../../support/kube-objects/serve.js';
import type { Obj, Scenario } from '../../support/kube-objects/shop.js';
import { REPO_ROOT } from '../../support/runs.js';
import { startStandInApiServer, type StandInApiServer } from '../../support/stand-in-apiserver.js';

// The eval's stand-in kubectl against the real one: each shipped case's pods, events and logs are served by
// the stand-in API server (with the server-side tables of Kubernetes' pod and event printers, ages
// against the case's frozen clock), Debian's kubectl 1.32 is run against it, and the frozen cluster's
// shim answers the same command lines; both must print the same. The verbs are those the shipped cases'
// scripted investigations and the triage script use on pods: get (table, wide, one pod, -o yaml|json),
// describe pod, get events, events, logs (current and --previous). Describe and `events` print ages
// against the host's clock in kubectl and against the frozen clock in the shim: those are masked there
// (with the column padding that follows them), and only there.

/** Every shipped case with a reachable cluster, at the incident's namespace and pod (its first pod when the incident is about another kind). */
async function casesOf(): Promise<
  { name: string; namespace: string; pod: string; cluster: FrozenCluster }[]
> {
  const out = [];
  for (const dir of await discoverCases(path.join(REPO_ROOT, 'examples', 'evals'))) {
    const name = path.basename(dir);
    const cluster = await compileCluster(dir, name);
    if (cluster.unreachable) continue;
    const incident = JSON.parse(await readFile(path.join(dir, 'incident.json'), 'utf8')) as {
      namespace: string;
      resource: { kind: string; name: string };
    };
    const pods = cluster.objects
      .filter((o) => o.type === 'pods' && o.namespace === incident.namespace)
      .map((o) => o.name)
      .sort();
    const pod = incident.resource.kind === 'Pod' ? incident.resource.name : pods[0];
    if (pod) out.push({ name, namespace: incident.namespace, pod, cluster });
  }
  return out;
}

const CASES = await casesOf();

type Compare = 'exact' | 'ages-masked';

function commandsOf(ns: string, pod: string, cluster: FrozenCluster): { argv: string[]; compare: Compare }[] {
  const logged = cluster.logs.filter((l) => l.namespace === ns && l.pod === pod);
  const single = logged.filter((l) => !l.previous).length === 1;
  return [
    { argv: ['get', 'pods', '-n', ns], compare: 'exact' },
    { argv: ['get', 'pods', '-n', ns, '-o', 'wide'], compare: 'exact' },
    { argv: ['get', 'pod', pod, '-n', ns], compare: 'exact' },
    { argv: ['get', 'pod', pod, '-n', ns, '-o', 'yaml'], compare: 'exact' },
    { argv: ['get', 'pod', pod, '-n', ns, '-o', 'json'], compare: 'exact' },
    { argv: ['get', 'events', '-n', ns], compare: 'exact' },
    ...(single ? [{ argv: ['logs', pod, '-n', ns], compare: 'exact' as const }] : []),
    ...(single && logged.some((l) => l.previous)
      ? [{ argv: ['logs', pod, '-n', ns, '--previous'], compare: 'exact' as const }]
      : []),
    { argv: ['describe', 'pod', pod, '-n', ns], compare: 'ages-masked' },
  ];
}

/** The case's pods, events and logs as the stand-in API server's scenario. */
function scenarioOf(cluster: FrozenCluster): Scenario {
  // An API server lists in key order: by namespace, then name.
  const of = (type: string) =>
    cluster.objects
      .filter((o) => o.type === type)
      .sort((a, b) => (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name))
      .map((o) => o.object as Obj);
  const logs: Record<string, string> = {};
  for (const l of cluster.logs) logs[`${l.pod}/${l.container}${l.previous ? '/previous' : ''}`] = l.text;
  return { pods: of('pods'), events: of('events'), logs };
}

function kubeconfig(server: string, namespace: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: frozen, cluster: {server: "${server}"}}]`,
    'users: [{name: agent, user: {token: stand-in-token}}]',
    `contexts: [{name: frozen, context: {cluster: frozen, user: agent, namespace: ${namespace}}}]`,
    'current-context: frozen',
    '',
  ].join('\n');
}

function realKubectl(argv: string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, argv, { env, timeout: 20_000, maxBuffer: 16 << 20 }, (err, stdout) => {
      const code =
        err && typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 0;
      resolve({ code: err ? code || 1 : 0, stdout });
    });
  });
}

let dir: string;
beforeAll(async () => {
  try {
    execFileSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' });
  } catch {
    throw new Error(`this test needs the real kubectl (${KUBECTL}): run .ci/install-test-tools.sh`);
  }
  dir = await mkdtemp(path.join(os.tmpdir(), 'triage-shim-diff-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe.each(CASES)('the stand-in kubectl of $name', ({ name, namespace, pod, cluster }) => {
  let server: StandInApiServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    const world = scenarioOf(cluster);
    server = await startStandInApiServer({
      answer: serveScenario(
        () => world,
        () => Date.parse(cluster.now),
      ),
    });
    const file = path.join(dir, `${name}.kubeconfig`);
    await writeFile(file, kubeconfig(server.url, namespace));
    env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TZ: 'UTC', KUBECONFIG: file };
  });
  afterAll(async () => server.close());

  it.each(commandsOf(namespace, pod, cluster).map((c) => [c.argv.join(' '), c] as const))(
    'prints what the real kubectl prints: kubectl %s',
    async (_label, { argv, compare }) => {
      const real = await realKubectl(argv, env);
      const shim = answer(classifyKubectl(argv), cluster);
      expect(shim.exitCode).toBe(real.code);
      if (compare === 'exact') expect(shim.stdout).toBe(real.stdout);
      else expect(maskVolatile(shim.stdout)).toBe(maskVolatile(real.stdout));
    },
  );
});
