import type { AgentName } from '../config/schema.js';
import type { AgentStatus } from '../shared/status.js';
import type { ExtraAgentTool, PreloadPlacement, PromptParts, ToolPermissions } from '../shared/types.js';
import type { ProgressReader } from './shared/progress.js';
import type { ModelProvider } from './shared/auth.js';

// An agent adapter is mostly data: what to run for one CLI and how to read what it printed.
// It never starts processes or containers itself; the run pipeline in daemon/ joins it to an engine.

/** Paths as the agent sees them (container paths under docker/kubernetes, host paths under process). */
export interface AgentPaths {
  /** The agent's HOME (writable: a tmpfs in containers, a per-run folder under process). */
  home: string;
  /** Working directory: the incident workspace. */
  workspaceDir: string;
  /** Where the report goes, e.g. `/workspace/output/investigation.md`. */
  reportPath: string;
  /** Read-only folder holding the files from `AgentInvocation.files` (system prompt file, CLI settings). */
  filesDir: string;
}

export interface InvocationInput {
  prompt: PromptParts;
  model?: string;
  maxTurns: number;
  extraArgs: string[];
  paths: AgentPaths;
  /** Provider endpoints from config or the daemon's environment (gateway/proxy routing). */
  providers: {
    anthropicBaseUrl?: string;
    openaiBaseUrl?: string;
    geminiBaseUrl?: string;
    gooseProvider?: string;
  };
  /** Secret variables (API keys) available to hand to the agent; the adapter picks the ones its CLI uses. */
  secrets: Record<string, string>;
  /** The persona's tool policy, for the CLI's own permission settings (src/agents/shared/permissions.ts). */
  permissions?: ToolPermissions;
  /** Tools offered beyond what an investigation needs (`agent.extra_tools`; src/agents/shared/tools.ts). */
  extraTools?: readonly ExtraAgentTool[];
}

/** A file the adapter needs inside the agent's environment, written by the pipeline before launch. */
export interface InvocationFile {
  /** Relative to `AgentPaths.filesDir` (mounted read-only) or, with `inHome`, copied into HOME at start. */
  path: string;
  content: string;
  /** Place the file under HOME (for CLIs that read config from ~/.x/…); otherwise under filesDir. */
  inHome?: boolean;
}

/** Exactly what to run. No shell is involved: `command` and `args` go to exec as they are. */
export interface AgentInvocation {
  command: string;
  args: string[];
  /** Non-secret environment. */
  env: Record<string, string>;
  /** Secret environment (API keys): passed to the agent, redacted in every record of the invocation. */
  secretEnv: Record<string, string>;
  /** Written to the agent's stdin at once and then closed (empty string: stdin closed immediately). */
  stdin: string;
  files: InvocationFile[];
}

export interface AgentRunOutput {
  exitCode: number | null;
  signal?: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** What an adapter reads from its CLI's output (the one status vocabulary, shared/status.ts). */
export type { AgentStatus } from '../shared/status.js';

/** What an adapter reads from its CLI's output. The exit code is reported as it was, never masked. */
export interface AgentOutcome {
  status: AgentStatus;
  exitCode: number | null;
  turns?: number;
  tokens: { input: number; output: number };
  costUsd?: number;
  /** One line a user can act on, when status is not succeeded. */
  error?: string;
  /** The agent's final message (the user prompt asks for hypothesis, confidence and first action). */
  finalMessage?: string;
}

/** A tool call the CLI refused by its own permission rules, as its output reports it. */
export interface ToolDenial {
  /** The CLI's tool name (`Bash`). */
  tool: string;
  /** The command line, for a shell tool. */
  command?: string;
}

export interface AgentAdapter {
  id: AgentName;
  /** The npm package of the CLI, when it has one. */
  npmPackage?: string;
  /** Claude gets the preloaded context in its system prompt; the others before the user prompt. */
  placement: PreloadPlacement;
  /**
   * Folders, relative to HOME, where the run lays out its skills, one folder per skill
   * (`<dir>/<name>/SKILL.md`, read-only). The first is where the prompt names them: the folder the CLI
   * discovers skills in when it has native skills. The others are aliases that CLI does not scan
   * (`.claude/skills`, which skills' own instructions hard-code), so nothing is discovered twice.
   */
  skillsDirs: string[];
  /**
   * The CLI discovers the skills in `skillsDirs[0]` by itself and lists them (name and description) in
   * its own prompt; our prompt then points at that listing instead of repeating it.
   */
  listsSkills: boolean;
  /** Folders, relative to HOME, that the CLI must be able to write (tmpfs in containers). */
  writableHomeDirs: string[];
  /**
   * Names of the `secrets:` this CLI authenticates with (any one suffices), for the configuration
   * check; empty when the CLI picks its own (a Goose provider without a known key).
   */
  authSecrets?(providers: { gooseProvider?: string }): readonly string[];
  /**
   * The model provider whose API the CLI calls, the only one the model gateway opens to its run token;
   * undefined when it calls one the gateway does not carry (a Goose provider it does not know).
   */
  modelProvider(providers: { gooseProvider?: string }): ModelProvider | undefined;
  buildInvocation(input: InvocationInput): AgentInvocation;
  parseOutput(output: AgentRunOutput): AgentOutcome;
  /** Reads the CLI's streamed events while it runs (progress, an auth failure); absent: no stream. */
  progress?(): ProgressReader;
  /** Tool calls the CLI refused itself (its permission rules), when its output lists them. */
  deniedCalls?(output: AgentRunOutput): ToolDenial[];
  /**
   * The tools the CLI's model requests define for this input, by name: what its configuration lets it
   * offer (src/agents/shared/tools.ts). A contract test holds the real CLI's first request to it.
   */
  toolNames?(input: Pick<InvocationInput, 'permissions' | 'extraTools'>): string[];
}
