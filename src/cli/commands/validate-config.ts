import type { Command } from 'commander';
import { DEFAULT_CONFIG_FILE } from '../../config/load.js';
import { checkConfig, formatCheck } from '../config-check.js';
import { EXIT, type CliIO } from '../io.js';

// `triage-runner validate-config [FILE]`: every problem at once (schema, environment, the files the
// configuration names), then warnings (unknown TRIAGE_RUNNER_* variables, unset secrets). Exit 2 on a
// problem; warnings alone exit 0. The daemon and `context` refuse to start on the same problems.

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('validate-config')
    .description(
      'report every problem in a config file (with its path), including environment overrides and the files it names; ' +
        'relative paths resolve against the config file’s folder (environment and flags: the working directory; defaults: the package root)',
    )
    .argument('[file]', `config file (default: --config, else ${DEFAULT_CONFIG_FILE})`)
    .action(async (file: string | undefined, _opts: unknown, cmd: Command) => {
      const target = file ?? cmd.optsWithGlobals<{ config?: string }>().config;
      const check = await checkConfig({ io, ...(target ? { file: target } : {}) });
      if (check.problems.length > 0) {
        io.stderr(formatCheck(check));
        return done(EXIT.usage);
      }
      if (check.warnings.length > 0) io.stderr(formatCheck(check));
      io.stdout(`${check.target}: configuration is valid\n`);
      done(EXIT.ok);
    });
}
