import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntakeReply } from '../../../../src/server/routes/intake.js';
import {
  ALERTMANAGER,
  postAlerts,
  requireBinary,
  startAlertmanager,
  type Started,
} from '../../../support/alertmanager.js';
import { createProcessFakeExecutor } from '../../../support/fake-executor.js';
import { agentExecutions, tempRoot, waitFor, waitForState } from '../../../support/incidents.js';
import { amAlert, amPayload } from '../../../support/webhooks/alerts.js';
import { startIntakeDaemon, type IntakeDaemon } from '../../../support/webhooks/daemon.js';
import { readIncidentFolders } from '../../../support/webhooks/folders.js';
import { pagerDutyEvent, signPagerDuty } from '../../../support/webhooks/pagerduty.js';

// An alert that cannot become an incident (a `pod` label that is not a Kubernetes name) is refused on
// its own, naming it; the good alerts of its notification (and of every other delivery) still become
// incidents, and the answer is never a 5xx, which Alertmanager would retry forever.

const TOKEN = 'bad-alerts-token-8e1f3a';
const PD_SECRET = 'pd-secret-bad-alerts-5c2d';
const alertmanager = requireBinary(ALERTMANAGER);

let root: string;
let cleanup: () => Promise<void>;
let running: IntakeDaemon[] = [];
let processes: Started[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-bad-alerts-'));
});
afterEach(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await Promise.all(running.map((d) => d.stop()));
  processes = [];
  running = [];
  await cleanup();
});

async function start(http: Record<string, unknown> = {}): Promise<IntakeDaemon> {
  const d = await startIntakeDaemon({
    root,
    executor: createProcessFakeExecutor({ sleepMs: 50 }),
    token: TOKEN,
    secrets: { PAGERDUTY_WEBHOOK_SECRET: PD_SECRET },
    config: { http },
  });
  running.push(d);
  return d;
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: auth, body: JSON.stringify(body) });
const replyOf = async (res: Response) => (await res.json()) as IntakeReply;

