import { AuditLog } from '../audit/log.js';
import type { Config } from '../config/schema.js';
import { agentSecrets, logSecretProblems, resolveSecrets } from '../config/secrets.js';
import { createRunExecutor } from './pipeline.js';
import type { PipelineMetrics, RunExecutor } from './types.js';
import { createLogger, type Logger } from '../log/logger.js';
import { Redactor } from '../log/redact.js';
import { configuredEndpoints } from '../prometheus/endpoint.js';
import { writerAuditKey } from '../audit/writer-key.js';

/** What every command that runs the pipeline needs: secrets read once, a redacting logger, the executor. */
export interface Runtime {
  log: Logger;
  /** Every resolved secret value by name (the daemon's own included). Never log this object. */
  secrets: Record<string, string>;
  redactor: Redactor;
  audit: AuditLog;
  executor: RunExecutor;
}

/** Builds the run pipeline the daemon, replay and compare share, from a loaded configuration. */
export function buildRuntime(
  env: Record<string, string | undefined>,
  config: Config,
  options: { daemonId: string; metrics?: PipelineMetrics },
): Runtime {
  const secrets = resolveSecrets(config, env);
  const redactor = new Redactor(secrets.values);
  const log = createLogger({ level: config.log.level, format: config.log.format, redactor });
  logSecretProblems(log, secrets, redactor.unredacted);
  const key = writerAuditKey(config, secrets.values, log, 'make');
  const audit = new AuditLog({ redactor, ...(key ? { key } : {}) });
  const executor = createRunExecutor({
    config,
    log,
    redactor,
    // The daemon's own secrets (HTTP token, webhook signing, notify sinks, the audit key) never reach an agent.
    secrets: agentSecrets(config, secrets.values),
    // The Prometheus endpoints' credentials stay with the daemon's own Prometheus client.
    prometheus: configuredEndpoints(config, secrets.values),
    audit,
    env,
    daemonId: options.daemonId,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  return { log, redactor, audit, executor, secrets: secrets.values };
}
