import { readFileSync } from 'node:fs';
import type { Config } from './schema.js';
import type { Env } from './load.js';
import { prometheusSecretNames } from './prometheus-schema.js';
import { weakSecretMessage } from '../log/redact.js';

/** A configured secret that could not be read; the message names the source, never the value. */
export interface SecretProblem {
  name: string;
  message: string;
}

export interface ResolvedSecrets {
  /** Variable name → value, for the agent's environment. Never log this object. */
  values: Record<string, string>;
  problems: SecretProblem[];
}

/** Reads every configured secret from its env var or file. Missing env vars are simply absent. */
export function resolveSecrets(config: Config, env: Env = process.env): ResolvedSecrets {
  const values: Record<string, string> = {};
  const problems: SecretProblem[] = [];
  for (const [name, source] of Object.entries(config.secrets)) {
    if (source.env !== undefined) {
      const value = env[source.env];
      if (value) values[name] = value;
      continue;
    }
    if (source.file === undefined) continue;
    try {
      const value = readFileSync(source.file, 'utf8').trim();
      if (value) values[name] = value;
      else problems.push({ name, message: `secret file ${source.file} for ${name} is empty` });
    } catch (err) {
      problems.push({
        name,
        message: `secret file ${source.file} for ${name} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}); mount it or fix secrets.${name}.file`,
      });
    }
  }
  return { values, problems };
}

/**
 * The audit key named by `audit.hmac_secret`, or undefined when the chain is not keyed. A key that is
 * named but cannot be read is an error: a keyed log must never silently continue unkeyed.
 */
export function auditKey(config: Pick<Config, 'audit'>, values: Record<string, string>): string | undefined {
  const name = config.audit.hmac_secret;
  if (name === undefined) return undefined;
  const value = values[name];
  if (!value)
    throw new Error(
      `audit.hmac_secret names the secret ${name}, which is not set: declare it under secrets: and set its variable or file (the audit chain is keyed with it)`,
    );
  return value;
}

/** Secrets the daemon itself uses (HTTP auth, webhook signatures): never handed to an agent. */
export const DAEMON_SECRETS: readonly string[] = [
  'HTTP_TOKEN',
  'PAGERDUTY_WEBHOOK_SECRET',
  'SLACK_SIGNING_SECRET',
];

/**
 * Names of the configured secrets that are the daemon's own: its HTTP and webhook secrets, the notify
 * sinks' credentials, the audit key, the Prometheus endpoints' credentials.
 */
export function daemonSecretNames(
  config: Pick<Config, 'notify' | 'audit'> & Partial<Pick<Config, 'prometheus' | 'clusters'>>,
): Set<string> {
  const names = new Set<string>([...DAEMON_SECRETS, ...prometheusSecretNames(config)]);
  for (const sink of config.notify.sinks) {
    names.add(sink.secret);
    if (sink.notes) names.add(sink.notes.secret);
  }
  if (config.audit.hmac_secret) names.add(config.audit.hmac_secret);
  return names;
}

/** The secrets an agent may receive: every resolved value except the daemon's own. */
export function agentSecrets(
  config: Pick<Config, 'notify' | 'audit'> & Partial<Pick<Config, 'prometheus' | 'clusters'>>,
  values: Record<string, string>,
): Record<string, string> {
  const own = daemonSecretNames(config);
  return Object.fromEntries(Object.entries(values).filter(([name]) => !own.has(name)));
}

/**
 * Logs what is wrong with the resolved secrets: one unavailable (its variable unset, its file
 * unreadable) and one too weak to redact by value. Each line names the secret under `secretName`: a
 * secret's name is not secret, and under a key such as `secret` the logger would redact it.
 */
export function logSecretProblems(
  log: { warn(fields: object, msg: string): void },
  resolved: Pick<ResolvedSecrets, 'problems'>,
  unredacted: readonly { name: string; reason: string }[] = [],
): void {
  for (const problem of resolved.problems)
    log.warn({ secretName: problem.name, problem: problem.message }, 'secret not available');
  for (const weak of unredacted)
    log.warn(
      { secretName: weak.name, problem: weakSecretMessage(weak.name, weak.reason) },
      'secret too weak to redact',
    );
}
