import type { EngineName } from '../config/schema.js';

// Where an agent runs. Engines know nothing about agents: they run a command with mounts, env,
// stdin and labels, stream its output, and report how it ended.

export interface Mount {
  /** Host path (docker/process) or a path inside the shared workspaces volume (kubernetes). */
  source: string;
  /** Path the agent sees. */
  target: string;
  readOnly: boolean;
}

export interface RunSpec {
  runId: string;
  incidentId: string;
  /** Labels identify the run for listing and reconciliation: daemon, incident, run and agent ids. */
  labels: Record<string, string>;
  image: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Passed to the agent but never recorded or logged. */
  secretEnv: Record<string, string>;
  stdin: string;
  workdir: string;
  mounts: Mount[];
  /** Writable tmpfs mounts (container paths), e.g. HOME and /tmp. */
  tmpfs: string[];
  /** Wall-clock limit the engine itself may enforce (kubernetes: the Job's activeDeadlineSeconds). */
  timeoutMs?: number;
  /** Called with output as it arrives. */
  onStdout: (chunk: Buffer) => void;
  onStderr: (chunk: Buffer) => void;
  /**
   * Optional: a host folder where the engine may keep per-run state (the process engine writes
   * `agent.pid` there so a restarted daemon can find the process). The run pipeline passes the bundle dir.
   */
  stateDir?: string;
}

export interface RunHandle {
  engine: EngineName;
  /** Container id, pid, or Job name. */
  id: string;
  runId: string;
}

export interface RunExit {
  exitCode: number | null;
  signal: string | null;
  /** The engine killed it for memory. */
  oomKilled: boolean;
  /** Engine-level failure to report (e.g. image missing). */
  error?: string;
}

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL';

/** A run the engine knows about, found by label (for reconciliation after a daemon restart). */
export interface RunInfo {
  handle: RunHandle;
  labels: Record<string, string>;
  running: boolean;
  /** When the engine created the run, if it reports it (the start-up sweep spares very young runs). */
  createdAt?: Date;
}

export interface Engine {
  readonly name: EngineName;
  /** Throws a TransientError when the engine cannot be reached. */
  ping(): Promise<void>;
  start(spec: RunSpec): Promise<RunHandle>;
  /** Resolves when the run ends, or rejects with a timeout error after `timeoutMs`. */
  wait(handle: RunHandle, timeoutMs: number): Promise<RunExit>;
  signal(handle: RunHandle, signal: StopSignal): Promise<void>;
  /** Removes what the run left (container, Job); idempotent. */
  remove(handle: RunHandle): Promise<void>;
  /** Runs carrying all the given labels. */
  list(labels: Record<string, string>): Promise<RunInfo[]>;
  /** Re-attaches output streaming to a run found by `list` (adoption after restart). */
  attach(handle: RunHandle, onStdout: (c: Buffer) => void, onStderr: (c: Buffer) => void): Promise<void>;
  close(): Promise<void>;
}
