import { existsSync } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { AUTH_SECRETS } from '../agents/shared/auth.js';
import {
  DEFAULT_CONFIG_FILE,
  formatProblem,
  inspectConfig,
  PACKAGE_ROOT,
  resolveSecrets,
  unknownEnvWarnings,
  type Config,
  type ConfigInspection,
  type ConfigProblem,
  type RawConfig,
} from '../config/index.js';
import { keyFileProblem } from '../audit/key.js';
import { clusterFileProblems } from '../clusters/check.js';
import { clusterRegistry } from '../clusters/registry.js';
import { BootError, loadBootFile } from '../context/disclosure/boot.js';
import { PersonaError, loadPersona } from '../context/disclosure/persona.js';
import { ToolPolicyError, loadToolPolicy } from '../kubectl/policy/policy.js';
import { DAEMON_SECRETS } from '../config/secrets.js';
import { prometheusSecretNames } from '../config/prometheus-schema.js';
import { endpointFindings } from '../prometheus/check.js';
import { configuredEndpoints } from '../prometheus/endpoint.js';
import { isLoopbackHost, weakTokenProblem } from '../server/exposure.js';
import { weakSecretMessage, weakSecretReason } from '../log/redact.js';
import { CliExit, EXIT, type CliIO } from './io.js';

// One check of a configuration, shared by `validate-config` (which reports it) and by the commands
// that must not start on a configuration it rejects (`daemon`, `context`): the schema, the
// environment, the files the configuration names, and the secrets the agent needs. Problems stop a
// command (exit 2); warnings are printed and the command goes on.

export interface ConfigCheck {
  /** What was checked: the config file, or "built-in defaults". */
  target: string;
  file?: string;
  /** Best-effort configuration (defaults stand in for broken keys); use it only when problems is empty. */
  config: Config;
  problems: ConfigProblem[];
  warnings: ConfigProblem[];
}

export interface CheckOptions {
  io: CliIO;
  /** The config file; default configs/triage-runner.yaml under the working directory when present. */
  file?: string;
  flags?: RawConfig;
}

