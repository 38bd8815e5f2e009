import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, configKeys, envName, inspectConfig, loadConfig } from '../../../src/config/index.js';
import { scratchDir } from '../../support/scratch.js';

function tempConfig(yaml: string): { dir: string; file: string } {
  const dir = scratchDir('tr-config-');
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, yaml);
  return { dir, file };
}

function problemsOf(fn: () => unknown): ConfigError['problems'] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration defaults', () => {
  it('uses the documented defaults: budget warn 8000 / truncate 10000, triage timeout 30s, agent timeout 15m', () => {
    const { config } = loadConfig({ env: {}, cwd: tmpdir() });
    expect(config.context.budget).toEqual({ warn: 8000, truncate: 10_000 });
    expect(config.skills.triage.timeout).toBe(30_000);
    expect(config.agent.timeout).toBe(15 * 60_000);
    expect(config.scheduling.max_concurrent).toBe(4);
    expect(config.context.estimator).toBe('o200k');
    expect(config.skills.sources[0]).toMatchObject({
      name: 'k8s4agents',
      git: 'https://github.com/randybias/k8s4agents',
    });
  });

  it("listens by default on a port that is neither kubectl's fallback (8080) nor another well-known one", () => {
    const { config } = loadConfig({ env: {}, cwd: tmpdir() });
    // kubectl without a kubeconfig asks localhost:8080; 8081 is the pod broker's, 9090/9093 Prometheus
    // and Alertmanager's, 8001 kubectl proxy's, 3000 Grafana's, 6443/8443/10250 the API server's and kubelet's.
    const taken = [80, 443, 3000, 8000, 8001, 8080, 8081, 8443, 8888, 9090, 9093, 9100, 6443, 10250];
    expect(taken).not.toContain(config.http.port);
    expect(config.http.port).toBe(8742);
  });

  it('resolves built-in default paths against the package root, wherever the command runs, but the workspaces root against the working directory', () => {
    const cwd = scratchDir('tr-cwd-');
    const { config } = loadConfig({ env: {}, cwd, packageRoot: '/opt/triage-runner' });
    // The incidents are the user's, where the command runs; the shipped files are the package's.
    expect(config.workspaces_root).toBe(path.join(cwd, 'incidents'));
    expect(config.skills.cache_dir).toBe('/opt/triage-runner/agent-home/skills');
    expect(config.boot_file).toBe('/opt/triage-runner/configs/boot.yml');
  });

  it('resolves paths written in a config file against its folder, and env or flag paths against the working directory', () => {
    const { file, dir } = tempConfig(
      [
        'skills:',
        '  cache_dir: ./cache',
        '  sources: [{ name: local, path: ../skills-src }]',
        'boot_file: boot.yml',
        'secrets:',
        '  TOKEN: { file: ./secret.txt }',
        '',
      ].join('\n'),
    );
    const cwd = scratchDir('tr-elsewhere-');
    const { config } = loadConfig({
      file,
      env: { TRIAGE_RUNNER_WORKSPACES_ROOT: 'from-env' },
      flags: { personas_dir: 'from-flag' },
      cwd,
      packageRoot: '/opt/triage-runner',
    });
    expect(config.skills.cache_dir).toBe(path.join(dir, 'cache'));
    expect(config.skills.sources[0]?.path).toBe(path.join(path.dirname(dir), 'skills-src'));
    expect(config.boot_file).toBe(path.join(dir, 'boot.yml'));
    expect(config.secrets.TOKEN?.file).toBe(path.join(dir, 'secret.txt'));
    expect(config.workspaces_root).toBe(path.join(cwd, 'from-env'));
    expect(config.personas_dir).toBe(path.join(cwd, 'from-flag'));
    expect(config.user_prompt_file).toBe('/opt/triage-runner/configs/user-prompt.md');
  });
});

