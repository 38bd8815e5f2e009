import type { Command } from 'commander';
import type { CliIO } from '../io.js';
import * as validateConfig from './validate-config.js';

/** A command module registers one top-level command; `done` sets the process exit code. */
export interface CommandModule {
  register(program: Command, io: CliIO, done: (code: number) => void): void;
}

/** Every command of the CLI, in the order `--help` lists them. */
export const COMMANDS: CommandModule[] = [validateConfig];
