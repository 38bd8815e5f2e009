// What creating files costs in the folder a benchmark writes to. The daemon creates a few dozen files
// and folders per run and intake one or more per alert, so a bench's figures depend on the
// filesystem under it as well as on the code. This host's root ext4 took from 25 to 420 µs per new
// file, slowest just after many files were deleted; a freshly made ext4 volume on the same disk took
// 16 to 32 µs, tmpfs 12 to 15 µs (docs/performance.md, "The filesystem under the figures"). Benches
// print it beside their table.
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

export interface FolderCost {
  /** Microseconds per new file (create, write 64 bytes, close), one at a time. */
  fileUs: number;
  /** Microseconds per new folder. */
  mkdirUs: number;
}

/** Creates `count` files and `count` folders in a temporary folder under `dir`, timed, then removes them. */
export function folderCost(dir: string, count = 500): FolderCost {
  const scratch = mkdtempSync(path.join(dir, '.folder-cost-'));
  try {
    const data = 'x'.repeat(64);
    let t0 = performance.now();
    for (let i = 0; i < count; i++) {
      const fd = openSync(path.join(scratch, `f${i}`), 'wx');
      writeSync(fd, data);
      closeSync(fd);
    }
    const fileUs = ((performance.now() - t0) * 1000) / count;
    t0 = performance.now();
    for (let i = 0; i < count; i++) mkdirSync(path.join(scratch, `d${i}`));
    const mkdirUs = ((performance.now() - t0) * 1000) / count;
    return { fileUs, mkdirUs };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One line for a bench's output: where it wrote and what a new file and folder cost there. */
export const describeFolderCost = (dir: string, cost: FolderCost): string =>
  `folder ${dir}: ${cost.fileUs.toFixed(0)} µs per new file, ${cost.mkdirUs.toFixed(0)} µs per new folder (set TMPDIR to bench another filesystem)`;
