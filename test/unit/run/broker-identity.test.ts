import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { emptySkills, fakeAdapter, tempDir, testConfig } from '../../support/runs.js';
import { FakeEngine } from './fake-engine.js';

// The daemon's readiness carries the broker-identity check when its engine gives runs a kubectl broker:
// a stand-in kubectl (a two-line script) answers `auth can-i` and records how it was asked.

/** Answers yes to `delete pods`, no to everything else, and records argv and KUBECONFIG. */
const CAN_I = `#!/bin/sh
echo "$KUBECONFIG $*" >> "$(dirname "$0")/asked.txt"
case "$*" in *"can-i delete pods "*) echo yes ;; *) echo no; exit 1 ;; esac
`;

describe('readiness: broker-identity', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    root = await tempDir('triage-identity-unit-');
    await writeFile(path.join(root.dir, 'kubectl'), CAN_I, { mode: 0o755 });
  });
  afterEach(async () => root.cleanup());

  const readiness = (engine: FakeEngine, flags: Record<string, unknown>) =>
    createRunExecutor({
      config: testConfig(root.dir, flags),
      log: silentLogger(),
      redactor: new Redactor({}),
      secrets: { ANTHROPIC_API_KEY: 'k' },
      audit: new AuditLog(),
      env: { PATH: '/usr/bin:/bin' },
      engine,
      skills: emptySkills(),
      daemonId: 'daemon-test',
      agents: () => fakeAdapter('claude'),
    }).readiness();

  it('reports a broker that may delete pods as degraded, asking with kubectl.kubeconfig and kubectl.as', async () => {
    const engine = new FakeEngine();
    Object.assign(engine, { capabilities: { ...engine.capabilities, bundleSockets: true } });
    const r = await readiness(engine, {
      kubectl: { command: path.join(root.dir, 'kubectl'), kubeconfig: '/etc/broker.yaml', as: 'viewer' },
    });
    expect(r).toMatchObject({ ok: true, degraded: true });
    expect(r.checks.find((c) => c.name === 'broker-identity')).toMatchObject({
      ok: true,
      degraded: true,
      detail: expect.stringMatching(/^the broker's identity \(as viewer\) may delete pods: /),
    });
    const asked = (await readFile(path.join(root.dir, 'asked.txt'), 'utf8')).trim().split('\n');
    expect(asked).toHaveLength(12);
    expect(asked).toContain('/etc/broker.yaml --as=viewer auth can-i delete pods --all-namespaces');
  });

  it('asks every cluster registry entry with its own kubeconfig and context, and names each in its check', async () => {
    const engine = new FakeEngine();
    Object.assign(engine, { capabilities: { ...engine.capabilities, bundleSockets: true } });
    // The stand-in answers yes to `delete pods` for any kubeconfig: prod's is a cluster-admin one.
    await writeFile(
      path.join(root.dir, 'kubectl'),
      `#!/bin/sh\necho "$KUBECONFIG $*" >> "$(dirname "$0")/asked.txt"\ncase "$KUBECONFIG $*" in */prod.yaml*"can-i delete pods "*) echo yes ;; *) echo no; exit 1 ;; esac\n`,
      { mode: 0o755 },
    );
    const r = await readiness(engine, {
      kubectl: { command: path.join(root.dir, 'kubectl') },
      clusters: {
        prod: { kubeconfig: '/etc/clusters/prod.yaml' },
        staging: { kubeconfig: '/etc/clusters/staging.yaml', context: 'readonly' },
      },
    });
    const identity = r.checks.filter((c) => c.name.startsWith('broker-identity'));
    expect(identity).toEqual([
      {
        name: 'broker-identity:prod',
        ok: true,
        degraded: true,
        detail: expect.stringMatching(
          /^cluster prod's broker kubeconfig may delete pods: .*clusters\.prod\.kubeconfig with a ServiceAccount/,
        ),
      },
      {
        name: 'broker-identity:staging',
        ok: true,
        detail:
          "cluster staging's broker kubeconfig (context readonly) is read-only: it cannot change the cluster, read Secrets or reach workloads",
      },
    ]);
    expect(r.degraded).toBe(true);
    const asked = (await readFile(path.join(root.dir, 'asked.txt'), 'utf8')).trim().split('\n');
    expect(asked).toHaveLength(24);
    expect(asked).toContain('/etc/clusters/prod.yaml auth can-i delete pods --all-namespaces');
    expect(asked).toContain(
      '/etc/clusters/staging.yaml --context=readonly auth can-i delete pods --all-namespaces',
    );
  });

  it('has no broker-identity check when the engine has no broker or the guard is off', async () => {
    const plain = await readiness(new FakeEngine(), { kubectl: { command: path.join(root.dir, 'kubectl') } });
    expect(plain.checks.map((c) => c.name)).not.toContain('broker-identity');
    const engine = new FakeEngine();
    Object.assign(engine, { capabilities: { ...engine.capabilities, bundleSockets: true } });
    const off = await readiness(engine, {
      kubectl: { guard: false, command: path.join(root.dir, 'kubectl') },
    });
    expect(off.checks.map((c) => c.name)).not.toContain('broker-identity');
  });
});
