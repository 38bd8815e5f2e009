import type { Command } from 'commander';
import type { CliIO } from '../io.js';

/** A command module registers one top-level command; `done` sets the process exit code. */
export interface CommandModule {
  register(program: Command, io: CliIO, done: (code: number) => void): void;
}

/**
 * One top-level command: its name and summary (for `--help`), and its module, loaded only when the
 * command runs — so `--version`, `--help` and a light command never load what another one needs.
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<CommandModule>;
}

/** Every command of the CLI, in the order `--help` lists them. */
export const COMMANDS: CommandEntry[] = [
  {
    name: 'daemon',
    summary: 'run the service: watch the workspaces root and investigate each incident once',
    load: () => import('./daemon.js'),
  },
  {
    name: 'replay',
    summary: 're-run a saved incident, a run bundle or an example into a new workspace',
    load: () => import('./replay.js'),
  },
  {
    name: 'context',
    summary: 'print the exact prompt that would be sent for a workspace, with a per-section token table',
    load: () => import('./context.js'),
  },
  {
    name: 'validate-config',
    summary: 'report every problem in a configuration file',
    load: () => import('./validate-config.js'),
  },
  { name: 'skills', summary: 'show or refresh the skills cache', load: () => import('./skills.js') },
  { name: 'audit', summary: "inspect a workspace's audit trail", load: () => import('./audit.js') },
  {
    name: 'compare',
    summary: 'run a saved incident for every agent × variant and tabulate the results',
    load: () => import('./compare.js'),
  },
  {
    name: 'eval',
    summary: 'run scored eval cases on frozen clusters and write a scorecard',
    load: () => import('./eval.js'),
  },
  {
    name: 'evidence',
    summary: "check a recorded run's report against the cluster output it cites, offline",
    load: () => import('./evidence.js'),
  },
  {
    name: 'status',
    summary: 'one line per incident and totals by state (from the daemon, or the workspaces)',
    load: () => import('./status.js'),
  },
  {
    name: 'retry',
    summary: 're-queue a failed, interrupted, rejected or resolved incident in its own folder',
    load: () => import('./retry.js'),
  },
  {
    name: 'notify',
    summary: "(re-)deliver a workspace's latest result to the configured sinks",
    load: () => import('./notify.js'),
  },
];
