// /metrics says what Prometheus pages on, from the real daemon serving HTTP intake: the alerts that
// reached each endpoint (and those refused, by a fixed reason) and each /readyz check at the scrape.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProcessFakeExecutor } from '../../support/fake-executor.js';
import { incidentJson, tempRoot } from '../../support/incidents.js';
import { amAlert, amPayload } from '../../support/webhooks/alerts.js';
import { startIntakeDaemon, type IntakeDaemon } from '../../support/webhooks/daemon.js';

const TOKEN = 'metrics-health-token-4b1e9d';

let root: string;
let cleanup: () => Promise<void>;
let daemon: IntakeDaemon | undefined;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-metrics-health-'));
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await cleanup();
});

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: auth, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('/metrics: intake and readiness', () => {
  it('counts alerts received by source and those refused by reason', async () => {
    daemon = await startIntakeDaemon({
      root,
      executor: createProcessFakeExecutor({ sleepMs: 50 }),
      token: TOKEN,
    });
    const { base } = daemon;
    const good = amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' });
    const bad = amAlert({ namespace: 'shop', pod: 'Web_1!' });
    expect((await post(`${base}/v1/alerts/alertmanager`, amPayload([good, bad]))).status).toBe(207);
    expect((await post(`${base}/v1/alerts/alertmanager`, '{"alerts": 3}')).status).toBe(400);
    expect((await post(`${base}/v1/incidents`, incidentJson({ incidentId: 'api-1' }))).status).toBe(202);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain('triage_runner_alerts_received_total{source="alertmanager"} 2\n');
    expect(text).toContain('triage_runner_alerts_received_total{source="incident"} 1\n');
    expect(text).toContain(
      'triage_runner_alerts_refused_total{source="alertmanager",reason="invalid_alert"} 1\n',
    );
    expect(text).toContain(
      'triage_runner_alerts_refused_total{source="alertmanager",reason="invalid_payload"} 1\n',
    );
  });

  it('reports each readiness check at the scrape, 1 ready and 0 not', async () => {
    daemon = await startIntakeDaemon({
      root,
      executor: createProcessFakeExecutor({ sleepMs: 50 }),
      token: TOKEN,
    });
    const text = await (await fetch(`${daemon.base}/metrics`)).text();
    expect(text).toContain('triage_runner_ready{check="intake"} 1\n');
    expect(text).toContain('triage_runner_ready{check="disk"} 1\n');
    await daemon.daemon.stop();
    const after = await daemon.daemon.metrics.render();
    expect(after).toContain('triage_runner_ready{check="intake"} 0\n');
  });
});
