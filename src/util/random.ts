import { randomBytes, randomFillSync } from 'node:crypto';

// The random part of a file or folder name (temporary files, set-aside lock files, run and daemon ids,
// a new incident folder's suffix): drawn from a pool filled a few KiB at a time, as
// `crypto.randomUUID` does, instead of one `randomBytes` call each, which costs 4–9 µs on a 2-core
// host whatever its size (a webhook alert made about three, a new incident two more). Never for
// secrets: run tokens come from `randomBytes` directly and never sit in a shared pool.

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/** `bytes` random bytes as lowercase hex, two characters per byte. */
export function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES) return randomBytes(bytes).toString('hex');
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}
