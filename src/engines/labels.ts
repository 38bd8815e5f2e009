// Label keys every engine puts on a run, so that runs can be listed and reconciled after a restart.

export const LABEL_PREFIX = 'io.triage-runner/';

/** Labels carrying the daemon, incident, run and agent ids. */
export const RUN_LABELS = {
  daemon: `${LABEL_PREFIX}daemon`,
  incident: `${LABEL_PREFIX}incident`,
  run: `${LABEL_PREFIX}run`,
  agent: `${LABEL_PREFIX}agent`,
} as const;

/** Raised by `Engine.wait` when the run outlives the deadline; callers branch on `timedOut`, not the text. */
export class WaitTimeoutError extends Error {
  readonly timedOut = true;
  constructor(
    readonly id: string,
    readonly timeoutMs: number,
  ) {
    super(`run ${id} still running after waiting ${timeoutMs} ms`);
    this.name = 'WaitTimeoutError';
  }
}

export const isWaitTimeout = (err: unknown): err is WaitTimeoutError =>
  err instanceof Error && (err as { timedOut?: boolean }).timedOut === true;

const SOCKET_PATH = /(^|\/)(docker|podman|containerd|cri-dockerd)\.sock$/;
// Folders whose usual content is an engine socket.
const SOCKET_DIRS = ['/run', '/var/run', '/run/podman', '/var/run/docker', '/run/containerd', '/run/docker'];

/** Refuses a mount that would hand the agent the container engine (docker.sock, podman.sock, …). */
export function assertNoEngineSocket(mounts: { source: string; target: string }[]): void {
  for (const m of mounts) {
    for (const p of [m.source, m.target]) {
      if (SOCKET_PATH.test(p) || SOCKET_DIRS.includes(p.replace(/\/+$/, ''))) {
        throw new Error(
          `mount ${m.source} -> ${m.target} would expose a container engine socket to the agent; ` +
            'engine sockets are never mounted into agent runs: remove that mount',
        );
      }
    }
  }
}
