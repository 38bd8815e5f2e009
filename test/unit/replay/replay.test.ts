import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderPromptSent } from '../../../src/context/prompt.js';
import type { ContextReport, PromptParts } from '../../../src/context/types.js';
import {
  ReplayUsageError,
  formatReplay,
  promptSha256,
  replay,
  resolveReplaySource,
  type ReplayOptions,
} from '../../../src/replay/index.js';
import type { RunExecutor, RunRequest } from '../../../src/run/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { treeHash } from '../audit/tree-hash.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'replay-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const INCIDENT = `${JSON.stringify(
  {
    incidentId: 'inc-42',
    cluster: 'prod',
    namespace: 'payments',
    resource: { kind: 'Pod', name: 'api-1' },
    faultType: 'CrashLoop',
    severity: 'high',
    timestamp: '2026-11-22T00:00:00Z',
  },
  null,
  2,
)}\n`;

const context = (agent: string): ContextReport => ({
  estimator: 'chars4',
  budget: { warn: 8000, truncate: 10000 },
  totalTokens: 10,
  sections: [],
  skills: [],
  agent,
  safetyFactor: 1,
  incomplete: false,
  incompleteReasons: [],
  overBudgetBy: 0,
  triage: { status: 'ok' },
  disclosure: { subjects: [], bootMode: 'none', parts: [], degraded: [] },
});

/** At the unit edge: an executor whose prompt is a pure function of the workspace inputs and overrides. */
function promptExecutor(calls: RunRequest[]): RunExecutor {
  return {
    async run(request) {
      calls.push(request);
      const triage = request.overrides?.triage;
      const triageText =
        triage?.mode === 'reuse' ? await readFile(triage.logPath, 'utf8') : `mode=${triage?.mode ?? 'none'}`;
      const prompt: PromptParts = {
        system: `system for ${request.overrides?.agent ?? 'claude'}\n`,
        user: `${request.workspace.incidentText}\n${triageText}\n${request.workspace.permissionsText ?? ''}`,
      };
      const runDir = path.join(request.workspace.dir, '.triage', 'runs', request.runId);
      await mkdir(runDir, { recursive: true });
      const header = {
        agent: request.overrides?.agent ?? 'claude',
        placement: 'system' as const,
        promptSha256: 'x',
      };
      await writeFile(
        path.join(runDir, 'prompt-sent.md'),
        renderPromptSent(prompt, header, context(header.agent)),
      );
      // What the pipeline writes for machines: the parts as JSON, and their hash in context.json.
      await writeFile(path.join(runDir, 'prompt.json'), JSON.stringify(prompt));
      await writeFile(
        path.join(runDir, 'context.json'),
        JSON.stringify({ ...context(header.agent), promptSha256: promptSha256(prompt) }),
      );
      return { status: 'succeeded', exitCode: 0 };
    },
    adopt: () => Promise.resolve('gone' as const),
    readiness: () => Promise.resolve({ ok: true, checks: [] }),
  };
}

async function makeWorkspace(name: string, extra: Record<string, string> = {}): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'incident.json'), INCIDENT);
  await writeFile(path.join(dir, 'incident_cluster_permissions.json'), '{"can_get_pods":true}\n');
  for (const [file, text] of Object.entries(extra)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  return dir;
}

const options = (input: string, more: Partial<ReplayOptions> = {}): ReplayOptions => ({
  input,
  cwd: root,
  maxIncidentBytes: 1 << 20,
  ...more,
});

let clock = Date.parse('2026-11-22T03:00:00Z');
const now = () => (clock += 1000);

describe('replay', () => {
  it('copies the inputs, and the saved triage with its products, into a new workspace under ./replays and never touches the original', async () => {
    const ws = await makeWorkspace('inc-42', {
      'saved-triage/output.log': 'pods: 3 crashing\n',
      'saved-triage/evidence/pods.txt': 'api-1 CrashLoopBackOff\n',
    });
    const before = await treeHash(ws);
    const calls: RunRequest[] = [];
    const result = await replay(options(ws), { executor: promptExecutor(calls), log: silentLogger(), now });
    expect(await treeHash(ws)).toBe(before);
    expect(result.source.kind).toBe('example');
    expect(path.dirname(result.outDir)).toBe(path.join(root, 'replays'));
    expect(path.basename(result.outDir)).toMatch(/^inc-42-\d{8}T\d{6}Z$/);
    expect(await readFile(path.join(result.outDir, 'incident.json'), 'utf8')).toBe(INCIDENT);
    expect(calls[0]?.workspace.dir).toBe(result.outDir);
    expect(result.overrides.triage).toEqual({
      mode: 'reuse',
      logPath: path.join(result.outDir, '.triage', 'replay', 'triage-input', 'output.log'),
    });
    expect(
      await readFile(
        path.join(result.outDir, '.triage', 'replay', 'triage-input', 'evidence', 'pods.txt'),
        'utf8',
      ),
    ).toBe('api-1 CrashLoopBackOff\n');
    expect(result.outcome.status).toBe('succeeded');
    expect(result.original).toBeUndefined();
    expect(result.replayed?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reproduces the original prompt of a run bundle byte for byte and says so', async () => {
    const ws = await makeWorkspace('inc-42');
    const first = await replay(options(ws, { out: 'first', triage: 'rerun', agent: 'codex' }), {
      executor: promptExecutor([]),
      log: silentLogger(),
      now,
    });
    // Treat the first replay's workspace as the original: replay its run bundle.
    const bundle = first.runDir;
    await mkdir(path.join(bundle, 'triage'), { recursive: true });
    const before = await treeHash(first.outDir);
    const calls: RunRequest[] = [];
    const second = await replay(options(bundle, { out: 'second', triage: 'rerun', dryRun: true }), {
      executor: promptExecutor(calls),
      log: silentLogger(),
      now,
    });
    expect(await treeHash(first.outDir)).toBe(before);
    expect(second.source).toMatchObject({
      kind: 'bundle',
      workspaceDir: first.outDir,
      originalAgent: 'codex',
    });
    expect(calls[0]?.overrides).toMatchObject({ agent: 'codex', dryRun: true, triage: { mode: 'run' } });
    expect(second.original?.sha256).toBe(first.replayed?.sha256);
    expect(second.identical).toBe(true);
    expect(formatReplay(second)).toContain('prompt: byte-identical');
  });

  it("gives a replay of a run bundle its own run id, never the original's, and compares its prompt apart from it", async () => {
    // As on a container engine: the prompt names the run's folder by its id (where the triage output is).
    const inner = promptExecutor([]);
    const executor: RunExecutor = {
      ...inner,
      run: (request) =>
        inner.run({
          ...request,
          workspace: {
            ...request.workspace,
            incidentText: `${request.workspace.incidentText}full triage output: /workspace/.triage/runs/${request.runId}/triage/output.log\n`,
          },
        }),
    };
    const ws = await makeWorkspace('inc-42');
    const first = await replay(options(ws, { out: 'first', triage: 'rerun' }), {
      executor,
      log: silentLogger(),
      now,
    });
    const second = await replay(options(first.runDir, { out: 'second', triage: 'rerun' }), {
      executor,
      log: silentLogger(),
      now,
    });
    expect(second.runId).not.toBe(first.runId);
    expect(second.runId).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    expect(second.identical).toBe(false);
    expect(second.identicalApartFromPaths).toBe(true);
    expect(formatReplay(second)).toContain('prompt: identical apart from the workspace path and run id');
    await expect(
      replay(options(first.runDir, { out: 'third', runId: first.runId }), {
        executor,
        log: silentLogger(),
        now,
      }),
    ).rejects.toThrow(
      new ReplayUsageError(
        `--run-id ${first.runId} is the id of the run being replayed; a replay gets its own: leave --run-id out for a new one, or give another`,
      ),
    );
  });

  it('names the first difference when the prompt changed', async () => {
    const ws = await makeWorkspace('inc-42');
    const first = await replay(options(ws, { out: 'a', triage: 'rerun' }), {
      executor: promptExecutor([]),
      log: silentLogger(),
      now,
    });
    const second = await replay(options(first.runDir, { out: 'b', agent: 'gemini', triage: 'rerun' }), {
      executor: promptExecutor([]),
      log: silentLogger(),
      now,
    });
    expect(second.identical).toBe(false);
    expect(second.difference).toBe('system part, line 1: "system for claude" vs "system for gemini"');
    expect(formatReplay(second)).toContain('prompt: DIFFERENT (first difference: system part, line 1');
  });

  it("reuses a bundle's triage output by default and reruns the script when it has none", async () => {
    const ws = await makeWorkspace('inc-42', {
      '.triage/runs/20261122T000000Z-aaaaaa/triage/output.log': 'saved\n',
    });
    await writeFile(path.join(ws, '.triage/runs/20261122T000000Z-aaaaaa/prompt.json'), 'not a prompt');
    const source = await resolveReplaySource(ws);
    expect(source).toMatchObject({
      kind: 'workspace',
      savedTriageLog: expect.stringContaining('output.log'),
    });
    const result = await replay(options(ws, { out: 'r' }), {
      executor: promptExecutor([]),
      log: silentLogger(),
      now,
    });
    expect(result.overrides.triage?.mode).toBe('reuse');
    expect(result.originalUnknown).toContain('cannot read the original prompt');
    const bare = await makeWorkspace('bare');
    const rerun = await replay(options(bare, { out: 'r2' }), {
      executor: promptExecutor([]),
      log: silentLogger(),
      now,
    });
    expect(rerun.overrides.triage).toEqual({ mode: 'run' });
    await expect(
      replay(options(bare, { out: 'r3', triage: 'reuse' }), {
        executor: promptExecutor([]),
        log: silentLogger(),
        now,
      }),
    ).rejects.toThrow(/has no saved triage output/);
    await expect(
      replay(options(bare, { out: 'r4', runId: '../escape' }), {
        executor: promptExecutor([]),
        log: silentLogger(),
        now,
      }),
    ).rejects.toThrow(/not a safe folder name/);
    // A refused replay leaves nothing behind.
    await expect(readdir(path.join(root, 'r3'))).rejects.toThrow(/ENOENT/);
    await expect(readdir(path.join(root, 'r4'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses to write into the original, into a non-empty folder or under the workspaces root', async () => {
    const ws = await makeWorkspace('inc-42');
    const deps = { executor: promptExecutor([]), log: silentLogger(), now };
    const before = await treeHash(ws);
    await expect(replay(options(ws, { out: path.join(ws, 'sub') }), deps)).rejects.toThrow(ReplayUsageError);
    await expect(replay(options(ws, { out: ws }), deps)).rejects.toThrow(/overlaps the original/);
    await expect(replay(options(ws, { out: root }), deps)).rejects.toThrow(/overlaps the original/);
    await mkdir(path.join(root, 'full'));
    await writeFile(path.join(root, 'full', 'x'), 'x');
    await expect(replay(options(ws, { out: 'full' }), deps)).rejects.toThrow(
      /already exists and is not empty/,
    );
    await expect(
      replay(
        options(ws, {
          out: path.join(root, 'incidents', 'r'),
          forbiddenRoots: [path.join(root, 'incidents')],
        }),
        deps,
      ),
    ).rejects.toThrow(/inside the workspaces root/);
    expect(await treeHash(ws)).toBe(before);
  });

  it('refuses an --out that reaches into the original through a symlink or a .. path', async () => {
    const ws = await makeWorkspace('inc-42');
    await mkdir(path.join(ws, 'empty-inside'));
    await symlink(ws, path.join(root, 'link-to-original'));
    await symlink(path.join(ws, 'empty-inside'), path.join(root, 'empty-link'));
    const deps = { executor: promptExecutor([]), log: silentLogger(), now };
    const before = await treeHash(ws);
    for (const out of [
      path.join(root, 'link-to-original', 'replay'),
      'empty-link',
      path.join('elsewhere', '..', 'inc-42', 'replay'),
    ]) {
      await expect(replay(options(ws, { out }), deps), out).rejects.toThrow(/overlaps the original/);
    }
    expect(await treeHash(ws)).toBe(before);
  });

  it('copies symlinked inputs as plain files, so nothing written to the replay reaches the original', async () => {
    const ws = await makeWorkspace('inc-42');
    const shared = path.join(root, 'shared-incident.json');
    await writeFile(shared, INCIDENT);
    await rm(path.join(ws, 'incident.json'));
    await symlink(shared, path.join(ws, 'incident.json'));
    const result = await replay(options(ws, { out: 'r1' }), {
      executor: promptExecutor([]),
      log: silentLogger(),
      now,
    });
    const copy = path.join(result.outDir, 'incident.json');
    expect((await lstat(copy)).isFile()).toBe(true);
    await writeFile(copy, '{"changed":true}\n');
    expect(await readFile(shared, 'utf8')).toBe(INCIDENT);
  });

  it('rejects an input that is not a workspace, bundle or example', async () => {
    await mkdir(path.join(root, 'empty'));
    await expect(resolveReplaySource(path.join(root, 'empty'))).rejects.toThrow(/has no incident.json/);
    await expect(resolveReplaySource(path.join(root, 'nope'))).rejects.toThrow(/is not a folder/);
  });

  it('hashes both prompt parts so that moving text between them changes the hash', () => {
    expect(promptSha256({ system: 'a', user: 'b' })).not.toBe(promptSha256({ system: 'ab', user: '' }));
    expect(promptSha256({ system: 'a', user: 'b' })).toBe(promptSha256({ system: 'a', user: 'b' }));
  });
});
