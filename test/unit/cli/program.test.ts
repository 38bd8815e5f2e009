import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../../../src/cli/program.js';
import { PACKAGE_ROOT, PACKAGE_VERSION, type CliIO } from '../../../src/cli/io.js';

function io(env: Record<string, string> = {}, cwd = tmpdir()) {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env, cwd };
  return { cli, out: () => out.join(''), err: () => err.join('') };
}

describe('command line', () => {
  it('prints the package version with --version and exits 0', async () => {
    const t = io();
    expect(await runCli(['--version'], t.cli)).toBe(0);
    expect(t.out().trim()).toBe(PACKAGE_VERSION);
  });

  it('gives --help for every command, each mentioning --config from the program', async () => {
    const names = buildProgram(io().cli, () => undefined).commands.map((c) => c.name());
    expect(names).toContain('validate-config');
    for (const name of names) {
      const t = io();
      expect(await runCli([name, '--help'], t.cli), name).toBe(0);
      expect(t.out(), name).toContain(`Usage: triage-runner ${name}`);
    }
  });

  it('exits 2 on an unknown command or option', async () => {
    expect(await runCli(['frobnicate'], io().cli)).toBe(2);
    expect(await runCli(['validate-config', '--nope'], io().cli)).toBe(2);
  });

  it('validate-config exits 0 for the shipped example config, run from the project root', async () => {
    const t = io({}, PACKAGE_ROOT);
    const code = await runCli(
      ['validate-config', path.join(PACKAGE_ROOT, 'configs/config.example.yaml')],
      t.cli,
    );
    expect(t.err()).toBe('');
    expect(code).toBe(0);
  });

  it('validate-config exits 2 and names all three paths of a file with three distinct mistakes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tr-cli-'));
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(file, 'agent:\n  max_turns: "many"\n  colour: red\nscheduling:\n  max_concurrent: 0\n');
    const t = io({}, dir);
    expect(await runCli(['validate-config', file], t.cli)).toBe(2);
    expect(t.err()).toContain('agent.max_turns');
    expect(t.err()).toContain('agent.colour');
    expect(t.err()).toContain('scheduling.max_concurrent');
    expect(t.err()).toContain('3 problems');
  });

  it('validate-config takes the file from the global --config option', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tr-cli-'));
    const file = path.join(dir, 'c.yaml');
    writeFileSync(file, 'engine: podman\n');
    const t = io({}, dir);
    expect(await runCli(['--config', file, 'validate-config'], t.cli)).toBe(2);
    expect(t.err()).toContain('engine: expected one of "docker", "process", "kubernetes"');
  });
});

describe('command groups', () => {
  it('exits 2 when a command that needs a subcommand gets none', async () => {
    for (const group of ['skills', 'audit']) {
      const t = io();
      expect(await runCli([group], t.cli), group).toBe(2);
    }
  });
});

describe('validate-config and the files a configuration names', () => {
  it('exits 2 naming boot_file, persona and system_prompt_file when they are broken or missing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tr-cli-files-'));
    writeFileSync(
      path.join(dir, 'boot.yml'),
      'briefs:\n  say: ["*.md"]\nalways:\n  briefs:\n    say: ["*.md"]\n',
    );
    const file = path.join(dir, 'c.yaml');
    writeFileSync(
      file,
      [
        `boot_file: ${path.join(dir, 'boot.yml')}`,
        `personas_dir: ${PACKAGE_ROOT}/configs/personas`,
        'persona: no-such-persona',
        `system_prompt_file: ${path.join(dir, 'missing.md')}`,
        '',
      ].join('\n'),
    );
    const t = io({}, dir);
    expect(await runCli(['validate-config', file], t.cli)).toBe(2);
    expect(t.err()).toContain('3 problems');
    expect(t.err()).toMatch(/boot_file: .*mixed mode not allowed/);
    expect(t.err()).toMatch(/persona: .*kubernetes-sre/);
    expect(t.err()).toMatch(/system_prompt_file: .*missing\.md cannot be read/);
  });
});
