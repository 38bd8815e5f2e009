import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordSinks } from '../../../src/notify/sink-history.js';
import { SlackApi, WebhookReceiver } from '../../support/notify-servers.js';
import { entriesBySink, finishedWorkspace, type NotifyConfigInput } from '../../support/notify.js';

// A real child process runs the notifier and is SIGKILLed at the worst moments; a second one, started
// like the daemon at start-up, finishes the work. Every message arrives exactly once.

const CHILD = path.join(import.meta.dirname, '..', '..', 'support', 'notify-child.ts');
const TOKEN = 'xoxb-1618033988-7497894820-QrStUvWxYzAbCdEfGhIjKl';
const SIGNING_SECRET = 'whsec-crash-test-0a1b2c3d4e5f';

let slack: SlackApi;
let hook: WebhookReceiver;
let root: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  slack = await new SlackApi(TOKEN).start();
  hook = await new WebhookReceiver().start();
  root = await mkdtemp(path.join(tmpdir(), 'tr-notify-crash-'));
});

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await slack.close();
  await hook.close();
  await rm(root, { recursive: true, force: true });
});

const config = (): NotifyConfigInput => ({
  sinks: [
    {
      name: 'oncall',
      type: 'slack',
      channel: SlackApi.CHANNEL_ID,
      secret: 'SLACK_BOT_TOKEN',
      api_url: slack.apiUrl,
    },
    { name: 'hook', type: 'webhook', url: `${hook.url}/triage`, secret: 'WEBHOOK_SIGNING_SECRET' },
  ],
  secrets: { SLACK_BOT_TOKEN: TOKEN, WEBHOOK_SIGNING_SECRET: SIGNING_SECRET },
});

function start(mode: 'finish' | 'resume', dir: string): { child: ChildProcess; done: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, mode, dir], {
    env: { ...process.env, NOTIFY_CHILD_CONFIG: JSON.stringify(config()) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<string>((resolve, reject) =>
    child.on('exit', (code, signal) =>
      code === 0
        ? resolve(out)
        : signal === 'SIGKILL'
          ? resolve(out)
          : reject(new Error(`child exited ${code}: ${err}`)),
    ),
  );
  return { child, done };
}

async function killAndWait(run: { child: ChildProcess; done: Promise<string> }): Promise<void> {
  run.child.kill('SIGKILL');
  await run.done;
}

const tops = () => slack.messages.filter((m) => !m.thread_ts);

/** Each thread part arrived exactly once, under the one parent. */
function expectThreadOnce(parts: number): void {
  const parent = tops()[0]!;
  const steps = slack.messages
    .filter((m) => m.thread_ts)
    .map((m) => {
      expect(m.thread_ts).toBe(parent.ts);
      return m.metadata?.event_payload.step;
    });
  expect(steps).toEqual(Array.from({ length: parts }, (_, i) => `part-${i + 1}`));
}

describe('notifications survive a SIGKILL', () => {
  it('killed after recording the outbox and before any answer: one parent, one of each part, one webhook', async () => {
    // Nothing the first process sends takes effect or is answered.
    slack.on(() => true, { kind: 'hold', apply: false }, 1);
    hook.on(() => true, { kind: 'hold', apply: false }, 1);
    const dir = await finishedWorkspace(root, 'killed-before-delivery');
    const first = start('finish', dir);
    await slack.waitFor((r) => r.path === '/api/chat.postMessage');
    await hook.waitFor(() => true);
    await killAndWait(first);
    expect(slack.messages).toHaveLength(0);
    expect(hook.accepted).toHaveLength(0);

    const out = await start('resume', dir).done;
    expect(out).toContain('[["hook","delivered"],["oncall","delivered"]]');
    expect(tops()).toHaveLength(1);
    const entries = await entriesBySink(dir);
    expectThreadOnce(entries.oncall!.steps.length - 1);
    expect(hook.accepted).toHaveLength(1);
  });

  it('killed between the parent post and the thread posts: the parent is not posted again', async () => {
    slack.on((r) => r.path === '/api/chat.postMessage' && r.body.thread_ts !== undefined, {
      kind: 'hold',
      apply: false,
    });
    const dir = await finishedWorkspace(root, 'killed-mid-thread');
    const first = start('finish', dir);
    await slack.waitFor((r) => r.path === '/api/chat.postMessage' && r.body.thread_ts !== undefined);
    await killAndWait(first);
    expect(tops()).toHaveLength(1);
    expect((await entriesBySink(dir)).oncall!.steps[0]).toMatchObject({ id: 'parent', status: 'delivered' });

    await start('resume', dir).done;
    expect(tops()).toHaveLength(1);
    expectThreadOnce((await entriesBySink(dir)).oncall!.steps.length - 1);
    expect(slack.posts().filter((r) => r.body.thread_ts === undefined)).toHaveLength(1);
  });

  it('killed after Slack and the receiver took the messages but before their answers: found, not sent again', async () => {
    slack.on((r) => r.path === '/api/chat.postMessage', { kind: 'hold', apply: true }, 1);
    hook.on(() => true, { kind: 'hold', apply: true }, 1);
    const dir = await finishedWorkspace(root, 'killed-before-answer');
    const first = start('finish', dir);
    await slack.waitFor((r) => r.path === '/api/chat.postMessage');
    await hook.waitFor(() => true);
    await killAndWait(first);
    expect(tops()).toHaveLength(1);

    await start('resume', dir).done;
    // Slack: the parent was found by its metadata, not posted again.
    expect(tops()).toHaveLength(1);
    expect(slack.posts().filter((r) => r.body.thread_ts === undefined)).toHaveLength(1);
    const entries = await entriesBySink(dir);
    expect(entries.oncall!.steps[0]!.result).toMatchObject({ reconciled: true });
    expectThreadOnce(entries.oncall!.steps.length - 1);
    // Webhook: sent again with the same key and body, so the receiver can drop the copy.
    expect(hook.requests).toHaveLength(2);
    expect(hook.requests[1]!.headers['idempotency-key']).toBe(hook.requests[0]!.headers['idempotency-key']);
    expect(hook.requests[1]!.raw).toBe(hook.requests[0]!.raw);
    expect(new Set(hook.accepted.map((r) => r.headers['idempotency-key'])).size).toBe(1);
  });

  it('a run that finished before any delivery was recorded is delivered at the next start, and only once', async () => {
    // The daemon ran with these sinks before the incident finished.
    await recordSinks(
      root,
      [
        { name: 'oncall', type: 'slack' },
        { name: 'hook', type: 'webhook' },
      ],
      Date.now() - 1000,
    );
    const dir = await finishedWorkspace(root, 'finished-then-killed');
    expect(await start('resume', dir).done).toContain('[["hook","delivered"],["oncall","delivered"]]');
    expect(tops()).toHaveLength(1);
    expect(hook.accepted).toHaveLength(1);
    const requests = slack.requests.length;

    await start('resume', dir).done;
    expect(slack.requests).toHaveLength(requests);
    expect(hook.requests).toHaveLength(1);
  });
});
