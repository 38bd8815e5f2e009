import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs';
import { copyFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from '../shared/zod.js';
import { readOwnFileBelow, readUpTo } from '../util/safe-path.js';
import { describeIssues, incidentSchema } from './incident-schema.js';
import { INCIDENT_FILE, PERMISSIONS_FILE } from './layout.js';

// The incident record: `incident.json` as the producer wrote it. The daemon reads it exactly once per
// judgement (no symlinks followed, bounded, strict UTF-8) and turns every way it can be wrong into a
// reason a producer can act on; status and the past-investigations index read what they can of any
// file (readIncidentLoosely).

/** The incident as the producer wrote it (nightcrier's shape); unknown fields are kept. */
export type Incident = z.infer<typeof incidentSchema>;

/** A validated incident folder, as read once from disk. */
export interface Workspace {
  /** Absolute path of `<workspaces_root>/<folder>`. */
  dir: string;
  /** The folder name. */
  name: string;
  incident: Incident;
  /** The exact bytes of incident.json (preloaded verbatim, hashed for replay). */
  incidentText: string;
  /** The exact bytes of incident_cluster_permissions.json, when present and valid JSON. */
  permissionsText?: string;
}

const RETRY_HINT = 'fix the file and save it again to retry';

export type ReadResult =
  | { kind: 'ok'; workspace: Workspace; sha256: string; mtimeMs: number }
  /** No incident.json (yet): nothing to do. */
  | { kind: 'missing' }
  /** Empty or not (yet) complete JSON: may be a write in progress, judged once the file settles. */
  | { kind: 'incomplete'; reason: string; sha256: string; mtimeMs: number }
  /** Wrong in a way more bytes will not fix. */
  | { kind: 'invalid'; reason: string; sha256?: string; mtimeMs?: number };

export interface ReadOptions {
  maxBytes: number;
}

export const sha256Hex = (data: Uint8Array | string): string =>
  createHash('sha256').update(data).digest('hex');

/** Why a folder name under the root cannot be a workspace, or undefined when it can. */
export async function folderEscapes(root: string, name: string): Promise<string | undefined> {
  if (
    name === '' ||
    name === '.' ||
    name === '..' ||
    name.includes('/') ||
    name.includes('\\') ||
    name.includes('\0')
  ) {
    return `folder name ${JSON.stringify(name)} is not a single path segment under ${root}: rename the folder to retry`;
  }
  const dir = path.join(root, name);
  // A real directory directly under the root cannot escape it; only a symlink needs resolving.
  let isDir = false;
  try {
    isDir = lstatSync(dir).isDirectory();
  } catch {
    // resolved below, which names the problem
  }
  if (isDir) return undefined;
  let real: string;
  let realRoot: string;
  try {
    [real, realRoot] = await Promise.all([realpath(dir), realpath(root)]);
  } catch (err) {
    return `folder ${dir} cannot be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'}): recreate the folder to retry`;
  }
  const rel = path.relative(realRoot, real);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    return `folder ${dir} resolves to ${real}, outside the workspaces root ${realRoot}: move the incident into a real folder under the root to retry`;
  }
  return undefined;
}

