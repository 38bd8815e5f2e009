import { execa } from 'execa';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import { FIXTURES, incident, REPO_ROOT, tempDir } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const AGENT_KEYS = {
  ANTHROPIC_API_KEY: 'test-anthropic-key',
  CODEX_API_KEY: 'test-codex-key',
  GEMINI_API_KEY: 'test-gemini-key',
};

function fakeIO(cwd: string, env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    // Every agent's key set: an unset one is a warning on stderr (tested with validate-config).
    env: { PATH: process.env.PATH, ...AGENT_KEYS, ...env },
    cwd,
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}

/** A git repository holding one skill, with one commit on main; resolves to its folder. */
async function gitRepo(root: string): Promise<string> {
  const repo = path.join(root, 'repo');
  await mkdir(path.join(repo, 'skills/demo'), { recursive: true });
  await writeFile(path.join(repo, 'skills/demo/SKILL.md'), '---\nname: demo\ndescription: demo skill\n---\n');
  const env = {
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e',
  };
  await execa('git', ['init', '-q', '-b', 'main'], { cwd: repo });
  await execa('git', ['add', '-A'], { cwd: repo });
  await execa('git', ['commit', '-q', '-m', 'one'], { cwd: repo, env });
  return repo;
}

async function setup(sources: unknown[] = [{ name: 'k8s4agents', path: FIXTURES }]) {
  const t = await tempDir('tr-cli-');
  cleanups.push(t.cleanup);
  const ws = path.join(t.dir, 'incidents', 'inc-42');
  await mkdir(ws, { recursive: true });
  await writeFile(path.join(ws, 'incident.json'), JSON.stringify(incident, null, 2));
  await writeFile(path.join(ws, 'incident_cluster_permissions.json'), '{"can_get_pods":true}');
  const configFile = path.join(t.dir, 'config.yaml');
  const yaml = [
    `system_prompt_file: ${path.join(REPO_ROOT, 'configs/triage-system-prompt.md')}`,
    `user_prompt_file: ${path.join(REPO_ROOT, 'configs/user-prompt.md')}`,
    `personas_dir: ${path.join(REPO_ROOT, 'configs/personas')}`,
    `briefs_dir: ${path.join(REPO_ROOT, 'configs/briefs')}`,
    `boot_file: ${path.join(REPO_ROOT, 'configs/boot.yml')}`,
    'skills:',
    `  cache_dir: ${path.join(t.dir, 'cache')}`,
    `  sources: ${JSON.stringify(sources)}`,
    '  triage: { script: failing.sh, args: [] }',
  ].join('\n');
  await writeFile(configFile, `${yaml}\n`);
  return { dir: t.dir, ws, configFile };
}

