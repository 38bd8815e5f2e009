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
] as const;
export type AgentTool = (typeof AGENT_TOOLS)[number];

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
