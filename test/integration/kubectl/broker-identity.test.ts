import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBroker } from '../../../src/kubectl/broker/broker.js';
import { encodeRequest } from '../../../src/kubectl/guard/protocol.js';
import { checkBrokerIdentity } from '../../../src/kubectl/broker/identity.js';
import { brokerIdentityProbe } from '../../../src/run/broker-identity.js';
import { compilePolicy, DEFAULT_HELPERS } from '../../../src/kubectl/policy/policy.js';
import { tempDir, testConfig } from '../../support/runs.js';
import {
  startStandInApiServer,
  type AccessReview,
  type StandInApiServer,
} from '../../support/stand-in-apiserver.js';
import net from 'node:net';

// The broker-identity check with the real kubectl (.ci/install-test-tools.sh) against a stand-in API
// server that answers `kubectl auth can-i` as an RBAC setup would: an identity that may mutate, read
// Secrets or reach workloads is reported degraded with the fix; a read-only one is not; kubectl.as
// impersonates on the check and on every brokered call.

const KUBECTL = process.env.TRIAGE_TEST_KUBECTL ?? 'kubectl';

let root: { dir: string; cleanup: () => Promise<void> };
let server: StandInApiServer | undefined;
let others: StandInApiServer[] = [];

beforeEach(async () => {
  execFileSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' });
  root = await tempDir('triage-identity-');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await Promise.all(others.map((o) => o.close()));
  others = [];
  await root.cleanup();
});

async function cluster(allows: (r: AccessReview) => boolean): Promise<Record<string, string>> {
  server = await startStandInApiServer({ allows });
  const kubeconfig = await kubeconfigFor(server, 'kubeconfig.yaml');
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root.dir, KUBECONFIG: kubeconfig };
}

/** A kubeconfig for `api` with two contexts on it, `c` (the current one) and `readonly`. */
async function kubeconfigFor(api: StandInApiServer, file: string): Promise<string> {
  const kubeconfig = path.join(root.dir, file);
  await writeFile(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${api.url}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}, {name: readonly, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
  );
  return kubeconfig;
}

describe('broker-identity check', () => {
  it('reports an identity that may delete pods and read Secrets as degraded, naming what it may do and the fix', async () => {
    const env = await cluster(
      (r) => (r.verb === 'delete' && r.resource === 'pods') || (r.resource === 'secrets' && r.verb === 'get'),
    );
    const check = await checkBrokerIdentity({ command: KUBECTL, env });
    expect(check).toMatchObject({ name: 'broker-identity', ok: true, degraded: true });
    expect(check.detail).toMatch(/^the broker's kubeconfig may delete pods, get secrets: /);
    expect(check.detail).toMatch(/kubectl\.kubeconfig .* or kubectl\.as/);
  });

  it('passes a read-only identity, asking about exec and proxy too', async () => {
    const env = await cluster((r) => r.verb === 'get' && r.resource === 'pods' && r.subresource === '');
    const check = await checkBrokerIdentity({ command: KUBECTL, env });
    expect(check).toEqual({
      name: 'broker-identity',
      ok: true,
      detail:
        "the broker's kubeconfig is read-only: it cannot change the cluster, read Secrets or reach workloads",
    });
    const asked = server?.take().filter((r) => r.method === 'POST') ?? [];
    expect(asked.length).toBe(12);
  });

  it('asks as the kubectl.as user, and the broker runs every allowed call as that user', async () => {
    const env = await cluster((r) => r.as !== 'triage-readonly' && r.verb === 'delete');
    const check = await checkBrokerIdentity({ command: KUBECTL, env, as: 'triage-readonly' });
    expect(check.degraded).toBeUndefined();
    expect(check.detail).toMatch(/\(as triage-readonly\) is read-only/);
    server?.take();
    const broker = await startBroker({
      socketPath: path.join(root.dir, 'kubectl.sock'),
      policy: compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in'),
      kubectl: { command: KUBECTL, env, cwd: root.dir, prefixArgs: ['--as=triage-readonly'] },
      callTimeoutMs: 20_000,
      onCall: () => undefined,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const s = net.createConnection(broker.socketPath);
        s.on('data', () => undefined);
        s.on('close', () => resolve());
        s.on('error', reject);
        // The guard client keeps its side open while it waits (its end would stop the call).
        s.write(encodeRequest({ v: 1, argv: ['get', 'pods', '-n', 'payments'] }));
      });
    } finally {
      await broker.stop();
    }
    const calls = server?.take().filter((r) => r.path.startsWith('/api/v1/namespaces/payments/pods')) ?? [];
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) expect(c.as).toBe('triage-readonly');
  });

  it('asks every cluster registry entry, and flags the cluster-admin one by name', async () => {
    const admin = await startStandInApiServer({ allows: () => true });
    const viewer = await startStandInApiServer({
      allows: (r) => r.verb === 'get' && r.resource === 'pods' && r.subresource === '',
    });
    others = [admin, viewer];
    const config = testConfig(root.dir, {
      kubectl: { command: KUBECTL },
      clusters: {
        prod: { kubeconfig: await kubeconfigFor(admin, 'prod.yaml') },
        staging: { kubeconfig: await kubeconfigFor(viewer, 'staging.yaml'), context: 'readonly' },
      },
    });
    const probe = brokerIdentityProbe(config, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root.dir });
    const checks = (await probe?.()) ?? [];
    expect(checks.map((c) => [c.name, c.degraded === true])).toEqual([
      ['broker-identity:prod', true],
      ['broker-identity:staging', false],
    ]);
    expect(checks[0]?.detail).toMatch(
      /^cluster prod's broker kubeconfig may create pods, delete pods, .*get secrets, list secrets, create pods\/exec/,
    );
    expect(checks[1]?.detail).toBe(
      "cluster staging's broker kubeconfig (context readonly) is read-only: it cannot change the cluster, read Secrets or reach workloads",
    );
    // Each entry was asked on its own cluster.
    expect(admin.take().filter((r) => r.method === 'POST')).toHaveLength(12);
    expect(viewer.take().filter((r) => r.method === 'POST')).toHaveLength(12);
  });

  it('says when the cluster cannot be asked, without failing readiness', async () => {
    const check = await checkBrokerIdentity({
      command: KUBECTL,
      env: { PATH: process.env.PATH ?? '', HOME: root.dir, KUBECONFIG: path.join(root.dir, 'missing.yaml') },
      timeoutMs: 5_000,
    });
    expect(check).toMatchObject({ ok: true, degraded: true });
    expect(check.detail).toMatch(/^could not ask the cluster what the broker's kubeconfig may do/);
  });
});