describe('triage-runner context', () => {
  it('prints {prompt, context} as JSON without writing into the workspace', async () => {
    const { ws, configFile, dir } = await setup();
    const cli = fakeIO(dir);
    const code = await runCli(['--config', configFile, 'context', ws, '--agent', 'gemini', '--json'], cli.io);
    expect(cli.stderr()).toBe('');
    expect(code).toBe(0);
    const parsed = JSON.parse(cli.stdout()) as {
      prompt: { system: string; user: string };
      context: Record<string, unknown>;
    };
    expect(Object.keys(parsed)).toEqual(['prompt', 'context']);
    expect(Object.keys(parsed.prompt)).toEqual(['system', 'user']);
    expect(Object.keys(parsed.context).slice(0, 5)).toEqual([
      'estimator',
      'budget',
      'totalTokens',
      'sections',
      'skills',
    ]);
    const sections = parsed.context.sections as Record<string, unknown>[];
    for (const row of sections)
      expect(Object.keys(row)).toEqual(['tag', 'tokens', 'originalTokens', 'truncated']);
    expect(parsed.context.skills).toEqual([
      { source: 'k8s4agents', commit: expect.stringMatching(/^local:/) },
    ]);
    expect(parsed.prompt.user).toContain('<incident>\n{\n  "incidentId": "inc-42"');
    expect(parsed.context).toMatchObject({
      agent: 'gemini',
      safetyFactor: 1.3,
      estimator: 'o200k',
      triage: { status: 'failed', exitCode: 3 },
    });
    expect(await readdir(ws)).toEqual(['incident.json', 'incident_cluster_permissions.json']);
  });

  it('prints the exact prompt and the token table in text mode, honouring --no-triage and --subject', async () => {
    const { ws, configFile, dir } = await setup();
    const cli = fakeIO(dir);
    const code = await runCli(
      ['--config', configFile, 'context', ws, '--no-triage', '--subject', 'oom'],
      cli.io,
    );
    expect(code).toBe(0);
    const text = cli.stdout();
    expect(text).toContain('===== system prompt =====\n# Incident investigation');
    expect(text).toMatch(/initial_triage_report\s+\d+\s+\d+\s+no/);
    expect(text).toMatch(/total\s+\d+\s+budget 10000 \(warn 8000\)/);
    expect(text).toContain('Level-1 disclosure cost:');
    expect(text).toContain('triage: disabled');
    expect(text).toMatch(/subjects oom/);
  });

  it('exits 2 and says what is wrong for a bad workspace path or conflicting flags', async () => {
    const { configFile, dir } = await setup();
    const cli = fakeIO(dir);
    expect(await runCli(['--config', configFile, 'context', path.join(dir, 'nope')], cli.io)).toBe(2);
    expect(cli.stderr()).toMatch(
      /workspace .*nope does not exist; give the incident folder that holds incident.json/,
    );
    const cli2 = fakeIO(dir);
    expect(await runCli(['--config', configFile, 'context', dir], cli2.io)).toBe(2);
    expect(cli2.stderr()).toMatch(/has no incident.json/);
    const cli3 = fakeIO(dir);
    expect(
      await runCli(
        ['--config', configFile, 'context', dir, '--no-triage', '--reuse-triage', configFile],
        cli3.io,
      ),
    ).toBe(2);
    const cli4 = fakeIO(dir);
    expect(await runCli(['--config', configFile, 'context', dir, '--agent', 'nobody'], cli4.io)).toBe(2);
  });

  it('works when the only skills source is unavailable, reporting the reason', async () => {
    const { ws, configFile, dir } = await setup([
      { name: 'k8s4agents', git: 'https://skills.invalid/k8s4agents', ref: 'main' },
    ]);
    const cli = fakeIO(dir);
    const code = await runCli(['--config', configFile, 'context', ws, '--json'], cli.io);
    expect(code).toBe(0);
    const { context } = JSON.parse(cli.stdout()) as {
      context: { incompleteReasons: string[]; triage: { status: string } };
    };
    expect(context.triage.status).toBe('missing');
    expect(context.incompleteReasons[0]).toMatch(/^skills source k8s4agents unavailable: /);
  });

  it('exits 2 naming the unknown subject and the known ones when --subject names a subject boot.yml does not define', async () => {
    const { ws, configFile, dir } = await setup();
    const cli = fakeIO(dir);
    const args = ['--config', configFile, 'context', ws, '--no-triage', '--subject', 'crashloop,nosuch'];
    expect(await runCli(args, cli.io)).toBe(2);
    // The last line: before it, the run's cluster check (as a run makes it) may have warned.
    expect(cli.stderr().trimEnd().split('\n').at(-1)).toMatch(
      /^subject not found: nosuch \(known: crashloop, oom, /,
    );
    expect(cli.stdout()).toBe('');
  });

  it('goes on without the skills as a run does, naming skills.cache_dir, when the cache cannot be created, and leaves no temp folder behind', async () => {
    const { ws, dir } = await setup();
    const blocker = path.join(dir, 'not-a-folder');
    await writeFile(blocker, 'x');
    const configFile = path.join(dir, 'bad-cache.yaml');
    const yaml = (await readFile(path.join(dir, 'config.yaml'), 'utf8'))
      .replace(/cache_dir: .*/, `cache_dir: ${path.join(blocker, 'cache')}`)
      .replace(
        /sources: .*/,
        `sources: [{ name: k8s4agents, git: ${path.join(dir, 'no-repo')}, ref: main }]`,
      );
    await writeFile(configFile, yaml);
    const previews = async () =>
      (await readdir(os.tmpdir())).filter((n) => n.startsWith('triage-runner-context-'));
    const before = new Set(await previews());
    const cli = fakeIO(dir);
    // As a run does: the preview goes on without the sources it cannot cache, and says why.
    expect(await runCli(['--config', configFile, 'context', ws, '--no-triage'], cli.io)).toBe(0);
    expect(cli.stderr()).toContain(`skills.cache_dir ${path.join(blocker, 'cache')} cannot be created`);
    expect(cli.stderr()).toContain('the run goes on without those sources');
    expect(cli.stdout()).toContain('===== system prompt =====');
    expect((await previews()).filter((n) => !before.has(n))).toEqual([]);
  });
});

describe('triage-runner context names what a real run would use', () => {
  it('names the workspace run folder, never its deleted temporary one, in the marker and context.json', async () => {
    const { ws, configFile, dir } = await setup();
    await writeFile(configFile, `${await readFile(configFile, 'utf8')}engine: process\n`);
    const cli = fakeIO(dir);
    expect(await runCli(['--config', configFile, 'context', ws, '--json'], cli.io)).toBe(0);
    const { prompt, context } = JSON.parse(cli.stdout()) as {
      prompt: { system: string; user: string };
      context: { triage: { logPath: string; reason: string } };
    };
    const real = path.join(ws, '.triage', 'runs', '<run-id>', 'triage', 'output.log');
    expect(prompt.system).toContain(`Full output: ${real}]`);
    expect(context.triage.logPath).toBe(real);
    expect(context.triage.reason).toContain(real);
    expect(cli.stdout()).not.toContain(path.join(os.tmpdir(), 'triage-runner-context-'));
    expect(await readdir(ws)).toEqual(['incident.json', 'incident_cluster_permissions.json']);
  });

  it('run from another folder, keeps the skills cache where the config file says (relative to the file), creating nothing in the working folder', async () => {
    const t = await tempDir('tr-cli-repo-');
    cleanups.push(t.cleanup);
    const repo = await gitRepo(t.dir);
    const { ws, configFile, dir } = await setup([{ name: 'k8s4agents', git: repo, ref: 'main' }]);
    await writeFile(
      configFile,
      (await readFile(configFile, 'utf8')).replace(/cache_dir: .*/, 'cache_dir: ./cache-rel'),
    );
    const elsewhere = await tempDir('tr-cli-cwd-');
    cleanups.push(elsewhere.cleanup);
    const cli = fakeIO(elsewhere.dir);
    expect(await runCli(['--config', configFile, 'context', ws, '--no-triage', '--json'], cli.io)).toBe(0);
    const { prompt } = JSON.parse(cli.stdout()) as { prompt: { system: string } };
    expect(prompt.system).toContain('# Incident investigation');
    expect(await readdir(elsewhere.dir)).toEqual([]);
    expect(await readdir(path.join(dir, 'cache-rel'))).not.toEqual([]);
  });

  it('refuses a configuration validate-config rejects (mixed-mode boot.yml) with exit 2 and the same message', async () => {
    const { ws, configFile, dir } = await setup();
    const boot = path.join(dir, 'mixed-boot.yml');
    await writeFile(boot, 'briefs: {}\nalways: {}\n');
    await writeFile(
      configFile,
      (await readFile(configFile, 'utf8')).replace(/boot_file: .*/, `boot_file: ${boot}`),
    );
    const check = fakeIO(dir);
    expect(await runCli(['validate-config', configFile], check.io)).toBe(2);
    const cli = fakeIO(dir);
    expect(await runCli(['--config', configFile, 'context', ws, '--no-triage'], cli.io)).toBe(2);
    expect(cli.stdout()).toBe('');
    expect(cli.stderr()).toContain(check.stderr().trim());
    expect(cli.stderr()).toMatch(/boot_file: .*mixed mode not allowed/);
  });
});

describe('triage-runner skills', () => {
  it('syncs a git source and lists it with its commit; a source with no cache makes sync exit 1', async () => {
    const t = await tempDir('tr-cli-git-');
    cleanups.push(t.cleanup);
    const repo = await gitRepo(t.dir);
    const sha = (await execa('git', ['rev-parse', 'HEAD'], { cwd: repo })).stdout.trim();
    const { configFile, dir } = await setup([{ name: 'demo', git: repo, ref: 'main' }]);
    const sync = fakeIO(dir);
    expect(await runCli(['--config', configFile, 'skills', 'sync'], sync.io)).toBe(0);
    expect(sync.stdout()).toMatch(
      new RegExp(`demo\\s+project\\s+main\\s+${sha.slice(0, 12)}\\s+\\d{4}-.*\\s+ok`),
    );
    const list = fakeIO(dir);
    expect(await runCli(['--config', configFile, 'skills', 'list', '--json'], list.io)).toBe(0);
    expect(JSON.parse(list.stdout())[0]).toMatchObject({ name: 'demo', commit: sha, status: 'ok' });

    const broken = await setup([{ name: 'gone', git: path.join(t.dir, 'missing-repo'), ref: 'main' }]);
    const bad = fakeIO(broken.dir);
    expect(await runCli(['--config', broken.configFile, 'skills', 'sync'], bad.io)).toBe(1);
    expect(bad.stderr()).toMatch(/skills source gone unavailable: git clone/);
  });
});
