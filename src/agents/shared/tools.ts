import {
  INVESTIGATION_TOOLS,
  type AgentTool,
  type ExtraAgentTool,
  type ToolPermissions,
} from '../../shared/types.js';

// Which built-in tools each CLI offers its model. Every tool's definition is sent with every model
// call, so a CLI gets what an investigation needs (INVESTIGATION_TOOLS) plus what `agent.extra_tools`
// turns on, less what the persona's policy refuses; each adapter tells its CLI so in its own terms
// (Claude Code's --tools, Codex's config.toml, Gemini CLI's tools.core, Goose's extensions).

/** The kinds of tool a run offers: the investigation's, the configured extras, none the policy refuses. */
export function offeredTools(
  permissions: ToolPermissions | undefined,
  extraTools: readonly ExtraAgentTool[] = [],
): AgentTool[] {
  const wanted = new Set<AgentTool>([...INVESTIGATION_TOOLS, ...extraTools]);
  const refused = new Set(permissions?.deniedTools ?? []);
  return [...wanted].filter((t) => !refused.has(t));
}

/** Claude Code's built-in tool names per kind (2.1.x; `Task` is the old name of `Agent`). */
export const CLAUDE_TOOLS: Record<AgentTool, string[]> = {
  shell: ['Bash'],
  read: ['Read'],
  write: ['Write'],
  edit: ['Edit'],
  search: ['Glob', 'Grep'],
  web: ['WebFetch', 'WebSearch'],
  todo: ['TodoWrite'],
  skill: ['Skill'],
  subagent: ['Agent', 'ListAgents'],
  schedule: ['ScheduleWakeup'],
  workflow: ['Workflow'],
};

/**
 * Tools Claude Code (2.1.x) defines whatever `--tools` says: a stub that keeps its deferred tool loading
 * on, whose description tells the model never to call it (41 o200k tokens).
 */
export const CLAUDE_INTERNAL_TOOLS = ['DeferredToolPlaceholder'];

/**
 * Codex's tool names per kind (0.169, the gpt-5-codex family: its shell is `exec_command` with
 * `write_stdin`). It reads, writes and searches files through its shell and lists skills in its
 * instructions, so those kinds define no tool; goals stand for `workflow`.
 */
export const CODEX_TOOLS: Record<AgentTool, string[]> = {
  shell: ['exec_command', 'write_stdin'],
  read: [],
  write: [],
  edit: [],
  search: [],
  web: ['web_search'],
  todo: [],
  skill: [],
  subagent: ['multi_agent_v1'],
  schedule: [],
  workflow: ['get_goal', 'create_goal', 'update_goal'],
};

/** Gemini CLI's built-in tool names per kind (0.61). */
export const GEMINI_TOOLS: Record<AgentTool, string[]> = {
  shell: ['run_shell_command'],
  read: ['read_file', 'read_many_files', 'list_directory'],
  write: ['write_file'],
  edit: ['replace'],
  search: ['glob', 'grep_search'],
  web: ['web_fetch', 'google_web_search', 'browser_agent'],
  todo: ['write_todos'],
  skill: ['activate_skill'],
  subagent: ['invoke_agent', 'codebase_investigator', 'generalist', 'cli_help'],
  schedule: [],
  workflow: [],
};

/** Tool names of `kinds` in one CLI's terms, each once, in the order of the kinds. */
export function toolNames(map: Record<AgentTool, string[]>, kinds: readonly AgentTool[]): string[] {
  return [...new Set(kinds.flatMap((k) => map[k]))];
}
