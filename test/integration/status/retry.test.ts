import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, verifyAuditLog } from '../../../src/audit/log.js';
import type { CliIO } from '../../../src/cli/io.js';
import { runCli } from '../../../src/cli/program.js';
import { configSchema } from '../../../src/config/schema.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import type { RunExecutor } from '../../../src/run/types.js';
import { readState } from '../../../src/workspace/state.js';
import { createLogger } from '../../../src/log/logger.js';
import { createMemoryExecutor, createProcessFakeExecutor } from '../../support/fake-executor.js';
import {
  agentExecutions,
  dropByRename,
  incidentJson,
  tempRoot,
  waitFor,
  waitForReleased,
  waitForState,
} from '../../support/incidents.js';
import { startStatusDaemon, type StatusDaemon } from '../../support/status-daemon.js';
import { incidentIn } from '../../support/status-root.js';
import { amAlert, amPayload } from '../../support/webhooks/alerts.js';
import { startIntakeDaemon } from '../../support/webhooks/daemon.js';
import type { IntakeReply } from '../../../src/server/routes/intake.js';
import type { IncidentEvent } from '../../../src/incident/machine.js';

// Retry in place with a real daemon and a real fake agent (a child process): the first attempt fails,
// the retried one succeeds, in the same folder, with the earlier run and audit lines kept.

let root: string;
let cleanup: () => Promise<void>;
let stops: (() => Promise<void>)[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-retry-'));
});
afterEach(async () => {
  for (const stop of stops.reverse()) await stop();
  stops = [];
  await cleanup();
});

/** Fails the first attempt (exit 1, not transient), succeeds after. */
const failsFirst = (): RunExecutor =>
  createProcessFakeExecutor({ sleepMs: 50, exitCode: ({ attempt }) => (attempt === 1 ? 1 : 0) });

async function statusDaemon(executor: RunExecutor, token?: string): Promise<StatusDaemon> {
  const d = await startStatusDaemon({ root, executor, ...(token ? { token } : {}) });
  stops.push(() => d.stop());
  return d;
}

/** A daemon without HTTP; its log lines (trace) are kept so that a test can see a rescan happen. */
async function plainDaemon(executor: RunExecutor): Promise<{ daemon: Daemon; logs: string[] }> {
  const logs: string[] = [];
  const config = configSchema.parse({
    workspaces_root: root,
    engine: 'process',
    http: { port: 0 },
    scheduling: { lease_ttl: '5s', rescan_interval: '300ms', shutdown_timeout: '5s' },
  });
  const daemon = new Daemon({
    config,
    log: createLogger({ level: 'trace', destination: { write: (line: string) => void logs.push(line) } }),
    executor,
    audit: new AuditLog(),
  });
  stops.push(() => daemon.stop());
  await daemon.start();
  return { daemon, logs };
}

function io(env: Record<string, string> = { TRIAGE_RUNNER_HTTP_PORT: '0' }) {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env, cwd: root };
  return { cli, out: () => out.join(''), err: () => err.join('') };
}

