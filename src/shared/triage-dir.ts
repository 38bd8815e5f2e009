import path from 'node:path';

// The names of the daemon's own folder in each workspace and in the workspaces root, and of the run
// bundles' folder in it: the two names of the workspace's layout held below src/workspace/
// (src/workspace/layout.ts holds every other and hands these on), because util's file modes keep
// everything under the one the daemon's user's only and let the agent pass through both.

/** The daemon's folder inside each workspace and inside the workspaces root. */
export const TRIAGE_DIR = '.triage';

/** The run bundles' folder inside a workspace's TRIAGE_DIR. */
export const RUNS_DIR = 'runs';

/** Whether `dir` is a `.triage/` folder or the `runs/` folder of one (the folders others pass through). */
export function isTriageOrRunsDir(dir: string): boolean {
  const name = path.basename(dir);
  return name === TRIAGE_DIR || (name === RUNS_DIR && path.basename(path.dirname(dir)) === TRIAGE_DIR);
}
