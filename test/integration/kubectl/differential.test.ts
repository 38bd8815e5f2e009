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
import { dashEverywhere, generatedCalls } from './generated-calls.js';

// The guard against the real kubectl (installed by .ci/install-test-tools.sh): every generated command
// line is decided with the shipped read-only policy, and every allowed one is run with kubectl against
// a recording stand-in API server. An allowed call may only reach GET on paths that are not Secrets and
// not through the API server to a workload (proxy, exec, attach, port-forward), and may print nothing
// of the daemon's side (its kubeconfig's path, its token); a parser change that opens a hole fails
// here with the command line and the request it let through. The seeded command lines
// (generated-calls.ts) are all run, refused ones too: whatever kubectl would fetch Secrets with, the
// guard must refuse.

const KUBECTL = process.env.TRIAGE_TEST_KUBECTL ?? 'kubectl';
const WORKERS = 8;
const CALL_TIMEOUT_MS = 3_000;
const policy = compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in');
const TOKEN = 'stand-in-token-5f0c1e';
/** The seed of the generated command lines: set TRIAGE_TEST_SEED to explore others, keep one to reproduce. */
const SEED = Number(process.env.TRIAGE_TEST_SEED ?? 40);
const GENERATED = 400;

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
          `users: [{name: agent, user: {token: ${TOKEN}}}]`,
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

/** What one kubectl run did: the requests that reached the stand-in, and what it printed. */
interface Seen {
  requests: RecordedRequest[];
  output: string;
}

/** Runs kubectl with `argv` on one worker's stand-in server. */
function runKubectl(worker: Worker, argv: readonly string[]): Promise<Seen> {
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
      (_err, stdout, stderr) => resolve({ requests: worker.server.take(), output: `${stdout}${stderr}` }),
    );
  });
}

/**
 * What of the daemon's side an allowed call printed: the path of its kubeconfig (every worker's is
 * `<root>/kubeconfig-<n>.yaml`) or the token in it. (`kubectl options` prints the default --cache-dir
 * under the daemon's HOME, which names no credential.)
 */
function leak(output: string): string | undefined {
  const kubeconfigs = path.join(root.dir, 'kubeconfig-');
  if (output.includes(kubeconfigs)) return `the daemon's kubeconfig path ${kubeconfigs}…`;
  if (output.includes(TOKEN)) return 'the kubeconfig token';
  return undefined;
}

/** Runs every argv with kubectl, WORKERS at a time, each worker on its own server. */
async function runAll(all: readonly (readonly string[])[]): Promise<Map<readonly string[], Seen>> {
  const out = new Map<readonly string[], Seen>();
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
    const breaches = attacks.map((argv) => (seen.get(argv)?.requests ?? []).map(breach).filter(Boolean));
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

  it('every generated call the guard allows reaches only GET on paths that are not Secrets or workloads, and prints nothing of the daemon side', async () => {
    const variants = argvVariants();
    const allowed = variants.filter((argv) => decideCall({ argv }, policy).allowed);
    // Not vacuous: the shipped policy allows a good share of what an investigation needs.
    expect(variants.length).toBeGreaterThan(2000);
    expect(allowed.length).toBeGreaterThan(300);
    const seen = await runAll(allowed);
    const problems: string[] = [];
    let reached = 0;
    for (const argv of allowed) {
      const { requests = [], output = '' } = seen.get(argv) ?? {};
      if (requests.some((r) => !DISCOVERY.test(r.path))) reached++;
      for (const request of requests) {
        const why = breach(request);
        if (why) problems.push(`kubectl ${argv.join(' ')} → ${why}`);
      }
      const printed = leak(output);
      if (printed) problems.push(`kubectl ${argv.join(' ')} printed ${printed}`);
    }
    expect(problems).toEqual([]);
    // The stand-in answered: calls reached it (a kubectl that never connects would prove nothing).
    expect(reached).toBeGreaterThan(allowed.length / 2);
  }, 600_000);
});

/** The `--` forms found attacking the guard: its parser stopped at `--` and allowed each as a read. */
const DASH_ATTACKS = [
  ['get', '-o', 'yaml', '--', 'secrets'],
  ['get', '-A', '--', 'secrets'],
  ['wait', '--for=delete', '--timeout=1s', '--', 'secret/x'],
  ['describe', '--', 'sa'],
  ['describe', '--', 'secrets'],
  ['get', '-o', 'json', '--', 'pods,secrets'],
  ['rollout', 'status', '--timeout=1s', '--', 'secret/db'],
  ['apply', 'view-last-applied', '--', 'secret/db'],
];

