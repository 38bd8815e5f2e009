import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { resolveSecrets } from '../../../src/config/secrets.js';
import { recordFeedback } from '../../../src/feedback/feedback.js';
import type { StateChange } from '../../../src/incident/store.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { createResultsOut, type ResultsOut } from '../../../src/notify/results-out.js';
import { incidentJson } from '../../support/incidents.js';
import { SlackApi, verifyWebhook, WebhookReceiver } from '../../support/notify-servers.js';
import { finishedWorkspace, notifyConfig } from '../../support/notify.js';

// What the daemon's results-out announces besides a run's answer, through real HTTP to a webhook
// receiver and a Slack Web API stand-in: an incident rejected before any run (an alert for a cluster
// nobody configured) with its reason, by default; one whose alerts resolved before its run when `on`
// lists `resolved`; a resolution after the answer under its own event type; and a responder's rating,
// shown on the Slack parent at once.

const SIGNING_SECRET = 'whsec-announce-7c2e9b8d4a6f0e3c';
const TOKEN = 'xoxb-1618033988-7490-AnnounceAbCdEfGhIjKl';
const UNKNOWN_CLUSTER =
  'cluster "prod-zz-9" is not in the cluster registry (known: prod-eu-1): the incident was rejected; add it under clusters: or fix the alert\'s cluster label';

