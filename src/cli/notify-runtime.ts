import type { AuditLog } from '../audit/log.js';
import { AuditLog as AuditLogImpl } from '../audit/log.js';
import type { Config } from '../config/schema.js';
import { logSecretProblems, resolveSecrets } from '../config/secrets.js';
import { createLogger, type Logger } from '../log/logger.js';
import { verdictOfRun } from '../incident/queries.js';
import { Redactor } from '../log/redact.js';
import { Notifier } from '../notify/notifier.js';
import { finishedFrom } from '../notify/input.js';
import type { OutboxEntry } from '../notify/types.js';
import type { Plan } from '../notify/planner.js';
import { writerAuditKey } from '../audit/writer-key.js';
import { CliExit, EXIT, type CliIO } from './io.js';

// The notifier as commands use it (`notify`, `replay --notify`, `compare --notify`): deliveries are
// recorded in the workspace's outbox like the daemon's, and the command waits for them.

/** How long a command waits for its deliveries before leaving them to the daemon. */
export const DEFAULT_NOTIFY_WAIT_MS = 120_000;

export interface NotifyParts {
  log: Logger;
  redactor: Redactor;
  audit: AuditLog;
  secrets: Record<string, string>;
}

/** A notifier for a command; pass the parts of a runtime already built, or let it build its own. */
export function commandNotifier(io: CliIO, config: Config, parts?: NotifyParts): Notifier {
  let own: NotifyParts;
  if (parts) own = parts;
  else {
    const secrets = resolveSecrets(config, io.env);
    const redactor = new Redactor(secrets.values);
    const log = createLogger({ level: config.log.level, format: config.log.format, redactor });
    logSecretProblems(log, secrets, redactor.unredacted);
    const key = writerAuditKey(config, secrets.values, log, 'use');
    own = {
      log,
      redactor,
      audit: new AuditLogImpl({ redactor, ...(key ? { key } : {}) }),
      secrets: secrets.values,
    };
  }
  return new Notifier({
    notify: config.notify,
    ...(config.http.public_url ? { publicUrl: config.http.public_url } : {}),
    secrets: own.secrets,
    redactor: own.redactor,
    audit: own.audit,
    log: own.log,
    maxIncidentBytes: config.intake.max_incident_bytes,
  });
}

/** Waits for a plan's deliveries and prints one line per sink; resolves to true when all were delivered. */
export async function reportDeliveries(
  notifier: Notifier,
  plan: Plan,
  waitMs: number,
  io: CliIO,
  prefix = '',
): Promise<boolean> {
  for (const s of plan.skipped) io.stdout(`${prefix}${s.sink}: skipped (${s.why})\n`);
  if (plan.deliveries.length === 0) {
    io.stdout(`${prefix}nothing to deliver: no sink matches this incident\n`);
    return plan.skipped.length === 0;
  }
  const entries = await notifier.settle(
    plan.workspaceDir,
    plan.deliveries.map((d) => d.key),
    waitMs,
  );
  for (const entry of entries) io.stdout(`${prefix}${describeEntry(entry)}\n`);
  return entries.length === plan.deliveries.length && entries.every((e) => e.status === 'delivered');
}

export function describeEntry(entry: OutboxEntry): string {
  const where = `${entry.sink} (${entry.type}, outbox .triage/outbox/${entry.key}.json)`;
  if (entry.status === 'delivered') {
    const steps = entry.steps.length;
    return `${where}: delivered${steps > 1 ? ` (${steps} messages)` : ''}`;
  }
  const error = entry.lastError ? `: ${entry.lastError.message}` : '';
  if (entry.status === 'failed') return `${where}: failed${error}`;
  return `${where}: still pending, next attempt ${entry.nextAttemptAt ?? 'now'}${error}; the daemon continues it`;
}

/** A run made by replay or compare, to deliver when `--notify` is given. */
export interface CommandRun {
  workspaceDir: string;
  runId: string;
  /** The run's status (succeeded, failed, timed_out, interrupted). */
  status: string;
  reason?: string;
  trigger: 'replay' | 'compare';
  label: string;
}

/** `--notify` without sinks is a usage error, found before anything runs. */
export function checkNotifyFlag(config: Config, command: string): void {
  if (config.notify.sinks.length === 0)
    throw new CliExit(
      EXIT.usage,
      `${command} --notify: notify.sinks is empty in the configuration; add a sink or drop --notify`,
    );
}

/** Delivers each run like the daemon would and prints the outcome; true when every delivery arrived. */
export async function notifyRuns(
  io: CliIO,
  config: Config,
  parts: NotifyParts,
  runs: CommandRun[],
  waitMs = DEFAULT_NOTIFY_WAIT_MS,
): Promise<boolean> {
  const notifier = commandNotifier(io, config, parts);
  let ok = true;
  try {
    for (const run of runs) {
      const state = {
        state: verdictOfRun(run.status),
        ...(run.reason ? { reason: run.reason } : {}),
        attempts: 1,
        updatedAt: new Date().toISOString(),
        runs: [{ id: run.runId, status: run.status }],
      };
      const input = await finishedFrom(run.workspaceDir, state, run.runId, {
        maxIncidentBytes: config.intake.max_incident_bytes,
        maxReportBytes: config.notify.max_report_bytes,
      });
      const plan = await notifier.incidentFinished({ ...input, label: run.label }, { trigger: run.trigger });
      ok = (await reportDeliveries(notifier, plan, waitMs, io, `notify ${run.label}: `)) && ok;
    }
  } finally {
    await notifier.close();
  }
  return ok;
}
