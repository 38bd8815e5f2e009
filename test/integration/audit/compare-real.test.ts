import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import type { CompareReport } from '../../../src/replay/compare.js';
import { treeHash } from '../../unit/audit/tree-hash.js';
import { makePipeline, REPO_ROOT, type Pipeline } from './pipeline-fixture.js';

// `compare` and `replay` of a shipped example through the real command and pipeline (process engine,
// a fake agent CLI that answers like Claude Code).

const ENV = { ANTHROPIC_API_KEY: 'anthropic-env-value-compare-99', TRIAGE_RUNNER_LOG_LEVEL: 'error' };
const EXAMPLE = path.join(REPO_ROOT, 'examples', 'incidents', 'crashloop-payments-api');
let pipeline: Pipeline;

function cli() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: ENV,
    cwd: pipeline.root,
  };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

beforeAll(async () => {
  pipeline = await makePipeline(
    ENV,
    '#!/bin/sh\necho "the triage script must not run when output is reused" >&2\nexit 3\n',
  );
});
afterAll(async () => {
  if (pipeline) await rm(pipeline.root, { recursive: true, force: true });
});

describe('triage-runner compare (real pipeline)', () => {
  it('runs agents × variants for a saved example and writes compare.md and compare.json', async () => {
    const before = await treeHash(EXAMPLE);
    const t = cli();
    const code = await runCli(
      [
        '--config',
        'config.yaml',
        'compare',
        EXAMPLE,
        '--agents',
        'claude,codex',
        '--variants',
        'preload,no-preload',
        '--out',
        'cmp',
      ],
      t.io,
    );
    expect(t.err()).toBe('');
    expect(code).toBe(0);
    expect(await treeHash(EXAMPLE)).toBe(before);
    const report = JSON.parse(
      await readFile(path.join(pipeline.root, 'cmp', 'compare.json'), 'utf8'),
    ) as CompareReport;
    expect(report.complete).toBe(true);
    expect(report.cells.map((c) => `${c.agent}/${c.variant}`)).toEqual([
      'claude/preload',
      'claude/no-preload',
      'codex/preload',
      'codex/no-preload',
    ]);
    const claude = report.cells[0];
    expect(claude).toMatchObject({
      status: 'succeeded',
      tokens: { input: 1200, output: 340 },
      costUsd: 0.0042,
      sectionsPresent: 7,
      sectionsTotal: 7,
    });
    expect(claude?.durationMs).toBeGreaterThan(0);
    // The fake agent prints Claude's JSON, which the Codex adapter cannot read: the cell ran, the agent failed.
    expect(report.cells[2]?.status).toBe('failed');
    const contexts = await Promise.all(
      report.cells.map(async (c) => {
        const context = JSON.parse(
          await readFile(path.join(c.workspace, '.triage', 'runs', String(c.runId), 'context.json'), 'utf8'),
        ) as {
          triage: { status: string };
        };
        return context.triage.status;
      }),
    );
    expect(contexts).toEqual(['reused', 'disabled', 'reused', 'disabled']);
    const md = await readFile(path.join(pipeline.root, 'cmp', 'compare.md'), 'utf8');
    expect(md).toContain(
      '| agent | variant | status | duration | first output | first model call | first investigation turn | last model call | input tokens | output tokens | cost | report sections | workspace |',
    );
    expect(md).toMatch(
      /\| claude \| preload \| succeeded \| [\d.]+ s \| .+ \| .+ \| .+ \| .+ \| 1200 \| 340 \| \$0\.0042 \| 7\/7 \| claude-preload \|/,
    );
    expect(t.out()).toContain('compare.md');
  });

  it('exits 2 for an unknown agent or variant', async () => {
    const a = cli();
    expect(
      await runCli(['--config', 'config.yaml', 'compare', EXAMPLE, '--agents', 'claude,hal'], a.io),
    ).toBe(2);
    expect(a.err()).toContain('unknown hal');
    const b = cli();
    expect(await runCli(['--config', 'config.yaml', 'compare', EXAMPLE, '--variants', 'turbo'], b.io)).toBe(
      2,
    );
    expect(b.err()).toContain('valid: preload, no-preload');
  });
});

describe('triage-runner replay of a shipped example', () => {
  it('reuses the saved triage output, needs no cluster and gives the same prompt twice, apart from the run id each replay has of its own', async () => {
    const before = await treeHash(EXAMPLE);
    const a = cli();
    const b = cli();
    expect(
      await runCli(
        ['--config', 'config.yaml', 'replay', EXAMPLE, '--engine', 'docker', '--dry-run', '--out', 'e1'],
        a.io,
      ),
    ).toBe(0);
    expect(
      await runCli(
        ['--config', 'config.yaml', 'replay', EXAMPLE, '--engine', 'docker', '--dry-run', '--out', 'e2'],
        b.io,
      ),
    ).toBe(0);
    expect(a.out()).toContain('triage: reuse saved output');
    expect(a.out()).toContain('original prompt sha256: unknown');
    expect(/replayed prompt sha256: ([0-9a-f]{64})/.exec(a.out())?.[1]).toMatch(/^[0-9a-f]{64}$/);
    // Each replay is a run of its own, with its own run id; apart from it the prompts are the same.
    const sent = async (text: string) => {
      const [, into, runId] = /into (.+)\n[\s\S]*?run (\S+):/.exec(text) ?? [];
      const prompt = await readFile(path.join(into!, '.triage', 'runs', runId!, 'prompt.json'), 'utf8');
      expect(prompt).toContain(runId!);
      return prompt.replaceAll(runId!, '<run-id>').replaceAll(into!, '<out>');
    };
    const [first, second] = [await sent(a.out()), await sent(b.out())];
    expect(/run (\S+):/.exec(a.out())?.[1]).not.toBe(/run (\S+):/.exec(b.out())?.[1]);
    expect(first).toBe(second);
    expect(await treeHash(EXAMPLE)).toBe(before);
  });
});
