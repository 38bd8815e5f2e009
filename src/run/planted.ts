import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { recentlyModified, signatureOf } from '../util/file-deps-cache.js';

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

const NAMES: ReadonlySet<string> = new Set(AGENT_PROJECT_FILES);

/** One listing of `dir` (a single syscall) instead of a lookup per name. */
async function listedIn(dir: string): Promise<string[]> {
  const names = new Set((await readdir(dir).catch(() => [] as string[])).filter((n) => NAMES.has(n)));
  return AGENT_PROJECT_FILES.filter((n) => names.has(n)).map((n) => path.join(dir, n));
}

/** Looked up by name, each of them. */
async function lookedUpIn(dir: string): Promise<string[]> {
  const candidates = AGENT_PROJECT_FILES.map((name) => path.join(dir, name));
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

/** Large folders (the workspaces root) last found clean, by their signature then. */
const cleanFolders = new Map<string, string>();
/**
 * The agent project files in a large folder: not listed (the workspaces root holds every incident),
 * and not looked up again while the folder is unchanged since it was last found clean (adding,
 * removing or renaming an entry changes it).
 */
export async function plantedInLargeFolder(
  dir: string,
  lookUp: (dir: string) => Promise<string[]> = lookedUpIn,
): Promise<string[]> {
  const sinceNs = BigInt(Date.now()) * 1_000_000n;
  const sig = await signatureOf(dir);
  if (cleanFolders.get(dir) === sig) return [];
  cleanFolders.delete(dir);
  const found = await lookUp(dir);
  if (found.length === 0 && !recentlyModified(sig, sinceNs)) {
    if (cleanFolders.size >= 16) cleanFolders.clear();
    cleanFolders.set(dir, sig);
  }
  return found;
}

/** Refuses to launch an agent whose working folder (or, on the host, the workspaces root) holds any. */
export async function refusePlantedAgentFiles(workspaceDir: string, alsoHost: string[]): Promise<void> {
  const found = [
    ...(await listedIn(workspaceDir)),
    ...(await Promise.all(alsoHost.map((dir) => plantedInLargeFolder(dir)))).flat(),
  ];
  if (found.length === 0) return;
  throw new Error(
    `${found.join(', ')}: agent CLIs read these from their working folder as instructions or settings ` +
      '(hooks, MCP servers, skills), and the agent works in the incident folder; the daemon does not ' +
      'launch an agent with instructions the operator did not configure. Remove them, then run ' +
      `\`triage-runner retry ${workspaceDir}\``,
  );
}