const auditLines = async (dir: string) =>
  (await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8')).split('\n').filter(Boolean);

const auditTypes = async (dir: string) =>
  (await auditLines(dir)).map((l) => (JSON.parse(l) as { type: string }).type);

async function failedIncident(name: string): Promise<{ dir: string; before: string[]; firstRun: string }> {
  const dir = await dropByRename(root, name, incidentJson({ incidentId: `inc-${name}` }));
  const failed = await waitForState(dir, ['failed']);
  await waitForReleased(dir);
  expect(failed.reason).toBe('fake agent exited with 1');
  return { dir, before: await auditLines(dir), firstRun: failed.runs[0]?.id as string };
}

/** The retried incident ran again in its folder: both runs recorded, the audit chain extended, intact. */
async function expectRetriedInPlace(
  dir: string,
  before: string[],
  firstRun: string,
  by: RegExp,
): Promise<void> {
  const state = await waitForState(dir, ['succeeded']);
  expect(state.attempts).toBe(2);
  expect(state.runs).toEqual([
    { id: firstRun, status: 'failed' },
    { id: expect.not.stringMatching(firstRun), status: 'succeeded' },
  ]);
  expect(await agentExecutions(dir)).toBe(2);
  await waitForReleased(dir);
  const after = await auditLines(dir);
  expect(after.slice(0, before.length)).toEqual(before);
  const retry = after
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((e) => e.type === 'retry_requested');
  expect(retry).toMatchObject({ previousState: 'failed', by: expect.stringMatching(by) });
  expect(await verifyAuditLog(path.join(dir, '.triage'))).toEqual({ ok: true, entries: after.length });
  // The first run's bundle is still there, as the fake agent left it.
  expect(await readFile(path.join(dir, '.triage', 'runs', firstRun, 'exit-code'), 'utf8')).toBe('1\n');
}

/** A failed incident in folder `name` whose incidentId is `incidentId` (as a producer may reuse one). */
const failedWithId = (name: string, incidentId: string) =>
  incidentIn(root, name, (sha256): IncidentEvent[] => [
    { type: 'Validated', incidentId, sha256 },
    { type: 'Claimed', runId: 'r1', holder: 'test' },
    { type: 'Finished', runId: 'r1', outcome: { status: 'failed', exitCode: 1, reason: 'agent failed' } },
  ]);

describe('retry in place', () => {
  it('POST /v1/incidents/{id}/retry re-queues a failed incident; it runs again and succeeds, earlier run and audit kept', async () => {
    const d = await statusDaemon(failsFirst());
    const { dir, before, firstRun } = await failedIncident('api-retry');
    const res = await fetch(`${d.base}/v1/incidents/api-retry/retry`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      incidentId: 'inc-api-retry',
      workspace: 'api-retry',
      state: 'queued',
      previousState: 'failed',
      attempts: 1,
    });
    await expectRetriedInPlace(dir, before, firstRun, /^http 127\.0\.0\.1$/);
    const view = await waitFor('the index to show the retried run', () => {
      const v = d.index.get('api-retry');
      return v?.state === 'succeeded' ? v : undefined;
    });
    expect(view.attempts).toBe(2);
  });

  it('a rejected duplicate, retried, runs after all', async () => {
    const d = await statusDaemon(createProcessFakeExecutor({ sleepMs: 20 }));
    const same = { resource: { apiVersion: 'v1', kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u0' } };
    const first = await dropByRename(root, 'first', incidentJson({ incidentId: 'first', ...same }));
    await waitForState(first, ['succeeded']);
    const second = await dropByRename(root, 'second', incidentJson({ incidentId: 'second', ...same }));
    const rejected = await waitForState(second, ['rejected']);
    expect(rejected.duplicateOf).toBe('first');
    await waitForReleased(second);
    const res = await fetch(`${d.base}/v1/incidents/second/retry`, { method: 'POST' });
    expect(res.status).toBe(202);
    const done = await waitForState(second, ['succeeded']);
    expect(done.duplicateOf).toBeUndefined();
    expect(await agentExecutions(second)).toBe(1);
  });

  it('answers 409 naming the state and what can be retried; 404 for no such folder; 400 for a name that is not one folder', async () => {
    const d = await statusDaemon(createProcessFakeExecutor({ sleepMs: 20 }));
    const dir = await dropByRename(root, 'fine', incidentJson());
    await waitForState(dir, ['succeeded']);
    await waitForReleased(dir);
    const res = await fetch(`${d.base}/v1/incidents/fine/retry`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: 'not_retryable',
      state: 'succeeded',
      message:
        'fine is succeeded, which cannot be retried (it finished; save a changed incident.json to investigate it again); only failed, interrupted, rejected, resolved incidents can be',
    });
    expect((await fetch(`${d.base}/v1/incidents/nope/retry`, { method: 'POST' })).status).toBe(404);
    for (const id of ['.triage', 'a%2F..%2Fb', '%2E%2E%5Cx']) {
      const bad = await fetch(`${d.base}/v1/incidents/${id}/retry`, { method: 'POST' });
      expect(bad.status, id).toBe(400);
      expect(((await bad.json()) as { message: string }).message).toContain('is not an incident folder name');
    }
  });

  it('a running daemon without HTTP picks up `triage-runner retry` at its next rescan', async () => {
    const { logs } = await plainDaemon(failsFirst());
    const { dir, before, firstRun } = await failedIncident('cli-retry');
    // A rescan has judged the folder final (and remembered its marks) before the retry.
    await waitFor('a rescan to judge the failed folder final', () =>
      logs.some((l) => l.includes('"workspace":"cli-retry"') && l.includes('"judgement":"final"'))
        ? true
        : undefined,
    );
    const t = io();
    expect(await runCli(['retry', dir], t.cli)).toBe(0);
    expect(t.out()).toMatch(
      /^cli-retry: queued again \(was failed; attempt 2 next\); a running daemon takes it at its next rescan \(scheduling\.rescan_interval, 30s\)/,
    );
    await expectRetriedInPlace(dir, before, firstRun, /^cli$/);
  });

  it('without a daemon, retry queues the incident and the next daemon start runs it', async () => {
    const first = await plainDaemon(failsFirst());
    const { dir, before, firstRun } = await failedIncident('offline');
    await first.daemon.stop();
    const t = io();
    expect(await runCli(['retry', dir], t.cli)).toBe(0);
    const queued = await readState(dir);
    expect(queued).toMatchObject({ state: 'queued', attempts: 1, attemptBase: 1 });
    expect((await auditTypes(dir)).at(-1)).toBe('retry_requested');
    await plainDaemon(failsFirst());
    await expectRetriedInPlace(dir, before, firstRun, /^cli$/);
  });

  it('retry <name> finds the folder under workspaces_root, wherever the command runs', async () => {
    const first = await plainDaemon(failsFirst());
    const { dir } = await failedIncident('by-name');
    await first.daemon.stop();
    const t = io({ TRIAGE_RUNNER_HTTP_PORT: '0', TRIAGE_RUNNER_WORKSPACES_ROOT: root });
    t.cli.cwd = tmpdir();
    expect(await runCli(['retry', 'by-name'], t.cli)).toBe(0);
    expect(t.out()).toMatch(/^by-name: queued again \(was failed; attempt 2 next\)/);
    expect(await readState(dir)).toMatchObject({ state: 'queued' });
    const missing = io({ TRIAGE_RUNNER_WORKSPACES_ROOT: root });
    missing.cli.cwd = tmpdir();
    expect(await runCli(['retry', 'no-such-incident'], missing.cli)).toBe(2);
    expect(missing.err()).toContain(`no incident folder or incidentId "no-such-incident" under ${root}`);
  });

  it('`triage-runner retry` goes through the daemon when one answers for the root', async () => {
    const d = await statusDaemon(failsFirst());
    const { dir, before, firstRun } = await failedIncident('via-api');
    const config = path.join(path.dirname(root), `${path.basename(root)}.yaml`);
    await writeFile(config, `http: { port: ${new URL(d.base).port} }\n`);
    stops.push(() => rm(config, { force: true }));
    const t = io({});
    expect(await runCli(['retry', dir, '--config', config], t.cli)).toBe(0);
    expect(t.out()).toBe(
      `via-api: queued again (was failed; attempt 2 next); the daemon at ${d.base} runs it now\n`,
    );
    await expectRetriedInPlace(dir, before, firstRun, /^http /);
  });

  it('`retry <incidentId>` (what notifications show) finds its folder; an id two folders hold or none does is refused, naming them', async () => {
    const first = await plainDaemon(failsFirst());
    const { dir } = await failedIncident('by-id');
    await first.daemon.stop();
    const env = { TRIAGE_RUNNER_HTTP_PORT: '0', TRIAGE_RUNNER_WORKSPACES_ROOT: root };
    const t = io(env);
    t.cli.cwd = tmpdir();
    expect(await runCli(['retry', 'inc-by-id'], t.cli), t.err()).toBe(0);
    expect(t.out()).toMatch(/^by-id: queued again \(was failed; attempt 2 next\)/);
    expect(await readState(dir)).toMatchObject({ state: 'queued' });

    await failedWithId('twin-b', 'inc-twin');
    await failedWithId('twin-a', 'inc-twin');
    const twins = io(env);
    expect(await runCli(['retry', 'inc-twin'], twins.cli)).toBe(2);
    expect(twins.err()).toBe(
      `retry: incidentId "inc-twin" is held by 2 incident folders under ${root} (twin-a, twin-b): give the folder's name instead\n`,
    );
    expect((await readState(path.join(root, 'twin-a')))?.state).toBe('failed');
    const none = io(env);
    expect(await runCli(['retry', 'inc-nowhere'], none.cli)).toBe(2);
    expect(none.err()).toContain(`no incident folder or incidentId "inc-nowhere" under ${root}`);
  });

  it('the API takes the incidentId for {id}: GET and POST .../retry find its folder, 409 when two folders hold it', async () => {
    // Written before the daemon starts: it finds them failed and leaves them so.
    await failedWithId('same-1', 'inc-same');
    await failedWithId('same-2', 'inc-same');
    const d = await statusDaemon(failsFirst());
    const { dir, before, firstRun } = await failedIncident('api-by-id');
    const detail = await fetch(`${d.base}/v1/incidents/inc-api-by-id`);
    expect(detail.status).toBe(200);
    expect(await detail.json()).toMatchObject({ folder: 'api-by-id', incidentId: 'inc-api-by-id' });
    const res = await fetch(`${d.base}/v1/incidents/inc-api-by-id/retry`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ incidentId: 'inc-api-by-id', workspace: 'api-by-id' });
    await expectRetriedInPlace(dir, before, firstRun, /^http /);

    const twice = await fetch(`${d.base}/v1/incidents/inc-same/retry`, { method: 'POST' });
    expect(twice.status).toBe(409);
    expect(await twice.json()).toMatchObject({ error: 'ambiguous_id', folders: ['same-1', 'same-2'] });
    // The CLI resolves the id through the daemon's index, and refuses it the same way.
    const config = path.join(path.dirname(root), `${path.basename(root)}.yaml`);
    await writeFile(config, `http: { port: ${new URL(d.base).port} }\nworkspaces_root: ${root}\n`);
    stops.push(() => rm(config, { force: true }));
    const cli = io({});
    expect(await runCli(['retry', 'inc-same', '--config', config], cli.cli)).toBe(2);
    expect(cli.err()).toContain('incidentId "inc-same" is held by 2 incident folders');
    const none = await fetch(`${d.base}/v1/incidents/inc-none/retry`, { method: 'POST' });
    expect(none.status).toBe(404);
    expect(((await none.json()) as { message: string }).message).toContain(
      'no incident folder or incidentId "inc-none"',
    );
  });

  it('an incident whose alert resolved before its run says `triage-runner retry <folder>` runs it anyway, and that retry runs it', async () => {
    // One slot, held by the first incident until the test lets it go: the second waits queued until
    // its alert resolves, however slowly the host runs the steps between.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = createMemoryExecutor({
      outcome: async () => {
        await gate;
        return { status: 'succeeded', exitCode: 0 };
      },
    });
    const agent = createProcessFakeExecutor({ sleepMs: 50 });
    let first: string | undefined;
    const executor: RunExecutor = {
      ...agent,
      run: (request) => {
        first ??= request.workspace.name;
        return (request.workspace.name === first ? held : agent).run(request);
      },
    };
    const d = await startIntakeDaemon({ root, executor, config: { scheduling: { max_concurrent: 1 } } });
    stops.push(() => d.stop());
    stops.push(async () => release());
    const post = async (body: unknown) =>
      (await (
        await fetch(`${d.base}/v1/alerts/alertmanager`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as IntakeReply;
    const busy = await post(amPayload([amAlert({ namespace: 'a', pod: 'one-7d4b9c8f6d-x2x9k' })]));
    await waitForState(path.join(root, busy.workspace!), ['running']);
    const alert = amAlert({ namespace: 'b', pod: 'two-7d4b9c8f6d-x2x9k' });
    const waiting = await post(amPayload([alert]));
    const folder = waiting.workspace!;
    const dir = path.join(root, folder);
    await waitForState(dir, ['queued']);
    await post(amPayload([{ ...alert, status: 'resolved', endsAt: new Date().toISOString() }], 'resolved'));
    const resolved = await waitForState(dir, ['resolved']);
    expect(resolved.reason).toContain(`to run it anyway: \`triage-runner retry ${folder}\``);
    await waitForReleased(dir);
    release();

    const t = io({ TRIAGE_RUNNER_HTTP_PORT: '0', TRIAGE_RUNNER_WORKSPACES_ROOT: root });
    expect(await runCli(['retry', folder], t.cli), t.err()).toBe(0);
    expect(t.out()).toMatch(new RegExp(`^${folder}: queued again \\(was resolved; attempt 1 next\\)`));
    const done = await waitForState(dir, ['succeeded']);
    expect(done.resolvedAt).toBe(resolved.resolvedAt);
    expect(await agentExecutions(dir)).toBe(1);
    expect((await auditTypes(dir)).filter((type) => type === 'retry_requested')).toHaveLength(1);
  });

  it('exits 1 for a state that cannot be retried, and for a run that may still be running', async () => {
    const done = await incidentIn(root, 'done', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
      { type: 'Claimed', runId: 'r1', holder: 'test' },
      { type: 'Finished', runId: 'r1', outcome: { status: 'succeeded', exitCode: 0 } },
    ]);
    const t = io();
    expect(await runCli(['retry', done], t.cli)).toBe(1);
    expect(t.err()).toBe(
      'retry: done is succeeded, which cannot be retried (it finished; save a changed incident.json to investigate it again); only failed, interrupted, rejected, resolved incidents can be\n',
    );
    const unstopped = await incidentIn(root, 'unstopped', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
      { type: 'Claimed', runId: 'r1', holder: 'test' },
      { type: 'Interrupted', runId: 'r1', reason: 'did not stop at shutdown', unstopped: true },
    ]);
    const u = io();
    expect(await runCli(['retry', unstopped], u.cli)).toBe(1);
    expect(u.err()).toContain('its last run did not stop at shutdown and may still be running');
    expect((await readState(unstopped))?.state).toBe('interrupted');
    const missing = io();
    expect(await runCli(['retry', path.join(root, 'nowhere')], missing.cli)).toBe(2);
    expect(missing.err()).toContain('is not a folder; give an incident workspace folder');
  });
});
