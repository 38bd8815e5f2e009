import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AlertsDoc } from '../../../../src/intake/webhooks/disk.js';
import type { IntakeReply } from '../../../../src/server/routes/intake.js';
import { readState } from '../../../../src/workspace/state.js';
import { createProcessFakeExecutor } from '../../../support/fake-executor.js';
import type { CliIO } from '../../../../src/cli/io.js';
import { runCli } from '../../../../src/cli/program.js';
import type { StatusList } from '../../../../src/status/types.js';
import {
  agentExecutions,
  dropByRename,
  incidentJson,
  tempRoot,
  waitFor,
  waitForState,
} from '../../../support/incidents.js';
import { amAlert, amPayload } from '../../../support/webhooks/alerts.js';
import { startIntakeDaemon, type IntakeDaemon } from '../../../support/webhooks/daemon.js';
import { readIncidentFolders } from '../../../support/webhooks/folders.js';
import { pagerDutyEvent, signPagerDuty } from '../../../support/webhooks/pagerduty.js';
import { afterScans } from '../../../support/scans.js';
import { writeResolvedAlerts } from '../../../support/status-root.js';

// The intake endpoints on the real daemon (fake agent process): what arrives over HTTP is run like a
// file drop, once.

const TOKEN = 'intake-token-2c7d1e';
const PD_SECRET = 'pd-secret-9a8b7c';

let root: string;
let cleanup: () => Promise<void>;
let running: IntakeDaemon[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-intake-http-'));
});
afterEach(async () => {
  await Promise.all(running.map((d) => d.stop()));
  running = [];
  await cleanup();
});

