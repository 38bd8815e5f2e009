import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlertsDoc } from '../../../../src/intake/webhooks/disk.js';
import { readState } from '../../../../src/workspace/state.js';
import {
  ALERTMANAGER,
  PROMETHEUS,
  postAlerts,
  requireBinary,
  startAlertmanager,
  startPrometheus,
  type Started,
} from '../../../support/alertmanager.js';
import { createProcessFakeExecutor } from '../../../support/fake-executor.js';
import { agentExecutions, tempRoot, waitFor } from '../../../support/incidents.js';
import { freePort } from '../../../support/net.js';
import { startIntakeDaemon, type IntakeDaemon } from '../../../support/webhooks/daemon.js';
import { readIncidentFolders } from '../../../support/webhooks/folders.js';

// A real Alertmanager (and Prometheus) whose webhook receiver is the daemon: its grouping, its
// re-sends of a group's alerts and its retries of failed deliveries must end in exactly one incident
// per group, each run once.

const alertmanager = requireBinary(ALERTMANAGER);
const prometheus = requireBinary(PROMETHEUS);
const TOKEN = 'am-token-41f0e2';

let root: string;
let cleanup: () => Promise<void>;
let processes: Started[] = [];
let daemons: IntakeDaemon[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-alertmanager-'));
});
afterEach(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await Promise.all(daemons.map((d) => d.stop()));
  processes = [];
  daemons = [];
  await cleanup();
});

async function daemonOn(port: number, workspaces: string): Promise<IntakeDaemon> {
  const d = await startIntakeDaemon({
    root: workspaces,
    executor: createProcessFakeExecutor({ sleepMs: 50 }),
    token: TOKEN,
    config: { http: { port } },
  });
  daemons.push(d);
  return d;
}

/** Folders and their states once nothing has changed for `quietMs`. */
async function settled(workspaces: string, expected: number, quietMs = 2500) {
  let last = '';
  let since = Date.now();
  return waitFor(
    `${expected} incidents, all succeeded, unchanged for ${quietMs} ms`,
    async () => {
      const folders = await readIncidentFolders(workspaces);
      const states = await Promise.all(folders.map((f) => readState(path.join(workspaces, f))));
      const now = JSON.stringify([folders, states.map((s) => s?.state)]);
      if (now !== last) {
        last = now;
        since = Date.now();
        return undefined;
      }
      const done = folders.length === expected && states.every((s) => s?.state === 'succeeded');
      return done && Date.now() - since >= quietMs ? folders : undefined;
    },
    45_000,
    100,
  );
}

const doc = async (dir: string) =>
  JSON.parse(await readFile(path.join(dir, 'alerts.json'), 'utf8')) as AlertsDoc;

