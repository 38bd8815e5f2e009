import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../../../src/cli/program.js';
import { PACKAGE_ROOT, PACKAGE_VERSION, type CliIO } from '../../../src/cli/io.js';
import { scratchDir } from '../../support/scratch.js';

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
    const names = (await buildProgram(io().cli, () => undefined)).commands.map((c) => c.name());
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
    const t = io({ ANTHROPIC_API_KEY: 'test-key' }, PACKAGE_ROOT);
    const code = await runCli(
      ['validate-config', path.join(PACKAGE_ROOT, 'configs/config.example.yaml')],
      t.cli,
    );
    expect(t.err()).toBe('');
    expect(code).toBe(0);
  });

  it('validate-config exits 2 and names all three paths of a file with three distinct mistakes', async () => {
    const dir = scratchDir('tr-cli-');
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
    const dir = scratchDir('tr-cli-');
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
    const dir = scratchDir('tr-cli-files-');
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

  it("exits 2 naming the persona's helpers.yaml when its tool policy is broken", async () => {
    const dir = scratchDir('tr-cli-helpers-');
    mkdirSync(path.join(dir, 'personas', 'sre'), { recursive: true });
    writeFileSync(path.join(dir, 'personas', 'sre', 'PERSONA.md'), '---\ndescription: An SRE.\n---\n# SRE\n');
    writeFileSync(path.join(dir, 'personas', 'sre', 'helpers.yaml'), "include: ['tool:browser']\n");
    const file = path.join(dir, 'c.yaml');
    writeFileSync(file, `personas_dir: ${path.join(dir, 'personas')}\npersona: sre\n`);
    const t = io({ ANTHROPIC_API_KEY: 'test-key' }, dir);
    expect(await runCli(['validate-config', file], t.cli)).toBe(2);
    expect(t.err()).toContain(
      `persona: ${path.join(dir, 'personas', 'sre', 'helpers.yaml')}: pattern "tool:browser" names no tool`,
    );
  });
});

describe('validate-config reports everything at once', () => {
  const MIXED_BOOT = 'briefs:\n  say: ["*.md"]\nalways:\n  briefs:\n    say: ["*.md"]\n';
  /** A temp folder holding c.yaml (and the other files given). */
  const configDir = (yaml: string, files: Record<string, string> = {}) => {
    const dir = scratchDir('tr-cli-check-');
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    const file = path.join(dir, 'c.yaml');
    writeFileSync(file, yaml);
    return { dir, file };
  };

  it('reports a schema mistake together with the broken files the configuration names', async () => {
    const { dir, file } = configDir(
      'scheduling:\n  max_concurrent: "four"\nboot_file: ./boot.yml\npersona: no-such-persona\n',
      { 'boot.yml': MIXED_BOOT },
    );
    const t = io({ ANTHROPIC_API_KEY: 'k' }, dir);
    expect(await runCli(['validate-config', file], t.cli)).toBe(2);
    expect(t.err()).toContain('3 problems');
    expect(t.err()).toContain('scheduling.max_concurrent');
    expect(t.err()).toMatch(/boot_file: .*mixed mode not allowed/);
    expect(t.err()).toMatch(/persona: .*no-such-persona/);
  });

  it('flags a misspelled TRIAGE_RUNNER_ variable with "did you mean", but not one a secret reads', async () => {
    const { dir, file } = configDir('secrets:\n  HOOK_TOKEN: { env: TRIAGE_RUNNER_HOOK_TOKEN }\n');
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-test-0123456789',
      TRIAGE_RUNNER_AGENT_TIMOUT: '5m',
      TRIAGE_RUNNER_HOOK_TOKEN: 'hook-token-0123456789',
      TRIAGE_RUNNER_AGENT_TIMEOUT: '10m',
    };
    const t = io(env, dir);
    expect(await runCli(['validate-config', file], t.cli)).toBe(0);
    expect(t.err()).toContain(
      'TRIAGE_RUNNER_AGENT_TIMOUT: is not a configuration variable and is ignored; did you mean TRIAGE_RUNNER_AGENT_TIMEOUT?',
    );
    expect(t.err()).toContain('1 warning');
    expect(t.err()).not.toContain('TRIAGE_RUNNER_HOOK_TOKEN');
    expect(t.out()).toContain('configuration is valid');
  });

  it('warns about an unset secret, naming the variable and the agent that needs it', async () => {
    const { dir, file } = configDir(
      'agent: { name: codex }\nsecrets:\n  CODEX_API_KEY: { env: CODEX_API_KEY }\n  OPENAI_API_KEY: { env: OPENAI_API_KEY }\n  SLACK_BOT_TOKEN: { env: SLACK_BOT_TOKEN }\n',
    );
    const none = io({}, dir);
    expect(await runCli(['validate-config', file], none.cli)).toBe(0);
    expect(none.err()).toContain(
      'secrets.CODEX_API_KEY: environment variable CODEX_API_KEY is not set; agent.name codex needs it (or OPENAI_API_KEY): its runs will fail to authenticate',
    );
    expect(none.err()).toContain('secrets.SLACK_BOT_TOKEN: environment variable SLACK_BOT_TOKEN is not set');
    const fallback = io(
      { OPENAI_API_KEY: 'sk-test-0123456789abcdef', SLACK_BOT_TOKEN: 'xoxb-test-0123456789' },
      dir,
    );
    expect(await runCli(['validate-config', file], fallback.cli)).toBe(0);
    expect(fallback.err()).toBe('');
  });

  it('warns that a key set to a short word is not redacted, without printing the value', async () => {
    const { dir, file } = configDir('persona: kubernetes-sre\n');
    const t = io({ ANTHROPIC_API_KEY: 'offline' }, dir);
    expect(await runCli(['validate-config', file], t.cli)).toBe(0);
    expect(t.err()).toContain(
      'secrets.ANTHROPIC_API_KEY: the value of ANTHROPIC_API_KEY is not redacted by value: it is 7 characters long, shorter than any real credential (8 at least)',
    );
    expect(t.err()).not.toMatch(/\boffline\b/);
    expect(t.err()).toMatch(/warning/);
  });

  it('flags a boot_file that does not exist, unless it is the default path', async () => {
    const { dir, file } = configDir('boot_file: ./no-such-boot.yml\n');
    const t = io({ ANTHROPIC_API_KEY: 'k' }, dir);
    expect(await runCli(['validate-config', file], t.cli)).toBe(2);
    expect(t.err()).toMatch(/boot_file: .*no-such-boot\.yml does not exist/);
    const fine = io({ ANTHROPIC_API_KEY: 'k' }, dir);
    writeFileSync(file, 'persona: kubernetes-sre\n');
    expect(await runCli(['validate-config', file], fine.cli)).toBe(0);
  });

  it('the daemon refuses at start, with exit 2 and the same messages, a configuration validate-config rejects', async () => {
    const { dir, file } = configDir(
      `boot_file: ./boot.yml\nengine: process\nworkspaces_root: ./incidents\nhttp: { port: 0 }\nskills: { sources: [] }\n`,
      { 'boot.yml': MIXED_BOOT },
    );
    const check = io({ ANTHROPIC_API_KEY: 'k' }, dir);
    expect(await runCli(['validate-config', file], check.cli)).toBe(2);
    const daemon = io({ ANTHROPIC_API_KEY: 'k' }, dir);
    expect(await runCli(['--config', file, 'daemon'], daemon.cli)).toBe(2);
    expect(daemon.err()).toContain(check.err().trim());
    expect(daemon.err()).toMatch(/mixed mode not allowed/);
  });
});