/** Checks everything at once: a broken key does not hide the problems of the files the others name. */
export async function checkConfig(options: CheckOptions): Promise<ConfigCheck> {
  const { io } = options;
  const file =
    options.file ?? (existsSync(path.join(io.cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined);
  const inspection = inspectConfig({
    ...(file ? { file } : {}),
    env: io.env,
    flags: options.flags ?? {},
    cwd: io.cwd,
    packageRoot: PACKAGE_ROOT,
  });
  const { config } = inspection;
  const prometheus = prometheusFindings(config, io.env);
  const problems = [
    ...inspection.problems,
    ...(await referencedFileProblems(inspection)),
    ...exposedTokenProblems(config, io.env),
    ...auditKeyFileProblems(config),
    ...prometheus.problems,
  ];
  const warnings = [
    ...unknownEnvWarnings(io.env, config),
    ...secretWarnings(config, inspection, io.env),
    ...prometheus.warnings,
  ];
  return {
    target: inspection.file ?? 'built-in defaults',
    ...(inspection.file ? { file: inspection.file } : {}),
    config,
    problems,
    warnings,
  };
}

/** The report validate-config prints; the same lines end `daemon` and `context` on a problem. */
export function formatCheck(check: ConfigCheck): string {
  const lines: string[] = [];
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  if (check.problems.length > 0) {
    lines.push(
      `${check.target}: ${count(check.problems.length, 'problem')}`,
      ...check.problems.map(formatProblem),
    );
  }
  if (check.warnings.length > 0) {
    lines.push(
      `${check.target}: ${count(check.warnings.length, 'warning')}`,
      ...check.warnings.map(formatProblem),
    );
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/**
 * Loads and checks the configuration for a command that must not start on a rejected one: problems
 * end the command with exit 2 and the validate-config report; warnings go to stderr.
 */
export async function checkedConfig(
  io: CliIO,
  file: string | undefined,
  flags: RawConfig = {},
): Promise<{ config: Config; file?: string }> {
  const check = await checkConfig({ io, ...(file ? { file } : {}), flags });
  if (check.problems.length > 0) {
    throw new CliExit(
      EXIT.usage,
      `${formatCheck(check)}Fix the configuration and run \`triage-runner validate-config\` to check it.`,
    );
  }
  if (check.warnings.length > 0) io.stderr(formatCheck(check));
  return { config: check.config, ...(check.file ? { file: check.file } : {}) };
}

/**
 * The files a configuration names must be usable: the prompts readable, boot.yml well formed (the
 * mode rules) and present when set explicitly, the persona there. Keys whose written value had a
 * problem are skipped (their default stands in and is not what the user meant).
 */
export async function referencedFileProblems(inspection: ConfigInspection): Promise<ConfigProblem[]> {
  const { config, replaced } = inspection;
  const problems: ConfigProblem[] = [];
  for (const key of ['system_prompt_file', 'user_prompt_file'] as const) {
    if (replaced.has(key)) continue;
    await access(config[key]).catch(() =>
      problems.push({
        path: key,
        message: `${config[key]} cannot be read; point ${key} at an existing file`,
      }),
    );
  }
  if (!replaced.has('boot_file')) {
    const isDefault = config.boot_file === path.join(PACKAGE_ROOT, 'configs', 'boot.yml');
    if (!isDefault && !existsSync(config.boot_file)) {
      problems.push({
        path: 'boot_file',
        message: `${config.boot_file} does not exist; point boot_file at a boot.yml, or remove the key to use the shipped one`,
      });
    } else {
      try {
        await loadBootFile(config.boot_file);
      } catch (err) {
        if (!(err instanceof BootError)) throw err;
        problems.push({ path: 'boot_file', message: err.message });
      }
    }
  }
  if (!replaced.has('persona') && !replaced.has('personas_dir')) {
    try {
      await loadPersona({
        personasDir: config.personas_dir,
        persona: config.persona,
        viewDir: config.personas_dir,
        log: { warn: () => undefined },
      });
    } catch (err) {
      problems.push({
        path: 'persona',
        message: err instanceof PersonaError ? err.message : `cannot be loaded: ${(err as Error).message}`,
      });
    }
    // The persona's tool policy: what the agent CLI and the kubectl guard enforce.
    await loadToolPolicy(config.personas_dir, config.persona).catch((err: unknown) =>
      problems.push({
        path: 'persona',
        message:
          err instanceof ToolPolicyError
            ? err.message
            : `tool policy cannot be loaded: ${(err as Error).message}`,
      }),
    );
  }
  // Each cluster registry entry's kubeconfig: readable, and holding the context it names.
  if (config.clusters && !replaced.has('clusters'))
    problems.push(...(await clusterFileProblems(clusterRegistry(config).listClusters())));
  return problems;
}

/** Each Prometheus endpoint's secrets and TLS material (src/prometheus/check.ts); an endpoint with a schema problem is not in `config`. */
function prometheusFindings(
  config: Config,
  env: CliIO['env'],
): { problems: ConfigProblem[]; warnings: ConfigProblem[] } {
  const endpoints = configuredEndpoints(config, resolveSecrets(config, env).values);
  return endpointFindings(endpoints, (cluster) =>
    config.clusters ? `clusters.${cluster}.prometheus` : 'prometheus',
  );
}

/** audit.key_file inside an incident workspace (where an agent can read it) is a problem. */
function auditKeyFileProblems(config: Config): ConfigProblem[] {
  const problem = keyFileProblem(config);
  return problem ? [{ path: 'audit.key_file', message: problem }] : [];
}

/**
 * An HTTP_TOKEN too short for a listener other machines reach is a problem, not a warning: the daemon
 * refuses to start with it. (An unset one is a warning: the variable may be set where the daemon runs.)
 */
export function exposedTokenProblems(config: Config, env: CliIO['env']): ConfigProblem[] {
  if (config.http.port === 0) return [];
  const token = resolveSecrets(config, env).values.HTTP_TOKEN;
  const problem = token === undefined ? undefined : weakTokenProblem(config.http.host, token);
  return problem ? [{ path: 'secrets.HTTP_TOKEN', message: problem }] : [];
}

/**
 * Secrets whose variable is unset or whose file cannot be read: a warning naming the variable and who
 * needs it. An agent's key is reported when the configured agent has none of its keys.
 */
export function secretWarnings(
  config: Config,
  inspection: ConfigInspection,
  env: CliIO['env'],
): ConfigProblem[] {
  const providers = { gooseProvider: config.providers.goose_provider ?? env.GOOSE_PROVIDER };
  const { values, problems } = resolveSecrets(config, env);
  const uses = (name: string) =>
    Object.entries(AUTH_SECRETS)
      .filter(([, secrets]) => secrets(providers).includes(name))
      .map(([id]) => id);
  const agentKeys = AUTH_SECRETS[config.agent.name](providers);
  const agentHasKey = agentKeys.some((k) => values[k]);
  const explicit = (name: string) =>
    [inspection.layers.file, inspection.layers.env, inspection.layers.flags].some(
      (layer) => (layer.secrets as RawConfig | undefined)?.[name] !== undefined,
    );
  const warnings: ConfigProblem[] = [];
  // The Prometheus endpoints' secrets are reported with the endpoint that names them.
  const prometheus = new Set(prometheusSecretNames(config));
  for (const [name, source] of Object.entries(config.secrets)) {
    if (source.env === undefined || values[name] || prometheus.has(name)) continue;
    if (DAEMON_SECRETS.includes(name)) {
      // The daemon's own: HTTP_TOKEN is needed only when the server listens beyond loopback.
      if (name === 'HTTP_TOKEN' && config.http.port !== 0 && !isLoopbackHost(config.http.host))
        warnings.push({
          path: `secrets.${name}`,
          message: `environment variable ${source.env} is not set; http.host ${config.http.host} is not loopback, so the daemon refuses to start without it`,
        });
      continue;
    }
    const users = uses(name);
    const neededNow = users.includes(config.agent.name) && !agentHasKey;
    // Another agent's key is only needed by a replay with --agent; a secret no agent reads (a sink's
    // token) was configured for a reason and is reported when it was set up explicitly.
    if (!neededNow && (users.length > 0 || !explicit(name))) continue;
    const others = agentKeys.filter((k) => k !== name);
    const who = neededNow
      ? `agent.name ${config.agent.name} needs it${others.length > 0 ? ` (or ${others.join(', ')})` : ''}: its runs will fail to authenticate`
      : 'no agent reads it; what refers to it gets nothing';
    warnings.push({
      path: `secrets.${name}`,
      message: `environment variable ${source.env} is not set; ${who}`,
    });
  }
  for (const p of problems) warnings.push({ path: `secrets.${p.name}`, message: p.message });
  for (const [name, value] of Object.entries(values)) {
    const weak = weakSecretReason(value);
    if (weak !== undefined)
      warnings.push({ path: `secrets.${name}`, message: weakSecretMessage(name, weak) });
  }
  return warnings;
}
