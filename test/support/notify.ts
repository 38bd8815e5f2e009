// Finished workspaces (incident.json, state.json, a run's result.json, the report) and notifiers built
// from a real configuration, for the notify tests.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AuditLog } from '../../src/audit/log.js';
import type { CliIO } from '../../src/cli/io.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { resolveSecrets } from '../../src/config/secrets.js';
import { silentLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { Notifier, type NotifierDeps } from '../../src/notify/notifier.js';
import { readFinishedIncident } from '../../src/notify/input.js';
import type { FinishedIncident, OutboxEntry } from '../../src/notify/types.js';
import { listEntries } from '../../src/workspace/outbox.js';
import { incidentJson } from './incidents.js';

export const FIXTURE_REPORT = path.join(import.meta.dirname, '..', 'fixtures', 'notify', 'triage-report.md');

export const RUN_ID = '20260301T101500Z-a1b2c3';

export interface WorkspaceOptions {
  state?: 'succeeded' | 'failed';
  reason?: string;
  report?: string | null;
  incident?: Record<string, unknown>;
  result?: Record<string, unknown> | null;
  updatedAt?: string;
}

/** A workspace as the daemon leaves it after a run. */
export async function finishedWorkspace(
  root: string,
  folder: string,
  options: WorkspaceOptions = {},
): Promise<string> {
  const dir = path.join(root, folder);
  const state = options.state ?? 'succeeded';
  const incident =
    options.incident ??
    incidentJson({
      incidentId: `inc-${folder}`,
      severity: 'critical',
      resource: { apiVersion: 'v1', kind: 'Pod', name: 'web-1', namespace: 'shop', uid: 'uid-1' },
    });
  await mkdir(path.join(dir, '.triage', 'runs', RUN_ID), { recursive: true });
  await writeFile(path.join(dir, 'incident.json'), JSON.stringify(incident, null, 2));
  await writeFile(
    path.join(dir, '.triage', 'state.json'),
    JSON.stringify({
      incidentId: incident.incidentId,
      state,
      attempts: 1,
      ...(options.reason ? { reason: options.reason } : {}),
      updatedAt: options.updatedAt ?? new Date().toISOString(),
      runs: [{ id: RUN_ID, status: state }],
    }),
  );
  const report = options.report === undefined ? await readFile(FIXTURE_REPORT, 'utf8') : options.report;
  if (report !== null) {
    await mkdir(path.join(dir, 'output'), { recursive: true });
    await writeFile(path.join(dir, 'output', 'investigation.md'), report);
  }
  if (options.result !== null)
    await writeFile(
      path.join(dir, '.triage', 'runs', RUN_ID, 'result.json'),
      JSON.stringify({
        status: state,
        exitCode: state === 'succeeded' ? 0 : 1,
        agent: 'claude',
        engine: 'process',
        startedAt: '2026-03-01T10:15:00.000Z',
        finishedAt: '2026-03-01T10:19:12.000Z',
        durationMs: 252_000,
        tokens: { input: 12_345, output: 2_345 },
        costUsd: 0.4213,
        report: {
          path: '/workspace/output/investigation.md',
          bytes: report === null ? 0 : Buffer.byteLength(report),
          missingSections: [],
        },
        answer: 'The payments-api Secret key was renamed; roll back the Deployment.',
        ...(options.result ?? {}),
      }),
    );
  return dir;
}

/** The Slack sink the tests use: `#oncall` through the Web API stand-in at `apiUrl`, its token SLACK_BOT_TOKEN. */
export const slackSink = (apiUrl: string): Record<string, unknown> => ({
  name: 'oncall',
  type: 'slack',
  channel: '#oncall',
  secret: 'SLACK_BOT_TOKEN',
  api_url: apiUrl,
});

export interface NotifyConfigInput {
  sinks: Record<string, unknown>[];
  secrets: Record<string, string>;
  retry?: Record<string, unknown>;
  publicUrl?: string;
  extra?: Record<string, unknown>;
}

/** A loaded configuration (defaults applied, validated) whose secrets come from `env`. */
export function notifyConfig(input: NotifyConfigInput): { config: Config; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const secrets: Record<string, { env: string }> = {};
  for (const [name, value] of Object.entries(input.secrets)) {
    env[`T_${name}`] = value;
    secrets[name] = { env: `T_${name}` };
  }
  const { config } = loadConfig({
    env: {},
    flags: {
      secrets,
      notify: {
        sinks: input.sinks,
        retry: { base_delay: '200ms', max_delay: '2s', ...(input.retry ?? {}) },
        request_timeout: '5s',
        ...(input.extra ?? {}),
      },
      ...(input.publicUrl ? { http: { public_url: input.publicUrl } } : {}),
    },
  });
  return { config, env };
}

export interface TestNotifier {
  notifier: Notifier;
  redactor: Redactor;
  audit: AuditLog;
  metrics: { calls: [string, string][]; notification(sink: string, outcome: string): void };
}

export function buildNotifier(
  config: Config,
  env: Record<string, string>,
  extra: Partial<NotifierDeps> = {},
): TestNotifier {
  const secrets = resolveSecrets(config, env).values;
  const redactor = new Redactor(secrets);
  const audit = new AuditLog({ redactor });
  const calls: [string, string][] = [];
  const metrics = {
    calls,
    notification: (sink: string, outcome: string) => void calls.push([sink, outcome]),
  };
  const notifier = new Notifier({
    notify: config.notify,
    ...(config.http.public_url ? { publicUrl: config.http.public_url } : {}),
    secrets,
    redactor,
    audit,
    log: silentLogger(),
    metrics,
    ...extra,
  });
  return { notifier, redactor, audit, metrics };
}

export async function finishedInput(dir: string, config: Config): Promise<FinishedIncident> {
  return readFinishedIncident(dir, {
    maxIncidentBytes: 1 << 20,
    maxReportBytes: config.notify.max_report_bytes,
  });
}

/** Outbox entries of a workspace, by sink name. */
export async function entriesBySink(dir: string): Promise<Record<string, OutboxEntry>> {
  const { entries } = await listEntries(dir);
  return Object.fromEntries(entries.map((e) => [e.sink, e]));
}

/** Audit events of a workspace, parsed. */
export async function auditEvents(dir: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A report of about `bytes` with every construct a report has: tables, lists, code, quotes, long lines. */
export function bigReport(bytes: number): string {
  const parts = [
    '# Kubernetes Incident Triage Report',
    '## 0. Executive Triage Card',
    '### Primary Hypothesis',
    'Disk full — Confidence: High',
  ];
  for (let i = 1; parts.join('\n\n').length < bytes; i++) {
    parts.push(`## ${i}. Section ${i}`);
    parts.push(`- **[FACT-${i}]** pod restarted <${i}> times & more — Source: \`kubectl get pods\``);
    parts.push('| Step | Action |\n|---|---|\n| 1 | `kubectl rollout undo` |');
    parts.push(`\`\`\`\n${`log line ${i} ${'x'.repeat(90)}\n`.repeat(60)}\`\`\``);
    parts.push(`> ${'quoted evidence '.repeat(30)}`);
    parts.push(`${'a-very-long-unbroken-line&'.repeat(200)}END-${i}`);
  }
  return parts.join('\n\n');
}

/** Command-line IO that captures stdout and stderr. */
export function captureCli(env: Record<string, string>, cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env, cwd };
  return { io, out: () => out.join(''), err: () => err.join('') };
}
