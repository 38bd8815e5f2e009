// The daemon's passes over the workspaces root, read from its metrics (`workspace_scans_total`): the
// positive marker a negative check waits on (no second run, nothing written) instead of a pause.
import { eventually } from './wait.js';

/** A daemon's metrics: the HTTP port it serves /metrics on, or the in-process daemon itself. */
export type MetricsSource = number | { metrics: { render(): Promise<string> } };

const exposition = async (source: MetricsSource): Promise<string> =>
  typeof source === 'number'
    ? (await fetch(`http://127.0.0.1:${source}/metrics`)).text()
    : source.metrics.render();

/** Completed passes over the root (start-up and rescans, either outcome). */
export async function workspaceScans(source: MetricsSource): Promise<number> {
  return [
    ...(await exposition(source)).matchAll(/^triage_runner_workspace_scans_total\{outcome="\w+"\} (\d+)$/gm),
  ].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** Resolves once the daemon has finished `count` more passes over the root than now. */
export async function afterScans(source: MetricsSource, count: number, timeoutMs = 30_000): Promise<void> {
  const target = (await workspaceScans(source)) + count;
  await eventually(
    `${count} more workspace scans`,
    async () => (await workspaceScans(source)) >= target,
    timeoutMs,
  );
}
