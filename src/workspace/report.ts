import { lstat } from 'node:fs/promises';
import { readOwnFileBelow, type BoundedRead, UnsafePathError } from '../util/safe-path.js';
import { readNoFollow } from './files.js';
import { REPORT_REL, reportPath } from './layout.js';

// The agent's report, `output/investigation.md`: written by the agent (so never trusted to be a file,
// small, or reached through real folders), scrubbed and checked by the run (src/audit/report.ts), read
// back here by whoever shows or sends it.

/** The report below `base` (default: the workspace), refused with the reason when larger than `maxBytes`. */
export const readReport = (
  workspaceDir: string,
  maxBytes: number,
  base = workspaceDir,
): Promise<BoundedRead> => readOwnFileBelow(base, reportPath(workspaceDir), maxBytes);

/**
 * The report's first `maxBytes` (whole characters), with its size on disk; undefined when absent, or
 * when a link or a non-file stands at its place or on its way.
 */
export async function readReportHead(
  workspaceDir: string,
  maxBytes: number,
): Promise<{ text: string; bytes: number; truncated: boolean } | undefined> {
  try {
    return await readNoFollow(workspaceDir, REPORT_REL, maxBytes);
  } catch (err) {
    if (err instanceof UnsafePathError) return undefined;
    throw err;
  }
}

/** Whether the report exists as a regular file (a link at its place does not count). */
export const reportIsFile = (workspaceDir: string): Promise<boolean> =>
  lstat(reportPath(workspaceDir)).then(
    (s) => s.isFile(),
    () => false,
  );