const GOOD = { namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' };
const BAD_POD = { namespace: 'shop', pod: 'Web_1!' };

describe('alert intake answers per alert', () => {
  it('a notification with one bad pod label: the good alert becomes an incident that runs, the bad one is refused by index and fingerprint (207)', async () => {
    const { base } = await start();
    const good = amAlert(GOOD);
    const bad = amAlert(BAD_POD, { fingerprint: 'c0ffee0000000bad' });
    const res = await post(`${base}/v1/alerts/alertmanager`, amPayload([good, bad]));
    expect(res.status).toBe(207);
    const body = await replyOf(res);
    expect(body.incidents).toHaveLength(2);
    expect(body.incidents[0]).toMatchObject({ status: 'created', workspace: body.workspace });
    expect(body.incidents[1]).toEqual({
      status: 'refused',
      reason: expect.stringMatching(
        /^label pod: "Web_1!" must be a Kubernetes object name \(DNS-1123 subdomain.*\(the incident's resource\.name\)$/,
      ),
      alert: {
        index: 1,
        source: 'alertmanager',
        id: 'c0ffee0000000bad',
        alertname: 'KubePodCrashLooping',
        labels: { alertname: 'KubePodCrashLooping', severity: 'warning', ...BAD_POD },
      },
    });
    expect(body.message).toMatch(
      /^1 of 2 alerts refused, the other 1 was taken: alert 1 \(fingerprint c0ffee0000000bad, alertname KubePodCrashLooping\): label pod: "Web_1!"/,
    );
    const dir = path.join(root, body.workspace!);
    await waitForState(dir, ['succeeded']);
    expect(await agentExecutions(dir)).toBe(1);
    expect(await readIncidentFolders(root)).toEqual([body.workspace]);

    // Alertmanager sends the group again (a new alert joins it, or the repeat interval): the good alert
    // is a duplicate, the bad one refused again, and the answer is still a 2xx.
    const again = await post(`${base}/v1/alerts/alertmanager`, amPayload([good, bad]));
    expect(again.status).toBe(207);
    expect((await replyOf(again)).incidents.map((o) => o.status)).toEqual(['duplicate', 'refused']);
    expect(await readIncidentFolders(root)).toEqual([body.workspace]);
  });

  it('a notification whose every alert is bad is refused with 422 naming each (a 4xx is not retried), writing nothing', async () => {
    const { base } = await start();
    const res = await post(
      `${base}/v1/alerts/alertmanager`,
      amPayload([
        amAlert(BAD_POD, { fingerprint: 'fp-pod' }),
        amAlert({ namespace: 'Shop Floor', pod: 'web-7d4b9c8f6d-x2x9k' }, { fingerprint: 'fp-ns' }),
      ]),
    );
    expect(res.status).toBe(422);
    const body = await replyOf(res);
    expect(body).toMatchObject({ error: 'invalid_alerts', incidentId: null, workspace: null });
    expect(body.incidents.map((o) => [o.status, o.alert?.index, o.alert?.id])).toEqual([
      ['refused', 0, 'fp-pod'],
      ['refused', 1, 'fp-ns'],
    ]);
    expect(body.incidents[1]?.reason).toMatch(
      /^label namespace: "Shop Floor" must be a Kubernetes namespace name/,
    );
    expect(body.message).toMatch(
      /^2 of 2 alerts refused, none was taken: alert 0 \(fingerprint fp-pod, .*; alert 1 \(fingerprint fp-ns, /,
    );
    expect(await readIncidentFolders(root)).toEqual([]);
  });

  it('a bad alert in one delivery does not fail the deliveries batched with it', async () => {
    const { base } = await start();
    // Deliveries arriving together are written in one batch: the bad one must not take the others down.
    const goods = Array.from({ length: 8 }, (_, i) =>
      amPayload([amAlert({ alertname: `Alert${i}`, namespace: `team-${i}`, pod: 'api-5d59d67564-bcdfg' })]),
    );
    const replies = await Promise.all([
      post(`${base}/v1/alerts/alertmanager`, amPayload([amAlert(BAD_POD)])),
      ...goods.map((p) => post(`${base}/v1/alerts/alertmanager`, p)),
    ]);
    expect(replies.map((r) => r.status)).toEqual([422, ...goods.map(() => 202)]);
    const folders = await readIncidentFolders(root);
    expect(folders).toHaveLength(8);
    for (const folder of folders) await waitForState(path.join(root, folder), ['succeeded']);
  });

  it('a bad resolved alert is refused too, and a good resolution beside it is recorded', async () => {
    const { base } = await start();
    const good = amAlert(GOOD);
    const created = await replyOf(await post(`${base}/v1/alerts/alertmanager`, amPayload([good])));
    const endsAt = '2026-11-22T02:00:00.000Z';
    const res = await post(
      `${base}/v1/alerts/alertmanager`,
      amPayload(
        [amAlert(BAD_POD, { status: 'resolved', endsAt }), { ...good, status: 'resolved', endsAt }],
        'resolved',
      ),
    );
    expect(res.status).toBe(207);
    expect((await replyOf(res)).incidents.map((o) => o.status)).toEqual(['refused', 'resolved']);
    const doc = JSON.parse(await readFile(path.join(root, created.workspace!, 'alerts.json'), 'utf8')) as {
      resolvedAt?: string;
    };
    expect(doc.resolvedAt).toBe(endsAt);
  });

  it('PagerDuty events come one per delivery: a good one is still taken (202)', async () => {
    const { base } = await start();
    const body = JSON.stringify(pagerDutyEvent('incident.triggered'));
    const res = await fetch(`${base}/v1/alerts/pagerduty`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-pagerduty-signature': signPagerDuty(body, PD_SECRET),
      },
      body,
    });
    expect(res.status).toBe(202);
    expect((await replyOf(res)).incidents.map((o) => o.status)).toEqual(['created']);
  });
});

describe.skipIf(!alertmanager)('real Alertmanager -> a notification holding a bad alert', () => {
  it('the good alert of the group becomes an incident, and Alertmanager records the notification delivered, never retried', async () => {
    const d = await start();
    const am = await startAlertmanager(alertmanager!, {
      dir: path.join(root, '.am'),
      webhookUrl: `${d.base}/v1/alerts/alertmanager`,
      token: TOKEN,
    });
    processes.push(am);
    // One group (alertname, namespace): Alertmanager sends both in one notification.
    await postAlerts(am, [
      { labels: { alertname: 'KubePodCrashLooping', severity: 'warning', ...GOOD } },
      { labels: { alertname: 'KubePodCrashLooping', severity: 'warning', ...BAD_POD } },
    ]);
    const [folder] = await waitFor('the good alert to become an incident', async () => {
      const folders = await readIncidentFolders(root);
      return folders.length > 0 ? folders : undefined;
    });
    await waitForState(path.join(root, folder!), ['succeeded']);
    const incident = JSON.parse(await readFile(path.join(root, folder!, 'incident.json'), 'utf8')) as {
      resource: { name: string };
    };
    expect(incident.resource.name).toBe(GOOD.pod);
    const metric = async (name: string) => {
      const text = await (await fetch(`${am.url}/metrics`)).text();
      const m = new RegExp(`^${name}\\{integration="webhook"\\} (\\d+)`, 'm').exec(text);
      return Number(m?.[1] ?? NaN);
    };
    const delivered = await waitFor('Alertmanager to count the notification', async () =>
      (await metric('alertmanager_notifications_total')) >= 1 ? true : undefined,
    );
    expect(delivered).toBe(true);
    expect(await metric('alertmanager_notifications_failed_total')).toBe(0);
    // One request per notification: none was retried.
    expect(await metric('alertmanager_notification_requests_failed_total')).toBe(0);
    expect(await readIncidentFolders(root)).toEqual([folder]);
  });
});
