// Which incident a name given by a person means: its workspace folder (what the API's {id} and the
// page's address hold) or its incidentId (what Slack, PagerDuty and webhooks show). Pure: the callers
// hand it the index's views (the daemon's, or one read from the workspaces by the CLI).

/** What the resolution needs of an incident. */
export interface Resolvable {
  folder: string;
  incidentId: string;
  /** Set on a copy refused as a duplicate of the incident with the same incidentId. */
  duplicateOf: string | null;
}

export type Resolution =
  | { kind: 'found'; folder: string; by: 'folder' | 'incidentId' }
  /** Several folders hold the incidentId and none stands out: the caller must name the folder. */
  | { kind: 'ambiguous'; folders: string[] }
  | { kind: 'unknown' };

/**
 * The incident `name` names: a folder of that name first; else the one incident with that incidentId,
 * or among several (a producer that reused an id, the copies refused as duplicates) the one that is not
 * a duplicate when exactly one is not.
 */
export function resolveIncident(views: Iterable<Resolvable>, name: string): Resolution {
  const withId: Resolvable[] = [];
  for (const view of views) {
    if (view.folder === name) return { kind: 'found', folder: name, by: 'folder' };
    if (view.incidentId === name) withId.push(view);
  }
  const originals = withId.filter((v) => v.duplicateOf === null);
  const only = withId.length === 1 ? withId[0] : originals.length === 1 ? originals[0] : undefined;
  if (only) return { kind: 'found', folder: only.folder, by: 'incidentId' };
  if (withId.length === 0) return { kind: 'unknown' };
  return { kind: 'ambiguous', folders: withId.map((v) => v.folder).sort() };
}

/** Folders listed in a message: the first few, then how many more. */
const FOLDERS_NAMED = 10;

/** Why `name` names no single incident under `root`, and what to give instead. */
export function resolutionProblem(
  resolution: Exclude<Resolution, { kind: 'found' }>,
  name: string,
  root: string,
): string {
  if (resolution.kind === 'unknown')
    return `no incident folder or incidentId ${JSON.stringify(name)} under ${root}: give the workspace folder's name (status lists them) or the incidentId a notification showed`;
  const { folders } = resolution;
  const named = folders.slice(0, FOLDERS_NAMED).join(', ');
  const more = folders.length > FOLDERS_NAMED ? ` and ${folders.length - FOLDERS_NAMED} more` : '';
  return `incidentId ${JSON.stringify(name)} is held by ${folders.length} incident folders under ${root} (${named}${more}): give the folder's name instead`;
}
