import { readFileSync } from 'node:fs';
import type { Config } from './schema.js';
import type { Env } from './load.js';

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

/** Secrets the daemon itself uses (HTTP auth, webhook signatures): never handed to an agent. */
export const DAEMON_SECRETS: readonly string[] = ['HTTP_TOKEN', 'PAGERDUTY_WEBHOOK_SECRET'];

/** The secrets an agent may receive: all resolved values except the daemon's own. */
export function agentSecrets(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([name]) => !DAEMON_SECRETS.includes(name)));
}
