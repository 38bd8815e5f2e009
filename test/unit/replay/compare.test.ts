import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compare, parseVariants, type CompareReport } from '../../../src/replay/compare.js';
import type { RunExecutor, RunRequest } from '../../../src/run/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { treeHash } from '../audit/tree-hash.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'compare-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const SECTIONS = ['Summary', 'Root Cause', 'Remediation'];

/** At the unit edge: writes result.json and a report whose content depends on agent and triage mode. */
function resultExecutor(calls: RunRequest[], failAgent?: string): RunExecutor {
  return {
    async run(request) {
      calls.push(request);
      const agent = request.overrides?.agent ?? 'claude';
      if (agent === failAgent) throw new Error(`engine for ${agent} is unreachable`);
      const runDir = path.join(request.workspace.dir, '.triage', 'runs', request.runId);
      await mkdir(runDir, { recursive: true });
      const preload = request.overrides?.triage?.mode !== 'skip';
      await mkdir(path.join(request.workspace.dir, 'output'), { recursive: true });
      await writeFile(
        path.join(request.workspace.dir, 'output', 'investigation.md'),
        preload ? '# Summary\n# Root Cause\n# Remediation\n' : '# Summary\n',
      );
      const result = {
        status: agent === 'codex' && !preload ? 'failed' : 'succeeded',
        exitCode: 0,
        agent,
        engine: 'process',
        startedAt: '2026-11-22T00:00:00.000Z',
        firstOutputAt: preload ? '2026-11-22T00:00:01.500Z' : undefined,
        ...(preload ? { firstModelCallMs: 1200 } : {}),
        ...(preload
          ? {
              measures: {
                firstModelCallMs: 1200,
                firstToolCallMs: 4800,
                investigationMs: 9500,
                inputTokens: 900,
                modelCalls: 3,
              },
            }
          : {}),
        finishedAt: '2026-11-22T00:00:10.000Z',
        durationMs: 10_000,
        tokens: { input: preload ? 900 : 300, output: 120 },
        ...(agent === 'claude' ? { costUsd: 0.0123 } : {}),
        report: { path: 'x', bytes: 40, missingSections: preload ? [] : ['Root Cause', 'Remediation'] },
        ...(agent === 'codex' && !preload ? { error: 'codex exited with code 1: rate limited' } : {}),
      };
      await writeFile(path.join(runDir, 'result.json'), JSON.stringify(result));
      return { status: 'succeeded', exitCode: 0 };
    },
    adopt: () => Promise.resolve('gone' as const),
    readiness: () => Promise.resolve({ ok: true, checks: [] }),
  };
}

async function example(): Promise<string> {
  const dir = path.join(root, 'examples', 'crashloop');
  await mkdir(path.join(dir, 'saved-triage'), { recursive: true });
  await writeFile(
    path.join(dir, 'incident.json'),
    JSON.stringify({
      incidentId: 'inc-7',
      cluster: 'c',
      namespace: 'n',
      resource: { kind: 'Pod', name: 'p' },
      faultType: 'CrashLoop',
      severity: 'high',
      timestamp: '2026-11-22T00:00:00Z',
    }),
  );
  await writeFile(path.join(dir, 'saved-triage', 'output.log'), 'triage\n');
  return dir;
}

const base = (input: string) => ({
  input,
  cwd: root,
  agents: ['claude' as const, 'codex' as const],
  variants: parseVariants('preload,no-preload'),
  out: 'cmp',
  reportSections: SECTIONS,
  minReportBytes: 0,
  maxIncidentBytes: 1 << 20,
});

