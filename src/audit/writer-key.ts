import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { loadAuditKey, type KeyMode } from './key.js';

// The audit key of a command that writes audit lines: made where the daemon keeps it by the daemon and
// replay (`make`), found there by retry and notify (`use`), so that every line of a chain is keyed with
// the same key.

/** The key to write with; a key that is configured but cannot be used throws AuditKeyError (a UsageError). */
export function writerAuditKey(
  config: Pick<Config, 'audit' | 'workspaces_root'>,
  secrets: Record<string, string>,
  log: Pick<Logger, 'info' | 'warn'>,
  mode: Exclude<KeyMode, 'verify'>,
): string | undefined {
  const source = loadAuditKey(config, secrets, mode);
  if (source.kind === 'none') {
    const meta = { file: source.file, why: source.why };
    const message =
      'no audit key: the audit lines this process writes are unkeyed, and an unkeyed chain cannot detect an appended line';
    // A daemon makes the key on its first start: retry and notify meet none only on a root no daemon ran on.
    if (mode === 'make') log.warn(meta, message);
    else log.info(meta, message);
    return undefined;
  }
  if (source.kind === 'file' && source.created)
    log.info(
      { file: source.file },
      'audit key made: every audit chain is keyed with it (keep it, mode 0600)',
    );
  if (source.kind === 'file' && source.exposed)
    log.warn(
      { file: source.file },
      'the audit key file can be read by others than its owner: anyone who reads it can forge audit lines; chmod 600 it',
    );
  return source.key;
}
