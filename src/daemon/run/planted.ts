import { lstat } from 'node:fs/promises';
import path from 'node:path';

/**
 * What the agent CLIs read from their working folder as instructions or settings: Claude Code's
 * `.claude/` (settings with hooks that run commands, skills, agents), `CLAUDE.md` and `.mcp.json`;
 * Codex's `AGENTS.md`, `.codex/` and `.agents/skills`; Gemini CLI's `.gemini/` and `GEMINI.md`;
 * Goose's `.goosehints`. The agent works in the incident's folder, so whoever writes the incident could
 * otherwise give the agent instructions, tools or skills the operator never configured.
 */
export const AGENT_PROJECT_FILES = [
  '.claude',
  'CLAUDE.md',
  'CLAUDE.local.md',
  '.mcp.json',
  '.agents',
  'AGENTS.md',
  'AGENTS.override.md',
  '.codex',
  '.gemini',
  'GEMINI.md',
  '.goosehints',
] as const;

/** The agent project files present (as anything: file, folder or link) directly in each of `dirs`. */
export async function findPlantedAgentFiles(dirs: readonly string[]): Promise<string[]> {
  const candidates = dirs.flatMap((dir) => AGENT_PROJECT_FILES.map((name) => path.join(dir, name)));
  const present = await Promise.all(
    candidates.map((at) =>
      lstat(at).then(
        () => true,
        () => false,
      ),
    ),
  );
  return candidates.filter((_, i) => present[i]);
}

/** Refuses to launch an agent whose working folder (or, on the host, the workspaces root) holds any. */
export async function refusePlantedAgentFiles(workspaceDir: string, alsoHost: string[]): Promise<void> {
  const found = await findPlantedAgentFiles([workspaceDir, ...alsoHost]);
  if (found.length === 0) return;
  throw new Error(
    `${found.join(', ')}: agent CLIs read these from their working folder as instructions or settings ` +
      '(hooks, MCP servers, skills), and the agent works in the incident folder; the daemon does not ' +
      'launch an agent with instructions the operator did not configure. Remove them, then run ' +
      `\`triage-runner retry ${workspaceDir}\``,
  );
}
