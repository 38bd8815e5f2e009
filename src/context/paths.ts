// How host paths appear to the agent. A run's agent sees some host folders at other paths (container
// mounts); text the daemon produced on the host (the triage script's output and products) names the
// host paths, so it is rewritten before the agent reads it. One mapping list, built from the run's
// mounts, is used for every such text: the mounts and the rewritten paths cannot disagree.

/** A host folder (or file) and the path the agent sees it at. */
export interface PathMapping {
  host: string;
  agent: string;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A function rewriting every host path under a mapped folder to the agent's path: the longest mapped
 * prefix wins, in one pass (a rewritten path is never rewritten again), and a prefix matches only as
 * whole path components (`/srv/ws` does not match inside `/srv/ws2` or `/x/srv/ws`). Identity
 * mappings are dropped; with none left the text is returned as it is.
 */
export function hostToAgent(mappings: readonly PathMapping[]): (text: string) => string {
  const useful = mappings
    .filter((m) => m.host !== m.agent && m.host.startsWith('/') && m.host.length > 1)
    .map((m) => ({ host: m.host.replace(/\/+$/, ''), agent: m.agent.replace(/\/+$/, '') || '/' }))
    .sort((a, b) => b.host.length - a.host.length);
  if (useful.length === 0) return (text) => text;
  const byHost = new Map<string, string>();
  for (const m of useful) if (!byHost.has(m.host)) byHost.set(m.host, m.agent);
  const pattern = new RegExp(
    `(?<![A-Za-z0-9._~/-])(?:${[...byHost.keys()].map(escape).join('|')})(?![A-Za-z0-9._~-])`,
    'g',
  );
  return (text) => text.replace(pattern, (host) => byHost.get(host) ?? host);
}
