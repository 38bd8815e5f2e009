import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ActionsBlock, Button } from '@slack/types';
import { AuditLog } from '../../../src/audit/log.js';
import { readFinishedIncident } from '../../../src/notify/input.js';
import { parentMessage } from '../../../src/notify/slack-blocks.js';
import { summarize } from '../../../src/notify/summary.js';
import { FEEDBACK_ACTION_PREFIX } from '../../../src/feedback/slack-interaction.js';
import { startHttpServer } from '../../../src/server/http.js';
import { type HttpServer } from '../../../src/server/types.js';
import { feedbackRoutes } from '../../../src/server/routes/feedback.js';
import { statusApiRoutes } from '../../../src/server/routes/status.js';
import { registerAnswerMetrics } from '../../../src/status/answer-metrics.js';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import type { ListPage } from '../../../src/status/types.js';
import { tempRoot } from '../../support/incidents.js';
import { rootWithEveryState } from '../../support/status-root.js';

// Feedback over real sockets: the API (bearer token) and Slack's signed interactions, each recorded
// once in `.triage/feedback.json` and the audit chain, shown in the status API, changeable, and a bad
// or stale Slack signature refused.

const TOKEN = 'feedback-token-93c1d7';
const SIGNING = 'slack-signing-secret-4b2e9a71';

let root: string;
let cleanup: () => Promise<void>;
let server: HttpServer | undefined;
let index: IncidentIndex | undefined;
let now = Date.parse('2026-11-26T10:00:00Z');

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-feedback-'));
  now = Date.parse('2026-11-26T10:00:00Z');
});
afterEach(async () => {
  await server?.close();
  index?.close();
  server = undefined;
  index = undefined;
  await cleanup();
});

async function serve(options: { slack?: boolean } = {}): Promise<string> {
  index = new IncidentIndex({ root });
  await index.load();
  const idx = index;
  server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    token: TOKEN,
    readiness: async () => ({ ok: true, checks: [] }),
    metrics: { render: async () => '', contentType: 'text/plain' },
    routes: [
      statusApiRoutes({ index: idx }),
      feedbackRoutes({
        root,
        audit: new AuditLog(),
        ...(options.slack === false ? {} : { slackSigningSecret: SIGNING }),
        onRecorded: (folder) => void idx.refresh(folder),
        now: () => now,
      }),
    ],
  });
  return `http://127.0.0.1:${server.port}`;
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

async function auditTypes(dir: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e.type === 'feedback_recorded');
}

