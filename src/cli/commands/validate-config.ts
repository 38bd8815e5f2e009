import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import {
  ConfigError,
  DEFAULT_CONFIG_FILE,
  formatProblem,
  loadConfig,
  type ConfigProblem,
} from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { BootError, loadBootFile } from '../../context/disclosure/boot.js';
import { PersonaError, loadPersona } from '../../context/disclosure/persona.js';
import { silentLogger } from '../../log/logger.js';
import { EXIT, PACKAGE_ROOT, type CliIO } from '../io.js';

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('validate-config')
    .description(
      'report every problem in a config file (with its path), including environment overrides and the files it names',
    )
    .argument('[file]', `config file (default: --config, else ${DEFAULT_CONFIG_FILE})`)
    .action(async (file: string | undefined, _opts: unknown, cmd: Command) => {
      const globalFile = cmd.optsWithGlobals<{ config?: string }>().config;
      const target =
        file ??
        globalFile ??
        (existsSync(path.join(io.cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined);
      let problems: ConfigProblem[];
      try {
        const { config } = loadConfig({ file: target, env: io.env, cwd: io.cwd, packageRoot: PACKAGE_ROOT });
        problems = await referencedFileProblems(config);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        problems = err.problems;
      }
      if (problems.length === 0) {
        io.stdout(`${target ?? 'built-in defaults'}: configuration is valid\n`);
        return done(EXIT.ok);
      }
      io.stderr(
        `${target ?? 'configuration'}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n` +
          `${problems.map(formatProblem).join('\n')}\n`,
      );
      done(EXIT.usage);
    });
}

/**
 * The files a valid configuration names must be usable too: the prompts readable, boot.yml well formed
 * (the seed's mode rules), the persona present. A daemon would otherwise find out at the first incident.
 */
export async function referencedFileProblems(config: Config): Promise<ConfigProblem[]> {
  const problems: ConfigProblem[] = [];
  for (const key of ['system_prompt_file', 'user_prompt_file'] as const) {
    await access(config[key]).catch(() =>
      problems.push({
        path: key,
        message: `${config[key]} cannot be read; point ${key} at an existing file`,
      }),
    );
  }
  try {
    await loadBootFile(config.boot_file);
  } catch (err) {
    if (!(err instanceof BootError)) throw err;
    problems.push({ path: 'boot_file', message: err.message });
  }
  try {
    await loadPersona({
      personasDir: config.personas_dir,
      persona: config.persona,
      viewDir: config.personas_dir,
      log: silentLogger(),
    });
  } catch (err) {
    if (!(err instanceof PersonaError)) throw err;
    problems.push({ path: 'persona', message: err.message });
  }
  return problems;
}
