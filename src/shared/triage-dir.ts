// The names of the daemon's own folder in each workspace and in the workspaces root, and of the run
// bundles' folder in it: the two names of the workspace's layout held below src/workspace/
// (src/workspace/layout.ts holds every other and hands these on), because util's file modes keep
// everything under the one the daemon's user's only and let the agent pass through both.

/** The daemon's folder inside each workspace and inside the workspaces root. */
export const TRIAGE_DIR = '.triage';

/** The run bundles' folder inside a workspace's TRIAGE_DIR. */
export const RUNS_DIR = 'runs';
