import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FEEDBACK_ACTION_PREFIX } from '../../../src/feedback/slack-interaction.js';
import { Registry } from 'prom-client';
import { AuditLog } from '../../../src/audit/log.js';
import { resolveSecrets } from '../../../src/config/secrets.js';
import type { StateChange } from '../../../src/incident/store.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { createResultsOut } from '../../../src/notify/results-out.js';
import type { Incident } from '../../../src/workspace/incident.js';
import { incidentJson } from '../../support/incidents.js';
import { sampleRunResult } from '../../support/runs.js';
import { SlackApi } from '../../support/notify-servers.js';
import {
  auditEvents,
  bigReport,
  buildNotifier,
  entriesBySink,
  finishedInput,
  finishedWorkspace,
  notifyConfig,
  RUN_ID,
  type TestNotifier,
} from '../../support/notify.js';

// The Slack sink through the real @slack/web-api client, pointed at a local Web API stand-in.

const TOKEN = 'xoxb-2718281828-3141592653-AbCdEfGhIjKlMnOpQrStUvWx';

let slack: SlackApi;
let root: string;
let built: TestNotifier | undefined;

beforeEach(async () => {
  slack = await new SlackApi(TOKEN).start();
  root = await mkdtemp(path.join(tmpdir(), 'tr-notify-slack-'));
});

afterEach(async () => {
  await built?.notifier.close();
  built = undefined;
  await slack.close();
  await rm(root, { recursive: true, force: true });
});

function setup(sink: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const { config, env } = notifyConfig({
    sinks: [
      {
        name: 'oncall',
        type: 'slack',
        channel: '#oncall',
        secret: 'SLACK_BOT_TOKEN',
        api_url: slack.apiUrl,
        ...sink,
      },
    ],
    secrets: { SLACK_BOT_TOKEN: TOKEN },
    publicUrl: 'https://triage.example.internal',
    ...extra,
  });
  built = buildNotifier(config, env);
  return { config, ...built };
}

async function deliver(dir: string, s: ReturnType<typeof setup>, waitMs = 20_000) {
  const plan = await s.notifier.incidentFinished(await finishedInput(dir, s.config));
  return s.notifier.settle(
    dir,
    plan.deliveries.map((d) => d.key),
    waitMs,
  );
}

const RETRY_RUN = '20260301T110000Z-d4e5f6';

/** A second run of the same incident that succeeds (what `retry` leaves behind). */
async function retrySucceeds(dir: string): Promise<void> {
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
        { id: RETRY_RUN, status: 'succeeded' },
      ],
    }),
  );
  const result = JSON.parse(
    await readFile(path.join(dir, '.triage', 'runs', RUN_ID, 'result.json'), 'utf8'),
  ) as Record<string, unknown>;
  await mkdir(path.join(dir, '.triage', 'runs', RETRY_RUN), { recursive: true });
  await writeFile(
    path.join(dir, '.triage', 'runs', RETRY_RUN, 'result.json'),
    JSON.stringify({ ...result, status: 'succeeded', exitCode: 0 }),
  );
}

const sectionTexts = (blocks: { type: string; text?: { text: string } }[]) =>
  blocks.filter((b) => b.type === 'section' && b.text).map((b) => b.text!.text);

/** The state record when a run has just launched (what the daemon hands runStarted). */
const running = (runId = RUN_ID, attempts = 1) => ({
  state: 'running',
  attempts,
  runs: [{ id: runId, status: 'running' }],
});

const tops = () => slack.messages.filter((m) => !m.thread_ts);
const updates = () => slack.requests.filter((r) => r.path === '/api/chat.update');
const header = (m: { blocks: { type: string; text?: { text: string } }[] }) =>
  m.blocks.find((b) => b.type === 'header')!.text!.text;

/** Results out as the daemon builds them, with one Slack sink. */
function daemonResultsOut() {
  const { config, env } = notifyConfig({
    sinks: [
      { name: 'oncall', type: 'slack', channel: '#oncall', secret: 'SLACK_BOT_TOKEN', api_url: slack.apiUrl },
    ],
    secrets: { SLACK_BOT_TOKEN: TOKEN },
  });
  const secrets = resolveSecrets(config, env).values;
  const redactor = new Redactor(secrets);
  const registry = new Registry();
  return createResultsOut(config, {
    secrets,
    redactor,
    audit: new AuditLog({ redactor }),
    log: silentLogger(),
    registry,
  })!;
}

