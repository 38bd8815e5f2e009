import type { EngineName } from '../config/schema.js';
import type { StopSignal } from '../util/process-group.js';
export type { StopSignal } from '../util/process-group.js';

// Where an agent runs. Engines know nothing about agents: they run a command with mounts, env,
// stdin and labels, stream its output, and report how it ended.

export interface Mount {
  /** A path of the daemon's (a folder or a file). */
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
  /**
   * What must be ready before the agent's process starts (its kubectl broker, its model gateway, the
   * run's records). The engine calls it once as soon as `start` begins, prepares the run meanwhile
   * (creating a container takes tens of milliseconds), and awaits it right before the process starts.
   * If it rejects, nothing is started, what was created is removed and `start` rejects with its error.
   */
  beforeStart?: () => Promise<void>;
  /**
   * For an engine whose agent cannot see the daemon's folders (`capabilities.copiesMounts`): the token
   * its agent fetches its mounts and stdin with, and returns what it writes in its writable mounts
   * with, from the daemon's files route. Handed to the agent in secret (kubernetes: a Secret of the
   * run's own), never in its spec, argv or a log.
   */
  filesToken?: string;
  /** Called with output as it arrives. */
  onStdout: (chunk: Buffer) => void;
  onStderr: (chunk: Buffer) => void;
  /**
   * A host folder where the engine may keep per-run state that must outlive the daemon (a host engine
   * writes the pid, the exit code and the raw output there). The run pipeline passes the run bundle.
   */
  stateDir: string;
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

/** A run the engine knows about, found by label (for reconciliation after a daemon restart). */
export interface RunInfo {
  handle: RunHandle;
  labels: Record<string, string>;
  running: boolean;
  /** False for a run created but never started (the daemon died in between): it never ran. */
  started: boolean;
  /** When the engine created the run, if it reports it (the start-up sweep spares very young runs). */
  createdAt?: Date;
}

/** Where the agent runs: on the daemon's host (it sees host paths) or in a container (mapped paths). */
export type Placement = 'host' | 'container';

/** What an engine can do, as data: callers branch on these, never on the engine's name. */
export interface EngineCapabilities {
  /** A daemon that restarts can read the whole output of a run another daemon started. */
  reattachOutput: boolean;
  /** The engine tells when it killed a run for memory (else a SIGKILL from outside is only a guess). */
  reportsOom: boolean;
  /** Signals it can deliver to a run (the supervisor skips the others). */
  signals: readonly StopSignal[];
  /**
   * A unix socket the daemon listens on inside the run bundle is reachable from the agent (the bundle is
   * a host folder the agent sees): the kubectl broker can serve it. Absent means no.
   */
  bundleSockets?: boolean;
  /**
   * The agent reaches the daemon host's loopback addresses (`127.0.0.1`, `localhost`): a model server
   * or gateway listening there is reachable. Absent means no (a container on its own network, a pod).
   */
  hostLoopback?: boolean;
  /**
   * How its agent reaches an address on the daemon's host when loopback is not shared, said where a
   * loopback address was configured. Absent: a Service or the host's address, in general terms.
   */
  hostAddressHint?: string;
  /**
   * The agent can reach the daemon over the network (a pod, through the daemon's Service): the kubectl
   * broker serves it over HTTP with the run's token when the pod broker is configured. Absent means no.
   */
  networkBroker?: boolean;
  /**
   * The agent cannot see the daemon's folders (a pod on any node): its mounts and stdin are copied to it
   * from the daemon's files route before it starts, with `RunSpec.filesToken`, and what it writes in
   * its writable mounts is copied back while it runs and when it ends. The daemon's folders are then
   * never shared with it. Absent means no.
   */
  copiesMounts?: boolean;
}

/** What a one-off run of a command in an image showed: its output, or why it could not run. */
export type ImageProbe = { ok: true; output: string } | { ok: false; detail: string };

export interface Engine {
  readonly name: EngineName;
  readonly placement: Placement;
  readonly capabilities: EngineCapabilities;
  /** Throws a TransientError when the engine cannot be reached. */
  ping(): Promise<void>;
  start(spec: RunSpec): Promise<RunHandle>;
  /** Resolves when the run ends, or rejects with a timeout error after `timeoutMs`. */
  wait(handle: RunHandle, timeoutMs: number): Promise<RunExit>;
  signal(handle: RunHandle, signal: StopSignal): Promise<void>;
  /** Removes what the run left (container, Job); idempotent. */
  remove(handle: RunHandle): Promise<void>;
  /** The run launched for `runId` (its state folder: `stateDir`), if the engine still has it. */
  find(runId: string, stateDir: string): Promise<RunInfo | undefined>;
  /** Runs carrying all the given labels that this engine can enumerate (the start-up sweep). */
  list(labels: Record<string, string>): Promise<RunInfo[]>;
  /** Whether the image exists (container placement); undefined when the engine cannot tell. */
  hasImage?(image: string): Promise<boolean>;
  /**
   * Runs `argv` once in a throwaway container of `image` (no network, no mounts) and says whether it
   * ran and exited 0; answered once per image id. Absent when the engine cannot run one-off containers.
   */
  probeImage?(image: string, argv: readonly string[]): Promise<ImageProbe>;
  /** Re-attaches output streaming to a run found by `list` (adoption after restart). */
  attach(handle: RunHandle, onStdout: (c: Buffer) => void, onStderr: (c: Buffer) => void): Promise<void>;
  close(): Promise<void>;
}
