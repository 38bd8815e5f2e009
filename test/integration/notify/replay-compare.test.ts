import { appendFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import { makePipeline, REPO_ROOT, type Pipeline } from '../audit/pipeline-fixture.js';
import { verifyWebhook, WebhookReceiver } from '../../support/notify-servers.js';
import { captureCli } from '../../support/notify.js';

// replay and compare through the real command and run pipeline (process engine, a fake Claude that
// leaks its API key into its report): they deliver only with --notify, and what they deliver is redacted.

const KEY = 'anthropic-env-value-notify-7f3a9c';
const SIGNING_SECRET = 'whsec-replay-compare-1b2c3d4e';
const ENV = { ANTHROPIC_API_KEY: KEY, TEST_WEBHOOK_SECRET: SIGNING_SECRET, TRIAGE_RUNNER_LOG_LEVEL: 'error' };
const EXAMPLE = path.join(REPO_ROOT, 'examples', 'incidents', 'crashloop-payments-api');

let pipeline: Pipeline;
let hook: WebhookReceiver;

const cli = () => captureCli(ENV, pipeline.root);

beforeAll(async () => {
  hook = await new WebhookReceiver().start();
  pipeline = await makePipeline(ENV, '#!/bin/sh\necho "pods: 3 CrashLoopBackOff"\n');
  await appendFile(
    path.join(pipeline.root, 'config.yaml'),
    [
      'secrets:',
      '  ANTHROPIC_API_KEY: { env: ANTHROPIC_API_KEY }',
      '  WEBHOOK_SIGNING_SECRET: { env: TEST_WEBHOOK_SECRET }',
      'notify:',
      '  sinks:',
      `    - { name: hook, type: webhook, url: "${hook.url}/triage", secret: WEBHOOK_SIGNING_SECRET }`,
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await hook?.close();
  if (pipeline) await rm(pipeline.root, { recursive: true, force: true });
});

describe('replay and compare --notify', () => {
  it('a replay delivers nothing unless asked; with --notify it delivers once, labelled and redacted', async () => {
    const quiet = cli();
    expect(await runCli(['--config', 'config.yaml', 'replay', EXAMPLE, '--out', 'quiet'], quiet.io)).toBe(0);
    expect(hook.requests).toHaveLength(0);

    const loud = cli();
    expect(
      await runCli(['--config', 'config.yaml', 'replay', EXAMPLE, '--out', 'loud', '--notify'], loud.io),
    ).toBe(0);
    expect(loud.out()).toMatch(/notify replay of crashloop-payments-api: hook \(webhook, [^)]+\): delivered/);
    expect(hook.accepted).toHaveLength(1);
    const req = hook.accepted[0]!;
    expect(verifyWebhook(SIGNING_SECRET, req)).toBe(true);
    expect(req.body).toMatchObject({
      trigger: 'replay',
      label: 'replay of crashloop-payments-api',
      workspace: 'loud',
    });
    // The fake agent wrote its API key into the report (the pipeline runs it without the model gateway,
    // so that is the real key): the delivery carries it redacted.
    expect(req.raw).not.toContain(KEY);
    expect((req.body.report as { text: string }).text).toContain('[REDACTED:ANTHROPIC_API_KEY]');
  });

  it('compare --notify delivers each cell that ran', async () => {
    const before = hook.accepted.length;
    const t = cli();
    const code = await runCli(
      [
        '--config',
        'config.yaml',
        'compare',
        EXAMPLE,
        '--agents',
        'claude',
        '--variants',
        'preload,no-preload',
        '--out',
        'cmp',
        '--notify',
      ],
      t.io,
    );
    expect(t.err()).toBe('');
    expect(code).toBe(0);
    const delivered = hook.accepted.slice(before).map((r) => r.body);
    expect(delivered.map((b) => [b.trigger, b.label])).toEqual([
      ['compare', 'compare claude/preload of crashloop-payments-api'],
      ['compare', 'compare claude/no-preload of crashloop-payments-api'],
    ]);
  });

  it('--notify without sinks is a usage error found before anything runs', async () => {
    const t = cli();
    const env = { ...ENV, TRIAGE_RUNNER_NOTIFY_SINKS: '[]' };
    expect(
      await runCli(['--config', 'config.yaml', 'replay', EXAMPLE, '--out', 'never', '--notify'], {
        ...t.io,
        env,
      }),
    ).toBe(2);
    expect(t.err()).toContain('replay --notify: notify.sinks is empty');
  });
});
