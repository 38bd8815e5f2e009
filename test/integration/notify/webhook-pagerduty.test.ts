import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PagerDutyApi, verifyWebhook, WebhookReceiver } from '../../support/notify-servers.js';
import {
  auditEvents,
  buildNotifier,
  finishedInput,
  finishedWorkspace,
  notifyConfig,
  RUN_ID,
  type TestNotifier,
} from '../../support/notify.js';
import { incidentJson } from '../../support/incidents.js';

// The webhook sink against a receiver that verifies signatures the documented way, and the PagerDuty
// sink against an Events API v2 and REST notes stand-in.

const SIGNING_SECRET = 'whsec-5f1a7c2e9b8d4a6f0e3c1b2a';
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdef012345';
const PD_TOKEN = 'u+PdApiToken_9f8e7d6c5b4a';

let root: string;
let built: TestNotifier | undefined;
const servers: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'tr-notify-hook-'));
});

afterEach(async () => {
  await built?.notifier.close();
  built = undefined;
  for (const s of servers.splice(0)) await s.close();
  await rm(root, { recursive: true, force: true });
});

async function deliver(dir: string, sinks: Record<string, unknown>[], waitMs = 20_000) {
  const { config, env } = notifyConfig({
    sinks,
    secrets: {
      WEBHOOK_SIGNING_SECRET: SIGNING_SECRET,
      PAGERDUTY_ROUTING_KEY: ROUTING_KEY,
      PAGERDUTY_API_TOKEN: PD_TOKEN,
    },
    publicUrl: 'https://triage.example.internal/',
  });
  built = buildNotifier(config, env);
  const plan = await built.notifier.incidentFinished(await finishedInput(dir, config));
  return built.notifier.settle(
    dir,
    plan.deliveries.map((d) => d.key),
    waitMs,
  );
}

async function receiver(): Promise<WebhookReceiver> {
  const r = await new WebhookReceiver().start();
  servers.push(r);
  return r;
}

async function pagerDuty(): Promise<PagerDutyApi> {
  const pd = await new PagerDutyApi(ROUTING_KEY, PD_TOKEN).start();
  servers.push(pd);
  return pd;
}

const hook = (url: string) => ({
  name: 'hook',
  type: 'webhook',
  url: `${url}/triage`,
  secret: 'WEBHOOK_SIGNING_SECRET',
});