describe('configuration precedence', () => {
  const { file, dir } = tempConfig(
    'scheduling:\n  max_concurrent: 3\nagent:\n  timeout: 5m\n  name: codex\n',
  );

  it('a file value beats the default', () => {
    const { config } = loadConfig({ file, env: {}, cwd: dir });
    expect(config.scheduling.max_concurrent).toBe(3);
    expect(config.agent.timeout).toBe(300_000);
  });

  it('an environment variable beats the file', () => {
    const env = { TRIAGE_RUNNER_SCHEDULING_MAX_CONCURRENT: '5', TRIAGE_RUNNER_AGENT_TIMEOUT: '90s' };
    const { config } = loadConfig({ file, env, cwd: dir });
    expect(config.scheduling.max_concurrent).toBe(5);
    expect(config.agent.timeout).toBe(90_000);
    expect(config.agent.name).toBe('codex');
  });

  it('a command-line flag beats the environment variable', () => {
    const env = { TRIAGE_RUNNER_SCHEDULING_MAX_CONCURRENT: '5' };
    const { config } = loadConfig({ file, env, cwd: dir, flags: { scheduling: { max_concurrent: 7 } } });
    expect(config.scheduling.max_concurrent).toBe(7);
  });

  it("honours the skills cache's SKILLS_CACHE_DIR and SKILLS_DISABLE_TRIAGE_PRELOAD", () => {
    const env = { SKILLS_CACHE_DIR: '/var/cache/skills', SKILLS_DISABLE_TRIAGE_PRELOAD: 'true' };
    const { config } = loadConfig({ env, cwd: dir });
    expect(config.skills.cache_dir).toBe('/var/cache/skills');
    expect(config.skills.disable_triage_preload).toBe(true);
  });

  it('derives every environment name mechanically from the key path', () => {
    const names = configKeys().map((k) => envName(k.path));
    expect(names).toContain('TRIAGE_RUNNER_AGENT_TIMEOUT');
    expect(names).toContain('TRIAGE_RUNNER_CONTEXT_BUDGET_TRUNCATE');
    expect(names).toContain('TRIAGE_RUNNER_SKILLS_TRIAGE_TIMEOUT');
    expect(new Set(names).size).toBe(names.length);
    const { config } = loadConfig({ env: { TRIAGE_RUNNER_CONTEXT_BUDGET_TRUNCATE: '12000' }, cwd: dir });
    expect(config.context.budget.truncate).toBe(12_000);
  });

  it('reports an environment value of the wrong type with the variable name', () => {
    const problems = problemsOf(() => loadConfig({ env: { TRIAGE_RUNNER_HTTP_PORT: 'eighty' }, cwd: dir }));
    expect(problems).toEqual([
      expect.objectContaining({ path: 'http.port', source: 'env TRIAGE_RUNNER_HTTP_PORT' }),
    ]);
  });
});

