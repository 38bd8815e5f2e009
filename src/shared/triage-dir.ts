// The name of the daemon's own folder in each workspace and in the workspaces root. It is the one name
// of the workspace's layout below src/workspace/ (src/workspace/layout.ts holds every other and hands
// this one on): util's file modes keep everything under it the daemon's user's only.

/** The daemon's folder inside each workspace and inside the workspaces root. */
export const TRIAGE_DIR = '.triage';