/** Reads `<dir>/incident.json` (+ optional permissions file) once; never follows a symlink. */
export async function readWorkspace(dir: string, options: ReadOptions): Promise<ReadResult> {
  const file = path.join(dir, INCIDENT_FILE);
  const bytes = await readBounded(file, options.maxBytes);
  if (bytes.kind !== 'ok') return bytes;
  const { data, mtimeMs } = bytes;
  const sha256 = sha256Hex(data);
  if (data.length === 0) {
    return {
      kind: 'incomplete',
      reason: `incident.json in ${dir} is empty: write the incident and save it again to retry`,
      sha256,
      mtimeMs,
    };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return {
      kind: 'invalid',
      reason: `incident.json in ${dir} is not valid UTF-8 text: save it as UTF-8 to retry`,
      sha256,
      mtimeMs,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return {
      kind: 'incomplete',
      reason: `incident.json in ${dir} is not valid JSON (${jsonErrorLocation(text, err)}): ${RETRY_HINT}`,
      sha256,
      mtimeMs,
    };
  }
  const parsed = incidentSchema.safeParse(json);
  if (!parsed.success) {
    return {
      kind: 'invalid',
      reason: `incident.json in ${dir} does not match the incident schema (${describeIssues(parsed.error.issues)}): ${RETRY_HINT}`,
      sha256,
      mtimeMs,
    };
  }
  const workspace: Workspace = {
    dir,
    name: path.basename(dir),
    incident: parsed.data,
    incidentText: text,
  };
  const permissions = await readBounded(path.join(dir, PERMISSIONS_FILE), options.maxBytes);
  if (permissions.kind === 'ok') {
    const permText = decodeJson(permissions.data);
    if (permText !== undefined) workspace.permissionsText = permText;
  }
  return { kind: 'ok', workspace, sha256, mtimeMs };
}

type Bounded =
  { kind: 'ok'; data: Buffer; mtimeMs: number } | { kind: 'missing' } | { kind: 'invalid'; reason: string };

/** lstat first for clear reasons, then open with O_NOFOLLOW (races end in ELOOP), fstat, read at most max+1 bytes. */
async function readBounded(file: string, maxBytes: number): Promise<Bounded> {
  const name = path.basename(file);
  const dir = path.dirname(file);
  try {
    const info = lstatSync(file);
    if (info.isSymbolicLink())
      return {
        kind: 'invalid',
        reason: `${name} in ${dir} is a symbolic link, which is never followed: replace it with a regular file to retry`,
      };
    if (info.isDirectory())
      return {
        kind: 'invalid',
        reason: `${name} in ${dir} is a directory: replace it with a regular file to retry`,
      };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  // Synchronous calls: a few microseconds each on a local disk (see util/fs.ts).
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP')
      return {
        kind: 'invalid',
        reason: `${name} in ${dir} is a symbolic link, which is never followed: replace it with a regular file to retry`,
      };
    throw err;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile())
      return {
        kind: 'invalid',
        reason: `${name} in ${dir} is not a regular file: replace it with a regular file to retry`,
      };
    // Another name for the same file may live outside the workspace, where it can be edited after the
    // daemon read it (or point into a folder the producer should not reach).
    if (info.nlink > 1)
      return {
        kind: 'invalid',
        reason: `${name} in ${dir} has a hard link count of ${info.nlink}: another name for the same file may edit it from outside the workspace; copy the file instead of hard-linking it (cp, or write and rename) to retry`,
      };
    if (info.size > maxBytes) {
      return {
        kind: 'invalid',
        reason: `${name} in ${dir} is ${info.size} bytes, over the ${maxBytes}-byte limit (intake.max_incident_bytes): shrink it and save it again to retry`,
      };
    }
    const data = readUpTo(fd, Math.min(info.size, maxBytes) + 1, info.size);
    if (data.length > maxBytes) {
      return {
        kind: 'invalid',
        reason: `${name} in ${dir} grew over the ${maxBytes}-byte limit (intake.max_incident_bytes) while being read: shrink it and save it again to retry`,
      };
    }
    return { kind: 'ok', data, mtimeMs: info.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

function decodeJson(data: Buffer): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(data);
    JSON.parse(text);
    return text;
  } catch {
    return undefined;
  }
}

/** "line L, column C" of a JSON.parse error, computed from the position V8 reports. */
export function jsonErrorLocation(text: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const match = /position (\d+)/.exec(message);
  const position = match?.[1] !== undefined ? Number(match[1]) : text.length;
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `line ${line}, column ${column}${match ? '' : ', unexpected end of input'}`;
}

/** An incident.json larger than this is not read loosely (the daemon's own bound is intake.max_incident_bytes). */
export const INCIDENT_LOOSE_MAX_BYTES = 1 << 20;

/**
 * incident.json of `dir` as its text and a JSON object, read below `base` without following a link and
 * within INCIDENT_LOOSE_MAX_BYTES, without validating it: status shows what it can of any file, the
 * daemon validates it before it runs. Undefined when absent, refused, or not a JSON object.
 */
export async function readIncidentLoosely(
  base: string,
  dir: string,
): Promise<{ text: string; doc: Record<string, unknown> } | undefined> {
  const read = await readOwnFileBelow(base, path.join(dir, INCIDENT_FILE), INCIDENT_LOOSE_MAX_BYTES).catch(
    () => undefined,
  );
  if (read?.kind !== 'ok') return undefined;
  try {
    const doc: unknown = JSON.parse(read.text);
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
    return { text: read.text, doc: doc as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** incident_cluster_permissions.json's text below `base` (bounded, never through a link), when readable. */
export async function readPermissionsText(base: string, dir: string): Promise<string | undefined> {
  const read = await readOwnFileBelow(base, path.join(dir, PERMISSIONS_FILE), INCIDENT_LOOSE_MAX_BYTES).catch(
    () => undefined,
  );
  return read?.kind === 'ok' ? read.text : undefined;
}

/**
 * Copies incident.json (and the permissions file, when there is one) byte for byte from one workspace
 * into another (a replay's new workspace).
 */
export async function copyIncidentFiles(fromDir: string, toDir: string): Promise<void> {
  await copyFile(path.join(fromDir, INCIDENT_FILE), path.join(toDir, INCIDENT_FILE));
  const permissions = path.join(fromDir, PERMISSIONS_FILE);
  const isFile = await stat(permissions).then(
    (s) => s.isFile(),
    () => false,
  );
  if (isFile) await copyFile(permissions, path.join(toDir, PERMISSIONS_FILE));
}
