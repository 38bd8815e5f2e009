import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../../../src/cli/io.js';
import { runCli } from '../../../../src/cli/program.js';
import { readFinalState, readIncident } from '../../../../src/notify/input.js';
import type { IntakeReply } from '../../../../src/server/routes/intake.js';
import type { IncidentView } from '../../../../src/status/types.js';
import { shippedPromptFiles } from '../../context/helpers.js';
import { createMemoryExecutor } from '../../../support/fake-executor.js';
import { tempRoot, waitForReleased, waitForState } from '../../../support/incidents.js';
import { buildNotifier, notifyConfig, slackSink, type TestNotifier } from '../../../support/notify.js';
import { SlackApi } from '../../../support/notify-servers.js';
import { startStatusDaemon } from '../../../support/status-daemon.js';
import { amAlert, amPayload } from '../../../support/webhooks/alerts.js';
import { startIntakeDaemon } from '../../../support/webhooks/daemon.js';

// A storm as it was found on call: six alerts for six Deployments join one incident under storm_limit.
// Wherever the incident is shown (Slack, the page, GET /v1/incidents/{id}) and in the agent's prompt,
// each of the six is named, not only the first.

const TOKEN = 'xoxb-2718281828-3141592653-AbCdEfGhIjKlMnOpQrStUvWx';
const WORKLOADS = ['cart', 'pricing', 'tax', 'promo', 'fraud', 'ledger'];

let root: string;
let cleanup: () => Promise<void>;
let stops: (() => Promise<void>)[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-storm-'));
});
afterEach(async () => {
  for (const stop of stops.reverse()) await stop();
  stops = [];
  await cleanup();
});

/** Six CrashLooping pods of six Deployments in one namespace, delivered as Alertmanager groups them. */
async function sixWorkloadStorm(): Promise<{ folder: string; incidentId: string }> {
  const intake = await startIntakeDaemon({
    root,
    executor: createMemoryExecutor({ durationMs: 5 }),
    config: { intake: { webhooks: { storm_limit: 1 } } },
  });
  stops.push(() => intake.stop());
  const alerts = WORKLOADS.map((name) => amAlert({ namespace: 'shop', pod: `${name}-7d4b9c8f6d-x2x9k` }));
  const res = await fetch(`${intake.base}/v1/alerts/alertmanager`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(amPayload(alerts)),
  });
  const reply = (await res.json()) as IntakeReply;
  expect(res.status, JSON.stringify(reply)).toBe(202);
  // One incident holds all six: the first opened it, the five others joined it as a storm.
  expect(new Set(reply.incidents.map((o) => o.workspace))).toEqual(new Set([reply.workspace]));
  expect(reply.incidents.map((o) => o.status)).toEqual([
    'created',
    ...WORKLOADS.slice(1).map(() => 'joined'),
  ]);
  const folder = reply.workspace!;
  await waitForState(path.join(root, folder), ['succeeded']);
  await waitForReleased(path.join(root, folder));
  return { folder, incidentId: reply.incidentId! };
}

const named = (text: string) => WORKLOADS.filter((w) => !text.includes(`Deployment shop/${w}`));

describe('an alert storm of six workloads in one incident', () => {
  it('names all six in GET /v1/incidents/{id} and on its page', async () => {
    const { folder, incidentId } = await sixWorkloadStorm();
    const status = await startStatusDaemon({ root, executor: createMemoryExecutor() });
    stops.push(() => status.stop());

    const view = (await (await fetch(`${status.base}/v1/incidents/${incidentId}`)).json()) as IncidentView;
    expect(view.subject?.workloads).toEqual(
      WORKLOADS.map((name) => ({ kind: 'Deployment', name, namespace: 'shop', alerts: 1 })),
    );
    expect(view.subject?.moreWorkloads).toBe(0);

    const page = await (await fetch(`${status.base}/incidents/${folder}`)).text();
    expect(named(page), 'workloads missing from the page').toEqual([]);
    const list = await (await fetch(`${status.base}/`)).text();
    expect(list).toContain('6 workloads');
  });

  it('names all six in the Slack message', async () => {
    const { folder } = await sixWorkloadStorm();
    const slack = await new SlackApi(TOKEN).start();
    stops.push(() => slack.close());
    const { config, env } = notifyConfig({
      sinks: [slackSink(slack.apiUrl)],
      secrets: { SLACK_BOT_TOKEN: TOKEN },
    });
    const built: TestNotifier = buildNotifier(config, env);
    stops.push(() => built.notifier.close());
    const dir = path.join(root, folder);
    const state = await readFinalState(dir);
    // As the daemon tells it: the run's start, then its end (both from memory, not read back).
    const incident = await readIncident(dir, 1 << 20);
    const started = await built.notifier.runStarted(
      dir,
      { ...state, state: 'running' },
      state.runId,
      incident,
    );
    await built.notifier.settle(
      dir,
      started.deliveries.map((d) => d.key),
      20_000,
    );
    const finished = await built.notifier.notifyFinished(dir, state, state.runId);
    await built.notifier.settle(
      dir,
      finished.deliveries.map((d) => d.key),
      20_000,
    );
    const parents = slack.requests.filter(
      (r) => r.path === '/api/chat.postMessage' || r.path === '/api/chat.update',
    );
    expect(parents.length).toBeGreaterThanOrEqual(2);
    for (const request of parents) {
      const body = JSON.stringify(request.body);
      expect(named(body), `workloads missing from ${request.path}`).toEqual([]);
      expect(body).toContain('and 5 other workloads');
    }
  });

  it("names all six in the agent's prompt", async () => {
    const { folder } = await sixWorkloadStorm();
    const configFile = path.join(root, '..', `${path.basename(root)}-context.yaml`);
    const cacheDir = path.join(root, '..', `${path.basename(root)}-cache`);
    stops.push(async () => {
      await rm(configFile, { force: true });
      await rm(cacheDir, { recursive: true, force: true });
    });
    await mkdir(cacheDir, { recursive: true });
    await writeFile(
      configFile,
      [
        `workspaces_root: ${root}`,
        ...shippedPromptFiles(),
        'skills:',
        `  cache_dir: ${cacheDir}`,
        '  sources: []',
      ].join('\n') + '\n',
    );
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIO = {
      stdout: (t) => void out.push(t),
      stderr: (t) => void err.push(t),
      env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: 'test-anthropic-key' },
      cwd: root,
    };
    const code = await runCli(
      ['--config', configFile, 'context', path.join(root, folder), '--no-triage', '--json'],
      io,
    );
    expect(code, err.join('')).toBe(0);
    const { prompt } = JSON.parse(out.join('')) as { prompt: { system: string; user: string } };
    const text = `${prompt.system}\n${prompt.user}`;
    const incident = text.slice(text.indexOf('<incident>'), text.indexOf('</incident>'));
    expect(named(incident), 'workloads missing from the incident section').toEqual([]);
    expect(incident).toContain('alerts of 6 workloads');
    expect(JSON.parse(await readFile(path.join(root, folder, 'alerts.json'), 'utf8'))).toMatchObject({
      count: 6,
    });
  });
});