describe.skipIf(!alertmanager)('real Alertmanager -> webhook intake', () => {
  it('one incident per group through Alertmanager grouping, re-sends and retries, each run once, resolutions recorded', async () => {
    const port = await freePort();
    // Alertmanager starts first: its first deliveries fail (nothing listens) and are retried.
    const am = await startAlertmanager(alertmanager!, {
      dir: path.join(root, '.am'),
      webhookUrl: `http://127.0.0.1:${port}/v1/alerts/alertmanager`,
      token: TOKEN,
    });
    processes.push(am);
    const pods = (deployment: string, n: number, ns: string) =>
      Array.from({ length: n }, (_, i) => ({
        labels: {
          alertname: 'KubePodCrashLooping',
          severity: 'warning',
          namespace: ns,
          pod: `${deployment}-7d4b9c8f6d-${'bcdfghjklmnpqrstvwxz'[i]}k2x9`,
          container: 'app',
        },
        annotations: { summary: 'Pod is crash looping.' },
      }));
    const node = { labels: { alertname: 'KubeNodeNotReady', severity: 'warning', node: 'worker-3' } };
    await postAlerts(am, [...pods('web', 5, 'shop'), ...pods('cart', 3, 'checkout'), node]);
    // Past the group window: Alertmanager's first webhook delivery has failed (nothing listens yet), so a
    // workspace that should not be made would exist by now.
    await waitFor(
      "Alertmanager's first failed webhook delivery",
      async () => {
        const text = await (await fetch(`${am.url}/metrics`)).text();
        const m = /^alertmanager_notifications_failed_total\{integration="webhook"\} (\d+)/m.exec(text);
        return m && Number(m[1]) > 0 ? true : undefined;
      },
      30_000,
    );
    const workspaces = root;
    expect(await readIncidentFolders(workspaces)).toEqual([]);

    const d = await daemonOn(port, workspaces);
    const folders = await settled(workspaces, 3);
    const docs = await Promise.all(folders.map((f) => doc(path.join(workspaces, f))));
    const byCount = Object.fromEntries(
      folders.map((f, i) => [f.replace(/-[0-9a-f]{8}$/, '').replace(/^\d{8}T\d{6}Z-/, ''), docs[i]!.count]),
    );
    expect(byCount).toEqual({
      'KubePodCrashLooping-shop-web': 5,
      'KubePodCrashLooping-checkout-cart': 3,
      'KubeNodeNotReady-default-worker-3': 1,
    });

    // A new pod joins the web group: Alertmanager re-sends all six of the group's alerts.
    await postAlerts(am, pods('web', 6, 'shop'));
    const web = path.join(
      workspaces,
      folders.find((f) => f.includes('-shop-web-'))!,
    );
    await waitFor(
      'the sixth web alert to be appended',
      async () => ((await doc(web)).count === 6 ? true : undefined),
      20_000,
    );
    await settled(workspaces, 3);
    expect((await doc(web)).alerts.map((a) => a.key).length).toBe(6);
    for (const f of folders) expect(await agentExecutions(path.join(workspaces, f))).toBe(1);

    // The cart alerts resolve: Alertmanager sends them resolved (send_resolved).
    const endsAt = new Date().toISOString();
    await postAlerts(
      am,
      pods('cart', 3, 'checkout').map((a) => ({ ...a, endsAt })),
    );
    const cart = path.join(
      workspaces,
      folders.find((f) => f.includes('-checkout-cart-'))!,
    );
    const resolved = await waitFor(
      'the cart incident to be resolved',
      async () => (await doc(cart)).resolvedAt,
      20_000,
    );
    expect(Date.parse(resolved)).toBeGreaterThan(0);
    expect((await doc(cart)).open).toBe(0);
    await waitFor('the resolution to be reported', () => (d.hooks.calls.length > 0 ? true : undefined));
    expect(d.hooks.calls.map((c) => c.workspace)).toEqual([path.basename(cart)]);
  });

  it.skipIf(!prometheus)(
    'a real Prometheus rule firing at once (vector(1)) becomes one incident that runs',
    async () => {
      const d = await daemonOn(await freePort(), root);
      const am = await startAlertmanager(alertmanager!, {
        dir: path.join(root, '.am'),
        webhookUrl: `${d.base}/v1/alerts/alertmanager`,
        token: TOKEN,
      });
      processes.push(am);
      const prom = await startPrometheus(prometheus!, {
        dir: path.join(root, '.prom'),
        alertmanager: am,
        rules: [
          'groups:',
          '  - name: triage-test',
          '    interval: 1s',
          '    rules:',
          '      - alert: KubePodCrashLooping',
          '        expr: vector(1)',
          '        labels: { severity: critical, cluster: test-cluster, namespace: shop, pod: web-7d4b9c8f6d-x2x9k }',
          '        annotations: { summary: "Pod shop/web-7d4b9c8f6d-x2x9k is crash looping." }',
          '',
        ].join('\n'),
      });
      processes.push(prom);
      const [folder] = await settled(root, 1);
      const incident = JSON.parse(
        await readFile(path.join(root, folder!, 'incident.json'), 'utf8'),
      ) as Record<string, unknown>;
      expect(incident).toMatchObject({
        cluster: 'test-cluster',
        namespace: 'shop',
        faultType: 'CrashLoop',
        severity: 'critical',
        resource: { kind: 'Pod', name: 'web-7d4b9c8f6d-x2x9k' },
        workload: { kind: 'Deployment', name: 'web' },
        source: {
          type: 'alertmanager',
          url: expect.stringMatching(new RegExp(`:${prom.port}/graph\\?g0\\.expr=vector`)),
        },
      });
      expect(await agentExecutions(path.join(root, folder!))).toBe(1);
    },
  );
});
