import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { AuditLog } from '../../../src/audit/log.js';
import type { CliIO } from '../../../src/cli/io.js';
import { recordFeedback } from '../../../src/feedback/feedback.js';
import { runCli } from '../../../src/cli/program.js';
import { POLL_MS, runStatus } from '../../../src/cli/commands/status.js';
import { INCIDENT_STATES, type IncidentState } from '../../../src/workspace/state.js';
import type { IncidentView, StatusList } from '../../../src/status/types.js';
import { createMemoryExecutor } from '../../support/fake-executor.js';
import { dropByRename, incidentJson, tempRoot, waitFor } from '../../support/incidents.js';
import { startStatusDaemon, type StatusDaemon } from '../../support/status-daemon.js';
import {
  ANSWERS,
  incidentIn,
  rootWithEveryState,
  writeResolvedAlerts,
  writeRun,
} from '../../support/status-root.js';

// `triage-runner status` on a root holding every state: text and JSON, filters, a bad root, and the
// daemon's API used when a daemon answers for the root.

let root: string;
let cleanup: () => Promise<void>;
let daemons: StatusDaemon[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-status-'));
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
  await cleanup();
});

function io(env: Record<string, string> = { TRIAGE_RUNNER_HTTP_PORT: '0' }, columns?: number) {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIO = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env,
    cwd: root,
    ...(columns ? { columns: () => columns } : {}),
  };
  return { cli, out: () => out.join(''), err: () => err.join('') };
}

const VIEW_KEYS = [
  'folder',
  'incidentId',
  'state',
  'attempts',
  'agent',
  'durationMs',
  'tokens',
  'costUsd',
  'answer',
  'reportPath',
  'reason',
  'updatedAt',
  'age',
  'progress',
  'resolvedAt',
  'feedback',
  'evidence',
  'outcome',
  'subject',
  'duplicateOf',
  'measures',
];

const lineOf = (text: string, folder: string) =>
  text.split('\n').find((l) => l.startsWith(`${folder} `)) ?? `(no line for ${folder})`;

