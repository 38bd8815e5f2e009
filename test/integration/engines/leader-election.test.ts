// Two real `triage-runner daemon` processes with leader election on, against the fake Kubernetes API
// server (Leases, Jobs, pods, logs over real HTTP): exactly one leads and starts the Jobs; SIGKILL it
// and the standby takes the Lease once it runs out, adopts the Jobs still running and starts none twice.
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliDaemon, until, type CliDaemon } from '../../support/cli-daemon.js';
import { FakeKubeApi } from '../../support/fake-kube-api.js';
import { daemonKubectl } from '../../support/guard.js';
import { dropByRename, incidentJson, tempRoot, waitForState } from '../../support/incidents.js';
import { freePort } from '../../support/net.js';
import { messageRequests, startAnthropic, type AnthropicFake } from '../../support/providers/anthropic.js';
import { REPO_ROOT } from '../../support/runs.js';

// Generous for a loaded 2-core machine running the daemons from TypeScript sources: a leader whose
// event loop stalls past the renew deadline steps down, as it must.
const LEASE_DURATION_MS = 6000;
const RENEW_DEADLINE_MS = 4000;
const RETRY_MS = 500;
const LEASE = 'triage-runner/triage-runner';

let root: string;
let cleanup: () => Promise<void>;
let api: FakeKubeApi;
let model: AnthropicFake;
const daemons: CliDaemon[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-leader-'));
  api = await new FakeKubeApi().start();
  model = await startAnthropic();
});

afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons.length = 0;
  await api.close();
  await model.close();
  await cleanup();
});

interface Replica {
  daemon: CliDaemon;
  port: number;
  brokerPort: number;
  name: string;
}

async function startReplica(name: string, kubeconfig: string, kubectl: string): Promise<Replica> {
  const port = await freePort();
  const brokerPort = await freePort();
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  const daemon = await startCliDaemon({
    dir,
    config: {
      workspaces_root: path.join(root, 'workspaces'),
      engine: 'kubernetes',
      // A Job sees only the volume: the personas and briefs live on it, as in the Deployment.
      personas_dir: path.join(root, 'configs', 'personas'),
      briefs_dir: path.join(root, 'configs', 'briefs'),
      kubernetes: {
        namespace: 'triage-runner',
        // Each replica's pod broker; on a cluster both sit behind one Service URL.
        broker: { port: brokerPort, host: '127.0.0.1', url: `http://127.0.0.1:${brokerPort}` },
      },
      // The stand-in kubectl counts the broker's calls: no access-check probes among them.
      kubectl: { command: kubectl, access_check: false },
      // The model gateway's upstream: a stand-in that records the key it receives.
      providers: { anthropic_base_url: model.url },
      leader_election: {
        enabled: true,
        identity: name,
        lease_duration: LEASE_DURATION_MS,
        renew_deadline: RENEW_DEADLINE_MS,
        retry_period: RETRY_MS,
      },
      scheduling: { lease_ttl: '2s', rescan_interval: '500ms' },
      http: { port, host: '127.0.0.1' },
    },
    args: [],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      KUBECONFIG: kubeconfig,
      ANTHROPIC_API_KEY: 'sk-ant-test-leader-0123456789',
      // The downward API's: the daemon labels its own pod with its role.
      POD_NAME: name,
      POD_NAMESPACE: 'triage-runner',
    },
    readyPattern: /standing by/,
  });
  daemons.push(daemon);
  return { daemon, port, brokerPort, name };
}

