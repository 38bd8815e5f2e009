import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import {
  AuditKeyError,
  describeKeySource,
  loadAuditKey,
  readKeyFile,
  type AuditKeySource,
} from '../../audit/key.js';
import { auditLogPath } from '../../workspace/layout.js';
import { verifyWorkspaceAudit, type WorkspaceVerifyResult } from '../../replay/verify.js';
import { resolveSecrets } from '../../config/secrets.js';
import { commandConfig } from '../config.js';
import { CliExit, EXIT, type CliIO } from '../io.js';

// `triage-runner audit verify <workspace>`: checks the workspace's hash-chained audit log, with the
// audit key found as the daemon finds it (audit.hmac_secret, else the key file kept with its state).

interface VerifyFlags {
  keyFile?: string;
  requireKey?: boolean;
}

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
      'check that .triage/audit.jsonl has not been edited, truncated, or had lines deleted, inserted, reordered or appended',
    )
    .argument('<workspace>', 'incident workspace folder (holds .triage/audit.jsonl)')
    .option(
      '--key-file <file>',
      'verify with this audit key file (default: the secret audit.hmac_secret names, else audit.key_file or <workspaces_root>/.triage/audit.key)',
    )
    .option(
      '--require-key',
      'fail (exit 1) unless the whole chain is keyed and its HMACs were checked with the key (an old unkeyed chain passes otherwise, with a note)',
    )
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .action(async (workspace: string, opts: VerifyFlags, cmd: Command) => {
      const { config } = commandConfig(io, cmd.optsWithGlobals<{ config?: string }>().config);
      let source: AuditKeySource;
      try {
        source = opts.keyFile
          ? keyFromFlag(path.resolve(io.cwd, opts.keyFile))
          : loadAuditKey(config, resolveSecrets(config, io.env).values, 'verify');
      } catch (err) {
        if (err instanceof AuditKeyError) throw new CliExit(EXIT.usage, err.message);
        throw err;
      }
      done(await verifyWorkspace(path.resolve(io.cwd, workspace), io, source, opts.requireKey === true));
    });
}

function keyFromFlag(file: string): AuditKeySource {
  const read = readKeyFile(file);
  if (read.kind === 'ok') return { kind: 'file', key: read.key, file, created: false, exposed: read.exposed };
  throw new CliExit(
    EXIT.usage,
    `--key-file ${file} cannot be read (${read.kind === 'absent' ? 'ENOENT' : read.code}): give the audit key file the chain was written with`,
  );
}

/** The summary of an intact workspace; only its keying part differs from case to case. */
function intactLine(
  file: string,
  result: Extract<WorkspaceVerifyResult, { ok: true }>,
  chain: string,
): string {
  const entries = `${result.entries} entr${result.entries === 1 ? 'y' : 'ies'}`;
  const bundles = `${result.bundles} run bundle${result.bundles === 1 ? '' : 's'}`;
  return `${file}: intact (${entries}, ${chain}; ${bundles}, the report and state.json match what it recorded)\n`;
}

const FORGER = 'anyone who can write the file can add lines with recomputed hashes';

/**
 * Prints what was verified and returns the exit code: 0 intact, 1 altered (or not keyed with
 * `requireKey`), 2 not a workspace with an audit log, or a keyed chain and no key to check it with.
 */
export async function verifyWorkspace(
  dir: string,
  io: CliIO,
  source: AuditKeySource,
  requireKey = false,
): Promise<number> {
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
  const result = await verifyWorkspaceAudit(dir, source.kind === 'none' ? {} : { key: source.key });
  if (!result.ok) {
    io.stderr(`${file}:${result.line}: ${result.problem}\n`);
    return EXIT.failed;
  }
  const keying = result.keyed;
  if (!keying) {
    io.stdout(intactLine(file, result, 'UNKEYED hash chain verified'));
    io.stderr(
      `${file}: the chain is unkeyed (no line carries an HMAC: written without an audit key, before chains were keyed by default), and an unkeyed chain cannot detect an appended line: ${FORGER}\n`,
    );
    return requireKey ? EXIT.failed : EXIT.ok;
  }
  if (!keying.checked) {
    const why = source.kind === 'none' ? source.why : 'no key';
    io.stderr(
      `${file}: hash chain intact (${result.entries} entries), but its HMACs were NOT checked: the chain is keyed and no audit key is available here (${why}). Without the key this check cannot detect an appended line (${FORGER}): run as the daemon's user, or give the key with --key-file\n`,
    );
    return EXIT.usage;
  }
  const from =
    keying.from > 1
      ? `, keyed from line ${keying.from} (the lines before it were written before the chain was keyed)`
      : '';
  io.stdout(intactLine(file, result, `keyed hash chain verified with ${describeKeySource(source)}${from}`));
  return keying.from > 1 && requireKey ? EXIT.failed : EXIT.ok;
}
