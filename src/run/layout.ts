import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentAdapter, AgentPaths } from '../agents/types.js';
import type { Config } from '../config/schema.js';
import type { SkillEntry } from '../context/disclosure/skill-types.js';
import type { AgentView, PathMapping } from '../context/types.js';
import type { Mount, Placement } from '../engines/types.js';
import { OUTPUT_DIR, REPORT_FILE, RUN_FILES, runDirRelative } from '../workspace/layout.js';
import { ensureOwnDir, openDirNoFollow } from '../util/safe-path.js';
import { containerIds } from './share-run.js';

// Where a run's agent sees things, per engine: container paths plus the mounts that put the host
// folders there (docker, kubernetes), or the host paths themselves (process).

export const CONTAINER_HOME = '/home/agent';
export const CONTAINER_WORKSPACE = '/workspace';
export const CONTAINER_PERSONAS = '/opt/triage/personas';
export const CONTAINER_BRIEFS = '/opt/triage/briefs';
export const CONTAINER_AGENT_FILES = '/opt/triage/agent-files';
export const CONTAINER_KUBECONFIG = '/etc/triage/kubeconfig';
/** Where RunOverrides.pathPrepend folders are mounted (`<dir>/0`, `<dir>/1`, …). */
export const CONTAINER_PATH_PREPEND = '/opt/triage/path';
/** The agent image's PATH (Debian's default), kept after the prepended folders. */
export const CONTAINER_DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Inside the bundle's agent-files/: files the adapter wants under HOME, each mounted read-only at its place. */
export const HOME_FILES_DIR = '.home';

export interface RunLayout {
  paths: AgentPaths;
  view: AgentView;
  mounts: Mount[];
  /** Writable tmpfs (container) or folders created under HOME (process). */
  tmpfs: string[];
  /** Environment every agent gets (HOME, KUBECONFIG, TRIAGE_OUTPUT_DIR). */
  env: Record<string, string>;
  workdir: string;
  /** Host folder used as HOME (process engine only): created before and removed after the run. */
  hostHome?: string;
  /** Host folder of the files the adapter hands the agent (the bundle's agent-files/). */
  hostFilesDir: string;
  /** Host path of the report. */
  hostReportPath: string;
}

export interface LayoutInput {
  config: Config;
  /** Where the engine runs the agent: host paths, or container paths and mounts. */
  placement: Placement;
  workspaceDir: string;
  runId: string;
  bundleDir: string;
  adapter: Pick<AgentAdapter, 'skillsDirs' | 'listsSkills' | 'writableHomeDirs'>;
  /** Base folder for per-run HOMEs under the process engine (default: the OS temp folder). */
  tmpDir?: string;
  /** Folders put first on the agent's PATH (RunOverrides.pathPrepend). */
  pathPrepend?: string[];
  /** The PATH they are put before under the process engine (the daemon's). */
  basePath?: string;
}

export function runLayout(input: LayoutInput): RunLayout {
  return input.placement === 'host' ? hostLayout(input) : containerLayout(input);
}

/**
 * Container paths: the workspace and the run's bundle read-only, only output/ and the bundle's
 * agent-notes/ writable. The bundle holds the daemon's records of the run (its call logs, the agent's
 * output as captured, the manifest), which a writable mount would hand to an agent running as the
 * daemon's uid.
 */
