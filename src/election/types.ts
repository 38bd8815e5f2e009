// The Lease as the election sees it, and the small store interface over the coordination API (the
// kubernetes module implements it with @kubernetes/client-node; unit tests may fake it).

/** The fields of a coordination.k8s.io/v1 Lease the election reads and writes. */
export interface LeaseRecord {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  /** The object's resourceVersion: an update carrying a stale one is refused (409). */
  resourceVersion?: string;
}

/** A write lost a race: another replica changed the Lease first (HTTP 409) or created it first. */
export class LeaseConflictError extends Error {
  override readonly name = 'LeaseConflictError';
}

export interface LeaseStore {
  /** Where the Lease lives, for messages. */
  readonly where: string;
  /** The Lease, or undefined when it does not exist. */
  get(): Promise<LeaseRecord | undefined>;
  /** Creates it; LeaseConflictError when it exists already. */
  create(record: LeaseRecord): Promise<LeaseRecord>;
  /** Replaces it, guarded by `record.resourceVersion`; LeaseConflictError when that is stale. */
  update(record: LeaseRecord): Promise<LeaseRecord>;
}

export type LeaderState = 'standby' | 'leader' | 'stopped';