describe('compare', () => {
  it('runs agents × variants as separate replays and tabulates them in compare.json and compare.md', async () => {
    const input = await example();
    const before = await treeHash(input);
    const calls: RunRequest[] = [];
    const report = await compare(base(input), { executor: resultExecutor(calls), log: silentLogger() });
    expect(await treeHash(input)).toBe(before);
    expect(calls.map((c) => [c.overrides?.agent, c.overrides?.triage?.mode])).toEqual([
      ['claude', 'reuse'],
      ['claude', 'skip'],
      ['codex', 'reuse'],
      ['codex', 'skip'],
    ]);
    expect(new Set(calls.map((c) => c.workspace.dir)).size).toBe(4);
    expect(report.complete).toBe(true);
    expect(report.cells[0]).toMatchObject({
      agent: 'claude',
      variant: 'preload',
      status: 'succeeded',
      durationMs: 10_000,
      timeToFirstOutputMs: 1500,
      timeToFirstModelCallMs: 1200,
      timeToFirstToolCallMs: 4800,
      investigationMs: 9500,
      tokens: { input: 900, output: 120 },
      costUsd: 0.0123,
      sectionsPresent: 3,
      sectionsTotal: 3,
    });
    // A failed cell says why, from the run's own result.json.
    expect(report.cells[3]).toMatchObject({
      agent: 'codex',
      variant: 'no-preload',
      status: 'failed',
      reason: 'codex exited with code 1: rate limited',
      sectionsPresent: 1,
      missingSections: ['Root Cause', 'Remediation'],
    });
    expect(report.cells[3]?.timeToFirstOutputMs).toBeUndefined();
    const json = JSON.parse(await readFile(path.join(root, 'cmp', 'compare.json'), 'utf8')) as CompareReport;
    expect(json.cells).toHaveLength(4);
    const md = await readFile(path.join(root, 'cmp', 'compare.md'), 'utf8');
    expect(md).toContain(
      '| claude | preload | succeeded | 10.0 s | 1.5 s | 1.2 s | 4.8 s | 9.5 s | 900 | 120 | $0.0123 | 3/3 | claude-preload |',
    );
    expect(md).toContain(
      '| codex | no-preload | failed: codex exited with code 1: rate limited | 10.0 s | — | — | — | — | 300 | 120 | — | 1/3 | codex-no-preload |',
    );
  });

  it('records a cell that could not run and marks the matrix incomplete', async () => {
    const input = await example();
    const report = await compare(base(input), { executor: resultExecutor([], 'codex'), log: silentLogger() });
    expect(report.complete).toBe(false);
    expect(report.cells.map((c) => c.status)).toEqual(['succeeded', 'succeeded', 'error', 'error']);
    expect(report.cells[2]?.error).toContain('engine for codex is unreachable');
    expect(await readFile(path.join(root, 'cmp', 'compare.md'), 'utf8')).toContain('Some cells did not run');
  });

  it('records a cell whose result.json is not JSON as an error and still writes the other cells', async () => {
    const input = await example();
    const inner = resultExecutor([]);
    const executor: RunExecutor = {
      ...inner,
      async run(request) {
        const outcome = await inner.run(request);
        if (request.overrides?.agent === 'codex' && request.overrides.triage?.mode === 'skip') {
          const runDir = path.join(request.workspace.dir, '.triage', 'runs', request.runId);
          await writeFile(path.join(runDir, 'result.json'), '{"status":"succ');
        }
        return outcome;
      },
    };
    const report = await compare(base(input), { executor, log: silentLogger() });
    expect(report.cells.map((c) => c.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'error']);
    expect(report.cells[3]?.error).toMatch(/result\.json is not valid JSON/);
    expect(report.complete).toBe(false);
    expect(await readFile(path.join(root, 'cmp', 'compare.md'), 'utf8')).toContain('| codex | preload |');
  });

  it('refuses an output folder inside the saved incident and leaves it untouched', async () => {
    const input = await example();
    const before = await treeHash(input);
    await expect(
      compare(
        { ...base(input), out: path.join(input, 'cmp') },
        { executor: resultExecutor([]), log: silentLogger() },
      ),
    ).rejects.toThrow(/overlaps the original/);
    expect(await treeHash(input)).toBe(before);
  });

  it('rejects unknown variants and a non-empty output folder', async () => {
    expect(() => parseVariants('preload,turbo')).toThrow(/unknown turbo; valid: preload, no-preload/);
    const input = await example();
    await mkdir(path.join(root, 'cmp'));
    await writeFile(path.join(root, 'cmp', 'x'), '');
    await expect(compare(base(input), { executor: resultExecutor([]), log: silentLogger() })).rejects.toThrow(
      /not empty/,
    );
  });
});