export function containerLayout(input: LayoutInput): RunLayout {
  const { config, workspaceDir, runId, bundleDir, adapter } = input;
  const p = path.posix;
  const hostOutput = path.join(workspaceDir, OUTPUT_DIR);
  const hostFilesDir = path.join(bundleDir, RUN_FILES.agentFiles);
  const runDir = p.join(CONTAINER_WORKSPACE, runDirRelative(runId));
  const [output, notes] = writableMounts(workspaceDir, bundleDir, runId);
  const outputDir = output.target;
  const notesDir = notes.target;
  // Each folder before any mounted inside it.
  const mounts: Mount[] = [
    { source: workspaceDir, target: CONTAINER_WORKSPACE, readOnly: true },
    output,
    { source: bundleDir, target: runDir, readOnly: true },
    notes,
    { source: hostFilesDir, target: CONTAINER_AGENT_FILES, readOnly: true },
  ];
  if (existsSync(config.personas_dir))
    mounts.push({ source: config.personas_dir, target: CONTAINER_PERSONAS, readOnly: true });
  if (existsSync(config.briefs_dir))
    mounts.push({ source: config.briefs_dir, target: CONTAINER_BRIEFS, readOnly: true });
  const env: Record<string, string> = {
    HOME: CONTAINER_HOME,
    TRIAGE_OUTPUT_DIR: outputDir,
    TRIAGE_RUN_DIR: runDir,
    TRIAGE_NOTES_DIR: notesDir,
  };
  if (config.kubeconfig) {
    mounts.push({ source: config.kubeconfig, target: CONTAINER_KUBECONFIG, readOnly: true });
    env.KUBECONFIG = CONTAINER_KUBECONFIG;
  }
  if (input.pathPrepend?.length) {
    const targets = input.pathPrepend.map((_, i) => p.join(CONTAINER_PATH_PREPEND, String(i)));
    input.pathPrepend.forEach((source, i) =>
      mounts.push({ source, target: targets[i] as string, readOnly: true }),
    );
    env.PATH = [...targets, CONTAINER_DEFAULT_PATH].join(':');
  }
  const reportPath = p.join(outputDir, REPORT_FILE);
  return {
    paths: {
      home: CONTAINER_HOME,
      workspaceDir: CONTAINER_WORKSPACE,
      reportPath,
      filesDir: CONTAINER_AGENT_FILES,
    },
    view: {
      workspaceDir: CONTAINER_WORKSPACE,
      runDir,
      triageDir: p.join(runDir, RUN_FILES.triageDir),
      reportPath,
      skillsDir: p.join(CONTAINER_HOME, skillsDirOf(adapter)),
      skillsListedByCli: adapter.listsSkills,
      personasDir: CONTAINER_PERSONAS,
      briefsDir: CONTAINER_BRIEFS,
      hostPaths: mounts.map((m): PathMapping => ({ host: m.source, agent: m.target })),
    },
    mounts,
    // The skills folder the prompt names exists even when no skill is laid out in it.
    tmpfs: [
      CONTAINER_HOME,
      '/tmp',
      ...[...adapter.writableHomeDirs, skillsDirOf(adapter)].map((d) => p.join(CONTAINER_HOME, d)),
    ],
    env,
    workdir: CONTAINER_WORKSPACE,
    hostFilesDir,
    hostReportPath: path.join(hostOutput, REPORT_FILE),
  };
}

/**
 * The two folders a container's agent writes, as mounted: the workspace's output/ (the report) and the
 * run folder's agent-notes/. A daemon adopting an agent pod's run takes back what it returns by them.
 */
export function writableMounts(
  workspaceDir: string,
  bundleDir: string,
  runId: string,
): [output: Mount, notes: Mount] {
  const runDir = path.posix.join(CONTAINER_WORKSPACE, runDirRelative(runId));
  return [
    {
      source: path.join(workspaceDir, OUTPUT_DIR),
      target: path.posix.join(CONTAINER_WORKSPACE, OUTPUT_DIR),
      readOnly: false,
    },
    {
      source: path.join(bundleDir, RUN_FILES.agentNotes),
      target: path.posix.join(runDir, RUN_FILES.agentNotes),
      readOnly: false,
    },
  ];
}

