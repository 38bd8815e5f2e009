import { configKeys, envName } from './keys.js';
import { didYouMean, type ConfigProblem, type Env } from './load.js';
import type { Config } from './schema.js';

const PREFIX = 'TRIAGE_RUNNER_';

/**
 * TRIAGE_RUNNER_* variables that set no configuration key: a misspelled one would otherwise be ignored
 * silently. Variables a `secrets:` entry reads are not configuration keys and are not reported.
 */
export function unknownEnvWarnings(env: Env, config: Config): ConfigProblem[] {
  const known = configKeys().map((k) => envName(k.path).slice(PREFIX.length));
  const knownSet = new Set(known);
  const secretVars = new Set(Object.values(config.secrets).map((s) => s.env));
  const warnings: ConfigProblem[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith(PREFIX) || env[name] === undefined || secretVars.has(name)) continue;
    const rest = name.slice(PREFIX.length);
    if (knownSet.has(rest)) continue;
    const hint = didYouMean(rest, known);
    warnings.push({
      path: name,
      message: `is not a configuration variable and is ignored${hint ? `; did you mean ${PREFIX}${hint}?` : ''}`,
      source: 'environment',
    });
  }
  return warnings;
}