describe('slack sink: one parent from the run start', () => {
  it("posts the parent when the run starts (running, the incident's own page), then the answer replaces it in place", async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'started-then-answered');
    const started = await s.notifier.runStarted(dir, running(), RUN_ID);
    expect(started.deliveries).toEqual([{ sink: 'oncall', key: `${RUN_ID}.oncall.running`, created: true }]);
    const [announced] = await s.notifier.settle(dir, [started.deliveries[0]!.key], 20_000);
    expect(announced?.status).toBe('delivered');
    expect(tops()).toHaveLength(1);
    const parent = tops()[0]!;
    expect(parent.text).toBe('Investigation running: CrashLoop on Pod shop/web-1 (prod-1).');
    expect(header(parent as never)).toBe('⏳ Investigating: CrashLoop on Pod shop/web-1 (prod-1)');
    const blocks = parent.blocks as { type: string; fields?: { text: string }[] }[];
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'context']);
    expect(blocks[1]!.fields!.map((f) => f.text)).toContain('*State*\nrunning');
    expect(JSON.stringify(blocks)).toContain(
      '<https://triage.example.internal/incidents/started-then-answered|status page>',
    );
    expect(slack.messages.filter((m) => m.thread_ts)).toHaveLength(0);

    const [answered] = await deliver(dir, s);
    expect(answered?.status).toBe('delivered');
    expect(tops()).toHaveLength(1);
    expect(tops()[0]!.ts).toBe(parent.ts);
    expect(tops()[0]!.text).toMatch(/^Answer, not verified/);
    expect(updates()).toHaveLength(1);
    expect(answered!.steps[0]).toMatchObject({ id: 'parent', result: { ts: parent.ts, updated: true } });
    expect(slack.messages.filter((m) => m.thread_ts === parent.ts).length).toBeGreaterThan(0);
  });

  it('an answer recorded while the running message is still being retried waits for it: one parent, updated', async () => {
    // Slack refuses the first post of the running parent with a retryable error.
    slack.on((r) => r.path === '/api/chat.postMessage' && !r.body.thread_ts, {
      kind: 'slack-error',
      error: 'internal_error',
    });
    const s = setup();
    const dir = await finishedWorkspace(root, 'fast-run');
    const started = await s.notifier.runStarted(dir, running(), RUN_ID);
    await slack.waitFor((r) => r.path === '/api/chat.postMessage');
    const finished = await s.notifier.incidentFinished(await finishedInput(dir, s.config));
    const keys = [...started.deliveries, ...finished.deliveries].map((d) => d.key);
    const entries = await s.notifier.settle(dir, keys, 20_000);
    expect(entries.map((e) => e.status)).toEqual(['delivered', 'delivered']);
    expect(tops()).toHaveLength(1);
    expect(tops()[0]!.text).toMatch(/^Answer, not verified/);
    expect(updates()).toHaveLength(1);
    const [first, second] = entries;
    expect(second!.steps[0]!.result).toMatchObject({ ts: first!.steps[0]!.result!.ts, updated: true });
  });

  it('a restart neither posts a second running parent nor loses the one posted', async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'restarted');
    const started = await s.notifier.runStarted(dir, running(), RUN_ID);
    await s.notifier.settle(dir, [started.deliveries[0]!.key], 20_000);
    await s.notifier.close();

    // The next process: the run is announced again (an adopted run) and the outbox is resumed.
    const again = setup();
    const replayed = await again.notifier.runStarted(dir, running(), RUN_ID);
    expect(replayed.deliveries).toEqual([
      { sink: 'oncall', key: `${RUN_ID}.oncall.running`, created: false },
    ]);
    await again.notifier.resumeAll(root, { catchUp: true });
    const [answered] = await deliver(dir, again);
    expect(answered?.status).toBe('delivered');
    expect(slack.posts().filter((p) => !p.body.thread_ts)).toHaveLength(1);
    expect(tops()).toHaveLength(1);
    expect(tops()[0]!.text).toMatch(/^Answer, not verified/);
  });

  it("a retry's start turns the parent back to running and says so in the thread; its answer updates it again", async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'retry-running', { state: 'failed', reason: 'agent exited 1' });
    await deliver(dir, s);
    const parentTs = tops()[0]!.ts;
    expect(tops()[0]!.text).toMatch(/^Investigation failed/);

    const started = await s.notifier.runStarted(dir, running(RETRY_RUN, 2), RETRY_RUN);
    const [announced] = await s.notifier.settle(dir, [started.deliveries[0]!.key], 20_000);
    expect(announced?.status).toBe('delivered');
    expect(tops()).toHaveLength(1);
    expect(tops()[0]!.ts).toBe(parentTs);
    expect(tops()[0]!.text).toBe('Investigation running (attempt 2): CrashLoop on Pod shop/web-1 (prod-1).');
    expect(slack.messages.filter((m) => m.thread_ts === parentTs).at(-1)!.text).toContain(
      `Retried: run ${RETRY_RUN} (attempt 2) started`,
    );

    await retrySucceeds(dir);
    await deliver(dir, s);
    expect(tops()).toHaveLength(1);
    expect(tops()[0]!.text).toMatch(/^Answer, not verified/);
    expect(updates()).toHaveLength(2);
  });

  it("the daemon's results-out posts the running parent when the store records the launch", async () => {
    const out = daemonResultsOut();
    try {
      const dir = await finishedWorkspace(root, 'launched');
      const record = { ...running(), incidentId: 'inc-launched' } as unknown as StateChange['record'];
      out.onChange({
        dir,
        record,
        previous: undefined,
        event: { type: 'Launched', runId: RUN_ID, engine: 'process', id: '4242' },
      });
      await vi.waitFor(
        () => expect(tops().map((m) => m.text)).toEqual([expect.stringMatching(/^Investigation running/)]),
        {
          timeout: 20_000,
        },
      );
    } finally {
      await out.close(5_000);
    }
  });

  it("the daemon's results-out tells the sinks of a finished run from what the run produced, reading none of it back", async () => {
    const out = daemonResultsOut();
    try {
      // The workspace as the run leaves it, but with incident.json, result.json and the report gone: a
      // notification read back from disk would have nothing to say.
      const dir = await finishedWorkspace(root, 'in-memory');
      await rm(path.join(dir, 'incident.json'));
      await rm(path.join(dir, 'output'), { recursive: true });
      await rm(path.join(dir, '.triage', 'runs', RUN_ID, 'result.json'));
      const record = {
        incidentId: 'inc-in-memory',
        state: 'succeeded',
        attempts: 1,
        updatedAt: new Date().toISOString(),
        runs: [{ id: RUN_ID, status: 'succeeded' }],
      } as StateChange['record'];
      out.onChange({
        dir,
        record,
        previous: undefined,
        event: { type: 'Finished', runId: RUN_ID, outcome: { status: 'succeeded' } },
        run: {
          incident: incidentJson({
            incidentId: 'inc-in-memory',
            resource: { apiVersion: 'v1', kind: 'Pod', name: 'cart-7', namespace: 'shop' },
          }) as Incident,
          result: sampleRunResult({
            tokens: { input: 1, output: 1 },
            answer: 'The cart-7 pod ran out of memory; raise its limit.',
          }),
          report: '# Summary\n\nThe cart-7 pod ran out of memory.\n',
        },
      });
      await vi.waitFor(() => expect(tops()).toHaveLength(1), { timeout: 20_000 });
      expect(tops()[0]!.text).toMatch(/^Answer, not verified — CrashLoop on Pod shop\/cart-7/);
      // The hypothesis from the report, the tokens from result.json: both as the run held them.
      expect(tops()[0]!.text).toContain('Hypothesis: The cart-7 pod ran out of memory.');
      expect(JSON.stringify(tops()[0]!.blocks)).toContain('1 in · 1 out');
    } finally {
      await out.close(5_000);
    }
  });

  it('does not announce a start to a sink that would not hear every outcome', async () => {
    const s = setup({ on: ['failed'] });
    const dir = await finishedWorkspace(root, 'failures-only');
    const plan = await s.notifier.runStarted(dir, running(), RUN_ID);
    expect(plan.deliveries).toEqual([]);
    expect(plan.skipped).toEqual([
      {
        sink: 'oncall',
        why: 'on: [failed] leaves out succeeded: a running message could stay unanswered',
      },
    ]);
    expect(slack.requests).toHaveLength(0);
  });
});