describe('configuration validation', () => {
  it('reports a wrong type, an unknown key and an out-of-range number together, each with its path and line', () => {
    const { file, dir } = tempConfig(
      [
        'engine: docker',
        'scheduling:',
        '  max_concurrent: "four"',
        '  max_per_clustr: 2',
        'http:',
        '  port: 70000',
        '',
      ].join('\n'),
    );
    const problems = problemsOf(() => loadConfig({ file, env: {}, cwd: dir }));
    expect(problems.map((p) => p.path).sort()).toEqual([
      'http.port',
      'scheduling.max_concurrent',
      'scheduling.max_per_clustr',
    ]);
    const unknown = problems.find((p) => p.path === 'scheduling.max_per_clustr');
    expect(unknown?.message).toContain('did you mean "max_per_cluster"');
    expect(unknown?.source).toBe(`${file}:4`);
    expect(problems.find((p) => p.path === 'http.port')?.message).toContain('at most 65535');
    expect(problems.find((p) => p.path === 'scheduling.max_concurrent')?.message).toContain('got "four"');
  });

  it('says a key that was never read (kubernetes.workspaces_mount_path) is gone and what to set instead', () => {
    const { file, dir } = tempConfig(['kubernetes:', '  workspaces_mount_path: /workspaces', ''].join('\n'));
    const problems = problemsOf(() => loadConfig({ file, env: {}, cwd: dir }));
    expect(problems).toEqual([
      expect.objectContaining({ path: 'kubernetes.workspaces_mount_path', source: `${file}:2` }),
    ]);
    expect(problems[0]?.message).toMatch(
      /^no longer a configuration key: nothing ever read it .*kubernetes\.volume_root.*; remove it$/,
    );
  });

  it('never echoes a secret value written inline, even under an unexpected key', () => {
    const secret = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';
    const { file, dir } = tempConfig(
      `secrets:\n  ANTHROPIC_API_KEY:\n    value: ${secret}\nagent:\n  model: 12\nhttp:\n  host: ${secret}\n`,
    );
    const err = (() => {
      try {
        loadConfig({ file, env: {}, cwd: dir });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(err.problems.length).toBeGreaterThanOrEqual(2);
    expect(err.message).not.toContain(secret);
    expect(JSON.stringify(err.problems)).not.toContain(secret);
  });

  it('reports YAML syntax errors with the file and line', () => {
    const { file, dir } = tempConfig('agent:\n  name: claude\n   model: [unclosed\n');
    const problems = problemsOf(() => loadConfig({ file, env: {}, cwd: dir }));
    expect(problems[0]?.message).toMatch(/YAML syntax error/);
    expect(problems[0]?.source).toMatch(new RegExp(`${file}:\\d+`));
  });

  it('reports a YAML alias bomb in the config file as a problem instead of crashing', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      '',
    ].join('\n');
    const { file, dir } = tempConfig(bomb);
    const problems = problemsOf(() => loadConfig({ file, env: {}, cwd: dir }));
    expect(problems).toEqual([
      expect.objectContaining({
        source: file,
        message: expect.stringMatching(/rejected by the YAML parser: Excessive alias count/),
      }),
    ]);
  });

  it('inspects a broken configuration completely: every problem, and defaults standing in for the broken keys', () => {
    const { file, dir } = tempConfig(
      'scheduling:\n  max_concurrent: "four"\nboot_file: ./mine.yml\nagent: { timeout: 30d }\n',
    );
    const inspection = inspectConfig({ file, env: {}, cwd: dir });
    expect(inspection.problems.map((p) => p.path).sort()).toEqual([
      'agent.timeout',
      'scheduling.max_concurrent',
    ]);
    expect(inspection.config.scheduling.max_concurrent).toBe(4);
    expect(inspection.config.boot_file).toBe(path.join(dir, 'mine.yml'));
    expect([...inspection.replaced].sort()).toEqual(['agent.timeout', 'scheduling.max_concurrent']);
  });

  it('rejects a missing --config file with what to do', () => {
    const problems = problemsOf(() => loadConfig({ file: '/nonexistent/config.yaml', env: {} }));
    expect(problems[0]?.message).toContain('file not found');
  });

  it('offers no extra agent tool by default, takes the listed ones, and names the valid ones for a wrong one', () => {
    expect(loadConfig({ env: {}, cwd: tmpdir() }).config.agent.extra_tools).toEqual([]);
    const ok = tempConfig('agent:\n  extra_tools: [web, subagent]\n');
    expect(loadConfig({ file: ok.file, env: {}, cwd: ok.dir }).config.agent.extra_tools).toEqual([
      'web',
      'subagent',
    ]);
    const bad = tempConfig('agent:\n  extra_tools: [web, browser]\n');
    const [problem] = problemsOf(() => loadConfig({ file: bad.file, env: {}, cwd: bad.dir }));
    expect(problem).toMatchObject({ path: 'agent.extra_tools.1', source: `${bad.file}:2` });
    for (const tool of ['edit', 'web', 'todo', 'subagent', 'schedule', 'workflow']) {
      expect(problem?.message).toContain(tool);
    }
  });

  it('rejects warn above truncate', () => {
    const problems = problemsOf(() =>
      loadConfig({ env: {}, flags: { context: { budget: { warn: 20_000 } } } }),
    );
    expect(problems[0]?.path).toBe('context.budget');
    expect(problems[0]?.message).toContain('warn must not exceed truncate');
  });

  it('refuses a duration longer than a Node.js timer can hold (24 days)', () => {
    const problems = problemsOf(() => loadConfig({ env: {}, flags: { agent: { timeout: '30d' } } }));
    expect(problems).toEqual([expect.objectContaining({ path: 'agent.timeout' })]);
    expect(problems[0]?.message).toContain('at most 24d');
  });

  it('accepts durations as text or milliseconds', () => {
    const { config } = loadConfig({
      env: {},
      flags: { agent: { timeout: 1500 }, skills: { triage: { timeout: '1h' } } },
    });
    expect(config.agent.timeout).toBe(1500);
    expect(config.skills.triage.timeout).toBe(3_600_000);
  });
});
