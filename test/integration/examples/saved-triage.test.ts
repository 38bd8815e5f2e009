// The shipped examples' saved triage is what the k8s4agents triage script wrote against the fake
// kubectl's saved cluster (test/fixtures/fake-kubectl): its evidence matches what that kubectl prints
// now, and its stdout is as small as real triage output. Also the fake kubectl's answers to the calls
// an investigating agent makes, including the ones a read-only investigator is refused.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/runs.js';

const run = promisify(execFile);
const KUBECTL = path.join(REPO_ROOT, 'test/fixtures/fake-kubectl/kubectl');
const CLUSTERS = path.join(REPO_ROOT, 'test/fixtures/fake-kubectl/clusters');
const EXAMPLES = path.join(REPO_ROOT, 'examples/incidents');
/** Real incident_triage.sh stdout is about 3 KB; the old examples were 20–198 KB. */
const MAX_OUTPUT_BYTES = 8 * 1024;

async function kubectl(
  cluster: string | undefined,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH,
    ...(cluster ? { FAKE_KUBECTL_CLUSTER: path.join(CLUSTERS, cluster) } : {}),
  };
  try {
    const { stdout, stderr } = await run(KUBECTL, args, { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const examples = (await readdir(EXAMPLES, { withFileTypes: true }))
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

describe('saved triage of the shipped examples', () => {
  it('covers all five examples, each with a saved cluster for the fake kubectl', () => {
    expect(examples).toHaveLength(5);
    for (const name of examples)
      expect(existsSync(path.join(CLUSTERS, name, 'cluster.json')), name).toBe(true);
  });

  it.each(examples)(
    '%s: stdout is small, plain text, scoped to the incident namespace, and names the full report',
    async (name) => {
      const incident = JSON.parse(await readFile(path.join(EXAMPLES, name, 'incident.json'), 'utf8')) as {
        namespace: string;
      };
      const log = await readFile(path.join(EXAMPLES, name, 'saved-triage/output.log'), 'utf8');
      expect(Buffer.byteLength(log)).toBeLessThan(MAX_OUTPUT_BYTES);
      expect(log).not.toContain('\u001b[');
      expect(log).toContain(`Scope: Namespace '${incident.namespace}'`);
      expect(log).toContain(`Context: ${(await kubectl(name, 'config', 'current-context')).stdout.trim()}`);
      expect(log).toMatch(/^Full report: \/\S+\/triage-report\.md$/m);
      expect(await readFile(path.join(EXAMPLES, name, 'saved-triage/triage-report.md'), 'utf8')).toContain(
        '# Kubernetes Incident Triage Report',
      );
    },
  );

  it.each(examples)(
    '%s: the saved evidence is what the fake kubectl prints for the same calls',
    async (name) => {
      const { namespace } = JSON.parse(
        await readFile(path.join(EXAMPLES, name, 'incident.json'), 'utf8'),
      ) as {
        namespace: string;
      };
      const evidence = (file: string) =>
        readFile(path.join(EXAMPLES, name, 'saved-triage/evidence', file), 'utf8');
      const calls: [string, string[]][] = [
        ['nodes.txt', ['get', 'nodes', '-o', 'wide']],
        ['pods.txt', ['get', 'pods', '-n', namespace, '-o', 'wide']],
        [
          'warning-events.txt',
          ['get', 'events', '-n', namespace, '--field-selector', 'type=Warning', '--sort-by=.lastTimestamp'],
        ],
        ['all-events.txt', ['get', 'events', '-n', namespace, '--sort-by=.lastTimestamp']],
      ];
      if (existsSync(path.join(EXAMPLES, name, 'saved-triage/evidence/pods.json'))) {
        calls.push(['pods.json', ['get', 'pods', '-n', namespace, '-o', 'json']]);
      }
      for (const [file, args] of calls) {
        const got = await kubectl(name, ...args);
        expect(got.code, got.stderr).toBe(0);
        expect(got.stdout, `${file} vs kubectl ${args.join(' ')}`).toBe(await evidence(file));
      }
    },
  );
});

describe('fake kubectl', () => {
  it("reports OOMKilled containers in -o json the way the triage script's jq query reads them", async () => {
    const got = await kubectl('oomkilled-search-indexer', 'get', 'pods', '-n', 'search', '-o', 'json');
    const list = JSON.parse(got.stdout) as {
      items: {
        metadata: { name: string };
        status: { containerStatuses?: { lastState: { terminated?: { reason: string } } }[] };
      }[];
    };
    const oom = list.items
      .filter((p) => p.status.containerStatuses?.some((c) => c.lastState.terminated?.reason === 'OOMKilled'))
      .map((p) => p.metadata.name);
    expect(oom).toEqual([
      'search-indexer-6b8f7c9d4-2xkpd',
      'search-indexer-6b8f7c9d4-q7vlm',
      'search-indexer-6b8f7c9d4-wz8hn',
    ]);
  });

  it('filters pods by phase and prints the narrow table without headers', async () => {
    const got = await kubectl(
      'pending-ml-training',
      'get',
      'pods',
      '-n',
      'ml-training',
      '--field-selector=status.phase=Pending',
      '--no-headers',
    );
    expect(got.stdout).toBe('bert-finetune-nightly-29557500-vk8wq   0/1   Pending   0   15m\n');
  });

  it('serves saved describe output and previous logs with --tail', async () => {
    const describe = await kubectl(
      'failed-rollout-orders',
      'describe',
      'deployment',
      'orders-service',
      '-n',
      'orders',
    );
    expect(describe.stdout).toContain('Progressing    False   ProgressDeadlineExceeded');
    const logs = await kubectl(
      'oomkilled-search-indexer',
      'logs',
      'search-indexer-6b8f7c9d4-q7vlm',
      '-n',
      'search',
      '--previous',
      '--tail=1',
    );
    expect(logs.stdout).toBe(
      '2026-03-11 09:42:15.210 INFO  [indexer-bulk-3] c.e.search.indexer.BulkWriter - bulk flush starting docs=5000 writers_in_flight=4\n',
    );
  });

  it('refuses secrets and writes like RBAC refuses a read-only investigator, and answers NotFound for a missing pod', async () => {
    const secrets = await kubectl('failed-rollout-orders', 'get', 'secrets', '-n', 'orders');
    expect(secrets).toMatchObject({ code: 1, stdout: '' });
    expect(secrets.stderr).toMatch(
      /^Error from server \(Forbidden\): secrets is forbidden: .* cannot list resource "secrets"/,
    );
    const undo = await kubectl(
      'failed-rollout-orders',
      'rollout',
      'undo',
      'deployment/orders-service',
      '-n',
      'orders',
    );
    expect(undo.code).toBe(1);
    expect(undo.stderr).toContain('cannot patch resource "deployments" in API group "apps"');
    const missing = await kubectl('failed-rollout-orders', 'get', 'pod', 'nope', '-n', 'orders');
    expect(missing).toMatchObject({
      code: 1,
      stderr: 'Error from server (NotFound): pods "nope" not found\n',
    });
  });

  it('answers like an unconfigured kubectl when no saved cluster is selected', async () => {
    const got = await kubectl(undefined, 'get', 'pods');
    expect(got.code).toBe(1);
    expect(got.stderr).toContain('The connection to the server localhost:8080 was refused');
  });

  it("answers from the saved cluster whose context names $CLUSTER (the incident's), and from none for an unknown one", async () => {
    const env = { PATH: process.env.PATH, CLUSTER: 'prod-eu-west-1' };
    const { stdout } = await run(KUBECTL, ['config', 'current-context'], { env });
    expect(stdout.trim()).toBe('arn:aws:eks:eu-west-1:611927384402:cluster/prod-eu-west-1');
    await expect(
      run(KUBECTL, ['get', 'pods'], { env: { ...env, CLUSTER: 'prod-mars-1' } }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining('localhost:8080 was refused') });
  });
});