/** Host paths: the agent runs on the host, with a per-run HOME where the skills are linked in. */
export function hostLayout(input: LayoutInput): RunLayout {
  const { config, workspaceDir, runId, bundleDir, adapter } = input;
  const home = path.join(input.tmpDir ?? os.tmpdir(), `triage-runner-home-${runId}`);
  const hostOutput = path.join(workspaceDir, OUTPUT_DIR);
  const hostFilesDir = path.join(bundleDir, RUN_FILES.agentFiles);
  const mounts: Mount[] = [];
  const env: Record<string, string> = {
    HOME: home,
    TRIAGE_OUTPUT_DIR: hostOutput,
    TRIAGE_RUN_DIR: bundleDir,
    TRIAGE_NOTES_DIR: path.join(bundleDir, RUN_FILES.agentNotes),
  };
  if (config.kubeconfig) env.KUBECONFIG = config.kubeconfig;
  if (input.pathPrepend?.length)
    env.PATH = [...input.pathPrepend, input.basePath ?? CONTAINER_DEFAULT_PATH].join(':');
  const reportPath = path.join(hostOutput, REPORT_FILE);
  return {
    paths: { home, workspaceDir, reportPath, filesDir: hostFilesDir },
    view: {
      workspaceDir,
      runDir: bundleDir,
      triageDir: path.join(bundleDir, RUN_FILES.triageDir),
      reportPath,
      skillsDir: path.join(home, skillsDirOf(adapter)),
      skillsListedByCli: adapter.listsSkills,
      personasDir: config.personas_dir,
      briefsDir: config.briefs_dir,
      // The agent runs on the host: every host path is its own.
      hostPaths: [],
    },
    mounts,
    tmpfs: [...adapter.writableHomeDirs, skillsDirOf(adapter)].map((d) => path.join(home, d)),
    env,
    workdir: workspaceDir,
    hostHome: home,
    hostFilesDir,
    hostReportPath: reportPath,
  };
}

const skillsDirOf = (adapter: Pick<AgentAdapter, 'skillsDirs'>): string =>
  adapter.skillsDirs[0] ?? '.agents/skills';

/**
 * Puts each skill the prompt names in its own folder under every one of the adapter's skills folders
 * under HOME (`<HOME>/<dir>/<dirName>`, read-only): a bind mount in a container, a symlink under the
 * process engine (which links every mount targeted under HOME). One folder per skill, not per source:
 * Claude Code lists only `~/.claude/skills/<name>/SKILL.md`.
 */
export function skillMounts(
  home: string,
  adapter: Pick<AgentAdapter, 'skillsDirs'>,
  skills: readonly Pick<SkillEntry, 'hostDir' | 'dirName'>[],
): Mount[] {
  const join = home.startsWith('/') ? path.posix.join : path.join;
  return adapter.skillsDirs.flatMap((dir) =>
    skills.map((s) => ({ source: s.hostDir, target: join(home, dir, s.dirName), readOnly: true })),
  );
}

/**
 * Makes the folders the agent writes (output/ and the bundle's agent-notes/) writable by the container
 * user, whose uid may differ from the daemon's: handed to docker.user's uid:gid by a root daemon, else
 * opened to all (0777). The bundle itself stays the daemon's (mounted read-only); what the agent reads
 * of it is shared just before it starts (share-run.ts). Never follows a symlink: each folder is created
 * or opened with O_NOFOLLOW and changed through its handle, so a link planted in the workspace cannot
 * hand another folder to the agent. A host-placed agent runs as the daemon's user, and what an agent
 * pod writes is written here by the daemon (`copied`): nothing to change.
 */
export async function prepareWritable(
  dirs: { workspace: string; output: string; bundle: string },
  placement: Placement,
  user: string,
  getuid = process.getuid,
  copied = false,
): Promise<void> {
  // Every folder from the workspace down is checked: O_NOFOLLOW guards only the last component, so a
  // link at `.triage` or `.triage/runs` must be refused here, not opened through.
  const notes = path.join(dirs.bundle, RUN_FILES.agentNotes);
  await ensureOwnDir(dirs.output, dirs.workspace);
  await ensureOwnDir(dirs.bundle, dirs.workspace);
  await ensureOwnDir(notes, dirs.workspace);
  if (placement === 'host' || copied) return;
  const { uid, gid } = containerIds(user);
  const handTo = async (dir: string) => {
    const handle = await openDirNoFollow(dir);
    try {
      if (getuid?.() === 0 && uid !== undefined) await handle.chown(uid, gid ?? uid);
      else await handle.chmod(0o777);
    } finally {
      await handle.close();
    }
  };
  await handTo(dirs.output);
  await handTo(notes);
}