/** The reads an agent writes with `--` that kubectl answers from pods: allowed, and they reach the API. */
const DASH_READS = [
  ['get', 'pods'],
  ['get', '--', 'pods'],
  ['get', 'pods', '-n', 'payments', '--', 'evidence-1'],
  ['logs', '--', 'web-1'],
  ['logs', 'web-1', '--', 'app'],
  ['top', 'pod', '--', 'web-1'],
];

/** Each call whose requests break the read-only promise but which the guard allows. */
function letThrough(all: readonly (readonly string[])[], seen: Map<readonly string[], Seen>): string[] {
  const out: string[] = [];
  for (const argv of all) {
    const why = (seen.get(argv)?.requests ?? []).map(breach).find(Boolean);
    if (why && decideCall({ argv }, policy).allowed) out.push(`kubectl ${argv.join(' ')} → ${why}`);
  }
  return out;
}

describe('the kubectl guard against the real kubectl: `--` and generated command lines', () => {
  it('kubectl reads the words after -- as resources: the forms the old parser let through reach Secrets and are refused', async () => {
    const seen = await runAll(DASH_ATTACKS);
    for (const argv of DASH_ATTACKS) {
      const breaches = (seen.get(argv)?.requests ?? []).map(breach).filter(Boolean);
      expect(breaches, argv.join(' ')).toContainEqual(expect.stringMatching(/^Secret path /));
      const d = decideCall({ argv }, policy);
      expect(d, argv.join(' ')).toMatchObject({ allowed: false, rule: 'exclude "kubectl @secret-read"' });
    }
  }, 120_000);

  it('allows the reads written with -- and kubectl answers them from the API', async () => {
    const seen = await runAll(DASH_READS);
    for (const argv of DASH_READS) {
      expect(decideCall({ argv }, policy).allowed, argv.join(' ')).toBe(true);
      const requests = seen.get(argv)?.requests ?? [];
      expect(requests.map(breach).filter(Boolean), argv.join(' ')).toEqual([]);
      expect(
        requests.some((r) => /\/(pods|metrics\.k8s\.io\/v1beta1\/namespaces\/[^/]+\/pods)\b/.test(r.path)),
        argv.join(' '),
      ).toBe(true);
    }
  }, 120_000);

  it('refuses every call with -- in any place that makes kubectl fetch Secrets', async () => {
    const bases = [
      ['get', '-o', 'yaml', 'secrets'],
      ['describe', '-n', 'payments', 'sa', 'default'],
      ['wait', '--for=delete', '--timeout=1s', 'secret/x'],
      ['logs', 'secret/db', '--tail=1'],
      ['get', 'pods', '-n', 'payments'],
      ['rollout', 'history', 'secret/db'],
      ['auth', 'can-i', 'get', 'secrets'],
    ];
    const all = bases.flatMap(dashEverywhere);
    const seen = await runAll(all);
    expect(letThrough(all, seen)).toEqual([]);
    // Not vacuous: most of these do reach Secrets in kubectl.
    const reaching = all.filter((argv) => (seen.get(argv)?.requests ?? []).some((r) => breach(r)));
    expect(reaching.length).toBeGreaterThan(all.length / 3);
  }, 300_000);

  it(`seed ${SEED}: refuses every generated call that reaches Secrets, allows every ordinary read, and no allowed call prints the daemon side`, async () => {
    const calls = generatedCalls(SEED, GENERATED);
    const all = calls.map((c) => c.argv);
    const seen = await runAll(all);
    expect(letThrough(all, seen)).toEqual([]);
    const problems: string[] = [];
    let reached = 0;
    const ordinary = calls.filter((c) => c.ordinary);
    for (const { argv } of ordinary) {
      const d = decideCall({ argv }, policy);
      if (!d.allowed) problems.push(`kubectl ${argv.join(' ')} refused: ${d.message ?? d.rule}`);
      if ((seen.get(argv)?.requests ?? []).some((r) => !DISCOVERY.test(r.path))) reached++;
    }
    for (const argv of all) {
      const printed = leak(seen.get(argv)?.output ?? '');
      if (printed && decideCall({ argv }, policy).allowed)
        problems.push(`kubectl ${argv.join(' ')} printed ${printed}`);
    }
    expect(problems).toEqual([]);
    // Not vacuous: the generator makes attacks kubectl carries out, and ordinary reads that reach the API.
    const attacks = all.filter((argv) => (seen.get(argv)?.requests ?? []).some((r) => breach(r)));
    expect(attacks.length).toBeGreaterThan(GENERATED / 10);
    expect(ordinary.length).toBeGreaterThan(GENERATED / 4);
    expect(reached).toBeGreaterThan(ordinary.length * 0.7);
  }, 600_000);
});