const holder = () => (api.leases.get(LEASE)?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
const leaseSpec = () =>
  api.leases.get(LEASE)?.spec as { holderIdentity: string; renewTime: string; acquireTime: string };

/** One `kubectl get pods` through a replica's pod broker with a run token; the HTTP status. */
async function brokerCall(port: number, token: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/kubectl`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: `${JSON.stringify({ v: 1, argv: ['get', 'pods', '-n', 'shop'] })}\n`,
  }).catch(() => undefined);
  await res?.arrayBuffer();
  return res?.status ?? 0;
}

/** One model call through a replica's Service port with a run token, as an agent pod makes it; the HTTP status. */
async function modelCall(port: number, token: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': token, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [] }),
  }).catch(() => undefined);
  await res?.arrayBuffer();
  return res?.status ?? 0;
}

async function readyz(port: number): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, body: await res.text() };
}

describe('two daemons electing a leader with a Lease', () => {
  it('exactly one leads; killed, the standby takes over within the lease, adopts the running Jobs and starts none twice', async () => {
    for (const d of ['personas', 'briefs'])
      await cp(path.join(REPO_ROOT, 'configs', d), path.join(root, 'configs', d), { recursive: true });
    const kubeconfig = path.join(root, 'kubeconfig');
    await writeFile(kubeconfig, api.kubeConfig().exportConfig());
    const kubectl = await daemonKubectl(path.join(root, 'daemon-bin'));
    for (const pod of ['pod-a', 'pod-b'])
      api.addPod(pod, 'triage-runner', { 'app.kubernetes.io/component': 'daemon' });
    const role = (pod: string) => api.pods.get(pod)?.metadata?.labels?.['triage-runner.io/role'];
    const a = await startReplica('pod-a', kubeconfig, kubectl.command);
    const b = await startReplica('pod-b', kubeconfig, kubectl.command);
    const both = () => `pod-a: ${a.daemon.tail()}\npod-b: ${b.daemon.tail()}`;

    const leaderName = await until('a leader', 20_000, async () => holder() || undefined, both);
    const [leader, standby] = leaderName === 'pod-a' ? [a, b] : [b, a];
    await until('the leader ready', 20_000, async () =>
      /daemon ready/.test(leader.daemon.logs()) ? true : undefined,
    );
    // The Service selects the leader's pod by its role label.
    await until('the role labels', 10_000, async () =>
      role(leader.name) === 'leader' && role(standby.name) === 'standby' ? true : undefined,
    );
    // The standby is alive and ready (rollouts, the PodDisruptionBudget), says it stands by, and never
    // started intake.
    expect((await fetch(`http://127.0.0.1:${standby.port}/healthz`)).status).toBe(200);
    const standbyReady = await readyz(standby.port);
    expect(standbyReady.body).toContain(`standby (leader: ${leader.name})`);
    expect(standbyReady.status, standbyReady.body).toBe(200);
    expect(standby.daemon.logs()).not.toMatch(/daemon ready/);
    expect(await readyz(leader.port).then((r) => r.body)).not.toContain('standby');

    // Two incidents: the leader starts one Job each, whose pods are running.
    const workspaces = path.join(root, 'workspaces');
    const dirs = await Promise.all(
      ['one', 'two'].map((f) => dropByRename(workspaces, f, incidentJson({ incidentId: `inc-${f}` }))),
    );
    await until('two Jobs', 30_000, async () => (api.jobs.size === 2 ? true : undefined), both);
    for (const job of api.jobs.keys()) {
      const pod = api.setPod(job, { running: { startedAt: new Date().toISOString() } });
      api.appendLog(pod, `agent of ${job} at work\n`);
    }
    for (const dir of dirs) await waitForState(dir, ['running'], 30_000);
    // The agent's kubectl token, as the pod finds it next to its guard.
    const runDir = async (dir: string) => {
      const state = JSON.parse(await readFile(path.join(dir, '.triage', 'state.json'), 'utf8')) as {
        runs: { id: string }[];
      };
      return path.join(dir, '.triage', 'runs', state.runs.at(-1)!.id);
    };
    const firstRun = await runDir(dirs[0]!);
    const token = (
      await readFile(path.join(firstRun, 'kubectl-guard', 'token'), 'utf8').catch(async (err: unknown) => {
        const { readdir } = await import('node:fs/promises');
        throw new Error(
          `${String(err)}; run folder: ${(await readdir(firstRun).catch(() => [])).join(' ')}; state: ${await readFile(path.join(dirs[0]!, '.triage', 'state.json'), 'utf8')}`,
        );
      })
    ).trim();
    expect(await brokerCall(leader.brokerPort, token)).toBe(200);
    expect(await brokerCall(standby.brokerPort, token)).not.toBe(200);
    // The agent's model key: its run token at the gateway, on the same port.
    const modelToken = (await readFile(path.join(firstRun, 'gateway-pod', 'token'), 'utf8')).trim();
    expect(await modelCall(leader.brokerPort, modelToken)).toBe(200);
    expect(await modelCall(standby.brokerPort, modelToken)).not.toBe(200);

    // SIGKILL the leader: no release, no goodbye. Its last renewal is what the standby waits out.
    leader.daemon.child.kill('SIGKILL');
    await until('the leader gone', 10_000, async () =>
      leader.daemon.child.exitCode !== null || leader.daemon.child.signalCode !== null ? true : undefined,
    );
    const lastRenew = Date.parse(leaseSpec().renewTime);
    await until(
      'the standby leads',
      20_000,
      async () => (holder() === standby.name ? true : undefined),
      both,
    );
    // Taken once the Lease ran out, judged on the standby's own clock: at most one lease duration after
    // the last renewal plus two retry periods (one to see that renewal, one to try again), and a second
    // of slack for a loaded machine.
    const acquired = Date.parse(leaseSpec().acquireTime);
    expect(acquired - lastRenew).toBeLessThanOrEqual(LEASE_DURATION_MS + 2 * RETRY_MS + 1000);
    expect(acquired - lastRenew).toBeGreaterThanOrEqual(LEASE_DURATION_MS - RETRY_MS);

    // The new leader adopts both running Jobs (no new Job) and finishes them when their pods end.
    // `reattached` is audited when the run is found; its kubectl broker and then its model gateway come
    // back after it, and `gateway_resumed` is audited once both are.
    for (const dir of dirs) {
      await until(
        `adoption in ${dir}`,
        30_000,
        async () => {
          const audit = await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8');
          return audit.includes('"reattached"') && audit.includes('"gateway_resumed"') ? true : undefined;
        },
        both,
      );
    }
    expect(api.requestsTo('POST', '/jobs')).toHaveLength(2);
    // The agent's token works with the new leader: it registered the same one when it adopted the run.
    expect(await brokerCall(standby.brokerPort, token)).toBe(200);
    expect(await kubectl.calls()).toHaveLength(2);
    // And its model calls go on: the new leader took the run's gateway back from the token's hash.
    expect(await modelCall(standby.brokerPort, modelToken)).toBe(200);
    expect(messageRequests(model).map((r) => r.headers['x-api-key'])).toEqual([
      'sk-ant-test-leader-0123456789',
      'sk-ant-test-leader-0123456789',
    ]);
    for (const job of [...api.jobs.keys()]) api.finishJob(job, 0);
    for (const dir of dirs) {
      const state = await waitForState(dir, ['succeeded', 'failed'], 30_000);
      expect(state.runs, both()).toHaveLength(1);
    }
    expect(api.requestsTo('POST', '/jobs')).toHaveLength(2);
    expect(await readyz(standby.port).then((r) => r.body)).not.toContain('standby');
    expect(role(standby.name)).toBe('leader');
  });

  it('a leader that cannot renew exits (status 1) before its Lease can pass to another replica', async () => {
    for (const d of ['personas', 'briefs'])
      await cp(path.join(REPO_ROOT, 'configs', d), path.join(root, 'configs', d), { recursive: true });
    const kubeconfig = path.join(root, 'kubeconfig');
    await writeFile(kubeconfig, api.kubeConfig().exportConfig());
    const kubectl = await daemonKubectl(path.join(root, 'daemon-bin'));
    const a = await startReplica('pod-a', kubeconfig, kubectl.command);
    await until('pod-a leads', 20_000, async () => (holder() === 'pod-a' ? true : undefined), a.daemon.tail);
    await until('pod-a ready', 20_000, async () => (/daemon ready/.test(a.daemon.logs()) ? true : undefined));
    // The API server stops answering the Lease (as in a network partition): no renewal can succeed.
    api.failNext('/leases/', 503, 1_000_000);
    const exitCode = await new Promise<number | null>((resolve) => a.daemon.child.once('exit', resolve));
    const exitedAt = Date.now();
    expect(exitCode, a.daemon.tail()).toBe(1);
    expect(a.daemon.logs()).toContain('leadership lost: exiting so that only the new leader runs incidents');
    // It was gone before anyone could have taken the Lease: within the lease duration of its last renewal.
    expect(exitedAt - Date.parse(leaseSpec().renewTime)).toBeLessThan(LEASE_DURATION_MS);
  });
});
