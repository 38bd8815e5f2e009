import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PagerDutyApi, SlackApi, WebhookReceiver } from '../../support/notify-servers.js';
import { incidentJson } from '../../support/incidents.js';
import { plantedForms, PLANTED } from '../../support/kube-objects.js';
import {
  buildNotifier,
  finishedInput,
  finishedWorkspace,
  notifyConfig,
  type TestNotifier,
} from '../../support/notify.js';

// A report that quotes what the agent found (a database password, an AWS key pair, a Secret's data)
// is sent to Slack, a webhook and PagerDuty (an event and a note) through their real clients and local
// stand-ins: none of the credentials arrives anywhere, and the rest of the report arrives as written.

const SLACK_TOKEN = 'xoxb-2718281828-3141592653-AbCdEfGhIjKlMnOpQrStUvWx';
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdef012345';
const PD_TOKEN = 'u+PdApiToken_9f8e7d6c5b4a';

const REPORT = `# Kubernetes Incident Triage Report

## 0. Executive Triage Card
### Primary Hypothesis
The payments-db Secret was rotated; the database password is now \`${PLANTED.dbPassword}\` while the
pods still use the old one — Confidence: High

## 1. Evidence
- **[FACT-1]** payments-api logs: \`FATAL: password authentication failed for user "payments"\`
- **[FACT-2]** The AWS secret key is "${PLANTED.awsSecret}" (key id ${PLANTED.awsKeyId}), exposed in the pod spec.
- **[FACT-3]** \`kubectl get secret payments-db -o yaml\`:

\`\`\`yaml
apiVersion: v1
data:
  password: ${Buffer.from(PLANTED.dbPassword).toString('base64')}
kind: Secret
\`\`\`

- **[FACT-4]** The ConfigMap sets \`stripe_key: ${PLANTED.stripeKey}\`.

## 2. Remediation
Roll the Deployment after the Secret is fixed: \`kubectl rollout restart deploy/payments-api\`.
`;

let root: string;
let built: TestNotifier | undefined;
const servers: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'tr-notify-redact-'));
});
afterEach(async () => {
  await built?.notifier.close();
  built = undefined;
  for (const s of servers.splice(0)) await s.close();
  await rm(root, { recursive: true, force: true });
});

describe('what notifications send is redacted', () => {
  it('sends no credential the report quotes to Slack, a webhook or PagerDuty, and the rest of the report as it is', async () => {
    const slack = await new SlackApi(SLACK_TOKEN).start();
    const hook = await new WebhookReceiver().start();
    const pd = await new PagerDutyApi(ROUTING_KEY, PD_TOKEN).start();
    servers.push(slack, hook, pd);
    const { config, env } = notifyConfig({
      sinks: [
        {
          name: 'oncall',
          type: 'slack',
          channel: '#oncall',
          secret: 'SLACK_BOT_TOKEN',
          api_url: slack.apiUrl,
        },
        { name: 'hook', type: 'webhook', url: `${hook.url}/triage`, secret: 'WEBHOOK_SIGNING_SECRET' },
        {
          name: 'pd',
          type: 'pagerduty',
          secret: 'PAGERDUTY_ROUTING_KEY',
          api_url: pd.url,
          notes: { secret: 'PAGERDUTY_API_TOKEN', from: 'oncall-bot@example.com', api_url: pd.url },
        },
      ],
      secrets: {
        SLACK_BOT_TOKEN: SLACK_TOKEN,
        WEBHOOK_SIGNING_SECRET: 'whsec-5f1a7c2e9b8d4a6f0e3c1b2a',
        PAGERDUTY_ROUTING_KEY: ROUTING_KEY,
        PAGERDUTY_API_TOKEN: PD_TOKEN,
      },
    });
    const incident = incidentJson({
      incidentId: 'inc-leaky-report',
      source: { type: 'pagerduty', incidentId: 'Q1LEAKY' },
    });
    const dir = await finishedWorkspace(root, 'leaky-report', { report: REPORT, incident });
    built = buildNotifier(config, env);
    const plan = await built.notifier.incidentFinished(await finishedInput(dir, config));
    const entries = await built.notifier.settle(
      dir,
      plan.deliveries.map((d) => d.key),
      20_000,
    );
    expect(entries.map((e) => [e.sink, e.status])).toEqual(
      expect.arrayContaining([
        ['oncall', 'delivered'],
        ['hook', 'delivered'],
        ['pd', 'delivered'],
      ]),
    );
    // Each request as sent and as its receiver read it (a Slack form is URL-encoded).
    const requests = [...slack.requests, ...hook.accepted, ...pd.requests];
    const sent = requests.flatMap((r) => [r.raw, JSON.stringify(r.body)]);
    expect(requests.length).toBeGreaterThanOrEqual(4);
    for (const body of sent) expect(plantedForms().filter((f) => body.includes(f))).toEqual([]);
    const webhookReport = (hook.accepted[0]?.body as { report?: { text?: string } }).report?.text ?? '';
    expect(webhookReport).toContain('the database password is now `[REDACTED]` while the');
    expect(webhookReport).toContain('The AWS secret key is "[REDACTED]" (key id [REDACTED])');
    expect(webhookReport).toContain('  password: [REDACTED]\nkind: Secret');
    expect(webhookReport).toContain('FATAL: password authentication failed for user "payments"');
    expect(webhookReport).toContain('`kubectl rollout restart deploy/payments-api`');
    expect(slack.requests.map((r) => JSON.stringify(r.body)).join('\n')).toContain(
      'password authentication failed',
    );
  });
});