describe('slack sink', () => {
  it('posts a Block Kit parent with the summary, then the whole report as threaded replies', async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'payments-crashloop');
    const [entry] = await deliver(dir, s);
    expect(entry?.status).toBe('delivered');

    const posts = slack.posts();
    expect(posts.length).toBeGreaterThanOrEqual(2);
    for (const p of posts) expect(p.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const incidentId = 'inc-payments-crashloop';
    const key = `${incidentId}/${RUN_ID}.oncall`;
    expect(posts[0]!.body).toEqual({
      channel: '#oncall',
      text: 'Answer, not verified — CrashLoop on Pod shop/web-1 (prod-1). Hypothesis: The payments-api container exits because DATABASE_URL points at a Secret key that was renamed in the last rollout (confidence High). First action: kubectl -n payments rollout undo deployment/payments-api.',
      blocks: expect.any(Array),
      metadata: { event_type: 'triage_runner_delivery', event_payload: { key, step: 'parent' } },
      unfurl_links: 'false',
      unfurl_media: 'false',
    });
    const parentBlocks = posts[0]!.body.blocks as {
      type: string;
      text?: { text: string };
      fields?: { text: string }[];
    }[];
    expect(parentBlocks.map((b) => b.type)).toEqual([
      'header',
      'section',
      'section',
      'section',
      'context',
      'actions',
    ]);
    expect(parentBlocks[1]!.fields!.map((f) => f.text)).toEqual([
      '*Resource*\nPod shop/web-1',
      '*Cluster*\nprod-1',
      '*Fault*\nCrashLoop',
      '*Severity*\ncritical',
      '*Outcome*\nnot verified',
      '*Duration*\n4m 12s',
      '*Cost*\n$0.42',
      '*Tokens*\n12,345 in · 2,345 out',
    ]);
    expect(sectionTexts(parentBlocks)).toEqual([
      '*Primary hypothesis* (confidence: High)\nThe payments-api container exits because DATABASE_URL points at a Secret key that was renamed in the last rollout',
      '*First action*\nkubectl -n payments rollout undo deployment/payments-api',
    ]);

    // Thread linkage: every later post replies to the parent, in the channel Slack answered with.
    const parent = slack.messages[0]!;
    expect(parent.channel).toBe(SlackApi.CHANNEL_ID);
    const replies = posts.slice(1);
    replies.forEach((r, i) => {
      expect(r.body.channel).toBe(SlackApi.CHANNEL_ID);
      expect(r.body.thread_ts).toBe(parent.ts);
      expect(r.body.metadata).toEqual({
        event_type: 'triage_runner_delivery',
        event_payload: { key, step: `part-${i + 1}` },
      });
    });
    const thread = replies.flatMap((r) => sectionTexts(r.body.blocks as never)).join('\n\n');
    for (const heading of ['0. Executive Triage Card', '3. Root Cause Analysis', '6. Supporting Evidence'])
      expect(thread).toContain(`*${heading}*`);
    expect(thread).toContain('&lt;and&gt; &amp; friends');

    // The outbox records each message's ts; the audit log each attempt; the metric the outcome.
    expect(entry!.steps.map((st) => [st.id, st.status, st.result?.ts])).toEqual([
      ['parent', 'delivered', parent.ts],
      ...replies.map((_, i) => [`part-${i + 1}`, 'delivered', slack.messages[i + 1]!.ts]),
    ]);
    // notify_delivered is appended right after the entry is saved delivered (what settle watches).
    await vi.waitFor(async () => {
      const events = (await auditEvents(dir)).filter((e) => String(e.type).startsWith('notify_'));
      expect(events.map((e) => [e.type, e.step ?? null, e.outcome ?? null])).toEqual([
        ['notify_queued', null, null],
        ['notify_attempted', 'parent', 'delivered'],
        ...replies.map((_, i) => ['notify_attempted', `part-${i + 1}`, 'delivered']),
        ['notify_delivered', null, null],
      ]);
    });
    expect(s.metrics.calls).toEqual([['oncall', 'delivered']]);
  });

  it("a retried incident keeps one parent message, updated in place, with the incident's own page linked", async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'retried-incident', {
      state: 'failed',
      reason: 'agent exited 1',
    });
    const [first] = await deliver(dir, s);
    expect(first?.status).toBe('delivered');
    expect(slack.messages.filter((m) => !m.thread_ts)).toHaveLength(1);
    const parent = slack.messages[0]!;
    expect(parent.text).toMatch(/^Investigation failed/);

    // The retry: a second run of the same incident succeeds.
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
    const result = JSON.parse(
      await readFile(path.join(dir, '.triage', 'runs', RUN_ID, 'result.json'), 'utf8'),
    ) as Record<string, unknown>;
    await mkdir(path.join(dir, '.triage', 'runs', retryRun), { recursive: true });
    await writeFile(
      path.join(dir, '.triage', 'runs', retryRun, 'result.json'),
      JSON.stringify({ ...result, status: 'succeeded', exitCode: 0 }),
    );
    const [second] = await deliver(dir, s);
    expect(second?.status).toBe('delivered');

    const tops = slack.messages.filter((m) => !m.thread_ts);
    expect(tops).toHaveLength(1);
    expect(tops[0]!.ts).toBe(parent.ts);
    expect(tops[0]!.text).toMatch(/^Answer, not verified/);
    expect(slack.requests.filter((r) => r.path === '/api/chat.update')).toHaveLength(1);
    expect(second!.steps[0]).toMatchObject({ id: 'parent', result: { ts: parent.ts, updated: true } });
    // The retry's report went into the same thread.
    const threaded = slack.messages.filter((m) => m.thread_ts === parent.ts);
    expect(threaded.length).toBeGreaterThan(0);
    expect(JSON.stringify(tops[0]!.blocks)).toContain(
      'https://triage.example.internal/incidents/retried-incident',
    );
  });

  it('a retried and then resolved incident has exactly one parent message, updated in place, with the resolution in the thread', async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'retried-resolved', {
      state: 'failed',
      reason: 'agent exited 1',
    });
    const [first] = await deliver(dir, s);
    expect(first?.status).toBe('delivered');
    const parentTs = slack.messages[0]!.ts;
    await retrySucceeds(dir);
    const [second] = await deliver(dir, s);
    expect(second?.status).toBe('delivered');

    // Every alert behind it resolves after the answer; a responder rated it in the meantime.
    const at = '2026-03-01T11:02:00.000Z';
    await writeFile(
      path.join(dir, 'alerts.json'),
      JSON.stringify({ version: 1, alerts: [], resolvedAt: at }),
    );
    await writeFile(
      path.join(dir, '.triage', 'feedback.json'),
      JSON.stringify({ verdict: 'wrong', source: 'slack', at, by: 'slack:alice (U024BE7LH)' }),
    );
    const plan = await s.notifier.incidentResolved(dir);
    expect(plan.deliveries).toEqual([{ sink: 'oncall', key: `${RETRY_RUN}.oncall.resolved`, created: true }]);
    const [third] = await s.notifier.settle(dir, [plan.deliveries[0]!.key], 20_000);
    expect(third?.status).toBe('delivered');
    expect(third!.steps.map((x) => x.id)).toEqual(['parent', 'part-1']);

    const tops = slack.messages.filter((m) => !m.thread_ts);
    expect(tops).toHaveLength(1);
    expect(tops[0]!.ts).toBe(parentTs);
    expect(slack.requests.filter((r) => r.path === '/api/chat.update')).toHaveLength(2);
    const header = tops[0]!.blocks.find((b) => b.type === 'header')!.text!.text;
    expect(header).toMatch(/Resolved · Answer, not verified/);
    expect(JSON.stringify(tops[0]!.blocks)).toContain(`*Alert resolved*\\n${at}`);
    expect(JSON.stringify(tops[0]!.blocks)).toContain('rated *wrong* by slack:alice (U024BE7LH)');
    const thread = slack.messages.filter((m) => m.thread_ts === parentTs);
    expect(thread.at(-1)!.text).toContain(`resolved at ${at}`);
    // Resolving again (a second resolved webhook) records and sends nothing new.
    const again = await s.notifier.incidentResolved(dir);
    expect(again.deliveries).toEqual([
      { sink: 'oncall', key: `${RETRY_RUN}.oncall.resolved`, created: false },
    ]);
    expect(slack.requests.filter((r) => r.path === '/api/chat.update')).toHaveLength(2);
  });

  it('a resolution tells nothing to a sink that has no message of the incident', async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'never-told');
    await writeFile(
      path.join(dir, 'alerts.json'),
      JSON.stringify({ version: 1, alerts: [], resolvedAt: '2026-03-01T11:02:00.000Z' }),
    );
    const plan = await s.notifier.incidentResolved(dir);
    expect(plan.deliveries).toEqual([]);
    expect(plan.skipped).toEqual([{ sink: 'oncall', why: 'no earlier message of this incident to update' }]);
    expect(slack.requests).toHaveLength(0);
  });

  it('puts Correct / Partly / Wrong buttons on the parent, carrying the workspace folder, within Slack limits', async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'rate-me');
    const [entry] = await deliver(dir, s);
    expect(entry?.status).toBe('delivered');
    const actions = slack.messages[0]!.blocks.filter((b) => b.type === 'actions');
    expect(actions).toHaveLength(1);
    expect(actions[0]!.elements!.map((e) => [e.action_id, e.text!.text, e.value])).toEqual([
      [`${FEEDBACK_ACTION_PREFIX}correct`, 'Correct', 'rate-me'],
      [`${FEEDBACK_ACTION_PREFIX}partly`, 'Partly', 'rate-me'],
      [`${FEEDBACK_ACTION_PREFIX}wrong`, 'Wrong', 'rate-me'],
    ]);
    // The threaded report parts carry no buttons.
    for (const m of slack.messages.filter((x) => x.thread_ts))
      expect(m.blocks.some((b) => b.type === 'actions')).toBe(false);
  });

  it('keeps a 200 KB report within Slack limits: every part accepted, threaded, nothing lost', async () => {
    const s = setup();
    const report = bigReport(200 * 1024);
    const dir = await finishedWorkspace(root, 'big', { report });
    const [entry] = await deliver(dir, s, 60_000);
    // The stand-in answers a post beyond Slack's limits with Slack's own error (invalid_blocks, msg_blocks_too_long).
    expect(entry?.lastError).toBeUndefined();
    expect(entry?.status).toBe('delivered');
    const replies = slack.posts().slice(1);
    expect(replies.length).toBe(entry!.steps.length - 1);
    expect(replies.length).toBeGreaterThan(10);
    const thread = replies.flatMap((r) => sectionTexts(r.body.blocks as never)).join('\n');
    const count = (report.match(/^## \d+\. Section \d+$/gm) ?? []).length;
    for (let i = 1; i <= count; i++) expect(thread).toContain(`END-${i}`);
    for (const r of replies) expect(r.body.thread_ts).toBe(slack.messages[0]!.ts);
  });

  it('posts the reason and what to do when the run failed', async () => {
    const s = setup();
    const dir = await finishedWorkspace(root, 'timed-out', {
      state: 'failed',
      reason: 'the agent run exceeded agent.timeout and was stopped',
      report: null,
      result: { status: 'timed_out', answer: undefined },
    });
    const [entry] = await deliver(dir, s);
    expect(entry?.status).toBe('delivered');
    expect(slack.posts()).toHaveLength(1);
    const texts = sectionTexts(slack.messages[0]!.blocks as never);
    expect(texts).toContain('*Why it failed*\nthe agent run exceeded agent.timeout and was stopped');
    expect(texts).toContain(
      `*What to do*\nThe agent ran out of time (agent.timeout): read .triage/runs/${RUN_ID}/agent-stderr.log; then re-queue it: \`triage-runner retry timed-out\` (raise agent.timeout if the cluster is slow to inspect).`,
    );
  });

  it('records a refusal with the response, secrets redacted, and does not retry it', async () => {
    const s = setup();
    slack.on((r) => r.path === '/api/chat.postMessage', {
      kind: 'status',
      status: 400,
      body: JSON.stringify({ ok: false, error: 'invalid_request', echo: `Authorization: Bearer ${TOKEN}` }),
    });
    const dir = await finishedWorkspace(root, 'refused');
    const [entry] = await deliver(dir, s);
    expect(entry?.status).toBe('failed');
    expect(entry?.lastError).toMatchObject({ kind: 'permanent', status: 400 });
    expect(entry?.lastError?.response).toContain('[REDACTED');
    expect(entry?.lastError?.response).not.toContain(TOKEN);
    // reason: several base delays later, still one request: a refusal arms no retry to await
    // (test/unit/notify/retry-timers.test.ts proves it on fake timers).
    await new Promise((r) => setTimeout(r, 1000));
    expect(slack.posts()).toHaveLength(1);
    const outboxText = await readFile(path.join(dir, '.triage', 'outbox', `${entry!.key}.json`), 'utf8');
    expect(outboxText).not.toContain(TOKEN);
    expect(await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8')).not.toContain(TOKEN);
    const failed = (await auditEvents(dir)).find((e) => e.type === 'notify_failed');
    expect(failed).toMatchObject({ sink: 'oncall', step: 'parent', reason: 'permanent' });
    expect(s.metrics.calls).toEqual([['oncall', 'failed']]);
  });

  it("posts again after Slack's 429, no sooner than its Retry-After", async () => {
    const s = setup();
    slack.on((r) => r.path === '/api/chat.postMessage', {
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '2' },
    });
    const dir = await finishedWorkspace(root, 'rate-limited', { report: '## A\n\nshort report' });
    const [entry] = await deliver(dir, s);
    expect(entry?.status).toBe('delivered');
    const [first, second] = slack.posts();
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(2000);
    expect(slack.messages.filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(s.metrics.calls).toEqual([
      ['oncall', 'retried'],
      ['oncall', 'delivered'],
    ]);
  });

  it('finds a post whose answer was lost by its metadata and does not post it again', async () => {
    // Slack stores the parent but the answer never arrives (the notifier gives up after its timeout).
    slack.on((r) => r.path === '/api/chat.postMessage' && !r.body.thread_ts, { kind: 'hold', apply: true });
    const s = setup({ channel: SlackApi.CHANNEL_ID }, { extra: { request_timeout: '1s' } });
    const dir = await finishedWorkspace(root, 'lost-answer', { report: '## A\n\nshort report' });
    const [entry] = await deliver(dir, s);
    expect(entry?.status).toBe('delivered');
    expect(slack.messages.filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(entry?.steps[0]?.result).toMatchObject({ ts: slack.messages[0]!.ts, reconciled: true });
    expect(slack.requests.some((r) => r.path === '/api/conversations.history')).toBe(true);
    const reply = slack.messages.find((m) => m.thread_ts);
    expect(reply?.thread_ts).toBe(slack.messages[0]!.ts);
    const outcomes = (await auditEvents(dir))
      .filter((e) => e.type === 'notify_attempted')
      .map((e) => e.outcome);
    expect(outcomes).toEqual(['retry', 'reconciled', 'delivered']);
  });

  it('delivers nothing to a sink whose filters exclude the incident', async () => {
    const s = setup({ min_severity: 'critical', clusters: ['prod-us-1'] });
    const dir = await finishedWorkspace(root, 'filtered');
    const plan = await s.notifier.incidentFinished(await finishedInput(dir, s.config));
    expect(plan.deliveries).toEqual([]);
    expect(plan.skipped).toEqual([{ sink: 'oncall', why: 'cluster prod-1 is not in clusters' }]);
    expect(await entriesBySink(dir)).toEqual({});
    expect(slack.requests).toHaveLength(0);
  });
});
