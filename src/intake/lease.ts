import { hostname } from 'node:os';
import { link, mkdir, open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { TRIAGE_DIR } from './state.js';
import { pidAlive } from '../util/process.js';

// `.triage/lease`: the claim on an incident. Created with O_EXCL; renewed (mtime) while the holder
// works; taken over only when stale, by renaming it away first so that of two replicas racing for
// the same stale lease exactly one wins (the rename of a given file succeeds once).

export const LEASE_FILE = 'lease';

export interface LeaseInfo {
  holder: string;
  daemonId: string;
  pid: number;
  host: string;
  acquiredAt: string;
}

export interface LeaseIdentity {
  daemonId: string;
  pid?: number;
  host?: string;
}

export interface LeaseOptions {
  ttlMs: number;
  now?: () => number;
  /** Whether a pid on this host is alive; injected for tests. */
  isPidAlive?: (pid: number) => boolean;
}

export type AcquireResult =
  | { acquired: true; lease: Lease; tookOver?: LeaseInfo & { ageMs: number } }
  | { acquired: false; holder?: LeaseInfo; ageMs?: number };

export const leasePath = (workspaceDir: string): string => path.join(workspaceDir, TRIAGE_DIR, LEASE_FILE);

export { pidAlive };

export const holderId = (id: LeaseIdentity): string => `${id.daemonId}:${id.pid ?? process.pid}`;

/** A lease this process holds. */
export class Lease {
  constructor(
    readonly file: string,
    readonly info: LeaseInfo,
    private readonly now: () => number,
  ) {}

  /** Pushes the lease's mtime forward; false when the lease is no longer ours (taken over or removed). */
  async renew(): Promise<boolean> {
    const current = await readLease(this.file);
    if (current?.holder !== this.info.holder || current.acquiredAt !== this.info.acquiredAt) return false;
    const t = new Date(this.now());
    await utimes(this.file, t, t);
    return true;
  }

  /** Removes the lease if it is still ours. */
  async release(): Promise<void> {
    const current = await readLease(this.file);
    if (current?.holder === this.info.holder && current.acquiredAt === this.info.acquiredAt) {
      await unlink(this.file).catch(() => undefined);
    }
  }
}

export async function readLease(file: string): Promise<LeaseInfo | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as LeaseInfo;
  } catch {
    return undefined;
  }
}

/** Tries to take the lease of a workspace: create it exclusively, or take it over when stale or its holder died. */
export async function acquireLease(
  workspaceDir: string,
  identity: LeaseIdentity,
  options: LeaseOptions,
): Promise<AcquireResult> {
  const file = leasePath(workspaceDir);
  const now = options.now ?? Date.now;
  const alive = options.isPidAlive ?? pidAlive;
  const host = identity.host ?? hostname();
  const info: LeaseInfo = {
    holder: holderId(identity),
    daemonId: identity.daemonId,
    pid: identity.pid ?? process.pid,
    host,
    acquiredAt: new Date(now()).toISOString(),
  };
  if (await createExclusive(file, info)) return { acquired: true, lease: new Lease(file, info, now) };

  const seen = await stat(file).catch(() => undefined);
  if (!seen) {
    // Released between our attempt and the stat: one more exclusive try.
    return (await createExclusive(file, info))
      ? { acquired: true, lease: new Lease(file, info, now) }
      : { acquired: false };
  }
  const current = await readLease(file);
  const ageMs = now() - seen.mtimeMs;
  const leftoverOfOurs = current?.holder === info.holder;
  const holderDead = current !== undefined && current.host === host && !leftoverOfOurs && !alive(current.pid);
  const stale =
    ageMs > options.ttlMs || holderDead || leftoverOfOurs || (current === undefined && ageMs > 1000);
  if (!stale) return { acquired: false, holder: current, ageMs };

  // Rename-based takeover: only one replica's rename of this exact file succeeds.
  const aside = `${file}.stale.${info.holder.replace(/[^A-Za-z0-9._-]/g, '_')}`;
  try {
    await rename(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return { acquired: false, holder: await readLease(file) };
    throw err;
  }
  const moved = await stat(aside).catch(() => undefined);
  if (moved && moved.mtimeMs !== seen.mtimeMs && !holderDead) {
    // Renewed between our look and the rename: it is alive after all; put it back if nobody else took the slot.
    await link(aside, file).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
    return { acquired: false, holder: current, ageMs: now() - moved.mtimeMs };
  }
  await unlink(aside).catch(() => undefined);
  if (!(await createExclusive(file, info))) return { acquired: false, holder: await readLease(file) };
  return {
    acquired: true,
    lease: new Lease(file, info, now),
    tookOver: current ? { ...current, ageMs } : undefined,
  };
}

/** What holds the lease now, and whether it counts as stale, without touching it. */
export async function inspectLease(
  workspaceDir: string,
  identity: LeaseIdentity,
  options: LeaseOptions,
): Promise<{ holder?: LeaseInfo; stale: boolean } | undefined> {
  const file = leasePath(workspaceDir);
  const seen = await stat(file).catch(() => undefined);
  if (!seen) return undefined;
  const current = await readLease(file);
  const now = options.now ?? Date.now;
  const alive = options.isPidAlive ?? pidAlive;
  const host = identity.host ?? hostname();
  const holderDead =
    current !== undefined &&
    current.host === host &&
    current.holder !== holderId(identity) &&
    !alive(current.pid);
  return {
    holder: current,
    stale: now() - seen.mtimeMs > options.ttlMs || holderDead || current?.holder === holderId(identity),
  };
}

async function createExclusive(file: string, info: LeaseInfo): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'wx', 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'ENOENT') {
      await mkdir(path.dirname(file), { recursive: true });
      return createExclusive(file, info);
    }
    throw err;
  }
  try {
    await handle.writeFile(JSON.stringify(info));
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}
