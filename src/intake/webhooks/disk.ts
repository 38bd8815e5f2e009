import { createHash } from 'node:crypto';
import { closeSync, lstatSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { randomHex } from '../../util/random.js';
import {
  fileModeFor,
  fsyncDir,
  makeDirs,
  PUBLIC_DIR_MODE,
  PUBLIC_FILE_MODE,
  readRegularFileSync,
  replaceFileIn,
  writeFileAtomic,
  writeNewFileSynced,
} from '../../util/fs.js';
import { intakeDir, isPlainName } from '../../workspace/layout.js';

// What HTTP intake keeps on disk, under `<root>/.triage/intake/` (shared by replicas, kept across
// restarts, never looked at by the watcher): delivery keys, storm records, locks, temp folders. And
// the two files it writes into a workspace: incident.json and alerts.json. File calls are synchronous
// (a few microseconds each on a local disk, against tens of microseconds of CPU through `fs/promises`;
// see util/fs.ts); the fsyncs wait in the thread pool.

export type { AlertEntry, AlertsDoc } from './alerts-file.js';

export interface IntakePaths {
  root: string;
  base: string;
  keys: string;
  storms: string;
  locks: string;
  tmp: string;
}

export function intakePaths(root: string): IntakePaths {
  const base = intakeDir(root);
  return {
    root,
    base,
    keys: path.join(base, 'keys'),
    storms: path.join(base, 'storms'),
    locks: path.join(base, 'locks'),
    tmp: path.join(base, 'tmp'),
  };
}

/** File names for arbitrary keys: hex of their sha256 (fixed length, no path characters). */
export const hashName = (key: string): string => createHash('sha256').update(key).digest('hex').slice(0, 32);

/** What a delivery key points at. */
export interface KeyRecord {
  key: string;
  workspace: string;
  incidentId: string;
}

/**
 * Names of the workspaces intake makes (names.ts: letters, digits, `.`, `_`, `-`, not starting with a
 * dot). A record naming anything else (an edit, a damaged file) is not used as a path under the root.
 */
const isOwnFolder = (name: unknown): name is string => isPlainName(name, 200);

/**
 * Reads a key file; undefined when absent or unreadable (a torn write counts as absent), or when it
 * does not name one of intake's own workspaces.
 */
export async function readKey(paths: IntakePaths, key: string): Promise<KeyRecord | undefined> {
  try {
    const record = JSON.parse(
      readRegularFileSync(path.join(paths.keys, hashName(key))).toString('utf8'),
    ) as Partial<KeyRecord> | null;
    return record?.key === key && isOwnFolder(record.workspace) && typeof record.incidentId === 'string'
      ? (record as KeyRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Creates a key file exclusively (false when it exists). Durable once `fsyncDir(paths.keys)` ran. */
export async function createKey(paths: IntakePaths, record: KeyRecord): Promise<boolean> {
  let fd: number;
  try {
    const keyFile = path.join(paths.keys, hashName(record.key));
    fd = openSync(keyFile, 'wx', fileModeFor(keyFile));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeFileSync(fd, JSON.stringify(record));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Replaces a key file (an alias that a later incident takes over). */
export const replaceKey = (paths: IntakePaths, record: KeyRecord): Promise<void> =>
  writeFileAtomic(path.join(paths.keys, hashName(record.key)), JSON.stringify(record));

/** One incident of a storm key, and the group keys that joined it. */
export interface StormIncident {
  workspace: string;
  incidentId: string;
  createdAt: number;
  groups: string[];
  /** Its alerts all resolved, or it ended: new alerts of its groups open a new incident. */
  closed?: boolean;
}

export interface StormRecord {
  key: string;
  incidents: StormIncident[];
}

/** Whether `value` is a storm record's incident as writeStorm writes it. */
function isStormIncident(value: unknown): value is StormIncident {
  if (typeof value !== 'object' || value === null) return false;
  const i = value as Partial<StormIncident>;
  return (
    isOwnFolder(i.workspace) &&
    typeof i.incidentId === 'string' &&
    Number.isFinite(i.createdAt) &&
    Array.isArray(i.groups) &&
    i.groups.every((g) => typeof g === 'string') &&
    (i.closed === undefined || typeof i.closed === 'boolean')
  );
}

/**
 * The storm record of `key`: absent or torn, no incidents known; its incidents that are not as
 * writeStorm writes them (an edit, a damaged file) are left out, so their groups open new incidents
 * instead of failing every batch of the key.
 */
export async function readStorm(paths: IntakePaths, key: string): Promise<StormRecord> {
  try {
    const record = JSON.parse(
      readRegularFileSync(path.join(paths.storms, `${hashName(key)}.json`)).toString('utf8'),
    ) as Partial<StormRecord> | null;
    if (record?.key === key && Array.isArray(record.incidents))
      return { key, incidents: record.incidents.filter(isStormIncident) };
  } catch {
    // absent or torn: no incidents known for this key
  }
  return { key, incidents: [] };
}

/** Replaces a storm record (file fsynced; the caller fsyncs the folder once per batch). */
export async function writeStorm(paths: IntakePaths, record: StormRecord): Promise<void> {
  await replaceFileIn(paths.storms, `${hashName(record.key)}.json`, JSON.stringify(record));
}

/**
 * Writes a new workspace the way a careful producer does: every file into a temp folder inside the
 * root (same filesystem), fsynced, then one rename into place. The watcher sees a complete folder
 * or none. The caller fsyncs the root once for a batch of them.
 */
export async function createWorkspace(
  paths: IntakePaths,
  name: string,
  files: Readonly<Record<string, string>>,
): Promise<string> {
  const dest = path.join(paths.root, name);
  const tmp = path.join(paths.tmp, `${name}.${randomHex(4)}`);
  // Made under `.triage/intake`, moved out whole: the workspace's own modes, not the daemon's.
  makeDirs(paths.tmp);
  mkdirSync(tmp, PUBLIC_DIR_MODE);
  try {
    await Promise.all(
      Object.entries(files).map(async ([file, data]) => {
        await writeNewFileSynced(path.join(tmp, file), data, PUBLIC_FILE_MODE);
      }),
    );
    // An empty folder of that name would be replaced silently by rename: names carry a random part,
    // and an existing one is refused rather than overwritten.
    if (lstatSync(dest, { throwIfNoEntry: false }))
      throw new Error(`workspace folder ${dest} already exists`);
    renameSync(tmp, dest);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  return dest;
}

export { fsyncDir };