async function start(sleepMs = 50, scheduling: Record<string, unknown> = {}): Promise<IntakeDaemon> {
  const d = await startIntakeDaemon({
    root,
    executor: createProcessFakeExecutor({ sleepMs }),
    token: TOKEN,
    secrets: { PAGERDUTY_WEBHOOK_SECRET: PD_SECRET },
    config: { scheduling },
  });
  running.push(d);
  return d;
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const post = (url: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
const replyOf = async (res: Response) =>
  (await res.json()) as IntakeReply & { message?: string; error?: string };

const executions = agentExecutions;

describe('HTTP intake on the daemon', () => {
  it('an Alertmanager notification becomes a workspace that the daemon runs once, to success', async () => {
    const { base } = await start();
    const res = await post(
      `${base}/v1/alerts/alertmanager`,
      amPayload([amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' })]),
    );
    expect(res.status).toBe(202);
    const body = await replyOf(res);
    expect(body).toMatchObject({ incidentId: expect.any(String), workspace: expect.any(String) });
    expect(body.incidents).toEqual([
      { status: 'created', incidentId: body.incidentId, workspace: body.workspace },
    ]);
    const dir = path.join(root, body.workspace!);
    const state = await waitForState(dir, ['succeeded']);
    expect(state.incidentId).toBe(body.incidentId);
    expect(await executions(dir)).toBe(1);
  });

  it('a duplicate delivery and a storm of 30 alerts for one workload each produce exactly one incident and one run', async () => {
    const { base } = await start();
    const single = amPayload([amAlert({ namespace: 'pay', pod: 'api-5d59d67564-bcdfg' })]);
    const [a, b] = await Promise.all([
      post(`${base}/v1/alerts/alertmanager`, single),
      post(`${base}/v1/alerts/alertmanager`, single),
    ]);
    const [first, second] = [await replyOf(a), await replyOf(b)];
    expect([first.incidents[0]!.status, second.incidents[0]!.status].sort()).toEqual([
      'created',
      'duplicate',
    ]);
    expect(second.workspace).toBe(first.workspace);

    const storm = Array.from({ length: 30 }, (_, i) =>
      amAlert(
        { namespace: 'shop', pod: `cart-6f7c8d9b4c-${'bcdfghjklmnpqrstvwxz2456789'[i % 27]}k2x9` },
        { startsAt: new Date(Date.UTC(2026, 10, 22, 1, 0, i)).toISOString() },
      ),
    );
    const replies = await Promise.all(
      storm.map((alert) => post(`${base}/v1/alerts/alertmanager`, amPayload([alert])).then(replyOf)),
    );
    const workspaces = new Set(replies.map((r) => r.workspace));
    expect(workspaces.size).toBe(1);
    const folders = await readIncidentFolders(root);
    expect(folders).toHaveLength(2);
    for (const folder of folders) await waitForState(path.join(root, folder), ['succeeded']);
    const stormDir = path.join(root, [...workspaces][0]!);
    expect(await executions(stormDir)).toBe(1);
    const doc = JSON.parse(await readFile(path.join(stormDir, 'alerts.json'), 'utf8')) as AlertsDoc;
    expect(doc.count).toBe(30);
  });

  it('an alert resolved before its incident started never launches an agent; one resolved while running completes and is noted', async () => {
    const d = await start(1500, { max_concurrent: 1 });
    const first = amAlert({ namespace: 'a', pod: 'one-7d4b9c8f6d-x2x9k' });
    const second = amAlert({ namespace: 'b', pod: 'two-7d4b9c8f6d-x2x9k' });
    const r1 = await replyOf(await post(`${d.base}/v1/alerts/alertmanager`, amPayload([first])));
    const dir1 = path.join(root, r1.workspace!);
    await waitForState(dir1, ['running']);
    // The only slot is busy: the second incident waits, queued.
    const r2 = await replyOf(await post(`${d.base}/v1/alerts/alertmanager`, amPayload([second])));
    const dir2 = path.join(root, r2.workspace!);
    await waitForState(dir2, ['queued']);
    const endsAt = new Date().toISOString();
    for (const alert of [second, first])
      expect(
        (
          await post(
            `${d.base}/v1/alerts/alertmanager`,
            amPayload([{ ...alert, status: 'resolved', endsAt }], 'resolved'),
          )
        ).status,
      ).toBe(202);
    const done1 = await waitForState(dir1, ['succeeded']);
    // The running investigation went on; its record says when its alert resolved.
    expect(done1.resolvedAt).toBe(endsAt);
    const state2 = await waitForState(dir2, ['resolved']);
    expect(state2.reason).toMatch(
      new RegExp(
        `every alert behind this incident resolved at ${endsAt}, before the investigation started: not run`,
      ),
    );
    // Give the scheduler every chance to run it anyway: a few rescans, each followed by a queue pump.
    await afterScans(d.daemon, 3);
    expect(await executions(dir2)).toBe(0);
    expect((await readState(dir2))?.state).toBe('resolved');
    expect(await executions(dir1)).toBe(1);
    expect(d.hooks.calls.map((c) => [c.workspace, c.stopped])).toEqual([
      [r2.workspace, true],
      [r1.workspace, false],
    ]);
    // The alert firing again after it resolved is a new incident, not a duplicate of one that never ran.
    const again = await replyOf(
      await post(
        `${d.base}/v1/alerts/alertmanager`,
        amPayload([{ ...second, startsAt: new Date().toISOString() }]),
      ),
    );
    expect(again.workspace).not.toBe(r2.workspace);
    await waitForState(path.join(root, again.workspace!), ['succeeded']);
    for (const dir of [dir1, dir2]) {
      const doc = JSON.parse(await readFile(path.join(dir, 'alerts.json'), 'utf8')) as AlertsDoc;
      expect(doc.resolvedAt).toBe(endsAt);
    }
  });

  it('an incident whose alerts all resolved before its run started (a resolution not applied then) ends resolved, shown so by status', async () => {
    const at = '2026-11-26T09:00:00.000Z';
    // What intake leaves when the resolution came in but could not be applied (a restart, another replica).
    const dir = path.join(root, 'resolved-meanwhile');
    await mkdir(dir);
    await writeResolvedAlerts(dir, at);
    await dropByRename(root, 'resolved-meanwhile', incidentJson({ incidentId: 'inc-resolved-meanwhile' }));
    const d = await start();
    const state = await waitForState(dir, ['resolved']);
    expect(state.resolvedAt).toBe(at);
    expect(state.reason).toMatch(/before the investigation started: not run/);
    expect(await executions(dir)).toBe(0);
    await d.stop();

    const out: string[] = [];
    const cli: CliIO = { stdout: (t) => void out.push(t), stderr: () => undefined, env: {}, cwd: root };
    expect(await runCli(['status', '--root', root, '--json'], cli)).toBe(0);
    const listed = (JSON.parse(out.join('')) as StatusList).incidents.find(
      (v) => v.folder === 'resolved-meanwhile',
    );
    expect(listed).toMatchObject({ state: 'resolved', resolvedAt: at, attempts: 0 });

    // Saving incident.json again runs it anyway: the resolution was applied once already.
    await dropByRename(
      root,
      'resolved-meanwhile',
      incidentJson({ incidentId: 'inc-resolved-meanwhile', severity: 'critical' }),
    );
    await start();
    await waitForState(dir, ['succeeded']);
    expect(await executions(dir)).toBe(1);
  });

  it('an alert resolving after its investigation answered is passed on (for the sinks), and the answer stays', async () => {
    const told: [string, string][] = [];
    const d = await startIntakeDaemon({
      root,
      executor: createProcessFakeExecutor({ sleepMs: 50 }),
      token: TOKEN,
      onResolvedAfterRun: (dir, at) => void told.push([dir, at]),
    });
    running.push(d);
    const alert = amAlert({ namespace: 'late', pod: 'late-7d4b9c8f6d-x2x9k' });
    const r = await replyOf(await post(`${d.base}/v1/alerts/alertmanager`, amPayload([alert])));
    const dir = path.join(root, r.workspace!);
    await waitForState(dir, ['succeeded']);
    const endsAt = new Date().toISOString();
    const res = await post(
      `${d.base}/v1/alerts/alertmanager`,
      amPayload([{ ...alert, status: 'resolved', endsAt }], 'resolved'),
    );
    expect(res.status).toBe(202);
    await vi.waitFor(() => expect(told).toEqual([[dir, endsAt]]), { timeout: 10_000 });
    expect((await readState(dir))?.state).toBe('succeeded');
  });

  it('refuses unauthenticated and oversized requests with a clear message, writing nothing', async () => {
    const { base } = await start();
    const payload = amPayload([amAlert({ pod: 'x' })]);
    const anonymous = await post(`${base}/v1/alerts/alertmanager`, payload, {
      'content-type': 'application/json',
    });
    expect(anonymous.status).toBe(401);
    expect((await replyOf(anonymous)).message).toMatch(/missing Authorization header: .*HTTP_TOKEN/);
    const huge = amPayload(Array.from({ length: 3000 }, () => amAlert({ pod: 'x'.repeat(300) })));
    const oversized = await post(`${base}/v1/alerts/alertmanager`, huge);
    expect(oversized.status).toBe(413);
    expect((await replyOf(oversized)).message).toMatch(
      /larger than the 1048576-byte limit \(http\.body_limit\)/,
    );
    const invalid = await post(`${base}/v1/alerts/alertmanager`, { version: '4', alerts: [{ labels: {} }] });
    expect(invalid.status).toBe(400);
    expect((await replyOf(invalid)).message).toMatch(
      /not an Alertmanager webhook payload \(version 4\): alerts\.0\.status: .*alerts\.0\.startsAt/,
    );
    expect(await readIncidentFolders(root)).toEqual([]);
  });

  it('PagerDuty: a correctly signed incident.triggered becomes an incident carrying the PagerDuty id; a wrongly signed one is refused', async () => {
    const { base } = await start();
    const body = JSON.stringify(pagerDutyEvent('incident.triggered'));
    const unsigned = await post(`${base}/v1/alerts/pagerduty`, body, { 'content-type': 'application/json' });
    expect(unsigned.status).toBe(401);
    expect((await replyOf(unsigned)).message).toMatch(/missing X-PagerDuty-Signature/);
    const forged = await post(`${base}/v1/alerts/pagerduty`, body, {
      'content-type': 'application/json',
      'x-pagerduty-signature': signPagerDuty(body, 'not-the-secret'),
    });
    expect(forged.status).toBe(401);
    expect(await readIncidentFolders(root)).toEqual([]);

    const headers = {
      'content-type': 'application/json',
      'x-pagerduty-signature': `v1=${'0'.repeat(64)},${signPagerDuty(body, PD_SECRET)}`,
    };
    const signed = await post(`${base}/v1/alerts/pagerduty`, body, headers);
    expect(signed.status).toBe(202);
    const reply = await replyOf(signed);
    const incident = JSON.parse(
      await readFile(path.join(root, reply.workspace!, 'incident.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(incident.source).toMatchObject({
      type: 'pagerduty',
      id: 'PGR0VU2',
      url: 'https://acme.pagerduty.com/incidents/PGR0VU2',
    });
    expect(incident.severity).toBe('critical');
    // PagerDuty retries a delivery it saw fail: the same event changes nothing.
    const again = await replyOf(await post(`${base}/v1/alerts/pagerduty`, body, headers));
    expect(again.incidents[0]).toMatchObject({ status: 'duplicate', workspace: reply.workspace });
    const ack = JSON.stringify(pagerDutyEvent('incident.acknowledged', {}, 'ev-ack'));
    const ackRes = await post(`${base}/v1/alerts/pagerduty`, ack, {
      'content-type': 'application/json',
      'x-pagerduty-signature': signPagerDuty(ack, PD_SECRET),
    });
    expect(ackRes.status).toBe(200);
    expect(await readIncidentFolders(root)).toEqual([reply.workspace]);
  });

  it('POST /v1/incidents takes an incident.json body once per Idempotency-Key or incidentId, and says what is wrong with a bad one', async () => {
    const { base } = await start();
    const incident = incidentJson({ incidentId: 'ops-4711' });
    const created = await replyOf(await post(`${base}/v1/incidents`, incident));
    expect(created).toMatchObject({
      incidentId: 'ops-4711',
      workspace: expect.stringMatching(/^ops-4711-[0-9a-f]{8}$/),
    });
    await waitForState(path.join(root, created.workspace!), ['succeeded']);
    const again = await replyOf(await post(`${base}/v1/incidents`, incident));
    expect(again.incidents[0]).toMatchObject({ status: 'duplicate', workspace: created.workspace });
    const keyed = await replyOf(
      await post(`${base}/v1/incidents`, incident, { ...auth, 'idempotency-key': 'retry-1' }),
    );
    expect(keyed.incidents[0]?.status).toBe('created');
    const bad = await post(`${base}/v1/incidents`, { ...incident, cluster: '', resource: { kind: 'Pod' } });
    expect(bad.status).toBe(400);
    expect((await replyOf(bad)).message).toMatch(
      /does not match the incident schema \(cluster: must be a non-empty string; resource\.name: /,
    );
    await waitFor('both incidents to finish', async () => {
      const folders = await readIncidentFolders(root);
      const states = await Promise.all(folders.map((f) => readState(path.join(root, f))));
      return folders.length === 2 && states.every((s) => s?.state === 'succeeded') ? true : undefined;
    });
  });
});
