import { hostname } from 'node:os';
import { randomHex } from '../util/random.js';

export { newRunId } from '../workspace/run-id.js';

/** Identifies one daemon process among replicas; the lease holder id adds the pid. */
export function newDaemonId(host: string = hostname()): string {
  return `${host.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomHex(3)}`;
}
