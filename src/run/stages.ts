import type { AgentAdapter } from '../agents/types.js';
import type { RunBundle } from '../workspace/bundle.js';
import type { RunResult } from '../workspace/run-record.js';
import type { AgentName, EngineName } from '../config/schema.js';
import type { BuiltContext } from '../context/build.js';
import type { ValidatorLookup } from '../context/report-validator.js';
import type { SkillsSnapshot } from '../context/types.js';
import type { Engine, RunHandle } from '../engines/types.js';
import type { Logger } from '../log/logger.js';
import type { RunOutcome, RunRequest } from './types.js';
import type { ClusterChoice, RunAccess } from './cluster.js';
import type { AuditFn } from './env.js';
import type { RunGateway } from '../gateway/run.js';
import type { RunGuard } from './kubectl-guard.js';
import type { RunLayout } from './layout.js';
import type { RunOutput } from './output.js';
import type { ProgressTracker } from './progress.js';
import type { RunFiles } from './pod-files.js';

// A run as typed stages: each stage takes what the one before returned, so a later stage cannot see a
// field an earlier one might not have filled.
//
//   RunStart ──prepare()──▶ PreparedRun ──launch()──▶ LaunchedRun ──supervise()──▶ Supervised
//                                                        ▲              ──collect()──▶ CollectedRun
//                      adopt() (a dead daemon's run, from its manifest and the engine)
//
// Preparing a run (prepare.ts) makes the place it runs in: bundle, agent adapter, engine, skills
// snapshot, kubectl guard, layout. Building its context (src/context/build.ts, called by prepare) is
// what the agent is told: triage, sections, disclosure, budget, prompt.

/** A run as it begins: who asked, with which agent and engine. Nothing exists for it yet. */
export interface RunStart {
  request: Omit<RunRequest, 'attempt'> & { attempt?: number };
  log: Logger;
  audit: AuditFn;
  agent: AgentName;
  engineName: EngineName;
  model: string | undefined;
  startedAt: Date;
  /** The cluster registry entry it investigates (src/run/cluster.ts); absent: routed when preparing. */
  cluster?: ClusterChoice;
  /** Whether the daemon reached the run's cluster when it began (kubectl.access_check), and the gaps known then. */
  access?: RunAccess;
}

/** Where the agent's report is, seen from the host and from the agent. */
export interface ReportPaths {
  hostPath: string;
  agentPath: string;
}

/** prepare(): everything the agent needs is on disk and in the bundle; nothing is launched. */
export interface PreparedRun extends RunStart {
  bundle: RunBundle;
  adapter: AgentAdapter;
  engine: Engine;
  snapshot: SkillsSnapshot;
  guard: RunGuard;
  layout: RunLayout;
  context: BuiltContext;
  /** The triage skill's report validator, looked up now and run after the agent. */
  reportValidator: ValidatorLookup;
}

/** What a launching daemon knew that an adopting one does not. */
export type LaunchOrigin =
  | {
      kind: 'launched';
      promptSha256: string;
      triageStatus: string;
      /** What the triage output leaves out, for the evidence check's gaps (triageGaps). */
      triageGaps: string[];
    }
  | {
      kind: 'adopted';
      /** From the launching daemon's manifest; absent in one written before it carried them. */
      promptSha256?: string;
      triageStatus?: string;
      /** Every gap the launching daemon knew (cluster access and triage output). */
      knownGaps?: string[];
      /** What the launching daemon's access check said of an unreachable cluster. */
      unreachable?: string;
    };

/** launch() or adopt(): the agent runs on the engine and its output is being recorded. */
export interface LaunchedRun extends RunStart {
  bundle: RunBundle;
  adapter: AgentAdapter;
  engine: Engine;
  handle: RunHandle;
  output: RunOutput;
  /** The broker serving the agent's kubectl; none when the run had no guard. */
  guard: RunGuard | undefined;
  /** The run's identity at the model gateway; none when the agent was handed the key (`gateway.enabled: false`). */
  gateway?: RunGateway;
  reportValidator: ValidatorLookup;
  report: ReportPaths;
  /** The wall-clock budget left for the agent (ms). */
  timeoutMs: number;
  origin: LaunchOrigin;
  /** The agent's progress from its events (none for an adopted run), and any refused credentials. */
  progress: ProgressTracker;
  /** An agent pod's files, sent and taken back through the daemon (engines that copy mounts). */
  files?: RunFiles;
}

/** collect(): the run record written (result.json) and the outcome the daemon records. */
export type CollectedRun = RunOutcome & { result: RunResult };
