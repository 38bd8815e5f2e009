import { hostname } from 'node:os';
import { randomHex } from '../util/random.js';
import { compactStamp } from '../util/time.js';

/** A sortable run id: UTC time to the second plus randomness, safe as a folder name. */
export function newRunId(now: number = Date.now()): string {
  return `${compactStamp(now)}-${randomHex(3)}`;
}

/** Identifies one daemon process among replicas; the lease holder id adds the pid. */
export function newDaemonId(host: string = hostname()): string {
  return `${host.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomHex(3)}`;
}