describe('webhook sink', () => {
  it('POSTs the versioned payload, signed over timestamp and body, with an idempotency key', async () => {
    const r = await receiver();
    const dir = await finishedWorkspace(root, 'payments-crashloop');
    const [entry] = await deliver(dir, [hook(r.url)]);
    expect(entry?.status).toBe('delivered');
    expect(r.accepted).toHaveLength(1);
    const req = r.accepted[0]!;
    expect(req.path).toBe('/triage');
    expect(verifyWebhook(SIGNING_SECRET, req)).toBe(true);
    expect(verifyWebhook('another-secret-entirely', req)).toBe(false);
    expect(req.headers['idempotency-key']).toBe(`inc-payments-crashloop/${RUN_ID}.hook`);
    expect(req.headers['x-triage-runner-event']).toBe('triage-runner.investigation.finished');

    const report = await readFile(path.join(dir, 'output', 'investigation.md'), 'utf8');
    const incident = JSON.parse(await readFile(path.join(dir, 'incident.json'), 'utf8')) as unknown;
    const result = JSON.parse(
      await readFile(path.join(dir, '.triage', 'runs', RUN_ID, 'result.json'), 'utf8'),
    ) as unknown;
    expect(req.body).toEqual({
      schemaVersion: 1,
      type: 'triage-runner.investigation.finished',
      idempotencyKey: `inc-payments-crashloop/${RUN_ID}.hook`,
      trigger: 'finished',
      workspace: 'payments-crashloop',
      incident,
      state: { state: 'succeeded', attempts: 1, updatedAt: expect.any(String) },
      outcome: { kind: 'unverified', label: 'not verified' },
      run: { id: RUN_ID, result },
      // The run recorded no evidence check.
      evidence: null,
      summary: {
        text: expect.stringMatching(
          /^Answer, not verified — CrashLoop on Pod shop\/web-1 \(prod-1\)\. Hypothesis: /,
        ),
        source: 'triage-card',
        hypothesis:
          'The payments-api container exits because DATABASE_URL points at a Secret key that was renamed in the last rollout',
        confidence: 'High',
        firstAction: 'kubectl -n payments rollout undo deployment/payments-api',
        answer: 'The payments-api Secret key was renamed; roll back the Deployment.',
      },
      report: {
        path: 'output/investigation.md',
        bytes: Buffer.byteLength(report),
        sha256: createHash('sha256').update(report).digest('hex'),
        truncated: false,
        text: report,
      },
      links: { status: 'https://triage.example.internal/incidents/payments-crashloop' },
    });
  });

  it('waits for Retry-After after a 429, then sends the same body with the same key', async () => {
    const r = await receiver();
    r.on(() => true, { kind: 'status', status: 429, headers: { 'retry-after': '2' } });
    const dir = await finishedWorkspace(root, 'rate-limited');
    const [entry] = await deliver(dir, [hook(r.url)]);
    expect(entry?.status).toBe('delivered');
    const [first, second] = r.requests;
    expect(r.requests).toHaveLength(2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(2000);
    expect(second!.raw).toBe(first!.raw);
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(verifyWebhook(SIGNING_SECRET, second!)).toBe(true);
    const attempts = (await auditEvents(dir)).filter((e) => e.type === 'notify_attempted');
    expect(attempts.map((e) => e.outcome)).toEqual(['retry', 'delivered']);
    expect(attempts[0]).toMatchObject({ error: { status: 429, retryAfterMs: 2000, kind: 'retry' } });
  });

  it('retries a 503 with backoff until it is accepted', async () => {
    const r = await receiver();
    r.on(() => true, { kind: 'status', status: 503, body: 'upstream down' }, 2);
    const dir = await finishedWorkspace(root, 'flaky');
    const [entry] = await deliver(dir, [hook(r.url)]);
    expect(entry?.status).toBe('delivered');
    expect(r.requests).toHaveLength(3);
    expect(r.accepted).toHaveLength(1);
    expect(built!.metrics.calls).toEqual([
      ['hook', 'retried'],
      ['hook', 'retried'],
      ['hook', 'delivered'],
    ]);
  });

  it('records a 4xx with its response and gives up on it', async () => {
    const r = await receiver();
    r.on(() => true, { kind: 'status', status: 422, body: '{"error":"schemaVersion 1 is not supported"}' });
    const dir = await finishedWorkspace(root, 'rejected');
    const [entry] = await deliver(dir, [hook(r.url)]);
    expect(entry).toMatchObject({
      status: 'failed',
      lastError: { kind: 'permanent', status: 422, response: '{"error":"schemaVersion 1 is not supported"}' },
    });
    // reason: several base delays later, still one request: a permanent failure arms no retry to await
    // (test/unit/notify/retry-timers.test.ts proves it on fake timers).
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(r.requests).toHaveLength(1);
  });
});

describe('pagerduty sink', () => {
  const pd = (url: string, extra: Record<string, unknown> = {}) => ({
    name: 'pd',
    type: 'pagerduty',
    secret: 'PAGERDUTY_ROUTING_KEY',
    api_url: url,
    ...extra,
  });

  it('triggers an Events API v2 event keyed by incident, with the summary, details and a status page link', async () => {
    const api = await pagerDuty();
    const dir = await finishedWorkspace(root, 'payments-crashloop');
    const [entry] = await deliver(dir, [pd(api.url)]);
    expect(entry?.status).toBe('delivered');
    expect(api.events).toHaveLength(1);
    const event = api.events[0] as { payload: Record<string, unknown> } & Record<string, unknown>;
    expect(event).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: 'triage-runner/inc-payments-crashloop',
      client: 'triage-runner',
      client_url: 'https://triage.example.internal/incidents/payments-crashloop',
      links: [
        {
          href: 'https://triage.example.internal/incidents/payments-crashloop',
          text: 'triage-runner status page',
        },
      ],
    });
    expect(event.payload).toMatchObject({
      source: 'prod-1',
      severity: 'critical',
      component: 'Pod shop/web-1',
      group: 'shop',
      class: 'CrashLoop',
      timestamp: '2026-11-22T01:00:00.000Z',
      custom_details: {
        incident_id: 'inc-payments-crashloop',
        run_id: RUN_ID,
        outcome: 'not verified',
        confidence: 'High',
        first_action: 'kubectl -n payments rollout undo deployment/payments-api',
        agent: 'claude',
        duration: '4m 12s',
        cost: '$0.42',
      },
    });
    expect(String(event.payload.summary)).toMatch(/^Answer, not verified — CrashLoop on Pod shop\/web-1/);
    expect(entry?.steps).toEqual([
      expect.objectContaining({
        id: 'event',
        result: { status: 202, dedupKey: 'triage-runner/inc-payments-crashloop' },
      }),
    ]);
  });

  it('keeps the summary within 1,024 characters however long the hypothesis', async () => {
    const api = await pagerDuty();
    const report = [
      '## 0. Executive Triage Card',
      '### Primary Hypothesis',
      `${'a very long hypothesis '.repeat(200)}— Confidence: Low`,
      '### Top 3 Recommended Actions',
      `- ${'an equally long first action '.repeat(100)}`,
    ].join('\n\n');
    const dir = await finishedWorkspace(root, 'long', { report });
    const [entry] = await deliver(dir, [pd(api.url)]);
    expect(entry?.status).toBe('delivered');
    const summary = String((api.events[0] as { payload: { summary: string } }).payload.summary);
    expect(summary.length).toBeLessThanOrEqual(1024);
    expect(summary.endsWith('…')).toBe(true);
  });

  it('adds the summary as a note on the PagerDuty incident the alert came from', async () => {
    const api = await pagerDuty();
    const incident = incidentJson({
      incidentId: 'inc-from-pd',
      source: { type: 'pagerduty', incidentId: 'Q1ABCDEF' },
    });
    const dir = await finishedWorkspace(root, 'from-pd', { incident });
    const [entry] = await deliver(dir, [
      pd(api.url, {
        notes: { secret: 'PAGERDUTY_API_TOKEN', from: 'oncall-bot@example.com', api_url: api.url },
      }),
    ]);
    expect(entry?.status).toBe('delivered');
    expect(entry?.steps.map((s) => s.id)).toEqual(['event', 'note']);
    const notes = api.notes.get('Q1ABCDEF') ?? [];
    expect(notes).toHaveLength(1);
    expect(notes[0]!.content).toMatch(/^Answer, not verified — CrashLoop on Pod /);
    expect(notes[0]!.content).toContain(`(triage-runner delivery inc-from-pd/${RUN_ID}.pd)`);
    const post = api.requests.find((r) => r.method === 'POST' && r.path === '/incidents/Q1ABCDEF/notes');
    expect(post?.headers).toMatchObject({
      authorization: `Token token=${PD_TOKEN}`,
      from: 'oncall-bot@example.com',
      accept: 'application/vnd.pagerduty+json;version=2',
    });
  });

  it('a retry and a resolution add notes to the same PagerDuty incident and trigger no new event', async () => {
    const api = await pagerDuty();
    const incident = incidentJson({
      incidentId: 'inc-pd-story',
      source: { type: 'pagerduty', incidentId: 'Q3STORY' },
    });
    const dir = await finishedWorkspace(root, 'pd-story', {
      incident,
      state: 'failed',
      reason: 'agent exited 1',
    });
    const sink = pd(api.url, {
      notes: { secret: 'PAGERDUTY_API_TOKEN', from: 'oncall-bot@example.com', api_url: api.url },
    });
    const [first] = await deliver(dir, [sink]);
    expect(first?.steps.map((s) => s.id)).toEqual(['event', 'note']);
    expect(api.events).toHaveLength(1);

    // The retry's run succeeds: its answer is a note on the same incident, not another event.
    const retryRun = '20260301T110000Z-d4e5f6';
    const stateFile = path.join(dir, '.triage', 'state.json');
    const state = JSON.parse(await readFile(stateFile, 'utf8')) as Record<string, unknown>;
    await writeFile(
      stateFile,
      JSON.stringify({
        ...state,
        state: 'succeeded',
        attempts: 2,
        reason: undefined,
        runs: [
          { id: RUN_ID, status: 'failed' },
          { id: retryRun, status: 'succeeded' },
        ],
      }),
    );
    const [second] = await deliver(dir, [sink]);
    expect(second?.status).toBe('delivered');
    expect(second?.steps.map((s) => s.id)).toEqual(['note']);

    await writeFile(
      path.join(dir, 'alerts.json'),
      JSON.stringify({ version: 1, alerts: [], resolvedAt: '2026-03-01T11:02:00.000Z' }),
    );
    const plan = await built!.notifier.incidentResolved(dir);
    const [third] = await built!.notifier.settle(
      dir,
      plan.deliveries.map((d) => d.key),
      20_000,
    );
    expect(third?.status).toBe('delivered');
    expect(third?.steps.map((s) => s.id)).toEqual(['note']);

    expect(api.events).toHaveLength(1);
    const notes = (api.notes.get('Q3STORY') ?? []).map((n) => n.content);
    expect(notes).toHaveLength(3);
    expect(notes[0]).toMatch(/^Investigation failed/);
    expect(notes[1]).toMatch(/^Answer, not verified/);
    expect(notes[2]).toMatch(
      /^Every alert behind this incident resolved at 2026-03-01T11:02:00.000Z\.\nResolved · Answer, not verified/,
    );
  });

  it('a resolution sends nothing to PagerDuty when the incident did not come from it', async () => {
    const api = await pagerDuty();
    const dir = await finishedWorkspace(root, 'pd-own');
    const [first] = await deliver(dir, [pd(api.url)]);
    expect(first?.status).toBe('delivered');
    await writeFile(
      path.join(dir, 'alerts.json'),
      JSON.stringify({ version: 1, alerts: [], resolvedAt: '2026-03-01T11:02:00.000Z' }),
    );
    const plan = await built!.notifier.incidentResolved(dir);
    expect(plan.deliveries).toEqual([]);
    expect(plan.skipped).toEqual([{ sink: 'pd', why: 'nothing to add at a pagerduty sink' }]);
    expect(api.events).toHaveLength(1);
  });

  it('finds a note whose answer was lost by its marker and does not add it twice', async () => {
    const api = await pagerDuty();
    api.on((r) => r.method === 'POST' && r.path.endsWith('/notes'), { kind: 'hold', apply: true });
    const incident = incidentJson({
      incidentId: 'inc-lost-note',
      source: { type: 'pagerduty', incidentId: 'Q2LOST' },
    });
    const dir = await finishedWorkspace(root, 'lost-note', { incident });
    const { config, env } = notifyConfig({
      sinks: [
        pd(api.url, {
          notes: { secret: 'PAGERDUTY_API_TOKEN', from: 'oncall-bot@example.com', api_url: api.url },
        }),
      ],
      secrets: { PAGERDUTY_ROUTING_KEY: ROUTING_KEY, PAGERDUTY_API_TOKEN: PD_TOKEN },
      extra: { request_timeout: '1s' },
    });
    built = buildNotifier(config, env);
    const plan = await built.notifier.incidentFinished(await finishedInput(dir, config));
    const [entry] = await built.notifier.settle(
      dir,
      plan.deliveries.map((d) => d.key),
      20_000,
    );
    expect(entry?.status).toBe('delivered');
    expect(api.notes.get('Q2LOST')).toHaveLength(1);
    expect(entry?.steps[1]?.result).toMatchObject({ reconciled: true, noteId: 'NOTE1' });
  });
});

describe('a run that starts', () => {
  it('is not sent to webhook or PagerDuty sinks: they hear outcomes only, as before', async () => {
    const r = await receiver();
    const pd = await pagerDuty();
    const dir = await finishedWorkspace(root, 'started');
    const { config, env } = notifyConfig({
      sinks: [
        hook(r.url),
        { name: 'pd', type: 'pagerduty', secret: 'PAGERDUTY_ROUTING_KEY', api_url: pd.url },
      ],
      secrets: { WEBHOOK_SIGNING_SECRET: SIGNING_SECRET, PAGERDUTY_ROUTING_KEY: ROUTING_KEY },
    });
    built = buildNotifier(config, env);
    const plan = await built.notifier.runStarted(
      dir,
      { state: 'running', attempts: 1, runs: [{ id: RUN_ID, status: 'running' }] },
      RUN_ID,
    );
    expect(plan.deliveries).toEqual([]);
    expect(plan.skipped).toEqual([
      { sink: 'hook', why: 'a webhook sink is told outcomes, not starts' },
      { sink: 'pd', why: 'a pagerduty sink is told outcomes, not starts' },
    ]);
    expect(r.requests).toHaveLength(0);
    expect(pd.requests).toHaveLength(0);
  });
});
