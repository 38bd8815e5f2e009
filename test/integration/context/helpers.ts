import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunBundle } from '../../../src/workspace/bundle.js';
import { configSchema, type Config, type ConfigInput } from '../../../src/config/schema.js';
import type { AgentView, SkillsSnapshot } from '../../../src/context/types.js';
import type { Incident, Workspace } from '../../../src/workspace/incident.js';
import { Redactor } from '../../../src/log/redact.js';

// Shared set-up for the context integration tests: temp dirs, a config, a bundle, fixture scripts.

export const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/triage');
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Config lines pointing at the shipped prompt files, personas, briefs and boot file. */
export const shippedPromptFiles = (): string[] => [
  `system_prompt_file: ${path.join(REPO_ROOT, 'configs/triage-system-prompt.md')}`,
  `user_prompt_file: ${path.join(REPO_ROOT, 'configs/user-prompt.md')}`,
  `personas_dir: ${path.join(REPO_ROOT, 'configs/personas')}`,
  `briefs_dir: ${path.join(REPO_ROOT, 'configs/briefs')}`,
  `boot_file: ${path.join(REPO_ROOT, 'configs/boot.yml')}`,
];

export async function tempDir(
  prefix = 'tr-context-',
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function makeConfig(input: ConfigInput = {}): Config {
  return configSchema.parse(input);
}

/** A snapshot serving the fixture scripts as source `k8s4agents` (the triage default). */
export function fixtureSnapshot(dir = FIXTURES): SkillsSnapshot {
  return {
    sources: [{ name: 'k8s4agents', scope: 'project', dir, commit: 'local:fixture' }],
    unavailable: [],
    release: () => undefined,
  };
}

export const incident: Incident = {
  incidentId: 'inc-42',
  cluster: 'prod-eu',
  namespace: 'shop',
  resource: { kind: 'Pod', name: 'api-1', namespace: 'shop' },
  faultType: 'CrashLoop',
  severity: 'high',
  timestamp: '2026-11-22T02:00:00Z',
};

export function makeWorkspace(dir: string, over: Partial<Workspace> = {}): Workspace {
  const incidentText = over.incidentText ?? `${JSON.stringify(incident, null, 2)}\n`;
  return {
    dir,
    name: path.basename(dir),
    incident: JSON.parse(incidentText) as Incident,
    incidentText,
    permissionsText: '{"cluster_name":"prod-eu","can_get_pods":true,"can_get_logs":true}\n',
    ...over,
  };
}

export const makeBundle = (workspaceDir: string, runId = 'run-1') =>
  RunBundle.create(workspaceDir, runId, new Redactor());

/** Where an agent in a container sees the workspace, its run folder and the library. */
export const CONTAINER_VIEW: AgentView = {
  workspaceDir: '/workspace',
  runDir: '/workspace/.triage/runs/run-1',
  triageDir: '/workspace/.triage/runs/run-1/triage',
  reportPath: '/workspace/output/investigation.md',
  skillsDir: '/home/agent/.claude/skills',
  skillsListedByCli: false,
  personasDir: '/opt/triage/personas',
  briefsDir: '/opt/triage/briefs',
  hostPaths: [],
};
