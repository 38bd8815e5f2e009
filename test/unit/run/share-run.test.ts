import { chmod, mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepareWritable } from '../../../src/run/layout.js';
import { agentAccess, shareRunInputs } from '../../../src/run/share-run.js';
import { makeDirs, writeFileAtomic } from '../../../src/util/fs.js';
import { tempDir } from '../../support/runs.js';

// Modes of what the daemon keeps under `.triage/`, and what of a run folder is shared with its agent.

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir('triage-share-')));
afterEach(async () => cleanup());

const modeOf = async (p: string) => ((await stat(p)).mode & 0o777).toString(8);
const gidOf = async (p: string) => (await stat(p)).gid;

describe('files and folders the daemon makes', () => {
  it("are its user's only under .triage/ (.triage/ and runs/ searchable), readable by all elsewhere", async () => {
    const ws = path.join(dir, 'ws');
    await writeFileAtomic(path.join(ws, '.triage', 'outbox', 'entry.json'), '{}');
    makeDirs(path.join(ws, '.triage', 'runs', 'run-1', 'triage'));
    await writeFileAtomic(path.join(dir, 'out', 'scorecard.md'), '# x\n');
    expect(await modeOf(path.join(ws, '.triage'))).toBe('711');
    expect(await modeOf(path.join(ws, '.triage', 'runs'))).toBe('711');
    expect(await modeOf(path.join(ws, '.triage', 'outbox'))).toBe('700');
    expect(await modeOf(path.join(ws, '.triage', 'runs', 'run-1', 'triage'))).toBe('700');
    expect(await modeOf(path.join(ws, '.triage', 'outbox', 'entry.json'))).toBe('600');
    expect(await modeOf(path.join(dir, 'out', 'scorecard.md'))).toBe('644');
  });

  it('rewrites an older world-readable record private', async () => {
    const file = path.join(dir, 'ws', '.triage', 'state.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{}', { mode: 0o644 });
    await writeFileAtomic(file, '{"state":"queued"}');
    expect(await modeOf(file)).toBe('600');
  });
});

describe('agentAccess', () => {
  it("decides from where the agent runs, the engine's group and the daemon's uid", () => {
    expect(agentAccess('host', {}, '1000:1000', () => 0)).toEqual({ kind: 'same-user' });
    // An agent pod never reads the daemon's files: the daemon reads them for it.
    expect(agentAccess('container', { copiesMounts: true }, '1000:1000', () => 10001)).toEqual({
      kind: 'same-user',
    });
    expect(agentAccess('container', {}, '1000:2000', () => 0)).toEqual({ kind: 'group', gid: 2000 });
    expect(agentAccess('container', {}, '1000', () => 0)).toEqual({ kind: 'group', gid: 1000 });
    expect(agentAccess('container', {}, 'agent', () => 0)).toEqual({ kind: 'everyone' });
    expect(agentAccess('container', {}, '1000:1000', () => 4242)).toEqual({ kind: 'everyone' });
  });
});

describe('shareRunInputs', () => {
  /** A workspace with a run folder as the pipeline leaves it before the launch. */
  async function runFolder() {
    const workspace = path.join(dir, 'ws');
    const bundle = path.join(workspace, '.triage', 'runs', 'run-1');
    for (const [rel, mode] of [
      ['triage/triage-report.md', 0o600],
      ['triage/evidence/pods.json', 0o600],
      ['kubectl-guard/kubectl', 0o700],
      ['agent-files/settings.json', 0o600],
      ['prompt-sent.md', 0o600],
      ['cluster-outputs.jsonl', 0o600],
    ] as const)
      await writeFileAtomic(path.join(bundle, rel), 'x', mode);
    const victim = path.join(dir, 'victim.txt');
    await writeFile(victim, "not the run's");
    await chmod(victim, 0o600);
    await symlink(victim, path.join(bundle, 'triage', 'planted-link'));
    return { workspace, bundle, victim };
  }

  it("gives the agent's group its inputs (0750/0640, executables 0750) and nothing else, never through a link", async () => {
    const { workspace, bundle, victim } = await runFolder();
    const given = await shareRunInputs(workspace, bundle, { kind: 'group', gid: 4321 });
    expect(given).toEqual({ kind: 'group', gid: 4321 });
    for (const [rel, mode] of [
      ['', '750'],
      ['triage', '750'],
      ['triage/evidence', '750'],
      ['triage/triage-report.md', '640'],
      ['triage/evidence/pods.json', '640'],
      ['kubectl-guard/kubectl', '750'],
      ['agent-files/settings.json', '640'],
    ] as const) {
      expect(await modeOf(path.join(bundle, rel)), rel).toBe(mode);
      expect(await gidOf(path.join(bundle, rel)), rel).toBe(4321);
    }
    for (const rel of ['prompt-sent.md', 'cluster-outputs.jsonl']) {
      expect(await modeOf(path.join(bundle, rel)), rel).toBe('600');
      expect(await gidOf(path.join(bundle, rel)), rel).not.toBe(4321);
    }
    expect(await modeOf(victim)).toBe('600');
    expect(await gidOf(victim)).not.toBe(4321);
    expect(await modeOf(path.join(workspace, '.triage'))).toBe('711');
    expect(await modeOf(path.join(workspace, '.triage', 'runs'))).toBe('711');
  });

  it('opens the inputs to all (0755/0644) when no group can carry them, and only them', async () => {
    const { workspace, bundle } = await runFolder();
    await shareRunInputs(workspace, bundle, { kind: 'everyone' });
    expect(await modeOf(path.join(bundle, 'triage', 'triage-report.md'))).toBe('644');
    expect(await modeOf(path.join(bundle, 'kubectl-guard', 'kubectl'))).toBe('755');
    expect(await modeOf(bundle)).toBe('755');
    expect(await modeOf(path.join(bundle, 'prompt-sent.md'))).toBe('600');
  });

  it("keeps the run folder the daemon's user's only for an agent that is that user, tightening what a script wrote", async () => {
    const { workspace, bundle } = await runFolder();
    // The triage script writes with its own umask.
    await writeFile(path.join(bundle, 'triage', 'from-script.txt'), 'x', { mode: 0o644 });
    await shareRunInputs(workspace, bundle, { kind: 'same-user' });
    expect(await modeOf(bundle)).toBe('700');
    expect(await modeOf(path.join(bundle, 'triage', 'triage-report.md'))).toBe('600');
    expect(await modeOf(path.join(bundle, 'triage', 'from-script.txt'))).toBe('600');
    expect(await modeOf(path.join(bundle, 'kubectl-guard', 'kubectl'))).toBe('700');
  });
});

describe('prepareWritable with an engine that copies mounts (an agent pod)', () => {
  it('creates output/ and agent-notes/ but never opens them to writes by other users: the daemon writes what the pod returns', async () => {
    const workspace = path.join(dir, 'ws');
    const dirs = {
      workspace,
      output: path.join(workspace, 'output'),
      bundle: path.join(workspace, '.triage', 'runs', 'r'),
    };
    await mkdir(workspace);
    await prepareWritable(dirs, 'container', '1000:1000', () => 4242, true);
    for (const p of [dirs.output, path.join(dirs.bundle, 'agent-notes')])
      expect(Number.parseInt(await modeOf(p), 8) & 0o022).toBe(0);
  });
});
