// Types shared along the pipeline (intake, context, agents, daemon, server). They import nothing, so
// every layer can use them without an arrow pointing back up the pipeline. The incident and its
// workspace are the workspace's records: src/workspace/incident.ts.

/** What the agent receives: the system part and the user part, each delivered byte-identical. */
export interface PromptParts {
  system: string;
  user: string;
}

/** Where the preloaded context goes: Claude gets it in the system prompt, the others before the user prompt. */
export type PreloadPlacement = 'system' | 'user';

export interface Readiness {
  ok: boolean;
  /** Ready, but something runs without (e.g. a skills source that cannot be fetched). */
  degraded?: boolean;
  checks: { name: string; ok: boolean; degraded?: boolean; detail?: string }[];
}

/** What the pipeline reports to Prometheus; implemented by the server's metrics, faked in tests. */
export interface PipelineMetrics {
  stage(stage: 'skills' | 'triage' | 'context' | 'launch' | 'agent' | 'collect', seconds: number): void;
  triageTimeout(): void;
  truncation(section: string): void;
  /** The model gateway refused a run's calls at a spend cap (`budget.max_tokens`, …). */
  modelCapReached?(cap: string): void;
  /** The model gateway retried a provider's 429/529 answer. */
  modelRetry?(provider: string): void;
  /** What a run's model calls cost, as the gateway counted them (result.json `measures`). */
  modelUsage?(usage: ModelUsage): void;
  /** A cluster registry entry's access check found it reachable or not (set at each change). */
  clusterReachable?(cluster: string, reachable: boolean): void;
  /** A run's report was checked against what the run recorded (result.json `evidence.verdict`). */
  evidence?(verdict: string): void;
}

/** A run's model calls as the model gateway counted them. */
export interface ModelUsage {
  /** The model that did the run's work; `unknown` when the calls named none. */
  model: string;
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  firstCallInputTokens?: number;
  /** From the run's start to its first model call, and to that call's first token. */
  firstModelCallMs?: number;
  firstTokenMs?: number;
}

/** The kinds of built-in tool an agent CLI has; each adapter maps them to its CLI's own tool names. */
export const AGENT_TOOLS = [
  'shell',
  'read',
  'write',
  'edit',
  'search',
  'web',
  'todo',
  'skill',
  'subagent',
  'schedule',
  'workflow',
] as const;
export type AgentTool = (typeof AGENT_TOOLS)[number];

/**
 * What an investigation needs, offered to every CLI (when the persona's policy allows it): running
 * commands (`kubectl`), reading files, writing the report, searching files, and the skills.
 */
export const INVESTIGATION_TOOLS = [
  'shell',
  'read',
  'write',
  'search',
  'skill',
] as const satisfies readonly AgentTool[];

/**
 * Tools an investigation does without, off unless `agent.extra_tools` names them: each one's
 * definition is sent again with every model call. Editing files (the report is written whole), web
 * access, a todo list, sub-agents, scheduling and workflows.
 */
export const EXTRA_AGENT_TOOLS = [
  'edit',
  'web',
  'todo',
  'subagent',
  'schedule',
  'workflow',
] as const satisfies readonly AgentTool[];
export type ExtraAgentTool = (typeof EXTRA_AGENT_TOOLS)[number];

/**
 * A persona's tool policy as every CLI can be told it (src/kubectl/policy/permissions.ts derives it from the
 * persona's helpers.yaml): the built-in tools allowed and denied, and shell commands refused by word
 * prefix. Each adapter applies what its CLI supports; the kubectl guard enforces the rest.
 */
export interface ToolPermissions {
  persona: string;
  allowedTools: AgentTool[];
  deniedTools: AgentTool[];
  /** Word prefixes of shell commands the agent may not run (`["kubectl", "delete"]`). */
  deniedCommands: string[][];
  /** One line on why, for CLIs that show the model a reason with a refusal. */
  reason: string;
}
