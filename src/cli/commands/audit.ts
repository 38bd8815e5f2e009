import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { auditLogPath } from '../../workspace/layout.js';
import { verifyWorkspaceAudit } from '../../daemon/verify.js';
import { auditKey, resolveSecrets } from '../../config/secrets.js';
import { commandConfig } from '../config.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner audit verify <workspace>`: checks the workspace's hash-chained audit log.

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  const audit = program
    .command('audit')
    .description("inspect a workspace's audit trail")
    // Without a subcommand commander would print help and exit 0; this is a usage error (exit 2).
    .action(() => {
      throw new CliExit(EXIT.usage, 'audit: give a subcommand: triage-runner audit verify <workspace>');
    });
  audit
    .command('verify')
    .description(
      'check that .triage/audit.jsonl has not been edited, truncated, or had lines deleted, inserted or reordered',
    )
    .argument('<workspace>', 'incident workspace folder (holds .triage/audit.jsonl)')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .action(async (workspace: string, _opts: unknown, cmd: Command) => {
      // A keyed chain (audit.hmac_secret) is checked with the key from the configuration's secrets.
      const { config } = commandConfig(io, cmd.optsWithGlobals<{ config?: string }>().config);
      let key: string | undefined;
      try {
        key = auditKey(config, resolveSecrets(config, io.env).values);
      } catch (err) {
        throw new CliExit(EXIT.usage, (err as Error).message);
      }
      done(await verifyWorkspace(path.resolve(io.cwd, workspace), io, key));
    });
}

/** Prints one line and returns the exit code: 0 intact, 1 altered, 2 not a workspace with an audit log. */
export async function verifyWorkspace(dir: string, io: CliIO, key?: string): Promise<number> {
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw new CliExit(EXIT.usage, `${dir} is not a folder; give an incident workspace folder`);
  const file = auditLogPath(dir);
  const hasLog = await stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!hasLog) {
    throw new CliExit(
      EXIT.usage,
      `${file} does not exist: ${dir} is not a workspace the daemon has processed (or its audit log was deleted)`,
    );
  }
  const result = await verifyWorkspaceAudit(dir, key ? { key } : {});
  if (result.ok) {
    const entries = `${result.entries} entr${result.entries === 1 ? 'y' : 'ies'}`;
    const bundles = `${result.bundles} run bundle${result.bundles === 1 ? '' : 's'}`;
    const chain = result.keyed ? 'keyed hash chain verified with the audit key' : 'hash chain verified';
    io.stdout(
      `${file}: intact (${entries}, ${chain}; ${bundles}, the report and state.json match what it recorded)\n`,
    );
    return EXIT.ok;
  }
  io.stderr(`${file}:${result.line}: ${result.problem}\n`);
  return EXIT.failed;
}