function slackBody(folder: string, verdict: string, user = { id: 'U123', username: 'alice' }): string {
  const payload = {
    type: 'block_actions',
    user,
    actions: [{ action_id: `${FEEDBACK_ACTION_PREFIX}${verdict}`, value: folder, type: 'button' }],
  };
  return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

function signed(body: string, at = Math.floor(now / 1000), secret = SIGNING): Record<string, string> {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${at}:${body}`).digest('hex')}`;
  return {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': String(at),
    'x-slack-signature': signature,
  };
}

describe('feedback over the API', () => {
  it('records a verdict once, shows it in the status API, and records a change with what it replaces', async () => {
    const dirs = await rootWithEveryState(root);
    const base = await serve();
    const url = `${base}/v1/incidents/succeeded/feedback`;
    const first = await fetch(url, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        verdict: 'correct',
        cause: 'DATABASE_URL missing from secret payments-db',
        by: 'bob',
      }),
    });
    expect(first.status).toBe(201);
    expect(await first.json()).toMatchObject({
      recorded: true,
      feedback: { verdict: 'correct', source: 'api', by: 'bob' },
    });
    const again = await fetch(url, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        verdict: 'correct',
        cause: 'DATABASE_URL missing from secret payments-db',
        by: 'bob',
      }),
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ recorded: false });
    expect(await auditTypes(dirs.succeeded)).toHaveLength(1);

    await expect
      .poll(async () => {
        const list = (await (await fetch(`${base}/v1/incidents`, { headers: auth })).json()) as ListPage;
        return list.incidents.find((v) => v.folder === 'succeeded')?.feedback?.verdict;
      })
      .toBe('correct');

    const changed = await fetch(url, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ verdict: 'wrong' }),
    });
    expect(changed.status).toBe(201);
    const events = await auditTypes(dirs.succeeded);
    expect(events.map((e) => [e.verdict, e.replaces])).toEqual([
      ['correct', undefined],
      ['wrong', 'correct'],
    ]);
    expect(events[1]).toMatchObject({ runId: 'run-succeeded', incidentId: 'inc-succeeded', source: 'api' });
    const file = JSON.parse(
      await readFile(path.join(dirs.succeeded, '.triage', 'feedback.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(file).toMatchObject({ verdict: 'wrong', source: 'api', runId: 'run-succeeded' });
  });

  it('refuses a bad verdict, unknown fields, a missing token and an incident that has no answer yet', async () => {
    await rootWithEveryState(root);
    const base = await serve();
    const post = (folder: string, body: unknown, headers: Record<string, string> = auth) =>
      fetch(`${base}/v1/incidents/${folder}/feedback`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
    const bad = await post('succeeded', { verdict: 'maybe' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain('correct, partly, wrong');
    expect((await post('succeeded', { verdict: 'correct', score: 3 })).status).toBe(400);
    expect(
      (await post('succeeded', { verdict: 'correct' }, { 'content-type': 'application/json' })).status,
    ).toBe(401);
    const queued = await post('queued', { verdict: 'correct' });
    expect(queued.status).toBe(409);
    expect(((await queued.json()) as { message: string }).message).toContain('has not been investigated yet');
    expect((await post('no-such-folder', { verdict: 'correct' })).status).toBe(404);
  });
});

describe('feedback from Slack buttons', () => {
  it('records a signed interaction once, naming the Slack user, without the bearer token', async () => {
    const dirs = await rootWithEveryState(root);
    const base = await serve();
    const body = slackBody('succeeded', 'partly');
    const res = await fetch(`${base}/v1/slack/interactions`, { method: 'POST', headers: signed(body), body });
    expect(res.status).toBe(200);
    const again = await fetch(`${base}/v1/slack/interactions`, {
      method: 'POST',
      headers: signed(body),
      body,
    });
    expect(again.status).toBe(200);
    const events = await auditTypes(dirs.succeeded);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ verdict: 'partly', source: 'slack', by: 'slack:alice (U123)' });
  });

  it("round trip: the Wrong button on the Slack parent, clicked and signed as Slack sends it, is recorded and shown on the parent's next update", async () => {
    const dirs = await rootWithEveryState(root);
    const base = await serve();
    const render = async () => {
      const finished = await readFinishedIncident(dirs.succeeded, {
        maxIncidentBytes: 1 << 20,
        maxReportBytes: 1 << 20,
      });
      return parentMessage(
        {
          ...finished,
          summary: summarize(finished.report, undefined),
          trigger: 'finished',
          idempotencyKey: 'k',
          folder: path.basename(dirs.succeeded),
        },
        true,
      );
    };
    const before = await render();
    const actions = before.blocks.find((b): b is ActionsBlock => b.type === 'actions');
    const wrong = actions?.elements.find(
      (e): e is Button => e.type === 'button' && e.action_id === `${FEEDBACK_ACTION_PREFIX}wrong`,
    );
    expect(wrong?.value).toBe('succeeded');
    // What Slack POSTs when a user clicks it (a block_actions interaction, form-encoded, signed).
    const payload = {
      type: 'block_actions',
      user: { id: 'U999', username: 'bob', name: 'bob', team_id: 'T1' },
      api_app_id: 'A1',
      container: { type: 'message', message_ts: '1700000000.000100', channel_id: 'C0NOTIFY01' },
      channel: { id: 'C0NOTIFY01', name: 'oncall' },
      actions: [
        {
          type: 'button',
          block_id: actions!.block_id,
          action_id: wrong!.action_id,
          text: wrong!.text,
          value: wrong!.value,
          action_ts: '1700000001.000200',
        },
      ],
    };
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const res = await fetch(`${base}/v1/slack/interactions`, { method: 'POST', headers: signed(body), body });
    expect(res.status).toBe(200);
    const events = await auditTypes(dirs.succeeded);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ verdict: 'wrong', source: 'slack', by: 'slack:bob (U999)' });

    const after = await render();
    expect(JSON.stringify(after.blocks)).toContain('rated *wrong* by slack:bob (U999)');
    const buttons = after.blocks.find((b): b is ActionsBlock => b.type === 'actions')!.elements as Button[];
    expect(buttons.map((b) => b.text.text)).toEqual(['Correct', 'Partly', 'Wrong ✓']);
  });

  it('refuses a bad signature, a stale timestamp and a missing signature with 401, recording nothing', async () => {
    const dirs = await rootWithEveryState(root);
    const base = await serve();
    const body = slackBody('succeeded', 'wrong');
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/v1/slack/interactions`, { method: 'POST', headers, body });
    const forged = await post(signed(body, Math.floor(now / 1000), 'not-the-secret'));
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { message: string }).message).toContain('does not match');
    const stale = await post(signed(body, Math.floor(now / 1000) - 6 * 60));
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { message: string }).message).toContain('window');
    expect((await post({ 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(401);
    const tampered = signed(body);
    const other = slackBody('failed', 'wrong');
    expect(
      (await fetch(`${base}/v1/slack/interactions`, { method: 'POST', headers: tampered, body: other }))
        .status,
    ).toBe(401);
    await expect(auditTypes(dirs.succeeded)).resolves.toHaveLength(0);
    await expect(auditTypes(dirs.failed)).resolves.toHaveLength(0);
  });

  it('answers 503 naming the secret when SLACK_SIGNING_SECRET is not set', async () => {
    await rootWithEveryState(root);
    const base = await serve({ slack: false });
    const body = slackBody('succeeded', 'correct');
    const res = await fetch(`${base}/v1/slack/interactions`, { method: 'POST', headers: signed(body), body });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { message: string }).message).toContain('SLACK_SIGNING_SECRET');
  });
});

describe('answers as metrics', () => {
  it('counts answers by grade from the index, unrated until rated, with the confident-wrong count', async () => {
    await rootWithEveryState(root);
    const base = await serve();
    const registry = new Registry();
    registerAnswerMetrics(registry, index as IncidentIndex);
    expect(await registry.metrics()).toContain('triage_runner_answers_total{grade="unrated"} 1');
    const res = await fetch(`${base}/v1/incidents/succeeded/feedback`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ verdict: 'wrong' }),
    });
    expect(res.status).toBe(201);
    await vi.waitFor(async () => {
      const text = await registry.metrics();
      expect(text).toContain('triage_runner_answers_total{grade="wrong"} 1');
      expect(text).toContain('triage_runner_answers_total{grade="unrated"} 0');
      expect(text).toContain('triage_runner_answers_confident_wrong 1');
    });
  });
});
