import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import { agentSecrets } from '../../../src/config/secrets.js';
import { WebhookReceiver } from '../../support/notify-servers.js';
import {
  buildNotifier,
  captureCli,
  entriesBySink,
  finishedInput,
  finishedWorkspace,
  notifyConfig,
  RUN_ID,
} from '../../support/notify.js';
import { listEntries } from '../../../src/workspace/outbox.js';

// `triage-runner notify <workspace> [--sink NAME]` through the real command line.

const SIGNING_SECRET = 'whsec-cli-test-9a8b7c6d5e4f';
let hook: WebhookReceiver;
let root: string;

beforeEach(async () => {
  hook = await new WebhookReceiver().start();
  root = await mkdtemp(path.join(tmpdir(), 'tr-notify-cli-'));
});

afterEach(async () => {
  await hook.close();
  await rm(root, { recursive: true, force: true });
});

async function configFile(sinkExtra = ''): Promise<string> {
  const file = path.join(root, 'config.yaml');
  await writeFile(
    file,
    [
      `workspaces_root: ${root}`,
      'secrets:',
      '  WEBHOOK_SIGNING_SECRET: { env: TEST_WEBHOOK_SECRET }',
      'notify:',
      '  retry: { base_delay: 100ms, max_attempts: 2 }',
      '  sinks:',
      `    - { name: hook, type: webhook, url: "${hook.url}/triage", secret: WEBHOOK_SIGNING_SECRET${sinkExtra} }`,
      'log: { level: silent }',
      '',
    ].join('\n'),
  );
  return file;
}

const cli = () => captureCli({ TEST_WEBHOOK_SECRET: SIGNING_SECRET }, root);

describe('triage-runner notify', () => {
  it('re-sends a delivered result as a new delivery with its own idempotency key', async () => {
    const file = await configFile();
    const dir = await finishedWorkspace(root, 'resend-me');
    const { config, env } = notifyConfig({
      sinks: [{ name: 'hook', type: 'webhook', url: `${hook.url}/triage`, secret: 'WEBHOOK_SIGNING_SECRET' }],
      secrets: { WEBHOOK_SIGNING_SECRET: SIGNING_SECRET },
    });
    const { notifier } = buildNotifier(config, env);
    const plan = await notifier.incidentFinished(await finishedInput(dir, config));
    await notifier.settle(
      dir,
      plan.deliveries.map((d) => d.key),
      10_000,
    );
    await notifier.close();

    const t = cli();
    expect(await runCli(['--config', file, 'notify', 'resend-me'], t.io)).toBe(0);
    expect(t.out()).toMatch(
      new RegExp(
        `^hook \\(webhook, outbox \\.triage/outbox/${RUN_ID}\\.hook\\.resend-\\d{8}T\\d{6}Z-[0-9a-f]{6}\\.json\\): delivered\\n$`,
      ),
    );
    expect(hook.accepted).toHaveLength(2);
    const [first, second] = hook.accepted.map((r) => r.headers['idempotency-key']);
    expect(first).toBe(`inc-resend-me/${RUN_ID}.hook`);
    expect(second).toMatch(new RegExp(`^inc-resend-me/${RUN_ID}\\.hook\\.resend-`));
    expect(hook.accepted[1]!.body).toMatchObject({ trigger: 'resend' });
    const { entries } = await listEntries(dir);
    expect(entries.map((e) => e.trigger).sort()).toEqual(['finished', 'resend']);
  });

  it('--sink sends to that sink even when its filters exclude the incident; without it, nothing is sent', async () => {
    const file = await configFile(', clusters: [somewhere-else]');
    await finishedWorkspace(root, 'filtered');
    const plain = cli();
    expect(await runCli(['--config', file, 'notify', 'filtered'], plain.io)).toBe(1);
    expect(plain.out()).toContain('hook: skipped (cluster prod-1 is not in clusters)');
    expect(hook.requests).toHaveLength(0);

    const forced = cli();
    expect(await runCli(['--config', file, 'notify', 'filtered', '--sink', 'hook'], forced.io)).toBe(0);
    expect(hook.accepted).toHaveLength(1);
  });

  it('exits 2 for an unknown sink and 1 for an incident that has not finished', async () => {
    const file = await configFile();
    await finishedWorkspace(root, 'done');
    const unknown = cli();
    expect(await runCli(['--config', file, 'notify', 'done', '--sink', 'slack'], unknown.io)).toBe(2);
    expect(unknown.err()).toContain('no sink named slack in notify.sinks; configured: hook');

    const running = await finishedWorkspace(root, 'running');
    await writeFile(
      path.join(running, '.triage', 'state.json'),
      JSON.stringify({
        incidentId: 'x',
        state: 'running',
        attempts: 1,
        updatedAt: new Date().toISOString(),
        runs: [{ id: RUN_ID, status: 'running' }],
      }),
    );
    const notDone = cli();
    expect(await runCli(['--config', file, 'notify', 'running'], notDone.io)).toBe(1);
    expect(notDone.err()).toContain('is running, not finished (succeeded or failed): nothing to deliver yet');
    expect(hook.requests).toHaveLength(0);

    const missing = cli();
    expect(await runCli(['--config', file, 'notify', 'nowhere'], missing.io)).toBe(2);
  });

  it('exits 1 and says why when the delivery failed', async () => {
    const file = await configFile();
    await finishedWorkspace(root, 'refused');
    hook.on(() => true, { kind: 'status', status: 403, body: 'forbidden' });
    const t = cli();
    expect(await runCli(['--config', file, 'notify', 'refused'], t.io)).toBe(1);
    expect(t.out()).toMatch(
      /hook \(webhook, outbox [^)]+\): failed: the webhook answered HTTP 403; not retried/,
    );
    const entries = await entriesBySink(path.join(root, 'refused'));
    expect(entries.hook?.lastError?.response).toBe('forbidden');
  });
});

describe('agent secrets', () => {
  it('never include the credentials notify sinks use', () => {
    const { config } = notifyConfig({
      sinks: [
        {
          name: 'hook',
          type: 'webhook',
          url: 'https://example.internal/x',
          secret: 'WEBHOOK_SIGNING_SECRET',
        },
        {
          name: 'pd',
          type: 'pagerduty',
          secret: 'PD_KEY',
          notes: { secret: 'PD_TOKEN', from: 'a@example.com' },
        },
      ],
      secrets: { WEBHOOK_SIGNING_SECRET: 'w', PD_KEY: 'k', PD_TOKEN: 't', ANTHROPIC_API_KEY: 'a' },
    });
    expect(
      agentSecrets(config, {
        WEBHOOK_SIGNING_SECRET: 'w',
        PD_KEY: 'k',
        PD_TOKEN: 't',
        ANTHROPIC_API_KEY: 'a',
      }),
    ).toEqual({
      ANTHROPIC_API_KEY: 'a',
    });
  });
});
