import { execFile, execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalRawPath } from '../../../src/kubectl/policy/classify.js';
import { decideCall } from '../../../src/kubectl/policy/decide.js';
import { compilePolicy, DEFAULT_HELPERS } from '../../../src/kubectl/policy/policy.js';
import { tempDir } from '../../support/runs.js';
import {
  startStandInApiServer,
  type RecordedRequest,
  type StandInApiServer,
} from '../../support/stand-in-apiserver.js';
import { argvVariants } from './argv-variants.js';

// The guard against the real kubectl (installed by .ci/install-test-tools.sh): every generated command
// line is decided with the shipped read-only policy, and every allowed one is run with kubectl against
// a recording stand-in API server. An allowed call may only reach GET on paths that are not Secrets and
// not through the API server to a workload (proxy, exec, attach, port-forward); a parser change that
// opens a hole fails here with the command line and the request it let through.

const KUBECTL = process.env.TRIAGE_TEST_KUBECTL ?? 'kubectl';
const WORKERS = 8;
const CALL_TIMEOUT_MS = 3_000;
const policy = compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in');

/** Reviews kubectl creates to ask about its own access (`auth can-i`, `auth whoami`): nothing is stored. */
const SELF_REVIEWS =
  /^\/apis\/authorization\.k8s\.io\/v1\/selfsubject(access|rules)reviews$|^\/apis\/authentication\.k8s\.io\/v1\/selfsubjectreviews$/;

/** Discovery and version requests every kubectl makes before the call itself. */
const DISCOVERY = /^\/(version|api|apis)(\/[^/?]+){0,2}(\?|$)/;

/** Why a request an allowed call made breaks the read-only promise, or undefined. */
function breach(request: RecordedRequest): string | undefined {
  const canonical = canonicalRawPath(request.path) ?? request.path.toLowerCase();
  const bare = canonical.split('?')[0] ?? '';
  if (request.method !== 'GET' && !(request.method === 'POST' && SELF_REVIEWS.test(bare)))
    return `${request.method} ${request.path}`;
  if (/^\/api\/v1\/(namespaces\/[^/]+\/)?secrets(\/|$)/.test(bare)) return `Secret path ${request.path}`;
  if (
    /\/(pods|services|nodes)\/[^/]+\/(proxy|exec|attach|portforward)(\/|$)/.test(bare) ||
    bare.startsWith('/api/v1/proxy')
  )
    return `workload path ${request.path}`;
  return undefined;
}

interface Worker {
  server: StandInApiServer;
  kubeconfig: string;
}

let root: { dir: string; cleanup: () => Promise<void> };
let workers: Worker[] = [];

beforeAll(async () => {
  try {
    execFileSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      `the differential test needs the real kubectl (${KUBECTL}): run .ci/install-test-tools.sh, or set TRIAGE_TEST_KUBECTL`,
    );
  }
  root = await tempDir('triage-differential-');
  workers = await Promise.all(
    Array.from({ length: WORKERS }, async (_, i) => {
      const server = await startStandInApiServer();
      const kubeconfig = path.join(root.dir, `kubeconfig-${i}.yaml`);
      await writeFile(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          `clusters: [{name: stand-in, cluster: {server: "${server.url}"}}]`,
          'users: [{name: agent, user: {token: stand-in-token}}]',
          'contexts: [{name: stand-in, context: {cluster: stand-in, user: agent, namespace: payments}}]',
          'current-context: stand-in',
          '',
        ].join('\n'),
      );
      return { server, kubeconfig };
    }),
  );
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.server.close()));
  await root?.cleanup();
});

/** Runs kubectl with `argv` on one worker's stand-in server and returns the requests that arrived. */
function runKubectl(worker: Worker, argv: readonly string[]): Promise<RecordedRequest[]> {
  worker.server.take();
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      [...argv],
      {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root.dir, KUBECONFIG: worker.kubeconfig },
        timeout: CALL_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
      },
      () => resolve(worker.server.take()),
    );
  });
}

/** Runs every argv with kubectl, WORKERS at a time, each worker on its own server. */
async function runAll(
  all: readonly (readonly string[])[],
): Promise<Map<readonly string[], RecordedRequest[]>> {
  const out = new Map<readonly string[], RecordedRequest[]>();
  let next = 0;
  await Promise.all(
    workers.map(async (worker) => {
      while (next < all.length) {
        const argv = all[next++] as readonly string[];
        out.set(argv, await runKubectl(worker, argv));
      }
    }),
  );
  return out;
}

describe('the kubectl guard against the real kubectl', () => {
  it('the harness sees a breach: without the guard, the attacks reach the API server as DELETE and PATCH', async () => {
    const attacks = [
      ['-A', 'events', 'delete', '--all'],
      ['--cascade', 'events', 'delete', 'evidence-1', '-n', 'payments'],
      ['-R', 'events', 'label', '--all', 'pwned=1'],
      ['get', '--raw', '/api/v1/namespaces/payments/%73ecrets'],
    ];
    const seen = await runAll(attacks);
    const breaches = attacks.map((argv) => (seen.get(argv) ?? []).map(breach).filter(Boolean));
    expect(breaches[0]).toContainEqual(
      expect.stringMatching(/^DELETE \/api\/v1\/namespaces\/default\/events\/evidence-1/),
    );
    expect(breaches[1]).toContainEqual(
      expect.stringMatching(/^DELETE \/api\/v1\/namespaces\/payments\/events\/evidence-1/),
    );
    expect(breaches[2]).toContainEqual(
      expect.stringMatching(/^PATCH \/api\/v1\/namespaces\/payments\/events\/evidence-1/),
    );
    expect(breaches[3]).toEqual(['Secret path /api/v1/namespaces/payments/secrets']);
    for (const argv of attacks) expect(decideCall({ argv }, policy).allowed, argv.join(' ')).toBe(false);
  }, 120_000);

  it('every generated call the guard allows reaches only GET on paths that are not Secrets or workloads', async () => {
    const variants = argvVariants();
    const allowed = variants.filter((argv) => decideCall({ argv }, policy).allowed);
    // Not vacuous: the shipped policy allows a good share of what an investigation needs.
    expect(variants.length).toBeGreaterThan(2000);
    expect(allowed.length).toBeGreaterThan(300);
    const seen = await runAll(allowed);
    const problems: string[] = [];
    let reached = 0;
    for (const argv of allowed) {
      const requests = seen.get(argv) ?? [];
      if (requests.some((r) => !DISCOVERY.test(r.path))) reached++;
      for (const request of requests) {
        const why = breach(request);
        if (why) problems.push(`kubectl ${argv.join(' ')} → ${why}`);
      }
    }
    expect(problems).toEqual([]);
    // The stand-in answered: calls reached it (a kubectl that never connects would prove nothing).
    expect(reached).toBeGreaterThan(allowed.length / 2);
  }, 600_000);
});
