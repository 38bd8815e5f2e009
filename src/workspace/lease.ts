import { inspectLock, tryLock, type FileLock, type LockHolder } from '../util/file-lock.js';
import { leasePath } from './layout.js';

// `.triage/lease`: the claim on an incident, an exclusive-file lock (src/util/file-lock.ts) whose holder
// is `<daemonId>:<pid>`. Renewed while the holder works; taken over only when stale or its holder died,
// so replicas sharing a volume run each incident once.

export interface LeaseInfo extends LockHolder {
  daemonId: string;
}

export interface LeaseIdentity {
  daemonId: string;
  pid?: number;
  host?: string;
}

export interface LeaseOptions {
  ttlMs: number;
  now?: () => number;
  /** Whether a pid on this host is alive (and started at `startTime`, when known); injected for tests. */
  isPidAlive?: (pid: number, startTime?: string | null) => boolean;
  /** Sync the lease file (default true); false for a lease held only for one short operation. */
  durable?: boolean;
}

/** A lease this process holds. */
export type Lease = FileLock & { readonly info: LeaseInfo };

export type AcquireResult =
  | { acquired: true; lease: Lease; tookOver?: LeaseInfo & { ageMs: number } }
  | { acquired: false; holder?: LeaseInfo; ageMs?: number };

export const holderId = (id: LeaseIdentity): string => `${id.daemonId}:${id.pid ?? process.pid}`;

const lockOptions = (identity: LeaseIdentity, options: LeaseOptions) => ({
  staleMs: options.ttlMs,
  ...(options.now ? { now: options.now } : {}),
  ...(options.isPidAlive ? { isAlive: options.isPidAlive } : {}),
  ...(options.durable === false ? { durable: false } : {}),
  identity: {
    holder: holderId(identity),
    daemonId: identity.daemonId,
    ...(identity.pid !== undefined ? { pid: identity.pid } : {}),
    ...(identity.host !== undefined ? { host: identity.host } : {}),
  },
  // `.triage/` is made when missing, but a workspace folder the producer removed is never re-created.
  makeParent: true,
});

/** Tries to take the lease of a workspace: create it, or take it over when stale or its holder died. */
export async function acquireLease(
  workspaceDir: string,
  identity: LeaseIdentity,
  options: LeaseOptions,
): Promise<AcquireResult> {
  const got = await tryLock(leasePath(workspaceDir), lockOptions(identity, options));
  if (!got.acquired) return got as AcquireResult;
  return {
    acquired: true,
    lease: got.lock as Lease,
    ...(got.tookOver ? { tookOver: got.tookOver as LeaseInfo & { ageMs: number } } : {}),
  };
}

/** What holds the lease now, and whether it counts as stale, without touching it. */
export async function inspectLease(
  workspaceDir: string,
  identity: LeaseIdentity,
  options: LeaseOptions,
): Promise<{ holder?: LeaseInfo; stale: boolean } | undefined> {
  return (await inspectLock(leasePath(workspaceDir), lockOptions(identity, options))) as
    { holder?: LeaseInfo; stale: boolean } | undefined;
}
