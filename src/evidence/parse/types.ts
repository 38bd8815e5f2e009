// What the evidence check reads out of a kubectl output: pods with their containers' states, reasons,
// exit codes, restart counts, images and resources, and events — the fields a fact's key values are
// compared with (src/evidence/values.ts). Type-only.

export interface ContainerFacts {
  name: string;
  image?: string;
  /** Running | Waiting | Terminated, as `describe` prints it (from `state` in -o yaml|json). */
  state?: string;
  /** The current state's reason (CrashLoopBackOff, OOMKilled, Completed…). */
  reason?: string;
  exitCode?: number;
  lastState?: string;
  lastReason?: string;
  lastExitCode?: number;
  ready?: boolean;
  restartCount?: number;
  /** `cpu`, `memory`… as written (`500m`, `256Mi`). */
  limits: Record<string, string>;
  requests: Record<string, string>;
}

export interface PodFacts {
  name: string;
  namespace?: string;
  /** The pod's phase (`describe` Status, `status.phase`). */
  phase?: string;
  /** The STATUS column of `get pods` (a waiting or terminated reason, else the phase). */
  status?: string;
  /** The READY column (`0/1`). */
  ready?: string;
  /** The RESTARTS column's count. */
  restarts?: number;
  containers: ContainerFacts[];
}

export interface EventFacts {
  /** `pod/api-1` as `get events` prints it (`Pod/api-1` from `kubectl events`, the pod for `describe`). */
  object?: string;
  type?: string;
  reason: string;
  message: string;
}

/** One output read into fields; outputs of other kinds have none (their lines are still searched). */
export interface ParsedOutput {
  pods: PodFacts[];
  events: EventFacts[];
}

export const EMPTY_OUTPUT: ParsedOutput = { pods: [], events: [] };
