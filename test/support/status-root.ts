import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RunBundle } from '../../src/workspace/bundle.js';
import { AuditLog } from '../../src/audit/log.js';
import { writeRunManifest, writeRunResult, type RunResult } from '../../src/workspace/run-record.js';
import type { IncidentEvent } from '../../src/incident/machine.js';
import { IncidentStore } from '../../src/incident/store.js';
import type { IncidentState } from '../../src/workspace/state.js';
import { sha256Hex } from '../../src/workspace/incident.js';
import { silentLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { dropByRename, incidentJson } from './incidents.js';
import { sampleRunResult } from './runs.js';

// A workspaces root holding an incident in every state, made the way the daemon makes them: the real
// store applying real events (state.json and the audit chain), run bundles with result.json and
// manifest.json through the run record, and the agent's report where agents write it.

export const POLICY = { max_attempts: 3, retry_base_delay: 50, retry_max_delay: 200 };

export const ANSWERS: Partial<Record<IncidentState, string>> = {
  succeeded:
    'Hypothesis: payments-api crash-loops on a missing DATABASE_URL key; confidence high; first action: restore the key in secret payments-db',
};

export const REPORT = `# Incident report

## 0. Executive Triage Card
The **payments-api** pods crash-loop: \`DATABASE_URL\` is missing from secret \`payments-db\`.

| pod | restarts |
|---|---|
| payments-api-7c9d | 14 |

See [the runbook](https://runbooks.example/payments).
`;

export function storeFor(audit = new AuditLog()): IncidentStore {
  return new IncidentStore({ audit, log: silentLogger(), policy: POLICY });
}

function result(runId: string, incidentId: string, over: Partial<RunResult>): RunResult {
  const times = { startedAt: '2026-11-22T01:00:00.000Z', finishedAt: '2026-11-22T01:02:14.000Z' };
  return sampleRunResult({
    ...times,
    durationMs: 134_000,
    tokens: { input: 18_000, output: 2_345 },
    runId,
    incidentId,
    ...over,
  });
}

/** Applies `events` to a new incident folder `name` and returns its path. */
export async function incidentIn(
  root: string,
  name: string,
  events: (sha256: string, incidentId: string) => IncidentEvent[],
  store = storeFor(),
  incident: Record<string, unknown> = {},
): Promise<string> {
  const incidentId = `inc-${name}`;
  const dir = await dropByRename(root, name, incidentJson({ incidentId, ...incident }));
  // The real digest: a daemon started on this root sees the incident unchanged.
  const sha256 = sha256Hex(await readFile(path.join(dir, 'incident.json')));
  for (const event of events(sha256, incidentId)) await store.apply(dir, event);
  return dir;
}

const validated = (sha256: string, incidentId: string): IncidentEvent => ({
  type: 'Validated',
  incidentId,
  sha256,
});

/** The events of an incident whose one run, `runId`, succeeded under the process engine (for incidentIn). */
export const succeededRun =
  (runId: string) =>
  (sha256: string, incidentId: string): IncidentEvent[] => [
    validated(sha256, incidentId),
    { type: 'Claimed', runId, holder: 'test' },
    { type: 'Launched', runId, engine: 'process', id: '1' },
    { type: 'Finished', runId, outcome: { status: 'succeeded', exitCode: 0 } },
  ];

/** Writes result.json (and the report when `report` is given) for run `runId` of `dir`. */
export async function writeRun(
  dir: string,
  runId: string,
  over: Partial<RunResult>,
  report?: string,
): Promise<void> {
  const bundle = await RunBundle.create(dir, runId, new Redactor());
  const incidentId = `inc-${path.basename(dir)}`;
  if (report !== undefined) {
    await mkdir(path.join(dir, 'output'), { recursive: true });
    await writeFile(path.join(dir, 'output', 'investigation.md'), report);
  }
  await writeRunResult(
    bundle,
    result(runId, incidentId, {
      ...over,
      report: {
        path: '/workspace/output/investigation.md',
        bytes: report === undefined ? 0 : Buffer.byteLength(report),
        missingSections: [],
      },
    }),
  );
}

/** One incident per state (folder named after the state); returns the folders' paths by state. */
export async function rootWithEveryState(root: string): Promise<Record<IncidentState, string>> {
  const store = storeFor();
  const run = (state: string) => `run-${state}`;
  const started = (s: string, i: string, state: string): IncidentEvent[] => [
    validated(s, i),
    { type: 'Claimed', runId: run(state), holder: 'test' },
  ];
  const launched = (s: string, i: string, state: string): IncidentEvent[] => [
    ...started(s, i, state),
    { type: 'Launched', runId: run(state), engine: 'process', id: '4242' },
  ];
  const dirs = {} as Record<IncidentState, string>;
  const make = async (state: IncidentState, events: (s: string, i: string) => IncidentEvent[]) => {
    dirs[state] = await incidentIn(root, state, events, store);
  };
  await make('queued', (s, i) => [validated(s, i)]);
  await make('deferred', (s, i) => [
    {
      type: 'QueueFull',
      incidentId: i,
      sha256: s,
      reason: 'queue full (scheduling.queue_limit 1); picked up when the queue drains',
    },
  ]);
  await make('rejected', (_s, i) => [
    {
      type: 'Invalid',
      incidentId: i,
      reason: 'incident.json is missing "cluster": add it and save the file again',
    },
  ]);
  await make('preparing', (s, i) => started(s, i, 'preparing'));
  await make('running', (s, i) => [
    ...launched(s, i, 'running'),
    {
      type: 'Progress',
      runId: run('running'),
      progress: {
        turns: 4,
        tokens: { input: 5000, output: 700 },
        lastTool: 'kubectl',
        elapsedMs: 42_000,
        updatedAt: new Date().toISOString(),
      },
    },
  ]);
  const bundle = await RunBundle.create(dirs.running, run('running'), new Redactor());
  await writeRunManifest(bundle, {
    schemaVersion: 1,
    runId: run('running'),
    incidentId: 'inc-running',
    attempt: 1,
    engine: 'process',
    agent: 'codex',
    launchedAt: new Date().toISOString(),
    report: {
      hostPath: path.join(dirs.running, 'output', 'investigation.md'),
      agentPath: '/workspace/output/investigation.md',
    },
  });
  await make('succeeded', (s, i) => [
    ...launched(s, i, 'succeeded'),
    { type: 'Finished', runId: run('succeeded'), outcome: { status: 'succeeded', exitCode: 0 } },
  ]);
  await writeRun(
    dirs.succeeded,
    run('succeeded'),
    {
      costUsd: 0.4213,
      answer: ANSWERS.succeeded,
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
    },
    REPORT,
  );
  await make('failed', (s, i) => [
    ...launched(s, i, 'failed'),
    {
      type: 'Finished',
      runId: run('failed'),
      outcome: {
        status: 'timed_out',
        exitCode: null,
        reason: 'the agent timed out after 15m (agent.timeout)',
      },
    },
  ]);
  await writeRun(dirs.failed, run('failed'), {
    status: 'timed_out',
    exitCode: null,
    agent: 'gemini',
    durationMs: 900_000,
  });
  await make('interrupted', (s, i) => [
    ...launched(s, i, 'interrupted'),
    {
      type: 'Interrupted',
      runId: run('interrupted'),
      reason: 'interrupted by daemon shutdown; re-queued at the next start',
    },
  ]);
  await make('resolved', (s, i) => [
    validated(s, i),
    {
      type: 'Resolved',
      at: '2026-11-22T01:05:00.000Z',
      reason: 'the alert resolved before the investigation started',
    },
  ]);
  return dirs;
}

/** alerts.json as intake leaves it when every alert behind the incident resolved at `at`. */
export async function writeResolvedAlerts(dir: string, at: string): Promise<void> {
  await writeFile(
    path.join(dir, 'alerts.json'),
    JSON.stringify({
      version: 1,
      firstAt: at,
      lastAt: at,
      resolvedAt: at,
      count: 1,
      omitted: 0,
      open: 0,
      alerts: [],
    }),
  );
}
