import path from 'node:path';
import { writeFileAtomic } from '../util/fs.js';
import { ensureOwnDir } from '../util/safe-path.js';
import { OUTPUT_DIR, REPORT_REL, RUN_FILES, runDirRelative } from './layout.js';

// What an agent that writes no folder of the daemon's (an agent pod) returns: each file written where
// the agent would have written it itself, and only there: below output/ (the report) or its run's
// agent-notes/. Never through a link (every folder from the workspace down is checked, the file is
// replaced by a rename), each one whole or not at all.

/** A returned file the workspace does not take, and why (the path is not one the agent may write). */
export class NotAgentWritable extends Error {
  constructor(
    readonly rel: string,
    message: string,
  ) {
    super(message);
    this.name = 'NotAgentWritable';
  }
}

/** The folders of a workspace (relative) a run's agent writes: output/ and the run's agent-notes/. */
export const agentWritableDirs = (runId: string): string[] => [
  OUTPUT_DIR,
  `${runDirRelative(runId)}/${RUN_FILES.agentNotes}`,
];

/** What a returned file is, for the run's record: the report, a note, or something else in output/. */
export function returnedKind(rel: string, runId: string): 'report' | 'agent-notes' | 'output' {
  if (rel === REPORT_REL) return 'report';
  return rel.startsWith(`${runDirRelative(runId)}/`) ? 'agent-notes' : 'output';
}

/**
 * Writes a file the agent returned at `rel` (relative to the workspace, '/'-separated), only strictly
 * below one of its writable folders; throws NotAgentWritable for any other path, and UnsafePathError
 * when a folder on the way is a link.
 */
export async function writeReturnedFile(
  workspaceDir: string,
  runId: string,
  rel: string,
  data: Uint8Array,
): Promise<void> {
  const parts = rel.split('/');
  if (rel === '' || path.isAbsolute(rel) || parts.some((s) => s === '' || s === '.' || s === '..'))
    throw new NotAgentWritable(rel, `${JSON.stringify(rel)} is not a plain relative path`);
  const dir = agentWritableDirs(runId).find((d) => rel.startsWith(`${d}/`));
  if (!dir)
    throw new NotAgentWritable(
      rel,
      `${rel} is outside the folders the agent writes (${agentWritableDirs(runId).join(', ')})`,
    );
  const file = path.join(workspaceDir, ...parts);
  await ensureOwnDir(path.dirname(file), workspaceDir);
  await writeFileAtomic(file, data, 0o640, { createDir: false });
}
