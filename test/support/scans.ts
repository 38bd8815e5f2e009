// The daemon's passes over the workspaces root, read from /metrics (`workspace_scans_total`): the
// positive marker a negative check waits on (no second run, no relabel) instead of a pause.
import { eventually } from './wait.js';

/** Completed passes over the root (start-up and rescans, either outcome) of the daemon serving on `port`. */
export async function workspaceScans(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return [...text.matchAll(/^triage_runner_workspace_scans_total\{outcome="\w+"\} (\d+)$/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

/** Resolves once the daemon on `port` has finished `count` more passes over the root than now. */
export async function afterScans(port: number, count: number, timeoutMs = 30_000): Promise<void> {
  const target = (await workspaceScans(port)) + count;
  await eventually(
    `${count} more workspace scans`,
    async () => (await workspaceScans(port)) >= target,
    timeoutMs,
  );
}