describe('triage-runner status', () => {
  it('prints one line per incident in every state, then the totals by state', async () => {
    await rootWithEveryState(root);
    const t = io();
    expect(await runCli(['status', '--root', root], t.cli)).toBe(0);
    const text = t.out();
    const lines = text.trim().split('\n');
    expect(lines[0]).toMatch(
      /^FOLDER\s+CLUSTER\s+INCIDENT\s+STATE\s+AGE\s+ATT\s+AGENT\s+DURATION\s+1ST TURN\s+TOKENS\s+1ST CALL\s+CACHED\s+COST\s+REPORT\s+ANSWER$/,
    );
    // Every state as it is, but an answer as what it amounts to (this one's report had no evidence check).
    for (const state of INCIDENT_STATES) {
      const shown = state === 'succeeded' ? 'not verified' : state;
      expect(lineOf(text, state)).toMatch(new RegExp(`^${state}\\s+\\S+\\s+inc-${state}\\s+${shown}\\s`));
    }
    expect(lineOf(text, 'succeeded')).toMatch(
      /not verified\s+\d+s\s+1\s+claude\s+2m14s\s+7\.4s\s+20k\s+9\.6k\s+68%\s+\$0\.42\s+succeeded\/output\/investigation\.md\s+Hypothesis: payments-api crash-loops/,
    );
    expect(lineOf(text, 'failed')).toMatch(/gemini\s+15m00s\s+.*\(no report: the agent timed out after 15m/);
    expect(lineOf(text, 'running')).toMatch(/codex\s+42s\s+-\s+5\.7k\s+-\s+-\s+-\s+\(no report: running\)/);
    expect(lineOf(text, 'rejected')).toContain('(no report: incident.json is missing "cluster"');
    expect(lines.at(-1)).toBe(
      '9 incidents: 1 queued, 1 preparing, 1 running, 1 answered, 1 failed, 1 rejected, 1 deferred, 1 interrupted, 1 resolved',
    );
  });

  it('--json prints {incidents, totals} with the documented fields of every incident', async () => {
    const dirs = await rootWithEveryState(root);
    const t = io();
    expect(await runCli(['status', '--root', root, '--json'], t.cli)).toBe(0);
    const body = JSON.parse(t.out()) as StatusList;
    expect(Object.keys(body)).toEqual(['incidents', 'totals']);
    expect(body.totals).toEqual(Object.fromEntries(INCIDENT_STATES.map((s) => [s, 1])));
    const by = Object.fromEntries(body.incidents.map((v) => [v.state, v])) as Record<
      IncidentState,
      IncidentView
    >;
    for (const view of body.incidents) expect(Object.keys(view)).toEqual(VIEW_KEYS);
    expect(by.succeeded).toMatchObject({
      folder: 'succeeded',
      incidentId: 'inc-succeeded',
      attempts: 1,
      agent: 'claude',
      durationMs: 134_000,
      tokens: { input: 18_000, output: 2_345 },
      costUsd: 0.4213,
      answer: ANSWERS.succeeded,
      reportPath: path.join(dirs.succeeded, 'output', 'investigation.md'),
      reason: null,
      progress: null,
      measures: {
        firstModelCallMs: 2100,
        firstTokenMs: 3300,
        firstToolCallMs: 7400,
        investigationMs: 131_000,
        firstCallInputTokens: 9640,
        inputTokens: 18_000,
        outputTokens: 2345,
        cacheReadTokens: 12_240,
        cacheWriteTokens: 5760,
        cacheReadShare: 0.68,
        modelCalls: 12,
        model: 'claude-sonnet-5-5',
      },
    });
    expect(by.running.measures).toBeNull();
    expect(by.running).toMatchObject({
      agent: 'codex',
      reportPath: null,
      progress: { turns: 4, tokens: { input: 5000, output: 700 }, lastTool: 'kubectl', elapsedMs: 42_000 },
    });
    expect(by.failed).toMatchObject({ reportPath: null, reason: expect.stringContaining('timed out') });
    expect(by.resolved).toMatchObject({ resolvedAt: '2026-11-22T01:05:00.000Z', attempts: 0 });
    expect(by.deferred.reason).toContain('queue full');
    expect(by.interrupted.reason).toContain('daemon shutdown');
    // Newest change first.
    const times = body.incidents.map((v) => Date.parse(v.updatedAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('shows when the alerts behind a finished incident resolved (alerts.json), in text and JSON', async () => {
    const dir = await incidentIn(root, 'alert-resolved', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
      { type: 'Claimed', runId: 'r1', holder: 'test' },
      { type: 'Finished', runId: 'r1', outcome: { status: 'succeeded', exitCode: 0 } },
    ]);
    await writeRun(dir, 'r1', {});
    const at = '2026-03-01T10:30:00.000Z';
    await writeResolvedAlerts(dir, at);

    const json = io();
    expect(await runCli(['status', '--root', root, '--json'], json.cli)).toBe(0);
    const body = JSON.parse(json.out()) as StatusList;
    expect(body.incidents.find((v) => v.folder === 'alert-resolved')).toMatchObject({
      state: 'succeeded',
      resolvedAt: at,
    });
    const text = io();
    expect(await runCli(['status', '--root', root], text.cli)).toBe(0);
    expect(text.out()).toMatch(/alert-resolved\s+prod-1\s+inc-alert-resolved\s+not verified, resolved\s/);
  });

  it('cuts the answer to the terminal width', async () => {
    await rootWithEveryState(root);
    const t = io(undefined, 180);
    expect(await runCli(['status', '--root', root], t.cli)).toBe(0);
    const line = lineOf(t.out(), 'succeeded');
    expect([...line].length).toBe(180);
    expect(line.endsWith('…')).toBe(true);
    for (const l of t.out().split('\n').slice(1)) expect([...l].length).toBeLessThanOrEqual(180);
  });

  it('--state lists only that state and keeps the totals of every state', async () => {
    await rootWithEveryState(root);
    const t = io();
    expect(await runCli(['status', '--root', root, '--state', 'failed', '--json'], t.cli)).toBe(0);
    const body = JSON.parse(t.out()) as StatusList;
    expect(body.incidents.map((v) => v.folder)).toEqual(['failed']);
    expect(body.totals.succeeded).toBe(1);
  });

  it('exits 2 for a root that does not exist or is not a folder, and for an unknown state', async () => {
    const missing = io();
    expect(await runCli(['status', '--root', path.join(root, 'nope')], missing.cli)).toBe(2);
    expect(missing.err()).toMatch(
      /workspaces root .*nope does not exist: give the folder the daemon watches/,
    );
    await writeFile(path.join(root, 'file'), 'x');
    const file = io();
    expect(await runCli(['status', '--root', path.join(root, 'file')], file.cli)).toBe(2);
    expect(file.err()).toContain('is not a folder');
    const state = io();
    expect(await runCli(['status', '--root', root, '--state', 'done'], state.cli)).toBe(2);
    expect(state.err()).toContain('--state "done" is not an incident state; use one of queued, preparing');
  });

  it('shows the evidence verdict and how many points did not hold beside the answer, and --json carries the evidence with its gaps', async () => {
    await incidentIn(root, 'cut-off', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
      { type: 'Claimed', runId: 'run-cut', holder: 'test' },
      { type: 'Finished', runId: 'run-cut', outcome: { status: 'succeeded', exitCode: 0 } },
    ]);
    const evidence = {
      verdict: 'ungrounded' as const,
      facts: 2,
      verified: 0,
      unverified: [],
      citedNotRun: ['kubectl describe pod web-1 -n shop (FACT-2)'],
      excerptsNotFound: [],
      gaps: ['cluster default was unreachable when the run started: connection refused'],
    };
    await writeRun(path.join(root, 'cut-off'), 'run-cut', { answer: 'it was DNS', evidence }, '# r\n');
    const text = io();
    expect(await runCli(['status', '--root', root], text.cli)).toBe(0);
    expect(lineOf(text.out(), 'cut-off')).toMatch(/\[ungrounded: 1 unverified, 1 gap\] it was DNS$/);
    const json = io();
    expect(await runCli(['status', '--root', root, '--json'], json.cli)).toBe(0);
    const [view] = (JSON.parse(json.out()) as StatusList).incidents;
    expect(view?.evidence).toEqual(evidence);
  });

  it('asks the daemon when one answers for the root (with its token), and reads the workspaces when not', async () => {
    for (const name of ['one', 'two'])
      await incidentIn(root, name, (sha256, incidentId) => [
        { type: 'Validated', incidentId, sha256 },
        { type: 'Claimed', runId: `run-${name}`, holder: 'test' },
        { type: 'Finished', runId: `run-${name}`, outcome: { status: 'succeeded', exitCode: 0 } },
      ]);
    await writeRun(path.join(root, 'one'), 'run-one', { answer: 'one answer' }, '# one\n');
    const token = 'status-token-0c9a';
    const d = await startStatusDaemon({ root, executor: createMemoryExecutor(), token });
    daemons.push(d);
    const config = path.join(root, '..', `${path.basename(root)}.yaml`);
    await writeFile(
      config,
      stringify({
        workspaces_root: root,
        http: { port: Number(new URL(d.base).port) },
        secrets: { HTTP_TOKEN: { env: 'T' } },
      }),
    );
    // The index has "two"; on disk it is gone: only the daemon's answer still lists it.
    await rm(path.join(root, 'two', '.triage', 'state.json'));
    const viaDaemon = io({ T: token });
    expect(await runCli(['status', '--config', config, '--json'], viaDaemon.cli)).toBe(0);
    expect(viaDaemon.err()).toBe('');
    const listed = (JSON.parse(viaDaemon.out()) as StatusList).incidents;
    expect(listed.map((v) => v.folder).sort()).toEqual(['one', 'two']);
    expect(listed.find((v) => v.folder === 'one')?.answer).toBe('one answer');
    const wrongToken = io({ T: 'wrong' });
    expect(await runCli(['status', '--config', config, '--json'], wrongToken.cli)).toBe(0);
    expect(wrongToken.err()).toMatch(
      /a daemon answers at http:\/\/127\.0\.0\.1:\d+ but refused the request \(HTTP 401/,
    );
    expect((JSON.parse(wrongToken.out()) as StatusList).incidents.map((v) => v.folder)).toEqual(['one']);
    await rm(config);
  });
});

describe('triage-runner status across clusters', () => {
  // Two payments-api CrashLoops in two clusters, as HTTP intake names them: folders that differ only
  // in their last characters.
  const LONG = '20261122T010000Z-KubePodCrashLooping-payments-payments-api';
  const EU = `${LONG}-3f9a1c2b`;
  const US = `${LONG}-9b8c7d6e`;
  let configs: string[] = [];
  afterEach(async () => {
    await Promise.all(configs.map((file) => rm(file, { force: true })));
    configs = [];
  });

  async function twoClusters(): Promise<void> {
    for (const [folder, cluster] of [
      [EU, 'prod-eu-1'],
      [US, 'prod-us-1'],
    ] as const)
      await incidentIn(
        root,
        folder,
        (sha256, incidentId) => [
          { type: 'Validated', incidentId, sha256 },
          { type: 'Claimed', runId: 'r1', holder: 'test' },
          {
            type: 'Finished',
            runId: 'r1',
            outcome: { status: 'failed', exitCode: 1, reason: 'agent failed' },
          },
        ],
        undefined,
        {
          cluster,
          namespace: 'payments',
          faultType: 'CrashLoop',
          resource: { apiVersion: 'v1', kind: 'Pod', name: 'payments-api-7c9d-x2', namespace: 'payments' },
        },
      );
  }

  /** A configuration naming both clusters, prod-eu-1 with the alias prod-eu. */
  async function registryConfig(): Promise<string> {
    const file = path.join(root, '..', `${path.basename(root)}-clusters.yaml`);
    await writeFile(
      file,
      stringify({
        workspaces_root: root,
        http: { port: 0 },
        clusters: {
          'prod-eu-1': { kubeconfig: path.join(root, '..', 'eu.kubeconfig'), aliases: ['prod-eu'] },
          'prod-us-1': { kubeconfig: path.join(root, '..', 'us.kubeconfig') },
        },
      }),
    );
    return file;
  }

  it('prints a cluster column and whole folder names, so two incidents of one workload in two clusters are told apart', async () => {
    await twoClusters();
    const t = io();
    expect(await runCli(['status', '--root', root], t.cli)).toBe(0);
    const lines = t.out().split('\n');
    expect(lines[0]).toMatch(/^FOLDER\s+CLUSTER\s+INCIDENT\s+STATE\s/);
    const eu = lineOf(t.out(), EU);
    const us = lineOf(t.out(), US);
    expect(eu).toMatch(new RegExp(`^${EU}\\s+prod-eu-1\\s+\\S*…\\S*-3f9a1c2b\\s+failed\\s`));
    expect(us).toMatch(new RegExp(`^${US}\\s+prod-us-1\\s+\\S*…\\S*-9b8c7d6e\\s+failed\\s`));
    expect(eu.slice(0, 100)).not.toBe(us.slice(0, 100));
  });

  it('--cluster lists the incidents of one cluster, by its name or an alias; the totals still count every incident', async () => {
    await twoClusters();
    const config = await registryConfig();
    configs.push(config);
    for (const name of ['prod-eu-1', 'prod-eu']) {
      const t = io({});
      expect(await runCli(['status', '--config', config, '--cluster', name, '--json'], t.cli), t.err()).toBe(
        0,
      );
      const body = JSON.parse(t.out()) as StatusList;
      expect(
        body.incidents.map((v) => v.folder),
        name,
      ).toEqual([EU]);
      expect(body.totals.failed).toBe(2);
    }
    const none = io({});
    expect(await runCli(['status', '--config', config, '--cluster', 'staging'], none.cli)).toBe(0);
    expect(none.out()).toBe('no incidents\n2 incidents: 2 failed\n');
  });

  it('GET /v1/incidents?cluster= lists one cluster (an alias too), with the count that matched', async () => {
    await twoClusters();
    const d = await startStatusDaemon({
      root,
      executor: createMemoryExecutor(),
      config: {
        clusters: {
          'prod-eu-1': { kubeconfig: path.join(root, '..', 'eu.kubeconfig'), aliases: ['prod-eu'] },
          'prod-us-1': { kubeconfig: path.join(root, '..', 'us.kubeconfig') },
        },
      },
    });
    daemons.push(d);
    for (const [query, folders] of [
      ['cluster=prod-us-1', [US]],
      ['cluster=prod-eu', [EU]],
      ['cluster=prod-eu-1&state=succeeded', []],
      ['cluster=nowhere', []],
    ] as const) {
      const res = await fetch(`${d.base}/v1/incidents?${query}`);
      expect(res.status, query).toBe(200);
      const body = (await res.json()) as StatusList & { matched: number };
      expect(
        body.incidents.map((v) => v.folder),
        query,
      ).toEqual(folders);
      expect(body.matched, query).toBe(folders.length);
      expect(body.totals.failed, query).toBe(2);
    }
    const twice = await fetch(`${d.base}/v1/incidents?cluster=a&cluster=b`);
    expect(twice.status).toBe(400);
  });
});

describe('triage-runner status --watch', () => {
  it('follows the daemon: an incident dropped while watching appears without restarting the command', async () => {
    const d = await startStatusDaemon({ root, executor: createMemoryExecutor({ durationMs: 5 }) });
    daemons.push(d);
    const config = path.join(root, '..', `${path.basename(root)}-watch.yaml`);
    await writeFile(
      config,
      stringify({ workspaces_root: root, http: { port: Number(new URL(d.base).port) } }),
    );
    const t = io({});
    const stop = new AbortController();
    const watching = runStatus({ watch: true }, config, t.cli, stop.signal);
    await waitFor('the first listing', () => (t.out().includes('no incidents') ? true : undefined));
    await dropByRename(root, 'watched', incidentJson({ incidentId: 'inc-watched' }));
    // Each redraw clears the screen first; the last one shows the incident finished.
    await waitFor('the dropped incident to show as answered', () =>
      /^watched\s+prod-1\s+inc-watched\s+not verified\s/m.test(
        t.out().slice(t.out().lastIndexOf('\u001b[H\u001b[2J')),
      )
        ? true
        : undefined,
    );
    stop.abort();
    expect(await watching).toBe(0);
    await rm(config);
  });

  it('without a daemon, re-reads the workspaces until interrupted', async () => {
    const t = io();
    const stop = new AbortController();
    const watching = runStatus({ watch: true, json: true, root }, undefined, t.cli, stop.signal);
    await waitFor('the first listing', () => (t.out().includes('"incidents": []') ? true : undefined));
    await incidentIn(root, 'later', (sha256, incidentId) => [{ type: 'Validated', incidentId, sha256 }]);
    await waitFor(
      'the new incident in a later listing',
      () => (t.out().includes('"folder": "later"') ? true : undefined),
      3 * POLL_MS,
    );
    stop.abort();
    expect(await watching).toBe(0);
  });
});

describe('status --accuracy', () => {
  it('grades the answers responders rated, per agent, with the confident-wrong count', async () => {
    const dirs = await rootWithEveryState(root);
    const second = await incidentIn(root, 'second', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
      { type: 'Claimed', runId: 'run-2', holder: 'test' },
      { type: 'Launched', runId: 'run-2', engine: 'process', id: '1' },
      { type: 'Finished', runId: 'run-2', outcome: { status: 'succeeded', exitCode: 0 } },
    ]);
    await writeRun(
      second,
      'run-2',
      { agent: 'codex', answer: 'Hypothesis: node pressure; confidence low' },
      'r',
    );
    await recordFeedback(dirs.succeeded, { verdict: 'wrong' }, 'api', { audit: new AuditLog() });
    const listing = io();
    expect(await runStatus({ root }, undefined, listing.cli)).toBe(0);
    expect(listing.out()).toContain('[rated wrong] Hypothesis: payments-api crash-loops');
    const text = io();
    expect(await runStatus({ accuracy: true, root }, undefined, text.cli)).toBe(0);
    expect(text.out()).toContain('2 answers, 1 rated by responders: accuracy 0%, 1 confident-wrong');
    const json = io();
    expect(await runStatus({ accuracy: true, json: true, root }, undefined, json.cli)).toBe(0);
    const body = JSON.parse(json.out()) as {
      agent: { key: string; rated: number; confidentWrong: number }[];
    };
    expect(body.agent).toEqual([
      expect.objectContaining({ key: 'claude', rated: 1, wrong: 1, confidentWrong: 1, rate: 0 }),
      expect.objectContaining({ key: 'codex', rated: 0, rate: null }),
    ]);
  });
});
