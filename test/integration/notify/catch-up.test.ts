import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listEntries } from '../../../src/workspace/outbox.js';
import { SlackApi } from '../../support/notify-servers.js';
import { buildNotifier, finishedWorkspace, notifyConfig, type TestNotifier } from '../../support/notify.js';

// The start-up catch-up delivers an incident that finished without its deliveries recorded (a stop
// right after it finished) to the sinks configured then, and to no sink added since.

const TOKEN = 'xoxb-1414213562-3730950488-CatchUpTestToken';
const HOUR = 3_600_000;

let slack: SlackApi;
let root: string;
const built: TestNotifier[] = [];

beforeEach(async () => {
  slack = await new SlackApi(TOKEN).start();
  root = await mkdtemp(path.join(tmpdir(), 'tr-notify-catchup-'));
});

afterEach(async () => {
  for (const b of built.splice(0)) await b.notifier.close();
  await slack.close();
  await rm(root, { recursive: true, force: true });
});

/** A daemon start at `now` with or without the Slack sink: what it does to notifications. */
async function daemonStart(withSlack: boolean, now: number): Promise<TestNotifier> {
  const { config, env } = notifyConfig({
    sinks: withSlack
      ? [
          {
            name: 'oncall',
            type: 'slack',
            channel: '#oncall',
            secret: 'SLACK_BOT_TOKEN',
            api_url: slack.apiUrl,
          },
        ]
      : [],
    secrets: { SLACK_BOT_TOKEN: TOKEN },
  });
  const b = buildNotifier(config, env, { now: () => now });
  built.push(b);
  await b.notifier.resumeAll(root, { catchUp: true });
  return b;
}

describe('start-up catch-up', () => {
  it('posts nothing old to a sink added after the incidents finished', async () => {
    const t0 = Date.now() - 3 * HOUR;
    await daemonStart(false, t0);
    const a = await finishedWorkspace(root, 'old-a', { updatedAt: new Date(t0 + HOUR).toISOString() });
    const b = await finishedWorkspace(root, 'old-b', { updatedAt: new Date(t0 + HOUR + 1).toISOString() });

    await daemonStart(true, t0 + 2 * HOUR);

    expect((await listEntries(a)).entries).toEqual([]);
    expect((await listEntries(b)).entries).toEqual([]);
    expect(slack.requests.filter((r) => r.path === '/api/chat.postMessage')).toEqual([]);
  });

  it('still delivers, once, an incident that finished after the sink was configured', async () => {
    const t0 = Date.now() - 3 * HOUR;
    await daemonStart(true, t0);
    const dir = await finishedWorkspace(root, 'stopped-after-finish', {
      updatedAt: new Date(t0 + HOUR).toISOString(),
    });

    const restarted = await daemonStart(true, t0 + 2 * HOUR);
    const keys = (await listEntries(dir)).entries.map((e) => e.key);
    expect(keys).toHaveLength(1);
    const [entry] = await restarted.notifier.settle(dir, keys, 20_000);
    expect(entry?.status).toBe('delivered');
    expect(slack.messages.filter((m) => !m.thread_ts)).toHaveLength(1);
  });
});
