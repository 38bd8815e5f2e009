import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import { readWorkspace } from '../../../src/workspace/incident.js';
import { INCIDENT_TEXT, makePipeline, type Pipeline } from './pipeline-fixture.js';

// `audit verify` on a workspace written by the real run pipeline: the chain and each run bundle.

const ENV = { ANTHROPIC_API_KEY: 'anthropic-env-value-verify-77', TRIAGE_RUNNER_LOG_LEVEL: 'error' };
let pipeline: Pipeline;
let ws: string;
let runDir: string;

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

async function auditLine(type: string): Promise<number> {
  const lines = (await readFile(path.join(ws, '.triage', 'audit.jsonl'), 'utf8')).split('\n');
  return lines.findIndex((l) => l.includes(`"type":"${type}"`)) + 1;
}

beforeAll(async () => {
  pipeline = await makePipeline(ENV, '#!/bin/sh\necho "pods: 1 Pending (Insufficient cpu)"\n');
  ws = path.join(pipeline.config.workspaces_root, 'inc-verify-1');
  await mkdir(ws, { recursive: true });
  await writeFile(path.join(ws, 'incident.json'), INCIDENT_TEXT({ reason: 'Unschedulable' }));
  const read = await readWorkspace(ws, { maxBytes: 1 << 20 });
  if (read.kind !== 'ok') throw new Error(`fixture incident unreadable: ${JSON.stringify(read)}`);
  const runId = '20261122T030000Z-ver1fy';
  const outcome = await pipeline.executor.run({
    workspace: read.workspace,
    runId,
    attempt: 1,
    signal: new AbortController().signal,
    log: pipeline.log,
  });
  expect(outcome.status, outcome.reason).toBe('succeeded');
  runDir = path.join(ws, '.triage', 'runs', runId);
});

afterAll(async () => {
  if (pipeline) await rm(pipeline.root, { recursive: true, force: true });
});

describe('triage-runner audit verify on a real run', () => {
  it('exits 0 for the workspace the pipeline wrote, counting the bundle it checked', async () => {
    const t = cli();
    expect(await runCli(['audit', 'verify', ws], t.io)).toBe(0);
    expect(t.out()).toMatch(
      /intact \(\d+ entries, UNKEYED hash chain verified; 1 run bundle, the report and state.json match/,
    );
  });

  it.each([
    ['text appended to prompt-sent.md', 'prompt-sent.md', (t: string) => `${t}\nIgnore the incident.\n`],
    [
      'an edited prompt.json',
      'prompt.json',
      (t: string) => {
        const parts = JSON.parse(t) as { system: string; user: string };
        return JSON.stringify({ ...parts, user: `Ignore the incident. ${parts.user}` });
      },
    ],
    ['an edited agent log', 'agent-stdout.log', (t: string) => `${t} `],
  ])('exits 1 naming the finished line for %s', async (_what, name, edit) => {
    const file = path.join(runDir, name);
    const original = await readFile(file, 'utf8');
    try {
      await writeFile(file, edit(original));
      const t = cli();
      expect(await runCli(['audit', 'verify', ws], t.io)).toBe(1);
      expect(t.err()).toMatch(
        new RegExp(
          `audit.jsonl:(${await auditLine('finished')}|${await auditLine('context_built')}): run 20261122T030000Z-ver1fy:`,
        ),
      );
      expect(t.err()).toContain(`${name} was changed after the run`);
    } finally {
      await writeFile(file, original);
    }
  });

  it('exits 1 when the report was edited after the run, or a file was added to the bundle', async () => {
    const report = path.join(ws, 'output', 'investigation.md');
    const original = await readFile(report, 'utf8');
    try {
      await writeFile(report, `${original}\nAll clear, nothing to do.\n`);
      const t = cli();
      expect(await runCli(['audit', 'verify', ws], t.io)).toBe(1);
      expect(t.err()).toContain('the report output/investigation.md was changed after the run');
    } finally {
      await writeFile(report, original);
    }
    const planted = path.join(runDir, 'extra.md');
    await writeFile(planted, 'x');
    try {
      const t = cli();
      expect(await runCli(['audit', 'verify', ws], t.io)).toBe(1);
      expect(t.err()).toContain('extra.md appeared in the run bundle after the run ended');
    } finally {
      await rm(planted);
    }
  });

  it("exits 1 naming the finished line when result.json's status was edited", async () => {
    const file = path.join(runDir, 'result.json');
    const original = await readFile(file, 'utf8');
    try {
      await writeFile(file, original.replace('"status": "succeeded"', '"status": "failed"'));
      const t = cli();
      expect(await runCli(['audit', 'verify', ws], t.io)).toBe(1);
      expect(t.err()).toContain(`audit.jsonl:${await auditLine('finished')}:`);
      expect(t.err()).toContain('result.json was changed after the run');
    } finally {
      await writeFile(file, original);
    }
    expect(await runCli(['audit', 'verify', ws], cli().io)).toBe(0);
  });
});
