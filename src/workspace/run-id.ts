import { randomHex } from '../util/random.js';
import { compactStamp } from '../util/time.js';

// Run ids name run folders (`.triage/runs/<run id>`): the daemon's runs and replays make them alike.

/** A sortable run id: UTC time to the second plus randomness, safe as a folder name. */
export function newRunId(now: number = Date.now()): string {
  return `${compactStamp(now)}-${randomHex(3)}`;
}
