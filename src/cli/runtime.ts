import { AuditLog } from '../audit/log.js';
import type { Config } from '../config/schema.js';
import { auditKey, resolveSecrets } from '../config/secrets.js';
import { createRunExecutor } from '../daemon/run/pipeline.js';
import type { PipelineMetrics, RunExecutor } from '../daemon/types.js';
import { createLogger, type Logger } from '../log/logger.js';
import { Redactor } from '../log/redact.js';
import { CliExit, EXIT, type CliIO } from './io.js';

/** What every command that runs the pipeline needs: secrets read once, a redacting logger, the executor. */
export interface Runtime {
  log: Logger;
  redactor: Redactor;
  audit: AuditLog;
  executor: RunExecutor;
  /** Every configured secret's value (for the notifier); never log this. */
  secrets: Record<string, string>;
}

/** The secrets notify sinks use: the daemon's own credentials, never handed to an agent. */
export function notifySecretNames(config: Config): Set<string> {
  const names = new Set<string>();
  for (const sink of config.notify.sinks) {
    names.add(sink.secret);
    if (sink.notes) names.add(sink.notes.secret);
  }
  return names;
}

/** The secrets an agent may be handed: every configured one except the notify sinks' credentials. */
export function agentSecrets(config: Config, values: Record<string, string>): Record<string, string> {
  const own = notifySecretNames(config);
  return Object.fromEntries(Object.entries(values).filter(([name]) => !own.has(name)));
}

/** Builds the run pipeline the daemon, replay and compare share, from a loaded configuration. */
export function buildRuntime(
  io: CliIO,
  config: Config,
  options: { daemonId: string; metrics?: PipelineMetrics },
): Runtime {
  const secrets = resolveSecrets(config, io.env);
  const redactor = new Redactor(secrets.values);
  const log = createLogger({ level: config.log.level, redactor });
  for (const problem of secrets.problems)
    log.warn({ secret: problem.name, problem: problem.message }, 'secret not available');
  let key: string | undefined;
  try {
    key = auditKey(config, secrets.values);
  } catch (err) {
    throw new CliExit(EXIT.usage, (err as Error).message);
  }
  const audit = new AuditLog({ redactor, ...(key ? { key } : {}) });
  const executor = createRunExecutor({
    config,
    log,
    redactor,
    // A Slack token or signing secret must not reach an agent (Goose with another provider gets every secret).
    secrets: agentSecrets(config, secrets.values),
    audit,
    env: io.env,
    daemonId: options.daemonId,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  return { log, redactor, audit, executor, secrets: secrets.values };
}
