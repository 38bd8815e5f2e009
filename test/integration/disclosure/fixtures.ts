import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configSchema, type Config, type ConfigInput } from '../../../src/config/schema.js';
import type { AgentView, SkillsSnapshot, SkillsSourceSnapshot } from '../../../src/context/types.js';
import type { Incident } from '../../../src/workspace/incident.js';
import { createLogger, type Logger } from '../../../src/log/logger.js';

// Real temp folders and real git repositories for the disclosure tests.

export const VIEW: AgentView = {
  workspaceDir: '/workspace',
  runDir: '/workspace/.triage/runs/r1',
  triageDir: '/workspace/.triage/runs/r1/triage',
  reportPath: '/workspace/output/investigation.md',
  skillsDir: '/opt/triage/skills',
  personasDir: '/opt/triage/personas',
  briefsDir: '/opt/triage/briefs',
  skillsListedByCli: false,
  hostPaths: [],
};

export const SHIPPED_PERSONAS = path.resolve(import.meta.dirname, '../../../configs/personas');

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), `disclosure-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes files (relative path → content) under root, creating folders. */
export function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

/** A SKILL.md in the Agent Skills format. */
export function skillMd(
  name: string,
  description: string,
  body = `# ${name}\n\nFull instructions for ${name}.\n`,
): string {
  return `---\nname: ${name}\ndescription: ${description}\nlicense: Apache-2.0\n---\n${body}`;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
  }).trim();
}

export interface RepoSpec {
  files: Record<string, string>;
  /** Symlinks (relative path → target) committed as such. */
  symlinks?: Record<string, string>;
}

/**
 * Commits the files into a fresh git repository and checks the commit out in a separate worktree,
 * the way the skills cache hands a run an immutable checkout. Returns the worktree and commit.
 */
export function gitCheckout(root: string, name: string, spec: RepoSpec): { dir: string; commit: string } {
  const repo = path.join(root, `${name}.git-src`);
  mkdirSync(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeTree(repo, spec.files);
  for (const [rel, target] of Object.entries(spec.symlinks ?? {})) {
    mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    symlinkSync(target, path.join(repo, rel));
  }
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'skills fixture');
  const commit = git(repo, 'rev-parse', 'HEAD');
  const dir = path.join(root, 'checkouts', name, commit.slice(0, 12));
  mkdirSync(path.dirname(dir), { recursive: true });
  git(repo, 'worktree', 'add', '-q', '--detach', dir, commit);
  return { dir, commit };
}

export function snapshot(sources: SkillsSourceSnapshot[]): SkillsSnapshot {
  return { sources, unavailable: [], release: () => undefined };
}

/** A logger that keeps its JSON lines for assertions. */
export function captureLogger(): { log: Logger; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => void raw.push(line) } });
  return {
    log,
    lines: () =>
      raw
        .join('')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export function makeConfig(input: ConfigInput): Config {
  return configSchema.parse(input);
}

export function incident(fields: Partial<Incident> = {}): Incident {
  return {
    incidentId: 'inc-1',
    cluster: 'prod-eu-1',
    namespace: 'payments',
    resource: { apiVersion: 'v1', kind: 'Pod', name: 'api-7c9d', namespace: 'payments' },
    faultType: 'CrashLoop',
    severity: 'high',
    timestamp: '2026-11-22T02:00:00Z',
    ...fields,
  };
}