let root: string;
let out: ResultsOut | undefined;
const servers: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'tr-notify-announce-'));
});
afterEach(async () => {
  await out?.close(5_000);
  out = undefined;
  for (const s of servers.splice(0)) await s.close();
  await rm(root, { recursive: true, force: true });
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await new WebhookReceiver().start();
  servers.push(r);
  return r;
}

/** Results out as the daemon builds them, with the given sinks. */
function resultsOut(sinks: Record<string, unknown>[]): ResultsOut {
  const { config, env } = notifyConfig({
    sinks,
    secrets: { WEBHOOK_SIGNING_SECRET: SIGNING_SECRET, SLACK_BOT_TOKEN: TOKEN },
  });
  const secrets = resolveSecrets(config, env).values;
  const redactor = new Redactor(secrets);
  out = createResultsOut(config, {
    secrets,
    redactor,
    audit: new AuditLog({ redactor }),
    log: silentLogger(),
    registry: new Registry(),
  })!;
  return out;
}

const hook = (url: string, extra: Record<string, unknown> = {}) => ({
  name: 'hook',
  type: 'webhook',
  url: `${url}/triage`,
  secret: 'WEBHOOK_SIGNING_SECRET',
  ...extra,
});

/** An alert's incident.json for a cluster the registry does not know, and the record its rejection left. */
async function rejectedAlert(folder: string): Promise<{ dir: string; record: StateChange['record'] }> {
  const dir = path.join(root, folder);
  await mkdir(path.join(dir, '.triage'), { recursive: true });
  await writeFile(
    path.join(dir, 'incident.json'),
    JSON.stringify(
      incidentJson({
        incidentId: `inc-${folder}`,
        cluster: 'prod-zz-9',
        source: { type: 'alertmanager', alertname: 'KubePodCrashLooping' },
      }),
    ),
  );
  const record = {
    incidentId: `inc-${folder}`,
    state: 'rejected',
    attempts: 0,
    reason: UNKNOWN_CLUSTER,
    updatedAt: new Date().toISOString(),
    runs: [],
    incidentSha256: 'a'.repeat(64),
  } as StateChange['record'];
  return { dir, record };
}

const bodyOf = (r: { raw: string }) => JSON.parse(r.raw) as Record<string, unknown>;

describe('results out beyond the answer', () => {
  it('announces an incident rejected from an alert by default, with its reason, under its own event type', async () => {
    const r = await receiver();
    const results = resultsOut([hook(r.url)]);
    const { dir, record } = await rejectedAlert('alert-unknown-cluster');
    const change = {
      dir,
      record,
      previous: undefined,
      event: { type: 'Invalid', incidentId: record.incidentId, reason: UNKNOWN_CLUSTER },
    } as StateChange;
    results.onChange(change);
    await vi.waitFor(() => expect(r.accepted).toHaveLength(1), { timeout: 20_000 });
    const [req] = r.accepted;
    expect(verifyWebhook(SIGNING_SECRET, req!)).toBe(true);
    expect(req!.headers['x-triage-runner-event']).toBe('triage-runner.incident.rejected');
    const body = bodyOf(req!);
    expect(body).toMatchObject({
      type: 'triage-runner.incident.rejected',
      state: { state: 'rejected', reason: UNKNOWN_CLUSTER },
      outcome: { kind: 'rejected', label: 'rejected' },
      run: null,
    });
    expect((body.summary as { text: string }).text).toMatch(
      /^Incident rejected, not investigated — CrashLoop on .*\(prod-zz-9\)\. Reason: cluster "prod-zz-9" is not in the cluster registry/,
    );
  });

  it('tells a sink whose on: leaves out rejected nothing of a rejection', async () => {
    const r = await receiver();
    const results = resultsOut([hook(r.url, { on: ['succeeded', 'failed'] }), hook(r.url, { name: 'all' })]);
    const { dir, record } = await rejectedAlert('alert-quiet');
    results.onChange({
      dir,
      record,
      previous: undefined,
      event: { type: 'Invalid', incidentId: record.incidentId, reason: UNKNOWN_CLUSTER },
    } as StateChange);
    await vi.waitFor(() => expect(r.accepted).toHaveLength(1), { timeout: 20_000 });
    await results.close(5_000);
    expect(r.accepted).toHaveLength(1);
    expect(bodyOf(r.accepted[0]!).idempotencyKey).toMatch(/\.all\.rejected-/);
  });

  it('announces an incident resolved before its run when on: lists resolved, and a resolution after the answer as triage-runner.incident.resolved', async () => {
    const r = await receiver();
    const results = resultsOut([hook(r.url, { on: ['succeeded', 'failed', 'resolved'] })]);
    // Before its run: the incident ends resolved and is never run.
    const early = path.join(root, 'resolved-early');
    await mkdir(path.join(early, '.triage'), { recursive: true });
    await writeFile(
      path.join(early, 'incident.json'),
      JSON.stringify(incidentJson({ incidentId: 'inc-early' })),
    );
    const at = '2026-03-01T11:02:00.000Z';
    const reason = `every alert behind this incident resolved at ${at}, before the investigation started: not run`;
    results.onChange({
      dir: early,
      record: {
        incidentId: 'inc-early',
        state: 'resolved',
        attempts: 0,
        reason,
        resolvedAt: at,
        updatedAt: at,
        runs: [],
      },
      previous: undefined,
      event: { type: 'Resolved', at, reason },
    } as StateChange);
    await vi.waitFor(() => expect(r.accepted).toHaveLength(1), { timeout: 20_000 });
    expect(r.accepted[0]!.headers['x-triage-runner-event']).toBe('triage-runner.incident.resolved');
    expect(bodyOf(r.accepted[0]!)).toMatchObject({
      type: 'triage-runner.incident.resolved',
      state: { state: 'resolved', reason },
      resolvedAt: at,
      outcome: { kind: 'resolved' },
    });

    // After its answer: the finished delivery, then the resolution with its own type.
    const answered = await finishedWorkspace(root, 'resolved-late');
    const record = JSON.parse(
      await readFile(path.join(answered, '.triage', 'state.json'), 'utf8'),
    ) as StateChange['record'];
    results.onChange({
      dir: answered,
      record,
      previous: undefined,
      event: { type: 'Finished', runId: record.runs[0]!.id, outcome: { status: 'succeeded' } },
    } as StateChange);
    await vi.waitFor(() => expect(r.accepted).toHaveLength(2), { timeout: 20_000 });
    expect(r.accepted[1]!.headers['x-triage-runner-event']).toBe('triage-runner.investigation.finished');
    await writeFile(
      path.join(answered, 'alerts.json'),
      JSON.stringify({ version: 1, alerts: [], resolvedAt: at }),
    );
    results.onResolvedAfterRun(answered);
    await vi.waitFor(() => expect(r.accepted).toHaveLength(3), { timeout: 20_000 });
    expect(r.accepted[2]!.headers['x-triage-runner-event']).toBe('triage-runner.incident.resolved');
    expect(bodyOf(r.accepted[2]!)).toMatchObject({
      type: 'triage-runner.incident.resolved',
      trigger: 'resolved',
      resolvedAt: at,
      state: { state: 'succeeded' },
    });
  });

  it("updates the Slack parent at once when a responder rates the answer, a resolved incident's too", async () => {
    const slack = await new SlackApi(TOKEN).start();
    servers.push(slack);
    const results = resultsOut([
      {
        name: 'oncall',
        type: 'slack',
        channel: '#oncall',
        secret: 'SLACK_BOT_TOKEN',
        api_url: slack.apiUrl,
        thread_report: false,
      },
    ]);
    const dir = await finishedWorkspace(root, 'rated');
    const record = JSON.parse(
      await readFile(path.join(dir, '.triage', 'state.json'), 'utf8'),
    ) as StateChange['record'];
    results.onChange({
      dir,
      record,
      previous: undefined,
      event: { type: 'Finished', runId: record.runs[0]!.id, outcome: { status: 'succeeded' } },
    } as StateChange);
    await vi.waitFor(() => expect(slack.messages).toHaveLength(1), { timeout: 20_000 });
    const updates = () => slack.requests.filter((q) => q.path === '/api/chat.update');
    // Its alerts resolve: the parent says so.
    await writeFile(
      path.join(dir, 'alerts.json'),
      JSON.stringify({ version: 1, alerts: [], resolvedAt: '2026-03-01T11:02:00.000Z' }),
    );
    results.onResolvedAfterRun(dir);
    await vi.waitFor(() => expect(updates()).toHaveLength(1), { timeout: 20_000 });
    // A click on Correct: recorded, then the parent shows it without waiting for another update.
    await recordFeedback(dir, { verdict: 'correct', by: 'slack:ana (U1)' }, 'slack', {
      audit: new AuditLog(),
    });
    results.onFeedback(dir);
    await vi.waitFor(() => expect(updates()).toHaveLength(2), { timeout: 20_000 });
    const parent = slack.messages[0]!;
    const text = JSON.stringify(parent.blocks);
    expect(text).toContain('rated *correct* by slack:ana (U1)');
    expect(text).toContain('Correct ✓');
    expect(text).toContain('Resolved · ');
    // Only the parent changed: no thread reply was posted for a rating.
    expect(slack.messages.filter((m) => m.thread_ts)).toHaveLength(1);
  });
});
