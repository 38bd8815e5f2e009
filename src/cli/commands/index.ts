import type { Command } from 'commander';
import type { CliIO } from '../io.js';
import * as validateConfig from './validate-config.js';
import * as audit from './audit.js';
import * as replay from './replay.js';
import * as compare from './compare.js';
import * as evalCommand from './eval.js';
import * as context from './context.js';
import * as skills from './skills.js';
import * as daemon from './daemon.js';
import * as notify from './notify.js';

/** A command module registers one top-level command; `done` sets the process exit code. */
export interface CommandModule {
  register(program: Command, io: CliIO, done: (code: number) => void): void;
}

/** Every command of the CLI, in the order `--help` lists them. */
export const COMMANDS: CommandModule[] = [
  daemon,
  replay,
  context,
  validateConfig,
  skills,
  audit,
  compare,
  evalCommand,
  notify,
];
