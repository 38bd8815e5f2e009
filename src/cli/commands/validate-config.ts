import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig } from '../../config/load.js';
import { formatProblem } from '../../config/load.js';
import { EXIT, PACKAGE_ROOT, type CliIO } from '../io.js';

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('validate-config')
    .description('report every problem in a config file (with its path), including environment overrides')
    .argument('[file]', `config file (default: --config, else ${DEFAULT_CONFIG_FILE})`)
    .action((file: string | undefined, _opts: unknown, cmd: Command) => {
      const globalFile = cmd.optsWithGlobals<{ config?: string }>().config;
      const target =
        file ??
        globalFile ??
        (existsSync(path.join(io.cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined);
      try {
        loadConfig({ file: target, env: io.env, cwd: io.cwd, packageRoot: PACKAGE_ROOT });
        io.stdout(`${target ?? 'built-in defaults'}: configuration is valid\n`);
        done(EXIT.ok);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        io.stderr(
          `${target ?? 'configuration'}: ${err.problems.length} problem${err.problems.length === 1 ? '' : 's'}\n` +
            `${err.problems.map(formatProblem).join('\n')}\n`,
        );
        done(EXIT.usage);
      }
    });
}
