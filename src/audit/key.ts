import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { auditKey as secretAuditKey } from '../config/secrets.js';
import { auditKeyPath, TRIAGE_DIR } from '../workspace/layout.js';
import { dirModeFor, unlinkQuietly } from '../util/fs.js';
import { randomHex } from '../util/random.js';
import { UsageError } from '../util/errors.js';

// The audit chain's key. `audit.hmac_secret` names one among the secrets; without it the daemon makes
// a key on its first start and keeps it with its own state, `<workspaces_root>/.triage/audit.key` (or
// `audit.key_file`), mode 0600: never in an incident workspace, which an agent can read. Replicas
// sharing the root share the key: it is written whole into a temp file and hard-linked into place,
// which fails when another replica's is there first, and every process then uses the one in place.

/** A key made here: 32 random bytes, as hex. */
const KEY_BYTES = 32;
/** A key file written by hand must hold at least this many characters. */
const MIN_KEY_CHARS = 32;
const MAX_KEY_FILE_BYTES = 4096;

export type AuditKeySource =
  | { kind: 'secret'; key: string; name: string }
  | {
      kind: 'file';
      key: string;
      file: string;
      /** This process made the file (the first start on this root). */
      created: boolean;
      /** Others than its owner may read it (an operator's chmod, a copy). */
      exposed: boolean;
    }
  /** No key to use: a verifier without access to it, or a root that does not exist yet. */
  | { kind: 'none'; file: string; why: string };

/** A key that is configured or present but cannot be used; commands end with exit 2 and this message. */
export class AuditKeyError extends UsageError {}

/** Where the key file is: audit.key_file, or `.triage/audit.key` under the workspaces root. */
export function auditKeyFile(config: Pick<Config, 'audit' | 'workspaces_root'>): string {
  return config.audit.key_file ?? auditKeyPath(config.workspaces_root);
}

/** A key file under the workspaces root but outside its `.triage/` would sit in (or be taken for) a workspace. */
export function keyFileProblem(config: Pick<Config, 'audit' | 'workspaces_root'>): string | undefined {
  const file = config.audit.key_file;
  if (file === undefined) return undefined;
  const rel = path.relative(path.resolve(config.workspaces_root), path.resolve(file));
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  if (rel.split(path.sep)[0] === TRIAGE_DIR) return undefined;
  return `${file} is inside the workspaces root ${config.workspaces_root} but not in its ${TRIAGE_DIR}/ folder, so an incident workspace (which an agent can read) would hold the audit key: put it under ${path.join(config.workspaces_root, TRIAGE_DIR)}/ or outside the root, or remove the key to use ${auditKeyPath(config.workspaces_root)}`;
}

/** How a source is named in messages. */
export function describeKeySource(source: AuditKeySource): string {
  if (source.kind === 'secret') return `the secret ${source.name} (audit.hmac_secret)`;
  return `the key file ${source.file}`;
}

type FileRead =
  { kind: 'ok'; key: string; exposed: boolean } | { kind: 'absent' } | { kind: 'unreadable'; code: string };

const codeOf = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? 'error';

/** Reads a key file, never through a symbolic link; a file that is there but not a key is an error. */
export function readKeyFile(file: string): FileRead {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = codeOf(err);
    if (code === 'ENOENT') return { kind: 'absent' };
    if (code === 'ELOOP')
      throw new AuditKeyError(
        `the audit key file ${file} is a symbolic link, which is never followed: replace it with the key file itself (mode 0600)`,
      );
    return { kind: 'unreadable', code };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_KEY_FILE_BYTES)
      throw new AuditKeyError(
        `the audit key file ${file} is not a key (${st.isFile() ? `${st.size} bytes, over ${MAX_KEY_FILE_BYTES}` : 'not a regular file'}): restore the key the chains were written with`,
      );
    const buffer = Buffer.alloc(st.size);
    const bytes = st.size === 0 ? 0 : readSync(fd, buffer, 0, st.size, 0);
    const key = buffer.toString('utf8', 0, bytes).trim();
    if (key.length < MIN_KEY_CHARS)
      throw new AuditKeyError(
        `the audit key file ${file} holds ${key.length} characters, fewer than the ${MIN_KEY_CHARS} of a key: restore the key the chains were written with (or remove the file to make a new one; chains written with the old key then verify only with it)`,
      );
    return { kind: 'ok', key, exposed: (st.mode & 0o077) !== 0 };
  } finally {
    closeSync(fd);
  }
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // some filesystems refuse to fsync a folder: the link is made, only its durability is unproven
  }
}

