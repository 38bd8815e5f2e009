// `triage-runner eval` usage errors exit 2 with a message that says what was wrong and what to do,
// before any case runs.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEvalCommand } from '../../../src/cli/commands/eval.js';
import { CliExit, type CliIO } from '../../../src/cli/io.js';
import { tempDir } from '../../support/runs.js';

let root: { dir: string; cleanup: () => Promise<void> };
let io: CliIO;
beforeEach(async () => {
  root = await tempDir('triage-eval-cmd-');
  io = { stdout: () => undefined, stderr: () => undefined, env: {}, cwd: root.dir };
});
afterEach(async () => root.cleanup());

const flags = { variants: 'preload', repeat: '1' };
const usage = async (input: string, extra: Record<string, string> = {}) => {
  const err = await runEvalCommand(input, { ...flags, ...extra }, undefined, io).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(CliExit);
  expect((err as CliExit).code).toBe(2);
  return (err as CliExit).message;
};

describe('eval command usage', () => {
  it('refuses bad --repeat, --min-score and --variants values', async () => {
    expect(await usage('x', { repeat: '0' })).toBe('--repeat "0": expected a whole number from 1 to 100');
    expect(await usage('x', { minScore: '1.5' })).toBe('--min-score "1.5": expected a number from 0 to 1');
    expect(await usage('x', { variants: 'preload,cached' })).toMatch(
      /unknown cached; valid: preload, no-preload/,
    );
  });

  it('names a folder that holds no case and says what a case is', async () => {
    await mkdir(path.join(root.dir, 'empty'));
    expect(await usage('empty')).toMatch(
      /holds no eval case: a case is a folder with incident.json, expected.yaml and cluster\//,
    );
  });

  it('lists every problem of an answer key before running anything', async () => {
    const dir = path.join(root.dir, 'suite', 'broken');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'incident.json'), '{}');
    await writeFile(
      path.join(dir, 'expected.yaml'),
      'summary: x\nroot_cause:\n  entities: []\nfacts:\n  - id: f\n    any: ["/unclosed(/"]\n',
    );
    const message = await usage('suite');
    expect(message).toContain('expected.yaml has 2 problem(s)');
    expect(message).toContain('root_cause.entities:');
    expect(message).toContain('facts.0.any.0: not a valid regular expression');
  });
});

describe('eval without the agent CLI', () => {
  it('counts every cell as an error, exits 1 and says how to install the CLI', async () => {
    const out: string[] = [];
    const cli: CliIO = {
      stdout: (t) => void out.push(t),
      stderr: () => undefined,
      env: { PATH: '/nonexistent-bin', ANTHROPIC_API_KEY: 'sk-ant-test-0123456789' },
      cwd: root.dir,
    };
    const suite = path.join(
      import.meta.dirname,
      '..',
      '..',
      '..',
      'examples',
      'evals',
      'crashloop-bad-config',
    );
    const code = await runEvalCommand(
      suite,
      { ...flags, agents: 'claude', engine: 'process', out: path.join(root.dir, 'out') },
      path.join(import.meta.dirname, '..', '..', 'fixtures', 'evals', 'offline.yaml'),
      cli,
    );
    expect(code).toBe(1);
    const text = out.join('');
    expect(text).toMatch(/\| claude \| [^|]+ \| preload \| 0\/1 \|.*\| 1 \|\n/);
    expect(text).toContain(
      'agent CLI claude is not on PATH: install it with `npm install -g @anthropic-ai/claude-code`',
    );
  });
});