/**
 * Makes the key file once for everyone sharing it: a temp file with the whole key, linked to the key's
 * name (a link fails with EEXIST when another process made it first). True when this call made it.
 */
function createKeyFile(file: string): boolean {
  const tmp = `${file}.${process.pid}.${randomHex(6)}.tmp`;
  const fd = openKeyTemp(tmp, file);
  try {
    writeSync(fd, `${randomBytes(KEY_BYTES).toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if (codeOf(err) === 'EEXIST') return false;
    throw new AuditKeyError(
      `the audit key file ${file} cannot be made (${codeOf(err)}${codeOf(err) === 'EPERM' ? ': the filesystem has no hard links' : ''}): make it yourself (openssl rand -hex 32 > ${file}; chmod 600 ${file}), or set audit.key_file or audit.hmac_secret`,
    );
  } finally {
    unlinkQuietly(tmp);
    syncDir(path.dirname(file));
  }
}

/** Opens the key's temp file; a folder the daemon's user cannot write is said, with what to do. */
function openKeyTemp(tmp: string, file: string): number {
  try {
    return openSync(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
  } catch (err) {
    throw new AuditKeyError(
      `the audit key file ${file} cannot be made (${codeOf(err)}): let the daemon's user write ${path.dirname(file)}, or set audit.key_file or audit.hmac_secret`,
    );
  }
}

/** The folder of the key file: `.triage/` of an existing root (never the root itself), or audit.key_file's. */
function ensureKeyDir(config: Pick<Config, 'audit' | 'workspaces_root'>, file: string): string | undefined {
  try {
    if (config.audit.key_file !== undefined) mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    else mkdirSync(path.dirname(file), dirModeFor(path.dirname(file)));
    return undefined;
  } catch (err) {
    const code = codeOf(err);
    if (code === 'EEXIST') return undefined;
    if (code === 'ENOENT' && config.audit.key_file === undefined)
      return `the workspaces root ${config.workspaces_root} does not exist, so no key is kept there yet`;
    throw new AuditKeyError(
      `the folder of the audit key file ${file} cannot be made (${code}): create it, or set audit.key_file`,
    );
  }
}

/**
 * How a command takes the key. `make`: it writes chains and may be the first on the root (the daemon,
 * replay): the key is made when absent. `use`: it writes lines into chains a daemon made (retry,
 * notify): a key that is there must be readable, an absent one is not made. `verify`: it only reads;
 * without the key it says so.
 */
export type KeyMode = 'make' | 'use' | 'verify';

/**
 * The key the audit chain is written or verified with. A configured secret that is not set, a key
 * file a writer cannot read, or one that is not a key is an AuditKeyError: a keyed chain must never
 * silently go on unkeyed.
 */
export function loadAuditKey(
  config: Pick<Config, 'audit' | 'workspaces_root'>,
  secrets: Record<string, string>,
  mode: KeyMode,
): AuditKeySource {
  const name = config.audit.hmac_secret;
  if (name !== undefined) {
    try {
      return { kind: 'secret', key: secretAuditKey(config, secrets) as string, name };
    } catch (err) {
      throw new AuditKeyError((err as Error).message);
    }
  }
  const file = auditKeyFile(config);
  let read = readKeyFile(file);
  let created = false;
  if (read.kind === 'absent' && mode === 'make') {
    const why = ensureKeyDir(config, file);
    if (why !== undefined) return { kind: 'none', file, why };
    created = createKeyFile(file);
    read = readKeyFile(file);
  }
  if (read.kind === 'ok') return { kind: 'file', key: read.key, file, created, exposed: read.exposed };
  if (read.kind === 'absent')
    return { kind: 'none', file, why: `${file} does not exist (the daemon makes it on its first start)` };
  const why = `${file} cannot be read (${read.code}): it belongs to the daemon's user`;
  if (mode !== 'verify')
    throw new AuditKeyError(
      `${why}; run as that user, or fix the file's owner (mode 0600), so that the audit chain is keyed`,
    );
  return { kind: 'none', file, why };
}
